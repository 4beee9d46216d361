//! `zarrflow copy`: copy an array or a hierarchy, re-chunking on the way.

use crate::cli::CopyArgs;
use crate::error::{CliError, Result};

/// Runs `zarrflow copy`.
pub async fn run(_args: CopyArgs) -> Result<()> {
    Err(CliError::new(
        "copy: the write path is not available in this build",
    ))
}
