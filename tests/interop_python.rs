//! Interop: arrays written by zarrflow (every core data type, sharded and unsharded, index at
//! start and end, partial writes, edge shards, fill-value elision, special fill values) are
//! read back exactly by zarr-python 3.4.2 and TensorStore 0.1.86, from the pinned virtualenv
//! that `scripts/python-env.sh` builds (`scripts/test.sh` runs it first).

mod common;

use std::path::Path;

use common::venv;
use serde_json::json;
use zarrflow::DataType;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::ArraySpec;
use zarrflow::npy::{self, NpyType};
use zarrflow::store::{Store, StoreKey, StoreOptions};

/// Writes native-endian C-order `bytes` of a data type as a `.npy` file (zarrflow's writer).
fn write_npy(path: &Path, data_type: &str, shape: &[u64], bytes: &[u8]) {
    let ty = NpyType::of(data_type.parse::<DataType>().unwrap());
    std::fs::write(path, npy::npy_bytes(ty, shape, bytes).unwrap()).unwrap();
}

/// Deterministic element bytes for cell `i` of a data type (valid values for every type).
fn value_bytes(data_type: &str, i: u64) -> Vec<u8> {
    let x = (i * 37 + 11) % 251;
    match data_type {
        "bool" => vec![(x % 2) as u8],
        "int8" => ((x as i64 - 125) as i8).to_le_bytes().to_vec(),
        "uint8" => (x as u8).to_le_bytes().to_vec(),
        "int16" => ((x as i64 * 131 - 16000) as i16).to_le_bytes().to_vec(),
        "uint16" => ((x * 257) as u16).to_le_bytes().to_vec(),
        "float16" => half::f16::from_f32(x as f32 / 8.0 - 10.0)
            .to_le_bytes()
            .to_vec(),
        "int32" => ((x as i64 * 1_000_003 - 99) as i32).to_le_bytes().to_vec(),
        "uint32" => ((x * 16_777_259) as u32).to_le_bytes().to_vec(),
        "float32" => (x as f32 * 0.37 - 40.0).to_le_bytes().to_vec(),
        "int64" => ((x as i64) * -3_000_000_000_123).to_le_bytes().to_vec(),
        "uint64" => (u64::MAX - x * 1_000_000_007).to_le_bytes().to_vec(),
        "float64" => (x as f64 * -1.25e-3 + 0.5).to_le_bytes().to_vec(),
        "complex64" => [(x as f32).to_le_bytes(), (-(x as f32) / 3.0).to_le_bytes()].concat(),
        "complex128" => [
            (x as f64 * 1e10).to_le_bytes(),
            (x as f64 / -7.0).to_le_bytes(),
        ]
        .concat(),
        other => panic!("{other}"),
    }
}

struct Case {
    name: String,
    data_type: &'static str,
    shape: Vec<u64>,
    spec: ArraySpec,
}

fn cases() -> Vec<Case> {
    let types = [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ];
    let mut out = Vec::new();
    for (k, t) in types.iter().enumerate() {
        let shape = vec![10, 7];
        // Sharded, index at the end (or start for every other type), edge shards.
        out.push(Case {
            name: format!("{t}_sharded"),
            data_type: t,
            shape: shape.clone(),
            spec: ArraySpec::new(shape.clone(), t)
                .shard_shape(vec![4, 4])
                .inner_chunk_shape(vec![2, 2])
                .index_at_start(k % 2 == 1),
        });
        // Unsharded, edge chunks.
        out.push(Case {
            name: format!("{t}_chunked"),
            data_type: t,
            shape: shape.clone(),
            spec: ArraySpec::new(shape, t).shard_shape(vec![3, 4]),
        });
    }
    let special = |name: &str, t: &'static str, fill: serde_json::Value| Case {
        name: name.into(),
        data_type: t,
        shape: vec![9, 9],
        spec: ArraySpec::new(vec![9, 9], t)
            .shard_shape(vec![4, 4])
            .inner_chunk_shape(vec![2, 2])
            .fill_value(fill)
            .unwrap(),
    };
    out.push(special("float32_fill_nan", "float32", json!("NaN")));
    out.push(special(
        "float64_fill_neg_inf",
        "float64",
        json!("-Infinity"),
    ));
    out.push(special(
        "float32_fill_hex_nan",
        "float32",
        json!("0x7fc00001"),
    ));
    out.push(special(
        "uint64_fill_max",
        "uint64",
        json!(18446744073709551615u64),
    ));
    out.push(special(
        "int64_fill_min",
        "int64",
        json!(-9223372036854775808i64),
    ));
    out.push(special(
        "complex128_fill_nan_inf",
        "complex128",
        json!(["NaN", "Infinity"]),
    ));
    out.push(Case {
        name: "rank0".into(),
        data_type: "int32",
        shape: vec![],
        spec: ArraySpec::new(vec![], "int32"),
    });
    out.push(Case {
        name: "uint16_3d_sharded".into(),
        data_type: "uint16",
        shape: vec![5, 6, 7],
        spec: ArraySpec::new(vec![5, 6, 7], "uint16")
            .shard_shape(vec![4, 4, 4])
            .inner_chunk_shape(vec![2, 2, 4]),
    });
    out
}

/// The Zarr v2 cases: every core data type unsharded with edge chunks (the default codecs:
/// `bytes` + zstd, written as the `zstd` compressor), big-endian, F order, the `/`
/// separator, each compressor with a v2 form, special fill values and a 0-d array.
fn v2_cases() -> Vec<Case> {
    use zarrflow::ZarrFormat;
    use zarrflow::metadata::{ChunkKeyEncodingSpec, CodecSpec};
    let mut out: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.name.ends_with("_chunked") || c.name == "rank0")
        .map(|mut c| {
            c.name = format!("v2_{}", c.name);
            c.spec = c.spec.zarr_format(ZarrFormat::V2);
            c
        })
        .collect();
    let v2 = |name: &str, t: &'static str, spec: ArraySpec| Case {
        name: format!("v2_{name}"),
        data_type: t,
        shape: spec.shape.clone(),
        spec: spec.zarr_format(ZarrFormat::V2),
    };
    let base = |t: &str| ArraySpec::new(vec![9, 7], t).shard_shape(vec![4, 3]);
    let big = CodecSpec::new("bytes", json!({"endian": "big"}));
    out.push(v2(
        "int32_big_endian",
        "int32",
        base("int32").codecs([big.clone(), CodecSpec::zstd(1)]),
    ));
    out.push(v2(
        "float64_big_endian_order_f",
        "float64",
        base("float64").codecs([CodecSpec::transpose(&[1, 0]), big, CodecSpec::gzip(4)]),
    ));
    out.push(v2(
        "uint16_separator_slash",
        "uint16",
        base("uint16").chunk_key_encoding(ChunkKeyEncodingSpec::V2 { separator: '/' }),
    ));
    for (name, codec) in [
        ("none", None),
        ("blosc", Some(CodecSpec::blosc("lz4", 5, 2))),
        (
            "zlib",
            Some(CodecSpec::new("numcodecs.zlib", json!({"level": 3}))),
        ),
        (
            "bz2",
            Some(CodecSpec::new("numcodecs.bz2", json!({"level": 5}))),
        ),
    ] {
        let codecs: Vec<CodecSpec> = std::iter::once(CodecSpec::bytes()).chain(codec).collect();
        out.push(v2(
            &format!("int16_{name}"),
            "int16",
            base("int16").codecs(codecs),
        ));
    }
    for (name, t, fill) in [
        ("float32_fill_nan", "float32", json!("NaN")),
        ("float64_fill_neg_inf", "float64", json!("-Infinity")),
        ("int64_fill_min", "int64", json!(-9223372036854775808i64)),
        (
            "complex128_fill_nan_inf",
            "complex128",
            json!(["NaN", "Infinity"]),
        ),
    ] {
        out.push(v2(name, t, base(t).fill_value(fill).unwrap()));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_written_by_zarrflow_read_exactly_in_zarr_python_and_tensorstore() {
    write_and_check(cases()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_v2_arrays_written_by_zarrflow_read_exactly_in_zarr_python_and_tensorstore() {
    let cases = v2_cases();
    assert!(cases.len() > 20);
    write_and_check(cases).await;
}

/// Writes every case (partial, strided, gather and fill-value writes), reads it back, and
/// has zarr-python and TensorStore compare it with the model, bit for bit.
async fn write_and_check(cases: Vec<Case>) {
    let python = venv::python(".venv");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let mut list = String::new();
    let n_cases = cases.len();
    for case in cases {
        let a = Array::create(
            &store,
            &StoreKey::new(case.name.as_str()).unwrap(),
            &case.spec,
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        // a v2 array is stored as .zarray (+ .zattrs), never zarr.json
        let v2 = case.spec.zarr_format == zarrflow::ZarrFormat::V2;
        let node_dir = dir.path().join(&case.name);
        assert_eq!(node_dir.join(".zarray").is_file(), v2, "{}", case.name);
        assert_eq!(node_dir.join("zarr.json").is_file(), !v2, "{}", case.name);
        let elem = case.data_type.parse::<DataType>().unwrap().size();
        let n: u64 = case.shape.iter().product();
        let fill = a.metadata().fill_value().as_ne_bytes().to_vec();
        let mut model: Vec<u8> = (0..n).flat_map(|_| fill.clone()).collect();
        let full: Vec<u8> = (0..n)
            .flat_map(|i| value_bytes(case.data_type, i))
            .collect();
        // 1. a partial write (leaves missing shards / inner chunks / chunks),
        // 2. a strided write, 3. a gather write with repeats, 4. writing the fill value back
        // into a region (elides inner chunks or deletes chunks).
        let steps: &[(&str, &str)] = if case.shape.is_empty() {
            &[("", "basic")]
        } else if case.shape.len() == 3 {
            &[("1:4, 2:, ::3", "basic"), ("[0,4], [5,1], [6,0]", "vindex")]
        } else {
            &[
                ("2:7, 1:6", "basic"),
                ("::-3, 4", "basic"),
                ("[8,0,8], [6,2]", "oindex"),
                ("4:6, :", "fill"),
            ]
        };
        for (sel_text, mode) in steps {
            let sel = Selection::parse(sel_text).unwrap();
            let view = match *mode {
                "oindex" => a.view().oindex(&sel),
                "vindex" => a.view().vindex(&sel),
                _ => a.view().get(&sel),
            }
            .unwrap();
            let mut cells = Vec::new();
            view.transform()
                .for_each_mapped(|_, out| {
                    let mut lin = 0u64;
                    for (d, &x) in out.iter().enumerate() {
                        lin = lin * case.shape[d] + x as u64;
                    }
                    cells.push(lin);
                })
                .unwrap();
            let values: Vec<u8> = if *mode == "fill" {
                cells.iter().flat_map(|_| fill.clone()).collect()
            } else {
                cells
                    .iter()
                    .flat_map(|&c| full[c as usize * elem..(c as usize + 1) * elem].to_vec())
                    .collect()
            };
            view.write_bytes(&values, &view.shape()).await.unwrap();
            for (k, &c) in cells.iter().enumerate() {
                model[c as usize * elem..(c as usize + 1) * elem]
                    .copy_from_slice(&values[k * elem..(k + 1) * elem]);
            }
        }
        assert_eq!(
            a.view().read_bytes().await.unwrap(),
            model,
            "{}: zarrflow reads back its own writes",
            case.name
        );
        let npy = dir.path().join(format!("{}.npy", case.name));
        write_npy(&npy, case.data_type, &case.shape, &model);
        list.push_str(&format!(
            "{}\t{}\n",
            dir.path().join(&case.name).display(),
            npy.display()
        ));
    }
    let list_path = dir.path().join("pairs.txt");
    std::fs::write(&list_path, &list).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("test-data/check_array.py");
    let stdout = venv::run_checker(
        &python,
        &[script.as_os_str(), "--batch".as_ref()],
        &list_path,
        "zarr-python / TensorStore",
    );
    let checked = stdout.lines().filter(|l| l.contains(": OK")).count();
    assert_eq!(checked, 2 * n_cases, "{stdout}");
}
