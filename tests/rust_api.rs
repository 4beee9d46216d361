//! The Rust API a user expects: safe creation, typed accessors (checked against
//! `zarrflow info --json`), fixed-dimension reads and writes, selections in the user's integer
//! types, named memory stores, typed errors and the library copy (read back by zarr-python and
//! TensorStore).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli as cli_support;
use common::cli::write_npy;

use zarrflow::copy::{CopyError, CopyOptions, CopyProgress, Layout, copy, plan_copy};
use zarrflow::hierarchy::{Group, HierarchyError};
use zarrflow::ndarray::{Array1, Array2, Array3, ArrayD, Ix2, Ix3, array, s};
use zarrflow::{
    Array, ArrayError, ArrayOptions, ArraySpec, CodecSpec, DataType, Store, StoreKey, StoreOptions,
    sel,
};

fn test_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test-data")
}

fn key(k: &str) -> StoreKey {
    StoreKey::new(k).unwrap()
}

fn local(dir: &Path) -> Store {
    Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap()
}

/// Re-creating over an existing array is refused; overwriting deletes the old data, so no
/// old chunk is readable through the new array (the int32-over-float32 hazard).
async fn create_is_safe_on(store: &Store) {
    let path = key("a");
    let spec = ArraySpec::of::<f32>([8, 8])
        .shard_shape([4, 4])
        .inner_chunk_shape([2, 2]);
    let a = Array::create(store, &path, &spec, ArrayOptions::default())
        .await
        .unwrap();
    a.view().write_scalar(1.0f32).await.unwrap();

    let as_int = ArraySpec::of::<i32>([8, 8])
        .shard_shape([4, 4])
        .inner_chunk_shape([2, 2]);
    let refused = Array::create(store, &path, &as_int, ArrayOptions::default()).await;
    let err = refused.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert!(err.to_string().contains("zarr.json"), "{err}");
    // the old array is untouched
    let still = Array::open_in(store, &path, ArrayOptions::default())
        .await
        .unwrap();
    assert_eq!(still.data_type(), DataType::Float32);
    assert!(
        still
            .view()
            .read::<f32>()
            .await
            .unwrap()
            .iter()
            .all(|&v| v == 1.0)
    );

    let b = Array::create_overwrite(store, &path, &as_int, ArrayOptions::default())
        .await
        .unwrap();
    let values = b.view().read::<i32>().await.unwrap();
    assert!(
        values.iter().all(|&v| v == 0),
        "old chunks read through the new array: {values:?}"
    );
    let left = store.list_prefix(&path).await.unwrap();
    assert_eq!(
        left,
        vec![key("a/zarr.json")],
        "only the new metadata is stored"
    );

    // a group is a node too; and objects without a zarr.json are not adopted
    Group::create(store, &key("g"), Default::default(), false)
        .await
        .unwrap();
    let over_group = Array::create(store, &key("g"), &spec, ArrayOptions::default()).await;
    assert!(over_group.unwrap_err().is_already_exists());
    store
        .put(&key("stale/c/0/0"), bytes::Bytes::from_static(b"old"))
        .await
        .unwrap();
    let stale = Array::create(store, &key("stale"), &spec, ArrayOptions::default()).await;
    assert!(
        matches!(
            stale,
            Err(ArrayError::Hierarchy(HierarchyError::NotEmpty { .. }))
        ),
        "{stale:?}"
    );
    let replaced = Array::create_overwrite(store, &key("stale"), &spec, ArrayOptions::default())
        .await
        .unwrap();
    assert!(
        replaced
            .view()
            .read::<f32>()
            .await
            .unwrap()
            .iter()
            .all(|&v| v == 0.0)
    );
}

#[tokio::test]
async fn create_refuses_existing_nodes_and_overwrite_deletes_old_data_memory() {
    create_is_safe_on(&Store::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_refuses_existing_nodes_and_overwrite_deletes_old_data_local() {
    let tmp = tempfile::tempdir().unwrap();
    create_is_safe_on(&local(tmp.path())).await;
    // overwriting a layout with nested chunk directories by one whose chunk key is a file
    // works: the old directories are removed, not left in the way
    let store = local(tmp.path());
    let old = ArraySpec::of::<u8>([4, 4]).shard_shape([1, 1]);
    let a = Array::create(&store, &key("n"), &old, ArrayOptions::default())
        .await
        .unwrap();
    a.view().write_scalar(3u8).await.unwrap();
    assert!(tmp.path().join("n/c/0").is_dir());
    let flat = ArraySpec::of::<u8>([4, 4])
        .shard_shape([4, 4])
        .chunk_key_encoding(zarrflow::metadata::ChunkKeyEncodingSpec::V2 { separator: '.' });
    let b = Array::create_overwrite(&store, &key("n"), &flat, ArrayOptions::default())
        .await
        .unwrap();
    b.view().write_scalar(5u8).await.unwrap();
    assert!(
        !tmp.path().join("n/c").exists(),
        "old chunk directories are gone"
    );
    assert!(b.view().read::<u8>().await.unwrap().iter().all(|&v| v == 5));
}

/// Runs the built CLI's `info --json` on a local array.
fn info_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&cli_support::ok(&[
        "info",
        "--json",
        path.to_str().unwrap(),
    ]))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accessors_report_what_info_json_prints() {
    let fixtures = [
        "zarr-python/sharded_index_start",
        "zarr-python/dtype_uint16",
        "zarr-python/dimension_names_attributes",
        "zarr-python/fill_nan_float64",
        "zarr-python/fill_uint64_max",
        "zarr-python/sharded_transpose",
        "zarr-python/rank0_int32",
        "tensorstore/dtype_complex128",
        "hand-built/raw_bits_r16",
    ];
    for name in fixtures {
        let path = test_data().join("fixtures").join(name);
        let a = Array::open(path.to_str().unwrap()).await.unwrap();
        let cli = info_json(&path);
        // one source: the whole record is what the CLI prints
        assert_eq!(serde_json::to_value(a.info()).unwrap(), cli, "{name}");
        assert_eq!(cli["shape"], serde_json::json!(a.shape()), "{name}");
        assert_eq!(cli["data_type"], a.data_type().to_string(), "{name}");
        assert_eq!(cli["zarr_format"], a.zarr_format(), "{name}");
        assert_eq!(cli["sharded"], a.shard_shape().is_some(), "{name}");
        let sharded = a.shard_shape().is_some();
        let grid_chunk = serde_json::json!(if sharded {
            a.shard_shape()
        } else {
            a.chunk_shape()
        });
        assert_eq!(cli["chunk_shape"], grid_chunk, "{name}");
        assert_eq!(
            cli["inner_chunk_shape"],
            serde_json::json!(a.inner_chunk_shape()),
            "{name}"
        );
        assert_eq!(
            cli["codecs"],
            serde_json::to_value(a.codecs()).unwrap(),
            "{name}"
        );
        assert_eq!(
            cli["dimension_names"],
            serde_json::json!(a.dimension_names()),
            "{name}"
        );
        assert_eq!(
            cli["attributes"],
            serde_json::json!(a.attributes()),
            "{name}"
        );
        assert_eq!(cli["chunk_grid"], a.chunk_grid().to_value(), "{name}");
        assert_eq!(a.fill_value_bytes().len(), a.data_type().size(), "{name}");
    }
    // typed fill values, exact
    let nan = Array::open(
        test_data()
            .join("fixtures/zarr-python/fill_nan_float64")
            .to_str()
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(nan.fill_value::<f64>().unwrap().is_nan());
    assert!(nan.fill_value::<f32>().unwrap_err().is_data_type_mismatch());
    let max = Array::open(
        test_data()
            .join("fixtures/zarr-python/fill_uint64_max")
            .to_str()
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(max.fill_value::<u64>().unwrap(), u64::MAX);
    let named = Array::open(
        test_data()
            .join("fixtures/zarr-python/dimension_names_attributes")
            .to_str()
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(named.dimension_names().is_some());
    assert!(!named.attributes().is_empty());
}

#[tokio::test]
async fn fixed_dimension_reads_and_writes() {
    let a = Array::create_at(
        "memory://",
        &ArraySpec::of::<i32>([6, 8])
            .shard_shape([3, 4])
            .inner_chunk_shape([3, 2]),
    )
    .await
    .unwrap();
    // a 2-D array, a 1-D row broadcast, and a non-contiguous view (every other column)
    let block = Array2::from_shape_fn((2, 3), |(i, j)| i32::try_from(10 * i + j).unwrap());
    a.view()
        .get(&sel![0..2, 0..3])
        .unwrap()
        .write(&block)
        .await
        .unwrap();
    a.view()
        .get(&sel![5, ..])
        .unwrap()
        .write(&Array1::from_elem(8, 7))
        .await
        .unwrap();
    let wide = Array2::from_shape_fn((2, 8), |(i, j)| i32::try_from(100 + 8 * i + j).unwrap());
    let every_other = wide.slice(s![.., ..;2]);
    a.view()
        .get(&sel![2..4, 0..4])
        .unwrap()
        .write(&every_other)
        .await
        .unwrap();

    let all: Array2<i32> = a.view().read_as().await.unwrap();
    assert_eq!(all.slice(s![0..2, 0..3]), block);
    assert!(all.row(5).iter().all(|&v| v == 7));
    assert_eq!(all.slice(s![2..4, 0..4]), every_other);
    // dynamic and fixed reads agree
    let dynamic: ArrayD<i32> = a.view().read().await.unwrap();
    assert_eq!(dynamic, all.clone().into_dyn());
    // the wrong number of dimensions is a typed error before any request
    let err = a.view().read_as::<i32, Ix3>().await.unwrap_err();
    assert!(
        matches!(
            err.shape_mismatch(),
            Some(zarrflow::ShapeMismatch::Rank {
                requested: 3,
                view: 2
            })
        ),
        "{err}"
    );
    let row: Array1<i32> = a.view().get(&sel![5, ..]).unwrap().read_as().await.unwrap();
    assert_eq!(row.len(), 8);
    // read_into: a contiguous buffer, a fixed-dimension one, a strided view of a bigger one
    let mut buf = Array2::<i32>::zeros((6, 8));
    a.view().read_into(&mut buf).await.unwrap();
    assert_eq!(buf, all);
    let mut big = Array3::<i32>::zeros((2, 6, 16));
    let mut strided = big.slice_mut(s![1, .., ..;2]);
    a.view().read_into(&mut strided).await.unwrap();
    assert_eq!(big.slice(s![1, .., ..;2]), all);
    assert!(big.slice(s![0, .., ..]).iter().all(|&v| v == 0));
    let mut wrong = Array2::<i32>::zeros((6, 7));
    let err = a.view().read_into(&mut wrong).await.unwrap_err();
    assert_eq!(
        err.shape_mismatch(),
        Some(&zarrflow::ShapeMismatch::Output {
            output: vec![6, 7],
            view: vec![6, 8]
        })
    );
    // broadcast failures carry both shapes
    let err = a
        .view()
        .get(&sel![0..2, 0..2])
        .unwrap()
        .write(&array![1, 2, 3])
        .await
        .unwrap_err();
    assert_eq!(
        err.shape_mismatch(),
        Some(&zarrflow::ShapeMismatch::Broadcast {
            values: vec![3],
            selection: vec![2, 2]
        })
    );
    // batches take any ndarray array too
    let mut batch = a.batch();
    batch
        .stage(&a.view().get(&sel![4, 0..2]).unwrap(), &array![-1, -2])
        .unwrap();
    batch.commit().await.unwrap();
    let got: Array1<i32> = a
        .view()
        .get(&sel![4, 0..2])
        .unwrap()
        .read_as()
        .await
        .unwrap();
    assert_eq!(got, array![-1, -2]);
}

#[tokio::test]
async fn selections_in_usize_u64_and_i32_read_what_i64_reads() {
    let a = Array::create_at(
        "memory://",
        &ArraySpec::of::<u16>([10, 12]).shard_shape([5, 4]),
    )
    .await
    .unwrap();
    let values = Array2::from_shape_fn((10, 12), |(i, j)| u16::try_from(12 * i + j).unwrap());
    a.view().write(&values).await.unwrap();
    let n: usize = 7;
    let m: u64 = 3;
    let k: i32 = -1;
    let by_usize = a
        .view()
        .get(&sel![1..n;2, m])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    let by_i64 = a
        .view()
        .get(&sel![1i64..7i64;2i64, 3i64])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    assert_eq!(by_usize, by_i64);
    assert_eq!(
        by_usize.iter().copied().collect::<Vec<_>>(),
        vec![15, 39, 63]
    );
    let last = a
        .view()
        .get(&sel![k, ..])
        .unwrap()
        .read_as::<u16, zarrflow::ndarray::Ix1>()
        .await
        .unwrap();
    assert_eq!(last, values.row(9));
    let rows: Vec<usize> = vec![9, 0];
    let cols = Array1::from(vec![11u64, 1]);
    let outer: Array2<u16> = a
        .view()
        .oindex(&sel![&rows, cols.view()])
        .unwrap()
        .read_as()
        .await
        .unwrap();
    assert_eq!(outer, array![[119, 109], [11, 1]]);
    let points = a
        .view()
        .vindex(&sel![[9usize, 0], [11u32, 1]])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    assert_eq!(points.iter().copied().collect::<Vec<_>>(), vec![119, 1]);
    let shape = a.shape().to_vec();
    let whole: Array2<u16> = a
        .view()
        .get(&sel![..shape[0], ..shape[1]])
        .unwrap()
        .read_as()
        .await
        .unwrap();
    assert_eq!(whole, values);
    // a u64 past i64::MAX is out of bounds, not a wrapped negative index
    assert!(
        a.view()
            .get(&sel![u64::MAX, 0])
            .unwrap_err()
            .is_out_of_bounds()
    );
}

#[tokio::test]
async fn named_memory_stores_are_shared_in_the_process() {
    let spec = ArraySpec::of::<u8>([4]);
    let a = Array::create_at("memory://shared-test/x", &spec)
        .await
        .unwrap();
    a.view().write_scalar(9u8).await.unwrap();
    // any later open of the same name sees it, by URL or by handle
    let b = Array::open("memory://shared-test/x").await.unwrap();
    assert_eq!(
        b.view()
            .read::<u8>()
            .await
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        vec![9; 4]
    );
    let c = Array::open_in(
        &Store::memory_named("shared-test"),
        &key("x"),
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(c.url(), "memory://shared-test/x");
    // other names and the anonymous store are separate
    let other = Array::open("memory://other-test/x").await.unwrap_err();
    assert!(other.is_not_found(), "{other}");
    assert!(
        other.to_string().contains("memory://other-test/x;"),
        "well-formed URLs in messages: {other}"
    );
    let anon = Array::open("memory://").await.unwrap_err();
    assert!(anon.to_string().contains("under memory://;"), "{anon}");
    assert!(anon.is_not_found());
    // forgetting a name releases it
    assert!(Store::forget_memory("shared-test"));
    assert!(
        Array::open("memory://shared-test/x")
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(!Store::forget_memory("never-opened-test"));
}

#[test]
fn typed_data_types_and_helpful_names() {
    let spec = ArraySpec::of::<f32>([3]);
    assert_eq!(spec.dtype(), Some(DataType::Float32));
    let err = ArraySpec::new([3], "float33").build().unwrap_err();
    let msg = err.to_string();
    for name in [
        "bool",
        "int8",
        "uint64",
        "float16",
        "float32",
        "complex128",
        "r<bits>",
    ] {
        assert!(msg.contains(name), "{msg}");
    }
    // the blocking facade covers creation and every read and write
    let a = Array::create_at_blocking(
        "memory://",
        &ArraySpec::with_data_type([2, 2], DataType::Int16),
    )
    .unwrap();
    a.view().write_blocking(&array![[1i16, 2], [3, 4]]).unwrap();
    a.view()
        .get(&sel![0, 0])
        .unwrap()
        .write_scalar_blocking(9i16)
        .unwrap();
    let got = a.view().read_as_blocking::<i16, Ix2>().unwrap();
    assert_eq!(got, array![[9, 2], [3, 4]]);
    let mut batch = a.batch();
    batch
        .stage_scalar(&a.view().get(&sel![1, 1]).unwrap(), 0i16)
        .unwrap();
    batch.commit_blocking().unwrap();
    assert_eq!(a.view().read_bytes_blocking().unwrap().len(), 8);
    // and refuses to run inside a runtime instead of deadlocking
    let rt = tokio::runtime::Runtime::new().unwrap();
    let inside = rt.block_on(async { a.view().read_blocking::<i16>() });
    assert!(matches!(inside, Err(ArrayError::BlockingInAsyncContext)));
}

#[tokio::test]
async fn array_spec_round_trips_existing_metadata() {
    for name in [
        "zarr-python/sharded_index_start",
        "zarr-python/blosc_lz4_shuffle",
        "zarr-python/key_v2_dot",
        "zarr-python/dimension_names_attributes",
        "zarr-python/sharded_transpose",
    ] {
        let path = test_data().join("fixtures").join(name);
        let a = Array::open(path.to_str().unwrap()).await.unwrap();
        let spec = ArraySpec::try_from(a.metadata()).unwrap();
        let rebuilt = spec.build().unwrap();
        assert_eq!(rebuilt.to_value(), a.metadata().to_value(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_copy_is_read_exactly_by_zarr_python_and_tensorstore() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = test_data().join("fixtures");
    // (source, layout): unsharded -> sharded, sharded -> unsharded, re-shard keeping the inner
    // chunks, new codecs (blosc's type size follows each array), index at the start
    let cases: Vec<(&str, Layout)> = vec![
        (
            "zarr-python/dtype_float32",
            Layout::keep().shards([10, 6]).chunks([5, 3]),
        ),
        (
            "zarr-python/sharded_dtype_int16",
            Layout::keep().chunks([4, 4]),
        ),
        (
            "tensorstore/dtype_complex128",
            Layout::keep().codecs([CodecSpec::bytes(), CodecSpec::gzip(2)]),
        ),
        ("zarr-python/sharded_index_start", Layout::keep()),
        (
            "zarr-python/dtype_uint16",
            Layout::keep()
                .shards([13, 7])
                .chunks([13, 1])
                .codecs([CodecSpec::bytes(), CodecSpec::blosc_per_array("lz4", 5)])
                .index_location(zarrflow::codec::IndexLocation::Start),
        ),
        (
            "zarr-python/fill_nan_float16",
            Layout::keep().shards([4, 4]),
        ),
        ("zarr-python/dtype_bool", Layout::keep()),
    ];
    let mut list = String::new();
    for (i, (name, layout)) in cases.into_iter().enumerate() {
        let src = local(&fixtures.join(name));
        let dst_dir = tmp.path().join(format!("copy{i}.zarr"));
        let dst = local(&dst_dir);
        let seen = std::sync::Mutex::new(Vec::<CopyProgress>::new());
        let plan = plan_copy(&src, &dst, &layout).await.unwrap();
        let units = plan.units();
        let report = plan
            .run(&CopyOptions::default().with_jobs(2), |p| {
                seen.lock().unwrap().push(p)
            })
            .await
            .unwrap();
        let seen = seen.into_inner().unwrap();
        assert_eq!((report.units, seen.len() as u64), (units, units), "{name}");
        assert_eq!(
            seen.iter().map(|p| p.units_done).max(),
            Some(units),
            "{name}"
        );
        let a = Array::open_in(&src, &StoreKey::root(), ArrayOptions::default())
            .await
            .unwrap();
        let b = Array::open_in(&dst, &StoreKey::root(), ArrayOptions::default())
            .await
            .unwrap();
        if let Some(shards) = &layout.shards {
            assert_eq!(b.shard_shape(), Some(shards.as_slice()), "{name}");
        }
        if layout.chunks.is_some() && layout.shards.is_none() {
            assert_eq!(b.shard_shape(), None, "{name}");
        }
        let data = b.view().read_bytes().await.unwrap();
        assert_eq!(data, a.view().read_bytes().await.unwrap(), "{name}");
        let npy = tmp.path().join(format!("copy{i}.npy"));
        write_npy(&npy, b.data_type().numpy_str(), b.shape(), &data);
        list.push_str(&format!("{}\t{}\n", dst_dir.display(), npy.display()));
    }
    // a copy onto itself or into itself is refused; onto an existing node needs overwrite
    let src = local(&fixtures.join("zarr-python/dtype_bool"));
    let into = src.sub_store(&key("inner"));
    assert!(matches!(
        copy(&src, &into, &Layout::keep(), &CopyOptions::default()).await,
        Err(CopyError::Overlap { .. })
    ));
    let dst = local(&tmp.path().join("copy6.zarr"));
    assert!(matches!(
        copy(&src, &dst, &Layout::keep(), &CopyOptions::default()).await,
        Err(CopyError::DestinationExists { .. })
    ));
    copy(
        &src,
        &dst,
        &Layout::keep(),
        &CopyOptions::default().with_overwrite(true),
    )
    .await
    .unwrap();
    // a hierarchy: groups with attributes, every array
    let h = local(&fixtures.join("zarr-python/hierarchy"));
    let h_dst_dir = tmp.path().join("h.zarr");
    let report = copy(
        &h,
        &local(&h_dst_dir),
        &Layout::keep(),
        &CopyOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!((report.arrays, report.groups), (3, 5));
    let g = Group::open(&local(&h_dst_dir), &StoreKey::root())
        .await
        .unwrap();
    assert_eq!(g.attributes()["title"], "zarrflow hierarchy fixture");
    for arr in ["arr_root", "g1/arr1", "g1/g2/arr2"] {
        let a = Array::open_in(&h, &key(arr), ArrayOptions::default())
            .await
            .unwrap();
        let b = Array::open_in(&local(&h_dst_dir), &key(arr), ArrayOptions::default())
            .await
            .unwrap();
        let data = b.view().read_bytes().await.unwrap();
        assert_eq!(data, a.view().read_bytes().await.unwrap(), "{arr}");
        let npy = tmp.path().join(format!("{}.npy", arr.replace('/', "_")));
        write_npy(&npy, b.data_type().numpy_str(), b.shape(), &data);
        list.push_str(&format!(
            "{}\t{}\n",
            h_dst_dir.join(arr).display(),
            npy.display()
        ));
    }
    let pairs = tmp.path().join("pairs.txt");
    std::fs::write(&pairs, &list).unwrap();
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "run scripts/python-env.sh (scripts/test.sh does)"
    );
    let out = Command::new(&python)
        .arg(test_data().join("check_array.py"))
        .arg("--batch")
        .arg(&pairs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "zarr-python / TensorStore disagree:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.contains(": OK")).count(),
        2 * list.lines().count(),
        "{stdout}"
    );
}

/// `read_bytes_into` fills a caller's byte buffer in place (what the Python module reads
/// NumPy arrays with): the same bytes as `read_bytes`, for a strided view of a sharded
/// array, a bool array too; a buffer of the wrong size is refused before any request.
#[tokio::test]
async fn read_bytes_into_fills_a_caller_buffer_of_exactly_the_view_size() {
    let spec = ArraySpec::of::<u16>([20, 30])
        .shard_shape([10, 10])
        .inner_chunk_shape([5, 5]);
    let a = Array::create_at("memory://read-bytes-into/a", &spec)
        .await
        .unwrap();
    let values = Array2::from_shape_fn((20, 30), |(i, j)| (i * 30 + j) as u16);
    a.view().write(&values).await.unwrap();
    let view = a.view().get(&sel![3..17;3, ..;-4]).unwrap();
    let mut out = vec![0xAAu8; 5 * 8 * 2];
    view.read_bytes_into(&mut out).await.unwrap();
    assert_eq!(out, view.read_bytes().await.unwrap());
    let first = u16::from_ne_bytes([out[0], out[1]]);
    assert_eq!(first, values[[3, 29]]);
    let mut short = vec![0u8; 5 * 8 * 2 - 1];
    let err = view.read_bytes_into(&mut short).await.unwrap_err();
    assert!(err.shape_mismatch().is_some(), "{err}");

    let b = Array::create_at("memory://read-bytes-into/b", &ArraySpec::of::<bool>([4]))
        .await
        .unwrap();
    b.view()
        .get(&sel![1..3])
        .unwrap()
        .write_scalar(true)
        .await
        .unwrap();
    let mut out = vec![7u8; 4];
    b.view().read_bytes_into(&mut out).await.unwrap();
    assert_eq!(out, vec![0, 1, 1, 0]);
}
