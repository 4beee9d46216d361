//! `zarrflow get`: read a selection into a `.npy` file or print it.

use std::io::Write;
use std::path::Path;

use ndarray::{ArrayD, IxDyn};
use zarrflow::array::{Array, ArrayView};
use zarrflow::index::{Selection, SelectionItem, Slice};
use zarrflow::npy::{self, NpyType};

use crate::cli::GetArgs;
use crate::error::{CliError, Result};
use crate::select::{open_array, view_of};
use crate::values::{EDGE_ITEMS, Printer, SUMMARY_THRESHOLD, format_nested};

/// The data type name and element size of an array.
pub fn element_type(array: &Array) -> Result<(String, usize)> {
    let t = array.data_type();
    Ok((t.to_string(), t.size()))
}

/// Runs `zarrflow get`.
pub async fn run(args: GetArgs) -> Result<()> {
    let array = open_array(&args.url).await?;
    let view = view_of(&array, &args.selection, &args.mode)?;
    if args.explain {
        let explain = view.explain_read().await?;
        return crate::select::print_explain(&explain, &explain, args.json);
    }
    let (dt, size) = element_type(&array)?;
    match &args.output {
        Some(path) => {
            let data = view.read_bytes().await?;
            write_npy(path, NpyType::of(array.data_type()), &view.shape(), &data)
        }
        None => {
            let text = format_view(&view, Printer::of(&dt, size), args.full).await?;
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{text}")?;
            stdout.flush()?;
            Ok(())
        }
    }
}

/// Writes a `.npy` file (`-`: standard output).
fn write_npy(path: &Path, ty: NpyType, shape: &[u64], data: &[u8]) -> Result<()> {
    if path.as_os_str() == "-" {
        return Ok(npy::write_npy(std::io::stdout().lock(), ty, shape, data)?);
    }
    let file = std::fs::File::create(path)
        .map_err(|e| CliError::new(format!("cannot create {}: {e}", path.display())))?;
    npy::write_npy(std::io::BufWriter::new(file), ty, shape, data)
        .map_err(|e| CliError::from(e).context(format!("writing {}", path.display())))
}

/// The values of a view as text; large views are summarised (only their corners are read).
async fn format_view(view: &ArrayView, printer: Printer, full: bool) -> Result<String> {
    let shape = view.shape();
    let total = shape
        .iter()
        .try_fold(1u64, |a, &n| a.checked_mul(n))
        .unwrap_or(u64::MAX);
    let summarise: Vec<bool> = shape
        .iter()
        .map(|&n| !full && total > SUMMARY_THRESHOLD && n > 2 * EDGE_ITEMS)
        .collect();
    let (view, shown) = if summarise.iter().any(|&s| s) {
        let items = shape
            .iter()
            .zip(&summarise)
            .map(|(&n, &s)| {
                if s {
                    let e = EDGE_ITEMS as i64;
                    let n = n as i64;
                    let idx: Vec<i64> = (0..e).chain(n - e..n).collect();
                    SelectionItem::Array(
                        ArrayD::from_shape_vec(IxDyn(&[idx.len()]), idx)
                            .unwrap_or_else(|_| ArrayD::zeros(IxDyn(&[0]))),
                    )
                } else {
                    SelectionItem::Slice(Slice::full())
                }
            })
            .collect();
        let corners = view.oindex(&Selection::new(items))?;
        let shown = corners.shape();
        (corners, shown)
    } else {
        (view.clone(), shape.clone())
    };
    let data = view.read_bytes().await?;
    let dims: Vec<usize> = shown.iter().map(|&n| n as usize).collect();
    let mut text = format_nested(printer, &dims, &summarise, &data);
    if summarise.iter().any(|&s| s) {
        text.push_str(&format!(
            "\n(shape {shape:?}, {total} values; the first and last {EDGE_ITEMS} along each \
             long dimension shown; --full prints all, -o FILE.npy saves all)"
        ));
    }
    Ok(text)
}
