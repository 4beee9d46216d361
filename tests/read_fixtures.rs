//! The read path on the interop fixtures of test-data (zarr-python 3.4.2, TensorStore 0.1.86,
//! hand-built): every array read whole and every listed selection equals the expected `.npy`
//! bytes exactly (bit-exact, so NaN payloads count), through the local store and through an
//! S3-compatible server on 127.0.0.1.

mod common;

use bytes::Bytes;
use common::fixtures::{entries, key, test_data};
use common::read_npy;
use common::{S3Server, files_under};
use serde_json::Value;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::{Dialect, Selection, SelectionMode};
use zarrflow::store::{Store, StoreKey, StoreOptions};

fn mode_of(m: &str) -> SelectionMode {
    match m {
        "basic" => SelectionMode::Basic,
        "oindex" => SelectionMode::Outer,
        "vindex" => SelectionMode::Vectorized,
        other => panic!("unknown mode {other}"),
    }
}

/// Reads every array fixture and selection from `store`; returns (arrays, selections) checked.
async fn check_all(
    store: &Store,
    dir: &std::path::Path,
    manifest: &Value,
    options: ArrayOptions,
) -> (usize, usize) {
    let (mut arrays, mut selections) = (0, 0);
    let mut failures = Vec::new();
    for a in entries(manifest, "arrays") {
        let path = a["path"].as_str().unwrap();
        let array = match Array::open_in(store, &key(path), options.clone()).await {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{path}: open: {e}"));
                continue;
            }
        };
        let (_, shape, expected) = read_npy(&dir.join(a["expected"].as_str().unwrap()));
        assert_eq!(array.shape(), shape.as_slice(), "{path}");
        match array.view().read_bytes().await {
            Ok(got) if got == expected => arrays += 1,
            Ok(_) => failures.push(format!("{path}: whole read differs")),
            Err(e) => failures.push(format!("{path}: whole read: {e}")),
        }
        for s in a["selections"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            let text = s["selection"].as_str().unwrap();
            let mode = mode_of(s["mode"].as_str().unwrap());
            let (_, want_shape, want) = read_npy(&dir.join(s["expected"].as_str().unwrap()));
            let view = match Selection::parse(text)
                .map_err(Into::into)
                .and_then(|sel| array.view().select(&sel, mode, Dialect::Positional))
            {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{path} [{text}] {mode:?}: select: {e}"));
                    continue;
                }
            };
            if view.shape() != want_shape {
                failures.push(format!(
                    "{path} [{text}] {mode:?}: shape {:?} != {want_shape:?}",
                    view.shape()
                ));
                continue;
            }
            match view.read_bytes().await {
                Ok(got) if got == want => selections += 1,
                Ok(_) => failures.push(format!("{path} [{text}] {mode:?}: values differ")),
                Err(e) => failures.push(format!("{path} [{text}] {mode:?}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (arrays, selections)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_and_selection_reads_exactly_from_the_local_store() {
    let (dir, manifest) = test_data().expect("test-data/manifest.json");
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    let n_arrays = entries(&manifest, "arrays").len();
    // With and without the index cache, and with one request and one decode at a time.
    for options in [
        ArrayOptions::default(),
        ArrayOptions::default()
            .with_index_cache_bytes(0)
            .with_request_concurrency(1)
            .with_decode_threads(1),
    ] {
        let (arrays, selections) = check_all(&store, &dir, &manifest, options).await;
        println!("local: {arrays} arrays, {selections} selections");
        assert_eq!(arrays, n_arrays);
        assert!(selections > 500, "{selections}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_and_selection_reads_exactly_through_s3() {
    let (dir, manifest) = test_data().expect("test-data/manifest.json");
    let server = S3Server::start(&["fixtures"]).await;
    let store = Store::open("s3://fixtures/test-data", server.options()).unwrap();
    for (rel, data) in files_under(&dir.join("fixtures")) {
        store
            .put(
                &StoreKey::new(format!("fixtures/{rel}")).unwrap(),
                Bytes::from(data),
            )
            .await
            .unwrap();
    }
    let (arrays, selections) = check_all(&store, &dir, &manifest, ArrayOptions::default()).await;
    println!("s3: {arrays} arrays, {selections} selections");
    assert_eq!(arrays, entries(&manifest, "arrays").len());
}
