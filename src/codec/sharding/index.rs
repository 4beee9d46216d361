//! The decoded shard index: `(offset, nbytes)` per inner chunk.

use crate::codec::CodecError;
use crate::codec::block::{num_elements, ravel};
use std::ops::Range;

/// The sentinel marking an empty inner chunk (both offset and nbytes).
pub const EMPTY_SENTINEL: u64 = u64::MAX;

/// Largest number of inner chunks per shard accepted (TensorStore's `kMaxNumEntries`).
pub const MAX_SHARD_ENTRIES: u64 = 1 << 30;

/// A decoded shard index: `(offset, nbytes)` per inner chunk, C order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardIndex {
    pub(super) chunks_per_shard: Vec<u64>,
    pub(super) entries: Vec<u64>,
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

    /// [`Self::new_empty`], allocated fallibly ([`CodecError::OutOfMemory`] naming `key`):
    /// an index of [`MAX_SHARD_ENTRIES`] entries takes 16 GiB.
    pub fn try_new_empty(chunks_per_shard: &[u64], key: &str) -> Result<Self, CodecError> {
        let n = num_elements(chunks_per_shard).saturating_mul(2);
        let bytes = n.saturating_mul(8);
        let oom = || CodecError::OutOfMemory {
            key: key.to_string(),
            bytes,
        };
        let n = usize::try_from(n).map_err(|_| oom())?;
        let mut entries = Vec::new();
        entries.try_reserve_exact(n).map_err(|_| oom())?;
        entries.resize(n, EMPTY_SENTINEL);
        Ok(ShardIndex {
            chunks_per_shard: chunks_per_shard.to_vec(),
            entries,
        })
    }

    /// Build from raw `(offset, nbytes)` pairs (no validation; see [`ShardIndexCodec::decode`](super::ShardIndexCodec::decode)).
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
