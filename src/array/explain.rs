//! Plans that can be read before they run: what a read or a write of a view would request,
//! worked out without reading or writing any chunk data.
//!
//! [`ArrayView::explain_read`] plans the read exactly as [`ArrayView::read`] does and lists,
//! per touched shard (or chunk), how it would be read (the whole object in one GET, or the
//! index and coalesced ranges of the inner chunks needed), the inner chunks touched (stored or
//! fill), where the index comes from, and every request with its bytes; the totals are the
//! requests and bytes the read would issue. [`ArrayView::explain_write`] does the same for a
//! write of the view: whether each shard's read is skipped (fully covered), and how many inner
//! chunks are rewritten, decoded first, or copied verbatim.
//!
//! To know where inner chunks lie, explaining reads metadata, never chunk data: shard indexes
//! (from the index cache when it holds them, else from the store — listed in
//! `explain_requests`), and a HEAD of each chunk (or shard decoded through its pipeline) for
//! its size. It never fills the index cache, so an explained read followed by the read makes
//! the requests the explanation lists. The prediction holds for the store as it is when
//! explained: a concurrent writer can change it.

use std::fmt;

use futures::StreamExt;
use serde::Serialize;

use crate::codec::ShardIndexCodec;
use crate::codec::sharding::IndexLocation;
use crate::index::shape::cell_count;
use crate::plan::{ChunkOp, Coverage, ShardWork};
use crate::store::{Store, StoreError, StoreKey, plan_merges};

use super::cache::{Cached, read_index};
use super::error::Result;
use super::read::{Work, inner_chunks_in, plan_read};
use super::write::{Target, Targets, plan_writes};
use super::{ArrayView, ShardLayout, Shared, inner_chunk_index};

/// The method of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Method {
    /// GET of a whole object.
    #[serde(rename = "GET")]
    Get,
    /// GET of a bounded byte range.
    #[serde(rename = "GET range")]
    GetRange,
    /// GET of the last bytes of an object.
    #[serde(rename = "GET suffix")]
    GetSuffix,
    /// HEAD (size and version).
    #[serde(rename = "HEAD")]
    Head,
    /// Unconditional PUT.
    #[serde(rename = "PUT")]
    Put,
    /// PUT only if the object does not exist.
    #[serde(rename = "PUT create")]
    PutCreate,
    /// PUT only if the object is still the version read. On stores without compare-and-swap
    /// (the local filesystem) the backend refuses it before any I/O and an unconditional PUT
    /// follows.
    #[serde(rename = "PUT if-match")]
    PutIfMatch,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Get => "GET",
            Method::GetRange => "GET range",
            Method::GetSuffix => "GET suffix",
            Method::Head => "HEAD",
            Method::Put => "PUT",
            Method::PutCreate => "PUT create",
            Method::PutIfMatch => "PUT if-match",
        })
    }
}

/// What a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Purpose {
    /// A shard index.
    Index,
    /// Coalesced ranges of inner chunks.
    Data,
    /// A whole shard or chunk (data; for a shard, its index too).
    Object,
    /// A shard opened once on a store that reads in place, of which only the index and the
    /// needed inner chunks are read (`bytes` counts those).
    InPlace,
    /// Size and existence of an object (explaining only).
    Probe,
    /// Storing a shard or chunk.
    Write,
}

/// One request, planned or made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The key, relative to the store's root (the array's path included).
    pub key: String,
    /// The byte range `[start, end)` of a bounded range request.
    pub range: Option<[u64; 2]>,
    /// The length of a suffix request.
    pub suffix: Option<u64>,
    /// Conditional on the version of the object read before (`If-Match`).
    pub conditional: bool,
    /// Bytes the response carries (0 for a HEAD, a missing object and a PUT, whose encoded
    /// size is only known once the values are encoded).
    pub bytes: u64,
    /// The object does not exist: the request finds nothing.
    pub not_found: bool,
    /// What the request is for.
    pub purpose: Purpose,
    /// Inner chunks a data request carries.
    pub inner_chunks: u64,
}

impl Request {
    fn new(method: Method, key: &StoreKey, purpose: Purpose) -> Request {
        Request {
            method,
            key: key.to_string(),
            range: None,
            suffix: None,
            conditional: false,
            bytes: 0,
            not_found: false,
            purpose,
            inner_chunks: 0,
        }
    }

    fn bounded(mut self, start: u64, end: u64) -> Request {
        self.range = Some([start, end]);
        self
    }

    fn bytes(mut self, bytes: u64) -> Request {
        self.bytes = bytes;
        self
    }

    /// `bytes` bytes when the object exists, else a request that finds nothing.
    fn found(mut self, size: Option<u64>) -> Request {
        match size {
            Some(n) => self.bytes = n,
            None => self.not_found = true,
        }
        self
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.key)?;
        if let Some([s, e]) = self.range {
            write!(f, " bytes {s}..{e}")?;
        }
        if let Some(n) = self.suffix {
            write!(f, " last {n} bytes")?;
        }
        if self.conditional && self.method != Method::PutIfMatch {
            f.write_str(" (if-match)")?;
        }
        if self.not_found {
            return f.write_str(": not found");
        }
        if self.method == Method::Head {
            return f.write_str(": size and version");
        }
        match self.purpose {
            Purpose::Index => write!(f, ": {} bytes of index", self.bytes),
            Purpose::Data => write!(
                f,
                ": {} bytes, {} inner chunk{}",
                self.bytes,
                self.inner_chunks,
                plural(self.inner_chunks)
            ),
            Purpose::Object => write!(f, ": {} bytes (the whole object)", self.bytes),
            Purpose::InPlace => write!(
                f,
                ": opened once, {} bytes read in place (index, {} inner chunk{})",
                self.bytes,
                self.inner_chunks,
                plural(self.inner_chunks)
            ),
            Purpose::Probe => f.write_str(": size and version"),
            Purpose::Write => f.write_str(": the new object"),
        }
    }
}

/// How a shard or chunk is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReadStrategy {
    /// Every inner chunk inside the array is needed: one GET of the whole shard.
    Whole,
    /// Some inner chunks are needed: the index, then their coalesced ranges.
    Partial,
    /// Some inner chunks are needed from a store that reads in place (a local file, memory;
    /// see [`Store::reads_in_place`](crate::store::Store::reads_in_place)): the shard is
    /// opened once and exactly its index and the needed inner chunks are read from it.
    InPlace,
    /// A codec wraps the sharding codec: one GET, decoded whole through the pipeline.
    Pipeline,
    /// A chunk of an unsharded array: one GET.
    Chunk,
}

/// Where an index comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IndexSource {
    /// The array's index cache: no request.
    Cache,
    /// Its own request(s) to the store.
    Store,
    /// Out of the whole shard fetched anyway.
    Object,
}

/// A shard index, as the operation uses it and as explaining found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IndexUse {
    /// Where the read (or write) takes the index from.
    pub source: IndexSource,
    /// The index was in the cache when explained (else explaining read it from the store).
    pub cached: bool,
    /// Encoded size of the index.
    pub bytes: u64,
}

/// One touched inner chunk of a read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InnerChunk {
    /// Coordinates within the shard's inner-chunk grid.
    pub coords: Vec<i64>,
    /// Its byte range in the shard; `None` when absent (the fill value, nothing read).
    pub range: Option<[u64; 2]>,
}

/// The inner chunks a read touches in one shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InnerChunksRead {
    /// Inner chunks of the shard inside the array.
    pub in_shard: u64,
    /// Touched by the read.
    pub touched: u64,
    /// Touched and stored (decoded).
    pub stored: u64,
    /// Touched and absent (the fill value).
    pub fill: u64,
    /// Each touched inner chunk, in plan order.
    pub chunks: Vec<InnerChunk>,
}

/// How a read takes its cells from one shard (or chunk).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReadTarget {
    /// The store key, relative to the store's root (the array's path included).
    pub key: String,
    /// Grid coordinates (shard grid, or chunk grid).
    pub coords: Vec<i64>,
    /// How it is read.
    pub strategy: ReadStrategy,
    /// It is stored (a missing one reads as the fill value).
    pub exists: bool,
    /// Its size in bytes, when stored.
    pub size: Option<u64>,
    /// Cells the read takes from it.
    pub cells: u64,
    /// Its index, for a shard whose inner chunks can be addressed.
    pub index: Option<IndexUse>,
    /// Its touched inner chunks, for a shard whose inner chunks can be addressed.
    pub inner_chunks: Option<InnerChunksRead>,
    /// The requests the read makes for it, in order.
    pub requests: Vec<Request>,
}

/// Totals of a read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReadTotals {
    /// Shards (or chunks) touched.
    pub targets: u64,
    /// Of which not stored.
    pub missing: u64,
    /// Requests the read makes.
    pub requests: u64,
    /// Bytes they carry.
    pub bytes: u64,
    /// Index requests among them.
    pub index_requests: u64,
    /// Their bytes.
    pub index_bytes: u64,
    /// Data requests (whole objects and coalesced ranges).
    pub data_requests: u64,
    /// Their bytes.
    pub data_bytes: u64,
    /// Inner chunks touched (sharded arrays).
    pub inner_chunks: u64,
    /// Of which absent (fill).
    pub inner_chunks_fill: u64,
    /// Requests explaining made (index reads, HEADs).
    pub explain_requests: u64,
    /// Their bytes.
    pub explain_bytes: u64,
}

/// What a read of a view would do: [`ArrayView::explain_read`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReadExplain {
    /// The array's URL.
    pub url: String,
    /// The shape of the result.
    pub shape: Vec<u64>,
    /// Its number of cells.
    pub cells: u64,
    /// The array is sharded (`targets` are shards) or not (`targets` are chunks).
    pub sharded: bool,
    /// Every touched shard (or chunk), in plan order.
    pub targets: Vec<ReadTarget>,
    /// The requests explaining made (metadata only: shard indexes, HEADs).
    pub explain_requests: Vec<Request>,
    /// The totals.
    pub totals: ReadTotals,
}

/// The inner chunks a write touches in one shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InnerChunksWrite {
    /// Inner chunks of the shard.
    pub in_shard: u64,
    /// Touched, so re-encoded (or dropped when left equal to the fill value).
    pub rewritten: u64,
    /// Of which fully covered by the write (never decoded).
    pub covered: u64,
    /// Of which stored and not fully covered: decoded before the write applies.
    pub decoded_first: u64,
    /// Stored and untouched: their encoded bytes are copied verbatim.
    pub copied_verbatim: u64,
}

/// How a write treats one shard (or chunk).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WriteTarget {
    /// The store key, relative to the store's root (the array's path included).
    pub key: String,
    /// Grid coordinates.
    pub coords: Vec<i64>,
    /// The write covers it whole: it is encoded from the values and stored without a read.
    pub read_skipped: bool,
    /// It is stored now (`None` when the read is skipped: not looked up).
    pub exists: Option<bool>,
    /// Its size, when stored and looked up.
    pub size: Option<u64>,
    /// Cells written.
    pub cells: u64,
    /// Its index, when explaining needed it (a shard read before the write).
    pub index: Option<IndexUse>,
    /// Its inner chunks, for a shard whose inner chunks can be addressed.
    pub inner_chunks: Option<InnerChunksWrite>,
    /// The requests the write makes for it, in order: the read (unless skipped), then the
    /// PUT — a DELETE instead when every inner chunk is left equal to the fill value (and
    /// empty chunks are not stored), which only the values decide.
    pub requests: Vec<Request>,
}

/// Totals of a write.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WriteTotals {
    /// Shards (or chunks) touched.
    pub targets: u64,
    /// Of which written without a read.
    pub reads_skipped: u64,
    /// Requests the write makes (reads and PUTs; without conflicts).
    pub requests: u64,
    /// Reads (GETs) among them.
    pub reads: u64,
    /// Bytes the reads carry.
    pub bytes_read: u64,
    /// PUTs.
    pub puts: u64,
    /// Inner chunks rewritten.
    pub inner_chunks_rewritten: u64,
    /// Inner chunks decoded before the write applies.
    pub inner_chunks_decoded_first: u64,
    /// Inner chunks copied verbatim.
    pub inner_chunks_copied_verbatim: u64,
    /// Requests explaining made (index reads, HEADs).
    pub explain_requests: u64,
    /// Their bytes.
    pub explain_bytes: u64,
}

/// What a write of a view would do: [`ArrayView::explain_write`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WriteExplain {
    /// The array's URL.
    pub url: String,
    /// The shape of the selection written.
    pub shape: Vec<u64>,
    /// Its number of cells.
    pub cells: u64,
    /// The array is sharded.
    pub sharded: bool,
    /// How the rewritten shards lay their inner chunks out (`lexicographic`, `morton`,
    /// `colexicographic`: [`ArrayOptions::with_inner_chunk_order`](super::ArrayOptions::with_inner_chunk_order));
    /// `None` when the array is unsharded.
    pub inner_chunk_order: Option<String>,
    /// Every touched shard (or chunk), in key order.
    pub targets: Vec<WriteTarget>,
    /// The requests explaining made (metadata only: shard indexes, HEADs).
    pub explain_requests: Vec<Request>,
    /// The totals.
    pub totals: WriteTotals,
}

impl ArrayView {
    /// What [`read`](Self::read) of this view would do, without reading chunk data: the
    /// shards (or chunks) touched, how each is read, the inner chunks touched, where each
    /// index comes from, every request with its bytes, and the totals (see the
    /// [module documentation](crate::array#explaining)).
    ///
    /// To locate inner chunks it reads shard indexes the cache does not hold, and it HEADs
    /// chunks (and shards decoded whole) for their size; those requests are listed in
    /// [`ReadExplain::explain_requests`]. The index cache is not filled.
    pub async fn explain_read(&self) -> Result<ReadExplain> {
        let shared = &self.array().shared;
        let cells = self.domain().num_elements().unwrap_or(u64::MAX);
        let mut explain = ReadExplain {
            url: self.array().url(),
            shape: self.shape(),
            cells,
            sharded: shared.shards.is_some(),
            targets: Vec::new(),
            explain_requests: Vec::new(),
            totals: ReadTotals::default(),
        };
        if cells == 0 {
            return Ok(explain);
        }
        let concurrency = shared.options.request_concurrency.max(1);
        let explained: Vec<Result<(ReadTarget, Vec<Request>)>> =
            match plan_read(shared, self.transform())? {
                Work::Shards(works) => {
                    let layout = shared.shards.as_ref().ok_or_else(|| {
                        super::ArrayError::Internal("shard work of an unsharded array".into())
                    })?;
                    futures::stream::iter(works)
                        .map(|work| async { explain_shard_read(shared, layout, work?).await })
                        .buffered(concurrency)
                        .collect()
                        .await
                }
                Work::Chunks(ops) => {
                    futures::stream::iter(ops)
                        .map(|op| async { explain_chunk_read(shared, op?).await })
                        .buffered(concurrency)
                        .collect()
                        .await
                }
            };
        for item in explained {
            let (target, own) = item?;
            explain.explain_requests.extend(own);
            explain.targets.push(target);
        }
        explain.totals = read_totals(&explain.targets, &explain.explain_requests);
        Ok(explain)
    }

    /// What [`write`](Self::write) of this view would do (whatever the values), without
    /// reading or writing chunk data: per shard (or chunk), whether its read is skipped
    /// (fully covered), the requests, and how many inner chunks are rewritten, decoded
    /// first or copied verbatim.
    ///
    /// For shards that would be read it reads their index (from the cache when it holds it)
    /// and HEADs chunks (and shards decoded whole), listed in
    /// [`WriteExplain::explain_requests`].
    pub async fn explain_write(&self) -> Result<WriteExplain> {
        let shared = &self.array().shared;
        let cells = self.domain().num_elements().unwrap_or(u64::MAX);
        let plans = plan_writes(shared, [self.transform()])?;
        let targets = Targets::new(shared, &plans)?;
        let concurrency = shared.options.request_concurrency.max(1);
        let explained: Vec<Result<(WriteTarget, Vec<Request>)>> = futures::stream::iter(targets)
            .map(|t| async { explain_target_write(shared, t?).await })
            .buffered(concurrency)
            .collect()
            .await;
        let mut explain = WriteExplain {
            url: self.array().url(),
            shape: self.shape(),
            cells,
            sharded: shared.shards.is_some(),
            inner_chunk_order: shared
                .shards
                .as_ref()
                .map(|_| shared.options.inner_chunk_order().name().to_string()),
            targets: Vec::new(),
            explain_requests: Vec::new(),
            totals: WriteTotals::default(),
        };
        for item in explained {
            let (target, own) = item?;
            explain.explain_requests.extend(own);
            explain.targets.push(target);
        }
        explain.totals = write_totals(&explain.targets, &explain.explain_requests);
        Ok(explain)
    }
}

/// The requests [`read_index`] makes for the index of `key` on `store` as it is now, for a
/// shard of `size` bytes (`None`: missing).
fn index_requests(
    store: &Store,
    key: &StoreKey,
    codec: &ShardIndexCodec,
    size: Option<u64>,
) -> Vec<Request> {
    let n = codec.encoded_size();
    let bytes = size.map(|s| s.min(n));
    match codec.location() {
        IndexLocation::Start => {
            vec![
                Request::new(Method::GetRange, key, Purpose::Index)
                    .bounded(0, n)
                    .found(bytes),
            ]
        }
        IndexLocation::End if store.uses_suffix_requests() => {
            let mut r = Request::new(Method::GetSuffix, key, Purpose::Index).found(bytes);
            r.suffix = Some(n);
            vec![r]
        }
        IndexLocation::End => {
            let head = Request::new(Method::Head, key, Purpose::Index).found(size.map(|_| 0));
            match size {
                None => vec![head],
                Some(s) => {
                    let mut range = Request::new(Method::GetRange, key, Purpose::Index)
                        .bounded(s.saturating_sub(n), s)
                        .bytes(s.min(n));
                    range.conditional = true;
                    vec![head, range]
                }
            }
        }
    }
}

/// The index of a shard: from the cache, else read from the store (not cached) with the
/// requests that took.
async fn lookup_index(
    shared: &Shared,
    key: &StoreKey,
    codec: &ShardIndexCodec,
) -> Result<(Option<Cached>, bool, Vec<Request>)> {
    if let Some(hit) = shared.cached_index(key.as_str()) {
        return Ok((Some(hit), true, Vec::new()));
    }
    let store = shared.node.store();
    let suffix_before = store.uses_suffix_requests();
    let read = read_index(store, key, codec).await?;
    let size = read.as_ref().map(|c| c.shard_size);
    let mut made = Vec::new();
    if suffix_before && !store.uses_suffix_requests() {
        // the suffix request was refused before the HEAD + range fallback
        let mut refused = Request::new(Method::GetSuffix, key, Purpose::Index);
        refused.suffix = Some(codec.encoded_size());
        made.push(refused);
    }
    made.extend(index_requests(store, key, codec, size));
    Ok((read, false, made))
}

/// Size of an object from a HEAD (`None`: missing), with the request.
async fn probe(store: &Store, key: &StoreKey) -> Result<(Option<u64>, Request)> {
    let request = Request::new(Method::Head, key, Purpose::Probe);
    match store.head(key).await {
        Ok(info) => Ok((Some(info.size), request)),
        Err(StoreError::NotFound { .. }) => {
            let mut request = request;
            request.not_found = true;
            Ok((None, request))
        }
        Err(e) => Err(e.into()),
    }
}

fn cells_of(op: &ChunkOp) -> u64 {
    u64::try_from(op.num_cells()).unwrap_or(u64::MAX)
}

async fn explain_chunk_read(shared: &Shared, op: ChunkOp) -> Result<(ReadTarget, Vec<Request>)> {
    let key = shared.chunk_key(&op.chunk_coords)?;
    let (size, head) = probe(shared.node.store(), &key).await?;
    let target = ReadTarget {
        key: key.to_string(),
        coords: op.chunk_coords.clone(),
        strategy: ReadStrategy::Chunk,
        exists: size.is_some(),
        size,
        cells: cells_of(&op),
        index: None,
        inner_chunks: None,
        requests: vec![Request::new(Method::Get, &key, Purpose::Object).found(size)],
    };
    Ok((target, vec![head]))
}

async fn explain_shard_read(
    shared: &Shared,
    layout: &ShardLayout,
    work: ShardWork,
) -> Result<(ReadTarget, Vec<Request>)> {
    let key = shared.chunk_key(&work.shard.chunk_coords)?;
    let store = shared.node.store();
    let cells = cells_of(&work.shard);
    if !layout.partial_reads {
        let (size, head) = probe(store, &key).await?;
        let target = ReadTarget {
            key: key.to_string(),
            coords: work.shard.chunk_coords.clone(),
            strategy: ReadStrategy::Pipeline,
            exists: size.is_some(),
            size,
            cells,
            index: None,
            inner_chunks: None,
            requests: vec![Request::new(Method::Get, &key, Purpose::Object).found(size)],
        };
        return Ok((target, vec![head]));
    }
    let codec = layout.sharding.index_codec(&work.shard.chunk_shape)?;
    let touched = work.inner.len()?;
    let in_shard = inner_chunks_in(&work.shard.data_shape, &layout.inner_chunk_shape);
    let whole = touched == u128::from(in_shard);
    let (entry, cached, made) = lookup_index(shared, &key, &codec).await?;
    let cps = codec.chunks_per_shard();
    // the touched inner chunks and their ranges, in the order the read gathers them
    let mut chunks = Vec::new();
    let mut ranges = Vec::new();
    for coords in work.inner.chunk_coords()? {
        let range = match &entry {
            Some(e) => e.index.get(inner_chunk_index(&coords, cps)?),
            None => None,
        };
        if let Some(r) = &range {
            ranges.push(r.clone());
        }
        chunks.push(InnerChunk {
            coords,
            range: range.map(|r| [r.start, r.end]),
        });
    }
    let stored = ranges.len() as u64;
    let size = entry.as_ref().map(|e| e.shard_size);
    let mut requests = Vec::new();
    let in_place = store.reads_in_place();
    let index_source = if in_place {
        // one open; only the index and the needed inner chunks are read of the object
        let read = size
            .map(|_| codec.encoded_size() + ranges.iter().map(|r| r.end - r.start).sum::<u64>());
        let mut request = Request::new(Method::Get, &key, Purpose::InPlace).found(read);
        request.inner_chunks = stored;
        requests.push(request);
        IndexSource::Object
    } else if whole {
        requests.push(Request::new(Method::Get, &key, Purpose::Object).found(size));
        IndexSource::Object
    } else {
        let source = if cached {
            IndexSource::Cache
        } else {
            requests.extend(index_requests(store, &key, &codec, size));
            IndexSource::Store
        };
        if entry.is_some() {
            let plan = plan_merges(&ranges, store.options().coalesce);
            let mut carried = vec![0u64; plan.requests.len()];
            for &(i, _) in &plan.slices {
                carried[i] += 1;
            }
            for (r, n) in plan.requests.iter().zip(carried) {
                if r.is_empty() {
                    continue;
                }
                let mut request = Request::new(Method::GetRange, &key, Purpose::Data)
                    .bounded(r.start, r.end)
                    .bytes(r.end - r.start);
                request.conditional = true;
                request.inner_chunks = n;
                requests.push(request);
            }
        }
        source
    };
    let target = ReadTarget {
        key: key.to_string(),
        coords: work.shard.chunk_coords.clone(),
        strategy: if in_place {
            ReadStrategy::InPlace
        } else if whole {
            ReadStrategy::Whole
        } else {
            ReadStrategy::Partial
        },
        exists: entry.is_some(),
        size,
        cells,
        index: entry.as_ref().map(|_| IndexUse {
            source: index_source,
            cached,
            bytes: codec.encoded_size(),
        }),
        inner_chunks: Some(InnerChunksRead {
            in_shard,
            touched: chunks.len() as u64,
            stored,
            fill: chunks.len() as u64 - stored,
            chunks,
        }),
        requests,
    };
    Ok((target, made))
}

async fn explain_target_write(
    shared: &Shared,
    target: Target,
) -> Result<(WriteTarget, Vec<Request>)> {
    let key = shared.chunk_key(&target.coords)?;
    let store = shared.node.store();
    let covered = target.covers_all();
    let cells = target
        .outer_ops()
        .map(cells_of)
        .fold(0u64, u64::saturating_add);
    let mut out = WriteTarget {
        key: key.to_string(),
        coords: target.coords.clone(),
        read_skipped: covered,
        exists: None,
        size: None,
        cells,
        index: None,
        inner_chunks: None,
        requests: Vec::new(),
    };
    let mut made = Vec::new();
    let shard = shared.shards.as_ref().filter(|l| l.partial_reads);
    let shard_shape = target.chunk_shape()?;
    // what is stored: the index of a shard read first, else nothing to learn
    let mut index = None;
    if !covered {
        let size = match shard {
            Some(layout) => {
                let codec = layout.sharding.index_codec(&shard_shape)?;
                let (entry, cached, requests) = lookup_index(shared, &key, &codec).await?;
                made.extend(requests);
                out.index = entry.as_ref().map(|_| IndexUse {
                    source: IndexSource::Object,
                    cached,
                    bytes: codec.encoded_size(),
                });
                let size = entry.as_ref().map(|e| e.shard_size);
                index = entry.map(|e| e.index);
                size
            }
            None => {
                let (size, head) = probe(store, &key).await?;
                made.push(head);
                size
            }
        };
        out.exists = Some(size.is_some());
        out.size = size;
        out.requests
            .push(Request::new(Method::Get, &key, Purpose::Object).found(size));
    }
    let method = match out.exists {
        None => Method::Put,
        Some(false) => Method::PutCreate,
        Some(true) => Method::PutIfMatch,
    };
    let mut put = Request::new(method, &key, Purpose::Write);
    put.conditional = method == Method::PutIfMatch;
    out.requests.push(put);
    if let Some(layout) = shard {
        let cps = layout.sharding.chunks_per_shard(&shard_shape)?;
        let in_shard = cell_count(&cps) as u64;
        let stored = |i: usize| index.as_ref().is_some_and(|x| x.get(i).is_some());
        // the inner chunks lowered one by one, as the write does, and counted
        let mut counts = InnerChunksWrite {
            in_shard,
            rewritten: 0,
            covered: 0,
            decoded_first: 0,
            copied_verbatim: 0,
        };
        let mut next = 0usize;
        for touched in target.inner_targets(&cps)? {
            let (i, ops) = touched?;
            counts.copied_verbatim += (next..i).filter(|&j| stored(j)).count() as u64;
            next = i + 1;
            counts.rewritten += 1;
            if ops.iter().any(|(_, op)| op.coverage == Coverage::Full) {
                counts.covered += 1;
            } else if stored(i) {
                counts.decoded_first += 1;
            }
        }
        counts.copied_verbatim += (next..in_shard as usize).filter(|&j| stored(j)).count() as u64;
        out.inner_chunks = Some(counts);
    }
    Ok((out, made))
}

fn read_totals(targets: &[ReadTarget], explain: &[Request]) -> ReadTotals {
    let mut t = ReadTotals {
        targets: targets.len() as u64,
        explain_requests: explain.len() as u64,
        explain_bytes: explain.iter().map(|r| r.bytes).sum(),
        ..ReadTotals::default()
    };
    for target in targets {
        t.missing += u64::from(!target.exists);
        if let Some(inner) = &target.inner_chunks {
            t.inner_chunks += inner.touched;
            t.inner_chunks_fill += inner.fill;
        }
        for r in &target.requests {
            t.requests += 1;
            t.bytes += r.bytes;
            if r.purpose == Purpose::Index {
                t.index_requests += 1;
                t.index_bytes += r.bytes;
            } else {
                t.data_requests += 1;
                t.data_bytes += r.bytes;
            }
        }
    }
    t
}

fn write_totals(targets: &[WriteTarget], explain: &[Request]) -> WriteTotals {
    let mut t = WriteTotals {
        targets: targets.len() as u64,
        explain_requests: explain.len() as u64,
        explain_bytes: explain.iter().map(|r| r.bytes).sum(),
        ..WriteTotals::default()
    };
    for target in targets {
        t.reads_skipped += u64::from(target.read_skipped);
        if let Some(inner) = &target.inner_chunks {
            t.inner_chunks_rewritten += inner.rewritten;
            t.inner_chunks_decoded_first += inner.decoded_first;
            t.inner_chunks_copied_verbatim += inner.copied_verbatim;
        }
        for r in &target.requests {
            t.requests += 1;
            if r.purpose == Purpose::Write {
                t.puts += 1;
            } else {
                t.reads += 1;
                t.bytes_read += r.bytes;
            }
        }
    }
    t
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Targets listed in full by the text form; the JSON form lists every one.
const SHOWN_TARGETS: usize = 32;

/// Inner chunks listed per shard by the text form.
const SHOWN_INNER: usize = 8;

fn explain_requests_line(f: &mut fmt::Formatter<'_>, made: &[Request], bytes: u64) -> fmt::Result {
    if made.is_empty() {
        return writeln!(f, "explaining made no request; no chunk data was read");
    }
    let (mut index, mut heads) = (0, 0);
    for r in made {
        match r.purpose {
            Purpose::Probe => heads += 1,
            _ => index += 1,
        }
    }
    let mut parts = Vec::new();
    if index > 0 {
        parts.push(format!("{index} for shard indexes"));
    }
    if heads > 0 {
        parts.push(format!("{heads} HEAD{} for sizes", plural(heads)));
    }
    writeln!(
        f,
        "explaining made {} request{} ({}), {bytes} bytes of metadata; no chunk data was read",
        made.len(),
        plural(made.len() as u64),
        parts.join(", ")
    )
}

impl fmt::Display for ReadExplain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.totals;
        let what = if self.sharded { "shard" } else { "chunk" };
        writeln!(
            f,
            "read of {}: shape {:?} ({} values), {} {what}{} touched ({} missing)",
            self.url,
            self.shape,
            self.cells,
            t.targets,
            plural(t.targets),
            t.missing
        )?;
        for target in self.targets.iter().take(SHOWN_TARGETS) {
            write!(f, "  {} {:?}: ", target.key, target.coords)?;
            match target.strategy {
                ReadStrategy::Whole => f.write_str("whole shard, one GET")?,
                ReadStrategy::Partial => f.write_str("partial: index, then inner-chunk ranges")?,
                ReadStrategy::InPlace => {
                    f.write_str("in place: one open, the index and inner chunks read from it")?
                }
                ReadStrategy::Pipeline => {
                    f.write_str("one GET, decoded whole through the pipeline")?
                }
                ReadStrategy::Chunk => f.write_str("one GET")?,
            }
            if !target.exists {
                f.write_str("; missing: fill value")?;
            }
            if let Some(inner) = &target.inner_chunks {
                write!(
                    f,
                    "; {} of {} inner chunk{} ({} stored, {} fill)",
                    inner.touched,
                    inner.in_shard,
                    plural(inner.in_shard),
                    inner.stored,
                    inner.fill
                )?;
            }
            if let Some(index) = &target.index {
                let from = match (index.source, index.cached) {
                    (IndexSource::Cache, _) => "from the cache",
                    (IndexSource::Store, _) => "read from the store",
                    (IndexSource::Object, true) => "out of the shard (explained from the cache)",
                    (IndexSource::Object, false) => "out of the shard",
                };
                write!(f, "; index {from}")?;
            }
            writeln!(f)?;
            if let Some(inner) = &target.inner_chunks {
                let shown: Vec<String> = inner
                    .chunks
                    .iter()
                    .take(SHOWN_INNER)
                    .map(|c| match c.range {
                        Some([s, e]) => format!("{:?} {s}..{e}", c.coords),
                        None => format!("{:?} fill", c.coords),
                    })
                    .collect();
                let more = inner.chunks.len().saturating_sub(SHOWN_INNER);
                write!(f, "    inner chunks: {}", shown.join(", "))?;
                if more > 0 {
                    write!(f, ", ... {more} more")?;
                }
                writeln!(f)?;
            }
            for r in &target.requests {
                writeln!(f, "    {r}")?;
            }
        }
        if self.targets.len() > SHOWN_TARGETS {
            writeln!(
                f,
                "  ... {} more {what}s (--json lists all)",
                self.targets.len() - SHOWN_TARGETS
            )?;
        }
        writeln!(
            f,
            "the read makes {} request{} for {} bytes: {} index request{} ({} bytes), {} data \
             request{} ({} bytes)",
            t.requests,
            plural(t.requests),
            t.bytes,
            t.index_requests,
            plural(t.index_requests),
            t.index_bytes,
            t.data_requests,
            plural(t.data_requests),
            t.data_bytes
        )?;
        if self.sharded {
            writeln!(
                f,
                "inner chunks touched: {} ({} fill)",
                t.inner_chunks, t.inner_chunks_fill
            )?;
        }
        explain_requests_line(f, &self.explain_requests, t.explain_bytes)
    }
}

impl fmt::Display for WriteExplain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.totals;
        let what = if self.sharded { "shard" } else { "chunk" };
        writeln!(
            f,
            "write to {}: shape {:?} ({} values), {} {what}{} touched, {} written without a read",
            self.url,
            self.shape,
            self.cells,
            t.targets,
            plural(t.targets),
            t.reads_skipped
        )?;
        for target in self.targets.iter().take(SHOWN_TARGETS) {
            write!(f, "  {} {:?}: ", target.key, target.coords)?;
            match target.exists {
                None => f.write_str("covered whole: read skipped")?,
                Some(true) => f.write_str("read once, then replaced")?,
                Some(false) => f.write_str("missing: created")?,
            }
            if let Some(inner) = &target.inner_chunks {
                write!(
                    f,
                    "; inner chunks: {} rewritten ({} covered, {} decoded first), {} copied verbatim",
                    inner.rewritten, inner.covered, inner.decoded_first, inner.copied_verbatim
                )?;
            }
            writeln!(f)?;
            for r in &target.requests {
                writeln!(f, "    {r}")?;
            }
        }
        if self.targets.len() > SHOWN_TARGETS {
            writeln!(
                f,
                "  ... {} more {what}s (--json lists all)",
                self.targets.len() - SHOWN_TARGETS
            )?;
        }
        writeln!(
            f,
            "the write makes {} request{}: {} read{} ({} bytes), {} PUT{} (a DELETE instead where \
             a {what} is left holding only the fill value); no conflict assumed",
            t.requests,
            plural(t.requests),
            t.reads,
            plural(t.reads),
            t.bytes_read,
            t.puts,
            plural(t.puts)
        )?;
        if self.sharded {
            writeln!(
                f,
                "inner chunks: {} rewritten, {} decoded first, {} copied verbatim; shards laid \
                 out in {} order",
                t.inner_chunks_rewritten,
                t.inner_chunks_decoded_first,
                t.inner_chunks_copied_verbatim,
                self.inner_chunk_order.as_deref().unwrap_or("lexicographic")
            )?;
        }
        explain_requests_line(f, &self.explain_requests, t.explain_bytes)
    }
}
