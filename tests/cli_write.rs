//! `zarrflow set` and `copy`: round trips through the built binary.

mod common;

use common::cli::*;
use serde_json::{Value, json};
use std::path::Path;

fn info(url: &str) -> Value {
    serde_json::from_str(&ok(&["info", "--json", url])).unwrap()
}

fn get_npy(url: &str, sel: &str, flags: &[&str], out: &Path) -> (String, Vec<u64>, Vec<u8>) {
    let mut args = vec!["get", "-o", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", url, sel]);
    ok(&args);
    read_npy(out)
}

fn i32s(data: &[u8]) -> Vec<i32> {
    data.chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `create` + `set` + `get` against an in-test model of the array, over basic, oindex and
/// vindex selections, `--value` and `--from` (with broadcasting), sharded and unsharded.
#[test]
fn create_set_get_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, layout) in [
        ("sharded", vec!["--shards", "4,6", "--chunks", "2,3"]),
        ("unsharded", vec!["--chunks", "3,5"]),
        (
            "start",
            vec![
                "--shards",
                "10,6",
                "--chunks",
                "5,2",
                "--index-location",
                "start",
                "--codec",
                "blosc:zstd:3",
            ],
        ),
    ] {
        let url = tmp.path().join(format!("{name}.zarr"));
        let url = url.to_str().unwrap();
        let mut args = vec![
            "create",
            url,
            "--shape",
            "10,12",
            "--dtype",
            "int32",
            "--fill-value",
            "-1",
        ];
        args.extend_from_slice(&layout);
        ok(&args);
        let mut model = vec![-1i32; 120];
        let at = |r: usize, c: usize| r * 12 + c;

        ok(&["set", url, "2:8,::2", "--value", "7"]);
        for r in 2..8 {
            for c in (0..12).step_by(2) {
                model[at(r, c)] = 7;
            }
        }
        // negative steps and indices, after `--`
        ok(&["set", "--value=-5", "--", url, "-1,::-5"]);
        for c in [11, 6, 1] {
            model[at(9, c)] = -5;
        }
        // vindex points
        ok(&["set", url, "[0,9,4],[0,11,4]", "--vindex", "--value", "42"]);
        for (r, c) in [(0, 0), (9, 11), (4, 4)] {
            model[at(r, c)] = 42;
        }
        // oindex block from a file
        let block = tmp.path().join(format!("{name}-block.npy"));
        let values: Vec<i32> = (100..106).collect();
        write_npy(&block, "<i4", &[2, 3], &i32_bytes(&values));
        ok(&[
            "set",
            url,
            "[5,1],[3,0,10]",
            "--oindex",
            "--from",
            block.to_str().unwrap(),
        ]);
        for (i, r) in [5usize, 1].iter().enumerate() {
            for (j, c) in [3usize, 0, 10].iter().enumerate() {
                model[at(*r, *c)] = values[i * 3 + j];
            }
        }
        // a row broadcast over a block
        let row = tmp.path().join(format!("{name}-row.npy"));
        write_npy(&row, "<i4", &[4], &i32_bytes(&[1, 2, 3, 4]));
        ok(&["set", url, "6:9,8:12", "--from", row.to_str().unwrap()]);
        for r in 6..9 {
            for (j, c) in (8..12).enumerate() {
                model[at(r, c)] = j as i32 + 1;
            }
        }
        // a mask
        ok(&[
            "set",
            url,
            "[true,false,false,false,false,false,false,false,false,true],0",
            "--oindex",
            "--value",
            "0",
        ]);
        model[at(0, 0)] = 0;
        model[at(9, 0)] = 0;

        let out = tmp.path().join(format!("{name}-all.npy"));
        let (d, shape, data) = get_npy(url, "", &[], &out);
        assert_eq!((d.as_str(), shape), ("<i4", vec![10, 12]), "{name}");
        assert_eq!(i32s(&data), model, "{name}");
        // a strided read and a gather agree with the model too
        let (_, shape, data) = get_npy(url, "::-3,1::4", &[], &out);
        assert_eq!(shape, vec![4, 3]);
        let want: Vec<i32> = [9usize, 6, 3, 0]
            .iter()
            .flat_map(|&r| [1usize, 5, 9].map(|c| model[at(r, c)]))
            .collect();
        assert_eq!(i32s(&data), want, "{name}");
        let (_, _, data) = get_npy(url, "[3,3,8],[11,0,9]", &["--vindex"], &out);
        assert_eq!(
            i32s(&data),
            vec![model[at(3, 11)], model[at(3, 0)], model[at(8, 9)]]
        );
    }
}

/// Every data type round-trips a `.npy` file bit for bit through `set --from` and `get -o`.
#[test]
fn every_dtype_round_trips_npy() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, usize)] = &[
        ("bool", "|b1", 1),
        ("int8", "|i1", 1),
        ("uint8", "|u1", 1),
        ("int16", "<i2", 2),
        ("uint16", "<u2", 2),
        ("int32", "<i4", 4),
        ("uint32", "<u4", 4),
        ("int64", "<i8", 8),
        ("uint64", "<u8", 8),
        ("float16", "<f2", 2),
        ("float32", "<f4", 4),
        ("float64", "<f8", 8),
        ("complex64", "<c8", 8),
        ("complex128", "<c16", 16),
        ("r16", "|V2", 2),
    ];
    for (dtype, descr, size) in cases {
        let url = tmp.path().join(format!("{dtype}.zarr"));
        let url = url.to_str().unwrap();
        let fill = match *dtype {
            "r16" => "[0,0]",
            "bool" => "false",
            "complex64" | "complex128" => "[0,0]",
            _ => "0",
        };
        ok(&[
            "create",
            url,
            "--shape",
            "5,6",
            "--dtype",
            dtype,
            "--shards",
            "4,4",
            "--chunks",
            "2,2",
            "--fill-value",
            fill,
        ]);
        let n = 5 * 6 * size;
        let data: Vec<u8> = if *dtype == "bool" {
            (0..n).map(|i| (i % 3 == 0) as u8).collect()
        } else {
            // arbitrary bit patterns (NaN payloads included for floats)
            (0..n).map(|i| (i * 37 + 11) as u8).collect()
        };
        let input = tmp.path().join(format!("{dtype}-in.npy"));
        write_npy(&input, descr, &[5, 6], &data);
        ok(&["set", url, "--from", input.to_str().unwrap()]);
        let out = tmp.path().join(format!("{dtype}-out.npy"));
        let (d, shape, got) = get_npy(url, "", &[], &out);
        assert_eq!((d.as_str(), shape), (*descr, vec![5, 6]), "{dtype}");
        assert_eq!(got, data, "{dtype}");
    }
}

/// `--value` takes the zarr.json fill-value forms.
#[test]
fn set_values_in_fill_value_forms() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("f.zarr");
    let url = url.to_str().unwrap();
    ok(&[
        "create", url, "--shape", "6", "--dtype", "float32", "--chunks", "4",
    ]);
    for (i, v) in ["NaN", "-Infinity", "0x7fc00001", "1.5", "-0.0", "Infinity"]
        .iter()
        .enumerate()
    {
        ok(&["set", url, &i.to_string(), &format!("--value={v}")]);
    }
    let out = tmp.path().join("f.npy");
    let (_, _, data) = get_npy(url, "", &[], &out);
    let bits: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(
        bits,
        vec![
            f32::NAN.to_bits(),
            f32::NEG_INFINITY.to_bits(),
            0x7fc00001,
            1.5f32.to_bits(),
            (-0.0f32).to_bits(),
            f32::INFINITY.to_bits()
        ]
    );
    let c = tmp.path().join("c.zarr");
    let c = c.to_str().unwrap();
    ok(&["create", c, "--shape", "2", "--dtype", "complex128"]);
    ok(&["set", c, "1", "--value", r#"["NaN","Infinity"]"#]);
    ok(&["set", c, "0", "--value", "[1.5,-2.5]"]);
    assert_eq!(
        serde_json::from_str::<Value>(&ok(&["get", c])).unwrap(),
        json!([[1.5, -2.5], ["NaN", "Infinity"]])
    );
    let u = tmp.path().join("u.zarr");
    let u = u.to_str().unwrap();
    ok(&["create", u, "--shape", "", "--dtype", "uint64"]);
    ok(&["set", u, "--value", "18446744073709551615"]);
    assert_eq!(ok(&["get", u]).trim(), "18446744073709551615");
    let b = tmp.path().join("b.zarr");
    let b = b.to_str().unwrap();
    ok(&["create", b, "--shape", "3", "--dtype", "bool"]);
    ok(&["set", b, "1:", "--value", "true"]);
    assert_eq!(ok(&["get", b]).trim(), "[false, true, true]");
}

#[test]
fn set_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("a.zarr");
    let url = url.to_str().unwrap();
    ok(&[
        "create", url, "--shape", "4,4", "--dtype", "int32", "--shards", "4,4", "--chunks", "2,2",
    ]);
    let wrong_shape = tmp.path().join("w.npy");
    write_npy(&wrong_shape, "<i4", &[3], &i32_bytes(&[1, 2, 3]));
    let e = fails(&[
        "set",
        url,
        "0:2,0:2",
        "--from",
        wrong_shape.to_str().unwrap(),
    ]);
    assert!(
        e.contains("shape mismatch")
            && e.contains("[3]")
            && e.contains("[2, 2]")
            && e.contains("w.npy"),
        "{e}"
    );
    let wrong_type = tmp.path().join("t.npy");
    write_npy(&wrong_type, "<f8", &[2], &[0u8; 16]);
    let e = fails(&["set", url, "0,0:2", "--from", wrong_type.to_str().unwrap()]);
    assert!(e.contains("<f8") && e.contains("int32"), "{e}");
    let garbage = tmp.path().join("g.npy");
    std::fs::write(&garbage, b"not an npy file").unwrap();
    let e = fails(&["set", url, "--from", garbage.to_str().unwrap()]);
    assert!(e.contains("not a valid .npy file"), "{e}");
    let e = fails(&["set", url, "--from", "/nonexistent/x.npy"]);
    assert!(e.contains("cannot read /nonexistent/x.npy"), "{e}");
    let e = fails(&["set", url, "--value", "1.5"]);
    assert!(e.contains("`1.5`") && e.contains("int32"), "{e}");
    let e = fails(&["set", url, "4,0", "--value", "1"]);
    assert!(e.contains("out of bounds"), "{e}");
    let e = fails(&["set", url]);
    assert!(e.contains("--value") || e.contains("--from"), "{e}");
    let e = fails(&[
        "set",
        url,
        "--value",
        "1",
        "--from",
        wrong_shape.to_str().unwrap(),
    ]);
    assert!(e.contains("cannot be used with"), "{e}");
    // nothing was written by the failed commands
    let out = tmp.path().join("a.npy");
    let (_, _, data) = get_npy(url, "", &[], &out);
    assert!(data.iter().all(|&b| b == 0));
    // http stores are read-only
    let e = fails(&["set", "http://127.0.0.1:9/a.zarr", "--value", "1"]);
    assert!(!e.is_empty());
}

/// An unsharded fixture copied into a sharded layout (and other layouts) reads back exactly.
/// `set --from` reads big-endian files and refuses malformed, Fortran-order and unsupported
/// ones with a one-line error naming the file (exit status 1).
#[test]
fn set_from_checks_npy_files() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("a.zarr");
    let url = url.to_str().unwrap();
    ok(&["create", url, "--shape", "2,2", "--dtype", "int32"]);
    // a header of `dict`, padded as NumPy pads it, then `data`
    let file = |name: &str, dict: &str, data: &[u8]| {
        let mut h = format!("{dict:<117}").into_bytes();
        h.push(b'\n');
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(&h);
        f.extend_from_slice(data);
        let path = tmp.path().join(name);
        std::fs::write(&path, f).unwrap();
        path.to_str().unwrap().to_string()
    };
    let big: Vec<u8> = [1i32, -2, 3, 4]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let be = file(
        "be.npy",
        "{'descr': '>i4', 'fortran_order': False, 'shape': (2, 2), }",
        &big,
    );
    ok(&["set", url, "--from", &be]);
    assert_eq!(ok(&["get", url]).trim(), "[[1, -2],\n [3, 4]]");
    let cases = [
        (
            "fortran.npy",
            "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }",
            16,
            "Fortran",
        ),
        (
            "long.npy",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }",
            17,
            "needs 16",
        ),
        (
            "twice.npy",
            "{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }",
            16,
            "twice",
        ),
        (
            "object.npy",
            "{'descr': '|O', 'fortran_order': False, 'shape': (2, 2), }",
            32,
            "`|O` is not supported",
        ),
        (
            "overflow.npy",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
            0,
            "address",
        ),
    ];
    for (name, dict, len, want) in cases {
        let path = file(name, dict, &vec![0; len]);
        let e = fails(&["set", url, "--from", &path]);
        assert!(e.contains(want) && e.contains(name), "{name}: {e}");
        assert_eq!(run(&["set", url, "--from", &path]).status.code(), Some(1));
    }
    let e = fails(&[
        "set",
        url,
        "--from",
        &file(
            "long.npy",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }",
            &[0; 17],
        ),
    ]);
    assert!(e.contains("not a valid .npy file"), "{e}");
    assert_eq!(
        ok(&["get", url]).trim(),
        "[[1, -2],\n [3, 4]]",
        "nothing written"
    );
}

#[test]
fn copy_rechunks_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manifest();
    let wanted = [
        "fixtures/zarr-python/missing_chunks_fill_42",
        "fixtures/zarr-python/dtype_complex128",
        "fixtures/zarr-python/transpose_3d",
        "fixtures/zarr-python/bytes_big_endian",
        "fixtures/zarr-python/sharded_partial",
        "fixtures/zarr-python/sharded_nested",
        "fixtures/tensorstore/fill_nan_payload_float32",
        "fixtures/hand-built/raw_bits_r16",
        "fixtures/zarr-python/rank0_int32",
        "fixtures/zarr-python/zero_length_dim",
    ];
    let arrays: Vec<&Value> = m["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| wanted.contains(&a["path"].as_str().unwrap()))
        .collect();
    assert_eq!(arrays.len(), wanted.len());
    for (n, a) in arrays.iter().enumerate() {
        let path = a["path"].as_str().unwrap();
        let src = fixture(path);
        let rank = a["shape"].as_array().unwrap().len();
        let shape = |v: u64| vec![v.to_string(); rank].join(",");
        let layouts: Vec<Vec<String>> = vec![
            vec![],
            vec![
                "--shards".into(),
                shape(4),
                "--chunks".into(),
                shape(2),
                "--codec".into(),
                "zstd:3".into(),
            ],
            vec!["--chunks".into(), shape(3), "--codec".into(), "none".into()],
            vec![
                "--shards".into(),
                shape(6),
                "--chunks".into(),
                shape(3),
                "--index-location".into(),
                "start".into(),
                "--codec".into(),
                "blosc:lz4".into(),
            ],
        ];
        for (k, layout) in layouts.iter().enumerate() {
            if rank == 0 && !layout.is_empty() && layout.iter().any(|s| s == "--chunks") {
                // rank 0: only the empty shape
                continue;
            }
            let dst = tmp.path().join(format!("{n}-{k}.zarr"));
            let dst = dst.to_str().unwrap();
            let mut args = vec!["copy".to_string(), src.clone(), dst.to_string()];
            args.extend(layout.iter().cloned());
            ok(&args);
            let out = tmp.path().join(format!("{n}-{k}.npy"));
            ok(&["get", dst, "-o", out.to_str().unwrap()]);
            let got = read_npy(&out);
            let want = read_npy(&test_data().join(a["expected"].as_str().unwrap()));
            assert_eq!(got, want, "{path} copied with {layout:?}");
            let i = info(dst);
            let src_info = info(&src);
            for key in [
                "shape",
                "data_type",
                "fill_value",
                "dimension_names",
                "attributes",
            ] {
                assert_eq!(i[key], src_info[key], "{path} {layout:?}: {key}");
            }
            if layout.iter().any(|s| s == "--shards") {
                assert_eq!(
                    i["chunk_shape"],
                    json!(vec![if layout[1].starts_with('4') { 4 } else { 6 }; rank])
                );
                assert_eq!(
                    i["inner_chunk_shape"],
                    json!(vec![if layout[1].starts_with('4') { 2 } else { 3 }; rank])
                );
            } else if layout.is_empty() {
                assert_eq!(i["chunk_shape"], src_info["chunk_shape"], "{path}");
                assert_eq!(
                    i["inner_chunk_shape"], src_info["inner_chunk_shape"],
                    "{path}"
                );
                assert_eq!(i["codecs"], src_info["codecs"], "{path}");
            } else {
                assert_eq!(i["inner_chunk_shape"], Value::Null);
            }
        }
    }
}

/// A hierarchy copies whole: groups with their attributes, arrays re-encoded.
#[test]
fn copy_hierarchies() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture("fixtures/zarr-python/hierarchy");
    let dst = tmp.path().join("h.zarr");
    let dst = dst.to_str().unwrap();
    let out = ok(&["copy", &src, dst, "--codec", "gzip:1", "-j", "3"]);
    assert_eq!(out, "", "quiet when not on a terminal");
    let tree = ok(&["tree", dst]);
    let want_tree = ok(&["tree", &src]);
    let strip = |t: &str| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(strip(&tree), strip(&want_tree));
    assert_eq!(info(dst)["attributes"], info(&src)["attributes"]);
    for arr in ["arr_root", "g1/arr1", "g1/g2/arr2"] {
        let a = format!("{src}/{arr}");
        let b = format!("{dst}/{arr}");
        assert_eq!(
            ok(&["get", &a, "--full"]),
            ok(&["get", &b, "--full"]),
            "{arr}"
        );
        assert_eq!(info(&b)["attributes"], info(&a)["attributes"]);
        let codecs = info(&b)["codecs"].to_string();
        assert!(codecs.contains("gzip"), "{arr}: {codecs}");
    }
    // a copy onto an existing node needs --overwrite; copies into the source are refused
    let e = fails(&["copy", &src, dst]);
    assert!(e.contains("--overwrite"), "{e}");
    ok(&["copy", &src, dst, "--overwrite"]);
    let inner = format!("{dst}/inner");
    let e = fails(&["copy", dst, &inner]);
    assert!(e.contains("overlap"), "{e}");
    let e = fails(&[
        "copy",
        &src,
        &format!("{}/x.zarr", tmp.path().display()),
        "--shards",
        "3",
    ]);
    assert!(e.contains("rank"), "{e}");
}

/// `set --inner-chunk-order morton` lays a shard out as zarr-python does, `copy` rewrites it
/// in the order it is given (C order by default), and every layout reads the same.
#[test]
fn inner_chunk_order_decides_the_shard_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("a.zarr");
    let url = url.to_str().unwrap();
    ok(&[
        "create", url, "--shape", "4,4", "--dtype", "uint8", "--shards", "4,4", "--chunks", "2,2",
        "--codec", "none",
    ]);
    let values: Vec<u8> = (0..16).collect();
    let npy = tmp.path().join("v.npy");
    common::write_npy(&npy, "|u1", &[4, 4], &values);
    ok(&[
        "set",
        "--inner-chunk-order",
        "morton",
        "--from",
        npy.to_str().unwrap(),
        url,
        "",
    ]);
    let shard = |u: &str| std::fs::read(Path::new(u).join("c/0/0")).unwrap()[..16].to_vec();
    // Morton: inner chunks (0,0), (1,0), (0,1), (1,1)
    let morton = [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15];
    assert_eq!(shard(url), morton);
    let out = tmp.path().join("out.npy");
    assert_eq!(get_npy(url, "", &[], &out).2, values);

    let c = tmp.path().join("c.zarr");
    let c = c.to_str().unwrap();
    ok(&["copy", "-q", url, c]);
    assert_eq!(
        shard(c),
        [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    );
    assert_eq!(get_npy(c, "", &[], &out).2, values);
    let m = tmp.path().join("m.zarr");
    let m = m.to_str().unwrap();
    ok(&["copy", "-q", "--inner-chunk-order", "morton", c, m]);
    assert_eq!(shard(m), morton);
    // --explain says which layout a write would give
    let text = ok(&[
        "set",
        "--inner-chunk-order",
        "morton",
        "--explain",
        url,
        "0, 0",
    ]);
    assert!(text.contains("laid out in morton order"), "{text}");
    let json = ok(&["set", "--explain", "--json", url, "0, 0"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["inner_chunk_order"], "lexicographic");
    // a name it does not know is a usage error
    let err = fails(&[
        "set",
        "--inner-chunk-order",
        "z",
        "--value",
        "1",
        url,
        "0, 0",
    ]);
    assert!(err.contains("morton"), "{err}");
}
