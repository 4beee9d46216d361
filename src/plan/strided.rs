//! [`StridedSet`]: one row per touched chunk of a constant or affine storage dimension.

use super::{PlanError, Result, grid_err};
use crate::grid::DimensionGrid;

/// One row of a [`StridedSet`]: one touched chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StridedRow {
    /// The chunk id.
    pub chunk: i64,
    /// Global start of the chunk.
    pub chunk_start: i64,
    /// Valid (clipped) length of the chunk.
    pub chunk_extent: u64,
    /// Declared length of the chunk.
    pub chunk_size: u64,
    /// Chunk-local coordinate of the row's first request cell (then steps of `stride`).
    pub local_start: i64,
    /// Number of request cells in the chunk.
    pub count: u64,
    /// Offset of the row's first request cell from the request axis start.
    pub origin: u64,
}

/// The closed form of a strided walk over a [`RegularGrid`](crate::grid::RegularGrid): rows are computed on demand in
/// O(1), so building costs O(1) whatever the number of touched chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RegularRows {
    /// Chunk of the smallest storage coordinate and its offset in that chunk.
    c0: i64,
    off0: u64,
    /// |stride| and number of request cells.
    a: u64,
    n: u64,
    ascending: bool,
    size: u64,
    grid_origin: i64,
    grid_hi: i64,
    rows: usize,
}

impl RegularRows {
    fn row(&self, r: usize) -> StridedRow {
        let (a, n, size) = (self.a as u128, self.n as u128, self.size as u128);
        let r128 = r as u128;
        let (t, t_end, off) = if self.a >= self.size {
            let rel = self.off0 as u128 + a * r128;
            (r128, r128 + 1, rel % size)
        } else {
            // Points of chunk c0 + r: storage offsets from the start of chunk c0 in
            // [r * size, (r + 1) * size), i.e. t in [ceil((r*size - off0)/a), ...).
            let t_at = |q: u128| -> u128 {
                if q == 0 {
                    0
                } else {
                    (q * size - self.off0 as u128).div_ceil(a)
                }
            };
            let t = t_at(r128);
            let t_end = t_at(r128 + 1).min(n);
            (t, t_end, self.off0 as u128 + a * t - r128 * size)
        };
        let rel_chunk = if self.a >= self.size {
            (self.off0 as u128 + a * r128) / size
        } else {
            r128
        };
        let chunk = (self.c0 as i128 + rel_chunk as i128) as i64;
        let start = self.grid_origin as i128 + chunk as i128 * size as i128;
        let count = t_end - t;
        let (origin, local) = if self.ascending {
            (t, off)
        } else {
            (n - t_end, off + a * (count - 1))
        };
        StridedRow {
            chunk,
            chunk_start: start as i64,
            chunk_extent: (self.grid_hi as i128 - start).clamp(0, size as i128) as u64,
            chunk_size: self.size,
            local_start: local as i64,
            count: count as u64,
            origin: origin as u64,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Rows {
    Table(Vec<StridedRow>),
    Regular(RegularRows),
}

/// The touched chunks of one storage dimension whose map is a constant or the only affine
/// map `offset + stride * x[k]` reading input axis `k` (stride ≠ 0).
///
/// Rows ([`StridedRow`]) are in ascending chunk order for either stride sign. A constant has
/// one row with count 1 and no input axis.
///
/// Building costs O(1) on a [`RegularGrid`](crate::grid::RegularGrid) (rows are a closed form, computed on demand)
/// and O(touched chunks) grid calls otherwise: the walk jumps from chunk to chunk with exact
/// ceiling divisions, so a sparse stride never visits untouched chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedSet {
    dim: usize,
    input_axis: Option<usize>,
    stride: i64,
    rows: Rows,
}

impl StridedSet {
    fn empty(dim: usize, input_axis: Option<usize>, stride: i64) -> Self {
        StridedSet {
            dim,
            input_axis,
            stride,
            rows: Rows::Table(vec![]),
        }
    }

    fn push_row(
        &mut self,
        c: i64,
        v: i64,
        grid: &dyn DimensionGrid,
    ) -> Result<(i64, i64, StridedRow)> {
        let (start, ext, size) = grid.chunk_span(c).map_err(grid_err(self.dim))?;
        let end = i64::try_from(start as i128 + ext as i128).unwrap_or(i64::MAX);
        if v < start || v >= end {
            return Err(inconsistent(self.dim, v, c, start, end));
        }
        let row = StridedRow {
            chunk: c,
            chunk_start: start,
            chunk_extent: ext,
            chunk_size: size,
            local_start: 0,
            count: 0,
            origin: 0,
        };
        Ok((start, end, row))
    }

    /// The single row of a constant map.
    pub(crate) fn constant(dim: usize, offset: i64, grid: &dyn DimensionGrid) -> Result<Self> {
        let mut s = Self::empty(dim, None, 0);
        let c = grid.index_to_chunk(offset).map_err(grid_err(dim))?;
        let (start, _, mut row) = s.push_row(c, offset, grid)?;
        row.local_start = offset - start;
        row.count = 1;
        s.rows = Rows::Table(vec![row]);
        Ok(s)
    }

    /// The rows of `offset + stride * x` over `x ∈ [lo, hi)` (non-empty, stride ≠ 0).
    pub(crate) fn affine(
        dim: usize,
        axis: usize,
        offset: i64,
        stride: i64,
        lo: i64,
        hi: i64,
        grid: &dyn DimensionGrid,
    ) -> Result<Self> {
        let mut s = Self::empty(dim, Some(axis), stride);
        let n = hi as i128 - lo as i128;
        let a = (stride as i128).abs();
        let first = offset as i128 + stride as i128 * lo as i128;
        let last = offset as i128 + stride as i128 * (hi as i128 - 1);
        let (min, max) = (first.min(last), first.max(last));
        if i64::try_from(min).is_err() || i64::try_from(max).is_err() {
            return Err(PlanError::Overflow(format!(
                "storage dimension {dim}: {offset} + {stride} * x over [{lo}, {hi}) leaves i64"
            )));
        }
        if let Some(g) = grid.as_regular() {
            let (glo, ghi) = g.region();
            let (min, max) = (min as i64, max as i64);
            if min < glo || max >= ghi {
                let bad = if min < glo { min } else { max };
                return Err(PlanError::Grid {
                    dim,
                    source: crate::grid::GridError::OutOfGrid {
                        index: bad,
                        lo: glo,
                        hi: ghi,
                    },
                });
            }
            let rel = min as i128 - g.origin() as i128;
            let size = g.size() as i128;
            let off0 = rel.rem_euclid(size) as u128;
            let rows = if a >= size {
                n as u128
            } else {
                (off0 + a as u128 * (n as u128 - 1)) / size as u128 + 1
            };
            if let (Ok(n), Ok(a), Ok(rows)) =
                (u64::try_from(n), u64::try_from(a), usize::try_from(rows))
            {
                s.rows = Rows::Regular(RegularRows {
                    c0: rel.div_euclid(size) as i64,
                    off0: off0 as u64,
                    a,
                    n,
                    ascending: stride > 0,
                    size: g.size(),
                    grid_origin: g.origin(),
                    grid_hi: ghi,
                    rows,
                });
                return Ok(s);
            }
        }
        // t counts request cells in ascending storage order: storage = min + a * t.
        let mut table = Vec::new();
        let mut t: i128 = 0;
        while t < n {
            let v = (min + a * t) as i64;
            let c = grid.index_to_chunk(v).map_err(grid_err(dim))?;
            let (start, end, mut row) = s.push_row(c, v, grid)?;
            let t_end = ((end as i128 - min + a - 1) / a).min(n);
            let count = t_end - t;
            if stride > 0 {
                row.origin = t as u64;
                row.local_start = v - start;
            } else {
                row.origin = (n - t_end) as u64;
                row.local_start = (min + a * (t_end - 1) - start as i128) as i64;
            }
            row.count = count as u64;
            table.push(row);
            t = t_end;
        }
        s.rows = Rows::Table(table);
        Ok(s)
    }

    /// The storage dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The input (request) axis read, `None` for a constant.
    pub fn input_axis(&self) -> Option<usize> {
        self.input_axis
    }

    /// The map's stride (0 for a constant).
    pub fn stride(&self) -> i64 {
        self.stride
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        match &self.rows {
            Rows::Table(t) => t.len(),
            Rows::Regular(r) => r.rows,
        }
    }

    /// True if no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `r` (`r < len()`), computed in O(1).
    pub fn row(&self, r: usize) -> StridedRow {
        match &self.rows {
            Rows::Table(t) => t[r],
            Rows::Regular(g) => g.row(r),
        }
    }

    /// True if row `r` covers every valid cell of its chunk exactly once.
    pub fn is_full(&self, r: usize) -> bool {
        let row = self.row(r);
        row.count == row.chunk_extent && (self.stride.abs() == 1 || row.count == 1)
    }
}

fn inconsistent(dim: usize, v: i64, c: i64, start: i64, end: i64) -> PlanError {
    PlanError::InconsistentGrid {
        dim,
        message: format!("coordinate {v} maps to chunk {c}, whose data is [{start}, {end})"),
    }
}
