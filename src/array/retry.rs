//! The one retry policy of the execution layer, for reads and writes alike: how often an
//! operation that lost a race with a concurrent writer starts again, and how long it waits
//! first.
//!
//! A conditional write (read-modify-write of a shard or chunk) that finds the object changed
//! retries its whole read-modify-write; a partial shard read whose shard changed between its
//! index and its inner chunks reads the index again. Both wait a random delay below
//! `2^attempt` ms ([`backoff`], from the store layer, whose own retries use it too) so
//! that competing writers stop colliding.

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

pub(crate) use crate::store::backoff::backoff;
