//! Consolidated metadata: hierarchies consolidated by zarr-python 3.4.2 (v3 inline
//! `consolidated_metadata`, v2 `.zmetadata`) open, list and read through it exactly as
//! without it, with the request counts the docs state; zarrflow's `Group::consolidate` and
//! `copy` write documents zarr-python reads (and that match what zarr-python writes); writes
//! through a consolidated hierarchy refresh it; malformed documents are typed errors.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::read_npy;
use object_store::local::LocalFileSystem;
use serde_json::{Map, Value, json};
use zarrflow::array::{Array, ArrayOptions};
use zarrflow::copy::{CopyOptions, Layout, copy};
use zarrflow::hierarchy::{Group, HierarchyError, Node};
use zarrflow::metadata::{ArraySpec, MetadataError, ZarrFormat};
use zarrflow::store::wrappers::{CountingStore, RequestKind};
use zarrflow::store::{Store, StoreKey, StoreOptions};

const V3: &str = "fixtures/zarr-python/consolidated";
const V2: &str = "fixtures/zarr-python-v2/consolidated";

fn test_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test-data")
}

fn counting(dir: &Path) -> (Store, CountingStore<LocalFileSystem>) {
    let counting = CountingStore::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let store = Store::from_object_store(
        Arc::new(counting.clone()),
        "",
        format!("file://{}", dir.display()),
        StoreOptions::default(),
    )
    .unwrap();
    (store, counting)
}

fn local(dir: &Path) -> Store {
    Store::open(dir.to_str().unwrap(), Default::default()).unwrap()
}

/// Every node under `group`: relative path → (its metadata as canonical JSON, and for an
/// array its whole contents), walked with `children` and `open_child`.
async fn walk(group: &Group) -> BTreeMap<String, (Value, Option<Vec<u8>>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(String::new(), group.clone())];
    while let Some((prefix, g)) = stack.pop() {
        for (name, _) in g.children().await.unwrap() {
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            match g.open_child(&name).await.unwrap() {
                Node::Array(a) => {
                    let value = a.metadata().to_value();
                    let data = Array::from_node(a, ArrayOptions::default())
                        .unwrap()
                        .view()
                        .read_bytes()
                        .await
                        .unwrap();
                    out.insert(rel, (value, Some(data)));
                }
                Node::Group(child) => {
                    let mut m = child.metadata().clone();
                    m.consolidated = None;
                    out.insert(rel.clone(), (m.to_value(), None));
                    stack.push((rel, child));
                }
            }
        }
    }
    out
}

#[tokio::test]
async fn zarr_python_hierarchies_read_the_same_through_consolidated_metadata() {
    for (path, format) in [(V3, ZarrFormat::V3), (V2, ZarrFormat::V2)] {
        let store = local(&test_data().join(path));
        let g = Group::open(&store, &StoreKey::root()).await.unwrap();
        assert!(g.uses_consolidated(), "{path}");
        assert_eq!(g.metadata().zarr_format, format);
        assert_eq!(g.attributes()["consolidated"], true);
        let cons = g.metadata().consolidated.as_ref().unwrap();
        assert_eq!(
            cons.keys().collect::<Vec<_>>(),
            ["a", "child", "child/b", "child/grandchild"],
            "{path}"
        );
        let through = walk(&g).await;
        let plain = walk(&g.clone().without_consolidated()).await;
        assert_eq!(through.len(), 4, "{path}: {through:?}");
        assert_eq!(through, plain, "{path}");
        // the data is the fixture's
        let exp = test_data().join(format!("{path}.expected"));
        for (rel, npy) in [("a", "a.npy"), ("child/b", "child/b.npy")] {
            let (_, _, want) = read_npy(&exp.join(npy));
            assert_eq!(through[rel].1.as_deref(), Some(&want[..]), "{path}/{rel}");
        }
        assert_eq!(
            through["a"].0["attributes"],
            json!({"units": "m", "scale": [1, 2]})
        );
        assert_eq!(through["child"].0["attributes"], json!({"name": "child"}));
    }
}

/// Opening the root and walking the whole tree (listing every group, opening every node)
/// costs the root's metadata requests and nothing more.
#[tokio::test]
async fn opening_and_walking_a_consolidated_hierarchy_reads_only_the_root() {
    for (path, format, want_gets) in [
        // zarr.json alone
        (V3, Some(ZarrFormat::V3), 1),
        // the format probe: zarr.json (found), .zarray, .zgroup, .zattrs, concurrently
        (V3, None, 4),
        // .zarray (absent), .zgroup, .zattrs concurrently, then .zmetadata
        (V2, Some(ZarrFormat::V2), 4),
        // the format probe's four, then .zmetadata
        (V2, None, 5),
    ] {
        let (store, counts) = counting(&test_data().join(path));
        let g = Group::open_as(&store, &StoreKey::root(), 1 << 20, format)
            .await
            .unwrap();
        let mut stack = vec![g];
        let mut nodes = 0;
        while let Some(g) = stack.pop() {
            for (name, _) in g.children().await.unwrap() {
                nodes += 1;
                if let Node::Group(child) = g.open_child(&name).await.unwrap() {
                    stack.push(child);
                }
            }
        }
        assert_eq!(nodes, 4);
        let log = counts.log();
        assert!(
            log.iter()
                .all(|r| matches!(r.kind, RequestKind::Get | RequestKind::GetRange)),
            "{path} {format:?}: {log:?}"
        );
        assert_eq!(log.len(), want_gets, "{path} {format:?}: {log:?}");
        // without it the same walk lists and reads every node
        counts.reset();
        let g = Group::open_as(&store, &StoreKey::root(), 1 << 20, format)
            .await
            .unwrap()
            .without_consolidated();
        let plain = walk(&g).await;
        assert_eq!(plain.len(), 4);
        assert!(
            counts.counts().list >= 2 && counts.counts().gets() > want_gets as u64 + 4,
            "{path}: {:?}",
            counts.counts()
        );
    }
}

#[tokio::test]
async fn an_array_opened_through_consolidated_metadata_reads_only_its_chunks() {
    let (store, counts) = counting(&test_data().join(V3));
    let g = Group::open_as(&store, &StoreKey::root(), 1 << 20, Some(ZarrFormat::V3))
        .await
        .unwrap();
    let Node::Group(child) = g.open_child("child").await.unwrap() else {
        panic!("child is a group")
    };
    let Node::Array(b) = child.open_child("b").await.unwrap() else {
        panic!("b is an array")
    };
    counts.reset();
    let a = Array::from_node(b, ArrayOptions::default()).unwrap();
    let got = a.view().read_bytes().await.unwrap();
    let (_, _, want) = read_npy(&test_data().join(format!("{V3}.expected/child/b.npy")));
    assert_eq!(got, want);
    assert!(
        counts.log().iter().all(|r| !r.path.ends_with("zarr.json")),
        "{:?}",
        counts.log()
    );
}

fn python() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python")
}

fn run_python(script: &str, args: &[&Path]) -> String {
    let out = std::process::Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("the pinned venv's python runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A hierarchy written by zarrflow: root (attributes), array `a` (attributes), group `g`
/// with array `x` and empty group `e`.
async fn build(store: &Store, format: ZarrFormat) -> Group {
    let attrs = |v: Value| v.as_object().cloned().unwrap_or_default();
    let root = Group::create_as(
        store,
        &StoreKey::root(),
        attrs(json!({"title": "zarrflow"})),
        false,
        format,
    )
    .await
    .unwrap();
    let spec = |shape: Vec<u64>, chunks: Vec<u64>| {
        let s = ArraySpec::of::<i32>(shape).shard_shape(chunks);
        match format {
            ZarrFormat::V2 => s.zarr_format(ZarrFormat::V2),
            _ => s,
        }
    };
    let a = root
        .create_array("a", &spec(vec![6], vec![4]).attribute("units", "m"))
        .await
        .unwrap();
    Array::from_node(a, ArrayOptions::default())
        .unwrap()
        .view()
        .write_scalar(7i32)
        .await
        .unwrap();
    let g = root
        .create_group("g", attrs(json!({"level": 1})))
        .await
        .unwrap();
    g.create_array("x", &spec(vec![2, 3], vec![2, 2]))
        .await
        .unwrap();
    g.create_group("e", Map::new()).await.unwrap();
    root
}

const COMPARE: &str = r#"
import json, shutil, sys, tempfile, warnings, zarr
warnings.simplefilter("ignore")
ours, fmt = sys.argv[1], int(sys.argv[2])
g = zarr.open_consolidated(ours, zarr_format=fmt)
members = sorted((k, type(v).__name__) for k, v in g.members(max_depth=None))
print("members", members)
print("attrs", dict(g.attrs), dict(g["a"].attrs), g["a"][:].tolist())
# zarr-python's own consolidation of the same hierarchy
theirs = tempfile.mkdtemp() + "/h"
shutil.copytree(ours, theirs)
zarr.consolidate_metadata(theirs, zarr_format=fmt)
if fmt == 3:
    a = json.load(open(ours + "/zarr.json"))["consolidated_metadata"]
    b = json.load(open(theirs + "/zarr.json"))["consolidated_metadata"]
    assert list(a) == list(b) == ["kind", "must_understand", "metadata"], (list(a), list(b))
    assert list(a["metadata"]) == list(b["metadata"]), (list(a["metadata"]), list(b["metadata"]))
    for k in a["metadata"]:
        x, y = dict(a["metadata"][k]), dict(b["metadata"][k])
        assert x == y, (k, x, y)
    # the same text: zarrflow writes zarr.json's fields in zarr-python's order and layout
    a, b = open(ours + "/zarr.json").read(), open(theirs + "/zarr.json").read()
    print("zarr.json bytes identical", a == b)
    if a != b:
        print(a)
        print(b)
else:
    a = open(ours + "/.zmetadata").read()
    b = open(theirs + "/.zmetadata").read()
    assert json.loads(a) == json.loads(b), (a, b)
    assert list(json.loads(a)["metadata"]) == list(json.loads(b)["metadata"]), (a, b)
    print("zmetadata bytes identical", a == b)
    if a != b:
        print(a)
        print(b)
print("same as zarr-python's")
"#;

#[tokio::test]
async fn zarrflow_consolidated_metadata_is_what_zarr_python_writes_and_reads() {
    for format in [ZarrFormat::V3, ZarrFormat::V2] {
        let dir = tempfile::tempdir().unwrap();
        let store = local(dir.path());
        let mut root = build(&store, format).await;
        assert!(!root.uses_consolidated());
        assert_eq!(root.consolidate().await.unwrap(), 4);
        assert!(root.uses_consolidated());
        let n = format.number().to_string();
        let out = run_python(COMPARE, &[dir.path(), Path::new(&n)]);
        assert!(
            out.contains(
                "members [('a', 'Array'), ('g', 'Group'), ('g/e', 'Group'), ('g/x', 'Array')]"
            ),
            "{out}"
        );
        assert!(
            out.contains("attrs {'title': 'zarrflow'} {'units': 'm'} [7, 7, 7, 7, 7, 7]"),
            "{out}"
        );
        assert!(out.contains("same as zarr-python's"), "{out}");
        if format == ZarrFormat::V2 {
            assert!(out.contains("zmetadata bytes identical True"), "{out}");
        } else {
            assert!(out.contains("zarr.json bytes identical True"), "{out}");
        }
        // and zarrflow reads it back through it, as it reads zarr-python's
        let g = Group::open(&store, &StoreKey::root()).await.unwrap();
        assert!(g.uses_consolidated());
        assert_eq!(
            walk(&g).await,
            walk(&g.clone().without_consolidated()).await
        );
    }
}

#[tokio::test]
async fn writes_through_a_consolidated_hierarchy_refresh_it() {
    for format in [ZarrFormat::V3, ZarrFormat::V2] {
        let dir = tempfile::tempdir().unwrap();
        let store = local(dir.path());
        build(&store, format).await.consolidate().await.unwrap();
        let mut root = Group::open(&store, &StoreKey::root()).await.unwrap();
        let Node::Group(g) = root.open_child("g").await.unwrap() else {
            panic!("g is a group")
        };
        // a new node two levels down, an attribute change of an array opened from it, of a
        // group opened from it, and of the root
        let Node::Group(e) = g.open_child("e").await.unwrap() else {
            panic!("e is a group")
        };
        e.create_array("new", &{
            let s = ArraySpec::of::<u8>([3]).shard_shape([3]);
            if format == ZarrFormat::V2 {
                s.zarr_format(ZarrFormat::V2)
            } else {
                s
            }
        })
        .await
        .unwrap();
        let Node::Array(mut x) = g.open_child("x").await.unwrap() else {
            panic!("x is an array")
        };
        x.update_attributes(|a| {
            a.insert("note".into(), json!("changed"));
        })
        .await
        .unwrap();
        let Node::Group(mut gg) = root.open_child("g").await.unwrap() else {
            panic!("g is a group")
        };
        gg.update_attributes(|a| {
            a.insert("level".into(), json!(2));
        })
        .await
        .unwrap();
        root.update_attributes(|a| {
            a.insert("title".into(), json!("renamed"));
        })
        .await
        .unwrap();
        // this process's nodes see it ...
        assert_eq!(
            e.children().await.unwrap(),
            [("new".to_string(), zarrflow::hierarchy::NodeKind::Array)]
        );
        // ... and so does a fresh open, through the consolidated metadata and without it
        let fresh = Group::open(&store, &StoreKey::root()).await.unwrap();
        let cons = fresh.metadata().consolidated.as_ref().unwrap();
        assert!(cons.contains_key("g/e/new"), "{format}: {:?}", cons.keys());
        assert_eq!(fresh.attributes()["title"], "renamed");
        let through = walk(&fresh).await;
        assert_eq!(
            through,
            walk(&fresh.clone().without_consolidated()).await,
            "{format}"
        );
        assert_eq!(through["g/x"].0["attributes"]["note"], "changed");
        assert_eq!(through["g"].0["attributes"]["level"], 2);
        // zarr-python reads the refreshed consolidated metadata
        let n = format.number().to_string();
        let out = run_python(
            r#"
import sys, warnings, zarr
warnings.simplefilter("ignore")
g = zarr.open_consolidated(sys.argv[1], zarr_format=int(sys.argv[2]))
print(sorted(k for k, _ in g.members(max_depth=None)), dict(g.attrs), dict(g["g/x"].attrs), dict(g["g"].attrs))
"#,
            &[dir.path(), Path::new(&n)],
        );
        assert!(
            out.contains(
                "['a', 'g', 'g/e', 'g/e/new', 'g/x'] {'title': 'renamed'} {'note': 'changed'} {'level': 2}"
            ),
            "{format}: {out}"
        );
    }
}

#[tokio::test]
async fn copies_keep_or_add_consolidated_metadata_in_the_destination_format() {
    for (src, layout, consolidate, want) in [
        (V3, Layout::keep(), false, ZarrFormat::V3),
        (V2, Layout::keep(), false, ZarrFormat::V2),
        (
            V2,
            Layout::keep().zarr_format(ZarrFormat::V3),
            false,
            ZarrFormat::V3,
        ),
        (
            "fixtures/zarr-python/hierarchy",
            Layout::keep(),
            true,
            ZarrFormat::V3,
        ),
        (
            "fixtures/zarr-python-v2/hierarchy",
            Layout::keep(),
            true,
            ZarrFormat::V2,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (src_store, counts) = counting(&test_data().join(src));
        let dst = local(dir.path());
        let report = copy(
            &src_store,
            &dst,
            &layout,
            &CopyOptions::default().with_consolidate(consolidate),
        )
        .await;
        let report = report.unwrap_or_else(|e| panic!("{src}: {e}"));
        assert!(report.arrays >= 2, "{src}");
        if !consolidate {
            // the source's metadata: the root's requests only, then chunks
            let meta: Vec<_> = counts
                .log()
                .into_iter()
                .filter(|r| {
                    r.path.ends_with("zarr.json")
                        || r.path.contains(".z")
                        || r.kind == RequestKind::List
                        || r.kind == RequestKind::ListDir
                })
                .collect();
            assert!(
                meta.iter().all(|r| !r.path.contains('/')),
                "{src}: only the root's documents are read: {meta:?}"
            );
        }
        let g = Group::open(&dst, &StoreKey::root()).await.unwrap();
        assert!(g.uses_consolidated(), "{src}");
        assert_eq!(g.metadata().zarr_format, want, "{src}");
        assert_eq!(
            walk(&g).await,
            walk(&g.clone().without_consolidated()).await,
            "{src}"
        );
        let source = walk(&Group::open(&src_store, &StoreKey::root()).await.unwrap()).await;
        let copied = walk(&g).await;
        assert_eq!(
            source.keys().collect::<Vec<_>>(),
            copied.keys().collect::<Vec<_>>(),
            "{src}"
        );
        for (k, (_, data)) in &source {
            assert_eq!(&copied[k].1, data, "{src}/{k}");
        }
        let out = run_python(
            r#"
import sys, warnings, zarr
warnings.simplefilter("ignore")
g = zarr.open_consolidated(sys.argv[1])
print(sorted(k for k, _ in g.members(max_depth=None)))
"#,
            &[dir.path()],
        );
        let want_keys: Vec<String> = source.keys().map(|k| format!("'{k}'")).collect();
        assert_eq!(out.trim(), format!("[{}]", want_keys.join(", ")), "{src}");
    }
    // an array has no consolidated metadata
    let dir = tempfile::tempdir().unwrap();
    let src = local(&test_data().join(V3).join("a"));
    let err = copy(
        &src,
        &local(dir.path()),
        &Layout::keep(),
        &CopyOptions::default().with_consolidate(true),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("consolidated metadata belongs to a group"),
        "{err}"
    );
}

/// A copy of fixture `from` in a temporary directory, with `edit` applied to its files.
fn edited(from: &str, edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&test_data().join(from), dir.path());
    edit(dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_vec(&v).unwrap()).unwrap();
}

async fn open_err(dir: &Path) -> HierarchyError {
    Group::open(&local(dir), &StoreKey::root())
        .await
        .unwrap_err()
}

#[tokio::test]
async fn malformed_consolidated_metadata_is_a_typed_error_naming_the_document() {
    // v3: wrong kind, an entry that is not an object, an entry with bad metadata
    let dir = edited(V3, |d| {
        edit_json(&d.join("zarr.json"), |v| {
            v["consolidated_metadata"]["kind"] = json!("remote")
        })
    });
    let e = open_err(dir.path()).await;
    assert!(
        matches!(&e, HierarchyError::Metadata(MetadataError::InvalidField { key, field, .. })
            if key.ends_with("zarr.json") && field == "consolidated_metadata.kind"),
        "{e}"
    );
    let dir = edited(V3, |d| {
        edit_json(&d.join("zarr.json"), |v| {
            v["consolidated_metadata"]["metadata"]["a"] = json!([1, 2])
        })
    });
    let e = open_err(dir.path()).await.to_string();
    assert!(
        e.contains("zarr.json#consolidated_metadata.metadata[\"a\"]") && e.contains("a list"),
        "{e}"
    );
    let dir = edited(V3, |d| {
        edit_json(&d.join("zarr.json"), |v| {
            v["consolidated_metadata"]["metadata"]["child/b"]["data_type"] = json!("float128")
        })
    });
    let e = open_err(dir.path()).await.to_string();
    assert!(
        e.contains("metadata[\"child/b\"]") && e.contains("float128"),
        "{e}"
    );
    // v2: not JSON, not an object entry, a bad .zarray entry
    let dir = edited(V2, |d| {
        std::fs::write(d.join(".zmetadata"), b"{\"metadata\": ").unwrap()
    });
    let e = open_err(dir.path()).await;
    assert!(
        matches!(&e, HierarchyError::Metadata(MetadataError::MalformedJson { key, .. }) if key.ends_with("/.zmetadata")),
        "{e}"
    );
    let dir = edited(V2, |d| {
        edit_json(&d.join(".zmetadata"), |v| {
            v["metadata"]["a/.zattrs"] = json!("units")
        })
    });
    let e = open_err(dir.path()).await.to_string();
    assert!(e.contains(".zmetadata#metadata[\"a/.zattrs\"]"), "{e}");
    let dir = edited(V2, |d| {
        edit_json(&d.join(".zmetadata"), |v| {
            v["metadata"]["child/b/.zarray"]["dtype"] = json!("<q9")
        })
    });
    let e = open_err(dir.path()).await.to_string();
    assert!(
        e.contains(".zmetadata#metadata[\"child/b/.zarray\"]") && e.contains("<q9"),
        "{e}"
    );
    // sizes: the document limit applies to .zmetadata as to every metadata document
    let store = local(&test_data().join(V2));
    let e = Group::open_with_limit(&store, &StoreKey::root(), 100)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, HierarchyError::Metadata(MetadataError::TooLarge { key, max: 100, .. }) if key.ends_with("/.zmetadata")),
        "{e}"
    );
    // a corrupt .zmetadata is replaced by consolidating again
    let dir = edited(V2, |d| std::fs::write(d.join(".zmetadata"), b"[").unwrap());
    let (_, n) = zarrflow::hierarchy::consolidate_metadata(&local(dir.path()), &StoreKey::root())
        .await
        .unwrap();
    assert_eq!(n, 4);
    let g = Group::open(&local(dir.path()), &StoreKey::root())
        .await
        .unwrap();
    assert!(g.uses_consolidated());
    assert_eq!(
        walk(&g).await,
        walk(&g.clone().without_consolidated()).await
    );
    // the bad .zmetadata does not break the hierarchy's own documents: without the
    // consolidated copy (removed) it opens from the store
    let dir = edited(V2, |d| std::fs::remove_file(d.join(".zmetadata")).unwrap());
    let g = Group::open(&local(dir.path()), &StoreKey::root())
        .await
        .unwrap();
    assert!(!g.uses_consolidated());
    assert_eq!(walk(&g).await.len(), 4);
}

/// The CLI: `consolidate` writes it, `info` says so, `tree` prints the same hierarchy from
/// the root's documents alone, `copy --consolidate` writes it, an array is refused.
#[test]
fn the_command_line_consolidates_and_reads_through_it() {
    use common::cli::{fails, ok, run_with_stdout};
    for src in [
        "fixtures/zarr-python/hierarchy",
        "fixtures/zarr-python-v2/hierarchy",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let dst = dir.path().join("h.zarr");
        let dst = dst.to_str().unwrap();
        let src = test_data().join(src);
        let src = src.to_str().unwrap();
        ok(&["copy", "-q", src, dst]);
        let info =
            |url: &str| -> Value { serde_json::from_str(&ok(&["info", "--json", url])).unwrap() };
        assert_eq!(info(dst)["consolidated"], false, "{src}");
        let tree = ok(&["tree", dst]);
        let v2 = src.contains("-v2");
        let out = ok(&["consolidate", dst]);
        let doc = if v2 { ".zmetadata" } else { "zarr.json" };
        assert!(
            out.starts_with("consolidated ") && out.trim_end().ends_with(&format!("/h.zarr/{doc}")),
            "{out}"
        );
        let i = info(dst);
        assert_eq!(i["consolidated"], true, "{src}");
        let n = i["consolidated_nodes"].as_u64().unwrap();
        assert!(out.contains(&format!("consolidated {n} node(s)")), "{out}");
        assert!(
            ok(&["info", dst]).contains(&format!("consolidated        yes, {n} node(s)")),
            "{}",
            ok(&["info", dst])
        );
        assert_eq!(ok(&["tree", dst]), tree, "{src}");
        // -v logs every request: the tree comes from the root's documents
        let (status, log) = run_with_stdout(&["-v", "tree", dst], std::process::Stdio::null());
        assert!(status.success());
        let requests: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("zarrflow::store:"))
            .collect();
        assert_eq!(requests.len(), if v2 { 5 } else { 4 }, "{log}");
        assert!(
            requests
                .iter()
                .all(|l| l.contains("GET") && !l.contains("key=g")),
            "{log}"
        );
        // copy --consolidate from the plain source
        let dst2 = dir.path().join("c.zarr");
        ok(&["copy", "-q", "--consolidate", src, dst2.to_str().unwrap()]);
        let i2 = info(dst2.to_str().unwrap());
        assert_eq!(i2["consolidated"], true);
        assert_eq!(i2["consolidated_nodes"].as_u64(), Some(n));
        // a copy of the consolidated one stays consolidated
        let dst3 = dir.path().join("d.zarr");
        ok(&["copy", "-q", dst, dst3.to_str().unwrap()]);
        assert_eq!(info(dst3.to_str().unwrap())["consolidated"], true);
        let err = fails(&["consolidate", &format!("{src}/arr_root")]);
        assert!(err.contains("expected a group, found an array"), "{err}");
    }
}

/// `create` inside a consolidated hierarchy: without `--consolidate` the array is created and
/// standard error names the stale root and what to run; with it, the root (and a subgroup
/// holding its own) list the new array. Outside any group, `--consolidate` says so.
#[test]
fn create_names_or_refreshes_the_consolidated_metadata_above() {
    use common::cli::{ok, run};
    for src in [
        "fixtures/zarr-python/hierarchy",
        "fixtures/zarr-python-v2/hierarchy",
    ] {
        let v2 = src.contains("-v2");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("h.zarr");
        let root = root.to_str().unwrap();
        let src = test_data().join(src);
        ok(&["copy", "-q", "--consolidate", src.to_str().unwrap(), root]);
        let info =
            |url: &str| -> Value { serde_json::from_str(&ok(&["info", "--json", url])).unwrap() };
        let before = info(root)["consolidated_nodes"].as_u64().unwrap();
        let format = if v2 { "2" } else { "3" };
        let create = |name: &str, extra: &[&str]| {
            let url = format!("{root}/{name}");
            let mut args = vec![
                "create",
                &url,
                "--shape",
                "4",
                "--dtype",
                "int16",
                "--zarr-format",
                format,
            ];
            args.extend_from_slice(extra);
            run(&args)
        };
        // no flag: created, the stale root named on stderr, nothing refreshed
        let out = create("plain", &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("note: {root} holds consolidated metadata"))
                && err.contains(&format!("zarrflow consolidate {root}")),
            "{err}"
        );
        assert_eq!(info(root)["consolidated_nodes"].as_u64(), Some(before));
        // --consolidate: both new arrays listed now
        let out = create("listed", &["--consolidate"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(&format!("into {root}\n")), "{text}");
        assert_eq!(info(root)["consolidated_nodes"].as_u64(), Some(before + 2));
        let tree = ok(&["tree", root]);
        assert!(tree.contains("listed") && tree.contains("plain"), "{tree}");
        // outside any group: created, then refused with what to do
        let lone = dir.path().join("lone.zarr");
        let out = run(&[
            "create",
            lone.to_str().unwrap(),
            "--shape",
            "4",
            "--dtype",
            "int16",
            "--consolidate",
        ]);
        assert!(!out.status.success());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("found no group above"), "{err}");
        assert!(lone.exists(), "the array itself was created");
    }
}

/// Two handles of one consolidated root, each creating a child: the second's refresh finds
/// the root changed (its version is stale), reads it again and adds its entry to the first's,
/// so neither entry is lost.
#[tokio::test]
async fn concurrent_refreshes_through_two_handles_keep_both_entries() {
    for format in [ZarrFormat::V3, ZarrFormat::V2] {
        let dir = tempfile::tempdir().unwrap();
        let store = local(dir.path());
        build(&store, format).await.consolidate().await.unwrap();
        let one = Group::open(&store, &StoreKey::root()).await.unwrap();
        let two = Group::open(&store, &StoreKey::root()).await.unwrap();
        one.create_group("p", Map::new()).await.unwrap();
        two.create_group("q", Map::new()).await.unwrap();
        let fresh = Group::open(&store, &StoreKey::root()).await.unwrap();
        let keys: Vec<&String> = fresh
            .metadata()
            .consolidated
            .as_ref()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, ["a", "g", "g/e", "g/x", "p", "q"], "{format}");
        assert_eq!(
            walk(&fresh).await,
            walk(&fresh.clone().without_consolidated()).await,
            "{format}"
        );
    }
}

/// A refresh that fails leaves the new node written and says so: a typed error naming the
/// holder's document and what to do.
#[tokio::test]
async fn a_failed_refresh_is_a_typed_error_naming_the_stale_document() {
    use zarrflow::store::wrappers::{FaultConfig, FaultStore};
    let dir = tempfile::tempdir().unwrap();
    build(&local(dir.path()), ZarrFormat::V3)
        .await
        .consolidate()
        .await
        .unwrap();
    let wrap = |cfg: FaultConfig| {
        let counting = CountingStore::new(FaultStore::new(
            LocalFileSystem::new_with_prefix(dir.path()).unwrap(),
            cfg,
        ));
        let store = Store::from_object_store(
            Arc::new(counting.clone()),
            "",
            format!("file://{}", dir.path().display()),
            StoreOptions::default(),
        )
        .unwrap();
        (store, counting)
    };
    // the requests of opening the root and creating a child: the last is the refresh's PUT
    let (store, counts) = wrap(FaultConfig::default());
    let root = Group::open_as(&store, &StoreKey::root(), 1 << 20, Some(ZarrFormat::V3))
        .await
        .unwrap();
    root.create_group("p", Map::new()).await.unwrap();
    let log = counts.log();
    let last = log.last().unwrap();
    assert!(
        last.kind == RequestKind::Put && last.path == "zarr.json",
        "{log:?}"
    );
    // the same with that PUT failing, creating another child
    let (store, _) = wrap(FaultConfig::default().fail_nth(log.len() as u64));
    let root = Group::open_as(&store, &StoreKey::root(), 1 << 20, Some(ZarrFormat::V3))
        .await
        .unwrap();
    let err = root.create_group("q", Map::new()).await.unwrap_err();
    assert!(
        matches!(&err, HierarchyError::ConsolidatedNotRefreshed { url, .. } if url.ends_with("/zarr.json")),
        "{err}"
    );
    assert!(err.to_string().contains("zarrflow consolidate"), "{err}");
    // q exists, the consolidated copy does not list it until consolidated again
    let mut fresh = Group::open(&local(dir.path()), &StoreKey::root())
        .await
        .unwrap();
    assert!(
        !fresh
            .metadata()
            .consolidated
            .as_ref()
            .unwrap()
            .contains_key("q")
    );
    assert!(matches!(
        fresh.open_child("q").await.unwrap(),
        Node::Group(_)
    ));
    fresh.consolidate().await.unwrap();
    let again = Group::open(&local(dir.path()), &StoreKey::root())
        .await
        .unwrap();
    assert!(
        again
            .metadata()
            .consolidated
            .as_ref()
            .unwrap()
            .contains_key("q")
    );
}
