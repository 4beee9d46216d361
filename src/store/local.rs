//! Local-filesystem housekeeping that `object_store` does not do: after a prefix is deleted,
//! the staging files that killed writers left behind and the directories left empty.
//!
//! A write on the local filesystem goes to a staging file `NAME#DIGITS` beside its target
//! and is renamed over it (`object_store`'s `LocalFileSystem` and
//! [`LocalCasStore`](super::LocalCasStore) alike). A process killed in between leaves the
//! staging file. Listings never show such names (`LocalFileSystem` skips them, so
//! [`Store::list_prefix`](super::Store::list_prefix), [`Store::list_dir`](super::Store::list_dir)
//! and [`Store::is_empty_prefix`](super::Store::is_empty_prefix) do too), and
//! [`Store::delete_prefix`](super::Store::delete_prefix) — also what overwriting an array or
//! a hierarchy does first — removes them with the prefix.

use std::io;
use std::path::Path;

/// Directory levels below a deleted prefix that are cleaned up; deeper ones are left.
const MAX_CLEANUP_DEPTH: usize = 64;

/// Whether `name` is a staging file's: `NAME#DIGITS` (the part after the first `#` all
/// digits), the names `LocalFileSystem` gives the files it writes before renaming them into
/// place and never lists.
pub(super) fn is_staging_name(name: &str) -> bool {
    matches!(name.split_once('#'), Some((_, s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the staging files and then the empty directories below `dir` (not `dir`
/// itself), deepest first. Symbolic links are never followed nor removed (a link is not a
/// directory or a file here), so nothing outside `dir` is touched. A missing `dir` is not an
/// error. A write in flight under `dir` loses its staging file and fails (a write racing
/// with the deletion of its prefix); it never leaves a partial object.
pub(super) fn remove_staging_files_and_empty_dirs(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {
            prune(dir, 0)?;
            Ok(())
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Prunes the empty directories below `dir`; returns whether `dir` is left empty.
fn prune(dir: &Path, depth: usize) -> io::Result<bool> {
    let mut empty = true;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        // `DirEntry::file_type` does not follow symbolic links
        let file_type = entry.file_type()?;
        if file_type.is_file() && is_staging_name(&entry.file_name().to_string_lossy()) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
        }
        if file_type.is_dir() && depth < MAX_CLEANUP_DEPTH {
            let path = entry.path();
            if prune(&path, depth + 1)? {
                match std::fs::remove_dir(&path) {
                    Ok(()) => continue,
                    // another writer put something there meanwhile
                    Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        empty = false;
    }
    Ok(empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names_are_those_local_file_system_never_lists() {
        for name in ["0#1", "zarr.json#123456", "#0", "12x#1"] {
            assert!(is_staging_name(name), "{name}");
        }
        for name in ["0", "zarr.json", "a#", "a#1x", "a#b#12", "#"] {
            assert!(!is_staging_name(name), "{name}");
        }
    }

    #[test]
    fn prunes_staging_files_and_empty_directories_and_never_follows_links() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("store");
        std::fs::create_dir_all(root.join("c/0/1")).unwrap();
        std::fs::create_dir_all(root.join("c/2")).unwrap();
        std::fs::write(root.join("c/2/3"), b"x").unwrap();
        std::fs::create_dir_all(root.join("c/4")).unwrap();
        std::fs::write(root.join("c/4/0#17"), b"staged").unwrap();
        std::fs::write(root.join("c/2/3#99"), b"staged").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(outside.join("empty")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::fs::write(outside.join("x#1"), b"not ours").unwrap();
        std::os::unix::fs::symlink(outside.join("x#1"), root.join("c/2/4#1")).unwrap();
        remove_staging_files_and_empty_dirs(&root).unwrap();
        assert!(!root.join("c/0").exists());
        assert!(
            !root.join("c/4").exists(),
            "a directory of staging files only"
        );
        assert!(root.join("c/2/3").exists());
        assert!(!root.join("c/2/3#99").exists());
        assert!(
            root.join("c/2/4#1").symlink_metadata().is_ok(),
            "links are left"
        );
        assert!(outside.join("x#1").exists());
        assert!(root.join("link").symlink_metadata().is_ok());
        assert!(
            outside.join("empty").exists(),
            "nothing outside the store is touched"
        );
        remove_staging_files_and_empty_dirs(&tmp.path().join("missing")).unwrap();
    }
}
