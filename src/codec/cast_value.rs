//! The `cast_value` codec of the zarr-extensions registry
//! (<https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value>), as
//! zarr-python 3.4 writes it (`zarr.codecs.CastValue`), which zarrs 0.23 does not
//! implement: a zarrs array→array codec registered with zarrs' codec plugins.
//!
//! Each element is converted to `data_type` when encoded and back when decoded, with the
//! codec's `rounding` (`nearest-even` by default, `towards-zero`, `towards-positive`,
//! `towards-negative`, `nearest-away`), `out_of_range` (absent: an error; `clamp`; `wrap`,
//! integer targets only) and `scalar_map` (`encode` / `decode` lists of `[from, to]`
//! pairs, e.g. NaN to 0). The per-element conversion is the `zarr-cast-value` crate's: the
//! same code zarr-python calls through its `cast-value-rs` package, so values match it
//! exactly. This module parses the configuration (scalar maps as zarr-python reads and
//! merges them, see `codec::scalar`) and dispatches on the pair of types: integers `int8`–`uint64` and
//! `float16`, `float32`, `float64` (the narrower types zarr-python also names are refused
//! by name).

use std::num::NonZeroU64;
use std::sync::Arc;

use bytemuck::Pod;
use half::f16;
use serde::Deserialize;
use zarr_cast_value::{
    CastError, FloatToFloatConfig, FloatToIntConfig, IntToFloatConfig, IntToIntConfig, MapEntry,
    OutOfRangeMode, RoundingMode,
};
use zarrs::array::codec::api::{
    ArrayBytes, ArrayToArrayCodecTraits, Codec, CodecError, CodecOptions, CodecTraitsV3,
};
use zarrs::array::{DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::{PluginCreateError, ZarrVersion};

use super::scalar::{PyScalar, json_float, json_int, py_equal, same_python_key};

/// The `cast_value` codec's configuration, as zarr-python writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CastValueConfiguration {
    /// The stored data type (a Zarr v3 name).
    data_type: String,
    #[serde(default = "nearest_even")]
    rounding: RoundingMode,
    #[serde(default)]
    out_of_range: Option<OutOfRangeMode>,
    #[serde(default)]
    scalar_map: Option<ScalarMap>,
}

fn nearest_even() -> RoundingMode {
    RoundingMode::NearestEven
}

/// Explicit conversions, each a list of `[from, to]` pairs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScalarMap {
    #[serde(default)]
    encode: Option<Vec<(serde_json::Value, serde_json::Value)>>,
    #[serde(default)]
    decode: Option<Vec<(serde_json::Value, serde_json::Value)>>,
}

/// An element type `cast_value` converts between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl Kind {
    fn of(data_type: &DataType) -> Result<Kind, String> {
        let name = data_type
            .name(ZarrVersion::V3)
            .map(|n| n.into_owned())
            .unwrap_or_default();
        Ok(match name.as_str() {
            "int8" => Kind::I8,
            "int16" => Kind::I16,
            "int32" => Kind::I32,
            "int64" => Kind::I64,
            "uint8" => Kind::U8,
            "uint16" => Kind::U16,
            "uint32" => Kind::U32,
            "uint64" => Kind::U64,
            "float16" => Kind::F16,
            "float32" => Kind::F32,
            "float64" => Kind::F64,
            other => {
                return Err(format!(
                    "data type {other:?} is not supported (int8 to uint64, float16, float32, float64)"
                ));
            }
        })
    }

    fn is_float(self) -> bool {
        matches!(self, Kind::F16 | Kind::F32 | Kind::F64)
    }

    /// Whether a configuration scalar is a value of this type (integers in range).
    fn holds(self, v: PyScalar) -> bool {
        match self {
            Kind::I8 => i8::from_py(v).is_some(),
            Kind::I16 => i16::from_py(v).is_some(),
            Kind::I32 => i32::from_py(v).is_some(),
            Kind::I64 => i64::from_py(v).is_some(),
            Kind::U8 => u8::from_py(v).is_some(),
            Kind::U16 => u16::from_py(v).is_some(),
            Kind::U32 => u32::from_py(v).is_some(),
            Kind::U64 => u64::from_py(v).is_some(),
            Kind::F16 | Kind::F32 | Kind::F64 => true,
        }
    }
}

/// The numcodecs-style `cast_value` codec as a zarrs array→array codec.
#[derive(Debug, Clone)]
pub struct CastValueCodec {
    /// The configuration as written.
    written: serde_json::Map<String, serde_json::Value>,
    configuration: CastValueConfiguration,
    /// `data_type` as a zarrs data type.
    target: DataType,
    target_kind: Kind,
}

register_codec!(CastValueCodec, v3: "cast_value");

fn invalid(message: String) -> PluginCreateError {
    PluginCreateError::Other(format!("cast_value: {message}"))
}

fn codec_error(message: String) -> CodecError {
    CodecError::Other(format!("cast_value: {message}"))
}

/// Which way a chunk goes, with the scalar map entries of that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Encode,
    Decode,
}

impl CastValueCodec {
    /// The codec of the configuration `written`, or why it is not supported.
    pub fn new(
        written: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, PluginCreateError> {
        let configuration: CastValueConfiguration =
            serde_json::from_value(serde_json::Value::Object(written.clone()))
                .map_err(|e| invalid(format!("invalid configuration: {e}")))?;
        let target = DataType::from_metadata(&MetadataV3::new(&configuration.data_type))
            .map_err(|e| invalid(format!("data_type {:?}: {e}", configuration.data_type)))?;
        let target_kind = Kind::of(&target).map_err(invalid)?;
        if configuration.out_of_range == Some(OutOfRangeMode::Wrap) && target_kind.is_float() {
            return Err(invalid(format!(
                "out_of_range \"wrap\" is for integer data types, not {}",
                configuration.data_type
            )));
        }
        Ok(CastValueCodec {
            written,
            configuration,
            target,
            target_kind,
        })
    }

    /// The scalar map entries of `direction`.
    fn entries(&self, direction: Direction) -> &[(serde_json::Value, serde_json::Value)] {
        let map = self.configuration.scalar_map.as_ref();
        match direction {
            Direction::Encode => map.and_then(|m| m.encode.as_deref()),
            Direction::Decode => map.and_then(|m| m.decode.as_deref()),
        }
        .unwrap_or(&[])
    }

    /// `bytes` (native-endian elements of `from`) converted to `to` in `direction`.
    fn convert(
        &self,
        bytes: &[u8],
        from: Kind,
        to: Kind,
        direction: Direction,
    ) -> Result<Vec<u8>, CodecError> {
        let cfg = Settings {
            entries: self.entries(direction),
            rounding: self.configuration.rounding,
            out_of_range: self.configuration.out_of_range,
        };
        dispatch(bytes, from, to, &cfg)
    }
}

/// What one conversion needs besides the elements.
struct Settings<'a> {
    entries: &'a [(serde_json::Value, serde_json::Value)],
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
}

/// An element type a configuration scalar converts to (as NumPy casts a Python scalar).
trait FromPy: Pod {
    /// Whether Python reads its scalars with `float()` (else `int()`).
    const IS_FLOAT: bool;
    /// The value, or `None` when an integer is outside the type.
    fn from_py(v: PyScalar) -> Option<Self>;
}

macro_rules! from_py_int {
    ($($t:ty),*) => {$(
        impl FromPy for $t {
            const IS_FLOAT: bool = false;
            fn from_py(v: PyScalar) -> Option<Self> {
                match v {
                    PyScalar::Int(i) => <$t>::try_from(i).ok(),
                    PyScalar::Float(_) => None,
                }
            }
        }
    )*};
}
from_py_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! from_py_float {
    ($($t:ty => $conv:expr),*) => {$(
        impl FromPy for $t {
            const IS_FLOAT: bool = true;
            fn from_py(v: PyScalar) -> Option<Self> {
                let f = match v {
                    PyScalar::Float(f) => f,
                    PyScalar::Int(i) => i as f64,
                };
                Some($conv(f))
            }
        }
    )*};
}
from_py_float!(f16 => f16::from_f64, f32 => |f: f64| f as f32, f64 => |f: f64| f);

/// One side of a scalar map entry read as Python reads it for a float or an integer type.
fn py_scalar(json: &serde_json::Value, float: bool) -> Result<PyScalar, CodecError> {
    let v = if float {
        json_float(json).map(PyScalar::Float)
    } else {
        json_int(json).map(PyScalar::Int)
    };
    v.map_err(|e| codec_error(format!("scalar_map value {e}")))
}

/// The entries as zarr-python hands them to its converter: merged as `dict(entries)`
/// merges JSON keys, read with `int()` / `float()`, then merged again as a `dict` of those
/// numbers (each key keeps its first position and takes its last value; NaN keys never
/// merge).
fn python_entries(
    entries: &[(serde_json::Value, serde_json::Value)],
    src_float: bool,
    dst_float: bool,
) -> Result<Vec<(PyScalar, PyScalar)>, CodecError> {
    let mut json: Vec<(&serde_json::Value, &serde_json::Value)> = Vec::new();
    for (k, v) in entries {
        match json.iter_mut().find(|(seen, _)| same_python_key(seen, k)) {
            Some(entry) => entry.1 = v,
            None => json.push((k, v)),
        }
    }
    let mut out: Vec<(PyScalar, PyScalar)> = Vec::new();
    for (k, v) in json {
        let (k, v) = (py_scalar(k, src_float)?, py_scalar(v, dst_float)?);
        match out.iter_mut().find(|(seen, _)| py_equal(*seen, k)) {
            Some(entry) => entry.1 = v,
            None => out.push((k, v)),
        }
    }
    Ok(out)
}

impl Settings<'_> {
    /// The scalar map's entries as `(S, D)` pairs.
    fn map<S: FromPy, D: FromPy>(&self) -> Result<Vec<MapEntry<S, D>>, CodecError> {
        python_entries(self.entries, S::IS_FLOAT, D::IS_FLOAT)?
            .into_iter()
            .map(|(k, v)| {
                let outside = |x: PyScalar| {
                    codec_error(format!("scalar_map value {x:?} is outside its data type"))
                };
                Ok(MapEntry {
                    src: S::from_py(k).ok_or_else(|| outside(k))?,
                    tgt: D::from_py(v).ok_or_else(|| outside(v))?,
                })
            })
            .collect()
    }
}

/// Native-endian elements of `bytes` as `S`s (copied: `bytes` need not be aligned).
fn elements<S: Pod>(bytes: &[u8]) -> Result<Vec<S>, CodecError> {
    let size = std::mem::size_of::<S>();
    if !bytes.len().is_multiple_of(size) {
        return Err(codec_error(format!(
            "{} bytes are no whole number of {size}-byte elements",
            bytes.len()
        )));
    }
    let mut out: Vec<S> = bytemuck::allocation::try_zeroed_vec(bytes.len() / size)
        .map_err(|()| codec_error(format!("cannot allocate {} bytes", bytes.len())))?;
    bytemuck::cast_slice_mut::<S, u8>(&mut out).copy_from_slice(bytes);
    Ok(out)
}

/// `n` zero elements, allocated fallibly.
fn zeros<D: Pod>(n: usize) -> Result<Vec<D>, CodecError> {
    bytemuck::allocation::try_zeroed_vec(n).map_err(|()| {
        codec_error(format!(
            "cannot allocate {n} elements of {} bytes",
            std::mem::size_of::<D>()
        ))
    })
}

/// The converted elements, `dst`, as native-endian bytes (copied fallibly).
fn to_bytes<D: Pod>(dst: &[D]) -> Result<Vec<u8>, CodecError> {
    let bytes = bytemuck::cast_slice::<D, u8>(dst);
    let mut out = Vec::new();
    out.try_reserve_exact(bytes.len())
        .map_err(|_| codec_error(format!("cannot allocate {} bytes", bytes.len())))?;
    out.extend_from_slice(bytes);
    Ok(out)
}

fn cast_error(e: CastError) -> CodecError {
    codec_error(e.to_string())
}

fn int_to_int<S, D>(bytes: &[u8], cfg: &Settings<'_>) -> Result<Vec<u8>, CodecError>
where
    S: zarr_cast_value::CastInt + zarr_cast_value::CastInto<D> + FromPy,
    D: zarr_cast_value::CastInt + FromPy,
{
    let src = elements::<S>(bytes)?;
    let mut dst = zeros::<D>(src.len())?;
    let config = IntToIntConfig {
        map_entries: cfg.map()?,
        out_of_range: cfg.out_of_range,
    };
    zarr_cast_value::convert_slice_int_to_int(&src, &mut dst, &config).map_err(cast_error)?;
    to_bytes(&dst)
}

fn float_to_int<S, D>(bytes: &[u8], cfg: &Settings<'_>) -> Result<Vec<u8>, CodecError>
where
    S: zarr_cast_value::CastFloat + zarr_cast_value::CastInto<D> + FromPy,
    D: zarr_cast_value::CastInt + FromPy,
{
    let src = elements::<S>(bytes)?;
    let mut dst = zeros::<D>(src.len())?;
    let config = FloatToIntConfig {
        map_entries: cfg.map()?,
        rounding: cfg.rounding,
        out_of_range: cfg.out_of_range,
    };
    zarr_cast_value::convert_slice_float_to_int(&src, &mut dst, &config).map_err(cast_error)?;
    to_bytes(&dst)
}

fn int_to_float<S, D>(bytes: &[u8], cfg: &Settings<'_>) -> Result<Vec<u8>, CodecError>
where
    S: zarr_cast_value::CastInt + zarr_cast_value::CastInto<D> + FromPy,
    D: zarr_cast_value::CastFloat + FromPy,
{
    let src = elements::<S>(bytes)?;
    let mut dst = zeros::<D>(src.len())?;
    let config = IntToFloatConfig {
        map_entries: cfg.map()?,
        rounding: cfg.rounding,
        out_of_range: cfg.out_of_range,
    };
    zarr_cast_value::convert_slice_int_to_float(&src, &mut dst, &config).map_err(cast_error)?;
    to_bytes(&dst)
}

fn float_to_float<S, D>(bytes: &[u8], cfg: &Settings<'_>) -> Result<Vec<u8>, CodecError>
where
    S: zarr_cast_value::CastFloat + zarr_cast_value::CastInto<D> + FromPy,
    D: zarr_cast_value::CastFloat + FromPy,
{
    let src = elements::<S>(bytes)?;
    let mut dst = zeros::<D>(src.len())?;
    let config = FloatToFloatConfig {
        map_entries: cfg.map()?,
        rounding: cfg.rounding,
        out_of_range: cfg.out_of_range,
    };
    zarr_cast_value::convert_slice_float_to_float(&src, &mut dst, &config).map_err(cast_error)?;
    to_bytes(&dst)
}

/// Runs `$body` with `$t` the Rust integer type of `$kind`.
macro_rules! with_int {
    ($kind:expr, $t:ident, $body:expr) => {
        match $kind {
            Kind::I8 => {
                type $t = i8;
                $body
            }
            Kind::I16 => {
                type $t = i16;
                $body
            }
            Kind::I32 => {
                type $t = i32;
                $body
            }
            Kind::I64 => {
                type $t = i64;
                $body
            }
            Kind::U8 => {
                type $t = u8;
                $body
            }
            Kind::U16 => {
                type $t = u16;
                $body
            }
            Kind::U32 => {
                type $t = u32;
                $body
            }
            Kind::U64 => {
                type $t = u64;
                $body
            }
            _ => unreachable!("an integer kind"),
        }
    };
}

/// Runs `$body` with `$t` the Rust float type of `$kind`.
macro_rules! with_float {
    ($kind:expr, $t:ident, $body:expr) => {
        match $kind {
            Kind::F16 => {
                type $t = f16;
                $body
            }
            Kind::F32 => {
                type $t = f32;
                $body
            }
            Kind::F64 => {
                type $t = f64;
                $body
            }
            _ => unreachable!("a float kind"),
        }
    };
}

/// `bytes` of `from` converted to `to` by the crate's converter for the pair.
fn dispatch(bytes: &[u8], from: Kind, to: Kind, cfg: &Settings<'_>) -> Result<Vec<u8>, CodecError> {
    match (from.is_float(), to.is_float()) {
        (false, false) => with_int!(from, S, with_int!(to, D, int_to_int::<S, D>(bytes, cfg))),
        (true, false) => with_float!(from, S, with_int!(to, D, float_to_int::<S, D>(bytes, cfg))),
        (false, true) => with_int!(
            from,
            S,
            with_float!(to, D, int_to_float::<S, D>(bytes, cfg))
        ),
        (true, true) => {
            with_float!(
                from,
                S,
                with_float!(to, D, float_to_float::<S, D>(bytes, cfg))
            )
        }
    }
}

impl CodecTraitsV3 for CastValueCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let written = metadata
            .configuration()
            .map(|c| (**c).clone())
            .ok_or_else(|| invalid("a configuration with data_type is required".into()))?;
        Ok(Codec::ArrayToArray(Arc::new(CastValueCodec::new(written)?)))
    }
}

whole_chunk_codec!(CastValueCodec, |c| Some(Configuration::from(
    c.written.clone()
)));

one_thread_per_chunk!(CastValueCodec);

impl ArrayToArrayCodecTraits for CastValueCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    /// `data_type`, once the array's type is one the codec converts and the scalar map's
    /// values are values of both types.
    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        let array = Kind::of(decoded_data_type).map_err(codec_error)?;
        for (direction, (from, to)) in [
            (Direction::Encode, (array, self.target_kind)),
            (Direction::Decode, (self.target_kind, array)),
        ] {
            for (k, v) in python_entries(self.entries(direction), from.is_float(), to.is_float())? {
                for (x, kind) in [(k, from), (v, to)] {
                    if !kind.holds(x) {
                        return Err(codec_error(format!(
                            "scalar_map value {x:?} is outside {kind:?}"
                        )));
                    }
                }
            }
        }
        Ok(self.target.clone())
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let from = Kind::of(data_type).map_err(codec_error)?;
        let x = bytes.into_fixed()?;
        Ok(self
            .convert(&x, from, self.target_kind, Direction::Encode)?
            .into())
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let to = Kind::of(data_type).map_err(codec_error)?;
        let x = bytes.into_fixed()?;
        Ok(self
            .convert(&x, self.target_kind, to, Direction::Decode)?
            .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(json: serde_json::Value) -> Result<CastValueCodec, PluginCreateError> {
        CastValueCodec::new(json.as_object().unwrap().clone())
    }

    fn t(name: &str) -> DataType {
        DataType::from_metadata(&MetadataV3::new(name)).unwrap()
    }

    fn run(
        c: &CastValueCodec,
        bytes: Vec<u8>,
        from: &str,
        direction: Direction,
    ) -> Result<Vec<u8>, CodecError> {
        let array = t(from);
        let shape = [NonZeroU64::new(1).unwrap()];
        let fill = FillValue::new(vec![0; array.fixed_size().unwrap()]);
        let opts = CodecOptions::default();
        let out = match direction {
            Direction::Encode => {
                c.encode(ArrayBytes::new_flen(bytes), &shape, &array, &fill, &opts)
            }
            Direction::Decode => {
                c.decode(ArrayBytes::new_flen(bytes), &shape, &array, &fill, &opts)
            }
        }?;
        Ok(out.into_fixed()?.into_owned())
    }

    #[test]
    fn floats_round_clamp_and_map_as_configured() {
        let c = codec(serde_json::json!({
            "data_type": "uint8", "rounding": "towards-zero", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
        }))
        .unwrap();
        let x: Vec<u8> = [1.9f64, -3.0, 300.0, f64::NAN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let enc = run(&c, x, "float64", Direction::Encode).unwrap();
        assert_eq!(enc, [1, 0, 255, 0]);
        let dec = run(&c, enc, "float64", Direction::Decode).unwrap();
        let got: Vec<f64> = dec
            .chunks(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        // -3 clamps to 0, which the decode map sends to NaN as it does NaN's 0
        assert_eq!((got[0], got[2]), (1.0, 255.0));
        assert!(got[1].is_nan() && got[3].is_nan());
        // without out_of_range, a value outside the target is an error
        let strict = codec(serde_json::json!({"data_type": "int8"})).unwrap();
        let e = run(
            &strict,
            200i16.to_ne_bytes().to_vec(),
            "int16",
            Direction::Encode,
        )
        .unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let wrap = codec(serde_json::json!({"data_type": "int8", "out_of_range": "wrap"})).unwrap();
        assert_eq!(
            run(
                &wrap,
                200i16.to_ne_bytes().to_vec(),
                "int16",
                Direction::Encode
            )
            .unwrap(),
            [(200u16 as u8)]
        );
        // nearest-even: 2.5 to 2, float16 targets
        let half = codec(serde_json::json!({"data_type": "float16"})).unwrap();
        let enc = run(
            &half,
            2.5f32.to_ne_bytes().to_vec(),
            "float32",
            Direction::Encode,
        )
        .unwrap();
        assert_eq!(enc, f16::from_f32(2.5).to_ne_bytes());
    }

    /// zarr-python builds `dict`s of the scalar map: a repeated key takes its last value,
    /// and keys Python finds equal (`1` and `1.0`, `0` and `-0.0`) are one key.
    #[test]
    fn scalar_maps_merge_as_python_dicts() {
        let c = codec(serde_json::json!({"data_type": "int8",
            "scalar_map": {"decode": [[1, 100], [1.0, 200]]}}))
        .unwrap();
        assert_eq!(
            run(&c, vec![1], "int16", Direction::Decode).unwrap(),
            200i16.to_ne_bytes()
        );
        let c = codec(serde_json::json!({"data_type": "int8",
            "scalar_map": {"encode": [[0, 1], [-0.0, 2], ["NaN", 3], ["nan", 4]]}}))
        .unwrap();
        let x: Vec<u8> = [0.0f32, -0.0, f32::NAN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        // NaN keys never merge: the first matches
        assert_eq!(run(&c, x, "float32", Direction::Encode).unwrap(), [2, 2, 3]);
    }

    #[test]
    fn configurations_outside_the_spec_are_refused() {
        for bad in [
            serde_json::json!({}),
            serde_json::json!({"data_type": "bool"}),
            serde_json::json!({"data_type": "float8_e4m3"}),
            serde_json::json!({"data_type": "float32", "out_of_range": "wrap"}),
            serde_json::json!({"data_type": "int8", "rounding": "up"}),
            serde_json::json!({"data_type": "int8", "scale": 2}),
        ] {
            assert!(codec(bad.clone()).is_err(), "{bad}");
        }
        let c = codec(serde_json::json!({"data_type": "uint8",
                                         "scalar_map": {"encode": [["NaN", 300]]}}))
        .unwrap();
        assert!(c.encoded_data_type(&t("float32")).is_err());
        assert!(c.encoded_data_type(&t("complex64")).is_err());
        let ok = codec(serde_json::json!({"data_type": "uint8"})).unwrap();
        assert_eq!(ok.encoded_data_type(&t("float64")).unwrap(), t("uint8"));
        assert!(run(&ok, vec![1, 2, 3], "float32", Direction::Encode).is_err());
    }
}
