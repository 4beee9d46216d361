//! A blocking facade for code without an async runtime.
//!
//! Every async operation of [`Array`], [`ArrayView`] and [`WriteBatch`] has a `_blocking`
//! twin that runs it on a private multi-threaded tokio runtime created on first use.
//! Calling them from inside a runtime is refused with [`ArrayError::BlockingInAsyncContext`]
//! instead of deadlocking.

use std::future::Future;
use std::sync::OnceLock;

use ndarray::{ArrayBase, ArrayD, Data, DataMut, Dimension};

use super::error::{ArrayError, Result};
use super::{Array, ArrayOptions, ArrayView, Element, WriteBatch};
use crate::metadata::ArraySpec;
use crate::store::{Store, StoreKey};

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
        .map_err(|e| ArrayError::Task {
            what: "starting the blocking facade's runtime",
            source: Some(e.clone().into()),
        })
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

    /// [`Array::open_in`] for code without an async runtime.
    pub fn open_in_blocking(
        store: &Store,
        path: &StoreKey,
        options: ArrayOptions,
    ) -> Result<Array> {
        block_on(Array::open_in(store, path, options))?
    }

    /// [`Array::create`] for code without an async runtime.
    pub fn create_blocking(
        store: &Store,
        path: &StoreKey,
        spec: &ArraySpec,
        options: ArrayOptions,
    ) -> Result<Array> {
        block_on(Array::create(store, path, spec, options))?
    }

    /// [`Array::create_overwrite`] for code without an async runtime.
    pub fn create_overwrite_blocking(
        store: &Store,
        path: &StoreKey,
        spec: &ArraySpec,
        options: ArrayOptions,
    ) -> Result<Array> {
        block_on(Array::create_overwrite(store, path, spec, options))?
    }

    /// [`Array::create_at`] for code without an async runtime.
    pub fn create_at_blocking(url: &str, spec: &ArraySpec) -> Result<Array> {
        block_on(Array::create_at(url, spec))?
    }

    /// [`Array::set_attribute`] for code without an async runtime.
    pub fn set_attribute_blocking(
        &mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Result<()> {
        block_on(self.set_attribute(key, value))?
    }
}

impl ArrayView {
    /// [`ArrayView::read`] for code without an async runtime.
    pub fn read_blocking<T: Element>(&self) -> Result<ArrayD<T>> {
        block_on(self.read::<T>())?
    }

    /// [`ArrayView::read_as`] for code without an async runtime.
    pub fn read_as_blocking<T: Element, D: Dimension>(&self) -> Result<ndarray::Array<T, D>> {
        block_on(self.read_as::<T, D>())?
    }

    /// [`ArrayView::read_into`] for code without an async runtime.
    pub fn read_into_blocking<T, S, D>(&self, out: &mut ArrayBase<S, D>) -> Result<()>
    where
        T: Element,
        S: DataMut<Elem = T>,
        D: Dimension,
    {
        block_on(self.read_into(out))?
    }

    /// [`ArrayView::read_bytes`] for code without an async runtime.
    pub fn read_bytes_blocking(&self) -> Result<Vec<u8>> {
        block_on(self.read_bytes())?
    }

    /// [`ArrayView::read_bytes_into`] for code without an async runtime.
    pub fn read_bytes_into_blocking(&self, out: &mut [u8]) -> Result<()> {
        block_on(self.read_bytes_into(out))?
    }

    /// [`ArrayView::explain_read`] for code without an async runtime.
    pub fn explain_read_blocking(&self) -> Result<super::ReadExplain> {
        block_on(self.explain_read())?
    }

    /// [`ArrayView::explain_write`] for code without an async runtime.
    pub fn explain_write_blocking(&self) -> Result<super::WriteExplain> {
        block_on(self.explain_write())?
    }

    /// [`ArrayView::write`] for code without an async runtime.
    pub fn write_blocking<T, S, D>(&self, values: &ArrayBase<S, D>) -> Result<()>
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        block_on(self.write(values))?
    }

    /// [`ArrayView::write_scalar`] for code without an async runtime.
    pub fn write_scalar_blocking<T: Element>(&self, value: T) -> Result<()> {
        block_on(self.write_scalar(value))?
    }

    /// [`ArrayView::write_bytes`] for code without an async runtime.
    pub fn write_bytes_blocking(&self, values: &[u8], shape: &[u64]) -> Result<()> {
        block_on(self.write_bytes(values, shape))?
    }
}

impl WriteBatch {
    /// [`WriteBatch::commit`] for code without an async runtime.
    pub fn commit_blocking(self) -> Result<()> {
        block_on(self.commit())?
    }
}
