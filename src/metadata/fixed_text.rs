//! zarrs' view of the fixed-width text types and their fill values.
//!
//! zarrs 0.23 implements `fixed_length_utf32` (NumPy `<U n`) but not zarr-python's
//! `null_terminated_bytes` (NumPy `|S n`). Its elements are `n` plain bytes, so its codec
//! chain is the one of the raw type `r{8n}`; only the fill value differs: zarr-python writes
//! it as base64 text of the value without its trailing NULs (`""` for all zeros), in v2 and
//! v3 alike. Every place that builds zarrs' data type or fill value from a document goes
//! through these functions.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use zarrs::array::{DataType as ZarrsDataType, FillValue};
use zarrs::metadata::FillValueMetadata;
use zarrs::metadata::v3::MetadataV3;

use super::DataType;

/// The `len` of a `null_terminated_bytes` data type field.
fn fixed_bytes_len(meta: &MetadataV3) -> Option<usize> {
    match DataType::from_metadata(meta) {
        Some(DataType::FixedBytes { len }) => Some(len as usize),
        _ => None,
    }
}

/// zarrs' data type of a v3 `data_type` field (`r{8n}` for `null_terminated_bytes`).
pub fn zarrs_data_type(meta: &MetadataV3) -> Result<ZarrsDataType, String> {
    match fixed_bytes_len(meta) {
        Some(len) => ZarrsDataType::from_metadata(&MetadataV3::new(format!("r{}", len * 8))),
        None if meta.name() == "null_terminated_bytes" => {
            return Err(
                "its configuration must be {\"length_bytes\": N}, N from 1 to 1 MiB".into(),
            );
        }
        None => match core_data_type(meta) {
            Some(t) => Ok(t),
            None => ZarrsDataType::from_metadata(meta),
        },
    }
    .map_err(|e| e.to_string())
}

/// Builds one of zarrs' data types.
type Build = fn() -> ZarrsDataType;

/// The core numeric types [`core_data_type`] builds directly, by name.
const CORE_TYPES: [(&str, Build); 14] = {
    use zarrs::array::data_type as dt;
    [
        ("bool", dt::bool),
        ("int8", dt::int8),
        ("int16", dt::int16),
        ("int32", dt::int32),
        ("int64", dt::int64),
        ("uint8", dt::uint8),
        ("uint16", dt::uint16),
        ("uint32", dt::uint32),
        ("uint64", dt::uint64),
        ("float16", dt::float16),
        ("float32", dt::float32),
        ("float64", dt::float64),
        ("complex64", dt::complex64),
        ("complex128", dt::complex128),
    ]
};

/// zarrs' data type of a core numeric type named without configuration, built directly.
/// zarrs' own lookup tries its registered types in link order, and trying the raw-bits and
/// text types first compiles the regular expressions of their aliases: ~0.35 ms of every
/// `zarrflow` process that opens an array (measured on `zarrflow get`), for a name this
/// table settles. (zarrs' lookup would first ask its runtime registry, where a program
/// could register its own type under a core name; zarrflow registers none there.)
fn core_data_type(meta: &MetadataV3) -> Option<ZarrsDataType> {
    if !meta.must_understand() || meta.configuration().is_some_and(|c| !c.is_empty()) {
        return None;
    }
    let name = meta.name();
    CORE_TYPES
        .iter()
        .find(|(core, _)| *core == name)
        .map(|(_, build)| build())
}

/// The fill value of `fill` for the data type field `meta` (zarrs' type `data_type`); `None`
/// when it is not one of that type's.
pub fn fill_value(
    meta: &MetadataV3,
    data_type: &ZarrsDataType,
    fill: &FillValueMetadata,
) -> Option<FillValue> {
    let Some(len) = fixed_bytes_len(meta) else {
        return data_type.fill_value_v3(fill).ok();
    };
    let text = serde_json::to_value(fill).ok()?;
    let mut bytes = STANDARD.decode(text.as_str()?).ok()?;
    if bytes.len() > len {
        return None;
    }
    bytes.resize(len, 0);
    Some(FillValue::new(bytes))
}

/// The metadata form of `fill` for the data type field `meta` (zarrs' type `data_type`).
pub fn fill_value_metadata(
    meta: &MetadataV3,
    data_type: &ZarrsDataType,
    fill: &FillValue,
) -> Option<FillValueMetadata> {
    if fixed_bytes_len(meta).is_none() {
        return data_type.metadata_fill_value(fill).ok();
    }
    let bytes = fill.as_ne_bytes();
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    Some(FillValueMetadata::from(
        STANDARD.encode(&bytes[..end]).as_str(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_terminated_bytes_are_raw_bytes_with_base64_fill_values() {
        let meta = DataType::FixedBytes { len: 4 }.to_metadata();
        let dt = zarrs_data_type(&meta).unwrap();
        assert_eq!(dt.fixed_size(), Some(4));
        let parse = |v: serde_json::Value| {
            fill_value(&meta, &dt, &serde_json::from_value(v).unwrap())
                .map(|f| f.as_ne_bytes().to_vec())
        };
        assert_eq!(parse("".into()), Some(vec![0; 4]));
        assert_eq!(parse("YWI=".into()), Some(b"ab\0\0".to_vec()));
        assert_eq!(parse("YWJjZGU=".into()), None, "5 bytes");
        assert_eq!(parse("not base64!".into()), None);
        assert_eq!(parse(serde_json::json!([0, 0, 0, 0])), None);
        let fill = FillValue::new(b"ab\0\0".to_vec());
        let back = fill_value_metadata(&meta, &dt, &fill).unwrap();
        assert_eq!(serde_json::to_value(back).unwrap(), "YWI=");
        let bad = serde_json::from_value::<MetadataV3>(
            serde_json::json!({"name": "null_terminated_bytes", "configuration": {}}),
        )
        .unwrap();
        assert!(zarrs_data_type(&bad).is_err());
    }

    #[test]
    fn fixed_length_utf32_is_zarrs_own() {
        let meta = DataType::FixedString { chars: 3 }.to_metadata();
        let dt = zarrs_data_type(&meta).unwrap();
        assert_eq!(dt.fixed_size(), Some(12));
        let fill = fill_value(&meta, &dt, &FillValueMetadata::from("ab")).unwrap();
        let units: Vec<u32> = fill
            .as_ne_bytes()
            .chunks(4)
            .map(|u| u32::from_ne_bytes(u.try_into().unwrap()))
            .collect();
        assert_eq!(units, [97, 98, 0]);
        assert!(fill_value(&meta, &dt, &FillValueMetadata::from("abcd")).is_none());
    }

    #[test]
    fn core_types_built_directly_are_the_ones_zarrs_looks_up() {
        for (name, _) in CORE_TYPES {
            let meta = MetadataV3::new(name);
            let direct = core_data_type(&meta).unwrap();
            let looked_up = ZarrsDataType::from_metadata(&meta).unwrap();
            assert!(direct == looked_up, "{name}");
            assert_eq!(direct.to_string(), looked_up.to_string(), "{name}");
            assert_eq!(
                zarrs_data_type(&meta).unwrap().fixed_size(),
                looked_up.fixed_size()
            );
            // an empty configuration is no configuration
            let empty = serde_json::json!({"name": name, "configuration": {}});
            let meta = serde_json::from_value::<MetadataV3>(empty).unwrap();
            assert!(core_data_type(&meta).unwrap() == looked_up, "{name} {{}}");
        }
        // anything else goes through zarrs' lookup, errors included
        for v in [
            serde_json::json!("r16"),
            serde_json::json!({"name": "uint16", "must_understand": false}),
            serde_json::json!({"name": "uint16", "configuration": {"x": 1}}),
            serde_json::json!("no_such_type"),
        ] {
            let meta = serde_json::from_value::<MetadataV3>(v.clone()).unwrap();
            assert!(core_data_type(&meta).is_none(), "{v}");
            assert_eq!(
                zarrs_data_type(&meta).map(|t| t.to_string()),
                ZarrsDataType::from_metadata(&meta)
                    .map(|t| t.to_string())
                    .map_err(|e| e.to_string()),
                "{v}"
            );
        }
    }
}
