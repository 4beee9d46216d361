//! Planning speed of issue 16: zarrflow's planner against zarr-indexing 0.3.0 (the reference
//! planner, zarr-python's index-transform package) on identical index arrays, in the same run.
//!
//! Run: `cargo bench --bench planning` (needs `.venv` from `scripts/python-env.sh` for the
//! peer; without it only zarrflow's column is printed). `cargo test --all-targets` runs this
//! binary without `--bench`, and it then skips at once. Options after `--`: `--only TEXT`
//! (cases whose name contains TEXT), `--no-peer` (zarrflow only), `--runs N`.
//!
//! Cases (the workloads, then two of zarrflow's own):
//! * `oindex sorted`: 1M sorted coordinates (uniform in `[0, 10^8)`, then sorted; repeats
//!   kept) over 10^8 cells in 1000-cell chunks (about 10^5 touched chunks);
//! * `oindex unsorted`: the same 1M coordinates in their drawn (random) order;
//! * `vindex 2-D`: 1M random points over `(10^5)²` in `1000²` chunks (10^4 chunks);
//! * `strided`: `[::7, ::3]` over `(10^7)²` in `10²` chunks (10^6 chunks per axis);
//! * `strided rectilinear`: the same on a rectilinear grid of the same chunks;
//! * `box`: the whole of `1000²` in `10²` chunks.
//!
//! What is compared (the same work on both sides): building the factored partition, i.e.
//! zarrflow's `plan_chunks(..).partition()` and zarr-indexing's
//! `plan_chunks(..).partition()` followed by reading the `local` column of each of its
//! IndexedSet / JointSet tables (zarr-indexing computes chunk-local coordinates lazily;
//! zarrflow's partition always holds them, with the chunk ids, starts, extents, CSR
//! pointers and positions). Neither side lowers rows into per-chunk operations. The
//! transforms (with their index arrays) and grids are built outside the timing on both
//! sides, as users build them (`oindex` / `vindex` selections, which bounds-check the index
//! arrays; zarrflow's keep each array's `(min, max)` from that check, and the planner
//! reuses it rather than scanning the array again; zarr-indexing computes it there too,
//! and again in each timed plan). The peer (`benches/peers/zarr_indexing_peer.py`) loads
//! the `.npy` files this benchmark writes, so both planners see the same values; the
//! benchmark checks that both partitions have the same row counts and points.
//!
//! After the table, zarrflow alone: building the unsorted-oindex and vindex transforms
//! from NumPy-style (positional) selections, which the table leaves out on both sides; it
//! is what `view.oindex(..)` / `view.vindex(..)` pay before planning.
//!
//! Times are the minimum over N runs of wall-clock time and of the thread's CPU time (the
//! CPU time is insensitive to time slicing on a shared machine); `ratio` is zarr-indexing's
//! time over zarrflow's, computed on CPU times and on wall times.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use ndarray::Array1;
use zarrflow::DataType;
use zarrflow::grid::{DimensionGrid, RectilinearGrid, RegularGrid};
use zarrflow::index::{Dialect, IndexTransform, Selection, SelectionItem, SelectionMode};
use zarrflow::npy::{NpyType, write_npy};
use zarrflow::plan::{Table, plan_chunks};
use zarrflow::sel;

const N: usize = 1_000_000;
/// Runs per case (zarrflow, and the peer on the index-array cases).
const RUNS: usize = 15;
/// Peer runs on the strided cases (zarr-indexing walks 10^6 chunks per axis in Python: seconds).
const SLOW_PEER_RUNS: usize = 2;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn regular(sizes: &[(u64, u64)]) -> Vec<Arc<dyn DimensionGrid>> {
    sizes
        .iter()
        .map(|&(s, e)| Arc::new(RegularGrid::new(s, e).unwrap()) as Arc<dyn DimensionGrid>)
        .collect()
}

/// CPU time of the current thread in milliseconds.
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// Rows per table and the points of the index-array tables of one fresh partition.
fn shape_of(t: &IndexTransform, g: &[Arc<dyn DimensionGrid>]) -> (Vec<usize>, usize) {
    let plan = plan_chunks(t, g).unwrap();
    let p = plan.partition().unwrap();
    let points = p
        .tables()
        .iter()
        .map(|t| match t {
            Table::Indexed(s) => s.local().len(),
            Table::Joint(s) => s.pointer().last().copied().unwrap_or(0),
            _ => 0,
        })
        .sum();
    (p.row_shape().to_vec(), points)
}

/// Minimum (wall, thread CPU) milliseconds over `runs` calls of `timed`, which returns the
/// (wall, CPU) milliseconds of the part it times.
fn min_times(runs: usize, mut timed: impl FnMut() -> (f64, f64)) -> (f64, f64) {
    (0..runs)
        .map(|_| timed())
        .fold((f64::INFINITY, f64::INFINITY), |(a, b), (x, y)| {
            (a.min(x), b.min(y))
        })
}

/// Minimum (wall, thread CPU) milliseconds over `runs` fresh partitions.
fn min_ms(t: &IndexTransform, g: &[Arc<dyn DimensionGrid>], runs: usize) -> (f64, f64) {
    min_times(runs, || {
        let (start, cpu) = (Instant::now(), thread_cpu_ms());
        let plan = plan_chunks(black_box(t), g).unwrap();
        black_box(plan.partition().unwrap().row_shape().len());
        let cpu = thread_cpu_ms() - cpu;
        (start.elapsed().as_secs_f64() * 1e3, cpu)
    })
}

fn write_i64(dir: &Path, name: &str, v: &[i64]) -> String {
    let path = dir.join(name);
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    write_npy(f, NpyType::of(DataType::Int64), &[v.len() as u64], &bytes).unwrap();
    path.display().to_string()
}

/// zarrflow's (wall, CPU) milliseconds and (rows per table, points) of one case.
type Measured = ((f64, f64), (Vec<usize>, usize));

struct Case {
    name: &'static str,
    t: IndexTransform,
    grids: Vec<Arc<dyn DimensionGrid>>,
    /// The peer's description of the same case (`None`: zarrflow only).
    peer: Option<serde_json::Value>,
}

/// Runs the peer on `cases`; `Err` says why zarr-indexing is not in this run.
fn run_peer(dir: &Path, cases: &[serde_json::Value]) -> Result<serde_json::Value, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    if !python.exists() {
        return Err(format!(
            "{} is missing (run scripts/python-env.sh)",
            python.display()
        ));
    }
    let spec = dir.join("cases.json");
    std::fs::write(&spec, serde_json::to_vec(cases).unwrap()).unwrap();
    let out = Command::new(python)
        .arg(root.join("benches/peers/zarr_indexing_peer.py"))
        .arg(&spec)
        .output()
        .map_err(|e| format!("cannot run the zarr-indexing peer: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the zarr-indexing peer failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("the zarr-indexing peer printed no JSON: {e}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs harness-less benches without `--bench`: skip.
        println!("planning benchmark: run it with `cargo bench --bench planning` (skipped)");
        return;
    }
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let only = opt("--only");
    let no_peer = args.iter().any(|a| a == "--no-peer");
    let runs: usize = opt("--runs").map_or(RUNS, |r| r.parse().expect("--runs N"));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut cases: Vec<Case> = Vec::new();

    // (a), (b): 1M coordinates over 10^8 cells, 1000-cell chunks; sorted and drawn order.
    let cells = 100_000_000u64;
    let drawn: Vec<i64> = (0..N).map(|_| (rng.next() % cells) as i64).collect();
    let mut sorted = drawn.clone();
    sorted.sort_unstable();
    let base = IndexTransform::from_shape(&[cells]).unwrap();
    for (name, values, file) in [
        ("oindex 1M sorted / 10^5 chunks", &sorted, "sorted.npy"),
        ("oindex 1M unsorted / 10^5 chunks", &drawn, "unsorted.npy"),
    ] {
        let path = write_i64(dir, file, values);
        cases.push(Case {
            name,
            t: base.oindex(&sel![Array1::from(values.clone())]).unwrap(),
            grids: regular(&[(1000, cells)]),
            peer: Some(serde_json::json!({
                "shape": [cells], "chunks": [1000], "kind": "oindex", "arrays": [path],
                "reps": runs,
            })),
        });
    }

    // (c): 1M random 2-D vindex points over (10^5)², 1000² chunks.
    let e = 100_000u64;
    let i: Vec<i64> = (0..N).map(|_| (rng.next() % e) as i64).collect();
    let j: Vec<i64> = (0..N).map(|_| (rng.next() % e) as i64).collect();
    let (pi, pj) = (write_i64(dir, "vi.npy", &i), write_i64(dir, "vj.npy", &j));
    // Built as a user's selection is (bounds-checked), like the other cases and the peer's.
    let t = IndexTransform::from_shape(&[e, e])
        .unwrap()
        .vindex(&sel![Array1::from(i.clone()), Array1::from(j.clone())])
        .unwrap();
    cases.push(Case {
        name: "vindex 1M 2-D points / 10^4 chunks",
        t,
        grids: regular(&[(1000, e), (1000, e)]),
        peer: Some(serde_json::json!({
            "shape": [e, e], "chunks": [1000, 1000], "kind": "vindex", "arrays": [pi, pj],
            "reps": runs,
        })),
    });

    // (d): [::7, ::3] over (10^7)², 10² chunks: 10^6 chunks per axis.
    let big = 10_000_000u64;
    let t = IndexTransform::from_shape(&[big, big])
        .unwrap()
        .index(&sel![..;7, ..;3])
        .unwrap();
    cases.push(Case {
        name: "strided [::7, ::3] / 10^6 chunks per axis",
        t: t.clone(),
        grids: regular(&[(10, big), (10, big)]),
        peer: Some(serde_json::json!({
            "shape": [big, big], "chunks": [10, 10], "kind": "strided", "steps": [7, 3],
            "reps": SLOW_PEER_RUNS,
        })),
    });
    // The same walk on a rectilinear grid (no closed form on zarrflow's side either).
    let rect: Vec<Arc<dyn DimensionGrid>> = (0..2)
        .map(|_| {
            Arc::new(RectilinearGrid::from_run_lengths(&[(10, 1_000_000)], big).unwrap())
                as Arc<dyn DimensionGrid>
        })
        .collect();
    cases.push(Case {
        name: "strided [::7, ::3] / 10^6 rectilinear chunks per axis",
        t,
        grids: rect,
        peer: Some(serde_json::json!({
            "shape": [big, big], "chunks_rle": [[[10, 1_000_000]], [[10, 1_000_000]]],
            "kind": "strided", "steps": [7, 3], "reps": SLOW_PEER_RUNS,
        })),
    });

    // A box: the whole of 1000² in 10² chunks.
    cases.push(Case {
        name: "box 1000^2 / 10^2 chunks",
        t: IndexTransform::from_shape(&[1000, 1000]).unwrap(),
        grids: regular(&[(10, 1000), (10, 1000)]),
        peer: Some(serde_json::json!({
            "shape": [1000, 1000], "chunks": [10, 10], "kind": "box", "reps": runs,
        })),
    });

    if let Some(only) = &only {
        cases.retain(|c| c.name.contains(only.as_str()));
    }
    // zarrflow first (alone on its thread), then the peer in one child process.
    let ours: Vec<Measured> = cases
        .iter()
        .map(|c| {
            let shape = shape_of(&c.t, &c.grids);
            (min_ms(&c.t, &c.grids, runs), shape)
        })
        .collect();
    let peer_cases: Vec<serde_json::Value> = cases
        .iter()
        .filter_map(|c| {
            let mut p = c.peer.clone()?;
            p["name"] = c.name.into();
            Some(p)
        })
        .collect();
    let peer = if no_peer {
        Err("--no-peer".to_string())
    } else {
        run_peer(dir, &peer_cases)
    };

    println!(
        "Planning: plan_chunks(..).partition() (zarr-indexing: + the lazy `local` columns), \
         min of {runs} runs (peer: {SLOW_PEER_RUNS} on the strided cases); ratio = \
         zarr-indexing / zarrflow"
    );
    if let Err(why) = &peer {
        println!("zarr-indexing: not in this run: {why}");
    }
    println!(
        "{:<54} {:>21} {:>21} {:>9} {:>9}",
        "case", "zarrflow ms cpu/wall", "zarr-idx ms cpu/wall", "ratio cpu", "ratio wall"
    );
    for (c, ((wall, cpu), (rows, points))) in cases.iter().zip(&ours) {
        let p = peer.as_ref().ok().and_then(|v| v.get(c.name));
        let (pcol, rcpu, rwall) = match p {
            Some(p) => {
                let (pc, pw) = (
                    p["cpu"].as_f64().unwrap_or(f64::NAN) * 1e3,
                    p["wall"].as_f64().unwrap_or(f64::NAN) * 1e3,
                );
                let prows: Vec<usize> = p["rows"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_u64())
                            .map(|x| x as usize)
                            .collect()
                    })
                    .unwrap_or_default();
                let ppoints = p["points"].as_u64().unwrap_or(0) as usize;
                assert_eq!(
                    (&prows, ppoints),
                    (rows, *points),
                    "{}: the two partitions differ in rows or points",
                    c.name
                );
                (
                    format!("{pc:.2} / {pw:.2}"),
                    format!("{:.1}x", pc / cpu),
                    format!("{:.1}x", pw / wall),
                )
            }
            None => ("-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:<54} {:>21} {:>21} {:>9} {:>9}",
            c.name,
            format!("{cpu:.3} / {wall:.3}"),
            pcol,
            rcpu,
            rwall
        );
    }
    let cpu_of = |name: &str| {
        cases
            .iter()
            .position(|c| c.name.starts_with(name))
            .map(|i| (ours[i].0).1)
    };
    if let (Some(s), Some(u)) = (cpu_of("oindex 1M sorted"), cpu_of("oindex 1M unsorted")) {
        println!(
            "sorted vs unsorted (zarrflow, cpu): {s:.3} ms vs {u:.3} ms: sorted is {:.2}x the unsorted time ({})",
            s / u,
            if s <= u {
                "not slower"
            } else {
                "SLOWER than unsorted"
            }
        );
    }
    // Building the transform from a user's NumPy-style selection, which the table leaves
    // out (on both sides): what `view.oindex(..)` / `view.vindex(..)` pay before planning.
    let positional = |t: &IndexTransform, items: Vec<Vec<i64>>, mode: SelectionMode| {
        min_times(runs, || {
            let sel: Selection = items
                .iter()
                .map(|v| SelectionItem::from(v.clone()))
                .collect();
            let (start, cpu) = (Instant::now(), thread_cpu_ms());
            let built = black_box(t.select(black_box(&sel), mode, Dialect::Positional));
            let (wall, cpu) = (start.elapsed(), thread_cpu_ms() - cpu);
            drop(built.unwrap()); // freed outside the timing
            (wall.as_secs_f64() * 1e3, cpu)
        })
    };
    if only.is_none() {
        let (ow, oc) = positional(&base, vec![drawn], SelectionMode::Outer);
        let square = IndexTransform::from_shape(&[e, e]).unwrap();
        let (vw, vc) = positional(&square, vec![i, j], SelectionMode::Vectorized);
        println!(
            "building the transform from the selection (NumPy positional: bounds checks, \
             negative indices, the index arrays moved into the transform; zarrflow only, not \
             in the table): oindex 1M unsorted {oc:.3} / {ow:.3} ms, vindex 1M 2-D \
             {vc:.3} / {vw:.3} ms (cpu / wall)"
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at the end: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
