//! `zarrflow tree`: the hierarchy under a group.

use std::future::Future;
use std::pin::Pin;

use zarrflow::hierarchy::{Group, Node, open_node};
use zarrflow::metadata::ArrayMetadata;
use zarrflow::store::StoreKey;

use crate::cli::TreeArgs;
use crate::error::Result;
use crate::select::open_store;

/// Runs `zarrflow tree`.
pub async fn run(args: TreeArgs) -> Result<()> {
    let store = open_store(&args.url)?;
    let mut out = String::new();
    match open_node(&store, &StoreKey::root()).await? {
        Node::Array(a) => {
            out.push_str(&format!("{}  {}\n", store.url(), describe(a.metadata())));
        }
        Node::Group(g) => {
            out.push_str(&format!("{}  (group)\n", store.url()));
            walk(&g, String::new(), &mut out).await?;
        }
    }
    crate::output::print(&out)
}

/// `[shape] data_type`, plus the chunking.
pub fn describe(meta: &ArrayMetadata) -> String {
    let shape = meta
        .shape()
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let dt = meta.zarrs_metadata().data_type.name().to_string();
    let grid = meta
        .chunk_grid()
        .regular_chunk_shape()
        .map(|c| format!("{c:?}"))
        .unwrap_or_else(|| "rectilinear".into());
    let layout = match meta.codecs().sharding() {
        Some(s) => format!("shards {grid}, chunks {:?}", s.config().chunk_shape),
        None => format!("chunks {grid}"),
    };
    format!("[{shape}] {dt}  ({layout})")
}

fn walk<'a>(
    group: &'a Group,
    indent: String,
    out: &'a mut String,
) -> Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>> {
    Box::pin(async move {
        let children = group.children().await?;
        let n = children.len();
        for (i, (name, _)) in children.into_iter().enumerate() {
            let last = i + 1 == n;
            let branch = if last { "└── " } else { "├── " };
            match group.open_child(&name).await? {
                Node::Array(a) => {
                    out.push_str(&format!(
                        "{indent}{branch}{name}  {}\n",
                        describe(a.metadata())
                    ));
                }
                Node::Group(g) => {
                    out.push_str(&format!("{indent}{branch}{name}/\n"));
                    let deeper = format!("{indent}{}", if last { "    " } else { "│   " });
                    walk(&g, deeper, out).await?;
                }
            }
        }
        Ok(())
    })
}
