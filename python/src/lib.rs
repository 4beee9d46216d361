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
    Ok(())
}
