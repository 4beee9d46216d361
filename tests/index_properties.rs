//! Property tests of the index model against a naive NumPy-semantics reference.
//!
//! The reference materialises every intermediate view as an array and indexes it directly by
//! positions (wrap, clamp, `np.ix_` outer products, NumPy advanced indexing with its placement
//! rule); the engine composes transforms and gathers once at the end.

use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use zarrflow::index::{
    Dialect, IndexDomain, IndexTransform, Selection, SelectionItem, SelectionMode, Slice, StepRange,
};

/// A tiny deterministic generator (splitmix64) so that selections can depend on shapes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn random_slice(rng: &mut Rng, n: i64) -> Slice {
    let bound = |rng: &mut Rng| {
        if rng.chance(40) {
            None
        } else {
            Some(rng.range(-n - 2, n + 2))
        }
    };
    let step = if rng.chance(40) {
        None
    } else {
        let s = rng.range(1, 3);
        Some(if rng.chance(40) { -s } else { s })
    };
    Slice {
        start: bound(rng),
        stop: bound(rng),
        step,
    }
}

fn random_positions(rng: &mut Rng, n: i64, shape: &[usize]) -> ArrayD<i64> {
    let len: usize = shape.iter().product();
    let v = (0..len)
        .map(|_| {
            if rng.chance(30) {
                rng.range(-n, -1)
            } else {
                rng.range(0, n - 1)
            }
        })
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

/// A random positional selection valid for `shape` in `mode`.
fn random_selection(rng: &mut Rng, shape: &[usize], mode: SelectionMode) -> Selection {
    let rank = shape.len();
    let mut items = Vec::new();
    let mut dim = 0;
    let ellipsis_at = if rng.chance(20) {
        Some(rng.below(rank as u64 + 1) as usize)
    } else {
        None
    };
    // For vindex, a common broadcast shape for the arrays of this selection.
    let bshape: Vec<usize> = match rng.below(3) {
        0 => vec![if rng.chance(10) {
            0
        } else {
            rng.range(1, 4) as usize
        }],
        1 => vec![rng.range(1, 3) as usize, rng.range(1, 3) as usize],
        _ => vec![],
    };
    while dim < rank {
        if Some(dim) == ellipsis_at {
            items.push(SelectionItem::Ellipsis);
            // The ellipsis swallows a random number of dimensions.
            let skip = rng.below((rank - dim) as u64 + 1) as usize;
            if skip == rank - dim && rng.chance(50) {
                break;
            }
            dim += skip;
            if dim >= rank {
                break;
            }
        }
        if rng.chance(10) {
            items.push(SelectionItem::NewAxis);
        }
        let n = shape[dim] as i64;
        let choice = rng.below(100);
        let item = if n > 0 && choice < 15 {
            SelectionItem::Index(if rng.chance(30) {
                rng.range(-n, -1)
            } else {
                rng.range(0, n - 1)
            })
        } else if n > 0 && choice < 50 && mode == SelectionMode::Outer {
            let len = rng.range(0, 5) as usize;
            SelectionItem::Array(random_positions(rng, n, &[len]))
        } else if n > 0 && choice < 50 && mode == SelectionMode::Vectorized {
            // Compact broadcastable shapes: each axis either the broadcast extent or 1.
            let s: Vec<usize> = bshape
                .iter()
                .map(|&b| if rng.chance(30) { 1 } else { b })
                .collect();
            let s = if rng.chance(20) && !s.is_empty() {
                s[1..].to_vec()
            } else {
                s
            };
            SelectionItem::Array(random_positions(rng, n, &s))
        } else if choice < 60 && mode != SelectionMode::Basic {
            let mask: Vec<bool> = (0..n).map(|_| rng.chance(50)).collect();
            SelectionItem::Mask(ndarray::Array1::from(mask).into_dyn())
        } else if rng.chance(30) {
            let s = random_slice(rng, n);
            SelectionItem::Range(StepRange {
                start: s.start,
                end: s.stop,
                step: s.step.unwrap_or(1),
            })
        } else {
            SelectionItem::Slice(random_slice(rng, n))
        };
        items.push(item);
        dim += 1;
        if dim < rank && ellipsis_at.is_none_or(|e| e > dim) && rng.chance(15) {
            break; // a short key, padded with full slices (only without an ellipsis before)
        }
    }
    Selection::new(items)
}

// ---------------------------------------------------------------- the naive reference

/// Python's `slice.indices(n)` followed by `range(...)`.
fn slice_positions(s: &Slice, n: i64) -> Vec<i64> {
    let step = s.step.unwrap_or(1);
    let norm = |v: i64, lo: i64, hi: i64| (if v < 0 { v + n } else { v }).clamp(lo, hi);
    let mut out = Vec::new();
    if step > 0 {
        let mut i = s.start.map_or(0, |v| norm(v, 0, n));
        let stop = s.stop.map_or(n, |v| norm(v, 0, n));
        while i < stop {
            out.push(i);
            i += step;
        }
    } else {
        let mut i = s.start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let stop = s.stop.map_or(-1, |v| norm(v, -1, n - 1));
        while i > stop {
            out.push(i);
            i += step;
        }
    }
    out
}

/// ndarray's `s![a..b; step]`: the clamped set `a..b`, visited from its end when step < 0.
fn range_positions(r: &StepRange, n: i64) -> Vec<i64> {
    let norm = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n);
    let a = r.start.map_or(0, norm);
    let b = r.end.map_or(n, norm);
    let set: Vec<i64> = (a..b).collect();
    if r.step > 0 {
        set.into_iter().step_by(r.step as usize).collect()
    } else {
        set.into_iter().rev().step_by((-r.step) as usize).collect()
    }
}

fn wrap(v: i64, n: i64) -> i64 {
    if v < 0 { v + n } else { v }
}

fn expand(sel: &Selection, rank: usize) -> Vec<SelectionItem> {
    let consumed: usize = sel.items().iter().map(|i| i.consumed_dims()).sum();
    let mut out = Vec::new();
    let mut had = false;
    for i in sel.items() {
        if matches!(i, SelectionItem::Ellipsis) {
            had = true;
            out.push(SelectionItem::Ellipsis);
            for _ in consumed..rank {
                out.push(SelectionItem::Slice(Slice::full()));
            }
        } else {
            out.push(i.clone());
        }
    }
    if !had {
        for _ in consumed..rank {
            out.push(SelectionItem::Slice(Slice::full()));
        }
    }
    out
}

/// One output axis of a basic/outer selection: positions along a source axis, or a new axis.
enum Axis {
    Source(usize, Vec<i64>),
    New,
}

fn gather_outer(src: &ArrayD<i64>, fixed: &[Option<i64>], axes: &[Axis]) -> ArrayD<i64> {
    let shape: Vec<usize> = axes
        .iter()
        .map(|a| match a {
            Axis::Source(_, p) => p.len(),
            Axis::New => 1,
        })
        .collect();
    ArrayD::from_shape_fn(IxDyn(&shape), |idx| {
        let mut s: Vec<usize> = fixed.iter().map(|f| f.unwrap_or(0) as usize).collect();
        for (k, a) in axes.iter().enumerate() {
            if let Axis::Source(d, p) = a {
                s[*d] = p[idx[k]] as usize;
            }
        }
        src[IxDyn(&s)]
    })
}

fn reference_basic_or_outer(src: &ArrayD<i64>, sel: &Selection) -> ArrayD<i64> {
    let items = expand(sel, src.ndim());
    let mut fixed = vec![None; src.ndim()];
    let mut axes = Vec::new();
    let mut d = 0;
    for item in items {
        let n = src.shape().get(d).copied().unwrap_or(0) as i64;
        match item {
            SelectionItem::Ellipsis => {}
            SelectionItem::NewAxis => axes.push(Axis::New),
            SelectionItem::Index(i) => {
                fixed[d] = Some(wrap(i, n));
                d += 1;
            }
            SelectionItem::Slice(s) => {
                axes.push(Axis::Source(d, slice_positions(&s, n)));
                d += 1;
            }
            SelectionItem::Range(r) => {
                axes.push(Axis::Source(d, range_positions(&r, n)));
                d += 1;
            }
            SelectionItem::Array(a) => {
                axes.push(Axis::Source(d, a.iter().map(|&v| wrap(v, n)).collect()));
                d += 1;
            }
            SelectionItem::Mask(m) => {
                let p = m
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b)
                    .map(|(i, _)| i as i64)
                    .collect();
                axes.push(Axis::Source(d, p));
                d += 1;
            }
        }
    }
    gather_outer(src, &fixed, &axes)
}

fn broadcast(shapes: &[Vec<usize>]) -> Vec<usize> {
    let rank = shapes.iter().map(Vec::len).max().unwrap_or(0);
    (0..rank)
        .map(|j| {
            shapes
                .iter()
                .filter_map(|s| (j + s.len()).checked_sub(rank).map(|i| s[i]))
                .fold(1, |acc, n| if n == 1 { acc } else { n })
        })
        .collect()
}

fn reference_vindex(src: &ArrayD<i64>, sel: &Selection) -> ArrayD<i64> {
    let items = expand(sel, src.ndim());
    // Per item: the source axes it consumes and, for advanced items, one array per axis.
    enum Part {
        Slice(usize, Vec<i64>),
        New,
        Adv(Vec<(usize, ArrayD<i64>)>),
        Skip,
    }
    let mut parts = Vec::new();
    let mut d = 0;
    for item in &items {
        let n = src.shape().get(d).copied().unwrap_or(0) as i64;
        parts.push(match item {
            SelectionItem::Ellipsis => Part::Skip,
            SelectionItem::NewAxis => Part::New,
            SelectionItem::Slice(s) => {
                d += 1;
                Part::Slice(d - 1, slice_positions(s, n))
            }
            SelectionItem::Range(r) => {
                d += 1;
                Part::Slice(d - 1, range_positions(r, n))
            }
            SelectionItem::Index(i) => {
                d += 1;
                Part::Adv(vec![(d - 1, ArrayD::from_elem(IxDyn(&[]), wrap(*i, n)))])
            }
            SelectionItem::Array(a) => {
                d += 1;
                Part::Adv(vec![(d - 1, a.mapv(|v| wrap(v, n)))])
            }
            SelectionItem::Mask(m) => {
                let k = m.ndim();
                let mut cols = vec![Vec::new(); k];
                for (idx, &b) in m.indexed_iter() {
                    if b {
                        for (j, c) in cols.iter_mut().enumerate() {
                            c.push(idx[j] as i64);
                        }
                    }
                }
                let v = cols
                    .into_iter()
                    .enumerate()
                    .map(|(j, c)| (d + j, ndarray::Array1::from(c).into_dyn()))
                    .collect();
                d += k;
                Part::Adv(v)
            }
        });
    }
    let adv_pos: Vec<usize> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, Part::Adv(_)))
        .map(|(i, _)| i)
        .collect();
    if adv_pos.is_empty() {
        return reference_basic_or_outer(src, sel);
    }
    let shapes: Vec<Vec<usize>> = parts
        .iter()
        .filter_map(|p| {
            if let Part::Adv(v) = p {
                Some(
                    v.iter()
                        .map(|(_, a)| a.shape().to_vec())
                        .collect::<Vec<_>>(),
                )
            } else {
                None
            }
        })
        .flatten()
        .collect();
    let b = broadcast(&shapes);
    let adjacent = adv_pos.windows(2).all(|w| w[1] == w[0] + 1);
    // Output axis layout: Some(part index) for a slice/new axis, None for the broadcast block.
    let mut layout: Vec<Option<usize>> = Vec::new();
    if !adjacent {
        layout.push(None);
    }
    for (i, p) in parts.iter().enumerate() {
        match p {
            Part::Adv(_) if adjacent && i == adv_pos[0] => layout.push(None),
            Part::Slice(..) | Part::New => layout.push(Some(i)),
            _ => {}
        }
    }
    let mut shape = Vec::new();
    for l in &layout {
        match l {
            None => shape.extend_from_slice(&b),
            Some(i) => shape.push(match &parts[*i] {
                Part::Slice(_, p) => p.len(),
                _ => 1,
            }),
        }
    }
    ArrayD::from_shape_fn(IxDyn(&shape), |idx| {
        let mut s = vec![0usize; src.ndim()];
        let mut k = 0;
        for l in &layout {
            match l {
                None => {
                    let bidx: Vec<usize> = (0..b.len()).map(|j| idx[k + j]).collect();
                    for p in &parts {
                        if let Part::Adv(v) = p {
                            for (axis, a) in v {
                                let off = b.len() - a.ndim();
                                let ai: Vec<usize> = (0..a.ndim())
                                    .map(|j| if a.shape()[j] == 1 { 0 } else { bidx[off + j] })
                                    .collect();
                                s[*axis] = a[IxDyn(&ai)] as usize;
                            }
                        }
                    }
                    k += b.len();
                }
                Some(i) => {
                    if let Part::Slice(axis, p) = &parts[*i] {
                        s[*axis] = p[idx[k]] as usize;
                    }
                    k += 1;
                }
            }
        }
        src[IxDyn(&s)]
    })
}

fn reference(src: &ArrayD<i64>, sel: &Selection, mode: SelectionMode) -> ArrayD<i64> {
    match mode {
        SelectionMode::Vectorized => reference_vindex(src, sel),
        _ => reference_basic_or_outer(src, sel),
    }
}

fn mode_of(rng: &mut Rng) -> SelectionMode {
    match rng.below(3) {
        0 => SelectionMode::Basic,
        1 => SelectionMode::Outer,
        _ => SelectionMode::Vectorized,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, .. ProptestConfig::default() })]

    /// Chains of basic / oindex / vindex selections: the composed transform, gathered once,
    /// equals the naive reference applied step by step.
    #[test]
    fn chained_selections_match_numpy_reference(
        shape in prop::collection::vec(prop_oneof![9 => 1usize..7, 1 => Just(0usize)], 0..4),
        seed in any::<u64>(),
        steps in 1usize..4,
    ) {
        let mut rng = Rng(seed);
        let len: usize = shape.iter().product();
        let source = ArrayD::from_shape_vec(IxDyn(&shape), (0..len as i64).collect()).unwrap();
        let shape_u64: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
        let mut transform = IndexTransform::from_shape(&shape_u64).unwrap();
        let mut expected = source.clone();
        for _ in 0..steps {
            let mode = mode_of(&mut rng);
            let sel = random_selection(&mut rng, expected.shape(), mode);
            let next = transform.select(&sel, mode, Dialect::Positional);
            let next = match next {
                Ok(t) => t,
                Err(e) => {
                    // The only legal refusals here are vindex broadcast mismatches.
                    prop_assert!(mode == SelectionMode::Vectorized, "{mode:?} {sel} on {:?}: {e}", expected.shape());
                    break;
                }
            };
            expected = reference(&expected, &sel, mode);
            transform = next;
            let got = transform.gather_from(&source).unwrap();
            prop_assert_eq!(got.shape(), expected.shape(), "{:?} {}", mode, sel);
            prop_assert_eq!(&got, &expected, "{:?} {}", mode, sel);
        }
    }

    /// `outer.compose(inner)` equals applying `outer` then `inner`, pointwise, with non-zero
    /// origins and translated domains.
    #[test]
    fn compose_equals_sequential_application(
        shape in prop::collection::vec(1usize..6, 1..4),
        origin in prop::collection::vec(-20i64..20, 3),
        shift in prop::collection::vec(-50i64..50, 16),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng(seed);
        let rank = shape.len();
        let shape_u64: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
        let base = IndexTransform::identity(IndexDomain::from_origin_shape(&origin[..rank], &shape_u64).unwrap());
        let mode = mode_of(&mut rng);
        let Ok(inner) = base.select(&random_selection(&mut rng, &shape, mode), mode, Dialect::Positional) else {
            return Ok(());
        };
        let mode2 = mode_of(&mut rng);
        let mid_shape: Vec<usize> = inner.domain().shape().iter().map(|&n| n as usize).collect();
        let identity = IndexTransform::identity(inner.domain().clone());
        let Ok(outer) = identity.select(&random_selection(&mut rng, &mid_shape, mode2), mode2, Dialect::Positional) else {
            return Ok(());
        };
        let outer = outer.translate_domain_by(&shift[..outer.input_rank()]).unwrap();
        let composed = outer.compose(&inner).unwrap();
        prop_assert_eq!(composed.domain(), outer.domain());
        let mut failures = Vec::new();
        outer.for_each_mapped(|p, mid| {
            let want = inner.apply(mid).unwrap();
            let got = composed.apply(p).unwrap();
            if want != got {
                failures.push((p.to_vec(), want, got));
            }
        }).unwrap();
        prop_assert!(failures.is_empty(), "{:?}", &failures[..failures.len().min(3)]);
    }

    /// Literal and positional dialects agree once positions are lowered: selecting by
    /// positions equals selecting by `origin + position` literally (for in-range values).
    #[test]
    fn literal_equals_positional_plus_origin(
        origin in -30i64..30,
        n in 1u64..12,
        a in 0i64..12,
        b in 0i64..12,
        step in prop_oneof![1i64..4, -3i64..0],
    ) {
        let base = IndexTransform::identity(IndexDomain::from_origin_shape(&[origin], &[n]).unwrap());
        let n = n as i64;
        let (a, b) = (a.min(n - 1), b.min(n));
        let positional = base.select(&Selection::new(vec![SelectionItem::Slice(Slice::new(a, b, step))]), SelectionMode::Basic, Dialect::Positional).unwrap();
        let literal = base.index(&Selection::new(vec![SelectionItem::Slice(Slice::new(origin + a, origin + b, step))]));
        let pos_cells = {
            let mut v = Vec::new();
            positional.for_each_mapped(|_, o| v.push(o[0])).unwrap();
            v
        };
        match literal {
            Ok(l) => {
                let mut v = Vec::new();
                l.for_each_mapped(|_, o| v.push(o[0])).unwrap();
                prop_assert_eq!(v, pos_cells);
            }
            // A literal interval running the wrong way is an error; positionally it is empty.
            Err(_) => prop_assert!(pos_cells.is_empty()),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]

    /// `intersect(box)` keeps exactly the (input, output) pairs whose output lies in the box,
    /// and its `source` transform says where each surviving point came from.
    #[test]
    fn intersect_keeps_exactly_the_points_inside(
        shape in prop::collection::vec(1usize..6, 1..4),
        seed in any::<u64>(),
        box_lo in prop::collection::vec(-1i64..5, 4),
        box_len in prop::collection::vec(0u64..5, 4),
    ) {
        let mut rng = Rng(seed);
        let shape_u64: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
        let base = IndexTransform::from_shape(&shape_u64).unwrap();
        let mode = mode_of(&mut rng);
        let Ok(t) = base.select(&random_selection(&mut rng, &shape, mode), mode, Dialect::Positional) else {
            return Ok(());
        };
        let r = t.output_rank();
        let bx = IndexDomain::from_origin_shape(&box_lo[..r], &box_len[..r]).unwrap();
        let mut want = Vec::new();
        t.for_each_mapped(|p, o| if bx.contains(o) { want.push((p.to_vec(), o.to_vec())) }).unwrap();
        match t.intersect(&bx) {
            Ok(None) => prop_assert!(want.is_empty(), "nothing returned but {} points inside", want.len()),
            Ok(Some(i)) => {
                let mut got = Vec::new();
                i.transform.for_each_mapped(|p, o| got.push((i.source.apply(p).unwrap(), o.to_vec()))).unwrap();
                want.sort();
                got.sort();
                prop_assert_eq!(got, want);
            }
            Err(e) => prop_assert!(matches!(e, zarrflow::index::IndexError::Unsupported(_)), "{e}"),
        }
    }
}

/// The storage coordinates `t` maps its points to, in C order of its domain.
fn mapped(t: &IndexTransform) -> Vec<i64> {
    let mut v = Vec::new();
    t.for_each_mapped(|_, o| v.push(o[0])).unwrap();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]

    /// Index arrays, whole-array checked and wrapped in one pass when contiguous: for either
    /// dialect and mode, contiguous, offset and reversed arrays select the same
    /// coordinates as NumPy / TensorStore do value by value, and an array holding values out
    /// of bounds fails with the error of its first such value in C order (the error a
    /// one-value array of it gives).
    #[test]
    fn index_arrays_are_checked_as_value_by_value(
        origin in -40i64..40,
        n in 0u64..40,
        values in prop::collection::vec(any::<u64>(), 0..300),
        bad in prop::collection::vec((any::<u64>(), -1000i64..1000), 0..3),
        literal in any::<bool>(),
        vector in any::<bool>(),
        layout in 0u8..4,
    ) {
        let base = IndexTransform::identity(IndexDomain::from_origin_shape(&[origin], &[n]).unwrap());
        let ni = n as i64;
        // in-bounds values of the dialect: literal coordinates, or positions (-n..n)
        let mut v: Vec<i64> = values.iter().map(|&r| match (literal, ni) {
            (_, 0) => 0,
            (true, _) => origin + (r % n) as i64,
            (false, _) => (r % (2 * n)) as i64 - ni,
        }).collect();
        for &(at, off) in &bad {
            if v.is_empty() {
                break;
            }
            let i = (at % v.len() as u64) as usize;
            // just outside the valid range, or far out
            v[i] = match (literal, off >= 0) {
                (true, true) => origin + ni + off,
                (true, false) => origin - 1 + off,
                (false, true) => ni + off,
                (false, false) => -ni - 1 + off,
            };
        }
        let dialect = if literal { Dialect::Literal } else { Dialect::Positional };
        let mode = if vector { SelectionMode::Vectorized } else { SelectionMode::Outer };
        // 0: a plain array; 1: reversed (negative stride); 2: a contiguous slice in the
        // middle of a larger buffer (its values start at an offset); 3: every other value
        // of a buffer (stride 2)
        let array: ArrayD<i64> = match layout {
            1 => {
                let mut r = v.clone();
                r.reverse();
                ndarray::Array1::from(r).slice_move(ndarray::s![..;-1]).into_dyn()
            }
            2 => {
                let mut padded = vec![i64::MIN; 3];
                padded.extend_from_slice(&v);
                padded.extend([i64::MAX; 2]);
                ndarray::Array1::from(padded).slice_move(ndarray::s![3..3 + v.len()]).into_dyn()
            }
            3 => {
                let spread: Vec<i64> = v.iter().flat_map(|&x| [x, i64::MIN]).collect();
                ndarray::Array1::from(spread).slice_move(ndarray::s![..;2]).into_dyn()
            }
            _ => ndarray::Array1::from(v.clone()).into_dyn(),
        };
        prop_assert_eq!(array.iter().copied().collect::<Vec<_>>(), v.clone());
        prop_assert_eq!(array.as_slice().is_some(), !matches!(layout, 1 | 3) || v.len() < 2);
        let got = base.select(&Selection::new(vec![SelectionItem::Array(array)]), mode, dialect);
        let in_bounds = |x: i64| if literal { origin <= x && x < origin + ni } else { -ni <= x && x < ni };
        match v.iter().find(|&&x| !in_bounds(x)) {
            None => {
                let t = got.unwrap();
                let want: Vec<i64> = v.iter().map(|&x| match (literal, x < 0) {
                    (true, _) => x,
                    (false, true) => origin + ni + x,
                    (false, false) => origin + x,
                }).collect();
                prop_assert_eq!(mapped(&t), want);
            }
            Some(&first) => {
                let one = Selection::new(vec![SelectionItem::Array(ndarray::Array1::from(vec![first]).into_dyn())]);
                let want = base.select(&one, mode, dialect).unwrap_err().to_string();
                prop_assert_eq!(got.unwrap_err().to_string(), want);
            }
        }
    }
}

/// A transposed (Fortran-order) 2-D index array in a vectorized selection: contiguous in
/// memory but not in C order. It selects as its C-order copy does, in both dialects, and
/// of two values out of bounds the error names the first in C order, not in memory order.
#[test]
fn transposed_vindex_arrays_select_and_fail_in_c_order() {
    let base = IndexTransform::identity(IndexDomain::from_origin_shape(&[10], &[6]).unwrap());
    // C order [[0, 1, 2], [3, 4, 5]] (as offsets into the axis); memory order 0, 3, 1, 4, 2, 5
    let offsets = ndarray::Array2::from_shape_vec((3, 2), vec![0i64, 3, 1, 4, 2, 5])
        .unwrap()
        .reversed_axes();
    assert!(offsets.as_slice().is_none() && offsets.as_slice_memory_order().is_some());
    for dialect in [Dialect::Literal, Dialect::Positional] {
        let shift = if dialect == Dialect::Literal { 10 } else { 0 };
        let array = (&offsets + shift).into_dyn();
        assert!(
            array.as_slice().is_none(),
            "the test needs an F-order array"
        );
        let standard = array.as_standard_layout().into_owned();
        let select = |a: ArrayD<i64>| {
            base.select(
                &Selection::new(vec![SelectionItem::Array(a)]),
                SelectionMode::Vectorized,
                dialect,
            )
        };
        let (got, want) = (select(array.clone()).unwrap(), select(standard).unwrap());
        assert_eq!(got.domain().shape(), &[2, 3]);
        assert_eq!(mapped(&got), mapped(&want));
        assert_eq!(mapped(&got), vec![10, 11, 12, 13, 14, 15]);
        // out of bounds at C positions [0, 2] (first in C order) and [1, 0] (first in memory)
        let mut bad = array.clone();
        bad[[0, 2]] = 100 + shift;
        bad[[1, 0]] = 200 + shift;
        let one = ndarray::Array1::from(vec![100 + shift]).into_dyn();
        assert_eq!(
            select(bad).unwrap_err().to_string(),
            select(one).unwrap_err().to_string()
        );
    }
}
