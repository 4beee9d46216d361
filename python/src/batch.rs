//! `zarrflow._zarrflow.RawBatch`: staged writes committed together (each shard touched
//! once). The Python class `zarrflow.Batch` wraps it as a context manager.

use std::sync::Mutex;

use numpy::PyArrayMethods;
use pyo3::prelude::*;
use zarrflow::{Array, WriteBatch};

use crate::array::{VlenValues, in_use, value_bytes, vlen_values};
use crate::errors;
use crate::runtime::{guarded, run};
use crate::selection::{KeyMode, select};

/// A write batch of one array; `None` once committed or discarded.
#[pyclass(frozen, module = "zarrflow._zarrflow")]
pub struct RawBatch {
    array: Array,
    batch: Mutex<Option<WriteBatch>>,
}

impl RawBatch {
    /// An empty batch of `array`.
    pub fn new(array: Array) -> RawBatch {
        let batch = array.batch();
        RawBatch {
            array,
            batch: Mutex::new(Some(batch)),
        }
    }

    fn take(&self) -> Option<WriteBatch> {
        self.batch.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

fn finished(py: Python<'_>) -> PyErr {
    errors::value_error(py, "this batch was already committed or discarded")
}

#[pymethods]
impl RawBatch {
    /// Stages `values` (a NumPy array of the array's data type) for `key` in `mode`.
    fn stage(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        mode: &str,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guarded(py, || {
            let view = select(py, &self.array.view(), key, KeyMode::parse(py, mode)?)?;
            if view.array().data_type().is_variable_length() {
                let values = vlen_values(py, &view, values)?;
                let mut slot = self.batch.lock().unwrap_or_else(|p| p.into_inner());
                let batch = slot.as_mut().ok_or_else(|| finished(py))?;
                let staged = match &values {
                    VlenValues::Strings(a) => batch.stage_vlen(&view, a),
                    VlenValues::Bytes(a) => batch.stage_vlen(&view, a),
                };
                return staged.map_err(|e| errors::to_py(py, &e));
            }
            let (flat, shape) = value_bytes(py, values)?;
            let readonly = flat
                .try_readonly()
                .map_err(|e| in_use(py, "the values", e))?;
            let bytes = readonly
                .as_slice()
                .map_err(|e| errors::raise(py, "InternalError", &e.to_string(), None))?;
            let mut slot = self.batch.lock().unwrap_or_else(|p| p.into_inner());
            let batch = slot.as_mut().ok_or_else(|| finished(py))?;
            batch
                .stage_bytes(&view, bytes, &shape)
                .map_err(|e| errors::to_py(py, &e))
        })
    }

    /// Number of staged writes.
    fn __len__(&self) -> usize {
        self.batch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map_or(0, WriteBatch::len)
    }

    /// Applies every staged write, touching each shard once.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let batch = self.take().ok_or_else(|| finished(py))?;
        run(py, batch.commit())
    }

    /// Drops the staged writes (nothing is written).
    fn discard(&self) {
        drop(self.take());
    }
}
