//! Index transforms: the pure model of a selection (no I/O).
//!
//! An [`IndexTransform`] maps every point of an input [`IndexDomain`] (the request / result
//! space) to storage coordinates through one [`OutputIndexMap`] per storage dimension:
//! a constant, an affine function of one input dimension, or an index array. Selections
//! ([`Selection`], built with [`sel!`](crate::sel) or [`Selection::parse`]) are applied in
//! the literal (TensorStore) or positional (NumPy) [`Dialect`], in basic, outer (`oindex`)
//! or vectorized (`vindex`) [`SelectionMode`]; every step composes transforms, so chains of
//! selections stay one transform.

mod arith;
mod bulk;
mod compose;
mod domain;
mod error;
mod intersect;
pub mod json;
mod literal;
mod map;
mod parse;
mod positional;
mod selection;
pub(crate) mod shape;
mod transform;

pub use domain::{IndexDomain, MAX_RANK, NarrowItem};
pub use error::{Bounds, Coordinates, IndexError, OutOfBounds, RankMismatch, Result};
pub use intersect::Intersection;
pub use map::{IndexArray, OutputIndexMap};
pub use selection::{
    __with_step, Dialect, Ellipsis, IndexInt, NewAxis, Selection, SelectionItem, SelectionMode,
    Slice, StepBounds, StepRange, index_array_from,
};
pub use transform::{IndexArrayStructure, IndexTransform};
