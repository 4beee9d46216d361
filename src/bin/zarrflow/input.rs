//! Files named on the command line, read within bounds: `--transform FILE.json` and `set
//! --from IN.npy` (no other argument reads a file).
//!
//! Neither is read to its end blindly: an endless source (`/dev/zero`, a FIFO fed forever)
//! or a huge file is refused after at most its bound, with a typed error, and memory stays
//! within that bound.
//!
//! - A transform document is read up to `--max-transform-bytes` (64 MiB unless given); a
//!   regular file longer than that is refused before reading.
//! - A `.npy` file is read as its header declares: the preamble and header (at most
//!   [`npy::MAX_HEADER_LEN`] bytes), then the caller checks the header (type, shape against
//!   the selection), then exactly the data bytes the header declares (at most `--max-bytes`)
//!   and one more to tell a longer file. A regular file's length is checked against the
//!   header before its data is read.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use zarrflow::npy::{self, Npy, NpyHeader};

use crate::error::{CliError, Result};
use crate::quote::quoted_path;

/// The bytes of a `.npy` preamble (magic, version, header length) and its longest header.
const NPY_PREFIX_BYTES: u64 = 12 + npy::MAX_HEADER_LEN as u64;

/// Opens a file named by an argument.
fn open(path: &Path) -> Result<(File, std::fs::Metadata)> {
    let shown = quoted_path(path);
    let file = File::open(path).map_err(|e| CliError::new(format!("cannot read {shown}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| CliError::new(format!("cannot read {shown}: {e}")))?;
    if meta.is_dir() {
        return Err(CliError::new(format!(
            "cannot read {shown}: it is a directory"
        )));
    }
    Ok((file, meta))
}

/// Appends to `buf` what `file` holds, up to `limit` bytes.
fn read_up_to(file: &mut File, limit: u64, buf: &mut Vec<u8>, path: &Path) -> Result<()> {
    file.take(limit)
        .read_to_end(buf)
        .map_err(|e| CliError::new(format!("cannot read {}: {e}", quoted_path(path))))?;
    Ok(())
}

/// The text of a `--transform` document, at most `max` bytes.
pub fn read_transform(path: &Path, max: u64) -> Result<String> {
    let shown = quoted_path(path);
    let too_long = |size: String| {
        CliError::new(format!(
            "--transform {shown}: {size}, more than --max-transform-bytes allows ({max} \
             bytes); raise it for a larger document"
        ))
    };
    let (mut file, meta) = open(path)?;
    if meta.is_file() && meta.len() > max {
        return Err(too_long(format!("the file is {} bytes", meta.len())));
    }
    let mut bytes = Vec::new();
    read_up_to(&mut file, max.saturating_add(1), &mut bytes, path)?;
    if bytes.len() as u64 > max {
        return Err(too_long(format!("it holds more than {max} bytes")));
    }
    String::from_utf8(bytes)
        .map_err(|e| CliError::new(format!("--transform {shown}: not UTF-8 text: {e}")))
}

/// Reads a `.npy` file: the header, checked by `check_header` before any data is read, then
/// the data it declares, at most `max_bytes`. Errors name the file: `PATH: not a valid .npy
/// file: ...` when it is malformed, `PATH: ...` when zarrflow does not support what it holds.
pub fn read_npy(
    path: &Path,
    check_header: impl FnOnce(&NpyHeader) -> Result<()>,
    max_bytes: u64,
) -> Result<Npy> {
    let shown = quoted_path(path);
    let npy_error = |e: npy::NpyError| {
        if e.is_unsupported() {
            CliError::new(format!("{shown}: {e}"))
        } else {
            CliError::new(format!("{shown}: not a valid .npy file: {e}"))
        }
    };
    let (mut file, meta) = open(path)?;
    // the preamble and header, and whatever data follows them within that many bytes
    let mut bytes = Vec::new();
    read_up_to(&mut file, NPY_PREFIX_BYTES, &mut bytes, path)?;
    let (header, offset) = NpyHeader::parse(&bytes).map_err(npy_error)?;
    if header.fortran_order {
        return Err(npy_error(npy::NpyError::FortranOrder));
    }
    let data_len = header.data_len().map_err(npy_error)? as u64;
    check_header(&header)?;
    if data_len > max_bytes {
        return Err(CliError::new(format!(
            "{shown}: its data is {data_len} bytes (shape {:?} of {}), more than --max-bytes \
             allows ({max_bytes} bytes); raise --max-bytes",
            header.shape, header.descr
        )));
    }
    let total = offset as u64 + data_len;
    let longer = || {
        CliError::new(format!(
            "{shown}: not a valid .npy file: it holds more than the {data_len} data bytes \
             that shape {:?} of {} needs",
            header.shape, header.descr
        ))
    };
    // a regular file's length tells a wrong size before its data is read
    if meta.is_file()
        && let Some(found) = meta.len().checked_sub(offset as u64)
        && found != data_len
    {
        return Err(npy_error(npy::NpyError::DataLength {
            shape: header.shape.clone(),
            descr: header.descr,
            expected: data_len,
            found,
        }));
    }
    if bytes.len() as u64 > total {
        return Err(longer());
    }
    // the rest of the data, and one byte more to tell a longer file
    let rest = total - bytes.len() as u64;
    let room = usize::try_from(rest + 1).map_err(|_| longer())?;
    bytes
        .try_reserve_exact(room)
        .map_err(|e| CliError::new(format!("{shown}: cannot hold its {data_len} bytes: {e}")))?;
    read_up_to(&mut file, rest + 1, &mut bytes, path)?;
    if bytes.len() as u64 > total {
        return Err(longer());
    }
    npy::read_npy_vec(bytes).map_err(npy_error)
}
