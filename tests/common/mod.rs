//! Shared test helpers: `.npy` files through `zarrflow::npy`, an in-process S3 server
//! (s3s-fs on 127.0.0.1), the store conformance functions every backend runs (object_store
//! `integration.rs` style), the fixture manifest ([`fixtures`]), the CLI runner ([`cli`]) and
//! moto's S3 server, which honours conditional PUT ([`moto`]), Azurite's Azure blob service
//! ([`azurite`]), the pinned Python environments' interpreters and checkers ([`venv`]) and
//! a macro for store wrappers that act on PUTs ([`put_wrapper`]).
#![allow(dead_code)]

pub mod azurite;
pub mod cli;
pub mod conformance;
pub mod fixtures;
pub mod moto;
pub mod put_wrapper;
pub mod venv;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use std::path::Path;
use zarrflow::npy::{ByteOrder, Descr};
use zarrflow::store::StoreOptions;

/// A `.npy` file read through `zarrflow::npy`: (the file's descr, shape, C-order
/// native-endian data). Panics on any error.
pub fn read_npy(path: &Path) -> (String, Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy =
        zarrflow::npy::read_npy_vec(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (npy.header.descr.to_string(), npy.header.shape, npy.data)
}

/// Writes native-endian C-order `data` as a little-endian `.npy` file of `descr` (a
/// little-endian descriptor such as `<i4`) through `zarrflow::npy`. Panics on any error.
pub fn write_npy(path: &Path, descr: &str, shape: &[u64], data: &[u8]) {
    let descr: Descr = descr
        .parse()
        .unwrap_or_else(|e| panic!("descr {descr:?}: {e}"));
    assert_ne!(
        descr.byte_order,
        ByteOrder::Big,
        "files are written little-endian"
    );
    let bytes = zarrflow::npy::npy_bytes(descr.ty, shape, data)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Access key accepted by the test server.
pub const ACCESS_KEY: &str = "zarrflow-test-key";
/// Secret key accepted by the test server.
pub const SECRET_KEY: &str = "zarrflow-test-secret";

/// An S3 server running in-process on a random free port of 127.0.0.1, backed by a temp dir.
pub struct S3Server {
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    /// The root directory (bucket = sub-directory).
    pub root: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl S3Server {
    /// Start the server with one bucket per name.
    pub async fn start(buckets: &[&str]) -> S3Server {
        let root = tempfile::tempdir().unwrap();
        for b in buckets {
            std::fs::create_dir_all(root.path().join(b)).unwrap();
        }
        let fs = s3s_fs::FileSystem::new(root.path()).unwrap();
        let mut builder = s3s::service::S3ServiceBuilder::new(fs);
        builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let service = builder.build();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let http = ConnBuilder::new(TokioExecutor::new());
            // bounded: the test process ends the task on drop
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                let conn = http
                    .serve_connection(TokioIo::new(socket), service.clone())
                    .into_owned();
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
        });
        S3Server {
            endpoint: format!("http://{addr}"),
            root,
            task,
        }
    }

    /// Store options pointing at this server (endpoint, credentials, plain HTTP).
    pub fn options(&self) -> StoreOptions {
        StoreOptions::default()
            .with_backend_option("aws_endpoint", &self.endpoint)
            .with_backend_option("aws_allow_http", "true")
            .with_backend_option("aws_access_key_id", ACCESS_KEY)
            .with_backend_option("aws_secret_access_key", SECRET_KEY)
            .with_backend_option("aws_region", "us-east-1")
    }
}

/// Every file under `dir`, as `(relative key, bytes)`, sorted.
pub fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// An array created from `spec` at `a` in a fresh in-memory store behind a request counter
/// (reset after the creation), for tests that count a write's or read's requests.
pub async fn counted_memory_array(
    spec: &zarrflow::metadata::ArraySpec,
) -> (
    zarrflow::array::Array,
    zarrflow::store::wrappers::CountingStore<object_store::memory::InMemory>,
) {
    use zarrflow::store::{Store, StoreKey};
    let counting =
        zarrflow::store::wrappers::CountingStore::new(object_store::memory::InMemory::new());
    let store = Store::from_object_store(
        std::sync::Arc::new(counting.clone()),
        "",
        "memory://counted",
        StoreOptions::default(),
    )
    .unwrap();
    let a = zarrflow::array::Array::create(
        &store,
        &StoreKey::new("a").unwrap(),
        spec,
        zarrflow::array::ArrayOptions::default(),
    )
    .await
    .unwrap();
    counting.reset();
    (a, counting)
}
