//! [`DataType`]: the data types zarrflow reads and writes, as a Rust enum.
//!
//! zarrs' data type objects stay inside the metadata layer; users see this enum: its Zarr v3
//! name, its NumPy form and its element size. Parsing a name that is not one of them fails
//! with [`UnknownDataType`], which lists the valid names.

use std::fmt;
use std::str::FromStr;

/// A fixed-size Zarr data type that zarrflow reads and writes.
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
        }
    }

    /// Bytes per element (0 for the variable-length `string` and `bytes`).
    pub const fn size(&self) -> usize {
        match self {
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64 | DataType::UInt64 | DataType::Float64 | DataType::Complex64 => 8,
            DataType::Complex128 => 16,
            DataType::Raw { bits } => (*bits / 8) as usize,
            DataType::String | DataType::Bytes => 0,
        }
    }

    /// The NumPy type string of the type in little-endian order (`np.dtype(...).str`):
    /// `"<f4"`, `"|b1"`, `"<c16"`; raw types are void types (`"|V3"`) and give `"|V"` here
    /// (their size is [`size`](Self::size)); `string` and `bytes` give NumPy's object type
    /// `"|O"` (their fixed-width `.npy` forms `<U n` / `|S n` depend on the values).
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
        }
    }

    /// Every valid name, for messages: the named types and the raw form `r<bits>`.
    pub fn valid_names() -> String {
        let mut names: Vec<&str> = NAMED.iter().chain(&VARIABLE).map(DataType::name).collect();
        names.push("r<bits> (bits a multiple of 8)");
        names.join(", ")
    }
}

impl fmt::Display for DataType {
    /// The Zarr v3 name (`r24` for a raw type).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Raw { bits } => write!(f, "r{bits}"),
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

    /// Parses a Zarr v3 name (`"uint16"`, `"r8"`).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if let Some(t) = NAMED.iter().chain(&VARIABLE).find(|t| t.name() == name) {
            return Ok(*t);
        }
        // zarr-python 3 writes `bytes` under this name; zarrs reads both
        if name == "variable_length_bytes" {
            return Ok(DataType::Bytes);
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
}
