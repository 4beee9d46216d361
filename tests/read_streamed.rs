//! Results of 64 MiB and more are written with streaming stores, neighbouring inner chunks'
//! rows gathered together (`array/stream_store.rs`, `read.rs`' `copy_ops`): the values of
//! whole and boxed reads over the threshold equal the model's, through the local store and
//! the memory store, into a fresh result (`read`) and into a caller's buffer 0, 2, 16 and
//! 62 bytes past a line boundary (`read_bytes_into`), with rows of inner chunks that are no
//! whole cache lines. (Values only: that these reads stream is the threshold's arithmetic;
//! the library's unit tests count the chains.)

use ndarray::{ArrayD, IxDyn, s};
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::index::Selection;
use zarrflow::metadata::{ArraySpec, CodecSpec};
use zarrflow::store::{Store, StoreKey, StoreOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_over_the_streaming_threshold_hold_the_models_values() {
    // 136 × 512 × 520 u16 = 72.4 MB; inner chunks of 40 `u16` across (80-byte rows)
    let shape = [136usize, 512, 520];
    let n: usize = shape.iter().product();
    let model: Vec<u16> = (0..n).map(|i| (i % 65_521) as u16).collect();
    let values = ArrayD::from_shape_vec(IxDyn(&shape), model).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
    for store in [local, Store::memory()] {
        let spec = ArraySpec::of::<u16>(shape.map(|d| d as u64))
            .shard_shape([68, 128, 120])
            .inner_chunk_shape([34, 32, 40])
            .codecs([CodecSpec::bytes()]);
        let array = Array::create(&store, &StoreKey::root(), &spec, ArrayOptions::default())
            .await
            .unwrap();
        array.view().write(&values.view()).await.unwrap();
        let array = Array::open_in(&store, &StoreKey::root(), ArrayOptions::default())
            .await
            .unwrap();
        let whole = array.view().read::<u16>().await.unwrap();
        assert!(whole == values, "{}: read all", store.url());
        // 133 × 510 × 512 u16 = 69.5 MB, every edge inside an inner chunk
        let sel = Selection::parse("3:136, 1:511, 5:517").unwrap();
        let boxed = array.view().get(&sel).unwrap();
        let want = values.slice(s![3..136, 1..511, 5..517]).into_dyn();
        let got = boxed.read::<u16>().await.unwrap();
        assert!(got == want, "{}: box", store.url());
        // into a caller's buffer at offsets 0..64 bytes past a line boundary
        let len = want.len() * 2;
        let want_bytes: Vec<u8> = want.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut backing = vec![0u8; len + 128];
        for shift in [0, 2, 16, 62] {
            let at = (backing.as_ptr() as usize).next_multiple_of(64) - backing.as_ptr() as usize
                + shift;
            backing.fill(0);
            boxed
                .read_bytes_into(&mut backing[at..at + len])
                .await
                .unwrap();
            assert!(backing[at..at + len] == want_bytes[..], "shift {shift}");
            assert!(
                backing[..at].iter().all(|&b| b == 0),
                "before, shift {shift}"
            );
            assert!(
                backing[at + len..].iter().all(|&b| b == 0),
                "after, shift {shift}"
            );
        }
    }
}
