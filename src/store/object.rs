//! A whole object fetched by one GET, read piece by piece by whoever consumes it.
//!
//! Remote backends deliver the body as bytes, in the pieces the HTTP client read it in; they
//! are kept as they came, apart from runs of small ones ([`super::body::collect_pieces`]),
//! and a range of the object is a slice of its piece, copied only when it spans more than
//! one (for a shard of inner chunks of tens of KiB, in pieces of hundreds, about one chunk
//! in eight). Reading a shard's inner chunks thus never copies its body into a buffer of
//! its whole length, which cost a copy and the page faults of a fresh buffer per object
//! (a caller wanting the whole object as one buffer, [`FetchedObject::into_bytes`], still
//! gets that one copy). The local filesystem delivers an open file
//! (`object_store`'s `GetResultPayload::File`): reading the pieces a decoder needs straight
//! from it (positioned reads into small buffers) avoids allocating, zeroing and faulting in a
//! buffer of the whole object, which cost more CPU than the file copy itself on whole-shard
//! reads. The open file pins the version fetched: `object_store` replaces local objects by
//! renaming a new file over the old one, so later writers never change what it reads.

use std::ops::Range;

use bytes::Bytes;

use super::{ObjectVersion, StoreError};

/// The body of a fetched object.
#[derive(Debug)]
enum Body {
    /// The bytes, in memory.
    Bytes(Bytes),
    /// The bytes, in memory, in pieces (more than one, none empty: see
    /// [`super::body::collect_pieces`]); `ends[i]` is the object offset where `pieces[i]`
    /// ends.
    Pieces { pieces: Vec<Bytes>, ends: Vec<u64> },
    /// An open local file holding the object's bytes at `[start, start + size)`.
    #[cfg(unix)]
    File { file: std::fs::File, start: u64 },
}

/// A whole object fetched by one GET, with its size and version.
#[derive(Debug)]
pub struct FetchedObject {
    body: Body,
    size: u64,
    version: ObjectVersion,
    url: String,
}

impl FetchedObject {
    /// An object whose body is in memory, in `pieces` (in order).
    pub(crate) fn from_pieces(mut pieces: Vec<Bytes>, version: ObjectVersion, url: String) -> Self {
        pieces.retain(|p| !p.is_empty());
        let ends: Vec<u64> = pieces
            .iter()
            .scan(0u64, |end, p| {
                *end += p.len() as u64;
                Some(*end)
            })
            .collect();
        let size = ends.last().copied().unwrap_or(0);
        let body = match pieces.len() {
            0 => Body::Bytes(Bytes::new()),
            1 => Body::Bytes(pieces.pop().unwrap_or_default()),
            _ => Body::Pieces { pieces, ends },
        };
        FetchedObject {
            size,
            body,
            version,
            url,
        }
    }

    /// An object whose body is `range` of an open local file.
    #[cfg(unix)]
    pub(crate) fn from_file(
        file: std::fs::File,
        range: Range<u64>,
        version: ObjectVersion,
        url: String,
    ) -> Self {
        FetchedObject {
            size: range.end.saturating_sub(range.start),
            body: Body::File {
                file,
                start: range.start,
            },
            version,
            url,
        }
    }

    /// Size of the object in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Version of the object.
    pub fn version(&self) -> &ObjectVersion {
        &self.version
    }

    /// Whether the body is in memory (pieces are then shared slices, not copies, unless
    /// they span more than one of the pieces the body arrived in).
    pub fn is_in_memory(&self) -> bool {
        matches!(self.body, Body::Bytes(_) | Body::Pieces { .. })
    }

    /// How many pieces the body is held in (1 for a file or a body in one buffer).
    #[doc(hidden)]
    pub fn pieces_held(&self) -> usize {
        match &self.body {
            Body::Pieces { pieces, .. } => pieces.len(),
            _ => 1,
        }
    }

    /// The whole object as one buffer: the body itself when it is one, else a copy
    /// reserved fallibly ([`StoreError::OutOfMemory`]). For a local file this is a blocking
    /// read, like [`FetchedObject::read_range`].
    pub fn into_bytes(self) -> Result<Bytes, StoreError> {
        match &self.body {
            Body::Bytes(b) => Ok(b.clone()),
            _ => self.read_range(0..self.size),
        }
    }

    /// Bytes `range` of the object. For a local file this is a blocking positioned read:
    /// call it from a blocking thread.
    pub fn read_range(&self, range: Range<u64>) -> Result<Bytes, StoreError> {
        match &self.body {
            Body::Bytes(b) => {
                self.check(&range)?;
                Ok(b.slice(range.start as usize..range.end as usize))
            }
            Body::Pieces { pieces, ends } => {
                self.check(&range)?;
                if range.is_empty() {
                    return Ok(Bytes::new());
                }
                let (i, start) = piece_at(pieces, ends, range.start);
                if range.end <= ends[i] {
                    let (a, b) = (range.start - start, range.end - start);
                    return Ok(pieces[i].slice(a as usize..b as usize));
                }
                let mut buf = Vec::new();
                self.copy_pieces(pieces, ends, range, &mut buf)?;
                Ok(Bytes::from(buf))
            }
            #[cfg(unix)]
            Body::File { .. } => {
                let mut buf = Vec::new();
                self.read_range_into(range, &mut buf)?;
                Ok(Bytes::from(buf))
            }
        }
    }

    /// Copies bytes `range` of the object into `buf` (in place of its contents), reusing its
    /// allocation. Blocking for a local file, like [`FetchedObject::read_range`].
    pub fn read_range_into(&self, range: Range<u64>, buf: &mut Vec<u8>) -> Result<(), StoreError> {
        self.check(&range)?;
        match &self.body {
            Body::Bytes(b) => {
                buf.clear();
                buf.extend_from_slice(&b[range.start as usize..range.end as usize]);
                Ok(())
            }
            Body::Pieces { pieces, ends } => {
                buf.clear();
                self.copy_pieces(pieces, ends, range, buf)
            }
            #[cfg(unix)]
            Body::File { file, start } => {
                use std::os::unix::fs::FileExt;
                let len = (range.end - range.start) as usize;
                buf.resize(len, 0);
                let mut done = 0;
                while done < len {
                    match file.read_at(&mut buf[done..], start + range.start + done as u64) {
                        Ok(0) => {
                            return Err(StoreError::ShortRead {
                                url: self.url.clone(),
                                expected: len as u64,
                                got: done as u64,
                            });
                        }
                        Ok(n) => done += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            return Err(StoreError::Backend {
                                url: self.url.clone(),
                                source: object_store::Error::Generic {
                                    store: "LocalFileSystem",
                                    source: Box::new(e),
                                },
                            });
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// Appends bytes `range` (checked) of a body in `pieces` to `out`, reserving them
    /// fallibly first.
    fn copy_pieces(
        &self,
        pieces: &[Bytes],
        ends: &[u64],
        range: Range<u64>,
        out: &mut Vec<u8>,
    ) -> Result<(), StoreError> {
        let len = (range.end - range.start) as usize;
        out.try_reserve_exact(len)
            .map_err(|_| StoreError::OutOfMemory {
                url: self.url.clone(),
                bytes: len as u64,
            })?;
        let mut at = range.start;
        while at < range.end {
            let (i, start) = piece_at(pieces, ends, at);
            let from = (at - start) as usize;
            let n = (pieces[i].len() - from).min((range.end - at) as usize);
            out.extend_from_slice(&pieces[i][from..from + n]);
            at += n as u64;
        }
        Ok(())
    }

    fn check(&self, range: &Range<u64>) -> Result<(), StoreError> {
        if range.start > range.end || range.end > self.size {
            return Err(StoreError::InvalidRange {
                url: self.url.clone(),
                start: range.start,
                end: range.end,
                reason: format!("outside the {}-byte object", self.size),
            });
        }
        Ok(())
    }
}

/// The piece holding object offset `at` (below the object's size), and the object offset
/// where that piece starts.
fn piece_at(pieces: &[Bytes], ends: &[u64], at: u64) -> (usize, u64) {
    let i = ends.partition_point(|&end| end <= at);
    (i, ends[i] - pieces[i].len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(pieces: &[&'static [u8]]) -> FetchedObject {
        let pieces = pieces.iter().map(|p| Bytes::from_static(p)).collect();
        FetchedObject::from_pieces(pieces, ObjectVersion::default(), "mem://x".into())
    }

    #[test]
    fn every_range_of_a_body_in_pieces_reads_as_of_the_whole() {
        let whole = b"abcdefghij";
        for split in [
            vec![&whole[..]],
            vec![&whole[..3], &whole[3..]],
            vec![
                &whole[..1],
                &b""[..],
                &whole[1..4],
                &whole[4..9],
                &whole[9..],
            ],
        ] {
            let o = object(&split);
            assert_eq!(o.size(), 10);
            assert!(o.is_in_memory());
            for a in 0..=10u64 {
                for b in a..=10u64 {
                    let want = &whole[a as usize..b as usize];
                    assert_eq!(o.read_range(a..b).unwrap(), want, "{split:?} {a}..{b}");
                    let mut buf = vec![7u8; 3];
                    o.read_range_into(a..b, &mut buf).unwrap();
                    assert_eq!(buf, want, "{split:?} {a}..{b}");
                }
            }
            assert!(matches!(
                o.read_range(5..11),
                Err(StoreError::InvalidRange { .. })
            ));
            #[allow(clippy::reversed_empty_ranges)]
            let backwards = 6..5;
            assert!(o.read_range(backwards).is_err());
        }
        assert_eq!(object(&[]).size(), 0);
        assert_eq!(object(&[]).read_range(0..0).unwrap(), &b""[..]);
    }

    #[test]
    fn a_range_inside_one_piece_is_a_slice_of_it() {
        let o = object(&[b"abc", b"defg"]);
        let Body::Pieces { pieces, .. } = &o.body else {
            panic!("two pieces are kept apart");
        };
        let got = o.read_range(4..6).unwrap();
        assert_eq!(got, &b"ef"[..]);
        assert_eq!(got.as_ptr(), pieces[1][1..].as_ptr(), "not copied");
    }
}
