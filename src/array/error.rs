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
    /// The chunk grid of one dimension cannot be built (the grid error is the source).
    #[error("chunk grid of dimension {dimension}: {source}")]
    Grid {
        /// The dimension.
        dimension: usize,
        /// Why.
        source: crate::grid::GridError,
    },
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
    /// A buffer or value array has the wrong shape (the shapes are in the payload).
    #[error("shape mismatch: {0}")]
    ShapeMismatch(ShapeMismatch),
    /// A selection whose result would not fit in memory.
    #[error("selection too large: {0}")]
    TooLarge(String),
    /// The array's layout or data type is not supported by this operation.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A value to write does not fit a fixed-width text type (`<U n`: more than `n` code
    /// points; `|S n`: more than `n` bytes). NumPy would cut it short; zarrflow refuses it.
    #[error("value {index} is {length} {unit} long, more than the data type {data_type} holds")]
    ValueTooLong {
        /// The value's position among the values given (C order).
        index: usize,
        /// Its length.
        length: usize,
        /// `"code points"` or `"bytes"`.
        unit: &'static str,
        /// The array's data type (`U5`, `S4`).
        data_type: String,
    },
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
    /// A background task failed (panicked or was cancelled); the join or runtime error, when
    /// there is one, is the source.
    #[error("background task failed: {what}")]
    Task {
        /// Which task.
        what: &'static str,
        /// Why (a tokio join error, a runtime that could not start).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
}

/// How a buffer's or a value array's shape fails to fit a view.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ShapeMismatch {
    /// An output buffer whose shape is not the view's.
    #[error("an output of shape {output:?} for a view of shape {view:?}")]
    Output {
        /// The output's shape.
        output: Vec<u64>,
        /// The view's shape.
        view: Vec<u64>,
    },
    /// Values that do not broadcast (NumPy rules) to the selection's shape.
    #[error(
        "values of shape {values:?} cannot be broadcast to the selection's shape {selection:?}"
    )]
    Broadcast {
        /// The values' shape.
        values: Vec<u64>,
        /// The selection's shape.
        selection: Vec<u64>,
    },
    /// Values given as bytes whose length does not match their shape.
    #[error("{bytes} bytes of values for shape {shape:?} of {element_size}-byte elements")]
    ValueBytes {
        /// Bytes given.
        bytes: u64,
        /// The values' shape.
        shape: Vec<u64>,
        /// Bytes per element.
        element_size: usize,
    },
    /// A fixed-dimension read or write whose number of dimensions is not the view's.
    #[error("{requested} dimensions requested for a view of {view} dimensions")]
    Rank {
        /// The number of dimensions of the Rust array type.
        requested: usize,
        /// The view's number of dimensions.
        view: usize,
    },
}

impl ArrayError {
    /// A failed background task, keeping its join error.
    pub(crate) fn task(what: &'static str, source: Option<tokio::task::JoinError>) -> Self {
        ArrayError::Task {
            what,
            source: source.map(|e| Box::new(e) as _),
        }
    }

    /// True when a node, array or object does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            ArrayError::Hierarchy(HierarchyError::NotFound { .. } | HierarchyError::NoNode { .. })
                | ArrayError::Store(StoreError::NotFound { .. })
        )
    }

    /// True when a node already exists where one was being created.
    pub fn is_already_exists(&self) -> bool {
        matches!(
            self,
            ArrayError::Hierarchy(HierarchyError::AlreadyExists { .. })
                | ArrayError::Store(StoreError::AlreadyExists { .. })
        )
    }

    /// True when a conditional write kept losing to concurrent writers (its retries are
    /// exhausted): re-read and try again.
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            ArrayError::Store(StoreError::Precondition { .. })
                | ArrayError::Hierarchy(HierarchyError::ConcurrentUpdate { .. })
        )
    }

    /// True when a selection reaches outside the array (or view).
    pub fn is_out_of_bounds(&self) -> bool {
        matches!(self, ArrayError::Index(IndexError::OutOfBounds(_)))
    }

    /// True when the element type does not match the array's data type.
    pub fn is_data_type_mismatch(&self) -> bool {
        matches!(self, ArrayError::DataTypeMismatch { .. })
    }

    /// The shape mismatch, when that is what this error is.
    pub fn shape_mismatch(&self) -> Option<&ShapeMismatch> {
        match self {
            ArrayError::ShapeMismatch(m) => Some(m),
            _ => None,
        }
    }
}

/// Shorthand result type of the execution layer.
pub type Result<T, E = ArrayError> = std::result::Result<T, E>;
