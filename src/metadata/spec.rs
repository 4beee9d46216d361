//! The array creation specification (pure): builds validated [`ArrayMetadata`].

use super::{ArrayMetadata, ChunkKeyEncodingSpec, MetadataError};
use serde_json::{Map, Value, json};
use zarrs::metadata::FillValueMetadata;
use zarrs::metadata::v3::{ArrayMetadataV3, MetadataV3};

/// What to create: shape, data type, chunking, codecs, fill value, names, attributes.
///
/// Defaults: with an inner chunk shape, a `sharding_indexed` codec whose inner chunks use
/// `bytes` (little-endian) + `zstd` (level 0, no checksum) and whose index uses `bytes` +
/// `crc32c` at the end; without one, `bytes` + `zstd` directly. Fill value: 0 / false / NaN
/// as zarr-python.
#[derive(Debug, Clone)]
#[non_exhaustive]
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
}

impl ArraySpec {
    /// A spec for `shape` and data type name `data_type` (e.g. `"uint16"`).
    pub fn new(shape: Vec<u64>, data_type: &str) -> Self {
        ArraySpec {
            shape,
            data_type: MetadataV3::new(data_type),
            shard_shape: None,
            inner_chunk_shape: None,
            codecs: None,
            index_codecs: None,
            index_at_start: false,
            fill_value: None,
            chunk_key_encoding: ChunkKeyEncodingSpec::default(),
            dimension_names: None,
            attributes: Map::new(),
        }
    }
    /// Set the shard (outer chunk) shape.
    pub fn shard_shape(mut self, s: Vec<u64>) -> Self {
        self.shard_shape = Some(s);
        self
    }
    /// Set the inner chunk shape (makes the array sharded).
    pub fn inner_chunk_shape(mut self, s: Vec<u64>) -> Self {
        self.inner_chunk_shape = Some(s);
        self
    }
    /// Set the (inner) chunk codecs.
    pub fn codecs(mut self, c: Vec<MetadataV3>) -> Self {
        self.codecs = Some(c);
        self
    }
    /// Set the index codecs.
    pub fn index_codecs(mut self, c: Vec<MetadataV3>) -> Self {
        self.index_codecs = Some(c);
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
    /// Set the chunk key encoding.
    pub fn chunk_key_encoding(mut self, e: ChunkKeyEncodingSpec) -> Self {
        self.chunk_key_encoding = e;
        self
    }
    /// Set dimension names.
    pub fn dimension_names(mut self, names: Vec<Option<String>>) -> Self {
        self.dimension_names = Some(names);
        self
    }
    /// Set attributes.
    pub fn attributes(mut self, a: Map<String, Value>) -> Self {
        self.attributes = a;
        self
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
            "string" => json!(""),
            _ => json!(0),
        };
        serde_json::from_value(v).unwrap_or(FillValueMetadata::Null)
    }

    fn default_inner_codecs(&self) -> Vec<MetadataV3> {
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

    /// Validate and build the metadata.
    pub fn build(&self) -> Result<ArrayMetadata, MetadataError> {
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
        let inner_codecs = self
            .codecs
            .clone()
            .unwrap_or_else(|| self.default_inner_codecs());
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
        ArrayMetadata::parse(&am.to_json(), "<new array>")
    }
}
