//! The regular grid: one chunk size per dimension.

use super::{DimensionGrid, GridError, to_i64};

/// A regular grid: chunk `c` starts at `origin + c * size`; the grid covers the region
/// `[lo, hi)`, whose start is chunk-aligned. The usual Zarr grid is
/// [`RegularGrid::new(size, extent)`](RegularGrid::new) (origin 0, region `[0, extent)`);
/// [`RegularGrid::with_region`] gives negative chunk ids when `lo < origin`.
///
/// - `index_to_chunk(i) = floor((i - origin) / size)`, checked to `[lo, hi)`;
/// - `chunk_offset(c) = origin + c * size` (unchecked against the region, extrapolates);
/// - `chunk_size(c) = size`; `data_size(c) = clamp(hi - chunk_offset(c), 0, size)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegularGrid {
    size: u64,
    origin: i64,
    lo: i64,
    hi: i64,
}

impl RegularGrid {
    /// Chunks of `size` over `[0, extent)`; `size = 0` is accepted only with `extent = 0`.
    pub fn new(size: u64, extent: u64) -> Result<Self, GridError> {
        let hi = i64::try_from(extent)
            .map_err(|_| GridError::Invalid(format!("extent {extent} exceeds i64")))?;
        Self::with_region(size, 0, 0, hi)
    }

    /// Chunks of `size` whose chunk 0 starts at `origin`, covering `[lo, hi)`; `lo` must be a
    /// chunk boundary (`lo ≡ origin mod size`) so that every chunk's valid data starts at its
    /// offset.
    pub fn with_region(size: u64, origin: i64, lo: i64, hi: i64) -> Result<Self, GridError> {
        if lo > hi {
            return Err(GridError::Invalid(format!(
                "region [{lo}, {hi}) runs backwards"
            )));
        }
        if size == 0 {
            if lo != hi {
                return Err(GridError::Invalid(format!(
                    "chunk size 0 over the non-empty region [{lo}, {hi})"
                )));
            }
        } else if (lo as i128 - origin as i128).rem_euclid(size as i128) != 0 {
            return Err(GridError::Invalid(format!(
                "region start {lo} is not a chunk boundary of size {size} from origin {origin}"
            )));
        }
        if size > i64::MAX as u64 {
            return Err(GridError::Invalid(format!("chunk size {size} exceeds i64")));
        }
        Ok(RegularGrid {
            size,
            origin,
            lo,
            hi,
        })
    }

    /// The chunk size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The start of chunk 0.
    pub fn origin(&self) -> i64 {
        self.origin
    }

    /// The region `[lo, hi)` the grid covers.
    pub fn region(&self) -> (i64, i64) {
        (self.lo, self.hi)
    }

    /// The number of chunks covering the region.
    pub fn num_chunks(&self) -> u64 {
        if self.size == 0 {
            return 0;
        }
        ((self.hi as i128 - self.lo as i128) as u128).div_ceil(self.size as u128) as u64
    }

    fn out_of_grid(&self, index: i64) -> GridError {
        GridError::OutOfGrid {
            index,
            lo: self.lo,
            hi: self.hi,
        }
    }
}

impl DimensionGrid for RegularGrid {
    fn as_regular(&self) -> Option<&RegularGrid> {
        Some(self)
    }

    fn index_to_chunk(&self, index: i64) -> Result<i64, GridError> {
        if index < self.lo || index >= self.hi {
            return Err(self.out_of_grid(index));
        }
        // size > 0 here since the region is non-empty.
        Ok((index as i128 - self.origin as i128).div_euclid(self.size as i128) as i64)
    }

    #[inline]
    fn chunk_offset(&self, chunk: i64) -> Result<i64, GridError> {
        to_i64(
            self.origin as i128 + chunk as i128 * self.size as i128,
            || format!("offset of chunk {chunk} (size {})", self.size),
        )
    }

    fn chunk_size(&self, _chunk: i64) -> Result<u64, GridError> {
        Ok(self.size)
    }

    #[inline]
    fn data_size(&self, chunk: i64) -> Result<u64, GridError> {
        let start = self.origin as i128 + chunk as i128 * self.size as i128;
        Ok((self.hi as i128 - start).clamp(0, self.size as i128) as u64)
    }

    #[inline]
    fn chunk_span(&self, chunk: i64) -> Result<(i64, u64, u64), GridError> {
        Ok((self.chunk_offset(chunk)?, self.data_size(chunk)?, self.size))
    }

    fn indices_to_chunks(&self, indices: &[i64], out: &mut [i64]) -> Result<(), GridError> {
        let (lo, hi) = (self.lo, self.hi);
        let bad = indices.iter().fold(false, |b, &i| b | (i < lo) | (i >= hi));
        if bad && let Some(&i) = indices.iter().find(|&&i| i < lo || i >= hi) {
            return Err(self.out_of_grid(i));
        }
        if indices.is_empty() {
            return Ok(());
        }
        let size = self.size;
        // Fast paths: everything fits an unsigned offset from the origin (or from lo).
        let base = self.lo.min(self.origin);
        let span = self.hi as i128 - base as i128;
        let shift = (self.origin as i128 - base as i128) as u64 / size.max(1);
        if span <= u32::MAX as i128 && size <= u32::MAX as u64 {
            let s = size as u32;
            for (o, &i) in out.iter_mut().zip(indices) {
                let rel = (i as i128 - base as i128) as u32;
                *o = (rel / s) as i64 - shift as i64;
            }
        } else if span <= u64::MAX as i128 {
            for (o, &i) in out.iter_mut().zip(indices) {
                let rel = (i as i128 - base as i128) as u64;
                *o = (rel / size) as i64 - shift as i64;
            }
        } else {
            for (o, &i) in out.iter_mut().zip(indices) {
                *o = self.index_to_chunk(i)?;
            }
        }
        Ok(())
    }
}
