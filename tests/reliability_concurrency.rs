//! Concurrent writers: many tasks, many shards, several array handles (separate in-process
//! lock tables, so conflicts are resolved by conditional PUTs and retries), against the
//! in-memory store and the S3 test server. Every task owns a disjoint set of cells and
//! writes it in rounds; at the end every cell holds its owner's last value: no update is
//! lost and no shard is torn. Tasks also read their cells between rounds while other tasks
//! replace the same shards: partial reads are pinned to one shard version (If-Match).
//! A PUT whose response is lost is resolved by reading the object again (at the end).

mod common;

use common::S3Server;
use common::moto::MotoServer;
use ndarray::{ArrayD, IxDyn};
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreError, StoreKey};

const SIDE: usize = 24;

fn owner(r: usize, c: usize, tasks: usize) -> usize {
    (r * 7 + c * 3) % tasks
}

fn value(task: usize, round: usize) -> u32 {
    (task as u32 + 1) * 1000 + round as u32 + 1
}

async fn stress(store: Store, tasks: usize, rounds: usize, handles: usize, reads: bool) {
    let spec = ArraySpec::new(vec![SIDE as u64, SIDE as u64], "uint32")
        .shard_shape(vec![8, 8])
        .inner_chunk_shape(vec![2, 2]);
    let path = StoreKey::new("stress").unwrap();
    Array::create(&store, &path, &spec, ArrayOptions::default())
        .await
        .unwrap();
    let mut arrays = Vec::new();
    for _ in 0..handles {
        arrays.push(
            Array::open_in(&store, &path, ArrayOptions::default())
                .await
                .unwrap(),
        );
    }
    let mut joins = Vec::new();
    for t in 0..tasks {
        let a = arrays[t % handles].clone();
        joins.push(tokio::spawn(async move {
            // the task's cells: scattered points over every shard (a vindex write)
            let (rows, cols): (Vec<usize>, Vec<usize>) = (0..SIDE * SIDE)
                .map(|i| (i / SIDE, i % SIDE))
                .filter(|&(r, c)| owner(r, c, tasks) == t)
                .unzip();
            let list = |v: &[usize]| {
                v.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let sel = Selection::parse(&format!("[{}], [{}]", list(&rows), list(&cols))).unwrap();
            let view = a.view().vindex(&sel).unwrap();
            for round in 0..rounds {
                let v = ArrayD::from_elem(IxDyn(&[rows.len()]), value(t, round));
                // after 16 lost races on one shard a write reports `Precondition` (some
                // shards may hold the new values); the contract is to run it again
                let mut tries = 0;
                loop {
                    tries += 1;
                    match view.write(&v.view()).await {
                        Ok(()) => break,
                        Err(ArrayError::Store(StoreError::Precondition { .. })) if tries < 10 => {}
                        Err(e) => panic!("task {t} round {round}: {e}"),
                    }
                }
                // interleaved reads race with other writers replacing the same shards: the
                // task's own cells are always its latest round
                if reads {
                    let got = view.read::<u32>().await.unwrap();
                    assert!(
                        got.iter().all(|&x| x == value(t, round)),
                        "task {t} round {round}"
                    );
                }
            }
        }));
    }
    for j in joins {
        j.await.unwrap();
    }
    let fresh = Array::open_in(&store, &path, ArrayOptions::default())
        .await
        .unwrap();
    let all = fresh.view().read::<u32>().await.unwrap();
    for r in 0..SIDE {
        for c in 0..SIDE {
            assert_eq!(
                all[[r, c]],
                value(owner(r, c, tasks), rounds - 1),
                "cell ({r}, {c}) lost its owner's last write"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_writers_many_shards_memory_store() {
    stress(Store::memory(), 16, 6, 4, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_writers_many_shards_s3() {
    let server = S3Server::start(&["bucket"]).await;
    let store = Store::open("s3://bucket/stress", server.options()).unwrap();
    // s3s-fs checks If-Match on PUT before writing, without a lock (check-then-act), and
    // ignores If-Match on GET; real S3 does both atomically. So on the test server the
    // writers share one handle (the in-process shard locks serialise them) and no reads
    // race with them (a partial read there is not pinned to one shard version).
    stress(store, 16, 3, 1, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_handle_many_writers_memory_store() {
    // one handle: the in-process lock of each shard (key_locks.rs) serialises its writers
    stress(Store::memory(), 16, 4, 1, true).await;
}

#[tokio::test]
async fn s3_conditional_writes_are_used() {
    // the S3 test server supports If-Match / If-None-Match: a stale version is refused
    let server = S3Server::start(&["bucket"]).await;
    let store = Store::open("s3://bucket/cas", server.options()).unwrap();
    let k = StoreKey::new("x").unwrap();
    let v1 = store
        .put(&k, bytes::Bytes::from_static(b"1"))
        .await
        .unwrap();
    store
        .put_if_match(&k, bytes::Bytes::from_static(b"2"), &v1)
        .await
        .unwrap();
    assert!(
        store
            .put_if_match(&k, bytes::Bytes::from_static(b"3"), &v1)
            .await
            .is_err()
    );
    assert_eq!(store.get(&k).await.unwrap().as_ref(), b"2");
}

// --- lost responses -------------------------------------------------------------------
//
// A PUT can reach the store and its response be lost (a timeout, a dropped connection). A
// write then re-reads the object: when it already holds exactly what the write would store
// (its own PUT landed), the write ends without another PUT; when a newer object is there,
// the write applies itself to that object with a PUT conditional on it, so nothing newer
// is overwritten.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use object_store::ObjectStore;
use object_store::memory::InMemory;
use zarrflow::sel;
use zarrflow::store::StoreOptions;
use zarrflow::store::wrappers::{CountingStore, FaultConfig, FaultStore};

/// A 4×4 uint16 array of one shard of 2×2 inner chunks at `a`; `(0, 0)` written with 5
/// unless `absent` (then the shard does not exist).
async fn one_shard_array(store: &Store, absent: bool) {
    let spec = ArraySpec::new(vec![4, 4], "uint16")
        .shard_shape(vec![4, 4])
        .inner_chunk_shape(vec![2, 2]);
    let a = Array::create(
        store,
        &StoreKey::new("a").unwrap(),
        &spec,
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    if !absent {
        a.view()
            .get(&sel![0, 0])
            .unwrap()
            .write_scalar(5u16)
            .await
            .unwrap();
    }
}

async fn cells(store: &Store) -> Vec<u16> {
    let a = Array::open_in(store, &StoreKey::new("a").unwrap(), ArrayOptions::default())
        .await
        .unwrap();
    a.view().read::<u16>().await.unwrap().into_iter().collect()
}

fn over(backend: Arc<dyn ObjectStore>) -> Store {
    Store::from_object_store(backend, "", "memory://lost", StoreOptions::default()).unwrap()
}

/// Writes `(1, 1) = 9` through a store whose first PUT loses its response (`fault`) and
/// returns the requests that reached `base` (GETs, PUTs) and the cells after.
async fn write_through_lost_response(
    base: Arc<dyn ObjectStore>,
    fault: FaultConfig,
) -> (u64, u64, Vec<u16>) {
    let counting = CountingStore::new(base.clone());
    let store = over(Arc::new(FaultStore::new(counting.clone(), fault)));
    let a = Array::open_in(
        &store,
        &StoreKey::new("a").unwrap(),
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    counting.reset();
    a.view()
        .get(&sel![1, 1])
        .unwrap()
        .write_scalar(9u16)
        .await
        .expect("the write succeeds: its PUT landed");
    let c = counting.counts();
    (c.gets(), c.put, cells(&over(base)).await)
}

fn expected(absent: bool) -> Vec<u16> {
    let mut want = vec![0u16; 16];
    want[5] = 9;
    if !absent {
        want[0] = 5;
    }
    want
}

#[tokio::test]
async fn a_lost_put_response_is_resolved_by_reading_again_without_a_second_put() {
    for absent in [false, true] {
        // the error reaches the write: it reads the shard again, finds its bytes, stops
        let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        one_shard_array(&over(base.clone()), absent).await;
        let fault = FaultConfig::default().lose_put_response(1);
        let (gets, puts, got) = write_through_lost_response(base, fault).await;
        assert_eq!(got, expected(absent), "absent {absent}");
        assert_eq!((gets, puts), (2, 1), "absent {absent}: one PUT, read twice");

        // a retrying client sends the PUT again: the store refuses it (the object is no
        // longer the version read, or exists), and the write does not take that for a
        // conflict to redo: it reads again and finds its bytes
        let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        one_shard_array(&over(base.clone()), absent).await;
        let fault = FaultConfig::default().resend_lost_put(1);
        let (gets, puts, got) = write_through_lost_response(base, fault).await;
        assert_eq!(got, expected(absent), "absent {absent}, resent");
        assert_eq!(
            (gets, puts),
            (2, 2),
            "absent {absent}, resent: no third PUT"
        );
    }
}

#[tokio::test]
async fn a_lost_put_response_on_s3_is_resolved_without_a_second_write() {
    // the same on an S3 server that evaluates If-Match: the resent PUT gets a 412
    let server = MotoServer::start(&["bucket"]);
    let s3: Arc<dyn ObjectStore> = Arc::new(
        object_store::aws::AmazonS3Builder::new()
            .with_endpoint(&server.endpoint)
            .with_allow_http(true)
            .with_bucket_name("bucket")
            .with_access_key_id(common::moto::MOTO_ACCESS_KEY)
            .with_secret_access_key(common::moto::MOTO_SECRET_KEY)
            .with_region("us-east-1")
            .build()
            .unwrap(),
    );
    one_shard_array(&over(s3.clone()), false).await;
    let fault = FaultConfig::default().resend_lost_put(1);
    let (gets, puts, got) = write_through_lost_response(s3, fault).await;
    assert_eq!(got, expected(false));
    assert_eq!(
        (gets, puts),
        (2, 2),
        "the resent PUT is refused, no third PUT"
    );
}

/// Another writer's write, run once.
type Hook = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// Forwards everything to `inner`; the first PUT reaches `inner`, then `hook` runs (another
/// writer's write), then the PUT fails as if its response was lost.
struct LostResponseThen {
    inner: Arc<dyn ObjectStore>,
    hook: Mutex<Option<Hook>>,
}

put_wrapper!(LostResponseThen, |this, location, payload, opts| {
    let done = this.inner.put_opts(location, payload, opts).await?;
    let hook = this.hook.lock().unwrap().take();
    let Some(hook) = hook else { return Ok(done) };
    hook().await;
    Err(object_store::Error::Generic {
        store: "LostResponseThen",
        source: "the response was lost".into(),
    })
});

#[tokio::test]
async fn a_retry_after_a_lost_response_keeps_another_writers_newer_write() {
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    one_shard_array(&over(base.clone()), false).await;
    // between our PUT and its lost response, another writer writes (2, 2) = 4 on top
    let other = base.clone();
    let hook: Hook = Box::new(move || {
        Box::pin(async move {
            let a = Array::open_in(
                &over(other),
                &StoreKey::new("a").unwrap(),
                ArrayOptions::default(),
            )
            .await
            .unwrap();
            a.view()
                .get(&sel![2, 2])
                .unwrap()
                .write_scalar(4u16)
                .await
                .unwrap();
        })
    });
    let counting = CountingStore::new(base.clone());
    let lossy = LostResponseThen {
        inner: Arc::new(counting.clone()),
        hook: Mutex::new(Some(hook)),
    };
    let store = over(Arc::new(lossy));
    let a = Array::open_in(
        &store,
        &StoreKey::new("a").unwrap(),
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    a.view()
        .get(&sel![1, 1])
        .unwrap()
        .write_scalar(9u16)
        .await
        .unwrap();
    let mut want = expected(false);
    want[10] = 4;
    assert_eq!(cells(&over(base)).await, want, "both writes are stored");
    // ours: the shard read, the PUT whose response was lost, the shard read again (it
    // holds our cell and theirs: nothing to write)
    let c = counting.counts();
    assert_eq!(
        (c.get_range, c.get, c.put),
        (4, 2, 1),
        "the open's four ranged GETs (zarr.json, .zarray, .zgroup, .zattrs: the format is \
         probed; each capped), shard, shard again; one PUT"
    );
}

/// Forwards everything to `inner`; before each of its first `interfere` PUTs another writer
/// rewrites that object (a new version with the same bytes), so a conditional PUT finds it
/// changed. Counts the PUTs that reach it.
struct RewrittenBeforeEachPut {
    inner: Arc<dyn ObjectStore>,
    interfere: std::sync::atomic::AtomicUsize,
    puts: std::sync::atomic::AtomicUsize,
}

put_wrapper!(RewrittenBeforeEachPut, |this, location, payload, opts| {
    use object_store::ObjectStoreExt;
    use std::sync::atomic::Ordering::SeqCst;
    this.puts.fetch_add(1, SeqCst);
    let left = this.interfere.load(SeqCst);
    if left > 0 {
        this.interfere.store(left - 1, SeqCst);
        let current = this.inner.get(location).await?.bytes().await?;
        this.inner.put(location, current.into()).await?;
    }
    this.inner.put_opts(location, payload, opts).await
});

#[tokio::test]
async fn conflict_attempts_bound_the_attempts_of_a_write_that_keeps_losing() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    // (attempts, PUTs that lose, whether the write succeeds, PUTs sent)
    for (attempts, losing, succeeds, puts) in [
        (1, 1, false, 1),
        (3, 3, false, 3),
        (3, 2, true, 3),
        (32, 5, true, 6),
    ] {
        let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        one_shard_array(&over(base.clone()), false).await;
        let wrapper = Arc::new(RewrittenBeforeEachPut {
            inner: base.clone(),
            interfere: AtomicUsize::new(losing),
            puts: AtomicUsize::new(0),
        });
        let store = over(wrapper.clone());
        let options = if attempts == 32 {
            ArrayOptions::default()
        } else {
            ArrayOptions::default().with_conflict_attempts(attempts)
        };
        assert_eq!(options.conflict_attempts(), attempts);
        let a = Array::open_in(&store, &StoreKey::new("a").unwrap(), options)
            .await
            .unwrap();
        let result = a.view().get(&sel![1, 1]).unwrap().write_scalar(9u16).await;
        assert_eq!(
            wrapper.puts.load(SeqCst),
            puts,
            "attempts {attempts}, losing {losing}"
        );
        if succeeds {
            result.unwrap();
            assert_eq!(cells(&over(base)).await, expected(false));
        } else {
            match result {
                Err(ArrayError::Store(StoreError::Precondition { url })) => {
                    assert!(url.ends_with("a/c/0/0"), "{url}")
                }
                other => panic!("attempts {attempts}: expected a conflict, got {other:?}"),
            }
            let mut before = vec![0u16; 16];
            before[0] = 5;
            assert_eq!(
                cells(&over(base)).await,
                before,
                "a failed write stores nothing"
            );
        }
    }
    assert_eq!(
        ArrayOptions::default()
            .with_conflict_attempts(0)
            .conflict_attempts(),
        1
    );
}
