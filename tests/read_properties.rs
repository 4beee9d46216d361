//! Property test of the read path: random arrays written by zarrs (an independent writer)
//! into random shard / inner-chunk layouts, partly written (so shards and inner chunks are
//! missing), read by zarrflow through random basic, oindex and vindex selections, compared
//! with the transform applied to the in-memory reference.

use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::{Dialect, Selection, SelectionItem, SelectionMode, Slice};
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrs::array::codec::{ShardingCodecBuilder, ShardingIndexLocation, ZstdCodec};
use zarrs::array::{ArrayBuilder, ArraySubset, data_type};
use zarrs::filesystem::FilesystemStore;

#[derive(Debug, Clone)]
struct Layout {
    shape: Vec<u64>,
    inner: Vec<u64>,
    per_shard: Vec<u64>,
    sharded: bool,
    index_at_start: bool,
    fill: u16,
    writes: Vec<(Vec<u64>, Vec<u64>)>,
}

fn layout() -> impl Strategy<Value = Layout> {
    (1usize..=3)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(1u64..=11, rank),
                prop::collection::vec(1u64..=3, rank),
                prop::collection::vec(1u64..=3, rank),
                any::<bool>(),
                any::<bool>(),
                any::<u16>(),
                prop::collection::vec(
                    (
                        prop::collection::vec(0.0f64..1.0, rank),
                        prop::collection::vec(0.0f64..1.0, rank),
                    ),
                    0..4,
                ),
            )
        })
        .prop_map(
            |(shape, inner, per_shard, sharded, index_at_start, fill, boxes)| {
                let writes = boxes
                    .into_iter()
                    .map(|(a, b)| {
                        let start: Vec<u64> = a
                            .iter()
                            .zip(&shape)
                            .map(|(f, &n)| (f * n as f64) as u64)
                            .collect();
                        let size: Vec<u64> = b
                            .iter()
                            .zip(&shape)
                            .zip(&start)
                            .map(|((f, &n), &s)| 1 + (f * (n - s) as f64) as u64 % (n - s))
                            .collect();
                        (start, size)
                    })
                    .collect();
                Layout {
                    shape,
                    inner,
                    per_shard,
                    sharded,
                    index_at_start,
                    fill,
                    writes,
                }
            },
        )
}

/// Writes the layout with zarrs into `dir`; returns the reference contents.
fn write_with_zarrs(l: &Layout, dir: &std::path::Path, seed: u64) -> ArrayD<u16> {
    zarrs::config::global_config_mut().set_include_zarrs_metadata(false);
    let store = Arc::new(FilesystemStore::new(dir).unwrap());
    let outer: Vec<u64> = l
        .inner
        .iter()
        .zip(&l.per_shard)
        .map(|(c, k)| c * k)
        .collect();
    let mut b = ArrayBuilder::new(
        l.shape.clone(),
        if l.sharded {
            outer.clone()
        } else {
            l.inner.clone()
        },
        data_type::uint16(),
        l.fill,
    );
    if l.sharded {
        let mut sb = ShardingCodecBuilder::new(
            l.inner
                .iter()
                .map(|&c| std::num::NonZeroU64::new(c).unwrap())
                .collect(),
            &data_type::uint16(),
        );
        sb.bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(1, false))]);
        sb.index_location(if l.index_at_start {
            ShardingIndexLocation::Start
        } else {
            ShardingIndexLocation::End
        });
        b.array_to_bytes_codec(sb.build_arc());
    } else {
        b.bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(1, false))]);
    }
    let array = b.build(store, "/a").unwrap();
    array.store_metadata().unwrap();
    let shape: Vec<usize> = l.shape.iter().map(|&n| n as usize).collect();
    let mut reference = ArrayD::from_elem(IxDyn(&shape), l.fill);
    let mut v = seed;
    for (start, size) in &l.writes {
        let n: u64 = size.iter().product();
        let values: Vec<u16> = (0..n)
            .map(|_| {
                v = v
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (v >> 48) as u16
            })
            .collect();
        let ranges: Vec<std::ops::Range<u64>> =
            start.iter().zip(size).map(|(&s, &k)| s..s + k).collect();
        array
            .store_array_subset(&ArraySubset::new_with_ranges(&ranges), values.clone())
            .unwrap();
        let mut it = values.into_iter();
        let block = ArrayD::from_shape_fn(
            IxDyn(&size.iter().map(|&k| k as usize).collect::<Vec<_>>()),
            |_| it.next().unwrap(),
        );
        let mut region = reference.slice_each_axis_mut(|ax| {
            let d = ax.axis.index();
            ndarray::Slice::from(start[d] as usize..(start[d] + size[d]) as usize)
        });
        region.assign(&block);
    }
    reference
}

/// A random positional selection for `shape` in `mode`, from a seed.
fn selection(shape: &[u64], mode: SelectionMode, mut seed: u64) -> Selection {
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if n == 0 { 0 } else { (seed >> 33) % n }
    };
    let points = 1 + next(5) as usize;
    let mut items = Vec::new();
    for &n in shape {
        let n = n as i64;
        let pick = next(10);
        let item = if pick < 2 {
            SelectionItem::Index(next(n as u64) as i64 - if next(2) == 0 { n } else { 0 })
        } else if pick < 6 && mode != SelectionMode::Basic {
            let len = if mode == SelectionMode::Vectorized {
                points
            } else {
                next(6) as usize
            };
            let v: Vec<i64> = (0..len).map(|_| next(n as u64) as i64).collect();
            SelectionItem::Array(ndarray::Array1::from(v).into_dyn())
        } else {
            let step = [1, 1, 2, 3, -1, -2][next(6) as usize];
            let a = next(n as u64 + 1) as i64;
            let b = next(n as u64 + 1) as i64;
            let (start, stop) = if step > 0 {
                (a.min(b), a.max(b))
            } else {
                (a.max(b), a.min(b) - 1)
            };
            SelectionItem::Slice(Slice {
                start: Some(start),
                stop: if stop < 0 { None } else { Some(stop) },
                step: Some(step),
            })
        };
        items.push(item);
    }
    Selection::new(items)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn zarrs_written_arrays_read_back_through_random_selections(l in layout(), seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let reference = write_with_zarrs(&l, dir.path(), seed);
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
            let array = Array::open_in(&store, &StoreKey::new("a").unwrap(), ArrayOptions::default()).await.unwrap();
            let whole = array.view().read::<u16>().await.unwrap();
            prop_assert_eq!(&whole, &reference);
            for (k, mode) in [SelectionMode::Basic, SelectionMode::Outer, SelectionMode::Vectorized].into_iter().enumerate() {
                let sel = selection(&l.shape, mode, seed ^ (k as u64 + 1));
                let view = match array.view().select(&sel, mode, Dialect::Positional) {
                    Ok(v) => v,
                    Err(e) => {
                        prop_assert!(matches!(mode, SelectionMode::Vectorized), "{sel}: {e}");
                        continue;
                    }
                };
                let got = view.read::<u16>().await.unwrap();
                let want = view.transform().gather_from(&reference).unwrap();
                prop_assert_eq!(got, want, "{:?} [{}] on {:?}", mode, sel, l);
            }
            Ok(())
        })?;
    }
}
