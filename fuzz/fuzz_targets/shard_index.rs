//! Shard decoding: the first byte picks a sharding layout (inner grid, index location,
//! with or without a CRC32C, inner codecs), the rest is a shard object. Index decoding and
//! whole-shard decoding either succeed with in-bounds entries or give a `CodecError`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use zarrflow::metadata::ArrayMetadata;

/// (shard shape, inner chunk shape, index location, index codecs, inner codecs)
const LAYOUTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "[4,4]",
        "[2,2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[4,4]",
        "[2,2]",
        "start",
        r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[6]",
        "[2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[2,3,4]",
        "[1,3,2]",
        "start",
        r#"[{"name":"bytes","configuration":{"endian":"big"}}]"#,
        r#"[{"name":"bytes"}]"#,
    ),
    (
        "[4,4]",
        "[2,2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]"#,
        r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}}]"#,
    ),
    (
        "[8]",
        "[4]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
        r#"[{"name":"bytes"},{"name":"zstd","configuration":{"level":1,"checksum":false}}]"#,
    ),
    (
        "[4,4]",
        "[2,2]",
        "end",
        r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
        r#"[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes"},{"name":"crc32c"}]"#,
    ),
];

fn layouts() -> &'static Vec<ArrayMetadata> {
    static L: OnceLock<Vec<ArrayMetadata>> = OnceLock::new();
    L.get_or_init(|| {
        LAYOUTS
            .iter()
            .map(|(shard, inner, loc, index, codecs)| {
                let json = format!(
                    r#"{{"zarr_format":3,"node_type":"array","shape":{shard},"data_type":"uint16",
                    "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{shard}}}}},
                    "chunk_key_encoding":{{"name":"default"}},"fill_value":7,
                    "codecs":[{{"name":"sharding_indexed","configuration":{{"chunk_shape":{inner},
                    "codecs":{codecs},"index_codecs":{index},"index_location":"{loc}"}}}}]}}"#
                );
                ArrayMetadata::parse(json.as_bytes(), "fuzz/zarr.json").expect("valid layout")
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, shard)) = data.split_first() else {
        return;
    };
    let meta = &layouts()[pick as usize % LAYOUTS.len()];
    let shape = meta.shape().to_vec();
    let sharding = meta.codecs().sharding().expect("sharded layout");
    let codec = sharding.index_codec(&shape).expect("index codec");
    let key = "fuzz/c/0/0";
    if let Ok(index) = codec.decode_from_shard(shard, key) {
        for i in 0..index.len() {
            if let Some(r) = index.get(i) {
                assert!(r.start <= r.end && r.end <= shard.len() as u64, "{r:?}");
            }
        }
    }
    // The index alone, against a claimed object size (as after a suffix read).
    if shard.len() >= 2 {
        let claimed = u16::from_le_bytes([shard[0], shard[1]]) as u64;
        if let Ok(index) = codec.decode(&shard[2..], claimed, key) {
            for i in 0..index.len() {
                if let Some(r) = index.get(i) {
                    assert!(r.end <= claimed, "{r:?} beyond {claimed}");
                }
            }
        }
    }
    // The whole shard through the pipeline: values or an error, never a panic.
    if let Ok(values) =
        meta.codecs()
            .decode(shard, &shape, meta.data_type(), meta.fill_value(), key)
    {
        assert_eq!(values.len() as u64, shape.iter().product::<u64>() * 2);
    }
});
