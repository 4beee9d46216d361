//! Applying a [`Selection`] to a transform in the literal (TensorStore) dialect.
//!
//! Every selection is turned into a *selection transform* from the new domain to the current
//! domain, which is then composed with the current transform. The same mechanism serves
//! basic indexing, `oindex` and `vindex`, and fancy indexing of a transform that already has
//! index arrays (fancy on fancy).

use ndarray::{ArrayD, IxDyn};

use super::domain::IndexDomain;
use super::error::{Bounds, Coordinates, IndexError, Result};
use super::map::{IndexArray, OutputIndexMap};
use super::positional::to_literal;
use super::selection::{Dialect, Selection, SelectionItem, SelectionMode, Slice, StepRange};
use super::transform::IndexTransform;

impl IndexTransform {
    /// Basic indexing with literal coordinates (TensorStore `t[...]`): integers, slices,
    /// `...` and new axes. Index arrays are refused (use [`oindex`](Self::oindex) or
    /// [`vindex`](Self::vindex)).
    pub fn index(&self, selection: &Selection) -> Result<IndexTransform> {
        self.select(selection, SelectionMode::Basic, Dialect::Literal)
    }

    /// Outer indexing with literal coordinates: each 1-D array or mask selects along its
    /// own dimension; the result is the outer product. Integers drop their dimension.
    pub fn oindex(&self, selection: &Selection) -> Result<IndexTransform> {
        self.select(selection, SelectionMode::Outer, Dialect::Literal)
    }

    /// Vectorized indexing with literal coordinates: arrays (and integers) are broadcast
    /// together, NumPy placement rule (adjacent arrays keep their place, arrays separated by
    /// a slice, `...` or new axis put the broadcast dimensions first).
    pub fn vindex(&self, selection: &Selection) -> Result<IndexTransform> {
        self.select(selection, SelectionMode::Vectorized, Dialect::Literal)
    }

    /// Applies a selection in the given mode and dialect.
    pub fn select(
        &self,
        selection: &Selection,
        mode: SelectionMode,
        dialect: Dialect,
    ) -> Result<IndexTransform> {
        let rank = self.domain().rank();
        // A positional selection is converted into a new literal one, whose arrays then
        // move into the transform instead of being copied again.
        let items = match dialect {
            Dialect::Literal => selection.expanded(rank)?,
            Dialect::Positional => to_literal(selection, self.domain())?.into_expanded(rank)?,
        };
        selection_transform(self.domain(), items, mode)?.compose(self)
    }
}

/// The map of one current (intermediate) dimension, before the new domain's rank is known.
enum Pending {
    Map(OutputIndexMap),
    /// An outer-indexing array on new axis `axis`.
    Outer {
        axis: usize,
        values: Vec<i64>,
    },
    /// A vectorized array: compact shape right-aligned to the broadcast dimensions.
    Vector(ArrayD<i64>),
}

/// The transform from the domain a literal selection creates to `domain`.
///
/// `items` is the selection expanded to the domain's rank ([`Selection::expanded`]).
pub(crate) fn selection_transform(
    domain: &IndexDomain,
    items: Vec<SelectionItem>,
    mode: SelectionMode,
) -> Result<IndexTransform> {
    if mode == SelectionMode::Basic
        && let Some(item) = items.iter().find(|i| i.is_array())
    {
        let what = if matches!(item, SelectionItem::Mask(_)) {
            "a boolean mask"
        } else {
            "an index array"
        };
        return Err(IndexError::InvalidSelection(format!(
            "{what} is not allowed in basic indexing; use oindex (outer) or vindex (vectorized)"
        )));
    }
    let mut items = items;
    let mut vector = VectorPart::new(domain, &mut items, mode)?;
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    let mut pending: Vec<Pending> = Vec::with_capacity(domain.rank());
    let mut vector_axis = None;
    let mut dim = 0usize;
    for (pos, item) in items.iter_mut().enumerate() {
        if let Some(v) = &vector
            && pos == v.insert_at_item
        {
            vector_axis = Some(lo.len());
            for &n in &v.shape {
                lo.push(0);
                hi.push(to_i64(n as u64)?);
            }
        }
        match item {
            SelectionItem::Ellipsis => {}
            SelectionItem::NewAxis => {
                lo.push(0);
                hi.push(1);
            }
            SelectionItem::Slice(_) | SelectionItem::Range(_) => {
                let s = match item {
                    SelectionItem::Range(r) => {
                        range_as_literal_slice(r, domain.interval(dim), dim)?
                    }
                    SelectionItem::Slice(s) => *s,
                    _ => Slice::full(),
                };
                let (l, h, offset, stride) = literal_slice(&s, domain.interval(dim), dim)?;
                pending.push(Pending::Map(OutputIndexMap::dimension(
                    lo.len(),
                    offset,
                    stride,
                )));
                lo.push(l);
                hi.push(h);
                dim += 1;
            }
            _ if mode == SelectionMode::Vectorized => {
                let v = vector.as_mut().ok_or_else(|| {
                    IndexError::InvalidSelection("internal: missing vectorized part".into())
                })?;
                for a in v.take_arrays_for_item(pos) {
                    pending.push(Pending::Vector(a));
                    dim += 1;
                }
            }
            SelectionItem::Index(i) => {
                check_coordinate(*i, domain.interval(dim), dim)?;
                pending.push(Pending::Map(OutputIndexMap::constant(*i)));
                dim += 1;
            }
            SelectionItem::Array(a) if a.ndim() == 0 => {
                let i = a.iter().copied().next().unwrap_or(0);
                check_coordinate(i, domain.interval(dim), dim)?;
                pending.push(Pending::Map(OutputIndexMap::constant(i)));
                dim += 1;
            }
            SelectionItem::Array(a) => {
                if a.ndim() != 1 {
                    return Err(IndexError::InvalidSelection(format!(
                        "outer indexing takes 1-D index arrays, got a {}-D array for dimension {dim}",
                        a.ndim()
                    )));
                }
                check_array(a, domain.interval(dim), dim)?;
                let len = a.len();
                let values = into_values(std::mem::take(a));
                pending.push(Pending::Outer {
                    axis: lo.len(),
                    values,
                });
                lo.push(0);
                hi.push(to_i64(len as u64)?);
                dim += 1;
            }
            SelectionItem::Mask(m) => {
                if m.ndim() != 1 {
                    return Err(IndexError::InvalidSelection(format!(
                        "outer indexing takes 1-D masks, got a {}-D mask at dimension {dim}",
                        m.ndim()
                    )));
                }
                let mut coords = mask_coordinates(m, domain, dim)?;
                let values = coords.pop().unwrap_or_default();
                pending.push(Pending::Outer {
                    axis: lo.len(),
                    values: values.clone(),
                });
                lo.push(0);
                hi.push(to_i64(values.len() as u64)?);
                dim += 1;
            }
        }
    }
    let new_domain = IndexDomain::new(lo, hi)?;
    let rank = new_domain.rank();
    let output = pending
        .into_iter()
        .map(|p| match p {
            Pending::Map(m) => Ok(m),
            Pending::Outer { axis, values } => {
                let mut shape = vec![1usize; rank];
                shape[axis] = values.len();
                let a = ArrayD::from_shape_vec(IxDyn(&shape), values)
                    .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
                OutputIndexMap::array_or_constant(IndexArray::new(a), 0, 1)
            }
            Pending::Vector(a) => {
                let at = vector_axis.unwrap_or(0);
                let mut shape = vec![1usize; rank];
                shape[at..at + a.ndim()].copy_from_slice(a.shape());
                let a = a
                    .into_shape_with_order(IxDyn(&shape))
                    .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
                OutputIndexMap::array_or_constant(IndexArray::new(a), 0, 1)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    IndexTransform::new(new_domain, output)
}

/// The broadcast arrays of a vectorized selection and where their dimensions go.
struct VectorPart {
    /// The broadcast shape.
    shape: Vec<usize>,
    /// Position in the expanded item list before which the broadcast dimensions go.
    insert_at_item: usize,
    /// Per item position, the arrays it contributes (one per dimension it consumes),
    /// each reshaped to the broadcast rank (size-1 axes kept, not expanded).
    arrays: Vec<(usize, Vec<ArrayD<i64>>)>,
}

impl VectorPart {
    /// Takes the index arrays out of `items` (left empty: the caller places them through
    /// [`VectorPart::take_arrays_for_item`]).
    fn new(
        domain: &IndexDomain,
        items: &mut [SelectionItem],
        mode: SelectionMode,
    ) -> Result<Option<VectorPart>> {
        if mode != SelectionMode::Vectorized {
            return Ok(None);
        }
        let mut arrays = Vec::new();
        let mut dim = 0usize;
        for (pos, item) in items.iter_mut().enumerate() {
            let mut per_item = Vec::new();
            match item {
                SelectionItem::Ellipsis | SelectionItem::NewAxis => continue,
                SelectionItem::Slice(_) | SelectionItem::Range(_) => {
                    dim += 1;
                    continue;
                }
                SelectionItem::Index(i) => {
                    check_coordinate(*i, domain.interval(dim), dim)?;
                    per_item.push(ArrayD::from_elem(IxDyn(&[]), *i));
                    dim += 1;
                }
                SelectionItem::Array(a) => {
                    check_array(a, domain.interval(dim), dim)?;
                    per_item.push(std::mem::take(a));
                    dim += 1;
                }
                SelectionItem::Mask(m) => {
                    for c in mask_coordinates(m, domain, dim)? {
                        per_item.push(ndarray::Array1::from(c).into_dyn());
                    }
                    dim += m.ndim();
                }
            }
            arrays.push((pos, per_item));
        }
        if arrays.is_empty() {
            return Ok(None);
        }
        let shape = broadcast_shapes(arrays.iter().flat_map(|(_, v)| v.iter().map(|a| a.shape())))?;
        let positions: Vec<usize> = arrays.iter().map(|(p, _)| *p).collect();
        let adjacent = positions.windows(2).all(|w| w[1] == w[0] + 1);
        let insert_at_item = if adjacent { positions[0] } else { 0 };
        let b = shape.len();
        for (_, per_item) in &mut arrays {
            for a in per_item.iter_mut() {
                let mut padded = vec![1usize; b - a.ndim()];
                padded.extend_from_slice(a.shape());
                let taken = std::mem::take(a);
                // an array not in C order (strided, reversed, transposed) is copied into
                // C order, which reshaping needs
                let standard = if taken.is_standard_layout() {
                    taken
                } else {
                    taken.as_standard_layout().into_owned()
                };
                *a = standard
                    .into_shape_with_order(IxDyn(&padded))
                    .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
            }
        }
        Ok(Some(VectorPart {
            shape,
            insert_at_item,
            arrays,
        }))
    }

    /// The arrays of item `pos`, moved out.
    fn take_arrays_for_item(&mut self, pos: usize) -> Vec<ArrayD<i64>> {
        self.arrays
            .iter_mut()
            .find(|(p, _)| *p == pos)
            .map(|(_, v)| std::mem::take(v))
            .unwrap_or_default()
    }
}

/// NumPy broadcasting of shapes (right-aligned; size-1 axes stretch).
pub(crate) fn broadcast_shapes<'a>(
    shapes: impl Iterator<Item = &'a [usize]>,
) -> Result<Vec<usize>> {
    let shapes: Vec<&[usize]> = shapes.collect();
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in &shapes {
        for (i, &n) in s.iter().enumerate() {
            let j = rank - s.len() + i;
            if out[j] == 1 {
                out[j] = n;
            } else if n != 1 && n != out[j] {
                return Err(IndexError::InvalidArgument(format!(
                    "index arrays of shapes {:?} cannot be broadcast together",
                    shapes
                )));
            }
        }
    }
    Ok(out)
}

/// The literal coordinates (`origin + nonzero`) a mask selects, one vector per dimension.
fn mask_coordinates(m: &ArrayD<bool>, domain: &IndexDomain, dim: usize) -> Result<Vec<Vec<i64>>> {
    if m.ndim() == 0 {
        return Err(IndexError::InvalidType(
            "a boolean scalar is not an index; use a mask array".into(),
        ));
    }
    let expected: Vec<u64> = (dim..dim + m.ndim()).map(|d| domain.extent(d)).collect();
    let actual: Vec<u64> = m.shape().iter().map(|&n| n as u64).collect();
    if expected != actual {
        return Err(IndexError::InvalidSelection(format!(
            "a mask of shape {actual:?} does not match the extents {expected:?} of dimensions {dim}..{}",
            dim + m.ndim()
        )));
    }
    let mut coords = vec![Vec::new(); m.ndim()];
    for (idx, &b) in m.indexed_iter() {
        if b {
            for (k, c) in coords.iter_mut().enumerate() {
                c.push(domain.origin()[dim + k] + idx[k] as i64);
            }
        }
    }
    Ok(coords)
}

/// The values of `a` in logical (C) order: its own buffer when that holds exactly them in
/// that order, else a copy (a slice of a larger buffer does not keep the rest alive).
fn into_values(a: ArrayD<i64>) -> Vec<i64> {
    if a.as_slice().is_none() {
        return a.iter().copied().collect();
    }
    let len = a.len();
    let (values, offset) = a.into_raw_vec_and_offset();
    let offset = offset.unwrap_or(0);
    if offset == 0 && values.len() == len {
        values
    } else {
        values[offset..offset + len].to_vec()
    }
}

/// [`check_coordinate`] of every value of an array of any layout: one vectorised pass over
/// its memory when it is contiguous; the error names the first value out of bounds in C
/// order.
fn check_array(a: &ArrayD<i64>, bounds: (i64, i64), dim: usize) -> Result<()> {
    if let Some(values) = a.as_slice_memory_order()
        && super::bulk::all_within(values, bounds.0, bounds.1)
    {
        return Ok(());
    }
    a.iter().try_for_each(|&v| check_coordinate(v, bounds, dim))
}

fn check_coordinate(i: i64, (lo, hi): (i64, i64), dim: usize) -> Result<()> {
    if i < lo || i >= hi {
        return Err(IndexError::out_of_bounds(
            "index",
            Some(dim),
            Coordinates::Index(i),
            Bounds::Interval {
                inclusive_min: lo,
                exclusive_max: hi,
            },
        ));
    }
    Ok(())
}

fn to_i64(n: u64) -> Result<i64> {
    i64::try_from(n).map_err(|_| IndexError::Overflow(format!("extent {n} exceeds i64")))
}

/// A literal [`StepRange`] as the equivalent literal NumPy slice.
fn range_as_literal_slice(r: &StepRange, (lo, hi): (i64, i64), dim: usize) -> Result<Slice> {
    if r.step > 0 {
        return Ok(Slice {
            start: r.start,
            stop: r.end,
            step: Some(r.step),
        });
    }
    let minus_one = |v: i64| {
        v.checked_sub(1)
            .ok_or_else(|| IndexError::Overflow(format!("range bound {v} - 1 in dimension {dim}")))
    };
    let start = r.end.unwrap_or(hi);
    let end = r.start.unwrap_or(lo);
    Ok(Slice::new(minus_one(start)?, minus_one(end)?, r.step))
}

/// Applies a literal slice to the interval `[lo, hi)` of dimension `dim`.
///
/// Returns the new interval and the `(offset, stride)` of the map from the new coordinate to
/// the old one. Rules: defaults by step sign; a wrong-way interval is an error; an empty one is
/// legal anywhere; a non-empty one must lie inside `[lo, hi)`; the new origin is
/// `trunc(start / step)`.
pub(crate) fn literal_slice(
    s: &Slice,
    (lo, hi): (i64, i64),
    dim: usize,
) -> Result<(i64, i64, i64, i64)> {
    let step = s.step.unwrap_or(1);
    if step == 0 {
        return Err(IndexError::InvalidSelection(format!(
            "slice step 0 in dimension {dim}"
        )));
    }
    let (start, stop) = if step > 0 {
        (s.start.unwrap_or(lo) as i128, s.stop.unwrap_or(hi) as i128)
    } else {
        (
            s.start.map_or(hi as i128 - 1, |v| v as i128),
            s.stop.map_or(lo as i128 - 1, |v| v as i128),
        )
    };
    let step = step as i128;
    let len = if step > 0 { stop - start } else { start - stop };
    if len < 0 {
        return Err(IndexError::InvalidSelection(format!(
            "slice {}:{}:{step} runs the wrong way in dimension {dim} (an empty slice is written stop == start)",
            start, stop
        )));
    }
    if len > 0 {
        let (first, last) = if step > 0 {
            (start, stop - 1)
        } else {
            (stop + 1, start)
        };
        if first < lo as i128 || last >= hi as i128 {
            let clamp =
                |v: i128| i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX });
            return Err(IndexError::out_of_bounds(
                format!("slice {start}:{stop}:{step}, covering"),
                Some(dim),
                Coordinates::Interval {
                    first: clamp(first),
                    last: clamp(last),
                },
                Bounds::Interval {
                    inclusive_min: lo,
                    exclusive_max: hi,
                },
            ));
        }
    }
    let size = (len + step.abs() - 1) / step.abs();
    let origin = start / step; // Rust division truncates toward zero.
    let offset = start - step * origin;
    let fit = |v: i128| {
        i64::try_from(v).map_err(|_| {
            IndexError::Overflow(format!("slice bounds in dimension {dim} exceed i64"))
        })
    };
    Ok((fit(origin)?, fit(origin + size)?, fit(offset)?, fit(step)?))
}
