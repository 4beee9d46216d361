//! Reads and writes of the fixed-width text types (`fixed_length_utf32` = NumPy `<U n`,
//! `null_terminated_bytes` = `|S n`) as `String` / `Vec<u8>` elements.
//!
//! These types are fixed-size: the planner, codecs and executors move their elements as
//! bytes like any other. Only the conversion to and from the caller's values is here:
//! trailing U+0000 / NUL padding is removed on reading (as NumPy does) and added on
//! writing; a value longer than the type holds is refused ([`ArrayError::ValueTooLong`]),
//! where NumPy would cut it short.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use crate::metadata::DataType;

use super::ArrayView;
use super::VlenElement;
use super::error::{ArrayError, Result};

/// The element width of a fixed-width text type that `T` reads: `Some` for `String` with
/// `fixed_length_utf32` and `Vec<u8>` with `null_terminated_bytes`.
pub(crate) fn fixed_text_of<T: VlenElement>(data_type: DataType) -> Option<DataType> {
    match (T::DTYPE, data_type) {
        (DataType::String, DataType::FixedString { .. })
        | (DataType::Bytes, DataType::FixedBytes { .. }) => Some(data_type),
        _ => None,
    }
}

/// The value of one stored element: its bytes without the padding (UTF-8 for a string).
fn element_value(data_type: DataType, stored: &[u8]) -> Option<Vec<u8>> {
    match data_type {
        DataType::FixedString { .. } => {
            let units: Vec<u32> = stored
                .chunks_exact(4)
                .map(|u| u32::from_ne_bytes([u[0], u[1], u[2], u[3]]))
                .collect();
            let end = units.iter().rposition(|&u| u != 0).map_or(0, |i| i + 1);
            units[..end]
                .iter()
                .map(|&u| char::from_u32(u))
                .collect::<Option<String>>()
                .map(String::into_bytes)
        }
        _ => {
            let end = stored.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            Some(stored[..end].to_vec())
        }
    }
}

/// The stored form of `values` (C order) in the fixed-width text type `data_type`.
pub(crate) fn stored_text<T, S, D>(data_type: DataType, values: &ArrayBase<S, D>) -> Result<Vec<u8>>
where
    T: VlenElement,
    S: Data<Elem = T>,
    D: Dimension,
{
    let mut stored = Vec::new();
    stored
        .try_reserve_exact(values.len().saturating_mul(data_type.size()))
        .map_err(|_| ArrayError::TooLarge(format!("{} values of {data_type}", values.len())))?;
    for (i, v) in values.iter().enumerate() {
        store_value(data_type, i, v.element_bytes(), &mut stored)?;
    }
    Ok(stored)
}

/// Appends the stored form of `value` (UTF-8 for a string) to `out`: padded to the type's
/// width, or `ValueTooLong`.
fn store_value(data_type: DataType, index: usize, value: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let too_long = |length, unit| ArrayError::ValueTooLong {
        index,
        length,
        unit,
        data_type: data_type.to_string(),
    };
    let start = out.len();
    match data_type {
        DataType::FixedString { chars } => {
            let text = std::str::from_utf8(value)
                .map_err(|_| ArrayError::Internal("a String that is not UTF-8".into()))?;
            let n = text.chars().count();
            if n > chars as usize {
                return Err(too_long(n, "code points"));
            }
            out.extend(text.chars().flat_map(|c| u32::from(c).to_ne_bytes()));
        }
        _ => {
            if value.len() > data_type.size() {
                return Err(too_long(value.len(), "bytes"));
            }
            out.extend_from_slice(value);
        }
    }
    out.resize(start + data_type.size(), 0);
    Ok(())
}

impl ArrayView {
    /// Reads a view of a fixed-width text array (`data_type`, as [`fixed_text_of`] gave it).
    pub(crate) async fn read_fixed_text<T: VlenElement>(
        &self,
        data_type: DataType,
    ) -> Result<ArrayD<T>> {
        let shape = self.shape_usize()?;
        let stored = self.read_bytes().await?;
        let invalid = |i: usize| ArrayError::InvalidData {
            key: self.array().url(),
            reason: format!(
                "element {i} of the selection is not valid {} text",
                data_type.numpy_descr()
            ),
        };
        let values = stored
            .chunks_exact(data_type.size())
            .enumerate()
            .map(|(i, e)| {
                element_value(data_type, e)
                    .and_then(|v| T::from_element_bytes(&v))
                    .ok_or_else(|| invalid(i))
            })
            .collect::<Result<Vec<T>>>()?;
        ArrayD::from_shape_vec(IxDyn(&shape), values)
            .map_err(|e| ArrayError::Internal(e.to_string()))
    }

    /// Writes values into a view of a fixed-width text array, broadcast to its shape.
    pub(crate) async fn write_fixed_text<T, S, D>(
        &self,
        data_type: DataType,
        values: &ArrayBase<S, D>,
    ) -> Result<()>
    where
        T: VlenElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let shape: Vec<u64> = values.shape().iter().map(|&n| n as u64).collect();
        self.write_bytes(&stored_text(data_type, values)?, &shape)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_is_removed_on_reading_and_added_on_writing() {
        let u3 = DataType::FixedString { chars: 3 };
        let mut out = Vec::new();
        store_value(u3, 0, "h\u{e9}".as_bytes(), &mut out).unwrap();
        assert_eq!(out.len(), 12);
        assert_eq!(element_value(u3, &out).unwrap(), "h\u{e9}".as_bytes());
        let err = store_value(u3, 7, "abcd".as_bytes(), &mut out).unwrap_err();
        assert!(
            matches!(
                err,
                ArrayError::ValueTooLong {
                    index: 7,
                    length: 4,
                    ..
                }
            ),
            "{err}"
        );
        // a unit that is not a code point
        assert_eq!(element_value(u3, &0xD800u32.to_ne_bytes()), None);
        let s4 = DataType::FixedBytes { len: 4 };
        let mut out = Vec::new();
        store_value(s4, 0, b"a\0b", &mut out).unwrap();
        assert_eq!(out, b"a\0b\0");
        assert_eq!(element_value(s4, &out).unwrap(), b"a\0b");
        assert!(store_value(s4, 1, b"abcde", &mut out).is_err());
    }
}
