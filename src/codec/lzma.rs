//! numcodecs' `lzma` compressor (Zarr v2 `{"id": "lzma", "format": 1, "check": -1,
//! "preset": null, "filters": null}`, Zarr v3 `numcodecs.lzma` as zarr-python 3 writes
//! it), which zarrs 0.23 does not implement: a zarrs bytes→bytes codec registered with
//! zarrs' codec plugins, compressing and decompressing with liblzma itself (the `liblzma`
//! crate, built from its bundled source), as Python's `lzma` module does.
//!
//! Formats: `1` (`.xz`, numcodecs' default) and `2` (`.lzma`, "alone") are read and
//! written; `0` (automatic) is read. `3` (raw LZMA, which needs the filter chain to
//! decode) is refused when the codec is built. `check` (-1 default, 0 none, 1 CRC32,
//! 4 CRC64, 10 SHA-256) and `preset` (0–9, optionally with `PRESET_EXTREME`, 6 when null)
//! are used when writing. A custom `filters` chain is kept as written: data made with it
//! is read (the chain is in the `.xz` stream), but zarrflow does not write with one.
//!
//! A chunk decodes as Python's `lzma.decompress` decodes it: stream after stream while the
//! bytes left start a valid one (other bytes after a complete stream are ignored; a stream
//! cut short is an error). The `.xz` check is verified unless checksums are not (see
//! [`crate::codec::CodecPipeline::with_verify_checksums`]). A decoder never holds more than
//! [`LZMA_MEMLIMIT`] bytes of dictionary and state (the stream's headers are checked
//! against it before liblzma allocates), and never produces more than the chunk's size
//! (see the `bounds` module, which decodes it). liblzma's bundled build has no `.lz`
//! (lzip) decoder, so format 0 reads `.xz` and `.lzma` only.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

use liblzma::stream::{Action, Check, LzmaOptions, Status, Stream};
use serde::{Deserialize, Serialize};
use zarrs::array::codec::api::{
    BytesToBytesCodecTraits, Codec, CodecError, CodecOptions, CodecTraitsV2, CodecTraitsV3,
    RecommendedConcurrency,
};
use zarrs::array::{ArrayBytesRaw, BytesRepresentation};
use zarrs::metadata::v2::MetadataV2;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

/// The most memory liblzma may use to decode one chunk: 256 MiB, four times what
/// `xz -9` / `preset=9` needs (a 64 MiB dictionary).
pub const LZMA_MEMLIMIT: u64 = 256 << 20;

/// Python's `lzma.PRESET_EXTREME`, or-ed into a preset.
const PRESET_EXTREME: u32 = 0x8000_0000;

/// The `lzma` codec's configuration, as numcodecs writes it (every field optional, with
/// numcodecs' defaults).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LzmaConfiguration {
    /// The container: 0 automatic (reading only), 1 `.xz` (the default), 2 `.lzma`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<i64>,
    /// The `.xz` integrity check: -1 default (CRC64), 0 none, 1 CRC32, 4 CRC64, 10 SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<i64>,
    /// The compression preset, 0–9 (or-ed with `0x80000000` for extreme); 6 when null
    /// (`Some(None)`: written as `null`) or absent.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub preset: Option<Option<i64>>,
    /// A custom filter chain (Python's `lzma` filter dictionaries), kept as written
    /// (`Some(Value::Null)` when written as `null`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub filters: Option<serde_json::Value>,
}

/// A field that is present, `null` included (serde reads a `null` option as absent).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// The container format of an lzma stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Auto,
    Xz,
    Alone,
}

/// numcodecs' `lzma` compressor as a zarrs bytes→bytes codec.
#[derive(Debug, Clone)]
pub struct LzmaCodec {
    configuration: LzmaConfiguration,
    format: Format,
    check: Check,
    preset: u32,
    /// Whether a custom filter chain is configured (such a codec only reads).
    custom_filters: bool,
}

register_codec!(LzmaCodec, v3: "numcodecs.lzma", v2: "lzma");

fn invalid(message: String) -> PluginCreateError {
    PluginCreateError::Other(format!("lzma: {message}"))
}

impl LzmaCodec {
    /// The codec of `configuration`, or why it is not supported.
    pub fn new(configuration: LzmaConfiguration) -> Result<Self, PluginCreateError> {
        let format = match configuration.format.unwrap_or(1) {
            0 => Format::Auto,
            1 => Format::Xz,
            2 => Format::Alone,
            3 => {
                return Err(invalid(
                    "format 3 (raw LZMA) is not supported: formats 0, 1 (.xz) and 2 (.lzma)".into(),
                ));
            }
            f => return Err(invalid(format!("unknown format {f}"))),
        };
        let check = match configuration.check.unwrap_or(-1) {
            -1 | 4 => Check::Crc64,
            0 => Check::None,
            1 => Check::Crc32,
            10 => Check::Sha256,
            c => return Err(invalid(format!("unknown check {c}"))),
        };
        if format == Format::Alone && !matches!(configuration.check, None | Some(-1) | Some(0)) {
            return Err(invalid("format 2 (.lzma) has no integrity check".into()));
        }
        let preset = match configuration.preset.flatten() {
            None => 6,
            Some(p) => u32::try_from(p)
                .ok()
                .filter(|p| p & !PRESET_EXTREME <= 9)
                .ok_or_else(|| invalid(format!("preset {p} is not 0 to 9 (or extreme)")))?,
        };
        let custom_filters = configuration.filters.as_ref().is_some_and(|f| !f.is_null());
        Ok(LzmaCodec {
            configuration,
            format,
            check,
            preset,
            custom_filters,
        })
    }

    /// A liblzma decoder of one stream in this codec's format, holding at most
    /// [`LZMA_MEMLIMIT`]; the `.xz` check is verified when `verify`.
    fn decoder(&self, verify: bool) -> Result<Stream, liblzma::stream::Error> {
        let flags = if verify {
            0
        } else {
            liblzma::stream::IGNORE_CHECK
        };
        match self.format {
            Format::Auto => Stream::new_auto_decoder(LZMA_MEMLIMIT, flags),
            Format::Xz => Stream::new_stream_decoder(LZMA_MEMLIMIT, flags),
            Format::Alone => Stream::new_lzma_decoder(LZMA_MEMLIMIT),
        }
    }

    /// The decoded bytes of `encoded`, as Python's `lzma.decompress(encoded, format)`
    /// (numcodecs' decode) makes them: stream after stream while the bytes left start a
    /// valid one (bytes after the last that do not are ignored; a stream cut short is an
    /// error). At most `limit + 1` bytes are produced, so a result longer than `limit`
    /// means the chunk holds more than allowed; the buffer grows fallibly as bytes come.
    pub(crate) fn decode_bounded(
        &self,
        encoded: &[u8],
        limit: u64,
        verify: bool,
    ) -> Result<Vec<u8>, String> {
        let cap = limit.saturating_add(1);
        let mut out: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        let mut pos = 0;
        let mut first = true;
        loop {
            let mut stream = self.decoder(verify).map_err(|e| e.to_string())?;
            let stream_start = out.len();
            loop {
                let room = (cap - out.len() as u64).min(buf.len() as u64) as usize;
                let (in_before, out_before) = (stream.total_in(), stream.total_out());
                let status = match stream.process(&encoded[pos..], &mut buf[..room], Action::Run) {
                    Ok(status) => status,
                    // bytes after a complete stream that are no stream: ignored, as Python
                    Err(_) if !first => {
                        out.truncate(stream_start);
                        return Ok(out);
                    }
                    Err(e) => return Err(format!("invalid stream: {e}")),
                };
                pos += (stream.total_in() - in_before) as usize;
                let produced = (stream.total_out() - out_before) as usize;
                if out.len() + produced > out.capacity() {
                    let want = (out.capacity() as u64 * 2)
                        .max((out.len() + produced) as u64)
                        .min(cap);
                    out.try_reserve_exact(want as usize - out.len())
                        .map_err(|_| format!("cannot allocate {want} bytes"))?;
                }
                out.extend_from_slice(&buf[..produced]);
                if out.len() as u64 > limit {
                    return Ok(out);
                }
                if status == Status::StreamEnd {
                    break;
                }
                if produced == 0 && stream.total_in() == in_before {
                    return Err("the stream ends before its end-of-stream marker".into());
                }
            }
            first = false;
            if pos == encoded.len() {
                return Ok(out);
            }
        }
    }
}

/// The most bytes an lzma stream of `n` input bytes takes: `.xz` stores incompressible
/// 64 KiB chunks with 3 bytes of header, plus at most a few KiB of stream headers, index
/// and check; `.lzma` (LZMA1, no stored chunks) expands incompressible data by well under
/// 1/32.
pub(crate) fn encoded_bound(n: u64) -> u64 {
    n.saturating_add(n / 32).saturating_add(4096)
}

fn create(
    configuration: &serde_json::Map<String, serde_json::Value>,
) -> Result<Codec, PluginCreateError> {
    Ok(Codec::BytesToBytes(Arc::new(LzmaCodec::new(
        super::numcodecs_configuration::<LzmaConfiguration>(configuration, "lzma")?,
    )?)))
}

impl CodecTraitsV3 for LzmaCodec {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        let empty = serde_json::Map::new();
        create(metadata.configuration().map_or(&empty, |c| &**c))
    }
}

impl CodecTraitsV2 for LzmaCodec {
    fn create(metadata: &MetadataV2) -> Result<Codec, PluginCreateError> {
        create(metadata.configuration())
    }
}

whole_chunk_codec!(LzmaCodec, |c| super::plugin::configuration_of(
    &c.configuration
));

fn codec_error(message: String) -> CodecError {
    CodecError::Other(format!("lzma: {message}"))
}

impl BytesToBytesCodecTraits for LzmaCodec {
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
        if self.custom_filters {
            return Err(codec_error(
                "writing with a custom filter chain is not supported (reading is)".into(),
            ));
        }
        let stream = match self.format {
            Format::Xz => Stream::new_easy_encoder(self.preset, self.check),
            Format::Alone => LzmaOptions::new_preset(self.preset)
                .and_then(|options| Stream::new_lzma_encoder(&options)),
            Format::Auto => {
                return Err(codec_error(
                    "format 0 (automatic) only reads: numcodecs cannot write it".into(),
                ));
            }
        }
        .map_err(|e| codec_error(format!("cannot start the encoder: {e}")))?;
        let mut out = Vec::new();
        liblzma::read::XzEncoder::new_stream(&decoded_value[..], stream)
            .read_to_end(&mut out)
            .map_err(|e| codec_error(format!("compression failed: {e}")))?;
        Ok(Cow::Owned(out))
    }

    fn decode<'a>(
        &self,
        encoded_value: ArrayBytesRaw<'a>,
        decoded_representation: &BytesRepresentation,
        options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let limit = decoded_representation.size().unwrap_or(u64::MAX);
        let out = self
            .decode_bounded(&encoded_value, limit, options.validate_checksums())
            .map_err(codec_error)?;
        if out.len() as u64 > limit {
            return Err(codec_error(format!(
                "the stream holds more than the {limit} bytes allowed"
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

    fn codec(json: &str) -> Result<LzmaCodec, PluginCreateError> {
        LzmaCodec::new(serde_json::from_str(json).unwrap())
    }

    fn round_trip(c: &LzmaCodec, data: &[u8]) -> Vec<u8> {
        let enc = c
            .encode(Cow::Borrowed(data), &CodecOptions::default())
            .unwrap()
            .into_owned();
        assert!(enc.len() as u64 <= encoded_bound(data.len() as u64));
        let rep = BytesRepresentation::FixedSize(data.len() as u64);
        let dec = c
            .decode(Cow::Borrowed(&enc), &rep, &CodecOptions::default())
            .unwrap();
        assert_eq!(dec.as_ref(), data);
        enc
    }

    #[test]
    fn xz_and_alone_streams_round_trip_and_auto_reads_both() {
        let data: Vec<u8> = (0..50_000u32).flat_map(|i| (i / 5).to_le_bytes()).collect();
        let xz = round_trip(&codec("{}").unwrap(), &data);
        assert_eq!(&xz[..6], b"\xfd7zXZ\0");
        assert!(xz.len() < data.len() / 10, "{}", xz.len());
        let alone = round_trip(&codec(r#"{"format": 2, "preset": 1}"#).unwrap(), &data);
        assert_eq!(alone[0], 0x5d);
        let auto = codec(r#"{"format": 0}"#).unwrap();
        let rep = BytesRepresentation::FixedSize(data.len() as u64);
        for enc in [&xz, &alone] {
            let dec = auto
                .decode(Cow::Borrowed(enc), &rep, &CodecOptions::default())
                .unwrap();
            assert_eq!(dec.as_ref(), data.as_slice());
        }
        for cfg in [
            r#"{"check": 0}"#,
            r#"{"check": 1, "preset": 9}"#,
            r#"{"check": 10, "preset": 2147483651}"#,
        ] {
            round_trip(&codec(cfg).unwrap(), &data[..1000]);
        }
        // incompressible data stays within the bound
        let noise: Vec<u8> = (0..100_000u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect();
        round_trip(&codec("{}").unwrap(), &noise);
        round_trip(&codec(r#"{"format": 2}"#).unwrap(), &noise);
        round_trip(&codec("{}").unwrap(), &[]);
    }

    #[test]
    fn configurations_outside_numcodecs_are_refused_and_filters_only_read() {
        for bad in [
            r#"{"format": 3}"#,
            r#"{"format": 7}"#,
            r#"{"check": 2}"#,
            r#"{"format": 2, "check": 4}"#,
            r#"{"preset": 10}"#,
            r#"{"preset": -1}"#,
        ] {
            assert!(codec(bad).is_err(), "{bad}");
        }
        let filtered = codec(r#"{"filters": [{"id": 33, "preset": 1}], "preset": null}"#).unwrap();
        let data = vec![5u8; 1000];
        assert!(
            filtered
                .encode(Cow::Borrowed(&data), &CodecOptions::default())
                .is_err()
        );
        let xz = round_trip(&codec("{}").unwrap(), &data);
        let rep = BytesRepresentation::FixedSize(1000);
        assert_eq!(
            filtered
                .decode(Cow::Borrowed(&xz), &rep, &CodecOptions::default())
                .unwrap()
                .len(),
            1000
        );
        let config = codec(r#"{"format": 1, "check": -1, "preset": null, "filters": null}"#)
            .unwrap()
            .configuration(ZarrVersion::V2, &CodecMetadataOptions::default())
            .unwrap();
        assert_eq!(
            serde_json::to_value(config).unwrap(),
            serde_json::json!({"format": 1, "check": -1, "preset": null, "filters": null})
        );
    }

    #[test]
    fn corrupt_truncated_and_oversized_streams_are_errors() {
        let data: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
        let c = codec("{}").unwrap();
        let xz = round_trip(&c, &data);
        let rep = BytesRepresentation::FixedSize(4000);
        let decode = |b: &[u8], rep: &BytesRepresentation| {
            c.decode(Cow::Owned(b.to_vec()), rep, &CodecOptions::default())
                .map(Cow::into_owned)
        };
        assert!(decode(&xz[..xz.len() - 5], &rep).is_err());
        let mut flipped = xz.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x40;
        assert!(decode(&flipped, &rep).is_err());
        assert!(decode(b"not lzma", &rep).is_err());
        // more than the chunk holds
        assert!(decode(&xz, &BytesRepresentation::FixedSize(3999)).is_err());
    }

    /// Python's `lzma.decompress` (numcodecs' decode) on streams back to back: each is
    /// decoded while the bytes left start a valid one; others after a complete stream are
    /// ignored; a stream cut short is an error (results checked with CPython 3.13).
    #[test]
    fn streams_back_to_back_decode_as_python_decodes_them() {
        let enc = |c: &LzmaCodec, data: &[u8]| {
            c.encode(Cow::Borrowed(data), &CodecOptions::default())
                .unwrap()
                .into_owned()
        };
        let (xz, alone, auto) = (
            codec("{}").unwrap(),
            codec(r#"{"format": 2}"#).unwrap(),
            codec(r#"{"format": 0}"#).unwrap(),
        );
        let (abc, xyz) = (b"abc".repeat(100), b"xyz".repeat(10));
        let (a, b) = (enc(&xz, &abc), enc(&xz, &xyz));
        let (la, lb) = (enc(&alone, &abc), enc(&alone, &xyz));
        let both = [abc.clone(), xyz.clone()].concat();
        let decode = |c: &LzmaCodec, bytes: Vec<u8>| c.decode_bounded(&bytes, 1 << 20, true);
        assert_eq!(decode(&xz, [a.clone(), b.clone()].concat()).unwrap(), both);
        assert_eq!(
            decode(&xz, [a.clone(), b"garbage!".repeat(3)].concat()).unwrap(),
            abc
        );
        // xz stream padding then a stream: Python's single-stream decoders stop at the padding
        assert_eq!(
            decode(&xz, [a.clone(), vec![0; 4], b.clone()].concat()).unwrap(),
            abc
        );
        assert_eq!(decode(&alone, [la.clone(), lb].concat()).unwrap(), both);
        assert_eq!(
            decode(&alone, [la.clone(), b"junk".to_vec()].concat()).unwrap(),
            abc
        );
        assert_eq!(
            decode(&auto, [a.clone(), la].concat()).unwrap(),
            [abc.clone(), abc.clone()].concat()
        );
        for cut in [
            a[..a.len() - 5].to_vec(),
            [a.clone(), b[..b.len() - 5].to_vec()].concat(),
        ] {
            let e = decode(&xz, cut).unwrap_err();
            assert!(e.contains("end-of-stream"), "{e}");
        }
        assert!(decode(&xz, Vec::new()).is_err());
        // at most one byte more than the limit is produced
        assert_eq!(xz.decode_bounded(&a, 10, true).unwrap().len(), 11);
    }

    /// A corrupted `.xz` check is an error when checksums are verified, and ignored (the
    /// data as stored) when they are not, as for zarrs' checksum codecs.
    #[test]
    fn the_xz_check_follows_checksum_verification() {
        let data = vec![7u8; 5000];
        let c = codec(r#"{"check": 4}"#).unwrap();
        let mut enc = c
            .encode(Cow::Borrowed(&data), &CodecOptions::default())
            .unwrap()
            .into_owned();
        // the CRC64 sits just before the index and footer; flip its first byte: find it
        // as the 8 bytes after the block's data (the block header and data come first)
        let crc = crc64_offset(&enc);
        enc[crc] ^= 1;
        let e = c.decode_bounded(&enc, 5000, true).unwrap_err();
        assert!(e.contains("invalid stream"), "{e}");
        assert_eq!(c.decode_bounded(&enc, 5000, false).unwrap(), data);
    }

    /// Where a one-block `.xz` stream's CRC64 starts: before the index (which starts with a
    /// zero byte) and the 12-byte footer, whose backward size gives the index's length.
    fn crc64_offset(xz: &[u8]) -> usize {
        let footer = &xz[xz.len() - 12..];
        let backward = u32::from_le_bytes(footer[4..8].try_into().unwrap()) as usize;
        let index_size = (backward + 1) * 4;
        xz.len() - 12 - index_size - 8
    }

    #[test]
    fn a_dictionary_beyond_the_memory_limit_is_refused_before_allocation() {
        // an .lzma header declaring a 1.5 GiB dictionary (properties 0x5d, then the size)
        let mut alone = vec![0x5d];
        alone.extend_from_slice(&(3u32 << 29).to_le_bytes());
        alone.extend_from_slice(&u64::MAX.to_le_bytes());
        alone.extend_from_slice(&[0; 16]);
        let c = codec(r#"{"format": 2}"#).unwrap();
        let e = c
            .decode(
                Cow::Owned(alone),
                &BytesRepresentation::FixedSize(10),
                &CodecOptions::default(),
            )
            .unwrap_err();
        assert!(e.to_string().contains("memory limit"), "{e}");
    }
}
