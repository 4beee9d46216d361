//! Fill-value metadata checked before zarrs parses it: [`has_malformed_hex_string`].

use zarrs::metadata::FillValueMetadata;

/// Whether `fill` holds a string that starts with `0x` (a bit pattern, as Zarr v3 writes
/// float fill values) and has a character other than ASCII in it, at any depth (complex
/// values are arrays). zarrs_metadata 0.7.5 slices such a string at byte offsets and panics
/// inside a multi-byte character (found by the `cli_values` fuzz target: `0x7fcӳ,00+1`);
/// callers refuse it as an invalid fill value before zarrs sees it. No valid bit pattern is
/// refused: those are ASCII hexadecimal digits.
pub fn has_malformed_hex_string(fill: &FillValueMetadata) -> bool {
    match fill {
        FillValueMetadata::String(s) => s.starts_with("0x") && !s.is_ascii(),
        FillValueMetadata::Array(items) => items.iter().any(has_malformed_hex_string),
        FillValueMetadata::Object(map) => map.values().any(has_malformed_hex_string),
        FillValueMetadata::Null | FillValueMetadata::Bool(_) | FillValueMetadata::Number(_) => {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(v: serde_json::Value) -> FillValueMetadata {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn only_non_ascii_bit_patterns_are_malformed() {
        use serde_json::json;
        for bad in [
            json!("0x7fcӳ,00+1"),
            json!(["0x00", "0xé0"]),
            json!({"a": "0xÿÿ"}),
        ] {
            assert!(has_malformed_hex_string(&meta(bad.clone())), "{bad}");
        }
        for good in [
            json!("0x7fc00000"),
            json!("0xzz"),
            json!("NaN"),
            json!("é"),
            json!(1.5),
            json!(["0x0000", "Infinity"]),
            json!(null),
        ] {
            assert!(!has_malformed_hex_string(&meta(good.clone())), "{good}");
        }
    }
}
