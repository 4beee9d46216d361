//! Reading a response body checked against the length the backend announced.
//!
//! `object_store`'s own `GetResult::bytes` reserves the announced length up front when a
//! body arrives in more than one piece, so a server announcing 2^60 bytes aborts the
//! process. Here the body is refused before it is read when the announced length is over
//! the caller's limit, its buffer is reserved fallibly and at most [`INITIAL_RESERVE`]
//! ahead of what arrived (a body announced within that is reserved whole at its first
//! piece, so its bytes are copied once, never again by a growing buffer; a larger one grows
//! by doubling), and a body longer than announced is cut off at the announcement.

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;

use super::StoreError;

/// The most a body's buffer is reserved ahead of the bytes that arrived.
pub(crate) const INITIAL_RESERVE: u64 = 64 << 20;

/// Refuses an announced body of `size` bytes over `max` ([`StoreError::TooLarge`]).
pub(crate) fn check_announced(size: u64, max: Option<u64>, url: &str) -> Result<(), StoreError> {
    match max {
        Some(max) if size > max => Err(StoreError::TooLarge {
            url: url.to_string(),
            size,
            max,
        }),
        _ => Ok(()),
    }
}

/// Collects a body announced as `expected` bytes: exactly that many, or
/// [`StoreError::ShortRead`] / [`StoreError::LongRead`]; a body in one piece is returned
/// without a copy.
pub(crate) async fn collect(
    mut stream: BoxStream<'static, object_store::Result<Bytes>>,
    expected: u64,
    url: &str,
    map_err: impl Fn(object_store::Error) -> StoreError,
) -> Result<Bytes, StoreError> {
    let long = || StoreError::LongRead {
        url: url.to_string(),
        expected,
    };
    let first = match stream.next().await {
        None => Bytes::new(),
        Some(piece) => piece.map_err(&map_err)?,
    };
    if first.len() as u64 > expected {
        return Err(long());
    }
    let second = match stream.next().await {
        None => return finish(first, expected, url),
        Some(piece) => piece.map_err(&map_err)?,
    };
    let mut buf: Vec<u8> = Vec::new();
    let push = |buf: &mut Vec<u8>, piece: &[u8]| -> Result<(), StoreError> {
        let len = buf.len() as u64 + piece.len() as u64;
        if len > expected {
            return Err(long());
        }
        if len > buf.capacity() as u64 {
            // the whole announcement when it is within INITIAL_RESERVE (so the body is
            // copied once); else grow by doubling, at most INITIAL_RESERVE ahead, never
            // past the announcement
            let want = if expected <= INITIAL_RESERVE {
                expected
            } else {
                (buf.capacity() as u64)
                    .saturating_mul(2)
                    .min(buf.len() as u64 + INITIAL_RESERVE)
                    .max(len)
                    .min(expected)
            };
            let extra = usize::try_from(want - buf.len() as u64).unwrap_or(usize::MAX);
            buf.try_reserve_exact(extra)
                .map_err(|_| StoreError::OutOfMemory {
                    url: url.to_string(),
                    bytes: want,
                })?;
        }
        buf.extend_from_slice(piece);
        Ok(())
    };
    push(&mut buf, &first)?;
    push(&mut buf, &second)?;
    while let Some(piece) = stream.next().await {
        push(&mut buf, &piece.map_err(&map_err)?)?;
    }
    finish(Bytes::from(buf), expected, url)
}

fn finish(bytes: Bytes, expected: u64, url: &str) -> Result<Bytes, StoreError> {
    if bytes.len() as u64 != expected {
        return Err(StoreError::ShortRead {
            url: url.to_string(),
            expected,
            got: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(pieces: Vec<&'static [u8]>) -> BoxStream<'static, object_store::Result<Bytes>> {
        futures::stream::iter(pieces.into_iter().map(|p| Ok(Bytes::from_static(p)))).boxed()
    }

    fn run(pieces: Vec<&'static [u8]>, expected: u64) -> Result<Bytes, StoreError> {
        futures::executor::block_on(collect(stream(pieces), expected, "mem://x", |e| {
            StoreError::Backend {
                url: "mem://x".into(),
                source: e,
            }
        }))
    }

    #[test]
    fn bodies_of_the_announced_length_are_collected() {
        assert_eq!(run(vec![b"abc"], 3).unwrap(), &b"abc"[..]);
        assert_eq!(run(vec![b"ab", b"c", b"de"], 5).unwrap(), &b"abcde"[..]);
        assert_eq!(run(vec![], 0).unwrap(), &b""[..]);
    }

    #[test]
    fn short_and_long_bodies_are_errors() {
        assert!(matches!(
            run(vec![b"ab"], 3),
            Err(StoreError::ShortRead { got: 2, .. })
        ));
        assert!(matches!(
            run(vec![b"ab", b"c"], 4),
            Err(StoreError::ShortRead { got: 3, .. })
        ));
        assert!(matches!(
            run(vec![b"abcd"], 3),
            Err(StoreError::LongRead { expected: 3, .. })
        ));
        assert!(matches!(
            run(vec![b"ab", b"cd"], 3),
            Err(StoreError::LongRead { expected: 3, .. })
        ));
    }

    #[test]
    fn a_huge_announcement_reserves_only_what_arrives_plus_a_bound() {
        // announced 2^60 bytes, sent 6 in two pieces: no 2^60-byte reservation (it would
        // abort), a short read
        assert!(matches!(
            run(vec![b"abc", b"def"], 1 << 60),
            Err(StoreError::ShortRead { got: 6, .. })
        ));
    }

    #[test]
    fn announced_sizes_over_the_limit_are_refused() {
        assert!(check_announced(10, Some(10), "u").is_ok());
        assert!(check_announced(10, None, "u").is_ok());
        assert!(matches!(
            check_announced(11, Some(10), "u"),
            Err(StoreError::TooLarge {
                size: 11,
                max: 10,
                ..
            })
        ));
    }
}
