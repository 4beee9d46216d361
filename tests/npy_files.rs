//! `zarrflow::npy` against NumPy: every `.npy` file of test-data (written by `numpy.save`) is
//! read with the data type and shape the manifest gives and written again byte for byte; files
//! NumPy writes in every supported type, in both byte orders and in Fortran order, are read
//! (or refused) as they should be, and NumPy reads back exactly what zarrflow writes (NumPy
//! from the pinned virtualenv of `scripts/python-env.sh`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::fixtures::{entries, test_data};
use serde_json::Value;
use zarrflow::DataType;
use zarrflow::npy::{self, ByteOrder, NpyError, NpyType};

fn npy_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            npy_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "npy") {
            out.push(p);
        }
    }
}

#[test]
fn every_fixture_file_reads_and_is_rewritten_byte_for_byte() {
    let Some((dir, _)) = test_data() else {
        eprintln!("test-data/manifest.json not present: skipped");
        return;
    };
    let mut files = Vec::new();
    npy_files(&dir.join("fixtures"), &mut files);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let file = npy::read_npy(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            file.header.descr,
            file.ty().little_endian(),
            "{}",
            path.display()
        );
        let again = npy::npy_bytes(file.ty(), file.shape(), &file.data).unwrap();
        assert!(again == bytes, "{}: rewritten differently", path.display());
    }
    eprintln!("{} .npy files read and rewritten", files.len());
    assert!(files.len() > 1500, "{}", files.len());
}

#[test]
fn fixture_files_have_the_manifests_data_types_and_shapes() {
    let Some((dir, manifest)) = test_data() else {
        eprintln!("test-data/manifest.json not present: skipped");
        return;
    };
    let shape_of = |v: &Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect()
    };
    let (mut arrays, mut selections) = (0, 0);
    for a in entries(&manifest, "arrays") {
        let path = a["path"].as_str().unwrap();
        let Some(expected) = a.get("expected").and_then(Value::as_str) else {
            continue;
        };
        // a name, or zarr-python's object for the time types
        let meta: zarrs::metadata::v3::MetadataV3 =
            serde_json::from_value(a["data_type"].clone()).unwrap();
        let dt = DataType::from_metadata(&meta).unwrap_or_else(|| panic!("{path}"));
        let read = |rel: &str| npy::read_npy(&std::fs::read(dir.join(rel)).unwrap()).unwrap();
        let file = read(expected);
        assert_eq!(file.ty(), NpyType::of(dt), "{path}");
        // a text file's own data type is the variable-length one (`<U n` → string)
        let own = match dt {
            DataType::FixedString { .. } => DataType::String,
            DataType::FixedBytes { .. } => DataType::Bytes,
            t => t,
        };
        assert_eq!(file.ty().data_type(), own, "{path}");
        assert_eq!(file.shape(), shape_of(&a["shape"]), "{path}");
        arrays += 1;
        for s in entries(a, "selections") {
            let file = read(s["expected"].as_str().unwrap());
            assert_eq!(file.ty(), NpyType::of(dt), "{path} {}", s["selection"]);
            assert_eq!(
                file.shape(),
                shape_of(&s["shape"]),
                "{path} {}",
                s["selection"]
            );
            selections += 1;
        }
    }
    eprintln!("{arrays} arrays and {selections} selections checked");
    // 180 Zarr v3 and 57 Zarr v2 fixtures (manifest.json), 66 of zarr-python 2.18
    // (manifest-zarr2.json)
    assert_eq!(arrays, 237 + 66);
    assert!(selections > 1500, "{selections}");
}

/// NumPy type codes and the data types they are.
const TYPES: [(&str, &str); 15] = [
    ("?", "bool"),
    ("i1", "int8"),
    ("i2", "int16"),
    ("i4", "int32"),
    ("i8", "int64"),
    ("u1", "uint8"),
    ("u2", "uint16"),
    ("u4", "uint32"),
    ("u8", "uint64"),
    ("f2", "float16"),
    ("f4", "float32"),
    ("f8", "float64"),
    ("c8", "complex64"),
    ("c16", "complex128"),
    ("V3", "r24"),
];

const SHAPE: [u64; 3] = [2, 3, 4];

/// The element bytes both sides use: `(7 i + 3) mod 256` (0 or 1 for bool), little-endian.
fn values(code: &str, size: usize) -> Vec<u8> {
    (0..24 * size)
        .map(|i| ((i * 7 + 3) % 256) as u8)
        .map(|b| if code == "?" { b % 2 } else { b })
        .collect()
}

const PYTHON_VALUES: &str = "
def values(t):
    dt = np.dtype(t)
    raw = bytes((i * 7 + 3) % 256 for i in range(24 * dt.itemsize))
    if t == '?':
        raw = bytes(b % 2 for b in raw)
    return raw, np.frombuffer(raw, dtype=dt.newbyteorder('<')).reshape(2, 3, 4)
";

fn python(script: &str, dir: &Path) -> String {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "run scripts/python-env.sh (scripts/test.sh does)"
    );
    let codes: Vec<&str> = TYPES.iter().map(|t| t.0).collect();
    let out = Command::new(python)
        .arg("-c")
        .arg(format!(
            "import sys, io\nimport numpy as np\n{PYTHON_VALUES}\n{script}"
        ))
        .arg(dir)
        .args(codes)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn numpy_files_of_every_type_and_byte_order_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    python(
        "
out = sys.argv[1]
for t in sys.argv[2:]:
    raw, a = values(t)
    np.save(f'{out}/{t}-le.npy', a)
    np.save(f'{out}/{t}-be.npy', a.byteswap().view(a.dtype.newbyteorder('>')))
    np.save(f'{out}/{t}-f.npy', np.asfortranarray(a))
",
        tmp.path(),
    );
    for (code, name) in TYPES {
        let dt: DataType = name.parse().unwrap();
        let ty = NpyType::of(dt);
        let read = |suffix: &str| {
            let path = tmp.path().join(format!("{code}-{suffix}.npy"));
            npy::read_npy(&std::fs::read(path).unwrap())
        };
        let want = values(code, ty.size());
        let le = read("le").unwrap_or_else(|e| panic!("{code}: {e}"));
        assert_eq!(
            (le.ty(), le.shape(), &le.data),
            (ty, &SHAPE[..], &want),
            "{code}"
        );
        let be = read("be").unwrap_or_else(|e| panic!("{code}: {e}"));
        assert_eq!(
            (be.ty(), be.shape(), &be.data),
            (ty, &SHAPE[..], &want),
            "{code}"
        );
        let order = if ty.swap_unit() > 1 {
            ByteOrder::Big
        } else {
            ByteOrder::NotApplicable
        };
        assert_eq!(be.header.descr.byte_order, order, "{code}");
        assert!(
            matches!(read("f"), Err(NpyError::FortranOrder)),
            "{code}: a Fortran-order file is refused"
        );
    }
}

#[test]
fn numpy_reads_exactly_what_zarrflow_writes() {
    let tmp = tempfile::tempdir().unwrap();
    for (code, name) in TYPES {
        let ty = NpyType::of(name.parse().unwrap());
        let path = tmp.path().join(format!("{code}.npy"));
        let bytes = npy::npy_bytes(ty, &SHAPE, &values(code, ty.size())).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let stdout = python(
        "
out = sys.argv[1]
for t in sys.argv[2:]:
    raw, want = values(t)
    a = np.load(f'{out}/{t}.npy')
    assert a.dtype == want.dtype and a.shape == (2, 3, 4), (t, a.dtype, a.shape)
    assert a.tobytes() == raw, t
    again = io.BytesIO()
    np.save(again, a)
    assert again.getvalue() == open(f'{out}/{t}.npy', 'rb').read(), t
    print('OK', t)
",
        tmp.path(),
    );
    assert_eq!(stdout.lines().filter(|l| l.starts_with("OK")).count(), 15);
}
