//! Where output goes wrong: a full standard output is an error (exit 1, one line), a closed
//! pipe ends the process quietly (killed by SIGPIPE, as `cat` is), and `get -o FILE`
//! replaces FILE only with a complete file.

mod common;

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use common::cli::*;

/// A small array with a value written, and a group holding it.
fn fixture_array(dir: &Path) -> String {
    let url = dir.join("a.zarr");
    let url = url.to_str().unwrap().to_string();
    ok(&[
        "create", &url, "--shape", "2000", "--dtype", "int32", "--chunks", "500",
    ]);
    ok(&["set", &url, "0:10", "--value", "5"]);
    url
}

/// Every command that prints, with the output it prints.
fn printing_commands(url: &str, dir: &Path) -> Vec<Vec<String>> {
    let fresh = dir.join("fresh.zarr").to_str().unwrap().to_string();
    let cmds: Vec<Vec<&str>> = vec![
        vec!["get", url],
        vec!["get", url, "--full"],
        vec!["get", url, "-o", "-"],
        vec!["get", url, "0:5", "--explain"],
        vec!["get", url, "0:5", "--explain", "--json"],
        vec!["set", url, "0:5", "--explain"],
        vec!["info", url],
        vec!["info", url, "--json", "--stats"],
        vec!["tree", url],
        vec!["set", url, "10:20", "--value", "6"],
        vec![
            "create",
            &fresh,
            "--shape",
            "4",
            "--dtype",
            "int8",
            "--overwrite",
        ],
        vec!["--help"],
        vec!["get", "--help"],
    ];
    cmds.into_iter()
        .map(|c| c.into_iter().map(String::from).collect())
        .collect()
}

/// `> /dev/full`: one line naming standard output and the cause, exit status 1, never a
/// panic (before: `set`, `create`, `info` and `tree` panicked with status 101 after doing
/// their work, `--help` exited 0, `get` said only "No space left on device").
#[test]
fn a_full_standard_output_is_a_one_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    let url = fixture_array(tmp.path());
    for args in printing_commands(&url, tmp.path()) {
        let full = File::create("/dev/full").expect("/dev/full");
        let (status, err) = run_with_stdout(&args, full);
        assert_eq!(status.code(), Some(1), "{args:?}: {status} {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("zarrflow: error: ")
                && err.contains("cannot write to standard output: No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // the write was done, and the message says so
    let full = File::create("/dev/full").unwrap();
    let (_, err) = run_with_stdout(&["set", &url, "20:30", "--value", "9"], full);
    assert!(
        err.contains("the values were written, but printing so failed"),
        "{err}"
    );
    assert!(ok(&["get", &url, "25"]).starts_with('9'));
    let full = File::create("/dev/full").unwrap();
    let other = tmp.path().join("other.zarr");
    let other = other.to_str().unwrap();
    let (_, err) = run_with_stdout(&["create", other, "--shape", "3", "--dtype", "int8"], full);
    assert!(
        err.contains("the array was created, but printing so failed"),
        "{err}"
    );
    assert!(ok(&["info", other]).contains("int8"));
}

/// `| head -c0`: the reader went away, so nothing is printed, on standard error either, and
/// the process ends killed by SIGPIPE as `cat` and `git` do (a shell shows status 141);
/// before, `get` printed "Broken pipe" and exited 1, the other commands panicked (101).
#[test]
fn a_closed_pipe_ends_the_process_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let url = fixture_array(tmp.path());
    for args in printing_commands(&url, tmp.path()) {
        let (status, err) = run_with_closed_pipe(&args);
        assert_eq!(
            status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {status} {err}"
        );
        assert_eq!(err, "", "{args:?}");
    }
    // a write whose confirmation nobody reads is still done
    let (_, err) = run_with_closed_pipe(&["set", &url, "30:40", "--value", "8"]);
    assert_eq!(err, "");
    assert!(ok(&["get", &url, "35"]).starts_with('8'));
}

/// A full standard error changes nothing but the messages lost: with `-v` (a log line per
/// request) a write completes and exits 0, and an error still sets the exit status.
/// Before, `-v set ... 2>/dev/full` panicked (status 101) in the log writer.
#[test]
fn a_full_standard_error_loses_only_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let url = fixture_array(tmp.path());
    let full = File::create("/dev/full").unwrap();
    let (status, out) = run_with_stderr(&["-vv", "set", &url, "40:50", "--value", "4"], full);
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(out.starts_with("wrote 10 values"), "{out}");
    assert!(ok(&["get", &url, "45"]).starts_with('4'));
    let full = File::create("/dev/full").unwrap();
    let (status, _) = run_with_stderr(&["-v", "get", &url, "5000"], full);
    assert_eq!(status.code(), Some(1));
    let full = File::create("/dev/full").unwrap();
    let (status, _) = run_with_stderr(&["get", "--bogus"], full);
    assert_eq!(status.code(), Some(2));
}

/// A `.npy` file of `len` bytes that is not what `get` writes.
fn previous_file(path: &Path, len: usize) -> Vec<u8> {
    let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(path, &bytes).unwrap();
    bytes
}

/// Names in a folder.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A write of `get -o` that fails after part of the file was written (here a file-size
/// limit, as a full disk would: `ulimit -f` with SIGXFSZ ignored, so the write fails with
/// EFBIG) leaves the previous file as it was and no temporary file. Before, the previous
/// file was truncated and left holding the first kilobyte of the new one.
#[test]
fn a_failed_get_output_leaves_the_previous_file_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let url = fixture_array(tmp.path()); // 2000 int32: an 8 KiB .npy
    let out_dir = tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("prev.npy");
    let before = previous_file(&out, 300);
    let out_s = out.to_str().unwrap();
    // 2 blocks: 1 KiB for dash (512-byte blocks), 2 KiB for bash
    let res = run_limited("trap '' XFSZ; ulimit -f 2", &["get", &url, "-o", out_s]);
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("zarrflow: error: ") && err.contains("File too large"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the previous file changed"
    );
    assert_eq!(
        names(&out_dir),
        vec!["prev.npy"],
        "a temporary file remains"
    );

    // a read that fails (a corrupt chunk) writes nothing either
    let chunk = Path::new(&url).join("c").join("0");
    std::fs::write(&chunk, b"not zstd").unwrap();
    let e = fails(&["get", &url, "-o", out_s]);
    assert!(e.contains("c/0"), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert_eq!(names(&out_dir), vec!["prev.npy"]);
}

/// A successful `get -o` replaces the file whole, keeps its permissions, writes through a
/// symbolic link to the file it names, and writes devices in place (`/dev/null` is not
/// replaced).
#[test]
fn get_output_replaces_files_and_keeps_links_and_devices() {
    let tmp = tempfile::tempdir().unwrap();
    let url = fixture_array(tmp.path());
    let out_dir = tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let real = out_dir.join("real.npy");
    previous_file(&real, 100_000);
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = out_dir.join("link.npy");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    ok(&["get", &url, "0:3", "-o", link.to_str().unwrap()]);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let (descr, shape, data) = read_npy(&real);
    assert_eq!((descr.as_str(), shape), ("<i4", vec![3]));
    assert_eq!(
        data,
        [5i32, 5, 5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>()
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(names(&out_dir), vec!["link.npy", "real.npy"]);
    // a new file
    let new = out_dir.join("new.npy");
    ok(&["get", &url, "-o", new.to_str().unwrap()]);
    assert_eq!(read_npy(&new).1, vec![2000]);
    // the space reserved ahead of the write (fallocate, keeping the size) adds no bytes:
    // the file is exactly what standard output gets
    let stdout = run(&["get", &url, "-o", "-"]);
    assert!(stdout.status.success());
    assert_eq!(std::fs::read(&new).unwrap(), stdout.stdout);
    assert_eq!(std::fs::read(&real).unwrap().len(), 128 + 3 * 4);
    // a device is written in place
    ok(&["get", &url, "-o", "/dev/null"]);
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    let e = fails(&["get", &url, "-o", "/dev/full"]);
    assert!(
        e.contains("/dev/full") && e.contains("No space left on device"),
        "{e}"
    );
    // a folder, and a missing folder
    let e = fails(&["get", &url, "-o", out_dir.to_str().unwrap()]);
    assert!(e.contains("is a directory"), "{e}");
    let missing = out_dir.join("no/such/dir/x.npy");
    let e = fails(&["get", &url, "-o", missing.to_str().unwrap()]);
    assert!(e.contains("cannot create") && e.contains("x.npy"), "{e}");
}

/// `get -o` of a result of 32 MiB or more reads straight into the mapped output file: the
/// file is byte-identical to what the buffered path writes (`-o -`) and to what `--fsync`
/// writes; and a failure (a
/// file-size limit, refused when the space is reserved, before any read; a corrupt chunk
/// mid-read) leaves the previous file as it was and no temporary file.
#[test]
fn a_large_get_output_is_mapped_and_still_whole_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("big.zarr").to_string_lossy().into_owned();
    #[rustfmt::skip]
    ok(&[
        "create", &url, "--shape", "2048,4096", "--dtype", "int32", "--chunks", "512,512",
        "--fill-value", "5",
    ]);
    ok(&["set", &url, "100:700,1000:3000", "--value", "7"]);
    ok(&["set", &url, "1500:1600", "--value", "-3"]);
    let out_dir = tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("all.npy");
    let out_s = out.to_str().unwrap();
    ok(&["get", &url, "-o", out_s]);
    let (descr, shape, data) = read_npy(&out);
    assert_eq!(
        (descr.as_str(), shape.as_slice()),
        ("<i4", &[2048, 4096][..])
    );
    for (i, v) in data.chunks_exact(4).enumerate() {
        let (r, c) = (i / 4096, i % 4096);
        let expect = if (1500..1600).contains(&r) {
            -3
        } else if (100..700).contains(&r) && (1000..3000).contains(&c) {
            7
        } else {
            5
        };
        assert_eq!(
            i32::from_ne_bytes(v.try_into().unwrap()),
            expect,
            "[{r}, {c}]"
        );
    }
    let buffered = run(&["get", &url, "-o", "-"]);
    assert!(buffered.status.success());
    assert!(
        buffered.stdout == std::fs::read(&out).unwrap(),
        "the mapped file differs from the buffered output"
    );

    // --fsync writes the same file (its durability needs a power cut to test)
    let synced = tmp.path().join("synced.npy");
    ok(&["get", "--fsync", &url, "-o", synced.to_str().unwrap()]);
    assert!(std::fs::read(&synced).unwrap() == std::fs::read(&out).unwrap());

    // a file-size limit: refused when the space is reserved
    let before = previous_file(&out, 300);
    let res = run_limited("trap '' XFSZ; ulimit -f 2", &["get", &url, "-o", out_s]);
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(1), "{err}");
    assert!(err.contains("File too large"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert_eq!(names(&out_dir), vec!["all.npy"], "a temporary file remains");

    // a corrupt chunk fails the read after the mapping was made
    std::fs::write(Path::new(&url).join("c").join("3").join("7"), b"not zstd").unwrap();
    let e = fails(&["get", &url, "-o", out_s]);
    assert!(e.contains("c/3/7"), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert_eq!(names(&out_dir), vec!["all.npy"], "a temporary file remains");
}
