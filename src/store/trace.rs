//! The events of store requests: one DEBUG event (target `zarrflow::store`) per request,
//! when it ends, with its method as the message and the key, range, bytes, latency and
//! outcome as fields. Nothing is measured or formatted unless a subscriber wants the event.

use std::fmt;
use std::time::Instant;

use super::{ByteRange, StoreError};

/// The target of the store's events.
pub(super) const TARGET: &str = "zarrflow::store";

/// Times one request, only when its event is enabled.
pub(super) struct Timer(Option<Instant>);

impl Timer {
    pub(super) fn start() -> Self {
        Timer(tracing::enabled!(target: TARGET, tracing::Level::DEBUG).then(Instant::now))
    }

    /// Microseconds since the start (0 when not timed).
    pub(super) fn micros(&self) -> u64 {
        self.0.map_or(0, |t| {
            u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX)
        })
    }
}

/// The outcome of a request, as its event names it.
pub(super) fn outcome<T>(result: &Result<T, StoreError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(StoreError::NotFound { .. }) => "not found",
        Err(StoreError::Precondition { .. }) => "precondition failed",
        Err(StoreError::AlreadyExists { .. }) => "already exists",
        Err(StoreError::Unsupported { .. }) => "unsupported",
        Err(StoreError::ShortRead { .. }) => "short read",
        Err(StoreError::InvalidRange { .. }) => "invalid range",
        Err(StoreError::NotAFile { .. }) => "not a file",
        Err(_) => "error",
    }
}

/// A GET's range as an event field: `all`, `start..end`, or `-N` for the last `N` bytes
/// (HTTP's suffix form).
pub(super) struct RangeField<'a>(pub(super) Option<&'a ByteRange>);

impl fmt::Display for RangeField<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("all"),
            Some(ByteRange::Bounded(r)) => write!(f, "{}..{}", r.start, r.end),
            Some(ByteRange::Suffix(n)) => write!(f, "-{n}"),
        }
    }
}

/// The method of a GET with these options, as an event message.
pub(super) fn get_method(range: Option<&ByteRange>, conditional: bool) -> &'static str {
    match (range, conditional) {
        (None, false) => "GET",
        (None, true) => "GET if-match",
        (Some(ByteRange::Bounded(_)), false) => "GET range",
        (Some(ByteRange::Bounded(_)), true) => "GET range if-match",
        (Some(ByteRange::Suffix(_)), false) => "GET suffix",
        (Some(ByteRange::Suffix(_)), true) => "GET suffix if-match",
    }
}
