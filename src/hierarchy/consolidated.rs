//! Opening and writing a hierarchy through its consolidated metadata (see
//! [`crate::metadata::consolidated`] for the documents).
//!
//! A group whose document holds consolidated metadata (a v3 `zarr.json` with an inline block,
//! a v2 group with `.zmetadata`) is a *holder*: it and every node opened from it share one
//! [`ConsolidatedView`], through which [`Group::children`](super::Group::children) and
//! [`Group::open_child`](super::Group::open_child) answer without a request. Writes that
//! change metadata through those nodes (creating a child, replacing attributes) refresh the
//! holder's document: the one entry is replaced, conditionally on the version last read or
//! written (re-read and retried on a concurrent change), so the consolidated metadata stays
//! what the hierarchy holds.

use std::sync::Arc;

use tokio::sync::Mutex;

use super::{ArrayNode, Group, HierarchyError, Node, write_conditional};
use crate::metadata::consolidated::{self, ConsolidatedNodes, ZMETADATA};
use crate::metadata::{GroupMetadata, NodeMetadata, ZARR_JSON, ZarrFormat};
use crate::store::{ObjectVersion, PutMode, Store, StoreKey};

/// How often a refresh re-reads the holder and tries again after a concurrent change.
const REFRESH_ATTEMPTS: usize = 3;

/// The consolidated metadata a node was opened through: the holder's, shared, and the
/// node's path relative to the holder.
#[derive(Debug, Clone)]
pub(crate) struct ConsolidatedView {
    holder: Arc<Holder>,
    /// The node's path relative to the holder (`""`: the holder itself).
    rel: String,
}

#[derive(Debug)]
struct Holder {
    path: StoreKey,
    format: ZarrFormat,
    state: Mutex<HolderState>,
}

#[derive(Debug)]
struct HolderState {
    /// The holder's own metadata, its `consolidated` the nodes (always `Some`).
    meta: GroupMetadata,
    /// The version of the document holding them (`zarr.json` or `.zmetadata`) as last read
    /// or written.
    version: ObjectVersion,
}

impl ConsolidatedView {
    /// The view of a holder at `path` with metadata `meta` (whose `consolidated` is set),
    /// read at `version` (of `zarr.json` for v3, of `.zmetadata` for v2).
    pub(crate) fn holder(path: &StoreKey, meta: &GroupMetadata, version: ObjectVersion) -> Self {
        ConsolidatedView {
            holder: Arc::new(Holder {
                path: path.clone(),
                format: meta.zarr_format,
                state: Mutex::new(HolderState {
                    meta: meta.clone(),
                    version,
                }),
            }),
            rel: String::new(),
        }
    }

    /// Whether this is the holder's own view.
    pub(crate) fn is_holder(&self) -> bool {
        self.rel.is_empty()
    }

    fn child_rel(&self, name: &str) -> String {
        if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        }
    }

    /// The view of the child `name`.
    pub(crate) fn child(&self, name: &str) -> Self {
        ConsolidatedView {
            holder: Arc::clone(&self.holder),
            rel: self.child_rel(name),
        }
    }

    /// The names and metadata kinds of the children of the node, sorted by name (reserved
    /// `__` names skipped, as a listing skips them).
    pub(crate) async fn children(&self) -> Vec<(String, super::NodeKind)> {
        let state = self.holder.state.lock().await;
        let Some(nodes) = &state.meta.consolidated else {
            return Vec::new();
        };
        let prefix = if self.rel.is_empty() {
            String::new()
        } else {
            format!("{}/", self.rel)
        };
        nodes
            .range(prefix.clone()..)
            .take_while(|(p, _)| p.starts_with(&prefix))
            .filter_map(|(p, n)| {
                let name = &p[prefix.len()..];
                (!name.contains('/') && !name.starts_with("__")).then(|| {
                    let kind = match n {
                        NodeMetadata::Array(_) => super::NodeKind::Array,
                        NodeMetadata::Group(_) => super::NodeKind::Group,
                    };
                    (name.to_string(), kind)
                })
            })
            .collect()
    }

    /// The child `name` (at `path`) as the consolidated metadata describes it, without a
    /// request; `None` when it has no entry.
    pub(crate) async fn open_child(
        &self,
        store: &Store,
        path: &StoreKey,
        name: &str,
    ) -> Option<Node> {
        let rel = self.child_rel(name);
        let meta = {
            let state = self.holder.state.lock().await;
            state.meta.consolidated.as_ref()?.get(&rel)?.clone()
        };
        let view = Some(self.child(name));
        Some(match meta {
            NodeMetadata::Array(meta) => Node::Array(ArrayNode {
                store: store.clone(),
                path: path.clone(),
                meta: *meta,
                version: ObjectVersion::default(),
                attrs_version: None,
                view,
                unread: true,
            }),
            NodeMetadata::Group(mut meta) => {
                // its own document's block (if any) is not what the holder's entry says
                meta.consolidated = None;
                Node::Group(Group {
                    store: store.clone(),
                    path: path.clone(),
                    meta,
                    version: ObjectVersion::default(),
                    attrs_version: None,
                    view,
                    unread: true,
                })
            }
        })
    }

    /// Replaces the entry of the node this view belongs to (`node`: its new metadata) in
    /// the holder's document, or (the holder's own view) the holder's own metadata in it.
    /// A failure is [`HierarchyError::ConsolidatedNotRefreshed`]: the node's own write is
    /// done, the consolidated copy is stale.
    pub(crate) async fn refresh(
        &self,
        store: &Store,
        node: NodeMetadata,
    ) -> Result<(), HierarchyError> {
        self.refresh_inner(store, node).await.map_err(|source| {
            HierarchyError::ConsolidatedNotRefreshed {
                url: store.url_of(
                    &self
                        .document_key()
                        .unwrap_or_else(|_| self.holder.path.clone()),
                ),
                source: Box::new(source),
            }
        })
    }

    fn document_key(&self) -> Result<StoreKey, HierarchyError> {
        let name = match self.holder.format {
            ZarrFormat::V3 => ZARR_JSON,
            ZarrFormat::V2 => ZMETADATA,
        };
        Ok(self.holder.path.join(name)?)
    }

    async fn refresh_inner(&self, store: &Store, node: NodeMetadata) -> Result<(), HierarchyError> {
        let key = self.document_key()?;
        let mut state = self.holder.state.lock().await;
        for attempt in 0..REFRESH_ATTEMPTS {
            let mut meta = state.meta.clone();
            match (&node, self.is_holder()) {
                (NodeMetadata::Group(own), true) => {
                    meta.attributes = own.attributes.clone();
                }
                (_, true) => return Ok(()),
                (node, false) => {
                    let mut node = node.clone();
                    if let NodeMetadata::Group(g) = &mut node {
                        g.consolidated = None;
                    }
                    meta.consolidated
                        .get_or_insert_with(ConsolidatedNodes::new)
                        .insert(self.rel.clone(), node);
                }
            }
            let bytes = holder_document(&meta)?;
            match write_conditional(store, &key, bytes, PutMode::Update(state.version.clone()))
                .await
            {
                Ok(version) => {
                    state.meta = meta;
                    state.version = version;
                    return Ok(());
                }
                Err(HierarchyError::ConcurrentUpdate { .. }) if attempt + 1 < REFRESH_ATTEMPTS => {
                    // another writer changed the holder: read it again and patch that
                    let Some((fresh, version)) =
                        reload(store, &self.holder.path, self.holder.format).await?
                    else {
                        // it holds no consolidated metadata any more: nothing is stale
                        return Ok(());
                    };
                    state.meta = fresh;
                    state.version = version;
                }
                Err(e) => return Err(e),
            }
        }
        Err(HierarchyError::ConcurrentUpdate {
            url: store.url_of(&key),
        })
    }

    /// Writes the holder's own document for a v3 holder whose attributes change: its
    /// metadata as the view holds it (the current consolidated nodes) with `attributes`,
    /// conditionally on the version last read or written. Returns the new metadata and
    /// version.
    pub(crate) async fn write_holder_v3(
        &self,
        store: &Store,
        attributes: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(GroupMetadata, ObjectVersion), HierarchyError> {
        let key = self.document_key()?;
        let mut state = self.holder.state.lock().await;
        let mut meta = state.meta.clone();
        meta.attributes = attributes;
        let version = write_conditional(
            store,
            &key,
            meta.to_json(),
            PutMode::Update(state.version.clone()),
        )
        .await?;
        state.meta = meta.clone();
        state.version = version.clone();
        Ok((meta, version))
    }
}

/// The bytes of the document holding `meta`'s consolidated nodes: a v3 group's `zarr.json`,
/// a v2 group's `.zmetadata`.
fn holder_document(meta: &GroupMetadata) -> Result<Vec<u8>, HierarchyError> {
    Ok(match meta.zarr_format {
        ZarrFormat::V3 => meta.to_json(),
        ZarrFormat::V2 => {
            let empty = ConsolidatedNodes::new();
            consolidated::zmetadata_document(meta, meta.consolidated.as_ref().unwrap_or(&empty))?
        }
    })
}

/// The holder at `path` as stored now, with the version of the document holding its
/// consolidated metadata; `None` when it holds none.
async fn reload(
    store: &Store,
    path: &StoreKey,
    format: ZarrFormat,
) -> Result<Option<(GroupMetadata, ObjectVersion)>, HierarchyError> {
    let group = super::open_group_fresh(store, path, format).await?;
    let Some(view) = group.view else {
        return Ok(None);
    };
    let state = view.holder.state.lock().await;
    Ok(Some((state.meta.clone(), state.version.clone())))
}

/// Writes the consolidated metadata `nodes` of the group `group` (its own document for v3,
/// `.zmetadata` for v2) with `mode`; returns the version of the document written.
pub(crate) async fn write_consolidated(
    store: &Store,
    group: &GroupMetadata,
    path: &StoreKey,
    nodes: ConsolidatedNodes,
    mode: PutMode,
) -> Result<(GroupMetadata, ObjectVersion), HierarchyError> {
    let meta = GroupMetadata {
        consolidated: Some(nodes),
        ..group.clone()
    };
    let name = match meta.zarr_format {
        ZarrFormat::V3 => ZARR_JSON,
        ZarrFormat::V2 => ZMETADATA,
    };
    let bytes = holder_document(&meta)?;
    let version = write_conditional(store, &path.join(name)?, bytes, mode).await?;
    Ok((meta, version))
}

/// The documents of a group holding consolidated metadata, each with its name, the group's
/// own document last (for [`super::write_metadata_last`]): a v3 group's `zarr.json` with the
/// inline block; a v2 group's `.zattrs` (when it has attributes), `.zmetadata` and `.zgroup`.
pub(crate) fn holder_documents(
    meta: &GroupMetadata,
) -> Result<Vec<(&'static str, Vec<u8>)>, HierarchyError> {
    let mut docs = meta.documents();
    if meta.zarr_format == ZarrFormat::V2 {
        let at = docs.len().saturating_sub(1);
        docs.insert(at, (ZMETADATA, holder_document(meta)?));
    }
    Ok(docs)
}
