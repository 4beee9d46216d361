//! Selections in the user's integer types: `sel!` and `Selection` take usize, u64, i32, ...
//! ranges of them and index arrays of them, with the same meaning as i64.

use ndarray::{Array1, array};
use zarrflow::index::{IndexTransform, Selection, SelectionItem, Slice};
use zarrflow::sel;

fn t() -> IndexTransform {
    IndexTransform::from_shape(&[10, 20]).unwrap()
}

#[test]
fn literals_infer_and_mean_what_i64_means() {
    // unsuffixed literals still compile (they take i32)
    let a = sel![1..7;2, ..;-1];
    assert_eq!(t().index(&a).unwrap().domain().shape(), vec![3, 20]);
    let b = sel![[3, 1, 3], 5];
    assert_eq!(t().oindex(&b).unwrap().domain().shape(), vec![3]);
    assert_eq!(sel![3], Selection::new(vec![SelectionItem::Index(3)]));
    assert_eq!(sel![-1], Selection::new(vec![SelectionItem::Index(-1)]));
}

#[test]
fn usize_u64_and_i32_values() {
    let n: usize = 7;
    let m: u64 = 4;
    let k: i32 = 2;
    let step: usize = 2;
    let want = sel![1i64..7i64;2i64, 4i64];
    assert_eq!(sel![1..n;step, m], want);
    assert_eq!(sel![1usize..n;2, m], want);
    assert_eq!(sel![k..=6, ..m], {
        Selection::new(vec![
            SelectionItem::Slice(Slice {
                start: Some(2),
                stop: Some(7),
                step: None,
            }),
            SelectionItem::Slice(Slice {
                start: None,
                stop: Some(4),
                step: None,
            }),
        ])
    });
    assert_eq!(sel![n.., ..=m], sel![7i64.., ..5i64]);
}

#[test]
fn index_arrays_of_any_integer_type() {
    let want = sel![vec![3i64, 1, 3]];
    let u: Vec<usize> = vec![3, 1, 3];
    assert_eq!(sel![u.clone()], want);
    assert_eq!(sel![&u], want);
    assert_eq!(sel![u.as_slice()], want);
    assert_eq!(sel![[3u64, 1, 3]], want);
    assert_eq!(sel![Array1::from(vec![3u32, 1, 3])], want);
    let two_d = array![[1usize, 2], [3, 4]];
    assert_eq!(sel![&two_d], sel![array![[1i64, 2], [3, 4]]]);
    assert_eq!(sel![two_d.view()], sel![[[1i64, 2], [3, 4]]]);
    let mut s = Selection::all();
    s.push(2usize..5);
    s.push(vec![0u16, 9]);
    assert_eq!(s, sel![2i64..5i64, vec![0i64, 9]]);
}

#[test]
fn values_beyond_i64_saturate_past_the_end() {
    // a u64 past i64::MAX is past the end of every array: an out-of-bounds index ...
    assert!(t().index(&sel![u64::MAX]).is_err());
    assert!(t().vindex(&sel![vec![u64::MAX]]).is_err());
    // ... and a slice bound that clamps (positional dialect)
    let view = t()
        .select(
            &sel![3..u64::MAX],
            zarrflow::index::SelectionMode::Basic,
            zarrflow::index::Dialect::Positional,
        )
        .unwrap();
    assert_eq!(view.domain().shape(), vec![7, 20]);
}
