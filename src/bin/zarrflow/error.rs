//! The CLI's error: one line naming the cause, and an exit status.

use std::fmt;

/// A failed command: a one-line message and what kind of failure it is.
#[derive(Debug)]
pub struct CliError {
    message: String,
    kind: Kind,
}

/// What kind of failure a [`CliError`] is, which decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A failed operation (exit status 1).
    Failure,
    /// Bad arguments (exit status 2).
    Usage,
    /// Standard output was closed by its reader (a broken pipe): the process ends quietly,
    /// as `cat` and `git` do (see `main`).
    OutputClosed,
}

/// Shorthand result type.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// A failed operation (exit status 1).
    pub fn new(message: impl Into<String>) -> Self {
        CliError {
            message: one_line(&message.into()),
            kind: Kind::Failure,
        }
    }

    /// A usage error: bad arguments (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: one_line(&message.into()),
            kind: Kind::Usage,
        }
    }

    /// Standard output's reader went away (`EPIPE`): nothing more can be shown, and nothing
    /// is reported.
    pub fn output_closed() -> Self {
        CliError {
            message: "standard output was closed".into(),
            kind: Kind::OutputClosed,
        }
    }

    /// Whether this is [`output_closed`](Self::output_closed).
    pub fn is_output_closed(&self) -> bool {
        self.kind == Kind::OutputClosed
    }

    /// Prefixes the message with context (`context: message`).
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        if self.kind != Kind::OutputClosed {
            self.message = one_line(&format!("{context}: {}", self.message));
        }
        self
    }

    /// The process exit status (for an [`output_closed`](Self::output_closed) error, the
    /// status a shell reports for a process killed by `SIGPIPE`).
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            Kind::Failure => 1,
            Kind::Usage => 2,
            Kind::OutputClosed => 141,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Any error becomes its message followed by the messages of its sources not already in it.
impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError::new(chain(&e))
    }
}

/// The message of an error and of its sources, joined with `: `, skipping repeats.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !text.is_empty() && !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        source = s.source();
    }
    msg
}

/// Collapses whitespace runs containing line breaks into one space.
fn one_line(s: &str) -> String {
    if !s.contains(['\n', '\r']) {
        return s.trim().to_string();
    }
    s.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        let e = CliError::new("a\n  b\r\nc");
        assert_eq!(e.to_string(), "a b c");
        let e = CliError::usage("bad").context("--shape");
        assert_eq!(e.to_string(), "--shape: bad");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn sources_are_chained_without_repeats() {
        let io = std::io::Error::other("disk on fire");
        let e: CliError = io.into();
        assert_eq!(e.to_string(), "disk on fire");
        assert_eq!(e.exit_code(), 1);
    }
}
