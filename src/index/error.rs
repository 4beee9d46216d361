//! The error type of the index layer.

use std::fmt;

use thiserror::Error;

use super::domain::IndexDomain;

/// Why an index operation (domain, map, transform, selection) was refused.
///
/// Every message names the offending part: the dimension, the value and the bounds it broke.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IndexError {
    /// A coordinate, an interval or a point lies outside the bounds it must lie in (the
    /// dimension, the value and the bounds are in the payload).
    #[error("out of bounds: {0}")]
    OutOfBounds(Box<OutOfBounds>),
    /// A selection that cannot be applied: an interval running the wrong way, step 0,
    /// too many indices, two ellipses, a mask of the wrong shape, ...
    #[error("invalid selection: {0}")]
    InvalidSelection(String),
    /// Two ranks (or lengths) that must agree do not (both are in the payload).
    #[error("rank mismatch: {0}")]
    RankMismatch(RankMismatch),
    /// Arguments that are individually well-formed but inconsistent (e.g. broadcast mismatch).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A coordinate or an intermediate of `offset + stride * x` left the `i64` range.
    #[error("integer overflow: {0}")]
    Overflow(String),
    /// A value of the wrong type, e.g. a float or boolean where an integer index is required.
    #[error("invalid type: {0}")]
    InvalidType(String),
    /// A selection string that does not parse.
    #[error("invalid selection syntax: {reason} at column {column} of {text:?}")]
    Syntax {
        /// What is wrong.
        reason: String,
        /// The 1-based column (in characters) where parsing stopped.
        column: usize,
        /// The selection text (at most its first 200 characters).
        text: String,
    },
    /// A well-defined request the engine does not support.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Shorthand result type of the index layer.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;

/// What an [`IndexError::OutOfBounds`] found outside which bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutOfBounds {
    /// What lies outside: `"index"`, `"slice 1:9:2"`, `"point"`, ...
    pub what: String,
    /// The dimension concerned, when one is.
    pub dimension: Option<usize>,
    /// The coordinates found.
    pub found: Coordinates,
    /// The bounds they must lie in.
    pub bounds: Bounds,
}

/// Coordinates that an index operation found out of bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coordinates {
    /// One coordinate (an index).
    Index(i64),
    /// The closed interval of coordinates a slice or range covers.
    Interval {
        /// The first coordinate.
        first: i64,
        /// The last coordinate.
        last: i64,
    },
    /// One point (a coordinate per dimension).
    Point(Vec<i64>),
    /// A box.
    Box(IndexDomain),
}

/// The bounds of an [`OutOfBounds`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bounds {
    /// The half-open interval `[inclusive_min, exclusive_max)` of one dimension.
    Interval {
        /// Smallest valid coordinate.
        inclusive_min: i64,
        /// One past the largest valid coordinate.
        exclusive_max: i64,
    },
    /// A dimension of this extent, indexed NumPy-style (`-extent..extent`).
    Extent(u64),
    /// A domain (every dimension's interval).
    Domain(IndexDomain),
    /// An array of this shape (zero origin).
    Shape(Vec<u64>),
}

impl fmt::Display for Coordinates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Coordinates::Index(i) => write!(f, "{i}"),
            Coordinates::Interval { first, last } => write!(f, "[{first}, {last}]"),
            Coordinates::Point(p) => write!(f, "{p:?}"),
            Coordinates::Box(d) => write!(f, "{d}"),
        }
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bounds::Interval {
                inclusive_min,
                exclusive_max,
            } => write!(f, "[{inclusive_min}, {exclusive_max})"),
            Bounds::Extent(n) => write!(f, "an extent of {n}"),
            Bounds::Domain(d) => write!(f, "the domain {d}"),
            Bounds::Shape(s) => write!(f, "the shape {s:?}"),
        }
    }
}

impl fmt::Display for OutOfBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} is outside {}", self.what, self.found, self.bounds)?;
        if let Some(d) = self.dimension {
            write!(f, " in dimension {d}")?;
        }
        Ok(())
    }
}

impl IndexError {
    /// An [`IndexError::OutOfBounds`].
    pub(crate) fn out_of_bounds(
        what: impl Into<String>,
        dimension: Option<usize>,
        found: Coordinates,
        bounds: Bounds,
    ) -> Self {
        IndexError::OutOfBounds(Box::new(OutOfBounds {
            what: what.into(),
            dimension,
            found,
            bounds,
        }))
    }

    /// An [`IndexError::RankMismatch`]: `what` was `found` where `expected` is required.
    pub(crate) fn rank_mismatch(what: impl Into<String>, expected: usize, found: usize) -> Self {
        IndexError::RankMismatch(RankMismatch {
            what: what.into(),
            expected,
            found,
        })
    }
}

/// Two ranks (or lengths) that must agree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RankMismatch {
    /// The rank or length that does not fit (`"the index array's rank"`, ...).
    pub what: String,
    /// What it must be.
    pub expected: usize,
    /// What it is.
    pub found: usize,
}

impl fmt::Display for RankMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: found {}, expected {}",
            self.what, self.found, self.expected
        )
    }
}
