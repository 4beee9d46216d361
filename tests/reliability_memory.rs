//! Memory bounds, each measured in this binary alone (the tests take one lock in turn):
//!
//! - a long read/write loop (bounded count) keeps memory flat: the resident set after 400
//!   write + read rounds over the same shards stays within a small margin of the resident
//!   set after the warm-up rounds (caches are byte-bounded; nothing accumulates per round);
//! - plans run as a stream: reading or writing 40,000 one-cell chunks takes the result and
//!   the work in flight, not a lowered operation per chunk (heap peaks counted by the
//!   allocator below); within a shard too: reading or writing (whole, or partly into the
//!   stored shard) one shard of 40,000 inner chunks takes a small multiple of the shard's
//!   size, not a lowered operation per inner chunk;
//! - a points message takes a few bytes a coordinate, parsed and read.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use ndarray::{ArrayD, IxDyn};
use zarrflow::array::{Array, ArrayOptions, InnerChunkOrder};
use zarrflow::index::{IndexTransform, Selection};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey};

/// The system allocator, counting the bytes allocated now and their peak.
struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = ALLOCATED.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        ALLOCATED.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            // counted as a new block before the old one is freed (the worst case)
            grew(new_size);
            ALLOCATED.fetch_sub(layout.size(), Relaxed);
        }
        q
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// One test at a time: the counters and the resident set are the whole process's.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs `f` and returns its result with the heap it took above what was allocated before
/// and after: the peak minus the larger of the two (what stays allocated, e.g. stored
/// chunks or a result, is not counted; what `f` needed on the way is).
async fn transient_heap<T>(f: impl std::future::Future<Output = T>) -> (T, usize) {
    let before = ALLOCATED.load(Relaxed);
    PEAK.store(before, Relaxed);
    let out = f.await;
    let after = ALLOCATED.load(Relaxed);
    (out, PEAK.load(Relaxed).saturating_sub(before.max(after)))
}

/// Resident set size in bytes (Linux `/proc/self/statm`); `None` elsewhere.
fn rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_read_write_loop_keeps_memory_flat() {
    let _serial = SERIAL.lock().await;
    let store = Store::memory();
    let spec = ArraySpec::new(vec![256, 256], "float32")
        .shard_shape(vec![64, 64])
        .inner_chunk_shape(vec![16, 16]);
    // a small index cache, so the loop also churns it
    let opts = ArrayOptions::default().with_index_cache_bytes(4096);
    let array = Array::create(&store, &StoreKey::root(), &spec, opts)
        .await
        .unwrap();
    let mut warm = 0;
    const ROUNDS: usize = 400;
    for round in 0..ROUNDS {
        let r = (round * 37) % 200;
        let c = (round * 53) % 200;
        let sel = Selection::parse(&format!("{r}:{}, {c}:{}", r + 56, c + 56)).unwrap();
        let view = array.view().get(&sel).unwrap();
        let values = ArrayD::from_elem(IxDyn(&[56, 56]), round as f32);
        view.write(&values.view()).await.unwrap();
        let back = view.read::<f32>().await.unwrap();
        assert!(back.iter().all(|&x| x == round as f32));
        let whole = array.view().read::<f32>().await.unwrap();
        assert_eq!(whole.len(), 256 * 256);
        if round == 50 {
            warm = rss().unwrap_or(0);
        }
    }
    let end = rss().unwrap_or(0);
    eprintln!(
        "RSS after warm-up {} KiB, after {ROUNDS} rounds {} KiB",
        warm >> 10,
        end >> 10
    );
    // 350 more rounds each allocate ~0.5 MiB of buffers: a leak of one round's buffers
    // would add > 100 MiB; allocator noise stays far below 32 MiB
    assert!(
        end <= warm + (32 << 20),
        "memory grew from {warm} to {end} bytes over {ROUNDS} rounds"
    );
}

/// Heap a plan may take, however many chunks it touches (the work in flight: 32 requests,
/// a batch of 256 lowered chunks, the copy channel); before plans were streamed, reading
/// 40,000 one-cell chunks took 35 MB and writing them 55 MB (~1 KB a chunk).
const PLAN_HEAP: usize = 8 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_and_writing_40_000_chunks_streams_the_plan() {
    let _serial = SERIAL.lock().await;
    let store = Store::memory();
    // 1-cell chunks: the request touches 40,000 chunks for 40,000 bytes of values
    let spec = ArraySpec::new(vec![200, 200], "uint8").shard_shape(vec![1, 1]);
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    let view = array.view();
    let (written, heap) = transient_heap(view.write_scalar(7u8)).await;
    written.unwrap();
    eprintln!(
        "write of 40,000 chunks: {} KiB beyond what it stored",
        heap >> 10
    );
    assert!(heap < PLAN_HEAP, "writing took {heap} bytes on the way");
    let (read, heap) = transient_heap(view.read::<u8>()).await;
    let read = read.unwrap();
    assert!(read.iter().all(|&v| v == 7));
    eprintln!(
        "read of 40,000 chunks: {} KiB beyond its result",
        heap >> 10
    );
    assert!(heap < PLAN_HEAP, "reading took {heap} bytes on the way");
    drop(read);
    // the fill value everywhere: every chunk deleted, nothing stored
    let (written, heap) = transient_heap(view.write_scalar(0u8)).await;
    written.unwrap();
    assert!(
        heap < PLAN_HEAP,
        "writing the fill value took {heap} bytes on the way"
    );
    let keys = store.list_prefix(&StoreKey::root()).await.unwrap();
    assert!(keys.iter().all(|k| k.as_str() == "zarr.json"), "{keys:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_points_message_takes_a_few_bytes_a_coordinate() {
    let _serial = SERIAL.lock().await;
    // 200,000 points of rank 2 (2.4 MB of JSON): 16 bytes of coordinates a point
    const POINTS: usize = 200_000;
    let mut text = String::from(r#"{"kind": "points", "coords": ["#);
    let mut x = 12345u64;
    for i in 0..POINTS {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (r, c) = ((x >> 33) % 4000, (x >> 13) % 4000);
        text.push_str(&format!("{}[{r},{c}]", if i == 0 { "" } else { "," }));
    }
    text.push_str("]}");
    let before = ALLOCATED.load(Relaxed);
    PEAK.store(before, Relaxed);
    let transform = IndexTransform::from_json_str(&text).unwrap();
    let (parse_heap, kept) = (
        PEAK.load(Relaxed) - before,
        ALLOCATED.load(Relaxed) - before,
    );
    let store = Store::memory();
    let spec = ArraySpec::new(vec![4000, 4000], "uint8")
        .shard_shape(vec![1000, 1000])
        .inner_chunk_shape(vec![100, 100]);
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    array.view().write_scalar(3u8).await.unwrap();
    let view = array.view().transformed(&transform).unwrap();
    let (read, read_heap) = transient_heap(view.read::<u8>()).await;
    assert!(read.unwrap().iter().all(|&v| v == 3));
    let per_point = |bytes: usize| bytes / POINTS;
    eprintln!(
        "parse: {} bytes a point ({} kept), read: {} bytes a point",
        per_point(parse_heap),
        per_point(kept),
        per_point(read_heap)
    );
    // before: ~550 bytes a point to parse (a JSON value tree, rows, values again)
    assert!(per_point(kept) <= 17, "the transform keeps {kept} bytes");
    assert!(
        per_point(parse_heap) <= 3 * 16,
        "parsing took {parse_heap} bytes"
    );
    assert!(
        per_point(read_heap) <= 8 * 16,
        "reading took {read_heap} bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_a_shard_of_40_000_inner_chunks_streams_its_parts() {
    let _serial = SERIAL.lock().await;
    let store = Store::memory();
    let spec = ArraySpec::new(vec![200, 200], "uint8")
        .shard_shape(vec![200, 200])
        .inner_chunk_shape(vec![1, 1]);
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    array.view().write_scalar(5u8).await.unwrap();
    // a fresh handle: its index cache is filled by this read, and counted
    let array = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap();
    let (read, heap) = transient_heap(array.view().read::<u8>()).await;
    assert!(read.unwrap().iter().all(|&v| v == 5));
    eprintln!(
        "read of one shard of 40,000 inner chunks: {} KiB beyond its result",
        heap >> 10
    );
    // the shard's bytes, its index (640 KB) and 1024 parts at a time; before, a part per
    // inner chunk: ~17 MB
    assert!(heap < PLAN_HEAP, "reading took {heap} bytes on the way");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_a_shard_of_40_000_inner_chunks_streams_its_parts() {
    let _serial = SERIAL.lock().await;
    // C order streams the inner chunks in; another layout order keeps each (48 bytes and
    // its encoding) until the shard is laid out
    for (order, bound) in [
        (InnerChunkOrder::Lexicographic, 4),
        (InnerChunkOrder::Morton, 8),
    ] {
        let store = Store::memory();
        let spec = ArraySpec::new(vec![200, 200], "uint8")
            .shard_shape(vec![200, 200])
            .inner_chunk_shape(vec![1, 1]);
        let options = ArrayOptions::default().with_inner_chunk_order(order);
        let array = Array::create(&store, &StoreKey::root(), &spec, options)
            .await
            .unwrap();
        let key = StoreKey::new("c/0/0").unwrap();
        // the whole shard: covered, so written without a read, every inner chunk rewritten
        let (written, whole_heap) = transient_heap(array.view().write_scalar(5u8)).await;
        written.unwrap();
        let shard = store.head(&key).await.unwrap().size as usize;
        // a partial write into the stored shard: every other row (20,000 inner chunks
        // rewritten, 20,000 copied verbatim), from values allocated before the count
        let sel = Selection::parse("::2, :").unwrap();
        let values = ArrayD::from_shape_fn(IxDyn(&[100, 200]), |ix| (ix[0] + ix[1]) as u8 | 1);
        let view = array.view().get(&sel).unwrap();
        let (written, partial_heap) = transient_heap(view.write(&values.view())).await;
        written.unwrap();
        let back = array.view().read::<u8>().await.unwrap();
        for ((r, c), &v) in back.indexed_iter().map(|(ix, v)| ((ix[0], ix[1]), v)) {
            let want = if r % 2 == 0 {
                ((r / 2 + c) as u8) | 1
            } else {
                5
            };
            assert_eq!(v, want, "cell ({r}, {c})");
        }
        eprintln!(
            "write of one shard of 40,000 inner chunks in {order} order ({} KiB stored): {} KiB \
         whole, {} KiB partial, beyond what it stored",
            shard >> 10,
            whole_heap >> 10,
            partial_heap >> 10
        );
        // the shard being built (its index, 640 KB, and body), the encoded index, and 1024
        // inner chunks at a time; before, a lowered operation and an encoding per inner chunk
        // were held at once
        assert!(
            whole_heap < bound * shard,
            "writing the whole shard ({shard} bytes, {order}) took {whole_heap} bytes on the way"
        );
        assert!(
            partial_heap < bound * shard,
            "a partial write into the shard ({shard} bytes, {order}) took {partial_heap} bytes on \
         the way"
        );
    }
}
