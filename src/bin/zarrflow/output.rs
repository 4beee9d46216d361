//! Standard output and standard error, written fallibly.
//!
//! Nothing in the binary uses `print!` or `println!` (they panic when standard output
//! fails): commands write through [`Stdout`] or [`print`], whose errors become
//! [`CliError`]s. A full or failing standard output (`> /dev/full`) is an error, `cannot
//! write to standard output: ...`, exit status 1. A reader that closes the pipe early
//! (`| head -c1`) ends the process quietly, killed by `SIGPIPE` as `cat` and `git` are (see
//! `main`).

use std::io::{self, BufWriter, StdoutLock, Write};

use crate::error::{CliError, Result};

/// Standard output, buffered; [`finish`](Self::finish) flushes it and reports any error.
#[derive(Debug)]
pub struct Stdout {
    out: BufWriter<StdoutLock<'static>>,
}

impl Stdout {
    /// Locks standard output for this command's output.
    pub fn lock() -> Stdout {
        Stdout {
            out: BufWriter::with_capacity(64 << 10, io::stdout().lock()),
        }
    }

    /// Flushes everything written (errors as [`stdout_error`]).
    pub fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(stdout_error)
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<()> {
    let mut out = Stdout::lock();
    out.write_all(text.as_bytes()).map_err(stdout_error)?;
    out.finish()
}

/// The error of a failed write to standard output: [`CliError::output_closed`] for a closed
/// pipe, otherwise `cannot write to standard output: ...` (exit status 1).
pub fn stdout_error(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::output_closed()
    } else {
        CliError::new(format!("cannot write to standard output: {e}"))
    }
}

/// Writes one line to standard error. A failure is ignored: there is nowhere left to report
/// it, and the exit status still says what happened.
pub fn eprint_line(line: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{line}").and_then(|()| err.flush());
}
