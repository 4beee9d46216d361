//! Conditional writes across processes: 16 `zarrflow set` processes at a time, each writing
//! its own inner chunk of ONE shard, in several rounds, on the local filesystem and on an S3
//! server that honours conditional PUT (moto). Every writer exits 0 and every cell ends with
//! its writer's last value: no update is lost. Before local stores had compare-and-swap, the
//! local run lost about half of the inner chunks (each process's read-modify-write of the
//! shard replaced the others' with an unconditional PUT).

mod common;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use common::cli::BIN;
use common::moto::MotoServer;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::store::{Store, StoreError, StoreKey, StoreOptions};

const WRITERS: usize = 16;
const ROUNDS: usize = 4;
/// The array: 16×16 uint32, one shard of 4×4 inner chunks of 4×4 (writer `w` owns inner
/// chunk `(w / 4, w % 4)`).
const SIDE: usize = 16;
const INNER: usize = 4;

fn value(writer: usize, round: usize) -> u32 {
    (writer as u32 + 1) * 100 + round as u32 + 1
}

/// What the writers did.
#[derive(Debug, Default)]
struct Outcome {
    failed: Vec<String>,
    /// Conflicts retried, over all writers.
    conflicts: usize,
    /// The most conflicts one write met.
    most_conflicts: usize,
}

/// Runs `WRITERS` threads, each launching `zarrflow set URL <its inner chunk> --value V` for
/// every round, with the store requests' conflicts logged (`zarrflow::array::retry`).
fn run_writers(url: &str, env: &[(&'static str, String)]) -> Outcome {
    let conflicts = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (conflicts, most, failed) = (&conflicts, &most, &failed);
            s.spawn(move || {
                let (r, c) = ((w / 4) * INNER, (w % 4) * INNER);
                let sel = format!("{r}:{},{c}:{}", r + INNER, c + INNER);
                for round in 0..ROUNDS {
                    let out = Command::new(BIN)
                        .args(["set", url, &sel, "--value", &value(w, round).to_string()])
                        .envs(env.iter().map(|(k, v)| (k, v)))
                        .env("RUST_LOG", "zarrflow::array::retry=debug")
                        .env_remove("RUST_BACKTRACE")
                        .output()
                        .expect("the zarrflow binary runs");
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let n = stderr.lines().filter(|l| l.contains("conflict")).count();
                    conflicts.fetch_add(n, Ordering::Relaxed);
                    most.fetch_max(n, Ordering::Relaxed);
                    if !out.status.success() {
                        let last = stderr.lines().last().unwrap_or("").to_string();
                        failed
                            .lock()
                            .unwrap()
                            .push(format!("writer {w} round {round}: {last}"));
                    }
                }
            });
        }
    });
    Outcome {
        failed: failed.into_inner().unwrap(),
        conflicts: conflicts.into_inner(),
        most_conflicts: most.into_inner(),
    }
}

/// Cells that do not hold their writer's last value.
async fn lost_cells(store: &Store) -> usize {
    let a = Array::open_in(store, &StoreKey::new("a").unwrap(), ArrayOptions::default())
        .await
        .unwrap();
    let got = a.view().read::<u32>().await.unwrap();
    let mut lost = 0;
    for r in 0..SIDE {
        for c in 0..SIDE {
            let w = (r / INNER) * 4 + c / INNER;
            if got[[r, c]] != value(w, ROUNDS - 1) {
                lost += 1;
            }
        }
    }
    lost
}

fn create(url: &str, env: &[(&'static str, String)]) {
    let out = Command::new(BIN)
        .args(["create", url, "--shape", "16,16", "--dtype", "uint32"])
        .args(["--shards", "16,16", "--chunks", "4,4"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn check(name: &str, url: &str, env: &[(&'static str, String)], store: &Store) {
    create(url, env);
    let outcome = run_writers(url, env);
    let lost = lost_cells(store).await;
    eprintln!(
        "{name}: {WRITERS} writer processes × {ROUNDS} rounds on one shard: {} failed, \
         {} conflicts retried (at most {} by one write), {lost} of {} cells lost",
        outcome.failed.len(),
        outcome.conflicts,
        outcome.most_conflicts,
        SIDE * SIDE
    );
    assert!(outcome.failed.is_empty(), "{name}: {:#?}", outcome.failed);
    assert_eq!(lost, 0, "{name}: cells lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_writer_processes_lose_nothing_on_the_local_filesystem() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let store = Store::open(root, StoreOptions::default()).unwrap();
    check("local", &format!("{root}/a"), &[], &store).await;
    // nothing but the array's objects is left: no staging or lock files
    let files = common::files_under(dir.path());
    let names: Vec<&str> = files.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["a/c/0/0", "a/zarr.json"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_writer_processes_lose_nothing_on_s3() {
    let server = MotoServer::start(&["bucket"]);
    let store = Store::open("s3://bucket", server.options()).unwrap();
    check("s3 (moto)", "s3://bucket/a", &server.env(), &store).await;
}

#[tokio::test]
async fn moto_refuses_stale_conditional_puts() {
    // the guarantee the S3 run relies on: moto evaluates If-Match / If-None-Match on PUT
    let server = MotoServer::start(&["bucket"]);
    let store = Store::open("s3://bucket/cas", server.options()).unwrap();
    let k = StoreKey::new("x").unwrap();
    let v1 = store.put(&k, Bytes::from_static(b"1")).await.unwrap();
    let v2 = store
        .put_if_match(&k, Bytes::from_static(b"2"), &v1)
        .await
        .unwrap();
    assert_ne!(v1, v2);
    let stale = store.put_if_match(&k, Bytes::from_static(b"3"), &v1).await;
    assert!(
        matches!(stale, Err(StoreError::Precondition { .. })),
        "{stale:?}"
    );
    let exists = store.put_if_absent(&k, Bytes::from_static(b"4")).await;
    assert!(
        matches!(exists, Err(StoreError::AlreadyExists { .. })),
        "{exists:?}"
    );
    assert_eq!(store.get(&k).await.unwrap().as_ref(), b"2");
    let (_, current) = store.get_with_version(&k).await.unwrap();
    assert_eq!(current, v2);
}
