//! [`CodecSpec`]: one codec of a chain as plain data (name and configuration), with
//! constructors for the codecs zarrflow creates. Users build and read codec chains with it;
//! zarrs' metadata type stays inside the metadata layer.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use zarrs::metadata::v3::MetadataV3;

/// One codec of a chain: its name and configuration, as in `zarr.json`.
///
/// ```
/// use zarrflow::metadata::CodecSpec;
/// let chain = [CodecSpec::bytes(), CodecSpec::gzip(6)];
/// assert_eq!(chain[1].name, "gzip");
/// assert_eq!(chain[1].configuration.as_ref().unwrap()["level"], 6);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodecSpec {
    /// The codec's name (`"bytes"`, `"zstd"`, `"sharding_indexed"`, ...).
    pub name: String,
    /// Its configuration; `None` for codecs without one (`crc32c`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<Map<String, Value>>,
}

impl CodecSpec {
    /// A codec by name with a configuration (a JSON object; anything else means none).
    pub fn new(name: impl Into<String>, configuration: Value) -> Self {
        let configuration = match configuration {
            Value::Object(o) if !o.is_empty() => Some(o),
            _ => None,
        };
        CodecSpec {
            name: name.into(),
            configuration,
        }
    }

    /// `bytes`, little-endian (the array-to-bytes codec of every chain zarrflow creates).
    pub fn bytes() -> Self {
        CodecSpec::new("bytes", json!({"endian": "little"}))
    }

    /// `zstd` at `level` (-131072..=22), without a checksum.
    pub fn zstd(level: i32) -> Self {
        CodecSpec::new("zstd", json!({"level": level, "checksum": false}))
    }

    /// `gzip` at `level` (0..=9).
    pub fn gzip(level: u32) -> Self {
        CodecSpec::new("gzip", json!({"level": level}))
    }

    /// `blosc` with compressor `cname` (`blosclz`, `lz4`, `lz4hc`, `zlib`, `zstd`) at `clevel`
    /// (0..=9); byte shuffle for elements wider than one byte, bit shuffle otherwise.
    pub fn blosc(cname: &str, clevel: u32, element_size: usize) -> Self {
        let shuffle = if element_size > 1 {
            "shuffle"
        } else {
            "bitshuffle"
        };
        CodecSpec::new(
            "blosc",
            json!({"cname": cname, "clevel": clevel, "shuffle": shuffle,
                   "typesize": element_size, "blocksize": 0}),
        )
    }

    /// `blosc` with compressor `cname` at `clevel`, its type size and shuffle left for
    /// [`ArraySpec::build`](super::ArraySpec::build) to set from the size of the elements it
    /// compresses (the array's, or those the filters before `bytes` make; as
    /// [`blosc`](Self::blosc) would, and as zarr-python sets them): one codec list for
    /// arrays of several data types.
    pub fn blosc_per_array(cname: &str, clevel: u32) -> Self {
        CodecSpec::new(
            "blosc",
            json!({"cname": cname, "clevel": clevel, "blocksize": 0}),
        )
    }

    /// Fills in a `blosc` codec's type size and shuffle from `element_size` when they are
    /// missing (see [`blosc_per_array`](Self::blosc_per_array)); other codecs are unchanged.
    pub(crate) fn fit_to_element(mut self, element_size: usize) -> Self {
        if self.name == "blosc"
            && let Some(cfg) = &mut self.configuration
        {
            let fitted = CodecSpec::blosc("zstd", 0, element_size);
            let defaults = fitted.configuration.unwrap_or_default();
            for key in ["typesize", "shuffle"] {
                if !cfg.contains_key(key)
                    && let Some(v) = defaults.get(key)
                {
                    cfg.insert(key.into(), v.clone());
                }
            }
        }
        self
    }

    /// `crc32c` (a checksum appended to each chunk).
    pub fn crc32c() -> Self {
        CodecSpec::new("crc32c", Value::Null)
    }

    /// `transpose` with the permutation `order`.
    pub fn transpose(order: &[usize]) -> Self {
        CodecSpec::new("transpose", json!({"order": order}))
    }

    /// The `zarr.json` object form.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The zarrs metadata form (inside the metadata layer).
    pub(crate) fn to_metadata(&self) -> MetadataV3 {
        match &self.configuration {
            Some(cfg) => MetadataV3::new_with_configuration(self.name.clone(), cfg.clone()),
            None => MetadataV3::new(self.name.clone()),
        }
    }
}

impl From<&MetadataV3> for CodecSpec {
    fn from(m: &MetadataV3) -> Self {
        let configuration = m
            .configuration()
            .filter(|c| !c.is_empty())
            .map(|c| (**c).clone());
        CodecSpec {
            name: m.name().to_string(),
            configuration,
        }
    }
}

impl From<MetadataV3> for CodecSpec {
    fn from(m: MetadataV3) -> Self {
        CodecSpec::from(&m)
    }
}
