//! Opening stores and arrays, and turning a SELECTION (or a transform file) into a view.

use zarrflow::array::{Array, ArrayOptions, ArrayView};
use zarrflow::index::SelectionItem;
use zarrflow::store::{Store, StoreKey, StoreOptions};

use crate::cli::{LimitArgs, ModeArgs};
use crate::error::{CliError, Result};
use crate::parse::parse_selection;
use crate::quote::{quoted, quoted_path};

/// Opens the store rooted at a URL (a path or a URL).
pub fn open_store(url: &str) -> Result<Store> {
    if url.is_empty() {
        return Err(CliError::usage("empty URL"));
    }
    Ok(Store::open(url, StoreOptions::default())?)
}

/// Opens the array at a URL.
pub async fn open_array(url: &str) -> Result<Array> {
    open_array_with(url, ArrayOptions::default()).await
}

/// Opens the array at a URL with `options`.
pub async fn open_array_with(url: &str, options: ArrayOptions) -> Result<Array> {
    let store = open_store(url)?;
    Ok(Array::open_in(&store, &StoreKey::root(), options).await?)
}

/// The view of `array` selected by a SELECTION string, or by a transform file (read within
/// `--max-transform-bytes`).
pub fn view_of(
    array: &Array,
    selection: &str,
    mode: &ModeArgs,
    limits: &LimitArgs,
) -> Result<ArrayView> {
    let whole = array.view();
    if let Some(path) = &mode.transform {
        if !selection.trim().is_empty() {
            return Err(CliError::usage(
                "--transform replaces SELECTION; give one or the other",
            ));
        }
        let text = crate::input::read_transform(path, limits.max_transform_bytes)?;
        return whole
            .transformed_json(&text)
            .map_err(|e| CliError::from(e).context(quoted_path(path)));
    }
    let sel = parse_selection(selection)?;
    let view = if mode.oindex {
        whole.oindex(&sel)
    } else if mode.vindex {
        whole.vindex(&sel)
    } else {
        if let Some(pos) = sel.items().iter().position(SelectionItem::is_array) {
            return Err(CliError::usage(format!(
                "selection `{}`: item {} is a list; lists need --oindex (outer: each \
                 list selects along its own dimension) or --vindex (vectorised: lists broadcast \
                 together and select points)",
                quoted(selection),
                pos + 1
            )));
        }
        whole.get(&sel)
    };
    view.map_err(|e| CliError::from(e).context(format!("selection `{}`", quoted(selection))))
}

/// Prints an explanation: its text, or its JSON with `json`.
pub fn print_explain(
    text: &dyn std::fmt::Display,
    value: &impl serde::Serialize,
    json: bool,
) -> Result<()> {
    if json {
        let doc = serde_json::to_string_pretty(value)
            .map_err(|e| CliError::new(format!("cannot print the explanation as JSON: {e}")))?;
        crate::output::print(&format!("{doc}\n"))
    } else {
        crate::output::print(&text.to_string())
    }
}
