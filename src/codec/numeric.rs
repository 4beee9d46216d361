//! NumPy's numeric element types as numcodecs' array→array codecs see them (`delta`,
//! `astype`, `quantize`): parsing NumPy type strings, reading and writing native-endian
//! elements, and NumPy's casts between them (`ndarray.astype`).

use zarrs::array::DataType;
use zarrs::array::codec::api::CodecError;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::PluginCreateError;

/// A NumPy numeric element type (integers and `float32` / `float64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elem {
    /// `int8`.
    I8,
    /// `int16`.
    I16,
    /// `int32`.
    I32,
    /// `int64`.
    I64,
    /// `uint8`.
    U8,
    /// `uint16`.
    U16,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
    /// `float32`.
    F32,
    /// `float64`.
    F64,
}

impl Elem {
    /// The type a NumPy type string names (`<i4`, `|u1`, `i8`, `=f8`, ...); big-endian
    /// multi-byte types are not (the codecs work on the chunk's values in memory, and a
    /// big-endian type in numcodecs reinterprets the bytes it is given).
    pub(crate) fn parse(text: &str) -> Option<Elem> {
        let t = text.trim_start_matches(['<', '|', '=']);
        Some(match t {
            "i1" | "int8" | ">i1" => Elem::I8,
            "i2" | "int16" => Elem::I16,
            "i4" | "int32" => Elem::I32,
            "i8" | "int64" => Elem::I64,
            "u1" | "uint8" | ">u1" => Elem::U8,
            "u2" | "uint16" => Elem::U16,
            "u4" | "uint32" => Elem::U32,
            "u8" | "uint64" => Elem::U64,
            "f4" | "float32" => Elem::F32,
            "f8" | "float64" => Elem::F64,
            _ => return None,
        })
    }

    /// Its Zarr v3 data type name.
    pub(crate) fn v3_name(self) -> &'static str {
        match self {
            Elem::I8 => "int8",
            Elem::I16 => "int16",
            Elem::I32 => "int32",
            Elem::I64 => "int64",
            Elem::U8 => "uint8",
            Elem::U16 => "uint16",
            Elem::U32 => "uint32",
            Elem::U64 => "uint64",
            Elem::F32 => "float32",
            Elem::F64 => "float64",
        }
    }

    /// Bytes per element.
    pub(crate) fn size(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    /// Whether it is `float32` or `float64`.
    pub(crate) fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F64)
    }

    /// Whether it is a signed integer.
    pub(crate) fn is_signed(self) -> bool {
        matches!(self, Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64)
    }

    /// `v` cut to this type's width and sign- or zero-extended back to 64 bits (NumPy's
    /// integer cast). An integer of a supported other type (sign- or zero-extended) lies in
    /// this type's range exactly when `wrap` leaves it unchanged (the pairs where that
    /// fails, `uint64` with a signed type, are refused).
    pub(crate) fn wrap(self, v: u64) -> u64 {
        let bits = 8 * self.size() as u32;
        if bits == 64 {
            v
        } else if self.is_signed() {
            (((v << (64 - bits)) as i64) >> (64 - bits)) as u64
        } else {
            v & ((1u64 << bits) - 1)
        }
    }

    pub(crate) fn data_type(self) -> Result<DataType, PluginCreateError> {
        DataType::from_metadata(&MetadataV3::new(self.v3_name()))
            .map_err(|e| PluginCreateError::Other(format!("{}: {e}", self.v3_name())))
    }

    /// Element `i` of native-endian `bytes` as a 64-bit integer (sign- or zero-extended).
    pub(crate) fn load_int(self, bytes: &[u8], i: usize) -> u64 {
        let n = self.size();
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&bytes[i * n..(i + 1) * n]);
        let raw = u64::from_ne_bytes(b);
        // native-endian: on a little-endian machine the element's bytes are the low ones
        self.wrap(if cfg!(target_endian = "big") {
            raw >> (64 - 8 * n)
        } else {
            raw
        })
    }

    /// Stores the low bytes of `v` as element `i` of native-endian `bytes` (truncation, as
    /// NumPy's integer casts).
    pub(crate) fn store_int(self, bytes: &mut [u8], i: usize, v: u64) {
        let n = self.size();
        let b = if cfg!(target_endian = "big") {
            (v << (64 - 8 * n)).to_ne_bytes()
        } else {
            v.to_ne_bytes()
        };
        bytes[i * n..(i + 1) * n].copy_from_slice(&b[..n]);
    }
}

/// The elements of `bytes` (native-endian `elem`s), checked to be whole (`codec` names
/// the codec in the error).
pub(crate) fn count(bytes: &[u8], elem: Elem, codec: &str) -> Result<usize, CodecError> {
    if !bytes.len().is_multiple_of(elem.size()) {
        return Err(CodecError::Other(format!(
            "{codec}: {} bytes are no whole number of {}-byte elements",
            bytes.len(),
            elem.size()
        )));
    }
    Ok(bytes.len() / elem.size())
}

/// Element `i` of native-endian `float32`s.
pub(crate) fn f32_at(bytes: &[u8], i: usize) -> f32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[i * 4..i * 4 + 4]);
    f32::from_ne_bytes(b)
}

/// Element `i` of native-endian `float64`s.
pub(crate) fn f64_at(bytes: &[u8], i: usize) -> f64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
    f64::from_ne_bytes(b)
}

/// `Ok` when `got` (the array's data type) is `expected`, the type a numcodecs filter was
/// configured for (`configured`, as written): else an error naming the codec.
pub(crate) fn check_data_type(
    codec: &str,
    configured: &str,
    expected: &DataType,
    got: &DataType,
) -> Result<(), CodecError> {
    if got != expected {
        return Err(CodecError::Other(format!(
            "{codec}: the codec's {configured:?} is not the array's data type {:?}",
            got.name(zarrs::plugin::ZarrVersion::V3).unwrap_or_default()
        )));
    }
    Ok(())
}

/// Stores `v` as element `i` of native-endian `float32`s.
pub(crate) fn set_f32(bytes: &mut [u8], i: usize, v: f32) {
    bytes[i * 4..i * 4 + 4].copy_from_slice(&v.to_ne_bytes());
}

/// Stores `v` as element `i` of native-endian `float64`s.
pub(crate) fn set_f64(bytes: &mut [u8], i: usize, v: f64) {
    bytes[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
}

/// An element as NumPy's casts see it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Signed(i64),
    Unsigned(u64),
    Float(f64),
}

impl Elem {
    fn load(self, bytes: &[u8], i: usize) -> Value {
        match self {
            Elem::F32 => Value::Float(f64::from(f32_at(bytes, i))),
            Elem::F64 => Value::Float(f64_at(bytes, i)),
            _ if self.is_signed() => Value::Signed(self.load_int(bytes, i) as i64),
            _ => Value::Unsigned(self.load_int(bytes, i)),
        }
    }

    /// The smallest and one past the largest value of an integer type, as `f64`s (exact:
    /// both are powers of two or zero).
    pub(crate) fn float_range(self) -> (f64, f64) {
        let bits = 8 * self.size() as i32;
        if self.is_signed() {
            (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1))
        } else {
            (0.0, 2f64.powi(bits))
        }
    }
}

/// NumPy's `src.astype(to)` of native-endian `from` elements, into native-endian `to`
/// elements, as numcodecs' `astype` and `quantize` apply it:
/// - integer to integer: truncation to `to`'s width (NumPy's wrapping cast);
/// - integer to float and float to float: rounded to nearest, ties to even (a `float64`
///   beyond `float32`'s range becomes ±infinity, as in NumPy);
/// - float to integer: truncation toward zero. A NaN, an infinity or a value outside
///   `to`'s range is an error: C leaves that cast undefined and NumPy's result depends on
///   the machine, so no such value is stored or returned.
pub(crate) fn cast(src: &[u8], from: Elem, to: Elem, codec: &str) -> Result<Vec<u8>, CodecError> {
    let n = count(src, from, codec)?;
    if from == to {
        // NumPy copies the bits (a signalling NaN stays one)
        return Ok(src.to_vec());
    }
    let bytes = n
        .checked_mul(to.size())
        .ok_or_else(|| CodecError::Other(format!("{codec}: {n} elements do not fit in memory")))?;
    let mut out = zeroed(bytes, codec)?;
    for i in 0..n {
        match (from.load(src, i), to) {
            (Value::Float(v), Elem::F32) => set_f32(&mut out, i, v as f32),
            (Value::Float(v), Elem::F64) => set_f64(&mut out, i, v),
            (Value::Signed(v), Elem::F32) => set_f32(&mut out, i, v as f32),
            (Value::Signed(v), Elem::F64) => set_f64(&mut out, i, v as f64),
            (Value::Unsigned(v), Elem::F32) => set_f32(&mut out, i, v as f32),
            (Value::Unsigned(v), Elem::F64) => set_f64(&mut out, i, v as f64),
            (Value::Signed(v), _) => to.store_int(&mut out, i, v as u64),
            (Value::Unsigned(v), _) => to.store_int(&mut out, i, v),
            (Value::Float(v), _) => {
                let t = v.trunc();
                let (lo, end) = to.float_range();
                if !(t >= lo && t < end) {
                    return Err(CodecError::Other(format!(
                        "{codec}: {v} has no {} value (NumPy's cast of it is undefined)",
                        to.v3_name()
                    )));
                }
                let bits = if to.is_signed() {
                    t as i64 as u64
                } else {
                    t as u64
                };
                to.store_int(&mut out, i, bits);
            }
        }
    }
    Ok(out)
}

/// `bytes` zero bytes, allocated fallibly (`codec` names the codec in the error).
pub(crate) fn zeroed(bytes: usize, codec: &str) -> Result<Vec<u8>, CodecError> {
    bytemuck::allocation::try_zeroed_vec::<u8>(bytes)
        .map_err(|()| CodecError::Other(format!("{codec}: cannot allocate {bytes} bytes")))
}

/// The bytes of a hex string (test vectors).
#[cfg(test)]
pub(crate) fn from_hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The vectors of `test-data/fixtures/numcodecs-cast-vectors.json` for `codec`.
#[cfg(test)]
pub(crate) fn cast_vectors(codec: &str) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_str(include_str!(
        "../../test-data/fixtures/numcodecs-cast-vectors.json"
    ))
    .unwrap();
    doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["codec"] == codec)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_integer_casts_outside_the_range_are_errors() {
        let x: Vec<u8> = [1.9f64, -1.9, 127.99, -128.5]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(
            cast(&x, Elem::F64, Elem::I8, "t").unwrap(),
            [1u8, 0xff, 127, 0x80]
        );
        for bad in [128.0f64, -129.0, f64::NAN, f64::INFINITY, 1e300] {
            let e = cast(&bad.to_ne_bytes(), Elem::F64, Elem::I8, "t").unwrap_err();
            assert!(e.to_string().contains("undefined"), "{e}");
        }
        assert!(cast(&(-1.0f32).to_ne_bytes(), Elem::F32, Elem::U16, "t").is_err());
        assert!(cast(&(-0.5f32).to_ne_bytes(), Elem::F32, Elem::U16, "t").is_ok());
        assert!(cast(&2f64.powi(63).to_ne_bytes(), Elem::F64, Elem::I64, "t").is_err());
        assert!(cast(&2f64.powi(64).to_ne_bytes(), Elem::F64, Elem::U64, "t").is_err());
        assert!(cast(&[1, 2, 3], Elem::I16, Elem::I8, "t").is_err());
    }
}
