//! ndsel messages (spec 1.0-draft.2): a tagged union on `kind` (`point`, `box`, `slice`,
//! `points`, `transform`), each desugared to a canonical [`TransformJson`].
//!
//! The dispatch on `kind` is by hand so that every failure gets its ndsel reason code:
//! not an object or no string `kind` → `invalid_json`, an unknown kind → `unknown_kind`,
//! an unknown member → `unknown_field`, and so on.

use serde_json::{Map, Value};

use super::error::{JsonError, Reason, Result};
use super::tensorstore::{DomainSpec, MinDefault, OutputMapJson, TransformJson, parse_body};
use super::value::{
    Bound, IndexValue, check_members, check_rank, describe, parse_array, parse_int_vec,
    parse_object, parse_string_vec,
};

/// A parsed ndsel message. [`normalize`](Message::normalize) desugars it.
#[derive(Clone, Debug)]
pub struct Message(Kind);

#[derive(Clone, Debug)]
enum Kind {
    Point {
        coords: Vec<i64>,
    },
    Box(DomainSpec),
    Slice {
        start: Vec<i64>,
        stop: Vec<i64>,
        step: Option<Vec<i64>>,
        labels: Option<Vec<String>>,
    },
    Points {
        coords: Vec<Vec<i64>>,
    },
    Transform(TransformJson),
}

impl Message {
    /// The five message kinds.
    pub const KINDS: [&'static str; 5] = ["point", "box", "slice", "points", "transform"];

    /// Reads a message: strict membership and value types. Shape errors of `slice` and
    /// `box` (step 0, inverted intervals, ...) are reported by [`normalize`](Self::normalize);
    /// a `transform` message is fully checked here.
    pub fn parse(value: &Value) -> Result<Self> {
        let obj = parse_object(value, "message")?;
        let kind = match obj.get("kind") {
            Some(Value::String(k)) => k.as_str(),
            Some(other) => {
                return Err(JsonError::invalid(format!(
                    "kind: expected a string, got {}",
                    describe(other)
                )));
            }
            None => {
                return Err(JsonError::invalid(
                    "message: missing the string member \"kind\" (one of point, box, slice, \
                     points, transform)",
                ));
            }
        };
        let kind = match kind {
            "point" => {
                check_members(obj, &["kind", "coords"], "point")?;
                let coords = parse_int_vec(required(obj, "coords", "point")?, "coords")?;
                check_rank(coords.len(), "point coords")?;
                Kind::Point { coords }
            }
            "box" => {
                check_members(
                    obj,
                    &[
                        "kind",
                        "inclusive_min",
                        "exclusive_max",
                        "inclusive_max",
                        "shape",
                        "labels",
                    ],
                    "box",
                )?;
                Kind::Box(DomainSpec::parse(obj, "", "labels", None)?)
            }
            "slice" => {
                check_members(obj, &["kind", "start", "stop", "step", "labels"], "slice")?;
                let start = parse_int_vec(required(obj, "start", "slice")?, "start")?;
                let stop = parse_int_vec(required(obj, "stop", "slice")?, "stop")?;
                let step = obj
                    .get("step")
                    .map(|v| parse_int_vec(v, "step"))
                    .transpose()?;
                let labels = obj
                    .get("labels")
                    .map(|v| parse_string_vec(v, "labels"))
                    .transpose()?;
                Kind::Slice {
                    start,
                    stop,
                    step,
                    labels,
                }
            }
            "points" => {
                check_members(obj, &["kind", "coords"], "points")?;
                let rows = parse_array(required(obj, "coords", "points")?, "coords")?;
                let coords = rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| parse_int_vec(r, &format!("coords[{i}]")))
                    .collect::<Result<Vec<_>>>()?;
                Kind::Points { coords }
            }
            "transform" => Kind::Transform(parse_body(obj, MinDefault::Zero)?),
            other => {
                return Err(JsonError::new(
                    Reason::UnknownKind,
                    format!("kind {other:?} is not one of {}", Message::KINDS.join(", ")),
                ));
            }
        };
        Ok(Message(kind))
    }

    /// [`parse`](Self::parse) from JSON text; malformed text is `invalid_json`.
    pub fn parse_str(text: &str) -> Result<Self> {
        Self::parse(&super::tensorstore::parse_json_text(text)?)
    }

    /// The message's `kind`.
    pub fn kind(&self) -> &'static str {
        match self.0 {
            Kind::Point { .. } => "point",
            Kind::Box(_) => "box",
            Kind::Slice { .. } => "slice",
            Kind::Points { .. } => "points",
            Kind::Transform(_) => "transform",
        }
    }

    /// Desugars to the canonical transform body.
    pub fn normalize(&self) -> Result<TransformJson> {
        match &self.0 {
            Kind::Point { coords } => TransformJson::new(
                vec![],
                vec![],
                vec![],
                Some(
                    coords
                        .iter()
                        .map(|&offset| OutputMapJson::Constant { offset })
                        .collect(),
                ),
            ),
            Kind::Box(spec) => {
                TransformJson::from_domain(spec.clone().resolve(MinDefault::Zero)?, None)
            }
            Kind::Slice {
                start,
                stop,
                step,
                labels,
            } => desugar_slice(start, stop, step.as_deref(), labels.as_deref()),
            Kind::Points { coords } => desugar_points(coords),
            Kind::Transform(t) => Ok(t.clone()),
        }
    }
}

fn required<'a>(obj: &'a Map<String, Value>, key: &str, kind: &str) -> Result<&'a Value> {
    obj.get(key)
        .ok_or_else(|| JsonError::invalid(format!("{kind}: missing the required member {key:?}")))
}

/// `slice`: per dimension `L = stop - start` (step > 0) or `start - stop` (step < 0),
/// `m = ceil(L / |step|)`, `o = trunc(start / step)`, domain `[o, o + m)`, map
/// `offset = start - step * o`, `stride = step`.
fn desugar_slice(
    start: &[i64],
    stop: &[i64],
    step: Option<&[i64]>,
    labels: Option<&[String]>,
) -> Result<TransformJson> {
    let n = start.len();
    let mut lengths = vec![("stop", stop.len())];
    if let Some(s) = step {
        lengths.push(("step", s.len()));
    }
    if let Some(l) = labels {
        lengths.push(("labels", l.len()));
    }
    for (name, len) in lengths {
        if len != n {
            return Err(JsonError::rank(format!(
                "slice: start has {n} entries but {name} has {len}"
            )));
        }
    }
    check_rank(n, "slice")?;
    let mut lo = Vec::with_capacity(n);
    let mut hi = Vec::with_capacity(n);
    let mut output = Vec::with_capacity(n);
    for d in 0..n {
        let (a, b) = (start[d], stop[d]);
        let s = step.map_or(1, |st| st[d]);
        if s == 0 {
            return Err(JsonError::new(
                Reason::StepZero,
                format!("slice: step[{d}] is 0"),
            ));
        }
        let (a, b, s) = (i128::from(a), i128::from(b), i128::from(s));
        let len = if s > 0 { b - a } else { a - b };
        if len < 0 {
            let dir = if s > 0 { "upwards" } else { "downwards" };
            return Err(JsonError::new(
                Reason::BoundsOutOfOrder,
                format!(
                    "slice dimension {d}: stop {b} lies behind start {a} for step {s} \
                     (traversal runs {dir})"
                ),
            ));
        }
        let abs = s.abs();
        let m = (len + abs - 1) / abs;
        let o = a / s; // i128 division truncates toward zero
        let offset = a - s * o;
        let fit = |v: i128, what: &str| {
            i64::try_from(v).map_err(|_| {
                JsonError::invalid(format!(
                    "slice dimension {d}: the {what} {v} does not fit in i64"
                ))
            })
        };
        lo.push(Bound::explicit(fit(o, "origin trunc(start / step)")?));
        hi.push(Bound::explicit(fit(o + m, "exclusive bound")?));
        output.push(OutputMapJson::SingleInputDimension {
            input_dimension: d,
            offset: fit(offset, "offset")?,
            stride: fit(s, "stride")?,
        });
    }
    let labels = labels.map_or_else(|| vec![String::new(); n], <[String]>::to_vec);
    TransformJson::new(lo, hi, labels, Some(output))
}

/// `points`: rank 1 over `[0, m)`, one index-array map per coordinate column.
fn desugar_points(coords: &[Vec<i64>]) -> Result<TransformJson> {
    let n = coords.first().map_or(0, Vec::len);
    if let Some((i, row)) = coords.iter().enumerate().find(|(_, r)| r.len() != n) {
        return Err(JsonError::rank(format!(
            "points: coords[0] has {n} coordinates but coords[{i}] has {}",
            row.len()
        )));
    }
    check_rank(n, "points coords")?;
    let m = i64::try_from(coords.len())
        .map_err(|_| JsonError::invalid("points: too many points for i64"))?;
    let output = (0..n)
        .map(|k| OutputMapJson::IndexArray {
            index_array: Value::Array(coords.iter().map(|r| Value::from(r[k])).collect()),
            offset: 0,
            stride: 1,
            index_array_bounds: [IndexValue::NegInf, IndexValue::PosInf],
        })
        .collect();
    TransformJson::new(
        vec![Bound::explicit(0)],
        vec![Bound::explicit(m)],
        vec![String::new()],
        Some(output),
    )
}
