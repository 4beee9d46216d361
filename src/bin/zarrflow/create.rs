//! `zarrflow create`, and the layout options shared with `copy`.

use zarrflow::hierarchy::{ArrayNode, HierarchyError};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::StoreKey;

use crate::cli::{CreateArgs, IndexLocation, LayoutArgs};
use crate::error::{CliError, Result};
use crate::parse::{bare_to_json, check_data_type_name, data_type_of, value_bytes};
use crate::select::open_store;
use crate::tree::describe;

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
    let chunks = layout.chunks.as_ref().map(|c| c.0.clone());
    let shards = layout.shards.as_ref().map(|s| s.0.clone());
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
        spec = spec.codecs(codec.codecs(Some(element_size)));
    }
    if let Some(n) = layout.zarr_format {
        let format = zarrflow::ZarrFormat::from_number(n.into())
            .ok_or_else(|| CliError::usage(format!("--zarr-format {n}: give 2 or 3")))?;
        if format == zarrflow::ZarrFormat::V2 && spec.inner_chunk_shape.is_some() {
            return Err(CliError::usage(
                "--zarr-format 2 cannot hold sharding (give --chunks without --shards)",
            ));
        }
        spec = spec.zarr_format(format);
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

/// Runs `zarrflow create`.
pub async fn run(args: CreateArgs) -> Result<()> {
    let shape = args.shape.0;
    let rank = shape.len();
    check_data_type_name(&args.dtype)?;
    let mut spec = ArraySpec::new(shape, &args.dtype);
    let data_type = data_type_of(&spec.data_type)?;
    let variable = spec.dtype().filter(zarrflow::DataType::is_text);
    // a variable-length type's codecs take no element size (blosc's typesize: 1)
    let size = data_type.fixed_size().unwrap_or(1);
    spec = apply_layout(spec, &args.layout, size)?;
    if let Some(fill) = &args.fill_value {
        let json = match variable {
            Some(t) => {
                crate::vlen::fill_value_json(t, fill).map_err(|e| e.context("--fill-value"))?
            }
            None => {
                let bytes = value_bytes(&data_type, &args.dtype, fill)
                    .map_err(|e| e.context("--fill-value"))?;
                match spec.dtype().filter(|t| t.time_scale().is_some()) {
                    // a time value is stored as its count, as zarr-python writes it (NaT too)
                    Some(_) => {
                        serde_json::json!(i64::from_ne_bytes(bytes.try_into().unwrap_or([0; 8])))
                    }
                    None => bare_to_json(fill),
                }
            }
        };
        spec = spec.fill_value(json)?;
    }
    if let Some(names) = &args.dimension_names {
        spec = spec.dimension_names(names.for_rank(rank));
    }
    if let Some(attrs) = args.attributes {
        spec = spec.attributes(attrs);
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
    crate::output::print(&format!(
        "created {}  {}\n",
        store.url(),
        describe(node.metadata())
    ))
    .map_err(|e| e.context("the array was created, but printing so failed"))?;
    refresh_consolidated(&args.url, args.consolidate).await
}

/// After an array was created at `url`: with `consolidate`, refreshes the consolidated
/// metadata of the hierarchy it joined (every group above it that holds some, nearest
/// first, and the hierarchy's root group, which gets it if none had); without, names the
/// groups whose consolidated metadata does not list the new array, and what to run.
async fn refresh_consolidated(url: &str, consolidate: bool) -> Result<()> {
    let groups = crate::ancestors::groups_above(url).await;
    let root = groups.len().checked_sub(1);
    let stale: Vec<usize> = (0..groups.len())
        .filter(|&i| groups[i].1.uses_consolidated())
        .collect();
    if !consolidate {
        for &i in &stale {
            crate::output::eprint_line(&format!(
                "note: {} holds consolidated metadata, which does not list the new array: \
                 run `zarrflow consolidate {}` (or create with --consolidate)",
                groups[i].0, groups[i].0
            ));
        }
        return Ok(());
    }
    let Some(root) = root else {
        return Err(CliError::new(format!(
            "the array was created, but --consolidate found no group above {url} to hold \
             consolidated metadata (create the array inside a group, or run `zarrflow \
             consolidate` on one)"
        )));
    };
    let mut targets = stale;
    if !targets.contains(&root) {
        targets.push(root);
    }
    for i in targets {
        let (group_url, mut group) = (groups[i].0.clone(), groups[i].1.clone());
        let n = group.consolidate().await.map_err(|e| {
            CliError::from(e).context(format!(
                "the array was created, but consolidating {group_url} failed"
            ))
        })?;
        crate::output::print(&format!("consolidated {n} node(s) into {group_url}\n"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Shape;

    #[test]
    fn layouts() {
        let shards = LayoutArgs {
            chunks: Some(Shape(vec![10, 20])),
            shards: Some(Shape(vec![50, 100])),
            ..Default::default()
        };
        let spec = apply_layout(ArraySpec::new(vec![100, 200], "float32"), &shards, 4).unwrap();
        assert_eq!(spec.shard_shape, Some(vec![50, 100]));
        assert_eq!(spec.inner_chunk_shape, Some(vec![10, 20]));
        let chunks = LayoutArgs {
            chunks: Some(Shape(vec![10, 20])),
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
}
