//! Planning speed: partition time for 1M sorted and unsorted oindex coordinates, 1M random 2-D
//! vindex points and huge strided grids (for scale: zarr-indexing 0.3.0 on a 2-core machine
//! took about 15 ms, 101 ms and 186 ms on the first three).
//!
//! Run: `cargo bench --bench planning` (short measurement times).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::{Array1, ArrayD, IxDyn};
use zarrflow::grid::{DimensionGrid, RectilinearGrid, RegularGrid};
use zarrflow::index::{IndexArray, IndexDomain, IndexTransform, OutputIndexMap};
use zarrflow::plan::plan_chunks;
use zarrflow::sel;

const N: usize = 1_000_000;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn grids(sizes: &[(u64, u64)]) -> Vec<Arc<dyn DimensionGrid>> {
    sizes
        .iter()
        .map(|&(s, e)| Arc::new(RegularGrid::new(s, e).unwrap()) as Arc<dyn DimensionGrid>)
        .collect()
}

/// CPU time of the current thread in milliseconds (insensitive to time slicing on a
/// shared machine).
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// Minimum wall and CPU time over `runs` fresh plans.
fn min_ms(t: &IndexTransform, g: &[Arc<dyn DimensionGrid>], runs: usize) -> (f64, f64) {
    (0..runs)
        .map(|_| {
            let (start, cpu) = (Instant::now(), thread_cpu_ms());
            let plan = plan_chunks(black_box(t), g).unwrap();
            black_box(plan.partition().unwrap().len());
            (start.elapsed().as_secs_f64() * 1e3, thread_cpu_ms() - cpu)
        })
        .fold((f64::INFINITY, f64::INFINITY), |(a, b), (x, y)| {
            (a.min(x), b.min(y))
        })
}

fn partition_time(c: &mut Criterion, name: &str, t: &IndexTransform, g: &[Arc<dyn DimensionGrid>]) {
    let (wall, cpu) = min_ms(t, g, 15);
    println!("SUMMARY {name}: min of 15 runs: wall {wall:.3} ms, thread CPU {cpu:.3} ms");
    c.bench_function(name, |b| {
        b.iter(|| {
            let plan = plan_chunks(black_box(t), g).unwrap();
            black_box(plan.partition().unwrap().len())
        })
    });
}

fn benches(c: &mut Criterion) {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let base = IndexTransform::from_shape(&[N as u64]).unwrap();

    // 1M sorted oindex coordinates, 10 chunks of 100k.
    let sorted: Vec<i64> = (0..N as i64).map(|i| i - (i % 3)).collect();
    let t = base.oindex(&sel![Array1::from(sorted)]).unwrap();
    partition_time(
        c,
        "oindex 1M sorted / 10 chunks",
        &t,
        &grids(&[(100_000, N as u64)]),
    );

    // 1M unsorted oindex coordinates, 1000 chunks of 1000.
    let unsorted: Vec<i64> = (0..N).map(|_| (rng.next() % N as u64) as i64).collect();
    let t = base.oindex(&sel![Array1::from(unsorted)]).unwrap();
    let g = grids(&[(1000, N as u64)]);
    partition_time(c, "oindex 1M unsorted / 1000 chunks", &t, &g);
    c.bench_function("oindex 1M unsorted / 1000 chunks + lower every op", |b| {
        b.iter(|| {
            let plan = plan_chunks(black_box(&t), &g).unwrap();
            let mut cells = 0u128;
            for op in plan.ops().unwrap() {
                cells += op.unwrap().num_cells();
            }
            black_box(cells)
        })
    });

    // 1M random 2-D vindex points over (10000, 10000) / (100, 100): 10k chunks.
    let e = 10_000u64;
    let i: Vec<i64> = (0..N).map(|_| (rng.next() % e) as i64).collect();
    let j: Vec<i64> = (0..N).map(|_| (rng.next() % e) as i64).collect();
    let domain = IndexDomain::from_shape(&[N as u64]).unwrap();
    let arr = |v: Vec<i64>| IndexArray::new(ArrayD::from_shape_vec(IxDyn(&[N]), v).unwrap());
    let t = IndexTransform::new(
        domain,
        vec![
            OutputIndexMap::Array {
                array: arr(i),
                offset: 0,
                stride: 1,
            },
            OutputIndexMap::Array {
                array: arr(j),
                offset: 0,
                stride: 1,
            },
        ],
    )
    .unwrap();
    let g = grids(&[(100, e), (100, e)]);
    partition_time(c, "vindex 1M random 2-D points / 10k chunks", &t, &g);
    c.bench_function(
        "vindex 1M random 2-D points / 10k chunks + lower every op",
        |b| {
            b.iter(|| {
                let plan = plan_chunks(black_box(&t), &g).unwrap();
                let mut cells = 0u128;
                for op in plan.ops().unwrap() {
                    cells += op.unwrap().num_cells();
                }
                black_box(cells)
            })
        },
    );

    // Strided selection over 10^6 chunks per axis: [::3, ::3] over (10^7, 10^7) / (10, 10).
    let big = 10_000_000u64;
    let t = IndexTransform::from_shape(&[big, big])
        .unwrap()
        .index(&sel![..;3, ..;3])
        .unwrap();
    partition_time(
        c,
        "strided [::3, ::3] / 10^6 chunks per axis",
        &t,
        &grids(&[(10, big), (10, big)]),
    );

    // The same strided walk on a rectilinear grid (no closed form: one row per chunk).
    let rect: Vec<Arc<dyn DimensionGrid>> = (0..2)
        .map(|_| {
            Arc::new(RectilinearGrid::from_run_lengths(&[(10, 1_000_000)], big).unwrap())
                as Arc<dyn DimensionGrid>
        })
        .collect();
    partition_time(
        c,
        "strided [::3, ::3] / 10^6 rectilinear chunks per axis",
        &t,
        &rect,
    );

    // Box 1000² / 10² chunks (reference: partition 0.36 ms).
    let t = IndexTransform::from_shape(&[1000, 1000]).unwrap();
    partition_time(
        c,
        "box 1000^2 / 10^2 chunks",
        &t,
        &grids(&[(10, 1000), (10, 1000)]),
    );
}

criterion_group! {
    name = planning;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(planning);
