//! The `scale_offset` codec of the zarr-extensions registry
//! (<https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset>), as
//! zarr-python 3.4 implements it (`zarr.codecs.ScaleOffset`), which zarrs 0.23 does not
//! implement: a zarrs array→array codec registered with zarrs' codec plugins.
//!
//! Encoding stores `(x - offset) * scale` and decoding returns `x / scale + offset`, in the
//! array's own data type: `offset` and `scale` are scalars of that type, written as its fill
//! values are (numbers; for floats also `"NaN"`, `"Infinity"`, `"-Infinity"` and `0x` bit
//! patterns), 0 and 1 when absent.
//! - Integers: exact arithmetic; a result outside the type's range, and (decoding) a value
//!   `scale` does not divide exactly, are errors, never wrapped or truncated values. (As
//!   the spec says; zarr-python 3.4.2's `int64` arithmetic wraps instead in a few cases,
//!   e.g. decoding `i64::MIN` with scale -1, where zarrflow reports the overflow.)
//! - Floats (`float16`, `float32`, `float64`): each operation rounded in the type's
//!   precision, as NumPy computes it (so a value may not decode to exactly what was
//!   encoded; overflow gives infinities, as in NumPy).
//!
//! The encoded fill value is the fill value encoded (an error when it does not fit, as
//! zarr-python refuses such an array).

use std::num::NonZeroU64;
use std::sync::Arc;

use half::f16;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayToArrayCodecTraits, Codec, CodecError, CodecOptions, CodecTraitsV3,
};
use zarrs::array::{DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::{PluginCreateError, ZarrVersion};

use super::numeric::{Elem, f32_at, f64_at, zeroed};
use super::scalar::{json_float, json_int};

/// The `scale_offset` codec: `(x - offset) * scale` stored, `x / scale + offset` decoded.
#[derive(Debug, Clone)]
pub struct ScaleOffsetCodec {
    /// The configuration as written (`offset`, `scale`, each optional).
    configuration: serde_json::Map<String, serde_json::Value>,
}

register_codec!(ScaleOffsetCodec, v3: "scale_offset");

/// An element type the codec works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Int(Elem),
    F16,
    F32,
    F64,
}

impl Num {
    fn of(data_type: &DataType) -> Result<Num, CodecError> {
        let name = type_name(data_type);
        match name.as_str() {
            "float16" => Ok(Num::F16),
            "float32" => Ok(Num::F32),
            "float64" => Ok(Num::F64),
            other => match Elem::parse(other) {
                Some(e) if !e.is_float() => Ok(Num::Int(e)),
                _ => Err(CodecError::Other(format!(
                    "scale_offset works on integer and float data types, not {other}"
                ))),
            },
        }
    }

    fn size(self) -> usize {
        match self {
            Num::Int(e) => e.size(),
            Num::F16 => 2,
            Num::F32 => 4,
            Num::F64 => 8,
        }
    }
}

/// The Zarr v3 name of `data_type` (empty when it has none).
fn type_name(data_type: &DataType) -> String {
    data_type
        .name(ZarrVersion::V3)
        .map(|n| n.into_owned())
        .unwrap_or_default()
}

/// Element `i` of native-endian integers of type `e`, exactly.
fn int_at(e: Elem, bytes: &[u8], i: usize) -> i128 {
    let v = e.load_int(bytes, i);
    if e.is_signed() {
        i128::from(v as i64)
    } else {
        i128::from(v)
    }
}

/// The range of integer type `e`.
fn int_range(e: Elem) -> (i128, i128) {
    let bits = 8 * e.size() as u32;
    if e.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

fn f16_at(bytes: &[u8], i: usize) -> f16 {
    f16::from_ne_bytes([bytes[2 * i], bytes[2 * i + 1]])
}

/// `(x - offset) * scale` (encoding) or `x / scale + offset` (decoding) of each native-endian
/// float `T` of `x` into `out`, each operation rounded in `T`'s precision (`half`'s `f16`
/// computes through `f32` and rounds once, as NumPy's float16 does).
fn float_elements<T>(x: &[u8], offset: &[u8], scale: &[u8], direction: Direction, out: &mut [u8])
where
    T: bytemuck::Pod
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>,
{
    let (o, s): (T, T) = (
        bytemuck::pod_read_unaligned(offset),
        bytemuck::pod_read_unaligned(scale),
    );
    let size = std::mem::size_of::<T>();
    for (v, r) in x.chunks_exact(size).zip(out.chunks_exact_mut(size)) {
        let v: T = bytemuck::pod_read_unaligned(v);
        let value = match direction {
            Direction::Encode => (v - o) * s,
            Direction::Decode => v / s + o,
        };
        r.copy_from_slice(bytemuck::bytes_of(&value));
    }
}

/// Which way a chunk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Encode,
    Decode,
}

impl ScaleOffsetCodec {
    /// The codec of `configuration` (`offset` and `scale`, each optional), or why it is
    /// not one; the values are checked against the array's data type when the chain is
    /// built.
    pub fn new(
        configuration: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, PluginCreateError> {
        if let Some(k) = configuration
            .keys()
            .find(|k| !matches!(k.as_str(), "offset" | "scale"))
        {
            return Err(PluginCreateError::Other(format!(
                "scale_offset: unknown configuration field {k:?} (offset, scale)"
            )));
        }
        Ok(ScaleOffsetCodec { configuration })
    }

    /// `offset` and `scale` as native-endian scalars of `data_type` (`scale` nonzero).
    fn scalars(&self, data_type: &DataType) -> Result<(Num, Vec<u8>, Vec<u8>), CodecError> {
        let num = Num::of(data_type)?;
        let scalar = |field: &str, default: i64| -> Result<Vec<u8>, CodecError> {
            let json = self
                .configuration
                .get(field)
                .cloned()
                .unwrap_or(serde_json::Value::from(default));
            let bad = |e: String| {
                CodecError::Other(format!(
                    "scale_offset {field}: {e} of {}",
                    type_name(data_type)
                ))
            };
            Ok(match num {
                Num::Int(e) => {
                    let v = json_int(&json).map_err(bad)?;
                    let (lo, hi) = int_range(e);
                    if !(lo..=hi).contains(&v) {
                        return Err(bad(format!("{v} is outside the range")));
                    }
                    let mut out = vec![0; e.size()];
                    e.store_int(&mut out, 0, v as u64);
                    out
                }
                Num::F16 => f16::from_f64(json_float(&json).map_err(bad)?)
                    .to_ne_bytes()
                    .to_vec(),
                Num::F32 => (json_float(&json).map_err(bad)? as f32)
                    .to_ne_bytes()
                    .to_vec(),
                Num::F64 => json_float(&json).map_err(bad)?.to_ne_bytes().to_vec(),
            })
        };
        let (offset, scale) = (scalar("offset", 0)?, scalar("scale", 1)?);
        let zero = match num {
            Num::Int(e) => int_at(e, &scale, 0) == 0,
            Num::F16 => f16_at(&scale, 0) == f16::ZERO,
            Num::F32 => f32_at(&scale, 0) == 0.0,
            Num::F64 => f64_at(&scale, 0) == 0.0,
        };
        if zero {
            return Err(CodecError::Other(
                "scale_offset scale must be nonzero".into(),
            ));
        }
        Ok((num, offset, scale))
    }

    /// `x` (native-endian elements of `data_type`) encoded or decoded.
    fn apply(
        &self,
        x: &[u8],
        data_type: &DataType,
        direction: Direction,
    ) -> Result<Vec<u8>, CodecError> {
        let (num, offset, scale) = self.scalars(data_type)?;
        let n = x.len() / num.size();
        if n * num.size() != x.len() {
            return Err(CodecError::Other(format!(
                "scale_offset: {} bytes are no whole number of {}-byte elements",
                x.len(),
                num.size()
            )));
        }
        let mut out = zeroed(x.len(), "scale_offset")?;
        match num {
            Num::Int(e) => {
                let (o, s) = (int_at(e, &offset, 0), int_at(e, &scale, 0));
                let (lo, hi) = int_range(e);
                for i in 0..n {
                    let v = int_at(e, x, i);
                    let r = match direction {
                        Direction::Encode => (v - o).checked_mul(s),
                        Direction::Decode => {
                            if v % s != 0 {
                                return Err(CodecError::Other(format!(
                                    "scale_offset: {v} is not a multiple of the scale {s} \
                                     (its decoded value is no {} value)",
                                    e.v3_name()
                                )));
                            }
                            Some(v / s + o)
                        }
                    };
                    match r {
                        Some(r) if (lo..=hi).contains(&r) => e.store_int(&mut out, i, r as u64),
                        _ => {
                            return Err(CodecError::Other(format!(
                                "scale_offset: {v} {} is outside {}'s range",
                                match direction {
                                    Direction::Encode => "encoded",
                                    Direction::Decode => "decoded",
                                },
                                e.v3_name()
                            )));
                        }
                    }
                }
            }
            Num::F16 => float_elements::<f16>(x, &offset, &scale, direction, &mut out),
            Num::F32 => float_elements::<f32>(x, &offset, &scale, direction, &mut out),
            Num::F64 => float_elements::<f64>(x, &offset, &scale, direction, &mut out),
        }
        Ok(out)
    }
}

impl CodecTraitsV3 for ScaleOffsetCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let configuration = metadata
            .configuration()
            .map(|c| (**c).clone())
            .unwrap_or_default();
        Ok(Codec::ArrayToArray(Arc::new(ScaleOffsetCodec::new(
            configuration,
        )?)))
    }
}

whole_chunk_codec!(ScaleOffsetCodec, |c| Some(Configuration::from(
    c.configuration.clone()
)));

one_thread_per_chunk!(ScaleOffsetCodec);

impl ArrayToArrayCodecTraits for ScaleOffsetCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    /// The array's own data type, once `offset` and `scale` are checked to be its values.
    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        self.scalars(decoded_data_type)?;
        Ok(decoded_data_type.clone())
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let x = bytes.into_fixed()?;
        Ok(self.apply(&x, data_type, Direction::Encode)?.into())
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let x = bytes.into_fixed()?;
        Ok(self.apply(&x, data_type, Direction::Decode)?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(json: serde_json::Value) -> ScaleOffsetCodec {
        ScaleOffsetCodec::new(json.as_object().unwrap().clone()).unwrap()
    }

    fn t(name: &str) -> DataType {
        DataType::from_metadata(&MetadataV3::new(name)).unwrap()
    }

    fn ne<T: Copy, const N: usize>(values: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| f(v)).collect()
    }

    #[test]
    fn integers_are_exact_and_refuse_what_does_not_fit() {
        let c = codec(serde_json::json!({"offset": 100, "scale": -3}));
        let x = ne(&[100i16, 101, 90, -10000], i16::to_ne_bytes);
        let enc = c.apply(&x, &t("int16"), Direction::Encode).unwrap();
        assert_eq!(enc, ne(&[0i16, -3, 30, 30300], i16::to_ne_bytes));
        assert_eq!(c.apply(&enc, &t("int16"), Direction::Decode).unwrap(), x);
        // (x - 100) * -3 beyond int16
        let big = ne(&[-11000i16], i16::to_ne_bytes);
        assert!(c.apply(&big, &t("int16"), Direction::Encode).is_err());
        // 7 is no multiple of -3
        let odd = ne(&[7i16], i16::to_ne_bytes);
        let e = c.apply(&odd, &t("int16"), Direction::Decode).unwrap_err();
        assert!(e.to_string().contains("multiple"), "{e}");
        // uint64 at its extremes, exactly
        let c = codec(serde_json::json!({"offset": 1u64 << 63, "scale": 1}));
        let x = ne(&[u64::MAX, 1u64 << 63], u64::to_ne_bytes);
        let enc = c.apply(&x, &t("uint64"), Direction::Encode).unwrap();
        assert_eq!(enc, ne(&[(1u64 << 63) - 1, 0], u64::to_ne_bytes));
        assert_eq!(c.apply(&enc, &t("uint64"), Direction::Decode).unwrap(), x);
        assert!(
            c.apply(
                &ne(&[0u64], u64::to_ne_bytes),
                &t("uint64"),
                Direction::Encode
            )
            .is_err()
        );
    }

    #[test]
    fn floats_round_in_their_own_precision() {
        let c = codec(serde_json::json!({"offset": 0.1, "scale": 3}));
        let x = ne(&[1.0f32, 0.1, -2.5], f32::to_ne_bytes);
        let enc = c.apply(&x, &t("float32"), Direction::Encode).unwrap();
        let want: Vec<f32> = [1.0f32, 0.1, -2.5]
            .iter()
            .map(|v| (v - 0.1f32) * 3.0)
            .collect();
        assert_eq!(enc, ne(&want, f32::to_ne_bytes));
        let back: Vec<f32> = want.iter().map(|v| v / 3.0 + 0.1f32).collect();
        assert_eq!(
            c.apply(&enc, &t("float32"), Direction::Decode).unwrap(),
            ne(&back, f32::to_ne_bytes)
        );
        // numeric strings, as zarr-python writes them to keep a value's exact text
        let c = codec(serde_json::json!({"offset": "0.5", "scale": "2"}));
        let enc = c
            .apply(
                &ne(&[1.0f64], f64::to_ne_bytes),
                &t("float64"),
                Direction::Encode,
            )
            .unwrap();
        assert_eq!(f64_at(&enc, 0), 1.0);
        let c = codec(serde_json::json!({"offset": "NaN"}));
        let enc = c
            .apply(
                &ne(&[1.0f64], f64::to_ne_bytes),
                &t("float64"),
                Direction::Encode,
            )
            .unwrap();
        assert!(f64_at(&enc, 0).is_nan());
        let c = codec(serde_json::json!({"scale": 0.5}));
        let h = [f16::from_f32(3.0), f16::from_f32(-0.25)];
        let x: Vec<u8> = h.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let enc = c.apply(&x, &t("float16"), Direction::Encode).unwrap();
        assert_eq!(f16_at(&enc, 0), f16::from_f32(1.5));
        assert_eq!(c.apply(&enc, &t("float16"), Direction::Decode).unwrap(), x);
    }

    #[test]
    fn configurations_and_types_outside_the_spec_are_errors() {
        assert!(
            ScaleOffsetCodec::new(
                serde_json::json!({"offset": 1, "factor": 2})
                    .as_object()
                    .unwrap()
                    .clone()
            )
            .is_err()
        );
        let zero = codec(serde_json::json!({"scale": 0}));
        assert!(zero.encoded_data_type(&t("int32")).is_err());
        assert!(zero.encoded_data_type(&t("float32")).is_err());
        let c = codec(serde_json::json!({"offset": 300}));
        assert!(c.encoded_data_type(&t("uint8")).is_err());
        assert!(c.encoded_data_type(&t("int16")).is_ok());
        let c = codec(serde_json::json!({"offset": 1.5}));
        assert!(c.encoded_data_type(&t("int16")).is_err());
        for other in ["bool", "complex64", "string"] {
            assert!(
                codec(serde_json::json!({}))
                    .encoded_data_type(&t(other))
                    .is_err(),
                "{other}"
            );
        }
        let c = codec(serde_json::json!({}));
        assert!(c.apply(&[1, 2, 3], &t("int16"), Direction::Decode).is_err());
    }
}
