//! Copy kernels between a chunk buffer and the result buffer, driven by a [`ChunkOp`].
//!
//! A chunk operation is a product of loop axes; each axis moves by a fixed element step in
//! the chunk and in the result (a run) or visits a list of coordinates (points). The kernel
//! merges axes that are contiguous in both buffers and copies whole runs with `memcpy`, or
//! as constant-length copies where every run has one common small length (`copy_runs!`);
//! every offset range is checked against both buffers before any byte moves.

use crate::codec::bounds::fill_repeated;
use crate::index::shape::c_strides;
use crate::plan::{AxisDest, AxisSource, ChunkOp};

use super::error::{ArrayError, Result};
use super::stream_store;

/// Offsets visited by one loop axis, in elements.
#[derive(Debug, Clone)]
enum Steps {
    /// `count` steps: chunk offset `src + i * src_step`, result offset `dst + i * dst_step`.
    Affine {
        count: usize,
        src: i64,
        src_step: i64,
        dst: i64,
        dst_step: i64,
    },
    /// Explicit `(chunk offset, result offset)` pairs.
    List(Vec<(i64, i64)>),
}

impl Steps {
    fn count(&self) -> usize {
        match self {
            Steps::Affine { count, .. } => *count,
            Steps::List(v) => v.len(),
        }
    }

    /// `(min, max)` of the chunk and of the result offsets (for a non-empty axis).
    fn bounds(&self) -> ((i64, i64), (i64, i64)) {
        match self {
            Steps::Affine {
                count,
                src,
                src_step,
                dst,
                dst_step,
            } => {
                let last = *count as i64 - 1;
                let (s0, s1) = (*src, src + src_step * last);
                let (d0, d1) = (*dst, dst + dst_step * last);
                ((s0.min(s1), s0.max(s1)), (d0.min(d1), d0.max(d1)))
            }
            Steps::List(v) => {
                let smin = v.iter().map(|p| p.0).min().unwrap_or(0);
                let smax = v.iter().map(|p| p.0).max().unwrap_or(0);
                let dmin = v.iter().map(|p| p.1).min().unwrap_or(0);
                let dmax = v.iter().map(|p| p.1).max().unwrap_or(0);
                ((smin, smax), (dmin, dmax))
            }
        }
    }
}

/// Evaluates `$body` with `$len` a constant equal to `$run` where `$run` (bytes) is a power
/// of two from 1 to 256, one instantiation per length, so that copies of that length
/// compile to a few vector moves rather than a call into `memcpy`; else `$other`.
macro_rules! with_run_len {
    ($run:expr, |$len:ident| $body:expr, else $other:expr) => {
        with_run_len!(@lengths $run, $len, $body, $other, [1, 2, 4, 8, 16, 32, 64, 128, 256])
    };
    (@lengths $run:expr, $len:ident, $body:expr, $other:expr, [$($n:literal),*]) => {
        match $run {
            $($n => {
                const $len: usize = $n;
                $body
            })*
            _ => $other,
        }
    };
}

/// Walks `kernel`'s runs (see [`Kernel::walk`]) from chunk offset `kernel.base` and result
/// offset `dst` (elements), calling `$copy(chunk_byte, result_byte, run_bytes)` for each.
/// `$run` is every run's length in bytes ([`Kernel::run_bytes`]), compiled in as a
/// constant where `with_run_len!` takes it (a whole-array write copies 4 Mi runs of 64
/// bytes).
macro_rules! copy_runs {
    ($kernel:expr, $run:expr, $dst:expr, $elem:expr, |$s:ident, $d:ident, $n:ident| $copy:expr) => {{
        let (kernel, elem): (&Kernel, usize) = (&$kernel, $elem);
        with_run_len!(
            $run,
            |LEN| kernel.walk(0, kernel.base, $dst, &mut |s, d, n| {
                debug_assert_eq!(n * elem, LEN);
                let ($s, $d, $n) = (s as usize * elem, d as usize * elem, LEN);
                $copy
            }),
            else kernel.walk(0, kernel.base, $dst, &mut |s, d, n| {
                let ($s, $d, $n) = (s as usize * elem, d as usize * elem, n * elem);
                $copy
            })
        )
    }};
}

/// A chunk operation compiled to element offsets, ready to copy in either direction.
#[derive(Debug, Clone)]
pub(crate) struct Kernel {
    base: i64,
    axes: Vec<Steps>,
}

impl Kernel {
    /// Compiles `op` for a chunk buffer of `op.chunk_shape` and a result buffer of
    /// `op.result_shape`, both C order.
    pub(crate) fn new(op: &ChunkOp) -> Result<Kernel> {
        let cs = c_strides(&op.chunk_shape);
        let rs = c_strides(&op.result_shape);
        let rank = op.chunk_shape.len();
        let mut set_by_loop = vec![false; rank];
        let mut axes = Vec::with_capacity(op.axes.len());
        let bad = |what: String| ArrayError::Internal(format!("chunk operation: {what}"));
        for a in &op.axes {
            let count = usize::try_from(a.count).map_err(|_| bad("loop too long".into()))?;
            let src_affine = match &a.source {
                AxisSource::Run { dim: None, .. } => Some((0, 0)),
                AxisSource::Run {
                    dim: Some(d),
                    start,
                    stride,
                } => {
                    let s = *cs.get(*d).ok_or_else(|| bad(format!("dimension {d}")))?;
                    *set_by_loop
                        .get_mut(*d)
                        .ok_or_else(|| bad(format!("dimension {d}")))? = true;
                    Some((start * s, stride * s))
                }
                AxisSource::Line {
                    dims,
                    starts,
                    strides,
                } => {
                    // An affine diagonal: several dimensions move together, still one
                    // element step per loop step.
                    for &d in dims {
                        *set_by_loop
                            .get_mut(d)
                            .ok_or_else(|| bad(format!("dimension {d}")))? = true;
                    }
                    Some(line_affine(dims, starts, strides, &cs))
                }
                AxisSource::Points { dims, .. } => {
                    for &d in dims {
                        *set_by_loop
                            .get_mut(d)
                            .ok_or_else(|| bad(format!("dimension {d}")))? = true;
                    }
                    None
                }
            };
            let dst_affine = match &a.dest {
                AxisDest::Run {
                    axis,
                    start,
                    stride,
                } => {
                    let s = *rs.get(*axis).ok_or_else(|| bad(format!("axis {axis}")))?;
                    Some((start * s, stride * s))
                }
                AxisDest::Points { axes, .. } => {
                    if let Some(axis) = axes.iter().find(|&&axis| axis >= rs.len()) {
                        return Err(bad(format!("axis {axis}")));
                    }
                    None
                }
            };
            let steps = match (src_affine, dst_affine) {
                (Some((src, src_step)), Some((dst, dst_step))) => Steps::Affine {
                    count,
                    src,
                    src_step,
                    dst,
                    dst_step,
                },
                _ => {
                    // both offsets of each step written into one list, no list per side
                    let mut pairs = vec![(0i64, 0i64); count];
                    source_offsets(&a.source, &cs, pairs.iter_mut().map(|p| &mut p.0))?;
                    dest_offsets(&a.dest, &rs, pairs.iter_mut().map(|p| &mut p.1))?;
                    Steps::List(pairs)
                }
            };
            axes.push(steps);
        }
        let base: i64 = (0..rank)
            .filter(|&d| !set_by_loop[d])
            .map(|d| op.base_local.get(d).copied().unwrap_or(0) * cs[d])
            .sum();
        let mut k = Kernel { base, axes };
        k.merge_contiguous();
        Ok(k)
    }

    /// Merges neighbouring affine axes that are contiguous in both buffers, so whole blocks
    /// (e.g. complete rows or a whole chunk) copy as one run.
    fn merge_contiguous(&mut self) {
        let mut i = self.axes.len();
        while i >= 2 {
            i -= 1;
            let (outer, inner) = (&self.axes[i - 1], &self.axes[i]);
            if let (
                Steps::Affine {
                    count: oc,
                    src: os,
                    src_step: oss,
                    dst: od,
                    dst_step: ods,
                },
                Steps::Affine {
                    count: ic,
                    src: is,
                    src_step: iss,
                    dst: id,
                    dst_step: ids,
                },
            ) = (outer, inner)
                && *iss == 1
                && *ids == 1
                && *oss == *ic as i64
                && *ods == *ic as i64
            {
                let merged = Steps::Affine {
                    count: oc * ic,
                    src: os + is,
                    src_step: 1,
                    dst: od + id,
                    dst_step: 1,
                };
                self.axes[i - 1] = merged;
                self.axes.remove(i);
            }
        }
    }

    /// Checks that every offset lies in `[0, src_len)` and, shifted by `-dst_start`, in
    /// `[0, dst_len)` (elements).
    fn check(&self, src_len: usize, dst_start: usize, dst_len: usize) -> Result<()> {
        if self.axes.iter().any(|a| a.count() == 0) {
            return Ok(());
        }
        let (mut smin, mut smax, mut dmin, mut dmax) = (self.base, self.base, 0i64, 0i64);
        for a in &self.axes {
            let ((s0, s1), (d0, d1)) = a.bounds();
            smin += s0;
            smax += s1;
            dmin += d0;
            dmax += d1;
        }
        let (dmin, dmax) = (dmin - dst_start as i64, dmax - dst_start as i64);
        if smin < 0 || smax >= src_len as i64 || dmin < 0 || dmax >= dst_len as i64 {
            return Err(ArrayError::Internal(format!(
                "chunk operation reaches chunk offsets [{smin}, {smax}] of {src_len} and \
                 result offsets [{dmin}, {dmax}] of {dst_len} (piece at {dst_start})"
            )));
        }
        Ok(())
    }

    /// `[min, max]` result offsets (elements) the kernel writes; `None` when it writes
    /// nothing.
    pub(crate) fn dest_bounds(&self) -> Option<(i64, i64)> {
        if self.axes.iter().any(|a| a.count() == 0) {
            return None;
        }
        let (mut dmin, mut dmax) = (0i64, 0i64);
        for a in &self.axes {
            let (_, (d0, d1)) = a.bounds();
            dmin += d0;
            dmax += d1;
        }
        Some((dmin, dmax))
    }

    /// Copies chunk cells into `piece`, the part of the result that starts at element
    /// `start` (every cell of the operation must lie inside the piece).
    pub(crate) fn gather_into_piece(
        &self,
        chunk: &[u8],
        piece: &mut [u8],
        start: usize,
        elem: usize,
    ) -> Result<()> {
        self.check(chunk.len() / elem, start, piece.len() / elem)?;
        let run = self.run_bytes(elem);
        copy_runs!(self, run, -(start as i64), elem, |s, d, n| piece[d..d + n]
            .copy_from_slice(&chunk[s..s + n]));
        Ok(())
    }

    /// Whether `next` continues every row of this operation in the result: both are loops
    /// of runs (the innermost axis contiguous in chunk and result) over the same outer
    /// result offsets, and each of `next`'s runs starts in the result where this one's
    /// ends (two x-neighbouring inner chunks of a box). Such operations copy as one
    /// ([`gather_rows_streaming`](Self::gather_rows_streaming)), row by row where
    /// per-chunk copies go chunk by chunk: the same writes in another order, which only
    /// matters where a cell is written twice, and the operations of a plan write each cell
    /// once (cells written twice come from point lists, which never chain). The chunk
    /// offsets may differ.
    pub(crate) fn continued_by(&self, next: &Kernel) -> bool {
        let (Some((last, outer)), Some((next_last, next_outer))) =
            (self.axes.split_last(), next.axes.split_last())
        else {
            return false;
        };
        let same_outer = outer.len() == next_outer.len()
            && outer.iter().zip(next_outer).all(|pair| match pair {
                (
                    Steps::Affine {
                        count: c0,
                        dst: d0,
                        dst_step: ds0,
                        ..
                    },
                    Steps::Affine {
                        count: c1,
                        dst: d1,
                        dst_step: ds1,
                        ..
                    },
                ) => c0 == c1 && d0 == d1 && ds0 == ds1,
                _ => false,
            });
        match (last, next_last) {
            (
                Steps::Affine {
                    count,
                    src_step: 1,
                    dst,
                    dst_step: 1,
                    ..
                },
                Steps::Affine {
                    count: next_count,
                    src_step: 1,
                    dst: next_dst,
                    dst_step: 1,
                    ..
                },
            ) => same_outer && *count > 0 && *next_count > 0 && *next_dst == dst + *count as i64,
            _ => false,
        }
    }

    /// Whether the operation's rows can be copied by
    /// [`gather_rows_streaming`](Self::gather_rows_streaming): loops of runs whose rows
    /// take at most [`MAX_ROW_BYTES`].
    pub(crate) fn streams_rows(&self, elem: usize) -> bool {
        let Some((last, outer)) = self.axes.split_last() else {
            return false;
        };
        matches!(
            last,
            Steps::Affine {
                src_step: 1,
                dst_step: 1,
                ..
            }
        ) && outer.iter().all(|a| matches!(a, Steps::Affine { .. }))
            && self.row_bytes(elem) <= MAX_ROW_BYTES
    }

    /// Bytes of one of the operation's rows: its innermost run (`usize::MAX` for points).
    pub(crate) fn row_bytes(&self, elem: usize) -> usize {
        match self.axes.last() {
            Some(Steps::Affine { count, .. }) => count.saturating_mul(elem),
            _ => usize::MAX,
        }
    }

    /// Copies the cells of `kernels` (each [`continued_by`](Self::continued_by) the next,
    /// at most [`MAX_ROW_CHAIN`], each [`streams_rows`](Self::streams_rows)) from `chunks`
    /// (one decoded chunk each) into `piece`, the part of the result starting at element
    /// `start`, a result row at a time: the row's runs are gathered into a buffer on the
    /// stack (rows of at most [`MAX_ROW_BYTES`]) and its whole 64-byte lines stored with
    /// streaming stores ([`stream_store::copy_streaming_keeping_tail`]). A row's bytes from
    /// its last line boundary on wait for the next row: where that row starts right after
    /// them (when the chain spans the result's whole width, so that its rows follow each
    /// other), it continues their line, and whole lines are streamed. A result that is not
    /// 64-byte aligned (as `malloc` returns large buffers) thus costs one line stored in
    /// part per run of adjacent rows of a chain, not one per row; the bytes before a row's
    /// first line boundary, and any waiting when the next row does not follow or the chain
    /// ends, are stored as usual. The chain is checked to be one, and every kernel
    /// against its chunk and the piece, as [`gather_into_piece`](Self::gather_into_piece)
    /// checks it, before any byte moves. The caller fences
    /// ([`stream_store::FenceOnDrop`]) before the result is read elsewhere.
    pub(crate) fn gather_rows_streaming(
        kernels: &[&Kernel],
        chunks: &[&[u8]],
        piece: &mut [u8],
        start: usize,
        elem: usize,
    ) -> Result<()> {
        let bad = |what: &str| ArrayError::Internal(format!("a streamed row copy: {what}"));
        if kernels.is_empty() || kernels.len() != chunks.len() || kernels.len() > MAX_ROW_CHAIN {
            return Err(bad("no or too many operations"));
        }
        if elem == 0 || !kernels.iter().all(|k| k.streams_rows(elem)) {
            return Err(bad("an operation that is no loop of short runs"));
        }
        if kernels.windows(2).any(|w| !w[0].continued_by(w[1])) {
            return Err(bad("operations that do not continue each other's rows"));
        }
        // each at most MAX_ROW_BYTES (streams_rows), at most MAX_ROW_CHAIN of them
        let row: usize = kernels.iter().map(|k| k.row_bytes(elem)).sum();
        if row > MAX_ROW_BYTES {
            return Err(bad("rows longer than the staging buffer"));
        }
        for (k, chunk) in kernels.iter().zip(chunks) {
            k.check(chunk.len() / elem, start, piece.len() / elem)?;
            if k.axes.iter().any(|a| a.count() == 0) {
                return Ok(());
            }
        }
        // the row's first result element is the first kernel's (streams_rows: every last
        // axis is affine)
        let Some(Steps::Affine { dst: first, .. }) = kernels[0].axes.last() else {
            return Err(bad("an operation that is no loop of short runs"));
        };
        // every share of a row one length: compiled in where `with_run_len!` takes it
        let share = kernels[0].row_bytes(elem);
        let run = if kernels.iter().all(|k| k.row_bytes(elem) == share) {
            share
        } else {
            0
        };
        let rows = StreamedRows {
            kernels,
            chunks,
            elem,
            first: *first,
        };
        with_run_len!(
            run,
            |LEN| rows.copy::<LEN>(piece, start),
            else rows.copy::<0>(piece, start)
        );
        Ok(())
    }

    /// Writes one element value (e.g. the fill value) into every cell of the operation that
    /// lies in `piece`, the part of the result starting at element `start`.
    pub(crate) fn fill_into_piece(
        &self,
        value: &[u8],
        piece: &mut [u8],
        start: usize,
    ) -> Result<()> {
        let elem = value.len().max(1);
        self.check(usize::MAX / 2, start, piece.len() / elem)?;
        self.walk(0, 0, -(start as i64), &mut |_, d, n| {
            let d = d as usize * elem;
            fill_repeated(&mut piece[d..d + n * elem], value);
        });
        Ok(())
    }

    /// Number of cells the operation visits.
    pub(crate) fn cells(&self) -> usize {
        self.axes
            .iter()
            .fold(1usize, |acc, a| acc.saturating_mul(a.count()))
    }

    /// When the operation reads every cell of a chunk of `chunk_cells` cells, in C order,
    /// into one contiguous run of the result: the run's first result offset (elements).
    /// Such a chunk can be decoded straight into the result.
    pub(crate) fn contiguous_whole_chunk(&self, chunk_cells: usize) -> Option<i64> {
        match self.axes.as_slice() {
            [] => (self.base == 0 && chunk_cells == 1).then_some(0),
            [
                Steps::Affine {
                    count,
                    src,
                    src_step,
                    dst,
                    dst_step,
                },
            ] => (*count == chunk_cells
                && self.base + src == 0
                && (*count == 1 || (*src_step == 1 && *dst_step == 1)))
                .then_some(*dst),
            _ => None,
        }
    }

    /// Copies the chunk cells the operation reads, in visiting order, into a new buffer:
    /// a sparse selection keeps only its cells, not the whole decoded chunk.
    pub(crate) fn pack(&self, chunk: &[u8], elem: usize) -> Result<Vec<u8>> {
        self.check(chunk.len() / elem, 0, usize::MAX / 2)?;
        let mut packed = Vec::with_capacity(self.cells().saturating_mul(elem));
        self.walk(0, self.base, 0, &mut |s, _, n| {
            let s = s as usize * elem;
            packed.extend_from_slice(&chunk[s..s + n * elem]);
        });
        Ok(packed)
    }

    /// Copies cells packed by [`Kernel::pack`] into `piece`, the part of the result that
    /// starts at element `start`.
    pub(crate) fn unpack_into_piece(
        &self,
        packed: &[u8],
        piece: &mut [u8],
        start: usize,
        elem: usize,
    ) -> Result<()> {
        if packed.len() != self.cells().saturating_mul(elem) {
            return Err(ArrayError::Internal(format!(
                "{} packed bytes for {} cells of {elem} bytes",
                packed.len(),
                self.cells()
            )));
        }
        self.check(usize::MAX / 2, start, piece.len() / elem)?;
        let mut next = 0usize;
        self.walk(0, self.base, -(start as i64), &mut |_, d, n| {
            let d = d as usize * elem;
            piece[d..d + n * elem].copy_from_slice(&packed[next..next + n * elem]);
            next += n * elem;
        });
        Ok(())
    }

    /// Copies result cells into the chunk (`write`): the reverse direction.
    pub(crate) fn scatter_into(&self, values: &[u8], chunk: &mut [u8], elem: usize) -> Result<()> {
        self.check(chunk.len() / elem, 0, values.len() / elem)?;
        let run = self.run_bytes(elem);
        copy_runs!(self, run, 0, elem, |s, d, n| chunk[s..s + n]
            .copy_from_slice(&values[d..d + n]));
        Ok(())
    }

    /// Bytes of every run [`walk`](Self::walk) reports: the innermost axis's run where it
    /// is contiguous in both buffers, else one element.
    fn run_bytes(&self, elem: usize) -> usize {
        match self.axes.last() {
            Some(Steps::Affine {
                count,
                src_step: 1,
                dst_step: 1,
                ..
            }) => count.saturating_mul(elem),
            _ => elem,
        }
    }

    /// Calls `f(chunk_offset, result_offset, run_length)` for every contiguous run.
    ///
    /// Generic over `f` (not `dyn`) so the copy inlines into the loops: runs are often
    /// short (an inner chunk's row is 32 elements), and an indirect call per run showed up
    /// in profiles of whole-array reads.
    fn walk<F: FnMut(i64, i64, usize)>(&self, axis: usize, src: i64, dst: i64, f: &mut F) {
        let Some(a) = self.axes.get(axis) else {
            f(src, dst, 1);
            return;
        };
        let innermost = axis + 1 == self.axes.len();
        match a {
            Steps::Affine {
                count,
                src: s0,
                src_step,
                dst: d0,
                dst_step,
            } => {
                if innermost && *src_step == 1 && *dst_step == 1 {
                    if *count > 0 {
                        f(src + s0, dst + d0, *count);
                    }
                    return;
                }
                // Second-innermost over a contiguous innermost run: loop here instead of
                // recursing once per run.
                if axis + 2 == self.axes.len()
                    && let Some(Steps::Affine {
                        count: n,
                        src: is,
                        src_step: 1,
                        dst: id,
                        dst_step: 1,
                    }) = self.axes.get(axis + 1)
                {
                    if *n > 0 {
                        let (mut s, mut d) = (src + s0 + is, dst + d0 + id);
                        for _ in 0..*count {
                            f(s, d, *n);
                            s += src_step;
                            d += dst_step;
                        }
                    }
                    return;
                }
                for i in 0..*count as i64 {
                    self.walk(
                        axis + 1,
                        src + s0 + i * src_step,
                        dst + d0 + i * dst_step,
                        f,
                    );
                }
            }
            Steps::List(v) => {
                for &(s, d) in v {
                    self.walk(axis + 1, src + s, dst + d, f);
                }
            }
        }
    }
}

/// Most operations [`Kernel::gather_rows_streaming`] copies as one.
pub(crate) const MAX_ROW_CHAIN: usize = 16;
/// Longest row (bytes) [`Kernel::gather_rows_streaming`] gathers on the stack.
pub(crate) const MAX_ROW_BYTES: usize = 4096;

/// Whether `next` may join a chain of `len` operations that ends with `last` and whose rows
/// take `row` bytes: the chain stays within [`MAX_ROW_CHAIN`] operations and
/// [`MAX_ROW_BYTES`], and `next` continues `last`'s rows ([`Kernel::continued_by`]). The
/// rule [`Kernel::gather_rows_streaming`] checks, for callers that build chains.
pub(crate) fn joins_chain(
    last: &Kernel,
    len: usize,
    row: usize,
    next: &Kernel,
    elem: usize,
) -> bool {
    len < MAX_ROW_CHAIN
        && last.continued_by(next)
        && row.saturating_add(next.row_bytes(elem)) <= MAX_ROW_BYTES
}

/// A checked chain of [`Kernel::gather_rows_streaming`], copied a result row at a time.
struct StreamedRows<'a> {
    kernels: &'a [&'a Kernel],
    chunks: &'a [&'a [u8]],
    elem: usize,
    /// The result offset (elements) of a row's first element past its outer loops' offset.
    first: i64,
}

impl StreamedRows<'_> {
    /// Copies every row into `piece` (the result from element `start` on). `RUN`: the
    /// bytes every kernel contributes to a row, or 0 when they differ (each its own then).
    fn copy<const RUN: usize>(&self, piece: &mut [u8], start: usize) {
        let (kernels, chunks, elem) = (self.kernels, self.chunks, self.elem);
        let mut staging = Staging([0; STAGING_BYTES]);
        let mut srcs = [0i64; MAX_ROW_CHAIN];
        for (s, k) in srcs.iter_mut().zip(kernels) {
            *s = k.base;
        }
        // The previous row's bytes from its last line boundary on, not yet stored: at the
        // front of `staging`, for the result bytes from `carry_at` on (`carry` of them).
        // A row that starts where they end continues their line (its whole lines are
        // streamed); before any other row, and at the end, they are stored as they are.
        let (mut carry_at, mut carry) = (0usize, 0usize);
        walk_rows(kernels, 0, &srcs, -(start as i64), &mut |srcs, dst| {
            let d = (dst + self.first) as usize * elem;
            let joined = carry > 0 && carry_at + carry == d;
            #[cfg(test)]
            if joined {
                tests::JOINED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            if carry > 0 && !joined {
                piece[carry_at..carry_at + carry].copy_from_slice(&staging.0[..carry]);
                carry = 0;
            }
            let mut at = carry;
            for (j, k) in kernels.iter().enumerate() {
                if let Some(Steps::Affine { count, src, .. }) = k.axes.last() {
                    let s = (srcs[j] + src) as usize * elem;
                    debug_assert!(RUN == 0 || RUN == count * elem);
                    let n = if RUN > 0 { RUN } else { count * elem };
                    staging.0[at..at + n].copy_from_slice(&chunks[j][s..s + n]);
                    at += n;
                }
            }
            let begin = d - carry;
            let kept = stream_store::copy_streaming_keeping_tail(
                &mut piece[begin..begin + at],
                &staging.0[..at],
            );
            staging.0.copy_within(at - kept..at, 0);
            (carry_at, carry) = (begin + at - kept, kept);
        });
        if carry > 0 {
            piece[carry_at..carry_at + carry].copy_from_slice(&staging.0[..carry]);
        }
    }
}

/// Bytes of [`Staging`]: a row and the unstored end of the row before it (less than a line).
const STAGING_BYTES: usize = MAX_ROW_BYTES + stream_store::LINE;

/// The staging buffer of a streamed row and the previous row's unstored end, line-aligned.
#[repr(align(64))]
struct Staging([u8; STAGING_BYTES]);

/// Calls `f(chunk_offsets, result_offset)` for every row of a chain of kernels (see
/// [`Kernel::gather_rows_streaming`]): the offsets before the innermost axis's own, one
/// chunk offset per kernel; the outer axes are the first kernel's, which the others share.
fn walk_rows<F: FnMut(&[i64], i64)>(
    kernels: &[&Kernel],
    axis: usize,
    srcs: &[i64; MAX_ROW_CHAIN],
    dst: i64,
    f: &mut F,
) {
    let n = kernels.len();
    let Some(Steps::Affine {
        count,
        dst: d0,
        dst_step,
        ..
    }) = kernels[0].axes.get(axis)
    else {
        return;
    };
    if axis + 1 == kernels[0].axes.len() {
        f(&srcs[..n], dst);
        return;
    }
    for i in 0..*count as i64 {
        let mut next = *srcs;
        for (s, k) in next.iter_mut().zip(kernels) {
            if let Some(Steps::Affine { src, src_step, .. }) = k.axes.get(axis) {
                *s += src + i * src_step;
            }
        }
        walk_rows(kernels, axis + 1, &next, dst + d0 + i * dst_step, f);
    }
}

/// Writes the chunk offset (elements) of each loop step into `out` (one slot per step).
fn source_offsets<'a>(
    source: &AxisSource,
    cs: &[i64],
    out: impl ExactSizeIterator<Item = &'a mut i64>,
) -> Result<()> {
    match source {
        AxisSource::Run { dim: None, .. } => out.for_each(|o| *o = 0),
        AxisSource::Run {
            dim: Some(d),
            start,
            stride,
        } => run_offsets(*start, *stride, cs[*d], out),
        AxisSource::Line {
            dims,
            starts,
            strides,
        } => {
            let (src, step) = line_affine(dims, starts, strides, cs);
            run_offsets(src, step, 1, out);
        }
        AxisSource::Points { dims, local } => row_offsets(local, dims, cs, "chunk", out)?,
    }
    Ok(())
}

/// Writes the result offset (elements) of each loop step into `out` (one slot per step).
fn dest_offsets<'a>(
    dest: &AxisDest,
    rs: &[i64],
    out: impl ExactSizeIterator<Item = &'a mut i64>,
) -> Result<()> {
    match dest {
        AxisDest::Run {
            axis,
            start,
            stride,
        } => run_offsets(*start, *stride, rs[*axis], out),
        AxisDest::Points { axes, coords } => row_offsets(coords, axes, rs, "result", out)?,
    }
    Ok(())
}

impl Kernel {
    /// Writes one element value into every chunk cell of the operation (a scalar write).
    pub(crate) fn fill_chunk(&self, value: &[u8], chunk: &mut [u8]) -> Result<()> {
        let elem = value.len().max(1);
        self.check(chunk.len() / elem, 0, usize::MAX / 2)?;
        self.walk(0, self.base, 0, &mut |s, _, n| {
            let s = s as usize * elem;
            fill_repeated(&mut chunk[s..s + n * elem], value);
        });
        Ok(())
    }
}

/// `(offset of step 0, offset step)` in elements of a diagonal line: the dimensions `dims`
/// start at `starts` and move by `strides` together.
fn line_affine(dims: &[usize], starts: &[i64], strides: &[i64], cs: &[i64]) -> (i64, i64) {
    dims.iter()
        .zip(starts)
        .zip(strides)
        .fold((0, 0), |(src, step), ((&d, &st), &sd)| {
            (src + st * cs[d], step + sd * cs[d])
        })
}

/// Writes `(start + i * stride) * scale` into slot `i` of `out`: the offsets of a strided
/// run of coordinates along a dimension of element stride `scale`.
fn run_offsets<'a>(
    start: i64,
    stride: i64,
    scale: i64,
    out: impl ExactSizeIterator<Item = &'a mut i64>,
) {
    out.zip(0i64..)
        .for_each(|(o, i)| *o = (start + i * stride) * scale);
}

/// Writes the linear offset (elements) of each coordinate row over `dims`, with element
/// strides `strides`, into `out` (one row per slot); an error when `coords` does not hold
/// `out.len()` rows (`what` names the buffer in it).
fn row_offsets<'a>(
    coords: &[i64],
    dims: &[usize],
    strides: &[i64],
    what: &str,
    out: impl ExactSizeIterator<Item = &'a mut i64>,
) -> Result<()> {
    let count = out.len();
    if coords.len() != count * dims.len() {
        return Err(ArrayError::Internal(format!(
            "{} {what} coordinates for {count} steps of {} dimensions",
            coords.len(),
            dims.len()
        )));
    }
    // one loop per common rank (the general one sums each row through an iterator)
    match *dims {
        [] => out.for_each(|o| *o = 0),
        [d] => {
            let s = strides[d];
            out.zip(coords).for_each(|(o, &x)| *o = x * s);
        }
        [d0, d1] => {
            let (s0, s1) = (strides[d0], strides[d1]);
            out.zip(coords.chunks_exact(2))
                .for_each(|(o, r)| *o = r[0] * s0 + r[1] * s1);
        }
        _ => out
            .zip(coords.chunks_exact(dims.len()))
            .for_each(|(o, row)| {
                *o = row.iter().zip(dims).map(|(x, &d)| x * strides[d]).sum();
            }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::grid::{DimensionGrid, RegularGrid};
    use crate::index::{Dialect, IndexTransform, Selection, SelectionMode};
    use crate::plan::plan_chunks;

    /// Rows [`Kernel::gather_rows_streaming`] joined to the previous row's unstored end, in
    /// this test binary (every test's: that it grows shows joins were made, most likely by
    /// the test that looks).
    pub(super) static JOINED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// `row_offsets` against the plain formula (the sum over `dims` of coordinate times
    /// stride) for 0 to 3 dimensions and 0, 1 and 5 rows, and its error on coordinates that
    /// do not make one row per slot.
    #[test]
    fn row_offsets_match_the_formula() {
        let strides = [60i64, 12, 3, 1];
        for dims in [&[][..], &[2][..], &[0, 3][..], &[1, 2, 3][..]] {
            for count in [0usize, 1, 5] {
                let coords: Vec<i64> = (0..(count * dims.len()) as i64)
                    .map(|v| v * 7 % 11)
                    .collect();
                let mut out = vec![-1i64; count];
                row_offsets(&coords, dims, &strides, "test", out.iter_mut()).unwrap();
                let want: Vec<i64> = (0..count)
                    .map(|r| {
                        dims.iter()
                            .enumerate()
                            .map(|(k, &d)| coords[r * dims.len() + k] * strides[d])
                            .sum()
                    })
                    .collect();
                assert_eq!(out, want, "dims {dims:?}, {count} rows");
            }
        }
        let mut out = [0i64; 2];
        let short = row_offsets(&[1, 2, 3], &[0, 1], &strides, "test", out.iter_mut());
        assert!(matches!(short, Err(ArrayError::Internal(_))));
    }

    /// The kernels of `selection` (NumPy, in `mode`) over an array of `shape` with regular
    /// chunks of `chunks`, with the chunk coordinates of each.
    fn kernels(
        shape: &[u64],
        chunks: &[u64],
        selection: &str,
        mode: SelectionMode,
    ) -> Vec<(Vec<i64>, Kernel)> {
        let t = IndexTransform::from_shape(shape)
            .unwrap()
            .select(
                &Selection::parse(selection).unwrap(),
                mode,
                Dialect::Positional,
            )
            .unwrap();
        let grids: Vec<Arc<dyn DimensionGrid>> = shape
            .iter()
            .zip(chunks)
            .map(|(&n, &c)| Arc::new(RegularGrid::new(c, n).unwrap()) as Arc<dyn DimensionGrid>)
            .collect();
        plan_chunks(&t, &grids)
            .unwrap()
            .ops()
            .unwrap()
            .map(|op| {
                let op = op.unwrap();
                (op.chunk_coords.clone(), Kernel::new(&op).unwrap())
            })
            .collect()
    }

    fn contiguous(ks: &[(Vec<i64>, Kernel)], chunk_cells: usize) -> Vec<Option<i64>> {
        ks.iter()
            .map(|(_, k)| k.contiguous_whole_chunk(chunk_cells))
            .collect()
    }

    #[test]
    fn whole_chunks_with_one_destination_run_are_found() {
        // 1-D: interior chunks are whole runs; the clipped ones are not
        let ks = kernels(&[100], &[10], "5:95", SelectionMode::Basic);
        let got = contiguous(&ks, 10);
        assert_eq!(got[0], None);
        assert_eq!(got[1..9], [5, 15, 25, 35, 45, 55, 65, 75].map(Some));
        assert_eq!(got[9], None);
        // chunks spanning whole rows of a 2-D read
        let ks = kernels(&[8, 6], &[2, 6], "...", SelectionMode::Basic);
        assert_eq!(contiguous(&ks, 12), [0, 12, 24, 36].map(Some));
        // square chunks of a 2-D read are not contiguous in the result
        let ks = kernels(&[8, 8], &[4, 4], "...", SelectionMode::Basic);
        assert!(contiguous(&ks, 16).iter().all(Option::is_none));
        // ... unless the read is one chunk
        let ks = kernels(&[8, 8], &[4, 4], "4:8, 0:4", SelectionMode::Basic);
        assert_eq!(contiguous(&ks, 16), [Some(0)]);
        // reversed or strided reads never are
        let ks = kernels(&[100], &[10], "::-1", SelectionMode::Basic);
        assert!(contiguous(&ks, 10).iter().all(Option::is_none));
        let ks = kernels(&[100], &[10], "::2", SelectionMode::Basic);
        assert!(contiguous(&ks, 10).iter().all(Option::is_none));
        // an index array listing a whole chunk in order is a list, not a run
        let ks = kernels(&[20], &[10], "[0,1,2,3,4,5,6,7,8,9]", SelectionMode::Outer);
        assert!(contiguous(&ks, 10).iter().all(Option::is_none));
    }

    /// Chunk `coords`'s buffer for the chained-copy test: distinct bytes per chunk and cell.
    fn chunk_bytes(coords: &[i64], cells: usize, elem: usize) -> Vec<u8> {
        let seed = coords.iter().fold(17i64, |a, &c| a * 31 + c) as u64;
        (0..cells * elem)
            .map(|i| (seed.wrapping_mul(0x9E37_79B9) ^ (i as u64).wrapping_mul(2654435761)) as u8)
            .collect()
    }

    /// Copies the operations `ids` of `ks` (in that order) from `buffers` into `piece`
    /// (from result element `start`) as `read::copy_ops` does: runs of row neighbours as
    /// one streamed chain, the others one by one. Returns how many chains had 2 or more.
    fn copy_in_chains(
        ks: &[(Vec<i64>, Kernel)],
        buffers: &[Vec<u8>],
        ids: &[usize],
        piece: &mut [u8],
        start: usize,
        elem: usize,
    ) -> usize {
        let (mut chained, mut i) = (0, 0);
        while i < ids.len() {
            let mut j = i + 1;
            let mut row = ks[ids[i]].1.row_bytes(elem);
            while j < ids.len() && joins_chain(&ks[ids[j - 1]].1, j - i, row, &ks[ids[j]].1, elem) {
                row += ks[ids[j]].1.row_bytes(elem);
                j += 1;
            }
            let group: Vec<&Kernel> = ids[i..j].iter().map(|&o| &ks[o].1).collect();
            let bufs: Vec<&[u8]> = ids[i..j].iter().map(|&o| &buffers[o][..]).collect();
            if group[0].streams_rows(elem) {
                Kernel::gather_rows_streaming(&group, &bufs, piece, start, elem).unwrap();
                chained += usize::from(j - i > 1);
            } else {
                for (k, b) in group.iter().zip(&bufs) {
                    k.gather_into_piece(b, piece, start, elem).unwrap();
                }
            }
            i = j;
        }
        chained
    }

    #[test]
    fn chained_streamed_rows_write_what_per_chunk_copies_write() {
        let cases: [(&[u64], &[u64], &str, usize); 9] = [
            (&[12, 40], &[4, 8], "...", 2),
            (&[12, 40], &[4, 8], "1:11, 3:37", 2),
            (&[6, 9, 40], &[2, 3, 8], "...", 4),
            (&[6, 9, 40], &[2, 3, 8], "1:5, 2:8, 5:39", 1),
            (&[6, 9, 40], &[3, 3, 8], "::-1, :, 4:36", 8),
            (&[5, 33], &[5, 11], ":, ::2", 2),
            (&[64], &[16], "3:60", 4),
            (&[4, 4, 4, 24], &[2, 2, 2, 6], "...", 2),
            (&[10, 1000], &[5, 300], "...", 8),
        ];
        for (shape, chunks, sel, elem) in cases {
            let ks = kernels(shape, chunks, sel, SelectionMode::Basic);
            let cells: usize = chunks.iter().product::<u64>() as usize;
            let joined_before = JOINED.load(std::sync::atomic::Ordering::Relaxed);
            for shift in [0, 1, 16, 48, 63] {
                let chained = check_chained_against_per_chunk(&ks, cells, elem, shift)
                    .unwrap_or_else(|e| panic!("{shape:?} {chunks:?} {sel} shift {shift}: {e}"));
                if !sel.contains("::") {
                    assert!(chained > 0, "{sel}: no chain of x-neighbours was found");
                }
            }
            let width = *shape.last().unwrap() as usize * elem;
            if sel == "..." && width <= MAX_ROW_BYTES {
                // whole-width chains: rows follow each other, and some end mid-line
                assert!(
                    JOINED.load(std::sync::atomic::Ordering::Relaxed) > joined_before,
                    "{shape:?} {chunks:?}: no row continued the previous row's line"
                );
            }
        }
    }

    /// Copies `ks` (of `elem`-byte cells) as `read::copy_ops` does, into a piece `shift`
    /// bytes past a line boundary, whole and from the second half of the operations on;
    /// both against per-chunk copies. Returns how many chains of 2 or more the whole copy
    /// made.
    fn check_chained_against_per_chunk(
        ks: &[(Vec<i64>, Kernel)],
        cells: usize,
        elem: usize,
        shift: usize,
    ) -> std::result::Result<usize, String> {
        let result: usize = ks.iter().map(|(_, k)| k.cells()).sum::<usize>() * elem;
        let buffers: Vec<Vec<u8>> = ks
            .iter()
            .map(|(c, _)| chunk_bytes(c, cells, elem))
            .collect();
        let mut order: Vec<usize> = (0..ks.len()).collect();
        order.sort_by_key(|&i| ks[i].1.dest_bounds().map(|b| b.0));
        let mut backing = vec![0u8; result + 2 * stream_store::LINE];
        let at = (backing.as_ptr() as usize).next_multiple_of(stream_store::LINE)
            - backing.as_ptr() as usize
            + shift;
        let piece = &mut backing[at..at + result];
        let mut whole_chains = 0;
        for from in [0, order.len() / 2] {
            let ids = &order[from..];
            let Some(&first_op) = ids.first() else {
                continue;
            };
            let first = ks[first_op].1.dest_bounds().map_or(0, |b| b.0) as usize;
            let mut want = vec![0u8; result - first * elem];
            for &o in ids {
                ks[o]
                    .1
                    .gather_into_piece(&buffers[o], &mut want, first, elem)
                    .unwrap();
            }
            let piece = &mut piece[first * elem..];
            piece.fill(0);
            let chained = copy_in_chains(ks, &buffers, ids, piece, first, elem);
            stream_store::fence();
            if piece != &want[..] {
                return Err(format!("from operation {from} (element {first})"));
            }
            if from == 0 {
                whole_chains = chained;
            }
        }
        Ok(whole_chains)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Any box, strided or reversed per axis, of 1 to 3 dimensions, cells of 1 to 8
        /// bytes, into a piece at any offset from a line boundary: streamed chains (with
        /// their rows' line ends carried to the next row) write what per-chunk copies do.
        #[test]
        fn streamed_chains_of_any_box_write_what_per_chunk_copies_write(
            dims in proptest::collection::vec(
                (1u64..=24, 1u64..=24, 0u64..=24, 0u64..=24, 0usize..3),
                1..=3,
            ),
            elem in proptest::sample::select(vec![1usize, 2, 4, 8]),
            shift in 0usize..64,
        ) {
            let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
            let chunks: Vec<u64> = dims.iter().map(|d| d.1.min(d.0)).collect();
            let sel: Vec<String> = dims
                .iter()
                .map(|&(n, _, a, b, how)| {
                    let (a, b) = (a.min(n), b.min(n));
                    let (lo, hi) = (a.min(b), a.max(b));
                    match how {
                        0 => format!("{lo}:{hi}"),
                        1 => format!("{lo}:{hi}:2"),
                        _ => "::-1".to_string(),
                    }
                })
                .collect();
            let sel = sel.join(", ");
            let ks = kernels(&shape, &chunks, &sel, SelectionMode::Basic);
            let cells = chunks.iter().product::<u64>() as usize;
            let checked = check_chained_against_per_chunk(&ks, cells, elem, shift);
            proptest::prop_assert!(
                checked.is_ok(),
                "{shape:?} {chunks:?} [{sel}] elem {elem} shift {shift}: {checked:?}"
            );
        }
    }

    #[test]
    fn only_row_continuations_chain_and_bad_chains_are_errors() {
        // 2-D box: chunk (0, 0) is continued by (0, 1), never by (1, 0) or by itself
        let ks = kernels(&[8, 8], &[4, 4], "...", SelectionMode::Basic);
        let k = |c: [i64; 2]| &ks.iter().find(|(cc, _)| cc[..] == c).unwrap().1;
        assert!(k([0, 0]).continued_by(k([0, 1])));
        assert!(!k([0, 1]).continued_by(k([0, 0])));
        assert!(!k([0, 0]).continued_by(k([1, 0])));
        assert!(!k([0, 0]).continued_by(k([0, 0])));
        assert!(!k([0, 0]).continued_by(k([1, 1])));
        let chunk = vec![0u8; 16];
        let mut piece = vec![0u8; 64];
        // a chain that is no chain, a missing chunk, a piece too small, an operation that
        // is no loop of runs: errors, no panic
        assert!(
            Kernel::gather_rows_streaming(
                &[k([0, 0]), k([1, 0])],
                &[&chunk, &chunk],
                &mut piece,
                0,
                1
            )
            .is_err()
        );
        assert!(Kernel::gather_rows_streaming(&[k([0, 0])], &[], &mut piece, 0, 1).is_err());
        assert!(
            Kernel::gather_rows_streaming(&[k([1, 1])], &[&chunk], &mut piece[..40], 0, 1).is_err()
        );
        // points and reversed rows are never streamed, alone or not
        let ks = kernels(
            &[8, 8],
            &[4, 4],
            "[0, 5], [1, 7]",
            SelectionMode::Vectorized,
        );
        let rev = kernels(&[8, 8], &[4, 4], ":, ::-1", SelectionMode::Basic);
        for (_, k) in ks.iter().chain(&rev) {
            assert!(!k.streams_rows(1));
            let r = Kernel::gather_rows_streaming(&[k], &[&chunk], &mut piece, 0, 1);
            assert!(r.is_err());
        }
    }

    #[test]
    fn packed_cells_unpack_to_what_a_direct_copy_writes() {
        let shape = [12u64, 10];
        let chunk_cells = 16;
        let elem = 2;
        for (sel, mode) in [
            ("[0, 5, 11, 3], [9, 0, 4, 4]", SelectionMode::Vectorized),
            ("[1, 7], 2:9:3", SelectionMode::Outer),
            ("::-5, 1::4", SelectionMode::Basic),
        ] {
            let ks = kernels(&shape, &[4, 4], sel, mode);
            let result_cells: usize = ks
                .iter()
                .filter_map(|(_, k)| k.dest_bounds())
                .map(|(_, hi)| hi as usize + 1)
                .max()
                .unwrap();
            let mut direct = vec![0u8; result_cells * elem];
            let mut unpacked = vec![0u8; result_cells * elem];
            for (coords, k) in &ks {
                // each chunk's cells hold (chunk id, cell index) so misplaced bytes show
                let chunk: Vec<u8> = (0..chunk_cells)
                    .flat_map(|i| [coords[0] as u8 * 16 + coords[1] as u8, i as u8])
                    .collect();
                k.gather_into_piece(&chunk, &mut direct, 0, elem).unwrap();
                let packed = k.pack(&chunk, elem).unwrap();
                assert_eq!(packed.len(), k.cells() * elem);
                k.unpack_into_piece(&packed, &mut unpacked, 0, elem)
                    .unwrap();
                // a packed buffer of the wrong length is refused
                assert!(
                    k.unpack_into_piece(&packed[1..], &mut unpacked, 0, elem)
                        .is_err()
                );
            }
            assert_eq!(direct, unpacked, "{sel}");
        }
    }
}
