//! `zarrflow._zarrflow.RawArray`: an opened array, read into and written from NumPy
//! buffers. The Python class `zarrflow.Array` wraps it.

use std::sync::Mutex;

use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use zarrflow::{Array, ArrayView, DataType, Store, StoreKey};

use crate::batch::RawBatch;
use crate::errors;
use crate::options::Options;
use crate::runtime::{guarded, run};
use crate::selection::{KeyMode, select};

/// An opened array and how to open it again (in a forked child, or after unpickling).
#[pyclass(frozen, module = "zarrflow._zarrflow")]
pub struct RawArray {
    url: String,
    options: Options,
    /// The handle and the process that opened it: a child of `fork` re-opens (its parent's
    /// store clients belong to the parent's runtime).
    handle: Mutex<(u32, Array)>,
}

impl RawArray {
    /// Wraps an array opened (or created) at `url` with `options`.
    pub fn new(url: String, options: Options, array: Array) -> RawArray {
        RawArray {
            url,
            options,
            handle: Mutex::new((std::process::id(), array)),
        }
    }

    /// Opens the array at `url`.
    pub fn open(py: Python<'_>, url: &str, options: Options) -> PyResult<RawArray> {
        let array = open_array(py, url, &options)?;
        Ok(RawArray::new(url.to_string(), options, array))
    }

    /// This process's handle (re-opened after a `fork`).
    pub fn array(&self, py: Python<'_>) -> PyResult<Array> {
        let pid = std::process::id();
        {
            let handle = self.lock();
            if handle.0 == pid {
                return Ok(handle.1.clone());
            }
        }
        let array = open_array(py, &self.url, &self.options)?;
        *self.lock() = (pid, array.clone());
        Ok(array)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u32, Array)> {
        self.handle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn view_of(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        mode: &str,
    ) -> PyResult<(Array, ArrayView)> {
        let array = self.array(py)?;
        let mode = KeyMode::parse(py, mode)?;
        let view = select(py, &array.view(), key, mode)?;
        Ok((array, view))
    }
}

/// Opens the array at the root of the store at `url`.
fn open_array(py: Python<'_>, url: &str, options: &Options) -> PyResult<Array> {
    let store =
        Store::open(url, options.store.clone()).map_err(|e| errors::to_py(py, &e.into()))?;
    let array_options = options.array.clone();
    run(py, async move {
        Array::open_in(&store, &StoreKey::root(), array_options).await
    })
}

/// Reads `view` into a new NumPy array of `dtype` (the array's, given by the caller): the
/// library writes straight into the NumPy array's memory, seen as bytes.
pub fn read_view<'py>(
    py: Python<'py>,
    view: &ArrayView,
    dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if view.array().data_type().is_variable_length() {
        return read_vlen_view(py, view);
    }
    let numpy = py.import("numpy")?;
    let shape = PyTuple::new(py, view.shape())?;
    let out = numpy.call_method1("empty", (shape, dtype))?;
    fill(py, view, &out)?;
    Ok(out)
}

/// Reads `view` into `out`, a NumPy array the caller gives: it must be an `ndarray` (or a
/// subclass, such as `numpy.memmap`) of the selection's shape and of `dtype` (the array's,
/// given by the caller), C-contiguous and writable, and no other zarrflow call may be using
/// it; each is checked before anything is read (`InvalidValueError`). Only fixed-size data
/// types.
fn read_view_into(
    py: Python<'_>,
    view: &ArrayView,
    dtype: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let data_type = view.array().data_type();
    if data_type.is_variable_length() {
        return Err(errors::value_error(
            py,
            &format!("out= takes fixed-size data; this array's data type is {data_type}"),
        ));
    }
    let numpy = py.import("numpy")?;
    if !out.is_instance(&numpy.getattr("ndarray")?)? {
        return Err(errors::value_error(
            py,
            &format!(
                "out must be a numpy.ndarray, not {}",
                out.get_type().name()?
            ),
        ));
    }
    let out_dtype = out.getattr("dtype")?;
    if !out_dtype.eq(dtype)? {
        return Err(errors::value_error(
            py,
            &format!(
                "out has dtype {}, the array's is {}",
                out_dtype.str()?,
                dtype.str()?
            ),
        ));
    }
    let shape: Vec<u64> = out.getattr("shape")?.extract()?;
    if shape != view.shape() {
        return Err(errors::value_error(
            py,
            &format!(
                "out has shape {:?}, the selection's is {:?}",
                shape,
                view.shape()
            ),
        ));
    }
    let flags = out.getattr("flags")?;
    if !flags.getattr("c_contiguous")?.extract::<bool>()? {
        return Err(errors::value_error(py, "out must be C-contiguous"));
    }
    if !flags.getattr("writeable")?.extract::<bool>()? {
        return Err(errors::value_error(py, "out is read-only"));
    }
    fill(py, view, out)
}

/// Reads `view` into `out`, a C-contiguous NumPy array of its shape and data type, seen as
/// bytes; bool values other than 0 and 1 in the stored data are an error (and are stored
/// in `out` as `True`, so that it holds valid bools).
fn fill(py: Python<'_>, view: &ArrayView, out: &Bound<'_, PyAny>) -> PyResult<()> {
    let numpy = py.import("numpy")?;
    let ndarray = numpy.getattr("ndarray")?;
    // a base-class view first: a subclass's own reshape or view (np.matrix, chararray)
    // could copy or refuse; a C-contiguous ndarray reshapes and views as bytes in place
    let base = ndarray.call_method1("view", (out, &ndarray))?;
    let base_data: usize = base
        .getattr("__array_interface__")?
        .get_item("data")?
        .get_item(0)?
        .extract()?;
    let flat = base
        .call_method1("reshape", (-1,))?
        .call_method1("view", (numpy.getattr("uint8")?,))?
        .cast_into::<PyArray1<u8>>()
        .map_err(PyErr::from)?;
    if flat.len() > 0 && flat.data() as usize != base_data {
        return Err(errors::raise(
            py,
            "InternalError",
            "the bytes view of the output array is not its memory",
            None,
        ));
    }
    let mut writable = flat.try_readwrite().map_err(|e| in_use(py, "out", e))?;
    let bytes = writable
        .as_slice_mut()
        .map_err(|e| errors::raise(py, "InternalError", &e.to_string(), None))?;
    run(py, view.read_bytes_into(bytes))?;
    if view.array().data_type() == DataType::Bool && bytes.iter().any(|&b| b > 1) {
        for b in bytes.iter_mut() {
            *b = (*b != 0) as u8;
        }
        return Err(errors::raise(
            py,
            "CorruptDataError",
            "a bool value byte other than 0 or 1 in the stored data",
            Some(&view.array().url()),
        ));
    }
    Ok(())
}

/// The error for a NumPy array that another zarrflow call is reading into (`out=`), found
/// by the numpy crate's borrow tracking.
pub fn in_use(py: Python<'_>, what: &str, error: numpy::BorrowError) -> PyErr {
    errors::value_error(
        py,
        &format!("{what} is in use by another zarrflow call reading into it ({error})"),
    )
}

/// Reads `view` of a `string` or `bytes` array into a new NumPy object array of `str` or
/// `bytes` (the Python layer turns strings into NumPy's `StringDType`, as zarr-python 3
/// returns them).
fn read_vlen_view<'py>(py: Python<'py>, view: &ArrayView) -> PyResult<Bound<'py, PyAny>> {
    let numpy = py.import("numpy")?;
    let shape = PyTuple::new(py, view.shape())?;
    let items: Vec<Bound<'py, PyAny>> = match view.array().data_type() {
        DataType::String => run(py, view.read_vlen::<String>())?
            .iter()
            .map(|s| pyo3::types::PyString::new(py, s).into_any())
            .collect(),
        _ => run(py, view.read_vlen::<Vec<u8>>())?
            .iter()
            .map(|b| PyBytes::new(py, b).into_any())
            .collect(),
    };
    let n = items.len();
    let flat = numpy.call_method1("empty", (n, "O"))?;
    for (i, item) in items.into_iter().enumerate() {
        flat.set_item(i, item)?;
    }
    flat.call_method1("reshape", (shape,))
}

/// Writes `values` (a NumPy object array of `str` or `bytes`, cast by the Python layer) to
/// `view` of a `string` or `bytes` array.
fn write_vlen_view(py: Python<'_>, view: &ArrayView, values: &Bound<'_, PyAny>) -> PyResult<()> {
    match vlen_values(py, view, values)? {
        VlenValues::Strings(a) => run(py, view.write_vlen(&a)),
        VlenValues::Bytes(a) => run(py, view.write_vlen(&a)),
    }
}

/// The values of a write to a `string` or `bytes` array, as the Rust elements it takes.
pub enum VlenValues {
    /// Of a `string` array.
    Strings(zarrflow::ndarray::ArrayD<String>),
    /// Of a `bytes` array.
    Bytes(zarrflow::ndarray::ArrayD<Vec<u8>>),
}

/// `values` (a NumPy array the Python layer cast to the view's array's data type) as the
/// elements of a write to `view`, a view of a `string` or `bytes` array.
pub fn vlen_values(
    py: Python<'_>,
    view: &ArrayView,
    values: &Bound<'_, PyAny>,
) -> PyResult<VlenValues> {
    let shape: Vec<usize> = values.getattr("shape")?.extract()?;
    let flat = values
        .call_method1("reshape", (-1,))?
        .call_method0("tolist")?;
    let shape = ndarray_shape(&shape);
    let internal =
        |e: zarrflow::ndarray::ShapeError| errors::raise(py, "InternalError", &e.to_string(), None);
    Ok(match view.array().data_type() {
        DataType::String => {
            let v: Vec<String> = flat.extract()?;
            VlenValues::Strings(
                zarrflow::ndarray::ArrayD::from_shape_vec(shape, v).map_err(internal)?,
            )
        }
        _ => {
            let v: Vec<Vec<u8>> = flat
                .try_iter()?
                .map(|b| b.and_then(|b| Ok(b.cast_into::<PyBytes>()?.as_bytes().to_vec())))
                .collect::<PyResult<_>>()?;
            VlenValues::Bytes(
                zarrflow::ndarray::ArrayD::from_shape_vec(shape, v).map_err(internal)?,
            )
        }
    })
}

fn ndarray_shape(shape: &[usize]) -> zarrflow::ndarray::IxDyn {
    zarrflow::ndarray::IxDyn(shape)
}

/// The C-order bytes and shape of `values`, a C-contiguous NumPy array of the array's data
/// type (the Python layer casts and broadcasts-checks it first), without a copy.
pub fn value_bytes<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyArray1<u8>>, Vec<u64>)> {
    let numpy = py.import("numpy")?;
    let shape: Vec<u64> = values.getattr("shape")?.extract()?;
    let flat = numpy
        .call_method1("ascontiguousarray", (values,))?
        .call_method1("reshape", (-1,))?
        .call_method1("view", (numpy.getattr("uint8")?,))?
        .cast_into::<PyArray1<u8>>()
        .map_err(PyErr::from)?;
    Ok((flat, shape))
}

#[pymethods]
impl RawArray {
    /// The URL the array was opened at.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    /// The array's shape.
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<Vec<u64>> {
        Ok(self.array(py)?.shape().to_vec())
    }

    /// The Zarr data type name (`"float32"`, `"r16"`, ...).
    #[getter]
    fn data_type(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.array(py)?.data_type().to_string())
    }

    /// The shard shape, or `None` when unsharded.
    #[getter]
    fn shard_shape(&self, py: Python<'_>) -> PyResult<Option<Vec<u64>>> {
        Ok(self.array(py)?.shard_shape().map(<[u64]>::to_vec))
    }

    /// The read chunk shape: inner chunks when sharded, else the chunk shape (`None` for a
    /// rectilinear grid without sharding).
    #[getter]
    fn chunk_shape(&self, py: Python<'_>) -> PyResult<Option<Vec<u64>>> {
        Ok(self.array(py)?.chunk_shape().map(<[u64]>::to_vec))
    }

    /// The shape of the outer grid's chunks (shards when sharded), `None` when rectilinear.
    #[getter]
    fn outer_chunk_shape(&self, py: Python<'_>) -> PyResult<Option<Vec<u64>>> {
        Ok(self
            .array(py)?
            .metadata()
            .shard_or_chunk_shape()
            .map(<[u64]>::to_vec))
    }

    /// The number of outer chunks (shards when sharded) along each dimension: zarr-python's
    /// blocks.
    #[getter]
    fn outer_grid_shape(&self, py: Python<'_>) -> PyResult<Vec<u64>> {
        let array = self.array(py)?;
        Ok(array.chunk_grid().grid_shape(array.shape()))
    }

    /// `(start, stop)` of outer chunks (shards when sharded) `first..=last` along dimension
    /// `dim`: where block `first` starts and block `last` ends, clipped to the array's
    /// extent (an `InvalidValueError` for a dimension or a block out of range, or
    /// `first > last`).
    fn outer_block_span(
        &self,
        py: Python<'_>,
        dim: usize,
        first: u64,
        last: u64,
    ) -> PyResult<(u64, u64)> {
        let array = self.array(py)?;
        let shape = array.shape();
        let counts = array.chunk_grid().grid_shape(shape);
        if dim >= shape.len() || first > last || last >= counts[dim] {
            return Err(errors::value_error(
                py,
                &format!("no blocks {first}..={last} along dimension {dim} (blocks: {counts:?})"),
            ));
        }
        let span = array.dimension_grid(dim).and_then(|grid| {
            let start = grid.chunk_offset(i64::try_from(first).ok()?).ok()?;
            let stop = grid.data_end(i64::try_from(last).ok()?).ok()?;
            Some((u64::try_from(start).ok()?, u64::try_from(stop).ok()?))
        });
        span.ok_or_else(|| {
            errors::value_error(
                py,
                &format!("blocks {first}..={last} along dimension {dim} are out of range"),
            )
        })
    }

    /// The fill value's native-endian bytes.
    #[getter]
    fn fill_value_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.array(py)?.fill_value_bytes()))
    }

    /// The attributes as a JSON document.
    #[getter]
    fn attributes_json(&self, py: Python<'_>) -> PyResult<String> {
        zarrflow::serde_json::to_string(self.array(py)?.attributes())
            .map_err(|e| errors::raise(py, "InternalError", &e.to_string(), None))
    }

    /// One name (or `None`) per dimension, or `None` when the metadata has none.
    #[getter]
    fn dimension_names(&self, py: Python<'_>) -> PyResult<Option<Vec<Option<String>>>> {
        Ok(self.array(py)?.dimension_names().map(<[_]>::to_vec))
    }

    /// The canonical codec chain as a JSON list.
    #[getter]
    fn codecs_json(&self, py: Python<'_>) -> PyResult<String> {
        let codecs: Vec<_> = self
            .array(py)?
            .codecs()
            .iter()
            .map(|c| c.to_value())
            .collect();
        Ok(zarrflow::serde_json::Value::Array(codecs).to_string())
    }

    /// Whether the store was opened read-only.
    #[getter]
    fn read_only(&self) -> bool {
        self.options.store.read_only
    }

    /// Reads `key` in `mode` (`"numpy"`, `"oindex"`, `"vindex"`) into a new NumPy array of
    /// `dtype`.
    fn read<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        mode: &str,
        dtype: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guarded(py, || {
            let (_, view) = self.view_of(py, key, mode)?;
            read_view(py, &view, dtype)
        })
    }

    /// Reads `key` in `mode` into `out`, a writable C-contiguous NumPy array of the
    /// selection's shape and of `dtype` (the array's), checked before anything is read.
    fn read_into<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        mode: &str,
        dtype: &Bound<'py, PyAny>,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        guarded(py, || {
            let (_, view) = self.view_of(py, key, mode)?;
            read_view_into(py, &view, dtype, out)
        })
    }

    /// The shape `key` selects in `mode` (no I/O).
    fn selection_shape(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        mode: &str,
    ) -> PyResult<Vec<u64>> {
        guarded(py, || Ok(self.view_of(py, key, mode)?.1.shape()))
    }

    /// Writes `values` (a NumPy array of the array's data type) to `key` in `mode`,
    /// broadcast NumPy-style.
    fn write(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        mode: &str,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guarded(py, || {
            let (_, view) = self.view_of(py, key, mode)?;
            if view.array().data_type().is_variable_length() {
                return write_vlen_view(py, &view, values);
            }
            let (flat, shape) = value_bytes(py, values)?;
            let readonly = flat
                .try_readonly()
                .map_err(|e| in_use(py, "the values", e))?;
            let bytes = readonly
                .as_slice()
                .map_err(|e| errors::raise(py, "InternalError", &e.to_string(), None))?;
            run(py, view.write_bytes(bytes, &shape))
        })
    }

    /// Replaces the attributes with a JSON object and writes the metadata (conditionally on
    /// the version this handle read).
    fn set_attributes_json(&self, py: Python<'_>, json: &str) -> PyResult<()> {
        let attributes: zarrflow::serde_json::Map<String, zarrflow::serde_json::Value> =
            zarrflow::serde_json::from_str(json)
                .map_err(|e| errors::value_error(py, &format!("attributes: {e}")))?;
        let mut array = self.array(py)?;
        let updated = run(py, async move {
            array
                .update_attributes(|a| *a = attributes)
                .await
                .map(|()| array)
        })?;
        *self.lock() = (std::process::id(), updated);
        Ok(())
    }

    /// A batch of writes to this array.
    fn batch(&self, py: Python<'_>) -> PyResult<RawBatch> {
        Ok(RawBatch::new(self.array(py)?))
    }
}
