//! The shards (or chunks) an array last wrote partially, kept to write them again without a
//! GET.
//!
//! A partial write of a shard is a read-modify-write: GET the shard, change it, PUT it on
//! condition that it is still the version read. Over a remote store that is two round trips
//! a write. With a byte budget ([`ArrayOptions::with_write_cache_bytes`], off by default), a
//! partial write remembers the bytes it stored and the version the store gave them, and the
//! next partial write of that shard starts from them: its PUT is conditional on that
//! version, one round trip. An entry is tried, never trusted: if anyone wrote the shard in
//! between, the PUT fails its condition, the entry is forgotten and the write reads the
//! shard as it would have. Fully covered writes, which need no read, remember nothing (and
//! forget what their shard had).
//!
//! Only remote stores that check conditions keep entries: a local GET costs little, and a
//! store writing unconditionally could not tell a stale entry.
//!
//! [`ArrayOptions::with_write_cache_bytes`]: super::ArrayOptions::with_write_cache_bytes

use bytes::Bytes;
use moka::sync::Cache;
use object_store::PutPayload;

use crate::store::{ObjectVersion, Store};

/// A shard as this array stored it, with the version the store gave it.
#[derive(Clone, Debug)]
pub(crate) struct Written {
    pub(crate) bytes: Bytes,
    pub(crate) version: ObjectVersion,
}

/// Shards this array last wrote partially, by key, within a byte budget (their sizes).
#[derive(Clone)]
pub(crate) struct WrittenShards {
    cache: Cache<String, Written>,
    max_bytes: u64,
}

impl std::fmt::Debug for WrittenShards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WrittenShards")
            .field("entries", &self.cache.entry_count())
            .field("bytes", &self.cache.weighted_size())
            .finish()
    }
}

impl WrittenShards {
    /// The cache of an array opened on `store` with a budget of `max_bytes`: none without
    /// a budget, nor for local paths and `memory://` (stores that open objects at once,
    /// where a GET costs little).
    pub(crate) fn for_store(store: &Store, max_bytes: u64) -> Option<Self> {
        (max_bytes > 0 && !store.opens_now()).then(|| WrittenShards::new(max_bytes))
    }

    /// Keeps at most about `max_bytes` of shards.
    pub(crate) fn new(max_bytes: u64) -> Self {
        WrittenShards {
            cache: Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|k: &String, v: &Written| {
                    u32::try_from(v.bytes.len() + k.len()).unwrap_or(u32::MAX)
                })
                .build(),
            max_bytes,
        }
    }

    /// The shard at `key` as last stored by this array, if still kept.
    pub(crate) fn get(&self, key: &str) -> Option<Written> {
        self.cache.get(key)
    }

    /// Remembers that `payload` is stored at `key` as `version`: copied into one buffer (its
    /// pieces may hold much larger buffers), when the version can be matched and it fits
    /// within the budget (a quarter of it, so one shard never evicts all others).
    pub(crate) fn remember(&self, key: &str, payload: &PutPayload, version: ObjectVersion) {
        let len = payload.content_length();
        // (the weigher counts at most u32::MAX bytes an entry)
        if !version.is_known() || len as u64 > (self.max_bytes / 4).min(u32::MAX as u64 / 2) {
            self.forget(key);
            return;
        }
        let mut bytes = Vec::new();
        if bytes.try_reserve_exact(len).is_err() {
            self.forget(key);
            return;
        }
        for part in payload.iter() {
            bytes.extend_from_slice(part);
        }
        self.cache.insert(
            key.to_string(),
            Written {
                bytes: bytes.into(),
                version,
            },
        );
    }

    /// Forgets the shard at `key` (rewritten without being remembered, deleted, or found
    /// changed by someone else).
    pub(crate) fn forget(&self, key: &str) {
        self.cache.invalidate(key);
    }
}

/// The one place the write path reads, fills and empties its written-shard cache (no-ops
/// when it is off).
impl super::Shared {
    /// The shard at `key` as this array last stored it, if kept.
    /// Never after the store refused a conditional PUT: a write from an entry would only be
    /// refused again (`write::put_checked` never writes one unconditionally).
    pub(crate) fn recall_written(&self, key: &str) -> Option<Written> {
        if self.node.store().refused_conditional_put() {
            return None;
        }
        self.written.as_ref().and_then(|c| c.get(key))
    }

    /// Whether partial writes remember what they store (not once the store has refused a
    /// conditional PUT: nothing would be recalled).
    pub(crate) fn remembers_writes(&self) -> bool {
        self.written.is_some() && !self.node.store().refused_conditional_put()
    }

    /// Remembers that `payload` is stored at `key` as `version`.
    pub(crate) fn remember_written(&self, key: &str, payload: &PutPayload, version: ObjectVersion) {
        if let Some(c) = &self.written {
            c.remember(key, payload, version);
        }
    }

    /// Forgets what this array stored at `key`.
    pub(crate) fn forget_written(&self, key: &str) {
        if let Some(c) = &self.written {
            c.forget(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(tag: &str) -> ObjectVersion {
        ObjectVersion {
            e_tag: Some(tag.to_string()),
            version: None,
        }
    }

    #[test]
    fn a_remembered_shard_is_its_payload_in_one_buffer() {
        let cache = WrittenShards::new(1 << 20);
        let payload = PutPayload::from_iter([Bytes::from_static(b"ab"), Bytes::from_static(b"cd")]);
        cache.remember("c/0", &payload, version("1"));
        let w = cache.get("c/0").unwrap();
        assert_eq!(&w.bytes[..], b"abcd");
        assert_eq!(w.version, version("1"));
        cache.forget("c/0");
        assert!(cache.get("c/0").is_none());
    }

    #[test]
    fn unmatchable_versions_and_oversized_shards_are_not_kept() {
        let cache = WrittenShards::new(4000);
        let small = PutPayload::from(vec![1u8; 100]);
        cache.remember("a", &small, ObjectVersion::default());
        assert!(cache.get("a").is_none(), "a version no condition can name");
        cache.remember("b", &small, version("1"));
        assert!(cache.get("b").is_some());
        // larger than a quarter of the budget: not kept, and an older entry is dropped
        cache.remember("b", &PutPayload::from(vec![1u8; 1001]), version("2"));
        assert!(cache.get("b").is_none());
    }

    #[test]
    fn remote_stores_with_a_budget_keep_shards_local_and_memory_ones_do_not() {
        use crate::store::StoreOptions;
        let s3 = Store::open("s3://bucket/a", StoreOptions::default()).unwrap();
        assert!(WrittenShards::for_store(&s3, 1 << 20).is_some());
        assert!(WrittenShards::for_store(&s3, 0).is_none(), "off by default");
        let memory = Store::open("memory://written", StoreOptions::default()).unwrap();
        assert!(WrittenShards::for_store(&memory, 1 << 20).is_none());
        let dir = tempfile::tempdir().unwrap();
        let local = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
        assert!(WrittenShards::for_store(&local, 1 << 20).is_none());
    }

    #[test]
    fn the_cache_stays_within_its_byte_budget() {
        let budget = 1 << 20;
        let cache = WrittenShards::new(budget);
        for i in 0..100 {
            cache.remember(
                &format!("c/{i}"),
                &PutPayload::from(vec![0u8; 100_000]),
                version("1"),
            );
        }
        cache.cache.run_pending_tasks();
        assert!(cache.cache.weighted_size() <= budget);
        assert!(cache.cache.entry_count() > 0);
    }
}
