//! Corrupt data through the read path (`Array`): the corrupt shard fixtures of test-data
//! (the four TensorStore index failures and a single sentinel half, index at the start and
//! at the end), truncated and garbage inner-chunk payloads, and decoded chunks of the wrong
//! size. Each read gives a typed error naming the key (and the inner chunk), never a panic
//! and never values; reads that do not touch the corrupt object still succeed. Checksum
//! verification is turned off only by `ArrayOptions::with_verify_checksums(false)`.

mod common;

use bytes::Bytes;
use common::fixtures::{entries, key, test_data};
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::codec::CodecError;
use zarrflow::hierarchy::HierarchyError;
use zarrflow::index::{Dialect, Selection, SelectionMode};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrs::metadata::v3::MetadataV3;

fn codec_error(e: &ArrayError) -> Option<&CodecError> {
    match e {
        ArrayError::Codec(c) => Some(c),
        ArrayError::Hierarchy(HierarchyError::Codec(c)) => Some(c),
        _ => None,
    }
}

fn kind_matches(expected: &str, e: &CodecError) -> bool {
    match expected {
        "shard_index_too_short" => matches!(e, CodecError::ShardTooShort { .. }),
        "shard_index_invalid_checksum" => matches!(e, CodecError::ShardIndexChecksum { .. }),
        "shard_index_entry_out_of_range" => matches!(e, CodecError::ShardEntryOutOfRange { .. }),
        "shard_index_single_sentinel" => matches!(e, CodecError::ShardEntrySingleSentinel { .. }),
        "shard_index_byte_range_overflow" => matches!(e, CodecError::ShardEntryOverflow { .. }),
        other => panic!("unknown expected_error {other}"),
    }
}

async fn read_sel(array: &Array, text: &str) -> Result<Vec<u8>, ArrayError> {
    let sel = Selection::parse(text)?;
    array
        .view()
        .select(&sel, SelectionMode::Basic, Dialect::Positional)?
        .read_bytes()
        .await
}

#[tokio::test]
async fn corrupt_fixtures_fail_typed_through_array_reads() {
    let Some((dir, manifest)) = test_data() else {
        eprintln!("test-data/manifest.json not present: skipped");
        return;
    };
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    let mut checked = 0;
    for c in entries(&manifest, "corrupt") {
        let path = c["path"].as_str().unwrap();
        let expected = c["expected_error"].as_str().unwrap();
        let corrupt_key = format!("{path}/{}", c["corrupt_key"].as_str().unwrap());
        // with and without the index cache: the partial path reads the index on its own
        for cache in [0u64, 1 << 20] {
            let opts = ArrayOptions::default().with_index_cache_bytes(cache);
            let array = Array::open_in(&store, &key(path), opts).await.unwrap();
            for sel in c["reads_that_must_fail"].as_array().unwrap() {
                let sel = sel.as_str().unwrap();
                let err = read_sel(&array, sel)
                    .await
                    .expect_err(&format!("{path} [{sel}] must fail"));
                let ce = codec_error(&err)
                    .unwrap_or_else(|| panic!("{path} [{sel}]: not a codec error: {err:?}"));
                assert!(
                    kind_matches(expected, ce),
                    "{path} [{sel}]: expected {expected}, got {ce:?}"
                );
                assert!(
                    err.to_string().contains(&corrupt_key),
                    "{path} [{sel}]: {err} does not name {corrupt_key}"
                );
                checked += 1;
            }
            for ok in c["reads_that_must_succeed"].as_array().unwrap() {
                let sel = ok["selection"].as_str().unwrap();
                let want = ok["expected_value"].as_u64().unwrap() as u8;
                let got = read_sel(&array, sel).await.unwrap();
                assert!(got.iter().all(|&v| v == want), "{path} [{sel}]");
            }
        }
    }
    eprintln!("{checked} failing reads of corrupt fixtures checked");
}

#[tokio::test]
async fn checksum_verification_is_off_only_by_option() {
    let Some((dir, _)) = test_data() else {
        return;
    };
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    for loc in ["end", "start"] {
        let path = format!("corrupt/spec_8_4_index_{loc}_bad_checksum");
        let on = Array::open_in(&store, &key(&path), ArrayOptions::default())
            .await
            .unwrap();
        assert!(on.options().verify_checksums());
        let err = on.view().read_bytes().await.unwrap_err();
        assert!(matches!(
            codec_error(&err),
            Some(CodecError::ShardIndexChecksum { .. })
        ));
        let off = Array::open_in(
            &store,
            &key(&path),
            ArrayOptions::default().with_verify_checksums(false),
        )
        .await
        .unwrap();
        // the index is taken as stored: the flipped entry is found overlapping the index (at
        // the end) or out of range (at the start), never a checksum error
        for sel in ["...", "5,5"] {
            if let Err(e) = read_sel(&off, sel).await {
                assert!(
                    !matches!(codec_error(&e), Some(CodecError::ShardIndexChecksum { .. })),
                    "{path} [{sel}]: {e}"
                );
            }
        }
        if loc == "end" {
            // structurally invalid (an inner chunk inside the index's bytes) whatever the
            // checksum option: a typed error, not the index's bytes decoded as values
            let err = off.view().read_bytes().await.unwrap_err();
            assert!(
                matches!(
                    codec_error(&err),
                    Some(CodecError::ShardEntriesOverlap { other: None, .. })
                ),
                "{err}"
            );
        }
    }
}

fn codecs(json: &str) -> Vec<MetadataV3> {
    serde_json::from_str(json).unwrap()
}

/// A 8×8 uint16 array in shards of 4×4 with 2×2 inner chunks, every cell written.
async fn sharded(store: &Store, inner_codecs: &str) -> Array {
    let spec = ArraySpec::new(vec![8, 8], "uint16")
        .shard_shape(vec![4, 4])
        .inner_chunk_shape(vec![2, 2])
        .codecs(codecs(inner_codecs));
    let array = Array::create(store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    let values: Vec<u16> = (1..=64).collect();
    let values = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[8, 8]), values).unwrap();
    array.view().write(&values.view()).await.unwrap();
    array
}

/// Rewrites shard `c/0/0` with inner chunk (0, 1) replaced by `payload` (a valid index).
async fn replace_inner(array: &Array, payload: &[u8]) {
    let store = array.store();
    let k = StoreKey::new("c/0/0").unwrap();
    let shard = store.get(&k).await.unwrap();
    let sharding = array.metadata().codecs().sharding().unwrap();
    let codec = sharding.index_codec(&[4, 4]).unwrap();
    let index = codec.decode_from_shard(&shard, "c/0/0").unwrap();
    let parts: Vec<Option<&[u8]>> = (0..index.len())
        .map(|i| {
            if i == 1 {
                Some(payload)
            } else {
                index
                    .get(i)
                    .map(|r| &shard[r.start as usize..r.end as usize])
            }
        })
        .collect();
    let rebuilt = sharding.assemble_shard(&[4, 4], &parts).unwrap().unwrap();
    store.put(&k, Bytes::from(rebuilt)).await.unwrap();
}

async fn inner_payload(array: &Array) -> Vec<u8> {
    let shard = array
        .store()
        .get(&StoreKey::new("c/0/0").unwrap())
        .await
        .unwrap();
    let codec = array
        .metadata()
        .codecs()
        .sharding()
        .unwrap()
        .index_codec(&[4, 4])
        .unwrap();
    let r = codec
        .decode_from_shard(&shard, "c/0/0")
        .unwrap()
        .get(1)
        .unwrap();
    shard[r.start as usize..r.end as usize].to_vec()
}

/// Reads that touch inner chunk (0, 1) of shard c/0/0 fail naming it, through the whole-
/// shard path ("0:4,0:4"), the partial path ("1,3") and a whole-array read; a read of an
/// untouched inner chunk in the same shard still succeeds.
async fn assert_inner_fails(array: &Array, what: &str) {
    // "0:2,2:4" is exactly the inner chunk: decoded straight into the result
    for sel in ["0:4,0:4", "1,3", "...", "0:2,2:4"] {
        for cache in [0u64, 1 << 20] {
            let a = Array::open_in(
                array.store(),
                &StoreKey::root(),
                ArrayOptions::default().with_index_cache_bytes(cache),
            )
            .await
            .unwrap();
            let err = read_sel(&a, sel)
                .await
                .expect_err(&format!("{what} [{sel}] must fail"));
            let msg = err.to_string();
            assert!(
                msg.contains("c/0/0") && msg.contains("inner chunk [0, 1]"),
                "{what} [{sel}]: {msg}"
            );
            assert!(
                matches!(err, ArrayError::Codec(_) | ArrayError::InvalidData { .. }),
                "{what} [{sel}]: {err:?}"
            );
        }
    }
    let ok = read_sel(array, "0:2,0:2").await.unwrap();
    let ok: Vec<u16> = ok
        .chunks_exact(2)
        .map(|b| u16::from_ne_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(ok, vec![1, 2, 9, 10], "{what}");
}

const GZIP: &str = r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":5}}]"#;
const CRC: &str = r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#;
const RAW: &str = r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#;

#[tokio::test]
async fn truncated_inner_chunk_payloads_fail_naming_the_inner_chunk() {
    for (name, c) in [("gzip", GZIP), ("crc32c", CRC), ("bytes", RAW)] {
        let array = sharded(&Store::memory(), c).await;
        let payload = inner_payload(&array).await;
        replace_inner(&array, &payload[..payload.len() / 2]).await;
        assert_inner_fails(&array, &format!("truncated {name}")).await;
    }
}

#[tokio::test]
async fn garbage_inner_chunk_payloads_fail_naming_the_inner_chunk() {
    for (name, c) in [("gzip", GZIP), ("crc32c", CRC)] {
        let array = sharded(&Store::memory(), c).await;
        let n = inner_payload(&array).await.len();
        let garbage: Vec<u8> = (0..n).map(|i| (i as u8).wrapping_mul(151) ^ 0x5a).collect();
        replace_inner(&array, &garbage).await;
        assert_inner_fails(&array, &format!("garbage {name}")).await;
    }
}

#[tokio::test]
async fn inner_chunks_decoding_to_the_wrong_size_fail() {
    // a valid gzip stream of a 3×3 uint16 chunk where a 2×2 one belongs
    let array = sharded(&Store::memory(), GZIP).await;
    let pipeline = array
        .metadata()
        .codecs()
        .sharding()
        .unwrap()
        .inner()
        .clone();
    let wrong = pipeline
        .encode(
            &[7u8; 18],
            &[3, 3],
            array.metadata().data_type(),
            array.metadata().fill_value(),
        )
        .unwrap();
    replace_inner(&array, &wrong).await;
    assert_inner_fails(&array, "wrong decoded size").await;
}

#[tokio::test]
async fn chunks_decoding_to_the_wrong_size_fail_naming_the_key() {
    for c in [GZIP, RAW] {
        let store = Store::memory();
        let spec = ArraySpec::new(vec![8, 8], "uint16")
            .shard_shape(vec![4, 4])
            .codecs(codecs(c));
        let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
            .await
            .unwrap();
        array.view().write_scalar(3u16).await.unwrap();
        let wrong = array
            .metadata()
            .codecs()
            .encode(
                &[7u8; 50],
                &[5, 5],
                array.metadata().data_type(),
                array.metadata().fill_value(),
            )
            .unwrap();
        let k = StoreKey::new("c/1/0").unwrap();
        store.put(&k, wrong).await.unwrap();
        for sel in ["...", "4:8,0:4", "5,1"] {
            let err = read_sel(&array, sel).await.unwrap_err();
            assert!(matches!(err, ArrayError::Codec(_)), "{sel}: {err:?}");
            assert!(err.to_string().contains("c/1/0"), "{sel}: {err}");
        }
        // other chunks are intact
        let ok = read_sel(&array, "0:4,0:8").await.unwrap();
        assert!(ok.chunks_exact(2).all(|b| b == 3u16.to_ne_bytes()));
        // garbage bytes
        store
            .put(&k, Bytes::from_static(b"not a chunk at all"))
            .await
            .unwrap();
        let err = read_sel(&array, "5,1").await.unwrap_err();
        assert!(err.to_string().contains("c/1/0"), "{err}");
    }
}

#[tokio::test]
async fn truncated_shard_objects_fail_and_never_read_out_of_bounds() {
    // every prefix of a valid shard: an error naming the key or (never) wrong values
    let array = sharded(&Store::memory(), CRC).await;
    let k = StoreKey::new("c/0/0").unwrap();
    let shard = array.store().get(&k).await.unwrap();
    let full = read_sel(&array, "0:4,0:4").await.unwrap();
    for len in 0..shard.len() {
        array.store().put(&k, shard.slice(..len)).await.unwrap();
        for sel in ["0:4,0:4", "1,3"] {
            let a = Array::open_in(
                array.store(),
                &StoreKey::root(),
                ArrayOptions::default().with_index_cache_bytes(0),
            )
            .await
            .unwrap();
            match read_sel(&a, sel).await {
                Err(e) => assert!(e.to_string().contains("c/0/0"), "len {len} [{sel}]: {e}"),
                Ok(v) => {
                    panic!("len {len} [{sel}]: a truncated shard read as {v:?} (full {full:?})")
                }
            }
        }
    }
}

/// A zstd frame declaring 2^60 content bytes (with a 4-byte raw block): decoders that
/// trust the declared size allocate it before decompressing.
fn hostile_zstd_frame() -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    f.extend_from_slice(&(1u64 << 60).to_le_bytes());
    f.extend_from_slice(&[0x21, 0x00, 0x00, 1, 2, 3, 4]);
    f
}

const ZSTD: &str = r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]"#;

#[tokio::test]
async fn zstd_frames_declaring_huge_sizes_are_refused_before_allocation() {
    // an inner chunk of a shard
    let array = sharded(&Store::memory(), ZSTD).await;
    replace_inner(&array, &hostile_zstd_frame()).await;
    assert_inner_fails(&array, "hostile zstd inner chunk").await;
    // an unsharded chunk
    let store = Store::memory();
    let spec = ArraySpec::new(vec![8, 8], "uint16")
        .shard_shape(vec![4, 4])
        .codecs(codecs(ZSTD));
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    store
        .put(
            &StoreKey::new("c/1/1").unwrap(),
            Bytes::from(hostile_zstd_frame()),
        )
        .await
        .unwrap();
    // "4:8,4:8" is exactly the chunk: decoded straight into the result
    for sel in ["...", "4:8,4:8"] {
        let err = read_sel(&array, sel).await.unwrap_err();
        assert!(err.to_string().contains("c/1/1"), "{err}");
        assert!(
            matches!(err, ArrayError::Codec(CodecError::WrongSize { .. })),
            "{err:?}"
        );
    }
    // a write that must read the chunk fails the same way and leaves it as it was
    let err = array
        .view()
        .get(&Selection::parse("5, 5").unwrap())
        .unwrap()
        .write_scalar(1u16)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("c/1/1"), "{err}");
    let kept = store.get(&StoreKey::new("c/1/1").unwrap()).await.unwrap();
    assert_eq!(kept.as_ref(), hostile_zstd_frame().as_slice());
}

/// A shard whose index entries alias one body is refused on read and on rewrite: a one-cell
/// write fails with a typed error and leaves the stored shard as it was (before, the rewrite
/// assembled every alias in full, so a small shard could grow without bound).
#[tokio::test]
async fn aliased_index_entries_are_refused_on_read_and_on_rewrite() {
    let store = Store::memory();
    let array = sharded(
        &store,
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
    )
    .await;
    let k = StoreKey::new("c/0/0").unwrap();
    let shard = store.get(&k).await.unwrap();
    let sharding = array.metadata().codecs().sharding().unwrap();
    let codec = sharding.index_codec(&[4, 4]).unwrap();
    let index = codec.decode_from_shard(&shard, "c/0/0").unwrap();
    // every entry points at inner chunk 0's bytes
    let first = index.get(0).unwrap();
    let aliased = zarrflow::codec::ShardIndex::from_entries(
        &[2, 2],
        (0..4)
            .flat_map(|_| [first.start, first.end - first.start])
            .collect(),
    )
    .unwrap();
    let mut bytes = shard.to_vec();
    let at = codec.index_range(bytes.len() as u64).unwrap();
    bytes[at.start as usize..at.end as usize].copy_from_slice(&codec.encode(&aliased).unwrap());
    store.put(&k, Bytes::from(bytes.clone())).await.unwrap();

    let read = read_sel(&array, "0:4,0:4").await.unwrap_err();
    assert!(
        matches!(
            codec_error(&read),
            Some(CodecError::ShardEntriesOverlap { other: Some(_), .. })
        ),
        "{read}"
    );
    let write = array
        .view()
        .get(&Selection::parse("0,0").unwrap())
        .unwrap()
        .write_scalar(7u16)
        .await
        .unwrap_err();
    assert!(
        matches!(
            codec_error(&write),
            Some(CodecError::ShardEntriesOverlap { .. })
        ),
        "{write}"
    );
    assert_eq!(
        store.get(&k).await.unwrap().as_ref(),
        bytes.as_slice(),
        "shard untouched"
    );
}

/// A rewritten shard is never larger than the sum of its inner chunks' encodings plus its
/// index: a shard whose inner chunks sit between 100 KB runs of garbage (legal: entries
/// only locate bytes) reads correctly, and a one-cell write stores it compactly, its
/// untouched inner chunks copied verbatim.
#[tokio::test]
async fn a_rewritten_shard_is_never_larger_than_its_parts_and_index() {
    for codecs in [
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
        r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]"#,
    ] {
        let store = Store::memory();
        let array = sharded(&store, codecs).await;
        let k = StoreKey::new("c/0/0").unwrap();
        let shard = store.get(&k).await.unwrap();
        let sharding = array.metadata().codecs().sharding().unwrap();
        let codec = sharding.index_codec(&[4, 4]).unwrap();
        let index = codec.decode_from_shard(&shard, "c/0/0").unwrap();
        let parts: Vec<Vec<u8>> = (0..index.len())
            .map(|i| {
                let r = index.get(i).unwrap();
                shard[r.start as usize..r.end as usize].to_vec()
            })
            .collect();
        // holey: 100 KB of 0xEE before every inner chunk, index at the end
        let mut body = Vec::new();
        let mut entries = Vec::new();
        for p in &parts {
            body.extend(std::iter::repeat_n(0xEEu8, 100_000));
            entries.extend([body.len() as u64, p.len() as u64]);
            body.extend_from_slice(p);
        }
        let holey = zarrflow::codec::ShardIndex::from_entries(&[2, 2], entries).unwrap();
        body.extend(codec.encode(&holey).unwrap());
        store.put(&k, Bytes::from(body.clone())).await.unwrap();
        let before = read_sel(&array, "...").await.unwrap();

        array
            .view()
            .get(&Selection::parse("0, 0").unwrap())
            .unwrap()
            .write_scalar(999u16)
            .await
            .unwrap();
        let rewritten = store.get(&k).await.unwrap();
        let new_index = codec.decode_from_shard(&rewritten, "c/0/0").unwrap();
        let sum: u64 = (0..new_index.len())
            .filter_map(|i| new_index.get(i))
            .map(|r| r.end - r.start)
            .sum();
        assert_eq!(
            rewritten.len() as u64,
            sum + codec.encoded_size(),
            "compact: {} bytes, parts {sum} + index {} (was {})",
            rewritten.len(),
            codec.encoded_size(),
            body.len()
        );
        // the untouched inner chunks are the stored bytes, verbatim
        for (i, p) in parts.iter().enumerate().skip(1) {
            let r = new_index.get(i).unwrap();
            assert_eq!(&rewritten[r.start as usize..r.end as usize], p.as_slice());
        }
        let mut expected = before;
        expected[0..2].copy_from_slice(&999u16.to_le_bytes());
        assert_eq!(read_sel(&array, "...").await.unwrap(), expected);
    }
}
