//! The groups above a URL: how `create` finds the hierarchy a new array joins, so that it
//! can refresh (`--consolidate`) or name (a note) the consolidated metadata that does not
//! list it yet.

use zarrflow::hierarchy::Group;
use zarrflow::store::StoreKey;

use crate::select::open_store;

/// At most this many levels are looked at above a URL.
const MAX_LEVELS: usize = 64;

/// The URL of the node above `url` (`None` at a bucket's or the filesystem's root).
pub fn parent_url(url: &str) -> Option<String> {
    if url.contains("://") {
        let mut u = url::Url::parse(url).ok()?;
        let segments: Vec<String> = u
            .path_segments()?
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let (_, parent) = segments.split_last()?;
        u.set_path(&format!("/{}", parent.join("/")));
        Some(u.as_str().trim_end_matches('/').to_string())
    } else {
        let path = std::path::absolute(url).ok()?;
        let parent = path.parent()?;
        Some(parent.to_str()?.to_string())
    }
}

/// The groups directly above `url`, nearest first, each with its URL: the walk stops at the
/// first level that is not a group (nothing there, an array, or a store that cannot be
/// opened or read), so the last one is the root of the hierarchy `url` is in.
pub async fn groups_above(url: &str) -> Vec<(String, Group)> {
    let mut groups = Vec::new();
    let mut next = parent_url(url);
    while let Some(parent) = next {
        if groups.len() >= MAX_LEVELS {
            break;
        }
        let Ok(store) = open_store(&parent) else {
            break;
        };
        let Ok(group) = Group::open(&store, &StoreKey::root()).await else {
            break;
        };
        next = parent_url(&parent);
        groups.push((parent, group));
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_of_urls_and_paths() {
        assert_eq!(parent_url("s3://b/x/y.zarr").as_deref(), Some("s3://b/x"));
        assert_eq!(parent_url("s3://b/x/").as_deref(), Some("s3://b"));
        assert_eq!(parent_url("s3://b"), None);
        assert_eq!(
            parent_url("file:///tmp/h.zarr/a").as_deref(),
            Some("file:///tmp/h.zarr")
        );
        assert_eq!(parent_url("/tmp/h.zarr/a").as_deref(), Some("/tmp/h.zarr"));
        assert_eq!(parent_url("/"), None);
    }
}
