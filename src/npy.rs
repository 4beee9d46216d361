//! NumPy `.npy` files: a strict, bounded reader and a writer for every [`DataType`].
//!
//! zarrflow moves elements as C-order native-endian bytes; this module turns such bytes into
//! a `.npy` file and back. Zarr data types map to NumPy descriptors: `bool` → `|b1`,
//! `intN`/`uintN` → `<iK`/`<uK` (`|i1`/`|u1` for one byte), `float16/32/64` →
//! `<f2`/`<f4`/`<f8`, `complex64/128` → `<c8`/`<c16` and raw `rN` → `|V{N/8}`.
//!
//! ```
//! use zarrflow::DataType;
//! use zarrflow::npy::{self, NpyType};
//!
//! let ty = NpyType::of(DataType::Int16);
//! let data: Vec<u8> = [1i16, -2, 3].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let file = npy::npy_bytes(ty, &[3], &data)?;
//! assert_eq!(file.len(), 128 + 6); // NumPy's 64-byte aligned header, then the data
//! let back = npy::read_npy(&file)?;
//! assert_eq!((back.ty(), back.shape(), back.data.as_slice()), (ty, &[3][..], &data[..]));
//! assert_eq!(back.header.descr.to_string(), "<i2");
//! # Ok::<(), zarrflow::npy::NpyError>(())
//! ```
//!
//! # Writing
//!
//! [`write_npy`] and [`npy_bytes`] write what `numpy.save` (NumPy 2) writes for a
//! C-contiguous little-endian array, byte for byte: format 1.0, the header dictionary
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (13, 7), }`, spaces reserving 21
//! digits for the first dimension, padding with spaces to a multiple of 64 bytes and `\n`,
//! then the data, little-endian. (Format 2.0 is written when a header would not fit 1.0,
//! which [`MAX_RANK`] shapes never need.)
//!
//! # Reading
//!
//! [`read_npy`] (and [`read_npy_vec`], which reuses the caller's buffer) accept what NumPy
//! accepts for these types, and refuse everything else with a typed [`NpyError`]:
//!
//! - the magic `\x93NUMPY`, format version 1.0, 2.0 or 3.0, and the header length the file
//!   states (at most [`MAX_HEADER_LEN`] bytes, all present); the dictionary is never searched
//!   for by substring;
//! - the header is a Python dict literal (parsed as Python does, with nesting bounded to
//!   [`MAX_DEPTH`]) followed only by whitespace and ending in `\n`;
//! - it has exactly the keys `descr`, `fortran_order` and `shape`, each once; `descr` is a
//!   supported type string (either byte order; big-endian data is swapped to native order),
//!   `fortran_order` is `True` or `False`, `shape` a tuple of at most [`MAX_RANK`]
//!   non-negative integers;
//! - `product(shape) × itemsize` is computed with checked arithmetic and must equal the bytes
//!   after the header exactly, before anything is allocated;
//! - Fortran-order files are refused ([`NpyError::FortranOrder`]): save them with
//!   `numpy.ascontiguousarray`.
//!
//! Error messages quote at most [`QUOTE_LIMIT`] characters of any text from the file.

use std::fmt;
use std::io::Write;
use std::str::FromStr;

use crate::metadata::{DataType, TimeScale, TimeUnit};

/// The unit of a time descriptor without brackets (`<M8`).
const GENERIC: TimeScale = TimeScale {
    unit: TimeUnit::Generic,
    scale: 1,
};

/// The first six bytes of every `.npy` file.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The longest header dictionary accepted, in bytes. A header of the supported types is
/// under 2 KiB even at [`MAX_RANK`] dimensions; only structured types need more.
pub const MAX_HEADER_LEN: usize = 1 << 16;

/// The most dimensions a shape may have (NumPy's own limit, `NPY_MAXDIMS`).
pub const MAX_RANK: usize = 64;

/// The deepest nesting of brackets accepted in a header dictionary.
pub const MAX_DEPTH: usize = 16;

/// The most characters of input text an error message quotes.
pub const QUOTE_LIMIT: usize = 80;

/// The largest void (`|V<n>`) element accepted: 1 MiB, as zarrflow's largest raw type.
pub const MAX_VOID_SIZE: usize = 1 << 20;

/// An error reading or writing a `.npy` file. The messages of malformed files describe what
/// is wrong ("it does not start with ..."); [`is_unsupported`](Self::is_unsupported) tells
/// well-formed files this reader does not handle from malformed ones.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// The file does not begin with [`MAGIC`].
    #[error("it does not start with the \\x93NUMPY magic")]
    Magic,
    /// The file ends before its header does.
    #[error("it ends inside its {0}")]
    Truncated(&'static str),
    /// The format version is not 1.0, 2.0 or 3.0.
    #[error("format version {major}.{minor} is not supported (1.0, 2.0 and 3.0 are)")]
    Version {
        /// The major version byte.
        major: u8,
        /// The minor version byte.
        minor: u8,
    },
    /// The stated header length is over [`MAX_HEADER_LEN`].
    #[error("its header is {len} bytes long; at most {MAX_HEADER_LEN} are accepted")]
    HeaderTooLong {
        /// The stated length.
        len: usize,
    },
    /// A format 3.0 header is not UTF-8.
    #[error("its format 3.0 header is not UTF-8")]
    HeaderEncoding,
    /// The header does not end in a newline.
    #[error("its header does not end in a newline")]
    HeaderNewline,
    /// The header is not a Python literal of the accepted forms.
    #[error("its header is not a Python dict literal: {reason} at character {offset}: `{near}`")]
    HeaderSyntax {
        /// What is wrong.
        reason: &'static str,
        /// The character offset in the header.
        offset: usize,
        /// The header text from there (bounded).
        near: String,
    },
    /// The header is a literal, but not a dict.
    #[error("its header is not a dict: `{0}`")]
    NotADict(String),
    /// A required key is missing.
    #[error("its header has no '{0}' key")]
    MissingKey(&'static str),
    /// A key appears twice.
    #[error("its header has the key '{0}' twice")]
    DuplicateKey(&'static str),
    /// A key other than `descr`, `fortran_order` and `shape`.
    #[error(
        "its header has the unknown key `{0}` (the keys are 'descr', 'fortran_order' and 'shape')"
    )]
    UnknownKey(String),
    /// A value of the wrong form.
    #[error("its '{key}' is `{found}`, expected {expected}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// What was expected.
        expected: &'static str,
        /// What the header holds (bounded).
        found: String,
    },
    /// A structured data type (`descr` is a list).
    #[error("structured data types are not supported (descr `{0}`)")]
    Structured(String),
    /// A data type string this module does not map to a Zarr data type.
    #[error(
        "data type `{0}` is not supported (bool, int8..int64, uint8..uint64, float16/32/64, \
         complex64/128 and void |V<n> are)"
    )]
    UnsupportedDescr(String),
    /// More than [`MAX_RANK`] dimensions.
    #[error("its shape has {rank} dimensions; at most {MAX_RANK} are supported")]
    Rank {
        /// The number of dimensions.
        rank: usize,
    },
    /// `fortran_order` is `True`.
    #[error("Fortran-order .npy files are not supported; save with numpy.ascontiguousarray")]
    FortranOrder,
    /// `product(shape) × itemsize` overflows.
    #[error("shape {shape:?} of {descr} needs more bytes than this machine can address")]
    Overflow {
        /// The shape.
        shape: Vec<u64>,
        /// The data type.
        descr: Descr,
    },
    /// The bytes after the header are not exactly the data of the shape.
    #[error("it holds {found} data bytes, but shape {shape:?} of {descr} needs {expected}")]
    DataLength {
        /// The shape.
        shape: Vec<u64>,
        /// The data type.
        descr: Descr,
        /// The bytes the shape needs.
        expected: u64,
        /// The bytes present.
        found: u64,
    },
    /// [`write_npy`] was given a buffer of the wrong length.
    #[error("{found} data bytes given, but shape {shape:?} of {ty} needs {}", needs(.expected))]
    WrongBufferLength {
        /// The shape.
        shape: Vec<u64>,
        /// The element type.
        ty: NpyType,
        /// The bytes the shape needs (`None`: more than addressable).
        expected: Option<u64>,
        /// The bytes given.
        found: usize,
    },
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A `<U n` element holds a code unit that is no Unicode character.
    #[error("element {index} of a `<U` file holds {unit:#x}, which is no Unicode character")]
    InvalidCharacter {
        /// The element's C-order index.
        index: usize,
        /// The code unit.
        unit: u32,
    },
}

impl NpyError {
    /// Whether the file is well formed but uses something this module does not support (a
    /// type, Fortran order, too many dimensions), rather than being malformed.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            NpyError::Structured(_)
                | NpyError::UnsupportedDescr(_)
                | NpyError::Rank { .. }
                | NpyError::FortranOrder
                | NpyError::Version { .. }
        )
    }
}

fn needs(bytes: &Option<u64>) -> String {
    bytes.map_or_else(|| "2^64 or more".into(), |n| n.to_string())
}

/// At most [`QUOTE_LIMIT`] characters of `text`, control characters escaped, with `...`
/// when cut.
fn quote(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().take(QUOTE_LIMIT) {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    if text.chars().nth(QUOTE_LIMIT).is_some() {
        out.push_str("...");
    }
    out
}

/// The kind of a NumPy type (its `dtype.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NpyKind {
    /// `b`: bool.
    Bool,
    /// `i`: signed integer.
    Int,
    /// `u`: unsigned integer.
    UInt,
    /// `f`: IEEE float.
    Float,
    /// `c`: complex (two floats).
    Complex,
    /// `V`: void (raw bytes).
    Void,
    /// `U`: fixed-width text, UTF-32 code units (`<U n`: n characters, 4n bytes), NUL-padded.
    Unicode,
    /// `S`: fixed-width bytes (`|S n`), NUL-padded.
    Bytes,
    /// `M`: `datetime64` of a unit (`<M8[s]`).
    DateTime(TimeScale),
    /// `m`: `timedelta64` of a unit (`<m8[ns]`).
    TimeDelta(TimeScale),
}

impl NpyKind {
    /// The NumPy kind character.
    pub const fn code(self) -> char {
        match self {
            NpyKind::Bool => 'b',
            NpyKind::Int => 'i',
            NpyKind::UInt => 'u',
            NpyKind::Float => 'f',
            NpyKind::Complex => 'c',
            NpyKind::Void => 'V',
            NpyKind::Unicode => 'U',
            NpyKind::Bytes => 'S',
            NpyKind::DateTime(_) => 'M',
            NpyKind::TimeDelta(_) => 'm',
        }
    }

    fn of_code(c: char) -> Option<NpyKind> {
        Some(match c {
            'b' => NpyKind::Bool,
            'i' => NpyKind::Int,
            'u' => NpyKind::UInt,
            'f' => NpyKind::Float,
            'c' => NpyKind::Complex,
            'V' => NpyKind::Void,
            'U' => NpyKind::Unicode,
            'S' => NpyKind::Bytes,
            // the unit follows the size: `Descr::parse` puts it in
            'M' => NpyKind::DateTime(GENERIC),
            'm' => NpyKind::TimeDelta(GENERIC),
            _ => return None,
        })
    }
}

/// A `.npy` element type: the NumPy form of a [`DataType`], without a byte order.
///
/// Its [`Display`](fmt::Display) is the little-endian descriptor (`<f4`, `|b1`, `|V3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NpyType {
    kind: NpyKind,
    size: usize,
}

impl NpyType {
    /// The type of `kind` with `size`-byte elements, if zarrflow has such a data type: bool
    /// of 1 byte, integers of 1, 2, 4 or 8, floats of 2, 4 or 8, complex of 8 or 16, void of
    /// 1 to [`MAX_VOID_SIZE`].
    pub const fn new(kind: NpyKind, size: usize) -> Option<NpyType> {
        let valid = match kind {
            NpyKind::Bool => size == 1,
            NpyKind::Int | NpyKind::UInt => matches!(size, 1 | 2 | 4 | 8),
            NpyKind::Float => matches!(size, 2 | 4 | 8),
            NpyKind::Complex => matches!(size, 8 | 16),
            NpyKind::Void | NpyKind::Bytes => size >= 1 && size <= MAX_VOID_SIZE,
            NpyKind::Unicode => size >= 4 && size.is_multiple_of(4) && size <= MAX_VOID_SIZE,
            NpyKind::DateTime(_) | NpyKind::TimeDelta(_) => size == 8,
        };
        if valid {
            Some(NpyType { kind, size })
        } else {
            None
        }
    }

    /// The `.npy` type of a data type (a raw `rN` type is void `|V{N/8}`, the fixed-width
    /// text types `<U n` / `|S n`). The
    /// variable-length `string` and `bytes` give their narrowest fixed-width form (`<U1`,
    /// `|S1`): a file's width depends on its values ([`NpyType::text`]).
    pub const fn of(data_type: DataType) -> NpyType {
        let kind = match data_type {
            DataType::Bool => NpyKind::Bool,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => NpyKind::Int,
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
                NpyKind::UInt
            }
            DataType::Float16 | DataType::Float32 | DataType::Float64 => NpyKind::Float,
            DataType::Complex64 | DataType::Complex128 => NpyKind::Complex,
            DataType::Raw { .. } => NpyKind::Void,
            DataType::String => return NpyType::text(NpyKind::Unicode, 1),
            DataType::Bytes => return NpyType::text(NpyKind::Bytes, 1),
            DataType::FixedString { .. } => NpyKind::Unicode,
            DataType::FixedBytes { .. } => NpyKind::Bytes,
            DataType::DateTime64(s) => NpyKind::DateTime(s),
            DataType::TimeDelta64(s) => NpyKind::TimeDelta(s),
        };
        NpyType {
            kind,
            size: data_type.size(),
        }
    }

    /// The fixed-width text type of `width` characters (`Unicode`: `<U{width}`) or bytes
    /// (`Bytes`: `|S{width}`); width 0 is stored as 1, as NumPy does. Any other kind gives
    /// `|S{width}`.
    pub const fn text(kind: NpyKind, width: usize) -> NpyType {
        let width = if width == 0 { 1 } else { width };
        match kind {
            NpyKind::Unicode => NpyType {
                kind,
                size: width * 4,
            },
            _ => NpyType {
                kind: NpyKind::Bytes,
                size: width,
            },
        }
    }

    /// The data type of this type.
    pub const fn data_type(&self) -> DataType {
        match (self.kind, self.size) {
            (NpyKind::Bool, _) => DataType::Bool,
            (NpyKind::Int, 1) => DataType::Int8,
            (NpyKind::Int, 2) => DataType::Int16,
            (NpyKind::Int, 4) => DataType::Int32,
            (NpyKind::Int, _) => DataType::Int64,
            (NpyKind::UInt, 1) => DataType::UInt8,
            (NpyKind::UInt, 2) => DataType::UInt16,
            (NpyKind::UInt, 4) => DataType::UInt32,
            (NpyKind::UInt, _) => DataType::UInt64,
            (NpyKind::Float, 2) => DataType::Float16,
            (NpyKind::Float, 4) => DataType::Float32,
            (NpyKind::Float, _) => DataType::Float64,
            (NpyKind::Complex, 8) => DataType::Complex64,
            (NpyKind::Complex, _) => DataType::Complex128,
            (NpyKind::Unicode, _) => DataType::String,
            (NpyKind::Bytes, _) => DataType::Bytes,
            (NpyKind::Void, n) => DataType::Raw {
                bits: (n * 8) as u32,
            },
            (NpyKind::DateTime(s), _) => DataType::DateTime64(s),
            (NpyKind::TimeDelta(s), _) => DataType::TimeDelta64(s),
        }
    }

    /// The kind.
    pub const fn kind(&self) -> NpyKind {
        self.kind
    }

    /// Bytes per element.
    pub const fn size(&self) -> usize {
        self.size
    }

    /// Bytes of one byte-order unit: the element, half of it for complex, 1 for bool and
    /// void.
    pub const fn swap_unit(&self) -> usize {
        match self.kind {
            NpyKind::Bool | NpyKind::Void | NpyKind::Bytes => 1,
            NpyKind::Complex => self.size / 2,
            NpyKind::Unicode => 4,
            _ => self.size,
        }
    }

    /// The little-endian descriptor (what [`write_npy`] writes).
    pub const fn little_endian(&self) -> Descr {
        Descr {
            ty: *self,
            byte_order: if self.swap_unit() > 1 {
                ByteOrder::Little
            } else {
                ByteOrder::NotApplicable
            },
        }
    }
}

impl fmt::Display for NpyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.little_endian().fmt(f)
    }
}

/// The byte order of a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `<`.
    Little,
    /// `>`.
    Big,
    /// `|`: one-byte units (bool, `int8`, `uint8`, void).
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of this machine.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };

    /// The descriptor character: `<`, `>` or `|`.
    pub const fn code(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        }
    }
}

/// A NumPy type descriptor (`dtype.str`): an element type and a byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Descr {
    /// The element type.
    pub ty: NpyType,
    /// The byte order of the data.
    pub byte_order: ByteOrder,
}

impl Descr {
    /// Parses a descriptor: a byte order (`<`, `>`, `=` native, or none: native; `|` only for
    /// one-byte units, which take any), a kind character and a size, e.g. `<f4`, `>c16`,
    /// `|b1`, `|V3`; time types have their unit in brackets: `<M8[10s]`, `<m8[ns]`, `<M8`.
    pub fn parse(text: &str) -> Result<Descr, NpyError> {
        let unsupported = || NpyError::UnsupportedDescr(quote(text));
        let (order, rest) = match text.chars().next() {
            Some(c @ ('<' | '>' | '|' | '=')) => (Some(c), &text[1..]),
            _ => (None, text),
        };
        let mut chars = rest.chars();
        let kind = chars
            .next()
            .and_then(NpyKind::of_code)
            .ok_or_else(unsupported)?;
        let mut digits = chars.as_str();
        let mut kind = kind;
        if let Some(c @ ('M' | 'm')) = rest.chars().next() {
            let (size, unit) = match digits.split_once('[') {
                Some((size, unit)) => (size, unit.strip_suffix(']').ok_or_else(unsupported)?),
                None => (digits, ""),
            };
            if digits.contains('[') && unit.is_empty() {
                return Err(unsupported());
            }
            let scale: TimeScale = unit.parse().map_err(|_| unsupported())?;
            kind = if c == 'M' {
                NpyKind::DateTime(scale)
            } else {
                NpyKind::TimeDelta(scale)
            };
            digits = size;
        }
        if digits.is_empty()
            || digits.len() > 8
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || digits.starts_with('0')
        {
            return Err(unsupported());
        }
        let size: usize = digits.parse().map_err(|_| unsupported())?;
        // `<U n` counts characters of 4 bytes
        let size = match kind {
            NpyKind::Unicode => size.checked_mul(4).ok_or_else(unsupported)?,
            _ => size,
        };
        let ty = NpyType::new(kind, size).ok_or_else(unsupported)?;
        let byte_order = if ty.swap_unit() == 1 {
            ByteOrder::NotApplicable
        } else {
            match order {
                Some('<') => ByteOrder::Little,
                Some('>') => ByteOrder::Big,
                Some('|') => return Err(unsupported()),
                _ => ByteOrder::NATIVE,
            }
        };
        Ok(Descr { ty, byte_order })
    }
}

impl FromStr for Descr {
    type Err = NpyError;

    fn from_str(s: &str) -> Result<Descr, NpyError> {
        Descr::parse(s)
    }
}

impl fmt::Display for Descr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}{}",
            self.byte_order.code(),
            self.ty.kind.code(),
            match self.ty.kind {
                NpyKind::Unicode => self.ty.size / 4,
                _ => self.ty.size,
            }
        )?;
        match self.ty.kind {
            NpyKind::DateTime(s) | NpyKind::TimeDelta(s) if s.unit != TimeUnit::Generic => {
                write!(f, "[{s}]")
            }
            _ => Ok(()),
        }
    }
}

/// The header of a `.npy` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// The format version: (1, 0), (2, 0) or (3, 0).
    pub version: (u8, u8),
    /// The data type and byte order.
    pub descr: Descr,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<u64>,
}

impl NpyHeader {
    /// Parses the header at the start of `bytes`; returns it and the offset of the data.
    /// Nothing is allocated beyond the header's own (bounded) text.
    pub fn parse(bytes: &[u8]) -> Result<(NpyHeader, usize), NpyError> {
        if bytes.get(..MAGIC.len()) != Some(&MAGIC[..]) {
            return Err(NpyError::Magic);
        }
        let (major, minor) = match bytes.get(6..8) {
            Some(v) => (v[0], v[1]),
            None => return Err(NpyError::Truncated("preamble")),
        };
        let len_bytes = match (major, minor) {
            (1, 0) => 2,
            (2, 0) | (3, 0) => 4,
            _ => return Err(NpyError::Version { major, minor }),
        };
        let start = 8 + len_bytes;
        let field = bytes.get(8..start).ok_or(NpyError::Truncated("preamble"))?;
        let len = field
            .iter()
            .rev()
            .fold(0usize, |acc, &b| (acc << 8) | b as usize);
        if len > MAX_HEADER_LEN {
            return Err(NpyError::HeaderTooLong { len });
        }
        let end = start + len;
        let raw = bytes.get(start..end).ok_or(NpyError::Truncated("header"))?;
        let text: Vec<char> = if major == 3 {
            std::str::from_utf8(raw)
                .map_err(|_| NpyError::HeaderEncoding)?
                .chars()
                .collect()
        } else {
            // formats 1.0 and 2.0 are Latin-1
            raw.iter().map(|&b| char::from(b)).collect()
        };
        if text.last() != Some(&'\n') {
            return Err(NpyError::HeaderNewline);
        }
        let (descr, fortran_order, shape) = dict_fields(&text)?;
        Ok((
            NpyHeader {
                version: (major, minor),
                descr,
                fortran_order,
                shape,
            },
            end,
        ))
    }

    /// The bytes of the data: `product(shape) × itemsize`, checked.
    pub fn data_len(&self) -> Result<usize, NpyError> {
        data_len(&self.shape, self.descr.ty)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| NpyError::Overflow {
                shape: self.shape.clone(),
                descr: self.descr,
            })
    }
}

fn data_len(shape: &[u64], ty: NpyType) -> Option<u64> {
    shape
        .iter()
        .try_fold(1u64, |a, &n| a.checked_mul(n))?
        .checked_mul(ty.size as u64)
}

/// A `.npy` file read into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Npy {
    /// The header as the file has it (its byte order is the file's).
    pub header: NpyHeader,
    /// The elements in C order and native byte order (swapped when the file's differs).
    pub data: Vec<u8>,
}

impl Npy {
    /// The element type.
    pub fn ty(&self) -> NpyType {
        self.header.descr.ty
    }

    /// The shape.
    pub fn shape(&self) -> &[u64] {
        &self.header.shape
    }
}

/// The header and data offset of a file whose data may be read: C order, and exactly the
/// data of the shape after the header.
fn checked_header(bytes: &[u8]) -> Result<(NpyHeader, usize), NpyError> {
    let (header, offset) = NpyHeader::parse(bytes)?;
    if header.fortran_order {
        return Err(NpyError::FortranOrder);
    }
    let expected = header.data_len()?;
    let found = bytes.len() - offset;
    if found != expected {
        return Err(NpyError::DataLength {
            shape: header.shape,
            descr: header.descr,
            expected: expected as u64,
            found: found as u64,
        });
    }
    Ok((header, offset))
}

fn to_native(header: &NpyHeader, data: &mut [u8]) {
    let order = header.descr.byte_order;
    if order != ByteOrder::NotApplicable && order != ByteOrder::NATIVE {
        swap_bytes(data, header.descr.ty.swap_unit());
    }
}

/// Reads a `.npy` file from its bytes (the data is copied once, after every check).
pub fn read_npy(bytes: &[u8]) -> Result<Npy, NpyError> {
    let (header, offset) = checked_header(bytes)?;
    let mut data = bytes[offset..].to_vec();
    to_native(&header, &mut data);
    Ok(Npy { header, data })
}

/// Reads a `.npy` file from its bytes, reusing the buffer for the data.
pub fn read_npy_vec(mut bytes: Vec<u8>) -> Result<Npy, NpyError> {
    let (header, offset) = checked_header(&bytes)?;
    bytes.drain(..offset);
    to_native(&header, &mut bytes);
    Ok(Npy {
        header,
        data: bytes,
    })
}

/// Reverses the bytes of every `unit`-byte group (one byte order to the other).
fn swap_bytes(data: &mut [u8], unit: usize) {
    if unit > 1 {
        for chunk in data.chunks_exact_mut(unit) {
            chunk.reverse();
        }
    }
}

/// Python's `repr` of a shape tuple: `()`, `(3,)`, `(13, 7)`.
fn shape_tuple(shape: &[u64]) -> String {
    match shape {
        [] => "()".into(),
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Magic, version, length and `dict` padded as `numpy.lib.format` pads it: spaces and a
/// `\n` up to the next multiple of 64 bytes (a whole 64 more when already aligned, as NumPy
/// does). Format 1.0 unless the length needs more than 16 bits.
fn frame(dict: &str) -> Vec<u8> {
    const ALIGN: usize = 64;
    let padded = |prefix: usize| {
        let hlen = dict.len() + 1;
        hlen + ALIGN - (prefix + hlen) % ALIGN
    };
    let (version, len_field) = match padded(10) {
        n if n <= usize::from(u16::MAX) => (1u8, (n as u16).to_le_bytes().to_vec()),
        _ => (2u8, (padded(12) as u32).to_le_bytes().to_vec()),
    };
    let prefix = MAGIC.len() + 2 + len_field.len();
    let total = prefix + padded(prefix);
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    out.extend_from_slice(&len_field);
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// The header `numpy.save` writes for a C-order little-endian array of `ty` and `shape`
/// (NumPy 2: the dictionary, spaces reserving 21 digits for the first dimension, padding).
pub fn header_bytes(ty: NpyType, shape: &[u64]) -> Result<Vec<u8>, NpyError> {
    if shape.len() > MAX_RANK {
        return Err(NpyError::Rank { rank: shape.len() });
    }
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        ty.little_endian(),
        shape_tuple(shape)
    );
    // NumPy leaves room to rewrite the first dimension in place (`GROWTH_AXIS_MAX_DIGITS`)
    if let Some(first) = shape.first() {
        let digits = first.to_string().len();
        dict.extend(std::iter::repeat_n(
            ' ',
            GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits),
        ));
    }
    Ok(frame(&dict))
}

/// The digits NumPy reserves for the first dimension of a C-order shape.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// Writes C-order native-endian `data` of `ty` and `shape` as a little-endian `.npy` file
/// (what `numpy.save` writes), then flushes.
pub fn write_npy<W: Write>(
    mut out: W,
    ty: NpyType,
    shape: &[u64],
    data: &[u8],
) -> Result<(), NpyError> {
    let expected = data_len(shape, ty);
    if expected != Some(data.len() as u64) {
        return Err(NpyError::WrongBufferLength {
            shape: shape.to_vec(),
            ty,
            expected,
            found: data.len(),
        });
    }
    out.write_all(&header_bytes(ty, shape)?)?;
    if ByteOrder::NATIVE == ByteOrder::Little || ty.swap_unit() == 1 {
        out.write_all(data)?;
    } else {
        let mut buf = Vec::new();
        for piece in data.chunks(1 << 16) {
            buf.clear();
            buf.extend_from_slice(piece);
            swap_bytes(&mut buf, ty.swap_unit());
            out.write_all(&buf)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Variable-length values as fixed-width `.npy` data: `Unicode` (`<U{most characters}`,
/// values given as UTF-8) or `Bytes` (`|S{longest}`), NUL-padded, native-endian (what
/// [`write_npy`] takes). As in NumPy, trailing NULs of a value do not survive a read back
/// ([`text_values`]).
pub fn text_data<V: AsRef<[u8]>>(kind: NpyKind, values: &[V]) -> (NpyType, Vec<u8>) {
    if kind == NpyKind::Unicode {
        let chars: Vec<Vec<u32>> = values
            .iter()
            .map(|v| {
                String::from_utf8_lossy(v.as_ref())
                    .chars()
                    .map(u32::from)
                    .collect()
            })
            .collect();
        let ty = NpyType::text(kind, chars.iter().map(Vec::len).max().unwrap_or(0));
        let width = ty.size() / 4;
        let mut data = Vec::with_capacity(values.len() * ty.size());
        for c in &chars {
            data.extend(c.iter().flat_map(|u| u.to_ne_bytes()));
            data.resize(data.len() + (width - c.len()) * 4, 0);
        }
        return (ty, data);
    }
    let ty = NpyType::text(
        kind,
        values.iter().map(|v| v.as_ref().len()).max().unwrap_or(0),
    );
    let mut data = Vec::with_capacity(values.len() * ty.size());
    for v in values {
        data.extend_from_slice(v.as_ref());
        data.resize(data.len() + ty.size() - v.as_ref().len(), 0);
    }
    (ty, data)
}

/// The values of fixed-width `.npy` text data (native-endian) of type `ty`: `<U n` as
/// UTF-8, `|S n` as bytes, each without its trailing NULs (NumPy's reading). `None` for
/// other types.
pub fn text_values(ty: NpyType, data: &[u8]) -> Option<Result<Vec<Vec<u8>>, NpyError>> {
    let width = ty.size();
    match ty.kind() {
        NpyKind::Bytes => Some(Ok(data
            .chunks_exact(width)
            .map(|v| {
                let end = v.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
                v[..end].to_vec()
            })
            .collect())),
        NpyKind::Unicode => Some(
            data.chunks_exact(width)
                .enumerate()
                .map(|(index, v)| {
                    let units: Vec<u32> = v
                        .chunks_exact(4)
                        .map(|u| u32::from_ne_bytes([u[0], u[1], u[2], u[3]]))
                        .collect();
                    let end = units.iter().rposition(|&u| u != 0).map_or(0, |i| i + 1);
                    units[..end]
                        .iter()
                        .map(|&unit| {
                            char::from_u32(unit).ok_or(NpyError::InvalidCharacter { index, unit })
                        })
                        .collect::<Result<String, _>>()
                        .map(String::into_bytes)
                })
                .collect(),
        ),
        _ => None,
    }
}

/// The bytes of the `.npy` file [`write_npy`] writes.
pub fn npy_bytes(ty: NpyType, shape: &[u64], data: &[u8]) -> Result<Vec<u8>, NpyError> {
    let mut out = Vec::with_capacity(128 + data.len());
    write_npy(&mut out, ty, shape, data)?;
    Ok(out)
}

// ---- the header dictionary: a Python literal ------------------------------------------------

/// A Python literal value of a header, with the character span it came from.
#[derive(Debug)]
struct Value {
    lit: Lit,
    start: usize,
    end: usize,
}

#[derive(Debug)]
enum Lit {
    Str(String),
    /// An integer: its sign and value (`None`: 2^64 or more).
    Int {
        negative: bool,
        value: Option<u64>,
    },
    /// Any other number (float, complex, hex ...).
    OtherNumber,
    Bool(bool),
    None,
    Tuple(Vec<Value>),
    List,
    Dict(Vec<(Value, Value)>),
}

struct Parser<'a> {
    text: &'a [char],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, reason: &'static str, at: usize) -> NpyError {
        let near: String = self.text[at.min(self.text.len())..].iter().collect();
        NpyError::HeaderSyntax {
            reason,
            offset: at,
            near: quote(&near),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r' | '\x0c')) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, NpyError> {
        self.skip_space();
        let start = self.pos;
        let lit = match self.peek() {
            None => return Err(self.error("unexpected end", start)),
            Some(open @ ('{' | '(' | '[')) => {
                if depth >= MAX_DEPTH {
                    return Err(self.error("brackets nested too deeply", start));
                }
                self.pos += 1;
                match open {
                    '{' => Lit::Dict(self.dict(depth + 1)?),
                    '[' => {
                        self.sequence(']', depth + 1)?;
                        Lit::List
                    }
                    _ => {
                        let (mut items, comma) = self.sequence(')', depth + 1)?;
                        if items.len() == 1 && !comma {
                            // `(x)` is x
                            let mut inner = items.remove(0);
                            inner.start = start;
                            inner.end = self.pos;
                            return Ok(inner);
                        }
                        Lit::Tuple(items)
                    }
                }
            }
            Some(q @ ('\'' | '"')) => Lit::Str(self.string(q)?),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number()?,
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                let word: String = self.text[start..self.pos].iter().collect();
                match word.as_str() {
                    "True" => Lit::Bool(true),
                    "False" => Lit::Bool(false),
                    "None" => Lit::None,
                    _ => return Err(self.error("a name that is not True, False or None", start)),
                }
            }
            Some(_) => return Err(self.error("unexpected character", start)),
        };
        Ok(Value {
            lit,
            start,
            end: self.pos,
        })
    }

    /// Items up to `close`, comma-separated, a trailing comma allowed; whether a comma was
    /// seen.
    fn sequence(&mut self, close: char, depth: usize) -> Result<(Vec<Value>, bool), NpyError> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok((items, comma));
            }
            if !items.is_empty() && !comma {
                return Err(self.error("expected ',' or a closing bracket", self.pos));
            }
            items.push(self.value(depth)?);
            self.skip_space();
            comma = self.peek() == Some(',');
            if comma {
                self.pos += 1;
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Vec<(Value, Value)>, NpyError> {
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(entries);
            }
            let key = self.value(depth)?;
            self.skip_space();
            if self.peek() != Some(':') {
                return Err(self.error("expected ':' after a key", self.pos));
            }
            self.pos += 1;
            let value = self.value(depth)?;
            entries.push((key, value));
            self.skip_space();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => return Err(self.error("expected ',' or '}'", self.pos)),
            }
        }
    }

    /// A string in `quote`s (the opening one at the cursor), with backslash escapes.
    fn string(&mut self, quote: char) -> Result<String, NpyError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated string", start));
            };
            self.pos += 1;
            match c {
                '\n' => return Err(self.error("unterminated string", start)),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return Err(self.error("unterminated string", start));
                    };
                    self.pos += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        '0' => out.push('\0'),
                        '\\' | '\'' | '"' => out.push(e),
                        '\n' => {}
                        other => {
                            out.push('\\');
                            out.push(other);
                        }
                    }
                }
                c if c == quote => return Ok(out),
                c => out.push(c),
            }
        }
    }

    /// An integer (`-`, decimal digits without leading zeros, an optional Python 2 `L`);
    /// any other numeric literal is [`Lit::OtherNumber`].
    fn number(&mut self) -> Result<Lit, NpyError> {
        let start = self.pos;
        let negative = self.peek() == Some('-');
        if negative {
            self.pos += 1;
        }
        let body = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
        {
            self.pos += 1;
        }
        let word: String = self.text[body..self.pos].iter().collect();
        let digits = word.strip_suffix(['L', 'l']).unwrap_or(&word).to_string();
        if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(self.error("a number expected", start));
        }
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(Lit::OtherNumber);
        }
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(self.error("an integer with leading zeros", start));
        }
        Ok(Lit::Int {
            negative,
            value: digits.parse().ok(),
        })
    }
}

/// The `descr`, `fortran_order` and `shape` of a header dictionary (`text` ends in `\n`).
fn dict_fields(text: &[char]) -> Result<(Descr, bool, Vec<u64>), NpyError> {
    let mut parser = Parser { text, pos: 0 };
    let top = parser.value(0)?;
    parser.skip_space();
    if parser.pos != text.len() {
        return Err(parser.error("text after the dict", parser.pos));
    }
    let source = |v: &Value| quote(&text[v.start..v.end].iter().collect::<String>());
    let Lit::Dict(entries) = &top.lit else {
        return Err(NpyError::NotADict(source(&top)));
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (key, value) in entries {
        let slot = match &key.lit {
            Lit::Str(k) if k == "descr" => (&mut descr, "descr"),
            Lit::Str(k) if k == "fortran_order" => (&mut fortran, "fortran_order"),
            Lit::Str(k) if k == "shape" => (&mut shape, "shape"),
            _ => return Err(NpyError::UnknownKey(source(key))),
        };
        if slot.0.replace(value).is_some() {
            return Err(NpyError::DuplicateKey(slot.1));
        }
    }
    let descr = descr.ok_or(NpyError::MissingKey("descr"))?;
    let fortran = fortran.ok_or(NpyError::MissingKey("fortran_order"))?;
    let shape = shape.ok_or(NpyError::MissingKey("shape"))?;

    const SHAPE: &str = "a tuple of non-negative integers below 2^64, e.g. (13, 7)";
    let bad_shape = || NpyError::BadValue {
        key: "shape",
        expected: SHAPE,
        found: source(shape),
    };
    let Lit::Tuple(dims) = &shape.lit else {
        return Err(bad_shape());
    };
    if dims.len() > MAX_RANK {
        return Err(NpyError::Rank { rank: dims.len() });
    }
    let shape = dims
        .iter()
        .map(|d| match d.lit {
            Lit::Int {
                negative: false,
                value: Some(n),
            } => Ok(n),
            Lit::Int {
                negative: true,
                value: Some(0),
            } => Ok(0),
            _ => Err(bad_shape()),
        })
        .collect::<Result<Vec<u64>, _>>()?;

    let fortran = match fortran.lit {
        Lit::Bool(b) => b,
        _ => {
            return Err(NpyError::BadValue {
                key: "fortran_order",
                expected: "True or False",
                found: source(fortran),
            });
        }
    };

    let descr = match &descr.lit {
        Lit::Str(s) => Descr::parse(s)?,
        Lit::List => return Err(NpyError::Structured(source(descr))),
        _ => {
            return Err(NpyError::BadValue {
                key: "descr",
                expected: "a type string such as '<f4'",
                found: source(descr),
            });
        }
    };
    Ok((descr, fortran, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_width_text_round_trips_and_has_numpy_descriptors() {
        let words = ["", "h\u{e9}", "\u{1F600}ab"];
        let (ty, data) = text_data(NpyKind::Unicode, &words);
        assert_eq!(ty.to_string(), "<U3");
        assert_eq!(Descr::parse("<U3").unwrap().ty, ty);
        let back = text_values(ty, &data).unwrap().unwrap();
        assert_eq!(back, words.map(|w| w.as_bytes().to_vec()));
        let raw: [&[u8]; 3] = [b"", b"\xff\x00z", b"ab"];
        let (ty, data) = text_data(NpyKind::Bytes, &raw);
        assert_eq!((ty.to_string(), data.len()), ("|S3".to_string(), 9));
        assert_eq!(text_values(ty, &data).unwrap().unwrap()[1], b"\xff\x00z");
        let (ty, _) = text_data::<&str>(NpyKind::Unicode, &[]);
        assert_eq!(ty.to_string(), "<U1");
        let bad = 0xD800u32.to_ne_bytes();
        let e = text_values(NpyType::text(NpyKind::Unicode, 1), &bad)
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(
                e,
                NpyError::InvalidCharacter {
                    index: 0,
                    unit: 0xD800
                }
            ),
            "{e}"
        );
    }

    /// Every data type zarrflow has, with a raw type of 1 and of 3 bytes.
    fn every_type() -> Vec<DataType> {
        let mut types: Vec<DataType> = DataType::NAMED.to_vec();
        types.push(DataType::Raw { bits: 8 });
        types.push(DataType::Raw { bits: 24 });
        types
    }

    /// A file of the given header dictionary text (padded as NumPy pads) and data.
    fn file(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut f = frame(dict);
        f.extend_from_slice(data);
        f
    }

    /// A file with a raw header (`header` is the whole header text, newline included).
    fn raw_file(version: u8, header: &[u8], data: &[u8]) -> Vec<u8> {
        let mut f = MAGIC.to_vec();
        f.extend_from_slice(&[version, 0]);
        if version == 1 {
            f.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            f.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        f.extend_from_slice(header);
        f.extend_from_slice(data);
        f
    }

    fn err(bytes: &[u8]) -> NpyError {
        read_npy(bytes).unwrap_err()
    }

    fn header_err(dict: &str) -> NpyError {
        err(&file(dict, &[0; 4]))
    }

    #[test]
    fn descriptors_of_every_type() {
        let want = [
            "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8",
            "<c8", "<c16", "|V1", "|V3",
        ];
        for (dt, want) in every_type().into_iter().zip(want) {
            let ty = NpyType::of(dt);
            assert_eq!(ty.to_string(), want, "{dt}");
            assert_eq!(ty.size(), dt.size(), "{dt}");
            assert_eq!(ty.data_type(), dt, "{dt}");
            let parsed: Descr = want.parse().unwrap();
            assert_eq!((parsed.ty, parsed.to_string().as_str()), (ty, want));
            if dt.numpy_str() != "|V" {
                assert_eq!(dt.numpy_str(), want);
            }
        }
        // the largest void type is zarrflow's largest raw type
        let big = NpyType::new(NpyKind::Void, MAX_VOID_SIZE).unwrap();
        let raw: DataType = format!("r{}", MAX_VOID_SIZE * 8).parse().unwrap();
        assert_eq!(big.data_type(), raw);
        assert!(NpyType::new(NpyKind::Void, MAX_VOID_SIZE + 1).is_none());
    }

    #[test]
    fn descriptor_parsing() {
        let big: Descr = ">c8".parse().unwrap();
        assert_eq!(big.byte_order, ByteOrder::Big);
        assert_eq!(big.ty.swap_unit(), 4);
        assert_eq!(
            "=f8".parse::<Descr>().unwrap().byte_order,
            ByteOrder::NATIVE
        );
        assert_eq!("i2".parse::<Descr>().unwrap().byte_order, ByteOrder::NATIVE);
        // one-byte units take any order mark
        for d in ["<u1", ">b1", "=i1", "|V7", "u1"] {
            let p: Descr = d.parse().unwrap();
            assert_eq!(p.byte_order, ByteOrder::NotApplicable, "{d}");
        }
        for d in [
            "",
            "<",
            "<f",
            "<f16",
            "<f1",
            "<i3",
            "<b2",
            "|V0",
            "<V01",
            "|i4",
            "<U0",
            "O",
            "<M8[",
            "<M4[s]",
            "|M8[s]",
            "<f+4",
            "<f 4",
            "<i99999999999",
            "<c4",
        ] {
            assert!(
                matches!(Descr::parse(d), Err(NpyError::UnsupportedDescr(_))),
                "{d}"
            );
        }
    }

    #[test]
    fn round_trips_of_every_type() {
        for dt in every_type() {
            let ty = NpyType::of(dt);
            for shape in [&[][..], &[0], &[3], &[2, 0, 5], &[2, 3, 1]] {
                let n: u64 = shape.iter().product();
                let data: Vec<u8> = (0..n as usize * ty.size())
                    .map(|i| (i * 7 % 256) as u8)
                    .map(|b| if dt == DataType::Bool { b % 2 } else { b })
                    .collect();
                let bytes = npy_bytes(ty, shape, &data).unwrap();
                assert_eq!(&bytes[..6], MAGIC);
                let header = header_bytes(ty, shape).unwrap();
                assert_eq!(header.len() % 64, 0);
                assert_eq!(&bytes[header.len()..], &data[..]);
                let npy = read_npy(&bytes).unwrap();
                assert_eq!(npy.ty(), ty, "{dt}");
                assert_eq!(npy.shape(), shape, "{dt}");
                assert_eq!(npy.data, data, "{dt}");
                assert_eq!(npy.header.descr, ty.little_endian());
                assert_eq!(
                    (npy.header.version, npy.header.fortran_order),
                    ((1, 0), false)
                );
                assert_eq!(read_npy_vec(bytes).unwrap(), npy);
            }
        }
    }

    #[test]
    fn headers_are_numpys() {
        // numpy.save of np.zeros((13, 7), '<f4')
        let h = header_bytes(NpyType::of(DataType::Float32), &[13, 7]).unwrap();
        let mut want = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
        want.extend_from_slice(b"{'descr': '<f4', 'fortran_order': False, 'shape': (13, 7), }");
        want.resize(127, b' ');
        want.push(b'\n');
        assert_eq!(h, want);
        // header lengths numpy.save (NumPy 2.5) gives: 21 digits reserved for the first
        // dimension, and 64 more bytes of padding when the text is already aligned
        let t = |dt: DataType| NpyType::of(dt);
        let cases: &[(NpyType, &[u64], usize)] = &[
            (t(DataType::Int32), &[], 128),
            (t(DataType::Float64), &[0], 128),
            (
                t(DataType::UInt8),
                &[
                    0, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
                ],
                192,
            ),
            (
                t(DataType::Complex128),
                &[0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
                128,
            ),
            (t(DataType::Raw { bits: 24 }), &[2, 3], 128),
            (t(DataType::Int32), &[1; 26], 192),
            (t(DataType::Int16), &[12345678, 0, 3], 128),
            (t(DataType::Int32), &[1; 36], 256),
        ];
        for (ty, shape, len) in cases {
            let h = header_bytes(*ty, shape).unwrap();
            assert_eq!(h.len(), *len, "{ty} {shape:?}");
            let dict_end = h.iter().position(|&b| b == b'}').unwrap() + 1;
            let spaces = if shape.is_empty() {
                0
            } else {
                21 - shape[0].to_string().len()
            };
            assert!(h[dict_end..dict_end + spaces].iter().all(|&b| b == b' '));
        }
        // when magic + length + dict + '\n' is already a multiple of 64, NumPy pads 64 more
        let dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (), }";
        let dict = format!("{dict:<117}");
        assert_eq!((10 + dict.len() + 1) % 64, 0);
        assert_eq!(frame(&dict).len(), 192);
        // a header over 64 KiB is format 2.0 with a 32-bit length
        let long = format!(
            "{{'descr': '<i4', 'fortran_order': False, 'shape': (){}}}",
            " ".repeat(70_000)
        );
        let f = frame(&long);
        assert_eq!((f[6], f.len() % 64), (2, 0));
        let len = u32::from_le_bytes([f[8], f[9], f[10], f[11]]) as usize;
        assert_eq!(12 + len, f.len());
        // rank 0, 1 and 3 tuples are Python's
        assert_eq!(shape_tuple(&[]), "()");
        assert_eq!(shape_tuple(&[4]), "(4,)");
        assert_eq!(shape_tuple(&[1, 2, 3]), "(1, 2, 3)");
    }

    #[test]
    fn versions_2_and_3_are_read() {
        let dict = b"{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }  \n";
        for v in [2, 3] {
            let npy = read_npy(&raw_file(v, dict, &[1, 0, 2, 0])).unwrap();
            assert_eq!(npy.header.version, (v, 0));
            assert_eq!(
                npy.data,
                [1u16, 2]
                    .iter()
                    .flat_map(|x| x.to_ne_bytes())
                    .collect::<Vec<_>>()
            );
        }
        // format 3.0 is UTF-8, 1.0 and 2.0 Latin-1 (either way only ASCII is meaningful)
        let bad_utf8 = b"{'descr': '<u2', 'fortran_order': False, 'shape': (2,), '\xff': 1}\n";
        assert!(matches!(
            err(&raw_file(3, bad_utf8, &[])),
            NpyError::HeaderEncoding
        ));
        assert!(matches!(
            err(&raw_file(1, bad_utf8, &[])),
            NpyError::UnknownKey(_)
        ));
    }

    #[test]
    fn big_endian_files_are_swapped() {
        let npy = read_npy(&file(
            "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
            &[0, 0, 0, 1, 0, 0, 1, 0],
        ))
        .unwrap();
        assert_eq!(npy.header.descr.byte_order, ByteOrder::Big);
        let values: Vec<i32> = npy
            .data
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(values, [1, 256]);
        // complex numbers swap each half
        let mut data = 1.5f32.to_be_bytes().to_vec();
        data.extend_from_slice(&(-2.0f32).to_be_bytes());
        let npy = read_npy(&file(
            "{'descr': '>c8', 'fortran_order': False, 'shape': (), }",
            &data,
        ))
        .unwrap();
        let want: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(npy.data, want);
        let npy = read_npy_vec(file(
            "{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }",
            &[0x3c, 0x00],
        ))
        .unwrap();
        assert_eq!(npy.data, half::f16::ONE.to_ne_bytes());
    }

    #[test]
    fn the_preamble_is_checked() {
        assert!(matches!(err(b""), NpyError::Magic));
        assert!(matches!(err(b"hello, world"), NpyError::Magic));
        assert!(matches!(err(b"\x93NUMP"), NpyError::Magic));
        assert!(matches!(
            err(b"\x93NUMPY\x01"),
            NpyError::Truncated("preamble")
        ));
        assert!(matches!(
            err(b"\x93NUMPY\x02\x00\x10\x00"),
            NpyError::Truncated("preamble")
        ));
        for (major, minor) in [(1, 1), (0, 0), (4, 0), (2, 1)] {
            let f = [&MAGIC[..], &[major, minor, 0, 0]].concat();
            assert!(
                matches!(err(&f), NpyError::Version { major: a, minor: b } if (a, b) == (major, minor)),
                "{major}.{minor}"
            );
        }
        // the stated length is used, never a search: beyond the file, or over the bound
        let mut f = file(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
            &[0; 4],
        );
        f[8] = 0xff;
        assert!(matches!(err(&f), NpyError::Truncated("header")));
        let f = [&MAGIC[..], &[2, 0], &(1u32 << 30).to_le_bytes()].concat();
        assert!(matches!(err(&f), NpyError::HeaderTooLong { len } if len == 1 << 30));
        // a stated length one short of the dict's end leaves a header that is cut off
        let mut f = file(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
            &[0; 4],
        );
        f[8] -= 1;
        assert!(matches!(err(&f), NpyError::HeaderNewline));
    }

    #[test]
    fn the_header_ends_in_a_newline() {
        let h = b"{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }   ";
        assert!(matches!(
            err(&raw_file(1, h, &[0; 4])),
            NpyError::HeaderNewline
        ));
        // whitespace (any Python whitespace) may come before it, nothing else
        let h = b"{'descr': '<i4', 'fortran_order': False, 'shape': (1,), } \t\n";
        assert!(read_npy(&raw_file(1, h, &[0; 4])).is_ok());
        let h = b"{'descr': '<i4', 'fortran_order': False, 'shape': (1,), } x\n";
        assert!(matches!(
            err(&raw_file(1, h, &[0; 4])),
            NpyError::HeaderSyntax { .. }
        ));
        let h = b"{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }}\n";
        assert!(matches!(
            err(&raw_file(1, h, &[0; 4])),
            NpyError::HeaderSyntax { .. }
        ));
    }

    #[test]
    fn keys_are_exactly_descr_fortran_order_and_shape() {
        let e =
            header_err("{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (1,)}");
        assert!(matches!(e, NpyError::DuplicateKey("descr")), "{e}");
        let e =
            header_err("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), 'shape': (1,)}");
        assert!(matches!(e, NpyError::DuplicateKey("shape")), "{e}");
        let e = header_err("{'descr': '<i4', 'shape': (1,)}");
        assert!(matches!(e, NpyError::MissingKey("fortran_order")), "{e}");
        let e = header_err("{'fortran_order': False, 'shape': (1,)}");
        assert!(matches!(e, NpyError::MissingKey("descr")), "{e}");
        let e = header_err("{}");
        assert!(matches!(e, NpyError::MissingKey("descr")), "{e}");
        let e = header_err("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), 'extra': 0}");
        assert!(
            matches!(&e, NpyError::UnknownKey(k) if k == "'extra'"),
            "{e}"
        );
        let e = header_err("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), 3: 0}");
        assert!(matches!(e, NpyError::UnknownKey(_)), "{e}");
        // keys in any order, with double quotes and Python whitespace
        let f = file(
            "{ \"shape\" : (1,) ,\n'fortran_order':False,'descr':'<i4'}",
            &[0; 4],
        );
        assert_eq!(read_npy(&f).unwrap().shape(), &[1]);
        // not a dict
        for text in ["('descr', '<i4')", "['descr']", "'descr'", "None"] {
            assert!(matches!(header_err(text), NpyError::NotADict(_)), "{text}");
        }
    }

    #[test]
    fn key_names_inside_values_are_not_keys() {
        // a substring search would find `'fortran_order': True` inside the descr string
        let e = header_err(
            "{'descr': \"<i4', 'fortran_order': True, 'shape': (9,), '\", \
             'fortran_order': False, 'shape': (1,), }",
        );
        assert!(matches!(e, NpyError::UnsupportedDescr(_)), "{e}");
        // ... or 'descr' in an escaped string of another key
        let e = header_err(
            "{'x': 'it\\'s \\'descr\\': \\'<f8\\'', 'descr': '<i4', 'fortran_order': False, \
             'shape': (1,), }",
        );
        assert!(matches!(&e, NpyError::UnknownKey(k) if k == "'x'"), "{e}");
        // a string value holding the key text is only a value
        let f = file(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
            &[0; 4],
        );
        assert!(read_npy(&f).is_ok());
    }

    #[test]
    fn fortran_order_is_true_or_false() {
        for v in ["1", "0", "'False'", "None", "false", "(False,)"] {
            let e = header_err(&format!(
                "{{'descr': '<i4', 'fortran_order': {v}, 'shape': (1,)}}"
            ));
            assert!(
                matches!(
                    e,
                    NpyError::BadValue {
                        key: "fortran_order",
                        ..
                    } | NpyError::HeaderSyntax { .. }
                ),
                "{v}: {e}"
            );
        }
        // True parses as a header, and reading refuses it
        let f = file(
            "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }",
            &[0; 16],
        );
        assert!(NpyHeader::parse(&f).unwrap().0.fortran_order);
        let e = err(&f);
        assert!(
            matches!(e, NpyError::FortranOrder) && e.is_unsupported(),
            "{e}"
        );
        assert!(e.to_string().contains("Fortran"), "{e}");
    }

    #[test]
    fn shapes_are_tuples_of_non_negative_integers() {
        let shape = |s: &str| {
            let n = 4;
            read_npy(&file(
                &format!("{{'descr': '|u1', 'fortran_order': False, 'shape': {s}, }}"),
                &vec![0; n],
            ))
        };
        assert_eq!(shape("(4,)").unwrap().shape(), &[4]);
        assert_eq!(shape("(2, 2)").unwrap().shape(), &[2, 2]);
        assert_eq!(shape("(2, 2,)").unwrap().shape(), &[2, 2]);
        assert_eq!(shape("(2L, 2L)").unwrap().shape(), &[2, 2]); // Python 2 NumPy
        assert_eq!(shape("((2), 2)").unwrap().shape(), &[2, 2]); // (2) is 2
        assert_eq!(shape("(1, 4, 1)").unwrap().shape(), &[1, 4, 1]);
        for bad in [
            "(4)",
            "[4]",
            "4",
            "(-4,)",
            "(4.0,)",
            "(2, 2.5)",
            "('4',)",
            "(True,)",
            "(None,)",
            "((4,),)",
            "(18446744073709551616,)",
            "(0x4,)",
            "{}",
            "(1e3,)",
        ] {
            let e = shape(bad).unwrap_err();
            assert!(
                matches!(e, NpyError::BadValue { key: "shape", .. }),
                "{bad}: {e}"
            );
        }
        for bad in ["(04,)", "(4,,)", "(,)", "(4 4)", "(4", "(+4,)"] {
            let e = shape(bad).unwrap_err();
            assert!(matches!(e, NpyError::HeaderSyntax { .. }), "{bad}: {e}");
        }
        let many = format!("({})", vec!["1"; MAX_RANK + 1].join(", "));
        assert!(matches!(
            shape(&many).unwrap_err(),
            NpyError::Rank { rank: 65 }
        ));
        let most = format!("({})", vec!["1"; MAX_RANK - 1].join(", ") + ", 4");
        assert_eq!(shape(&most).unwrap().shape().len(), MAX_RANK);
    }

    #[test]
    fn descr_must_be_a_supported_type_string() {
        let e = header_err("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}");
        assert!(
            matches!(e, NpyError::UnsupportedDescr(_)) && e.is_unsupported(),
            "{e}"
        );
        let e = header_err("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}");
        assert!(
            matches!(e, NpyError::Structured(_)) && e.is_unsupported(),
            "{e}"
        );
        let e = header_err("{'descr': 4, 'fortran_order': False, 'shape': (1,)}");
        assert!(matches!(e, NpyError::BadValue { key: "descr", .. }), "{e}");
    }

    #[test]
    fn data_length_must_match_exactly() {
        let dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }";
        assert!(read_npy(&file(dict, &[0; 16])).is_ok());
        for n in [0, 15, 17, 32] {
            let e = err(&file(dict, &vec![0; n]));
            assert!(
                matches!(e, NpyError::DataLength { expected: 16, found, .. } if found == n as u64),
                "{n}: {e}"
            );
            assert!(e.to_string().contains("needs 16"), "{e}");
        }
        // an overflowing shape is refused before anything is allocated
        for shape in [
            "(4294967296, 4294967296)",
            "(18446744073709551615,)",
            "(4611686018427387904,)",
        ] {
            let e = header_err(&format!(
                "{{'descr': '<i4', 'fortran_order': False, 'shape': {shape}}}"
            ));
            assert!(matches!(e, NpyError::Overflow { .. }), "{shape}: {e}");
        }
        // a huge but representable shape is refused by the length check, not allocated
        let e = header_err("{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776,)}");
        assert!(matches!(e, NpyError::DataLength { found: 4, .. }), "{e}");
        // a zero-size array of an enormous shape is fine
        let f = file(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 18446744073709551615)}",
            &[],
        );
        assert!(read_npy(&f).unwrap().data.is_empty());
    }

    #[test]
    fn malformed_literals_are_syntax_errors() {
        for dict in [
            "{'descr': '<i4', 'fortran_order': False, 'shape': (1,)",
            "{'descr': '<i4, 'fortran_order': False, 'shape': (1,)}",
            "{'descr': '<i4\n', 'fortran_order': False, 'shape': (1,)}",
            "{'descr' '<i4', 'fortran_order': False, 'shape': (1,)}",
            "{'descr': '<i4' 'fortran_order': False, 'shape': (1,)}",
            "{'descr': '<i4',, 'fortran_order': False, 'shape': (1,)}",
            "{, 'descr': '<i4', 'fortran_order': False, 'shape': (1,)}",
            "{'descr': '''<i4''', 'fortran_order': False, 'shape': (1,)}",
            "{'descr': u'<i4', 'fortran_order': False, 'shape': (1,)}",
            "{'descr': '<i4', 'fortran_order': np.False_, 'shape': (1,)}",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (1,)} # comment",
            "",
        ] {
            let e = header_err(dict);
            assert!(matches!(e, NpyError::HeaderSyntax { .. }), "{dict:?}: {e}");
        }
        // deep nesting is refused, not recursed into
        let deep = format!("{{'descr': {}", "[".repeat(10_000));
        assert!(
            matches!(header_err(&deep), NpyError::HeaderSyntax { reason, .. } if reason.contains("nested"))
        );
    }

    #[test]
    fn messages_quote_a_bounded_prefix() {
        let long_key = "k".repeat(20_000);
        let e = header_err(&format!(
            "{{'{long_key}': 1, 'descr': '<i4', 'fortran_order': False, 'shape': (1,)}}"
        ));
        let text = e.to_string();
        assert!(text.len() < 250 && text.contains("kkk..."), "{text}");
        let e = header_err(&format!(
            "{{'descr': '<i4', 'fortran_order': False, 'shape': ({}-1,)}}",
            "1, ".repeat(30)
        ));
        assert!(e.to_string().len() < 250, "{e}");
        let e = header_err(&format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': (1,)}}",
            "<".repeat(5000)
        ));
        assert!(matches!(e, NpyError::UnsupportedDescr(_)), "{e}");
        assert!(e.to_string().len() < 300, "{e}");
        let e = header_err(&format!("{{'descr': '<i4' {} }}", "@".repeat(5000)));
        assert!(e.to_string().len() < 250, "{e}");
        // control characters are escaped
        let e = header_err("{'descr': '<i4\u{1b}[2J', 'fortran_order': False, 'shape': (1,)}");
        assert!(!e.to_string().contains('\u{1b}'), "{e}");
    }

    #[test]
    fn writes_check_their_input() {
        let ty = NpyType::of(DataType::Int32);
        let e = npy_bytes(ty, &[4], &[0; 15]).unwrap_err();
        assert!(
            matches!(
                e,
                NpyError::WrongBufferLength {
                    expected: Some(16),
                    found: 15,
                    ..
                }
            ),
            "{e}"
        );
        let e = npy_bytes(ty, &[u64::MAX, 2], &[]).unwrap_err();
        assert!(
            matches!(e, NpyError::WrongBufferLength { expected: None, .. }),
            "{e}"
        );
        let e = npy_bytes(ty, &[1; MAX_RANK + 1], &[0; 4]).unwrap_err();
        assert!(matches!(e, NpyError::Rank { .. }), "{e}");
        assert!(npy_bytes(ty, &[1; MAX_RANK], &[0; 4]).is_ok());
        // the largest header NumPy-compatible shapes give is format 1.0
        let h = header_bytes(NpyType::of(DataType::Complex128), &[u64::MAX; MAX_RANK]).unwrap();
        assert_eq!(h[6], 1);
    }
}
