//! Consolidated metadata, as zarr-python writes it with `zarr.consolidate_metadata`: the
//! metadata of every node under a group, stored with the group so that one request reads a
//! whole hierarchy.
//!
//! - Zarr v3: an inline block in the group's `zarr.json`,
//!   `"consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {...}}`,
//!   whose `metadata` maps each descendant's path relative to the group (`"a"`, `"child/b"`)
//!   to its `zarr.json` document. zarr-python 3.4.2 writes the paths flattened (a nested
//!   group's own entry carries an empty block), sorted by depth, then by name ignoring case.
//! - Zarr v2: a `.zmetadata` document beside `.zgroup`,
//!   `{"metadata": {".zgroup": ..., ".zattrs": ..., "a/.zarray": ..., "a/.zattrs": ...},
//!   "zarr_consolidated_format": 1}`.
//!
//! Both read into one model, [`ConsolidatedNodes`]: relative path → [`NodeMetadata`], every
//! group entry with an empty block of its own (the flattened form), nested blocks that hold
//! entries moved up to the flattened keys. Pure: no I/O.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{
    GroupMetadata, MetadataError, NodeMetadata, ZARRAY, ZATTRS, ZGROUP, check_format, parse_object,
    type_name, v2,
};

/// The name of the Zarr v2 consolidated metadata document.
pub const ZMETADATA: &str = ".zmetadata";

/// The nodes under a group, by path relative to it (`"a"`, `"child/b"`), flattened.
pub type ConsolidatedNodes = BTreeMap<String, NodeMetadata>;

const FIELD: &str = "consolidated_metadata";

/// Parses a v3 inline block (the value of `consolidated_metadata`) of the document at `key`.
pub(super) fn parse_inline(
    mut cm: Map<String, Value>,
    key: &str,
) -> Result<ConsolidatedNodes, MetadataError> {
    match cm.get("kind") {
        Some(Value::String(k)) if k == "inline" => {}
        other => {
            return Err(MetadataError::InvalidField {
                key: key.to_string(),
                field: format!("{FIELD}.kind"),
                reason: match other {
                    None => "missing (expected \"inline\")".into(),
                    Some(v) => format!(
                        "expected \"inline\", found {}",
                        crate::index::json::excerpt(v)
                    ),
                },
            });
        }
    }
    let md = match cm.remove("metadata") {
        Some(Value::Object(m)) => m,
        other => {
            return Err(MetadataError::InvalidField {
                key: key.to_string(),
                field: format!("{FIELD}.metadata"),
                reason: match other {
                    None => "missing (expected an object)".into(),
                    Some(v) => format!("expected an object, found {}", type_name(&v)),
                },
            });
        }
    };
    let mut out = ConsolidatedNodes::new();
    for (path, v) in md {
        let sub_key = format!("{key}#{FIELD}.metadata[{path:?}]");
        let Value::Object(o) = v else {
            return Err(MetadataError::MalformedJson {
                key: sub_key,
                reason: format!("expected a JSON object, found {}", type_name(&v)),
            });
        };
        check_format(&o, &sub_key)?;
        let node = NodeMetadata::from_map(o, &sub_key)?;
        out.insert(path, node);
    }
    normalize(out, key)
}

/// Checks the paths (relative, `/`-separated, no empty, `.` or `..` segment; every parent
/// present as a group) and flattens: a group entry's own non-empty block is moved up to the
/// flattened keys (those already present win), and every group entry is left with an empty
/// block, as zarr-python writes it.
fn normalize(nodes: ConsolidatedNodes, key: &str) -> Result<ConsolidatedNodes, MetadataError> {
    let mut out = ConsolidatedNodes::new();
    let mut nested = Vec::new();
    for (path, mut node) in nodes {
        if let NodeMetadata::Group(g) = &mut node
            && let Some(inner) = g.consolidated.replace(ConsolidatedNodes::new())
        {
            nested.extend(inner.into_iter().map(|(p, n)| (format!("{path}/{p}"), n)));
        }
        out.insert(path, node);
    }
    for (path, node) in nested {
        out.entry(path).or_insert(node);
    }
    for path in out.keys() {
        check_path(path, &out, key)?;
    }
    Ok(out)
}

fn check_path(path: &str, nodes: &ConsolidatedNodes, key: &str) -> Result<(), MetadataError> {
    let bad = |reason: String| MetadataError::InvalidField {
        key: key.to_string(),
        field: format!("{FIELD}.metadata[{path:?}]"),
        reason,
    };
    if path
        .split('/')
        .any(|s| s.is_empty() || s.chars().all(|c| c == '.'))
    {
        return Err(bad(
            "not a relative node path (an empty, `.` or `..` segment)".into(),
        ));
    }
    if let Some((parent, _)) = path.rsplit_once('/') {
        match nodes.get(parent) {
            Some(NodeMetadata::Group(_)) => {}
            Some(NodeMetadata::Array(_)) => {
                return Err(bad(format!("its parent `{parent}` is an array")));
            }
            None => return Err(bad(format!("no entry for its parent group `{parent}`"))),
        }
    }
    Ok(())
}

/// The sort key zarr-python 3.4.2 writes entries in: depth, then the path ignoring case
/// (zarr-python folds case after NFKC normalisation; the two agree on ASCII names), then
/// the path itself.
fn entry_order(path: &str) -> (usize, String, &str) {
    (path.matches('/').count(), path.to_lowercase(), path)
}

fn sorted(nodes: &ConsolidatedNodes) -> Vec<(&String, &NodeMetadata)> {
    let mut entries: Vec<_> = nodes.iter().collect();
    entries.sort_by(|a, b| entry_order(a.0).cmp(&entry_order(b.0)));
    entries
}

/// The v3 inline block of `nodes`: `{"kind": "inline", "must_understand": false,
/// "metadata": {...}}`, entries in zarr-python's order, each a node's canonical `zarr.json`
/// document (a group's with an empty block of its own).
pub(super) fn inline_value(nodes: &ConsolidatedNodes) -> Value {
    let mut md = Map::new();
    for (path, node) in sorted(nodes) {
        let v = match node {
            NodeMetadata::Group(g) => {
                let mut g = g.clone();
                g.consolidated = Some(ConsolidatedNodes::new());
                g.to_value()
            }
            NodeMetadata::Array(a) => a.to_value(),
        };
        md.insert(path.clone(), v);
    }
    let mut o = Map::new();
    o.insert("kind".into(), Value::from("inline"));
    o.insert("must_understand".into(), Value::from(false));
    o.insert("metadata".into(), Value::Object(md));
    Value::Object(o)
}

/// A node path's document name in `.zmetadata` (`"a/.zarray"`; the root's is `".zarray"`).
fn v2_entry(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

/// Parses a Zarr v2 `.zmetadata` document (at `key`, for errors): the nodes under the group
/// it belongs to. The group's own entries (`.zgroup`, `.zattrs`) are checked to be objects
/// and otherwise left alone (the group reads its own documents); entries whose names are not
/// `.zarray`, `.zgroup` or `.zattrs` are ignored, and a `.zattrs` without a node document
/// belongs to no node.
pub fn parse_zmetadata(json: &[u8], key: &str) -> Result<ConsolidatedNodes, MetadataError> {
    let mut doc = parse_object(json, key)?;
    match doc.get("zarr_consolidated_format") {
        None => {
            return Err(MetadataError::MissingField {
                key: key.to_string(),
                field: "zarr_consolidated_format".into(),
            });
        }
        Some(v) if v.as_u64() == Some(1) => {}
        Some(v) => {
            return Err(MetadataError::InvalidField {
                key: key.to_string(),
                field: "zarr_consolidated_format".into(),
                reason: format!(
                    "unsupported version {} (expected 1)",
                    crate::index::json::excerpt(v)
                ),
            });
        }
    }
    let md = match doc.remove("metadata") {
        Some(Value::Object(m)) => m,
        None => {
            return Err(MetadataError::MissingField {
                key: key.to_string(),
                field: "metadata".into(),
            });
        }
        Some(v) => {
            return Err(MetadataError::InvalidField {
                key: key.to_string(),
                field: "metadata".into(),
                reason: format!("expected an object, found {}", type_name(&v)),
            });
        }
    };
    // node path -> (.zarray, .zgroup, .zattrs), as bytes for the v2 parsers
    #[derive(Default)]
    struct Docs {
        zarray: Option<Vec<u8>>,
        zgroup: Option<Vec<u8>>,
        zattrs: Option<Vec<u8>>,
    }
    let mut by_node: BTreeMap<String, Docs> = BTreeMap::new();
    for (name, v) in md {
        let (prefix, doc_name) = match name.rsplit_once('/') {
            Some((p, n)) => (p.to_string(), n),
            None => (String::new(), name.as_str()),
        };
        if ![ZARRAY, ZGROUP, ZATTRS].contains(&doc_name) {
            continue;
        }
        if !v.is_object() {
            return Err(MetadataError::MalformedJson {
                key: format!("{key}#metadata[{name:?}]"),
                reason: format!("expected a JSON object, found {}", type_name(&v)),
            });
        }
        if prefix.is_empty() {
            continue;
        }
        let bytes = serde_json::to_vec(&v).unwrap_or_default();
        let docs = by_node.entry(prefix).or_default();
        match doc_name {
            ZARRAY => docs.zarray = Some(bytes),
            ZGROUP => docs.zgroup = Some(bytes),
            _ => docs.zattrs = Some(bytes),
        }
    }
    let mut out = ConsolidatedNodes::new();
    for (path, docs) in by_node {
        let sub = |name: &str| format!("{key}#metadata[{:?}]", v2_entry(&path, name));
        let attrs = docs.zattrs.as_deref();
        let node = match (docs.zarray, docs.zgroup) {
            (Some(_), Some(_)) => {
                return Err(MetadataError::InvalidField {
                    key: key.to_string(),
                    field: format!("metadata[{path:?}]"),
                    reason: "holds both .zarray and .zgroup; a node has one".into(),
                });
            }
            (Some(a), None) => NodeMetadata::Array(Box::new(v2::parse_array(
                &a,
                attrs,
                &sub(ZARRAY),
                &sub(ZATTRS),
            )?)),
            (None, Some(g)) => {
                let mut g = v2::parse_group(&g, attrs, &sub(ZGROUP), &sub(ZATTRS))?;
                g.consolidated = Some(ConsolidatedNodes::new());
                NodeMetadata::Group(g)
            }
            (None, None) => continue,
        };
        out.insert(path, node);
    }
    normalize(out, key)
}

/// The `.zmetadata` document of the v2 group `group` holding `nodes`, as zarr-python 3.4.2
/// writes it: the group's `.zgroup` and `.zattrs`, then each node's `.zattrs` (`{}` when it
/// has none) and `.zarray` or `.zgroup` (a group's with an empty inline block, as zarr-python
/// writes it), in zarr-python's entry order, compact with Python's separators (`", "`,
/// `": "`). A node v2 cannot hold is [`MetadataError::NotExpressibleInV2`].
pub fn zmetadata_document(
    group: &GroupMetadata,
    nodes: &ConsolidatedNodes,
) -> Result<Vec<u8>, MetadataError> {
    let mut md = Map::new();
    md.insert(ZGROUP.into(), v2::group_document());
    md.insert(ZATTRS.into(), Value::Object(group.attributes.clone()));
    for (path, node) in sorted(nodes) {
        match node {
            NodeMetadata::Array(a) => {
                let (zarray, attrs) = v2::array_to_v2(a)?;
                md.insert(
                    v2_entry(path, ZATTRS),
                    attrs.unwrap_or_else(|| Value::Object(Map::new())),
                );
                md.insert(v2_entry(path, ZARRAY), zarr_python_order(zarray));
            }
            NodeMetadata::Group(g) => {
                md.insert(v2_entry(path, ZATTRS), Value::Object(g.attributes.clone()));
                let mut zgroup = v2::group_document();
                if let Some(o) = zgroup.as_object_mut() {
                    o.insert(
                        FIELD.into(),
                        serde_json::json!({"metadata": {}, "must_understand": false, "kind": "inline"}),
                    );
                }
                md.insert(v2_entry(path, ZGROUP), zgroup);
            }
        }
    }
    let mut doc = Map::new();
    doc.insert("metadata".into(), Value::Object(md));
    doc.insert("zarr_consolidated_format".into(), Value::from(1));
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonCompact);
    serde::Serialize::serialize(&Value::Object(doc), &mut ser).map_err(|e| {
        MetadataError::InvalidSpec {
            field: ZMETADATA.into(),
            reason: e.to_string(),
        }
    })?;
    Ok(out)
}

/// The fields of a `.zarray` document in the order zarr-python 3.4.2 writes them into
/// `.zmetadata` (others after them, as they were).
const ZARRAY_ORDER: [&str; 9] = [
    "shape",
    "chunks",
    "dtype",
    "fill_value",
    "order",
    "filters",
    "dimension_separator",
    "compressor",
    "zarr_format",
];

fn zarr_python_order(v: Value) -> Value {
    let Value::Object(mut o) = v else {
        return v;
    };
    let mut out = Map::new();
    for k in ZARRAY_ORDER {
        if let Some(v) = o.shift_remove(k) {
            out.insert(k.into(), v);
        }
    }
    out.extend(o);
    Value::Object(out)
}

/// Python's `json.dumps` separators: `", "` between items, `": "` after keys.
struct PythonCompact;

impl serde_json::ser::Formatter for PythonCompact {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn group_doc(cm: Value) -> Vec<u8> {
        json!({"zarr_format": 3, "node_type": "group", "attributes": {}, "consolidated_metadata": cm})
            .to_string()
            .into_bytes()
    }

    fn err(cm: Value) -> String {
        GroupMetadata::parse(&group_doc(cm), "g/zarr.json")
            .unwrap_err()
            .to_string()
    }

    const GROUP: &str = r#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#;

    #[test]
    fn malformed_inline_blocks_are_typed_errors_naming_the_field() {
        let g: Value = serde_json::from_str(GROUP).unwrap();
        let e = err(json!({"kind": "remote", "must_understand": false, "metadata": {}}));
        assert!(
            e.contains("`consolidated_metadata.kind`") && e.contains("\"remote\""),
            "{e}"
        );
        let e = err(json!({"must_understand": false, "metadata": {}}));
        assert!(e.contains("`consolidated_metadata.kind`: missing"), "{e}");
        let e = err(json!({"kind": "inline", "must_understand": false, "metadata": [1]}));
        assert!(
            e.contains("`consolidated_metadata.metadata`") && e.contains("a list"),
            "{e}"
        );
        let e = err(json!({"kind": "inline", "must_understand": false, "metadata": {"a": 3}}));
        assert!(
            e.contains("metadata[\"a\"]") && e.contains("a number"),
            "{e}"
        );
        let e = err(json!({"kind": "inline", "must_understand": false, "metadata": {"a/b": g}}));
        assert!(e.contains("no entry for its parent group `a`"), "{e}");
        let e = err(json!({"kind": "inline", "must_understand": false, "metadata": {"../x": g}}));
        assert!(e.contains("not a relative node path"), "{e}");
        // an entry whose own metadata is bad names the entry
        let bad = json!({"zarr_format": 3, "node_type": "array", "shape": [2]});
        let e = err(json!({"kind": "inline", "must_understand": false, "metadata": {"arr": bad}}));
        assert!(
            e.contains("metadata[\"arr\"]") && e.contains("data_type"),
            "{e}"
        );
        let e = err(
            json!({"kind": "inline", "must_understand": false, "metadata": {"x": {"zarr_format": 2}}}),
        );
        assert!(
            e.contains("metadata[\"x\"]") && e.contains("zarr_format"),
            "{e}"
        );
    }

    #[test]
    fn nested_blocks_are_flattened_and_groups_carry_empty_blocks() {
        let g: Value = serde_json::from_str(GROUP).unwrap();
        let mut child = g.clone();
        child["consolidated_metadata"] =
            json!({"kind": "inline", "must_understand": false, "metadata": {"leaf": g}});
        let m = GroupMetadata::parse(
            &group_doc(
                json!({"kind": "inline", "must_understand": false, "metadata": {"child": child}}),
            ),
            "zarr.json",
        )
        .unwrap();
        let nodes = m.consolidated.as_ref().unwrap();
        assert_eq!(
            nodes.keys().collect::<Vec<_>>(),
            ["child", "child/leaf"],
            "{nodes:?}"
        );
        let v = m.to_value();
        assert_eq!(
            v["consolidated_metadata"]["metadata"]["child"]["consolidated_metadata"],
            json!({"kind": "inline", "must_understand": false, "metadata": {}})
        );
    }

    #[test]
    fn entries_are_written_in_zarr_pythons_order() {
        let g = GroupMetadata::default();
        let nodes: ConsolidatedNodes = ["b", "B/x", "a", "B", "a/z"]
            .iter()
            .map(|p| (p.to_string(), NodeMetadata::Group(g.clone())))
            .collect();
        let v = inline_value(&nodes);
        let keys: Vec<&String> = v["metadata"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["a", "B", "b", "a/z", "B/x"]);
    }

    #[test]
    fn malformed_zmetadata_is_a_typed_error_naming_the_key() {
        let e = parse_zmetadata(b"{not json", "g/.zmetadata").unwrap_err();
        assert!(
            matches!(e, MetadataError::MalformedJson { ref key, .. } if key == "g/.zmetadata"),
            "{e}"
        );
        let e = parse_zmetadata(b"[]", "g/.zmetadata").unwrap_err();
        assert!(e.to_string().contains("expected a JSON object"), "{e}");
        let e = parse_zmetadata(br#"{"metadata": {}}"#, "g/.zmetadata").unwrap_err();
        assert!(e.to_string().contains("zarr_consolidated_format"), "{e}");
        let e = parse_zmetadata(
            br#"{"metadata": {}, "zarr_consolidated_format": 2}"#,
            "g/.zmetadata",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unsupported version 2"), "{e}");
        let e =
            parse_zmetadata(br#"{"metadata": 1, "zarr_consolidated_format": 1}"#, "k").unwrap_err();
        assert!(e.to_string().contains("`metadata`"), "{e}");
        let e = parse_zmetadata(
            br#"{"metadata": {"a/.zarray": "x"}, "zarr_consolidated_format": 1}"#,
            "g/.zmetadata",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("g/.zmetadata#metadata[\"a/.zarray\"]"),
            "{e}"
        );
        // a bad .zarray entry names itself
        let e = parse_zmetadata(
            br#"{"metadata": {"a/.zarray": {"zarr_format": 2, "shape": [2]}}, "zarr_consolidated_format": 1}"#,
            "g/.zmetadata",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("g/.zmetadata#metadata[\"a/.zarray\"]"),
            "{e}"
        );
        let e = parse_zmetadata(
            br#"{"metadata": {"a/.zarray": {}, "a/.zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1}"#,
            "g/.zmetadata",
        )
        .unwrap_err();
        assert!(e.to_string().contains("both .zarray and .zgroup"), "{e}");
        let e = parse_zmetadata(
            br#"{"metadata": {"a/b/.zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1}"#,
            "g/.zmetadata",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("no entry for its parent group `a`"),
            "{e}"
        );
    }
}
