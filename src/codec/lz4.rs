//! numcodecs' `lz4` compressor (Zarr v2 `{"id": "lz4"}`, Zarr v3 `numcodecs.lz4` as
//! zarr-python 3 writes it), which zarrs 0.23 does not implement: a zarrs bytes→bytes codec
//! registered with zarrs' codec plugins, so that chains and v2 → v3 conversions find it.
//!
//! The stream is numcodecs' (`numcodecs/lz4.pyx`): the decoded size as a 4-byte
//! little-endian integer, then one LZ4 block. Blocks are made by liblz4 itself (the `lz4`
//! crate over `lz4-sys`'s bundled liblz4 1.10.0, the version numcodecs 0.17 bundles) with
//! `LZ4_compress_fast` at the configured `acceleration`, as numcodecs makes them, so the
//! chunks are numcodecs' bytes; they are read by `lz4_flex` (pure Rust, bounds-checked
//! decoding), which reads a block whatever acceleration made it.
//!
//! A decode never allocates more than the size the header declares, and the header must
//! declare exactly the chunk's size where that is known (see also
//! the `bounds` module, whose lz4 stage checks it before any allocation).

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zarrs::array::codec::api::{
    BytesToBytesCodecTraits, Codec, CodecError, CodecOptions, CodecTraitsV2, CodecTraitsV3,
    RecommendedConcurrency,
};
use zarrs::array::{ArrayBytesRaw, BytesRepresentation};
use zarrs::metadata::v2::MetadataV2;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

/// numcodecs' default acceleration (`LZ4_compress_fast`'s 1).
pub const DEFAULT_ACCELERATION: i64 = 1;

/// The largest input an LZ4 block holds (`LZ4_MAX_INPUT_SIZE`): numcodecs cannot decode
/// more, so no larger chunk is written.
pub const MAX_LZ4_INPUT: u64 = 0x7E00_0000;

/// Bytes of the size header before the block.
const HEADER: usize = 4;

/// The `lz4` codec's configuration, as numcodecs writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lz4Configuration {
    /// `LZ4_compress_fast`'s acceleration (numcodecs' default 1): higher is faster and
    /// compresses less; below 1 is taken as 1 and above 65537 as 65537, as liblz4 does.
    #[serde(default = "default_acceleration")]
    pub acceleration: i64,
}

fn default_acceleration() -> i64 {
    DEFAULT_ACCELERATION
}

/// numcodecs' `lz4` compressor as a zarrs bytes→bytes codec.
#[derive(Debug, Clone)]
pub struct Lz4Codec {
    configuration: Lz4Configuration,
}

register_codec!(Lz4Codec, v3: "numcodecs.lz4", v2: "lz4");

impl Lz4Configuration {
    /// The configuration with `acceleration`.
    pub fn new(acceleration: i64) -> Self {
        Lz4Configuration { acceleration }
    }
}

impl Lz4Codec {
    /// The codec with `configuration`.
    pub fn new(configuration: Lz4Configuration) -> Self {
        Lz4Codec { configuration }
    }
}

impl CodecTraitsV3 for Lz4Codec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let configuration = match metadata.configuration() {
            Some(c) => super::numcodecs_configuration::<Lz4Configuration>(c, "lz4")?,
            None => Lz4Configuration::new(DEFAULT_ACCELERATION),
        };
        Ok(Codec::BytesToBytes(Arc::new(Lz4Codec::new(configuration))))
    }
}

impl CodecTraitsV2 for Lz4Codec {
    fn create(metadata: &MetadataV2) -> Result<Codec, PluginCreateError> {
        let configuration =
            super::numcodecs_configuration::<Lz4Configuration>(metadata.configuration(), "lz4")?;
        Ok(Codec::BytesToBytes(Arc::new(Lz4Codec::new(configuration))))
    }
}

whole_chunk_codec!(Lz4Codec, |c| super::plugin::configuration_of(
    &c.configuration
));

/// The decoded size `encoded`'s header declares, and its block.
pub(crate) fn declared_size(encoded: &[u8]) -> Option<(u64, &[u8])> {
    let header: [u8; HEADER] = encoded.get(..HEADER)?.try_into().ok()?;
    Some((u64::from(u32::from_le_bytes(header)), &encoded[HEADER..]))
}

/// The most bytes `stored` bytes of numcodecs' lz4 (header and block) can decode to: a
/// block byte yields at most 255 (one literal-length or match-length extension byte), so a
/// short block never justifies a large buffer.
pub(crate) fn max_decoded(stored: u64) -> u64 {
    stored
        .saturating_sub(HEADER as u64)
        .saturating_mul(255)
        .saturating_add(16)
}

/// The most bytes an LZ4 block of `n` bytes can hold: `LZ4_compressBound`, plus the header.
pub(crate) fn encoded_bound(n: u64) -> u64 {
    n.saturating_add(n / 255)
        .saturating_add(16)
        .saturating_add(HEADER as u64)
}

fn codec_error(message: String) -> CodecError {
    CodecError::Other(message)
}

impl BytesToBytesCodecTraits for Lz4Codec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn BytesToBytesCodecTraits> {
        self as Arc<dyn BytesToBytesCodecTraits>
    }

    fn recommended_concurrency(
        &self,
        _decoded_representation: &BytesRepresentation,
    ) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }

    fn encoded_representation(
        &self,
        decoded_representation: &BytesRepresentation,
    ) -> BytesRepresentation {
        decoded_representation
            .size()
            .map_or(BytesRepresentation::UnboundedSize, |n| {
                BytesRepresentation::BoundedSize(encoded_bound(n))
            })
    }

    fn encode<'a>(
        &self,
        decoded_value: ArrayBytesRaw<'a>,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let n = decoded_value.len();
        if n as u64 > MAX_LZ4_INPUT {
            return Err(codec_error(format!(
                "lz4 holds at most {MAX_LZ4_INPUT} bytes per chunk, this one has {n}"
            )));
        }
        let bound = HEADER
            + lz4::block::compress_bound(n)
                .map_err(|e| codec_error(format!("lz4 cannot compress {n} bytes: {e}")))?;
        let mut out = bytemuck::allocation::try_zeroed_vec::<u8>(bound)
            .map_err(|()| codec_error(format!("cannot allocate {bound} bytes for lz4")))?;
        // LZ4_compress_fast, as numcodecs calls it; the size header is written by the crate
        // (`prepend_size`: 4 bytes, little-endian), so `written` includes it
        let acceleration = self.configuration.acceleration.clamp(1, 65537) as i32;
        let mode = lz4::block::CompressionMode::FAST(acceleration);
        let written = lz4::block::compress_to_buffer(&decoded_value, Some(mode), true, &mut out)
            .map_err(|e| codec_error(format!("lz4 compression failed: {e}")))?
            - HEADER;
        // numcodecs refuses to decode a stored chunk past the same limit
        if (HEADER + written) as u64 > MAX_LZ4_INPUT {
            return Err(codec_error(format!(
                "an lz4 chunk of {} bytes: numcodecs reads at most {MAX_LZ4_INPUT}",
                HEADER + written
            )));
        }
        out.truncate(HEADER + written);
        out.shrink_to_fit();
        Ok(Cow::Owned(out))
    }

    fn decode<'a>(
        &self,
        encoded_value: ArrayBytesRaw<'a>,
        decoded_representation: &BytesRepresentation,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let (declared, block) = declared_size(&encoded_value).ok_or_else(|| {
            codec_error("an lz4 chunk shorter than its 4-byte size header".into())
        })?;
        match decoded_representation {
            BytesRepresentation::FixedSize(n) if declared != *n => {
                return Err(codec_error(format!(
                    "the lz4 header declares {declared} bytes, the chunk holds {n}"
                )));
            }
            BytesRepresentation::BoundedSize(n) if declared > *n => {
                return Err(codec_error(format!(
                    "the lz4 header declares {declared} bytes, more than the {n} allowed"
                )));
            }
            _ => {}
        }
        if declared > max_decoded(encoded_value.len() as u64) {
            return Err(codec_error(format!(
                "the lz4 header declares {declared} bytes, more than its {}-byte block can hold",
                block.len()
            )));
        }
        let size = usize::try_from(declared)
            .map_err(|_| codec_error(format!("{declared} bytes do not fit in memory")))?;
        // allocated zeroed (large buffers come as untouched pages): a hostile block that
        // fails early touches only what it wrote
        let mut out = bytemuck::allocation::try_zeroed_vec::<u8>(size)
            .map_err(|()| codec_error(format!("cannot allocate {size} bytes for lz4")))?;
        let written = lz4_flex::block::decompress_into(block, &mut out)
            .map_err(|e| codec_error(format!("invalid lz4 block: {e}")))?;
        if written != size {
            return Err(codec_error(format!(
                "the lz4 block holds {written} bytes, its header declares {size}"
            )));
        }
        Ok(Cow::Owned(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarrs::array::codec::api::{CodecMetadataOptions, CodecTraits};
    use zarrs::plugin::ZarrVersion;

    fn codec() -> Lz4Codec {
        Lz4Codec::new(Lz4Configuration::new(DEFAULT_ACCELERATION))
    }

    fn fixed(n: usize) -> BytesRepresentation {
        BytesRepresentation::FixedSize(n as u64)
    }

    #[test]
    fn chunks_round_trip_in_numcodecs_framing() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let encoded = codec()
            .encode(Cow::Borrowed(&data), &CodecOptions::default())
            .unwrap();
        assert_eq!(&encoded[..4], &(data.len() as u32).to_le_bytes());
        assert!(encoded.len() < data.len() / 4, "{}", encoded.len());
        assert!(encoded.len() as u64 <= encoded_bound(data.len() as u64));
        // the block after the header is a plain LZ4 block (what liblz4 reads)
        let plain = lz4_flex::block::decompress(&encoded[4..], data.len()).unwrap();
        assert_eq!(plain, data);
        let decoded = codec()
            .decode(encoded, &fixed(data.len()), &CodecOptions::default())
            .unwrap();
        assert_eq!(decoded.as_ref(), data.as_slice());
        for empty in [Vec::new(), vec![7u8]] {
            let e = codec()
                .encode(Cow::Borrowed(&empty), &CodecOptions::default())
                .unwrap();
            let d = codec()
                .decode(e, &fixed(empty.len()), &CodecOptions::default())
                .unwrap();
            assert_eq!(d.as_ref(), empty.as_slice());
        }
    }

    #[test]
    fn acceleration_trades_size_for_speed_and_every_block_reads_back() {
        // pseudo-random bytes over a small alphabet: matches a fast search skips
        let mut x = 12345u32;
        let data: Vec<u8> = (0..200_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                b"abcdefgh"[(x >> 16) as usize % 8]
            })
            .collect();
        let sizes: Vec<usize> = [1, 64, 65_537, 1 << 20, -3]
            .into_iter()
            .map(|a| {
                let c = Lz4Codec::new(Lz4Configuration::new(a));
                let e = c
                    .encode(Cow::Borrowed(&data), &CodecOptions::default())
                    .unwrap();
                let n = e.len();
                let d = c
                    .decode(e, &fixed(data.len()), &CodecOptions::default())
                    .unwrap();
                assert_eq!(d.as_ref(), data.as_slice(), "acceleration {a}");
                n
            })
            .collect();
        assert!(sizes[0] < sizes[1], "{sizes:?}");
        // out of liblz4's range: taken as its bounds (1 and 65537)
        assert_eq!(sizes[3], sizes[2]);
        assert_eq!(sizes[4], sizes[0]);
    }

    #[test]
    fn hostile_headers_and_blocks_are_errors_before_any_large_allocation() {
        let data = vec![3u8; 4096];
        let good = codec()
            .encode(Cow::Borrowed(&data), &CodecOptions::default())
            .unwrap()
            .into_owned();
        let decode = |bytes: Vec<u8>, rep: BytesRepresentation| {
            codec().decode(Cow::Owned(bytes), &rep, &CodecOptions::default())
        };
        // shorter than the header
        assert!(decode(vec![1, 2], fixed(4096)).is_err());
        // a header that is not the chunk's size
        let mut wrong = good.clone();
        wrong[..4].copy_from_slice(&4095u32.to_le_bytes());
        assert!(decode(wrong, fixed(4096)).is_err());
        // 4 GiB declared by a few bytes, for a chunk of unknown size: refused, not allocated
        let mut huge = u32::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(&[0x1f, 0, 0]);
        assert!(decode(huge.clone(), BytesRepresentation::UnboundedSize).is_err());
        assert!(decode(huge, BytesRepresentation::BoundedSize(1 << 40)).is_err());
        // a truncated or corrupt block
        assert!(decode(good[..good.len() - 3].to_vec(), fixed(4096)).is_err());
        let mut corrupt = good.clone();
        for b in corrupt[4..].iter_mut() {
            *b = 0xff;
        }
        assert!(decode(corrupt, fixed(4096)).is_err());
        assert_eq!(decode(good, fixed(4096)).unwrap().as_ref(), data.as_slice());
    }

    #[test]
    fn v2_and_v3_metadata_make_the_codec_and_keep_its_acceleration() {
        let v3: MetadataV3 = serde_json::from_str(
            r#"{"name": "numcodecs.lz4", "configuration": {"acceleration": 5}}"#,
        )
        .unwrap();
        let Codec::BytesToBytes(c) = <Lz4Codec as CodecTraitsV3>::create(&v3).unwrap() else {
            panic!("not a bytes-to-bytes codec");
        };
        let config = c
            .configuration(ZarrVersion::V3, &CodecMetadataOptions::default())
            .unwrap();
        assert_eq!(serde_json::to_value(config).unwrap()["acceleration"], 5);
        let v2: MetadataV2 = serde_json::from_str(r#"{"id": "lz4"}"#).unwrap();
        assert!(<Lz4Codec as CodecTraitsV2>::create(&v2).is_ok());
        let bad: MetadataV2 =
            serde_json::from_str(r#"{"id": "lz4", "acceleration": "x"}"#).unwrap();
        assert!(<Lz4Codec as CodecTraitsV2>::create(&bad).is_err());
        // zarr-python 3 writes an empty configuration; an `id` of lz4 is tolerated
        for cfg in [r#"{}"#, r#"{"id": "lz4", "acceleration": 2}"#] {
            let m: MetadataV3 = serde_json::from_str(&format!(
                r#"{{"name": "numcodecs.lz4", "configuration": {cfg}}}"#
            ))
            .unwrap();
            assert!(<Lz4Codec as CodecTraitsV3>::create(&m).is_ok(), "{cfg}");
        }
        let other: MetadataV3 =
            serde_json::from_str(r#"{"name": "numcodecs.lz4", "configuration": {"id": "zstd"}}"#)
                .unwrap();
        assert!(<Lz4Codec as CodecTraitsV3>::create(&other).is_err());
        let config = Lz4Codec::new(Lz4Configuration::new(4))
            .configuration(ZarrVersion::V2, &CodecMetadataOptions::default())
            .unwrap();
        assert_eq!(
            serde_json::to_value(config).unwrap(),
            serde_json::json!({"acceleration": 4})
        );
    }
}
