//! Pure planning of coalesced range requests (no I/O).

use std::ops::Range;

/// Thresholds for merging byte ranges into fewer requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoalesceOptions {
    /// Two ranges are merged when the gap between them is at most this many bytes.
    pub max_gap: u64,
    /// A merged request never grows beyond this many bytes (a single range larger than this is
    /// still requested alone, unsplit).
    pub max_request_bytes: u64,
}

impl Default for CoalesceOptions {
    /// zarr-python's defaults: 1 MiB gap, 16 MiB per merged request.
    fn default() -> Self {
        CoalesceOptions {
            max_gap: 1024 * 1024,
            max_request_bytes: 16 * 1024 * 1024,
        }
    }
}

/// A merge plan: the requests to make and, for every input range, which request holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergePlan {
    /// The requests to issue, sorted by start (they overlap only when a range straddles the
    /// size cap).
    pub requests: Vec<Range<u64>>,
    /// For input range `i`: `(request index, offset of the range within that request)`.
    pub slices: Vec<(usize, u64)>,
}

/// Plan coalesced requests for `ranges` (any order, overlaps and duplicates allowed).
///
/// Ranges are sorted by start; a range joins the current request when its gap to the request's
/// end is `<= opts.max_gap` and the grown request stays within `opts.max_request_bytes`
/// (overlapping ranges are always merged). Empty ranges are mapped to the request that contains
/// their start, or to a zero-length request of their own. Ranges with `start > end` must be
/// rejected by the caller.
pub fn plan_merges(ranges: &[Range<u64>], opts: CoalesceOptions) -> MergePlan {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
    let mut requests: Vec<Range<u64>> = Vec::new();
    let mut slices = vec![(0usize, 0u64); ranges.len()];
    for i in order {
        let r = &ranges[i];
        let joined = match requests.last_mut() {
            Some(cur) => {
                let gap = r.start.saturating_sub(cur.end);
                let new_end = cur.end.max(r.end);
                let overlaps = r.start <= cur.end && r.start >= cur.start;
                let within_size = new_end - cur.start <= opts.max_request_bytes;
                if r.start >= cur.start
                    && (overlaps && r.end <= cur.end || (gap <= opts.max_gap && within_size))
                {
                    cur.end = new_end;
                    true
                } else {
                    false
                }
            }
            None => false,
        };
        if !joined {
            requests.push(r.clone());
        }
        let idx = requests.len() - 1;
        slices[i] = (idx, r.start - requests[idx].start);
    }
    MergePlan { requests, slices }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    fn opts(max_gap: u64, max_request_bytes: u64) -> CoalesceOptions {
        CoalesceOptions {
            max_gap,
            max_request_bytes,
        }
    }

    #[test]
    fn empty_input() {
        let p = plan_merges(&[], CoalesceOptions::default());
        assert!(p.requests.is_empty() && p.slices.is_empty());
    }

    #[test]
    fn adjacent_ranges_merge() {
        let p = plan_merges(&[0..4, 4..8, 8..10], opts(0, 100));
        assert_eq!(p.requests, vec![0..10]);
        assert_eq!(p.slices, vec![(0, 0), (0, 4), (0, 8)]);
    }

    #[test]
    fn gap_threshold_is_inclusive() {
        // gap of exactly 10 merges, 11 does not
        assert_eq!(
            plan_merges(&[0..10, 20..30], opts(10, 100)).requests,
            vec![0..30]
        );
        assert_eq!(
            plan_merges(&[0..10, 21..30], opts(10, 100)).requests,
            vec![0..10, 21..30]
        );
        // zero gap: only touching or overlapping ranges merge
        assert_eq!(
            plan_merges(&[0..10, 11..12], opts(0, 100)).requests.len(),
            2
        );
    }

    #[test]
    fn size_cap_splits() {
        let p = plan_merges(&[0..40, 40..80, 80..120], opts(0, 100));
        assert_eq!(p.requests, vec![0..80, 80..120]);
        // a single range above the cap is requested whole
        assert_eq!(plan_merges(&[0..500], opts(0, 100)).requests, vec![0..500]);
    }

    #[test]
    fn unsorted_overlapping_duplicates() {
        let input = [50..60, 0..10, 5..8, 0..10, 55..70];
        let p = plan_merges(&input, opts(0, 1000));
        assert_eq!(p.requests, vec![0..10, 50..70]);
        assert_eq!(p.slices, vec![(1, 0), (0, 0), (0, 5), (0, 0), (1, 5)]);
    }

    #[test]
    fn empty_ranges_need_no_extra_request_inside_others() {
        let p = plan_merges(&[0..10, 5..5], opts(0, 100));
        assert_eq!(p.requests, vec![0..10]);
        assert_eq!(p.slices[1], (0, 5));
    }

    proptest::proptest! {
        #[test]
        fn plan_covers_every_range(
            raw in proptest::collection::vec((0u64..10_000, 0u64..300), 0..40),
            gap in 0u64..500,
            cap in 1u64..2_000,
        ) {
            let ranges: Vec<Range<u64>> = raw.iter().map(|&(s, l)| s..s + l).collect();
            let p = plan_merges(&ranges, opts(gap, cap));
            proptest::prop_assert!(p.requests.len() <= ranges.len());
            proptest::prop_assert!(p.requests.windows(2).all(|w| w[0].start <= w[1].start));
            for (r, &(idx, off)) in ranges.iter().zip(&p.slices) {
                let req = &p.requests[idx];
                proptest::prop_assert_eq!(req.start + off, r.start);
                proptest::prop_assert!(r.end <= req.end);
            }
            // requests that merged several ranges respect the cap
            for (i, req) in p.requests.iter().enumerate() {
                let members = p.slices.iter().filter(|s| s.0 == i).count();
                if members > 1 {
                    let widest = ranges.iter().map(|r| r.end - r.start).max().unwrap_or(0);
                    proptest::prop_assert!(req.end - req.start <= cap.max(widest));
                }
            }
        }
    }
}
