//! What the benchmarks' servers (`http_latency.rs`, `s3_latency.rs`, which include this file
//! with `#[path]`) share in their answers: the response type, a response with headers, and
//! the answer to a `GET` or `HEAD` of an object's bytes with at most one byte range
//! (`bytes=a-b`, `bytes=a-` or `bytes=-n`), read as S3 and common HTTP servers read it.

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode, header};

/// A response with its whole body.
pub type Answer = Response<Full<Bytes>>;

/// Every object's `Last-Modified` (object_store's S3 client requires the header; no client
/// here reads its value).
pub const LAST_MODIFIED: &str = "Thu, 01 Jan 2026 00:00:00 GMT";

/// An answer with a body and headers.
pub fn with_body(
    code: StatusCode,
    body: Bytes,
    headers: &[(header::HeaderName, String)],
) -> Answer {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = code;
    for (k, v) in headers {
        r.headers_mut()
            .insert(k.clone(), v.parse().expect("header value"));
    }
    r
}

/// What a `Range` header asks of an object.
enum Ranged {
    /// The whole object (no header, or one that is ignored: not one `bytes=a-b` range,
    /// `b < a`).
    Whole,
    /// Bytes `[start, end)`.
    Part(u64, u64),
    /// A range that starts past the end (416).
    Unsatisfiable,
}

/// The byte range the `Range` header `spec` asks of an object of `len` bytes.
fn byte_range(spec: Option<&str>, len: u64) -> Ranged {
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
            true => Ranged::Part(a, b.map_or(len, |b| b.saturating_add(1).min(len))),
            false => Ranged::Unsatisfiable,
        },
        Some((None, Some(_))) => Ranged::Unsatisfiable,
        _ => Ranged::Whole,
    }
}

/// The answer to a `GET` (or, with `head`, a `HEAD`) of `body` whose `Range` header is
/// `range`: 200 with the whole body, or 206 with the part asked for and its
/// `Content-Range`; `headers` go on either, and a `HEAD` answer carries the
/// `Content-Length` and no body. A range past the end is answered by `refused` with
/// `Content-Range: bytes */LEN` added (416).
pub fn ranged(
    body: Bytes,
    range: Option<&str>,
    head: bool,
    mut headers: Vec<(header::HeaderName, String)>,
    refused: impl FnOnce() -> Answer,
) -> Answer {
    let len = body.len() as u64;
    let (code, part) = match byte_range(range, len) {
        Ranged::Whole => (StatusCode::OK, body),
        Ranged::Part(a, b) => {
            headers.push((header::CONTENT_RANGE, format!("bytes {a}-{}/{len}", b - 1)));
            (
                StatusCode::PARTIAL_CONTENT,
                body.slice(a as usize..b as usize),
            )
        }
        Ranged::Unsatisfiable => {
            let mut answer = refused();
            answer.headers_mut().insert(
                header::CONTENT_RANGE,
                format!("bytes */{len}").parse().expect("header value"),
            );
            return answer;
        }
    };
    if head {
        headers.push((header::CONTENT_LENGTH, part.len().to_string()));
        with_body(code, Bytes::new(), &headers)
    } else {
        with_body(code, part, &headers)
    }
}
