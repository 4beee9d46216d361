//! [`DiagonalSet`]: several affine maps reading one input axis (an affine diagonal),
//! partitioned symbolically.

use super::Result;
use super::strided::{StridedRow, StridedSet};
use crate::grid::DimensionGrid;
use std::sync::Arc;

/// Several affine storage dimensions `offset_m + stride_m * x[k]` reading the same input
/// axis `k` (a diagonal, e.g. TensorStore's `diagonal` or a hand-built transform), which
/// the reference planner rejects.
///
/// Partitioned the TensorStore way, per input dimension: each member's touched chunks cut
/// the axis into intervals; the rows are the intervals of the merged cuts, in request
/// order, each with one chunk per member. Cost O(sum of touched chunks over the members),
/// never proportional to the axis extent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagonalSet {
    dims: Vec<usize>,
    input_axis: usize,
    strides: Vec<i64>,
    /// Per row: interval start (offset from the axis start) and length.
    origin: Vec<u64>,
    count: Vec<u64>,
    /// Per row and member (rows × members): the member's chunk row, with `local_start`
    /// at the interval start.
    cells: Vec<StridedRow>,
}

impl DiagonalSet {
    /// `members`: `(storage dim, offset, stride ≠ 0)`, all reading axis `axis` over
    /// `[lo, hi)` (non-empty).
    pub(crate) fn build(
        members: &[(usize, i64, i64)],
        axis: usize,
        lo: i64,
        hi: i64,
        grids: &[Arc<dyn DimensionGrid>],
    ) -> Result<Self> {
        let k = members.len();
        let mut per: Vec<Vec<StridedRow>> = Vec::with_capacity(k);
        let mut cuts: Vec<u64> = Vec::new();
        for &(dim, offset, stride) in members {
            let set = StridedSet::affine(dim, axis, offset, stride, lo, hi, grids[dim].as_ref())?;
            let mut rows: Vec<StridedRow> = (0..set.len()).map(|r| set.row(r)).collect();
            // Request order (ascending origin) for either stride sign.
            rows.sort_unstable_by_key(|r| r.origin);
            cuts.extend(rows.iter().map(|r| r.origin));
            per.push(rows);
        }
        cuts.sort_unstable();
        cuts.dedup();
        let n = (hi as i128 - lo as i128) as u64;
        let mut s = DiagonalSet {
            dims: members.iter().map(|m| m.0).collect(),
            input_axis: axis,
            strides: members.iter().map(|m| m.2).collect(),
            origin: Vec::with_capacity(cuts.len()),
            count: Vec::with_capacity(cuts.len()),
            cells: Vec::with_capacity(cuts.len() * k),
        };
        let mut at = vec![0usize; k];
        for (i, &b) in cuts.iter().enumerate() {
            let e = cuts.get(i + 1).copied().unwrap_or(n);
            s.origin.push(b);
            s.count.push(e - b);
            for m in 0..k {
                let rows = &per[m];
                while at[m] + 1 < rows.len() && rows[at[m] + 1].origin <= b {
                    at[m] += 1;
                }
                let mut row = rows[at[m]];
                let shift = (b - row.origin) as i64;
                row.local_start += members[m].2 * shift;
                row.count = e - b;
                row.origin = b;
                s.cells.push(row);
            }
        }
        Ok(s)
    }

    /// The storage dimensions (members), in output order.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The input axis all members read.
    pub fn input_axis(&self) -> usize {
        self.input_axis
    }

    /// The members' strides.
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }

    /// Number of rows (intervals of the axis with one chunk per member).
    pub fn len(&self) -> usize {
        self.origin.len()
    }

    /// True if no row.
    pub fn is_empty(&self) -> bool {
        self.origin.is_empty()
    }

    /// Interval start of row `r` (offset from the axis start).
    pub fn origin(&self, r: usize) -> u64 {
        self.origin[r]
    }

    /// Interval length of row `r`.
    pub fn count(&self, r: usize) -> u64 {
        self.count[r]
    }

    /// The member chunks of row `r` (one [`StridedRow`] per member, `local_start` at the
    /// interval start).
    pub fn cells(&self, r: usize) -> &[StridedRow] {
        let k = self.dims.len();
        &self.cells[r * k..(r + 1) * k]
    }
}
