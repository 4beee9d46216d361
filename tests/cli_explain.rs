//! `zarrflow get|set ... --explain [--json]`: the plan is printed, nothing is read or written.

mod common;

use common::cli::*;
use serde_json::Value;

const PARTIAL: &str = "fixtures/zarr-python/reqcount_uint16_2x64_s1x32_c1x8";

#[test]
fn get_explain_prints_the_requests_the_read_makes() {
    let out = run(&["get", &fixture(PARTIAL), "0,22:42", "--explain"]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("2 shards touched"), "{text}");
    // a local path reads in place: one open per shard, then its 68-byte index and the two
    // 25-byte inner chunks needed are read from the open file
    assert!(text.contains("in place"), "{text}");
    assert!(
        text.contains("GET c/0/0: opened once, 118 bytes read in place (index, 2 inner chunks)"),
        "{text}"
    );
    assert!(
        text.contains("the read makes 2 requests for 236 bytes: 0 index requests (0 bytes), 2 data requests (236 bytes)"),
        "{text}"
    );
    assert!(
        text.contains("explaining made 2 requests (2 for shard indexes)"),
        "{text}"
    );
    assert!(text.contains("no chunk data was read"), "{text}");
    assert!(!text.contains("154"), "values printed: {text}");
}

#[test]
fn get_explain_json_has_the_totals() {
    let out = ok(&["get", &fixture(PARTIAL), "0,22:42", "--explain", "--json"]);
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["totals"]["requests"], 2);
    assert_eq!(v["totals"]["index_requests"], 0);
    assert_eq!(v["totals"]["data_requests"], 2);
    assert_eq!(v["totals"]["bytes"], 236);
    assert_eq!(v["totals"]["explain_requests"], 2);
    assert_eq!(v["targets"][0]["strategy"], "in_place");
    assert_eq!(v["targets"][0]["index"]["source"], "object");
    assert_eq!(v["targets"][0]["requests"][0]["method"], "GET");
    assert_eq!(v["targets"][0]["requests"][0]["purpose"], "in_place");
    assert_eq!(v["targets"][0]["inner_chunks"]["touched"], 2);
    // gathers too
    let out = ok(&[
        "get",
        "--vindex",
        &fixture("fixtures/zarr-python/reqcount_uint16_64x64_s32_c8_zstd"),
        "[1,2,20,40],[1,3,20,60]",
        "--explain",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["totals"]["targets"], 2);
    assert_eq!(v["totals"]["inner_chunks"], 3);
}

#[test]
fn json_needs_explain() {
    let err = fails(&["get", &fixture(PARTIAL), "0,22:42", "--json"]);
    assert!(err.contains("--explain"), "{err}");
}

#[test]
fn set_explain_writes_nothing_and_needs_no_values() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("a.zarr").display().to_string();
    ok(&[
        "create", &url, "--shape", "8,16", "--dtype", "uint16", "--shards", "4,8", "--chunks",
        "2,4",
    ]);
    ok(&["set", &url, "0:4,0:12", "--value", "3"]);
    let before = files(tmp.path());
    let text = ok(&["set", &url, "0:8,0:12", "--explain"]);
    assert!(
        text.contains("4 shards touched, 2 written without a read"),
        "{text}"
    );
    assert!(text.contains("read once, then replaced"), "{text}");
    assert!(text.contains("missing: created"), "{text}");
    // values given are not used
    let json = ok(&[
        "set",
        &url,
        "2:4,4:8",
        "--value",
        "7",
        "--explain",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["totals"]["reads_skipped"], 0);
    assert_eq!(v["targets"][0]["inner_chunks"]["rewritten"], 1);
    assert_eq!(v["targets"][0]["inner_chunks"]["copied_verbatim"], 3);
    assert_eq!(v["targets"][0]["requests"][1]["method"], "PUT if-match");
    assert_eq!(files(tmp.path()), before, "--explain wrote");
    // without --explain the values are still required
    fails(&["set", &url, "0:1,0:1"]);
}

/// Every file under `dir` with its bytes.
fn files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}
