//! Packed grouping: each point's chunk key, position and chunk-local coordinate in one `u64`
//! word, grouped by a two-level most-significant-digit radix sort on the key bits.
//!
//! An unsorted index array ([`IndexedSet`](super::IndexedSet)) is grouped by chunk. A
//! one-pass counting sort over 10^5 chunks scatters every point to a random place in two
//! output arrays, and their write heads do not fit in cache. Packed words are grouped instead
//! by one radix pass into few enough buckets that their write heads stay in cache, then each
//! bucket by a counting sort in cache, and the grouped words are unpacked bucket by bucket,
//! while the bucket is in cache: the positions appended to their array, the chunk-local
//! coordinates written over the bucket's own place in the scattering buffer, which becomes
//! the local column (a fresh array of 10^6 local coordinates written after the grouping
//! cost about 7% more on the planning benchmark's unsorted case: 7.2-7.3 against 6.5-7.0
//! ms, alternated). Used when the grid is regular with 32-bit arithmetic (the chunk-local
//! coordinate is the division remainder) and the three fields fit 64 bits. On the planning
//! benchmark's unsorted case (10^6 points, 10^5 chunks) it takes about 15% less CPU than the
//! counting sort; counting every key in the first pass (up to 2^18 keys), so that buckets
//! are not counted again, took another ~10% off. Correlated arrays
//! ([`JointSet`](super::JointSet)) keep the counting sort: over the benchmark's 10^4 chunks
//! tuples its write heads fit in L2, and a packed version measured slower (again with the
//! per-key first pass: 11 ms against 6-7 ms).

use super::indexed::DivU32;
use crate::grid::{DimensionGrid, GridError};

/// The widest radix digit (2,048 buckets: their counters stay in L1, their write heads in L2).
const MAX_DIGIT_BITS: u32 = 11;

/// The widest key for which the first pass keeps a counter per key (2^18 `u32`s, 1 MiB: in
/// the L2 of current server CPUs, else in L3).
const MAX_KEY_COUNTER_BITS: u32 = 18;

/// Turns counts into the starts of their groups laid end to end (an exclusive prefix sum,
/// CSR offsets).
fn counts_to_starts<T: Copy + Default + std::ops::AddAssign>(counts: &mut [T]) {
    let mut acc = T::default();
    for c in counts.iter_mut() {
        let count = *c;
        *c = acc;
        acc += count;
    }
}

/// Bits needed to hold every value in `0..=max`.
pub(crate) fn bits(max: u64) -> u32 {
    u64::BITS - max.leading_zeros()
}

/// Splits storage coordinates of a regular grid into (chunk key, chunk-local coordinate)
/// with 32-bit arithmetic: key = chunk id - the first touched chunk's id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RegularSplit {
    base: i64,
    size: u32,
    div: DivU32,
}

impl RegularSplit {
    /// The splitter for coordinates whose chunks start at id `idmin`; `None` when the grid is
    /// not regular or its span from that chunk or its chunk size exceeds 32 bits.
    pub(crate) fn new(grid: &dyn DimensionGrid, idmin: i64) -> Result<Option<Self>, GridError> {
        let Some(g) = grid.as_regular() else {
            return Ok(None);
        };
        let base = g.chunk_offset(idmin)?;
        let size = g.size();
        let (lo, hi) = g.region();
        let span = hi as i128 - base as i128;
        if !(lo <= base && span <= u32::MAX as i128 && size <= u32::MAX as u64 && size > 0) {
            return Ok(None);
        }
        Ok(Some(RegularSplit {
            base,
            size: size as u32,
            div: DivU32::new(size as u32),
        }))
    }

    /// The chunk size (every chunk-local coordinate is below it).
    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    /// `(key, local)` of storage coordinate `s` (which lies in the grid's region, at or past
    /// the first touched chunk: the caller's probes guarantee it).
    #[inline(always)]
    pub(crate) fn split(&self, s: i64) -> (u32, u32) {
        self.split_rel(s.wrapping_sub(self.base) as u32)
    }

    /// `(key, local)` of storage coordinate `offset + stride * v` (under the same guarantee),
    /// in 32-bit arithmetic: the coordinate's distance from the first touched chunk is below
    /// 2^32, so computing it modulo 2^32 is exact, and the loop vectorises.
    #[inline(always)]
    pub(crate) fn split_affine(&self, offset: i64, stride: i64, v: i64) -> (u32, u32) {
        let start = offset.wrapping_sub(self.base) as u32;
        self.split_rel(start.wrapping_add((stride as u32).wrapping_mul(v as u32)))
    }

    #[inline(always)]
    fn split_rel(&self, rel: u32) -> (u32, u32) {
        let q = self.div.div(rel);
        (q, rel - q * self.size)
    }
}

// The loops below run once per point and vectorise: each is compiled for the CPU's SIMD
// levels (x86-64 v2, v3 with AVX2, v4 with AVX-512; NEON and others elsewhere) and the widest
// the running CPU has is chosen at run time (`multiversion`), so a portable build is not held
// to SSE2. Planning benchmark, alternated A/B: the unsorted case 7.0-7.8 ms with SSE2 only,
// 4.9-5.0 ms dispatched; the sorted case (with its blocked rows, `key_changes`) 2.4-2.5 ms
// before, 1.2 ms after.

/// Where a packed word keeps a point's fields: the chunk key from bit `low` up, the position
/// in the bits below it down to `local_bits`, the chunk-local coordinate below that.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PackedLayout {
    pub(crate) low: u32,
    pub(crate) local_bits: u32,
}

/// Writes into `out` the packed word of each point `first + i` whose value is `values[i]`
/// (storage coordinate `offset + stride * value`, split by `split`).
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn pack_affine(
    split: RegularSplit,
    (offset, stride): (i64, i64),
    values: &[i64],
    first: u64,
    layout: PackedLayout,
    out: &mut [u64],
) {
    let PackedLayout { low, local_bits } = layout;
    for ((o, &v), p) in out.iter_mut().zip(values).zip(first..) {
        let (q, l) = split.split_affine(offset, stride, v);
        *o = ((q as u64) << low) | (p << local_bits) | l as u64;
    }
}

/// `keys[i]` and the `i`-th value appended to `local`: the chunk key and chunk-local
/// coordinate of storage coordinate `offset + stride * values[i]`, split by `split`, for
/// every point.
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn split_affine_into(
    split: RegularSplit,
    (offset, stride): (i64, i64),
    values: &[i64],
    keys: &mut [u32],
    local: &mut Vec<i64>,
) {
    local.extend(keys.iter_mut().zip(values).map(|(k, &v)| {
        let (q, r) = split.split_affine(offset, stride, v);
        *k = q;
        i64::from(r)
    }));
}

/// Bit `i % 64` of `changes[i / 64]` set when `keys[i]` differs from the key before it
/// (`keys[i - 1]`, or `before` for the first).
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn key_changes(keys: &[u32], before: u32, changes: &mut [u64]) {
    for (w, (bits, ks)) in changes.iter_mut().zip(keys.chunks(64)).enumerate() {
        let prev = if w == 0 { before } else { keys[w * 64 - 1] };
        let mut m = (ks[0] != prev) as u64;
        if let Ok(ks) = <&[u32; 64]>::try_from(ks) {
            // a whole word: a loop of fixed length, which compiles to vector compares
            // (about a third faster than the loop below on 10^6 keys)
            for i in 1..64 {
                m |= ((ks[i] != ks[i - 1]) as u64) << i;
            }
        } else {
            for (b, pair) in ks.windows(2).enumerate() {
                m |= ((pair[1] != pair[0]) as u64) << (b + 1);
            }
        }
        *bits = m;
    }
}

/// Whether `values` never decrease (`ascending`) or never increase: blocks without an early
/// exit (so they vectorise), an early exit between blocks.
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn monotone(values: &[i64], ascending: bool) -> bool {
    const BLOCK: usize = 4096;
    let pairs = values.len().saturating_sub(1);
    (0..pairs).step_by(BLOCK).all(|start| {
        let end = (start + BLOCK).min(pairs);
        let (a, b) = (&values[start..end], &values[start + 1..end + 1]);
        if ascending {
            a.iter().zip(b).fold(true, |ok, (x, y)| ok & (x <= y))
        } else {
            a.iter().zip(b).fold(true, |ok, (x, y)| ok & (x >= y))
        }
    })
}

/// `keys[i] = combine(keys[i], key)`, and the local coordinate appended to `local`, of
/// storage coordinate `st(values[i])` split by `split`, for every point.
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn split_all<S: Fn(i64) -> i64, F: Fn(u32, u32) -> u32>(
    split: RegularSplit,
    values: &[i64],
    st: &S,
    keys: &mut [u32],
    combine: &F,
    local: &mut Vec<u32>,
) {
    local.extend(keys.iter_mut().zip(values).map(|(k, &v)| {
        let (q, r) = split.split(st(v));
        *k = combine(*k, q);
        r
    }));
}

/// `keys[i] = combine(keys[i], key)` of storage coordinate `st(values[i])` split by `split`,
/// for every point.
#[multiversion::multiversion(targets = "simd")]
pub(crate) fn split_keys<S: Fn(i64) -> i64, F: Fn(u32, u32) -> u32>(
    split: RegularSplit,
    values: &[i64],
    st: &S,
    keys: &mut [u32],
    combine: &F,
) {
    for (k, &v) in keys.iter_mut().zip(values) {
        *k = combine(*k, split.split(st(v)).0);
    }
}

/// Points grouped by key: `runs` lists `(key, end)` per distinct key in ascending order (CSR
/// ends); `identity` is true when the points were already grouped (grouped position = point);
/// `column` holds what the caller's `emit` wrote for each grouped position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grouped {
    pub(crate) runs: Vec<(u64, usize)>,
    pub(crate) identity: bool,
    pub(crate) column: Vec<i64>,
}

/// The key bits sorted by the first (scattering) level and by the in-cache second level.
fn level_bits(key_bits: u32) -> (u32, u32) {
    if key_bits <= MAX_DIGIT_BITS {
        return (key_bits, 0);
    }
    let high = (key_bits - MAX_DIGIT_BITS).max(key_bits.div_ceil(2));
    (high, key_bits - high)
}

/// Points whose words are filled at once (the caller's fill loop vectorises).
const BLOCK: usize = 2048;

/// Groups points `0..n` stably by key. `fill(start, out)` writes the words of points
/// `start..start + out.len()`: each word holds its point's key in the bits from `low_bits`
/// up (below `range`) and its position in the bits just below, above the rest, so that
/// ordering whole words orders by key, then by position. `emit(words, out)` receives the
/// grouped words, in grouped order, over one or more calls, and writes one value per word
/// into `out` (the words' places in the returned [`Grouped::column`]). For dense, unsorted
/// keys the column is the scattering level's own buffer, each bucket overwritten in place
/// once it is grouped (while it is in cache), so that no further array of `n` values is
/// written; grouped and sparse keys fill a column of their own.
///
/// Dense keys (`range` at most about 4n) take a most-significant-digit radix pass into as few
/// buckets as keep their write heads in cache, then a counting sort of each bucket in cache
/// (at most [`MAX_DIGIT_BITS`] bits each; up to [`MAX_KEY_COUNTER_BITS`] key bits, the first
/// pass counts every key, and each bucket is scattered through those counts without a count
/// of its own); sparse keys are sorted as whole words; grouped keys are only emitted.
pub(crate) fn group_packed(
    n: usize,
    mut fill: impl FnMut(usize, &mut [u64]),
    low_bits: u32,
    range: u64,
    mut emit: impl FnMut(&[u64], &mut [i64]),
) -> Grouped {
    let mut runs: Vec<(u64, usize)> = Vec::new();
    let push_run = |runs: &mut Vec<(u64, usize)>, key: u64, end: usize| match runs.last_mut() {
        Some((last, e)) if *last == key => *e = end,
        _ => runs.push((key, end)),
    };
    let sparse = range as u128 > 4 * n as u128 + 4096;
    let key_bits = bits(range.saturating_sub(1)).max(1);
    let (high_bits, low_digit) = level_bits(key_bits);
    let high_shift = low_bits + low_digit;
    let mut counts = vec![0usize; if sparse { 0 } else { 1 << high_bits }];
    // Two levels over keys few enough for a counter each in L2: the first pass counts every
    // key, so the second level needs no counting pass of its own.
    let per_key =
        !sparse && low_digit > 0 && key_bits <= MAX_KEY_COUNTER_BITS && n <= u32::MAX as usize;
    let mut key_counts = vec![0u32; if per_key { 1 << key_bits } else { 0 }];
    let mut block = vec![0u64; BLOCK.min(n)];
    let blocks = || {
        (0..n)
            .step_by(BLOCK)
            .map(move |start| (start, BLOCK.min(n - start)))
    };
    let mut grouped = true;
    let mut prev = 0u64;
    for (start, m) in blocks() {
        let words = &mut block[..m];
        fill(start, words);
        for &w in words.iter() {
            let key = w >> low_bits;
            grouped &= prev <= key;
            prev = key;
            if per_key {
                key_counts[key as usize] += 1;
            } else if !sparse {
                counts[(key >> low_digit) as usize] += 1;
            }
        }
    }
    if grouped {
        let mut column: Vec<i64> = Vec::with_capacity(n);
        for (start, m) in blocks() {
            let words = &mut block[..m];
            fill(start, words);
            for (i, &w) in words.iter().enumerate() {
                push_run(&mut runs, w >> low_bits, start + i + 1);
            }
            column.resize(start + m, 0);
            emit(words, &mut column[start..]);
        }
        return Grouped {
            runs,
            identity: true,
            column,
        };
    }
    if sparse {
        let mut words = vec![0u64; n];
        fill(0, &mut words);
        words.sort_unstable();
        for (j, &w) in words.iter().enumerate() {
            push_run(&mut runs, w >> low_bits, j + 1);
        }
        let mut column = vec![0i64; n];
        emit(&words, &mut column);
        return Grouped {
            runs,
            identity: false,
            column,
        };
    }
    if per_key {
        // key starts (within `n`, so in `u32`); a bucket starts where its first key does
        counts_to_starts(&mut key_counts);
        for (b, c) in counts.iter_mut().enumerate() {
            *c = key_counts[b << low_digit] as usize;
        }
    } else {
        // bucket starts of the first level
        counts_to_starts(&mut counts);
    }
    let starts = counts.clone();
    // the words as `i64` bit patterns: the buffer becomes the returned column
    let mut scattered = vec![0i64; n];
    for (start, m) in blocks() {
        let words = &mut block[..m];
        fill(start, words);
        for &w in words.iter() {
            let slot = &mut counts[(w >> high_shift) as usize];
            scattered[*slot] = w as i64;
            *slot += 1;
        }
    }
    // `counts[b]` is now bucket b's end.
    if low_digit == 0 {
        // One level: each bucket is one key.
        for (key, (&start, &end)) in starts.iter().zip(&counts).enumerate() {
            if end > start {
                runs.push((key as u64, end));
            }
        }
        for (start, m) in blocks() {
            let words = &mut block[..m];
            for (w, &s) in words.iter_mut().zip(&scattered[start..start + m]) {
                *w = s as u64;
            }
            emit(words, &mut scattered[start..start + m]);
        }
        return Grouped {
            runs,
            identity: false,
            column: scattered,
        };
    }
    drop(block);
    let digit_mask = (1u64 << low_digit) - 1;
    let mut next = vec![0usize; 1 << low_digit];
    // one buffer as long as the largest bucket: each bucket's counting sort writes every
    // slot of its prefix, so nothing is cleared between buckets
    let largest = starts
        .iter()
        .zip(&counts)
        .map(|(&start, &end)| end - start)
        .max()
        .unwrap_or(0);
    let mut sorted = vec![0u64; largest];
    for (b, (&start, &end)) in starts.iter().zip(&counts).enumerate() {
        let bucket = &scattered[start..end];
        match *bucket {
            [] => continue,
            [w] => {
                let w = w as u64;
                push_run(&mut runs, w >> low_bits, end);
                emit(&[w], &mut scattered[start..end]);
                continue;
            }
            _ => {}
        }
        if per_key {
            // the bucket's keys start where the first pass counted them
            let heads = &mut key_counts[b << low_digit..(b + 1) << low_digit];
            for (d, &head) in heads.iter().enumerate() {
                let key_end = heads.get(d + 1).map_or(end, |&h| h as usize);
                if key_end > head as usize {
                    runs.push((((b as u64) << low_digit) | d as u64, key_end));
                }
            }
            let sorted = &mut sorted[..bucket.len()];
            for &w in bucket {
                let w = w as u64;
                let head = &mut heads[((w >> low_bits) & digit_mask) as usize];
                sorted[*head as usize - start] = w;
                *head += 1;
            }
            emit(sorted, &mut scattered[start..end]);
            continue;
        }
        for &w in bucket {
            next[((w as u64 >> low_bits) & digit_mask) as usize] += 1;
        }
        let mut at = 0usize;
        for (d, c) in next.iter_mut().enumerate() {
            let count = *c;
            *c = at;
            at += count;
            if count > 0 {
                runs.push((((b as u64) << low_digit) | d as u64, start + at));
            }
        }
        let sorted = &mut sorted[..bucket.len()];
        for &w in bucket {
            let w = w as u64;
            let slot = &mut next[((w >> low_bits) & digit_mask) as usize];
            sorted[*slot] = w;
            *slot += 1;
        }
        emit(sorted, &mut scattered[start..end]);
        next.fill(0);
    }
    Grouped {
        runs,
        identity: false,
        column: scattered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stable grouping by a comparison sort: the reference for [`group_packed`].
    fn reference(words: &[u64], low: u32) -> (Vec<u64>, Vec<(u64, usize)>) {
        let mut order: Vec<u64> = words.to_vec();
        order.sort_by_key(|&w| w >> low);
        let mut runs: Vec<(u64, usize)> = Vec::new();
        for (j, &w) in order.iter().enumerate() {
            match runs.last_mut() {
                Some((k, e)) if *k == w >> low => *e = j + 1,
                _ => runs.push((w >> low, j + 1)),
            }
        }
        (order, runs)
    }

    /// `group_packed` agrees with a stable comparison sort on the key: one level, two levels,
    /// sparse keys, already grouped keys, a single key, empty and one-point inputs.
    #[test]
    fn group_packed_is_a_stable_grouping_by_key() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let low = 24u32;
        // (range, n): dense keys of one level, of two levels with a counter per key (up to
        // 2^18 keys) and of two levels counted per bucket (2^19 + 3 keys, 140,000 points:
        // dense), and sparse keys
        let cases = [1u64, 2, 7, 2048, 2049, 100_000, 1 << 22, 1 << 36]
            .into_iter()
            .flat_map(|range| [0usize, 1, 2, 7, 1000, 30_000].map(|n| (range, n)))
            .chain([((1 << 19) + 3, 140_000)]);
        for (range, n) in cases {
            for sorted in [false, true] {
                // Position in bits 4.., a 4-bit payload below it.
                let mut keys: Vec<u64> = (0..n).map(|_| next() % range).collect();
                if sorted {
                    keys.sort_unstable();
                }
                let words: Vec<u64> = keys
                    .iter()
                    .zip(0u64..)
                    .map(|(&k, p)| (k << low) | (p << 4) | (next() & 15))
                    .collect();
                let mut out = Vec::with_capacity(n);
                let fill = |start: usize, o: &mut [u64]| {
                    let len = o.len();
                    o.copy_from_slice(&words[start..start + len]);
                };
                // the column holds each word's position (the bits above the payload)
                let g = group_packed(n, fill, low, range, |w, column| {
                    out.extend_from_slice(w);
                    for (c, &w) in column.iter_mut().zip(w) {
                        *c = ((w & ((1 << low) - 1)) >> 4) as i64;
                    }
                });
                let (expect, runs) = reference(&words, low);
                assert_eq!(out, expect, "range {range}, n {n}, sorted {sorted}");
                let positions: Vec<i64> = expect
                    .iter()
                    .map(|&w| ((w & ((1 << low) - 1)) >> 4) as i64)
                    .collect();
                assert_eq!(g.column, positions, "range {range}, n {n}, sorted {sorted}");
                assert_eq!(g.runs, runs, "range {range}, n {n}, sorted {sorted}");
                let grouped = keys.windows(2).all(|w| w[0] <= w[1]);
                assert_eq!(g.identity, grouped);
            }
        }
    }

    #[test]
    fn key_changes_marks_every_key_that_differs_from_the_one_before() {
        for n in [0usize, 1, 63, 64, 65, 128, 200] {
            let keys: Vec<u32> = (0..n as u32).map(|i| i / 3 + (i % 7 == 0) as u32).collect();
            for before in [0u32, 9] {
                let mut changes = vec![0u64; n.div_ceil(64)];
                key_changes(&keys, before, &mut changes);
                for i in 0..n {
                    let prev = if i == 0 { before } else { keys[i - 1] };
                    let bit = changes[i / 64] >> (i % 64) & 1 == 1;
                    assert_eq!(bit, keys[i] != prev, "n {n}, before {before}, point {i}");
                }
            }
        }
    }

    #[test]
    fn bits_counts_the_width_of_the_largest_value() {
        assert_eq!(bits(0), 0);
        assert_eq!(bits(1), 1);
        assert_eq!(bits(999), 10);
        assert_eq!(bits(1023), 10);
        assert_eq!(bits(1024), 11);
        assert_eq!(bits(u64::MAX), 64);
    }
}
