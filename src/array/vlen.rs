//! Variable-length elements (`string`, `bytes`): [`VlenElement`] and the view's
//! [`read_vlen`](ArrayView::read_vlen) / [`write_vlen`](ArrayView::write_vlen).
//!
//! [`Element`](super::Element) is for fixed-size, plain-old-data types read straight into the
//! caller's memory (`Copy + Zeroable`); a `String` is neither, so variable-length elements
//! have their own trait and methods — as zarrs has `retrieve_array_subset::<Vec<String>>`
//! beside its fixed-size elements and zarr-python returns a separate NumPy string dtype.
//! Inside, they run the same planner, executors and shard assembly as fixed-size types, on
//! 8-byte handles (see [`crate::codec::vlen`]).

use std::sync::Arc;

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use crate::codec::vlen::VlenPool;
use crate::metadata::DataType;

use super::error::{ArrayError, Result};
use super::{ArrayView, read, write};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type holding the elements of a variable-length array: `String` for `string`,
/// `Vec<u8>` for `bytes`.
///
/// ```
/// use zarrflow::{DataType, VlenElement};
/// assert_eq!(<String as VlenElement>::DTYPE, DataType::String);
/// assert_eq!(<Vec<u8> as VlenElement>::DTYPE, DataType::Bytes);
/// ```
pub trait VlenElement: Clone + Send + Sync + 'static + sealed::Sealed {
    /// The data type this type reads and writes.
    const DTYPE: DataType;
    /// The Rust type name, for error messages.
    const RUST_NAME: &'static str;
    /// The element's stored bytes (UTF-8 for a `String`).
    fn element_bytes(&self) -> &[u8];
    /// The element of stored bytes; `None` when they are not valid for the type.
    fn from_element_bytes(bytes: &[u8]) -> Option<Self>;
}

impl sealed::Sealed for String {}
impl VlenElement for String {
    const DTYPE: DataType = DataType::String;
    const RUST_NAME: &'static str = "String";
    fn element_bytes(&self) -> &[u8] {
        self.as_bytes()
    }
    fn from_element_bytes(bytes: &[u8]) -> Option<Self> {
        std::str::from_utf8(bytes).ok().map(str::to_string)
    }
}

impl sealed::Sealed for Vec<u8> {}
impl VlenElement for Vec<u8> {
    const DTYPE: DataType = DataType::Bytes;
    const RUST_NAME: &'static str = "Vec<u8>";
    fn element_bytes(&self) -> &[u8] {
        self
    }
    fn from_element_bytes(bytes: &[u8]) -> Option<Self> {
        Some(bytes.to_vec())
    }
}

/// Empties the pool when an operation ends, however it ends.
pub(super) struct Emptied<'a>(pub(super) &'a VlenPool);

impl Drop for Emptied<'_> {
    fn drop(&mut self) {
        self.0.clear();
    }
}

impl ArrayView {
    /// The handle pool of this view's `string` or `bytes` array, read as `T`.
    pub(super) fn vlen_pool<T: VlenElement>(&self) -> Result<Arc<VlenPool>> {
        let dtype = self.array().data_type();
        if dtype != T::DTYPE {
            return Err(ArrayError::DataTypeMismatch {
                array: dtype.to_string(),
                requested: T::RUST_NAME,
            });
        }
        self.array()
            .metadata()
            .vlen()
            .map(|m| m.pool().clone())
            .ok_or_else(|| ArrayError::Internal(format!("{dtype} array without handles")))
    }

    /// Reads the view of a `string` (`T = String`) or `bytes` (`T = Vec<u8>`) array into a
    /// new array with as many dimensions as the view. Absent chunks read as the fill value.
    ///
    /// Operations on one opened array's variable-length elements run one at a time (each
    /// holds the array's element pool while it runs); fixed-size arrays are unaffected.
    /// Fails with [`ArrayError::DataTypeMismatch`] when `T` does not match the data type.
    ///
    /// ```
    /// # use zarrflow::{Array, ArraySpec, DataType, sel};
    /// # zarrflow::block_on(async {
    /// let spec = ArraySpec::with_data_type([3], DataType::String).shard_shape([2]);
    /// let a = Array::create_at("memory://", &spec).await.unwrap();
    /// let words = ndarray::arr1(&["a".to_string(), "h\u{e9}".to_string()]);
    /// a.view().get(&sel![1..3]).unwrap().write_vlen(&words).await.unwrap();
    /// let got = a.view().read_vlen::<String>().await.unwrap();
    /// assert_eq!(got.as_slice().unwrap(), ["", "a", "h\u{e9}"]);
    /// # }).unwrap();
    /// ```
    pub async fn read_vlen<T: VlenElement>(&self) -> Result<ArrayD<T>> {
        if let Some(t) = super::fixed_text::fixed_text_of::<T>(self.array().data_type()) {
            return self.read_fixed_text(t).await;
        }
        let pool = self.vlen_pool::<T>()?;
        let shape = self.shape_usize()?;
        let n = self.len()?;
        let _session = pool.session().lock().await;
        let _emptied = Emptied(&pool);
        pool.clear();
        let mut handles = bytemuck::allocation::try_zeroed_vec::<u64>(n).map_err(|()| {
            ArrayError::TooLarge(format!("cannot allocate {n} elements for the result"))
        })?;
        read::read_into(
            &self.array().shared,
            self.transform(),
            bytemuck::cast_slice_mut(&mut handles),
        )
        .await?;
        let values = pool.take();
        let invalid = || ArrayError::InvalidData {
            key: self.array().url(),
            reason: format!("an element that is not a valid {}", T::RUST_NAME),
        };
        let fill = T::from_element_bytes(pool.fill()).ok_or_else(invalid)?;
        let out = handles
            .iter()
            .map(|&h| match h {
                0 => Ok(fill.clone()),
                h => usize::try_from(h - 1)
                    .ok()
                    .and_then(|i| values.get(i))
                    .and_then(|v| T::from_element_bytes(v))
                    .ok_or_else(invalid),
            })
            .collect::<Result<Vec<T>>>()?;
        ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| ArrayError::Internal(e.to_string()))
    }

    /// Writes values of a `string` (`T = String`) or `bytes` (`T = Vec<u8>`) array, broadcast
    /// NumPy-style to the view's shape, exactly as [`write`](Self::write) does for
    /// fixed-size types (a partial write of a shard keeps its untouched inner chunks
    /// verbatim; chunks left equal to the fill value are not stored).
    pub async fn write_vlen<T, S, D>(&self, values: &ArrayBase<S, D>) -> Result<()>
    where
        T: VlenElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        if let Some(t) = super::fixed_text::fixed_text_of::<T>(self.array().data_type()) {
            return self.write_fixed_text(t, values).await;
        }
        let pool = self.vlen_pool::<T>()?;
        let shape: Vec<u64> = values.shape().iter().map(|&n| n as u64).collect();
        let _session = pool.session().lock().await;
        let _emptied = Emptied(&pool);
        pool.clear();
        let handles = pool.intern(values.iter().map(VlenElement::element_bytes));
        let bytes: &[u8] = bytemuck::cast_slice(&handles);
        let staged = self.stage_unchecked(bytes, &shape)?;
        write::write(&self.array().shared, std::slice::from_ref(&staged)).await
    }

    /// Writes one value of a `string` or `bytes` array into every cell of the view.
    pub async fn write_vlen_scalar<T: VlenElement>(&self, value: T) -> Result<()> {
        self.write_vlen(&ndarray::arr0(value)).await
    }
}
