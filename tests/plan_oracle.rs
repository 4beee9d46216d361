//! The exactly-once oracle for the chunk planner (one and two levels), over random
//! transforms and grids.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use zarrflow::grid::{DimensionGrid, RectilinearGrid, RegularGrid};
use zarrflow::index::{IndexArray, IndexDomain, IndexTransform, OutputIndexMap};
use zarrflow::plan::{ChunkOp, Coverage, ShardWork, plan_chunks, plan_sharded};

/// A small deterministic generator (splitmix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi]`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() % 1000) as f64 / 1000.0 < p
    }
}

/// A random grid and its region `[lo, hi)`.
fn random_grid(r: &mut Rng) -> (Arc<dyn DimensionGrid>, i64, i64) {
    match r.range(0, 2) {
        0 => {
            let size = r.range(1, 5) as u64;
            let extent = r.range(1, 20) as u64;
            (
                Arc::new(RegularGrid::new(size, extent).unwrap()),
                0,
                extent as i64,
            )
        }
        1 => {
            // Translated, possibly negative chunk ids, clipped last chunk.
            let size = r.range(1, 4);
            let origin = r.range(-6, 6);
            let lo = origin - size * r.range(0, 3);
            let hi = lo + r.range(1, 16);
            let g = RegularGrid::with_region(size as u64, origin, lo, hi).unwrap();
            (Arc::new(g), lo, hi)
        }
        _ => {
            let n = r.range(1, 6) as usize;
            let mut pairs = Vec::new();
            for _ in 0..n {
                pairs.push((r.range(1, 4) as u64, r.range(1, 3) as u64));
            }
            let total: u64 = pairs.iter().map(|(s, c)| s * c).sum();
            let extent = r.range(1, total as i64) as u64;
            let g = RectilinearGrid::from_run_lengths(&pairs, extent).unwrap();
            (Arc::new(g), 0, extent as i64)
        }
    }
}

/// A random transform whose outputs land inside the given regions.
fn random_transform(r: &mut Rng, regions: &[(i64, i64)], diag: bool) -> IndexTransform {
    let rank = if diag {
        r.range(1, 2) as usize
    } else {
        r.range(0, 3) as usize
    };
    let mut lo = Vec::new();
    let mut shape = Vec::new();
    for _ in 0..rank {
        lo.push(r.range(-5, 5));
        shape.push(if r.chance(0.05) {
            0
        } else {
            r.range(1, 5) as u64
        });
    }
    let domain = IndexDomain::from_origin_shape(&lo, &shape).unwrap();
    let mut maps = Vec::new();
    let mut last_axis: Option<usize> = None;
    for &(glo, ghi) in regions {
        let width = ghi - glo;
        let kind = if diag && !r.chance(0.15) {
            1
        } else {
            r.range(0, 3)
        };
        let m = if rank == 0 || kind == 0 {
            OutputIndexMap::constant(r.range(glo, ghi - 1))
        } else if kind == 1 {
            // Reusing the last affine axis makes diagonals frequent.
            let k = match last_axis {
                Some(k) if diag || r.chance(0.5) => k,
                _ => r.range(0, rank as i64 - 1) as usize,
            };
            last_axis = Some(k);
            let (a, b) = domain.interval(k);
            let n = (b - a).max(1);
            let mut stride = r.range(-3, 3);
            if stride.abs() * (n - 1) >= width {
                stride = stride.signum();
            }
            if stride.abs() * (n - 1) >= width {
                OutputIndexMap::constant(r.range(glo, ghi - 1))
            } else {
                // storage = offset + stride * x must stay in [glo, ghi) for x in [a, b).
                let smin_x = if stride >= 0 { a } else { a + n - 1 };
                let span = stride.abs() * (n - 1);
                let target = r.range(glo, ghi - 1 - span);
                OutputIndexMap::dimension(k, target - stride * smin_x, stride)
            }
        } else {
            // Index array: each axis full extent or 1 (broadcast); repeats likely.
            let ashape: Vec<usize> = (0..rank)
                .map(|d| if r.chance(0.5) { shape[d] as usize } else { 1 })
                .collect();
            let len: usize = ashape.iter().product();
            let flip = r.chance(0.3);
            let vals: Vec<i64> = (0..len)
                .map(|_| {
                    let s = r.range(glo, ghi - 1);
                    if flip { 7 - s } else { s }
                })
                .collect();
            let a = IndexArray::new(ArrayD::from_shape_vec(IxDyn(&ashape), vals).unwrap());
            if flip {
                OutputIndexMap::Array {
                    array: a,
                    offset: 7,
                    stride: -1,
                }
            } else {
                OutputIndexMap::Array {
                    array: a,
                    offset: 0,
                    stride: 1,
                }
            }
        };
        maps.push(m);
    }
    IndexTransform::new(domain, maps).unwrap()
}

type Pair = (Vec<i64>, Vec<i64>);

fn expected_pairs(t: &IndexTransform) -> Vec<Pair> {
    let mut v = Vec::new();
    t.for_each_mapped(|p, o| v.push((p.to_vec(), o.to_vec())))
        .unwrap();
    v.sort();
    v
}

fn chunk_of(grids: &[Arc<dyn DimensionGrid>], storage: &[i64]) -> Vec<i64> {
    storage
        .iter()
        .zip(grids)
        .map(|(&s, g)| g.index_to_chunk(s).unwrap())
        .collect()
}

/// Checks one lowered op: locals inside the chunk's data, coverage exact, linear offsets
/// consistent; returns its (request, storage) pairs.
fn check_op(op: &ChunkOp, lo: &[i64], pairs: &mut Vec<Pair>) {
    let mut hits: BTreeMap<Vec<i64>, u32> = BTreeMap::new();
    let mut cells = Vec::new();
    op.for_each_cell(|local, dest| {
        for (d, &l) in local.iter().enumerate() {
            assert!(
                l >= 0 && (l as u64) < op.data_shape[d],
                "local {local:?} outside {:?}",
                op.data_shape
            );
        }
        *hits.entry(local.to_vec()).or_default() += 1;
        let req: Vec<i64> = dest.iter().zip(lo).map(|(d, l)| d + l).collect();
        let st: Vec<i64> = local
            .iter()
            .zip(&op.chunk_start)
            .map(|(l, s)| l + s)
            .collect();
        cells.push((local.to_vec(), dest.to_vec()));
        pairs.push((req, st));
    });
    assert!(!cells.is_empty(), "an op without cells");
    let valid: u128 = op.data_shape.iter().map(|&n| n as u128).product();
    let full = hits.len() as u128 == valid && hits.values().all(|&c| c == 1);
    let expect = if full {
        Coverage::Full
    } else {
        Coverage::Partial
    };
    assert_eq!(op.coverage, expect, "coverage of {op:?}");
    // The linear form agrees with the coordinate form.
    let cs = op.chunk_c_strides();
    let rs = op.result_c_strides();
    let mut lin = Vec::new();
    op.for_each_linear(&cs, &rs, |a, b| lin.push((a, b)));
    let from_cells: Vec<(i64, i64)> = cells
        .iter()
        .map(|(l, d)| {
            (
                l.iter().zip(&cs).map(|(a, b)| a * b).sum(),
                d.iter().zip(&rs).map(|(a, b)| a * b).sum(),
            )
        })
        .collect();
    assert_eq!(lin, from_cells);
    // Ascending normalisation keeps the cell set.
    let mut asc = op.clone();
    asc.axes = op.axes.iter().map(|a| a.ascending()).collect();
    let mut c2 = Vec::new();
    asc.for_each_cell(|l, d| c2.push((l.to_vec(), d.to_vec())));
    let mut c1 = cells.clone();
    c1.sort();
    c2.sort();
    assert_eq!(c1, c2);
}

fn run_case(seed: u64, diag: bool) {
    let mut r = Rng(seed);
    let out_rank = if diag {
        r.range(2, 3) as usize
    } else {
        r.range(0, 3) as usize
    };
    let mut grids = Vec::new();
    let mut regions = Vec::new();
    for _ in 0..out_rank {
        let (g, lo, hi) = random_grid(&mut r);
        grids.push(g);
        regions.push((lo, hi));
    }
    let t = random_transform(&mut r, &regions, diag);
    let expected = expected_pairs(&t);
    let plan = plan_chunks(&t, &grids).unwrap();
    let lo = t.domain().origin().to_vec();
    let mut got = Vec::new();
    let mut touched = BTreeSet::new();
    let coords: Vec<Vec<i64>> = plan.chunk_coords().unwrap().collect();
    for (i, op) in plan.ops().unwrap().enumerate() {
        let op = op.unwrap();
        assert_eq!(op.chunk_coords, coords[i]);
        assert!(
            touched.insert(op.chunk_coords.clone()),
            "chunk visited twice"
        );
        let before = got.len();
        check_op(&op, &lo, &mut got);
        for (_, st) in &got[before..] {
            assert_eq!(chunk_of(&grids, st), op.chunk_coords);
        }
        // The declarative projection satisfies the defining invariant.
        let proj = plan.projection_at(&op.row).unwrap();
        assert_eq!(proj.coverage, op.coverage);
        let origin = proj.chunk_domain.origin().to_vec();
        let shape = proj.chunk_domain.shape();
        proj.chunk_transform.domain().for_each_point(|p| {
            let req = proj.cell_transform.apply(p).unwrap();
            let local = proj.chunk_transform.apply(p).unwrap();
            let st: Vec<i64> = local.iter().zip(&origin).map(|(a, b)| a + b).collect();
            assert_eq!(t.apply(&req).unwrap(), st);
            for (d, &l) in local.iter().enumerate() {
                assert!(l >= 0 && (l as u64) < shape[d]);
            }
        });
    }
    got.sort();
    assert_eq!(got, expected, "transform {t:?}");
    let expect_touched: BTreeSet<Vec<i64>> =
        expected.iter().map(|(_, s)| chunk_of(&grids, s)).collect();
    assert_eq!(touched, expect_touched);
    if t.domain().is_empty() {
        assert_eq!(plan.len().unwrap(), 0);
    }

    // Two levels: shard grid = the grids above, inner chunks regular.
    let inner: Vec<u64> = (0..out_rank).map(|_| r.range(1, 3) as u64).collect();
    let sharded = plan_sharded(&t, &grids, &inner).unwrap();
    let mut got2 = Vec::new();
    let mut touched2 = BTreeSet::new();
    for work in sharded.shards().unwrap() {
        let work = work.unwrap();
        for op in work.inner_ops().unwrap() {
            let op = op.unwrap();
            let key = (work.shard.chunk_coords.clone(), op.chunk_coords.clone());
            assert!(touched2.insert(key), "inner chunk visited twice");
            let before = got2.len();
            check_op(&op, &lo, &mut got2);
            for (_, st) in &got2[before..] {
                assert_eq!(chunk_of(&grids, st), work.shard.chunk_coords);
                let inner_c: Vec<i64> = st
                    .iter()
                    .zip(&work.shard.chunk_start)
                    .zip(&inner)
                    .map(|((s, o), n)| (s - o).div_euclid(*n as i64))
                    .collect();
                assert_eq!(inner_c, op.chunk_coords);
            }
        }
    }
    got2.sort();
    assert_eq!(got2, expected, "two-level, transform {t:?}");
    let expect_touched2: BTreeSet<(Vec<i64>, Vec<i64>)> = expected
        .iter()
        .map(|(_, s)| {
            let shard = chunk_of(&grids, s);
            let start: Vec<i64> = shard
                .iter()
                .zip(&grids)
                .map(|(&c, g)| g.chunk_offset(c).unwrap())
                .collect();
            let inner_c = s
                .iter()
                .zip(&start)
                .zip(&inner)
                .map(|((s, o), n)| (s - o).div_euclid(*n as i64))
                .collect();
            (shard, inner_c)
        })
        .collect();
    assert_eq!(touched2, expect_touched2);

    // Two levels with random rectilinear inner grids per shard (ShardWork::new).
    let mut got3 = Vec::new();
    for shard in plan.ops().unwrap() {
        let shard = shard.unwrap();
        let inner_grids: Vec<Arc<dyn DimensionGrid>> = shard
            .data_shape
            .iter()
            .map(|&ext| {
                let mut edges = Vec::new();
                let mut sum = 0u64;
                while sum < ext {
                    let e = r.range(1, 3) as u64;
                    edges.push(e);
                    sum += e;
                }
                Arc::new(RectilinearGrid::new(&edges, ext).unwrap()) as Arc<dyn DimensionGrid>
            })
            .collect();
        let work = ShardWork::new(shard, &inner_grids).unwrap();
        for op in work.inner_ops().unwrap() {
            let op = op.unwrap();
            let before = got3.len();
            check_op(&op, &lo, &mut got3);
            for (_, st) in &got3[before..] {
                let local: Vec<i64> = st
                    .iter()
                    .zip(&work.shard.chunk_start)
                    .map(|(s, o)| s - o)
                    .collect();
                assert_eq!(chunk_of(&inner_grids, &local), op.chunk_coords);
            }
        }
    }
    got3.sort();
    assert_eq!(got3, expected, "two-level rectilinear, transform {t:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]
    #[test]
    fn exactly_once_oracle(seed in any::<u64>()) {
        run_case(seed, false);
    }

    #[test]
    fn exactly_once_oracle_diagonals(seed in any::<u64>()) {
        run_case(seed, true);
    }
}

#[test]
fn oracle_fixed_seeds() {
    for seed in 0..400 {
        run_case(seed, false);
        run_case(seed, true);
    }
}

#[test]
fn oracle_exercises_every_table_kind() {
    use zarrflow::plan::Table;
    let (mut strided, mut indexed, mut joint, mut diagonal, mut full, mut ops) = (0, 0, 0, 0, 0, 0);
    for (seed, diag) in (0..400).flat_map(|s| [(s, false), (s, true)]) {
        let mut r = Rng(seed);
        let out_rank = if diag {
            r.range(2, 3) as usize
        } else {
            r.range(0, 3) as usize
        };
        let mut grids = Vec::new();
        let mut regions = Vec::new();
        for _ in 0..out_rank {
            let (g, lo, hi) = random_grid(&mut r);
            grids.push(g);
            regions.push((lo, hi));
        }
        let t = random_transform(&mut r, &regions, diag);
        let plan = plan_chunks(&t, &grids).unwrap();
        for table in plan.partition().unwrap().tables() {
            match table {
                Table::Strided(_) => strided += 1,
                Table::Indexed(_) => indexed += 1,
                Table::Joint(_) => joint += 1,
                Table::Diagonal(_) => diagonal += 1,
                _ => {}
            }
        }
        for op in plan.ops().unwrap() {
            ops += 1;
            if op.unwrap().coverage == Coverage::Full {
                full += 1;
            }
        }
    }
    eprintln!(
        "strided {strided} indexed {indexed} joint {joint} diagonal {diagonal} ops {ops} full {full}"
    );
    assert!(strided > 50 && indexed > 20 && joint > 20 && diagonal > 100 && full > 20);
}
