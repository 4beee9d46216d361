//! `zarrflow set`: write values into a selection.

use std::path::Path;

use zarrflow::npy::{self, Npy, NpyType};

use crate::cli::SetArgs;
use crate::error::{CliError, Result};
use crate::get::element_type;
use crate::parse::value_bytes;
use crate::select::{open_array, view_of};

/// Runs `zarrflow set`.
pub async fn run(args: SetArgs) -> Result<()> {
    let array = open_array(&args.url).await?;
    let view = view_of(&array, &args.selection, &args.mode)?;
    if args.explain {
        // what any values would do: --from / --value are not read
        let explain = view.explain_write().await?;
        return crate::select::print_explain(&explain, &explain, args.json);
    }
    let (dt, _) = element_type(&array)?;
    let target = view.shape();
    let count: u64 = target.iter().product();
    match (&args.from, &args.value) {
        (Some(path), _) => {
            let file = read_npy(path)?;
            let want = NpyType::of(array.data_type());
            if file.ty() != want {
                return Err(CliError::usage(format!(
                    "{}: holds {} values, but the array's data type is {dt} ({}); convert it \
                     first (e.g. numpy's astype)",
                    path.display(),
                    file.ty(),
                    want
                )));
            }
            view.write_bytes(&file.data, file.shape())
                .await
                .map_err(|e| CliError::from(e).context(format!("--from {}", path.display())))?;
        }
        (None, Some(value)) => {
            let bytes = value_bytes(array.metadata().data_type(), &dt, value)
                .map_err(|e| e.context("--value"))?;
            view.write_bytes(&bytes, &[]).await?;
        }
        (None, None) => return Err(CliError::usage("give --from IN.npy or --value X")),
    }
    println!(
        "wrote {count} values (selection shape {target:?}) to {}",
        array.store().url()
    );
    Ok(())
}

/// Reads a `.npy` file: `PATH: not a valid .npy file: ...` when it is malformed,
/// `PATH: ...` when it holds what zarrflow does not support.
fn read_npy(path: &Path) -> Result<Npy> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::new(format!("cannot read {}: {e}", path.display())))?;
    npy::read_npy_vec(bytes).map_err(|e| {
        if e.is_unsupported() {
            CliError::new(format!("{}: {e}", path.display()))
        } else {
            CliError::new(format!("{}: not a valid .npy file: {e}", path.display()))
        }
    })
}
