//! The command line's value parsers, as `zarrflow` runs them: shapes (`--shape`,
//! `--chunks`, `--shards`), `--codec`, `--dimension-names`, `--attributes`, `--dtype`
//! names and `--value` / `--fill-value` per data type. Any text gives a value or an error,
//! never a panic; a value that parses for a fixed-size type has exactly that type's size.
//!
//! The parsers live in the binary crate (`src/bin/zarrflow/parse.rs`), which a fuzz target
//! cannot depend on; the file is compiled into this target as it is, with the binary's
//! error type (`error.rs`) and its bounded echoes of arguments (`quote.rs`) beside it, so
//! the target always fuzzes the code the binary runs.
#![no_main]

#[path = "../../src/bin/zarrflow/error.rs"]
#[allow(dead_code)]
mod error;
#[path = "../../src/bin/zarrflow/parse.rs"]
#[allow(dead_code)]
mod parse;
#[path = "../../src/bin/zarrflow/quote.rs"]
#[allow(dead_code)]
mod quote;

use libfuzzer_sys::fuzz_target;
use zarrflow::metadata::ArraySpec;

/// Data type names the fuzzer pairs values with (the input can also name its own).
const NAMES: [&str; 16] = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "r16",
    "bfloat16",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // every stand-alone parser takes the whole text
    if let Ok(shape) = parse::parse_shape(text) {
        let printed: Vec<String> = shape.0.iter().map(u64::to_string).collect();
        assert_eq!(parse::parse_shape(&printed.join(",")), Ok(shape));
    }
    if let Ok(codec) = parse::parse_codec(text) {
        let _ = codec.codecs(Some(4));
        let _ = codec.codecs(None);
    }
    if let Ok(names) = parse::parse_dimension_names(text) {
        for rank in 0..4 {
            let _ = names.for_rank(rank);
        }
    }
    let _ = parse::parse_attributes(text);
    let _ = parse::parse_selection(text);
    // `NAME VALUE`: a data type named by the input, or `VALUE` with each known name
    let (name, value) = text.split_once(' ').unwrap_or(("", text));
    let mut names: Vec<&str> = NAMES.to_vec();
    if !name.is_empty() {
        names.push(name);
    }
    for name in names {
        let spec = ArraySpec::new(vec![1u64], name);
        let Ok(data_type) = parse::data_type_of(&spec.data_type) else {
            continue;
        };
        let Ok(bytes) = parse::value_bytes(&data_type, name, value) else {
            continue;
        };
        if let Some(size) = data_type.fixed_size() {
            assert_eq!(bytes.len(), size, "`{value}` as {name}");
        }
        // a value that parses is a fill value `create` accepts
        let _ = spec
            .fill_value(parse::bare_to_json(value))
            .map(|s| s.build());
    }
});
