//! Zarr v2 metadata (pure: no I/O): `.zarray`, `.zgroup` and `.zattrs`.
//!
//! Reading parses each field into zarrs' v2 types (`ArrayMetadataV2`), converts the whole
//! document with zarrs' v2→v3 conversion (`array_metadata_v2_to_v3`: data type and byte
//! order, fill value, `order: "F"` as a `transpose` codec, filters and compressor as codecs,
//! the `v2` chunk key encoding with the document's `dimension_separator`) and validates the
//! result as every v3 array is ([`ArrayMetadata::from_zarrs`]): one [`ArrayMetadata`] for
//! both formats, marked with its [`ZarrFormat`]. Data types zarrflow does not read yet
//! (objects, strings, datetimes, structured types) are refused by name before anything is
//! converted, never read as raw bytes.
//!
//! Writing ([`array_to_v2`]) maps the subset of v3 that v2 can hold: a regular grid, the
//! `v2` chunk key encoding, `transpose` to F order, `bytes` in either byte order, the last
//! bytes→bytes codec as the compressor (zstd, gzip, blosc, `numcodecs.zlib`,
//! `numcodecs.bz2`, ...) and the other codecs with a v2 form as filters
//! (`numcodecs.fixedscaleoffset`, `numcodecs.shuffle`, ...), written through zarrs' own v2
//! codec configurations. Anything else is [`MetadataError::NotExpressibleInV2`].

use std::fmt;
use std::num::NonZeroU64;

use serde_json::{Map, Value};
use zarrs::convert::{ArrayMetadataV2ToV3Error, array_metadata_v2_to_v3};
use zarrs::metadata::v2::{
    ArrayMetadataV2, ArrayMetadataV2Order, DataTypeMetadataV2, GroupMetadataV2, MetadataV2,
};
use zarrs::metadata::{ChunkKeySeparator, FillValueMetadata};
use zarrs::plugin::ExtensionName;

use super::{
    ArrayMetadata, ChunkGridSpec, ChunkKeyEncodingSpec, DataType, GroupMetadata, MetadataError,
    parse_object, type_name, typed,
};

/// The v2 array metadata document of a node.
pub const ZARRAY: &str = ".zarray";
/// The v2 group metadata document of a node.
pub const ZGROUP: &str = ".zgroup";
/// The v2 attributes document of a node (absent: no attributes).
pub const ZATTRS: &str = ".zattrs";

/// The Zarr format of a node's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ZarrFormat {
    /// Zarr v2: `.zarray` / `.zgroup` (+ `.zattrs`).
    V2,
    /// Zarr v3: `zarr.json`.
    #[default]
    V3,
}

impl ZarrFormat {
    /// The version number (2 or 3).
    pub const fn number(self) -> u8 {
        match self {
            ZarrFormat::V2 => 2,
            ZarrFormat::V3 => 3,
        }
    }

    /// The format of version number `n` (2 or 3).
    pub fn from_number(n: u64) -> Option<Self> {
        match n {
            2 => Some(ZarrFormat::V2),
            3 => Some(ZarrFormat::V3),
            _ => None,
        }
    }
}

impl fmt::Display for ZarrFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// The numcodecs filters that work on a chunk's values (in zarrflow; numcodecs reinterprets
/// the chunk's bytes in the filter's byte order): refused on big-endian v2 arrays.
const VALUE_FILTERS: [&str; 3] = ["delta", "astype", "quantize"];

const ARRAY_REQUIRED: [&str; 7] = [
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "compressor",
    "fill_value",
    "order",
];

/// Parse a `.zarray` document (at `key`, for errors) and its `.zattrs` (at `attrs_key`;
/// `None` when absent) into the metadata every array has.
pub fn parse_array(
    zarray: &[u8],
    zattrs: Option<&[u8]>,
    key: &str,
    attrs_key: &str,
) -> Result<ArrayMetadata, MetadataError> {
    let mut obj = parse_object(zarray, key)?;
    super::check_zarr_format(&obj, key, 2)?;
    for field in ARRAY_REQUIRED {
        if !obj.contains_key(field) {
            return Err(MetadataError::MissingField {
                key: key.to_string(),
                field: field.to_string(),
            });
        }
    }
    let take = |obj: &mut Map<String, Value>, f: &str| obj.remove(f).unwrap_or(Value::Null);
    let dtype_value = take(&mut obj, "dtype");
    let object_codec = object_codec_of(obj.get("filters"));
    let dtype = check_dtype(&dtype_value, object_codec, key)?;
    // a datetime64 / timedelta64 is converted as the 8-byte integer of its byte order (zarrs'
    // conversion has no time types), then given its data type back
    let time = time_type(&dtype);
    let converted_dtype = match time {
        Some(_) => format!("{}i8", &dtype[..1]),
        None => dtype.clone(),
    };
    let shape: Vec<u64> = typed(take(&mut obj, "shape"), "shape", key)?;
    let chunks: Vec<NonZeroU64> = typed(take(&mut obj, "chunks"), "chunks", key)?;
    if chunks.len() != shape.len() {
        return Err(MetadataError::InvalidField {
            key: key.to_string(),
            field: "chunks".into(),
            reason: format!(
                "rank {} does not match shape rank {}",
                chunks.len(),
                shape.len()
            ),
        });
    }
    let compressor: Option<MetadataV2> = typed(take(&mut obj, "compressor"), "compressor", key)?;
    let mut fill_value: FillValueMetadata = typed(take(&mut obj, "fill_value"), "fill_value", key)?;
    // null (no fill value) reads as zero, as zarr-python and TensorStore read it; zarrs' own
    // mapping gives a scalar 0, which is no complex value
    if matches!(fill_value, FillValueMetadata::Null) && dtype[1..].starts_with('c') {
        fill_value = typed(serde_json::json!([0.0, 0.0]), "fill_value", key)?;
    }
    // a time type's fill value is its i64 count; NaT (`i64::MIN`) is written as that integer
    // by zarr-python 2 and 3, and null reads as NaT, as zarr-python 3.4.2 reads it
    if time.is_some() && (fill_value.is_null() || fill_value.as_str() == Some("NaT")) {
        fill_value = FillValueMetadata::from(super::NAT);
    }
    // an object or text array's null or 0 fill value is the empty string (zarr-python 2
    // wrote 0 for objects)
    let text = dtype == "|O" || matches!(dtype.as_bytes().get(1), Some(b'U' | b'S'));
    if text && (fill_value.is_null() || fill_value.as_u64() == Some(0)) {
        fill_value = FillValueMetadata::from("");
    }
    // zarrs converts `<U n` itself, but not `|S n`: its n bytes convert as the raw `|V n`,
    // then the data type and its base64 fill value are put back (see `fixed_text`)
    let fixed_bytes = dtype
        .strip_prefix("|S")
        .and_then(|n| n.parse::<u32>().ok())
        .map(|len| (DataType::FixedBytes { len }, fill_value.clone()));
    let zarrs_dtype = match &fixed_bytes {
        Some((t, _)) => {
            fill_value = FillValueMetadata::Null;
            format!("|V{}", t.size())
        }
        None => converted_dtype,
    };
    let order: ArrayMetadataV2Order = typed(take(&mut obj, "order"), "order", key)?;
    let filters: Option<Vec<MetadataV2>> = match obj.remove("filters") {
        None => None,
        Some(v) => typed(v, "filters", key)?,
    };
    let separator: ChunkKeySeparator = match obj.remove("dimension_separator") {
        None | Some(Value::Null) => ChunkKeySeparator::Dot,
        Some(v) => typed(v, "dimension_separator", key)?,
    };
    let attributes = match zattrs {
        None => Map::new(),
        Some(bytes) => parse_attributes(bytes, attrs_key)?,
    };
    let v2 = ArrayMetadataV2::new(
        shape,
        chunks,
        DataTypeMetadataV2::Simple(zarrs_dtype),
        fill_value,
        compressor.clone(),
        filters.clone(),
    )
    .with_order(order)
    .with_dimension_separator(separator)
    .with_attributes(attributes);
    let v3 = array_metadata_v2_to_v3(&v2).map_err(|e| match e {
        ArrayMetadataV2ToV3Error::UnsupportedCodec(id, _) => {
            let field = match (&compressor, &filters) {
                (Some(c), _) if c.id() == id => "compressor".to_string(),
                (_, Some(fs)) => fs
                    .iter()
                    .position(|f| f.id() == id)
                    .map_or("filters".to_string(), |i| format!("filters[{i}]")),
                _ => "filters".to_string(),
            };
            MetadataError::UnsupportedV2Codec {
                key: key.to_string(),
                field,
                id,
            }
        }
        ArrayMetadataV2ToV3Error::UnsupportedFillValue(data_type, v) => {
            MetadataError::InvalidFillValue {
                key: key.to_string(),
                data_type,
                value: serde_json::to_string(&v).unwrap_or_default(),
            }
        }
        ArrayMetadataV2ToV3Error::UnsupportedDataType(_)
        | ArrayMetadataV2ToV3Error::InvalidEndianness(_) => MetadataError::UnsupportedV2DataType {
            key: key.to_string(),
            dtype: dtype.clone(),
            reason: e.to_string(),
        },
        e => MetadataError::InvalidField {
            key: key.to_string(),
            field: "filters".into(),
            reason: e.to_string(),
        },
    })?;
    // numcodecs' delta, astype and quantize reinterpret the chunk's bytes in their own
    // dtype's byte order; zarrflow's work on the values (see `codec::delta`): a big-endian
    // array with one of them is refused rather than misread
    if dtype.starts_with('>')
        && let Some((i, f)) = filters
            .iter()
            .flatten()
            .enumerate()
            .find(|(_, f)| VALUE_FILTERS.contains(&f.id()))
    {
        return Err(MetadataError::UnsupportedV2Codec {
            key: key.to_string(),
            field: format!("filters[{i}]"),
            id: f.id().to_string(),
        });
    }
    let mut v3 = v3;
    v3.codecs = crate::codec::in_spec_order(v3.codecs);
    // zarrs 0.23's conversion drops the compressor of an array whose filters hold an
    // array→bytes codec (the object codecs): add it back, converted by zarrs alone
    if object_codec.is_some()
        && let Some(c) = &compressor
        && v3
            .codecs
            .last()
            .is_some_and(|m| m.name().starts_with("vlen-"))
    {
        let alone = zarrs::convert::codec_metadata_v2_to_v3(
            ArrayMetadataV2Order::C,
            v3.shape.len(),
            &zarrs::metadata::v3::MetadataV3::new("uint8"),
            None,
            &None,
            &Some(c.clone()),
        )
        .map_err(|_| MetadataError::UnsupportedV2Codec {
            key: key.to_string(),
            field: "compressor".into(),
            id: c.id().to_string(),
        })?;
        v3.codecs.extend(alone.into_iter().skip(1));
    }
    if let Some((t, fill)) = fixed_bytes {
        v3.data_type = t.to_metadata();
        v3.fill_value = fill;
    }
    if let Some(t) = time {
        v3.data_type = t.to_metadata();
    }
    if object_codec == Some("vlen-bytes") {
        // zarrs maps every `|O` to `string`; with `vlen-bytes` the elements are bytes
        v3.data_type = zarrs::metadata::v3::MetadataV3::new("bytes");
    }
    Ok(ArrayMetadata::from_zarrs(v3, Map::new(), key)?.with_zarr_format(ZarrFormat::V2))
}

/// The object codec (`vlen-utf8`, `vlen-bytes`) among a `.zarray`'s filters, if any.
fn object_codec_of(filters: Option<&Value>) -> Option<&'static str> {
    let ids = filters?
        .as_array()?
        .iter()
        .filter_map(|f| f.get("id")?.as_str());
    let mut found = None;
    for id in ids {
        match id {
            "vlen-utf8" => found = Some("vlen-utf8"),
            "vlen-bytes" => found = Some("vlen-bytes"),
            _ => {}
        }
    }
    found
}

/// Parse a `.zgroup` document (at `key`) and its `.zattrs` (at `attrs_key`; `None` when
/// absent).
pub fn parse_group(
    zgroup: &[u8],
    zattrs: Option<&[u8]>,
    key: &str,
    attrs_key: &str,
) -> Result<GroupMetadata, MetadataError> {
    let obj = parse_object(zgroup, key)?;
    super::check_zarr_format(&obj, key, 2)?;
    let attributes = match zattrs {
        None => Map::new(),
        Some(bytes) => parse_attributes(bytes, attrs_key)?,
    };
    let mut g = GroupMetadata::new(attributes);
    g.zarr_format = ZarrFormat::V2;
    Ok(g)
}

/// Parse a `.zattrs` document: a JSON object.
pub fn parse_attributes(json: &[u8], key: &str) -> Result<Map<String, Value>, MetadataError> {
    parse_object(json, key)
}

/// The `dtype` string when it is one zarrflow reads (`b1`, `i1`..`i8`, `u1`..`u8`, `f2`..`f8`,
/// `c8`, `c16`, `V<n>`, in either byte order); every other NumPy type is refused by name.
fn check_dtype(v: &Value, object_codec: Option<&str>, key: &str) -> Result<String, MetadataError> {
    let unsupported = |dtype: String, reason: &str| MetadataError::UnsupportedV2DataType {
        key: key.to_string(),
        dtype,
        reason: reason.to_string(),
    };
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Array(_) => {
            return Err(unsupported(
                crate::index::json::excerpt(v),
                "structured data types are not supported yet",
            ));
        }
        other => {
            return Err(MetadataError::InvalidField {
                key: key.to_string(),
                field: "dtype".into(),
                reason: format!("expected a NumPy type string, found {}", type_name(other)),
            });
        }
    };
    let (order, code) = match s.chars().next() {
        Some(c @ ('<' | '>' | '|')) => (c, &s[1..]),
        _ => {
            return Err(MetadataError::InvalidField {
                key: key.to_string(),
                field: "dtype".into(),
                reason: format!("{s:?} does not start with a byte order (<, > or |)"),
            });
        }
    };
    let kind = code.chars().next().unwrap_or(' ');
    let size = &code[kind.len_utf8().min(code.len())..];
    let fixed = match kind {
        'b' => size == "1",
        'i' | 'u' => matches!(size, "1" | "2" | "4" | "8"),
        'f' => matches!(size, "2" | "4" | "8"),
        'c' => matches!(size, "8" | "16"),
        'V' => size.parse::<u32>().is_ok_and(|n| n > 0),
        // fixed-width text: `fixed_length_utf32` / `null_terminated_bytes`, up to 1 MiB
        'U' => size.parse::<u32>().is_ok_and(|n| n > 0 && n <= 1 << 18),
        'S' => size.parse::<u32>().is_ok_and(|n| n > 0 && n <= 1 << 20),
        _ => false,
    };
    if fixed || (s == "|O" && object_codec.is_some()) || (order != '|' && time_type(&s).is_some()) {
        return Ok(s);
    }
    let reason = match kind {
        'O' => {
            "an object array needs an object codec in `filters` (`vlen-utf8` for strings, `vlen-bytes` for bytes; `vlen-array` and pickled objects are not supported)"
        }
        'U' | 'S' => "a width from 1 to 1 MiB per element is needed",
        'M' | 'm' => {
            "not a NumPy datetime64 / timedelta64 type (`<M8[UNIT]`, `>m8[10s]`, `<M8`: UNIT one of Y M W D h m s ms us ns ps fs as, optionally scaled, in byte order < or >)"
        }
        'b' | 'i' | 'u' | 'f' | 'c' | 'V' => "this size is not a Zarr data type",
        _ => "not a NumPy type zarrflow reads",
    };
    Err(unsupported(s, reason))
}

/// The time type of a NumPy type string with a byte order (`<M8[ns]`, `>m8[10s]`, `<M8`),
/// if it is one.
fn time_type(dtype: &str) -> Option<DataType> {
    let code = dtype.get(1..)?;
    if !(code.starts_with("M8") || code.starts_with("m8")) {
        return None;
    }
    code.parse()
        .ok()
        .filter(|t: &DataType| t.time_scale().is_some())
}

/// The `.zarray` document (without attributes) and `.zattrs` (`None` when there are no
/// attributes) of `meta` in Zarr v2, or [`MetadataError::NotExpressibleInV2`] naming what
/// v2 cannot hold.
pub fn array_to_v2(meta: &ArrayMetadata) -> Result<(Value, Option<Value>), MetadataError> {
    let not = |what: String| MetadataError::NotExpressibleInV2 { what };
    if meta.codecs().sharding().is_some() {
        return Err(not("sharding (`sharding_indexed`: v2 has no shards)".into()));
    }
    let ChunkGridSpec::Regular { chunk_shape } = meta.chunk_grid() else {
        return Err(not("a rectilinear chunk grid".into()));
    };
    let separator = match meta.chunk_key_encoding() {
        ChunkKeyEncodingSpec::V2 { separator } => *separator,
        ChunkKeyEncodingSpec::Default { .. } => {
            return Err(not(
                "the `default` chunk key encoding (v2 keys have no `c` prefix)".into(),
            ));
        }
    };
    if meta
        .dimension_names()
        .is_some_and(|n| n.iter().any(Option::is_some))
    {
        return Err(not("dimension names".into()));
    }
    if !meta.extra_fields().is_empty() {
        return Err(not("additional metadata fields".into()));
    }
    let dtype = meta
        .dtype()
        .ok_or_else(|| not(format!("data type {}", meta.data_type())))?;
    let codecs = meta.codecs().metadata();
    let rank = meta.rank();
    let mut i = 0;
    let mut order = "C";
    if let Some(t) = codecs.get(i).filter(|c| c.name() == "transpose") {
        let f_order: Vec<u64> = (0..rank as u64).rev().collect();
        let got: Option<Vec<u64>> = t
            .configuration()
            .and_then(|c| c.get("order"))
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        if got.as_deref() != Some(&f_order[..]) {
            return Err(not(format!(
                "transpose order {} (v2 has only C and F order)",
                t.configuration()
                    .and_then(|c| c.get("order"))
                    .map_or("?".to_string(), |v| v.to_string())
            )));
        }
        order = "F";
        i += 1;
    }
    // v2 filters: the codecs around `bytes` other than the last bytes-to-bytes one (zarrs'
    // v2->v3 conversion puts them before `bytes`), in order; that last one is the compressor
    let b = codecs[i..]
        .iter()
        .position(|c| matches!(c.name(), "bytes" | "vlen-utf8" | "vlen-bytes"))
        .map(|p| p + i)
        .ok_or_else(|| not("a codec chain without the bytes codec".into()))?;
    // an object array's codec is its first filter (`{"id": "vlen-utf8"}`)
    let object_codec = (codecs[b].name() != "bytes").then(|| codecs[b].clone());
    let bytes = &codecs[b];
    let big = bytes
        .configuration()
        .and_then(|c| c.get("endian"))
        .and_then(Value::as_str)
        == Some("big");
    if big
        && let Some(c) = codecs.iter().find(|c| {
            c.name()
                .strip_prefix("numcodecs.")
                .is_some_and(|id| VALUE_FILTERS.contains(&id))
        })
    {
        return Err(not(format!(
            "{} on a big-endian array (numcodecs' filter reinterprets the stored bytes in its \
             own dtype's byte order)",
            c.name()
        )));
    }
    let after = &codecs[b + 1..];
    let (compressor, after_filters) = match after.split_last() {
        None => (Value::Null, &[][..]),
        Some((last, rest)) => (v2_codec(last)?, rest),
    };
    let filters: Vec<Value> = codecs[i..b]
        .iter()
        .chain(object_codec.iter())
        .chain(after_filters)
        .map(v2_codec)
        .collect::<Result<_, _>>()?;
    let filters = if filters.is_empty() {
        Value::Null
    } else {
        Value::Array(filters)
    };
    let dtype_str = v2_dtype(dtype, big).ok_or_else(|| not(format!("data type {dtype}")))?;
    let fill = v2_fill_value(meta.fill_value_metadata(), dtype)?;
    // the fields in the order zarr-python 3 writes them
    let mut o = Map::new();
    o.insert("shape".into(), serde_json::json!(meta.shape()));
    o.insert("chunks".into(), serde_json::json!(chunk_shape));
    o.insert("dtype".into(), Value::from(dtype_str));
    o.insert("fill_value".into(), fill);
    o.insert("order".into(), Value::from(order));
    o.insert("filters".into(), filters);
    o.insert(
        "dimension_separator".into(),
        Value::from(separator.to_string()),
    );
    o.insert("compressor".into(), compressor);
    o.insert("zarr_format".into(), Value::from(2));
    let attrs = (!meta.attributes().is_empty()).then(|| Value::Object(meta.attributes().clone()));
    Ok((Value::Object(o), attrs))
}

/// The `.zgroup` document.
pub fn group_document() -> Value {
    serde_json::to_value(GroupMetadataV2::new()).unwrap_or(Value::Null)
}

/// The v2 form (`{"id": ..., ...}`) of one v3 codec, from zarrs' own v2 name and
/// configuration of the codec.
fn v2_codec(c: &zarrs::metadata::v3::MetadataV3) -> Result<Value, MetadataError> {
    let not = || MetadataError::NotExpressibleInV2 {
        what: format!("codec `{}` (it has no Zarr v2 form)", c.name()),
    };
    let codec = zarrs::array::Codec::from_metadata(crate::codec::resolve_numcodecs(c).as_ref())
        .map_err(|_| not())?;
    let id = codec.name_v2().ok_or_else(not)?;
    let cfg = codec
        .configuration_v2(&Default::default())
        .unwrap_or_default();
    let mut o = Map::new();
    let zstd = id == "zstd";
    o.insert("id".into(), Value::from(id.clone().into_owned()));
    if id == "lzma" {
        // numcodecs' LZMA config as zarr-python writes it: every field, its defaults
        // (format 1, check -1, filters null) spelled out, in numcodecs' order
        for (k, default) in [
            ("format", Value::from(1)),
            ("check", Value::from(-1)),
            ("preset", Value::Null),
            ("filters", Value::Null),
        ] {
            o.insert(k.into(), cfg.get(k).cloned().unwrap_or(default));
        }
    }
    for (k, v) in cfg.iter() {
        // numcodecs' Zstd config as zarr-python writes it: `checksum` only when on
        // (TensorStore's `zarr` driver refuses the member)
        if zstd && k == "checksum" && v == &Value::Bool(false) {
            continue;
        }
        o.insert(k.clone(), v.clone());
    }
    Ok(Value::Object(o))
}

/// The NumPy type string of `dtype` in the given byte order (`None` for raw types, not
/// written in v2 yet).
fn v2_dtype(dtype: DataType, big: bool) -> Option<String> {
    if matches!(dtype, DataType::Raw { .. }) {
        return None;
    }
    if dtype.is_variable_length() {
        return Some("|O".into());
    }
    // time types with their unit: `<M8[10s]`, fixed-width text with its width: `<U5`
    let s = dtype.numpy_descr();
    Some(if big && s.starts_with('<') {
        format!(">{}", &s[1..])
    } else {
        s
    })
}

/// The v2 form of a canonical v3 fill value: numbers and booleans as they are, NaN and the
/// infinities by name; NaN payloads (hex strings) and complex / raw values are refused.
fn v2_fill_value(fill: FillValueMetadata, dtype: DataType) -> Result<Value, MetadataError> {
    let v = serde_json::to_value(&fill).unwrap_or(Value::Null);
    match (dtype, &v) {
        // text as it is, bytes base64-encoded (zarr-python writes an empty one as "")
        (t, Value::String(_)) if t.is_text() => return Ok(v),
        (t, _) if t.is_text() => {
            return Err(MetadataError::NotExpressibleInV2 {
                what: format!("fill value {v} of data type {dtype}"),
            });
        }
        // the i64 count, NaT as the integer `i64::MIN`, as zarr-python writes it
        (DataType::DateTime64(_) | DataType::TimeDelta64(_), _) => {
            let count = fill
                .as_i64()
                .or_else(|| (fill.as_str() == Some("NaT")).then_some(super::NAT));
            return count
                .map(Value::from)
                .ok_or_else(|| MetadataError::NotExpressibleInV2 {
                    what: format!("fill value {v} of data type {dtype}"),
                });
        }
        _ => {}
    }
    let scalar = |v: &Value| match v {
        Value::Bool(_) | Value::Number(_) => true,
        Value::String(s) => matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity"),
        _ => false,
    };
    let complex = matches!(dtype, DataType::Complex64 | DataType::Complex128);
    let ok = match &v {
        // zarr-python writes a complex fill value as [re, im]
        Value::Array(parts) if complex => parts.len() == 2 && parts.iter().all(scalar),
        v => scalar(v),
    };
    if ok {
        return Ok(v);
    }
    Err(MetadataError::NotExpressibleInV2 {
        what: format!("fill value {v} of data type {dtype} (NaN payloads have no v2 form)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "a/.zarray";

    fn doc(extra: Value) -> Vec<u8> {
        let mut base = serde_json::json!({
            "zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "<i4",
            "compressor": null, "fill_value": 0, "order": "C", "filters": null
        });
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() && k.starts_with('-') {
                base.as_object_mut().unwrap().remove(&k[1..]);
            } else {
                base[k] = v.clone();
            }
        }
        serde_json::to_vec(&base).unwrap()
    }

    fn err(extra: Value) -> MetadataError {
        parse_array(&doc(extra), None, KEY, "a/.zattrs").unwrap_err()
    }

    #[test]
    fn a_plain_array_converts_to_the_v2_key_encoding() {
        let m = parse_array(&doc(serde_json::json!({})), None, KEY, "k").unwrap();
        assert_eq!(m.zarr_format(), ZarrFormat::V2);
        assert_eq!(m.shape(), &[4, 6]);
        assert_eq!(m.chunk_key(&[1, 2]), "1.2");
        assert_eq!(m.chunk_key(&[]), "0");
        assert!(m.attributes().is_empty());
        let slash = parse_array(
            &doc(serde_json::json!({"dimension_separator": "/"})),
            Some(br#"{"units": "m"}"#),
            KEY,
            "k",
        )
        .unwrap();
        assert_eq!(slash.chunk_key(&[1, 2]), "1/2");
        assert_eq!(slash.attributes()["units"], "m");
    }

    #[test]
    fn order_f_is_a_transpose_and_big_endian_a_bytes_order() {
        let m = parse_array(
            &doc(serde_json::json!({"order": "F", "dtype": ">f8", "fill_value": "NaN"})),
            None,
            KEY,
            "k",
        )
        .unwrap();
        let names: Vec<&str> = m.codecs().metadata().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["transpose", "bytes"]);
        assert!(m.fill_value().as_ne_bytes() == f64::NAN.to_ne_bytes());
        for (fill, want) in [
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            let m = parse_array(
                &doc(serde_json::json!({"dtype": "<f8", "fill_value": fill})),
                None,
                KEY,
                "k",
            )
            .unwrap();
            assert_eq!(m.fill_value().as_ne_bytes(), want.to_ne_bytes());
        }
        let null = parse_array(
            &doc(serde_json::json!({"fill_value": null})),
            None,
            KEY,
            "k",
        )
        .unwrap();
        assert_eq!(null.fill_value().as_ne_bytes(), 0i32.to_ne_bytes());
    }

    #[test]
    fn missing_and_invalid_fields_name_the_document_and_field() {
        for field in ARRAY_REQUIRED {
            let e = err(serde_json::json!({ format!("-{field}"): null }));
            assert!(
                matches!(&e, MetadataError::MissingField { key, field: f } if key == KEY && f == field),
                "{field}: {e}"
            );
        }
        let e = err(serde_json::json!({"order": "X"}));
        assert!(
            matches!(&e, MetadataError::InvalidField { field, .. } if field == "order"),
            "{e}"
        );
        let e = err(serde_json::json!({"chunks": [2]}));
        assert!(
            matches!(&e, MetadataError::InvalidField { field, .. } if field == "chunks"),
            "{e}"
        );
        let e = err(serde_json::json!({"chunks": [0, 3]}));
        assert!(
            matches!(&e, MetadataError::InvalidField { field, .. } if field == "chunks"),
            "{e}"
        );
        let e = err(serde_json::json!({"dimension_separator": "-"}));
        assert!(
            matches!(&e, MetadataError::InvalidField { field, .. } if field == "dimension_separator"),
            "{e}"
        );
        let e = err(serde_json::json!({"zarr_format": 3}));
        assert!(
            matches!(&e, MetadataError::UnsupportedZarrFormat { .. }),
            "{e}"
        );
        let e = err(serde_json::json!({"dtype": 4}));
        assert!(
            matches!(&e, MetadataError::InvalidField { field, .. } if field == "dtype"),
            "{e}"
        );
        let e = err(serde_json::json!({"dtype": "i4"}));
        assert!(
            matches!(&e, MetadataError::InvalidField { field, .. } if field == "dtype"),
            "{e}"
        );
        let e = err(serde_json::json!({"fill_value": "zero"}));
        assert!(matches!(&e, MetadataError::InvalidFillValue { .. }), "{e}");
        let e = parse_array(b"[1]", None, KEY, "k").unwrap_err();
        assert!(matches!(&e, MetadataError::MalformedJson { .. }), "{e}");
        let e =
            parse_array(&doc(serde_json::json!({})), Some(b"[]"), KEY, "a/.zattrs").unwrap_err();
        assert!(
            matches!(&e, MetadataError::MalformedJson { key, .. } if key == "a/.zattrs"),
            "{e}"
        );
    }

    #[test]
    fn unsupported_data_types_are_named_not_read_as_bytes() {
        for dtype in [
            "|O", "<U0", "|S0", ">S3x", "<f16", "<i3", "|b2", "|M8[s]", "<M8[ns", "<M8[0s]",
            "<m8[x]", "<M4",
        ] {
            let e = err(serde_json::json!({ "dtype": dtype }));
            let MetadataError::UnsupportedV2DataType { dtype: got, .. } = &e else {
                panic!("{dtype}: {e}");
            };
            assert_eq!(got, dtype);
            assert!(e.to_string().contains(dtype), "{e}");
        }
        let e = err(serde_json::json!({ "dtype": [["a", "<i4"], ["b", "<f8"]] }));
        assert!(e.to_string().contains("structured"), "{e}");
        assert!(matches!(e, MetadataError::UnsupportedV2DataType { .. }));
        let e = err(
            serde_json::json!({ "dtype": "|O", "filters": [{"id": "vlen-array", "dtype": "<i4"}] }),
        );
        assert!(e.to_string().contains("object codec"), "{e}");
    }

    #[test]
    fn time_types_open_typed_in_either_byte_order_and_write_back() {
        use crate::metadata::{TimeScale, TimeUnit};
        let s = |unit, scale| TimeScale { unit, scale };
        for (dtype, fill, want, want_fill) in [
            (
                "<M8[ns]",
                serde_json::json!(-9223372036854775808i64),
                DataType::DateTime64(s(TimeUnit::Nanosecond, 1)),
                i64::MIN,
            ),
            (
                ">m8[10s]",
                serde_json::json!("NaT"),
                DataType::TimeDelta64(s(TimeUnit::Second, 10)),
                i64::MIN,
            ),
            (
                "<M8",
                Value::Null,
                DataType::DateTime64(s(TimeUnit::Generic, 1)),
                i64::MIN,
            ),
            (
                ">M8[D]",
                serde_json::json!(18262),
                DataType::DateTime64(s(TimeUnit::Day, 1)),
                18262,
            ),
        ] {
            let m = parse_array(
                &doc(serde_json::json!({ "dtype": dtype, "fill_value": fill })),
                None,
                KEY,
                "k",
            )
            .unwrap();
            assert_eq!(m.dtype(), Some(want), "{dtype}");
            assert_eq!(
                m.fill_value().as_ne_bytes(),
                want_fill.to_ne_bytes(),
                "{dtype}"
            );
            let endian = m.codecs().metadata()[0]
                .configuration()
                .and_then(|c| c.get("endian").cloned());
            let big = dtype.starts_with('>');
            assert_eq!(
                endian,
                Some(Value::from(if big { "big" } else { "little" })),
                "{dtype}"
            );
            let (zarray, _) = array_to_v2(&m).unwrap();
            assert_eq!(zarray["dtype"], dtype, "{dtype}");
            assert_eq!(
                zarray["fill_value"],
                serde_json::json!(want_fill),
                "{dtype}"
            );
            let again = parse_array(&serde_json::to_vec(&zarray).unwrap(), None, KEY, "k").unwrap();
            assert_eq!(again.dtype(), Some(want));
        }
        let e = err(serde_json::json!({ "dtype": "<M8[s]", "fill_value": "soon" }));
        assert!(matches!(&e, MetadataError::InvalidFillValue { .. }), "{e}");
    }

    #[test]
    fn object_arrays_with_an_object_codec_open_as_string_or_bytes() {
        for (id, name) in [("vlen-utf8", "string"), ("vlen-bytes", "bytes")] {
            for fill in [serde_json::json!(""), Value::Null, serde_json::json!(0)] {
                let m = parse_array(
                    &doc(serde_json::json!({ "dtype": "|O", "fill_value": fill, "filters": [{"id": id}] })),
                    None,
                    KEY,
                    "a/.zattrs",
                )
                .unwrap();
                assert_eq!(m.dtype().map(|d| d.name()), Some(name));
                assert!(m.fill_value().as_ne_bytes().is_empty());
                let (zarray, _) = array_to_v2(&m).unwrap();
                assert_eq!(zarray["dtype"], "|O");
                assert_eq!(zarray["filters"], serde_json::json!([{"id": id}]));
                assert_eq!(zarray["fill_value"], "");
            }
        }
    }

    #[test]
    fn unsupported_codecs_are_named_with_their_field() {
        let e = err(serde_json::json!({"compressor": {"id": "base64"}}));
        assert!(
            matches!(&e, MetadataError::UnsupportedV2Codec { field, id, .. } if field == "compressor" && id == "base64"),
            "{e}"
        );
        let e = err(
            serde_json::json!({"filters": [{"id": "categorize", "labels": ["a"],
                                                    "dtype": "<U1", "astype": "|u1"}]}),
        );
        assert!(
            matches!(&e, MetadataError::UnsupportedV2Codec { field, id, .. } if field == "filters[0]" && id == "categorize"),
            "{e}"
        );
        assert!(e.to_string().contains("categorize"), "{e}");
    }

    #[test]
    fn value_filters_open_on_little_endian_and_single_byte_arrays_only() {
        for (dtype, filter) in [
            ("<i4", serde_json::json!({"id": "delta", "dtype": "<i4"})),
            ("|u1", serde_json::json!({"id": "delta", "dtype": "|u1"})),
            (
                "<i8",
                serde_json::json!({"id": "delta", "dtype": "<i8", "astype": "<i2"}),
            ),
        ] {
            let m = parse_array(
                &doc(serde_json::json!({"dtype": dtype, "filters": [filter]})),
                None,
                KEY,
                "k",
            )
            .unwrap();
            assert_eq!(
                m.codecs().metadata()[0].name(),
                "numcodecs.delta",
                "{dtype}"
            );
        }
        // a filter of another data type than the array's is refused when opened
        let e =
            err(serde_json::json!({"dtype": "<i8", "filters": [{"id": "delta", "dtype": "<i2"}]}));
        assert!(e.to_string().contains("delta"), "{e}");
        for filters in [
            serde_json::json!([{"id": "delta", "dtype": "<i4"}]),
            serde_json::json!([{"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<i4"}]),
            serde_json::json!([{"id": "zlib", "level": 1}, {"id": "quantize", "digits": 2, "dtype": "<f4", "astype": "<f4"}]),
        ] {
            let e = err(serde_json::json!({"dtype": ">i4", "filters": filters.clone()}));
            let i = filters.as_array().unwrap().len() - 1;
            let want = filters[i]["id"].as_str().unwrap();
            assert!(
                matches!(&e, MetadataError::UnsupportedV2Codec { field, id, .. }
                    if *field == format!("filters[{i}]") && id == want),
                "{e}"
            );
        }
    }

    #[test]
    fn groups_read_their_attributes() {
        let g = parse_group(
            br#"{"zarr_format": 2}"#,
            Some(br#"{"a": 1}"#),
            "g/.zgroup",
            "k",
        )
        .unwrap();
        assert_eq!(g.attributes["a"], 1);
        assert_eq!(g.zarr_format, ZarrFormat::V2);
        let e = parse_group(br#"{}"#, None, "g/.zgroup", "k").unwrap_err();
        assert!(matches!(e, MetadataError::MissingField { .. }), "{e}");
    }

    #[test]
    fn writing_round_trips_and_refuses_what_v2_cannot_hold() {
        let m = parse_array(
            &doc(serde_json::json!({
                "order": "F", "dtype": ">u2", "fill_value": 7,
                "compressor": {"id": "zstd", "level": 3, "checksum": false},
                "dimension_separator": "/"
            })),
            Some(br#"{"x": [1]}"#),
            KEY,
            "k",
        )
        .unwrap();
        let (zarray, zattrs) = array_to_v2(&m).unwrap();
        assert_eq!(zarray["order"], "F");
        assert_eq!(zarray["dtype"], ">u2");
        assert_eq!(zarray["fill_value"], 7);
        assert_eq!(zarray["compressor"]["id"], "zstd");
        assert_eq!(zarray["dimension_separator"], "/");
        assert_eq!(zattrs.unwrap()["x"], serde_json::json!([1]));
        let again = parse_array(&serde_json::to_vec(&zarray).unwrap(), None, KEY, "k").unwrap();
        assert_eq!(again.codecs().metadata(), m.codecs().metadata());
        let sharded = crate::metadata::ArraySpec::new([8], "uint8")
            .shard_shape([4])
            .inner_chunk_shape([2])
            .chunk_key_encoding(ChunkKeyEncodingSpec::V2 { separator: '.' })
            .build()
            .unwrap();
        let e = array_to_v2(&sharded).unwrap_err();
        assert!(matches!(e, MetadataError::NotExpressibleInV2 { .. }), "{e}");
        assert!(e.to_string().contains("sharding_indexed"), "{e}");
    }
}
