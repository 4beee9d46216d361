//! [`IndexTransform`]: an input domain plus one output map per storage dimension.

use std::fmt;

use ndarray::{Array2, ArrayD, ArrayView2, IxDyn};

use super::arith::affine_checked;
use super::domain::{IndexDomain, check_rank};
use super::error::{Bounds, Coordinates, IndexError, Result};
use super::map::{IndexArray, OutputIndexMap};

/// Maps every point of an input domain (the request / result space) to output (storage)
/// coordinates, one [`OutputIndexMap`] per output dimension.
///
/// A frozen value type: every operation returns a new transform. Equality and hashing are
/// by value.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IndexTransform {
    domain: IndexDomain,
    output: Vec<OutputIndexMap>,
}

/// How the index-array maps of a transform relate to each other and to affine maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexArrayStructure {
    /// No index-array map.
    None,
    /// Each index-array map varies over exactly one input axis, shared with no other map.
    Orthogonal,
    /// Anything else: correlated (vindex) arrays, arrays sharing an axis with an affine map,
    /// all-singleton arrays.
    General,
}

impl IndexTransform {
    /// A transform from a domain and output maps; validates that every `Dimension` map reads
    /// an existing input dimension and every `Array` map has the full input rank with each
    /// axis of the domain's extent or of extent 1.
    pub fn new(domain: IndexDomain, output: Vec<OutputIndexMap>) -> Result<Self> {
        check_rank(output.len())?;
        let rank = domain.rank();
        for (o, m) in output.iter().enumerate() {
            match m {
                OutputIndexMap::Constant { .. } => {}
                OutputIndexMap::Dimension {
                    input_dimension, ..
                } => {
                    if *input_dimension >= rank {
                        return Err(IndexError::out_of_bounds(
                            format!("output {o}'s input dimension"),
                            None,
                            Coordinates::Index(*input_dimension as i64),
                            Bounds::Interval {
                                inclusive_min: 0,
                                exclusive_max: rank as i64,
                            },
                        ));
                    }
                }
                OutputIndexMap::Array { array, .. } => {
                    if array.shape().len() != rank {
                        return Err(IndexError::rank_mismatch(
                            format!("the rank of output {o}'s index array"),
                            rank,
                            array.shape().len(),
                        ));
                    }
                    for (d, &n) in array.shape().iter().enumerate() {
                        if n as u64 != domain.extent(d) && n != 1 {
                            return Err(IndexError::InvalidArgument(format!(
                                "output {o}: index array axis {d} has extent {n}, but the \
                                 domain has extent {} (or 1 to broadcast)",
                                domain.extent(d)
                            )));
                        }
                    }
                }
            }
        }
        Ok(IndexTransform { domain, output })
    }

    /// The identity transform over `[0, shape)`.
    pub fn from_shape(shape: &[u64]) -> Result<Self> {
        Ok(Self::identity(IndexDomain::from_shape(shape)?))
    }

    /// The identity transform over a domain.
    pub fn identity(domain: IndexDomain) -> Self {
        let output = (0..domain.rank())
            .map(|d| OutputIndexMap::dimension(d, 0, 1))
            .collect();
        IndexTransform { domain, output }
    }

    /// The input domain.
    pub fn domain(&self) -> &IndexDomain {
        &self.domain
    }

    /// The output maps, one per output dimension.
    pub fn output(&self) -> &[OutputIndexMap] {
        &self.output
    }

    /// Input rank.
    pub fn input_rank(&self) -> usize {
        self.domain.rank()
    }

    /// Output rank.
    pub fn output_rank(&self) -> usize {
        self.output.len()
    }

    /// The same transform with the domain's labels replaced (`""` = unlabeled).
    pub fn with_labels(mut self, labels: Vec<String>) -> Result<Self> {
        self.domain = self.domain.with_labels(labels)?;
        Ok(self)
    }

    /// Maps one input point; fails if it lies outside the domain or an output overflows.
    pub fn apply(&self, point: &[i64]) -> Result<Vec<i64>> {
        if !self.domain.contains(point) {
            return Err(IndexError::out_of_bounds(
                "point",
                None,
                Coordinates::Point(point.to_vec()),
                Bounds::Domain(self.domain.clone()),
            ));
        }
        self.apply_unchecked_domain(point)
    }

    fn apply_unchecked_domain(&self, point: &[i64]) -> Result<Vec<i64>> {
        let origin = self.domain.origin();
        self.output
            .iter()
            .enumerate()
            .map(|(o, m)| {
                let what = || format!("output dimension {o} at input point {point:?}");
                match m {
                    OutputIndexMap::Constant { offset } => Ok(*offset),
                    OutputIndexMap::Dimension {
                        input_dimension,
                        offset,
                        stride,
                    } => affine_checked(*offset, *stride, point[*input_dimension], &what),
                    OutputIndexMap::Array {
                        array,
                        offset,
                        stride,
                    } => {
                        let pos: Vec<usize> = point
                            .iter()
                            .zip(origin)
                            .map(|(&x, &o)| (x as i128 - o as i128) as usize)
                            .collect();
                        affine_checked(*offset, *stride, array.get_broadcast(&pos), &what)
                    }
                }
            })
            .collect()
    }

    /// Maps many points given as rows of an `n × input_rank` array; the error names the row.
    pub fn apply_many(&self, points: ArrayView2<'_, i64>) -> Result<Array2<i64>> {
        if points.ncols() != self.input_rank() {
            return Err(IndexError::rank_mismatch(
                "the points' number of columns",
                self.input_rank(),
                points.ncols(),
            ));
        }
        let mut out = Array2::zeros((points.nrows(), self.output_rank()));
        for (i, row) in points.rows().into_iter().enumerate() {
            let p: Vec<i64> = row.to_vec();
            let mapped = self.apply(&p).map_err(|e| match e {
                IndexError::OutOfBounds(mut m) => {
                    m.what = format!("row {i}: {}", m.what);
                    IndexError::OutOfBounds(m)
                }
                other => other,
            })?;
            for (o, v) in mapped.into_iter().enumerate() {
                out[(i, o)] = v;
            }
        }
        Ok(out)
    }

    /// Calls `f(input_point, output_point)` for every input point in C order.
    pub fn for_each_mapped(&self, mut f: impl FnMut(&[i64], &[i64])) -> Result<()> {
        let mut err = None;
        self.domain.for_each_point(|p| {
            if err.is_some() {
                return;
            }
            match self.apply_unchecked_domain(p) {
                Ok(out) => f(p, &out),
                Err(e) => err = Some(e),
            }
        });
        err.map_or(Ok(()), Err)
    }

    /// Reads this transform's cells from an in-memory source array (the output space, zero
    /// origin), giving an array of the domain's shape. A naive reference implementation.
    pub fn gather_from<T: Clone>(&self, source: &ArrayD<T>) -> Result<ArrayD<T>> {
        if source.ndim() != self.output_rank() {
            return Err(IndexError::rank_mismatch(
                "the source array's rank",
                self.output_rank(),
                source.ndim(),
            ));
        }
        let shape: Vec<usize> = self.domain.shape().iter().map(|&n| n as usize).collect();
        let mut values = Vec::with_capacity(shape.iter().product());
        let mut err = None;
        self.for_each_mapped(|p, out| {
            if err.is_some() {
                return;
            }
            let mut idx = Vec::with_capacity(out.len());
            for (d, &x) in out.iter().enumerate() {
                if x < 0 || x as u64 >= source.shape()[d] as u64 {
                    err = Some(IndexError::out_of_bounds(
                        format!("the output of input point {p:?}"),
                        None,
                        Coordinates::Point(out.to_vec()),
                        Bounds::Shape(source.shape().iter().map(|&n| n as u64).collect()),
                    ));
                    return;
                }
                idx.push(x as usize);
            }
            values.push(source[IxDyn(&idx)].clone());
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        ArrayD::from_shape_vec(IxDyn(&shape), values)
            .map_err(|e| IndexError::InvalidArgument(e.to_string()))
    }

    /// Adds `shift[o]` to the offset of output map `o` (e.g. to make coordinates chunk-local).
    pub fn translate_output(&self, shift: &[i64]) -> Result<Self> {
        if shift.len() != self.output_rank() {
            return Err(IndexError::rank_mismatch(
                "the output shift's length",
                self.output_rank(),
                shift.len(),
            ));
        }
        let output = self
            .output
            .iter()
            .zip(shift)
            .map(|(m, &s)| m.translated(s))
            .collect::<Result<_>>()?;
        Ok(IndexTransform {
            domain: self.domain.clone(),
            output,
        })
    }

    /// Moves the input domain by `shift`, re-offsetting affine maps so the same storage
    /// cells are addressed (TensorStore `translate_by`). Constant and array maps are
    /// unchanged (arrays are positional).
    pub fn translate_domain_by(&self, shift: &[i64]) -> Result<Self> {
        let domain = self.domain.translate(shift)?;
        let output = self
            .output
            .iter()
            .map(|m| match *m {
                OutputIndexMap::Dimension {
                    input_dimension,
                    offset,
                    stride,
                } => {
                    let s = shift[input_dimension];
                    let exact = offset as i128 - stride as i128 * s as i128;
                    let off = i64::try_from(exact).map_err(|_| {
                        IndexError::Overflow(format!(
                            "re-offsetting {offset} - {stride} * {s} after a domain translation"
                        ))
                    })?;
                    Ok(OutputIndexMap::dimension(input_dimension, off, stride))
                }
                _ => Ok(m.clone()),
            })
            .collect::<Result<_>>()?;
        Ok(IndexTransform { domain, output })
    }

    /// Moves the input domain so that its origin becomes `origin` (TensorStore
    /// `translate_to`).
    pub fn translate_domain_to(&self, origin: &[i64]) -> Result<Self> {
        self.domain.check_rank_of(origin.len(), "new origin")?;
        let shift = origin
            .iter()
            .zip(self.domain.origin())
            .enumerate()
            .map(|(d, (&to, &from))| {
                to.checked_sub(from)
                    .ok_or_else(|| IndexError::Overflow(format!("dimension {d}: {to} - {from}")))
            })
            .collect::<Result<Vec<_>>>()?;
        self.translate_domain_by(&shift)
    }

    /// The same transform re-based to a zero origin.
    pub fn zero_origin(&self) -> Result<Self> {
        self.translate_domain_to(&vec![0; self.input_rank()])
    }

    /// Classifies the index-array maps (see [`IndexArrayStructure`]).
    pub fn index_array_structure(&self) -> IndexArrayStructure {
        let mut any_array = false;
        // How many index-array maps vary over each input axis.
        let mut used = vec![0usize; self.input_rank()];
        let mut general = false;
        for m in &self.output {
            if let OutputIndexMap::Array { array, .. } = m {
                any_array = true;
                match array.dependency_axes()[..] {
                    [axis] => used[axis] += 1,
                    _ => general = true,
                }
            }
        }
        if !any_array {
            return IndexArrayStructure::None;
        }
        if general || used.iter().any(|&n| n > 1) {
            return IndexArrayStructure::General;
        }
        for m in &self.output {
            if let OutputIndexMap::Dimension {
                input_dimension, ..
            } = m
                && used[*input_dimension] > 0
            {
                return IndexArrayStructure::General;
            }
        }
        IndexArrayStructure::Orthogonal
    }

    /// The exact `(min, max)` output of map `o` over the (non-empty) domain; `None` when
    /// the domain is empty. Fails on overflow.
    pub fn output_range(&self, o: usize) -> Result<Option<(i64, i64)>> {
        if self.domain.is_empty() {
            return Ok(None);
        }
        let what = || format!("the range of output dimension {o}");
        let endpoints = |offset: i64, stride: i64, lo: i64, hi: i64| -> Result<(i64, i64)> {
            let a = affine_checked(offset, stride, lo, &what)?;
            let b = affine_checked(offset, stride, hi, &what)?;
            Ok((a.min(b), a.max(b)))
        };
        Ok(Some(match &self.output[o] {
            OutputIndexMap::Constant { offset } => (*offset, *offset),
            OutputIndexMap::Dimension {
                input_dimension,
                offset,
                stride,
            } => {
                let (lo, hi) = self.domain.interval(*input_dimension);
                endpoints(*offset, *stride, lo, hi - 1)?
            }
            OutputIndexMap::Array {
                array,
                offset,
                stride,
            } => match array.min_max() {
                Some((lo, hi)) => endpoints(*offset, *stride, lo, hi)?,
                None => return Ok(None),
            },
        }))
    }

    /// A compact description such as `{ [0, 4) step 2, [0, 1) }` of the output cells.
    pub fn selection_repr(&self) -> String {
        let parts: Vec<String> = self
            .output
            .iter()
            .enumerate()
            .map(|(o, m)| match m {
                OutputIndexMap::Constant { offset } => format!("{offset}"),
                OutputIndexMap::Dimension { stride, .. } => {
                    match self.output_range(o).ok().flatten() {
                        None => "[]".to_string(),
                        Some((lo, hi)) if *stride == 1 || lo == hi => {
                            format!("[{lo}, {})", hi + 1)
                        }
                        Some((lo, hi)) => format!("[{lo}, {}) step {stride}", hi + 1),
                    }
                }
                OutputIndexMap::Array { array, .. } => format!("array{:?}", array.shape()),
            })
            .collect();
        format!("{{ {} }}", parts.join(", "))
    }
}

impl fmt::Debug for IndexTransform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IndexTransform {{ domain: {}, output: [", self.domain)?;
        for (i, m) in self.output.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{m}")?;
        }
        write!(f, "] }}")
    }
}

impl fmt::Display for IndexTransform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Builds an index array of the given shape by calling `f` on each position (C order).
pub(crate) fn array_from_fn(shape: &[usize], f: impl FnMut(IxDyn) -> i64) -> IndexArray {
    IndexArray::new(ArrayD::from_shape_fn(IxDyn(shape), f))
}
