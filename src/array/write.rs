//! The write executor: planned read-modify-write per shard (or chunk), skipping reads of
//! fully covered shards and copying the encoded bytes of untouched inner chunks verbatim.
//!
//! Per touched shard, with every staged write that touches it applied in order:
//! - if some write covers the whole shard, the shard is encoded from the fill value and the
//!   writes, and stored with no read;
//! - otherwise the shard is read once; only inner chunks that are touched but not fully
//!   covered are decoded; untouched inner chunks keep their encoded bytes; the shard is
//!   re-assembled in C order and stored with a conditional PUT on the version read (retried
//!   on conflict where the store supports it);
//! - inner chunks equal to the fill value are not stored, and a shard left empty is deleted
//!   (unless [`ArrayOptions::store_empty_chunks`](super::ArrayOptions) is set).
//!
//! Writes from the same process to one shard are serialised by a striped lock; values are
//! applied in request C order, so a point written twice keeps the last value.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use rayon::prelude::*;
use tracing::Instrument;

use crate::codec::bounds::try_fill_bytes;
use crate::index::IndexTransform;
use crate::index::shape::cell_count;
use crate::plan::{ChunkOp, Coverage, plan_chunks, plan_sharded};
use crate::store::{ObjectVersion, PutMode, StoreError, StoreKey};

use super::error::{ArrayError, Result};
use super::pool::{on_blocking, run_parallel};
use super::retry::{MAX_CONFLICT_ATTEMPTS, backoff};
use super::scatter::Kernel;
use super::{ShardLayout, Shared, inner_chunk_index};

/// Where the values of one staged write come from.
#[derive(Debug, Clone)]
pub(crate) enum Values<'a> {
    /// C-order native-endian bytes of the write's domain shape (a snapshot).
    Owned(Arc<Vec<u8>>),
    /// The caller's bytes, when they already have the domain's shape (no copy).
    Borrowed(&'a [u8]),
    /// One element, broadcast to every cell.
    Scalar(Vec<u8>),
}

impl Values<'_> {
    /// Bytes held (for budgets).
    pub(crate) fn len(&self) -> usize {
        match self {
            Values::Owned(b) => b.len(),
            Values::Borrowed(b) => b.len(),
            Values::Scalar(v) => v.len(),
        }
    }
}

/// One write: the cells of `transform` (over the array's storage space) get `values`.
#[derive(Debug, Clone)]
pub(crate) struct StagedWrite<'a> {
    pub(crate) transform: IndexTransform,
    pub(crate) values: Values<'a>,
}

impl StagedWrite<'_> {
    /// The same write owning its values (for a batch that outlives the caller's buffer).
    pub(crate) fn into_owned(self) -> StagedWrite<'static> {
        StagedWrite {
            transform: self.transform,
            values: match self.values {
                Values::Borrowed(b) => Values::Owned(Arc::new(b.to_vec())),
                Values::Owned(b) => Values::Owned(b),
                Values::Scalar(v) => Values::Scalar(v),
            },
        }
    }
}

/// The chunk operations of the staged writes that touch one shard (or chunk).
pub(super) struct Target {
    pub(super) coords: Vec<i64>,
    /// The shard-level (or chunk-level) operations, one per write touching it.
    pub(super) outer: Vec<(usize, ChunkOp)>,
    /// Inner-chunk operations by inner chunk (linear index), in write order (empty when the
    /// shard is decoded whole through its pipeline).
    pub(super) inner: BTreeMap<usize, Vec<(usize, ChunkOp)>>,
}

impl Target {
    /// The declared shape of the shard (or chunk).
    pub(super) fn chunk_shape(&self) -> Result<Vec<u64>> {
        self.outer
            .first()
            .map(|(_, op)| op.chunk_shape.clone())
            .ok_or_else(|| ArrayError::Internal("a write target without operations".into()))
    }

    /// Some write covers the whole shard (or chunk): it is written without being read.
    pub(super) fn covers_all(&self) -> bool {
        self.outer
            .iter()
            .any(|(_, op)| op.coverage == Coverage::Full)
    }
}

/// Applies `writes` in order.
pub(crate) async fn write(shared: &Arc<Shared>, writes: &[StagedWrite<'_>]) -> Result<()> {
    let span = tracing::debug_span!("write", writes = writes.len());
    async {
        let targets = group_by_target(shared, writes.iter().map(|w| &w.transform))?;
        let concurrency = shared.options.request_concurrency.max(1);
        let mut results = futures::stream::iter(targets.into_values())
            .map(|t| write_target(shared, writes, t))
            .buffer_unordered(concurrency);
        while let Some(r) = results.next().await {
            r?;
        }
        Ok(())
    }
    .instrument(span)
    .await
}

/// Plans every write (given by its transform, in order) and groups the operations by shard
/// (or chunk). With DEBUG events on, one event reports the plan.
pub(super) fn group_by_target<'t>(
    shared: &Shared,
    transforms: impl IntoIterator<Item = &'t IndexTransform>,
) -> Result<BTreeMap<Vec<i64>, Target>> {
    let span = tracing::debug_span!("plan");
    let _entered = span.enter();
    let start = tracing::enabled!(tracing::Level::DEBUG).then(std::time::Instant::now);
    let mut targets: BTreeMap<Vec<i64>, Target> = BTreeMap::new();
    let mut rank = 0;
    for (w, transform) in transforms.into_iter().enumerate() {
        rank = transform.input_rank();
        if transform.domain().is_empty() {
            continue;
        }
        match &shared.shards {
            Some(layout) => {
                let plan = plan_sharded(transform, &shared.grids, &layout.inner_chunk_shape)?;
                for work in plan.shards()? {
                    let work = work?;
                    let cps = layout.sharding.chunks_per_shard(&work.shard.chunk_shape)?;
                    let coords = work.shard.chunk_coords.clone();
                    let t = targets.entry(coords.clone()).or_insert_with(|| Target {
                        coords,
                        outer: Vec::new(),
                        inner: BTreeMap::new(),
                    });
                    if layout.partial_reads {
                        for op in work.inner_ops()? {
                            let op = op?;
                            let linear = inner_chunk_index(&op.chunk_coords, &cps)?;
                            t.inner.entry(linear).or_default().push((w, op));
                        }
                    }
                    t.outer.push((w, work.shard));
                }
            }
            None => {
                let plan = plan_chunks(transform, &shared.grids)?;
                for op in plan.ops()? {
                    let op = op?;
                    let coords = op.chunk_coords.clone();
                    targets
                        .entry(coords.clone())
                        .or_insert_with(|| Target {
                            coords,
                            outer: Vec::new(),
                            inner: BTreeMap::new(),
                        })
                        .outer
                        .push((w, op));
                }
            }
        }
    }
    if let Some(start) = start {
        tracing::debug!(
            rank,
            targets = targets.len(),
            inner_ops = targets
                .values()
                .map(|t| t.inner.values().map(Vec::len).sum::<usize>())
                .sum::<usize>(),
            planning_us = start.elapsed().as_micros() as u64,
            "planned a write"
        );
    }
    Ok(targets)
}

/// Applies the operations of some writes to one chunk buffer, in order.
fn apply(
    writes: &[StagedWrite<'_>],
    ops: &[(usize, ChunkOp)],
    chunk: &mut [u8],
    elem: usize,
) -> Result<()> {
    for (w, op) in ops {
        let kernel = Kernel::new(op)?;
        match &writes[*w].values {
            Values::Owned(values) => kernel.scatter_into(values, chunk, elem)?,
            Values::Borrowed(values) => kernel.scatter_into(values, chunk, elem)?,
            Values::Scalar(value) => kernel.fill_chunk(value, chunk)?,
        }
    }
    Ok(())
}

async fn write_target(
    shared: &Arc<Shared>,
    writes: &[StagedWrite<'_>],
    target: Target,
) -> Result<()> {
    let key = shared.chunk_key(&target.coords)?;
    let _guard = shared.lock_for(key.as_str()).lock().await;
    for attempt in 0..MAX_CONFLICT_ATTEMPTS {
        let span = tracing::debug_span!("write_target", key = %key, attempt = attempt + 1);
        let outcome = match &shared.shards {
            Some(layout) if layout.partial_reads => {
                write_shard(shared, layout, writes, &target, &key)
                    .instrument(span)
                    .await
            }
            _ => {
                write_whole(shared, writes, &target, &key)
                    .instrument(span)
                    .await
            }
        };
        shared.forget_index(key.as_str());
        match outcome {
            Err(ArrayError::Store(
                StoreError::Precondition { .. } | StoreError::AlreadyExists { .. },
            )) => backoff(key.as_str(), attempt).await,
            other => return other,
        }
    }
    Err(ArrayError::Store(StoreError::Precondition {
        url: shared.node.store().url_of(&key),
    }))
}

/// Reads an object with its version; `None` when it does not exist. With the `shape` of
/// the chunk it encodes, an object no encoding of it can be is refused from its size (see
/// `read::fetch_versioned`).
async fn read_versioned(
    shared: &Arc<Shared>,
    key: &StoreKey,
    shape: Option<&[u64]>,
) -> Result<Option<(Bytes, ObjectVersion)>> {
    super::read::fetch_versioned(shared, key, shape).await
}

/// Stores `encoded` (or deletes the key when `None`), conditionally on what was read:
/// `read` is `None` when nothing was read (a fully covered target, overwritten), `Some(None)`
/// when the object was absent (created only if still absent), `Some(Some(version))` when it
/// was read (replaced only if still that version). A conflict is returned for the caller to
/// retry; where the store cannot check the condition it writes unconditionally.
async fn commit(
    shared: &Shared,
    key: &StoreKey,
    encoded: Option<Vec<u8>>,
    read: Option<Option<ObjectVersion>>,
) -> Result<()> {
    let store = shared.node.store();
    let Some(bytes) = encoded else {
        // nothing left to store: delete what is there (nothing to do if it was absent)
        if read != Some(None) {
            store.delete(key).await?;
        }
        return Ok(());
    };
    let mode = match read {
        None => PutMode::Overwrite,
        Some(None) => PutMode::Create,
        Some(Some(version)) => PutMode::Update(version),
    };
    store
        .put_opts_or_overwrite(key, Bytes::from(bytes), mode)
        .await?;
    Ok(())
}

/// A shard with partial access: read once unless fully covered, decode only partially
/// covered inner chunks, copy untouched inner chunks verbatim.
async fn write_shard(
    shared: &Arc<Shared>,
    layout: &ShardLayout,
    writes: &[StagedWrite<'_>],
    target: &Target,
    key: &StoreKey,
) -> Result<()> {
    let meta = shared.node.metadata();
    let elem = shared.elem;
    let shard_shape = target.chunk_shape()?;
    let codec = layout.sharding.index_codec(&shard_shape)?;
    let n_inner = codec.chunks_per_shard().iter().product::<u64>() as usize;
    let (existing, read) = if target.covers_all() {
        (None, None)
    } else {
        // a shard may hold gaps: no size bound applies to the object
        match read_versioned(shared, key, None).await? {
            Some((bytes, version)) => {
                let index = codec.decode_from_shard(&bytes, key.as_str())?;
                (Some((bytes, index)), Some(Some(version)))
            }
            None => (None, Some(None)),
        }
    };
    // One synchronous parallel step per shard: for each touched inner chunk, start from its
    // decoded bytes (only when touched but not fully covered) or the fill value, apply the
    // writes, encode; then assemble the shard, copying untouched inner chunks' encoded bytes
    // byte for byte. It borrows the values, so it runs inside this call (never detached).
    let inner = layout.sharding.inner();
    let (dt, fv) = (meta.data_type(), meta.fill_value());
    let inner_shape = &layout.inner_chunk_shape;
    let fill = try_fill_bytes(fv, cell_count(inner_shape) as u64, elem, key.as_str())?;
    let keep_empty = shared.options.store_empty_chunks;
    let cps = codec.chunks_per_shard().to_vec();
    let encoded = run_parallel(|| -> Result<_> {
        let touched: Vec<(&usize, &Vec<(usize, ChunkOp)>)> = target.inner.iter().collect();
        let fresh: BTreeMap<usize, Option<Vec<u8>>> = touched
            .into_par_iter()
            .map(|(&i, ops)| {
                let covered = ops.iter().any(|(_, op)| op.coverage == Coverage::Full);
                let stored = existing.as_ref().and_then(|(bytes, index)| {
                    index
                        .get(i)
                        .map(|r| &bytes[r.start as usize..r.end as usize])
                });
                let decoded = stored.is_some() && !covered;
                let mut buf = match stored {
                    Some(b) if !covered => {
                        let coords = crate::codec::block::unravel(i as u64, &cps);
                        let name = format!("{} inner chunk {coords:?}", key.as_str());
                        inner.decode(b, inner_shape, dt, fv, &name)?
                    }
                    _ => fill.clone(),
                };
                apply(writes, ops, &mut buf, elem)?;
                let enc = if keep_empty {
                    Some(inner.encode(&buf, inner_shape, dt, fv)?)
                } else {
                    inner.encode_elide(&buf, inner_shape, dt, fv)?
                };
                tracing::trace!(
                    key = %key,
                    inner = ?crate::codec::block::unravel(i as u64, &cps),
                    decoded,
                    bytes_out = enc.as_ref().map_or(0, Vec::len),
                    stored = enc.is_some(),
                    "encode inner chunk"
                );
                Ok((i, enc))
            })
            .collect::<Result<_>>()?;
        tracing::debug!(
            key = %key,
            read = match &read {
                None => "skipped (covered)",
                Some(None) => "absent",
                Some(Some(_)) => "read",
            },
            rewritten = fresh.len(),
            decoded_first = target.inner.iter().filter(|(i, ops)| {
                !ops.iter().any(|(_, op)| op.coverage == Coverage::Full)
                    && existing.as_ref().is_some_and(|(_, index)| index.get(**i).is_some())
            }).count(),
            elided = fresh.values().filter(|e| e.is_none()).count(),
            copied_verbatim = existing.as_ref().map_or(0, |(_, index)| {
                (0..n_inner).filter(|i| !fresh.contains_key(i) && index.get(*i).is_some()).count()
            }),
            "write shard"
        );
        let refs: Vec<Option<&[u8]>> = (0..n_inner)
            .map(|i| match fresh.get(&i) {
                Some(enc) => enc.as_deref(),
                None => existing.as_ref().and_then(|(bytes, index)| {
                    index
                        .get(i)
                        .map(|r| &bytes[r.start as usize..r.end as usize])
                }),
            })
            .collect();
        Ok(layout.sharding.assemble_shard(&shard_shape, &refs)?)
    })?;
    commit(shared, key, encoded, read).await
}

/// A chunk (or a shard that must be decoded whole): read unless fully covered, decode,
/// apply, encode, store.
async fn write_whole(
    shared: &Arc<Shared>,
    writes: &[StagedWrite<'_>],
    target: &Target,
    key: &StoreKey,
) -> Result<()> {
    let meta = shared.node.metadata();
    let elem = shared.elem;
    let shape = target.chunk_shape()?;
    let cells = crate::codec::block::num_elements(&shape);
    let (mut buf, read) = if target.covers_all() {
        (
            try_fill_bytes(meta.fill_value(), cells, elem, key.as_str())?,
            None,
        )
    } else {
        match read_versioned(shared, key, Some(&shape)).await? {
            None => (
                try_fill_bytes(meta.fill_value(), cells, elem, key.as_str())?,
                Some(None),
            ),
            Some((bytes, version)) => {
                let shared = shared.clone();
                let name = key.as_str().to_string();
                let shape = shape.clone();
                let data = on_blocking(None, move || {
                    let meta = shared.node.metadata();
                    Ok(meta.codecs().decode(
                        &bytes,
                        &shape,
                        meta.data_type(),
                        meta.fill_value(),
                        &name,
                    )?)
                })
                .await?;
                (data, Some(Some(version)))
            }
        }
    };
    tracing::debug!(
        key = %key,
        read = match &read {
            None => "skipped (covered)",
            Some(None) => "absent",
            Some(Some(_)) => "read",
        },
        "write chunk"
    );
    apply(writes, &target.outer, &mut buf, elem)?;
    let encoded = {
        let shared = shared.clone();
        on_blocking(None, move || {
            let meta = shared.node.metadata();
            let codecs = meta.codecs();
            if shared.options.store_empty_chunks {
                Ok(Some(codecs.encode(
                    &buf,
                    &shape,
                    meta.data_type(),
                    meta.fill_value(),
                )?))
            } else {
                Ok(codecs.encode_elide(&buf, &shape, meta.data_type(), meta.fill_value())?)
            }
        })
        .await?
    };
    commit(shared, key, encoded, read).await
}
