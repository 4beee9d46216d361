//! `zarrflow create`, checked through `info --json`, the written `zarr.json` and `get`.

mod common;

use common::cli::*;
use serde_json::{Value, json};

fn info(url: &str) -> Value {
    serde_json::from_str(&ok(&["info", "--json", url])).unwrap()
}

#[test]
fn sharded_and_unsharded_layouts() {
    let tmp = tempfile::tempdir().unwrap();
    let sharded = tmp.path().join("s.zarr");
    let sharded = sharded.to_str().unwrap();
    let out = ok(&[
        "create",
        sharded,
        "--shape",
        "100,200",
        "--dtype",
        "float32",
        "--chunks",
        "10,20",
        "--shards",
        "50,100",
        "--codec",
        "blosc:lz4:5",
        "--fill-value",
        "NaN",
        "--dimension-names",
        "y,x",
        "--attributes",
        r#"{"unit": "m", "n": [1, 2]}"#,
        "--index-location",
        "start",
    ]);
    assert!(out.starts_with("created "), "{out}");
    let i = info(sharded);
    assert_eq!(i["shape"], json!([100, 200]));
    assert_eq!(i["data_type"], "float32");
    assert_eq!(i["chunk_shape"], json!([50, 100]));
    assert_eq!(i["inner_chunk_shape"], json!([10, 20]));
    assert_eq!(i["fill_value"], "NaN");
    assert_eq!(i["dimension_names"], json!(["y", "x"]));
    assert_eq!(i["attributes"], json!({"unit": "m", "n": [1, 2]}));
    let sh = &i["codecs"][0];
    assert_eq!(sh["name"], "sharding_indexed");
    assert_eq!(sh["configuration"]["index_location"], "start");
    assert_eq!(sh["configuration"]["codecs"][1]["name"], "blosc");
    assert_eq!(
        sh["configuration"]["codecs"][1]["configuration"]["cname"],
        "lz4"
    );
    // a fresh array reads as its fill value
    let v: Value = serde_json::from_str(&ok(&["get", sharded, "99,199"])).unwrap();
    assert_eq!(v, json!("NaN"));

    let plain = tmp.path().join("p.zarr");
    let plain = plain.to_str().unwrap();
    ok(&[
        "create", plain, "--shape", "7,9", "--dtype", "int64", "--chunks", "3,4", "--codec",
        "gzip:9",
    ]);
    let i = info(plain);
    assert_eq!(i["chunk_shape"], json!([3, 4]));
    assert_eq!(i["inner_chunk_shape"], Value::Null);
    assert_eq!(i["codecs"][1]["name"], "gzip");
    assert_eq!(i["codecs"][1]["configuration"]["level"], 9);
    assert_eq!(i["fill_value"], 0);

    // --shards alone: one inner chunk per shard; no --chunks: one chunk
    let a = tmp.path().join("a.zarr");
    ok(&[
        "create",
        a.to_str().unwrap(),
        "--shape",
        "8",
        "--dtype",
        "uint8",
        "--shards",
        "4",
    ]);
    let i = info(a.to_str().unwrap());
    assert_eq!(
        (i["chunk_shape"].clone(), i["inner_chunk_shape"].clone()),
        (json!([4]), json!([4]))
    );
    let b = tmp.path().join("b.zarr");
    ok(&[
        "create",
        b.to_str().unwrap(),
        "--shape",
        "8,3",
        "--dtype",
        "bool",
        "--codec",
        "none",
    ]);
    let i = info(b.to_str().unwrap());
    assert_eq!(i["chunk_shape"], json!([8, 3]));
    assert_eq!(i["codecs"].as_array().unwrap().len(), 1);
    assert_eq!(i["fill_value"], false);
}

#[test]
fn zero_d_arrays() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("s.zarr");
    let url = url.to_str().unwrap();
    ok(&[
        "create",
        url,
        "--shape",
        "",
        "--dtype",
        "float64",
        "--fill-value=-Infinity",
    ]);
    let i = info(url);
    assert_eq!(i["shape"], json!([]));
    assert_eq!(i["chunk_shape"], json!([]));
    assert_eq!(ok(&["get", url]).trim(), "\"-Infinity\"");
    let out = tmp.path().join("s.npy");
    ok(&["get", url, "-o", out.to_str().unwrap()]);
    let (d, shape, data) = read_npy(&out);
    assert_eq!((d.as_str(), shape), ("<f8", vec![]));
    assert_eq!(data, f64::NEG_INFINITY.to_le_bytes());
}

/// Every zarr.json fill-value form, written bare, lands canonically in the metadata and
/// reads back bit-exactly.
#[test]
fn fill_value_forms() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, Value, &str, Vec<u8>)] = &[
        ("int8", "-1", json!(-1), "|i1", vec![0xff]),
        ("int16", "0", json!(0), "<i2", vec![0, 0]),
        (
            "float32",
            "NaN",
            json!("NaN"),
            "<f4",
            f32::NAN.to_le_bytes().to_vec(),
        ),
        (
            "float32",
            "-Infinity",
            json!("-Infinity"),
            "<f4",
            f32::NEG_INFINITY.to_le_bytes().to_vec(),
        ),
        (
            "float32",
            "0x7fc00001",
            json!("0x7fc00001"),
            "<f4",
            0x7fc00001u32.to_le_bytes().to_vec(),
        ),
        (
            "complex64",
            "[1.5,-2.5]",
            json!([1.5, -2.5]),
            "<c8",
            [1.5f32.to_le_bytes(), (-2.5f32).to_le_bytes()].concat(),
        ),
        (
            "complex128",
            r#"["NaN","Infinity"]"#,
            json!(["NaN", "Infinity"]),
            "<c16",
            [f64::NAN.to_le_bytes(), f64::INFINITY.to_le_bytes()].concat(),
        ),
        (
            "uint64",
            "18446744073709551615",
            json!(18446744073709551615u64),
            "<u8",
            u64::MAX.to_le_bytes().to_vec(),
        ),
        ("bool", "true", json!(true), "|b1", vec![1]),
        (
            "float16",
            "1.5",
            json!(1.5),
            "<f2",
            half::f16::from_f32(1.5).to_le_bytes().to_vec(),
        ),
    ];
    for (n, (dtype, text, canonical, descr, bytes)) in cases.iter().enumerate() {
        let url = tmp.path().join(format!("{n}.zarr"));
        let url = url.to_str().unwrap();
        ok(&[
            "create",
            url,
            "--shape",
            "2",
            "--dtype",
            dtype,
            &format!("--fill-value={text}"),
        ]);
        let i = info(url);
        assert_eq!(&i["fill_value"], canonical, "{dtype} {text}");
        let out = tmp.path().join(format!("{n}.npy"));
        ok(&["get", url, "-o", out.to_str().unwrap()]);
        let (d, shape, data) = read_npy(&out);
        assert_eq!((d.as_str(), shape), (*descr, vec![2]), "{dtype}");
        assert_eq!(
            data,
            [bytes.clone(), bytes.clone()].concat(),
            "{dtype} {text}"
        );
    }
    // `--fill-value -1` (a separate word beginning with '-') is accepted too
    let url = tmp.path().join("neg.zarr");
    ok(&[
        "create",
        url.to_str().unwrap(),
        "--shape",
        "1",
        "--dtype",
        "int32",
        "--fill-value",
        "-1",
    ]);
    assert_eq!(info(url.to_str().unwrap())["fill_value"], -1);
}

#[test]
fn existing_nodes_and_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("a.zarr");
    let url = url.to_str().unwrap();
    ok(&["create", url, "--shape", "4", "--dtype", "int8"]);
    let e = fails(&["create", url, "--shape", "4", "--dtype", "int8"]);
    assert!(
        e.contains("already exists") && e.contains("--overwrite"),
        "{e}"
    );
    ok(&[
        "create",
        url,
        "--shape",
        "5,5",
        "--dtype",
        "uint16",
        "--overwrite",
    ]);
    assert_eq!(info(url)["shape"], json!([5, 5]));
}

#[test]
fn invalid_specifications() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("a.zarr");
    let url = url.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--shape", "10,x", "--dtype", "int8"], "`x`"),
        (&["--shape", "10", "--dtype", "float99"], "float99"),
        (
            &["--shape", "10", "--dtype", "int8", "--fill-value", "300"],
            "300",
        ),
        (
            &["--shape", "10", "--dtype", "int8", "--codec", "brotli"],
            "brotli",
        ),
        (
            &["--shape", "10", "--dtype", "int8", "--codec", "zstd:99"],
            "99",
        ),
        (
            &["--shape", "10", "--dtype", "int8", "--chunks", "3,3"],
            "rank",
        ),
        (
            &[
                "--shape", "10", "--dtype", "int8", "--shards", "4", "--chunks", "3",
            ],
            "divisible",
        ),
        (
            &[
                "--shape",
                "10",
                "--dtype",
                "int8",
                "--dimension-names",
                "a,b",
            ],
            "names",
        ),
        (
            &["--shape", "10", "--dtype", "int8", "--attributes", "[1]"],
            "JSON object",
        ),
        (
            &[
                "--shape",
                "10",
                "--dtype",
                "int8",
                "--index-location",
                "start",
            ],
            "sharded",
        ),
        (
            &[
                "--shape",
                "10",
                "--dtype",
                "int8",
                "--index-location",
                "middle",
            ],
            "middle",
        ),
        (&["--shape", "10"], "--dtype"),
    ];
    for (args, want) in cases {
        let mut all = vec!["create", url];
        all.extend_from_slice(args);
        let e = fails(&all);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // nothing was created
    assert!(!tmp.path().join("a.zarr").join("zarr.json").exists());
}

/// `--codec lz4[:ACCELERATION]` and `lzma[:PRESET]`: numcodecs' LZ4 and LZMA
/// (`numcodecs.lz4` / `numcodecs.lzma` in v3, the `lz4` / `lzma` compressors in v2),
/// written and read back through the CLI; an out-of-range setting is refused.
#[test]
fn numcodecs_compressors_in_either_format() {
    let tmp = tempfile::tempdir().unwrap();
    for (codec, name, setting) in [
        ("lz4:3", "lz4", "acceleration"),
        ("lzma:1", "lzma", "preset"),
    ] {
        let value: u64 = codec[name.len() + 1..].parse().unwrap();
        for (dir, format) in [("v3.zarr", "3"), ("v2.zarr", "2")] {
            let dir = format!("{name}-{dir}");
            let url = tmp.path().join(&dir);
            let url = url.to_str().unwrap();
            ok(&[
                "create",
                url,
                "--shape",
                "6,5",
                "--dtype",
                "int32",
                "--chunks",
                "4,3",
                "--codec",
                codec,
                "--zarr-format",
                format,
            ]);
            ok(&["set", url, "1:5,0:4", "--value", "-7"]);
            let got: Value = serde_json::from_str(&ok(&["get", url, "0:2,3:5"])).unwrap();
            assert_eq!(got, json!([[0, 0], [-7, 0]]), "{dir}");
            if format == "3" {
                let i = info(url);
                assert_eq!(i["codecs"][1]["name"], format!("numcodecs.{name}"));
                assert_eq!(i["codecs"][1]["configuration"][setting], value);
            } else {
                let zarray: Value = serde_json::from_slice(
                    &std::fs::read(tmp.path().join(&dir).join(".zarray")).unwrap(),
                )
                .unwrap();
                // numcodecs' get_config, as zarr-python writes it (lzma: its defaults too)
                let mut want = json!({"id": name, setting: value});
                if name == "lzma" {
                    want = json!({"id": "lzma", "format": 1, "check": -1, "preset": value,
                        "filters": null});
                }
                assert_eq!(zarray["compressor"], want);
            }
        }
        let bad = tmp.path().join("bad.zarr");
        let e = fails(&[
            "create",
            bad.to_str().unwrap(),
            "--shape",
            "6",
            "--dtype",
            "int8",
            "--codec",
            &format!("{name}:99999999"),
        ]);
        assert!(e.contains(name) && e.contains(setting), "{e}");
    }
}
