//! Resource bounds: selections, metadata and stored objects that would make the engine
//! allocate, loop, recurse or overflow are refused with a typed error before anything is
//! allocated, or allocate fallibly.
//!
//! Hostile cases whose failure mode is an abort (a failed allocation, a stack overflow) run
//! in a child process of this test binary under an address-space limit (`RLIMIT_AS`, see
//! [`in_child`]): before the fixes they killed the child, which fails the test with the
//! child's message; after them the child passes. Cases about memory use report and bound
//! the child's peak resident set (`VmHWM`).

use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::codec::CodecError;
use zarrflow::hierarchy::HierarchyError;
use zarrflow::index::Selection;
use zarrflow::metadata::{ArrayMetadata, ArraySpec, MetadataError};
use zarrflow::store::{Store, StoreKey};

// ---------------------------------------------------------------------------------------
// Child processes under an address-space limit

/// The variable naming the case a child process runs.
const CHILD_CASE: &str = "ZARRFLOW_BOUNDS_CHILD";

/// Runs `case` in a child process of this test binary (`NAME --exact`) whose address space
/// is limited to `limit` bytes, and fails unless the child passes. In the child (the
/// variable [`CHILD_CASE`] names the case) the limit is set and `case` runs; an abort there
/// (a failed allocation, a stack overflow) kills the child and fails the parent's test with
/// the child's standard error.
fn in_child(name: &str, limit: u64, case: impl FnOnce()) {
    if std::env::var(CHILD_CASE).as_deref() == Ok(name) {
        limit_address_space(limit);
        case();
        eprintln!("{name}: peak resident set {} MiB", peak_rss() >> 20);
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_CASE, name)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} (child limited to {} MiB of address space): {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        limit >> 20,
        out.status
    );
    eprint!("{stderr}");
}

#[allow(unsafe_code)]
fn limit_address_space(limit: u64) {
    let lim = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: setrlimit reads the struct passed by reference; no other effect on memory.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) };
    assert_eq!(rc, 0, "setrlimit(RLIMIT_AS)");
}

/// Peak resident set of this process in bytes (Linux `VmHWM`; 0 elsewhere).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb << 10)
}

/// One GiB: the address-space limit of the children (a test binary with a runtime needs
/// about 300 MiB of it; every hostile case asks for more than 1 GiB).
const GIB: u64 = 1 << 30;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// Hostile arrays

const BYTES: &str = r#"{"name":"bytes","configuration":{"endian":"little"}}"#;
const ZSTD: &str = r#"{"name":"zstd","configuration":{"level":1,"checksum":false}}"#;
const GZIP: &str = r#"{"name":"gzip","configuration":{"level":1}}"#;
const BLOSC: &str = r#"{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":2,"blocksize":0}}"#;
const LZ4: &str = r#"{"name":"numcodecs.lz4","configuration":{"acceleration":1}}"#;
const INDEX: &str = r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#;

/// An array `zarr.json` (regular grid) written by hand: `codecs` is the JSON list.
fn array_doc(shape: &str, dtype: &str, chunk: &str, codecs: &str) -> String {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":{shape},"data_type":"{dtype}",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{chunk}}}}},
        "chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":{codecs}}}"#
    )
}

/// `sharding_indexed` with inner chunks of `inner` through the inner codec list `codecs`.
fn sharding(inner: &str, codecs: &str) -> String {
    format!(
        r#"{{"name":"sharding_indexed","configuration":{{"chunk_shape":{inner},"codecs":{codecs},"index_codecs":{INDEX}}}}}"#
    )
}

/// A memory store holding `doc` as the root `zarr.json` and `objects`, opened as an array.
async fn hostile(doc: &str, objects: &[(&str, Vec<u8>)]) -> Array {
    let store = Store::memory();
    store
        .put(
            &StoreKey::new("zarr.json").unwrap(),
            doc.as_bytes().to_vec().into(),
        )
        .await
        .unwrap();
    for (k, v) in objects {
        store
            .put(&StoreKey::new(*k).unwrap(), Bytes::from(v.clone()))
            .await
            .unwrap();
    }
    Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap()
}

async fn read(array: &Array, sel: &str) -> Result<Vec<u8>, ArrayError> {
    array
        .view()
        .get(&Selection::parse(sel).unwrap())?
        .read_bytes()
        .await
}

fn codec_error(e: &ArrayError) -> Option<&CodecError> {
    match e {
        ArrayError::Codec(c) => Some(c),
        ArrayError::Hierarchy(HierarchyError::Codec(c)) => Some(c),
        _ => None,
    }
}

/// The read fails with a typed codec error naming `key`.
async fn assert_refused(array: &Array, sel: &str, key: &str, what: &str) {
    let err = read(array, sel)
        .await
        .expect_err(&format!("{what}: the read must fail"));
    eprintln!("{what} [{sel}]: {err}");
    assert!(codec_error(&err).is_some(), "{what}: {err:?}");
    assert!(err.to_string().contains(key), "{what}: {err} names {key}");
}

/// A zstd frame whose header declares 2^60 content bytes.
fn zstd_frame_declaring_2_pow_60() -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    f.extend_from_slice(&(1u64 << 60).to_le_bytes());
    f.extend_from_slice(&[0x21, 0x00, 0x00, 1, 2, 3, 4]);
    f
}

/// A gzip member whose deflate stream decodes to `1 + 258 * runs` zero bytes (one literal,
/// then `runs` copies of length 258 at distance 1 in one fixed-Huffman block: 13 bits per
/// 258 bytes). Its CRC is wrong, which a decoder notices only at the end.
fn gzip_bomb(runs: u64) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        /// `len` bits of `v`, least significant first.
        fn put(&mut self, v: u64, len: u32) {
            self.acc |= v << self.n;
            self.n += len;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// A Huffman code of `len` bits, most significant first.
        fn code(&mut self, code: u64, len: u32) {
            let rev = (0..len).fold(0, |r, i| r | (((code >> i) & 1) << (len - 1 - i)));
            self.put(rev, len);
        }
    }
    let mut b = Bits {
        out: vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff],
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // BFINAL
    b.put(1, 2); // fixed Huffman
    b.code(0b0011_0000, 8); // literal 0
    for _ in 0..runs {
        b.code(0b1100_0101, 8); // length 258
        b.code(0, 5); // distance 1
    }
    b.code(0, 7); // end of block
    b.put(0, 7);
    let size = (1 + 258 * runs) as u32;
    b.out.extend_from_slice(&[0, 0, 0, 0]);
    b.out.extend_from_slice(&size.to_le_bytes());
    b.out
}

/// A gzip member decoding to about 2 GiB (13 MB compressed).
fn gzip_bomb_2_gib() -> Vec<u8> {
    gzip_bomb((2 << 30) / 258)
}

// ---------------------------------------------------------------------------------------
// 1. Decoded sizes of every bytes→bytes codec, wherever it sits in the chain

/// A zstd frame declaring 2^60 bytes applied to the whole shard (`zstd` after
/// `sharding_indexed`), and after a nested sharding codec. Before: zarrs allocated the
/// declared size (abort). After: `CodecError::WrongSize` naming the shard.
#[test]
fn zstd_after_sharding_declaring_2_pow_60_bytes_is_refused() {
    in_child(
        "zstd_after_sharding_declaring_2_pow_60_bytes_is_refused",
        GIB,
        || {
            runtime().block_on(async {
                let inner = format!("[{BYTES}]");
                let doc = array_doc(
                    "[8,8]",
                    "uint16",
                    "[8,8]",
                    &format!("[{},{ZSTD}]", sharding("[4,4]", &inner)),
                );
                let a = hostile(&doc, &[("c/0/0", zstd_frame_declaring_2_pow_60())]).await;
                assert_refused(&a, "...", "c/0/0", "zstd after sharding").await;
                assert_refused(&a, "0,0", "c/0/0", "zstd after sharding, one cell").await;
                // nested: the inner chunks are shards whose bytes go through zstd
                let nested_inner = format!("[{},{ZSTD}]", sharding("[2,2]", &inner));
                let doc = array_doc(
                    "[8,8]",
                    "uint16",
                    "[8,8]",
                    &format!("[{}]", sharding("[4,4]", &nested_inner)),
                );
                let meta = ArrayMetadata::parse(doc.as_bytes(), "k").unwrap();
                let sh = meta.codecs().sharding().unwrap();
                let frame = zstd_frame_declaring_2_pow_60();
                let shard = sh
                    .assemble_shard(&[8, 8], &[Some(&frame), None, None, None])
                    .unwrap()
                    .unwrap();
                let a = hostile(&doc, &[("c/0/0", shard)]).await;
                for sel in ["...", "0:4,0:4", "1,1"] {
                    assert_refused(&a, sel, "c/0/0 inner chunk [0, 0]", "nested zstd").await;
                }
            })
        },
    );
}

/// gzip bombs as an inner chunk, an unsharded chunk and a whole shard (gzip after
/// `sharding_indexed`). One of 13 MB decoding to 2 GiB is refused from its size (more than
/// any encoding of the chunk takes); one of 2.3 MB (within that bound, for chunks of 2 MiB)
/// decoding to 360 MB is decoded only up to the chunk's size. Before: zarrs decoded all of
/// it and then compared sizes (600 MiB of peak memory under the limit, and only because
/// the allocation of more failed).
#[test]
fn gzip_bombs_stop_at_the_decoded_size() {
    in_child("gzip_bombs_stop_at_the_decoded_size", GIB, || {
        runtime().block_on(async {
            let gz = format!("[{BYTES},{GZIP}]");
            let inner = |chunk: &[u8], doc: &str| {
                let meta = ArrayMetadata::parse(doc.as_bytes(), "k").unwrap();
                meta.codecs()
                    .sharding()
                    .unwrap()
                    .assemble_shard(&[2048, 1024], &[Some(chunk), None])
                    .unwrap()
                    .unwrap()
            };
            for bomb in [gzip_bomb_2_gib(), gzip_bomb(1_400_000)] {
                // an inner chunk
                let doc = array_doc(
                    "[2048,1024]",
                    "uint16",
                    "[2048,1024]",
                    &format!("[{}]", sharding("[1024,1024]", &gz)),
                );
                let a = hostile(&doc, &[("c/0/0", inner(&bomb, &doc))]).await;
                for sel in ["...", "0:1024,:", "1,1"] {
                    assert_refused(&a, sel, "c/0/0", "gzip inner chunk").await;
                }
                // an unsharded chunk
                let doc = array_doc("[2048,1024]", "uint16", "[1024,1024]", &gz);
                let a = hostile(&doc, &[("c/0/0", bomb.clone())]).await;
                for sel in ["...", "0:1024,:", "1,1"] {
                    assert_refused(&a, sel, "c/0/0", "gzip chunk").await;
                }
                // the whole shard
                let doc = array_doc(
                    "[2048,1024]",
                    "uint16",
                    "[2048,1024]",
                    &format!(
                        "[{},{GZIP}]",
                        sharding("[1024,1024]", &format!("[{BYTES}]"))
                    ),
                );
                let a = hostile(&doc, &[("c/0/0", bomb)]).await;
                assert_refused(&a, "...", "c/0/0", "gzip after sharding").await;
            }
        });
        // the bombs and their copies take about 50 MiB
        assert!(peak_rss() < 200 << 20, "peak RSS {} MiB", peak_rss() >> 20);
    });
}

/// An `.xz` stream of zeros (numcodecs' default `lzma` format) decoding to `bytes` bytes.
fn lzma_bomb(bytes: u64) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    liblzma::read::XzEncoder::new(std::io::repeat(0).take(bytes), 0)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// lzma bombs (numcodecs' `lzma`, which has no size header and ratios in the thousands)
/// as an unsharded chunk and as an inner chunk: a stream of under 200 KiB decoding to 256 MiB for a
/// chunk of 2 MiB is decoded only up to the chunk's size, and a stream whose dictionary
/// needs more than `codec::lzma::LZMA_MEMLIMIT` is refused before liblzma allocates it.
#[test]
fn lzma_bombs_stop_at_the_decoded_size() {
    in_child("lzma_bombs_stop_at_the_decoded_size", GIB, || {
        runtime().block_on(async {
            let lzma = r#"{"name":"numcodecs.lzma","configuration":{}}"#;
            let bomb = lzma_bomb(256 << 20);
            assert!(bomb.len() < 200 << 10, "{}", bomb.len());
            let doc = array_doc(
                "[2048,1024]",
                "uint8",
                "[2048,1024]",
                &format!("[{BYTES},{lzma}]"),
            );
            let a = hostile(&doc, &[("c/0/0", bomb.clone())]).await;
            for sel in ["...", "0:1024,:", "1,1"] {
                assert_refused(&a, sel, "c/0/0", "lzma chunk").await;
            }
            let doc = array_doc(
                "[2048,1024]",
                "uint8",
                "[2048,1024]",
                &format!("[{}]", sharding("[2048,512]", &format!("[{BYTES},{lzma}]"))),
            );
            let meta = ArrayMetadata::parse(doc.as_bytes(), "k").unwrap();
            let shard = meta
                .codecs()
                .sharding()
                .unwrap()
                .assemble_shard(&[2048, 1024], &[Some(&bomb), None])
                .unwrap()
                .unwrap();
            let a = hostile(&doc, &[("c/0/0", shard)]).await;
            for sel in ["...", "0:8,0:8", "1,1"] {
                assert_refused(&a, sel, "c/0/0", "lzma inner chunk").await;
            }
            // `.lzma` ("alone") declaring a 1.5 GiB dictionary
            let mut alone = vec![0x5d];
            alone.extend_from_slice(&(3u32 << 29).to_le_bytes());
            alone.extend_from_slice(&u64::MAX.to_le_bytes());
            alone.extend_from_slice(&[0; 16]);
            let lzma = r#"{"name":"numcodecs.lzma","configuration":{"format":2}}"#;
            let doc = array_doc("[64]", "uint8", "[64]", &format!("[{BYTES},{lzma}]"));
            let a = hostile(&doc, &[("c/0", alone)]).await;
            let err = read(&a, "...").await.unwrap_err();
            assert!(err.to_string().contains("memory limit"), "{err}");
        });
        assert!(peak_rss() < 200 << 20, "peak RSS {} MiB", peak_rss() >> 20);
    });
}

/// A blosc header claiming almost 2^31 decoded bytes (blosc allows up to 2^31 − 17) for a chunk of
/// 32 bytes, as a chunk and as an inner chunk. Before: zarrs reserved the claimed size
/// (an abort under the limit). After: refused from the header.
#[test]
fn blosc_headers_claiming_more_than_the_chunk_are_refused() {
    in_child(
        "blosc_headers_claiming_more_than_the_chunk_are_refused",
        GIB,
        || {
            runtime().block_on(size_headers_claiming_more_are_refused(
                zarrflow::metadata::CodecSpec::blosc("lz4", 5, 2),
                BLOSC,
                4..8,
                &[0x7fff_ff00],
                "blosc",
            ))
        },
    );
}

/// numcodecs' lz4 declares the decoded size in a 4-byte header: a header claiming 2 GiB
/// for a 32-byte chunk (or block), or one byte more or less than it holds, is refused
/// before anything of that size is allocated, unsharded and inside a shard.
#[test]
fn lz4_headers_claiming_more_than_the_chunk_are_refused() {
    in_child(
        "lz4_headers_claiming_more_than_the_chunk_are_refused",
        GIB,
        || {
            runtime().block_on(size_headers_claiming_more_are_refused(
                zarrflow::metadata::CodecSpec::new(
                    "numcodecs.lz4",
                    serde_json::json!({"acceleration": 1}),
                ),
                LZ4,
                0..4,
                &[0x7fff_ff00, 33, 31],
                "lz4",
            ))
        },
    );
}

/// A 4x4 uint16 chunk of 7s encoded by `codec` (`codec_json` as written in `zarr.json`),
/// whose little-endian size header at `header` is made to declare each of `declared`: every
/// read of it fails with a typed codec error naming the chunk, unsharded and as the inner
/// chunk of a shard, while the shard's untouched inner chunk still reads.
async fn size_headers_claiming_more_are_refused(
    codec: zarrflow::metadata::CodecSpec,
    codec_json: &str,
    header: std::ops::Range<usize>,
    declared: &[u32],
    what: &str,
) {
    let store = Store::memory();
    let spec = ArraySpec::new(vec![8, 8], "uint16")
        .shard_shape(vec![4, 4])
        .codecs([zarrflow::metadata::CodecSpec::bytes(), codec]);
    let a = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    a.view().write_scalar(7u16).await.unwrap();
    let key = StoreKey::new("c/0/0").unwrap();
    let good = store.get(&key).await.unwrap().to_vec();
    assert_eq!(read(&a, "0:4,0:4").await.unwrap(), [7u8, 0].repeat(16));
    let claiming = |n: u32| {
        let mut chunk = good.clone();
        chunk[header.clone()].copy_from_slice(&n.to_le_bytes());
        chunk
    };
    for &n in declared {
        store.put(&key, Bytes::from(claiming(n))).await.unwrap();
        for sel in ["...", "0:4,0:4", "1,1"] {
            assert_refused(&a, sel, "c/0/0", &format!("{what} chunk")).await;
        }
    }
    let doc = array_doc(
        "[8,8]",
        "uint16",
        "[8,8]",
        &format!(
            "[{}]",
            sharding("[4,4]", &format!("[{BYTES},{codec_json}]"))
        ),
    );
    let meta = ArrayMetadata::parse(doc.as_bytes(), "k").unwrap();
    let bad = claiming(declared[0]);
    let shard = meta
        .codecs()
        .sharding()
        .unwrap()
        .assemble_shard(&[8, 8], &[Some(&bad), Some(&good), None, None])
        .unwrap()
        .unwrap();
    let a = hostile(&doc, &[("c/0/0", shard)]).await;
    assert_eq!(read(&a, "0:4,4:8").await.unwrap(), [7u8, 0].repeat(16));
    for sel in ["...", "0:4,0:4", "1,1"] {
        let label = format!("{what} inner chunk");
        assert_refused(&a, sel, "c/0/0 inner chunk [0, 0]", &label).await;
    }
}

/// Chunks declared huge (2^40 bytes) whose stored objects are a few bytes: no buffer of the
/// declared size is allocated before the stored bytes can justify it. Before: a read of a
/// few cells allocated the declared size first (abort). After: `CodecError::WrongSize`
/// (raw bytes, crc32c: the exact size is known) or `CodecError::StoredTooSmall` (8 bytes of
/// zstd decode to at most 256 KiB, of gzip to at most 9 KiB).
#[test]
fn tiny_objects_of_huge_chunks_are_refused_before_allocation() {
    in_child(
        "tiny_objects_of_huge_chunks_are_refused_before_allocation",
        GIB,
        || {
            runtime().block_on(async {
                let tera = "[1099511627776]";
                for codecs in [
                    format!("[{BYTES}]"),
                    format!("[{BYTES},{ZSTD}]"),
                    format!("[{BYTES},{GZIP}]"),
                    format!("[{BYTES},{LZ4}]"),
                    format!("[{BYTES},{{\"name\":\"crc32c\"}}]"),
                ] {
                    let doc = array_doc(tera, "uint8", tera, &codecs);
                    let a = hostile(&doc, &[("c/0", vec![1, 2, 3, 4, 5, 6, 7, 8])]).await;
                    for sel in ["0:10", "5", "::1000000000"] {
                        let err = read(&a, sel).await.unwrap_err();
                        assert!(
                            matches!(
                                codec_error(&err),
                                Some(
                                    CodecError::WrongSize { .. }
                                        | CodecError::StoredTooSmall { .. }
                                )
                            ),
                            "{codecs} [{sel}]: {err:?}"
                        );
                    }
                }
            })
        },
    );
}

/// Allocations a valid array can legitimately need (writing one cell of a chunk of 2^40
/// bytes; reading a cell of a 2^40-byte shard decoded whole through its pipeline) are
/// fallible. Before: the process aborted. After: `CodecError::OutOfMemory`.
#[test]
fn legitimately_huge_buffers_are_allocated_fallibly() {
    in_child(
        "legitimately_huge_buffers_are_allocated_fallibly",
        GIB,
        || {
            runtime().block_on(async {
                let tera = "[1099511627776]";
                let doc = array_doc(tera, "uint8", tera, &format!("[{BYTES}]"));
                let a = hostile(&doc, &[]).await;
                let err = a
                    .view()
                    .get(&Selection::parse("5").unwrap())
                    .unwrap()
                    .write_scalar(1u8)
                    .await
                    .unwrap_err();
                assert!(
                    matches!(codec_error(&err), Some(CodecError::OutOfMemory { .. })),
                    "{err:?}"
                );
                // a transposed sharded array (decoded whole through the pipeline) whose
                // 2^40-byte shard holds only its index
                let doc = array_doc(
                    "[1048576,1048576]",
                    "uint8",
                    "[1048576,1048576]",
                    &format!(
                        r#"[{{"name":"transpose","configuration":{{"order":[1,0]}}}},{}]"#,
                        sharding("[1024,1024]", &format!("[{BYTES}]"))
                    ),
                );
                let meta = ArrayMetadata::parse(doc.as_bytes(), "k").unwrap();
                let codec = meta
                    .codecs()
                    .sharding()
                    .unwrap()
                    .index_codec(&[1 << 20, 1 << 20])
                    .unwrap();
                let index = codec
                    .encode(&zarrflow::codec::ShardIndex::new_empty(&[1024, 1024]))
                    .unwrap();
                let a = hostile(&doc, &[("c/0/0", index)]).await;
                let err = read(&a, "0,0").await.unwrap_err();
                assert!(
                    matches!(codec_error(&err), Some(CodecError::OutOfMemory { .. })),
                    "{err:?}"
                );
            })
        },
    );
}

// ---------------------------------------------------------------------------------------
// 5. Objects larger than any valid encoding of their chunk

/// A directory store holding a regular array of 8×8 `uint16` in chunks (or shards) of 4×4.
async fn local_array(dir: &std::path::Path, sharded: bool) -> Array {
    let store = Store::open(dir.to_str().unwrap(), Default::default()).unwrap();
    let spec = ArraySpec::new(vec![8, 8], "uint16").shard_shape(vec![4, 4]);
    let spec = if sharded {
        spec.inner_chunk_shape(vec![2, 2])
            .codecs([zarrflow::metadata::CodecSpec::bytes()])
    } else {
        spec
    };
    let a = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    a.view().write_scalar(3u16).await.unwrap();
    a
}

/// A sparse file of `size` bytes whose first bytes are `head` and last bytes `tail`.
fn sparse_file(path: &std::path::Path, size: u64, head: &[u8], tail: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::create(path).unwrap();
    f.set_len(size).unwrap();
    f.write_all_at(head, 0).unwrap();
    f.write_all_at(tail, size - tail.len() as u64).unwrap();
}

/// A stored chunk of 10 GB (a sparse local file) for a chunk of 32 bytes. Before: the
/// whole object was read into memory (an abort under the limit). After: refused from its
/// size, before its bytes are read (`CodecError::WrongSize`).
#[test]
fn a_10_gb_chunk_is_refused_before_it_is_read() {
    in_child("a_10_gb_chunk_is_refused_before_it_is_read", GIB, || {
        runtime().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let a = local_array(dir.path(), false).await;
            sparse_file(&dir.path().join("c/1/1"), 10 << 30, b"garbage", b"end");
            for sel in ["...", "4:8,4:8", "5,5"] {
                assert_refused(&a, sel, "c/1/1", "10 GB chunk").await;
            }
            // a write that must read the chunk first fails the same way
            let err = a
                .view()
                .get(&Selection::parse("5,5").unwrap())
                .unwrap()
                .write_scalar(1u16)
                .await
                .unwrap_err();
            assert!(codec_error(&err).is_some(), "{err:?}");
        })
    });
}

/// A 10 GB shard (a sparse local file) whose index locates an inner chunk of 5 GB, for
/// inner chunks of 8 bytes. Before: the whole-shard read copied the 5 GB entry into a
/// buffer (an abort under the limit). After: `CodecError::ShardEntryTooLarge` when the
/// index is decoded. A 10 GB shard whose valid entries lie far apart (a hole of 10 GB) is
/// read without allocating its size.
#[test]
fn shard_entries_larger_than_any_encoding_are_refused() {
    in_child(
        "shard_entries_larger_than_any_encoding_are_refused",
        GIB,
        || {
            runtime().block_on(async {
                let dir = tempfile::tempdir().unwrap();
                let a = local_array(dir.path(), true).await;
                let sh = a.metadata().codecs().sharding().unwrap();
                let codec = sh.index_codec(&[4, 4]).unwrap();
                let size: u64 = 10 << 30;
                let index_at = size - codec.encoded_size();
                let entries = |first: (u64, u64)| {
                    let mut e = vec![first.0, first.1];
                    for i in 1..4u64 {
                        e.extend([i * 8, 8]);
                    }
                    zarrflow::codec::ShardIndex::from_entries(&[2, 2], e).unwrap()
                };
                let body = [3u8, 0].repeat(16);
                // inner chunk [0, 0] claims 5 GB
                let huge = codec
                    .encode(&entries((index_at - (5 << 30), 5 << 30)))
                    .unwrap();
                sparse_file(&dir.path().join("c/1/1"), size, &body, &huge);
                for sel in ["...", "4:8,4:8", "4,4"] {
                    let err = read(&a, sel).await.unwrap_err();
                    assert!(
                        matches!(
                            codec_error(&err),
                            Some(CodecError::ShardEntryTooLarge { .. })
                        ),
                        "[{sel}]: {err:?}"
                    );
                }
                // inner chunk [0, 0] lies 10 GB after the others: a hole, read fine
                let far = codec.encode(&entries((index_at - 8, 8))).unwrap();
                let mut tail = [3u8, 0].repeat(4);
                tail.extend_from_slice(&far);
                sparse_file(&dir.path().join("c/1/1"), size, &body, &tail);
                let all = read(&a, "4:8,4:8").await.unwrap();
                assert!(all.chunks(2).all(|c| c == [3, 0]), "the hole's shard reads");
            })
        },
    );
}

// ---------------------------------------------------------------------------------------
// 2. Arithmetic and compact grids at parse

/// A rectilinear `zarr.json` of a few hundred bytes declaring 2^26 edges in each of eight
/// dimensions. Before: the edges were expanded to one integer each (8 × 512 MiB, an abort
/// under the limit). After: the grid stays in run-length form and reads.
#[test]
fn rectilinear_grids_stay_compact() {
    in_child("rectilinear_grids_stay_compact", GIB, || {
        runtime().block_on(async {
            let n = 1u64 << 26;
            let shape = format!("[{}]", vec![n.to_string(); 8].join(","));
            let run = format!("[[1,{n}]]");
            let doc = format!(
                r#"{{"zarr_format":3,"node_type":"array","shape":{shape},"data_type":"uint8",
                "chunk_grid":{{"name":"rectilinear","configuration":{{"kind":"inline",
                "chunk_shapes":[{}]}}}},
                "chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":[{BYTES}]}}"#,
                vec![run; 8].join(",")
            );
            assert!(doc.len() < 600);
            let a = hostile(&doc, &[]).await;
            assert_eq!(a.metadata().chunk_grid().grid_shape(a.shape()), vec![n; 8]);
            assert_eq!(read(&a, "5,6,7,8,9,10,11,12").await.unwrap(), vec![0]);
            // 10^12 edges of 1 in one dimension: compact too
            let t = 1_000_000_000_000u64;
            let doc = format!(
                r#"{{"zarr_format":3,"node_type":"array","shape":[{t}],"data_type":"uint8",
                "chunk_grid":{{"name":"rectilinear","configuration":{{"kind":"inline",
                "chunk_shapes":[[[1,{t}]]]}}}},
                "chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":[{BYTES}]}}"#
            );
            let a = hostile(&doc, &[]).await;
            assert_eq!(a.metadata().chunk_grid().grid_shape(a.shape()), vec![t]);
            assert_eq!(read(&a, "-3:").await.unwrap(), vec![0; 3]);
        })
    });
}

/// Chunk byte sizes are checked for every grid kind: a rectilinear chunk of 2^32 × 2^32
/// `uint64` elements (2^67 bytes), unsharded, is refused at parse. Before: it parsed, and a
/// read of one cell overflowed the chunk size (a panic in debug builds).
#[test]
fn rectilinear_chunks_whose_size_overflows_are_refused_at_parse() {
    let e = 1u64 << 32;
    for codecs in [
        format!("[{BYTES}]"),
        format!("[{}]", sharding("[1,1]", &format!("[{BYTES}]"))),
    ] {
        let doc = format!(
            r#"{{"zarr_format":3,"node_type":"array","shape":[{e},{e}],"data_type":"uint64",
            "chunk_grid":{{"name":"rectilinear","configuration":{{"kind":"inline",
            "chunk_shapes":[[1,{e}],[{e}]]}}}},
            "chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":{codecs}}}"#
        );
        let err = ArrayMetadata::parse(doc.as_bytes(), "rect/zarr.json").unwrap_err();
        assert!(err.to_string().contains("rect/zarr.json"), "{err}");
    }
}

/// Every spec `ArraySpec::build` accepts is created and opens again (`create` and `open`
/// share one validation). Before: a shape extent beyond `i64::MAX` or a rank above 32 was
/// built and written, and only the array layer refused it, after `create` had written it.
mod create_open_consistency {
    use super::*;
    use proptest::prelude::*;

    fn extent() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..12,
            Just(1u64 << 40),
            Just(i64::MAX as u64),
            Just(i64::MAX as u64 + 1),
            Just(u64::MAX),
        ]
    }

    fn spec() -> impl Strategy<Value = ArraySpec> {
        (
            0usize..36,
            any::<u64>(),
            any::<u8>(),
            prop::sample::select(vec![
                "uint8",
                "int16",
                "float32",
                "complex128",
                "r24",
                "bool",
            ]),
        )
            .prop_flat_map(|(rank, seed, flags, dtype)| {
                (
                    prop::collection::vec(extent(), rank),
                    prop::collection::vec(extent(), rank),
                    prop::collection::vec(1u64..4, rank),
                    Just((seed, flags, dtype)),
                )
            })
            .prop_map(|(shape, chunks, inner, (_, flags, dtype))| {
                let mut s = ArraySpec::new(shape, dtype);
                if flags & 1 == 1 {
                    s = s.shard_shape(chunks.clone());
                }
                if flags & 2 == 2 {
                    let shard: Vec<u64> = chunks
                        .iter()
                        .zip(&inner)
                        .map(|(c, i)| (*c.max(&1)).saturating_mul(*i))
                        .collect();
                    s = s
                        .shard_shape(shard)
                        .inner_chunk_shape(chunks.iter().map(|c| *c.max(&1)).collect::<Vec<_>>());
                }
                if flags & 4 == 4 {
                    s = s.attribute("note", "x".repeat(64));
                }
                s
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn every_built_spec_is_created_and_opens(spec in spec()) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if spec.build().is_err() {
                    return Ok(());
                }
                let store = Store::memory();
                let created = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default()).await;
                prop_assert!(created.is_ok(), "{:?}: create: {:?}", spec, created.err());
                let opened = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default()).await;
                prop_assert!(opened.is_ok(), "{:?}: open: {:?}", spec, opened.err());
                Ok(())
            })?;
        }
    }
}

// ---------------------------------------------------------------------------------------
// 3. Recursion

/// `sharding_indexed` nested `depth` times around `bytes`, every level with chunk shape
/// `[1]`.
fn nested_sharding(depth: usize) -> serde_json::Value {
    use serde_json::{Value, json};
    let mut codecs = json!([{"name": "bytes"}]);
    for _ in 0..depth {
        // moved in, never copied (`json!` would serialise an interpolated value)
        let mut config = serde_json::Map::new();
        config.insert("chunk_shape".into(), json!([1]));
        config.insert("codecs".into(), codecs);
        config.insert(
            "index_codecs".into(),
            json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        );
        let mut codec = serde_json::Map::new();
        codec.insert("name".into(), json!("sharding_indexed"));
        codec.insert("configuration".into(), Value::Object(config));
        codecs = Value::Array(vec![Value::Object(codec)]);
    }
    codecs
}

/// Drops a deeply nested JSON value without recursing (the test's own values must not
/// overflow the stack either).
fn drop_flat(v: serde_json::Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Array(items) => stack.extend(items),
            serde_json::Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Sharding nested deeper than `zarrflow::codec::MAX_SHARDING_DEPTH` is refused with a typed
/// error: in a `zarr.json` (20 levels; 10,000 levels exceed serde_json's nesting limit of
/// 128 and are malformed JSON) and in a spec built in code (2,000 levels). Before: 20 levels
/// parsed, and 2,000 overflowed the stack (an abort).
#[test]
fn nested_sharding_has_a_depth_limit() {
    in_child("nested_sharding_has_a_depth_limit", GIB, || {
        let doc = |depth: usize| {
            let codecs = nested_sharding(depth);
            let text = format!(
                r#"{{"zarr_format":3,"node_type":"array","shape":[1],"data_type":"uint8",
                "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[1]}}}},
                "chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":{codecs}}}"#
            );
            drop_flat(codecs);
            text
        };
        assert!(ArrayMetadata::parse(doc(3).as_bytes(), "k").is_ok());
        let err = ArrayMetadata::parse(doc(20).as_bytes(), "deep/zarr.json").unwrap_err();
        assert!(
            matches!(
                err,
                MetadataError::Codec {
                    source: CodecError::NestingTooDeep { .. },
                    ..
                }
            ),
            "{err:?}"
        );
        // 10,000 levels: text nested 30,000 deep
        let text = format!(
            r#"{{"zarr_format":3,"node_type":"array","codecs":{}{}}}"#,
            r#"[{"name":"sharding_indexed","configuration":{"codecs":"#.repeat(10_000),
            "]}}".repeat(10_000)
        );
        let err = ArrayMetadata::parse(text.as_bytes(), "deeper/zarr.json").unwrap_err();
        assert!(
            matches!(err, MetadataError::MalformedJson { .. }),
            "{err:?}"
        );
        // a spec built in code (on a thread with a large stack, so that this test's own
        // clones and drops of the value never overflow): refused before anything recurses
        // through it
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(|| {
                let mut codecs = nested_sharding(2_000);
                let outer = codecs[0].take();
                drop_flat(codecs);
                let config = outer["configuration"].clone();
                drop_flat(outer);
                let spec =
                    ArraySpec::new(vec![1], "uint8").codecs([zarrflow::metadata::CodecSpec::new(
                        "sharding_indexed",
                        config.clone(),
                    )]);
                drop_flat(config);
                let err = spec.build().unwrap_err();
                assert!(
                    matches!(
                        err,
                        MetadataError::InvalidSpec { .. } | MetadataError::Codec { .. }
                    ),
                    "{err:?}"
                );
                assert!(err.to_string().contains("nested"), "{err}");
            })
            .unwrap()
            .join()
            .unwrap();
    });
}

/// Attributes nested 100,000 deep are refused by `ArraySpec::build` before anything
/// recurses through them (the written document must open again, and serde_json's nesting
/// limit of 128 bounds what opens). Before: serialising them overflowed the stack (an
/// abort).
#[test]
fn attributes_nested_beyond_the_json_limit_are_refused() {
    in_child(
        "attributes_nested_beyond_the_json_limit_are_refused",
        GIB,
        || {
            let mut deep = serde_json::Value::from(1);
            for _ in 0..100_000 {
                deep = serde_json::Value::Array(vec![deep]);
            }
            let mut spec = ArraySpec::new(vec![4], "uint8");
            spec.attributes.insert("deep".into(), deep);
            let err = spec.build().unwrap_err();
            assert!(matches!(err, MetadataError::InvalidSpec { .. }), "{err:?}");
            assert!(err.to_string().contains("nested"), "{err}");
            drop_flat(serde_json::Value::Object(std::mem::take(
                &mut spec.attributes,
            )));
            // at the limit, it is written and opens again
            let mut ok = serde_json::Value::from(1);
            for _ in 0..100 {
                ok = serde_json::Value::Array(vec![ok]);
            }
            let spec = ArraySpec::new(vec![4], "uint8").attribute("ok", ok);
            let meta = spec.build().unwrap();
            assert!(ArrayMetadata::parse(&meta.to_json(), "k").is_ok());
        },
    );
}

/// Transform and ndsel JSON: text nested deeper than serde_json's limit (128) is
/// `invalid_json`; index arrays nested deeper than the maximum rank (32) are refused, from
/// text and from values built in code.
#[test]
fn transform_json_nesting_is_bounded() {
    use zarrflow::index::IndexTransform;
    use zarrflow::index::json::{Message, Reason, TransformJson};
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for text in [
        deep.clone(),
        format!(r#"{{"input_shape":[2],"output":[{{"index_array":{deep}}}]}}"#),
        format!(r#"{{"kind":"points","coords":{deep}}}"#),
    ] {
        let err = IndexTransform::from_json_str(&text).unwrap_err();
        assert_eq!(err.reason, Reason::InvalidJson, "{err}");
        assert!(TransformJson::parse_str(&text).is_err());
        assert!(Message::parse_str(&text).is_err());
    }
    // an index array nested 40 deep (within serde's limit): beyond the maximum rank
    let nested = format!("{}0{}", "[".repeat(40), "]".repeat(40));
    let text = format!(r#"{{"input_shape":[1],"output":[{{"index_array":{nested}}}]}}"#);
    let err = IndexTransform::from_json_str(&text).unwrap_err();
    assert_eq!(err.reason, Reason::RankMismatch, "{err}");
    // the same built in code, 10,000 deep
    let mut v = serde_json::json!(0);
    for _ in 0..10_000 {
        v = serde_json::Value::Array(vec![v]);
    }
    let mut map = serde_json::Map::new();
    map.insert("index_array".into(), v);
    let mut body = serde_json::Map::new();
    body.insert("input_shape".into(), serde_json::json!([1]));
    body.insert(
        "output".into(),
        serde_json::Value::Array(vec![serde_json::Value::Object(map)]),
    );
    let body = serde_json::Value::Object(body);
    let err = IndexTransform::from_json(&body).unwrap_err();
    assert_eq!(err.reason, Reason::RankMismatch, "{err}");
    drop_flat(body);
}

// ---------------------------------------------------------------------------------------
// 4. Metadata size caps

/// A `zarr.json` with `mib` MiB of attributes (an array of numbers, the worst case for a
/// JSON value tree).
fn big_attributes_doc(mib: usize) -> Vec<u8> {
    let mut doc = array_doc("[4]", "uint8", "[4]", &format!("[{BYTES}]")).into_bytes();
    doc.pop(); // the closing brace
    doc.extend_from_slice(br#","attributes":{"numbers":["#);
    let target = doc.len() + (mib << 20);
    while doc.len() < target {
        doc.extend_from_slice(b"1,");
    }
    doc.extend_from_slice(b"1]}}");
    doc
}

/// A 20 MiB `zarr.json` (attributes) is refused before its body is read, with the default
/// limit (`zarrflow::metadata::DEFAULT_MAX_METADATA_BYTES`, 16 MiB); with a higher limit it
/// opens, and parsing holds one value tree of the document (no copies). Before: it opened
/// and took more than 2 GiB (three copies of the tree: an abort under the limit); after:
/// about 880 MiB, 44 times this worst-case document (arrays of one-digit numbers).
#[test]
fn big_metadata_documents_are_capped() {
    in_child("big_metadata_documents_are_capped", 2 * GIB, || {
        runtime().block_on(async {
            let doc = big_attributes_doc(20);
            let store = Store::memory();
            store
                .put(&StoreKey::new("zarr.json").unwrap(), Bytes::from(doc))
                .await
                .unwrap();
            let before = peak_rss();
            let err = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    ArrayError::Hierarchy(HierarchyError::Metadata(MetadataError::TooLarge { .. }))
                ),
                "{err:?}"
            );
            let opts = ArrayOptions::default().with_max_metadata_bytes(32 << 20);
            let a = Array::open_in(&store, &StoreKey::root(), opts)
                .await
                .unwrap();
            let grown = peak_rss().saturating_sub(before);
            eprintln!(
                "opening a 20 MiB zarr.json: peak resident set grew by {} MiB",
                grown >> 20
            );
            assert!(a.attributes()["numbers"].as_array().unwrap().len() > 10 << 20);
            // one JSON value tree: 80 bytes per value with `preserve_order`, so about 44 times
            // a document of one-digit numbers (its worst case), and nothing copied
            assert!(grown < 1000 << 20, "{} MiB", grown >> 20);
        })
    });
}

/// An empty `zarr.json` (which a range request cannot read) is malformed JSON, on the memory
/// store and on the local filesystem.
#[tokio::test]
async fn an_empty_zarr_json_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    for store in [
        Store::memory(),
        Store::open(dir.path().to_str().unwrap(), Default::default()).unwrap(),
    ] {
        store
            .put(&StoreKey::new("zarr.json").unwrap(), Bytes::new())
            .await
            .unwrap();
        let err = zarrflow::hierarchy::open_node(&store, &StoreKey::root())
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                HierarchyError::Metadata(MetadataError::MalformedJson { .. })
            ),
            "{err:?}"
        );
    }
}

/// A 10 GB `zarr.json` (a sparse local file) is refused after reading at most the limit.
/// Before: the whole file was read (an abort under the limit).
#[test]
fn a_10_gb_zarr_json_is_refused_before_it_is_read() {
    in_child(
        "a_10_gb_zarr_json_is_refused_before_it_is_read",
        GIB,
        || {
            runtime().block_on(async {
                let dir = tempfile::tempdir().unwrap();
                sparse_file(
                    &dir.path().join("zarr.json"),
                    10 << 30,
                    b"{\"zarr_format\":3,",
                    b"}",
                );
                let store = Store::open(dir.path().to_str().unwrap(), Default::default()).unwrap();
                let err = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
                    .await
                    .unwrap_err();
                assert!(
                    matches!(
                        err,
                        ArrayError::Hierarchy(HierarchyError::Metadata(
                            MetadataError::TooLarge { .. }
                        ))
                    ),
                    "{err:?}"
                );
                let err = zarrflow::hierarchy::Group::open(&store, &StoreKey::root())
                    .await
                    .unwrap_err();
                assert!(
                    matches!(
                        err,
                        HierarchyError::Metadata(MetadataError::TooLarge { .. })
                    ),
                    "{err:?}"
                );
            })
        },
    );
}

#[tokio::test]
async fn reading_2_pow_62_elements_whole_is_refused_before_allocation() {
    for (dt, shape) in [
        ("uint8", vec![1u64 << 31, 1 << 31]),
        ("uint64", vec![1 << 31, 1 << 31]),
        ("uint16", vec![1 << 20, 1 << 20, 1 << 22]),
    ] {
        let store = Store::memory();
        let spec = ArraySpec::new(shape.clone(), dt)
            .shard_shape(vec![1 << 20; shape.len()])
            .inner_chunk_shape(vec![1 << 10; shape.len()]);
        let spec = if shape.len() == 3 {
            spec.shard_shape(vec![1 << 10; 3])
                .inner_chunk_shape(vec![1 << 5; 3])
        } else {
            spec
        };
        let a = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
            .await
            .unwrap();
        let start = Instant::now();
        let err = a.view().read_bytes().await.unwrap_err();
        assert!(
            matches!(err, ArrayError::TooLarge(_)),
            "{dt} {shape:?}: {err:?}"
        );
        let err = a.view().read::<u8>().await.unwrap_err();
        assert!(
            matches!(
                err,
                ArrayError::TooLarge(_) | ArrayError::DataTypeMismatch { .. }
            ),
            "{err:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(2));
        // a small corner of the same array reads (fill value)
        let corner = a
            .view()
            .get(&Selection::parse(&vec!["0:3"; shape.len()].join(",")).unwrap())
            .unwrap()
            .read_bytes()
            .await
            .unwrap();
        assert!(corner.iter().all(|&b| b == 0));
    }
}

#[tokio::test]
async fn a_shard_index_claiming_2_pow_40_entries_is_refused_before_allocation() {
    // creation
    let spec = ArraySpec::new(vec![1 << 20, 1 << 20], "uint8")
        .shard_shape(vec![1 << 20, 1 << 20])
        .inner_chunk_shape(vec![1, 1]);
    let store = Store::memory();
    let err = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("exceeds the limit"), "{err}");
    // parsing a stored document
    let doc = r#"{"zarr_format":3,"node_type":"array","shape":[1099511627776],"data_type":"uint8",
        "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1099511627776]}},
        "chunk_key_encoding":{"name":"default"},"fill_value":0,
        "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[1],
        "codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}}]}"#;
    let err = ArrayMetadata::parse(doc.as_bytes(), "big/zarr.json").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("big/zarr.json") && text.contains("exceeds"),
        "{text}"
    );
    assert!(
        matches!(
            err,
            MetadataError::Codec {
                source: CodecError::TooManyShardEntries { .. },
                ..
            }
        ),
        "{err:?}"
    );
    store
        .put(
            &StoreKey::new("zarr.json").unwrap(),
            doc.as_bytes().to_vec().into(),
        )
        .await
        .unwrap();
    assert!(
        Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn chunk_shapes_whose_buffers_overflow_are_refused() {
    // a chunk of 2^62 uint64 elements: its byte size overflows u64
    let doc = r#"{"zarr_format":3,"node_type":"array","shape":[4611686018427387904],
        "data_type":"uint64","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4611686018427387904]}},
        "chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}"#;
    let err = ArrayMetadata::parse(doc.as_bytes(), "huge/zarr.json").unwrap_err();
    assert!(err.to_string().contains("huge/zarr.json"), "{err}");
}
