//! Fixed-width text (`fixed_length_utf32` = NumPy `<U n`, `null_terminated_bytes` = `|S n`,
//! and the v2 dtypes `<U n` / `>U n` / `|S n`): zarr-python's arrays read as `String` /
//! `Vec<u8>` values equal to NumPy's; zarrflow's writes (v3, sharded, v2) read back exactly
//! by zarr-python; values longer than the type holds and stored units that are no code point
//! are typed errors.

mod common;

use common::fixtures::{entries, key, test_data};
use ndarray::{ArrayD, IxDyn, arr1};
use serde_json::{Value, json};
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreOptions};
use zarrflow::{DataType, ZarrFormat, sel};

/// Reads `a` as byte strings (a string's UTF-8).
async fn read_text(a: &Array) -> Result<Vec<Vec<u8>>, ArrayError> {
    Ok(if a.data_type().is_unicode() {
        a.view()
            .read::<String>()
            .await?
            .into_iter()
            .map(String::into_bytes)
            .collect()
    } else {
        a.view().read::<Vec<u8>>().await?.into_iter().collect()
    })
}

#[tokio::test]
async fn zarr_python_fixed_width_text_reads_as_numpy_gives_it() {
    let (dir, manifest) = test_data().expect("test-data");
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    let fixtures: Vec<&Value> = entries(&manifest, "arrays")
        .iter()
        .filter(|f| {
            f["features"]
                .as_array()
                .unwrap()
                .contains(&json!("fixed_width_text"))
        })
        .collect();
    assert_eq!(
        fixtures.len(),
        11,
        "zarr-python 3.4.2's v3, sharded and v2 fixtures of both kinds, and zarr-python 2.18's 4"
    );
    let mut kinds = std::collections::BTreeSet::new();
    for f in fixtures {
        let path = f["path"].as_str().unwrap();
        let a = Array::open_in(&store, &key(path), ArrayOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let t = a.data_type();
        assert!(t.is_text() && !t.is_variable_length(), "{path}: {t}");
        kinds.insert((t.is_unicode(), a.zarr_format()));
        let (descr, shape, data) = common::read_npy(&dir.join(f["expected"].as_str().unwrap()));
        assert_eq!(descr, t.numpy_descr(), "{path}");
        assert_eq!(shape, a.shape(), "{path}");
        let want = zarrflow::npy::text_values(zarrflow::npy::NpyType::of(t), &data)
            .unwrap()
            .unwrap();
        assert_eq!(read_text(&a).await.unwrap(), want, "{path}");
        // the raw bytes are NumPy's too (the width, the padding)
        assert_eq!(a.view().read_bytes().await.unwrap(), data, "{path}");
    }
    assert_eq!(kinds.len(), 4, "{kinds:?}");
}

#[tokio::test]
async fn writes_pad_and_reads_strip_as_numpy_does() {
    for spec in [
        ArraySpec::with_data_type([7, 5], DataType::FixedString { chars: 3 }).shard_shape([3, 2]),
        ArraySpec::with_data_type([7, 5], DataType::FixedString { chars: 3 })
            .shard_shape([4, 4])
            .inner_chunk_shape([2, 2]),
        ArraySpec::with_data_type([7, 5], DataType::FixedString { chars: 3 })
            .shard_shape([3, 2])
            .zarr_format(ZarrFormat::V2),
    ] {
        let a = Array::create_at("memory://", &spec).await.unwrap();
        let words = ["", "a", "h\u{e9}", "\u{1F600}\u{3b1}\u{3b2}", "xyz"];
        let all = ArrayD::from_shape_fn(IxDyn(&[7, 5]), |d| words[(d[0] + d[1]) % 5].to_string());
        a.view().write(&all).await.unwrap();
        assert_eq!(a.view().read::<String>().await.unwrap(), all);
        // a partial write; a value too long for U3 is refused and writes nothing
        let view = a.view().get(&sel![1..4, ..;2]).unwrap();
        view.write_scalar("\u{3a9}".to_string()).await.unwrap();
        let err = view
            .write(&arr1(&[
                "ok".to_string(),
                "four".to_string(),
                "x".to_string(),
            ]))
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                ArrayError::ValueTooLong {
                    index: 1,
                    length: 4,
                    ..
                }
            ),
            "{err}"
        );
        let mut expected = all.clone();
        for i in 1..4 {
            for j in [0, 2, 4] {
                expected[[i, j]] = "\u{3a9}".to_string();
            }
        }
        assert_eq!(a.view().read::<String>().await.unwrap(), expected);
        // the element types of the other kinds are refused
        assert!(
            a.view()
                .read::<Vec<u8>>()
                .await
                .unwrap_err()
                .is_data_type_mismatch()
        );
        assert!(
            a.view()
                .read::<u32>()
                .await
                .unwrap_err()
                .is_data_type_mismatch()
        );
    }
    let b = Array::create_at(
        "memory://",
        &ArraySpec::with_data_type([4], DataType::FixedBytes { len: 3 }),
    )
    .await
    .unwrap();
    b.view()
        .write(&arr1(&[
            b"a\0b".to_vec(),
            vec![],
            vec![0xff, 0, 0],
            b"xyz".to_vec(),
        ]))
        .await
        .unwrap();
    assert_eq!(
        b.view()
            .read::<Vec<u8>>()
            .await
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        // trailing NULs are padding; inner ones stay
        vec![b"a\0b".to_vec(), vec![], vec![0xff], b"xyz".to_vec()]
    );
    assert_eq!(
        b.view().read_bytes().await.unwrap(),
        b"a\0b\0\0\0\xff\0\0xyz"
    );
    let err = b
        .view()
        .get(&sel![0])
        .unwrap()
        .write_scalar(b"abcd".to_vec())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ArrayError::ValueTooLong { length: 4, .. }),
        "{err}"
    );
    assert!(
        b.view()
            .read::<String>()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
}

#[tokio::test]
async fn a_stored_unit_that_is_no_code_point_is_a_typed_error() {
    let a = Array::create_at(
        "memory://",
        &ArraySpec::with_data_type([2], DataType::FixedString { chars: 1 }),
    )
    .await
    .unwrap();
    let mut raw = 0x41u32.to_ne_bytes().to_vec();
    raw.extend(0xD800u32.to_ne_bytes()); // a surrogate
    a.view().write_bytes(&raw, &[2]).await.unwrap();
    let err = a.view().read::<String>().await.unwrap_err();
    assert!(matches!(err, ArrayError::InvalidData { .. }), "{err}");
    assert!(err.to_string().contains("element 1"), "{err}");
    let first = a
        .view()
        .get(&sel![0..1])
        .unwrap()
        .read::<String>()
        .await
        .unwrap();
    assert_eq!(first.into_raw_vec_and_offset().0, ["A"]);
}

/// Reads each `path<TAB>expected.json` line with zarr-python: dtype and every value.
const ZARR_PYTHON_CHECK: &str = r#"
import json, sys, warnings
import numpy as np, zarr
warnings.filterwarnings("ignore")
bad = 0
for line in open(sys.argv[1]):
    path, exp = line.rstrip("\n").split("\t")
    want = json.load(open(exp))
    a = zarr.open_array(path, mode="r")
    got = a[...]
    vals = [list(v) if isinstance(v, bytes) else str(v) for v in got.reshape(-1).tolist()]
    if got.dtype.str != want["dtype"] or list(got.shape) != want["shape"] or vals != want["values"]:
        bad += 1
        print("FAIL", path, got.dtype, vals[:6], want["values"][:6])
    else:
        print("ok", path, got.dtype)
sys.exit(1 if bad else 0)
"#;

#[tokio::test]
async fn fixed_width_text_written_by_zarrflow_reads_exactly_in_zarr_python() {
    let python = common::venv::python(".venv");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let u4 = DataType::FixedString { chars: 4 };
    let s3 = DataType::FixedBytes { len: 3 };
    let cases = [
        (
            "u3",
            ArraySpec::with_data_type([6, 5], u4).shard_shape([4, 2]),
        ),
        (
            "u3_sharded",
            ArraySpec::with_data_type([6, 5], u4)
                .shard_shape([6, 4])
                .inner_chunk_shape([3, 2]),
        ),
        (
            "s3",
            ArraySpec::with_data_type([6, 5], s3).shard_shape([4, 2]),
        ),
        (
            "u2",
            ArraySpec::with_data_type([6, 5], u4)
                .shard_shape([4, 2])
                .zarr_format(ZarrFormat::V2),
        ),
        (
            "s2",
            ArraySpec::with_data_type([6, 5], s3)
                .shard_shape([4, 2])
                .zarr_format(ZarrFormat::V2),
        ),
    ];
    let words = ["", "ab", "h\u{e9}\u{e9}", "\u{1F600}", "zarr"];
    let mut lines = String::new();
    for (name, spec) in cases {
        let k = zarrflow::StoreKey::new(name).unwrap();
        let a = Array::create(&store, &k, &spec, ArrayOptions::default())
            .await
            .unwrap();
        let unicode = a.data_type().is_unicode();
        // rows 4.. stay unwritten: the fill value
        let region = a.view().get(&sel![0..4, ..]).unwrap();
        let values: Vec<Value> = if unicode {
            let v =
                ArrayD::from_shape_fn(IxDyn(&[4, 5]), |d| words[(d[0] * 5 + d[1]) % 5].to_string());
            region.write(&v).await.unwrap();
            let mut all: Vec<Value> = v.iter().map(|s| json!(s)).collect();
            all.extend(std::iter::repeat_n(json!(""), 10));
            all
        } else {
            let v = ArrayD::from_shape_fn(IxDyn(&[4, 5]), |d| {
                let i = d[0] * 5 + d[1];
                [
                    vec![],
                    b"a".to_vec(),
                    vec![0, 0xff],
                    b"xyz".to_vec(),
                    vec![7, 0, 7],
                ][i % 5]
                    .clone()
            });
            region.write(&v).await.unwrap();
            let mut all: Vec<Value> = v.iter().map(|b| json!(b)).collect();
            all.extend(std::iter::repeat_n(json!([]), 10));
            all
        };
        assert_eq!(read_text(&a).await.unwrap().len(), 30);
        let exp = dir.path().join(format!("{name}.json"));
        std::fs::write(
            &exp,
            json!({"dtype": a.data_type().numpy_descr(), "shape": [6, 5], "values": values})
                .to_string(),
        )
        .unwrap();
        lines.push_str(&format!(
            "{}\t{}\n",
            dir.path().join(name).display(),
            exp.display()
        ));
    }
    let list = dir.path().join("list.tsv");
    std::fs::write(&list, lines).unwrap();
    let text = common::venv::run_checker(&python, &["-c", ZARR_PYTHON_CHECK], &list, "zarr-python");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("ok ")).count(),
        5,
        "{text}"
    );
}
