//! `zarrflow consolidate`: write or refresh the consolidated metadata of a group, as
//! zarr-python's `zarr.consolidate_metadata`.

use zarrflow::ZarrFormat;
use zarrflow::hierarchy::consolidate_metadata;
use zarrflow::metadata::{ZARR_JSON, ZMETADATA};
use zarrflow::store::StoreKey;

use crate::cli::ConsolidateArgs;
use crate::error::Result;
use crate::select::open_store;

/// Runs `zarrflow consolidate`.
pub async fn run(args: ConsolidateArgs) -> Result<()> {
    let store = open_store(&args.url)?;
    let (group, n) = consolidate_metadata(&store, &StoreKey::root()).await?;
    let doc = match group.metadata().zarr_format {
        ZarrFormat::V3 => ZARR_JSON,
        ZarrFormat::V2 => ZMETADATA,
    };
    let url = store.url_of(&StoreKey::new(doc)?);
    crate::output::print(&format!("consolidated {n} node(s) into {url}\n"))
        .map_err(|e| e.context("the metadata was consolidated, but printing so failed"))
}
