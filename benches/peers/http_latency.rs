//! A local HTTP server with injected latency, so that every library in a benchmark (zarrflow,
//! zarrs and TensorStore, whose process cannot use an in-process store wrapper) reads the same
//! files through the same delay.
//!
//! The files under a directory are read into memory when the server starts and served
//! read-only from there: `GET` and `HEAD`, whole or with one byte range (`a-b`, `a-`, `-n`;
//! `answers.rs`), 404 for a missing file. The server shares the machine's two cores with
//! the library it serves, and a real remote server costs the reader nothing: serving the
//! files from disk with tower-http's `ServeDir` in 1 MiB pieces (a blocking-pool read of
//! each piece into a buffer, then a copy out of it) took about 90 ms of the ~295 ms of CPU
//! of zarrflow's gather case (31 % of its samples in `perf`), answering from memory about
//! 30 ms: the socket writes alone, as the write benchmark's S3 server (`s3_latency.rs`)
//! does. Every request first
//! sleeps the given delay, then is answered, so the delay is a time to first byte as with
//! object_store's `ThrottledStore`. The server runs on a runtime of its own (two threads,
//! `local_server.rs`), so it does not share the reading library's workers. It counts the
//! requests it answers (metadata documents apart), which gives request counts for
//! TensorStore too. Included by the read benchmark with `#[path]`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hyper::{Method, Request, StatusCode, header};

#[path = "answers.rs"]
mod answers;
#[path = "local_server.rs"]
mod local_server;
use answers::{Answer, LAST_MODIFIED, ranged, with_body};
use local_server::LocalServer;

/// Requests answered for chunk data (paths not ending in `zarr.json`), by kind.
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpCounts {
    /// GETs of a whole file.
    pub get: u64,
    /// GETs with a `Range` header.
    pub get_range: u64,
    /// HEADs.
    pub head: u64,
}

impl HttpCounts {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.get + self.get_range + self.head
    }
}

#[derive(Default)]
struct Counters {
    get: AtomicU64,
    get_range: AtomicU64,
    head: AtomicU64,
}

/// The served files, by path relative to the served directory (`/`-separated).
type Files = BTreeMap<String, Bytes>;

/// A running server; it stops when dropped.
pub struct HttpLatencyServer {
    /// `http://127.0.0.1:PORT/`: the served directory's root.
    pub url: String,
    counters: Arc<Counters>,
    server: LocalServer,
}

impl HttpLatencyServer {
    /// Serves the files under `dir` (as they are now) with `delay` before every answer.
    pub fn start(dir: &Path, delay: Duration) -> HttpLatencyServer {
        let mut files = Files::new();
        read_files(dir, "", &mut files);
        let files = Arc::new(files);
        let counters = Arc::new(Counters::default());
        let c = counters.clone();
        let server = LocalServer::start("http-latency", move |req: Request<_>| {
            let files = files.clone();
            let c = c.clone();
            async move {
                if !req.uri().path().ends_with("zarr.json") {
                    let counter = if req.method() == Method::HEAD {
                        &c.head
                    } else if req.headers().contains_key(header::RANGE) {
                        &c.get_range
                    } else {
                        &c.get
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(delay).await;
                answer(&files, &req)
            }
        });
        HttpLatencyServer {
            url: format!("http://{}/", server.addr),
            counters,
            server,
        }
    }

    /// The requests answered since the last reset.
    pub fn counts(&self) -> HttpCounts {
        HttpCounts {
            get: self.counters.get.load(Ordering::Relaxed),
            get_range: self.counters.get_range.load(Ordering::Relaxed),
            head: self.counters.head.load(Ordering::Relaxed),
        }
    }

    /// Sets the counts to zero.
    pub fn reset(&self) {
        self.counters.get.store(0, Ordering::Relaxed);
        self.counters.get_range.store(0, Ordering::Relaxed);
        self.counters.head.store(0, Ordering::Relaxed);
    }

    /// The CPU time the server's threads have used so far (the part of the process's CPU
    /// time that is the server's).
    pub fn cpu(&self) -> Duration {
        self.server.cpu()
    }
}

/// Reads every file under `dir` into `files`, keyed by `prefix` and its path below `dir`.
fn read_files(dir: &Path, prefix: &str, files: &mut Files) {
    for entry in std::fs::read_dir(dir).expect("served directory") {
        let entry = entry.expect("directory entry");
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type().expect("file type").is_dir() {
            read_files(&entry.path(), &format!("{name}/"), files);
        } else {
            let bytes = std::fs::read(entry.path()).expect("served file");
            files.insert(name, Bytes::from(bytes));
        }
    }
}

/// The answer to one request.
fn answer<B>(files: &Files, req: &Request<B>) -> Answer {
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            let allow = [(header::ALLOW, "GET, HEAD".to_string())];
            return with_body(StatusCode::METHOD_NOT_ALLOWED, Bytes::new(), &allow);
        }
    };
    let path = percent_encoding::percent_decode_str(req.uri().path().trim_start_matches('/'))
        .decode_utf8_lossy();
    let Some(body) = files.get(path.as_ref()) else {
        return with_body(StatusCode::NOT_FOUND, Bytes::new(), &[]);
    };
    let range = req
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok());
    // (Last-Modified as ServeDir sent it; none of the clients needs it)
    let headers = vec![
        (header::ACCEPT_RANGES, "bytes".to_string()),
        (header::LAST_MODIFIED, LAST_MODIFIED.to_string()),
    ];
    ranged(body.clone(), range, head, headers, || {
        with_body(StatusCode::RANGE_NOT_SATISFIABLE, Bytes::new(), &[])
    })
}
