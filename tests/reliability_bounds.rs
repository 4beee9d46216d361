//! Resource bounds: selections and metadata that would need absurd memory are refused with
//! an error before anything is allocated, and a long read/write loop keeps memory flat.

use std::time::{Duration, Instant};

use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::codec::CodecError;
use zarrflow::index::Selection;
use zarrflow::metadata::{ArrayMetadata, ArraySpec, MetadataError};
use zarrflow::store::{Store, StoreKey};

#[tokio::test]
async fn reading_2_pow_62_elements_whole_is_refused_before_allocation() {
    for (dt, shape) in [
        ("uint8", vec![1u64 << 31, 1 << 31]),
        ("uint64", vec![1 << 31, 1 << 31]),
        ("uint16", vec![1 << 20, 1 << 20, 1 << 22]),
    ] {
        let store = Store::memory();
        let spec = ArraySpec::new(shape.clone(), dt)
            .shard_shape(vec![1 << 20; shape.len()])
            .inner_chunk_shape(vec![1 << 10; shape.len()]);
        let spec = if shape.len() == 3 {
            spec.shard_shape(vec![1 << 10; 3])
                .inner_chunk_shape(vec![1 << 5; 3])
        } else {
            spec
        };
        let a = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
            .await
            .unwrap();
        let start = Instant::now();
        let err = a.view().read_bytes().await.unwrap_err();
        assert!(
            matches!(err, ArrayError::TooLarge(_)),
            "{dt} {shape:?}: {err:?}"
        );
        let err = a.view().read::<u8>().await.unwrap_err();
        assert!(
            matches!(
                err,
                ArrayError::TooLarge(_) | ArrayError::DataTypeMismatch { .. }
            ),
            "{err:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(2));
        // a small corner of the same array reads (fill value)
        let corner = a
            .view()
            .get(&Selection::parse(&vec!["0:3"; shape.len()].join(",")).unwrap())
            .unwrap()
            .read_bytes()
            .await
            .unwrap();
        assert!(corner.iter().all(|&b| b == 0));
    }
}

#[tokio::test]
async fn a_shard_index_claiming_2_pow_40_entries_is_refused_before_allocation() {
    // creation
    let spec = ArraySpec::new(vec![1 << 20, 1 << 20], "uint8")
        .shard_shape(vec![1 << 20, 1 << 20])
        .inner_chunk_shape(vec![1, 1]);
    let store = Store::memory();
    let err = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("exceeds the limit"), "{err}");
    // parsing a stored document
    let doc = r#"{"zarr_format":3,"node_type":"array","shape":[1099511627776],"data_type":"uint8",
        "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1099511627776]}},
        "chunk_key_encoding":{"name":"default"},"fill_value":0,
        "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[1],
        "codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}}]}"#;
    let err = ArrayMetadata::parse(doc.as_bytes(), "big/zarr.json").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("big/zarr.json") && text.contains("exceeds"),
        "{text}"
    );
    assert!(
        matches!(
            err,
            MetadataError::Codec {
                source: CodecError::TooManyShardEntries { .. },
                ..
            }
        ),
        "{err:?}"
    );
    store
        .put(
            &StoreKey::new("zarr.json").unwrap(),
            doc.as_bytes().to_vec().into(),
        )
        .await
        .unwrap();
    assert!(
        Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn chunk_shapes_whose_buffers_overflow_are_refused() {
    // a chunk of 2^62 uint64 elements: its byte size overflows u64
    let doc = r#"{"zarr_format":3,"node_type":"array","shape":[4611686018427387904],
        "data_type":"uint64","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4611686018427387904]}},
        "chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}"#;
    let err = ArrayMetadata::parse(doc.as_bytes(), "huge/zarr.json").unwrap_err();
    assert!(err.to_string().contains("huge/zarr.json"), "{err}");
}
