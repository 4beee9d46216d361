//! Local and `memory://` stores read sharded arrays in rounds on the CPU pool (no producer
//! task); a store given by `Store::from_object_store` that reads in place, and arrays whose
//! shards hold more inner chunks than one round's batch, go through the producer task.
//! Both routes must read the same values (those of a naive model), refuse the same bad
//! bytes with the same typed error, and survive a cancelled read.

use std::sync::Arc;
use std::time::Duration;

use ndarray::{ArrayD, IxDyn};
use object_store::local::LocalFileSystem;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};

const N: usize = 200;

fn value(i: usize, j: usize) -> u16 {
    (((i * 7919 + j * 104_729) % 65_521) ^ (i * j)) as u16
}

/// The local directory `dir` through `object_store`'s own backend, declared to read in
/// place: the producer task's route.
fn through_producer(dir: &std::path::Path) -> Store {
    let backend = LocalFileSystem::new_with_prefix(dir).unwrap();
    Store::from_object_store(
        Arc::new(backend),
        "",
        "file://producer",
        StoreOptions::default(),
    )
    .unwrap()
    .with_in_place_reads(true)
}

async fn open(store: &Store, key: &str) -> Array {
    Array::open_in(store, &StoreKey::new(key).unwrap(), ArrayOptions::default())
        .await
        .unwrap()
}

/// Writes an array of `shards` / `inner` holding the model: all but the shards of rows
/// 160.. (missing: fill) and one inner chunk (rows 4..8, columns 4..8, absent: fill).
async fn write(store: &Store, key: &str, shards: u64, inner: u64) -> ArrayD<u16> {
    let spec = ArraySpec::of::<u16>([N as u64, N as u64])
        .shard_shape([shards, shards])
        .inner_chunk_shape([inner, inner]);
    let a = Array::create(
        store,
        &StoreKey::new(key).unwrap(),
        &spec,
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    let mut model = ArrayD::from_shape_fn(IxDyn(&[N, N]), |ix| value(ix[0], ix[1]));
    model.slice_mut(ndarray::s![160.., ..]).fill(0);
    model.slice_mut(ndarray::s![4..8, 4..8]).fill(0);
    a.view()
        .get(&Selection::parse("0:160, :").unwrap())
        .unwrap()
        .write(&model.slice(ndarray::s![0..160, ..]).to_owned().into_dyn())
        .await
        .unwrap();
    model
}

/// Random points (xorshift), many per inner chunk in places, none in others.
fn points(count: usize) -> (Vec<i64>, Vec<i64>) {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % N as u64) as i64
    };
    (0..count).map(|_| (next(), next())).unzip()
}

fn list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(","))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_and_the_producer_read_the_same_values() {
    let tmp = tempfile::tempdir().unwrap();
    let local = Store::open(tmp.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let producer = through_producer(tmp.path());
    let memory = Store::memory();
    // 13 × 13 shards of 16 inner chunks (several rounds); and shards of 4,096 inner chunks
    // (more than a round's batch: the producer's route on every store)
    for (key, shards, inner) in [("small", 16, 4), ("big", 128, 2)] {
        let model = write(&local, key, shards, inner).await;
        assert_eq!(write(&memory, key, shards, inner).await, model);
        let (rows, cols) = points(5000);
        let cases: Vec<(&str, String, ArrayD<u16>)> = vec![
            ("basic", ":, :".into(), model.clone()),
            (
                "basic",
                "3:150, 7:190".into(),
                model
                    .slice(ndarray::s![3..150, 7..190])
                    .to_owned()
                    .into_dyn(),
            ),
            (
                "basic",
                "::-3, 5:200:7".into(),
                model
                    .slice(ndarray::s![..;-3, 5..200;7])
                    .to_owned()
                    .into_dyn(),
            ),
            (
                "oindex",
                "[1,50,199,3,4], 10:60".into(),
                ArrayD::from_shape_fn(IxDyn(&[5, 50]), |ix| {
                    model[[[1, 50, 199, 3, 4][ix[0]], 10 + ix[1]]]
                }),
            ),
            (
                "vindex",
                format!("{}, {}", list(&rows), list(&cols)),
                ArrayD::from_shape_fn(IxDyn(&[rows.len()]), |ix| {
                    model[[rows[ix[0]] as usize, cols[ix[0]] as usize]]
                }),
            ),
        ];
        for (mode, text, want) in cases {
            let sel = Selection::parse(&text).unwrap();
            for (name, store) in [
                ("local", &local),
                ("producer", &producer),
                ("memory", &memory),
            ] {
                let a = open(store, key).await;
                let view = match mode {
                    "basic" => a.view().get(&sel),
                    "oindex" => a.view().oindex(&sel),
                    _ => a.view().vindex(&sel),
                }
                .unwrap();
                let got = view.read::<u16>().await.unwrap();
                assert_eq!(got, want, "{key} {name} {mode} {:.60}", text);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_inner_chunk_is_the_same_typed_error_on_both_routes() {
    let tmp = tempfile::tempdir().unwrap();
    let local = Store::open(tmp.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    write(&local, "a", 16, 4).await;
    // garbage over the start of shard (2, 3): its first inner chunks no longer decode
    let shard = tmp.path().join("a/c/2/3");
    let mut bytes = std::fs::read(&shard).unwrap();
    bytes[..64].fill(0xA5);
    std::fs::write(&shard, &bytes).unwrap();
    let sel = Selection::parse("0:100, 0:100").unwrap();
    let mut errors = Vec::new();
    for store in [&local, &through_producer(tmp.path())] {
        let a = open(store, "a").await;
        let err = a.view().get(&sel).unwrap().read::<u16>().await.unwrap_err();
        errors.push(err);
    }
    assert_eq!(
        std::mem::discriminant(&errors[0]),
        std::mem::discriminant(&errors[1]),
        "{:?} against {:?}",
        errors[0],
        errors[1]
    );
    assert!(errors[0].to_string().contains("c/2/3"), "{}", errors[0]);
    // the shards that decode still read
    let a = open(&local, "a").await;
    let fine = a
        .view()
        .get(&Selection::parse("0:32, 0:32").unwrap())
        .unwrap();
    assert_eq!(fine.read::<u16>().await.unwrap().len(), 32 * 32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_round_read_leaves_the_array_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let local = Store::open(tmp.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let model = write(&local, "a", 16, 4).await;
    let a = open(&local, "a").await;
    let view = a.view().get(&Selection::parse(":, :").unwrap()).unwrap();
    for micros in [1, 50, 200, 1000] {
        // cut short after one of its rounds (the first runs inside the first poll), or
        // done: either way no panic and no hang
        let _ = tokio::time::timeout(Duration::from_micros(micros), view.read::<u16>()).await;
    }
    assert_eq!(view.read::<u16>().await.unwrap(), model);
}

/// Many rounds polled at once on one thread, with one decode thread: every open stays off
/// the runtime (an open that went through the runtime's blocking pool from inside a round
/// could exhaust the task's cooperative budget and spin for ever).
#[tokio::test(flavor = "current_thread")]
async fn many_concurrent_rounds_on_one_thread_finish() {
    let tmp = tempfile::tempdir().unwrap();
    let local = Store::open(tmp.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let model = write(&local, "a", 16, 4).await;
    let options = ArrayOptions::default().with_decode_threads(1);
    let a = Array::open_in(&local, &StoreKey::new("a").unwrap(), options)
        .await
        .unwrap();
    let view = a.view();
    let reads = (0..8).map(|_| view.read::<u16>());
    let all = tokio::time::timeout(Duration::from_secs(120), futures::future::join_all(reads))
        .await
        .expect("the reads finish");
    for got in all {
        assert_eq!(got.unwrap(), model);
    }
}

/// A box over 5 z-rows of inner chunks of a 3-D array: each row is one stretch of the
/// result (5 clusters of one copy round), which do not share out evenly over 2 threads, so
/// (on 2 cores or more) the last is decoded ahead by every copy thread before the copies
/// (that it is, is counted by `read::tests::a_round_of_few_pieces_decodes_the_left_over_ones_ahead`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_of_few_row_clusters_reads_its_values() {
    let tmp = tempfile::tempdir().unwrap();
    let local = Store::open(tmp.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    let memory = Store::memory();
    let n = 96usize;
    let model = ArrayD::from_shape_fn(IxDyn(&[n, n, n]), |ix| {
        value(ix[0] * n + ix[1], ix[2] * 31 + ix[0])
    });
    let spec = ArraySpec::of::<u16>([n as u64; 3])
        .shard_shape([32; 3])
        .inner_chunk_shape([16; 3]);
    for store in [&local, &memory] {
        let a = Array::create(
            store,
            &StoreKey::new("cube").unwrap(),
            &spec,
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        a.view().write(&model.view()).await.unwrap();
    }
    for (text, want) in [
        ("8:72, :, :", model.slice(ndarray::s![8..72, .., ..])),
        (
            "8:72, 3:90, 1:95",
            model.slice(ndarray::s![8..72, 3..90, 1..95]),
        ),
        (
            "20:89:2, 5:, :77",
            model.slice(ndarray::s![20..89;2, 5.., ..77]),
        ),
    ] {
        let sel = Selection::parse(text).unwrap();
        for (name, store) in [("local", &local), ("memory", &memory)] {
            for threads in [1, 2, 3] {
                let options = ArrayOptions::default().with_decode_threads(threads);
                let a = Array::open_in(store, &StoreKey::new("cube").unwrap(), options)
                    .await
                    .unwrap();
                let got = a.view().get(&sel).unwrap().read::<u16>().await.unwrap();
                assert_eq!(got, want.to_owned().into_dyn(), "{name} {text} {threads}");
            }
        }
    }
    // garbage over the first inner chunk of shard (2, 0, 0), in the cluster decoded ahead:
    // a typed error that names the shard, as on the copy path
    let shard = tmp.path().join("cube/c/2/0/0");
    let mut bytes = std::fs::read(&shard).unwrap();
    bytes[..64].fill(0xA5);
    std::fs::write(&shard, &bytes).unwrap();
    let two = ArrayOptions::default().with_decode_threads(2);
    let a = Array::open_in(&local, &StoreKey::new("cube").unwrap(), two)
        .await
        .unwrap();
    let sel = Selection::parse("8:72, :, :").unwrap();
    let err = a.view().get(&sel).unwrap().read::<u16>().await.unwrap_err();
    assert!(err.to_string().contains("c/2/0/0"), "{err}");
    // the rows before it still read
    let sel = Selection::parse("8:64, :, :").unwrap();
    let got = a.view().get(&sel).unwrap().read::<u16>().await.unwrap();
    assert_eq!(
        got,
        model
            .slice(ndarray::s![8..64, .., ..])
            .to_owned()
            .into_dyn()
    );
}
