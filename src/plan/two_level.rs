//! Two-level planning for sharded arrays: shard grid, then each shard's inner-chunk grid.

use std::sync::Arc;

use super::lower::chunk_transform_of;
use super::{AxisDest, ChunkOp, ChunkPlan, LoopAxis, PlanError, Result, plan_chunks};
use crate::grid::{DimensionGrid, RegularGrid};
use crate::index::IndexTransform;

/// A two-level plan: the request partitioned by the shard grid, and each touched shard's
/// contribution partitioned by its (regular) inner-chunk grid.
///
/// The inner grid of a shard covers the shard's valid data (`[0, data_size)` per dimension,
/// so clipped edge shards get clipped inner grids). Inner operations come back with their
/// destinations composed into the **final** result buffer.
#[derive(Debug)]
pub struct ShardedPlan {
    outer: ChunkPlan,
    inner_chunk_shape: Vec<u64>,
}

/// Plans `transform` against `shard_grids` (one per storage dimension), then each touched
/// shard against inner chunks of `inner_chunk_shape`.
pub fn plan_sharded(
    transform: &IndexTransform,
    shard_grids: &[Arc<dyn DimensionGrid>],
    inner_chunk_shape: &[u64],
) -> Result<ShardedPlan> {
    if inner_chunk_shape.len() != transform.output_rank() {
        return Err(PlanError::RankMismatch(format!(
            "inner chunk shape of rank {} for a transform of output rank {}",
            inner_chunk_shape.len(),
            transform.output_rank()
        )));
    }
    Ok(ShardedPlan {
        outer: plan_chunks(transform, shard_grids)?,
        inner_chunk_shape: inner_chunk_shape.to_vec(),
    })
}

/// One touched shard and the plan of its contribution against the inner-chunk grid.
#[derive(Debug)]
pub struct ShardWork {
    /// The shard-level operation (chunk coordinates = shard coordinates, coverage of the
    /// whole shard: `Full` lets a writer skip the shard read).
    pub shard: ChunkOp,
    /// The inner plan: its request domain is the shard operation's synthetic domain and its
    /// storage is shard-local.
    pub inner: ChunkPlan,
}

impl ShardedPlan {
    /// The shard-level plan.
    pub fn outer(&self) -> &ChunkPlan {
        &self.outer
    }

    /// The inner chunk shape.
    pub fn inner_chunk_shape(&self) -> &[u64] {
        &self.inner_chunk_shape
    }

    /// Plans one shard row.
    pub fn shard_at(&self, row: &[usize]) -> Result<ShardWork> {
        self.plan_shard(self.outer.op_at(row)?)
    }

    /// Plans a shard-level operation of this plan (possibly rewritten, e.g. by
    /// [`ChunkOp::last_writer`]) against the shard's regular inner-chunk grid.
    pub fn plan_shard(&self, shard: ChunkOp) -> Result<ShardWork> {
        let grids = shard
            .data_shape
            .iter()
            .zip(&self.inner_chunk_shape)
            .enumerate()
            .map(|(d, (&ext, &size))| {
                RegularGrid::new(size, ext)
                    .map(|g| Arc::new(g) as Arc<dyn DimensionGrid>)
                    .map_err(|source| PlanError::Grid { dim: d, source })
            })
            .collect::<Result<Vec<_>>>()?;
        ShardWork::new(shard, &grids)
    }

    /// Every touched shard in the outer plan's order.
    pub fn shards(&self) -> Result<impl Iterator<Item = Result<ShardWork>> + '_> {
        Ok(self.outer.ops()?.map(move |op| self.plan_shard(op?)))
    }
}

impl ShardWork {
    /// Plans one shard-level operation against arbitrary inner grids (one per storage
    /// dimension, in shard-local coordinates covering `[0, shard.data_shape)`), e.g.
    /// rectilinear inner chunks. [`ShardedPlan`] uses regular inner grids.
    pub fn new(shard: ChunkOp, inner_grids: &[Arc<dyn DimensionGrid>]) -> Result<ShardWork> {
        let local = chunk_transform_of(&shard)?;
        let inner = plan_chunks(&local, inner_grids)?;
        Ok(ShardWork { shard, inner })
    }

    /// Rewrites an inner operation so it addresses the final result: destinations are
    /// composed through the shard operation's loops, `chunk_start` becomes global (shard
    /// start + inner chunk start) and `result_shape` the request shape. `chunk_coords`
    /// stay the inner chunk's coordinates within the shard.
    pub fn compose(&self, mut op: ChunkOp) -> Result<ChunkOp> {
        let outer = &self.shard.axes;
        for a in &mut op.axes {
            a.dest = compose_dest(a.count, &a.dest, outer)?;
        }
        for (s, o) in op.chunk_start.iter_mut().zip(&self.shard.chunk_start) {
            *s = s.checked_add(*o).ok_or_else(|| {
                PlanError::Overflow(format!("inner chunk start {s} + shard start {o}"))
            })?;
        }
        op.result_shape = self.shard.result_shape.clone();
        Ok(op)
    }

    /// The inner-chunk operations of this shard, composed into the final result.
    pub fn inner_ops(&self) -> Result<impl Iterator<Item = Result<ChunkOp>> + '_> {
        Ok(self.inner.ops()?.map(move |op| self.compose(op?)))
    }
}

/// The result coordinates of outer loop `j`'s step `x`, appended to `axes`/`vals`.
fn outer_dest(outer: &[LoopAxis], j: usize, x: i64, vals: &mut Vec<i64>) -> Result<()> {
    let a = outer
        .get(j)
        .ok_or_else(|| PlanError::Internal(format!("inner plan reads synthetic axis {j}")))?;
    match &a.dest {
        AxisDest::Run { start, stride, .. } => vals.push(start + stride * x),
        AxisDest::Points { axes, coords } => {
            let w = axes.len();
            let i = usize::try_from(x).unwrap_or(usize::MAX);
            let row = coords
                .get(i * w..(i + 1) * w)
                .ok_or_else(|| PlanError::Internal(format!("step {x} of synthetic axis {j}")))?;
            vals.extend_from_slice(row);
        }
    }
    Ok(())
}

fn outer_axes(outer: &[LoopAxis], j: usize) -> Vec<usize> {
    match outer.get(j).map(|a| &a.dest) {
        Some(AxisDest::Run { axis, .. }) => vec![*axis],
        Some(AxisDest::Points { axes, .. }) => axes.clone(),
        None => vec![],
    }
}

/// Composes an inner destination (over the shard operation's synthetic axes) with the shard
/// operation's destinations (over the result axes).
fn compose_dest(count: u64, dest: &AxisDest, outer: &[LoopAxis]) -> Result<AxisDest> {
    match dest {
        AxisDest::Run {
            axis: j,
            start,
            stride,
        } => match outer.get(*j).map(|a| &a.dest) {
            Some(AxisDest::Run {
                axis,
                start: s0,
                stride: t0,
            }) => Ok(AxisDest::Run {
                axis: *axis,
                start: s0 + t0 * start,
                stride: t0 * stride,
            }),
            _ => {
                let mut coords = Vec::new();
                for i in 0..count as i64 {
                    outer_dest(outer, *j, start + stride * i, &mut coords)?;
                }
                Ok(AxisDest::Points {
                    axes: outer_axes(outer, *j),
                    coords,
                })
            }
        },
        AxisDest::Points { axes: js, coords } => {
            let axes: Vec<usize> = js.iter().flat_map(|&j| outer_axes(outer, j)).collect();
            let mut out = Vec::with_capacity(count as usize * axes.len());
            for row in coords.chunks(js.len().max(1)) {
                for (m, &j) in js.iter().enumerate() {
                    outer_dest(outer, j, row[m], &mut out)?;
                }
            }
            Ok(AxisDest::Points { axes, coords: out })
        }
    }
}
