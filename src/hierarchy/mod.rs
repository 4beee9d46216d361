//! Hierarchy: opening and creating groups and arrays, listing children, attributes.
//!
//! Uses both the storage layer ([`crate::store`]) and the format layer
//! ([`crate::metadata`], [`crate::codec`]).

mod consolidated;

use crate::codec::CodecError;
use crate::codec::{IndexLocation, ShardIndex, ShardIndexCodec};
use crate::metadata::{
    ArrayMetadata, ArraySpec, ConsolidatedNodes, DEFAULT_MAX_METADATA_BYTES, GroupMetadata,
    MetadataError, NodeMetadata, ZARR_JSON, ZARRAY, ZATTRS, ZGROUP, ZMETADATA, ZarrFormat,
};
use crate::store::{ByteRange, GetOpts, ObjectVersion, PutMode, Store, StoreError, StoreKey};
use bytes::Bytes;
use consolidated::ConsolidatedView;
pub(crate) use consolidated::holder_documents;
use futures::StreamExt;
use serde_json::{Map, Value};

/// An error opening, creating or updating a node.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HierarchyError {
    /// No `zarr.json` at the node path (opened as Zarr v3 alone).
    #[error("node not found: {url} does not exist")]
    NotFound {
        /// URL of the missing `zarr.json`.
        url: String,
    },
    /// No metadata document of either format at the node path (opened without a format):
    /// neither `zarr.json` nor `.zarray` / `.zgroup`. Says what the path holds.
    #[error("node not found: no zarr.json, .zarray or .zgroup under {url}; {found}")]
    NoNode {
        /// URL of the node path.
        url: String,
        /// What is stored there (a few names, where the store lists), or that nothing is.
        found: String,
    },
    /// Zarr v3 and v2 metadata side by side at one node path (or a v2 array and group).
    #[error("{url}: holds {found} side by side; a node has one format: delete one of them")]
    MixedFormats {
        /// URL of the node path.
        url: String,
        /// The documents found (e.g. "zarr.json and .zarray").
        found: String,
    },
    /// The node is a group where an array was expected, or vice versa.
    #[error("{url}: expected {expected}, found {found}")]
    WrongNodeType {
        /// URL of the `zarr.json`.
        url: String,
        /// Expected node type.
        expected: &'static str,
        /// Found node type.
        found: &'static str,
    },
    /// A node already exists where one is being created.
    #[error("a node already exists at {url}")]
    AlreadyExists {
        /// URL of the existing `zarr.json`.
        url: String,
    },
    /// Objects are stored under a path that holds no node (stale chunks, another
    /// program's files): a node created there would adopt them.
    #[error("{url} holds objects but no zarr.json; overwrite to replace them")]
    NotEmpty {
        /// URL of the path.
        url: String,
    },
    /// A node name is invalid.
    #[error("invalid node name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// The metadata changed concurrently during an update; re-open and retry.
    #[error("concurrent update of {url}; re-open and retry")]
    ConcurrentUpdate {
        /// URL of the `zarr.json`.
        url: String,
    },
    /// A node's metadata was written, but the consolidated metadata of the group holding it
    /// (`url`: its `zarr.json` or `.zmetadata`) could not be refreshed and is now stale:
    /// consolidate again ([`Group::consolidate`], `zarrflow consolidate`).
    #[error(
        "the node was written, but the consolidated metadata in {url} could not be refreshed ({source}); it is stale until consolidated again (`zarrflow consolidate`, Group::consolidate)"
    )]
    ConsolidatedNotRefreshed {
        /// URL of the document holding the consolidated metadata.
        url: String,
        /// Why the refresh failed.
        source: Box<HierarchyError>,
    },
    /// Metadata error.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// Codec error (e.g. a corrupt shard index).
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Storage error.
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for HierarchyError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { url } => HierarchyError::NotFound { url },
            StoreError::AlreadyExists { url } => HierarchyError::AlreadyExists { url },
            StoreError::Precondition { url } => HierarchyError::ConcurrentUpdate { url },
            e => HierarchyError::Store(e),
        }
    }
}

/// Validate a node name (the Zarr v3 specification's rules for node names).
pub fn validate_name(name: &str) -> Result<(), HierarchyError> {
    let bad = |reason| {
        Err(HierarchyError::InvalidName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() {
        return bad("empty");
    }
    if name.contains('/') {
        return bad("contains `/`");
    }
    if name.chars().all(|c| c == '.') {
        return bad("consists only of periods");
    }
    if name.starts_with("__") {
        return bad("starts with `__` (reserved)");
    }
    if name == ZARR_JSON {
        return bad("equals `zarr.json`");
    }
    Ok(())
}

fn meta_key(path: &StoreKey) -> Result<StoreKey, HierarchyError> {
    Ok(path.join(ZARR_JSON)?)
}

/// Node kind, as found when listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An array.
    Array,
    /// A group.
    Group,
}

/// An opened node.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Node {
    /// An array.
    Array(ArrayNode),
    /// A group.
    Group(Group),
}

/// Open the node at `path` (root: [`StoreKey::root`]) of either format, reading at most
/// [`DEFAULT_MAX_METADATA_BYTES`] of each metadata document.
pub async fn open_node(store: &Store, path: &StoreKey) -> Result<Node, HierarchyError> {
    open_node_with_limit(store, path, DEFAULT_MAX_METADATA_BYTES).await
}

/// [`open_node`] reading at most `max_metadata_bytes` of each document: a larger document
/// is [`MetadataError::TooLarge`], refused before more than the limit is read.
pub async fn open_node_with_limit(
    store: &Store,
    path: &StoreKey,
    max_metadata_bytes: u64,
) -> Result<Node, HierarchyError> {
    open_node_as(store, path, max_metadata_bytes, None).await
}

/// A metadata document as read: its bytes and version.
struct Doc {
    bytes: Bytes,
    version: ObjectVersion,
}

/// The document at `key`, `None` when it does not exist.
async fn read_optional(
    store: &Store,
    key: &StoreKey,
    max: u64,
    wanted: bool,
) -> Result<Option<Doc>, HierarchyError> {
    if !wanted {
        return Ok(None);
    }
    match read_metadata(store, key, max).await {
        Ok((bytes, version)) => Ok(Some(Doc { bytes, version })),
        Err(HierarchyError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`open_node_with_limit`] for the Zarr format `format` (`None`: either).
///
/// With the format unknown, `zarr.json`, `.zarray`, `.zgroup` and `.zattrs` are requested
/// concurrently (four GETs, the latency of one — as zarr-python 3 does): a v3 node's
/// `zarr.json` beside v2 documents is [`HierarchyError::MixedFormats`], and a path holding
/// none is [`HierarchyError::NoNode`], which lists a few of the names stored there (one
/// LIST). `Some(ZarrFormat::V3)` reads `zarr.json` alone (one GET; a missing one is
/// [`HierarchyError::NotFound`]); `Some(ZarrFormat::V2)` the three v2 documents.
///
/// A v2 group's `.zmetadata` (consolidated metadata) is read after its `.zgroup` is found:
/// one more GET. A group holding consolidated metadata (that, or a v3 `zarr.json` with an
/// inline block) answers [`Group::children`] and [`Group::open_child`] from it, for its
/// whole hierarchy, without a request.
pub async fn open_node_as(
    store: &Store,
    path: &StoreKey,
    max_metadata_bytes: u64,
    format: Option<ZarrFormat>,
) -> Result<Node, HierarchyError> {
    open_node_inner(store, path, max_metadata_bytes, format, true).await
}

/// A group at `path` in `format`, read from its documents (no ancestor's consolidated
/// metadata), reading `.zmetadata` for v2.
async fn open_group_fresh(
    store: &Store,
    path: &StoreKey,
    format: ZarrFormat,
) -> Result<Group, HierarchyError> {
    match open_node_inner(store, path, DEFAULT_MAX_METADATA_BYTES, Some(format), true).await? {
        Node::Group(g) => Ok(g),
        Node::Array(a) => Err(HierarchyError::WrongNodeType {
            url: store.url_of(&a.own_document()?),
            expected: "a group",
            found: "an array",
        }),
    }
}

/// [`open_node_as`]; `zmetadata`: whether a v2 group's `.zmetadata` is read.
async fn open_node_inner(
    store: &Store,
    path: &StoreKey,
    max_metadata_bytes: u64,
    format: Option<ZarrFormat>,
    zmetadata: bool,
) -> Result<Node, HierarchyError> {
    let max = max_metadata_bytes;
    let (v3, v2) = (
        format != Some(ZarrFormat::V2),
        format != Some(ZarrFormat::V3),
    );
    let keys = [
        path.join(ZARR_JSON)?,
        path.join(ZARRAY)?,
        path.join(ZGROUP)?,
        path.join(ZATTRS)?,
    ];
    let (json, zarray, zgroup, zattrs) = futures::join!(
        read_optional(store, &keys[0], max, v3),
        read_optional(store, &keys[1], max, v2),
        read_optional(store, &keys[2], max, v2),
        read_optional(store, &keys[3], max, v2),
    );
    let (json, zarray, zgroup) = (json?, zarray?, zgroup?);
    let found: Vec<&str> = [(&json, ZARR_JSON), (&zarray, ZARRAY), (&zgroup, ZGROUP)]
        .into_iter()
        .filter(|(d, _)| d.is_some())
        .map(|(_, n)| n)
        .collect();
    if found.len() > 1 {
        return Err(HierarchyError::MixedFormats {
            url: store.url_of(path),
            found: found.join(" and "),
        });
    }
    let node = |meta: NodeMetadata,
                version: ObjectVersion,
                attrs_version,
                holder_version: Option<ObjectVersion>| match meta {
        NodeMetadata::Array(meta) => Node::Array(ArrayNode {
            store: store.clone(),
            path: path.clone(),
            meta: *meta,
            version,
            attrs_version,
            view: None,
            unread: false,
        }),
        NodeMetadata::Group(meta) => {
            let view = meta.consolidated.as_ref().map(|_| {
                ConsolidatedView::holder(path, &meta, holder_version.unwrap_or(version.clone()))
            });
            Node::Group(Group {
                store: store.clone(),
                path: path.clone(),
                meta,
                version,
                attrs_version,
                view,
                unread: false,
            })
        }
    };
    if let Some(doc) = json {
        let meta = NodeMetadata::parse(&doc.bytes, &store.url_of(&keys[0]))?;
        return Ok(node(meta, doc.version, None, None));
    }
    let v2_doc = zarray.map(|d| (true, d)).or(zgroup.map(|d| (false, d)));
    let Some((is_array, doc)) = v2_doc else {
        if !v2 {
            return Err(HierarchyError::NotFound {
                url: store.url_of(&keys[0]),
            });
        }
        return Err(HierarchyError::NoNode {
            url: store.url_of(path),
            found: describe_prefix(store, path).await,
        });
    };
    let zattrs = zattrs?;
    let attrs_url = store.url_of(&keys[3]);
    let attrs = zattrs.as_ref().map(|d| &d.bytes[..]);
    let mut meta = if is_array {
        let url = store.url_of(&keys[1]);
        NodeMetadata::Array(Box::new(crate::metadata::v2::parse_array(
            &doc.bytes, attrs, &url, &attrs_url,
        )?))
    } else {
        let url = store.url_of(&keys[2]);
        NodeMetadata::Group(crate::metadata::v2::parse_group(
            &doc.bytes, attrs, &url, &attrs_url,
        )?)
    };
    let mut holder_version = None;
    if let (NodeMetadata::Group(g), true) = (&mut meta, zmetadata) {
        let key = path.join(ZMETADATA)?;
        if let Some(zm) = read_optional(store, &key, max, true).await? {
            let nodes =
                crate::metadata::consolidated::parse_zmetadata(&zm.bytes, &store.url_of(&key))?;
            g.consolidated = Some(nodes);
            holder_version = Some(zm.version);
        }
    }
    Ok(node(
        meta,
        doc.version,
        zattrs.map(|d| d.version),
        holder_version,
    ))
}

/// What is stored under `path`, for [`HierarchyError::NoNode`]: up to eight names (with
/// `/` for prefixes), nothing, or that the store could not list.
async fn describe_prefix(store: &Store, path: &StoreKey) -> String {
    const SHOWN: usize = 8;
    match store.list_dir(path).await {
        Ok(listing) => {
            let names: Vec<String> = listing
                .objects
                .iter()
                .cloned()
                .chain(listing.prefixes.iter().map(|p| format!("{p}/")))
                .collect();
            if names.is_empty() {
                return "nothing is stored there".into();
            }
            let more = names.len().saturating_sub(SHOWN);
            let mut text = format!(
                "found {}",
                names
                    .iter()
                    .take(SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if more > 0 {
                text.push_str(&format!(" and {more} more"));
            }
            text
        }
        Err(e) => format!("the store could not list it ({e})"),
    }
}

/// The documents that make a node of either format (`.zattrs` goes with them).
const NODE_DOCUMENTS: [&str; 4] = [ZARR_JSON, ZARRAY, ZGROUP, ZATTRS];

/// Deletes the node at `path` and everything stored under it, metadata first: the node's own
/// metadata documents (`zarr.json`, or `.zarray` / `.zgroup` / `.zattrs`), then every one
/// below it, then the rest (on the local filesystem the
/// emptied directories too, so a new node's keys can be files where old ones were
/// directories). An interrupted deletion leaves no node that reads with missing chunks: the
/// nodes are gone before their data is.
pub(crate) async fn delete_node(store: &Store, path: &StoreKey) -> Result<(), HierarchyError> {
    for name in NODE_DOCUMENTS {
        store.delete(&path.join(name)?).await?;
    }
    for key in store.list_prefix(path).await? {
        if key.name().is_some_and(|n| NODE_DOCUMENTS.contains(&n)) {
            store.delete(&key).await?;
        }
    }
    store.delete_prefix(path).await?;
    Ok(())
}

/// Writes the `zarr.json` of a node at `path` whose other objects (a copy's chunks) are
/// already written: create-if-absent where the store has it, and no check of what is under
/// `path`. The last step of a copy, so that an interrupted one leaves no node.
pub(crate) async fn write_metadata_last(
    store: &Store,
    path: &StoreKey,
    mut docs: Vec<(&'static str, Vec<u8>)>,
) -> Result<ObjectVersion, HierarchyError> {
    let Some((name, own)) = docs.pop() else {
        return Ok(ObjectVersion::default());
    };
    // a v2 node's `.zattrs` first: the node exists once its own document does
    for (other, bytes) in docs {
        store.put(&path.join(other)?, Bytes::from(bytes)).await?;
    }
    let key = &path.join(name)?;
    Ok(store
        .put_opts_or_overwrite(key, Bytes::from(own), PutMode::Create)
        .await?)
}

/// Reads the metadata document at `key`, at most `max` bytes of it, with its version.
///
/// One request: a range request for the first `max + 1` bytes, whose answer also gives the
/// object's size, so a larger document is refused ([`MetadataError::TooLarge`]) having read
/// no more than that. When the range fails (a server without range requests answers 200
/// with the whole body, which `object_store` refuses; a range starting at 0 is outside an
/// empty object), a HEAD gives the size: an empty document is
/// [`MetadataError::MalformedJson`], a larger one `TooLarge`, and otherwise a plain GET
/// reads it, refused from its announced length if that is over `max`.
async fn read_metadata(
    store: &Store,
    key: &StoreKey,
    max: u64,
) -> Result<(Bytes, ObjectVersion), HierarchyError> {
    let url = || store.url_of(key);
    let too_large = |size: u64| MetadataError::TooLarge {
        key: url(),
        size,
        max,
    };
    let range = GetOpts::default().with_range(ByteRange::Bounded(0..max.saturating_add(1)));
    match store.get_opts(key, range).await {
        Ok(got) if got.object_size > max => Err(too_large(got.object_size).into()),
        Ok(got) => Ok((got.bytes, got.version)),
        Err(e @ StoreError::Backend { .. }) => match store.head(key).await {
            Ok(info) if info.size == 0 => Err(MetadataError::MalformedJson {
                key: url(),
                reason: "the document is empty".into(),
            }
            .into()),
            Ok(info) if info.size > max => Err(too_large(info.size).into()),
            Ok(_) => match store
                .get_opts(key, GetOpts::default().with_max_size(max))
                .await
            {
                Ok(got) => Ok((got.bytes, got.version)),
                Err(StoreError::TooLarge { size, .. }) => Err(too_large(size).into()),
                Err(e) => Err(e.into()),
            },
            Err(_) => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
}

/// Checks a document about to be written against what [`open_node`] reads: at most
/// [`DEFAULT_MAX_METADATA_BYTES`] (nesting is checked when the metadata is built).
fn check_writable(json: &[u8], store: &Store, key: &StoreKey) -> Result<(), HierarchyError> {
    if json.len() as u64 > DEFAULT_MAX_METADATA_BYTES {
        return Err(MetadataError::TooLarge {
            key: store.url_of(key),
            size: json.len() as u64,
            max: DEFAULT_MAX_METADATA_BYTES,
        }
        .into());
    }
    Ok(())
}

/// Refuses attributes nested deeper than a document can hold, before they are serialised
/// (serialising recurses through them).
fn check_attributes(attributes: &Map<String, Value>) -> Result<(), HierarchyError> {
    for v in attributes.values() {
        crate::metadata::limits::check_nesting(v, "attributes", None)?;
    }
    Ok(())
}

/// Writes the metadata documents of a new node at `path` (`docs`, the node's own document
/// last: see [`ArrayMetadata::documents`]).
///
/// With `overwrite`, everything stored under `path` (the old node's metadata, chunks and
/// children) is deleted first ([`delete_node`]: metadata before data), so nothing of it can
/// be read through the new node. Without, an existing node document (`zarr.json`,
/// `.zarray` or `.zgroup`) is [`HierarchyError::AlreadyExists`] (decided atomically by a
/// create-if-absent PUT where the store has one), and objects under `path` without one
/// are [`HierarchyError::NotEmpty`]. Returns the versions of the node's own document and
/// of `.zattrs` (when written).
async fn write_new(
    store: &Store,
    path: &StoreKey,
    mut docs: Vec<(&'static str, Vec<u8>)>,
    overwrite: bool,
) -> Result<(ObjectVersion, Option<ObjectVersion>), HierarchyError> {
    for (name, json) in &docs {
        check_writable(json, store, &path.join(name)?)?;
    }
    let Some((name, own)) = docs.pop() else {
        return Ok((ObjectVersion::default(), None));
    };
    let key = &path.join(name)?;
    let bytes = Bytes::from(own);
    let version = if overwrite {
        delete_node(store, path).await?;
        store.put(key, bytes).await?
    } else {
        if !store.is_empty_prefix(path).await? {
            let mut existing = None;
            for doc in [ZARR_JSON, ZARRAY, ZGROUP] {
                let k = path.join(doc)?;
                match store.head(&k).await {
                    Ok(_) => {
                        existing = Some(k);
                        break;
                    }
                    Err(StoreError::NotFound { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            return Err(match existing {
                Some(k) => HierarchyError::AlreadyExists {
                    url: store.url_of(&k),
                },
                None => HierarchyError::NotEmpty {
                    url: store.url_of(path),
                },
            });
        }
        store
            .put_opts_or_overwrite(key, bytes, PutMode::Create)
            .await?
    };
    // a v2 node's `.zattrs` after its own document (which decided the creation)
    let mut attrs_version = None;
    for (other, json) in docs {
        attrs_version = Some(store.put(&path.join(other)?, Bytes::from(json)).await?);
    }
    Ok((version, attrs_version))
}

/// Writes the attributes of a v2 node to `.zattrs`: conditionally on the version read
/// (`None`: the node had no `.zattrs`, created if absent), where the backend supports it.
async fn write_zattrs(
    store: &Store,
    path: &StoreKey,
    attributes: &Map<String, Value>,
    version: Option<&ObjectVersion>,
) -> Result<ObjectVersion, HierarchyError> {
    let json = serde_json::to_vec_pretty(attributes).unwrap_or_default();
    let mode = match version {
        Some(v) => PutMode::Update(v.clone()),
        None => PutMode::Create,
    };
    write_conditional(store, &path.join(ZATTRS)?, json, mode).await
}

/// Write updated metadata: conditional on the version read when the backend supports it.
async fn write_update(
    store: &Store,
    key: &StoreKey,
    json: Vec<u8>,
    version: &ObjectVersion,
) -> Result<ObjectVersion, HierarchyError> {
    write_conditional(store, key, json, PutMode::Update(version.clone())).await
}

/// Writes a metadata document with `mode` (where the backend supports conditions), after
/// checking that it would open again; a document created meanwhile by another writer is
/// [`HierarchyError::ConcurrentUpdate`].
async fn write_conditional(
    store: &Store,
    key: &StoreKey,
    json: Vec<u8>,
    mode: PutMode,
) -> Result<ObjectVersion, HierarchyError> {
    check_writable(&json, store, key)?;
    match store
        .put_opts_or_overwrite(key, Bytes::from(json), mode)
        .await
    {
        Err(StoreError::AlreadyExists { url }) => Err(HierarchyError::ConcurrentUpdate { url }),
        r => Ok(r?),
    }
}

/// An opened group.
#[derive(Debug, Clone)]
pub struct Group {
    store: Store,
    path: StoreKey,
    meta: GroupMetadata,
    version: ObjectVersion,
    /// The version of a v2 group's `.zattrs` (`None`: absent, or a v3 group).
    attrs_version: Option<ObjectVersion>,
    /// The consolidated metadata the group answers from: its own, or the ancestor's it was
    /// opened through.
    view: Option<ConsolidatedView>,
    /// Opened from an ancestor's consolidated metadata: its own documents were not read
    /// (their versions are unknown; a write reads them first).
    unread: bool,
}

impl Group {
    /// Open the group at `path`.
    pub async fn open(store: &Store, path: &StoreKey) -> Result<Self, HierarchyError> {
        Self::open_with_limit(store, path, DEFAULT_MAX_METADATA_BYTES).await
    }

    /// [`Group::open`] reading at most `max_metadata_bytes` of its `zarr.json` (groups
    /// holding inline consolidated metadata for many nodes may need more than the default).
    pub async fn open_with_limit(
        store: &Store,
        path: &StoreKey,
        max_metadata_bytes: u64,
    ) -> Result<Self, HierarchyError> {
        match open_node_with_limit(store, path, max_metadata_bytes).await? {
            Node::Group(g) => Ok(g),
            Node::Array(a) => Err(HierarchyError::WrongNodeType {
                url: store.url_of(&a.own_document()?),
                expected: "a group",
                found: "an array",
            }),
        }
    }

    /// Create a group at `path`. A node there is [`HierarchyError::AlreadyExists`] and other
    /// objects there are [`HierarchyError::NotEmpty`], unless `overwrite`, which deletes
    /// everything under `path` first.
    pub async fn create(
        store: &Store,
        path: &StoreKey,
        attributes: Map<String, Value>,
        overwrite: bool,
    ) -> Result<Self, HierarchyError> {
        Self::create_as(store, path, attributes, overwrite, ZarrFormat::V3).await
    }

    /// [`Group::create`] in Zarr format `format` (v2: `.zgroup`, and `.zattrs` when there
    /// are attributes).
    pub async fn create_as(
        store: &Store,
        path: &StoreKey,
        attributes: Map<String, Value>,
        overwrite: bool,
        format: ZarrFormat,
    ) -> Result<Self, HierarchyError> {
        check_attributes(&attributes)?;
        let mut meta = GroupMetadata::new(attributes);
        meta.zarr_format = format;
        let (version, attrs_version) = write_new(store, path, meta.documents(), overwrite).await?;
        Ok(Group {
            store: store.clone(),
            path: path.clone(),
            meta,
            version,
            attrs_version,
            view: None,
            unread: false,
        })
    }

    /// [`Group::open_with_limit`] for Zarr format `format` (`None`: either; see
    /// [`open_node_as`] for the requests each makes).
    pub async fn open_as(
        store: &Store,
        path: &StoreKey,
        max_metadata_bytes: u64,
        format: Option<ZarrFormat>,
    ) -> Result<Self, HierarchyError> {
        match open_node_as(store, path, max_metadata_bytes, format).await? {
            Node::Group(g) => Ok(g),
            Node::Array(a) => Err(HierarchyError::WrongNodeType {
                url: store.url_of(&a.own_document()?),
                expected: "a group",
                found: "an array",
            }),
        }
    }

    /// The same group answering [`Group::children`] and [`Group::open_child`] from the
    /// store (listing, reading each child's documents), not from consolidated metadata: for
    /// a hierarchy changed since it was consolidated by a writer that did not refresh it.
    pub fn without_consolidated(mut self) -> Self {
        self.view = None;
        self
    }

    /// Whether the group answers from consolidated metadata (its own, or that of the
    /// ancestor it was opened through).
    pub fn uses_consolidated(&self) -> bool {
        self.view.is_some()
    }

    /// Consolidates the metadata of the hierarchy under the group, as zarr-python's
    /// `zarr.consolidate_metadata`: reads every node below it from the store (listing each
    /// group, never from older consolidated metadata) and writes their metadata into the
    /// group's `zarr.json` (v3: the inline `consolidated_metadata` block) or `.zmetadata`
    /// (v2), replacing what was there; conditionally on the version read where the store
    /// checks versions. Returns the number of nodes consolidated. From then on the group
    /// answers [`Group::children`] and [`Group::open_child`] from it, and metadata writes
    /// through the nodes opened from it refresh it.
    ///
    /// A v2 group's `.zmetadata` is not read (a corrupt one is replaced) and is written
    /// unconditionally: the last consolidation wins. A v3 group's `zarr.json` is read again
    /// and rewritten conditionally on that version.
    pub async fn consolidate(&mut self) -> Result<usize, HierarchyError> {
        let format = self.meta.zarr_format;
        // the group as stored now (its own document's content and version)
        let fresh = match open_node_inner(
            &self.store,
            &self.path,
            DEFAULT_MAX_METADATA_BYTES,
            Some(format),
            false,
        )
        .await?
        {
            Node::Group(g) => g,
            Node::Array(a) => {
                return Err(HierarchyError::WrongNodeType {
                    url: self.store.url_of(&a.own_document()?),
                    expected: "a group",
                    found: "an array",
                });
            }
        };
        let mut nodes = ConsolidatedNodes::new();
        collect_from_store(&fresh, String::new(), &mut nodes).await?;
        let mode = match format {
            ZarrFormat::V2 => PutMode::Overwrite,
            ZarrFormat::V3 => PutMode::Update(fresh.version.clone()),
        };
        let n = nodes.len();
        let (meta, version) =
            consolidated::write_consolidated(&self.store, &fresh.meta, &self.path, nodes, mode)
                .await?;
        if format == ZarrFormat::V3 {
            self.version = version.clone();
        } else {
            self.version = fresh.version.clone();
        }
        self.attrs_version = fresh.attrs_version.clone();
        self.view = Some(ConsolidatedView::holder(&self.path, &meta, version));
        self.meta = meta;
        self.unread = false;
        Ok(n)
    }

    /// The group's path.
    pub fn path(&self) -> &StoreKey {
        &self.path
    }
    /// The metadata.
    pub fn metadata(&self) -> &GroupMetadata {
        &self.meta
    }
    /// User attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        &self.meta.attributes
    }
    /// The consolidated metadata of a descendant (relative path), when the group's own
    /// document carries consolidated metadata (a v3 inline block, a v2 `.zmetadata`), as it
    /// was read or last written through this handle (refreshes made through nodes opened
    /// from it are seen by [`Group::children`] and [`Group::open_child`], and by a new
    /// [`Group::open`]).
    pub fn consolidated(&self, relative_path: &str) -> Option<&NodeMetadata> {
        self.meta.consolidated.as_ref()?.get(relative_path)
    }

    /// Replace the attributes with `f(old)` and write `zarr.json` (conditionally on the version
    /// read, where the backend supports it).
    ///
    /// In a hierarchy read through consolidated metadata the consolidated copy is refreshed
    /// too (see [`Group::create_group`]).
    pub async fn update_attributes(
        &mut self,
        f: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<(), HierarchyError> {
        if self.unread {
            let fresh = open_group_fresh(&self.store, &self.path, self.meta.zarr_format).await?;
            self.meta = fresh.meta;
            self.version = fresh.version;
            self.attrs_version = fresh.attrs_version;
            self.unread = false;
        }
        let mut meta = self.meta.clone();
        f(&mut meta.attributes);
        check_attributes(&meta.attributes)?;
        if let Some(view) = self.view.as_ref().filter(|v| v.is_holder())
            && meta.zarr_format == ZarrFormat::V3
        {
            // the holder's zarr.json: with the consolidated block as it stands now
            let (meta, version) = view
                .write_holder_v3(&self.store, meta.attributes.clone())
                .await?;
            self.meta = meta;
            self.version = version;
            return Ok(());
        }
        if meta.zarr_format == ZarrFormat::V2 {
            let v = write_zattrs(
                &self.store,
                &self.path,
                &meta.attributes,
                self.attrs_version.as_ref(),
            )
            .await?;
            self.attrs_version = Some(v);
        } else {
            let key = meta_key(&self.path)?;
            self.version = write_update(&self.store, &key, meta.to_json(), &self.version).await?;
        }
        self.meta = meta;
        if let Some(view) = &self.view {
            view.refresh(&self.store, NodeMetadata::Group(self.meta.clone()))
                .await?;
        }
        Ok(())
    }

    /// The children: every sub-directory holding a node of the group's format (`zarr.json`
    /// for v3, `.zarray` or `.zgroup` for v2), sorted by name (names starting with `__` are
    /// reserved and skipped; a sub-directory without one is not a node).
    /// Names are the stored names, whatever their characters (`a b`, `x#1`, `100%`); a name
    /// that is not a valid key (a backslash, a control character) is
    /// [`HierarchyError::InvalidName`], and a child whose `zarr.json` cannot be read or
    /// parsed is an error, never skipped.
    ///
    /// A group read through consolidated metadata ([`Group::uses_consolidated`]) lists the
    /// children it records instead, without a request: nodes added since by a writer that
    /// did not refresh it are not seen ([`Group::without_consolidated`] lists the store).
    pub async fn children(&self) -> Result<Vec<(String, NodeKind)>, HierarchyError> {
        if let Some(view) = &self.view {
            return Ok(view.children().await);
        }
        Ok(self
            .children_from_store()
            .await?
            .into_iter()
            .map(|(name, node)| {
                let kind = match node {
                    Node::Array(_) => NodeKind::Array,
                    Node::Group(_) => NodeKind::Group,
                };
                (name, kind)
            })
            .collect())
    }

    /// The children found by listing the store, opened from their own documents.
    async fn children_from_store(&self) -> Result<Vec<(String, Node)>, HierarchyError> {
        let listing = self.store.list_dir(&self.path).await?;
        let candidates: Vec<(String, StoreKey)> = listing
            .prefixes
            .into_iter()
            .filter(|name| !name.starts_with("__"))
            .map(|name| match self.path.join(&name) {
                Ok(key) => Ok((name, key)),
                Err(_) => Err(HierarchyError::InvalidName {
                    name,
                    reason: "not a valid store key (a backslash or a control character)",
                }),
            })
            .collect::<Result<_, _>>()?;
        // open the candidates concurrently (bounded by the store's concurrency option), in
        // the group's own format (a hierarchy has one)
        let format = Some(self.meta.zarr_format);
        let opened: Vec<(String, Result<Node, HierarchyError>)> = futures::stream::iter(candidates)
            .map(|(name, child)| async move {
                let node = open_node_inner(
                    &self.store,
                    &child,
                    DEFAULT_MAX_METADATA_BYTES,
                    format,
                    false,
                );
                (name, node.await)
            })
            .buffered(self.store.options().concurrency.max(1))
            .collect()
            .await;
        let mut out = Vec::new();
        for (name, res) in opened {
            match res {
                Ok(node) => out.push((name, node)),
                Err(HierarchyError::NotFound { .. } | HierarchyError::NoNode { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    fn child_path(&self, name: &str) -> Result<StoreKey, HierarchyError> {
        validate_name(name)?;
        Ok(self.path.join(name)?)
    }

    /// Create a child group (in the group's own format).
    ///
    /// In a hierarchy read through consolidated metadata (the group holds it, or was opened
    /// through an ancestor holding it), the new node's entry is added to it: the holder's
    /// `zarr.json` (or `.zmetadata`) is rewritten, conditionally on the version last read or
    /// written (read again and retried when another writer changed it). If that fails the
    /// node exists but the consolidated copy is stale:
    /// [`HierarchyError::ConsolidatedNotRefreshed`].
    pub async fn create_group(
        &self,
        name: &str,
        attributes: Map<String, Value>,
    ) -> Result<Group, HierarchyError> {
        let path = self.child_path(name)?;
        let mut g =
            Group::create_as(&self.store, &path, attributes, false, self.meta.zarr_format).await?;
        if let Some(view) = &self.view {
            let child = view.child(name);
            child
                .refresh(&self.store, NodeMetadata::Group(g.meta.clone()))
                .await?;
            g.view = Some(child);
        }
        Ok(g)
    }

    /// The key of the group's own metadata document (`zarr.json` or `.zgroup`).
    pub fn own_document(&self) -> Result<StoreKey, HierarchyError> {
        Ok(self.path.join(match self.meta.zarr_format {
            ZarrFormat::V3 => ZARR_JSON,
            ZarrFormat::V2 => ZGROUP,
        })?)
    }

    /// Create a child array (refreshing consolidated metadata as [`Group::create_group`]).
    pub async fn create_array(
        &self,
        name: &str,
        spec: &ArraySpec,
    ) -> Result<ArrayNode, HierarchyError> {
        let mut a = ArrayNode::create(&self.store, &self.child_path(name)?, spec, false).await?;
        if let Some(view) = &self.view {
            let child = view.child(name);
            child
                .refresh(&self.store, NodeMetadata::Array(Box::new(a.meta.clone())))
                .await?;
            a.view = Some(child);
        }
        Ok(a)
    }

    /// Open a child node: from the consolidated metadata when the group reads through it
    /// and it records the child (no request), else from the child's own documents.
    pub async fn open_child(&self, name: &str) -> Result<Node, HierarchyError> {
        let path = self.child_path(name)?;
        if let Some(view) = &self.view
            && let Some(node) = view.open_child(&self.store, &path, name).await
        {
            return Ok(node);
        }
        open_node(&self.store, &path).await
    }
}

/// Writes or refreshes the consolidated metadata of the group at `path`
/// ([`Group::consolidate`]), opening the group without reading consolidated metadata it
/// may hold (so that a corrupt `.zmetadata` is replaced, not an error). Returns the group
/// and the number of nodes consolidated.
pub async fn consolidate_metadata(
    store: &Store,
    path: &StoreKey,
) -> Result<(Group, usize), HierarchyError> {
    let mut group =
        match open_node_inner(store, path, DEFAULT_MAX_METADATA_BYTES, None, false).await? {
            Node::Group(g) => g,
            Node::Array(a) => {
                return Err(HierarchyError::WrongNodeType {
                    url: store.url_of(&a.own_document()?),
                    expected: "a group",
                    found: "an array",
                });
            }
        };
    let n = group.consolidate().await?;
    Ok((group, n))
}

/// Every node under `group` by path relative to the group it was started from (`prefix`:
/// `group`'s own, `""` at the start), read from the store (listing, each node's own
/// documents), parents before children.
fn collect_from_store<'a>(
    group: &'a Group,
    prefix: String,
    out: &'a mut ConsolidatedNodes,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), HierarchyError>> + Send + 'a>> {
    Box::pin(async move {
        for (name, node) in group.children_from_store().await? {
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            match node {
                Node::Array(a) => {
                    out.insert(rel, NodeMetadata::Array(Box::new(a.meta)));
                }
                Node::Group(g) => {
                    let mut meta = g.meta.clone();
                    meta.consolidated = None;
                    out.insert(rel.clone(), NodeMetadata::Group(meta));
                    collect_from_store(&g, rel, out).await?;
                }
            }
        }
        Ok(())
    })
}

/// An opened array: its store, path and metadata. Reading and writing data is the job of the
/// read/write path; this type supplies keys and codecs.
#[derive(Debug, Clone)]
pub struct ArrayNode {
    store: Store,
    path: StoreKey,
    meta: ArrayMetadata,
    version: ObjectVersion,
    /// The version of a v2 array's `.zattrs` (`None`: absent, or a v3 array).
    attrs_version: Option<ObjectVersion>,
    /// The consolidated metadata the array was opened through (a write refreshes it).
    view: Option<ConsolidatedView>,
    /// Opened from consolidated metadata: its own documents were not read.
    unread: bool,
}

impl ArrayNode {
    /// Open the array at `path`.
    pub async fn open(store: &Store, path: &StoreKey) -> Result<Self, HierarchyError> {
        Self::open_with_limit(store, path, DEFAULT_MAX_METADATA_BYTES).await
    }

    /// [`ArrayNode::open`] reading at most `max_metadata_bytes` of each metadata document.
    pub async fn open_with_limit(
        store: &Store,
        path: &StoreKey,
        max_metadata_bytes: u64,
    ) -> Result<Self, HierarchyError> {
        Self::open_as(store, path, max_metadata_bytes, None).await
    }

    /// [`ArrayNode::open_with_limit`] for Zarr format `format` (`None`: either; see
    /// [`open_node_as`] for the requests each makes).
    pub async fn open_as(
        store: &Store,
        path: &StoreKey,
        max_metadata_bytes: u64,
        format: Option<ZarrFormat>,
    ) -> Result<Self, HierarchyError> {
        match open_node_inner(store, path, max_metadata_bytes, format, false).await? {
            Node::Array(a) => Ok(a),
            Node::Group(g) => Err(HierarchyError::WrongNodeType {
                url: store.url_of(&g.own_document()?),
                expected: "an array",
                found: "a group",
            }),
        }
    }

    /// Create an array at `path` from `spec`. A node there is
    /// [`HierarchyError::AlreadyExists`] and other objects there are
    /// [`HierarchyError::NotEmpty`], unless `overwrite`, which deletes everything under
    /// `path` first (no old chunk can be read through the new array).
    pub async fn create(
        store: &Store,
        path: &StoreKey,
        spec: &ArraySpec,
        overwrite: bool,
    ) -> Result<Self, HierarchyError> {
        let meta = spec.build()?;
        let (version, attrs_version) = write_new(store, path, meta.documents()?, overwrite).await?;
        Ok(ArrayNode {
            store: store.clone(),
            path: path.clone(),
            meta,
            version,
            attrs_version,
            view: None,
            unread: false,
        })
    }

    /// The array `spec` describes at `path`, with nothing written: a copy writes the chunks
    /// through it first and its `zarr.json` last ([`write_metadata_last`]).
    pub(crate) fn unwritten(
        store: &Store,
        path: &StoreKey,
        spec: &ArraySpec,
    ) -> Result<Self, HierarchyError> {
        Ok(ArrayNode {
            store: store.clone(),
            path: path.clone(),
            meta: spec.build()?,
            version: ObjectVersion::default(),
            attrs_version: None,
            view: None,
            unread: false,
        })
    }

    /// The array's path.
    pub fn path(&self) -> &StoreKey {
        &self.path
    }
    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }
    /// The metadata.
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.meta
    }
    /// The same node with checksum verification on decode turned on or off.
    pub fn with_verify_checksums(mut self, on: bool) -> Self {
        self.meta = self.meta.with_verify_checksums(on);
        self
    }
    /// The same node writing shards with their inner chunks in `order` (see
    /// [`ArrayOptions::with_inner_chunk_order`](crate::array::ArrayOptions::with_inner_chunk_order)).
    pub fn with_inner_chunk_order(
        mut self,
        order: crate::codec::sharding::InnerChunkOrder,
    ) -> Self {
        self.meta = self.meta.with_inner_chunk_order(order);
        self
    }
    /// User attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        self.meta.attributes()
    }

    /// The key of the array's own metadata document (`zarr.json` or `.zarray`).
    pub fn own_document(&self) -> Result<StoreKey, HierarchyError> {
        Ok(self.path.join(match self.meta.zarr_format() {
            ZarrFormat::V3 => ZARR_JSON,
            ZarrFormat::V2 => ZARRAY,
        })?)
    }

    /// The store key of chunk (shard) `coords`.
    pub fn chunk_key(&self, coords: &[u64]) -> Result<StoreKey, HierarchyError> {
        Ok(self.path.join(&self.meta.chunk_key(coords))?)
    }

    /// Replace the attributes with `f(old)` and write `zarr.json` (conditionally where
    /// supported). An array opened through consolidated metadata reads its own documents
    /// first and refreshes the consolidated copy after (see [`Group::create_group`]).
    pub async fn update_attributes(
        &mut self,
        f: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<(), HierarchyError> {
        if self.unread {
            let fresh = ArrayNode::open_as(
                &self.store,
                &self.path,
                DEFAULT_MAX_METADATA_BYTES,
                Some(self.meta.zarr_format()),
            )
            .await?;
            let verify = self.meta.codecs().verify_checksums();
            let order = self.meta.codecs().inner_chunk_order();
            self.meta = fresh
                .meta
                .with_verify_checksums(verify)
                .with_inner_chunk_order(order);
            self.version = fresh.version;
            self.attrs_version = fresh.attrs_version;
            self.unread = false;
        }
        let mut meta = self.meta.clone();
        let mut attrs = meta.attributes().clone();
        f(&mut attrs);
        check_attributes(&attrs)?;
        meta.set_attributes(attrs);
        if meta.zarr_format() == ZarrFormat::V2 {
            let v = write_zattrs(
                &self.store,
                &self.path,
                meta.attributes(),
                self.attrs_version.as_ref(),
            )
            .await?;
            self.attrs_version = Some(v);
        } else {
            let key = meta_key(&self.path)?;
            self.version = write_update(&self.store, &key, meta.to_json(), &self.version).await?;
        }
        self.meta = meta;
        if let Some(view) = &self.view {
            view.refresh(
                &self.store,
                NodeMetadata::Array(Box::new(self.meta.clone())),
            )
            .await?;
        }
        Ok(())
    }
}

/// Read and validate the index of the shard at `key` with one request: a suffix read for an
/// index at the end, a prefix read for an index at the start. `None` when the shard does not
/// exist (all its inner chunks read as the fill value).
pub async fn read_shard_index(
    store: &Store,
    key: &StoreKey,
    codec: &ShardIndexCodec,
) -> Result<Option<ShardIndex>, HierarchyError> {
    Ok(read_shard_index_versioned(store, key, codec)
        .await?
        .map(|read| read.index))
}

/// A shard index with the version and size of the shard it was read from.
#[derive(Debug, Clone)]
pub struct ShardIndexRead {
    /// The validated index.
    pub index: ShardIndex,
    /// The version of the shard the index came from (read inner chunks of the same version
    /// with [`Store::get_ranges_of_version`]).
    pub version: ObjectVersion,
    /// The shard's size in bytes.
    pub shard_size: u64,
}

/// [`read_shard_index`] with the version and size of the shard the index was read from (one
/// suffix request for an index at the end — HEAD + a bounded range where the store refuses
/// suffix requests — or one range request for an index at the start).
pub async fn read_shard_index_versioned(
    store: &Store,
    key: &StoreKey,
    codec: &ShardIndexCodec,
) -> Result<Option<ShardIndexRead>, HierarchyError> {
    let n = codec.encoded_size();
    let read = match codec.location() {
        IndexLocation::End => store.get_suffix(key, n).await,
        IndexLocation::Start => store
            .get_range_with_size(key, 0..n)
            .await
            .or_else(|e| match e {
                // a shard shorter than its index: report it as such
                StoreError::ShortRead { got, .. } => Ok(crate::store::RangeRead {
                    bytes: Bytes::new(),
                    object_size: got,
                    version: Default::default(),
                }),
                e => Err(e),
            }),
    };
    let read = match read {
        Ok(r) => r,
        Err(StoreError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let index = codec.decode(&read.bytes, read.object_size, key.as_str())?;
    Ok(Some(ShardIndexRead {
        index,
        version: read.version,
        shard_size: read.object_size,
    }))
}
