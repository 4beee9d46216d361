//! Store identity is decoded, not textual: every spelling of a copy's source as its
//! destination (a `#fragment`, a `?query`, percent-encoding, a symbolic link, `..`, relative
//! vs absolute vs `file://`), or of a destination inside or around the source, is refused
//! before anything is deleted, and the source reads exactly as before. Fragments and queries
//! that a store would ignore are refused when the store is opened.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::S3Server;
use common::cli::BIN;
use zarrflow::copy::{CopyError, CopyOptions, Layout, copy};
use zarrflow::hierarchy::Group;
use zarrflow::store::{Store, StoreError, StoreKey, StoreOptions};
use zarrflow::{Array, ArrayOptions, ArraySpec, sel};

/// Runs the binary in `dir`.
fn zf_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("the zarrflow binary runs")
}

/// Runs the binary in `dir` and expects success.
fn zf_ok(dir: &Path, args: &[&str]) -> String {
    let out = zf_in(dir, args);
    assert!(
        out.status.success(),
        "zarrflow {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The values of the whole array at `url`, read in `dir`.
fn values(dir: &Path, url: &str) -> String {
    zf_ok(dir, &["get", url, "--full"])
}

/// A 6 x 6 int32 array of 36 distinct values at `dir/name` (chunks 2 x 2).
fn make_source(dir: &Path, name: &str) -> String {
    zf_ok(
        dir,
        &[
            "create", name, "--shape", "6,6", "--dtype", "int32", "--chunks", "2,2",
        ],
    );
    let npy = dir.join(format!("{name}.npy"));
    let data: Vec<u8> = (1..=36i32).flat_map(i32::to_le_bytes).collect();
    common::write_npy(&npy, "<i4", &[6, 6], &data);
    zf_ok(dir, &["set", name, "--from", npy.to_str().unwrap()]);
    values(dir, name)
}

/// `copy SRC DST --overwrite` and `copy SRC DST` are refused for every spelling of DST as the
/// source (or inside it, or around it), with a one-line error, and the source is intact.
#[test]
fn every_spelling_of_the_source_as_destination_is_refused_and_the_source_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let want = make_source(&dir, "src.zarr");
    std::os::unix::fs::symlink("src.zarr", dir.join("alias.zarr")).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    let abs = dir.display().to_string();
    let spellings = [
        format!("file://{abs}/src.zarr#x"),
        format!("file://{abs}/src.zarr?q=1"),
        format!("file://{abs}/%73rc.zarr"),
        format!("file://{abs}/src.zarr/"),
        format!("file://{abs}/sub/../src.zarr"),
        format!("file://{abs}/sub/%2e%2e/src.zarr"),
        "./src.zarr/../src.zarr".to_string(),
        "sub/../src.zarr".to_string(),
        "./src.zarr".to_string(),
        "src.zarr".to_string(),
        format!("{abs}/src.zarr"),
        "alias.zarr".to_string(),
        format!("file://{abs}/alias.zarr"),
        // inside the source, and around it
        "src.zarr/inner".to_string(),
        format!("file://{abs}/%73rc.zarr/inner"),
        "alias.zarr/c".to_string(),
        ".".to_string(),
        format!("file://{abs}"),
    ];
    for dst in &spellings {
        for overwrite in [true, false] {
            let mut args = vec!["copy", "-q", "src.zarr", dst.as_str()];
            if overwrite {
                args.push("--overwrite");
            }
            let out = zf_in(&dir, &args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "copy src.zarr {dst} (overwrite {overwrite}) succeeded"
            );
            assert_eq!(err.trim_end().lines().count(), 1, "{dst}: {err}");
            assert!(err.starts_with("zarrflow: error: "), "{dst}: {err}");
            assert_eq!(
                values(&dir, "src.zarr"),
                want,
                "the source changed after `copy src.zarr {dst}` (overwrite {overwrite}): {err}"
            );
        }
    }
    // and in the other direction: the source spelled oddly, the destination plainly
    for src in [
        format!("file://{abs}/%73rc.zarr"),
        "alias.zarr".into(),
        "sub/../src.zarr".into(),
    ] {
        let out = zf_in(&dir, &["copy", "-q", &src, "src.zarr", "--overwrite"]);
        assert!(!out.status.success(), "copy {src} src.zarr succeeded");
        assert_eq!(values(&dir, "src.zarr"), want, "after copy {src} src.zarr");
    }
    // a destination that is really elsewhere still works, spelled with the same tricks
    zf_ok(
        &dir,
        &[
            "copy",
            "-q",
            &format!("file://{abs}/%73rc.zarr"),
            "sub/../copy%.zarr",
        ],
    );
    assert_eq!(values(&dir, "copy%.zarr"), want);
    assert!(dir.join("copy%.zarr/zarr.json").is_file());
}

/// A group copied into its own child (spelled `%67.zarr/child`), or a child copied over its
/// parent, is refused, and the group is intact.
#[test]
fn a_group_is_not_copied_into_its_child_nor_a_child_over_its_group() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let g = dir.join("g.zarr");
    zarrflow::block_on(async {
        let store = Store::open(g.to_str().unwrap(), StoreOptions::default()).unwrap();
        let root = Group::create(&store, &StoreKey::root(), Default::default(), false)
            .await
            .unwrap();
        root.create_group("child", Default::default())
            .await
            .unwrap();
        let a = Array::create(
            &store,
            &StoreKey::new("child/a").unwrap(),
            &ArraySpec::of::<i32>([4]).shard_shape([2]),
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        a.view()
            .write(&zarrflow::ndarray::arr1(&[1, 2, 3, 4]))
            .await
            .unwrap();
    })
    .unwrap();
    let abs = dir.display().to_string();
    let want = values(&dir, "g.zarr/child/a");
    for (src, dst) in [
        ("g.zarr".to_string(), format!("file://{abs}/%67.zarr/child")),
        (
            "g.zarr".to_string(),
            format!("file://{abs}/g.zarr/child/new"),
        ),
        ("g.zarr/child".to_string(), "g.zarr".to_string()),
        (
            format!("file://{abs}/g.zarr/%63hild"),
            format!("file://{abs}/g.zarr#child"),
        ),
    ] {
        let out = zf_in(&dir, &["copy", "-q", &src, &dst, "--overwrite"]);
        assert!(!out.status.success(), "copy {src} {dst} succeeded");
        assert_eq!(
            values(&dir, "g.zarr/child/a"),
            want,
            "after copy {src} {dst}"
        );
        assert!(g.join("zarr.json").is_file() && g.join("child/zarr.json").is_file());
    }
}

/// `create --overwrite` on a URL with a fragment or a query is refused (it named another
/// place than the one it would have replaced), and the array there is intact.
#[test]
fn create_overwrite_refuses_fragments_and_queries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let want = make_source(&dir, "src.zarr");
    let abs = dir.display().to_string();
    for url in [
        format!("file://{abs}/src.zarr#x"),
        format!("file://{abs}/src.zarr?q=1"),
        format!("file://{abs}/src.zarr#"),
    ] {
        let out = zf_in(
            &dir,
            &[
                "create",
                &url,
                "--shape",
                "3",
                "--dtype",
                "int8",
                "--overwrite",
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "create {url} --overwrite succeeded");
        assert!(err.contains("invalid store URL"), "{url}: {err}");
        assert_eq!(values(&dir, "src.zarr"), want, "after create {url}");
    }
    // a `#` or `?` in a name is written encoded, or as a plain path
    zf_ok(
        &dir,
        &[
            "create",
            &format!("file://{abs}/a%23b%3F.zarr"),
            "--shape",
            "3",
            "--dtype",
            "int8",
        ],
    );
    assert!(dir.join("a#b?.zarr/zarr.json").is_file());
    zf_ok(
        &dir,
        &["create", "c#d?.zarr", "--shape", "3", "--dtype", "int8"],
    );
    assert!(dir.join("c#d?.zarr/zarr.json").is_file());
}

/// `Store::open` refuses fragments and queries on every scheme whose store ignores them.
#[test]
fn fragments_and_queries_are_refused_where_the_store_would_ignore_them() {
    for url in [
        "memory://identity-open/a#x",
        "memory://identity-open/a?q=1",
        "file:///tmp/a.zarr#x",
        "file:///tmp/a.zarr?x=1",
        "s3://bucket/a.zarr#x",
        "s3://bucket/a.zarr?versionId=1",
        "gs://bucket/a#x",
        "az://container/a?x",
    ] {
        match Store::open(url, StoreOptions::default()) {
            Err(StoreError::InvalidUrl { reason, .. }) => {
                assert!(
                    reason.contains("not part of a store location"),
                    "{url}: {reason}"
                )
            }
            other => panic!("{url}: {other:?}"),
        }
    }
    // an HTTP query can be part of the resource: kept
    Store::open(
        "https://example.com/a.zarr?token=1",
        StoreOptions::default(),
    )
    .unwrap();
}

/// Memory stores: a copy onto a differently spelled same prefix, into the source or around
/// it, is refused and the source kept.
#[test]
fn memory_store_spellings_are_one_location() {
    zarrflow::block_on(async {
        let url = "memory://identity-mem/src";
        let a = Array::create_at(url, &ArraySpec::of::<i32>([4]).shard_shape([2]))
            .await
            .unwrap();
        a.view()
            .write(&zarrflow::ndarray::arr1(&[1, 2, 3, 4]))
            .await
            .unwrap();
        let src = Store::open(url, StoreOptions::default()).unwrap();
        for dst in [
            "memory://identity-mem/%73rc",
            "memory://identity-mem/src/",
            "memory://identity-mem/src/inner",
            "memory://identity-mem/%73rc/c",
            "memory://identity-mem",
        ] {
            let dst = Store::open(dst, StoreOptions::default()).unwrap();
            let opts = CopyOptions::default().with_overwrite(true);
            let res = copy(&src, &dst, &Layout::keep(), &opts).await;
            assert!(
                matches!(res, Err(CopyError::Overlap { .. })),
                "{}: {res:?}",
                dst.url()
            );
            let back: Vec<i32> = a.view().read::<i32>().await.unwrap().into_iter().collect();
            assert_eq!(back, vec![1, 2, 3, 4], "after a copy to {}", dst.url());
        }
        // another named store, or another prefix, is elsewhere
        for dst in ["memory://identity-mem-2/src", "memory://identity-mem/src2"] {
            let dst = Store::open(dst, StoreOptions::default()).unwrap();
            copy(&src, &dst, &Layout::keep(), &CopyOptions::default())
                .await
                .unwrap();
        }
        // two private stores are two places, although both are shown as `memory://` (before,
        // their equal URLs made this copy an "overlap")
        let (first, second) = (Store::memory(), Store::memory());
        copy(&src, &first, &Layout::keep(), &CopyOptions::default())
            .await
            .unwrap();
        copy(&first, &second, &Layout::keep(), &CopyOptions::default())
            .await
            .unwrap();
        let copied = Array::open_in(&second, &StoreKey::root(), ArrayOptions::default())
            .await
            .unwrap();
        let back: Vec<i32> = copied
            .view()
            .read::<i32>()
            .await
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(back, vec![1, 2, 3, 4]);
        // while the same private store under two prefixes is one place
        let res = copy(
            &first,
            &first.sub_store(&StoreKey::new("c").unwrap()),
            &Layout::keep(),
            &CopyOptions::default().with_overwrite(true),
        )
        .await;
        assert!(matches!(res, Err(CopyError::Overlap { .. })), "{res:?}");
    })
    .unwrap();
}

/// S3: `s3://bucket/%73rc` is `s3://bucket/src`; a copy onto it is refused and the source
/// kept (before, the URLs' text differed, the destination was deleted, and with it the
/// source).
#[test]
fn s3_spellings_are_one_location() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        let server = S3Server::start(&["bucket"]).await;
        let open = |url: &str| Store::open(url, server.options()).unwrap();
        let src = open("s3://bucket/src");
        let a = Array::create(
            &src,
            &StoreKey::root(),
            &ArraySpec::of::<i32>([4]).shard_shape([2]),
            ArrayOptions::default(),
        )
        .await
        .unwrap();
        a.view()
            .write(&zarrflow::ndarray::arr1(&[1, 2, 3, 4]))
            .await
            .unwrap();
        for dst in [
            "s3://bucket/%73rc",
            "s3a://bucket/src/",
            "s3://bucket/%73rc/inner",
            "s3://bucket",
        ] {
            let opts = CopyOptions::default().with_overwrite(true);
            let res = copy(&src, &open(dst), &Layout::keep(), &opts).await;
            assert!(
                matches!(res, Err(CopyError::Overlap { .. })),
                "{dst}: {res:?}"
            );
            let back: Vec<i32> = a
                .view()
                .get(&sel![..])
                .unwrap()
                .read::<i32>()
                .await
                .unwrap()
                .into_iter()
                .collect();
            assert_eq!(back, vec![1, 2, 3, 4], "after a copy to {dst}");
        }
        copy(
            &src,
            &open("s3://bucket/src2"),
            &Layout::keep(),
            &CopyOptions::default(),
        )
        .await
        .unwrap();
    });
}
