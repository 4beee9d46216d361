//! Opening a [`Store`] from a URL: the backend (`object_store`'s builders, with the retry
//! policy for remote ones), its options from the environment and [`StoreOptions`], the URL
//! shown in messages, and the backing its [`StoreLocation`](super::StoreLocation) is
//! computed from.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use object_store::ObjectStore;
use object_store::path::Path;

use super::location::{Backing, resolve_local};
use super::{RetryConfig, Store, StoreError, StoreOptions};

/// Why a URL's fragment or query is refused, for the schemes whose stores would ignore it
/// (`None` for the others: an `http(s)` query can be part of the resource).
fn ignored_part(url: &url::Url) -> Option<&'static str> {
    let ignoring = matches!(
        url.scheme(),
        "file" | "memory" | "s3" | "s3a" | "gs" | "az" | "adl" | "azure" | "abfs" | "abfss"
    );
    if !ignoring {
        None
    } else if url.fragment().is_some() {
        Some(
            "a `#fragment` is not part of a store location (the store would ignore it); write `%23` for a `#` in a name",
        )
    } else if url.query().is_some() {
        Some(
            "a `?query` is not part of a store location (the store would ignore it); write `%3F` for a `?` in a name",
        )
    } else {
        None
    }
}

/// The backing of a store opened from `url` (after the fragment and query are refused).
fn backing_of(url: &url::Url) -> Backing {
    let scheme = match url.scheme() {
        "file" => return Backing::Local,
        "s3" | "s3a" => "s3",
        "az" | "adl" | "azure" | "abfs" | "abfss" => "az",
        "http" | "https" => "http",
        other => other,
    };
    let mut authority = url.host_str().unwrap_or_default().to_string();
    if let Some(port) = url.port() {
        authority.push_str(&format!(":{port}"));
    }
    Backing::Remote {
        scheme: scheme.to_string(),
        authority,
    }
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
    ///
    /// URLs are percent-decoded (`file:///d/%73rc.zarr` is `/d/src.zarr`). A `#fragment` or
    /// `?query` on a scheme whose store would ignore it (`file`, `memory`, `s3`, `gs`, `az`)
    /// is [`StoreError::InvalidUrl`]: `src.zarr#x` must not reach `src.zarr` unnoticed. A
    /// plain path is made absolute, and a `..` in it is resolved against the filesystem
    /// (symbolic links followed, as the kernel does).
    pub fn open(location: &str, mut options: StoreOptions) -> Result<Self, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: location.to_string(),
            reason,
        };
        let url = if location.contains("://") {
            url::Url::parse(location).map_err(|e| invalid(e.to_string()))?
        } else {
            let mut abs = std::path::absolute(location).map_err(|e| invalid(e.to_string()))?;
            if abs
                .components()
                .any(|c| c == std::path::Component::ParentDir)
            {
                abs = resolve_local(&abs);
            }
            url::Url::from_directory_path(&abs)
                .map_err(|()| invalid("cannot convert path to a file URL".into()))?
        };
        if let Some(reason) = ignored_part(&url) {
            return Err(invalid(reason.into()));
        }
        let scheme = url.scheme().to_string();
        if scheme == "memory" {
            return Store::open_memory(&url, options);
        }
        if matches!(scheme.as_str(), "http" | "https") {
            options.read_only = true;
        }
        let mut opts = env_options(&scheme);
        // an `http://` URL asks for plain HTTP (object_store refuses it unless allowed); an
        // explicit `allow_http` option still wins
        if scheme == "http" {
            opts.push(("allow_http".into(), "true".into()));
        }
        opts.extend(
            options
                .backend
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.clone())),
        );
        let (backend, prefix) = build_backend(&url, opts, options.retry.as_ref())
            .map_err(|e| invalid(e.to_string()))?;
        // local paths: the backend with conditional PUTs across processes (same root, `/`)
        let local = (scheme == "file").then(|| Arc::new(super::LocalCasStore::new(options.fsync)));
        let backend: Arc<dyn ObjectStore> = match &local {
            Some(local) => local.clone(),
            None => Arc::from(backend),
        };
        let display = url.as_str().trim_end_matches('/').to_string();
        Ok(Store {
            inner: backend,
            prefix,
            url: display,
            options,
            suffix_refused: Arc::new(AtomicBool::new(false)),
            backing: backing_of(&url),
            conditional_put_refused: Arc::new(AtomicBool::new(false)),
            // a local file is read in place (positioned reads of an open file)
            in_place: scheme == "file",
            now: match local {
                Some(local) => super::OpenNow::Local(local),
                None => super::OpenNow::No,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{StoreKey, StoreLocation};

    fn location(url: &str) -> StoreLocation {
        Store::open(url, StoreOptions::default())
            .unwrap()
            .location()
    }

    #[test]
    fn spellings_of_one_place_have_one_location() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(dir.join("src.zarr")).unwrap();
        std::os::unix::fs::symlink(dir.join("src.zarr"), dir.join("alias")).unwrap();
        let abs = dir.display();
        let want = StoreLocation::Local(dir.join("src.zarr"));
        for url in [
            format!("{abs}/src.zarr"),
            format!("{abs}/./src.zarr/"),
            format!("{abs}/alias/../src.zarr"),
            format!("{abs}/alias"),
            format!("file://{abs}/src.zarr"),
            format!("file://{abs}/%73rc.zarr"),
            format!("file://{abs}/x/%2E%2E/src.zarr"),
            format!("file://{abs}/alias/"),
        ] {
            assert_eq!(location(&url), want, "{url}");
        }
        // the missing part is normalised too
        assert_eq!(
            location(&format!("{abs}/alias/new/../x")),
            StoreLocation::Local(dir.join("src.zarr/x"))
        );
        assert_eq!(
            location("s3://bucket/a%20b/"),
            location("s3a://bucket/a b"),
            "decoded, one scheme"
        );
        assert_ne!(location("s3://bucket/a"), location("s3://other/a"));
        assert_eq!(
            location("memory://loc-test/%61"),
            Store::memory_named("loc-test")
                .sub_store(&StoreKey::new("a").unwrap())
                .location()
        );
        let private = Store::memory();
        assert_ne!(private.location(), Store::memory().location());
        assert!(
            private
                .location()
                .contains(&private.sub_store(&StoreKey::new("x").unwrap()).location())
        );
    }

    #[test]
    fn keys_are_backend_paths_as_they_are() {
        let store = Store::open("memory://key-paths/p%25", StoreOptions::default()).unwrap();
        let key = StoreKey::new("a b/c#d/100%/x?").unwrap();
        assert_eq!(store.path(&key).as_ref(), "p%/a b/c#d/100%/x?");
    }
}
