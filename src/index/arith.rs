//! Checked integer arithmetic of the index layer: every `offset + stride * x` is exact
//! (computed in `i128`) and refused with [`IndexError::Overflow`] when it leaves `i64`.

use super::error::{IndexError, Result};

/// Checked `a + b` with an error naming `what`.
pub(crate) fn add(a: i64, b: i64, what: &dyn Fn() -> String) -> Result<i64> {
    a.checked_add(b)
        .ok_or_else(|| IndexError::Overflow(format!("{a} + {b} overflows i64 in {}", what())))
}

/// Checked `a * b` with an error naming `what`.
pub(crate) fn mul(a: i64, b: i64, what: &dyn Fn() -> String) -> Result<i64> {
    a.checked_mul(b)
        .ok_or_else(|| IndexError::Overflow(format!("{a} * {b} overflows i64 in {}", what())))
}

/// Checked `offset + stride * x`, computed exactly in i128 and checked against i64.
pub(crate) fn affine(offset: i64, stride: i64, x: i64) -> Option<i64> {
    let v = offset as i128 + stride as i128 * x as i128;
    i64::try_from(v).ok()
}

/// Checked `offset + stride * x` with an error naming `what`.
pub(crate) fn affine_checked(
    offset: i64,
    stride: i64,
    x: i64,
    what: &dyn Fn() -> String,
) -> Result<i64> {
    affine(offset, stride, x).ok_or_else(|| {
        IndexError::Overflow(format!(
            "{offset} + {stride} * {x} overflows i64 in {}",
            what()
        ))
    })
}
