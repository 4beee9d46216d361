//! The local-filesystem backend: `object_store`'s `LocalFileSystem` for listings, and
//! zarrflow's own reads (regular files only) and writes (compare-and-swap that holds across
//! processes and handles).
//!
//! **Writes.** Every PUT, whatever its [`PutMode`], goes the same way:
//! 1. the bytes go to a new staging file beside the target, `NAME#DIGITS` (a name
//!    `LocalFileSystem` never lists, as for its own staging files), fsynced when the store
//!    is durable ([`StoreOptions::fsync`](super::StoreOptions::fsync));
//! 2. the target's directory is locked (`flock`, exclusive) — the critical section starts;
//! 3. the target's current version is read (`stat`: the same ETag `LocalFileSystem` and this
//!    backend's GETs report, `"inode-mtime_us-size"` in hex) and checked against the mode:
//!    absent for `Create`, that version for `Update`; anything but a regular file there is
//!    refused;
//! 4. the staging file is renamed over the target — the critical section ends (unlock);
//!    on Linux the replaced file is held (a path-only handle taken just before the rename)
//!    and handed after the unlock to [`close_later`](super::closer::close_later), which
//!    frees it off the writer's path (on a filesystem mounted with `discard`, the last
//!    reference's release waits for the device);
//! 5. when durable, the directory is fsynced.
//!
//! So the critical section is a `stat`, a path-only `open` and a `rename` (and, rarely, one
//! `futimens`, below):
//! no encoding, no write and no fsync happen under the lock.
//!
//! **Where the lock lives.** On the directory that holds the target, locked through an open
//! descriptor of the directory itself: no lock file exists, so nothing is left in the store,
//! listed as an object or seen by other Zarr tools, and nothing needs cleaning. A rename and
//! its check are a change of that directory's entries, so the directory is the natural unit;
//! the section being a few system calls, writers of other keys in the same directory hardly
//! wait. `flock` locks belong to an open file description, so two handles in one process
//! exclude each other as two processes do, and the kernel drops the lock of a process that
//! dies. A directory removed and re-created while a writer waited is detected (the locked
//! descriptor and the path must be the same inode) and locked again. Deletes take the same
//! lock, so a delete cannot land between a conditional PUT's check and its rename. Where a
//! directory cannot be locked (NFS, Windows) a conditional write fails with an error instead
//! of losing an update.
//!
//! **Versions that do not repeat.** A version is inode, mtime (µs) and size; a freed inode is
//! soon reused, and two writes within one timestamp tick of the kernel (milliseconds) of the
//! same size would then have the same version (an ABA that would let a stale `Update`
//! through). Under the lock, a staging file whose mtime is not later than the current
//! object's is given a later one (`futimens`), so the versions of a key only increase.
//!
//! **Reads** open only regular files: a path is `stat`ed first, and a directory, FIFO,
//! socket or device there is an error ([`NotARegularFile`], surfaced as
//! [`StoreError::NotAFile`](super::StoreError::NotAFile)), never a missing object (which
//! would read as fill values) and never an `open` that waits (a FIFO without a writer) or
//! acts (a device); the file is opened non-blocking and checked again once open.
//!
//! Multipart uploads, copies and renames are `LocalFileSystem`'s (zarrflow does not use them)
//! and do not take the lock.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    Attributes, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    RenameOptions, Result,
};

/// The name `object_store` gives this backend in its errors.
const STORE: &str = "LocalFileSystem";

/// The local filesystem with compare-and-swap PUTs across processes, regular-file-only reads
/// and optional fsync (see the module documentation). [`Store::open`](super::Store::open)
/// uses it for paths and `file://` URLs; wrap it yourself (e.g. in a
/// [`CountingStore`](super::wrappers::CountingStore)) with
/// [`Store::from_object_store`](super::Store::from_object_store).
#[derive(Debug)]
pub struct LocalCasStore {
    inner: LocalFileSystem,
    fsync: bool,
}

impl LocalCasStore {
    /// The whole filesystem (keys are absolute paths); `fsync`: see
    /// [`StoreOptions::fsync`](super::StoreOptions::fsync).
    pub fn new(fsync: bool) -> Self {
        LocalCasStore {
            inner: LocalFileSystem::new(),
            fsync,
        }
    }

    /// Keys relative to the existing directory `dir`.
    pub fn new_with_prefix(dir: impl AsRef<FsPath>, fsync: bool) -> Result<Self> {
        Ok(LocalCasStore {
            inner: LocalFileSystem::new_with_prefix(dir)?,
            fsync,
        })
    }

    /// Whether written files and their directories are fsynced.
    pub fn fsyncs(&self) -> bool {
        self.fsync
    }

    /// A whole-object [`ObjectStoreExt::get`](object_store::ObjectStoreExt::get) on the calling thread, with blocking system
    /// calls (a stat and an open): for a thread that may block, such as the CPU pool's.
    pub(crate) fn get_now(&self, location: &Path) -> Result<GetResult> {
        get_file(
            self.inner.path_to_filesystem(location)?,
            location,
            GetOptions::new(),
        )
    }
}

/// A GET of the file at `path` (the object `location`), with blocking system calls.
fn get_file(path: PathBuf, location: &Path, options: GetOptions) -> Result<GetResult> {
    let (payload, meta) = if options.head {
        let meta = stat_object(&path)?.ok_or_else(|| not_found(&path))?;
        let empty = futures::stream::empty().boxed();
        (GetResultPayload::Stream(empty), meta)
    } else {
        let (file, meta) = open_object(&path)?;
        (GetResultPayload::File(file, path), meta)
    };
    let meta = object_meta(location.clone(), &meta);
    options.check_preconditions(&meta)?;
    let range = match &options.range {
        Some(r) => r
            .as_range(meta.size)
            .map_err(|source| object_store::Error::Generic {
                store: STORE,
                source: Box::new(source),
            })?,
        None => 0..meta.size,
    };
    Ok(GetResult {
        payload,
        meta,
        range,
        attributes: Attributes::default(),
        extensions: Default::default(),
    })
}

impl std::fmt::Display for LocalCasStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fsync = if self.fsync { "fsync, " } else { "" };
        write!(f, "LocalCasStore({fsync}{})", self.inner)
    }
}

/// Something other than a regular file where an object should be (a directory, FIFO, socket
/// or device). Carried as the source of an `object_store` error and mapped to
/// [`StoreError::NotAFile`](super::StoreError::NotAFile).
#[derive(Debug, thiserror::Error)]
#[error("{} is a {kind}, not a regular file", path.display())]
pub struct NotARegularFile {
    /// The filesystem path.
    pub path: PathBuf,
    /// What is there: `directory`, `FIFO`, `socket`, `block device`, `character device`.
    pub kind: &'static str,
}

/// A failed local operation, with the path it was about.
#[derive(Debug, thiserror::Error)]
enum LocalError {
    #[error(transparent)]
    NotAFile(NotARegularFile),
    #[error("{}: {source}", path.display())]
    NotFound { path: PathBuf, source: io::Error },
    #[error("{} exists", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("{} is not the version expected ({found})", path.display())]
    Precondition { path: PathBuf, found: String },
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

impl LocalError {
    fn io(what: &'static str, path: &FsPath) -> impl FnOnce(io::Error) -> LocalError {
        let path = path.to_path_buf();
        move |source| LocalError::Io { what, path, source }
    }
}

impl From<LocalError> for object_store::Error {
    fn from(e: LocalError) -> Self {
        let path_of = |p: &FsPath| p.to_string_lossy().into_owned();
        match e {
            LocalError::NotFound { path, source } => object_store::Error::NotFound {
                path: path_of(&path),
                source: Box::new(source),
            },
            LocalError::AlreadyExists { path } => object_store::Error::AlreadyExists {
                path: path_of(&path),
                source: "the object exists".into(),
            },
            LocalError::Precondition { path, found } => object_store::Error::Precondition {
                path: path_of(&path),
                source: format!("the object is version {found}").into(),
            },
            LocalError::NotAFile(e) => object_store::Error::Generic {
                store: STORE,
                source: Box::new(e),
            },
            e @ LocalError::Io { .. } => object_store::Error::Generic {
                store: STORE,
                source: Box::new(e),
            },
        }
    }
}

/// `object_store`'s ETag of a local file: inode, mtime in µs and size, in hex.
fn e_tag(meta: &Metadata) -> String {
    let inode = inode(meta);
    let mtime = micros(meta.modified().ok());
    format!("\"{inode:x}-{mtime:x}-{:x}\"", meta.len())
}

#[cfg(unix)]
fn inode(meta: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &Metadata) -> u64 {
    0
}

/// Microseconds since the epoch (0 when unknown, as `object_store` does).
fn micros(t: Option<SystemTime>) -> u128 {
    t.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default()
        .as_micros()
}

fn object_meta(location: Path, meta: &Metadata) -> ObjectMeta {
    ObjectMeta {
        location,
        last_modified: meta.modified().map(Into::into).unwrap_or_default(),
        size: meta.len(),
        e_tag: Some(e_tag(meta)),
        version: None,
    }
}

/// What a non-regular file is, for messages.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() {
            return "block device";
        }
        if t.is_char_device() {
            return "character device";
        }
    }
    "special file"
}

fn check_regular(meta: &Metadata, path: &FsPath) -> Result<(), LocalError> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(LocalError::NotAFile(NotARegularFile {
            path: path.to_path_buf(),
            kind: kind_of(meta),
        }))
    }
}

/// The metadata of the regular file at `path` (symbolic links followed, as for reads);
/// `None` when nothing is there.
fn stat_object(path: &FsPath) -> Result<Option<Metadata>, LocalError> {
    match std::fs::metadata(path) {
        Ok(m) => check_regular(&m, path).map(|()| Some(m)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LocalError::io("read the metadata of", path)(e)),
    }
}

fn not_found(path: &FsPath) -> LocalError {
    LocalError::NotFound {
        path: path.to_path_buf(),
        source: io::Error::new(ErrorKind::NotFound, "no such object"),
    }
}

/// Opens the regular file at `path` for reading, never waiting in `open` (see the module
/// documentation).
fn open_object(path: &FsPath) -> Result<(File, Metadata), LocalError> {
    // refuse a FIFO or device before opening it: opening one can wait or act
    stat_object(path)?.ok_or_else(|| not_found(path))?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // if a FIFO replaced the file since the `stat`, `open` returns rather than waits
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => not_found(path),
        _ => LocalError::io("open", path)(e),
    })?;
    let meta = file
        .metadata()
        .map_err(LocalError::io("read the metadata of", path))?;
    check_regular(&meta, path)?;
    Ok((file, meta))
}

/// The directory and file name of a target path.
fn split(path: &FsPath) -> Result<(&FsPath, &std::ffi::OsStr), LocalError> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => Ok((dir, name)),
        _ => Err(LocalError::Io {
            what: "write",
            path: path.to_path_buf(),
            source: io::Error::new(ErrorKind::InvalidInput, "not a file path"),
        }),
    }
}

/// Fsyncs a directory, making the entries it gained or lost durable (Unix only: elsewhere a
/// directory cannot be opened as a file).
fn fsync_dir(dir: &FsPath) -> Result<(), LocalError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(LocalError::io("fsync the directory", dir))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Creates `dir` and its missing parents; when `fsync`, fsyncs each created directory and
/// the existing one it was created in.
fn create_dirs(dir: &FsPath, fsync: bool) -> Result<(), LocalError> {
    let mut first_existing = dir;
    while !first_existing.exists() {
        match first_existing.parent() {
            Some(p) => first_existing = p,
            None => break,
        }
    }
    std::fs::create_dir_all(dir).map_err(LocalError::io("create the directory", dir))?;
    if fsync {
        let mut d = dir;
        loop {
            fsync_dir(d)?;
            match d.parent() {
                Some(p) if d != first_existing => d = p,
                _ => break,
            }
        }
    }
    Ok(())
}

/// A new staging file name for the object `name`: its part before any `#`, `#`, then the
/// process id and a counter (digits only), so that listings never show it (its first `#` is
/// followed by digits only) even when `name` holds a `#`.
fn staging_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = name.to_string_lossy();
    let stem = name.split('#').next().unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{stem}#{}{n:06}", std::process::id()).into()
}

/// A written staging file, removed on drop unless it was published.
struct Staged {
    path: PathBuf,
    file: File,
    published: bool,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Attempts at creating a staging file whose directory another process keeps removing
/// (an empty directory pruned by a concurrent prefix delete).
const MAX_STAGING_ATTEMPTS: usize = 16;

/// Writes every part of `payload` in order, as few `writev` calls as the system allows (a
/// shard's pieces: one call, not one per inner chunk).
fn write_all_parts(file: &mut File, payload: &PutPayload) -> std::io::Result<()> {
    /// At most this many parts per call (Linux's `IOV_MAX` is 1024).
    const PARTS_PER_CALL: usize = 1024;
    let mut slices: Vec<std::io::IoSlice<'_>> =
        payload.iter().map(|p| std::io::IoSlice::new(p)).collect();
    for group in slices.chunks_mut(PARTS_PER_CALL) {
        let mut rest = group;
        // skip empty slices up front: a write of zero bytes is not progress
        std::io::IoSlice::advance_slices(&mut rest, 0);
        while !rest.is_empty() {
            match file.write_vectored(rest) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

impl Staged {
    /// Writes `payload` to a new staging file beside `target` (creating its directory),
    /// fsynced when `fsync`.
    fn write(
        dir: &FsPath,
        name: &std::ffi::OsStr,
        payload: &PutPayload,
        fsync: bool,
    ) -> Result<Staged, LocalError> {
        let mut attempts = 0;
        let (path, file) = loop {
            attempts += 1;
            let path = dir.join(staging_name(name));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => break (path, f),
                Err(e) if attempts < MAX_STAGING_ATTEMPTS => match e.kind() {
                    ErrorKind::AlreadyExists => {}
                    ErrorKind::NotFound => create_dirs(dir, fsync)?,
                    _ => return Err(LocalError::io("create the staging file", &path)(e)),
                },
                Err(e) => return Err(LocalError::io("create the staging file", &path)(e)),
            }
        };
        // removed again on any error below
        let mut staged = Staged {
            path,
            file,
            published: false,
        };
        write_all_parts(&mut staged.file, payload)
            .map_err(LocalError::io("write the staging file", &staged.path))?;
        if fsync {
            staged
                .file
                .sync_all()
                .map_err(LocalError::io("fsync the staging file", &staged.path))?;
        }
        Ok(staged)
    }

    /// Makes the staging file's mtime (in µs, as versions show it) later than `current`'s,
    /// so that the new version differs from every earlier one of the key (see the module
    /// documentation). Tries finer steps first; a filesystem with coarse timestamps
    /// (seconds, FAT's two seconds) takes the coarser ones.
    fn advance_mtime_past(&self, current: &Metadata) -> Result<(), LocalError> {
        let err = || LocalError::io("set the modification time of", &self.path);
        let now = micros(current.modified().ok());
        let mine = |f: &File| f.metadata().map(|m| micros(m.modified().ok()));
        if mine(&self.file).map_err(err())? > now {
            return Ok(());
        }
        for step_us in [1u64, 1_000, 1_000_000, 2_000_000] {
            let t = UNIX_EPOCH
                + Duration::from_micros(u64::try_from(now).unwrap_or(u64::MAX))
                + Duration::from_micros(step_us);
            self.file.set_modified(t).map_err(err())?;
            if mine(&self.file).map_err(err())? > now {
                break;
            }
        }
        Ok(())
    }
}

/// An exclusive lock on a directory, released on drop (closing the descriptor).
struct DirLock {
    _dir: File,
}

/// Attempts at locking a directory that keeps being replaced while we wait.
const MAX_LOCK_ATTEMPTS: usize = 16;

impl DirLock {
    /// Locks `dir`; `NotFound` when it does not exist.
    fn acquire(dir: &FsPath) -> Result<DirLock, LocalError> {
        let lock_err = LocalError::io("lock the directory", dir);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let file = File::open(dir).map_err(|e| match e.kind() {
                ErrorKind::NotFound => not_found(dir),
                _ => LocalError::io("lock the directory", dir)(e),
            })?;
            if let Err(e) = file.lock() {
                return Err(lock_err(e));
            }
            // the directory may have been removed (and re-created) while we waited
            match (file.metadata(), std::fs::metadata(dir)) {
                (Ok(locked), Ok(now)) if same_file(&locked, &now) => {
                    return Ok(DirLock { _dir: file });
                }
                (_, Err(e)) if e.kind() == ErrorKind::NotFound => return Err(not_found(dir)),
                _ if attempts < MAX_LOCK_ATTEMPTS => {}
                (Err(e), _) | (_, Err(e)) => return Err(lock_err(e)),
                _ => {
                    return Err(lock_err(io::Error::other(
                        "the directory keeps being replaced",
                    )));
                }
            }
        }
    }
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_a: &Metadata, _b: &Metadata) -> bool {
    true
}

/// Writes `payload` at `target` as `mode` says (the protocol of the module documentation);
/// returns the new object's ETag.
fn put_file(
    target: &FsPath,
    payload: &PutPayload,
    mode: &PutMode,
    fsync: bool,
) -> Result<String, LocalError> {
    let (dir, name) = split(target)?;
    let mut staged = Staged::write(dir, name, payload, fsync)?;
    let (e_tag, replaced) = {
        let _lock = DirLock::acquire(dir)?;
        let current = stat_object(target)?;
        match (mode, &current) {
            (PutMode::Overwrite, _) | (PutMode::Create, None) => {}
            (PutMode::Create, Some(_)) => {
                return Err(LocalError::AlreadyExists {
                    path: target.to_path_buf(),
                });
            }
            (PutMode::Update(v), Some(m)) if v.e_tag.as_deref() == Some(e_tag(m).as_str()) => {}
            (PutMode::Update(_), found) => {
                return Err(LocalError::Precondition {
                    path: target.to_path_buf(),
                    found: found.as_ref().map_or_else(|| "absent".into(), e_tag),
                });
            }
        }
        if let Some(current) = &current {
            staged.advance_mtime_past(current)?;
        }
        let meta = staged
            .file
            .metadata()
            .map_err(LocalError::io("read the metadata of", &staged.path))?;
        let replaced = current.and_then(|_| hold(target));
        std::fs::rename(&staged.path, target).map_err(LocalError::io("rename onto", target))?;
        staged.published = true;
        (e_tag(&meta), replaced)
    };
    super::closer::close_later(replaced);
    if fsync {
        fsync_dir(dir)?;
    }
    Ok(e_tag)
}

/// A path-only handle (`O_PATH`, not following a symbolic link) of what is at `path`, so
/// that replacing or deleting it leaves its last reference to
/// [`close_later`](super::closer::close_later): nothing is opened for reading (no FIFO, device
/// or lease is acted on). `None` where it cannot be taken (the rename or delete then frees
/// the file, as it always did). Linux only: elsewhere nothing is held.
fn hold(path: &FsPath) -> Option<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
            .open(path)
            .ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// Deletes the object at `target` under its directory's lock.
fn delete_file(target: &FsPath, fsync: bool) -> Result<(), LocalError> {
    let (dir, _) = split(target)?;
    let deleted = {
        let _lock = DirLock::acquire(dir)?;
        stat_object(target)?.ok_or_else(|| not_found(target))?;
        let deleted = hold(target);
        std::fs::remove_file(target).map_err(|e| match e.kind() {
            ErrorKind::NotFound => not_found(target),
            _ => LocalError::io("delete", target)(e),
        })?;
        deleted
    };
    super::closer::close_later(deleted);
    if fsync {
        fsync_dir(dir)?;
    }
    Ok(())
}

/// Runs blocking filesystem work on tokio's blocking pool (inline without a runtime).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(f)
            .await
            .map_err(|e| object_store::Error::JoinError { source: e })?,
        Err(_) => f(),
    }
}

#[async_trait]
impl ObjectStore for LocalCasStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        if !opts.attributes.is_empty() {
            return Err(object_store::Error::NotImplemented {
                operation: "`put_opts` with `opts.attributes` specified".into(),
                implementer: self.to_string(),
            });
        }
        let path = self.inner.path_to_filesystem(location)?;
        let fsync = self.fsync;
        let mode = opts.mode;
        let e_tag = blocking(move || Ok(put_file(&path, &payload, &mode, fsync)?)).await?;
        Ok(PutResult {
            e_tag: Some(e_tag),
            version: None,
            extensions: Default::default(),
        })
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let path = self.inner.path_to_filesystem(location)?;
        let location = location.clone();
        blocking(move || get_file(path, &location, options)).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let (inner, fsync) = (self.inner.clone(), self.fsync);
        locations
            .map(move |location| {
                let inner = inner.clone();
                async move {
                    let location = location?;
                    let path = inner.path_to_filesystem(&location)?;
                    blocking(move || Ok(delete_file(&path, fsync)?)).await?;
                    Ok(location)
                }
            })
            .buffered(10)
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::local::is_staging_name;
    use super::*;

    #[test]
    fn staging_names_are_never_listed_whatever_the_object_name() {
        for name in ["0", "zarr.json", "a#b", "#", "x#12"] {
            let staged = staging_name(std::ffi::OsStr::new(name));
            let staged = staged.to_string_lossy();
            assert!(is_staging_name(&staged), "{name} -> {staged}");
            assert!(
                staged.starts_with(name.split('#').next().unwrap()),
                "{staged}"
            );
        }
    }
}
