//! The typed error of the JSON layer: a stable [`Reason`] code plus a detail string.

use thiserror::Error;

use crate::index::IndexError;

/// Why a JSON message or transform body was rejected: the ndsel reason codes.
///
/// [`code`](Reason::code) gives the stable wire string (`"invalid_json"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Not valid JSON, not an object, no string `kind`, or a value of the wrong JSON type
    /// (a float or boolean where an integer is required, an integer outside `i64`, a missing
    /// required member, an infinite bound where the engine needs a finite one, ...).
    InvalidJson,
    /// `kind` is a string but not one of `point`, `box`, `slice`, `points`, `transform`.
    UnknownKind,
    /// A message or output map carries a member not defined for it.
    UnknownField,
    /// More than one of `exclusive_max` / `inclusive_max` / `shape` (or their `input_` forms).
    MultipleUpperBounds,
    /// An inverted interval: `inclusive_min > exclusive_max`, a negative shape, or a slice
    /// whose `stop` lies behind `start` in the direction of travel.
    BoundsOutOfOrder,
    /// An output map carries both `input_dimension` and `index_array`.
    OutputMapConflict,
    /// Lengths or ranks that must agree do not (also: a rank above 32, and any engine
    /// invariant failure when lowering).
    RankMismatch,
    /// A `slice` step of 0.
    StepZero,
    /// Retired in ndsel 1.0-draft.2: recognised by [`Reason::from_code`], never produced.
    NegativeStepUnsupported,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 9] = [
        Reason::InvalidJson,
        Reason::UnknownKind,
        Reason::UnknownField,
        Reason::MultipleUpperBounds,
        Reason::BoundsOutOfOrder,
        Reason::OutputMapConflict,
        Reason::RankMismatch,
        Reason::StepZero,
        Reason::NegativeStepUnsupported,
    ];

    /// The stable wire code, e.g. `"bounds_out_of_order"`.
    pub fn code(self) -> &'static str {
        match self {
            Reason::InvalidJson => "invalid_json",
            Reason::UnknownKind => "unknown_kind",
            Reason::UnknownField => "unknown_field",
            Reason::MultipleUpperBounds => "multiple_upper_bounds",
            Reason::BoundsOutOfOrder => "bounds_out_of_order",
            Reason::OutputMapConflict => "output_map_conflict",
            Reason::RankMismatch => "rank_mismatch",
            Reason::StepZero => "step_zero",
            Reason::NegativeStepUnsupported => "negative_step_unsupported",
        }
    }

    /// The reason with this wire code (including the retired `negative_step_unsupported`).
    pub fn from_code(code: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.code() == code)
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// A rejected message: the [`Reason`] and a detail naming the offending member and value.
///
/// Displays as `"code: detail"`, e.g.
/// `invalid_json: coords[0]: expected an integer, got a boolean (true)`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}: {detail}", reason.code())]
pub struct JsonError {
    /// The stable reason.
    pub reason: Reason,
    /// What was wrong and where.
    pub detail: String,
}

impl JsonError {
    /// An error from a reason and a detail.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Self {
        JsonError {
            reason,
            detail: detail.into(),
        }
    }

    /// The wire code of the reason.
    pub fn code(&self) -> &'static str {
        self.reason.code()
    }

    pub(crate) fn invalid(detail: impl Into<String>) -> Self {
        JsonError::new(Reason::InvalidJson, detail)
    }

    pub(crate) fn rank(detail: impl Into<String>) -> Self {
        JsonError::new(Reason::RankMismatch, detail)
    }
}

/// Engine errors met while lowering a body: invariant failures (ranks, shapes, arguments)
/// become `rank_mismatch`; overflow and type errors `invalid_json`; bounds errors
/// `bounds_out_of_order`. The engine's message is kept as the detail.
impl From<IndexError> for JsonError {
    fn from(e: IndexError) -> Self {
        let reason = match &e {
            IndexError::Overflow(_) | IndexError::InvalidType(_) => Reason::InvalidJson,
            IndexError::OutOfBounds(_) | IndexError::InvalidSelection(_) => {
                Reason::BoundsOutOfOrder
            }
            _ => Reason::RankMismatch,
        };
        JsonError::new(reason, e.to_string())
    }
}

/// Shorthand result type of the JSON layer.
pub type Result<T, E = JsonError> = std::result::Result<T, E>;
