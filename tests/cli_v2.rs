//! The CLI on Zarr v2 nodes: `info`, `tree`, `get` and `set` on zarr-python's v2 fixtures,
//! `create --zarr-format 2`, and `copy --zarr-format 3|2` migrating a v2 hierarchy to v3 and
//! back, each read again exactly (and by zarr-python and TensorStore for the v2 writes).

mod common;

use common::cli::*;
use serde_json::{Value, json};
use std::path::Path;

fn info(url: &str) -> Value {
    serde_json::from_str(&ok(&["info", "--json", url])).unwrap()
}

fn get_npy(url: &str, sel: &str, out: &Path) -> (String, Vec<u64>, Vec<u8>) {
    ok(&["get", "-o", out.to_str().unwrap(), "--", url, sel]);
    read_npy(out)
}

/// Copies a fixture directory (hidden `.z*` files included) to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

#[test]
fn info_tree_and_get_read_v2_nodes() {
    let arr = fixture("fixtures/zarr-python-v2/order_f_float32");
    let i = info(&arr);
    assert_eq!(i["zarr_format"], 2);
    assert_eq!(i["node_type"], "array");
    assert_eq!(i["data_type"], "float32");
    assert_eq!(i["chunk_key_encoding"]["name"], "v2");
    assert_eq!(i["codecs"][0]["name"], "transpose");
    let text = ok(&["info", &arr]);
    assert!(text.contains("zarr_format         2"), "{text}");
    let g = info(&fixture("fixtures/zarr-python-v2/hierarchy"));
    assert_eq!(g["zarr_format"], 2);
    assert_eq!(g["attributes"]["title"], "zarrflow v2 hierarchy");
    assert_eq!(
        g["children"],
        json!([
            {"name": "arr_root", "node_type": "array"},
            {"name": "g1", "node_type": "group"},
            {"name": "g_empty", "node_type": "group"},
        ])
    );
    let tree = ok(&["tree", &fixture("fixtures/zarr-python-v2/hierarchy")]);
    assert!(tree.contains("arr_root  [10] int32"), "{tree}");
    assert!(tree.contains("arr1  [6, 5] float32"), "{tree}");
    assert!(tree.contains("g_empty/"), "{tree}");
    // `get` equals the generator's NumPy selection
    let m = manifest();
    let entry = m["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == "fixtures/zarr-python-v2/separator_slash")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for s in entry["selections"].as_array().unwrap() {
        if s["mode"] != "basic" {
            continue;
        }
        let out = dir.path().join("sel.npy");
        let got = get_npy(
            &fixture("fixtures/zarr-python-v2/separator_slash"),
            s["selection"].as_str().unwrap(),
            &out,
        );
        let want = read_npy(&test_data().join(s["expected"].as_str().unwrap()));
        assert_eq!(got, want, "{}", s["selection"]);
    }
    // stats count the chunks, not the v2 documents
    let stats = info_stats(&fixture("fixtures/zarr-python-v2/compressor_zlib"));
    assert_eq!(stats["stats"]["stored"], 9);
    // what zarrflow does not read yet is named
    let e = fails(&[
        "get",
        &fixture("fixtures/zarr-python-2.18/unsupported_base64"),
    ]);
    assert!(e.contains("`base64`") && e.contains(".zarray"), "{e}");
}

fn info_stats(url: &str) -> Value {
    serde_json::from_str(&ok(&["info", "--json", "--stats", url])).unwrap()
}

#[test]
fn set_writes_into_a_v2_array() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    copy_dir(
        &test_data().join("fixtures/zarr-python-v2/fill_42_int16"),
        &a,
    );
    let url = a.to_str().unwrap();
    ok(&["set", url, "8:10, 5:7", "--value", "-3"]);
    let out = ok(&["get", url, "7:10, 5:7"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, json!([[42, 42], [-3, -3], [-3, -3]]));
    // the chunk keys are v2's, and no zarr.json appeared
    assert!(a.join("2.1").is_file());
    assert!(!a.join("zarr.json").exists());
    assert!(!a.join("c").exists());
}

#[test]
fn create_writes_v2_and_copy_migrates_between_formats() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = dir.path().join("new.zarr");
    let url = v2.to_str().unwrap();
    ok(&[
        "create",
        url,
        "--shape",
        "6,5",
        "--dtype",
        "uint16",
        "--chunks",
        "4,2",
        "--codec",
        "gzip:3",
        "--fill-value",
        "9",
        "--attributes",
        r#"{"a": 1}"#,
        "--zarr-format",
        "2",
    ]);
    let zarray: Value =
        serde_json::from_slice(&std::fs::read(v2.join(".zarray")).unwrap()).unwrap();
    assert_eq!(zarray["compressor"]["id"], "gzip");
    assert_eq!(zarray["fill_value"], 9);
    assert!(v2.join(".zattrs").is_file());
    assert!(!v2.join("zarr.json").exists());
    ok(&["set", url, "1:3, 1:4", "--value", "7"]);
    assert_eq!(info(url)["zarr_format"], 2);
    // sharding cannot be written in v2
    let e = fails(&[
        "create",
        dir.path().join("bad").to_str().unwrap(),
        "--shape",
        "8",
        "--dtype",
        "int8",
        "--shards",
        "4",
        "--chunks",
        "2",
        "--zarr-format",
        "2",
    ]);
    assert!(e.contains("sharding"), "{e}");

    // a v2 hierarchy migrated to v3 and back: the same values, attributes and children
    let src = fixture("fixtures/zarr-python-v2/hierarchy");
    let v3 = dir.path().join("v3.zarr");
    ok(&[
        "copy",
        "-q",
        &src,
        v3.to_str().unwrap(),
        "--zarr-format",
        "3",
    ]);
    assert!(v3.join("zarr.json").is_file());
    assert!(v3.join("arr_root/zarr.json").is_file());
    assert!(v3.join("arr_root/c/0").is_file(), "v3 default chunk keys");
    assert!(!v3.join(".zgroup").exists());
    let back = dir.path().join("back.zarr");
    ok(&[
        "copy",
        "-q",
        v3.to_str().unwrap(),
        back.to_str().unwrap(),
        "--zarr-format",
        "2",
    ]);
    assert!(back.join(".zgroup").is_file());
    assert!(back.join("g1/arr1/.zarray").is_file());
    assert!(back.join("g1/arr1/0.0").is_file());
    for node in [v3.as_path(), back.as_path()] {
        let i = info(node.to_str().unwrap());
        assert_eq!(i["attributes"]["title"], "zarrflow v2 hierarchy");
        assert_eq!(i["children"].as_array().unwrap().len(), 3);
        for arr in ["arr_root", "g1/arr1"] {
            assert_eq!(
                ok(&["get", "--full", node.join(arr).to_str().unwrap()]),
                ok(&["get", "--full", &format!("{src}/{arr}")]),
                "{arr}"
            );
        }
        let a = info(node.join("arr_root").to_str().unwrap());
        assert_eq!(a["attributes"]["units"], "m");
    }
    assert_eq!(info(back.to_str().unwrap())["zarr_format"], 2);
    assert_eq!(info(v3.to_str().unwrap())["zarr_format"], 3);
    // zarr-python and TensorStore read zarrflow's v2 copy exactly
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("test-data/check_array.py");
    let npy = dir.path().join("arr1.npy");
    ok(&[
        "get",
        "-o",
        npy.to_str().unwrap(),
        &format!("{src}/g1/arr1"),
    ]);
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(back.join("g1/arr1"))
        .arg(&npy)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.matches(": OK").count(), 2, "{stdout}");
}

/// `create --zarr-format 2` + `set`: the chunks and `.zarray` are the bytes zarr-python
/// 3.4.2 stores in a v2 array with the same numcodecs compressor (zlib, zstd, bz2, lz4 at two accelerations,
/// lzma, blosc), and its own v2 array reads zarrflow's.
#[test]
fn v2_chunks_are_the_bytes_zarr_python_stores() {
    let tmp = tempfile::tempdir().unwrap();
    // runs and repeats that the compressors find (lz4 at two accelerations finds other ones)
    let values: Vec<u8> = (0..2000i32)
        .flat_map(|i| ((i / 3) % 97 + (i % 11) * 1000 - 2000).to_le_bytes())
        .collect();
    let npy = tmp.path().join("v.npy");
    common::write_npy(&npy, "<i4", &[40, 50], &values);
    let cases = [
        ("zlib:4", "numcodecs.Zlib(4)"),
        ("zstd:3", "numcodecs.Zstd(3)"),
        ("bz2:6", "numcodecs.BZ2(6)"),
        ("lz4:1", "numcodecs.LZ4(1)"),
        ("lz4:20", "numcodecs.LZ4(20)"),
        ("lzma:6", "numcodecs.LZMA(preset=6)"),
        (
            "blosc:lz4:5",
            "numcodecs.Blosc('lz4', 5, shuffle=numcodecs.Blosc.SHUFFLE)",
        ),
    ];
    let mut script = "import numpy as np, numcodecs, zarr\ndata = np.load(r'''NPY''')\n"
        .replace("NPY", npy.to_str().unwrap());
    for (k, (codec, theirs)) in cases.iter().enumerate() {
        let ours = tmp.path().join(format!("ours{k}"));
        let ours = ours.to_str().unwrap();
        ok(&[
            "create",
            ours,
            "--shape",
            "40,50",
            "--dtype",
            "int32",
            "--chunks",
            "20,25",
            "--codec",
            codec,
            "--zarr-format",
            "2",
        ]);
        ok(&["set", ours, "", "--from", npy.to_str().unwrap()]);
        let path = tmp.path().join(format!("theirs{k}"));
        script.push_str(&format!(
            "z = zarr.create_array(r'''{}''', shape=(40, 50), dtype='int32', chunks=(20, 25), \
             compressors={theirs}, zarr_format=2, fill_value=0)\nz[...] = data\n\
             assert (zarr.open_array(r'''{ours}''', mode='r')[...] == data).all()\n",
            path.display()
        ));
    }
    let py = tmp.path().join("write.py");
    std::fs::write(&py, script).unwrap();
    let python = common::venv::python(".venv");
    common::venv::run_checker(&python, &[] as &[&str], &py, "zarr-python's v2 writes");
    for (k, (codec, _)) in cases.iter().enumerate() {
        let chunks = |dir: &str| {
            let mut files: Vec<(String, Vec<u8>)> = common::files_under(&tmp.path().join(dir))
                .into_iter()
                .filter(|(name, _)| !name.starts_with('.'))
                .collect();
            files.sort();
            files
        };
        let (ours, theirs) = (chunks(&format!("ours{k}")), chunks(&format!("theirs{k}")));
        assert_eq!(ours.len(), 4, "{codec}");
        assert!(
            ours == theirs,
            "{codec}: the chunks differ from zarr-python's"
        );
        // and the same .zarray text (zarr-python's field order, numcodecs' configurations)
        let zarray = |dir: &str| std::fs::read_to_string(tmp.path().join(dir).join(".zarray"));
        assert_eq!(
            zarray(&format!("ours{k}")).unwrap(),
            zarray(&format!("theirs{k}")).unwrap(),
            "{codec}"
        );
    }
}
