//! The local store's guarantees: conditional PUTs are compare-and-swap across handles (and
//! processes: `reliability_processes`) with the versions `object_store` reports; versions of
//! a key never repeat; only regular files are objects (a FIFO, socket or directory where an
//! object should be is a typed error, never a hang and never fill values); staging files of
//! killed writes are never listed and go with their prefix; fsync is an option.

mod common;

use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;
use object_store::ObjectStoreExt;
use object_store::local::LocalFileSystem;
use zarrflow::array::{Array, ArrayError, ArrayOptions};
use zarrflow::hierarchy::HierarchyError;
use zarrflow::metadata::ArraySpec;
use zarrflow::sel;
use zarrflow::store::{ObjectVersion, Store, StoreError, StoreKey, StoreOptions};

fn k(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn local(dir: &Path) -> Store {
    Store::open(dir.to_str().unwrap(), StoreOptions::default()).unwrap()
}

/// The store error inside an array error (directly or through opening the node).
fn store_error(e: &ArrayError) -> Option<&StoreError> {
    match e {
        ArrayError::Store(e) | ArrayError::Hierarchy(HierarchyError::Store(e)) => Some(e),
        _ => None,
    }
}

fn is_not_a_file(e: &ArrayError, kind: &str) -> bool {
    matches!(store_error(e), Some(StoreError::NotAFile { kind: k, .. }) if *k == kind)
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// Unblocks readers waiting on FIFOs, so that a test of code that waits fails instead of
/// hanging: after 30 s without `finish`, it keeps opening the FIFOs for writing (without
/// waiting itself), which lets a reader blocked in `open` go on.
struct FifoWatchdog {
    done: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<bool>,
}

impl FifoWatchdog {
    fn start(fifos: Vec<PathBuf>) -> FifoWatchdog {
        let (done, rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            if rx.recv_timeout(Duration::from_secs(30)).is_ok() {
                return false;
            }
            while rx.recv_timeout(Duration::from_millis(20)).is_err() {
                for f in &fifos {
                    let _ = std::fs::OpenOptions::new()
                        .write(true)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(f);
                }
            }
            true
        });
        FifoWatchdog { done, thread }
    }

    /// Whether some reader had to be unblocked.
    fn finish(self) -> bool {
        let _ = self.done.send(());
        self.thread.join().unwrap()
    }
}

/// An array `a` (8×8 uint16, shards 4×4 of 2×2 inner chunks) with every shard written.
async fn array(store: &Store) -> Array {
    let spec = ArraySpec::new(vec![8, 8], "uint16")
        .shard_shape(vec![4, 4])
        .inner_chunk_shape(vec![2, 2]);
    let a = Array::create(store, &k("a"), &spec, ArrayOptions::default())
        .await
        .unwrap();
    a.view()
        .get(&sel![.., ..])
        .unwrap()
        .write_scalar(7u16)
        .await
        .unwrap();
    a
}

#[tokio::test]
async fn conditional_puts_are_compare_and_swap_with_object_stores_versions() {
    let dir = tempfile::tempdir().unwrap();
    let store = local(dir.path());
    let key = k("x/y");
    let v1 = store
        .put_if_absent(&key, Bytes::from_static(b"one"))
        .await
        .unwrap();
    let exists = store.put_if_absent(&key, Bytes::from_static(b"two")).await;
    assert!(
        matches!(exists, Err(StoreError::AlreadyExists { .. })),
        "{exists:?}"
    );
    // the version a PUT returns is the one GET, HEAD and object_store's own backend report
    let (_, got) = store.get_with_version(&key).await.unwrap();
    assert_eq!(got, v1);
    assert_eq!(store.head(&key).await.unwrap().version, v1);
    let theirs = LocalFileSystem::new_with_prefix(dir.path())
        .unwrap()
        .head(&object_store::path::Path::from("x/y"))
        .await
        .unwrap();
    assert_eq!(theirs.e_tag, v1.e_tag);
    let v2 = store
        .put_if_match(&key, Bytes::from_static(b"one"), &v1)
        .await
        .unwrap();
    assert_ne!(v1, v2, "same bytes, new version");
    let stale = store
        .put_if_match(&key, Bytes::from_static(b"stale"), &v1)
        .await;
    assert!(
        matches!(stale, Err(StoreError::Precondition { .. })),
        "{stale:?}"
    );
    let absent = store
        .put_if_match(&k("x/none"), Bytes::from_static(b"?"), &v1)
        .await;
    assert!(
        matches!(absent, Err(StoreError::Precondition { .. })),
        "{absent:?}"
    );
    assert_eq!(store.get(&key).await.unwrap().as_ref(), b"one");
    assert!(!store.refused_conditional_put());
    // a version from another store instance (another process) matches too
    let other = local(dir.path());
    other
        .put_if_match(&key, Bytes::from_static(b"three"), &v2)
        .await
        .unwrap();
    assert_eq!(store.get(&key).await.unwrap().as_ref(), b"three");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn counters_incremented_through_separate_handles_lose_no_increment() {
    // read-modify-write of one object by 8 tasks, each on its own store handle: every
    // increment lands exactly once only if the conditional PUT is atomic across handles
    let dir = tempfile::tempdir().unwrap();
    let key = k("counter");
    local(dir.path())
        .put(&key, Bytes::from_static(b"0"))
        .await
        .unwrap();
    let (tasks, increments) = (8, 25);
    let mut joins = Vec::new();
    for _ in 0..tasks {
        let store = local(dir.path());
        let key = key.clone();
        joins.push(tokio::spawn(async move {
            let mut conflicts = 0u64;
            for _ in 0..increments {
                loop {
                    let (bytes, version) = store.get_with_version(&key).await.unwrap();
                    let n: u64 = std::str::from_utf8(&bytes).unwrap().parse().unwrap();
                    let next = Bytes::from((n + 1).to_string());
                    match store.put_if_match(&key, next, &version).await {
                        Ok(_) => break,
                        Err(StoreError::Precondition { .. }) => conflicts += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for j in joins {
        conflicts += j.await.unwrap();
    }
    let n = local(dir.path()).get(&key).await.unwrap();
    assert_eq!(n.as_ref(), (tasks * increments).to_string().as_bytes());
    eprintln!(
        "{} increments by {tasks} handles, {conflicts} conflicts retried",
        tasks * increments
    );
}

#[tokio::test]
async fn versions_of_a_key_never_repeat() {
    // Same-size rewrites in a quick row: inodes are reused and several writes fall in one
    // timestamp tick, yet every version differs from every earlier one, so a stale
    // version can never match again.
    let dir = tempfile::tempdir().unwrap();
    let store = local(dir.path());
    let key = k("v");
    let first = store.put(&key, Bytes::from_static(b"00")).await.unwrap();
    let mut seen = vec![first.clone()];
    let mut current = first.clone();
    for i in 0..300u32 {
        let body = Bytes::from(format!("{:02}", i % 100));
        current = store.put_if_match(&key, body, &current).await.unwrap();
        seen.push(current.clone());
    }
    let mut unique: Vec<&ObjectVersion> = seen.iter().collect();
    unique.sort_by(|a, b| a.e_tag.cmp(&b.e_tag));
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "a version repeated");
    for old in &seen[..seen.len() - 1] {
        let stale = store
            .put_if_match(&key, Bytes::from_static(b"xx"), old)
            .await;
        assert!(
            matches!(stale, Err(StoreError::Precondition { .. })),
            "{stale:?}"
        );
    }
}

#[tokio::test]
async fn a_new_version_is_later_than_the_one_it_replaces_even_when_the_clock_is_not() {
    // A version is inode, mtime and size: a freed inode is reused, so if a replacement's
    // mtime could equal (same timestamp tick) or precede (clock set back) the replaced
    // object's, an old version could come back. The object here carries an mtime an hour
    // ahead; its replacement is still later.
    let dir = tempfile::tempdir().unwrap();
    let store = local(dir.path());
    let key = k("t");
    store.put(&key, Bytes::from_static(b"ab")).await.unwrap();
    let path = dir.path().join("t");
    let ahead = std::time::SystemTime::now() + Duration::from_secs(3600);
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_modified(ahead).unwrap();
    drop(f);
    let (_, v1) = store.get_with_version(&key).await.unwrap();
    let v2 = store
        .put_if_match(&key, Bytes::from_static(b"cd"), &v1)
        .await
        .unwrap();
    assert_ne!(v1, v2);
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    assert!(mtime > ahead, "{mtime:?} is not after {ahead:?}");
    let stale = store
        .put_if_match(&key, Bytes::from_static(b"ef"), &v1)
        .await;
    assert!(
        matches!(stale, Err(StoreError::Precondition { .. })),
        "{stale:?}"
    );
}

#[tokio::test]
async fn a_fifo_where_an_object_should_be_is_an_error_never_a_wait() {
    let dir = tempfile::tempdir().unwrap();
    let store = local(dir.path());
    let a = array(&store).await;
    let shard = dir.path().join("a/c/0/0");
    let meta = dir.path().join("a/zarr.json");
    std::fs::remove_file(&shard).unwrap();
    mkfifo(&shard);
    // opening a FIFO for reading waits until a writer opens it
    let watchdog = FifoWatchdog::start(vec![shard.clone(), meta.clone()]);
    let read = a.view().get(&sel![0..2, 0..2]).unwrap().read::<u16>().await;
    let whole = a.view().read::<u16>().await;
    let write = a.view().get(&sel![0, 0]).unwrap().write_scalar(1u16).await;
    let covered = a
        .view()
        .get(&sel![0..4, 0..4])
        .unwrap()
        .write_scalar(1u16)
        .await;
    let head = store.head(&k("a/c/0/0")).await;
    // zarr.json as a FIFO: opening the array is the same typed error
    std::fs::remove_file(&meta).unwrap();
    mkfifo(&meta);
    let open = Array::open_in(&store, &k("a"), ArrayOptions::default()).await;
    assert!(!watchdog.finish(), "a read waited on a FIFO");
    for (what, r) in [("read", read.map(drop)), ("whole read", whole.map(drop))] {
        let e = r.expect_err(what);
        assert!(is_not_a_file(&e, "FIFO"), "{what}: {e}");
    }
    for (what, r) in [("write", write), ("covering write", covered)] {
        let e = r.expect_err(what);
        assert!(is_not_a_file(&e, "FIFO"), "{what}: {e}");
    }
    assert!(
        matches!(head, Err(StoreError::NotAFile { kind: "FIFO", .. })),
        "{head:?}"
    );
    assert!(
        std::fs::symlink_metadata(&shard)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let e = open.map(drop).unwrap_err();
    assert!(is_not_a_file(&e, "FIFO"), "{e}");
}

#[tokio::test]
async fn a_socket_where_an_object_should_be_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = local(dir.path());
    let a = array(&store).await;
    let shard = dir.path().join("a/c/1/1");
    std::fs::remove_file(&shard).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(&shard).unwrap();
    let e = a.view().read::<u16>().await.unwrap_err();
    assert!(is_not_a_file(&e, "socket"), "{e}");
}

#[tokio::test]
async fn a_directory_at_a_chunk_key_is_an_error_not_fill() {
    let dir = tempfile::tempdir().unwrap();
    let store = local(dir.path());
    let a = array(&store).await;
    let shard = dir.path().join("a/c/0/1");
    std::fs::remove_file(&shard).unwrap();
    std::fs::create_dir_all(shard.join("x")).unwrap();
    // reading the shard (partially, whole, through the whole array) is an error
    let partial = a.view().get(&sel![0, 4]).unwrap().read::<u16>().await;
    let e = partial.unwrap_err();
    assert!(is_not_a_file(&e, "directory"), "{e}");
    let e = a.view().read::<u16>().await.unwrap_err();
    assert!(is_not_a_file(&e, "directory"), "{e}");
    // writing it too, with or without a read first; the directory stays as it was
    let e = a
        .view()
        .get(&sel![0, 4])
        .unwrap()
        .write_scalar(1u16)
        .await
        .unwrap_err();
    assert!(is_not_a_file(&e, "directory"), "{e}");
    let e = a
        .view()
        .get(&sel![0..4, 4..8])
        .unwrap()
        .write_scalar(1u16)
        .await
        .unwrap_err();
    assert!(is_not_a_file(&e, "directory"), "{e}");
    let del = store.delete(&k("a/c/0/1")).await;
    assert!(
        matches!(
            del,
            Err(StoreError::NotAFile {
                kind: "directory",
                ..
            })
        ),
        "{del:?}"
    );
    assert!(shard.join("x").is_dir());
    // the other shards still read
    let other = a
        .view()
        .get(&sel![4..8, 0..4])
        .unwrap()
        .read::<u16>()
        .await
        .unwrap();
    assert!(other.iter().all(|&v| v == 7));
}

#[tokio::test]
async fn staging_files_of_killed_writes_are_never_listed_and_go_with_their_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let store = local(dir.path());
    let a = array(&store).await;
    // what a write killed between staging and rename leaves (object_store's and ours)
    for stale in [
        "a/c/0/0#1",
        "a/c/1/0#4242000017",
        "a/zarr.json#3",
        "a/c/9/9#12",
    ] {
        let p = dir.path().join(stale);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"partial").unwrap();
    }
    let keys: Vec<String> = store
        .list_prefix(&k("a"))
        .await
        .unwrap()
        .iter()
        .map(|k| k.as_str().to_string())
        .collect();
    assert_eq!(
        keys,
        ["a/c/0/0", "a/c/0/1", "a/c/1/0", "a/c/1/1", "a/zarr.json"]
    );
    let c0 = store.list_dir(&k("a/c/0")).await.unwrap();
    assert_eq!(c0.objects, ["0", "1"]);
    assert!(store.is_empty_prefix(&k("a/c/9")).await.unwrap());
    // the array still reads and writes
    a.view()
        .get(&sel![0, 0])
        .unwrap()
        .write_scalar(3u16)
        .await
        .unwrap();
    assert_eq!(
        a.view()
            .get(&sel![0, 0])
            .unwrap()
            .read::<u16>()
            .await
            .unwrap()[[]],
        3
    );
    // overwriting the array (a prefix delete first) removes them, and their directories
    let spec = ArraySpec::new(vec![8, 8], "uint16");
    Array::create_overwrite(&store, &k("a"), &spec, ArrayOptions::default())
        .await
        .unwrap();
    let left: Vec<String> = common::files_under(dir.path())
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(left, ["a/zarr.json"]);
    assert!(!dir.path().join("a/c").exists());
}

#[tokio::test]
async fn fsync_is_an_option_of_local_stores() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let plain = Store::open(root, StoreOptions::default()).unwrap();
    assert!(!plain.options().fsync);
    assert!(!plain.backend().to_string().contains("fsync"));
    let durable = Store::open(root, StoreOptions::default().with_fsync(true)).unwrap();
    assert!(
        durable.backend().to_string().contains("fsync"),
        "{}",
        durable.backend()
    );
    // durable writes are the same writes
    let a = array(&durable).await;
    a.view()
        .get(&sel![1, 1])
        .unwrap()
        .write_scalar(9u16)
        .await
        .unwrap();
    let b = Array::open_in(&plain, &k("a"), ArrayOptions::default())
        .await
        .unwrap();
    assert_eq!(
        b.view()
            .get(&sel![1, 1])
            .unwrap()
            .read::<u16>()
            .await
            .unwrap()[[]],
        9
    );
    durable.delete(&k("a/c/0/0")).await.unwrap();
    assert!(!dir.path().join("a/c/0/0").exists());
}

#[tokio::test]
async fn a_backend_without_compare_and_swap_is_asked_once() {
    // object_store's own LocalFileSystem refuses conditional PUTs: the first write learns
    // it (a refused PUT, then an unconditional one), later writes make one PUT
    let dir = tempfile::tempdir().unwrap();
    let counting = zarrflow::store::wrappers::CountingStore::new(
        LocalFileSystem::new_with_prefix(dir.path()).unwrap(),
    );
    let store = Store::from_object_store(
        std::sync::Arc::new(counting.clone()),
        "",
        "file:///raw",
        StoreOptions::default(),
    )
    .unwrap();
    let a = array(&store).await;
    for (i, cell) in [(0, 1), (1, 0), (5, 5)].into_iter().enumerate() {
        counting.reset();
        let v = a.view().get(&sel![cell.0, cell.1]).unwrap();
        v.write_scalar(1u16).await.unwrap();
        let puts = if i == 0 { 2 } else { 1 };
        assert_eq!(counting.counts().put, puts, "{cell:?}");
        assert!(store.refused_conditional_put());
    }
}
