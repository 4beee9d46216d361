//! The planner's fast paths for index arrays (sorted input, counting sorts, regular-grid
//! division) against a naive reference: every point looked up through the grid's scalar
//! protocol, then grouped by a stable sort on the chunk id (tuple).

use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use zarrflow::grid::{DimensionGrid, RectilinearGrid, RegularGrid};
use zarrflow::index::{IndexArray, IndexDomain, IndexTransform, OutputIndexMap};
use zarrflow::plan::{PlanError, Table, plan_chunks};

/// A grid and its region `[lo, hi)`.
fn grid_strategy() -> impl Strategy<Value = (Arc<dyn DimensionGrid>, i64, i64)> {
    prop_oneof![
        (1u64..8, 1u64..80).prop_map(|(size, extent)| {
            (
                Arc::new(RegularGrid::new(size, extent).unwrap()) as Arc<dyn DimensionGrid>,
                0,
                extent as i64,
            )
        }),
        // Negative chunk ids, a clipped last chunk.
        (1u64..6, -20i64..20, 0i64..4, 1i64..60).prop_map(|(size, origin, back, width)| {
            let lo = origin - size as i64 * back;
            let g = RegularGrid::with_region(size, origin, lo, lo + width).unwrap();
            (Arc::new(g) as Arc<dyn DimensionGrid>, lo, lo + width)
        }),
        (
            prop::collection::vec((1u64..6, 1u64..5), 1..6),
            any::<u64>()
        )
            .prop_map(|(pairs, pick)| {
                let total: u64 = pairs.iter().map(|(s, c)| s * c).sum();
                let extent = 1 + pick % total;
                let g = RectilinearGrid::from_run_lengths(&pairs, extent).unwrap();
                (Arc::new(g) as Arc<dyn DimensionGrid>, 0, extent as i64)
            }),
    ]
}

/// How the values are arranged.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Random,
    Sorted,
    SortedWithRepeats,
    /// Sorted, then one element smaller than the last appended.
    SortedThenOneBack,
    /// Every value in one chunk (the chunk of the first drawn value), sorted or not.
    OneChunk(bool),
    Empty,
    One,
}

fn shape_strategy() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Random),
        Just(Shape::Sorted),
        Just(Shape::SortedWithRepeats),
        Just(Shape::SortedThenOneBack),
        any::<bool>().prop_map(Shape::OneChunk),
        Just(Shape::Empty),
        Just(Shape::One),
    ]
}

/// Storage coordinates in `[lo, hi)` arranged as `shape` says.
fn storage_of(shape: Shape, draws: &[u64], grid: &dyn DimensionGrid, lo: i64, hi: i64) -> Vec<i64> {
    let w = (hi - lo) as u64;
    let mut v: Vec<i64> = draws.iter().map(|&d| lo + (d % w) as i64).collect();
    match shape {
        Shape::Random => {}
        Shape::Sorted => v.sort_unstable(),
        Shape::SortedWithRepeats => {
            let copy = v.clone();
            v.extend(copy.iter().step_by(2));
            v.sort_unstable();
        }
        Shape::SortedThenOneBack => {
            v.sort_unstable();
            if let Some(&last) = v.last()
                && last > lo
            {
                v.push(lo + (draws[0] % (last - lo) as u64) as i64);
            }
        }
        Shape::OneChunk(sorted) => {
            if let Some(&first) = v.first() {
                let c = grid.index_to_chunk(first).unwrap();
                let start = grid.chunk_offset(c).unwrap();
                let ext = grid.data_size(c).unwrap() as i64;
                for (x, &d) in v.iter_mut().zip(draws) {
                    *x = start + (d % ext as u64) as i64;
                }
                if sorted {
                    v.sort_unstable();
                }
            }
        }
        Shape::Empty => v.clear(),
        Shape::One => v.truncate(1),
    }
    v
}

/// The index values whose storage `offset + stride * a` is `storage` (stride ±1).
fn values_of(storage: &[i64], offset: i64, stride: i64) -> Vec<i64> {
    storage.iter().map(|&s| (s - offset) * stride).collect()
}

fn oindex_transform(values: Vec<i64>, offset: i64, stride: i64) -> IndexTransform {
    let n = values.len();
    let array = IndexArray::new(ArrayD::from_shape_vec(IxDyn(&[n]), values).unwrap());
    IndexTransform::new(
        IndexDomain::from_shape(&[n as u64]).unwrap(),
        vec![OutputIndexMap::Array {
            array,
            offset,
            stride,
        }],
    )
    .unwrap()
}

/// Reference rows: `(chunk tuple, start tuple, extent tuple, size tuple, points)` where each
/// point is `(local coordinates, position)`, points in request order within a row.
type Row = (
    Vec<i64>,
    Vec<i64>,
    Vec<u64>,
    Vec<u64>,
    Vec<(Vec<i64>, usize)>,
);

fn reference(storage: &[Vec<i64>], grids: &[Arc<dyn DimensionGrid>]) -> Vec<Row> {
    let n = storage.first().map_or(0, Vec::len);
    let mut keyed: Vec<(Vec<i64>, usize)> = (0..n)
        .map(|p| {
            let c = storage
                .iter()
                .zip(grids)
                .map(|(s, g)| g.index_to_chunk(s[p]).unwrap())
                .collect();
            (c, p)
        })
        .collect();
    keyed.sort(); // (chunk tuple, position): stable in position
    let mut rows: Vec<Row> = Vec::new();
    for (c, p) in keyed {
        if rows.last().is_none_or(|r| r.0 != c) {
            let starts = c
                .iter()
                .zip(grids)
                .map(|(&c, g)| g.chunk_offset(c).unwrap())
                .collect();
            let exts = c
                .iter()
                .zip(grids)
                .map(|(&c, g)| g.data_size(c).unwrap())
                .collect();
            let sizes = c
                .iter()
                .zip(grids)
                .map(|(&c, g)| g.chunk_size(c).unwrap())
                .collect();
            rows.push((c.clone(), starts, exts, sizes, vec![]));
        }
        let r = rows.last_mut().unwrap();
        let local = storage.iter().zip(&r.1).map(|(s, st)| s[p] - st).collect();
        r.4.push((local, p));
    }
    rows
}

fn check_oindex(
    storage: &[i64],
    offset: i64,
    stride: i64,
    grid: Arc<dyn DimensionGrid>,
) -> Result<(), TestCaseError> {
    let t = oindex_transform(values_of(storage, offset, stride), offset, stride);
    let grids = vec![grid];
    let plan = plan_chunks(&t, &grids).unwrap();
    let p = plan.partition().unwrap();
    if storage.is_empty() {
        prop_assert_eq!(p.row_shape(), &[0][..]);
        return Ok(());
    }
    if storage.len() == 1 {
        // A one-element array is a constant map (a strided table of one row).
        let want = grids[0].index_to_chunk(storage[0]).unwrap();
        let coords: Vec<Vec<i64>> = plan.chunk_coords().unwrap().collect();
        prop_assert_eq!(coords, vec![vec![want]]);
        return Ok(());
    }
    let s = match &p.tables()[0] {
        Table::Indexed(s) => s,
        other => panic!("expected an indexed table, got {other:?}"),
    };
    let want = reference(&[storage.to_vec()], &grids);
    prop_assert_eq!(s.len(), want.len());
    let mut pointer = vec![0usize];
    let (mut local, mut positions) = (vec![], vec![]);
    for (r, row) in want.iter().enumerate() {
        prop_assert_eq!(s.chunks()[r], row.0[0]);
        prop_assert_eq!(s.chunk_starts()[r], row.1[0]);
        prop_assert_eq!(s.chunk_extents()[r], row.2[0]);
        prop_assert_eq!(s.chunk_sizes()[r], row.3[0]);
        pointer.push(pointer.last().unwrap() + row.4.len());
        for (l, q) in &row.4 {
            local.push(l[0]);
            positions.push(*q);
        }
    }
    prop_assert_eq!(s.pointer(), &pointer[..]);
    prop_assert_eq!(s.local(), &local[..]);
    let got: Vec<usize> = (0..storage.len()).map(|j| s.position(j)).collect();
    prop_assert_eq!(&got, &positions);
    if let Some(pos) = s.positions() {
        let pos: Vec<usize> = pos.iter().map(|&x| x as usize).collect();
        prop_assert_eq!(&pos, &positions);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// One-axis index arrays (the indexed table) match the reference for every arrangement,
    /// both signs of the stride (a negative stride reverses the storage order).
    #[test]
    fn indexed_matches_reference(
        (grid, lo, hi) in grid_strategy(),
        shape in shape_strategy(),
        draws in prop::collection::vec(any::<u64>(), 1..64),
        negative in any::<bool>(),
    ) {
        let storage = storage_of(shape, &draws, grid.as_ref(), lo, hi);
        let (offset, stride) = if negative { (9, -1) } else { (0, 1) };
        check_oindex(&storage, offset, stride, grid)?;
    }

    /// A coordinate outside the grid, anywhere in a sorted or unsorted array (first, middle,
    /// last), is refused with a typed grid error naming the storage dimension.
    #[test]
    fn indexed_out_of_grid_refused(
        (grid, lo, hi) in grid_strategy(),
        sorted in any::<bool>(),
        draws in prop::collection::vec(any::<u64>(), 1..32),
        below in any::<bool>(),
        far in any::<bool>(),
        at in any::<prop::sample::Index>(),
    ) {
        let mut storage = storage_of(
            if sorted { Shape::Sorted } else { Shape::Random }, &draws, grid.as_ref(), lo, hi,
        );
        let bad = match (below, far) {
            (true, false) => lo - 1,
            (true, true) => i64::MIN / 2,
            (false, false) => hi,
            (false, true) => i64::MAX / 2,
        };
        if sorted {
            if below { storage.insert(0, bad) } else { storage.push(bad) }
        } else {
            let i = at.index(storage.len() + 1);
            storage.insert(i, bad);
        }
        let t = oindex_transform(storage, 0, 1);
        let grids = vec![grid];
        let plan = plan_chunks(&t, &grids).unwrap();
        match plan.partition() {
            Err(PlanError::Grid { dim: 0, .. }) => {}
            other => prop_assert!(false, "expected a grid error, got {:?}", other.map(|p| p.row_shape().to_vec())),
        }
    }

    /// Correlated 2-D index arrays (the joint table) match the reference: chunk tuples in
    /// lexicographic order, points in request order within a chunk.
    #[test]
    fn joint_matches_reference(
        (g0, lo0, hi0) in grid_strategy(),
        (g1, lo1, hi1) in grid_strategy(),
        shape in shape_strategy(),
        draws in prop::collection::vec(any::<u64>(), 1..64),
    ) {
        let s0 = storage_of(shape, &draws, g0.as_ref(), lo0, hi0);
        let w1 = (hi1 - lo1) as u64;
        let s1: Vec<i64> = draws.iter().rev().cycle().take(s0.len())
            .map(|&d| lo1 + (d.rotate_left(17) % w1) as i64).collect();
        let n = s0.len();
        let arr = |v: &[i64]| IndexArray::new(ArrayD::from_shape_vec(IxDyn(&[n]), v.to_vec()).unwrap());
        let t = IndexTransform::new(
            IndexDomain::from_shape(&[n as u64]).unwrap(),
            vec![
                OutputIndexMap::Array { array: arr(&s0), offset: 0, stride: 1 },
                OutputIndexMap::Array { array: arr(&s1), offset: 0, stride: 1 },
            ],
        ).unwrap();
        let grids = vec![g0, g1];
        let plan = plan_chunks(&t, &grids).unwrap();
        let p = plan.partition().unwrap();
        if n == 0 {
            prop_assert_eq!(p.row_shape(), &[0][..]);
            return Ok(());
        }
        let want = reference(&[s0.clone(), s1.clone()], &grids);
        // One element (or all-equal arrays) is a constant map: no joint table then.
        let Some(Table::Joint(s)) = p.tables().iter().find(|t| matches!(t, Table::Joint(_))) else {
            return Ok(());
        };
        prop_assert_eq!(s.len(), want.len());
        for (r, row) in want.iter().enumerate() {
            prop_assert_eq!(s.chunk_row(r), &row.0[..]);
            prop_assert_eq!(s.chunk_start_row(r), &row.1[..]);
            prop_assert_eq!(s.chunk_extent_row(r), &row.2[..]);
            prop_assert_eq!(s.chunk_size_row(r), &row.3[..]);
            let got: Vec<(Vec<i64>, usize)> = s.records_of(r).chunks(3)
                .map(|rec| (vec![rec[0] as i64, rec[1] as i64], rec[2] as usize)).collect();
            prop_assert_eq!(&got, &row.4);
        }
    }
}
