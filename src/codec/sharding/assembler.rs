//! A shard built as its inner chunks arrive: [`ShardAssembler`] (one contiguous buffer) and
//! [`ShardParts`] (the encodings kept as they are, for a PUT of several parts). Both lay the
//! inner chunks out compactly in the shard's layout order ([`InnerChunkOrder`]: C order
//! unless ranks say otherwise), streaming them in as they come when they come in that order.
//!
//! [`InnerChunkOrder`]: super::InnerChunkOrder

use std::sync::Arc;

use bytes::Bytes;

use super::config::IndexLocation;
use super::index::ShardIndex;
use super::index_codec::ShardIndexCodec;
use crate::codec::CodecError;

/// Where each inner chunk lands in a shard laid out compactly in ascending layout order, and
/// the index that says so; shared by both assemblers.
#[derive(Debug)]
struct Layout {
    codec: ShardIndexCodec,
    index: ShardIndex,
    /// `ranks[linear]`: the inner chunk's position in the layout; `None`: C order.
    ranks: Option<Arc<Vec<u32>>>,
    /// The least rank the next inner chunk placed may have.
    next: u64,
    /// The shard's bytes so far (with room for the index when it lies at the start).
    len: u64,
}

impl Layout {
    fn new(
        codec: ShardIndexCodec,
        ranks: Option<Arc<Vec<u32>>>,
        what: &str,
    ) -> Result<Self, CodecError> {
        let index = ShardIndex::try_new_empty(codec.chunks_per_shard(), what)?;
        if let Some(r) = &ranks
            && r.len() != index.len()
        {
            return Err(assembly(format!(
                "a layout order of {} inner chunks for a shard of {}",
                r.len(),
                index.len()
            )));
        }
        let len = match codec.location() {
            IndexLocation::Start => codec.encoded_size(),
            IndexLocation::End => 0,
        };
        Ok(Layout {
            codec,
            index,
            ranks,
            next: 0,
            len,
        })
    }

    /// The layout position of inner chunk `linear` (C order); an error past the end.
    fn rank(&self, linear: usize) -> Result<u32, CodecError> {
        if linear >= self.index.len() {
            return Err(assembly(format!(
                "inner chunk {linear} placed in a shard of {}",
                self.index.len()
            )));
        }
        Ok(self.ranks.as_ref().map_or(linear as u32, |r| r[linear]))
    }

    /// Places inner chunk `linear` of `size` bytes after the last one placed, which must
    /// come before it in the layout order.
    fn place(&mut self, linear: usize, size: u64) -> Result<(), CodecError> {
        let rank = u64::from(self.rank(linear)?);
        if rank < self.next {
            return Err(assembly(format!(
                "inner chunk {linear} placed out of the layout order (or twice)"
            )));
        }
        let start = self.len;
        let end = start.checked_add(size).ok_or(alloc(u64::MAX))?;
        self.index.set(linear, Some(start..end));
        self.next = rank + 1;
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
            return Err(assembly(format!(
                "the index encodes to {} bytes, not the {size} its codec declares",
                encoded.len()
            )));
        }
        Ok(Some(encoded))
    }
}

/// Builds a shard from its encoded inner chunks handed over one at a time in ascending
/// layout order ([`append`](Self::append)), laid out compactly in that order: memory holds
/// the shard being built and its index, never a list of the inner chunks. Used by
/// [`Sharding::encode_shard`](super::Sharding::encode_shard) and
/// [`Sharding::assemble_shard`](super::Sharding::assemble_shard), which visit the inner
/// chunks in layout order.
#[derive(Debug)]
pub struct ShardAssembler {
    layout: Layout,
    /// The shard so far: (room for) the index first when it lies at the start, then the
    /// inner chunks appended.
    shard: Vec<u8>,
}

impl ShardAssembler {
    /// An empty shard of the inner grid of `codec`, laid out in C order; `what` names the
    /// shard in errors.
    pub fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        Self::with_ranks(codec, None, what)
    }

    /// An empty shard laid out by `ranks` (from
    /// [`InnerChunkOrder::ranks`](super::InnerChunkOrder::ranks); `None`: C order).
    pub fn with_ranks(
        codec: ShardIndexCodec,
        ranks: Option<Arc<Vec<u32>>>,
        what: &str,
    ) -> Result<Self, CodecError> {
        let layout = Layout::new(codec, ranks, what)?;
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

    /// Appends the encoding of inner chunk `linear` (its C-order index over the inner grid);
    /// inner chunks never appended stay empty. Inner chunks come in ascending layout order,
    /// each at most once.
    pub fn append(&mut self, linear: usize, encoded: &[u8]) -> Result<(), CodecError> {
        grow(&mut self.shard, encoded.len() as u64)?;
        self.layout.place(linear, encoded.len() as u64)?;
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
/// verbatim): [`finish`](Self::finish) returns the pieces in layout order with the index
/// piece in its place, to be stored as one object of several parts. Encodings of at least
/// [`OWN_PIECE_BYTES`] are never copied, so a writer that encodes in parallel has no large
/// serial copy after its encodes; smaller ones are copied together into shared pieces, so
/// a shard of many tiny inner chunks is a few parts (and a few writes), not one each.
///
/// In C order the inner chunks come in ascending order and stream in: memory holds the
/// shard's pieces and its index, never a list of the inner chunks. With ranks (another
/// layout order) they may come in any order: each is kept, with its rank, until
/// [`finish`](Self::finish) lays them out (40 bytes an inner chunk appended, up to twice
/// that while the list grows, and every encoding stays where it was made until then).
#[derive(Debug)]
pub struct ShardParts {
    layout: Layout,
    parts: Vec<Bytes>,
    /// Small encodings since the last part, copied together.
    small: Vec<u8>,
    /// With ranks: `(rank, linear, encoding)` of the inner chunks appended, laid out when
    /// the shard is finished.
    waiting: Option<Vec<(u32, u32, Bytes)>>,
}

/// The size from which an inner chunk's encoding stays a part of its own in
/// [`ShardParts`].
pub const OWN_PIECE_BYTES: usize = 16 << 10;

impl ShardParts {
    /// An empty shard of the inner grid of `codec`, laid out in C order (inner chunks
    /// appended in ascending order); `what` names the shard in errors.
    pub fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        Self::with_ranks(codec, None, what)
    }

    /// An empty shard laid out by `ranks` (from
    /// [`InnerChunkOrder::ranks`](super::InnerChunkOrder::ranks); `None`: C order, appended
    /// in ascending order). With ranks, inner chunks may be appended in any order.
    pub fn with_ranks(
        codec: ShardIndexCodec,
        ranks: Option<Arc<Vec<u32>>>,
        what: &str,
    ) -> Result<Self, CodecError> {
        let waiting = ranks.is_some().then(Vec::new);
        Ok(ShardParts {
            layout: Layout::new(codec, ranks, what)?,
            parts: Vec::new(),
            small: Vec::new(),
            waiting,
        })
    }

    /// Appends the encoding of inner chunk `linear` (C-order index), as
    /// [`ShardAssembler::append`] does, without copying it when it is large.
    pub fn append(&mut self, linear: usize, encoded: Bytes) -> Result<(), CodecError> {
        if let Some(waiting) = &mut self.waiting {
            let rank = self.layout.rank(linear)?;
            waiting
                .try_reserve(1)
                .map_err(|_| alloc(waiting.len() as u64 * 48))?;
            waiting.push((rank, linear as u32, encoded));
            return Ok(());
        }
        self.stream(linear, encoded)
    }

    /// Places inner chunk `linear` after the last one (in layout order).
    fn stream(&mut self, linear: usize, encoded: Bytes) -> Result<(), CodecError> {
        if encoded.len() < OWN_PIECE_BYTES {
            grow(&mut self.small, encoded.len() as u64)?;
            self.layout.place(linear, encoded.len() as u64)?;
            self.small.extend_from_slice(&encoded);
        } else {
            self.parts
                .try_reserve(2)
                .map_err(|_| alloc(self.parts.len() as u64 * 32))?;
            self.layout.place(linear, encoded.len() as u64)?;
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
        if let Some(mut waiting) = self.waiting.take() {
            // in layout order; an inner chunk appended twice is then out of order
            waiting.sort_unstable_by_key(|w| w.0);
            for (_, linear, encoded) in waiting {
                self.stream(linear as usize, encoded)?;
            }
        }
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

fn assembly(reason: String) -> CodecError {
    CodecError::InvalidConfiguration {
        field: "shard assembly".into(),
        reason,
    }
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
    fn a_layout_order_decides_where_inner_chunks_lie() {
        // ranks laying the four inner chunks out backwards
        let ranks = Some(Arc::new(vec![3, 2, 1, 0]));
        let mut shard =
            ShardAssembler::with_ranks(codec(IndexLocation::End), ranks.clone(), "s").unwrap();
        for (i, enc) in [(3, &b"ddd"[..]), (2, b"cc"), (0, b"a")] {
            shard.append(i, enc).unwrap();
        }
        // C order is out of this layout's order
        assert!(shard.append(1, b"b").is_err());
        let bytes = shard.finish().unwrap().unwrap();
        assert_eq!(&bytes[..6], b"dddcca");
        let index = codec(IndexLocation::End)
            .decode_from_shard(&bytes, "s")
            .unwrap();
        assert_eq!(index.get(0), Some(5..6));
        assert_eq!(index.get(2), Some(3..5));
        assert_eq!(index.get(3), Some(0..3));
        // with ranks, ShardParts takes the inner chunks in any order; twice is refused
        let mut parts =
            ShardParts::with_ranks(codec(IndexLocation::End), ranks.clone(), "s").unwrap();
        for (i, enc) in [(0, &b"a"[..]), (2, b"cc"), (3, b"ddd")] {
            parts.append(i, Bytes::copy_from_slice(enc)).unwrap();
        }
        assert!(parts.append(4, Bytes::from_static(b"x")).is_err());
        assert_eq!(parts.finish().unwrap().unwrap().concat(), bytes);
        let mut twice = ShardParts::with_ranks(codec(IndexLocation::End), ranks, "s").unwrap();
        twice.append(1, Bytes::from_static(b"a")).unwrap();
        twice.append(1, Bytes::from_static(b"a")).unwrap();
        assert!(twice.finish().is_err());
        // a layout order of the wrong length is refused
        let short = Some(Arc::new(vec![0, 1]));
        assert!(ShardParts::with_ranks(codec(IndexLocation::End), short, "s").is_err());
    }

    #[test]
    fn parts_kept_until_finished_match_the_assembled_shard_with_the_index_anywhere() {
        let ranks = Some(Arc::new(vec![2, 0, 3, 1]));
        let big = vec![9u8; OWN_PIECE_BYTES + 1];
        for location in [IndexLocation::Start, IndexLocation::End] {
            let codec = codec(location);
            // in layout order (1, 3, 0, 2) for the assembler, in C order for the parts
            let mut whole = ShardAssembler::with_ranks(codec.clone(), ranks.clone(), "s").unwrap();
            for (i, enc) in [(1, &b"b"[..]), (3, &big[..]), (0, b"aa"), (2, b"ccc")] {
                whole.append(i, enc).unwrap();
            }
            let mut parts = ShardParts::with_ranks(codec.clone(), ranks.clone(), "s").unwrap();
            for (i, enc) in [(0, &b"aa"[..]), (1, b"b"), (2, b"ccc"), (3, &big[..])] {
                parts.append(i, Bytes::copy_from_slice(enc)).unwrap();
            }
            let (pieces, index) = parts.finish_with_index().unwrap().unwrap();
            let joined = pieces.concat();
            assert_eq!(joined, whole.finish().unwrap().unwrap());
            assert_eq!(codec.decode_from_shard(&joined, "s").unwrap(), index);
            let first = index.get(1).unwrap().start;
            assert_eq!(
                first,
                if location == IndexLocation::Start {
                    codec.encoded_size()
                } else {
                    0
                }
            );
        }
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
