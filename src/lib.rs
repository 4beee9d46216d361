//! # zarrflow
//!
//! A Zarr v3 engine for sharded and unsharded arrays on local disks and object stores.
//!
//! A selection is an [`index::IndexTransform`]; a planner turns it into chunk operations;
//! a storage layer executes them. See `docs/architecture.md` for the flow and module map.
#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod array;
pub mod codec;
pub mod grid;
pub mod hierarchy;
pub mod index;
pub mod metadata;
pub mod plan;
pub mod store;

/// The README's code blocks, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
