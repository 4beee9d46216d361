//! Arrays on S3: create, write and read a sharded array at an `s3://` URL.
//!
//! With `ZARRFLOW_S3_URL=s3://bucket/prefix` set, the example uses that location; endpoint,
//! region and credentials come from the usual `AWS_*` variables (for example `AWS_ENDPOINT`,
//! `AWS_ALLOW_HTTP=true`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`).
//! Without it, the example starts a small S3 server in-process on 127.0.0.1 (s3s-fs, backed by
//! a temporary folder) and points the store at it through `StoreOptions`.
//!
//! Run with `cargo run --example s3`. The command line takes the same URLs:
//!
//! ```sh
//! export AWS_ENDPOINT=http://127.0.0.1:9000 AWS_ALLOW_HTTP=true AWS_REGION=us-east-1
//! zarrflow copy data.zarr s3://bucket/data.zarr --shards 1000,1000 --chunks 100,100
//! zarrflow info s3://bucket/data.zarr --stats
//! zarrflow get s3://bucket/data.zarr 0:10,::100
//! ```

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use ndarray::ArrayD;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};

const KEY: &str = "example-key";
const SECRET: &str = "example-secret";

/// Starts an S3 server on 127.0.0.1 with one bucket; returns its endpoint and the folder.
async fn local_s3(bucket: &str) -> Result<(String, tempfile::TempDir), Box<dyn std::error::Error>> {
    let root = tempfile::tempdir()?;
    std::fs::create_dir_all(root.path().join(bucket))?;
    let fs = s3s_fs::FileSystem::new(root.path()).map_err(|e| format!("s3s-fs: {e:?}"))?;
    let mut builder = s3s::service::S3ServiceBuilder::new(fs);
    builder.set_auth(s3s::auth::SimpleAuth::from_single(KEY, SECRET));
    let service = builder.build();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let http = ConnBuilder::new(TokioExecutor::new());
        while let Ok((socket, _)) = listener.accept().await {
            let conn = http
                .serve_connection(TokioIo::new(socket), service.clone())
                .into_owned();
            tokio::spawn(async move {
                let _ = conn.await;
            });
        }
    });
    Ok((format!("http://{addr}"), root))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (url, options, _server_dir) = match std::env::var("ZARRFLOW_S3_URL") {
        Ok(url) => (url, StoreOptions::default(), None),
        Err(_) => {
            let (endpoint, dir) = local_s3("bucket").await?;
            println!("started a local S3 server at {endpoint}");
            let options = StoreOptions::default()
                .with_backend_option("aws_endpoint", &endpoint)
                .with_backend_option("aws_allow_http", "true")
                .with_backend_option("aws_access_key_id", KEY)
                .with_backend_option("aws_secret_access_key", SECRET)
                .with_backend_option("aws_region", "us-east-1");
            ("s3://bucket/example.zarr".to_string(), options, Some(dir))
        }
    };
    let store = Store::open(&url, options)?;
    let spec = ArraySpec::new(vec![64, 64], "uint16")
        .shard_shape(vec![32, 32])
        .inner_chunk_shape(vec![8, 8]);
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default()).await?;
    let values = ArrayD::from_shape_fn(ndarray::IxDyn(&[64, 64]), |i| (i[0] * 64 + i[1]) as u16);
    array.view().write(&values.view()).await?;

    // Re-open and read: one shard-index read per touched shard, coalesced inner-chunk reads.
    let array = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default()).await?;
    let corner: ArrayD<u16> = array
        .view()
        .get(&Selection::parse("::21, -1::-21")?)?
        .read()
        .await?;
    println!("{url} [::21, -1::-21] ->\n{corner}");
    let listing = store.list_prefix(&StoreKey::root()).await?;
    println!(
        "{} objects: {:?}",
        listing.len(),
        listing.iter().map(|k| k.as_str()).collect::<Vec<_>>()
    );
    assert_eq!(corner[[1, 1]], 21 * 64 + 42);
    Ok(())
}
