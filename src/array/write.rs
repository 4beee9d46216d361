//! The write executor: planned read-modify-write per shard (or chunk), skipping reads of
//! fully covered shards and copying the encoded bytes of untouched inner chunks verbatim.
//!
//! Per touched shard, with every staged write that touches it applied in order:
//! - if some write covers the whole shard, the shard is encoded from the fill value and the
//!   writes, and stored with no read;
//! - otherwise the shard is read once; only inner chunks that are touched but not fully
//!   covered are decoded; untouched inner chunks keep their encoded bytes; the shard is
//!   re-assembled in the array's inner chunk order (C order unless
//!   [`ArrayOptions::with_inner_chunk_order`](super::ArrayOptions::with_inner_chunk_order)
//!   says otherwise) and stored with a conditional PUT on the version read (retried
//!   on conflict where the store supports it);
//! - after a conflict, or a PUT or DELETE whose outcome is unknown (an error that may have
//!   come after the store acted, such as a lost response), the next attempt reads the object
//!   again, even when the shard is fully covered, and ends without writing when the object
//!   already holds exactly what the attempt would write: a write is an assignment, so a
//!   repeated attempt never duplicates a write that landed, never takes its own landed write
//!   for a conflict, and, being conditional on what it read, never overwrites a newer
//!   object;
//! - inner chunks equal to the fill value are not stored, and a shard left empty is deleted
//!   (unless [`ArrayOptions::store_empty_chunks`](super::ArrayOptions) is set).
//!
//! Writes from the same process to one shard are serialised by the shard's lock
//! (`key_locks.rs`); values are applied in request C order, so a point written twice keeps
//! the last value. A PUT to a remote store runs as a task of its own (`spawned.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use rayon::prelude::*;
use tracing::Instrument;

use crate::codec::ShardIndex;
use crate::codec::bounds::try_fill_bytes;
use crate::codec::sharding::ShardParts;
use crate::index::IndexTransform;
use crate::index::shape::cell_count;
use crate::plan::{
    ChunkOp, ChunkOrderRows, ChunkPlan, Coverage, ShardWork, ShardedPlan, plan_chunks, plan_sharded,
};
use crate::store::{ObjectVersion, PutMode, Store, StoreError, StoreKey};
use object_store::PutPayload;

use super::cache::Cached;
use super::error::{ArrayError, Result};
use super::inner_targets::{INNER_BATCH, InnerTarget, InnerTargets};
use super::key_locks::KeyGuard;
use super::pool::{on_blocking, run_parallel};
use super::retry::{MAX_UNKNOWN_OUTCOME_RETRIES, backoff};
use super::scatter::Kernel;
use super::scratch::Scratch;
use super::spawned;
use super::{ShardLayout, Shared};

/// Where the values of one staged write come from.
#[derive(Debug, Clone)]
pub(crate) enum Values<'a> {
    /// C-order native-endian bytes of the write's domain shape (a snapshot).
    Owned(Arc<Vec<u8>>),
    /// The caller's bytes, when they already have the domain's shape (no copy).
    Borrowed(&'a [u8]),
    /// One element, broadcast to every cell.
    Scalar(Vec<u8>),
    /// C-order native-endian bytes of `shape` (the write's rank, each extent the domain's
    /// or 1), broadcast NumPy-style to the write's domain where they are read: never
    /// materialised, so values broadcast over a huge domain cost their own size.
    Broadcast {
        /// The values.
        bytes: Arc<Vec<u8>>,
        /// Their shape.
        shape: Vec<u64>,
    },
}

impl Values<'_> {
    /// Bytes held (for budgets).
    pub(crate) fn len(&self) -> usize {
        match self {
            Values::Owned(b) => b.len(),
            Values::Borrowed(b) => b.len(),
            Values::Scalar(v) => v.len(),
            Values::Broadcast { bytes, .. } => bytes.len(),
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
                Values::Broadcast { bytes, shape } => Values::Broadcast { bytes, shape },
            },
        }
    }
}

/// The operations of the staged writes that touch one shard (or chunk).
pub(super) struct Target {
    pub(super) coords: Vec<i64>,
    /// The shard-level (or chunk-level) operations, one per write touching it, when the
    /// target is written whole (a chunk, or a shard decoded whole through its pipeline).
    pub(super) outer: Vec<(usize, ChunkOp)>,
    /// The shard work of each write touching a shard written by inner chunk (shard-level
    /// operation and inner plan, in write order): its inner chunks are lowered only as the
    /// shard is written ([`InnerTargets`]). Empty when `outer` is not.
    pub(super) shards: Vec<(usize, ShardWork)>,
}

impl Target {
    /// The shard-level (or chunk-level) operations, in write order.
    pub(super) fn outer_ops(&self) -> impl Iterator<Item = &ChunkOp> {
        self.outer
            .iter()
            .map(|(_, op)| op)
            .chain(self.shards.iter().map(|(_, work)| &work.shard))
    }

    /// The declared shape of the shard (or chunk).
    pub(super) fn chunk_shape(&self) -> Result<Vec<u64>> {
        self.outer_ops()
            .next()
            .map(|op| op.chunk_shape.clone())
            .ok_or_else(|| ArrayError::Internal("a write target without operations".into()))
    }

    /// Some write covers the whole shard (or chunk): it is written without being read.
    pub(super) fn covers_all(&self) -> bool {
        self.outer_ops().any(|op| op.coverage == Coverage::Full)
    }

    /// The touched inner chunks of a shard written by inner chunk, in ascending order, each
    /// lowered when reached.
    pub(super) fn inner_targets<'t>(
        &'t self,
        chunks_per_shard: &'t [u64],
    ) -> Result<InnerTargets<'t>> {
        InnerTargets::new(&self.shards, chunks_per_shard)
    }
}

/// Applies `writes` in order.
///
/// The writes are planned first (their shard-level partitions: planning errors of that
/// level surface before any request); their touched shards (or chunks) are then produced
/// one at a time in ascending key order by [`Targets`] and written [`write_concurrency`]
/// at a time, so memory holds the targets in flight, never the plan of the whole request.
pub(crate) async fn write(shared: &Arc<Shared>, writes: &[StagedWrite<'_>]) -> Result<()> {
    let span = tracing::debug_span!("write", writes = writes.len());
    async {
        let plans = plan_writes(shared, writes.iter().map(|w| &w.transform))?;
        let concurrency = write_concurrency(shared);
        let mut results = futures::stream::iter(Targets::new(shared, &plans)?)
            .map(|t| async { write_target(shared, writes, t?).await })
            .buffer_unordered(concurrency);
        while let Some(r) = results.next().await {
            r?;
        }
        Ok(())
    }
    .instrument(span)
    .await
}

/// Targets one write call has in flight: `request_concurrency`, and at most
/// `local_write_concurrency` into a store that reads in place (local files, memory) and does
/// not fsync, whose PUTs are CPU work rather than waits (see
/// [`DEFAULT_LOCAL_WRITE_CONCURRENCY`](super::DEFAULT_LOCAL_WRITE_CONCURRENCY)). Calls made
/// at once (a `copy`'s jobs, Dask's tasks) each have their own.
fn write_concurrency(shared: &Shared) -> usize {
    let options = &shared.options;
    let store = shared.node.store();
    let n = if store.reads_in_place() && !store.fsyncs() {
        options
            .request_concurrency
            .min(options.local_write_concurrency)
    } else {
        options.request_concurrency
    };
    n.max(1)
}

/// The plan of one staged write: over the shard grid (and then each shard's inner grid),
/// or over the chunk grid.
pub(super) enum WritePlan {
    /// A sharded array's two-level plan.
    Sharded(ShardedPlan),
    /// An unsharded array's plan.
    Chunks(ChunkPlan),
}

impl WritePlan {
    /// The plan over the outer grid (shards or chunks).
    fn outer(&self) -> &ChunkPlan {
        match self {
            WritePlan::Sharded(plan) => plan.outer(),
            WritePlan::Chunks(plan) => plan,
        }
    }
}

/// Plans every write (given by its transform, in order) over the outer grid, building each
/// partition; writes of empty selections get no plan. With DEBUG events on, one event
/// reports the plans.
pub(super) fn plan_writes<'t>(
    shared: &Shared,
    transforms: impl IntoIterator<Item = &'t IndexTransform>,
) -> Result<Vec<(usize, WritePlan)>> {
    let span = tracing::debug_span!("plan");
    let _entered = span.enter();
    let start = tracing::enabled!(tracing::Level::DEBUG).then(std::time::Instant::now);
    let mut plans = Vec::new();
    let mut rank = 0;
    for (w, transform) in transforms.into_iter().enumerate() {
        rank = transform.input_rank();
        if transform.domain().is_empty() {
            continue;
        }
        let plan = match &shared.shards {
            Some(layout) => WritePlan::Sharded(plan_sharded(
                transform,
                &shared.grids,
                &layout.inner_chunk_shape,
            )?),
            None => WritePlan::Chunks(plan_chunks(transform, &shared.grids)?),
        };
        plan.outer().partition()?;
        plans.push((w, plan));
    }
    if let Some(start) = start {
        let mut outer_ops = 0u128;
        for (_, plan) in &plans {
            outer_ops = outer_ops.saturating_add(plan.outer().len()?);
        }
        tracing::debug!(
            rank,
            outer_ops = outer_ops as u64,
            planning_us = start.elapsed().as_micros() as u64,
            "planned a write"
        );
    }
    Ok(plans)
}

/// The next row of one walk: its chunk coordinates, the plan's index, the row.
type Head = (Vec<i64>, usize, Vec<usize>);

/// The touched shards (or chunks) of some planned writes, in ascending key order, each
/// with the operations of every write touching it in write order. Each plan's rows are
/// walked in chunk order
/// ([`GridPartition::rows_in_chunk_order`](crate::plan::GridPartition::rows_in_chunk_order))
/// and the walks merged, so a target's operations are lowered (and its inner chunks
/// planned) only when the write gets to it: the state is one row per write.
///
/// Operations are lowered as writes ([`ChunkOp::last_writer`]): a broadcast loop (a
/// stride-0 map, a broadcast index array) is cut to its last step, the value NumPy and
/// TensorStore keep, so a write visits the cells it changes, not every cell of a domain
/// mapped onto them.
pub(super) struct Targets<'p> {
    shared: &'p Shared,
    plans: &'p [(usize, WritePlan)],
    walks: Vec<ChunkOrderRows<'p>>,
    /// The next row of each walk, smallest coordinates first.
    heads: BinaryHeap<Reverse<Head>>,
    failed: bool,
}

impl<'p> Targets<'p> {
    /// The targets of `plans` (from [`plan_writes`], whose partitions are built).
    pub(super) fn new(shared: &'p Shared, plans: &'p [(usize, WritePlan)]) -> Result<Self> {
        let mut targets = Targets {
            shared,
            plans,
            walks: Vec::with_capacity(plans.len()),
            heads: BinaryHeap::with_capacity(plans.len()),
            failed: false,
        };
        for (i, (_, plan)) in plans.iter().enumerate() {
            let mut walk = plan.outer().partition()?.rows_in_chunk_order();
            if let Some((row, coords)) = walk.next() {
                targets.heads.push(Reverse((coords, i, row)));
            }
            targets.walks.push(walk);
        }
        Ok(targets)
    }

    /// The target at `coords`, touched by the plans (and rows) in `rows`, in write order.
    fn build(&self, coords: Vec<i64>, rows: &[(usize, Vec<usize>)]) -> Result<Target> {
        let mut t = Target {
            coords,
            outer: Vec::new(),
            shards: Vec::new(),
        };
        for (i, row) in rows {
            let (w, plan) = &self.plans[*i];
            let op = plan.outer().op_at(row)?.last_writer();
            match (plan, &self.shared.shards) {
                (WritePlan::Sharded(plan), Some(layout)) => {
                    let work = plan.plan_shard(op)?;
                    if layout.partial_reads {
                        t.shards.push((*w, work));
                    } else {
                        t.outer.push((*w, work.shard));
                    }
                }
                (WritePlan::Chunks(_), None) => t.outer.push((*w, op)),
                _ => {
                    return Err(ArrayError::Internal(
                        "a write plan that does not match the array's sharding".into(),
                    ));
                }
            }
        }
        Ok(t)
    }
}

impl Iterator for Targets<'_> {
    type Item = Result<Target>;

    fn next(&mut self) -> Option<Result<Target>> {
        if self.failed {
            return None;
        }
        let Reverse((coords, i, row)) = self.heads.pop()?;
        let mut rows = vec![(i, row)];
        while let Some(Reverse((next, ..))) = self.heads.peek()
            && *next == coords
        {
            if let Some(Reverse((_, j, row))) = self.heads.pop() {
                rows.push((j, row));
            }
        }
        // Plans are in write order: operations apply in that order.
        rows.sort_unstable_by_key(|(i, _)| *i);
        for (i, _) in &rows {
            if let Some((row, coords)) = self.walks[*i].next() {
                self.heads.push(Reverse((coords, *i, row)));
            }
        }
        let target = self.build(coords, &rows);
        self.failed = target.is_err();
        Some(target)
    }
}

/// Whether `op` writes every cell of a chunk buffer of `cells` cells: it covers its chunk
/// (each valid cell once, `Coverage::Full`), the chunk has no padding beyond the array's
/// edge (every cell is valid), and the chunk is that buffer's. The buffer's starting
/// contents then never reach the encoding, whatever other operations apply before or after.
fn writes_every_cell(op: &ChunkOp, cells: u64) -> bool {
    let chunk_cells = op
        .chunk_shape
        .iter()
        .try_fold(1u64, |n, &c| n.checked_mul(c));
    op.coverage == Coverage::Full && op.data_shape == op.chunk_shape && chunk_cells == Some(cells)
}

/// Applies the operations of some writes to one chunk buffer, in order.
fn apply(
    writes: &[StagedWrite<'_>],
    ops: &[(usize, ChunkOp)],
    chunk: &mut [u8],
    elem: usize,
) -> Result<()> {
    for (w, op) in ops {
        match &writes[*w].values {
            Values::Owned(values) => Kernel::new(op)?.scatter_into(values, chunk, elem)?,
            Values::Borrowed(values) => Kernel::new(op)?.scatter_into(values, chunk, elem)?,
            Values::Scalar(value) => Kernel::new(op)?.fill_chunk(value, chunk)?,
            Values::Broadcast { bytes, shape } => {
                let op = op.clone().broadcast_dest(shape)?;
                Kernel::new(&op)?.scatter_into(bytes, chunk, elem)?
            }
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
    // shared with the PUT's task (`spawned.rs`), which may outlive this call's drop
    let lock = Arc::new(shared.locks.lock(key.as_str()).await);
    // after a conflict or an unknown outcome, an earlier attempt's bytes may be stored
    let mut verify = false;
    let mut unknown_outcomes = 0;
    // a remembered shard found stale is read and written again once, without counting an
    // attempt (no race was lost: the entry was old)
    let mut stale_seen = false;
    let mut attempt = 0;
    while attempt < shared.options.conflict_attempts {
        let span = tracing::debug_span!("write_target", key = %key, attempt = attempt + 1);
        let outcome = match &shared.shards {
            Some(layout) if layout.partial_reads => {
                write_shard(shared, layout, writes, &target, &key, verify, &lock)
                    .instrument(span)
                    .await
            }
            _ => {
                write_whole(shared, writes, &target, &key, verify, &lock)
                    .instrument(span)
                    .await
            }
        };
        match outcome? {
            Committed::Done => return Ok(()),
            Committed::Stale if !stale_seen => {
                stale_seen = true;
                // the refusal may answer a resend of this attempt's own PUT (the client
                // retries after a 5xx): read, and store nothing if it already holds the
                // writes
                verify = true;
                tracing::debug!(key = %key, "the remembered shard is stale: reading it");
                continue;
            }
            Committed::Stale | Committed::Conflict => {}
            Committed::Unknown(e) if unknown_outcomes < MAX_UNKNOWN_OUTCOME_RETRIES => {
                unknown_outcomes += 1;
                tracing::debug!(
                    key = %key,
                    error = %e,
                    "the write's outcome is unknown: reading the object again"
                );
            }
            Committed::Unknown(e) => return Err(e.into()),
        }
        verify = true;
        backoff(key.as_str(), attempt).await;
        attempt += 1;
    }
    Err(ArrayError::Store(StoreError::Precondition {
        url: shared.node.store().url_of(&key),
    }))
}

/// What an attempt knows of the object before writing it.
#[derive(Debug)]
enum Before {
    /// Not read (a fully covered target): it is overwritten.
    Unread,
    /// Absent: created only if still absent.
    Absent,
    /// Read (or `recalled`: as this array last stored it, `written.rs`): replaced only if
    /// still this version.
    Read {
        bytes: Bytes,
        version: ObjectVersion,
        recalled: bool,
    },
}

impl Before {
    /// Reads the object with its version. With the `shape` of the chunk it encodes, an
    /// object no encoding of it can be is refused from its size (see
    /// `read::fetch_versioned`); a shard may hold gaps, so no size bound applies to it.
    async fn read(shared: &Arc<Shared>, key: &StoreKey, shape: Option<&[u64]>) -> Result<Before> {
        Ok(
            match super::read::fetch_versioned(shared, key, shape).await? {
                Some((bytes, version)) => Before::Read {
                    bytes,
                    version,
                    recalled: false,
                },
                None => Before::Absent,
            },
        )
    }

    /// What a partial write starts from: the object as this array last stored it, when kept
    /// (`written.rs`) and this is not an attempt after a conflict or an unknown outcome
    /// (`verify`), else [`read`](Self::read).
    async fn recall_or_read(
        shared: &Arc<Shared>,
        key: &StoreKey,
        shape: Option<&[u64]>,
        verify: bool,
    ) -> Result<Before> {
        if !verify && let Some(w) = shared.recall_written(key.as_str()) {
            return Ok(Before::Read {
                bytes: w.bytes,
                version: w.version,
                recalled: true,
            });
        }
        Before::read(shared, key, shape).await
    }

    /// The object's bytes, when read.
    fn bytes(&self) -> Option<&Bytes> {
        match self {
            Before::Read { bytes, .. } => Some(bytes),
            _ => None,
        }
    }

    /// For DEBUG events.
    fn describe(&self) -> &'static str {
        match self {
            Before::Unread => "skipped (covered)",
            Before::Absent => "absent",
            Before::Read {
                recalled: false, ..
            } => "read",
            Before::Read { recalled: true, .. } => "recalled (as this array stored it)",
        }
    }
}

/// How an attempt's PUT (or DELETE) ended.
#[derive(Debug)]
enum Committed {
    /// Stored, or nothing had to be written.
    Done,
    /// Nothing was written: the attempt started from a shard this array remembered
    /// (`written.rs`) that is no longer the stored one (its PUT was refused), or whose
    /// result it could not store conditionally (a delete); the next attempt reads it.
    Stale,
    /// The object changed since it was read (`Precondition`, `AlreadyExists`).
    Conflict,
    /// The store failed in a way that does not tell whether it acted (a backend error:
    /// the request may have been lost before or after the write).
    Unknown(StoreError),
}

/// Stores `encoded` (or deletes the key when `None`), conditionally on what was read
/// (`before`); where the store cannot check the condition it writes unconditionally. With
/// `verify` (an earlier attempt may have stored its bytes), an object that already holds
/// exactly `encoded` is left as it is.
async fn commit(
    shared: &Shared,
    key: &StoreKey,
    encoded: Option<PutPayload>,
    index: Option<ShardIndex>,
    before: Before,
    verify: bool,
    lock: &Arc<KeyGuard>,
) -> Result<Committed> {
    let store = shared.node.store();
    let recalled = matches!(before, Before::Read { recalled: true, .. });
    let ended = |r: std::result::Result<(), StoreError>| match r {
        Ok(()) => Ok(Committed::Done),
        // from a remembered shard: someone else wrote or deleted it since
        Err(
            StoreError::Precondition { .. }
            | StoreError::AlreadyExists { .. }
            | StoreError::NotFound { .. },
        ) if recalled => Ok(Committed::Stale),
        Err(StoreError::Precondition { .. } | StoreError::AlreadyExists { .. }) => {
            Ok(Committed::Conflict)
        }
        Err(e @ StoreError::Backend { .. }) => Ok(Committed::Unknown(e)),
        Err(e) => Err(ArrayError::Store(e)),
    };
    // whatever happens next, what this array remembered of the object (its bytes, its
    // index) is no longer known to be stored (a PUT that outlives a dropped write may
    // land): only a PUT seen to succeed below remembers again
    shared.forget_written(key.as_str());
    shared.forget_index(key.as_str());
    let Some(bytes) = encoded else {
        if recalled {
            // a delete cannot be made conditional: had someone else written the shard
            // since it was remembered, their values would go with it
            return Ok(Committed::Stale);
        }
        // nothing left to store: delete what is there (nothing to do if it was absent)
        if matches!(before, Before::Absent) {
            return Ok(Committed::Done);
        }
        return ended(store.delete(key).await);
    };
    if verify && before.bytes().is_some_and(|b| holds(b, &bytes)) {
        tracing::debug!(key = %key, "already stored: no PUT");
        return Ok(Committed::Done);
    }
    // a partial write (one that read, or recalled, the object) remembers what it stores
    let kept =
        (shared.remembers_writes() && !matches!(before, Before::Unread)).then(|| bytes.clone());
    let shard_size = bytes.content_length();
    let mode = match before {
        Before::Unread => PutMode::Overwrite,
        Before::Absent => PutMode::Create,
        Before::Read { version, .. } => PutMode::Update(version),
    };
    let put = if store.opens_now() {
        put_checked(store, key, bytes, mode, recalled).await
    } else {
        // a remote PUT (S3's client hashes the body to sign it) runs as a task of its own,
        // which holds the shard's lock until it has ended
        let (store, key) = (store.clone(), key.clone());
        let put = async move { put_checked(&store, &key, bytes, mode, recalled).await };
        spawned::on_runtime(put, lock.clone())
            .await
            .map_err(|e| ArrayError::task("the runtime shut down during a PUT", Some(e)))?
    };
    if let Ok(version) = &put {
        if let Some(payload) = &kept {
            shared.remember_written(key.as_str(), payload, version.clone());
        }
        // a remote shard's next partial read locates its inner chunks with the index it was
        // stored with, conditionally on this version (no index request)
        if let Some(index) = index
            && version.is_known()
            && !store.opens_now()
        {
            shared.remember_index(
                key.as_str(),
                Cached {
                    index: Arc::new(index),
                    version: version.clone(),
                    shard_size: shard_size as u64,
                },
            );
        }
    }
    ended(put.map(drop))
}

/// The PUT of [`commit`]: where the store cannot check `mode`'s condition it writes
/// unconditionally ([`Store::put_opts_or_overwrite`]), except over a `recalled` object: that
/// may be stale by any amount of time, so the refusal is taken for a stale entry
/// ([`Committed::Stale`]) and the next attempt reads the object (and then writes
/// unconditionally).
async fn put_checked(
    store: &Store,
    key: &StoreKey,
    bytes: PutPayload,
    mode: PutMode,
    recalled: bool,
) -> std::result::Result<ObjectVersion, StoreError> {
    if !recalled {
        return store.put_opts_or_overwrite(key, bytes, mode).await;
    }
    store.put_opts(key, bytes, mode).await.map_err(|e| match e {
        StoreError::Unsupported { .. } => StoreError::Precondition {
            url: store.url_of(key),
        },
        e => e,
    })
}

/// Whether `stored` is exactly the concatenation of `payload`'s parts.
fn holds(stored: &[u8], payload: &PutPayload) -> bool {
    if stored.len() != payload.content_length() {
        return false;
    }
    let mut rest = stored;
    payload.iter().all(|part| {
        let (head, tail) = rest.split_at(part.len());
        rest = tail;
        head == &part[..]
    })
}

/// A shard with partial access: read once unless fully covered, decode only partially
/// covered inner chunks, copy untouched inner chunks verbatim.
async fn write_shard(
    shared: &Arc<Shared>,
    layout: &ShardLayout,
    writes: &[StagedWrite<'_>],
    target: &Target,
    key: &StoreKey,
    verify: bool,
    lock: &Arc<KeyGuard>,
) -> Result<Committed> {
    let meta = shared.node.metadata();
    let elem = shared.elem;
    let shard_shape = target.chunk_shape()?;
    let codec = layout.sharding.index_codec(&shard_shape)?;
    let n_inner = codec.chunks_per_shard().iter().product::<u64>() as usize;
    let covered = target.covers_all();
    let before = if covered && !verify {
        Before::Unread
    } else {
        Before::recall_or_read(shared, key, None, verify).await?
    };
    // a covered shard is encoded from the fill value whatever was read
    let existing = match before.bytes() {
        Some(bytes) if !covered => {
            let index = codec.decode_from_shard(bytes, key.as_str())?;
            Some((bytes.clone(), index))
        }
        _ => None,
    };
    // A synchronous step per shard, parallel within: the touched inner chunks are lowered
    // in ascending order, [`INNER_BATCH`] at a time; each starts from its decoded bytes
    // (only when touched but not fully covered), the fill value or, written whole without
    // padding, this thread's scratch buffer (`scratch.rs`), gets the writes and is
    // encoded; the batch then goes into the shard's pieces, after the untouched inner
    // chunks before it (slices of the stored shard, so copied byte for byte). No piece is
    // copied to assemble the shard: the PUT stores the pieces in order (before, a serial
    // copy of every encoding into one buffer took ~10% of a whole-array write). Memory
    // holds the shard's pieces and one batch, never an operation per inner chunk. It
    // borrows the values, so it runs inside this call (never detached).
    let inner = layout.sharding.inner();
    let (dt, fv) = (meta.exec_data_type(), meta.exec_fill_value());
    let inner_shape = &layout.inner_chunk_shape;
    let cells = cell_count(inner_shape) as u64;
    let fill = try_fill_bytes(fv, cells, elem, key.as_str())?;
    let keep_empty = shared.options.store_empty_chunks;
    let cps = codec.chunks_per_shard().to_vec();
    // an inner chunk's stored bytes: a slice of the stored shard (shared, not copied)
    let stored = |i: usize| {
        existing.as_ref().and_then(|(bytes, index)| {
            index
                .get(i)
                .map(|r| bytes.slice(r.start as usize..r.end as usize))
        })
    };
    // A write touching one inner chunk (a small read-modify-write) has nothing to share
    // out: it is encoded right here, without the CPU pool's hand-over (`block_in_place`,
    // waking the pool's threads, which then spin before they park).
    let mut touched_at_most = 0u128;
    for (_, work) in &target.shards {
        touched_at_most = touched_at_most.saturating_add(work.inner.len()?);
    }
    let single = touched_at_most <= 1;
    let step = || -> Result<_> {
        let mut shard = layout.sharding.shard_parts(codec.clone(), key.as_str())?;
        let mut counts = ShardCounts::default();
        // the inner chunks before `next` are in the shard (or left out)
        let mut next = 0usize;
        let copy_untouched =
            |shard: &mut ShardParts, counts: &mut ShardCounts, next: usize, end: usize| {
                if existing.is_none() {
                    return Ok::<_, ArrayError>(());
                }
                for i in next..end {
                    if let Some(bytes) = stored(i) {
                        shard.append(i, bytes)?;
                        counts.copied_verbatim += 1;
                    }
                }
                Ok(())
            };
        let mut touched = target.inner_targets(&cps)?;
        loop {
            let batch: Vec<InnerTarget> =
                touched.by_ref().take(INNER_BATCH).collect::<Result<_>>()?;
            if batch.is_empty() {
                break;
            }
            let encode = |(i, ops): InnerTarget| {
                let covered = ops.iter().any(|(_, op)| op.coverage == Coverage::Full);
                let old = stored(i);
                let decoded = !covered && old.is_some();
                // a chunk that one write covers and that has no padding
                // (`writes_every_cell`) starts from this thread's scratch buffer, neither
                // filled nor allocated
                let (mut owned, mut scratch);
                let buf: &mut [u8] = if ops.iter().any(|(_, op)| writes_every_cell(op, cells)) {
                    scratch = Scratch::take(fill.len(), key.as_str())?;
                    &mut scratch
                } else {
                    owned = match old {
                        Some(b) if !covered => {
                            let coords = crate::codec::block::unravel(i as u64, &cps);
                            let name = format!("{} inner chunk {coords:?}", key.as_str());
                            inner.decode(&b, inner_shape, dt, fv, &name)?
                        }
                        _ => fill.clone(),
                    };
                    &mut owned
                };
                apply(writes, &ops, buf, elem)?;
                let enc = if keep_empty {
                    Some(inner.encode(buf, inner_shape, dt, fv)?)
                } else {
                    inner.encode_elide(buf, inner_shape, dt, fv)?
                };
                tracing::trace!(
                    key = %key,
                    inner = ?crate::codec::block::unravel(i as u64, &cps),
                    decoded,
                    bytes_out = enc.as_ref().map_or(0, Bytes::len),
                    stored = enc.is_some(),
                    "encode inner chunk"
                );
                Ok((i, decoded, enc))
            };
            let fresh: Vec<(usize, bool, Option<Bytes>)> = if single {
                batch.into_iter().map(encode).collect::<Result<_>>()?
            } else {
                batch.into_par_iter().map(encode).collect::<Result<_>>()?
            };
            for (i, decoded, enc) in fresh {
                copy_untouched(&mut shard, &mut counts, next, i)?;
                next = i + 1;
                counts.rewritten += 1;
                counts.decoded_first += usize::from(decoded);
                match enc {
                    Some(enc) => shard.append(i, enc)?,
                    None => counts.elided += 1,
                }
            }
        }
        copy_untouched(&mut shard, &mut counts, next, n_inner)?;
        tracing::debug!(
            key = %key,
            read = before.describe(),
            rewritten = counts.rewritten,
            decoded_first = counts.decoded_first,
            elided = counts.elided,
            copied_verbatim = counts.copied_verbatim,
            "write shard"
        );
        Ok(shard.finish_with_index()?)
    };
    let finished = if single { step()? } else { run_parallel(step)? };
    let (encoded, index) = match finished {
        Some((parts, index)) => (Some(PutPayload::from_iter(parts)), Some(index)),
        None => (None, None),
    };
    // The encode ran inside this poll (it borrows the caller's values): yield before the
    // PUT, so that a caller polling many shard writes at once (`buffer_unordered`) gets
    // control back after a few encodes rather than after all in flight (the Python
    // module checks for Ctrl-C between polls).
    tokio::task::yield_now().await;
    commit(shared, key, encoded, index, before, verify, lock).await
}

/// What a shard write did with the shard's inner chunks (for its DEBUG event).
#[derive(Debug, Default)]
struct ShardCounts {
    rewritten: usize,
    decoded_first: usize,
    elided: usize,
    copied_verbatim: usize,
}

/// A chunk (or a shard that must be decoded whole): read unless fully covered, decode,
/// apply, encode, store.
async fn write_whole(
    shared: &Arc<Shared>,
    writes: &[StagedWrite<'_>],
    target: &Target,
    key: &StoreKey,
    verify: bool,
    lock: &Arc<KeyGuard>,
) -> Result<Committed> {
    let meta = shared.node.metadata();
    let elem = shared.elem;
    let shape = target.chunk_shape()?;
    let cells = crate::codec::block::num_elements(&shape);
    let covered = target.covers_all();
    let before = if covered && !verify {
        Before::Unread
    } else {
        Before::recall_or_read(shared, key, Some(&shape), verify).await?
    };
    let mut buf = match before.bytes() {
        // a covered chunk is encoded from the fill value whatever was read
        Some(bytes) if !covered => {
            let (shared, bytes) = (shared.clone(), bytes.clone());
            let name = key.as_str().to_string();
            let shape = shape.clone();
            on_blocking(None, move || {
                let meta = shared.node.metadata();
                Ok(meta.codecs().decode(
                    &bytes,
                    &shape,
                    meta.exec_data_type(),
                    meta.exec_fill_value(),
                    &name,
                )?)
            })
            .await?
        }
        _ => try_fill_bytes(meta.exec_fill_value(), cells, elem, key.as_str())?,
    };
    tracing::debug!(key = %key, read = before.describe(), "write chunk");
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
                    meta.exec_data_type(),
                    meta.exec_fill_value(),
                )?))
            } else {
                Ok(codecs.encode_elide(
                    &buf,
                    &shape,
                    meta.exec_data_type(),
                    meta.exec_fill_value(),
                )?)
            }
        })
        .await?
    };
    commit(
        shared,
        key,
        encoded.map(PutPayload::from),
        None,
        before,
        verify,
        lock,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(chunk: &[u64], data: &[u64], coverage: Coverage) -> ChunkOp {
        ChunkOp {
            row: vec![0],
            chunk_coords: vec![0; chunk.len()],
            chunk_start: vec![0; chunk.len()],
            chunk_shape: chunk.to_vec(),
            data_shape: data.to_vec(),
            base_local: vec![0; chunk.len()],
            axes: Vec::new(),
            result_shape: data.to_vec(),
            coverage,
        }
    }

    #[test]
    fn only_a_covered_chunk_without_padding_of_the_buffer_is_written_whole() {
        assert!(writes_every_cell(&op(&[2, 4], &[2, 4], Coverage::Full), 8));
        // padding beyond the array's edge keeps the fill value
        assert!(!writes_every_cell(&op(&[2, 4], &[1, 4], Coverage::Full), 8));
        // not covered, or not proven covered
        assert!(!writes_every_cell(
            &op(&[2, 4], &[2, 4], Coverage::Partial),
            8
        ));
        assert!(!writes_every_cell(
            &op(&[2, 4], &[2, 4], Coverage::Unknown),
            8
        ));
        // a chunk that is not the buffer's
        assert!(!writes_every_cell(
            &op(&[2, 4], &[2, 4], Coverage::Full),
            16
        ));
        // a shape whose cells overflow
        assert!(!writes_every_cell(
            &op(&[u64::MAX, 2], &[u64::MAX, 2], Coverage::Full),
            0
        ));
    }
}
