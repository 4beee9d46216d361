//! Interop with zarr-python 2.18: Zarr v2 arrays written by zarrflow (fixed-size types in either
//! byte order, fixed-width text, `M8` / `m8`, variable-length strings and bytes, `order: F`,
//! the `/` separator, blosc and zlib compressors, missing chunks) are read back exactly by
//! zarr-python 2.18.7 from its own pinned environment, `.venv-zarr2/`
//! (`scripts/python-env-zarr2.sh` builds it; `scripts/test.sh` runs it first). The metadata
//! zarr-python 2.18 reports (dtype with its byte order, order, compressor, separator) is
//! checked too. (The fixtures zarr-python 2.18 wrote are read by the manifest-driven tests:
//! `test-data/manifest-zarr2.json`.)

mod common;

use common::venv;

use serde_json::{Value, json};
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::{ArraySpec, ChunkKeyEncodingSpec, CodecSpec};
use zarrflow::ndarray::{ArrayD, IxDyn};
use zarrflow::npy::{self, NpyType};
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrflow::{DataType, ZarrFormat};

/// Reads each `path<TAB>expected<TAB>properties` line with zarr-python 2.18: the whole array
/// equals the expected `.npy` (raw bytes, little-endian, same kind, size and time unit) or
/// `.json` (strings, bytes as lists of byte values), and the properties (`dtype` as zarr-python
/// reports it, `order`, `compressor` id, `separator`) are what zarr-python sees.
const ZARR2_CHECK: &str = r#"
import json, sys, warnings
import numpy as np, zarr
warnings.filterwarnings("ignore")
assert zarr.__version__ == "2.18.7", zarr.__version__
def le(a):
    return a.astype(a.dtype.newbyteorder("<")) if a.dtype.byteorder == ">" else a
bad = 0
for line in open(sys.argv[1]):
    path, exp, props = line.rstrip("\n").split("\t")
    props = json.loads(props)
    a = zarr.open_array(path, mode="r")
    problems = []
    seen = {"dtype": a.dtype.str, "order": a.order,
            "compressor": a.compressor.codec_id if a.compressor else None,
            "separator": a._dimension_separator or "."}
    for k, v in props.items():
        if seen[k] != v:
            problems.append(f"{k} {seen[k]!r} != {v!r}")
    got = a[...]
    if exp.endswith(".npy"):
        want = np.load(exp)
        if got.shape != want.shape or (got.dtype.kind, got.dtype.itemsize) != (want.dtype.kind, want.dtype.itemsize):
            problems.append(f"{got.shape} {got.dtype} != {want.shape} {want.dtype}")
        elif got.dtype.kind in "Mm" and np.datetime_data(got.dtype) != np.datetime_data(want.dtype):
            problems.append(f"unit {got.dtype} != {want.dtype}")
        elif le(got).tobytes() != le(want).tobytes():
            problems.append("values differ")
    else:
        want = json.load(open(exp))
        vals = [list(v) if isinstance(v, bytes) else v for v in np.asarray(got, dtype=object).reshape(-1).tolist()]
        if list(got.shape) != want["shape"] or vals != want["values"]:
            problems.append(f"values differ: {vals[:6]} != {want['values'][:6]}")
    if problems:
        bad += 1
        print("FAIL", path, "; ".join(problems))
    else:
        print("ok", path, a.dtype.str, a.order, seen["compressor"], seen["separator"])
sys.exit(1 if bad else 0)
"#;

/// Deterministic valid bytes of element `i` of a fixed-size data type.
fn element(t: DataType, i: u64) -> Vec<u8> {
    let x = (i * 37 + 11) % 251;
    match t {
        DataType::FixedString { chars } => {
            let pool = ["", "a", "zé", "αβγ", "😀x", "wxyz"];
            let s: Vec<char> = pool[(x % 6) as usize].chars().collect();
            (0..chars as usize)
                .flat_map(|k| (s.get(k).map_or(0, |&c| c as u32)).to_le_bytes())
                .collect()
        }
        DataType::FixedBytes { len } => {
            let pool: [&[u8]; 5] = [b"", b"a", b"\xff\x00z", b"abcd", b"\x01"];
            let s = pool[(x % 5) as usize];
            (0..len as usize)
                .map(|k| s.get(k).copied().unwrap_or(0))
                .collect()
        }
        DataType::DateTime64(_) | DataType::TimeDelta64(_) => {
            let v = match x % 7 {
                0 => i64::MIN, // NaT
                1 => i64::MAX,
                _ => (x as i64 - 120) * 1_000_000_007_i64,
            };
            v.to_le_bytes().to_vec()
        }
        _ => match t.to_string().as_str() {
            "bool" => vec![(x % 2) as u8],
            "int8" => ((x as i64 - 125) as i8).to_le_bytes().to_vec(),
            "uint16" => ((x * 257) as u16).to_le_bytes().to_vec(),
            "int32" => ((x as i64 * 1_000_003 - 99) as i32).to_le_bytes().to_vec(),
            "uint64" => (u64::MAX - x * 1_000_000_007).to_le_bytes().to_vec(),
            "float32" => (x as f32 * 0.37 - 40.0).to_le_bytes().to_vec(),
            "float64" => (x as f64 * -1.25e-3 + 0.5).to_le_bytes().to_vec(),
            "complex128" => [
                (x as f64 * 1e10).to_le_bytes(),
                (x as f64 / -7.0).to_le_bytes(),
            ]
            .concat(),
            other => panic!("{other}"),
        },
    }
}

fn big() -> CodecSpec {
    CodecSpec::new("bytes", json!({"endian": "big"}))
}
fn zlib(level: u32) -> CodecSpec {
    CodecSpec::new("numcodecs.zlib", json!({ "level": level }))
}

/// (name, spec, what zarr-python 2.18 must report: dtype, order, compressor, separator)
fn cases() -> Vec<(&'static str, ArraySpec, Value)> {
    let spec = |t: &str| {
        ArraySpec::new(vec![9, 7], t)
            .shard_shape(vec![4, 3])
            .zarr_format(ZarrFormat::V2)
    };
    let slash = ChunkKeyEncodingSpec::V2 { separator: '/' };
    // blosc with byte shuffle of the element size
    let blosc = |size: usize| CodecSpec::blosc("lz4", 5, size);
    vec![
        (
            "int32_blosc",
            spec("int32").codecs([CodecSpec::bytes(), blosc(4)]),
            json!({"dtype": "<i4", "order": "C", "compressor": "blosc", "separator": "."}),
        ),
        (
            "int32_big_endian_zlib",
            spec("int32").codecs([big(), zlib(3)]),
            json!({"dtype": ">i4", "compressor": "zlib"}),
        ),
        (
            "float64_big_endian_order_f_blosc",
            spec("float64").codecs([CodecSpec::transpose(&[1, 0]), big(), blosc(8)]),
            json!({"dtype": ">f8", "order": "F", "compressor": "blosc"}),
        ),
        (
            "uint16_slash_zlib",
            spec("uint16")
                .chunk_key_encoding(slash)
                .codecs([CodecSpec::bytes(), zlib(1)]),
            json!({"dtype": "<u2", "separator": "/", "compressor": "zlib"}),
        ),
        (
            "complex128_order_f_fill_nan",
            spec("complex128")
                .codecs([CodecSpec::transpose(&[1, 0]), CodecSpec::bytes(), zlib(2)])
                .fill_value(json!(["NaN", "Infinity"]))
                .unwrap(),
            json!({"dtype": "<c16", "order": "F"}),
        ),
        (
            "int32_big_endian_lz4",
            spec("int32").codecs([
                big(),
                CodecSpec::new("numcodecs.lz4", json!({"acceleration": 2})),
            ]),
            json!({"dtype": ">i4", "compressor": "lz4"}),
        ),
        (
            "int32_delta_zlib",
            spec("int32").codecs([
                CodecSpec::new("numcodecs.delta", json!({"dtype": "<i4"})),
                CodecSpec::bytes(),
                zlib(1),
            ]),
            json!({"dtype": "<i4", "compressor": "zlib"}),
        ),
        (
            "uint16_lzma",
            spec("uint16").codecs([
                CodecSpec::bytes(),
                CodecSpec::new("numcodecs.lzma", json!({"preset": 1})),
            ]),
            json!({"dtype": "<u2", "compressor": "lzma"}),
        ),
        (
            "uint16_astype_int32_crc32",
            spec("uint16").codecs([
                CodecSpec::new(
                    "numcodecs.astype",
                    json!({"encode_dtype": "<i4", "decode_dtype": "<u2"}),
                ),
                CodecSpec::bytes(),
                CodecSpec::new("numcodecs.crc32", json!({})),
            ]),
            json!({"dtype": "<u2", "compressor": "crc32"}),
        ),
        (
            "bool_packbits_jenkins_lookup3",
            spec("bool").codecs([
                CodecSpec::new("numcodecs.packbits", json!({})),
                CodecSpec::bytes(),
                CodecSpec::new("numcodecs.jenkins_lookup3", json!({"initval": 9})),
            ]),
            json!({"dtype": "|b1", "compressor": "jenkins_lookup3"}),
        ),
        (
            "uint64_no_compressor",
            spec("uint64").codecs([CodecSpec::bytes()]),
            json!({"dtype": "<u8", "compressor": null}),
        ),
        ("bool", spec("bool"), json!({"dtype": "|b1"})),
        (
            "float32_fill_neg_inf_blosc",
            spec("float32")
                .codecs([CodecSpec::bytes(), blosc(4)])
                .fill_value(json!("-Infinity"))
                .unwrap(),
            json!({"dtype": "<f4", "compressor": "blosc"}),
        ),
        (
            "datetime_ns_fill_nat_blosc",
            spec("M8[ns]")
                .codecs([CodecSpec::bytes(), blosc(8)])
                .fill_value(json!("NaT"))
                .unwrap(),
            json!({"dtype": "<M8[ns]", "compressor": "blosc"}),
        ),
        (
            "timedelta_s_big_endian_zlib",
            spec("m8[s]").codecs([big(), zlib(1)]),
            json!({"dtype": ">m8[s]", "compressor": "zlib"}),
        ),
        (
            "text_U5_order_f",
            spec("U5").codecs([CodecSpec::transpose(&[1, 0]), CodecSpec::bytes(), zlib(1)]),
            json!({"dtype": "<U5", "order": "F"}),
        ),
        (
            "text_U3_big_endian_slash",
            spec("U3")
                .chunk_key_encoding(slash)
                .codecs([big(), blosc(4)]),
            json!({"dtype": ">U3", "separator": "/"}),
        ),
        (
            "bytes_S4_blosc",
            spec("S4").codecs([CodecSpec::bytes(), blosc(1)]),
            json!({"dtype": "|S4", "compressor": "blosc"}),
        ),
        (
            "string_vlen_utf8",
            ArraySpec::with_data_type([7, 5], DataType::String)
                .shard_shape([3, 2])
                .zarr_format(ZarrFormat::V2),
            json!({"dtype": "|O"}),
        ),
        (
            "string_vlen_utf8_slash",
            ArraySpec::with_data_type([9], DataType::String)
                .shard_shape([4])
                .chunk_key_encoding(slash)
                .zarr_format(ZarrFormat::V2),
            json!({"dtype": "|O", "separator": "/"}),
        ),
        (
            "bytes_vlen_bytes",
            ArraySpec::with_data_type([6, 5], DataType::Bytes)
                .shard_shape([4, 3])
                .zarr_format(ZarrFormat::V2),
            json!({"dtype": "|O"}),
        ),
    ]
}

fn words(n: usize) -> Vec<String> {
    let pool = [
        "",
        "a",
        "zarr",
        "héllo",
        "αβγ",
        "😀",
        "tab\tnl\n",
        "xxxxxxxxx",
    ];
    (0..n)
        .map(|i| pool[(i * 5 + 3) % pool.len()].repeat(1 + i % 2))
        .collect()
}

/// Cells of `shape` (C order) a selection touches, in the view's order.
fn cells_of(a: &Array, text: &str) -> (zarrflow::ArrayView, Vec<usize>) {
    let shape = a.shape().to_vec();
    let view = a.view().get(&Selection::parse(text).unwrap()).unwrap();
    let mut cells = Vec::new();
    view.transform()
        .for_each_mapped(|_, out| {
            let lin = out
                .iter()
                .zip(&shape)
                .fold(0u64, |l, (&x, &s)| l * s + x as u64);
            cells.push(lin as usize);
        })
        .unwrap();
    (view, cells)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_v2_arrays_written_by_zarrflow_read_exactly_in_zarr_python_2_18() {
    let python = venv::python(".venv-zarr2");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let cases = cases();
    let n_cases = cases.len();
    let mut list = String::new();
    for (name, spec, props) in cases {
        let a = Array::create(
            &store,
            &StoreKey::new(name).unwrap(),
            &spec,
            ArrayOptions::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(dir.path().join(name).join(".zarray").is_file(), "{name}");
        let t = a.data_type();
        let n: usize = a.shape().iter().product::<u64>() as usize;
        // a partial write (chunks left missing: they read as the fill value), then a strided one
        let steps = if a.shape().len() == 1 {
            ["1:6", "::-3"]
        } else {
            ["1:5, 0:3", "::-3, 4"]
        };
        let expected = dir.path().join(format!("{name}.expected"));
        if matches!(t, DataType::String | DataType::Bytes) {
            // strings as UTF-8; bytes: the same with 0xff appended (not UTF-8); unwritten: empty
            let full: Vec<Vec<u8>> = words(n)
                .into_iter()
                .map(|w| {
                    let mut b = w.into_bytes();
                    if t == DataType::Bytes {
                        b.push(0xff);
                    }
                    b
                })
                .collect();
            let mut model = vec![Vec::new(); n];
            for text in steps {
                let (view, cells) = cells_of(&a, text);
                let vshape: Vec<usize> = view.shape().iter().map(|&n| n as usize).collect();
                let values: Vec<Vec<u8>> = cells.iter().map(|&c| full[c].clone()).collect();
                let values = ArrayD::from_shape_vec(IxDyn(&vshape), values).unwrap();
                if t == DataType::String {
                    view.write_vlen(&values.mapv(|b| String::from_utf8(b).unwrap()))
                        .await
                        .unwrap();
                } else {
                    view.write_vlen(&values).await.unwrap();
                }
                for &c in &cells {
                    model[c] = full[c].clone();
                }
            }
            let values: Vec<Value> = if t == DataType::String {
                let got: Vec<String> = a
                    .view()
                    .read_vlen::<String>()
                    .await
                    .unwrap()
                    .into_iter()
                    .collect();
                let model: Vec<String> = model
                    .into_iter()
                    .map(|b| String::from_utf8(b).unwrap())
                    .collect();
                assert_eq!(got, model, "{name}: zarrflow reads back its own writes");
                model.into_iter().map(Value::from).collect()
            } else {
                let got: Vec<Vec<u8>> = a
                    .view()
                    .read_vlen::<Vec<u8>>()
                    .await
                    .unwrap()
                    .into_iter()
                    .collect();
                assert_eq!(got, model, "{name}: zarrflow reads back its own writes");
                model.into_iter().map(Value::from).collect()
            };
            let path = expected.with_extension("json");
            std::fs::write(
                &path,
                serde_json::to_vec(&json!({"shape": a.shape(), "values": values})).unwrap(),
            )
            .unwrap();
            list.push_str(&format!(
                "{}\t{}\t{props}\n",
                dir.path().join(name).display(),
                path.display()
            ));
            continue;
        }
        let elem = t.size();
        let fill = a.metadata().fill_value().as_ne_bytes().to_vec();
        let mut model: Vec<u8> = (0..n).flat_map(|_| fill.clone()).collect();
        let full: Vec<u8> = (0..n as u64).flat_map(|i| element(t, i)).collect();
        for text in steps {
            let (view, cells) = cells_of(&a, text);
            let values: Vec<u8> = cells
                .iter()
                .flat_map(|&c| full[c * elem..(c + 1) * elem].to_vec())
                .collect();
            view.write_bytes(&values, &view.shape()).await.unwrap();
            for &c in &cells {
                model[c * elem..(c + 1) * elem].copy_from_slice(&full[c * elem..(c + 1) * elem]);
            }
        }
        assert_eq!(
            a.view().read_bytes().await.unwrap(),
            model,
            "{name}: zarrflow reads back its own writes"
        );
        let path = expected.with_extension("npy");
        std::fs::write(
            &path,
            npy::npy_bytes(NpyType::of(t), a.shape(), &model).unwrap(),
        )
        .unwrap();
        list.push_str(&format!(
            "{}\t{}\t{props}\n",
            dir.path().join(name).display(),
            path.display()
        ));
    }
    let list_path = dir.path().join("list.tsv");
    std::fs::write(&list_path, list).unwrap();
    let stdout = venv::run_checker(
        &python,
        &["-c", ZARR2_CHECK],
        &list_path,
        "zarr-python 2.18",
    );
    assert_eq!(stdout.matches("ok ").count(), n_cases, "{stdout}");
}
