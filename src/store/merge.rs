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
