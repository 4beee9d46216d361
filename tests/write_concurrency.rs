//! How many shards a write stores at once: `request_concurrency` on a store that does not
//! read in place (a remote one) or that fsyncs, at most `local_write_concurrency` (default
//! 2) on one that reads in place (local files, memory), where a PUT is CPU work rather than
//! a wait. Observed through a store whose PUTs wait 50 ms and count how many are in flight.
//! And where a remote store's PUTs run: as tasks of the runtime, off the caller's thread.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use ndarray::{ArrayD, IxDyn};
use object_store::memory::InMemory;
use zarrflow::array::{Array, ArrayOptions, DEFAULT_LOCAL_WRITE_CONCURRENCY};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};

/// An in-memory store whose PUTs wait before they land, counting the PUTs in flight.
#[derive(Default)]
struct SlowPuts {
    inner: InMemory,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

put_wrapper!(SlowPuts, |this, location, payload, opts| {
    let now = this.in_flight.fetch_add(1, SeqCst) + 1;
    this.most_in_flight.fetch_max(now, SeqCst);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let result = this.inner.put_opts(location, payload, opts).await;
    this.in_flight.fetch_sub(1, SeqCst);
    result
});

/// Writes a 16×4 uint16 array of 8 shards (2×4, inner chunks 1×4) whole through a store
/// that reads in place or not (and fsyncs or not), opened with `options`; returns the most
/// PUTs in flight at once (the array's metadata PUT apart) after checking what was stored.
async fn most_puts_in_flight(in_place: bool, fsync: bool, options: ArrayOptions) -> usize {
    let backend = Arc::new(SlowPuts::default());
    let store = Store::from_object_store(
        backend.clone(),
        "",
        "memory://slow-puts",
        StoreOptions::default().with_fsync(fsync),
    )
    .unwrap()
    .with_in_place_reads(in_place);
    let spec = ArraySpec::new(vec![16, 4], "uint16")
        .shard_shape(vec![2, 4])
        .inner_chunk_shape(vec![1, 4]);
    let key = StoreKey::new("a").unwrap();
    Array::create(&store, &key, &spec, ArrayOptions::default())
        .await
        .unwrap();
    backend.most_in_flight.store(0, SeqCst);
    let a = Array::open_in(&store, &key, options).await.unwrap();
    let values: Vec<u16> = (1..=64).collect();
    let values = ArrayD::from_shape_vec(IxDyn(&[16, 4]), values.clone()).unwrap();
    a.view().write(&values.view()).await.unwrap();
    let most = backend.most_in_flight.load(SeqCst);
    assert_eq!(a.view().read::<u16>().await.unwrap(), values);
    most
}

#[tokio::test]
async fn a_write_stores_local_write_concurrency_shards_at_once_into_an_in_place_store() {
    assert_eq!(DEFAULT_LOCAL_WRITE_CONCURRENCY, 2);
    let default = ArrayOptions::default();
    assert_eq!(default.local_write_concurrency(), 2);
    // a remote store: up to request_concurrency at once, so all 8 shards (each shard has a
    // lock of its own: with 64 lock stripes, some of the 8 waited for each other)
    let remote = most_puts_in_flight(false, false, default.clone()).await;
    assert_eq!(remote, 8);
    // a store that reads in place: two at once, or as many as asked
    let local = most_puts_in_flight(true, false, default.clone()).await;
    assert_eq!(local, 2);
    let four = default.clone().with_local_write_concurrency(4);
    assert_eq!(four.local_write_concurrency(), 4);
    let local4 = most_puts_in_flight(true, false, four).await;
    assert_eq!(local4, 4);
    // one that fsyncs waits for its device: as a remote store
    assert_eq!(
        most_puts_in_flight(true, true, default.clone()).await,
        remote
    );
    // never more than request_concurrency, never fewer than one
    let one = default.clone().with_request_concurrency(1);
    assert_eq!(most_puts_in_flight(true, false, one).await, 1);
    let zero = default.with_local_write_concurrency(0);
    assert_eq!(zero.local_write_concurrency(), 1);
    assert_eq!(most_puts_in_flight(true, false, zero).await, 1);
}

#[test]
fn stores_opened_on_local_paths_and_memory_read_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let local = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    assert!(local.reads_in_place());
    let memory = Store::open("memory://in-place", StoreOptions::default()).unwrap();
    assert!(memory.reads_in_place());
}

/// An in-memory store that records the name of the thread each PUT runs on.
#[derive(Default)]
struct PutThreads {
    inner: InMemory,
    names: std::sync::Mutex<Vec<String>>,
}

put_wrapper!(PutThreads, |this, location, payload, opts| {
    let name = std::thread::current().name().unwrap_or("").to_string();
    this.names.lock().unwrap().push(name);
    this.inner.put_opts(location, payload, opts).await
});

/// A write's PUT to a remote store runs as a task of the runtime (`array/spawned.rs`), not
/// inside the caller's poll: S3's client hashes each body there, which held up the write's
/// other shards. Here the caller is this test's thread (`block_on`): the array's metadata
/// (written by `Array::create`, not by a write) is stored from it, and every shard of the
/// write from one of the runtime's workers.
#[test]
fn a_remote_stores_puts_run_on_the_runtimes_workers_not_the_callers_thread() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("put-worker")
        .enable_all()
        .build()
        .unwrap();
    let backend = Arc::new(PutThreads::default());
    let store = Store::from_object_store(
        backend.clone(),
        "",
        "memory://put-threads",
        StoreOptions::default(),
    )
    .unwrap();
    let spec = ArraySpec::new(vec![16, 4], "uint16")
        .shard_shape(vec![2, 4])
        .inner_chunk_shape(vec![1, 4]);
    let key = StoreKey::new("a").unwrap();
    let values = ArrayD::from_shape_vec(IxDyn(&[16, 4]), (1..=64u16).collect()).unwrap();
    rt.block_on(async {
        let a = Array::create(&store, &key, &spec, ArrayOptions::default())
            .await
            .unwrap();
        a.view().write(&values.view()).await.unwrap();
        assert_eq!(a.view().read::<u16>().await.unwrap(), values);
    });
    let names = backend.names.lock().unwrap().clone();
    assert_eq!(names.len(), 1 + 8, "the metadata and 8 shards: {names:?}");
    let caller = std::thread::current().name().unwrap().to_string();
    assert_eq!(names[0], caller, "the metadata PUT ran on {names:?}");
    assert!(
        names[1..].iter().all(|n| n == "put-worker"),
        "the shard PUTs ran on {names:?}"
    );
}
