//! The JSON layer of the index model: ndsel messages and TensorStore transform JSON.
//!
//! Two levels:
//!
//! - The **message layer** is faithful to the wire formats. [`Message`] reads ndsel
//!   messages (`point`, `box`, `slice`, `points`, `transform`; spec 1.0-draft.2) and
//!   [`TransformJson::from_tensorstore`] reads bare TensorStore `IndexTransform` bodies
//!   (minimal or maximal). Both normalise to a [`TransformJson`], which keeps implicit
//!   flags and `"-inf"` / `"+inf"` bounds and serialises to the canonical maximal body
//!   ([`TransformJson::to_json`]). [`normalize`] is ndsel's `normalize`.
//! - **Lowering** into the engine ([`IndexTransform::from_json`](crate::index::IndexTransform::from_json))
//!   needs finite bounds and well-shaped index arrays;
//!   [`IndexTransform::to_json`](crate::index::IndexTransform::to_json) writes an engine
//!   transform back as a canonical body.
//!
//! Integers are exact `i64`: booleans, floats and integers beyond `i64` are `invalid_json`.
//! Every failure is a [`JsonError`] carrying a stable [`Reason`] code.
//!
//! ```
//! use serde_json::json;
//! use zarrflow::index::json::normalize;
//! let body = normalize(&json!({"kind": "box", "inclusive_min": [2], "inclusive_max": [9]}))
//!     .unwrap();
//! assert_eq!(body["input_exclusive_max"], json!([10]));
//! ```

mod engine;
mod error;
mod ndsel;
mod points;
mod tensorstore;
mod value;

use serde_json::Value;

pub use error::{JsonError, Reason, Result};
pub use ndsel::Message;
pub use tensorstore::{OutputMapJson, TransformJson};
pub use value::{Bound, IndexValue, MAX_JSON_RANK, excerpt};

/// Either wire format: here, above both readers, so that neither imports the other (ndsel
/// messages lower into TensorStore bodies; the TensorStore reader knows nothing of ndsel).
impl TransformJson {
    /// Reads either an ndsel message (an object with `kind`) or a bare TensorStore body
    /// (no `kind`).
    pub fn parse(value: &Value) -> Result<Self> {
        match value {
            Value::Object(obj) if !obj.contains_key("kind") => {
                TransformJson::from_tensorstore(value)
            }
            _ => Message::parse(value)?.normalize(),
        }
    }

    /// [`parse`](Self::parse) from JSON text; malformed text is `invalid_json`.
    pub fn parse_str(text: &str) -> Result<Self> {
        Self::parse(&tensorstore::parse_json_text(text)?)
    }
}

/// ndsel `normalize`: a message (an object with a string `kind`) to its canonical transform
/// body (without `kind`). A bare TensorStore body is rejected (`invalid_json`, no `kind`);
/// use [`canonicalize`] to accept both.
pub fn normalize(message: &Value) -> Result<Value> {
    Ok(Message::parse(message)?.normalize()?.to_json())
}

/// [`normalize`] from JSON text; malformed text is `invalid_json`.
pub fn normalize_str(text: &str) -> Result<Value> {
    Ok(Message::parse_str(text)?.normalize()?.to_json())
}

/// The canonical body of an ndsel message or of a bare TensorStore body (no `kind`).
pub fn canonicalize(value: &Value) -> Result<Value> {
    Ok(TransformJson::parse(value)?.to_json())
}
