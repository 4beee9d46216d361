//! Errors of the metadata layer.

use crate::codec::CodecError;

/// An error reading, validating or writing `zarr.json`. Every variant names the metadata key
/// (e.g. `group/array/zarr.json`) and, where relevant, the field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// The document is not valid JSON.
    #[error("{key}: malformed JSON: {reason}")]
    MalformedJson {
        /// Metadata key.
        key: String,
        /// Parser message (with line and column).
        reason: String,
    },
    /// `zarr_format` is missing or not 3.
    #[error("{key}: field `zarr_format`: unsupported Zarr format {found} (expected 3)")]
    UnsupportedZarrFormat {
        /// Metadata key.
        key: String,
        /// What was found.
        found: String,
    },
    /// `node_type` is not the expected one.
    #[error("{key}: field `node_type`: expected {expected}, found {found}")]
    WrongNodeType {
        /// Metadata key.
        key: String,
        /// Expected node type.
        expected: String,
        /// Found value.
        found: String,
    },
    /// A required field is missing.
    #[error("{key}: missing required field `{field}`")]
    MissingField {
        /// Metadata key.
        key: String,
        /// Field name.
        field: String,
    },
    /// A field has an invalid value.
    #[error("{key}: invalid field `{field}`: {reason}")]
    InvalidField {
        /// Metadata key.
        key: String,
        /// Field name (dotted path).
        field: String,
        /// Why.
        reason: String,
    },
    /// An unknown field without `"must_understand": false`.
    #[error(
        "{key}: unknown field `{field}` must be understood (only objects with \"must_understand\": false may be ignored)"
    )]
    UnknownField {
        /// Metadata key.
        key: String,
        /// Field name.
        field: String,
    },
    /// `"must_understand": false` on a field where it is not allowed.
    #[error("{key}: field `{field}` may not carry \"must_understand\": false")]
    MustUnderstandNotAllowed {
        /// Metadata key.
        key: String,
        /// Field name.
        field: String,
    },
    /// The data type is not supported.
    #[error("{key}: field `data_type`: unsupported data type `{name}`: {reason}")]
    UnsupportedDataType {
        /// Metadata key.
        key: String,
        /// Data type name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The fill value does not fit the data type.
    #[error("{key}: field `fill_value`: {value} is not a valid fill value for {data_type}")]
    InvalidFillValue {
        /// Metadata key.
        key: String,
        /// Data type.
        data_type: String,
        /// The JSON value.
        value: String,
    },
    /// The chunk grid is not supported.
    #[error("{key}: field `chunk_grid`: unsupported chunk grid `{name}`")]
    UnsupportedChunkGrid {
        /// Metadata key.
        key: String,
        /// Grid name.
        name: String,
    },
    /// The chunk key encoding is not supported.
    #[error("{key}: field `chunk_key_encoding`: unsupported chunk key encoding `{name}`")]
    UnsupportedChunkKeyEncoding {
        /// Metadata key.
        key: String,
        /// Encoding name.
        name: String,
    },
    /// A storage transformer is present (none is understood).
    #[error("{key}: field `storage_transformers`: unsupported storage transformer `{name}`")]
    UnsupportedStorageTransformer {
        /// Metadata key.
        key: String,
        /// Transformer name.
        name: String,
    },
    /// `dimension_names` length differs from the rank.
    #[error("{key}: field `dimension_names`: {got} names for an array of rank {expected}")]
    DimensionNamesRank {
        /// Metadata key.
        key: String,
        /// Array rank.
        expected: usize,
        /// Number of names.
        got: usize,
    },
    /// The codecs are invalid or unsupported.
    #[error("{key}: {source}")]
    Codec {
        /// Metadata key.
        key: String,
        /// Codec-layer error (names the codec field).
        #[source]
        source: CodecError,
    },
    /// The document is larger than the limit it is read with (refused before its body is
    /// read; see [`DEFAULT_MAX_METADATA_BYTES`](crate::metadata::DEFAULT_MAX_METADATA_BYTES)).
    #[error("{key}: {size} bytes, more than the limit of {max} bytes for a metadata document")]
    TooLarge {
        /// Metadata key.
        key: String,
        /// The document's size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// A Zarr v2 `dtype` zarrflow does not read (yet): named, never read as raw bytes.
    #[error("{key}: field `dtype`: data type `{dtype}` is not supported: {reason}")]
    UnsupportedV2DataType {
        /// Metadata key.
        key: String,
        /// The `dtype` as written.
        dtype: String,
        /// Why (e.g. "object arrays ... are not supported yet").
        reason: String,
    },
    /// A Zarr v2 compressor or filter zarrflow has no codec for.
    #[error(
        "{key}: field `{field}`: unsupported codec `{id}` (zarrflow reads the v2 codecs zarrs implements: blosc, zstd, gzip, zlib, bz2, shuffle, fixedscaleoffset, ..., and lz4 and delta, the latter on little-endian and single-byte arrays)"
    )]
    UnsupportedV2Codec {
        /// Metadata key.
        key: String,
        /// `compressor` or `filters[i]`.
        field: String,
        /// The codec's `id`.
        id: String,
    },
    /// Metadata that Zarr v2 cannot hold (sharding, the `default` key encoding, ...).
    #[error("not expressible in Zarr v2: {what}")]
    NotExpressibleInV2 {
        /// What v2 cannot hold.
        what: String,
    },
    /// An invalid creation request.
    #[error("invalid array specification: field `{field}`: {reason}")]
    InvalidSpec {
        /// Field of the specification.
        field: String,
        /// Why.
        reason: String,
    },
}
