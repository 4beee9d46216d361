//! [`ArrayInfo`]: the facts about an array that users ask for, in one serialisable record.
//!
//! [`Array`](crate::array::Array)'s accessors and `zarrflow info --json` both read them from
//! here, so the library and the command line never disagree.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{ArrayMetadata, CodecSpec, DataType};

/// A description of an array: shape, data type, chunking, codecs, fill value, names and
/// attributes. Serialises to the object `zarrflow info --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ArrayInfo {
    /// Always `"array"`.
    pub node_type: &'static str,
    /// The Zarr format version of the metadata (2 or 3).
    pub zarr_format: u8,
    /// The array's shape.
    pub shape: Vec<u64>,
    /// The data type as written in `zarr.json` (a name, or an extension object).
    pub data_type: Value,
    /// The outer grid's chunk shape (the shard shape when sharded); `None` for a
    /// rectilinear grid.
    pub chunk_shape: Option<Vec<u64>>,
    /// The sharding codec's inner chunk shape; `None` when unsharded.
    pub inner_chunk_shape: Option<Vec<u64>>,
    /// Whether the chunks are shards (`sharding_indexed` in the codec chain).
    pub sharded: bool,
    /// The chunk grid as written in `zarr.json`.
    pub chunk_grid: Value,
    /// The chunk key encoding as written in `zarr.json`.
    pub chunk_key_encoding: Value,
    /// The fill value in its canonical `zarr.json` form.
    pub fill_value: Value,
    /// The codec chain (canonical object forms; sharding's configuration holds its inner
    /// chains).
    pub codecs: Vec<CodecSpec>,
    /// One optional name per dimension, when the metadata names them.
    pub dimension_names: Option<Vec<Option<String>>>,
    /// User attributes.
    pub attributes: Map<String, Value>,
}

impl ArrayMetadata {
    /// The data type, when it is one zarrflow reads and writes.
    pub fn dtype(&self) -> Option<DataType> {
        DataType::from_metadata(&self.zarrs_metadata().data_type)
    }

    /// The outer grid's chunk shape (the shard shape when sharded), for a regular grid.
    pub fn shard_or_chunk_shape(&self) -> Option<&[u64]> {
        self.chunk_grid().regular_chunk_shape()
    }

    /// The sharding codec's inner chunk shape; `None` when unsharded.
    pub fn inner_chunk_shape(&self) -> Option<&[u64]> {
        self.codecs()
            .sharding()
            .map(|s| s.config().chunk_shape.as_slice())
    }

    /// The codec chain as [`CodecSpec`]s, in canonical form.
    pub fn codec_specs(&self) -> Vec<CodecSpec> {
        let doc = self.to_value();
        doc.get("codecs")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }

    /// The description of the array ([`ArrayInfo`]).
    pub fn info(&self) -> ArrayInfo {
        let doc = self.to_value();
        let field = |k: &str| doc.get(k).cloned().unwrap_or(Value::Null);
        ArrayInfo {
            node_type: "array",
            zarr_format: self.zarr_format().number(),
            shape: self.shape().to_vec(),
            data_type: field("data_type"),
            chunk_shape: self.shard_or_chunk_shape().map(<[u64]>::to_vec),
            inner_chunk_shape: self.inner_chunk_shape().map(<[u64]>::to_vec),
            sharded: self.codecs().sharding().is_some(),
            chunk_grid: field("chunk_grid"),
            chunk_key_encoding: field("chunk_key_encoding"),
            fill_value: field("fill_value"),
            codecs: self.codec_specs(),
            dimension_names: self.dimension_names().map(<[_]>::to_vec),
            attributes: self.attributes().clone(),
        }
    }
}
