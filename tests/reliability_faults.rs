//! Failing stores (`FaultStore`: fail the N-th request, fail a seeded fraction, truncate
//! bodies, refuse suffix ranges; `with_latency`): a failed read is an error with no result;
//! a failed write leaves every object either as it was or as the completed write leaves it
//! (a shard is replaced whole or not at all) and running the write again completes it; the
//! retry policy of remote stores is an option.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ndarray::{ArrayD, IxDyn};
use object_store::ObjectStore;
use object_store::memory::InMemory;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::index::{Dialect, Selection, SelectionMode};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::wrappers::{CountingStore, FaultConfig, FaultStore, with_latency};
use zarrflow::store::{Store, StoreError, StoreKey, StoreOptions};

const N: usize = 12;

fn store_over(backend: Arc<dyn ObjectStore>) -> Store {
    Store::from_object_store(backend, "", "memory://faults", StoreOptions::default()).unwrap()
}

fn faulty(base: &Arc<InMemory>, cfg: FaultConfig) -> Store {
    store_over(Arc::new(FaultStore::new(base.clone(), cfg)))
}

async fn snapshot(store: &Store) -> BTreeMap<String, Bytes> {
    let mut out = BTreeMap::new();
    for k in store.list_prefix(&StoreKey::root()).await.unwrap() {
        let v = store.get(&k).await.unwrap();
        out.insert(k.as_str().to_string(), v);
    }
    out
}

fn view(array: &Array, sel: &str) -> zarrflow::array::ArrayView {
    array
        .view()
        .select(
            &Selection::parse(sel).unwrap(),
            SelectionMode::Basic,
            Dialect::Positional,
        )
        .unwrap()
}

/// A 12×12 uint16 array, shards 4×4 of 2×2 inner chunks (crc32c index, zstd chunks); the
/// top 8 rows written with `r * 12 + c + 1`, shards of the bottom row absent. Returns the
/// model (C order, fill 0).
async fn setup(base: &Arc<InMemory>) -> Vec<u16> {
    let store = store_over(base.clone());
    let spec = ArraySpec::new(vec![N as u64, N as u64], "uint16")
        .shard_shape(vec![4, 4])
        .inner_chunk_shape(vec![2, 2]);
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    let values = ArrayD::from_shape_fn(IxDyn(&[8, N]), |i| (i[0] * N + i[1] + 1) as u16);
    view(&array, "0:8, :").write(&values.view()).await.unwrap();
    let mut model = vec![0u16; N * N];
    for r in 0..8 {
        for c in 0..N {
            model[r * N + c] = (r * N + c + 1) as u16;
        }
    }
    model
}

/// The update under test, as one batch: a partial write in shards (0,0) and (0,1) (read,
/// modify, conditional PUT), a whole-shard write of (1,2) (no read), a partial write into
/// the absent shard (2,0) (create-only PUT), and fill over the whole shard (1,0) (DELETE).
async fn update(array: &Array) -> Result<(), ArrayError> {
    let mut batch = array.batch();
    let v = view(array, "1:3, 3:6");
    batch.stage(
        &v,
        &ArrayD::from_shape_fn(IxDyn(&[2, 3]), |i| 1000 + (i[0] * 3 + i[1]) as u16).view(),
    )?;
    batch.stage_scalar(&view(array, "4:8, 8:12"), 7u16)?;
    batch.stage_scalar(&view(array, "9, 1"), 9u16)?;
    batch.stage_scalar(&view(array, "4:8, 0:4"), 0u16)?;
    batch.commit().await
}

fn apply_update(model: &mut [u16]) {
    for r in 1..3 {
        for c in 3..6 {
            model[r * N + c] = 1000 + ((r - 1) * 3 + (c - 3)) as u16;
        }
    }
    for r in 4..8 {
        for c in 8..12 {
            model[r * N + c] = 7;
        }
        for c in 0..4 {
            model[r * N + c] = 0;
        }
    }
    model[9 * N + 1] = 9;
}

async fn read_all(store: &Store) -> Vec<u16> {
    let a = Array::open_in(store, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap();
    a.view().read::<u16>().await.unwrap().into_iter().collect()
}

/// Requests issued by `open + f` on a copy of `base`.
async fn count_requests<F, Fut>(base: &Arc<InMemory>, f: F) -> u64
where
    F: FnOnce(Array) -> Fut,
    Fut: std::future::Future<Output = Result<(), ArrayError>>,
{
    let counting = CountingStore::new(base.fork());
    let store = store_over(Arc::new(counting.clone()));
    let a = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap();
    f(a).await.unwrap();
    counting.counts().total()
}

#[tokio::test]
async fn a_failed_write_replaces_each_shard_whole_or_not_at_all_and_a_retry_completes_it() {
    let base = Arc::new(InMemory::new());
    let mut model = setup(&base).await;
    let before = snapshot(&store_over(base.clone())).await;
    // the state the update leaves when nothing fails
    let done = Arc::new(base.fork());
    {
        let store = store_over(done.clone());
        let a = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
            .await
            .unwrap();
        update(&a).await.unwrap();
    }
    let after = snapshot(&store_over(done.clone())).await;
    assert!(after.len() > 4 && before.len() > 4);
    assert_ne!(before, after);
    apply_update(&mut model);
    assert_eq!(read_all(&store_over(done.clone())).await, model);

    let total = count_requests(&base, |a| async move { update(&a).await }).await;
    assert!(total >= 8, "{total} requests");
    let (mut failed, mut recovered) = (0, 0);
    for n in 1..=total {
        let copy = Arc::new(base.fork());
        let store = faulty(&copy, FaultConfig::default().fail_nth(n));
        let outcome = match Array::open_in(&store, &StoreKey::root(), ArrayOptions::default()).await
        {
            Ok(a) => update(&a).await,
            Err(e) => Err(e),
        };
        match outcome {
            Err(err) => {
                assert!(err.to_string().contains("injected fault"), "{n}: {err}");
                failed += 1;
            }
            // a failed PUT or DELETE may have been carried out (a lost response): the write
            // reads the shard again and completes, exactly
            Ok(()) => {
                assert_eq!(
                    snapshot(&store_over(copy.clone())).await,
                    after,
                    "request {n}"
                );
                recovered += 1;
            }
        }
        // every object is as before or as after: whole shards, never a mixture
        let now = snapshot(&store_over(copy.clone())).await;
        for k in before.keys().chain(after.keys()).chain(now.keys()) {
            let (b, a, x) = (before.get(k), after.get(k), now.get(k));
            assert!(
                x == b || x == a,
                "request {n}: {k} is neither the old nor the new object"
            );
        }
        // and running the update again completes it
        let a = Array::open_in(
            &store_over(copy.clone()),
            &StoreKey::root(),
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        update(&a).await.unwrap();
        assert_eq!(
            read_all(&store_over(copy.clone())).await,
            model,
            "request {n}"
        );
        assert_eq!(snapshot(&store_over(copy)).await, after, "request {n}");
    }
    eprintln!(
        "{total} failure points of a {total}-request update checked: {failed} failed, \
         {recovered} recovered after a failed PUT or DELETE"
    );
    assert!(
        failed > 0 && recovered > 0,
        "{failed} failed, {recovered} recovered"
    );
}

#[tokio::test]
async fn a_failed_read_is_an_error_and_a_retry_reads_everything() {
    let base = Arc::new(InMemory::new());
    let model = setup(&base).await;
    let (mut failed, mut recovered) = (0, 0);
    for sel in ["...", "1:7, 2:11", "5, 5", "0:12:5, ::-3"] {
        let total = count_requests(&base, |a| async move {
            view(&a, sel).read_bytes().await.map(drop)
        })
        .await;
        for cache in [0u64, 1 << 20] {
            for n in 1..=total {
                let store = faulty(&base, FaultConfig::default().fail_nth(n));
                let opts = ArrayOptions::default().with_index_cache_bytes(cache);
                let a = match Array::open_in(&store, &StoreKey::root(), opts).await {
                    Ok(a) => a,
                    Err(e) => {
                        // the open's concurrent GETs of zarr.json, .zarray and .zgroup
                        // (a failed .zattrs probe does not matter to a v3 array)
                        assert!(n <= 3, "{n}: {e}");
                        continue;
                    }
                };
                let full = ArrayD::from_shape_vec(IxDyn(&[N, N]), model.clone()).unwrap();
                let want = view(&a, sel).transform().gather_from(&full).unwrap();
                match view(&a, sel).read::<u16>().await {
                    Err(err) => {
                        assert!(err.to_string().contains("injected fault"), "{err}");
                        failed += 1;
                    }
                    // a failed suffix request falls back to HEAD + range (documented): the
                    // read then completes, and must be exact
                    Ok(got) => {
                        assert_eq!(got, want, "[{sel}] request {n} recovered with wrong values");
                        recovered += 1;
                    }
                }
                // the fault store fails only the N-th request: the same array reads again
                let got = view(&a, sel).read::<u16>().await.unwrap();
                assert_eq!(got, want, "[{sel}] after a failure at request {n}");
            }
        }
    }
    eprintln!("{failed} failed reads, {recovered} recovered by the suffix fallback");
    assert!(failed > 20, "{failed} failed, {recovered} recovered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_faults_with_a_fixed_seed_and_latency_never_lose_a_write() {
    for seed in [1u64, 7, 42] {
        let base = Arc::new(InMemory::new());
        let mut model = setup(&base).await;
        let cfg = FaultConfig::default().fail_fraction(0.25, seed);
        let store = store_over(Arc::new(with_latency(
            FaultStore::new(base.clone(), cfg),
            Duration::from_millis(1),
        )));
        let mut array = None;
        let (mut failures, mut attempts) = (0, 0);
        for step in 0..24usize {
            let (r, c) = ((step * 5) % N, (step * 7) % N);
            let (h, w) = (1 + step % 4, 1 + (step / 2) % 5);
            let (r1, c1) = ((r + h).min(N), (c + w).min(N));
            let value = (step * 31 % 500) as u16;
            let sel = format!("{r}:{r1}, {c}:{c1}");
            loop {
                attempts += 1;
                assert!(attempts < 2000, "no progress");
                if array.is_none() {
                    match Array::open_in(&store, &StoreKey::root(), ArrayOptions::default()).await {
                        Ok(a) => array = Some(a),
                        Err(_) => {
                            failures += 1;
                            continue;
                        }
                    }
                }
                let Some(a) = &array else { continue };
                match view(a, &sel).write_scalar(value).await {
                    Ok(()) => break,
                    Err(e) => {
                        assert!(e.to_string().contains("injected fault"), "{e}");
                        failures += 1;
                    }
                }
            }
            for rr in r..r1 {
                for cc in c..c1 {
                    model[rr * N + cc] = value;
                }
            }
            // reads under faults: an error or exactly the model
            if let Some(a) = &array
                && let Ok(got) = a.view().read::<u16>().await
            {
                assert_eq!(
                    got.into_iter().collect::<Vec<_>>(),
                    model,
                    "seed {seed} step {step}"
                );
            }
        }
        assert!(
            failures > 5,
            "seed {seed}: only {failures} injected failures"
        );
        assert_eq!(
            read_all(&store_over(base.clone())).await,
            model,
            "seed {seed}"
        );
        eprintln!("seed {seed}: {failures} injected failures over {attempts} attempts");
    }
}

#[tokio::test]
async fn truncated_bodies_are_errors_never_values() {
    let base = Arc::new(InMemory::new());
    let store = store_over(base.clone());
    // shards of 32×32 uint16 with raw inner chunks: 2 KiB per shard, zarr.json < 1 KiB
    let spec = ArraySpec::new(vec![64, 64], "uint16")
        .shard_shape(vec![32, 32])
        .inner_chunk_shape(vec![4, 4])
        .codecs([zarrflow::metadata::CodecSpec::bytes()]);
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    let values = ArrayD::from_shape_fn(IxDyn(&[64, 64]), |i| (i[0] * 64 + i[1]) as u16);
    array.view().write(&values.view()).await.unwrap();
    let zarr_json = store
        .get(&StoreKey::new("zarr.json").unwrap())
        .await
        .unwrap();
    assert!(zarr_json.len() < 1500);
    let cut = faulty(&base, FaultConfig::default().truncate_bodies_to(1500));
    let a = Array::open_in(&cut, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap();
    // whole shards (2 KiB and more) come back short: an error naming the object
    for sel in ["...", "0:32, 0:32"] {
        let err = view(&a, sel).read::<u16>().await.unwrap_err();
        assert!(
            matches!(err, ArrayError::Store(StoreError::ShortRead { .. })),
            "{sel}: {err:?}"
        );
        assert!(err.to_string().contains("/c/"), "{err}");
    }
    // small ranged reads (index, one inner chunk) are complete and exact
    let got = view(&a, "5, 3:9").read::<u16>().await.unwrap();
    assert_eq!(
        got.into_iter().collect::<Vec<_>>(),
        (323..329).collect::<Vec<u16>>()
    );
    // and suffix refusals fall back to HEAD + range
    let refusing = faulty(&base, FaultConfig::default().refuse_suffix(true));
    let a = Array::open_in(&refusing, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap();
    let got = view(&a, "40, 50").read::<u16>().await.unwrap();
    assert_eq!(got.into_iter().next(), Some(40 * 64 + 50));
}

#[tokio::test]
async fn retry_settings_of_remote_stores_are_options() {
    // nothing listens on port 9 of 127.0.0.1: every request is a connection error
    let base = StoreOptions::default()
        .with_backend_option("aws_endpoint", "http://127.0.0.1:9")
        .with_backend_option("aws_allow_http", "true")
        .with_backend_option("aws_access_key_id", "k")
        .with_backend_option("aws_secret_access_key", "s")
        .with_backend_option("aws_region", "us-east-1");
    assert!(base.retry.is_none());
    let opts = base.with_retries(0, Duration::from_secs(1));
    assert_eq!(opts.retry.as_ref().map(|r| r.max_retries), Some(0));
    let store = Store::open("s3://bucket/prefix", opts).unwrap();
    let start = Instant::now();
    let err = store
        .get(&StoreKey::new("zarr.json").unwrap())
        .await
        .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(
        err.to_string().contains("s3://bucket/prefix/zarr.json"),
        "{err}"
    );
    // the same for the other remote schemes (construction only)
    for url in ["gs://bucket/p", "az://container/p", "https://example.com/p"] {
        let o = StoreOptions::default().with_retries(3, Duration::from_secs(10));
        let o = match url {
            u if u.starts_with("gs") => o.with_backend_option("google_service_account", "{}"),
            u if u.starts_with("az") => o.with_backend_option("azure_storage_account_name", "acct"),
            _ => o,
        };
        if let Err(e) = Store::open(url, o) {
            // credential checks may refuse construction; never the retry option itself
            assert!(!e.to_string().contains("retry"), "{url}: {e}");
        }
    }
}
