//! The chains zarrflow decodes itself (`bytes` in native order, optionally `zstd`): same
//! bytes as zarrs' generic chain, frames without a declared size, concatenated frames, and
//! typed errors for frames that are corrupt or of the wrong size.

use serde_json::{Value, json};
use std::borrow::Cow;
use std::io::Write;
use std::num::NonZeroU64;
use zarrflow::codec::{CodecError, CodecPipeline};
use zarrs::array::{ArrayBytes, ArrayToBytesCodecTraits, CodecOptions, DataType, FillValue};
use zarrs::metadata::v3::MetadataV3;

const SHAPE: [u64; 3] = [5, 6, 7];

fn pipeline(v: Value) -> CodecPipeline {
    let metas: Vec<MetadataV3> = serde_json::from_value(v).unwrap();
    CodecPipeline::from_metadata(&metas).unwrap()
}

fn zstd_chain() -> CodecPipeline {
    pipeline(json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 3, "checksum": false}}
    ]))
}

fn u16_type() -> (DataType, FillValue) {
    (zarrs::array::data_type::uint16(), FillValue::from(0u16))
}

/// Deterministic bytes of `n` elements of `elem` bytes; every byte a valid value for
/// `bool` when `elem_is_bool`.
fn data(n: usize, elem: usize, elem_is_bool: bool) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n * elem)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if elem_is_bool {
                (x & 1) as u8
            } else if i % 5 == 0 {
                0
            } else {
                x as u8
            }
        })
        .collect()
}

fn nz(s: &[u64]) -> Vec<NonZeroU64> {
    s.iter().map(|&v| NonZeroU64::new(v).unwrap()).collect()
}

fn cells() -> usize {
    SHAPE.iter().product::<u64>() as usize
}

#[test]
fn direct_chains_decode_what_zarrs_encodes() {
    let types: Vec<(DataType, FillValue, bool)> = vec![
        (
            zarrs::array::data_type::uint8(),
            FillValue::from(0u8),
            false,
        ),
        (
            zarrs::array::data_type::bool(),
            FillValue::from(false),
            true,
        ),
        (
            zarrs::array::data_type::int16(),
            FillValue::from(0i16),
            false,
        ),
        (
            zarrs::array::data_type::uint32(),
            FillValue::from(0u32),
            false,
        ),
        (
            zarrs::array::data_type::float64(),
            FillValue::from(0f64),
            false,
        ),
        (
            zarrs::array::data_type::complex64(),
            FillValue::from(num_complex::Complex32::new(0.0, 0.0)),
            false,
        ),
    ];
    let chains = [
        json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 19, "checksum": true}}]),
        json!([{"name": "bytes", "configuration": {"endian": "big"}},
               {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]),
    ];
    for (dt, fv, is_bool) in &types {
        let elem = dt.fixed_size().unwrap();
        let raw = data(cells(), elem, *is_bool);
        for chain in &chains {
            let metas: Vec<MetadataV3> = serde_json::from_value(chain.clone()).unwrap();
            let zchain = zarrs::array::CodecChain::from_metadata(&metas).unwrap();
            let encoded = zchain
                .encode(
                    ArrayBytes::new_flen(Cow::Borrowed(&raw[..])),
                    &nz(&SHAPE),
                    dt,
                    fv,
                    &CodecOptions::default(),
                )
                .unwrap();
            let p = CodecPipeline::from_metadata(&metas).unwrap();
            let what = format!("{dt:?} through {chain}");
            let decoded = p.decode(&encoded, &SHAPE, dt, fv, "c/0").unwrap();
            assert_eq!(decoded, raw, "decode: {what}");
            let mut into = vec![0xAAu8; raw.len()];
            p.decode_into(&encoded, &SHAPE, dt, fv, "c/0", &mut into)
                .unwrap();
            assert_eq!(into, raw, "decode_into: {what}");
        }
    }
}

#[test]
fn frames_without_a_declared_size_and_concatenated_frames_decode() {
    let (dt, fv) = u16_type();
    let raw = data(cells(), 2, false);
    let p = zstd_chain();
    // a streaming encoder writes no content size in the frame header
    let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    enc.write_all(&raw).unwrap();
    let streamed = enc.finish().unwrap();
    assert_eq!(
        zstd::zstd_safe::get_frame_content_size(&streamed).unwrap(),
        None,
        "the test frame must not declare its size"
    );
    assert_eq!(p.decode(&streamed, &SHAPE, &dt, &fv, "c/0").unwrap(), raw);
    // two frames one after the other decode to the concatenation
    let half = raw.len() / 2;
    let mut two = zstd::bulk::compress(&raw[..half], 1).unwrap();
    two.extend(zstd::bulk::compress(&raw[half..], 1).unwrap());
    let mut into = vec![0u8; raw.len()];
    p.decode_into(&two, &SHAPE, &dt, &fv, "c/0", &mut into)
        .unwrap();
    assert_eq!(into, raw);
}

#[test]
fn wrong_sizes_and_corrupt_frames_are_typed_errors() {
    let (dt, fv) = u16_type();
    let n = cells() * 2;
    let p = zstd_chain();
    // a frame declaring more bytes than the chunk holds
    let longer = zstd::bulk::compress(&vec![7u8; n + 2], 1).unwrap();
    match p.decode(&longer, &SHAPE, &dt, &fv, "c/1") {
        Err(CodecError::WrongSize { key, expected, got }) => {
            assert!(key.contains("c/1") && key.contains("content size"), "{key}");
            assert_eq!((expected, got), (n as u64, n as u64 + 2));
        }
        other => panic!("{other:?}"),
    }
    // ... or producing more without declaring it: refused, the destination is never grown
    let mut enc = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    enc.write_all(&vec![7u8; n + 2]).unwrap();
    let undeclared = enc.finish().unwrap();
    let err = p.decode(&undeclared, &SHAPE, &dt, &fv, "c/2").unwrap_err();
    assert!(err.to_string().contains("c/2"), "{err}");
    // a frame holding fewer bytes
    let shorter = zstd::bulk::compress(&vec![7u8; n - 2], 1).unwrap();
    let mut into = vec![0u8; n];
    match p.decode_into(&shorter, &SHAPE, &dt, &fv, "c/3", &mut into) {
        Err(CodecError::WrongSize { expected, got, .. }) => {
            assert_eq!((expected, got), (n as u64, n as u64 - 2))
        }
        other => panic!("{other:?}"),
    }
    // corrupt bytes: a flipped byte under the frame checksum, a truncated frame
    let mut compressor = zstd::bulk::Compressor::new(3).unwrap();
    compressor.include_checksum(true).unwrap();
    let mut corrupt = compressor.compress(&data(cells(), 2, false)).unwrap();
    let mid = corrupt.len() / 2;
    corrupt[mid] ^= 0x5A;
    let err = p.decode(&corrupt, &SHAPE, &dt, &fv, "c/4").unwrap_err();
    assert!(matches!(err, CodecError::Codec { .. }), "{err:?}");
    assert!(err.to_string().contains("c/4"), "{err}");
    let whole = zstd::bulk::compress(&vec![3u8; n], 3).unwrap();
    let err = p
        .decode(&whole[..whole.len() - 3], &SHAPE, &dt, &fv, "c/4")
        .unwrap_err();
    assert!(matches!(err, CodecError::Codec { .. }), "{err:?}");
    let err = p.decode(b"not zstd", &SHAPE, &dt, &fv, "c/5").unwrap_err();
    assert!(matches!(err, CodecError::Codec { .. }), "{err:?}");
    // the thread's reused decompressor still works after the failures
    let good = zstd::bulk::compress(&vec![1u8; n], 3).unwrap();
    assert_eq!(
        p.decode(&good, &SHAPE, &dt, &fv, "c/6").unwrap(),
        vec![1u8; n]
    );
    // a destination of the wrong size
    let mut small = vec![0u8; n - 1];
    let err = p
        .decode_into(&good, &SHAPE, &dt, &fv, "c/7", &mut small)
        .unwrap_err();
    assert!(matches!(err, CodecError::WrongSize { .. }), "{err:?}");
    // raw chunks of the wrong length
    let raw_chain = pipeline(json!([{"name": "bytes", "configuration": {"endian": "little"}}]));
    let err = raw_chain
        .decode(&vec![0u8; n + 1], &SHAPE, &dt, &fv, "c/8")
        .unwrap_err();
    assert!(matches!(err, CodecError::WrongSize { .. }), "{err:?}");
}

/// A zstd frame without a declared size made of `blocks` raw blocks of one byte each: its
/// block bound (128 KiB a block) is far above what it holds.
fn many_block_frame(blocks: usize) -> Vec<u8> {
    // magic, frame header descriptor (no content size, not single-segment), window 128 KiB
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
    for i in 0..blocks {
        let last = u8::from(i + 1 == blocks);
        // block header: last bit, type raw (0), size 1
        f.extend_from_slice(&[0x08 | last, 0x00, 0x00, 7]);
    }
    f
}

#[test]
fn chains_decoded_by_zarrs_accept_undeclared_sizes_within_bounds() {
    // big-endian bytes: not a direct chain; zarrflow decodes the zstd stage (bounded), zarrs
    // the bytes codec
    let p = pipeline(json!([
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "zstd", "configuration": {"level": 3, "checksum": false}}
    ]));
    let (dt, fv) = u16_type();
    let shape = [8u64, 8];
    let raw = vec![5u8; 128];
    let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    enc.write_all(&raw).unwrap();
    let streamed = enc.finish().unwrap();
    assert_eq!(p.decode(&streamed, &shape, &dt, &fv, "c/0").unwrap(), raw);
    // 128 one-byte blocks: 128 bytes of data, a 16 MiB block bound
    let hostile = many_block_frame(128);
    assert_eq!(
        zstd::bulk::decompress(&hostile, 128).unwrap(),
        vec![7u8; 128]
    );
    // decoded by zarrflow into a buffer of the chunk's size (plus one byte), never the
    // 16 MiB block bound
    assert_eq!(
        p.decode(&hostile, &shape, &dt, &fv, "c/1").unwrap(),
        vec![7u8; 128]
    );
    // the direct path decodes it into the chunk's buffer, nothing more
    assert_eq!(
        zstd_chain()
            .decode(&hostile, &shape, &dt, &fv, "c/1")
            .unwrap(),
        vec![7u8; 128]
    );
}
