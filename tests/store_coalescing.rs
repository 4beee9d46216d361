//! Request counts through the counting wrapper: coalescing, gap threshold, suffix fallback,
//! and fault/latency injection.

use bytes::Bytes;
use object_store::memory::InMemory;
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarrflow::store::wrappers::{
    CountingStore, FaultConfig, FaultStore, RequestKind, with_latency,
};
use zarrflow::store::{Store, StoreError, StoreKey, StoreOptions};

fn k(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

async fn setup(opts: StoreOptions) -> (Store, CountingStore<InMemory>) {
    let counting = CountingStore::new(InMemory::new());
    let store =
        Store::from_object_store(Arc::new(counting.clone()), "arr", "memory://test", opts).unwrap();
    store
        .put(&k("c/0/0"), Bytes::from(vec![7u8; 10_000]))
        .await
        .unwrap();
    counting.reset();
    (store, counting)
}

#[tokio::test]
async fn adjacent_ranges_coalesce_into_one_request() {
    let (store, counting) = setup(StoreOptions::default().with_coalesce(0, 1 << 20)).await;
    let ranges = vec![0..100, 100..250, 250..400, 400..401];
    let got = store.get_ranges(&k("c/0/0"), &ranges).await.unwrap();
    assert_eq!(
        got.iter().map(Bytes::len).collect::<Vec<_>>(),
        vec![100, 150, 150, 1]
    );
    let c = counting.counts();
    assert_eq!(
        (c.get_range, c.head, c.get, c.total()),
        (1, 0, 0, 1),
        "{:?}",
        counting.log()
    );
    assert_eq!(c.bytes_read, 401);
    assert_eq!(counting.log()[0].path, "arr/c/0/0");
}

#[tokio::test]
async fn gap_threshold_is_respected() {
    // gap 100: ranges 50 apart merge, ranges 150 apart do not
    let (store, counting) = setup(StoreOptions::default().with_coalesce(100, 1 << 20)).await;
    store
        .get_ranges(&k("c/0/0"), &[0..100, 150..200, 350..400])
        .await
        .unwrap();
    assert_eq!(counting.counts().get_range, 2, "{:?}", counting.log());
    counting.reset();
    // gap 0 (VirtualiZarr's finding for high-latency HTTP): one request per non-touching range
    let (store, counting) = setup(StoreOptions::default().with_coalesce(0, 1 << 20)).await;
    store
        .get_ranges(&k("c/0/0"), &[0..100, 150..200, 350..400])
        .await
        .unwrap();
    assert_eq!(counting.counts().get_range, 3);
}

#[tokio::test]
async fn size_cap_is_respected() {
    let (store, counting) = setup(StoreOptions::default().with_coalesce(1 << 20, 1000)).await;
    let ranges: Vec<_> = (0..10u64).map(|i| i * 500..i * 500 + 500).collect();
    let got = store.get_ranges(&k("c/0/0"), &ranges).await.unwrap();
    assert_eq!(got.len(), 10);
    assert_eq!(counting.counts().get_range, 5);
}

#[tokio::test]
async fn suffix_read_is_one_request_without_head() {
    let (store, counting) = setup(StoreOptions::default()).await;
    let tail = store.get_suffix(&k("c/0/0"), 68).await.unwrap();
    assert_eq!((tail.bytes.len(), tail.object_size), (68, 10_000));
    let c = counting.counts();
    assert_eq!((c.get_range, c.head), (1, 0));
    assert!(matches!(
        counting.log()[0].range,
        Some(object_store::GetRange::Suffix(68))
    ));
}

#[tokio::test]
async fn suffix_fallback_when_refused() {
    let counting = CountingStore::new(FaultStore::new(
        InMemory::new(),
        FaultConfig::default().refuse_suffix(true),
    ));
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "memory://",
        StoreOptions::default(),
    )
    .unwrap();
    let data: Vec<u8> = (0..200u8).collect();
    store.put(&k("s"), Bytes::from(data.clone())).await.unwrap();
    counting.reset();
    let tail = store.get_suffix(&k("s"), 68).await.unwrap();
    assert_eq!(&tail.bytes[..], &data[132..]);
    assert_eq!(tail.object_size, 200);
    let kinds: Vec<_> = counting.log().iter().map(|r| r.kind).collect();
    // refused suffix, then HEAD + bounded range
    assert_eq!(
        kinds,
        vec![
            RequestKind::GetRange,
            RequestKind::Head,
            RequestKind::GetRange
        ]
    );
    assert!(
        matches!(counting.log()[2].range, Some(object_store::GetRange::Bounded(ref r)) if *r == (132..200))
    );
    // the refusal is remembered: no more suffix attempts on this store
    counting.reset();
    store.get_suffix(&k("s"), 10).await.unwrap();
    let kinds: Vec<_> = counting.log().iter().map(|r| r.kind).collect();
    assert_eq!(kinds, vec![RequestKind::Head, RequestKind::GetRange]);
}

#[tokio::test]
async fn suffix_disabled_by_option() {
    let (store, counting) = setup(StoreOptions::default().with_suffix_requests(false)).await;
    store.get_suffix(&k("c/0/0"), 16).await.unwrap();
    let c = counting.counts();
    assert_eq!((c.head, c.get_range), (1, 1));
}

#[tokio::test]
async fn fail_nth_request() {
    let fault = FaultStore::new(InMemory::new(), FaultConfig::default().fail_nth(3));
    let store = Store::from_object_store(Arc::new(fault), "", "memory://", StoreOptions::default())
        .unwrap();
    store.put(&k("a"), Bytes::from_static(b"1")).await.unwrap();
    store.get(&k("a")).await.unwrap();
    let err = store.get(&k("a")).await.unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    assert!(err.to_string().contains("injected fault on request 3"));
    store.get(&k("a")).await.unwrap();
}

#[tokio::test]
async fn fail_fraction_is_deterministic() {
    async fn pattern(seed: u64) -> Vec<bool> {
        let fault = FaultStore::new(
            InMemory::new(),
            FaultConfig::default().fail_fraction(0.3, seed),
        );
        let store =
            Store::from_object_store(Arc::new(fault), "", "memory://", StoreOptions::default())
                .unwrap();
        let mut out = Vec::new();
        for _ in 0..50 {
            out.push(store.get_opt(&k("x")).await.is_err());
        }
        out
    }
    let a = pattern(42).await;
    assert_eq!(a, pattern(42).await);
    let fails = a.iter().filter(|&&f| f).count();
    assert!((5..=25).contains(&fails), "{fails}");
    assert_ne!(a, pattern(7).await);
}

#[tokio::test]
async fn truncated_bodies_are_detected() {
    let fault = FaultStore::new(
        InMemory::new(),
        FaultConfig::default().truncate_bodies_to(10),
    );
    let store = Store::from_object_store(Arc::new(fault), "", "memory://", StoreOptions::default())
        .unwrap();
    store
        .put(&k("a"), Bytes::from(vec![1u8; 100]))
        .await
        .unwrap();
    let err = store.get(&k("a")).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::ShortRead {
                expected: 100,
                got: 10,
                ..
            }
        ),
        "{err:?}"
    );
    let err = store.get_range(&k("a"), 0..50).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::ShortRead {
                expected: 50,
                got: 10,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("memory://a") || err.to_string().contains("memory:///a"),
        "{err}"
    );
}

#[tokio::test]
async fn latency_injection_and_bounded_concurrency() {
    let slow = with_latency(InMemory::new(), Duration::from_millis(50));
    let counting = CountingStore::new(slow);
    let opts = StoreOptions::default()
        .with_coalesce(0, 1 << 20)
        .with_concurrency(4);
    let store =
        Store::from_object_store(Arc::new(counting.clone()), "", "memory://", opts).unwrap();
    store
        .put(&k("a"), Bytes::from(vec![0u8; 1000]))
        .await
        .unwrap();
    // 8 separate ranges, 4 at a time: about 2 × 50 ms, far from 8 × 50 ms
    let ranges: Vec<_> = (0..8u64).map(|i| i * 100..i * 100 + 10).collect();
    let t = Instant::now();
    store.get_ranges(&k("a"), &ranges).await.unwrap();
    let el = t.elapsed();
    assert!(el >= Duration::from_millis(100), "{el:?}");
    assert!(el < Duration::from_millis(350), "{el:?}");
    assert_eq!(counting.counts().get_range, 8);
}
