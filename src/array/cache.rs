//! A byte-bounded cache of decoded shard indexes.

use std::sync::Arc;

use moka::sync::Cache;

use crate::codec::ShardIndex;

/// Decoded shard indexes by shard key, bounded by their size in bytes (16 bytes an entry).
#[derive(Clone)]
pub(crate) struct IndexCache {
    cache: Cache<String, Arc<ShardIndex>>,
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
                .weigher(|k: &String, v: &Arc<ShardIndex>| {
                    let bytes = (v.entries().len() * 8 + k.len()) as u64;
                    u32::try_from(bytes).unwrap_or(u32::MAX)
                })
                .build(),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<Arc<ShardIndex>> {
        self.cache.get(key)
    }

    pub(crate) fn insert(&self, key: &str, index: Arc<ShardIndex>) {
        self.cache.insert(key.to_string(), index);
    }

    pub(crate) fn invalidate(&self, key: &str) {
        self.cache.invalidate(key);
    }
}
