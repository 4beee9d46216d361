//! [`IndexedSet`]: an independent one-axis index array grouped by chunk (CSR).

use super::packed::{
    PackedLayout, RegularSplit, bits, group_packed, key_changes, monotone, pack_affine,
    split_affine_into, split_all, split_keys,
};
use super::{PlanError, Result, grid_err};
use crate::grid::{DimensionGrid, RegularGrid};
use crate::index::IndexArray;

/// The touched chunks of one storage dimension whose map is `offset + stride * a[x_k]`, an
/// index array varying over input axis `k` only, which no other map reads.
///
/// Compressed rows by chunk: row `r` owns points `pointer[r]..pointer[r+1]`; `local` holds
/// their chunk-local coordinates and `positions` their positions along axis `k` (relative to
/// the axis start), stable (request order) within a chunk. Repeated coordinates stay
/// distinct points. When the storage coordinates are already chunk-sorted, no sort is done
/// and `positions` is the identity (not stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedSet {
    dim: usize,
    input_axis: usize,
    chunk: Vec<i64>,
    chunk_start: Vec<i64>,
    chunk_extent: Vec<u64>,
    chunk_size: Vec<u64>,
    pointer: Vec<usize>,
    local: Vec<i64>,
    positions: Option<Vec<u32>>,
}

/// The values of an index array as one contiguous C-order slice.
pub(crate) fn contiguous(array: &IndexArray) -> std::borrow::Cow<'_, [i64]> {
    match array.as_array().as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(array.view().iter().copied().collect()),
    }
}

/// Checks `offset + stride * v` stays in i64 over `[min, max]` and returns the storage
/// `(min, max)`.
pub(crate) fn storage_range(
    dim: usize,
    offset: i64,
    stride: i64,
    vmin: i64,
    vmax: i64,
) -> Result<(i64, i64)> {
    let a = offset as i128 + stride as i128 * vmin as i128;
    let b = offset as i128 + stride as i128 * vmax as i128;
    match (i64::try_from(a.min(b)), i64::try_from(a.max(b))) {
        (Ok(lo), Ok(hi)) => Ok((lo, hi)),
        _ => Err(PlanError::Overflow(format!(
            "storage dimension {dim}: {offset} + {stride} * v for v in [{vmin}, {vmax}] leaves i64"
        ))),
    }
}

/// The stable grouping of points: `runs` lists `(key, end)` per distinct key in ascending
/// order (CSR ends); `order[j]` is the point at grouped position `j`, empty when the points
/// are already grouped (identity).
pub(crate) struct Grouping {
    pub(crate) order: Vec<u32>,
    pub(crate) runs: Vec<(u64, usize)>,
    /// True when the points were already grouped (no `emit` call, `order` empty).
    pub(crate) identity: bool,
}

fn runs_of_sorted(keys: impl Iterator<Item = u64>) -> Vec<(u64, usize)> {
    let mut runs: Vec<(u64, usize)> = Vec::new();
    for (j, k) in keys.enumerate() {
        match runs.last_mut() {
            Some((last, end)) if *last == k => *end = j + 1,
            _ => runs.push((k, j + 1)),
        }
    }
    runs
}

/// The most points one table may hold (positions are stored as `u32`).
pub(crate) fn check_points(n: usize, what: &dyn Fn() -> String) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(PlanError::Overflow(format!(
            "{} has {n} points; at most {} per table are supported",
            what(),
            u32::MAX
        )));
    }
    Ok(())
}

/// Groups points by `keys` (in `[0, range)`), stable within a key, calling `emit(p, j)` to
/// place point `p` at grouped position `j` (not called when already grouped): a counting
/// sort when `range` is O(n), else a sort of packed `(key, position)` words.
pub(crate) fn group_keys(
    keys: &[u32],
    range: u64,
    with_order: bool,
    mut emit: impl FnMut(usize, usize),
) -> Grouping {
    let n = keys.len();
    if keys.windows(2).all(|w| w[0] <= w[1]) {
        return Grouping {
            order: Vec::new(),
            runs: runs_of_sorted(keys.iter().map(|&k| k as u64)),
            identity: true,
        };
    }
    let mut order = if with_order {
        vec![0u32; n]
    } else {
        Vec::new()
    };
    if range as u128 <= (2 * n as u128).max(4096) {
        let mut next = vec![0u32; range as usize];
        for &k in keys {
            next[k as usize] += 1;
        }
        let mut runs = Vec::new();
        let mut acc = 0u32;
        for (k, c) in next.iter_mut().enumerate() {
            let count = *c;
            *c = acc;
            acc += count;
            if count > 0 {
                runs.push((k as u64, acc as usize));
            }
        }
        for (p, &k) in keys.iter().enumerate() {
            let slot = &mut next[k as usize];
            let j = *slot as usize;
            *slot += 1;
            if with_order {
                order[j] = p as u32;
            }
            emit(p, j);
        }
        return Grouping {
            order,
            runs,
            identity: false,
        };
    }
    let mut words: Vec<u64> = keys
        .iter()
        .zip(0u64..)
        .map(|(&k, p)| ((k as u64) << 32) | p)
        .collect();
    // Positions are unique, so an unstable sort on (key, position) is stable in key.
    words.sort_unstable();
    let runs = runs_of_sorted(words.iter().map(|&w| w >> 32));
    for (j, &w) in words.iter().enumerate() {
        let p = (w & 0xffff_ffff) as usize;
        if with_order {
            order[j] = p as u32;
        }
        emit(p, j);
    }
    Grouping {
        order,
        runs,
        identity: false,
    }
}

/// Groups points by their tuple of chunk ids (lexicographic), for id ranges too wide for
/// `u32` keys; `runs` keys are row numbers.
pub(crate) fn group_rows(ids: &[Vec<i64>], n: usize) -> Grouping {
    let cmp = |a: usize, b: usize| {
        ids.iter()
            .map(|c| c[a].cmp(&c[b]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by(|&a, &b| cmp(a as usize, b as usize).then(a.cmp(&b)));
    let mut runs: Vec<(u64, usize)> = Vec::new();
    for j in 0..n {
        if j > 0 && cmp(order[j - 1] as usize, order[j] as usize).is_eq() {
            if let Some(last) = runs.last_mut() {
                last.1 = j + 1;
            }
        } else {
            runs.push((runs.len() as u64, j + 1));
        }
    }
    Grouping {
        order,
        runs,
        identity: false,
    }
}

/// Division of 32-bit integers by an invariant divisor with a multiply and shifts
/// (Granlund–Montgomery, the "round-up" variant with an add-and-shift fix-up; exact for
/// every `u32` dividend). Branch-free (a divisor of 1 is magic 0 with no shifts; a power of
/// two is magic 1), so the chunk-key loops vectorise instead of dividing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DivU32 {
    magic: u32,
    /// The fix-up shift: 0 for a divisor of 1, else 1.
    shift1: u32,
    /// The final shift: ceil(log2 d) - 1 (0 for a divisor of 1).
    shift2: u32,
}

impl DivU32 {
    /// A divider for `d >= 1`.
    pub(crate) fn new(d: u32) -> Self {
        let d = d.max(1);
        if d == 1 {
            return DivU32 {
                magic: 0,
                shift1: 0,
                shift2: 0,
            };
        }
        let l = 32 - (d - 1).leading_zeros(); // ceil(log2 d), 1..=32
        let magic = (((1u128 << 32) * ((1u128 << l) - d as u128)) / d as u128 + 1) as u32;
        DivU32 {
            magic,
            shift1: 1,
            shift2: l - 1,
        }
    }

    /// `x / d`.
    #[inline(always)]
    pub(crate) fn div(&self, x: u32) -> u32 {
        let t = ((self.magic as u64 * x as u64) >> 32) as u32;
        (t + ((x - t) >> self.shift1)) >> self.shift2
    }
}

/// Sets `keys[i] = combine(keys[i], chunk(st(values[i])) - idmin)` for every value
/// (vectorised: a 32-bit division fast path on regular grids, blocks of the
/// grid's vectorised lookup otherwise). The caller guarantees the id range fits `u32`.
pub(crate) fn chunk_keys<S, F>(
    grid: &dyn DimensionGrid,
    values: &[i64],
    st: S,
    idmin: i64,
    keys: &mut [u32],
    combine: F,
) -> std::result::Result<(), crate::grid::GridError>
where
    S: Fn(i64) -> i64,
    F: Fn(u32, u32) -> u32,
{
    // All coordinates lie in [base, hi) (checked by the caller's probes).
    if let Some(split) = RegularSplit::new(grid, idmin)? {
        split_keys(split, values, &st, keys, &combine);
        return Ok(());
    }
    if let Some(g) = grid.as_regular() {
        let base = g.chunk_offset(idmin)?;
        let size = g.size();
        let (lo, hi) = g.region();
        let span = hi as i128 - base as i128;
        if lo <= base && span <= i64::MAX as i128 && size > 0 {
            for (k, &v) in keys.iter_mut().zip(values) {
                *k = combine(*k, (st(v).wrapping_sub(base) as u64 / size) as u32);
            }
            return Ok(());
        }
    }
    let mut sbuf = vec![0i64; 4096.min(values.len())];
    let mut ibuf = vec![0i64; sbuf.len()];
    for (vals, ks) in values.chunks(4096).zip(keys.chunks_mut(4096)) {
        let m = vals.len();
        for (o, &v) in sbuf[..m].iter_mut().zip(vals) {
            *o = st(v);
        }
        grid.indices_to_chunks(&sbuf[..m], &mut ibuf[..m])?;
        for (k, &c) in ks.iter_mut().zip(&ibuf[..m]) {
            *k = combine(*k, c.wrapping_sub(idmin) as u32);
        }
    }
    Ok(())
}

/// The regular-grid fast path of [`chunk_keys`] that also yields each point's chunk-local
/// coordinate (the division remainder), so no later pass subtracts chunk starts. Returns
/// `false` (nothing written) when the grid is not regular or too wide for 32-bit math.
pub(crate) fn regular_keys_and_local<S, F>(
    grid: &dyn DimensionGrid,
    values: &[i64],
    st: S,
    idmin: i64,
    keys: &mut [u32],
    combine: F,
    local: &mut Vec<u32>,
) -> std::result::Result<bool, crate::grid::GridError>
where
    S: Fn(i64) -> i64,
    F: Fn(u32, u32) -> u32,
{
    let Some(split) = RegularSplit::new(grid, idmin)? else {
        return Ok(false);
    };
    local.clear();
    local.reserve_exact(values.len());
    split_all(split, values, &st, keys, &combine, local);
    Ok(true)
}

impl IndexedSet {
    pub(crate) fn build(
        dim: usize,
        input_axis: usize,
        array: &IndexArray,
        offset: i64,
        stride: i64,
        grid: &dyn DimensionGrid,
    ) -> Result<Self> {
        let values = contiguous(array);
        let values: &[i64] = &values;
        let n = values.len();
        let mut s = IndexedSet {
            dim,
            input_axis,
            chunk: vec![],
            chunk_start: vec![],
            chunk_extent: vec![],
            chunk_size: vec![],
            pointer: vec![0],
            local: Vec::new(),
            positions: None,
        };
        if n == 0 {
            return Ok(s);
        }
        // Chunk-sorted input (storage non-decreasing) needs no min/max pass, no keys and no
        // sort: rows in one pass (`build_sorted`).
        let sorted = monotone(values, stride > 0);
        // (the array's range is worked out once, usually by the selection's bounds check)
        let (vmin, vmax) = match (sorted, values.first(), values.last()) {
            (true, Some(&a), Some(&b)) => (a.min(b), a.max(b)),
            _ => array.min_max().unwrap_or((i64::MAX, i64::MIN)),
        };
        let (smin, smax) = storage_range(dim, offset, stride, vmin, vmax)?;
        let e = grid_err(dim);
        // Probe the extremes so an out-of-grid error names the coordinate.
        grid.index_to_chunk(smin).map_err(&e)?;
        grid.index_to_chunk(smax).map_err(&e)?;
        if sorted {
            s.build_sorted(values, offset, stride, smin, grid)?;
            return Ok(s);
        }
        // Wrapping arithmetic is exact: every true result lies in [smin, smax] ⊂ i64.
        let st = move |v: i64| offset.wrapping_add(stride.wrapping_mul(v));
        // Chunk ids are monotone in the coordinate: the probes give the id range.
        let idmin = grid.index_to_chunk(smin).map_err(&e)?;
        let idmax = grid.index_to_chunk(smax).map_err(&e)?;
        let range = (idmax as i128 - idmin as i128 + 1) as u128;
        check_points(n, &|| format!("the index array of storage dimension {dim}"))?;
        let g = if range <= u32::MAX as u128 {
            if let Some(regular) = grid.as_regular()
                && s.build_packed(values, (offset, stride), range as u64, idmin, regular)?
            {
                return Ok(s);
            }
            let mut keys: Vec<u32> = vec![0; n];
            chunk_keys(grid, values, st, idmin, &mut keys, |_, d| d).map_err(&e)?;
            if keys.windows(2).all(|w| w[0] <= w[1]) {
                // Chunk-sorted keys (unsorted values within chunks): identity order.
                group_keys(&keys, range as u64, false, |_, _| {})
            } else {
                let mut local = vec![0i64; n];
                let g = group_keys(&keys, range as u64, true, |p, j| local[j] = st(values[p]));
                s.local = local;
                g
            }
        } else {
            let mut ids = vec![0i64; n];
            let storage: Vec<i64> = values.iter().map(|&v| st(v)).collect();
            grid.indices_to_chunks(&storage, &mut ids).map_err(&e)?;
            let mut g = group_rows(std::slice::from_ref(&ids), n);
            s.local = g.order.iter().map(|&p| storage[p as usize]).collect();
            // Row keys of the fallback are row numbers: turn them into id offsets.
            for r in g.runs.iter_mut() {
                let p = g.order[r.1 - 1] as usize;
                r.0 = (ids[p] as i128 - idmin as i128) as u64;
            }
            g
        };
        if g.identity {
            s.local = values.iter().map(|&v| st(v)).collect();
        } else {
            s.positions = Some(g.order);
        }
        match grid.as_regular() {
            Some(r) => s.push_rows(&g.runs, idmin, r)?,
            None => s.push_rows(&g.runs, idmin, grid)?,
        }
        Ok(s)
    }

    /// Unsorted values on a regular grid: each point's chunk key, chunk-local coordinate and
    /// position packed into one word and grouped by radix sort (see [`super::packed`]).
    /// Returns `false` (nothing built) when the grid needs more than 32-bit arithmetic or the
    /// three do not fit 64 bits.
    fn build_packed(
        &mut self,
        values: &[i64],
        (offset, stride): (i64, i64),
        range: u64,
        idmin: i64,
        grid: &RegularGrid,
    ) -> Result<bool> {
        let Some(split) = RegularSplit::new(grid, idmin).map_err(grid_err(self.dim))? else {
            return Ok(false);
        };
        let n = values.len();
        let key_bits = bits(range - 1).max(1);
        let local_bits = bits(split.size() as u64 - 1);
        let pos_bits = bits(n as u64 - 1);
        if key_bits + local_bits + pos_bits > 64 {
            return Ok(false);
        }
        // [key | position | local]: whole words order by key, then position.
        let low = local_bits + pos_bits;
        let layout = PackedLayout { low, local_bits };
        let fill = move |start: usize, out: &mut [u64]| {
            pack_affine(
                split,
                (offset, stride),
                &values[start..],
                start as u64,
                layout,
                out,
            );
        };
        let (local_mask, pos_mask) = ((1u64 << local_bits) - 1, (1u64 << pos_bits) - 1);
        let mut positions: Vec<u32> = Vec::with_capacity(n);
        let grouped = group_packed(n, fill, low, range, |words, local| {
            for (l, &w) in local.iter_mut().zip(words) {
                *l = (w & local_mask) as i64;
            }
            positions.extend(words.iter().map(|&w| ((w >> local_bits) & pos_mask) as u32));
        });
        self.local = grouped.column;
        // Chunk-sorted keys (unsorted values within chunks) keep the identity order.
        if !grouped.identity {
            self.positions = Some(positions);
        }
        // The local coordinates are already relative to the chunk's start.
        self.push_regular_runs(&grouped.runs, idmin, grid)?;
        Ok(true)
    }

    /// Storage-sorted values (non-decreasing `offset + stride * v`; `smin` the least, probed
    /// in the grid): rows in one linear pass, one grid lookup per touched chunk, no sort and no
    /// positions (identity). A regular grid within 32-bit reach of the first touched chunk
    /// takes the blocked path ([`Self::sorted_rows_split`]); a wider one is looked up
    /// through its own (inlined) methods, with the chunk id from a 64-bit division.
    fn build_sorted(
        &mut self,
        values: &[i64],
        offset: i64,
        stride: i64,
        smin: i64,
        grid: &dyn DimensionGrid,
    ) -> Result<()> {
        let e = grid_err(self.dim);
        if let Some(g) = grid.as_regular() {
            let (lo, hi) = g.region();
            let size = g.size();
            let idmin = g.index_to_chunk(smin).map_err(&e)?;
            if let Some(split) = RegularSplit::new(grid, idmin).map_err(&e)? {
                return self.sorted_rows_split(values, (offset, stride), split, idmin, g);
            }
            let base = g.chunk_offset(idmin).map_err(&e)?;
            let span = hi as i128 - base as i128;
            // Every coordinate lies in [smin, smax] ⊂ [lo, hi) (probed): `v - base` is exact
            // in u64 when base >= lo.
            if lo <= base && span <= u64::MAX as i128 && size > 0 {
                let find = |v: i64| Ok(idmin + (v.wrapping_sub(base) as u64 / size) as i64);
                return self.sorted_rows(values, offset, stride, find, g);
            }
        }
        let find = |v: i64| grid.index_to_chunk(v).map_err(&e);
        self.sorted_rows(values, offset, stride, find, grid)
    }

    /// Storage-sorted values on a regular grid within 32-bit reach of the first touched chunk
    /// (id `idmin`): the points' chunk keys and chunk-local coordinates a block at a time in
    /// a vectorised pass ([`split_affine_into`]; the keys in a small reused buffer, the local
    /// coordinates straight into the set's), then one row per run of equal keys, whose
    /// largest local coordinate the grid confirms lies in the chunk's data.
    fn sorted_rows_split(
        &mut self,
        values: &[i64],
        affine: (i64, i64),
        split: RegularSplit,
        idmin: i64,
        grid: &RegularGrid,
    ) -> Result<()> {
        const BLOCK: usize = 4096;
        let n = values.len();
        self.local.reserve_exact(n);
        // Keys never decrease (storage-sorted points): at most one row per key between the
        // first and the last.
        let key_of = |v: i64| split.split_affine(affine.0, affine.1, v).0;
        let span = key_of(values[n - 1]).wrapping_sub(key_of(values[0])) as usize;
        self.reserve_rows(n.min(span.saturating_add(1)));
        let mut keys = vec![0u32; BLOCK.min(n)];
        let mut changes = vec![0u64; BLOCK.min(n).div_ceil(64)];
        // The open row: its key and its chunk's data length.
        let mut open: Option<(u32, i64)> = None;
        for (b, block) in values.chunks(BLOCK).enumerate() {
            let at = b * BLOCK;
            let keys = &mut keys[..block.len()];
            split_affine_into(split, affine, block, keys, &mut self.local);
            // Rows start where the key changes (the first point always starts one).
            let before = open.map_or(!keys[0], |(k, _)| k);
            let changes = &mut changes[..keys.len().div_ceil(64)];
            key_changes(keys, before, changes);
            for (w, &bits) in changes.iter().enumerate() {
                let mut bits = bits;
                while bits != 0 {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if let Some((k, len)) = open {
                        self.close_sorted_row(idmin + k as i64, len, at + i)?;
                    }
                    let key = keys[i];
                    let (start, end) = self.push_chunk(idmin + key as i64, grid)?;
                    open = Some((key, end - start));
                }
            }
        }
        if let Some((k, len)) = open {
            self.close_sorted_row(idmin + k as i64, len, n)?;
        }
        Ok(())
    }

    /// Ends the last row at point `end`, once the grid confirms its largest (last) local
    /// coordinate lies in its chunk's data (`len` cells of chunk `c`).
    fn close_sorted_row(&mut self, c: i64, len: i64, end: usize) -> Result<()> {
        let top = self.local[end - 1];
        if top >= len {
            return Err(PlanError::InconsistentGrid {
                dim: self.dim,
                message: format!("local coordinate {top} past the {len} cells of chunk {c}"),
            });
        }
        self.pointer.push(end);
        Ok(())
    }

    /// The rows of storage-sorted values: `find(v)` names the chunk of coordinate `v` (the
    /// grid then confirms that it holds `v`: a wrong id is an [`PlanError::InconsistentGrid`]
    /// or a grid error, never a wrong plan).
    fn sorted_rows<G: DimensionGrid + ?Sized>(
        &mut self,
        values: &[i64],
        offset: i64,
        stride: i64,
        find: impl Fn(i64) -> Result<i64>,
        grid: &G,
    ) -> Result<()> {
        if stride == 1 {
            self.sorted_rows_st(values, |v| v.wrapping_add(offset), find, grid)
        } else {
            let st = move |v: i64| offset.wrapping_add(stride.wrapping_mul(v));
            self.sorted_rows_st(values, st, find, grid)
        }
    }

    fn sorted_rows_st<G: DimensionGrid + ?Sized>(
        &mut self,
        values: &[i64],
        st: impl Fn(i64) -> i64,
        find: impl Fn(i64) -> Result<i64>,
        grid: &G,
    ) -> Result<()> {
        let dim = self.dim;
        let e = grid_err(dim);
        let n = values.len();
        self.local.reserve_exact(n);
        // Rows: at most one per point and one per chunk between the extremes' (when the
        // grid is regular): reserved once, not regrown (and copied) row by row.
        let rows = match grid.as_regular() {
            Some(g) if g.size() > 0 => {
                let (smin, smax) = (st(values[0]), st(values[n - 1]));
                let span = (smax as i128 - smin as i128) / g.size() as i128 + 2;
                (n as i128).min(span) as usize
            }
            _ => 0,
        };
        self.reserve_rows(rows);
        let mut i = 0usize;
        while i < n {
            let v = st(values[i]);
            let c = find(v)?;
            let (start, ext, size) = grid.chunk_span(c).map_err(&e)?;
            let end = i64::try_from(start as i128 + ext as i128).unwrap_or(i64::MAX);
            if v < start || v >= end {
                return Err(PlanError::InconsistentGrid {
                    dim,
                    message: format!("coordinate {v} maps to chunk {c}, data [{start}, {end})"),
                });
            }
            self.chunk.push(c);
            self.chunk_start.push(start);
            self.chunk_extent.push(ext);
            self.chunk_size.push(size);
            // The row runs to the first coordinate at or past the chunk's end (sorted input).
            let mut j = i + 1;
            self.local.push(v - start);
            while j < n {
                let x = st(values[j]);
                if x >= end {
                    break;
                }
                self.local.push(x - start);
                j += 1;
            }
            self.pointer.push(j);
            i = j;
        }
        Ok(())
    }

    /// One row per run of grouped points (`(key, end)`, chunk id `idmin + key`); subtracts
    /// each chunk's start from the row's storage coordinates.
    fn push_rows<G: DimensionGrid + ?Sized>(
        &mut self,
        runs: &[(u64, usize)],
        idmin: i64,
        grid: &G,
    ) -> Result<()> {
        self.reserve_rows(runs.len());
        let mut j0 = 0usize;
        for &(key, end) in runs {
            let c = (idmin as i128 + key as i128) as i64;
            let (start, _) = self.push_chunk(c, grid)?;
            for v in &mut self.local[j0..end] {
                *v -= start;
            }
            self.pointer.push(end);
            j0 = end;
        }
        Ok(())
    }

    /// One row per run of grouped points (`(key, end)` in ascending key order, chunk id
    /// `idmin + key`) on a regular grid, column by column. The caller's probes put every
    /// touched chunk inside the grid, the first run's chunk being `idmin` (key 0: the least
    /// coordinate is a point). The first and last touched chunks are looked up (their
    /// offsets checked to fit `i64`); every chunk between lies inside the grid at a whole
    /// chunk's extent, its start following from the first's. Only the last touched chunk
    /// can be cut short by the grid's end (it holds the greatest coordinate, below it).
    fn push_regular_runs(
        &mut self,
        runs: &[(u64, usize)],
        idmin: i64,
        grid: &RegularGrid,
    ) -> Result<()> {
        let Some(&(last_key, _)) = runs.last() else {
            return Ok(());
        };
        let e = grid_err(self.dim);
        let (first_start, _, size) = grid.chunk_span(idmin).map_err(&e)?;
        let last = (idmin as i128 + last_key as i128) as i64;
        let (_, last_extent, _) = grid.chunk_span(last).map_err(&e)?;
        debug_assert_eq!(runs[0].0, 0, "the first run is the first touched chunk");
        debug_assert!(last_extent > 0, "the last touched chunk holds a point");
        self.reserve_rows(runs.len());
        // exact: each start lies between the first's and the last's, both in i64
        let step = size as i64;
        self.chunk
            .extend(runs.iter().map(|&(key, _)| idmin.wrapping_add(key as i64)));
        self.chunk_start.extend(
            runs.iter()
                .map(|&(key, _)| first_start.wrapping_add((key as i64).wrapping_mul(step))),
        );
        self.chunk_extent
            .extend(std::iter::repeat_n(size, runs.len() - 1).chain([last_extent]));
        self.chunk_size
            .extend(std::iter::repeat_n(size, runs.len()));
        self.pointer.extend(runs.iter().map(|&(_, end)| end));
        Ok(())
    }

    /// Reserves room for `rows` more rows (once, instead of regrowing row by row).
    fn reserve_rows(&mut self, rows: usize) {
        self.chunk.reserve_exact(rows);
        self.chunk_start.reserve_exact(rows);
        self.chunk_extent.reserve_exact(rows);
        self.chunk_size.reserve_exact(rows);
        self.pointer.reserve_exact(rows);
    }

    fn push_chunk<G: DimensionGrid + ?Sized>(&mut self, c: i64, grid: &G) -> Result<(i64, i64)> {
        let e = grid_err(self.dim);
        let (start, ext, size) = grid.chunk_span(c).map_err(&e)?;
        self.chunk.push(c);
        self.chunk_start.push(start);
        self.chunk_extent.push(ext);
        self.chunk_size.push(size);
        Ok((
            start,
            i64::try_from(start as i128 + ext as i128).unwrap_or(i64::MAX),
        ))
    }

    /// The storage dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The input axis the array varies over.
    pub fn input_axis(&self) -> usize {
        self.input_axis
    }

    /// Number of rows (touched chunks).
    pub fn len(&self) -> usize {
        self.chunk.len()
    }

    /// True if no row.
    pub fn is_empty(&self) -> bool {
        self.chunk.is_empty()
    }

    /// Chunk id per row (ascending).
    pub fn chunks(&self) -> &[i64] {
        &self.chunk
    }

    /// Global start of each row's chunk.
    pub fn chunk_starts(&self) -> &[i64] {
        &self.chunk_start
    }

    /// Valid (clipped) length of each row's chunk.
    pub fn chunk_extents(&self) -> &[u64] {
        &self.chunk_extent
    }

    /// Declared length of each row's chunk.
    pub fn chunk_sizes(&self) -> &[u64] {
        &self.chunk_size
    }

    /// CSR pointer: row `r` owns points `pointer[r]..pointer[r + 1]`.
    pub fn pointer(&self) -> &[usize] {
        &self.pointer
    }

    /// Chunk-local coordinates of all points, grouped by row.
    pub fn local(&self) -> &[i64] {
        &self.local
    }

    /// Chunk-local coordinates of row `r`'s points.
    pub fn local_of(&self, r: usize) -> &[i64] {
        &self.local[self.pointer[r]..self.pointer[r + 1]]
    }

    /// Positions along the input axis, grouped by row; `None` means the identity
    /// (already chunk-sorted input).
    pub fn positions(&self) -> Option<&[u32]> {
        self.positions.as_deref()
    }

    /// Position along the input axis of grouped point `j`.
    pub fn position(&self, j: usize) -> usize {
        self.positions.as_ref().map_or(j, |p| p[j] as usize)
    }
}
