//! Property test of variable-length arrays: random writes and reads (basic, oindex,
//! vindex with repeated points; arrays and scalars; unsharded and sharded `string` arrays)
//! against a naive `Vec<String>` model, whose cells are found by enumerating each
//! selection's transform (C order of the view; a point written twice keeps the last value).

use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use zarrflow::array::{Array, ArrayOptions, ArrayView};
use zarrflow::index::{Dialect, Selection, SelectionItem, SelectionMode, Slice};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrflow::{DataType, block_on};

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if n == 0 { 0 } else { (self.0 >> 33) % n }
    }

    fn word(&mut self) -> String {
        const PIECES: [&str; 6] = ["", "a", "\u{e9}", "\u{1F600}", "zz", "\u{3b1}\u{3b2}"];
        (0..self.next(4))
            .map(|_| PIECES[self.next(PIECES.len() as u64) as usize])
            .collect()
    }
}

fn selection(rng: &mut Rng, shape: &[u64], mode: SelectionMode) -> Selection {
    let points = 1 + rng.next(5) as usize;
    let items = shape
        .iter()
        .map(|&n| match rng.next(8) {
            0 => SelectionItem::Index(rng.next(n) as i64),
            1..=3 if mode != SelectionMode::Basic => {
                let len = if mode == SelectionMode::Vectorized {
                    points
                } else {
                    1 + rng.next(4) as usize
                };
                let v: Vec<i64> = (0..len).map(|_| rng.next(n) as i64).collect();
                SelectionItem::Array(ndarray::Array1::from(v).into_dyn())
            }
            _ => {
                let (a, b) = (rng.next(n + 1) as i64, rng.next(n + 1) as i64);
                match rng.next(3) {
                    0 => SelectionItem::Slice(Slice {
                        start: Some(a.max(b)),
                        stop: None,
                        step: Some(-2),
                    }),
                    _ => {
                        SelectionItem::Slice(Slice::new(a.min(b), a.max(b), 1 + rng.next(2) as i64))
                    }
                }
            }
        })
        .collect();
    Selection::new(items)
}

/// The storage cell (C-order linear index) of each cell of `view`, in the view's C order.
fn cells(view: &ArrayView, shape: &[u64]) -> Vec<usize> {
    let mut out = Vec::new();
    view.transform()
        .for_each_mapped(|_, coords| {
            let lin = coords
                .iter()
                .zip(shape)
                .fold(0u64, |l, (&x, &s)| l * s + x as u64);
            out.push(lin as usize);
        })
        .unwrap();
    out
}

fn run(shape: Vec<u64>, shard: Vec<u64>, inner: Option<Vec<u64>>, seed: u64, ops: usize) {
    block_on(async move {
        let mut spec =
            ArraySpec::with_data_type(shape.clone(), DataType::String).shard_shape(shard);
        if let Some(inner) = inner {
            spec = spec.inner_chunk_shape(inner);
        }
        let store = Store::open("memory://", StoreOptions::default()).unwrap();
        let a = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
            .await
            .unwrap();
        let n: u64 = shape.iter().product();
        let mut model = vec![String::new(); n as usize];
        let mut rng = Rng(seed);
        for _ in 0..ops {
            let mode = [
                SelectionMode::Basic,
                SelectionMode::Outer,
                SelectionMode::Vectorized,
            ][rng.next(3) as usize];
            let view = a
                .view()
                .select(
                    &selection(&mut rng, &shape, mode),
                    mode,
                    Dialect::Positional,
                )
                .unwrap();
            let targets = cells(&view, &shape);
            let vshape: Vec<usize> = view.shape().iter().map(|&x| x as usize).collect();
            match rng.next(3) {
                0 => {
                    let want: Vec<String> = targets.iter().map(|&c| model[c].clone()).collect();
                    let got = view.read_vlen::<String>().await.unwrap();
                    assert_eq!(got.shape(), vshape.as_slice());
                    assert_eq!(got.into_raw_vec_and_offset().0, want, "{mode:?}");
                }
                1 => {
                    let w = rng.word();
                    view.write_vlen_scalar(w.clone()).await.unwrap();
                    for &c in &targets {
                        model[c] = w.clone();
                    }
                }
                _ => {
                    let values: Vec<String> = targets.iter().map(|_| rng.word()).collect();
                    let arr = ArrayD::from_shape_vec(IxDyn(&vshape), values.clone()).unwrap();
                    view.write_vlen(&arr).await.unwrap();
                    for (k, &c) in targets.iter().enumerate() {
                        model[c] = values[k].clone();
                    }
                }
            }
        }
        let all = a.view().read_vlen::<String>().await.unwrap();
        assert_eq!(all.into_raw_vec_and_offset().0, model);
    })
    .unwrap();
}

fn layout() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Option<Vec<u64>>)> {
    (1u64..7, 1u64..7, 1u64..4, 1u64..4, any::<bool>()).prop_map(|(r, c, i0, i1, sharded)| {
        let shape = vec![r, c];
        if sharded {
            (shape, vec![i0 * 2, i1 * 2], Some(vec![i0, i1]))
        } else {
            (shape, vec![i0, i1], None)
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_string_writes_and_reads_match_a_naive_model(
        (shape, shard, inner) in layout(),
        seed in any::<u64>(),
        ops in 1usize..12,
    ) {
        run(shape, shard, inner, seed, ops);
    }
}
