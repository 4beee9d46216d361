//! `zarrflow set`: write values into a selection.

use crate::cli::SetArgs;
use crate::error::{CliError, Result};

/// Runs `zarrflow set`.
pub async fn run(_args: SetArgs) -> Result<()> {
    Err(CliError::new(
        "set: the write path is not available in this build",
    ))
}
