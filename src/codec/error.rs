//! Errors of the codec layer.

/// An error from the codec layer. Messages name the metadata field or the store key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A variable-length chunk (`vlen-utf8`, `vlen-bytes`) is malformed: a count or length
    /// that the stored bytes cannot hold, trailing bytes, invalid UTF-8 in a `string` array.
    #[error("chunk {key}: invalid variable-length encoding: {reason}")]
    InvalidVlen {
        /// Store key of the chunk (or shard and inner chunk).
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A codec is unknown, or its configuration was rejected.
    #[error("unsupported or invalid codec at `{field}`: {reason}")]
    UnsupportedCodec {
        /// The metadata field, e.g. `codecs[1]`.
        field: String,
        /// Why.
        reason: String,
    },
    /// A codec configuration field is invalid.
    #[error("invalid codec configuration at `{field}`: {reason}")]
    InvalidConfiguration {
        /// The metadata field, e.g. `codecs[0].configuration.chunk_shape`.
        field: String,
        /// Why.
        reason: String,
    },
    /// The shard shape is not a multiple of the inner chunk shape.
    #[error(
        "shard shape {shard_shape:?} is not divisible by the inner chunk shape {chunk_shape:?} at `{field}`"
    )]
    ShardShapeNotDivisible {
        /// The field holding the inner chunk shape.
        field: String,
        /// The shard shape as seen by the sharding codec (after array→array codecs).
        shard_shape: Vec<u64>,
        /// The inner chunk shape.
        chunk_shape: Vec<u64>,
    },
    /// A shard has more inner chunks than the cap.
    #[error("`{field}`: a shard of {count} inner chunks exceeds the limit of {max}")]
    TooManyShardEntries {
        /// Field (or key) concerned.
        field: String,
        /// Number of inner chunks.
        count: u64,
        /// The cap.
        max: u64,
    },
    /// The shard object is shorter than its encoded index.
    #[error("shard {key} is too short: {size} bytes, smaller than its {index_size}-byte index")]
    ShardTooShort {
        /// Store key of the shard.
        key: String,
        /// Object size.
        size: u64,
        /// Encoded index size.
        index_size: u64,
    },
    /// The shard index checksum does not match.
    #[error("shard {key}: the shard index checksum is invalid")]
    ShardIndexChecksum {
        /// Store key of the shard.
        key: String,
    },
    /// An index entry's `offset + nbytes` overflows or exceeds `i64::MAX`.
    #[error(
        "shard {key}: index entry {chunk:?} byte range overflows (offset {offset}, nbytes {nbytes})"
    )]
    ShardEntryOverflow {
        /// Store key of the shard.
        key: String,
        /// Inner chunk coordinates.
        chunk: Vec<u64>,
        /// Entry offset.
        offset: u64,
        /// Entry length.
        nbytes: u64,
    },
    /// An index entry ends beyond the end of the shard object.
    #[error(
        "shard {key}: index entry {chunk:?} (offset {offset}, nbytes {nbytes}) lies beyond the object end ({shard_size} bytes)"
    )]
    ShardEntryOutOfRange {
        /// Store key of the shard.
        key: String,
        /// Inner chunk coordinates.
        chunk: Vec<u64>,
        /// Entry offset.
        offset: u64,
        /// Entry length.
        nbytes: u64,
        /// Object size.
        shard_size: u64,
    },
    /// Two index entries share bytes, or an entry overlaps the index itself: a shard whose
    /// entries alias one body is refused on read and on rewrite (a rewrite would otherwise
    /// copy every alias in full).
    #[error("shard {key}: index entry {chunk:?} overlaps {}", match other {
        Some(c) => format!("index entry {c:?}"),
        None => "the shard index".to_string(),
    })]
    ShardEntriesOverlap {
        /// Store key of the shard.
        key: String,
        /// Inner chunk coordinates of one entry.
        chunk: Vec<u64>,
        /// The other entry's coordinates; `None` for the index's own bytes.
        other: Option<Vec<u64>>,
    },
    /// Exactly one of offset/nbytes is the `u64::MAX` sentinel.
    #[error(
        "shard {key}: index entry {chunk:?} is corrupt: exactly one of offset ({offset}) / nbytes ({nbytes}) is the empty sentinel"
    )]
    ShardEntrySingleSentinel {
        /// Store key of the shard.
        key: String,
        /// Inner chunk coordinates.
        chunk: Vec<u64>,
        /// Entry offset.
        offset: u64,
        /// Entry length.
        nbytes: u64,
    },
    /// Encoding or decoding through a zarrs codec failed.
    #[error("{operation} of {key} failed: {source}")]
    Codec {
        /// `encode` or `decode`.
        operation: &'static str,
        /// Store key (or description) of the chunk.
        key: String,
        /// The zarrs error.
        #[source]
        source: Box<zarrs::array::CodecError>,
    },
    /// A decoded or supplied buffer has the wrong size.
    #[error("{key}: expected {expected} bytes, got {got}")]
    WrongSize {
        /// Store key (or description) of the chunk.
        key: String,
        /// Expected bytes.
        expected: u64,
        /// Received bytes.
        got: u64,
    },
    /// A stored object is larger than any valid encoding of its chunk (the chain's
    /// worst-case encoded size plus the stated slack; see `codec::bounds`).
    #[error(
        "{key}: {size} stored bytes, more than any encoding of its chunk can take ({max} bytes)"
    )]
    StoredTooLarge {
        /// Store key (or description) of the object.
        key: String,
        /// Its size.
        size: u64,
        /// The most bytes an encoding of the chunk can take.
        max: u64,
    },
    /// A stored object is too small to decode to its chunk: the most its codecs can decode
    /// from its bytes is less than the chunk's size (checked before a buffer of that size
    /// is allocated).
    #[error(
        "{key}: {size} stored bytes decode to at most {max_decoded} bytes, less than the chunk's {decoded}"
    )]
    StoredTooSmall {
        /// Store key (or description) of the object.
        key: String,
        /// Its size.
        size: u64,
        /// The chunk's decoded size.
        decoded: u64,
        /// The most its bytes can decode to.
        max_decoded: u64,
    },
    /// A bytes→bytes decoder would produce more than the metadata allows for its output
    /// (decoding stops there).
    #[error("{key}: {codec} decodes to more than the {limit} bytes its chunk allows")]
    DecodedTooLarge {
        /// Store key (or description) of the chunk.
        key: String,
        /// The codec.
        codec: &'static str,
        /// The most bytes allowed.
        limit: u64,
    },
    /// A buffer the operation needs could not be allocated (a legitimately huge chunk or
    /// shard on a machine without the memory): refused instead of aborting the process.
    #[error("{key}: could not allocate {bytes} bytes")]
    OutOfMemory {
        /// Store key (or description) of what needed the buffer.
        key: String,
        /// The size asked for.
        bytes: u64,
    },
    /// An index entry is larger than any valid encoding of an inner chunk.
    #[error(
        "shard {key}: index entry {chunk:?} has {nbytes} bytes, more than any encoding of an inner chunk can take ({max})"
    )]
    ShardEntryTooLarge {
        /// Store key of the shard.
        key: String,
        /// Inner chunk coordinates.
        chunk: Vec<u64>,
        /// Entry length.
        nbytes: u64,
        /// The most an inner chunk's encoding can take.
        max: u64,
    },
    /// `sharding_indexed` codecs are nested deeper than the limit.
    #[error("`{field}`: sharding codecs nested deeper than {max} levels")]
    NestingTooDeep {
        /// The field of the codec beyond the limit.
        field: String,
        /// The limit ([`MAX_SHARDING_DEPTH`](crate::codec::MAX_SHARDING_DEPTH)).
        max: usize,
    },
    /// The data type is not supported by this operation (e.g. variable-length inside a shard).
    #[error("unsupported data type {data_type} for {context}")]
    UnsupportedDataType {
        /// The data type.
        data_type: String,
        /// What was attempted.
        context: String,
    },
    /// A buffer could not be allocated (the allocator refused it).
    #[error("cannot allocate {bytes} bytes for {what}")]
    Allocation {
        /// What the buffer was for.
        what: &'static str,
        /// Its size.
        bytes: u64,
    },
}
