//! Interop fixtures written by zarr-python, TensorStore and by hand (test-data/manifest.json):
//! every array is opened through the local store, its metadata round-tripped, every chunk
//! decoded and the whole array compared with the expected `.npy`; every group is opened and
//! its children listed; every corrupt shard gives the expected typed error.
//!
//! The fixtures live in `test-data/` at the repository root. Without them the tests report
//! that they were skipped and pass.

mod common;

use common::fixtures::{entries, key, read_all, test_data};
use common::read_npy;
use serde_json::Value;
use zarrflow::codec::CodecError;
use zarrflow::hierarchy::{ArrayNode, Group, NodeKind};
use zarrflow::metadata::{ArrayMetadata, ChunkGridSpec};
use zarrflow::store::{Store, StoreOptions};

fn round_trip(meta: &ArrayMetadata, original: &[u8], path: &str) {
    let written = meta.to_json();
    let again = ArrayMetadata::parse(&written, path).unwrap();
    assert_eq!(again.to_value(), meta.to_value(), "{path}");
    assert_eq!(
        again.fill_value().as_ne_bytes(),
        meta.fill_value().as_ne_bytes(),
        "{path}"
    );
    let text = String::from_utf8(written).unwrap();
    assert!(!text.contains("_zarrs"), "{path}");
    // the original document and our canonical one describe the same array
    let orig: Value = serde_json::from_slice(original).unwrap();
    let ours: Value = serde_json::from_str(&text).unwrap();
    let norm = |v: Option<&Value>| -> Option<Value> {
        v.filter(|v| !v.is_null() && v.as_object().is_none_or(|o| !o.is_empty()))
            .cloned()
    };
    for f in ["shape", "dimension_names", "attributes"] {
        assert_eq!(norm(orig.get(f)), norm(ours.get(f)), "{path}: {f}");
    }
    assert_eq!(orig["data_type"], ours["data_type"], "{path}");
}

#[tokio::test]
async fn array_fixtures_open_round_trip_and_decode() {
    let Some((dir, manifest)) = test_data() else {
        eprintln!("test-data/manifest.json not present: skipped");
        return;
    };
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    let mut checked = 0;
    for a in entries(&manifest, "arrays") {
        let path = a["path"].as_str().unwrap();
        let arr = ArrayNode::open(&store, &key(path))
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let meta = arr.metadata();
        if a["zarr_format"] == 2 {
            // a v2 array's documents, written again, open as the same metadata
            let docs = meta.documents().unwrap();
            let zarray = &docs.last().unwrap().1;
            let zattrs = docs.iter().find(|d| d.0 == ".zattrs").map(|d| &d.1[..]);
            let again = zarrflow::metadata::v2::parse_array(zarray, zattrs, path, path).unwrap();
            assert_eq!(again.to_value(), meta.to_value(), "{path}");
        } else {
            let original = std::fs::read(dir.join(path).join("zarr.json")).unwrap();
            round_trip(meta, &original, path);
        }
        assert_eq!(serde_json::json!(meta.shape()), a["shape"], "{path}");
        // the manifest's fill value means the same bits
        let mut fv_meta: zarrs::metadata::FillValueMetadata =
            serde_json::from_value(a["fill_value"].clone()).unwrap();
        let text = meta.dtype().is_some_and(|d| d.is_text());
        if a["zarr_format"] == 2 && !text {
            // the v2 form (`null`, 0 for a bool, ...) in zarrs' v3 terms
            fv_meta = zarrs::convert::fill_value_metadata_v2_to_v3(
                &fv_meta,
                &meta.zarrs_metadata().data_type,
            )
            .unwrap();
            if fv_meta == zarrs::metadata::FillValueMetadata::from(0)
                && meta.data_type().to_string().starts_with("complex")
            {
                fv_meta = serde_json::from_value(serde_json::json!([0.0, 0.0])).unwrap();
            }
            // a time type's null fill value is NaT, as zarr-python 3.4.2 reads it
            if a["fill_value"].is_null() && meta.dtype().and_then(|d| d.time_scale()).is_some() {
                fv_meta = zarrs::metadata::FillValueMetadata::from("NaT");
            }
        }
        // (the fixed-width text types' fill values as zarr-python writes them: `fixed_text`)
        let fv = zarrflow::metadata::fixed_text::fill_value(
            &meta.zarrs_metadata().data_type,
            meta.data_type(),
            &fv_meta,
        )
        .unwrap_or_else(|| panic!("{path}: fill value"));
        let nan_any = a["fill_value"] == "NaN"
            || a["fill_value"]
                .as_array()
                .is_some_and(|v| v.iter().any(|x| x == "NaN"));
        if !nan_any {
            assert_eq!(fv.as_ne_bytes(), meta.fill_value().as_ne_bytes(), "{path}");
        }
        // whole-array read vs expected .npy
        if let Some(exp) = a.get("expected").and_then(Value::as_str) {
            let (descr, shape, data) = read_npy(&dir.join(exp));
            assert_eq!(shape, meta.shape(), "{path}");
            assert!(
                !descr.starts_with('>'),
                "{path}: big-endian expectation {descr}"
            );
            let got = read_all(&store, &arr).await;
            assert_eq!(got.len(), data.len(), "{path}");
            assert!(got == data, "{path}: data differs from {exp}");
        }
        checked += 1;
    }
    eprintln!("{checked} array fixtures checked");
    assert!(checked > 0);
}

#[tokio::test]
async fn group_fixtures_open_and_list() {
    let Some((dir, manifest)) = test_data() else {
        eprintln!("test-data/manifest.json not present: skipped");
        return;
    };
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    for g in entries(&manifest, "groups") {
        let path = g["path"].as_str().unwrap();
        let group = Group::open(&store, &key(path))
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        if let Some(attrs) = g.get("attributes") {
            assert_eq!(&Value::Object(group.attributes().clone()), attrs, "{path}");
        }
        if let Some(children) = g.get("children").and_then(Value::as_array) {
            let mut want: Vec<(String, NodeKind)> = children
                .iter()
                .map(|c| {
                    let kind = if c["node_type"] == "array" {
                        NodeKind::Array
                    } else {
                        NodeKind::Group
                    };
                    (c["name"].as_str().unwrap().to_string(), kind)
                })
                .collect();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(group.children().await.unwrap(), want, "{path}");
        }
        if g.get("consolidated").and_then(Value::as_bool) == Some(true) {
            let cons = group
                .metadata()
                .consolidated
                .as_ref()
                .unwrap_or_else(|| panic!("{path}: no consolidated metadata"));
            assert!(!cons.is_empty());
            // every consolidated entry agrees with the node's own zarr.json
            for (rel, node) in cons {
                let own = zarrflow::hierarchy::open_node(&store, &key(&format!("{path}/{rel}")))
                    .await
                    .unwrap();
                let own_value = match own {
                    zarrflow::hierarchy::Node::Array(a) => a.metadata().to_value(),
                    zarrflow::hierarchy::Node::Group(g) => {
                        let mut m = g.metadata().clone();
                        m.consolidated = None;
                        m.to_value()
                    }
                };
                let mut cons_value = node.to_value();
                cons_value
                    .as_object_mut()
                    .unwrap()
                    .remove("consolidated_metadata");
                assert_eq!(cons_value, own_value, "{path}: {rel}");
            }
        }
    }
}

#[tokio::test]
async fn corrupt_fixtures_give_typed_errors() {
    let Some((dir, manifest)) = test_data() else {
        eprintln!("test-data/manifest.json not present: skipped");
        return;
    };
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    let mut checked = 0;
    for c in entries(&manifest, "corrupt") {
        let path = c["path"].as_str().unwrap();
        let arr = ArrayNode::open(&store, &key(path)).await.unwrap();
        let meta = arr.metadata();
        let ck = key(&format!("{path}/{}", c["corrupt_key"].as_str().unwrap()));
        let bytes = store.get(&ck).await.unwrap();
        let ChunkGridSpec::Regular { chunk_shape } = meta.chunk_grid() else {
            panic!()
        };
        let err = meta
            .codecs()
            .decode(
                &bytes,
                chunk_shape,
                meta.data_type(),
                meta.fill_value(),
                ck.as_str(),
            )
            .unwrap_err();
        let ok = match c["expected_error"].as_str().unwrap() {
            "shard_index_too_short" => matches!(err, CodecError::ShardTooShort { .. }),
            "shard_index_invalid_checksum" => matches!(err, CodecError::ShardIndexChecksum { .. }),
            "shard_index_entry_out_of_range" => {
                matches!(err, CodecError::ShardEntryOutOfRange { .. })
            }
            "shard_index_single_sentinel" => {
                matches!(err, CodecError::ShardEntrySingleSentinel { .. })
            }
            "shard_index_byte_range_overflow" => {
                matches!(err, CodecError::ShardEntryOverflow { .. })
            }
            other => panic!("unknown expected_error {other}"),
        };
        assert!(ok, "{path}: expected {}, got {err}", c["expected_error"]);
        assert!(err.to_string().contains(ck.as_str()), "{err}");
        // the same error through a single ranged index read
        let sharding = meta.codecs().sharding().unwrap();
        let codec = sharding.index_codec(chunk_shape).unwrap();
        let err2 = zarrflow::hierarchy::read_shard_index(&store, &ck, &codec)
            .await
            .unwrap_err();
        let zarrflow::hierarchy::HierarchyError::Codec(err2) = err2 else {
            panic!("{err2}")
        };
        assert_eq!(
            std::mem::discriminant(&err2),
            std::mem::discriminant(&err),
            "{path}: {err2} vs {err}"
        );
        checked += 1;
    }
    eprintln!("{checked} corrupt fixtures checked");
}
