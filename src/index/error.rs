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

/// Checked `a + b` with an error naming `what`.
pub(crate) fn add(a: i64, b: i64, what: &dyn Fn() -> String) -> Result<i64> {
    a.checked_add(b)
        .ok_or_else(|| IndexError::Overflow(format!("{a} + {b} overflows i64 in {}", what())))
}

/// Checked `a * b` with an error naming `what`.
pub(crate) fn mul(a: i64, b: i64, what: &dyn Fn() -> String) -> Result<i64> {
    a.checked_mul(b)
        .ok_or_else(|| IndexError::Overflow(format!("{a} * {b} overflows i64 in {}", what())))
}

/// Checked `offset + stride * x`, computed exactly in i128 and checked against i64.
pub(crate) fn affine(offset: i64, stride: i64, x: i64) -> Option<i64> {
    let v = offset as i128 + stride as i128 * x as i128;
    i64::try_from(v).ok()
}

/// Checked `offset + stride * x` with an error naming `what`.
pub(crate) fn affine_checked(
    offset: i64,
    stride: i64,
    x: i64,
    what: &dyn Fn() -> String,
) -> Result<i64> {
    affine(offset, stride, x).ok_or_else(|| {
        IndexError::Overflow(format!(
            "{offset} + {stride} * {x} overflows i64 in {}",
            what()
        ))
    })
}
