//! NumPy `.npy` files: a writer and a reader for every fixed-size Zarr data type.
//!
//! Zarr data types map to NumPy descriptors: `bool` → `|b1`, `intN`/`uintN` → `<iK`/`<uK`,
//! `float16/32/64` → `<f2`/`<f4`/`<f8`, `complex64/128` → `<c8`/`<c16`, raw bits `rN` and every
//! other fixed-size type → `|V{bytes}`. Files are written little-endian in C order (format 1.0,
//! or 2.0 when the header needs it); big-endian files are accepted and swapped on reading.

use std::io::Write;

use crate::error::{CliError, Result};

const MAGIC: &[u8] = b"\x93NUMPY";

/// How a Zarr data type is stored in a `.npy` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpyType {
    /// NumPy kind: `b`, `i`, `u`, `f`, `c` or `V`.
    pub kind: char,
    /// Bytes per element.
    pub size: usize,
}

impl NpyType {
    /// The `.npy` type of a Zarr data type name with `size`-byte elements.
    pub fn of(data_type: &str, size: usize) -> NpyType {
        let kind = match data_type {
            "bool" => 'b',
            "int8" | "int16" | "int32" | "int64" => 'i',
            "uint8" | "uint16" | "uint32" | "uint64" => 'u',
            "float16" | "float32" | "float64" => 'f',
            "complex64" | "complex128" | "complex_float32" | "complex_float64" => 'c',
            _ => 'V',
        };
        NpyType { kind, size }
    }

    /// Bytes of one byte-order unit (a complex number has two).
    fn swap_unit(&self) -> usize {
        match self.kind {
            'b' | 'V' => 1,
            'c' => self.size / 2,
            _ => self.size,
        }
    }

    /// The little-endian descriptor, e.g. `<f4`.
    pub fn descr(&self) -> String {
        let order = if self.swap_unit() > 1 { '<' } else { '|' };
        format!("{order}{}{}", self.kind, self.size)
    }
}

/// Reverses the bytes of every `unit`-byte group (native ↔ the other byte order).
fn swap_bytes(data: &mut [u8], unit: usize) {
    if unit > 1 {
        for chunk in data.chunks_exact_mut(unit) {
            chunk.reverse();
        }
    }
}

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

/// The header of a `.npy` file (magic, version, length, dictionary, padding).
pub fn header(ty: NpyType, shape: &[u64]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        ty.descr(),
        shape_tuple(shape)
    );
    // total header length (magic + version + length field + dict + padding + '\n') is a
    // multiple of 64
    let (version, len_bytes) = if dict.len() + 1 + 10 <= 65535 {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let prefix = MAGIC.len() + 2 + len_bytes;
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - prefix;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if len_bytes == 2 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes C-order native-endian `data` of `shape` as a little-endian `.npy` file.
pub fn write(out: &mut impl Write, ty: NpyType, shape: &[u64], data: &mut [u8]) -> Result<()> {
    out.write_all(&header(ty, shape))?;
    if cfg!(target_endian = "big") {
        swap_bytes(data, ty.swap_unit());
    }
    out.write_all(data)?;
    out.flush()?;
    Ok(())
}

/// A `.npy` file read into memory: its type, shape and C-order native-endian data.
#[derive(Debug)]
pub struct Npy {
    /// The element type.
    pub ty: NpyType,
    /// The shape.
    pub shape: Vec<u64>,
    /// C-order native-endian elements.
    pub data: Vec<u8>,
}

fn bad(reason: impl std::fmt::Display) -> CliError {
    CliError::new(format!("not a valid .npy file: {reason}"))
}

/// The value of `key` in the header dictionary (the text after `'key':`).
fn dict_value<'a>(dict: &'a str, key: &str) -> Result<&'a str> {
    for quote in ['\'', '"'] {
        let pat = format!("{quote}{key}{quote}");
        if let Some(i) = dict.find(&pat) {
            let rest = dict[i + pat.len()..].trim_start();
            return rest
                .strip_prefix(':')
                .map(str::trim_start)
                .ok_or_else(|| bad(format!("no ':' after '{key}' in the header")));
        }
    }
    Err(bad(format!("the header has no '{key}'")))
}

/// Parses a `.npy` file.
pub fn parse(bytes: Vec<u8>) -> Result<Npy> {
    let mut bytes = bytes;
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(bad("it does not start with the \\x93NUMPY magic"));
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(bad("truncated header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(bad(format!("unsupported format version {v}"))),
    };
    let end = start
        .checked_add(hlen)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("truncated header"))?;
    let dict = std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("header is not text"))?;

    let descr_text = dict_value(dict, "descr")?;
    let quote = descr_text
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')
        .ok_or_else(|| bad("structured data types are not supported (descr is not a string)"))?;
    let descr = descr_text[1..]
        .split(quote)
        .next()
        .ok_or_else(|| bad("unterminated descr"))?;
    let (order, rest) = match descr.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
        _ => ('=', descr),
    };
    let kind = rest
        .chars()
        .next()
        .ok_or_else(|| bad(format!("empty descr {descr:?}")))?;
    let size: usize = rest[kind.len_utf8()..]
        .parse()
        .map_err(|_| bad(format!("unsupported descr {descr:?}")))?;
    if !matches!(kind, 'b' | 'i' | 'u' | 'f' | 'c' | 'V') || size == 0 {
        return Err(bad(format!(
            "unsupported descr {descr:?} (only bool, integer, float, complex and void types)"
        )));
    }
    let ty = NpyType { kind, size };

    let fortran = dict_value(dict, "fortran_order")?;
    if fortran.starts_with("True") {
        return Err(CliError::new(
            "Fortran-order .npy files are not supported; save with numpy.ascontiguousarray",
        ));
    }
    let shape_text = dict_value(dict, "shape")?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("the shape is not a tuple"))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<u64>())
        .collect::<std::result::Result<Vec<u64>, _>>()
        .map_err(|_| bad(format!("invalid shape ({inner})")))?;

    let count = shape
        .iter()
        .try_fold(1u64, |a, &n| a.checked_mul(n))
        .and_then(|n| n.checked_mul(size as u64))
        .ok_or_else(|| bad("the shape overflows"))?;
    let available = (bytes.len() - end) as u64;
    if available < count {
        return Err(bad(format!(
            "it holds {available} data bytes, but shape {shape:?} of {descr} needs {count}"
        )));
    }
    bytes.drain(..end);
    bytes.truncate(count as usize);
    let file_big = order == '>';
    let native_big = cfg!(target_endian = "big");
    if order != '|' && order != '=' && file_big != native_big {
        swap_bytes(&mut bytes, ty.swap_unit());
    }
    Ok(Npy {
        ty,
        shape,
        data: bytes,
    })
}

/// Reads a `.npy` file.
pub fn read(path: &std::path::Path) -> Result<Npy> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::new(format!("cannot read {}: {e}", path.display())))?;
    parse(bytes).map_err(|e| e.context(path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(dt: &str, size: usize, shape: &[u64], data: &[u8]) -> Npy {
        let ty = NpyType::of(dt, size);
        let mut buf = Vec::new();
        write(&mut buf, ty, shape, &mut data.to_vec()).unwrap();
        assert_eq!(header(ty, shape).len() % 64, 0);
        assert_eq!(&buf[..6], MAGIC);
        let npy = parse(buf).unwrap();
        assert_eq!(npy.ty, ty);
        assert_eq!(npy.shape, shape);
        assert_eq!(npy.data, data);
        npy
    }

    #[test]
    fn descriptors() {
        let cases = [
            ("bool", 1, "|b1"),
            ("int8", 1, "|i1"),
            ("uint8", 1, "|u1"),
            ("int16", 2, "<i2"),
            ("uint64", 8, "<u8"),
            ("float16", 2, "<f2"),
            ("float32", 4, "<f4"),
            ("float64", 8, "<f8"),
            ("complex64", 8, "<c8"),
            ("complex128", 16, "<c16"),
            ("r16", 2, "|V2"),
            ("bfloat16", 2, "|V2"),
        ];
        for (dt, size, descr) in cases {
            assert_eq!(NpyType::of(dt, size).descr(), descr, "{dt}");
        }
    }

    #[test]
    fn round_trips_every_kind() {
        roundtrip("bool", 1, &[2, 2], &[0, 1, 1, 0]);
        roundtrip("float32", 4, &[], &1.5f32.to_ne_bytes());
        roundtrip("int16", 2, &[3], &[1, 0, 2, 0, 3, 0]);
        let c: Vec<u8> = [1.0f64, -2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        roundtrip("complex128", 16, &[1], &c);
        roundtrip("r16", 2, &[2, 0], &[]);
        roundtrip("float16", 2, &[1, 1, 1], &[0, 0x3c]);
    }

    #[test]
    fn header_matches_numpy() {
        // numpy.save of np.zeros((13, 7), '<f4') writes exactly this header
        let h = header(NpyType::of("float32", 4), &[13, 7]);
        let text = String::from_utf8_lossy(&h[10..]).to_string();
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (13, 7), }"));
        assert!(text.ends_with(" \n"));
        assert_eq!(&h[6..8], &[1, 0]);
        assert_eq!(h.len(), 128);
    }

    #[test]
    fn big_endian_files_are_swapped() {
        let mut dict = b"{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }".to_vec();
        while !(10 + dict.len() + 1).is_multiple_of(64) {
            dict.push(b' ');
        }
        dict.push(b'\n');
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(&[1, 0]);
        file.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        file.extend_from_slice(&dict);
        file.extend_from_slice(&[0, 0, 0, 1, 0, 0, 1, 0]);
        let npy = parse(file).unwrap();
        assert_eq!(npy.ty, NpyType { kind: 'i', size: 4 });
        let values: Vec<i32> = npy
            .data
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(values, vec![1, 256]);
    }

    #[test]
    fn malformed_files_are_errors() {
        assert!(parse(b"hello".to_vec()).is_err());
        let mut f = Vec::new();
        write(&mut f, NpyType::of("int32", 4), &[4], &mut [0u8; 16]).unwrap();
        f.truncate(f.len() - 1);
        let e = parse(f).unwrap_err().to_string();
        assert!(e.contains("needs 16"), "{e}");
        let mut f = header(NpyType::of("int32", 4), &[1]);
        let pos = f.windows(5).position(|w| w == b"False").unwrap();
        f[pos..pos + 5].copy_from_slice(b"True ");
        f.extend_from_slice(&[0; 4]);
        assert!(parse(f).unwrap_err().to_string().contains("Fortran"));
    }
}
