//! Read benchmark of issue 5: zarrflow against zarrs 0.23.14 on the same data in the same run.
//!
//! Run: `cargo bench --bench read` (512³ uint16 = 256 MiB, best of 5; the latency cases best
//! of 5 as well, each library alike: best of 2 swung 20 % from run to run), or
//! `ZARRFLOW_BENCH_QUICK=1 cargo bench --bench read` / `cargo bench --bench read -- --quick`
//! (256³ = 32 MiB, best of 2). `ZARRFLOW_BENCH_DATA=/some/dir` keeps the generated data
//! there and reuses it on the next run (default: a fresh temporary directory).
//!
//! Data: uint16, value `(x + y²/32 + z³) mod 65536` at C-order index `[z, y, x]`
//! (zarr_benchmarks' pattern), shards 128³, inner chunks 32³, zstd level 0 without checksum
//! on the inner chunks, index `[bytes, crc32c]` at the end, written by zarrs
//! (`FilesystemStore`, `_zarrs` metadata off).
//!
//! Libraries and modes (all time one call producing one assembled C-order output):
//! * `zarrflow`: `Array::open_in` over `Store::open(dir)` (object_store `LocalFileSystem`),
//!   default `ArrayOptions`, `view.read::<u16>()` on a multi-threaded tokio runtime.
//! * `zarrs sync`: `FilesystemStore` + `retrieve_array_subset` (rayon, zarrs at its best).
//! * `zarrs async 1-task`: `AsyncObjectStore<LocalFileSystem>` +
//!   `async_retrieve_array_subset` (the documented async API: concurrent, not parallel).
//! * `zarrs async spawn`: zarrs given the same parallelism zarrflow has: one `tokio::spawn`
//!   per chunk (`async_retrieve_chunk_opt` for covered shards, `async_retrieve_chunk_subset_opt`
//!   otherwise), `buffer_unordered(32)`, each result copied into the output with a row loop.
//!
//! Gather: zarrs 0.23.14 has no point-read API on `Array` (its `Indexer` trait is only used
//! by `ArrayBytes` helpers), so the closest honest equivalent is: group the points by inner
//! chunk, read each touched inner chunk once through `ArrayShardedReadableExt`
//! (`retrieve_subchunk_opt` with a shard-index cache created per call) and pick the points.
//! Sync: the groups split over one thread per core; async: `buffer_unordered(32)` on one
//! task, or one `tokio::spawn` per inner chunk.
//!
//! Latency: both libraries read through `CountingStore(with_latency(InMemory, 10 ms))` (the
//! files copied into memory: `ThrottledStore` cannot wrap `LocalFileSystem`'s file payloads);
//! every request (GET, ranged GET, HEAD) sleeps 10 ms. Request counts are of one read with a
//! cold shard-index cache (arrays are reopened before every timed call, outside the timing).
//!
//! TensorStore 0.1.86 (the pinned `.venv`; `benches/peers/tensorstore_peer.py`) reads the
//! same local data in the same run, timed in-process (import and open excluded, no cache
//! pool), its sums checked against zarrflow's; the ratio column is zarrflow's time over the
//! best peer's (< 1: zarrflow faster). That table also gives zarrflow's and TensorStore's
//! CPU time (user + system of each process, every thread, `getrusage` / `process_time`) in
//! their best calls of the local cases, and zarrflow's over the machine's cores: the least
//! time the cores allow for zarrflow's work, which shows where a ratio is bound by CPU
//! rather than by waiting.
//!
//! 10 ms over HTTP: TensorStore runs in its own process, so it cannot read through the
//! in-process latency wrapper; instead a local HTTP server (`benches/peers/http_latency.rs`,
//! on its own runtime, the files read into memory at its start so that serving them costs
//! the machine's two cores little, as a remote server would) serves the data directory
//! and sleeps 10 ms before every answer, and zarrflow
//! (`Store::open("http://…")`, its remote policy), zarrs (async, one spawned task per chunk,
//! over object_store's `HttpStore`) and TensorStore (its `http` kvstore) each read through
//! it in the same run; each library keeps its client (its connections) from call to call:
//! zarrflow one `Store` per case with the array reopened before each call (a cold
//! shard-index cache, as TensorStore without a cache pool), zarrs one `HttpStore` for every
//! case, TensorStore one context per case. The server counts the requests for
//! chunk data each read makes (TensorStore: the mean over its repetitions).
//! `cargo bench --bench read -- --http-only` runs these cases alone.
//!
//! The CLI: the whole `zarrflow get DIR SEL -o OUT.npy` process for the sub-box and read
//! all (process start, open, read, the file written and renamed into place, exit), timed by
//! this benchmark around the child, next to the in-process reads of the same run;
//! `-- --cli-only` runs these cases (and TensorStore's local reads) alone.
//!
//! Bytes read: one zarrflow read of each local box with `rchar` (`/proc/self/io`) taken
//! around it, against what it needs (the stored inner chunks it touches and their shards'
//! indexes, from `explain_read`). Decode floor: every inner chunk decoded by zstd into a
//! reused buffer, shards preloaded, no assembly, on one thread and on every core; read all's
//! time over it, and the time of read all into one caller array reused from call to call
//! (`read_into`) over it: the difference between the two is the fresh result's memory. The
//! floor, read all and `read_into` take turns rep by rep, so that their ratios pair times
//! of the same minutes.
//! Then the memory work of read all, each part alone on every core: the first touch of a
//! fresh result (the kernel zeroing its pages), streaming stores of the whole result into
//! present pages, and the stored shard files read from the page cache; and read all's and
//! `read_into`'s times over the decode floor plus those parts.
//!
//! Scaling (`cargo bench --bench read -- --scaling`, zarrflow alone, best of 5): arrays of
//! 64 MiB, 256 MiB and 1 GiB (shapes 128×512×512, 512³, 512×1024×1024; the same layout and
//! values, written into `ZARRFLOW_BENCH_DATA` or a temporary directory), each read whole,
//! through a fixed box and 100k fixed points inside it (the same 9 shards of every array),
//! and through boxes of exactly 1, 8 and 64 shards; each time is printed with the stored
//! MiB it touches and the time per MiB, which stays flat when the cost follows the bytes
//! touched and not the array's size.
//!
//! Peak memory: each library's read-all runs once in a child process (this binary re-executed
//! with `--child-peak LIB DIR`), which reports `VmHWM` from `/proc/self/status`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use object_store::local::LocalFileSystem;
use object_store::{ObjectStore, ObjectStoreExt};
use zarrflow::array::bench_support::{advise_huge_pages, copy_streaming, fence};
use zarrflow::array::{Array as ZfArray, ArrayOptions};
use zarrflow::index::{Selection, SelectionItem};
use zarrflow::store::wrappers::{CountingStore, RequestCounts, with_latency};
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrs::array::codec::ZstdCodec;
use zarrs::array::codec::array_to_bytes::sharding::ShardingCodecBuilder;
use zarrs::array::{
    Array as ZsArray, ArrayBuilder, ArrayShardedReadableExt, ArrayShardedReadableExtCache,
    ArraySubset, AsyncArrayShardedReadableExt, AsyncArrayShardedReadableExtCache, CodecOptions,
    data_type,
};
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::{AsyncReadableStorageTraits, ReadableStorageTraits};
use zarrs_object_store::AsyncObjectStore;

#[path = "peers/cpu_time.rs"]
mod cpu_time;
#[path = "peers/http_latency.rs"]
mod http_latency;
#[path = "peers/tensorstore.rs"]
mod tensorstore;

const SHARD: u64 = 128;
const INNER: u64 = 32;
const LATENCY: Duration = Duration::from_millis(10);
const SPAWN_CONCURRENCY: usize = 32;

type Point = [u64; 3];

struct Config {
    n: u64,
    reps: usize,
    latency_reps: usize,
    points: usize,
    sub: [std::ops::Range<u64>; 3],
}

fn value(z: u64, y: u64, x: u64) -> u16 {
    ((x + y * y / 32 + z * z * z) % 65536) as u16
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child-peak") {
        child_peak(&args[i + 1], Path::new(&args[i + 2]));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--profile") {
        profile(&args[i + 1..]);
        return;
    }
    if args.iter().any(|a| a == "--scaling") {
        scaling();
        return;
    }
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs harness-less benches without `--bench`: skip.
        println!("read benchmark: run it with `cargo bench --bench read` (skipped)");
        return;
    }
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("ZARRFLOW_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let cfg = if quick {
        Config {
            n: 256,
            reps: 2,
            latency_reps: 1,
            points: 20_000,
            sub: [60..200, 60..200, 60..200],
        }
    } else {
        Config {
            n: 512,
            reps: 5,
            latency_reps: 5,
            points: 100_000,
            sub: [100..300, 100..300, 100..300],
        }
    };
    zarrs::config::global_config_mut().set_include_zarrs_metadata(false);
    let (_tmp, dir) = match std::env::var("ZARRFLOW_BENCH_DATA") {
        Ok(d) if !d.is_empty() => (None, PathBuf::from(d).join(format!("n{}", cfg.n))),
        _ => {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    };
    generate(&dir, cfg.n);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if args.iter().any(|a| a == "--cli-only") {
        let points = random_points(cfg.points, cfg.n, 0x9e37_79b9_7f4a_7c15);
        let ts = tensorstore_reads(&dir, &cfg, &points);
        cli_cases(&rt, &dir, &cfg, ts.as_ref().ok().map(|t| &t.times));
        return;
    }
    if args.iter().any(|a| a == "--http-only") {
        let points = random_points(cfg.points, cfg.n, 0x9e37_79b9_7f4a_7c15);
        http_latency_cases(&rt, &dir, &cfg, &points);
        return;
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    println!(
        "zarrflow read benchmark: {n}³ uint16 ({mib} MiB), shards {SHARD}³, inner {INNER}³, \
         zstd 0; {cores} cores; best of {} (latency cases best of {})",
        cfg.reps,
        cfg.latency_reps,
        n = cfg.n,
        mib = (cfg.n.pow(3) * 2) >> 20,
    );
    println!("data: {}", dir.display());

    let all = [0..cfg.n, 0..cfg.n, 0..cfg.n];
    let points = random_points(cfg.points, cfg.n, 0x9e37_79b9_7f4a_7c15);
    let mut table = Table::default();

    // ---------------------------------------------------------------- local
    for (case, sub) in [("read all", &all), ("sub-box", &cfg.sub)] {
        let label = format!("{case} {}", box_label(sub));
        let expect = checksum_box(sub);
        let zf = rt.block_on(zf_open_local(&dir));
        let (t_zf, cpu) = best_with_cpu(
            cfg.reps,
            || rt.block_on(zf_read_box(&zf, sub)),
            |v| assert_eq!(sum(&v), expect, "zarrflow {label}"),
        );
        table.zarrflow_cpu.push(cpu);
        let zs = zs_sync_open(&dir);
        let t_sync = best(
            cfg.reps,
            || -> Vec<u16> {
                zs.retrieve_array_subset(&ArraySubset::new_with_ranges(sub))
                    .unwrap()
            },
            |v| assert_eq!(sum(&v), expect, "zarrs sync {label}"),
        );
        let za = rt.block_on(zs_async_open(Arc::new(
            LocalFileSystem::new_with_prefix(&dir).unwrap(),
        )));
        let t_one = best(
            cfg.reps,
            || -> Vec<u16> {
                rt.block_on(za.async_retrieve_array_subset(&ArraySubset::new_with_ranges(sub)))
                    .unwrap()
            },
            |v| assert_eq!(sum(&v), expect, "zarrs async {label}"),
        );
        let t_spawn = best(
            cfg.reps,
            || rt.block_on(zs_async_spawn_box(&za, sub)),
            |v| assert_eq!(sum(&v), expect, "zarrs async spawn {label}"),
        );
        table.row(&label, "local", [t_zf, t_sync, t_one, t_spawn], None);
    }
    {
        let label = format!("gather {} random points", cfg.points);
        let expect: u64 = points.iter().map(|p| value(p[0], p[1], p[2]) as u64).sum();
        let zf = rt.block_on(zf_open_local(&dir));
        let (t_zf, cpu) = best_with_cpu(
            cfg.reps,
            || rt.block_on(zf_gather(&zf, &points)),
            |v| assert_eq!(sum(&v), expect, "zarrflow gather"),
        );
        table.zarrflow_cpu.push(cpu);
        let zs = zs_sync_open(&dir);
        let t_sync = best(
            cfg.reps,
            || zs_sync_gather(&zs, &points, cores),
            |v| assert_eq!(sum(&v), expect, "zarrs sync gather"),
        );
        let za = rt.block_on(zs_async_open(Arc::new(
            LocalFileSystem::new_with_prefix(&dir).unwrap(),
        )));
        let t_one = best(
            cfg.reps,
            || rt.block_on(zs_async_gather(&za, &points, false)),
            |v| assert_eq!(sum(&v), expect, "zarrs async gather"),
        );
        let t_spawn = best(
            cfg.reps,
            || rt.block_on(zs_async_gather(&za, &points, true)),
            |v| assert_eq!(sum(&v), expect, "zarrs async spawn gather"),
        );
        table.row(&label, "local", [t_zf, t_sync, t_one, t_spawn], None);
    }

    // ---------------------------------------------------------------- 10 ms latency
    // object_store's ThrottledStore cannot wrap LocalFileSystem (its file payloads are
    // unimplemented there), so the data is copied into an InMemory store first.
    let mem = Arc::new(object_store::memory::InMemory::new());
    rt.block_on(copy_to_memory(&dir, &mem));
    let lat_cases: Vec<(String, Option<&[std::ops::Range<u64>; 3]>)> = vec![
        (format!("read all {}", box_label(&all)), Some(&all)),
        (format!("sub-box {}", box_label(&cfg.sub)), Some(&cfg.sub)),
        (format!("gather {} random points", cfg.points), None),
    ];
    for (label, sub) in lat_cases {
        let expect = match sub {
            Some(s) => checksum_box(s),
            None => points.iter().map(|p| value(p[0], p[1], p[2]) as u64).sum(),
        };
        let counting = CountingStore::new(with_latency(mem.clone(), LATENCY));
        let backend: Arc<dyn ObjectStore> = Arc::new(counting.clone());
        let mut counts = Vec::new();
        // zarrflow: reopen (cold index cache) before every timed call.
        let mut t_zf = Duration::MAX;
        for _ in 0..cfg.latency_reps {
            let zf = rt.block_on(zf_open_backend(backend.clone()));
            counting.reset();
            let t = Instant::now();
            let v = match sub {
                Some(s) => rt.block_on(zf_read_box(&zf, s)),
                None => rt.block_on(zf_gather(&zf, &points)),
            };
            t_zf = t_zf.min(t.elapsed());
            assert_eq!(sum(&v), expect, "zarrflow latency {label}");
        }
        counts.push(("zarrflow", counting.counts()));
        // zarrs async, single task and spawned.
        let mut t_one = Duration::MAX;
        let mut t_spawn = Duration::MAX;
        for spawn in [false, true] {
            for _ in 0..cfg.latency_reps {
                let za = rt.block_on(zs_async_open(backend.clone()));
                counting.reset();
                let t = Instant::now();
                let v = match (sub, spawn) {
                    (Some(s), false) => rt
                        .block_on(za.async_retrieve_array_subset(&ArraySubset::new_with_ranges(s)))
                        .unwrap(),
                    (Some(s), true) => rt.block_on(zs_async_spawn_box(&za, s)),
                    (None, sp) => rt.block_on(zs_async_gather(&za, &points, sp)),
                };
                let e = t.elapsed();
                if spawn {
                    t_spawn = t_spawn.min(e);
                } else {
                    t_one = t_one.min(e);
                }
                assert_eq!(sum(&v), expect, "zarrs latency {label}");
            }
            counts.push((
                if spawn {
                    "zarrs async spawn"
                } else {
                    "zarrs async 1-task"
                },
                counting.counts(),
            ));
        }
        table.row(
            &label,
            "10 ms",
            [t_zf, Duration::ZERO, t_one, t_spawn],
            Some(counts),
        );
    }
    table.add_tensorstore(tensorstore_reads(&dir, &cfg, &points));
    table.print();
    http_latency_cases(&rt, &dir, &cfg, &points);
    cli_cases(
        &rt,
        &dir,
        &cfg,
        table
            .tensorstore
            .as_ref()
            .and_then(|t| t.as_ref().ok())
            .map(|t| &t.times),
    );

    // ---------------------------------------------------------------- bytes read, decode floor
    println!();
    println!(
        "bytes zarrflow reads from local files (rchar of /proc/self/io around one read) against \
         the stored bytes of the inner chunks it needs and their shard indexes:"
    );
    for (case, sub) in [("read all", &all), ("sub-box", &cfg.sub)] {
        let zf = rt.block_on(zf_open_local(&dir));
        let needed = rt.block_on(zf_needed_bytes(&zf, sub));
        let before = rchar();
        let v = rt.block_on(zf_read_box(&zf, sub));
        let read = rchar() - before;
        assert_eq!(sum(&v), checksum_box(sub), "zarrflow {case}");
        println!(
            "  {case:<10} read {:>7.2} MiB, needed {:>7.2} MiB: {:.3}x",
            read as f64 / (1 << 20) as f64,
            needed as f64 / (1 << 20) as f64,
            read as f64 / needed.max(1) as f64
        );
    }
    // The floor, read all and read all into one reused array (`read_into`: no fresh result
    // memory for the kernel to zero, which the floor's reused buffer also skips) take turns
    // rep by rep, so that their ratios pair times of the same minutes (the machine's speed
    // drifts between the benchmark's sections).
    let floor = DecodeFloor::load(&dir, cfg.n);
    let want = (cfg.n.pow(3) * 2) as usize;
    let one = best(
        cfg.reps,
        || floor.decode(1),
        |total| assert_eq!(total, want),
    );
    let zf = rt.block_on(zf_open_local(&dir));
    let whole = zf.view();
    // allocated by zarrflow's own read (huge pages where offered, as every result),
    // which is also the untimed warm-up
    let mut reused = rt.block_on(whole.read::<u16>()).unwrap();
    let (mut all_cores, mut read_all, mut t_into) = (Duration::MAX, Duration::MAX, Duration::MAX);
    for _ in 0..cfg.reps {
        let t = Instant::now();
        let total = floor.decode(cores);
        all_cores = all_cores.min(t.elapsed());
        assert_eq!(total, want);
        let t = Instant::now();
        let v = rt.block_on(zf_read_box(&zf, &all));
        read_all = read_all.min(t.elapsed());
        assert_eq!(sum(&v), checksum_box(&all), "zarrflow read all");
        drop(v);
        reused.fill(1); // untimed: a call that skipped a region would leave ones behind
        let t = Instant::now();
        rt.block_on(whole.read_into(&mut reused)).unwrap();
        t_into = t_into.min(t.elapsed());
        assert_eq!(
            reused.iter().map(|&v| v as u64).sum::<u64>(),
            checksum_box(&all),
            "zarrflow read_into"
        );
    }
    println!();
    println!(
        "decode floor of read all (every inner chunk through zstd into a reused buffer, shards \
         preloaded, no assembly; best of {}): 1 thread {:.1} ms, {cores} threads {:.1} ms; \
         zarrflow read all, timed in turn with it, {:.1} ms: {:.2}x the floor",
        cfg.reps,
        one.as_secs_f64() * 1e3,
        all_cores.as_secs_f64() * 1e3,
        read_all.as_secs_f64() * 1e3,
        read_all.as_secs_f64() / all_cores.as_secs_f64()
    );
    println!(
        "zarrflow read all into one reused array (`read_into`, no fresh result memory; timed \
         in turn with them): {:.1} ms, {:.2}x the {cores}-thread floor (the fresh result's page \
         faults and zeroing are the difference from read all)",
        t_into.as_secs_f64() * 1e3,
        t_into.as_secs_f64() / all_cores.as_secs_f64()
    );
    let [touch, store, load] = memory_floor(&dir, cfg.n, cfg.reps, cores);
    let into_parts = all_cores + store + load;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "memory work of read all besides decoding, each part alone on {cores} threads (best of \
         {}): first touch of a fresh {} MiB result (the kernel zeroing its pages) {:.1} ms, \
         streaming stores of the whole result into present pages {:.1} ms, the stored shard \
         files read from the page cache {:.1} ms; decode floor + stores + loads = {:.1} ms, \
         `read_into` / that = {:.2}x; + first touch = {:.1} ms, read all / that = {:.2}x \
         (with no idle core the parts overlap only where one core waits on memory while the \
         other computes)",
        cfg.reps,
        (cfg.n.pow(3) * 2) >> 20,
        ms(touch),
        ms(store),
        ms(load),
        ms(into_parts),
        t_into.as_secs_f64() / into_parts.as_secs_f64(),
        ms(into_parts + touch),
        read_all.as_secs_f64() / (into_parts + touch).as_secs_f64()
    );

    // ---------------------------------------------------------------- peak memory
    let out_mib = (cfg.n.pow(3) * 2) as f64 / (1 << 20) as f64;
    println!();
    println!(
        "peak memory of read all (child process, VmHWM; output {out_mib:.0} MiB; data on disk {:.0} MiB):",
        dir_size(&dir) as f64 / (1 << 20) as f64
    );
    let exe = std::env::current_exe().unwrap();
    for lib in ["zarrflow", "zarrs-sync", "zarrs-async", "zarrs-async-spawn"] {
        let out = std::process::Command::new(&exe)
            .args(["--child-peak", lib])
            .arg(&dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        println!("  {lib:<18} {}", text.trim());
    }
}

// -------------------------------------------------------------------------- TensorStore

/// TensorStore's local read-all, sub-box and gather: best times and the CPU time of each
/// best call, their sums checked against the expected ones; `Err` says why TensorStore is
/// not in this run.
fn tensorstore_reads(dir: &Path, cfg: &Config, points: &[Point]) -> Result<TsReads, String> {
    let pts_file = points_npy(points)?;
    let out = tensorstore::run(&[
        "read".into(),
        dir.display().to_string(),
        cfg.reps.to_string(),
        sub_arg(&cfg.sub),
        pts_file.path().display().to_string(),
    ])?;
    let all = [0..cfg.n, 0..cfg.n, 0..cfg.n];
    let gather: u64 = points.iter().map(|p| value(p[0], p[1], p[2]) as u64).sum();
    let mut reads = TsReads::default();
    for (i, (case, expect)) in [
        ("read all", checksum_box(&all)),
        ("sub-box", checksum_box(&cfg.sub)),
        ("gather", gather),
    ]
    .into_iter()
    .enumerate()
    {
        let v = &out[case];
        if tensorstore::checksum(v) != Some(expect) {
            return Err(format!("TensorStore's {case} sum {v} is not {expect}"));
        }
        reads.times[i] = tensorstore::seconds(v).ok_or(format!("no time for {case}"))?;
        reads.cpu[i] = tensorstore::cpu(v).ok_or(format!("no CPU time for {case}"))?;
    }
    Ok(reads)
}

/// TensorStore's local reads (read all, sub-box, gather): best times and their calls' CPU.
#[derive(Default)]
struct TsReads {
    times: [Duration; 3],
    cpu: [Duration; 3],
}

// -------------------------------------------------------------------------- data

fn generate(dir: &Path, n: u64) {
    generate_shape(dir, [n; 3]);
}

/// Writes the benchmark's array of `shape` (each side a multiple of the shard side, or
/// smaller than one shard in every dimension) into `dir`, unless it is there.
fn generate_shape(dir: &Path, shape: [u64; 3]) {
    if dir.join("zarr.json").exists() {
        return;
    }
    std::fs::create_dir_all(dir).unwrap();
    let t = Instant::now();
    let store = Arc::new(FilesystemStore::new(dir).unwrap());
    let n = shape.iter().copied().min().unwrap_or(0);
    let mut b = ArrayBuilder::new(
        shape.to_vec(),
        vec![SHARD.min(n); 3],
        data_type::uint16(),
        0u16,
    );
    let mut sb = ShardingCodecBuilder::new(
        vec![std::num::NonZeroU64::new(INNER).unwrap(); 3],
        &data_type::uint16(),
    );
    sb.bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(0, false))]);
    b.array_to_bytes_codec(sb.build_arc());
    let array = b.build(store, "/").unwrap();
    array.store_metadata().unwrap();
    // Shard by shard, to keep the generator's memory small.
    let s = SHARD.min(n);
    for cz in 0..shape[0] / s {
        for cy in 0..shape[1] / s {
            for cx in 0..shape[2] / s {
                let mut v = Vec::with_capacity((s * s * s) as usize);
                for z in cz * s..(cz + 1) * s {
                    for y in cy * s..(cy + 1) * s {
                        for x in cx * s..(cx + 1) * s {
                            v.push(value(z, y, x));
                        }
                    }
                }
                array.store_chunk(&[cz, cy, cx], v).unwrap();
            }
        }
    }
    eprintln!("generated {shape:?} in {:.1} s", t.elapsed().as_secs_f64());
}

async fn copy_to_memory(dir: &Path, mem: &object_store::memory::InMemory) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().to_str().unwrap().to_string();
            let bytes = std::fs::read(&p).unwrap();
            mem.put(&object_store::path::Path::from(rel), bytes.into())
                .await
                .unwrap();
        }
    }
}

fn random_points(count: usize, n: u64, mut seed: u64) -> Vec<Point> {
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..count)
        .map(|_| [next() % n, next() % n, next() % n])
        .collect()
}

fn checksum_box(b: &[std::ops::Range<u64>; 3]) -> u64 {
    let mut s = 0u64;
    for z in b[0].clone() {
        for y in b[1].clone() {
            for x in b[2].clone() {
                s += value(z, y, x) as u64;
            }
        }
    }
    s
}

fn sum(v: &[u16]) -> u64 {
    v.iter().map(|&x| x as u64).sum()
}

fn box_label(b: &[std::ops::Range<u64>; 3]) -> String {
    format!(
        "[{}..{}, {}..{}, {}..{}]",
        b[0].start, b[0].end, b[1].start, b[1].end, b[2].start, b[2].end
    )
}

fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let md = e.metadata().unwrap();
        total += if md.is_dir() {
            dir_size(&e.path())
        } else {
            md.len()
        };
    }
    total
}

/// [`best`], and the CPU time of the process in that best call of `f` (the check excluded).
fn best_with_cpu<T>(
    reps: usize,
    mut f: impl FnMut() -> T,
    mut check: impl FnMut(T),
) -> (Duration, Duration) {
    let (mut t_best, mut cpu) = (Duration::MAX, Duration::ZERO);
    for _ in 0..reps {
        let (v, wall, used) = cpu_time::timed(&mut f);
        if wall < t_best {
            (t_best, cpu) = (wall, used);
        }
        check(v);
    }
    (t_best, cpu)
}

/// The best time of `reps` calls of `f`; each result is checked (and dropped) by `check`
/// after its timing, so the times are of the reads alone, as TensorStore's script takes
/// them (before, the closures summed the result inside the timing: ~15 ms of read all's
/// time and ~1.5 ms of the sub-box's were the checksum, for zarrflow and zarrs only).
fn best<T>(reps: usize, f: impl FnMut() -> T, check: impl FnMut(T)) -> Duration {
    best_with_cpu(reps, f, check).0
}

// -------------------------------------------------------------------------- zarrflow

async fn zf_open_local(dir: &Path) -> ZfArray {
    let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
    ZfArray::open_in(&store, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap()
}

async fn zf_open_backend(backend: Arc<dyn ObjectStore>) -> ZfArray {
    let store =
        Store::from_object_store(backend, "", "file://bench-latency", StoreOptions::default())
            .unwrap();
    ZfArray::open_in(&store, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap()
}

async fn zf_read_box(a: &ZfArray, b: &[std::ops::Range<u64>; 3]) -> Vec<u16> {
    let sel = Selection::new(
        b.iter()
            .map(|r| SelectionItem::from(r.start as i64..r.end as i64))
            .collect(),
    );
    let v = a.view().get(&sel).unwrap().read::<u16>().await.unwrap();
    v.into_raw_vec_and_offset().0
}

async fn zf_gather(a: &ZfArray, points: &[Point]) -> Vec<u16> {
    let axis =
        |d: usize| SelectionItem::from(points.iter().map(|p| p[d] as i64).collect::<Vec<_>>());
    let sel = Selection::new(vec![axis(0), axis(1), axis(2)]);
    let v = a.view().vindex(&sel).unwrap().read::<u16>().await.unwrap();
    v.into_raw_vec_and_offset().0
}

/// Bytes the process has read through read(2)-like calls so far (`rchar`).
fn rchar() -> u64 {
    let s = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// What a read of box `b` cannot do without: the stored bytes of the inner chunks it
/// touches, plus the index of every touched shard (from zarrflow's own explanation).
async fn zf_needed_bytes(a: &ZfArray, b: &[std::ops::Range<u64>; 3]) -> u64 {
    let sel = Selection::new(
        b.iter()
            .map(|r| SelectionItem::from(r.start as i64..r.end as i64))
            .collect(),
    );
    let explain = a.view().get(&sel).unwrap().explain_read().await.unwrap();
    explain
        .targets
        .iter()
        .map(|t| {
            let index = t.index.as_ref().map_or(0, |i| i.bytes);
            let data: u64 = t.inner_chunks.as_ref().map_or(0, |inner| {
                inner
                    .chunks
                    .iter()
                    .filter_map(|c| c.range.map(|[s, e]| e - s))
                    .sum()
            });
            index + data
        })
        .sum()
}

/// The decode floor of read all: every inner chunk of every shard decoded by zstd into a
/// reused buffer (the shards read into memory first, by [`DecodeFloor::load`]; no index
/// cache, no assembly).
struct DecodeFloor {
    shards: Vec<Vec<u8>>,
}

impl DecodeFloor {
    /// Reads every shard file of the `n`³ array in `dir` into memory.
    fn load(dir: &Path, n: u64) -> DecodeFloor {
        let s = n / SHARD.min(n);
        let mut shards = Vec::new();
        for z in 0..s {
            for y in 0..s {
                for x in 0..s {
                    shards.push(std::fs::read(dir.join(format!("c/{z}/{y}/{x}"))).unwrap());
                }
            }
        }
        DecodeFloor { shards }
    }

    /// Decodes every inner chunk on `threads` threads (the shards split between them);
    /// returns the decoded bytes.
    fn decode(&self, threads: usize) -> usize {
        let per_shard = (SHARD / INNER).pow(3) as usize;
        let index_len = per_shard * 16 + 4;
        let chunk_bytes = (INNER.pow(3) * 2) as usize;
        let decode = |part: &[Vec<u8>]| {
            let mut d = zstd::bulk::Decompressor::new().unwrap();
            let mut buf = Vec::with_capacity(chunk_bytes);
            let mut total = 0usize;
            for shard in part {
                let index = &shard[shard.len() - index_len..shard.len() - 4];
                for e in index.chunks_exact(16) {
                    let off = u64::from_le_bytes(e[..8].try_into().unwrap()) as usize;
                    let len = u64::from_le_bytes(e[8..].try_into().unwrap()) as usize;
                    if off == usize::MAX {
                        continue;
                    }
                    buf.clear();
                    d.decompress_to_buffer(&shard[off..off + len], &mut buf)
                        .unwrap();
                    total += buf.len();
                }
            }
            total
        };
        if threads <= 1 {
            return decode(&self.shards);
        }
        let per = self.shards.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .shards
                .chunks(per)
                .map(|part| scope.spawn(move || decode(part)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        })
    }
}

/// What read all does besides decoding, each part alone on `threads` threads (best of
/// `reps`): `touch`, the first write into every page of a fresh result-sized buffer, advised
/// onto huge pages as zarrflow's results are (the kernel zeroes each page it hands out);
/// `store`, the whole result written into that buffer, its pages present, with the
/// streaming line stores zarrflow's reads use (`copy_streaming`) from a reused 64 KiB chunk;
/// `load`, the stored shard files read into reused buffers (from the page cache, as the
/// benchmark's reads find them). Set against the decode floor, they account for the time
/// read all takes beyond it: on 2 cores and no idle one, they overlap the decoding only
/// where one core waits on memory while the other computes.
fn memory_floor(dir: &Path, n: u64, reps: usize, threads: usize) -> [Duration; 3] {
    use std::os::unix::fs::FileExt;
    let threads = threads.max(1);
    let bytes = (n.pow(3) * 2) as usize;
    let share = bytes.div_ceil(threads).next_multiple_of(2 << 20);
    let on_shares = |buf: &mut [u8], f: &(dyn Fn(&mut [u8]) + Sync)| {
        std::thread::scope(|scope| {
            for part in buf.chunks_mut(share) {
                scope.spawn(move || f(part));
            }
        });
    };
    // a result-sized region of a fresh buffer, starting on a 2 MiB boundary (so every
    // share is whole huge pages and whole lines, as zarrflow's result rows are streamed),
    // advised onto huge pages
    let fresh = || {
        const HUGE: usize = 2 << 20;
        let mut buf = vec![0u8; bytes + HUGE];
        let at = (buf.as_ptr() as usize).next_multiple_of(HUGE) - buf.as_ptr() as usize;
        advise_huge_pages(&mut buf[at..at + bytes]);
        (buf, at)
    };
    let mut touch = Duration::MAX;
    for _ in 0..reps {
        let (mut buf, at) = fresh();
        let t = Instant::now();
        on_shares(&mut buf[at..at + bytes], &|part| {
            for page in part.chunks_mut(4096) {
                page[0] = 1;
            }
        });
        touch = touch.min(t.elapsed());
        assert_eq!(buf[at], 1);
    }
    let (mut whole, at) = fresh();
    let buf = &mut whole[at..at + bytes];
    on_shares(buf, &|part| part.fill(0));
    let chunk: Vec<u8> = (0..64 << 10).map(|i| (i * 7 + 3) as u8).collect();
    let mut store = Duration::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        on_shares(buf, &|part| {
            assert!(
                (part.as_ptr() as usize).is_multiple_of(64),
                "whole lines streamed"
            );
            // a decoded chunk's bytes, again and again (the source stays in cache)
            for dst in part.chunks_mut(chunk.len()) {
                copy_streaming(dst, &chunk[..dst.len()]);
            }
            fence();
        });
        store = store.min(t.elapsed());
        assert_eq!(buf[64], chunk[64]);
    }
    drop(whole);
    let s = n / SHARD.min(n);
    let files: Vec<PathBuf> = (0..s * s * s)
        .map(|i| dir.join(format!("c/{}/{}/{}", i / (s * s), i / s % s, i % s)))
        .collect();
    let per = files.len().div_ceil(threads);
    // one buffer per thread, kept from call to call as zarrflow keeps its read buffers
    // (the first, untimed call sizes them)
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); files.len().div_ceil(per)];
    let mut load = Duration::MAX;
    for rep in 0..=reps {
        let t = Instant::now();
        let total: u64 = std::thread::scope(|scope| {
            let handles: Vec<_> = files
                .chunks(per)
                .zip(bufs.iter_mut())
                .map(|(part, buf)| {
                    scope.spawn(move || {
                        let mut total = 0u64;
                        for path in part {
                            let file = std::fs::File::open(path).unwrap();
                            let len = file.metadata().unwrap().len() as usize;
                            buf.resize(len, 0);
                            file.read_exact_at(buf, 0).unwrap();
                            total += len as u64;
                        }
                        total
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        if rep > 0 {
            load = load.min(t.elapsed());
        }
        assert_eq!(
            total,
            dir_size(&dir.join("c")),
            "every shard file read whole"
        );
    }
    [touch, store, load]
}

// -------------------------------------------------------------------------- zarrs

fn zs_sync_open(dir: &Path) -> ZsArray<dyn ReadableStorageTraits> {
    let store: Arc<dyn ReadableStorageTraits> = Arc::new(FilesystemStore::new(dir).unwrap());
    ZsArray::open(store, "/").unwrap()
}

type AsyncArr = Arc<ZsArray<dyn AsyncReadableStorageTraits>>;

async fn zs_async_open(backend: Arc<dyn ObjectStore>) -> AsyncArr {
    let store: Arc<dyn AsyncReadableStorageTraits> = Arc::new(AsyncObjectStore::new(backend));
    Arc::new(ZsArray::async_open(store, "/").await.unwrap())
}

/// Copies a C-order block of `shape` into `out` (C order, `out_shape`) at `at`.
fn copy_block(out: &mut [u16], out_shape: &[u64], at: &[u64], block: &[u16], shape: &[u64]) {
    let (ny, nx) = (out_shape[1] as usize, out_shape[2] as usize);
    let (bz, by, bx) = (shape[0] as usize, shape[1] as usize, shape[2] as usize);
    for z in 0..bz {
        for y in 0..by {
            let d = ((at[0] as usize + z) * ny + at[1] as usize + y) * nx + at[2] as usize;
            let s = (z * by + y) * bx;
            out[d..d + bx].copy_from_slice(&block[s..s + bx]);
        }
    }
}

/// One `tokio::spawn` per intersecting chunk, results copied into one output.
async fn zs_async_spawn_box(a: &AsyncArr, b: &[std::ops::Range<u64>; 3]) -> Vec<u16> {
    let subset = ArraySubset::new_with_ranges(b);
    let shape = subset.shape().to_vec();
    let mut out = vec![0u16; subset.num_elements_usize()];
    let chunks = a.chunks_in_array_subset(&subset).unwrap().unwrap();
    let tasks = chunks.indices().into_iter().map(|idx| {
        let a = a.clone();
        let subset = subset.clone();
        tokio::spawn(async move {
            let idx: Vec<u64> = idx.to_vec();
            let cs = a.chunk_subset(&idx).unwrap();
            let ov = cs.overlap(&subset).unwrap();
            let opts = CodecOptions::default();
            let v: Vec<u16> = if ov == cs {
                a.async_retrieve_chunk_opt(&idx, &opts).await.unwrap()
            } else {
                let local = ov.relative_to(cs.start()).unwrap();
                a.async_retrieve_chunk_subset_opt(&idx, &local, &opts)
                    .await
                    .unwrap()
            };
            (ov, v)
        })
    });
    let mut stream = futures::stream::iter(tasks).buffer_unordered(SPAWN_CONCURRENCY);
    while let Some(r) = stream.next().await {
        let (ov, v) = r.unwrap();
        let at = ov.relative_to(subset.start()).unwrap();
        copy_block(&mut out, &shape, at.start(), &v, ov.shape());
    }
    out
}

/// (point position, linear offset inside its inner chunk).
type Picks = Vec<(usize, usize)>;

/// Points grouped by inner chunk: (inner chunk index, picks).
fn group_points(points: &[Point]) -> Vec<(Vec<u64>, Picks)> {
    let mut groups: HashMap<Point, Vec<(usize, usize)>> = HashMap::new();
    for (i, p) in points.iter().enumerate() {
        let c = [p[0] / INNER, p[1] / INNER, p[2] / INNER];
        let l = p.map(|v| (v % INNER) as usize);
        let off = (l[0] * INNER as usize + l[1]) * INNER as usize + l[2];
        groups.entry(c).or_default().push((i, off));
    }
    groups.into_iter().map(|(c, v)| (c.to_vec(), v)).collect()
}

fn zs_sync_gather(
    a: &ZsArray<dyn ReadableStorageTraits>,
    points: &[Point],
    threads: usize,
) -> Vec<u16> {
    let groups = group_points(points);
    let cache = ArrayShardedReadableExtCache::new(a);
    let per = groups.len().div_ceil(threads.max(1)).max(1);
    let picked: Vec<Vec<(usize, u16)>> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .chunks(per)
            .map(|part| {
                let cache = &cache;
                s.spawn(move || {
                    let opts = CodecOptions::default().with_concurrent_target(1);
                    let mut got = Vec::new();
                    for (c, pts) in part {
                        let v: Vec<u16> = a.retrieve_subchunk_opt(cache, c, &opts).unwrap();
                        got.extend(pts.iter().map(|&(i, off)| (i, v[off])));
                    }
                    got
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut out = vec![0u16; points.len()];
    for (i, v) in picked.into_iter().flatten() {
        out[i] = v;
    }
    out
}

async fn zs_async_gather(a: &AsyncArr, points: &[Point], spawn: bool) -> Vec<u16> {
    let groups = group_points(points);
    let cache = Arc::new(AsyncArrayShardedReadableExtCache::new(a));
    let mut out = vec![0u16; points.len()];
    let read = |c: Vec<u64>, pts: Vec<(usize, usize)>| {
        let a = a.clone();
        let cache = cache.clone();
        async move {
            let v: Vec<u16> = a
                .async_retrieve_subchunk_opt(&cache, &c, &CodecOptions::default())
                .await
                .unwrap();
            pts.into_iter()
                .map(|(i, off)| (i, v[off]))
                .collect::<Vec<_>>()
        }
    };
    if spawn {
        let mut s = futures::stream::iter(groups)
            .map(|(c, pts)| tokio::spawn(read(c, pts)))
            .buffer_unordered(SPAWN_CONCURRENCY);
        while let Some(r) = s.next().await {
            for (i, v) in r.unwrap() {
                out[i] = v;
            }
        }
    } else {
        let mut s = futures::stream::iter(groups)
            .map(|(c, pts)| read(c, pts))
            .buffer_unordered(SPAWN_CONCURRENCY);
        while let Some(r) = s.next().await {
            for (i, v) in r {
                out[i] = v;
            }
        }
    }
    out
}

// -------------------------------------------------------------------------- profiling

/// `--profile CASE LIB [REPS]`: runs one case of one library `REPS` times (default 20) on the
/// full-size data in `ZARRFLOW_BENCH_DATA` (generated if missing) and prints each time with
/// the process's CPU time during it (with `ZARRFLOW_BENCH_HTTP_DELAY_MS`, that includes the
/// delaying server's threads, which run in this process, and their part is printed too),
/// for `perf record`. CASE: `all`,
/// `sub`, `gather`; LIB: `zarrflow`, `zarrs-sync`. `ZARRFLOW_BENCH_CONCURRENCY` /
/// `ZARRFLOW_BENCH_DECODE_THREADS` override zarrflow's request concurrency and decode
/// threads.
fn profile(args: &[String]) {
    let (case, lib) = (args[0].as_str(), args[1].as_str());
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(20);
    let n = 512;
    let dir = PathBuf::from(std::env::var("ZARRFLOW_BENCH_DATA").expect("ZARRFLOW_BENCH_DATA"))
        .join(format!("n{n}"));
    zarrs::config::global_config_mut().set_include_zarrs_metadata(false);
    generate(&dir, n);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let points = random_points(100_000, n, 0x9e37_79b9_7f4a_7c15);
    let boxed = match case {
        "all" => [0..n, 0..n, 0..n],
        _ => [100..300, 100..300, 100..300],
    };
    // Optional overrides of zarrflow's options, for experiments.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    let mut options = ArrayOptions::default();
    if let Some(c) = env("ZARRFLOW_BENCH_CONCURRENCY") {
        options = options.with_request_concurrency(c);
    }
    if let Some(t) = env("ZARRFLOW_BENCH_DECODE_THREADS") {
        options = options.with_decode_threads(t);
    }
    // `ZARRFLOW_BENCH_HTTP_DELAY_MS=D`: zarrflow reads through the delaying HTTP server.
    let server = env("ZARRFLOW_BENCH_HTTP_DELAY_MS")
        .map(|d| http_latency::HttpLatencyServer::start(&dir, Duration::from_millis(d as u64)));
    let url = server
        .as_ref()
        .map_or(dir.to_str().unwrap().to_string(), |s| s.url.clone());
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    let mut zf = rt
        .block_on(ZfArray::open_in(&store, &StoreKey::root(), options.clone()))
        .unwrap();
    let zs = zs_sync_open(&dir);
    for _ in 0..reps {
        if server.is_some() {
            // a cold shard-index cache, as in the benchmark's latency cases
            zf = rt
                .block_on(ZfArray::open_in(&store, &StoreKey::root(), options.clone()))
                .unwrap();
        }
        let server_cpu_before = server.as_ref().map_or(Duration::ZERO, |s| s.cpu());
        let (v, wall, cpu) = cpu_time::timed(|| match (case, lib) {
            ("gather", "zarrflow") => rt.block_on(zf_gather(&zf, &points)),
            ("gather", _) => zs_sync_gather(&zs, &points, cores),
            (_, "zarrflow") => rt.block_on(zf_read_box(&zf, &boxed)),
            _ => zs
                .retrieve_array_subset(&ArraySubset::new_with_ranges(&boxed))
                .unwrap(),
        });
        let server_cpu = server
            .as_ref()
            .map_or(Duration::ZERO, |s| s.cpu())
            .saturating_sub(server_cpu_before);
        println!(
            "{case} {lib}: {:.1} ms (CPU {:.1} ms, of which the server's {:.1} ms)",
            wall.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3,
            server_cpu.as_secs_f64() * 1e3
        );
        std::hint::black_box(&v);
    }
}

// -------------------------------------------------------------------------- scaling

/// `--scaling`: see the module documentation.
fn scaling() {
    zarrs::config::global_config_mut().set_include_zarrs_metadata(false);
    let (_tmp, root) = match std::env::var("ZARRFLOW_BENCH_DATA") {
        Ok(d) if !d.is_empty() => (None, PathBuf::from(d)),
        _ => {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let reps = 5;
    let fixed_box = [20..120, 100..300, 100..300];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let points: Vec<Point> = (0..100_000)
        .map(|_| [20 + next() % 100, 100 + next() % 200, 100 + next() % 200])
        .collect();
    let shard_boxes: [(&str, [std::ops::Range<u64>; 3]); 3] = [
        ("1 shard", [0..128, 0..128, 0..128]),
        ("8 shards", [0..128, 0..256, 0..512]),
        ("64 shards", [0..512, 0..512, 0..512]),
    ];
    println!(
        "zarrflow read scaling: uint16, shards 128³, inner 32³, zstd 0; {} cores; best of {reps}",
        std::thread::available_parallelism().map_or(2, |n| n.get())
    );
    println!("| array | case | touched MiB | ms | ms per touched MiB |");
    println!("|---|---|---|---|---|");
    for (label, shape) in [
        ("64 MiB", [128u64, 512, 512]),
        ("256 MiB", [512, 512, 512]),
        ("1 GiB", [512, 1024, 1024]),
    ] {
        let dir = root.join(format!("s{}x{}x{}", shape[0], shape[1], shape[2]));
        generate_shape(&dir, shape);
        let a = rt.block_on(zf_open_local(&dir));
        let all = [0..shape[0], 0..shape[1], 0..shape[2]];
        let mut cases: Vec<(String, Option<[std::ops::Range<u64>; 3]>)> = vec![
            ("read all".into(), Some(all)),
            (
                "box [20:120, 100:300, 100:300]".into(),
                Some(fixed_box.clone()),
            ),
            ("100k points in that box".into(), None),
        ];
        for (name, b) in &shard_boxes {
            if b.iter().zip(shape).all(|(r, n)| r.end <= n) {
                cases.push((format!("box of {name}"), Some(b.clone())));
            }
        }
        for (name, b) in cases {
            let touched = rt.block_on(zf_needed_bytes(&a, b.as_ref().unwrap_or(&fixed_box))) as f64
                / (1 << 20) as f64;
            let t = (0..reps)
                .map(|_| {
                    let t = Instant::now();
                    let v = match &b {
                        Some(b) => rt.block_on(zf_read_box(&a, b)),
                        None => rt.block_on(zf_gather(&a, &points)),
                    };
                    std::hint::black_box(&v);
                    t.elapsed()
                })
                .min()
                .unwrap_or_default();
            let ms = t.as_secs_f64() * 1e3;
            println!(
                "| {label} | {name} | {touched:.1} | {ms:.1} | {:.3} |",
                ms / touched.max(1e-9)
            );
        }
    }
}

// -------------------------------------------------------------------------- peak memory

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn child_peak(lib: &str, dir: &Path) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let n = {
        let zs = zs_sync_open(dir);
        zs.shape()[0]
    };
    let all = [0..n, 0..n, 0..n];
    let before = status_kib("VmRSS:");
    let v: Vec<u16> = match lib {
        "zarrflow" => {
            let a = rt.block_on(zf_open_local(dir));
            rt.block_on(zf_read_box(&a, &all))
        }
        "zarrs-sync" => zs_sync_open(dir)
            .retrieve_array_subset(&ArraySubset::new_with_ranges(&all))
            .unwrap(),
        "zarrs-async" => {
            let a = rt.block_on(zs_async_open(Arc::new(
                LocalFileSystem::new_with_prefix(dir).unwrap(),
            )));
            rt.block_on(a.async_retrieve_array_subset(&ArraySubset::new_with_ranges(&all)))
                .unwrap()
        }
        "zarrs-async-spawn" => {
            let a = rt.block_on(zs_async_open(Arc::new(
                LocalFileSystem::new_with_prefix(dir).unwrap(),
            )));
            rt.block_on(zs_async_spawn_box(&a, &all))
        }
        other => panic!("unknown library {other}"),
    };
    let hwm = status_kib("VmHWM:");
    let out = (v.len() * 2) as f64 / (1 << 20) as f64;
    println!(
        "VmHWM {:6.0} MiB  (before the read {:4.0} MiB; output {out:.0} MiB; peak - before - output = {:5.0} MiB)",
        hwm as f64 / 1024.0,
        before as f64 / 1024.0,
        (hwm as f64 - before as f64) / 1024.0 - out
    );
    std::hint::black_box(&v);
}

// -------------------------------------------------------------------------- 10 ms over HTTP

/// Read all, the sub-box and the gather through one local HTTP server that delays every
/// answer by [`LATENCY`], for zarrflow, zarrs (async spawn) and TensorStore; prints a table.
fn http_latency_cases(rt: &tokio::runtime::Runtime, dir: &Path, cfg: &Config, points: &[Point]) {
    let server = http_latency::HttpLatencyServer::start(dir, LATENCY);
    let all = [0..cfg.n, 0..cfg.n, 0..cfg.n];
    let gather: u64 = points.iter().map(|p| value(p[0], p[1], p[2]) as u64).sum();
    let pts_file = points_npy(points);
    let zs_backend: Arc<dyn ObjectStore> = Arc::new(
        object_store::http::HttpBuilder::new()
            .with_url(server.url.clone())
            .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
            .build()
            .unwrap(),
    );
    println!();
    println!(
        "10 ms over HTTP: one local server delays every answer by 10 ms; each library reads \
         through it (times in ms, best of {}; requests for chunk data per read):",
        cfg.latency_reps
    );
    println!(
        "| {:<34} | {:>9} | {:>11} | {:>11} | {:>16} | {:>26} |",
        "case",
        "zarrflow",
        "zarrs spawn",
        "TensorStore",
        "zarrflow / best",
        "requests zf / zs / TS"
    );
    println!("|{}|", ["---"; 6].join("|"));
    type Case<'a> = (&'a str, String, Option<&'a [std::ops::Range<u64>; 3]>, u64);
    let cases: [Case; 3] = [
        (
            "read all",
            format!("read all {}", box_label(&all)),
            Some(&all),
            checksum_box(&all),
        ),
        (
            "sub-box",
            format!("sub-box {}", box_label(&cfg.sub)),
            Some(&cfg.sub),
            checksum_box(&cfg.sub),
        ),
        (
            "gather",
            format!("gather {} random points", cfg.points),
            None,
            gather,
        ),
    ];
    for (case, label, sub, expect) in cases {
        let mut t_zf = Duration::MAX;
        let mut n_zf = 0;
        // one store (its HTTP client and connections) for every call, as TensorStore keeps
        // its context; the array is reopened before each, so its shard-index cache is cold
        let store = Store::open(&server.url, StoreOptions::default()).unwrap();
        for _ in 0..cfg.latency_reps {
            let zf = rt
                .block_on(ZfArray::open_in(
                    &store,
                    &StoreKey::root(),
                    ArrayOptions::default(),
                ))
                .unwrap();
            server.reset();
            let t = Instant::now();
            let v = match sub {
                Some(s) => rt.block_on(zf_read_box(&zf, s)),
                None => rt.block_on(zf_gather(&zf, points)),
            };
            t_zf = t_zf.min(t.elapsed());
            n_zf = server.counts().total();
            assert_eq!(sum(&v), expect, "zarrflow over HTTP {label}");
        }
        let mut t_zs = Duration::MAX;
        let mut n_zs = 0;
        for _ in 0..cfg.latency_reps {
            let za = rt.block_on(zs_async_open(zs_backend.clone()));
            server.reset();
            let t = Instant::now();
            let v = match sub {
                Some(s) => rt.block_on(zs_async_spawn_box(&za, s)),
                None => rt.block_on(zs_async_gather(&za, points, true)),
            };
            t_zs = t_zs.min(t.elapsed());
            n_zs = server.counts().total();
            assert_eq!(sum(&v), expect, "zarrs over HTTP {label}");
        }
        server.reset();
        let ts = pts_file.as_ref().map_err(Clone::clone).and_then(|pts| {
            let out = tensorstore::run(&[
                "read-http".into(),
                server.url.clone(),
                cfg.latency_reps.to_string(),
                sub_arg(&cfg.sub),
                pts.path().display().to_string(),
                case.into(),
            ])?;
            let v = &out[case];
            if tensorstore::checksum(v) != Some(expect) {
                return Err(format!("TensorStore's {case} over HTTP has a wrong sum"));
            }
            tensorstore::seconds(v).ok_or_else(|| "no time".to_string())
        });
        let n_ts = server.counts().total() as f64 / cfg.latency_reps as f64;
        let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
        let (ts_ms, best) = match &ts {
            Ok(t) => (ms(*t), t_zs.min(*t)),
            Err(why) => {
                println!("TensorStore is not in this row: {why}");
                ("—".into(), t_zs)
            }
        };
        println!(
            "| {:<34} | {:>9} | {:>11} | {:>11} | {:>15.2}x | {:>26} |",
            label,
            ms(t_zf),
            ms(t_zs),
            ts_ms,
            t_zf.as_secs_f64() / best.as_secs_f64(),
            format!("{n_zf} / {n_zs} / {n_ts:.0}")
        );
    }
}

/// `cfg.sub` as the peer's `z0:z1,y0:y1,x0:x1` argument.
fn sub_arg(sub: &[std::ops::Range<u64>; 3]) -> String {
    sub.iter()
        .map(|r| format!("{}:{}", r.start, r.end))
        .collect::<Vec<_>>()
        .join(",")
}

/// The points as a `(count, 3)` uint64 `.npy` file for the TensorStore peer.
fn points_npy(points: &[Point]) -> Result<tempfile::NamedTempFile, String> {
    let file = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    let flat: Vec<u8> = points
        .iter()
        .flatten()
        .flat_map(|c| c.to_le_bytes())
        .collect();
    let ty = zarrflow::npy::NpyType::new(zarrflow::npy::NpyKind::UInt, 8).expect("u64");
    zarrflow::npy::write_npy(
        std::fs::File::create(file.path()).map_err(|e| e.to_string())?,
        ty,
        &[points.len() as u64, 3],
        &flat,
    )
    .map_err(|e| e.to_string())?;
    Ok(file)
}

// -------------------------------------------------------------------------- CLI

/// The whole `zarrflow get DIR SEL -o OUT.npy` process (start, open, read, the `.npy` file
/// written and renamed into place, exit) for the sub-box and read all, best of `cfg.reps`,
/// each into a file removed before the run (outside the timing); printed next to zarrflow's
/// and TensorStore's in-process reads of the same run (`ts`: read all, sub-box, gather).
fn cli_cases(rt: &tokio::runtime::Runtime, dir: &Path, cfg: &Config, ts: Option<&[Duration; 3]>) {
    let bin = env!("CARGO_BIN_EXE_zarrflow");
    let out_dir = tempfile::tempdir_in(dir.parent().unwrap_or(dir)).unwrap();
    let out = out_dir.path().join("out.npy");
    let run = |args: &[&str]| {
        let t = Instant::now();
        let status = std::process::Command::new(bin)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        let e = t.elapsed();
        assert!(status.success(), "zarrflow {args:?}: {status}");
        e
    };
    let start = (0..cfg.reps).map(|_| run(&["--version"])).min().unwrap();
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
    println!();
    println!(
        "the CLI, whole process (`zarrflow get DIR SEL -o OUT.npy` into a new file, best of {}; \
         a bare process start, `zarrflow --version`, takes {} ms), against the in-process reads \
         of this run:",
        cfg.reps,
        ms(start)
    );
    println!(
        "| {:<34} | {:>9} | {:>20} | {:>22} | {:>11} | {:>16} |",
        "case",
        "CLI",
        "zarrflow in-process",
        "TensorStore in-process",
        "CLI / TS",
        "CLI / in-process"
    );
    println!("|{}|", ["---"; 6].join("|"));
    let all = [0..cfg.n, 0..cfg.n, 0..cfg.n];
    for (i, sub) in [(1, &cfg.sub), (0, &all)] {
        let sel = sub_arg(sub);
        let dir_arg = dir.to_str().unwrap();
        let out_arg = out.to_str().unwrap();
        let mut t_cli = Duration::MAX;
        for _ in 0..cfg.reps {
            let _ = std::fs::remove_file(&out);
            t_cli = t_cli.min(run(&["get", dir_arg, &sel, "-o", out_arg]));
        }
        let data = read_npy_u16(&out);
        assert_eq!(sum(&data), checksum_box(sub), "zarrflow get {sel}");
        let zf = rt.block_on(zf_open_local(dir));
        let t_in = best(
            cfg.reps,
            || rt.block_on(zf_read_box(&zf, sub)),
            |v| {
                std::hint::black_box(v);
            },
        );
        let label = format!(
            "{} {}",
            if i == 1 { "sub-box" } else { "read all" },
            box_label(sub)
        );
        let (ts_ms, ratio) = match ts {
            Some(ts) => (
                ms(ts[i]),
                format!("{:.2}x", t_cli.as_secs_f64() / ts[i].as_secs_f64()),
            ),
            None => ("—".into(), "—".into()),
        };
        println!(
            "| {:<34} | {:>9} | {:>20} | {:>22} | {:>11} | {:>15.2}x |",
            label,
            ms(t_cli),
            ms(t_in),
            ts_ms,
            ratio,
            t_cli.as_secs_f64() / t_in.as_secs_f64()
        );
    }
}

/// The `u16` values of a `.npy` file written by `zarrflow get` (zarrflow's own `.npy` reader).
fn read_npy_u16(path: &Path) -> Vec<u16> {
    let npy = zarrflow::npy::read_npy_vec(std::fs::read(path).unwrap()).unwrap();
    assert_eq!(npy.header.descr.to_string(), "<u2", "{}", path.display());
    npy.data
        .chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect()
}

// -------------------------------------------------------------------------- table

type Counts = Vec<(&'static str, RequestCounts)>;

#[derive(Default)]
struct Table {
    rows: Vec<(String, String, [Duration; 4], Option<Counts>)>,
    /// zarrflow's CPU time in the best call of the first three (local) rows.
    zarrflow_cpu: Vec<Duration>,
    /// TensorStore's times and CPU of the first three (local) rows, or why it is missing.
    tensorstore: Option<Result<TsReads, String>>,
}

impl Table {
    /// `t`: zarrflow, zarrs sync, zarrs async single task, zarrs async spawned.
    fn row(&mut self, case: &str, store: &str, t: [Duration; 4], counts: Option<Counts>) {
        self.rows.push((case.into(), store.into(), t, counts));
    }

    fn add_tensorstore(&mut self, t: Result<TsReads, String>) {
        self.tensorstore = Some(t);
    }

    fn print(&self) {
        let ms = |d: Duration| {
            if d.is_zero() {
                "—".to_string()
            } else {
                format!("{:.1}", d.as_secs_f64() * 1e3)
            }
        };
        let ratio = |z: Duration, o: Duration| {
            if o.is_zero() {
                "—".to_string()
            } else {
                format!("{:.2}x", o.as_secs_f64() / z.as_secs_f64())
            }
        };
        println!();
        println!(
            "times in ms (best of N); ratio = zarrs time / zarrflow time (> 1: zarrflow faster)"
        );
        println!(
            "| {:<34} | {:<5} | {:>9} | {:>10} | {:>12} | {:>12} | {:>9} | {:>9} | {:>9} |",
            "case",
            "store",
            "zarrflow",
            "zarrs sync",
            "zarrs async1",
            "zarrs spawn",
            "vs sync",
            "vs async1",
            "vs spawn"
        );
        println!("|{}|", ["-"; 9].map(|_| "---").join("|"));
        for (case, store, t, _) in &self.rows {
            println!(
                "| {:<34} | {:<5} | {:>9} | {:>10} | {:>12} | {:>12} | {:>9} | {:>9} | {:>9} |",
                case,
                store,
                ms(t[0]),
                ms(t[1]),
                ms(t[2]),
                ms(t[3]),
                ratio(t[0], t[1]),
                ratio(t[0], t[2]),
                ratio(t[0], t[3])
            );
        }
        println!();
        match &self.tensorstore {
            Some(Ok(ts)) => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                println!(
                    "against the best peer (local; TensorStore in-process, same data, same run); \
                     CPU: user + system time of the process in the best call; \
                     CPU / {cores}: the least time this machine's {cores} cores allow for \
                     zarrflow's work:"
                );
                println!(
                    "| {:<34} | {:>9} | {:>11} | {:>9} | {:>16} | {:>12} | {:>15} | {:>9} |",
                    "case",
                    "zarrflow",
                    "TensorStore",
                    "best zarrs",
                    "zarrflow / best",
                    "zarrflow CPU",
                    "TensorStore CPU",
                    format!("CPU / {cores}")
                );
                println!("|{}|", ["---"; 8].join("|"));
                for (i, (case, _, t, _)) in self.rows.iter().take(3).enumerate() {
                    let zarrs = t[1..].iter().filter(|d| !d.is_zero()).min().copied();
                    let best = zarrs.map_or(ts.times[i], |z| z.min(ts.times[i]));
                    let cpu = self.zarrflow_cpu.get(i).copied().unwrap_or_default();
                    println!(
                        "| {:<34} | {:>9} | {:>11} | {:>9} | {:>15.2}x | {:>12} | {:>15} | {:>9} |",
                        case,
                        ms(t[0]),
                        ms(ts.times[i]),
                        zarrs.map_or("—".into(), ms),
                        t[0].as_secs_f64() / best.as_secs_f64(),
                        ms(cpu),
                        ms(ts.cpu[i]),
                        ms(cpu / cores as u32)
                    );
                }
            }
            Some(Err(why)) => println!("TensorStore is not in this run: {why}"),
            None => {}
        }
        println!();
        println!("requests per read with 10 ms latency (one call, cold shard-index cache):");
        for (case, _, _, counts) in &self.rows {
            let Some(counts) = counts else { continue };
            for (lib, c) in counts {
                println!(
                    "  {case:<34} {lib:<19} total {:>5}  (GET {:>4}, ranged GET {:>5}, HEAD {:>5}; {:>6.1} MiB)",
                    c.total(),
                    c.get,
                    c.get_range,
                    c.head,
                    c.bytes_read as f64 / (1 << 20) as f64
                );
            }
        }
    }
}
