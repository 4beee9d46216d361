//! A shard built as its inner chunks arrive: [`ShardAssembler`] (one contiguous buffer) and
//! [`ShardParts`] (the encodings kept as they are, for a PUT of several parts).

use bytes::Bytes;

use super::config::IndexLocation;
use super::index::ShardIndex;
use super::index_codec::ShardIndexCodec;
use crate::codec::CodecError;

/// Where each inner chunk lands in a shard laid out compactly in ascending C order, and the
/// index that says so; shared by both assemblers.
#[derive(Debug)]
struct Layout {
    codec: ShardIndexCodec,
    index: ShardIndex,
    /// The next inner chunk (linear index) that may be placed.
    next: usize,
    /// The shard's bytes so far (with room for the index when it lies at the start).
    len: u64,
}

impl Layout {
    fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        let index = ShardIndex::try_new_empty(codec.chunks_per_shard(), what)?;
        let len = match codec.location() {
            IndexLocation::Start => codec.encoded_size(),
            IndexLocation::End => 0,
        };
        Ok(Layout {
            codec,
            index,
            next: 0,
            len,
        })
    }

    /// Places inner chunk `linear` of `size` bytes after the last one.
    fn place(&mut self, linear: usize, size: u64) -> Result<(), CodecError> {
        if linear < self.next || linear >= self.index.len() {
            return Err(CodecError::InvalidConfiguration {
                field: "shard assembly".into(),
                reason: format!(
                    "inner chunk {linear} appended after {} (of {})",
                    self.next,
                    self.index.len()
                ),
            });
        }
        let start = self.len;
        let end = start.checked_add(size).ok_or(alloc(u64::MAX))?;
        self.index.set(linear, Some(start..end));
        self.next = linear + 1;
        self.len = end;
        Ok(())
    }

    /// The encoded index; `None` when no inner chunk was placed (delete the shard instead).
    fn encoded_index(&self) -> Result<Option<Vec<u8>>, CodecError> {
        if self.index.all_empty() {
            return Ok(None);
        }
        let encoded = self.codec.encode(&self.index)?;
        let size = self.codec.encoded_size() as usize;
        if encoded.len() != size {
            return Err(CodecError::InvalidConfiguration {
                field: "shard assembly".into(),
                reason: format!(
                    "the index encodes to {} bytes, not the {size} its codec declares",
                    encoded.len()
                ),
            });
        }
        Ok(Some(encoded))
    }
}

/// Builds a shard from its encoded inner chunks handed over one at a time in ascending C
/// order ([`append`](Self::append)), laid out compactly in that order: memory holds the
/// shard being built and its index, never a list of the inner chunks. Used by
/// [`Sharding::assemble_shard`](super::Sharding::assemble_shard).
#[derive(Debug)]
pub struct ShardAssembler {
    layout: Layout,
    /// The shard so far: (room for) the index first when it lies at the start, then the
    /// inner chunks appended.
    shard: Vec<u8>,
}

impl ShardAssembler {
    /// An empty shard of the inner grid of `codec`; `what` names the shard in errors.
    pub fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        let layout = Layout::new(codec, what)?;
        let mut shard = Vec::new();
        grow(&mut shard, layout.len)?;
        shard.resize(layout.len as usize, 0);
        Ok(ShardAssembler { layout, shard })
    }

    /// Reserves room for `bytes` more bytes of inner chunks (and the index, when it comes
    /// last), when their total is known in advance: the shard then grows no more.
    pub fn reserve(&mut self, bytes: u64) -> Result<(), CodecError> {
        let index = match self.layout.codec.location() {
            IndexLocation::Start => 0,
            IndexLocation::End => self.layout.codec.encoded_size(),
        };
        let more = bytes.saturating_add(index);
        let total = (self.shard.len() as u64).saturating_add(more);
        usize::try_from(more)
            .ok()
            .and_then(|n| self.shard.try_reserve_exact(n).ok())
            .ok_or(alloc(total))
    }

    /// Appends the encoding of inner chunk `linear` (C order); inner chunks never appended
    /// stay empty. Inner chunks come in ascending order, each at most once.
    pub fn append(&mut self, linear: usize, encoded: &[u8]) -> Result<(), CodecError> {
        self.layout.place(linear, encoded.len() as u64)?;
        grow(&mut self.shard, encoded.len() as u64)?;
        self.shard.extend_from_slice(encoded);
        Ok(())
    }

    /// The shard, its index written in place; `None` when no inner chunk was appended
    /// (delete the shard instead).
    pub fn finish(mut self) -> Result<Option<Vec<u8>>, CodecError> {
        let Some(encoded) = self.layout.encoded_index()? else {
            return Ok(None);
        };
        match self.layout.codec.location() {
            IndexLocation::Start => self.shard[..encoded.len()].copy_from_slice(&encoded),
            IndexLocation::End => {
                self.shard
                    .try_reserve_exact(encoded.len())
                    .map_err(|_| alloc(encoded.len() as u64))?;
                self.shard.extend_from_slice(&encoded);
            }
        }
        Ok(Some(self.shard))
    }
}

/// Builds a shard as [`ShardAssembler`] does, but keeps each large inner chunk encoding as
/// the piece it was handed over as (a fresh encoding, or a slice of the stored shard copied
/// verbatim): [`finish`](Self::finish) returns the pieces in order with the index piece in
/// its place, to be stored as one object of several parts. Encodings of at least
/// [`OWN_PIECE_BYTES`] are never copied, so a writer that encodes in parallel has no large
/// serial copy after its encodes; smaller ones are copied together into shared pieces, so
/// a shard of many tiny inner chunks is a few parts (and a few writes), not one each.
#[derive(Debug)]
pub struct ShardParts {
    layout: Layout,
    parts: Vec<Bytes>,
    /// Small encodings since the last part, copied together.
    small: Vec<u8>,
}

/// The size from which an inner chunk's encoding stays a part of its own in
/// [`ShardParts`].
pub const OWN_PIECE_BYTES: usize = 16 << 10;

impl ShardParts {
    /// An empty shard of the inner grid of `codec`; `what` names the shard in errors.
    pub fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        Ok(ShardParts {
            layout: Layout::new(codec, what)?,
            parts: Vec::new(),
            small: Vec::new(),
        })
    }

    /// Appends the encoding of inner chunk `linear` (C order), as [`ShardAssembler::append`]
    /// does, without copying it when it is large.
    pub fn append(&mut self, linear: usize, encoded: Bytes) -> Result<(), CodecError> {
        self.layout.place(linear, encoded.len() as u64)?;
        if encoded.len() < OWN_PIECE_BYTES {
            grow(&mut self.small, encoded.len() as u64)?;
            self.small.extend_from_slice(&encoded);
        } else {
            self.flush_small();
            self.parts.push(encoded);
        }
        Ok(())
    }

    fn flush_small(&mut self) {
        if !self.small.is_empty() {
            self.parts
                .push(Bytes::from(std::mem::take(&mut self.small)));
        }
    }

    /// The shard's pieces in order, the index among them; `None` when no inner chunk was
    /// appended (delete the shard instead).
    pub fn finish(self) -> Result<Option<Vec<Bytes>>, CodecError> {
        Ok(self.finish_with_index()?.map(|(parts, _)| parts))
    }

    /// [`finish`](Self::finish), with the shard's index (where each inner chunk lies in the
    /// assembled shard).
    pub fn finish_with_index(mut self) -> Result<Option<(Vec<Bytes>, ShardIndex)>, CodecError> {
        let Some(encoded) = self.layout.encoded_index()? else {
            return Ok(None);
        };
        self.flush_small();
        match self.layout.codec.location() {
            IndexLocation::Start => self.parts.insert(0, Bytes::from(encoded)),
            IndexLocation::End => self.parts.push(Bytes::from(encoded)),
        }
        Ok(Some((self.parts, self.layout.index)))
    }
}

/// Room for `more` bytes in `shard`, reserved fallibly (amortised growth).
fn grow(shard: &mut Vec<u8>, more: u64) -> Result<(), CodecError> {
    let total = (shard.len() as u64).saturating_add(more);
    usize::try_from(more)
        .ok()
        .and_then(|n| shard.try_reserve(n).ok())
        .ok_or(alloc(total))
}

fn alloc(bytes: u64) -> CodecError {
    CodecError::Allocation {
        what: "an assembled shard",
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarrs::metadata::v3::MetadataV3;

    fn codec(location: IndexLocation) -> ShardIndexCodec {
        let bytes = MetadataV3::new_with_configuration(
            "bytes",
            serde_json::Map::from_iter([("endian".to_string(), serde_json::json!("little"))]),
        );
        ShardIndexCodec::new(&[bytes], &[4], location, "codecs[0]").unwrap()
    }

    #[test]
    fn inner_chunks_are_laid_out_in_order_with_the_index_in_place() {
        for location in [IndexLocation::Start, IndexLocation::End] {
            let codec = codec(location);
            let mut shard = ShardAssembler::new(codec.clone(), "s").unwrap();
            shard.append(1, b"abc").unwrap();
            shard.append(3, b"de").unwrap();
            // out of order, twice, or past the end: refused
            assert!(shard.append(3, b"x").is_err());
            assert!(shard.append(0, b"x").is_err());
            assert!(shard.append(4, b"x").is_err());
            let bytes = shard.finish().unwrap().unwrap();
            let n = codec.encoded_size() as usize;
            assert_eq!(bytes.len(), n + 5);
            let index = codec.decode_from_shard(&bytes, "s").unwrap();
            let (a, b) = (index.get(1).unwrap(), index.get(3).unwrap());
            assert_eq!(&bytes[a.start as usize..a.end as usize], b"abc");
            assert_eq!(&bytes[b.start as usize..b.end as usize], b"de");
            assert!(index.get(0).is_none() && index.get(2).is_none());
        }
        let empty = ShardAssembler::new(codec(IndexLocation::End), "s").unwrap();
        assert_eq!(empty.finish().unwrap(), None);
    }

    #[test]
    fn shard_parts_concatenate_to_the_assembled_shard() {
        for location in [IndexLocation::Start, IndexLocation::End] {
            let codec = codec(location);
            let mut whole = ShardAssembler::new(codec.clone(), "s").unwrap();
            let mut parts = ShardParts::new(codec.clone(), "s").unwrap();
            let big = vec![7u8; OWN_PIECE_BYTES];
            for (i, enc) in [(0, &b"abc"[..]), (1, &big[..]), (2, b""), (3, b"defg")] {
                whole.append(i, enc).unwrap();
                parts.append(i, Bytes::copy_from_slice(enc)).unwrap();
            }
            assert!(parts.append(3, Bytes::from_static(b"x")).is_err());
            assert!(parts.append(4, Bytes::from_static(b"x")).is_err());
            let pieces = parts.finish().unwrap().unwrap();
            // the index, "abc", the large one as it came, then "defg" ("" adds nothing)
            assert_eq!(pieces.len(), 4);
            let joined: Vec<u8> = pieces.concat();
            assert_eq!(joined, whole.finish().unwrap().unwrap());
        }
        let empty = ShardParts::new(codec(IndexLocation::Start), "s").unwrap();
        assert_eq!(empty.finish().unwrap(), None);
    }
}
