//! A local HTTP server with injected latency, so that every library in a benchmark (zarrflow,
//! zarrs and TensorStore, whose process cannot use an in-process store wrapper) reads the same
//! files through the same delay.
//!
//! Files under a directory are served read-only by tower-http's `ServeDir` (GET and HEAD,
//! single byte ranges including suffix ranges), read in 1 MiB pieces: the server shares the
//! machine's cores with the library it serves, and with `ServeDir`'s default of 64 KiB (each
//! piece a blocking-pool read and a wake-up) it took 31 % of the CPU of zarrflow's gather
//! case, 25 % with 1 MiB pieces (`perf`, 25 calls each; it is still the copies of the file
//! and of the socket); a real remote server costs the reader nothing. Every request first
//! sleeps the given delay, then is answered, so the delay is a time to first byte as with
//! object_store's `ThrottledStore`. The server runs on a runtime of its own (two threads,
//! `local_server.rs`), so it does not share the reading library's workers. It counts the requests it answers
//! (metadata documents apart), which gives request counts for TensorStore too. Included by
//! the read benchmark with `#[path]`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tower::ServiceExt;
use tower_http::services::ServeDir;

#[path = "local_server.rs"]
mod local_server;
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

/// A running server; it stops when dropped.
pub struct HttpLatencyServer {
    /// `http://127.0.0.1:PORT/`: the served directory's root.
    pub url: String,
    counters: Arc<Counters>,
    _server: LocalServer,
}

impl HttpLatencyServer {
    /// Serves `dir` with `delay` before every answer.
    pub fn start(dir: &Path, delay: Duration) -> HttpLatencyServer {
        let counters = Arc::new(Counters::default());
        let files = ServeDir::new(dir).with_buf_chunk_size(1 << 20);
        let c = counters.clone();
        let server = LocalServer::start("http-latency", move |req: hyper::Request<_>| {
            let files = files.clone();
            let c = c.clone();
            async move {
                if !req.uri().path().ends_with("zarr.json") {
                    let counter = if req.method() == hyper::Method::HEAD {
                        &c.head
                    } else if req.headers().contains_key(hyper::header::RANGE) {
                        &c.get_range
                    } else {
                        &c.get
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(delay).await;
                files.oneshot(req).await.unwrap_or_else(|e| match e {})
            }
        });
        HttpLatencyServer {
            url: format!("http://{}/", server.addr),
            counters,
            _server: server,
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
}
