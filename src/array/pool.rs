//! Where CPU work runs: the one place that moves work off the async runtime.
//!
//! - [`on_cpu_pool`]: owned CPU work (planning) as a job of rayon's pool, awaited.
//! - [`on_blocking`]: owned work that may block (decodes reading a local file, encodes) on
//!   tokio's blocking pool, behind a [`DecodeGate`] when one bounds how many run at once.
//! - [`run_parallel`]: work that borrows the caller's values runs inside the call, handing
//!   the worker thread over (`block_in_place`) on a multi-threaded runtime.
//!
//! Each runs inside the caller's tracing span. A panic in any of them becomes
//! [`ArrayError::Task`] with the panic or join error kept.

use std::sync::Arc;

use super::error::{ArrayError, Result};
use super::gate::DecodeGate;

/// Runs CPU work on rayon's pool and waits for its result.
pub(crate) async fn on_cpu_pool<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let span = tracing::Span::current();
    rayon::spawn(move || {
        let _entered = span.enter();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .unwrap_or_else(|_| Err(ArrayError::task("a planning job panicked", None)));
        // The read may be gone (cancelled): nobody to tell.
        let _ = tx.send(result);
    });
    rx.await
        .map_err(|_| ArrayError::task("a planning job ended without a result", None))?
}

/// Runs work on tokio's blocking pool; with a gate, at most the gate's limit at a time (see
/// [`DecodeGate`]), and nothing once the gate is closed (the read was cancelled).
pub(crate) async fn on_blocking<T: Send + 'static>(
    gate: Option<Arc<DecodeGate>>,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || {
        let _entered = span.enter();
        let _pass = match &gate {
            Some(gate) => Some(
                gate.enter()
                    .ok_or_else(|| ArrayError::task("the read was cancelled", None))?,
            ),
            None => None,
        };
        f()
    })
    .await
    .map_err(|e| ArrayError::task("a blocking job failed", Some(e)))?
}

/// Whether the caller runs on a multi-threaded tokio runtime (where `block_in_place` may
/// hand the worker thread over to blocking work).
pub(crate) fn on_multi_thread_runtime() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// Runs CPU work that borrows the caller's values: on a multi-threaded runtime the worker
/// thread is handed over for the duration (`block_in_place`), so other tasks keep running;
/// the work itself fans out on rayon's pool.
pub(crate) fn run_parallel<T>(f: impl FnOnce() -> T) -> T {
    if on_multi_thread_runtime() {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}
