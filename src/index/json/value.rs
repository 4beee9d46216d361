//! Value types of the message layer (exact integers, the `"-inf"` / `"+inf"` sentinels,
//! implicit `[n]` bounds) and the strict readers every message is parsed with.

use std::fmt;

use serde_json::{Map, Value};

use super::error::{JsonError, Reason, Result};

/// The largest rank the JSON layer accepts (TensorStore's limit, the engine's
/// [`MAX_RANK`](crate::index::MAX_RANK)).
pub const MAX_JSON_RANK: usize = crate::index::MAX_RANK;

/// An extended integer: a finite `i64` or one of the infinity sentinels.
///
/// The order is `NegInf < Finite(_) < PosInf`; no arithmetic is defined on the sentinels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexValue {
    /// `"-inf"`.
    NegInf,
    /// A finite integer.
    Finite(i64),
    /// `"+inf"`.
    PosInf,
}

impl IndexValue {
    /// The finite value, `None` for a sentinel.
    pub fn finite(self) -> Option<i64> {
        match self {
            IndexValue::Finite(v) => Some(v),
            _ => None,
        }
    }

    /// The JSON spelling: a number, `"-inf"` or `"+inf"`.
    pub fn to_json(self) -> Value {
        match self {
            IndexValue::NegInf => Value::from("-inf"),
            IndexValue::Finite(v) => Value::from(v),
            IndexValue::PosInf => Value::from("+inf"),
        }
    }

    /// Reads an `index-value`: an integer or one of the two sentinel strings.
    pub(crate) fn parse(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::String(s) if s == "-inf" => Ok(IndexValue::NegInf),
            Value::String(s) if s == "+inf" => Ok(IndexValue::PosInf),
            Value::String(s) => Err(JsonError::invalid(format!(
                "{path}: expected an integer, \"-inf\" or \"+inf\", got the string {s:?}"
            ))),
            _ => parse_int(v, path).map(IndexValue::Finite),
        }
    }
}

impl fmt::Display for IndexValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexValue::NegInf => f.write_str("-inf"),
            IndexValue::Finite(v) => write!(f, "{v}"),
            IndexValue::PosInf => f.write_str("+inf"),
        }
    }
}

/// A domain bound with its implicit flag: `n` is explicit, `[n]` implicit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bound {
    /// The value.
    pub value: IndexValue,
    /// True for the bracketed `[n]` form.
    pub implicit: bool,
}

impl Bound {
    /// An explicit finite bound.
    pub fn explicit(v: i64) -> Self {
        Bound {
            value: IndexValue::Finite(v),
            implicit: false,
        }
    }

    /// A bound with the given value and flag.
    pub fn new(value: IndexValue, implicit: bool) -> Self {
        Bound { value, implicit }
    }

    /// The JSON spelling: the value, bracketed when implicit.
    pub fn to_json(self) -> Value {
        if self.implicit {
            Value::Array(vec![self.value.to_json()])
        } else {
            self.value.to_json()
        }
    }

    /// Reads a `bound`: an `index-value` or a one-element array of one.
    pub(crate) fn parse(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::Array(items) => match items.as_slice() {
                [inner] => Ok(Bound::new(
                    IndexValue::parse(inner, &format!("{path}[0]"))?,
                    true,
                )),
                _ => Err(JsonError::invalid(format!(
                    "{path}: an implicit bound is a one-element array [n], got {} elements",
                    items.len()
                ))),
            },
            _ => Ok(Bound::new(IndexValue::parse(v, path)?, false)),
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.implicit {
            write!(f, "[{}]", self.value)
        } else {
            write!(f, "{}", self.value)
        }
    }
}

/// A short description of a JSON value's type and (abbreviated) value for messages.
pub(crate) fn describe(v: &Value) -> String {
    let kind = match v {
        Value::Null => return "null".into(),
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{kind} ({})", excerpt(v))
}

/// The first 40 bytes or so of `v`'s JSON text, with `...` when cut. Serialising stops as
/// soon as the excerpt is full, so a value of any size or depth costs the same (the
/// recursion goes no deeper than the excerpt's length).
pub fn excerpt(v: &Value) -> String {
    const MAX: usize = 40;
    /// A writer that takes `MAX` bytes, then refuses more.
    struct Capped(Vec<u8>);
    impl std::io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = (MAX + 1).saturating_sub(self.0.len());
            if room == 0 {
                return Err(std::io::Error::other("excerpt full"));
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Capped(Vec::with_capacity(MAX + 1));
    let _ = serde_json::to_writer(&mut w, v);
    let mut text = String::from_utf8_lossy(&w.0).into_owned();
    if text.len() > MAX {
        let cut = (0..=MAX)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// Reads an exact `i64`: booleans, floats and integers outside `i64` are `invalid_json`.
pub(crate) fn parse_int(v: &Value, path: &str) -> Result<i64> {
    if let Value::Number(n) = v {
        if let Some(i) = n.as_i64() {
            return Ok(i);
        }
        if n.is_u64() {
            return Err(JsonError::invalid(format!(
                "{path}: the integer {n} is outside the i64 range"
            )));
        }
        return Err(JsonError::invalid(format!(
            "{path}: expected an integer, got the float {n} (floats are rejected; integers \
             beyond 64 bits parse as floats)"
        )));
    }
    Err(JsonError::invalid(format!(
        "{path}: expected an integer, got {}",
        describe(v)
    )))
}

/// Reads a non-negative integer that fits `usize` (a rank or a dimension index).
pub(crate) fn parse_index(v: &Value, path: &str) -> Result<usize> {
    let i = parse_int(v, path)?;
    usize::try_from(i).map_err(|_| {
        JsonError::invalid(format!("{path}: expected a non-negative integer, got {i}"))
    })
}

/// Reads a JSON array.
pub(crate) fn parse_array<'a>(v: &'a Value, path: &str) -> Result<&'a [Value]> {
    match v {
        Value::Array(items) => Ok(items),
        _ => Err(JsonError::invalid(format!(
            "{path}: expected an array, got {}",
            describe(v)
        ))),
    }
}

/// Reads an `integer[]`.
pub(crate) fn parse_int_vec(v: &Value, path: &str) -> Result<Vec<i64>> {
    parse_array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| parse_int(x, &format!("{path}[{i}]")))
        .collect()
}

/// Reads a `bound[]`.
pub(crate) fn parse_bound_vec(v: &Value, path: &str) -> Result<Vec<Bound>> {
    parse_array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| Bound::parse(x, &format!("{path}[{i}]")))
        .collect()
}

/// Reads a `string[]`.
pub(crate) fn parse_string_vec(v: &Value, path: &str) -> Result<Vec<String>> {
    parse_array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| match x {
            Value::String(s) => Ok(s.clone()),
            _ => Err(JsonError::invalid(format!(
                "{path}[{i}]: expected a string, got {}",
                describe(x)
            ))),
        })
        .collect()
}

/// Reads a JSON object.
pub(crate) fn parse_object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        _ => Err(JsonError::invalid(format!(
            "{path}: expected an object, got {}",
            describe(v)
        ))),
    }
}

/// Strict membership: every member of `obj` must be in `allowed`, else `unknown_field`.
pub(crate) fn check_members(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<()> {
    if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(JsonError::new(
            Reason::UnknownField,
            format!(
                "{what}: unknown member {k:?} (allowed: {})",
                allowed.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Rejects a rank above [`MAX_JSON_RANK`] with `rank_mismatch`.
pub(crate) fn check_rank(rank: usize, what: &str) -> Result<()> {
    if rank > MAX_JSON_RANK {
        return Err(JsonError::rank(format!(
            "{what}: rank {rank} exceeds the maximum rank {MAX_JSON_RANK}"
        )));
    }
    Ok(())
}
