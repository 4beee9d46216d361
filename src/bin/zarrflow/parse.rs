//! Every command-line value parser, in one place.
//!
//! Values that stand on their own (shapes, `--codec`, `--dimension-names`, `--attributes`)
//! are parsed by clap through the `value_parser`s in `cli.rs`: a bad one is a usage error
//! (exit status 2) that names the option and the value, e.g. ``invalid value '10,x' for
//! '--shape <SHAPE>': `x` is not a non-negative integer``. Values whose meaning depends on
//! the array (the data type's name, fill values and `--value`, the SELECTION string) are
//! parsed when the command runs, by the functions at the end of this file.

use serde_json::{Map, Value};
use zarrflow::index::Selection;
use zarrflow::metadata::CodecSpec;
use zarrs::array::DataType;
use zarrs::metadata::FillValueMetadata;
use zarrs::metadata::v3::MetadataV3;

use crate::error::{CliError, Result};
use crate::quote::quoted;

// ---- clap value parsers ----------------------------------------------------------------------

/// A shape: `100,200` or `[100, 200]`; empty for rank 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape(pub Vec<u64>);

/// Parses a shape (`--shape`, `--chunks`, `--shards`).
pub fn parse_shape(text: &str) -> Result<Shape, String> {
    let t = text.trim();
    let t = t
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(t)
        .trim();
    if t.is_empty() {
        return Ok(Shape(Vec::new()));
    }
    t.split(',')
        .map(|p| {
            p.trim().parse::<u64>().map_err(|_| {
                format!(
                    "`{}` is not a non-negative integer (expected e.g. 100,200)",
                    quoted(p.trim())
                )
            })
        })
        .collect::<Result<Vec<u64>, String>>()
        .map(Shape)
}

/// The compressor of `--codec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compressor {
    /// `none`.
    None,
    /// `zstd[:LEVEL]`.
    Zstd(i32),
    /// `gzip[:LEVEL]`.
    Gzip(u32),
    /// `zlib[:LEVEL]`: numcodecs' Zlib (`numcodecs.zlib`, as zarr-python 3 writes it).
    Zlib(u32),
    /// `bz2[:LEVEL]`: numcodecs' BZ2 (`numcodecs.bz2`).
    Bz2(u32),
    /// `lz4[:ACCELERATION]`: numcodecs' LZ4 (`numcodecs.lz4`; v2: the `lz4` compressor).
    Lz4(u32),
    /// `lzma[:PRESET]`: numcodecs' LZMA, `.xz` streams (`numcodecs.lzma`; v2: `lzma`).
    Lzma(u32),
    /// `blosc[:CNAME[:LEVEL]]`.
    Blosc {
        /// The blosc compressor.
        cname: &'static str,
        /// Its level.
        level: u32,
    },
}

/// The blosc compressors.
const BLOSC_CNAMES: [&str; 5] = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"];

impl Compressor {
    /// The (inner) chunk codecs: `bytes` (little-endian), then the compressor. Blosc's type
    /// size and shuffle follow `element_size`; without one (a copy of arrays of several
    /// types) they are left for the library to set per array.
    pub fn codecs(&self, element_size: Option<usize>) -> Vec<CodecSpec> {
        let mut codecs = vec![CodecSpec::bytes()];
        match *self {
            Compressor::None => {}
            Compressor::Zstd(level) => codecs.push(CodecSpec::zstd(level)),
            Compressor::Gzip(level) => codecs.push(CodecSpec::gzip(level)),
            Compressor::Zlib(level) => codecs.push(CodecSpec::new(
                "numcodecs.zlib",
                serde_json::json!({ "level": level }),
            )),
            Compressor::Bz2(level) => codecs.push(CodecSpec::new(
                "numcodecs.bz2",
                serde_json::json!({ "level": level }),
            )),
            Compressor::Lz4(acceleration) => codecs.push(CodecSpec::new(
                "numcodecs.lz4",
                serde_json::json!({ "acceleration": acceleration }),
            )),
            Compressor::Lzma(preset) => codecs.push(CodecSpec::new(
                "numcodecs.lzma",
                serde_json::json!({ "preset": preset }),
            )),
            Compressor::Blosc { cname, level } => codecs.push(match element_size {
                Some(size) => CodecSpec::blosc(cname, level, size),
                None => CodecSpec::blosc_per_array(cname, level),
            }),
        }
        codecs
    }
}

/// `text` as an integer in `range`; `what` (level, acceleration) names it in the error.
fn parse_level(
    what: &str,
    text: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, String> {
    text.parse::<i64>()
        .ok()
        .filter(|l| range.contains(l))
        .ok_or_else(|| {
            format!(
                "{what} `{}` is not an integer in {}..={}",
                quoted(text),
                range.start(),
                range.end()
            )
        })
}

/// Parses `--codec`: `zstd[:LEVEL]`, `gzip[:LEVEL]`, `zlib[:LEVEL]`, `bz2[:LEVEL]`,
/// `lz4[:ACCELERATION]`, `lzma[:PRESET]`, `blosc[:CNAME[:LEVEL]]` or `none`.
pub fn parse_codec(text: &str) -> Result<Compressor, String> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    Ok(match parts.as_slice() {
        ["none"] => Compressor::None,
        ["zstd", rest @ ..] if rest.len() <= 1 => Compressor::Zstd(match rest.first() {
            Some(l) => parse_level("level", l, -131072..=22)? as i32,
            None => 0,
        }),
        ["gzip", rest @ ..] if rest.len() <= 1 => Compressor::Gzip(match rest.first() {
            Some(l) => parse_level("level", l, 0..=9)? as u32,
            None => 5,
        }),
        ["zlib", rest @ ..] if rest.len() <= 1 => Compressor::Zlib(match rest.first() {
            Some(l) => parse_level("level", l, 0..=9)? as u32,
            None => 5,
        }),
        ["bz2", rest @ ..] if rest.len() <= 1 => Compressor::Bz2(match rest.first() {
            Some(l) => parse_level("level", l, 1..=9)? as u32,
            None => 9,
        }),
        // liblz4's acceleration: 1 (numcodecs' default) up to LZ4_ACCELERATION_MAX
        ["lz4", rest @ ..] if rest.len() <= 1 => Compressor::Lz4(match rest.first() {
            Some(a) => parse_level("acceleration", a, 1..=65537)? as u32,
            None => 1,
        }),
        // Python's lzma presets (6 when none is given)
        ["lzma", rest @ ..] if rest.len() <= 1 => Compressor::Lzma(match rest.first() {
            Some(p) => parse_level("preset", p, 0..=9)? as u32,
            None => 6,
        }),
        ["blosc", rest @ ..] if rest.len() <= 2 => {
            let name = rest.first().copied().unwrap_or("zstd");
            let cname = BLOSC_CNAMES
                .into_iter()
                .find(|c| *c == name)
                .ok_or_else(|| {
                    format!(
                        "unknown blosc compressor `{}` (blosclz, lz4, lz4hc, zlib or zstd)",
                        quoted(name)
                    )
                })?;
            let level = match rest.get(1) {
                Some(l) => parse_level("level", l, 0..=9)? as u32,
                None => 5,
            };
            Compressor::Blosc { cname, level }
        }
        _ => {
            return Err(
                "expected zstd[:LEVEL], gzip[:LEVEL], zlib[:LEVEL], bz2[:LEVEL], \
                 lz4[:ACCELERATION], lzma[:PRESET], blosc[:CNAME[:LEVEL]] or none"
                    .into(),
            );
        }
    })
}

/// `--dimension-names`: `y,x` (an empty name is null) or a JSON list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimensionNames {
    /// The empty string: no names for a 0-d array, one null name otherwise.
    Empty,
    /// The names, in order.
    Names(Vec<Option<String>>),
}

impl DimensionNames {
    /// The names for an array of `rank` dimensions.
    pub fn for_rank(&self, rank: usize) -> Vec<Option<String>> {
        match self {
            DimensionNames::Empty if rank == 0 => Vec::new(),
            DimensionNames::Empty => vec![None],
            DimensionNames::Names(names) => names.clone(),
        }
    }
}

/// Parses `--dimension-names`.
pub fn parse_dimension_names(text: &str) -> Result<DimensionNames, String> {
    let t = text.trim();
    if t.starts_with('[') {
        return serde_json::from_str::<Vec<Option<String>>>(t)
            .map(DimensionNames::Names)
            .map_err(|e| format!("not a JSON list of strings and nulls: {e}"));
    }
    if t.is_empty() {
        return Ok(DimensionNames::Empty);
    }
    Ok(DimensionNames::Names(
        t.split(',')
            .map(|n| {
                let n = n.trim();
                (!n.is_empty()).then(|| n.to_string())
            })
            .collect(),
    ))
}

/// Parses `--attributes` (a JSON object).
pub fn parse_attributes(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(other) => {
            let kind = match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                _ => "an array",
            };
            Err(format!("must be a JSON object, not {kind}"))
        }
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

/// Parses a byte size (`--max-bytes`, `--max-transform-bytes`): a number of bytes, or a
/// number followed by `KiB`, `MiB`, `GiB` or `TiB` (case-insensitive, a space allowed).
pub fn parse_byte_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "kib" => 10,
        "mib" => 20,
        "gib" => 30,
        "tib" => 40,
        _ => {
            return Err(format!(
                "`{}` is not a size (expected bytes, or a number with KiB, MiB, GiB or TiB, \
                 e.g. 4GiB)",
                quoted(t)
            ));
        }
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| {
            format!(
                "`{}` is not a size of at most 2^64 - 1 bytes (expected e.g. 4GiB)",
                quoted(t)
            )
        })
}

// ---- values parsed when the command runs ----------------------------------------------------

/// Checks the name of `--dtype` against zarrflow's data types: a usage error names the
/// valid ones, and says what a raw type `r<bits>` needs (Zarr v3: bits a positive multiple
/// of 8; zarrflow: at most 1 MiB per element).
pub fn check_data_type_name(name: &str) -> Result<zarrflow::DataType> {
    name.parse::<zarrflow::DataType>().map_err(|_| {
        let raw = name
            .strip_prefix('r')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        if raw {
            CliError::usage(format!(
                "--dtype `{}`: a raw type's bits must be a positive multiple of 8 (Zarr v3 \
                 `r*`), at most {} (1 MiB per element)",
                quoted(name),
                zarrflow::npy::MAX_VOID_SIZE * 8,
            ))
        } else {
            CliError::usage(format!(
                "--dtype: unknown data type `{}`; valid names: {}",
                quoted(name),
                zarrflow::DataType::valid_names()
            ))
        }
    })
}

/// The data type of `--dtype` (given to `ArraySpec::new`), with a one-line error naming it.
pub fn data_type_of(meta: &MetadataV3) -> Result<DataType> {
    zarrflow::metadata::fixed_text::zarrs_data_type(meta).map_err(|e| {
        CliError::usage(format!(
            "unsupported data type `{}`: {e}",
            quoted(meta.name())
        ))
    })
}

/// Parses a SELECTION (its meaning depends on --oindex / --vindex and the array).
pub fn parse_selection(text: &str) -> Result<Selection> {
    Selection::parse(text)
        .map_err(|e| CliError::usage(format!("selection `{}`: {e}", quoted(text))))
}

/// The zarr.json fill-value JSON of a bare command-line string: numbers, `true`/`false`,
/// `null`, lists and quoted strings are parsed as JSON; any other word (`NaN`, `-Infinity`,
/// `0x7fc00000`) is a JSON string.
pub fn bare_to_json(text: &str) -> Value {
    let t = text.trim();
    match serde_json::from_str::<Value>(t) {
        Ok(v) => v,
        Err(_) => Value::String(t.to_string()),
    }
}

/// The fill-value metadata of a bare string.
pub fn bare_to_metadata(text: &str) -> Result<FillValueMetadata> {
    let json = bare_to_json(text);
    serde_json::from_value(json)
        .map_err(|e| CliError::usage(format!("invalid value `{}`: {e}", quoted(text.trim()))))
}

/// The native-endian bytes of one element given as a bare string (`--fill-value`,
/// `--value`). A value the data type cannot hold is refused, never narrowed: integers out of
/// range, and for float types (and each part of a complex value) a number whose nearest
/// value of the type is infinite, or a nonzero number whose nearest value is zero
/// (subnormal results are kept). `NaN`, `Infinity`, `-Infinity` and bit patterns are exact.
pub fn value_bytes(data_type: &DataType, name: &str, text: &str) -> Result<Vec<u8>> {
    if let Some(t) = name
        .parse::<zarrflow::DataType>()
        .ok()
        .filter(|t| t.time_scale().is_some())
    {
        return time_value_bytes(t, name, text);
    }
    let meta = bare_to_metadata(text)?;
    let refused = |why: String| {
        CliError::usage(format!(
            "`{}` is not a valid value for data type {name}: {why}",
            quoted(text.trim())
        ))
    };
    let float = float_parts(name);
    // the literal of each float part, when the value has the type's form
    let literals = float.and_then(|f| f.literals(text));
    // zarrs panics on some malformed bit patterns (`0x` then non-ASCII): refuse them first
    if zarrflow::metadata::has_malformed_hex_string(&meta) {
        return Err(refused(format!("expected {}", expected_form(name))));
    }
    let fill = match data_type.fill_value_v3(&meta) {
        Ok(fill) => fill,
        Err(_) => {
            // a number JSON cannot hold as a float (1e400) is out of range, not malformed
            let out_of_range = float.zip(literals.as_ref()).and_then(|(f, literals)| {
                literals
                    .iter()
                    .find(|t| is_number(t) && t.parse::<f64>().is_ok_and(f64::is_infinite))
                    .map(|t| f.overflow(t))
            });
            return Err(refused(
                out_of_range.unwrap_or_else(|| format!("expected {}", expected_form(name))),
            ));
        }
    };
    let bytes = fill.as_ne_bytes().to_vec();
    if let (Some(f), Some(literals)) = (float, literals) {
        for (literal, part) in literals.iter().zip(bytes.chunks_exact(f.part_size)) {
            if !is_number(literal) {
                continue; // NaN, Infinity, -Infinity, a bit pattern: exact
            }
            let value = float_value(part);
            if value.is_infinite() {
                return Err(refused(f.overflow(literal)));
            }
            if value == 0.0 && is_nonzero_literal(literal) {
                return Err(refused(f.underflow(literal)));
            }
        }
    }
    Ok(bytes)
}

/// A time type's value: `NaT`, an integer count, or an ISO 8601 date-time (datetimes) or
/// duration (timedeltas) that the unit holds exactly.
fn time_value_bytes(t: zarrflow::DataType, name: &str, text: &str) -> Result<Vec<u8>> {
    let scale = t.time_scale().unwrap_or(zarrflow::metadata::TimeScale {
        unit: zarrflow::metadata::TimeUnit::Generic,
        scale: 1,
    });
    // a JSON string (`"2020-01-01"`) is taken as its content
    let trimmed = text.trim();
    let unquoted = match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::String(s)) => s,
        _ => trimmed.to_string(),
    };
    let parsed = match t {
        zarrflow::DataType::DateTime64(_) => zarrflow::metadata::parse_datetime(&unquoted, scale),
        _ => zarrflow::metadata::parse_timedelta(&unquoted, scale),
    };
    parsed.map(|v| v.to_ne_bytes().to_vec()).map_err(|e| {
        CliError::usage(format!(
            "`{}` is not a valid value for data type {name}: {e}",
            quoted(trimmed)
        ))
    })
}

/// The float parts of a float or complex type: their size and range, for refusing values
/// outside it.
#[derive(Debug, Clone, Copy)]
struct FloatParts {
    /// Bytes of each part.
    part_size: usize,
    /// Whether the type is complex (two parts, written `[re, im]`).
    complex: bool,
    /// The part type's name.
    name: &'static str,
    /// Its largest finite value, as text.
    max: &'static str,
    /// Its smallest positive (subnormal) value, as text.
    min_positive: &'static str,
}

impl FloatParts {
    /// The literal of each part: the value itself, or the two items of a complex `[re, im]`;
    /// `None` when the text does not have that form.
    fn literals<'a>(&self, text: &'a str) -> Option<Vec<&'a str>> {
        let t = text.trim();
        let list = t.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
        match (self.complex, list) {
            (false, None) => Some(vec![t]),
            (true, Some(items)) => {
                let items: Vec<&str> = items.split(',').map(str::trim).collect();
                (items.len() == 2).then_some(items)
            }
            _ => None,
        }
    }

    /// Why a literal beyond the part type's range is refused.
    fn overflow(&self, literal: &str) -> String {
        format!(
            "{} beyond the largest finite {} ({}); write Infinity or -Infinity for an infinity",
            self.subject(literal),
            self.name,
            self.max
        )
    }

    /// Why a nonzero literal that rounds to zero is refused.
    fn underflow(&self, literal: &str) -> String {
        format!(
            "{} nonzero but would be stored as 0 (the smallest positive {} is {}); write 0 \
             for zero",
            self.subject(literal),
            self.name,
            self.min_positive
        )
    }

    /// `it is` for a float, `its part X is` for a part of a complex value.
    fn subject(&self, literal: &str) -> String {
        if self.complex {
            format!("its part {} is", quoted(literal))
        } else {
            "it is".into()
        }
    }
}

/// The float parts of a float or complex type.
fn float_parts(name: &str) -> Option<FloatParts> {
    let (part_size, complex) = match name {
        "float16" => (2, false),
        "float32" => (4, false),
        "float64" => (8, false),
        "complex64" => (4, true),
        "complex128" => (8, true),
        _ => return None,
    };
    let (name, max, min_positive) = match part_size {
        2 => ("float16", "65504", "5.96e-8"),
        4 => ("float32", "3.4028235e38", "1e-45"),
        _ => ("float64", "1.7976931348623157e308", "5e-324"),
    };
    Some(FloatParts {
        part_size,
        complex,
        name,
        max,
        min_positive,
    })
}

/// Whether a literal is a JSON number (not a string such as `"NaN"` or `0x7fc00000`).
fn is_number(literal: &str) -> bool {
    let t = literal.strip_prefix('-').unwrap_or(literal);
    t.starts_with(|c: char| c.is_ascii_digit()) && !t.starts_with("0x") && !t.starts_with("0X")
}

/// Whether a JSON number literal is nonzero: a digit 1-9 before its exponent.
fn is_nonzero_literal(literal: &str) -> bool {
    literal
        .split(['e', 'E'])
        .next()
        .is_some_and(|mantissa| mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)))
}

/// The value of one native-endian float of 2, 4 or 8 bytes.
fn float_value(b: &[u8]) -> f64 {
    match b.len() {
        2 => half::f16::from_ne_bytes([b[0], b[1]]).to_f64(),
        4 => f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
        _ => {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[..8]);
            f64::from_ne_bytes(a)
        }
    }
}

/// The fill-value forms a data type accepts, for error messages.
fn expected_form(name: &str) -> String {
    match name {
        "bool" => "true or false".into(),
        n if n.starts_with("int") || n.starts_with("uint") => {
            format!("an integer in the range of {n}")
        }
        n if n.starts_with("float") || n == "bfloat16" => "a number, NaN, Infinity, -Infinity \
             or a hexadecimal bit pattern such as 0x7fc00000"
            .into(),
        n if n.starts_with("complex") => "a pair [re, im] of numbers, NaN, Infinity, \
             -Infinity or hexadecimal bit patterns, e.g. [1.5,-2.5] or [\"NaN\",0]"
            .into(),
        n if n.starts_with('r') => "a list of byte values such as [0,255]".into(),
        _ => "a zarr.json fill-value form".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    use crate::cli::{Cli, Command};

    /// The message clap gives for `zarrflow create a.zarr ARGS...`, or the parsed arguments.
    fn create(args: &[&str]) -> std::result::Result<crate::cli::CreateArgs, String> {
        let mut all = vec!["zarrflow", "create", "a.zarr"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all) {
            Ok(Cli {
                command: Command::Create(c),
                ..
            }) => Ok(c),
            Ok(other) => panic!("{other:?}"),
            Err(e) => {
                assert_eq!(e.exit_code(), 2);
                Err(e.render().to_string())
            }
        }
    }

    #[test]
    fn shapes() {
        assert_eq!(parse_shape("100,200").unwrap().0, vec![100, 200]);
        assert_eq!(parse_shape(" [3, 4] ").unwrap().0, vec![3, 4]);
        assert_eq!(parse_shape("").unwrap().0, Vec::<u64>::new());
        assert_eq!(parse_shape("[]").unwrap().0, Vec::<u64>::new());
        assert_eq!(parse_shape("0").unwrap().0, vec![0]);
        let e = parse_shape("10,-2").unwrap_err();
        assert!(e.contains("`-2`"), "{e}");
        // through clap: a usage error naming the option and the value
        let e = create(&["--shape", "10,-2", "--dtype", "int8"]).unwrap_err();
        assert!(
            e.contains("--shape") && e.contains("10,-2") && e.contains("`-2`"),
            "{e}"
        );
        let c = create(&["--shape", "", "--dtype", "float64"]).unwrap();
        assert_eq!(c.shape, Shape(vec![]));
        let c = create(&["--shape", "4,4", "--dtype", "int8", "--chunks", "2,2"]).unwrap();
        assert_eq!(c.layout.chunks, Some(Shape(vec![2, 2])));
        let e = create(&["--shape", "4", "--dtype", "int8", "--shards", "x"]).unwrap_err();
        assert!(e.contains("--shards") && e.contains("`x`"), "{e}");
    }

    #[test]
    fn codecs() {
        let c = parse_codec("zstd:5").unwrap();
        assert_eq!(c, Compressor::Zstd(5));
        let specs = c.codecs(Some(4));
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].name, "zstd");
        assert_eq!(parse_codec("none").unwrap().codecs(Some(4)).len(), 1);
        assert_eq!(parse_codec("gzip").unwrap(), Compressor::Gzip(5));
        assert_eq!(parse_codec("zstd").unwrap(), Compressor::Zstd(0));
        let b = parse_codec("blosc:lz4:9").unwrap();
        let cfg = b.codecs(Some(2))[1].to_value();
        assert_eq!(cfg["configuration"]["cname"], "lz4");
        assert_eq!(cfg["configuration"]["typesize"], 2);
        let per_array = b.codecs(None)[1].to_value();
        assert!(per_array["configuration"].get("typesize").is_none());
        assert_eq!(
            parse_codec("blosc").unwrap(),
            Compressor::Blosc {
                cname: "zstd",
                level: 5
            }
        );
        let z = parse_codec("zlib:3").unwrap().codecs(Some(2));
        assert_eq!(
            z[1].to_value(),
            serde_json::json!({"name": "numcodecs.zlib", "configuration": {"level": 3}})
        );
        assert_eq!(parse_codec("bz2").unwrap(), Compressor::Bz2(9));
        assert_eq!(parse_codec("lz4").unwrap(), Compressor::Lz4(1));
        let lz4 = &parse_codec("lz4:3").unwrap().codecs(None)[1];
        assert_eq!(lz4.name, "numcodecs.lz4");
        assert_eq!(lz4.configuration.as_ref().unwrap()["acceleration"], 3);
        assert!(parse_codec("lz4:0").is_err() && parse_codec("lz4:1:2").is_err());
        assert_eq!(parse_codec("lzma").unwrap(), Compressor::Lzma(6));
        let lzma = &parse_codec("lzma:1").unwrap().codecs(None)[1];
        assert_eq!(lzma.name, "numcodecs.lzma");
        assert_eq!(lzma.configuration.as_ref().unwrap()["preset"], 1);
        assert!(parse_codec("lzma:10").is_err() && parse_codec("lzma:-1").is_err());
        assert_eq!(
            parse_codec("bz2:1").unwrap().codecs(None)[1].name,
            "numcodecs.bz2"
        );
        for bad in [
            "bz2:0",
            "zlib:10",
            "gzip:12",
            "blosc:snappy",
            "brotli",
            "lzma:10",
            "zstd:1:2",
            "blosc:lz4:x",
            "",
        ] {
            assert!(parse_codec(bad).is_err(), "{bad}");
        }
        let e = create(&["--shape", "4", "--dtype", "int8", "--codec", "zstd:99"]).unwrap_err();
        assert!(e.contains("--codec") && e.contains("`99`"), "{e}");
    }

    #[test]
    fn names_and_attributes() {
        let names = parse_dimension_names("y,,x").unwrap();
        assert_eq!(
            names.for_rank(3),
            vec![Some("y".into()), None, Some("x".into())]
        );
        assert_eq!(
            parse_dimension_names(r#"["a", null]"#).unwrap().for_rank(2),
            vec![Some("a".into()), None]
        );
        let empty = parse_dimension_names("").unwrap();
        assert!(empty.for_rank(0).is_empty());
        assert_eq!(empty.for_rank(1), vec![None]);
        assert!(parse_dimension_names("[1]").is_err());
        assert!(parse_attributes("[1]").unwrap_err().contains("JSON object"));
        assert!(parse_attributes("{").is_err());
        assert_eq!(parse_attributes(r#"{"a": 1}"#).unwrap()["a"], 1);
        let e = create(&["--shape", "4", "--dtype", "int8", "--attributes", "3"]).unwrap_err();
        assert!(
            e.contains("--attributes") && e.contains("JSON object"),
            "{e}"
        );
        // a refused value that spans lines is still reported on one line
        let args = [
            "zarrflow", "create", "a.zarr", "--shape", "4", "--dtype", "int8",
        ];
        let e = Cli::try_parse_from(
            args.iter()
                .copied()
                .chain(["--attributes", "{\n\n\"a\": }"]),
        )
        .unwrap_err();
        let line = crate::usage_message(&e);
        assert!(
            !line.contains('\n')
                && line.contains("'--attributes <JSON>': not valid JSON")
                && line.ends_with("(see --help)"),
            "{line}"
        );
    }

    #[test]
    fn bare_strings_become_fill_value_json() {
        assert_eq!(bare_to_json("0"), serde_json::json!(0));
        assert_eq!(bare_to_json("-1"), serde_json::json!(-1));
        assert_eq!(bare_to_json("NaN"), serde_json::json!("NaN"));
        assert_eq!(bare_to_json("-Infinity"), serde_json::json!("-Infinity"));
        assert_eq!(bare_to_json("0x7fc00000"), serde_json::json!("0x7fc00000"));
        assert_eq!(bare_to_json("[1.5,-2.5]"), serde_json::json!([1.5, -2.5]));
        assert_eq!(
            bare_to_json(r#"["NaN","Infinity"]"#),
            serde_json::json!(["NaN", "Infinity"])
        );
        assert_eq!(
            bare_to_json("18446744073709551615"),
            serde_json::json!(u64::MAX)
        );
        assert_eq!(bare_to_json("true"), serde_json::json!(true));
    }

    fn dt(name: &str) -> DataType {
        data_type_of(&MetadataV3::new(name)).unwrap()
    }

    #[test]
    fn values_to_bytes() {
        assert_eq!(
            value_bytes(&dt("float32"), "float32", "1.5").unwrap(),
            1.5f32.to_ne_bytes()
        );
        assert_eq!(
            value_bytes(&dt("float32"), "float32", "0x7fc00001").unwrap(),
            0x7fc00001u32.to_ne_bytes()
        );
        let nan = value_bytes(&dt("float64"), "float64", "NaN").unwrap();
        assert!(f64::from_ne_bytes(nan.try_into().unwrap()).is_nan());
        assert_eq!(
            value_bytes(&dt("float64"), "float64", "-Infinity").unwrap(),
            f64::NEG_INFINITY.to_ne_bytes()
        );
        assert_eq!(
            value_bytes(&dt("uint64"), "uint64", "18446744073709551615").unwrap(),
            u64::MAX.to_ne_bytes()
        );
        assert_eq!(value_bytes(&dt("int8"), "int8", "-1").unwrap(), [0xff]);
        assert_eq!(value_bytes(&dt("bool"), "bool", "true").unwrap(), [1]);
        let c = value_bytes(&dt("complex64"), "complex64", "[1.5,-2.5]").unwrap();
        assert_eq!(&c[..4], 1.5f32.to_ne_bytes());
        assert_eq!(&c[4..], (-2.5f32).to_ne_bytes());
        let c = value_bytes(&dt("complex128"), "complex128", r#"["NaN","Infinity"]"#).unwrap();
        assert_eq!(&c[8..], f64::INFINITY.to_ne_bytes());
        for (t, v) in [
            ("int8", "300"),
            ("uint8", "-1"),
            ("bool", "2"),
            ("float32", "abc"),
        ] {
            let e = value_bytes(&dt(t), t, v).unwrap_err().to_string();
            assert!(e.contains(t), "{e}");
        }
        assert!(data_type_of(&MetadataV3::new("float99")).is_err());
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_byte_size("4096").unwrap(), 4096);
        assert_eq!(parse_byte_size("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_byte_size("64 mib").unwrap(), 64 << 20);
        assert_eq!(parse_byte_size("1KiB").unwrap(), 1024);
        assert_eq!(parse_byte_size("7B").unwrap(), 7);
        assert_eq!(parse_byte_size("16777215TiB").unwrap(), 16777215 << 40);
        for bad in [
            "",
            "GiB",
            "4GB",
            "4 PB",
            "-1",
            "1.5GiB",
            "16777216TiB",
            "99999999999999999999",
        ] {
            assert!(parse_byte_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_that_do_not_fit_are_refused() {
        let refused = |t: &str, v: &str| value_bytes(&dt(t), t, v).unwrap_err().to_string();
        let e = refused("float32", "3.4028236e38");
        assert!(
            e.contains("beyond the largest finite float32 (3.4028235e38)"),
            "{e}"
        );
        let e = refused("float32", "1e-50");
        assert!(e.contains("nonzero but would be stored as 0"), "{e}");
        let e = refused("float64", "1e400");
        assert!(e.contains("beyond the largest finite float64"), "{e}");
        let e = refused("float16", "65520");
        assert!(e.contains("float16 (65504)"), "{e}");
        let e = refused("complex64", "[0, 1e39]");
        assert!(e.contains("its part 1e39 is beyond"), "{e}");
        // a value of the wrong form is not called out of range
        let e = refused("complex64", "1e400");
        assert!(e.contains("expected a pair"), "{e}");
        let e = refused("float32", "[1e400, 0]");
        assert!(e.contains("expected a number"), "{e}");
        assert_eq!(refused("float32", "1e-50"), refused("float32", " 1e-50 "));
        // what fits, exactly or rounded to a nonzero finite value
        let f32_of = |v: &str| {
            f32::from_ne_bytes(
                value_bytes(&dt("float32"), "float32", v)
                    .unwrap()
                    .try_into()
                    .unwrap(),
            )
        };
        assert_eq!(f32_of("1e-45"), f32::from_bits(1));
        assert_eq!(f32_of("3.40282356e38"), f32::MAX);
        assert_eq!(f32_of("-0").to_bits(), (-0.0f32).to_bits());
        assert_eq!(f32_of("0e-999"), 0.0);
        assert!(f32_of("Infinity").is_infinite());
        assert!(is_nonzero_literal("0.0001") && !is_nonzero_literal("0.000e5"));
        assert!(is_number("-1e5") && !is_number("0x7fc00000") && !is_number("\"NaN\""));
    }

    #[test]
    fn data_type_names() {
        assert_eq!(
            check_data_type_name("r24").unwrap(),
            zarrflow::DataType::Raw { bits: 24 }
        );
        for raw in ["r0", "r7", "r8388616"] {
            let e = check_data_type_name(raw).unwrap_err();
            assert!(e.to_string().contains("positive multiple of 8"), "{e}");
            assert_eq!(e.exit_code(), 2);
        }
        let e = check_data_type_name(&"y".repeat(1000))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown data type") && e.contains('…') && e.len() < 400,
            "{e}"
        );
    }

    #[test]
    fn selections() {
        assert_eq!(parse_selection("1:3, ::2").unwrap().items().len(), 2);
        let e = parse_selection("1:2:3:4").unwrap_err();
        assert!(e.to_string().contains("selection `1:2:3:4`"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
