//! Shard index: round trips, the worked 72-byte shard of zarr-v3-format.md §8.4 and its corrupt
//! variants (§8.5).

use serde_json::json;
use zarrflow::codec::{
    CodecError, CodecPipeline, IndexLocation, ShardIndex, ShardIndexCodec, Sharding, ShardingConfig,
};
use zarrs::array::FillValue;
use zarrs::metadata::v3::MetadataV3;

const MAX: u64 = u64::MAX;

fn index_codecs() -> Vec<MetadataV3> {
    serde_json::from_value(
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]),
    )
    .unwrap()
}

fn sharding(location: &str) -> Sharding {
    let meta: MetadataV3 = serde_json::from_value(json!({
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [2, 2],
            "codecs": [{"name": "bytes"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": location
        }
    }))
    .unwrap();
    Sharding::new(
        ShardingConfig::from_metadata(&meta, "codecs[0]").unwrap(),
        "codecs[0]",
    )
    .unwrap()
}

/// Reference CRC32C (Castagnoli), bitwise, to re-verify the constants of the reference text.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Shard `c/1/1` of the 6×6 uint8 array: a[4..6, 4..6] = 44, 45, 54, 55 (rest outside the array).
fn decoded_shard() -> Vec<u8> {
    let mut d = vec![0u8; 16];
    d[0] = 44;
    d[1] = 45;
    d[4] = 54;
    d[5] = 55;
    d
}

fn expected_end() -> Vec<u8> {
    let mut v = vec![44u8, 45, 54, 55];
    for e in [0u64, 4, MAX, MAX, MAX, MAX, MAX, MAX] {
        v.extend_from_slice(&e.to_le_bytes());
    }
    v.extend_from_slice(&[0x66, 0x7a, 0xdc, 0x7a]);
    v
}

fn expected_start() -> Vec<u8> {
    let mut v = Vec::new();
    for e in [68u64, 4, MAX, MAX, MAX, MAX, MAX, MAX] {
        v.extend_from_slice(&e.to_le_bytes());
    }
    v.extend_from_slice(&[0xb2, 0x05, 0x49, 0xcf]);
    v.extend_from_slice(&[44u8, 45, 54, 55]);
    v
}

#[test]
fn crc_constants_reverified() {
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    let end = expected_end();
    assert_eq!(crc32c(&end[4..68]), 0x7ADC_7A66);
    let start = expected_start();
    assert_eq!(crc32c(&start[0..64]), 0xCF49_05B2);
    let empty: Vec<u8> = std::iter::repeat_n(0xFFu8, 64).collect();
    assert_eq!(crc32c(&empty), 0x2FCD_4E66);
}

#[test]
fn worked_example_index_at_end_byte_for_byte() {
    let sh = sharding("end");
    let dt = zarrs::array::data_type::uint8();
    let fv = FillValue::from(0u8);
    let shard = sh
        .encode_shard(&decoded_shard(), &[4, 4], &dt, &fv)
        .unwrap()
        .unwrap();
    assert_eq!(shard.len(), 72);
    assert_eq!(shard, expected_end());
    let codec = sh.index_codec(&[4, 4]).unwrap();
    assert_eq!(codec.encoded_size(), 68);
    assert_eq!(codec.index_range(72), Some(4..72));
    let index = codec.decode(&shard[4..], 72, "c/1/1").unwrap();
    assert_eq!(index.get_coords(&[0, 0]), Some(0..4));
    assert_eq!(index.get_coords(&[1, 1]), None);
    let back = sh.decode_shard(&shard, &[4, 4], &dt, &fv, "c/1/1").unwrap();
    assert_eq!(back, decoded_shard());
}

#[test]
fn worked_example_index_at_start_byte_for_byte() {
    let sh = sharding("start");
    let dt = zarrs::array::data_type::uint8();
    let fv = FillValue::from(0u8);
    let shard = sh
        .encode_shard(&decoded_shard(), &[4, 4], &dt, &fv)
        .unwrap()
        .unwrap();
    assert_eq!(shard, expected_start());
    let back = sh.decode_shard(&shard, &[4, 4], &dt, &fv, "c/1/1").unwrap();
    assert_eq!(back, decoded_shard());
}

#[test]
fn worked_example_through_the_array_codec_pipeline() {
    let codecs: Vec<MetadataV3> = serde_json::from_value(json!([{
        "name": "sharding_indexed",
        "configuration": {"chunk_shape": [2, 2], "codecs": [{"name": "bytes"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]))
    .unwrap();
    let p = CodecPipeline::from_metadata(&codecs).unwrap();
    let dt = zarrs::array::data_type::uint8();
    let fv = FillValue::from(0u8);
    assert_eq!(
        p.encode(&decoded_shard(), &[4, 4], &dt, &fv).unwrap(),
        expected_end()
    );
    assert_eq!(
        p.decode(&expected_end(), &[4, 4], &dt, &fv, "c/1/1")
            .unwrap(),
        decoded_shard()
    );
    // all-empty shard: elided
    assert_eq!(p.encode_elide(&[0u8; 16], &[4, 4], &dt, &fv).unwrap(), None);
}

#[test]
fn empty_index_crc() {
    let codec =
        ShardIndexCodec::new(&index_codecs(), &[2, 2], IndexLocation::End, "codecs[0]").unwrap();
    let enc = codec.encode(&ShardIndex::new_empty(&[2, 2])).unwrap();
    assert_eq!(&enc[64..], &0x2FCD_4E66u32.to_le_bytes());
}

#[test]
fn index_round_trip_various_shapes() {
    for cps in [vec![1u64], vec![5, 5], vec![2, 3, 4], vec![]] {
        let codec = ShardIndexCodec::new(&index_codecs(), &cps, IndexLocation::End, "x").unwrap();
        let n: u64 = cps.iter().product();
        assert_eq!(codec.encoded_size(), 16 * n + 4);
        let mut idx = ShardIndex::new_empty(&cps);
        for i in (0..n as usize).step_by(2) {
            idx.set(i, Some(i as u64 * 10..i as u64 * 10 + 7));
        }
        let enc = codec.encode(&idx).unwrap();
        let dec = codec.decode(&enc, 1 << 20, "k").unwrap();
        assert_eq!(dec, idx);
    }
}

/// Rewrite the entries of the end-located example and recompute the CRC.
fn with_entries(entries: [u64; 8]) -> Vec<u8> {
    let mut v = vec![44u8, 45, 54, 55];
    for e in entries {
        v.extend_from_slice(&e.to_le_bytes());
    }
    let crc = crc32c(&v[4..68]);
    v.extend_from_slice(&crc.to_le_bytes());
    v
}

fn decode_end(shard: &[u8]) -> Result<ShardIndex, CodecError> {
    sharding("end")
        .index_codec(&[4, 4])
        .unwrap()
        .decode_from_shard(shard, "arr/c/1/1")
}

#[test]
fn corrupt_too_short() {
    let shard = expected_end();
    let err = decode_end(&shard[..67]).unwrap_err();
    assert!(
        matches!(err, CodecError::ShardTooShort { ref key, size: 67, index_size: 68 } if key == "arr/c/1/1"),
        "{err}"
    );
    // a suffix read shorter than the index also counts
    let codec = sharding("end").index_codec(&[4, 4]).unwrap();
    assert!(matches!(
        codec.decode(&shard[10..], 62, "k"),
        Err(CodecError::ShardTooShort { .. })
    ));
    assert!(err.to_string().contains("arr/c/1/1"));
}

#[test]
fn corrupt_checksum() {
    let mut shard = expected_end();
    shard[10] ^= 0x01;
    let err = decode_end(&shard).unwrap_err();
    assert!(
        matches!(err, CodecError::ShardIndexChecksum { ref key } if key == "arr/c/1/1"),
        "{err}"
    );
    assert!(err.to_string().contains("checksum"));
}

#[test]
fn corrupt_entry_out_of_range() {
    let err = decode_end(&with_entries([0, 73, MAX, MAX, MAX, MAX, MAX, MAX])).unwrap_err();
    assert!(
        matches!(err, CodecError::ShardEntryOutOfRange { ref key, ref chunk, offset: 0, nbytes: 73, shard_size: 72 } if key == "arr/c/1/1" && chunk == &[0, 0]),
        "{err}"
    );
}

#[test]
fn corrupt_single_sentinel() {
    let err = decode_end(&with_entries([MAX, 4, MAX, MAX, MAX, MAX, MAX, MAX])).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::ShardEntrySingleSentinel {
                offset: MAX,
                nbytes: 4,
                ..
            }
        ),
        "{err}"
    );
    let err = decode_end(&with_entries([0, 4, 0, MAX, MAX, MAX, MAX, MAX])).unwrap_err();
    assert!(
        matches!(err, CodecError::ShardEntrySingleSentinel { ref chunk, .. } if chunk == &[0, 1]),
        "{err}"
    );
}

#[test]
fn corrupt_overflow() {
    let err = decode_end(&with_entries([
        1 << 63,
        1 << 63,
        MAX,
        MAX,
        MAX,
        MAX,
        MAX,
        MAX,
    ]))
    .unwrap_err();
    assert!(
        matches!(err, CodecError::ShardEntryOverflow { .. }),
        "{err}"
    );
    // no u64 overflow, but beyond i64::MAX
    let err = decode_end(&with_entries([
        i64::MAX as u64,
        1,
        MAX,
        MAX,
        MAX,
        MAX,
        MAX,
        MAX,
    ]))
    .unwrap_err();
    assert!(
        matches!(err, CodecError::ShardEntryOverflow { .. }),
        "{err}"
    );
}

#[test]
fn entry_count_cap() {
    let err = ShardIndexCodec::new(
        &index_codecs(),
        &[1 << 16, 1 << 15],
        IndexLocation::End,
        "codecs[0]",
    )
    .unwrap_err();
    assert!(
        matches!(err, CodecError::TooManyShardEntries { count, .. } if count == 1 << 31),
        "{err}"
    );
    assert!(err.to_string().contains("codecs[0]"));
}

#[test]
fn variable_size_index_codecs_rejected() {
    let codecs: Vec<MetadataV3> = serde_json::from_value(json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}])).unwrap();
    let err = ShardIndexCodec::new(&codecs, &[2, 2], IndexLocation::End, "codecs[0]").unwrap_err();
    assert!(
        matches!(err, CodecError::InvalidConfiguration { ref field, .. } if field.contains("index_codecs")),
        "{err}"
    );
}
