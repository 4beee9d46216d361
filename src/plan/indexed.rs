//! [`IndexedSet`]: an independent one-axis index array grouped by chunk (CSR).

use super::{PlanError, Result, grid_err};
use crate::grid::DimensionGrid;
use crate::index::IndexArray;

/// The touched chunks of one storage dimension whose map is `offset + stride * a[x_k]`, an
/// index array varying over input axis `k` only, which no other map reads.
///
/// Compressed rows by chunk: row `r` owns points `pointer[r]..pointer[r+1]`; `local` holds
/// their chunk-local coordinates and `positions` their positions along axis `k` (relative to
/// the axis start), stable (request order) within a chunk. Repeated coordinates stay
/// distinct points. When the storage coordinates are already chunk-sorted, no sort is done
/// and `positions` is the identity (not stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedSet {
    dim: usize,
    input_axis: usize,
    chunk: Vec<i64>,
    chunk_start: Vec<i64>,
    chunk_extent: Vec<u64>,
    chunk_size: Vec<u64>,
    pointer: Vec<usize>,
    local: Vec<i64>,
    positions: Option<Vec<usize>>,
}

/// The values of an index array as one contiguous C-order slice.
pub(crate) fn contiguous(array: &IndexArray) -> std::borrow::Cow<'_, [i64]> {
    match array.as_array().as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(array.view().iter().copied().collect()),
    }
}

/// Checks `offset + stride * v` stays in i64 over `[min, max]` and returns the storage
/// `(min, max)`.
pub(crate) fn storage_range(
    dim: usize,
    offset: i64,
    stride: i64,
    vmin: i64,
    vmax: i64,
) -> Result<(i64, i64)> {
    let a = offset as i128 + stride as i128 * vmin as i128;
    let b = offset as i128 + stride as i128 * vmax as i128;
    match (i64::try_from(a.min(b)), i64::try_from(a.max(b))) {
        (Ok(lo), Ok(hi)) => Ok((lo, hi)),
        _ => Err(PlanError::Overflow(format!(
            "storage dimension {dim}: {offset} + {stride} * v for v in [{vmin}, {vmax}] leaves i64"
        ))),
    }
}

/// Stable grouping of `keys` (small non-negative integers below `range`, or arbitrary):
/// returns the permutation sorting the keys, stable for equal keys, or `None` if the keys
/// are already non-decreasing.
pub(crate) fn group_order(keys: &[u64], range: Option<u64>) -> Option<Vec<usize>> {
    if keys.windows(2).all(|w| w[0] <= w[1]) {
        return None;
    }
    let n = keys.len();
    match range {
        Some(r) if r as u128 <= (2 * n as u128).max(4096) => {
            // Counting sort: O(n + r), r bounded by O(n).
            let mut counts = vec![0usize; r as usize + 1];
            for &k in keys {
                counts[k as usize + 1] += 1;
            }
            for i in 1..counts.len() {
                counts[i] += counts[i - 1];
            }
            let mut order = vec![0usize; n];
            for (p, &k) in keys.iter().enumerate() {
                let slot = &mut counts[k as usize];
                order[*slot] = p;
                *slot += 1;
            }
            Some(order)
        }
        _ => {
            let mut pairs: Vec<(u64, usize)> = keys.iter().copied().zip(0..).collect();
            // Positions are unique, so an unstable sort on (key, position) is stable in key.
            pairs.sort_unstable();
            Some(pairs.into_iter().map(|(_, p)| p).collect())
        }
    }
}

impl IndexedSet {
    pub(crate) fn build(
        dim: usize,
        input_axis: usize,
        array: &IndexArray,
        offset: i64,
        stride: i64,
        grid: &dyn DimensionGrid,
    ) -> Result<Self> {
        let values = contiguous(array);
        let values: &[i64] = &values;
        let n = values.len();
        let mut s = IndexedSet {
            dim,
            input_axis,
            chunk: vec![],
            chunk_start: vec![],
            chunk_extent: vec![],
            chunk_size: vec![],
            pointer: vec![0],
            local: Vec::with_capacity(n),
            positions: None,
        };
        if n == 0 {
            return Ok(s);
        }
        let (vmin, vmax) = values
            .iter()
            .fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let (smin, smax) = storage_range(dim, offset, stride, vmin, vmax)?;
        let e = grid_err(dim);
        // Probe the extremes so an out-of-grid error names the coordinate.
        grid.index_to_chunk(smin).map_err(&e)?;
        grid.index_to_chunk(smax).map_err(&e)?;
        // Wrapping arithmetic is exact: every true result lies in [smin, smax] ⊂ i64.
        let st = |v: i64| offset.wrapping_add(stride.wrapping_mul(v));
        let sorted = if stride > 0 {
            values.windows(2).all(|w| w[0] <= w[1])
        } else {
            values.windows(2).all(|w| w[0] >= w[1])
        };
        if sorted {
            // Chunk-sorted: one lookup and one binary search per touched chunk.
            let mut i = 0usize;
            while i < n {
                let v = st(values[i]);
                let c = grid.index_to_chunk(v).map_err(&e)?;
                let (start, end) = s.push_chunk(c, grid)?;
                if v < start || v >= end {
                    return Err(PlanError::InconsistentGrid {
                        dim,
                        message: format!("coordinate {v} maps to chunk {c}, data [{start}, {end})"),
                    });
                }
                let j = i + values[i..].partition_point(|&x| st(x) < end);
                s.local.extend(values[i..j].iter().map(|&x| st(x) - start));
                s.pointer.push(j);
                i = j;
            }
            return Ok(s);
        }
        let storage: Vec<i64> = values.iter().map(|&v| st(v)).collect();
        let mut ids = vec![0i64; n];
        grid.indices_to_chunks(&storage, &mut ids).map_err(&e)?;
        let (idmin, idmax) = ids
            .iter()
            .fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let keys: Vec<u64> = ids
            .iter()
            .map(|&c| (c as i128 - idmin as i128) as u64)
            .collect();
        let range = (idmax as i128 - idmin as i128 + 1) as u64;
        let order = group_order(&keys, Some(range));
        let at = |j: usize| order.as_ref().map_or(j, |o| o[j]);
        let mut j = 0usize;
        while j < n {
            let c = ids[at(j)];
            let (start, _) = s.push_chunk(c, grid)?;
            let mut k = j;
            while k < n && ids[at(k)] == c {
                s.local.push(storage[at(k)] - start);
                k += 1;
            }
            s.pointer.push(k);
            j = k;
        }
        s.positions = order;
        Ok(s)
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
        Ok((
            start,
            i64::try_from(start as i128 + ext as i128).unwrap_or(i64::MAX),
        ))
    }

    /// The storage dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The input axis the array varies over.
    pub fn input_axis(&self) -> usize {
        self.input_axis
    }

    /// Number of rows (touched chunks).
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

    /// CSR pointer: row `r` owns points `pointer[r]..pointer[r + 1]`.
    pub fn pointer(&self) -> &[usize] {
        &self.pointer
    }

    /// Chunk-local coordinates of all points, grouped by row.
    pub fn local(&self) -> &[i64] {
        &self.local
    }

    /// Chunk-local coordinates of row `r`'s points.
    pub fn local_of(&self, r: usize) -> &[i64] {
        &self.local[self.pointer[r]..self.pointer[r + 1]]
    }

    /// Positions along the input axis, grouped by row; `None` means the identity
    /// (already chunk-sorted input).
    pub fn positions(&self) -> Option<&[usize]> {
        self.positions.as_deref()
    }

    /// Position along the input axis of grouped point `j`.
    pub fn position(&self, j: usize) -> usize {
        self.positions.as_ref().map_or(j, |p| p[j])
    }
}
