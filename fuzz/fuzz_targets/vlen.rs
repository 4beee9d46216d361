//! Variable-length chunks (`vlen-utf8` / `vlen-bytes`, numcodecs' format): the first byte picks
//! a layout (string or bytes, v3 or v2, the chunk's element count, a compressor or none), the
//! rest is a stored chunk. `codec::vlen::check_interleaved` accepts exactly the well-formed
//! encodings a reference walk accepts; the chunk decodes through the pipeline (handles of the
//! right size) exactly when the check passes (uncompressed layouts), and never panics.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use zarrflow::codec::vlen::{VlenKind, check_interleaved};
use zarrflow::metadata::{ArrayMetadata, v2};

/// A chunk's array: its metadata, the chunk's shape, string or bytes, compressed or not.
struct Layout {
    meta: ArrayMetadata,
    shape: Vec<u64>,
    kind: VlenKind,
    compressed: bool,
}

fn v3(data_type: &str, codec: &str, chunk: &str, extra: &str) -> String {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":{chunk},"data_type":"{data_type}",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{chunk}}}}},
        "chunk_key_encoding":{{"name":"default"}},"fill_value":"",
        "codecs":[{{"name":"{codec}"}}{extra}]}}"#
    )
}

fn v2(filter: &str, chunk: &str, compressor: &str) -> String {
    format!(
        r#"{{"zarr_format":2,"shape":{chunk},"chunks":{chunk},"dtype":"|O","fill_value":"",
        "order":"C","filters":[{{"id":"{filter}"}}],"compressor":{compressor}}}"#
    )
}

fn layouts() -> &'static Vec<Layout> {
    static L: OnceLock<Vec<Layout>> = OnceLock::new();
    L.get_or_init(|| {
        let zstd = r#",{"name":"zstd","configuration":{"level":1,"checksum":false}}"#;
        let cases: Vec<(String, &str, Vec<u64>, VlenKind, bool)> = vec![
            (
                v3("string", "vlen-utf8", "[1]", ""),
                "zarr.json",
                vec![1],
                VlenKind::Utf8,
                false,
            ),
            (
                v3("string", "vlen-utf8", "[3]", ""),
                "zarr.json",
                vec![3],
                VlenKind::Utf8,
                false,
            ),
            (
                v3("string", "vlen-utf8", "[2,3]", ""),
                "zarr.json",
                vec![2, 3],
                VlenKind::Utf8,
                false,
            ),
            (
                v3("bytes", "vlen-bytes", "[4]", ""),
                "zarr.json",
                vec![4],
                VlenKind::Bytes,
                false,
            ),
            (
                v3("bytes", "vlen-bytes", "[2,2]", ""),
                "zarr.json",
                vec![2, 2],
                VlenKind::Bytes,
                false,
            ),
            (
                v3("string", "vlen-utf8", "[3]", zstd),
                "zarr.json",
                vec![3],
                VlenKind::Utf8,
                true,
            ),
            (
                v2("vlen-utf8", "[3]", "null"),
                ".zarray",
                vec![3],
                VlenKind::Utf8,
                false,
            ),
            (
                v2("vlen-bytes", "[2]", "null"),
                ".zarray",
                vec![2],
                VlenKind::Bytes,
                false,
            ),
            (
                v2("vlen-bytes", "[5]", r#"{"id":"zlib","level":1}"#),
                ".zarray",
                vec![5],
                VlenKind::Bytes,
                true,
            ),
        ];
        cases
            .into_iter()
            .map(|(json, name, shape, kind, compressed)| Layout {
                meta: if name == ".zarray" {
                    v2::parse_array(json.as_bytes(), None, "fuzz/.zarray", "fuzz/.zattrs")
                } else {
                    ArrayMetadata::parse(json.as_bytes(), "fuzz/zarr.json")
                }
                .expect("valid layout"),
                shape,
                kind,
                compressed,
            })
            .collect()
    })
}

/// The reference walk: the elements of a well-formed encoding of `n` elements, or None.
fn walk(bytes: &[u8], n: u64, kind: VlenKind) -> Option<Vec<&[u8]>> {
    let word = |at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    if word(0)? as u64 != n {
        return None;
    }
    let mut at = 4;
    let mut out = Vec::new();
    for _ in 0..n {
        let len = word(at)?;
        let v = bytes.get(at + 4..(at + 4).checked_add(len)?)?;
        if kind == VlenKind::Utf8 {
            std::str::from_utf8(v).ok()?;
        }
        out.push(v);
        at += 4 + len;
    }
    (at == bytes.len()).then_some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, chunk)) = data.split_first() else {
        return;
    };
    let layout = &layouts()[pick as usize % layouts().len()];
    let n: u64 = layout.shape.iter().product();
    let key = "fuzz/c/0";
    // the check, on the bytes as stored, and with the element count the layout's first
    // byte does not fix (any count): agrees with the reference walk
    for count in [n, u64::from(pick >> 4)] {
        for kind in [VlenKind::Utf8, VlenKind::Bytes] {
            let checked = check_interleaved(chunk, count, kind, key);
            assert_eq!(
                checked.is_ok(),
                walk(chunk, count, kind).is_some(),
                "{count} {kind:?} {checked:?}"
            );
        }
    }
    // the chunk through the pipeline: handles (8 bytes an element) or an error, never a panic
    let meta = &layout.meta;
    let decoded = meta.codecs().decode(
        chunk,
        &layout.shape,
        meta.data_type(),
        meta.fill_value(),
        key,
    );
    if let Ok(handles) = &decoded {
        assert_eq!(handles.len() as u64, n * 8);
    }
    if !layout.compressed {
        assert_eq!(
            decoded.is_ok(),
            walk(chunk, n, layout.kind).is_some(),
            "{decoded:?}"
        );
    }
});
