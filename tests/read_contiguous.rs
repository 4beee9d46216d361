//! Whole chunks whose cells form one contiguous run of the result are decoded straight into
//! it (1-D arrays, chunks spanning whole rows, a read of exactly one chunk): values equal
//! the reference through the local store and the memory store, sharded and unsharded,
//! mixed with partial chunks, on rounds large enough for the parallel copy stage; a corrupt
//! chunk fails with a typed error naming it.

use bytes::Bytes;
use ndarray::{ArrayD, IxDyn};
use serde_json::json;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrs::metadata::v3::MetadataV3;

fn zstd_codecs() -> Vec<MetadataV3> {
    serde_json::from_value(json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 1, "checksum": false}}
    ]))
    .unwrap()
}

/// Creates `spec` in `store` and writes `values` (the cell's C-order index) into it.
async fn create(store: &Store, spec: &ArraySpec, shape: &[u64]) -> (Array, ArrayD<u32>) {
    let array = Array::create(store, &StoreKey::root(), spec, ArrayOptions::default())
        .await
        .unwrap();
    let n: u64 = shape.iter().product();
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let values = ArrayD::from_shape_vec(IxDyn(&dims), (0..n as u32).collect()).unwrap();
    array.view().write(&values.view()).await.unwrap();
    (array, values)
}

async fn read(array: &Array, sel: &str) -> Result<ArrayD<u32>, ArrayError> {
    array
        .view()
        .get(&Selection::parse(sel).unwrap())?
        .read::<u32>()
        .await
}

fn reference(values: &ArrayD<u32>, sel: &str) -> ArrayD<u32> {
    // the selections below are of the form `a:b` or `a:b, c:d`
    let ranges: Vec<(usize, usize)> = sel
        .split(',')
        .map(|r| {
            let (a, b) = r.trim().split_once(':').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    let mut v = values.view();
    for (axis, (a, b)) in ranges.into_iter().enumerate() {
        v.slice_axis_inplace(ndarray::Axis(axis), ndarray::Slice::from(a..b));
    }
    v.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contiguous_whole_chunks_read_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let local = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    for store in [Store::memory(), local.clone()] {
        // 1-D, unsharded: 2^20 cells (4 MiB) in chunks of 2^16
        let shape = [1u64 << 20];
        let spec = ArraySpec::new(shape.to_vec(), "uint32")
            .shard_shape(vec![1 << 16])
            .codecs(zstd_codecs());
        let (a, values) = create(
            &store.sub_store(&StoreKey::new("u1").unwrap()),
            &spec,
            &shape,
        )
        .await;
        for sel in ["0:1048576", "65536:131072", "1000:1048000", "70000:70001"] {
            assert_eq!(
                read(&a, sel).await.unwrap(),
                reference(&values, sel),
                "1-D {sel}"
            );
        }
        // 1-D, sharded: shards of 2^18, inner chunks of 2^14
        let spec = ArraySpec::new(shape.to_vec(), "uint32")
            .shard_shape(vec![1 << 18])
            .inner_chunk_shape(vec![1 << 14])
            .codecs(zstd_codecs());
        let (a, values) = create(
            &store.sub_store(&StoreKey::new("s1").unwrap()),
            &spec,
            &shape,
        )
        .await;
        for sel in ["0:1048576", "16384:32768", "5:1048570", "300000:700000"] {
            assert_eq!(
                read(&a, sel).await.unwrap(),
                reference(&values, sel),
                "1-D sharded {sel}"
            );
        }
        // 2-D, sharded, inner chunks spanning whole rows of the shard and of the array
        let shape = [512u64, 640];
        let spec = ArraySpec::new(shape.to_vec(), "uint32")
            .shard_shape(vec![128, 640])
            .inner_chunk_shape(vec![8, 640])
            .codecs(zstd_codecs());
        let (a, values) = create(
            &store.sub_store(&StoreKey::new("s2").unwrap()),
            &spec,
            &shape,
        )
        .await;
        for sel in [
            "0:512, 0:640",
            "8:16, 0:640",
            "3:509, 0:640",
            "100:300, 1:639",
        ] {
            assert_eq!(
                read(&a, sel).await.unwrap(),
                reference(&values, sel),
                "2-D {sel}"
            );
        }
    }
    // a corrupt chunk read straight into the result is a typed error naming it
    let store = Store::memory();
    let shape = [1u64 << 20];
    let spec = ArraySpec::new(shape.to_vec(), "uint32")
        .shard_shape(vec![1 << 16])
        .codecs(zstd_codecs());
    let (a, _) = create(&store, &spec, &shape).await;
    store
        .put(
            &StoreKey::new("c/7").unwrap(),
            Bytes::from_static(b"not a zstd frame"),
        )
        .await
        .unwrap();
    for sel in ["0:1048576", "458752:524288"] {
        let err = read(&a, sel).await.unwrap_err();
        assert!(matches!(err, ArrayError::Codec(_)), "{sel}: {err:?}");
        assert!(err.to_string().contains("c/7"), "{sel}: {err}");
    }
}
