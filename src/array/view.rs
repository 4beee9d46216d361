//! [`ArrayView`]: a lazy selection of an array (an index transform over its storage space).

use ndarray::{ArrayBase, ArrayD, Data, DataMut, Dimension, IxDyn};

use crate::index::{Dialect, IndexDomain, IndexTransform, Selection, SelectionMode};

use super::error::{ArrayError, Result, ShapeMismatch};
use super::result_buffer::zeroed;
use super::{AnyElement, Array, Element, read};

/// A lazy view of an array: an [`IndexTransform`] from the view's domain to the array's
/// storage coordinates. Indexing a view composes transforms and does no I/O; reading it
/// plans and fetches.
///
/// NumPy-style keys ([`get`](Self::get), [`oindex`](Self::oindex), [`vindex`](Self::vindex))
/// are positional: negative values count from the end and slices clamp. Views keep literal
/// domains (a view `a[10:20]` has domain `[10, 20)`), and a transform key
/// ([`transformed`](Self::transformed)) is literal, TensorStore style.
#[derive(Clone, Debug)]
#[must_use = "a view does no I/O until it is read or written"]
pub struct ArrayView {
    array: Array,
    transform: IndexTransform,
}

impl ArrayView {
    pub(crate) fn whole(array: Array) -> ArrayView {
        let transform = array.shared.identity.clone();
        ArrayView { array, transform }
    }

    /// The array viewed.
    pub fn array(&self) -> &Array {
        &self.array
    }

    /// The transform from the view's domain to the array's storage coordinates.
    pub fn transform(&self) -> &IndexTransform {
        &self.transform
    }

    /// The view's domain.
    pub fn domain(&self) -> &IndexDomain {
        self.transform.domain()
    }

    /// The view's shape (the shape of what [`read`](Self::read) returns).
    pub fn shape(&self) -> Vec<u64> {
        self.transform.domain().shape()
    }

    /// Applies a selection in a mode and dialect.
    pub fn select(
        &self,
        selection: &Selection,
        mode: SelectionMode,
        dialect: Dialect,
    ) -> Result<ArrayView> {
        Ok(ArrayView {
            array: self.array.clone(),
            transform: self.transform.select(selection, mode, dialect)?,
        })
    }

    /// NumPy basic indexing: integers, slices, `...`, new axes (positional).
    pub fn get(&self, selection: &Selection) -> Result<ArrayView> {
        self.select(selection, SelectionMode::Basic, Dialect::Positional)
    }

    /// Outer (orthogonal) indexing, positional: each 1-D index array or mask selects along
    /// its own dimension.
    pub fn oindex(&self, selection: &Selection) -> Result<ArrayView> {
        self.select(selection, SelectionMode::Outer, Dialect::Positional)
    }

    /// Vectorized indexing, positional: NumPy advanced indexing (arrays broadcast together
    /// and select points).
    pub fn vindex(&self, selection: &Selection) -> Result<ArrayView> {
        self.select(selection, SelectionMode::Vectorized, Dialect::Positional)
    }

    /// Composes a literal transform whose output space is this view's domain (TensorStore's
    /// `view[transform]`): `key.compose(view)`.
    pub fn transformed(&self, key: &IndexTransform) -> Result<ArrayView> {
        Ok(ArrayView {
            array: self.array.clone(),
            transform: key.compose(&self.transform)?,
        })
    }

    /// Like [`transformed`](Self::transformed) with a TensorStore or ndsel JSON transform.
    pub fn transformed_json(&self, json: &str) -> Result<ArrayView> {
        self.transformed(&IndexTransform::from_json_str(json)?)
    }

    /// Restricts the view to a box of its own (literal) coordinates, which must lie inside
    /// the domain (an empty box is allowed inside).
    pub fn restricted(&self, bounds: &IndexDomain) -> Result<ArrayView> {
        if !self.domain().contains_domain(bounds) {
            return Err(crate::index::IndexError::out_of_bounds(
                "box",
                None,
                crate::index::Coordinates::Box(bounds.clone()),
                crate::index::Bounds::Domain(self.domain().clone()),
            )
            .into());
        }
        let key = IndexTransform::identity(bounds.clone());
        self.transformed(&key)
    }

    fn check_type<T: Element>(&self) -> Result<()> {
        let dtype = self.array.data_type();
        if !T::holds(dtype) {
            return Err(ArrayError::DataTypeMismatch {
                array: dtype.to_string(),
                requested: T::RUST_NAME,
            });
        }
        Ok(())
    }

    pub(crate) fn shape_usize(&self) -> Result<Vec<usize>> {
        self.shape()
            .iter()
            .map(|&n| {
                usize::try_from(n)
                    .map_err(|_| ArrayError::TooLarge(format!("extent {n} does not fit in memory")))
            })
            .collect()
    }

    /// Number of elements of the view, checked to fit in memory with the element size.
    pub(crate) fn len(&self) -> Result<usize> {
        let elem = self.array.shared.elem as u64;
        self.domain()
            .num_elements()
            .filter(|n| n.checked_mul(elem).is_some_and(|b| b <= isize::MAX as u64))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                ArrayError::TooLarge(format!(
                    "reading the view {} ({elem}-byte elements) does not fit in memory",
                    self.domain()
                ))
            })
    }

    /// Reads the view into a new array of the array's element type, with as many
    /// dimensions as the view.
    ///
    /// `T` is any [`AnyElement`]: a fixed-size [`Element`] (`f32`, `u8`, `bool`, ...) or, for
    /// `string` and `bytes` arrays, `String` and `Vec<u8>`. Fails with
    /// [`ArrayError::DataTypeMismatch`] when `T` does not match the data type.
    pub async fn read<T: AnyElement>(&self) -> Result<ArrayD<T>> {
        T::read_view(self).await
    }

    /// [`read`](Self::read) for a fixed-size element type.
    pub(crate) async fn read_fixed<T: Element>(&self) -> Result<ArrayD<T>> {
        self.check_type::<T>()?;
        let shape = self.shape_usize()?;
        let mut values = zeroed::<T>(self.len()?)?;
        match T::as_bytes_mut(&mut values) {
            Some(bytes) => read::read_into(&self.array.shared, &self.transform, bytes).await?,
            None => {
                let bytes = self.read_bytes().await?;
                values = T::from_ne_bytes_vec(&bytes).ok_or_else(|| ArrayError::InvalidData {
                    key: self.array.store().url().to_string(),
                    reason: format!("a byte that is not a valid {}", T::RUST_NAME),
                })?;
            }
        }
        ArrayD::from_shape_vec(IxDyn(&shape), values)
            .map_err(|e| ArrayError::Internal(e.to_string()))
    }

    /// Reads the view into a fixed-dimension array (`Array2<f32>`, ...): the view must have
    /// `D`'s number of dimensions (checked before any request).
    ///
    /// ```
    /// # use zarrflow::{Array, ArraySpec, sel};
    /// # zarrflow::block_on(async {
    /// # let array = Array::create_at("memory://", &ArraySpec::of::<f32>([4, 6])).await.unwrap();
    /// let rows: ndarray::Array2<f32> = array.view().get(&sel![1..3, ..]).unwrap().read_as().await.unwrap();
    /// assert_eq!(rows.dim(), (2, 6));
    /// # }).unwrap();
    /// ```
    pub async fn read_as<T: AnyElement, D: Dimension>(&self) -> Result<ndarray::Array<T, D>> {
        self.check_rank::<D>()?;
        let values = self.read::<T>().await?;
        values
            .into_dimensionality::<D>()
            .map_err(|e| ArrayError::Internal(e.to_string()))
    }

    /// Reads the view into a caller buffer of exactly the view's shape (any ndarray array or
    /// view of the element type with the view's number of dimensions). A contiguous buffer
    /// in C order is filled in place; any other is filled through a temporary.
    pub async fn read_into<T, S, D>(&self, out: &mut ArrayBase<S, D>) -> Result<()>
    where
        T: Element,
        S: DataMut<Elem = T>,
        D: Dimension,
    {
        self.check_type::<T>()?;
        let shape = self.shape_usize()?;
        if out.shape() != shape.as_slice() {
            return Err(ArrayError::ShapeMismatch(ShapeMismatch::Output {
                output: out.shape().iter().map(|&n| n as u64).collect(),
                view: self.shape(),
            }));
        }
        if let Some(slice) = out.as_slice_mut()
            && let Some(bytes) = T::as_bytes_mut(slice)
        {
            return read::read_into(&self.array.shared, &self.transform, bytes).await;
        }
        let values = self.read_fixed::<T>().await?;
        out.iter_mut().zip(values.iter()).for_each(|(o, &v)| *o = v);
        Ok(())
    }

    /// Fails unless `D` has the view's number of dimensions (`IxDyn` has any).
    fn check_rank<D: Dimension>(&self) -> Result<()> {
        let rank = self.domain().rank();
        match D::NDIM {
            Some(n) if n != rank => Err(ArrayError::ShapeMismatch(ShapeMismatch::Rank {
                requested: n,
                view: rank,
            })),
            _ => Ok(()),
        }
    }

    /// Reads the view into `out` as C-order native-endian bytes (any fixed-size data type,
    /// `r*` too), in place: `out` must hold exactly the view's elements (checked before any
    /// request). For callers that own a buffer of another type (a NumPy array's memory).
    /// A `bool` array's bytes are copied as stored (0 or 1 when the data is valid).
    pub async fn read_bytes_into(&self, out: &mut [u8]) -> Result<()> {
        self.check_fixed_size("raw bytes")?;
        let expected = self.len()? * self.array.shared.elem;
        if out.len() != expected {
            return Err(ArrayError::ShapeMismatch(ShapeMismatch::ValueBytes {
                bytes: out.len() as u64,
                shape: self.shape(),
                element_size: self.array.shared.elem,
            }));
        }
        read::read_into(&self.array.shared, &self.transform, out).await
    }

    /// Reads the view as C-order native-endian bytes (any fixed-size data type, `r*` too).
    pub async fn read_bytes(&self) -> Result<Vec<u8>> {
        self.check_fixed_size("raw bytes")?;
        let mut bytes = zeroed::<u8>(self.len()? * self.array.shared.elem)?;
        read::read_into(&self.array.shared, &self.transform, &mut bytes).await?;
        Ok(bytes)
    }
}

impl ArrayView {
    /// Snapshots `values` (C-order native-endian bytes of `shape`, the array's data type)
    /// broadcast NumPy-style to the view's shape, checking rank, shape and bytes first.
    pub(crate) fn stage<'a>(
        &self,
        values: &'a [u8],
        shape: &[u64],
    ) -> Result<super::write::StagedWrite<'a>> {
        self.check_fixed_size("raw bytes")?;
        self.stage_unchecked(values, shape)
    }

    /// Fails for a variable-length array, whose elements are read and written with
    /// [`read_vlen`](Self::read_vlen) / [`write_vlen`](Self::write_vlen) only.
    pub(crate) fn check_fixed_size(&self, requested: &'static str) -> Result<()> {
        let dtype = self.array.data_type();
        if dtype.is_variable_length() {
            return Err(ArrayError::DataTypeMismatch {
                array: dtype.to_string(),
                requested,
            });
        }
        Ok(())
    }

    /// [`Self::stage`] of handles or fixed-size values alike.
    pub(crate) fn stage_unchecked<'a>(
        &self,
        values: &'a [u8],
        shape: &[u64],
    ) -> Result<super::write::StagedWrite<'a>> {
        use super::write::{StagedWrite, Values};
        let elem = self.array.shared.elem;
        let n: u64 = shape.iter().product();
        if values.len() as u64 != n.saturating_mul(elem as u64) {
            return Err(ArrayError::ShapeMismatch(ShapeMismatch::ValueBytes {
                bytes: values.len() as u64,
                shape: shape.to_vec(),
                element_size: elem,
            }));
        }
        if self.array.metadata().zarrs_metadata().data_type.name() == "bool"
            && values.iter().any(|&b| b > 1)
        {
            return Err(ArrayError::InvalidData {
                key: "values".into(),
                reason: "a bool value byte other than 0 or 1".into(),
            });
        }
        let target = self.shape();
        let mut vshape = shape.to_vec();
        while vshape.len() > target.len() && vshape.first() == Some(&1) {
            vshape.remove(0);
        }
        let compatible = vshape.len() <= target.len()
            && vshape
                .iter()
                .rev()
                .zip(target.iter().rev())
                .all(|(&v, &t)| v == t || v == 1);
        if !compatible {
            return Err(ArrayError::ShapeMismatch(ShapeMismatch::Broadcast {
                values: shape.to_vec(),
                selection: target,
            }));
        }
        let values = if vshape.iter().all(|&v| v == 1) {
            Values::Scalar(values.get(..elem).unwrap_or_default().to_vec())
        } else if vshape == target {
            Values::Borrowed(values)
        } else {
            // Broadcast where they are read (never materialised: values broadcast over a
            // huge domain, e.g. through a stride-0 transform, cost their own size).
            let mut shape = vec![1; target.len() - vshape.len()];
            shape.extend(vshape);
            Values::Broadcast {
                bytes: std::sync::Arc::new(values.to_vec()),
                shape,
            }
        };
        Ok(StagedWrite {
            transform: self.transform.clone(),
            values,
        })
    }

    /// Writes values given as C-order native-endian bytes of `shape` (the array's data
    /// type), broadcast NumPy-style to the view's shape. A point selected twice keeps the
    /// last value (C order of the view).
    ///
    /// Rank, shape and data are checked before any byte is stored; each touched shard is
    /// replaced whole or not at all.
    pub async fn write_bytes(&self, values: &[u8], shape: &[u64]) -> Result<()> {
        let staged = self.stage(values, shape)?;
        super::write::write(&self.array.shared, std::slice::from_ref(&staged)).await
    }

    /// Writes an array of values (any ndarray array or view of the element type, any
    /// number of dimensions), broadcast NumPy-style to the view's shape. `T` is any
    /// [`AnyElement`], `String` and `Vec<u8>` for `string` and `bytes` arrays too.
    pub async fn write<T, S, D>(&self, values: &ArrayBase<S, D>) -> Result<()>
    where
        T: AnyElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        T::write_view(self, values.view().into_dyn()).await
    }

    /// [`write`](Self::write) for a fixed-size element type.
    pub(crate) async fn write_fixed<T, S, D>(&self, values: &ArrayBase<S, D>) -> Result<()>
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        self.check_type::<T>()?;
        let shape: Vec<u64> = values.shape().iter().map(|&n| n as u64).collect();
        // Contiguous values of a plain-old-data type are written without a copy.
        if let Some(bytes) = values.as_slice().and_then(T::as_bytes) {
            return self.write_bytes(bytes, &shape).await;
        }
        let flat: Vec<T> = values.iter().copied().collect();
        self.write_bytes(&T::to_ne_bytes_vec(&flat), &shape).await
    }

    /// Writes one value into every cell of the view (any [`AnyElement`]).
    pub async fn write_scalar<T: AnyElement>(&self, value: T) -> Result<()> {
        self.write(&ndarray::arr0(value)).await
    }

    pub(crate) fn check_element<T: Element>(&self) -> Result<()> {
        self.check_type::<T>()
    }
}
