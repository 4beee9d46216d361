//! Size checks and fill buffers shared by the sharding layer and the codec pipeline.

use crate::codec::CodecError;
use zarrs::array::{DataType, FillValue};

pub(crate) fn fixed_size(data_type: &DataType, context: &str) -> Result<usize, CodecError> {
    data_type
        .fixed_size()
        .ok_or_else(|| CodecError::UnsupportedDataType {
            data_type: data_type.to_string(),
            context: format!("{context} (variable-length types are not supported here)"),
        })
}

/// Bytes of a C-order buffer of `shape`, erroring instead of overflowing.
pub(crate) fn checked_bytes(shape: &[u64], elem: usize, key: &str) -> Result<usize, CodecError> {
    shape
        .iter()
        .try_fold(elem as u64, |acc, &d| acc.checked_mul(d))
        .filter(|&b| b <= isize::MAX as u64)
        .map(|b| b as usize)
        .ok_or_else(|| CodecError::InvalidConfiguration {
            field: key.to_string(),
            reason: format!(
                "a chunk of shape {shape:?} with {elem}-byte elements does not fit in memory"
            ),
        })
}

pub(crate) fn check_size(key: &str, got: usize, expected: usize) -> Result<(), CodecError> {
    if got != expected {
        return Err(CodecError::WrongSize {
            key: key.to_string(),
            expected: expected as u64,
            got: got as u64,
        });
    }
    Ok(())
}

/// `n` copies of the fill value: [`try_fill_bytes`](crate::codec::bounds::try_fill_bytes),
/// which the library uses for chunk-sized fill buffers, for callers (tests, tools) that
/// treat a refused allocation as fatal.
///
/// # Panics
///
/// When the bytes cannot be allocated (`n * elem` overflowing included).
pub fn fill_bytes(fill_value: &FillValue, n: usize, elem: usize) -> Vec<u8> {
    crate::codec::bounds::try_fill_bytes(fill_value, n as u64, elem, "fill_bytes")
        .unwrap_or_else(|e| panic!("{e}"))
}
