//! The wait between two attempts of an operation that lost a race with a concurrent
//! writer: the execution layer's read-modify-writes and shard reads
//! ([`crate::array`]'s retry policy) and the store's own HEAD + range pair
//! ([`super::Store::get_suffix`]) all wait this way.

/// The largest wait between two attempts, in milliseconds. Under heavy contention (16
/// processes rewriting one shard through an S3 server that needs ~10 ms per
/// read-modify-write) a cap of 64 ms let writers keep colliding until some ran out of
/// attempts; a cap near one second spreads them out, and the first attempts still wait
/// only a few milliseconds.
pub(crate) const MAX_BACKOFF_MS: u64 = 1024;

/// Waits before attempt `attempt + 1` of an operation on `key` (a random delay below
/// `2^attempt` ms, at most [`MAX_BACKOFF_MS`]).
pub(crate) async fn backoff(key: &str, attempt: usize) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    attempt.hash(&mut h);
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
        .hash(&mut h);
    std::thread::current().id().hash(&mut h);
    let cap_us = (1000u64 << attempt.min(10)).min(MAX_BACKOFF_MS * 1000);
    let wait_us = h.finish() % cap_us;
    tracing::debug!(
        key,
        attempt,
        wait_us,
        "conflict: waiting before the next attempt"
    );
    tokio::time::sleep(std::time::Duration::from_micros(wait_us)).await;
}
