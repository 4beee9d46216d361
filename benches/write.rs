//! Write benchmark: zarrflow against zarrs (sync filesystem API) and TensorStore on the same
//! data, in the same run: each case's line prints zarrs / zarrflow (above 1 means zarrflow is
//! faster), the closing table zarrflow / best peer (below 1 means zarrflow is faster).
//!
//! `cargo bench --bench write` (512³ uint16 = 256 MiB, shards 128³, inner chunks 32³, zstd 0).
//! `ZARRFLOW_BENCH_SMALL=1 cargo bench --bench write` runs a 128³ version in seconds;
//! `cargo bench --bench write -- --profile 10` runs zarrflow's whole-array write alone, 10
//! times (for `perf record`); `-- --profile 10 small` its 100 small writes; `-- --profile 10
//! update` its update of one inner chunk (best and median).
//!
//! Cases:
//! 1. write the whole array (every shard fully covered: no reads);
//! 2. update one inner chunk inside a stored shard (zarrflow: one GET + one PUT, the other
//!    inner chunks copied byte for byte; zarrs: full read-modify-write of the shard);
//! 3. 100 small writes into one shard, with and without a zarrflow batch.
//!
//! TensorStore 0.1.86 (the pinned `.venv`, `benches/peers/tensorstore_peer.py`) writes the
//! same cases into an array of the same layout in the same run (timed in-process, import
//! and open excluded; its batch is a transaction); the closing table prints each case's
//! zarrflow time over the best peer's (below 1 means zarrflow is faster), zarrflow's and
//! TensorStore's CPU time (user + system of each process, every thread) in their best calls,
//! and zarrflow's over the machine's cores (the least time the cores allow for its work).
//! zarrflow frees the files a write replaces on a thread of its own (`store/closer.rs`): what
//! that thread does after a call returns is outside the call's CPU time, where TensorStore
//! frees them inside its calls.
//! Without `.venv` the table says why TensorStore is missing.
//!
//! After the table, the encode floor of case 1: every inner chunk compressed by zstd at the
//! array's level from buffers already in chunk order (no gather, no shard assembly, no file
//! writes), on one thread and on every core, with zarrflow's and TensorStore's times over the
//! all-core floor and that floor over TensorStore's time (with this libzstd at this level,
//! the least ratio to TensorStore an engine can reach on the machine).
//!
//! Then the same cases with 10 ms of latency: the three libraries write through one local
//! S3-compatible server (`benches/peers/s3_latency.rs`, in memory, every answer 10 ms late),
//! each into its own bucket, best of `LATENCY_RUNS` calls (the first calls also open each
//! library's connections): zarrflow (`s3://` URL) and zarrs (its async API
//! over `zarrs_object_store`) through object_store's S3 client, with credentials, so every
//! PUT's body is hashed for the signature; TensorStore through its `s3` kvstore (anonymous,
//! and it hashes every body all the same). The table adds zarrflow's requests in its best
//! call and the CPU time of the best calls, the server's threads left out of zarrflow's.
//! Two more rows repeat the update and the small writes with a 64 MiB write cache
//! (zarrflow's `with_write_cache_bytes`; TensorStore's cache pool, not rechecking cached
//! data; zarrs has none: its times there are those of the rows without).
//! `-- --s3-only` runs these cases alone; `-- --s3-only --profile N` zarrflow's whole-array
//! write through the server alone, N times (its CPU time includes the server's threads).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ndarray::{ArrayD, IxDyn};
use zarrflow::array::{Array, ArrayOptions, ArrayView};
use zarrflow::index::Selection;
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrs::array::codec::{ShardingCodecBuilder, ZstdCodec};
use zarrs::array::{ArrayBuilder, ArraySubset, data_type};
use zarrs::filesystem::FilesystemStore;

/// Calls of each local case but the update, for every library (best of them), at every
/// size: the whole-array write into the page cache varies by a fifth from call to call here
/// (writeback of the calls before it), and a best of 3 could land any library's time
/// anywhere in that range.
const LOCAL_RUNS: usize = 5;

/// Calls of each case through the delaying S3 server, for every library (the first calls
/// also open each library's connections).
const LATENCY_RUNS: usize = 5;

/// Repetitions of the one-inner-chunk update, for every library (a write of about a
/// millisecond, where a machine's noise is as large as the time; TensorStore's peer script
/// uses the same number).
const UPDATE_REPS: usize = 25;

/// The write cache of the S3 cases that use one (zarrflow's `with_write_cache_bytes`,
/// TensorStore's cache pool): the same number in `peers/tensorstore_peer.py`.
const WRITE_CACHE_BYTES: u64 = 64 << 20;

#[path = "peers/cpu_time.rs"]
mod cpu_time;
#[path = "peers/s3_latency.rs"]
mod s3_latency;
#[path = "peers/tensorstore.rs"]
mod tensorstore;

/// The latency every request to the write benchmark's S3 server waits before its answer.
const LATENCY: Duration = Duration::from_millis(10);

/// Of `runs` calls of `f`: the best time, the last result and the process's CPU time (user +
/// system, every thread) in the best call.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T, Duration) {
    let mut best = Duration::MAX;
    let mut last = None;
    let mut cpu = Duration::ZERO;
    for _ in 0..runs {
        let (v, wall, used) = cpu_time::timed(&mut f);
        if wall < best {
            (best, cpu) = (wall, used);
        }
        last = Some(v);
    }
    (best, last.expect("at least one run"), cpu)
}

/// One case's times: zarrs, zarrflow (best, and the CPU time of that call), and the name of the
/// TensorStore peer's case.
struct Case {
    name: &'static str,
    zarrs: Duration,
    ours: Duration,
    ours_cpu: Duration,
    peer_case: &'static str,
}

/// Milliseconds with one decimal, or a dash.
fn ms(d: Option<Duration>) -> String {
    d.map_or("—".to_string(), |d| {
        format!("{:.1}", d.as_secs_f64() * 1e3)
    })
}

impl Case {
    /// The header of the cells [`Case::cells`] prints, its first titled `first`.
    fn header(first: &str) -> String {
        format!(
            "| {first:<48} | {:>9} | {:>9} | {:>11} | {:>16} | {:>12} | {:>15} |",
            "zarrflow",
            "zarrs",
            "TensorStore",
            "zarrflow / best",
            "zarrflow CPU",
            "TensorStore CPU"
        )
    }

    /// The table row's first cells: `| name | zarrflow | zarrs | TensorStore | zarrflow / best
    /// | zarrflow CPU | TensorStore CPU |`, TensorStore's from `peer` when it ran.
    fn cells(&self, peer: &Result<serde_json::Value, String>) -> String {
        let ts_case = peer.as_ref().ok().map(|p| &p[self.peer_case]);
        let ts = ts_case.and_then(tensorstore::seconds);
        let best = ts.map_or(self.zarrs, |t| t.min(self.zarrs));
        format!(
            "| {:<48} | {:>9} | {:>9} | {:>11} | {:>15.2}x | {:>12} | {:>15} |",
            self.name,
            ms(Some(self.ours)),
            ms(Some(self.zarrs)),
            ms(ts),
            self.ours.as_secs_f64() / best.as_secs_f64(),
            ms(Some(self.ours_cpu)),
            ms(ts_case.and_then(tensorstore::cpu)),
        )
    }
}

fn row(name: &str, zarrs: Duration, ours: Duration) {
    println!(
        "{name:<48} zarrs {:>9.1} ms   zarrflow {:>9.1} ms   ratio {:>6.2}x",
        zarrs.as_secs_f64() * 1e3,
        ours.as_secs_f64() * 1e3,
        zarrs.as_secs_f64() / ours.as_secs_f64()
    );
}

/// The benchmark's array (`[n, shard, inner]`: n³ uint16, shards shard³, inner chunks
/// inner³, zstd level 0), created by zarrflow at `a` in `store`.
fn zarrflow_array(
    rt: &tokio::runtime::Runtime,
    store: &Store,
    [n, shard, inner]: [u64; 3],
) -> Array {
    let spec = ArraySpec::new(vec![n; 3], "uint16")
        .shard_shape(vec![shard; 3])
        .inner_chunk_shape(vec![inner; 3]);
    rt.block_on(Array::create(
        store,
        &StoreKey::new("a").expect("key"),
        &spec,
        ArrayOptions::default(),
    ))
    .expect("zarrflow array")
}

/// The same array for zarrs, at `/a` in `store` (its metadata not yet stored).
fn zarrs_array<S: ?Sized>(store: Arc<S>, [n, shard, inner]: [u64; 3]) -> zarrs::array::Array<S> {
    let mut sb = ShardingCodecBuilder::new(
        vec![std::num::NonZeroU64::new(inner).expect("nonzero"); 3],
        &data_type::uint16(),
    );
    sb.bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(0, false))]);
    ArrayBuilder::new(vec![n; 3], vec![shard; 3], data_type::uint16(), 0u16)
        .array_to_bytes_codec(sb.build_arc())
        .build(store, "/a")
        .expect("zarrs array")
}

/// Runs TensorStore's peer on the cases (`args` name the mode and where it writes; the
/// layout and repetitions follow) and checks that its array ends holding `ours`' values.
fn tensorstore_cases(
    mut args: Vec<String>,
    [n, shard, inner]: [u64; 3],
    runs: usize,
    ours: &ArrayD<u16>,
) -> Result<serde_json::Value, String> {
    args.extend([n, shard, inner, runs as u64].map(|v| v.to_string()));
    let peer = tensorstore::run(&args);
    if let Ok(p) = &peer {
        let ours_sum: u64 = ours.iter().map(|&v| v as u64).sum();
        assert_eq!(
            tensorstore::checksum(&p["sum"]),
            Some(ours_sum),
            "TensorStore's array holds the same values ({})",
            args[0]
        );
    }
    peer
}

/// zarrflow's whole array, checked equal to zarrs' values (`zarrs`, C order).
fn read_same_as(
    rt: &tokio::runtime::Runtime,
    ours: &Array,
    zarrs: &[u16],
    place: &str,
) -> ArrayD<u16> {
    let values = rt
        .block_on(ours.view().read::<u16>())
        .expect("zarrflow read");
    assert_eq!(
        zarrs,
        values.as_slice().expect("contiguous"),
        "both libraries hold the same data {place}"
    );
    values
}

/// What the update and small-write cases write, the same for every library and store: one
/// inner chunk rewritten inside shard (1, 1, 1) (shard (0, 0, 0) when the array is one shard
/// wide), and single cells at 100 places in that shard.
struct Workload {
    /// The rewritten inner chunk's region.
    region: [std::ops::Range<u64>; 3],
    /// Its new values.
    chunk: ArrayD<u16>,
    /// The small writes' cells.
    points: Vec<[u64; 3]>,
}

impl Workload {
    /// The cases' inputs for an n³ array of shard³ shards and inner³ inner chunks.
    fn new(n: u64, shard: u64, inner: u64) -> Workload {
        let s0 = if n == shard { 0 } else { shard };
        let cells: Vec<u16> = (0..inner.pow(3)).map(|i| (i % 1000) as u16 + 7).collect();
        Workload {
            region: [
                s0 + inner..s0 + 2 * inner,
                s0 + inner..s0 + 2 * inner,
                s0..s0 + inner,
            ],
            chunk: ArrayD::from_shape_vec(IxDyn(&[inner as usize; 3]), cells).expect("shape"),
            points: (0..100u64)
                .map(|i| {
                    [
                        s0 + (i * 37) % shard,
                        s0 + (i * 11) % shard,
                        s0 + (i * 5) % shard,
                    ]
                })
                .collect(),
        }
    }

    /// The rewritten inner chunk's values, C order.
    fn chunk_values(&self) -> &[u16] {
        self.chunk.as_slice().expect("C order")
    }

    /// zarrs' subset of the rewritten inner chunk.
    fn region_subset(&self) -> ArraySubset {
        ArraySubset::new_with_ranges(&self.region)
    }

    /// zarrflow's view of the rewritten inner chunk.
    fn region_view(&self, a: &Array) -> ArrayView {
        let r = &self.region;
        let sel = format!(
            "{}:{}, {}:{}, {}:{}",
            r[0].start, r[0].end, r[1].start, r[1].end, r[2].start, r[2].end
        );
        a.view()
            .get(&Selection::parse(&sel).expect("selection"))
            .expect("view")
    }

    /// zarrs' subset of one small write's cell.
    fn point_subset(p: &[u64; 3]) -> ArraySubset {
        ArraySubset::new_with_ranges(&[p[0]..p[0] + 1, p[1]..p[1] + 1, p[2]..p[2] + 1])
    }

    /// zarrflow's views of the small writes' cells.
    fn point_views(&self, a: &Array) -> Vec<ArrayView> {
        self.points
            .iter()
            .map(|p| {
                let s = Selection::parse(&format!("{}, {}, {}", p[0], p[1], p[2])).expect("sel");
                a.view().get(&s).expect("view")
            })
            .collect()
    }
}

fn main() {
    // `cargo test --all-targets` runs bench targets without `--bench`: skip the heavy work.
    if !std::env::args().any(|a| a == "--bench") {
        println!("write benchmark skipped (run it with `cargo bench --bench write`)");
        return;
    }
    let small = std::env::var_os("ZARRFLOW_BENCH_SMALL").is_some();
    let n: u64 = if small { 128 } else { 512 };
    let (shard, inner) = (128u64.min(n), 32u64);
    let shape = [n, n, n];
    let data: Vec<u16> = {
        let mut v = Vec::with_capacity((n * n * n) as usize);
        for x in 0..n {
            for y in 0..n {
                for z in 0..n {
                    v.push(((x + y * y / 32 + z * z * z) % 65536) as u16);
                }
            }
        }
        v
    };
    println!(
        "write benchmark: {n}³ uint16 ({} MiB), shards {shard}³, inner chunks {inner}³, zstd level 0",
        (data.len() * 2) >> 20
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    zarrs::config::global_config_mut().set_include_zarrs_metadata(false);

    // zarrs (sync FilesystemStore), the baseline.
    let zstore = Arc::new(FilesystemStore::new(dir.path().join("zarrs")).expect("zarrs store"));
    let zarray = zarrs_array(zstore, [n, shard, inner]);
    zarray.store_metadata().expect("metadata");
    let all = ArraySubset::new_with_shape(shape.to_vec());

    // zarrflow on the same filesystem.
    let store = Store::open(
        dir.path().join("zarrflow").to_str().expect("utf-8 path"),
        StoreOptions::default(),
    )
    .expect("store");
    let ours = zarrflow_array(&rt, &store, [n, shard, inner]);
    let values = ArrayD::from_shape_vec(IxDyn(&[n as usize; 3]), data.clone()).expect("shape");
    let work = Workload::new(n, shard, inner);

    // `-- --profile N [small]`: zarrflow's whole-array write alone (or, with `small`, its 100
    // small writes into one shard), N times, for `perf record`.
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args
        .iter()
        .position(|a| a == "--profile")
        .filter(|_| !args.iter().any(|a| a == "--s3-only"))
    {
        let reps: usize = args.get(i + 1).and_then(|r| r.parse().ok()).unwrap_or(10);
        let small_writes = args.get(i + 2).is_some_and(|c| c == "small");
        if args.get(i + 2).is_some_and(|c| c == "update") {
            // One inner chunk (32³ cells) rewritten inside shard (1, 1, 1), as the table's
            // update case does.
            rt.block_on(ours.view().write(&values.view()))
                .expect("zarrflow write");
            let view = work.region_view(&ours);
            let mut times: Vec<f64> = (0..reps)
                .map(|_| {
                    let t = Instant::now();
                    rt.block_on(view.write(&work.chunk.view()))
                        .expect("zarrflow update");
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!(
                "update one inner chunk zarrflow: best {:.2} ms, median {:.2} ms over {reps}",
                times[0],
                times[reps / 2]
            );
            return;
        }
        let cpu = || {
            let (user, system) = cpu_time::user_and_system();
            (user.as_secs_f64() * 1e3, system.as_secs_f64() * 1e3)
        };
        let views = work.point_views(&ours);
        if small_writes {
            rt.block_on(ours.view().write(&values.view()))
                .expect("zarrflow write");
        }
        for _ in 0..reps {
            let (u0, s0) = cpu();
            let t = Instant::now();
            if small_writes {
                rt.block_on(async {
                    for (i, v) in views.iter().enumerate() {
                        v.write_scalar(i as u16).await.expect("small write");
                    }
                });
            } else {
                rt.block_on(ours.view().write(&values.view()))
                    .expect("zarrflow write");
            }
            let (u1, s1) = cpu();
            println!(
                "{} zarrflow: {:.1} ms (CPU: user {:.0} ms, system {:.0} ms)",
                if small_writes {
                    "100 small writes"
                } else {
                    "write whole"
                },
                t.elapsed().as_secs_f64() * 1e3,
                u1 - u0,
                s1 - s0
            );
        }
        return;
    }
    let runs = LOCAL_RUNS;
    if args.iter().any(|a| a == "--s3-only") {
        s3_latency_cases(&rt, [n, shard, inner], &data, &values, &work, LATENCY_RUNS);
        return;
    }
    let (tz, _, _) = best(runs, || {
        zarray
            .store_array_subset(&all, data.as_slice())
            .expect("zarrs write")
    });
    let (tf, _, cf) = best(runs, || {
        rt.block_on(ours.view().write(&values.view()))
            .expect("zarrflow write")
    });
    row("write whole array", tz, tf);
    let mut cases = vec![Case {
        name: "write whole array",
        zarrs: tz,
        ours: tf,
        ours_cpu: cf,
        peer_case: "write whole",
    }];

    // One inner chunk inside a stored shard.
    let sub = work.region_subset();
    let (tz, _, _) = best(UPDATE_REPS, || {
        zarray
            .store_array_subset(&sub, work.chunk_values())
            .expect("zarrs update")
    });
    let view = work.region_view(&ours);
    let (tf, _, cf) = best(UPDATE_REPS, || {
        rt.block_on(view.write(&work.chunk.view()))
            .expect("zarrflow update")
    });
    row("update one inner chunk inside a shard", tz, tf);
    cases.push(Case {
        name: "update one inner chunk inside a shard",
        zarrs: tz,
        ours: tf,
        ours_cpu: cf,
        peer_case: "update one inner chunk",
    });

    // 100 small writes (single cells) into one shard.
    let (tz, _, _) = best(runs, || {
        for (i, p) in work.points.iter().enumerate() {
            zarray
                .store_array_subset(&Workload::point_subset(p), &[i as u16][..])
                .expect("zarrs small write");
        }
    });
    let views = work.point_views(&ours);
    let (tf, _, cf) = best(runs, || {
        rt.block_on(async {
            for (i, v) in views.iter().enumerate() {
                v.write_scalar(i as u16)
                    .await
                    .expect("zarrflow small write");
            }
        })
    });
    row("100 small writes into one shard (no batch)", tz, tf);
    cases.push(Case {
        name: "100 small writes into one shard (no batch)",
        zarrs: tz,
        ours: tf,
        ours_cpu: cf,
        peer_case: "100 small writes",
    });
    let (tb, _, cb) = best(runs, || {
        let mut batch = ours.batch();
        for (i, v) in views.iter().enumerate() {
            batch.stage_scalar(v, i as u16).expect("stage");
        }
        rt.block_on(batch.commit()).expect("commit");
    });
    row("100 small writes into one shard (zarrflow batch)", tz, tb);
    cases.push(Case {
        name: "100 small writes into one shard (zarrflow batch)",
        zarrs: tz,
        ours: tb,
        ours_cpu: cb,
        peer_case: "100 small writes (transaction)",
    });

    // Both arrays hold the same values.
    let a: Vec<u16> = zarray.retrieve_array_subset(&all).expect("zarrs read");
    let b = read_same_as(&rt, &ours, &a, "locally");
    println!("check: both arrays hold identical values");

    // TensorStore on the same cases, after zarrflow and zarrs (their rows above are unchanged).
    let peer = tensorstore_cases(
        vec![
            "write".into(),
            dir.path().join("tensorstore").display().to_string(),
        ],
        [n, shard, inner],
        runs,
        &b,
    );
    if peer.is_ok() {
        println!("check: TensorStore's array holds the same sum");
    }
    print_table(&cases, &peer);
    print_encode_floor(&data, [n, shard, inner], runs, &cases[0], &peer);
    s3_latency_cases(&rt, [n, shard, inner], &data, &values, &work, LATENCY_RUNS);
}

/// The closing table: every library's time, zarrflow's over the best peer's, zarrflow's and
/// TensorStore's CPU time and zarrflow's over the cores.
fn print_table(cases: &[Case], peer: &Result<serde_json::Value, String>) {
    println!();
    if let Err(why) = peer {
        println!("TensorStore is not in this run: {why}");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "times in ms (best of N); zarrflow / best: zarrflow time / best peer time (< 1: \
         zarrflow faster); CPU: user + system time of the process in the best call; \
         CPU / {cores}: the least time this machine's {cores} cores allow for zarrflow's work"
    );
    println!("{} {:>9} |", Case::header("case"), format!("CPU / {cores}"));
    println!("|{}|", ["---"; 8].join("|"));
    for c in cases {
        println!(
            "{} {:>9} |",
            c.cells(peer),
            ms(Some(c.ours_cpu / cores as u32))
        );
    }
}

/// The encode floor of write whole: every inner chunk compressed by zstd at the array's
/// level (0, no checksum) from buffers that already hold its cells in C order (gathered
/// beforehand, untimed) into a reused buffer, on one thread and on every core, best of
/// `runs`; no gather from the caller's array, no shard assembly, no file writes. Printed
/// with zarrflow's and TensorStore's whole-array write over the all-core floor, and that
/// floor over TensorStore's time: with this libzstd (zstd-sys 1.5.7) at the array's level,
/// the least ratio to TensorStore an engine can reach here (TensorStore compresses at the
/// same level with its own build of libzstd).
fn print_encode_floor(
    data: &[u16],
    [n, shard, inner]: [u64; 3],
    runs: usize,
    whole: &Case,
    peer: &Result<serde_json::Value, String>,
) {
    let (n, inner) = (n as usize, inner as usize);
    let per_axis = n / inner;
    // the inner chunks in the order a writer meets them: shard by shard, C order within
    let shards = (n / shard as usize).max(1);
    let per_shard = per_axis / shards;
    let mut order = Vec::with_capacity(per_axis.pow(3));
    for s in 0..shards.pow(3) {
        let (sz, sy, sx) = (s / (shards * shards), s / shards % shards, s % shards);
        for c in 0..per_shard.pow(3) {
            let (cz, cy, cx) = (
                c / (per_shard * per_shard),
                c / per_shard % per_shard,
                c % per_shard,
            );
            order.push([
                sz * per_shard + cz,
                sy * per_shard + cy,
                sx * per_shard + cx,
            ]);
        }
    }
    let chunk_cells = inner.pow(3);
    let mut chunks = vec![0u8; order.len() * chunk_cells * 2];
    for (k, [cz, cy, cx]) in order.iter().enumerate() {
        let out = &mut chunks[k * chunk_cells * 2..(k + 1) * chunk_cells * 2];
        for z in 0..inner {
            for y in 0..inner {
                let src = ((cz * inner + z) * n + cy * inner + y) * n + cx * inner;
                let row = &data[src..src + inner];
                let at = (z * inner + y) * inner * 2;
                for (i, v) in row.iter().enumerate() {
                    out[at + 2 * i..at + 2 * i + 2].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    let compress = |part: &[u8]| -> usize {
        let mut c = zstd::bulk::Compressor::new(0).expect("zstd context");
        let mut buf = Vec::with_capacity(zstd::zstd_safe::compress_bound(chunk_cells * 2));
        part.chunks(chunk_cells * 2)
            .map(|chunk| {
                buf.clear();
                c.compress_to_buffer(chunk, &mut buf).expect("zstd");
                buf.len()
            })
            .sum()
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (one, _, _) = best(runs, || compress(&chunks));
    let per = order.len().div_ceil(cores) * chunk_cells * 2;
    let threads = chunks.chunks(per).count();
    let (all, stored, _) = best(runs, || {
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunks
                .chunks(per)
                .map(|part| scope.spawn(move || compress(part)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .sum::<usize>()
        })
    });
    let ts = peer
        .as_ref()
        .ok()
        .and_then(|p| tensorstore::seconds(&p[whole.peer_case]));
    let over = |t: Duration| format!("{:.2}x", t.as_secs_f64() / all.as_secs_f64());
    println!();
    println!(
        "encode floor of write whole (every inner chunk through zstd level 0 from buffers \
         already in chunk order into a reused buffer; no gather, no shard assembly, no file \
         writes; {:.1} MiB compressed to {:.1} MiB; best of {runs}): 1 thread {} ms, {threads} \
         threads {} ms; write whole / {threads}-thread floor: zarrflow {}, TensorStore {}; \
         {threads}-thread floor / TensorStore {} (with this libzstd at this level, the least \
         ratio to TensorStore an engine can reach here)",
        chunks.len() as f64 / (1 << 20) as f64,
        stored as f64 / (1 << 20) as f64,
        ms(Some(one)),
        ms(Some(all)),
        over(whole.ours),
        ts.map_or("—".into(), over),
        ts.map_or("—".into(), |t| format!(
            "{:.2}x",
            all.as_secs_f64() / t.as_secs_f64()
        )),
    );
}

/// The same cases with 10 ms of latency on every request: the three libraries write through
/// one local S3-compatible server (`peers/s3_latency.rs`), each into its own bucket; zarrflow
/// and zarrs through object_store's S3 client (signed requests, so each PUT's body is hashed
/// for `x-amz-content-sha256`), zarrs with its async API (`AsyncObjectStore`), TensorStore with
/// its `s3` kvstore (anonymous, and it hashes each body all the same). Prints each library's
/// best time, zarrflow's over the best peer's, and the requests of zarrflow's best call.
fn s3_latency_cases(
    rt: &tokio::runtime::Runtime,
    [n, shard, inner]: [u64; 3],
    data: &[u16],
    values: &ArrayD<u16>,
    work: &Workload,
    runs: usize,
) {
    use zarrs::storage::AsyncReadableWritableStorageTraits;
    let server = s3_latency::S3LatencyServer::start(LATENCY);
    println!();
    println!(
        "with {} ms latency (a local S3-compatible server answering every request {} ms late; \
         each library writes its own bucket):",
        LATENCY.as_millis(),
        LATENCY.as_millis()
    );
    let shape = vec![n; 3];

    // zarrflow
    let store = Store::open(
        "s3://zarrflow/a",
        StoreOptions::default()
            .with_backend_option("aws_endpoint", &server.endpoint)
            .with_backend_option("aws_allow_http", "true")
            .with_backend_option("aws_access_key_id", "bench")
            .with_backend_option("aws_secret_access_key", "bench")
            .with_backend_option("aws_region", "us-east-1"),
    )
    .expect("zarrflow S3 store");
    let ours = zarrflow_array(rt, &store, [n, shard, inner]);

    // zarrs
    let backend = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(&server.endpoint)
        .with_allow_http(true)
        .with_bucket_name("zarrs")
        .with_region("us-east-1")
        .with_access_key_id("bench")
        .with_secret_access_key("bench")
        .build()
        .expect("zarrs S3 store");
    let zstore: Arc<dyn AsyncReadableWritableStorageTraits> =
        Arc::new(zarrs_object_store::AsyncObjectStore::new(backend));
    let zarray = zarrs_array(zstore, [n, shard, inner]);
    rt.block_on(zarray.async_store_metadata())
        .expect("zarrs metadata");

    // `-- --s3-only --profile N`: zarrflow's whole-array write alone, N times (`perf record`).
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--profile") {
        let reps: usize = args.get(i + 1).and_then(|r| r.parse().ok()).unwrap_or(10);
        for _ in 0..reps {
            let (_, wall, cpu) = cpu_time::timed(|| {
                rt.block_on(ours.view().write(&values.view()))
                    .expect("zarrflow write")
            });
            println!(
                "write whole over S3 zarrflow: {:.1} ms (CPU {:.1} ms, the server's included)",
                wall.as_secs_f64() * 1e3,
                cpu.as_secs_f64() * 1e3
            );
        }
        return;
    }
    // each case with zarrflow's requests in its best call
    let mut rows: Vec<(Case, s3_latency::S3Counts)> = Vec::new();
    // zarrs' best time `tz` is measured by the caller (and used again for the write-cache
    // rows: zarrs has no cache)
    let mut measure = |name: &'static str,
                       peer_case: &'static str,
                       reps: usize,
                       tz: Duration,
                       ours_call: &mut dyn FnMut()| {
        let mut counts = s3_latency::S3Counts::default();
        let (mut tf, mut cf) = (Duration::MAX, Duration::ZERO);
        for _ in 0..reps {
            server.reset();
            let server_before = server.cpu();
            let ((), wall, cpu) = cpu_time::timed(&mut *ours_call);
            if wall < tf {
                let server_cpu = server.cpu().saturating_sub(server_before);
                (tf, cf, counts) = (wall, cpu.saturating_sub(server_cpu), server.counts());
            }
        }
        let case = Case {
            name,
            zarrs: tz,
            ours: tf,
            ours_cpu: cf,
            peer_case,
        };
        rows.push((case, counts));
    };

    let all = ArraySubset::new_with_shape(shape.clone());
    let (tz, _, _) = best(runs, || {
        rt.block_on(zarray.async_store_array_subset(&all, data))
            .expect("zarrs write")
    });
    measure("write whole array", "write whole", runs, tz, &mut || {
        rt.block_on(ours.view().write(&values.view()))
            .expect("zarrflow write")
    });

    // The update and the small writes run twice: through `ours`, then through a handle that
    // keeps the shards it wrote partially (`with_write_cache_bytes`), where each write after
    // the first is one conditional PUT. TensorStore's peer runs the second round with a
    // cache pool of the same size, without rechecking cached data; zarrs has no cache.
    let cached = rt
        .block_on(Array::open_in(
            &store,
            &StoreKey::new("a").expect("key"),
            ArrayOptions::default().with_write_cache_bytes(WRITE_CACHE_BYTES),
        ))
        .expect("zarrflow array with a write cache");
    let sub = work.region_subset();
    let mut zarrs_update = || {
        rt.block_on(zarray.async_store_array_subset(&sub, work.chunk_values()))
            .expect("zarrs update")
    };
    let mut zarrs_small = || {
        rt.block_on(async {
            for (i, p) in work.points.iter().enumerate() {
                zarray
                    .async_store_array_subset(&Workload::point_subset(p), &[i as u16][..])
                    .await
                    .expect("zarrs small write");
            }
        })
    };
    // each round: the array, then each case's name in the table and in TensorStore's peer
    let rounds = [
        (
            &ours,
            [
                "update one inner chunk inside a shard",
                "update one inner chunk",
            ],
            [
                "100 small writes into one shard (no batch)",
                "100 small writes",
            ],
        ),
        (
            &cached,
            [
                "update one inner chunk (write cache)",
                "update one inner chunk (cache)",
            ],
            ["100 small writes (write cache)", "100 small writes (cache)"],
        ),
    ];
    let (tz_update, _, _) = best(UPDATE_REPS, &mut zarrs_update);
    let (tz_small, _, _) = best(runs, &mut zarrs_small);
    for (array, [update, peer_update], [small, peer_small]) in rounds {
        let view = work.region_view(array);
        measure(update, peer_update, UPDATE_REPS, tz_update, &mut || {
            rt.block_on(view.write(&work.chunk.view()))
                .expect("zarrflow update")
        });
        let views = work.point_views(array);
        measure(small, peer_small, runs, tz_small, &mut || {
            rt.block_on(async {
                for (i, v) in views.iter().enumerate() {
                    v.write_scalar(i as u16)
                        .await
                        .expect("zarrflow small write");
                }
            })
        });
    }
    let views = work.point_views(&ours);
    measure(
        "100 small writes into one shard (zarrflow batch)",
        "100 small writes (transaction)",
        runs,
        tz_small,
        &mut || {
            let mut batch = ours.batch();
            for (i, v) in views.iter().enumerate() {
                batch.stage_scalar(v, i as u16).expect("stage");
            }
            rt.block_on(batch.commit()).expect("commit");
        },
    );

    // The three arrays hold the same values.
    let a: Vec<u16> = rt
        .block_on(zarray.async_retrieve_array_subset(&all))
        .expect("zarrs read");
    let b = read_same_as(rt, &ours, &a, "on S3");
    let peer = tensorstore_cases(
        vec![
            "write-s3".into(),
            server.endpoint.clone(),
            "tensorstore".into(),
            "a/".into(),
        ],
        [n, shard, inner],
        runs,
        &b,
    );
    println!(
        "check: zarrflow's and zarrs' arrays hold identical values{}; stored bytes: zarrflow \
         {:.1} MiB, zarrs {:.1} MiB, TensorStore {:.1} MiB",
        if peer.is_ok() {
            ", TensorStore's the same sum"
        } else {
            ""
        },
        server.stored_bytes("zarrflow/") as f64 / (1 << 20) as f64,
        server.stored_bytes("zarrs/") as f64 / (1 << 20) as f64,
        server.stored_bytes("tensorstore/") as f64 / (1 << 20) as f64
    );
    if let Err(why) = &peer {
        println!("TensorStore is not in this run: {why}");
    }
    println!(
        "times in ms (best of {runs}); CPU: user + system time in the best call, the server's \
         threads left out of zarrflow's (TensorStore runs in a process of its own)"
    );
    println!(
        "{} {:>26} |",
        Case::header("case (10 ms S3)"),
        "zarrflow requests GET/PUT/other"
    );
    println!("|{}|", ["---"; 8].join("|"));
    for (c, counts) in rows {
        println!(
            "{} {:>26} |",
            c.cells(&peer),
            format!("{}/{}/{}", counts.get, counts.put, counts.other)
        );
    }
}
