//! Output index maps: how one storage (output) coordinate is computed from an input point.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use ndarray::{ArcArray, ArrayD, IxDyn};

use super::arith::affine_checked;
use super::error::{IndexError, Result};

/// An immutable, cheaply shared integer array used by [`OutputIndexMap::Array`].
///
/// It always has the full input rank of its transform; each axis has the domain's extent or
/// extent 1 (broadcast). Values are looked up by position relative to the domain origin.
/// Its `(min, max)` ([`IndexArray::min_max`]) is worked out once, by whoever asks first
/// (usually the containment check of a selection's `compose`), and shared by its clones
/// (the planner's).
#[derive(Clone)]
pub struct IndexArray {
    values: ArcArray<i64, IxDyn>,
    range: Arc<OnceLock<Option<(i64, i64)>>>,
}

impl IndexArray {
    /// Wraps an array; the data is shared, never mutated.
    pub fn new(array: ArrayD<i64>) -> Self {
        IndexArray {
            values: array.into_shared(),
            range: Arc::default(),
        }
    }

    /// Converts an array of any integer type, rejecting values outside `i64`.
    pub fn try_from_ints<T>(array: &ArrayD<T>) -> Result<Self>
    where
        T: Copy + TryInto<i64> + fmt::Display,
    {
        let mut out = Vec::with_capacity(array.len());
        for &v in array.iter() {
            out.push(v.try_into().map_err(|_| {
                IndexError::InvalidType(format!("index value {v} does not fit in i64"))
            })?);
        }
        let a = ArrayD::from_shape_vec(IxDyn(array.shape()), out)
            .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
        Ok(IndexArray::new(a))
    }

    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        self.values.shape()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True if the array has no element.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// A read-only view of the values.
    pub fn view(&self) -> ndarray::ArrayViewD<'_, i64> {
        self.values.view()
    }

    /// The shared array.
    pub fn as_array(&self) -> &ArcArray<i64, IxDyn> {
        &self.values
    }

    /// The value at a position (relative to the domain origin); size-1 axes broadcast.
    pub fn get_broadcast(&self, pos: &[usize]) -> i64 {
        let idx: Vec<usize> = pos
            .iter()
            .zip(self.shape())
            .map(|(&p, &n)| if n == 1 { 0 } else { p })
            .collect();
        self.values[IxDyn(&idx)]
    }

    /// Axes of extent > 1: the input axes the map varies over.
    pub fn dependency_axes(&self) -> Vec<usize> {
        self.shape()
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 1)
            .map(|(d, _)| d)
            .collect()
    }

    /// `(min, max)` of the values, `None` when empty (one pass over the values, the first
    /// time any clone asks).
    pub fn min_max(&self) -> Option<(i64, i64)> {
        *self
            .range
            .get_or_init(|| match self.values.as_slice_memory_order() {
                Some(values) => super::bulk::min_max(values),
                None => {
                    let mut it = self.values.iter();
                    let first = *it.next()?;
                    Some(it.fold((first, first), |(lo, hi), &v| (lo.min(v), hi.max(v))))
                }
            })
    }
}

impl PartialEq for IndexArray {
    fn eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.values.iter().eq(other.values.iter())
    }
}
impl Eq for IndexArray {}

impl Hash for IndexArray {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.shape().hash(state);
        for v in self.values.iter() {
            v.hash(state);
        }
    }
}

impl fmt::Debug for IndexArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IndexArray(shape={:?}, ", self.shape())?;
        if self.len() <= 16 {
            write!(f, "{:?})", self.values.iter().collect::<Vec<_>>())
        } else {
            write!(
                f,
                "{:?}...)",
                self.values.iter().take(16).collect::<Vec<_>>()
            )
        }
    }
}

/// How one output (storage) coordinate is computed from an input point `x`.
///
/// The coordinates a map produces over a domain form an ordered sequence that keeps
/// duplicates.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OutputIndexMap {
    /// `offset` for every input point.
    Constant {
        /// The output coordinate.
        offset: i64,
    },
    /// `offset + stride * x[input_dimension]`; stride < 0 reverses, stride 0 repeats.
    Dimension {
        /// The input dimension read.
        input_dimension: usize,
        /// Added after scaling.
        offset: i64,
        /// Scale factor.
        stride: i64,
    },
    /// `offset + stride * array[x - origin]`, with size-1 array axes broadcast.
    Array {
        /// The index array, of the full input rank.
        array: IndexArray,
        /// Added after scaling.
        offset: i64,
        /// Scale factor.
        stride: i64,
    },
}

impl OutputIndexMap {
    /// A constant map.
    pub fn constant(offset: i64) -> Self {
        OutputIndexMap::Constant { offset }
    }

    /// An affine map of one input dimension.
    pub fn dimension(input_dimension: usize, offset: i64, stride: i64) -> Self {
        OutputIndexMap::Dimension {
            input_dimension,
            offset,
            stride,
        }
    }

    /// An index-array map. A one-element array collapses to a constant (singleton
    /// collapse); an empty array stays an array map.
    pub fn array_or_constant(array: IndexArray, offset: i64, stride: i64) -> Result<Self> {
        if array.len() == 1 {
            let v = array.view().iter().copied().next().unwrap_or(0);
            let c = affine_checked(offset, stride, v, &|| "singleton index array".into())?;
            return Ok(OutputIndexMap::Constant { offset: c });
        }
        Ok(OutputIndexMap::Array {
            array,
            offset,
            stride,
        })
    }

    /// The offset of any kind of map.
    pub fn offset(&self) -> i64 {
        match *self {
            OutputIndexMap::Constant { offset }
            | OutputIndexMap::Dimension { offset, .. }
            | OutputIndexMap::Array { offset, .. } => offset,
        }
    }

    /// The stride (0 for a constant map).
    pub fn stride(&self) -> i64 {
        match *self {
            OutputIndexMap::Constant { .. } => 0,
            OutputIndexMap::Dimension { stride, .. } | OutputIndexMap::Array { stride, .. } => {
                stride
            }
        }
    }

    /// The same map with `shift` added to its offset.
    pub fn translated(&self, shift: i64) -> Result<Self> {
        let what = || format!("translating an output map by {shift}");
        let mut m = self.clone();
        match &mut m {
            OutputIndexMap::Constant { offset }
            | OutputIndexMap::Dimension { offset, .. }
            | OutputIndexMap::Array { offset, .. } => {
                *offset = super::arith::add(*offset, shift, &what)?;
            }
        }
        Ok(m)
    }

    /// The input axes this map varies over.
    pub fn input_axes(&self) -> Vec<usize> {
        match self {
            OutputIndexMap::Constant { .. } => vec![],
            OutputIndexMap::Dimension {
                input_dimension, ..
            } => vec![*input_dimension],
            OutputIndexMap::Array { array, .. } => array.dependency_axes(),
        }
    }
}

impl fmt::Display for OutputIndexMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputIndexMap::Constant { offset } => write!(f, "{offset}"),
            OutputIndexMap::Dimension {
                input_dimension,
                offset,
                stride,
            } => write!(f, "{offset} + {stride} * in[{input_dimension}]"),
            OutputIndexMap::Array {
                array,
                offset,
                stride,
            } => write!(f, "{offset} + {stride} * {array:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_worked_out_once_and_shared_by_clones() {
        let a = IndexArray::new(ArrayD::from_shape_vec(IxDyn(&[4]), vec![5, -2, 9, 0]).unwrap());
        let b = a.clone();
        assert!(
            a.range.get().is_none(),
            "nothing worked out before it is asked for"
        );
        assert_eq!(b.min_max(), Some((-2, 9)));
        assert_eq!(
            a.range.get(),
            Some(&Some((-2, 9))),
            "a clone's answer is the original's"
        );
        let empty = IndexArray::new(ArrayD::from_shape_vec(IxDyn(&[0]), vec![]).unwrap());
        assert_eq!(empty.min_max(), None);
    }
}
