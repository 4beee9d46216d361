//! Fixture helpers: the manifest, a minimal `.npy` reader and a reference whole-array read.

use serde_json::Value;
use std::path::PathBuf;
use zarrflow::codec::block::{extract_block, insert_block};
use zarrflow::codec::sharding::fill_bytes;
use zarrflow::hierarchy::ArrayNode;
use zarrflow::metadata::ChunkGridSpec;
use zarrflow::store::{Store, StoreKey};

pub fn test_data() -> Option<(PathBuf, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test-data");
    let manifest = std::fs::read(dir.join("manifest.json")).ok()?;
    Some((
        dir,
        serde_json::from_slice(&manifest).expect("manifest.json is valid JSON"),
    ))
}

pub fn entries<'a>(m: &'a Value, kind: &str) -> &'a [Value] {
    m.get(kind)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub fn key(p: &str) -> StoreKey {
    StoreKey::new(p.trim_end_matches('/')).unwrap()
}

/// Minimal `.npy` reader: (descr, shape, data bytes).
pub fn read_npy(path: &std::path::Path) -> (String, Vec<u64>, Vec<u8>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..6], b"\x93NUMPY");
    let (hlen, start) = if b[6] == 1 {
        (u16::from_le_bytes([b[8], b[9]]) as usize, 10)
    } else {
        (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12)
    };
    let header = std::str::from_utf8(&b[start..start + hlen]).unwrap();
    let descr = header
        .split("'descr': '")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap()
        .to_string();
    assert!(header.contains("'fortran_order': False"), "{header}");
    let shape_s = header
        .split("'shape': (")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let shape = shape_s
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    (descr, shape, b[start + hlen..].to_vec())
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
