//! In-memory stores that can be named and shared within a process.
//!
//! `memory://NAME/prefix` is the same store for every open in the process (a registry keeps
//! each named store until [`Store::forget_memory`]); `memory://` without a name is a new,
//! private, empty store at every open (keep its [`Store`] handle to reach it again).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use object_store::memory::InMemory;
use object_store::path::Path;

use super::{Store, StoreError, StoreOptions};

/// The process's named in-memory stores.
fn registry() -> &'static Mutex<HashMap<String, Arc<InMemory>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<String, Arc<InMemory>>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// The named store `name`, created empty on first use.
fn named(name: &str) -> Arc<InMemory> {
    let mut stores = registry().lock().unwrap_or_else(|e| e.into_inner());
    stores
        .entry(name.to_string())
        .or_insert_with(|| Arc::new(InMemory::new()))
        .clone()
}

impl Store {
    /// A new, private, empty in-memory store (`memory://`).
    pub fn memory() -> Self {
        Store::on_memory(
            Arc::new(InMemory::new()),
            Path::default(),
            "memory://".into(),
            None,
        )
        .with_options(StoreOptions::default())
    }

    /// The process-wide in-memory store `name` (`memory://name`): every call, and every
    /// [`Store::open`] of `memory://name/...`, reaches the same objects.
    pub fn memory_named(name: &str) -> Self {
        Store::on_memory(
            named(name),
            Path::default(),
            format!("memory://{name}"),
            Some(name),
        )
    }

    /// Drops the named in-memory store `name` from the registry (handles still open keep
    /// its objects alive); returns whether it existed.
    pub fn forget_memory(name: &str) -> bool {
        let mut stores = registry().lock().unwrap_or_else(|e| e.into_inner());
        stores.remove(name).is_some()
    }

    /// Opens a `memory://[NAME][/prefix]` URL.
    pub(super) fn open_memory(url: &url::Url, options: StoreOptions) -> Result<Self, StoreError> {
        let prefix = Path::from_url_path(url.path()).map_err(|e| StoreError::InvalidUrl {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        let name = url.host_str().unwrap_or("");
        let named_as = (!name.is_empty()).then_some(name);
        let (backend, display) = if name.is_empty() {
            (Arc::new(InMemory::new()), "memory://".to_string())
        } else {
            (named(name), format!("memory://{name}"))
        };
        let display = if prefix.as_ref().is_empty() {
            display
        } else {
            format!("{display}/{prefix}")
        };
        Ok(Store::on_memory(backend, prefix, display, named_as).with_options(options))
    }
}
