//! `zarr.json` parsing: any bytes either parse or give a `MetadataError`; a parsed array's
//! canonical JSON parses again; a small parsed array opens and reads (all fill value) and
//! writes through the whole execution path on an in-memory store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrflow::array::{Array, ArrayOptions, block_on};
use zarrflow::metadata::{ArrayMetadata, NodeMetadata};
use zarrflow::store::{Store, StoreKey};

fuzz_target!(|data: &[u8]| {
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
