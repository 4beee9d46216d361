//! Keyword options of `zarrflow.open` / `zarrflow.create`: the store's and the array's.
//!
//! Recognised keys set [`StoreOptions`] and [`ArrayOptions`] fields; any other key is a
//! backend option for `object_store` (e.g. `aws_endpoint="http://127.0.0.1:9000"`,
//! `aws_allow_http=True`), its value given as a string (booleans as `true` / `false`).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use zarrflow::{ArrayOptions, StoreOptions};

use crate::errors;

/// Both kinds of options, read from one keyword dictionary.
#[derive(Clone, Debug)]
pub struct Options {
    /// The store's options.
    pub store: StoreOptions,
    /// The opened array's execution options.
    pub array: ArrayOptions,
}

impl Options {
    /// Options from `kwargs` (`None`: the defaults); `read_only` comes from the mode.
    pub fn from_kwargs(
        py: Python<'_>,
        kwargs: Option<&Bound<'_, PyDict>>,
        read_only: bool,
    ) -> PyResult<Options> {
        let mut store = StoreOptions::default().with_read_only(read_only);
        let mut array = ArrayOptions::default();
        let (mut max_retries, mut retry_timeout) = (None, None);
        let (mut max_gap, mut max_request) = (None, None);
        if let Some(kwargs) = kwargs {
            for (key, value) in kwargs.iter() {
                let key: String = key.extract()?;
                let bad = |what: &str| {
                    errors::value_error(
                        py,
                        &format!("store option {key}={} must be {what}", value_repr(&value)),
                    )
                };
                let count = || value.extract::<u64>().map_err(|_| bad("an integer >= 0"));
                let flag = || {
                    value
                        .cast::<PyBool>()
                        .map(|b| b.is_true())
                        .map_err(|_| bad("True or False"))
                };
                match key.as_str() {
                    "request_concurrency" => {
                        array = array.with_request_concurrency(count()? as usize)
                    }
                    "decode_threads" => array = array.with_decode_threads(count()? as usize),
                    "local_write_concurrency" => {
                        array = array.with_local_write_concurrency(count()? as usize)
                    }
                    "index_cache_bytes" => array = array.with_index_cache_bytes(count()?),
                    "write_cache_bytes" => array = array.with_write_cache_bytes(count()?),
                    "verify_checksums" => array = array.with_verify_checksums(flag()?),
                    "inner_chunk_order" => {
                        let order = value
                            .extract::<String>()
                            .ok()
                            .and_then(|s| s.parse::<zarrflow::InnerChunkOrder>().ok())
                            .ok_or_else(|| bad("'lexicographic', 'colexicographic' or 'morton'"))?;
                        array = array.with_inner_chunk_order(order)
                    }
                    "store_empty_chunks" => array = array.with_store_empty_chunks(flag()?),
                    "max_metadata_bytes" => array = array.with_max_metadata_bytes(count()?),
                    "conflict_attempts" => {
                        let n = value
                            .extract::<u64>()
                            .ok()
                            .filter(|n| *n >= 1)
                            .ok_or_else(|| bad("an integer >= 1"))?;
                        array = array.with_conflict_attempts(n as usize)
                    }
                    "concurrency" => store = store.with_concurrency(count()? as usize),
                    "suffix_requests" => store = store.with_suffix_requests(flag()?),
                    "fsync" => store = store.with_fsync(flag()?),
                    "max_retries" => max_retries = Some(count()? as usize),
                    "retry_timeout" => {
                        let seconds: f64 = value
                            .extract()
                            .ok()
                            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                            .ok_or_else(|| bad("a number of seconds >= 0"))?;
                        retry_timeout = Some(std::time::Duration::from_secs_f64(seconds));
                    }
                    "coalesce_max_gap" => max_gap = Some(count()?),
                    "coalesce_max_request_bytes" => max_request = Some(count()?),
                    _ => {
                        let text = match value.cast::<PyBool>() {
                            Ok(b) => b.is_true().to_string(),
                            Err(_) => value.str()?.to_string(),
                        };
                        store = store.with_backend_option(key.clone(), text);
                    }
                }
            }
        }
        if max_retries.is_some() || retry_timeout.is_some() {
            store = store.with_retries(
                max_retries.unwrap_or(10),
                retry_timeout.unwrap_or(std::time::Duration::from_secs(180)),
            );
        }
        if max_gap.is_some() || max_request.is_some() {
            let defaults = StoreOptions::default().coalesce;
            store = store.with_coalesce(
                max_gap.unwrap_or(defaults.max_gap),
                max_request.unwrap_or(defaults.max_request_bytes),
            );
        }
        Ok(Options { store, array })
    }
}

fn value_repr(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into())
}
