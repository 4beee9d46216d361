//! `-v`, `-vv` and `RUST_LOG`: events on standard error only, standard output unchanged,
//! nothing on standard error without them.

mod common;

use std::process::{Command, Output};

use common::cli::{BIN, fixture};

const FIXTURE: &str = "fixtures/zarr-python/reqcount_uint16_8x8_s4_c2";

/// Runs the binary with `RUST_LOG` set to `rust_log` (removed when `None`).
fn run_env(args: &[&str], rust_log: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG");
    if let Some(v) = rust_log {
        cmd.env("RUST_LOG", v);
    }
    let out = cmd.output().expect("the zarrflow binary runs");
    assert!(
        out.status.success(),
        "zarrflow {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

#[test]
fn verbose_get_logs_requests_on_stderr_and_prints_the_same_values() {
    let path = fixture(FIXTURE);
    let quiet = run_env(&["get", &path, "0:2,0:2"], None);
    assert_eq!(text(&quiet.stderr), "", "nothing on stderr without -v");
    let verbose = run_env(&["-v", "get", &path, "0:2,0:2"], None);
    assert_eq!(verbose.stdout, quiet.stdout, "-v changes standard output");
    let err = text(&verbose.stderr);
    // the metadata and the shard, each a store request naming its key: a local shard is
    // opened once and read in place (its index and the inner chunk, positioned reads)
    let requests: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("zarrflow::store"))
        .collect();
    assert!(
        requests
            .iter()
            .any(|l| l.contains("GET") && l.contains("key=zarr.json")),
        "{err}"
    );
    assert!(
        requests
            .iter()
            .any(|l| l.contains("GET") && l.contains("key=c/0/0") && l.contains("in_file=true")),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.contains("read shard") && l.contains("in place")),
        "{err}"
    );
    assert!(err.contains("planned a read"), "{err}");
    assert!(err.contains("DEBUG"), "{err}");
    assert!(!err.contains("TRACE"), "-v shows no TRACE events: {err}");
    // -v is global: after the subcommand too
    let after = run_env(&["get", &path, "0:2,0:2", "-v"], None);
    assert_eq!(after.stdout, quiet.stdout);
    assert!(text(&after.stderr).contains("key=c/0/0"));
}

#[test]
fn very_verbose_adds_inner_chunk_events() {
    let path = fixture(FIXTURE);
    let out = run_env(&["-vv", "get", &path, "0:2,0:2"], None);
    let err = text(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.contains("TRACE") && l.contains("decode inner chunk")),
        "{err}"
    );
}

#[test]
fn rust_log_selects_events_too() {
    let path = fixture(FIXTURE);
    let quiet = run_env(&["get", &path, "0:2,0:2"], None);
    let out = run_env(&["get", &path, "0:2,0:2"], Some("zarrflow::store=debug"));
    assert_eq!(out.stdout, quiet.stdout);
    let err = text(&out.stderr);
    assert!(err.contains("key=c/0/0"), "{err}");
    assert!(
        !err.contains("planned a read"),
        "only the store's events: {err}"
    );
}

#[test]
fn errors_stay_the_last_line_with_verbose() {
    let path = fixture(FIXTURE);
    let out = Command::new(BIN)
        .args(["-v", "get", &path, "0:2,0:2,0"])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(last.starts_with("zarrflow: error: "), "{err}");
    // without -v the error is the only line
    let out = Command::new(BIN)
        .args(["get", &path, "0:2,0:2,0"])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(text(&out.stderr).trim_end().lines().count(), 1);
}
