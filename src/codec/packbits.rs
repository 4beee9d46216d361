//! numcodecs' `packbits` filter (Zarr v2 `{"id": "packbits"}`, Zarr v3 `numcodecs.packbits`
//! as zarr-python 3 writes it), which zarrs 0.23 does not implement: a zarrs array→array
//! codec from a `bool` chunk to a one-dimensional `uint8` array, registered with zarrs'
//! codec plugins.
//!
//! numcodecs (`numcodecs/packbits.py`) stores the number of padding bits of the last byte
//! (0 to 7), then `np.packbits` of the flattened chunk (most significant bit first). A
//! decode checks that the stored bytes are exactly that for the chunk's element count.

use std::num::NonZeroU64;
use std::sync::Arc;

use zarrs::array::codec::api::{
    ArrayBytes, ArrayToArrayCodecTraits, Codec, CodecError, CodecOptions, CodecTraitsV2,
    CodecTraitsV3,
};
use zarrs::array::{ChunkShape, DataType, FillValue};
use zarrs::metadata::Configuration;
use zarrs::metadata::v2::MetadataV2;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::{PluginCreateError, ZarrVersion};

use super::numeric::zeroed;

/// numcodecs' `packbits` filter as a zarrs array→array codec.
#[derive(Debug, Clone)]
pub struct PackBitsCodec {
    /// `bool` and `uint8` as zarrs data types.
    data_types: (DataType, DataType),
}

register_codec!(PackBitsCodec, v3: "numcodecs.packbits", v2: "packbits");

/// The stored bytes of `n` booleans: the padding count, then `n` bits rounded up to bytes.
pub fn packed_len(n: u64) -> u64 {
    1 + n.div_ceil(8)
}

impl PackBitsCodec {
    /// The codec (it has no configuration).
    pub fn new() -> Result<Self, PluginCreateError> {
        let t = |name: &str| {
            DataType::from_metadata(&MetadataV3::new(name))
                .map_err(|e| PluginCreateError::Other(format!("packbits: {e}")))
        };
        Ok(PackBitsCodec {
            data_types: (t("bool")?, t("uint8")?),
        })
    }

    fn check(&self, data_type: &DataType) -> Result<(), CodecError> {
        if *data_type != self.data_types.0 {
            return Err(CodecError::Other(format!(
                "packbits needs a bool array, not {:?}",
                data_type.name(ZarrVersion::V3).unwrap_or_default()
            )));
        }
        Ok(())
    }
}

/// The configuration must be empty (or name the codec: numcodecs' `id`).
fn create(
    configuration: &serde_json::Map<String, serde_json::Value>,
) -> Result<Codec, PluginCreateError> {
    if configuration
        .iter()
        .any(|(k, v)| !(k == "id" && v.as_str() == Some("packbits")))
    {
        return Err(PluginCreateError::Other(format!(
            "packbits takes no configuration, got {}",
            serde_json::Value::Object(configuration.clone())
        )));
    }
    Ok(Codec::ArrayToArray(Arc::new(PackBitsCodec::new()?)))
}

impl CodecTraitsV3 for PackBitsCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let empty = serde_json::Map::new();
        create(metadata.configuration().map_or(&empty, |c| &**c))
    }
}

impl CodecTraitsV2 for PackBitsCodec {
    fn create(metadata: &MetadataV2) -> Result<Codec, PluginCreateError> {
        create(metadata.configuration())
    }
}

whole_chunk_codec!(PackBitsCodec, |_| Some(Configuration::default()));

one_thread_per_chunk!(PackBitsCodec);

/// The element count of a chunk of `shape`.
fn elements(shape: &[NonZeroU64]) -> Result<u64, CodecError> {
    shape
        .iter()
        .try_fold(1u64, |n, d| n.checked_mul(d.get()))
        .ok_or_else(|| CodecError::Other("packbits: the chunk's element count overflows".into()))
}

impl ArrayToArrayCodecTraits for PackBitsCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self as Arc<dyn ArrayToArrayCodecTraits>
    }

    fn encoded_data_type(&self, decoded_data_type: &DataType) -> Result<DataType, CodecError> {
        self.check(decoded_data_type)?;
        Ok(self.data_types.1.clone())
    }

    /// `uint8` 1 for a `true` fill value, 0 for `false`: the bool cast zarr-python applies
    /// when it fills missing encoded elements.
    fn encoded_fill_value(
        &self,
        decoded_data_type: &DataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, CodecError> {
        self.check(decoded_data_type)?;
        let fill = decoded_fill_value.as_ne_bytes();
        Ok(FillValue::new(vec![u8::from(fill.iter().any(|&b| b != 0))]))
    }

    fn encoded_shape(&self, decoded_shape: &[NonZeroU64]) -> Result<ChunkShape, CodecError> {
        let n = packed_len(elements(decoded_shape)?);
        Ok(vec![NonZeroU64::new(n).expect("at least 1")])
    }

    fn decoded_shape(
        &self,
        _encoded_shape: &[NonZeroU64],
    ) -> Result<Option<ChunkShape>, CodecError> {
        // the chunk's shape is not recoverable from a byte count
        Ok(None)
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
        let bools = bytes.into_fixed()?;
        let n = bools.len();
        let mut out = zeroed(packed_len(n as u64) as usize, "packbits")?;
        out[0] = ((8 - n % 8) % 8) as u8;
        for (i, &b) in bools.iter().enumerate() {
            if b != 0 {
                out[1 + i / 8] |= 0x80 >> (i % 8);
            }
        }
        Ok(out.into())
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &DataType,
        _fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        self.check(data_type)?;
        let enc = bytes.into_fixed()?;
        let n = elements(shape)?;
        let padding = (8 - n % 8) % 8;
        if enc.len() as u64 != packed_len(n) || u64::from(enc[0]) != padding {
            return Err(CodecError::Other(format!(
                "packbits: {} stored bytes (padding {}) are not {n} packed booleans ({} bytes, \
                 padding {padding})",
                enc.len(),
                enc.first().copied().unwrap_or(0),
                packed_len(n)
            )));
        }
        let n = usize::try_from(n).map_err(|_| {
            CodecError::Other(format!("packbits: {n} elements do not fit in memory"))
        })?;
        let mut out = zeroed(n, "packbits")?;
        for (i, b) in out.iter_mut().enumerate() {
            *b = (enc[1 + i / 8] >> (7 - i % 8)) & 1;
        }
        Ok(out.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(shape: &[u64]) -> Vec<NonZeroU64> {
        shape.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect()
    }

    fn codec() -> PackBitsCodec {
        PackBitsCodec::new().unwrap()
    }

    fn encode(bools: &[u8], shape: &[u64]) -> Vec<u8> {
        let c = codec();
        c.encode(
            ArrayBytes::new_flen(bools.to_vec()),
            &nz(shape),
            &c.data_types.0,
            &FillValue::new(vec![0]),
            &CodecOptions::default(),
        )
        .unwrap()
        .into_fixed()
        .unwrap()
        .into_owned()
    }

    fn decode(enc: &[u8], shape: &[u64]) -> Result<Vec<u8>, CodecError> {
        let c = codec();
        Ok(c.decode(
            ArrayBytes::new_flen(enc.to_vec()),
            &nz(shape),
            &c.data_types.0,
            &FillValue::new(vec![0]),
            &CodecOptions::default(),
        )?
        .into_fixed()?
        .into_owned())
    }

    #[test]
    fn bits_are_numcodecs_and_decode_back() {
        // numcodecs' docstring: [True, False, False, True] -> [4, 144]
        assert_eq!(encode(&[1, 0, 0, 1], &[4]), [4, 0b1001_0000]);
        assert_eq!(decode(&[4, 0b1001_0000], &[4]).unwrap(), [1, 0, 0, 1]);
        let bools: Vec<u8> = (0..24).map(|i| u8::from(i % 3 == 0)).collect();
        let enc = encode(&bools, &[4, 6]);
        assert_eq!(enc.len(), 4);
        assert_eq!(enc[0], 0);
        assert_eq!(decode(&enc, &[4, 6]).unwrap(), bools);
        let shape = codec().encoded_shape(&nz(&[3, 3])).unwrap();
        assert_eq!(shape.to_vec(), nz(&[3]));
    }

    #[test]
    fn bytes_that_are_no_packing_of_the_chunk_are_errors() {
        assert!(decode(&[4, 0], &[5]).is_err()); // padding 4, 5 elements need 3
        assert!(decode(&[4, 0, 0], &[4]).is_err()); // one byte too many
        assert!(decode(&[], &[4]).is_err());
        let bad = r#"{"name": "numcodecs.packbits", "configuration": {"x": 1}}"#;
        let m: MetadataV3 = serde_json::from_str(bad).unwrap();
        assert!(<PackBitsCodec as CodecTraitsV3>::create(&m).is_err());
        let m: MetadataV3 = serde_json::from_str(r#"{"name": "numcodecs.packbits"}"#).unwrap();
        assert!(<PackBitsCodec as CodecTraitsV3>::create(&m).is_ok());
    }
}
