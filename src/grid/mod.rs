//! Chunk grids: one [`DimensionGrid`] per storage dimension (pure, no I/O).
//!
//! A grid splits the integer line of one storage dimension into chunks with integer ids
//! (ids may be negative for grids that extend below zero). The planner only needs the
//! per-dimension protocol below; N-D grids are a list of per-dimension grids.
//!
//! Built-in grids: [`RegularGrid`] (one chunk size, optional chunk-aligned negative origin)
//! and [`RectilinearGrid`] (explicit edges stored as run-length pairs, as in the
//! zarr-extensions `rectilinear` grid). Both cost O(1) memory in the number of chunks
//! (rectilinear: O(number of runs)).

mod rectilinear;
mod regular;

use std::fmt;

use thiserror::Error;

pub use rectilinear::RectilinearGrid;
pub use regular::RegularGrid;

/// Why a grid was refused at construction or a lookup failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GridError {
    /// A storage coordinate outside the region the grid covers.
    #[error("storage coordinate {index} is outside the grid region [{lo}, {hi})")]
    OutOfGrid {
        /// The coordinate looked up.
        index: i64,
        /// Inclusive start of the grid region.
        lo: i64,
        /// Exclusive end of the grid region.
        hi: i64,
    },
    /// A chunk id the grid does not have.
    #[error("chunk {chunk} is outside the grid's chunk range [{lo}, {hi})")]
    ChunkOutOfRange {
        /// The chunk id looked up.
        chunk: i64,
        /// First chunk id.
        lo: i64,
        /// One past the last chunk id.
        hi: i64,
    },
    /// Inconsistent construction arguments (zero chunk size, edges shorter than the extent,
    /// an unaligned origin, malformed JSON, ...).
    #[error("invalid grid: {0}")]
    Invalid(String),
    /// A coordinate of the grid leaves `i64`.
    #[error("grid arithmetic overflows i64: {0}")]
    Overflow(String),
}

/// The per-dimension chunk-grid protocol used by the planner.
///
/// Invariants the planner relies on: chunks are consecutive, non-overlapping intervals
/// `[chunk_offset(c), chunk_offset(c) + chunk_size(c))` in increasing id order, and
/// `data_size(c) <= chunk_size(c)` is the valid (clipped) prefix of chunk `c`.
pub trait DimensionGrid: fmt::Debug + Send + Sync {
    /// The chunk containing storage coordinate `index`; [`GridError::OutOfGrid`] outside the
    /// region the grid covers.
    fn index_to_chunk(&self, index: i64) -> Result<i64, GridError>;

    /// The global storage coordinate where chunk `chunk` starts.
    fn chunk_offset(&self, chunk: i64) -> Result<i64, GridError>;

    /// The declared length of chunk `chunk` (the codec buffer length, never clipped).
    fn chunk_size(&self, chunk: i64) -> Result<u64, GridError>;

    /// The valid data length of chunk `chunk`, clipped at the array boundary. Defaults to
    /// [`chunk_size`](Self::chunk_size).
    fn data_size(&self, chunk: i64) -> Result<u64, GridError> {
        self.chunk_size(chunk)
    }

    /// Vectorised [`index_to_chunk`](Self::index_to_chunk): writes the chunk of
    /// `indices[i]` into `out[i]`, failing like the scalar form on the first out-of-grid
    /// coordinate. `out` must have the length of `indices`.
    fn indices_to_chunks(&self, indices: &[i64], out: &mut [i64]) -> Result<(), GridError> {
        for (o, &i) in out.iter_mut().zip(indices) {
            *o = self.index_to_chunk(i)?;
        }
        Ok(())
    }

    /// `(chunk_offset, data_size, chunk_size)` of chunk `chunk` in one call (grids with a
    /// costly lookup override it).
    fn chunk_span(&self, chunk: i64) -> Result<(i64, u64, u64), GridError> {
        Ok((
            self.chunk_offset(chunk)?,
            self.data_size(chunk)?,
            self.chunk_size(chunk)?,
        ))
    }

    /// This grid as a [`RegularGrid`], if it is one (lets the planner use closed forms).
    fn as_regular(&self) -> Option<&RegularGrid> {
        None
    }

    /// The first chunk coordinate past the end of chunk `chunk`'s valid data
    /// (`chunk_offset + data_size`), computed exactly.
    fn data_end(&self, chunk: i64) -> Result<i64, GridError> {
        let start = self.chunk_offset(chunk)?;
        let size = self.data_size(chunk)?;
        i64::try_from(start as i128 + size as i128)
            .map_err(|_| GridError::Overflow(format!("end of chunk {chunk}: {start} + {size}")))
    }
}

/// Checked conversion of an `i128` intermediate to `i64`.
pub(crate) fn to_i64(v: i128, what: impl FnOnce() -> String) -> Result<i64, GridError> {
    i64::try_from(v).map_err(|_| GridError::Overflow(what()))
}
