//! User input quoted in messages, bounded: an error never echoes more than
//! [`QUOTE_CHARS`] characters of a value, selection, name or path given on the command line.

use std::path::Path;

/// The most characters of one piece of user input a message quotes.
pub const QUOTE_CHARS: usize = 64;

/// At most [`QUOTE_CHARS`] characters of `text` (its start), control characters escaped, and
/// `…` when it was cut. For values, selections and names, whose start says what they are.
pub fn quoted(text: &str) -> String {
    let mut out = escaped(text.chars().take(QUOTE_CHARS));
    if text.chars().nth(QUOTE_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// A path in a message: whole when short, otherwise `…` and its last [`QUOTE_CHARS`]
/// characters (the file name and the folders nearest to it).
pub fn quoted_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    let count = text.chars().count();
    if count <= QUOTE_CHARS {
        return escaped(text.chars());
    }
    let mut out = String::from("…");
    out.push_str(&escaped(text.chars().skip(count - QUOTE_CHARS)));
    out
}

/// `chars` with control characters written as escapes (a message stays one line).
fn escaped(chars: impl Iterator<Item = char>) -> String {
    let mut out = String::new();
    for c in chars {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `message` with every verbatim echo of an over-long command-line argument replaced by its
/// [`quoted`] form. Messages written by clap and by the library quote arguments whole (an
/// unknown option, a selection, a URL); this bounds them as the CLI's own messages are.
pub fn bound_echoes(message: &str, args: &[String]) -> String {
    let mut out = message.to_string();
    let mut long: Vec<&String> = args
        .iter()
        .filter(|a| a.chars().count() > QUOTE_CHARS)
        .collect();
    // longest first, so that an argument containing another is replaced whole
    long.sort_by_key(|a| std::cmp::Reverse(a.len()));
    for arg in long {
        if out.contains(arg.as_str()) {
            out = out.replace(arg.as_str(), &quoted(arg));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_quoted_whole() {
        assert_eq!(quoted("1:2, ::3"), "1:2, ::3");
        assert_eq!(quoted("a\nb"), "a\\nb");
        assert_eq!(quoted_path(Path::new("/tmp/x.npy")), "/tmp/x.npy");
    }

    #[test]
    fn long_input_is_cut() {
        let long = "9".repeat(500);
        let q = quoted(&long);
        assert_eq!(q.chars().count(), QUOTE_CHARS + 1);
        assert!(q.ends_with('…'));
        let path = format!("/{}/file.npy", "d".repeat(300));
        let q = quoted_path(Path::new(&path));
        assert!(q.starts_with('…') && q.ends_with("/file.npy"), "{q}");
        assert_eq!(q.chars().count(), QUOTE_CHARS + 1);
    }

    #[test]
    fn echoes_of_long_arguments_are_bounded() {
        let arg = "x".repeat(200);
        let msg = format!("unexpected argument '{arg}' found");
        let bounded = bound_echoes(&msg, &["get".into(), arg.clone()]);
        assert_eq!(
            bounded,
            format!("unexpected argument '{}' found", quoted(&arg))
        );
        // short arguments are left alone
        assert_eq!(bound_echoes("bad `1`", &["1".into()]), "bad `1`");
    }
}
