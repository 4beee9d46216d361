//! The chunk planner: turns an [`IndexTransform`] into chunk operations without expanding
//! the request (pure, no I/O).
//!
//! [`plan_chunks`] partitions a transform against one [`DimensionGrid`] per storage
//! dimension. The partition is *factored*: one table per independent part of the transform,
//! and the plan is the (never materialised) Cartesian product of the tables' rows.
//!
//! | table | built from | rows |
//! | --- | --- | --- |
//! | [`StridedSet`] | a constant map, or the only affine map reading its input axis | one per touched chunk, ascending chunk order (also for negative strides); cost O(touched chunks) grid calls, sparse strides jump over untouched chunks |
//! | [`IndexedSet`] | an index array varying over one input axis that no other map reads | CSR by chunk; stable within a chunk; O(points) plus a radix sort of packed words on regular grids (`packed.rs`), else a counting or comparison sort; sorted coordinates take one linear pass instead (no min/max pass, no keys, no sort, no positions; one grid lookup per touched chunk, through the regular grid's own inlined methods when it is one) |
//! | [`DiagonalSet`] | several affine maps reading one input axis (**an affine diagonal**) | one per interval of the merged chunk cuts of the members, request order; O(sum of touched chunks over the members), symbolic like a strided set |
//! | [`JointSet`] | any other connected component of maps sharing input axes (vindex-correlated arrays, **arrays sharing an axis with an affine map**) | CSR by chunk tuple (lexicographic); O(points of the component's own block) |
//!
//! Departures from the reference planner (zarr-indexing 0.3.0), all documented here:
//! - **Both reference rejections are supported**, not errors: an affine diagonal (two
//!   affine maps on one input axis) is a [`DiagonalSet`] (TensorStore-style, per input
//!   dimension, never expanded); an index array sharing a varying axis with an affine map
//!   joins a [`JointSet`], evaluated pointwise over the block of the input axes the
//!   component spans (cost proportional to that block). No transform is rejected for its
//!   structure; the only planning errors are grid lookups, overflow and tables of more
//!   than `u32::MAX` points.
//! - A stride-0 affine map, a stride-0 index-array map and an all-singleton index array are
//!   treated as constants (their input axis, if no other map reads it, is *unread*).
//! - A single-axis index array that shares its axis with no other map is an [`IndexedSet`]
//!   even when another part of the transform is correlated (the reference turns every array
//!   of a "general" transform into a joint set). Table order: single-dimension tables in
//!   output-dimension order, then joint sets by first output dimension.
//! - Coverage is exact for every projection (see [`Coverage`]); index arrays get a proven
//!   `Full`/`Partial` answer instead of `Unknown`.
//! - Errors are eager: [`plan_chunks`] checks the grid count and [`ChunkPlan::partition`]
//!   builds (and memoises) the tables; both return typed [`PlanError`]s.
//!
//! Consumers use either the declarative [`ChunkProjection`] (chunk coordinates, chunk
//! domain, chunk transform, cell transform, coverage) or the execution lowering
//! [`ChunkOp`] (per-axis runs or coordinate lists with destinations in the zero-origin
//! result buffer). [`plan_sharded`] plans twice (shard grid, then each shard's inner-chunk
//! grid) and composes destinations so inner-chunk operations address the final result.
//!
//! ```
//! use std::sync::Arc;
//! use zarrflow::grid::{DimensionGrid, RegularGrid};
//! use zarrflow::index::IndexTransform;
//! use zarrflow::plan::{Coverage, plan_chunks};
//! use zarrflow::sel;
//!
//! let t = IndexTransform::from_shape(&[7, 9]).unwrap().oindex(&sel![[6, 0, 0, 2], 5..]).unwrap();
//! let grids: Vec<Arc<dyn DimensionGrid>> = vec![
//!     Arc::new(RegularGrid::new(3, 7).unwrap()),
//!     Arc::new(RegularGrid::new(4, 9).unwrap()),
//! ];
//! let plan = plan_chunks(&t, &grids).unwrap();
//! let coords: Vec<Vec<i64>> = plan.chunk_coords().unwrap().collect();
//! assert_eq!(coords, [[0, 1], [0, 2], [2, 1], [2, 2]]);
//! let mut coverage = vec![];
//! for op in plan.ops().unwrap() {
//!     let op = op.unwrap();
//!     coverage.push(op.coverage);
//!     // Gather: chunk buffer offset -> result buffer offset, C order on both sides.
//!     let (cs, rs) = (op.chunk_c_strides(), op.result_c_strides());
//!     op.for_each_linear(&cs, &rs, |src, dst| assert!(src >= 0 && dst >= 0));
//! }
//! // Chunk (2, 2) holds one valid cell (row 6, column 8), written once: full.
//! assert_eq!(coverage, [Coverage::Partial, Coverage::Partial, Coverage::Partial, Coverage::Full]);
//! ```

mod diagonal;
mod indexed;
mod joint;
mod lower;
mod order;
mod packed;
mod strided;
mod two_level;

use std::sync::{Arc, OnceLock};

use thiserror::Error;

use crate::grid::{DimensionGrid, GridError};
use crate::index::{IndexArray, IndexError, IndexTransform, OutputIndexMap};

pub use diagonal::DiagonalSet;
pub use indexed::IndexedSet;
pub use joint::JointSet;
pub use lower::{AxisDest, AxisSource, ChunkOp, ChunkProjection, Coverage, LoopAxis};
pub use order::ChunkOrderRows;
pub use strided::{StridedRow, StridedSet};
pub use two_level::{ShardWork, ShardedPlan, plan_sharded};

/// Why a plan could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The number of grids differs from the transform's output rank (or a per-dimension
    /// argument has the wrong length).
    #[error("rank mismatch: {0}")]
    RankMismatch(String),
    /// A grid lookup failed, e.g. a storage coordinate outside the grid.
    #[error("storage dimension {dim}: {source}")]
    Grid {
        /// The storage (output) dimension.
        dim: usize,
        /// The grid's error.
        #[source]
        source: GridError,
    },
    /// A storage coordinate or a count leaves the integer range.
    #[error("integer overflow: {0}")]
    Overflow(String),
    /// The grid broke its own protocol (e.g. a chunk that does not contain the coordinate
    /// it was looked up for).
    #[error("inconsistent grid in storage dimension {dim}: {message}")]
    InconsistentGrid {
        /// The storage dimension.
        dim: usize,
        /// What went wrong.
        message: String,
    },
    /// A row index outside the plan.
    #[error("row {row:?} is outside the plan's row shape {row_shape:?}")]
    RowOutOfRange {
        /// The requested row (one index per table).
        row: Vec<usize>,
        /// The plan's row shape.
        row_shape: Vec<usize>,
    },
    /// A broken internal invariant (a bug in the planner, never caused by input).
    #[error("internal planner error: {0}")]
    Internal(String),
    /// Building a projection's transforms failed in the index layer.
    #[error("index layer: {0}")]
    Index(#[from] IndexError),
}

/// Shorthand result type of the planner.
pub type Result<T, E = PlanError> = std::result::Result<T, E>;

pub(crate) fn grid_err(dim: usize) -> impl Fn(GridError) -> PlanError {
    move |source| PlanError::Grid { dim, source }
}

/// One table of the factored partition.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Table {
    /// A constant or affine storage dimension.
    Strided(StridedSet),
    /// An independent one-axis index array.
    Indexed(IndexedSet),
    /// Several affine maps reading one input axis (a diagonal), partitioned symbolically.
    Diagonal(DiagonalSet),
    /// A connected component of maps sharing input axes, partitioned pointwise.
    Joint(JointSet),
}

impl Table {
    /// Number of rows (touched chunks, or touched chunk tuples for a joint set).
    pub fn len(&self) -> usize {
        match self {
            Table::Strided(s) => s.len(),
            Table::Indexed(s) => s.len(),
            Table::Diagonal(s) => s.len(),
            Table::Joint(s) => s.len(),
        }
    }

    /// True if the table has no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The storage dimensions this table binds.
    pub fn dims(&self) -> Vec<usize> {
        match self {
            Table::Strided(s) => vec![s.dim()],
            Table::Indexed(s) => vec![s.dim()],
            Table::Diagonal(s) => s.dims().to_vec(),
            Table::Joint(s) => s.dims().to_vec(),
        }
    }
}

/// How a request (input) axis is bound in the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// No map reads the axis: every chunk row covers its full extent (a broadcast).
    Unread,
    /// Bound by the strided table with this index.
    Strided(usize),
    /// Bound by the indexed table with this index.
    Indexed(usize),
    /// Bound by the diagonal table with this index.
    Diagonal(usize),
    /// One of the block axes of the joint table with this index.
    Joint(usize),
}

/// One axis of the synthetic (per-projection) domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SynAxis {
    /// The point axis of a joint table.
    Joint(usize),
    /// A request axis not in any joint table.
    Request(usize),
}

/// The factored partition of a transform: tables whose row product is the plan.
#[derive(Debug, Clone)]
pub struct GridPartition {
    tables: Vec<Table>,
    row_shape: Vec<usize>,
    bindings: Vec<Binding>,
    syn_axes: Vec<SynAxis>,
    /// Table index binding each storage dimension.
    dim_table: Vec<usize>,
    request_lo: Vec<i64>,
    request_shape: Vec<u64>,
    empty: bool,
}

impl GridPartition {
    /// The tables: single-dimension tables in output-dimension order, then joint sets.
    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// Rows per table; `[0]` for an empty request, `[]` when there is no table (one
    /// projection).
    pub fn row_shape(&self) -> &[usize] {
        &self.row_shape
    }

    /// Number of chunk operations (product of the row shape), saturating at `u128::MAX`.
    pub fn len(&self) -> u128 {
        self.row_shape
            .iter()
            .fold(1u128, |a, &n| a.saturating_mul(n as u128))
    }

    /// True if the plan has no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn check_row(&self, row: &[usize]) -> Result<()> {
        if self.empty
            || row.len() != self.row_shape.len()
            || row.iter().zip(&self.row_shape).any(|(&r, &n)| r >= n)
        {
            return Err(PlanError::RowOutOfRange {
                row: row.to_vec(),
                row_shape: self.row_shape.clone(),
            });
        }
        Ok(())
    }

    /// The chunk coordinates of one row (one index per table).
    pub fn chunk_coords_at(&self, row: &[usize]) -> Result<Vec<i64>> {
        self.check_row(row)?;
        let mut out = vec![0i64; self.dim_table.len()];
        for (t, (table, &r)) in self.tables.iter().zip(row).enumerate() {
            let _ = t;
            match table {
                Table::Strided(s) => out[s.dim()] = s.row(r).chunk,
                Table::Indexed(s) => out[s.dim()] = s.chunks()[r],
                Table::Diagonal(s) => {
                    for (&d, c) in s.dims().iter().zip(s.cells(r)) {
                        out[d] = c.chunk;
                    }
                }
                Table::Joint(s) => {
                    for (m, &d) in s.dims().iter().enumerate() {
                        out[d] = s.chunk_row(r)[m];
                    }
                }
            }
        }
        Ok(out)
    }

    /// The rows with their chunk coordinates in ascending (lexicographic) order of the
    /// coordinates, lazily: the order in which several plans are merged chunk by chunk.
    pub fn rows_in_chunk_order(&self) -> ChunkOrderRows<'_> {
        ChunkOrderRows::new(self)
    }

    /// All row multi-indices in iteration order (row-major over [`row_shape`](Self::row_shape)).
    pub fn rows(&self) -> RowIter {
        RowIter {
            shape: self.row_shape.clone(),
            next: if self.empty || self.row_shape.contains(&0) {
                None
            } else {
                Some(vec![0; self.row_shape.len()])
            },
        }
    }
}

/// Iterates the row multi-indices of a partition (row-major, first table slowest).
#[derive(Debug, Clone)]
pub struct RowIter {
    shape: Vec<usize>,
    next: Option<Vec<usize>>,
}

impl Iterator for RowIter {
    type Item = Vec<usize>;
    fn next(&mut self) -> Option<Vec<usize>> {
        let cur = self.next.take()?;
        let mut n = cur.clone();
        let mut d = n.len();
        loop {
            if d == 0 {
                break;
            }
            d -= 1;
            n[d] += 1;
            if n[d] < self.shape[d] {
                self.next = Some(n);
                break;
            }
            n[d] = 0;
        }
        Some(cur)
    }
}

/// A planned transform: the transform, its grids and the memoised partition.
#[derive(Debug)]
pub struct ChunkPlan {
    transform: IndexTransform,
    grids: Vec<Arc<dyn DimensionGrid>>,
    partition: OnceLock<Result<GridPartition>>,
}

/// Plans `transform` against one grid per storage (output) dimension.
///
/// Fails at once with [`PlanError::RankMismatch`] when `grids.len()` differs from the
/// output rank; the partition is built on the first call to [`ChunkPlan::partition`] (or any
/// method using it) and memoised.
pub fn plan_chunks(
    transform: &IndexTransform,
    grids: &[Arc<dyn DimensionGrid>],
) -> Result<ChunkPlan> {
    if grids.len() != transform.output_rank() {
        return Err(PlanError::RankMismatch(format!(
            "{} grids for a transform of output rank {}",
            grids.len(),
            transform.output_rank()
        )));
    }
    Ok(ChunkPlan {
        transform: transform.clone(),
        grids: grids.to_vec(),
        partition: OnceLock::new(),
    })
}

impl ChunkPlan {
    /// The planned transform.
    pub fn transform(&self) -> &IndexTransform {
        &self.transform
    }

    /// The grids, one per storage dimension.
    pub fn grids(&self) -> &[Arc<dyn DimensionGrid>] {
        &self.grids
    }

    /// The factored partition, built once.
    pub fn partition(&self) -> Result<&GridPartition> {
        self.partition
            .get_or_init(|| build_partition(&self.transform, &self.grids))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Number of chunk operations.
    pub fn len(&self) -> Result<u128> {
        Ok(self.partition()?.len())
    }

    /// True if there is no chunk operation.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.partition()?.is_empty())
    }

    /// The chunk coordinates of every operation, in iteration order (streamed, never
    /// materialised as a whole).
    pub fn chunk_coords(&self) -> Result<impl Iterator<Item = Vec<i64>> + '_> {
        let p = self.partition()?;
        Ok(p.rows()
            .map(move |r| p.chunk_coords_at(&r).unwrap_or_default()))
    }

    /// The execution lowering of one row.
    pub fn op_at(&self, row: &[usize]) -> Result<ChunkOp> {
        lower::lower_row(self.partition()?, row)
    }

    /// The execution lowering of every row, in iteration order.
    pub fn ops(&self) -> Result<impl Iterator<Item = Result<ChunkOp>> + '_> {
        let p = self.partition()?;
        Ok(p.rows().map(move |r| lower::lower_row(p, &r)))
    }

    /// The declarative projection of one row.
    pub fn projection_at(&self, row: &[usize]) -> Result<ChunkProjection> {
        let op = self.op_at(row)?;
        lower::projection_of(&op, self.partition()?)
    }

    /// The declarative projections of every row, in iteration order.
    pub fn projections(&self) -> Result<impl Iterator<Item = Result<ChunkProjection>> + '_> {
        let p = self.partition()?;
        Ok(p.rows()
            .map(move |r| lower::lower_row(p, &r).and_then(|op| lower::projection_of(&op, p))))
    }
}

/// A map after normalisation: stride-0 maps and all-singleton arrays are constants.
enum NMap {
    Constant(i64),
    Dim {
        axis: usize,
        offset: i64,
        stride: i64,
    },
    Arr {
        array: IndexArray,
        offset: i64,
        stride: i64,
        deps: Vec<usize>,
    },
}

fn normalise(o: usize, m: &OutputIndexMap) -> Result<NMap> {
    Ok(match m {
        OutputIndexMap::Constant { offset } => NMap::Constant(*offset),
        OutputIndexMap::Dimension {
            offset, stride: 0, ..
        } => NMap::Constant(*offset),
        OutputIndexMap::Dimension {
            input_dimension,
            offset,
            stride,
        } => NMap::Dim {
            axis: *input_dimension,
            offset: *offset,
            stride: *stride,
        },
        OutputIndexMap::Array {
            offset, stride: 0, ..
        } => NMap::Constant(*offset),
        OutputIndexMap::Array {
            array,
            offset,
            stride,
        } => {
            let deps = array.dependency_axes();
            if deps.is_empty() {
                let v = array.view().iter().copied().next().unwrap_or(0);
                let c = *offset as i128 + *stride as i128 * v as i128;
                NMap::Constant(i64::try_from(c).map_err(|_| {
                    PlanError::Overflow(format!(
                        "output dimension {o}: {offset} + {stride} * {v} leaves i64"
                    ))
                })?)
            } else {
                NMap::Arr {
                    array: array.clone(),
                    offset: *offset,
                    stride: *stride,
                    deps,
                }
            }
        }
    })
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn build_partition(
    transform: &IndexTransform,
    grids: &[Arc<dyn DimensionGrid>],
) -> Result<GridPartition> {
    let domain = transform.domain();
    let rank = domain.rank();
    let out_rank = transform.output_rank();
    let request_lo = domain.origin().to_vec();
    let request_shape = domain.shape();
    if domain.is_empty() {
        return Ok(GridPartition {
            tables: vec![],
            row_shape: vec![0],
            bindings: vec![Binding::Unread; rank],
            syn_axes: vec![],
            dim_table: vec![0; out_rank],
            request_lo,
            request_shape,
            empty: true,
        });
    }
    let maps: Vec<NMap> = transform
        .output()
        .iter()
        .enumerate()
        .map(|(o, m)| normalise(o, m))
        .collect::<Result<_>>()?;

    // Union-find over input axes: maps that share an input axis are one component.
    let mut parent: Vec<usize> = (0..rank).collect();
    let mut readers = vec![0usize; rank];
    for m in &maps {
        let axes: &[usize] = match m {
            NMap::Constant(_) => &[],
            NMap::Dim { axis, .. } => std::slice::from_ref(axis),
            NMap::Arr { deps, .. } => deps,
        };
        for &a in axes {
            readers[a] += 1;
        }
        for w in axes.windows(2) {
            let (x, y) = (find(&mut parent, w[0]), find(&mut parent, w[1]));
            parent[x] = y;
        }
    }
    // A component is "joint" unless it is one map reading one axis alone.
    let mut comp_maps: Vec<Vec<usize>> = vec![vec![]; rank];
    for (o, m) in maps.iter().enumerate() {
        let first = match m {
            NMap::Constant(_) => continue,
            NMap::Dim { axis, .. } => *axis,
            NMap::Arr { deps, .. } => deps[0],
        };
        let root = find(&mut parent, first);
        comp_maps[root].push(o);
    }

    let mut tables: Vec<Table> = Vec::new();
    let mut dim_table = vec![usize::MAX; out_rank];
    let mut bindings = vec![Binding::Unread; rank];
    let mut joint_roots: Vec<usize> = Vec::new();
    for (o, m) in maps.iter().enumerate() {
        let grid = grids[o].as_ref();
        match m {
            NMap::Constant(c) => {
                dim_table[o] = tables.len();
                tables.push(Table::Strided(StridedSet::constant(o, *c, grid)?));
            }
            NMap::Dim {
                axis,
                offset,
                stride,
            } => {
                let root = find(&mut parent, *axis);
                if readers[*axis] == 1 && comp_maps[root].len() == 1 {
                    let (lo, hi) = domain.interval(*axis);
                    bindings[*axis] = Binding::Strided(tables.len());
                    dim_table[o] = tables.len();
                    tables.push(Table::Strided(StridedSet::affine(
                        o, *axis, *offset, *stride, lo, hi, grid,
                    )?));
                } else if !joint_roots.contains(&root) {
                    joint_roots.push(root);
                }
            }
            NMap::Arr {
                array,
                offset,
                stride,
                deps,
            } => {
                let root = find(&mut parent, deps[0]);
                if deps.len() == 1 && readers[deps[0]] == 1 && comp_maps[root].len() == 1 {
                    bindings[deps[0]] = Binding::Indexed(tables.len());
                    dim_table[o] = tables.len();
                    tables.push(Table::Indexed(IndexedSet::build(
                        o, deps[0], array, *offset, *stride, grid,
                    )?));
                } else if !joint_roots.contains(&root) {
                    joint_roots.push(root);
                }
            }
        }
    }
    for root in joint_roots {
        let dims = comp_maps[root].clone();
        let mut axes: Vec<usize> = (0..rank)
            .filter(|&a| readers[a] > 0 && find(&mut parent, a) == root)
            .collect();
        axes.sort_unstable();
        let affine: Option<Vec<(usize, i64, i64)>> = dims
            .iter()
            .map(|&o| match &maps[o] {
                NMap::Dim { offset, stride, .. } => Some((o, *offset, *stride)),
                _ => None,
            })
            .collect();
        if let (Some(members), [axis]) = (affine, &axes[..]) {
            let (lo, hi) = domain.interval(*axis);
            let t = tables.len();
            bindings[*axis] = Binding::Diagonal(t);
            for &o in &dims {
                dim_table[o] = t;
            }
            tables.push(Table::Diagonal(DiagonalSet::build(
                &members, *axis, lo, hi, grids,
            )?));
            continue;
        }
        let members: Vec<joint::Member<'_>> = dims
            .iter()
            .map(|&o| match &maps[o] {
                NMap::Dim {
                    axis,
                    offset,
                    stride,
                } => Ok(joint::Member::Dim {
                    axis: *axis,
                    offset: *offset,
                    stride: *stride,
                }),
                NMap::Arr {
                    array,
                    offset,
                    stride,
                    ..
                } => Ok(joint::Member::Arr {
                    array,
                    offset: *offset,
                    stride: *stride,
                }),
                NMap::Constant(_) => Err(PlanError::Internal(format!(
                    "constant output {o} grouped into a joint component"
                ))),
            })
            .collect::<Result<_>>()?;
        let t = tables.len();
        for &a in &axes {
            bindings[a] = Binding::Joint(t);
        }
        for &o in &dims {
            dim_table[o] = t;
        }
        tables.push(Table::Joint(JointSet::build(
            &dims, &axes, &members, domain, grids,
        )?));
    }
    let mut syn_axes: Vec<SynAxis> = Vec::new();
    for (t, table) in tables.iter().enumerate() {
        if matches!(table, Table::Joint(_)) {
            syn_axes.push(SynAxis::Joint(t));
        }
    }
    for (k, b) in bindings.iter().enumerate() {
        if !matches!(b, Binding::Joint(_)) {
            syn_axes.push(SynAxis::Request(k));
        }
    }
    let row_shape = tables.iter().map(Table::len).collect();
    Ok(GridPartition {
        tables,
        row_shape,
        bindings,
        syn_axes,
        dim_table,
        request_lo,
        request_shape,
        empty: false,
    })
}

#[cfg(test)]
mod tests;
