//! Which elements `get` prints of a large result: NumPy's summary, bounded whatever the
//! shape.
//!
//! A result of at most [`SUMMARY_THRESHOLD`] values is printed whole. A larger one shows,
//! along each dimension longer than `2 × EDGE_ITEMS`, its first and last [`EDGE_ITEMS`]
//! (NumPy's `threshold=1000, edgeitems=3`). NumPy stops there, so a result of many short
//! dimensions (`[6] * 10`: 60,466,176 values) would print whole; here, while more than
//! [`SUMMARY_LIMIT`] values would be shown, dimensions are cut further from the outermost
//! in: first to their first and last element, then to their first. A summary therefore
//! never shows (nor reads) more than [`SUMMARY_LIMIT`] values.

use crate::count::Count;

/// Results with more values than this are summarised.
pub const SUMMARY_THRESHOLD: u64 = 1000;
/// Values kept at each end of a long dimension of a summary.
pub const EDGE_ITEMS: u64 = 3;
/// The most values a summary shows.
pub const SUMMARY_LIMIT: u64 = 1000;

/// What a printed result shows of one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// All of its `n` elements.
    Whole(u64),
    /// Its first `head` and last `tail` elements, with `...` for those between.
    Cut {
        /// The length of the dimension.
        len: u64,
        /// Elements shown from the start.
        head: u64,
        /// Elements shown from the end.
        tail: u64,
    },
}

impl Extent {
    /// Elements shown.
    pub fn shown(&self) -> u64 {
        match *self {
            Extent::Whole(n) => n,
            Extent::Cut { head, tail, .. } => head + tail,
        }
    }

    /// The indices shown, when cut.
    pub fn indices(&self) -> Option<Vec<i64>> {
        match *self {
            Extent::Whole(_) => None,
            Extent::Cut { len, head, tail } => {
                let (len, head, tail) = (len as i64, head as i64, tail as i64);
                Some((0..head).chain(len - tail..len).collect())
            }
        }
    }

    /// A dimension shown as its first `head` and last `tail` elements (whole when that is
    /// all of it).
    fn cut(len: u64, head: u64, tail: u64) -> Extent {
        if head + tail >= len {
            Extent::Whole(len)
        } else {
            Extent::Cut { len, head, tail }
        }
    }
}

/// What to print of a result of `shape`: everything when `full` or small, else a summary
/// of at most [`SUMMARY_LIMIT`] values.
pub fn extents(shape: &[u64], full: bool) -> Vec<Extent> {
    let whole: Vec<Extent> = shape.iter().map(|&n| Extent::Whole(n)).collect();
    if full || !Count::of_shape(shape).exceeds(SUMMARY_THRESHOLD) {
        return whole;
    }
    let mut shown: Vec<Extent> = shape
        .iter()
        .map(|&n| Extent::cut(n, EDGE_ITEMS, EDGE_ITEMS))
        .collect();
    // cut further, outermost dimensions first: to the first and last, then to the first
    for (head, tail) in [(1, 1), (1, 0)] {
        for d in 0..shown.len() {
            if !shown_count(&shown).exceeds(SUMMARY_LIMIT) {
                return shown;
            }
            if shown[d].shown() > head + tail {
                shown[d] = Extent::cut(shape[d], head, tail);
            }
        }
    }
    shown
}

/// The number of values `extents` show.
pub fn shown_count(extents: &[Extent]) -> Count {
    let shown: Vec<u64> = extents.iter().map(Extent::shown).collect();
    Count::of_shape(&shown)
}

/// Whether any dimension is cut.
pub fn is_summary(extents: &[Extent]) -> bool {
    extents.iter().any(|e| matches!(e, Extent::Cut { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(shape: &[u64]) -> Vec<u64> {
        extents(shape, false).iter().map(Extent::shown).collect()
    }

    #[test]
    fn small_results_and_full_are_whole() {
        assert!(!is_summary(&extents(&[10, 100], false)));
        assert!(!is_summary(&extents(&[1000, 1000], true)));
        assert!(!is_summary(&extents(&[], false)));
        assert!(!is_summary(&extents(&[0, u64::MAX], false)));
    }

    #[test]
    fn long_dimensions_show_their_edges() {
        assert_eq!(shown(&[40, 50]), vec![6, 6]);
        assert_eq!(shown(&[1_000_000; 3]), vec![6, 6, 6]);
        assert_eq!(shown(&[2000, 4]), vec![6, 4]);
        let e = extents(&[40, 50], false);
        assert_eq!(e[0].indices().unwrap(), vec![0, 1, 2, 37, 38, 39]);
    }

    #[test]
    fn many_short_dimensions_are_cut_further() {
        // NumPy would print all 60,466,176 values
        let s = shown(&[6; 10]);
        assert!(!Count::of_shape(&s).exceeds(SUMMARY_LIMIT), "{s:?}");
        assert_eq!(s, vec![1, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
        assert_eq!(shown(&[6; 5]), vec![2, 2, 6, 6, 6]);
        for shape in [vec![2u64; 64], vec![3; 40], vec![u64::MAX; 20], vec![7; 12]] {
            let e = extents(&shape, false);
            assert!(!shown_count(&e).exceeds(SUMMARY_LIMIT), "{shape:?}: {e:?}");
            assert!(is_summary(&e));
        }
        let e = extents(&[2; 64], false);
        assert_eq!(
            e[0],
            Extent::Cut {
                len: 2,
                head: 1,
                tail: 0
            }
        );
        assert_eq!(e[63], Extent::Whole(2));
    }
}
