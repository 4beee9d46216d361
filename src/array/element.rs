//! Rust element types that match Zarr data types.

use half::f16;
use num_complex::Complex;

use crate::metadata::{ArraySpec, DataType};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that holds the elements of an array of a matching Zarr data type.
///
/// Implemented for `bool`, the integer types, `f16` ([`half::f16`], re-exported as
/// `zarrflow::half`), `f32`, `f64`, `Complex<f32>` (`complex64`) and `Complex<f64>`
/// (`complex128`, [`num_complex::Complex`], re-exported as `zarrflow::num_complex`). Raw types
/// (`r*`) are read with the untyped byte API. The time types (`datetime64[unit]`,
/// `timedelta64[unit]`) are read and written as `i64` counts of their unit, as zarrs does
/// (`i64::MIN` is NaT); [`format_datetime`](crate::metadata::format_datetime) and
/// [`parse_datetime`](crate::metadata::parse_datetime) convert them to and from ISO 8601.
///
/// ```
/// use zarrflow::{DataType, Element};
/// assert_eq!(<f32 as Element>::DTYPE, DataType::Float32);
/// assert_eq!(<u16 as Element>::DATA_TYPE, "uint16");
/// ```
pub trait Element:
    Copy + Send + Sync + Default + bytemuck::Zeroable + 'static + sealed::Sealed
{
    /// The data type this type reads and writes.
    const DTYPE: DataType;
    /// The Zarr data type name this type reads and writes (`DTYPE`'s name).
    const DATA_TYPE: &'static str = Self::DTYPE.name();
    /// The Rust type name, for error messages.
    const RUST_NAME: &'static str;

    /// Whether this type holds the elements of `data_type`: `DTYPE`, and for `i64` the time
    /// types too.
    fn holds(data_type: DataType) -> bool {
        data_type == Self::DTYPE
    }

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
    ($t:ty, $dtype:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DataType = DataType::$dtype;
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

pod_element!(i8, Int8);
pod_element!(i16, Int16);
pod_element!(i32, Int32);
pod_element!(u8, UInt8);
pod_element!(u16, UInt16);
pod_element!(u32, UInt32);
pod_element!(u64, UInt64);
pod_element!(f16, Float16);
pod_element!(f32, Float32);
pod_element!(f64, Float64);
pod_element!(Complex<f32>, Complex64);
pod_element!(Complex<f64>, Complex128);

impl sealed::Sealed for i64 {}
impl Element for i64 {
    const DTYPE: DataType = DataType::Int64;
    const RUST_NAME: &'static str = "i64";
    fn holds(data_type: DataType) -> bool {
        matches!(
            data_type,
            DataType::Int64 | DataType::DateTime64(_) | DataType::TimeDelta64(_)
        )
    }
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
        let n = bytes.len() / 8;
        let mut out = vec![0i64; n];
        bytemuck::cast_slice_mut::<i64, u8>(&mut out).copy_from_slice(bytes.get(..n * 8)?);
        Some(out)
    }
}

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DataType = DataType::Bool;
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

impl ArraySpec {
    /// A spec for `shape` and the data type of the Rust element type `T`:
    /// `ArraySpec::of::<f32>([100, 200])`.
    pub fn of<T: Element>(shape: impl Into<Vec<u64>>) -> Self {
        ArraySpec::with_data_type(shape, T::DTYPE)
    }

    /// Set the fill value as a Rust value of the array's element type:
    /// `.fill(f32::NAN)`, `.fill(u64::MAX)` (exact). Fails when `T` is not the spec's type.
    pub fn fill<T: Element>(self, value: T) -> Result<Self, crate::metadata::MetadataError> {
        if !self.dtype().is_some_and(T::holds) {
            return Err(crate::metadata::MetadataError::InvalidSpec {
                field: "fill_value".into(),
                reason: format!(
                    "a {} fill value for data type {}",
                    T::RUST_NAME,
                    self.data_type.name()
                ),
            });
        }
        self.fill_value_bytes(&T::to_ne_bytes_vec(&[value]))
    }
}
