//! The binary against `s3://` URLs: an in-process S3 server (s3s-fs on 127.0.0.1), configured
//! through the `AWS_*` environment variables as a user would.

mod common;

use common::cli::*;
use common::{ACCESS_KEY, S3Server, SECRET_KEY};
use serde_json::{Value, json};
use std::process::Command;

fn zf(server: &S3Server, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("AWS_ENDPOINT", &server.endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .env("AWS_REGION", "us-east-1")
        .output()
        .expect("the zarrflow binary runs")
}

fn zf_ok(server: &S3Server, args: &[&str]) -> String {
    let out = zf(server, args);
    assert!(
        out.status.success(),
        "zarrflow {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn commands_on_s3() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .build()
        .unwrap();
    let server = rt.block_on(S3Server::start(&["bucket"]));
    let tmp = tempfile::tempdir().unwrap();

    // copy a local unsharded fixture into a sharded layout on S3, and read it back exactly
    let src = fixture("fixtures/zarr-python/missing_chunks_fill_42");
    zf_ok(
        &server,
        &[
            "copy",
            &src,
            "s3://bucket/a.zarr",
            "--shards",
            "8,6",
            "--chunks",
            "4,3",
        ],
    );
    let info: Value = serde_json::from_str(&zf_ok(
        &server,
        &["info", "--json", "--stats", "s3://bucket/a.zarr"],
    ))
    .unwrap();
    assert_eq!(info["chunk_shape"], json!([8, 6]));
    assert_eq!(info["inner_chunk_shape"], json!([4, 3]));
    assert_eq!(info["stats"]["unit"], "shard");
    assert!(info["stats"]["stored"].as_u64().unwrap() > 0);
    let out = tmp.path().join("a.npy");
    zf_ok(
        &server,
        &["get", "s3://bucket/a.zarr", "-o", out.to_str().unwrap()],
    );
    assert_eq!(
        read_npy(&out),
        read_npy(&test_data().join("fixtures/zarr-python/missing_chunks_fill_42.npy"))
    );

    // create + set + get on S3
    zf_ok(
        &server,
        &[
            "create",
            "s3://bucket/b.zarr",
            "--shape",
            "6,6",
            "--dtype",
            "int16",
            "--shards",
            "4,4",
            "--chunks",
            "2,2",
        ],
    );
    zf_ok(
        &server,
        &["set", "s3://bucket/b.zarr", "1:5,::5", "--value=-2"],
    );
    let v: Value =
        serde_json::from_str(&zf_ok(&server, &["get", "s3://bucket/b.zarr", "0:3,0"])).unwrap();
    assert_eq!(v, json!([0, -2, -2]));

    // a hierarchy copied to S3 and back
    let h = fixture("fixtures/zarr-python/hierarchy");
    zf_ok(&server, &["copy", &h, "s3://bucket/h.zarr"]);
    let tree = zf_ok(&server, &["tree", "s3://bucket/h.zarr"]);
    assert!(tree.contains("arr2  [3, 4, 5] uint8"), "{tree}");
    let back = tmp.path().join("h.zarr");
    zf_ok(
        &server,
        &["copy", "s3://bucket/h.zarr", back.to_str().unwrap()],
    );
    assert_eq!(
        ok(&["get", &format!("{}/g1/arr1", back.display())]),
        ok(&["get", &format!("{h}/g1/arr1")])
    );

    // errors name the object
    let e = zf(&server, &["info", "s3://bucket/missing.zarr"]);
    assert!(!e.status.success());
    let msg = String::from_utf8_lossy(&e.stderr);
    assert_eq!(msg.trim_end().lines().count(), 1, "{msg}");
    // neither format's metadata: the message names the node and says what is there
    assert!(msg.contains("s3://bucket/missing.zarr"), "{msg}");
    assert!(msg.contains("zarr.json, .zarray or .zgroup"), "{msg}");
    assert!(msg.contains("nothing is stored there"), "{msg}");
    let e = zf(&server, &["info", "s3://no-such-bucket/x.zarr"]);
    assert!(!e.status.success());
    assert_eq!(
        String::from_utf8_lossy(&e.stderr)
            .trim_end()
            .lines()
            .count(),
        1
    );
    drop(server);
}
