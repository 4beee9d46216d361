//! Codec chains zarrflow decodes itself: `bytes` in native byte order, optionally followed
//! by `zstd` — the most common chains of sharded arrays.
//!
//! Two things make this faster than the generic zarrs chain: one zstd decompression context
//! per thread is reused (zarrs creates one per chunk, which costs about as much as a sixth
//! of a read's CPU time), and the frame decompresses straight into its destination (a
//! caller's slice, or a vector's spare capacity) with no zeroing and no intermediate copy.
//! The destination has exactly the decoded size, so a frame declaring or producing more
//! data fails instead of allocating; it is allocated fallibly, and only once the stored
//! bytes can justify it (raw bytes must have the chunk's size, zstd frames at least
//! 1/32768 of it).

use std::cell::RefCell;

use bytes::{Bytes, BytesMut};

use zarrs::metadata::v3::MetadataV3;

use super::CodecError;
use super::bounds::{BytesCodecKind, try_with_capacity};
use super::slab;

/// A chain with a direct decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirectChain {
    /// `bytes` alone: the encoded chunk is the decoded chunk.
    Raw {
        /// The stored byte order is the machine's (or not given, for 1-byte types).
        native: bool,
    },
    /// `bytes` then `zstd`.
    Zstd {
        /// As for [`DirectChain::Raw`].
        native: bool,
        /// The configured compression level (for encoding; `None` when the configuration
        /// does not give one zarrflow can read: such chunks are encoded by zarrs).
        level: Option<i32>,
        /// Whether encoded frames carry a checksum.
        checksum: bool,
    },
}

impl DirectChain {
    /// The direct decoder of a codec list, if it has one.
    pub(crate) fn of(codecs: &[MetadataV3]) -> Option<DirectChain> {
        let native = |bytes: &MetadataV3| {
            let endian = bytes
                .configuration()
                .and_then(|c| c.get("endian"))
                .and_then(|v| v.as_str());
            let machine = if cfg!(target_endian = "little") {
                "little"
            } else {
                "big"
            };
            endian.is_none_or(|e| e == machine)
        };
        match codecs {
            [b] if b.name() == "bytes" => Some(DirectChain::Raw { native: native(b) }),
            [b, z] if b.name() == "bytes" && z.name() == "zstd" => {
                let config = z.configuration();
                let get = |name: &str| config.and_then(|c| c.get(name));
                Some(DirectChain::Zstd {
                    native: native(b),
                    level: get("level")
                        .and_then(|v| v.as_i64())
                        .and_then(|l| i32::try_from(l).ok()),
                    checksum: get("checksum").and_then(|v| v.as_bool()).unwrap_or(false),
                })
            }
            _ => None,
        }
    }

    /// Whether this chain decodes elements of `elem` bytes directly (byte order matters
    /// only for multi-byte elements).
    pub(crate) fn applies(self, elem: usize) -> bool {
        match self {
            DirectChain::Raw { native } | DirectChain::Zstd { native, .. } => native || elem == 1,
        }
    }

    /// Checks, before a buffer of `size` bytes exists, that `encoded` can decode to it:
    /// raw bytes must have that size; zstd frames must declare no more and be long enough.
    pub(crate) fn check_stored(
        self,
        encoded: &[u8],
        size: usize,
        key: &str,
    ) -> Result<(), CodecError> {
        match self {
            DirectChain::Raw { .. } if encoded.len() != size => Err(CodecError::WrongSize {
                key: key.to_string(),
                expected: size as u64,
                got: encoded.len() as u64,
            }),
            DirectChain::Raw { .. } => Ok(()),
            DirectChain::Zstd { .. } => {
                check_declared(encoded, size, key)?;
                check_justified(encoded, size, key)
            }
        }
    }

    /// Decodes `encoded` into `out`, whose length is the exact decoded size.
    pub(crate) fn decode_into(
        self,
        encoded: &[u8],
        out: &mut [u8],
        key: &str,
    ) -> Result<(), CodecError> {
        let expected = out.len();
        let wrong_size = |got: u64| CodecError::WrongSize {
            key: key.to_string(),
            expected: expected as u64,
            got,
        };
        match self {
            DirectChain::Raw { .. } => {
                if encoded.len() != out.len() {
                    return Err(wrong_size(encoded.len() as u64));
                }
                out.copy_from_slice(encoded);
                Ok(())
            }
            DirectChain::Zstd { .. } => {
                check_declared(encoded, expected, key)?;
                check_justified(encoded, expected, key)?;
                let written = with_decompressor(key, |d| d.decompress_to_buffer(encoded, out))?;
                if written != expected {
                    return Err(wrong_size(written as u64));
                }
                Ok(())
            }
        }
    }

    /// Decodes `encoded` into a new vector of exactly `size` bytes.
    pub(crate) fn decode_vec(
        self,
        encoded: &[u8],
        size: usize,
        key: &str,
    ) -> Result<Vec<u8>, CodecError> {
        match self {
            DirectChain::Raw { .. } => {
                // the stored bytes are the chunk: their size is checked before anything
                // of the chunk's size is allocated
                if encoded.len() != size {
                    return Err(CodecError::WrongSize {
                        key: key.to_string(),
                        expected: size as u64,
                        got: encoded.len() as u64,
                    });
                }
                let mut out = try_with_capacity(size as u64, key)?;
                out.extend_from_slice(encoded);
                Ok(out)
            }
            DirectChain::Zstd { .. } => {
                check_declared(encoded, size, key)?;
                check_justified(encoded, size, key)?;
                // Decompress into the spare capacity: no zeroing of memory about to be
                // overwritten.
                let mut out = try_with_capacity(size as u64, key)?;
                let written =
                    with_decompressor(key, |d| d.decompress_to_buffer(encoded, &mut out))?;
                if written != size || out.len() != size {
                    return Err(CodecError::WrongSize {
                        key: key.to_string(),
                        expected: size as u64,
                        got: written as u64,
                    });
                }
                Ok(out)
            }
        }
    }
}

/// Refuses frames whose headers declare more than `expected` decoded bytes in all (sizes
/// summed over concatenated frames), naming the declared size: a clearer error than the
/// decompressor's "destination too small". Frames without a declared size pass; the
/// fixed-size destination bounds them.
fn check_declared(encoded: &[u8], expected: usize, key: &str) -> Result<(), CodecError> {
    match zstd::zstd_safe::find_decompressed_size(encoded) {
        Ok(Some(declared)) if declared > expected as u64 => Err(CodecError::WrongSize {
            key: format!("{key} (zstd frame content size)"),
            expected: expected as u64,
            got: declared,
        }),
        _ => Ok(()),
    }
}

/// Refuses frames too short to decode to `expected` bytes (see
/// [`ZSTD_MAX_RATIO`](super::bounds::ZSTD_MAX_RATIO)), before a buffer of that size exists.
fn check_justified(encoded: &[u8], expected: usize, key: &str) -> Result<(), CodecError> {
    let most = BytesCodecKind::Zstd
        .max_decoded(encoded.len() as u64)
        .unwrap_or(u64::MAX);
    if most < expected as u64 {
        return Err(CodecError::StoredTooSmall {
            key: key.to_string(),
            size: encoded.len() as u64,
            decoded: expected as u64,
            max_decoded: most,
        });
    }
    Ok(())
}

impl DirectChain {
    /// Encodes a chunk's C-order native-endian bytes (the caller checked [`Self::applies`]):
    /// raw bytes as they are; zstd with this thread's reused compression context, giving
    /// the frame zarrs' `zstd` codec writes (same level, checksum and content size; zarrs
    /// creates a context per chunk, measured at 6% of a whole-array write's CPU time).
    /// `None` when the chain has no direct encoder (a zstd level zarrflow cannot read).
    /// The encoded chunk lives in a recycled slab ([`super::slab`]).
    pub(crate) fn encode(self, decoded: &[u8]) -> Option<Result<Bytes, CodecError>> {
        match self {
            DirectChain::Raw { .. } => Some(slab::write_chunk(decoded.len(), |out| {
                out.extend_from_slice(decoded);
                Ok(())
            })),
            DirectChain::Zstd {
                level: Some(level),
                checksum,
                ..
            } => Some(compress_zstd(decoded, level, checksum)),
            DirectChain::Zstd { level: None, .. } => None,
        }
    }
}

/// Compresses `decoded` into one zstd frame at `level`, with a checksum if asked, with
/// this thread's compression context, into this thread's slab.
fn compress_zstd(decoded: &[u8], level: i32, checksum: bool) -> Result<Bytes, CodecError> {
    let failed = |e: std::io::Error| CodecError::Codec {
        operation: "encode",
        key: "chunk".to_string(),
        source: Box::new(zarrs::array::CodecError::from(e)),
    };
    let bound = zstd::zstd_safe::compress_bound(decoded.len());
    slab::write_chunk(bound, |out| {
        with_context(
            &COMPRESSOR,
            || zstd::bulk::Compressor::new(level),
            |c| {
                c.set_compression_level(level)?;
                c.include_checksum(checksum)?;
                c.compress_to_buffer(decoded, &mut FreeTail(out))
            },
        )
        .map(drop)
    })
    .map_err(failed)
}

/// zstd's view of a slab's free tail: empty, with room for the frame's worst case.
struct FreeTail<'a>(&'a mut BytesMut);

// SAFETY: zstd writes at most `capacity()` bytes from `as_mut_ptr()`, then calls
// `filled_until(n)` with the `n <= capacity()` bytes it wrote (zstd-safe asserts the bound).
#[allow(unsafe_code)]
unsafe impl zstd::zstd_safe::WriteBuf for FreeTail<'_> {
    fn as_slice(&self) -> &[u8] {
        self.0
    }

    fn capacity(&self) -> usize {
        self.0.capacity()
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        // a pointer to the spare capacity (through the buffer's empty slice it would be a
        // pointer to nothing)
        self.0.spare_capacity_mut().as_mut_ptr().cast()
    }

    unsafe fn filled_until(&mut self, n: usize) {
        assert!(
            n <= self.0.capacity(),
            "zstd reported writing past the buffer"
        );
        // SAFETY: the caller initialized the first `n <= capacity()` bytes
        unsafe { self.0.set_len(n) }
    }
}

/// Decompresses zstd frames into the spare capacity of `out` with this thread's context;
/// output that does not fit is an error. Returns the bytes written.
pub(crate) fn decompress_zstd(
    encoded: &[u8],
    out: &mut Vec<u8>,
    key: &str,
) -> Result<usize, CodecError> {
    with_decompressor(key, |d| d.decompress_to_buffer(encoded, out))
}

thread_local! {
    /// This thread's zstd compression context, created on first use.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(None) };
    /// This thread's zstd decompression context, created on first use.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Runs `f` with this thread's zstd decompressor; a failure is a decode error of `key`.
fn with_decompressor(
    key: &str,
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<usize>,
) -> Result<usize, CodecError> {
    let failed = |e: std::io::Error| CodecError::Codec {
        operation: "decode",
        key: key.to_string(),
        source: Box::new(zarrs::array::CodecError::from(e)),
    };
    with_context(&DECOMPRESSOR, zstd::bulk::Decompressor::new, f).map_err(failed)
}

/// Runs `f` with this thread's context in `slot`, made by `new` on first use. A re-entrant
/// call (impossible today) would find the context borrowed: it uses a fresh one rather than
/// fail.
fn with_context<C: 'static, R>(
    slot: &'static std::thread::LocalKey<RefCell<Option<C>>>,
    new: impl FnOnce() -> std::io::Result<C>,
    f: impl FnOnce(&mut C) -> std::io::Result<R>,
) -> std::io::Result<R> {
    slot.with(|cell| {
        let Ok(mut kept) = cell.try_borrow_mut() else {
            return f(&mut new()?);
        };
        let context = match kept.as_mut() {
            Some(c) => c,
            None => kept.insert(new()?),
        };
        f(context)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;
    use zarrs::array::codec::ZstdCodec;
    use zarrs::array::{BytesToBytesCodecTraits, CodecOptions};

    fn chain(json: &str) -> Option<DirectChain> {
        let codecs: Vec<MetadataV3> = serde_json::from_str(json).unwrap();
        DirectChain::of(&codecs)
    }

    #[test]
    fn zstd_level_and_checksum_come_from_the_configuration() {
        let c = chain(
            r#"[{"name":"bytes","configuration":{"endian":"little"}},
                {"name":"zstd","configuration":{"level":-3,"checksum":true}}]"#,
        );
        assert!(matches!(
            c,
            Some(DirectChain::Zstd {
                level: Some(-3),
                checksum: true,
                ..
            })
        ));
        let unreadable = chain(
            r#"[{"name":"bytes","configuration":{"endian":"little"}},
                {"name":"zstd","configuration":{"level":"high","checksum":false}}]"#,
        )
        .unwrap();
        assert!(unreadable.encode(b"abc").is_none(), "left to zarrs");
    }

    #[test]
    fn direct_zstd_frames_are_the_frames_zarrs_writes() {
        // repetitive, random and empty chunks, through one reused context in turn
        let mut random = Vec::with_capacity(70_000);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..70_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            random.push((x >> 56) as u8);
        }
        let repetitive: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
        for data in [&repetitive[..], &random[..], &[][..]] {
            for level in [-5, 0, 1, 3, 9] {
                for checksum in [false, true] {
                    let ours = DirectChain::Zstd {
                        native: true,
                        level: Some(level),
                        checksum,
                    }
                    .encode(data)
                    .unwrap()
                    .unwrap();
                    let theirs = ZstdCodec::new(level, checksum)
                        .encode(Cow::Borrowed(data), &CodecOptions::default())
                        .unwrap();
                    assert_eq!(ours, theirs.as_ref(), "level {level}, checksum {checksum}");
                }
            }
        }
    }
}
