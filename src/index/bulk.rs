//! Whole-array passes over index values: bounds checks, NumPy's negative-index wrapping and
//! `(min, max)`, each one loop without an early exit, so that it vectorises (compiled for the
//! CPU's SIMD levels and chosen at run time, as the planner's loops are).
//!
//! The loops only say whether every value passed; a caller whose values did not pass walks
//! them again one by one to name the first bad value in its error, so errors are the same as
//! a per-value check's.

/// Whether every value lies in `lo..hi`.
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn all_within(values: &[i64], lo: i64, hi: i64) -> bool {
    let mut ok = true;
    for &v in values {
        ok &= (v >= lo) & (v < hi);
    }
    ok
}

/// `(min, max)` of the values, `None` when there are none.
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn min_max(values: &[i64]) -> Option<(i64, i64)> {
    let (&first, rest) = values.split_first()?;
    let (mut lo, mut hi) = (first, first);
    for &v in rest {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    Some((lo, hi))
}

/// Positional index values on an axis of `extent` values starting at `origin`, as literal
/// coordinates (`-1` is the last): `None` unless every value lies in `-extent..extent` and
/// the axis's coordinates fit `i64` (the caller then checks value by value).
pub(crate) fn wrap_positional(values: &[i64], extent: u64, origin: i64) -> Option<Vec<i64>> {
    let n = i64::try_from(extent).ok()?;
    origin.checked_add(n)?;
    let mut out = vec![0i64; values.len()];
    wrap_into(values, n, origin, &mut out).then_some(out)
}

/// `out[i] = origin + values[i]`, plus `n` for a negative value; whether every value lay in
/// `-n..n` (when not, `out` holds wrapped garbage and is discarded).
#[multiversion::multiversion(targets = "simd")]
fn wrap_into(values: &[i64], n: i64, origin: i64, out: &mut [i64]) -> bool {
    let mut ok = true;
    for (o, &v) in out.iter_mut().zip(values) {
        ok &= (v >= -n) & (v < n);
        *o = origin.wrapping_add(v).wrapping_add((v >> 63) & n);
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_within_is_a_half_open_bounds_check() {
        assert!(all_within(&[], 0, 0));
        assert!(all_within(&[0, 4, 9], 0, 10));
        assert!(!all_within(&[0, 10], 0, 10));
        assert!(!all_within(&[-1, 3], 0, 10));
        assert!(all_within(&[i64::MIN, i64::MAX - 1], i64::MIN, i64::MAX));
        assert!(!all_within(&[i64::MAX], i64::MIN, i64::MAX));
    }

    #[test]
    fn min_max_of_values() {
        assert_eq!(min_max(&[]), None);
        assert_eq!(min_max(&[7]), Some((7, 7)));
        assert_eq!(min_max(&[3, -2, 9, 0]), Some((-2, 9)));
        assert_eq!(min_max(&[i64::MAX, i64::MIN]), Some((i64::MIN, i64::MAX)));
    }

    #[test]
    fn wrap_positional_counts_negative_values_from_the_end() {
        assert_eq!(
            wrap_positional(&[0, 4, -1, -5], 5, 10),
            Some(vec![10, 14, 14, 10])
        );
        assert_eq!(wrap_positional(&[], 0, 0), Some(vec![]));
        // out of range either way: the caller reports the value
        assert_eq!(wrap_positional(&[5], 5, 0), None);
        assert_eq!(wrap_positional(&[-6], 5, 0), None);
        assert_eq!(wrap_positional(&[i64::MIN, i64::MAX], 5, 0), None);
        // an axis whose coordinates do not fit i64: left to the per-value path
        assert_eq!(wrap_positional(&[0], 1 << 63, 0), None);
        assert_eq!(wrap_positional(&[0], 10, i64::MAX - 5), None);
        // the largest axis that fits
        assert_eq!(
            wrap_positional(&[-1, 0], i64::MAX as u64, 0),
            Some(vec![i64::MAX - 1, 0])
        );
    }
}
