//! The porting checklist of indexing-and-planning.md §14, items 1–8: domains, maps,
//! literal slices, integers and keys, basic indexing over arrays, oindex/vindex,
//! the positional dialect and composition.

use ndarray::{ArrayD, IxDyn, array};
use zarrflow::index::{
    Dialect, IndexArray, IndexArrayStructure, IndexDomain, IndexError, IndexTransform, NarrowItem,
    NewAxis, OutputIndexMap, Selection, SelectionItem, SelectionMode, Slice, index_array_from,
};
use zarrflow::sel;

fn t(shape: &[u64]) -> IndexTransform {
    IndexTransform::from_shape(shape).unwrap()
}

fn bounds(t: &IndexTransform) -> Vec<(i64, i64)> {
    (0..t.input_rank())
        .map(|d| t.domain().interval(d))
        .collect()
}

/// All output points in C order of the input domain.
fn cells(t: &IndexTransform) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    t.for_each_mapped(|_, o| out.push(o.to_vec())).unwrap();
    out
}

fn cells1(t: &IndexTransform) -> Vec<i64> {
    cells(t).into_iter().map(|p| p[0]).collect()
}

fn dim(t: &IndexTransform, o: usize) -> (i64, i64) {
    match t.output()[o] {
        OutputIndexMap::Dimension { offset, stride, .. } => (offset, stride),
        ref m => panic!("expected a dimension map, got {m:?}"),
    }
}

fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Selection {
    Selection::new(vec![SelectionItem::Slice(Slice { start, stop, step })])
}

fn positional(
    t: &IndexTransform,
    s: &Selection,
    mode: SelectionMode,
) -> Result<IndexTransform, IndexError> {
    t.select(s, mode, Dialect::Positional)
}

fn array_values(m: &OutputIndexMap) -> (Vec<usize>, Vec<i64>) {
    match m {
        OutputIndexMap::Array { array, .. } => (
            array.shape().to_vec(),
            array.view().iter().copied().collect(),
        ),
        other => panic!("expected an array map, got {other:?}"),
    }
}

// ---------------------------------------------------------------- 1. domains

#[test]
fn domain_narrow_rules() {
    let d = IndexDomain::from_shape(&[10]).unwrap();
    let r = |s, e| NarrowItem::Range {
        start: Some(s),
        stop: Some(e),
        step: 1,
    };
    assert!(matches!(
        d.narrow(&[r(-5, 100)]),
        Err(IndexError::OutOfBounds(_))
    ));
    assert!(matches!(
        d.narrow(&[r(20, 30)]),
        Err(IndexError::OutOfBounds(_))
    ));
    let step2 = NarrowItem::Range {
        start: Some(0),
        stop: Some(4),
        step: 2,
    };
    assert!(matches!(
        d.narrow(&[step2]),
        Err(IndexError::InvalidArgument(_))
    ));
    let reversed = d.narrow(&[r(7, 3)]).unwrap();
    assert_eq!(reversed.shape(), vec![0]);
    assert_eq!(
        d.narrow(&[NarrowItem::Index(4)]).unwrap().interval(0),
        (4, 5)
    );
    assert!(matches!(
        d.narrow(&[NarrowItem::Index(10)]),
        Err(IndexError::OutOfBounds(_))
    ));
}

#[test]
fn domain_contains_intersect_translate() {
    let d = IndexDomain::new(vec![-3, 0], vec![2, 4]).unwrap();
    assert!(d.contains(&[-3, 3]));
    assert!(!d.contains(&[2, 0]));
    assert!(!d.contains(&[0]), "wrong rank is not contained");
    let touching = IndexDomain::new(vec![2, 0], vec![5, 4]).unwrap();
    assert_eq!(d.intersect(&touching).unwrap(), None);
    let overlap = IndexDomain::new(vec![0, 1], vec![5, 9]).unwrap();
    assert_eq!(
        d.intersect(&overlap).unwrap().unwrap(),
        IndexDomain::new(vec![0, 1], vec![2, 4]).unwrap()
    );
    assert!(
        d.intersect(&IndexDomain::from_shape(&[3]).unwrap())
            .is_err()
    );
    let empty_inside = IndexDomain::new(vec![0, 1], vec![0, 1]).unwrap();
    assert!(d.contains_domain(&empty_inside));
    let empty_outside = IndexDomain::new(vec![9, 1], vec![9, 1]).unwrap();
    assert!(
        !d.contains_domain(&empty_outside),
        "bounds are compared even when empty"
    );
    assert_eq!(
        d.translate(&[3, -1]).unwrap(),
        IndexDomain::new(vec![0, -1], vec![5, 3]).unwrap()
    );
    assert!(matches!(
        d.translate(&[i64::MAX, 0]),
        Err(IndexError::Overflow(_))
    ));
}

#[test]
fn domain_invariants_and_labels() {
    assert!(IndexDomain::new(vec![3], vec![2]).is_err());
    assert!(IndexDomain::new(vec![0], vec![0]).unwrap().is_empty());
    let r0 = IndexDomain::from_shape(&[]).unwrap();
    assert_eq!(r0.rank(), 0);
    assert!(!r0.is_empty());
    assert_eq!(r0.num_elements(), Some(1));
    assert!(IndexDomain::from_shape(&[1; 33]).is_err());
    assert!(IndexDomain::from_shape(&[1; 32]).is_ok());
    let l = IndexDomain::from_shape(&[2, 3])
        .unwrap()
        .with_labels(vec!["y".into(), "".into()])
        .unwrap();
    assert_eq!(l.label(0), "y");
    assert_eq!(format!("{l}"), r#"{ "y": [0, 2), [0, 3) }"#);
    // Indexing builds a new domain and drops labels.
    let lt = IndexTransform::identity(l);
    assert_eq!(lt.index(&sel![0..1]).unwrap().domain().labels(), None);
}

// ---------------------------------------------------------------- 2. maps

#[test]
fn index_arrays_are_immutable_copies_equal_across_dtypes() {
    let mut src: ArrayD<i32> = array![3, 1, 2].into_dyn();
    let a = IndexArray::try_from_ints(&src).unwrap();
    src[[0]] = 99;
    assert_eq!(a.view().iter().copied().collect::<Vec<_>>(), vec![3, 1, 2]);
    let b = IndexArray::try_from_ints(&array![3u8, 1, 2].into_dyn()).unwrap();
    assert_eq!(a, b);
    let big = array![u64::MAX].into_dyn();
    assert!(matches!(
        IndexArray::try_from_ints(&big),
        Err(IndexError::InvalidType(_))
    ));
    assert!(matches!(
        index_array_from(&big),
        Err(IndexError::InvalidType(_))
    ));
    assert!(index_array_from(&array![i64::MAX as u64].into_dyn()).is_ok());
    assert!(
        Selection::parse("[1.5, 2]").is_err(),
        "float index arrays are refused"
    );
}

#[test]
fn dependency_axes_and_singleton_collapse() {
    let a = IndexArray::new(ArrayD::zeros(IxDyn(&[0, 2])));
    assert_eq!(
        a.dependency_axes(),
        vec![1],
        "a size-0 axis is not a dependency axis"
    );
    let one = IndexArray::new(array![[7]].into_dyn());
    assert_eq!(
        OutputIndexMap::array_or_constant(one, 2, 3).unwrap(),
        OutputIndexMap::constant(23)
    );
    let empty = IndexArray::new(ArrayD::zeros(IxDyn(&[0])));
    assert!(matches!(
        OutputIndexMap::array_or_constant(empty, 0, 1).unwrap(),
        OutputIndexMap::Array { .. }
    ));
    // Selection collapses one-element selections to constants.
    let g = t(&[10]).oindex(&sel![[4]]).unwrap();
    assert_eq!(g.output()[0], OutputIndexMap::constant(4));
    assert_eq!(bounds(&g), vec![(0, 1)]);
}

#[test]
fn transform_validation() {
    let d = IndexDomain::from_shape(&[3, 4]).unwrap();
    assert!(IndexTransform::new(d.clone(), vec![OutputIndexMap::dimension(2, 0, 1)]).is_err());
    let wrong = IndexArray::new(ArrayD::zeros(IxDyn(&[3, 2])));
    assert!(
        IndexTransform::new(
            d.clone(),
            vec![OutputIndexMap::Array {
                array: wrong,
                offset: 0,
                stride: 1
            }]
        )
        .is_err()
    );
    let rank1 = IndexArray::new(ArrayD::zeros(IxDyn(&[3])));
    assert!(
        IndexTransform::new(
            d.clone(),
            vec![OutputIndexMap::Array {
                array: rank1,
                offset: 0,
                stride: 1
            }]
        )
        .is_err()
    );
    let bcast = IndexArray::new(ArrayD::zeros(IxDyn(&[3, 1])));
    assert!(
        IndexTransform::new(
            d,
            vec![OutputIndexMap::Array {
                array: bcast,
                offset: 0,
                stride: 1
            }]
        )
        .is_ok()
    );
}

// ---------------------------------------------------------------- 3. literal slices

#[test]
fn literal_slice_table() {
    // (extent, lo-of-domain, start, stop, step, domain, offset, stride, cells)
    struct Row(
        u64,
        i64,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        (i64, i64),
        Option<(i64, i64)>,
        Vec<i64>,
    );
    let rows = vec![
        Row(
            20,
            0,
            None,
            None,
            Some(-1),
            (-19, 1),
            Some((0, -1)),
            (0..20).rev().collect(),
        ),
        Row(
            20,
            0,
            Some(15),
            Some(5),
            Some(-2),
            (-7, -2),
            Some((1, -2)),
            vec![15, 13, 11, 9, 7],
        ),
        Row(
            12,
            0,
            Some(5),
            Some(12),
            Some(2),
            (2, 6),
            Some((1, 2)),
            vec![5, 7, 9, 11],
        ),
        Row(
            12,
            0,
            Some(7),
            Some(12),
            Some(3),
            (2, 4),
            Some((1, 3)),
            vec![7, 10],
        ),
        Row(
            10,
            0,
            Some(1),
            Some(9),
            Some(3),
            (0, 3),
            Some((1, 3)),
            vec![1, 4, 7],
        ),
        Row(
            20,
            -10,
            Some(-1),
            Some(-6),
            Some(-2),
            (0, 3),
            Some((-1, -2)),
            vec![-1, -3, -5],
        ),
        Row(
            10,
            0,
            Some(9),
            Some(0),
            Some(-2),
            (-4, 1),
            Some((1, -2)),
            vec![9, 7, 5, 3, 1],
        ),
        Row(
            10,
            0,
            Some(9),
            Some(0),
            Some(-3),
            (-3, 0),
            Some((0, -3)),
            vec![9, 6, 3],
        ),
        Row(10, 0, Some(100), Some(100), None, (100, 100), None, vec![]),
        Row(
            20,
            0,
            Some(25),
            Some(25),
            Some(-1),
            (-25, -25),
            None,
            vec![],
        ),
        Row(10, 0, Some(13), Some(13), None, (13, 13), None, vec![]),
        Row(
            10,
            0,
            Some(2),
            Some(8),
            None,
            (2, 8),
            Some((0, 1)),
            (2..8).collect(),
        ),
    ];
    for Row(n, lo, start, stop, step, dom, map, expect) in rows {
        let base = IndexTransform::identity(IndexDomain::from_origin_shape(&[lo], &[n]).unwrap());
        let r = base.index(&slice(start, stop, step)).unwrap();
        assert_eq!(bounds(&r), vec![dom], "{start:?}:{stop:?}:{step:?}");
        if let Some(m) = map {
            assert_eq!(dim(&r, 0), m, "{start:?}:{stop:?}:{step:?}");
        }
        assert_eq!(cells1(&r), expect, "{start:?}:{stop:?}:{step:?}");
    }
}

#[test]
fn literal_slice_errors() {
    let t10 = t(&[10]);
    assert!(matches!(
        t10.index(&slice(Some(3), Some(8), Some(-1))),
        Err(IndexError::InvalidSelection(_))
    ));
    assert!(matches!(
        t10.index(&slice(Some(5), Some(2), None)),
        Err(IndexError::InvalidSelection(_))
    ));
    for (s, e) in [(Some(5), Some(100)), (Some(-3), None), (Some(12), Some(14))] {
        assert!(
            matches!(
                t10.index(&slice(s, e, None)),
                Err(IndexError::OutOfBounds(_))
            ),
            "{s:?}:{e:?}"
        );
    }
    assert!(matches!(
        t10.index(&slice(None, None, Some(0))),
        Err(IndexError::InvalidSelection(_))
    ));
    let msg = t10
        .index(&slice(Some(5), Some(100), None))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("dimension 0") && msg.contains("[0, 10)"),
        "{msg}"
    );
}

#[test]
fn literal_slice_composition_rows() {
    let t100 = t(&[100]);
    let a = t100
        .index(&sel![10..50])
        .unwrap()
        .index(&sel![15..30])
        .unwrap();
    assert_eq!(bounds(&a), vec![(15, 30)]);
    assert_eq!(dim(&a, 0), (0, 1));
    let b = t100.index(&sel![..;2]).unwrap().index(&sel![..;3]).unwrap();
    assert_eq!(bounds(&b), vec![(0, 17)]);
    assert_eq!(dim(&b, 0), (0, 6));
    assert_eq!(*cells1(&b).last().unwrap(), 96);
    let t20 = t(&[20]);
    let c = t20
        .index(&sel![..;-1])
        .unwrap()
        .index(&sel![..;-1])
        .unwrap();
    assert_eq!(bounds(&c), vec![(0, 20)]);
    assert_eq!(dim(&c, 0), (0, 1));
    let d = t20
        .index(&sel![0..20;2])
        .unwrap()
        .index(&sel![..;-1])
        .unwrap();
    assert_eq!(bounds(&d), vec![(-9, 1)]);
    assert_eq!(dim(&d, 0), (0, -2));
    assert_eq!(
        cells1(&d),
        (0..10).rev().map(|k| 2 * k).collect::<Vec<i64>>()
    );
    let e = t(&[10, 20]).index(&sel![2..8, 5..15]).unwrap();
    assert_eq!(e.domain().origin(), &[2, 5]);
}

// ---------------------------------------------------------------- 4. integers and keys

#[test]
fn literal_integers_and_keys() {
    let t10 = t(&[10]);
    assert!(matches!(
        t10.index(&sel![10]),
        Err(IndexError::OutOfBounds(_))
    ));
    assert!(matches!(
        t10.index(&sel![-1]),
        Err(IndexError::OutOfBounds(_))
    ));
    let m5 = IndexTransform::identity(IndexDomain::new(vec![-5], vec![5]).unwrap());
    let r = m5.index(&sel![-3]).unwrap();
    assert_eq!(r.input_rank(), 0);
    assert_eq!(r.output()[0], OutputIndexMap::constant(-3));
    let n = t(&[3, 4]).index(&sel![NewAxis, 1, .., NewAxis]).unwrap();
    assert_eq!(bounds(&n), vec![(0, 1), (0, 4), (0, 1)]);
    assert_eq!(n.apply(&[0, 2, 0]).unwrap(), vec![1, 2]);
    let e = t(&[3, 4, 5]).index(&sel![..., 2]).unwrap();
    assert_eq!(e.domain().shape(), vec![3, 4]);
    let two = Selection::new(vec![SelectionItem::Ellipsis, SelectionItem::Ellipsis]);
    assert!(matches!(
        t(&[3]).index(&two),
        Err(IndexError::InvalidSelection(_))
    ));
    assert!(matches!(
        t(&[3]).index(&sel![0, 0]),
        Err(IndexError::InvalidSelection(_))
    ));
    // A boolean is never a scalar index: a 0-d mask is refused.
    let bool_scalar = Selection::new(vec![SelectionItem::Mask(ArrayD::from_elem(
        IxDyn(&[]),
        true,
    ))]);
    assert!(t(&[3]).vindex(&bool_scalar).is_err());
    assert!(
        t(&[3]).index(&sel![[1, 2]]).is_err(),
        "basic indexing refuses arrays"
    );
}

// ---------------------------------------------------------------- 5. basic over arrays

#[test]
fn basic_indexing_over_index_arrays() {
    let g = t(&[10]).oindex(&sel![[3, 1]]).unwrap();
    assert_eq!(
        g.index(&sel![0]).unwrap().output()[0],
        OutputIndexMap::constant(3)
    );
    let h = t(&[10, 5]).oindex(&sel![[3, 1, 2], ..]).unwrap();
    let r = h.index(&Selection::parse("2:-1:-1, :").unwrap()).unwrap();
    assert_eq!(bounds(&r), vec![(-2, 1), (0, 5)]);
    let (shape, values) = array_values(&r.output()[0]);
    assert_eq!(shape, vec![3, 1]);
    assert_eq!(values, vec![2, 1, 3]);
    assert_eq!(r.output()[1], OutputIndexMap::dimension(1, 0, 1));
}

// ---------------------------------------------------------------- 6. oindex / vindex

#[test]
fn oindex_domains_and_shapes() {
    let o = t(&[10, 20]).oindex(&sel![[2, 4], 5..15]).unwrap();
    assert_eq!(bounds(&o), vec![(0, 2), (5, 15)]);
    let two = t(&[10, 20]).oindex(&sel![[2, 4, 6], [1, 3]]).unwrap();
    assert_eq!(array_values(&two.output()[0]).0, vec![3, 1]);
    assert_eq!(array_values(&two.output()[1]).0, vec![1, 2]);
    assert_eq!(two.index_array_structure(), IndexArrayStructure::Orthogonal);
    let on = IndexTransform::identity(IndexDomain::new(vec![2], vec![10]).unwrap());
    assert!(on.oindex(&sel![[2, 9]]).is_ok());
    assert!(matches!(
        on.oindex(&sel![[1]]),
        Err(IndexError::OutOfBounds(_))
    ));
    assert!(matches!(
        on.oindex(&sel![[10]]),
        Err(IndexError::OutOfBounds(_))
    ));
    let m = t(&[4, 3])
        .oindex(&sel![[true, false, true, true], 1])
        .unwrap();
    assert_eq!(m.domain().shape(), vec![3]);
    assert_eq!(cells(&m), vec![vec![0, 1], vec![2, 1], vec![3, 1]]);
    assert!(
        t(&[4])
            .oindex(&Selection::new(vec![SelectionItem::Array(
                array![[1, 2]].into_dyn()
            )]))
            .is_err()
    );
}

#[test]
fn vindex_placement_follows_numpy() {
    let t345 = t(&[3, 4, 5]);
    let a = t345.vindex(&sel![.., [0, 1], [1, 2]]).unwrap();
    assert_eq!(a.domain().shape(), vec![3, 2]);
    let b = t345.vindex(&sel![[0, 1], .., [1, 2]]).unwrap();
    assert_eq!(b.domain().shape(), vec![2, 4]);
    assert_eq!(b.apply(&[1, 3]).unwrap(), vec![1, 3, 2]);
    let c = t345.vindex(&sel![[0, 1], [1, 2], ...]).unwrap();
    assert_eq!(c.domain().shape(), vec![2, 5]);
    // An ellipsis separates arrays even when it expands to nothing (NumPy).
    let d = t(&[5, 3, 4])
        .vindex(&sel![.., [0, 1], ..., [1, 2]])
        .unwrap();
    assert_eq!(d.domain().shape(), vec![2, 5]);
    // Integers take part in broadcasting and placement, as in NumPy.
    let s = t(&[2, 3, 4]).vindex(&sel![0, ..., [1, 2]]).unwrap();
    assert_eq!(s.domain().shape(), vec![2, 3]);
    let i = t345.vindex(&sel![.., 0, [1, 2]]).unwrap();
    assert_eq!(i.domain().shape(), vec![3, 2]);
    assert!(
        t345.vindex(&sel![[0, 1], [1, 2, 3]]).is_err(),
        "broadcast mismatch"
    );
}

#[test]
fn vindex_mask_and_outer_product_by_broadcasting() {
    let m = t(&[2, 3])
        .vindex(&sel![array![[true, false, true], [false, true, false]]])
        .unwrap();
    assert_eq!(m.domain().shape(), vec![3]);
    assert_eq!(array_values(&m.output()[0]).1, vec![0, 0, 1]);
    assert_eq!(array_values(&m.output()[1]).1, vec![0, 2, 1]);
    assert!(
        t(&[2, 3])
            .vindex(&sel![array![[true, false], [false, true]]])
            .is_err(),
        "mask shape must match"
    );
    let i = array![[1], [3]];
    let j = array![[0, 2, 4]];
    let o = t(&[5, 6]).vindex(&sel![i, j]).unwrap();
    assert_eq!(o.domain().shape(), vec![2, 3]);
    assert_eq!(
        array_values(&o.output()[0]).0,
        vec![2, 1],
        "compact shapes are kept"
    );
    assert_eq!(o.index_array_structure(), IndexArrayStructure::Orthogonal);
    let corr = t(&[5, 6]).vindex(&sel![[1, 2], [3, 4]]).unwrap();
    assert_eq!(corr.index_array_structure(), IndexArrayStructure::General);
}

#[test]
fn fancy_on_fancy() {
    let f = t(&[10, 10])
        .oindex(&sel![[4, 1, 1], ..])
        .unwrap()
        .vindex(&sel![[0, 2], [5, 0]])
        .unwrap();
    assert_eq!(cells(&f), vec![vec![4, 5], vec![1, 0]]);
    let v = t(&[10, 10]).vindex(&sel![[1, 2], [3, 4]]).unwrap();
    let o = v.oindex(&sel![[1, 0, 1]]).unwrap();
    assert_eq!(cells(&o), vec![vec![2, 4], vec![1, 3], vec![2, 4]]);
    // oindex after vindex is a true outer product.
    let w = t(&[10, 10]).vindex(&sel![.., [1, 2]]).unwrap();
    assert_eq!(w.domain().shape(), vec![10, 2]);
    let p = w.oindex(&sel![[0, 9], [1, 0]]).unwrap();
    assert_eq!(
        cells(&p),
        vec![vec![0, 2], vec![0, 1], vec![9, 2], vec![9, 1]]
    );
}

// ---------------------------------------------------------------- 7. positional

#[test]
fn positional_wrap_clamp_and_empty() {
    let a = t(&[10]);
    let basic = SelectionMode::Basic;
    assert_eq!(cells1(&positional(&a, &sel![-1], basic).unwrap()), vec![9]);
    assert!(matches!(
        positional(&a, &sel![10], basic),
        Err(IndexError::OutOfBounds(_))
    ));
    assert!(matches!(
        positional(&a, &sel![-11], basic),
        Err(IndexError::OutOfBounds(_))
    ));
    assert_eq!(
        cells1(&positional(&a, &sel![5..100], basic).unwrap()),
        vec![5, 6, 7, 8, 9]
    );
    assert_eq!(
        cells1(&positional(&a, &sel![-3..], basic).unwrap()),
        vec![7, 8, 9]
    );
    assert!(cells1(&positional(&a, &Selection::parse("5:2").unwrap(), basic).unwrap()).is_empty());
    assert!(
        cells1(&positional(&a, &Selection::parse("2:5:-1").unwrap(), basic).unwrap()).is_empty()
    );
    assert!(matches!(
        positional(&a, &slice(None, None, Some(0)), basic),
        Err(IndexError::InvalidSelection(_))
    ));
    assert_eq!(
        cells1(&positional(&a, &sel![..;-3], basic).unwrap()),
        vec![9, 6, 3, 0]
    );
    assert_eq!(
        cells1(&positional(&a, &Selection::parse("-2:-8:-2").unwrap(), basic).unwrap()),
        vec![8, 6, 4]
    );
}

#[test]
fn positional_views_keep_literal_domains() {
    let a = t(&[30]);
    let basic = SelectionMode::Basic;
    let v = positional(&a, &sel![10..20], basic).unwrap();
    assert_eq!(bounds(&v), vec![(10, 20)]);
    assert_eq!(
        bounds(&positional(&v, &sel![2..5], basic).unwrap()),
        vec![(12, 15)]
    );
    assert_eq!(cells1(&positional(&v, &sel![-1], basic).unwrap()), vec![19]);
    let r = positional(&t(&[10]), &sel![..;-1], basic).unwrap();
    assert_eq!(bounds(&r), vec![(-9, 1)]);
    assert_eq!(cells1(&positional(&r, &sel![0], basic).unwrap()), vec![9]);
    let r6 = positional(&t(&[6]), &sel![..;-1], basic).unwrap();
    assert_eq!(
        bounds(&positional(&r6, &sel![1..3], basic).unwrap()),
        vec![(-4, -2)]
    );
}

#[test]
fn positional_arrays_all_dtypes_and_origins() {
    for origin in [-3i64, 0, 10] {
        let base =
            IndexTransform::identity(IndexDomain::from_origin_shape(&[origin], &[6]).unwrap());
        let check = |item: SelectionItem| {
            let s = Selection::new(vec![item]);
            let r = positional(&base, &s, SelectionMode::Outer).unwrap();
            assert_eq!(
                cells1(&r),
                vec![origin + 5, origin + 1, origin],
                "origin {origin}"
            );
        };
        check(index_array_from(&array![-1i8, 1, 0].into_dyn()).unwrap());
        check(index_array_from(&array![-1i16, 1, 0].into_dyn()).unwrap());
        check(index_array_from(&array![-1i32, 1, 0].into_dyn()).unwrap());
        check(index_array_from(&array![-1i64, 1, 0].into_dyn()).unwrap());
        check(index_array_from(&array![5u8, 1, 0].into_dyn()).unwrap());
        check(index_array_from(&array![5u16, 1, 0].into_dyn()).unwrap());
        check(index_array_from(&array![5u32, 1, 0].into_dyn()).unwrap());
        check(index_array_from(&array![5u64, 1, 0].into_dyn()).unwrap());
        for bad in [i64::MIN, i64::MAX, 6, -7] {
            let s = Selection::new(vec![SelectionItem::Array(array![bad].into_dyn())]);
            assert!(matches!(
                positional(&base, &s, SelectionMode::Outer),
                Err(IndexError::OutOfBounds(_))
            ));
        }
        let mask = positional(
            &base,
            &sel![[false, true, false, false, false, true]],
            SelectionMode::Outer,
        )
        .unwrap();
        assert_eq!(cells1(&mask), vec![origin + 1, origin + 5]);
        assert!(positional(&base, &sel![[true, false]], SelectionMode::Outer).is_err());
    }
}

#[test]
fn positional_vindex_and_empty_axis() {
    let s = positional(
        &t(&[2, 3, 4]),
        &sel![0, ..., [1, 2]],
        SelectionMode::Vectorized,
    )
    .unwrap();
    assert_eq!(
        s.domain().shape(),
        vec![2, 3],
        "NumPy places separated advanced indices first"
    );
    let e = t(&[2, 0, 2]).oindex(&sel![.., .., [1, 0]]).unwrap();
    assert_eq!(e.domain().shape(), vec![2, 0, 2]);
    let again = e.index(&sel![.., .., ..]).unwrap();
    assert_eq!(again.domain().shape(), vec![2, 0, 2]);
}

// ---------------------------------------------------------------- 8. composition

#[test]
fn compose_array_of_array() {
    let outer = t(&[3]).oindex(&sel![[0, 2, 1]]).unwrap();
    let inner = t(&[40]).oindex(&sel![[10, 20, 30]]).unwrap();
    let c = outer.compose(&inner).unwrap();
    assert_eq!(cells1(&c), vec![10, 30, 20]);
}

#[test]
fn compose_bounds_are_checked() {
    let inner = IndexTransform::identity(IndexDomain::from_shape(&[2]).unwrap());
    let minus3 = IndexTransform::new(
        IndexDomain::from_shape(&[4]).unwrap(),
        vec![OutputIndexMap::constant(-3)],
    )
    .unwrap();
    assert!(matches!(
        minus3.compose(&inner),
        Err(IndexError::OutOfBounds(_))
    ));
    let empty = IndexTransform::new(
        IndexDomain::from_shape(&[0]).unwrap(),
        vec![OutputIndexMap::constant(-3)],
    )
    .unwrap();
    assert!(
        empty.compose(&inner).is_ok(),
        "an empty outer domain is accepted"
    );
    let edge = IndexTransform::new(
        IndexDomain::from_shape(&[2]).unwrap(),
        vec![OutputIndexMap::dimension(0, 0, 1)],
    )
    .unwrap();
    assert!(edge.compose(&inner).is_ok());
    let crossing = IndexTransform::new(
        IndexDomain::from_shape(&[3]).unwrap(),
        vec![OutputIndexMap::dimension(0, 0, 1)],
    )
    .unwrap();
    assert!(matches!(
        crossing.compose(&inner),
        Err(IndexError::OutOfBounds(_))
    ));
    let big = IndexTransform::new(
        IndexDomain::from_shape(&[1]).unwrap(),
        vec![OutputIndexMap::dimension(0, i64::MAX - 1, 1)],
    )
    .unwrap();
    let wide = IndexDomain::new(vec![i64::MIN], vec![i64::MAX]).unwrap();
    let scaled = IndexTransform::new(wide, vec![OutputIndexMap::dimension(0, 0, 4)]).unwrap();
    assert!(matches!(big.compose(&scaled), Err(IndexError::Overflow(_))));
}

#[test]
fn compose_keeps_full_rank_for_lower_rank_inner() {
    let outer = IndexTransform::new(
        IndexDomain::from_shape(&[2, 3]).unwrap(),
        vec![OutputIndexMap::dimension(0, 0, 1)],
    )
    .unwrap();
    let inner = t(&[10]).oindex(&sel![[5, 6]]).unwrap();
    let c = outer.compose(&inner).unwrap();
    assert_eq!(array_values(&c.output()[0]), (vec![2, 1], vec![5, 6]));
    let two = t(&[4, 3]).vindex(&sel![[[0], [1]], [[2, 1]]]).unwrap();
    assert_eq!(two.domain().shape(), vec![2, 2]);
    let g = two
        .compose(&t(&[4, 3]).oindex(&sel![[3, 2, 1, 0], ..]).unwrap())
        .unwrap();
    assert_eq!(array_values(&g.output()[0]).0, vec![2, 1]);
}

#[test]
fn compose_equals_sequential_application_with_origins() {
    let inner = IndexTransform::identity(IndexDomain::new(vec![-5, 3], vec![5, 13]).unwrap())
        .index(&sel![..;-2, 4..12;3])
        .unwrap();
    let outer = inner
        .index(&sel![.., ..])
        .unwrap()
        .translate_domain_by(&[7, -2])
        .unwrap();
    let outer_only = IndexTransform::identity(inner.domain().clone())
        .translate_domain_by(&[7, -2])
        .unwrap();
    let composed = outer_only.compose(&inner).unwrap();
    assert_eq!(composed.domain(), outer.domain());
    outer
        .for_each_mapped(|p, out| {
            let mid = outer_only.apply(p).unwrap();
            assert_eq!(inner.apply(&mid).unwrap(), out.to_vec());
            assert_eq!(composed.apply(p).unwrap(), out.to_vec());
        })
        .unwrap();
}

#[test]
fn translate_and_apply() {
    let r = t(&[10]).index(&sel![..;-1]).unwrap();
    let z = r.zero_origin().unwrap();
    assert_eq!(bounds(&z), vec![(0, 10)]);
    assert_eq!(cells1(&z), cells1(&r));
    let shifted = r.translate_output(&[100]).unwrap();
    assert_eq!(cells1(&shifted)[0], 109);
    assert!(matches!(r.apply(&[1]), Err(IndexError::OutOfBounds(_))));
    let pts = array![[-9], [0]];
    assert_eq!(r.apply_many(pts.view()).unwrap(), array![[9], [0]]);
    let err = r
        .apply_many(array![[0], [5]].view())
        .unwrap_err()
        .to_string();
    assert!(err.contains("row 1"), "{err}");
    let o = t(&[10]).index(&sel![..;-1]).unwrap();
    assert!(matches!(
        IndexTransform::new(
            o.domain().clone(),
            vec![OutputIndexMap::dimension(0, i64::MIN, 2)]
        )
        .unwrap()
        .apply(&[-9]),
        Err(IndexError::Overflow(_))
    ));
}

#[test]
fn selection_strings_parse_and_print() {
    let s =
        Selection::parse("1:7:2, ..., [3,1,3], None, -4:, ::-2, 5, [[true,false],[false,true]]")
            .unwrap();
    assert_eq!(
        s.to_string(),
        "1:7:2, ..., [3, 1, 3], None, -4:, ::-2, 5, [[true, false], [false, true]]"
    );
    assert_eq!(Selection::parse(&s.to_string()).unwrap(), s);
    assert_eq!(Selection::parse("").unwrap(), Selection::all());
    assert_eq!(Selection::parse(" 3 , ").unwrap(), sel![3]);
    assert_eq!(
        Selection::parse("[]").unwrap().items()[0],
        SelectionItem::Array(ArrayD::zeros(IxDyn(&[0])))
    );
    for bad in [
        "1:2:3:4",
        "[1, [2]]",
        "[[1,2],[3]]",
        "[1.5]",
        "1.5",
        "[1, true]",
        "abc",
        "1,,2",
        "[1,2",
        "99999999999999999999",
        "-",
    ] {
        let e = Selection::parse(bad).unwrap_err();
        assert!(
            matches!(e, IndexError::Syntax { column, .. } if column >= 1),
            "{bad}: {e}"
        );
        assert!(e.to_string().contains("column"), "{e}");
    }
}

#[test]
fn rust_ranges_follow_ndarray_semantics() {
    let t10 = t(&[10]);
    assert_eq!(cells1(&t10.index(&sel![2..5;-1]).unwrap()), vec![4, 3, 2]);
    assert_eq!(cells1(&t10.index(&sel![2..=5;-2]).unwrap()), vec![5, 3]);
    assert_eq!(cells1(&t10.index(&sel![..;-4]).unwrap()), vec![9, 5, 1]);
    let basic = SelectionMode::Basic;
    assert_eq!(
        cells1(&positional(&t10, &sel![-3..;-1], basic).unwrap()),
        vec![9, 8, 7]
    );
    assert_eq!(
        cells1(&positional(&t10, &sel![0..3;-1], basic).unwrap()),
        vec![2, 1, 0]
    );
    assert_eq!(
        cells1(&positional(&t10, &sel![-100..100;3], basic).unwrap()),
        vec![0, 3, 6, 9]
    );
    assert!(cells1(&positional(&t10, &sel![7..7;-1], basic).unwrap()).is_empty());
    assert!(positional(&t10, &sel![..;0], basic).is_err());
    // Literal ranges are literal coordinates: no wrapping, no clamping.
    assert!(matches!(
        t10.index(&sel![-3..;-1]),
        Err(IndexError::OutOfBounds(_))
    ));
}

#[test]
fn intersect_narrows_exactly() {
    let a = IndexTransform::new(
        IndexDomain::from_shape(&[10]).unwrap(),
        vec![OutputIndexMap::dimension(0, 1, 2)],
    )
    .unwrap();
    let i = a
        .intersect(&IndexDomain::new(vec![4], vec![8]).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(bounds(&i.transform), vec![(2, 4)]);
    assert_eq!(cells1(&i.transform), vec![5, 7]);
    let big = 1i64 << 60;
    let b = IndexTransform::new(
        IndexDomain::from_shape(&[10]).unwrap(),
        vec![OutputIndexMap::dimension(0, big, -3)],
    )
    .unwrap();
    let j = b
        .intersect(&IndexDomain::new(vec![big - 10], vec![big - 2]).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(cells1(&j.transform), vec![big - 3, big - 6, big - 9]);
    assert!(
        a.intersect(&IndexDomain::new(vec![100], vec![200]).unwrap())
            .unwrap()
            .is_none()
    );
    let c = t(&[4]).index(&sel![2]).unwrap();
    assert!(
        c.intersect(&IndexDomain::new(vec![0], vec![2]).unwrap())
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        c.intersect(&IndexDomain::from_shape(&[2, 2]).unwrap()),
        Err(IndexError::RankMismatch(_))
    ));
}

#[test]
fn rank_mismatches_are_typed_errors_naming_the_ranks() {
    let a = t(&[3, 4]);
    let e = a.compose(&t(&[3])).unwrap_err();
    assert!(matches!(e, IndexError::RankMismatch(_)));
    assert!(
        e.to_string().contains("output rank 2") && e.to_string().contains("input rank 1"),
        "{e}"
    );
    assert!(matches!(
        a.translate_output(&[1]),
        Err(IndexError::RankMismatch(_))
    ));
    assert!(matches!(
        a.translate_domain_by(&[1, 2, 3]),
        Err(IndexError::RankMismatch(_))
    ));
    assert!(matches!(
        a.apply_many(array![[1]].view()),
        Err(IndexError::RankMismatch(_))
    ));
    assert!(matches!(
        a.gather_from(&ArrayD::<i64>::zeros(IxDyn(&[3]))),
        Err(IndexError::RankMismatch(_))
    ));
    assert!(!a.domain().contains(&[1]));
    let e = a.index(&sel![0, 0, 0]).unwrap_err();
    assert!(e.to_string().contains("too many indices"), "{e}");
}

/// Errors carry their facts as data: dimension, value and bounds; ranks; syntax columns.
#[test]
fn errors_carry_typed_payloads() {
    use zarrflow::index::{Bounds, Coordinates, OutOfBounds, RankMismatch};
    let t = IndexTransform::from_shape(&[10, 20]).unwrap();
    let positional = t
        .select(
            &Selection::parse("3, 25").unwrap(),
            SelectionMode::Basic,
            Dialect::Positional,
        )
        .unwrap_err();
    match &positional {
        IndexError::OutOfBounds(b)
            if matches!(
                **b,
                OutOfBounds {
                    dimension: Some(1),
                    found: Coordinates::Index(25),
                    bounds: Bounds::Extent(20),
                    ..
                }
            ) => {}
        e => panic!("{e:?}"),
    }
    let literal = t.index(&sel![1..4;1, 18..25;2]).unwrap_err();
    match &literal {
        IndexError::OutOfBounds(b)
            if matches!(
                **b,
                OutOfBounds {
                    dimension: Some(1),
                    found: Coordinates::Interval {
                        first: 18,
                        last: 24
                    },
                    bounds: Bounds::Interval {
                        inclusive_min: 0,
                        exclusive_max: 20,
                    },
                    ..
                }
            ) => {}
        e => panic!("{e:?}"),
    }
    assert!(literal.to_string().contains("in dimension 1"), "{literal}");
    let point = t.apply(&[10, 0]).unwrap_err();
    assert!(
        matches!(&point, IndexError::OutOfBounds(b) if b.found == Coordinates::Point(vec![10, 0])),
        "{point:?}"
    );
    let rank = IndexDomain::new(vec![0, 0], vec![1]).unwrap_err();
    assert!(
        matches!(
            rank,
            IndexError::RankMismatch(RankMismatch {
                expected: 2,
                found: 1,
                ..
            })
        ),
        "{rank:?}"
    );
    let syntax = Selection::parse("1, ,2").unwrap_err();
    assert!(
        matches!(syntax, IndexError::Syntax { column: 4, .. }),
        "{syntax:?}"
    );
}
