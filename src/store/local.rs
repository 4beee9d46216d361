//! Local-filesystem housekeeping that `object_store` does not do.

use std::io;
use std::path::Path;

/// Directory levels below a deleted prefix that are cleaned up; deeper ones are left.
const MAX_CLEANUP_DEPTH: usize = 64;

/// Removes the empty directories below `dir` (not `dir` itself), deepest first. Symbolic
/// links are never followed (a link is not a directory here, and it is left alone), so
/// nothing outside `dir` is touched. A missing `dir` is not an error.
pub(super) fn remove_empty_dirs(dir: &Path) -> io::Result<()> {
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
        if entry.file_type()?.is_dir() && depth < MAX_CLEANUP_DEPTH {
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
    fn prunes_only_empty_directories_and_never_follows_links() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("store");
        std::fs::create_dir_all(root.join("c/0/1")).unwrap();
        std::fs::create_dir_all(root.join("c/2")).unwrap();
        std::fs::write(root.join("c/2/3"), b"x").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(outside.join("empty")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        remove_empty_dirs(&root).unwrap();
        assert!(!root.join("c/0").exists());
        assert!(root.join("c/2/3").exists());
        assert!(root.join("link").symlink_metadata().is_ok());
        assert!(
            outside.join("empty").exists(),
            "nothing outside the store is touched"
        );
        remove_empty_dirs(&tmp.path().join("missing")).unwrap();
    }
}
