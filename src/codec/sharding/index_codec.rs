//! The shard index codec: encodes and decodes (with validation) the index of one shard
//! shape through its codec chain.

use super::{EMPTY_SENTINEL, IndexLocation, MAX_SHARD_ENTRIES, ShardIndex};
use crate::codec::block::{num_elements, unravel};
use crate::codec::{CodecError, codec_err, nz_shape};
use std::borrow::Cow;
use std::ops::Range;
use zarrs::array::{
    ArrayBytes, ArrayToBytesCodecTraits, BytesRepresentation, CodecChain, CodecOptions, DataType,
    FillValue,
};
use zarrs::metadata::v3::MetadataV3;

/// The shard index codec chain of one sharding configuration and shard shape.
#[derive(Debug, Clone)]
pub struct ShardIndexCodec {
    chunks_per_shard: Vec<u64>,
    chain: CodecChain,
    encoded_size: u64,
    location: IndexLocation,
    verify_checksums: bool,
    /// Entries longer than this are refused (the most an inner chunk's encoding can take).
    max_entry: Option<u64>,
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
            max_entry: None,
        })
    }

    /// Refuses, on decode, entries of more than `max` bytes
    /// ([`CodecError::ShardEntryTooLarge`]); `None` (the default) checks no length.
    /// [`Sharding::index_codec`](super::Sharding::index_codec) sets the most bytes an inner
    /// chunk's encoding can take, so that no read copies an entry larger than that.
    pub fn with_max_entry_bytes(mut self, max: Option<u64>) -> Self {
        self.max_entry = max;
        self
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
        // the entries as bytes, borrowed (no copy of the index before it is encoded)
        let raw: &[u8] = bytemuck::cast_slice(&index.entries);
        let enc = self
            .chain
            .encode(
                ArrayBytes::new_flen(Cow::Borrowed(raw)),
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
    /// `i64::MAX`, entries longer than an inner chunk's encoding can be (when set, see
    /// [`Self::with_max_entry_bytes`]), entries ending past the object and entries sharing
    /// bytes.
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
            if let Some(max) = self.max_entry
                && nbytes > max
            {
                return Err(CodecError::ShardEntryTooLarge {
                    key: key.to_string(),
                    chunk: chunk(),
                    nbytes,
                    max,
                });
            }
        }
        self.check_disjoint(&entries, shard_size, key)?;
        Ok(ShardIndex {
            chunks_per_shard: self.chunks_per_shard.clone(),
            entries,
        })
    }

    /// Refuses entries that share bytes with each other or with the index (validated
    /// entries: each lies inside the shard). Sorting the spans once costs `O(n log n)` for
    /// `n` inner chunks, done once per index read (then cached); the sort orders 4-byte
    /// entry numbers (at most [`MAX_SHARD_ENTRIES`] entries), not
    /// copies of the spans.
    fn check_disjoint(
        &self,
        entries: &[u64],
        shard_size: u64,
        key: &str,
    ) -> Result<(), CodecError> {
        const INDEX: u32 = u32::MAX;
        let index = self.index_range(shard_size);
        let span = |i: u32| -> (u64, u64) {
            match (i, &index) {
                (INDEX, Some(r)) => (r.start, r.end),
                _ => {
                    let (o, n) = (entries[2 * i as usize], entries[2 * i as usize + 1]);
                    (o, o + n)
                }
            }
        };
        let n = entries.len() / 2;
        if u32::try_from(n).is_err() {
            return Err(CodecError::InvalidConfiguration {
                field: format!("shard index of {key}"),
                reason: format!("{n} entries, more than a shard may hold"),
            });
        }
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&i| {
                let (o, len) = (entries[2 * i as usize], entries[2 * i as usize + 1]);
                o != EMPTY_SENTINEL && len > 0
            })
            .collect();
        if index.is_some() {
            order.push(INDEX);
        }
        order.sort_unstable_by_key(|&i| {
            let (start, end) = span(i);
            (start, end, i)
        });
        let coords = |i: u32| (i != INDEX).then(|| unravel(u64::from(i), &self.chunks_per_shard));
        for w in order.windows(2) {
            let ((_, end), (start, _)) = (span(w[0]), span(w[1]));
            if start < end {
                let (chunk, other) = if w[0] == INDEX {
                    (w[1], w[0])
                } else {
                    (w[0], w[1])
                };
                return Err(CodecError::ShardEntriesOverlap {
                    key: key.to_string(),
                    chunk: coords(chunk).unwrap_or_default(),
                    other: coords(other),
                });
            }
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(location: IndexLocation) -> ShardIndexCodec {
        let bytes = MetadataV3::new_with_configuration(
            "bytes",
            serde_json::Map::from_iter([("endian".to_string(), serde_json::json!("little"))]),
        );
        ShardIndexCodec::new(&[bytes], &[3], location, "codecs[0]").unwrap()
    }

    fn index_of(entries: &[(u64, u64)]) -> ShardIndex {
        let mut flat = Vec::new();
        for &(o, n) in entries {
            flat.extend([o, n]);
        }
        ShardIndex::from_entries(&[3], flat).unwrap()
    }

    #[test]
    fn overlapping_or_aliased_entries_are_refused() {
        let end = codec(IndexLocation::End);
        let size = 100 + end.encoded_size();
        let ok = index_of(&[(0, 10), (10, 10), (EMPTY_SENTINEL, EMPTY_SENTINEL)]);
        let bytes = end.encode(&ok).unwrap();
        assert!(end.decode(&bytes, size, "s").is_ok());
        // two entries aliasing one body (a rewrite would copy it twice)
        let aliased = end.encode(&index_of(&[(0, 10), (0, 10), (20, 5)])).unwrap();
        let e = end.decode(&aliased, size, "s").unwrap_err();
        assert!(
            matches!(&e, CodecError::ShardEntriesOverlap { other: Some(_), .. }),
            "{e}"
        );
        // partial overlap
        let partial = end.encode(&index_of(&[(0, 10), (5, 10), (30, 1)])).unwrap();
        assert!(end.decode(&partial, size, "s").is_err());
        // an entry inside the index itself (at the end of the shard)
        let into_index = end
            .encode(&index_of(&[(0, 10), (size - 8, 8), (20, 1)]))
            .unwrap();
        let e = end.decode(&into_index, size, "s").unwrap_err();
        assert!(
            matches!(&e, CodecError::ShardEntriesOverlap { other: None, .. }),
            "{e}"
        );
        // the same with the index at the start
        let start = codec(IndexLocation::Start);
        let first = start
            .encode(&index_of(&[(0, 4), (60, 1), (70, 1)]))
            .unwrap();
        assert!(start.decode(&first, size, "s").is_err());
        // zero-length entries never overlap anything
        let zero = end.encode(&index_of(&[(5, 0), (5, 0), (0, 10)])).unwrap();
        assert!(end.decode(&zero, size, "s").is_ok());
    }
}
