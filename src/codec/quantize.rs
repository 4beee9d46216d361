//! numcodecs' `quantize` filter (Zarr v2 `{"id": "quantize", "digits": ..., "dtype": ...,
//! "astype": ...}`, Zarr v3 `numcodecs.quantize` as zarr-python 3 writes it), which zarrs
//! 0.23 does not implement: a lossy zarrs array→array codec registered with zarrs' codec
//! plugins.
//!
//! numcodecs (`numcodecs/quantize.py`) keeps `digits` decimal digits by rounding to a
//! power-of-two grid: `bits = ceil(log2(10 ** -floor(log10(10 ** -digits))))` (ceil for
//! non-negative exponents), `scale = 2 ** bits`, and stores
//! `(np.around(scale * arr) / scale).astype(astype)`, computed in `dtype`'s precision
//! (NumPy 2 keeps a Python float scale in `float32` arithmetic for `float32` arrays).
//! Decoding is the cast back to `dtype`. This codec computes `scale` with the same libm
//! calls as CPython, rounds half to even as `np.around` does, and is checked against
//! numcodecs' results (tests below).
//!
//! Supported: `dtype` and `astype` `float32` / `float64`, little-endian (`<`, `=` or none);
//! `dtype` must be the array's data type.

use std::num::NonZeroU64;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zarrs::array::codec::api::{ArrayBytes, ArrayToArrayCodecTraits, CodecError, CodecOptions};
use zarrs::array::{DataType, FillValue};
use zarrs::plugin::PluginCreateError;

use super::numeric::{Elem, cast, count, f32_at, f64_at, set_f32, set_f64, zeroed};

/// The `quantize` codec's configuration, as numcodecs writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantizeConfiguration {
    /// Decimal digits kept.
    pub digits: i32,
    /// The data type of the decoded elements (a NumPy type string, e.g. `<f8`).
    pub dtype: String,
    /// The data type stored (`dtype` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub astype: Option<String>,
}

/// numcodecs' `quantize` filter as a zarrs array→array codec.
#[derive(Debug, Clone)]
pub struct QuantizeCodec {
    configuration: QuantizeConfiguration,
    dtype: Elem,
    astype: Elem,
    /// The power of two values are rounded to a multiple of the inverse of.
    scale: f64,
    /// `dtype` and `astype` as zarrs data types.
    data_types: (DataType, DataType),
}

register_codec!(QuantizeCodec, v3: "numcodecs.quantize", v2: "quantize");

/// numcodecs' scale for `digits`: `2 ** bits`, with the same libm calls (`pow`, `log10`,
/// `log2`) as CPython's `10.0 ** -digits`, `math.log10` and `math.log2`.
pub fn quantize_scale(digits: i32) -> f64 {
    let precision = 10f64.powf(-f64::from(digits));
    let exp = precision.log10();
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let bits = 10f64.powf(-exp).log2().ceil();
    2f64.powf(bits)
}

impl QuantizeCodec {
    /// The codec of `configuration`, or why it is not supported.
    pub fn new(configuration: QuantizeConfiguration) -> Result<Self, PluginCreateError> {
        let float = |t: &str| {
            Elem::parse(t).filter(|e| e.is_float()).ok_or_else(|| {
                PluginCreateError::Other(format!(
                    "quantize: data type {t:?} is not supported (little-endian float32 and float64)"
                ))
            })
        };
        let dtype = float(&configuration.dtype)?;
        let astype = match &configuration.astype {
            Some(a) => float(a)?,
            None => dtype,
        };
        let scale = quantize_scale(configuration.digits);
        if !scale.is_finite() || scale == 0.0 {
            return Err(PluginCreateError::Other(format!(
                "quantize: {} digits give no finite scale",
                configuration.digits
            )));
        }
        let data_types = (dtype.data_type()?, astype.data_type()?);
        Ok(QuantizeCodec {
            configuration,
            dtype,
            astype,
            scale,
            data_types,
        })
    }

    fn check(&self, data_type: &DataType) -> Result<(), CodecError> {
        super::numeric::check_data_type(
            "quantize",
            &self.configuration.dtype,
            &self.data_types.0,
            data_type,
        )
    }

    /// `np.around(scale * x) / scale` in `dtype`'s precision, native-endian.
    fn round(&self, x: &[u8]) -> Result<Vec<u8>, CodecError> {
        let n = count(x, self.dtype, "quantize")?;
        let mut out = zeroed(x.len(), "quantize")?;
        if self.dtype == Elem::F32 {
            let scale = self.scale as f32;
            for i in 0..n {
                set_f32(
                    &mut out,
                    i,
                    (scale * f32_at(x, i)).round_ties_even() / scale,
                );
            }
        } else {
            for i in 0..n {
                let v = (self.scale * f64_at(x, i)).round_ties_even() / self.scale;
                set_f64(&mut out, i, v);
            }
        }
        Ok(out)
    }
}

numcodecs_array_codec_create!(QuantizeCodec, QuantizeConfiguration, "quantize");

whole_chunk_codec!(QuantizeCodec, |c| super::plugin::configuration_of(
    &c.configuration
));

one_thread_per_chunk!(QuantizeCodec);

impl ArrayToArrayCodecTraits for QuantizeCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        self.check(decoded_data_type)?;
        Ok(self.data_types.1.clone())
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        self.check(data_type)?;
        let rounded = self.round(&bytes.into_fixed()?)?;
        if self.astype == self.dtype {
            return Ok(rounded.into());
        }
        Ok(cast(&rounded, self.dtype, self.astype, "quantize")?.into())
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        _shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        self.check(data_type)?;
        let enc = bytes.into_fixed()?;
        if self.astype == self.dtype {
            count(&enc, self.astype, "quantize")?;
            return Ok(ArrayBytes::new_flen(enc));
        }
        Ok(cast(&enc, self.astype, self.dtype, "quantize")?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numeric::{cast_vectors, from_hex};

    fn codec(digits: i32, dtype: &str, astype: &str) -> QuantizeCodec {
        QuantizeCodec::new(QuantizeConfiguration {
            digits,
            dtype: dtype.into(),
            astype: Some(astype.into()),
        })
        .unwrap()
    }

    #[test]
    fn scales_are_numcodecs() {
        // numcodecs' docstring: digits 1, 2, 3 round to sixteenths, 128ths and 1024ths
        assert_eq!(quantize_scale(1), 16.0);
        assert_eq!(quantize_scale(2), 128.0);
        assert_eq!(quantize_scale(3), 1024.0);
        assert_eq!(quantize_scale(0), 1.0);
        assert_eq!(quantize_scale(-2), 2f64.powi(-6));
    }

    /// numcodecs' own results (`test-data/generate.py`, `gen_cast_vectors`): float32 and
    /// float64, with and without a different `astype`, digits -2 to 8, ties, extremes,
    /// infinities and NaN.
    #[test]
    #[cfg(target_endian = "little")]
    fn encodes_and_decodes_match_numcodecs_byte_for_byte() {
        let vectors = cast_vectors("quantize");
        assert_eq!(vectors.len(), 28);
        for v in vectors {
            let s = |k: &str| v[k].as_str().unwrap();
            let digits = v["digits"].as_i64().unwrap() as i32;
            let c = codec(digits, s("dtype"), s("astype"));
            let what = format!("{} as {} digits {digits}", s("dtype"), s("astype"));
            let values = from_hex(s("values"));
            let shape = [NonZeroU64::new((values.len() / c.dtype.size()) as u64).unwrap()];
            let (dt, fill) = (&c.data_types.0, FillValue::new(vec![0; c.dtype.size()]));
            let opts = CodecOptions::default();
            let enc = c
                .encode(ArrayBytes::new_flen(values), &shape, dt, &fill, &opts)
                .unwrap()
                .into_fixed()
                .unwrap()
                .into_owned();
            assert_eq!(enc, from_hex(s("encoded")), "{what}: encode");
            let dec = c
                .decode(ArrayBytes::new_flen(enc), &shape, dt, &fill, &opts)
                .unwrap()
                .into_fixed()
                .unwrap()
                .into_owned();
            assert_eq!(dec, from_hex(s("decoded")), "{what}: decode");
        }
    }

    #[test]
    fn only_little_endian_floats_are_supported() {
        let cfg = |dtype: &str, astype: Option<&str>| QuantizeConfiguration {
            digits: 2,
            dtype: dtype.into(),
            astype: astype.map(Into::into),
        };
        assert!(QuantizeCodec::new(cfg("<f8", None)).is_ok());
        assert!(QuantizeCodec::new(cfg("<f8", Some("<f4"))).is_ok());
        for (d, a) in [
            ("<i4", None),
            ("<f8", Some("<i4")),
            ("<f2", None),
            (">f8", None),
        ] {
            assert!(QuantizeCodec::new(cfg(d, a)).is_err(), "{d} {a:?}");
        }
        let far = QuantizeConfiguration {
            digits: 400,
            dtype: "<f8".into(),
            astype: None,
        };
        assert!(QuantizeCodec::new(far).is_err());
    }
}
