//! numcodecs codecs in Zarr v3 (`numcodecs.*`, as zarr-python 3.4.2 writes them) and the
//! v2 time types (`<M8[ns]`, `>m8[10s]`): zarr-python's fixtures open with their codecs as
//! written (their values are checked byte for byte, with every selection, by
//! `read_fixtures.rs`); the codecs zarrs 0.23 lacks are typed errors naming the codec and the
//! document; and arrays zarrflow writes with these codecs and types are read back exactly by
//! zarr-python 3.4.2 from the pinned virtualenv.

mod common;

use std::path::Path;

use common::venv;

use common::fixtures::{entries, key, test_data};
use common::read_npy;
use serde_json::json;
use zarrflow::DataType;
use zarrflow::ZarrFormat;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::codec::CodecError;
use zarrflow::hierarchy::HierarchyError;
use zarrflow::index::Selection;
use zarrflow::metadata::{ArraySpec, CodecSpec, MetadataError};
use zarrflow::npy::{self, NpyType};
use zarrflow::store::{Store, StoreOptions};

fn local_fixtures() -> Store {
    let (dir, _) = test_data().expect("test-data");
    Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap()
}

/// Every numcodecs fixture opens with the `numcodecs.*` names it was written with (`info`
/// shows them as stored) and reads exactly.
#[tokio::test]
async fn numcodecs_fixtures_open_with_their_codecs_as_written() {
    let (dir, manifest) = test_data().unwrap();
    let store = local_fixtures();
    let mut seen = std::collections::BTreeSet::new();
    for a in entries(&manifest, "arrays") {
        let features = a["features"].as_array().unwrap();
        if !features.iter().any(|f| f == "numcodecs") {
            continue;
        }
        let path = a["path"].as_str().unwrap();
        let array = Array::open_in(&store, &key(path), ArrayOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(path).join("zarr.json")).unwrap())
                .unwrap();
        let written: Vec<String> = codec_names(&doc["codecs"]);
        let given: Vec<String> = codec_names(&serde_json::to_value(array.codecs()).unwrap());
        assert_eq!(given, written, "{path}");
        for n in written.iter().filter(|n| n.starts_with("numcodecs.")) {
            seen.insert(n.clone());
        }
        let (_, _, expected) = read_npy(&dir.join(a["expected"].as_str().unwrap()));
        assert_eq!(array.view().read_bytes().await.unwrap(), expected, "{path}");
    }
    let want = [
        "numcodecs.adler32",
        "numcodecs.astype",
        "numcodecs.bitround",
        "numcodecs.blosc",
        "numcodecs.bz2",
        "numcodecs.crc32",
        "numcodecs.crc32c",
        "numcodecs.delta",
        "numcodecs.fixedscaleoffset",
        "numcodecs.fletcher32",
        "numcodecs.gzip",
        "numcodecs.jenkins_lookup3",
        "numcodecs.lz4",
        "numcodecs.lzma",
        "numcodecs.packbits",
        "numcodecs.pcodec",
        "numcodecs.quantize",
        "numcodecs.shuffle",
        "numcodecs.zlib",
        "numcodecs.zstd",
    ];
    assert_eq!(seen.iter().map(String::as_str).collect::<Vec<_>>(), want);
}

/// Codec names of a codec list, recursively through `sharding_indexed`'s inner codecs.
fn codec_names(codecs: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for c in codecs.as_array().unwrap() {
        out.push(c["name"].as_str().unwrap().to_string());
        if let Some(inner) = c.get("configuration").and_then(|c| c.get("codecs")) {
            out.extend(codec_names(inner));
        }
    }
    out
}

/// The numcodecs configurations neither zarrs 0.23 nor zarrflow implements (raw LZMA, a
/// float16 quantize): a typed error naming the codec, its place in the chain and the
/// document, never values.
#[tokio::test]
async fn numcodecs_configurations_neither_implements_are_typed_errors_naming_them() {
    let (_, manifest) = test_data().unwrap();
    let store = local_fixtures();
    let cases: Vec<_> = entries(&manifest, "unsupported")
        .iter()
        .filter(|c| c["zarr_format"] == 3)
        .collect();
    assert_eq!(cases.len(), 2);
    for c in cases {
        let path = c["path"].as_str().unwrap();
        let codec = c["codec"].as_str().unwrap();
        let e = Array::open_in(&store, &key(path), ArrayOptions::default())
            .await
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&format!("`{codec}`")), "{path}: {text}");
        assert!(text.contains("zarr.json"), "{path}: {text}");
        assert!(
            matches!(
                &e,
                ArrayError::Hierarchy(HierarchyError::Metadata(MetadataError::Codec {
                    source: CodecError::UnsupportedCodec { field, .. },
                    ..
                })) if field.contains(codec) && field.starts_with("codecs[")
            ),
            "{path}: {e:?}"
        );
    }
}

/// `numcodecs.zfpy` stays refused by name, in Zarr v3 and v2, before any chunk is read.
/// zarrs 0.23.14 decodes it behind its `zfp` feature, but its decoder allocates the chunk's
/// elements and then decompresses as many as the stream's own header declares: with that
/// feature on, a 1,576-byte chunk whose header claimed 400 × 500 values inside a 5 × 50
/// chunk corrupted the heap and crashed `zarrflow get` (tried here with the feature on, not
/// committed). This test fails once the codec opens: whoever enables it must first check
/// the header's type and dimensions against the chunk and bound the bits the decoder reads,
/// and replace this test with one of hostile headers.
#[tokio::test]
async fn zfpy_stays_refused_by_name_before_any_chunk_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let v3 = dir.path().join("v3");
    std::fs::create_dir_all(v3.join("c/0")).unwrap();
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": [10, 100], "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 50]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0,
        "codecs": [{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.001}}],
        "attributes": {}
    });
    std::fs::write(v3.join("zarr.json"), doc.to_string()).unwrap();
    // a chunk that is no zfp stream: never read, as the open fails first
    std::fs::write(v3.join("c/0/0"), b"zfp\x05 not a stream").unwrap();
    let v2 = dir.path().join("v2");
    std::fs::create_dir_all(&v2).unwrap();
    let zarray = json!({
        "zarr_format": 2, "shape": [10, 100], "chunks": [5, 50], "dtype": "<f8",
        "compressor": {"id": "zfpy", "mode": 4, "tolerance": 0.001},
        "fill_value": 0.0, "filters": null, "order": "C"
    });
    std::fs::write(v2.join(".zarray"), zarray.to_string()).unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    for (path, codec) in [("v3", "numcodecs.zfpy"), ("v2", "zfpy")] {
        let e = Array::open_in(&store, &key(path), ArrayOptions::default())
            .await
            .unwrap_err();
        assert!(e.to_string().contains(codec), "{path}: {e}");
        let refused = match &e {
            ArrayError::Hierarchy(HierarchyError::Metadata(m)) => match m {
                MetadataError::Codec {
                    source: CodecError::UnsupportedCodec { field, .. },
                    ..
                } => path == "v3" && field.contains(codec),
                MetadataError::UnsupportedV2Codec { id, .. } => path == "v2" && id == codec,
                _ => false,
            },
            _ => false,
        };
        assert!(refused, "{path}: {e:?}");
    }
}

struct Case {
    name: String,
    data_type: DataType,
    spec: ArraySpec,
    /// Element `i` of the written data (native-endian bytes).
    value: fn(u64) -> Vec<u8>,
}

fn u16_value(i: u64) -> Vec<u8> {
    (((i * 37 + 11) % 251 * 257) as u16).to_ne_bytes().to_vec()
}

fn tenths_value(i: u64) -> Vec<u8> {
    // k / 10 survives fixedscaleoffset (scale 10, int32) exactly
    ((((i * 37 + 11) % 251) as f64 - 125.0) / 10.0)
        .to_ne_bytes()
        .to_vec()
}

fn eighths_value(i: u64) -> Vec<u8> {
    ((((i * 37 + 11) % 251) as f64 - 125.0) / 8.0)
        .to_ne_bytes()
        .to_vec()
}

fn u16_as_i32_value(i: u64) -> Vec<u8> {
    let v = u16::from_ne_bytes(u16_value(i).try_into().unwrap());
    i32::from(v).to_ne_bytes().to_vec()
}

fn whole_float_value(i: u64) -> Vec<u8> {
    (((i * 37 + 11) % 251) as f64).to_ne_bytes().to_vec()
}

fn bool_value(i: u64) -> Vec<u8> {
    vec![u8::from((i * 37 + 11).is_multiple_of(3))]
}

fn time_value(i: u64) -> Vec<u8> {
    let v = match i % 11 {
        3 => i64::MIN,
        5 => i64::MAX,
        7 => i64::MIN + 1,
        _ => (i as i64 * 1_000_000_007 - 40_000_000_000) * if i.is_multiple_of(2) { 1 } else { -1 },
    };
    v.to_ne_bytes().to_vec()
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let base = |t: &str| ArraySpec::new(vec![9, 7], t).shard_shape(vec![4, 3]);
    for (name, codec) in [
        (
            "zlib",
            CodecSpec::new("numcodecs.zlib", json!({"level": 3})),
        ),
        (
            "gzip",
            CodecSpec::new("numcodecs.gzip", json!({"level": 5})),
        ),
        ("bz2", CodecSpec::new("numcodecs.bz2", json!({"level": 2}))),
        (
            "zstd",
            CodecSpec::new("numcodecs.zstd", json!({"level": 3})),
        ),
        (
            "zstd_checksum",
            CodecSpec::new("numcodecs.zstd", json!({"level": 1, "checksum": true})),
        ),
        (
            "blosc",
            CodecSpec::new(
                "numcodecs.blosc",
                json!({"cname": "lz4", "clevel": 5, "shuffle": 1}),
            ),
        ),
        ("crc32c", CodecSpec::new("numcodecs.crc32c", json!({}))),
        (
            "lz4",
            CodecSpec::new("numcodecs.lz4", json!({"acceleration": 1})),
        ),
        ("adler32", CodecSpec::new("numcodecs.adler32", json!({}))),
        (
            "fletcher32",
            CodecSpec::new("numcodecs.fletcher32", json!({})),
        ),
        // codecs zarrflow adds to zarrs' registry
        ("lzma", CodecSpec::new("numcodecs.lzma", json!({}))),
        (
            "lzma_alone_check_none",
            CodecSpec::new("numcodecs.lzma", json!({"format": 2, "preset": 1})),
        ),
        (
            "lzma_sha256",
            CodecSpec::new("numcodecs.lzma", json!({"check": 10, "preset": 9})),
        ),
        ("crc32", CodecSpec::new("numcodecs.crc32", json!({}))),
        (
            "crc32_end",
            CodecSpec::new("numcodecs.crc32", json!({"location": "end"})),
        ),
        (
            "jenkins_lookup3",
            CodecSpec::new("numcodecs.jenkins_lookup3", json!({"initval": 7})),
        ),
    ] {
        out.push(Case {
            name: format!("uint16_{name}"),
            data_type: DataType::UInt16,
            spec: base("uint16").codecs([CodecSpec::bytes(), codec]),
            value: u16_value,
        });
    }
    out.push(Case {
        name: "uint16_shuffle_zlib".into(),
        data_type: DataType::UInt16,
        spec: base("uint16").codecs([
            CodecSpec::bytes(),
            CodecSpec::new("numcodecs.shuffle", json!({"elementsize": 2})),
            CodecSpec::new("numcodecs.zlib", json!({"level": 1})),
        ]),
        value: u16_value,
    });
    out.push(Case {
        name: "float64_fixedscaleoffset".into(),
        data_type: DataType::Float64,
        spec: base("float64").codecs([
            CodecSpec::new(
                "numcodecs.fixedscaleoffset",
                json!({"offset": 0, "scale": 10, "dtype": "<f8", "astype": "<i4"}),
            ),
            CodecSpec::bytes(),
            CodecSpec::new("numcodecs.zstd", json!({"level": 1})),
        ]),
        value: tenths_value,
    });
    // numcodecs' delta before `bytes` (an array->array codec); zarr-python's fixtures hold
    // a narrower astype
    for (name, dtype, astype, data_type, value) in [
        (
            "uint16_delta",
            "<u2",
            "<u2",
            DataType::UInt16,
            u16_value as fn(u64) -> Vec<u8>,
        ),
        // eighths: every difference and running sum is exact in float64
        (
            "float64_delta",
            "<f8",
            "<f8",
            DataType::Float64,
            eighths_value,
        ),
    ] {
        out.push(Case {
            name: name.into(),
            data_type,
            spec: base(if data_type == DataType::UInt16 {
                "uint16"
            } else {
                "float64"
            })
            .codecs([
                CodecSpec::new("numcodecs.delta", json!({"dtype": dtype, "astype": astype})),
                CodecSpec::bytes(),
                CodecSpec::new("numcodecs.zstd", json!({"level": 1})),
            ]),
            value,
        });
    }
    // numcodecs' astype, quantize and packbits before `bytes`: values each keeps exactly
    for (name, t, data_type, filter, value) in [
        (
            "int32_astype_uint16",
            "int32",
            DataType::Int32,
            json!(["numcodecs.astype", {"encode_dtype": "<u2", "decode_dtype": "<i4"}]),
            u16_as_i32_value as fn(u64) -> Vec<u8>,
        ),
        (
            "float64_astype_float32",
            "float64",
            DataType::Float64,
            json!(["numcodecs.astype", {"encode_dtype": "<f4", "decode_dtype": "<f8"}]),
            eighths_value,
        ),
        (
            "float64_quantize",
            "float64",
            DataType::Float64,
            json!(["numcodecs.quantize", {"digits": 2, "dtype": "<f8"}]),
            eighths_value,
        ),
        (
            "bool_packbits",
            "bool",
            DataType::Bool,
            json!(["numcodecs.packbits", {}]),
            bool_value,
        ),
        // zarr-extensions' scale_offset (zarr-python 3.4's ScaleOffset)
        (
            "int32_scale_offset",
            "int32",
            DataType::Int32,
            json!(["scale_offset", {"offset": -40, "scale": 3}]),
            u16_as_i32_value,
        ),
        (
            "float64_scale_offset",
            "float64",
            DataType::Float64,
            json!(["scale_offset", {"offset": 0.25, "scale": 8.0}]),
            eighths_value,
        ),
        // zarr-extensions' cast_value (zarr-python 3.4's CastValue, through cast-value-rs)
        (
            "float64_cast_value_uint8",
            "float64",
            DataType::Float64,
            json!(["cast_value", {"data_type": "uint8", "out_of_range": "clamp",
                                  "scalar_map": {"encode": [["NaN", 0]]}}]),
            whole_float_value,
        ),
        (
            "int32_cast_value_float64",
            "int32",
            DataType::Int32,
            json!(["cast_value", {"data_type": "float64"}]),
            u16_as_i32_value,
        ),
    ] {
        out.push(Case {
            name: name.into(),
            data_type,
            spec: base(t).codecs([
                CodecSpec::new(filter[0].as_str().unwrap(), filter[1].clone()),
                CodecSpec::bytes(),
                CodecSpec::new("numcodecs.zstd", json!({"level": 1})),
            ]),
            value,
        });
    }
    out.push(Case {
        name: "float64_pcodec".into(),
        data_type: DataType::Float64,
        spec: base("float64").codecs([CodecSpec::new("numcodecs.pcodec", json!({"level": 8}))]),
        value: tenths_value,
    });
    out.push(Case {
        name: "uint16_sharded_numcodecs_zstd".into(),
        data_type: DataType::UInt16,
        spec: ArraySpec::new(vec![9, 7], "uint16")
            .shard_shape(vec![4, 6])
            .inner_chunk_shape(vec![2, 3])
            .codecs([
                CodecSpec::bytes(),
                CodecSpec::new("numcodecs.zstd", json!({"level": 2})),
            ]),
        value: u16_value,
    });
    // time types, v3 and v2 (either byte order), NaT fill values and missing chunks
    for (name, t, format, big) in [
        ("v3_datetime_ns", "datetime64[ns]", ZarrFormat::V3, false),
        (
            "v3_timedelta_10s",
            "timedelta64[10s]",
            ZarrFormat::V3,
            false,
        ),
        ("v2_datetime_ns", "datetime64[ns]", ZarrFormat::V2, false),
        (
            "v2_timedelta_10s_big",
            "timedelta64[10s]",
            ZarrFormat::V2,
            true,
        ),
        ("v2_datetime_D_big", "datetime64[D]", ZarrFormat::V2, true),
    ] {
        let data_type: DataType = t.parse().unwrap();
        let mut spec = ArraySpec::with_data_type(vec![9, 7], data_type)
            .shard_shape(vec![4, 3])
            .zarr_format(format);
        if format == ZarrFormat::V2 {
            spec = spec.chunk_key_encoding(zarrflow::metadata::ChunkKeyEncodingSpec::V2 {
                separator: '.',
            });
        }
        if big {
            spec = spec.codecs([
                CodecSpec::new("bytes", json!({"endian": "big"})),
                CodecSpec::new("numcodecs.zlib", json!({"level": 1})),
            ]);
        }
        out.push(Case {
            name: name.into(),
            data_type,
            spec,
            value: time_value,
        });
    }
    out
}

/// Has zarr-python compare each array of `list` (lines `ARRAY_DIR\tEXPECTED.npy`) with its
/// expected values, bit for bit (`test-data/check_array.py --batch`); its report.
fn zarr_python_checks(python: &Path, dir: &Path, list: &str) -> String {
    let list_path = dir.join("pairs.txt");
    std::fs::write(&list_path, list).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("test-data/check_array.py");
    venv::run_checker(
        python,
        &[
            script.as_os_str(),
            "--reader".as_ref(),
            "zarr".as_ref(),
            "--batch".as_ref(),
        ],
        &list_path,
        "zarr-python",
    )
}

fn write_npy(path: &Path, data_type: DataType, shape: &[u64], bytes: &[u8]) {
    let ty = NpyType::of(data_type);
    std::fs::write(path, npy::npy_bytes(ty, shape, bytes).unwrap()).unwrap();
}

/// Creates every case, writes part of it (the rest stays missing chunks of the fill value),
/// reads it back, and has zarr-python compare it with the model bit for bit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_zarrflow_writes_with_numcodecs_and_time_types_read_exactly_in_zarr_python() {
    let python = venv::python(".venv");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let mut list = String::new();
    let cases = cases();
    let n_cases = cases.len();
    for case in cases {
        let a = Array::create(
            &store,
            &key(&case.name),
            &case.spec,
            ArrayOptions::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let v2 = case.spec.zarr_format == ZarrFormat::V2;
        assert_eq!(
            dir.path().join(&case.name).join(".zarray").is_file(),
            v2,
            "{}",
            case.name
        );
        let shape = [9u64, 7];
        let elem = case.data_type.size();
        let fill = a.metadata().fill_value().as_ne_bytes().to_vec();
        let mut model: Vec<u8> = (0..63).flat_map(|_| fill.clone()).collect();
        for text in ["0:6, 1:7", "::-3, 0"] {
            let view = a.view().get(&Selection::parse(text).unwrap()).unwrap();
            let mut cells = Vec::new();
            view.transform()
                .for_each_mapped(|_, out| cells.push(out[0] as u64 * shape[1] + out[1] as u64))
                .unwrap();
            let values: Vec<u8> = cells.iter().flat_map(|&c| (case.value)(c)).collect();
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
        let again = Array::open_in(&store, &key(&case.name), ArrayOptions::default())
            .await
            .unwrap();
        assert_eq!(again.data_type(), case.data_type, "{}", case.name);
        let npy = dir.path().join(format!("{}.npy", case.name));
        write_npy(&npy, case.data_type, &shape, &model);
        list.push_str(&format!(
            "{}\t{}\n",
            dir.path().join(&case.name).display(),
            npy.display()
        ));
    }
    let stdout = zarr_python_checks(&python, dir.path(), &list);
    let checked = stdout.lines().filter(|l| l.contains(": OK")).count();
    assert_eq!(checked, n_cases, "{stdout}");
}

/// A byte flipped in a chunk of zarr-python's `numcodecs.crc32c`, `numcodecs.adler32` and
/// `numcodecs.crc32` (the checksum first, numcodecs' default, and last),
/// `numcodecs.fletcher32` and `numcodecs.jenkins_lookup3` fixtures is a decode error for
/// that chunk, never values.
#[tokio::test]
async fn corrupted_checksummed_chunks_are_errors() {
    let (dir, _) = test_data().unwrap();
    for name in [
        "crc32c",
        "adler32",
        "adler32_end",
        "fletcher32",
        "crc32",
        "crc32_end_zstd",
        "jenkins_lookup3",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let src = dir.join(format!("fixtures/zarr-python/numcodecs_{name}"));
        let dst = tmp.path().join("a");
        std::fs::create_dir_all(dst.join("c/1")).unwrap();
        std::fs::copy(src.join("zarr.json"), dst.join("zarr.json")).unwrap();
        let mut chunk = std::fs::read(src.join("c/1/1")).unwrap();
        let mid = chunk.len() / 2;
        chunk[mid] ^= 0x10;
        std::fs::write(dst.join("c/1/1"), &chunk).unwrap();
        let store = Store::open(tmp.path().to_str().unwrap(), StoreOptions::default()).unwrap();
        let a = Array::open_in(&store, &key("a"), ArrayOptions::default())
            .await
            .unwrap();
        let e = a
            .view()
            .get(&Selection::parse("4:8, 3:6").unwrap())
            .unwrap()
            .read_bytes()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("c/1/1"), "{name}: {e}");
        // the chunks left as they were still read (absent ones as the fill value)
        a.view()
            .get(&Selection::parse("0:4, 0:3").unwrap())
            .unwrap()
            .read_bytes()
            .await
            .unwrap();
    }
}

/// LZ4 blocks with real matches, length-extension bytes and more than 64 KiB: a 400 x 400
/// uint16 chunk (320,000 bytes: runs, a ramp and noise) that zarrflow writes is read back
/// exactly by zarr-python (numcodecs' liblz4), and the same chunk written by zarr-python is
/// read exactly by zarrflow (`lz4_flex`), in Zarr v3 and v2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_lz4_chunks_cross_between_zarrflow_and_zarr_python() {
    let python = venv::python(".venv");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let n = 400u64;
    let value = |i: u64| -> u16 {
        match (i / 1000) % 3 {
            0 => 7,                                                    // runs
            1 => (i % 1000) as u16,                                    // a ramp
            _ => (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as u16, // noise
        }
    };
    let data: Vec<u8> = (0..n * n).flat_map(|i| value(i).to_ne_bytes()).collect();
    let npy = dir.path().join("expected.npy");
    write_npy(&npy, DataType::UInt16, &[n, n], &data);
    let mut list = String::new();
    for (name, format) in [("zf_v3", ZarrFormat::V3), ("zf_v2", ZarrFormat::V2)] {
        let spec = ArraySpec::new(vec![n, n], "uint16")
            .shard_shape(vec![n, n])
            .codecs([
                CodecSpec::bytes(),
                CodecSpec::new("numcodecs.lz4", json!({"acceleration": 1})),
            ])
            .zarr_format(format);
        let a = Array::create(&store, &key(name), &spec, ArrayOptions::default())
            .await
            .unwrap();
        a.view().write_bytes(&data, &[n, n]).await.unwrap();
        let chunk = if format == ZarrFormat::V3 {
            "c/0/0"
        } else {
            "0.0"
        };
        let stored = std::fs::read(dir.path().join(name).join(chunk)).unwrap();
        assert!(
            stored.len() > 64 << 10 && stored.len() < data.len(),
            "{name}: {} stored bytes",
            stored.len()
        );
        list.push_str(&format!(
            "{}\t{}\n",
            dir.path().join(name).display(),
            npy.display()
        ));
    }
    let stdout = zarr_python_checks(&python, dir.path(), &list);
    assert_eq!(
        stdout.lines().filter(|l| l.contains(": OK")).count(),
        2,
        "{stdout}"
    );
    // zarr-python writes the same values with numcodecs' LZ4 (liblz4), v3 and v2
    let code = String::from(
        "import numpy as np, zarr, sys\n\
         from zarr.codecs.numcodecs import LZ4\n\
         import numcodecs\n\
         d = np.load(sys.argv[1])\n\
         a = zarr.create_array(store=sys.argv[2] + '/zp_v3', shape=d.shape, dtype=d.dtype, \
         chunks=d.shape, compressors=[LZ4(acceleration=3)])\n\
         a[...] = d\n\
         b = zarr.create_array(store=sys.argv[2] + '/zp_v2', shape=d.shape, dtype=d.dtype, \
         chunks=d.shape, zarr_format=2, compressors=numcodecs.LZ4())\n\
         b[...] = d\n",
    );
    let out = std::process::Command::new(&python)
        .args(["-c", &code])
        .arg(&npy)
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["zp_v3", "zp_v2"] {
        let a = Array::open_in(&store, &key(name), ArrayOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(a.view().read_bytes().await.unwrap(), data, "{name}");
    }
}

/// Array→array codecs before `sharding_indexed` (the shard's inner chunks hold the codec's
/// output: `astype`'s other data type, `packbits`' bytes, `delta`'s differences): zarrflow
/// writes every element and a part again, reads them back, reopens, and zarr-python 3.4.2
/// reads the same values. Before: the inner chunks' size bound used the array's data type
/// (a `uint8` array stored as `float64` had every inner chunk refused as too large).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_to_array_codecs_before_sharding_round_trip_with_zarr_python() {
    let python = venv::python(".venv");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let sharding = |inner: serde_json::Value| {
        json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3], "codecs": inner,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}]}})
    };
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let zstd = json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}});
    let cases = [
        // `bytes` alone inside: each inner chunk's stored size is exact (48 bytes, not 6)
        (
            "uint8_astype_float64",
            "uint8",
            json!({"name": "numcodecs.astype",
                   "configuration": {"encode_dtype": "<f8", "decode_dtype": "|u1"}}),
            DataType::UInt8,
            json!([bytes]),
        ),
        (
            "float64_astype_float32",
            "float64",
            json!({"name": "numcodecs.astype",
                   "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}}),
            DataType::Float64,
            json!([bytes, zstd]),
        ),
        (
            "int32_delta",
            "int32",
            json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}),
            DataType::Int32,
            json!([bytes, zstd]),
        ),
    ];
    let mut list = String::new();
    for (name, t, filter, data_type, inner) in cases {
        let doc = json!({
            "zarr_format": 3, "node_type": "array", "shape": [9, 7], "data_type": t,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 6]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": [filter, sharding(inner)],
        });
        std::fs::create_dir_all(dir.path().join(name)).unwrap();
        std::fs::write(
            dir.path().join(name).join("zarr.json"),
            serde_json::to_vec(&doc).unwrap(),
        )
        .unwrap();
        let a = Array::open_in(&store, &key(name), ArrayOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let elem = data_type.size();
        // eighths (exact in float32), small integers (exact as uint8 through float64)
        let value = |i: u64| -> Vec<u8> {
            let k = (i * 37 + 11) % 251;
            match data_type {
                DataType::UInt8 => vec![k as u8],
                DataType::Float64 => ((k as f64 - 125.0) / 8.0).to_ne_bytes().to_vec(),
                _ => ((k as i32 - 125) * 1_000_003).to_ne_bytes().to_vec(),
            }
        };
        let mut model: Vec<u8> = vec![0; 63 * elem];
        for text in ["0:8, 1:7", "::-3, 0"] {
            let view = a.view().get(&Selection::parse(text).unwrap()).unwrap();
            let mut cells = Vec::new();
            view.transform()
                .for_each_mapped(|_, out| cells.push(out[0] as u64 * 7 + out[1] as u64))
                .unwrap();
            let values: Vec<u8> = cells.iter().flat_map(|&c| value(c)).collect();
            view.write_bytes(&values, &view.shape()).await.unwrap();
            for (k, &c) in cells.iter().enumerate() {
                model[c as usize * elem..(c as usize + 1) * elem]
                    .copy_from_slice(&values[k * elem..(k + 1) * elem]);
            }
        }
        let again = Array::open_in(&store, &key(name), ArrayOptions::default())
            .await
            .unwrap();
        assert_eq!(again.view().read_bytes().await.unwrap(), model, "{name}");
        let npy = dir.path().join(format!("{name}.npy"));
        write_npy(&npy, data_type, &[9, 7], &model);
        list.push_str(&format!(
            "{}\t{}\n",
            dir.path().join(name).display(),
            npy.display()
        ));
    }
    let stdout = zarr_python_checks(&python, dir.path(), &list);
    assert_eq!(
        stdout.lines().filter(|l| l.contains(": OK")).count(),
        3,
        "{stdout}"
    );
}

/// Array→array codecs whose configuration does not fit the array's data type (a
/// `scale_offset` offset outside `uint8`, a `delta` or `astype` of another type, `packbits`
/// on integers, a `cast_value` scalar map value outside its target or of a `bool` array)
/// are refused when the array is opened, naming the codec, not at its first chunk.
#[tokio::test]
async fn array_to_array_configurations_that_do_not_fit_the_data_type_are_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    for (name, t, codec, says) in [
        (
            "offset",
            "uint8",
            json!({"name": "scale_offset", "configuration": {"offset": 300}}),
            "300",
        ),
        (
            "zero",
            "float32",
            json!({"name": "scale_offset", "configuration": {"scale": 0}}),
            "nonzero",
        ),
        (
            "delta",
            "int16",
            json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}),
            "delta",
        ),
        (
            "astype",
            "int16",
            json!({"name": "numcodecs.astype",
                   "configuration": {"encode_dtype": "<i2", "decode_dtype": "<i4"}}),
            "astype",
        ),
        (
            "packbits",
            "int8",
            json!({"name": "numcodecs.packbits"}),
            "bool",
        ),
        (
            "cast_value",
            "float32",
            json!({"name": "cast_value", "configuration": {"data_type": "uint8",
                   "scalar_map": {"encode": [["NaN", 300]]}}}),
            "300",
        ),
        (
            "cast_value_bool",
            "bool",
            json!({"name": "cast_value", "configuration": {"data_type": "uint8"}}),
            "bool",
        ),
        // a bit pattern that is no ASCII hex (zarrs' fill value parser panicked on it)
        (
            "hex",
            "float32",
            json!({"name": "scale_offset", "configuration": {"offset": "0x0é0"}}),
            "0x0é0",
        ),
        (
            "cast_value_hex",
            "float32",
            json!({"name": "cast_value", "configuration": {"data_type": "uint8",
                   "scalar_map": {"encode": [["0x0é0", 0]]}}}),
            "0x0é0",
        ),
        // a fill value the codec cannot encode ((7 - 100) * 1000 is no int16)
        (
            "fill",
            "int16",
            json!({"name": "scale_offset", "configuration": {"offset": 100, "scale": 1000}}),
            "outside",
        ),
    ] {
        let doc = json!({
            "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": t,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": if name == "fill" { 7 } else { 0 },
            "codecs": [codec, {"name": "bytes", "configuration": {"endian": "little"}}],
        });
        std::fs::create_dir_all(dir.path().join(name)).unwrap();
        std::fs::write(
            dir.path().join(name).join("zarr.json"),
            serde_json::to_vec(&doc).unwrap(),
        )
        .unwrap();
        let e = Array::open_in(&store, &key(name), ArrayOptions::default())
            .await
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(says) && text.contains("zarr.json"),
            "{name}: {text}"
        );
    }
}

/// zarr-python writes the same data into a copy of each array's `zarr.json` (no chunks);
/// its stored chunks must be the bytes zarrflow stored: lines `ZARRFLOW_DIR\tCOPY_DIR\tDATA.npy`.
const SAME_BYTES_CHECK: &str = r#"
import os, sys, numpy as np, zarr
bad = 0
for line in open(sys.argv[1]):
    ours, theirs, data = line.rstrip("\n").split("\t")
    a = zarr.open_array(theirs, mode="r+")
    a[...] = np.load(data)
    n = 0
    for root, _, files in os.walk(os.path.join(ours, "c")):
        for f in files:
            p = os.path.join(root, f)
            q = os.path.join(theirs, os.path.relpath(p, ours))
            n += 1
            if open(p, "rb").read() != open(q, "rb").read():
                bad += 1
                print("differ", p)
    if n != 6:
        bad += 1
        print("chunks", n, ours)
    print("same", ours)
sys.exit(1 if bad else 0)
"#;

/// Values whose encoding rounds, clamps or maps (scale_offset, cast_value, quantize, astype
/// on random floats with NaN and infinities where the codec takes them): zarrflow stores
/// exactly the chunk bytes zarr-python 3.4.2 stores for the same values and metadata
/// (uncompressed, so the bytes are the codecs' outputs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lossy_codecs_store_the_bytes_zarr_python_stores() {
    let python = venv::python(".venv");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    // a deterministic spread of magnitudes, signs, ties and specials
    let floats = |n: usize, specials: bool| -> Vec<f64> {
        (0..n)
            .map(|i| {
                let x = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64
                    / (1u64 << 53) as f64;
                match i % 13 {
                    3 if specials => f64::NAN,
                    5 if specials => f64::INFINITY,
                    7 if specials => f64::NEG_INFINITY,
                    9 => (i as f64) + 0.5,
                    11 => -(i as f64) - 0.5,
                    _ => (x - 0.5) * 10f64.powi((i % 7) as i32),
                }
            })
            .collect()
    };
    let cases: Vec<(&str, &str, serde_json::Value, bool)> = vec![
        (
            "so_f32",
            "float32",
            json!({"name": "scale_offset",
            "configuration": {"offset": 0.1, "scale": 3}}),
            true,
        ),
        (
            "so_f64",
            "float64",
            json!({"name": "scale_offset",
            "configuration": {"offset": -7.25, "scale": 0.3}}),
            true,
        ),
        (
            "cv_u8",
            "float64",
            json!({"name": "cast_value", "configuration": {
            "data_type": "uint8", "rounding": "towards-positive", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0], ["Infinity", 255], ["-Infinity", 0]]}}}),
            true,
        ),
        (
            "cv_i16",
            "float32",
            json!({"name": "cast_value", "configuration": {
            "data_type": "int16", "rounding": "nearest-away", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", -1], ["Infinity", 32767], ["-Infinity", -32768]]}}}),
            true,
        ),
        (
            "cv_f16",
            "float64",
            json!({"name": "cast_value", "configuration": {
            "data_type": "float16", "rounding": "towards-zero", "out_of_range": "clamp"}}),
            true,
        ),
        (
            "quantize",
            "float64",
            json!({"name": "numcodecs.quantize",
            "configuration": {"digits": 2, "dtype": "<f8"}}),
            true,
        ),
        (
            "astype_f4",
            "float64",
            json!({"name": "numcodecs.astype",
            "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}}),
            true,
        ),
    ];
    let mut list = String::new();
    for (name, t, filter, specials) in cases {
        let doc = json!({
            "zarr_format": 3, "node_type": "array", "shape": [40, 30], "data_type": t,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0.0,
            "codecs": [filter, {"name": "bytes", "configuration": {"endian": "little"}}],
        });
        for d in [name.to_string(), format!("{name}_zarr")] {
            std::fs::create_dir_all(dir.path().join(&d)).unwrap();
            std::fs::write(
                dir.path().join(&d).join("zarr.json"),
                serde_json::to_vec(&doc).unwrap(),
            )
            .unwrap();
        }
        let values = floats(1200, specials);
        let (data_type, bytes): (DataType, Vec<u8>) = if t == "float32" {
            let v: Vec<u8> = values
                .iter()
                .flat_map(|&x| (x as f32).to_ne_bytes())
                .collect();
            (DataType::Float32, v)
        } else {
            let v: Vec<u8> = values.iter().flat_map(|&x| x.to_ne_bytes()).collect();
            (DataType::Float64, v)
        };
        let a = Array::open_in(&store, &key(name), ArrayOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        a.view()
            .write_bytes(&bytes, &[40, 30])
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let npy = dir.path().join(format!("{name}.npy"));
        write_npy(&npy, data_type, &[40, 30], &bytes);
        list.push_str(&format!(
            "{}\t{}\t{}\n",
            dir.path().join(name).display(),
            dir.path().join(format!("{name}_zarr")).display(),
            npy.display()
        ));
    }
    let list_path = dir.path().join("same.tsv");
    std::fs::write(&list_path, &list).unwrap();
    let stdout = venv::run_checker(
        &python,
        &["-c", SAME_BYTES_CHECK],
        &list_path,
        "zarr-python",
    );
    assert_eq!(stdout.matches("same ").count(), 7, "{stdout}");
}
