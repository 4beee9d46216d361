//! The model test's parts (see `tests/model_state_machine.rs`): the NumPy reference, the
//! data types and the strategies.
#![allow(dead_code)]

pub mod dtype;
pub mod numpy;
pub mod strategy;
