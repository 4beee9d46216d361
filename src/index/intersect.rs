//! Restricting a transform to the input points whose outputs fall in an output box.
//!
//! Supported API for callers that want one chunk's (or any box's) part of a selection as a
//! transform of its own, with the map back to where its values go in the original request:
//! for example to hand each chunk of a selection to a different worker, or to check which
//! part of a request one stored object serves. The planner does not use it (it plans every
//! chunk at once from factored tables, see `src/plan/`), and its property tests check it
//! against the naive definition (`tests/index_properties.rs`).
//!
//! ```
//! use zarrflow::index::{IndexDomain, IndexTransform};
//! use zarrflow::sel;
//! // the strided selection a[1:20:3] of a 1-D array, restricted to the chunk [8, 16)
//! let t = IndexTransform::from_shape(&[20]).unwrap().index(&sel![1..20;3]).unwrap();
//! let chunk = IndexDomain::new(vec![8], vec![16]).unwrap();
//! let part = t.intersect(&chunk).unwrap().unwrap();
//! // storage coordinates 10 and 13 fall in the chunk ...
//! assert_eq!(part.transform.apply(&[part.transform.domain().origin()[0]]).unwrap(), vec![10]);
//! assert_eq!(part.transform.domain().shape(), vec![2]);
//! // ... and `source` says which input points of the original request they were
//! let first = part.source.apply(&[part.source.domain().origin()[0]]).unwrap();
//! assert_eq!(t.apply(&first).unwrap(), vec![10]);
//! ```

use ndarray::{ArrayD, IxDyn};

use super::domain::IndexDomain;
use super::error::{IndexError, Result};
use super::map::{IndexArray, OutputIndexMap};
use super::transform::{IndexArrayStructure, IndexTransform};

/// The part of a transform that lands in an output box (see [`IndexTransform::intersect`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intersection {
    /// The restricted transform: same outputs, only the surviving input points.
    pub transform: IndexTransform,
    /// Maps each point of the restricted domain to the original input point it came from
    /// (the "out indices": where its values go in the original request).
    pub source: IndexTransform,
}

impl IndexTransform {
    /// Restricts the transform to the input points whose outputs all lie in `bounds`
    /// (an output-space box). Returns `None` when nothing survives (or the domain is empty).
    ///
    /// Affine-only axes are narrowed exactly and keep their literal coordinates; an orthogonal
    /// index-array axis keeps its surviving positions as a fresh zero-origin axis; correlated
    /// index arrays are flattened over their common axes into one axis of surviving points
    /// (first), followed by the narrowed residual axes. An affine map reading an axis that an
    /// index array also varies over is [`IndexError::Unsupported`].
    pub fn intersect(&self, bounds: &IndexDomain) -> Result<Option<Intersection>> {
        if bounds.rank() != self.output_rank() {
            return Err(IndexError::rank_mismatch(
                "the output box's rank",
                self.output_rank(),
                bounds.rank(),
            ));
        }
        if self.domain().is_empty() {
            return Ok(None);
        }
        let rank = self.input_rank();
        // Per input axis, the narrowed interval imposed by affine and constant maps.
        let mut lo: Vec<i64> = self.domain().inclusive_min().to_vec();
        let mut hi: Vec<i64> = self.domain().exclusive_max().to_vec();
        for (o, m) in self.output().iter().enumerate() {
            let (clo, chi) = bounds.interval(o);
            match *m {
                OutputIndexMap::Constant { offset } => {
                    if offset < clo || offset >= chi {
                        return Ok(None);
                    }
                }
                OutputIndexMap::Dimension {
                    input_dimension: k,
                    offset,
                    stride,
                } => {
                    let (nlo, nhi) = narrow(offset, stride, clo, chi);
                    lo[k] = lo[k].max(clamp_i64(nlo));
                    hi[k] = hi[k].min(clamp_i64(nhi));
                    if lo[k] >= hi[k] {
                        return Ok(None);
                    }
                }
                OutputIndexMap::Array { .. } => {}
            }
        }
        let arrays: Vec<(usize, &IndexArray, i64, i64)> = self
            .output()
            .iter()
            .enumerate()
            .filter_map(|(o, m)| match m {
                OutputIndexMap::Array {
                    array,
                    offset,
                    stride,
                } => Some((o, array, *offset, *stride)),
                _ => None,
            })
            .collect();
        let mut block = vec![false; rank];
        for (_, a, _, _) in &arrays {
            for d in a.dependency_axes() {
                block[d] = true;
            }
        }
        for m in self.output() {
            if let OutputIndexMap::Dimension {
                input_dimension, ..
            } = m
                && block[*input_dimension]
            {
                return Err(IndexError::Unsupported(format!(
                    "input dimension {input_dimension} is read by both an affine map and an index array"
                )));
            }
        }
        let inside = |o: usize, a: &IndexArray, off: i64, st: i64, pos: &[usize]| {
            let v = off as i128 + st as i128 * a.get_broadcast(pos) as i128;
            let (clo, chi) = bounds.interval(o);
            v >= clo as i128 && v < chi as i128
        };
        let origin = self.domain().origin();
        let structure = self.index_array_structure();
        let source = if structure != IndexArrayStructure::General {
            // Orthogonal: each array axis is filtered on its own.
            let mut new_lo = Vec::with_capacity(rank);
            let mut new_hi = Vec::with_capacity(rank);
            let mut maps = Vec::with_capacity(rank);
            for d in 0..rank {
                if let Some((o, a, off, st)) = arrays
                    .iter()
                    .find(|(_, a, _, _)| a.dependency_axes() == [d])
                {
                    let mut pos = vec![0usize; rank];
                    let kept: Vec<i64> = (0..self.domain().extent(d) as usize)
                        .filter(|&p| {
                            pos[d] = p;
                            inside(*o, a, *off, *st, &pos)
                        })
                        .map(|p| origin[d] + p as i64)
                        .collect();
                    if kept.is_empty() {
                        return Ok(None);
                    }
                    let mut shape = vec![1usize; rank];
                    shape[d] = kept.len();
                    new_lo.push(0);
                    new_hi.push(kept.len() as i64);
                    let arr = ArrayD::from_shape_vec(IxDyn(&shape), kept)
                        .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
                    maps.push(OutputIndexMap::array_or_constant(
                        IndexArray::new(arr),
                        0,
                        1,
                    )?);
                } else {
                    new_lo.push(lo[d]);
                    new_hi.push(hi[d]);
                    maps.push(OutputIndexMap::dimension(d, 0, 1));
                }
            }
            // Singleton (all-size-1) arrays: a constant check.
            for (o, a, off, st) in &arrays {
                if a.dependency_axes().is_empty() && !inside(*o, a, *off, *st, &vec![0; rank]) {
                    return Ok(None);
                }
            }
            IndexTransform::new(IndexDomain::new(new_lo, new_hi)?, maps)?
        } else {
            // General: flatten the block axes, keep points whose every array output is inside.
            let block_axes: Vec<usize> = (0..rank).filter(|&d| block[d]).collect();
            let block_shape: Vec<usize> = block_axes
                .iter()
                .map(|&d| self.domain().extent(d) as usize)
                .collect();
            let mut survivors: Vec<Vec<i64>> = vec![Vec::new(); block_axes.len()];
            let mut pos = vec![0usize; rank];
            for flat in 0..block_shape.iter().product::<usize>() {
                let mut rem = flat;
                for (j, &d) in block_axes.iter().enumerate().rev() {
                    pos[d] = rem % block_shape[j];
                    rem /= block_shape[j];
                }
                if arrays
                    .iter()
                    .all(|(o, a, off, st)| inside(*o, a, *off, *st, &pos))
                {
                    for (j, &d) in block_axes.iter().enumerate() {
                        survivors[j].push(origin[d] + pos[d] as i64);
                    }
                }
            }
            let n = survivors.first().map_or(0, Vec::len);
            if n == 0 {
                return Ok(None);
            }
            let residual: Vec<usize> = (0..rank).filter(|&d| !block[d]).collect();
            let mut new_lo = vec![0i64];
            let mut new_hi = vec![n as i64];
            for &d in &residual {
                new_lo.push(lo[d]);
                new_hi.push(hi[d]);
            }
            let new_rank = new_lo.len();
            let mut shape = vec![1usize; new_rank];
            shape[0] = n;
            let mut maps = Vec::with_capacity(rank);
            let mut survivors = survivors.into_iter();
            for (d, &in_block) in block.iter().enumerate() {
                if in_block {
                    let values = survivors.next().unwrap_or_default();
                    let arr = ArrayD::from_shape_vec(IxDyn(&shape), values)
                        .map_err(|e| IndexError::InvalidArgument(e.to_string()))?;
                    maps.push(OutputIndexMap::array_or_constant(
                        IndexArray::new(arr),
                        0,
                        1,
                    )?);
                } else {
                    let j = 1 + residual.iter().position(|&r| r == d).unwrap_or(0);
                    maps.push(OutputIndexMap::dimension(j, 0, 1));
                }
            }
            IndexTransform::new(IndexDomain::new(new_lo, new_hi)?, maps)?
        };
        let transform = source.compose(self)?;
        Ok(Some(Intersection { transform, source }))
    }
}

/// The input interval `[lo, hi)` of `x` with `offset + stride * x` in `[clo, chi)`.
fn narrow(offset: i64, stride: i64, clo: i64, chi: i64) -> (i128, i128) {
    let (off, s, clo, chi) = (offset as i128, stride as i128, clo as i128, chi as i128);
    if s == 0 {
        return if off >= clo && off < chi {
            (i128::MIN, i128::MAX)
        } else {
            (0, 0)
        };
    }
    if s > 0 {
        (ceil_div(clo - off, s), ceil_div(chi - off, s))
    } else {
        (floor_div(chi - off, s) + 1, floor_div(clo - off, s) + 1)
    }
}

fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -floor_div(-a, b)
}

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}
