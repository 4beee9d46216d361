//! [`JointSet`]: a connected component of maps that share input axes, grouped by chunk tuple.

use super::indexed::{
    Grouping, check_points, chunk_keys, contiguous, group_keys, group_rows, regular_keys_and_local,
    storage_range,
};
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

/// The storage coordinates of one member over the block: computed from the array's values
/// when the array spans the whole block, else broadcast into a column.
enum Col<'a> {
    Direct {
        values: std::borrow::Cow<'a, [i64]>,
        offset: i64,
        stride: i64,
    },
    Filled(Vec<i64>),
}

impl Col<'_> {
    #[inline]
    fn get(&self, p: usize) -> i64 {
        match self {
            Col::Direct {
                values,
                offset,
                stride,
            } => offset.wrapping_add(stride.wrapping_mul(values[p])),
            Col::Filled(v) => v[p],
        }
    }
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
    /// Per grouped point: its k chunk-local coordinates, then its flat block position.
    data: Vec<u32>,
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
        let mut storage: Vec<Col<'_>> = Vec::with_capacity(k);
        let mut mins = Vec::with_capacity(k);
        let mut radix: Vec<u128> = Vec::with_capacity(k);
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
            // (an array's range is worked out once, usually by the selection's bounds check)
            let (vmin, vmax) = match member {
                Member::Dim { axis, .. } => {
                    let (lo, hi) = domain.interval(*axis);
                    (lo < hi).then(|| (lo, hi - 1))
                }
                Member::Arr { array, .. } => array.min_max(),
            }
            .unwrap_or((i64::MAX, i64::MIN));
            let (smin, smax) = storage_range(dim, offset, stride, vmin, vmax)?;
            let e = grid_err(dim);
            // Chunk ids are monotone in the coordinate: the probes give the id range.
            let idmin = grid.index_to_chunk(smin).map_err(&e)?;
            let idmax = grid.index_to_chunk(smax).map_err(&e)?;
            mins.push(idmin);
            radix.push((idmax as i128 - idmin as i128 + 1) as u128);
            if compact == block_shape {
                storage.push(Col::Direct {
                    values,
                    offset,
                    stride,
                });
            } else {
                let mut col = Vec::with_capacity(n);
                broadcast_fill(
                    &values,
                    &compact,
                    &block_shape,
                    &|v| offset.wrapping_add(stride.wrapping_mul(v)),
                    &mut col,
                );
                storage.push(Col::Filled(col));
            }
        }
        // Keys: mixed radix over chunk ids (first dimension most significant).
        let total = radix.iter().fold(1u128, |a, &r| a.saturating_mul(r));
        let mut ids: Vec<Vec<i64>> = Vec::new();
        check_points(n, &|| format!("the joint block over input axes {axes:?}"))?;
        // Records of k local coordinates then the block position.
        let w = k + 1;
        // `data`: final u32 records (filled directly on regular grids); `wide`: i64 records
        // holding storage coordinates until chunk starts are subtracted (other grids).
        let mut data: Vec<u32> = Vec::new();
        let mut wide: Vec<i64> = Vec::new();
        // Chunk-local coordinates straight from the key computation (regular grids).
        let mut locals: Vec<Vec<u32>> = Vec::new();
        let g: Grouping = if total <= u32::MAX as u128 {
            let mut keys = vec![0u32; n];
            let mut all_local = true;
            for m in 0..k {
                let grid = grids[dims[m]].as_ref();
                let r = radix[m] as u32;
                let combine = |key: u32, d: u32| key.wrapping_mul(r).wrapping_add(d);
                if all_local {
                    let mut lv = Vec::new();
                    let done = match &storage[m] {
                        Col::Direct {
                            values,
                            offset,
                            stride,
                        } => {
                            let (o, st) = (*offset, *stride);
                            regular_keys_and_local(
                                grid,
                                values,
                                |v| o.wrapping_add(st.wrapping_mul(v)),
                                mins[m],
                                &mut keys,
                                combine,
                                &mut lv,
                            )
                        }
                        Col::Filled(col) => regular_keys_and_local(
                            grid,
                            col,
                            |v| v,
                            mins[m],
                            &mut keys,
                            combine,
                            &mut lv,
                        ),
                    }
                    .map_err(grid_err(dims[m]))?;
                    if done {
                        locals.push(lv);
                        continue;
                    }
                    all_local = false;
                    locals.clear();
                }
                match &storage[m] {
                    Col::Direct {
                        values,
                        offset,
                        stride,
                    } => {
                        let (o, st) = (*offset, *stride);
                        chunk_keys(
                            grid,
                            values,
                            |v| o.wrapping_add(st.wrapping_mul(v)),
                            mins[m],
                            &mut keys,
                            combine,
                        )
                    }
                    Col::Filled(col) => chunk_keys(grid, col, |v| v, mins[m], &mut keys, combine),
                }
                .map_err(grid_err(dims[m]))?;
            }
            if locals.len() == k {
                data = vec![0u32; n * w];
            } else {
                wide = vec![0i64; n * w];
            }
            if let [l0, l1] = &locals[..] {
                group_keys(
                    &keys,
                    total as u64,
                    false,
                    #[inline(always)]
                    |p, j| {
                        let rec = &mut data[3 * j..3 * j + 3];
                        rec[0] = l0[p];
                        rec[1] = l1[p];
                        rec[2] = p as u32;
                    },
                )
            } else if locals.len() == k {
                group_keys(&keys, total as u64, false, |p, j| {
                    let rec = &mut data[w * j..w * j + w];
                    for (m, lv) in locals.iter().enumerate() {
                        rec[m] = lv[p];
                    }
                    rec[k] = p as u32;
                })
            } else if let [c0, c1] = &storage[..] {
                group_keys(
                    &keys,
                    total as u64,
                    false,
                    #[inline(always)]
                    |p, j| {
                        let rec = &mut wide[3 * j..3 * j + 3];
                        rec[0] = c0.get(p);
                        rec[1] = c1.get(p);
                        rec[2] = p as i64;
                    },
                )
            } else {
                group_keys(&keys, total as u64, false, |p, j| {
                    let rec = &mut wide[w * j..w * j + w];
                    for (m, col) in storage.iter().enumerate() {
                        rec[m] = col.get(p);
                    }
                    rec[k] = p as i64;
                })
            }
        } else {
            for m in 0..k {
                let col: Vec<i64> = (0..n).map(|p| storage[m].get(p)).collect();
                let mut idc = vec![0i64; n];
                grids[dims[m]]
                    .indices_to_chunks(&col, &mut idc)
                    .map_err(grid_err(dims[m]))?;
                ids.push(idc);
            }
            let g = group_rows(&ids, n);
            wide = vec![0i64; n * w];
            for (j, &p) in g.order.iter().enumerate() {
                let p = p as usize;
                for (m, col) in storage.iter().enumerate() {
                    wide[j * w + m] = col.get(p);
                }
                wide[j * w + k] = p as i64;
            }
            g
        };
        let local_done = locals.len() == k;
        if g.identity {
            for p in 0..n {
                for m in 0..k {
                    if local_done {
                        data[p * w + m] = locals[m][p];
                    } else {
                        wide[p * w + m] = storage[m].get(p);
                    }
                }
                if local_done {
                    data[p * w + k] = p as u32;
                } else {
                    wide[p * w + k] = p as i64;
                }
            }
        }
        drop(locals);
        drop(storage);
        let order_ids = g.order;
        let mut s = JointSet {
            dims: dims.to_vec(),
            axes: axes.to_vec(),
            block_shape,
            chunk: vec![],
            chunk_start: vec![],
            chunk_extent: vec![],
            chunk_size: vec![],
            pointer: vec![0],
            data,
        };
        let rows = g.runs.len();
        s.chunk.reserve_exact(rows * k);
        s.chunk_start.reserve_exact(rows * k);
        s.chunk_extent.reserve_exact(rows * k);
        s.chunk_size.reserve_exact(rows * k);
        s.pointer.reserve_exact(rows);
        let mut j0 = 0usize;
        let mut row_ids = vec![0i64; k];
        let mut starts = vec![0i64; k];
        for &(key, end) in &g.runs {
            if ids.is_empty() {
                let mut rest = key;
                for m in (0..k).rev() {
                    let r = radix[m] as u64;
                    row_ids[m] = (mins[m] as i128 + (rest % r) as i128) as i64;
                    rest /= r;
                }
            } else {
                let p0 = order_ids[j0] as usize;
                for m in 0..k {
                    row_ids[m] = ids[m][p0];
                }
            }
            for m in 0..k {
                let dim = dims[m];
                let grid = grids[dim].as_ref();
                let e = grid_err(dim);
                let c = row_ids[m];
                let start = grid.chunk_offset(c).map_err(&e)?;
                s.chunk.push(c);
                s.chunk_start.push(start);
                s.chunk_extent.push(grid.data_size(c).map_err(&e)?);
                s.chunk_size.push(grid.chunk_size(c).map_err(&e)?);
                starts[m] = start;
            }
            if !local_done {
                for rec in wide[j0 * w..end * w].chunks_exact_mut(w) {
                    for (x, &st) in rec.iter_mut().zip(&starts) {
                        *x -= st;
                    }
                }
            }
            s.pointer.push(end);
            j0 = end;
        }
        if !local_done {
            // Chunk-local coordinates and positions must fit the u32 records.
            s.data = wide
                .iter()
                .map(|&x| u32::try_from(x))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| {
                    PlanError::Overflow(format!(
                        "a chunk of storage dimensions {dims:?} is longer than {} cells; \
                         joint sets store 32-bit chunk-local coordinates",
                        u32::MAX
                    ))
                })?;
        }
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

    /// Row `r`'s points as records of `dims().len() + 1` integers: the chunk-local
    /// coordinates (one per member dimension), then the flat C-order block position.
    pub fn records_of(&self, r: usize) -> &[u32] {
        let w = self.dims.len() + 1;
        &self.data[self.pointer[r] * w..self.pointer[r + 1] * w]
    }

    /// Chunk-local coordinates of grouped point `j`.
    pub fn local(&self, j: usize) -> &[u32] {
        let k = self.dims.len();
        &self.data[j * (k + 1)..j * (k + 1) + k]
    }

    /// Flat C-order block position of grouped point `j`.
    pub fn position(&self, j: usize) -> usize {
        self.data[j * (self.dims.len() + 1) + self.dims.len()] as usize
    }
}
