//! Multi-object operations never pass for complete: a copy writes its destination's metadata
//! last (every chunk, then each array's `zarr.json`, parents after children, the root last),
//! an overwrite deletes the old metadata before the old data, and an overwrite removes the
//! whole old node, so a new layout can be written where the old one had files or
//! directories. The interruptions are real: the CLI is killed (SIGKILL) mid-copy.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use common::cli::*;
use object_store::memory::InMemory;
use zarrflow::copy::{CopyOptions, Layout, copy};
use zarrflow::hierarchy::Group;
use zarrflow::store::wrappers::{CountingStore, RequestKind};
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrflow::{Array, ArrayOptions, ArraySpec};

/// Units of the big source (1024 x 1024 uint16 in chunks of 16 x 16).
const BIG_UNITS: usize = 64 * 64;

/// A 1024 x 1024 uint16 array of 7s at `path`, in 4096 chunks: a copy with one job takes
/// long enough (thousands of PUTs) to be killed half-way.
fn big_source(path: &Path) {
    let url = path.to_str().unwrap();
    ok(&[
        "create",
        url,
        "--shape",
        "1024,1024",
        "--dtype",
        "uint16",
        "--chunks",
        "16,16",
    ]);
    ok(&["set", url, "--value", "7"]);
}

/// The stored objects under `dir` other than `zarr.json` and in-flight temporary files
/// (`object_store` writes `NAME#N` and renames it), as `/`-separated relative keys.
fn chunk_keys(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        // entries come and go while a copy runs: skip what vanished
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(t) if t.is_dir() => walk(base, &path, out),
                Ok(_) if name != "zarr.json" && !name.contains('#') => {
                    let rel = path.strip_prefix(base).unwrap().to_string_lossy();
                    out.push(rel.replace('\\', "/"));
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// Every `zarr.json` under `dir`.
fn metadata_files(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if entry.file_name() == "zarr.json" {
                out.push(path.display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out
}

/// Starts `zarrflow ARGS` in the background.
fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the zarrflow binary starts")
}

/// Kills `child` with SIGKILL as soon as `ready()` holds; false when the child ended first.
fn kill_when(mut child: Child, ready: impl Fn() -> bool) -> bool {
    loop {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        if ready() {
            child.kill().expect("SIGKILL");
            child.wait().expect("reaped");
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Every value of the array at `url`, read through the library.
fn all_values(url: &str) -> Vec<u16> {
    let a = Array::open_blocking(url).unwrap();
    a.view()
        .read_blocking::<u16>()
        .unwrap()
        .into_iter()
        .collect()
}

/// A copy killed after some chunks are written leaves no array at the destination: `get`
/// fails with "not found" instead of returning fill values where the source has 7s. A second
/// copy without `--overwrite` is refused (the leftovers are visible), and with it completes.
#[test]
fn a_copy_killed_mid_way_leaves_no_array_at_the_destination() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, dst) = (tmp.path().join("src.zarr"), tmp.path().join("dst.zarr"));
    big_source(&src);
    let (s, d) = (src.to_str().unwrap(), dst.to_str().unwrap());
    let child = spawn(&["copy", "-q", s, d, "-j", "1"]);
    let killed = kill_when(child, || !chunk_keys(&dst).is_empty());
    assert!(killed, "the copy ended before it could be killed");
    let written = chunk_keys(&dst).len();
    assert!(
        written > 0 && written < BIG_UNITS,
        "interrupted: {written} chunks"
    );
    assert_eq!(metadata_files(&dst), Vec::<String>::new());
    let e = fails(&["get", d, "0,0"]);
    assert!(e.contains("not found"), "{e}");
    let e = fails(&["info", d]);
    assert!(e.contains("not found"), "{e}");
    let e = fails(&["copy", "-q", s, d]);
    assert!(e.contains("no zarr.json"), "{e}");
    ok(&["copy", "-q", s, d, "--overwrite"]);
    assert_eq!(chunk_keys(&dst).len(), BIG_UNITS);
    assert!(all_values(d).iter().all(|&v| v == 7));
}

/// An overwrite killed after the new chunks started is neither the old array (its metadata
/// went first) nor a new array with half its chunks: the destination is not found.
#[test]
fn a_killed_overwrite_is_neither_the_old_array_nor_a_partial_new_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, dst) = (tmp.path().join("src.zarr"), tmp.path().join("dst.zarr"));
    big_source(&src);
    let (s, d) = (src.to_str().unwrap(), dst.to_str().unwrap());
    // the old array: 3s in four 512 x 512 chunks (keys c/0/0 .. c/1/1)
    ok(&[
        "create",
        d,
        "--shape",
        "1024,1024",
        "--dtype",
        "uint16",
        "--chunks",
        "512,512",
    ]);
    ok(&["set", d, "--value", "3"]);
    let child = spawn(&["copy", "-q", s, d, "-j", "1", "--overwrite"]);
    // a key of the new grid: a coordinate beyond the old grid's 2 x 2
    let new_chunk = |k: &String| k.split('/').skip(1).any(|c| c.parse::<u32>().unwrap() > 1);
    let killed = kill_when(child, || chunk_keys(&dst).iter().any(new_chunk));
    assert!(killed, "the copy ended before it could be killed");
    assert!(chunk_keys(&dst).len() < BIG_UNITS);
    assert_eq!(metadata_files(&dst), Vec::<String>::new());
    let e = fails(&["get", d, "0,0"]);
    assert!(e.contains("not found"), "{e}");
}

/// A hierarchy copy killed mid-way leaves no node at all: the root's metadata (and every
/// other node's) comes after the chunks.
#[test]
fn a_killed_hierarchy_copy_leaves_no_node() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, dst) = (tmp.path().join("g.zarr"), tmp.path().join("copy.zarr"));
    zarrflow::block_on(async {
        let store = Store::open(src.to_str().unwrap(), StoreOptions::default()).unwrap();
        let root = Group::create(&store, &StoreKey::root(), Default::default(), false)
            .await
            .unwrap();
        root.create_group("sub", Default::default()).await.unwrap();
        for path in ["a", "sub/b"] {
            let spec = ArraySpec::of::<u16>([512, 1024]).shard_shape([16, 16]);
            let key = StoreKey::new(path).unwrap();
            let a = Array::create(&store, &key, &spec, ArrayOptions::default())
                .await
                .unwrap();
            a.view().write_scalar(9u16).await.unwrap();
        }
    })
    .unwrap();
    let (s, d) = (src.to_str().unwrap(), dst.to_str().unwrap());
    let child = spawn(&["copy", "-q", s, d, "-j", "1"]);
    let killed = kill_when(child, || !chunk_keys(&dst).is_empty());
    assert!(killed, "the copy ended before it could be killed");
    assert!(chunk_keys(&dst).len() < BIG_UNITS);
    assert_eq!(metadata_files(&dst), Vec::<String>::new());
    for url in [d.to_string(), format!("{d}/a"), format!("{d}/sub/b")] {
        let e = fails(&["tree", &url]);
        assert!(e.contains("not found"), "{url}: {e}");
    }
}

/// The order of a copy's requests, recorded: every chunk PUT before any `zarr.json` PUT,
/// each node's `zarr.json` after its children's, the root's last; and an overwrite deletes
/// the root's `zarr.json` first, every `zarr.json` before any chunk, and everything before
/// its first PUT.
#[test]
fn metadata_is_written_last_and_deleted_first() {
    zarrflow::block_on(async {
        let src = Store::memory_named("copy-safety-order-src");
        let mut attrs = serde_json::Map::new();
        attrs.insert("k".into(), 1.into());
        let root = Group::create(&src, &StoreKey::root(), attrs, false)
            .await
            .unwrap();
        root.create_group("g", Default::default()).await.unwrap();
        for (path, shape) in [("a", vec![8u64]), ("g/b", vec![4, 4])] {
            let spec = ArraySpec::of::<i32>(shape.clone()).shard_shape(vec![2; shape.len()]);
            let a = Array::create(
                &src,
                &StoreKey::new(path).unwrap(),
                &spec,
                ArrayOptions::default(),
            )
            .await
            .unwrap();
            a.view().write_scalar(5i32).await.unwrap();
        }
        let counting = CountingStore::new(InMemory::new());
        let dst = Store::from_object_store(
            Arc::new(counting.clone()),
            "",
            "memory://copy-safety-order-dst",
            StoreOptions::default(),
        )
        .unwrap();
        let log_of = |kind: RequestKind| -> Vec<String> {
            counting
                .log()
                .into_iter()
                .filter(|r| r.kind == kind)
                .map(|r| r.path)
                .collect()
        };
        let is_meta = |p: &String| {
            [".zarray", ".zgroup", ".zattrs", "zarr.json"]
                .iter()
                .any(|d| p == d || p.ends_with(&format!("/{d}")))
        };
        let check_puts = |puts: Vec<String>| {
            let first_meta = puts.iter().position(is_meta).expect("metadata written");
            assert!(puts[..first_meta].iter().all(|p| !is_meta(p)), "{puts:?}");
            assert!(
                puts[first_meta..].iter().all(is_meta),
                "chunks after metadata: {puts:?}"
            );
            assert_eq!(puts.len() - first_meta, 4, "{puts:?}");
            assert_eq!(
                puts[first_meta..].last().unwrap(),
                "zarr.json",
                "root last: {puts:?}"
            );
            let at = |p: &str| puts.iter().position(|q| q == p).unwrap();
            assert!(at("g/b/zarr.json") < at("g/zarr.json"), "{puts:?}");
            assert_eq!(first_meta, 4 + 4, "every chunk first: {puts:?}");
        };
        copy(&src, &dst, &Layout::keep(), &CopyOptions::default())
            .await
            .unwrap();
        check_puts(log_of(RequestKind::Put));

        counting.reset();
        let layout = Layout::keep().shards([4]).chunks([4]);
        let res = copy(
            &src,
            &dst,
            &layout,
            &CopyOptions::default().with_overwrite(true),
        )
        .await;
        // a 1-D layout does not fit g/b: planning fails and nothing is touched
        assert!(res.is_err());
        assert_eq!(log_of(RequestKind::Delete), Vec::<String>::new());
        assert_eq!(log_of(RequestKind::Put), Vec::<String>::new());

        copy(
            &src,
            &dst,
            &Layout::keep(),
            &CopyOptions::default().with_overwrite(true),
        )
        .await
        .unwrap();
        let log = counting.log();
        let deletes: Vec<String> = log_of(RequestKind::Delete);
        assert_eq!(
            deletes.first().map(String::as_str),
            Some("zarr.json"),
            "{deletes:?}"
        );
        let first_chunk = deletes.iter().position(|p| !is_meta(p)).unwrap();
        // the root's own documents of either format (zarr.json, .zarray, .zgroup, .zattrs:
        // the format is not known before the node is gone), then the three zarr.json below
        assert_eq!(
            &deletes[..4],
            ["zarr.json", ".zarray", ".zgroup", ".zattrs"],
            "{deletes:?}"
        );
        assert_eq!(
            first_chunk, 7,
            "every metadata document deleted before any chunk: {deletes:?}"
        );
        assert!(
            deletes[first_chunk..].iter().all(|p| !is_meta(p)),
            "{deletes:?}"
        );
        let last_delete = log
            .iter()
            .rposition(|r| r.kind == RequestKind::Delete)
            .unwrap();
        let first_put = log.iter().position(|r| r.kind == RequestKind::Put).unwrap();
        assert!(last_delete < first_put, "{log:?}");
        check_puts(log_of(RequestKind::Put));
        let b = Array::open_in(
            &dst,
            &StoreKey::new("g/b").unwrap(),
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        assert!(
            b.view()
                .read::<i32>()
                .await
                .unwrap()
                .iter()
                .all(|&v| v == 5)
        );
    })
    .unwrap();
}

/// `create --overwrite` with a new layout replaces the whole old node on the local store:
/// chunk keys that were files become directories and the other way round, and the new
/// array is written and read exactly, with nothing of the old one left.
#[test]
fn create_overwrite_replaces_the_whole_old_node() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.zarr");
    let url = a.to_str().unwrap();
    let layouts: [&[&str]; 4] = [
        &["--shape", "8,8", "--chunks", "2,2"], // c/0/0 ...: c/0 is a directory
        &["--shape", "8", "--chunks", "2"],     // c/0 ...: c/0 is a file
        &["--shape", "8,8", "--chunks", "2,2"], // a directory again
        &["--shape", "8,8,8", "--shards", "4,4,4", "--chunks", "2,2,2"],
    ];
    for (i, layout) in layouts.iter().enumerate() {
        let mut args = vec!["create", url, "--dtype", "int32"];
        args.extend_from_slice(layout);
        if i > 0 {
            args.push("--overwrite");
        }
        ok(&args);
        let value = (i + 1).to_string();
        ok(&["set", url, "--value", &value]);
        let values: Vec<i32> = Array::open_blocking(url)
            .unwrap()
            .view()
            .read_blocking::<i32>()
            .unwrap()
            .into_iter()
            .collect();
        assert!(
            values.iter().all(|v| v.to_string() == value),
            "layout {layout:?}"
        );
        // only the new array's objects are stored, and no empty directory is left
        // the write unit is `--shards` when given, else `--chunks`: the option after the shape
        let parse = |s: &str| -> Vec<usize> { s.split(',').map(|n| n.parse().unwrap()).collect() };
        let (shape, unit) = (parse(layout[1]), parse(layout[3]));
        let grid: Vec<usize> = shape.iter().zip(&unit).map(|(n, c)| n / c).collect();
        assert_eq!(values.len(), shape.iter().product::<usize>());
        assert_eq!(
            chunk_keys(&a).len(),
            grid.iter().product::<usize>(),
            "{layout:?}"
        );
        let rank = grid.len();
        assert!(
            chunk_keys(&a)
                .iter()
                .all(|k| k.split('/').count() == rank + 1),
            "{:?}",
            chunk_keys(&a)
        );
    }
}

/// `copy --overwrite` onto an array of another layout replaces it whole, and the copy reads
/// exactly.
#[test]
fn copy_overwrite_onto_another_layout_replaces_it_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, dst) = (tmp.path().join("src.zarr"), tmp.path().join("dst.zarr"));
    let (s, d) = (src.to_str().unwrap(), dst.to_str().unwrap());
    ok(&[
        "create", s, "--shape", "8", "--dtype", "int32", "--chunks", "2",
    ]);
    ok(&["set", s, "--value", "4"]);
    ok(&[
        "create", d, "--shape", "8,8", "--dtype", "int32", "--chunks", "2,2",
    ]);
    ok(&["set", d, "--value", "1"]);
    ok(&["copy", "-q", s, d, "--overwrite"]);
    assert_eq!(ok(&["get", d]).trim(), "[4, 4, 4, 4, 4, 4, 4, 4]");
    assert_eq!(chunk_keys(&dst).len(), 4);
    ok(&[
        "copy",
        "-q",
        d,
        s,
        "--overwrite",
        "--shards",
        "8",
        "--chunks",
        "4",
    ]);
    assert_eq!(ok(&["get", s]).trim(), "[4, 4, 4, 4, 4, 4, 4, 4]");
    assert_eq!(chunk_keys(&src), vec!["c/0".to_string()]);
}
