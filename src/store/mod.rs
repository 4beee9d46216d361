//! The storage layer: a thin wrapper over `object_store` with Zarr-oriented operations.
//!
//! * [`Store`] opens any supported URL ([`Store::open`]) and offers get, ranged get, suffix get
//!   (with a HEAD fallback), batched coalesced ranged gets, put, conditional put, delete and
//!   directory listing, all addressed by [`StoreKey`]s relative to the store's prefix.
//! * [`LocalCasStore`] is the local-filesystem backend: conditional PUTs that hold across
//!   processes (a staged file renamed under a directory lock), reads of regular files only.
//! * [`merge`] holds the pure coalescing planner.
//! * [`wrappers`] holds composable `ObjectStore` decorators for tests and diagnostics:
//!   request counting, latency and fault injection.

pub(crate) mod backoff;
mod body;
mod closer;
mod error;
mod key;
mod local;
mod local_cas;
mod location;
mod memory;
pub mod merge;
mod object;
mod open;
mod request;
mod trace;
pub mod wrappers;

pub use error::StoreError;
pub use key::StoreKey;
pub use local_cas::{LocalCasStore, NotARegularFile};
pub use location::StoreLocation;
pub use merge::{CoalesceOptions, MergePlan, plan_merges};
pub use object::FetchedObject;
pub use object_store::{BackoffConfig, RetryConfig};
pub use request::{ByteRange, GetOpts, GetOutput, PutMode};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutOptions, PutPayload, UpdateVersion,
};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use trace::{RangeField, TARGET, Timer, get_method, outcome};

/// Attempts of [`Store::get_suffix`]'s HEAD + range pair when the object keeps being replaced
/// between the two (the range is conditional on HEAD's version), with a backoff between them;
/// then `Precondition`.
const SUFFIX_FALLBACK_ATTEMPTS: usize = 32;

/// Per-store runtime options (never written to metadata).
#[derive(Debug, Clone)]
#[non_exhaustive]
#[must_use]
pub struct StoreOptions {
    /// Coalescing thresholds for [`Store::get_ranges`].
    pub coalesce: CoalesceOptions,
    /// Maximum number of concurrent requests issued by one batched call.
    pub concurrency: usize,
    /// Try `Range: bytes=-N` suffix requests first; when false (or after a refusal) use HEAD +
    /// bounded range.
    pub suffix_requests: bool,
    /// Reject all writes.
    pub read_only: bool,
    /// Backend configuration passed to `object_store` (e.g. `aws_endpoint`, `aws_allow_http`,
    /// `aws_region`, `google_service_account`, `azure_storage_account_name`). These override
    /// the `AWS_*` / `GOOGLE_*` / `AZURE_*` environment variables.
    pub backend: HashMap<String, String>,
    /// Retry policy of remote backends (S3, GCS, Azure, HTTP): how many times and for how
    /// long `object_store` retries a failed request (timeouts, connection errors, 5xx, 429),
    /// with which backoff. `None` keeps `object_store`'s default (10 retries, 3 minutes,
    /// exponential backoff from 100 ms). Local and memory stores never retry.
    pub retry: Option<RetryConfig>,
    /// Local stores: fsync every written file before it replaces its object, and its
    /// directory after (also after a delete), so that a write that returned survives a power
    /// loss. Off by default: a process crash never leaves a partial object either way, but
    /// after a power loss the last writes may be missing, and on filesystems that do not
    /// order a rename after the data it publishes (XFS, ext4 with `noauto_da_alloc`) an
    /// object may be empty or short. Read when the store is opened ([`Store::open`]); other
    /// backends ignore it (their writes are durable when they return).
    pub fsync: bool,
}

/// Default [`StoreOptions::concurrency`]: requests in flight for one batched call.
pub const DEFAULT_STORE_CONCURRENCY: usize = 10;

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            coalesce: CoalesceOptions::default(),
            concurrency: DEFAULT_STORE_CONCURRENCY,
            suffix_requests: true,
            read_only: false,
            backend: HashMap::new(),
            retry: None,
            fsync: false,
        }
    }
}

impl StoreOptions {
    /// Set the coalescing thresholds.
    pub fn with_coalesce(mut self, max_gap: u64, max_request_bytes: u64) -> Self {
        self.coalesce = CoalesceOptions {
            max_gap,
            max_request_bytes,
        };
        self
    }
    /// Set the request concurrency of batched calls (at least 1).
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }
    /// Enable or disable suffix requests.
    pub fn with_suffix_requests(mut self, on: bool) -> Self {
        self.suffix_requests = on;
        self
    }
    /// Make the store read-only.
    pub fn with_read_only(mut self, on: bool) -> Self {
        self.read_only = on;
        self
    }
    /// Set the retry policy of remote backends (see [`StoreOptions::retry`]).
    pub fn with_retry(mut self, retry: RetryConfig) -> Self {
        self.retry = Some(retry);
        self
    }
    /// Set the retry policy from its main numbers: at most `max_retries` retries, none
    /// after `timeout` from the first attempt (object_store's default backoff).
    pub fn with_retries(self, max_retries: usize, timeout: std::time::Duration) -> Self {
        self.with_retry(RetryConfig {
            max_retries,
            retry_timeout: timeout,
            backoff: BackoffConfig::default(),
        })
    }
    /// Fsync written files and their directories on local stores (see
    /// [`StoreOptions::fsync`]).
    pub fn with_fsync(mut self, on: bool) -> Self {
        self.fsync = on;
        self
    }
    /// Add a backend option such as `("aws_endpoint", "http://127.0.0.1:9000")`.
    pub fn with_backend_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.backend.insert(key.into(), value.into());
        self
    }
}

/// An opaque object version for conditional writes (ETag and/or backend version id).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectVersion {
    /// The ETag, when the backend reports one.
    pub e_tag: Option<String>,
    /// The backend version id, when versioning is enabled.
    pub version: Option<String>,
}

impl ObjectVersion {
    /// True when the backend reported an ETag or a version id (a version that can be
    /// matched by a conditional request).
    pub fn is_known(&self) -> bool {
        self.e_tag.is_some() || self.version.is_some()
    }
}

/// A GET's object: an open file, or a body still to be read.
enum Got {
    /// A local file, open.
    File(FetchedObject),
    /// The GET, whose body is a stream.
    Stream(object_store::GetResult),
}

/// The DEBUG event of a whole-object GET ([`Store::get_object_within`],
/// [`Store::get_object_now`]).
fn trace_get_object(key: &StoreKey, timer: &Timer, res: &Result<FetchedObject, StoreError>) {
    tracing::debug!(
        target: TARGET,
        key = %key,
        range = "all",
        bytes = res.as_ref().map_or(0, FetchedObject::size),
        in_file = res.as_ref().is_ok_and(|o| !o.is_in_memory()),
        latency_us = timer.micros(),
        outcome = outcome(res),
        "GET"
    );
}

/// The version of an object from its backend metadata.
fn version_of(meta: &object_store::ObjectMeta) -> ObjectVersion {
    ObjectVersion {
        e_tag: meta.e_tag.clone(),
        version: meta.version.clone(),
    }
}

/// Size and version of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Object size in bytes.
    pub size: u64,
    /// Object version.
    pub version: ObjectVersion,
}

/// The bytes of a ranged read with the whole object's size and version (the name the
/// shortcuts return; the same type as [`GetOutput`]).
pub type RangeRead = GetOutput;

/// The content of one directory level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirListing {
    /// Names (last segment) of objects directly in the directory, sorted.
    pub objects: Vec<String>,
    /// Names (last segment) of sub-directories, sorted.
    pub prefixes: Vec<String>,
}

/// A store rooted at a prefix of an `object_store` backend.
///
/// Cheap to clone (shares the backend).
#[derive(Debug, Clone)]
pub struct Store {
    inner: Arc<dyn ObjectStore>,
    prefix: Path,
    url: String,
    options: StoreOptions,
    suffix_refused: Arc<AtomicBool>,
    backing: location::Backing,
    conditional_put_refused: Arc<AtomicBool>,
    in_place: bool,
    /// How [`Store::get_object_now`] reaches the backend, when it can.
    now: OpenNow,
}

/// Backends whose objects [`Store::get_object_now`] opens on the calling thread.
#[derive(Debug, Clone)]
enum OpenNow {
    /// Not this store's backend (a remote one, or one given to
    /// [`Store::from_object_store`]).
    No,
    /// The local filesystem: a stat and an open, blocking.
    Local(Arc<LocalCasStore>),
    /// `object_store`'s in-memory backend, whose GETs are ready when first polled.
    Memory,
}

impl Store {
    /// Wrap an existing backend (e.g. a decorated one), rooted at `prefix` (`""` for the root).
    /// `url` is only used in messages.
    pub fn from_object_store(
        inner: Arc<dyn ObjectStore>,
        prefix: &str,
        url: impl Into<String>,
        options: StoreOptions,
    ) -> Result<Self, StoreError> {
        let prefix = Path::parse(prefix).map_err(|e| StoreError::InvalidKey {
            key: prefix.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Store {
            inner,
            prefix,
            url: url.into(),
            options,
            suffix_refused: Arc::new(AtomicBool::new(false)),
            backing: location::Backing::Opaque,
            conditional_put_refused: Arc::new(AtomicBool::new(false)),
            in_place: false,
            now: OpenNow::No,
        })
    }

    /// A store over an in-memory backend (see the `memory` module); `name` for a named one.
    fn on_memory(
        inner: Arc<object_store::memory::InMemory>,
        prefix: Path,
        url: String,
        name: Option<&str>,
    ) -> Self {
        Store {
            inner,
            prefix,
            url,
            options: StoreOptions::default(),
            suffix_refused: Arc::new(AtomicBool::new(false)),
            backing: match name {
                Some(name) => location::Backing::NamedMemory { name: name.into() },
                None => location::Backing::Opaque,
            },
            conditional_put_refused: Arc::new(AtomicBool::new(false)),
            in_place: true,
            now: OpenNow::Memory,
        }
    }

    /// Whether whole objects are read in place: the backend hands a fetched object over as
    /// an open local file or as shared memory, so reading a piece of it costs only that
    /// piece. True for the stores [`Store::open`] makes for local paths and `memory://`
    /// URLs, false for remote ones and, unless set, for [`Store::from_object_store`].
    ///
    /// The read path uses it to pick its strategy for a shard of which only some inner
    /// chunks are needed: in place, the shard is opened once ([`Store::get_object`]) and
    /// exactly its index and the needed inner chunks are read from it (positioned reads,
    /// no coalescing, no gap bytes); otherwise the index and the needed ranges are requested
    /// separately, coalesced by [`StoreOptions::coalesce`] (which suits remote stores,
    /// where a request costs a round trip). The write path uses it too: into such a store
    /// that does not [`fsync`](Store::fsyncs), a write stores at most
    /// [`ArrayOptions::local_write_concurrency`](crate::array::ArrayOptions::local_write_concurrency)
    /// shards at once, its PUTs being CPU work rather than waits.
    pub fn reads_in_place(&self) -> bool {
        self.in_place
    }

    /// Whether this store's writes wait for its device: a local store opened with
    /// [`StoreOptions::fsync`] (fixed when it was opened), never a `memory://` one; for a
    /// backend given to [`Store::from_object_store`], what its options say.
    pub fn fsyncs(&self) -> bool {
        match &self.now {
            OpenNow::Local(local) => local.fsyncs(),
            OpenNow::Memory => false,
            OpenNow::No => self.options.fsync,
        }
    }

    /// Whether [`Store::get_object_now`] opens objects: the store was made by
    /// [`Store::open`] for a local path or `memory://`.
    pub(crate) fn opens_now(&self) -> bool {
        !matches!(self.now, OpenNow::No)
    }

    /// [`Store::get_object`] on the calling thread, for a store that [`opens_now`]
    /// (otherwise [`StoreError::Unsupported`]): a local file is opened with blocking system
    /// calls there (no hop to the runtime's blocking pool), a `memory://` object is
    /// at hand. Call it from a thread that may block and is outside any tokio runtime (the
    /// CPU pool's), never from an async task.
    ///
    /// [`opens_now`]: Store::opens_now
    pub(crate) fn get_object_now(&self, key: &StoreKey) -> Result<FetchedObject, StoreError> {
        match &self.now {
            OpenNow::Local(local) => {
                let timer = Timer::start();
                let res = local
                    .get_now(&self.path(key))
                    .map_err(|e| self.err(key, e))
                    .and_then(|res| match self.file_object(key, res) {
                        Got::File(object) => Ok(object),
                        Got::Stream(_) => Err(StoreError::Unsupported {
                            operation: "get_object_now",
                            store_url: self.url.clone(),
                        }),
                    });
                trace_get_object(key, &timer, &res);
                res
            }
            // ready when first polled: nothing waits
            OpenNow::Memory => futures::executor::block_on(self.get_object_within(key, None)),
            OpenNow::No => Err(StoreError::Unsupported {
                operation: "get_object_now",
                store_url: self.url.clone(),
            }),
        }
    }

    /// The same store, declaring whether its backend reads whole objects in place (see
    /// [`Store::reads_in_place`]). Turn it on only for a backend that delivers objects as
    /// open files or shared memory (a decorated local or in-memory backend given to
    /// [`Store::from_object_store`]): on a remote backend it would download whole shards
    /// to read a few inner chunks, and its writes would store fewer shards at once.
    pub fn with_in_place_reads(mut self, on: bool) -> Self {
        self.in_place = on;
        self
    }

    /// The same store with other options.
    pub fn with_options(mut self, options: StoreOptions) -> Self {
        self.options = options;
        self
    }

    /// The same backend rooted at `key` below this store's prefix.
    pub fn sub_store(&self, key: &StoreKey) -> Self {
        let mut s = self.clone();
        s.prefix = self.path(key);
        s.url = self.url_of(key);
        s
    }

    /// The store URL (for messages).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the store is rooted, decoded and canonical (see [`StoreLocation`]): compare
    /// locations, never URLs, to tell whether two stores reach the same objects. A local
    /// store's location is resolved against the filesystem at each call.
    pub fn location(&self) -> StoreLocation {
        let id = Arc::as_ptr(&self.inner) as *const () as usize;
        StoreLocation::of(&self.backing, &self.prefix, id)
    }

    /// The options in force.
    pub fn options(&self) -> &StoreOptions {
        &self.options
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn ObjectStore> {
        &self.inner
    }

    /// The full URL of `key` (for messages).
    pub fn url_of(&self, key: &StoreKey) -> String {
        if key.is_root() {
            self.url.clone()
        } else if self.url.ends_with("://") {
            // an empty authority (`memory://`): the key is a path, not a host
            format!("{}/{}", self.url, key)
        } else if self.url.ends_with('/') {
            format!("{}{}", self.url, key)
        } else {
            format!("{}/{}", self.url, key)
        }
    }

    fn path(&self, key: &StoreKey) -> Path {
        key.under(&self.prefix)
    }

    fn err(&self, key: &StoreKey, e: object_store::Error) -> StoreError {
        StoreError::from_backend(self.url_of(key), e)
    }

    fn check_writable(&self, key: &StoreKey, operation: &'static str) -> Result<(), StoreError> {
        if self.options.read_only {
            return Err(StoreError::ReadOnly {
                store_url: self.url.clone(),
                operation,
                key: key.to_string(),
            });
        }
        Ok(())
    }

    /// Reads an object, or the byte range of it that `opts` asks for, conditionally on its
    /// version when `opts.if_match` is set: one request. The body is checked against the
    /// length the backend announced ([`StoreError::ShortRead`] otherwise).
    pub async fn get_opts(&self, key: &StoreKey, opts: GetOpts) -> Result<GetOutput, StoreError> {
        let timer = Timer::start();
        let (range, conditional) = (opts.range.clone(), opts.if_match.is_some());
        let res = self.get_opts_untraced(key, opts).await;
        tracing::debug!(
            target: TARGET,
            key = %key,
            range = %RangeField(range.as_ref()),
            bytes = res.as_ref().map_or(0, |r| r.bytes.len()),
            latency_us = timer.micros(),
            outcome = outcome(&res),
            "{}",
            get_method(range.as_ref(), conditional)
        );
        res
    }

    async fn get_opts_untraced(
        &self,
        key: &StoreKey,
        opts: GetOpts,
    ) -> Result<GetOutput, StoreError> {
        if let Some(ByteRange::Bounded(r)) = &opts.range {
            self.check_range(key, r)?;
        }
        let mut backend = GetOptions::new().with_range(opts.range.map(|r| match r {
            ByteRange::Bounded(r) => GetRange::Bounded(r),
            ByteRange::Suffix(n) => GetRange::Suffix(n),
        }));
        if let Some(v) = &opts.if_match {
            backend.if_match = v.e_tag.clone();
        }
        let res = self
            .inner
            .get_opts(&self.path(key), backend)
            .await
            .map_err(|e| self.err(key, e))?;
        let expected = res.range.end - res.range.start;
        let (object_size, version) = (res.meta.size, version_of(&res.meta));
        let url = self.url_of(key);
        body::check_announced(expected, opts.max_size, &url)?;
        let bytes = body::collect(res.into_stream(), expected, &url, |e| self.err(key, e)).await?;
        Ok(GetOutput {
            bytes,
            object_size,
            version,
        })
    }

    /// Read a whole object.
    pub async fn get(&self, key: &StoreKey) -> Result<Bytes, StoreError> {
        Ok(self.get_opts(key, GetOpts::default()).await?.bytes)
    }

    /// Read a whole object, `None` when it does not exist.
    pub async fn get_opt(&self, key: &StoreKey) -> Result<Option<Bytes>, StoreError> {
        match self.get(key).await {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Fetch a whole object with one GET, to be read piece by piece
    /// ([`FetchedObject::read_range`]). On the local filesystem the object stays in its
    /// (open) file and only the pieces read are copied; elsewhere the body is read whole.
    pub async fn get_object(&self, key: &StoreKey) -> Result<FetchedObject, StoreError> {
        self.get_object_within(key, None).await
    }

    /// [`Self::get_object`], refusing an object of more than `max_size` bytes
    /// ([`StoreError::TooLarge`]) from the size the backend announces, before its body is
    /// read. On the local filesystem nothing is read yet and the object is returned: the
    /// caller checks [`FetchedObject::size`].
    pub async fn get_object_within(
        &self,
        key: &StoreKey,
        max_size: Option<u64>,
    ) -> Result<FetchedObject, StoreError> {
        let timer = Timer::start();
        let res = self.get_object_untraced(key, max_size).await;
        trace_get_object(key, &timer, &res);
        res
    }

    /// The object of a GET whose payload is an open file (a local store's), or the GET
    /// back when its payload is a stream.
    fn file_object(&self, key: &StoreKey, res: object_store::GetResult) -> Got {
        let object_store::GetResult {
            payload,
            meta,
            range,
            attributes,
            extensions,
        } = res;
        match payload {
            #[cfg(unix)]
            object_store::GetResultPayload::File(file, _) => {
                let version = version_of(&meta);
                Got::File(FetchedObject::from_file(
                    file,
                    range,
                    version,
                    self.url_of(key),
                ))
            }
            payload => Got::Stream(object_store::GetResult {
                payload,
                meta,
                range,
                attributes,
                extensions,
            }),
        }
    }

    async fn get_object_untraced(
        &self,
        key: &StoreKey,
        max_size: Option<u64>,
    ) -> Result<FetchedObject, StoreError> {
        let res = self
            .inner
            .get_opts(&self.path(key), GetOptions::new())
            .await
            .map_err(|e| self.err(key, e))?;
        let res = match self.file_object(key, res) {
            Got::File(object) => return Ok(object),
            Got::Stream(res) => res,
        };
        let version = version_of(&res.meta);
        let url = self.url_of(key);
        let expected = res.range.end - res.range.start;
        body::check_announced(expected, max_size, &url)?;
        let pieces =
            body::collect_pieces(res.into_stream(), expected, &url, |e| self.err(key, e)).await?;
        Ok(FetchedObject::from_pieces(pieces, version, url))
    }

    /// Read a whole object together with its version (for read-modify-write).
    pub async fn get_with_version(
        &self,
        key: &StoreKey,
    ) -> Result<(Bytes, ObjectVersion), StoreError> {
        let got = self.get_opts(key, GetOpts::default()).await?;
        Ok((got.bytes, got.version))
    }

    /// Size and version of an object (one HEAD request).
    pub async fn head(&self, key: &StoreKey) -> Result<ObjectInfo, StoreError> {
        let timer = Timer::start();
        let res = self
            .inner
            .head(&self.path(key))
            .await
            .map_err(|e| self.err(key, e))
            .map(|meta| ObjectInfo {
                size: meta.size,
                version: version_of(&meta),
            });
        tracing::debug!(
            target: TARGET,
            key = %key,
            size = res.as_ref().map_or(0, |i| i.size),
            latency_us = timer.micros(),
            outcome = outcome(&res),
            "HEAD"
        );
        res
    }

    fn check_range(&self, key: &StoreKey, r: &Range<u64>) -> Result<(), StoreError> {
        if r.start > r.end {
            return Err(StoreError::InvalidRange {
                url: self.url_of(key),
                start: r.start,
                end: r.end,
                reason: "start is after end".into(),
            });
        }
        Ok(())
    }

    /// Read bytes `range` of an object (one request; empty ranges make none).
    pub async fn get_range(&self, key: &StoreKey, range: Range<u64>) -> Result<Bytes, StoreError> {
        self.check_range(key, &range)?;
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let opts = GetOpts::default().with_range(ByteRange::Bounded(range));
        Ok(self.get_opts(key, opts).await?.bytes)
    }

    /// Read bytes `range` of an object and learn the object's size, in one request.
    pub async fn get_range_with_size(
        &self,
        key: &StoreKey,
        range: Range<u64>,
    ) -> Result<RangeRead, StoreError> {
        self.check_range(key, &range)?;
        if range.is_empty() {
            let info = self.head(key).await?;
            return Ok(RangeRead {
                bytes: Bytes::new(),
                object_size: info.size,
                version: info.version,
            });
        }
        self.get_opts(
            key,
            GetOpts::default().with_range(ByteRange::Bounded(range)),
        )
        .await
    }

    /// Whether [`get_suffix`](Self::get_suffix) tries one suffix request first (suffix
    /// requests are on and the backend has not refused one), rather than HEAD + range.
    pub fn uses_suffix_requests(&self) -> bool {
        self.options.suffix_requests && !self.suffix_refused.load(Ordering::Relaxed)
    }

    /// Read the last `n` bytes of an object (all of it when it is shorter), with the object's
    /// size.
    ///
    /// Issues one suffix request (no HEAD); when the backend refuses suffix ranges (or
    /// `suffix_requests` is off) falls back to HEAD + one bounded range, and remembers the
    /// refusal for later calls on this store.
    pub async fn get_suffix(&self, key: &StoreKey, n: u64) -> Result<RangeRead, StoreError> {
        if self.uses_suffix_requests() && n > 0 {
            match self
                .get_opts(key, GetOpts::default().with_range(ByteRange::Suffix(n)))
                .await
            {
                Ok(got) => return Ok(got),
                // `Unsupported`: object_store's Azure client refuses suffix ranges before
                // sending one (Azure Blob Storage has none)
                Err(StoreError::Backend { .. })
                | Err(StoreError::ShortRead { .. })
                | Err(StoreError::Unsupported { .. }) => {
                    self.suffix_refused.store(true, Ordering::Relaxed);
                    tracing::debug!(
                        target: TARGET,
                        key = %key,
                        "suffix request refused: HEAD + bounded range instead (and from now on)"
                    );
                }
                Err(e) => return Err(e),
            }
        }
        // The range must come from the version whose size HEAD reported: a writer that
        // replaces the object between the two requests fails the range's If-Match, and the
        // pair is made again (a suffix request has no such window; seen on Azure, where every
        // suffix read takes this path, with writers racing on one shard).
        let mut attempt = 0;
        loop {
            attempt += 1;
            let info = self.head(key).await?;
            let size = info.size;
            let start = size.saturating_sub(n);
            let bytes = if start < size {
                let opts = GetOpts::default()
                    .with_range(ByteRange::Bounded(start..size))
                    .with_if_match(info.version.clone());
                match self.get_opts(key, opts).await {
                    Ok(got) => got.bytes,
                    Err(StoreError::Precondition { .. }) if attempt < SUFFIX_FALLBACK_ATTEMPTS => {
                        tracing::debug!(
                            target: TARGET,
                            key = %key,
                            attempt,
                            "replaced between HEAD and range: both again"
                        );
                        backoff::backoff(key.as_str(), attempt).await;
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            } else {
                Bytes::new()
            };
            return Ok(RangeRead {
                bytes,
                object_size: size,
                version: info.version,
            });
        }
    }

    /// Read several byte ranges of one object with coalescing.
    ///
    /// The ranges are merged by [`plan_merges`] with this store's [`CoalesceOptions`], the
    /// merged requests are issued with at most `concurrency` in flight, and the results are
    /// sliced back: the output has one `Bytes` per input range, in input order.
    pub async fn get_ranges(
        &self,
        key: &StoreKey,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Bytes>, StoreError> {
        self.get_ranges_of_version(key, ranges, None).await
    }

    /// [`Store::get_ranges`] from one version of the object: every request is conditional
    /// on the object's ETag still being `version`'s (when known), so bytes located by an
    /// index read earlier never come from a newer object. `Precondition` when it changed.
    pub async fn get_ranges_of_version(
        &self,
        key: &StoreKey,
        ranges: &[Range<u64>],
        version: Option<&ObjectVersion>,
    ) -> Result<Vec<Bytes>, StoreError> {
        for r in ranges {
            self.check_range(key, r)?;
        }
        let plan = plan_merges(ranges, self.options.coalesce);
        tracing::debug!(
            target: TARGET,
            key = %key,
            ranges = ranges.len(),
            requests = plan.requests.iter().filter(|r| !r.is_empty()).count(),
            bytes = plan.requests.iter().map(|r| r.end - r.start).sum::<u64>(),
            "coalesced"
        );
        let fetched: Vec<Bytes> = futures::stream::iter(plan.requests.iter().cloned())
            .map(|r| async move {
                if r.is_empty() {
                    return Ok(Bytes::new());
                }
                let mut opts = GetOpts::default().with_range(ByteRange::Bounded(r));
                opts.if_match = version.cloned();
                Ok(self.get_opts(key, opts).await?.bytes)
            })
            .buffered(self.options.concurrency.max(1))
            .try_collect()
            .await?;
        let mut out = Vec::with_capacity(ranges.len());
        for (r, &(idx, off)) in ranges.iter().zip(&plan.slices) {
            let buf = &fetched[idx];
            let len = r.end - r.start;
            let (s, e) = (off as usize, (off + len) as usize);
            if e > buf.len() {
                return Err(StoreError::ShortRead {
                    url: self.url_of(key),
                    expected: len,
                    got: buf.len().saturating_sub(s) as u64,
                });
            }
            out.push(buf.slice(s..e));
        }
        Ok(out)
    }

    /// Writes an object as `mode` says: unconditionally, only if absent, or only if it is
    /// still a version read earlier. Every backend [`Store::open`] makes checks both
    /// conditions atomically (the local filesystem with [`LocalCasStore`]);
    /// [`StoreError::Unsupported`] when a backend cannot (one given to
    /// [`Store::from_object_store`], such as `object_store`'s own `LocalFileSystem`) or a
    /// version has neither an ETag nor a version id.
    ///
    /// `value` is one buffer (`Bytes`, `Vec<u8>`) or a [`PutPayload`] of several parts,
    /// stored as their concatenation (a shard whose pieces were never copied together).
    pub async fn put_opts(
        &self,
        key: &StoreKey,
        value: impl Into<PutPayload>,
        mode: PutMode,
    ) -> Result<ObjectVersion, StoreError> {
        let value = value.into();
        let method = match mode {
            PutMode::Overwrite => "PUT",
            PutMode::Create => "PUT create",
            PutMode::Update(_) => "PUT if-match",
        };
        let (timer, bytes) = (Timer::start(), value.content_length());
        let res = self.put_opts_untraced(key, value, mode).await;
        tracing::debug!(
            target: TARGET,
            key = %key,
            bytes,
            latency_us = timer.micros(),
            outcome = outcome(&res),
            "{method}"
        );
        res
    }

    async fn put_opts_untraced(
        &self,
        key: &StoreKey,
        value: PutPayload,
        mode: PutMode,
    ) -> Result<ObjectVersion, StoreError> {
        let operation = match mode {
            PutMode::Overwrite => "put",
            PutMode::Create => "put_if_absent",
            PutMode::Update(_) => "put_if_match",
        };
        self.check_writable(key, operation)?;
        let mode = match mode {
            PutMode::Overwrite => object_store::PutMode::Overwrite,
            PutMode::Create => object_store::PutMode::Create,
            PutMode::Update(v) if v.is_known() => object_store::PutMode::Update(UpdateVersion {
                e_tag: v.e_tag,
                version: v.version,
            }),
            PutMode::Update(_) => {
                return Err(StoreError::Unsupported {
                    operation: "put_if_match (backend reported no ETag or version)",
                    store_url: self.url.clone(),
                });
            }
        };
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        let res = self
            .inner
            .put_opts(&self.path(key), value, opts)
            .await
            .map_err(|e| match e {
                object_store::Error::NotImplemented { .. }
                | object_store::Error::NotSupported { .. } => StoreError::Unsupported {
                    operation,
                    store_url: self.url.clone(),
                },
                e => self.err(key, e),
            })?;
        Ok(ObjectVersion {
            e_tag: res.e_tag,
            version: res.version,
        })
    }

    /// [`put_opts`](Self::put_opts), falling back to an unconditional PUT where the backend
    /// cannot check `mode`'s condition (only backends given to
    /// [`Store::from_object_store`] that lack conditional PUT): the write path's and the
    /// hierarchy's one fallback. Conflicts (`AlreadyExists`, `Precondition`) are returned,
    /// never overwritten. The backend's first refusal is remembered for the store's life, so
    /// later writes make one request, not a refused one and then another.
    pub async fn put_opts_or_overwrite(
        &self,
        key: &StoreKey,
        value: impl Into<PutPayload>,
        mode: PutMode,
    ) -> Result<ObjectVersion, StoreError> {
        let value = value.into();
        let uncheckable = match &mode {
            PutMode::Overwrite => false,
            // a version the backend gave without an ETag or version id cannot be matched
            PutMode::Update(v) if !v.is_known() => true,
            _ => self.conditional_put_refused.load(Ordering::Relaxed),
        };
        if uncheckable {
            return self.put_opts(key, value, PutMode::Overwrite).await;
        }
        match self.put_opts(key, value.clone(), mode).await {
            Err(StoreError::Unsupported { .. }) => {
                self.conditional_put_refused.store(true, Ordering::Relaxed);
                tracing::debug!(
                    target: TARGET,
                    key = %key,
                    "the store cannot check the condition: unconditional PUT instead (and from now on)"
                );
                self.put_opts(key, value, PutMode::Overwrite).await
            }
            other => other,
        }
    }

    /// Whether this store's backend refused a conditional PUT, so that
    /// [`put_opts_or_overwrite`](Self::put_opts_or_overwrite) now writes unconditionally.
    pub fn refused_conditional_put(&self) -> bool {
        self.conditional_put_refused.load(Ordering::Relaxed)
    }

    /// Write an object unconditionally.
    pub async fn put(&self, key: &StoreKey, value: Bytes) -> Result<ObjectVersion, StoreError> {
        self.put_opts(key, value, PutMode::Overwrite).await
    }

    /// Write an object only if it does not exist ([`StoreError::AlreadyExists`] otherwise).
    pub async fn put_if_absent(
        &self,
        key: &StoreKey,
        value: Bytes,
    ) -> Result<ObjectVersion, StoreError> {
        self.put_opts(key, value, PutMode::Create).await
    }

    /// Write an object only if its current version is `expected`
    /// ([`StoreError::Precondition`] otherwise; [`StoreError::Unsupported`] on backends
    /// without compare-and-swap, see [`Store::put_opts`]).
    pub async fn put_if_match(
        &self,
        key: &StoreKey,
        value: Bytes,
        expected: &ObjectVersion,
    ) -> Result<ObjectVersion, StoreError> {
        self.put_opts(key, value, PutMode::Update(expected.clone()))
            .await
    }

    /// Delete an object (deleting a missing object is not an error).
    pub async fn delete(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.check_writable(key, "delete")?;
        let timer = Timer::start();
        let res = match self.inner.delete(&self.path(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err(key, e)),
        };
        tracing::debug!(
            target: TARGET,
            key = %key,
            latency_us = timer.micros(),
            outcome = outcome(&res),
            "DELETE"
        );
        res
    }

    /// Delete every object under `key/` (and `key` itself); on a local store also the
    /// staging files that killed writes left there and the directories left empty.
    pub async fn delete_prefix(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.check_writable(key, "delete_prefix")?;
        let locations = self
            .inner
            .list(Some(&self.path(key)))
            .map_ok(|m| m.location)
            .boxed();
        let timer = Timer::start();
        let deleted = self
            .inner
            .delete_stream(locations)
            .try_collect::<Vec<_>>()
            .await
            .map_err(|e| self.err(key, e));
        tracing::debug!(
            target: TARGET,
            key = %key,
            objects = deleted.as_ref().map_or(0, Vec::len),
            latency_us = timer.micros(),
            outcome = outcome(&deleted),
            "LIST + DELETE prefix"
        );
        deleted?;
        if let Some(dir) = self.local_dir(key) {
            // a local store keeps the directories of deleted objects: remove the empty ones,
            // or a new object whose key was an old directory could not be written; and the
            // staging files of killed writes, which no listing shows
            let local_err = |source| StoreError::Local {
                url: self.url_of(key),
                source,
            };
            tokio::task::spawn_blocking(move || local::remove_staging_files_and_empty_dirs(&dir))
                .await
                .map_err(|e| local_err(std::io::Error::other(e)))?
                .map_err(local_err)?;
        }
        Ok(())
    }

    /// True when no object is stored under `key` (one listing request, the first result).
    pub async fn is_empty_prefix(&self, key: &StoreKey) -> Result<bool, StoreError> {
        let path = self.path(key);
        let prefix = (!path.as_ref().is_empty()).then_some(&path);
        let timer = Timer::start();
        let first = self.inner.list(prefix).next().await;
        let res = match first {
            None => Ok(true),
            Some(Ok(_)) => Ok(false),
            Some(Err(e)) => Err(self.err(key, e)),
        };
        tracing::debug!(
            target: TARGET,
            key = %key,
            empty = res.as_ref().is_ok_and(|e| *e),
            latency_us = timer.micros(),
            outcome = outcome(&res),
            "LIST (first entry)"
        );
        res
    }

    /// The local directory of `key`, for a store on the local filesystem (opened by URL, or
    /// wrapped with a `file://` URL).
    fn local_dir(&self, key: &StoreKey) -> Option<std::path::PathBuf> {
        let mut dir = if self.backing == location::Backing::Local {
            std::path::PathBuf::from("/").join(self.prefix.as_ref())
        } else {
            let url = url::Url::parse(&self.url).ok()?;
            if url.scheme() != "file" {
                return None;
            }
            url.to_file_path().ok()?
        };
        // the key's segments as they are: a key is not URL text (`a#b`, `%41`)
        if !key.is_root() {
            dir.extend(key.as_str().split('/'));
        }
        Some(dir)
    }

    /// List one directory level under `key` (the root when empty).
    pub async fn list_dir(&self, key: &StoreKey) -> Result<DirListing, StoreError> {
        let path = self.path(key);
        let prefix = if path.as_ref().is_empty() {
            None
        } else {
            Some(&path)
        };
        let timer = Timer::start();
        let res = self
            .inner
            .list_with_delimiter(prefix)
            .await
            .map_err(|e| self.err(key, e));
        tracing::debug!(
            target: TARGET,
            key = %key,
            entries = res
                .as_ref()
                .map_or(0, |r| r.objects.len() + r.common_prefixes.len()),
            latency_us = timer.micros(),
            outcome = outcome(&res),
            "LIST directory"
        );
        let res = res?;
        let name = |p: &Path| p.filename().map(str::to_string);
        let mut objects: Vec<String> = res
            .objects
            .iter()
            .filter_map(|m| name(&m.location))
            .collect();
        let mut prefixes: Vec<String> = res.common_prefixes.iter().filter_map(name).collect();
        objects.sort();
        prefixes.sort();
        Ok(DirListing { objects, prefixes })
    }

    /// List every key under `key` recursively, relative to this store's prefix, sorted.
    pub async fn list_prefix(&self, key: &StoreKey) -> Result<Vec<StoreKey>, StoreError> {
        let path = self.path(key);
        let prefix = if path.as_ref().is_empty() {
            None
        } else {
            Some(&path)
        };
        let timer = Timer::start();
        let metas: Result<Vec<_>, StoreError> = self
            .inner
            .list(prefix)
            .try_collect()
            .await
            .map_err(|e| self.err(key, e));
        tracing::debug!(
            target: TARGET,
            key = %key,
            entries = metas.as_ref().map_or(0, Vec::len),
            latency_us = timer.micros(),
            outcome = outcome(&metas),
            "LIST"
        );
        let metas = metas?;
        let mut out = Vec::with_capacity(metas.len());
        for m in metas {
            if let Some(rel) = m.location.prefix_match(&self.prefix) {
                let s: Vec<String> = rel.map(|p| p.as_ref().to_string()).collect();
                out.push(StoreKey::new(s.join("/"))?);
            }
        }
        out.sort();
        Ok(out)
    }
}
