//! Composable `ObjectStore` decorators for diagnostics and tests: request counting, latency
//! and fault injection. Reading and writing arrays never needs them; tests and benchmarks
//! stack them under a [`Store`](super::Store) (with
//! [`Store::from_object_store`](super::Store::from_object_store)) to count a workload's
//! requests, add latency or inject failures, and they are public so that users can do the
//! same with their own workloads.
//!
//! [`FaultStore`] also loses responses: a PUT that reaches the wrapped store and then fails
//! (or is sent again, as a retrying client does), as after a timeout or a dropped connection.
//!
//! Each wraps any `ObjectStore` and is itself an `ObjectStore`, so they stack:
//! `CountingStore::new(FaultStore::new(InMemory::new(), cfg))`.

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
    Result,
};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use object_store::throttle::{ThrottleConfig, ThrottledStore};

/// Wrap `inner` so that every request waits `latency` first (uses `object_store`'s
/// `ThrottledStore`).
pub fn with_latency<T: ObjectStore>(inner: T, latency: Duration) -> ThrottledStore<T> {
    let cfg = ThrottleConfig {
        wait_get_per_call: latency,
        wait_list_per_call: latency,
        wait_list_with_delimiter_per_call: latency,
        wait_put_per_call: latency,
        wait_delete_per_call: latency,
        ..Default::default()
    };
    ThrottledStore::new(inner, cfg)
}

/// The kind of a recorded request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// GET of a whole object.
    Get,
    /// GET with a range (bounded, offset or suffix).
    GetRange,
    /// HEAD.
    Head,
    /// PUT (any mode).
    Put,
    /// DELETE (one per location).
    Delete,
    /// Recursive list.
    List,
    /// Delimited list.
    ListDir,
    /// Copy or rename.
    Copy,
}

/// One recorded request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// What kind of request.
    pub kind: RequestKind,
    /// Location (backend path).
    pub path: String,
    /// The requested range, for ranged GETs.
    pub range: Option<GetRange>,
}

/// A snapshot of counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// Whole-object GETs.
    pub get: u64,
    /// Ranged GETs.
    pub get_range: u64,
    /// HEADs.
    pub head: u64,
    /// PUTs.
    pub put: u64,
    /// DELETEs.
    pub delete: u64,
    /// Lists (recursive and delimited).
    pub list: u64,
    /// Bytes returned by GETs (counted when the body is fully consumed).
    pub bytes_read: u64,
    /// Bytes sent by PUTs.
    pub bytes_written: u64,
}

impl RequestCounts {
    /// All GET requests (whole + ranged), excluding HEAD.
    pub fn gets(&self) -> u64 {
        self.get + self.get_range
    }
    /// Every request.
    pub fn total(&self) -> u64 {
        self.get + self.get_range + self.head + self.put + self.delete + self.list
    }
}

#[derive(Debug, Default)]
struct CountState {
    log: Mutex<Vec<RequestRecord>>,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
}

fn record_into(state: &CountState, kind: RequestKind, path: &Path, range: Option<GetRange>) {
    if let Ok(mut log) = state.log.lock() {
        log.push(RequestRecord {
            kind,
            path: path.to_string(),
            range,
        });
    }
}

/// Counts and records every request made to the wrapped store. Clones share the counters.
#[derive(Debug)]
pub struct CountingStore<T> {
    inner: Arc<T>,
    state: Arc<CountState>,
}

impl<T> Clone for CountingStore<T> {
    fn clone(&self) -> Self {
        CountingStore {
            inner: Arc::clone(&self.inner),
            state: Arc::clone(&self.state),
        }
    }
}

impl<T: ObjectStore> CountingStore<T> {
    /// Wrap `inner`.
    pub fn new(inner: T) -> Self {
        CountingStore {
            inner: Arc::new(inner),
            state: Arc::default(),
        }
    }

    fn record(&self, kind: RequestKind, path: &Path, range: Option<GetRange>) {
        record_into(&self.state, kind, path, range);
    }

    /// The request log so far.
    pub fn log(&self) -> Vec<RequestRecord> {
        self.state.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Counters so far.
    pub fn counts(&self) -> RequestCounts {
        let mut c = RequestCounts::default();
        for r in self.log() {
            match r.kind {
                RequestKind::Get => c.get += 1,
                RequestKind::GetRange => c.get_range += 1,
                RequestKind::Head => c.head += 1,
                RequestKind::Put => c.put += 1,
                RequestKind::Delete => c.delete += 1,
                RequestKind::List | RequestKind::ListDir => c.list += 1,
                RequestKind::Copy => {}
            }
        }
        c.bytes_read = self.state.bytes_read.load(Ordering::Relaxed);
        c.bytes_written = self.state.bytes_written.load(Ordering::Relaxed);
        c
    }

    /// Clear the counters and the log.
    pub fn reset(&self) {
        if let Ok(mut l) = self.state.log.lock() {
            l.clear();
        }
        self.state.bytes_read.store(0, Ordering::Relaxed);
        self.state.bytes_written.store(0, Ordering::Relaxed);
    }
}

impl<T> fmt::Display for CountingStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CountingStore")
    }
}

fn into_stream_payload(res: GetResult) -> (GetResult, BoxStream<'static, Result<Bytes>>) {
    let meta = res.meta.clone();
    let range = res.range.clone();
    let attributes = res.attributes.clone();
    let extensions = res.extensions.clone();
    let stream = res.into_stream();
    (
        GetResult {
            payload: GetResultPayload::Stream(futures::stream::empty().boxed()),
            meta,
            range,
            attributes,
            extensions,
        },
        stream,
    )
}

impl<T: ObjectStore> CountingStore<T> {
    fn before(
        &self,
        _op: &str,
        kind: RequestKind,
        path: &Path,
        range: Option<GetRange>,
    ) -> Result<()> {
        self.record(kind, path, range);
        Ok(())
    }
}

#[async_trait]
impl<T: ObjectStore> ObjectStore for CountingStore<T> {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.record(RequestKind::Put, location, None);
        self.state
            .bytes_written
            .fetch_add(payload.content_length() as u64, Ordering::Relaxed);
        self.inner.put_opts(location, payload, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let kind = if options.head {
            RequestKind::Head
        } else if options.range.is_some() {
            RequestKind::GetRange
        } else {
            RequestKind::Get
        };
        self.record(kind, location, options.range.clone());
        let res = self.inner.get_opts(location, options).await?;
        let (mut res, stream) = into_stream_payload(res);
        let state = Arc::clone(&self.state);
        let counted = stream.inspect(move |chunk| {
            if let Ok(b) = chunk {
                state
                    .bytes_read
                    .fetch_add(b.len() as u64, Ordering::Relaxed);
            }
        });
        res.payload = GetResultPayload::Stream(counted.boxed());
        Ok(res)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let state = Arc::clone(&self.state);
        let locations = locations
            .inspect(move |p| {
                if let Ok(p) = p {
                    record_into(&state, RequestKind::Delete, p, None);
                }
            })
            .boxed();
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.record(RequestKind::List, prefix.unwrap_or(&Path::default()), None);
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.record(
            RequestKind::ListDir,
            prefix.unwrap_or(&Path::default()),
            None,
        );
        self.inner.list_with_delimiter(prefix).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.before("put_multipart", RequestKind::Put, location, None)?;
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.before("copy", RequestKind::Copy, from, None)?;
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.before("rename", RequestKind::Copy, from, None)?;
        self.inner.rename_opts(from, to, options).await
    }
}

/// What a [`FaultStore`] breaks.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FaultConfig {
    /// Fail the N-th request (1-based, counted over all requests).
    pub fail_nth: Option<u64>,
    /// Fail each request with this probability (0.0–1.0), drawn from a generator seeded by
    /// `seed` (deterministic for a given request order).
    pub fail_fraction: f64,
    /// Seed for `fail_fraction`.
    pub seed: u64,
    /// Truncate every GET body to at most this many bytes.
    pub truncate_bodies_to: Option<usize>,
    /// Refuse suffix range requests (`GetRange::Suffix`) like some proxies do.
    pub refuse_suffix: bool,
    /// Let the N-th PUT (1-based, counting PUTs only) reach the wrapped store, then fail it
    /// as if its response was lost: the object is written, the caller gets an error.
    pub lose_put_response: Option<u64>,
    /// With `lose_put_response`: instead of failing, send that PUT again once and return the
    /// second answer, as a retrying HTTP client does after a lost response (object_store
    /// retries a PUT after a server error): a conditional PUT then meets its own write
    /// (`Precondition`, or `AlreadyExists` for a create-only PUT).
    pub resend_lost_put: bool,
}

impl FaultConfig {
    /// Fail the N-th request (1-based).
    pub fn fail_nth(mut self, n: u64) -> Self {
        self.fail_nth = Some(n);
        self
    }
    /// Fail a fraction of requests with a fixed seed.
    pub fn fail_fraction(mut self, fraction: f64, seed: u64) -> Self {
        self.fail_fraction = fraction;
        self.seed = seed;
        self
    }
    /// Truncate GET bodies to `n` bytes.
    pub fn truncate_bodies_to(mut self, n: usize) -> Self {
        self.truncate_bodies_to = Some(n);
        self
    }
    /// Refuse suffix requests.
    pub fn refuse_suffix(mut self, on: bool) -> Self {
        self.refuse_suffix = on;
        self
    }
    /// Write the N-th PUT (1-based, PUTs only), then fail it as if the response was lost.
    pub fn lose_put_response(mut self, n: u64) -> Self {
        self.lose_put_response = Some(n);
        self
    }
    /// Write the N-th PUT, lose its response and send it again once, returning the second
    /// answer (a retrying client after a lost response).
    pub fn resend_lost_put(mut self, n: u64) -> Self {
        self.lose_put_response = Some(n);
        self.resend_lost_put = true;
        self
    }
}

/// Injects failures into the wrapped store.
#[derive(Debug)]
pub struct FaultStore<T> {
    inner: T,
    cfg: FaultConfig,
    counter: AtomicU64,
    puts: AtomicU64,
    rng: Mutex<u64>,
}

impl<T: ObjectStore> FaultStore<T> {
    /// Wrap `inner`.
    pub fn new(inner: T, cfg: FaultConfig) -> Self {
        let seed = cfg.seed ^ 0x9E37_79B9_7F4A_7C15;
        FaultStore {
            inner,
            cfg,
            counter: AtomicU64::new(0),
            puts: AtomicU64::new(0),
            rng: Mutex::new(seed),
        }
    }

    fn next_random(&self) -> f64 {
        // splitmix64
        let mut g = match self.rng.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *g = g.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *g;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn before(
        &self,
        op: &str,
        _kind: RequestKind,
        path: &Path,
        _range: Option<GetRange>,
    ) -> Result<()> {
        let n = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        let fail = self.cfg.fail_nth == Some(n)
            || (self.cfg.fail_fraction > 0.0 && self.next_random() < self.cfg.fail_fraction);
        if fail {
            return Err(object_store::Error::Generic {
                store: "FaultStore",
                source: format!("injected fault on request {n} ({op} {path})").into(),
            });
        }
        Ok(())
    }
}

impl<T> fmt::Display for FaultStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultStore")
    }
}

#[async_trait]
impl<T: ObjectStore> ObjectStore for FaultStore<T> {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.before("put", RequestKind::Put, location, None)?;
        let n = self.puts.fetch_add(1, Ordering::SeqCst) + 1;
        if self.cfg.lose_put_response != Some(n) {
            return self.inner.put_opts(location, payload, opts).await;
        }
        let first = self
            .inner
            .put_opts(location, payload.clone(), opts.clone())
            .await;
        if first.is_ok() && self.cfg.resend_lost_put {
            return self.inner.put_opts(location, payload, opts).await;
        }
        first?;
        Err(object_store::Error::Generic {
            store: "FaultStore",
            source: format!("injected fault: the response to PUT {n} ({location}) was lost").into(),
        })
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.before("get", RequestKind::Get, location, options.range.clone())?;
        if self.cfg.refuse_suffix && matches!(options.range, Some(GetRange::Suffix(_))) {
            return Err(object_store::Error::NotSupported {
                source: "suffix range requests refused (injected)".into(),
            });
        }
        let res = self.inner.get_opts(location, options).await?;
        let Some(limit) = self.cfg.truncate_bodies_to else {
            return Ok(res);
        };
        let (mut res, stream) = into_stream_payload(res);
        let mut remaining = limit;
        let truncated = stream.map(move |chunk| {
            chunk.map(|b| {
                let take = b.len().min(remaining);
                remaining -= take;
                b.slice(..take)
            })
        });
        res.payload = GetResultPayload::Stream(truncated.boxed());
        Ok(res)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        if let Err(e) = self.before("delete", RequestKind::Delete, &Path::default(), None) {
            return futures::stream::once(async move { Err(e) }).boxed();
        }
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        if let Err(e) = self.before("list", RequestKind::List, &Path::default(), None) {
            return futures::stream::once(async move { Err(e) }).boxed();
        }
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.before("list", RequestKind::ListDir, &Path::default(), None)?;
        self.inner.list_with_delimiter(prefix).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.before("put_multipart", RequestKind::Put, location, None)?;
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.before("copy", RequestKind::Copy, from, None)?;
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.before("rename", RequestKind::Copy, from, None)?;
        self.inner.rename_opts(from, to, options).await
    }
}
