//! The error type of the index layer.

use thiserror::Error;

/// Why an index operation (domain, map, transform, selection) was refused.
///
/// Every message names the offending part: the dimension, the value and the bounds it broke.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IndexError {
    /// A literal coordinate or a non-empty interval lies outside the domain.
    #[error("out of bounds: {0}")]
    OutOfBounds(String),
    /// A selection that cannot be applied: an interval running the wrong way, step 0,
    /// too many indices, two ellipses, a mask of the wrong shape, ...
    #[error("invalid selection: {0}")]
    InvalidSelection(String),
    /// Two ranks (or lengths) that must agree do not.
    #[error("rank mismatch: {0}")]
    RankMismatch(String),
    /// Arguments that are individually well-formed but inconsistent (e.g. broadcast mismatch).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A coordinate or an intermediate of `offset + stride * x` left the `i64` range.
    #[error("integer overflow: {0}")]
    Overflow(String),
    /// A value of the wrong type, e.g. a float or boolean where an integer index is required.
    #[error("invalid type: {0}")]
    InvalidType(String),
    /// A selection string that does not parse; the message names the column.
    #[error("invalid selection syntax: {0}")]
    Syntax(String),
    /// A well-defined request the engine does not support.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Shorthand result type of the index layer.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;
