//! Where a store's objects live, decoded and canonical: the identity [`Store::location`]
//! compares, so that two spellings of one place (`src.zarr`, `./x/../src.zarr`,
//! `file:///…/%73rc.zarr`, a symbolic link) are recognised as one.
//!
//! [`Store::location`]: super::Store::location

use std::fmt;
use std::path::{Component, Path as FsPath, PathBuf};

use object_store::path::Path;

/// The kind of backend a [`Store`](super::Store) was opened on, for its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Backing {
    /// `object_store`'s `LocalFileSystem` rooted at `/` (the backend path is the absolute
    /// filesystem path without its leading `/`).
    Local,
    /// An object store reached by URL: the scheme (`s3`, `gs`, `az`, `http`) and the bucket,
    /// container or host.
    Remote { scheme: String, authority: String },
    /// The process's named in-memory store `name`.
    NamedMemory { name: String },
    /// A backend known only as an object in this process: a private in-memory store, a
    /// backend wrapped by [`Store::from_object_store`](super::Store::from_object_store).
    Opaque,
}

/// Where a store is rooted, decoded and canonical: what [`Store::location`](super::Store::location)
/// returns and copies compare before they write.
///
/// Two stores with equal locations reach the same objects; one that
/// [`contains`](StoreLocation::contains) another reaches every object of the other. Locations
/// of different kinds never contain one another.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreLocation {
    /// A directory of the local filesystem: absolute, with its longest existing ancestor
    /// canonicalised (symbolic links and `..` resolved) and the rest normalised.
    Local(PathBuf),
    /// A key prefix in a bucket or container of an object store (`s3`, `gs`, `az`), or under
    /// an HTTP host (`http`, for `http` and `https`).
    Object {
        /// `s3` (also for `s3a`), `gs`, `az` (also `adl`, `azure`, `abfs`, `abfss`) or `http`.
        scheme: String,
        /// The bucket, container or host (with its port).
        authority: String,
        /// The decoded key prefix, one element per segment.
        prefix: Vec<String>,
    },
    /// A key prefix in the process's named in-memory store (`memory://NAME/prefix`).
    Memory {
        /// The store's name.
        name: String,
        /// The decoded key prefix, one element per segment.
        prefix: Vec<String>,
    },
    /// A key prefix in a backend known only as an object of this process (a private
    /// `memory://` store, a backend given to `Store::from_object_store`): equal only to
    /// locations on the very same backend object.
    Backend {
        /// The backend object's identity within this process.
        id: usize,
        /// The decoded key prefix, one element per segment.
        prefix: Vec<String>,
    },
}

impl StoreLocation {
    /// The location of a store on `backing` rooted at the backend path `prefix`; `id`
    /// identifies the backend object.
    pub(super) fn of(backing: &Backing, prefix: &Path, id: usize) -> StoreLocation {
        let segments = || prefix.parts().map(|p| p.as_ref().to_string()).collect();
        match backing {
            Backing::Local => {
                let mut path = PathBuf::from("/");
                path.extend(prefix.parts().map(|p| p.as_ref().to_string()));
                StoreLocation::Local(resolve_local(&path))
            }
            Backing::Remote { scheme, authority } => StoreLocation::Object {
                scheme: scheme.clone(),
                authority: authority.clone(),
                prefix: segments(),
            },
            Backing::NamedMemory { name } => StoreLocation::Memory {
                name: name.clone(),
                prefix: segments(),
            },
            Backing::Opaque => StoreLocation::Backend {
                id,
                prefix: segments(),
            },
        }
    }

    /// True when every object under `other` is also under `self` (equal locations
    /// included).
    pub fn contains(&self, other: &StoreLocation) -> bool {
        use StoreLocation as L;
        let starts = |a: &[String], b: &[String]| b.starts_with(a);
        match (self, other) {
            (L::Local(a), L::Local(b)) => b.starts_with(a),
            (
                L::Object {
                    scheme: s1,
                    authority: a1,
                    prefix: p1,
                },
                L::Object {
                    scheme: s2,
                    authority: a2,
                    prefix: p2,
                },
            ) => s1 == s2 && a1 == a2 && starts(p1, p2),
            (
                L::Memory {
                    name: n1,
                    prefix: p1,
                },
                L::Memory {
                    name: n2,
                    prefix: p2,
                },
            ) => n1 == n2 && starts(p1, p2),
            (L::Backend { id: i1, prefix: p1 }, L::Backend { id: i2, prefix: p2 }) => {
                i1 == i2 && starts(p1, p2)
            }
            _ => false,
        }
    }

    /// True when one location contains the other (a copy between them would read what it
    /// writes, or delete what it reads).
    pub fn overlaps(&self, other: &StoreLocation) -> bool {
        self.contains(other) || other.contains(self)
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |p: &[String]| p.iter().map(|s| format!("/{s}")).collect::<String>();
        match self {
            StoreLocation::Local(p) => write!(f, "local directory {}", p.display()),
            StoreLocation::Object {
                scheme,
                authority,
                prefix,
            } => write!(f, "{scheme}://{authority}{}", join(prefix)),
            StoreLocation::Memory { name, prefix } => {
                write!(f, "memory://{name}{}", join(prefix))
            }
            StoreLocation::Backend { id, prefix } => {
                write!(f, "backend object {id:#x}{}", join(prefix))
            }
        }
    }
}

/// `path` (absolute) with its longest existing ancestor canonicalised and the rest
/// normalised (`.` dropped, `..` taking away the previous component), as the kernel would
/// resolve it once the missing part exists.
pub(super) fn resolve_local(path: &FsPath) -> PathBuf {
    let mut resolved = PathBuf::new();
    let mut existing = true;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => resolved.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                resolved.push(name);
                if existing {
                    match std::fs::canonicalize(&resolved) {
                        Ok(canonical) => resolved = canonical,
                        // missing (or unreadable): the rest cannot be links yet
                        Err(_) => existing = false,
                    }
                }
            }
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_resolve_links_and_dot_dot_in_the_existing_part() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        assert_eq!(resolve_local(&base.join("link")), base.join("real"));
        assert_eq!(
            resolve_local(&base.join("link/./new/../other")),
            base.join("real/other")
        );
        // `..` after a link leaves the link's target, as the kernel does
        std::fs::create_dir(base.join("real/sub")).unwrap();
        std::os::unix::fs::symlink(base.join("real/sub"), base.join("sublink")).unwrap();
        assert_eq!(resolve_local(&base.join("sublink/..")), base.join("real"));
        assert_eq!(
            resolve_local(&base.join("missing/a/../b")),
            base.join("missing/b")
        );
    }

    #[test]
    fn containment_is_by_segment_and_kind() {
        let obj = |prefix: &[&str]| StoreLocation::Object {
            scheme: "s3".into(),
            authority: "b".into(),
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
        };
        assert!(obj(&["g"]).contains(&obj(&["g"])));
        assert!(obj(&["g"]).contains(&obj(&["g", "child"])));
        assert!(!obj(&["g", "child"]).contains(&obj(&["g"])));
        assert!(obj(&["g", "child"]).overlaps(&obj(&["g"])));
        assert!(!obj(&["g"]).overlaps(&obj(&["g2"])), "segments, not text");
        let mem = StoreLocation::Memory {
            name: "b".into(),
            prefix: vec!["g".into()],
        };
        assert!(!mem.overlaps(&obj(&["g"])));
        let local = |p: &str| StoreLocation::Local(PathBuf::from(p));
        assert!(local("/a/b").contains(&local("/a/b/c")));
        assert!(!local("/a/b").overlaps(&local("/a/bc")));
    }
}
