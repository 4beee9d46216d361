//! Python indexing keys as library selections, built item by item (never through text).
//!
//! An item is an integer (anything with `__index__`), a slice with any step, `...`,
//! `None` (a new axis), or an index array: a NumPy integer array, a boolean mask, or a
//! list that NumPy turns into one. Index arrays are handed over as `ndarray` arrays.

use numpy::{PyArrayDyn, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PySlice, PyTuple};
use zarrflow::index::{SelectionItem, SelectionMode, Slice};
use zarrflow::{ArrayView, Selection};

use crate::errors;

/// How a key is applied: `a[key]`, `a.oindex[key]`, `a.vindex[key]`.
#[derive(Clone, Copy, Debug)]
pub enum KeyMode {
    /// NumPy indexing: basic without index arrays, NumPy advanced indexing with them.
    Numpy,
    /// Outer indexing: each index array selects along its own dimension.
    Outer,
    /// Vectorized indexing: index arrays broadcast together and select points.
    Vectorized,
}

impl KeyMode {
    /// `"numpy"`, `"oindex"` or `"vindex"`.
    pub fn parse(py: Python<'_>, name: &str) -> PyResult<KeyMode> {
        match name {
            "numpy" => Ok(KeyMode::Numpy),
            "oindex" => Ok(KeyMode::Outer),
            "vindex" => Ok(KeyMode::Vectorized),
            other => Err(errors::value_error(
                py,
                &format!("unknown indexing mode {other:?} (numpy, oindex or vindex)"),
            )),
        }
    }
}

/// The view `key` selects from `view` in `mode`.
pub fn select(
    py: Python<'_>,
    view: &ArrayView,
    key: &Bound<'_, PyAny>,
    mode: KeyMode,
) -> PyResult<ArrayView> {
    let selection = selection_of(py, key)?;
    let mode = match mode {
        KeyMode::Numpy if selection.has_arrays() => SelectionMode::Vectorized,
        KeyMode::Numpy => SelectionMode::Basic,
        KeyMode::Outer => SelectionMode::Outer,
        KeyMode::Vectorized => SelectionMode::Vectorized,
    };
    view.select(&selection, mode, zarrflow::index::Dialect::Positional)
        .map_err(|e| errors::to_py(py, &e))
}

/// The selection of a key: a tuple's items, or the key as its only item.
pub fn selection_of(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Selection> {
    match key.cast::<PyTuple>() {
        Ok(items) => items.iter().map(|item| item_of(py, &item)).collect(),
        Err(_) => Ok(Selection::new(vec![item_of(py, key)?])),
    }
}

fn item_of(py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<SelectionItem> {
    if item.is_none() {
        return Ok(SelectionItem::NewAxis);
    }
    if item.is(py.Ellipsis().bind(py)) {
        return Ok(SelectionItem::Ellipsis);
    }
    if let Ok(slice) = item.cast::<PySlice>() {
        return Ok(SelectionItem::Slice(Slice {
            start: bound_of(py, &slice.getattr("start")?)?,
            stop: bound_of(py, &slice.getattr("stop")?)?,
            step: bound_of(py, &slice.getattr("step")?)?,
        }));
    }
    let numpy = py.import("numpy")?;
    let is_array_like = item.cast::<PyList>().is_ok()
        || item.cast::<PyTuple>().is_ok()
        || item.cast::<PyBool>().is_ok()
        || item.is_instance(&numpy.getattr("ndarray")?)?
        || item.is_instance(&numpy.getattr("bool")?)?;
    if is_array_like {
        return array_item(py, &numpy, item);
    }
    if item.hasattr("__index__")? {
        return Ok(SelectionItem::Index(integer_of(item)?));
    }
    Err(errors::selection_error(
        py,
        &format!(
            "{} is not a valid index: only integers, slices (`:`), ellipsis (`...`), None \
             (numpy.newaxis) and integer or boolean arrays are",
            short_repr(item)
        ),
    ))
}

/// A slice bound or step: `None` or an integer.
fn bound_of(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if value.is_none() {
        return Ok(None);
    }
    if !value.hasattr("__index__")? || value.cast::<PyBool>().is_ok() {
        return Err(errors::selection_error(
            py,
            &format!(
                "slice bounds and steps must be integers or None, not {}",
                short_repr(value)
            ),
        ));
    }
    integer_of(value).map(Some)
}

/// An integer through `__index__`; one beyond `i64` saturates (it is outside every array
/// either way: as an index out of bounds, as a slice bound clamped, as the library does).
fn integer_of(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    let index = value.call_method0("__index__")?;
    match index.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(_) => Ok(if index.lt(0)? { i64::MIN } else { i64::MAX }),
    }
}

/// An index array or mask, through `numpy.asarray`.
fn array_item(
    py: Python<'_>,
    numpy: &Bound<'_, PyModule>,
    item: &Bound<'_, PyAny>,
) -> PyResult<SelectionItem> {
    let array = numpy.call_method1("asarray", (item,)).map_err(|e| {
        errors::selection_error(
            py,
            &format!("{} is not an index array: {e}", short_repr(item)),
        )
    })?;
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let size: usize = array.getattr("size")?.extract()?;
    match kind.as_str() {
        "b" => {
            let mask = array.cast_into::<PyArrayDyn<bool>>().map_err(PyErr::from)?;
            let mask = mask
                .try_readonly()
                .map_err(|e| crate::array::in_use(py, "a boolean mask", e))?;
            Ok(SelectionItem::Mask(mask.as_array().to_owned()))
        }
        "i" | "u" | "f" if kind != "f" || size == 0 => {
            let int64 = numpy.getattr("int64")?;
            let converted = if kind == "u" && dtype.getattr("itemsize")?.extract::<usize>()? == 8 {
                // above i64::MAX: out of bounds anyway; saturate instead of wrapping
                numpy
                    .call_method1("minimum", (&array, i64::MAX as u64))?
                    .call_method1("astype", (&int64,))?
            } else {
                array.call_method1("astype", (&int64,))?
            };
            let indices = converted
                .cast_into::<PyArrayDyn<i64>>()
                .map_err(PyErr::from)?;
            let indices = indices
                .try_readonly()
                .map_err(|e| crate::array::in_use(py, "an index array", e))?;
            Ok(SelectionItem::Array(indices.as_array().to_owned()))
        }
        _ => Err(errors::selection_error(
            py,
            &format!(
                "index arrays must hold integers or booleans, not {} ({})",
                dtype.str()?,
                short_repr(item)
            ),
        )),
    }
}

/// At most 64 characters of an object's `repr`, as the CLI quotes arguments.
fn short_repr(value: &Bound<'_, PyAny>) -> String {
    let text = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<object>".into());
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
