//! Lowering a transform body into an engine [`IndexTransform`] and serialising one back.
//!
//! Lowering rejects infinite bounds, drops implicit flags (bounds lowered by value), reads
//! `index_array` as a rectangular nested list of `i64`, checks every raw value against the
//! inclusive `index_array_bounds` before `offset` / `stride` are applied (the bounds are
//! then discarded), widens lower-rank arrays by prepending singleton axes, and places an
//! empty array of the wrong rank on the domain's single zero-length axis. A one-element
//! array loads as a constant map (the engine's singleton collapse); an empty one stays an
//! index-array map. Labels are kept, and all-empty labels load as none.
//!
//! Serialising writes the canonical body; one-element and empty index arrays become
//! constant maps, so `from_json(to_json(t)) == t` holds for every transform without an
//! empty or one-element index-array map (indexing never builds the latter; an empty one
//! reloads as `{offset: 0}`, which no point of the empty domain ever reads).

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;

use super::error::{JsonError, Result};
use super::tensorstore::{OutputMapJson, TransformJson, parse_json_text};
use super::value::{Bound, IndexValue, MAX_JSON_RANK, describe};
use crate::index::{IndexArray, IndexDomain, IndexTransform, OutputIndexMap};

impl IndexTransform {
    /// Loads an ndsel message (an object with `kind`) or a bare TensorStore transform body
    /// (no `kind`) into an engine transform.
    ///
    /// ```
    /// use zarrflow::index::IndexTransform;
    /// let t = IndexTransform::from_json(&serde_json::json!(
    ///     {"kind": "slice", "start": [10], "stop": [20], "step": [2]}
    /// )).unwrap();
    /// assert_eq!(t.domain().interval(0), (5, 10));
    /// ```
    pub fn from_json(value: &Value) -> Result<IndexTransform, JsonError> {
        IndexTransform::try_from(&TransformJson::parse(value)?)
    }

    /// [`from_json`](Self::from_json) from JSON text; malformed text is `invalid_json`.
    ///
    /// An ndsel `points` message is read straight into its index arrays (8 bytes a
    /// coordinate, no JSON value tree); every other text, and every error, goes through
    /// [`from_json`](Self::from_json), so both give the same transform or error.
    pub fn from_json_str(text: &str) -> Result<IndexTransform, JsonError> {
        if let Some(columns) = super::points::read_points(text) {
            return points_transform(columns);
        }
        Self::from_json(&parse_json_text(text)?)
    }

    /// The canonical JSON body of this transform (see [`TransformJson::to_json`]).
    ///
    /// Index arrays are written as nested lists of the full input rank with bounds
    /// `["-inf", "+inf"]`; a one-element array becomes `{offset: offset + stride * v}` and an
    /// empty one `{offset: 0}` (the emptiness is in the domain).
    pub fn to_json(&self) -> Value {
        TransformJson::from(self).to_json()
    }
}

impl From<&IndexTransform> for TransformJson {
    fn from(t: &IndexTransform) -> Self {
        let domain = t.domain();
        let rank = domain.rank();
        let inclusive_min = domain
            .inclusive_min()
            .iter()
            .map(|&v| Bound::explicit(v))
            .collect();
        let exclusive_max = domain
            .exclusive_max()
            .iter()
            .map(|&v| Bound::explicit(v))
            .collect();
        let labels = (0..rank).map(|d| domain.label(d).to_string()).collect();
        let output = t.output().iter().map(map_to_json).collect();
        // An engine transform is always a valid body (finite ordered bounds, maps in range).
        TransformJson::new_unchecked(inclusive_min, exclusive_max, labels, output)
    }
}

fn map_to_json(m: &OutputIndexMap) -> OutputMapJson {
    match m {
        OutputIndexMap::Constant { offset } => OutputMapJson::Constant { offset: *offset },
        OutputIndexMap::Dimension {
            input_dimension,
            offset,
            stride,
        } => OutputMapJson::SingleInputDimension {
            input_dimension: *input_dimension,
            offset: *offset,
            stride: *stride,
        },
        OutputIndexMap::Array {
            array,
            offset,
            stride,
        } => {
            let mut values = array.view().into_iter().copied();
            match (array.len(), values.next()) {
                (0, _) => return OutputMapJson::Constant { offset: 0 },
                (1, Some(v)) => {
                    if let Some(c) = affine(*offset, *stride, v) {
                        return OutputMapJson::Constant { offset: c };
                    }
                }
                _ => {}
            }
            OutputMapJson::IndexArray {
                index_array: nested(array),
                offset: *offset,
                stride: *stride,
                index_array_bounds: [IndexValue::NegInf, IndexValue::PosInf],
            }
        }
    }
}

/// The array as nested JSON lists, one level per axis (C order).
fn nested(array: &IndexArray) -> Value {
    fn build(shape: &[usize], values: &mut dyn Iterator<Item = i64>) -> Value {
        match shape.split_first() {
            None => values.next().map_or(Value::Null, Value::from),
            Some((&n, rest)) => Value::Array((0..n).map(|_| build(rest, values)).collect()),
        }
    }
    let view = array.view();
    build(array.shape(), &mut view.iter().copied())
}

impl TryFrom<&TransformJson> for IndexTransform {
    type Error = JsonError;

    fn try_from(body: &TransformJson) -> Result<Self> {
        let finite = |b: &[Bound], name: &str| -> Result<Vec<i64>> {
            b.iter()
                .enumerate()
                .map(|(d, x)| {
                    x.value.finite().ok_or_else(|| {
                        JsonError::invalid(format!(
                            "{name}[{d}] is {x}: the engine needs finite bounds"
                        ))
                    })
                })
                .collect()
        };
        let lo = finite(body.inclusive_min(), "input_inclusive_min")?;
        let hi = finite(body.exclusive_max(), "input_exclusive_max")?;
        let domain = IndexDomain::new(lo, hi)
            .map_err(JsonError::from)?
            .with_labels(body.labels().to_vec())
            .map_err(JsonError::from)?;
        let output = body
            .output()
            .iter()
            .enumerate()
            .map(|(o, m)| lower_map(m, o, &domain))
            .collect::<Result<Vec<_>>>()?;
        IndexTransform::new(domain, output)
            .map_err(|e| JsonError::rank(format!("the body is not a valid transform: {e}")))
    }
}

/// The lowering of a `points` message (ndsel: rank 1 over `[0, m)`, one index-array map
/// per coordinate column) from its columns, as [`TryFrom<&TransformJson>`] lowers the
/// desugared message.
fn points_transform(columns: Vec<Vec<i64>>) -> Result<IndexTransform> {
    let m = columns.first().map_or(0, Vec::len);
    let count =
        i64::try_from(m).map_err(|_| JsonError::invalid("points: too many points for i64"))?;
    let domain = IndexDomain::new(vec![0], vec![count])
        .map_err(JsonError::from)?
        .with_labels(vec![String::new()])
        .map_err(JsonError::from)?;
    let output = columns
        .into_iter()
        .map(|mut column| {
            // growth left up to twice the room needed; give it back
            column.shrink_to_fit();
            let array = ArrayD::from_shape_vec(IxDyn(&[m]), column)
                .map_err(|e| JsonError::rank(format!("points: {e}")))?;
            OutputIndexMap::array_or_constant(IndexArray::new(array), 0, 1).map_err(JsonError::from)
        })
        .collect::<Result<Vec<_>>>()?;
    IndexTransform::new(domain, output)
        .map_err(|e| JsonError::rank(format!("the body is not a valid transform: {e}")))
}

/// `offset + stride * v` if it fits `i64`.
fn affine(offset: i64, stride: i64, v: i64) -> Option<i64> {
    i64::try_from(i128::from(offset) + i128::from(stride) * i128::from(v)).ok()
}

fn lower_map(m: &OutputMapJson, o: usize, domain: &IndexDomain) -> Result<OutputIndexMap> {
    Ok(match m {
        OutputMapJson::Constant { offset } => OutputIndexMap::constant(*offset),
        OutputMapJson::SingleInputDimension {
            input_dimension,
            offset,
            stride,
        } => OutputIndexMap::dimension(*input_dimension, *offset, *stride),
        OutputMapJson::IndexArray {
            index_array,
            offset,
            stride,
            index_array_bounds: [lo, hi],
        } => {
            let path = format!("output[{o}].index_array");
            let (shape, values) = read_nested(index_array, &path)?;
            for (i, &v) in values.iter().enumerate() {
                let x = IndexValue::Finite(v);
                if x < *lo || x > *hi {
                    return Err(JsonError::invalid(format!(
                        "{path}: value {v} (element {i} in C order) is outside \
                         output[{o}].index_array_bounds [{lo}, {hi}]"
                    )));
                }
                if affine(*offset, *stride, v).is_none() {
                    return Err(JsonError::invalid(format!(
                        "{path}: offset {offset} + stride {stride} * value {v} overflows i64"
                    )));
                }
            }
            let shape = engine_shape(shape, values.len(), domain, &path)?;
            let array = ArrayD::from_shape_vec(IxDyn(&shape), values)
                .map_err(|e| JsonError::rank(format!("{path}: {e}")))?;
            OutputIndexMap::array_or_constant(IndexArray::new(array), *offset, *stride)
                .map_err(JsonError::from)?
        }
    })
}

/// The shape an index array takes in the engine: the full input rank. A lower-rank array is
/// widened by prepending singleton axes; an empty array of the wrong rank lies along the
/// domain's single zero-length axis.
fn engine_shape(
    shape: Vec<usize>,
    len: usize,
    domain: &IndexDomain,
    path: &str,
) -> Result<Vec<usize>> {
    let rank = domain.rank();
    if shape.len() == rank {
        return Ok(shape);
    }
    if len == 0 {
        let empty: Vec<usize> = (0..rank).filter(|&d| domain.extent(d) == 0).collect();
        return match empty[..] {
            [axis] => Ok((0..rank).map(|d| usize::from(d != axis)).collect()),
            _ => Err(JsonError::rank(format!(
                "{path}: an empty index array of rank {} needs exactly one zero-length \
                 dimension in the rank-{rank} domain {domain}, found {}",
                shape.len(),
                empty.len()
            ))),
        };
    }
    if shape.len() > rank {
        return Err(JsonError::rank(format!(
            "{path}: index array of rank {} for an input rank of {rank}",
            shape.len()
        )));
    }
    let mut widened = vec![1; rank - shape.len()];
    widened.extend(shape);
    Ok(widened)
}

/// Reads a rectangular nested list of `i64` integers: its shape and values in C order.
fn read_nested(v: &Value, path: &str) -> Result<(Vec<usize>, Vec<i64>)> {
    // The shape follows the first element at every level.
    let mut shape = Vec::new();
    let mut cur = v;
    while let Value::Array(items) = cur {
        if shape.len() >= MAX_JSON_RANK {
            return Err(JsonError::rank(format!(
                "{path}: index array nested deeper than the maximum rank {MAX_JSON_RANK}"
            )));
        }
        shape.push(items.len());
        match items.first() {
            Some(first) => cur = first,
            None => break,
        }
    }
    if shape.is_empty() {
        return Err(JsonError::invalid(format!(
            "{path}: expected a nested list of integers, got {}",
            describe(v)
        )));
    }
    let mut values = Vec::new();
    collect(v, &shape, path, &mut values)?;
    Ok((shape, values))
}

fn collect(v: &Value, shape: &[usize], path: &str, out: &mut Vec<i64>) -> Result<()> {
    match (shape.split_first(), v) {
        (None, Value::Array(_)) => Err(JsonError::invalid(format!(
            "{path}: ragged index array: found a list where an integer is expected"
        ))),
        (None, _) => {
            out.push(super::value::parse_int(v, path)?);
            Ok(())
        }
        (Some((&n, rest)), Value::Array(items)) => {
            if items.len() != n {
                return Err(JsonError::invalid(format!(
                    "{path}: ragged index array: {} elements where its siblings have {n}",
                    items.len()
                )));
            }
            for (i, x) in items.iter().enumerate() {
                collect(x, rest, &format!("{path}[{i}]"), out)?;
            }
            Ok(())
        }
        (Some(_), other) => Err(JsonError::invalid(format!(
            "{path}: ragged index array: found {} where a list is expected",
            describe(other)
        ))),
    }
}
