//! The options of the two required operations, shaped like `object_store`'s: what a GET reads
//! ([`GetOpts`]: a byte range and a version condition) and how a PUT treats an existing object
//! ([`PutMode`]). Every other read or write of [`Store`](super::Store) is a thin shortcut over
//! [`Store::get_opts`](super::Store::get_opts) and [`Store::put_opts`](super::Store::put_opts).

use std::ops::Range;

use bytes::Bytes;

use super::ObjectVersion;

/// Which bytes of an object a GET reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ByteRange {
    /// `start..end` (end exclusive; must lie inside the object).
    Bounded(Range<u64>),
    /// The last `n` bytes (all of an object shorter than `n`).
    Suffix(u64),
}

/// The options of [`Store::get_opts`](super::Store::get_opts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct GetOpts {
    /// The bytes to read; `None` reads the whole object.
    pub range: Option<ByteRange>,
    /// Read only if the object is still this version (`If-Match` on its ETag, when known);
    /// `Precondition` when it changed.
    pub if_match: Option<ObjectVersion>,
    /// Refuse a body longer than this many bytes ([`StoreError::TooLarge`]), from the
    /// length the backend announces, before any of it is read.
    ///
    /// [`StoreError::TooLarge`]: super::StoreError::TooLarge
    pub max_size: Option<u64>,
}

impl GetOpts {
    /// Reads `range`.
    pub fn with_range(mut self, range: ByteRange) -> Self {
        self.range = Some(range);
        self
    }
    /// Reads only from `version` of the object.
    pub fn with_if_match(mut self, version: ObjectVersion) -> Self {
        self.if_match = Some(version);
        self
    }
    /// Refuses a body longer than `max` bytes before reading it.
    pub fn with_max_size(mut self, max: u64) -> Self {
        self.max_size = Some(max);
        self
    }
}

/// What a GET returned: the bytes, and the size and version of the whole object (from the
/// response's `Content-Range` for ranged reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetOutput {
    /// The bytes read.
    pub bytes: Bytes,
    /// Size of the whole object.
    pub object_size: u64,
    /// Version of the object the bytes come from (pass it to
    /// [`Store::get_ranges_of_version`](super::Store::get_ranges_of_version) or
    /// [`GetOpts::if_match`] to read more of the same version).
    pub version: ObjectVersion,
}

/// How [`Store::put_opts`](super::Store::put_opts) treats an existing object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PutMode {
    /// Replace whatever is there.
    #[default]
    Overwrite,
    /// Write only if no object exists (`AlreadyExists` otherwise).
    Create,
    /// Write only if the object is still this version (`Precondition` otherwise).
    Update(ObjectVersion),
}
