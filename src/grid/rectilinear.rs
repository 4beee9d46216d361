//! The rectilinear grid: explicit chunk edges, stored as run-length pairs.

use serde_json::Value;

use super::{DimensionGrid, GridError};
use crate::index::json::excerpt;

/// One run of `count` chunks of `size`, starting at chunk id `first_chunk` and coordinate
/// `first_offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Run {
    size: u64,
    count: u64,
    first_chunk: u64,
    first_offset: u64,
}

/// A rectilinear grid over `[0, extent)`: chunk `c` has an explicit edge length; the edges
/// are kept as run-length pairs `(size, count)` (zarr-extensions `rectilinear`, where
/// `[[4, 2]]` means `[4, 4]`), so memory is O(number of runs), not O(number of chunks).
///
/// Every edge is ≥ 1 and the edges sum to at least the extent (trailing edges may lie past
/// it). `index_to_chunk` is a binary search over the runs; `data_size` is clipped at the
/// extent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RectilinearGrid {
    runs: Vec<Run>,
    extent: u64,
    num_edges: u64,
}

impl RectilinearGrid {
    /// A grid from explicit edges.
    pub fn new(edges: &[u64], extent: u64) -> Result<Self, GridError> {
        let pairs: Vec<(u64, u64)> = edges.iter().map(|&e| (e, 1)).collect();
        Self::from_run_lengths(&pairs, extent)
    }

    /// A grid from run-length pairs `(size, count)` (`count` copies of `size`); a pair with
    /// count 0 is ignored.
    pub fn from_run_lengths(pairs: &[(u64, u64)], extent: u64) -> Result<Self, GridError> {
        if extent > i64::MAX as u64 {
            return Err(GridError::Invalid(format!("extent {extent} exceeds i64")));
        }
        let mut runs: Vec<Run> = Vec::new();
        let (mut chunk, mut offset) = (0u128, 0u128);
        for (i, &(size, count)) in pairs.iter().enumerate() {
            if count == 0 {
                continue;
            }
            if size == 0 {
                return Err(GridError::Invalid(format!("edge {i} has length 0")));
            }
            if offset >= extent as u128 {
                // Trailing edges past the extent are allowed; they are never addressed.
                chunk += count as u128;
                continue;
            }
            match runs.last_mut() {
                Some(r) if r.size == size => r.count = r.count.saturating_add(count),
                _ => runs.push(Run {
                    size,
                    count,
                    first_chunk: chunk as u64,
                    first_offset: offset as u64,
                }),
            }
            chunk += count as u128;
            offset += size as u128 * count as u128;
        }
        if offset < extent as u128 {
            return Err(GridError::Invalid(format!(
                "edges sum to {offset}, less than the extent {extent}"
            )));
        }
        let num_edges = u64::try_from(chunk)
            .map_err(|_| GridError::Invalid("more than 2^64 chunks".to_string()))?;
        Ok(RectilinearGrid {
            runs,
            extent,
            num_edges,
        })
    }

    /// A grid from the zarr-extensions JSON form of one dimension: a bare integer `m`
    /// (repeated until the extent is covered) or an array of edges and `[size, count]`
    /// pairs, e.g. `[[1, 3], 3]` ≡ `[1, 1, 1, 3]`.
    pub fn from_json(spec: &Value, extent: u64) -> Result<Self, GridError> {
        let as_u64 = |v: &Value| {
            v.as_u64().ok_or_else(|| {
                GridError::Invalid(format!(
                    "expected a non-negative integer, got {}",
                    excerpt(v)
                ))
            })
        };
        match spec {
            Value::Number(_) => {
                let m = as_u64(spec)?;
                if m == 0 {
                    return Err(GridError::Invalid("edge length 0".to_string()));
                }
                Self::from_run_lengths(&[(m, extent.div_ceil(m).max(1))], extent)
            }
            Value::Array(items) => {
                let mut pairs = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::Array(p) if p.len() == 2 => {
                            pairs.push((as_u64(&p[0])?, as_u64(&p[1])?))
                        }
                        Value::Number(_) => pairs.push((as_u64(item)?, 1)),
                        other => {
                            return Err(GridError::Invalid(format!(
                                "expected an edge or a [size, count] pair, got {}",
                                excerpt(other)
                            )));
                        }
                    }
                }
                Self::from_run_lengths(&pairs, extent)
            }
            other => Err(GridError::Invalid(format!(
                "expected an integer or an array of edges, got {}",
                excerpt(other)
            ))),
        }
    }

    /// The extent covered.
    pub fn extent(&self) -> u64 {
        self.extent
    }

    /// Number of chunks that hold data (`bisect_left(cumulative, extent) + 1` for a
    /// non-empty extent).
    pub fn num_chunks(&self) -> u64 {
        match self.runs.last() {
            None => 0,
            Some(r) => {
                let inside = (self.extent - r.first_offset).div_ceil(r.size);
                r.first_chunk + inside.min(r.count)
            }
        }
    }

    /// Number of declared edges (including trailing ones past the extent).
    pub fn num_edges(&self) -> u64 {
        self.num_edges
    }

    /// The distinct edge lengths of the chunks holding data, ascending (one per run at
    /// most: the cost is the number of runs, never the number of edges).
    pub fn distinct_sizes(&self) -> Vec<u64> {
        let mut sizes: Vec<u64> = self.runs.iter().map(|r| r.size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// The runs `(size, count)` of chunks holding data, in order (consecutive runs have
    /// different sizes; the last run's count may include edges past the extent).
    pub fn runs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.iter().map(|r| (r.size, r.count))
    }

    /// The run holding chunk `c` (`c` must be in `[0, num_chunks)`).
    fn run_of_chunk(&self, chunk: i64) -> Result<&Run, GridError> {
        let n = self.num_chunks();
        if chunk < 0 || chunk as u64 >= n {
            return Err(GridError::ChunkOutOfRange {
                chunk,
                lo: 0,
                hi: n as i64,
            });
        }
        let c = chunk as u64;
        let i = self.runs.partition_point(|r| r.first_chunk <= c) - 1;
        Ok(&self.runs[i])
    }
}

impl DimensionGrid for RectilinearGrid {
    fn index_to_chunk(&self, index: i64) -> Result<i64, GridError> {
        if index < 0 || index as u64 >= self.extent {
            return Err(GridError::OutOfGrid {
                index,
                lo: 0,
                hi: self.extent as i64,
            });
        }
        let x = index as u64;
        let i = self.runs.partition_point(|r| r.first_offset <= x) - 1;
        let r = &self.runs[i];
        Ok((r.first_chunk + (x - r.first_offset) / r.size) as i64)
    }

    fn chunk_offset(&self, chunk: i64) -> Result<i64, GridError> {
        let r = self.run_of_chunk(chunk)?;
        Ok((r.first_offset + (chunk as u64 - r.first_chunk) * r.size) as i64)
    }

    fn chunk_size(&self, chunk: i64) -> Result<u64, GridError> {
        Ok(self.run_of_chunk(chunk)?.size)
    }

    fn data_size(&self, chunk: i64) -> Result<u64, GridError> {
        let r = self.run_of_chunk(chunk)?;
        let start = r.first_offset + (chunk as u64 - r.first_chunk) * r.size;
        Ok((self.extent - start).min(r.size))
    }

    fn chunk_span(&self, chunk: i64) -> Result<(i64, u64, u64), GridError> {
        let r = self.run_of_chunk(chunk)?;
        let start = r.first_offset + (chunk as u64 - r.first_chunk) * r.size;
        Ok((start as i64, (self.extent - start).min(r.size), r.size))
    }

    fn indices_to_chunks(&self, indices: &[i64], out: &mut [i64]) -> Result<(), GridError> {
        if let [r] = self.runs[..] {
            // One run: a division (the common "regular with a different last edge" case
            // has two runs and takes the general path).
            for (o, &i) in out.iter_mut().zip(indices) {
                if i < 0 || i as u64 >= self.extent {
                    return Err(GridError::OutOfGrid {
                        index: i,
                        lo: 0,
                        hi: self.extent as i64,
                    });
                }
                *o = (i as u64 / r.size) as i64;
            }
            return Ok(());
        }
        for (o, &i) in out.iter_mut().zip(indices) {
            *o = self.index_to_chunk(i)?;
        }
        Ok(())
    }
}
