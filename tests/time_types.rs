//! NumPy time types (`numpy.datetime64`, `numpy.timedelta64`): arrays as zarr-python 3.4.2
//! writes them open as typed data, read as `i64` counts, print as ISO 8601 on the command
//! line, and go to `.npy` as `<M8[unit]` / `<m8[unit]`.

mod common;

use common::cli::*;
use zarrflow::metadata::{TimeScale, TimeUnit};
use zarrflow::{Array, ArraySpec, DataType, Store, StoreKey};

/// zarr-python 3.4.2's document for `dtype="M8[10s]"` (its fill value is NaT as an integer).
const DATETIME_10S: &str = r#"{"shape": [4], "data_type": {"name": "numpy.datetime64",
 "configuration": {"unit": "s", "scale_factor": 10}},
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": -9223372036854775808,
 "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
 "attributes": {}, "zarr_format": 3, "node_type": "array", "storage_transformers": []}"#;

fn write_doc(dir: &std::path::Path, name: &str, doc: &str) -> String {
    let path = dir.join(name);
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("zarr.json"), doc).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_zarr_python_datetime_array_opens_typed_and_reads_as_counts() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Store::memory();
        store
            .put(&StoreKey::new("a/zarr.json").unwrap(), DATETIME_10S.into())
            .await
            .unwrap();
        let a = Array::open_in(
            &store,
            &StoreKey::new("a").unwrap(),
            zarrflow::ArrayOptions::default(),
        )
        .await
        .unwrap();
        let ten_s = TimeScale {
            unit: TimeUnit::Second,
            scale: 10,
        };
        assert_eq!(a.data_type(), DataType::DateTime64(ten_s));
        assert_eq!(a.data_type().to_string(), "datetime64[10s]");
        assert_eq!(a.fill_value::<i64>().unwrap(), i64::MIN);
        assert!(a.fill_value::<u64>().is_err());
        let all = a.view();
        let counts = |v: zarrflow::ndarray::ArrayD<i64>| v.into_raw_vec_and_offset().0;
        assert_eq!(counts(all.read::<i64>().await.unwrap()), vec![i64::MIN; 4]);
        let values = zarrflow::ndarray::arr1(&[1i64, 2, 3, 157_783_680]);
        all.write(&values).await.unwrap();
        assert_eq!(
            counts(all.read::<i64>().await.unwrap()),
            vec![1, 2, 3, 157_783_680]
        );
        assert!(all.read::<f64>().await.is_err());
    });
}

#[test]
fn specs_of_time_types_write_zarr_pythons_document() {
    let t: DataType = "timedelta64[ns]".parse().unwrap();
    let meta = ArraySpec::with_data_type([3], t).build().unwrap();
    let doc = meta.to_value();
    assert_eq!(
        doc["data_type"],
        serde_json::json!({"name": "numpy.timedelta64",
                           "configuration": {"unit": "ns", "scale_factor": 1}})
    );
    assert_eq!(meta.dtype(), Some(t));
    // the default fill value is NaT
    assert_eq!(meta.fill_value().as_ne_bytes(), i64::MIN.to_ne_bytes());
}

#[test]
fn the_command_line_prints_and_parses_iso_8601() {
    let tmp = tempfile::tempdir().unwrap();
    let url = write_doc(tmp.path(), "d.zarr", DATETIME_10S);
    assert_eq!(ok(&["get", &url]).trim(), r#"["NaT", "NaT", "NaT", "NaT"]"#);
    ok(&["set", &url, "1:3", "--value", "2020-01-01T00:00:10"]);
    ok(&["set", &url, "3", "--value", "1969-12-31T23:59:50"]);
    assert_eq!(
        ok(&["get", &url]).trim(),
        r#"["NaT", "2020-01-01T00:00:10", "2020-01-01T00:00:10", "1969-12-31T23:59:50"]"#
    );
    // a value the unit cannot hold exactly is refused, not truncated as NumPy would
    let e = fails(&["set", &url, "0", "--value", "2020-01-01T00:00:01"]);
    assert!(e.contains("cannot hold it exactly"), "{e}");
    let e = fails(&["set", &url, "0", "--value", "2020-02-30"]);
    assert!(e.contains("ISO 8601"), "{e}");
    // .npy keeps the unit
    let npy = tmp.path().join("d.npy");
    ok(&["get", &url, "-o", npy.to_str().unwrap()]);
    let bytes = std::fs::read(&npy).unwrap();
    let file = zarrflow::npy::read_npy(&bytes).unwrap();
    assert_eq!(file.ty().data_type().to_string(), "datetime64[10s]");
    assert!(String::from_utf8_lossy(&bytes[..128]).contains("'<M8[10s]'"));
    // and is accepted back
    let copy = write_doc(tmp.path(), "e.zarr", DATETIME_10S);
    ok(&["set", &copy, "--from", npy.to_str().unwrap()]);
    assert_eq!(ok(&["get", &copy]), ok(&["get", &url]));

    let td = tmp.path().join("t.zarr");
    let td = td.to_str().unwrap();
    ok(&[
        "create",
        td,
        "--shape",
        "3",
        "--dtype",
        "m8[ms]",
        "--fill-value",
        "PT1.5S",
    ]);
    ok(&["set", td, "1", "--value", "-P1D"]);
    assert_eq!(
        ok(&["get", td]).trim(),
        r#"["PT1.500S", "-PT86400.000S", "PT1.500S"]"#
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("t.zarr/zarr.json")).unwrap())
            .unwrap();
    assert_eq!(doc["fill_value"], serde_json::json!(1500));
}
