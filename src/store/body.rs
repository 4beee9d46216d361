//! Reading a response body checked against the length the backend announced.
//!
//! `object_store`'s own `GetResult::bytes` reserves the announced length up front when a
//! body arrives in more than one piece, so a server announcing 2^60 bytes aborts the
//! process. Here the body is refused before it is read when the announced length is over
//! the caller's limit, its buffer is reserved fallibly and at most [`INITIAL_RESERVE`]
//! ahead of what arrived (a body announced within that is reserved whole at its first
//! piece, so its bytes are copied once, never again by a growing buffer; a larger one grows
//! by doubling), and a body longer than announced is cut off at the announcement. A whole
//! object read piece by piece ([`super::FetchedObject`]) keeps the pieces the body arrived
//! in instead ([`collect_pieces`]), with the same length checks.

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

/// Pieces of a body smaller than this are not kept as they came (unless the body is that
/// one piece): each run of them is copied into one piece (of at least this size unless a
/// larger piece or the end of the body cuts it short). A body trickling in many tiny pieces
/// is thus not held as one entry per piece, and a kept piece, which shares the HTTP
/// client's read buffer (hyper's grows to about 400 KiB), holds at most about 3 times its
/// own length of that buffer.
pub(crate) const MIN_KEPT_PIECE: usize = 128 << 10;

/// Collects a body announced as `expected` bytes as the pieces it arrived in, without
/// copying them into one buffer: exactly that many bytes, or [`StoreError::ShortRead`] /
/// [`StoreError::LongRead`]. A piece of [`MIN_KEPT_PIECE`] or more, or a body in one piece,
/// is kept as it came (a slice of the HTTP client's read buffer); runs of smaller pieces are
/// copied together, into buffers reserved fallibly ([`StoreError::OutOfMemory`]). The body
/// thus costs no allocation of its whole length, no page faults on one and (mostly) no
/// copy; readers take slices of it ([`super::FetchedObject::read_range`]).
pub(crate) async fn collect_pieces(
    mut stream: BoxStream<'static, object_store::Result<Bytes>>,
    expected: u64,
    url: &str,
    map_err: impl Fn(object_store::Error) -> StoreError,
) -> Result<Vec<Bytes>, StoreError> {
    let mut pieces = Vec::new();
    // a run of small pieces not yet kept, and its length
    let mut run: Vec<Bytes> = Vec::new();
    let mut run_len = 0usize;
    // the run, copied into one piece
    let join = |run: &mut Vec<Bytes>, run_len: &mut usize, pieces: &mut Vec<Bytes>| {
        if run.is_empty() {
            return Ok(());
        }
        let mut joined = Vec::new();
        joined
            .try_reserve_exact(*run_len)
            .map_err(|_| StoreError::OutOfMemory {
                url: url.to_string(),
                bytes: *run_len as u64,
            })?;
        for piece in run.drain(..) {
            joined.extend_from_slice(&piece);
        }
        pieces.push(Bytes::from(joined));
        *run_len = 0;
        Ok::<_, StoreError>(())
    };
    let mut got = 0u64;
    while let Some(piece) = stream.next().await {
        let piece = piece.map_err(&map_err)?;
        got += piece.len() as u64;
        if got > expected {
            return Err(StoreError::LongRead {
                url: url.to_string(),
                expected,
            });
        }
        if piece.len() >= MIN_KEPT_PIECE {
            join(&mut run, &mut run_len, &mut pieces)?;
            pieces.push(piece);
        } else if !piece.is_empty() {
            run_len += piece.len();
            run.push(piece);
            if run_len >= MIN_KEPT_PIECE {
                join(&mut run, &mut run_len, &mut pieces)?;
            }
        }
    }
    if pieces.is_empty() && run.len() == 1 {
        // the whole body in one small piece: kept as it came
        pieces = run;
    } else {
        join(&mut run, &mut run_len, &mut pieces)?;
    }
    if got != expected {
        return Err(StoreError::ShortRead {
            url: url.to_string(),
            expected,
            got,
        });
    }
    Ok(pieces)
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

    fn run_pieces(pieces: Vec<&'static [u8]>, expected: u64) -> Result<Vec<Bytes>, StoreError> {
        futures::executor::block_on(collect_pieces(stream(pieces), expected, "mem://x", |e| {
            StoreError::Backend {
                url: "mem://x".into(),
                source: e,
            }
        }))
    }

    #[test]
    fn bodies_collected_as_pieces_keep_them_and_check_the_length() {
        let got = run_pieces(vec![b"ab", b"", b"cde"], 5).unwrap();
        assert_eq!(got, vec![&b"abcde"[..]], "small pieces are put together");
        // a body in one small piece is kept as it came
        let one: &'static [u8] = b"abc";
        let alone = run_pieces(vec![one], 3).unwrap();
        assert_eq!(alone, vec![&b"abc"[..]]);
        assert_eq!(alone[0].as_ptr(), one.as_ptr());
        assert!(run_pieces(vec![], 0).unwrap().is_empty());
        assert!(matches!(
            run_pieces(vec![b"ab", b"c"], 4),
            Err(StoreError::ShortRead { got: 3, .. })
        ));
        assert!(matches!(
            run_pieces(vec![b"ab", b"cd"], 3),
            Err(StoreError::LongRead { expected: 3, .. })
        ));
        // announced 2^60 bytes, sent 6: nothing reserved from the announcement
        assert!(matches!(
            run_pieces(vec![b"abc", b"def"], 1 << 60),
            Err(StoreError::ShortRead { got: 6, .. })
        ));
    }

    #[test]
    fn large_pieces_are_kept_as_they_came_and_runs_of_small_ones_put_together() {
        let leak = |n: usize, b: u8| -> &'static [u8] { Box::leak(vec![b; n].into_boxed_slice()) };
        let (big, big2) = (leak(MIN_KEPT_PIECE, 1), leak(MIN_KEPT_PIECE + 5, 2));
        let (lone, last) = (leak(10, 3), leak(7, 4));
        let pieces = vec![&b"ab"[..], big, b"c", b"d", big2, lone, big, last];
        let total = pieces.iter().map(|p| p.len() as u64).sum();
        let got = run_pieces(pieces, total).unwrap();
        let lens: Vec<usize> = got.iter().map(|p| p.len()).collect();
        assert_eq!(
            lens,
            [
                2,
                MIN_KEPT_PIECE,
                2,
                MIN_KEPT_PIECE + 5,
                10,
                MIN_KEPT_PIECE,
                7
            ]
        );
        // kept as they came: the large pieces; a small one alone is copied
        for (i, kept) in [(1, big), (3, big2), (5, big)] {
            assert_eq!(got[i].as_ptr(), kept.as_ptr(), "piece {i} is not copied");
        }
        for (i, alone) in [(4, lone), (6, last)] {
            assert_ne!(got[i].as_ptr(), alone.as_ptr(), "piece {i} is copied");
            assert_eq!(&got[i][..], alone);
        }
        assert_eq!((&got[0][..], &got[2][..]), (&b"ab"[..], &b"cd"[..]));
        // a body trickling in bytes is held in pieces of MIN_KEPT_PIECE, each exactly that
        let one: Vec<&'static [u8]> = vec![b"x"; 2 * MIN_KEPT_PIECE + 3];
        let got = run_pieces(one, 2 * MIN_KEPT_PIECE as u64 + 3).unwrap();
        let lens: Vec<usize> = got.iter().map(|p| p.len()).collect();
        assert_eq!(lens, [MIN_KEPT_PIECE, MIN_KEPT_PIECE, 3]);
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
