//! S3 configured from the usual environment variables only (`AWS_ENDPOINT`,
//! `AWS_ALLOW_HTTP`, credentials, region). Its own test binary: it sets process env vars.

mod common;

use bytes::Bytes;
use common::{ACCESS_KEY, S3Server, SECRET_KEY};
use zarrflow::hierarchy::{ArrayNode, Group};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_from_environment() {
    let server = S3Server::start(&["envbucket"]).await;
    // SAFETY: this binary has a single test; nothing else reads the environment concurrently.
    unsafe {
        std::env::set_var("AWS_ENDPOINT", &server.endpoint);
        std::env::set_var("AWS_ALLOW_HTTP", "true");
        std::env::set_var("AWS_ACCESS_KEY_ID", ACCESS_KEY);
        std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
        std::env::set_var("AWS_REGION", "us-east-1");
    }
    let s = Store::open("s3://envbucket/root.zarr", StoreOptions::default()).unwrap();
    let root = Group::create(&s, &StoreKey::root(), serde_json::Map::new(), false)
        .await
        .unwrap();
    root.create_array("a", &ArraySpec::new(vec![4], "int8"))
        .await
        .unwrap();
    let again = Store::open("s3://envbucket/root.zarr", StoreOptions::default()).unwrap();
    let arr = ArrayNode::open(&again, &StoreKey::new("a").unwrap())
        .await
        .unwrap();
    assert_eq!(arr.metadata().shape(), &[4]);
    assert!(
        server
            .root
            .path()
            .join("envbucket/root.zarr/a/zarr.json")
            .exists()
    );
    // options override the environment: with a wrong endpoint in the environment, the
    // endpoint given as an option is used
    unsafe {
        std::env::set_var("AWS_ENDPOINT", "http://127.0.0.1:1");
    }
    let over = Store::open(
        "s3://envbucket/root.zarr",
        StoreOptions::default().with_backend_option("aws_endpoint", &server.endpoint),
    )
    .unwrap();
    ArrayNode::open(&over, &StoreKey::new("a").unwrap())
        .await
        .unwrap();
    s.put(&StoreKey::new("x").unwrap(), Bytes::from_static(b"1"))
        .await
        .unwrap();
}
