//! Where CPU work runs: the one place that moves work off the async runtime.
//!
//! - [`on_cpu_pool`]: owned CPU work (planning, a fetched shard's decodes) as a job of the
//!   CPU pool, awaited.
//! - [`on_blocking`]: owned work that may block (decodes reading a local file, encodes) on
//!   tokio's blocking pool, behind a [`DecodeGate`] when one bounds how many run at once.
//! - [`run_parallel`]: work that borrows the caller's values runs on the CPU pool while the
//!   caller waits, handing the worker thread over (`block_in_place`) on a multi-threaded
//!   runtime.
//!
//! Each runs inside the caller's tracing span. A panic in any of them becomes
//! [`ArrayError::Task`] with the panic or join error kept.
//!
//! The CPU pool ([`cpu_pool`]) is a rayon pool of the library's own, not rayon's global one,
//! and belongs to the process that built it: a child made by `fork` has none of its
//! parent's threads, so the first use in the child builds a new pool (the parent's is
//! leaked there, never dropped). With rayon's global pool, which cannot be rebuilt, a child
//! forked after its parent had used it waited forever on its first parallel job.

use std::sync::Arc;

use crate::per_process::PerProcess;

use super::error::{ArrayError, Result};
use super::gate::DecodeGate;

/// The CPU pool of this process (see [`PerProcess`]).
static CPU_POOL: PerProcess<Arc<rayon::ThreadPool>> = PerProcess::new();

/// The CPU pool of this process (one thread per core), built on first use and again in a
/// forked child. `None` when its threads cannot be started: the caller then works on its
/// own thread.
pub(crate) fn cpu_pool() -> Option<Arc<rayon::ThreadPool>> {
    CPU_POOL.get(|| {
        let pool = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("zarrflow-cpu-{i}"))
            // they encode a write's inner chunks (`codec/slab.rs`)
            .start_handler(|_| crate::codec::slab::use_slabs_on_this_thread())
            .build();
        match pool {
            Ok(pool) => Some(Arc::new(pool)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the CPU pool: working on the calling thread");
                None
            }
        }
    })
}

/// The cores this process may use (`std::thread::available_parallelism`, 1 when unknown),
/// asked once: on Linux the answer reads the cgroup's CPU quota from `/sys` (opening files,
/// about 40 µs measured here), which a read would otherwise pay on its calling thread
/// before any of its work is shared out. A quota or CPU affinity changed while the process
/// runs (or in a forked child) is not seen: the count sizes copy threads and the default
/// decode threads, never correctness.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Threads of the CPU pool (1 when it cannot be started: work then runs on the calling
/// thread).
pub(crate) fn cpu_pool_threads() -> usize {
    cpu_pool().map_or(1, |pool| pool.current_num_threads())
}

/// Runs `f`, a panic in it becoming [`ArrayError::Task`] saying `what` (for a job of the
/// CPU pool, whose panic would otherwise surface in whoever waits on the pool).
pub(crate) fn guarded<T>(what: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(ArrayError::task(what, None)))
}

/// Runs CPU work on the CPU pool and waits for its result.
pub(crate) async fn on_cpu_pool<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let Some(pool) = cpu_pool() else {
        return f();
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let span = tracing::Span::current();
    pool.spawn(move || {
        let _entered = span.enter();
        let result = guarded("a job of the CPU pool panicked", f);
        // The read may be gone (cancelled): nobody to tell.
        let _ = tx.send(result);
    });
    rx.await
        .map_err(|_| ArrayError::task("a job of the CPU pool ended without a result", None))?
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

/// Runs CPU work that borrows the caller's values on the CPU pool (so that its parallel
/// iterators and scopes fan out there): on a multi-threaded runtime the worker thread is
/// handed over for the duration (`block_in_place`), so other tasks keep running.
/// Without a CPU pool (its threads could not be started) the work runs on the calling
/// thread alone ([`on_this_thread`]).
pub(crate) fn run_parallel<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let in_pool = move || match cpu_pool() {
        Some(pool) => pool.install(f),
        None => on_this_thread(f),
    };
    if on_multi_thread_runtime() {
        tokio::task::block_in_place(in_pool)
    } else {
        in_pool()
    }
}

thread_local! {
    /// A rayon pool of this thread alone (`None` when this thread already works for a pool),
    /// built on first use by [`on_this_thread`].
    static THIS_THREAD_POOL: std::cell::OnceCell<Option<rayon::ThreadPool>> =
        const { std::cell::OnceCell::new() };
}

/// Runs `f`, whose parallel iterators and scopes then run one after another on this
/// thread: inside a pool of this thread alone, which starts no thread
/// (`use_current_thread`). Outside any pool they would go to rayon's global pool, which
/// this library never uses (see [`cpu_pool`]); and when the CPU pool's threads could not
/// be started, the global pool's cannot either, and rayon then panics ("The global thread
/// pool has not been initialized"), as `zarrflow get` did under a tight `ulimit -v`. On a
/// thread that already works for a pool (nothing here makes one), `f` runs in that pool.
///
/// Only reached when the CPU pool's threads cannot start. rayon keeps the calling thread a
/// worker of its one-thread pool for the thread's life (and never frees that pool): later
/// parallel iterators on the thread outside any other pool, the caller's own included, run
/// there, one after another, where they would otherwise go to rayon's global pool.
pub(crate) fn on_this_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    THIS_THREAD_POOL.with(|cell| {
        let pool = cell.get_or_init(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .use_current_thread()
                .build()
                .ok()
        });
        match pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    })
}

#[cfg(test)]
mod tests {
    use rayon::prelude::*;

    use super::*;

    #[test]
    fn the_cores_are_asked_once_and_are_what_std_says() {
        let std_says = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(cores(), std_says);
        assert_eq!(cores(), cores());
        assert_eq!(super::super::default_decode_threads(), std_says + 1);
    }

    #[test]
    fn work_on_this_thread_runs_its_parallel_iterators_and_scopes_here() {
        let here = std::thread::current().id();
        let (threads, seen) = on_this_thread(|| {
            let seen: Vec<_> = (0..1000)
                .into_par_iter()
                .map(|_| std::thread::current().id())
                .collect();
            (rayon::current_num_threads(), seen)
        });
        assert_eq!(threads, 1, "a pool of this thread alone");
        assert!(seen.iter().all(|t| *t == here), "every item on this thread");
        // a scope's spawns complete too (the reads' scatter uses one), in a second call
        let ones = on_this_thread(|| {
            let mut v = [0; 8];
            rayon::scope(|s| {
                for x in v.iter_mut() {
                    s.spawn(move |_| *x = 1);
                }
            });
            v.iter().sum::<i32>()
        });
        assert_eq!(ones, 8);
    }
}
