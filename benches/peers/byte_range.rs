//! The byte range a `Range` header asks of an object, as S3 and common HTTP servers read it:
//! one range `bytes=a-b`, `bytes=a-` or `bytes=-n`. Shared by the benchmarks' servers
//! (`http_latency.rs`, `s3_latency.rs`), which include it with `#[path]`.

/// What a `Range` header asks of an object.
pub enum Ranged {
    /// The whole object (no header, or one that is ignored: not one `bytes=a-b` range,
    /// `b < a`).
    Whole,
    /// Bytes `[start, end)`.
    Part(u64, u64),
    /// A range that starts past the end (416).
    Unsatisfiable,
}

/// The byte range the `Range` header `spec` asks of an object of `len` bytes.
pub fn byte_range(spec: Option<&str>, len: u64) -> Ranged {
    let parsed = || -> Option<(Option<u64>, Option<u64>)> {
        let (a, b) = spec?.strip_prefix("bytes=")?.split_once('-')?;
        let num = |t: &str| -> Option<Option<u64>> {
            if t.is_empty() {
                Some(None)
            } else {
                t.parse().ok().map(Some)
            }
        };
        Some((num(a)?, num(b)?))
    };
    match parsed() {
        Some((None, Some(n))) if n > 0 => match len {
            0 => Ranged::Unsatisfiable,
            _ => Ranged::Part(len.saturating_sub(n), len),
        },
        Some((Some(a), b)) if b.is_none_or(|b| b >= a) => match a < len {
            true => Ranged::Part(a, b.map_or(len, |b| (b + 1).min(len))),
            false => Ranged::Unsatisfiable,
        },
        Some((None, Some(_))) => Ranged::Unsatisfiable,
        _ => Ranged::Whole,
    }
}
