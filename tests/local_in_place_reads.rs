//! Local stores read shards in place: a partial read opens each touched shard once and reads
//! exactly its index and the inner chunks it needs (the bytes the process reads, `rchar` of
//! `/proc/self/io`, equal what `explain_read` lists), where the coalescing policy of remote
//! stores reads the gaps between them too. Values equal a naive model on both paths, and on
//! an in-memory store.
//!
//! One test in this binary: `rchar` counts the whole process, so nothing else may read
//! files while it measures.

use ndarray::ArrayD;
use zarrflow::array::{Array, ArrayOptions, Purpose, ReadStrategy};
use zarrflow::index::{Selection, SelectionItem};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};

const N: usize = 96;

fn value(i: usize, j: usize) -> u16 {
    // varied enough that inner chunks compress to different sizes
    (((i * 7919 + j * 104_729) % 65_521) ^ (i * j)) as u16
}

/// Bytes the process has read through read(2)-like calls so far.
fn rchar() -> u64 {
    let s = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io");
    s.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("rchar")
}

fn sub_box(rows: std::ops::Range<usize>, cols: std::ops::Range<usize>) -> Selection {
    Selection::new(vec![
        SelectionItem::from(rows.start as i64..rows.end as i64),
        SelectionItem::from(cols.start as i64..cols.end as i64),
    ])
}

async fn open(store: &Store) -> Array {
    Array::open_in(store, &StoreKey::root(), ArrayOptions::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_partial_reads_read_exactly_the_index_and_the_needed_inner_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("a.zarr").display().to_string();
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    assert!(store.reads_in_place());
    let spec = ArraySpec::of::<u16>([N as u64, N as u64])
        .shard_shape([48, 48])
        .inner_chunk_shape([8, 8]);
    let a = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    let mut all = ArrayD::from_shape_fn(ndarray::IxDyn(&[N, N]), |ix| value(ix[0], ix[1]));
    a.view().write(&all).await.unwrap();
    // the last inner chunk of shard (0, 0) is absent: it reads as the fill value
    a.view()
        .get(&sub_box(40..48, 40..48))
        .unwrap()
        .write_scalar(0u16)
        .await
        .unwrap();
    all.slice_mut(ndarray::s![40..48, 40..48]).fill(0);

    // rows 10..30 and columns 3..20, 50..90: partial shards, with untouched inner chunks
    // between the touched ones (the gaps the remote policy reads too)
    for (rows, cols) in [(10..30, 50..90), (3..45, 3..20), (0..96, 45..46)] {
        let want = all
            .slice(ndarray::s![rows.clone(), cols.clone()])
            .to_owned();
        let sel = sub_box(rows.clone(), cols.clone());

        let a = open(&store).await;
        let view = a.view().get(&sel).unwrap();
        let explain = view.explain_read().await.unwrap();
        for t in &explain.targets {
            assert_eq!(t.strategy, ReadStrategy::InPlace, "{explain}");
            assert_eq!(t.requests.len(), 1, "one open per shard: {explain}");
            assert_eq!(t.requests[0].purpose, Purpose::InPlace);
        }
        let needed = explain.totals.bytes;
        let before = rchar();
        let got = view.read::<u16>().await.unwrap();
        let read = rchar() - before;
        assert_eq!(
            got.into_dimensionality().unwrap(),
            want,
            "{rows:?} {cols:?}"
        );
        // `read` also counts the first `/proc/self/io` read (its text, under 1 KiB)
        assert!(
            read >= needed && read < needed + 1024,
            "{rows:?} {cols:?}: read {read} bytes, needed {needed}"
        );

        // the same directory with the remote policy: index and coalesced ranges, gaps read
        let remote = store.clone().with_in_place_reads(false);
        let a = open(&remote).await;
        let view = a.view().get(&sel).unwrap();
        let coalesced = view.explain_read().await.unwrap();
        assert!(
            coalesced
                .targets
                .iter()
                .all(|t| t.strategy != ReadStrategy::InPlace)
        );
        let got = view.read::<u16>().await.unwrap();
        assert_eq!(got.into_dimensionality().unwrap(), want);
        assert!(coalesced.totals.bytes >= needed, "{coalesced}");
    }

    // an in-memory store reads in place too
    let mem = Store::memory();
    assert!(mem.reads_in_place());
    let m = Array::create(&mem, &StoreKey::root(), &spec, ArrayOptions::default())
        .await
        .unwrap();
    m.view().write(&all).await.unwrap();
    let view = open(&mem)
        .await
        .view()
        .get(&sub_box(10..30, 50..90))
        .unwrap();
    let explain = view.explain_read().await.unwrap();
    assert!(
        explain
            .targets
            .iter()
            .all(|t| t.strategy == ReadStrategy::InPlace)
    );
    let got = view.read::<u16>().await.unwrap();
    assert_eq!(
        got.into_dimensionality().unwrap(),
        all.slice(ndarray::s![10..30, 50..90]).to_owned()
    );
}
