//! Replays inputs kept from fuzzing (`tests/fuzz-regressions/<target>/`, one file per input)
//! through the same calls as the cargo-fuzz targets in `fuzz/fuzz_targets/`: each must give
//! a value or an error, never a panic or an abort.

use std::path::PathBuf;

use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::{Dialect, IndexTransform, Selection, SelectionMode};
use zarrflow::metadata::{ArrayMetadata, NodeMetadata};
use zarrflow::store::{Store, StoreKey};

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(target);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        if e.path().is_file() {
            let name = e.file_name().to_string_lossy().into_owned();
            out.push((name, std::fs::read(e.path()).unwrap()));
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn metadata_inputs() {
    for (name, data) in inputs("metadata") {
        let Ok(NodeMetadata::Array(meta)) = NodeMetadata::parse(&data, "zarr.json") else {
            continue;
        };
        let again = ArrayMetadata::parse(&meta.to_json(), "canonical").unwrap();
        assert_eq!(again.shape(), meta.shape(), "{name}");
        let small = meta
            .shape()
            .iter()
            .try_fold(1u64, |a, &n| a.checked_mul(n))
            .is_some_and(|c| c <= 4096);
        if small {
            let store = Store::memory();
            store
                .put(&StoreKey::new("zarr.json").unwrap(), data.clone().into())
                .await
                .unwrap();
            if let Ok(a) = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default()).await
            {
                let _ = a.view().read_bytes().await;
            }
        }
    }
}

/// The layouts of `fuzz/fuzz_targets/shard_index.rs`, in the same order.
const LAYOUTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "[4,4]",
        "[2,2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[4,4]",
        "[2,2]",
        "start",
        r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[6]",
        "[2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[2,3,4]",
        "[1,3,2]",
        "start",
        r#"[{"name":"bytes","configuration":{"endian":"big"}}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[4,4]",
        "[2,2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#,
        r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}}]"#,
    ),
    (
        "[8]",
        "[4]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
        r#"[{"name":"bytes"},{"name":"zstd","configuration":{"level":1,"checksum":false}}]"#,
    ),
    (
        "[4,4]",
        "[2,2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
        r#"[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes"},{"name":"crc32c"}]"#,
    ),
];

#[test]
fn shard_index_inputs() {
    let layouts: Vec<ArrayMetadata> = LAYOUTS
        .iter()
        .map(|(shard, inner, loc, index, codecs)| {
            let json = format!(
                r#"{{"zarr_format":3,"node_type":"array","shape":{shard},"data_type":"uint16",
                "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{shard}}}}},
                "chunk_key_encoding":{{"name":"default"}},"fill_value":7,
                "codecs":[{{"name":"sharding_indexed","configuration":{{"chunk_shape":{inner},
                "codecs":{codecs},"index_codecs":{index},"index_location":"{loc}"}}}}]}}"#
            );
            ArrayMetadata::parse(json.as_bytes(), "fuzz/zarr.json").unwrap()
        })
        .collect();
    let all = inputs("shard_index");
    assert!(!all.is_empty());
    for (name, data) in all {
        let Some((&pick, shard)) = data.split_first() else {
            continue;
        };
        let meta = &layouts[pick as usize % layouts.len()];
        let shape = meta.shape().to_vec();
        let codec = meta
            .codecs()
            .sharding()
            .unwrap()
            .index_codec(&shape)
            .unwrap();
        if let Ok(index) = codec.decode_from_shard(shard, "k") {
            for i in 0..index.len() {
                if let Some(r) = index.get(i) {
                    assert!(r.end <= shard.len() as u64, "{name}");
                }
            }
        }
        if let Ok(v) = meta
            .codecs()
            .decode(shard, &shape, meta.data_type(), meta.fill_value(), "k")
        {
            assert_eq!(v.len() as u64, shape.iter().product::<u64>() * 2, "{name}");
        }
    }
}

#[test]
fn selection_inputs() {
    for (_, data) in inputs("selection") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        let Ok(sel) = Selection::parse(text) else {
            continue;
        };
        let base = IndexTransform::from_shape(&[7, 5, 3]).unwrap();
        for mode in [
            SelectionMode::Basic,
            SelectionMode::Outer,
            SelectionMode::Vectorized,
        ] {
            for dialect in [Dialect::Positional, Dialect::Literal] {
                if let Ok(t) = base.select(&sel, mode, dialect)
                    && t.domain().num_elements().is_some_and(|n| n <= 4096)
                {
                    t.for_each_mapped(|_, _| {}).unwrap();
                }
            }
        }
    }
}

#[test]
fn transform_json_inputs() {
    for (name, data) in inputs("transform_json") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        let Ok(t) = IndexTransform::from_json_str(text) else {
            continue;
        };
        let again = IndexTransform::from_json(&t.to_json()).unwrap();
        assert_eq!(again.domain().shape(), t.domain().shape(), "{name}");
    }
}

/// The `cli_values` crash kept as a `zarr.json` fill value: zarrs' hex parser panicked
/// slicing inside a multi-byte character; now it is `InvalidFillValue` naming the document.
#[test]
fn a_bit_pattern_fill_value_with_non_ascii_is_an_invalid_fill_value() {
    let (_, data) = inputs("metadata")
        .into_iter()
        .find(|(n, _)| n == "fill-value-bit-pattern-with-non-ascii.json")
        .unwrap();
    let err = NodeMetadata::parse(&data, "a/zarr.json").unwrap_err();
    assert!(
        matches!(
            err,
            zarrflow::metadata::MetadataError::InvalidFillValue { ref key, .. } if key == "a/zarr.json"
        ),
        "{err:?}"
    );
}
