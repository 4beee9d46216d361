//! Values on the screen: element bytes to readable JSON-like text (command-line values are
//! parsed in [`crate::parse`]).

use std::io::{self, Write};

use half::f16;

use crate::summary::Extent;

/// How to print one element.
#[derive(Debug, Clone, Copy)]
pub enum Printer {
    /// `true` / `false`.
    Bool,
    /// Signed integer of this many bytes.
    Int(usize),
    /// Unsigned integer of this many bytes.
    UInt(usize),
    /// IEEE float of this many bytes (2, 4 or 8).
    Float(usize),
    /// Complex of two floats of this many bytes each.
    Complex(usize),
    /// Any other type: a list of its bytes.
    Raw(usize),
    /// `datetime64[unit]`: an ISO 8601 date-time string as `np.datetime_as_string` gives it.
    DateTime(zarrflow::metadata::TimeScale),
    /// `timedelta64[unit]`: an ISO 8601 duration string (`"PT50S"`).
    TimeDelta(zarrflow::metadata::TimeScale),
}

impl Printer {
    /// The printer of a data type.
    pub fn for_type(data_type: zarrflow::DataType) -> Printer {
        match data_type {
            zarrflow::DataType::DateTime64(s) => Printer::DateTime(s),
            zarrflow::DataType::TimeDelta64(s) => Printer::TimeDelta(s),
            t => Printer::of(&t.to_string(), t.size()),
        }
    }

    /// The printer of a Zarr data type name with `size`-byte elements.
    pub fn of(data_type: &str, size: usize) -> Printer {
        match data_type {
            "bool" => Printer::Bool,
            "int8" | "int16" | "int32" | "int64" => Printer::Int(size),
            "uint8" | "uint16" | "uint32" | "uint64" => Printer::UInt(size),
            "float16" | "float32" | "float64" => Printer::Float(size),
            "complex64" | "complex128" | "complex_float32" | "complex_float64" => {
                Printer::Complex(size / 2)
            }
            _ => Printer::Raw(size),
        }
    }

    /// Bytes per element.
    pub fn size(&self) -> usize {
        match *self {
            Printer::Bool => 1,
            Printer::Int(n) | Printer::UInt(n) | Printer::Float(n) | Printer::Raw(n) => n,
            Printer::DateTime(_) | Printer::TimeDelta(_) => 8,
            Printer::Complex(n) => 2 * n,
        }
    }

    /// One element (native-endian bytes of exactly [`size`](Self::size)) as text.
    pub fn format(&self, b: &[u8]) -> String {
        match *self {
            Printer::Bool => match b.first() {
                Some(0) => "false".into(),
                Some(1) => "true".into(),
                other => format!("{other:?}"),
            },
            Printer::Int(n) => match n {
                1 => (b[0] as i8).to_string(),
                2 => i16::from_ne_bytes([b[0], b[1]]).to_string(),
                4 => i32::from_ne_bytes([b[0], b[1], b[2], b[3]]).to_string(),
                _ => i64::from_ne_bytes(arr8(b)).to_string(),
            },
            Printer::UInt(n) => match n {
                1 => b[0].to_string(),
                2 => u16::from_ne_bytes([b[0], b[1]]).to_string(),
                4 => u32::from_ne_bytes([b[0], b[1], b[2], b[3]]).to_string(),
                _ => u64::from_ne_bytes(arr8(b)).to_string(),
            },
            Printer::Float(n) => format_float(b, n),
            Printer::Complex(n) => {
                format!(
                    "[{}, {}]",
                    format_float(&b[..n], n),
                    format_float(&b[n..], n)
                )
            }
            Printer::DateTime(s) => format!(
                "\"{}\"",
                zarrflow::metadata::format_datetime(i64::from_ne_bytes(arr8(b)), s)
            ),
            Printer::TimeDelta(s) => format!(
                "\"{}\"",
                zarrflow::metadata::format_timedelta(i64::from_ne_bytes(arr8(b)), s)
            ),
            Printer::Raw(_) => format!(
                "[{}]",
                b.iter().map(u8::to_string).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

fn arr8(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    a
}

fn non_finite(nan: bool, negative: bool) -> String {
    match (nan, negative) {
        (true, _) => "\"NaN\"".into(),
        (false, false) => "\"Infinity\"".into(),
        (false, true) => "\"-Infinity\"".into(),
    }
}

/// A float as a JSON number (shortest round-trip form); NaN and infinities as the zarr.json
/// strings.
fn format_float(b: &[u8], n: usize) -> String {
    match n {
        2 => {
            let v = f16::from_ne_bytes([b[0], b[1]]).to_f32();
            json_f32(v)
        }
        4 => json_f32(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
        _ => {
            let v = f64::from_ne_bytes(arr8(b));
            if v.is_finite() {
                serde_json::to_string(&v).unwrap_or_else(|_| v.to_string())
            } else {
                non_finite(v.is_nan(), v < 0.0)
            }
        }
    }
}

fn json_f32(v: f32) -> String {
    if v.is_finite() {
        serde_json::to_string(&v).unwrap_or_else(|_| v.to_string())
    } else {
        non_finite(v.is_nan(), v < 0.0)
    }
}

/// Writes C-order elements as nested JSON lists, one innermost list per line, streaming:
/// nothing beyond one element's text is held.
///
/// `extents` says what `data` holds of each dimension: all of it, or its first and last
/// elements (a `...` goes between them). `data` holds exactly the elements shown.
pub fn write_nested(
    out: &mut dyn Write,
    printer: Printer,
    extents: &[Extent],
    data: &[u8],
) -> io::Result<()> {
    let size = printer.size();
    let mut offset = 0;
    write_nested_with(out, extents, &mut || {
        let text = printer.format(&data[offset..offset + size]);
        offset += size;
        text
    })
}

/// [`write_nested`] of elements formatted one by one, in C order, by `next` (for elements
/// that are not fixed-size bytes: strings).
pub fn write_nested_with(
    out: &mut dyn Write,
    extents: &[Extent],
    next: &mut dyn FnMut() -> String,
) -> io::Result<()> {
    if extents.is_empty() {
        return out.write_all(next().as_bytes());
    }
    nested(out, next, extents, 0)
}

/// The text [`write_nested`] writes.
#[cfg(test)]
pub fn format_nested(printer: Printer, extents: &[Extent], data: &[u8]) -> String {
    let mut out = Vec::new();
    write_nested(&mut out, printer, extents, data).expect("writing to memory");
    String::from_utf8(out).expect("UTF-8")
}

fn nested(
    out: &mut dyn Write,
    next: &mut dyn FnMut() -> String,
    extents: &[Extent],
    depth: usize,
) -> io::Result<()> {
    let innermost = depth + 1 == extents.len();
    // between items: `, ` in a row; between rows `,` and a line break, and between blocks of
    // rank 3 and more blank lines too (as NumPy), then the indentation
    let separator = if innermost {
        ", ".to_string()
    } else {
        let mut s = String::from(",");
        s.extend(std::iter::repeat_n('\n', extents.len() - depth - 1));
        s.extend(std::iter::repeat_n(' ', depth + 1));
        s
    };
    let (shown, gap_at) = match extents[depth] {
        Extent::Whole(n) => (n, None),
        Extent::Cut { head, tail, .. } => (head + tail, Some(head)),
    };
    out.write_all(b"[")?;
    for i in 0..=shown {
        if gap_at == Some(i) {
            if i > 0 {
                out.write_all(separator.as_bytes())?;
            }
            out.write_all(b"...")?;
        }
        if i == shown {
            break;
        }
        if i > 0 || gap_at == Some(0) {
            out.write_all(separator.as_bytes())?;
        }
        if innermost {
            out.write_all(next().as_bytes())?;
        } else {
            nested(out, next, extents, depth + 1)?;
        }
    }
    out.write_all(b"]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing() {
        let p = Printer::of("float32", 4);
        let data: Vec<u8> = [0.1f32, f32::NAN, f32::NEG_INFINITY, 1e30]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(
            format_nested(p, &whole(&[2, 2]), &data),
            "[[0.1, \"NaN\"],\n [\"-Infinity\", 1e+30]]"
        );
        assert_eq!(format_nested(p, &[], &data[..4]), "0.1");
        let b = Printer::of("bool", 1);
        assert_eq!(
            format_nested(b, &whole(&[3]), &[1, 0, 1]),
            "[true, false, true]"
        );
        let c = Printer::of("complex128", 16);
        let data: Vec<u8> = [1.0f64, -2.5]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(format_nested(c, &whole(&[1]), &data), "[[1.0, -2.5]]");
        let h = Printer::of("float16", 2);
        assert_eq!(h.format(&f16::from_f32(0.5).to_ne_bytes()), "0.5");
        let u = Printer::of("uint64", 8);
        assert_eq!(u.format(&u64::MAX.to_ne_bytes()), "18446744073709551615");
        let r = Printer::of("r16", 2);
        assert_eq!(r.format(&[1, 255]), "[1, 255]");
    }

    fn whole(shape: &[u64]) -> Vec<Extent> {
        shape.iter().map(|&n| Extent::Whole(n)).collect()
    }

    fn cut(len: u64, head: u64, tail: u64) -> Extent {
        Extent::Cut { len, head, tail }
    }

    #[test]
    fn summaries_mark_the_gap() {
        let p = Printer::of("uint8", 1);
        let data: Vec<u8> = (0..6).collect();
        assert_eq!(
            format_nested(p, &[cut(10, 3, 3)], &data),
            "[0, 1, 2, ..., 3, 4, 5]"
        );
        let data: Vec<u8> = (0..12).collect();
        assert_eq!(
            format_nested(p, &[cut(10, 3, 3), Extent::Whole(2)], &data),
            "[[0, 1],\n [2, 3],\n [4, 5],\n ...,\n [6, 7],\n [8, 9],\n [10, 11]]"
        );
        // a dimension cut to its first element, and to its first and last
        assert_eq!(format_nested(p, &[cut(6, 1, 0)], &[7]), "[7, ...]");
        assert_eq!(
            format_nested(p, &[cut(6, 1, 0), cut(6, 1, 1)], &[7, 8]),
            "[[7, ..., 8],\n ...]"
        );
        // blocks of rank 3 are separated by a blank line
        let data: Vec<u8> = (0..4).collect();
        assert_eq!(
            format_nested(
                p,
                &[cut(9, 1, 1), Extent::Whole(1), Extent::Whole(2)],
                &data
            ),
            "[[[0, 1]],\n\n ...,\n\n [[2, 3]]]"
        );
    }
}
