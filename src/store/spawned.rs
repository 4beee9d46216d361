//! Remote PUTs run as tasks of the caller's runtime, not inside the caller's poll.
//!
//! A PUT to S3 hashes its whole body (SHA-256, for the signature's `x-amz-content-sha256`)
//! synchronously, inside the first poll of `object_store`'s request future. Polled where a
//! write polls its other futures (usually the thread of a `block_on`), that hash held up
//! everything else the write had in flight: measured on the write benchmark's 256 MiB write
//! to a local S3 server on 2 cores, the shard encoders sat idle for about half the call
//! while the polling thread hashed 127 MB (57 ms of CPU) one body at a time. As a task on a
//! multi-threaded runtime, a PUT is hashed and sent by a worker while the write goes on.
//!
//! The task is aborted when the caller's future is dropped, so a cancelled write abandons
//! its request exactly as it would have without the task: no PUT lands after its caller
//! gave up on it. Outside a runtime, or on a current-thread one (where a task would run on
//! the same thread anyway), the future is awaited in place.

use std::future::Future;

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::{JoinError, JoinHandle};

/// Aborts its task when dropped.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `fut` as a task of the current multi-threaded tokio runtime and waits for it, or
/// awaits it in place where there is no such runtime. `Err` only when the runtime cancelled
/// the task (it is shutting down); a panic in the task resumes in the caller.
pub(crate) async fn on_runtime<F>(fut: F) -> Result<F::Output, JoinError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            let mut task = AbortOnDrop(handle.spawn(fut));
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
    use std::time::Duration;

    #[test]
    fn a_future_runs_on_a_worker_of_a_multi_threaded_runtime() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("spawned-test-worker")
            .build()
            .unwrap();
        let name = rt
            .block_on(on_runtime(async {
                std::thread::current().name().map(str::to_string)
            }))
            .unwrap();
        assert_eq!(name.as_deref(), Some("spawned-test-worker"));
    }

    #[test]
    fn outside_a_runtime_or_on_a_current_thread_one_it_runs_in_place() {
        let here = std::thread::current().id();
        let id = futures::executor::block_on(on_runtime(async { std::thread::current().id() }));
        assert_eq!(id.unwrap(), here);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let id = rt
            .block_on(on_runtime(async { std::thread::current().id() }))
            .unwrap();
        assert_eq!(id, here);
    }

    #[test]
    fn dropping_the_caller_aborts_the_task() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap();
        let finished = Arc::new(AtomicBool::new(false));
        let f = finished.clone();
        rt.block_on(async {
            let call = on_runtime(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                f.store(true, Ordering::SeqCst);
            });
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
    }

    #[test]
    fn a_panic_in_the_task_resumes_in_the_caller() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(on_runtime(async { panic!("in the task") }))
        }));
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"in the task"));
    }
}
