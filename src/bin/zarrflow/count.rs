//! Element and byte counts as messages state them: exact, never saturated.

use std::fmt;

/// The number of elements of a shape (or bytes of a buffer): exact, or known only to be
/// above `u128::MAX` (a shape of several dimensions near 2^64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Count {
    /// The exact number.
    Exact(u128),
    /// More than `u128::MAX`.
    Huge,
}

impl Count {
    /// The number of elements of `shape` (1 for rank 0).
    pub fn of_shape(shape: &[u64]) -> Count {
        shape
            .iter()
            .try_fold(1u128, |a, &n| a.checked_mul(u128::from(n)))
            .map_or(Count::Huge, Count::Exact)
    }

    /// The count times `factor` (bytes of `factor`-byte elements).
    pub fn times(self, factor: usize) -> Count {
        match self {
            Count::Exact(n) => n
                .checked_mul(factor as u128)
                .map_or(Count::Huge, Count::Exact),
            Count::Huge => Count::Huge,
        }
    }

    /// Whether the count is above `limit`.
    pub fn exceeds(self, limit: u64) -> bool {
        match self {
            Count::Exact(n) => n > u128::from(limit),
            Count::Huge => true,
        }
    }

    /// The count as a `u64`, when it is one.
    pub fn as_u64(self) -> Option<u64> {
        match self {
            Count::Exact(n) => u64::try_from(n).ok(),
            Count::Huge => None,
        }
    }
}

impl fmt::Display for Count {
    /// The decimal number, or `more than 340282366920938463463374607431768211455`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Count::Exact(n) => write!(f, "{n}"),
            Count::Huge => write!(f, "more than {}", u128::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_exact_or_say_more() {
        assert_eq!(Count::of_shape(&[]).to_string(), "1");
        assert_eq!(Count::of_shape(&[6; 10]).to_string(), "60466176");
        let big = Count::of_shape(&[u64::MAX, u64::MAX]);
        assert_eq!(
            big,
            Count::Exact(u128::from(u64::MAX) * u128::from(u64::MAX))
        );
        assert!(big.exceeds(u64::MAX) && big.as_u64().is_none());
        let huge = Count::of_shape(&[u64::MAX; 3]);
        assert_eq!(huge.to_string(), format!("more than {}", u128::MAX));
        assert_eq!(
            Count::of_shape(&[1 << 40]).times(1 << 30),
            Count::Exact(1 << 70)
        );
        assert_eq!(huge.times(2), Count::Huge);
    }
}
