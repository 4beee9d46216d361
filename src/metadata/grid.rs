//! Chunk grids (`regular`, `rectilinear`) and chunk key encodings (`default`, `v2`).
//!
//! Rectilinear grids stay in run-length form ([`RectilinearGrid`]): a document of a few
//! bytes declaring `[[1, 1000000000000]]` costs one run, never one integer per edge.

use std::sync::Arc;

use super::MetadataError;
use crate::grid::{DimensionGrid, GridError, RectilinearGrid, RegularGrid};
use serde_json::{Map, Value, json};
use zarrs::metadata::v3::MetadataV3;

/// A chunk grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkGridSpec {
    /// `regular`: one chunk shape; edge chunks keep the full shape.
    Regular {
        /// The chunk shape.
        chunk_shape: Vec<u64>,
    },
    /// `rectilinear` (zarr-extensions): explicit chunk edges per dimension.
    Rectilinear {
        /// One grid per dimension, its edges as run-length pairs (they cover at least the
        /// extent; edges wholly past it are dropped).
        dimensions: Vec<RectilinearGrid>,
        /// The `chunk_shapes` value as read (kept for writing back).
        chunk_shapes: Value,
    },
}

impl ChunkGridSpec {
    /// Parse the `chunk_grid` field for an array of `shape`.
    pub fn from_metadata(
        meta: &MetadataV3,
        shape: &[u64],
        key: &str,
    ) -> Result<Self, MetadataError> {
        let invalid = |field: &str, reason: String| MetadataError::InvalidField {
            key: key.to_string(),
            field: format!("chunk_grid{field}"),
            reason,
        };
        let empty = Map::new();
        let cfg = meta.configuration().map(|c| &**c).unwrap_or(&empty);
        match meta.name() {
            "regular" => {
                check_keys(cfg, &["chunk_shape"], key, "chunk_grid.configuration")?;
                let v = cfg
                    .get("chunk_shape")
                    .ok_or_else(|| invalid(".configuration.chunk_shape", "missing".into()))?;
                let chunk_shape: Vec<u64> = serde_json::from_value(v.clone())
                    .map_err(|e| invalid(".configuration.chunk_shape", e.to_string()))?;
                if chunk_shape.len() != shape.len() {
                    return Err(invalid(
                        ".configuration.chunk_shape",
                        format!(
                            "rank {} does not match shape rank {}",
                            chunk_shape.len(),
                            shape.len()
                        ),
                    ));
                }
                if chunk_shape.contains(&0) {
                    return Err(invalid(
                        ".configuration.chunk_shape",
                        "chunk sizes must be >= 1".into(),
                    ));
                }
                Ok(ChunkGridSpec::Regular { chunk_shape })
            }
            "rectilinear" => {
                check_keys(
                    cfg,
                    &["kind", "chunk_shapes"],
                    key,
                    "chunk_grid.configuration",
                )?;
                match cfg.get("kind").and_then(Value::as_str) {
                    Some("inline") => {}
                    other => {
                        return Err(invalid(
                            ".configuration.kind",
                            format!("expected \"inline\", got {other:?}"),
                        ));
                    }
                }
                let cs = cfg
                    .get("chunk_shapes")
                    .ok_or_else(|| invalid(".configuration.chunk_shapes", "missing".into()))?;
                let dims = cs.as_array().ok_or_else(|| {
                    invalid(".configuration.chunk_shapes", "must be a list".into())
                })?;
                if dims.len() != shape.len() {
                    return Err(invalid(
                        ".configuration.chunk_shapes",
                        format!(
                            "{} entries for an array of rank {}",
                            dims.len(),
                            shape.len()
                        ),
                    ));
                }
                let mut dimensions = Vec::with_capacity(dims.len());
                for (d, (spec, &extent)) in dims.iter().zip(shape).enumerate() {
                    let f = format!(".configuration.chunk_shapes[{d}]");
                    let grid = RectilinearGrid::from_json(spec, extent).map_err(|e| {
                        invalid(
                            &f,
                            match e {
                                GridError::Invalid(r) => r,
                                e => e.to_string(),
                            },
                        )
                    })?;
                    dimensions.push(grid);
                }
                Ok(ChunkGridSpec::Rectilinear {
                    dimensions,
                    chunk_shapes: cs.clone(),
                })
            }
            other => Err(MetadataError::UnsupportedChunkGrid {
                key: key.to_string(),
                name: other.to_string(),
            }),
        }
    }

    /// Canonical metadata.
    pub fn to_value(&self) -> Value {
        match self {
            ChunkGridSpec::Regular { chunk_shape } => {
                json!({"name": "regular", "configuration": {"chunk_shape": chunk_shape}})
            }
            ChunkGridSpec::Rectilinear { chunk_shapes, .. } => {
                json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}})
            }
        }
    }

    /// Number of chunks per dimension for an array of `shape`.
    pub fn grid_shape(&self, shape: &[u64]) -> Vec<u64> {
        match self {
            ChunkGridSpec::Regular { chunk_shape } => shape
                .iter()
                .zip(chunk_shape)
                .map(|(s, c)| s.div_ceil(*c))
                .collect(),
            ChunkGridSpec::Rectilinear { dimensions, .. } => {
                dimensions.iter().map(RectilinearGrid::num_chunks).collect()
            }
        }
    }

    /// The (full) shape of the chunk at grid coordinates `coords`, `None` when out of range.
    pub fn chunk_shape(&self, coords: &[u64]) -> Option<Vec<u64>> {
        match self {
            ChunkGridSpec::Regular { chunk_shape } => {
                (coords.len() == chunk_shape.len()).then(|| chunk_shape.clone())
            }
            ChunkGridSpec::Rectilinear { dimensions, .. } => {
                if coords.len() != dimensions.len() {
                    return None;
                }
                coords
                    .iter()
                    .zip(dimensions)
                    .map(|(&c, g)| g.chunk_size(i64::try_from(c).ok()?).ok())
                    .collect()
            }
        }
    }

    /// The largest chunk shape of the grid (per dimension, the largest edge holding data;
    /// every chunk's byte size is at most this one's).
    pub fn max_chunk_shape(&self) -> Vec<u64> {
        match self {
            ChunkGridSpec::Regular { chunk_shape } => chunk_shape.clone(),
            ChunkGridSpec::Rectilinear { dimensions, .. } => dimensions
                .iter()
                .map(|g| g.distinct_sizes().last().copied().unwrap_or(1))
                .collect(),
        }
    }

    /// One planner grid per dimension for an array of `shape`; the error names the
    /// dimension.
    pub fn dimension_grids(
        &self,
        shape: &[u64],
    ) -> Result<Vec<Arc<dyn DimensionGrid>>, (usize, GridError)> {
        match self {
            ChunkGridSpec::Regular { chunk_shape } => chunk_shape
                .iter()
                .zip(shape)
                .enumerate()
                .map(|(d, (&c, &n))| {
                    RegularGrid::new(c, n)
                        .map(|g| Arc::new(g) as Arc<dyn DimensionGrid>)
                        .map_err(|e| (d, e))
                })
                .collect(),
            ChunkGridSpec::Rectilinear { dimensions, .. } => Ok(dimensions
                .iter()
                .map(|g| Arc::new(g.clone()) as Arc<dyn DimensionGrid>)
                .collect()),
        }
    }

    /// The regular chunk shape, if the grid is regular.
    pub fn regular_chunk_shape(&self) -> Option<&[u64]> {
        match self {
            ChunkGridSpec::Regular { chunk_shape } => Some(chunk_shape),
            ChunkGridSpec::Rectilinear { .. } => None,
        }
    }
}

/// A chunk key encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKeyEncodingSpec {
    /// `default`: `c/1/2` (or `c.1.2`); rank 0 → `c`.
    Default {
        /// Separator, `/` or `.`.
        separator: char,
    },
    /// `v2`: `1.2` (or `1/2`); rank 0 → `0`.
    V2 {
        /// Separator, `.` or `/`.
        separator: char,
    },
}

impl Default for ChunkKeyEncodingSpec {
    fn default() -> Self {
        ChunkKeyEncodingSpec::Default { separator: '/' }
    }
}

impl ChunkKeyEncodingSpec {
    /// Parse the `chunk_key_encoding` field.
    pub fn from_metadata(meta: &MetadataV3, key: &str) -> Result<Self, MetadataError> {
        let empty = Map::new();
        let cfg = meta.configuration().map(|c| &**c).unwrap_or(&empty);
        let (default_sep, is_default) = match meta.name() {
            "default" => ('/', true),
            "v2" => ('.', false),
            other => {
                return Err(MetadataError::UnsupportedChunkKeyEncoding {
                    key: key.to_string(),
                    name: other.to_string(),
                });
            }
        };
        check_keys(cfg, &["separator"], key, "chunk_key_encoding.configuration")?;
        let separator = match cfg.get("separator") {
            None => default_sep,
            Some(v) => match v.as_str() {
                Some("/") => '/',
                Some(".") => '.',
                _ => {
                    return Err(MetadataError::InvalidField {
                        key: key.to_string(),
                        field: "chunk_key_encoding.configuration.separator".into(),
                        reason: format!(
                            "must be \"/\" or \".\", got {}",
                            crate::index::json::excerpt(v)
                        ),
                    });
                }
            },
        };
        Ok(if is_default {
            ChunkKeyEncodingSpec::Default { separator }
        } else {
            ChunkKeyEncodingSpec::V2 { separator }
        })
    }

    /// Canonical metadata (configuration always written).
    pub fn to_value(&self) -> Value {
        let (name, sep) = match self {
            ChunkKeyEncodingSpec::Default { separator } => ("default", separator),
            ChunkKeyEncodingSpec::V2 { separator } => ("v2", separator),
        };
        json!({"name": name, "configuration": {"separator": sep.to_string()}})
    }

    /// The key of chunk `coords`, relative to the array prefix.
    pub fn encode(&self, coords: &[u64]) -> String {
        let join = |sep: char| {
            coords
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(&sep.to_string())
        };
        match *self {
            ChunkKeyEncodingSpec::Default { separator } => {
                if coords.is_empty() {
                    "c".to_string()
                } else {
                    format!("c{separator}{}", join(separator))
                }
            }
            ChunkKeyEncodingSpec::V2 { separator } => {
                if coords.is_empty() {
                    "0".to_string()
                } else {
                    join(separator)
                }
            }
        }
    }
}

pub(crate) fn check_keys(
    cfg: &Map<String, Value>,
    allowed: &[&str],
    key: &str,
    field: &str,
) -> Result<(), MetadataError> {
    for k in cfg.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(MetadataError::UnknownField {
                key: key.to_string(),
                field: format!("{field}.{k}"),
            });
        }
    }
    Ok(())
}
