//! numcodecs' `delta` filter (Zarr v2 `{"id": "delta", "dtype": ..., "astype": ...}`,
//! Zarr v3 `numcodecs.delta` as zarr-python 3 writes it), which zarrs 0.23 does not
//! implement: a zarrs array→array codec registered with zarrs' codec plugins.
//!
//! numcodecs (`numcodecs/delta.py`, 0.15–0.17) flattens the chunk in its memory order and
//! stores `enc[0] = arr[0]; enc[1:] = np.diff(arr)` in `astype`; decoding is
//! `np.cumsum(enc, out=dec)`. This codec reproduces that arithmetic (checked against
//! numcodecs-made vectors for every integer pair, `tests` below):
//! - integers: the differences wrap in `dtype` and are cast to `astype` by truncation; the
//!   running sum wraps in `dtype`; a first element outside a signed `astype`'s range is an
//!   error, as numcodecs' `OverflowError`;
//! - floats subtract and sum one element after another in their own precision (so, as in
//!   numcodecs, a float chunk may not decode to exactly what was encoded; which of two NaN
//!   payloads survives a sum is not guaranteed to be NumPy's).
//!
//! Supported: integer `dtype`s with any integer `astype` except `uint64` with a signed type
//! (NumPy sums those through float64), and `float32` / `float64` with the same `astype`;
//! byte order `<`, `|`, `=` or none (the values are the chunk's, in memory order). Other
//! combinations are refused when the codec is built.

use std::num::NonZeroU64;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zarrs::array::codec::api::{ArrayBytes, ArrayToArrayCodecTraits, CodecError, CodecOptions};
use zarrs::array::{DataType, FillValue};
use zarrs::plugin::PluginCreateError;

use super::numeric::{Elem, count, f32_at, f64_at};

/// The `delta` codec's configuration, as numcodecs writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaConfiguration {
    /// The data type of the decoded elements (a NumPy type string, e.g. `<i4`).
    pub dtype: String,
    /// The data type of the stored differences (`dtype` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub astype: Option<String>,
}

/// numcodecs' `delta` filter as a zarrs array→array codec.
#[derive(Debug, Clone)]
pub struct DeltaCodec {
    configuration: DeltaConfiguration,
    dtype: Elem,
    astype: Elem,
    /// `dtype` and `astype` as zarrs data types.
    data_types: (DataType, DataType),
}

register_codec!(DeltaCodec, v3: "numcodecs.delta", v2: "delta");

impl DeltaCodec {
    /// The codec of `configuration`, or why it is not supported.
    pub fn new(configuration: DeltaConfiguration) -> Result<Self, PluginCreateError> {
        let elem = |t: &str| {
            Elem::parse(t).ok_or_else(|| {
                PluginCreateError::Other(format!(
                    "delta: data type {t:?} is not supported (integers and floats)"
                ))
            })
        };
        let dtype = elem(&configuration.dtype)?;
        let astype = match &configuration.astype {
            Some(a) => elem(a)?,
            None => dtype,
        };
        let unsigned64_with_signed = (dtype == Elem::U64 && astype.is_signed())
            || (astype == Elem::U64 && dtype.is_signed());
        if unsigned64_with_signed {
            return Err(PluginCreateError::Other(format!(
                "delta: dtype {:?} with astype {:?} is not supported (NumPy sums uint64 with \
                 a signed type through float64)",
                configuration.dtype, configuration.astype
            )));
        }
        if (dtype.is_float() || astype.is_float()) && dtype != astype {
            return Err(PluginCreateError::Other(format!(
                "delta: dtype {:?} with astype {:?} is not supported (floats need the same astype)",
                configuration.dtype, configuration.astype
            )));
        }
        let data_types = (dtype.data_type()?, astype.data_type()?);
        Ok(DeltaCodec {
            configuration,
            dtype,
            astype,
            data_types,
        })
    }

    fn check(&self, data_type: &DataType) -> Result<(), CodecError> {
        super::numeric::check_data_type(
            "delta",
            &self.configuration.dtype,
            &self.data_types.0,
            data_type,
        )
    }
}

numcodecs_array_codec_create!(DeltaCodec, DeltaConfiguration, "delta");

whole_chunk_codec!(DeltaCodec, |c| super::plugin::configuration_of(
    &c.configuration
));

one_thread_per_chunk!(DeltaCodec);

/// numcodecs' encoding of the decoded elements `x` (type `dtype`) into `astype`.
fn encode_elements(x: &[u8], dtype: Elem, astype: Elem) -> Result<Vec<u8>, CodecError> {
    let n = count(x, dtype, "delta")?;
    let mut out = vec![0u8; n * astype.size()];
    match dtype {
        Elem::F32 => {
            let mut prev = 0f32;
            for i in 0..n {
                let v = f32_at(x, i);
                let d = if i == 0 { v } else { v - prev };
                out[i * 4..i * 4 + 4].copy_from_slice(&d.to_ne_bytes());
                prev = v;
            }
        }
        Elem::F64 => {
            let mut prev = 0f64;
            for i in 0..n {
                let v = f64_at(x, i);
                let d = if i == 0 { v } else { v - prev };
                out[i * 8..i * 8 + 8].copy_from_slice(&d.to_ne_bytes());
                prev = v;
            }
        }
        _ => {
            // the first element is assigned (NumPy checks that it fits a signed astype);
            // the differences wrap in `dtype`'s width and are cast to `astype` by truncation
            let first = if n > 0 { dtype.load_int(x, 0) } else { 0 };
            if astype.is_signed() && astype.wrap(first) != first {
                return Err(CodecError::Other(format!(
                    "delta: the chunk's first element does not fit astype {}",
                    astype.v3_name()
                )));
            }
            let mut prev = 0u64;
            for i in 0..n {
                let v = dtype.load_int(x, i);
                let d = if i == 0 { v } else { v.wrapping_sub(prev) };
                // wrapped in `dtype` (the subtraction's type), then cast into `astype`
                astype.store_int(&mut out, i, dtype.wrap(d));
                prev = v;
            }
        }
    }
    Ok(out)
}

/// numcodecs' decoding (a running sum) of `enc` (type `astype`) into `dtype`.
fn decode_elements(enc: &[u8], dtype: Elem, astype: Elem) -> Result<Vec<u8>, CodecError> {
    let n = count(enc, astype, "delta")?;
    let mut out = vec![0u8; n * dtype.size()];
    match dtype {
        Elem::F32 => {
            let mut sum = 0f32;
            for i in 0..n {
                let d = f32_at(enc, i);
                sum = if i == 0 { d } else { sum + d };
                out[i * 4..i * 4 + 4].copy_from_slice(&sum.to_ne_bytes());
            }
        }
        Elem::F64 => {
            let mut sum = 0f64;
            for i in 0..n {
                let d = f64_at(enc, i);
                sum = if i == 0 { d } else { sum + d };
                out[i * 8..i * 8 + 8].copy_from_slice(&sum.to_ne_bytes());
            }
        }
        _ => {
            // NumPy sums in 64 bits and casts each prefix to `dtype`: modulo `dtype`'s
            // width that is the wrapping sum
            let mut sum = 0u64;
            for i in 0..n {
                sum = sum.wrapping_add(astype.load_int(enc, i));
                dtype.store_int(&mut out, i, sum);
            }
        }
    }
    Ok(out)
}

impl ArrayToArrayCodecTraits for DeltaCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        self.check(decoded_data_type)?;
        Ok(self.data_types.1.clone())
    }

    /// The fill value cast to `astype` (truncating, without the first-element check: the
    /// fill value of chunks never written is no element numcodecs encoded).
    fn encoded_fill_value(
        &self,
        decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        self.check(decoded_data_type)?;
        let fill = decoded_fill_value.as_ne_bytes();
        if fill.len() != self.dtype.size() {
            return Err(CodecError::Other(format!(
                "delta: a {}-byte fill value for {}",
                fill.len(),
                self.dtype.v3_name()
            )));
        }
        let mut out = vec![0u8; self.astype.size()];
        if self.dtype.is_float() {
            out.copy_from_slice(fill);
        } else {
            self.astype
                .store_int(&mut out, 0, self.dtype.load_int(fill, 0));
        }
        Ok(FillValue::new(out))
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
        let x = bytes.into_fixed()?;
        Ok(encode_elements(&x, self.dtype, self.astype)?.into())
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
        Ok(decode_elements(&enc, self.dtype, self.astype)?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarrs::array::codec::api::CodecTraitsV2;
    use zarrs::array::codec::api::CodecTraitsV3;
    use zarrs::metadata::v2::MetadataV2;
    use zarrs::metadata::v3::MetadataV3;

    fn ne<T: Copy, const N: usize>(values: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| f(v)).collect()
    }

    #[test]
    fn integers_encode_as_numpy_differences_and_decode_back() {
        let x = ne(&[5i32, 7, 7, 2, i32::MIN, i32::MAX], i32::to_ne_bytes);
        let enc = encode_elements(&x, Elem::I32, Elem::I32).unwrap();
        // np.diff with wrapping: MIN - 2 wraps, MAX - MIN wraps to -1
        let want = ne(
            &[5i32, 2, 0, -5, i32::MIN.wrapping_sub(2), -1],
            i32::to_ne_bytes,
        );
        assert_eq!(enc, want);
        assert_eq!(decode_elements(&enc, Elem::I32, Elem::I32).unwrap(), x);
        // a narrower astype: the differences fit, so the values decode back
        let x = ne(&[1000i64, 1001, 999, 1200], i64::to_ne_bytes);
        let enc = encode_elements(&x, Elem::I64, Elem::I16).unwrap();
        assert_eq!(enc, ne(&[1000i16, 1, -2, 201], i16::to_ne_bytes));
        assert_eq!(decode_elements(&enc, Elem::I64, Elem::I16).unwrap(), x);
        // unsigned
        let x = ne(&[3u8, 1, 255, 0], u8::to_ne_bytes);
        let enc = encode_elements(&x, Elem::U8, Elem::U8).unwrap();
        assert_eq!(enc, ne(&[3u8, 254, 254, 1], u8::to_ne_bytes));
        assert_eq!(decode_elements(&enc, Elem::U8, Elem::U8).unwrap(), x);
    }

    use super::super::numeric::from_hex as hex;

    /// numcodecs' own results (`test-data/generate.py`, `gen_delta_vectors`) for every
    /// supported integer pair: extremes whose differences wrap, and random stored bytes.
    #[test]
    #[cfg(target_endian = "little")]
    fn integer_pairs_match_numcodecs_byte_for_byte() {
        let doc: serde_json::Value = serde_json::from_str(include_str!(
            "../../test-data/fixtures/numcodecs-delta-vectors.json"
        ))
        .unwrap();
        let vectors = doc["vectors"].as_array().unwrap();
        assert_eq!(vectors.len(), 56);
        for v in vectors {
            let s = |k: &str| v[k].as_str().unwrap();
            let (d, a) = (
                Elem::parse(s("dtype")).unwrap(),
                Elem::parse(s("astype")).unwrap(),
            );
            let what = format!("{} -> {}", s("dtype"), s("astype"));
            assert!(
                DeltaCodec::new(DeltaConfiguration {
                    dtype: s("dtype").into(),
                    astype: Some(s("astype").into()),
                })
                .is_ok()
            );
            let enc = encode_elements(&hex(s("values")), d, a).unwrap();
            assert_eq!(enc, hex(s("encoded")), "{what}: encode");
            assert_eq!(
                decode_elements(&enc, d, a).unwrap(),
                hex(s("decoded")),
                "{what}: decode"
            );
            assert_eq!(
                decode_elements(&hex(s("stored")), d, a).unwrap(),
                hex(s("stored_decoded")),
                "{what}: decode of random bytes"
            );
        }
    }

    /// numcodecs raises `OverflowError` when the first element does not fit a signed astype
    /// (an unsigned one wraps): so does this codec, and its fill value is cast regardless.
    #[test]
    fn a_first_element_outside_a_signed_astype_is_an_error() {
        let x = ne(&[32767i16, 5], i16::to_ne_bytes);
        assert!(encode_elements(&x, Elem::I16, Elem::I8).is_err());
        let x = ne(&[255u8, 5], u8::to_ne_bytes);
        assert!(encode_elements(&x, Elem::U8, Elem::I8).is_err());
        assert!(encode_elements(&x, Elem::U8, Elem::U16).is_ok());
        let x = ne(&[-32768i16, 5], i16::to_ne_bytes);
        assert_eq!(
            encode_elements(&x, Elem::I16, Elem::U8).unwrap(),
            vec![0u8, 5]
        );
        let x = ne(&[127i16, -300], i16::to_ne_bytes);
        assert!(encode_elements(&x, Elem::I16, Elem::I8).is_ok());
        let codec = DeltaCodec::new(DeltaConfiguration {
            dtype: "<i2".into(),
            astype: Some("<i1".into()),
        })
        .unwrap();
        let fill = codec
            .encoded_fill_value(
                &Elem::I16.data_type().unwrap(),
                &FillValue::new(1000i16.to_ne_bytes().to_vec()),
            )
            .unwrap();
        assert_eq!(fill.as_ne_bytes(), &[(1000i16 as u16 & 0xff) as u8]);
    }

    #[test]
    fn floats_subtract_and_sum_in_their_precision() {
        let x = ne(&[0.1f64, 0.2, 0.7, -3.5], f64::to_ne_bytes);
        let enc = encode_elements(&x, Elem::F64, Elem::F64).unwrap();
        assert_eq!(
            enc,
            ne(
                &[0.1f64, 0.2 - 0.1, 0.7 - 0.2, -3.5 - 0.7],
                f64::to_ne_bytes
            )
        );
        let mut sum = 0.1f64;
        let mut want = vec![sum];
        for d in [0.2 - 0.1, 0.7 - 0.2, -3.5 - 0.7] {
            sum += d;
            want.push(sum);
        }
        assert_eq!(
            decode_elements(&enc, Elem::F64, Elem::F64).unwrap(),
            ne(&want, f64::to_ne_bytes)
        );
    }

    #[test]
    fn configurations_are_checked_when_the_codec_is_built() {
        let cfg = |dtype: &str, astype: Option<&str>| DeltaConfiguration {
            dtype: dtype.into(),
            astype: astype.map(Into::into),
        };
        assert!(DeltaCodec::new(cfg("<i4", None)).is_ok());
        assert!(DeltaCodec::new(cfg("<i8", Some("<i2"))).is_ok());
        assert!(DeltaCodec::new(cfg("<f8", Some("<f8"))).is_ok());
        assert!(DeltaCodec::new(cfg("<f8", Some("<f4"))).is_err());
        assert!(DeltaCodec::new(cfg("<i4", Some("<f4"))).is_err());
        assert!(DeltaCodec::new(cfg("<M8[s]", None)).is_err());
        assert!(DeltaCodec::new(cfg("|b1", None)).is_err());
        assert!(DeltaCodec::new(cfg(">i4", None)).is_err());
        assert!(DeltaCodec::new(cfg("|u1", Some(">u1"))).is_ok());
        for (d, a) in [("<u8", "<i4"), ("<i2", "<u8"), ("<u8", "<i8")] {
            assert!(DeltaCodec::new(cfg(d, Some(a))).is_err(), "{d} {a}");
        }
        assert!(DeltaCodec::new(cfg("<u8", Some("<u2"))).is_ok());
        // a partial element is an error, not a panic
        assert!(decode_elements(&[1, 2, 3], Elem::I32, Elem::I32).is_err());
        let v2: MetadataV2 =
            serde_json::from_str(r#"{"id": "delta", "dtype": "<u2", "astype": "<u2"}"#).unwrap();
        assert!(<DeltaCodec as CodecTraitsV2>::create(&v2).is_ok());
        let v3: MetadataV3 = serde_json::from_str(
            r#"{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}"#,
        )
        .unwrap();
        assert!(<DeltaCodec as CodecTraitsV3>::create(&v3).is_ok());
        let bare: MetadataV3 = serde_json::from_str(r#"{"name": "numcodecs.delta"}"#).unwrap();
        assert!(<DeltaCodec as CodecTraitsV3>::create(&bare).is_err());
    }
}
