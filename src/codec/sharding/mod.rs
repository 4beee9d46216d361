//! zarrflow's own `sharding_indexed` layer, split like zarrs' `sharding/`: the configuration
//! (`config.rs`: [`ShardingConfig`]), the decoded index (`index.rs`: [`ShardIndex`]), the
//! index codec (`index_codec.rs`: [`ShardIndexCodec`]), a shard built inner chunk by inner
//! chunk (`assembler.rs`: [`ShardAssembler`], [`ShardParts`]) in a layout order (`order.rs`:
//! [`InnerChunkOrder`], a runtime choice), size and fill helpers (`helpers.rs`),
//! and here the layer itself ([`Sharding`]): whole-shard encode, assemble and decode. zarrs
//! supplies only the codec chains.

mod assembler;
mod config;
mod helpers;
mod index;
mod index_codec;
mod order;

pub use assembler::{OWN_PIECE_BYTES, ShardAssembler, ShardParts};
pub use config::{IndexLocation, ShardingConfig};
pub use helpers::fill_bytes;
pub(crate) use helpers::{check_size, checked_bytes, fixed_size};
pub use index::{EMPTY_SENTINEL, MAX_SHARD_ENTRIES, ShardIndex};
pub use index_codec::ShardIndexCodec;
pub use order::{InnerChunkOrder, UnknownInnerChunkOrder, sequence_of};

use std::sync::{Arc, Mutex};

use super::block::{extract_block, insert_block, num_elements, unravel};
use super::bounds::try_fill_bytes;
use super::{CodecError, CodecPipeline};
use zarrs::array::{DataType, FillValue};

/// The sharding layer of one pipeline: configuration, inner pipeline and index codec.
#[derive(Debug, Clone)]
pub struct Sharding {
    config: ShardingConfig,
    inner: CodecPipeline,
    field: String,
    /// The most bytes an inner chunk's encoding can take, once the data type is known
    /// ([`CodecPipeline::with_data_type_bounds`]); index entries longer than this are
    /// refused.
    max_entry: Option<u64>,
    /// How shards written through this layer lay their inner chunks out.
    order: InnerChunkOrder,
    /// The layouts worked out for `order` (shared by clones).
    ranks: KeptRanks,
}

/// The ranks of the inner chunks of the last few inner grids (a regular grid has one; a
/// rectilinear one may have several) in a layout order: at most [`KeptRanks::GRIDS`].
#[derive(Default, Clone)]
struct KeptRanks(Arc<Mutex<Vec<GridRanks>>>);

/// An inner grid and the ranks of its inner chunks.
type GridRanks = (Vec<u64>, Arc<Vec<u32>>);

impl KeptRanks {
    const GRIDS: usize = 4;
}

impl std::fmt::Debug for KeptRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let grids = self.0.lock().map_or(0, |k| k.len());
        write!(f, "KeptRanks({grids} grids)")
    }
}

impl Sharding {
    /// Build from a parsed configuration (`field` names the codec in errors).
    pub fn new(config: ShardingConfig, field: &str) -> Result<Self, CodecError> {
        Self::new_nested(config, field, 1)
    }

    /// [`Self::new`] for the `depth`-th nested sharding codec (1 for the outermost).
    pub(crate) fn new_nested(
        config: ShardingConfig,
        field: &str,
        depth: usize,
    ) -> Result<Self, CodecError> {
        let inner = CodecPipeline::from_metadata_nested(
            &config.codecs,
            &format!("{field}.configuration.codecs"),
            depth,
        )?;
        Ok(Sharding {
            config,
            inner,
            field: field.to_string(),
            max_entry: None,
            order: InnerChunkOrder::default(),
            ranks: KeptRanks::default(),
        })
    }

    /// Lays the inner chunks of the shards this layer writes out in `order` (and those of
    /// nested sharding codecs too); C order by default. A runtime choice: reading is the same.
    pub fn with_inner_chunk_order(mut self, order: InnerChunkOrder) -> Self {
        if order != self.order {
            self.order = order;
            self.ranks = KeptRanks::default();
        }
        self.inner = self.inner.with_inner_chunk_order(order);
        self
    }

    /// How the shards this layer writes lay their inner chunks out.
    pub fn inner_chunk_order(&self) -> InnerChunkOrder {
        self.order
    }

    /// Where each inner chunk of a shard of `chunks_per_shard` inner chunks goes in this
    /// layer's layout order ([`InnerChunkOrder::ranks`]; `None`: C order); the ranks of the
    /// last few inner grids are kept.
    pub fn layout_ranks(
        &self,
        chunks_per_shard: &[u64],
    ) -> Result<Option<Arc<Vec<u32>>>, CodecError> {
        if self.order == InnerChunkOrder::Lexicographic {
            return Ok(None);
        }
        let kept = |k: &[GridRanks]| {
            k.iter()
                .find(|(cps, _)| cps == chunks_per_shard)
                .map(|(_, r)| r.clone())
        };
        if let Some(r) = kept(&self.ranks.0.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(Some(r));
        }
        // worked out without the lock held
        let Some(ranks) = self.order.ranks(chunks_per_shard)? else {
            return Ok(None);
        };
        let mut k = self.ranks.0.lock().unwrap_or_else(|e| e.into_inner());
        if k.len() >= KeptRanks::GRIDS {
            k.remove(0);
        }
        k.push((chunks_per_shard.to_vec(), ranks.clone()));
        Ok(Some(ranks))
    }

    /// [`layout_ranks`](Self::layout_ranks) and their inverse ([`sequence_of`]: the C-order
    /// index of the inner chunk at each layout position), for visiting a shard's inner
    /// chunks in layout order; both `None` in C order.
    #[allow(clippy::type_complexity)]
    fn layout_sequence(
        &self,
        chunks_per_shard: &[u64],
    ) -> Result<(Option<Arc<Vec<u32>>>, Option<Vec<u32>>), CodecError> {
        let ranks = self.layout_ranks(chunks_per_shard)?;
        let sequence = sequence_of(ranks.as_deref().map(Vec::as_slice))?;
        Ok((ranks, sequence))
    }

    /// An empty [`ShardParts`] for a shard whose index codec is `codec`, in this layer's
    /// layout order; `what` names the shard in errors.
    pub fn shard_parts(
        &self,
        codec: ShardIndexCodec,
        what: &str,
    ) -> Result<ShardParts, CodecError> {
        let ranks = self.layout_ranks(codec.chunks_per_shard())?;
        ShardParts::with_ranks(codec, ranks, what)
    }

    /// Works out, for elements of `data_type`, the most bytes an inner chunk's encoding
    /// can take (see [`CodecPipeline::with_data_type_bounds`]).
    pub(crate) fn with_data_type_bounds(
        mut self,
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Self, CodecError> {
        self.inner = self.inner.with_data_type_bounds(data_type, fill_value)?;
        self.max_entry =
            self.inner
                .max_stored_size(&self.config.chunk_shape, data_type, fill_value)?;
        Ok(self)
    }

    /// The most bytes a shard of `shard_shape` holds when written compactly (its index and
    /// every inner chunk at its worst-case encoded size); `None` when an inner chunk's size
    /// is unbounded. Bounds the bytes of a shard that a bytes→bytes codec wraps.
    pub fn max_compact_size(
        &self,
        shard_shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Option<u64>, CodecError> {
        let codec = self.index_codec(shard_shape)?;
        let n = num_elements(codec.chunks_per_shard());
        let inner =
            self.inner
                .max_compact_chunk(&self.config.chunk_shape, data_type, fill_value)?;
        Ok(inner.map(|m| m.saturating_mul(n).saturating_add(codec.encoded_size())))
    }

    /// The sharding layer of a variable-length array: its inner chain decodes into handles
    /// (see [`CodecPipeline::with_vlen`]).
    pub(crate) fn with_vlen(mut self, mode: crate::codec::VlenMode) -> Self {
        self.inner = self.inner.with_vlen(mode);
        self
    }

    /// Turns checksum verification on decode on or off for the index and the inner chunks
    /// (recursively); on by default.
    pub fn with_verify_checksums(mut self, on: bool) -> Self {
        self.inner = self.inner.with_verify_checksums(on);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ShardingConfig {
        &self.config
    }

    /// The pipeline of the inner chunks (may itself be sharded).
    pub fn inner(&self) -> &CodecPipeline {
        &self.inner
    }

    /// Inner chunks per shard for a shard of `shard_shape` (in the sharding codec's frame, i.e.
    /// after array→array codecs); errors when not divisible or when ranks differ.
    pub fn chunks_per_shard(&self, shard_shape: &[u64]) -> Result<Vec<u64>, CodecError> {
        let cs = &self.config.chunk_shape;
        let field = format!("{}.configuration.chunk_shape", self.field);
        if cs.len() != shard_shape.len() {
            return Err(CodecError::InvalidConfiguration {
                field,
                reason: format!(
                    "rank {} does not match the shard rank {} (shard shape {shard_shape:?})",
                    cs.len(),
                    shard_shape.len()
                ),
            });
        }
        if shard_shape.iter().zip(cs).any(|(s, c)| s % c != 0) {
            return Err(CodecError::ShardShapeNotDivisible {
                field,
                shard_shape: shard_shape.to_vec(),
                chunk_shape: cs.clone(),
            });
        }
        Ok(shard_shape.iter().zip(cs).map(|(s, c)| s / c).collect())
    }

    /// The index codec for a shard of `shard_shape`.
    pub fn index_codec(&self, shard_shape: &[u64]) -> Result<ShardIndexCodec, CodecError> {
        let cps = self.chunks_per_shard(shard_shape)?;
        Ok(ShardIndexCodec::new(
            &self.config.index_codecs,
            &cps,
            self.config.index_location,
            &self.field,
        )?
        .with_verify_checksums(self.inner.verify_checksums())
        .with_max_entry_bytes(self.max_entry))
    }

    /// Encode a whole shard (decoded C-order native-endian bytes of `shard_shape`).
    ///
    /// Inner chunks equal to the fill value are omitted (sentinel entries); the others are
    /// written compactly in the layout order. Returns `None` when every inner chunk is empty: the shard
    /// should then be deleted rather than stored.
    pub fn encode_shard(
        &self,
        decoded: &[u8],
        shard_shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let elem = fixed_size(data_type, "sharding")?;
        check_size(
            "shard",
            decoded.len(),
            checked_bytes(shard_shape, elem, "shard")?,
        )?;
        let codec = self.index_codec(shard_shape)?;
        let cps = codec.chunks_per_shard().to_vec();
        let cs = &self.config.chunk_shape;
        let (ranks, sequence) = self.layout_sequence(&cps)?;
        let mut shard = ShardAssembler::with_ranks(codec, ranks, "shard index")?;
        for rank in 0..num_elements(&cps) {
            let i = sequence
                .as_ref()
                .map_or(rank, |s| u64::from(s[rank as usize]));
            let coords = unravel(i, &cps);
            let start: Vec<u64> = coords.iter().zip(cs).map(|(c, s)| c * s).collect();
            let chunk = extract_block(decoded, shard_shape, &start, cs, elem);
            if !fill_value.equals_all(&chunk) {
                let encoded = self.inner.encode(&chunk, cs, data_type, fill_value)?;
                shard.append(i as usize, &encoded)?;
            }
        }
        shard.finish()
    }

    /// Assemble a shard from already-encoded inner chunks (C order over the inner grid,
    /// `None` = empty), e.g. for read-modify-write, where untouched inner chunks are copied
    /// byte for byte. Chunks are laid out compactly in the layout order; returns `None` when
    /// every inner chunk is empty (delete the shard instead).
    pub fn assemble_shard(
        &self,
        shard_shape: &[u64],
        encoded: &[Option<&[u8]>],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let index_codec = self.index_codec(shard_shape)?;
        check_size(
            "encoded inner chunk list",
            encoded.len(),
            num_elements(index_codec.chunks_per_shard()) as usize,
        )?;
        let (ranks, sequence) = self.layout_sequence(index_codec.chunks_per_shard())?;
        let mut shard = ShardAssembler::with_ranks(index_codec, ranks, "shard index")?;
        shard.reserve(encoded.iter().flatten().map(|e| e.len() as u64).sum())?;
        for rank in 0..encoded.len() {
            let i = sequence.as_ref().map_or(rank, |s| s[rank] as usize);
            if let Some(enc) = encoded[i] {
                shard.append(i, enc)?;
            }
        }
        shard.finish()
    }

    /// Encode a shard, writing an index-only shard when every inner chunk is empty.
    pub fn encode_shard_always(
        &self,
        decoded: &[u8],
        shard_shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Vec<u8>, CodecError> {
        match self.encode_shard(decoded, shard_shape, data_type, fill_value)? {
            Some(v) => Ok(v),
            None => {
                let codec = self.index_codec(shard_shape)?;
                codec.encode(&ShardIndex::new_empty(codec.chunks_per_shard()))
            }
        }
    }

    /// Decode a whole shard object into C-order native-endian bytes of `shard_shape`; missing
    /// inner chunks read as the fill value. `key` names the shard in errors.
    pub fn decode_shard(
        &self,
        shard: &[u8],
        shard_shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
    ) -> Result<Vec<u8>, CodecError> {
        let elem = fixed_size(data_type, "sharding")?;
        checked_bytes(shard_shape, elem, key)?;
        let index_codec = self.index_codec(shard_shape)?;
        let index = index_codec.decode_from_shard(shard, key)?;
        let cs = &self.config.chunk_shape;
        let mut out = try_fill_bytes(fill_value, num_elements(shard_shape), elem, key)?;
        let cps = index.chunks_per_shard().to_vec();
        for i in 0..index.len() {
            let Some(r) = index.get(i) else { continue };
            let coords = unravel(i as u64, &cps);
            let chunk_key = format!("{key} inner chunk {coords:?}");
            let bytes = &shard[r.start as usize..r.end as usize];
            let dec = self
                .inner
                .decode(bytes, cs, data_type, fill_value, &chunk_key)?;
            let start: Vec<u64> = coords.iter().zip(cs).map(|(c, s)| c * s).collect();
            insert_block(&mut out, shard_shape, &start, &dec, cs, elem);
        }
        Ok(out)
    }
}
