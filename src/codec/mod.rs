//! The codec layer (pure: no I/O).
//!
//! * [`CodecPipeline`]: a chunk's codec list. Without sharding it is a zarrs `CodecChain`;
//!   with `sharding_indexed` as the array→bytes codec, zarrs applies the array→array and
//!   bytes→bytes codecs around zarrflow's own [`Sharding`] layer.
//! * [`sharding`]: configuration, shard index encode/decode with validation, shard assembly.
//! * [`block`]: C-order block copy helpers.
//! * numcodecs codecs zarrs lacks, registered as zarrs codec plugins (v2 ids, v3
//!   `numcodecs.*` names): the compressors [`lz4`] and [`lzma`], the checksums
//!   [`checksum32`] (`crc32`, `jenkins_lookup3`), the filters [`delta`], [`astype`],
//!   [`quantize`] and [`packbits`], with NumPy's element types and casts in `numeric`;
//!   zarr-extensions' [`scale_offset`] and [`cast_value`] (zarr-python 3.4's `ScaleOffset`
//!   and `CastValue`); what these plugins share (registration, whole-chunk traits) is in
//!   `plugin`, and their configuration scalars are read as zarr-python reads them in
//!   `scalar`.
//! * [`bounds`]: what metadata and stored bytes justify — encoded and decoded size bounds,
//!   bounded bytes→bytes decoders, fallible allocation of chunk-sized buffers.

#[macro_use]
mod plugin;

pub mod astype;
pub mod block;
pub mod bounds;
pub mod cast_value;
pub mod checksum32;
pub mod delta;
mod direct;
mod error;
pub mod lz4;
pub mod lzma;
mod numeric;
pub mod packbits;
pub mod quantize;
mod scalar;
pub mod scale_offset;
pub mod sharding;
pub(crate) mod slab;
pub mod vlen;

pub use error::CodecError;
use sharding::checked_bytes;
pub use sharding::{
    IndexLocation, MAX_SHARD_ENTRIES, ShardIndex, ShardIndexCodec, Sharding, ShardingConfig,
};

use bounds::BytesCodecKind;
use bytes::Bytes;
use direct::DirectChain;
use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;
use zarrs::array::{
    ArrayBytes, ArrayToBytesCodecTraits, BytesRepresentation, CodecChain, CodecOptions, DataType,
    FillValue,
};
use zarrs::metadata::v3::MetadataV3;

pub(crate) fn nz_shape(shape: &[u64]) -> Option<Vec<NonZeroU64>> {
    shape.iter().map(|&v| NonZeroU64::new(v)).collect()
}

pub(crate) fn codec_err(
    operation: &'static str,
    key: &str,
    e: zarrs::array::CodecError,
) -> CodecError {
    CodecError::Codec {
        operation,
        key: key.to_string(),
        source: Box::new(e),
    }
}

/// Deepest nesting of `sharding_indexed` codecs accepted (a sharding codec inside the inner
/// codecs of another counts one more level). Real arrays use one or two; every level costs
/// a recursion in parsing, validation and decoding, so deeper chains are refused with
/// [`CodecError::NestingTooDeep`].
pub const MAX_SHARDING_DEPTH: usize = 16;

/// The representations of one chunk through its codecs, outermost last: the array→array
/// codecs' inputs, the array→bytes codec's input (`frame`), and the byte sizes — `bytes[0]`
/// is the array→bytes output, `bytes[i + 1]` the output of bytes→bytes codec `i`.
#[derive(Debug)]
struct Representations {
    arrays: Vec<(Vec<NonZeroU64>, DataType, FillValue)>,
    frame: (Vec<NonZeroU64>, DataType, FillValue),
    bytes: Vec<BytesRepresentation>,
}

/// The sizes a stored object of one chunk shape may have
/// ([`CodecPipeline::stored_bounds`]), worked out once for the limit a GET passes to the
/// store and the check of the object it returns.
#[derive(Debug)]
pub struct StoredBounds<'a> {
    pipeline: &'a CodecPipeline,
    /// `None` for a chunk with no cells (nothing to bound).
    reps: Option<Representations>,
}

impl StoredBounds<'_> {
    /// [`CodecPipeline::max_stored_size`].
    pub fn max(&self) -> Option<u64> {
        self.reps
            .as_ref()
            .and_then(|reps| self.pipeline.stored_limit(reps))
    }

    /// [`CodecPipeline::check_stored_size`] of an object of `size` bytes at `key`.
    pub fn check(&self, size: u64, key: &str) -> Result<(), CodecError> {
        match &self.reps {
            Some(reps) => self.pipeline.check_stored_reps(size, reps, key),
            None => Ok(()),
        }
    }
}

/// The codec pipeline of a chunk (or of an inner chunk of a shard).
#[derive(Debug, Clone)]
pub struct CodecPipeline {
    metadata: Vec<MetadataV3>,
    chain: Arc<CodecChain>,
    /// The chain without its bytes→bytes codecs, which zarrflow decodes itself with bounds
    /// (see [`bounds::decode_stage`]).
    tail: Arc<CodecChain>,
    /// What each bytes→bytes codec is, as far as bounds are concerned.
    kinds: Vec<BytesCodecKind>,
    sharding: Option<Box<Sharding>>,
    /// The decoder zarrflow runs itself for this chain, if any (see `direct.rs`).
    direct: Option<DirectChain>,
    /// Verify checksums (`crc32c`, ...) when decoding; on unless turned off explicitly.
    verify_checksums: bool,
    /// For the innermost chain of a variable-length array: its real data type, decoded
    /// into and encoded from handles (see [`vlen`]).
    vlen: Option<VlenMode>,
}

/// How a chain of a variable-length array decodes into handles and encodes from them.
#[derive(Debug, Clone)]
pub struct VlenMode {
    kind: vlen::VlenKind,
    data_type: DataType,
    fill_value: FillValue,
    pool: Arc<vlen::VlenPool>,
}

impl VlenMode {
    /// The mode of an array of `data_type` (`string` or `bytes`; `None` for any other)
    /// with `fill_value`, its elements kept in a new pool.
    pub fn of(data_type: &DataType, fill_value: &FillValue) -> Option<VlenMode> {
        let kind = match data_type.name_v3().as_deref() {
            Some("string") => vlen::VlenKind::Utf8,
            Some("bytes") => vlen::VlenKind::Bytes,
            _ => return None,
        };
        Some(VlenMode {
            kind,
            data_type: data_type.clone(),
            fill_value: fill_value.clone(),
            pool: Arc::new(vlen::VlenPool::new(fill_value.as_ne_bytes().to_vec())),
        })
    }

    /// Whether the elements are text or bytes.
    pub fn kind(&self) -> vlen::VlenKind {
        self.kind
    }

    /// The pool behind the handles.
    pub fn pool(&self) -> &Arc<vlen::VlenPool> {
        &self.pool
    }

    /// The data type the execution layer moves: `uint64` handles, fill value handle 0.
    pub fn handle_type() -> (DataType, FillValue) {
        (
            zarrs::array::data_type::uint64(),
            FillValue::new(0u64.to_ne_bytes().to_vec()),
        )
    }
}

/// Name of the sharding codec.
pub const SHARDING_NAME: &str = "sharding_indexed";

/// `codecs` in the spec's order (array→array, array→bytes, bytes→bytes), each kind's codecs
/// kept in their order: what zarrs' v2 → v3 conversion makes of a v2 filter that works on
/// bytes (numcodecs' `shuffle` before `bytes`), which numcodecs applies to the chunk's bytes
/// before the compressor. Codecs that cannot be built stay where they are.
pub(crate) fn in_spec_order(codecs: Vec<MetadataV3>) -> Vec<MetadataV3> {
    let rank = |c: &MetadataV3| -> Option<u8> {
        if c.name() == SHARDING_NAME {
            return Some(1);
        }
        match zarrs::array::Codec::from_metadata(resolve_numcodecs(c).as_ref()) {
            Ok(zarrs::array::Codec::ArrayToArray(_)) => Some(0),
            Ok(zarrs::array::Codec::ArrayToBytes(_)) => Some(1),
            Ok(zarrs::array::Codec::BytesToBytes(_)) => Some(2),
            Err(_) => None,
        }
    };
    let ranks: Vec<Option<u8>> = codecs.iter().map(rank).collect();
    if ranks.iter().any(Option::is_none) {
        return codecs;
    }
    let mut indexed: Vec<(u8, MetadataV3)> = ranks.into_iter().flatten().zip(codecs).collect();
    indexed.sort_by_key(|(r, _)| *r);
    indexed.into_iter().map(|(_, c)| c).collect()
}

/// What a codec turns into what: its place in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CodecKind {
    ArrayToArray,
    ArrayToBytes,
    BytesToBytes,
}

/// The prefix of the codec names zarr-python 3 writes for numcodecs codecs
/// (`numcodecs.zstd`, `numcodecs.zlib`, ...).
pub const NUMCODECS_PREFIX: &str = "numcodecs.";

/// The typed configuration of a numcodecs codec zarrflow adds to zarrs' registry
/// ([`lz4`], [`delta`]) from its v2 or v3 configuration object, where numcodecs' own `id`
/// (which some writers leave in a v3 configuration) is dropped when it is `id`.
pub(crate) fn numcodecs_configuration<T: serde::de::DeserializeOwned>(
    configuration: &serde_json::Map<String, serde_json::Value>,
    id: &str,
) -> Result<T, zarrs::plugin::PluginCreateError> {
    let mut configuration = configuration.clone();
    if configuration.get("id").and_then(serde_json::Value::as_str) == Some(id) {
        configuration.remove("id");
    }
    serde_json::from_value(serde_json::Value::Object(configuration)).map_err(|e| {
        zarrs::plugin::PluginCreateError::Other(format!("invalid {id} configuration: {e}"))
    })
}

/// [`resolve_numcodecs`] of every codec of a chain, inside `sharding_indexed`'s `codecs` and
/// `index_codecs` too (zarrs builds the inner chains from the configuration).
fn resolve_chain(codecs: &[MetadataV3]) -> Vec<MetadataV3> {
    codecs
        .iter()
        .map(|c| {
            let Some(cfg) = c.configuration().filter(|_| c.name() == SHARDING_NAME) else {
                return resolve_numcodecs(c).into_owned();
            };
            let mut cfg: serde_json::Map<String, serde_json::Value> =
                cfg.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            for field in ["codecs", "index_codecs"] {
                if let Some(inner) = cfg
                    .get(field)
                    .and_then(|v| serde_json::from_value::<Vec<MetadataV3>>(v.clone()).ok())
                {
                    cfg.insert(
                        field.into(),
                        serde_json::to_value(resolve_chain(&inner)).unwrap_or_default(),
                    );
                }
            }
            MetadataV3::new_with_configuration(c.name(), cfg)
                .with_must_understand(c.must_understand())
        })
        .collect()
}

/// The codec zarrs builds for `codec`: itself, or for a `numcodecs.ID` name that zarrs has
/// no v3 codec of (`numcodecs.zstd`, `numcodecs.gzip`, `numcodecs.blosc`,
/// `numcodecs.crc32c`), zarrs' conversion of the numcodecs configuration `{"id": ID, ...}`
/// as a Zarr v2 compressor — the configuration zarr-python 3 writes under that name is
/// numcodecs' own, and the encoded bytes are the same. `blosc` gets the typesize of a
/// byte buffer (1), the one numcodecs encodes with in zarr-python 3 (its bytes→bytes codecs
/// see bytes). Names zarrs knows in neither form are left as they are (and refused when
/// built, by name).
pub fn resolve_numcodecs(codec: &MetadataV3) -> Cow<'_, MetadataV3> {
    let Some(id) = codec.name().strip_prefix(NUMCODECS_PREFIX) else {
        return Cow::Borrowed(codec);
    };
    if zarrs::array::Codec::from_metadata(codec).is_ok() {
        return Cow::Borrowed(codec);
    }
    // numcodecs' CRC32C (checksum at the end, its default) is v3's `crc32c`; zarrs' v2
    // configuration of it requires the `location` zarr-python leaves out
    let location = codec.configuration().and_then(|c| c.get("location"));
    if id == "crc32c"
        && codec.configuration().is_none_or(|c| c.len() <= 1)
        && location.is_none_or(|l| l == "end")
    {
        return Cow::Owned(MetadataV3::new_with_configuration(
            "crc32c",
            serde_json::Map::new(),
        ));
    }
    let mut v2 = serde_json::Map::new();
    v2.insert("id".into(), serde_json::Value::from(id));
    if let Some(cfg) = codec.configuration() {
        for (k, v) in cfg.iter() {
            if k != "id" {
                v2.insert(k.clone(), v.clone());
            }
        }
    }
    let Ok(v2) = serde_json::from_value::<zarrs::metadata::v2::MetadataV2>(v2.into()) else {
        return Cow::Borrowed(codec);
    };
    let converted = zarrs::convert::codec_metadata_v2_to_v3(
        zarrs::metadata::v2::ArrayMetadataV2Order::C,
        1,
        &MetadataV3::new("uint8"),
        None,
        &None,
        &Some(v2),
    );
    // `bytes`, then the converted codec: only a bytes→bytes codec converts this way
    match converted.as_deref() {
        Ok([b, c]) if b.name() == "bytes" && !c.name().starts_with(NUMCODECS_PREFIX) => {
            Cow::Owned(c.clone())
        }
        _ => Cow::Borrowed(codec),
    }
}

impl CodecPipeline {
    /// Build from a `codecs` list (field name `codecs` in errors).
    pub fn from_metadata(codecs: &[MetadataV3]) -> Result<Self, CodecError> {
        Self::from_metadata_at(codecs, "codecs")
    }

    /// Build from a codec list; `field` names the list in errors (e.g.
    /// `codecs[0].configuration.codecs` for an inner chain).
    pub fn from_metadata_at(codecs: &[MetadataV3], field: &str) -> Result<Self, CodecError> {
        Self::from_metadata_nested(codecs, field, 0)
    }

    /// [`Self::from_metadata_at`] for a chain nested inside `depth` sharding codecs.
    pub(crate) fn from_metadata_nested(
        codecs: &[MetadataV3],
        field: &str,
        depth: usize,
    ) -> Result<Self, CodecError> {
        if codecs.is_empty() {
            return Err(CodecError::InvalidConfiguration {
                field: field.to_string(),
                reason: "the codec list must not be empty".into(),
            });
        }
        let given = codecs;
        let resolved = resolve_chain(codecs);
        let codecs = &resolved[..];
        let mut sharding = None;
        // the spec's order: array→array codecs, one array→bytes codec, bytes→bytes codecs
        // (zarrs sorts a chain by kind without checking it; zarr-python refuses another order)
        let mut after_array_to_bytes = false;
        for (i, c) in codecs.iter().enumerate() {
            let f = format!("{field}[{i}]");
            // check each codec on its own first so the error names the offending entry
            let kind = if c.name() == SHARDING_NAME {
                if depth >= MAX_SHARDING_DEPTH {
                    return Err(CodecError::NestingTooDeep {
                        field: f,
                        max: MAX_SHARDING_DEPTH,
                    });
                }
                let cfg = ShardingConfig::from_metadata(c, &f)?;
                sharding = Some(Box::new(Sharding::new_nested(cfg, &f, depth + 1)?));
                Some(CodecKind::ArrayToBytes)
            } else {
                match zarrs::array::Codec::from_metadata(c) {
                    Ok(zarrs::array::Codec::ArrayToArray(_)) => Some(CodecKind::ArrayToArray),
                    Ok(zarrs::array::Codec::ArrayToBytes(_)) => Some(CodecKind::ArrayToBytes),
                    Ok(zarrs::array::Codec::BytesToBytes(_)) => Some(CodecKind::BytesToBytes),
                    Err(e) if c.must_understand() => {
                        return Err(CodecError::UnsupportedCodec {
                            field: format!("{f} (`{}`)", c.name()),
                            reason: e.to_string(),
                        });
                    }
                    _ => None,
                }
            };
            let misplaced = match (kind, after_array_to_bytes) {
                (Some(CodecKind::ArrayToArray), true) => {
                    Some("an array-to-array codec after the array-to-bytes codec")
                }
                (Some(CodecKind::ArrayToBytes), true) => Some("a second array-to-bytes codec"),
                (Some(CodecKind::BytesToBytes), false) => {
                    Some("a bytes-to-bytes codec before the array-to-bytes codec")
                }
                _ => None,
            };
            if let Some(why) = misplaced {
                return Err(CodecError::InvalidConfiguration {
                    field: format!("{f} (`{}`)", c.name()),
                    reason: format!(
                        "{why}: codecs go array-to-array, one array-to-bytes, then bytes-to-bytes"
                    ),
                });
            }
            after_array_to_bytes |= kind == Some(CodecKind::ArrayToBytes);
        }
        let chain =
            CodecChain::from_metadata(codecs).map_err(|e| CodecError::UnsupportedCodec {
                field: field.to_string(),
                reason: e.to_string(),
            })?;
        let tail = CodecChain::new(
            chain.array_to_array_codecs().to_vec(),
            chain.array_to_bytes_codec().clone(),
            Vec::new(),
        );
        let kinds = chain
            .bytes_to_bytes_codecs()
            .iter()
            .map(|c| BytesCodecKind::of(c.as_ref()))
            .collect();
        Ok(CodecPipeline {
            metadata: given.to_vec(),
            chain: Arc::new(chain),
            tail: Arc::new(tail),
            kinds,
            direct: DirectChain::of(codecs),
            sharding,
            verify_checksums: true,
            vlen: None,
        })
    }

    /// The pipeline of a variable-length array: its innermost chain (inside sharding, the
    /// inner chain) decodes into handles and encodes from them with `mode`.
    pub fn with_vlen(mut self, mode: VlenMode) -> Self {
        match self.sharding.take() {
            Some(sh) => self.sharding = Some(Box::new(sh.with_vlen(mode))),
            None => self.vlen = Some(mode),
        }
        self
    }

    /// The variable-length mode of the innermost chain, if any.
    pub fn vlen(&self) -> Option<&VlenMode> {
        match self.sharding() {
            Some(sh) => sh.inner().vlen(),
            None => self.vlen.as_ref(),
        }
    }

    /// Turns checksum verification on decode (`crc32c` and other checksum codecs, in
    /// chunks, inner chunks and shard indexes, recursively) on or off. On by default; a
    /// mismatch is then an error ([`CodecError::ShardIndexChecksum`] for a shard index,
    /// [`CodecError::Codec`] for a chunk).
    pub fn with_verify_checksums(mut self, on: bool) -> Self {
        self.verify_checksums = on;
        if let Some(sh) = self.sharding.take() {
            self.sharding = Some(Box::new(sh.with_verify_checksums(on)));
        }
        self
    }

    /// Lays the inner chunks of the shards this pipeline writes out in `order` (nested
    /// sharding codecs too); C order by default. Nothing changes for an unsharded pipeline
    /// or for reading.
    pub fn with_inner_chunk_order(mut self, order: sharding::InnerChunkOrder) -> Self {
        if let Some(sh) = self.sharding.take() {
            self.sharding = Some(Box::new(sh.with_inner_chunk_order(order)));
        }
        self
    }

    /// How the shards this pipeline writes lay their inner chunks out (C order when
    /// unsharded).
    pub fn inner_chunk_order(&self) -> sharding::InnerChunkOrder {
        self.sharding
            .as_ref()
            .map_or_else(Default::default, |sh| sh.inner_chunk_order())
    }

    /// Whether checksums are verified on decode.
    pub fn verify_checksums(&self) -> bool {
        self.verify_checksums
    }

    fn decode_options(&self) -> CodecOptions {
        CodecOptions::default().with_validate_checksums(self.verify_checksums)
    }

    /// The codec metadata as given.
    pub fn metadata(&self) -> &[MetadataV3] {
        &self.metadata
    }

    /// The zarrs chain (all codecs).
    pub fn chain(&self) -> &CodecChain {
        &self.chain
    }

    /// The sharding layer, when the array→bytes codec is `sharding_indexed`.
    pub fn sharding(&self) -> Option<&Sharding> {
        self.sharding.as_deref()
    }

    /// The shape seen by the array→bytes codec for a chunk of `shape` (array→array codecs
    /// applied, e.g. `transpose`).
    pub fn array_to_bytes_shape(&self, shape: &[u64]) -> Result<Vec<u64>, CodecError> {
        let mut s = nz_shape(shape).ok_or_else(|| CodecError::InvalidConfiguration {
            field: "chunk shape".into(),
            reason: format!("zero-sized dimension in {shape:?}"),
        })?;
        for c in self.chain.array_to_array_codecs() {
            s = c
                .encoded_shape(&s)
                .map_err(|e| codec_err("encode", "chunk shape", e))?;
        }
        Ok(s.iter().map(|v| v.get()).collect())
    }

    /// Validate the pipeline against a chunk (shard) shape and data type: the array→array
    /// codecs' configurations against the data type, divisibility of the shard by the inner
    /// chunk shape (in the frame after array→array codecs, recursively for nested
    /// sharding), fixed-size index codecs, entry cap.
    pub fn validate(&self, shape: &[u64], data_type: &DataType) -> Result<(), CodecError> {
        if let Some(elem) = data_type.fixed_size() {
            sharding::checked_bytes(shape, elem, "chunk shape")?;
        }
        // the array→array codecs take the array's data type (their configurations are
        // checked against it here, when the array is opened, not at its first chunk)
        let (frame_type, _) = self.frame_type(data_type, None)?;
        if let Some(sh) = self.sharding() {
            // the shard holds the elements the outer array→array codecs make
            sharding::fixed_size(&frame_type, "sharding")?;
            let inner_frame = self.array_to_bytes_shape(shape)?;
            sh.index_codec(&inner_frame)?;
            sh.inner().validate(&sh.config().chunk_shape, &frame_type)?;
        }
        Ok(())
    }

    /// The data type (and the fill value, when `fill_value` is given) of the elements the
    /// array→array codecs before the array→bytes codec make of `data_type`'s: what a
    /// shard's inner chunks hold.
    fn frame_type(
        &self,
        data_type: &DataType,
        fill_value: Option<&FillValue>,
    ) -> Result<(DataType, Option<FillValue>), CodecError> {
        let invalid = |e: zarrs::array::CodecError| CodecError::InvalidConfiguration {
            field: "codecs".into(),
            reason: e.to_string(),
        };
        // a variable-length chain works on its real data type, not the handles
        let data_type = self.vlen.as_ref().map_or(data_type, |v| &v.data_type);
        let fill_value = match (&self.vlen, fill_value) {
            (Some(v), Some(_)) => Some(&v.fill_value),
            (_, f) => f,
        };
        let (mut dt, mut fv) = (data_type.clone(), fill_value.cloned());
        for c in self.chain.array_to_array_codecs() {
            let next = c.encoded_data_type(&dt).map_err(invalid)?;
            if let Some(f) = &fv {
                fv = Some(c.encoded_fill_value(&dt, f).map_err(invalid)?);
            }
            dt = next;
        }
        Ok((dt, fv))
    }

    /// The element size in bytes of what the array→array codecs at the head of `codecs` (a
    /// chain's filters, up to its `bytes` codec) make of `data_type`'s elements: what the
    /// bytes→bytes codecs after `bytes` see (blosc's type size, as zarr-python sets it).
    /// `None` when there are no such codecs, or they cannot be built for `data_type` (the
    /// chain is refused with its own error when the array is opened).
    pub(crate) fn filtered_element_size(
        codecs: &[MetadataV3],
        data_type: &DataType,
    ) -> Option<usize> {
        let filters = codecs.iter().position(|c| c.name() == "bytes")?;
        if filters == 0 {
            return None;
        }
        let chain = CodecPipeline::from_metadata(&codecs[..=filters]).ok()?;
        let (frame, _) = chain.frame_type(data_type, None).ok()?;
        frame.fixed_size()
    }

    /// The part of [`Self::validate`] that depends on each dimension separately: a shard of
    /// `shape` divides into whole inner chunks (in the sharding codec's frame). Cheap (no
    /// codec is built), for grids with many distinct chunk shapes.
    pub fn check_divisible(&self, shape: &[u64]) -> Result<(), CodecError> {
        if let Some(sh) = self.sharding() {
            sh.chunks_per_shard(&self.array_to_bytes_shape(shape)?)?;
        }
        Ok(())
    }

    /// Encode one chunk given as C-order native-endian bytes of `shape`.
    ///
    /// For a sharded pipeline this writes every non-empty inner chunk and the index (an
    /// index-only shard when all inner chunks are fill); use [`Sharding::encode_shard`] through
    /// [`Self::encode_elide`] to drop empty shards.
    pub fn encode(
        &self,
        decoded: &[u8],
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Bytes, CodecError> {
        Ok(self
            .encode_inner(decoded, shape, data_type, fill_value, false)?
            .unwrap_or_default())
    }

    /// Like [`Self::encode`] but returns `None` when the chunk equals the fill value everywhere
    /// (for a shard: when every inner chunk is empty): the key should be deleted instead.
    pub fn encode_elide(
        &self,
        decoded: &[u8],
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Option<Bytes>, CodecError> {
        if self.sharding.is_none() && fill_value.equals_all(decoded) {
            return Ok(None);
        }
        self.encode_inner(decoded, shape, data_type, fill_value, true)
    }

    fn encode_inner(
        &self,
        decoded: &[u8],
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        elide: bool,
    ) -> Result<Option<Bytes>, CodecError> {
        let opts = CodecOptions::default();
        let shape_nz = nz_shape(shape).ok_or_else(|| CodecError::WrongSize {
            key: "chunk".into(),
            expected: 0,
            got: decoded.len() as u64,
        })?;
        if let Some(elem) = data_type.fixed_size() {
            sharding::check_size("chunk", decoded.len(), checked_bytes(shape, elem, "chunk")?)?;
        }
        if let Some(v) = &self.vlen {
            return self
                .encode_vlen(decoded, &shape_nz, v)
                .map(|e| Some(e.into()));
        }
        let Some(sh) = self.sharding() else {
            if let Some(encoded) = self
                .direct_for(shape, data_type)
                .and_then(|(direct, _)| direct.encode(decoded))
            {
                return encoded.map(Some);
            }
            let enc = self
                .chain
                .encode(
                    ArrayBytes::new_flen(Cow::Borrowed(decoded)),
                    &shape_nz,
                    data_type,
                    fill_value,
                    &opts,
                )
                .map_err(|e| codec_err("encode", "chunk", e))?;
            return Ok(Some(enc.into_owned().into()));
        };
        // array→array codecs (zarrs), tracking the representation
        let mut bytes = ArrayBytes::new_flen(Cow::Borrowed(decoded));
        let (mut s, mut dt, mut fv) = (shape_nz, data_type.clone(), fill_value.clone());
        for c in self.chain.array_to_array_codecs() {
            let (ns, ndt, nfv) = c
                .encoded_representation(&s, &dt, &fv)
                .map_err(|e| codec_err("encode", "chunk", e))?;
            bytes = c
                .encode(bytes, &s, &dt, &fv, &opts)
                .map_err(|e| codec_err("encode", "chunk", e))?;
            (s, dt, fv) = (ns, ndt, nfv);
        }
        let raw = bytes
            .into_fixed()
            .map_err(|e| codec_err("encode", "chunk", e.into()))?;
        let frame: Vec<u64> = s.iter().map(|v| v.get()).collect();
        let shard = if elide {
            match sh.encode_shard(&raw, &frame, &dt, &fv)? {
                Some(v) => v,
                None => return Ok(None),
            }
        } else {
            sh.encode_shard_always(&raw, &frame, &dt, &fv)?
        };
        let mut out: Cow<'_, [u8]> = Cow::Owned(shard);
        for c in self.chain.bytes_to_bytes_codecs() {
            out = Cow::Owned(
                c.encode(out, &opts)
                    .map_err(|e| codec_err("encode", "chunk", e))?
                    .into_owned(),
            );
        }
        Ok(Some(out.into_owned().into()))
    }

    /// Encodes the elements behind `handles` with the real data type.
    fn encode_vlen(
        &self,
        handles: &[u8],
        shape: &[NonZeroU64],
        v: &VlenMode,
    ) -> Result<Vec<u8>, CodecError> {
        let mut bytes = Vec::new();
        let mut offsets = Vec::with_capacity(handles.len() / 8 + 1);
        offsets.push(0usize);
        v.pool.resolve(
            handles,
            |e| {
                bytes.extend_from_slice(e);
                offsets.push(bytes.len());
            },
            "chunk",
        )?;
        let invalid = |reason: String| CodecError::InvalidVlen {
            key: "chunk".into(),
            reason,
        };
        let offsets =
            zarrs::array::ArrayBytesOffsets::new(offsets).map_err(|e| invalid(e.to_string()))?;
        let array = ArrayBytes::new_vlen(bytes, offsets).map_err(|e| invalid(e.to_string()))?;
        let enc = self
            .chain
            .encode(
                array,
                shape,
                &v.data_type,
                &v.fill_value,
                &CodecOptions::default(),
            )
            .map_err(|e| codec_err("encode", "chunk", e))?;
        Ok(enc.into_owned())
    }

    /// Undoes the bytes→bytes codecs of a stored chunk, last first, each stage bounded by the
    /// size its representation gives (`reps`).
    fn decode_bytes_stages<'a>(
        &self,
        encoded: &'a [u8],
        reps: &Representations,
        opts: &CodecOptions,
        key: &str,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        let mut raw: Cow<'a, [u8]> = Cow::Borrowed(encoded);
        for (i, c) in self.chain.bytes_to_bytes_codecs().iter().enumerate().rev() {
            let decoded = reps.bytes[i];
            raw = bounds::decode_stage(
                c,
                self.kinds[i],
                raw,
                &decoded,
                bounds::limit_of(decoded),
                opts,
                key,
            )?;
        }
        Ok(raw)
    }

    /// Decodes a chunk of the real data type into handles (the stored bytes checked by
    /// [`vlen::check_interleaved`] before zarrs decodes them).
    fn decode_vlen(
        &self,
        encoded: &[u8],
        shape: &[NonZeroU64],
        v: &VlenMode,
        key: &str,
    ) -> Result<Vec<u8>, CodecError> {
        let opts = self.decode_options();
        let reps = self.representations(shape, &v.data_type, &v.fill_value, key)?;
        self.check_stored_reps(encoded.len() as u64, &reps, key)?;
        let raw = self.decode_bytes_stages(encoded, &reps, &opts, key)?;
        let n = shape.iter().map(|v| v.get()).product::<u64>();
        vlen::check_interleaved(&raw, n, v.kind, key)?;
        let dec = self
            .tail
            .decode(raw, shape, &v.data_type, &v.fill_value, &opts)
            .map_err(|e| codec_err("decode", key, e))?
            .into_variable()
            .map_err(|e| codec_err("decode", key, e.into()))?;
        let (bytes, offsets) = dec.into_parts();
        if offsets.len() as u64 != n + 1 || offsets.last() > bytes.len() {
            return Err(CodecError::InvalidVlen {
                key: key.to_string(),
                reason: format!("{} offsets for {n} elements", offsets.len()),
            });
        }
        let handles = v
            .pool
            .intern(offsets.windows(2).map(|w| &bytes[w[0]..w[1]]));
        Ok(handles.iter().flat_map(|h| h.to_ne_bytes()).collect())
    }

    /// The direct decoder for elements of `data_type` and the decoded size of a chunk of
    /// `shape`, when this chain has one.
    fn direct_for(&self, shape: &[u64], data_type: &DataType) -> Option<(DirectChain, usize)> {
        let direct = self.direct?;
        let elem = data_type.fixed_size()?;
        if !direct.applies(elem) {
            return None;
        }
        let size = shape
            .iter()
            .try_fold(elem as u64, |acc, &n| acc.checked_mul(n))?;
        Some((direct, usize::try_from(size).ok()?))
    }

    /// Decode one encoded chunk straight into `out`, C-order native-endian bytes of `shape`
    /// (`out` must have exactly the decoded size); `key` names it in errors. Chains with a
    /// direct decoder (`bytes` in native order, optionally `zstd`) write no intermediate
    /// buffer; others decode, then copy.
    pub fn decode_into(
        &self,
        encoded: &[u8],
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let destination = |expected: usize| {
            if expected == out.len() {
                return Ok(());
            }
            Err(CodecError::WrongSize {
                key: format!("{key} (destination)"),
                expected: expected as u64,
                got: out.len() as u64,
            })
        };
        if let Some((direct, size)) = self.direct_for(shape, data_type) {
            destination(size)?;
            return direct.decode_into(encoded, out, key);
        }
        let decoded = self.decode(encoded, shape, data_type, fill_value, key)?;
        destination(decoded.len())?;
        out.copy_from_slice(&decoded);
        Ok(())
    }

    /// Decode one encoded chunk into `buf`, resized to the chunk's decoded size (its
    /// allocation is reused): the stored size is checked first, so `buf` grows only for
    /// bytes that can decode to the chunk, and it grows fallibly
    /// ([`CodecError::OutOfMemory`]).
    pub fn decode_to_buffer(
        &self,
        encoded: &[u8],
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
        buf: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        if let Some((direct, size)) = self.direct_for(shape, data_type) {
            direct.check_stored(encoded, size, key)?;
            bounds::try_resize(buf, size as u64, key)?;
            return direct.decode_into(encoded, buf, key);
        }
        *buf = self.decode(encoded, shape, data_type, fill_value, key)?;
        Ok(())
    }

    /// Decode one encoded chunk (or shard) into C-order native-endian bytes of `shape`;
    /// `key` names it in errors.
    ///
    /// Before anything of the chunk's size is allocated, the stored size is checked
    /// against what the codecs allow ([`Self::check_stored_size`]); each bytes→bytes codec
    /// then decodes into a buffer no larger than its declared output (and than what its
    /// input can justify), and buffers of the chunk's size are allocated fallibly
    /// ([`CodecError::OutOfMemory`]).
    pub fn decode(
        &self,
        encoded: &[u8],
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
    ) -> Result<Vec<u8>, CodecError> {
        if let Some((direct, size)) = self.direct_for(shape, data_type) {
            return direct.decode_vec(encoded, size, key);
        }
        let opts = self.decode_options();
        let shape_nz = nz_shape(shape).ok_or_else(|| CodecError::WrongSize {
            key: key.to_string(),
            expected: 0,
            got: 0,
        })?;
        if let Some(v) = &self.vlen {
            return self.decode_vlen(encoded, &shape_nz, v, key);
        }
        let reps = self.representations(&shape_nz, data_type, fill_value, key)?;
        self.check_stored_reps(encoded.len() as u64, &reps, key)?;
        let raw = self.decode_bytes_stages(encoded, &reps, &opts, key)?;
        let Some(sh) = self.sharding() else {
            let dec = self
                .tail
                .decode(raw, &shape_nz, data_type, fill_value, &opts)
                .map_err(|e| codec_err("decode", key, e))?
                .into_fixed()
                .map_err(|e| codec_err("decode", key, e.into()))?;
            return Ok(dec.into_owned());
        };
        let (s, dt, fv) = &reps.frame;
        let frame: Vec<u64> = s.iter().map(|v| v.get()).collect();
        let dec = sh.decode_shard(&raw, &frame, dt, fv, key)?;
        let mut bytes = ArrayBytes::new_flen(Cow::Owned(dec));
        for (c, (s, dt, fv)) in self
            .chain
            .array_to_array_codecs()
            .iter()
            .zip(reps.arrays.iter())
            .rev()
        {
            bytes = c
                .decode(bytes, s, dt, fv, &opts)
                .map_err(|e| codec_err("decode", key, e))?;
        }
        Ok(bytes
            .into_fixed()
            .map_err(|e| codec_err("decode", key, e.into()))?
            .into_owned())
    }

    /// The representations of a chunk of `shape` through every codec (see
    /// [`Representations`]); sizes saturate instead of overflowing.
    fn representations(
        &self,
        shape: &[NonZeroU64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
    ) -> Result<Representations, CodecError> {
        // a variable-length chain is sized with its real data type, not the handles
        let (data_type, fill_value) = match &self.vlen {
            Some(v) => (&v.data_type, &v.fill_value),
            None => (data_type, fill_value),
        };
        let mut arrays = Vec::new();
        let (mut s, mut dt, mut fv) = (shape.to_vec(), data_type.clone(), fill_value.clone());
        for c in self.chain.array_to_array_codecs() {
            let next = c
                .encoded_representation(&s, &dt, &fv)
                .map_err(|e| codec_err("decode", key, e))?;
            arrays.push((s, dt, fv));
            (s, dt, fv) = next;
        }
        let first = match self.sharding() {
            Some(sh) => {
                let frame: Vec<u64> = s.iter().map(|v| v.get()).collect();
                sh.max_compact_size(&frame, &dt, &fv)?
                    .map_or(BytesRepresentation::UnboundedSize, |n| {
                        BytesRepresentation::BoundedSize(n)
                    })
            }
            None => self
                .chain
                .array_to_bytes_codec()
                .encoded_representation(&s, &dt, &fv)
                .map_err(|e| codec_err("decode", key, e))?,
        };
        let mut bytes = vec![first];
        for (c, kind) in self.chain.bytes_to_bytes_codecs().iter().zip(&self.kinds) {
            let last = bytes[bytes.len() - 1];
            bytes.push(kind.encoded_representation(c.as_ref(), last));
        }
        Ok(Representations {
            arrays,
            frame: (s, dt, fv),
            bytes,
        })
    }

    /// What a stored object of a chunk of `shape` (at `key`, for errors) may be, worked
    /// out once: [`StoredBounds::max`] and [`StoredBounds::check`] (a read asks for both).
    pub fn stored_bounds(
        &self,
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
    ) -> Result<StoredBounds<'_>, CodecError> {
        let reps = match nz_shape(shape) {
            Some(shape_nz) => Some(self.representations(&shape_nz, data_type, fill_value, key)?),
            None => None,
        };
        Ok(StoredBounds {
            pipeline: self,
            reps,
        })
    }

    /// The most bytes a stored encoding of a chunk of `shape` can take (the chain's
    /// worst-case encoded size with [`bounds::with_slack`]; exact for fixed-size chains
    /// such as `bytes` alone). `None` when nothing bounds it: a shard stored without a
    /// bytes→bytes codec after the sharding codec may hold gaps (append-only writers), and
    /// some codecs have no bound.
    pub fn max_stored_size(
        &self,
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Option<u64>, CodecError> {
        Ok(self
            .stored_bounds(shape, data_type, fill_value, "chunk")?
            .max())
    }

    /// The worst-case encoded size of a chunk of `shape` written compactly (shards without
    /// gaps), without slack; `None` when unbounded.
    pub(crate) fn max_compact_chunk(
        &self,
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Option<u64>, CodecError> {
        let Some(shape_nz) = nz_shape(shape) else {
            return Ok(None);
        };
        let reps = self.representations(&shape_nz, data_type, fill_value, "chunk")?;
        Ok(reps.bytes[reps.bytes.len() - 1].size())
    }

    fn stored_limit(&self, reps: &Representations) -> Option<u64> {
        if self.sharding.is_some() && self.kinds.is_empty() {
            return None;
        }
        bounds::limit_of(reps.bytes[reps.bytes.len() - 1])
    }

    /// Checks that `size` stored bytes can be an encoding of a chunk of `shape`, before
    /// anything of the chunk's size is read or allocated: at most
    /// [`Self::max_stored_size`] bytes (exactly that for fixed-size chains:
    /// [`CodecError::WrongSize`]; otherwise [`CodecError::StoredTooLarge`]), and enough
    /// bytes to decode to the chunk's size (`bytes` alone: the chunk's size; zstd, blosc,
    /// gzip, crc32c: their maximum ratios; [`CodecError::StoredTooSmall`]). Shards may be
    /// small (absent inner chunks read as the fill value).
    pub fn check_stored_size(
        &self,
        size: u64,
        shape: &[u64],
        data_type: &DataType,
        fill_value: &FillValue,
        key: &str,
    ) -> Result<(), CodecError> {
        self.stored_bounds(shape, data_type, fill_value, key)?
            .check(size, key)
    }

    fn check_stored_reps(
        &self,
        size: u64,
        reps: &Representations,
        key: &str,
    ) -> Result<(), CodecError> {
        match (self.stored_limit(reps), reps.bytes[reps.bytes.len() - 1]) {
            (Some(n), BytesRepresentation::FixedSize(_)) if size != n => {
                return Err(CodecError::WrongSize {
                    key: key.to_string(),
                    expected: n,
                    got: size,
                });
            }
            (Some(max), _) if size > max => {
                return Err(CodecError::StoredTooLarge {
                    key: key.to_string(),
                    size,
                    max,
                });
            }
            _ => {}
        }
        // what the stored bytes can decode to, through every bytes→bytes codec back to the
        // array→bytes codec's output (raw `bytes`: the chunk itself)
        if self.sharding.is_some() {
            return Ok(());
        }
        let BytesRepresentation::FixedSize(decoded) = reps.bytes[0] else {
            return Ok(());
        };
        let mut most = size;
        for kind in self.kinds.iter().rev() {
            let Some(m) = kind.max_decoded(most) else {
                return Ok(());
            };
            most = m;
        }
        let raw_bytes = self
            .chain
            .array_to_bytes_codec()
            .as_any()
            .is::<zarrs::array::codec::BytesCodec>();
        if raw_bytes && most < decoded {
            return Err(CodecError::StoredTooSmall {
                key: key.to_string(),
                size,
                decoded,
                max_decoded: most,
            });
        }
        Ok(())
    }

    /// The pipeline with the sizes that depend on the array's data type worked out: for a
    /// sharded pipeline, the most bytes an inner chunk's encoding can take, which every
    /// shard index entry is then checked against ([`CodecError::ShardEntryTooLarge`]).
    /// Recursive for nested sharding.
    pub fn with_data_type_bounds(
        mut self,
        data_type: &DataType,
        fill_value: &FillValue,
    ) -> Result<Self, CodecError> {
        // the fill value through the array→array codecs (zarr-python refuses an array
        // whose fill value a codec cannot encode): checked when the array is opened
        let (frame_type, frame_fill) = self.frame_type(data_type, Some(fill_value))?;
        if let Some(sh) = self.sharding.take() {
            let frame_fill = frame_fill.expect("a fill value was given");
            self.sharding = Some(Box::new(
                sh.with_data_type_bounds(&frame_type, &frame_fill)?,
            ));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(json: &str) -> Result<CodecPipeline, CodecError> {
        let codecs: Vec<MetadataV3> = serde_json::from_str(json).unwrap();
        CodecPipeline::from_metadata(&codecs)
    }

    /// zarrs sorts a chain's codecs by kind; zarr-python, like the spec, refuses them out of
    /// order, and so does zarrflow, naming the misplaced codec.
    #[test]
    fn codecs_out_of_the_specs_order_are_refused() {
        let bytes = r#"{"name": "bytes", "configuration": {"endian": "little"}}"#;
        let zlib = r#"{"name": "numcodecs.zlib", "configuration": {"level": 1}}"#;
        let transpose = r#"{"name": "transpose", "configuration": {"order": [0]}}"#;
        assert!(chain(&format!("[{transpose}, {bytes}, {zlib}]")).is_ok());
        for (codecs, at) in [
            (format!("[{zlib}, {bytes}]"), "codecs[0]"),
            (format!("[{bytes}, {transpose}]"), "codecs[1]"),
            (format!("[{bytes}, {zlib}, {bytes}]"), "codecs[2]"),
        ] {
            let e = chain(&codecs).unwrap_err();
            assert!(
                matches!(&e, CodecError::InvalidConfiguration { field, .. } if field.starts_with(at)),
                "{codecs}: {e:?}"
            );
        }
    }
}
