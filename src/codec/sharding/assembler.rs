//! A shard built as its inner chunks arrive: [`ShardAssembler`] (one contiguous buffer) and
//! [`ShardParts`] (the encodings kept as they are, for a PUT of several parts). Both lay the
//! inner chunks out compactly in the shard's [`InnerChunkOrder`], whatever order they arrive
//! in.

use std::sync::Arc;

use bytes::Bytes;

use super::config::IndexLocation;
use super::index::ShardIndex;
use super::index_codec::ShardIndexCodec;
use crate::codec::CodecError;

/// Which inner chunks were placed, and where each goes in the shard's layout order; shared by
/// both assemblers. Memory holds an entry per inner chunk placed, not per inner chunk.
#[derive(Debug)]
struct Layout {
    codec: ShardIndexCodec,
    /// `ranks[linear]`: the inner chunk's position in the layout; `None`: C order.
    ranks: Option<Arc<[u32]>>,
    /// Inner chunks in the shard.
    n: usize,
    /// `(rank, linear)` of each inner chunk placed, in the order placed.
    placed: Vec<(u32, u32)>,
    /// Whether `placed` is in strictly ascending rank (so already in layout order).
    in_order: bool,
    /// Names the shard in errors.
    what: String,
}

impl Layout {
    fn new(
        codec: ShardIndexCodec,
        ranks: Option<Arc<[u32]>>,
        what: &str,
    ) -> Result<Self, CodecError> {
        // at most MAX_SHARD_ENTRIES (2^30): checked by the index codec
        let n = crate::codec::block::num_elements(codec.chunks_per_shard()) as usize;
        if ranks.as_ref().is_some_and(|r| r.len() != n) {
            return Err(assembly(format!(
                "a layout order of {} inner chunks for a shard of {n}",
                ranks.as_ref().map_or(0, |r| r.len())
            )));
        }
        Ok(Layout {
            codec,
            ranks,
            n,
            placed: Vec::new(),
            in_order: true,
            what: what.to_string(),
        })
    }

    /// Notes inner chunk `linear` (C order) as placed.
    fn place(&mut self, linear: usize) -> Result<(), CodecError> {
        if linear >= self.n {
            return Err(assembly(format!(
                "inner chunk {linear} placed in a shard of {}",
                self.n
            )));
        }
        let rank = self.ranks.as_ref().map_or(linear as u32, |r| r[linear]);
        if let Some(&(last, _)) = self.placed.last() {
            self.in_order &= rank > last;
        }
        self.placed
            .try_reserve(1)
            .map_err(|_| alloc(self.placed.len() as u64 * 8))?;
        self.placed.push((rank, linear as u32));
        Ok(())
    }

    /// The order to lay the placed inner chunks out in: positions into `placed`, by rank.
    /// An inner chunk placed twice is an error.
    fn arrangement(&self) -> Result<Vec<usize>, CodecError> {
        let mut order: Vec<usize> = Vec::new();
        order
            .try_reserve_exact(self.placed.len())
            .map_err(|_| alloc(self.placed.len() as u64 * 8))?;
        order.extend(0..self.placed.len());
        if !self.in_order {
            order.sort_unstable_by_key(|&k| self.placed[k].0);
            if let Some(w) = order
                .windows(2)
                .find(|w| self.placed[w[0]].0 == self.placed[w[1]].0)
            {
                return Err(assembly(format!(
                    "inner chunk {} placed twice",
                    self.placed[w[0]].1
                )));
            }
        }
        Ok(order)
    }

    /// The offset of the first inner chunk (after the index when it lies at the start).
    fn first_offset(&self) -> u64 {
        match self.codec.location() {
            IndexLocation::Start => self.codec.encoded_size(),
            IndexLocation::End => 0,
        }
    }

    /// The index of inner chunks laid out compactly in `order` (from
    /// [`arrangement`](Self::arrangement)) with `size(k)` bytes for `placed[k]`, and that
    /// index encoded; `None` when nothing was placed.
    fn index(
        &self,
        order: &[usize],
        size: impl Fn(usize) -> u64,
    ) -> Result<Option<(ShardIndex, Vec<u8>)>, CodecError> {
        if self.placed.is_empty() {
            return Ok(None);
        }
        let mut index = ShardIndex::try_new_empty(self.codec.chunks_per_shard(), &self.what)?;
        let mut offset = self.first_offset();
        for &k in order {
            let end = offset.checked_add(size(k)).ok_or(alloc(u64::MAX))?;
            index.set(self.placed[k].1 as usize, Some(offset..end));
            offset = end;
        }
        let encoded = self.codec.encode(&index)?;
        let declared = self.codec.encoded_size() as usize;
        if encoded.len() != declared {
            return Err(assembly(format!(
                "the index encodes to {} bytes, not the {declared} its codec declares",
                encoded.len()
            )));
        }
        Ok(Some((index, encoded)))
    }
}

/// Builds a shard from its encoded inner chunks handed over one at a time
/// ([`append`](Self::append)), laid out compactly in the layout order into one buffer: memory
/// holds the shard being built, its index and an entry per inner chunk appended. Inner
/// chunks appended in the layout order are copied once; otherwise once more when the shard
/// is finished. Used by [`Sharding::assemble_shard`](super::Sharding::assemble_shard).
#[derive(Debug)]
pub struct ShardAssembler {
    layout: Layout,
    /// Room for the index when it lies at the start, then the inner chunks appended, back
    /// to back in the order appended.
    data: Vec<u8>,
    /// Where each appended inner chunk lies in `data`, in the order appended.
    spans: Vec<(usize, usize)>,
}

impl ShardAssembler {
    /// An empty shard of the inner grid of `codec` laid out in C order; `what` names the
    /// shard in errors.
    pub fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        Self::with_ranks(codec, None, what)
    }

    /// An empty shard laid out by `ranks` (see [`InnerChunkOrder::ranks`]; `None`: C order).
    ///
    /// [`InnerChunkOrder::ranks`]: super::InnerChunkOrder::ranks
    pub fn with_ranks(
        codec: ShardIndexCodec,
        ranks: Option<Arc<[u32]>>,
        what: &str,
    ) -> Result<Self, CodecError> {
        let layout = Layout::new(codec, ranks, what)?;
        let mut data = Vec::new();
        grow(&mut data, layout.first_offset())?;
        data.resize(layout.first_offset() as usize, 0);
        Ok(ShardAssembler {
            layout,
            data,
            spans: Vec::new(),
        })
    }

    /// Reserves room for `bytes` more bytes of inner chunks (and the index), when their
    /// total is known in advance: the shard then grows no more.
    pub fn reserve(&mut self, bytes: u64) -> Result<(), CodecError> {
        let more = bytes.saturating_add(self.layout.codec.encoded_size());
        let total = (self.data.len() as u64).saturating_add(more);
        usize::try_from(more)
            .ok()
            .and_then(|n| self.data.try_reserve_exact(n).ok())
            .ok_or(alloc(total))
    }

    /// Appends the encoding of inner chunk `linear` (C-order index over the inner grid);
    /// inner chunks never appended stay empty. Each inner chunk at most once.
    pub fn append(&mut self, linear: usize, encoded: &[u8]) -> Result<(), CodecError> {
        self.layout.place(linear)?;
        grow(&mut self.data, encoded.len() as u64)?;
        self.spans
            .try_reserve(1)
            .map_err(|_| alloc(self.spans.len() as u64 * 16))?;
        let start = self.data.len();
        self.data.extend_from_slice(encoded);
        self.spans.push((start, self.data.len()));
        Ok(())
    }

    /// The shard, its index in place; `None` when no inner chunk was appended (delete the
    /// shard instead).
    pub fn finish(self) -> Result<Option<Vec<u8>>, CodecError> {
        let order = self.layout.arrangement()?;
        let spans = &self.spans;
        let Some((_, index)) = self
            .layout
            .index(&order, |k| (spans[k].1 - spans[k].0) as u64)?
        else {
            return Ok(None);
        };
        let mut data = self.data;
        if !self.layout.in_order {
            let head = self.layout.first_offset() as usize;
            let mut arranged = Vec::new();
            grow(&mut arranged, data.len() as u64 + index.len() as u64)?;
            arranged.resize(head, 0);
            for &k in &order {
                arranged.extend_from_slice(&data[spans[k].0..spans[k].1]);
            }
            data = arranged;
        }
        match self.layout.codec.location() {
            IndexLocation::Start => data[..index.len()].copy_from_slice(&index),
            IndexLocation::End => {
                grow(&mut data, index.len() as u64)?;
                data.extend_from_slice(&index);
            }
        }
        Ok(Some(data))
    }
}

/// Builds a shard as [`ShardAssembler`] does, but keeps each large inner chunk encoding as
/// the piece it was handed over as (a fresh encoding, or a slice of the stored shard copied
/// verbatim): [`finish`](Self::finish) returns the pieces in layout order with the index
/// piece in its place, to be stored as one object of several parts. Encodings of at least
/// [`OWN_PIECE_BYTES`] are never copied, so a writer that encodes in parallel has no large
/// serial copy after its encodes; smaller ones are copied together into shared pieces, so
/// a shard of many tiny inner chunks is a few parts (and a few writes), not one each.
#[derive(Debug)]
pub struct ShardParts {
    layout: Layout,
    /// The encodings, in the order appended.
    pieces: Vec<Bytes>,
}

/// The size from which an inner chunk's encoding stays a part of its own in
/// [`ShardParts`].
pub const OWN_PIECE_BYTES: usize = 16 << 10;

impl ShardParts {
    /// An empty shard of the inner grid of `codec` laid out in C order; `what` names the
    /// shard in errors.
    pub fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        Self::with_ranks(codec, None, what)
    }

    /// An empty shard laid out by `ranks` (see [`InnerChunkOrder::ranks`]; `None`: C order).
    ///
    /// [`InnerChunkOrder::ranks`]: super::InnerChunkOrder::ranks
    pub fn with_ranks(
        codec: ShardIndexCodec,
        ranks: Option<Arc<[u32]>>,
        what: &str,
    ) -> Result<Self, CodecError> {
        Ok(ShardParts {
            layout: Layout::new(codec, ranks, what)?,
            pieces: Vec::new(),
        })
    }

    /// Appends the encoding of inner chunk `linear`, as [`ShardAssembler::append`] does,
    /// without copying it.
    pub fn append(&mut self, linear: usize, encoded: Bytes) -> Result<(), CodecError> {
        self.layout.place(linear)?;
        self.pieces
            .try_reserve(1)
            .map_err(|_| alloc(self.pieces.len() as u64 * 32))?;
        self.pieces.push(encoded);
        Ok(())
    }

    /// The shard's pieces in order, the index among them; `None` when no inner chunk was
    /// appended (delete the shard instead).
    pub fn finish(self) -> Result<Option<Vec<Bytes>>, CodecError> {
        Ok(self.finish_with_index()?.map(|(parts, _)| parts))
    }

    /// [`finish`](Self::finish), with the shard's index (where each inner chunk lies in the
    /// assembled shard).
    pub fn finish_with_index(self) -> Result<Option<(Vec<Bytes>, ShardIndex)>, CodecError> {
        let order = self.layout.arrangement()?;
        let pieces = self.pieces;
        let Some((index, encoded)) = self.layout.index(&order, |k| pieces[k].len() as u64)? else {
            return Ok(None);
        };
        let mut parts: Vec<Bytes> = Vec::new();
        let mut small: Vec<u8> = Vec::new();
        if self.layout.codec.location() == IndexLocation::Start {
            parts.push(Bytes::from(encoded.clone()));
        }
        for &k in &order {
            let piece = &pieces[k];
            if piece.len() < OWN_PIECE_BYTES {
                grow(&mut small, piece.len() as u64)?;
                small.extend_from_slice(piece);
            } else {
                if !small.is_empty() {
                    parts.push(Bytes::from(std::mem::take(&mut small)));
                }
                parts.push(piece.clone());
            }
        }
        if !small.is_empty() {
            parts.push(Bytes::from(small));
        }
        if self.layout.codec.location() == IndexLocation::End {
            parts.push(Bytes::from(encoded));
        }
        Ok(Some((parts, index)))
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
    fn inner_chunks_are_laid_out_in_c_order_whatever_order_they_come_in() {
        for location in [IndexLocation::Start, IndexLocation::End] {
            let codec = codec(location);
            let mut shard = ShardAssembler::new(codec.clone(), "s").unwrap();
            shard.append(3, b"de").unwrap();
            shard.append(1, b"abc").unwrap();
            // past the end: refused
            assert!(shard.append(4, b"x").is_err());
            let bytes = shard.finish().unwrap().unwrap();
            let n = codec.encoded_size() as usize;
            assert_eq!(bytes.len(), n + 5);
            let data = match location {
                IndexLocation::Start => &bytes[n..],
                IndexLocation::End => &bytes[..5],
            };
            assert_eq!(data, b"abcde");
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
    fn an_inner_chunk_appended_twice_is_refused() {
        let mut shard = ShardAssembler::new(codec(IndexLocation::End), "s").unwrap();
        shard.append(2, b"a").unwrap();
        shard.append(0, b"b").unwrap();
        shard.append(2, b"c").unwrap();
        assert!(shard.finish().is_err());
        let mut parts = ShardParts::new(codec(IndexLocation::Start), "s").unwrap();
        parts.append(1, Bytes::from_static(b"a")).unwrap();
        parts.append(1, Bytes::from_static(b"a")).unwrap();
        assert!(parts.finish().is_err());
    }

    #[test]
    fn a_layout_order_decides_where_inner_chunks_lie() {
        // Morton over a 4-chunk line is C order; reversed ranks lay them out backwards
        let ranks: Arc<[u32]> = vec![3, 2, 1, 0].into();
        let mut shard =
            ShardAssembler::with_ranks(codec(IndexLocation::End), Some(ranks.clone()), "s")
                .unwrap();
        for (i, enc) in [(0, &b"a"[..]), (2, b"cc"), (3, b"ddd")] {
            shard.append(i, enc).unwrap();
        }
        let bytes = shard.finish().unwrap().unwrap();
        assert_eq!(&bytes[..6], b"dddcca");
        let index = codec(IndexLocation::End)
            .decode_from_shard(&bytes, "s")
            .unwrap();
        assert_eq!(index.get(0), Some(5..6));
        assert_eq!(index.get(2), Some(3..5));
        assert_eq!(index.get(3), Some(0..3));
        // a layout order of the wrong length is refused
        let short: Arc<[u32]> = vec![0, 1].into();
        assert!(ShardParts::with_ranks(codec(IndexLocation::End), Some(short), "s").is_err());
    }

    #[test]
    fn shard_parts_concatenate_to_the_assembled_shard() {
        let reversed: Arc<[u32]> = vec![3, 2, 1, 0].into();
        for location in [IndexLocation::Start, IndexLocation::End] {
            for ranks in [None, Some(reversed.clone())] {
                let codec = codec(location);
                let mut whole =
                    ShardAssembler::with_ranks(codec.clone(), ranks.clone(), "s").unwrap();
                let mut parts = ShardParts::with_ranks(codec.clone(), ranks.clone(), "s").unwrap();
                let big = vec![7u8; OWN_PIECE_BYTES];
                for (i, enc) in [(0, &b"abc"[..]), (1, &big[..]), (2, b""), (3, b"defg")] {
                    whole.append(i, enc).unwrap();
                    parts.append(i, Bytes::copy_from_slice(enc)).unwrap();
                }
                assert!(parts.append(4, Bytes::from_static(b"x")).is_err());
                let pieces = parts.finish().unwrap().unwrap();
                // the index, the small ones before the large one copied together, the large
                // one as it came, the small ones after it
                assert_eq!(pieces.len(), 4);
                assert!(pieces.iter().any(|p| p.len() == OWN_PIECE_BYTES));
                let joined: Vec<u8> = pieces.concat();
                assert_eq!(joined, whole.finish().unwrap().unwrap());
            }
        }
        let empty = ShardParts::new(codec(IndexLocation::Start), "s").unwrap();
        assert_eq!(empty.finish().unwrap(), None);
    }
}
