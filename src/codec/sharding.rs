//! zarrflow's own `sharding_indexed` layer: configuration, shard index encode/decode with
//! validation, and whole-shard encode/decode. zarrs supplies only the codec chains.

use super::block::{extract_block, insert_block, num_elements, ravel, unravel};
use super::{CodecError, CodecPipeline, codec_err, nz_shape};
use std::borrow::Cow;
use std::ops::Range;
use zarrs::array::{
    ArrayBytes, ArrayToBytesCodecTraits, BytesRepresentation, CodecChain, CodecOptions, DataType,
    FillValue,
};
use zarrs::metadata::v3::MetadataV3;

/// The sentinel marking an empty inner chunk (both offset and nbytes).
pub const EMPTY_SENTINEL: u64 = u64::MAX;

/// Largest number of inner chunks per shard accepted (TensorStore's `kMaxNumEntries`).
pub const MAX_SHARD_ENTRIES: u64 = 1 << 30;

/// Where the index sits in a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexLocation {
    /// Before the inner chunks.
    Start,
    /// After the inner chunks (the default).
    #[default]
    End,
}

/// A parsed `sharding_indexed` configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardingConfig {
    /// Inner chunk shape.
    pub chunk_shape: Vec<u64>,
    /// Codecs of the inner chunks.
    pub codecs: Vec<MetadataV3>,
    /// Codecs of the index.
    pub index_codecs: Vec<MetadataV3>,
    /// Index location.
    pub index_location: IndexLocation,
}

impl ShardingConfig {
    /// Parse the `configuration` of a `sharding_indexed` codec; `field` names it in errors
    /// (e.g. `codecs[0]`).
    pub fn from_metadata(meta: &MetadataV3, field: &str) -> Result<Self, CodecError> {
        let invalid = |sub: &str, reason: String| CodecError::InvalidConfiguration {
            field: format!("{field}.configuration{sub}"),
            reason,
        };
        let cfg = meta
            .configuration()
            .ok_or_else(|| invalid("", "sharding_indexed requires a configuration".into()))?;
        for k in cfg.keys() {
            if !matches!(
                k.as_str(),
                "chunk_shape" | "codecs" | "index_codecs" | "index_location"
            ) {
                return Err(invalid(&format!(".{k}"), "unknown field".into()));
            }
        }
        let chunk_shape: Vec<u64> = cfg
            .get("chunk_shape")
            .ok_or_else(|| invalid(".chunk_shape", "missing".into()))
            .and_then(|v| {
                serde_json::from_value(v.clone())
                    .map_err(|e| invalid(".chunk_shape", e.to_string()))
            })?;
        if chunk_shape.contains(&0) {
            return Err(invalid(
                ".chunk_shape",
                "inner chunk sizes must be >= 1".into(),
            ));
        }
        let list = |name: &str| -> Result<Vec<MetadataV3>, CodecError> {
            let v = cfg
                .get(name)
                .ok_or_else(|| invalid(&format!(".{name}"), "missing".into()))?;
            let l: Vec<MetadataV3> = serde_json::from_value(v.clone())
                .map_err(|e| invalid(&format!(".{name}"), e.to_string()))?;
            if l.is_empty() {
                return Err(invalid(&format!(".{name}"), "must not be empty".into()));
            }
            Ok(l)
        };
        let codecs = list("codecs")?;
        let index_codecs = list("index_codecs")?;
        let index_location = match cfg.get("index_location") {
            None => IndexLocation::End,
            Some(v) => match v.as_str() {
                Some("end") => IndexLocation::End,
                Some("start") => IndexLocation::Start,
                _ => {
                    return Err(invalid(
                        ".index_location",
                        format!("must be \"start\" or \"end\", got {v}"),
                    ));
                }
            },
        };
        Ok(ShardingConfig {
            chunk_shape,
            codecs,
            index_codecs,
            index_location,
        })
    }

    /// The canonical metadata of this configuration.
    pub fn to_metadata(&self) -> MetadataV3 {
        let mut cfg = serde_json::Map::new();
        cfg.insert("chunk_shape".into(), serde_json::json!(self.chunk_shape));
        cfg.insert("codecs".into(), serde_json::json!(self.codecs));
        cfg.insert("index_codecs".into(), serde_json::json!(self.index_codecs));
        cfg.insert(
            "index_location".into(),
            serde_json::json!(match self.index_location {
                IndexLocation::Start => "start",
                IndexLocation::End => "end",
            }),
        );
        MetadataV3::new_with_configuration("sharding_indexed", cfg)
    }
}

/// A decoded shard index: `(offset, nbytes)` per inner chunk, C order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardIndex {
    chunks_per_shard: Vec<u64>,
    entries: Vec<u64>,
}

impl ShardIndex {
    /// An index with every inner chunk empty.
    pub fn new_empty(chunks_per_shard: &[u64]) -> Self {
        let n = num_elements(chunks_per_shard) as usize;
        ShardIndex {
            chunks_per_shard: chunks_per_shard.to_vec(),
            entries: vec![EMPTY_SENTINEL; 2 * n],
        }
    }

    /// Build from raw `(offset, nbytes)` pairs (no validation; see [`ShardIndexCodec::decode`]).
    pub fn from_entries(chunks_per_shard: &[u64], entries: Vec<u64>) -> Option<Self> {
        (entries.len() as u64 == 2 * num_elements(chunks_per_shard)).then(|| ShardIndex {
            chunks_per_shard: chunks_per_shard.to_vec(),
            entries,
        })
    }

    /// Inner chunks per shard (the inner grid shape).
    pub fn chunks_per_shard(&self) -> &[u64] {
        &self.chunks_per_shard
    }

    /// Number of inner chunks.
    pub fn len(&self) -> usize {
        self.entries.len() / 2
    }

    /// True when there are no inner chunks.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The raw `(offset, nbytes)` pairs, flattened.
    pub fn entries(&self) -> &[u64] {
        &self.entries
    }

    /// Byte range of inner chunk `linear` (C order), `None` when empty.
    pub fn get(&self, linear: usize) -> Option<Range<u64>> {
        let (o, n) = (
            *self.entries.get(2 * linear)?,
            *self.entries.get(2 * linear + 1)?,
        );
        if o == EMPTY_SENTINEL && n == EMPTY_SENTINEL {
            None
        } else {
            Some(o..o.saturating_add(n))
        }
    }

    /// Byte range of the inner chunk at `coords`.
    pub fn get_coords(&self, coords: &[u64]) -> Option<Range<u64>> {
        if coords.len() != self.chunks_per_shard.len()
            || coords
                .iter()
                .zip(&self.chunks_per_shard)
                .any(|(c, s)| c >= s)
        {
            return None;
        }
        self.get(ravel(coords, &self.chunks_per_shard) as usize)
    }

    /// Set inner chunk `linear` to `range` (or empty).
    pub fn set(&mut self, linear: usize, range: Option<Range<u64>>) {
        let (o, n) = match range {
            Some(r) => (r.start, r.end - r.start),
            None => (EMPTY_SENTINEL, EMPTY_SENTINEL),
        };
        if 2 * linear + 1 < self.entries.len() {
            self.entries[2 * linear] = o;
            self.entries[2 * linear + 1] = n;
        }
    }

    /// True when every inner chunk is empty.
    pub fn all_empty(&self) -> bool {
        self.entries.iter().all(|&v| v == EMPTY_SENTINEL)
    }
}

/// The shard index codec chain of one sharding configuration and shard shape.
#[derive(Debug, Clone)]
pub struct ShardIndexCodec {
    chunks_per_shard: Vec<u64>,
    chain: CodecChain,
    encoded_size: u64,
    location: IndexLocation,
    verify_checksums: bool,
}

fn index_dt() -> (DataType, FillValue) {
    (zarrs::array::data_type::uint64(), FillValue::from(u64::MAX))
}

impl ShardIndexCodec {
    /// Build the index codec; computes the fixed encoded index size from the chain.
    pub fn new(
        index_codecs: &[MetadataV3],
        chunks_per_shard: &[u64],
        location: IndexLocation,
        field: &str,
    ) -> Result<Self, CodecError> {
        let count = num_elements(chunks_per_shard);
        if count > MAX_SHARD_ENTRIES {
            return Err(CodecError::TooManyShardEntries {
                field: field.to_string(),
                count,
                max: MAX_SHARD_ENTRIES,
            });
        }
        let chain =
            CodecChain::from_metadata(index_codecs).map_err(|e| CodecError::UnsupportedCodec {
                field: format!("{field}.configuration.index_codecs"),
                reason: e.to_string(),
            })?;
        let mut shape = chunks_per_shard.to_vec();
        shape.push(2);
        let (dt, fv) = index_dt();
        let not_fixed = |reason: String| CodecError::InvalidConfiguration {
            field: format!("{field}.configuration.index_codecs"),
            reason,
        };
        let shape_nz = nz_shape(&shape).ok_or_else(|| not_fixed("empty shard index".into()))?;
        let rep = chain
            .encoded_representation(&shape_nz, &dt, &fv)
            .map_err(|e| not_fixed(e.to_string()))?;
        let BytesRepresentation::FixedSize(encoded_size) = rep else {
            return Err(not_fixed(
                "index codecs must have a fixed encoded size (no compression)".into(),
            ));
        };
        Ok(ShardIndexCodec {
            chunks_per_shard: chunks_per_shard.to_vec(),
            chain,
            encoded_size,
            location,
            verify_checksums: true,
        })
    }

    /// Turns verification of the index checksum on decode on or off (on by default).
    pub fn with_verify_checksums(mut self, on: bool) -> Self {
        self.verify_checksums = on;
        self
    }

    /// Encoded index size in bytes (e.g. 68 for 2×2 with `bytes` + `crc32c`).
    pub fn encoded_size(&self) -> u64 {
        self.encoded_size
    }

    /// Index location.
    pub fn location(&self) -> IndexLocation {
        self.location
    }

    /// Inner chunks per shard.
    pub fn chunks_per_shard(&self) -> &[u64] {
        &self.chunks_per_shard
    }

    /// Where the index lies in a shard of `shard_size` bytes (`None` when too short).
    pub fn index_range(&self, shard_size: u64) -> Option<Range<u64>> {
        if shard_size < self.encoded_size {
            return None;
        }
        Some(match self.location {
            IndexLocation::Start => 0..self.encoded_size,
            IndexLocation::End => shard_size - self.encoded_size..shard_size,
        })
    }

    fn index_shape(&self) -> Vec<std::num::NonZeroU64> {
        let mut shape = self.chunks_per_shard.clone();
        shape.push(2);
        nz_shape(&shape).unwrap_or_default()
    }

    /// Encode an index (entries must hold absolute offsets).
    pub fn encode(&self, index: &ShardIndex) -> Result<Vec<u8>, CodecError> {
        let (dt, fv) = index_dt();
        let raw: Vec<u8> = index.entries.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let enc = self
            .chain
            .encode(
                ArrayBytes::new_flen(Cow::Owned(raw)),
                &self.index_shape(),
                &dt,
                &fv,
                &CodecOptions::default(),
            )
            .map_err(|e| codec_err("encode", "shard index", e))?;
        Ok(enc.into_owned())
    }

    /// Decode and validate an index. `index_bytes` are the encoded index bytes (exactly
    /// [`Self::encoded_size`], e.g. the result of a suffix read), `shard_size` the size of the
    /// whole shard object, `key` its store key (for errors).
    ///
    /// Checks, each a typed error naming `key`: object shorter than the index, checksum (through
    /// the index chain), a single sentinel half, `offset + nbytes` overflowing or above
    /// `i64::MAX`, and entries ending past the object.
    pub fn decode(
        &self,
        index_bytes: &[u8],
        shard_size: u64,
        key: &str,
    ) -> Result<ShardIndex, CodecError> {
        if shard_size < self.encoded_size || (index_bytes.len() as u64) < self.encoded_size {
            return Err(CodecError::ShardTooShort {
                key: key.to_string(),
                size: shard_size.min(index_bytes.len() as u64),
                index_size: self.encoded_size,
            });
        }
        let index_bytes = &index_bytes[..self.encoded_size as usize];
        let (dt, fv) = index_dt();
        let decoded = self
            .chain
            .decode(
                Cow::Borrowed(index_bytes),
                &self.index_shape(),
                &dt,
                &fv,
                &CodecOptions::default().with_validate_checksums(self.verify_checksums),
            )
            .map_err(|e| match e {
                zarrs::array::CodecError::InvalidChecksum => CodecError::ShardIndexChecksum {
                    key: key.to_string(),
                },
                e => codec_err("decode", &format!("shard index of {key}"), e),
            })?
            .into_fixed()
            .map_err(|e| codec_err("decode", &format!("shard index of {key}"), e.into()))?;
        let n = num_elements(&self.chunks_per_shard) as usize;
        if decoded.len() != n * 16 {
            return Err(CodecError::WrongSize {
                key: format!("shard index of {key}"),
                expected: n as u64 * 16,
                got: decoded.len() as u64,
            });
        }
        let mut entries = Vec::with_capacity(2 * n);
        for c in decoded.chunks_exact(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            entries.push(u64::from_ne_bytes(b));
        }
        for i in 0..n {
            let (offset, nbytes) = (entries[2 * i], entries[2 * i + 1]);
            let chunk = || unravel(i as u64, &self.chunks_per_shard);
            match (offset == EMPTY_SENTINEL, nbytes == EMPTY_SENTINEL) {
                (true, true) => continue,
                (true, false) | (false, true) => {
                    return Err(CodecError::ShardEntrySingleSentinel {
                        key: key.to_string(),
                        chunk: chunk(),
                        offset,
                        nbytes,
                    });
                }
                (false, false) => {}
            }
            let end = match offset.checked_add(nbytes) {
                Some(end) if end <= i64::MAX as u64 => end,
                _ => {
                    return Err(CodecError::ShardEntryOverflow {
                        key: key.to_string(),
                        chunk: chunk(),
                        offset,
                        nbytes,
                    });
                }
            };
            if end > shard_size {
                return Err(CodecError::ShardEntryOutOfRange {
                    key: key.to_string(),
                    chunk: chunk(),
                    offset,
                    nbytes,
                    shard_size,
                });
            }
        }
        Ok(ShardIndex {
            chunks_per_shard: self.chunks_per_shard.clone(),
            entries,
        })
    }

    /// Decode the index of a whole shard object held in memory.
    pub fn decode_from_shard(&self, shard: &[u8], key: &str) -> Result<ShardIndex, CodecError> {
        let size = shard.len() as u64;
        let range = self
            .index_range(size)
            .ok_or_else(|| CodecError::ShardTooShort {
                key: key.to_string(),
                size,
                index_size: self.encoded_size,
            })?;
        self.decode(&shard[range.start as usize..range.end as usize], size, key)
    }
}

/// The sharding layer of one pipeline: configuration, inner pipeline and index codec.
#[derive(Debug, Clone)]
pub struct Sharding {
    config: ShardingConfig,
    inner: CodecPipeline,
    field: String,
}

impl Sharding {
    /// Build from a parsed configuration (`field` names the codec in errors).
    pub fn new(config: ShardingConfig, field: &str) -> Result<Self, CodecError> {
        let inner = CodecPipeline::from_metadata_at(
            &config.codecs,
            &format!("{field}.configuration.codecs"),
        )?;
        Ok(Sharding {
            config,
            inner,
            field: field.to_string(),
        })
    }

    /// Turns checksum verification on decode on or off for the index and the inner chunks
    /// (recursively); on by default.
    pub fn with_verify_checksums(mut self, on: bool) -> Self {
        self.inner = self.inner.with_verify_checksums(on);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ShardingConfig {
        &self.config
    }

    /// The pipeline of the inner chunks (may itself be sharded).
    pub fn inner(&self) -> &CodecPipeline {
        &self.inner
    }

    /// Inner chunks per shard for a shard of `shard_shape` (in the sharding codec's frame, i.e.
    /// after array→array codecs); errors when not divisible or when ranks differ.
    pub fn chunks_per_shard(&self, shard_shape: &[u64]) -> Result<Vec<u64>, CodecError> {
        let cs = &self.config.chunk_shape;
        let field = format!("{}.configuration.chunk_shape", self.field);
        if cs.len() != shard_shape.len() {
            return Err(CodecError::InvalidConfiguration {
                field,
                reason: format!(
                    "rank {} does not match the shard rank {} (shard shape {shard_shape:?})",
                    cs.len(),
                    shard_shape.len()
                ),
            });
        }
        if shard_shape.iter().zip(cs).any(|(s, c)| s % c != 0) {
            return Err(CodecError::ShardShapeNotDivisible {
                field,
                shard_shape: shard_shape.to_vec(),
                chunk_shape: cs.clone(),
            });
        }
        Ok(shard_shape.iter().zip(cs).map(|(s, c)| s / c).collect())
    }

    /// The index codec for a shard of `shard_shape`.
    pub fn index_codec(&self, shard_shape: &[u64]) -> Result<ShardIndexCodec, CodecError> {
        let cps = self.chunks_per_shard(shard_shape)?;
        Ok(ShardIndexCodec::new(
            &self.config.index_codecs,
            &cps,
            self.config.index_location,
            &self.field,
        )?
        .with_verify_checksums(self.inner.verify_checksums()))
    }

    /// Encode a whole shard (decoded C-order native-endian bytes of `shard_shape`).
    ///
    /// Inner chunks equal to the fill value are omitted (sentinel entries); the others are
    /// written compactly in C order. Returns `None` when every inner chunk is empty: the shard
    /// should then be deleted rather than stored.
    pub fn encode_shard(
        &self,
        decoded: &[u8],
        shard_shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let elem = fixed_size(data_type, "sharding")?;
        check_size(
            "shard",
            decoded.len(),
            checked_bytes(shard_shape, elem, "shard")?,
        )?;
        let cps = self.chunks_per_shard(shard_shape)?;
        let cs = &self.config.chunk_shape;
        let mut encoded: Vec<Option<Vec<u8>>> = Vec::new();
        for i in 0..num_elements(&cps) {
            let coords = unravel(i, &cps);
            let start: Vec<u64> = coords.iter().zip(cs).map(|(c, s)| c * s).collect();
            let chunk = extract_block(decoded, shard_shape, &start, cs, elem);
            if fill_value.equals_all(&chunk) {
                encoded.push(None);
            } else {
                encoded.push(Some(self.inner.encode(&chunk, cs, data_type, fill_value)?));
            }
        }
        let refs: Vec<Option<&[u8]>> = encoded.iter().map(Option::as_deref).collect();
        self.assemble_shard(shard_shape, &refs)
    }

    /// Assemble a shard from already-encoded inner chunks (C order over the inner grid,
    /// `None` = empty), e.g. for read-modify-write, where untouched inner chunks are copied
    /// byte for byte. Chunks are laid out compactly in C order; returns `None` when every
    /// inner chunk is empty (delete the shard instead).
    pub fn assemble_shard(
        &self,
        shard_shape: &[u64],
        encoded: &[Option<&[u8]>],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let index_codec = self.index_codec(shard_shape)?;
        let cps = index_codec.chunks_per_shard().to_vec();
        check_size(
            "encoded inner chunk list",
            encoded.len(),
            num_elements(&cps) as usize,
        )?;
        let mut index = ShardIndex::new_empty(&cps);
        let base = match index_codec.location() {
            IndexLocation::Start => index_codec.encoded_size(),
            IndexLocation::End => 0,
        };
        let mut body: Vec<u8> = Vec::new();
        for (i, enc) in encoded.iter().enumerate() {
            let Some(enc) = enc else { continue };
            let off = base + body.len() as u64;
            index.set(i, Some(off..off + enc.len() as u64));
            body.extend_from_slice(enc);
        }
        if index.all_empty() {
            return Ok(None);
        }
        let enc_index = index_codec.encode(&index)?;
        Ok(Some(match index_codec.location() {
            IndexLocation::Start => [enc_index, body].concat(),
            IndexLocation::End => [body, enc_index].concat(),
        }))
    }

    /// Encode a shard, writing an index-only shard when every inner chunk is empty.
    pub fn encode_shard_always(
        &self,
        decoded: &[u8],
        shard_shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Vec<u8>, CodecError> {
        match self.encode_shard(decoded, shard_shape, data_type, fill_value)? {
            Some(v) => Ok(v),
            None => {
                let codec = self.index_codec(shard_shape)?;
                codec.encode(&ShardIndex::new_empty(codec.chunks_per_shard()))
            }
        }
    }

    /// Decode a whole shard object into C-order native-endian bytes of `shard_shape`; missing
    /// inner chunks read as the fill value. `key` names the shard in errors.
    pub fn decode_shard(
        &self,
        shard: &[u8],
        shard_shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
    ) -> Result<Vec<u8>, CodecError> {
        let elem = fixed_size(data_type, "sharding")?;
        checked_bytes(shard_shape, elem, key)?;
        let index_codec = self.index_codec(shard_shape)?;
        let index = index_codec.decode_from_shard(shard, key)?;
        let cs = &self.config.chunk_shape;
        let mut out = fill_bytes(fill_value, num_elements(shard_shape) as usize, elem);
        let cps = index.chunks_per_shard().to_vec();
        for i in 0..index.len() {
            let Some(r) = index.get(i) else { continue };
            let coords = unravel(i as u64, &cps);
            let chunk_key = format!("{key} inner chunk {coords:?}");
            let bytes = &shard[r.start as usize..r.end as usize];
            let dec = self
                .inner
                .decode(bytes, cs, data_type, fill_value, &chunk_key)?;
            let start: Vec<u64> = coords.iter().zip(cs).map(|(c, s)| c * s).collect();
            insert_block(&mut out, shard_shape, &start, &dec, cs, elem);
        }
        Ok(out)
    }
}

pub(crate) fn fixed_size(data_type: &DataType, context: &str) -> Result<usize, CodecError> {
    data_type
        .fixed_size()
        .ok_or_else(|| CodecError::UnsupportedDataType {
            data_type: data_type.to_string(),
            context: format!("{context} (variable-length types are not supported here)"),
        })
}

/// Bytes of a C-order buffer of `shape`, erroring instead of overflowing.
pub(crate) fn checked_bytes(shape: &[u64], elem: usize, key: &str) -> Result<usize, CodecError> {
    shape
        .iter()
        .try_fold(elem as u64, |acc, &d| acc.checked_mul(d))
        .filter(|&b| b <= isize::MAX as u64)
        .map(|b| b as usize)
        .ok_or_else(|| CodecError::InvalidConfiguration {
            field: key.to_string(),
            reason: format!(
                "a chunk of shape {shape:?} with {elem}-byte elements does not fit in memory"
            ),
        })
}

pub(crate) fn check_size(key: &str, got: usize, expected: usize) -> Result<(), CodecError> {
    if got != expected {
        return Err(CodecError::WrongSize {
            key: key.to_string(),
            expected: expected as u64,
            got: got as u64,
        });
    }
    Ok(())
}

/// `n` copies of the fill value.
pub fn fill_bytes(fill_value: &FillValue, n: usize, elem: usize) -> Vec<u8> {
    let fv = fill_value.as_ne_bytes();
    if fv.len() != elem || fv.iter().all(|&b| b == 0) {
        return vec![0u8; n * elem];
    }
    let mut out = Vec::with_capacity(n * elem);
    for _ in 0..n {
        out.extend_from_slice(fv);
    }
    out
}
