//! The one retry policy of the execution layer, for reads and writes alike: how often an
//! operation that lost a race with a concurrent writer starts again, and how long it waits
//! first.
//!
//! A conditional write (read-modify-write of a shard or chunk) that finds the object changed
//! retries its whole read-modify-write; a partial shard read whose shard changed between its
//! index and its inner chunks reads the index again. Both wait a random delay below
//! `2^attempt` ms (capped at [`MAX_BACKOFF_MS`]) so that competing writers stop colliding.

/// Attempts of an operation that keeps losing races before it gives up with the conflict
/// (`Precondition`): the default of `ArrayOptions::with_conflict_attempts` for writes, and
/// the bound of a partial shard read's index re-reads. Sixteen writers arriving at one shard at once can make the unluckiest
/// lose about as many races as there are writers (observed: up to 16 with 16 processes on
/// moto, `reliability_processes`), so the budget is twice that.
pub(crate) const MAX_CONFLICT_ATTEMPTS: usize = 32;

/// Times a write whose PUT (or DELETE) failed without telling whether the store acted (a
/// backend error after `object_store`'s own retries, e.g. a timeout after the request was
/// sent) is attempted again, re-reading the object first, before the error is returned.
pub(crate) const MAX_UNKNOWN_OUTCOME_RETRIES: usize = 2;

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
