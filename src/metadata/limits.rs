//! Limits on metadata documents: their size and their nesting.
//!
//! A document is read only up to [`DEFAULT_MAX_METADATA_BYTES`] (or the limit an opener
//! sets; see `ArrayOptions::with_max_metadata_bytes`), and nothing nests deeper than
//! serde_json's recursion limit, which zarrflow keeps on ([`MAX_JSON_DEPTH`]). Writers obey
//! the same limits, so that nothing is written that cannot be opened again.

use serde_json::Value;

use super::MetadataError;

/// The largest `zarr.json` read by default: 16 MiB. Array and group documents of real
/// datasets stay far below it (a few KiB; attributes of large climate datasets reach a few
/// hundred KiB). Groups holding zarr-python's inline consolidated metadata for tens of
/// thousands of nodes can exceed it: open those with a higher limit.
pub const DEFAULT_MAX_METADATA_BYTES: u64 = 16 << 20;

/// The deepest nesting of JSON arrays and objects in a metadata document, counting the
/// document's own object: 128, serde_json's recursion limit (left on: the `unbounded_depth`
/// feature is not enabled). A deeper document is [`MetadataError::MalformedJson`] when
/// read; values built in code that nest deeper are refused before anything recurses
/// through them.
pub const MAX_JSON_DEPTH: usize = 128;

/// Whether `v` nests arrays and objects more than `max` levels deep (a scalar is at depth
/// 0, `[1]` at depth 1). Iterative: the check itself never recurses.
pub fn nesting_exceeds(v: &Value, max: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth + 1 > max {
            return true;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

/// Refuses a value of `field` nested deeper than what a document can hold
/// ([`MetadataError::InvalidField`], or [`MetadataError::InvalidSpec`] for a creation).
pub(crate) fn check_nesting(
    v: &Value,
    field: &str,
    key: Option<&str>,
) -> Result<(), MetadataError> {
    if !nesting_exceeds(v, MAX_JSON_DEPTH) {
        return Ok(());
    }
    let reason = format!("nested deeper than {MAX_JSON_DEPTH} levels (the JSON limit)");
    Err(match key {
        Some(key) => MetadataError::InvalidField {
            key: key.to_string(),
            field: field.to_string(),
            reason,
        },
        None => MetadataError::InvalidSpec {
            field: field.to_string(),
            reason,
        },
    })
}

/// Refuses a document of `size` bytes above `max` ([`MetadataError::TooLarge`]).
pub(crate) fn check_size(size: u64, max: u64, key: &str) -> Result<(), MetadataError> {
    if size > max {
        return Err(MetadataError::TooLarge {
            key: key.to_string(),
            size,
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_without_recursion() {
        assert!(!nesting_exceeds(&Value::from(1), 0));
        assert!(!nesting_exceeds(&serde_json::json!([1]), 1));
        assert!(nesting_exceeds(&serde_json::json!([[1]]), 1));
        assert!(nesting_exceeds(&serde_json::json!({"a": {"b": []}}), 2));
        let mut deep = Value::from(0);
        for _ in 0..200_000 {
            deep = Value::Array(vec![deep]);
        }
        assert!(nesting_exceeds(&deep, MAX_JSON_DEPTH));
        // dropped without recursion (the test thread's stack is small)
        let mut v = deep;
        while let Value::Array(mut items) = v {
            v = items.pop().unwrap_or(Value::Null);
        }
    }
}
