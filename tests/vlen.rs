//! Variable-length data (`string`, `bytes`): reads and writes through every selection kind,
//! unsharded and sharded, against a naive model; partial shard writes keep untouched inner
//! chunks verbatim; hostile chunk bytes are typed errors naming the chunk.

mod common;

use std::sync::Arc;

use bytes::Bytes;
use common::fixtures::{entries, key, test_data};
use ndarray::{ArrayD, IxDyn, arr1};
use object_store::local::LocalFileSystem;
use serde_json::Value;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::codec::CodecError;
use zarrflow::index::{Dialect, SelectionMode};
use zarrflow::metadata::{ArraySpec, CodecSpec};
use zarrflow::store::wrappers::CountingStore;
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrflow::{DataType, Selection};

fn words(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 5 {
            0 => String::new(),
            1 => format!("w{i}"),
            2 => "h\u{e9}llo \u{1F600}".repeat(i % 3 + 1),
            3 => "x".repeat(i % 17),
            _ => format!("{i}-\u{3b1}\u{3b2}"),
        })
        .collect()
}

async fn create(spec: &ArraySpec) -> (Store, Array) {
    let store = Store::open("memory://", StoreOptions::default()).unwrap();
    let a = Array::create(&store, &StoreKey::root(), spec, ArrayOptions::default())
        .await
        .unwrap();
    (store, a)
}

fn specs() -> Vec<(&'static str, ArraySpec)> {
    vec![
        (
            "unsharded",
            ArraySpec::with_data_type([7, 5], DataType::String).shard_shape([3, 2]),
        ),
        (
            "sharded",
            ArraySpec::with_data_type([7, 5], DataType::String)
                .shard_shape([4, 4])
                .inner_chunk_shape([2, 2]),
        ),
    ]
}

#[tokio::test]
async fn strings_round_trip_through_every_selection_kind() {
    for (name, spec) in specs() {
        let (_store, a) = create(&spec).await;
        let all = a.view().read_vlen::<String>().await.unwrap();
        assert!(all.iter().all(String::is_empty), "{name}: fill is \"\"");
        let model = ArrayD::from_shape_vec(IxDyn(&[7, 5]), words(35)).unwrap();
        a.view().write_vlen(&model).await.unwrap();
        assert_eq!(
            a.view().read_vlen::<String>().await.unwrap(),
            model,
            "{name}"
        );
        // basic
        let got = a
            .view()
            .get(&Selection::parse("1:6:2, ::-1").unwrap())
            .unwrap()
            .read_vlen::<String>()
            .await
            .unwrap();
        let want = model
            .slice(ndarray::s![1..6;2, ..;-1])
            .to_owned()
            .into_dyn();
        assert_eq!(got, want, "{name} basic");
        // oindex
        let got = a
            .view()
            .oindex(&Selection::parse("[6, 0, 6], [4, 1]").unwrap())
            .unwrap()
            .read_vlen::<String>()
            .await
            .unwrap();
        let want: Vec<String> = [6, 0, 6]
            .iter()
            .flat_map(|&i| [4, 1].map(|j| model[[i, j]].clone()))
            .collect();
        assert_eq!(got.into_raw_vec_and_offset().0, want, "{name} oindex");
        // vindex
        let got = a
            .view()
            .vindex(&Selection::parse("[0, 6, 3, 3], [4, 0, 2, 2]").unwrap())
            .unwrap()
            .read_vlen::<String>()
            .await
            .unwrap();
        let want: Vec<String> = [(0, 4), (6, 0), (3, 2), (3, 2)]
            .iter()
            .map(|&(i, j)| model[[i, j]].clone())
            .collect();
        assert_eq!(got.into_raw_vec_and_offset().0, want, "{name} vindex");
        // a broadcast write of a row into a strided selection
        let row = arr1(&["a", "", "\u{e9}\u{e9}"].map(String::from));
        a.view()
            .get(&Selection::parse("::3, 1:4").unwrap())
            .unwrap()
            .write_vlen(&row)
            .await
            .unwrap();
        let mut model = model.clone();
        for i in [0, 3, 6] {
            for (k, j) in (1..4).enumerate() {
                model[[i, j]] = row[k].clone();
            }
        }
        assert_eq!(
            a.view().read_vlen::<String>().await.unwrap(),
            model,
            "{name}"
        );
        // writing the fill value everywhere removes every chunk
        a.view().write_vlen_scalar(String::new()).await.unwrap();
        assert!(
            a.view()
                .read_vlen::<String>()
                .await
                .unwrap()
                .iter()
                .all(String::is_empty),
            "{name}"
        );
    }
}

#[tokio::test]
async fn read_and_write_take_string_and_bytes_elements_as_they_take_fixed_size_ones() {
    for (name, spec) in specs() {
        let (_store, a) = create(&spec).await;
        let all = ArrayD::from_shape_vec(IxDyn(&[7, 5]), words(35)).unwrap();
        a.view().write(&all).await.unwrap();
        assert_eq!(a.view().read::<String>().await.unwrap(), all, "{name}");
        assert_eq!(
            a.view().read_vlen::<String>().await.unwrap(),
            all,
            "{name}: read and read_vlen agree"
        );
        let sel = Selection::parse("1:6:2, ::-2").unwrap();
        let view = a.view().get(&sel).unwrap();
        view.write_scalar("\u{3a9}".to_string()).await.unwrap();
        let rows: ndarray::Array2<String> = view.read_as().await.unwrap();
        assert_eq!(rows.dim(), (3, 3), "{name}");
        assert!(rows.iter().all(|s| s == "\u{3a9}"), "{name}");
        let mut expected = all.clone();
        for i in [1, 3, 5] {
            for j in [4, 2, 0] {
                expected[[i, j]] = "\u{3a9}".to_string();
            }
        }
        assert_eq!(a.view().read::<String>().await.unwrap(), expected, "{name}");
        // the wrong element type either way is refused before any request
        assert!(
            a.view()
                .read::<Vec<u8>>()
                .await
                .unwrap_err()
                .is_data_type_mismatch()
        );
        assert!(
            a.view()
                .read::<f32>()
                .await
                .unwrap_err()
                .is_data_type_mismatch()
        );
        assert!(
            a.view()
                .write_scalar(1.5f32)
                .await
                .unwrap_err()
                .is_data_type_mismatch()
        );
    }
    let (_store, f) = create(&ArraySpec::of::<f32>([3])).await;
    assert!(
        f.view()
            .read::<String>()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert!(
        f.view()
            .write_scalar(b"x".to_vec())
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    let (_store, b) = create(&ArraySpec::with_data_type([2], DataType::Bytes)).await;
    b.view()
        .write(&arr1(&[vec![0u8, 255], vec![]]))
        .await
        .unwrap();
    assert_eq!(
        b.view()
            .read::<Vec<u8>>()
            .await
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![vec![0u8, 255], vec![]]
    );
}

#[tokio::test]
async fn bytes_round_trip_and_the_wrong_element_type_is_refused() {
    let spec = ArraySpec::with_data_type([6], DataType::Bytes)
        .shard_shape([4])
        .inner_chunk_shape([2]);
    let (_store, a) = create(&spec).await;
    let values = arr1(&[
        vec![0xff, 0],
        vec![],
        b"abc".to_vec(),
        vec![0; 300],
        vec![1],
        vec![],
    ]);
    a.view().write_vlen(&values).await.unwrap();
    assert_eq!(
        a.view().read_vlen::<Vec<u8>>().await.unwrap(),
        values.clone().into_dyn()
    );
    assert!(
        a.view()
            .read_vlen::<String>()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert!(
        a.view()
            .read::<u8>()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert!(
        a.view()
            .read_bytes()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert!(
        a.view()
            .write_bytes(&[0; 48], &[6])
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    // batches stage raw bytes: refused for variable-length arrays
    let mut batch = a.batch();
    assert!(
        batch
            .stage_bytes(&a.view(), &[0; 48], &[6])
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert_eq!(
        a.view().read_vlen::<Vec<u8>>().await.unwrap(),
        values.into_dyn()
    );
}

fn mode_of(m: &str) -> SelectionMode {
    match m {
        "basic" => SelectionMode::Basic,
        "oindex" => SelectionMode::Outer,
        "vindex" => SelectionMode::Vectorized,
        other => panic!("unknown mode {other}"),
    }
}

/// The fixture's JSON values as byte strings (strings as UTF-8).
fn json_values(v: &Value) -> Vec<Vec<u8>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| match e {
            Value::String(s) => s.as_bytes().to_vec(),
            Value::Array(b) => b.iter().map(|x| x.as_u64().unwrap() as u8).collect(),
            other => panic!("{other}"),
        })
        .collect()
}

/// Reads `view` as byte strings, whatever the variable-length type.
async fn read_any(view: &zarrflow::ArrayView) -> Result<Vec<Vec<u8>>, ArrayError> {
    Ok(match view.array().data_type() {
        DataType::String => view
            .read_vlen::<String>()
            .await?
            .into_iter()
            .map(String::into_bytes)
            .collect(),
        _ => view.read_vlen::<Vec<u8>>().await?.into_iter().collect(),
    })
}

#[tokio::test]
async fn zarr_python_string_and_bytes_fixtures_read_exactly_with_their_selections() {
    let (dir, manifest) = test_data().expect("test-data");
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    let fixtures = entries(&manifest, "vlen_arrays");
    assert!(fixtures.len() >= 7, "{}", fixtures.len());
    let (mut arrays, mut selections) = (0, 0);
    for f in fixtures {
        let path = f["path"].as_str().unwrap();
        let a = Array::open_in(&store, &key(path), ArrayOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let kind = f["kind"].as_str().unwrap();
        assert_eq!(a.data_type().name(), kind, "{path}");
        assert_eq!(
            u64::from(a.zarr_format()),
            f["zarr_format"].as_u64().unwrap()
        );
        let expected: Value = serde_json::from_slice(
            &std::fs::read(dir.join(f["expected"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(
            read_any(&a.view()).await.unwrap(),
            json_values(&expected["values"]),
            "{path}"
        );
        arrays += 1;
        for s in expected["selections"].as_array().unwrap() {
            let text = s["selection"].as_str().unwrap();
            let mode = mode_of(s["mode"].as_str().unwrap());
            let view = a
                .view()
                .select(&Selection::parse(text).unwrap(), mode, Dialect::Positional)
                .unwrap_or_else(|e| panic!("{path} [{text}]: {e}"));
            let shape: Vec<u64> = serde_json::from_value(s["shape"].clone()).unwrap();
            assert_eq!(view.shape(), shape, "{path} [{text}] {mode:?}");
            assert_eq!(
                read_any(&view).await.unwrap(),
                json_values(&s["values"]),
                "{path} [{text}] {mode:?}"
            );
            selections += 1;
        }
    }
    assert!(
        arrays >= 7 && selections >= 70,
        "{arrays} arrays, {selections} selections"
    );
}

#[tokio::test]
async fn a_selection_in_a_sharded_string_array_fetches_only_its_inner_chunk() {
    let (dir, _) = test_data().expect("test-data");
    let counting = CountingStore::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "file://test-data",
        StoreOptions::default(),
    )
    .unwrap();
    // (8, 6) in shards of (4, 6), inner chunks of (2, 3): one inner chunk of shard 0
    let a = Array::open_in(
        &store,
        &key("fixtures/zarr-python-vlen/string_v3_sharded_zstd"),
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    let view = a
        .view()
        .get(&Selection::parse("0:2, 3:6").unwrap())
        .unwrap();
    counting.reset();
    let first = view.read_vlen::<String>().await.unwrap();
    let c = counting.counts();
    assert_eq!(
        (c.get, c.get_range),
        (0, 2),
        "index + one inner chunk: {:?}",
        counting.log()
    );
    counting.reset();
    assert_eq!(view.read_vlen::<String>().await.unwrap(), first);
    assert_eq!(counting.counts().get_range, 1, "{:?}", counting.log());
    let whole = a.view().read_vlen::<String>().await.unwrap();
    assert_eq!(
        first,
        whole.slice(ndarray::s![0..2, 3..6]).to_owned().into_dyn()
    );
}

#[tokio::test]
async fn a_partial_write_of_a_string_shard_keeps_untouched_inner_chunks_verbatim() {
    let spec = ArraySpec::with_data_type([4, 4], DataType::String)
        .shard_shape([4, 4])
        .inner_chunk_shape([2, 2]);
    let (store, a) = create(&spec).await;
    let model = ArrayD::from_shape_vec(IxDyn(&[4, 4]), words(16)).unwrap();
    a.view().write_vlen(&model).await.unwrap();
    let shard_key = StoreKey::new("c/0/0").unwrap();
    let before = store.get(&shard_key).await.unwrap();
    let sharding = a.metadata().codecs().sharding().unwrap().clone();
    let index_codec = sharding.index_codec(&[4, 4]).unwrap();
    let old = index_codec.decode_from_shard(&before, "c/0/0").unwrap();
    a.view()
        .get(&Selection::parse("3, 3").unwrap())
        .unwrap()
        .write_vlen_scalar("new \u{2603}".to_string())
        .await
        .unwrap();
    let after = store.get(&shard_key).await.unwrap();
    let new = index_codec.decode_from_shard(&after, "c/0/0").unwrap();
    for i in 0..3 {
        let (o, n) = (old.get(i).unwrap(), new.get(i).unwrap());
        assert_eq!(
            before[o.start as usize..o.end as usize],
            after[n.start as usize..n.end as usize],
            "inner chunk {i}"
        );
    }
    assert_ne!(old.get(3), None);
    let got = a.view().read_vlen::<String>().await.unwrap();
    let mut want = model.clone();
    want[[3, 3]] = "new \u{2603}".into();
    assert_eq!(got, want);
}

/// A one-chunk `string` array with no compressor, whose chunk `c/0` is `bytes`.
async fn with_chunk(bytes: Vec<u8>, dtype: DataType) -> (Array, ArrayError) {
    let spec = ArraySpec::with_data_type([3], dtype)
        .shard_shape([3])
        .codecs([CodecSpec::bytes()]);
    let (store, a) = create(&spec).await;
    assert_eq!(
        a.codecs()[0].name,
        if dtype == DataType::String {
            "vlen-utf8"
        } else {
            "vlen-bytes"
        }
    );
    store
        .put(&StoreKey::new("c/0").unwrap(), Bytes::from(bytes))
        .await
        .unwrap();
    let e = match dtype {
        DataType::String => a.view().read_vlen::<String>().await.map(drop),
        _ => a.view().read_vlen::<Vec<u8>>().await.map(drop),
    }
    .unwrap_err();
    (a, e)
}

fn encode(values: &[&[u8]]) -> Vec<u8> {
    let mut out = (values.len() as u32).to_le_bytes().to_vec();
    for v in values {
        out.extend((v.len() as u32).to_le_bytes());
        out.extend(*v);
    }
    out
}

#[tokio::test]
async fn hostile_vlen_chunks_are_typed_errors_naming_the_chunk() {
    let good = encode(&[b"ab", b"", b"c"]);
    let mut past_end = good.clone();
    past_end[4..8].copy_from_slice(&1000u32.to_le_bytes());
    let mut huge_len = good.clone();
    huge_len[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut huge_count = u32::MAX.to_le_bytes().to_vec();
    huge_count.extend([0u8; 12]);
    let cases: Vec<(&str, Vec<u8>, DataType)> = vec![
        (
            "truncated",
            good[..good.len() - 1].to_vec(),
            DataType::Bytes,
        ),
        ("empty", Vec::new(), DataType::Bytes),
        ("length past the end", past_end, DataType::Bytes),
        ("length 2^32-1", huge_len, DataType::String),
        ("count 2^32-1", huge_count, DataType::Bytes),
        ("wrong count", encode(&[b"a", b"b"]), DataType::String),
        (
            "invalid UTF-8",
            encode(&[b"ok", b"\xff\xfe", b""]),
            DataType::String,
        ),
    ];
    for (name, bytes, dtype) in cases {
        let (_, e) = with_chunk(bytes, dtype).await;
        let ArrayError::Codec(CodecError::InvalidVlen { key, .. }) = &e else {
            panic!("{name}: {e:?}");
        };
        assert!(key.ends_with("c/0"), "{name}: {key}");
    }
    // the same bytes are valid in a `bytes` array
    let (a, _) = with_chunk(encode(&[b"a"]), DataType::Bytes).await;
    a.store()
        .put(
            &StoreKey::new("c/0").unwrap(),
            Bytes::from(encode(&[b"ok", b"\xff\xfe", b""])),
        )
        .await
        .unwrap();
    assert_eq!(
        a.view()
            .read_vlen::<Vec<u8>>()
            .await
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![b"ok".to_vec(), vec![0xff, 0xfe], vec![]]
    );
}

/// Reads each `path<TAB>expected.json` line with zarr-python and compares every element.
const ZARR_PYTHON_CHECK: &str = r#"
import json, sys, warnings
import numpy as np, zarr
warnings.filterwarnings("ignore")
bad = 0
for line in open(sys.argv[1]):
    path, exp = line.rstrip("\n").split("\t")
    want = json.load(open(exp))
    a = zarr.open_array(path, mode="r")
    got = np.asarray(a[...], dtype=object).reshape(-1).tolist()
    got = [list(v) if isinstance(v, bytes) else v for v in got]
    if list(a.shape) != want["shape"] or got != want["values"]:
        bad += 1
        print("FAIL", path, a.dtype, got[:6], want["values"][:6])
    else:
        print("ok", path, a.dtype)
sys.exit(1 if bad else 0)
"#;

#[tokio::test]
async fn string_and_bytes_arrays_written_by_zarrflow_read_exactly_in_zarr_python() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let v2 = zarrflow::ZarrFormat::V2;
    let cases: Vec<(&str, ArraySpec)> = vec![
        (
            "s3",
            ArraySpec::with_data_type([7, 5], DataType::String).shard_shape([3, 2]),
        ),
        (
            "s3_sharded",
            ArraySpec::with_data_type([8, 6], DataType::String)
                .shard_shape([4, 6])
                .inner_chunk_shape([2, 3]),
        ),
        (
            "b3_sharded_gzip",
            ArraySpec::with_data_type([7, 5], DataType::Bytes)
                .shard_shape([4, 4])
                .inner_chunk_shape([2, 2])
                .codecs([CodecSpec::bytes(), CodecSpec::gzip(1)]),
        ),
        (
            "s2",
            ArraySpec::with_data_type([7, 5], DataType::String)
                .shard_shape([3, 2])
                .zarr_format(v2),
        ),
        (
            "b2",
            ArraySpec::with_data_type([9], DataType::Bytes)
                .shard_shape([4])
                .zarr_format(v2),
        ),
    ];
    let mut list = String::new();
    for (name, spec) in cases {
        let a = Array::create(
            &store,
            &StoreKey::new(name).unwrap(),
            &spec,
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        let shape: Vec<usize> = a.shape().iter().map(|&n| n as usize).collect();
        let n: usize = shape.iter().product();
        let full = ArrayD::from_shape_vec(IxDyn(&shape), words(n)).unwrap();
        let mut model = ArrayD::from_elem(IxDyn(&shape), String::new());
        // a partial write (chunks and inner chunks left missing), then a strided one
        let steps = if shape.len() == 1 {
            ["1:6", "::-3"]
        } else {
            ["1:5, 0:3", "::-3, 4"]
        };
        for text in steps {
            let view = a.view().get(&Selection::parse(text).unwrap()).unwrap();
            let mut cells = Vec::new();
            view.transform()
                .for_each_mapped(|_, out| {
                    let lin = out
                        .iter()
                        .zip(&shape)
                        .fold(0usize, |l, (&x, &s)| l * s + x as usize);
                    cells.push(lin);
                })
                .unwrap();
            let values: Vec<String> = cells
                .iter()
                .map(|&c| full.as_slice().unwrap()[c].clone())
                .collect();
            let vshape: Vec<usize> = view.shape().iter().map(|&n| n as usize).collect();
            let values = ArrayD::from_shape_vec(IxDyn(&vshape), values).unwrap();
            if a.data_type() == DataType::String {
                view.write_vlen(&values).await.unwrap();
            } else {
                view.write_vlen(&values.mapv(String::into_bytes))
                    .await
                    .unwrap();
            }
            for (k, &c) in cells.iter().enumerate() {
                model.as_slice_mut().unwrap()[c] = values.as_slice().unwrap()[k].clone();
            }
        }
        let json_values: Vec<Value> = model
            .iter()
            .map(|s| match a.data_type() {
                DataType::String => Value::from(s.as_str()),
                _ => Value::from(s.as_bytes().to_vec()),
            })
            .collect();
        let got: Vec<Vec<u8>> = read_any(&a.view()).await.unwrap();
        assert_eq!(
            got,
            model
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect::<Vec<_>>(),
            "{name}"
        );
        let exp = dir.path().join(format!("{name}.json"));
        std::fs::write(
            &exp,
            serde_json::to_vec(&serde_json::json!({"shape": a.shape(), "values": json_values}))
                .unwrap(),
        )
        .unwrap();
        list.push_str(&format!(
            "{}\t{}\n",
            dir.path().join(name).display(),
            exp.display()
        ));
    }
    let list_path = dir.path().join("list.tsv");
    std::fs::write(&list_path, list).unwrap();
    let stdout = common::venv::run_checker(
        &common::venv::python(".venv"),
        &["-c", ZARR_PYTHON_CHECK],
        &list_path,
        "zarr-python",
    );
    assert_eq!(stdout.matches("ok ").count(), 5, "{stdout}");
}

/// A batch of string writes (overlapping, with fill values and a broadcast scalar) leaves
/// what the same writes made one by one leave, on unsharded and sharded arrays; the pool is
/// empty again afterwards (a later plain write works); bytes and fixed-width text arrays
/// stage the same way; a wrong element type, a view of another array and a passed budget are
/// refused before anything is staged.
#[tokio::test]
async fn a_batch_of_string_writes_equals_the_writes_made_one_by_one() {
    for (label, spec) in specs() {
        let (_s1, batched) = create(&spec).await;
        let (_s2, single) = create(&spec).await;
        let w = words(35);
        let writes: Vec<(&str, Vec<String>, Vec<usize>)> = vec![
            ("0:7, 0:5", w.clone(), vec![7, 5]),
            ("1:5, 2:4", w[..8].to_vec(), vec![4, 2]),
            ("3, :", vec!["row".to_string(); 5], vec![5]),
            ("2:6, 1", vec![String::new(); 4], vec![4]),
            ("6, 4", vec!["last".to_string()], vec![]),
            ("::2, ::3", vec!["b\u{e9}".to_string()], vec![]),
        ];
        let mut batch = batched.batch();
        for (sel, values, shape) in &writes {
            let sel = Selection::parse(sel).unwrap();
            let values = ArrayD::from_shape_vec(IxDyn(shape), values.clone()).unwrap();
            batch
                .stage_vlen(&batched.view().get(&sel).unwrap(), &values)
                .unwrap();
            single
                .view()
                .get(&sel)
                .unwrap()
                .write_vlen(&values)
                .await
                .unwrap();
        }
        assert_eq!(batch.len(), writes.len());
        batch.commit().await.unwrap();
        let got = batched.view().read_vlen::<String>().await.unwrap();
        let want = single.view().read_vlen::<String>().await.unwrap();
        assert_eq!(got, want, "{label}");
        assert_eq!(got[[6, 4]], "last", "{label}");
        // the pool was emptied: a plain write and a second batch still work
        let cell = batched
            .view()
            .get(&Selection::parse("0, 0").unwrap())
            .unwrap();
        cell.write_vlen_scalar("again".to_string()).await.unwrap();
        let mut second = batched.batch();
        second
            .stage_vlen_scalar(&cell, "twice".to_string())
            .unwrap();
        second.commit().await.unwrap();
        assert_eq!(
            cell.read_vlen::<String>()
                .await
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            ["twice"],
            "{label}"
        );
        // refusals
        let mut batch = batched.batch();
        assert!(
            batch
                .stage_vlen_scalar(&batched.view(), vec![1u8])
                .unwrap_err()
                .is_data_type_mismatch(),
            "{label}"
        );
        assert!(
            batch
                .stage_vlen_scalar(&single.view(), "other".to_string())
                .is_err(),
            "{label}"
        );
        let mut small = batched.batch().with_max_bytes(100);
        let long = arr1(&["y".repeat(200)]);
        assert!(matches!(
            small.stage_vlen(&cell, &long),
            Err(ArrayError::TooLarge(_))
        ));
        assert!(small.is_empty() && small.staged_bytes() == 0);
        // each stored value counts its allocation too: 2 one-byte values are 2 * (1 + 56)
        // + 2 * 8 bytes; the fill value only its 8-byte handle
        let mut counted = batched.batch();
        let row = batched
            .view()
            .get(&Selection::parse("5, 0:3").unwrap())
            .unwrap();
        counted
            .stage_vlen(&row, &arr1(&["a".to_string(), "b".into(), "".into()]))
            .unwrap();
        assert_eq!(counted.staged_bytes(), 2 * (1 + 56) + 3 * 8, "{label}");
    }
    // bytes, and fixed-width text (a NumPy `<U3` array, written as `String`)
    for data_type in [DataType::Bytes, DataType::FixedBytes { len: 3 }] {
        let spec = ArraySpec::with_data_type([6], data_type).shard_shape([4]);
        let (_s, a) = create(&spec).await;
        let mut batch = a.batch();
        let v = |s: &str| s.as_bytes().to_vec();
        let sel = |s: &str| a.view().get(&Selection::parse(s).unwrap()).unwrap();
        batch
            .stage_vlen(&sel("0:3"), &arr1(&[v("ab"), v(""), v("c")]))
            .unwrap();
        batch.stage_vlen_scalar(&sel("4:"), v("xyz")).unwrap();
        batch.stage_vlen_scalar(&sel("0"), v("z")).unwrap();
        batch.commit().await.unwrap();
        let got = a.view().read_vlen::<Vec<u8>>().await.unwrap();
        let want = [v("z"), v(""), v("c"), v(""), v("xyz"), v("xyz")];
        assert_eq!(got.as_slice().unwrap(), want, "{data_type}");
    }
    let spec = ArraySpec::with_data_type([3], DataType::FixedString { chars: 3 }).shard_shape([3]);
    let (_s, a) = create(&spec).await;
    let mut batch = a.batch();
    batch
        .stage_vlen(
            &a.view(),
            &arr1(&["h\u{e9}".to_string(), "ab".into(), "".into()]),
        )
        .unwrap();
    let too_long = batch.stage_vlen_scalar(&a.view(), "four".to_string());
    assert!(matches!(too_long, Err(ArrayError::ValueTooLong { .. })));
    // a wide fixed-width type is refused from its size, before its padded values are built
    let wide = ArraySpec::with_data_type([1000], DataType::FixedString { chars: 1 << 16 })
        .shard_shape([1000]);
    let (_w, w) = create(&wide).await;
    let mut small = w.batch().with_max_bytes(1 << 20);
    let empties = ArrayD::from_shape_vec(IxDyn(&[1000]), vec![String::new(); 1000]).unwrap();
    assert!(matches!(
        small.stage_vlen(&w.view(), &empties),
        Err(ArrayError::TooLarge(_))
    ));
    batch.commit().await.unwrap();
    let got = a.view().read_vlen::<String>().await.unwrap();
    assert_eq!(got.as_slice().unwrap(), ["h\u{e9}", "ab", ""]);
}
