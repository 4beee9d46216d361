//! [`JointSet`]: a connected component of maps that share input axes, grouped by chunk tuple.

use super::indexed::{contiguous, group_order, storage_range};
use super::{PlanError, Result, grid_err};
use crate::grid::DimensionGrid;
use crate::index::{IndexArray, IndexDomain};
use std::sync::Arc;

/// One map of a joint component.
pub(crate) enum Member<'a> {
    /// `offset + stride * x[axis]`.
    Dim {
        axis: usize,
        offset: i64,
        stride: i64,
    },
    /// `offset + stride * array[x]` (the array's varying axes are block axes).
    Arr {
        array: &'a IndexArray,
        offset: i64,
        stride: i64,
    },
}

/// A connected component of output maps that share input axes: vindex-correlated index
/// arrays, an affine diagonal (two affine maps on one input axis), or index arrays and
/// affine maps sharing an axis.
///
/// The component is evaluated pointwise over its *block*: the product of its own input
/// axes only (never the product with other components). Points are grouped by their tuple
/// of chunk ids (lexicographic, first storage dimension most significant); within a row
/// points keep ascending block order. Per point: chunk-local coordinates (one per member
/// dimension) and the flat C-order position in the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JointSet {
    dims: Vec<usize>,
    axes: Vec<usize>,
    block_shape: Vec<usize>,
    chunk: Vec<i64>,
    chunk_start: Vec<i64>,
    chunk_extent: Vec<u64>,
    chunk_size: Vec<u64>,
    pointer: Vec<usize>,
    local: Vec<i64>,
    positions: Option<Vec<usize>>,
}

/// Writes `f(values[compact index])` for every point of `block` in C order, where `compact`
/// is `block` with some extents replaced by 1 (broadcast).
fn broadcast_fill(
    values: &[i64],
    compact: &[usize],
    block: &[usize],
    f: &dyn Fn(i64) -> i64,
    out: &mut Vec<i64>,
) {
    if compact == block {
        out.extend(values.iter().map(|&v| f(v)));
        return;
    }
    let b = block.len();
    let mut cstride = vec![0usize; b];
    let mut acc = 1usize;
    for i in (0..b).rev() {
        cstride[i] = if compact[i] == 1 { 0 } else { acc };
        acc *= compact[i];
    }
    fn rec(
        level: usize,
        off: usize,
        values: &[i64],
        cstride: &[usize],
        block: &[usize],
        f: &dyn Fn(i64) -> i64,
        out: &mut Vec<i64>,
    ) {
        let n = block[level];
        if level + 1 == block.len() {
            if cstride[level] == 0 {
                let v = f(values[off]);
                out.extend(std::iter::repeat_n(v, n));
            } else {
                out.extend(values[off..off + n].iter().map(|&v| f(v)));
            }
        } else {
            for i in 0..n {
                rec(
                    level + 1,
                    off + i * cstride[level],
                    values,
                    cstride,
                    block,
                    f,
                    out,
                );
            }
        }
    }
    rec(0, 0, values, &cstride, block, f, out);
}

impl JointSet {
    pub(crate) fn build(
        dims: &[usize],
        axes: &[usize],
        members: &[Member<'_>],
        domain: &IndexDomain,
        grids: &[Arc<dyn DimensionGrid>],
    ) -> Result<Self> {
        let block_shape: Vec<usize> = axes
            .iter()
            .map(|&a| {
                usize::try_from(domain.extent(a)).map_err(|_| {
                    PlanError::Overflow(format!("input axis {a}: extent exceeds usize"))
                })
            })
            .collect::<Result<_>>()?;
        let n = block_shape
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .ok_or_else(|| {
                PlanError::Overflow(format!(
                    "the joint block over input axes {axes:?} has more than usize::MAX points"
                ))
            })?;
        let k = members.len();
        let mut storage: Vec<Vec<i64>> = Vec::with_capacity(k);
        let mut ids: Vec<Vec<i64>> = Vec::with_capacity(k);
        for (m, member) in members.iter().enumerate() {
            let dim = dims[m];
            let grid = grids[dim].as_ref();
            let (values, compact, offset, stride): (
                std::borrow::Cow<'_, [i64]>,
                Vec<usize>,
                i64,
                i64,
            ) = match member {
                Member::Dim {
                    axis,
                    offset,
                    stride,
                } => {
                    let (lo, hi) = domain.interval(*axis);
                    let vals: Vec<i64> = (lo..hi).collect();
                    let compact = axes
                        .iter()
                        .zip(&block_shape)
                        .map(|(&a, &e)| if a == *axis { e } else { 1 })
                        .collect();
                    (std::borrow::Cow::Owned(vals), compact, *offset, *stride)
                }
                Member::Arr {
                    array,
                    offset,
                    stride,
                } => {
                    let compact = axes.iter().map(|&a| array.shape()[a]).collect();
                    (contiguous(array), compact, *offset, *stride)
                }
            };
            let (vmin, vmax) = values
                .iter()
                .fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
            let (smin, smax) = storage_range(dim, offset, stride, vmin, vmax)?;
            let e = grid_err(dim);
            grid.index_to_chunk(smin).map_err(&e)?;
            grid.index_to_chunk(smax).map_err(&e)?;
            let mut col = Vec::with_capacity(n);
            broadcast_fill(
                &values,
                &compact,
                &block_shape,
                &|v| offset.wrapping_add(stride.wrapping_mul(v)),
                &mut col,
            );
            let mut idc = vec![0i64; n];
            grid.indices_to_chunks(&col, &mut idc).map_err(&e)?;
            storage.push(col);
            ids.push(idc);
        }
        // Keys: mixed radix over chunk ids (first dimension most significant).
        let mut mins = Vec::with_capacity(k);
        let mut total: u128 = 1;
        let mut radix = Vec::with_capacity(k);
        for idc in &ids {
            let (lo, hi) = idc
                .iter()
                .fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
            let r = (hi as i128 - lo as i128 + 1) as u128;
            mins.push(lo);
            radix.push(r);
            total = total.saturating_mul(r);
        }
        let order: Option<Vec<usize>>;
        let same: Box<dyn Fn(usize, usize) -> bool + '_>;
        if n == 0 {
            order = None;
            same = Box::new(|_, _| true);
        } else if total <= u64::MAX as u128 {
            let mut keys = vec![0u64; n];
            for (m, idc) in ids.iter().enumerate() {
                let mn = mins[m];
                let r = radix[m] as u64;
                for (key, &c) in keys.iter_mut().zip(idc) {
                    *key = key
                        .wrapping_mul(r)
                        .wrapping_add((c as i128 - mn as i128) as u64);
                }
            }
            order = group_order(&keys, Some(total as u64));
            same = Box::new(move |a, b| keys[a] == keys[b]);
        } else {
            let ids_ref = &ids;
            let cmp = |a: usize, b: usize| {
                ids_ref
                    .iter()
                    .map(|c| c[a].cmp(&c[b]))
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            };
            let sorted = (1..n).all(|p| cmp(p - 1, p).is_le());
            order = if sorted {
                None
            } else {
                let mut o: Vec<usize> = (0..n).collect();
                o.sort_by(|&a, &b| cmp(a, b).then(a.cmp(&b)));
                Some(o)
            };
            same = Box::new(move |a, b| cmp(a, b).is_eq());
        }
        let at = |j: usize| order.as_ref().map_or(j, |o| o[j]);
        let mut s = JointSet {
            dims: dims.to_vec(),
            axes: axes.to_vec(),
            block_shape,
            chunk: vec![],
            chunk_start: vec![],
            chunk_extent: vec![],
            chunk_size: vec![],
            pointer: vec![0],
            local: Vec::with_capacity(n * k),
            positions: None,
        };
        let mut starts = vec![0i64; k];
        let mut j = 0usize;
        while j < n {
            let p0 = at(j);
            for m in 0..k {
                let dim = dims[m];
                let grid = grids[dim].as_ref();
                let e = grid_err(dim);
                let c = ids[m][p0];
                let start = grid.chunk_offset(c).map_err(&e)?;
                s.chunk.push(c);
                s.chunk_start.push(start);
                s.chunk_extent.push(grid.data_size(c).map_err(&e)?);
                s.chunk_size.push(grid.chunk_size(c).map_err(&e)?);
                starts[m] = start;
            }
            let mut q = j;
            while q < n && same(p0, at(q)) {
                let p = at(q);
                for m in 0..k {
                    s.local.push(storage[m][p] - starts[m]);
                }
                q += 1;
            }
            s.pointer.push(q);
            j = q;
        }
        drop(same);
        s.positions = order;
        Ok(s)
    }

    /// The storage dimensions of the component, ascending.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The input axes of the block, ascending.
    pub fn axes(&self) -> &[usize] {
        &self.axes
    }

    /// The block shape (extents of [`axes`](Self::axes)).
    pub fn block_shape(&self) -> &[usize] {
        &self.block_shape
    }

    /// Number of rows (touched chunk tuples).
    pub fn len(&self) -> usize {
        self.pointer.len() - 1
    }

    /// True if no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Chunk ids of row `r`, one per member dimension.
    pub fn chunk_row(&self, r: usize) -> &[i64] {
        let k = self.dims.len();
        &self.chunk[r * k..(r + 1) * k]
    }

    /// Chunk starts of row `r`, one per member dimension.
    pub fn chunk_start_row(&self, r: usize) -> &[i64] {
        let k = self.dims.len();
        &self.chunk_start[r * k..(r + 1) * k]
    }

    /// Valid (clipped) chunk lengths of row `r`, one per member dimension.
    pub fn chunk_extent_row(&self, r: usize) -> &[u64] {
        let k = self.dims.len();
        &self.chunk_extent[r * k..(r + 1) * k]
    }

    /// Declared chunk lengths of row `r`, one per member dimension.
    pub fn chunk_size_row(&self, r: usize) -> &[u64] {
        let k = self.dims.len();
        &self.chunk_size[r * k..(r + 1) * k]
    }

    /// CSR pointer: row `r` owns points `pointer[r]..pointer[r + 1]`.
    pub fn pointer(&self) -> &[usize] {
        &self.pointer
    }

    /// Chunk-local coordinates of row `r`'s points (points × member dimensions, row-major).
    pub fn local_of(&self, r: usize) -> &[i64] {
        let k = self.dims.len();
        &self.local[self.pointer[r] * k..self.pointer[r + 1] * k]
    }

    /// Flat C-order block position of grouped point `j`.
    pub fn position(&self, j: usize) -> usize {
        self.positions.as_ref().map_or(j, |p| p[j])
    }
}
