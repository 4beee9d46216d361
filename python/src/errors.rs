//! Library errors as Python exceptions.
//!
//! The exception classes live in `zarrflow/_errors.py` (so that they can derive from two
//! built-in classes, e.g. `NodeNotFoundError(ZarrflowError, FileNotFoundError)`); each is
//! built as `Class(message, url)`. The message is the error with its sources, as the CLI
//! prints it.

use std::any::Any;

use pyo3::prelude::*;
use zarrflow::ArrayError;
use zarrflow::hierarchy::HierarchyError;
use zarrflow::store::StoreError;

/// The Python module holding the exception classes.
const ERRORS_MODULE: &str = "zarrflow._errors";

/// A zarrflow exception of class `class` (a name in `zarrflow._errors`).
pub fn raise(py: Python<'_>, class: &str, message: &str, url: Option<&str>) -> PyErr {
    let built = py
        .import(ERRORS_MODULE)
        .and_then(|module| module.getattr(class))
        .and_then(|class| class.call1((message, url)));
    match built {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// A `zarrflow.SelectionError` (a `ValueError`): a key that is not a selection.
pub fn selection_error(py: Python<'_>, message: &str) -> PyErr {
    raise(py, "SelectionError", message, None)
}

/// A `zarrflow.InvalidValueError` (a `ValueError`): a bad argument or value.
pub fn value_error(py: Python<'_>, message: &str) -> PyErr {
    raise(py, "InvalidValueError", message, None)
}

/// The exception for a library error.
pub fn to_py(py: Python<'_>, error: &ArrayError) -> PyErr {
    let (class, url) = classify(error);
    raise(py, class, &chain(error), url.as_deref())
}

/// A Rust panic as `zarrflow.InternalError`.
pub fn panicked(py: Python<'_>, payload: &(dyn Any + Send)) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    raise(
        py,
        "InternalError",
        &format!("internal error (a panic in zarrflow, please report it): {what}"),
        None,
    )
}

/// The error's message followed by those of its sources that add something.
fn chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = e.source();
    }
    message
}

/// The exception class for an error, and the URL it concerns when it names one.
fn classify(error: &ArrayError) -> (&'static str, Option<String>) {
    if error.is_out_of_bounds() {
        return ("OutOfBoundsError", None);
    }
    match error {
        ArrayError::Index(_) | ArrayError::Json(_) | ArrayError::Plan(_) => {
            ("SelectionError", None)
        }
        ArrayError::DataTypeMismatch { .. } | ArrayError::ShapeMismatch(_) => {
            ("InvalidValueError", None)
        }
        ArrayError::TooLarge(_) => ("SelectionTooLargeError", None),
        ArrayError::Store(e) => classify_store(e),
        ArrayError::Hierarchy(e) => classify_hierarchy(e),
        ArrayError::Codec(_) => ("CorruptDataError", None),
        ArrayError::InvalidData { key, .. } => ("CorruptDataError", Some(key.clone())),
        ArrayError::Metadata(_) | ArrayError::Unsupported(_) | ArrayError::Grid { .. } => {
            ("MetadataError", None)
        }
        _ => ("InternalError", None),
    }
}

fn classify_hierarchy(error: &HierarchyError) -> (&'static str, Option<String>) {
    match error {
        HierarchyError::NotFound { url } | HierarchyError::NoNode { url, .. } => {
            ("NodeNotFoundError", Some(url.clone()))
        }
        // zarr.json beside .zarray / .zgroup: metadata that cannot be read as one node
        HierarchyError::MixedFormats { .. } => ("MetadataError", None),
        HierarchyError::AlreadyExists { url } | HierarchyError::NotEmpty { url } => {
            ("NodeExistsError", Some(url.clone()))
        }
        HierarchyError::ConcurrentUpdate { url } => ("ConflictError", Some(url.clone())),
        HierarchyError::WrongNodeType { url, .. } => ("NodeTypeError", Some(url.clone())),
        HierarchyError::InvalidName { .. } => ("InvalidValueError", None),
        HierarchyError::Metadata(_) => ("MetadataError", None),
        HierarchyError::Codec(_) => ("CorruptDataError", None),
        HierarchyError::Store(e) => classify_store(e),
        _ => ("InternalError", None),
    }
}

fn classify_store(error: &StoreError) -> (&'static str, Option<String>) {
    let url = |u: &String| Some(u.clone());
    match error {
        StoreError::NotFound { url: u } => ("NodeNotFoundError", url(u)),
        StoreError::AlreadyExists { url: u } => ("NodeExistsError", url(u)),
        StoreError::Precondition { url: u } => ("ConflictError", url(u)),
        StoreError::ReadOnly { store_url, .. } => ("ReadOnlyError", url(store_url)),
        StoreError::InvalidUrl { url: u, .. } => ("InvalidUrlError", url(u)),
        StoreError::InvalidKey { .. } => ("InvalidUrlError", None),
        StoreError::Unsupported { store_url, .. } => ("StoreError", url(store_url)),
        StoreError::InvalidRange { url: u, .. }
        | StoreError::ShortRead { url: u, .. }
        | StoreError::TooLarge { url: u, .. }
        | StoreError::LongRead { url: u, .. }
        | StoreError::OutOfMemory { url: u, .. }
        | StoreError::NotAFile { url: u, .. }
        | StoreError::Local { url: u, .. }
        | StoreError::Backend { url: u, .. } => ("StoreError", url(u)),
        _ => ("StoreError", None),
    }
}
