//! Values given on the command line are stored exactly or refused: `--value` and
//! `--fill-value` that a data type cannot hold, `--dtype` names that are not data types, and
//! messages that quote at most a bounded prefix of what was given.

mod common;

use common::cli::*;

/// An array of one element of `dtype`.
fn one(dir: &std::path::Path, dtype: &str) -> String {
    let url = dir.join(format!("{dtype}.zarr"));
    let url = url.to_str().unwrap().to_string();
    ok(&["create", &url, "--shape", "1", "--dtype", dtype]);
    url
}

/// Numbers beyond a float type's largest finite value, and nonzero numbers that would round
/// to zero, are refused (exit 2) and the array keeps its value; before, float32
/// `3.4028236e38` was stored as Infinity and `1e-50` as 0. The same holds for float16,
/// float64, each part of a complex value, and `--fill-value`.
#[test]
fn float_values_that_do_not_fit_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "9".repeat(400);
    let cases: &[(&str, &str, &str)] = &[
        (
            "float32",
            "3.4028236e38",
            "largest finite float32 (3.4028235e38)",
        ),
        ("float32", "-3.5e38", "largest finite float32"),
        ("float32", "1e-50", "would be stored as 0"),
        ("float32", "-1e-46", "would be stored as 0"),
        ("float32", "1e400", "largest finite float32"),
        ("float32", &long, "largest finite float32"),
        ("float16", "65520", "largest finite float16 (65504)"),
        ("float16", "1e-8", "smallest positive float16"),
        ("float64", "1e400", "largest finite float64"),
        ("float64", "1e-400", "would be stored as 0"),
        (
            "complex64",
            "[3.5e38, 0]",
            "its part 3.5e38 is beyond the largest finite float32",
        ),
        ("complex64", "[1, 1e-50]", "its part 1e-50 is nonzero"),
        ("complex128", "[1e-400, 1]", "would be stored as 0"),
    ];
    for &(dtype, value, want) in cases {
        let url = one(tmp.path(), dtype);
        let seven = if dtype.starts_with("complex") {
            "[7,7]"
        } else {
            "7"
        };
        ok(&["set", &url, "--value", seven]);
        let res = run(&["set", &url, &format!("--value={value}")]);
        let err = String::from_utf8_lossy(&res.stderr);
        assert_eq!(res.status.code(), Some(2), "{dtype} {value}: {err}");
        assert!(
            err.contains(want) && err.contains(dtype),
            "{dtype} {value}: {err}"
        );
        let stored = ok(&["get", &url, "0"]);
        assert!(
            stored.starts_with('7') || stored.starts_with("[7"),
            "{stored}"
        );
        std::fs::remove_dir_all(&url).unwrap();
        // --fill-value too
        let res = run(&[
            "create",
            &url,
            "--shape",
            "1",
            "--dtype",
            dtype,
            &format!("--fill-value={value}"),
        ]);
        assert_eq!(res.status.code(), Some(2), "{dtype} {value}");
        assert!(String::from_utf8_lossy(&res.stderr).contains(want));
        assert!(!std::path::Path::new(&url).exists());
    }
}

/// What a float type does hold is stored: subnormals that stay nonzero, numbers that round
/// to the largest finite value, zero of either sign, the named non-finite values and bit
/// patterns.
#[test]
fn float_values_that_fit_are_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("float32", "1e-45", "1e-45"),
        ("float32", "3.4028235e38", "3.4028235e+38"),
        ("float32", "3.40282356e38", "3.4028235e+38"),
        ("float32", "-0", "-0.0"),
        ("float32", "0e-999", "0.0"),
        ("float32", "NaN", "\"NaN\""),
        ("float32", "-Infinity", "\"-Infinity\""),
        ("float32", "0x7f800000", "\"Infinity\""),
        ("float16", "3e-8", "5.9604645e-8"),
        ("float16", "65504", "65504.0"),
        ("float64", "5e-324", "5e-324"),
        ("float64", "18446744073709551616", "1.8446744073709552e+19"),
        ("complex64", "[1e-45, \"NaN\"]", "[1e-45, \"NaN\"]"),
        ("complex128", "[\"Infinity\", -0]", "[\"Infinity\", -0.0]"),
    ];
    for &(dtype, value, printed) in cases {
        let url = one(tmp.path(), dtype);
        ok(&["set", &url, &format!("--value={value}")]);
        assert_eq!(ok(&["get", &url, "0"]).trim(), printed, "{dtype} {value}");
        std::fs::remove_dir_all(&url).unwrap();
    }
}

/// Integers out of a type's range were refused already; this keeps it so.
#[test]
fn integers_out_of_range_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (dtype, value) in [
        ("int8", "128"),
        ("int8", "-129"),
        ("uint8", "-1"),
        ("uint16", "65536"),
        ("int64", "9223372036854775808"),
        ("uint64", "18446744073709551616"),
        ("int32", "1.5"),
        ("bool", "2"),
    ] {
        let url = one(tmp.path(), dtype);
        let res = run(&["set", &url, &format!("--value={value}")]);
        assert_eq!(res.status.code(), Some(2), "{dtype} {value}");
        std::fs::remove_dir_all(&url).unwrap();
    }
}

/// `--dtype r0` (and raw types whose bits are not a positive multiple of 8, or beyond 1 MiB
/// per element) is refused with a message saying what a raw type needs, before anything is
/// written; before, `r0` was refused with a message about the array spec's field.
#[test]
fn raw_types_need_a_positive_multiple_of_8_bits() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("r.zarr");
    let url = url.to_str().unwrap();
    for bad in ["r0", "r7", "r12", "r8388616", "r99999999999999999999"] {
        let res = run(&["create", url, "--shape", "2", "--dtype", bad]);
        let err = String::from_utf8_lossy(&res.stderr);
        assert_eq!(res.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains(&format!(
                "--dtype `{bad}`: a raw type's bits must be a positive multiple of 8"
            )),
            "{bad}: {err}"
        );
        assert!(!std::path::Path::new(url).exists());
    }
    let e = fails(&["create", url, "--shape", "2", "--dtype", "floot32"]);
    assert!(
        e.contains("unknown data type `floot32`; valid names: bool"),
        "{e}"
    );
    for good in ["r8", "r24", "r8388608"] {
        ok(&[
            "create",
            url,
            "--shape",
            "2",
            "--dtype",
            good,
            "--overwrite",
        ]);
    }
}

/// A message quotes at most 64 characters of a value, selection, name or path given as an
/// argument, followed by `…` (before, the whole input was echoed, however long).
#[test]
fn messages_quote_a_bounded_prefix_of_the_input() {
    let tmp = tempfile::tempdir().unwrap();
    let url = one(tmp.path(), "float32");
    let long_sel = "1,".repeat(5000);
    let long_value = format!("[{}]", "1,".repeat(5000));
    let long_name = "x".repeat(5000);
    let long_path = format!("/nonexistent/{}", "p".repeat(5000));
    let cases: Vec<Vec<String>> = vec![
        vec!["get".into(), url.clone(), long_sel.clone()],
        vec![
            "get".into(),
            url.clone(),
            format!("[{long_sel}x]"),
            "--oindex".into(),
        ],
        vec!["set".into(), url.clone(), format!("--value={long_value}")],
        vec!["set".into(), url.clone(), format!("--value={long_name}")],
        vec![
            "create".into(),
            "x.zarr".into(),
            "--shape".into(),
            "1".into(),
            "--dtype".into(),
            long_name.clone(),
        ],
        vec![
            "create".into(),
            "x.zarr".into(),
            "--shape".into(),
            format!("{long_sel}x"),
            "--dtype".into(),
            "int8".into(),
        ],
        vec!["get".into(), url.clone(), format!("--{long_name}")],
        vec!["get".into(), long_path.clone()],
        vec![
            "get".into(),
            url.clone(),
            "--transform".into(),
            long_path.clone(),
        ],
        vec![
            "set".into(),
            url.clone(),
            "--from".into(),
            long_path.clone(),
        ],
        vec![
            "get".into(),
            url.clone(),
            "-o".into(),
            format!("{long_path}/x.npy"),
        ],
        vec![
            "get".into(),
            url.clone(),
            "--max-bytes".into(),
            long_name.clone(),
        ],
    ];
    for args in &cases {
        let e = fails(args);
        assert!(
            e.chars().count() < 600,
            "{} chars: {}",
            e.chars().count(),
            &e[..300]
        );
        assert!(e.contains('…'), "{e}");
    }
    // an argument that is not UTF-8 is an error like any other
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"\xff\xfe");
    let e = fails(&[std::ffi::OsStr::new("get"), std::ffi::OsStr::new(&url), bad]);
    assert!(e.contains("invalid UTF-8"), "{e}");
}

/// A bit pattern (`0x...`) with a character other than ASCII in it is refused (exit 2) as
/// `--value` and `--fill-value`; before, zarrs' hex parser panicked slicing inside the
/// character (the `cli_values` fuzz target's crash `0x7fcӳ,00+1`).
#[test]
fn bit_patterns_with_non_ascii_characters_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (dtype, value) in [
        ("float32", "0x7fcӳ,00+1"),
        ("float64", "0xé0000000000000"),
        ("complex64", r#"["0x0000ÿÿ", "0x00000000"]"#),
    ] {
        let url = one(tmp.path(), dtype);
        let res = run(&["set", &url, &format!("--value={value}")]);
        let err = String::from_utf8_lossy(&res.stderr);
        assert_eq!(res.status.code(), Some(2), "{dtype} {value}: {err}");
        assert!(
            err.contains("is not a valid value"),
            "{dtype} {value}: {err}"
        );
        std::fs::remove_dir_all(&url).unwrap();
        let res = run(&[
            "create",
            &url,
            "--shape",
            "1",
            "--dtype",
            dtype,
            &format!("--fill-value={value}"),
        ]);
        assert_eq!(res.status.code(), Some(2), "{dtype} {value}");
        assert!(!std::path::Path::new(&url).exists());
    }
}
