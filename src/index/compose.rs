//! Composition of transforms: `outer.compose(inner)` maps user → intermediate → output.

use super::arith::{affine_checked, mul};
use super::error::{Bounds, Coordinates, IndexError, Result};
use super::map::OutputIndexMap;
use super::transform::{IndexTransform, array_from_fn};

impl IndexTransform {
    /// Chains two transforms: `self` maps the user domain to an intermediate space and
    /// `inner` maps that space to the output. The result has `self`'s domain and `inner`'s
    /// output rank.
    ///
    /// Every coordinate the (non-empty) outer domain produces must lie in `inner`'s domain,
    /// proven per map from exact ranges; otherwise [`IndexError::OutOfBounds`]. An empty
    /// outer domain is accepted vacuously. Data is copied only when both maps are arrays.
    pub fn compose(&self, inner: &IndexTransform) -> Result<IndexTransform> {
        if self.output_rank() != inner.input_rank() {
            return Err(IndexError::rank_mismatch(
                format!(
                    "composing output rank {} with input rank {}",
                    self.output_rank(),
                    inner.input_rank()
                ),
                self.output_rank(),
                inner.input_rank(),
            ));
        }
        let inner_domain = inner.domain();
        if !self.domain().is_empty() {
            for d in 0..self.output_rank() {
                if let Some((lo, hi)) = self.output_range(d)? {
                    let (ilo, ihi) = inner_domain.interval(d);
                    if lo < ilo || hi >= ihi {
                        return Err(IndexError::out_of_bounds(
                            "intermediate coordinates",
                            Some(d),
                            Coordinates::Interval {
                                first: lo,
                                last: hi,
                            },
                            Bounds::Interval {
                                inclusive_min: ilo,
                                exclusive_max: ihi,
                            },
                        ));
                    }
                }
            }
        }
        let output = inner
            .output()
            .iter()
            .enumerate()
            .map(|(o, m)| self.substitute(o, m, inner))
            .collect::<Result<Vec<_>>>()?;
        IndexTransform::new(self.domain().clone(), output)
    }

    /// The inner map `m` (output dimension `o` of `inner`) expressed over `self`'s domain.
    fn substitute(
        &self,
        o: usize,
        m: &OutputIndexMap,
        inner: &IndexTransform,
    ) -> Result<OutputIndexMap> {
        let what = || format!("composing output dimension {o}");
        match m {
            OutputIndexMap::Constant { .. } => Ok(m.clone()),
            OutputIndexMap::Dimension {
                input_dimension,
                offset,
                stride,
            } => match &self.output()[*input_dimension] {
                OutputIndexMap::Constant { offset: c } => Ok(OutputIndexMap::constant(
                    affine_checked(*offset, *stride, *c, &what)?,
                )),
                OutputIndexMap::Dimension {
                    input_dimension: k,
                    offset: oo,
                    stride: so,
                } => Ok(OutputIndexMap::dimension(
                    *k,
                    affine_checked(*offset, *stride, *oo, &what)?,
                    mul(*stride, *so, &what)?,
                )),
                OutputIndexMap::Array {
                    array,
                    offset: oo,
                    stride: so,
                } => Ok(OutputIndexMap::Array {
                    array: array.clone(),
                    offset: affine_checked(*offset, *stride, *oo, &what)?,
                    stride: mul(*stride, *so, &what)?,
                }),
            },
            OutputIndexMap::Array {
                array: b,
                offset,
                stride,
            } => self.gather_array(b, *offset, *stride, inner),
        }
    }

    /// Evaluates an inner index array at the coordinates this (outer) transform produces.
    fn gather_array(
        &self,
        b: &super::map::IndexArray,
        offset: i64,
        stride: i64,
        inner: &IndexTransform,
    ) -> Result<OutputIndexMap> {
        let domain = self.domain();
        let rank = domain.rank();
        if domain.is_empty() {
            let shape: Vec<usize> = (0..rank)
                .map(|d| usize::from(domain.extent(d) != 0))
                .collect();
            return Ok(OutputIndexMap::Array {
                array: array_from_fn(&shape, |_| 0),
                offset,
                stride,
            });
        }
        let varying: Vec<usize> = b.dependency_axes();
        // The outer input axes the gathered array varies over.
        let mut axes = vec![false; rank];
        for &d in &varying {
            for a in self.output()[d].input_axes() {
                axes[a] = true;
            }
        }
        let shape: Vec<usize> = (0..rank)
            .map(|a| {
                if axes[a] {
                    domain.extent(a) as usize
                } else {
                    1
                }
            })
            .collect();
        let origin = domain.origin();
        let inner_origin = inner.domain().origin();
        let outer_maps = self.output();
        // The containment check in `compose` proved every position below lies in the array.
        let gathered = array_from_fn(&shape, |q| {
            let mut pos = vec![0usize; b.shape().len()];
            for &d in &varying {
                let coord: i128 = match &outer_maps[d] {
                    OutputIndexMap::Constant { offset } => *offset as i128,
                    OutputIndexMap::Dimension {
                        input_dimension,
                        offset,
                        stride,
                    } => {
                        let x = origin[*input_dimension] as i128 + q[*input_dimension] as i128;
                        *offset as i128 + *stride as i128 * x
                    }
                    OutputIndexMap::Array {
                        array,
                        offset,
                        stride,
                    } => {
                        let qv: Vec<usize> = (0..rank).map(|a| q[a]).collect();
                        *offset as i128 + *stride as i128 * array.get_broadcast(&qv) as i128
                    }
                };
                pos[d] = (coord - inner_origin[d] as i128) as usize;
            }
            b.get_broadcast(&pos)
        });
        OutputIndexMap::array_or_constant(gathered, offset, stride)
    }
}
