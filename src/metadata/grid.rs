//! Chunk grids (`regular`, `rectilinear`) and chunk key encodings (`default`, `v2`).

use super::MetadataError;
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
        /// Expanded edge lengths per dimension (cover at least the extent).
        edges: Vec<Vec<u64>>,
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
                let mut edges = Vec::with_capacity(dims.len());
                for (d, (spec, &extent)) in dims.iter().zip(shape).enumerate() {
                    let f = format!(".configuration.chunk_shapes[{d}]");
                    edges.push(expand_edges(spec, extent).map_err(|r| invalid(&f, r))?);
                }
                Ok(ChunkGridSpec::Rectilinear {
                    edges,
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
            ChunkGridSpec::Rectilinear { edges, .. } => shape
                .iter()
                .zip(edges)
                .map(|(&s, e)| {
                    let mut acc = 0u64;
                    let mut n = 0u64;
                    for &v in e {
                        if acc >= s {
                            break;
                        }
                        acc += v;
                        n += 1;
                    }
                    n
                })
                .collect(),
        }
    }

    /// The (full) shape of the chunk at grid coordinates `coords`, `None` when out of range.
    pub fn chunk_shape(&self, coords: &[u64]) -> Option<Vec<u64>> {
        match self {
            ChunkGridSpec::Regular { chunk_shape } => {
                (coords.len() == chunk_shape.len()).then(|| chunk_shape.clone())
            }
            ChunkGridSpec::Rectilinear { edges, .. } => {
                if coords.len() != edges.len() {
                    return None;
                }
                coords
                    .iter()
                    .zip(edges)
                    .map(|(&c, e)| e.get(usize::try_from(c).ok()?).copied())
                    .collect()
            }
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

/// Expand one dimension of a rectilinear `chunk_shapes` entry.
fn expand_edges(spec: &Value, extent: u64) -> Result<Vec<u64>, String> {
    const MAX_EDGES: u64 = 1 << 26;
    if let Some(m) = spec.as_u64() {
        if m == 0 {
            return Err("chunk edge must be >= 1".into());
        }
        let n = extent.div_ceil(m);
        if n > MAX_EDGES {
            return Err(format!("{n} chunks exceed the limit of {MAX_EDGES}"));
        }
        return Ok(vec![m; n as usize]);
    }
    let list = spec
        .as_array()
        .ok_or_else(|| format!("expected an integer or a list, got {spec}"))?;
    let mut edges = Vec::new();
    for item in list {
        if let Some(v) = item.as_u64() {
            if v == 0 {
                return Err("chunk edge must be >= 1".into());
            }
            edges.push(v);
        } else if let Some(pair) = item.as_array() {
            let (Some(v), Some(n), 2) = (
                pair.first().and_then(Value::as_u64),
                pair.get(1).and_then(Value::as_u64),
                pair.len(),
            ) else {
                return Err(format!(
                    "run-length entry must be [value, count], got {item}"
                ));
            };
            if v == 0 {
                return Err("chunk edge must be >= 1".into());
            }
            if edges.len() as u64 + n > MAX_EDGES {
                return Err(format!("more than {MAX_EDGES} chunks"));
            }
            edges.extend(std::iter::repeat_n(v, n as usize));
        } else {
            return Err(format!("invalid edge entry {item}"));
        }
    }
    let total: u64 = edges.iter().fold(0u64, |a, &b| a.saturating_add(b));
    if total < extent {
        return Err(format!(
            "edges sum to {total}, less than the extent {extent}"
        ));
    }
    Ok(edges)
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
                        reason: format!("must be \"/\" or \".\", got {v}"),
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
