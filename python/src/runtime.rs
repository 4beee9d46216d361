//! The process's tokio runtime, and running library futures on it with the GIL released.
//!
//! One multi-threaded runtime serves every Python thread (`block_on` from several threads at
//! once is fine). A child made by `fork` has none of its parent's threads, so the runtime is
//! keyed by the process id: the first call in a child builds a new one, and the parent's
//! (whose worker threads do not exist there) is leaked, never dropped — dropping it would
//! wait for those threads forever.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use tokio::runtime::Runtime;
use zarrflow::ArrayError;

use crate::errors;

/// The runtime and the process that built it.
struct ProcessRuntime {
    pid: u32,
    runtime: Arc<Runtime>,
}

static RUNTIME: Mutex<Option<ProcessRuntime>> = Mutex::new(None);

/// The runtime of this process, built on first use (and again after a `fork`).
fn runtime() -> Result<Arc<Runtime>, ArrayError> {
    let pid = std::process::id();
    let mut slot = RUNTIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(current) = slot.as_ref()
        && current.pid == pid
    {
        return Ok(current.runtime.clone());
    }
    if let Some(inherited) = slot.take() {
        // The parent's runtime: its threads are not in this process.
        std::mem::forget(inherited.runtime);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("zarrflow")
        .build()
        .map(Arc::new)
        .map_err(|e| ArrayError::Task {
            what: "starting zarrflow's runtime",
            source: Some(Box::new(e)),
        })?;
    *slot = Some(ProcessRuntime {
        pid,
        runtime: runtime.clone(),
    });
    Ok(runtime)
}

/// Runs a library future to completion on the process's runtime with the GIL released, so
/// other Python threads run during its I/O and decoding. Its error becomes the matching
/// zarrflow exception; a panic becomes `zarrflow.InternalError` and never unwinds into
/// Python.
pub fn run<F, T>(py: Python<'_>, future: F) -> PyResult<T>
where
    F: Future<Output = Result<T, ArrayError>> + Send,
    T: Send,
{
    let outcome = py.detach(move || {
        std::panic::catch_unwind(AssertUnwindSafe(move || {
            runtime().and_then(|runtime| runtime.block_on(future))
        }))
    });
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(errors::to_py(py, &e)),
        Err(panic) => Err(errors::panicked(py, panic.as_ref())),
    }
}

/// Runs a closure that may panic (Rust work done while holding the GIL, such as building
/// a selection); a panic becomes `zarrflow.InternalError`.
pub fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(errors::panicked(py, panic.as_ref())))
}
