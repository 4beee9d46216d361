//! One lock per shard (or chunk) key, serialising the read-modify-writes of that object
//! within a process: two calls on one opened array that both touch a shard take turns on
//! it, while writes of different shards never wait for each other (with hashed lock
//! stripes, about a third of a 64-shard write waited for another shard of the same write).
//!
//! A key's lock lives while some call holds or waits for it (a remote PUT's task holds it
//! too, see `spawned.rs`). The map keeps a weak reference to it and drops dead entries
//! whenever it has grown to twice its size after the last sweep (and to at least 64
//! entries), so it holds at most max(64, twice the keys in use at the last sweep) entries:
//! its size follows the peak number of keys in use, never the number of keys written.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// A lock per key, made on first use and dropped with its last user.
#[derive(Debug, Default)]
pub(crate) struct KeyLocks {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    locks: HashMap<String, Weak<AsyncMutex<()>>>,
    /// The map's size after its last sweep.
    swept_at: usize,
}

/// Holds a key's lock; dropping it lets the next waiter in.
pub(crate) type KeyGuard = OwnedMutexGuard<()>;

/// Sweeps never run on maps smaller than this.
const MIN_SWEEP: usize = 64;

impl KeyLocks {
    /// Waits for `key`'s lock (first come, first served) and holds it until the guard is
    /// dropped.
    pub(crate) async fn lock(&self, key: &str) -> KeyGuard {
        self.lock_of(key).lock_owned().await
    }

    /// The lock of `key`, shared with every other current user of the key.
    fn lock_of(&self, key: &str) -> Arc<AsyncMutex<()>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = state.locks.get(key).and_then(Weak::upgrade) {
            return lock;
        }
        let lock = Arc::new(AsyncMutex::new(()));
        state.locks.insert(key.to_string(), Arc::downgrade(&lock));
        if state.locks.len() >= (2 * state.swept_at).max(MIN_SWEEP) {
            state.locks.retain(|_, weak| weak.strong_count() > 0);
            state.swept_at = state.locks.len();
        }
        lock
    }

    /// Keys in the map (live or not yet swept).
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .locks
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_key_is_taken_in_turn_and_other_keys_never_wait() {
        let locks = KeyLocks::default();
        let a = locks.lock("c/0/0").await;
        // another key: free at once
        let b = tokio::time::timeout(Duration::from_millis(100), locks.lock("c/0/1"))
            .await
            .expect("a different key does not wait");
        // the same key: waits for the holder
        assert!(
            tokio::time::timeout(Duration::from_millis(20), locks.lock("c/0/0"))
                .await
                .is_err()
        );
        drop(a);
        let _a2 = tokio::time::timeout(Duration::from_millis(100), locks.lock("c/0/0"))
            .await
            .expect("free once its holder is gone");
        drop(b);
    }

    #[tokio::test]
    async fn no_two_of_many_keys_share_a_lock() {
        // 64 stripes put some of 64 keys behind each other; exact locks never do
        let locks = KeyLocks::default();
        let mut held = Vec::new();
        for z in 0..4 {
            for y in 0..4 {
                for x in 0..4 {
                    let key = format!("c/{z}/{y}/{x}");
                    held.push(
                        tokio::time::timeout(Duration::from_millis(100), locks.lock(&key))
                            .await
                            .expect("every key is free"),
                    );
                }
            }
        }
        assert_eq!(held.len(), 64);
    }

    #[tokio::test]
    async fn the_map_follows_the_peak_of_keys_in_use_not_the_keys_written() {
        let locks = KeyLocks::default();
        let _kept = locks.lock("kept").await;
        // a peak of 1,000 keys held at once
        let mut held = Vec::new();
        for i in 0..1000 {
            held.push(locks.lock(&format!("peak{i}")).await);
            assert!(locks.entries() <= 2 * (i + 2), "{}", locks.entries());
        }
        drop(held);
        // then 10,000 keys, each released at once: dead entries are swept once the map
        // doubles, so it never holds more than twice the peak and ends back near one key
        for i in 0..10_000 {
            drop(locks.lock(&format!("k{i}")).await);
            assert!(locks.entries() <= 2 * 1001, "{}", locks.entries());
        }
        assert!(locks.entries() <= MIN_SWEEP, "{}", locks.entries());
        // the held key's lock survives every sweep
        assert!(
            tokio::time::timeout(Duration::from_millis(20), locks.lock("kept"))
                .await
                .is_err()
        );
    }
}
