//! The selection-string parser and the planner: any text parses or gives an `IndexError`;
//! a parsed selection applied to a small array, in every mode and dialect, gives a
//! transform or an error; a small resulting transform maps every cell inside the array, and
//! its plans (one level over chunks that do not divide the shape, two levels over shards
//! and inner chunks) give an error or visit every result cell exactly once, at the storage
//! cell the transform maps it to.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use zarrflow::grid::{DimensionGrid, RegularGrid};
use zarrflow::index::{Dialect, IndexTransform, Selection, SelectionMode};
use zarrflow::plan::{ChunkOp, plan_chunks, plan_sharded};

const SHAPE: [u64; 3] = [7, 5, 3];
/// Chunks of the one-level plan (7 and 5 are not multiples).
const CHUNKS: [u64; 3] = [3, 2, 3];
/// Shards and inner chunks of the two-level plan.
const SHARDS: [u64; 3] = [4, 4, 3];
const INNER: [u64; 3] = [2, 3, 1];

fn grids(sizes: &[u64]) -> Vec<Arc<dyn DimensionGrid>> {
    sizes
        .iter()
        .zip(SHAPE)
        .map(|(&size, extent)| {
            Arc::new(RegularGrid::new(size, extent).expect("grid")) as Arc<dyn DimensionGrid>
        })
        .collect()
}

/// Result cell (C order) -> the storage cell the transform maps it to.
fn expected(t: &IndexTransform) -> Vec<Vec<i64>> {
    let domain = t.domain();
    let origin = domain.origin().to_vec();
    let shape = domain.shape();
    let n = domain.num_elements().unwrap() as usize;
    let mut out = vec![Vec::new(); n];
    t.for_each_mapped(|p, storage| {
        for (o, n) in storage.iter().zip(SHAPE) {
            assert!(*o >= 0 && (*o as u64) < n, "{storage:?} outside {SHAPE:?}");
        }
        let mut linear = 0usize;
        for ((x, o), n) in p.iter().zip(&origin).zip(&shape) {
            linear = linear * *n as usize + (x - o) as usize;
        }
        out[linear] = storage.to_vec();
    })
    .expect("mapping a valid transform");
    out
}

/// Checks one chunk operation's cells against `want`, counting visits.
fn visit(op: &ChunkOp, want: &[Vec<i64>], seen: &mut [u32]) {
    op.for_each_cell(|local, dest| {
        let mut linear = 0usize;
        for (x, n) in dest.iter().zip(&op.result_shape) {
            assert!(
                *x >= 0 && (*x as u64) < *n,
                "{dest:?} outside {:?}",
                op.result_shape
            );
            linear = linear * *n as usize + *x as usize;
        }
        for (d, l) in local.iter().enumerate() {
            assert!(
                *l >= 0 && (*l as u64) < op.data_shape[d],
                "{local:?} outside {op:?}"
            );
        }
        let storage: Vec<i64> = local
            .iter()
            .zip(&op.chunk_start)
            .map(|(l, s)| l + s)
            .collect();
        assert_eq!(storage, want[linear], "result cell {dest:?}");
        seen[linear] += 1;
    });
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(selection) = Selection::parse(text) else {
        return;
    };
    let base = IndexTransform::from_shape(&SHAPE).expect("identity");
    for mode in [
        SelectionMode::Basic,
        SelectionMode::Outer,
        SelectionMode::Vectorized,
    ] {
        for dialect in [Dialect::Positional, Dialect::Literal] {
            let Ok(t) = base.select(&selection, mode, dialect) else {
                continue;
            };
            let _ = t.selection_repr();
            if !t.domain().num_elements().is_some_and(|n| n <= 4096) {
                continue;
            }
            let want = expected(&t);
            if let Ok(plan) = plan_chunks(&t, &grids(&CHUNKS))
                && let Ok(ops) = plan.ops()
            {
                let mut seen = vec![0u32; want.len()];
                for op in ops {
                    visit(&op.expect("an op of a plan that built"), &want, &mut seen);
                }
                assert!(
                    seen.iter().all(|&c| c == 1),
                    "one-level plan visits {seen:?}"
                );
            }
            if let Ok(plan) = plan_sharded(&t, &grids(&SHARDS), &INNER)
                && let Ok(shards) = plan.shards()
            {
                let mut seen = vec![0u32; want.len()];
                for shard in shards {
                    let shard = shard.expect("a shard of a plan that built");
                    for op in shard.inner_ops().expect("inner ops") {
                        visit(&op.expect("an inner op"), &want, &mut seen);
                    }
                }
                assert!(
                    seen.iter().all(|&c| c == 1),
                    "two-level plan visits {seen:?}"
                );
            }
        }
    }
});
