//! A shard built as its inner chunks arrive: [`ShardAssembler`].

use super::config::IndexLocation;
use super::index::ShardIndex;
use super::index_codec::ShardIndexCodec;
use crate::codec::CodecError;

/// Builds a shard from its encoded inner chunks handed over one at a time in ascending C
/// order ([`append`](Self::append)), laid out compactly in that order: memory holds the
/// shard being built and its index, never a list of the inner chunks. Used by
/// [`Sharding::assemble_shard`](super::Sharding::assemble_shard) and by writers that encode a
/// shard's inner chunks a batch at a time.
#[derive(Debug)]
pub struct ShardAssembler {
    codec: ShardIndexCodec,
    index: ShardIndex,
    /// The shard so far: (room for) the index first when it lies at the start, then the
    /// inner chunks appended.
    shard: Vec<u8>,
    /// The next inner chunk (linear index) that may be appended.
    next: usize,
}

impl ShardAssembler {
    /// An empty shard of the inner grid of `codec`; `what` names the shard in errors.
    pub fn new(codec: ShardIndexCodec, what: &str) -> Result<Self, CodecError> {
        let index = ShardIndex::try_new_empty(codec.chunks_per_shard(), what)?;
        let mut shard = Vec::new();
        if codec.location() == IndexLocation::Start {
            grow(&mut shard, codec.encoded_size())?;
            shard.resize(shard.len() + codec.encoded_size() as usize, 0);
        }
        Ok(ShardAssembler {
            codec,
            index,
            shard,
            next: 0,
        })
    }

    /// Reserves room for `bytes` more bytes of inner chunks (and the index, when it comes
    /// last), when their total is known in advance: the shard then grows no more.
    pub fn reserve(&mut self, bytes: u64) -> Result<(), CodecError> {
        let index = match self.codec.location() {
            IndexLocation::Start => 0,
            IndexLocation::End => self.codec.encoded_size(),
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
        grow(&mut self.shard, encoded.len() as u64)?;
        let start = self.shard.len() as u64;
        self.shard.extend_from_slice(encoded);
        self.index
            .set(linear, Some(start..start + encoded.len() as u64));
        self.next = linear + 1;
        Ok(())
    }

    /// The shard, its index written in place; `None` when no inner chunk was appended
    /// (delete the shard instead).
    pub fn finish(mut self) -> Result<Option<Vec<u8>>, CodecError> {
        if self.index.all_empty() {
            return Ok(None);
        }
        let encoded = self.codec.encode(&self.index)?;
        drop(self.index);
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
        match self.codec.location() {
            IndexLocation::Start => self.shard[..size].copy_from_slice(&encoded),
            IndexLocation::End => {
                self.shard
                    .try_reserve_exact(size)
                    .map_err(|_| alloc(size as u64))?;
                self.shard.extend_from_slice(&encoded);
            }
        }
        Ok(Some(self.shard))
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
}
