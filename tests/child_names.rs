//! Children whose names need escaping somewhere (`~ # % [ ] { } ^ | < > * ? "`, spaces,
//! `%20` written out) are stored under their names as they are, listed (`Group::children`,
//! `zarrflow tree`), read, written and copied, on the local store, the memory store and S3.
//! A child that cannot be opened is an error, never skipped.

mod common;

use common::S3Server;
use zarrflow::copy::{CopyOptions, Layout, copy};
use zarrflow::hierarchy::{Group, HierarchyError, NodeKind};
use zarrflow::store::{Store, StoreKey, StoreOptions};
use zarrflow::{Array, ArrayOptions, ArraySpec};

/// Names that `object_store` would percent-encode, or that look encoded, or both.
const NAMES: &[&str] = &[
    "a b",
    "p q",
    "p%20q",
    "100%",
    "x~y",
    "c#d",
    "h#1",
    "[0]",
    "{k}",
    "a^b",
    "a|b",
    "<t>",
    "s*",
    "q?",
    "\"quoted\"",
    "mix ~#%[]{}^|<>*?\"",
];

/// Creates, under `store`'s root group, one child per name (arrays, and a group holding an
/// array for every third), each array holding its index.
async fn populate(store: &Store) {
    let root = Group::create(store, &StoreKey::root(), Default::default(), false)
        .await
        .unwrap();
    for (i, name) in NAMES.iter().enumerate() {
        let spec = ArraySpec::of::<i32>([4]).shard_shape([2]);
        let path = if i % 3 == 0 {
            let g = root.create_group(name, Default::default()).await.unwrap();
            g.path().join("inner").unwrap()
        } else {
            StoreKey::new(*name).unwrap()
        };
        let a = Array::create(store, &path, &spec, ArrayOptions::default())
            .await
            .unwrap();
        a.view().write_scalar(i as i32).await.unwrap();
    }
}

/// The children of `store`'s root are exactly the names, with their kinds, and every array
/// reads its index.
async fn check(store: &Store) {
    let root = Group::open(store, &StoreKey::root()).await.unwrap();
    let mut want: Vec<(String, NodeKind)> = NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let kind = if i % 3 == 0 {
                NodeKind::Group
            } else {
                NodeKind::Array
            };
            (n.to_string(), kind)
        })
        .collect();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(root.children().await.unwrap(), want, "{}", store.url());
    for (i, name) in NAMES.iter().enumerate() {
        let key = if i % 3 == 0 {
            format!("{name}/inner")
        } else {
            name.to_string()
        };
        let a = Array::open_in(store, &StoreKey::new(key).unwrap(), ArrayOptions::default())
            .await
            .unwrap();
        let values = a.view().read::<i32>().await.unwrap();
        assert!(values.iter().all(|&v| v == i as i32), "{name}: {values:?}");
    }
}

#[test]
fn names_on_the_local_store_are_file_names_as_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("g.zarr");
    let url = dir.to_str().unwrap().to_string();
    zarrflow::block_on(async {
        let store = Store::open(&url, StoreOptions::default()).unwrap();
        populate(&store).await;
        check(&store).await;
        // the directories carry the names themselves (what zarr-python's LocalStore reads)
        for name in NAMES {
            assert!(dir.join(name).join("zarr.json").is_file(), "{name}");
        }
        // copied to a memory store and back to another directory
        let mem = Store::memory();
        copy(&store, &mem, &Layout::keep(), &CopyOptions::default())
            .await
            .unwrap();
        check(&mem).await;
        let back = Store::open(
            tmp.path().join("back.zarr").to_str().unwrap(),
            StoreOptions::default(),
        )
        .unwrap();
        copy(&mem, &back, &Layout::keep(), &CopyOptions::default())
            .await
            .unwrap();
        check(&back).await;
    })
    .unwrap();
    // `tree` lists every child by its name
    let tree = common::cli::ok(&["tree", &url]);
    for name in NAMES {
        assert!(
            tree.lines().any(|l| l.contains(&format!("── {name}"))),
            "{name} not in\n{tree}"
        );
    }
    // and the CLI reads one by a path with those characters
    let out = common::cli::ok(&["get", &format!("{url}/c#d")]);
    assert_eq!(out.trim(), "[5, 5, 5, 5]");
}

#[test]
fn names_on_the_memory_store_are_keys_as_they_are() {
    zarrflow::block_on(async {
        let store = Store::memory_named("child-names");
        populate(&store).await;
        check(&store).await;
        let keys = store.list_prefix(&StoreKey::root()).await.unwrap();
        assert!(
            keys.iter().any(|k| k.as_str() == "c#d/zarr.json"),
            "{keys:?}"
        );
        assert!(
            keys.iter().any(|k| k.as_str() == "p%20q/zarr.json"),
            "{keys:?}"
        );
        assert!(
            keys.iter().any(|k| k.as_str() == "p q/zarr.json"),
            "{keys:?}"
        );
        // a store opened on a child by URL reaches it: `%23` decodes to `#`
        let child = Array::open("memory://child-names/c%23d").await.unwrap();
        assert_eq!(child.view().read::<i32>().await.unwrap()[[0]], 5);
    })
    .unwrap();
}

#[test]
fn names_on_s3_are_keys_as_they_are() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        let server = S3Server::start(&["bucket"]).await;
        let store = Store::open("s3://bucket/g.zarr", server.options()).unwrap();
        populate(&store).await;
        check(&store).await;
        let copied = Store::open("s3://bucket/copy.zarr", server.options()).unwrap();
        copy(&store, &copied, &Layout::keep(), &CopyOptions::default())
            .await
            .unwrap();
        check(&copied).await;
        // the objects' keys are the names (what another S3 client lists)
        assert!(
            server
                .root
                .path()
                .join("bucket/g.zarr/c#d/zarr.json")
                .is_file()
        );
    });
}

/// A listed child that cannot be opened is an error: a directory whose name is not a valid
/// key, a child with a corrupt `zarr.json`. A directory without `zarr.json` is not a node.
#[test]
fn a_child_that_cannot_be_opened_is_an_error_never_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("g.zarr");
    zarrflow::block_on(async {
        let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
        let root = Group::create(&store, &StoreKey::root(), Default::default(), false)
            .await
            .unwrap();
        root.create_group("ok", Default::default()).await.unwrap();
        std::fs::create_dir_all(dir.join("not-a-node/data")).unwrap();
        std::fs::write(dir.join("not-a-node/data/x"), b"x").unwrap();
        assert_eq!(
            root.children().await.unwrap(),
            vec![("ok".to_string(), NodeKind::Group)]
        );
        std::fs::create_dir_all(dir.join("back\\slash")).unwrap();
        std::fs::write(dir.join("back\\slash/zarr.json"), b"{}").unwrap();
        match root.children().await {
            Err(HierarchyError::InvalidName { name, .. }) => assert_eq!(name, "back\\slash"),
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(dir.join("back\\slash")).unwrap();
        std::fs::create_dir_all(dir.join("broken")).unwrap();
        std::fs::write(dir.join("broken/zarr.json"), b"{not json").unwrap();
        assert!(root.children().await.is_err());
        // and the CLI's `tree` and `copy` fail rather than leave it out
        let url = dir.to_str().unwrap();
        let e = common::cli::fails(&["tree", url]);
        assert!(e.contains("broken"), "{e}");
        let to = tmp.path().join("copy.zarr");
        common::cli::fails(&["copy", "-q", url, to.to_str().unwrap()]);
        assert!(!to.join("zarr.json").exists());
    })
    .unwrap();
}

/// `Array::create_overwrite` of a child whose name has `#` (a fragment, in URL text) removes
/// the old child whole, directories included, so a new layout can be written.
#[test]
fn overwriting_a_child_with_a_hash_in_its_name_removes_it_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("g.zarr");
    zarrflow::block_on(async {
        let store = Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap();
        let key = StoreKey::new("x#y").unwrap();
        let old = ArraySpec::of::<i32>([4, 4]).shard_shape([2, 2]); // c/0/0: c/0 a directory
        let a = Array::create(&store, &key, &old, ArrayOptions::default())
            .await
            .unwrap();
        a.view().write_scalar(1).await.unwrap();
        let new = ArraySpec::of::<i32>([4]).shard_shape([2]); // c/0: a file
        let b = Array::create_overwrite(&store, &key, &new, ArrayOptions::default())
            .await
            .unwrap();
        b.view().write_scalar(2).await.unwrap();
        let values = b.view().read::<i32>().await.unwrap();
        assert!(values.iter().all(|&v| v == 2), "{values:?}");
        assert!(dir.join("x#y/c/0").is_file());
    })
    .unwrap();
}

/// zarr-python (the `.venv` of `scripts/python-env.sh`) lists and reads the children zarrflow
/// wrote under these names, and zarrflow lists and reads the ones zarr-python wrote: both
/// store a child under its name as it is.
#[test]
fn zarr_python_and_zarrflow_agree_on_the_names() {
    let python = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "run scripts/python-env.sh (scripts/test.sh does)"
    );
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ours.zarr");
    let theirs = tmp.path().join("theirs.zarr");
    zarrflow::block_on(async {
        populate(&Store::open(ours.to_str().unwrap(), StoreOptions::default()).unwrap()).await;
    })
    .unwrap();
    // zarr-python: check ours (members and values), then write theirs the same way
    let script = r#"
import json, sys, zarr
names, ours, theirs = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
g = zarr.open_group(ours, mode="r")
assert sorted(k for k, _ in g.members()) == sorted(names), sorted(k for k, _ in g.members())
for i, n in enumerate(names):
    a = g[n + "/inner"] if i % 3 == 0 else g[n]
    assert (a[:] == i).all(), (n, a[:])
t = zarr.open_group(theirs, mode="w")
for i, n in enumerate(names):
    parent = t.create_group(n) if i % 3 == 0 else t
    a = parent.create_array("inner" if i % 3 == 0 else n, shape=(4,), chunks=(2,), dtype="int32")
    a[:] = i
print("ok")
"#;
    let out = std::process::Command::new(&python)
        .args(["-c", script])
        .arg(serde_json::to_string(NAMES).unwrap())
        .arg(&ours)
        .arg(&theirs)
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "zarr-python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    zarrflow::block_on(async {
        check(&Store::open(theirs.to_str().unwrap(), StoreOptions::default()).unwrap()).await;
    })
    .unwrap();
}
