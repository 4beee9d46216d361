//! The metadata layer (pure: no I/O): `zarr.json` for arrays and groups.
//!
//! Reading applies the `must_understand` rule, parses every field into zarrs' metadata types
//! and zarrflow's grid / key-encoding types, and builds the data type, fill value and codec
//! pipeline. Writing is canonical: fixed field order, object form for extension points other
//! than the data type, fill values in TensorStore's canonical form (bit-exact round trip), no
//! library-private attributes.

mod codec_spec;
pub mod consolidated;
mod data_type;
mod error;
mod fill_value;
pub mod fixed_text;
mod grid;
mod info;
pub mod limits;
mod spec;
mod time;
pub mod v2;

pub use codec_spec::CodecSpec;
pub use consolidated::{ConsolidatedNodes, ZMETADATA};
pub use data_type::{DataType, UnknownDataType};
pub use error::MetadataError;
pub use fill_value::has_malformed_hex_string;
pub use grid::{ChunkGridSpec, ChunkKeyEncodingSpec};
pub use info::ArrayInfo;
pub use limits::{DEFAULT_MAX_METADATA_BYTES, MAX_JSON_DEPTH};
pub use spec::{ArraySpec, IntoDimensionName};
pub use time::{
    NAT, TimeScale, TimeUnit, TimeValueError, format_datetime, format_timedelta, parse_datetime,
    parse_timedelta,
};
pub use v2::{ZARRAY, ZATTRS, ZGROUP, ZarrFormat};

use crate::codec::{CodecPipeline, sharding::fixed_size};
use serde_json::{Map, Value};
use zarrs::array::{DataType as ZarrsDataType, FillValue};
use zarrs::metadata::v3::{ArrayMetadataV3, MetadataV3};
use zarrs::metadata::{DimensionName, FillValueMetadata};

/// The name of the metadata document of every node.
pub const ZARR_JSON: &str = "zarr.json";

const ARRAY_FIELDS: &[&str] = &[
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "storage_transformers",
    "dimension_names",
];

/// Metadata of an array or a group.
#[derive(Debug, Clone)]
pub enum NodeMetadata {
    /// An array.
    Array(Box<ArrayMetadata>),
    /// A group.
    Group(GroupMetadata),
}

impl NodeMetadata {
    /// Parse a `zarr.json` document of either node type; `key` names it in errors.
    pub fn parse(json: &[u8], key: &str) -> Result<Self, MetadataError> {
        let obj = parse_object(json, key)?;
        Self::from_map(obj, key)
    }

    fn from_map(obj: Map<String, Value>, key: &str) -> Result<Self, MetadataError> {
        check_format(&obj, key)?;
        match obj.get("node_type").and_then(Value::as_str) {
            Some("array") => Ok(NodeMetadata::Array(Box::new(ArrayMetadata::from_map(
                obj, key,
            )?))),
            Some("group") => Ok(NodeMetadata::Group(GroupMetadata::from_map(obj, key)?)),
            _ => Err(node_type_err(&obj, key, "\"array\" or \"group\"")),
        }
    }

    /// Canonical JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            NodeMetadata::Array(a) => a.to_value(),
            NodeMetadata::Group(g) => g.to_value(),
        }
    }
}

fn parse_object(json: &[u8], key: &str) -> Result<Map<String, Value>, MetadataError> {
    let v: Value = serde_json::from_slice(json).map_err(|e| MetadataError::MalformedJson {
        key: key.to_string(),
        reason: e.to_string(),
    })?;
    match v {
        Value::Object(m) => Ok(m),
        other => Err(MetadataError::MalformedJson {
            key: key.to_string(),
            reason: format!("expected a JSON object, found {}", type_name(&other)),
        }),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn check_format(obj: &Map<String, Value>, key: &str) -> Result<(), MetadataError> {
    check_zarr_format(obj, key, 3)
}

/// The document's `zarr_format` is `expected` (3 for `zarr.json`, 2 for `.zarray` /
/// `.zgroup`), or the error naming what it holds instead.
pub(crate) fn check_zarr_format(
    obj: &Map<String, Value>,
    key: &str,
    expected: u64,
) -> Result<(), MetadataError> {
    match obj.get("zarr_format") {
        Some(v) if v.as_u64() == Some(expected) => Ok(()),
        Some(v) => Err(MetadataError::UnsupportedZarrFormat {
            key: key.to_string(),
            found: crate::index::json::excerpt(v),
        }),
        None => Err(MetadataError::MissingField {
            key: key.to_string(),
            field: "zarr_format".into(),
        }),
    }
}

fn node_type_err(obj: &Map<String, Value>, key: &str, expected: &str) -> MetadataError {
    match obj.get("node_type") {
        None => MetadataError::MissingField {
            key: key.to_string(),
            field: "node_type".into(),
        },
        Some(v) => MetadataError::WrongNodeType {
            key: key.to_string(),
            expected: expected.to_string(),
            found: crate::index::json::excerpt(v),
        },
    }
}

/// Apply the `must_understand` rule to the fields not in `known`, taking them out of `obj`.
fn check_unknown_fields(
    obj: &mut Map<String, Value>,
    known: &[&str],
    key: &str,
) -> Result<Map<String, Value>, MetadataError> {
    let unknown: Vec<String> = obj
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    let mut extra = Map::new();
    for k in unknown {
        let optional = obj
            .get(&k)
            .and_then(Value::as_object)
            .and_then(|o| o.get("must_understand"))
            .and_then(Value::as_bool)
            == Some(false);
        if !optional {
            return Err(MetadataError::UnknownField {
                key: key.to_string(),
                field: k,
            });
        }
        if let Some(v) = obj.remove(&k) {
            extra.insert(k, v);
        }
    }
    Ok(extra)
}

/// Takes field `name` out of `obj` (a document's values are moved, never copied: a large
/// attribute tree is held once).
fn take(obj: &mut Map<String, Value>, name: &str, key: &str) -> Result<Value, MetadataError> {
    obj.remove(name).ok_or_else(|| MetadataError::MissingField {
        key: key.to_string(),
        field: name.to_string(),
    })
}

fn typed<T: serde::de::DeserializeOwned>(
    v: Value,
    name: &str,
    key: &str,
) -> Result<T, MetadataError> {
    serde_json::from_value(v).map_err(|e| MetadataError::InvalidField {
        key: key.to_string(),
        field: name.to_string(),
        reason: e.to_string(),
    })
}

/// The `attributes` object (moved out of the document, not deserialised again).
fn take_attributes(
    obj: &mut Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, MetadataError> {
    match obj.remove("attributes") {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(MetadataError::InvalidField {
            key: key.to_string(),
            field: "attributes".into(),
            reason: format!("expected an object, found {}", type_name(&other)),
        }),
    }
}

/// Parse an extension-point field that may not carry `must_understand: false`.
fn strict_extension(
    obj: &mut Map<String, Value>,
    name: &str,
    key: &str,
) -> Result<MetadataV3, MetadataError> {
    let v = take(obj, name, key)?;
    if v.as_object()
        .and_then(|o| o.get("must_understand"))
        .and_then(Value::as_bool)
        == Some(false)
    {
        return Err(MetadataError::MustUnderstandNotAllowed {
            key: key.to_string(),
            field: name.to_string(),
        });
    }
    if let Some(o) = v.as_object() {
        grid::check_keys(o, &["name", "configuration", "must_understand"], key, name)?;
    }
    typed(v, name, key)
}

/// Canonical object form `{"name", "configuration"?}` of an extension (never short-hand, never
/// `must_understand`).
pub fn extension_object(m: &MetadataV3) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), Value::String(m.name().to_string()));
    if let Some(c) = m.configuration()
        && !c.is_empty()
    {
        o.insert("configuration".into(), Value::Object((**c).clone()));
    }
    Value::Object(o)
}

/// A variable-length array's innermost array→bytes codec must be one zarrflow checks before
/// decoding: `vlen-utf8` or `vlen-bytes` (numcodecs' format).
fn check_vlen_codec(
    codecs: &CodecPipeline,
    data_type: &MetadataV3,
    key: &str,
) -> Result<(), MetadataError> {
    let inner = match codecs.sharding() {
        Some(sh) => sh.inner(),
        None => codecs,
    };
    if inner.sharding().is_some() {
        return Err(MetadataError::UnsupportedDataType {
            key: key.to_string(),
            name: data_type.name().to_string(),
            reason: "nested sharding of a variable-length data type is not supported".into(),
        });
    }
    let names: Vec<&str> = inner.metadata().iter().map(|m| m.name()).collect();
    if names
        .iter()
        .any(|n| matches!(*n, "vlen-utf8" | "vlen-bytes"))
    {
        return Ok(());
    }
    Err(MetadataError::UnsupportedDataType {
        key: key.to_string(),
        name: data_type.name().to_string(),
        reason: format!(
            "codecs {names:?}: zarrflow reads and writes variable-length data with `vlen-utf8` or `vlen-bytes`"
        ),
    })
}

/// Validated metadata of an array, with its runtime objects.
#[derive(Debug, Clone)]
pub struct ArrayMetadata {
    meta: ArrayMetadataV3,
    extra: Map<String, Value>,
    data_type: ZarrsDataType,
    fill_value: FillValue,
    grid: ChunkGridSpec,
    key_encoding: ChunkKeyEncodingSpec,
    codecs: CodecPipeline,
    zarr_format: ZarrFormat,
    /// What the execution layer moves: the data type itself, or for a variable-length
    /// type its `uint64` handles with fill value handle 0 (see [`crate::codec::vlen`]).
    exec: (ZarrsDataType, FillValue),
}

impl ArrayMetadata {
    /// Parse an array `zarr.json`; `key` names it in errors.
    pub fn parse(json: &[u8], key: &str) -> Result<Self, MetadataError> {
        let obj = parse_object(json, key)?;
        check_format(&obj, key)?;
        Self::from_map(obj, key)
    }

    fn from_map(mut obj: Map<String, Value>, key: &str) -> Result<Self, MetadataError> {
        if obj.get("node_type").and_then(Value::as_str) != Some("array") {
            return Err(node_type_err(&obj, key, "\"array\""));
        }
        let extra = check_unknown_fields(&mut obj, ARRAY_FIELDS, key)?;
        let shape: Vec<u64> = typed(take(&mut obj, "shape", key)?, "shape", key)?;
        let data_type_meta = strict_extension(&mut obj, "data_type", key)?;
        let chunk_grid = strict_extension(&mut obj, "chunk_grid", key)?;
        let cke = strict_extension(&mut obj, "chunk_key_encoding", key)?;
        let fill_value_meta: FillValueMetadata =
            typed(take(&mut obj, "fill_value", key)?, "fill_value", key)?;
        let codecs_meta: Vec<MetadataV3> = typed(take(&mut obj, "codecs", key)?, "codecs", key)?;
        let attributes = take_attributes(&mut obj, key)?;
        let storage_transformers: Vec<MetadataV3> = match obj.remove("storage_transformers") {
            None => Vec::new(),
            Some(v) => typed(v, "storage_transformers", key)?,
        };
        if let Some(t) = storage_transformers.iter().find(|t| t.must_understand()) {
            return Err(MetadataError::UnsupportedStorageTransformer {
                key: key.to_string(),
                name: t.name().to_string(),
            });
        }
        let dimension_names: Option<Vec<DimensionName>> = match obj.remove("dimension_names") {
            None | Some(Value::Null) => None,
            Some(v) => Some(typed(v, "dimension_names", key)?),
        };
        let mut meta = ArrayMetadataV3::new(
            shape,
            chunk_grid,
            data_type_meta,
            fill_value_meta,
            codecs_meta,
        );
        meta.chunk_key_encoding = cke;
        meta.attributes = attributes;
        meta.dimension_names = dimension_names;
        Self::from_zarrs(meta, extra, key)
    }

    /// Validate zarrs metadata and build the runtime objects. `extra` holds additional
    /// top-level fields (each an object with `"must_understand": false`).
    pub fn from_zarrs(
        meta: ArrayMetadataV3,
        extra: Map<String, Value>,
        key: &str,
    ) -> Result<Self, MetadataError> {
        // values built in code may nest deeper than any document: refuse them before
        // anything recurses through them
        check_document_nesting(&meta, &extra, key)?;
        let data_type = fixed_text::zarrs_data_type(&meta.data_type).map_err(|reason| {
            MetadataError::UnsupportedDataType {
                key: key.to_string(),
                name: meta.data_type.name().to_string(),
                reason,
            }
        })?;
        let invalid_fill = || MetadataError::InvalidFillValue {
            key: key.to_string(),
            data_type: data_type.to_string(),
            value: crate::index::json::excerpt(
                &serde_json::to_value(&meta.fill_value).unwrap_or(Value::Null),
            ),
        };
        // zarrs panics on some malformed bit patterns: refuse them first
        if has_malformed_hex_string(&meta.fill_value) {
            return Err(invalid_fill());
        }
        let fill_value = fixed_text::fill_value(&meta.data_type, &data_type, &meta.fill_value)
            .ok_or_else(invalid_fill)?;
        let grid = ChunkGridSpec::from_metadata(&meta.chunk_grid, &meta.shape, key)?;
        let key_encoding = ChunkKeyEncodingSpec::from_metadata(&meta.chunk_key_encoding, key)?;
        if let Some(names) = &meta.dimension_names
            && names.len() != meta.shape.len()
        {
            return Err(MetadataError::DimensionNamesRank {
                key: key.to_string(),
                expected: meta.shape.len(),
                got: names.len(),
            });
        }
        let codec_err = |source| MetadataError::Codec {
            key: key.to_string(),
            source,
        };
        let mut codecs = CodecPipeline::from_metadata(&meta.codecs).map_err(codec_err)?;
        let exec = match crate::codec::VlenMode::of(&data_type, &fill_value) {
            Some(mode) => {
                check_vlen_codec(&codecs, &meta.data_type, key)?;
                codecs = codecs.with_vlen(mode);
                crate::codec::VlenMode::handle_type()
            }
            None => (data_type.clone(), fill_value.clone()),
        };
        if codecs.sharding().is_some() {
            fixed_size(&exec.0, "sharding").map_err(codec_err)?;
        }
        let chunk_shape_err = |e| match e {
            crate::codec::CodecError::InvalidConfiguration { field, reason }
                if field == "chunk shape" =>
            {
                MetadataError::InvalidField {
                    key: key.to_string(),
                    field: match grid {
                        ChunkGridSpec::Regular { .. } => "chunk_grid.configuration.chunk_shape",
                        ChunkGridSpec::Rectilinear { .. } => {
                            "chunk_grid.configuration.chunk_shapes"
                        }
                    }
                    .into(),
                    reason,
                }
            }
            e => codec_err(e),
        };
        // every chunk's buffer fits and its shard index is within the cap: the largest
        // chunk of the grid is the worst case in both
        codecs
            .validate(&grid.max_chunk_shape(), &exec.0)
            .map_err(chunk_shape_err)?;
        if let ChunkGridSpec::Rectilinear { dimensions, .. } = &grid
            && codecs.sharding().is_some()
        {
            // every distinct edge of every dimension must be divisible by the inner chunk
            // shape; the check is per dimension, so one shape per distinct-edge rank
            // suffices (a cheap check: the number of runs, not of edges, bounds it)
            let distinct: Vec<Vec<u64>> = dimensions.iter().map(|g| g.distinct_sizes()).collect();
            let rounds = distinct.iter().map(Vec::len).max().unwrap_or(0);
            for j in 0..rounds {
                let shape: Vec<u64> = distinct
                    .iter()
                    .map(|d| d.get(j).or(d.last()).copied().unwrap_or(1))
                    .collect();
                codecs.check_divisible(&shape).map_err(codec_err)?;
            }
        }
        // what the array layer needs of the shape and grid (rank, extents and chunk sizes
        // within i64), checked here so that create and open refuse the same documents
        crate::index::IndexDomain::from_shape(&meta.shape).map_err(|e| {
            MetadataError::InvalidField {
                key: key.to_string(),
                field: "shape".into(),
                reason: e.to_string(),
            }
        })?;
        grid.dimension_grids(&meta.shape)
            .map_err(|(d, e)| MetadataError::InvalidField {
                key: key.to_string(),
                field: format!("chunk_grid (dimension {d})"),
                reason: e.to_string(),
            })?;
        let codecs = codecs
            .with_data_type_bounds(&exec.0, &exec.1)
            .map_err(codec_err)?;
        Ok(ArrayMetadata {
            meta,
            extra,
            data_type,
            fill_value,
            grid,
            key_encoding,
            codecs,
            zarr_format: ZarrFormat::V3,
            exec,
        })
    }

    /// The same metadata marked as read from (or to be written in) `format`.
    pub fn with_zarr_format(mut self, format: ZarrFormat) -> Self {
        self.zarr_format = format;
        self
    }

    /// The Zarr format the metadata was read from (or is written in): `.zarray` for v2,
    /// `zarr.json` for v3. Everything else about the array is the same for both.
    pub fn zarr_format(&self) -> ZarrFormat {
        self.zarr_format
    }

    /// The zarrs metadata (as read; fill value as written in the document).
    pub fn zarrs_metadata(&self) -> &ArrayMetadataV3 {
        &self.meta
    }
    /// Array shape.
    pub fn shape(&self) -> &[u64] {
        &self.meta.shape
    }
    /// Rank.
    pub fn rank(&self) -> usize {
        self.meta.shape.len()
    }
    /// Data type.
    pub fn data_type(&self) -> &ZarrsDataType {
        &self.data_type
    }
    /// Fill value (native-endian bytes).
    pub fn fill_value(&self) -> &FillValue {
        &self.fill_value
    }
    /// The data type the execution layer moves: [`Self::data_type`] for fixed-size types,
    /// `uint64` handles for `string` and `bytes` (see [`crate::codec::vlen`]).
    pub fn exec_data_type(&self) -> &ZarrsDataType {
        &self.exec.0
    }
    /// The fill value the execution layer moves: [`Self::fill_value`], or handle 0 for
    /// `string` and `bytes`.
    pub fn exec_fill_value(&self) -> &FillValue {
        &self.exec.1
    }
    /// The variable-length mode (`string`, `bytes`): the pool behind the handles.
    pub fn vlen(&self) -> Option<&crate::codec::VlenMode> {
        self.codecs.vlen()
    }
    /// Canonical fill value JSON.
    pub fn fill_value_metadata(&self) -> FillValueMetadata {
        if self.vlen().map(|v| v.kind()) == Some(crate::codec::vlen::VlenKind::Bytes) {
            // zarr-python reads a `bytes` fill value as a base64 string (zarrs reads both
            // that and the list of byte values it writes)
            use base64::Engine;
            let text =
                base64::engine::general_purpose::STANDARD.encode(self.fill_value.as_ne_bytes());
            return FillValueMetadata::from(text.as_str());
        }
        fixed_text::fill_value_metadata(&self.meta.data_type, &self.data_type, &self.fill_value)
            .unwrap_or_else(|| self.meta.fill_value.clone())
    }
    /// Chunk grid.
    pub fn chunk_grid(&self) -> &ChunkGridSpec {
        &self.grid
    }
    /// Chunk key encoding.
    pub fn chunk_key_encoding(&self) -> &ChunkKeyEncodingSpec {
        &self.key_encoding
    }
    /// Codec pipeline.
    pub fn codecs(&self) -> &CodecPipeline {
        &self.codecs
    }
    /// User attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        &self.meta.attributes
    }
    /// Replace the user attributes.
    pub fn set_attributes(&mut self, attributes: Map<String, Value>) {
        self.meta.attributes = attributes;
    }
    /// Dimension names.
    pub fn dimension_names(&self) -> Option<&[DimensionName]> {
        self.meta.dimension_names.as_deref()
    }
    /// Additional top-level fields marked `"must_understand": false`.
    pub fn extra_fields(&self) -> &Map<String, Value> {
        &self.extra
    }
    /// The same metadata with checksum verification on decode turned on or off (a runtime
    /// setting of the codec pipeline; nothing changes in the stored document).
    pub fn with_verify_checksums(mut self, on: bool) -> Self {
        self.codecs = self.codecs.with_verify_checksums(on);
        self
    }

    /// The same metadata writing shards with their inner chunks in `order` (a runtime
    /// setting of the codec pipeline; nothing changes in the stored document).
    pub fn with_inner_chunk_order(
        mut self,
        order: crate::codec::sharding::InnerChunkOrder,
    ) -> Self {
        self.codecs = self.codecs.with_inner_chunk_order(order);
        self
    }

    /// The key of chunk `coords` relative to the array prefix.
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        self.key_encoding.encode(coords)
    }

    /// Canonical JSON value, its fields in the order zarr-python 3 writes them (so that the
    /// same array's `zarr.json` is the same text): `shape` … `attributes`,
    /// `dimension_names` when there are names, `zarr_format`, `node_type`,
    /// `storage_transformers`, then any other (`must_understand: false`) field.
    pub fn to_value(&self) -> Value {
        let m = &self.meta;
        let mut o = Map::new();
        o.insert("shape".into(), serde_json::json!(m.shape));
        o.insert(
            "data_type".into(),
            serde_json::to_value(&m.data_type).unwrap_or(Value::Null),
        );
        o.insert("chunk_grid".into(), self.grid.to_value());
        o.insert("chunk_key_encoding".into(), self.key_encoding.to_value());
        o.insert(
            "fill_value".into(),
            serde_json::to_value(self.fill_value_metadata()).unwrap_or(Value::Null),
        );
        o.insert(
            "codecs".into(),
            Value::Array(m.codecs.iter().map(canonical_codec).collect()),
        );
        o.insert("attributes".into(), Value::Object(m.attributes.clone()));
        if let Some(names) = &m.dimension_names {
            o.insert(
                "dimension_names".into(),
                serde_json::to_value(names).unwrap_or(Value::Null),
            );
        }
        o.insert("zarr_format".into(), Value::from(3));
        o.insert("node_type".into(), Value::from("array"));
        o.insert(
            "storage_transformers".into(),
            serde_json::to_value(&m.storage_transformers).unwrap_or(Value::Array(Vec::new())),
        );
        for (k, v) in &self.extra {
            o.insert(k.clone(), v.clone());
        }
        Value::Object(o)
    }

    /// Canonical `zarr.json` bytes (pretty-printed).
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(&self.to_value()).unwrap_or_default()
    }

    /// The documents that store this array in its format, each with its name, the node's
    /// own document last: `zarr.json` for v3; `.zattrs` (when there are attributes) and
    /// `.zarray` for v2.
    pub fn documents(&self) -> Result<Vec<(&'static str, Vec<u8>)>, MetadataError> {
        match self.zarr_format {
            ZarrFormat::V3 => Ok(vec![(ZARR_JSON, self.to_json())]),
            ZarrFormat::V2 => {
                let (zarray, zattrs) = v2::array_to_v2(self)?;
                let mut docs = Vec::new();
                if let Some(a) = zattrs {
                    docs.push((ZATTRS, serde_json::to_vec_pretty(&a).unwrap_or_default()));
                }
                docs.push((
                    ZARRAY,
                    serde_json::to_vec_pretty(&zarray).unwrap_or_default(),
                ));
                Ok(docs)
            }
        }
    }
}

/// Refuses a document whose values nest deeper than [`MAX_JSON_DEPTH`] (only values built
/// in code can: a parsed document is within serde_json's limit).
fn check_document_nesting(
    meta: &ArrayMetadataV3,
    extra: &Map<String, Value>,
    key: &str,
) -> Result<(), MetadataError> {
    let configs = [
        ("data_type", &meta.data_type),
        ("chunk_grid", &meta.chunk_grid),
        ("chunk_key_encoding", &meta.chunk_key_encoding),
    ]
    .into_iter()
    .chain(meta.codecs.iter().map(|c| ("codecs", c)))
    .chain(
        meta.storage_transformers
            .iter()
            .map(|c| ("storage_transformers", c)),
    );
    for (field, m) in configs {
        if let Some(c) = m.configuration() {
            for v in c.values() {
                limits::check_nesting(v, field, Some(key))?;
            }
        }
    }
    for (field, map) in [("attributes", &meta.attributes), ("(extra fields)", extra)] {
        for v in map.values() {
            limits::check_nesting(v, field, Some(key))?;
        }
    }
    Ok(())
}

/// Canonical codec object; nested codec lists of `sharding_indexed` are canonicalised too.
fn canonical_codec(m: &MetadataV3) -> Value {
    let mut v = extension_object(m);
    // zarr-python 3.4.2 requires a `configuration` member in every `numcodecs.*` codec
    // (`{"name": "numcodecs.crc32c", "configuration": {}}`, as it writes them)
    if m.name().starts_with(crate::codec::NUMCODECS_PREFIX) {
        if let Value::String(name) = &v {
            v = serde_json::json!({ "name": name });
        }
        if let Some(o) = v.as_object_mut() {
            o.entry("configuration")
                .or_insert_with(|| Value::Object(Map::new()));
        }
    }
    if m.name() == crate::codec::SHARDING_NAME
        && let Some(cfg) = v.get_mut("configuration").and_then(Value::as_object_mut)
    {
        for list in ["codecs", "index_codecs"] {
            if let Some(items) = cfg.get(list).cloned() {
                let parsed: Result<Vec<MetadataV3>, _> = serde_json::from_value(items);
                if let Ok(items) = parsed {
                    cfg.insert(
                        list.into(),
                        Value::Array(items.iter().map(canonical_codec).collect()),
                    );
                }
            }
        }
        cfg.entry("index_location").or_insert(Value::from("end"));
    }
    v
}

/// Metadata of a group.
#[derive(Debug, Clone, Default)]
pub struct GroupMetadata {
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// Consolidated metadata, if present: flattened relative path → node (see
    /// [`consolidated`]). Read from the inline block of a v3 `zarr.json` and from a v2
    /// group's `.zmetadata` (by the hierarchy layer); written back in `zarr.json` for v3
    /// (a v2 group's `.zmetadata` is written by [`consolidated::zmetadata_document`]).
    pub consolidated: Option<ConsolidatedNodes>,
    /// Additional top-level fields marked `"must_understand": false` (other than
    /// `consolidated_metadata`).
    pub extra: Map<String, Value>,
    /// The format the group was read from (or is written in).
    pub zarr_format: ZarrFormat,
}

impl GroupMetadata {
    /// A group with these attributes.
    pub fn new(attributes: Map<String, Value>) -> Self {
        GroupMetadata {
            attributes,
            ..Default::default()
        }
    }

    /// Parse a group `zarr.json`; `key` names it in errors.
    pub fn parse(json: &[u8], key: &str) -> Result<Self, MetadataError> {
        let obj = parse_object(json, key)?;
        check_format(&obj, key)?;
        Self::from_map(obj, key)
    }

    fn from_map(mut obj: Map<String, Value>, key: &str) -> Result<Self, MetadataError> {
        if obj.get("node_type").and_then(Value::as_str) != Some("group") {
            return Err(node_type_err(&obj, key, "\"group\""));
        }
        let mut known = vec!["zarr_format", "node_type", "attributes"];
        // zarr-python <= 3.1.3 wrote `"consolidated_metadata": null`
        if obj.get("consolidated_metadata").is_some_and(Value::is_null) {
            known.push("consolidated_metadata");
        }
        let mut extra = check_unknown_fields(&mut obj, &known, key)?;
        let attributes = take_attributes(&mut obj, key)?;
        let consolidated = match extra.remove("consolidated_metadata") {
            Some(Value::Object(cm)) => Some(consolidated::parse_inline(cm, key)?),
            Some(other) => {
                return Err(MetadataError::InvalidField {
                    key: key.to_string(),
                    field: "consolidated_metadata".into(),
                    reason: format!("expected an object, found {}", type_name(&other)),
                });
            }
            _ => None,
        };
        Ok(GroupMetadata {
            attributes,
            consolidated,
            extra,
            zarr_format: ZarrFormat::V3,
        })
    }

    /// Canonical JSON value, its fields in the order zarr-python 3 writes them
    /// (`attributes`, `zarr_format`, `consolidated_metadata` when there is some,
    /// `node_type`, then any other field).
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("attributes".into(), Value::Object(self.attributes.clone()));
        o.insert("zarr_format".into(), Value::from(3));
        if let Some(c) = &self.consolidated {
            o.insert(
                "consolidated_metadata".into(),
                consolidated::inline_value(c),
            );
        }
        o.insert("node_type".into(), Value::from("group"));
        for (k, v) in &self.extra {
            o.insert(k.clone(), v.clone());
        }
        Value::Object(o)
    }

    /// Canonical `zarr.json` bytes (pretty-printed).
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(&self.to_value()).unwrap_or_default()
    }

    /// The documents that store this group in its format, the node's own document last:
    /// `zarr.json` for v3; `.zattrs` (when there are attributes) and `.zgroup` for v2
    /// (consolidated metadata is not written in v2).
    pub fn documents(&self) -> Vec<(&'static str, Vec<u8>)> {
        match self.zarr_format {
            ZarrFormat::V3 => vec![(ZARR_JSON, self.to_json())],
            ZarrFormat::V2 => {
                let mut docs = Vec::new();
                if !self.attributes.is_empty() {
                    docs.push((
                        ZATTRS,
                        serde_json::to_vec_pretty(&self.attributes).unwrap_or_default(),
                    ));
                }
                docs.push((
                    ZGROUP,
                    serde_json::to_vec_pretty(&v2::group_document()).unwrap_or_default(),
                ));
                docs
            }
        }
    }
}
