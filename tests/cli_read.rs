//! `zarrflow info`, `tree` and `get` on the interop fixtures, through the built binary.

mod common;

use common::cli::*;
use serde_json::{Value, json};

/// `get -o` of every fixture array (whole) and of every manifest selection writes exactly the
/// expected `.npy` file (byte for byte: NumPy's header layout, little-endian, C order).
#[test]
fn get_writes_the_expected_npy_files() {
    let m = manifest();
    let tmp = tempfile::tempdir().unwrap();
    let mut jobs: Vec<(String, String, String, String)> = Vec::new(); // (array, selection, mode, expected)
    for a in m["arrays"].as_array().unwrap() {
        let path = a["path"].as_str().unwrap().to_string();
        jobs.push((
            path.clone(),
            String::new(),
            "basic".into(),
            a["expected"].as_str().unwrap().to_string(),
        ));
        for s in a["selections"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            jobs.push((
                path.clone(),
                s["selection"].as_str().unwrap().to_string(),
                s["mode"].as_str().unwrap().to_string(),
                s["expected"].as_str().unwrap().to_string(),
            ));
        }
    }
    let counter = std::sync::atomic::AtomicUsize::new(0);
    let failures = parallel(&jobs, |(path, sel, mode, expected)| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let out = tmp.path().join(format!("{n}.npy"));
        let mut args: Vec<String> = vec!["get".into(), "-o".into(), out.display().to_string()];
        match mode.as_str() {
            "oindex" => args.push("--oindex".into()),
            "vindex" => args.push("--vindex".into()),
            _ => {}
        }
        // the `--` form takes selections that begin with '-'
        args.push("--".into());
        args.push(fixture(path));
        args.push(sel.clone());
        let res = run(&args);
        if !res.status.success() {
            return Some(format!(
                "{path} [{sel}] {mode}: {}",
                String::from_utf8_lossy(&res.stderr).trim()
            ));
        }
        let got = std::fs::read(&out).unwrap();
        let want = std::fs::read(test_data().join(expected)).unwrap();
        if got != want {
            let (gd, gs, gv) = read_npy(&out);
            let (wd, ws, wv) = read_npy(&test_data().join(expected));
            if (gd.as_str(), &gs, &gv) != (wd.as_str(), &ws, &wv) {
                return Some(format!(
                    "{path} [{sel}] {mode}: got {gd} {gs:?}, want {wd} {ws:?} (values equal: {})",
                    gv == wv
                ));
            }
        }
        None
    });
    println!("{} reads checked, {} failures", jobs.len(), failures.len());
    assert!(jobs.len() > 1500, "{}", jobs.len());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `info --json` reports the manifest's shape, data type, sharding and fill value.
#[test]
fn info_json_matches_the_manifest() {
    let m = manifest();
    let arrays = m["arrays"].as_array().unwrap();
    let failures = parallel(arrays, |a| {
        let path = a["path"].as_str().unwrap();
        let out = ok(&["info", "--json", &fixture(path)]);
        let info: Value = serde_json::from_str(&out).unwrap();
        for key in [
            "node_type",
            "shape",
            "data_type",
            "chunk_shape",
            "inner_chunk_shape",
            "fill_value",
            "codecs",
            "dimension_names",
            "attributes",
        ] {
            if info.get(key).is_none() {
                return Some(format!("{path}: no key {key}"));
            }
        }
        let v2 = a["zarr_format"] == 2;
        let (chunk_shape, want_inner) = if v2 {
            let zarray: Value = serde_json::from_slice(
                &std::fs::read(test_data().join(path).join(".zarray")).unwrap(),
            )
            .unwrap();
            (zarray["chunks"].clone(), Value::Null)
        } else {
            let zarr_json: Value = serde_json::from_slice(
                &std::fs::read(test_data().join(path).join("zarr.json")).unwrap(),
            )
            .unwrap();
            let sharding = zarr_json["codecs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "sharding_indexed");
            let want_inner = sharding
                .map(|c| c["configuration"]["chunk_shape"].clone())
                .unwrap_or(Value::Null);
            (
                zarr_json["chunk_grid"]["configuration"]["chunk_shape"].clone(),
                want_inner,
            )
        };
        let checks = [
            ("node_type", json!("array")),
            ("zarr_format", json!(if v2 { 2 } else { 3 })),
            ("shape", a["shape"].clone()),
            ("data_type", a["data_type"].clone()),
            ("sharded", a["sharded"].clone()),
            ("chunk_shape", chunk_shape),
            ("inner_chunk_shape", want_inner),
        ];
        for (key, want) in checks {
            if info[key] != want {
                return Some(format!("{path}: {key} = {}, want {want}", info[key]));
            }
        }
        None
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn info_text_and_stats() {
    let out = ok(&[
        "info",
        &fixture("fixtures/zarr-python/sharded_partial"),
        "--stats",
    ]);
    for want in [
        "node_type           array",
        "shape               [20, 30]",
        "data_type           float32",
        "shard_shape",
        "inner_chunk_shape",
        "sharding_indexed(",
        "stored shards",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }
    let out = ok(&[
        "info",
        "--json",
        "--stats",
        &fixture("fixtures/zarr-python/dimension_names_attributes"),
    ]);
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["dimension_names"], json!(["t", null, "x"]));
    assert_eq!(info["attributes"]["units"], "K");
    assert_eq!(info["attributes"]["big"], json!(18446744073709551615u64));
    assert_eq!(info["inner_chunk_shape"], Value::Null);
    // every chunk file counted, zarr.json excluded
    let dir = test_data().join("fixtures/zarr-python/dimension_names_attributes");
    let mut files = 0u64;
    let mut bytes = 0u64;
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if e.path() != dir.join("zarr.json") {
                files += 1;
                bytes += e.metadata().unwrap().len();
            }
        }
    }
    assert_eq!(info["stats"]["stored"], json!(files));
    assert_eq!(info["stats"]["stored_bytes"], json!(bytes));
    assert_eq!(info["stats"]["unit"], "chunk");

    let g = ok(&["info", "--json", &fixture("fixtures/zarr-python/hierarchy")]);
    let g: Value = serde_json::from_str(&g).unwrap();
    assert_eq!(g["node_type"], "group");
    assert_eq!(g["attributes"]["title"], "zarrflow hierarchy fixture");
    assert_eq!(
        g["children"],
        json!([
            {"name": "arr_root", "node_type": "array"},
            {"name": "g1", "node_type": "group"},
            {"name": "g_empty", "node_type": "group"},
        ])
    );
}

#[test]
fn tree_shows_the_hierarchy() {
    let out = ok(&["tree", &fixture("fixtures/zarr-python/hierarchy")]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("(group)"), "{out}");
    assert!(lines[1].starts_with("├── arr_root  [10] int32"), "{out}");
    assert!(lines[2].starts_with("├── g1/"), "{out}");
    assert!(
        lines[3].starts_with("│   ├── arr1  [6, 5] float32"),
        "{out}"
    );
    assert!(lines[4].starts_with("│   └── g2/"), "{out}");
    assert!(
        lines[5]
            .starts_with("│       ├── arr2  [3, 4, 5] uint8  (shards [2, 4, 4], chunks [2, 2, 2])"),
        "{out}"
    );
    assert!(
        out.lines().last().unwrap().starts_with("└── g_empty/"),
        "{out}"
    );
    // an array alone
    let out = ok(&["tree", &fixture("fixtures/zarr-python/dtype_int8")]);
    assert!(out.contains("[13, 7] int8"), "{out}");
}

/// Printed values are JSON equal to the `.npy` values.
#[test]
fn get_prints_json_values() {
    let out = ok(&[
        "get",
        &fixture("fixtures/zarr-python/dtype_int32"),
        "2:4,::-3",
    ]);
    let printed: Value = serde_json::from_str(&out).unwrap();
    let whole = ok(&["get", &fixture("fixtures/zarr-python/dtype_int32")]);
    let whole: Value = serde_json::from_str(&whole).unwrap();
    let (_, shape, data) = read_npy(&test_data().join("fixtures/zarr-python/dtype_int32.npy"));
    assert_eq!(shape, vec![13, 7]);
    let values: Vec<i32> = data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for r in 0..13 {
        for c in 0..7 {
            assert_eq!(whole[r][c], json!(values[r * 7 + c]));
        }
    }
    // rows 2, 3; columns 6, 3, 0
    for (i, r) in [2usize, 3].iter().enumerate() {
        for (j, c) in [6usize, 3, 0].iter().enumerate() {
            assert_eq!(printed[i][j], json!(values[r * 7 + c]));
        }
    }
    // non-finite floats, complex, bool, 0-d
    let out = ok(&[
        "get",
        &fixture("fixtures/zarr-python/rank0_float64_unwritten_fill_nan"),
    ]);
    assert_eq!(out.trim(), "\"NaN\"");
    let out = ok(&[
        "get",
        &fixture("fixtures/zarr-python/fill_neg_infinity_float32"),
        "9,9",
    ]);
    assert_eq!(out.trim(), "\"-Infinity\"");
    let out = ok(&["get", &fixture("fixtures/zarr-python/dtype_bool"), "0,0:3"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.as_array().unwrap().iter().all(Value::is_boolean), "{out}");
    let out = ok(&[
        "get",
        &fixture("fixtures/zarr-python/dtype_complex128"),
        "0,0:2",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0].as_array().unwrap().len(), 2, "{out}");
    let out = ok(&["get", &fixture("fixtures/zarr-python/zero_length_dim")]);
    assert_eq!(out.trim(), "[]");
}

/// Large results print a summary: the corners and a note; `--full` prints everything.
#[test]
fn large_results_are_summarised() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("big.zarr");
    let url = url.to_str().unwrap();
    ok(&[
        "create",
        url,
        "--shape",
        "40,50",
        "--dtype",
        "int16",
        "--chunks",
        "7,9",
        "--fill-value=-3",
    ]);
    let out = ok(&["get", url]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "[[-3, -3, -3, ..., -3, -3, -3],", "{out}");
    assert!(lines.contains(&" ...,"), "{out}");
    assert!(out.contains("(shape [40, 50], 2000 values;"), "{out}");
    let full = ok(&["get", url, "--full"]);
    let v: Value = serde_json::from_str(&full).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 40);
    assert_eq!(v[39].as_array().unwrap().len(), 50);
    assert!(v[39].as_array().unwrap().iter().all(|x| *x == json!(-3)));
}

/// A selection that begins with '-' goes after `--`; options take `--opt=VALUE`.
#[test]
fn dash_conventions() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.npy");
    let url = fixture("fixtures/zarr-python/dtype_float64");
    let out_s = out.to_str().unwrap();
    ok(&["get", "-o", out_s, "--", &url, "-4:,::-2"]);
    let (d, shape, _) = read_npy(&out);
    assert_eq!((d.as_str(), shape), ("<f8", vec![4, 4]));
    ok(&["get", &format!("--output={out_s}"), "--", &url, "-1"]);
    assert_eq!(read_npy(&out).1, vec![7]);
    // `-o -` writes the .npy to standard output
    let res = run(&["get", "-o", "-", &url, "0,0"]);
    assert!(res.status.success());
    assert_eq!(&res.stdout[..6], b"\x93NUMPY");
}

/// `--transform` reads TensorStore transform JSON (literal coordinates) and ndsel.
#[test]
fn transform_files() {
    let tmp = tempfile::tempdir().unwrap();
    let url = fixture("fixtures/zarr-python/dtype_uint16");
    let t = tmp.path().join("t.json");
    // rows 2..6 with stride 2, column 3: TensorStore {input_inclusive_min, ..., output}
    std::fs::write(
        &t,
        r#"{"input_inclusive_min": [0], "input_exclusive_max": [2],
            "output": [{"input_dimension": 0, "offset": 2, "stride": 2}, {"offset": 3}]}"#,
    )
    .unwrap();
    let a = ok(&["get", &url, "--transform", t.to_str().unwrap()]);
    let b = ok(&["get", &url, "2:6:2,3"]);
    assert_eq!(a, b);
    let e = fails(&["get", &url, "1", "--transform", t.to_str().unwrap()]);
    assert!(e.contains("--transform replaces SELECTION"), "{e}");
}
