//! Property test of the write path: random sequences of writes (basic, oindex, vindex with
//! repeated points; arrays and scalars; some in batches) and reads against an in-memory
//! NumPy-semantics model; the stored array equals the model after every step.

use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use object_store::memory::InMemory;
use proptest::prelude::*;
use zarrflow::array::{Array, ArrayOptions, ArrayView, InnerChunkOrder};
use zarrflow::index::{Dialect, Selection, SelectionItem, SelectionMode, Slice};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if n == 0 { 0 } else { (self.0 >> 33) % n }
    }
}

fn selection(rng: &mut Rng, shape: &[u64], mode: SelectionMode) -> Selection {
    let points = 1 + rng.next(6) as usize;
    let items = shape
        .iter()
        .map(|&n| {
            let n = n as i64;
            match rng.next(10) {
                0 | 1 => SelectionItem::Index(rng.next(n as u64) as i64),
                2..=5 if mode != SelectionMode::Basic => {
                    let len = if mode == SelectionMode::Vectorized {
                        points
                    } else {
                        1 + rng.next(5) as usize
                    };
                    let v: Vec<i64> = (0..len)
                        .map(|_| rng.next(n as u64) as i64 - if rng.next(3) == 0 { n } else { 0 })
                        .collect();
                    SelectionItem::Array(ndarray::Array1::from(v).into_dyn())
                }
                _ => {
                    let step = [1, 1, 2, -1, -3][rng.next(5) as usize];
                    let a = rng.next(n as u64 + 1) as i64;
                    let b = rng.next(n as u64 + 1) as i64;
                    SelectionItem::Slice(if step > 0 {
                        Slice::new(a.min(b), a.max(b), step)
                    } else {
                        Slice {
                            start: Some(a.max(b)),
                            stop: None,
                            step: Some(step),
                        }
                    })
                }
            }
        })
        .collect();
    Selection::new(items)
}

/// Applies a write to the model: cells in C order of the view, last write wins.
fn apply_model(model: &mut ArrayD<i32>, view: &ArrayView, values: &ArrayD<i32>) {
    let mut flat = values.iter();
    view.transform()
        .for_each_mapped(|_, out| {
            let idx: Vec<usize> = out.iter().map(|&x| x as usize).collect();
            model[IxDyn(&idx)] = *flat.next().unwrap();
        })
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn random_write_sequences_match_a_model(
        shape in prop::collection::vec(1u64..=9, 1..=3),
        inner in prop::collection::vec(1u64..=3, 3),
        per_shard in prop::collection::vec(1u64..=3, 3),
        sharded in any::<bool>(),
        fill in -3i32..3,
        seed in any::<u64>(),
        steps in 1usize..8,
        order in 0usize..3,
    ) {
        let rank = shape.len();
        let inner = inner[..rank].to_vec();
        let shards: Vec<u64> = inner.iter().zip(&per_shard).map(|(c, k)| c * k).collect();
        let spec = ArraySpec::new(shape.clone(), "int32").fill_value(serde_json::json!(fill)).unwrap();
        // The outer grid's chunk is the shard when sharded, else the chunk itself.
        let spec = if sharded { spec.shard_shape(shards).inner_chunk_shape(inner.clone()) } else { spec.shard_shape(inner.clone()) };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let store = Store::from_object_store(Arc::new(InMemory::new()), "", "memory://p", StoreOptions::default()).unwrap();
            // shards laid out in C, F or Morton order
            let options = ArrayOptions::default().with_inner_chunk_order(InnerChunkOrder::ALL[order]);
            let a = Array::create(&store, &StoreKey::new("a").unwrap(), &spec, options).await.unwrap();
            let dims: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
            let mut model = ArrayD::from_elem(IxDyn(&dims), fill);
            let mut rng = Rng(seed);
            for step in 0..steps {
                let mode = [SelectionMode::Basic, SelectionMode::Outer, SelectionMode::Vectorized][rng.next(3) as usize];
                let sel = selection(&mut rng, &shape, mode);
                let Ok(view) = a.view().select(&sel, mode, Dialect::Positional) else { continue };
                let vshape: Vec<usize> = view.shape().iter().map(|&n| n as usize).collect();
                let scalar = rng.next(4) == 0;
                let values = if scalar {
                    ArrayD::from_elem(IxDyn(&vshape), rng.next(5) as i32 - 2)
                } else {
                    ArrayD::from_shape_fn(IxDyn(&vshape), |_| rng.next(1000) as i32 - 500)
                };
                if scalar {
                    view.write_scalar(values.iter().next().copied().unwrap_or(0)).await.unwrap();
                } else if rng.next(3) == 0 {
                    let mut batch = a.batch();
                    batch.stage(&view, &values.view()).unwrap();
                    batch.commit().await.unwrap();
                } else {
                    view.write(&values.view()).await.unwrap();
                }
                apply_model(&mut model, &view, &values);
                let stored = a.view().read::<i32>().await.unwrap();
                prop_assert_eq!(&stored, &model, "step {} {:?} [{}]", step, mode, sel);
                // A fresh handle (no cache) agrees.
                let fresh = Array::open_in(&store, &StoreKey::new("a").unwrap(), ArrayOptions::default()).await.unwrap();
                prop_assert_eq!(fresh.view().read::<i32>().await.unwrap(), model.clone());
            }
            Ok(())
        })?;
    }
}
