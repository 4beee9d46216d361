//! C-order shape arithmetic shared by the planner and the executors.

/// C-order element strides of a shape (saturating: shapes come from validated metadata,
/// whose cell counts fit in `i64`).
pub(crate) fn c_strides(shape: &[u64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(i64::try_from(shape[i + 1]).unwrap_or(i64::MAX));
    }
    s
}

/// Number of cells of a shape as `usize`, saturating (a count that does not fit in memory
/// is refused before any buffer of it is allocated).
pub(crate) fn cell_count(shape: &[u64]) -> usize {
    shape.iter().fold(1usize, |acc, &n| {
        acc.saturating_mul(usize::try_from(n).unwrap_or(usize::MAX))
    })
}
