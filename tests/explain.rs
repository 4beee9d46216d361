//! `ArrayView::explain_read` / `explain_write` against what the operation then does, request
//! by request, through the counting store wrapper: over the local filesystem with the
//! fixtures of test-data (whole-shard, partial-shard, missing-shard, index-at-start,
//! pipeline-sharded, unsharded and gather reads, with a cold and a warm index cache), and
//! over memory for writes (a covered shard skips its read, a partial shard is read once).

mod common;

use std::sync::Arc;

use common::fixtures::{key, test_data};
use ndarray::{ArrayD, IxDyn};
use object_store::GetRange;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use zarrflow::array::{
    Array, ArrayOptions, ArrayView, IndexSource, Method, Purpose, ReadExplain, ReadStrategy,
    Request,
};
use zarrflow::metadata::ArraySpec;
use zarrflow::sel;
use zarrflow::store::wrappers::{
    CountingStore, FaultConfig, FaultStore, RequestKind, RequestRecord,
};
use zarrflow::store::{Store, StoreOptions};

fn local_store() -> (Store, CountingStore<LocalFileSystem>) {
    let (dir, _) = test_data().expect("test-data");
    let counting = CountingStore::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "file://test-data",
        StoreOptions::default(),
    )
    .unwrap();
    (store, counting)
}

async fn open(store: &Store, path: &str, options: ArrayOptions) -> Array {
    Array::open_in(store, &key(path), options).await.unwrap()
}

/// A request as the counting store records it: kind, path, range.
type Seen = (String, String, Option<String>);

fn seen_of_record(r: &RequestRecord) -> Seen {
    let range = r.range.as_ref().map(|g| match g {
        GetRange::Bounded(b) => format!("{}..{}", b.start, b.end),
        GetRange::Suffix(n) => format!("-{n}"),
        GetRange::Offset(o) => format!("{o}.."),
    });
    (format!("{:?}", r.kind), r.path.clone(), range)
}

/// The keys of explained requests are relative to the store's root, as the counting store
/// records them (these stores have no prefix).
fn seen_of_request(r: &Request) -> Seen {
    let kind = match r.method {
        Method::Get => RequestKind::Get,
        Method::GetRange | Method::GetSuffix => RequestKind::GetRange,
        Method::Head => RequestKind::Head,
        _ => RequestKind::Put,
    };
    let range = match (r.range, r.suffix) {
        (Some([s, e]), _) => Some(format!("{s}..{e}")),
        (None, Some(n)) => Some(format!("-{n}")),
        (None, None) => None,
    };
    (format!("{kind:?}"), r.key.clone(), range)
}

fn sorted(mut v: Vec<Seen>) -> Vec<Seen> {
    v.sort();
    v
}

/// Explains a read of `view`, checks that explaining made only the metadata requests it
/// lists, then reads and checks the read made exactly the requests explained, with the
/// bytes explained. Returns the explanation.
async fn explain_then_read<T: ObjectStoreCounts>(view: &ArrayView, counting: &T) -> ReadExplain {
    counting.reset_counts();
    let explain = view.explain_read().await.unwrap();
    let made = counting.records();
    assert_eq!(
        sorted(made.iter().map(seen_of_record).collect()),
        sorted(
            explain
                .explain_requests
                .iter()
                .map(seen_of_request)
                .collect()
        ),
        "explaining made other requests than it lists"
    );
    assert!(
        made.iter().all(|r| r.kind != RequestKind::Get),
        "explaining fetched a whole object: {made:?}"
    );
    assert!(
        explain
            .explain_requests
            .iter()
            .all(|r| matches!(r.purpose, Purpose::Index | Purpose::Probe)),
        "{explain:#?}"
    );
    assert_eq!(counting.bytes_read(), explain.totals.explain_bytes);
    counting.reset_counts();
    view.read_bytes().await.unwrap();
    let planned: Vec<Seen> = explain
        .targets
        .iter()
        .flat_map(|t| t.requests.iter().map(seen_of_request))
        .collect();
    assert_eq!(
        sorted(counting.records().iter().map(seen_of_record).collect()),
        sorted(planned),
        "{explain}"
    );
    assert_eq!(
        counting.records().len() as u64,
        explain.totals.requests,
        "{explain}"
    );
    assert_eq!(counting.bytes_read(), explain.totals.bytes, "{explain}");
    explain
}

/// The counting wrapper over any backend.
trait ObjectStoreCounts {
    fn reset_counts(&self);
    fn records(&self) -> Vec<RequestRecord>;
    fn bytes_read(&self) -> u64;
}

impl<T: object_store::ObjectStore> ObjectStoreCounts for CountingStore<T> {
    fn reset_counts(&self) {
        self.reset();
    }
    fn records(&self) -> Vec<RequestRecord> {
        self.log()
    }
    fn bytes_read(&self) -> u64 {
        self.counts().bytes_read
    }
}

#[tokio::test]
async fn partial_shard_read_is_two_index_and_two_coalesced_data_requests() {
    for writer in ["zarr-python", "tensorstore"] {
        let (store, counting) = local_store();
        let path = format!("fixtures/{writer}/reqcount_uint16_2x64_s1x32_c1x8");
        let a = open(&store, &path, ArrayOptions::default()).await;
        let view = a.view().get(&sel![0, 22..42]).unwrap();
        // cold: explaining reads the two indexes (not cached), the read reads them again
        let cold = explain_then_read(&view, &counting).await;
        assert_eq!(cold.totals.requests, 4, "{cold}");
        assert_eq!(
            (cold.totals.index_requests, cold.totals.data_requests),
            (2, 2)
        );
        assert_eq!(cold.totals.explain_requests, 2);
        assert_eq!(cold.targets.len(), 2);
        for t in &cold.targets {
            assert_eq!(t.strategy, ReadStrategy::Partial);
            let index = t.index.as_ref().unwrap();
            assert_eq!((index.source, index.cached), (IndexSource::Store, false));
            let inner = t.inner_chunks.as_ref().unwrap();
            assert_eq!((inner.touched, inner.stored, inner.in_shard), (2, 2, 4));
            // the two inner chunks of a shard are adjacent: one coalesced range
            let data: Vec<&Request> = t
                .requests
                .iter()
                .filter(|r| r.purpose == Purpose::Data)
                .collect();
            assert_eq!(data.len(), 1);
            assert_eq!(data[0].inner_chunks, 2);
        }
        // warm (the read filled the cache): no index request, explaining makes none
        let warm = explain_then_read(&view, &counting).await;
        assert_eq!(warm.totals.requests, 2, "{warm}");
        assert_eq!(warm.totals.index_requests, 0);
        assert_eq!(warm.totals.explain_requests, 0);
        assert!(warm.targets.iter().all(|t| {
            let index = t.index.as_ref().unwrap();
            (index.source, index.cached) == (IndexSource::Cache, true)
        }));
        assert_eq!(warm.totals.data_bytes, cold.totals.data_bytes);
        // without a cache every explanation and every read reads the indexes
        let uncached = open(
            &store,
            &path,
            ArrayOptions::default().with_index_cache_bytes(0),
        )
        .await;
        let view = uncached.view().get(&sel![0, 22..42]).unwrap();
        let first = explain_then_read(&view, &counting).await;
        let second = explain_then_read(&view, &counting).await;
        assert_eq!(first.totals, second.totals);
        assert_eq!(first.totals.requests, 4);
    }
}

#[tokio::test]
async fn without_suffix_requests_the_index_costs_a_head_and_a_range() {
    let (dir, _) = test_data().expect("test-data");
    let counting = CountingStore::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "file://test-data",
        StoreOptions::default().with_suffix_requests(false),
    )
    .unwrap();
    let path = "fixtures/zarr-python/reqcount_uint16_2x64_s1x32_c1x8";
    let a = open(
        &store,
        path,
        ArrayOptions::default().with_index_cache_bytes(0),
    )
    .await;
    let view = a.view().get(&sel![0, 22..42]).unwrap();
    let e = explain_then_read(&view, &counting).await;
    assert_eq!(
        (e.totals.index_requests, e.totals.data_requests),
        (4, 2),
        "{e}"
    );
    let methods: Vec<Method> = e.targets[0].requests.iter().map(|r| r.method).collect();
    assert_eq!(methods, [Method::Head, Method::GetRange, Method::GetRange]);
}

#[tokio::test]
async fn a_refused_suffix_request_is_listed_and_the_fallback_predicted() {
    let (dir, _) = test_data().expect("test-data");
    let refusing = FaultStore::new(
        LocalFileSystem::new_with_prefix(&dir).unwrap(),
        FaultConfig::default().refuse_suffix(true),
    );
    let counting = CountingStore::new(refusing);
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "file://test-data",
        StoreOptions::default(),
    )
    .unwrap();
    let path = "fixtures/zarr-python/reqcount_uint16_2x64_s1x32_c1x8";
    let a = open(
        &store,
        path,
        ArrayOptions::default().with_index_cache_bytes(0),
    )
    .await;
    let view = a.view().get(&sel![0, 22..42]).unwrap();
    let e = explain_then_read(&view, &counting).await;
    // explaining: the first shard's suffix request is refused, then HEAD + range per shard
    assert!(e.totals.explain_requests >= 5, "{e}");
    // the read knows suffix requests are refused: HEAD + range per index
    assert_eq!(
        (e.totals.index_requests, e.totals.data_requests),
        (4, 2),
        "{e}"
    );
}

#[tokio::test]
async fn whole_shard_reads_are_one_get_each_cold_and_warm() {
    let (dir, _) = test_data().unwrap();
    for writer in ["zarr-python", "tensorstore"] {
        let (store, counting) = local_store();
        let path = format!("fixtures/{writer}/reqcount_uint16_8x8_s4_c2");
        let a = open(&store, &path, ArrayOptions::default()).await;
        let view = a.view();
        let cold = explain_then_read(&view, &counting).await;
        assert_eq!((cold.totals.requests, cold.totals.index_requests), (4, 0));
        let sizes: u64 = cold
            .targets
            .iter()
            .map(|t| std::fs::metadata(dir.join(&t.key)).unwrap().len())
            .sum();
        assert_eq!(cold.totals.bytes, sizes);
        assert!(cold.targets.iter().all(|t| {
            t.strategy == ReadStrategy::Whole
                && t.index.as_ref().unwrap().source == IndexSource::Object
                && t.inner_chunks.as_ref().unwrap().touched == 4
        }));
        assert_eq!(
            cold.totals.explain_requests, 4,
            "explaining read the indexes"
        );
        // warm: the whole-object reads filled the cache, which knows each shard's size
        let warm = explain_then_read(&view, &counting).await;
        assert_eq!(warm.totals.explain_requests, 0);
        assert_eq!((warm.totals.requests, warm.totals.bytes), (4, sizes));
    }
}

#[tokio::test]
async fn missing_shards_cost_one_request_and_no_bytes() {
    let (store, counting) = local_store();
    let path = "fixtures/zarr-python/sharded_partial";
    for options in [
        ArrayOptions::default(),
        ArrayOptions::default().with_index_cache_bytes(0),
    ] {
        let a = open(&store, path, options).await;
        // the whole array: 12 shards of which 3 are stored (c/0/0, c/0/1, c/2/3)
        let all = explain_then_read(&a.view(), &counting).await;
        assert_eq!((all.totals.targets, all.totals.missing), (12, 9), "{all}");
        for t in all.targets.iter().filter(|t| !t.exists) {
            assert_eq!(t.requests.len(), 1, "{t:?}");
            assert!(t.requests[0].not_found);
            assert_eq!(t.requests[0].bytes, 0);
            let inner = t.inner_chunks.as_ref().unwrap();
            assert_eq!(inner.fill, inner.touched);
        }
        // one missing shard alone (rows 8..16, columns 16..24: shard c/1/2)
        let view = a.view().get(&sel![8..16, 16..24]).unwrap();
        let one = explain_then_read(&view, &counting).await;
        assert_eq!(
            (one.totals.requests, one.totals.bytes, one.totals.missing),
            (1, 0, 1)
        );
        // a partial read of it: the index request finds nothing
        let view = a.view().get(&sel![9, 17..19]).unwrap();
        let partial = explain_then_read(&view, &counting).await;
        assert_eq!((partial.totals.requests, partial.totals.bytes), (1, 0));
        assert_eq!(partial.targets[0].strategy, ReadStrategy::Partial);
        // warm partial read of a stored shard with some absent inner chunks
        let view = a.view().get(&sel![0..8, 0..16]).unwrap();
        explain_then_read(&view, &counting).await;
        explain_then_read(&view, &counting).await;
    }
}

#[tokio::test]
async fn index_at_the_start_and_pipeline_sharded_and_unsharded_reads() {
    let (store, counting) = local_store();
    for (path, strategy) in [
        (
            "fixtures/zarr-python/sharded_index_start",
            ReadStrategy::Partial,
        ),
        (
            "fixtures/zarr-python/sharded_partial_index_start",
            ReadStrategy::Partial,
        ),
        (
            "fixtures/zarr-python/sharded_transpose",
            ReadStrategy::Pipeline,
        ),
        (
            "fixtures/zarr-python/missing_chunks_fill_42",
            ReadStrategy::Chunk,
        ),
        ("fixtures/zarr-python/dtype_int16", ReadStrategy::Chunk),
    ] {
        let a = open(&store, path, ArrayOptions::default()).await;
        // a corner cell, then the whole array, each cold and warm
        let corner = a.view().get(&sel![0, 0]).unwrap();
        let views = if a.ndim() == 2 {
            vec![corner, a.view()]
        } else {
            vec![a.view()]
        };
        for view in views {
            let first = explain_then_read(&view, &counting).await;
            for t in &first.targets {
                match strategy {
                    ReadStrategy::Partial => assert!(
                        matches!(t.strategy, ReadStrategy::Partial | ReadStrategy::Whole),
                        "{path}: {first}"
                    ),
                    _ => assert_eq!(t.strategy, strategy, "{path}: {first}"),
                }
            }
            explain_then_read(&view, &counting).await;
        }
    }
}

#[tokio::test]
async fn gather_fetches_only_the_inner_chunks_it_touches() {
    let (store, counting) = local_store();
    let path = "fixtures/zarr-python/reqcount_uint16_64x64_s32_c8_zstd";
    for options in [
        ArrayOptions::default(),
        ArrayOptions::default().with_index_cache_bytes(0),
    ] {
        let a = open(&store, path, options).await;
        // three points in two inner chunks of shard (0,0), one in shard (1,1)
        let view = a
            .view()
            .vindex(&sel![[1, 2, 20, 40], [1, 3, 20, 60]])
            .unwrap();
        let cold = explain_then_read(&view, &counting).await;
        assert_eq!(cold.totals.targets, 2);
        assert_eq!(cold.totals.inner_chunks, 3, "{cold}");
        let warm = explain_then_read(&view, &counting).await;
        assert_eq!(warm.totals.data_requests, cold.totals.data_requests);
    }
}

#[tokio::test]
async fn an_empty_selection_explains_nothing() {
    let (store, counting) = local_store();
    let path = "fixtures/zarr-python/reqcount_uint16_8x8_s4_c2";
    let a = open(&store, path, ArrayOptions::default()).await;
    let view = a.view().get(&sel![0..0, ..]).unwrap();
    let e = explain_then_read(&view, &counting).await;
    assert_eq!((e.totals.targets, e.totals.requests), (0, 0));
}

// ---- writes -------------------------------------------------------------------------

async fn memory_array(spec: ArraySpec) -> (Array, CountingStore<InMemory>) {
    common::counted_memory_array(&spec).await
}

/// uint16 [8, 16], shards [4, 8], inner chunks [2, 4].
fn sharded_spec() -> ArraySpec {
    ArraySpec::new(vec![8, 16], "uint16")
        .shard_shape(vec![4, 8])
        .inner_chunk_shape(vec![2, 4])
}

fn pattern(shape: &[usize]) -> ArrayD<u16> {
    let mut k = 0u16;
    ArrayD::from_shape_fn(IxDyn(shape), |_| {
        k += 1;
        k
    })
}

/// Explains a write of `view`, then writes `values` and checks the write made the requests
/// explained (kinds and keys) and read the bytes explained.
async fn explain_then_write(
    view: &ArrayView,
    counting: &CountingStore<InMemory>,
    values: &ArrayD<u16>,
) -> zarrflow::array::WriteExplain {
    counting.reset();
    let explain = view.explain_write().await.unwrap();
    let made = counting.log();
    assert_eq!(made.len() as u64, explain.totals.explain_requests);
    assert!(
        made.iter()
            .all(|r| matches!(r.kind, RequestKind::GetRange | RequestKind::Head)),
        "explaining a write read data or wrote: {made:?}"
    );
    counting.reset();
    view.write(&values.view()).await.unwrap();
    let planned: Vec<Seen> = explain
        .targets
        .iter()
        .flat_map(|t| t.requests.iter().map(seen_of_request))
        .collect();
    assert_eq!(
        sorted(counting.log().iter().map(seen_of_record).collect()),
        sorted(planned),
        "{explain}"
    );
    let c = counting.counts();
    assert_eq!(
        (c.gets(), c.put),
        (explain.totals.reads, explain.totals.puts)
    );
    assert_eq!(c.bytes_read, explain.totals.bytes_read, "{explain}");
    explain
}

#[tokio::test]
async fn a_covered_shard_skips_its_read_and_a_partial_shard_is_read_once() {
    let (a, counting) = memory_array(sharded_spec()).await;
    // into an empty array: a covered shard is PUT without a read
    let covered = a.view().get(&sel![0..4, 8..16]).unwrap();
    let e = explain_then_write(&covered, &counting, &pattern(&[4, 8])).await;
    assert_eq!((e.totals.targets, e.totals.reads_skipped), (1, 1), "{e}");
    assert_eq!((e.totals.requests, e.totals.explain_requests), (1, 0));
    assert_eq!(e.targets[0].requests[0].method, Method::Put);
    assert_eq!(e.targets[0].inner_chunks.as_ref().unwrap().rewritten, 4);
    // a partial write into a missing shard: the read finds nothing, the PUT creates
    let missing = a.view().get(&sel![5..7, 1..3]).unwrap();
    let e = explain_then_write(&missing, &counting, &pattern(&[2, 2])).await;
    assert_eq!(e.targets[0].exists, Some(false));
    let methods: Vec<Method> = e.targets[0].requests.iter().map(|r| r.method).collect();
    assert_eq!(methods, [Method::Get, Method::PutCreate]);
    // the whole array, then one inner chunk of shard (0, 0), fully covered
    a.view().write(&pattern(&[8, 16]).view()).await.unwrap();
    let one = a.view().get(&sel![2..4, 4..8]).unwrap();
    let e = explain_then_write(&one, &counting, &pattern(&[2, 4])).await;
    let t = &e.targets[0];
    assert!(!t.read_skipped);
    assert_eq!(t.exists, Some(true));
    let methods: Vec<Method> = t.requests.iter().map(|r| r.method).collect();
    assert_eq!(methods, [Method::Get, Method::PutIfMatch]);
    let inner = t.inner_chunks.as_ref().unwrap();
    assert_eq!(
        (
            inner.rewritten,
            inner.covered,
            inner.decoded_first,
            inner.copied_verbatim
        ),
        (1, 1, 0, 3)
    );
    // the whole-array write left each shard's index in the cache (a remote store): no
    // index request to explain
    assert_eq!(
        e.totals.explain_requests, 0,
        "the index stored by the write is cached"
    );
    // part of two inner chunks: both decoded first, the other two copied verbatim
    let two = a.view().get(&sel![1..3, 0..2]).unwrap();
    let e = explain_then_write(&two, &counting, &pattern(&[2, 2])).await;
    let inner = e.targets[0].inner_chunks.as_ref().unwrap();
    assert_eq!(
        (inner.rewritten, inner.decoded_first, inner.copied_verbatim),
        (2, 2, 2)
    );
    // a warm cache: explaining makes no request
    a.view()
        .get(&sel![0, 0])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    let e = explain_then_write(&two, &counting, &pattern(&[2, 2])).await;
    assert_eq!(e.totals.explain_requests, 0);
    // across shards: two covered, two partial
    let mixed = a.view().get(&sel![0..8, 0..12]).unwrap();
    let e = explain_then_write(&mixed, &counting, &pattern(&[8, 12])).await;
    assert_eq!((e.totals.targets, e.totals.reads_skipped), (4, 2), "{e}");
    assert_eq!((e.totals.reads, e.totals.puts), (2, 4));
}

#[tokio::test]
async fn unsharded_writes_are_explained_with_a_head() {
    let (a, counting) =
        memory_array(ArraySpec::new(vec![8, 8], "uint16").shard_shape(vec![4, 4])).await;
    a.view().write(&pattern(&[8, 8]).view()).await.unwrap();
    let view = a.view().get(&sel![1..3, 2..6]).unwrap();
    let e = explain_then_write(&view, &counting, &pattern(&[2, 4])).await;
    assert_eq!(e.totals.targets, 2);
    assert_eq!(e.totals.explain_requests, 2, "one HEAD per chunk");
    assert!(e.targets.iter().all(|t| t.inner_chunks.is_none()));
    let covered = a.view().get(&sel![4..8, 4..8]).unwrap();
    let e = explain_then_write(&covered, &counting, &pattern(&[4, 4])).await;
    assert_eq!((e.totals.reads_skipped, e.totals.requests), (1, 1));
}
