//! [`StridedSet`]: one row per touched chunk of a constant or affine storage dimension.

use super::{PlanError, Result, grid_err};
use crate::grid::DimensionGrid;

/// The touched chunks of one storage dimension whose map is a constant or the only affine
/// map `offset + stride * x[k]` reading input axis `k` (stride ≠ 0).
///
/// Rows are in ascending chunk order for either stride sign. Per row: the chunk id, its
/// start and valid (`data_size`) and declared (`chunk_size`) lengths, the chunk-local
/// coordinate of the row's *first request cell* (`local_start`; the walk then moves by
/// `stride`), the number of request cells (`count`) and their offset from the request
/// axis start (`origin`). A constant has one row with count 1 and no input axis.
///
/// Building costs O(touched chunks) grid calls: the walk jumps from chunk to chunk with
/// exact ceiling divisions, so a sparse stride never visits untouched chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedSet {
    dim: usize,
    input_axis: Option<usize>,
    stride: i64,
    chunk: Vec<i64>,
    chunk_start: Vec<i64>,
    chunk_extent: Vec<u64>,
    chunk_size: Vec<u64>,
    local_start: Vec<i64>,
    count: Vec<u64>,
    origin: Vec<u64>,
}

impl StridedSet {
    fn empty(dim: usize, input_axis: Option<usize>, stride: i64) -> Self {
        StridedSet {
            dim,
            input_axis,
            stride,
            chunk: vec![],
            chunk_start: vec![],
            chunk_extent: vec![],
            chunk_size: vec![],
            local_start: vec![],
            count: vec![],
            origin: vec![],
        }
    }

    fn push_chunk(&mut self, c: i64, grid: &dyn DimensionGrid) -> Result<(i64, i64)> {
        let e = grid_err(self.dim);
        let start = grid.chunk_offset(c).map_err(&e)?;
        let ext = grid.data_size(c).map_err(&e)?;
        let size = grid.chunk_size(c).map_err(&e)?;
        self.chunk.push(c);
        self.chunk_start.push(start);
        self.chunk_extent.push(ext);
        self.chunk_size.push(size);
        let end = start as i128 + ext as i128;
        Ok((start, i64::try_from(end).unwrap_or(i64::MAX)))
    }

    /// The single row of a constant map.
    pub(crate) fn constant(dim: usize, offset: i64, grid: &dyn DimensionGrid) -> Result<Self> {
        let mut s = Self::empty(dim, None, 0);
        let c = grid.index_to_chunk(offset).map_err(grid_err(dim))?;
        let (start, end) = s.push_chunk(c, grid)?;
        if offset < start || offset >= end {
            return Err(inconsistent(dim, offset, c, start, end));
        }
        s.local_start.push(offset - start);
        s.count.push(1);
        s.origin.push(0);
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
        // t counts request cells in ascending storage order: storage = min + a * t.
        let mut t: i128 = 0;
        while t < n {
            let v = (min + a * t) as i64;
            let c = grid.index_to_chunk(v).map_err(grid_err(dim))?;
            let (start, end) = s.push_chunk(c, grid)?;
            if v < start || v >= end {
                return Err(inconsistent(dim, v, c, start, end));
            }
            let t_end = ((end as i128 - min + a - 1) / a).min(n);
            let count = t_end - t;
            if stride > 0 {
                s.origin.push(t as u64);
                s.local_start.push(v - start);
            } else {
                s.origin.push((n - t_end) as u64);
                s.local_start
                    .push((min + a * (t_end - 1) - start as i128) as i64);
            }
            s.count.push(count as u64);
            t = t_end;
        }
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
        self.chunk.len()
    }

    /// True if no row.
    pub fn is_empty(&self) -> bool {
        self.chunk.is_empty()
    }

    /// Chunk id per row (ascending).
    pub fn chunks(&self) -> &[i64] {
        &self.chunk
    }

    /// Global start of each row's chunk.
    pub fn chunk_starts(&self) -> &[i64] {
        &self.chunk_start
    }

    /// Valid (clipped) length of each row's chunk.
    pub fn chunk_extents(&self) -> &[u64] {
        &self.chunk_extent
    }

    /// Declared length of each row's chunk.
    pub fn chunk_sizes(&self) -> &[u64] {
        &self.chunk_size
    }

    /// Chunk-local coordinate of each row's first request cell.
    pub fn local_starts(&self) -> &[i64] {
        &self.local_start
    }

    /// Number of request cells per row.
    pub fn counts(&self) -> &[u64] {
        &self.count
    }

    /// Offset of each row's first request cell from the request axis start.
    pub fn origins(&self) -> &[u64] {
        &self.origin
    }

    /// True if row `r` covers every valid cell of its chunk exactly once.
    pub fn is_full(&self, r: usize) -> bool {
        self.count[r] == self.chunk_extent[r] && (self.stride.abs() == 1 || self.count[r] == 1)
    }
}

fn inconsistent(dim: usize, v: i64, c: i64, start: i64, end: i64) -> PlanError {
    PlanError::InconsistentGrid {
        dim,
        message: format!("coordinate {v} maps to chunk {c}, whose data is [{start}, {end})"),
    }
}
