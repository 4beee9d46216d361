//! A small application on zarrflow's Rust API, as a new user writes it: create, refuse to
//! overwrite by accident, write and read with NumPy-style selections in the user's integer
//! types, fixed-dimension arrays, batches, typed errors, accessors, attributes, a shared
//! in-memory store, the blocking facade and a re-sharding copy. No casts, no `.into_dyn()`,
//! no serde_json construction, no zarrs types.
//!
//! ```sh
//! cargo run --example app
//! ```

use zarrflow::copy::{CopyOptions, Layout, copy};
use zarrflow::ndarray::{Array1, Array2, Axis, Ix3, array};
use zarrflow::{Array, ArrayOptions, ArraySpec, CodecSpec, DataType, Store, StoreKey, sel};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A named in-memory store: every open of `memory://app/...` in this process reaches it.
    let store = Store::memory_named("app");
    let path = StoreKey::new("temperature")?;

    // 1. Create: 365 days x 180 x 360 float32, shards of 30 days, inner chunks of 10 days.
    let spec = ArraySpec::of::<f32>([365, 180, 360])
        .shard_shape([30, 90, 180])
        .inner_chunk_shape([10, 45, 90])
        .codecs([CodecSpec::bytes(), CodecSpec::zstd(3)])
        .fill(f32::NAN)?
        .dimension_names(["day", "lat", "lon"])
        .attribute("units", "K")
        .attribute("source", "example");
    let array = Array::create(&store, &path, &spec, ArrayOptions::default()).await?;

    // Creating again over it is refused; overwriting replaces the old node and its chunks.
    let again = Array::create(&store, &path, &spec, ArrayOptions::default()).await;
    assert!(again.is_err_and(|e| e.is_already_exists()));

    // 2. Accessors: typed facts, the same as `zarrflow info --json`.
    assert_eq!(array.data_type(), DataType::Float32);
    assert_eq!(array.shape(), &[365, 180, 360]);
    assert_eq!(array.shard_shape(), Some(&[30, 90, 180][..]));
    assert_eq!(array.inner_chunk_shape(), Some(&[10, 45, 90][..]));
    assert!(array.fill_value::<f32>()?.is_nan());
    assert_eq!(array.attribute("units").and_then(|v| v.as_str()), Some("K"));
    let names = array.dimension_names().unwrap_or_default();
    println!(
        "{}: {} {:?}, dims {:?}, codecs {:?}",
        array.url(),
        array.data_type(),
        array.shape(),
        names,
        array.codecs().iter().map(|c| &c.name).collect::<Vec<_>>()
    );

    // 3. Writes: any ndarray array of the element type, broadcast NumPy-style.
    let day: usize = 42;
    let lat = Array1::linspace(250.0f32, 268.0, 180).insert_axis(Axis(1));
    let lon = Array1::linspace(0.0f32, 3.6, 360);
    let field: Array2<f32> = &lat + &lon; // 180 x 360 by broadcasting
    array.view().get(&sel![day, .., ..])?.write(&field).await?;
    let one_row: Array1<f32> = Array1::from_elem(360, 300.0);
    array
        .view()
        .get(&sel![0..10, 5, ..])?
        .write(&one_row)
        .await?; // broadcast over 10 days
    array
        .view()
        .get(&sel![364, 0, 0])?
        .write_scalar(1.5f32)
        .await?;

    // 4. Reads into fixed-dimension arrays, with selections in usize / u64 / i32.
    let lats: u64 = 90;
    let day_field: Array2<f32> = array.view().get(&sel![day, ..lats, ..])?.read_as().await?;
    assert_eq!(day_field.dim(), (90, 360));
    assert_eq!(day_field[[0, 0]], field[[0, 0]]);
    // an integer drops its dimension: asking for three is a typed error before any request
    let wrong_rank = array
        .view()
        .get(&sel![..;-73, ..;30, 7])?
        .read_as::<f32, Ix3>()
        .await;
    assert!(wrong_rank.is_err_and(|e| e.shape_mismatch().is_some()));
    let strided: Array2<f32> = array.view().get(&sel![..;-73, ..;30, 7])?.read_as().await?;
    assert_eq!(strided.dim(), (5, 6));
    let rows: Vec<usize> = vec![3, 1, 3];
    let outer = array
        .view()
        .oindex(&sel![day, &rows, [0, 359]])?
        .read::<f32>()
        .await?;
    assert_eq!(outer.shape(), &[3, 2]);
    let points: Array1<f32> = array
        .view()
        .vindex(&sel![[day, 364], [0, 0], [0, 0]])?
        .read_as()
        .await?;
    assert_eq!(points.to_vec(), vec![field[[0, 0]], 1.5]);
    let mut buffer = Array2::<f32>::zeros((10, 360));
    array
        .view()
        .get(&sel![0..10, 5, ..])?
        .read_into(&mut buffer)
        .await?;
    assert!(buffer.iter().all(|&v| v == 300.0));

    // 5. Typed errors with helpers and data.
    let out = array.view().get(&sel![400, 0, 0]);
    assert!(out.is_err_and(|e| e.is_out_of_bounds()));
    let wrong = array.view().get(&sel![0, 0, 0])?.read::<f64>().await;
    assert!(wrong.is_err_and(|e| e.is_data_type_mismatch()));
    let bad = array
        .view()
        .get(&sel![0, 0..2, 0..2])?
        .write(&array![1.0f32, 2.0, 3.0])
        .await;
    let err = bad.err().ok_or("a 3-value write into 2 x 2 must fail")?;
    println!("refused as expected: {err}");
    assert!(err.shape_mismatch().is_some());

    // 6. A batch touches each shard once; dropping it uncommitted would be a warning.
    let mut batch = array.batch();
    for d in 100..130u32 {
        batch.stage_scalar(&array.view().get(&sel![d, 0, ..])?, 280.0f32)?;
    }
    batch.commit().await?;

    // 7. Attributes can be updated; the handle sees them.
    let mut array = array;
    array.set_attribute("calibrated", true).await?;
    let reopened = Array::open("memory://app/temperature").await?;
    assert_eq!(
        reopened.attribute("calibrated").and_then(|v| v.as_bool()),
        Some(true)
    );

    // 8. Copy with a new layout: 120-day shards of 40-day inner chunks, gzip.
    let copies = Store::memory_named("app-copies");
    let layout = Layout::keep()
        .shards([120, 180, 360])
        .chunks([40, 45, 90])
        .codecs([CodecSpec::bytes(), CodecSpec::gzip(1)]);
    let source = store.sub_store(&path);
    let report = copy(&source, &copies, &layout, &CopyOptions::default()).await?;
    println!(
        "copied {} array, {} shards, {} bytes",
        report.arrays, report.units, report.bytes
    );
    let copied = Array::open("memory://app-copies").await?;
    assert_eq!(copied.shard_shape(), Some(&[120, 180, 360][..]));
    let a: Array2<f32> = reopened.view().get(&sel![day, .., ..])?.read_as().await?;
    let b: Array2<f32> = copied.view().get(&sel![day, .., ..])?.read_as().await?;
    assert_eq!(a, b);

    // 9. Overwrite replaces the node: no old chunk is readable through the new array.
    let fresh = Array::create_overwrite(&store, &path, &spec, ArrayOptions::default()).await?;
    let cell: Array2<f32> = fresh.view().get(&sel![day, 0..1, 0..1])?.read_as().await?;
    assert!(cell[[0, 0]].is_nan());

    // 10. The blocking facade, for code without a runtime (here on a plain thread).
    let blocking = std::thread::spawn(|| -> Result<f32, zarrflow::ArrayError> {
        let a = Array::open_blocking("memory://app-copies")?;
        let v: Array2<f32> = a.view().get(&sel![42, 0..2, 0..2])?.read_as_blocking()?;
        Ok(v[[0, 0]])
    })
    .join()
    .map_err(|_| "blocking thread panicked")??;
    assert_eq!(blocking, field[[0, 0]]);
    println!("ok");
    Ok(())
}
