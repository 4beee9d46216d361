//! Store keys: paths relative to a store's root prefix, and how they map to backend paths.

use object_store::path::{Path, PathPart};

use super::StoreError;

/// A key relative to a store's prefix, e.g. `group/array/c/0/1` or `zarr.json`.
///
/// Keys are `/`-separated, have no leading or trailing `/`, no empty segments and no `.` or `..`
/// segments. The empty key denotes the store root (used for listing and prefixes).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StoreKey(String);

impl StoreKey {
    /// The root (empty) key.
    pub fn root() -> Self {
        StoreKey(String::new())
    }

    /// Validate and build a key.
    pub fn new(key: impl Into<String>) -> Result<Self, StoreError> {
        let key = key.into();
        if key.is_empty() {
            return Ok(StoreKey(key));
        }
        let bad = |reason: &str| StoreError::InvalidKey {
            key: key.clone(),
            reason: reason.to_string(),
        };
        if key.starts_with('/') || key.ends_with('/') {
            return Err(bad("must not start or end with `/`"));
        }
        for seg in key.split('/') {
            if seg.is_empty() {
                return Err(bad("empty path segment"));
            }
            if seg == "." || seg == ".." {
                return Err(bad("`.` and `..` segments are not allowed"));
            }
            if seg.contains('\\') || seg.chars().any(char::is_control) {
                return Err(bad("backslash or control character in key"));
            }
        }
        Ok(StoreKey(key))
    }

    /// The key as a string (empty for the root).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the root key.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Append a relative key (`a` + `b/c` = `a/b/c`), validating the suffix.
    pub fn join(&self, suffix: &str) -> Result<Self, StoreError> {
        let suffix = StoreKey::new(suffix)?;
        Ok(match (self.is_root(), suffix.is_root()) {
            (true, _) => suffix,
            (false, true) => self.clone(),
            (false, false) => StoreKey(format!("{}/{}", self.0, suffix.0)),
        })
    }

    /// The last segment, if any.
    pub fn name(&self) -> Option<&str> {
        self.0.rsplit('/').next().filter(|s| !s.is_empty())
    }

    /// The backend path of this key under `base`: each segment as it is, never
    /// percent-encoded, so that the object's name in the backend (a file name, an S3 key) is
    /// the key's text and listing the backend gives the key back. (`object_store`'s
    /// `Path::join(&str)` percent-encodes `% # ? * [ ] { } ^ | < > ~ "`, the backslash and
    /// the backquote, so a child `a#b` would be stored as `a%23b` and list as another name.)
    pub(crate) fn under(&self, base: &Path) -> Path {
        if self.is_root() {
            return base.clone();
        }
        let mut path = base.clone();
        for seg in self.0.split('/') {
            // every segment of a valid key parses (no `/`, `.`, `..` or control character)
            let part = PathPart::parse(seg).unwrap_or_else(|_| PathPart::from(seg));
            path = path.join(part);
        }
        path
    }

    /// The parent key (the root's parent is `None`).
    pub fn parent(&self) -> Option<Self> {
        if self.is_root() {
            return None;
        }
        Some(match self.0.rfind('/') {
            Some(i) => StoreKey(self.0[..i].to_string()),
            None => StoreKey::root(),
        })
    }
}

impl std::fmt::Display for StoreKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<&str> for StoreKey {
    type Error = StoreError;
    fn try_from(value: &str) -> Result<Self, Self::Error> {
        StoreKey::new(value)
    }
}
