//! The main job in a few lines: create a sharded array in a temporary folder, write into it,
//! and read back a strided selection and a gather.
//!
//! Run with `cargo run --example quickstart`. The same steps with the command line:
//!
//! ```sh
//! zarrflow create /tmp/t.zarr --shape 100,200 --dtype float32 --shards 50,100 --chunks 10,20
//! zarrflow set /tmp/t.zarr 10:20,: --value 1.5
//! zarrflow get /tmp/t.zarr 5:30:5,::50
//! zarrflow get /tmp/t.zarr '[12,99,15],[3,7,150]' --vindex
//! ```

use zarrflow::ndarray::{Array1, Array2};
use zarrflow::{Array, ArrayOptions, ArraySpec, Selection, Store, StoreKey, StoreOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let url = dir.path().join("temperature.zarr");
    let store = Store::open(
        url.to_str().ok_or("non-UTF-8 temporary path")?,
        StoreOptions::default(),
    )?;

    // 100 x 200 float32, written in shards of 50 x 100, read in inner chunks of 10 x 20.
    let spec = ArraySpec::of::<f32>([100, 200])
        .shard_shape([50, 100])
        .inner_chunk_shape([10, 20])
        .dimension_names(["y", "x"]);
    let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default()).await?;
    println!("created {} {:?}", store.url(), array.shape());

    // Write a block of values (each cell holds 1000 * y + x) and one value broadcast to rows.
    let y = Array1::linspace(0.0f32, 49_000.0, 50).insert_axis(zarrflow::ndarray::Axis(1));
    let x = Array1::linspace(0.0f32, 59.0, 60);
    let block: Array2<f32> = &y + &x;
    array
        .view()
        .get(&Selection::parse("0:50, 0:60")?)?
        .write(&block)
        .await?;
    array
        .view()
        .get(&Selection::parse("90:, :")?)?
        .write_scalar(-1.5f32)
        .await?;

    // A strided selection: rows 5, 10, ..., 25 and every 20th column from the end.
    let strided: Array2<f32> = array
        .view()
        .get(&Selection::parse("5:30:5, 59::-20")?)?
        .read_as()
        .await?;
    println!("strided [5:30:5, 59::-20] ->\n{strided}");

    // A gather (vectorised indexing): the points (12, 3), (99, 7) and (49, 59).
    let points: Array1<f32> = array
        .view()
        .vindex(&Selection::parse("[12, 99, 49], [3, 7, 59]")?)?
        .read_as()
        .await?;
    println!("gather [[12, 99, 49], [3, 7, 59]] -> {points}");
    assert_eq!(points.to_vec(), vec![12003.0f32, -1.5, 49059.0]);
    Ok(())
}
