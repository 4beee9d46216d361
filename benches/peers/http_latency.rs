//! A local HTTP server with injected latency, so that every library in a benchmark (zarrflow,
//! zarrs and TensorStore, whose process cannot use an in-process store wrapper) reads the same
//! files through the same delay.
//!
//! The files under a directory are read into memory when the server starts and served
//! read-only from there: `GET` and `HEAD`, whole or with one byte range (`a-b`, `a-`, `-n`;
//! `byte_range.rs`), 404 for a missing file. The server shares the machine's two cores with
//! the library it serves, and a real remote server costs the reader nothing: serving the
//! files from disk with tower-http's `ServeDir` (a blocking-pool read of each piece into a
//! buffer, then a copy out of it) took 31 % of the CPU of zarrflow's gather case in `perf`,
//! even with 1 MiB pieces, where answering from memory leaves the server the socket writes
//! alone, as the write benchmark's S3 server (`s3_latency.rs`) does. Every request first
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
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode, header};

#[path = "byte_range.rs"]
mod byte_range;
#[path = "local_server.rs"]
mod local_server;
use byte_range::{Ranged, byte_range};
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

/// Every file's `Last-Modified` (the files do not change while they are served).
const LAST_MODIFIED: &str = "Thu, 01 Jan 2026 00:00:00 GMT";

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

type Answer = Response<Full<Bytes>>;

/// An answer with a body and headers.
fn with_body(code: StatusCode, body: Bytes, headers: &[(header::HeaderName, String)]) -> Answer {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = code;
    for (k, v) in headers {
        r.headers_mut()
            .insert(k.clone(), v.parse().expect("header value"));
    }
    r
}

/// The answer to one request.
fn answer<B>(files: &Files, req: &Request<B>) -> Answer {
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => return with_body(StatusCode::METHOD_NOT_ALLOWED, Bytes::new(), &[]),
    };
    let path = percent_encoding::percent_decode_str(req.uri().path().trim_start_matches('/'))
        .decode_utf8_lossy();
    let Some(body) = files.get(path.as_ref()) else {
        return with_body(StatusCode::NOT_FOUND, Bytes::new(), &[]);
    };
    let len = body.len() as u64;
    let mut headers = vec![
        (header::ACCEPT_RANGES, "bytes".to_string()),
        (header::LAST_MODIFIED, LAST_MODIFIED.to_string()),
    ];
    let range = req
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok());
    let (code, part) = match byte_range(range, len) {
        Ranged::Whole => (StatusCode::OK, body.clone()),
        Ranged::Part(a, b) => {
            headers.push((header::CONTENT_RANGE, format!("bytes {a}-{}/{len}", b - 1)));
            (
                StatusCode::PARTIAL_CONTENT,
                body.slice(a as usize..b as usize),
            )
        }
        Ranged::Unsatisfiable => {
            headers.push((header::CONTENT_RANGE, format!("bytes */{len}")));
            return with_body(StatusCode::RANGE_NOT_SATISFIABLE, Bytes::new(), &headers);
        }
    };
    if head {
        headers.push((header::CONTENT_LENGTH, part.len().to_string()));
        with_body(code, Bytes::new(), &headers)
    } else {
        with_body(code, part, &headers)
    }
}
