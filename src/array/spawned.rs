//! A write's PUT to a remote store runs as a task of the caller's runtime, not inside the
//! caller's poll.
//!
//! object_store's S3 client hashes a PUT's whole body (SHA-256, for the signature's
//! `x-amz-content-sha256`) synchronously, inside the first poll of its request future.
//! Polled where a write polls its other shards (usually the thread of a `block_on`), that
//! hash held up everything else the write had in flight: on the write benchmark's 256 MiB
//! write to a local S3 server (64 shards, 127 MiB stored) on 2 cores, the shard encoders sat
//! idle while the polling thread hashed one body at a time. As a task of a multi-threaded
//! runtime, a PUT is hashed and sent by a worker while the write goes on. (Measured with a
//! `block_on` caller; a caller that is itself a task of the runtime may see the last task
//! it spawned run on its own worker, tokio's LIFO slot.)
//!
//! The task is aborted when the caller's future is dropped. An abort takes effect at the
//! task's next await, so a task in the middle of a poll (hashing a body) finishes that
//! poll first, and a request already handed to the HTTP client may still be sent, as when
//! the PUT ran in place. The task therefore holds a keep-alive given by the caller (the
//! shard's write lock) until it has really ended: no later write of the shard in this
//! process starts while a dropped write's PUT could still be sent. Outside a runtime, or on
//! a current-thread one (where a task would run on the same thread anyway), the future is
//! awaited in place.

use std::future::Future;

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::{JoinError, JoinHandle};
use tracing::Instrument;

/// Aborts its task when dropped.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `fut` as a task of the current multi-threaded tokio runtime (in the caller's
/// tracing span) and waits for it, holding `keep` until the task has ended (completed, or
/// dropped after an abort); or awaits it in place where there is no such runtime. `Err`
/// only when the runtime cancelled the task (it is shutting down); a panic in the task
/// resumes in the caller.
pub(crate) async fn on_runtime<F, K>(fut: F, keep: K) -> Result<F::Output, JoinError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    K: Send + 'static,
{
    let fut = async move {
        let out = fut.await;
        drop(keep);
        out
    };
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            let mut task = AbortOnDrop(handle.spawn(fut.in_current_span()));
            match (&mut task.0).await {
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                res => res,
            }
        }
        _ => Ok(fut.await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// Sets its flag when dropped.
    struct DropFlag(Arc<AtomicBool>);

    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn multi_thread(name: &str) -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(name)
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn a_future_runs_on_a_worker_of_a_multi_threaded_runtime() {
        let rt = multi_thread("spawned-test-worker");
        let name = rt
            .block_on(on_runtime(
                async { std::thread::current().name().map(str::to_string) },
                (),
            ))
            .unwrap();
        assert_eq!(name.as_deref(), Some("spawned-test-worker"));
    }

    #[test]
    fn outside_a_runtime_or_on_a_current_thread_one_it_runs_in_place() {
        let here = std::thread::current().id();
        let id = futures::executor::block_on(on_runtime(async { std::thread::current().id() }, ()));
        assert_eq!(id.unwrap(), here);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let id = rt
            .block_on(on_runtime(async { std::thread::current().id() }, ()))
            .unwrap();
        assert_eq!(id, here);
    }

    #[test]
    fn dropping_the_caller_aborts_the_task_and_releases_the_keep_alive() {
        let rt = multi_thread("spawned-abort");
        let (finished, released) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let f = finished.clone();
        let keep = DropFlag(released.clone());
        rt.block_on(async {
            let call = on_runtime(
                async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    f.store(true, Ordering::SeqCst);
                },
                keep,
            );
            // the caller gives up after 5 ms, dropping the call
            assert!(
                tokio::time::timeout(Duration::from_millis(5), call)
                    .await
                    .is_err()
            );
            tokio::time::sleep(Duration::from_millis(150)).await;
        });
        assert!(
            !finished.load(Ordering::SeqCst),
            "the task ran on after its caller was dropped"
        );
        assert!(
            released.load(Ordering::SeqCst),
            "the aborted task released its keep-alive"
        );
    }

    #[test]
    fn a_task_dropped_in_the_middle_of_a_poll_keeps_the_keep_alive_until_that_poll_ends() {
        let rt = multi_thread("spawned-mid-poll");
        let (in_poll, released) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let p = in_poll.clone();
        let keep = DropFlag(released.clone());
        let held_after_drop = rt.block_on(async {
            let call = on_runtime(
                async move {
                    // a poll that works for 100 ms without yielding (as a body is hashed)
                    p.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(100));
                    tokio::task::yield_now().await;
                },
                keep,
            );
            let mut call = Box::pin(call);
            // start the task, and drop the call while the task is inside its long poll
            assert!(futures::poll!(call.as_mut()).is_pending());
            while !in_poll.load(Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
            drop(call);
            let dropped = Instant::now();
            assert!(
                !released.load(Ordering::SeqCst),
                "the keep-alive was released while the task was still in its poll"
            );
            while !released.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            dropped.elapsed()
        });
        assert!(
            held_after_drop >= Duration::from_millis(50),
            "released {held_after_drop:?} after the drop, before the poll could have ended"
        );
    }

    #[test]
    fn a_panic_in_the_task_resumes_in_the_caller() {
        let rt = multi_thread("spawned-panic");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(on_runtime(async { panic!("in the task") }, ()))
        }));
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"in the task"));
    }
}
