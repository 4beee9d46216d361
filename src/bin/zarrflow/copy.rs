//! `zarrflow copy`: copy an array or a hierarchy, re-chunking, re-sharding and re-encoding on
//! the way, through the library's [`zarrflow::copy`] engine (see its docs for the unit of work
//! and the memory bound), with a progress bar on a terminal.

use std::sync::Arc;
use std::time::Instant;

use zarrflow::copy::{CopyError, CopyOptions, Layout, plan_copy};

use crate::cli::{CopyArgs, IndexLocation, LayoutArgs};
use crate::error::{CliError, Result};
use crate::progress::Progress;
use crate::select::open_store;

/// Runs `zarrflow copy`.
pub async fn run(args: CopyArgs) -> Result<()> {
    let src = open_store(&args.src)?;
    let dst = open_store(&args.dst)?;
    let layout = layout_of(&args.layout)?;
    let plan = plan_copy(&src, &dst, &layout).await.map_err(cli_error)?;
    let (arrays, units, bytes) = (plan.arrays(), plan.units(), plan.bytes());
    let progress = Arc::new(Progress::new(units, bytes, args.quiet));
    let mut options = CopyOptions::default()
        .with_overwrite(args.overwrite)
        .with_consolidate(args.consolidate)
        .with_array_options(args.order.array_options());
    if let Some(jobs) = args.jobs {
        options = options.with_jobs(jobs);
    }
    let started = Instant::now();
    let bar = Arc::clone(&progress);
    let report = plan
        .run(&options, move |p| bar.set(p.units_done, p.bytes_done))
        .await;
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            progress.abandon();
            return Err(cli_error(e));
        }
    };
    progress.finish();
    let secs = started.elapsed().as_secs_f64();
    progress.println(&format!(
        "copied {arrays} array(s), {} shard(s), {} bytes in {secs:.1} s",
        report.units, report.bytes
    ));
    Ok(())
}

/// The library layout of the `--chunks`, `--shards`, `--codec` and `--index-location`
/// options (blosc's type size follows each array's element size).
fn layout_of(args: &LayoutArgs) -> Result<Layout> {
    let mut layout = Layout::keep();
    if let Some(s) = &args.shards {
        layout = layout.shards(s.0.clone());
    }
    if let Some(c) = &args.chunks {
        layout = layout.chunks(c.0.clone());
    }
    if let Some(c) = &args.codec {
        layout = layout.codecs(c.codecs(None));
    }
    if let Some(n) = args.zarr_format {
        let format = zarrflow::ZarrFormat::from_number(n.into())
            .ok_or_else(|| CliError::usage(format!("--zarr-format {n}: give 2 or 3")))?;
        layout = layout.zarr_format(format);
    }
    if let Some(loc) = args.index_location {
        if args.shards.is_none() {
            return Err(CliError::usage(
                "--index-location applies to sharded arrays only (give --shards)",
            ));
        }
        layout = layout.index_location(match loc {
            IndexLocation::Start => zarrflow::codec::IndexLocation::Start,
            IndexLocation::End => zarrflow::codec::IndexLocation::End,
        });
    }
    Ok(layout)
}

/// A copy error as the CLI reports it: layouts and locations that cannot work are usage
/// errors (exit 2), the rest failures (exit 1).
fn cli_error(e: CopyError) -> CliError {
    match e {
        CopyError::Overlap { .. } | CopyError::Layout { .. } | CopyError::Spec { .. } => {
            CliError::usage(e.to_string())
        }
        CopyError::DestinationExists { url } => CliError::new(format!(
            "a node already exists at {url} (use --overwrite to replace it)"
        )),
        e => CliError::from(e),
    }
}
