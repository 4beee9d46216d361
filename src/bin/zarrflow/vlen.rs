//! Text arrays (`string`, `bytes`, and the fixed-width `<U n` / `|S n`) on the command line:
//! printing, `.npy` files (`<U n` / `|S n`, never pickled objects) and values given as text.
//!
//! A `bytes` element is shown as a JSON string of one character per byte: printable ASCII as
//! itself, every other byte as `\u00XX` (its value), so `"a\u00ff"` is the two bytes 0x61
//! 0xff; `set --value` and `create --fill-value` read that form back (a bare text is taken as
//! it is).

use std::path::Path;

use zarrflow::npy::{self, NpyHeader, NpyKind};
use zarrflow::{ArrayView, DataType};

use crate::error::{CliError, Result};
use crate::get::{finish_print, shown};
use crate::output::{Stdout, stdout_error};
use crate::quote::{quoted, quoted_path};
use crate::values::write_nested_with;

/// Bytes a variable-length element takes in memory before its values are known: its
/// handle while it is read (the values' own sizes are known once read).
pub const HANDLE_BYTES: usize = 8;

/// The elements of `view` (a `string` or `bytes` array) as byte strings.
pub async fn read_elements(view: &ArrayView) -> Result<Vec<Vec<u8>>> {
    Ok(match view.array().data_type() {
        t if t.is_unicode() => view
            .read_vlen::<String>()
            .await?
            .into_iter()
            .map(String::into_bytes)
            .collect(),
        _ => view.read_vlen::<Vec<u8>>().await?.into_iter().collect(),
    })
}

/// One element as printed: a JSON string (see the module's documentation for bytes).
pub fn format_element(data_type: DataType, value: &[u8]) -> String {
    if data_type.is_unicode() {
        let text = String::from_utf8_lossy(value);
        return serde_json::to_string(&text).unwrap_or_default();
    }
    let mut out = String::from("\"");
    for &b in value {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\u{b:04x}")),
        }
    }
    out.push('"');
    out
}

/// The element a command-line value gives: a JSON string (`"a\u00ff"`) as its content, any
/// other text as it is; for `bytes`, each character is one byte (at most U+00FF).
pub fn parse_value(data_type: DataType, text: &str) -> Result<Vec<u8>> {
    let content = match serde_json::from_str::<serde_json::Value>(text.trim()) {
        Ok(serde_json::Value::String(s)) => s,
        _ => text.to_string(),
    };
    if data_type.is_unicode() {
        return Ok(content.into_bytes());
    }
    content
        .chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| {
            CliError::usage(format!(
                "`{}` is not a valid value for data type bytes: each character is one byte \
                 (write bytes 0x80 and above as \\u0080 .. \\u00ff)",
                quoted(text.trim())
            ))
        })
}

/// The metadata fill value of a command-line value (`create --fill-value`).
pub fn fill_value_json(data_type: DataType, text: &str) -> Result<serde_json::Value> {
    let bytes = parse_value(data_type, text)?;
    Ok(match data_type {
        t if t.is_unicode() => serde_json::Value::from(String::from_utf8_lossy(&bytes).as_ref()),
        // zarr-python's form: base64 text of the value without its trailing NULs
        DataType::FixedBytes { len } => {
            use base64::Engine;
            if bytes.len() > len as usize {
                return Err(CliError::usage(format!(
                    "the fill value is {} bytes long, more than {data_type} holds",
                    bytes.len()
                )));
            }
            let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            serde_json::Value::from(base64::engine::general_purpose::STANDARD.encode(&bytes[..end]))
        }
        _ => serde_json::Value::from(bytes),
    })
}

/// Prints the values of `view` as nested lists of JSON strings (large views summarised, as
/// for fixed-size types; only the values shown are read).
pub async fn print_view(view: &ArrayView, full: bool, max_bytes: u64) -> Result<()> {
    let (extents, shown_view) = shown(view, full)?;
    crate::get::check_result_size(&shown_view.shape(), HANDLE_BYTES, max_bytes)?;
    let values = read_elements(&shown_view).await?;
    let data_type = view.array().data_type();
    let mut out = Stdout::lock();
    let mut next = values.iter();
    write_nested_with(&mut out, &extents, &mut || {
        next.next()
            .map(|v| format_element(data_type, v))
            .unwrap_or_default()
    })
    .map_err(stdout_error)?;
    finish_print(out, &view.shape(), &extents)
}

/// The `.npy` form of the values of `view`: `<U{most characters}` for strings,
/// `|S{longest}` for bytes, and a fixed-width array's own `<U n` / `|S n`.
pub async fn npy_data(view: &ArrayView) -> Result<(npy::NpyType, Vec<u8>)> {
    let data_type = view.array().data_type();
    if !data_type.is_variable_length() {
        // a fixed-width type's elements are already NumPy's, at the array's width
        return Ok((npy::NpyType::of(data_type), view.read_bytes().await?));
    }
    let values = read_elements(view).await?;
    let kind = match data_type {
        DataType::String => NpyKind::Unicode,
        _ => NpyKind::Bytes,
    };
    Ok(npy::text_data(kind, &values))
}

/// Refuses a `--from` file for a variable-length array, before its data is read, unless it
/// is text of the array's kind (`<U` for `string`, `|S` for `bytes`) with at most as many
/// values as the selection.
pub fn check_npy_header(
    header: &NpyHeader,
    path: &Path,
    data_type: DataType,
    target: &[u64],
) -> Result<()> {
    let want = match data_type.is_unicode() {
        true => NpyKind::Unicode,
        false => NpyKind::Bytes,
    };
    if header.descr.ty.kind() != want {
        return Err(CliError::usage(format!(
            "{}: holds {} values, but the array's data type is {data_type} (give {}); convert \
             it first (e.g. numpy's astype)",
            quoted_path(path),
            header.descr.ty,
            if want == NpyKind::Unicode {
                "<U n"
            } else {
                "|S n"
            },
        )));
    }
    crate::set::check_value_count(header, path, target)
}

/// Writes `values` (byte strings of `shape`) into `view`, broadcast.
pub async fn write_values(view: &ArrayView, values: Vec<Vec<u8>>, shape: &[u64]) -> Result<()> {
    let shape: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
    let bad_shape = |e: ndarray::ShapeError| CliError::new(format!("internal error: {e}"));
    match view.array().data_type() {
        t if t.is_unicode() => {
            let strings = values
                .into_iter()
                .map(|v| {
                    String::from_utf8(v).map_err(|_| CliError::usage("a value is not valid UTF-8"))
                })
                .collect::<Result<Vec<String>>>()?;
            let a = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), strings)
                .map_err(bad_shape)?;
            view.write_vlen(&a).await?;
        }
        _ => {
            let a = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), values)
                .map_err(bad_shape)?;
            view.write_vlen(&a).await?;
        }
    }
    Ok(())
}

/// The values of a `--from` file read by [`crate::input::read_npy`].
pub fn file_values(file: &npy::Npy, path: &Path) -> Result<Vec<Vec<u8>>> {
    npy::text_values(file.ty(), &file.data)
        .unwrap_or_else(|| Ok(Vec::new()))
        .map_err(|e| CliError::new(format!("{}: {e}", quoted_path(path))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_one_character_per_byte_and_parse_back() {
        let raw = b"a\"\\\xff\x00 z".to_vec();
        let text = format_element(DataType::Bytes, &raw);
        assert_eq!(text, r#""a\"\\\u00ff\u0000 z""#);
        assert_eq!(parse_value(DataType::Bytes, &text).unwrap(), raw);
        assert_eq!(parse_value(DataType::Bytes, "plain").unwrap(), b"plain");
        assert!(parse_value(DataType::Bytes, "\u{2603}").is_err());
        assert_eq!(
            format_element(DataType::String, "h\u{e9}\n".as_bytes()),
            "\"h\u{e9}\\n\""
        );
        assert_eq!(parse_value(DataType::String, "\"1\"").unwrap(), b"1");
        assert_eq!(parse_value(DataType::String, "1.5").unwrap(), b"1.5");
    }
}
