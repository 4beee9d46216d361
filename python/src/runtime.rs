//! The process's tokio runtime, and running library futures on it with the GIL released.
//!
//! One multi-threaded runtime serves every Python thread (`block_on` from several threads at
//! once is fine). A child made by `fork` has none of its parent's threads, so the runtime is
//! keyed by the process id: the first call in a child builds a new one, and the parent's
//! (whose worker threads do not exist there) is leaked, never dropped — dropping it would
//! wait for those threads forever.
//!
//! Ctrl-C: on Python's main thread (where signal handlers run), an operation that runs
//! longer than [`SIGNAL_TICK`] re-attaches to the interpreter every tick to run pending
//! signal handlers (`PyErr_CheckSignals`). When one raises (`KeyboardInterrupt` for
//! SIGINT), the operation is dropped — its requests and decodes are cancelled — and the
//! exception is returned.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

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

/// How often a running operation on the main thread lets pending signal handlers run.
const SIGNAL_TICK: Duration = Duration::from_millis(50);

/// How an operation ended.
enum Ended<T> {
    /// It completed (with its value or its error).
    Done(Result<T, ArrayError>),
    /// A signal handler raised (`KeyboardInterrupt`): the operation was dropped.
    Interrupted(PyErr),
}

/// Whether this is Python's main thread, the one signal handlers run on.
fn on_main_thread(py: Python<'_>) -> bool {
    let check = || -> PyResult<bool> {
        let threading = py.import("threading")?;
        let main = threading.call_method0("main_thread")?;
        let current = threading.call_method0("current_thread")?;
        Ok(main.is(&current))
    };
    check().unwrap_or(false)
}

/// Drives `future` to completion; every [`SIGNAL_TICK`] it attaches to the interpreter and
/// runs pending signal handlers, and stops (dropping the future) when one raises.
async fn until_interrupted<F, T>(future: F) -> Ended<T>
where
    F: Future<Output = Result<T, ArrayError>>,
{
    let mut future = pin!(future);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + SIGNAL_TICK, SIGNAL_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(outcome) = future.as_mut().poll(cx) {
            return Poll::Ready(Ended::Done(outcome));
        }
        while tick.poll_tick(cx).is_ready() {
            if let Err(raised) = Python::attach(|py| py.check_signals()) {
                return Poll::Ready(Ended::Interrupted(raised));
            }
        }
        Poll::Pending
    })
    .await
}

/// Runs a library future to completion on the process's runtime with the GIL released, so
/// other Python threads run during its I/O and decoding. Its error becomes the matching
/// zarrflow exception; a panic becomes `zarrflow.InternalError` and never unwinds into
/// Python. On the main thread a signal handler that raises (Ctrl-C) ends it with that
/// exception at the first poll after a [`SIGNAL_TICK`] (work done inside one poll of the
/// library's future, such as a write's shard encodes, delays it); a write interrupted so
/// has written some of its shards or chunks (each whole or not at all), as one that fails.
pub fn run<F, T>(py: Python<'_>, future: F) -> PyResult<T>
where
    F: Future<Output = Result<T, ArrayError>> + Send,
    T: Send,
{
    let watch_signals = on_main_thread(py);
    let outcome = py.detach(move || {
        std::panic::catch_unwind(AssertUnwindSafe(move || {
            let runtime = match runtime() {
                Ok(runtime) => runtime,
                Err(e) => return Ended::Done(Err(e)),
            };
            if watch_signals {
                runtime.block_on(until_interrupted(future))
            } else {
                Ended::Done(runtime.block_on(future))
            }
        }))
    });
    match outcome {
        Ok(Ended::Done(Ok(value))) => Ok(value),
        Ok(Ended::Done(Err(e))) => Err(errors::to_py(py, &e)),
        Ok(Ended::Interrupted(raised)) => Err(raised),
        Err(panic) => Err(errors::panicked(py, panic.as_ref())),
    }
}

/// Runs a closure that may panic (Rust work done while holding the GIL, such as building
/// a selection); a panic becomes `zarrflow.InternalError`.
pub fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(errors::panicked(py, panic.as_ref())))
}
