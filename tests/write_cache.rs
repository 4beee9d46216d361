//! The written-shard cache (`ArrayOptions::with_write_cache_bytes`, `src/array/written.rs`):
//! repeated partial writes of a shard into a remote store read it once, a write by anyone
//! else in between is never lost, and writes that make an entry stale forget it. Run on
//! object_store's in-memory store and on moto's S3 server, which checks `If-Match`, both
//! behind a request-counting wrapper.

mod common;

use std::sync::Arc;

use common::moto::{MOTO_ACCESS_KEY, MOTO_SECRET_KEY, MotoServer};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::metadata::ArraySpec;
use zarrflow::sel;
use zarrflow::store::wrappers::{CountingStore, FaultConfig, FaultStore};
use zarrflow::store::{Store, StoreKey, StoreOptions};

/// A 16×16 uint16 array of 8×8 shards of 4×4 inner chunks at `a`.
async fn create(base: &Arc<dyn ObjectStore>) {
    let spec = ArraySpec::new(vec![16, 16], "uint16")
        .shard_shape(vec![8, 8])
        .inner_chunk_shape(vec![4, 4]);
    Array::create(&over(base.clone()), &key(), &spec, ArrayOptions::default())
        .await
        .unwrap();
}

fn key() -> StoreKey {
    StoreKey::new("a").unwrap()
}

fn over(backend: Arc<dyn ObjectStore>) -> Store {
    Store::from_object_store(backend, "", "memory://cache", StoreOptions::default()).unwrap()
}

/// The array at `a` opened through a counting wrapper of `base`, with a write cache of
/// `budget` bytes.
async fn open_counted(
    base: &Arc<dyn ObjectStore>,
    budget: u64,
) -> (Array, CountingStore<Arc<dyn ObjectStore>>) {
    let options = ArrayOptions::default().with_write_cache_bytes(budget);
    open_counted_with(base, options, None).await
}

/// The array at `a` opened with `options` through a counting wrapper of `base`, behind
/// `fault` when given (the counts are of the requests that reach `base`).
async fn open_counted_with(
    base: &Arc<dyn ObjectStore>,
    options: ArrayOptions,
    fault: Option<FaultConfig>,
) -> (Array, CountingStore<Arc<dyn ObjectStore>>) {
    let counting = CountingStore::new(base.clone());
    let store = match fault {
        Some(fault) => over(Arc::new(FaultStore::new(counting.clone(), fault))),
        None => over(Arc::new(counting.clone())),
    };
    (
        Array::open_in(&store, &key(), options).await.unwrap(),
        counting,
    )
}

async fn set(a: &Array, i: u64, j: u64, v: u16) {
    a.view()
        .get(&sel![i, j])
        .unwrap()
        .write_scalar(v)
        .await
        .unwrap();
}

/// The whole array, read through a handle of its own (no cache).
async fn cells(base: &Arc<dyn ObjectStore>) -> Vec<u16> {
    let a = Array::open_in(&over(base.clone()), &key(), ArrayOptions::default())
        .await
        .unwrap();
    a.view().read::<u16>().await.unwrap().into_iter().collect()
}

fn moto_s3(server: &MotoServer) -> Arc<dyn ObjectStore> {
    Arc::new(
        object_store::aws::AmazonS3Builder::new()
            .with_endpoint(&server.endpoint)
            .with_allow_http(true)
            .with_bucket_name("bucket")
            .with_access_key_id(MOTO_ACCESS_KEY)
            .with_secret_access_key(MOTO_SECRET_KEY)
            .with_region("us-east-1")
            .build()
            .unwrap(),
    )
}

/// The backends every case runs on: a fresh in-memory store and a fresh prefix of moto's
/// S3 server.
fn backends(server: &MotoServer, case: &str) -> Vec<(&'static str, Arc<dyn ObjectStore>)> {
    let s3 = moto_s3(server);
    let prefixed: Arc<dyn ObjectStore> = Arc::new(object_store::prefix::PrefixStore::new(
        s3,
        format!("write_cache/{case}"),
    ));
    vec![("memory", Arc::new(InMemory::new())), ("s3", prefixed)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_partial_writes_of_a_shard_read_it_once() {
    let server = MotoServer::start(&["bucket"]);
    for (name, base) in backends(&server, "repeated") {
        create(&base).await;
        let (a, counting) = open_counted(&base, 1 << 20).await;
        counting.reset();
        for i in 0..8 {
            set(&a, i, i, i as u16 + 1).await;
        }
        let c = counting.counts();
        // the first write finds no shard; the other seven start from what the previous
        // one stored
        assert_eq!((c.gets(), c.put), (1, 8), "{name}");
        let mut want = vec![0u16; 256];
        for i in 0..8 {
            want[i * 16 + i] = i as u16 + 1;
        }
        assert_eq!(cells(&base).await, want, "{name}");

        // without a budget (the default) every partial write reads its shard
        let (b, counting) = open_counted(&base, 0).await;
        counting.reset();
        for i in 0..4 {
            set(&b, i, 7 - i, 50).await;
        }
        let c = counting.counts();
        assert_eq!((c.gets(), c.put), (4, 4), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_writers_write_in_between_is_kept() {
    let server = MotoServer::start(&["bucket"]);
    for (name, base) in backends(&server, "between") {
        create(&base).await;
        let (a, counting) = open_counted(&base, 1 << 20).await;
        set(&a, 0, 0, 1).await;
        // another handle (another process, as far as the store can tell) writes the shard
        let (b, _) = open_counted(&base, 1 << 20).await;
        set(&b, 1, 1, 2).await;
        counting.reset();
        set(&a, 2, 2, 3).await;
        let c = counting.counts();
        // a's PUT on the version it remembered is refused; a reads the shard and writes
        // again on the version read
        assert_eq!((c.gets(), c.put), (1, 2), "{name}");
        let got = cells(&base).await;
        assert_eq!(
            (got[0], got[17], got[34]),
            (1, 2, 3),
            "{name}: no write lost"
        );
        // and b, whose entry is now stale too, keeps a's write
        set(&b, 3, 3, 4).await;
        let got = cells(&base).await;
        assert_eq!((got[0], got[17], got[34], got[51]), (1, 2, 3, 4), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_empties_a_remembered_shard_never_deletes_another_writers_values() {
    // a's remembered shard holds only its cell: writing the fill value there empties it,
    // but the stored shard has b's cell too, and a delete cannot be made conditional
    let server = MotoServer::start(&["bucket"]);
    for (name, base) in backends(&server, "emptied") {
        create(&base).await;
        let (a, counting) = open_counted(&base, 1 << 20).await;
        let (b, _) = open_counted(&base, 0).await;
        set(&a, 0, 0, 1).await;
        set(&b, 5, 5, 2).await;
        counting.reset();
        set(&a, 0, 0, 0).await;
        let got = cells(&base).await;
        assert_eq!((got[0], got[5 * 16 + 5]), (0, 2), "{name}: b's cell kept");
        let c = counting.counts();
        assert_eq!(
            (c.gets(), c.put, c.delete),
            (1, 1, 0),
            "{name}: read, then PUT"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_entry_is_not_a_lost_race() {
    // with a single attempt (no retry after a lost race) a write from a stale entry still
    // succeeds: the refused PUT only sends it back to read the shard
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    create(&base).await;
    let options = ArrayOptions::default()
        .with_write_cache_bytes(1 << 20)
        .with_conflict_attempts(1);
    let (a, counting) = open_counted_with(&base, options, None).await;
    let (b, _) = open_counted(&base, 0).await;
    set(&a, 0, 0, 1).await;
    set(&b, 1, 1, 2).await;
    counting.reset();
    set(&a, 2, 2, 3).await;
    let c = counting.counts();
    assert_eq!((c.gets(), c.put), (1, 2));
    let got = cells(&base).await;
    assert_eq!((got[0], got[17], got[34]), (1, 2, 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn covered_writes_and_deletes_forget_their_shard() {
    let server = MotoServer::start(&["bucket"]);
    for (name, base) in backends(&server, "forget") {
        create(&base).await;
        let (a, counting) = open_counted(&base, 1 << 20).await;
        let (b, _) = open_counted(&base, 0).await;
        set(&a, 0, 0, 1).await;
        // covering the whole shard needs no read, and leaves nothing remembered
        a.view()
            .get(&sel![0..8, 0..8])
            .unwrap()
            .write_scalar(9u16)
            .await
            .unwrap();
        set(&b, 1, 1, 2).await;
        counting.reset();
        set(&a, 2, 2, 3).await;
        let c = counting.counts();
        assert_eq!((c.gets(), c.put), (1, 1), "{name}: read, no refused PUT");
        let got = cells(&base).await;
        assert_eq!((got[0], got[17], got[34]), (9, 2, 3), "{name}");

        // a shard left all fill value is deleted, and forgotten
        a.view()
            .get(&sel![0..8, 0..8])
            .unwrap()
            .write_scalar(0u16)
            .await
            .unwrap();
        counting.reset();
        set(&a, 3, 3, 4).await;
        let c = counting.counts();
        assert_eq!(
            (c.gets(), c.put),
            (1, 1),
            "{name}: the deleted shard is read"
        );
        let got = cells(&base).await;
        assert_eq!(got.iter().filter(|&&v| v != 0).count(), 1, "{name}");
        assert_eq!(got[51], 4, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_beyond_a_quarter_of_the_budget_are_not_kept() {
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    create(&base).await;
    // each shard stored here is a few hundred bytes: a 64-byte budget keeps none
    let (a, counting) = open_counted(&base, 64).await;
    counting.reset();
    for i in 0..4 {
        set(&a, i, 0, 1).await;
    }
    let c = counting.counts();
    assert_eq!((c.gets(), c.put), (4, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_cannot_check_conditions_never_writes_from_memory() {
    // object_store's local filesystem refuses `If-Match`: a write from a remembered shard
    // must not fall back to an unconditional PUT, which could overwrite a newer shard
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    create(&base).await;
    let (a, counting) = open_counted(&base, 1 << 20).await;
    set(&a, 0, 0, 1).await; // creates the shard: remembered
    let (b, _) = open_counted(&base, 0).await;
    set(&b, 1, 1, 2).await; // unconditional (the store cannot check), not seen by a
    counting.reset();
    set(&a, 2, 2, 3).await;
    let got = cells(&base).await;
    assert_eq!((got[0], got[17], got[34]), (1, 2, 3), "b's write kept");
    let c = counting.counts();
    assert_eq!(
        c.gets(),
        1,
        "the shard is read before the unconditional PUT"
    );
    // from then on the store is known to write unconditionally: nothing is recalled
    counting.reset();
    set(&a, 3, 3, 4).await;
    assert_eq!(counting.counts().gets(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_whose_outcome_is_unknown_leaves_nothing_remembered() {
    // the second PUT through a's store lands but its response is lost: the write reads the
    // shard, finds its bytes and ends; its shard is then not remembered (nothing was seen
    // to succeed), so the next write reads it again
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    create(&base).await;
    let options = ArrayOptions::default().with_write_cache_bytes(1 << 20);
    let fault = FaultConfig::default().lose_put_response(2);
    let (a, counting) = open_counted_with(&base, options, Some(fault)).await;
    set(&a, 0, 0, 1).await; // PUT 1: remembered
    counting.reset();
    set(&a, 1, 1, 2).await; // PUT 2 from the entry, its response lost: read to verify
    let c = counting.counts();
    assert_eq!(
        (c.gets(), c.put),
        (1, 1),
        "one PUT, then one read that finds it"
    );
    counting.reset();
    set(&a, 2, 2, 3).await;
    let c = counting.counts();
    assert_eq!((c.gets(), c.put), (1, 1), "read again: nothing remembered");
    let got = cells(&base).await;
    assert_eq!((got[0], got[17], got[34]), (1, 2, 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_put_from_an_entry_is_not_stored_twice() {
    // the second PUT (from the entry) lands, its response is lost and the client sends it
    // again: the resend is refused (the shard is no longer the remembered version), and
    // the write reads the shard, finds its own bytes and stores nothing more
    let base: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    create(&base).await;
    let options = ArrayOptions::default().with_write_cache_bytes(1 << 20);
    let fault = FaultConfig::default().resend_lost_put(2);
    let (a, counting) = open_counted_with(&base, options, Some(fault)).await;
    set(&a, 0, 0, 1).await;
    counting.reset();
    set(&a, 1, 1, 2).await;
    let c = counting.counts();
    assert_eq!(
        (c.gets(), c.put),
        (1, 2),
        "the PUT and its resend, one read, no third PUT"
    );
    let got = cells(&base).await;
    assert_eq!((got[0], got[17]), (1, 2));
}
