//! Rust element types that match Zarr data types.

use half::f16;
use num_complex::Complex;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that holds the elements of an array of a matching Zarr data type.
///
/// Implemented for `bool`, the integer types, `f16`, `f32`, `f64`, `Complex<f32>`
/// (`complex64`) and `Complex<f64>` (`complex128`). Raw types (`r*`) are read with the
/// untyped byte API.
pub trait Element: Copy + Send + Sync + Default + 'static + sealed::Sealed {
    /// The Zarr data type name this type reads and writes.
    const DATA_TYPE: &'static str;
    /// The Rust type name, for error messages.
    const RUST_NAME: &'static str;

    /// The buffer as native-endian bytes, when every byte pattern is a valid value (`None`
    /// for `bool`, which is converted instead).
    fn as_bytes_mut(values: &mut [Self]) -> Option<&mut [u8]>;

    /// The values viewed as native-endian bytes, without a copy (`None` for `bool`).
    fn as_bytes(values: &[Self]) -> Option<&[u8]>;

    /// The values as native-endian bytes.
    fn to_ne_bytes_vec(values: &[Self]) -> Vec<u8>;

    /// Converts native-endian bytes to values; `None` if a byte pattern is invalid.
    fn from_ne_bytes_vec(bytes: &[u8]) -> Option<Vec<Self>>;
}

macro_rules! pod_element {
    ($t:ty, $name:literal) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DATA_TYPE: &'static str = $name;
            const RUST_NAME: &'static str = stringify!($t);
            fn as_bytes_mut(values: &mut [Self]) -> Option<&mut [u8]> {
                Some(bytemuck::cast_slice_mut(values))
            }
            fn as_bytes(values: &[Self]) -> Option<&[u8]> {
                Some(bytemuck::cast_slice(values))
            }
            fn to_ne_bytes_vec(values: &[Self]) -> Vec<u8> {
                bytemuck::cast_slice(values).to_vec()
            }
            fn from_ne_bytes_vec(bytes: &[u8]) -> Option<Vec<Self>> {
                let n = bytes.len() / std::mem::size_of::<$t>();
                let mut out = vec![<$t>::default(); n];
                bytemuck::cast_slice_mut::<$t, u8>(&mut out)
                    .copy_from_slice(bytes.get(..n * std::mem::size_of::<$t>())?);
                Some(out)
            }
        }
    };
}

pod_element!(i8, "int8");
pod_element!(i16, "int16");
pod_element!(i32, "int32");
pod_element!(i64, "int64");
pod_element!(u8, "uint8");
pod_element!(u16, "uint16");
pod_element!(u32, "uint32");
pod_element!(u64, "uint64");
pod_element!(f16, "float16");
pod_element!(f32, "float32");
pod_element!(f64, "float64");
pod_element!(Complex<f32>, "complex64");
pod_element!(Complex<f64>, "complex128");

impl sealed::Sealed for bool {}
impl Element for bool {
    const DATA_TYPE: &'static str = "bool";
    const RUST_NAME: &'static str = "bool";
    fn as_bytes_mut(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
    fn as_bytes(_: &[Self]) -> Option<&[u8]> {
        None
    }
    fn to_ne_bytes_vec(values: &[Self]) -> Vec<u8> {
        values.iter().map(|&b| u8::from(b)).collect()
    }
    fn from_ne_bytes_vec(bytes: &[u8]) -> Option<Vec<Self>> {
        bytes
            .iter()
            .map(|&b| match b {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            })
            .collect()
    }
}
