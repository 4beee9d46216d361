//! The codec layer (pure: no I/O).
//!
//! * [`CodecPipeline`]: a chunk's codec list. Without sharding it is a zarrs `CodecChain`;
//!   with `sharding_indexed` as the array→bytes codec, zarrs applies the array→array and
//!   bytes→bytes codecs around zarrflow's own [`Sharding`] layer.
//! * [`sharding`]: configuration, shard index encode/decode with validation, shard assembly.
//! * [`block`]: C-order block copy helpers.

pub mod block;
mod direct;
mod error;
pub mod sharding;

pub use error::CodecError;
pub use sharding::{
    IndexLocation, MAX_SHARD_ENTRIES, ShardIndex, ShardIndexCodec, Sharding, ShardingConfig,
};

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

/// How far the block bound of zstd frames without a declared size may exceed the decoded
/// size: two 128 KiB blocks (a valid frame's last block, and one of rounding).
const UNDECLARED_ZSTD_SLACK: u64 = 2 << 17;

/// Checks, before decoding, that a `zstd` frame does not declare more decoded bytes than
/// the codec's decoded representation allows. zstd frames carry their content size (up to
/// 2^64 − 1) and zarrs allocates a buffer of that size before decompressing, so a hostile
/// frame would otherwise abort the process on a failed allocation. A frame without a
/// declared size (written by a streaming encoder) passes when the block bound zarrs
/// allocates for it stays within the decoded size plus [`UNDECLARED_ZSTD_SLACK`].
///
/// `b2b` are the bytes→bytes codecs with the decoded representation of each (the input to
/// the codec when encoding). The walk goes from the outermost codec inwards through codecs
/// whose framing is known (`crc32c` appends 4 bytes) and stops at the first other one.
fn check_declared_sizes(
    b2b: &[(&'static str, BytesRepresentation)],
    encoded: &[u8],
    key: &str,
) -> Result<(), CodecError> {
    let mut view = encoded;
    for (name, decoded) in b2b.iter().rev() {
        match *name {
            "crc32c" => view = &view[..view.len().saturating_sub(4)],
            "zstd" => {
                let limit = match decoded {
                    BytesRepresentation::FixedSize(n) | BytesRepresentation::BoundedSize(n) => *n,
                    BytesRepresentation::UnboundedSize => return Ok(()),
                };
                match zstd::zstd_safe::find_decompressed_size(view) {
                    // every frame declares its size: their sum must fit
                    Ok(Some(declared)) if declared > limit => {
                        return Err(CodecError::WrongSize {
                            key: format!("{key} (zstd frame content size)"),
                            expected: limit,
                            got: declared,
                        });
                    }
                    // a frame without a declared size (streaming encoders write none):
                    // zarrs allocates the block bound, 128 KiB per block, which a valid
                    // frame keeps within the chunk size plus two blocks
                    Ok(None) => {
                        if let Some(bound) = zstd::bulk::Decompressor::upper_bound(view)
                            && bound as u64 > limit.saturating_add(UNDECLARED_ZSTD_SLACK)
                        {
                            return Err(CodecError::WrongSize {
                                key: format!("{key} (zstd frame block bound)"),
                                expected: limit,
                                got: bound as u64,
                            });
                        }
                    }
                    // declared sizes that fit, or not a frame: zarrs decodes or reports it
                    _ => {}
                }
                return Ok(());
            }
            _ => return Ok(()),
        }
    }
    Ok(())
}

/// The codec pipeline of a chunk (or of an inner chunk of a shard).
#[derive(Debug, Clone)]
pub struct CodecPipeline {
    metadata: Vec<MetadataV3>,
    chain: Arc<CodecChain>,
    sharding: Option<Box<Sharding>>,
    /// The decoder zarrflow runs itself for this chain, if any (see `direct.rs`).
    direct: Option<DirectChain>,
    /// Verify checksums (`crc32c`, ...) when decoding; on unless turned off explicitly.
    verify_checksums: bool,
}

/// Name of the sharding codec.
pub const SHARDING_NAME: &str = "sharding_indexed";

impl CodecPipeline {
    /// Build from a `codecs` list (field name `codecs` in errors).
    pub fn from_metadata(codecs: &[MetadataV3]) -> Result<Self, CodecError> {
        Self::from_metadata_at(codecs, "codecs")
    }

    /// Build from a codec list; `field` names the list in errors (e.g.
    /// `codecs[0].configuration.codecs` for an inner chain).
    pub fn from_metadata_at(codecs: &[MetadataV3], field: &str) -> Result<Self, CodecError> {
        if codecs.is_empty() {
            return Err(CodecError::InvalidConfiguration {
                field: field.to_string(),
                reason: "the codec list must not be empty".into(),
            });
        }
        let mut sharding = None;
        for (i, c) in codecs.iter().enumerate() {
            let f = format!("{field}[{i}]");
            // check each codec on its own first so the error names the offending entry
            if c.name() == SHARDING_NAME {
                let cfg = ShardingConfig::from_metadata(c, &f)?;
                sharding = Some(Box::new(Sharding::new(cfg, &f)?));
            } else if let Err(e) = zarrs::array::Codec::from_metadata(c)
                && c.must_understand()
            {
                return Err(CodecError::UnsupportedCodec {
                    field: format!("{f} (`{}`)", c.name()),
                    reason: e.to_string(),
                });
            }
        }
        let chain =
            CodecChain::from_metadata(codecs).map_err(|e| CodecError::UnsupportedCodec {
                field: field.to_string(),
                reason: e.to_string(),
            })?;
        Ok(CodecPipeline {
            metadata: codecs.to_vec(),
            chain: Arc::new(chain),
            direct: DirectChain::of(codecs),
            sharding,
            verify_checksums: true,
        })
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

    /// Whether checksums are verified on decode.
    pub fn verify_checksums(&self) -> bool {
        self.verify_checksums
    }

    /// What the bytes→bytes codecs are, in order (as far as size checks care).
    fn bytes_to_bytes_names(&self) -> Vec<&'static str> {
        use zarrs::array::codec::bytes_to_bytes::{crc32c::Crc32cCodec, zstd::ZstdCodec};
        self.chain
            .bytes_to_bytes_codecs()
            .iter()
            .map(|c| {
                let any = c.as_any();
                if any.is::<ZstdCodec>() {
                    "zstd"
                } else if any.is::<Crc32cCodec>() {
                    "crc32c"
                } else {
                    "other"
                }
            })
            .collect()
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

    /// Validate the pipeline against a chunk (shard) shape and data type: divisibility of the
    /// shard by the inner chunk shape (in the frame after array→array codecs, recursively for
    /// nested sharding), fixed-size index codecs, entry cap.
    pub fn validate(&self, shape: &[u64], data_type: &DataType) -> Result<(), CodecError> {
        if let Some(elem) = data_type.fixed_size() {
            sharding::checked_bytes(shape, elem, "chunk shape")?;
        }
        if let Some(sh) = self.sharding() {
            sharding::fixed_size(data_type, "sharding")?;
            let inner_frame = self.array_to_bytes_shape(shape)?;
            sh.index_codec(&inner_frame)?;
            sh.inner().validate(&sh.config().chunk_shape, data_type)?;
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
    ) -> Result<Vec<u8>, CodecError> {
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
    ) -> Result<Option<Vec<u8>>, CodecError> {
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
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let opts = CodecOptions::default();
        let shape_nz = nz_shape(shape).ok_or_else(|| CodecError::WrongSize {
            key: "chunk".into(),
            expected: 0,
            got: decoded.len() as u64,
        })?;
        if let Some(elem) = data_type.fixed_size() {
            sharding::check_size(
                "chunk",
                decoded.len(),
                shape.iter().product::<u64>() as usize * elem,
            )?;
        }
        let Some(sh) = self.sharding() else {
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
            return Ok(Some(enc.into_owned()));
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
        Ok(Some(out.into_owned()))
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

    /// Decode one encoded chunk (or shard) into C-order native-endian bytes of `shape`;
    /// `key` names it in errors.
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
        let Some(sh) = self.sharding() else {
            // bound declared sizes of zstd frames by the chunk's representations first
            let names = self.bytes_to_bytes_names();
            if names.contains(&"zstd") {
                let mut reps = Vec::new();
                let (mut s, mut dt, mut fv) =
                    (shape_nz.clone(), data_type.clone(), fill_value.clone());
                for c in self.chain.array_to_array_codecs() {
                    (s, dt, fv) = c
                        .encoded_representation(&s, &dt, &fv)
                        .map_err(|e| codec_err("decode", key, e))?;
                }
                let mut rep = self
                    .chain
                    .array_to_bytes_codec()
                    .encoded_representation(&s, &dt, &fv)
                    .map_err(|e| codec_err("decode", key, e))?;
                for (c, name) in self.chain.bytes_to_bytes_codecs().iter().zip(&names) {
                    reps.push((*name, rep));
                    rep = c.encoded_representation(&rep);
                }
                check_declared_sizes(&reps, encoded, key)?;
            }
            let dec = self
                .chain
                .decode(
                    Cow::Borrowed(encoded),
                    &shape_nz,
                    data_type,
                    fill_value,
                    &opts,
                )
                .map_err(|e| codec_err("decode", key, e))?
                .into_fixed()
                .map_err(|e| codec_err("decode", key, e.into()))?;
            return Ok(dec.into_owned());
        };
        // representations through array→array codecs
        let mut reps = Vec::new();
        let (mut s, mut dt, mut fv) = (shape_nz, data_type.clone(), fill_value.clone());
        for c in self.chain.array_to_array_codecs() {
            let next = c
                .encoded_representation(&s, &dt, &fv)
                .map_err(|e| codec_err("decode", key, e))?;
            reps.push((s, dt, fv));
            (s, dt, fv) = next;
        }
        // bytes→bytes in reverse
        let mut byte_reps = vec![BytesRepresentation::UnboundedSize];
        for c in self.chain.bytes_to_bytes_codecs() {
            let last = byte_reps
                .last()
                .copied()
                .unwrap_or(BytesRepresentation::UnboundedSize);
            byte_reps.push(c.encoded_representation(&last));
        }
        let names = self.bytes_to_bytes_names();
        let b2b_reps: Vec<(&'static str, BytesRepresentation)> = names
            .iter()
            .copied()
            .zip(byte_reps.iter().copied())
            .collect();
        check_declared_sizes(&b2b_reps, encoded, key)?;
        let mut raw: Cow<'_, [u8]> = Cow::Borrowed(encoded);
        for (i, c) in self.chain.bytes_to_bytes_codecs().iter().enumerate().rev() {
            raw = Cow::Owned(
                c.decode(raw, &byte_reps[i], &opts)
                    .map_err(|e| codec_err("decode", key, e))?
                    .into_owned(),
            );
        }
        let frame: Vec<u64> = s.iter().map(|v| v.get()).collect();
        let dec = sh.decode_shard(&raw, &frame, &dt, &fv, key)?;
        let mut bytes = ArrayBytes::new_flen(Cow::Owned(dec));
        for (c, (s, dt, fv)) in self
            .chain
            .array_to_array_codecs()
            .iter()
            .zip(reps.iter())
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
}
