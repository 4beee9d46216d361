//! `zarrflow._zarrflow`: the Rust core of the `zarrflow` Python module (PyO3).
//!
//! The Python package (`python/zarrflow/`) wraps these raw classes in `zarrflow.Array`,
//! `zarrflow.Group` and `zarrflow.Batch`; this layer opens and creates nodes, turns Python
//! keys into library selections ([`selection`]), reads into and writes from NumPy buffers
//! ([`array`]) on the process's runtime with the GIL released ([`runtime`]), and maps
//! library errors to the exceptions of `zarrflow/_errors.py` ([`errors`]).

mod array;
mod batch;
mod errors;
mod nodes;
mod options;
mod runtime;
mod selection;

use pyo3::prelude::*;

/// The Rust core of `zarrflow`.
#[pymodule]
fn _zarrflow(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<array::RawArray>()?;
    module.add_class::<batch::RawBatch>()?;
    module.add_class::<nodes::RawGroup>()?;
    module.add_function(wrap_pyfunction!(nodes::open_node, module)?)?;
    module.add_function(wrap_pyfunction!(nodes::create_array, module)?)?;
    module.add_function(wrap_pyfunction!(nodes::create_group, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_for_tests, module)?)?;
    Ok(())
}

/// Panics on purpose, on the calling thread or inside the runtime (`in_runtime`): the
/// tests check that a panic arrives as `zarrflow.InternalError` and the module still works.
#[pyfunction]
#[pyo3(signature = (in_runtime=false))]
fn _panic_for_tests(py: Python<'_>, in_runtime: bool) -> PyResult<()> {
    if in_runtime {
        runtime::run(py, async { panic!("a test panic inside the runtime") })
    } else {
        runtime::guarded(py, || panic!("a test panic"))
    }
}
