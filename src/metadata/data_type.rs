//! [`DataType`]: the data types zarrflow reads and writes, as a Rust enum.
//!
//! zarrs' data type objects stay inside the metadata layer; users see this enum: its Zarr v3
//! name, its NumPy form and its element size. Parsing a name that is not one of them fails
//! with [`UnknownDataType`], which lists the valid names.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};
use zarrs::metadata::v3::MetadataV3;

use super::time::{TimeScale, TimeUnit};

/// A fixed-size Zarr data type that zarrflow reads and writes.
///
/// The NumPy time types (`numpy.datetime64`, `numpy.timedelta64`) carry their unit: they are
/// written `datetime64[10s]` / `timedelta64[ns]` here (NumPy's `M8[10s]` / `m8[ns]` are
/// accepted too), and their elements are `i64` counts (`i64::MIN` is NaT).
///
/// ```
/// use zarrflow::DataType;
/// let t: DataType = "float32".parse().unwrap();
/// assert_eq!(t, DataType::Float32);
/// assert_eq!((t.size(), t.numpy_str()), (4, "<f4"));
/// assert_eq!("r24".parse::<DataType>().unwrap(), DataType::Raw { bits: 24 });
/// let err = "float33".parse::<DataType>().unwrap_err();
/// assert!(err.to_string().contains("float32"), "{err}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `bool` (one byte, 0 or 1).
    Bool,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint8`.
    UInt8,
    /// `uint16`.
    UInt16,
    /// `uint32`.
    UInt32,
    /// `uint64`.
    UInt64,
    /// `float16` (IEEE half precision).
    Float16,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// `complex64`: two `float32`.
    Complex64,
    /// `complex128`: two `float64`.
    Complex128,
    /// `r<bits>`: raw bytes, `bits` a positive multiple of 8 (read and written as bytes).
    Raw {
        /// Bits per element.
        bits: u32,
    },
    /// `string`: variable-length UTF-8 text (zarr-python's `dtype=str`; Zarr v2 `|O` with
    /// the `vlen-utf8` codec). Read and written as `String`s
    /// ([`ArrayView::read_vlen`](crate::ArrayView::read_vlen)).
    String,
    /// `bytes` (zarr-python's `variable_length_bytes`): variable-length byte strings (Zarr v2
    /// `|O` with `vlen-bytes`). Read and written as `Vec<u8>`s.
    Bytes,
    /// `fixed_length_utf32` (NumPy `<U{chars}`): text of at most `chars` Unicode code points,
    /// stored as UTF-32 code units padded with U+0000 (`4 * chars` bytes per element). Read
    /// and written as `String`s, trailing U+0000 removed as NumPy does.
    FixedString {
        /// Code points per element.
        chars: u32,
    },
    /// `null_terminated_bytes` (NumPy `|S{len}`): byte strings of at most `len` bytes,
    /// padded with NUL bytes. Read and written as `Vec<u8>`s, trailing NULs removed as NumPy
    /// does.
    FixedBytes {
        /// Bytes per element.
        len: u32,
    },
    /// `numpy.datetime64`: an `i64` count of the unit since 1970-01-01 (NaT: `i64::MIN`).
    DateTime64(TimeScale),
    /// `numpy.timedelta64`: an `i64` count of the unit (NaT: `i64::MIN`).
    TimeDelta64(TimeScale),
}

/// The data types with a fixed name, in the order error messages list them.
const NAMED: [DataType; 14] = [
    DataType::Bool,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Complex64,
    DataType::Complex128,
];

/// The variable-length data types.
const VARIABLE: [DataType; 2] = [DataType::String, DataType::Bytes];

/// The largest raw type accepted (`r<bits>`): 1 MiB per element.
const MAX_RAW_BITS: u32 = 8 << 20;

/// The largest fixed-width text element accepted: 1 MiB, as for raw types.
const MAX_FIXED_BYTES: u64 = 1 << 20;

impl DataType {
    /// Every data type with a fixed name (all but the raw `r<bits>` types), in the order
    /// messages list them.
    pub const NAMED: [DataType; 14] = NAMED;

    /// The variable-length data types (`string`, `bytes`).
    pub const VARIABLE: [DataType; 2] = VARIABLE;

    /// Whether elements have no fixed size (`string`, `bytes`).
    pub const fn is_variable_length(&self) -> bool {
        matches!(self, DataType::String | DataType::Bytes)
    }

    /// Whether elements are text or byte strings, read and written as `String` / `Vec<u8>`:
    /// `string`, `bytes` and their fixed-width forms.
    pub const fn is_text(&self) -> bool {
        matches!(
            self,
            DataType::String
                | DataType::Bytes
                | DataType::FixedString { .. }
                | DataType::FixedBytes { .. }
        )
    }

    /// Whether elements are Unicode text (`string`, `fixed_length_utf32`).
    pub const fn is_unicode(&self) -> bool {
        matches!(self, DataType::String | DataType::FixedString { .. })
    }

    /// The Zarr v3 name (`"float32"`, `"r16"`, ...). Raw types have no static name: see
    /// [`Display`](fmt::Display) for theirs.
    pub const fn name(&self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Float16 => "float16",
            DataType::Float32 => "float32",
            DataType::Float64 => "float64",
            DataType::Complex64 => "complex64",
            DataType::Complex128 => "complex128",
            DataType::Raw { .. } => "r*",
            DataType::String => "string",
            DataType::Bytes => "bytes",
            DataType::FixedString { .. } => "fixed_length_utf32",
            DataType::FixedBytes { .. } => "null_terminated_bytes",
            DataType::DateTime64(_) => "numpy.datetime64",
            DataType::TimeDelta64(_) => "numpy.timedelta64",
        }
    }

    /// Bytes per element (0 for the variable-length `string` and `bytes`).
    pub const fn size(&self) -> usize {
        match self {
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64
            | DataType::UInt64
            | DataType::Float64
            | DataType::Complex64
            | DataType::DateTime64(_)
            | DataType::TimeDelta64(_) => 8,
            DataType::Complex128 => 16,
            DataType::Raw { bits } => (*bits / 8) as usize,
            DataType::FixedString { chars } => *chars as usize * 4,
            DataType::FixedBytes { len } => *len as usize,
            DataType::String | DataType::Bytes => 0,
        }
    }

    /// The NumPy type string of the type in little-endian order (`np.dtype(...).str`):
    /// `"<f4"`, `"|b1"`, `"<c16"`; raw types are void types (`"|V3"`) and give `"|V"` here
    /// (their size is [`size`](Self::size)); time types give `"<M8"` / `"<m8"` (their unit is
    /// in [`numpy_descr`](Self::numpy_descr)); `string` and `bytes` give NumPy's object type
    /// `"|O"` (their fixed-width `.npy` forms `<U n` / `|S n` depend on the values); the
    /// fixed-width text types give `"<U"` / `"|S"` (with their width in
    /// [`numpy_descr`](Self::numpy_descr)).
    pub const fn numpy_str(&self) -> &'static str {
        match self {
            DataType::Bool => "|b1",
            DataType::Int8 => "|i1",
            DataType::Int16 => "<i2",
            DataType::Int32 => "<i4",
            DataType::Int64 => "<i8",
            DataType::UInt8 => "|u1",
            DataType::UInt16 => "<u2",
            DataType::UInt32 => "<u4",
            DataType::UInt64 => "<u8",
            DataType::Float16 => "<f2",
            DataType::Float32 => "<f4",
            DataType::Float64 => "<f8",
            DataType::Complex64 => "<c8",
            DataType::Complex128 => "<c16",
            DataType::Raw { .. } => "|V",
            DataType::String | DataType::Bytes => "|O",
            DataType::FixedString { .. } => "<U",
            DataType::FixedBytes { .. } => "|S",
            DataType::DateTime64(_) => "<M8",
            DataType::TimeDelta64(_) => "<m8",
        }
    }

    /// The whole little-endian NumPy type string: [`numpy_str`](Self::numpy_str) with a raw
    /// type's size (`"|V3"`) and a time type's unit (`"<M8[10s]"`, `"<m8[ns]"`, `"<M8"`).
    pub fn numpy_descr(&self) -> String {
        match self {
            DataType::Raw { bits } => format!("|V{}", bits / 8),
            DataType::FixedString { chars } => format!("<U{chars}"),
            DataType::FixedBytes { len } => format!("|S{len}"),
            DataType::DateTime64(s) | DataType::TimeDelta64(s) => match s.unit {
                TimeUnit::Generic => self.numpy_str().to_string(),
                _ => format!("{}[{s}]", self.numpy_str()),
            },
            t => t.numpy_str().to_string(),
        }
    }

    /// The time unit of a time type.
    pub const fn time_scale(&self) -> Option<TimeScale> {
        match self {
            DataType::DateTime64(s) | DataType::TimeDelta64(s) => Some(*s),
            _ => None,
        }
    }

    /// The data type of a Zarr v3 `data_type` field: a name (`"float32"`, `"r24"`) or
    /// zarr-python's `numpy.datetime64` / `numpy.timedelta64` objects (`{"name": ...,
    /// "configuration": {"unit": "s", "scale_factor": 10}}`); `None` for any other.
    pub fn from_metadata(meta: &MetadataV3) -> Option<DataType> {
        let fixed = |unit: u64| -> Option<u32> {
            let config = meta.configuration()?;
            if config.len() != 1 {
                return None;
            }
            let bytes = config.get("length_bytes")?.as_u64()?;
            (bytes > 0 && bytes % unit == 0 && bytes <= MAX_FIXED_BYTES)
                .then(|| u32::try_from(bytes / unit).ok())
                .flatten()
        };
        match meta.name() {
            "fixed_length_utf32" => return fixed(4).map(|chars| DataType::FixedString { chars }),
            "null_terminated_bytes" => return fixed(1).map(|len| DataType::FixedBytes { len }),
            _ => {}
        }
        let time = match meta.name() {
            "numpy.datetime64" => DataType::DateTime64,
            "numpy.timedelta64" => DataType::TimeDelta64,
            name => {
                return match meta.configuration() {
                    Some(c) if !c.is_empty() => None,
                    _ => name.parse().ok(),
                };
            }
        };
        let config = meta.configuration()?;
        if config.len() != 2 {
            return None;
        }
        let unit = TimeUnit::from_code(config.get("unit")?.as_str()?)?;
        let scale = config.get("scale_factor")?.as_u64()?;
        let scale = u32::try_from(scale).ok().filter(|&s| s > 0)?;
        Some(time(TimeScale { unit, scale }))
    }

    /// The Zarr v3 `data_type` field of this type (zarr-python's form for time types and the
    /// fixed-width text types).
    pub fn to_metadata(&self) -> MetadataV3 {
        match self {
            DataType::FixedString { .. } | DataType::FixedBytes { .. } => {
                let mut config = Map::new();
                config.insert("length_bytes".into(), json!(self.size()));
                MetadataV3::new_with_configuration(self.name(), config)
            }
            DataType::DateTime64(s) | DataType::TimeDelta64(s) => {
                let mut config = Map::new();
                config.insert("unit".into(), Value::from(s.unit.config_name()));
                config.insert("scale_factor".into(), json!(s.scale));
                MetadataV3::new_with_configuration(self.name(), config)
            }
            t => MetadataV3::new(t.to_string()),
        }
    }

    /// Every valid name, for messages: the named types and the raw form `r<bits>`.
    pub fn valid_names() -> String {
        let mut names: Vec<&str> = NAMED.iter().chain(&VARIABLE).map(DataType::name).collect();
        names.push("r<bits> (bits a multiple of 8)");
        names.push("U<n>, S<n>");
        names.push(
            "datetime64[UNIT], timedelta64[UNIT] (UNIT one of Y M W D h m s ms us ns ps fs as, \
             optionally scaled: 10s)",
        );
        names.join(", ")
    }
}

impl fmt::Display for DataType {
    /// The Zarr v3 name (`r24` for a raw type, NumPy's `U5` / `S4` for the fixed-width
    /// text types).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Raw { bits } => write!(f, "r{bits}"),
            DataType::FixedString { chars } => write!(f, "U{chars}"),
            DataType::FixedBytes { len } => write!(f, "S{len}"),
            DataType::DateTime64(s) | DataType::TimeDelta64(s) => {
                let base = match self {
                    DataType::DateTime64(_) => "datetime64",
                    _ => "timedelta64",
                };
                match s.unit {
                    TimeUnit::Generic => f.write_str(base),
                    _ => write!(f, "{base}[{s}]"),
                }
            }
            t => f.write_str(t.name()),
        }
    }
}

/// A data type name that is not one of [`DataType`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown data type `{name}`; valid names: {}", DataType::valid_names())]
pub struct UnknownDataType {
    /// The name given.
    pub name: String,
}

impl FromStr for DataType {
    type Err = UnknownDataType;

    /// Parses a Zarr v3 name (`"uint16"`, `"r8"`) or a time type: `datetime64[10s]`,
    /// `timedelta64[ns]`, NumPy's `M8[s]` / `<m8[ns]`, `numpy.datetime64[D]`; without a unit,
    /// a generic one.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if let Some(t) = NAMED.iter().chain(&VARIABLE).find(|t| t.name() == name) {
            return Ok(*t);
        }
        // zarr-python 3 writes `bytes` under this name; zarrs reads both
        if name == "variable_length_bytes" {
            return Ok(DataType::Bytes);
        }
        if let Some(t) = parse_time_type(name) {
            return Ok(t);
        }
        if let Some(t) = parse_fixed_text(name) {
            return Ok(t);
        }
        let raw = name
            .strip_prefix('r')
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<u32>().ok())
            .filter(|&bits| bits > 0 && bits % 8 == 0 && bits <= MAX_RAW_BITS);
        raw.map(|bits| DataType::Raw { bits })
            .ok_or_else(|| UnknownDataType {
                name: name.chars().take(64).collect(),
            })
    }
}

/// NumPy's fixed-width text types: `U5`, `<U5`, `S4`, `|S4` (a positive width within
/// [`MAX_FIXED_BYTES`] per element).
fn parse_fixed_text(name: &str) -> Option<DataType> {
    let name = name.strip_prefix(['<', '|']).unwrap_or(name);
    let (kind, digits) = name.split_at_checked(1)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = digits.parse::<u32>().ok().filter(|&n| n > 0)?;
    let t = match kind {
        "U" => DataType::FixedString { chars: n },
        "S" => DataType::FixedBytes { len: n },
        _ => return None,
    };
    (t.size() as u64 <= MAX_FIXED_BYTES).then_some(t)
}

/// `datetime64[10s]`, `M8[s]`, `<m8[ns]`, `numpy.timedelta64`, ...
fn parse_time_type(name: &str) -> Option<DataType> {
    let (base, unit) = match name.split_once('[') {
        Some((b, rest)) => (b, rest.strip_suffix(']')?),
        None => (name, ""),
    };
    let base = base.strip_prefix("numpy.").unwrap_or(base);
    let base = base.strip_prefix('<').unwrap_or(base);
    let time = match base {
        "datetime64" | "M8" => DataType::DateTime64,
        "timedelta64" | "m8" => DataType::TimeDelta64,
        _ => return None,
    };
    if name.contains('[') && unit.is_empty() {
        return None;
    }
    Some(time(unit.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in NAMED {
            assert_eq!(t.to_string().parse::<DataType>().unwrap(), t);
        }
        assert_eq!(DataType::Raw { bits: 16 }.to_string(), "r16");
        assert_eq!(DataType::Raw { bits: 16 }.size(), 2);
        for bad in ["r0", "r7", "r", "r+8", "R8", "float", "int", "r99999999999"] {
            assert!(bad.parse::<DataType>().is_err(), "{bad}");
        }
    }

    #[test]
    fn fixed_width_text_types() {
        let u5 = DataType::FixedString { chars: 5 };
        let s4 = DataType::FixedBytes { len: 4 };
        for (name, t) in [("U5", u5), ("<U5", u5), ("S4", s4), ("|S4", s4)] {
            assert_eq!(name.parse(), Ok(t), "{name}");
        }
        assert_eq!(
            (u5.size(), u5.numpy_descr(), u5.to_string()),
            (20, "<U5".into(), "U5".into())
        );
        assert_eq!(
            (s4.size(), s4.numpy_descr(), s4.to_string()),
            (4, "|S4".into(), "S4".into())
        );
        assert!(u5.is_text() && u5.is_unicode() && !u5.is_variable_length());
        assert!(s4.is_text() && !s4.is_unicode());
        for t in [u5, s4] {
            assert_eq!(DataType::from_metadata(&t.to_metadata()), Some(t));
        }
        let doc = |name: &str, c: serde_json::Value| {
            let v = json!({"name": name, "configuration": c});
            DataType::from_metadata(&serde_json::from_value::<MetadataV3>(v).unwrap())
        };
        assert_eq!(
            doc("fixed_length_utf32", json!({"length_bytes": 20})),
            Some(u5)
        );
        assert_eq!(
            doc("null_terminated_bytes", json!({"length_bytes": 4})),
            Some(s4)
        );
        for (name, c) in [
            ("fixed_length_utf32", json!({"length_bytes": 6})),
            ("fixed_length_utf32", json!({"length_bytes": 0})),
            ("null_terminated_bytes", json!({"length_bytes": -1})),
            ("null_terminated_bytes", json!({"length_bytes": 1u64 << 40})),
            ("null_terminated_bytes", json!({"length_bytes": 4, "x": 1})),
            ("null_terminated_bytes", json!({})),
        ] {
            assert_eq!(doc(name, c.clone()), None, "{name} {c}");
        }
        for bad in ["U0", "U", "S-1", "U99999999999", "S2097152", "<S4x", "V4"] {
            assert!(bad.parse::<DataType>().is_err(), "{bad}");
        }
    }

    #[test]
    fn time_types() {
        let ten_s = TimeScale {
            unit: TimeUnit::Second,
            scale: 10,
        };
        for name in [
            "datetime64[10s]",
            "M8[10s]",
            "<M8[10s]",
            "numpy.datetime64[10s]",
        ] {
            assert_eq!(name.parse(), Ok(DataType::DateTime64(ten_s)), "{name}");
        }
        let t = DataType::TimeDelta64(TimeScale {
            unit: TimeUnit::Nanosecond,
            scale: 1,
        });
        assert_eq!(t.to_string(), "timedelta64[ns]");
        assert_eq!(t.numpy_descr(), "<m8[ns]");
        assert_eq!(t.to_string().parse(), Ok(t));
        assert_eq!(DataType::from_metadata(&t.to_metadata()), Some(t));
        assert_eq!(DataType::DateTime64(ten_s).numpy_descr(), "<M8[10s]");
        let generic = "datetime64".parse::<DataType>().unwrap();
        assert_eq!(generic.numpy_descr(), "<M8");
        assert_eq!(
            DataType::from_metadata(&generic.to_metadata()),
            Some(generic)
        );
        for bad in [
            "datetime64[]",
            "datetime64[0s]",
            "M8[x]",
            "datetime64[s",
            "M16[s]",
        ] {
            assert!(bad.parse::<DataType>().is_err(), "{bad}");
        }
        let doc = |c: serde_json::Value| {
            let v = json!({"name": "numpy.datetime64", "configuration": c});
            DataType::from_metadata(&serde_json::from_value::<MetadataV3>(v).unwrap())
        };
        assert_eq!(
            doc(json!({"unit": "s", "scale_factor": 10})),
            Some(DataType::DateTime64(ten_s))
        );
        for bad in [
            json!({"unit": "s"}),
            json!({"unit": "s", "scale_factor": 0}),
            json!({"unit": "s", "scale_factor": 1u64 << 33}),
            json!({"unit": "parsec", "scale_factor": 1}),
            json!({"unit": "s", "scale_factor": 1, "x": 1}),
        ] {
            assert_eq!(doc(bad.clone()), None, "{bad}");
        }
    }
}
