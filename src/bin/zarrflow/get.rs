//! `zarrflow get`: read a selection into a `.npy` file or print it.

use std::io::Write;
use std::path::Path;

use ndarray::{ArrayD, IxDyn};
use zarrflow::array::{Array, ArrayView};
use zarrflow::index::{Selection, SelectionItem, Slice};
use zarrflow::npy::{self, NpyType};

use crate::cli::GetArgs;
use crate::count::Count;
use crate::error::{CliError, Result};
use crate::output::{Stdout, stdout_error};
use crate::quote::quoted_path;
use crate::select::{open_array, view_of};
use crate::summary::{self, EDGE_ITEMS, Extent, SUMMARY_LIMIT};
use crate::values::{Printer, write_nested};

/// The data type name and element size of an array.
pub fn element_type(array: &Array) -> Result<(String, usize)> {
    let t = array.data_type();
    Ok((t.to_string(), t.size()))
}

/// Runs `zarrflow get`.
pub async fn run(args: GetArgs) -> Result<()> {
    let array = open_array(&args.url).await?;
    let view = view_of(&array, &args.selection, &args.mode, &args.limits)?;
    if args.explain {
        let explain = view.explain_read().await?;
        return crate::select::print_explain(&explain, &explain, args.json);
    }
    if array.data_type().is_text() {
        return match &args.output {
            Some(path) => {
                check_result_size(
                    &view.shape(),
                    crate::vlen::HANDLE_BYTES.max(array.data_type().size()),
                    args.limits.max_bytes,
                )?;
                let (ty, data) = crate::vlen::npy_data(&view).await?;
                write_npy(path, args.fsync, ty, &view.shape(), &data)
            }
            None => crate::vlen::print_view(&view, args.full, args.limits.max_bytes).await,
        };
    }
    let (_, size) = element_type(&array)?;
    match &args.output {
        Some(path) => {
            check_result_size(&view.shape(), size, args.limits.max_bytes)?;
            let ty = NpyType::of(array.data_type());
            if path.as_os_str() != "-" {
                return read_to_npy_file(&view, path, args.fsync, ty, size).await;
            }
            let data = view.read_bytes().await?;
            write_npy(path, args.fsync, ty, &view.shape(), &data)
        }
        None => {
            print_view(
                &view,
                Printer::for_type(array.data_type()),
                args.full,
                args.limits.max_bytes,
            )
            .await
        }
    }
}

/// Refuses, before anything is allocated, a read whose result would be over `max_bytes`.
pub fn check_result_size(shape: &[u64], element_size: usize, max_bytes: u64) -> Result<()> {
    let values = Count::of_shape(shape);
    let bytes = values.times(element_size);
    if bytes.exceeds(max_bytes) {
        return Err(CliError::new(format!(
            "the selection (shape {shape:?}) holds {values} values of {element_size} bytes, \
             {bytes} bytes in all, more than --max-bytes allows ({max_bytes} bytes); select \
             less or raise --max-bytes"
        )));
    }
    Ok(())
}

/// The smallest `.npy` file [`read_to_npy_file`] reads straight into a mapping of. Measured
/// on ext4 (`zarrflow get` of 16, 32, 64 and 256 MiB into a new file): at 16 MiB the
/// mapping's file-page faults cost ~10 ms more than a buffer of huge pages written out, at
/// 32 MiB the two tie, and from 64 MiB on the mapping is faster and its times steadier
/// (the buffer path now and then stalled for a second in `write`), and the result is not
/// held twice (buffer and page cache).
const MAP_MIN_BYTES: u64 = 32 << 20;

/// Reads `view` (of `size`-byte elements) into a new `.npy` file at `path`, whole or not at
/// all: a result of [`MAP_MIN_BYTES`] or more straight into the mapped temporary file where
/// it can be mapped (no result buffer, no copy into the page cache; its pages faulted in
/// ahead by [`crate::prefault::Prefault`]), else through a buffer written out, into space
/// reserved first for a new file ([`crate::outfile::OutFile::reserve`]).
async fn read_to_npy_file(
    view: &ArrayView,
    path: &Path,
    fsync: bool,
    ty: NpyType,
    size: usize,
) -> Result<()> {
    let shape = view.shape();
    let header = npy::header_bytes(ty, &shape)?;
    let mut out = crate::outfile::OutFile::create(path, fsync)?;
    // the mapped bytes are the file's: only where the native order is the file's
    let little = cfg!(target_endian = "little") || ty.swap_unit() == 1;
    let total = Count::of_shape(&shape)
        .times(size)
        .as_u64()
        .and_then(|d| d.checked_add(header.len() as u64));
    if let (true, Some(total)) = (little, total)
        && total >= MAP_MIN_BYTES
        && let Some(mut map) = out.map(total)?
    {
        map[..header.len()].copy_from_slice(&header);
        // SAFETY: `prefault` is dropped before `map`: explicitly below, and, when this
        // future is dropped or unwinds first, as the later of the two locals.
        let prefault = unsafe { crate::prefault::Prefault::start(&map) };
        let read = view.read_bytes_into(&mut map[header.len()..]).await;
        drop(prefault);
        read?;
        // (with `fsync`, the commit's fsync also writes the pages dirtied through the map)
        drop(map);
        return out.commit();
    }
    if let Some(total) = total {
        out.reserve(total)?;
    }
    let data = view.read_bytes().await?;
    out.write_with(npy_writer(path, ty, &shape, &data))?;
    out.commit()
}

/// Writes the `.npy` file of `data` into the output for `path` (named in errors).
fn npy_writer<'a>(
    path: &'a Path,
    ty: NpyType,
    shape: &'a [u64],
    data: &'a [u8],
) -> impl FnOnce(&mut dyn std::io::Write) -> Result<()> + 'a {
    move |out| {
        npy::write_npy(out, ty, shape, data)
            .map_err(|e| CliError::from(e).context(format!("writing {}", quoted_path(path))))
    }
}

/// Writes a `.npy` file whole or not at all (`-`: standard output), synced with `fsync`.
fn write_npy(path: &Path, fsync: bool, ty: NpyType, shape: &[u64], data: &[u8]) -> Result<()> {
    if path.as_os_str() == "-" {
        let mut out = Stdout::lock();
        npy::write_npy(&mut out, ty, shape, data).map_err(|e| match e {
            npy::NpyError::Io(io) => stdout_error(io),
            e => e.into(),
        })?;
        return out.finish();
    }
    crate::outfile::write_whole(path, fsync, npy_writer(path, ty, shape, data))
}

/// Prints the values of a view; large views are summarised, and only the values shown are
/// read (see [`crate::summary`]).
async fn print_view(view: &ArrayView, printer: Printer, full: bool, max_bytes: u64) -> Result<()> {
    let (extents, shown_view) = shown(view, full)?;
    check_result_size(&shown_view.shape(), printer.size(), max_bytes)?;
    let data = shown_view.read_bytes().await?;
    let mut out = Stdout::lock();
    write_nested(&mut out, printer, &extents, &data).map_err(stdout_error)?;
    finish_print(out, &view.shape(), &extents)
}

/// What of `view` is printed: each dimension's extents and the view of the values shown
/// (all of them with `full`, else a summary of a large view).
pub fn shown(view: &ArrayView, full: bool) -> Result<(Vec<Extent>, ArrayView)> {
    let shape = view.shape();
    let extents = summary::extents(&shape, full);
    let shown_view = if summary::is_summary(&extents) {
        let items = extents
            .iter()
            .map(|e| match e.indices() {
                Some(idx) => {
                    let n = idx.len();
                    ArrayD::from_shape_vec(IxDyn(&[n]), idx)
                        .map(SelectionItem::Array)
                        .map_err(|e| CliError::new(format!("internal error: {e}")))
                }
                None => Ok(SelectionItem::Slice(Slice::full())),
            })
            .collect::<Result<Vec<_>>>()?;
        view.oindex(&Selection::new(items))?
    } else {
        view.clone()
    };
    Ok((extents, shown_view))
}

/// Ends what [`print_view`] printed of a view of `shape`: the summary's note, a newline.
pub fn finish_print(mut out: Stdout, shape: &[u64], extents: &[Extent]) -> Result<()> {
    if summary::is_summary(extents) {
        let shown = summary::shown_count(extents);
        let cut_further = extents
            .iter()
            .any(|e| matches!(e, Extent::Cut { head, tail, .. } if head + tail < 2 * EDGE_ITEMS));
        let how = if cut_further {
            format!(
                "the first and last {EDGE_ITEMS} along each long dimension, fewer along the \
                 outer ones to show at most {SUMMARY_LIMIT}"
            )
        } else {
            format!("the first and last {EDGE_ITEMS} along each long dimension")
        };
        write!(
            out,
            "\n(shape {shape:?}, {} values; {shown} shown: {how}; --full prints all, -o \
             FILE.npy saves all)",
            Count::of_shape(shape)
        )
        .map_err(stdout_error)?;
    }
    writeln!(out).map_err(stdout_error)?;
    out.finish()
}
