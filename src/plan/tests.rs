//! Unit tests of the planner (see `docs/architecture.md`, "The planner"): grids, factored
//! tables, iteration order, scale, coverage, rejections and edge cases, and two-level plans.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ndarray::{ArrayD, IxDyn};

use super::*;
use crate::grid::{GridError, RectilinearGrid, RegularGrid};
use crate::index::{IndexArray, IndexDomain, IndexTransform, OutputIndexMap};
use crate::sel;

fn reg(size: u64, extent: u64) -> Arc<dyn DimensionGrid> {
    Arc::new(RegularGrid::new(size, extent).unwrap())
}

fn grids(spec: &[(u64, u64)]) -> Vec<Arc<dyn DimensionGrid>> {
    spec.iter().map(|&(s, e)| reg(s, e)).collect()
}

fn arr(shape: &[usize], v: Vec<i64>) -> IndexArray {
    IndexArray::new(ArrayD::from_shape_vec(IxDyn(shape), v).unwrap())
}

/// A grid that counts its calls and hides its regular closed form.
#[derive(Debug)]
struct Counting {
    inner: RegularGrid,
    calls: AtomicUsize,
}

impl Counting {
    fn new(size: u64, extent: u64) -> Arc<Counting> {
        Arc::new(Counting {
            inner: RegularGrid::new(size, extent).unwrap(),
            calls: AtomicUsize::new(0),
        })
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }
}

impl DimensionGrid for Counting {
    fn index_to_chunk(&self, i: i64) -> Result<i64, GridError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.index_to_chunk(i)
    }
    fn chunk_offset(&self, c: i64) -> Result<i64, GridError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.chunk_offset(c)
    }
    fn chunk_size(&self, c: i64) -> Result<u64, GridError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.chunk_size(c)
    }
    fn data_size(&self, c: i64) -> Result<u64, GridError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.data_size(c)
    }
}

fn coverages(plan: &ChunkPlan) -> Vec<Coverage> {
    plan.ops().unwrap().map(|op| op.unwrap().coverage).collect()
}

fn strided(p: &GridPartition, t: usize) -> &StridedSet {
    match &p.tables()[t] {
        Table::Strided(s) => s,
        other => panic!("table {t} is {other:?}"),
    }
}

fn indexed(p: &GridPartition, t: usize) -> &IndexedSet {
    match &p.tables()[t] {
        Table::Indexed(s) => s,
        other => panic!("table {t} is {other:?}"),
    }
}

fn joint(p: &GridPartition, t: usize) -> &JointSet {
    match &p.tables()[t] {
        Table::Joint(s) => s,
        other => panic!("table {t} is {other:?}"),
    }
}

// ---- grids ----

#[test]
fn regular_grid_example() {
    let g = RegularGrid::new(3, 10).unwrap();
    assert_eq!(g.num_chunks(), 4);
    assert_eq!(g.chunk_size(3).unwrap(), 3);
    assert_eq!(g.data_size(3).unwrap(), 1);
    assert_eq!(g.index_to_chunk(9).unwrap(), 3);
    assert_eq!(g.chunk_offset(2).unwrap(), 6);
    assert!(matches!(
        g.index_to_chunk(10),
        Err(GridError::OutOfGrid { index: 10, .. })
    ));
    assert!(g.index_to_chunk(-1).is_err());
    let mut out = [0i64; 3];
    g.indices_to_chunks(&[0, 5, 9], &mut out).unwrap();
    assert_eq!(out, [0, 1, 3]);
    assert!(matches!(
        g.indices_to_chunks(&[0, 10, 9], &mut out),
        Err(GridError::OutOfGrid { index: 10, .. })
    ));
}

#[test]
fn regular_grid_size_zero_only_on_empty_extent() {
    assert!(matches!(RegularGrid::new(0, 5), Err(GridError::Invalid(_))));
    let g = RegularGrid::new(0, 0).unwrap();
    assert_eq!(g.num_chunks(), 0);
    assert!(g.index_to_chunk(0).is_err());
}

#[test]
fn negative_chunk_ids() {
    // Chunk size 3, chunk 0 at 0, region from -3: literal cells [-3, 0) are chunk -1.
    let g = RegularGrid::with_region(3, 0, -3, 6).unwrap();
    assert_eq!(g.index_to_chunk(-3).unwrap(), -1);
    assert_eq!(g.index_to_chunk(-1).unwrap(), -1);
    assert_eq!(g.index_to_chunk(0).unwrap(), 0);
    assert_eq!(g.chunk_offset(-1).unwrap(), -3);
    let mut out = [0i64; 3];
    g.indices_to_chunks(&[-3, -1, 5], &mut out).unwrap();
    assert_eq!(out, [-1, -1, 1]);
    assert!(
        RegularGrid::with_region(3, 0, -2, 6).is_err(),
        "unaligned region start"
    );
}

#[test]
fn rectilinear_grid_example() {
    let g = RectilinearGrid::new(&[2, 3, 5], 9).unwrap();
    assert_eq!(g.num_chunks(), 3);
    assert_eq!(g.chunk_size(2).unwrap(), 5);
    assert_eq!(g.data_size(2).unwrap(), 4);
    assert_eq!(g.chunk_offset(2).unwrap(), 5);
    let ids: Vec<i64> = (0..9).map(|i| g.index_to_chunk(i).unwrap()).collect();
    assert_eq!(ids, [0, 0, 1, 1, 1, 2, 2, 2, 2]);
    assert!(g.index_to_chunk(9).is_err());
    assert!(g.chunk_offset(3).is_err());
    // Trailing edges past the extent are allowed; edges must cover the extent.
    assert_eq!(RectilinearGrid::new(&[4, 4, 4], 5).unwrap().num_chunks(), 2);
    assert!(RectilinearGrid::new(&[2, 3], 6).is_err());
    assert!(RectilinearGrid::new(&[2, 0, 3], 5).is_err());
}

#[test]
fn rectilinear_run_lengths_and_json() {
    let j = |s: &str, e| RectilinearGrid::from_json(&serde_json::from_str(s).unwrap(), e);
    assert_eq!(
        j("[[4, 2]]", 8).unwrap(),
        RectilinearGrid::new(&[4, 4], 8).unwrap()
    );
    assert_eq!(
        j("[[1, 3], 3]", 6).unwrap(),
        RectilinearGrid::new(&[1, 1, 1, 3], 6).unwrap()
    );
    let g = j("4", 10).unwrap();
    assert_eq!(g.num_chunks(), 3);
    assert_eq!(g.data_size(2).unwrap(), 2);
    assert!(j("[[1, 3], \"x\"]", 4).is_err());
    // Memory is per run, not per chunk: 2^40 unit chunks.
    let big = RectilinearGrid::from_run_lengths(&[(1, 1 << 40)], 1 << 40).unwrap();
    assert_eq!(big.num_chunks(), 1 << 40);
    assert_eq!(big.index_to_chunk((1 << 40) - 1).unwrap(), (1 << 40) - 1);
}

// ---- factored tables ----

#[test]
fn reversal_rows() {
    let t = IndexTransform::from_shape(&[10])
        .unwrap()
        .index(&sel![..;-1])
        .unwrap();
    assert_eq!(t.domain().interval(0), (-9, 1));
    let plan = plan_chunks(&t, &grids(&[(4, 10)])).unwrap();
    let p = plan.partition().unwrap();
    let s = strided(p, 0);
    let rows: Vec<StridedRow> = (0..s.len()).map(|r| s.row(r)).collect();
    assert_eq!(rows.iter().map(|r| r.chunk).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(
        rows.iter().map(|r| r.local_start).collect::<Vec<_>>(),
        [3, 3, 1]
    );
    assert_eq!(rows.iter().map(|r| r.count).collect::<Vec<_>>(), [4, 4, 2]);
    assert_eq!(rows.iter().map(|r| r.origin).collect::<Vec<_>>(), [6, 2, 0]);
    assert!((0..3).all(|r| s.is_full(r)));
    assert_eq!(coverages(&plan), [Coverage::Full; 3]);
    // The same rows from the generic (grid-call) walk.
    let g: Vec<Arc<dyn DimensionGrid>> = vec![Counting::new(4, 10)];
    let plan2 = plan_chunks(&t, &g).unwrap();
    let s2 = strided(plan2.partition().unwrap(), 0);
    assert_eq!((0..3).map(|r| s2.row(r)).collect::<Vec<_>>(), rows);
}

#[test]
fn indexed_rows_first_example() {
    let t = IndexTransform::from_shape(&[6])
        .unwrap()
        .oindex(&sel![[5, 1, 5, 4, 1]])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(3, 6)])).unwrap();
    let p = plan.partition().unwrap();
    let s = indexed(p, 0);
    assert_eq!(s.chunks(), [0, 1]);
    assert_eq!(s.pointer(), [0, 2, 5]);
    assert_eq!(s.positions().unwrap(), [1, 4, 0, 2, 3]);
    assert_eq!(s.local(), [1, 1, 2, 2, 1]);
    // Projections: chunk 0 reads local (1, 1) into request positions (1, 4); chunk 1
    // reads (2, 2, 1) into (0, 2, 3).
    let ops: Vec<ChunkOp> = plan.ops().unwrap().map(|o| o.unwrap()).collect();
    let cells = |op: &ChunkOp| {
        let mut v = vec![];
        op.for_each_cell(|l, d| v.push((l[0], d[0])));
        v
    };
    assert_eq!(cells(&ops[0]), [(1, 1), (1, 4)]);
    assert_eq!(cells(&ops[1]), [(2, 0), (2, 2), (1, 3)]);
    let proj = plan.projection_at(&[1]).unwrap();
    assert_eq!(proj.chunk_coords, [1]);
    assert_eq!(
        proj.chunk_domain,
        IndexDomain::new(vec![3], vec![6]).unwrap()
    );
    assert_eq!(proj.coverage, Coverage::Partial);
}

#[test]
fn indexed_and_strided_rows_second_example() {
    let t = IndexTransform::from_shape(&[7, 9])
        .unwrap()
        .oindex(&sel![[6, 0, 0, 2], 5..])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(3, 7), (4, 9)])).unwrap();
    let p = plan.partition().unwrap();
    let s = indexed(p, 0);
    assert_eq!(s.chunks(), [0, 2]);
    assert_eq!(s.pointer(), [0, 3, 4]);
    assert_eq!(s.positions().unwrap(), [1, 2, 3, 0]);
    assert_eq!(s.local(), [0, 0, 2, 0]);
    let a = strided(p, 1);
    let rows: Vec<StridedRow> = (0..a.len()).map(|r| a.row(r)).collect();
    assert_eq!(rows.iter().map(|r| r.chunk).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(
        rows.iter().map(|r| r.local_start).collect::<Vec<_>>(),
        [1, 0]
    );
    assert_eq!(rows.iter().map(|r| r.count).collect::<Vec<_>>(), [3, 1]);
    assert_eq!(rows.iter().map(|r| r.origin).collect::<Vec<_>>(), [0, 3]);
    assert_eq!([a.is_full(0), a.is_full(1)], [false, true]);
    assert_eq!(p.row_shape(), [2, 2]);
}

#[test]
fn joint_set_example() {
    let t = IndexTransform::from_shape(&[6, 8])
        .unwrap()
        .vindex(&sel![[0, 5, 5, 0], [7, 0, 1, 6]])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(3, 6), (4, 8)])).unwrap();
    let p = plan.partition().unwrap();
    let j = joint(p, 0);
    assert_eq!(j.len(), 2);
    assert_eq!(j.chunk_row(0), [0, 1]);
    assert_eq!(j.chunk_row(1), [1, 0]);
    assert_eq!(j.pointer(), [0, 2, 4]);
    assert_eq!(
        (0..4).map(|q| j.position(q)).collect::<Vec<_>>(),
        [0, 3, 1, 2]
    );
    let local: Vec<&[u32]> = (0..4).map(|q| j.local(q)).collect();
    assert_eq!(local, [[0, 3], [0, 2], [2, 0], [2, 1]]);
}

#[test]
fn independent_components_store_only_their_block() {
    // (u, v) -> (a[u], b[u], c[v]): components {0, 1} (block n) and {2} (indexed).
    let n = 1000usize;
    let d = IndexDomain::from_shape(&[n as u64, n as u64]).unwrap();
    let col = |f: fn(i64) -> i64| arr(&[n, 1], (0..n as i64).map(f).collect());
    let t = IndexTransform::new(
        d,
        vec![
            OutputIndexMap::Array {
                array: col(|x| x),
                offset: 0,
                stride: 1,
            },
            OutputIndexMap::Array {
                array: col(|x| 999 - x),
                offset: 0,
                stride: 1,
            },
            OutputIndexMap::Array {
                array: arr(&[1, n], (0..n as i64).collect()),
                offset: 0,
                stride: 1,
            },
        ],
    )
    .unwrap();
    let plan = plan_chunks(&t, &grids(&[(1000, 1000); 3])).unwrap();
    let p = plan.partition().unwrap();
    assert_eq!(p.tables().len(), 2);
    assert_eq!(indexed(p, 0).local().len(), n);
    let j = joint(p, 1);
    assert_eq!(j.block_shape(), [n]);
    assert_eq!(j.records_of(0).len(), n * 3);
    assert_eq!(p.row_shape(), [1, 1]);
    assert_eq!(
        plan.ops().unwrap().next().unwrap().unwrap().num_cells(),
        (n * n) as u128
    );
}

#[test]
fn transitive_component_merge() {
    // a over axes {0, 1}, b over {2}, c over {1, 2}: c bridges a and b.
    let d = IndexDomain::from_shape(&[2, 3, 4]).unwrap();
    let t = IndexTransform::new(
        d,
        vec![
            OutputIndexMap::Array {
                array: arr(&[2, 3, 1], vec![0, 1, 2, 3, 4, 5]),
                offset: 0,
                stride: 1,
            },
            OutputIndexMap::Array {
                array: arr(&[1, 1, 4], vec![0, 1, 2, 3]),
                offset: 0,
                stride: 1,
            },
            OutputIndexMap::Array {
                array: arr(&[1, 3, 4], (0..12).collect()),
                offset: 0,
                stride: 1,
            },
        ],
    )
    .unwrap();
    let plan = plan_chunks(&t, &grids(&[(2, 6), (2, 4), (5, 12)])).unwrap();
    let p = plan.partition().unwrap();
    assert_eq!(p.tables().len(), 1);
    assert_eq!(joint(p, 0).dims(), [0, 1, 2]);
    assert_eq!(joint(p, 0).axes(), [0, 1, 2]);
}

// ---- iteration order ----

#[test]
fn iteration_order_without_joint_sets() {
    let t = IndexTransform::from_shape(&[7, 9])
        .unwrap()
        .index(&sel![1..6;2, 5..])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(3, 7), (4, 9)])).unwrap();
    let coords: Vec<Vec<i64>> = plan.chunk_coords().unwrap().collect();
    assert_eq!(coords, [[0, 1], [0, 2], [1, 1], [1, 2]]);
}

#[test]
fn iteration_order_with_joint_sets() {
    let t = IndexTransform::from_shape(&[6, 8, 5])
        .unwrap()
        .vindex(&sel![[0, 5, 5, 0], [7, 0, 1, 6], ..])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(3, 6), (4, 8), (2, 5)])).unwrap();
    assert_eq!(plan.partition().unwrap().row_shape(), [3, 2]);
    let coords: Vec<Vec<i64>> = plan.chunk_coords().unwrap().collect();
    assert_eq!(coords[..3], [vec![0, 1, 0], vec![1, 0, 0], vec![0, 1, 1]]);
    assert_eq!(coords.len(), 6);
}

// ---- scale ----

#[test]
fn sparse_stride_makes_few_grid_calls() {
    let t = IndexTransform::from_shape(&[100_001])
        .unwrap()
        .index(&sel![..;100_000])
        .unwrap();
    let g = Counting::new(1, 100_001);
    let gd: Vec<Arc<dyn DimensionGrid>> = vec![g.clone()];
    let plan = plan_chunks(&t, &gd).unwrap();
    let coords: Vec<Vec<i64>> = plan.chunk_coords().unwrap().collect();
    assert_eq!(coords, [[0], [100_000]]);
    assert!(g.calls() <= 12, "{} grid calls", g.calls());
    // Regular grids: closed form, same rows.
    let plan = plan_chunks(&t, &grids(&[(1, 100_001)])).unwrap();
    assert_eq!(
        plan.chunk_coords().unwrap().collect::<Vec<_>>(),
        [[0], [100_000]]
    );
}

#[test]
fn diagonal_points_touch_one_chunk_each() {
    let v: Vec<i64> = (0..50).collect();
    let t = IndexTransform::from_shape(&[50, 50])
        .unwrap()
        .vindex(&sel![v.clone(), v])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(1, 50), (1, 50)])).unwrap();
    assert_eq!(plan.len().unwrap(), 50);
    assert_eq!(coverages(&plan), [Coverage::Full; 50]);
}

#[test]
fn stride_zero_over_two_pow_63_cells() {
    let d = IndexDomain::new(vec![-(1i64 << 62)], vec![1i64 << 62]).unwrap();
    assert_eq!(d.extent(0), 1u64 << 63);
    let t = IndexTransform::new(d, vec![OutputIndexMap::dimension(0, 7, 0)]).unwrap();
    let plan = plan_chunks(&t, &grids(&[(4, 10)])).unwrap();
    assert_eq!(plan.len().unwrap(), 1);
    let op = plan.op_at(&[0]).unwrap();
    assert_eq!(op.chunk_coords, [1]);
    assert_eq!(op.base_local, [3]);
    assert_eq!(op.axes[0].count, 1u64 << 63);
    assert_eq!(op.coverage, Coverage::Partial);
}

#[test]
fn residual_slice_stays_symbolic() {
    // Correlated points plus a wide residual slice.
    let t2 = IndexTransform::from_shape(&[4, 4, 10_000])
        .unwrap()
        .vindex(&sel![[0, 3], [1, 2], ..])
        .unwrap();
    let plan = plan_chunks(&t2, &grids(&[(2, 4), (2, 4), (10_000, 10_000)])).unwrap();
    for proj in plan.projections().unwrap() {
        let proj = proj.unwrap();
        assert!(matches!(
            proj.cell_transform.output()[1],
            OutputIndexMap::Dimension { stride: 1, .. }
        ));
        assert!(matches!(
            proj.chunk_transform.output()[2],
            OutputIndexMap::Dimension { stride: 1, .. }
        ));
        assert_eq!(proj.chunk_transform.domain().shape()[1], 10_000);
    }
}

#[test]
fn sparse_two_d_oindex_vs_vindex() {
    let t = IndexTransform::from_shape(&[1000, 1000]).unwrap();
    let g = grids(&[(10, 1000), (10, 1000)]);
    let o = t.oindex(&sel![[3, 997], [5, 995]]).unwrap();
    assert_eq!(plan_chunks(&o, &g).unwrap().len().unwrap(), 4);
    let v = t.vindex(&sel![[3, 997], [5, 995]]).unwrap();
    assert_eq!(plan_chunks(&v, &g).unwrap().len().unwrap(), 2);
}

#[test]
fn large_chunk_id_ranges_use_the_comparison_paths() {
    // Ids spread over 2^40 unit chunks: neither counting nor u32 keys apply.
    let e = 1u64 << 40;
    let vals = vec![e as i64 - 1, 0, 1 << 35, 0, e as i64 - 1];
    let d = IndexDomain::from_shape(&[5]).unwrap();
    let t = IndexTransform::new(
        d.clone(),
        vec![OutputIndexMap::Array {
            array: arr(&[5], vals.clone()),
            offset: 0,
            stride: 1,
        }],
    )
    .unwrap();
    let plan = plan_chunks(&t, &grids(&[(1, e)])).unwrap();
    let s = indexed(plan.partition().unwrap(), 0);
    assert_eq!(s.chunks(), [0, 1 << 35, e as i64 - 1]);
    assert_eq!(s.positions().unwrap(), [1, 3, 2, 0, 4]);
    let other: Vec<i64> = vec![0, 1 << 35, 0, e as i64 - 1, 5];
    let t = IndexTransform::new(
        d,
        vec![
            OutputIndexMap::Array {
                array: arr(&[5], vals),
                offset: 0,
                stride: 1,
            },
            OutputIndexMap::Array {
                array: arr(&[5], other),
                offset: 0,
                stride: 1,
            },
        ],
    )
    .unwrap();
    let plan = plan_chunks(&t, &grids(&[(1, e), (1, e)])).unwrap();
    let j = joint(plan.partition().unwrap(), 0);
    let rows: Vec<Vec<i64>> = (0..j.len()).map(|r| j.chunk_row(r).to_vec()).collect();
    let m = e as i64 - 1;
    assert_eq!(rows, [[0, 1 << 35], [0, m], [1 << 35, 0], [m, 0], [m, 5]]);
    assert_eq!(
        (0..5).map(|q| j.position(q)).collect::<Vec<_>>(),
        [1, 3, 2, 0, 4]
    );
}

#[test]
fn out_of_grid_errors_name_the_coordinate() {
    let t = IndexTransform::from_shape(&[20]).unwrap();
    let g = grids(&[(4, 10)]);
    let err = plan_chunks(&t, &g).unwrap().partition().unwrap_err();
    assert!(matches!(
        err,
        PlanError::Grid {
            dim: 0,
            source: GridError::OutOfGrid { index: 19, .. }
        }
    ));
    assert!(err.to_string().contains("19"));
    let o = t.oindex(&sel![[3, 15, 2]]).unwrap();
    let err = plan_chunks(&o, &g).unwrap().partition().unwrap_err();
    assert!(err.to_string().contains("15"), "{err}");
    let c = t.index(&sel![12]).unwrap();
    assert!(plan_chunks(&c, &g).unwrap().partition().is_err());
    // The generic walk errors too.
    let gc: Vec<Arc<dyn DimensionGrid>> = vec![Counting::new(4, 10)];
    assert!(plan_chunks(&t, &gc).unwrap().partition().is_err());
}

#[test]
fn overflow_and_cancellation_near_i64_max() {
    let d = IndexDomain::from_shape(&[2]).unwrap();
    let t =
        IndexTransform::new(d.clone(), vec![OutputIndexMap::dimension(0, i64::MAX, 1)]).unwrap();
    let g: Vec<Arc<dyn DimensionGrid>> = vec![Arc::new(
        RegularGrid::with_region(4, 0, 0, i64::MAX).unwrap(),
    )];
    let err = plan_chunks(&t, &g).unwrap().partition().unwrap_err();
    assert!(matches!(err, PlanError::Overflow(_)), "{err}");
    // offset near i64::MAX, stride -1 over a translated domain: exact cancellation.
    let origin = i64::MAX - 99 - (i64::MAX - 99).rem_euclid(4);
    let g: Vec<Arc<dyn DimensionGrid>> = vec![Arc::new(
        RegularGrid::with_region(4, 0, origin, i64::MAX).unwrap(),
    )];
    let d = IndexDomain::new(vec![-10], vec![-3]).unwrap();
    let t = IndexTransform::new(d, vec![OutputIndexMap::dimension(0, i64::MAX - 20, -1)]).unwrap();
    let plan = plan_chunks(&t, &g).unwrap();
    let mut got = vec![];
    for op in plan.ops().unwrap() {
        let op = op.unwrap();
        op.for_each_cell(|l, dst| got.push((dst[0] - 10, op.chunk_start[0] + l[0])));
    }
    got.sort();
    let want: Vec<(i64, i64)> = (-10..-3).map(|x| (x, i64::MAX - 20 - x)).collect();
    assert_eq!(got, want);
}

// ---- coverage ----

#[test]
fn coverage_full_rows() {
    let id = IndexTransform::from_shape(&[10]).unwrap();
    // identity, with a fully covered clipped edge chunk
    assert_eq!(
        coverages(&plan_chunks(&id, &grids(&[(4, 10)])).unwrap()),
        [Coverage::Full; 3]
    );
    // transpose
    let d = IndexDomain::from_shape(&[6, 4]).unwrap();
    let tr = IndexTransform::new(
        d,
        vec![
            OutputIndexMap::dimension(1, 0, 1),
            OutputIndexMap::dimension(0, 0, 1),
        ],
    )
    .unwrap();
    assert_eq!(
        coverages(&plan_chunks(&tr, &grids(&[(4, 4), (3, 6)])).unwrap()),
        [Coverage::Full; 2]
    );
    // translated unit affine
    let d = IndexDomain::new(vec![5], vec![13]).unwrap();
    let tt = IndexTransform::new(d, vec![OutputIndexMap::dimension(0, -5, 1)]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&tt, &grids(&[(4, 8)])).unwrap()),
        [Coverage::Full; 2]
    );
    // singleton grid cells hit once at any stride
    for step in [1i64, 2, -2, 3] {
        let t = id.index(&sel![..;step]).unwrap();
        let plan = plan_chunks(&t, &grids(&[(1, 10)])).unwrap();
        assert!(
            coverages(&plan).iter().all(|c| *c == Coverage::Full),
            "step {step}"
        );
    }
    // rank 0: one projection, full
    let r0 = IndexTransform::new(IndexDomain::from_shape(&[]).unwrap(), vec![]).unwrap();
    let plan = plan_chunks(&r0, &[]).unwrap();
    assert_eq!(plan.partition().unwrap().row_shape(), [] as [usize; 0]);
    assert_eq!(coverages(&plan), [Coverage::Full]);
    let proj = plan.projection_at(&[]).unwrap();
    assert_eq!(proj.chunk_transform.input_rank(), 0);
    // stride 0 with count 1, scalar into a singleton cell
    let d1 = IndexDomain::from_shape(&[1]).unwrap();
    let s0 = IndexTransform::new(d1, vec![OutputIndexMap::dimension(0, 3, 0)]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&s0, &grids(&[(1, 5)])).unwrap()),
        [Coverage::Full]
    );
}

#[test]
fn coverage_partial_rows() {
    let id = IndexTransform::from_shape(&[10]).unwrap();
    let g = grids(&[(4, 10)]);
    // step 2
    let t = id.index(&sel![..;2]).unwrap();
    assert!(
        coverages(&plan_chunks(&t, &g).unwrap())
            .iter()
            .all(|c| *c == Coverage::Partial)
    );
    // scalar into a chunk of size > 1
    let t = id.index(&sel![5]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&t, &g).unwrap()),
        [Coverage::Partial]
    );
    // stride 0 with count > 1, even into a singleton cell
    let d2 = IndexDomain::from_shape(&[2]).unwrap();
    let s0 = IndexTransform::new(d2.clone(), vec![OutputIndexMap::dimension(0, 3, 0)]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&s0, &grids(&[(1, 5)])).unwrap()),
        [Coverage::Partial]
    );
    // an unread request axis of extent > 1
    let d = IndexDomain::from_shape(&[3, 4]).unwrap();
    let un = IndexTransform::new(d, vec![OutputIndexMap::dimension(1, 0, 1)]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&un, &grids(&[(4, 4)])).unwrap()),
        [Coverage::Partial]
    );
}

#[test]
fn coverage_of_index_arrays_is_proven() {
    // Beyond the reference (which answers "unknown"): a permutation of a whole chunk is
    // full, repeats or gaps are partial.
    let id = IndexTransform::from_shape(&[8]).unwrap();
    let g = grids(&[(4, 8)]);
    let t = id.oindex(&sel![[3, 1, 0, 2, 7, 6, 5, 4]]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&t, &g).unwrap()),
        [Coverage::Full; 2]
    );
    let t = id.oindex(&sel![[3, 1, 1, 2, 7, 6, 5]]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&t, &g).unwrap()),
        [Coverage::Partial; 2]
    );
    let t2 = IndexTransform::from_shape(&[2, 2]).unwrap();
    let v = t2.vindex(&sel![[1, 0, 1, 0], [0, 0, 1, 1]]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&v, &grids(&[(2, 2), (2, 2)])).unwrap()),
        [Coverage::Full]
    );
    let v = t2.vindex(&sel![[1, 0, 1, 1], [0, 0, 1, 1]]).unwrap();
    assert_eq!(
        coverages(&plan_chunks(&v, &grids(&[(2, 2), (2, 2)])).unwrap()),
        [Coverage::Partial]
    );
}

// ---- rejections and edge cases ----

#[test]
fn grid_count_mismatch_is_immediate() {
    let t = IndexTransform::from_shape(&[4, 4]).unwrap();
    assert!(matches!(
        plan_chunks(&t, &grids(&[(2, 4)])),
        Err(PlanError::RankMismatch(_))
    ));
}

#[test]
fn empty_requests_make_no_grid_calls() {
    let t = IndexTransform::from_shape(&[0, 5]).unwrap();
    let a = Counting::new(1, 1);
    let b = Counting::new(1, 1);
    let g: Vec<Arc<dyn DimensionGrid>> = vec![a.clone(), b.clone()];
    let plan = plan_chunks(&t, &g).unwrap();
    assert_eq!(plan.partition().unwrap().row_shape(), [0]);
    assert_eq!(plan.len().unwrap(), 0);
    assert_eq!(plan.ops().unwrap().count(), 0);
    assert_eq!(a.calls() + b.calls(), 0);
    let e = IndexTransform::from_shape(&[10])
        .unwrap()
        .oindex(&sel![Vec::<i64>::new()])
        .unwrap();
    let plan = plan_chunks(&e, &grids(&[(4, 10)])).unwrap();
    assert_eq!(plan.len().unwrap(), 0);
    assert!(plan.op_at(&[0]).is_err());
}

#[test]
fn diagonals_and_shared_axes_are_supported() {
    // Two affine maps on one input axis (rejected by the reference).
    let d = IndexDomain::from_shape(&[6]).unwrap();
    let diag = IndexTransform::new(
        d.clone(),
        vec![
            OutputIndexMap::dimension(0, 0, 1),
            OutputIndexMap::dimension(0, 5, -1),
        ],
    )
    .unwrap();
    let plan = plan_chunks(&diag, &grids(&[(2, 6), (3, 6)])).unwrap();
    assert!(matches!(
        plan.partition().unwrap().tables()[0],
        Table::Diagonal(_)
    ));
    let mut pairs = vec![];
    for op in plan.ops().unwrap() {
        let op = op.unwrap();
        op.for_each_cell(|l, dst| {
            pairs.push((dst[0], op.chunk_start[0] + l[0], op.chunk_start[1] + l[1]))
        });
    }
    pairs.sort();
    assert_eq!(pairs, (0..6).map(|x| (x, x, 5 - x)).collect::<Vec<_>>());
    // An index array and an affine map sharing an axis.
    let mixed = IndexTransform::new(
        d,
        vec![
            OutputIndexMap::Array {
                array: arr(&[6], vec![4, 4, 0, 1, 5, 2]),
                offset: 0,
                stride: 1,
            },
            OutputIndexMap::dimension(0, 0, 2),
        ],
    )
    .unwrap();
    let plan = plan_chunks(&mixed, &grids(&[(2, 6), (4, 12)])).unwrap();
    assert!(matches!(
        plan.partition().unwrap().tables()[0],
        Table::Joint(_)
    ));
    let cells: u128 = plan.ops().unwrap().map(|o| o.unwrap().num_cells()).sum();
    assert_eq!(cells, 6);
}

// ---- two levels ----

#[test]
fn two_level_oindex_rows_of_a_sharded_array() {
    // Shards (6, 3) over (6, 6), inner chunks (2, 3): oindex[[0, 5], :] touches two shards,
    // each through two inner chunks (rows 0 and 5).
    let t = IndexTransform::from_shape(&[6, 6])
        .unwrap()
        .oindex(&sel![[0, 5], ..])
        .unwrap();
    let plan = plan_sharded(&t, &grids(&[(6, 6), (3, 6)]), &[2, 3]).unwrap();
    let mut shards = 0;
    for w in plan.shards().unwrap() {
        let w = w.unwrap();
        shards += 1;
        assert_eq!(w.shard.coverage, Coverage::Partial);
        let inner: Vec<ChunkOp> = w.inner_ops().unwrap().map(|o| o.unwrap()).collect();
        let coords: Vec<Vec<i64>> = inner.iter().map(|o| o.chunk_coords.clone()).collect();
        assert_eq!(coords, [[0, 0], [2, 0]]);
        let mut dests = vec![];
        for op in &inner {
            op.for_each_cell(|_, d| dests.push(d.to_vec()));
        }
        assert_eq!(dests.len(), 6);
        assert!(dests.iter().all(|d| d[0] == 0 || d[0] == 1));
    }
    assert_eq!(shards, 2);
}

#[test]
fn two_level_full_shards_and_inner_chunks() {
    let t = IndexTransform::from_shape(&[6, 6]).unwrap();
    let plan = plan_sharded(&t, &grids(&[(6, 6), (3, 6)]), &[2, 3]).unwrap();
    let mut n = 0;
    for w in plan.shards().unwrap() {
        let w = w.unwrap();
        assert_eq!(w.shard.coverage, Coverage::Full);
        for op in w.inner_ops().unwrap() {
            let op = op.unwrap();
            assert_eq!(op.coverage, Coverage::Full);
            n += 1;
        }
    }
    assert_eq!(n, 6);
    assert!(matches!(
        plan_sharded(&t, &grids(&[(6, 6), (3, 6)]), &[2]),
        Err(PlanError::RankMismatch(_))
    ));
}

#[test]
fn sparse_ids_in_u32_range_use_the_packed_sort() {
    let t = IndexTransform::from_shape(&[1_000_000])
        .unwrap()
        .oindex(&sel![[999_999, 0, 500_000, 0, 7]])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(1, 1_000_000)])).unwrap();
    let s = indexed(plan.partition().unwrap(), 0);
    assert_eq!(s.chunks(), [0, 7, 500_000, 999_999]);
    assert_eq!(s.pointer(), [0, 2, 3, 4, 5]);
    assert_eq!(s.positions().unwrap(), [1, 3, 4, 2, 0]);
    assert_eq!(s.local(), [0, 0, 0, 0, 0]);
}

#[test]
fn two_level_with_rectilinear_inner_grids() {
    // A shard of 7 rows split into inner edges (2, 5); request rows 1..6 reversed.
    let t = IndexTransform::from_shape(&[14])
        .unwrap()
        .index(&sel![1..6])
        .unwrap();
    let t = t.index(&sel![..;-1]).unwrap();
    let outer = plan_chunks(&t, &grids(&[(7, 14)])).unwrap();
    let op = outer.op_at(&[0]).unwrap();
    let inner: Vec<Arc<dyn DimensionGrid>> =
        vec![Arc::new(RectilinearGrid::new(&[2, 5], 7).unwrap())];
    let work = ShardWork::new(op, &inner).unwrap();
    let mut cells = vec![];
    for o in work.inner_ops().unwrap() {
        let o = o.unwrap();
        o.for_each_cell(|l, d| cells.push((d[0], o.chunk_start[0] + l[0], o.chunk_coords[0])));
    }
    cells.sort();
    // Result position i holds storage row 5 - i; rows 1 in inner chunk 0, 2..5 in chunk 1.
    assert_eq!(
        cells,
        [(0, 5, 1), (1, 4, 1), (2, 3, 1), (3, 2, 1), (4, 1, 0)]
    );
}

#[test]
fn diagonals_are_symbolic() {
    // x -> (x, 2x + 1) over 10^12 cells: rows follow the merged chunk cuts, not the cells.
    let n = 1_000_000_000_000i64;
    let d = IndexDomain::new(vec![0], vec![n]).unwrap();
    let t = IndexTransform::new(
        d,
        vec![
            OutputIndexMap::dimension(0, 0, 1),
            OutputIndexMap::dimension(0, 1, 2),
        ],
    )
    .unwrap();
    let g = grids(&[(1_000_000_000, n as u64), (3_000_000_000, 2 * n as u64)]);
    let plan = plan_chunks(&t, &g).unwrap();
    let p = plan.partition().unwrap();
    let Table::Diagonal(s) = &p.tables()[0] else {
        panic!("expected a diagonal table")
    };
    assert!(s.len() < 2000, "{} rows", s.len());
    let total: u128 = plan.ops().unwrap().map(|o| o.unwrap().num_cells()).sum();
    assert_eq!(total, n as u128);
    // Check operations against the transform at their first and last cells.
    for r in [0usize, 7, s.len() - 1] {
        let op = plan.op_at(&[r]).unwrap();
        let a = &op.axes[0];
        let AxisSource::Line {
            starts, strides, ..
        } = &a.source
        else {
            panic!("expected a line")
        };
        let AxisDest::Run { start, .. } = a.dest else {
            panic!("expected a run")
        };
        for i in [0i64, a.count as i64 - 1] {
            let x = start + i;
            assert_eq!(op.chunk_start[0] + starts[0] + strides[0] * i, x);
            assert_eq!(op.chunk_start[1] + starts[1] + strides[1] * i, 2 * x + 1);
            assert!(starts[1] + strides[1] * i < op.data_shape[1] as i64);
        }
    }
}

#[test]
fn invariant_division_is_exact() {
    use super::indexed::DivU32;
    let mut x = 0x9E37_79B9u32;
    let divisors = [
        1u32,
        2,
        3,
        5,
        7,
        10,
        100,
        1000,
        4096,
        65_537,
        1 << 31,
        (1 << 31) + 1,
        u32::MAX - 1,
        u32::MAX,
    ];
    for &d in &divisors {
        let div = DivU32::new(d);
        for v in [
            0u32,
            1,
            d - 1,
            d,
            d.wrapping_add(1),
            u32::MAX,
            u32::MAX - 1,
            u32::MAX / 2,
        ] {
            assert_eq!(div.div(v), v / d, "{v} / {d}");
        }
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            assert_eq!(div.div(x), x / d, "{x} / {d}");
        }
    }
    for d in 1..3000u32 {
        let div = DivU32::new(d);
        for v in (0..200_000u32).step_by(97).chain([u32::MAX, u32::MAX - d]) {
            assert_eq!(div.div(v), v / d, "{v} / {d}");
        }
    }
}

#[test]
fn joint_keys_in_u32_range_use_the_packed_sort() {
    // Chunk-id ranges 60001 x 60001 fit a u32 key but are far wider than the points.
    let t = IndexTransform::from_shape(&[60_001, 60_001])
        .unwrap()
        .vindex(&sel![[60_000, 0, 5, 0, 60_000], [1, 0, 60_000, 0, 0]])
        .unwrap();
    let plan = plan_chunks(&t, &grids(&[(1, 60_001), (1, 60_001)])).unwrap();
    let j = joint(plan.partition().unwrap(), 0);
    let rows: Vec<Vec<i64>> = (0..j.len()).map(|r| j.chunk_row(r).to_vec()).collect();
    assert_eq!(rows, [[0, 0], [5, 60_000], [60_000, 0], [60_000, 1]]);
    assert_eq!(j.pointer(), [0, 2, 3, 4, 5]);
    assert_eq!(
        (0..5).map(|q| j.position(q)).collect::<Vec<_>>(),
        [1, 3, 2, 4, 0]
    );
}

// ---- chunk order and writes ----

/// Every row once, in strictly ascending chunk coordinates, each with its coordinates.
fn check_chunk_order(plan: &ChunkPlan) {
    let p = plan.partition().unwrap();
    let walked: Vec<(Vec<usize>, Vec<i64>)> = p.rows_in_chunk_order().collect();
    for (row, coords) in &walked {
        assert_eq!(&p.chunk_coords_at(row).unwrap(), coords);
    }
    for w in walked.windows(2) {
        assert!(w[0].1 < w[1].1, "{:?} then {:?}", w[0].1, w[1].1);
    }
    let mut rows: Vec<Vec<usize>> = walked.into_iter().map(|(r, _)| r).collect();
    rows.sort();
    let mut all: Vec<Vec<usize>> = p.rows().collect();
    all.sort();
    assert_eq!(rows, all);
}

#[test]
fn rows_in_chunk_order_cover_every_plan_shape() {
    let base = IndexTransform::from_shape(&[6, 8, 5]).unwrap();
    let g = grids(&[(3, 6), (4, 8), (2, 5)]);
    let shapes = [
        base.clone(),
        base.index(&sel![..;-1, 3, 1..]).unwrap(),
        base.oindex(&sel![[5, 0, 3], .., [4, 0]]).unwrap(),
        // a joint set over dimensions 0 and 1 after the strided table of dimension 2
        base.vindex(&sel![[0, 5, 5, 0], [7, 0, 1, 6], ..]).unwrap(),
        // a joint set over dimensions 0 and 2 around the strided dimension 1
        base.vindex(&sel![[0, 5, 5, 0, 3], .., [1, 4, 0, 2, 2]])
            .unwrap(),
    ];
    for t in &shapes {
        check_chunk_order(&plan_chunks(t, &g).unwrap());
    }
    // a diagonal whose members run in opposite directions, beside a strided dimension
    let d = IndexDomain::from_shape(&[10, 5]).unwrap();
    let t = IndexTransform::new(
        d,
        vec![
            OutputIndexMap::dimension(0, 0, 1),
            OutputIndexMap::dimension(1, 0, 1),
            OutputIndexMap::dimension(0, 9, -1),
        ],
    )
    .unwrap();
    let plan = plan_chunks(&t, &grids(&[(3, 10), (2, 5), (4, 10)])).unwrap();
    assert!(matches!(
        plan.partition().unwrap().tables()[1],
        Table::Diagonal(_)
    ));
    check_chunk_order(&plan);
    // a rank-0 plan has one row
    let t = IndexTransform::from_shape(&[]).unwrap();
    let plan = plan_chunks(&t, &[]).unwrap();
    assert_eq!(plan.partition().unwrap().rows_in_chunk_order().count(), 1);
}

#[test]
fn last_writer_cuts_broadcast_loops_to_their_last_step() {
    // 2^63 request cells onto one storage cell: one step, the last one.
    let d = IndexDomain::new(vec![-(1i64 << 62)], vec![1i64 << 62]).unwrap();
    let t = IndexTransform::new(d, vec![OutputIndexMap::dimension(0, 7, 0)]).unwrap();
    let op = plan_chunks(&t, &grids(&[(4, 10)]))
        .unwrap()
        .op_at(&[0])
        .unwrap();
    let last = op.clone().last_writer();
    assert_eq!(last.axes[0].count, 1);
    assert_eq!(
        last.axes[0].dest,
        AxisDest::Run {
            axis: 0,
            start: i64::MAX,
            stride: 1
        }
    );
    assert_eq!(last.coverage, Coverage::Partial);
    // over a chunk of one cell the write covers it (before: hit 2^63 times, partial)
    let op = plan_chunks(&t, &grids(&[(1, 10)]))
        .unwrap()
        .op_at(&[0])
        .unwrap();
    assert_eq!(op.coverage, Coverage::Partial);
    assert_eq!(op.last_writer().coverage, Coverage::Full);
    // a broadcast axis beside a real one: each cell keeps its last row's value
    let t = IndexTransform::new(
        IndexDomain::from_shape(&[3, 4]).unwrap(),
        vec![OutputIndexMap::dimension(1, 0, 1)],
    )
    .unwrap();
    let op = plan_chunks(&t, &grids(&[(4, 4)]))
        .unwrap()
        .op_at(&[0])
        .unwrap();
    let mut cells = vec![];
    op.clone()
        .last_writer()
        .for_each_cell(|local, dest| cells.push((local.to_vec(), dest.to_vec())));
    assert_eq!(
        cells,
        (0..4).map(|x| (vec![x], vec![2, x])).collect::<Vec<_>>()
    );
    assert_eq!(op.clone().last_writer().coverage, Coverage::Full);
    // nothing to cut: the operation is unchanged
    let t = IndexTransform::from_shape(&[4]).unwrap();
    let op = plan_chunks(&t, &grids(&[(2, 4)]))
        .unwrap()
        .op_at(&[1])
        .unwrap();
    assert_eq!(op.clone().last_writer(), op);
}

/// Storage-sorted index arrays on a regular grid (the blocked, vectorised path): rows whose
/// runs cross the 4096-point blocks, repeated coordinates, runs longer than a block, a
/// negative stride over descending values, an offset and a clipped last chunk; every row,
/// chunk and local coordinate as a naive grouping gives them.
#[test]
fn sorted_index_arrays_group_across_blocks() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    // (extent, chunk, offset, stride, points, spread)
    let cases: [(u64, u64, i64, i64, usize, u64); 5] = [
        (100_003, 1000, 0, 1, 20_000, 100_003),
        (100_003, 7, 0, 1, 9_000, 100_003),
        (50_000, 10_000, 3, 1, 12_000, 40),
        (90_001, 64, 90_000, -1, 10_000, 90_001),
        (1_000_000, 3, 10, 3, 8_193, 300_000),
    ];
    for (extent, chunk, offset, stride, n, spread) in cases {
        let mut vals: Vec<i64> = (0..n).map(|_| next(spread) as i64).collect();
        if stride < 0 {
            vals.sort_unstable_by(|a, b| b.cmp(a));
        } else {
            vals.sort_unstable();
        }
        // A run longer than a block (the same coordinate 5000 times).
        let mid = n / 2;
        let v = vals[mid];
        for x in &mut vals[mid..(mid + 5000).min(n)] {
            *x = v;
        }
        if stride < 0 {
            vals.sort_unstable_by(|a, b| b.cmp(a));
        } else {
            vals.sort_unstable();
        }
        let t = IndexTransform::new(
            IndexDomain::from_shape(&[n as u64]).unwrap(),
            vec![OutputIndexMap::Array {
                array: arr(&[n], vals.clone()),
                offset,
                stride,
            }],
        )
        .unwrap();
        let plan = plan_chunks(&t, &grids(&[(chunk, extent)])).unwrap();
        let s = indexed(plan.partition().unwrap(), 0);
        assert!(
            s.positions().is_none(),
            "sorted input keeps the identity order"
        );
        // The naive grouping: consecutive points of one chunk form a row.
        let storage: Vec<i64> = vals.iter().map(|&v| offset + stride * v).collect();
        let mut chunks: Vec<i64> = Vec::new();
        let mut pointer = vec![0usize];
        for (j, &x) in storage.iter().enumerate() {
            let c = x / chunk as i64;
            if chunks.last() != Some(&c) {
                if j > 0 {
                    pointer.push(j);
                }
                chunks.push(c);
            }
        }
        pointer.push(n);
        let local: Vec<i64> = storage.iter().map(|&x| x % chunk as i64).collect();
        let extents: Vec<u64> = chunks
            .iter()
            .map(|&c| (extent - c as u64 * chunk).min(chunk))
            .collect();
        let label = format!("extent {extent}, chunk {chunk}, offset {offset}, stride {stride}");
        assert_eq!(s.chunks(), chunks, "{label}");
        assert_eq!(s.pointer(), pointer, "{label}");
        assert_eq!(s.local(), local, "{label}");
        assert_eq!(s.chunk_extents(), extents, "{label}");
        let starts: Vec<i64> = chunks.iter().map(|&c| c * chunk as i64).collect();
        assert_eq!(s.chunk_starts(), starts, "{label}");
    }
}
