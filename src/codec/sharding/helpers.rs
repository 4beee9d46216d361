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

/// `n` copies of the fill value. Infallible (an allocation the system refuses aborts):
/// the library allocates chunk-sized fill buffers with
/// [`try_fill_bytes`](crate::codec::bounds::try_fill_bytes).
///
/// # Panics
///
/// When `n * elem` overflows `usize`.
pub fn fill_bytes(fill_value: &FillValue, n: usize, elem: usize) -> Vec<u8> {
    let bytes = n
        .checked_mul(elem)
        .expect("fill_bytes: n * elem overflows usize");
    let fv = fill_value.as_ne_bytes();
    if fv.len() != elem || fv.iter().all(|&b| b == 0) {
        return vec![0u8; bytes];
    }
    let mut out = Vec::with_capacity(bytes);
    crate::codec::bounds::extend_repeated(&mut out, fv, bytes);
    out
}
