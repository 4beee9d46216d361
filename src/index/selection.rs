//! Selections as data: the items of an indexing expression such as `[1:7:2, ..., [3, 1, 3]]`.
//!
//! A [`Selection`] says nothing about its meaning until it is applied in a [`Dialect`]
//! (literal TensorStore coordinates or NumPy positions) and a [`SelectionMode`] (basic,
//! outer/oindex or vectorized/vindex). Build one with [`sel!`](crate::sel), with
//! [`Selection::parse`] from a NumPy-style string, or item by item.

use std::fmt;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use ndarray::{Array1, ArrayD, IxDyn};

use super::error::{IndexError, Result};

/// A slice `start:stop:step`; missing parts take the defaults of the dialect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Slice {
    /// First coordinate visited (inclusive).
    pub start: Option<i64>,
    /// Coordinate where the traversal stops (exclusive).
    pub stop: Option<i64>,
    /// Step; `None` means 1. Zero is an error when applied.
    pub step: Option<i64>,
}

impl Slice {
    /// `start:stop:step` with every part given.
    pub fn new(start: i64, stop: i64, step: i64) -> Self {
        Slice {
            start: Some(start),
            stop: Some(stop),
            step: Some(step),
        }
    }

    /// The full slice `:`.
    pub fn full() -> Self {
        Slice::default()
    }

    /// The same slice with a step.
    pub fn step_by(mut self, step: i64) -> Self {
        self.step = Some(step);
        self
    }
}

/// A Rust range with a step, as in ndarray's `s![a..b; step]`: the half-open set `start..end`
/// visited upwards for a positive step and from its end for a negative one
/// (`2..5;-1` visits 4, 3, 2). Missing bounds take the domain's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepRange {
    /// Inclusive lower end of the set.
    pub start: Option<i64>,
    /// Exclusive upper end of the set.
    pub end: Option<i64>,
    /// Non-zero step; negative visits the set from its end.
    pub step: i64,
}

/// One item of a selection.
#[derive(Clone, Debug, PartialEq)]
pub enum SelectionItem {
    /// An integer: selects one coordinate and drops the dimension.
    Index(i64),
    /// A (possibly strided or reversed) range of coordinates, NumPy `start:stop:step`.
    Slice(Slice),
    /// A range with a step, ndarray `s![]` style (see [`StepRange`]).
    Range(StepRange),
    /// `...`: as many full slices as needed.
    Ellipsis,
    /// `None` / `newaxis`: inserts a dimension of extent 1.
    NewAxis,
    /// An integer index array (1-D for `oindex`, any rank for `vindex`).
    Array(ArrayD<i64>),
    /// A boolean mask, covering as many dimensions as it has.
    Mask(ArrayD<bool>),
}

impl SelectionItem {
    /// True for index arrays and masks.
    pub fn is_array(&self) -> bool {
        matches!(self, SelectionItem::Array(_) | SelectionItem::Mask(_))
    }

    /// How many existing dimensions the item consumes.
    pub fn consumed_dims(&self) -> usize {
        match self {
            SelectionItem::Index(_)
            | SelectionItem::Slice(_)
            | SelectionItem::Range(_)
            | SelectionItem::Array(_) => 1,
            SelectionItem::Mask(m) => m.ndim(),
            SelectionItem::Ellipsis | SelectionItem::NewAxis => 0,
        }
    }
}

/// The unit value `NewAxis`, usable inside [`sel!`](crate::sel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewAxis;

/// The unit value `Ellipsis`, usable inside [`sel!`](crate::sel) (where `...` also works).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ellipsis;

/// A sequence of [`SelectionItem`]s.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    items: Vec<SelectionItem>,
}

/// What index arrays mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelectionMode {
    /// Integers, slices, `...` and new axes only; arrays are refused.
    Basic,
    /// Outer (orthogonal) indexing: each 1-D array selects along its own dimension
    /// (NumPy `np.ix_`, zarr-python `oindex`).
    Outer,
    /// Vectorized indexing: arrays are broadcast together and select points (NumPy advanced
    /// indexing, zarr-python `vindex`).
    Vectorized,
}

/// How integers and slice bounds are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// TensorStore: integers are domain coordinates as they are; no wrapping, no clamping.
    Literal,
    /// NumPy: positions relative to the view; negative values wrap and slices clamp.
    Positional,
}

impl Selection {
    /// A selection from its items.
    pub fn new(items: Vec<SelectionItem>) -> Self {
        Selection { items }
    }

    /// The empty selection (selects everything).
    pub fn all() -> Self {
        Selection::default()
    }

    /// The items.
    pub fn items(&self) -> &[SelectionItem] {
        &self.items
    }

    /// Appends an item.
    pub fn push(&mut self, item: impl Into<SelectionItem>) {
        self.items.push(item.into());
    }

    /// True if some item is an index array or a mask.
    pub fn has_arrays(&self) -> bool {
        self.items.iter().any(SelectionItem::is_array)
    }

    /// Expands `...` and pads with full slices so that the items consume exactly `rank`
    /// dimensions. Fails on two ellipses or too many indices.
    pub(crate) fn expanded(&self, rank: usize) -> Result<Vec<SelectionItem>> {
        self.clone().into_expanded(rank)
    }

    /// [`Selection::expanded`], consuming the selection (index arrays are moved, not
    /// copied).
    pub(crate) fn into_expanded(self, rank: usize) -> Result<Vec<SelectionItem>> {
        let fill = self.padding(rank)?;
        let mut out = Vec::with_capacity(self.items.len() + fill);
        let mut filled = false;
        for item in self.items {
            if matches!(item, SelectionItem::Ellipsis) {
                out.push(SelectionItem::Ellipsis);
                out.extend((0..fill).map(|_| SelectionItem::Slice(Slice::full())));
                filled = true;
            } else {
                out.push(item);
            }
        }
        if !filled {
            out.extend((0..fill).map(|_| SelectionItem::Slice(Slice::full())));
        }
        Ok(out)
    }

    /// How many full slices expansion adds, after the ellipsis or else at the end, so that
    /// the items consume exactly `rank` dimensions. Fails on two ellipses or too many
    /// indices.
    pub(crate) fn padding(&self, rank: usize) -> Result<usize> {
        let n_ellipsis = self
            .items
            .iter()
            .filter(|i| matches!(i, SelectionItem::Ellipsis))
            .count();
        if n_ellipsis > 1 {
            return Err(IndexError::InvalidSelection(
                "a selection may contain at most one ellipsis (...)".into(),
            ));
        }
        let consumed: usize = self.items.iter().map(SelectionItem::consumed_dims).sum();
        if consumed > rank {
            return Err(IndexError::InvalidSelection(format!(
                "too many indices: the selection indexes {consumed} dimensions of a rank-{rank} domain"
            )));
        }
        Ok(rank - consumed)
    }
}

impl FromIterator<SelectionItem> for Selection {
    fn from_iter<I: IntoIterator<Item = SelectionItem>>(iter: I) -> Self {
        Selection::new(iter.into_iter().collect())
    }
}

impl fmt::Display for Selection {
    /// NumPy syntax, e.g. `1:7:2, ..., [3, 1, 3]`; [`Selection::parse`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            match item {
                SelectionItem::Index(v) => write!(f, "{v}")?,
                SelectionItem::Slice(s) => {
                    if let Some(v) = s.start {
                        write!(f, "{v}")?;
                    }
                    write!(f, ":")?;
                    if let Some(v) = s.stop {
                        write!(f, "{v}")?;
                    }
                    if let Some(v) = s.step {
                        write!(f, ":{v}")?;
                    }
                }
                SelectionItem::Range(r) => {
                    if let Some(v) = r.start {
                        write!(f, "{v}")?;
                    }
                    write!(f, "..")?;
                    if let Some(v) = r.end {
                        write!(f, "{v}")?;
                    }
                    write!(f, ";{}", r.step)?;
                }
                SelectionItem::Ellipsis => write!(f, "...")?,
                SelectionItem::NewAxis => write!(f, "None")?,
                SelectionItem::Array(a) => write_nested(f, a.shape(), &mut a.iter())?,
                SelectionItem::Mask(m) => write_nested(f, m.shape(), &mut m.iter())?,
            }
        }
        Ok(())
    }
}

fn write_nested<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    shape: &[usize],
    values: &mut dyn Iterator<Item = T>,
) -> fmt::Result {
    match shape.split_first() {
        None => match values.next() {
            Some(v) => write!(f, "{v}"),
            None => Ok(()),
        },
        Some((&n, rest)) => {
            write!(f, "[")?;
            for i in 0..n {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write_nested(f, rest, values)?;
            }
            write!(f, "]")
        }
    }
}

/// An integer type that selections accept (`i8`..`i64`, `isize`, `u8`..`u64`, `usize`), as
/// ndarray's `s![]` takes `usize`: `sel![0..n]` with `n: usize`, `sel![m]` with `m: u64`.
///
/// Values beyond `i64` (a `u64` above `i64::MAX`) saturate to `i64::MAX`, which lies past
/// the end of every array: as an index it is out of bounds, as a slice bound it clamps to
/// the end, exactly as the true value would.
pub trait IndexInt: Copy + sealed::Sealed {
    /// The value as a coordinate.
    fn to_index(self) -> i64;

    /// An owned index array of this type as coordinates (moved, not copied, for `i64`).
    #[doc(hidden)]
    fn into_index_array<D: ndarray::Dimension>(a: ndarray::Array<Self, D>) -> ArrayD<i64> {
        a.mapv(Self::to_index).into_dyn()
    }
}

impl sealed::Sealed for i64 {}
impl IndexInt for i64 {
    #[inline]
    fn to_index(self) -> i64 {
        self
    }
    fn into_index_array<D: ndarray::Dimension>(a: ndarray::Array<i64, D>) -> ArrayD<i64> {
        a.into_dyn()
    }
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! index_int {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl IndexInt for $t {
            #[inline]
            fn to_index(self) -> i64 {
                i64::try_from(self).unwrap_or(i64::MAX)
            }
        }
    )*};
}

index_int!(i8, i16, i32, isize, u8, u16, u32, u64, usize);

macro_rules! index_int_items {
    ($($t:ty),*) => {$(
        impl From<$t> for SelectionItem {
            fn from(v: $t) -> Self {
                SelectionItem::Index(v.to_index())
            }
        }
        impl From<Range<$t>> for SelectionItem {
            fn from(r: Range<$t>) -> Self {
                SelectionItem::Slice(Slice {
                    start: Some(r.start.to_index()),
                    stop: Some(r.end.to_index()),
                    step: None,
                })
            }
        }
        impl From<RangeInclusive<$t>> for SelectionItem {
            fn from(r: RangeInclusive<$t>) -> Self {
                SelectionItem::Slice(Slice {
                    start: Some(r.start().to_index()),
                    stop: Some(r.end().to_index().saturating_add(1)),
                    step: None,
                })
            }
        }
        impl From<RangeFrom<$t>> for SelectionItem {
            fn from(r: RangeFrom<$t>) -> Self {
                SelectionItem::Slice(Slice {
                    start: Some(r.start.to_index()),
                    stop: None,
                    step: None,
                })
            }
        }
        impl From<RangeTo<$t>> for SelectionItem {
            fn from(r: RangeTo<$t>) -> Self {
                SelectionItem::Slice(Slice {
                    start: None,
                    stop: Some(r.end.to_index()),
                    step: None,
                })
            }
        }
        impl From<RangeToInclusive<$t>> for SelectionItem {
            fn from(r: RangeToInclusive<$t>) -> Self {
                SelectionItem::Slice(Slice {
                    start: None,
                    stop: Some(r.end.to_index().saturating_add(1)),
                    step: None,
                })
            }
        }
        impl From<Vec<$t>> for SelectionItem {
            fn from(v: Vec<$t>) -> Self {
                SelectionItem::from(Array1::from(v))
            }
        }
        impl From<&Vec<$t>> for SelectionItem {
            fn from(v: &Vec<$t>) -> Self {
                SelectionItem::from(v.as_slice())
            }
        }
        impl From<&[$t]> for SelectionItem {
            fn from(v: &[$t]) -> Self {
                SelectionItem::Array(v.iter().map(|&x| x.to_index()).collect::<Array1<i64>>().into_dyn())
            }
        }
        impl<const N: usize> From<[$t; N]> for SelectionItem {
            fn from(v: [$t; N]) -> Self {
                SelectionItem::from(&v[..])
            }
        }
        impl<const M: usize, const N: usize> From<[[$t; M]; N]> for SelectionItem {
            fn from(v: [[$t; M]; N]) -> Self {
                SelectionItem::Array(ndarray::Array2::from(v.to_vec()).mapv(IndexInt::to_index).into_dyn())
            }
        }
        impl<D: ndarray::Dimension> From<ndarray::ArrayView<'_, $t, D>> for SelectionItem {
            fn from(a: ndarray::ArrayView<'_, $t, D>) -> Self {
                SelectionItem::Array(a.mapv(IndexInt::to_index).into_dyn())
            }
        }
        impl<D: ndarray::Dimension> From<&ndarray::Array<$t, D>> for SelectionItem {
            fn from(a: &ndarray::Array<$t, D>) -> Self {
                SelectionItem::from(a.view())
            }
        }
        impl<D: ndarray::Dimension> From<ndarray::Array<$t, D>> for SelectionItem {
            fn from(a: ndarray::Array<$t, D>) -> Self {
                SelectionItem::Array(IndexInt::into_index_array(a))
            }
        }
    )*};
}

index_int_items!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl From<Slice> for SelectionItem {
    fn from(s: Slice) -> Self {
        SelectionItem::Slice(s)
    }
}
impl From<RangeFull> for SelectionItem {
    fn from(_: RangeFull) -> Self {
        SelectionItem::Slice(Slice::full())
    }
}
impl From<NewAxis> for SelectionItem {
    fn from(_: NewAxis) -> Self {
        SelectionItem::NewAxis
    }
}
impl From<Ellipsis> for SelectionItem {
    fn from(_: Ellipsis) -> Self {
        SelectionItem::Ellipsis
    }
}
impl<const M: usize, const N: usize> From<[[bool; M]; N]> for SelectionItem {
    fn from(v: [[bool; M]; N]) -> Self {
        SelectionItem::Mask(ndarray::Array2::from(v.to_vec()).into_dyn())
    }
}
impl From<Vec<bool>> for SelectionItem {
    fn from(v: Vec<bool>) -> Self {
        SelectionItem::Mask(Array1::from(v).into_dyn())
    }
}
impl From<&[bool]> for SelectionItem {
    fn from(v: &[bool]) -> Self {
        SelectionItem::from(v.to_vec())
    }
}
impl<const N: usize> From<[bool; N]> for SelectionItem {
    fn from(v: [bool; N]) -> Self {
        SelectionItem::from(v.to_vec())
    }
}
impl<D: ndarray::Dimension> From<ndarray::Array<bool, D>> for SelectionItem {
    fn from(a: ndarray::Array<bool, D>) -> Self {
        SelectionItem::Mask(a.into_dyn())
    }
}
impl<D: ndarray::Dimension> From<ndarray::ArrayView<'_, bool, D>> for SelectionItem {
    fn from(a: ndarray::ArrayView<'_, bool, D>) -> Self {
        SelectionItem::Mask(a.to_owned().into_dyn())
    }
}
impl<D: ndarray::Dimension> From<&ndarray::Array<bool, D>> for SelectionItem {
    fn from(a: &ndarray::Array<bool, D>) -> Self {
        SelectionItem::Mask(a.clone().into_dyn())
    }
}

/// Converts an index array of any integer type, rejecting values outside `i64`
/// (e.g. `u64` above `i64::MAX`).
pub fn index_array_from<T>(array: &ArrayD<T>) -> Result<SelectionItem>
where
    T: Copy + TryInto<i64> + fmt::Display,
{
    let mut values = Vec::with_capacity(array.len());
    for &v in array.iter() {
        values.push(v.try_into().map_err(|_| {
            IndexError::InvalidType(format!("index value {v} does not fit in i64"))
        })?);
    }
    let a = ArrayD::from_shape_vec(IxDyn(array.shape()), values)
        .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
    Ok(SelectionItem::Array(a))
}

/// Builds a [`Selection`] with syntax close to ndarray's `s![]` and NumPy's `[]`.
///
/// Items, separated by commas:
/// - an integer expression: `3`, `-1`;
/// - a range with an optional step after `;`: `1..7;2`, `..;-1`, `2..`, `..5`, `..`. As in
///   ndarray, a range is a set and a negative step visits it from its end: `2..5;-1` is
///   NumPy's `4:1:-1`. (NumPy-style `start:stop:step` is available through
///   [`Selection::parse`] and [`Slice`].)
/// - `...` for an ellipsis and `NewAxis` for a new axis;
/// - an index list or array: `[3, 1, 3]`, `vec![..]`, an `ndarray` array;
/// - a boolean mask: `[true, false, true]` or an `ndarray` array of `bool`.
///
/// ```
/// use zarrflow::index::{IndexTransform, NewAxis};
/// use zarrflow::sel;
/// let t = IndexTransform::from_shape(&[10, 20, 30]).unwrap();
/// let v = t.index(&sel![1..7;2, ..., NewAxis]).unwrap();
/// assert_eq!(v.domain().shape(), vec![3, 20, 30, 1]);
/// let g = t.oindex(&sel![[3, 1, 3], 5]).unwrap();
/// assert_eq!(g.domain().shape(), vec![3, 30]);
/// ```
#[macro_export]
macro_rules! sel {
    (@acc [$($acc:expr),*]) => {
        $crate::index::Selection::new(vec![$($acc),*])
    };
    (@acc [$($acc:expr),*] ... $(, $($rest:tt)*)?) => {
        $crate::sel!(@acc [$($acc,)* $crate::index::SelectionItem::Ellipsis] $($($rest)*)?)
    };
    (@acc [$($acc:expr),*] $e:expr ; $step:expr $(, $($rest:tt)*)?) => {
        $crate::sel!(@acc [$($acc,)* $crate::index::__with_step($e, $step)] $($($rest)*)?)
    };
    (@acc [$($acc:expr),*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::sel!(@acc [$($acc,)* $crate::index::SelectionItem::from($e)] $($($rest)*)?)
    };
    ($($t:tt)*) => {
        $crate::sel!(@acc [] $($t)*)
    };
}

/// Used by [`sel!`](crate::sel): gives a range a step (`1..7;2`, `..;-1`). Only ranges take
/// a step, so `3;2` does not compile.
#[doc(hidden)]
pub fn __with_step<R: StepBounds>(range: R, step: impl IndexInt) -> SelectionItem {
    let (start, end) = range.bounds();
    SelectionItem::Range(StepRange {
        start,
        end,
        step: step.to_index(),
    })
}

/// The ranges that take a step in [`sel!`](crate::sel): `a..b`, `a..=b`, `a..`, `..b`,
/// `..=b`, `..`, of any [`IndexInt`].
#[doc(hidden)]
pub trait StepBounds {
    /// Inclusive lower and exclusive upper end, `None` where unbounded.
    fn bounds(self) -> (Option<i64>, Option<i64>);
}

impl StepBounds for RangeFull {
    fn bounds(self) -> (Option<i64>, Option<i64>) {
        (None, None)
    }
}

macro_rules! step_bounds {
    ($($t:ty),*) => {$(
        impl StepBounds for Range<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (Some(self.start.to_index()), Some(self.end.to_index()))
            }
        }
        impl StepBounds for RangeInclusive<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (Some(self.start().to_index()), Some(self.end().to_index().saturating_add(1)))
            }
        }
        impl StepBounds for RangeFrom<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (Some(self.start.to_index()), None)
            }
        }
        impl StepBounds for RangeTo<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (None, Some(self.end.to_index()))
            }
        }
        impl StepBounds for RangeToInclusive<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (None, Some(self.end.to_index().saturating_add(1)))
            }
        }
    )*};
}

step_bounds!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
