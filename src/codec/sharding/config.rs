//! The `sharding_indexed` configuration: inner chunk shape, inner and index codecs, index
//! location.

use crate::codec::CodecError;
use zarrs::metadata::v3::MetadataV3;

/// Where the index sits in a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexLocation {
    /// Before the inner chunks.
    Start,
    /// After the inner chunks (the default).
    #[default]
    End,
}

/// A parsed `sharding_indexed` configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardingConfig {
    /// Inner chunk shape.
    pub chunk_shape: Vec<u64>,
    /// Codecs of the inner chunks.
    pub codecs: Vec<MetadataV3>,
    /// Codecs of the index.
    pub index_codecs: Vec<MetadataV3>,
    /// Index location.
    pub index_location: IndexLocation,
}

impl ShardingConfig {
    /// Parse the `configuration` of a `sharding_indexed` codec; `field` names it in errors
    /// (e.g. `codecs[0]`).
    pub fn from_metadata(meta: &MetadataV3, field: &str) -> Result<Self, CodecError> {
        let invalid = |sub: &str, reason: String| CodecError::InvalidConfiguration {
            field: format!("{field}.configuration{sub}"),
            reason,
        };
        let cfg = meta
            .configuration()
            .ok_or_else(|| invalid("", "sharding_indexed requires a configuration".into()))?;
        for k in cfg.keys() {
            if !matches!(
                k.as_str(),
                "chunk_shape" | "codecs" | "index_codecs" | "index_location"
            ) {
                return Err(invalid(&format!(".{k}"), "unknown field".into()));
            }
        }
        let chunk_shape: Vec<u64> = cfg
            .get("chunk_shape")
            .ok_or_else(|| invalid(".chunk_shape", "missing".into()))
            .and_then(|v| {
                serde_json::from_value(v.clone())
                    .map_err(|e| invalid(".chunk_shape", e.to_string()))
            })?;
        if chunk_shape.contains(&0) {
            return Err(invalid(
                ".chunk_shape",
                "inner chunk sizes must be >= 1".into(),
            ));
        }
        let list = |name: &str| -> Result<Vec<MetadataV3>, CodecError> {
            let v = cfg
                .get(name)
                .ok_or_else(|| invalid(&format!(".{name}"), "missing".into()))?;
            let l: Vec<MetadataV3> = serde_json::from_value(v.clone())
                .map_err(|e| invalid(&format!(".{name}"), e.to_string()))?;
            if l.is_empty() {
                return Err(invalid(&format!(".{name}"), "must not be empty".into()));
            }
            Ok(l)
        };
        let codecs = list("codecs")?;
        let index_codecs = list("index_codecs")?;
        let index_location = match cfg.get("index_location") {
            None => IndexLocation::End,
            Some(v) => match v.as_str() {
                Some("end") => IndexLocation::End,
                Some("start") => IndexLocation::Start,
                _ => {
                    return Err(invalid(
                        ".index_location",
                        format!(
                            "must be \"start\" or \"end\", got {}",
                            crate::index::json::excerpt(v)
                        ),
                    ));
                }
            },
        };
        Ok(ShardingConfig {
            chunk_shape,
            codecs,
            index_codecs,
            index_location,
        })
    }

    /// The canonical metadata of this configuration.
    pub fn to_metadata(&self) -> MetadataV3 {
        let mut cfg = serde_json::Map::new();
        cfg.insert("chunk_shape".into(), serde_json::json!(self.chunk_shape));
        cfg.insert("codecs".into(), serde_json::json!(self.codecs));
        cfg.insert("index_codecs".into(), serde_json::json!(self.index_codecs));
        cfg.insert(
            "index_location".into(),
            serde_json::json!(match self.index_location {
                IndexLocation::Start => "start",
                IndexLocation::End => "end",
            }),
        );
        MetadataV3::new_with_configuration("sharding_indexed", cfg)
    }
}
