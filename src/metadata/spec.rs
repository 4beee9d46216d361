//! The array creation specification (pure): builds validated [`ArrayMetadata`].

use super::limits::{self, DEFAULT_MAX_METADATA_BYTES};
use super::{
    ArrayMetadata, ChunkGridSpec, ChunkKeyEncodingSpec, CodecSpec, DataType, MetadataError,
    ZarrFormat,
};
use serde_json::{Map, Value, json};
use zarrs::metadata::FillValueMetadata;
use zarrs::metadata::v3::{ArrayMetadataV3, MetadataV3};

/// What to create: shape, data type, chunking, codecs, fill value, names, attributes.
///
/// ```
/// use zarrflow::metadata::{ArraySpec, CodecSpec};
/// use zarrflow::DataType;
/// let spec = ArraySpec::with_data_type([100, 200], DataType::Float32)
///     .shard_shape([50, 100])
///     .inner_chunk_shape([10, 20])
///     .codecs([CodecSpec::bytes(), CodecSpec::gzip(5)])
///     .dimension_names(["y", "x"])
///     .attribute("units", "kelvin");
/// let meta = spec.build().unwrap();
/// assert_eq!(meta.inner_chunk_shape(), Some(&[10, 20][..]));
/// // a misspelt name lists the valid ones
/// let err = ArraySpec::new([4], "float33").build().unwrap_err();
/// assert!(err.to_string().contains("float32"), "{err}");
/// ```
///
/// Defaults: with an inner chunk shape, a `sharding_indexed` codec whose inner chunks use
/// `bytes` (little-endian) + `zstd` (level 0, no checksum) and whose index uses `bytes` +
/// `crc32c` at the end; without one, `bytes` + `zstd` directly. Fill value: 0 / false / NaN
/// as zarr-python.
#[derive(Debug, Clone)]
#[non_exhaustive]
#[must_use = "a spec does nothing until an array is created from it"]
pub struct ArraySpec {
    /// Array shape.
    pub shape: Vec<u64>,
    /// Data type name (e.g. `"float32"`) or object.
    pub data_type: MetadataV3,
    /// The outer chunk (shard) shape; defaults to the whole array.
    pub shard_shape: Option<Vec<u64>>,
    /// Inner chunk shape: when set, the array is sharded.
    pub inner_chunk_shape: Option<Vec<u64>>,
    /// Codecs for the chunks (inner chunks when sharded). Default `bytes` + `zstd`.
    pub codecs: Option<Vec<MetadataV3>>,
    /// Index codecs when sharded. Default `bytes` + `crc32c`.
    pub index_codecs: Option<Vec<MetadataV3>>,
    /// Index at the start instead of the end.
    pub index_at_start: bool,
    /// Fill value JSON; default per data type.
    pub fill_value: Option<FillValueMetadata>,
    /// Chunk key encoding; default `default` with `/`.
    pub chunk_key_encoding: ChunkKeyEncodingSpec,
    /// Dimension names (one per dimension).
    pub dimension_names: Option<Vec<Option<String>>>,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// The format written: `zarr.json` (v3, the default) or `.zarray` + `.zattrs` (v2).
    pub zarr_format: ZarrFormat,
}

impl ArraySpec {
    /// A spec for `shape` and data type name `data_type` (e.g. `"uint16"`; an unknown name
    /// is refused by [`build`](Self::build) with the list of valid ones). See also
    /// [`with_data_type`](Self::with_data_type) and `ArraySpec::of::<T>`.
    pub fn new(shape: impl Into<Vec<u64>>, data_type: &str) -> Self {
        let data_type = data_type
            .parse::<DataType>()
            .map_or_else(|_| MetadataV3::new(data_type), |t| t.to_metadata());
        ArraySpec::of_data_type_field(shape.into(), data_type)
    }
    /// A spec for `shape` and a [`DataType`].
    pub fn with_data_type(shape: impl Into<Vec<u64>>, data_type: DataType) -> Self {
        ArraySpec::of_data_type_field(shape.into(), data_type.to_metadata())
    }
    /// A spec of defaults for `shape` and the v3 `data_type` field `data_type`.
    fn of_data_type_field(shape: Vec<u64>, data_type: MetadataV3) -> Self {
        ArraySpec {
            shape,
            data_type,
            shard_shape: None,
            inner_chunk_shape: None,
            codecs: None,
            index_codecs: None,
            index_at_start: false,
            fill_value: None,
            chunk_key_encoding: ChunkKeyEncodingSpec::default(),
            dimension_names: None,
            attributes: Map::new(),
            zarr_format: ZarrFormat::V3,
        }
    }
    /// Set the shard (outer chunk) shape; without an inner chunk shape it is the chunk shape
    /// of an unsharded array.
    pub fn shard_shape(mut self, s: impl Into<Vec<u64>>) -> Self {
        self.shard_shape = Some(s.into());
        self
    }
    /// Set the inner chunk shape (makes the array sharded).
    pub fn inner_chunk_shape(mut self, s: impl Into<Vec<u64>>) -> Self {
        self.inner_chunk_shape = Some(s.into());
        self
    }
    /// Set the (inner) chunk codecs, e.g. `[CodecSpec::bytes(), CodecSpec::zstd(3)]`.
    pub fn codecs<C: Into<CodecSpec>>(mut self, c: impl IntoIterator<Item = C>) -> Self {
        self.codecs = Some(c.into_iter().map(|c| c.into().to_metadata()).collect());
        self
    }
    /// Set the index codecs.
    pub fn index_codecs<C: Into<CodecSpec>>(mut self, c: impl IntoIterator<Item = C>) -> Self {
        self.index_codecs = Some(c.into_iter().map(|c| c.into().to_metadata()).collect());
        self
    }
    /// Put the shard index at the start.
    pub fn index_at_start(mut self, on: bool) -> Self {
        self.index_at_start = on;
        self
    }
    /// Set the fill value from JSON (e.g. `json!("NaN")`, `json!(7)`).
    pub fn fill_value(mut self, v: Value) -> Result<Self, MetadataError> {
        self.fill_value =
            Some(
                serde_json::from_value(v.clone()).map_err(|e| MetadataError::InvalidSpec {
                    field: "fill_value".into(),
                    reason: format!("{v}: {e}"),
                })?,
            );
        Ok(self)
    }
    /// Set the fill value from its native-endian bytes (exact: NaN payloads and 64-bit
    /// extremes kept); the length must be the data type's size. `ArraySpec::fill` takes a
    /// Rust value instead.
    pub fn fill_value_bytes(mut self, bytes: &[u8]) -> Result<Self, MetadataError> {
        let bad = |reason: String| MetadataError::InvalidSpec {
            field: "fill_value".into(),
            reason,
        };
        let dt = super::fixed_text::zarrs_data_type(&self.data_type)
            .map_err(|e| bad(format!("data type {}: {e}", self.data_type.name())))?;
        // a variable-length type's fill value is any value (a `string`'s: UTF-8)
        if dt.fixed_size().is_some_and(|n| n != bytes.len()) {
            return Err(bad(format!(
                "{} bytes for a fill value of data type {}",
                bytes.len(),
                self.data_type.name()
            )));
        }
        let fill = zarrs::array::FillValue::new(bytes.to_vec());
        self.fill_value = Some(
            super::fixed_text::fill_value_metadata(&self.data_type, &dt, &fill)
                .ok_or_else(|| bad(format!("not a fill value of {}", self.data_type.name())))?,
        );
        Ok(self)
    }
    /// Set the chunk key encoding.
    pub fn chunk_key_encoding(mut self, e: ChunkKeyEncodingSpec) -> Self {
        self.chunk_key_encoding = e;
        self
    }
    /// Set the Zarr format written. For v2 the chunk key encoding becomes `v2` with `.`
    /// when it was left at v3's default (`default` with `/`); v2 cannot hold sharding,
    /// dimension names or the `default` key encoding
    /// ([`MetadataError::NotExpressibleInV2`] from [`build`](Self::build)).
    pub fn zarr_format(mut self, format: ZarrFormat) -> Self {
        match format {
            ZarrFormat::V2 if self.chunk_key_encoding == ChunkKeyEncodingSpec::default() => {
                self.chunk_key_encoding = ChunkKeyEncodingSpec::V2 { separator: '.' };
            }
            ZarrFormat::V3
                if self.chunk_key_encoding == (ChunkKeyEncodingSpec::V2 { separator: '.' })
                    && self.zarr_format == ZarrFormat::V2 =>
            {
                self.chunk_key_encoding = ChunkKeyEncodingSpec::default();
            }
            _ => {}
        }
        self.zarr_format = format;
        self
    }
    /// Set dimension names: `["y", "x"]`, or `[Some("y"), None]` to leave one unnamed.
    pub fn dimension_names<N: IntoDimensionName>(
        mut self,
        names: impl IntoIterator<Item = N>,
    ) -> Self {
        self.dimension_names = Some(
            names
                .into_iter()
                .map(IntoDimensionName::into_dimension_name)
                .collect(),
        );
        self
    }
    /// Set (replace) the attributes.
    pub fn attributes(mut self, a: Map<String, Value>) -> Self {
        self.attributes = a;
        self
    }
    /// Set one attribute: `.attribute("units", "kelvin").attribute("scale", 0.5)`.
    pub fn attribute(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.attributes.insert(key.into(), value.into());
        self
    }

    /// The spec that recreates `meta`: the same shape, data type, chunking, codecs, fill
    /// value, key encoding, dimension names and attributes. A sharded array whose chain is
    /// the sharding codec alone is described by its shard shape, inner chunk shape and
    /// inner / index codecs (so that a layout change keeps its codecs); any other chain is
    /// kept whole. Rectilinear grids cannot be described and are refused.
    pub fn from_metadata(meta: &ArrayMetadata) -> Result<Self, MetadataError> {
        let ChunkGridSpec::Regular { chunk_shape } = meta.chunk_grid() else {
            return Err(MetadataError::InvalidSpec {
                field: "chunk_grid".into(),
                reason: "a rectilinear chunk grid cannot be described by an ArraySpec".into(),
            });
        };
        let mut spec = ArraySpec::fields_of(meta);
        spec.shard_shape = Some(chunk_shape.clone());
        let chain = meta.codecs().metadata();
        match meta.codecs().sharding() {
            Some(s) if chain.len() == 1 => {
                let cfg = s.config();
                spec.inner_chunk_shape = Some(cfg.chunk_shape.clone());
                spec.codecs = Some(cfg.codecs.clone());
                spec.index_codecs = Some(cfg.index_codecs.clone());
                spec.index_at_start = cfg.index_location == crate::codec::IndexLocation::Start;
            }
            _ => spec.codecs = Some(chain.to_vec()),
        }
        Ok(spec)
    }

    /// The spec of `meta`'s shape, data type, fill value, key encoding, dimension names and
    /// attributes, with default chunking and codecs.
    pub(crate) fn fields_of(meta: &ArrayMetadata) -> Self {
        let mut spec = ArraySpec::new(meta.shape(), "uint8");
        spec.data_type = meta.zarrs_metadata().data_type.clone();
        spec.fill_value = Some(meta.fill_value_metadata());
        spec.dimension_names = meta.dimension_names().map(<[_]>::to_vec);
        spec.attributes = meta.attributes().clone();
        spec.chunk_key_encoding = *meta.chunk_key_encoding();
        spec.zarr_format = meta.zarr_format();
        spec
    }

    /// The data type, when its name is one of [`DataType`]'s.
    pub fn dtype(&self) -> Option<DataType> {
        DataType::from_metadata(&self.data_type)
    }

    fn default_fill(&self) -> FillValueMetadata {
        let v = match self.data_type.name() {
            "bool" => json!(false),
            "float16" | "float32" | "float64" | "bfloat16" => json!(0.0),
            "complex64" | "complex128" => json!([0.0, 0.0]),
            n if n.starts_with('r') && n[1..].parse::<u64>().is_ok() => {
                let bits: u64 = n[1..].parse().unwrap_or(8);
                json!(vec![0u8; (bits / 8) as usize])
            }
            "string"
            | "bytes"
            | "variable_length_bytes"
            | "fixed_length_utf32"
            | "null_terminated_bytes" => json!(""),
            "numpy.datetime64" | "numpy.timedelta64" => json!(crate::metadata::NAT),
            _ => json!(0),
        };
        serde_json::from_value(v).unwrap_or(FillValueMetadata::Null)
    }

    fn default_inner_codecs(&self) -> Vec<MetadataV3> {
        let mut z = Map::new();
        z.insert("level".into(), json!(0));
        z.insert("checksum".into(), json!(false));
        if let Some(vlen) = self.dtype().and_then(vlen_codec_name) {
            // what zarr-python 3 writes for `dtype=str` and variable-length bytes
            return vec![
                MetadataV3::new_with_configuration(vlen, Map::new()),
                MetadataV3::new_with_configuration("zstd", z),
            ];
        }
        let mut cfg = Map::new();
        cfg.insert("endian".into(), json!("little"));
        let mut z = Map::new();
        z.insert("level".into(), json!(0));
        z.insert("checksum".into(), json!(false));
        vec![
            MetadataV3::new_with_configuration("bytes", cfg),
            MetadataV3::new_with_configuration("zstd", z),
        ]
    }

    /// Validate and build the metadata: exactly what opening the written document accepts
    /// (the document built is parsed again), within [`DEFAULT_MAX_METADATA_BYTES`] and
    /// [`MAX_JSON_DEPTH`](super::MAX_JSON_DEPTH).
    pub fn build(&self) -> Result<ArrayMetadata, MetadataError> {
        self.check_nesting()?;
        let dtype = self
            .dtype()
            .ok_or_else(|| MetadataError::UnsupportedDataType {
                key: "<new array>".into(),
                name: self.data_type.name().chars().take(64).collect(),
                reason: format!("zarrflow reads and writes {}", DataType::valid_names()),
            })?;
        let rank = self.shape.len();
        let bad = |field: &str, reason: String| MetadataError::InvalidSpec {
            field: field.to_string(),
            reason,
        };
        let shard_shape = match &self.shard_shape {
            Some(s) => s.clone(),
            None => self.shape.iter().map(|&v| v.max(1)).collect(),
        };
        if shard_shape.len() != rank {
            return Err(bad(
                "shard_shape",
                format!(
                    "rank {} does not match shape rank {rank}",
                    shard_shape.len()
                ),
            ));
        }
        if shard_shape.contains(&0) {
            return Err(bad("shard_shape", "sizes must be >= 1".into()));
        }
        // blosc's type size (when not given) is the element size its input has: after the
        // filters before `bytes`, as zarr-python sets it
        let filtered_size = self.codecs.as_ref().and_then(|codecs| {
            let zarrs_type = super::fixed_text::zarrs_data_type(&self.data_type).ok()?;
            crate::codec::CodecPipeline::filtered_element_size(codecs, &zarrs_type)
        });
        let element_size = filtered_size.unwrap_or(dtype.size()).max(1);
        let inner_codecs: Vec<MetadataV3> = match &self.codecs {
            Some(codecs) => codecs
                .iter()
                .map(|c| {
                    let spec = CodecSpec::from(c);
                    // a variable-length type's array→bytes codec is its vlen codec: a
                    // `bytes` codec given for it (a default chain, a copied fixed-size
                    // layout) is replaced
                    match vlen_codec_name(dtype) {
                        Some(vlen) if spec.name == "bytes" => {
                            MetadataV3::new_with_configuration(vlen, Map::new())
                        }
                        _ => spec.fit_to_element(element_size).to_metadata(),
                    }
                })
                .collect(),
            None => self.default_inner_codecs(),
        };
        let codecs = match &self.inner_chunk_shape {
            None => inner_codecs,
            Some(inner) => {
                if inner.len() != rank {
                    return Err(bad(
                        "inner_chunk_shape",
                        format!("rank {} does not match shape rank {rank}", inner.len()),
                    ));
                }
                if inner.contains(&0) {
                    return Err(bad("inner_chunk_shape", "sizes must be >= 1".into()));
                }
                if shard_shape.iter().zip(inner).any(|(s, c)| s % c != 0) {
                    return Err(bad(
                        "inner_chunk_shape",
                        format!(
                            "shard shape {shard_shape:?} is not divisible by inner chunk shape {inner:?}"
                        ),
                    ));
                }
                let index_codecs = self.index_codecs.clone().unwrap_or_else(|| {
                    let mut cfg = Map::new();
                    cfg.insert("endian".into(), json!("little"));
                    vec![
                        MetadataV3::new_with_configuration("bytes", cfg),
                        MetadataV3::new("crc32c"),
                    ]
                });
                let cfg = crate::codec::ShardingConfig {
                    chunk_shape: inner.clone(),
                    codecs: inner_codecs,
                    index_codecs,
                    index_location: if self.index_at_start {
                        crate::codec::IndexLocation::Start
                    } else {
                        crate::codec::IndexLocation::End
                    },
                };
                vec![cfg.to_metadata()]
            }
        };
        if let Some(names) = &self.dimension_names
            && names.len() != rank
        {
            return Err(bad(
                "dimension_names",
                format!("{} names for an array of rank {rank}", names.len()),
            ));
        }
        let mut grid = Map::new();
        grid.insert("chunk_shape".into(), json!(shard_shape));
        let fill = self
            .fill_value
            .clone()
            .unwrap_or_else(|| self.default_fill());
        let mut meta = ArrayMetadataV3::new(
            self.shape.clone(),
            MetadataV3::new_with_configuration("regular", grid),
            self.data_type.clone(),
            fill,
            codecs,
        );
        let cke: MetadataV3 = serde_json::from_value(self.chunk_key_encoding.to_value())
            .map_err(|e| bad("chunk_key_encoding", e.to_string()))?;
        meta.chunk_key_encoding = cke;
        meta.attributes = self.attributes.clone();
        meta.dimension_names = self.dimension_names.as_ref().map(|n| n.to_vec());
        let am = ArrayMetadata::from_zarrs(meta, Map::new(), "<new array>")?;
        // re-parse the canonical form so that what is returned equals what a reader gets
        if self.zarr_format == ZarrFormat::V2 {
            let (zarray, zattrs) = super::v2::array_to_v2(&am)?;
            let zarray = serde_json::to_vec_pretty(&zarray).unwrap_or_default();
            let zattrs = zattrs.map(|a| serde_json::to_vec_pretty(&a).unwrap_or_default());
            for doc in std::iter::once(&zarray).chain(zattrs.as_ref()) {
                limits::check_size(doc.len() as u64, DEFAULT_MAX_METADATA_BYTES, "<new array>")?;
            }
            return super::v2::parse_array(
                &zarray,
                zattrs.as_deref(),
                "<new array>",
                "<new array>",
            );
        }
        let json = am.to_json();
        limits::check_size(json.len() as u64, DEFAULT_MAX_METADATA_BYTES, "<new array>")?;
        ArrayMetadata::parse(&json, "<new array>")
    }

    /// Values built in code may nest deeper than any document: refused before anything
    /// clones or serialises them (both recurse).
    fn check_nesting(&self) -> Result<(), MetadataError> {
        let lists = [
            ("codecs", &self.codecs),
            ("index_codecs", &self.index_codecs),
        ];
        for (field, list) in lists {
            for c in list.iter().flatten() {
                for v in c.configuration().into_iter().flat_map(|c| c.values()) {
                    limits::check_nesting(v, field, None)?;
                }
            }
        }
        for v in self
            .data_type
            .configuration()
            .into_iter()
            .flat_map(|c| c.values())
        {
            limits::check_nesting(v, "data_type", None)?;
        }
        for v in self.attributes.values() {
            limits::check_nesting(v, "attributes", None)?;
        }
        Ok(())
    }
}

/// A dimension name as [`ArraySpec::dimension_names`] takes it: `&str`, `String`, or an
/// `Option` of either (`None` leaves the dimension unnamed).
pub trait IntoDimensionName {
    /// The name, `None` for an unnamed dimension.
    fn into_dimension_name(self) -> Option<String>;
}

impl IntoDimensionName for &str {
    fn into_dimension_name(self) -> Option<String> {
        Some(self.to_string())
    }
}
impl IntoDimensionName for String {
    fn into_dimension_name(self) -> Option<String> {
        Some(self)
    }
}
impl IntoDimensionName for &String {
    fn into_dimension_name(self) -> Option<String> {
        Some(self.clone())
    }
}
impl<T: IntoDimensionName> IntoDimensionName for Option<T> {
    fn into_dimension_name(self) -> Option<String> {
        self.and_then(IntoDimensionName::into_dimension_name)
    }
}

impl TryFrom<&ArrayMetadata> for ArraySpec {
    type Error = MetadataError;

    /// [`ArraySpec::from_metadata`].
    fn try_from(meta: &ArrayMetadata) -> Result<Self, MetadataError> {
        ArraySpec::from_metadata(meta)
    }
}

/// The array→bytes codec of a variable-length data type (`vlen-utf8` for `string`,
/// `vlen-bytes` for `bytes`); `None` for fixed-size types.
fn vlen_codec_name(dtype: DataType) -> Option<&'static str> {
    match dtype {
        DataType::String => Some("vlen-utf8"),
        DataType::Bytes => Some("vlen-bytes"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::CodecSpec;

    /// The `blosc` configuration `spec` builds.
    fn blosc_of(spec: ArraySpec) -> Value {
        let meta = spec.build().unwrap();
        let json = serde_json::to_value(meta.zarrs_metadata()).unwrap();
        let codecs = json["codecs"].as_array().unwrap().clone();
        let codecs = match codecs[0]["name"].as_str() {
            Some("sharding_indexed") => codecs[0]["configuration"]["codecs"]
                .as_array()
                .unwrap()
                .clone(),
            _ => codecs,
        };
        codecs.iter().find(|c| c["name"] == "blosc").unwrap()["configuration"].clone()
    }

    #[test]
    fn blosc_takes_the_element_size_its_input_has() {
        let astype = CodecSpec::new(
            "numcodecs.astype",
            json!({"encode_dtype": "<u1", "decode_dtype": "<i4"}),
        );
        let per_array = CodecSpec::blosc_per_array("zstd", 5);
        // no filters: the array's element size
        let plain =
            ArraySpec::new(vec![8], "int32").codecs([CodecSpec::bytes(), per_array.clone()]);
        let cfg = blosc_of(plain);
        assert_eq!(
            (cfg["typesize"].clone(), cfg["shuffle"].clone()),
            (json!(4), json!("shuffle"))
        );
        // after astype to uint8: one byte, bit shuffle (as zarr-python sets them), sharded too
        for sharded in [false, true] {
            let mut spec = ArraySpec::new(vec![8], "int32").codecs([
                astype.clone(),
                CodecSpec::bytes(),
                per_array.clone(),
            ]);
            if sharded {
                spec = spec.shard_shape(vec![8]).inner_chunk_shape(vec![4]);
            }
            let cfg = blosc_of(spec);
            assert_eq!(cfg["typesize"], json!(1), "sharded: {sharded}");
            assert_eq!(cfg["shuffle"], json!("bitshuffle"), "sharded: {sharded}");
        }
        // a type size given is kept
        let given = ArraySpec::new(vec![8], "int32").codecs([
            astype,
            CodecSpec::bytes(),
            CodecSpec::blosc("lz4", 1, 4),
        ]);
        assert_eq!(blosc_of(given)["typesize"], json!(4));
    }
}
