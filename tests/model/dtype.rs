//! The data types the model test uses, their values as `f64` (exact for each of them) and
//! the dispatch from a [`Dtype`] to its Rust element type.

use proptest::prelude::*;
use serde_json::{Value, json};
use zarrflow::Element;

/// A data type of the model test. Values of every one are exact in `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `uint8`
    U8,
    /// `int32`
    I32,
    /// `float32`
    F32,
    /// `float64`
    F64,
}

/// Every model data type.
pub const DTYPES: [Dtype; 4] = [Dtype::U8, Dtype::I32, Dtype::F32, Dtype::F64];

impl Dtype {
    /// The Zarr name.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::I32 => "int32",
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
        }
    }

    /// Values of this type (edge values included: extremes, NaN, infinities, -0.0).
    pub fn values(self) -> BoxedStrategy<f64> {
        let special = |v: &'static [f64]| prop::sample::select(v);
        match self {
            Dtype::U8 => {
                prop_oneof![4 => (0u8..=255).prop_map(f64::from), 1 => special(&[0.0, 255.0])]
                    .boxed()
            }
            Dtype::I32 => prop_oneof![
                4 => (-1000i32..1000).prop_map(f64::from),
                1 => special(&[i32::MIN as f64, i32::MAX as f64, 0.0]),
            ]
            .boxed(),
            Dtype::F32 => prop_oneof![
                4 => (-64i32..64).prop_map(|x| f64::from(x as f32 / 4.0)),
                1 => special(&[f64::NAN, -0.0, f64::INFINITY, f64::NEG_INFINITY, f32::MAX as f64]),
            ]
            .boxed(),
            Dtype::F64 => prop_oneof![
                4 => (-64i32..64).prop_map(|x| f64::from(x) / 4.0),
                1 => special(&[f64::NAN, -0.0, f64::INFINITY, f64::NEG_INFINITY, 0.1, 1e300]),
            ]
            .boxed(),
        }
    }

    /// A fill value as `zarr.json` writes it.
    pub fn fill_json(self, v: f64) -> Value {
        match self {
            Dtype::U8 | Dtype::I32 => json!(v as i64),
            _ if v.is_nan() => json!("NaN"),
            _ if v == f64::INFINITY => json!("Infinity"),
            _ if v == f64::NEG_INFINITY => json!("-Infinity"),
            _ => json!(v),
        }
    }
}

/// A Rust element type converted to and from the model's `f64`.
pub trait Cell: Element {
    /// The value (exact for values of the type).
    fn from_f64(v: f64) -> Self;
    /// Back to `f64` (exact).
    fn to_f64(self) -> f64;
}

macro_rules! cell {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
cell!(u8, i32, f32, f64);

/// Runs `$body` with `$T` the Rust element type of `$dtype`.
#[macro_export]
macro_rules! with_type {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::model::dtype::Dtype::U8 => {
                type $T = u8;
                $body
            }
            $crate::model::dtype::Dtype::I32 => {
                type $T = i32;
                $body
            }
            $crate::model::dtype::Dtype::F32 => {
                type $T = f32;
                $body
            }
            $crate::model::dtype::Dtype::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}
