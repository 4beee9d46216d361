//! Helpers of the CLI tests: run the built `zarrflow` binary and check its outputs
//! (`mod common; use common::cli::*;`).

use std::path::PathBuf;
use std::process::{Command, ExitStatus, Output, Stdio};

#[allow(unused_imports)] // not every test crate uses both
pub use super::{read_npy, write_npy};

/// The built binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_zarrflow");

/// The `test-data` directory.
pub fn test_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test-data")
}

/// A fixture path under `test-data/`.
pub fn fixture(rel: &str) -> String {
    test_data().join(rel).to_string_lossy().into_owned()
}

/// Runs the binary with `args`.
pub fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG")
        .output()
        .expect("the zarrflow binary runs")
}

/// Runs the binary with `args` and standard output sent to `stdout` (e.g. a `File` of
/// `/dev/full`); returns the status and standard error.
pub fn run_with_stdout<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    stdout: impl Into<Stdio>,
) -> (ExitStatus, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("the zarrflow binary runs");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary with `args` and standard error sent to `stderr`; returns the status and
/// standard output.
pub fn run_with_stderr<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    stderr: impl Into<Stdio>,
) -> (ExitStatus, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .output()
        .expect("the zarrflow binary runs");
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Runs the binary with `args` and its standard output a pipe whose reader is closed before
/// anything is read (as `| head -c0` does); returns the status and standard error.
pub fn run_with_closed_pipe<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (ExitStatus, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the zarrflow binary runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("the zarrflow binary ends");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary through `sh` with `limits` (shell commands such as `ulimit -v 500000`,
/// or `trap '' XFSZ; ulimit -f 8`) applied first.
pub fn run_limited<S: AsRef<std::ffi::OsStr>>(limits: &str, args: &[S]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("{limits}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG")
        .output()
        .expect("sh runs")
}

/// Runs and expects success; returns standard output.
pub fn ok<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = run(args);
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    assert!(
        out.status.success(),
        "zarrflow {shown:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs and expects a failure with a one-line message on standard error; returns it.
pub fn fails<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = run(args);
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    assert!(
        !out.status.success(),
        "zarrflow {shown:?} succeeded unexpectedly: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "zarrflow {shown:?}: not a one-line error: {err:?}"
    );
    assert!(err.starts_with("zarrflow: error: "), "{err:?}");
    assert!(!err.contains("panicked"), "{err:?}");
    err.trim_end().to_string()
}

/// The manifests (`manifest.json` and the other generators', as one: see
/// [`super::fixtures::test_data`]).
pub fn manifest() -> serde_json::Value {
    let text = std::fs::read(test_data().join("manifest.json")).expect("manifest.json");
    let mut m = serde_json::from_slice(&text).expect("manifest.json is JSON");
    super::fixtures::merge_manifests(&mut m, &test_data());
    m
}

/// Runs `jobs` closures on a few threads; returns the failures.
pub fn parallel<T: Send + Sync>(
    items: &[T],
    f: impl Fn(&T) -> Option<String> + Sync,
) -> Vec<String> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    if let Some(msg) = f(item) {
                        failures.lock().unwrap().push(msg);
                    }
                }
            });
        }
    });
    failures.into_inner().unwrap()
}
