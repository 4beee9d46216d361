//! Scalars in codec configurations (`scale_offset`'s `offset` and `scale`, `cast_value`'s
//! scalar maps) read as zarr-python 3.4's data types read them (`from_json_scalar`), which
//! is more lenient than a fill value:
//! - integers: JSON integers and booleans, floats with no fractional part (`2.0`), and
//!   strings Python's `int()` reads (`"42"`, `" -5 "`, `"1_000"`);
//! - floats: JSON numbers and booleans, `"NaN"`, `"Infinity"`, `"-Infinity"`, `0x` bit
//!   patterns of 4, 8 or 16 hex digits (a `float16`, `float32` or `float64` by width), and
//!   strings Python's `float()` reads (`"0.5"`, `"1e-1"`, `"+inf"`, `"nan"`).
//!
//! Values are then cast to the element type as NumPy casts a Python scalar: an integer
//! outside the type is an error, a float rounds to nearest.

use half::f16;

/// A configuration scalar as Python holds it: an exact integer or a double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyScalar {
    /// A Python `int`.
    Int(i128),
    /// A Python `float`.
    Float(f64),
}

/// A JSON value read as an integer of a zarr-python integer data type.
pub(crate) fn json_int(json: &serde_json::Value) -> Result<i128, String> {
    let bad = || format!("{json} is not an integer");
    match json {
        serde_json::Value::Bool(b) => Ok(i128::from(*b)),
        serde_json::Value::Number(n) => {
            if let Some(v) = n.as_i64() {
                Ok(i128::from(v))
            } else if let Some(v) = n.as_u64() {
                Ok(i128::from(v))
            } else {
                let f = n.as_f64().ok_or_else(bad)?;
                // Python's int() of an integral float (beyond i128 it is out of every type)
                if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 {
                    Ok(f as i128)
                } else {
                    Err(bad())
                }
            }
        }
        serde_json::Value::String(s) => python_int(s).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// A JSON value read as a float of a zarr-python float data type (as a double).
pub(crate) fn json_float(json: &serde_json::Value) -> Result<f64, String> {
    let bad = |why: &str| format!("{json} is not a float{why}");
    match json {
        serde_json::Value::Bool(b) => Ok(f64::from(u8::from(*b))),
        serde_json::Value::Number(n) => n.as_f64().ok_or_else(|| bad("")),
        serde_json::Value::String(s) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            hex if hex.starts_with("0x") => hex_float(&hex[2..])
                .ok_or_else(|| bad(" (0x and 4, 8 or 16 hex digits: a float16, 32 or 64)")),
            other => python_float(other).ok_or_else(|| bad("")),
        },
        _ => Err(bad("")),
    }
}

/// The value of big-endian bit pattern `digits` (4, 8 or 16 hex digits).
fn hex_float(digits: &str) -> Option<f64> {
    if !digits.is_ascii() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let bits = u64::from_str_radix(digits, 16).ok()?;
    match digits.len() {
        4 => Some(f16::from_bits(bits as u16).to_f64()),
        8 => Some(f64::from(f32::from_bits(bits as u32))),
        16 => Some(f64::from_bits(bits)),
        _ => None,
    }
}

/// Python's `int(text)` for a base-10 string: surrounding whitespace, a sign, digits with
/// single underscores between them.
fn python_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (negative, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let clean = without_digit_underscores(digits)?;
    if clean.is_empty() || !clean.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i128 = clean.parse().ok()?;
    Some(if negative { -v } else { v })
}

/// Python's `float(text)`: surrounding whitespace, underscores between digits, `inf`,
/// `infinity` and `nan` in any case.
fn python_float(text: &str) -> Option<f64> {
    let clean = without_digit_underscores(text.trim())?;
    if clean.is_empty() || !clean.is_ascii() {
        return None;
    }
    clean.parse::<f64>().ok()
}

/// `text` without the underscores Python allows in numbers (each between two digits), or
/// `None` when an underscore stands elsewhere.
fn without_digit_underscores(text: &str) -> Option<String> {
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let digit_before = i > 0 && b[i - 1].is_ascii_digit();
            let digit_after = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !(digit_before && digit_after) {
                return None;
            }
        }
    }
    Some(text.replace('_', ""))
}

/// Whether two JSON values are the same key of a Python `dict` (`1`, `1.0` and `true` are;
/// `"1"` and `1` are not).
pub(crate) fn same_python_key(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    let number = |v: &Value| -> Option<PyScalar> {
        match v {
            Value::Bool(x) => Some(PyScalar::Int(i128::from(*x))),
            Value::Number(n) => n
                .as_i64()
                .map(|x| PyScalar::Int(i128::from(x)))
                .or_else(|| n.as_u64().map(|x| PyScalar::Int(i128::from(x))))
                .or_else(|| n.as_f64().map(PyScalar::Float)),
            _ => None,
        }
    };
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => py_equal(x, y),
            _ => false,
        },
    }
}

/// Python's `==` between two numbers (exact between an int and a float; NaN equals
/// nothing).
pub(crate) fn py_equal(a: PyScalar, b: PyScalar) -> bool {
    match (a, b) {
        (PyScalar::Int(x), PyScalar::Int(y)) => x == y,
        (PyScalar::Float(x), PyScalar::Float(y)) => x == y,
        (PyScalar::Int(i), PyScalar::Float(f)) | (PyScalar::Float(f), PyScalar::Int(i)) => {
            f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && f as i128 == i
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_and_floats_read_as_zarr_python_reads_them() {
        for (v, want) in [
            (json!(3), 3),
            (json!(2.0), 2),
            (json!(true), 1),
            (json!(" -5 "), -5),
            (json!("1_000"), 1000),
            (json!(18446744073709551615u64), u64::MAX as i128),
        ] {
            assert_eq!(json_int(&v).unwrap(), want, "{v}");
        }
        for bad in [
            json!(2.5),
            json!("3.0"),
            json!("1__0"),
            json!("_1"),
            json!(null),
            json!(""),
        ] {
            assert!(json_int(&bad).is_err(), "{bad}");
        }
        for (v, want) in [
            (json!(0.5), 0.5),
            (json!("0.5"), 0.5),
            (json!("1e-1"), 0.1),
            (json!("+Infinity"), f64::INFINITY),
            (json!("-inf"), f64::NEG_INFINITY),
            (json!(" 1_0.5 "), 10.5),
            (json!("0x3c00"), 1.0),
            (json!("0x3f800000"), 1.0),
            (json!("0x3ff0000000000000"), 1.0),
            (json!(7), 7.0),
        ] {
            assert_eq!(json_float(&v).unwrap(), want, "{v}");
        }
        assert!(json_float(&json!("nan")).unwrap().is_nan());
        assert!(json_float(&json!("NaN")).unwrap().is_nan());
        for bad in [
            json!("0x3c0"),
            json!("0x0é0"),
            json!("abc"),
            json!("1__0"),
            json!([1]),
        ] {
            assert!(json_float(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_are_equal_as_python_dict_keys() {
        assert!(same_python_key(&json!(1), &json!(1.0)));
        assert!(same_python_key(&json!(1), &json!(true)));
        assert!(same_python_key(&json!(0), &json!(-0.0)));
        assert!(same_python_key(&json!("NaN"), &json!("NaN")));
        assert!(!same_python_key(&json!("1"), &json!(1)));
        assert!(!same_python_key(&json!(1), &json!(1.5)));
        assert!(!py_equal(
            PyScalar::Float(f64::NAN),
            PyScalar::Float(f64::NAN)
        ));
    }
}
