//! The same store-behaviour tests against every backend: memory, local filesystem (plain path
//! and `file://`), S3 (in-process s3s-fs server on 127.0.0.1), and `object_store`'s own
//! `LocalFileSystem` given to `Store::from_object_store` (no compare-and-swap).

mod common;

use common::{S3Server, conformance};
use zarrflow::store::{Store, StoreError, StoreOptions};

#[tokio::test]
async fn memory_store() {
    conformance::run_all(&Store::memory(), true).await;
    let s = Store::open("memory://", StoreOptions::default()).unwrap();
    conformance::run_all(&s, true).await;
}

#[tokio::test]
async fn local_store_plain_path() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    // create-only and compare-and-swap puts (LocalCasStore)
    conformance::run_all(&s, true).await;
}

#[tokio::test]
async fn local_store_file_url() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}/nested/prefix", dir.path().display());
    let s = Store::open(&url, StoreOptions::default()).unwrap();
    conformance::run_all(&s, true).await;
    assert!(dir.path().join("nested/prefix/t1/top").exists());
}

#[tokio::test]
async fn object_stores_local_file_system_without_compare_and_swap() {
    let dir = tempfile::tempdir().unwrap();
    let backend = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    let s = Store::from_object_store(
        std::sync::Arc::new(backend),
        "",
        "file:///raw",
        StoreOptions::default(),
    )
    .unwrap();
    conformance::run_all(&s, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_store() {
    let server = S3Server::start(&["bucket"]).await;
    let s = Store::open("s3://bucket/some/prefix", server.options()).unwrap();
    assert_eq!(s.url(), "s3://bucket/some/prefix");
    conformance::run_all(&s, true).await;
    assert!(
        server
            .root
            .path()
            .join("bucket/some/prefix/t1/top")
            .exists()
    );
}

#[test]
fn invalid_urls() {
    let err = Store::open("ftp://x/y", StoreOptions::default()).unwrap_err();
    assert!(matches!(err, StoreError::InvalidUrl { .. }), "{err:?}");
    let err = Store::open("s3://", StoreOptions::default()).unwrap_err();
    assert!(matches!(err, StoreError::InvalidUrl { .. }), "{err:?}");
}

#[test]
fn cloud_urls_parse() {
    let opts = StoreOptions::default()
        .with_backend_option("aws_region", "eu-west-1")
        .with_backend_option("google_skip_signature", "true")
        .with_backend_option("azure_storage_account_name", "acct")
        .with_backend_option("azure_storage_account_key", "a2V5");
    Store::open("s3://bucket/prefix", opts.clone()).unwrap();
    Store::open("az://container/prefix", opts.clone()).unwrap();
    Store::open("gs://bucket/prefix", opts.clone()).unwrap();
    let h = Store::open("https://example.com/data/array.zarr", opts).unwrap();
    assert!(h.options().read_only);
}

#[tokio::test]
async fn http_store_is_read_only() {
    let h = Store::open("http://127.0.0.1:9/x.zarr", StoreOptions::default()).unwrap();
    let err = h
        .put(&"zarr.json".try_into().unwrap(), bytes::Bytes::new())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ReadOnly { .. }), "{err:?}");
}
