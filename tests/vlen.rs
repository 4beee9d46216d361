//! Variable-length data (`string`, `bytes`): reads and writes through every selection kind,
//! unsharded and sharded, against a naive model; partial shard writes keep untouched inner
//! chunks verbatim; hostile chunk bytes are typed errors naming the chunk.

use ndarray::{ArrayD, IxDyn, arr1};
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::metadata::ArraySpec;
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrflow::{DataType, Selection};

fn words(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 5 {
            0 => String::new(),
            1 => format!("w{i}"),
            2 => "h\u{e9}llo \u{1F600}".repeat(i % 3 + 1),
            3 => "x".repeat(i % 17),
            _ => format!("{i}-\u{3b1}\u{3b2}"),
        })
        .collect()
}

async fn create(spec: &ArraySpec) -> (Store, Array) {
    let store = Store::open("memory://", StoreOptions::default()).unwrap();
    let a = Array::create(&store, &StoreKey::root(), spec, ArrayOptions::default())
        .await
        .unwrap();
    (store, a)
}

fn specs() -> Vec<(&'static str, ArraySpec)> {
    vec![
        (
            "unsharded",
            ArraySpec::with_data_type([7, 5], DataType::String).shard_shape([3, 2]),
        ),
        (
            "sharded",
            ArraySpec::with_data_type([7, 5], DataType::String)
                .shard_shape([4, 4])
                .inner_chunk_shape([2, 2]),
        ),
    ]
}

#[tokio::test]
async fn strings_round_trip_through_every_selection_kind() {
    for (name, spec) in specs() {
        let (_store, a) = create(&spec).await;
        let all = a.view().read_vlen::<String>().await.unwrap();
        assert!(all.iter().all(String::is_empty), "{name}: fill is \"\"");
        let model = ArrayD::from_shape_vec(IxDyn(&[7, 5]), words(35)).unwrap();
        a.view().write_vlen(&model).await.unwrap();
        assert_eq!(
            a.view().read_vlen::<String>().await.unwrap(),
            model,
            "{name}"
        );
        // basic
        let got = a
            .view()
            .get(&Selection::parse("1:6:2, ::-1").unwrap())
            .unwrap()
            .read_vlen::<String>()
            .await
            .unwrap();
        let want = model
            .slice(ndarray::s![1..6;2, ..;-1])
            .to_owned()
            .into_dyn();
        assert_eq!(got, want, "{name} basic");
        // oindex
        let got = a
            .view()
            .oindex(&Selection::parse("[6, 0, 6], [4, 1]").unwrap())
            .unwrap()
            .read_vlen::<String>()
            .await
            .unwrap();
        let want: Vec<String> = [6, 0, 6]
            .iter()
            .flat_map(|&i| [4, 1].map(|j| model[[i, j]].clone()))
            .collect();
        assert_eq!(got.into_raw_vec_and_offset().0, want, "{name} oindex");
        // vindex
        let got = a
            .view()
            .vindex(&Selection::parse("[0, 6, 3, 3], [4, 0, 2, 2]").unwrap())
            .unwrap()
            .read_vlen::<String>()
            .await
            .unwrap();
        let want: Vec<String> = [(0, 4), (6, 0), (3, 2), (3, 2)]
            .iter()
            .map(|&(i, j)| model[[i, j]].clone())
            .collect();
        assert_eq!(got.into_raw_vec_and_offset().0, want, "{name} vindex");
        // a broadcast write of a row into a strided selection
        let row = arr1(&["a", "", "\u{e9}\u{e9}"].map(String::from));
        a.view()
            .get(&Selection::parse("::3, 1:4").unwrap())
            .unwrap()
            .write_vlen(&row)
            .await
            .unwrap();
        let mut model = model.clone();
        for i in [0, 3, 6] {
            for (k, j) in (1..4).enumerate() {
                model[[i, j]] = row[k].clone();
            }
        }
        assert_eq!(
            a.view().read_vlen::<String>().await.unwrap(),
            model,
            "{name}"
        );
        // writing the fill value everywhere removes every chunk
        a.view().write_vlen_scalar(String::new()).await.unwrap();
        assert!(
            a.view()
                .read_vlen::<String>()
                .await
                .unwrap()
                .iter()
                .all(String::is_empty),
            "{name}"
        );
    }
}

#[tokio::test]
async fn bytes_round_trip_and_the_wrong_element_type_is_refused() {
    let spec = ArraySpec::with_data_type([6], DataType::Bytes)
        .shard_shape([4])
        .inner_chunk_shape([2]);
    let (_store, a) = create(&spec).await;
    let values = arr1(&[
        vec![0xff, 0],
        vec![],
        b"abc".to_vec(),
        vec![0; 300],
        vec![1],
        vec![],
    ]);
    a.view().write_vlen(&values).await.unwrap();
    assert_eq!(
        a.view().read_vlen::<Vec<u8>>().await.unwrap(),
        values.clone().into_dyn()
    );
    assert!(
        a.view()
            .read_vlen::<String>()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert!(
        a.view()
            .read::<u8>()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert!(
        a.view()
            .read_bytes()
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
    assert!(
        a.view()
            .write_bytes(&[0; 48], &[6])
            .await
            .unwrap_err()
            .is_data_type_mismatch()
    );
}
