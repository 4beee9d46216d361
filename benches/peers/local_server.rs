//! An HTTP server on 127.0.0.1 for the benchmarks' delaying servers (`http_latency.rs`,
//! `s3_latency.rs`), on a runtime of its own (two threads), so that it never shares the
//! served library's workers. It stops when dropped. Included by those files with `#[path]`.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;

/// A running server.
pub struct LocalServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    thread_name: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl LocalServer {
    /// Answers every request of every connection with `handle`, on threads named
    /// `thread_name`.
    pub fn start<F, Fut, B>(thread_name: &str, handle: F) -> LocalServer
    where
        F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response<B>> + Send + 'static,
        B: hyper::body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(thread_name)
            .enable_all()
            .build()
            .expect("server runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", 0)))
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        runtime.spawn(async move {
            let http = ConnBuilder::new(TokioExecutor::new());
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    // out of file descriptors, say: wait rather than spin
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let _ = socket.set_nodelay(true);
                let handle = handle.clone();
                let service = hyper::service::service_fn(move |req| {
                    let answer = handle(req);
                    async move { Ok::<_, Infallible>(answer.await) }
                });
                let conn = http
                    .serve_connection(TokioIo::new(socket), service)
                    .into_owned();
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
        });
        LocalServer {
            addr,
            thread_name: thread_name.to_string(),
            runtime: Some(runtime),
        }
    }

    /// The CPU time the server's threads have used so far, from
    /// `/proc/self/task/*/schedstat` (zero where that is not available): the part of the
    /// process's CPU time that is the server's, not the client's. Threads are found by
    /// name, which Linux cuts to 15 bytes: a longer `thread_name` would count nothing.
    pub fn cpu(&self) -> Duration {
        let mut total = 0u64;
        for task in std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
        {
            let named = std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|c| c.trim_end() == self.thread_name);
            if !named {
                continue;
            }
            // "time on CPU (ns) time waiting (ns) timeslices"
            total += std::fs::read_to_string(task.path().join("schedstat"))
                .ok()
                .and_then(|s| s.split(' ').next()?.parse::<u64>().ok())
                .unwrap_or(0);
        }
        Duration::from_nanos(total)
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
