//! `zarr.json` and Zarr v2 `.zarray` parsing: any bytes either parse or give a
//! `MetadataError`; a parsed array's canonical JSON parses again (a `.zarray` that parses
//! and can be written back as v2 parses again from that, with the same shape); a small
//! parsed array opens and reads (all fill value) and writes through the whole execution
//! path on an in-memory store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrflow::array::{Array, ArrayOptions, block_on};
use zarrflow::metadata::{ArrayMetadata, NodeMetadata, v2};
use zarrflow::store::{Store, StoreKey};

fuzz_target!(|data: &[u8]| {
    zarray(data);
    let Ok(NodeMetadata::Array(meta)) = NodeMetadata::parse(data, "zarr.json") else {
        return;
    };
    let again = ArrayMetadata::parse(&meta.to_json(), "zarr.json (canonical)")
        .expect("the canonical form of a parsed array must parse");
    assert_eq!(again.shape(), meta.shape());
    let rank = meta.shape().len();
    let _ = meta.chunk_key(&vec![0; rank]);
    // Open and read small arrays; nothing is stored, so every chunk reads as the fill value.
    let cells = meta.shape().iter().try_fold(1u64, |a, &n| a.checked_mul(n));
    if cells.is_none_or(|c| c > 4096) {
        return;
    }
    let _ = block_on(async {
        let store = Store::memory();
        let root = StoreKey::root();
        let key = StoreKey::new("zarr.json").expect("a valid key");
        store.put(&key, data.to_vec().into()).await.ok()?;
        let opts = ArrayOptions::default().with_decode_threads(1);
        let array = Array::open_in(&store, &root, opts).await.ok()?;
        let bytes = array.view().read_bytes().await.ok()?;
        let elem = meta.data_type().fixed_size()?;
        assert_eq!(bytes.len() as u64, cells? * elem as u64);
        // Write one value everywhere and read it back.
        let value = vec![1u8; elem];
        array.view().write_bytes(&value, &[]).await.ok()?;
        let back = array.view().read_bytes().await.ok()?;
        assert!(back.chunks_exact(elem).all(|v| v == value.as_slice()));
        Some(())
    });
});

/// The same bytes as a v2 `.zarray` (no `.zattrs`).
fn zarray(data: &[u8]) {
    let Ok(meta) = v2::parse_array(data, None, ".zarray", ".zattrs") else {
        return;
    };
    let again = ArrayMetadata::parse(&meta.to_json(), "zarr.json (from .zarray)")
        .expect("the canonical v3 form of a parsed .zarray must parse");
    assert_eq!(again.shape(), meta.shape());
    if let Ok((doc, _)) = v2::array_to_v2(&meta) {
        let text = serde_json::to_vec(&doc).expect("JSON");
        let back = v2::parse_array(&text, None, ".zarray (written)", ".zattrs")
            .expect("a .zarray zarrflow writes must parse");
        assert_eq!(back.shape(), meta.shape());
    }
}
