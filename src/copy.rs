//! Copying an array or a whole hierarchy between stores, re-chunking, re-sharding and
//! re-encoding on the way: the engine behind `zarrflow copy`.
//!
//! [`plan_copy`] reads the source's metadata (every node, parents before children) and works
//! out each destination array's [`ArraySpec`] from a [`Layout`], writing nothing; a source
//! that cannot be read, a layout that does not fit, or a destination that is the source,
//! inside it or around it ([`CopyError::Overlap`], decided on the stores'
//! [`StoreLocation`]s, not their URLs) fails here. [`CopyPlan::run`] then makes room at the
//! destination (refusing an existing node unless [`CopyOptions::overwrite`], which deletes
//! the old node's metadata before its data), copies one destination shard (or chunk) per
//! unit of work, and writes the metadata last: every array's `zarr.json` after all chunks,
//! parents after their children, the root's last. An interrupted copy therefore leaves no
//! node at the destination root — reading it is "node not found", never fill values where
//! the source had data — and copying again needs `overwrite`.
//!
//! Consolidated metadata: a source root group holding it (v3 inline, v2 `.zmetadata`) is
//! read through it (one request for the whole hierarchy's metadata), and the destination
//! root gets consolidated metadata of the copied nodes in its own format, written with the
//! root's document (last); [`CopyOptions::consolidate`] writes it for any source group.
//!
//! A unit's region is read from the source with a planned, coalesced read and written whole
//! (no read-modify-write: a covered shard is encoded and stored in one PUT), `jobs` units at
//! once. Per unit the read result, the write's staged copy, the shard being encoded and its
//! encoded inner chunks are alive together, so memory stays within about
//! `20 MB + jobs × 6 × shard bytes`.
//!
//! ```
//! use zarrflow::copy::{Layout, copy, CopyOptions};
//! use zarrflow::{Array, ArraySpec, Store, sel};
//! # zarrflow::block_on(async {
//! let src = Store::memory_named("copy-doc-src");
//! let a = Array::create_at("memory://copy-doc-src", &ArraySpec::of::<u16>([64, 64]).shard_shape([16, 16])).await?;
//! a.view().get(&sel![.., 3])?.write_scalar(7u16).await?;
//! // re-shard into 32 x 32 shards of 8 x 8 inner chunks, keeping the codecs
//! let dst = Store::memory_named("copy-doc-dst");
//! let layout = Layout::keep().shards([32, 32]).chunks([8, 8]);
//! let report = copy(&src, &dst, &layout, &CopyOptions::default()).await?;
//! assert_eq!((report.arrays, report.units), (1, 4));
//! let b = Array::open("memory://copy-doc-dst").await?;
//! assert_eq!(b.inner_chunk_shape(), Some(&[8, 8][..]));
//! assert_eq!(b.view().read::<u16>().await?, a.view().read::<u16>().await?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap().unwrap();
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use serde_json::{Map, Value};

use crate::array::{Array, ArrayError, ArrayOptions};
use crate::codec::IndexLocation;
use crate::hierarchy::{
    ArrayNode, HierarchyError, Node, delete_node, holder_documents, open_node, write_metadata_last,
};
use crate::index::{Selection, SelectionItem, Slice};
use crate::metadata::{
    ArrayMetadata, ArraySpec, ChunkKeyEncodingSpec, CodecSpec, ConsolidatedNodes, GroupMetadata,
    MetadataError, NodeMetadata, ZarrFormat,
};
use crate::store::{Store, StoreKey, StoreLocation};

/// The destination's layout; what is not given keeps the source's.
///
/// Without `chunks` and `shards` the source's chunking is kept. `shards` alone keeps the
/// source's inner chunk shape when it divides the new shards (else one inner chunk per
/// shard); `chunks` alone makes an unsharded array with that chunk shape; both make a
/// sharded array. `codecs` replaces the (inner) chunk codecs; the index location applies to
/// sharded destinations only.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
#[must_use]
pub struct Layout {
    /// The destination's shard shape.
    pub shards: Option<Vec<u64>>,
    /// The destination's (inner) chunk shape.
    pub chunks: Option<Vec<u64>>,
    /// The destination's (inner) chunk codecs.
    pub codecs: Option<Vec<CodecSpec>>,
    /// Where a sharded destination keeps its shard index.
    pub index_location: Option<IndexLocation>,
    /// The destination's Zarr format (default: the source's). Migrating to v3 gives the
    /// v3 `default` chunk key encoding; to v2 the `v2` encoding (the source's separator when
    /// it has one, else `.`); v2 cannot hold sharding (give `chunks` alone).
    pub zarr_format: Option<ZarrFormat>,
}

impl Layout {
    /// The source's layout and codecs, unchanged.
    pub fn keep() -> Self {
        Layout::default()
    }
    /// Sets the shard shape.
    pub fn shards(mut self, shape: impl Into<Vec<u64>>) -> Self {
        self.shards = Some(shape.into());
        self
    }
    /// Sets the (inner) chunk shape.
    pub fn chunks(mut self, shape: impl Into<Vec<u64>>) -> Self {
        self.chunks = Some(shape.into());
        self
    }
    /// Sets the (inner) chunk codecs.
    pub fn codecs(mut self, codecs: impl IntoIterator<Item = CodecSpec>) -> Self {
        self.codecs = Some(codecs.into_iter().collect());
        self
    }
    /// Sets the shard index location.
    pub fn index_location(mut self, location: IndexLocation) -> Self {
        self.index_location = Some(location);
        self
    }
    /// Sets the destination's Zarr format.
    pub fn zarr_format(mut self, format: ZarrFormat) -> Self {
        self.zarr_format = Some(format);
        self
    }
}

/// How a copy runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
#[must_use]
pub struct CopyOptions {
    /// Units (destination shards or chunks) copied at once. Default: the number of cores.
    pub jobs: usize,
    /// Replace a node at the destination (everything under it is deleted first, its
    /// metadata before its data).
    pub overwrite: bool,
    /// Execution options of the source and destination arrays.
    pub array_options: ArrayOptions,
    /// Write consolidated metadata at the destination root group even when the source
    /// root has none (it is written anyway when the source root has it).
    pub consolidate: bool,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            overwrite: false,
            array_options: ArrayOptions::default(),
            consolidate: false,
        }
    }
}

impl CopyOptions {
    /// Sets the number of units copied at once (at least 1).
    pub fn with_jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }
    /// Replace a node at the destination.
    pub fn with_overwrite(mut self, on: bool) -> Self {
        self.overwrite = on;
        self
    }
    /// Write consolidated metadata at the destination root group (see
    /// [`CopyOptions::consolidate`]).
    pub fn with_consolidate(mut self, on: bool) -> Self {
        self.consolidate = on;
        self
    }
    /// Sets the arrays' execution options.
    pub fn with_array_options(mut self, options: ArrayOptions) -> Self {
        self.array_options = options;
        self
    }
}

/// Where a running copy stands, passed to the progress callback after every unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyProgress {
    /// Units (destination shards or chunks) written.
    pub units_done: u64,
    /// Units in all.
    pub units_total: u64,
    /// Bytes (uncompressed) written.
    pub bytes_done: u64,
    /// Bytes (uncompressed) in all.
    pub bytes_total: u64,
}

/// What a finished copy did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyReport {
    /// Arrays copied.
    pub arrays: usize,
    /// Groups created.
    pub groups: usize,
    /// Units (destination shards or chunks) written.
    pub units: u64,
    /// Bytes (uncompressed) written.
    pub bytes: u64,
}

/// Why a copy failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// The source and destination are the same location, or one is inside the other
    /// (compared as [`StoreLocation`]s: decoded, canonical). Nothing was read or written.
    #[error(
        "SRC {src} and DST {dst} overlap: {}; copy to a separate location",
        overlap(src_location, dst_location)
    )]
    Overlap {
        /// The source's URL.
        src: String,
        /// The destination's URL.
        dst: String,
        /// Where the source is.
        src_location: Box<StoreLocation>,
        /// Where the destination is.
        dst_location: Box<StoreLocation>,
    },
    /// A node exists at the destination and [`CopyOptions::overwrite`] is off.
    #[error("a node already exists at {url}")]
    DestinationExists {
        /// The destination's URL.
        url: String,
    },
    /// The layout does not fit a source array.
    #[error("{url}: {reason}")]
    Layout {
        /// The array's URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The destination array's metadata is invalid (e.g. a shard shape of the wrong rank).
    #[error("{url}: {source}")]
    Spec {
        /// The destination array's URL.
        url: String,
        /// The refusal.
        source: Box<MetadataError>,
    },
    /// Reading the source failed.
    #[error("reading {url}: {source}")]
    Read {
        /// The source array's URL.
        url: String,
        /// The failure.
        source: Box<ArrayError>,
    },
    /// Writing the destination failed.
    #[error("writing {url}: {source}")]
    Write {
        /// The destination array's URL.
        url: String,
        /// The failure.
        source: Box<ArrayError>,
    },
    /// Opening the source or creating the destination failed.
    #[error(transparent)]
    Array(Box<ArrayError>),
}

/// How two overlapping locations overlap, for [`CopyError::Overlap`]'s message.
fn overlap(src: &StoreLocation, dst: &StoreLocation) -> String {
    if src == dst {
        format!("both are {src}")
    } else if src.contains(dst) {
        format!("{dst} is inside {src}")
    } else {
        format!("{src} is inside {dst}")
    }
}

impl From<ArrayError> for CopyError {
    fn from(e: ArrayError) -> Self {
        CopyError::Array(Box::new(e))
    }
}

impl From<HierarchyError> for CopyError {
    fn from(e: HierarchyError) -> Self {
        CopyError::Array(Box::new(e.into()))
    }
}

/// One node of the source, planned for the destination.
#[derive(Debug)]
enum PlannedNode {
    Group {
        path: StoreKey,
        attributes: Map<String, Value>,
        format: ZarrFormat,
    },
    Array {
        source: Box<ArrayNode>,
        spec: Box<ArraySpec>,
        /// The destination's write unit (shard, or chunk when unsharded).
        unit: Vec<u64>,
        units: u64,
        bytes: u64,
    },
}

/// A copy whose source has been read and whose destination specs are validated; nothing
/// has been written yet.
#[derive(Debug)]
#[must_use = "a plan copies nothing until it is run"]
pub struct CopyPlan {
    src: Store,
    dst: Store,
    nodes: Vec<PlannedNode>,
    /// The source root is a group holding consolidated metadata.
    consolidated: bool,
}

/// Reads the source hierarchy (or array) at `src`'s root and plans its copy to `dst`'s root
/// with `layout`, writing nothing.
pub async fn plan_copy(src: &Store, dst: &Store, layout: &Layout) -> Result<CopyPlan, CopyError> {
    check_distinct(src, dst)?;
    let mut sources = Vec::new();
    let root = open_node(src, &StoreKey::root()).await?;
    let consolidated = matches!(&root, Node::Group(g) if g.metadata().consolidated.is_some());
    collect(root, &mut sources).await?;
    let mut nodes = Vec::with_capacity(sources.len());
    for node in sources {
        nodes.push(match node {
            Node::Group(g) => PlannedNode::Group {
                path: g.path().clone(),
                attributes: g.attributes().clone(),
                format: layout.zarr_format.unwrap_or(g.metadata().zarr_format),
            },
            Node::Array(a) => {
                let url = dst.url_of(a.path());
                let spec =
                    destination_spec(a.metadata(), layout).map_err(|reason| CopyError::Layout {
                        url: src.url_of(a.path()),
                        reason,
                    })?;
                let meta = spec.build().map_err(|source| CopyError::Spec {
                    url: url.clone(),
                    source: Box::new(source),
                })?;
                let unit = meta
                    .shard_or_chunk_shape()
                    .map(<[u64]>::to_vec)
                    .ok_or_else(|| CopyError::Layout {
                        url: url.clone(),
                        reason: "the destination grid is not regular".into(),
                    })?;
                let units = meta
                    .chunk_grid()
                    .grid_shape(meta.shape())
                    .iter()
                    .try_fold(1u64, |a, &n| a.checked_mul(n));
                let elem = meta.dtype().map(|t| t.size() as u64);
                let bytes = meta
                    .shape()
                    .iter()
                    .try_fold(elem.unwrap_or(0), |a, &n| a.checked_mul(n));
                let (Some(units), Some(bytes)) = (units, bytes) else {
                    return Err(CopyError::Layout {
                        url,
                        reason: "the array's size overflows 64 bits".into(),
                    });
                };
                PlannedNode::Array {
                    source: Box::new(a),
                    spec: Box::new(spec),
                    unit,
                    units,
                    bytes,
                }
            }
        });
    }
    Ok(CopyPlan {
        src: src.clone(),
        dst: dst.clone(),
        nodes,
        consolidated,
    })
}

/// Plans and runs a copy of `src`'s root node (array or hierarchy) to `dst`'s root.
pub async fn copy(
    src: &Store,
    dst: &Store,
    layout: &Layout,
    options: &CopyOptions,
) -> Result<CopyReport, CopyError> {
    plan_copy(src, dst, layout)
        .await?
        .run(options, |_| {})
        .await
}

/// [`copy`] for code without an async runtime.
pub fn copy_blocking(
    src: &Store,
    dst: &Store,
    layout: &Layout,
    options: &CopyOptions,
) -> Result<CopyReport, CopyError> {
    crate::array::block_on(copy(src, dst, layout, options))?
}

impl CopyPlan {
    /// Number of arrays to copy.
    pub fn arrays(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, PlannedNode::Array { .. }))
            .count()
    }

    /// Number of units (destination shards or chunks) to write.
    pub fn units(&self) -> u64 {
        self.nodes.iter().map(|n| n.units()).sum()
    }

    /// Bytes (uncompressed) to write.
    pub fn bytes(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| match n {
                PlannedNode::Array { bytes, .. } => *bytes,
                PlannedNode::Group { .. } => 0,
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Whether the destination root gets consolidated metadata without
    /// [`CopyOptions::consolidate`] (the source root holds it).
    pub fn source_consolidated(&self) -> bool {
        self.consolidated
    }

    /// The destination spec of each array, by path.
    pub fn specs(&self) -> impl Iterator<Item = (&StoreKey, &ArraySpec)> {
        self.nodes.iter().filter_map(|n| match n {
            PlannedNode::Array { source, spec, .. } => Some((source.path(), spec.as_ref())),
            PlannedNode::Group { .. } => None,
        })
    }

    /// Runs the copy: makes room at the destination (with [`CopyOptions::overwrite`], the
    /// old node's metadata is deleted before its data), copies every unit, calling
    /// `progress` after each, then writes the metadata: arrays and groups after their
    /// children, the root last.
    pub async fn run(
        self,
        options: &CopyOptions,
        progress: impl Fn(CopyProgress) + Send + Sync,
    ) -> Result<CopyReport, CopyError> {
        let (src, dst) = (&self.src, &self.dst);
        let consolidate = self.consolidated || options.consolidate;
        if consolidate && let Some(PlannedNode::Array { source, .. }) = self.nodes.first() {
            return Err(CopyError::Layout {
                url: src.url_of(source.path()),
                reason: "the source is an array: consolidated metadata belongs to a group".into(),
            });
        }
        // the filesystem may have changed since planning (a link made): decide again
        check_distinct(src, dst)?;
        prepare_destination(dst, options.overwrite).await?;
        let mut jobs = Vec::new();
        for node in &self.nodes {
            if let PlannedNode::Array {
                source,
                spec,
                unit,
                units,
                ..
            } = node
            {
                let opts = options.array_options.clone();
                let from = Array::from_node((**source).clone(), opts.clone())?;
                let to = Array::from_node(ArrayNode::unwritten(dst, source.path(), spec)?, opts)?;
                jobs.push(ArrayJob {
                    src_url: src.url_of(source.path()),
                    dst_url: dst.url_of(source.path()),
                    src: from,
                    dst: to,
                    unit: unit.clone(),
                    units: *units,
                });
            }
        }
        let state = Counters {
            units: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            units_total: self.units(),
            bytes_total: self.bytes(),
        };
        let work = jobs
            .iter()
            .flat_map(|job| (0..job.units).map(move |u| (job, u)));
        let mut results = futures::stream::iter(work)
            .map(|(job, u)| copy_unit(job, u))
            .buffer_unordered(options.jobs.max(1));
        while let Some(done) = results.next().await {
            let bytes = done?;
            progress(state.record(bytes));
        }
        drop(results);
        // metadata last, in reverse of parents-before-children order: every node after its
        // descendants, the root (the first node planned) after everything, with the
        // consolidated metadata of all the others when it gets it
        let mut groups = 0;
        let mut consolidated = ConsolidatedNodes::new();
        for node in self.nodes.iter().rev() {
            let (path, json) = match node {
                PlannedNode::Group {
                    path,
                    attributes,
                    format,
                } => {
                    groups += 1;
                    let mut meta = GroupMetadata::new(attributes.clone());
                    meta.zarr_format = *format;
                    if path.is_root() && consolidate {
                        meta.consolidated = Some(std::mem::take(&mut consolidated));
                        (path, holder_documents(&meta)?)
                    } else {
                        let docs = meta.documents();
                        consolidated.insert(path.as_str().to_string(), NodeMetadata::Group(meta));
                        (path, docs)
                    }
                }
                PlannedNode::Array { source, spec, .. } => {
                    let meta = spec.build().map_err(HierarchyError::from)?;
                    let docs = meta.documents().map_err(HierarchyError::from)?;
                    consolidated.insert(
                        source.path().as_str().to_string(),
                        NodeMetadata::Array(Box::new(meta)),
                    );
                    (source.path(), docs)
                }
            };
            write_metadata_last(dst, path, json).await?;
        }
        Ok(CopyReport {
            arrays: jobs.len(),
            groups,
            units: state.units.load(Ordering::Relaxed),
            bytes: state.bytes.load(Ordering::Relaxed),
        })
    }
}

impl PlannedNode {
    fn units(&self) -> u64 {
        match self {
            PlannedNode::Array { units, .. } => *units,
            PlannedNode::Group { .. } => 0,
        }
    }
}

/// Progress counters of a running copy.
struct Counters {
    units: AtomicU64,
    bytes: AtomicU64,
    units_total: u64,
    bytes_total: u64,
}

impl Counters {
    /// Records one unit of `bytes` and returns where the copy stands.
    fn record(&self, bytes: u64) -> CopyProgress {
        CopyProgress {
            units_done: self.units.fetch_add(1, Ordering::Relaxed) + 1,
            units_total: self.units_total,
            bytes_done: self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes,
            bytes_total: self.bytes_total,
        }
    }
}

/// One array being copied: its source and its (created) destination.
struct ArrayJob {
    src: Array,
    dst: Array,
    src_url: String,
    dst_url: String,
    /// The destination's write unit (shard, or chunk when unsharded).
    unit: Vec<u64>,
    units: u64,
}

/// Refuses copies onto the source or into / around it, comparing the stores' decoded,
/// canonical locations (not their URLs' text).
fn check_distinct(src: &Store, dst: &Store) -> Result<(), CopyError> {
    let (src_location, dst_location) = (src.location(), dst.location());
    if src_location.overlaps(&dst_location) {
        return Err(CopyError::Overlap {
            src: src.url().to_string(),
            dst: dst.url().to_string(),
            src_location: Box::new(src_location),
            dst_location: Box::new(dst_location),
        });
    }
    Ok(())
}

/// Makes room for a new node at the store root. With `overwrite`, whatever is there (a
/// node, an unreadable `zarr.json`, an interrupted copy's chunks) is deleted, metadata first
/// ([`delete_node`]). Without, a node there is [`CopyError::DestinationExists`] and other
/// objects there are [`HierarchyError::NotEmpty`].
async fn prepare_destination(store: &Store, overwrite: bool) -> Result<(), CopyError> {
    let root = StoreKey::root();
    if overwrite {
        delete_node(store, &root).await?;
        return Ok(());
    }
    match open_node(store, &root).await {
        Err(HierarchyError::NotFound { .. } | HierarchyError::NoNode { .. }) => {
            if store
                .is_empty_prefix(&root)
                .await
                .map_err(ArrayError::from)?
            {
                Ok(())
            } else {
                Err(HierarchyError::NotEmpty {
                    url: store.url().to_string(),
                }
                .into())
            }
        }
        Ok(_) => Err(CopyError::DestinationExists {
            url: store.url().to_string(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Every node of the hierarchy under `node` (itself first, parents before children).
fn collect(
    node: Node,
    out: &mut Vec<Node>,
) -> Pin<Box<dyn Future<Output = Result<(), CopyError>> + Send + '_>> {
    Box::pin(async move {
        match node {
            Node::Array(_) => out.push(node),
            Node::Group(g) => {
                let children = g.children().await?;
                out.push(Node::Group(g.clone()));
                for (name, _) in children {
                    let child = g.open_child(&name).await?;
                    collect(child, out).await?;
                }
            }
        }
        Ok(())
    })
}

/// The destination's spec for the source array `meta` under `layout` (see [`Layout`]).
pub fn destination_spec(meta: &ArrayMetadata, layout: &Layout) -> Result<ArraySpec, String> {
    if meta.dtype().is_none() {
        return Err(format!(
            "data type {} is not supported",
            meta.zarrs_metadata().data_type.name()
        ));
    }
    let sharding = meta.codecs().sharding().map(|s| s.config().clone());
    let (shards, chunks) = match (&layout.shards, &layout.chunks) {
        (None, None) => {
            let grid = meta.shard_or_chunk_shape().map(<[u64]>::to_vec).ok_or(
                "the source has a rectilinear chunk grid; give the chunk (and shard) shape",
            )?;
            match &sharding {
                Some(cfg) => (Some(grid), Some(cfg.chunk_shape.clone())),
                None => (None, Some(grid)),
            }
        }
        (Some(shards), None) => {
            let kept = sharding.as_ref().map(|c| &c.chunk_shape).filter(|inner| {
                inner.len() == shards.len() && shards.iter().zip(*inner).all(|(s, c)| s % c == 0)
            });
            (Some(shards.clone()), Some(kept.unwrap_or(shards).clone()))
        }
        (shards, chunks) => (shards.clone(), chunks.clone()),
    };
    let mut spec = ArraySpec::fields_of(meta);
    match (shards, chunks) {
        (Some(shards), inner) => {
            spec.inner_chunk_shape = Some(inner.unwrap_or_else(|| shards.clone()));
            spec.shard_shape = Some(shards);
            if let Some(cfg) = &sharding {
                spec = spec.index_codecs(cfg.index_codecs.iter());
            }
            let location = layout
                .index_location
                .or(sharding.as_ref().map(|c| c.index_location))
                .unwrap_or(IndexLocation::End);
            spec.index_at_start = location == IndexLocation::Start;
        }
        (None, chunks) => {
            if layout.index_location.is_some() {
                return Err("an index location applies to sharded arrays only".into());
            }
            spec.shard_shape = chunks;
        }
    }
    spec = match &layout.codecs {
        Some(codecs) => spec.codecs(codecs.iter().cloned()),
        None => match &sharding {
            Some(cfg) => spec.codecs(cfg.codecs.iter()),
            None => spec.codecs(meta.codecs().metadata().iter()),
        },
    };
    match layout.zarr_format {
        Some(ZarrFormat::V3) if meta.zarr_format() == ZarrFormat::V2 => {
            spec.chunk_key_encoding = ChunkKeyEncodingSpec::default();
            spec.zarr_format = ZarrFormat::V3;
        }
        Some(ZarrFormat::V2) if meta.zarr_format() == ZarrFormat::V3 => {
            let separator = match meta.chunk_key_encoding() {
                ChunkKeyEncodingSpec::V2 { separator } => *separator,
                ChunkKeyEncodingSpec::Default { .. } => '.',
            };
            spec.chunk_key_encoding = ChunkKeyEncodingSpec::V2 { separator };
            spec.zarr_format = ZarrFormat::V2;
            // v2 has no dimension names
            spec.dimension_names = None;
        }
        _ => {}
    }
    Ok(spec)
}

/// The region of unit `u` (C order over the destination grid) as a positional selection, and
/// its shape.
fn unit_region(shape: &[u64], unit: &[u64], u: u64) -> (Selection, Vec<u64>) {
    let grid: Vec<u64> = shape
        .iter()
        .zip(unit)
        .map(|(&n, &c)| n.div_ceil(c.max(1)).max(1))
        .collect();
    let mut coords = vec![0u64; grid.len()];
    let mut rest = u;
    for d in (0..grid.len()).rev() {
        coords[d] = rest % grid[d];
        rest /= grid[d];
    }
    let mut items = Vec::with_capacity(grid.len());
    let mut region = Vec::with_capacity(grid.len());
    for d in 0..grid.len() {
        let start = coords[d].saturating_mul(unit[d]).min(shape[d]);
        let stop = start.saturating_add(unit[d]).min(shape[d]);
        items.push(SelectionItem::Slice(Slice::new(
            start as i64,
            stop as i64,
            1,
        )));
        region.push(stop - start);
    }
    (Selection::new(items), region)
}

/// Copies one destination shard (or chunk); returns its uncompressed bytes.
async fn copy_unit(job: &ArrayJob, u: u64) -> Result<u64, CopyError> {
    let (sel, shape) = unit_region(job.dst.shape(), &job.unit, u);
    let read = |source| CopyError::Read {
        url: job.src_url.clone(),
        source: Box::new(source),
    };
    let write = |source| CopyError::Write {
        url: job.dst_url.clone(),
        source: Box::new(source),
    };
    let src = job.src.view().get(&sel).map_err(read)?;
    let dst = job.dst.view().get(&sel).map_err(write)?;
    // variable-length elements are copied as values (their bytes are counted)
    match job.src.data_type() {
        crate::DataType::String => {
            let values = src.read_vlen::<String>().await.map_err(read)?;
            dst.write_vlen(&values).await.map_err(write)?;
            return Ok(values.iter().map(|v| v.len() as u64).sum());
        }
        crate::DataType::Bytes => {
            let values = src.read_vlen::<Vec<u8>>().await.map_err(read)?;
            dst.write_vlen(&values).await.map_err(write)?;
            return Ok(values.iter().map(|v| v.len() as u64).sum());
        }
        _ => {}
    }
    let data = src.read_bytes().await.map_err(read)?;
    dst.write_bytes(&data, &shape).await.map_err(write)?;
    Ok(data.len() as u64)
}
