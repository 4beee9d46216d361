//! The CLI's error: one line naming the cause, and an exit status.

use std::fmt;

/// A failed command: a one-line message and an exit status.
#[derive(Debug)]
pub struct CliError {
    message: String,
    usage: bool,
}

/// Shorthand result type.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// A failed operation (exit status 1).
    pub fn new(message: impl Into<String>) -> Self {
        CliError {
            message: one_line(&message.into()),
            usage: false,
        }
    }

    /// A usage error: bad arguments (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: one_line(&message.into()),
            usage: true,
        }
    }

    /// Prefixes the message with context (`context: message`).
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = one_line(&format!("{context}: {}", self.message));
        self
    }

    /// The process exit status.
    pub fn exit_code(&self) -> u8 {
        if self.usage { 2 } else { 1 }
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
