//! The error type of the execution layer.

use thiserror::Error;

use crate::codec::CodecError;
use crate::hierarchy::HierarchyError;
use crate::index::IndexError;
use crate::index::json::JsonError;
use crate::metadata::MetadataError;
use crate::plan::PlanError;
use crate::store::StoreError;

/// Why reading or writing an array failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ArrayError {
    /// A selection or transform was refused.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A transform JSON document was refused.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// The planner refused the transform.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Encoding or decoding failed (corrupt chunk or shard, bad configuration).
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Opening or creating a node failed.
    #[error(transparent)]
    Hierarchy(#[from] HierarchyError),
    /// The metadata is invalid.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// The requested element type does not match the array's data type.
    #[error("data type mismatch: the array holds {array}, but {requested} was requested")]
    DataTypeMismatch {
        /// The array's data type.
        array: String,
        /// The requested Rust element type.
        requested: &'static str,
    },
    /// A buffer or value array has the wrong shape.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// A selection whose result would not fit in memory.
    #[error("selection too large: {0}")]
    TooLarge(String),
    /// The array's layout or data type is not supported by this operation.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A decoded chunk holds a value invalid for its data type (e.g. a bool byte other than 0/1).
    #[error("invalid data in {key}: {reason}")]
    InvalidData {
        /// The chunk's key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The blocking API was called from inside an async runtime.
    #[error("the blocking API cannot run inside an async runtime; use the async methods")]
    BlockingInAsyncContext,
    /// An internal invariant broke (a bug in zarrflow, reported instead of a panic or an
    /// out-of-bounds access).
    #[error("internal error: {0}")]
    Internal(String),
    /// A background task failed (panicked or was cancelled).
    #[error("background task failed: {0}")]
    Task(String),
}

/// Shorthand result type of the execution layer.
pub type Result<T, E = ArrayError> = std::result::Result<T, E>;
