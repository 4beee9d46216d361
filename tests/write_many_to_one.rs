//! Writes through transforms that map many request cells onto few array cells (stride-0
//! maps, broadcast index arrays, repeated points) and values broadcast over such domains:
//! a write visits the cells it changes, never every cell of the domain, and the last cell
//! in C order of the request wins — NumPy's rule, and what TensorStore does (checked with
//! tensorstore 0.1 on the cases of `array_values_keep_the_last_value_in_c_order`).
//!
//! The huge domains (10^18, 10^12 cells) are the point: before, a scalar write visited
//! every cell of the domain (hours, the test timeout catches a hang) and broadcast values
//! were materialised over the domain first (refused as too large).

mod common;

use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use object_store::memory::InMemory;
use proptest::prelude::*;
use zarrflow::array::{Array, ArrayOptions, ArrayView};
use zarrflow::index::{IndexDomain, IndexTransform, OutputIndexMap};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};

/// 10^9 × 10^9 request cells, all on the cell `[5, 7]`.
const STRIDE_ZERO: &str = r#"{"input_shape": [1000000000, 1000000000], "output": [
    {"input_dimension": 0, "offset": 5, "stride": 0},
    {"input_dimension": 1, "offset": 7, "stride": 0}]}"#;

/// The only cell of `a` (of shape 20 × 20) that is not the fill value 0.
async fn only_cell(a: &Array) -> Vec<(usize, usize, u8)> {
    let all = a.view().read::<u8>().await.unwrap();
    all.indexed_iter()
        .filter(|(_, v)| **v != 0)
        .map(|(i, v)| (i[0], i[1], *v))
        .collect()
}

#[tokio::test]
async fn a_scalar_through_a_stride_0_transform_over_10_pow_18_cells_writes_one_cell() {
    let spec = ArraySpec::new(vec![20, 20], "uint8").shard_shape(vec![4, 4]);
    let (a, counting) = common::counted_memory_array(&spec).await;
    let view = a.view().transformed_json(STRIDE_ZERO).unwrap();
    let explain = view.explain_write().await.unwrap();
    assert_eq!(explain.targets.len(), 1);
    assert_eq!(explain.targets[0].coords, [1, 1]);
    view.write_scalar(3u8).await.unwrap();
    assert_eq!(only_cell(&a).await, [(5, 7, 3)]);
    let counts = counting.counts();
    // the chunk (partly written) is read once and written once; then the whole-array read
    assert_eq!(counts.put, 1, "{counting}");
    // a value array broadcast over the same domain: the last value (there is one) wins
    view.write(&ndarray::arr2(&[[9u8]])).await.unwrap();
    assert_eq!(only_cell(&a).await, [(5, 7, 9)]);
}

#[tokio::test]
async fn a_stride_0_write_into_a_sharded_array_rewrites_one_inner_chunk() {
    let spec = ArraySpec::new(vec![20, 20], "uint8")
        .shard_shape(vec![10, 10])
        .inner_chunk_shape(vec![5, 5]);
    let (a, counting) = common::counted_memory_array(&spec).await;
    a.view().write_scalar(1u8).await.unwrap();
    let view = a.view().transformed_json(STRIDE_ZERO).unwrap();
    let explain = view.explain_write().await.unwrap();
    assert_eq!(explain.targets.len(), 1);
    let inner = explain.targets[0].inner_chunks.as_ref().unwrap();
    assert_eq!(inner.rewritten, 1, "{explain}");
    counting.reset();
    view.write_scalar(3u8).await.unwrap();
    let counts = counting.counts();
    assert_eq!((counts.gets(), counts.put), (1, 1), "{counting}");
    let all = a.view().read::<u8>().await.unwrap();
    assert_eq!(all[[5, 7]], 3);
    assert_eq!(all.iter().filter(|&&v| v == 1).count(), 399);
}

#[tokio::test]
async fn a_broadcast_index_array_over_10_pow_12_cells_writes_its_image() {
    let spec = ArraySpec::new(vec![20, 20], "uint8").shard_shape(vec![4, 4]);
    let (a, _) = common::counted_memory_array(&spec).await;
    // [[5]] and [[7]] broadcast over 10^6 × 10^6 cells: the cell [5, 7]
    let one = r#"{"input_shape": [1000000, 1000000], "output": [
        {"index_array": [[5]]}, {"index_array": [[7]]}]}"#;
    a.view()
        .transformed_json(one)
        .unwrap()
        .write_scalar(4u8)
        .await
        .unwrap();
    assert_eq!(only_cell(&a).await, [(5, 7, 4)]);
    // rows 2 and 6 of column 9, each 10^12 times
    let two = r#"{"input_shape": [2, 1000000000000], "output": [
        {"index_array": [[2], [6]]}, {"offset": 9}]}"#;
    let view = a.view().transformed_json(two).unwrap();
    view.write_scalar(8u8).await.unwrap();
    assert_eq!(only_cell(&a).await, [(2, 9, 8), (5, 7, 4), (6, 9, 8)]);
    // values of shape [2, 1], broadcast over the 10^12 columns, never materialised
    view.write(&ndarray::arr2(&[[11u8], [12]])).await.unwrap();
    assert_eq!(only_cell(&a).await, [(2, 9, 11), (5, 7, 4), (6, 9, 12)]);
}

#[tokio::test]
async fn values_broadcast_over_a_huge_domain_are_not_materialised() {
    // TensorStore writes [7, 8, 9] over a [10^9, 3] domain at once; 3 * 10^12 bytes here
    let spec = ArraySpec::new(vec![10], "uint8").shard_shape(vec![5]);
    let (a, _) = common::counted_memory_array(&spec).await;
    let json = r#"{"input_shape": [1000000000000, 3], "output": [{"input_dimension": 1}]}"#;
    let view = a.view().transformed_json(json).unwrap();
    view.write(&ndarray::arr1(&[7u8, 8, 9])).await.unwrap();
    let all = a.view().read::<u8>().await.unwrap();
    assert_eq!(
        all.into_raw_vec_and_offset().0,
        [7, 8, 9, 0, 0, 0, 0, 0, 0, 0]
    );
}

/// The array `[10]` of `uint32` after the writes of
/// `array_values_keep_the_last_value_in_c_order`; tensorstore 0.1 gives the same.
const LAST_WRITER: [u32; 10] = [8, 9, 40, 11, 0, 30, 27, 31, 0, 0];

fn many_to_one_transforms() -> Vec<(IndexTransform, ArrayD<u32>)> {
    let domain = IndexDomain::from_shape(&[3, 4]).unwrap();
    let arange =
        |add: u32| ArrayD::from_shape_fn(IxDyn(&[3, 4]), |i| (i[0] * 4 + i[1]) as u32 + add);
    vec![
        // input axis 0 unread: cell x gets the last row's value
        (
            IndexTransform::new(domain.clone(), vec![OutputIndexMap::dimension(1, 0, 1)]).unwrap(),
            arange(0),
        ),
        // input axis 1 unread: cell 5 + x gets the last column's value
        (
            IndexTransform::new(domain, vec![OutputIndexMap::dimension(0, 5, 1)]).unwrap(),
            arange(20),
        ),
        // repeated points: the last of each wins
        (
            IndexTransform::from_json_str(
                r#"{"input_shape": [4], "output": [{"index_array": [2, 2, 5, 2]}]}"#,
            )
            .unwrap(),
            ndarray::arr1(&[10u32, 20, 30, 40]).into_dyn(),
        ),
    ]
}

#[tokio::test]
async fn array_values_keep_the_last_value_in_c_order() {
    for sharded in [false, true] {
        let spec = ArraySpec::new(vec![10], "uint32");
        let spec = if sharded {
            spec.shard_shape(vec![10]).inner_chunk_shape(vec![5])
        } else {
            spec.shard_shape(vec![5])
        };
        // one write after the other, and the same writes in one batch
        let (a, _) = common::counted_memory_array(&spec).await;
        for (t, values) in many_to_one_transforms() {
            a.view()
                .transformed(&t)
                .unwrap()
                .write(&values.view())
                .await
                .unwrap();
        }
        assert_eq!(
            a.view()
                .read::<u32>()
                .await
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            LAST_WRITER
        );
        let (b, counting) = common::counted_memory_array(&spec).await;
        let mut batch = b.batch();
        for (t, values) in many_to_one_transforms() {
            batch
                .stage(&b.view().transformed(&t).unwrap(), &values.view())
                .unwrap();
        }
        batch.commit().await.unwrap();
        assert_eq!(
            b.view()
                .read::<u32>()
                .await
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            LAST_WRITER
        );
        // a batch touches each shard (or chunk) once
        assert_eq!(
            counting.counts().put,
            if sharded { 1 } else { 2 },
            "{counting}"
        );
    }
}

// ---- property: random many-to-one writes, alone and in batches, against a model ----

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

/// A transform onto the array (`shape`) whose request has extra broadcast axes and whose
/// maps are shifted identities, stride-0 maps or index arrays with repeats, possibly
/// sharing input axes.
fn many_to_one(rng: &mut Rng, shape: &[u64]) -> IndexTransform {
    let rank = shape.len() + rng.next(3) as usize;
    let extents: Vec<u64> = (0..rank).map(|_| 1 + rng.next(4)).collect();
    let maps = shape
        .iter()
        .map(|&n| {
            let axis = rng.next(rank as u64) as usize;
            let e = extents[axis];
            match rng.next(4) {
                0 => OutputIndexMap::dimension(axis, rng.next(n) as i64, 0),
                1 => {
                    let mut ashape = vec![1; rank];
                    ashape[axis] = e as usize;
                    let v: Vec<i64> = (0..e).map(|_| rng.next(n) as i64).collect();
                    let array = ArrayD::from_shape_vec(IxDyn(&ashape), v).unwrap();
                    let array = zarrflow::index::IndexArray::new(array);
                    OutputIndexMap::array_or_constant(array, 0, 1).unwrap()
                }
                _ if e <= n => OutputIndexMap::dimension(axis, rng.next(n - e + 1) as i64, 1),
                _ => OutputIndexMap::dimension(axis, rng.next(n) as i64, 0),
            }
        })
        .collect();
    IndexTransform::new(IndexDomain::from_shape(&extents).unwrap(), maps).unwrap()
}

/// Values for `view`: a scalar, its full shape, or a shape broadcast to it.
fn values_for(rng: &mut Rng, view: &ArrayView) -> ArrayD<i32> {
    let shape: Vec<usize> = view.shape().iter().map(|&n| n as usize).collect();
    let vshape: Vec<usize> = match rng.next(3) {
        0 => vec![],
        1 => shape.clone(),
        _ => shape
            .iter()
            .map(|&n| if rng.next(2) == 0 { 1 } else { n })
            .collect(),
    };
    ArrayD::from_shape_fn(IxDyn(&vshape), |_| rng.next(1000) as i32 - 500)
}

/// Applies a write to the model: values broadcast to the view, cells in C order of the
/// view, the last write of a cell wins.
fn apply_model(model: &mut ArrayD<i32>, view: &ArrayView, values: &ArrayD<i32>) {
    let shape: Vec<usize> = view.shape().iter().map(|&n| n as usize).collect();
    let full = values.broadcast(IxDyn(&shape)).unwrap();
    let mut flat = full.iter();
    view.transform()
        .for_each_mapped(|_, out| {
            let idx: Vec<usize> = out.iter().map(|&x| x as usize).collect();
            model[IxDyn(&idx)] = *flat.next().unwrap();
        })
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn random_many_to_one_writes_match_a_model(
        shape in prop::collection::vec(1u64..=7, 1..=3),
        inner in prop::collection::vec(1u64..=3, 3),
        per_shard in prop::collection::vec(1u64..=3, 3),
        sharded in any::<bool>(),
        seed in any::<u64>(),
        steps in 1usize..6,
    ) {
        let rank = shape.len();
        let inner = inner[..rank].to_vec();
        let shards: Vec<u64> = inner.iter().zip(&per_shard).map(|(c, k)| c * k).collect();
        let spec = ArraySpec::new(shape.clone(), "int32");
        let spec = if sharded { spec.shard_shape(shards).inner_chunk_shape(inner.clone()) } else { spec.shard_shape(inner.clone()) };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let store = Store::from_object_store(Arc::new(InMemory::new()), "", "memory://m", StoreOptions::default()).unwrap();
            let a = Array::create(&store, &StoreKey::new("a").unwrap(), &spec, ArrayOptions::default()).await.unwrap();
            let dims: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
            let mut model = ArrayD::from_elem(IxDyn(&dims), 0);
            let mut rng = Rng(seed);
            for step in 0..steps {
                // a batch of 1 to 4 writes, or one write
                let batched = rng.next(2) == 0;
                let mut batch = a.batch();
                for _ in 0..if batched { 1 + rng.next(4) } else { 1 } {
                    let view = a.view().transformed(&many_to_one(&mut rng, &shape)).unwrap();
                    let values = values_for(&mut rng, &view);
                    if batched {
                        batch.stage(&view, &values.view()).unwrap();
                    } else {
                        view.write(&values.view()).await.unwrap();
                    }
                    apply_model(&mut model, &view, &values);
                }
                if batched {
                    batch.commit().await.unwrap();
                }
                let stored = a.view().read::<i32>().await.unwrap();
                prop_assert_eq!(&stored, &model, "step {}", step);
            }
            Ok(())
        })?;
    }
}
