//! Shard layout: with [`InnerChunkOrder::Morton`] zarrflow stores, after the same writes,
//! exactly the objects zarr-python 3.4.2 stores (its default `subchunk_write_order`), and in
//! the default C order exactly the objects TensorStore 0.1.86 stores: whole writes, partial
//! rewrites of a shard, inner chunks elided when written with the fill value, strided
//! writes, edge shards, the index at the start and at the end, grids of inner chunks that
//! are no power of two. The peers replay the writes from the pinned virtualenv
//! (`test-data/write_steps.py`).

mod common;

use std::path::Path;

use common::{files_under, venv, write_npy};
use serde_json::json;
use zarrflow::array::{Array, ArrayOptions, InnerChunkOrder};
use zarrflow::index::Selection;
use zarrflow::metadata::{ArraySpec, CodecSpec};
use zarrflow::store::{Store, StoreKey, StoreOptions};

struct Case {
    name: &'static str,
    spec: ArraySpec,
    shape: Vec<u64>,
    inner: Vec<u64>,
    /// NumPy's descriptor and the element size.
    descr: &'static str,
    elem: usize,
}

fn cases() -> Vec<Case> {
    let case = |name, shape: &[u64], shard: &[u64], inner: &[u64], t: &str, descr, elem| Case {
        name,
        spec: ArraySpec::new(shape.to_vec(), t)
            .shard_shape(shard.to_vec())
            .inner_chunk_shape(inner.to_vec()),
        shape: shape.to_vec(),
        inner: inner.to_vec(),
        descr,
        elem,
    };
    vec![
        // a 3 x 4 inner grid (no power of two), zstd level 0, index at the end
        case("grid_3x4", &[6, 8], &[6, 8], &[2, 2], "uint16", "<u2", 2)
            .codecs([CodecSpec::bytes(), CodecSpec::zstd(0)]),
        // 4 x 4 x 4, index at the start
        case(
            "cube",
            &[8, 8, 8],
            &[8, 8, 8],
            &[2, 2, 2],
            "float32",
            "<f4",
            4,
        )
        .index_at_start(),
        // edge shards (inner chunks wholly outside the array are never written), crc32c
        case("edges", &[10, 7], &[4, 4], &[2, 2], "int32", "<i4", 4)
            .codecs([CodecSpec::bytes(), CodecSpec::crc32c()]),
        // 5 x 3 x 2 inner chunks: axes run out of Morton bits at different rounds
        case(
            "mixed",
            &[10, 6, 4],
            &[10, 6, 4],
            &[2, 2, 2],
            "uint8",
            "|u1",
            1,
        ),
        // one dimension: Morton order is C order
        case("line", &[100], &[50], &[5], "uint16", "<u2", 2),
        // a size-1 axis in the inner grid (2 x 1 x 3)
        case(
            "flat_axis",
            &[4, 1, 6],
            &[4, 1, 6],
            &[2, 1, 2],
            "int32",
            "<i4",
            4,
        ),
        // nested sharding: 2 x 2 inner shards of 2 x 2 inner chunks each, both laid out
        // in the order (the inner shards through the whole-shard encoder)
        case("nested", &[8, 8], &[8, 8], &[4, 4], "uint16", "<u2", 2).codecs([CodecSpec::new(
            "sharding_indexed",
            json!({
                "chunk_shape": [2, 2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c"}
                ],
                "index_location": "end"
            }),
        )]),
    ]
}

impl Case {
    fn codecs(mut self, c: impl IntoIterator<Item = CodecSpec>) -> Self {
        self.spec = self.spec.codecs(c);
        self
    }
    fn index_at_start(mut self) -> Self {
        self.spec = self.spec.index_at_start(true);
        self
    }

    /// The writes, as `[start, stop, step]` per dimension: the whole array, a box across
    /// shards and inner chunks, the fill value over whole inner chunks (elided), a strided
    /// selection.
    fn steps(&self) -> Vec<Vec<[u64; 3]>> {
        let s = &self.shape;
        vec![
            s.iter().map(|&n| [0, n, 1]).collect(),
            s.iter().map(|&n| [1, n / 2 + 1, 1]).collect(),
            s.iter()
                .enumerate()
                .map(|(d, &n)| {
                    if d == 0 {
                        [0, 2 * self.inner[0], 1]
                    } else {
                        [0, n, 1]
                    }
                })
                .collect(),
            s.iter().map(|&n| [n / 3, n, 3]).collect(),
        ]
    }

    /// The values of write `k` over `count` cells: the fill value (0) for the third write
    /// and, in the first, for the cells of the first inner chunk (so it is never stored);
    /// pseudo-random otherwise.
    fn values(&self, k: usize, slices: &[[u64; 3]]) -> Vec<u8> {
        let counts: Vec<u64> = slices
            .iter()
            .map(|[a, b, c]| (b - a).div_ceil(*c))
            .collect();
        let count: u64 = counts.iter().product();
        let mut out = Vec::with_capacity(count as usize * self.elem);
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (k as u64 + 1);
        for i in 0..count {
            let mut rest = i;
            let mut first_inner = true;
            for d in (0..counts.len()).rev() {
                let x = slices[d][0] + (rest % counts[d]) * slices[d][2];
                rest /= counts[d];
                first_inner &= x < self.inner[d];
            }
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (state >> 33) % 1000 + 1;
            let zero = k == 2 || (k == 0 && first_inner);
            let v = if zero { 0 } else { r };
            match self.descr {
                "<u2" => out.extend_from_slice(&(v as u16).to_le_bytes()),
                "<i4" => out.extend_from_slice(&(v as i32 - 500).to_le_bytes()),
                "<f4" => out.extend_from_slice(&(v as f32 * 0.25).to_le_bytes()),
                "|u1" => out.push(v as u8),
                other => panic!("{other}"),
            }
        }
        out
    }
}

fn selection_text(slices: &[[u64; 3]]) -> String {
    slices
        .iter()
        .map(|[a, b, c]| format!("{a}:{b}:{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes every case with zarrflow in `order` under `root`, and the values' `.npy` files.
async fn write_with_zarrflow(root: &Path, order: InnerChunkOrder, npy_dir: &Path) {
    let store = Store::open(root.to_str().unwrap(), StoreOptions::default()).unwrap();
    for case in cases() {
        let options = ArrayOptions::default().with_inner_chunk_order(order);
        let a = Array::create(
            &store,
            &StoreKey::new(case.name).unwrap(),
            &case.spec,
            options,
        )
        .await
        .unwrap();
        for (k, slices) in case.steps().iter().enumerate() {
            let values = case.values(k, slices);
            let view = a
                .view()
                .get(&Selection::parse(&selection_text(slices)).unwrap())
                .unwrap();
            view.write_bytes(&values, &view.shape()).await.unwrap();
            let shape: Vec<u64> = slices
                .iter()
                .map(|[a, b, c]| (b - a).div_ceil(*c))
                .collect();
            write_npy(
                &npy_dir.join(format!("{}-{k}.npy", case.name)),
                case.descr,
                &shape,
                &values,
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_are_byte_identical_to_zarr_pythons_in_morton_order_and_tensorstores_in_c_order() {
    let python = venv::python(".venv");
    let dir = tempfile::tempdir().unwrap();
    let (npy, morton, c_order) = (
        dir.path().join("npy"),
        dir.path().join("zarrflow-morton"),
        dir.path().join("zarrflow-c"),
    );
    std::fs::create_dir_all(&npy).unwrap();
    write_with_zarrflow(&morton, InnerChunkOrder::Morton, &npy).await;
    write_with_zarrflow(&c_order, InnerChunkOrder::Lexicographic, &npy).await;

    // the peers start from zarrflow's zarr.json and replay the same writes
    let mut plan = Vec::new();
    for (writer, ours) in [("zarr-python", &morton), ("tensorstore", &c_order)] {
        for case in cases() {
            let theirs = dir.path().join(writer).join(case.name);
            std::fs::create_dir_all(&theirs).unwrap();
            std::fs::copy(
                ours.join(case.name).join("zarr.json"),
                theirs.join("zarr.json"),
            )
            .unwrap();
            let steps: Vec<_> = case
                .steps()
                .iter()
                .enumerate()
                .map(|(k, slices)| {
                    json!({
                        "slices": slices,
                        "npy": npy.join(format!("{}-{k}.npy", case.name)),
                    })
                })
                .collect();
            plan.push(json!({"dir": theirs, "writer": writer, "steps": steps}));
        }
    }
    let plan_path = dir.path().join("plan.json");
    std::fs::write(&plan_path, serde_json::to_vec(&plan).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("test-data/write_steps.py");
    venv::run_checker(&python, &[script.as_os_str()], &plan_path, "write_steps.py");

    for case in cases() {
        let (ours_m, ours_c) = (
            files_under(&morton.join(case.name)),
            files_under(&c_order.join(case.name)),
        );
        let zarr_python = files_under(&dir.path().join("zarr-python").join(case.name));
        let tensorstore = files_under(&dir.path().join("tensorstore").join(case.name));
        let keys =
            |files: &[(String, Vec<u8>)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&ours_m), keys(&zarr_python), "{}: objects", case.name);
        assert_eq!(keys(&ours_c), keys(&tensorstore), "{}: objects", case.name);
        assert!(ours_m.len() > 1, "{}: shards were written", case.name);
        for ((key, ours), (_, theirs)) in ours_m.iter().zip(&zarr_python) {
            assert!(
                ours == theirs,
                "{}/{key}: Morton layout differs from zarr-python's",
                case.name
            );
        }
        for ((key, ours), (_, theirs)) in ours_c.iter().zip(&tensorstore) {
            assert!(
                ours == theirs,
                "{}/{key}: C-order layout differs from TensorStore's",
                case.name
            );
        }
        // the two layouts differ where the inner grid has two axes of 2+ inner chunks
        if case.name != "line" {
            assert_ne!(ours_m, ours_c, "{}: the orders give other bytes", case.name);
        }
    }
}

/// Both layouts read the same values, through either order's array (reading follows the
/// index), and a partial write in one order lays the whole shard out again in that order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn either_layout_reads_the_same_and_a_rewrite_takes_the_writers_order() {
    let store = Store::open("memory://shard-layout-mixed", StoreOptions::default()).unwrap();
    let spec = ArraySpec::new(vec![8, 8], "uint16")
        .shard_shape(vec![8, 8])
        .inner_chunk_shape(vec![2, 2])
        .codecs([CodecSpec::bytes()]);
    let values: Vec<u8> = (1..=64u16).flat_map(|v| v.to_le_bytes()).collect();
    let key = StoreKey::new("a").unwrap();
    let morton = ArrayOptions::default().with_inner_chunk_order(InnerChunkOrder::Morton);
    let a = Array::create(&store, &key, &spec, morton.clone())
        .await
        .unwrap();
    a.view().write_bytes(&values, &[8, 8]).await.unwrap();
    let shard = StoreKey::new("a/c/0/0").unwrap();
    let stored = store.get(&shard).await.unwrap();
    // Morton: inner chunk (1, 0) (rows 2-3, columns 0-1) comes second: values 17, 18, 25, 26
    let second: Vec<u8> = [17u16, 18, 25, 26]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(&stored[8..16], &second[..]);
    let c = Array::open_in(&store, &key, ArrayOptions::default())
        .await
        .unwrap();
    assert_eq!(c.view().read_bytes().await.unwrap(), values);
    // a partial write in C order lays the shard out in C order: inner chunk (0, 1) second
    let one = Selection::parse("0, 0").unwrap();
    c.view()
        .get(&one)
        .unwrap()
        .write_bytes(&100u16.to_le_bytes(), &[])
        .await
        .unwrap();
    let stored = store.get(&shard).await.unwrap();
    let second: Vec<u8> = [3u16, 4, 11, 12]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(&stored[8..16], &second[..]);
    let mut expected = values.clone();
    expected[..2].copy_from_slice(&100u16.to_le_bytes());
    let fresh = Array::open_in(&store, &key, morton).await.unwrap();
    assert_eq!(fresh.view().read_bytes().await.unwrap(), expected);
}
