//! Fixture helpers: the manifest and a reference whole-array read (`.npy` files:
//! [`super::read_npy`]).

use serde_json::Value;
use std::path::PathBuf;
use zarrflow::codec::block::{extract_block, insert_block};
use zarrflow::codec::sharding::fill_bytes;
use zarrflow::hierarchy::ArrayNode;
use zarrflow::metadata::ChunkGridSpec;
use zarrflow::store::{Store, StoreKey};

/// test-data and its manifests read as one: `manifest.json` (generate.py) with the lists of
/// `manifest-zarr2.json` (generate_zarr2.py: the zarr-python 2.18 fixtures) appended.
pub fn test_data() -> Option<(PathBuf, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test-data");
    let manifest = std::fs::read(dir.join("manifest.json")).ok()?;
    let mut manifest: Value =
        serde_json::from_slice(&manifest).expect("manifest.json is valid JSON");
    merge_manifests(&mut manifest, &dir);
    Some((dir, manifest))
}

/// Appends the lists of each further manifest in `dir` (`manifest-zarr2.json`) to `manifest`'s.
pub fn merge_manifests(manifest: &mut Value, dir: &std::path::Path) {
    for name in EXTRA_MANIFESTS {
        let text = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let extra: Value = serde_json::from_slice(&text).expect("a valid JSON manifest");
        for (kind, list) in extra.as_object().expect("a JSON object") {
            let Some(list) = list.as_array() else {
                continue;
            };
            let into = manifest
                .as_object_mut()
                .unwrap()
                .entry(kind.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            into.as_array_mut()
                .unwrap_or_else(|| panic!("{kind}: not a list"))
                .extend(list.iter().cloned());
        }
    }
}

/// The manifests of the other fixture generators, beside `manifest.json`.
pub const EXTRA_MANIFESTS: [&str; 1] = ["manifest-zarr2.json"];

pub fn entries<'a>(m: &'a Value, kind: &str) -> &'a [Value] {
    m.get(kind)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub fn key(p: &str) -> StoreKey {
    StoreKey::new(p.trim_end_matches('/')).unwrap()
}

/// Read a whole (regular-grid) array chunk by chunk: the reference read used by this test.
pub async fn read_all(store: &Store, arr: &ArrayNode) -> Vec<u8> {
    let meta = arr.metadata();
    let shape = meta.shape().to_vec();
    let elem = meta.data_type().fixed_size().unwrap();
    let n: u64 = shape.iter().product();
    let mut out = fill_bytes(meta.fill_value(), n as usize, elem);
    if n == 0 {
        return out;
    }
    let ChunkGridSpec::Regular { chunk_shape } = meta.chunk_grid() else {
        panic!("regular grid expected")
    };
    let grid = meta.chunk_grid().grid_shape(&shape);
    let count: u64 = grid.iter().product();
    for lin in 0..count {
        let coords = zarrflow::codec::block::unravel(lin, &grid);
        let k = arr.chunk_key(&coords).unwrap();
        let Some(bytes) = store.get_opt(&k).await.unwrap() else {
            continue;
        };
        let dec = meta
            .codecs()
            .decode(
                &bytes,
                chunk_shape,
                meta.data_type(),
                meta.fill_value(),
                k.as_str(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let start: Vec<u64> = coords.iter().zip(chunk_shape).map(|(c, s)| c * s).collect();
        let extent: Vec<u64> = start
            .iter()
            .zip(chunk_shape)
            .zip(&shape)
            .map(|((st, c), s)| (*c).min(s - st))
            .collect();
        let zeros = vec![0u64; shape.len()];
        let block = extract_block(&dec, chunk_shape, &zeros, &extent, elem);
        insert_block(&mut out, &shape, &start, &block, &extent, elem);
    }
    out
}
