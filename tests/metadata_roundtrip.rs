//! Metadata round trips (read → write → read) on hand-written documents, and bad input.

use serde_json::{Value, json};
use zarrflow::metadata::{
    ArrayMetadata, ArraySpec, ChunkKeyEncodingSpec, GroupMetadata, MetadataError, NodeMetadata,
};

fn array(dtype: Value, fill: Value) -> Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": [4, 6], "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {}
    })
}

/// read → write → read: equal metadata, bit-exact fill value; returns the written value.
fn round_trip(doc: &Value) -> Value {
    let a = ArrayMetadata::parse(doc.to_string().as_bytes(), "a/zarr.json")
        .unwrap_or_else(|e| panic!("{doc}: {e}"));
    let written = a.to_json();
    let b = ArrayMetadata::parse(&written, "a/zarr.json").unwrap();
    assert_eq!(a.to_value(), b.to_value());
    assert_eq!(
        a.fill_value().as_ne_bytes(),
        b.fill_value().as_ne_bytes(),
        "{doc}"
    );
    assert_eq!(a.shape(), b.shape());
    assert_eq!(a.data_type().to_string(), b.data_type().to_string());
    let text = String::from_utf8(written).unwrap();
    assert!(!text.contains("_zarrs"));
    b.to_value()
}

#[test]
fn every_core_data_type() {
    let cases = [
        (json!("bool"), json!(true), vec![1u8]),
        (json!("int8"), json!(-128), vec![0x80]),
        (json!("int16"), json!(-2), (-2i16).to_ne_bytes().to_vec()),
        (
            json!("int32"),
            json!(2147483647),
            i32::MAX.to_ne_bytes().to_vec(),
        ),
        (
            json!("int64"),
            json!(-9223372036854775808i64),
            i64::MIN.to_ne_bytes().to_vec(),
        ),
        (
            json!("int64"),
            json!(9223372036854775807i64),
            i64::MAX.to_ne_bytes().to_vec(),
        ),
        (json!("uint8"), json!(255), vec![255]),
        (
            json!("uint16"),
            json!(65535),
            u16::MAX.to_ne_bytes().to_vec(),
        ),
        (json!("uint32"), json!(7), 7u32.to_ne_bytes().to_vec()),
        (
            json!("uint64"),
            json!(18446744073709551615u64),
            u64::MAX.to_ne_bytes().to_vec(),
        ),
        (
            json!("float16"),
            json!("NaN"),
            0x7e00u16.to_ne_bytes().to_vec(),
        ),
        (
            json!("float16"),
            json!(1.5),
            0x3e00u16.to_ne_bytes().to_vec(),
        ),
        (
            json!("float32"),
            json!("NaN"),
            0x7fc0_0000u32.to_ne_bytes().to_vec(),
        ),
        (
            json!("float32"),
            json!("Infinity"),
            f32::INFINITY.to_ne_bytes().to_vec(),
        ),
        (
            json!("float32"),
            json!("-Infinity"),
            f32::NEG_INFINITY.to_ne_bytes().to_vec(),
        ),
        (
            json!("float32"),
            json!("0x7fc00001"),
            0x7fc0_0001u32.to_ne_bytes().to_vec(),
        ),
        (
            json!("float32"),
            json!("0xffc00000"),
            0xffc0_0000u32.to_ne_bytes().to_vec(),
        ),
        (json!("float32"), json!(0.1), 0.1f32.to_ne_bytes().to_vec()),
        (
            json!("float32"),
            json!(-0.0),
            (-0.0f32).to_ne_bytes().to_vec(),
        ),
        (
            json!("float64"),
            json!("NaN"),
            0x7ff8_0000_0000_0000u64.to_ne_bytes().to_vec(),
        ),
        (
            json!("float64"),
            json!("0x7ff0000000000001"),
            0x7ff0_0000_0000_0001u64.to_ne_bytes().to_vec(),
        ),
        (
            json!("float64"),
            json!(1e300),
            1e300f64.to_ne_bytes().to_vec(),
        ),
        (
            json!("float64"),
            json!(5e-324),
            5e-324f64.to_ne_bytes().to_vec(),
        ),
        (
            json!("complex64"),
            json!([1.0, "NaN"]),
            [1.0f32.to_ne_bytes(), 0x7fc0_0000u32.to_ne_bytes()].concat(),
        ),
        (
            json!("complex128"),
            json!(["-Infinity", 2.5]),
            [f64::NEG_INFINITY.to_ne_bytes(), 2.5f64.to_ne_bytes()].concat(),
        ),
        (json!("r8"), json!([7]), vec![7]),
        (json!("r16"), json!([1, 2]), vec![1, 2]),
    ];
    for (dt, fill, bytes) in cases {
        let doc = array(dt.clone(), fill.clone());
        let a = ArrayMetadata::parse(doc.to_string().as_bytes(), "a/zarr.json")
            .unwrap_or_else(|e| panic!("{dt} {fill}: {e}"));
        assert_eq!(a.fill_value().as_ne_bytes(), &bytes[..], "{dt} {fill}");
        let out = round_trip(&doc);
        // written canonically, the document is unchanged (these inputs are canonical), except
        // that a float32 number is written as the exact double of the float32 value (as
        // TensorStore and zarr-python do)
        if dt == json!("float32") && fill == json!(0.1) {
            assert_eq!(out["fill_value"], json!(0.10000000149011612));
        } else {
            assert_eq!(out["fill_value"], fill, "{dt}");
        }
    }
}

#[test]
fn canonical_documents_are_written_unchanged() {
    let docs = [
        json!({"zarr_format": 3, "node_type": "array", "shape": [10000, 1000], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1024, 1024]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": "NaN",
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [64, 64],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": "end"}}],
            "attributes": {"units": "K"},
            "dimension_names": ["t", null],
            "storage_transformers": []}),
        json!({"zarr_format": 3, "node_type": "array", "shape": [], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}},
            "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
            "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}], "attributes": {},
            "storage_transformers": []}),
        json!({"zarr_format": 3, "node_type": "array", "shape": [10, 10, 30], "data_type": "uint8",
            "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [4, [1, 2, 3, 4], [[4, 2], [1, 3], 19]]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
            "fill_value": 3, "codecs": [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}}],
            "attributes": {"nested": {"a": [1, 2, {"b": null}]}},
            "dimension_names": ["z", "y", "x"],
            "storage_transformers": [],
            "extension_thing": {"must_understand": false, "value": 1}}),
    ];
    for doc in docs {
        assert_eq!(round_trip(&doc), doc);
    }
}

#[test]
fn accepted_non_canonical_forms_are_canonicalised() {
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": {"name": "uint16"},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": 0, "codecs": ["bytes", {"name": "crc32c", "must_understand": true}]});
    let out = round_trip(&doc);
    assert_eq!(out["data_type"], json!("uint16"));
    assert_eq!(
        out["chunk_key_encoding"],
        json!({"name": "default", "configuration": {"separator": "/"}})
    );
    assert_eq!(
        out["codecs"],
        json!([{"name": "bytes"}, {"name": "crc32c"}])
    );
    // v2 default separator is "."
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "v2"}, "fill_value": 0, "codecs": [{"name": "bytes"}]});
    assert_eq!(
        round_trip(&doc)["chunk_key_encoding"],
        json!({"name": "v2", "configuration": {"separator": "."}})
    );
    // hex NaN equal to the canonical NaN is written as "NaN", bits unchanged
    let out = round_trip(&array(json!("float32"), json!("0x7fc00000")));
    assert_eq!(out["fill_value"], json!("NaN"));
}

#[test]
fn chunk_keys_all_encodings() {
    let enc = |name: &str, sep: Option<&str>, rank0: bool| {
        let mut cke = json!({"name": name});
        if let Some(s) = sep {
            cke["configuration"] = json!({"separator": s});
        }
        let (shape, chunks) = if rank0 {
            (json!([]), json!([]))
        } else {
            (json!([10, 30, 50]), json!([1, 1, 1]))
        };
        let doc = json!({"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": cke, "fill_value": 0, "codecs": [{"name": "bytes"}]});
        let a = ArrayMetadata::parse(doc.to_string().as_bytes(), "k").unwrap();
        if rank0 {
            a.chunk_key(&[])
        } else {
            a.chunk_key(&[1, 23, 45])
        }
    };
    assert_eq!(enc("default", None, false), "c/1/23/45");
    assert_eq!(enc("default", Some("/"), false), "c/1/23/45");
    assert_eq!(enc("default", Some("."), false), "c.1.23.45");
    assert_eq!(enc("v2", None, false), "1.23.45");
    assert_eq!(enc("v2", Some("."), false), "1.23.45");
    assert_eq!(enc("v2", Some("/"), false), "1/23/45");
    assert_eq!(enc("default", None, true), "c");
    assert_eq!(enc("default", Some("."), true), "c");
    assert_eq!(enc("v2", None, true), "0");
    assert_eq!(enc("v2", Some("/"), true), "0");
}

#[test]
fn rectilinear_expansion() {
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [10, 6, 6, 6, 12], "data_type": "uint8",
        "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
            "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]});
    let a = ArrayMetadata::parse(doc.to_string().as_bytes(), "k").unwrap();
    let zarrflow::metadata::ChunkGridSpec::Rectilinear { dimensions, .. } = a.chunk_grid() else {
        panic!()
    };
    // the grids keep run-length pairs; their edges, listed
    let edges: Vec<Vec<u64>> = dimensions
        .iter()
        .map(|g| {
            use zarrflow::grid::DimensionGrid;
            (0..g.num_chunks() as i64)
                .map(|c| g.chunk_size(c).unwrap())
                .collect()
        })
        .collect();
    assert_eq!(edges[0], vec![4, 4, 4]);
    assert_eq!(edges[1], vec![1, 2, 3]);
    assert_eq!(edges[2], vec![4, 4]);
    assert_eq!(edges[3], vec![1, 1, 1, 3]);
    assert_eq!(a.chunk_grid().grid_shape(a.shape()), vec![3, 3, 2, 4, 3]);
    assert_eq!(
        a.chunk_grid().chunk_shape(&[2, 1, 0, 3, 0]),
        Some(vec![4, 2, 4, 3, 4])
    );
    round_trip(&doc);
    // edges that do not cover the extent
    let mut bad = doc.clone();
    bad["chunk_grid"]["configuration"]["chunk_shapes"][1] = json!([1, 2]);
    let err = ArrayMetadata::parse(bad.to_string().as_bytes(), "k").unwrap_err();
    assert!(
        matches!(err, MetadataError::InvalidField { ref field, .. } if field == "chunk_grid.configuration.chunk_shapes[1]"),
        "{err}"
    );
}

#[test]
fn groups_and_consolidated_metadata() {
    let g = json!({"zarr_format": 3, "node_type": "group", "attributes": {"title": "x"}});
    let m = GroupMetadata::parse(g.to_string().as_bytes(), "zarr.json").unwrap();
    assert_eq!(m.to_value(), g);
    let minimal = json!({"zarr_format": 3, "node_type": "group"});
    assert_eq!(
        GroupMetadata::parse(minimal.to_string().as_bytes(), "zarr.json")
            .unwrap()
            .to_value()["attributes"],
        json!({})
    );
    let a = array(json!("int16"), json!(0));
    let cons = json!({"zarr_format": 3, "node_type": "group", "attributes": {},
        "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {
            "a": a,
            "child": {"zarr_format": 3, "node_type": "group", "attributes": {},
                "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {"grandchild": {"zarr_format": 3, "node_type": "group", "attributes": {}}}}},
            "child/grandchild": {"zarr_format": 3, "node_type": "group", "attributes": {}}}}});
    let m = GroupMetadata::parse(cons.to_string().as_bytes(), "zarr.json").unwrap();
    let c = m.consolidated.as_ref().unwrap();
    assert_eq!(c.len(), 3);
    assert!(matches!(c.get("a"), Some(NodeMetadata::Array(_))));
    assert!(matches!(
        c.get("child/grandchild"),
        Some(NodeMetadata::Group(_))
    ));
    let again = GroupMetadata::parse(&m.to_json(), "zarr.json").unwrap();
    assert_eq!(again.to_value(), m.to_value());
    // zarr-python <= 3.1.3 wrote null
    let nul = json!({"zarr_format": 3, "node_type": "group", "attributes": {}, "consolidated_metadata": null});
    assert!(
        GroupMetadata::parse(nul.to_string().as_bytes(), "zarr.json")
            .unwrap()
            .consolidated
            .is_none()
    );
}

fn parse_err(doc: &Value) -> MetadataError {
    ArrayMetadata::parse(doc.to_string().as_bytes(), "grp/arr/zarr.json").unwrap_err()
}

#[test]
fn bad_input_typed_errors() {
    // malformed JSON
    let err = ArrayMetadata::parse(b"{\"zarr_format\": 3,", "grp/arr/zarr.json").unwrap_err();
    assert!(
        matches!(err, MetadataError::MalformedJson { ref key, .. } if key == "grp/arr/zarr.json"),
        "{err}"
    );
    assert!(err.to_string().contains("grp/arr/zarr.json"));
    let err = ArrayMetadata::parse(b"[1, 2]", "k").unwrap_err();
    assert!(matches!(err, MetadataError::MalformedJson { .. }), "{err}");

    // unknown top-level fields
    let mut d = array(json!("uint8"), json!(0));
    d["foo"] = json!(1);
    let err = parse_err(&d);
    assert!(
        matches!(err, MetadataError::UnknownField { ref field, ref key } if field == "foo" && key == "grp/arr/zarr.json"),
        "{err}"
    );
    d["foo"] = json!({"must_understand": true});
    assert!(matches!(parse_err(&d), MetadataError::UnknownField { .. }));
    d["foo"] = json!({"bar": 1});
    assert!(matches!(parse_err(&d), MetadataError::UnknownField { .. }));
    d["foo"] = json!({"must_understand": false, "bar": 1});
    ArrayMetadata::parse(d.to_string().as_bytes(), "k").unwrap();

    // must_understand:false never allowed for data type, grid, key encoding
    for f in ["data_type", "chunk_grid", "chunk_key_encoding"] {
        let mut d = array(json!({"name": "uint8"}), json!(0));
        d[f]["must_understand"] = json!(false);
        let err = parse_err(&d);
        assert!(
            matches!(err, MetadataError::MustUnderstandNotAllowed { ref field, .. } if field == f),
            "{f}: {err}"
        );
    }

    // unsupported data type
    let err = parse_err(&array(json!("float128"), json!(0)));
    assert!(
        matches!(err, MetadataError::UnsupportedDataType { ref name, .. } if name == "float128"),
        "{err}"
    );
    assert!(err.to_string().contains("data_type"));

    // unsupported codec
    let mut d = array(json!("uint8"), json!(0));
    d["codecs"] = json!([{"name": "bytes"}, {"name": "lzma9000"}]);
    let err = parse_err(&d);
    assert!(matches!(err, MetadataError::Codec { .. }), "{err}");
    assert!(
        err.to_string().contains("codecs[1]") && err.to_string().contains("lzma9000"),
        "{err}"
    );

    // shard shape not divisible by inner chunk shape
    let mut d = array(json!("uint8"), json!(0));
    d["codecs"] = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2],
        "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]);
    let err = parse_err(&d);
    assert!(
        matches!(err, MetadataError::Codec { source: zarrflow::codec::CodecError::ShardShapeNotDivisible { ref field, .. }, .. } if field == "codecs[0].configuration.chunk_shape"),
        "{err}"
    );
    assert!(err.to_string().contains("grp/arr/zarr.json"));

    // wrong rank of dimension names
    let mut d = array(json!("uint8"), json!(0));
    d["dimension_names"] = json!(["x"]);
    let err = parse_err(&d);
    assert!(
        matches!(
            err,
            MetadataError::DimensionNamesRank {
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("dimension_names"));

    // invalid fill values
    for (dt, fill) in [
        (json!("uint8"), json!(256)),
        (json!("int64"), json!(1.5)),
        (json!("bool"), json!(0)),
        (json!("float32"), json!("nan")),
    ] {
        let err = parse_err(&array(dt.clone(), fill.clone()));
        assert!(
            matches!(err, MetadataError::InvalidFillValue { .. }),
            "{dt} {fill}: {err}"
        );
    }

    // missing fields, wrong format, wrong node type
    let mut d = array(json!("uint8"), json!(0));
    d.as_object_mut().unwrap().remove("codecs");
    assert!(
        matches!(parse_err(&d), MetadataError::MissingField { ref field, .. } if field == "codecs")
    );
    let mut d = array(json!("uint8"), json!(0));
    d["zarr_format"] = json!(2);
    assert!(matches!(
        parse_err(&d),
        MetadataError::UnsupportedZarrFormat { .. }
    ));
    let mut d = array(json!("uint8"), json!(0));
    d["node_type"] = json!("group");
    assert!(matches!(parse_err(&d), MetadataError::WrongNodeType { .. }));
    let mut d = array(json!("uint8"), json!(0));
    d["shape"] = json!([-1, 2]);
    assert!(
        matches!(parse_err(&d), MetadataError::InvalidField { ref field, .. } if field == "shape")
    );

    // storage transformers
    let mut d = array(json!("uint8"), json!(0));
    d["storage_transformers"] = json!([{"name": "sharding"}]);
    assert!(matches!(
        parse_err(&d),
        MetadataError::UnsupportedStorageTransformer { .. }
    ));
    d["storage_transformers"] = json!([]);
    ArrayMetadata::parse(d.to_string().as_bytes(), "k").unwrap();

    // chunk grid / key encoding problems
    let mut d = array(json!("uint8"), json!(0));
    d["chunk_grid"] = json!({"name": "regular", "configuration": {"chunk_shape": [2]}});
    assert!(
        matches!(parse_err(&d), MetadataError::InvalidField { ref field, .. } if field == "chunk_grid.configuration.chunk_shape")
    );
    d["chunk_grid"] = json!({"name": "hexagonal"});
    assert!(matches!(
        parse_err(&d),
        MetadataError::UnsupportedChunkGrid { .. }
    ));
    let mut d = array(json!("uint8"), json!(0));
    d["chunk_key_encoding"] = json!({"name": "default", "configuration": {"separator": "-"}});
    assert!(
        matches!(parse_err(&d), MetadataError::InvalidField { ref field, .. } if field == "chunk_key_encoding.configuration.separator")
    );
    d["chunk_key_encoding"] = json!({"name": "zarrs.default_suffix"});
    assert!(matches!(
        parse_err(&d),
        MetadataError::UnsupportedChunkKeyEncoding { .. }
    ));
}

#[test]
fn creation_spec_defaults_and_validation() {
    let a = ArraySpec::new(vec![100, 200], "uint16")
        .shard_shape(vec![50, 100])
        .inner_chunk_shape(vec![10, 20])
        .dimension_names([Some("y"), None])
        .fill_value(json!(7))
        .unwrap()
        .build()
        .unwrap();
    let v = a.to_value();
    assert_eq!(
        v["codecs"],
        json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [10, 20],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}])
    );
    assert_eq!(v["fill_value"], json!(7));
    assert_eq!(v["dimension_names"], json!(["y", null]));
    assert_eq!(a.chunk_key(&[1, 1]), "c/1/1");
    // defaults per type are written out
    let f = ArraySpec::new(vec![3], "float32").build().unwrap();
    assert_eq!(f.to_value()["fill_value"], json!(0.0));
    let b = ArraySpec::new(vec![3], "bool")
        .chunk_key_encoding(ChunkKeyEncodingSpec::V2 { separator: '/' })
        .build()
        .unwrap();
    assert_eq!(b.to_value()["fill_value"], json!(false));
    // validation
    let err = ArraySpec::new(vec![100], "uint8")
        .shard_shape(vec![50])
        .inner_chunk_shape(vec![7])
        .build()
        .unwrap_err();
    assert!(
        matches!(err, MetadataError::InvalidSpec { ref field, .. } if field == "inner_chunk_shape"),
        "{err}"
    );
    let err = ArraySpec::new(vec![100, 3], "uint8")
        .dimension_names([None::<&str>])
        .build()
        .unwrap_err();
    assert!(
        matches!(err, MetadataError::InvalidSpec { ref field, .. } if field == "dimension_names"),
        "{err}"
    );
    let err = ArraySpec::new(vec![100], "uint8")
        .fill_value(json!(300))
        .unwrap()
        .build()
        .unwrap_err();
    assert!(
        matches!(err, MetadataError::InvalidFillValue { .. }),
        "{err}"
    );
    let err = ArraySpec::new(vec![100], "nope").build().unwrap_err();
    assert!(
        matches!(err, MetadataError::UnsupportedDataType { .. }),
        "{err}"
    );
}

#[test]
fn absurd_chunk_sizes_are_errors_not_panics() {
    let mut d = array(json!("float64"), json!(0));
    d["shape"] = json!([u64::MAX, u64::MAX]);
    d["chunk_grid"] = json!({"name": "regular", "configuration": {"chunk_shape": [u64::MAX, 4]}});
    let err = parse_err(&d);
    assert!(
        matches!(err, MetadataError::InvalidField { ref field, .. } if field == "chunk_grid.configuration.chunk_shape"),
        "{err}"
    );
    // too many inner chunks per shard
    let mut d = array(json!("uint8"), json!(0));
    d["shape"] = json!([1u64 << 40]);
    d["chunk_grid"] = json!({"name": "regular", "configuration": {"chunk_shape": [1u64 << 31]}});
    d["codecs"] = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [1],
        "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]);
    let err = parse_err(&d);
    assert!(
        matches!(
            err,
            MetadataError::Codec {
                source: zarrflow::codec::CodecError::TooManyShardEntries { .. },
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn registered_extension_data_types() {
    let cases = [
        (json!("string"), json!("")),
        (json!("string"), json!("fill ü")),
        (json!("bytes"), json!([1, 2, 3])),
        (
            json!({"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}),
            json!("NaT"),
        ),
        (
            json!({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 10}}),
            json!(-5),
        ),
    ];
    for (dt, fill) in cases {
        let mut doc = array(dt.clone(), fill.clone());
        if dt == json!("string") {
            doc["codecs"] = json!([{"name": "vlen-utf8"}]);
        } else if dt == json!("bytes") {
            doc["codecs"] = json!([{"name": "vlen-bytes"}]);
        }
        round_trip(&doc);
    }
}

#[test]
fn rectilinear_with_sharding_is_validated_per_edge() {
    let mk = |chunk_shapes: Value| {
        json!({"zarr_format": 3, "node_type": "array", "shape": [12, 8], "data_type": "uint8",
            "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4],
                "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]})
    };
    ArrayMetadata::parse(mk(json!([[4, 6, 2], 8])).to_string().as_bytes(), "k").unwrap();
    let err =
        ArrayMetadata::parse(mk(json!([[4, 5, 3], 8])).to_string().as_bytes(), "k").unwrap_err();
    assert!(
        matches!(
            err,
            MetadataError::Codec {
                source: zarrflow::codec::CodecError::ShardShapeNotDivisible { .. },
                ..
            }
        ),
        "{err}"
    );
}
