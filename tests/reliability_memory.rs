//! A long read/write loop (bounded count) keeps memory flat: the resident set after 400
//! write + read rounds over the same shards stays within a small margin of the resident
//! set after the warm-up rounds (caches are byte-bounded; nothing accumulates per round).
//! One test in its own binary, so no other test shares the process.

use ndarray::{ArrayD, IxDyn};
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey};

/// Resident set size in bytes (Linux `/proc/self/statm`); `None` elsewhere.
fn rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_read_write_loop_keeps_memory_flat() {
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
