//! A byte-bounded cache of decoded shard indexes, and the one function that reads a shard
//! index from the store for the execution layer.

use std::sync::Arc;

use moka::sync::Cache;

use crate::codec::{ShardIndex, ShardIndexCodec};
use crate::store::{ObjectVersion, Store, StoreKey};

use super::error::Result;

/// A decoded index, the version of the shard it was read from and that version's size.
#[derive(Clone, Debug)]
pub(crate) struct Cached {
    pub(crate) index: Arc<ShardIndex>,
    pub(crate) version: ObjectVersion,
    /// Size of the shard object in bytes.
    pub(crate) shard_size: u64,
}

/// Decoded shard indexes by shard key, bounded by their size in bytes (16 bytes an entry).
/// Each index keeps the version of its shard: inner chunks located with it are read
/// conditionally on that version, so a stale entry is detected, never used for data.
#[derive(Clone)]
pub(crate) struct IndexCache {
    cache: Cache<String, Cached>,
}

impl std::fmt::Debug for IndexCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexCache")
            .field("entries", &self.cache.entry_count())
            .field("bytes", &self.cache.weighted_size())
            .finish()
    }
}

impl IndexCache {
    /// A cache holding at most `max_bytes` of index entries.
    pub(crate) fn new(max_bytes: u64) -> Self {
        IndexCache {
            cache: Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|k: &String, v: &Cached| {
                    let bytes = (v.index.entries().len() * 8 + k.len()) as u64;
                    u32::try_from(bytes).unwrap_or(u32::MAX)
                })
                .build(),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<Cached> {
        self.cache.get(key)
    }

    pub(crate) fn insert(&self, key: &str, entry: Cached) {
        self.cache.insert(key.to_string(), entry);
    }

    pub(crate) fn invalidate(&self, key: &str) {
        self.cache.invalidate(key);
    }
}

/// The one place the execution layer reads, fills and invalidates its shard-index cache
/// (a no-op when the cache is off).
impl super::Shared {
    /// The cached index of the shard at `key`, with the shard version it was read from.
    pub(crate) fn cached_index(&self, key: &str) -> Option<Cached> {
        self.index_cache.as_ref().and_then(|c| c.get(key))
    }

    /// Remembers the index of the shard at `key` (with the version and size it was read
    /// from).
    pub(crate) fn remember_index(&self, key: &str, entry: Cached) {
        if let Some(cache) = &self.index_cache {
            cache.insert(key, entry);
        }
    }

    /// Forgets the index of the shard at `key` (it changed, or is being rewritten).
    pub(crate) fn forget_index(&self, key: &str) {
        if let Some(cache) = &self.index_cache {
            cache.invalidate(key);
        }
    }
}

/// Reads the index of the shard at `key` from the store with the shard's version and size
/// ([`read_shard_index_versioned`](crate::hierarchy::read_shard_index_versioned)); `None`
/// when the shard does not exist. The cache is neither read nor filled. Errors keep the
/// codec error's type (`ArrayError::Codec` for a corrupt index).
pub(crate) async fn read_index(
    store: &Store,
    key: &StoreKey,
    codec: &ShardIndexCodec,
) -> Result<Option<Cached>> {
    use crate::hierarchy::HierarchyError;
    match crate::hierarchy::read_shard_index_versioned(store, key, codec).await {
        Ok(read) => Ok(read.map(|r| Cached {
            index: Arc::new(r.index),
            version: r.version,
            shard_size: r.shard_size,
        })),
        Err(HierarchyError::Codec(e)) => Err(e.into()),
        Err(HierarchyError::Store(e)) => Err(e.into()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(index: ShardIndex) -> Cached {
        Cached {
            index: Arc::new(index),
            version: ObjectVersion::default(),
            shard_size: 0,
        }
    }

    #[test]
    fn the_cache_stays_within_its_byte_budget() {
        let budget = 64 << 10;
        let cache = IndexCache::new(budget);
        // 1000 indexes of 4×4 inner chunks: 32 entries × 8 bytes + key each, ~290 KB total
        for i in 0..1000 {
            let index = ShardIndex::new_empty(&[4, 4]);
            cache.insert(&format!("c/{i}/0"), entry(index));
        }
        cache.cache.run_pending_tasks();
        assert!(
            cache.cache.weighted_size() <= budget,
            "{} > {budget}",
            cache.cache.weighted_size()
        );
        assert!(cache.cache.entry_count() > 0);
        // an index larger than the budget is not kept
        let big = ShardIndex::new_empty(&[128, 128]);
        cache.insert("big", entry(big));
        cache.cache.run_pending_tasks();
        assert!(cache.cache.weighted_size() <= budget);
    }
}
