//! # zarrflow
//!
//! A Zarr v3 engine for sharded and unsharded arrays on local disks and object stores.
//!
//! A selection is an [`index::IndexTransform`]; a planner turns it into chunk operations;
//! a storage layer executes them. See `docs/architecture.md` for the flow and module map.
#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod grid;
pub mod index;
pub mod plan;
