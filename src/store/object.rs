//! A whole object fetched by one GET, read piece by piece by whoever consumes it.
//!
//! Remote backends deliver the body as bytes. The local filesystem delivers an open file
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
    /// An object whose body is in memory.
    pub(crate) fn from_bytes(bytes: Bytes, version: ObjectVersion, url: String) -> Self {
        FetchedObject {
            size: bytes.len() as u64,
            body: Body::Bytes(bytes),
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

    /// Whether the body is in memory (pieces are then shared slices, not copies).
    pub fn is_in_memory(&self) -> bool {
        matches!(self.body, Body::Bytes(_))
    }

    /// Bytes `range` of the object. For a local file this is a blocking positioned read:
    /// call it from a blocking thread.
    pub fn read_range(&self, range: Range<u64>) -> Result<Bytes, StoreError> {
        match &self.body {
            Body::Bytes(b) => {
                self.check(&range)?;
                Ok(b.slice(range.start as usize..range.end as usize))
            }
            #[cfg(unix)]
            Body::File { .. } => {
                let mut buf = Vec::new();
                self.read_range_into(range, &mut buf)?;
                Ok(Bytes::from(buf))
            }
        }
    }

    /// Copies bytes `range` of the object into `buf` (resized to the range's length),
    /// reusing its allocation. Blocking for a local file, like [`FetchedObject::read_range`].
    pub fn read_range_into(&self, range: Range<u64>, buf: &mut Vec<u8>) -> Result<(), StoreError> {
        self.check(&range)?;
        let len = (range.end - range.start) as usize;
        buf.resize(len, 0);
        match &self.body {
            Body::Bytes(b) => {
                buf.copy_from_slice(&b[range.start as usize..range.end as usize]);
                Ok(())
            }
            #[cfg(unix)]
            Body::File { file, start } => {
                use std::os::unix::fs::FileExt;
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
