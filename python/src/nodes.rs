//! Opening and creating nodes by URL, and `zarrflow._zarrflow.RawGroup`.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use zarrflow::hierarchy::{Group, Node, NodeKind, open_node_with_limit};
use zarrflow::metadata::ArraySpec;
use zarrflow::serde_json::{Map, Value};
use zarrflow::{Array, ArrayError, CodecSpec, Store, StoreKey};

use crate::array::RawArray;
use crate::errors;
use crate::options::Options;
use crate::runtime::run;

/// An opened group and how to open it again.
#[pyclass(frozen, module = "zarrflow._zarrflow")]
pub struct RawGroup {
    url: String,
    store: Store,
    handle: Mutex<Group>,
}

fn store_at(py: Python<'_>, url: &str, options: &Options) -> PyResult<Store> {
    Store::open(url, options.store.clone()).map_err(|e| errors::to_py(py, &e.into()))
}

fn attributes_of(py: Python<'_>, json: Option<&str>) -> PyResult<Map<String, Value>> {
    match json {
        None => Ok(Map::new()),
        Some(text) => zarrflow::serde_json::from_str(text)
            .map_err(|e| errors::value_error(py, &format!("attributes: {e}"))),
    }
}

/// Opens the node at `url`: `("array", RawArray)` or `("group", RawGroup)`.
#[pyfunction]
#[pyo3(signature = (url, read_only, **kwargs))]
pub fn open_node(
    py: Python<'_>,
    url: &str,
    read_only: bool,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<(String, Py<PyAny>)> {
    let options = Options::from_kwargs(py, kwargs, read_only)?;
    let store = store_at(py, url, &options)?;
    let limit = options.array.max_metadata_bytes();
    let opened = {
        let store = store.clone();
        run(py, async move {
            open_node_with_limit(&store, &StoreKey::root(), limit)
                .await
                .map_err(ArrayError::from)
        })?
    };
    match opened {
        Node::Array(node) => {
            let array =
                Array::from_node(node, options.array.clone()).map_err(|e| errors::to_py(py, &e))?;
            let raw = RawArray::new(url.to_string(), options, array);
            Ok(("array".into(), Py::new(py, raw)?.into_any()))
        }
        Node::Group(group) => {
            let raw = RawGroup {
                url: url.to_string(),
                store,
                handle: Mutex::new(group),
            };
            Ok(("group".into(), Py::new(py, raw)?.into_any()))
        }
    }
}

/// Creates a group at `url` (replacing what is there with `overwrite`).
#[pyfunction]
#[pyo3(signature = (url, attributes_json=None, overwrite=false, **kwargs))]
pub fn create_group(
    py: Python<'_>,
    url: &str,
    attributes_json: Option<&str>,
    overwrite: bool,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<RawGroup> {
    let options = Options::from_kwargs(py, kwargs, false)?;
    let store = store_at(py, url, &options)?;
    let attributes = attributes_of(py, attributes_json)?;
    let group = {
        let store = store.clone();
        run(py, async move {
            Group::create(&store, &StoreKey::root(), attributes, overwrite)
                .await
                .map_err(ArrayError::from)
        })?
    };
    Ok(RawGroup {
        url: url.to_string(),
        store,
        handle: Mutex::new(group),
    })
}

/// Creates an array at `url`. `chunks` is the inner chunk shape when `shards` is given,
/// else the chunk shape (the whole array when neither is); `codec` is `zstd[:LEVEL]`,
/// `gzip[:LEVEL]`, `blosc[:CNAME[:LEVEL]]` or `none`; `filters_json` a JSON list of Zarr v3
/// codec objects (array→array codecs) put before `bytes`; `fill_value` the value's
/// native-endian bytes.
#[pyfunction]
#[pyo3(signature = (url, shape, data_type, chunks=None, shards=None, codec="zstd",
    fill_value=None, dimension_names=None, attributes_json=None, overwrite=false,
    filters_json=None, **kwargs))]
#[allow(clippy::too_many_arguments)]
pub fn create_array(
    py: Python<'_>,
    url: &str,
    shape: Vec<u64>,
    data_type: &str,
    chunks: Option<Vec<u64>>,
    shards: Option<Vec<u64>>,
    codec: &str,
    fill_value: Option<Vec<u8>>,
    dimension_names: Option<Vec<Option<String>>>,
    attributes_json: Option<&str>,
    overwrite: bool,
    filters_json: Option<&str>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<RawArray> {
    let options = Options::from_kwargs(py, kwargs, false)?;
    let mut spec = ArraySpec::new(shape, data_type);
    match (shards, chunks) {
        (Some(shards), chunks) => {
            let inner = chunks.unwrap_or_else(|| shards.clone());
            spec = spec.shard_shape(shards).inner_chunk_shape(inner);
        }
        (None, Some(chunks)) => spec = spec.shard_shape(chunks),
        (None, None) => {}
    }
    if spec.dtype().is_none() {
        return Err(errors::value_error(
            py,
            &format!("unknown data type {data_type:?}"),
        ));
    }
    let mut codecs = filters_of(py, filters_json)?;
    codecs.extend(codecs_of(py, codec)?);
    spec = spec.codecs(codecs);
    if let Some(bytes) = fill_value {
        spec = spec
            .fill_value_bytes(&bytes)
            .map_err(|e| errors::to_py(py, &e.into()))?;
    }
    if let Some(names) = dimension_names {
        spec = spec.dimension_names(names);
    }
    spec = spec.attributes(attributes_of(py, attributes_json)?);
    let store = store_at(py, url, &options)?;
    let array_options = options.array.clone();
    let array = run(py, async move {
        let root = StoreKey::root();
        if overwrite {
            Array::create_overwrite(&store, &root, &spec, array_options).await
        } else {
            Array::create(&store, &root, &spec, array_options).await
        }
    })?;
    Ok(RawArray::new(url.to_string(), options, array))
}

/// The codecs of `filters_json`: a JSON list of Zarr v3 codec objects (`{"name": ...,
/// "configuration": {...}}`), checked when the array is created.
fn filters_of(py: Python<'_>, filters_json: Option<&str>) -> PyResult<Vec<CodecSpec>> {
    let Some(text) = filters_json else {
        return Ok(Vec::new());
    };
    let bad = |why: String| errors::value_error(py, &format!("filters: {why}"));
    let list: Vec<zarrflow::serde_json::Value> =
        zarrflow::serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    list.into_iter()
        .map(|f| {
            let name = f
                .get("name")
                .and_then(|n| n.as_str())
                .ok_or_else(|| bad(format!("{f} has no codec name")))?;
            let configuration = f
                .get("configuration")
                .cloned()
                .unwrap_or(zarrflow::serde_json::Value::Object(Default::default()));
            Ok(CodecSpec::new(name, configuration))
        })
        .collect()
}

/// The blosc compressors.
const BLOSC_CNAMES: [&str; 5] = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"];

/// The (inner) chunk codecs of a codec name: `bytes`, then the compressor (the CLI's
/// `--codec` forms).
fn codecs_of(py: Python<'_>, text: &str) -> PyResult<Vec<CodecSpec>> {
    let bad = |why: &str| {
        errors::value_error(
            py,
            &format!(
                "codec {text:?}: {why} (zstd[:LEVEL], gzip[:LEVEL], zlib[:LEVEL], bz2[:LEVEL], \
                 lz4[:ACCELERATION], lzma[:PRESET], blosc[:CNAME[:LEVEL]] or none)"
            ),
        )
    };
    // a setting (`what`: level, acceleration) in lo..=hi, `default` when absent
    let setting = |what: &str, l: Option<&&str>, lo: i64, hi: i64, default: i64| match l {
        None => Ok(default),
        Some(l) => l
            .parse::<i64>()
            .ok()
            .filter(|v| (lo..=hi).contains(v))
            .ok_or_else(|| bad(&format!("{what} {l:?} is not an integer in {lo}..={hi}"))),
    };
    let level =
        |l: Option<&&str>, lo: i64, hi: i64, default: i64| setting("level", l, lo, hi, default);
    let parts: Vec<&str> = text.trim().split(':').collect();
    let compressor = match parts.as_slice() {
        ["none"] => None,
        ["zstd", rest @ ..] if rest.len() <= 1 => {
            Some(CodecSpec::zstd(level(rest.first(), -131072, 22, 0)? as i32))
        }
        ["gzip", rest @ ..] if rest.len() <= 1 => {
            Some(CodecSpec::gzip(level(rest.first(), 0, 9, 5)? as u32))
        }
        // numcodecs' Zlib, BZ2 and LZ4, named as zarr-python 3 writes them (as the CLI's
        // `--codec`)
        ["zlib", rest @ ..] if rest.len() <= 1 => Some(CodecSpec::new(
            "numcodecs.zlib",
            zarrflow::serde_json::json!({ "level": level(rest.first(), 0, 9, 5)? }),
        )),
        ["bz2", rest @ ..] if rest.len() <= 1 => Some(CodecSpec::new(
            "numcodecs.bz2",
            zarrflow::serde_json::json!({ "level": level(rest.first(), 1, 9, 9)? }),
        )),
        ["lz4", rest @ ..] if rest.len() <= 1 => Some(CodecSpec::new(
            "numcodecs.lz4",
            zarrflow::serde_json::json!({
                "acceleration": setting("acceleration", rest.first(), 1, 65537, 1)?
            }),
        )),
        ["lzma", rest @ ..] if rest.len() <= 1 => Some(CodecSpec::new(
            "numcodecs.lzma",
            zarrflow::serde_json::json!({
                "preset": setting("preset", rest.first(), 0, 9, 6)?
            }),
        )),
        ["blosc", rest @ ..] if rest.len() <= 2 => {
            let name = rest.first().copied().unwrap_or("zstd");
            let cname = BLOSC_CNAMES
                .into_iter()
                .find(|c| *c == name)
                .ok_or_else(|| bad(&format!("unknown blosc compressor {name:?}")))?;
            // its type size and shuffle are set from the elements it sees (after the
            // filters), as zarr-python sets them
            Some(CodecSpec::blosc_per_array(
                cname,
                level(rest.get(1), 0, 9, 5)? as u32,
            ))
        }
        _ => return Err(bad("unknown codec")),
    };
    Ok(std::iter::once(CodecSpec::bytes())
        .chain(compressor)
        .collect())
}

impl RawGroup {
    fn group(&self) -> Group {
        self.handle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[pymethods]
impl RawGroup {
    /// The URL the group was opened at.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    /// The attributes as a JSON document.
    #[getter]
    fn attributes_json(&self, py: Python<'_>) -> PyResult<String> {
        zarrflow::serde_json::to_string(self.group().attributes())
            .map_err(|e| errors::raise(py, "InternalError", &e.to_string(), None))
    }

    /// The children: `(name, "array" | "group")`, sorted by name.
    fn children(&self, py: Python<'_>) -> PyResult<Vec<(String, &'static str)>> {
        let group = self.group();
        let mut children = run(py, async move {
            group.children().await.map_err(ArrayError::from)
        })?;
        children.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(children
            .into_iter()
            .map(|(name, kind)| {
                let kind = match kind {
                    NodeKind::Array => "array",
                    NodeKind::Group => "group",
                };
                (name, kind)
            })
            .collect())
    }

    /// The URL of the child `name` (a valid node name).
    fn child_url(&self, py: Python<'_>, name: &str) -> PyResult<String> {
        zarrflow::hierarchy::validate_name(name)
            .and_then(|()| StoreKey::new(name).map_err(Into::into))
            .map(|key| self.store.url_of(&key))
            .map_err(|e| errors::to_py(py, &e.into()))
    }

    /// Replaces the attributes with a JSON object and writes the metadata.
    fn set_attributes_json(&self, py: Python<'_>, json: &str) -> PyResult<()> {
        let attributes = attributes_of(py, Some(json))?;
        let mut group = self.group();
        let updated = run(py, async move {
            group
                .update_attributes(|a| *a = attributes)
                .await
                .map(|()| group)
                .map_err(ArrayError::from)
        })?;
        *self.handle.lock().unwrap_or_else(|p| p.into_inner()) = updated;
        Ok(())
    }
}
