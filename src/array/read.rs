//! The read executor: plan, fetch, decode, copy into the result.
//!
//! Sharded arrays are planned twice (shard grid, then each touched shard's inner-chunk grid;
//! the shards of a read in parallel on rayon's pool). Per touched shard: when every inner
//! chunk inside the array is needed the whole object is fetched in one request
//! ([`crate::store::Store::get_object`]: a local shard stays in its file and only its pieces
//! are read); otherwise the index comes from the cache or one ranged request and only the
//! needed inner chunks are fetched, with coalesced ranges. Missing shards, inner chunks and
//! chunks fill their destination with the fill value without decoding anything.
//!
//! From a local or `memory://` store ([`crate::store::Store::get_object_now`]) on a regular
//! shard grid, a read goes in rounds of shards instead ([`read_in_place`]): the CPU pool
//! opens each shard of a round and makes its parts, then the round is copied; nothing goes
//! through the runtime, since nothing waits but for the CPU.
//!
//! Otherwise fetching and decoding run in a producer task; decodes run on tokio's blocking pool behind
//! a [`DecodeGate`] (at most `decode_threads` at a time) and hand their parts over a bounded
//! channel. A part is the fill value, a still-encoded chunk that most of the operation reads
//! (the copy stage decodes it: straight into the result when its cells are one contiguous
//! run, else into its thread's reused buffer and copied from there while it is in cache;
//! a round of few pieces of the result that do not share out evenly over the threads
//! decodes those left over ahead, on every copy thread), the few cells a sparse operation
//! reads (packed), or a chunk decoded whole by a codec chain that cannot address inner
//! chunks. Copies (and their decodes) run on the calling task, in parallel over disjoint
//! pieces of the result inside a scope, so the result buffer (possibly borrowed from the
//! caller) never outlives the call.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use tokio::sync::mpsc::error::TryRecvError;
use zarrs::array::{DataType, FillValue};

use tracing::Instrument;

use crate::codec::{CodecError, CodecPipeline, ShardIndex, ShardIndexCodec};
use crate::index::IndexTransform;
use crate::index::shape::cell_count;
use crate::plan::{ChunkOp, ShardWork, plan_chunks, plan_sharded};
use crate::store::{FetchedObject, StoreError, StoreKey};

use super::cache::{Cached, read_index};
use super::error::{ArrayError, Result};
use super::gate::DecodeGate;
use super::planned::Planned;
use super::pool::{
    cpu_pool_threads, guarded, on_blocking, on_cpu_pool, on_multi_thread_runtime, run_parallel,
};
use super::retry::{MAX_CONFLICT_ATTEMPTS, backoff};
use super::scatter::{Kernel, joins_chain};
use super::scratch::with_kept_buffer;
use super::stream_store;
use super::{ShardLayout, Shared, inner_chunk_index};

/// What lands in the result for one chunk operation.
enum Payload {
    /// The fill value (missing chunk, inner chunk or shard).
    Fill,
    /// A decoded chunk buffer of the operation's declared chunk shape (a shard decoded
    /// whole through its codec pipeline, or a chunk a copy round decoded ahead: see
    /// [`predecode`]).
    Data(Vec<u8>),
    /// Only the cells the operation reads, in its visiting order (see [`Kernel::pack`]).
    Packed(Vec<u8>),
    /// An encoded chunk the operation reads densely (see [`dense`]), decoded by the copy
    /// stage: straight into the result when its cells fill one contiguous run of it (see
    /// [`Kernel::contiguous_whole_chunk`]), else into the copy thread's reused buffer.
    Encoded(Encoded),
}

/// An encoded chunk (or inner chunk) waiting to be decoded by the copy stage.
struct Encoded {
    bytes: EncodedBytes,
    /// Its declared shape.
    shape: Vec<u64>,
    /// An inner chunk of a shard (inner codecs), or a chunk (the array's codecs).
    inner: bool,
    /// Names it in errors.
    name: String,
}

/// Where the bytes of an [`Encoded`] chunk are.
enum EncodedBytes {
    /// In memory.
    Shared(Bytes),
    /// Still in the open file of a shard read in place, at `range`: read by the copy stage
    /// into its thread's reused buffer just before it decodes them, so a read holds no
    /// encoded bytes between its decode and copy stages (only open files).
    InFile {
        object: Arc<FetchedObject>,
        range: std::ops::Range<u64>,
    },
}

thread_local! {
    /// Chunks a copy thread decodes before copying their cells into the result (kept
    /// like [`ENCODED_BUFFER`]).
    static DECODED_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Encoded bytes a copy thread reads from a file, reused from chunk to chunk
    /// ([`with_kept_buffer`]).
    static ENCODED_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl EncodedBytes {
    /// Calls `f` with the encoded bytes (read from the file first, into this thread's
    /// reused buffer, when they are still there).
    fn with<R>(&self, f: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
        match self {
            EncodedBytes::Shared(bytes) => f(bytes),
            EncodedBytes::InFile { object, range } => with_kept_buffer(&ENCODED_BUFFER, |buf| {
                object.read_range_into(range.clone(), buf)?;
                f(buf)
            }),
        }
    }
}

/// How the stored chunks of one kind (the array's chunks, or a shard's inner chunks)
/// decode: codecs, declared shape, data type, fill value, element size.
struct ChunkCodec<'a> {
    pipeline: &'a CodecPipeline,
    shape: &'a [u64],
    data_type: &'a DataType,
    fill_value: &'a FillValue,
    elem: usize,
}

impl ChunkCodec<'_> {
    /// Cells of a chunk.
    fn cells(&self) -> usize {
        cell_count(self.shape)
    }

    /// The payload of `kernel` over the chunk whose encoded bytes are `bytes`: the encoded
    /// chunk (`encoded()`) when the operation reads it densely, for the copy stage to
    /// decode, else the packed cells read (decoded here into `scratch`, reused). `name`
    /// names the chunk in errors.
    fn payload(
        &self,
        kernel: &Kernel,
        bytes: &[u8],
        name: &str,
        scratch: &mut Vec<u8>,
        encoded: impl FnOnce() -> Encoded,
    ) -> Result<Payload> {
        if dense(kernel, self.cells()) {
            return Ok(Payload::Encoded(encoded()));
        }
        // the stored size is checked before the scratch buffer grows to the chunk's
        let (shape, dt, fv) = (self.shape, self.data_type, self.fill_value);
        self.pipeline
            .decode_to_buffer(bytes, shape, dt, fv, name, scratch)?;
        Ok(Payload::Packed(kernel.pack(scratch, self.elem)?))
    }
}

/// Compiled copy kernels with what they copy.
type Parts = Vec<(Kernel, Payload)>;

/// Where a shard's decode hands its parts over while it goes, [`MAX_BATCH`] at a time (a
/// shard of a million inner chunks never holds a million parts).
type PartsSender = tokio::sync::mpsc::Sender<Result<Parts>>;

/// Reads the cells of `transform` (over the array's storage space) into `out`, the C-order
/// native-endian buffer of the transform's domain shape.
pub(crate) async fn read_into(
    shared: &Arc<Shared>,
    transform: &IndexTransform,
    out: &mut [u8],
) -> Result<()> {
    let elem = shared.elem;
    let cells = transform.domain().num_elements().unwrap_or(u64::MAX);
    if (out.len() as u64) != cells.saturating_mul(elem as u64) {
        return Err(ArrayError::Internal(format!(
            "a buffer of {} bytes for {cells} elements of {elem} bytes",
            out.len()
        )));
    }
    if cells == 0 {
        return Ok(());
    }
    let span = tracing::debug_span!("read", rank = transform.input_rank(), cells);
    read_planned(shared, transform, out).instrument(span).await
}

/// [`read_into`] of a non-empty transform, inside the read's span.
async fn read_planned(
    shared: &Arc<Shared>,
    transform: &IndexTransform,
    out: &mut [u8],
) -> Result<()> {
    let fill = shared
        .node
        .metadata()
        .exec_fill_value()
        .as_ne_bytes()
        .to_vec();
    // Plan on the calling task (the partition and the first batch of shards: errors
    // surface before any I/O); the owned plan then moves into a producer task, which
    // lowers later shards as it reads them, so a plan of millions of chunks never exists
    // whole: at most a batch of lowered shards, `request_concurrency` in flight and the
    // channel's parts are alive at once.
    let work = plan_read(shared, transform)?;
    let work = match (work, in_place_round(shared)) {
        (Work::Shards(works), Some(per_round)) => {
            return read_in_place(shared, works, per_round, out, &fill).await;
        }
        (work, _) => work,
    };
    let decode = Arc::new(DecodeGate::new(shared.options.decode_threads));
    let mut concurrency = shared.options.request_concurrency.max(1);
    if shared.node.store().reads_in_place() {
        // nothing to wait for but the decodes: more shards in flight only hold more
        // open files and packed cells (see IN_PLACE_SHARDS)
        concurrency = concurrency.min(IN_PLACE_SHARDS.max(2 * shared.options.decode_threads));
    }
    // The producer fetches and decodes (kernels compiled on the decode pool) and hands
    // decoded parts over a bounded channel; this task only copies them into `out`. Running
    // the fetch/decode stream on its own task keeps it polled (permits released, next
    // requests issued) while this task copies. The producer owns everything it touches, so
    // it never sees `out`; dropping this future aborts it.
    let (tx, mut rx) =
        tokio::sync::mpsc::channel::<Result<Parts>>(shared.options.decode_threads.max(1) + 1);
    let gate = decode.clone();
    let producer = {
        let shared = shared.clone();
        let parts = tx.clone();
        async move {
            let shared = &shared;
            let mut stream = match work {
                Work::Shards(works) => match &shared.shards {
                    Some(layout) => futures::stream::iter(works)
                        .map(move |work| {
                            let decode = decode.clone();
                            let parts = parts.clone();
                            async move { read_shard(shared, layout, work?, decode, parts).await }
                        })
                        .buffer_unordered(concurrency)
                        .boxed(),
                    None => futures::stream::once(async {
                        Err(ArrayError::Internal(
                            "shard work of an unsharded array".into(),
                        ))
                    })
                    .boxed(),
                },
                Work::Chunks(ops) => futures::stream::iter(ops)
                    .map(move |op| {
                        let decode = decode.clone();
                        async move { read_chunk(shared, op?, decode).await }
                    })
                    .buffer_unordered(concurrency)
                    .boxed(),
            };
            while let Some(item) = stream.next().await {
                let stop = item.is_err();
                if tx.send(item).await.is_err() || stop {
                    break;
                }
            }
        }
    };
    let handle = tokio::spawn(producer.in_current_span());
    let _abort = AbortOnDrop(handle.abort_handle(), gate);
    let copy_threads = copy_threads(shared.options.decode_threads);
    // A store that reads in place hands over parts that hold no bytes (encoded chunks stay
    // in their files) after no wait but a few thread hops: a round then waits for a full
    // batch, so that it spans shards (and so disjoint pieces of the result, which are what
    // its copy threads split) instead of copying the first shard's parts alone.
    let wait_for_full_batch = shared.node.store().reads_in_place();
    while let Some(parts) = rx.recv().await {
        let mut batch = parts?;
        // Take whatever else is ready, so one copy round covers several shards.
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(more) => batch.extend(more?),
                Err(TryRecvError::Empty) if wait_for_full_batch => match rx.recv().await {
                    Some(more) => batch.extend(more?),
                    None => break,
                },
                Err(_) => break,
            }
        }
        copy_batch(shared, batch, out, &fill, copy_threads)?;
    }
    // The channel closed: the producer finished or failed; a panic surfaces here.
    handle
        .await
        .map_err(|e| ArrayError::task("the read's fetch and decode task", Some(e)))?;
    Ok(())
}

/// Shards one round of [`read_in_place`] opens at once (at most).
const IN_PLACE_ROUND_SHARDS: usize = 32;

/// How many shards one round of [`read_in_place`] takes, when the read goes that way: a
/// sharded array whose inner chunks can be read one by one, in a store that reads objects
/// in place and opens them without the runtime ([`crate::store::Store::get_object_now`]),
/// on a regular shard grid whose shards hold at most [`MAX_BATCH`] inner chunks (a round
/// then holds at most twice that many parts). `None`: the read goes through the producer
/// task.
fn in_place_round(shared: &Shared) -> Option<usize> {
    let layout = shared.shards.as_ref()?;
    let store = shared.node.store();
    if !(layout.partial_reads && store.reads_in_place() && store.opens_now()) {
        return None;
    }
    let shard_shape = shared
        .grids
        .iter()
        .map(|g| g.as_regular().and(g.chunk_size(0).ok()))
        .collect::<Option<Vec<u64>>>()?;
    let per_shard = inner_chunks_in(&shard_shape, &layout.inner_chunk_shape);
    if per_shard == 0 || per_shard > MAX_BATCH as u64 {
        return None;
    }
    Some(((2 * MAX_BATCH as u64 / per_shard) as usize).clamp(1, IN_PLACE_ROUND_SHARDS))
}

/// Reads the shards of `works` from a store that reads in place ([`in_place_round`]) in
/// rounds of `per_round` shards: the CPU pool opens each shard of a round, reads its index
/// and makes its parts (decoding the sparse ones), one shard per job and one job per core;
/// then the round's parts are copied ([`copy_batch`], which decodes the dense ones).
///
/// Nothing here waits on anything but the CPU, so nothing goes through the runtime: with
/// every core decoding, each hop between a runtime worker, the blocking pool and the CPU
/// pool waited for a time slice (1–4 ms on 2 cores), and the producer task's route of three
/// hops per shard left a fifth of the cores' time idle. A cancelled read stops between
/// rounds.
async fn read_in_place(
    shared: &Arc<Shared>,
    mut works: Planned<ShardWork>,
    per_round: usize,
    out: &mut [u8],
    fill: &[u8],
) -> Result<()> {
    use rayon::prelude::*;
    let layout = shared
        .shards
        .as_ref()
        .ok_or_else(|| ArrayError::Internal("an in-place read of an unsharded array".into()))?;
    let threads = copy_threads(shared.options.decode_threads);
    // as many shards open at once as requests would be in flight, at most
    let per_round = per_round.min(shared.options.request_concurrency.max(1));
    // the jobs run inside the read's span, as the CPU pool's other jobs do
    let span = tracing::Span::current();
    loop {
        let round: Vec<ShardWork> = works.by_ref().take(per_round).collect::<Result<_>>()?;
        if round.is_empty() {
            return Ok(());
        }
        let make = |work: ShardWork| {
            let _entered = span.enter();
            guarded("a shard's decode panicked", || {
                shard_parts_now(shared, layout, work)
            })
        };
        // Always on the CPU pool, whose threads may block and are outside the runtime (so
        // the opens there never go through it). Fewer `threads` (the read's
        // `decode_threads`) than the pool has make at most that many jobs; otherwise the
        // shards are shared out as the pool's threads free up.
        let per_job = items_per_job(round.len(), threads);
        let made: Vec<Result<Parts>> = run_parallel(|| {
            round
                .into_par_iter()
                .with_min_len(per_job)
                .map(make)
                .collect()
        });
        let mut parts = Vec::new();
        for shard in made {
            parts.extend(shard?);
        }
        copy_batch(shared, parts, out, fill, threads)?;
        tokio::task::yield_now().await;
    }
}

/// The parts of one shard of an in-place round, on the calling thread (see
/// [`read_in_place`]): a missing shard fills.
fn shard_parts_now(shared: &Shared, layout: &ShardLayout, work: ShardWork) -> Result<Parts> {
    let key = shared.chunk_key(&work.shard.chunk_coords)?;
    let codec = layout.sharding.index_codec(&work.shard.chunk_shape)?;
    if tracing::enabled!(tracing::Level::DEBUG) {
        trace_read_shard(&key, layout, &work, work.inner.len()?, true);
    }
    let object = match shared.node.store().get_object_now(&key) {
        Ok(object) => Arc::new(object),
        Err(e) if e.is_not_found() => return fill_part(&work.shard),
        Err(e) => return Err(e.into()),
    };
    // A shard's operations fit one batch (`in_place_round`); should more come, they are
    // kept with the rest rather than refused.
    collect_parts(|sink| parts_of_object(shared, &codec, &key, &work, &object, sink))
}

/// Plans a read of `transform`: the touched shards (each with its inner plan) or chunks, in
/// plan order, lowered a batch at a time as they are read (see [`Planned`]): the first
/// batch here, so planning errors surface before any request. With DEBUG events on, one
/// event reports the plan (rank, shards or chunks, planning time of the partition and the
/// first batch).
pub(super) fn plan_read(shared: &Shared, transform: &IndexTransform) -> Result<Work> {
    let span = tracing::debug_span!("plan", rank = transform.input_rank());
    let _entered = span.enter();
    let start = tracing::enabled!(tracing::Level::DEBUG).then(std::time::Instant::now);
    let work = match &shared.shards {
        Some(layout) => {
            let plan = plan_sharded(transform, &shared.grids, &layout.inner_chunk_shape)?;
            let partition = plan.outer().partition()?;
            let (rows, len) = (partition.rows(), partition.len());
            Work::Shards(Planned::new(rows, len, move |row| Ok(plan.shard_at(row)?))?)
        }
        None => {
            let plan = plan_chunks(transform, &shared.grids)?;
            let partition = plan.partition()?;
            let (rows, len) = (partition.rows(), partition.len());
            Work::Chunks(Planned::new(rows, len, move |row| Ok(plan.op_at(row)?))?)
        }
    };
    if let Some(start) = start {
        let planning_us = start.elapsed().as_micros() as u64;
        match &work {
            Work::Shards(works) => {
                tracing::debug!(shards = works.len() as u64, planning_us, "planned a read")
            }
            Work::Chunks(ops) => {
                tracing::debug!(chunks = ops.len() as u64, planning_us, "planned a read")
            }
        }
    }
    Ok(work)
}

/// Shards read at once (at most; `2 × decode_threads` when more) from a store that reads
/// in place: its fetches cost nothing to wait for, so more shards in flight only hold more
/// open files and sparse operations' packed cells until the copy stage takes them. Chosen
/// when the decode stage still decoded dense chunks (read benchmark, 512³ uint16, 2 cores,
/// best of 8: 32 shards at once against 8 held 416 against 335 MB peak for read all, 255
/// against 244 ms; the same 18 ms for the sub-box; 131 against 137 ms for the gather);
/// since dense chunks reach the copy stage still encoded, read all peaks at output + 6 MiB
/// (output + 8 MiB with the streamed copies of large results, [`copy_ops`]).
const IN_PLACE_SHARDS: usize = 8;

/// A piece of the result for one copy thread: start byte, the bytes, what lands there.
type Piece<'a> = (usize, &'a mut [u8], Parts);

/// Parts of a copy round whose result bytes overlap: first byte, end byte, work (bytes
/// written, decodes weighted by [`DECODE_WEIGHT`]), the parts.
type Cluster = (usize, usize, usize, Parts);

/// A copy round with fewer clusters than this per thread pre-decodes the clusters left
/// over when they do not share out evenly (see [`copy_batch`]); with more, the imbalance
/// is a small part of each thread's share.
const FEW_CLUSTERS_PER_THREAD: usize = 8;

/// How many of a copy round's `clusters` (the last ones) have their chunks decoded ahead
/// on `threads` threads: those left over when the clusters do not share out evenly, when
/// there are few (fewer than [`FEW_CLUSTERS_PER_THREAD`] a thread).
fn clusters_to_predecode(clusters: usize, threads: usize) -> usize {
    if threads < 2 || clusters >= FEW_CLUSTERS_PER_THREAD.saturating_mul(threads) {
        return 0;
    }
    clusters % threads
}

/// The most bytes of chunks a copy round decodes ahead of its copies (see [`predecode`]).
const MAX_PREDECODED_BYTES: usize = 32 << 20;

/// Most operations gathered into one copy round.
const MAX_BATCH: usize = 1024;
/// Copy rounds smaller than this (bytes, decodes weighted) run on the calling thread.
const PARALLEL_COPY_BYTES: usize = 1 << 20;
/// Weight of a byte decoded while copying, against a byte copied.
const DECODE_WEIGHT: usize = 10;

/// Threads for copying into the result: `decode_threads`, at most one per core, and only
/// on a multi-threaded runtime (copies run in a scope entered through `block_in_place`).
///
/// Copy threads decode the dense chunks they copy and never wait on anything, so a thread
/// beyond the cores only shares one: a round ends when its busiest thread does, and with 3
/// threads on 2 cores read all took 182–200 ms against 152–168 ms with 2 (the decode
/// stage's extra thread, [`super::default_decode_threads`], does pay off: its decodes wait
/// on file reads).
fn copy_threads(decode_threads: usize) -> usize {
    if on_multi_thread_runtime() {
        decode_threads.min(super::pool::cores()).max(1)
    } else {
        1
    }
}

/// Copies one round of decoded parts into the result.
///
/// Parallel copies stay safe: the operations are grouped into clusters of overlapping
/// destination ranges, the result is split into disjoint `&mut` pieces (`split_at_mut`),
/// one per cluster, and the pieces are copied by scoped threads that end before this
/// function returns (inside `block_in_place`, so a cancelled read cannot leave a thread
/// writing into a buffer that is gone). Every kernel checks its offsets against its piece.
fn copy_batch(
    shared: &Shared,
    batch: Parts,
    out: &mut [u8],
    fill: &[u8],
    threads: usize,
) -> Result<()> {
    let elem = shared.elem;
    let fill_elem = fill.len().max(1);
    // (first byte, end byte, work, kernel, payload); work counts the bytes actually
    // written, a decode as much as copying DECODE_WEIGHT times its bytes.
    let mut items = Vec::with_capacity(batch.len());
    for (kernel, payload) in batch {
        let Some((lo, hi)) = kernel.dest_bounds() else {
            continue;
        };
        let (size, weight) = match &payload {
            Payload::Fill => (fill_elem, 1),
            Payload::Data(_) | Payload::Packed(_) => (elem, 1),
            Payload::Encoded(_) => (elem, DECODE_WEIGHT),
        };
        let work = kernel.cells().saturating_mul(size).saturating_mul(weight);
        let (lo, hi) = (lo.max(0) as usize * size, (hi.max(0) as usize + 1) * size);
        items.push((lo, hi, work, kernel, payload));
    }
    let work: usize = items.iter().map(|i| i.2).sum();
    let stream = out.len() >= stream_min_bytes();
    if threads < 2 || work < PARALLEL_COPY_BYTES {
        let ops = items
            .into_iter()
            .map(|(_, _, _, kernel, payload)| (kernel, payload));
        return copy_ops(shared, ops, out, 0, fill, stream);
    }
    items.sort_by_key(|i| i.0);
    // Clusters of overlapping byte ranges: (start, end, work, items).
    let mut clusters: Vec<Cluster> = Vec::new();
    for (lo, hi, work, kernel, payload) in items {
        match clusters.last_mut() {
            Some(c) if lo < c.1 => {
                c.1 = c.1.max(hi);
                c.2 += work;
                c.3.push((kernel, payload));
            }
            _ => clusters.push((lo, hi, work, vec![(kernel, payload)])),
        }
    }
    if clusters.last().is_some_and(|c| c.1 > out.len()) {
        return Err(ArrayError::Internal(format!(
            "a copy reaches byte {} of a {}-byte result",
            clusters.last().map_or(0, |c| c.1),
            out.len()
        )));
    }
    if clusters.len() < 2 {
        // Nothing to split (e.g. a gather whose points all land in one stretch of the
        // result): copy here, off the runtime's worker.
        return tokio::task::block_in_place(|| {
            let ops = clusters.into_iter().flat_map(|(_, _, _, ops)| ops);
            copy_ops(shared, ops, out, 0, fill, stream)
        });
    }
    // Few clusters that do not share out evenly (7 z-slabs of a box over 2 threads: 4
    // against 3, a cluster being one piece of the result and so one thread's): the ones
    // left over have their chunks decoded first, by every copy thread, so each thread's
    // share of what remains is even.
    let left_over = clusters_to_predecode(clusters.len(), threads);
    if left_over > 0 {
        let from = clusters.len() - left_over;
        predecode(shared, &mut clusters[from..], threads)?;
    }
    // Disjoint pieces, handed to the least loaded group in order of position.
    let mut groups: Vec<(usize, Vec<Piece<'_>>)> = (0..threads).map(|_| (0, Vec::new())).collect();
    let mut rest = out;
    let mut consumed = 0usize;
    for (lo, hi, work, ops) in clusters {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - consumed);
        let (piece, tail) = tail.split_at_mut(hi - lo);
        rest = tail;
        consumed = hi;
        if let Some(g) = groups.iter_mut().min_by_key(|g| g.0) {
            g.0 += work;
            g.1.push((lo, piece, ops));
        }
    }
    // The groups run as jobs of the CPU pool (no thread started per round); the scope
    // ends before this function returns, so nothing outlives the borrow of `out`.
    let mut results: Vec<Result<()>> = groups.iter().map(|_| Ok(())).collect();
    run_parallel(|| {
        rayon::scope(|scope| {
            for ((_, pieces), result) in groups.into_iter().zip(results.iter_mut()) {
                if pieces.is_empty() {
                    continue;
                }
                scope.spawn(move |_| {
                    *result = guarded("a copy job panicked", || {
                        for (lo, piece, ops) in pieces {
                            copy_ops(shared, ops, piece, lo, fill, stream)?;
                        }
                        Ok(())
                    });
                });
            }
        })
    });
    results.into_iter().collect()
}

/// The codec pipeline that decodes `chunk`: the inner codecs for an inner chunk, the
/// array's for a chunk.
fn pipeline_of<'s>(shared: &'s Shared, chunk: &Encoded) -> Result<&'s CodecPipeline> {
    match (&shared.shards, chunk.inner) {
        (Some(layout), true) => Ok(layout.sharding.inner()),
        (_, false) => Ok(shared.node.metadata().codecs()),
        (None, true) => Err(ArrayError::Internal(format!(
            "{} is an inner chunk of an unsharded array",
            chunk.name
        ))),
    }
}

/// The least number of items a parallel job of the CPU pool takes so that `items` make at
/// most `threads` jobs: 1 when `threads` (the read's `decode_threads`) covers the pool,
/// else the items shared out over `threads`.
fn items_per_job(items: usize, threads: usize) -> usize {
    if threads >= cpu_pool_threads() {
        1
    } else {
        items.div_ceil(threads.max(1))
    }
}

/// Decodes the encoded chunks of `clusters` into buffers of their own on `threads` of the
/// CPU pool's threads (the read's copy threads), leaving each cluster's copy alone to be
/// done (see [`copy_batch`]). Decodes nothing when the decoded chunks would take more than
/// [`MAX_PREDECODED_BYTES`], or when they are fewer than the threads (some would wait for
/// the others, which the copies after them would not).
fn predecode(shared: &Shared, clusters: &mut [Cluster], threads: usize) -> Result<()> {
    use rayon::prelude::*;
    let elem = shared.elem;
    let mut parts: Vec<&mut Payload> = clusters
        .iter_mut()
        .flat_map(|c| c.3.iter_mut().map(|(_, payload)| payload))
        .filter(|payload| matches!(payload, Payload::Encoded(_)))
        .collect();
    let bytes = parts.iter().fold(0usize, |sum, payload| match payload {
        Payload::Encoded(chunk) => {
            sum.saturating_add(cell_count(&chunk.shape).saturating_mul(elem))
        }
        _ => sum,
    });
    if parts.len() < threads.max(1) || bytes > MAX_PREDECODED_BYTES {
        return Ok(());
    }
    #[cfg(test)]
    tests::PREDECODED.fetch_add(parts.len(), std::sync::atomic::Ordering::Relaxed);
    let per_job = items_per_job(parts.len(), threads);
    let meta = shared.node.metadata();
    let (dt, fv) = (meta.exec_data_type(), meta.exec_fill_value());
    let decoded: Vec<Result<()>> = run_parallel(|| {
        parts
            .par_iter_mut()
            .with_min_len(per_job)
            .map(|payload| {
                guarded("a chunk's decode panicked", || {
                    let Payload::Encoded(chunk) = &**payload else {
                        return Ok(());
                    };
                    let pipeline = pipeline_of(shared, chunk)?;
                    let mut buf = Vec::new();
                    chunk.bytes.with(|bytes| {
                        // the stored size is checked before the buffer grows to the chunk's
                        pipeline.decode_to_buffer(
                            bytes,
                            &chunk.shape,
                            dt,
                            fv,
                            &chunk.name,
                            &mut buf,
                        )?;
                        Ok::<_, ArrayError>(())
                    })?;
                    **payload = Payload::Data(buf);
                    Ok(())
                })
            })
            .collect()
    });
    decoded.into_iter().collect::<Result<()>>()?;
    // what is left of these clusters is copying
    for c in clusters.iter_mut() {
        c.2 =
            c.3.iter()
                .map(|(kernel, _)| kernel.cells().saturating_mul(elem))
                .sum();
    }
    Ok(())
}

/// Results at least this large (bytes) are written with streaming stores (see
/// [`copy_ops`]). A smaller result may still be in a cache when its caller reads it, and
/// skipping the cache then costs: the read benchmark's 16 MiB sub-box took ~8 % longer
/// streamed, its 256 MiB read all ~10 % less.
const STREAM_MIN_BYTES: usize = 64 << 20;

/// [`STREAM_MIN_BYTES`] (in this crate's unit tests, what they set).
fn stream_min_bytes() -> usize {
    #[cfg(test)]
    return tests::STREAM_MIN.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    STREAM_MIN_BYTES
}

/// The most bytes of chunks [`copy_ops`] decodes ahead of one streamed row copy.
const MAX_CHAIN_DECODED_BYTES: usize = 1 << 20;

thread_local! {
    /// The chunks of one streamed row copy, decoded ([`copy_chain`]).
    static DECODED_CHAIN: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Copies `ops` into `piece`, the result bytes starting at byte `start`, in order.
///
/// With `stream` (a large result, [`STREAM_MIN_BYTES`]), dense chunks copied row by row go
/// through [`copy_chain`]: consecutive ones that continue each other's rows in the result
/// (x-neighbouring inner chunks of a box, which [`copy_batch`]'s order by destination puts
/// side by side) are decoded together and their rows stored whole, with streaming stores
/// ([`super::stream_store`]). A result row is then written once, in whole lines, where
/// copying each chunk's 64-byte share of it would first read the line (and, with a result
/// not 64-byte aligned, as `malloc` returns large buffers, read two lines for each
/// share). Measured on the read benchmark's 256 MiB read all: ~10 % less time and CPU
/// (medians of alternated runs). The streamed stores are fenced before this returns, by
/// a guard, on every way out.
///
/// A thread that streamed keeps the decoded chunks of its last chain (at most
/// [`MAX_CHAIN_DECODED_BYTES`]) for the next.
fn copy_ops(
    shared: &Shared,
    ops: impl IntoIterator<Item = (Kernel, Payload)>,
    piece: &mut [u8],
    start: usize,
    fill: &[u8],
    stream: bool,
) -> Result<()> {
    if !stream {
        for (kernel, payload) in ops {
            copy_one(shared, &kernel, payload, piece, start, fill)?;
        }
        return Ok(());
    }
    let elem = shared.elem;
    let decoded = |chunk: &Encoded| cell_count(&chunk.shape).saturating_mul(elem);
    let rowwise = |kernel: &Kernel, chunk: &Encoded| {
        kernel.streams_rows(elem)
            && kernel
                .contiguous_whole_chunk(cell_count(&chunk.shape))
                .is_none()
            && decoded(chunk) <= MAX_CHAIN_DECODED_BYTES
    };
    // fences the streamed stores however this returns (an error, or a panic that
    // `guarded` turns into one while the caller keeps the buffer)
    let _fence = stream_store::FenceOnDrop;
    let mut ops = ops.into_iter().peekable();
    let mut chain: Vec<(Kernel, Encoded)> = Vec::new();
    while let Some((kernel, payload)) = ops.next() {
        let chunk = match payload {
            Payload::Encoded(chunk) if rowwise(&kernel, &chunk) => chunk,
            other => {
                copy_one(shared, &kernel, other, piece, start, fill)?;
                continue;
            }
        };
        let (mut row, mut bytes) = (kernel.row_bytes(elem), decoded(&chunk));
        chain.push((kernel, chunk));
        while let Some((kernel, Payload::Encoded(chunk))) = ops.next_if(|(k, p)| match p {
            Payload::Encoded(c) => {
                chain
                    .last()
                    .is_some_and(|(last, _)| joins_chain(last, chain.len(), row, k, elem))
                    && rowwise(k, c)
                    && bytes + decoded(c) <= MAX_CHAIN_DECODED_BYTES
            }
            _ => false,
        }) {
            row += kernel.row_bytes(elem);
            bytes += decoded(&chunk);
            chain.push((kernel, chunk));
        }
        copy_chain(shared, &chain, piece, start)?;
        chain.clear();
    }
    Ok(())
}

/// Decodes the chunks of `chain` (see [`copy_ops`]) into this thread's kept buffers and
/// copies their rows into `piece` with [`Kernel::gather_rows_streaming`].
fn copy_chain(
    shared: &Shared,
    chain: &[(Kernel, Encoded)],
    piece: &mut [u8],
    start: usize,
) -> Result<()> {
    let meta = shared.node.metadata();
    let (dt, fv) = (meta.exec_data_type(), meta.exec_fill_value());
    DECODED_CHAIN.with(|bufs| {
        let mut bufs = bufs.borrow_mut();
        if bufs.len() < chain.len() {
            bufs.resize_with(chain.len(), Vec::new);
        }
        let copied = (|| {
            for ((_, chunk), buf) in chain.iter().zip(bufs.iter_mut()) {
                let pipeline = pipeline_of(shared, chunk)?;
                // the stored size is checked before the buffer grows to the chunk's
                chunk.bytes.with(|bytes| {
                    Ok(pipeline.decode_to_buffer(bytes, &chunk.shape, dt, fv, &chunk.name, buf)?)
                })?;
            }
            #[cfg(test)]
            if chain.len() > 1 {
                tests::CHAINED.fetch_add(chain.len(), std::sync::atomic::Ordering::Relaxed);
            }
            let kernels: Vec<&Kernel> = chain.iter().map(|(k, _)| k).collect();
            let chunks: Vec<&[u8]> = bufs.iter().take(chain.len()).map(|b| &b[..]).collect();
            Kernel::gather_rows_streaming(
                &kernels,
                &chunks,
                piece,
                start / shared.elem,
                shared.elem,
            )
        })();
        // kept for the next chain, unless they hold more than one chain needs
        if bufs.iter().map(Vec::capacity).sum::<usize>() > MAX_CHAIN_DECODED_BYTES {
            bufs.clear();
        }
        copied
    })
}

/// Copies one part into `piece`, the result bytes starting at byte `start`.
fn copy_one(
    shared: &Shared,
    kernel: &Kernel,
    payload: Payload,
    piece: &mut [u8],
    start: usize,
    fill: &[u8],
) -> Result<()> {
    let elem = shared.elem;
    match payload {
        Payload::Encoded(chunk) => {
            let cells = cell_count(&chunk.shape);
            let meta = shared.node.metadata();
            let pipeline = pipeline_of(shared, &chunk)?;
            let (dt, fv) = (meta.exec_data_type(), meta.exec_fill_value());
            let Some(first) = kernel.contiguous_whole_chunk(cells) else {
                // decoded into this thread's buffer, its cells copied while still in cache
                return chunk.bytes.with(|bytes| {
                    with_kept_buffer(&DECODED_BUFFER, |buf| {
                        // the stored size is checked before the buffer grows to the chunk's
                        pipeline.decode_to_buffer(bytes, &chunk.shape, dt, fv, &chunk.name, buf)?;
                        kernel.gather_into_piece(buf, piece, start / elem, elem)
                    })
                });
            };
            let bad = || {
                ArrayError::Internal(format!(
                    "{} does not decode into a contiguous run of the piece at byte {start}",
                    chunk.name
                ))
            };
            let first = usize::try_from(first)
                .ok()
                .and_then(|d| (d * elem).checked_sub(start))
                .ok_or_else(bad)?;
            let run = piece.get_mut(first..first + cells * elem).ok_or_else(bad)?;
            chunk.bytes.with(|bytes| {
                pipeline.decode_into(bytes, &chunk.shape, dt, fv, &chunk.name, run)?;
                Ok(())
            })
        }
        Payload::Fill => kernel.fill_into_piece(fill, piece, start / fill.len().max(1)),
        Payload::Data(data) => kernel.gather_into_piece(&data, piece, start / elem, elem),
        Payload::Packed(cells) => kernel.unpack_into_piece(&cells, piece, start / elem, elem),
    }
}

/// The planned work of a read: the touched shards or chunks, in plan order, lowered as
/// the read goes.
pub(super) enum Work {
    /// Touched shards, each with its inner plan.
    Shards(Planned<ShardWork>),
    /// Touched chunks of an unsharded array.
    Chunks(Planned<ChunkOp>),
}

/// Aborts the producer task when the read is dropped (cancelled) or fails early, and
/// closes the decode gate so decodes not yet started are skipped.
struct AbortOnDrop(tokio::task::AbortHandle, Arc<DecodeGate>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
        self.1.close();
    }
}

fn fill_part(op: &ChunkOp) -> Result<Parts> {
    Ok(vec![(Kernel::new(op)?, Payload::Fill)])
}

async fn read_chunk(shared: &Arc<Shared>, op: ChunkOp, decode: Arc<DecodeGate>) -> Result<Parts> {
    let key = shared.chunk_key(&op.chunk_coords)?;
    let Some(bytes) = fetch_checked(shared, &key, Some(&op.chunk_shape)).await? else {
        return fill_part(&op);
    };
    let kernel = Kernel::new(&op)?;
    let cells = cell_count(&op.chunk_shape);
    // A chunk read densely is decoded by the copy stage: nothing to decode here.
    let decoded_later = dense(&kernel, cells);
    let shared = shared.clone();
    let decode_chunk = move || {
        let meta = shared.node.metadata();
        let chunk_codec = ChunkCodec {
            pipeline: meta.codecs(),
            shape: &op.chunk_shape,
            data_type: meta.exec_data_type(),
            fill_value: meta.exec_fill_value(),
            elem: shared.elem,
        };
        let name = key.to_string();
        let payload = chunk_codec.payload(&kernel, &bytes, &name, &mut Vec::new(), || Encoded {
            bytes: EncodedBytes::Shared(bytes.clone()),
            shape: op.chunk_shape.clone(),
            inner: false,
            name: name.clone(),
        })?;
        tracing::trace!(
            key = %key,
            bytes_in = bytes.len(),
            bytes_out = chunk_codec.cells().saturating_mul(chunk_codec.elem),
            into_result = matches!(payload, Payload::Encoded(_)),
            "decode chunk"
        );
        Ok(vec![(kernel, payload)])
    };
    if decoded_later {
        return decode_chunk();
    }
    on_blocking(Some(decode), decode_chunk).await
}

/// The whole object at `key` (`None` when absent). With the `shape` of the chunk it
/// encodes, an object no encoding of that chunk can be is refused
/// ([`CodecPipeline::check_stored_size`]) from its size, before its bytes are read: on the
/// local filesystem from the file's size, elsewhere from the length the backend announces
/// ([`crate::store::GetOpts::with_max_size`]).
pub(super) async fn fetch_checked(
    shared: &Arc<Shared>,
    key: &StoreKey,
    shape: Option<&[u64]>,
) -> Result<Option<Bytes>> {
    Ok(fetch_versioned(shared, key, shape)
        .await?
        .map(|(bytes, _)| bytes))
}

/// [`fetch_checked`] with the version of the object read.
pub(super) async fn fetch_versioned(
    shared: &Arc<Shared>,
    key: &StoreKey,
    shape: Option<&[u64]>,
) -> Result<Option<(Bytes, crate::store::ObjectVersion)>> {
    let meta = shared.node.metadata();
    let bounds = match shape {
        Some(shape) => Some(meta.codecs().stored_bounds(
            shape,
            meta.exec_data_type(),
            meta.exec_fill_value(),
            key.as_str(),
        )?),
        None => None,
    };
    let max = bounds.as_ref().and_then(|b| b.max());
    let object = match shared.node.store().get_object_within(key, max).await {
        Ok(object) => object,
        Err(e) if e.is_not_found() => return Ok(None),
        // refused from its announced size: the codec layer's own error for that size
        Err(e @ StoreError::TooLarge { .. }) => {
            if let (StoreError::TooLarge { size, .. }, Some(b)) = (&e, &bounds) {
                b.check(*size, key.as_str())?;
            }
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(b) = &bounds {
        b.check(object.size(), key.as_str())?;
    }
    let version = object.version().clone();
    let bytes = if object.is_in_memory() {
        object.into_bytes()?
    } else {
        on_blocking(None, move || Ok(object.into_bytes()?)).await?
    };
    Ok(Some((bytes, version)))
}

/// An operation reading at most 1/`SPARSE_RATIO` of its chunk's cells is sparse: it keeps
/// a packed copy of its cells instead of the decoded chunk.
const SPARSE_RATIO: usize = 4;

/// Whether `kernel` reads more than 1/[`SPARSE_RATIO`] of its chunk's `chunk_cells`: its
/// chunk then goes to the copy stage still encoded, and is decoded there, next to the
/// copy of its cells (no decoded chunk is allocated, held or handed between threads).
fn dense(kernel: &Kernel, chunk_cells: usize) -> bool {
    kernel.cells().saturating_mul(SPARSE_RATIO) > chunk_cells
}

/// Number of inner chunks holding data of a shard whose valid region is `data_shape`.
pub(super) fn inner_chunks_in(data_shape: &[u64], inner: &[u64]) -> u64 {
    data_shape
        .iter()
        .zip(inner)
        .map(|(&n, &c)| n.div_ceil(c.max(1)))
        .product()
}

/// Reads what `work` needs of one shard, by one of three strategies: through the whole
/// codec pipeline when a codec wraps the sharding layer, from the whole object when every
/// inner chunk is needed, else from the index and the needed inner chunks' ranges.
async fn read_shard(
    shared: &Arc<Shared>,
    layout: &ShardLayout,
    work: ShardWork,
    decode: Arc<DecodeGate>,
    parts: PartsSender,
) -> Result<Parts> {
    let key = shared.chunk_key(&work.shard.chunk_coords)?;
    if !layout.partial_reads {
        return read_shard_through_pipeline(shared, key, work, decode).await;
    }
    // Which inner chunks are touched (the inner partition: for scattered points, a grouping
    // of the shard's points) is worked out on rayon's pool, so the shards of a read are
    // partitioned in parallel rather than one after the other on this task before the
    // first fetch; their operations are lowered on the decode thread.
    let codec = layout.sharding.index_codec(&work.shard.chunk_shape)?;
    let (work, touched) = on_cpu_pool(move || {
        let touched = work.inner.len()?;
        Ok((work, touched))
    })
    .await?;
    let in_place = shared.node.store().reads_in_place();
    let whole = trace_read_shard(&key, layout, &work, touched, in_place);
    let decode = ShardDecode::new(touched, decode, parts);
    if in_place {
        // a local file or shared memory: open the shard once and read exactly its index
        // and the needed inner chunks (gaps are never read, so nothing to refuse)
        read_shard_whole_object(shared, key, codec, work, None, decode).await
    } else if whole {
        // a shard larger than its compact encoding holds gaps: read from its index rather
        // than the whole object
        let meta = shared.node.metadata();
        let compact = layout
            .sharding
            .max_compact_size(
                &work.shard.chunk_shape,
                meta.exec_data_type(),
                meta.exec_fill_value(),
            )?
            .map(crate::codec::bounds::with_slack);
        read_shard_whole_object(shared, key, codec, work, compact, decode).await
    } else {
        read_shard_partial(shared, key, codec, work, decode).await
    }
}

/// The DEBUG event of a shard read: its strategy and how many of its inner chunks it
/// touches. Returns whether it touches every inner chunk holding data.
fn trace_read_shard(
    key: &StoreKey,
    layout: &ShardLayout,
    work: &ShardWork,
    touched: u128,
    in_place: bool,
) -> bool {
    let all = inner_chunks_in(&work.shard.data_shape, &layout.inner_chunk_shape);
    let whole = touched == u128::from(all);
    tracing::debug!(
        key = %key,
        strategy = if whole {
            "whole"
        } else if in_place {
            "in place"
        } else {
            "partial"
        },
        inner_chunks = touched as u64,
        of = all,
        "read shard"
    );
    whole
}

/// A codec wraps the sharding layer (`transpose` before it, a bytes-to-bytes codec after
/// it): inner chunks cannot be addressed, so the shard is decoded whole through the
/// pipeline.
async fn read_shard_through_pipeline(
    shared: &Arc<Shared>,
    key: StoreKey,
    work: ShardWork,
    decode: Arc<DecodeGate>,
) -> Result<Parts> {
    tracing::debug!(key = %key, strategy = "pipeline", "read shard");
    let Some(bytes) = fetch_checked(shared, &key, Some(&work.shard.chunk_shape)).await? else {
        return fill_part(&work.shard);
    };
    let shared = shared.clone();
    on_blocking(Some(decode), move || {
        let meta = shared.node.metadata();
        let data = meta.codecs().decode(
            &bytes,
            &work.shard.chunk_shape,
            meta.exec_data_type(),
            meta.exec_fill_value(),
            key.as_str(),
        )?;
        tracing::debug!(
            key = %key,
            bytes_in = bytes.len(),
            bytes_out = data.len(),
            "decode shard through the codec pipeline"
        );
        Ok(vec![(Kernel::new(&work.shard)?, Payload::Data(data))])
    })
    .await
}

/// Every inner chunk is needed, or the store reads in place ([`Store::reads_in_place`]):
/// one GET for the whole shard; the decode thread reads the index and the needed inner
/// chunks out of it (positioned reads of the open file on a local store, so only those
/// bytes are read). A shard announced larger than `compact` (the most a shard without gaps
/// takes) is read as [`read_shard_partial`] does, so its gaps are never fetched.
///
/// [`Store::reads_in_place`]: crate::store::Store::reads_in_place
async fn read_shard_whole_object(
    shared: &Arc<Shared>,
    key: StoreKey,
    codec: ShardIndexCodec,
    work: ShardWork,
    compact: Option<u64>,
    decode: ShardDecode,
) -> Result<Parts> {
    let object = match shared.node.store().get_object_within(&key, compact).await {
        Ok(object) => object,
        Err(e) if e.is_not_found() => return fill_part(&work.shard),
        Err(StoreError::TooLarge { size, .. }) => {
            tracing::debug!(key = %key, size, "shard holds gaps: read from its index");
            return read_shard_partial(shared, key, codec, work, decode).await;
        }
        Err(e) => return Err(e.into()),
    };
    let (shared, object) = (shared.clone(), Arc::new(object));
    decode
        .run(move |sink| parts_of_object(&shared, &codec, &key, &work, &object, sink))
        .await
}

/// Where a shard's inner chunks are decoded once its bytes are at hand.
///
/// A shard of at most [`MAX_BATCH`] touched inner chunks is decoded as one job of the CPU
/// pool (one thread per core), its parts returned whole: no thread beyond the cores
/// decodes, so none waits for a time slice while a core idles (over HTTP with 10 ms
/// latency, in an A/B of a prototype within one binary: gather 126–133 ms against 145–154
/// on the blocking pool, read all 157–168 against 169–175; full benchmark runs: gather
/// 121–140 against 128–145). A larger shard is decoded on the blocking pool behind the read's
/// [`DecodeGate`], handing its parts over [`MAX_BATCH`] at a time as it goes (a job of the
/// CPU pool must never wait on the channel: the copy stage needs the pool to empty it).
enum ShardDecode {
    /// On the CPU pool; the gate only tells whether the read was cancelled.
    CpuPool(Arc<DecodeGate>),
    /// On the blocking pool, behind the gate, streaming into the copy stage's channel.
    Blocking(Arc<DecodeGate>, PartsSender),
}

impl ShardDecode {
    /// The route of a shard of `touched` inner chunks: the CPU pool when the shard is
    /// small and the gate would let at least as many decodes run as the pool has threads
    /// (a `decode_threads` below that is kept by the gate).
    fn new(touched: u128, gate: Arc<DecodeGate>, parts: PartsSender) -> Self {
        if touched <= MAX_BATCH as u128 && gate.limit() >= cpu_pool_threads() {
            ShardDecode::CpuPool(gate)
        } else {
            ShardDecode::Blocking(gate, parts)
        }
    }

    /// Runs `f`, which makes the shard's parts, handing batches to the sink it is given
    /// and returning the last ones.
    async fn run(
        self,
        f: impl FnOnce(&mut dyn FnMut(Parts) -> Result<()>) -> Result<Parts> + Send + 'static,
    ) -> Result<Parts> {
        match self {
            ShardDecode::CpuPool(gate) => {
                on_cpu_pool(move || {
                    if gate.is_closed() {
                        return Err(ArrayError::task("the read was cancelled", None));
                    }
                    collect_parts(f)
                })
                .await
            }
            ShardDecode::Blocking(gate, parts) => {
                on_blocking(Some(gate), move || {
                    f(&mut |batch| {
                        parts
                            .blocking_send(Ok(batch))
                            .map_err(|_| ArrayError::task("the read was cancelled", None))
                    })
                })
                .await
            }
        }
    }
}

/// Runs `f` (see [`ShardDecode::run`]) keeping every batch it hands over: all the parts of
/// one shard, at once.
fn collect_parts(
    f: impl FnOnce(&mut dyn FnMut(Parts) -> Result<()>) -> Result<Parts>,
) -> Result<Parts> {
    let mut more = Vec::new();
    let last = f(&mut |batch| {
        more.extend(batch);
        Ok(())
    })?;
    more.extend(last);
    Ok(more)
}

/// The parts of `work` out of `object`, the whole shard `key`: its index (read from the
/// object's end and remembered), then the needed inner chunks ([`decode_inner`]).
fn parts_of_object(
    shared: &Shared,
    codec: &ShardIndexCodec,
    key: &StoreKey,
    work: &ShardWork,
    object: &Arc<FetchedObject>,
    sink: &mut dyn FnMut(Parts) -> Result<()>,
) -> Result<Parts> {
    let size = object.size();
    let index_range = codec
        .index_range(size)
        .ok_or_else(|| CodecError::ShardTooShort {
            key: key.to_string(),
            size,
            index_size: codec.encoded_size(),
        })?;
    let index = codec.decode(&object.read_range(index_range)?, size, key.as_str())?;
    shared.remember_index(
        key.as_str(),
        Cached {
            index: Arc::new(index.clone()),
            version: object.version().clone(),
            shard_size: size,
        },
    );
    let source = InnerSource::Object(object);
    decode_inner(shared, codec, &index, key, work, source, sink)
}

/// Some inner chunks are needed: the index (from the cache or one ranged request) and the
/// needed inner chunks' ranges, coalesced by the store. The index and the inner chunks it
/// locates must come from one version of the shard: ranges are read conditionally on the
/// version the index came from (ETag), and a shard replaced in between (`Precondition`, or
/// gone) is read again from its index, under the execution layer's retry policy.
async fn read_shard_partial(
    shared: &Arc<Shared>,
    key: StoreKey,
    codec: ShardIndexCodec,
    work: ShardWork,
    decode: ShardDecode,
) -> Result<Parts> {
    let store = shared.node.store();
    let cps = codec.chunks_per_shard().to_vec();
    let mut attempt = 0;
    let (index, ranges, fetched) = loop {
        attempt += 1;
        let (entry, source) = match shared.cached_index(key.as_str()) {
            Some(hit) => (hit, "cache"),
            None => match read_index(store, &key, &codec).await? {
                None => return fill_part(&work.shard),
                Some(read) => {
                    shared.remember_index(key.as_str(), read.clone());
                    (read, "store")
                }
            },
        };
        tracing::debug!(key = %key, source, shard_bytes = entry.shard_size, "shard index");
        let Cached { index, version, .. } = entry;
        let mut ranges = Vec::new();
        for coords in work.inner.chunk_coords()? {
            if let Some(r) = index.get(inner_chunk_index(&coords, &cps)?) {
                ranges.push(r);
            }
        }
        if ranges.is_empty() && source == "cache" {
            // Nothing to fetch means no conditional request to catch a replaced shard: a
            // cached index that shows every needed inner chunk absent is checked against
            // the store (one index read) before fill values are returned.
            shared.forget_index(key.as_str());
            continue;
        }
        match store
            .get_ranges_of_version(&key, &ranges, Some(&version))
            .await
        {
            Ok(fetched) => break (index, ranges, fetched),
            Err(StoreError::Precondition { .. } | StoreError::NotFound { .. })
                if attempt < MAX_CONFLICT_ATTEMPTS =>
            {
                tracing::debug!(
                    key = %key,
                    attempt,
                    "the shard changed after its index was read: reading the index again"
                );
                shared.forget_index(key.as_str());
                backoff(key.as_str(), attempt).await;
            }
            Err(e) => return Err(e.into()),
        }
    };
    let mut by_start: Vec<(u64, Bytes)> = ranges.iter().map(|r| r.start).zip(fetched).collect();
    by_start.sort_by_key(|(s, _)| *s);
    let shared = shared.clone();
    decode
        .run(move |sink| {
            let source = InnerSource::Ranges(&by_start);
            decode_inner(&shared, &codec, &index, &key, &work, source, sink)
        })
        .await
}

/// Where the encoded inner chunks of one shard come from.
enum InnerSource<'a> {
    /// The whole shard, fetched once (on a local store: its open file).
    Object(&'a Arc<FetchedObject>),
    /// The needed ranges, fetched separately: `(start offset, bytes)` sorted by start.
    Ranges(&'a [(u64, Bytes)]),
}

/// Decodes the inner chunks `work` reads, taking their bytes from `source`; absent ones
/// fill. Runs on the blocking pool: parts go to `sink` [`MAX_BATCH`] at a time as they are
/// made (the inner operations are lowered one by one, so a shard's plan is never whole);
/// the last ones are returned.
fn decode_inner(
    shared: &Shared,
    codec: &ShardIndexCodec,
    index: &ShardIndex,
    key: &StoreKey,
    work: &ShardWork,
    source: InnerSource<'_>,
    sink: &mut dyn FnMut(Parts) -> Result<()>,
) -> Result<Parts> {
    use std::fmt::Write;
    let meta = shared.node.metadata();
    let layout = shared
        .shards
        .as_ref()
        .ok_or_else(|| ArrayError::Internal("inner chunks of an unsharded array".into()))?;
    let cps = codec.chunks_per_shard();
    let elem = shared.elem;
    let shape = &layout.inner_chunk_shape;
    let chunk_codec = ChunkCodec {
        pipeline: layout.sharding.inner(),
        shape,
        data_type: meta.exec_data_type(),
        fill_value: meta.exec_fill_value(),
        elem,
    };
    let chunk_cells = chunk_codec.cells();
    // Reused across inner chunks: decoded cells of sparse operations, encoded bytes read
    // from a local file, the name used in errors.
    let (mut scratch, mut encoded_buf, mut name) = (Vec::new(), Vec::new(), String::new());
    let mut parts = Vec::new();
    // For the shard's DEBUG event: inner chunks decoded and filled, encoded bytes in.
    let (mut decoded, mut filled, mut bytes_in) = (0usize, 0usize, 0u64);
    let chunk_bytes = chunk_cells.saturating_mul(elem);
    for op in work.inner_ops()? {
        if parts.len() >= MAX_BATCH {
            sink(std::mem::take(&mut parts))?;
        }
        let op = op?;
        let kernel = Kernel::new(&op)?;
        let Some(range) = index.get(inner_chunk_index(&op.chunk_coords, cps)?) else {
            tracing::trace!(key = %key, inner = ?op.chunk_coords, "inner chunk absent: fill");
            filled += 1;
            parts.push((kernel, Payload::Fill));
            continue;
        };
        name.clear();
        let _ = write!(name, "{} inner chunk {:?}", key.as_str(), op.chunk_coords);
        if let InnerSource::Object(object) = source
            && dense(&kernel, chunk_cells)
            && !object.is_in_memory()
        {
            // decoded by the copy stage, which reads it from the open file then: nothing
            // of it is held in between
            tracing::trace!(
                key = %key,
                inner = ?op.chunk_coords,
                bytes_in = range.end - range.start,
                bytes_out = chunk_bytes,
                into_result = true,
                in_file = true,
                "decode inner chunk"
            );
            decoded += 1;
            bytes_in += range.end - range.start;
            let bytes = EncodedBytes::InFile {
                object: object.clone(),
                range: range.clone(),
            };
            parts.push((
                kernel,
                Payload::Encoded(Encoded {
                    bytes,
                    shape: shape.clone(),
                    inner: true,
                    name: name.clone(),
                }),
            ));
            continue;
        }
        // Shared bytes when they are at hand or must be kept (decoded later, straight into
        // the result); otherwise a copy into the reused buffer.
        let shared_bytes = match source {
            InnerSource::Ranges(fetched) => Some(
                fetched
                    .binary_search_by_key(&range.start, |(s, _)| *s)
                    .map(|i| fetched[i].1.clone())
                    .unwrap_or_default(),
            ),
            // (a dense inner chunk of a file was handed over above, unread)
            InnerSource::Object(object) if object.is_in_memory() => {
                Some(object.read_range(range.clone())?)
            }
            InnerSource::Object(object) => {
                object.read_range_into(range.clone(), &mut encoded_buf)?;
                None
            }
        };
        let bytes: &[u8] = shared_bytes.as_deref().unwrap_or(&encoded_buf);
        if bytes.len() as u64 != range.end - range.start {
            return Err(ArrayError::InvalidData {
                key: name,
                reason: format!(
                    "expected {} bytes, the store returned {}",
                    range.end - range.start,
                    bytes.len()
                ),
            });
        }
        let payload = chunk_codec.payload(&kernel, bytes, &name, &mut scratch, || Encoded {
            bytes: EncodedBytes::Shared(
                shared_bytes
                    .clone()
                    .unwrap_or_else(|| Bytes::copy_from_slice(bytes)),
            ),
            shape: shape.clone(),
            inner: true,
            name: name.clone(),
        })?;
        tracing::trace!(
            key = %key,
            inner = ?op.chunk_coords,
            bytes_in = bytes.len(),
            bytes_out = chunk_bytes,
            into_result = matches!(payload, Payload::Encoded(_)),
            "decode inner chunk"
        );
        decoded += 1;
        bytes_in += bytes.len() as u64;
        parts.push((kernel, payload));
    }
    tracing::debug!(
        key = %key,
        inner_chunks = decoded,
        fill = filled,
        bytes_in,
        bytes_out = decoded.saturating_mul(chunk_bytes),
        "decode shard"
    );
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{Array, ArrayOptions};
    use crate::metadata::ArraySpec;
    use crate::store::{Store, StoreOptions};

    /// Chunks [`predecode`] has decoded ahead in this test binary.
    pub(super) static PREDECODED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// The smallest result streamed ([`stream_min_bytes`]); only
    /// [`streamed_reads_hold_the_models_values`] lowers it (the other tests' reads may then
    /// be streamed too, which changes none of their values).
    pub(super) static STREAM_MIN: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(STREAM_MIN_BYTES);
    /// Chunks copied in chains of row neighbours ([`copy_chain`]) in this test binary.
    pub(super) static CHAINED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Reads streamed (the threshold lowered to 0): boxes whose inner chunks chain (rows of
    /// 24 `u16`, 48 bytes, and of 24 `u8`, never whole lines, so every row mixes chunks),
    /// partial edges, strides, a reversed axis, one plane and points (no chains: their
    /// chunks are read sparsely), on 2 copy threads and on 1, sharded and not; the values
    /// are the model's. (`CHAINED` counts every test's chains: that it grows shows chains
    /// were made, most likely by this test's read.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn streamed_reads_hold_the_models_values() {
        use std::sync::atomic::Ordering::Relaxed;
        STREAM_MIN.store(0, Relaxed);
        let store = Store::memory();
        let shape = [20usize, 30, 100];
        let model: Vec<u16> = (0..shape.iter().product::<usize>())
            .map(|i| (i * 7 % 65_521) as u16)
            .collect();
        let values = ndarray::ArrayD::from_shape_vec(shape.to_vec(), model).unwrap();
        let bytes_model = values.mapv(|v| (v % 251) as u8);
        let shape64 = shape.map(|n| n as u64);
        for (name, sharded) in [("sharded", true), ("plain", false)] {
            let spec16 = ArraySpec::of::<u16>(shape64);
            let spec8 = ArraySpec::of::<u8>(shape64);
            let (spec16, spec8) = if sharded {
                (
                    spec16
                        .shard_shape([10, 10, 48])
                        .inner_chunk_shape([5, 5, 24]),
                    spec8
                        .shard_shape([10, 10, 48])
                        .inner_chunk_shape([5, 5, 24]),
                )
            } else {
                (
                    spec16.shard_shape([5, 5, 24]),
                    spec8.shard_shape([5, 5, 24]),
                )
            };
            let k16 = crate::store::StoreKey::new(format!("{name}16")).unwrap();
            let k8 = crate::store::StoreKey::new(format!("{name}8")).unwrap();
            let a16 = Array::create(&store, &k16, &spec16, ArrayOptions::default())
                .await
                .unwrap();
            a16.view().write(&values.view()).await.unwrap();
            let a8 = Array::create(&store, &k8, &spec8, ArrayOptions::default())
                .await
                .unwrap();
            a8.view().write(&bytes_model.view()).await.unwrap();
            for threads in [2, 1] {
                let options = ArrayOptions::default().with_decode_threads(threads);
                let a16 = Array::open_in(&store, &k16, options.clone()).await.unwrap();
                let a8 = Array::open_in(&store, &k8, options).await.unwrap();
                use ndarray::s;
                let cases = [
                    ("...", values.slice(s![.., .., ..]).to_owned().into_dyn()),
                    (
                        "1:19, 2:29, 3:97",
                        values.slice(s![1..19, 2..29, 3..97]).to_owned().into_dyn(),
                    ),
                    (
                        "::2, 4:26, :",
                        values.slice(s![..;2, 4..26, ..]).to_owned().into_dyn(),
                    ),
                    (
                        "::-1, :, 10:90",
                        values.slice(s![..;-1, .., 10..90]).to_owned().into_dyn(),
                    ),
                    (
                        "3, 1:29, 5:95",
                        values.slice(s![3, 1..29, 5..95]).to_owned().into_dyn(),
                    ),
                    (
                        ":, :, ::3",
                        values.slice(s![.., .., ..;3]).to_owned().into_dyn(),
                    ),
                ];
                for (sel, want) in cases {
                    let parsed = crate::index::Selection::parse(sel).unwrap();
                    let before = CHAINED.load(Relaxed);
                    let got = a16
                        .view()
                        .get(&parsed)
                        .unwrap()
                        .read::<u16>()
                        .await
                        .unwrap();
                    assert_eq!(got, want, "{name} u16 {sel} on {threads} threads");
                    if !matches!(sel, ":, :, ::3" | "3, 1:29, 5:95") {
                        assert!(CHAINED.load(Relaxed) > before, "{name} {sel}: no chain");
                    }
                    let want8 = want.mapv(|v| (v % 251) as u8);
                    let got8 = a8.view().get(&parsed).unwrap().read::<u8>().await.unwrap();
                    assert_eq!(got8, want8, "{name} u8 {sel} on {threads} threads");
                }
                let points =
                    crate::index::Selection::parse("[0, 19, 7], [29, 0, 3], [99, 5, 50]").unwrap();
                let got = a16
                    .view()
                    .vindex(&points)
                    .unwrap()
                    .read::<u16>()
                    .await
                    .unwrap();
                let want: Vec<u16> = [(0, 29, 99), (19, 0, 5), (7, 3, 50)]
                    .iter()
                    .map(|&(z, y, x)| values[[z, y, x]])
                    .collect();
                assert_eq!(got.into_raw_vec_and_offset().0, want, "{name} points");
            }
        }
    }

    /// A 96³ box over 5 z-rows of inner chunks (16³, shards 32³): 5 pieces of one copy
    /// round, which do not share out over 2 copy threads, so the last row's 36 chunks are
    /// decoded ahead; the values are the model's, on 2 threads and on 1 (no decoding ahead).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_round_of_few_pieces_decodes_the_left_over_ones_ahead() {
        if cpu_pool_threads() < 2 {
            // one core: a single copy thread, nothing to share out
            return;
        }
        let store = Store::memory();
        let n = 96usize;
        let model: Vec<u16> = (0..n * n * n).map(|i| (i * 7 % 65_521) as u16).collect();
        let spec = ArraySpec::of::<u16>([n as u64; 3])
            .shard_shape([32; 3])
            .inner_chunk_shape([16; 3]);
        let key = crate::store::StoreKey::new("cube").unwrap();
        let a = Array::create(&store, &key, &spec, ArrayOptions::default())
            .await
            .unwrap();
        let values = ndarray::ArrayD::from_shape_vec(vec![n; 3], model.clone()).unwrap();
        a.view().write(&values.view()).await.unwrap();
        let want = values
            .slice(ndarray::s![8..72, .., ..])
            .to_owned()
            .into_dyn();
        let sel = crate::index::Selection::parse("8:72, :, :").unwrap();
        for (threads, ahead) in [(2, true), (1, false)] {
            let options = ArrayOptions::default().with_decode_threads(threads);
            let a = Array::open_in(&store, &key, options).await.unwrap();
            let before = PREDECODED.load(std::sync::atomic::Ordering::Relaxed);
            let got = a.view().get(&sel).unwrap().read::<u16>().await.unwrap();
            let decoded = PREDECODED.load(std::sync::atomic::Ordering::Relaxed) - before;
            assert_eq!(got, want, "{threads} threads");
            // (no other test of this binary decodes ahead: the count is this read's)
            assert_eq!(
                decoded >= 36,
                ahead,
                "{decoded} chunks decoded ahead, {threads} threads"
            );
        }
    }

    #[test]
    fn only_the_clusters_left_over_of_a_few_are_decoded_ahead() {
        // (clusters, threads) -> clusters decoded ahead
        for (clusters, threads, ahead) in [
            (7, 2, 1),
            (5, 2, 1),
            (8, 2, 0),
            (7, 3, 1),
            (11, 3, 2),
            (1, 2, 1),
            (15, 2, 1),
            (17, 2, 0),
            (7, 1, 0),
            (0, 2, 0),
        ] {
            assert_eq!(
                clusters_to_predecode(clusters, threads),
                ahead,
                "{clusters} clusters on {threads} threads"
            );
        }
    }

    async fn array(store: &Store, key: &str, shards: u64, inner: u64) -> Array {
        let spec = ArraySpec::of::<u16>([64, 64])
            .shard_shape([shards, shards])
            .inner_chunk_shape([inner, inner]);
        Array::create(
            store,
            &StoreKey::new(key).unwrap(),
            &spec,
            ArrayOptions::default(),
        )
        .await
        .unwrap()
    }

    /// The rounds take local and `memory://` stores on small shards; a store given by
    /// `from_object_store` (even reading in place), a store told not to read in place and
    /// shards of more than a batch of inner chunks take the producer task.
    #[tokio::test]
    async fn in_place_rounds_are_taken_where_they_apply() {
        let tmp = tempfile::tempdir().unwrap();
        let local = Store::open(tmp.path().to_str().unwrap(), StoreOptions::default()).unwrap();
        let rounds = |a: &Array| in_place_round(&a.shared);
        assert_eq!(rounds(&array(&local, "a1", 16, 4).await), Some(32));
        assert_eq!(
            rounds(&array(&Store::memory(), "a2", 16, 4).await),
            Some(32)
        );
        // 64 inner chunks a shard: 32 shards make 2,048 parts
        assert_eq!(rounds(&array(&local, "a3", 32, 4).await), Some(32));
        // 1,024 inner chunks a shard: two a round
        assert_eq!(rounds(&array(&local, "a4", 64, 2).await), Some(2));
        // 4,096 inner chunks a shard: the producer's streaming route
        assert_eq!(rounds(&array(&local, "a5", 64, 1).await), None);
        let not_in_place = local.clone().with_in_place_reads(false);
        assert_eq!(rounds(&array(&not_in_place, "a6", 16, 4).await), None);
        let backend = object_store::local::LocalFileSystem::new_with_prefix(tmp.path()).unwrap();
        let given =
            Store::from_object_store(Arc::new(backend), "", "file://x", StoreOptions::default())
                .unwrap()
                .with_in_place_reads(true);
        assert_eq!(rounds(&array(&given, "a7", 16, 4).await), None);
    }
}
