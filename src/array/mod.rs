//! Arrays and lazy views: the execution layer that runs plans against a store.
//!
//! [`Array::open`] reads `zarr.json`; [`Array::view`] gives an [`ArrayView`], a transform
//! over the array. Indexing a view ([`ArrayView::get`], [`ArrayView::oindex`],
//! [`ArrayView::vindex`], [`ArrayView::transformed`]) composes transforms and does no I/O.
//! [`ArrayView::read`] plans the view over the shard (or chunk) grid and then each shard's
//! inner-chunk grid, fetches what it needs with coalesced requests, decodes on a bounded
//! blocking pool and copies runs straight into the result. [`ArrayView::write`] (and
//! [`WriteBatch`]) run planned read-modify-writes per shard.
//!
//! # Explaining
//!
//! [`ArrayView::explain_read`] and [`ArrayView::explain_write`] plan a read or a write and
//! say what it would do without reading or writing chunk data ([`ReadExplain`],
//! [`WriteExplain`], serialisable): per touched shard (or chunk), whole or partial, the inner
//! chunks touched, where the index comes from, each request with its byte range and size
//! (coalesced as the store would), and the totals. To locate inner chunks they read shard
//! indexes the cache does not hold and HEAD chunks for their size — metadata only, listed
//! as `explain_requests` — and never fill the cache.
//!
//! # Tracing
//!
//! Reads, writes and store requests emit [`tracing`](https://docs.rs/tracing) spans and
//! events: a `read` / `write` span per operation with a `plan` span and a "planned" event
//! (rank, shards or chunks, planning time); per shard an event naming how
//! it is read or written; one event per store request (target `zarrflow::store`: method,
//! key, range, bytes, latency, outcome) — all at DEBUG; per inner chunk decoded or encoded
//! at TRACE. Nothing is logged at INFO or above, and without a subscriber the events cost
//! nothing (no field is formatted).

mod any_element;
mod batch;
mod blocking;
mod cache;
mod element;
mod error;
mod explain;
mod fixed_text;
mod gate;
mod inner_targets;
mod key_locks;
mod planned;
mod pool;
mod read;
mod result_buffer;
mod retry;
mod scatter;
mod scratch;
mod spawned;
mod stream_store;

/// The memory primitives of reads, for the read benchmark's floors (not a stable API).
#[doc(hidden)]
pub mod bench_support {
    pub use super::result_buffer::advise_huge_pages;
    pub use super::stream_store::{copy_streaming, fence};
}
mod view;
mod vlen;
mod write;
mod written;

use std::sync::Arc;

use crate::codec::Sharding;
pub use crate::codec::sharding::{InnerChunkOrder, UnknownInnerChunkOrder};
use crate::grid::DimensionGrid;
use crate::hierarchy::ArrayNode;
use crate::index::IndexTransform;
use crate::metadata::{
    ArrayInfo, ArrayMetadata, ArraySpec, ChunkGridSpec, CodecSpec, DataType, ZarrFormat,
};
use crate::store::{Store, StoreKey, StoreOptions};

pub use any_element::AnyElement;
pub use batch::WriteBatch;
pub use blocking::block_on;
pub use element::Element;
pub use error::{ArrayError, Result, ShapeMismatch};
pub use explain::{
    IndexSource, IndexUse, InnerChunk, InnerChunksRead, InnerChunksWrite, Method, Purpose,
    ReadExplain, ReadStrategy, ReadTarget, ReadTotals, Request, WriteExplain, WriteTarget,
    WriteTotals,
};
pub use view::ArrayView;
pub use vlen::VlenElement;

use cache::IndexCache;
use key_locks::KeyLocks;

/// Default [`ArrayOptions::request_concurrency`]: shards (or chunks) fetched at once.
pub const DEFAULT_REQUEST_CONCURRENCY: usize = 32;

/// Default [`ArrayOptions::local_write_concurrency`]: one shard (or chunk) being encoded
/// while the one before it is stored.
///
/// A PUT to a local file (or to memory) is CPU work, the copy into the page cache, not a
/// wait: more writes in flight add nothing to overlap and only compete with the encoders for
/// the cores. Measured (`cargo bench --bench write -- --profile 8`, the 256 MiB
/// whole-array write on 2 cores, 4 alternations of the builds before and after): best
/// 159–178 ms with 32 in flight (the request concurrency), 138–153 ms with 2; with 32, up
/// to 25 PUTs waited at once (~20 ms each, against ~2.3 ms with 2). A store that fsyncs
/// ([`Store::fsyncs`](crate::store::Store::fsyncs)) does wait for its device, and keeps
/// `request_concurrency` (measured: 181–207 ms with 32 in flight against 197–237 ms with
/// 2).
pub const DEFAULT_LOCAL_WRITE_CONCURRENCY: usize = 2;

/// Default [`ArrayOptions::index_cache_bytes`]: 64 MiB of shard indexes (16 bytes an inner
/// chunk, so about four million inner chunks).
pub const DEFAULT_INDEX_CACHE_BYTES: u64 = 64 << 20;

/// Execution options of an opened array (runtime only, never stored in metadata).
///
/// The fields are read through accessors and set through the `with_*` methods, which hold
/// their invariants (at least one request and one decode at a time); checksums are verified
/// unless [`with_verify_checksums`](Self::with_verify_checksums) turns them off.
/// Coalescing thresholds belong to the store ([`StoreOptions::with_coalesce`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[must_use]
pub struct ArrayOptions {
    request_concurrency: usize,
    decode_threads: usize,
    index_cache_bytes: u64,
    store_empty_chunks: bool,
    verify_checksums: bool,
    max_metadata_bytes: u64,
    zarr_format: Option<ZarrFormat>,
    conflict_attempts: usize,
    local_write_concurrency: usize,
    write_cache_bytes: u64,
    inner_chunk_order: InnerChunkOrder,
}

impl Default for ArrayOptions {
    fn default() -> Self {
        ArrayOptions {
            request_concurrency: DEFAULT_REQUEST_CONCURRENCY,
            decode_threads: default_decode_threads(),
            index_cache_bytes: DEFAULT_INDEX_CACHE_BYTES,
            store_empty_chunks: false,
            verify_checksums: true,
            max_metadata_bytes: crate::metadata::DEFAULT_MAX_METADATA_BYTES,
            zarr_format: None,
            conflict_attempts: retry::MAX_CONFLICT_ATTEMPTS,
            local_write_concurrency: DEFAULT_LOCAL_WRITE_CONCURRENCY,
            write_cache_bytes: 0,
            inner_chunk_order: InnerChunkOrder::Lexicographic,
        }
    }
}

/// Default [`ArrayOptions::decode_threads`]: one more than the number of cores — decoding a
/// local shard includes blocking positioned reads of its file, and the extra decode keeps
/// every core busy while another waits (measured: the 100k-point gather of
/// `cargo bench --bench read` runs 10–25 % faster on 2 cores, other cases unchanged).
pub fn default_decode_threads() -> usize {
    pool::cores() + 1
}

impl ArrayOptions {
    /// Shards (or chunks) fetched concurrently (at least 1).
    pub fn request_concurrency(&self) -> usize {
        self.request_concurrency
    }

    /// Chunks (or shards) decoded at once on the blocking pool (at least 1).
    pub fn decode_threads(&self) -> usize {
        self.decode_threads
    }

    /// Byte budget of the shard-index cache; 0 when it is off.
    pub fn index_cache_bytes(&self) -> u64 {
        self.index_cache_bytes
    }

    /// Whether chunks (and inner chunks) equal to the fill value are stored.
    pub fn store_empty_chunks(&self) -> bool {
        self.store_empty_chunks
    }

    /// Whether checksums (`crc32c` of chunks, inner chunks and shard indexes) are verified
    /// when decoding (on by default).
    pub fn verify_checksums(&self) -> bool {
        self.verify_checksums
    }

    /// Sets the number of concurrent shard or chunk fetches (at least 1).
    pub fn with_request_concurrency(mut self, n: usize) -> Self {
        self.request_concurrency = n.max(1);
        self
    }

    /// Sets the number of concurrent decodes (at least 1).
    pub fn with_decode_threads(mut self, n: usize) -> Self {
        self.decode_threads = n.max(1);
        self
    }

    /// Shards (or chunks) a write stores at once into a store that reads in place (local
    /// files, `memory://`; [`Store::reads_in_place`](crate::store::Store::reads_in_place))
    /// and does not fsync, at most [`request_concurrency`](Self::request_concurrency); other
    /// stores write `request_concurrency` at once. See [`DEFAULT_LOCAL_WRITE_CONCURRENCY`].
    pub fn local_write_concurrency(&self) -> usize {
        self.local_write_concurrency
    }

    /// Sets the number of shards (or chunks) a write stores at once into a local or memory
    /// store that does not fsync (at least 1; 0 is taken as 1; never more than
    /// `request_concurrency`): raise it for a network filesystem mounted as a local path,
    /// where a write waits on the network.
    pub fn with_local_write_concurrency(mut self, n: usize) -> Self {
        self.local_write_concurrency = n.max(1);
        self
    }

    /// Keeps chunks equal to the fill value (by default they are not stored, and a shard
    /// left with no inner chunk is deleted).
    pub fn with_store_empty_chunks(mut self, on: bool) -> Self {
        self.store_empty_chunks = on;
        self
    }

    /// Turns checksum verification on decode on or off (on by default). With it off, a
    /// corrupt index or chunk whose checksum no longer matches is decoded as stored.
    pub fn with_verify_checksums(mut self, on: bool) -> Self {
        self.verify_checksums = on;
        self
    }

    /// The Zarr format an open reads: `None` (the default) for either, probing `zarr.json`,
    /// `.zarray`, `.zgroup` and `.zattrs` concurrently (four GETs); `Some(V3)` reads
    /// `zarr.json` alone (one GET), `Some(V2)` the three v2 documents.
    pub fn zarr_format(&self) -> Option<ZarrFormat> {
        self.zarr_format
    }

    /// Sets the Zarr format an open reads (see [`zarr_format`](Self::zarr_format)).
    pub fn with_zarr_format(mut self, format: ZarrFormat) -> Self {
        self.zarr_format = Some(format);
        self
    }

    /// The most bytes of `zarr.json` read when opening
    /// ([`DEFAULT_MAX_METADATA_BYTES`](crate::metadata::DEFAULT_MAX_METADATA_BYTES) by default).
    pub fn max_metadata_bytes(&self) -> u64 {
        self.max_metadata_bytes
    }

    /// Sets the most bytes of `zarr.json` read when opening: a larger document is refused
    /// before more is read (`MetadataError::TooLarge`).
    pub fn with_max_metadata_bytes(mut self, bytes: u64) -> Self {
        self.max_metadata_bytes = bytes;
        self
    }

    /// Attempts of a conditional write of one shard (or chunk) that keeps losing races with
    /// concurrent writers, before it gives up with `StoreError::Precondition` (32 by
    /// default; see docs/reliability.md).
    pub fn conflict_attempts(&self) -> usize {
        self.conflict_attempts
    }

    /// Sets the attempts of a conditional write that loses races (at least 1: 1 means no
    /// retry, the first conflict is the error).
    pub fn with_conflict_attempts(mut self, n: usize) -> Self {
        self.conflict_attempts = n.max(1);
        self
    }

    /// Sets the shard-index cache budget in bytes (0 turns the cache off).
    pub fn with_index_cache_bytes(mut self, bytes: u64) -> Self {
        self.index_cache_bytes = bytes;
        self
    }

    /// Byte budget of the written-shard cache; 0 (the default) when it is off.
    pub fn write_cache_bytes(&self) -> u64 {
        self.write_cache_bytes
    }

    /// Sets the written-shard cache budget in bytes (0, the default, turns it off). With a
    /// budget, a partial write of a shard (or chunk) into a remote store keeps the bytes it
    /// stored and their version, and the next partial write of that shard from this array
    /// starts from them instead of reading it: one round trip (a PUT conditional on that
    /// version) instead of two. If anyone wrote the shard in between, the PUT fails its
    /// condition and the write reads the shard and tries again, as without the cache (not
    /// counted as a lost race); a write that would leave a remembered shard empty reads it
    /// first, since a delete cannot be conditional. A shard larger than a quarter of the
    /// budget is not kept. Like TensorStore's `cache_pool`, off unless asked: with writers
    /// interleaving on the same shards, each stale entry costs a refused PUT.
    /// [`explain_write`](ArrayView::explain_write) does not consult it (it shows the read).
    pub fn with_write_cache_bytes(mut self, bytes: u64) -> Self {
        self.write_cache_bytes = bytes;
        self
    }

    /// How the shards this array writes lay their inner chunks out
    /// ([`InnerChunkOrder::Lexicographic`], C order, by default).
    pub fn inner_chunk_order(&self) -> InnerChunkOrder {
        self.inner_chunk_order
    }

    /// Sets the order the shards this array writes lay their inner chunks out in: C order
    /// (the default: TensorStore's and zarrs' layout), [`InnerChunkOrder::Morton`]
    /// (zarr-python 3's default) or Fortran order. A runtime choice, never written to the
    /// metadata: every reader follows the shard index, so the values read are the same
    /// whatever the order; the order decides the shard objects' bytes, which are then
    /// identical to those the matching writer stores for the same chunks. A partial write
    /// lays the whole shard out again in this order (untouched inner chunks are still
    /// copied verbatim).
    pub fn with_inner_chunk_order(mut self, order: InnerChunkOrder) -> Self {
        self.inner_chunk_order = order;
        self
    }
}

/// An opened Zarr v3 array. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Array {
    shared: Arc<Shared>,
}

/// How the outer grid's chunks are laid out.
#[derive(Debug)]
pub(crate) struct ShardLayout {
    pub(crate) sharding: Sharding,
    pub(crate) inner_chunk_shape: Vec<u64>,
    /// Inner chunks can be read one by one: sharding is the first codec and nothing wraps it.
    pub(crate) partial_reads: bool,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) node: ArrayNode,
    /// The identity transform over the array's shape.
    pub(crate) identity: IndexTransform,
    pub(crate) grids: Vec<Arc<dyn DimensionGrid>>,
    pub(crate) shards: Option<ShardLayout>,
    pub(crate) elem: usize,
    pub(crate) dtype: DataType,
    pub(crate) options: ArrayOptions,
    pub(crate) index_cache: Option<IndexCache>,
    /// Shards this array last wrote partially (`written.rs`); `None` when off.
    pub(crate) written: Option<written::WrittenShards>,
    /// A lock per shard (or chunk) key, serialising its read-modify-writes within this
    /// process.
    pub(crate) locks: KeyLocks,
}

impl Shared {
    /// The store key of the shard (or chunk) at grid coordinates `coords`.
    pub(crate) fn chunk_key(&self, coords: &[i64]) -> Result<StoreKey> {
        let coords: Vec<u64> = coords
            .iter()
            .map(|&c| {
                u64::try_from(c)
                    .map_err(|_| ArrayError::Internal(format!("negative chunk coordinate {c}")))
            })
            .collect::<Result<_>>()?;
        Ok(self.node.chunk_key(&coords)?)
    }
}

impl Array {
    /// Opens the array at a URL (a path, `file://`, `memory://`, `s3://bucket/prefix`,
    /// `gs://`, `az://`, `http(s)://`).
    pub async fn open(url: &str) -> Result<Array> {
        let store = Store::open(url, StoreOptions::default())?;
        Array::open_in(&store, &StoreKey::root(), ArrayOptions::default()).await
    }

    /// Opens the array at `path` in `store` with execution options.
    pub async fn open_in(store: &Store, path: &StoreKey, options: ArrayOptions) -> Result<Array> {
        let node = ArrayNode::open_as(store, path, options.max_metadata_bytes, options.zarr_format)
            .await?;
        Array::from_node(node, options)
    }

    /// Creates an array at `path` from `spec` and opens it.
    ///
    /// Refuses to replace anything: a node at `path` is an error for which
    /// [`ArrayError::is_already_exists`] holds, and objects under `path` without a
    /// `zarr.json` (stale chunks) are [`HierarchyError::NotEmpty`](crate::hierarchy::HierarchyError::NotEmpty).
    /// [`create_overwrite`](Self::create_overwrite) replaces them.
    pub async fn create(
        store: &Store,
        path: &StoreKey,
        spec: &ArraySpec,
        options: ArrayOptions,
    ) -> Result<Array> {
        let node = ArrayNode::create(store, path, spec, false).await?;
        Array::from_node(node, options)
    }

    /// Creates an array at `path` from `spec`, first deleting whatever is stored under
    /// `path` (an old array's metadata and chunks, a group and its children; the metadata
    /// first, so an interrupted overwrite leaves no node): no old chunk can be read through
    /// the new array (zarr-python's `overwrite=True`, TensorStore's
    /// `delete_existing`).
    pub async fn create_overwrite(
        store: &Store,
        path: &StoreKey,
        spec: &ArraySpec,
        options: ArrayOptions,
    ) -> Result<Array> {
        let node = ArrayNode::create(store, path, spec, true).await?;
        Array::from_node(node, options)
    }

    /// Creates an array at a URL (`memory://name/a`, a path, `s3://bucket/a`, ...) with
    /// default options; like [`create`](Self::create), it replaces nothing.
    pub async fn create_at(url: &str, spec: &ArraySpec) -> Result<Array> {
        let store = Store::open(url, StoreOptions::default())?;
        Array::create(&store, &StoreKey::root(), spec, ArrayOptions::default()).await
    }

    /// A batch of writes that touches each shard once when committed.
    pub fn batch(&self) -> WriteBatch {
        WriteBatch::new(self.clone())
    }

    /// Wraps an opened node.
    pub fn from_node(node: ArrayNode, options: ArrayOptions) -> Result<Array> {
        let node = node
            .with_verify_checksums(options.verify_checksums)
            .with_inner_chunk_order(options.inner_chunk_order);
        let meta = node.metadata();
        let dtype = meta.dtype().ok_or_else(|| {
            ArrayError::Unsupported(format!(
                "data type {} of {} (zarrflow reads and writes {})",
                meta.data_type(),
                node.store().url_of(node.path()),
                DataType::valid_names()
            ))
        })?;
        // variable-length elements move through the execution layer as 8-byte handles
        let elem = if dtype.is_variable_length() {
            8
        } else {
            dtype.size()
        };
        let identity = IndexTransform::from_shape(meta.shape())?;
        let grids = grids_of(meta)?;
        let shards = shard_layout(meta);
        let index_cache = (options.index_cache_bytes > 0 && shards.is_some())
            .then(|| IndexCache::new(options.index_cache_bytes));
        let written = written::WrittenShards::for_store(node.store(), options.write_cache_bytes);
        Ok(Array {
            shared: Arc::new(Shared {
                node,
                identity,
                grids,
                shards,
                elem,
                dtype,
                options,
                index_cache,
                written,
                locks: KeyLocks::default(),
            }),
        })
    }

    /// The array's metadata (every field of `zarr.json`; the accessors below cover what
    /// users ask for).
    pub fn metadata(&self) -> &ArrayMetadata {
        self.shared.node.metadata()
    }

    /// The array's shape.
    pub fn shape(&self) -> &[u64] {
        self.metadata().shape()
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// The data type.
    pub fn data_type(&self) -> DataType {
        self.shared.dtype
    }

    /// The fill value as the element type `T` (exact: NaN payloads and 64-bit extremes
    /// included). Fails with [`ArrayError::DataTypeMismatch`] when `T` does not match.
    pub fn fill_value<T: Element>(&self) -> Result<T> {
        if !T::holds(self.shared.dtype) {
            return Err(ArrayError::DataTypeMismatch {
                array: self.shared.dtype.to_string(),
                requested: T::RUST_NAME,
            });
        }
        T::from_ne_bytes_vec(self.metadata().fill_value().as_ne_bytes())
            .and_then(|v| v.first().copied())
            .ok_or_else(|| ArrayError::Internal("fill value of the wrong size".into()))
    }

    /// The fill value's native-endian bytes (any data type, raw ones too).
    pub fn fill_value_bytes(&self) -> &[u8] {
        self.metadata().fill_value().as_ne_bytes()
    }

    /// The shard shape (the outer grid's chunk shape), when the array is sharded.
    pub fn shard_shape(&self) -> Option<&[u64]> {
        self.shared
            .shards
            .as_ref()
            .and(self.metadata().shard_or_chunk_shape())
    }

    /// The inner chunk shape (the unit of reads inside a shard), when sharded.
    pub fn inner_chunk_shape(&self) -> Option<&[u64]> {
        self.metadata().inner_chunk_shape()
    }

    /// The read chunk shape: the inner chunk shape when sharded, else the chunk shape of a
    /// regular grid (`None` for a rectilinear grid without sharding).
    pub fn chunk_shape(&self) -> Option<&[u64]> {
        self.inner_chunk_shape()
            .or_else(|| self.metadata().shard_or_chunk_shape())
    }

    /// The chunk grid (regular, or rectilinear with its edges).
    pub fn chunk_grid(&self) -> &ChunkGridSpec {
        self.metadata().chunk_grid()
    }

    /// The planner's grid of dimension `dim` (the shard grid when sharded, else the chunk
    /// grid), built once when the array was opened; `None` past the last dimension.
    pub fn dimension_grid(&self, dim: usize) -> Option<&dyn DimensionGrid> {
        self.shared.grids.get(dim).map(|g| g.as_ref())
    }

    /// The codec chain, in canonical form (sharding's configuration holds its inner
    /// chains).
    pub fn codecs(&self) -> Vec<CodecSpec> {
        self.metadata().codec_specs()
    }

    /// One optional name per dimension, when the metadata names them.
    pub fn dimension_names(&self) -> Option<&[Option<String>]> {
        self.metadata().dimension_names()
    }

    /// The user attributes.
    pub fn attributes(&self) -> &serde_json::Map<String, serde_json::Value> {
        self.metadata().attributes()
    }

    /// One user attribute.
    pub fn attribute(&self, key: &str) -> Option<&serde_json::Value> {
        self.attributes().get(key)
    }

    /// The Zarr format version of the array's metadata (2 or 3).
    pub fn zarr_format(&self) -> u8 {
        self.metadata().zarr_format().number()
    }

    /// Everything above in one serialisable record: what `zarrflow info --json` prints.
    pub fn info(&self) -> ArrayInfo {
        self.metadata().info()
    }

    /// The node's path in its store.
    pub fn path(&self) -> &StoreKey {
        self.shared.node.path()
    }

    /// The array's URL (for messages).
    pub fn url(&self) -> String {
        self.store().url_of(self.path())
    }

    /// Sets one attribute and writes `zarr.json` (conditionally on the version read, where
    /// the store supports it); this handle sees the new attributes, other handles after
    /// re-opening.
    pub async fn set_attribute(
        &mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Result<()> {
        let (key, value) = (key.into(), value.into());
        self.update_attributes(|a| {
            a.insert(key, value);
        })
        .await
    }

    /// Replaces the attributes with `f(old)` and writes `zarr.json` (conditionally on the
    /// version read, where the store supports it).
    pub async fn update_attributes(
        &mut self,
        f: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
    ) -> Result<()> {
        let mut node = self.shared.node.clone();
        node.update_attributes(f).await?;
        *self = Array::from_node(node, self.shared.options.clone())?;
        Ok(())
    }

    /// The store holding the array.
    pub fn store(&self) -> &Store {
        self.shared.node.store()
    }

    /// The execution options.
    pub fn options(&self) -> &ArrayOptions {
        &self.shared.options
    }

    /// The whole array as a view.
    pub fn view(&self) -> ArrayView {
        ArrayView::whole(self.clone())
    }
}

/// One grid per dimension from the metadata's chunk grid (the shard grid when sharded).
fn grids_of(meta: &ArrayMetadata) -> Result<Vec<Arc<dyn DimensionGrid>>> {
    meta.chunk_grid()
        .dimension_grids(meta.shape())
        .map_err(|(dimension, source)| ArrayError::Grid { dimension, source })
}

/// The C-order index of an inner chunk within its shard's `chunks_per_shard` grid.
pub(crate) fn inner_chunk_index(coords: &[i64], chunks_per_shard: &[u64]) -> Result<usize> {
    if coords.len() != chunks_per_shard.len()
        || coords
            .iter()
            .zip(chunks_per_shard)
            .any(|(&c, &n)| c < 0 || c as u64 >= n)
    {
        return Err(ArrayError::Internal(format!(
            "inner chunk {coords:?} outside the shard's {chunks_per_shard:?} chunks"
        )));
    }
    let c: Vec<u64> = coords.iter().map(|&c| c as u64).collect();
    Ok(crate::codec::block::ravel(&c, chunks_per_shard) as usize)
}

fn shard_layout(meta: &ArrayMetadata) -> Option<ShardLayout> {
    let pipeline = meta.codecs();
    let sharding = pipeline.sharding()?;
    let chain = pipeline.chain();
    let partial_reads =
        chain.array_to_array_codecs().is_empty() && chain.bytes_to_bytes_codecs().is_empty();
    Some(ShardLayout {
        sharding: sharding.clone(),
        inner_chunk_shape: sharding.config().chunk_shape.clone(),
        partial_reads,
    })
}
