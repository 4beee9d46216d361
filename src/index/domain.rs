//! [`IndexDomain`]: a box of integer coordinates with optional labels.

use std::fmt;

use super::error::{Bounds, Coordinates, IndexError, Result};

/// The largest rank the index layer accepts (TensorStore's limit).
pub const MAX_RANK: usize = 32;

/// A half-open box `[inclusive_min, exclusive_max)` per dimension, with optional labels.
///
/// Origins may be negative, an empty dimension (`min == max`) is legal and so is rank 0.
/// Labels are carried (and round-trip through JSON) but indexing never reads them, and
/// every indexing operation that builds a new domain drops them.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IndexDomain {
    inclusive_min: Vec<i64>,
    exclusive_max: Vec<i64>,
    labels: Option<Vec<String>>,
}

impl IndexDomain {
    /// A domain from its bounds; fails if the lengths differ, the rank exceeds [`MAX_RANK`]
    /// or some `inclusive_min > exclusive_max`.
    pub fn new(inclusive_min: Vec<i64>, exclusive_max: Vec<i64>) -> Result<Self> {
        if inclusive_min.len() != exclusive_max.len() {
            return Err(IndexError::rank_mismatch(
                "the length of exclusive_max",
                inclusive_min.len(),
                exclusive_max.len(),
            ));
        }
        check_rank(inclusive_min.len())?;
        for (d, (lo, hi)) in inclusive_min.iter().zip(&exclusive_max).enumerate() {
            if lo > hi {
                return Err(IndexError::InvalidArgument(format!(
                    "dimension {d}: inclusive_min {lo} > exclusive_max {hi}"
                )));
            }
        }
        Ok(IndexDomain {
            inclusive_min,
            exclusive_max,
            labels: None,
        })
    }

    /// The zero-origin domain `[0, shape)`.
    pub fn from_shape(shape: &[u64]) -> Result<Self> {
        let max = shape
            .iter()
            .enumerate()
            .map(|(d, &n)| {
                i64::try_from(n).map_err(|_| {
                    IndexError::Overflow(format!("dimension {d}: extent {n} exceeds i64"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        IndexDomain::new(vec![0; shape.len()], max)
    }

    /// A domain from an origin and a shape; fails if `origin + shape` overflows.
    pub fn from_origin_shape(origin: &[i64], shape: &[u64]) -> Result<Self> {
        if origin.len() != shape.len() {
            return Err(IndexError::rank_mismatch(
                "the shape's length (with the origin's)",
                origin.len(),
                shape.len(),
            ));
        }
        let max = origin
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(d, (&o, &n))| {
                i64::try_from(n)
                    .ok()
                    .and_then(|n| o.checked_add(n))
                    .ok_or_else(|| {
                        IndexError::Overflow(format!(
                            "dimension {d}: origin {o} + extent {n} exceeds i64"
                        ))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        IndexDomain::new(origin.to_vec(), max)
    }

    /// The same domain with labels (`""` means unlabeled); fails on a length mismatch.
    pub fn with_labels(mut self, labels: Vec<String>) -> Result<Self> {
        if labels.len() != self.rank() {
            return Err(IndexError::rank_mismatch(
                "the number of labels",
                self.rank(),
                labels.len(),
            ));
        }
        self.labels = if labels.iter().all(String::is_empty) {
            None
        } else {
            Some(labels)
        };
        Ok(self)
    }

    /// The same domain without labels.
    pub fn without_labels(mut self) -> Self {
        self.labels = None;
        self
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.inclusive_min.len()
    }

    /// Inclusive lower bounds (the origin).
    pub fn inclusive_min(&self) -> &[i64] {
        &self.inclusive_min
    }

    /// The origin, an alias of [`inclusive_min`](Self::inclusive_min).
    pub fn origin(&self) -> &[i64] {
        &self.inclusive_min
    }

    /// Exclusive upper bounds.
    pub fn exclusive_max(&self) -> &[i64] {
        &self.exclusive_max
    }

    /// Labels, if any dimension is labeled.
    pub fn labels(&self) -> Option<&[String]> {
        self.labels.as_deref()
    }

    /// The label of dimension `d` (`""` when unlabeled).
    pub fn label(&self, d: usize) -> &str {
        self.labels
            .as_ref()
            .and_then(|l| l.get(d))
            .map_or("", String::as_str)
    }

    /// Extents `exclusive_max - inclusive_min` per dimension.
    pub fn shape(&self) -> Vec<u64> {
        (0..self.rank()).map(|d| self.extent(d)).collect()
    }

    /// The extent of dimension `d`.
    pub fn extent(&self, d: usize) -> u64 {
        (self.exclusive_max[d] as i128 - self.inclusive_min[d] as i128) as u64
    }

    /// The bounds `(inclusive_min, exclusive_max)` of dimension `d`.
    pub fn interval(&self, d: usize) -> (i64, i64) {
        (self.inclusive_min[d], self.exclusive_max[d])
    }

    /// Number of points, `None` if it exceeds `u64`.
    pub fn num_elements(&self) -> Option<u64> {
        self.shape()
            .into_iter()
            .try_fold(1u64, |acc, n| acc.checked_mul(n))
    }

    /// True if some dimension is empty (a rank-0 domain is never empty: it has one point).
    pub fn is_empty(&self) -> bool {
        (0..self.rank()).any(|d| self.extent(d) == 0)
    }

    /// True if `point` has this domain's rank and lies inside it.
    pub fn contains(&self, point: &[i64]) -> bool {
        point.len() == self.rank()
            && point
                .iter()
                .enumerate()
                .all(|(d, &x)| self.inclusive_min[d] <= x && x < self.exclusive_max[d])
    }

    /// True if `other` has this rank and its bounds lie inside this domain's bounds
    /// (bounds are compared even when `other` is empty).
    pub fn contains_domain(&self, other: &IndexDomain) -> bool {
        other.rank() == self.rank()
            && (0..self.rank()).all(|d| {
                self.inclusive_min[d] <= other.inclusive_min[d]
                    && other.exclusive_max[d] <= self.exclusive_max[d]
            })
    }

    /// The intersection, `None` if it is empty (touching boxes give `None`); fails on a
    /// rank mismatch.
    pub fn intersect(&self, other: &IndexDomain) -> Result<Option<IndexDomain>> {
        if other.rank() != self.rank() {
            return Err(IndexError::rank_mismatch(
                "the rank of the domain intersected with",
                self.rank(),
                other.rank(),
            ));
        }
        let lo: Vec<i64> = (0..self.rank())
            .map(|d| self.inclusive_min[d].max(other.inclusive_min[d]))
            .collect();
        let hi: Vec<i64> = (0..self.rank())
            .map(|d| self.exclusive_max[d].min(other.exclusive_max[d]))
            .collect();
        if lo.iter().zip(&hi).any(|(l, h)| l >= h) {
            return Ok(None);
        }
        Ok(Some(IndexDomain {
            inclusive_min: lo,
            exclusive_max: hi,
            labels: None,
        }))
    }

    /// Shifts both bounds by `offset`; fails on overflow or a rank mismatch.
    pub fn translate(&self, offset: &[i64]) -> Result<IndexDomain> {
        self.check_rank_of(offset.len(), "translation offset")?;
        let shift = |v: &[i64]| -> Result<Vec<i64>> {
            v.iter()
                .zip(offset)
                .enumerate()
                .map(|(d, (&b, &o))| {
                    b.checked_add(o).ok_or_else(|| {
                        IndexError::Overflow(format!("dimension {d}: bound {b} + {o}"))
                    })
                })
                .collect()
        };
        Ok(IndexDomain {
            inclusive_min: shift(&self.inclusive_min)?,
            exclusive_max: shift(&self.exclusive_max)?,
            labels: self.labels.clone(),
        })
    }

    /// Restricts each dimension by a literal integer or step-1 range, TensorStore style:
    /// no clamping, no wrapping; a bound outside the domain is an error; a reversed range
    /// narrows to an empty interval. Integers keep their dimension with extent 1.
    pub fn narrow(&self, ranges: &[NarrowItem]) -> Result<IndexDomain> {
        if ranges.len() > self.rank() {
            return Err(IndexError::InvalidSelection(format!(
                "{} indices for a domain of rank {}",
                ranges.len(),
                self.rank()
            )));
        }
        let mut lo = self.inclusive_min.clone();
        let mut hi = self.exclusive_max.clone();
        for (d, item) in ranges.iter().enumerate() {
            let (dlo, dhi) = self.interval(d);
            let inside = |x: i64, upper: bool| {
                if upper {
                    dlo <= x && x <= dhi
                } else {
                    dlo <= x && x < dhi
                }
            };
            match *item {
                NarrowItem::Index(i) => {
                    if !inside(i, false) {
                        return Err(IndexError::out_of_bounds(
                            "index",
                            Some(d),
                            Coordinates::Index(i),
                            Bounds::Interval {
                                inclusive_min: dlo,
                                exclusive_max: dhi,
                            },
                        ));
                    }
                    lo[d] = i;
                    hi[d] = i + 1;
                }
                NarrowItem::Range { start, stop, step } => {
                    if step != 1 {
                        return Err(IndexError::InvalidArgument(format!(
                            "narrow takes step-1 ranges only, got step {step} in dimension {d}"
                        )));
                    }
                    let s = start.unwrap_or(dlo);
                    let e = stop.unwrap_or(dhi);
                    if !inside(s, true) || !inside(e, true) {
                        return Err(IndexError::out_of_bounds(
                            format!("range [{s}, {e}), bounds"),
                            Some(d),
                            Coordinates::Interval { first: s, last: e },
                            Bounds::Interval {
                                inclusive_min: dlo,
                                exclusive_max: dhi,
                            },
                        ));
                    }
                    lo[d] = s;
                    hi[d] = e.max(s);
                }
            }
        }
        Ok(IndexDomain {
            inclusive_min: lo,
            exclusive_max: hi,
            labels: self.labels.clone(),
        })
    }

    pub(crate) fn check_rank_of(&self, n: usize, what: &str) -> Result<()> {
        if n != self.rank() {
            return Err(IndexError::rank_mismatch(
                format!("the length of {what}"),
                self.rank(),
                n,
            ));
        }
        Ok(())
    }

    /// Calls `f` on every point in C order (last dimension fastest).
    pub fn for_each_point(&self, mut f: impl FnMut(&[i64])) {
        if self.is_empty() {
            return;
        }
        let mut point = self.inclusive_min.clone();
        loop {
            f(&point);
            let mut d = self.rank();
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                point[d] += 1;
                if point[d] < self.exclusive_max[d] {
                    break;
                }
                point[d] = self.inclusive_min[d];
            }
        }
    }
}

/// One entry of [`IndexDomain::narrow`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NarrowItem {
    /// A literal coordinate.
    Index(i64),
    /// A literal range; bounds default to the domain's.
    Range {
        /// Inclusive start.
        start: Option<i64>,
        /// Exclusive stop.
        stop: Option<i64>,
        /// Must be 1.
        step: i64,
    },
}

pub(crate) fn check_rank(rank: usize) -> Result<()> {
    if rank > MAX_RANK {
        return Err(IndexError::InvalidArgument(format!(
            "rank {rank} exceeds the maximum rank {MAX_RANK}"
        )));
    }
    Ok(())
}

impl fmt::Debug for IndexDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for IndexDomain {
    /// Formats as `{ "x": [0, 4), [2, 5) }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for d in 0..self.rank() {
            if d > 0 {
                write!(f, ",")?;
            }
            let label = self.label(d);
            if !label.is_empty() {
                write!(f, " {label:?}:")?;
            }
            write!(f, " [{}, {})", self.inclusive_min[d], self.exclusive_max[d])?;
        }
        write!(f, " }}")
    }
}
