//! `zarrflow create`, and the layout options shared with `copy`.

use serde_json::{Map, Value};
use zarrflow::hierarchy::{ArrayNode, HierarchyError};
use zarrflow::metadata::{ArraySpec, CodecSpec};
use zarrflow::store::StoreKey;
use zarrs::array::DataType;
use zarrs::metadata::v3::MetadataV3;

use crate::cli::{CreateArgs, IndexLocation, LayoutArgs};
use crate::error::{CliError, Result};
use crate::select::open_store;
use crate::tree::describe;
use crate::values::{bare_to_json, value_bytes};

/// Parses `100,200` (or `[100, 200]`; empty for rank 0) into a shape.
pub fn parse_shape(text: &str, option: &str) -> Result<Vec<u64>> {
    let t = text.trim();
    let t = t
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(t)
        .trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    t.split(',')
        .map(|p| {
            p.trim().parse::<u64>().map_err(|_| {
                CliError::usage(format!(
                    "{option} `{text}`: `{}` is not a non-negative integer (expected e.g. 100,200)",
                    p.trim()
                ))
            })
        })
        .collect()
}

fn parse_level(codec: &str, text: &str, range: std::ops::RangeInclusive<i64>) -> Result<i64> {
    text.parse::<i64>()
        .ok()
        .filter(|l| range.contains(l))
        .ok_or_else(|| {
            CliError::usage(format!(
                "--codec {codec}: level `{text}` is not an integer in {}..={}",
                range.start(),
                range.end()
            ))
        })
}

/// The (inner) chunk codecs of `--codec`: `bytes` (little-endian) and a compressor. Blosc's
/// type size and shuffle follow `element_size`; without one (a copy of arrays of several
/// types) they are left for the copy engine to set per array.
pub fn parse_codec(text: &str, element_size: Option<usize>) -> Result<Vec<CodecSpec>> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    let mut codecs = vec![CodecSpec::bytes()];
    match parts.as_slice() {
        ["none"] => {}
        ["zstd", rest @ ..] if rest.len() <= 1 => {
            let level = match rest.first() {
                Some(l) => parse_level(text, l, -131072..=22)?,
                None => 0,
            };
            codecs.push(CodecSpec::zstd(level as i32));
        }
        ["gzip", rest @ ..] if rest.len() <= 1 => {
            let level = match rest.first() {
                Some(l) => parse_level(text, l, 0..=9)?,
                None => 5,
            };
            codecs.push(CodecSpec::gzip(level as u32));
        }
        ["blosc", rest @ ..] if rest.len() <= 2 => {
            let cname = rest.first().copied().unwrap_or("zstd");
            if !["blosclz", "lz4", "lz4hc", "zlib", "zstd"].contains(&cname) {
                return Err(CliError::usage(format!(
                    "--codec {text}: unknown blosc compressor `{cname}` (blosclz, lz4, lz4hc, \
                     zlib or zstd)"
                )));
            }
            let level = match rest.get(1) {
                Some(l) => parse_level(text, l, 0..=9)?,
                None => 5,
            } as u32;
            codecs.push(match element_size {
                Some(size) => CodecSpec::blosc(cname, level, size),
                None => CodecSpec::blosc_per_array(cname, level),
            });
        }
        _ => {
            return Err(CliError::usage(format!(
                "--codec `{text}`: expected zstd[:LEVEL], gzip[:LEVEL], blosc[:CNAME[:LEVEL]] \
                 or none"
            )));
        }
    }
    Ok(codecs)
}

/// The data type of a name, with a one-line error naming it.
pub fn data_type_of(meta: &MetadataV3) -> Result<DataType> {
    DataType::from_metadata(meta)
        .map_err(|e| CliError::usage(format!("unsupported data type `{}`: {e}", meta.name())))
}

/// Applies `--chunks`, `--shards`, `--codec` and `--index-location` to a spec.
///
/// Without `--shards` the array is unsharded with `--chunks` as its chunk shape (the whole
/// array when absent). With `--shards`, `--chunks` is the inner chunk shape (the shard shape
/// when absent).
pub fn apply_layout(
    mut spec: ArraySpec,
    layout: &LayoutArgs,
    element_size: usize,
) -> Result<ArraySpec> {
    let chunks = layout
        .chunks
        .as_deref()
        .map(|c| parse_shape(c, "--chunks"))
        .transpose()?;
    let shards = layout
        .shards
        .as_deref()
        .map(|s| parse_shape(s, "--shards"))
        .transpose()?;
    match (shards, chunks) {
        (Some(shards), chunks) => {
            let inner = chunks.unwrap_or_else(|| shards.clone());
            spec = spec.shard_shape(shards).inner_chunk_shape(inner);
        }
        (None, Some(chunks)) => {
            spec = spec.shard_shape(chunks);
            spec.inner_chunk_shape = None;
        }
        (None, None) => {}
    }
    if let Some(codec) = &layout.codec {
        spec = spec.codecs(parse_codec(codec, Some(element_size))?);
    }
    if let Some(loc) = layout.index_location {
        if spec.inner_chunk_shape.is_none() {
            return Err(CliError::usage(
                "--index-location applies to sharded arrays only (give --shards)",
            ));
        }
        spec = spec.index_at_start(loc == IndexLocation::Start);
    }
    Ok(spec)
}

/// Parses `--dimension-names`: `y,x` (an empty name is null) or a JSON list.
pub fn parse_dimension_names(text: &str, rank: usize) -> Result<Vec<Option<String>>> {
    let t = text.trim();
    if t.starts_with('[') {
        return serde_json::from_str::<Vec<Option<String>>>(t).map_err(|e| {
            CliError::usage(format!(
                "--dimension-names `{text}`: not a JSON list of strings and nulls: {e}"
            ))
        });
    }
    if t.is_empty() && rank == 0 {
        return Ok(Vec::new());
    }
    Ok(t.split(',')
        .map(|n| {
            let n = n.trim();
            (!n.is_empty()).then(|| n.to_string())
        })
        .collect())
}

/// Parses `--attributes` (a JSON object).
pub fn parse_attributes(text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(other) => Err(CliError::usage(format!(
            "--attributes must be a JSON object, not {other}"
        ))),
        Err(e) => Err(CliError::usage(format!(
            "--attributes `{text}` is not valid JSON: {e}"
        ))),
    }
}

/// Runs `zarrflow create`.
pub async fn run(args: CreateArgs) -> Result<()> {
    let shape = parse_shape(&args.shape, "--shape")?;
    let rank = shape.len();
    let mut spec = ArraySpec::new(shape, &args.dtype);
    let data_type = data_type_of(&spec.data_type)?;
    let size = data_type.fixed_size().ok_or_else(|| {
        CliError::usage(format!(
            "data type {} has variable-length elements, which are not supported",
            args.dtype
        ))
    })?;
    spec = apply_layout(spec, &args.layout, size)?;
    if let Some(fill) = &args.fill_value {
        value_bytes(&data_type, &args.dtype, fill).map_err(|e| e.context("--fill-value"))?;
        spec = spec.fill_value(bare_to_json(fill))?;
    }
    if let Some(names) = &args.dimension_names {
        spec = spec.dimension_names(parse_dimension_names(names, rank)?);
    }
    if let Some(attrs) = &args.attributes {
        spec = spec.attributes(parse_attributes(attrs)?);
    }
    // validate everything before touching the store
    spec.build().map_err(|e| CliError::usage(e.to_string()))?;
    let store = open_store(&args.url)?;
    let node = ArrayNode::create(&store, &StoreKey::root(), &spec, args.overwrite)
        .await
        .map_err(|e| match e {
            HierarchyError::AlreadyExists { .. } => CliError::new(format!(
                "a node already exists at {} (use --overwrite to replace it)",
                store.url()
            )),
            e => e.into(),
        })?;
    println!("created {}  {}", store.url(), describe(node.metadata()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(parse_shape("100,200", "--shape").unwrap(), vec![100, 200]);
        assert_eq!(parse_shape(" [3, 4] ", "--shape").unwrap(), vec![3, 4]);
        assert_eq!(parse_shape("", "--shape").unwrap(), Vec::<u64>::new());
        assert_eq!(parse_shape("0", "--shape").unwrap(), vec![0]);
        let e = parse_shape("10,-2", "--shape").unwrap_err();
        assert!(e.to_string().contains("`-2`"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn codecs() {
        let c = parse_codec("zstd:5", Some(4)).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].name, "zstd");
        assert_eq!(parse_codec("none", Some(4)).unwrap().len(), 1);
        let b = parse_codec("blosc:lz4:9", Some(2)).unwrap();
        let cfg = b[1].to_value();
        assert_eq!(cfg["configuration"]["cname"], "lz4");
        assert_eq!(cfg["configuration"]["typesize"], 2);
        let per_array = parse_codec("blosc:lz4:9", None).unwrap();
        assert!(
            per_array[1].to_value()["configuration"]
                .get("typesize")
                .is_none()
        );
        assert!(parse_codec("gzip:12", Some(4)).is_err());
        assert!(parse_codec("blosc:snappy", Some(4)).is_err());
        assert!(parse_codec("lzma", Some(4)).is_err());
    }

    #[test]
    fn layouts() {
        let shards = LayoutArgs {
            chunks: Some("10,20".into()),
            shards: Some("50,100".into()),
            ..Default::default()
        };
        let spec = apply_layout(ArraySpec::new(vec![100, 200], "float32"), &shards, 4).unwrap();
        assert_eq!(spec.shard_shape, Some(vec![50, 100]));
        assert_eq!(spec.inner_chunk_shape, Some(vec![10, 20]));
        let chunks = LayoutArgs {
            chunks: Some("10,20".into()),
            ..Default::default()
        };
        let spec = apply_layout(ArraySpec::new(vec![100, 200], "float32"), &chunks, 4).unwrap();
        assert_eq!(spec.shard_shape, Some(vec![10, 20]));
        assert_eq!(spec.inner_chunk_shape, None);
        let bad = LayoutArgs {
            index_location: Some(IndexLocation::Start),
            ..Default::default()
        };
        assert!(apply_layout(ArraySpec::new(vec![1], "int8"), &bad, 1).is_err());
    }

    #[test]
    fn names_and_attributes() {
        assert_eq!(
            parse_dimension_names("y,,x", 3).unwrap(),
            vec![Some("y".into()), None, Some("x".into())]
        );
        assert_eq!(
            parse_dimension_names(r#"["a", null]"#, 2).unwrap(),
            vec![Some("a".into()), None]
        );
        assert!(parse_dimension_names("", 0).unwrap().is_empty());
        assert!(parse_attributes("[1]").is_err());
        assert!(parse_attributes("{").is_err());
        assert_eq!(parse_attributes(r#"{"a": 1}"#).unwrap()["a"], 1);
    }
}
