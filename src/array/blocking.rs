//! A blocking facade for code without an async runtime.
//!
//! The calls run on a private multi-threaded tokio runtime created on first use. Calling
//! them from inside a runtime is refused with [`ArrayError::BlockingInAsyncContext`] instead
//! of deadlocking.

use std::future::Future;
use std::sync::OnceLock;

use ndarray::ArrayD;

use super::error::{ArrayError, Result};
use super::{Array, ArrayView, Element};

fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> =
        OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("zarrflow")
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| ArrayError::Task(format!("cannot start the runtime: {e}")))
}

/// Runs a future to completion on the private runtime.
pub fn block_on<F: Future>(future: F) -> Result<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(ArrayError::BlockingInAsyncContext);
    }
    Ok(runtime()?.block_on(future))
}

impl Array {
    /// [`Array::open`] for code without an async runtime.
    pub fn open_blocking(url: &str) -> Result<Array> {
        block_on(Array::open(url))?
    }
}

impl ArrayView {
    /// [`ArrayView::read`] for code without an async runtime.
    pub fn read_blocking<T: Element>(&self) -> Result<ArrayD<T>> {
        block_on(self.read::<T>())?
    }

    /// [`ArrayView::read_bytes`] for code without an async runtime.
    pub fn read_bytes_blocking(&self) -> Result<Vec<u8>> {
        block_on(self.read_bytes())?
    }
}
