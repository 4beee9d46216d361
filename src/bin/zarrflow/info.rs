//! `zarrflow info`: describe a node.

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};
use serde_json::{Map, Value, json};
use zarrflow::hierarchy::{Group, Node, NodeKind, open_node};
use zarrflow::metadata::{ArrayMetadata, ZARR_JSON, ZARRAY, ZATTRS, ZGROUP};
use zarrflow::store::{Store, StoreKey};

use crate::cli::InfoArgs;
use crate::count::Count;
use crate::error::{CliError, Result};
use crate::select::open_store;

/// Runs `zarrflow info`.
pub async fn run(args: InfoArgs) -> Result<()> {
    let store = open_store(&args.url)?;
    let node = open_node(&store, &StoreKey::root()).await?;
    let mut out = match &node {
        Node::Array(a) => array_json(a.metadata()),
        Node::Group(g) => group_json(g).await?,
    };
    if args.stats
        && let Node::Array(a) = &node
    {
        let stats = stats_json(&store, a.metadata()).await?;
        out.insert("stats".into(), stats);
    }
    if args.json {
        let doc = serde_json::to_string_pretty(&Value::Object(out))?;
        crate::output::print(&format!("{doc}\n"))
    } else {
        crate::output::print(&text(&out))
    }
}

/// The JSON description of an array: the library's [`ArrayMetadata::info`], so that the
/// command line and `Array`'s accessors report the same facts.
pub fn array_json(meta: &ArrayMetadata) -> Map<String, Value> {
    match serde_json::to_value(meta.info()) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    }
}

async fn group_json(g: &Group) -> Result<Map<String, Value>> {
    let children = g.children().await?;
    let mut o = Map::new();
    o.insert("node_type".into(), json!("group"));
    o.insert(
        "zarr_format".into(),
        json!(g.metadata().zarr_format.number()),
    );
    o.insert("attributes".into(), Value::Object(g.attributes().clone()));
    o.insert(
        "children".into(),
        Value::Array(
            children
                .into_iter()
                .map(|(name, kind)| {
                    json!({"name": name, "node_type": match kind {
                        NodeKind::Array => "array",
                        NodeKind::Group => "group",
                    }})
                })
                .collect(),
        ),
    );
    o.insert(
        "consolidated".into(),
        json!(g.metadata().consolidated.is_some()),
    );
    if let Some(nodes) = &g.metadata().consolidated {
        o.insert("consolidated_nodes".into(), json!(nodes.len()));
    }
    Ok(o)
}

/// The object-store path of a store's root (the store URL's path, as `object_store` parses it).
fn root_path(store: &Store) -> Result<Path> {
    let url = url::Url::parse(store.url())
        .map_err(|e| CliError::new(format!("store URL {}: {e}", store.url())))?;
    let (_, path) = ObjectStoreScheme::parse(&url)
        .map_err(|e| CliError::new(format!("store URL {}: {e}", store.url())))?;
    Ok(path)
}

/// Number and bytes of the stored chunks (or shards), by one recursive listing.
async fn stats_json(store: &Store, meta: &ArrayMetadata) -> Result<Value> {
    let root = root_path(store)?;
    let prefix = (!root.as_ref().is_empty()).then_some(&root);
    let metas: Vec<_> = store
        .backend()
        .list(prefix)
        .try_collect()
        .await
        .map_err(|e| CliError::from(e).context(format!("listing {}", store.url())))?;
    let meta_docs: Vec<Path> = [ZARR_JSON, ZARRAY, ZATTRS, ZGROUP]
        .into_iter()
        .map(|name| root.clone().join(name))
        .collect();
    let (mut count, mut bytes) = (0u64, 0u128);
    for m in &metas {
        if !meta_docs.contains(&m.location) {
            count += 1;
            bytes += u128::from(m.size);
        }
    }
    let grid = Count::of_shape(&meta.chunk_grid().grid_shape(meta.shape()));
    let unit = if meta.codecs().sharding().is_some() {
        "shard"
    } else {
        "chunk"
    };
    Ok(json!({
        "unit": unit,
        "stored": count,
        "grid": exact_json(grid),
        "stored_bytes": exact_json(Count::Exact(bytes)),
    }))
}

/// A count as a JSON number when it fits in `u64`, else as its exact decimal string.
fn exact_json(count: Count) -> Value {
    match count.as_u64() {
        Some(n) => json!(n),
        None => json!(count.to_string()),
    }
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn shape_text(v: &Value) -> String {
    match v {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(compact).collect::<Vec<_>>().join(", ")
        ),
        v => compact(v),
    }
}

/// A codec list as `name(key=value, ...)` items; sharding shows its inner list.
fn codecs_text(v: &Value) -> String {
    let Value::Array(codecs) = v else {
        return compact(v);
    };
    codecs
        .iter()
        .map(|c| {
            let name = c.get("name").map(compact).unwrap_or_default();
            let cfg = c.get("configuration").and_then(Value::as_object);
            let parts: Vec<String> = cfg
                .map(|cfg| {
                    cfg.iter()
                        .map(|(k, v)| match k.as_str() {
                            "codecs" | "index_codecs" => format!("{k}=[{}]", codecs_text(v)),
                            "chunk_shape" => format!("{k}={}", shape_text(v)),
                            _ => format!("{k}={}", compact(v)),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if parts.is_empty() {
                name
            } else {
                format!("{name}({})", parts.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {} ({n} bytes)", UNITS[u])
    }
}

/// The human-readable form of the description.
fn text(o: &Map<String, Value>) -> String {
    let get = |k: &str| o.get(k).cloned().unwrap_or(Value::Null);
    let mut lines = Vec::new();
    let mut line = |k: &str, v: String| lines.push(format!("{k:<19} {v}"));
    line("node_type", compact(&get("node_type")));
    line("zarr_format", compact(&get("zarr_format")));
    if get("node_type") == json!("array") {
        line("shape", shape_text(&get("shape")));
        line("data_type", compact(&get("data_type")));
        let sharded = get("sharded") == json!(true);
        let grid = get("chunk_shape");
        let grid_text = if grid.is_null() {
            compact(&get("chunk_grid"))
        } else {
            shape_text(&grid)
        };
        if sharded {
            line("shard_shape", grid_text);
            line("inner_chunk_shape", shape_text(&get("inner_chunk_shape")));
        } else {
            line("chunk_shape", grid_text);
        }
        line("codecs", codecs_text(&get("codecs")));
        // a string or bytes array's fill value is text: shown quoted ("" is visible)
        let fill = get("fill_value");
        let variable = matches!(
            get("data_type").as_str(),
            Some("string" | "bytes" | "variable_length_bytes")
        );
        line(
            "fill_value",
            if variable {
                fill.to_string()
            } else {
                compact(&fill)
            },
        );
        line("chunk_key_encoding", compact(&get("chunk_key_encoding")));
        line("dimension_names", compact(&get("dimension_names")));
        line("attributes", compact(&get("attributes")));
        if let Some(s) = o.get("stats") {
            let unit = s.get("unit").map(compact).unwrap_or_default();
            let stored = s.get("stored").and_then(Value::as_u64).unwrap_or(0);
            let grid = s.get("grid").map(compact).unwrap_or_default();
            let bytes = match s.get("stored_bytes").and_then(Value::as_u64) {
                Some(n) => human_bytes(n),
                None => format!(
                    "{} bytes",
                    s.get("stored_bytes").map(compact).unwrap_or_default()
                ),
            };
            line(
                &format!("stored {unit}s"),
                format!("{stored} of {grid}, {bytes}"),
            );
        }
    } else {
        line("attributes", compact(&get("attributes")));
        let children = match get("children") {
            Value::Array(c) => c
                .iter()
                .map(|c| {
                    let name = c.get("name").map(compact).unwrap_or_default();
                    if c.get("node_type") == Some(&json!("group")) {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
            _ => String::new(),
        };
        line("children", children);
        let consolidated = match get("consolidated_nodes") {
            Value::Number(n) => format!("yes, {n} node(s): children and tree are read from it"),
            _ => "no".into(),
        };
        line("consolidated", consolidated);
    }
    let mut s = lines.join("\n");
    s.push('\n');
    s
}
