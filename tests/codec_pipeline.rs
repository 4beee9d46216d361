//! Codec pipeline round trips, cross-checked against zarrs' own sharding codec.

use serde_json::{Value, json};
use std::borrow::Cow;
use std::num::NonZeroU64;
use zarrflow::codec::{CodecError, CodecPipeline};
use zarrs::array::{ArrayBytes, ArrayToBytesCodecTraits, CodecOptions, FillValue};
use zarrs::metadata::v3::MetadataV3;

fn codecs(v: Value) -> Vec<MetadataV3> {
    serde_json::from_value(v).unwrap()
}

fn nz(s: &[u64]) -> Vec<NonZeroU64> {
    s.iter().map(|&v| NonZeroU64::new(v).unwrap()).collect()
}

fn u16_data(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| ((i * 7 % 1000) as u16).to_ne_bytes())
        .collect()
}

fn check(codec_json: Value, shape: &[u64]) {
    let metas = codecs(codec_json);
    let p = CodecPipeline::from_metadata(&metas).unwrap();
    let dt = zarrs::array::data_type::uint16();
    let fv = FillValue::from(0u16);
    p.validate(shape, &dt).unwrap();
    let n = shape.iter().product::<u64>() as usize;
    let mut data = u16_data(n);
    // leave a region at the fill value so some inner chunks are empty
    for b in &mut data[..n] {
        *b = 0;
    }
    let enc = p.encode(&data, shape, &dt, &fv).unwrap();
    let dec = p.decode(&enc, shape, &dt, &fv, "c/0/0").unwrap();
    assert_eq!(dec, data);
    // zarrs' own chain decodes what we wrote ...
    let zchain = zarrs::array::CodecChain::from_metadata(&metas).unwrap();
    let opts = CodecOptions::default();
    let zdec = zchain
        .decode(Cow::Borrowed(&enc[..]), &nz(shape), &dt, &fv, &opts)
        .unwrap()
        .into_fixed()
        .unwrap();
    assert_eq!(&zdec[..], &data[..]);
    // ... and we decode what zarrs wrote
    let zenc = zchain
        .encode(
            ArrayBytes::new_flen(Cow::Borrowed(&data[..])),
            &nz(shape),
            &dt,
            &fv,
            &opts,
        )
        .unwrap();
    assert_eq!(p.decode(&zenc, shape, &dt, &fv, "c/0/0").unwrap(), data);
}

#[test]
fn plain_chains() {
    check(
        json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        &[8, 8],
    );
    check(
        json!([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 5}}]),
        &[8, 8],
    );
    check(
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}, {"name": "crc32c"}]),
        &[5, 7],
    );
    check(
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]),
        &[16],
    );
}

#[test]
fn sharded_index_end_and_start() {
    for loc in ["end", "start"] {
        check(
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": loc}}]),
            &[8, 8],
        );
    }
}

#[test]
fn nested_sharding() {
    check(
        json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4],
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": "start"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]),
        &[8, 8],
    );
}

#[test]
fn transpose_before_sharding_uses_transposed_frame() {
    // shard [8, 9] after transpose [1, 0] is [9, 8]; inner [3, 2] divides it (TensorStore ShardedTranspose)
    let j = json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]);
    check(j.clone(), &[8, 9]);
    let p = CodecPipeline::from_metadata(&codecs(j)).unwrap();
    assert_eq!(p.array_to_bytes_shape(&[8, 9]).unwrap(), vec![9, 8]);
    // in the untransposed frame [8, 9] the inner shape [3, 2] would not divide
    let dt = zarrs::array::data_type::uint16();
    let err = CodecPipeline::from_metadata(&codecs(json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}])))
    .unwrap()
    .validate(&[8, 9], &dt)
    .unwrap_err();
    assert!(
        matches!(err, CodecError::ShardShapeNotDivisible { .. }),
        "{err}"
    );
}

#[test]
fn sharding_with_bytes_to_bytes_after() {
    check(
        json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4],
            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}},
            {"name": "gzip", "configuration": {"level": 3}}]),
        &[16],
    );
}

#[test]
fn unknown_codec_names_the_field() {
    let err = CodecPipeline::from_metadata(&codecs(
        json!([{"name": "bytes"}, {"name": "frobnicate", "configuration": {}}]),
    ))
    .unwrap_err();
    assert!(
        matches!(err, CodecError::UnsupportedCodec { ref field, .. } if field.contains("codecs[1]") && field.contains("frobnicate")),
        "{err}"
    );
    // optional unknown codecs are skipped
    CodecPipeline::from_metadata(&codecs(json!([{"name": "bytes"}, {"name": "frobnicate", "configuration": {}, "must_understand": false}]))).unwrap();
    // inner chains are named
    let err = CodecPipeline::from_metadata(&codecs(
        json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
        "codecs": [{"name": "nope"}], "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}]}}]),
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("codecs[0].configuration.codecs[0]"),
        "{err}"
    );
}

#[test]
fn assemble_copies_encoded_inner_chunks() {
    use zarrflow::codec::{Sharding, ShardingConfig};
    let meta: MetadataV3 = serde_json::from_value(json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
        "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "start"}}))
    .unwrap();
    let sh = Sharding::new(
        ShardingConfig::from_metadata(&meta, "codecs[0]").unwrap(),
        "codecs[0]",
    )
    .unwrap();
    let shard = sh
        .assemble_shard(&[6], &[Some(&[1, 2][..]), None, Some(&[5, 6][..])])
        .unwrap()
        .unwrap();
    let idx = sh.index_codec(&[6]).unwrap();
    assert_eq!(idx.encoded_size(), 3 * 16 + 4);
    let index = idx.decode_from_shard(&shard, "k").unwrap();
    assert_eq!(index.get(0), Some(52..54));
    assert_eq!(index.get(1), None);
    assert_eq!(index.get(2), Some(54..56));
    let dt = zarrs::array::data_type::uint8();
    let dec = sh
        .decode_shard(&shard, &[6], &dt, &FillValue::from(9u8), "k")
        .unwrap();
    assert_eq!(dec, vec![1, 2, 9, 9, 5, 6]);
    assert!(
        sh.assemble_shard(&[6], &[None, None, None])
            .unwrap()
            .is_none()
    );
    assert!(sh.assemble_shard(&[6], &[None]).is_err());
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]
    #[test]
    fn sharded_round_trip_random(
        cps in proptest::collection::vec(1u64..4, 1..4),
        inner in proptest::collection::vec(1u64..4, 3),
        at_start in proptest::bool::ANY,
        seed in 0u64..1000,
    ) {
        let rank = cps.len();
        let inner: Vec<u64> = inner[..rank].to_vec();
        let shard: Vec<u64> = cps.iter().zip(&inner).map(|(a, b)| a * b).collect();
        let metas = codecs(json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": inner,
            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": if at_start { "start" } else { "end" }}}]));
        let p = CodecPipeline::from_metadata(&metas).unwrap();
        let dt = zarrs::array::data_type::uint16();
        let fv = FillValue::from(3u16);
        let n = shard.iter().product::<u64>() as usize;
        let data: Vec<u8> = (0..n)
            .flat_map(|i| {
                let v = if (i as u64 + seed).is_multiple_of(3) { 3u16 } else { (i as u64 * 31 + seed) as u16 };
                v.to_ne_bytes()
            })
            .collect();
        let enc = p.encode(&data, &shard, &dt, &fv).unwrap();
        proptest::prop_assert_eq!(p.decode(&enc, &shard, &dt, &fv, "k").unwrap(), data.clone());
        let zchain = zarrs::array::CodecChain::from_metadata(&metas).unwrap();
        let z = zchain.decode(Cow::Borrowed(&enc[..]), &nz(&shard), &dt, &fv, &CodecOptions::default()).unwrap().into_fixed().unwrap();
        proptest::prop_assert_eq!(&z[..], &data[..]);
    }
}
