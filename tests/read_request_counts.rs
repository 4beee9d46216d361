//! Request counts of planned reads, through the counting store wrapper over the local
//! filesystem (fixtures written by zarr-python and TensorStore).

mod common;

use std::sync::Arc;

use common::fixtures::{key, test_data};
use common::read_npy;
use object_store::local::LocalFileSystem;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::sel;
use zarrflow::store::wrappers::{CountingStore, RequestKind};
use zarrflow::store::{Store, StoreOptions};

fn counting_store() -> (Store, CountingStore<LocalFileSystem>, std::path::PathBuf) {
    let (dir, _) = test_data().expect("test-data");
    let counting = CountingStore::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "file://test-data",
        StoreOptions::default(),
    )
    .unwrap();
    (store, counting, dir)
}

async fn open(store: &Store, path: &str, options: ArrayOptions) -> Array {
    Array::open_in(store, &key(path), options).await.unwrap()
}

#[tokio::test]
async fn full_read_of_a_fully_written_sharded_array_makes_one_request_per_shard() {
    for writer in ["zarr-python", "tensorstore"] {
        let (store, counting, dir) = counting_store();
        let path = format!("fixtures/{writer}/reqcount_uint16_8x8_s4_c2");
        let a = open(&store, &path, ArrayOptions::default()).await;
        counting.reset();
        let got = a.view().read::<u16>().await.unwrap();
        let (_, _, want) = read_npy(&dir.join(format!("{path}.npy")));
        assert_eq!(bytemuck_bytes(got.as_slice().unwrap()), want);
        let c = counting.counts();
        assert_eq!(
            (c.get, c.get_range, c.total()),
            (4, 0, 4),
            "{writer}: {:?}",
            counting.log()
        );
    }
}

#[tokio::test]
async fn partial_shard_read_makes_two_index_reads_and_two_coalesced_data_reads() {
    for writer in ["zarr-python", "tensorstore"] {
        let (store, counting, _) = counting_store();
        let path = format!("fixtures/{writer}/reqcount_uint16_2x64_s1x32_c1x8");
        let a = open(&store, &path, ArrayOptions::default()).await;
        let view = a.view().get(&sel![0, 22..42]).unwrap();
        counting.reset();
        let first = view.read::<u16>().await.unwrap();
        let log = counting.log();
        assert_eq!(log.len(), 4, "{writer}: {log:?}");
        assert!(
            log.iter().all(|r| r.kind == RequestKind::GetRange),
            "{log:?}"
        );
        // A second read with the index cache on reads no index.
        counting.reset();
        let second = view.read::<u16>().await.unwrap();
        assert_eq!(first, second);
        assert_eq!(
            counting.counts().get_range,
            2,
            "{writer}: {:?}",
            counting.log()
        );
        // Without the cache every read re-reads the indexes.
        let uncached = open(
            &store,
            &path,
            ArrayOptions::default().with_index_cache_bytes(0),
        )
        .await;
        counting.reset();
        let third = uncached
            .view()
            .get(&sel![0, 22..42])
            .unwrap()
            .read::<u16>()
            .await
            .unwrap();
        assert_eq!(third, first);
        assert_eq!(counting.counts().get_range, 4);
        // The values: the fixture holds its flat position.
        let whole = a.view().read::<u16>().await.unwrap();
        assert_eq!(
            first.as_slice().unwrap(),
            &whole.as_slice().unwrap()[22..42]
        );
    }
}

#[tokio::test]
async fn absent_shards_cost_one_request_each_and_read_as_fill() {
    for writer in ["zarr-python", "tensorstore"] {
        let (store, counting, dir) = counting_store();
        let path = format!("fixtures/{writer}/sharded_partial");
        let a = open(
            &store,
            &path,
            ArrayOptions::default().with_index_cache_bytes(0),
        )
        .await;
        let grid = a
            .metadata()
            .chunk_grid()
            .regular_chunk_shape()
            .unwrap()
            .to_vec();
        let shape = a.shape().to_vec();
        // Find the shards that do not exist and read each one's region.
        let mut absent = 0;
        for i in 0..shape[0].div_ceil(grid[0]) {
            for j in 0..shape[1].div_ceil(grid[1]) {
                let key = a.store().url_of(&key(&format!("{path}/c/{i}/{j}")));
                if std::path::Path::new(&key.replace("file://test-data", dir.to_str().unwrap()))
                    .exists()
                {
                    continue;
                }
                absent += 1;
                let (r0, c0) = ((i * grid[0]) as i64, (j * grid[1]) as i64);
                let sel = Selection::parse(&format!(
                    "{}:{}, {}:{}",
                    r0,
                    r0 + grid[0] as i64,
                    c0,
                    c0 + grid[1] as i64
                ))
                .unwrap();
                let view = a.view().get(&sel).unwrap();
                counting.reset();
                let got = view.read_bytes().await.unwrap();
                assert_eq!(
                    counting.counts().total(),
                    1,
                    "{writer} shard {i},{j}: {:?}",
                    counting.log()
                );
                let fill = a.metadata().fill_value().as_ne_bytes().to_vec();
                assert!(got.chunks(fill.len()).all(|c| c == fill.as_slice()));
            }
        }
        assert!(absent > 0, "{writer}: the fixture has no absent shard");
    }
}

#[tokio::test]
async fn vindex_gather_fetches_only_the_inner_chunks_it_touches() {
    let (store, counting, dir) = counting_store();
    let path = "fixtures/zarr-python/reqcount_uint16_64x64_s32_c8_zstd";
    let a = open(
        &store,
        path,
        ArrayOptions::default().with_index_cache_bytes(0),
    )
    .await;
    // Three points in two inner chunks of shard (0,0) and one in shard (1,1).
    let view = a
        .view()
        .vindex(&sel![[1, 2, 20, 40], [1, 3, 20, 60]])
        .unwrap();
    counting.reset();
    let got = view.read::<u16>().await.unwrap();
    let (_, _, whole) = read_npy(&dir.join(format!("{path}.npy")));
    let at = |r: usize, c: usize| {
        u16::from_le_bytes([whole[2 * (r * 64 + c)], whole[2 * (r * 64 + c) + 1]])
    };
    assert_eq!(
        got.as_slice().unwrap(),
        &[at(1, 1), at(2, 3), at(20, 20), at(40, 60)]
    );
    let log = counting.log();
    // Shard (0,0): index + inner chunks (0,0) and (2,2) (far apart: coalesced only if the gap
    // allows); shard (1,1): index + one inner chunk.
    assert!(
        log.iter().all(|r| r.kind == RequestKind::GetRange),
        "{log:?}"
    );
    assert!((4..=5).contains(&log.len()), "{log:?}");
    let bytes_read = counting.counts().bytes_read;
    let shard_bytes: u64 = ["c/0/0", "c/1/1"]
        .iter()
        .map(|k| std::fs::metadata(dir.join(path).join(k)).unwrap().len())
        .sum();
    assert!(
        bytes_read < shard_bytes,
        "read {bytes_read} bytes of {shard_bytes}"
    );
}

fn bytemuck_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Cells (1, 1) and (1, 2) of `a`.
async fn two_cells(a: &Array) -> Vec<u16> {
    let cells = a.view().get(&sel![1, 1..3]).unwrap().read().await.unwrap();
    cells.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_this_handle_wrote_is_read_back_without_an_index_request() {
    use object_store::memory::InMemory;
    use zarrflow::metadata::ArraySpec;
    use zarrflow::store::StoreKey;
    // a remote store (object_store's in-memory store behind the counting wrapper): after a
    // write, the index the shard was stored with is cached with the version the PUT
    // returned, so a partial read makes one ranged GET, conditional on that version
    let base = Arc::new(InMemory::new());
    let counting = CountingStore::new(base.clone());
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        "memory://rc",
        StoreOptions::default(),
    )
    .unwrap();
    let spec = ArraySpec::new(vec![16, 16], "uint16")
        .shard_shape(vec![16, 16])
        .inner_chunk_shape(vec![4, 4]);
    let path = StoreKey::new("a").unwrap();
    let a = Array::create(&store, &path, &spec, ArrayOptions::default())
        .await
        .unwrap();
    let b = Array::open_in(&store, &path, ArrayOptions::default())
        .await
        .unwrap();
    a.view()
        .get(&sel![0..8, 0..8])
        .unwrap()
        .write_scalar(3u16)
        .await
        .unwrap();
    counting.reset();
    let got = two_cells(&a).await;
    assert_eq!(got, [3, 3]);
    let c = counting.counts();
    assert_eq!(
        (c.get, c.get_range, c.head),
        (0, 1, 0),
        "{:?}",
        counting.log()
    );

    // another handle rewrites the shard: the cached index's version no longer matches, the
    // read is refused and starts again from the stored index
    b.view()
        .get(&sel![1, 1])
        .unwrap()
        .write_scalar(9u16)
        .await
        .unwrap();
    let got = two_cells(&a).await;
    assert_eq!(got, [9, 3]);
}
