//! The command line on string and bytes arrays: `create --dtype string|bytes`, `set
//! --value` / `--from` (`<U n`, `|S n`), `get` printed as JSON strings and `-o` as
//! fixed-width `.npy` (read by NumPy), `info`, and `copy` to another layout and to Zarr v2
//! (read back by zarr-python).

mod common;

use common::cli::*;
use std::path::Path;

fn python(script: &str) -> String {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let out = std::process::Command::new(py)
        .arg("-c")
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn strings_are_created_set_printed_saved_and_copied() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("s").to_string_lossy().into_owned();
    ok(&[
        "create", &a, "--shape", "2,3", "--dtype", "string", "--shards", "2,2", "--chunks", "1,2",
    ]);
    ok(&["set", &a, "0,1:", "--value", "h\u{e9} \"q\""]);
    ok(&["set", &a, "1,0", "--value", "\"\\u2603\""]);
    assert_eq!(
        ok(&["get", &a]),
        "[[\"\", \"h\u{e9} \\\"q\\\"\", \"h\u{e9} \\\"q\\\"\"],\n [\"\u{2603}\", \"\", \"\"]]\n"
    );
    let info = ok(&["info", &a]);
    assert!(info.contains("data_type           string"), "{info}");
    assert!(info.contains("fill_value          \"\""), "{info}");
    let npy = dir.path().join("s.npy").to_string_lossy().into_owned();
    ok(&["get", &a, "-o", &npy]);
    let inp = dir.path().join("in.npy").to_string_lossy().into_owned();
    let shown = python(&format!(
        "import numpy as np\nx = np.load({npy:?})\nprint(x.dtype.str, x.tolist())\n\
         np.save({inp:?}, np.array(['ab', '\u{e9}\u{e9}\u{e9}']))"
    ));
    assert_eq!(
        shown.trim(),
        "<U6 [['', 'hé \"q\"', 'hé \"q\"'], ['☃', '', '']]"
    );
    ok(&["set", &a, "1,1:", "--from", &inp]);
    assert_eq!(
        ok(&["get", &a, "1"]),
        "[\"\u{2603}\", \"ab\", \"\u{e9}\u{e9}\u{e9}\"]\n"
    );
    // a fixed-size file is refused by its type
    let f4 = dir.path().join("f4.npy").to_string_lossy().into_owned();
    python(&format!(
        "import numpy as np\nnp.save({f4:?}, np.zeros(3, 'f4'))"
    ));
    let out = run(&["set", &a, "1", "--from", &f4]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("<f4"));
    // copies: re-sharded, and to Zarr v2 (|O with vlen-utf8), read by zarr-python
    let b = dir.path().join("s2").to_string_lossy().into_owned();
    let c = dir.path().join("s_v2").to_string_lossy().into_owned();
    ok(&["copy", &a, &b, "--chunks", "2,1"]);
    ok(&["copy", &a, &c, "--zarr-format", "2", "--chunks", "1,3"]);
    assert_eq!(ok(&["get", &b]), ok(&["get", &a]));
    let read = python(&format!(
        "import zarr, numpy as np\nfor p in [{a:?}, {b:?}, {c:?}]:\n    \
         print(np.asarray(zarr.open_array(p)[:], dtype=object).tolist())"
    ));
    let lines: Vec<&str> = read.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| *l == lines[0]), "{read}");
    assert!(lines[0].contains("'ab'"), "{read}");
}

#[test]
fn bytes_print_one_character_per_byte_and_save_as_fixed_width() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("b").to_string_lossy().into_owned();
    ok(&[
        "create",
        &a,
        "--shape",
        "3",
        "--dtype",
        "bytes",
        "--fill-value",
        "\"\\u00ff\"",
    ]);
    ok(&["set", &a, "1", "--value", "\"a\\u0000\\\\\""]);
    assert_eq!(
        ok(&["get", &a]),
        "[\"\\u00ff\", \"a\\u0000\\\\\", \"\\u00ff\"]\n"
    );
    let npy = dir.path().join("b.npy").to_string_lossy().into_owned();
    ok(&["get", &a, "-o", &npy]);
    let shown = python(&format!(
        "import numpy as np, zarr\nx = np.load({npy:?})\nprint(x.dtype.str, x.tolist())\n\
         print(zarr.open_array({a:?})[:].tolist())"
    ));
    assert_eq!(
        shown,
        "|S3 [b'\\xff', b'a\\x00\\\\', b'\\xff']\n[b'\\xff', b'a\\x00\\\\', b'\\xff']\n"
    );
    let out = run(&["set", &a, "--value", "\u{2603}"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn fixed_width_text_is_created_set_printed_saved_and_copied_at_its_width() {
    let dir = tempfile::tempdir().unwrap();
    let u = dir.path().join("u").to_string_lossy().into_owned();
    ok(&[
        "create",
        &u,
        "--shape",
        "4",
        "--dtype",
        "U3",
        "--chunks",
        "2",
        "--fill-value",
        "zz",
    ]);
    ok(&["set", &u, "1:3", "--value", "h\u{e9}"]);
    assert_eq!(
        ok(&["get", &u]),
        "[\"zz\", \"h\u{e9}\", \"h\u{e9}\", \"zz\"]\n"
    );
    let err = fails(&["set", &u, "0", "--value", "four"]);
    assert!(
        err.contains("4 code points long, more than the data type U3 holds"),
        "{err}"
    );
    // --from takes any <U width whose values fit
    let inp = dir.path().join("in.npy").to_string_lossy().into_owned();
    python(&format!(
        "import numpy as np\nnp.save({inp:?}, np.array(['a', '\u{3b1}\u{3b2}']))"
    ));
    ok(&["set", &u, "2:", "--from", &inp]);
    let s = dir.path().join("s").to_string_lossy().into_owned();
    ok(&[
        "create",
        &s,
        "--shape",
        "3",
        "--dtype",
        "S2",
        "--zarr-format",
        "2",
        "--fill-value",
        "a",
    ]);
    ok(&["set", &s, "0", "--value", "\"\\u00ff\""]);
    assert_eq!(ok(&["get", &s]), "[\"\\u00ff\", \"a\", \"a\"]\n");
    let (un, sn) = (
        dir.path().join("u.npy").to_string_lossy().into_owned(),
        dir.path().join("s.npy").to_string_lossy().into_owned(),
    );
    ok(&["get", &u, "-o", &un]);
    ok(&["get", &s, "-o", &sn]);
    let u2 = dir.path().join("u2").to_string_lossy().into_owned();
    ok(&["copy", &u, &u2, "--zarr-format", "2"]);
    let shown = python(&format!(
        "import numpy as np, zarr, warnings\nwarnings.filterwarnings('ignore')\n\
         for p in [{un:?}, {sn:?}]:\n    x = np.load(p)\n    print(x.dtype.str, x.tolist())\n\
         for p in [{u:?}, {s:?}, {u2:?}]:\n    a = zarr.open_array(p)\n    print(a.dtype.str, a[:].tolist())"
    ));
    assert_eq!(
        shown.lines().collect::<Vec<_>>(),
        [
            "<U3 ['zz', 'h\u{e9}', 'a', '\u{3b1}\u{3b2}']",
            "|S2 [b'\\xff', b'a', b'a']",
            "<U3 ['zz', 'h\u{e9}', 'a', '\u{3b1}\u{3b2}']",
            "|S2 [b'\\xff', b'a', b'a']",
            "<U3 ['zz', 'h\u{e9}', 'a', '\u{3b1}\u{3b2}']",
        ]
    );
}
