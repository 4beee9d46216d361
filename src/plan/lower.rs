//! The execution lowering ([`ChunkOp`]) and the declarative projection
//! ([`ChunkProjection`]) of one plan row.

use ndarray::{ArrayD, IxDyn};

use super::{Binding, GridPartition, PlanError, Result, SynAxis, Table};
use crate::index::shape::c_strides;
use crate::index::{IndexArray, IndexDomain, IndexTransform, OutputIndexMap};

/// Whether a chunk operation covers the valid data of its chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coverage {
    /// Every valid cell of the chunk (`[0, data_size)` per dimension) is hit exactly once:
    /// a writer may skip reading the chunk.
    Full,
    /// Some valid cell is missed or hit more than once.
    Partial,
    /// Not proven either way. This planner proves every case, so it never produces
    /// `Unknown`; the variant exists for consumers of the reference semantics.
    Unknown,
}

/// The chunk side of one loop axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisSource {
    /// Step `i` reads chunk-local coordinate `start + stride * i` in storage dimension
    /// `dim`; `dim = None` (an unread request axis, a broadcast) reads nothing new.
    Run {
        /// The storage dimension, `None` for a broadcast axis.
        dim: Option<usize>,
        /// Chunk-local coordinate of step 0.
        start: i64,
        /// Signed step (never 0 when `dim` is `Some`).
        stride: i64,
    },
    /// Step `i` reads chunk-local coordinate `starts[m] + strides[m] * i` in each storage
    /// dimension `dims[m]` (an affine diagonal: several storage dimensions move together).
    Line {
        /// The storage dimensions set by this axis.
        dims: Vec<usize>,
        /// Chunk-local coordinates of step 0, one per dimension.
        starts: Vec<i64>,
        /// Signed steps, one per dimension (never 0).
        strides: Vec<i64>,
    },
    /// Step `i` reads the chunk-local coordinates `local[i * dims.len() ..][..dims.len()]`
    /// in storage dimensions `dims`.
    Points {
        /// The storage dimensions set by this axis.
        dims: Vec<usize>,
        /// Chunk-local coordinates, steps × dims, row-major.
        local: Vec<i64>,
    },
}

/// The destination side of one loop axis, in zero-origin coordinates of the result buffer
/// (request coordinate minus request origin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisDest {
    /// Step `i` writes result coordinate `start + stride * i` along result axis `axis`.
    Run {
        /// The result (request) axis.
        axis: usize,
        /// Result coordinate of step 0.
        start: i64,
        /// Step along the axis (1 as planned; -1 after [`LoopAxis::ascending`]).
        stride: i64,
    },
    /// Step `i` writes the result coordinates `coords[i * axes.len() ..][..axes.len()]`
    /// along result axes `axes`.
    Points {
        /// The result axes set by this axis.
        axes: Vec<usize>,
        /// Result coordinates, steps × axes, row-major.
        coords: Vec<i64>,
    },
}

/// One loop of a chunk operation: `count` steps, each moving in the chunk and in the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopAxis {
    /// Number of steps.
    pub count: u64,
    /// Where each step reads in the chunk.
    pub source: AxisSource,
    /// Where each step lands in the result.
    pub dest: AxisDest,
}

impl LoopAxis {
    /// The same loop walking the chunk in ascending order: a run with a negative chunk
    /// stride is flipped (its destination stride becomes negative). Other loops unchanged.
    pub fn ascending(&self) -> LoopAxis {
        match (&self.source, &self.dest) {
            (
                AxisSource::Run {
                    dim: Some(d),
                    start,
                    stride,
                },
                AxisDest::Run {
                    axis,
                    start: ds,
                    stride: dt,
                },
            ) if *stride < 0 && self.count > 0 => {
                let last = self.count as i64 - 1;
                LoopAxis {
                    count: self.count,
                    source: AxisSource::Run {
                        dim: Some(*d),
                        start: start + stride * last,
                        stride: -stride,
                    },
                    dest: AxisDest::Run {
                        axis: *axis,
                        start: ds + dt * last,
                        stride: -dt,
                    },
                }
            }
            _ => self.clone(),
        }
    }
}

/// One chunk operation, ready for a scatter/gather kernel.
///
/// The cells of the operation are the product of its loop axes. Cell `(i_0, i_1, ...)` reads
/// chunk-local coordinates `base_local` updated by each loop's [`AxisSource`] and lands at
/// the result coordinates set by each loop's [`AxisDest`] (every storage dimension and every
/// result axis is set by exactly one loop, except constant storage dimensions, which keep
/// their `base_local` value). Loops are in the order of the synthetic domain of the
/// matching [`ChunkProjection`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkOp {
    /// The plan row (one index per table).
    pub row: Vec<usize>,
    /// Chunk coordinates, one per storage dimension.
    pub chunk_coords: Vec<i64>,
    /// Global start of the chunk per storage dimension.
    pub chunk_start: Vec<i64>,
    /// Declared chunk shape (codec buffer).
    pub chunk_shape: Vec<u64>,
    /// Valid (clipped) chunk shape.
    pub data_shape: Vec<u64>,
    /// Chunk-local coordinates before the loops (the constant dimensions' values).
    pub base_local: Vec<i64>,
    /// The loops.
    pub axes: Vec<LoopAxis>,
    /// Shape of the result buffer (the request domain's shape).
    pub result_shape: Vec<u64>,
    /// Whether the operation covers its chunk.
    pub coverage: Coverage,
}

impl ChunkOp {
    /// Number of cells (product of the loop counts).
    pub fn num_cells(&self) -> u128 {
        self.axes.iter().map(|a| a.count as u128).product()
    }

    /// Calls `f(local, dest)` for every cell: chunk-local coordinates (per storage
    /// dimension) and zero-origin result coordinates (per result axis), last loop fastest.
    pub fn for_each_cell(&self, mut f: impl FnMut(&[i64], &[i64])) {
        let mut local = self.base_local.clone();
        let mut dest = vec![0i64; self.result_shape.len()];
        if self.axes.iter().any(|a| a.count == 0) {
            return;
        }
        rec_cells(&self.axes, &mut local, &mut dest, &mut f);
    }

    /// Calls `f(source_offset, dest_offset)` for every cell, with linear offsets computed
    /// from element strides of the chunk buffer (per storage dimension) and of the result
    /// buffer (per result axis), e.g. C-order strides. The scatter/gather inner loop.
    pub fn for_each_linear(
        &self,
        chunk_strides: &[i64],
        result_strides: &[i64],
        mut f: impl FnMut(i64, i64),
    ) {
        if self.axes.iter().any(|a| a.count == 0) {
            return;
        }
        let base: i64 = self
            .base_local
            .iter()
            .zip(chunk_strides)
            .map(|(l, s)| l * s)
            .sum();
        rec_linear(&self.axes, chunk_strides, result_strides, base, 0, &mut f);
    }

    /// The operation as a write: every broadcast loop (a request axis that reads nothing
    /// new in the chunk, e.g. under a stride-0 map or a broadcast index array) is cut to its
    /// last step, and the coverage is proven again.
    ///
    /// All steps of such a loop land on the same chunk cells, so writing them one after
    /// the other leaves the values of the last step: NumPy's and TensorStore's rule (the
    /// last cell in C order of the request wins). The write then visits the image of the
    /// request in the chunk, not the request: a 10^9 × 10^9 domain mapped onto one cell is
    /// one cell. A loop with no step is kept (the operation writes nothing).
    pub fn last_writer(self) -> ChunkOp {
        if !self
            .axes
            .iter()
            .any(|a| a.count > 1 && matches!(a.source, AxisSource::Run { dim: None, .. }))
        {
            return self;
        }
        let mut op = self;
        for a in &mut op.axes {
            if a.count <= 1 || !matches!(a.source, AxisSource::Run { dim: None, .. }) {
                continue;
            }
            let last = a.count - 1;
            a.dest = match &a.dest {
                AxisDest::Run {
                    axis,
                    start,
                    stride,
                } => AxisDest::Run {
                    axis: *axis,
                    start: start + stride * last as i64,
                    stride: *stride,
                },
                AxisDest::Points { axes, coords } => {
                    let w = axes.len();
                    let at = usize::try_from(last)
                        .unwrap_or(usize::MAX)
                        .saturating_mul(w);
                    AxisDest::Points {
                        axes: axes.clone(),
                        coords: coords.get(at..at + w).unwrap_or_default().to_vec(),
                    }
                }
            };
            a.count = 1;
        }
        op.coverage = coverage_of(&op);
        op
    }

    /// The operation addressing, instead of the result, an array of `shape` broadcast to it
    /// (NumPy's rule: `shape` has the result's rank and each extent is the result's or 1):
    /// destinations along axes of extent 1 become 0 and `result_shape` becomes `shape`. A
    /// write then reads broadcast values where they are, never materialised.
    pub fn broadcast_dest(mut self, shape: &[u64]) -> Result<ChunkOp> {
        if shape.len() != self.result_shape.len()
            || shape
                .iter()
                .zip(&self.result_shape)
                .any(|(&v, &r)| v != r && v != 1)
        {
            return Err(PlanError::RankMismatch(format!(
                "values of shape {shape:?} do not broadcast to the result shape {:?}",
                self.result_shape
            )));
        }
        let flat = |k: usize| shape[k] == 1 && self.result_shape[k] != 1;
        for a in &mut self.axes {
            match &mut a.dest {
                AxisDest::Run {
                    axis,
                    start,
                    stride,
                } if flat(*axis) => {
                    *start = 0;
                    *stride = 0;
                }
                AxisDest::Run { .. } => {}
                AxisDest::Points { axes, coords } => {
                    let w = axes.len().max(1);
                    for (m, &k) in axes.iter().enumerate() {
                        if flat(k) {
                            coords.iter_mut().skip(m).step_by(w).for_each(|c| *c = 0);
                        }
                    }
                }
            }
        }
        self.result_shape = shape.to_vec();
        Ok(self)
    }

    /// C-order element strides of the declared chunk shape.
    pub fn chunk_c_strides(&self) -> Vec<i64> {
        c_strides(&self.chunk_shape)
    }

    /// C-order element strides of the result buffer.
    pub fn result_c_strides(&self) -> Vec<i64> {
        c_strides(&self.result_shape)
    }
}

fn rec_cells(
    axes: &[LoopAxis],
    local: &mut [i64],
    dest: &mut [i64],
    f: &mut dyn FnMut(&[i64], &[i64]),
) {
    let Some((a, rest)) = axes.split_first() else {
        f(local, dest);
        return;
    };
    for i in 0..a.count as usize {
        match &a.source {
            AxisSource::Run {
                dim: Some(d),
                start,
                stride,
            } => local[*d] = start + stride * i as i64,
            AxisSource::Run { dim: None, .. } => {}
            AxisSource::Line {
                dims,
                starts,
                strides,
            } => {
                for (m, &d) in dims.iter().enumerate() {
                    local[d] = starts[m] + strides[m] * i as i64;
                }
            }
            AxisSource::Points { dims, local: l } => {
                for (m, &d) in dims.iter().enumerate() {
                    local[d] = l[i * dims.len() + m];
                }
            }
        }
        match &a.dest {
            AxisDest::Run {
                axis,
                start,
                stride,
            } => dest[*axis] = start + stride * i as i64,
            AxisDest::Points { axes: ax, coords } => {
                for (m, &k) in ax.iter().enumerate() {
                    dest[k] = coords[i * ax.len() + m];
                }
            }
        }
        rec_cells(rest, local, dest, f);
    }
}

fn rec_linear(
    axes: &[LoopAxis],
    cs: &[i64],
    rs: &[i64],
    src: i64,
    dst: i64,
    f: &mut dyn FnMut(i64, i64),
) {
    let Some((a, rest)) = axes.split_first() else {
        f(src, dst);
        return;
    };
    let n = a.count as usize;
    // Per-step (offset, delta) for runs; per-point offsets for lists.
    let (s0, sd, sl): (i64, i64, Option<Vec<i64>>) = match &a.source {
        AxisSource::Run {
            dim: Some(d),
            start,
            stride,
        } => (start * cs[*d], stride * cs[*d], None),
        AxisSource::Run { dim: None, .. } => (0, 0, None),
        AxisSource::Line {
            dims,
            starts,
            strides,
        } => (
            dims.iter().zip(starts).map(|(&d, s)| s * cs[d]).sum(),
            dims.iter().zip(strides).map(|(&d, s)| s * cs[d]).sum(),
            None,
        ),
        AxisSource::Points { dims, local } => (
            0,
            0,
            Some(
                local
                    .chunks(dims.len().max(1))
                    .map(|row| row.iter().zip(dims).map(|(l, &d)| l * cs[d]).sum())
                    .collect(),
            ),
        ),
    };
    let (d0, dd, dl): (i64, i64, Option<Vec<i64>>) = match &a.dest {
        AxisDest::Run {
            axis,
            start,
            stride,
        } => (start * rs[*axis], stride * rs[*axis], None),
        AxisDest::Points { axes: ax, coords } => (
            0,
            0,
            Some(
                coords
                    .chunks(ax.len().max(1))
                    .map(|row| row.iter().zip(ax).map(|(c, &k)| c * rs[k]).sum())
                    .collect(),
            ),
        ),
    };
    for i in 0..n {
        let so = sl.as_ref().map_or(s0 + sd * i as i64, |v| v[i]);
        let doff = dl.as_ref().map_or(d0 + dd * i as i64, |v| v[i]);
        rec_linear(rest, cs, rs, src + so, dst + doff, f);
    }
}

/// Unravels a flat C-order position over `shape`.
fn unravel(mut p: usize, shape: &[usize], out: &mut [i64]) {
    for i in (0..shape.len()).rev() {
        let n = shape[i].max(1);
        out[i] = (p % n) as i64;
        p /= n;
    }
}

/// Exact coverage: every valid cell hit exactly once.
fn coverage_of(op: &ChunkOp) -> Coverage {
    let mut bound = vec![false; op.data_shape.len()];
    for a in &op.axes {
        match &a.source {
            AxisSource::Run { dim: None, .. } => {
                if a.count > 1 {
                    return Coverage::Partial;
                }
            }
            AxisSource::Run {
                dim: Some(d),
                stride,
                ..
            } => {
                bound[*d] = true;
                if a.count != op.data_shape[*d] || (stride.abs() != 1 && a.count != 1) {
                    return Coverage::Partial;
                }
            }
            AxisSource::Line { dims, .. } => {
                // Distinct points (non-zero strides) inside the chunk: full iff they are as
                // many as its valid cells.
                let mut cells: u128 = 1;
                for &d in dims {
                    bound[d] = true;
                    cells = cells.saturating_mul(op.data_shape[d] as u128);
                }
                if a.count as u128 != cells {
                    return Coverage::Partial;
                }
            }
            AxisSource::Points { dims, local } => {
                let mut cells: u128 = 1;
                for &d in dims {
                    bound[d] = true;
                    cells = cells.saturating_mul(op.data_shape[d] as u128);
                }
                if a.count as u128 != cells {
                    return Coverage::Partial;
                }
                // count == cells: full iff the points are distinct (all lie in the chunk).
                let mut seen = vec![false; cells as usize];
                for row in local.chunks(dims.len()) {
                    let mut flat = 0usize;
                    for (m, &d) in dims.iter().enumerate() {
                        flat = flat * op.data_shape[d] as usize + row[m] as usize;
                    }
                    if std::mem::replace(&mut seen[flat], true) {
                        return Coverage::Partial;
                    }
                }
            }
        }
    }
    for (d, b) in bound.iter().enumerate() {
        if !b && op.data_shape[d] != 1 {
            return Coverage::Partial;
        }
    }
    Coverage::Full
}

/// Lowers one row of the partition.
pub(crate) fn lower_row(p: &GridPartition, row: &[usize]) -> Result<ChunkOp> {
    p.check_row(row)?;
    let out_rank = p.dim_table.len();
    let mut op = ChunkOp {
        row: row.to_vec(),
        chunk_coords: vec![0; out_rank],
        chunk_start: vec![0; out_rank],
        chunk_shape: vec![0; out_rank],
        data_shape: vec![0; out_rank],
        base_local: vec![0; out_rank],
        axes: Vec::with_capacity(p.syn_axes.len()),
        result_shape: p.request_shape.clone(),
        coverage: Coverage::Unknown,
    };
    for (table, &r) in p.tables.iter().zip(row) {
        match table {
            Table::Strided(s) => {
                let d = s.dim();
                let row = s.row(r);
                op.chunk_coords[d] = row.chunk;
                op.chunk_start[d] = row.chunk_start;
                op.chunk_shape[d] = row.chunk_size;
                op.data_shape[d] = row.chunk_extent;
                if s.input_axis().is_none() {
                    op.base_local[d] = row.local_start;
                }
            }
            Table::Indexed(s) => {
                let d = s.dim();
                op.chunk_coords[d] = s.chunks()[r];
                op.chunk_start[d] = s.chunk_starts()[r];
                op.chunk_shape[d] = s.chunk_sizes()[r];
                op.data_shape[d] = s.chunk_extents()[r];
            }
            Table::Diagonal(s) => {
                for (&d, c) in s.dims().iter().zip(s.cells(r)) {
                    op.chunk_coords[d] = c.chunk;
                    op.chunk_start[d] = c.chunk_start;
                    op.chunk_shape[d] = c.chunk_size;
                    op.data_shape[d] = c.chunk_extent;
                }
            }
            Table::Joint(s) => {
                for (m, &d) in s.dims().iter().enumerate() {
                    op.chunk_coords[d] = s.chunk_row(r)[m];
                    op.chunk_start[d] = s.chunk_start_row(r)[m];
                    op.chunk_shape[d] = s.chunk_size_row(r)[m];
                    op.data_shape[d] = s.chunk_extent_row(r)[m];
                }
            }
        }
    }
    for syn in &p.syn_axes {
        let axis = match *syn {
            SynAxis::Joint(t) => {
                let Table::Joint(s) = &p.tables[t] else {
                    unreachable_table()?
                };
                let r = row[t];
                let (j0, j1) = (s.pointer()[r], s.pointer()[r + 1]);
                let block = s.block_shape();
                let k = s.dims().len();
                let mut coords = vec![0i64; (j1 - j0) * block.len()];
                let mut local = Vec::with_capacity((j1 - j0) * k);
                for (q, rec) in s.records_of(r).chunks(k + 1).enumerate() {
                    local.extend(rec[..k].iter().map(|&x| i64::from(x)));
                    unravel(
                        rec[k] as usize,
                        block,
                        &mut coords[q * block.len()..][..block.len()],
                    );
                }
                LoopAxis {
                    count: (j1 - j0) as u64,
                    source: AxisSource::Points {
                        dims: s.dims().to_vec(),
                        local,
                    },
                    dest: AxisDest::Points {
                        axes: s.axes().to_vec(),
                        coords,
                    },
                }
            }
            SynAxis::Request(k) => match p.bindings[k] {
                Binding::Unread | Binding::Joint(_) => LoopAxis {
                    count: p.request_shape[k],
                    source: AxisSource::Run {
                        dim: None,
                        start: 0,
                        stride: 0,
                    },
                    dest: AxisDest::Run {
                        axis: k,
                        start: 0,
                        stride: 1,
                    },
                },
                Binding::Strided(t) => {
                    let Table::Strided(s) = &p.tables[t] else {
                        unreachable_table()?
                    };
                    let sr = s.row(row[t]);
                    LoopAxis {
                        count: sr.count,
                        source: AxisSource::Run {
                            dim: Some(s.dim()),
                            start: sr.local_start,
                            stride: s.stride(),
                        },
                        dest: AxisDest::Run {
                            axis: k,
                            start: sr.origin as i64,
                            stride: 1,
                        },
                    }
                }
                Binding::Diagonal(t) => {
                    let Table::Diagonal(s) = &p.tables[t] else {
                        unreachable_table()?
                    };
                    let r = row[t];
                    LoopAxis {
                        count: s.count(r),
                        source: AxisSource::Line {
                            dims: s.dims().to_vec(),
                            starts: s.cells(r).iter().map(|c| c.local_start).collect(),
                            strides: s.strides().to_vec(),
                        },
                        dest: AxisDest::Run {
                            axis: k,
                            start: s.origin(r) as i64,
                            stride: 1,
                        },
                    }
                }
                Binding::Indexed(t) => {
                    let Table::Indexed(s) = &p.tables[t] else {
                        unreachable_table()?
                    };
                    let r = row[t];
                    let (j0, j1) = (s.pointer()[r], s.pointer()[r + 1]);
                    LoopAxis {
                        count: (j1 - j0) as u64,
                        source: AxisSource::Points {
                            dims: vec![s.dim()],
                            local: s.local_of(r).to_vec(),
                        },
                        dest: AxisDest::Points {
                            axes: vec![k],
                            coords: match s.positions() {
                                None => (j0 as i64..j1 as i64).collect(),
                                Some(pos) => pos[j0..j1].iter().map(|&x| i64::from(x)).collect(),
                            },
                        },
                    }
                }
            },
        };
        op.axes.push(axis);
    }
    op.coverage = coverage_of(&op);
    Ok(op)
}

fn unreachable_table<T>() -> Result<T> {
    Err(PlanError::Internal(
        "table kind does not match its binding".to_string(),
    ))
}

/// The declarative form of one chunk operation.
///
/// Both transforms share one zero-origin *synthetic* domain (one axis per loop of the
/// matching [`ChunkOp`]). For every point `p` of it:
/// `request.apply(cell_transform(p)) == chunk_domain.origin + chunk_transform(p)`, and
/// `chunk_transform(p)` lies in `[0, chunk_domain.shape)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkProjection {
    /// Chunk coordinates, one per storage dimension.
    pub chunk_coords: Vec<i64>,
    /// Global bounds of the valid data of the chunk: `[chunk_offset, chunk_offset + data_size)`.
    pub chunk_domain: IndexDomain,
    /// Synthetic domain → chunk-local, zero-origin storage coordinates.
    pub chunk_transform: IndexTransform,
    /// Synthetic domain → literal request coordinates.
    pub cell_transform: IndexTransform,
    /// Whether the request covers every valid cell of the chunk exactly once.
    pub coverage: Coverage,
}

/// An index array of `rank` axes varying along `axis` only.
fn along(axis: usize, rank: usize, values: Vec<i64>) -> Result<IndexArray> {
    let mut shape = vec![1usize; rank];
    shape[axis] = values.len();
    let a = ArrayD::from_shape_vec(IxDyn(&shape), values)
        .map_err(|e| PlanError::Overflow(format!("building an index array: {e}")))?;
    Ok(IndexArray::new(a))
}

/// Builds the projection of a lowered operation.
pub(crate) fn projection_of(op: &ChunkOp, p: &GridPartition) -> Result<ChunkProjection> {
    let rank = op.axes.len();
    let chunk_transform = chunk_transform_of(op)?;
    let syn = chunk_transform.domain().clone();
    let req_rank = p.request_lo.len();
    let mut cell_maps: Vec<OutputIndexMap> = vec![OutputIndexMap::constant(0); req_rank];
    for (j, a) in op.axes.iter().enumerate() {
        match &a.dest {
            AxisDest::Run {
                axis,
                start,
                stride,
            } => {
                let lo = p.request_lo[*axis];
                let off = i64::try_from(lo as i128 + *start as i128).map_err(|_| {
                    PlanError::Overflow(format!("request axis {axis}: {lo} + {start}"))
                })?;
                cell_maps[*axis] = OutputIndexMap::dimension(j, off, *stride);
            }
            AxisDest::Points { axes, coords } => {
                for (m, &k) in axes.iter().enumerate() {
                    let v: Vec<i64> = coords.iter().skip(m).step_by(axes.len()).copied().collect();
                    let lo = p.request_lo[k];
                    cell_maps[k] = OutputIndexMap::array_or_constant(along(j, rank, v)?, lo, 1)?;
                }
            }
        }
    }
    let cell_transform = IndexTransform::new(syn, cell_maps)?;
    let chunk_domain = IndexDomain::from_origin_shape(&op.chunk_start, &op.data_shape)?;
    Ok(ChunkProjection {
        chunk_coords: op.chunk_coords.clone(),
        chunk_domain,
        chunk_transform,
        cell_transform,
        coverage: op.coverage,
    })
}

/// The chunk transform of a lowered operation: synthetic domain → chunk-local coordinates.
pub(crate) fn chunk_transform_of(op: &ChunkOp) -> Result<IndexTransform> {
    let rank = op.axes.len();
    let syn_shape: Vec<u64> = op.axes.iter().map(|a| a.count).collect();
    let syn = IndexDomain::from_shape(&syn_shape)?;
    let mut chunk_maps: Vec<OutputIndexMap> = op
        .base_local
        .iter()
        .map(|&c| OutputIndexMap::constant(c))
        .collect();
    for (j, a) in op.axes.iter().enumerate() {
        match &a.source {
            AxisSource::Run {
                dim: Some(d),
                start,
                stride,
            } => {
                chunk_maps[*d] = OutputIndexMap::dimension(j, *start, *stride);
            }
            AxisSource::Run { dim: None, .. } => {}
            AxisSource::Line {
                dims,
                starts,
                strides,
            } => {
                for (m, &d) in dims.iter().enumerate() {
                    chunk_maps[d] = OutputIndexMap::dimension(j, starts[m], strides[m]);
                }
            }
            AxisSource::Points { dims, local } => {
                for (m, &d) in dims.iter().enumerate() {
                    let v: Vec<i64> = local.iter().skip(m).step_by(dims.len()).copied().collect();
                    chunk_maps[d] = OutputIndexMap::array_or_constant(along(j, rank, v)?, 0, 1)?;
                }
            }
        }
    }
    Ok(IndexTransform::new(syn, chunk_maps)?)
}
