//! The storage layer: a thin wrapper over `object_store` with Zarr-oriented operations.
//!
//! * [`Store`] opens any supported URL ([`Store::open`]) and offers get, ranged get, suffix get
//!   (with a HEAD fallback), batched coalesced ranged gets, put, conditional put, delete and
//!   directory listing, all addressed by [`StoreKey`]s relative to the store's prefix.
//! * [`merge`] holds the pure coalescing planner.
//! * [`wrappers`] holds composable `ObjectStore` decorators for tests and diagnostics:
//!   request counting, latency and fault injection.

mod error;
mod key;
mod local;
mod memory;
pub mod merge;
mod object;
pub mod wrappers;

pub use error::StoreError;
pub use key::StoreKey;
pub use merge::{CoalesceOptions, MergePlan, plan_merges};
pub use object::FetchedObject;
pub use object_store::{BackoffConfig, RetryConfig};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    UpdateVersion,
};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            coalesce: CoalesceOptions::default(),
            concurrency: 10,
            suffix_requests: true,
            read_only: false,
            backend: HashMap::new(),
            retry: None,
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
    fn is_known(&self) -> bool {
        self.e_tag.is_some() || self.version.is_some()
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

/// Bytes of a partial read together with the size of the whole object (from the response's
/// `Content-Range`, or from HEAD in the suffix fallback), as needed to validate a shard index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeRead {
    /// The bytes read.
    pub bytes: Bytes,
    /// Size of the whole object.
    pub object_size: u64,
    /// Version of the object the bytes come from (pass it to
    /// [`Store::get_ranges_of_version`] to read more of the same version).
    pub version: ObjectVersion,
}

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
}

/// `object_store::parse_url_opts`, plus the retry policy for remote backends.
fn build_backend(
    url: &url::Url,
    opts: Vec<(String, String)>,
    retry: Option<&RetryConfig>,
) -> object_store::Result<(Box<dyn ObjectStore>, Path)> {
    use object_store::ObjectStoreScheme as Scheme;
    let Some(retry) = retry else {
        return object_store::parse_url_opts(url, opts);
    };
    // the same fold as object_store's `builder_opts!`, with `with_retry` before `build`
    macro_rules! build {
        ($builder:ty, $url:expr) => {{
            let builder = opts.into_iter().fold(
                <$builder>::new().with_url($url.to_string()),
                |builder, (key, value)| match key.to_ascii_lowercase().parse() {
                    Ok(k) => builder.with_config(k, value),
                    Err(_) => builder,
                },
            );
            Box::new(builder.with_retry(retry.clone()).build()?) as Box<dyn ObjectStore>
        }};
    }
    let (scheme, path) = Scheme::parse(url)?;
    let path = Path::parse(path)?;
    let store = match scheme {
        Scheme::AmazonS3 => build!(object_store::aws::AmazonS3Builder, url),
        Scheme::GoogleCloudStorage => build!(object_store::gcp::GoogleCloudStorageBuilder, url),
        Scheme::MicrosoftAzure => build!(object_store::azure::MicrosoftAzureBuilder, url),
        Scheme::Http => build!(
            object_store::http::HttpBuilder,
            &url[..url::Position::BeforePath]
        ),
        _ => return object_store::parse_url_opts(url, opts),
    };
    Ok((store, path))
}

fn env_options(scheme: &str) -> Vec<(String, String)> {
    let prefixes: &[&str] = match scheme {
        "s3" | "s3a" => &["AWS_"],
        "gs" => &["GOOGLE_"],
        "az" | "adl" | "azure" | "abfs" | "abfss" => &["AZURE_"],
        _ => &[],
    };
    std::env::vars()
        .filter(|(k, _)| prefixes.iter().any(|p| k.starts_with(p)))
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect()
}

impl Store {
    /// Open a store by URL: a plain path, `file://`, `memory://name/prefix` (the process's
    /// named in-memory store; `memory://` alone is a new private one), `s3://bucket/prefix`,
    /// `gs://bucket/prefix`, `az://container/prefix`, `http(s)://host/prefix` (read-only).
    ///
    /// Cloud credentials, region and endpoint come from the usual environment variables
    /// (`AWS_*`, `GOOGLE_*`, `AZURE_*`, including `AWS_ENDPOINT` and `AWS_ALLOW_HTTP`) and from
    /// `options.backend`, which take precedence.
    pub fn open(location: &str, mut options: StoreOptions) -> Result<Self, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: location.to_string(),
            reason,
        };
        let url = if location.contains("://") {
            url::Url::parse(location).map_err(|e| invalid(e.to_string()))?
        } else {
            let abs = std::path::absolute(location).map_err(|e| invalid(e.to_string()))?;
            url::Url::from_directory_path(&abs)
                .map_err(|()| invalid("cannot convert path to a file URL".into()))?
        };
        let scheme = url.scheme().to_string();
        if scheme == "memory" {
            return Store::open_memory(&url, options);
        }
        if matches!(scheme.as_str(), "http" | "https") {
            options.read_only = true;
        }
        let mut opts = env_options(&scheme);
        opts.extend(
            options
                .backend
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.clone())),
        );
        let (backend, prefix) = build_backend(&url, opts, options.retry.as_ref())
            .map_err(|e| invalid(e.to_string()))?;
        let display = url.as_str().trim_end_matches('/').to_string();
        Ok(Store {
            inner: Arc::from(backend),
            prefix,
            url: display,
            options,
            suffix_refused: Arc::new(AtomicBool::new(false)),
        })
    }

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
        })
    }

    /// A store over an in-memory backend (see the `memory` module).
    fn on_memory(inner: Arc<object_store::memory::InMemory>, prefix: Path, url: String) -> Self {
        Store {
            inner,
            prefix,
            url,
            options: StoreOptions::default(),
            suffix_refused: Arc::new(AtomicBool::new(false)),
        }
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
        if key.is_root() {
            return self.prefix.clone();
        }
        let mut p = self.prefix.clone();
        for seg in key.as_str().split('/') {
            p = p.join(seg);
        }
        p
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

    async fn get_inner(
        &self,
        key: &StoreKey,
        range: Option<GetRange>,
    ) -> Result<(Bytes, ObjectInfo), StoreError> {
        self.get_inner_of(key, range, None).await
    }

    /// A GET, conditional on the object still being `version` when that is known
    /// (`If-Match` on the ETag; `Precondition` when the object changed).
    async fn get_inner_of(
        &self,
        key: &StoreKey,
        range: Option<GetRange>,
        version: Option<&ObjectVersion>,
    ) -> Result<(Bytes, ObjectInfo), StoreError> {
        let mut opts = GetOptions::new().with_range(range);
        if let Some(v) = version {
            opts.if_match = v.e_tag.clone();
        }
        let res = self
            .inner
            .get_opts(&self.path(key), opts)
            .await
            .map_err(|e| self.err(key, e))?;
        let expected = res.range.end - res.range.start;
        let info = ObjectInfo {
            size: res.meta.size,
            version: ObjectVersion {
                e_tag: res.meta.e_tag.clone(),
                version: res.meta.version.clone(),
            },
        };
        let bytes = res.bytes().await.map_err(|e| self.err(key, e))?;
        if bytes.len() as u64 != expected {
            return Err(StoreError::ShortRead {
                url: self.url_of(key),
                expected,
                got: bytes.len() as u64,
            });
        }
        Ok((bytes, info))
    }

    /// Read a whole object.
    pub async fn get(&self, key: &StoreKey) -> Result<Bytes, StoreError> {
        Ok(self.get_inner(key, None).await?.0)
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
        let res = self
            .inner
            .get_opts(&self.path(key), GetOptions::new())
            .await
            .map_err(|e| self.err(key, e))?;
        let version = ObjectVersion {
            e_tag: res.meta.e_tag.clone(),
            version: res.meta.version.clone(),
        };
        let url = self.url_of(key);
        let object_store::GetResult {
            payload,
            meta,
            range,
            attributes,
            extensions,
        } = res;
        let res = match payload {
            #[cfg(unix)]
            object_store::GetResultPayload::File(file, _) => {
                return Ok(FetchedObject::from_file(file, range, version, url));
            }
            payload => object_store::GetResult {
                payload,
                meta,
                range,
                attributes,
                extensions,
            },
        };
        let expected = res.range.end - res.range.start;
        let bytes = res.bytes().await.map_err(|e| self.err(key, e))?;
        if bytes.len() as u64 != expected {
            return Err(StoreError::ShortRead {
                url,
                expected,
                got: bytes.len() as u64,
            });
        }
        Ok(FetchedObject::from_bytes(bytes, version, url))
    }

    /// Read a whole object together with its version (for read-modify-write).
    pub async fn get_with_version(
        &self,
        key: &StoreKey,
    ) -> Result<(Bytes, ObjectVersion), StoreError> {
        let (b, info) = self.get_inner(key, None).await?;
        Ok((b, info.version))
    }

    /// Size and version of an object (one HEAD request).
    pub async fn head(&self, key: &StoreKey) -> Result<ObjectInfo, StoreError> {
        let meta = self
            .inner
            .head(&self.path(key))
            .await
            .map_err(|e| self.err(key, e))?;
        Ok(ObjectInfo {
            size: meta.size,
            version: ObjectVersion {
                e_tag: meta.e_tag,
                version: meta.version,
            },
        })
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
        Ok(self.get_inner(key, Some(GetRange::Bounded(range))).await?.0)
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
        let (bytes, info) = self.get_inner(key, Some(GetRange::Bounded(range))).await?;
        Ok(RangeRead {
            bytes,
            object_size: info.size,
            version: info.version,
        })
    }

    /// Read the last `n` bytes of an object (all of it when it is shorter), with the object's
    /// size.
    ///
    /// Issues one suffix request (no HEAD); when the backend refuses suffix ranges (or
    /// `suffix_requests` is off) falls back to HEAD + one bounded range, and remembers the
    /// refusal for later calls on this store.
    pub async fn get_suffix(&self, key: &StoreKey, n: u64) -> Result<RangeRead, StoreError> {
        if self.options.suffix_requests && !self.suffix_refused.load(Ordering::Relaxed) && n > 0 {
            match self.get_inner(key, Some(GetRange::Suffix(n))).await {
                Ok((bytes, info)) => {
                    return Ok(RangeRead {
                        bytes,
                        object_size: info.size,
                        version: info.version,
                    });
                }
                Err(StoreError::Backend { .. }) | Err(StoreError::ShortRead { .. }) => {
                    self.suffix_refused.store(true, Ordering::Relaxed);
                }
                Err(e) => return Err(e),
            }
        }
        let info = self.head(key).await?;
        let size = info.size;
        let start = size.saturating_sub(n);
        // the range must come from the version whose size HEAD reported
        let bytes = if start < size {
            self.get_inner_of(
                key,
                Some(GetRange::Bounded(start..size)),
                Some(&info.version),
            )
            .await?
            .0
        } else {
            Bytes::new()
        };
        Ok(RangeRead {
            bytes,
            object_size: size,
            version: info.version,
        })
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
        let fetched: Vec<Bytes> = futures::stream::iter(plan.requests.iter().cloned())
            .map(|r| async move {
                if r.is_empty() {
                    return Ok(Bytes::new());
                }
                Ok(self
                    .get_inner_of(key, Some(GetRange::Bounded(r)), version)
                    .await?
                    .0)
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

    async fn put_mode(
        &self,
        key: &StoreKey,
        value: Bytes,
        mode: PutMode,
        operation: &'static str,
    ) -> Result<ObjectVersion, StoreError> {
        self.check_writable(key, operation)?;
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        let res = self
            .inner
            .put_opts(&self.path(key), PutPayload::from_bytes(value), opts)
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

    /// Write an object unconditionally.
    pub async fn put(&self, key: &StoreKey, value: Bytes) -> Result<ObjectVersion, StoreError> {
        self.put_mode(key, value, PutMode::Overwrite, "put").await
    }

    /// Write an object only if it does not exist ([`StoreError::AlreadyExists`] otherwise).
    pub async fn put_if_absent(
        &self,
        key: &StoreKey,
        value: Bytes,
    ) -> Result<ObjectVersion, StoreError> {
        self.put_mode(key, value, PutMode::Create, "put_if_absent")
            .await
    }

    /// Write an object only if its current version is `expected`
    /// ([`StoreError::Precondition`] otherwise; [`StoreError::Unsupported`] on backends
    /// without compare-and-swap, such as the local filesystem).
    pub async fn put_if_match(
        &self,
        key: &StoreKey,
        value: Bytes,
        expected: &ObjectVersion,
    ) -> Result<ObjectVersion, StoreError> {
        if !expected.is_known() {
            return Err(StoreError::Unsupported {
                operation: "put_if_match (backend reported no ETag or version)",
                store_url: self.url.clone(),
            });
        }
        let mode = PutMode::Update(UpdateVersion {
            e_tag: expected.e_tag.clone(),
            version: expected.version.clone(),
        });
        self.put_mode(key, value, mode, "put_if_match").await
    }

    /// Delete an object (deleting a missing object is not an error).
    pub async fn delete(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.check_writable(key, "delete")?;
        match self.inner.delete(&self.path(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err(key, e)),
        }
    }

    /// Delete every object under `key/` (and `key` itself).
    pub async fn delete_prefix(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.check_writable(key, "delete_prefix")?;
        let locations = self
            .inner
            .list(Some(&self.path(key)))
            .map_ok(|m| m.location)
            .boxed();
        self.inner
            .delete_stream(locations)
            .try_collect::<Vec<_>>()
            .await
            .map_err(|e| self.err(key, e))?;
        if let Some(dir) = self.local_dir(key) {
            // a local store keeps the directories of deleted objects: remove the empty ones,
            // or a new object whose key was an old directory could not be written
            let local_err = |source| StoreError::Local {
                url: self.url_of(key),
                source,
            };
            tokio::task::spawn_blocking(move || local::remove_empty_dirs(&dir))
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
        let first = self.inner.list(prefix).next().await;
        match first {
            None => Ok(true),
            Some(Ok(_)) => Ok(false),
            Some(Err(e)) => Err(self.err(key, e)),
        }
    }

    /// The local directory of `key`, for a store on the local filesystem.
    fn local_dir(&self, key: &StoreKey) -> Option<std::path::PathBuf> {
        let url = url::Url::parse(&self.url_of(key)).ok()?;
        (url.scheme() == "file").then(|| url.to_file_path().ok())?
    }

    /// List one directory level under `key` (the root when empty).
    pub async fn list_dir(&self, key: &StoreKey) -> Result<DirListing, StoreError> {
        let path = self.path(key);
        let prefix = if path.as_ref().is_empty() {
            None
        } else {
            Some(&path)
        };
        let res = self
            .inner
            .list_with_delimiter(prefix)
            .await
            .map_err(|e| self.err(key, e))?;
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
        let metas: Vec<_> = self
            .inner
            .list(prefix)
            .try_collect()
            .await
            .map_err(|e| self.err(key, e))?;
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
