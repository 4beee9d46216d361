//! The write path: request counts, byte reuse of untouched inner chunks, fill elision,
//! semantics (broadcast, last-wins, checks before any write), batches and concurrency.

mod common;

use bytes::Bytes;
use ndarray::{ArrayD, IxDyn, array};
use object_store::memory::InMemory;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::codec::ShardIndex;
use zarrflow::metadata::ArraySpec;
use zarrflow::sel;
use zarrflow::store::StoreKey;
use zarrflow::store::wrappers::{CountingStore, RequestKind};

async fn setup(spec: ArraySpec) -> (Array, CountingStore<InMemory>) {
    common::counted_memory_array(&spec).await
}

/// uint16 [8, 16], shards [4, 8], inner chunks [2, 4], zstd inside, index at the end.
fn sharded_spec() -> ArraySpec {
    ArraySpec::new(vec![8, 16], "uint16")
        .shard_shape(vec![4, 8])
        .inner_chunk_shape(vec![2, 4])
}

fn counting_pattern(shape: &[usize]) -> ArrayD<u16> {
    let mut k = 0u16;
    ArrayD::from_shape_fn(IxDyn(shape), |_| {
        k += 1;
        k
    })
}

async fn shard_index(a: &Array, key: &str) -> (Bytes, ShardIndex) {
    let sharding = a.metadata().codecs().sharding().unwrap().clone();
    let codec = sharding.index_codec(&[4, 8]).unwrap();
    let bytes = a.store().get(&StoreKey::new(key).unwrap()).await.unwrap();
    let index = codec.decode_from_shard(&bytes, key).unwrap();
    (bytes, index)
}

#[tokio::test]
async fn whole_shard_write_makes_one_put_and_no_get() {
    let (a, counting) = setup(sharded_spec()).await;
    let values = counting_pattern(&[4, 8]);
    a.view()
        .get(&sel![0..4, 8..16])
        .unwrap()
        .write(&values.view())
        .await
        .unwrap();
    let c = counting.counts();
    assert_eq!(
        (c.put, c.gets(), c.head, c.delete),
        (1, 0, 0, 0),
        "{:?}",
        counting.log()
    );
    let back = a
        .view()
        .get(&sel![0..4, 8..16])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    assert_eq!(back, values);
    // The whole array: one PUT per shard, no read.
    counting.reset();
    a.view()
        .write(&counting_pattern(&[8, 16]).view())
        .await
        .unwrap();
    let c = counting.counts();
    assert_eq!((c.put, c.gets()), (4, 0));
}

#[tokio::test]
async fn covering_one_inner_chunk_reads_the_shard_once_and_decodes_nothing() {
    let (a, counting) = setup(sharded_spec()).await;
    a.view()
        .write(&counting_pattern(&[8, 16]).view())
        .await
        .unwrap();
    let (before, index) = shard_index(&a, "a/c/0/0").await;
    // Corrupt every inner chunk's payload (not the index): decoding any of them would fail,
    // so the write below proves untouched and fully covered inner chunks are never decoded.
    let mut corrupt = before.to_vec();
    for i in 0..index.len() {
        let r = index.get(i).unwrap();
        for b in &mut corrupt[r.start as usize..r.end as usize] {
            *b ^= 0x5a;
        }
    }
    a.store()
        .put(
            &StoreKey::new("a/c/0/0").unwrap(),
            Bytes::from(corrupt.clone()),
        )
        .await
        .unwrap();
    counting.reset();
    // Inner chunk (1, 1) of shard (0, 0): rows 2..4, columns 4..8.
    a.view()
        .get(&sel![2..4, 4..8])
        .unwrap()
        .write(&ArrayD::from_elem(IxDyn(&[2, 4]), 7u16).view())
        .await
        .unwrap();
    let c = counting.counts();
    assert_eq!(
        (c.get, c.get_range, c.put),
        (1, 0, 1),
        "{:?}",
        counting.log()
    );
    // Byte reuse: every untouched inner chunk's encoded bytes are identical to before.
    let (after, new_index) = shard_index(&a, "a/c/0/0").await;
    let touched = 3; // inner chunk (1, 1) in C order over the 2 x 2 inner grid
    for i in 0..index.len() {
        if i == touched {
            continue;
        }
        let (r0, r1) = (index.get(i).unwrap(), new_index.get(i).unwrap());
        assert_eq!(
            &corrupt[r0.start as usize..r0.end as usize],
            &after[r1.start as usize..r1.end as usize],
            "inner chunk {i}"
        );
    }
    let v = a
        .view()
        .get(&sel![2..4, 4..8])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    assert!(v.iter().all(|&x| x == 7));
}

#[tokio::test]
async fn untouched_inner_chunks_keep_their_bytes_after_a_partial_write() {
    let (a, _) = setup(sharded_spec()).await;
    a.view()
        .write(&counting_pattern(&[8, 16]).view())
        .await
        .unwrap();
    let (before, index) = shard_index(&a, "a/c/1/1").await;
    // A partial write of inner chunk (0, 0) of shard (1, 1): one cell.
    a.view()
        .get(&sel![4, 8])
        .unwrap()
        .write_scalar(999u16)
        .await
        .unwrap();
    let (after, new_index) = shard_index(&a, "a/c/1/1").await;
    for i in 1..index.len() {
        let (r0, r1) = (index.get(i).unwrap(), new_index.get(i).unwrap());
        assert_eq!(
            &before[r0.start as usize..r0.end as usize],
            &after[r1.start as usize..r1.end as usize]
        );
    }
    let whole = a.view().read::<u16>().await.unwrap();
    let mut want = counting_pattern(&[8, 16]);
    want[[4, 8]] = 999;
    assert_eq!(whole, want);
}

#[tokio::test]
async fn writing_the_fill_value_deletes_inner_chunks_and_empty_shards() {
    let (a, counting) = setup(sharded_spec()).await;
    a.view()
        .get(&sel![0..4, 0..8])
        .unwrap()
        .write(&counting_pattern(&[4, 8]).view())
        .await
        .unwrap();
    // Half of the shard back to fill: two inner chunks elided from the index.
    a.view()
        .get(&sel![0..2, 0..8])
        .unwrap()
        .write_scalar(0u16)
        .await
        .unwrap();
    let (_, index) = shard_index(&a, "a/c/0/0").await;
    assert_eq!((0..4).filter(|&i| index.get(i).is_some()).count(), 2);
    // The rest: a partial write that makes the shard all-fill deletes it.
    counting.reset();
    a.view()
        .get(&sel![2..4, 0..8])
        .unwrap()
        .write_scalar(0u16)
        .await
        .unwrap();
    let c = counting.counts();
    assert_eq!((c.delete, c.put), (1, 0), "{:?}", counting.log());
    assert!(
        a.store()
            .get_opt(&StoreKey::new("a/c/0/0").unwrap())
            .await
            .unwrap()
            .is_none()
    );
    // A whole-shard write of the fill value deletes without reading.
    a.view()
        .get(&sel![4..8, 8..16])
        .unwrap()
        .write_scalar(5u16)
        .await
        .unwrap();
    counting.reset();
    a.view()
        .get(&sel![4..8, 8..16])
        .unwrap()
        .write_scalar(0u16)
        .await
        .unwrap();
    let c = counting.counts();
    assert_eq!((c.delete, c.gets(), c.put), (1, 0, 0));
    // Unsharded: a chunk equal to the fill value is deleted; an option keeps it.
    let spec = ArraySpec::new(vec![4, 4], "int32").shard_shape(vec![2, 2]);
    assert!(spec.build().unwrap().codecs().sharding().is_none());
    let (u, counting) = setup(spec.clone()).await;
    u.view()
        .get(&sel![0..2, 0..2])
        .unwrap()
        .write_scalar(3i32)
        .await
        .unwrap();
    u.view()
        .get(&sel![0..2, 0..2])
        .unwrap()
        .write_scalar(0i32)
        .await
        .unwrap();
    assert!(
        u.store()
            .list_prefix(&StoreKey::new("a/c").unwrap())
            .await
            .unwrap()
            .is_empty()
    );
    let _ = counting;
    let store = u.store().clone();
    let keep = Array::create(
        &store,
        &StoreKey::new("k").unwrap(),
        &spec,
        ArrayOptions::default().with_store_empty_chunks(true),
    )
    .await
    .unwrap();
    keep.view()
        .get(&sel![0..2, 0..2])
        .unwrap()
        .write_scalar(0i32)
        .await
        .unwrap();
    assert_eq!(
        store
            .list_prefix(&StoreKey::new("k/c").unwrap())
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_batch_of_small_writes_touches_the_shard_once() {
    let (a, counting) = setup(
        ArraySpec::new(vec![64, 64], "uint16")
            .shard_shape(vec![32, 32])
            .inner_chunk_shape(vec![8, 8]),
    )
    .await;
    a.view()
        .get(&sel![0..32, 0..32])
        .unwrap()
        .write_scalar(1u16)
        .await
        .unwrap();
    counting.reset();
    let mut batch = a.batch();
    for i in 0..100i64 {
        let v = a.view().get(&sel![i % 32, (i * 7) % 32]).unwrap();
        batch.stage_scalar(&v, i as u16 + 10).unwrap();
    }
    assert_eq!(batch.len(), 100);
    batch.commit().await.unwrap();
    let c = counting.counts();
    assert_eq!((c.gets(), c.put), (1, 1), "{:?}", counting.log());
    let whole = a.view().read::<u16>().await.unwrap();
    let mut model = ArrayD::from_elem(IxDyn(&[64, 64]), 0u16);
    model.slice_mut(ndarray::s![0..32, 0..32]).fill(1);
    for i in 0..100usize {
        model[[i % 32, (i * 7) % 32]] = i as u16 + 10; // later staged writes win
    }
    assert_eq!(whole, model);
    // Without a batch, 100 writes are 100 read-modify-writes.
    counting.reset();
    for i in 0..100i64 {
        a.view()
            .get(&sel![i % 32, 5])
            .unwrap()
            .write_scalar(3u16)
            .await
            .unwrap();
    }
    let c = counting.counts();
    assert_eq!((c.gets(), c.put), (100, 100));
    // A dropped batch writes nothing.
    counting.reset();
    let mut dropped = a.batch();
    dropped.stage_scalar(&a.view(), 9u16).unwrap();
    drop(dropped);
    assert_eq!(counting.counts().total(), 0);
}

#[tokio::test]
async fn semantics_broadcast_last_wins_and_checks_before_any_write() {
    let (a, counting) = setup(sharded_spec()).await;
    // Broadcast a row to a 2-D selection, and [[17]] to anything.
    a.view()
        .get(&sel![0..3, 0..4])
        .unwrap()
        .write(&array![1u16, 2, 3, 4].into_dyn().view())
        .await
        .unwrap();
    a.view()
        .get(&sel![5, 3..6])
        .unwrap()
        .write(&array![[17u16]].into_dyn().view())
        .await
        .unwrap();
    let w = a.view().read::<u16>().await.unwrap();
    assert_eq!(
        w.slice(ndarray::s![0..3, 0..4]).to_owned(),
        array![[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]
    );
    assert_eq!(w.slice(ndarray::s![5, 3..6]).to_vec(), vec![17, 17, 17]);
    // Repeated points: the last value in C order wins (oindex and vindex).
    a.view()
        .oindex(&sel![[1, 6, 1], 0])
        .unwrap()
        .write(&array![7u16, 8, 9].into_dyn().view())
        .await
        .unwrap();
    a.view()
        .vindex(&sel![[2, 2, 7], [9, 9, 15]])
        .unwrap()
        .write(&array![1u16, 2, 3].into_dyn().view())
        .await
        .unwrap();
    let w = a.view().read::<u16>().await.unwrap();
    assert_eq!((w[[1, 0]], w[[6, 0]], w[[2, 9]], w[[7, 15]]), (9, 8, 2, 3));
    counting.reset();
    // Errors come before any request: shape mismatch, type mismatch, bad bool bytes.
    let bad = a
        .view()
        .get(&sel![0..2, 0..4])
        .unwrap()
        .write(&array![1u16, 2, 3].into_dyn().view())
        .await;
    assert!(matches!(bad, Err(ArrayError::ShapeMismatch(_))), "{bad:?}");
    let empty = a
        .view()
        .get(&sel![0..0, 0..4])
        .unwrap()
        .write(&array![1u16, 2, 3].into_dyn().view())
        .await;
    assert!(
        matches!(empty, Err(ArrayError::ShapeMismatch(_))),
        "an empty selection still checks shapes"
    );
    let wrong_type = a.view().write_scalar(1.5f32).await;
    assert!(matches!(
        wrong_type,
        Err(ArrayError::DataTypeMismatch { .. })
    ));
    assert!(
        a.view()
            .get(&sel![0..0, ..])
            .unwrap()
            .write_scalar(1u16)
            .await
            .is_ok()
    );
    assert_eq!(counting.counts().total(), 0, "{:?}", counting.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_to_one_shard_lose_nothing() {
    let (a, _) = setup(
        ArraySpec::new(vec![16, 16], "uint32")
            .shard_shape(vec![16, 16])
            .inner_chunk_shape(vec![4, 4]),
    )
    .await;
    let tasks: Vec<_> = (0..16)
        .map(|row| {
            let a = a.clone();
            tokio::spawn(async move {
                let v = a
                    .view()
                    .get(&zarrflow::index::Selection::parse(&format!("{row}, :")).unwrap())
                    .unwrap();
                v.write(&ArrayD::from_shape_fn(IxDyn(&[16]), |i| (row * 100 + i[0]) as u32).view())
                    .await
                    .unwrap();
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let w = a.view().read::<u32>().await.unwrap();
    for r in 0..16 {
        for c in 0..16 {
            assert_eq!(w[[r, c]], (r * 100 + c) as u32);
        }
    }
    // Across array handles (separate lock tables), conditional PUTs on the memory store retry.
    let b = Array::open_in(
        a.store(),
        &StoreKey::new("a").unwrap(),
        ArrayOptions::default(),
    )
    .await
    .unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|row| {
            let h = if row % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move {
                let v = h
                    .view()
                    .get(&zarrflow::index::Selection::parse(&format!("{row}, :")).unwrap())
                    .unwrap();
                v.write_scalar(row as u32 + 1).await.unwrap();
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let w = a.view().read::<u32>().await.unwrap();
    for r in 0..16 {
        let row = w.index_axis(ndarray::Axis(0), r);
        assert!(row.iter().all(|&x| x == r as u32 + 1), "row {r}: {row:?}");
    }
}

#[tokio::test]
async fn partial_write_into_a_missing_shard_creates_it_with_fill_elsewhere() {
    let spec = sharded_spec().fill_value(serde_json::json!(42)).unwrap();
    let (a, counting) = setup(spec).await;
    a.view()
        .get(&sel![1, 1])
        .unwrap()
        .write_scalar(5u16)
        .await
        .unwrap();
    let log = counting.log();
    assert_eq!(log.iter().filter(|r| r.kind == RequestKind::Put).count(), 1);
    let w = a
        .view()
        .get(&sel![0..4, 0..8])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    assert_eq!(w.iter().filter(|&&x| x == 42).count(), 31);
    assert_eq!(w[[1, 1]], 5);
    let (_, index) = shard_index(&a, "a/c/0/0").await;
    assert_eq!(
        (0..4).filter(|&i| index.get(i).is_some()).count(),
        1,
        "only the touched inner chunk is stored"
    );
}

#[tokio::test]
async fn diagonal_transforms_read_and_write_through_shards() {
    use zarrflow::index::{IndexDomain, IndexTransform, OutputIndexMap};
    let (a, _) = setup(
        ArraySpec::new(vec![8, 8], "uint16")
            .shard_shape(vec![4, 4])
            .inner_chunk_shape(vec![2, 2]),
    )
    .await;
    let values = counting_pattern(&[8, 8]);
    a.view().write(&values.view()).await.unwrap();
    // An affine diagonal (two output maps read input dimension 0) and an anti-diagonal.
    let diag = IndexTransform::new(
        IndexDomain::from_shape(&[8]).unwrap(),
        vec![
            OutputIndexMap::dimension(0, 0, 1),
            OutputIndexMap::dimension(0, 0, 1),
        ],
    )
    .unwrap();
    let anti = IndexTransform::new(
        IndexDomain::from_shape(&[8]).unwrap(),
        vec![
            OutputIndexMap::dimension(0, 0, 1),
            OutputIndexMap::dimension(0, 7, -1),
        ],
    )
    .unwrap();
    let d = a
        .view()
        .transformed(&diag)
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    assert_eq!(
        d.iter().copied().collect::<Vec<_>>(),
        (0..8).map(|i| values[[i, i]]).collect::<Vec<_>>()
    );
    let v = a.view().transformed(&anti).unwrap();
    assert_eq!(
        v.read::<u16>()
            .await
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        (0..8).map(|i| values[[i, 7 - i]]).collect::<Vec<_>>()
    );
    v.write(
        &ndarray::Array1::from(vec![900u16, 901, 902, 903, 904, 905, 906, 907])
            .into_dyn()
            .view(),
    )
    .await
    .unwrap();
    let w = a.view().read::<u16>().await.unwrap();
    let mut want = values.clone();
    for i in 0..8 {
        want[[i, 7 - i]] = 900 + i as u16;
    }
    assert_eq!(w, want);
}

/// Covering writes gather every inner chunk without padding into a reused buffer
/// (`array/scratch.rs`): the edge chunks, whose padding lies beyond the array, must still
/// start from the fill value, and nothing of an earlier chunk may reach another's bytes.
#[tokio::test]
async fn covering_writes_keep_fill_in_the_padding_of_edge_inner_chunks() {
    let spec = ArraySpec::new(vec![7, 15], "uint16")
        .shard_shape(vec![4, 8])
        .inner_chunk_shape(vec![2, 4])
        .fill_value(serde_json::json!(9))
        .unwrap();
    let (a, _) = setup(spec).await;
    for round in 0..2u16 {
        let values = ArrayD::from_shape_fn(IxDyn(&[7, 15]), |ix| {
            (100 * (round + 1)) + (ix[0] * 15 + ix[1]) as u16
        });
        a.view().write(&values.view()).await.unwrap();
        assert_eq!(a.view().read::<u16>().await.unwrap(), values);
        let meta = a.metadata();
        let sharding = meta.codecs().sharding().unwrap().clone();
        for (sy, sx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let key = format!("a/c/{sy}/{sx}");
            let (bytes, index) = shard_index(&a, &key).await;
            for i in 0..4usize {
                let Some(r) = index.get(i) else {
                    panic!("{key}: inner chunk {i} missing")
                };
                let decoded = sharding
                    .inner()
                    .decode(
                        &bytes[r.start as usize..r.end as usize],
                        &[2, 4],
                        meta.exec_data_type(),
                        meta.exec_fill_value(),
                        &key,
                    )
                    .unwrap();
                let (iy, ix) = (i / 2, i % 2);
                for (k, cell) in decoded.chunks_exact(2).enumerate() {
                    let (y, x) = (sy * 4 + iy * 2 + k / 4, sx * 8 + ix * 4 + k % 4);
                    let got = u16::from_ne_bytes([cell[0], cell[1]]);
                    let want = if y < 7 && x < 15 { values[[y, x]] } else { 9 };
                    assert_eq!(got, want, "{key} inner {i} cell {k} (round {round})");
                }
            }
        }
    }
}

/// Several writes on one inner chunk, one of them covering it (so it starts from the
/// thread's scratch buffer, holding another chunk's bytes): the writes before the covering
/// one are overwritten, those after it land on top, as in the order staged; scalar and
/// broadcast covering writes too.
#[tokio::test]
async fn a_covering_write_among_others_on_one_inner_chunk_keeps_the_staged_order() {
    let (a, _) = setup(sharded_spec()).await;
    let first = counting_pattern(&[8, 16]);
    a.view().write(&first.view()).await.unwrap();
    let mut model = first.clone();
    let mut batch = a.batch();
    // inner chunk [0..2, 0..4]: a cell, the whole chunk, then a cell again
    batch
        .stage_scalar(&a.view().get(&sel![0, 1]).unwrap(), 500u16)
        .unwrap();
    let cover = ArrayD::from_shape_fn(IxDyn(&[2, 4]), |ix| 1000 + (ix[0] * 4 + ix[1]) as u16);
    batch
        .stage(&a.view().get(&sel![0..2, 0..4]).unwrap(), &cover)
        .unwrap();
    model.slice_mut(ndarray::s![0..2, 0..4]).assign(&cover);
    batch
        .stage_scalar(&a.view().get(&sel![1, 2]).unwrap(), 600u16)
        .unwrap();
    model[[1, 2]] = 600;
    // inner chunk [2..4, 4..8]: one value everywhere
    batch
        .stage_scalar(&a.view().get(&sel![2..4, 4..8]).unwrap(), 77u16)
        .unwrap();
    model.slice_mut(ndarray::s![2..4, 4..8]).fill(77);
    // inner chunk [4..6, 12..16]: a row broadcast to both rows, then one cell
    batch
        .stage(
            &a.view().get(&sel![4..6, 12..16]).unwrap(),
            &array![31u16, 32, 33, 34].into_dyn(),
        )
        .unwrap();
    for y in 4..6 {
        for (i, x) in (12..16).enumerate() {
            model[[y, x]] = 31 + i as u16;
        }
    }
    batch
        .stage_scalar(&a.view().get(&sel![5, 15]).unwrap(), 99u16)
        .unwrap();
    model[[5, 15]] = 99;
    batch.commit().await.unwrap();
    assert_eq!(a.view().read::<u16>().await.unwrap(), model);
}
