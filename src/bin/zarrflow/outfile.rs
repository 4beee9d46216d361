//! Output files written whole or not at all (`get -o FILE`).
//!
//! The content goes to a temporary file beside the target, which is flushed, synced and
//! then renamed over the target: a failed write (a full disk, a size limit, an error
//! mid-way) leaves the previous file as it was and removes the temporary file. A symbolic
//! link to a regular file is kept and its target replaced; a target that is not a regular
//! file (`/dev/stdout`, a FIFO, `/dev/null`) is written in place, as there is nothing to
//! replace.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};
use crate::quote::quoted_path;

/// Writes `path` with `write`, replacing it only after everything was written and flushed.
pub fn write_whole(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let shown = quoted_path(path);
    let target = match fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(CliError::new(format!(
                "cannot write {shown}: it is a directory"
            )));
        }
        Ok(m) if !m.is_file() => return write_in_place(path, write),
        // a link keeps pointing at the file it names, which is replaced
        Ok(m) => Existing::File {
            path: fs::canonicalize(path)
                .map_err(|e| CliError::new(format!("cannot resolve {shown}: {e}")))?,
            permissions: m.permissions(),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Existing::Nothing,
        Err(e) => return Err(CliError::new(format!("cannot write {shown}: {e}"))),
    };
    let final_path: PathBuf = match &target {
        Existing::File { path, .. } => path.clone(),
        Existing::Nothing => path.to_path_buf(),
    };
    let dir = match final_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut temp = temp_builder()
        .tempfile_in(dir)
        .map_err(|e| CliError::new(format!("cannot create {shown}: {e}")))?;
    if let Existing::File { permissions, .. } = &target {
        temp.as_file()
            .set_permissions(permissions.clone())
            .map_err(|e| CliError::new(format!("cannot create {shown}: {e}")))?;
    }
    {
        let mut out = BufWriter::new(temp.as_file_mut());
        write(&mut out)?;
        out.flush()
            .map_err(|e| CliError::new(format!("writing {shown}: {e}")))?;
    }
    temp.as_file()
        .sync_all()
        .map_err(|e| CliError::new(format!("writing {shown}: {e}")))?;
    temp.persist(&final_path)
        .map_err(|e| CliError::new(format!("cannot replace {shown}: {}", e.error)))?;
    Ok(())
}

/// What the target path holds before the write.
enum Existing {
    /// Nothing: the file is created.
    Nothing,
    /// A regular file (the link's target, for a link), whose permissions the new file takes.
    File {
        path: PathBuf,
        permissions: fs::Permissions,
    },
}

/// Temporary files named `.zarrflow-XXXXXX.tmp`, created as `File::create` creates files
/// (mode 0666 less the umask) rather than private.
fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".zarrflow-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder
}

/// Writes a target that is not a regular file (a device, a FIFO) directly.
fn write_in_place(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let shown = quoted_path(path);
    let file = File::options()
        .write(true)
        .open(path)
        .map_err(|e| CliError::new(format!("cannot write {shown}: {e}")))?;
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    out.flush()
        .map_err(|e| CliError::new(format!("writing {shown}: {e}")))
}
