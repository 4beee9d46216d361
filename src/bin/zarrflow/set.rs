//! `zarrflow set`: write values into a selection.

use std::path::Path;

use zarrflow::npy::{NpyHeader, NpyType};

use crate::cli::SetArgs;
use crate::count::Count;
use crate::error::{CliError, Result};
use crate::get::element_type;
use crate::parse::value_bytes;
use crate::quote::quoted_path;
use crate::select::{open_array_with, view_of};

/// Runs `zarrflow set`.
pub async fn run(args: SetArgs) -> Result<()> {
    let array = open_array_with(&args.url, args.order.array_options()).await?;
    let view = view_of(&array, &args.selection, &args.mode, &args.limits)?;
    if args.explain {
        // what any values would do: --from / --value are not read
        let explain = view.explain_write().await?;
        return crate::select::print_explain(&explain, &explain, args.json);
    }
    let (dt, _) = element_type(&array)?;
    let target = view.shape();
    let data_type = array.data_type();
    match (&args.from, &args.value) {
        (Some(path), _) if data_type.is_text() => {
            let check = |h: &NpyHeader| crate::vlen::check_npy_header(h, path, data_type, &target);
            let file = crate::input::read_npy(path, check, args.limits.max_bytes)?;
            let values = crate::vlen::file_values(&file, path)?;
            crate::vlen::write_values(&view, values, file.shape())
                .await
                .map_err(|e| e.context(format!("--from {}", quoted_path(path))))?;
        }
        (None, Some(value)) if data_type.is_text() => {
            let v = crate::vlen::parse_value(data_type, value).map_err(|e| e.context("--value"))?;
            crate::vlen::write_values(&view, vec![v], &[]).await?;
        }
        (Some(path), _) => {
            let want = NpyType::of(array.data_type());
            let check = |header: &NpyHeader| check_npy_header(header, path, want, &dt, &target);
            let file = crate::input::read_npy(path, check, args.limits.max_bytes)?;
            view.write_bytes(&file.data, file.shape())
                .await
                .map_err(|e| CliError::from(e).context(format!("--from {}", quoted_path(path))))?;
        }
        (None, Some(value)) => {
            let bytes = value_bytes(array.metadata().data_type(), &dt, value)
                .map_err(|e| e.context("--value"))?;
            view.write_bytes(&bytes, &[]).await?;
        }
        (None, None) => return Err(CliError::usage("give --from IN.npy or --value X")),
    }
    crate::output::print(&format!(
        "wrote {} values (selection shape {target:?}) to {}\n",
        Count::of_shape(&target),
        array.store().url()
    ))
    .map_err(|e| e.context("the values were written, but printing so failed"))
}

/// Refuses a `--from` file, before its data is read, whose type is not the array's or whose
/// shape holds more values than the selection: a shape that broadcasts to the selection's
/// has at most as many (one, for an empty selection), so the data read is bounded by the
/// selection. The exact broadcasting rules are the library's.
fn check_npy_header(
    header: &NpyHeader,
    path: &Path,
    want: NpyType,
    dt: &str,
    target: &[u64],
) -> Result<()> {
    if header.descr.ty != want {
        return Err(CliError::usage(format!(
            "{}: holds {} values, but the array's data type is {dt} ({want}); convert it \
             first (e.g. numpy's astype)",
            quoted_path(path),
            header.descr.ty,
        )));
    }
    check_value_count(header, path, target)
}

/// Refuses a `--from` file whose shape holds more values than the selection (a shape that
/// broadcasts to the selection's has at most as many; one, for an empty selection).
pub fn check_value_count(header: &NpyHeader, path: &Path, target: &[u64]) -> Result<()> {
    let values = Count::of_shape(&header.shape);
    let most = Count::of_shape(target).max(Count::Exact(1));
    if values > most {
        return Err(CliError::usage(format!(
            "--from {}: its shape {:?} ({values} values) does not broadcast to the selection's \
             shape {target:?} ({} values)",
            quoted_path(path),
            header.shape,
            Count::of_shape(target)
        )));
    }
    Ok(())
}
