//! numcodecs' `astype` filter (Zarr v2 `{"id": "astype", "encode_dtype": ...,
//! "decode_dtype": ...}`, Zarr v3 `numcodecs.astype` as zarr-python 3 writes it), which
//! zarrs 0.23 does not implement: a zarrs array→array codec registered with zarrs' codec
//! plugins.
//!
//! numcodecs (`numcodecs/astype.py`) stores `arr.astype(encode_dtype)` and decodes with
//! `enc.astype(decode_dtype)`; this codec applies NumPy's casts (`codec::numeric::cast`):
//! integers wrap, floats round to nearest, floats become integers by truncation. A float
//! that has no value of an integer type (NaN, infinities, out of range) is an error where
//! NumPy's result would depend on the machine.
//!
//! Supported: integer and `float32` / `float64` types, little-endian or single-byte
//! (`<`, `|`, `=` or none); `decode_dtype` must be the array's data type. Other types are
//! refused when the codec is built.

use std::num::NonZeroU64;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zarrs::array::codec::api::{ArrayBytes, ArrayToArrayCodecTraits, CodecError, CodecOptions};
use zarrs::array::{DataType, FillValue};
use zarrs::plugin::PluginCreateError;

use super::numeric::{Elem, cast};

/// The `astype` codec's configuration, as numcodecs writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsTypeConfiguration {
    /// The data type stored (a NumPy type string, e.g. `<i2`).
    pub encode_dtype: String,
    /// The data type of the decoded elements: the array's.
    pub decode_dtype: String,
}

/// numcodecs' `astype` filter as a zarrs array→array codec.
#[derive(Debug, Clone)]
pub struct AsTypeCodec {
    configuration: AsTypeConfiguration,
    encode: Elem,
    decode: Elem,
    /// `decode_dtype` and `encode_dtype` as zarrs data types.
    data_types: (DataType, DataType),
}

register_codec!(AsTypeCodec, v3: "numcodecs.astype", v2: "astype");

impl AsTypeCodec {
    /// The codec of `configuration`, or why it is not supported.
    pub fn new(configuration: AsTypeConfiguration) -> Result<Self, PluginCreateError> {
        let elem = |t: &str| {
            Elem::parse(t).ok_or_else(|| {
                PluginCreateError::Other(format!(
                    "astype: data type {t:?} is not supported (little-endian integers and floats)"
                ))
            })
        };
        let encode = elem(&configuration.encode_dtype)?;
        let decode = elem(&configuration.decode_dtype)?;
        let data_types = (decode.data_type()?, encode.data_type()?);
        Ok(AsTypeCodec {
            configuration,
            encode,
            decode,
            data_types,
        })
    }

    fn check(&self, data_type: &DataType) -> Result<(), CodecError> {
        super::numeric::check_data_type(
            "astype",
            &self.configuration.decode_dtype,
            &self.data_types.0,
            data_type,
        )
    }
}

numcodecs_array_codec_create!(AsTypeCodec, AsTypeConfiguration, "astype");

whole_chunk_codec!(AsTypeCodec, |c| super::plugin::configuration_of(
    &c.configuration
));

one_thread_per_chunk!(AsTypeCodec);

impl ArrayToArrayCodecTraits for AsTypeCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        self.check(decoded_data_type)?;
        Ok(self.data_types.1.clone())
    }

    /// The fill value cast to `encode_dtype`; zero where that cast is undefined (a NaN or
    /// out-of-range float fill of an integer `encode_dtype`). numcodecs never encodes the fill
    /// value: it only stands for chunks never written, which read as the array's own.
    fn encoded_fill_value(
        &self,
        decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        self.check(decoded_data_type)?;
        let fill = decoded_fill_value.as_ne_bytes();
        Ok(FillValue::new(
            cast(fill, self.decode, self.encode, "astype")
                .unwrap_or_else(|_| vec![0; self.encode.size()]),
        ))
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
        Ok(cast(&x, self.decode, self.encode, "astype")?.into())
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
        Ok(cast(&enc, self.encode, self.decode, "astype")?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numeric::{cast_vectors, from_hex};
    use zarrs::array::codec::api::CodecTraitsV2;
    use zarrs::array::codec::api::CodecTraitsV3;
    use zarrs::metadata::v2::MetadataV2;
    use zarrs::metadata::v3::MetadataV3;

    /// numcodecs' own results (`test-data/generate.py`, `gen_cast_vectors`) for every pair
    /// of integer and float types: wrapping, rounding, overflow to infinity, truncation.
    #[test]
    #[cfg(target_endian = "little")]
    fn every_type_pair_matches_numcodecs_byte_for_byte() {
        let vectors = cast_vectors("astype");
        assert_eq!(vectors.len(), 100);
        for v in vectors {
            let s = |k: &str| v[k].as_str().unwrap();
            let codec = AsTypeCodec::new(AsTypeConfiguration {
                encode_dtype: s("encode_dtype").into(),
                decode_dtype: s("decode_dtype").into(),
            })
            .unwrap();
            let what = format!("{} -> {}", s("decode_dtype"), s("encode_dtype"));
            let enc = cast(&from_hex(s("values")), codec.decode, codec.encode, "t").unwrap();
            assert_eq!(enc, from_hex(s("encoded")), "{what}: encode");
            match cast(&enc, codec.encode, codec.decode, "t") {
                Ok(dec) => assert_eq!(dec, from_hex(s("decoded")), "{what}: decode"),
                // a float stored for an integer array whose cast NumPy leaves undefined (the
                // largest integers round up past the range in float32 or float64)
                Err(e) => {
                    let (lo, end) = codec.decode.float_range();
                    let n = enc.len() / codec.encode.size();
                    let outside = (0..n).any(|i| {
                        let v = match codec.encode {
                            Elem::F32 => f64::from(crate::codec::numeric::f32_at(&enc, i)),
                            _ => crate::codec::numeric::f64_at(&enc, i),
                        };
                        !(v.trunc() >= lo && v.trunc() < end)
                    });
                    assert!(outside, "{what}: {e}");
                }
            }
        }
    }

    #[test]
    fn configurations_are_checked_when_the_codec_is_built() {
        let cfg = |e: &str, d: &str| AsTypeConfiguration {
            encode_dtype: e.into(),
            decode_dtype: d.into(),
        };
        assert!(AsTypeCodec::new(cfg("<i2", "<i4")).is_ok());
        assert!(AsTypeCodec::new(cfg("|u1", "float64")).is_ok());
        for (e, d) in [
            (">i2", "<i4"),
            ("<i2", ">i4"),
            ("<f2", "<f4"),
            ("|b1", "<i4"),
            ("<M8[s]", "<i8"),
        ] {
            assert!(AsTypeCodec::new(cfg(e, d)).is_err(), "{e} {d}");
        }
        let v2: MetadataV2 = serde_json::from_str(
            r#"{"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<i4"}"#,
        )
        .unwrap();
        assert!(<AsTypeCodec as CodecTraitsV2>::create(&v2).is_ok());
        let bare: MetadataV3 = serde_json::from_str(r#"{"name": "numcodecs.astype"}"#).unwrap();
        assert!(<AsTypeCodec as CodecTraitsV3>::create(&bare).is_err());
    }
}
