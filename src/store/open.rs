//! Opening a [`Store`] from a URL: the backend (`object_store`'s builders, with the retry
//! policy for remote ones), its options from the environment and [`StoreOptions`], and the
//! URL shown in messages.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use object_store::ObjectStore;
use object_store::path::Path;

use super::{RetryConfig, Store, StoreError, StoreOptions};

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
        // local paths: the backend with conditional PUTs across processes (same root, `/`)
        let backend: Arc<dyn ObjectStore> = if scheme == "file" {
            Arc::new(super::LocalCasStore::new(options.fsync))
        } else {
            Arc::from(backend)
        };
        let display = url.as_str().trim_end_matches('/').to_string();
        Ok(Store {
            inner: backend,
            prefix,
            url: display,
            options,
            suffix_refused: Arc::new(AtomicBool::new(false)),
            conditional_put_refused: Arc::new(AtomicBool::new(false)),
        })
    }
}
