//! What the CLI holds in memory is bounded whatever it is given: printed summaries of any
//! shape, reads larger than `--max-bytes`, and the files `--transform` and `--from` read
//! (`/dev/zero`, an endless FIFO, a huge file). Each case runs under `ulimit -v` (address
//! space) so that an unbounded allocation fails the test instead of the machine.

mod common;

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use common::cli::*;

/// The address-space limit (KiB) the binary runs under: 1 GB (a small read needs about
/// 50 MB of address space, more when glibc makes arenas for its threads; a 64 MiB transform
/// document about 300 MB).
const VM_LIMIT: &str = "ulimit -v 1000000";

/// Runs under [`VM_LIMIT`]; returns (exit status, stdout, stderr).
fn limited(args: &[&str]) -> (Option<i32>, String, String) {
    let out = run_limited(VM_LIMIT, args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs under [`VM_LIMIT`] and expects a one-line error with exit status `code`.
fn limited_fails(args: &[&str], code: i32) -> String {
    let (status, _, err) = limited(args);
    assert_eq!(status, Some(code), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.starts_with("zarrflow: error: ") && !err.contains("panicked"),
        "{err}"
    );
    err.trim_end().to_string()
}

fn create(dir: &Path, name: &str, args: &[&str]) -> String {
    let url = dir.join(name).to_str().unwrap().to_string();
    let mut all = vec!["create", url.as_str()];
    all.extend_from_slice(args);
    ok(&all);
    url
}

/// Without `--full`, `get` prints at most 1000 values whatever the shape, and reads only
/// those. NumPy's rule (edges of dimensions longer than 6) alone would print all of a
/// `[6] * 10` array: before, that printed 60,466,176 values (296 MB of text, 378 MB peak
/// memory, 28 s); now 512 values in 10 KB.
#[test]
fn printed_summaries_are_bounded_whatever_the_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let six = create(
        tmp.path(),
        "six.zarr",
        &[
            "--shape",
            "6,6,6,6,6,6,6,6,6,6",
            "--dtype",
            "int8",
            "--fill-value",
            "1",
        ],
    );
    let (status, out, err) = limited(&["get", &six]);
    assert_eq!(status, Some(0), "{err}");
    assert!(out.len() < 64 << 10, "{} bytes printed", out.len());
    assert!(
        out.contains("60466176 values; 512 shown"),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
    let body = out.split("\n(shape").next().unwrap();
    assert_eq!(body.matches('1').count(), 512, "{body}");
    // a billion billion cells: the corners only
    let cube = create(
        tmp.path(),
        "cube.zarr",
        &[
            "--shape",
            "1000000,1000000,1000000",
            "--dtype",
            "float32",
            "--chunks",
            "100,100,100",
        ],
    );
    let (status, out, err) = limited(&["get", &cube]);
    assert_eq!(status, Some(0), "{err}");
    assert!(
        out.contains("1000000000000000000 values; 216 shown"),
        "{out}"
    );
    // 32 dimensions of 2 (2^32 values): cut to their first element from the outside in
    let shape = vec!["2"; 32].join(",");
    let twos = create(
        tmp.path(),
        "twos.zarr",
        &[
            "--shape",
            &shape,
            "--dtype",
            "uint8",
            "--chunks",
            &vec!["1"; 32].join(","),
        ],
    );
    let (status, out, err) = limited(&["get", &twos]);
    assert_eq!(status, Some(0), "{err}");
    assert!(
        out.contains("4294967296 values; 512 shown"),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
}

/// A read whose result is over `--max-bytes` (4 GiB unless given) is refused before
/// anything is allocated, for `-o` and `--full` alike, with the exact sizes; before, a
/// 5 GiB read was attempted (under this address-space limit it failed to allocate; without
/// one it would take 5 GB of memory).
#[test]
fn reads_over_max_bytes_are_refused_before_allocating() {
    let tmp = tempfile::tempdir().unwrap();
    let huge = create(
        tmp.path(),
        "huge.zarr",
        &[
            "--shape",
            "5368709120",
            "--dtype",
            "uint8",
            "--chunks",
            "1048576",
        ],
    );
    let out = tmp.path().join("out.npy");
    let out_s = out.to_str().unwrap();
    for args in [
        vec!["get", &huge, "-o", out_s],
        vec!["get", &huge, "--full"],
    ] {
        let e = limited_fails(&args, 1);
        assert!(
            e.contains("holds 5368709120 values of 1 bytes, 5368709120 bytes in all, more than --max-bytes allows (4294967296 bytes)"),
            "{e}"
        );
    }
    assert!(!out.exists());
    // 10^12 cells of 8 bytes: exact counts
    let tera = create(
        tmp.path(),
        "tera.zarr",
        &[
            "--shape",
            "1000000,1000000",
            "--dtype",
            "float64",
            "--chunks",
            "1000,1000",
        ],
    );
    let e = limited_fails(&["get", &tera, "-o", out_s], 1);
    assert!(
        e.contains("1000000000000 values of 8 bytes, 8000000000000 bytes in all"),
        "{e}"
    );
    // the limit is exact, and can be lowered or raised
    let small = create(
        tmp.path(),
        "small.zarr",
        &["--shape", "2000", "--dtype", "int32"],
    );
    ok(&["get", &small, "-o", out_s, "--max-bytes", "8000"]);
    let e = fails(&["get", &small, "-o", out_s, "--max-bytes", "7999"]);
    assert!(
        e.contains("8000 bytes in all, more than --max-bytes allows (7999 bytes)"),
        "{e}"
    );
    let e = fails(&["get", &small, "--full", "--max-bytes", "1KiB"]);
    assert!(e.contains("(1024 bytes)"), "{e}");
    ok(&["get", &small, "2:5", "--max-bytes", "12"]);
    let e = fails(&["get", &small, "--max-bytes", "4 PB"]);
    assert!(e.contains("is not a size"), "{e}");
}

/// A FIFO at `path` fed by a thread: `prefix`, then (with `fill`) that byte until the
/// reader goes.
struct Fifo {
    path: PathBuf,
    writer: Option<std::thread::JoinHandle<()>>,
}

impl Fifo {
    fn new(dir: &Path, name: &str, prefix: Vec<u8>, fill: Option<u8>) -> Fifo {
        let path = dir.join(name);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let p = path.clone();
        let writer = std::thread::spawn(move || {
            let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&p) else {
                return;
            };
            if f.write_all(&prefix).is_ok()
                && let Some(fill) = fill
            {
                let block = vec![fill; 64 << 10];
                while f.write_all(&block).is_ok() {}
            }
        });
        Fifo {
            path,
            writer: Some(writer),
        }
    }

    fn arg(&self) -> &str {
        self.path.to_str().unwrap()
    }
}

impl Drop for Fifo {
    /// Ends the writer: a reader that opens and closes the FIFO releases a writer still
    /// waiting in `open`, and its next write fails (EPIPE).
    fn drop(&mut self) {
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.path);
        if let Some(w) = self.writer.take() {
            w.join().unwrap();
        }
    }
}

/// A `.npy` header for `shape` of `descr`.
fn npy_header(descr: &str, shape: &str) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    let len = 128 - 10;
    h.extend_from_slice(&(len as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h.resize(127, b' ');
    h.push(b'\n');
    h
}

/// `--transform` reads at most `--max-transform-bytes` (64 MiB unless given): `/dev/zero`,
/// an endless FIFO and a huge file are refused with the limit named, in bounded memory and
/// without hanging; before, each was read until memory ran out.
#[test]
fn transform_files_are_read_within_their_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let url = create(tmp.path(), "a.zarr", &["--shape", "10", "--dtype", "int16"]);
    let e = limited_fails(&["get", &url, "--transform", "/dev/zero"], 1);
    assert!(
        e.contains("--transform /dev/zero: it holds more than 67108864 bytes, more than --max-transform-bytes allows"),
        "{e}"
    );
    let fifo = Fifo::new(tmp.path(), "t.fifo", b"{".to_vec(), Some(b' '));
    let e = limited_fails(
        &[
            "get",
            &url,
            "--transform",
            fifo.arg(),
            "--max-transform-bytes",
            "1MiB",
        ],
        1,
    );
    assert!(e.contains("it holds more than 1048576 bytes"), "{e}");
    drop(fifo);
    let sparse = tmp.path().join("huge.json");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    let e = limited_fails(&["get", &url, "--transform", sparse.to_str().unwrap()], 1);
    assert!(
        e.contains(
            "the file is 104857600 bytes, more than --max-transform-bytes allows (67108864 bytes)"
        ),
        "{e}"
    );
    // within the limit a document is read as before; a FIFO too
    let doc = r#"{"input_inclusive_min": [0], "input_exclusive_max": [2], "output": [{"input_dimension": 0, "offset": 3}]}"#;
    let fifo = Fifo::new(tmp.path(), "long.fifo", doc.as_bytes().to_vec(), Some(b' '));
    let e = limited_fails(
        &[
            "get",
            &url,
            "--transform",
            fifo.arg(),
            "--max-transform-bytes",
            "4KiB",
        ],
        1,
    );
    assert!(e.contains("more than 4096 bytes"), "{e}");
    drop(fifo);
    let fifo = Fifo::new(tmp.path(), "ok.fifo", doc.as_bytes().to_vec(), None);
    assert_eq!(
        ok(&["get", &url, "--transform", fifo.arg()]).trim(),
        "[0, 0]"
    );
    drop(fifo);
    let file = tmp.path().join("t.json");
    std::fs::write(&file, doc).unwrap();
    assert_eq!(
        ok(&["get", &url, "--transform", file.to_str().unwrap()]).trim(),
        "[0, 0]"
    );
    let e = fails(&["get", &url, "--transform", tmp.path().to_str().unwrap()]);
    assert!(e.contains("is a directory"), "{e}");
}

/// `set --from` reads a `.npy` file as its header declares: the header first (at most
/// 64 KiB), then exactly the data bytes of a shape that can broadcast to the selection, at
/// most `--max-bytes`. `/dev/zero`, a FIFO declaring a huge shape or streaming more data
/// than declared, a regular file of the wrong length and data over `--max-bytes` are
/// refused in bounded memory, and the array is left as it was.
#[test]
fn from_files_are_read_as_their_header_declares() {
    let tmp = tempfile::tempdir().unwrap();
    let url = create(
        tmp.path(),
        "a.zarr",
        &["--shape", "2000", "--dtype", "int32"],
    );
    ok(&["set", &url, "--value", "3"]);
    let e = limited_fails(&["set", &url, "--from", "/dev/zero"], 1);
    assert!(
        e.contains("/dev/zero: not a valid .npy file: it does not start with the \\x93NUMPY magic"),
        "{e}"
    );
    // a header declaring 10^12 values: refused before any data is read
    let fifo = Fifo::new(
        tmp.path(),
        "huge.fifo",
        npy_header("<i4", "(1000000000000,)"),
        Some(0),
    );
    let e = limited_fails(&["set", &url, "--from", fifo.arg()], 2);
    assert!(e.contains("its shape [1000000000000] (1000000000000 values) does not broadcast to the selection's shape [2000] (2000 values)"), "{e}");
    drop(fifo);
    // a right header followed by endless data: the declared bytes, and one more, are read
    let fifo = Fifo::new(
        tmp.path(),
        "long.fifo",
        npy_header("<i4", "(2000,)"),
        Some(0),
    );
    let e = limited_fails(&["set", &url, "--from", fifo.arg()], 1);
    assert!(
        e.contains("it holds more than the 8000 data bytes that shape [2000] of <i4 needs"),
        "{e}"
    );
    drop(fifo);
    // a regular file with bytes after its data: the exact count, before reading the data
    let file = tmp.path().join("long.npy");
    let mut bytes = npy_header("<i4", "(2000,)");
    bytes.resize(bytes.len() + 8000 + 5, 0);
    std::fs::write(&file, &bytes).unwrap();
    let e = fails(&["set", &url, "--from", file.to_str().unwrap()]);
    assert!(
        e.contains("it holds 8005 data bytes, but shape [2000] of <i4 needs 8000"),
        "{e}"
    );
    // short
    bytes.truncate(128 + 4000);
    std::fs::write(&file, &bytes).unwrap();
    let e = fails(&["set", &url, "--from", file.to_str().unwrap()]);
    assert!(
        e.contains("it holds 4000 data bytes, but shape [2000] of <i4 needs 8000"),
        "{e}"
    );
    // the data is bounded by --max-bytes too
    bytes.resize(128 + 8000, 0);
    std::fs::write(&file, &bytes).unwrap();
    let e = fails(&[
        "set",
        &url,
        "--from",
        file.to_str().unwrap(),
        "--max-bytes",
        "7KiB",
    ]);
    assert!(e.contains("its data is 8000 bytes (shape [2000] of <i4), more than --max-bytes allows (7168 bytes)"), "{e}");
    // a wrong type is refused from the header
    std::fs::write(&file, npy_header("<f8", "(2000,)")).unwrap();
    let e = fails(&["set", &url, "--from", file.to_str().unwrap()]);
    assert!(
        e.contains("holds <f8 values, but the array's data type is int32"),
        "{e}"
    );
    assert!(
        ok(&["get", &url, "1999"]).starts_with('3'),
        "the array changed"
    );
    // what fits is written, from a file or a FIFO
    std::fs::write(&file, &bytes).unwrap();
    ok(&[
        "set",
        &url,
        "--from",
        file.to_str().unwrap(),
        "--max-bytes",
        "8000",
    ]);
    assert!(ok(&["get", &url, "1999"]).starts_with('0'));
    let mut row = npy_header("<i4", "(1,)");
    row.extend_from_slice(&9i32.to_le_bytes());
    let fifo = Fifo::new(tmp.path(), "endless.fifo", row.clone(), Some(0));
    let e = limited_fails(&["set", &url, "--from", fifo.arg()], 1);
    assert!(e.contains("more than the 4 data bytes"), "{e}");
    drop(fifo);
    let fifo = Fifo::new(tmp.path(), "row.fifo", row, None);
    ok(&["set", &url, "--from", fifo.arg()]);
    drop(fifo);
    assert!(ok(&["get", &url, "1999"]).starts_with('9'));
}
