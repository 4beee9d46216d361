//! Errors of the storage layer.

/// An error from the storage layer. Every variant names the object by URL (store URL + key).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The object does not exist.
    #[error("not found: {url}")]
    NotFound {
        /// Full URL of the missing object.
        url: String,
    },
    /// A create-only write found an existing object.
    #[error("already exists: {url}")]
    AlreadyExists {
        /// Full URL of the object.
        url: String,
    },
    /// A conditional write or read found a different version than expected.
    #[error("precondition failed (object changed concurrently): {url}")]
    Precondition {
        /// Full URL of the object.
        url: String,
    },
    /// The backend does not support the operation.
    #[error("operation `{operation}` not supported by {store_url}")]
    Unsupported {
        /// The operation, e.g. `put_if_match`.
        operation: &'static str,
        /// The store URL.
        store_url: String,
    },
    /// A write was attempted on a read-only store (e.g. `http(s)://`).
    #[error("store {store_url} is read-only; cannot {operation} {key}")]
    ReadOnly {
        /// The store URL.
        store_url: String,
        /// The attempted operation.
        operation: &'static str,
        /// The key.
        key: String,
    },
    /// The store URL could not be parsed or is of an unsupported scheme.
    #[error("invalid store URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A key is not a valid relative store key.
    #[error("invalid store key `{key}`: {reason}")]
    InvalidKey {
        /// The key as given.
        key: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A requested byte range is invalid or outside the object.
    #[error("invalid byte range {start}..{end} for {url}: {reason}")]
    InvalidRange {
        /// Full URL of the object.
        url: String,
        /// Range start.
        start: u64,
        /// Range end (exclusive).
        end: u64,
        /// Why it was rejected.
        reason: String,
    },
    /// The backend returned fewer bytes than requested (truncated body).
    #[error("short read from {url}: expected {expected} bytes, got {got}")]
    ShortRead {
        /// Full URL of the object.
        url: String,
        /// Bytes expected.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// The backend announced a body longer than the caller's limit
    /// ([`GetOpts::with_max_size`](super::GetOpts::with_max_size)): refused before any of
    /// it is read.
    #[error("object too large: {url} is {size} bytes, more than the {max} it can be")]
    TooLarge {
        /// Full URL of the object.
        url: String,
        /// Bytes the backend announced.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The backend sent more bytes than it announced: the read stops there.
    #[error("long read from {url}: expected {expected} bytes, got more")]
    LongRead {
        /// Full URL of the object.
        url: String,
        /// Bytes announced.
        expected: u64,
    },
    /// A buffer for a body of the announced length could not be allocated.
    #[error("out of memory reading {url}: {bytes} bytes could not be allocated")]
    OutOfMemory {
        /// Full URL of the object.
        url: String,
        /// Bytes asked for.
        bytes: u64,
    },
    /// On a local store, something other than a regular file (a directory, FIFO, socket or
    /// device) is where an object should be: it is neither read (nor waited on) as an object
    /// nor taken for a missing one, and it is not replaced or deleted.
    #[error("not an object: {url} is a {kind}, not a regular file")]
    NotAFile {
        /// Full URL of the object.
        url: String,
        /// What is there (`directory`, `FIFO`, `socket`, `block device`, ...).
        kind: &'static str,
    },
    /// A local-filesystem operation outside `object_store` failed (removing the empty
    /// directories a deleted prefix left behind).
    #[error("local filesystem error on {url}: {source}")]
    Local {
        /// Full URL of the directory.
        url: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Any other backend error (network, permissions, ...).
    #[error("storage backend error on {url}: {source}")]
    Backend {
        /// Full URL of the object (or store).
        url: String,
        /// The backend error.
        #[source]
        source: object_store::Error,
    },
}

impl StoreError {
    /// Map an `object_store` error for the object at `url`.
    pub(crate) fn from_backend(url: String, err: object_store::Error) -> Self {
        if let object_store::Error::Generic { source, .. } = &err
            && let Some(e) = source.downcast_ref::<super::NotARegularFile>()
        {
            return StoreError::NotAFile { url, kind: e.kind };
        }
        match err {
            object_store::Error::NotFound { .. } => StoreError::NotFound { url },
            object_store::Error::AlreadyExists { .. } => StoreError::AlreadyExists { url },
            object_store::Error::Precondition { .. } => StoreError::Precondition { url },
            other => StoreError::Backend { url, source: other },
        }
    }

    /// True for [`StoreError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }
}
