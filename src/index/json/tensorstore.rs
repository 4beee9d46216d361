//! The canonical transform body ([`TransformJson`]) and TensorStore's `IndexTransform` JSON.
//!
//! A body is read with TensorStore's defaults ([`TransformJson::from_tensorstore`]): both
//! TensorStore's own minimal `to_json` output and the canonical maximal form load. It is
//! written back in the canonical maximal form ([`TransformJson::to_json`]): every member
//! present, implicit flags and `"-inf"` / `"+inf"` sentinels preserved.

use serde_json::{Map, Value};

use super::error::{JsonError, Reason, Result};
use super::value::{
    Bound, IndexValue, MAX_JSON_RANK, check_members, check_rank, parse_array, parse_bound_vec,
    parse_index, parse_int, parse_object, parse_string_vec,
};

/// One output index map of a transform body.
///
/// The kind follows the JSON rule: `index_array` present → [`IndexArray`](Self::IndexArray);
/// otherwise `input_dimension` present → [`SingleInputDimension`](Self::SingleInputDimension);
/// otherwise [`Constant`](Self::Constant).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputMapJson {
    /// `out = offset`.
    Constant {
        /// The output coordinate.
        offset: i64,
    },
    /// `out = offset + stride * in[input_dimension]`.
    SingleInputDimension {
        /// The input dimension read.
        input_dimension: usize,
        /// Added after scaling.
        offset: i64,
        /// Scale factor.
        stride: i64,
    },
    /// `out = offset + stride * index_array[in]`.
    IndexArray {
        /// The nested integer array, carried verbatim (its leaves are checked to be `i64`
        /// integers; its shape is checked only when lowering into the engine).
        index_array: Value,
        /// Added after scaling.
        offset: i64,
        /// Scale factor.
        stride: i64,
        /// Inclusive bounds `[lo, hi]` on the raw array values.
        index_array_bounds: [IndexValue; 2],
    },
}

/// The members an output map may carry.
const MAP_MEMBERS: [&str; 5] = [
    "offset",
    "stride",
    "input_dimension",
    "index_array",
    "index_array_bounds",
];

impl OutputMapJson {
    /// The canonical JSON: `{offset}` for a constant, `{offset, stride, input_dimension}`,
    /// or `{offset, stride, index_array, index_array_bounds}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        match self {
            OutputMapJson::Constant { offset } => {
                m.insert("offset".into(), Value::from(*offset));
            }
            OutputMapJson::SingleInputDimension {
                input_dimension,
                offset,
                stride,
            } => {
                m.insert("offset".into(), Value::from(*offset));
                m.insert("stride".into(), Value::from(*stride));
                m.insert("input_dimension".into(), Value::from(*input_dimension));
            }
            OutputMapJson::IndexArray {
                index_array,
                offset,
                stride,
                index_array_bounds: [lo, hi],
            } => {
                m.insert("offset".into(), Value::from(*offset));
                m.insert("stride".into(), Value::from(*stride));
                m.insert("index_array".into(), index_array.clone());
                m.insert(
                    "index_array_bounds".into(),
                    Value::Array(vec![lo.to_json(), hi.to_json()]),
                );
            }
        }
        Value::Object(m)
    }

    /// Reads one output map; `path` (e.g. `output[2]`) prefixes every error detail.
    pub(crate) fn parse(v: &Value, path: &str) -> Result<Self> {
        let obj = parse_object(v, path)?;
        check_members(obj, &MAP_MEMBERS, path)?;
        if obj.contains_key("input_dimension") && obj.contains_key("index_array") {
            return Err(JsonError::new(
                Reason::OutputMapConflict,
                format!("{path}: an output map may not carry both input_dimension and index_array"),
            ));
        }
        let int_or = |key: &str, default: i64| -> Result<i64> {
            obj.get(key)
                .map_or(Ok(default), |x| parse_int(x, &format!("{path}.{key}")))
        };
        let offset = int_or("offset", 0)?;
        let stride = int_or("stride", 1)?;
        let bounds = match obj.get("index_array_bounds") {
            None => [IndexValue::NegInf, IndexValue::PosInf],
            Some(b) => {
                let bpath = format!("{path}.index_array_bounds");
                match parse_array(b, &bpath)? {
                    [lo, hi] => [
                        IndexValue::parse(lo, &format!("{bpath}[0]"))?,
                        IndexValue::parse(hi, &format!("{bpath}[1]"))?,
                    ],
                    other => {
                        return Err(JsonError::invalid(format!(
                            "{bpath}: expected [lo, hi], got {} elements",
                            other.len()
                        )));
                    }
                }
            }
        };
        if let Some(a) = obj.get("index_array") {
            let apath = format!("{path}.index_array");
            parse_array(a, &apath)?;
            check_index_array_leaves(a, &apath, 0)?;
            return Ok(OutputMapJson::IndexArray {
                index_array: a.clone(),
                offset,
                stride,
                index_array_bounds: bounds,
            });
        }
        if let Some(d) = obj.get("input_dimension") {
            let input_dimension = parse_index(d, &format!("{path}.input_dimension"))?;
            return Ok(OutputMapJson::SingleInputDimension {
                input_dimension,
                offset,
                stride,
            });
        }
        // A constant map: `stride` and `index_array_bounds` are redundant and dropped.
        Ok(OutputMapJson::Constant { offset })
    }
}

/// Type-checks a nested index array: arrays and `i64` integers only, at most 32 levels.
fn check_index_array_leaves(v: &Value, path: &str, depth: usize) -> Result<()> {
    match v {
        Value::Array(items) => {
            if depth >= MAX_JSON_RANK {
                return Err(JsonError::rank(format!(
                    "{path}: index array nested deeper than the maximum rank {MAX_JSON_RANK}"
                )));
            }
            for (i, x) in items.iter().enumerate() {
                check_index_array_leaves(x, &format!("{path}[{i}]"), depth + 1)?;
            }
            Ok(())
        }
        _ => parse_int(v, path).map(|_| ()),
    }
}

/// How a missing lower bound is filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MinDefault {
    /// ndsel: explicit 0 in every dimension.
    Zero,
    /// TensorStore: explicit 0 if a shape is given, otherwise implicit `-inf`.
    TensorStore,
}

/// The domain members of a `box` message or a transform body, as received.
#[derive(Clone, Debug, Default)]
pub(crate) struct DomainSpec {
    /// `input_` for transform bodies, `` for `box`.
    prefix: &'static str,
    /// Name of the labels member (`input_labels` / `labels`).
    labels_key: &'static str,
    rank: Option<usize>,
    inclusive_min: Option<Vec<Bound>>,
    exclusive_max: Option<Vec<Bound>>,
    inclusive_max: Option<Vec<Bound>>,
    shape: Option<Vec<Bound>>,
    labels: Option<Vec<String>>,
}

/// A resolved domain: one `[inclusive_min, exclusive_max)` and label per dimension.
pub(crate) struct Domain {
    pub(crate) inclusive_min: Vec<Bound>,
    pub(crate) exclusive_max: Vec<Bound>,
    pub(crate) labels: Vec<String>,
}

impl DomainSpec {
    /// Reads the domain members: `{prefix}inclusive_min`, `{prefix}exclusive_max`,
    /// `{prefix}inclusive_max`, `{prefix}shape`, `labels_key`, and `rank_key` if given.
    pub(crate) fn parse(
        obj: &Map<String, Value>,
        prefix: &'static str,
        labels_key: &'static str,
        rank_key: Option<&str>,
    ) -> Result<Self> {
        let bounds = |name: &str| -> Result<Option<Vec<Bound>>> {
            let key = format!("{prefix}{name}");
            obj.get(&key).map(|v| parse_bound_vec(v, &key)).transpose()
        };
        let rank = match rank_key {
            Some(k) => obj.get(k).map(|v| parse_index(v, k)).transpose()?,
            None => None,
        };
        Ok(DomainSpec {
            prefix,
            labels_key,
            rank,
            inclusive_min: bounds("inclusive_min")?,
            exclusive_max: bounds("exclusive_max")?,
            inclusive_max: bounds("inclusive_max")?,
            shape: bounds("shape")?,
            labels: obj
                .get(labels_key)
                .map(|v| parse_string_vec(v, labels_key))
                .transpose()?,
        })
    }

    /// The rank (explicit, or inferred from the arrays, or 0) after checking that every
    /// present array agrees with it.
    pub(crate) fn rank(&self) -> Result<usize> {
        let p = self.prefix;
        let mut rank: Option<(usize, String)> = self.rank.map(|r| (r, format!("{p}rank = {r}")));
        let arrays = [
            ("inclusive_min", self.inclusive_min.as_ref().map(Vec::len)),
            ("exclusive_max", self.exclusive_max.as_ref().map(Vec::len)),
            ("inclusive_max", self.inclusive_max.as_ref().map(Vec::len)),
            ("shape", self.shape.as_ref().map(Vec::len)),
        ];
        let labels = (self.labels_key, self.labels.as_ref().map(Vec::len));
        for (name, len) in arrays
            .iter()
            .map(|(n, l)| (format!("{p}{n}"), *l))
            .chain(std::iter::once((labels.0.to_string(), labels.1)))
        {
            let Some(len) = len else { continue };
            match &rank {
                Some((r, from)) if *r != len => {
                    return Err(JsonError::rank(format!(
                        "{name} has {len} entries but {from}"
                    )));
                }
                Some(_) => {}
                None => rank = Some((len, format!("{name} has {len}"))),
            }
        }
        let rank = rank.map_or(0, |(r, _)| r);
        check_rank(rank, &format!("{p}rank"))?;
        Ok(rank)
    }

    /// Resolves defaults and the upper-bound spelling, and checks every interval.
    pub(crate) fn resolve(self, min_default: MinDefault) -> Result<Domain> {
        let p = self.prefix;
        let given: Vec<&str> = [
            ("exclusive_max", self.exclusive_max.is_some()),
            ("inclusive_max", self.inclusive_max.is_some()),
            ("shape", self.shape.is_some()),
        ]
        .into_iter()
        .filter_map(|(n, present)| present.then_some(n))
        .collect();
        if given.len() > 1 {
            let names: Vec<String> = given.iter().map(|n| format!("{p}{n}")).collect();
            return Err(JsonError::new(
                Reason::MultipleUpperBounds,
                format!(
                    "{} are given together; at most one upper bound spelling is allowed",
                    names.join(" and ")
                ),
            ));
        }
        let rank = self.rank()?;
        let inclusive_min = match self.inclusive_min {
            Some(v) => v,
            None => {
                let implicit_infinite =
                    min_default == MinDefault::TensorStore && self.shape.is_none();
                let b = if implicit_infinite {
                    Bound::new(IndexValue::NegInf, true)
                } else {
                    Bound::explicit(0)
                };
                vec![b; rank]
            }
        };
        let exclusive_max = if let Some(v) = self.exclusive_max {
            v
        } else if let Some(v) = self.inclusive_max {
            v.into_iter()
                .enumerate()
                .map(|(d, b)| {
                    let value = match b.value {
                        IndexValue::Finite(n) => {
                            IndexValue::Finite(n.checked_add(1).ok_or_else(|| {
                                JsonError::invalid(format!(
                                    "{p}inclusive_max[{d}] = {n}: the exclusive bound {n} + 1 \
                                     exceeds i64"
                                ))
                            })?)
                        }
                        inf => inf,
                    };
                    Ok(Bound::new(value, b.implicit))
                })
                .collect::<Result<Vec<_>>>()?
        } else if let Some(v) = self.shape {
            v.into_iter()
                .zip(&inclusive_min)
                .enumerate()
                .map(|(d, (s, lo))| shape_to_max(p, d, lo.value, s))
                .collect::<Result<Vec<_>>>()?
        } else {
            vec![Bound::new(IndexValue::PosInf, true); rank]
        };
        for (d, (lo, hi)) in inclusive_min.iter().zip(&exclusive_max).enumerate() {
            if lo.value > hi.value {
                return Err(JsonError::new(
                    Reason::BoundsOutOfOrder,
                    format!("dimension {d}: {p}inclusive_min {lo} > exclusive upper bound {hi}"),
                ));
            }
        }
        let labels = self.labels.unwrap_or_else(|| vec![String::new(); rank]);
        Ok(Domain {
            inclusive_min,
            exclusive_max,
            labels,
        })
    }
}

/// `exclusive_max = inclusive_min + shape`, defined for finite operands (and a `+inf`
/// shape); the implicit flag comes from the shape entry.
fn shape_to_max(p: &str, d: usize, lo: IndexValue, s: Bound) -> Result<Bound> {
    let value = match (lo, s.value) {
        (_, IndexValue::NegInf) => {
            return Err(JsonError::new(
                Reason::BoundsOutOfOrder,
                format!("{p}shape[{d}] is -inf: a shape must be non-negative"),
            ));
        }
        (_, IndexValue::Finite(n)) if n < 0 => {
            return Err(JsonError::new(
                Reason::BoundsOutOfOrder,
                format!("{p}shape[{d}] = {n} is negative"),
            ));
        }
        (IndexValue::Finite(a), IndexValue::Finite(n)) => {
            IndexValue::Finite(a.checked_add(n).ok_or_else(|| {
                JsonError::invalid(format!(
                    "dimension {d}: {p}inclusive_min {a} + {p}shape {n} exceeds i64"
                ))
            })?)
        }
        (_, IndexValue::PosInf) => IndexValue::PosInf,
        (inf, IndexValue::Finite(n)) => {
            return Err(JsonError::invalid(format!(
                "dimension {d}: cannot derive an upper bound from the infinite \
                 {p}inclusive_min {inf} and {p}shape {n}"
            )));
        }
    };
    Ok(Bound::new(value, s.implicit))
}

/// A transform body in canonical form: an input domain (bounds with implicit flags, labels)
/// and one output map per output dimension.
///
/// Every constructor validates it: equal lengths, rank ≤ 32, `inclusive_min <=
/// exclusive_max` per dimension, `input_dimension < rank`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransformJson {
    inclusive_min: Vec<Bound>,
    exclusive_max: Vec<Bound>,
    labels: Vec<String>,
    output: Vec<OutputMapJson>,
}

/// The members of a bare transform body.
pub(crate) const BODY_MEMBERS: [&str; 7] = [
    "input_rank",
    "input_inclusive_min",
    "input_exclusive_max",
    "input_inclusive_max",
    "input_shape",
    "input_labels",
    "output",
];

/// The members of a `transform` message: a body's plus `kind`.
const MESSAGE_MEMBERS: [&str; 8] = [
    "kind",
    "input_rank",
    "input_inclusive_min",
    "input_exclusive_max",
    "input_inclusive_max",
    "input_shape",
    "input_labels",
    "output",
];

impl TransformJson {
    /// A body from its parts; `output: None` means the identity. Fails (`rank_mismatch`,
    /// `bounds_out_of_order`) if the parts are inconsistent.
    pub fn new(
        inclusive_min: Vec<Bound>,
        exclusive_max: Vec<Bound>,
        labels: Vec<String>,
        output: Option<Vec<OutputMapJson>>,
    ) -> Result<Self> {
        let rank = inclusive_min.len();
        if exclusive_max.len() != rank || labels.len() != rank {
            return Err(JsonError::rank(format!(
                "input_inclusive_min has {rank} entries, input_exclusive_max {}, input_labels {}",
                exclusive_max.len(),
                labels.len()
            )));
        }
        check_rank(rank, "input_rank")?;
        for (d, (lo, hi)) in inclusive_min.iter().zip(&exclusive_max).enumerate() {
            if lo.value > hi.value {
                return Err(JsonError::new(
                    Reason::BoundsOutOfOrder,
                    format!("dimension {d}: input_inclusive_min {lo} > input_exclusive_max {hi}"),
                ));
            }
        }
        let output = output.unwrap_or_else(|| {
            (0..rank)
                .map(|d| OutputMapJson::SingleInputDimension {
                    input_dimension: d,
                    offset: 0,
                    stride: 1,
                })
                .collect()
        });
        check_rank(output.len(), "output rank")?;
        for (o, m) in output.iter().enumerate() {
            if let OutputMapJson::SingleInputDimension {
                input_dimension, ..
            } = m
                && *input_dimension >= rank
            {
                return Err(JsonError::rank(format!(
                    "output[{o}].input_dimension = {input_dimension} but input_rank is {rank}"
                )));
            }
        }
        Ok(TransformJson {
            inclusive_min,
            exclusive_max,
            labels,
            output,
        })
    }

    /// A body from parts known to be consistent (built from an engine transform).
    pub(crate) fn new_unchecked(
        inclusive_min: Vec<Bound>,
        exclusive_max: Vec<Bound>,
        labels: Vec<String>,
        output: Vec<OutputMapJson>,
    ) -> Self {
        TransformJson {
            inclusive_min,
            exclusive_max,
            labels,
            output,
        }
    }

    pub(crate) fn from_domain(domain: Domain, output: Option<Vec<OutputMapJson>>) -> Result<Self> {
        TransformJson::new(
            domain.inclusive_min,
            domain.exclusive_max,
            domain.labels,
            output,
        )
    }

    /// The input rank.
    pub fn rank(&self) -> usize {
        self.inclusive_min.len()
    }

    /// Inclusive lower bounds, with implicit flags.
    pub fn inclusive_min(&self) -> &[Bound] {
        &self.inclusive_min
    }

    /// Exclusive upper bounds, with implicit flags.
    pub fn exclusive_max(&self) -> &[Bound] {
        &self.exclusive_max
    }

    /// Labels (`""` = unlabeled), one per input dimension.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The output maps.
    pub fn output(&self) -> &[OutputMapJson] {
        &self.output
    }

    /// True if some bound is `"-inf"` or `"+inf"`.
    pub fn has_infinite_bounds(&self) -> bool {
        self.inclusive_min
            .iter()
            .chain(&self.exclusive_max)
            .any(|b| b.value.finite().is_none())
    }

    /// The canonical (maximal) body: `input_rank`, `input_inclusive_min`,
    /// `input_exclusive_max` (implicit flags as `[n]`), `input_labels` and every output map
    /// written out. No `kind` member.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("input_rank".into(), Value::from(self.rank()));
        let bounds = |b: &[Bound]| Value::Array(b.iter().map(|x| x.to_json()).collect());
        m.insert("input_inclusive_min".into(), bounds(&self.inclusive_min));
        m.insert("input_exclusive_max".into(), bounds(&self.exclusive_max));
        m.insert(
            "input_labels".into(),
            Value::Array(self.labels.iter().cloned().map(Value::String).collect()),
        );
        m.insert(
            "output".into(),
            Value::Array(self.output.iter().map(OutputMapJson::to_json).collect()),
        );
        Value::Object(m)
    }

    /// Reads a bare TensorStore `IndexTransform` body (no `kind` member), with TensorStore's
    /// defaults: no `input_inclusive_min` and no `input_shape` → implicit `-inf` lower
    /// bounds; `input_shape` without a minimum → explicit 0; no upper bound → implicit
    /// `+inf`; no `output` → identity. Accepts TensorStore's minimal `to_json` form and the
    /// canonical maximal form.
    pub fn from_tensorstore(value: &Value) -> Result<Self> {
        let obj = parse_object(value, "transform")?;
        if obj.contains_key("kind") {
            return Err(JsonError::new(
                Reason::UnknownField,
                "transform: a TensorStore body has no \"kind\" member (use \
                 TransformJson::parse for ndsel messages)",
            ));
        }
        parse_body(obj, MinDefault::TensorStore)
    }
}

/// Parses JSON text; a syntax error is `invalid_json` with serde's line and column.
pub(crate) fn parse_json_text(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| JsonError::invalid(format!("malformed JSON text: {e}")))
}

/// Reads the members of a transform body (`kind` already checked and allowed by the caller).
pub(crate) fn parse_body(
    obj: &Map<String, Value>,
    min_default: MinDefault,
) -> Result<TransformJson> {
    let (allowed, what): (&[&str], &str) = match min_default {
        MinDefault::Zero => (&MESSAGE_MEMBERS, "transform message"),
        MinDefault::TensorStore => (&BODY_MEMBERS, "transform body"),
    };
    check_members(obj, allowed, what)?;
    let spec = DomainSpec::parse(obj, "input_", "input_labels", Some("input_rank"))?;
    let output = match obj.get("output") {
        None => None,
        Some(v) => {
            let maps = parse_array(v, "output")?;
            check_rank(maps.len(), "output")?;
            Some(
                maps.iter()
                    .enumerate()
                    .map(|(o, m)| OutputMapJson::parse(m, &format!("output[{o}]")))
                    .collect::<Result<Vec<_>>>()?,
            )
        }
    };
    let domain = spec.resolve(min_default)?;
    TransformJson::from_domain(domain, output)
}
