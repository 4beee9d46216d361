//! The order a writer lays a shard's inner chunks out in ([`InnerChunkOrder`]): a runtime
//! choice, never metadata. Readers follow the shard index wherever the chunks lie, so every
//! order reads the same values; the order decides which bytes a shard object holds, and so
//! which writer's shards zarrflow's are identical to (TensorStore and zarrs: C order;
//! zarr-python 3.4: Morton order).

use std::str::FromStr;
use std::sync::Arc;

use crate::codec::CodecError;
use crate::codec::block::{num_elements, ravel};

/// The order of a shard's inner chunks in the shard object (the index stays in C order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InnerChunkOrder {
    /// Ascending C (row-major) order of the inner grid, the last axis fastest: TensorStore's
    /// and zarrs' layout, and zarr-python's `subchunk_write_order="lexicographic"`. The
    /// default.
    #[default]
    Lexicographic,
    /// Fortran (column-major) order, the first axis fastest: zarr-python's
    /// `"colexicographic"`.
    Colexicographic,
    /// zarr-python 3's default (`"morton"`): ascending compressed Morton (Z-order) code, the
    /// coordinates' bits interleaved from the lowest up, the first axis taking the lowest bit
    /// of each round and axes that have run out of bits skipped (zarr-python's
    /// `morton_order_coords`). Neighbouring inner chunks lie near each other along every axis.
    Morton,
}

impl InnerChunkOrder {
    /// Every order, in the order their names are listed.
    pub const ALL: [InnerChunkOrder; 3] = [
        InnerChunkOrder::Lexicographic,
        InnerChunkOrder::Colexicographic,
        InnerChunkOrder::Morton,
    ];

    /// The name zarr-python gives the order (`lexicographic`, `colexicographic`, `morton`).
    pub fn name(self) -> &'static str {
        match self {
            InnerChunkOrder::Lexicographic => "lexicographic",
            InnerChunkOrder::Colexicographic => "colexicographic",
            InnerChunkOrder::Morton => "morton",
        }
    }

    /// Where each inner chunk of a shard whose inner grid is `chunks_per_shard` is laid out:
    /// `ranks[linear]` is the position of the inner chunk of C-order index `linear`; `None`
    /// for [`Lexicographic`](Self::Lexicographic) (the identity, never materialised).
    /// Allocated fallibly: at most 16 bytes an inner chunk while it is worked out, 4 kept.
    /// At most 2^32 inner chunks (more is an error; a shard index holds at most 2^30).
    pub fn ranks(self, chunks_per_shard: &[u64]) -> Result<Option<Arc<Vec<u32>>>, CodecError> {
        let n = num_elements(chunks_per_shard);
        let too_many = || CodecError::InvalidConfiguration {
            field: "shard layout".into(),
            reason: format!("{n} inner chunks per shard {chunks_per_shard:?}"),
        };
        if n > u64::from(u32::MAX) || chunks_per_shard.contains(&0) {
            return Err(too_many());
        }
        let n = n as usize;
        let oom = || CodecError::Allocation {
            what: "a shard's inner chunk order",
            bytes: (n as u64).saturating_mul(16),
        };
        let mut ranks: Vec<u32> = Vec::new();
        match self {
            InnerChunkOrder::Lexicographic => return Ok(None),
            InnerChunkOrder::Colexicographic => {
                // the rank of a cell is its C-order index over the reversed grid
                let reversed: Vec<u64> = chunks_per_shard.iter().rev().copied().collect();
                ranks.try_reserve_exact(n).map_err(|_| oom())?;
                let mut coords = vec![0u64; chunks_per_shard.len()];
                let mut flipped = vec![0u64; coords.len()];
                for _ in 0..n {
                    flipped
                        .iter_mut()
                        .zip(coords.iter().rev())
                        .for_each(|(f, c)| *f = *c);
                    ranks.push(ravel(&flipped, &reversed) as u32);
                    step_c_order(&mut coords, chunks_per_shard);
                }
            }
            InnerChunkOrder::Morton => {
                let bits: Vec<u32> = chunks_per_shard
                    .iter()
                    .map(|&c| u64::BITS - (c - 1).leading_zeros())
                    .collect();
                // an axis of c chunks takes ceil(log2 c) bits, at most 1.3 log2 c for c >= 2:
                // about 42 bits for 2^32 inner chunks
                if bits.iter().sum::<u32>() > 64 {
                    return Err(too_many());
                }
                let mut codes: Vec<u64> = Vec::new();
                codes.try_reserve_exact(n).map_err(|_| oom())?;
                let mut coords = vec![0u64; chunks_per_shard.len()];
                for _ in 0..n {
                    codes.push(morton_encode(&coords, &bits));
                    step_c_order(&mut coords, chunks_per_shard);
                }
                // the C-order indexes in ascending code (codes are distinct)
                let mut sequence: Vec<u32> = Vec::new();
                sequence.try_reserve_exact(n).map_err(|_| oom())?;
                sequence.extend(0..n as u32);
                sequence.sort_unstable_by_key(|&i| codes[i as usize]);
                drop(codes);
                ranks.try_reserve_exact(n).map_err(|_| oom())?;
                ranks.resize(n, 0);
                for (rank, &linear) in sequence.iter().enumerate() {
                    ranks[linear as usize] = rank as u32;
                }
            }
        }
        Ok(Some(Arc::new(ranks)))
    }
}

/// The C-order indexes of the inner chunks in layout order: `sequence[rank] = linear`, the
/// inverse of [`InnerChunkOrder::ranks`]; `None` (C order) when `ranks` is. Ranks that are
/// no permutation of `0..n` are an error. Allocated fallibly (4 bytes an inner chunk).
pub fn sequence_of(ranks: Option<&[u32]>) -> Result<Option<Vec<u32>>, CodecError> {
    let Some(ranks) = ranks else {
        return Ok(None);
    };
    let mut sequence = Vec::new();
    sequence
        .try_reserve_exact(ranks.len())
        .map_err(|_| CodecError::Allocation {
            what: "a shard's inner chunk order",
            bytes: ranks.len() as u64 * 4,
        })?;
    sequence.resize(ranks.len(), u32::MAX);
    let not_a_permutation = || CodecError::InvalidConfiguration {
        field: "shard layout".into(),
        reason: format!(
            "the ranks of {} inner chunks are no permutation",
            ranks.len()
        ),
    };
    for (linear, &rank) in ranks.iter().enumerate() {
        match sequence.get_mut(rank as usize) {
            Some(slot) if *slot == u32::MAX => *slot = linear as u32,
            _ => return Err(not_a_permutation()),
        }
    }
    Ok(Some(sequence))
}

/// Advances `coords` to the next cell of `shape` in C order (wrapping to all zeros).
fn step_c_order(coords: &mut [u64], shape: &[u64]) {
    for d in (0..shape.len()).rev() {
        coords[d] += 1;
        if coords[d] < shape[d] {
            return;
        }
        coords[d] = 0;
    }
}

/// The compressed Morton code of `coords`, axis `d` having `bits[d]` bits.
fn morton_encode(coords: &[u64], bits: &[u32]) -> u64 {
    let rounds = bits.iter().copied().max().unwrap_or(0);
    let (mut code, mut out_bit) = (0u64, 0u32);
    for bit in 0..rounds {
        for (d, &b) in bits.iter().enumerate() {
            if bit < b {
                code |= ((coords[d] >> bit) & 1) << out_bit;
                out_bit += 1;
            }
        }
    }
    code
}

impl std::fmt::Display for InnerChunkOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown name given for an [`InnerChunkOrder`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown inner chunk order {0:?} (expected lexicographic, colexicographic or morton)")]
pub struct UnknownInnerChunkOrder(pub String);

impl FromStr for InnerChunkOrder {
    type Err = UnknownInnerChunkOrder;

    /// zarr-python's names (`lexicographic`, `colexicographic`, `morton`), and `C` / `F` for
    /// the first two.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "lexicographic" | "C" | "c" => Ok(InnerChunkOrder::Lexicographic),
            "colexicographic" | "F" | "f" => Ok(InnerChunkOrder::Colexicographic),
            "morton" => Ok(InnerChunkOrder::Morton),
            _ => Err(UnknownInnerChunkOrder(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::block::unravel;

    /// The inner chunks' coordinates in the order `order` lays them out.
    fn coords(order: InnerChunkOrder, cps: &[u64]) -> Vec<Vec<u64>> {
        let n = num_elements(cps);
        let mut linear: Vec<u64> = (0..n).collect();
        if let Some(ranks) = order.ranks(cps).unwrap() {
            let sequence = sequence_of(Some(&ranks)).unwrap().unwrap();
            let mut sorted = ranks.to_vec();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..n as u32).collect::<Vec<_>>(),
                "{order}: not a permutation"
            );
            linear.sort_by_key(|&i| ranks[i as usize]);
            assert_eq!(
                sequence.iter().map(|&i| i as u64).collect::<Vec<_>>(),
                linear
            );
        }
        linear.iter().map(|&i| unravel(i, cps)).collect()
    }

    #[test]
    fn morton_order_is_zarr_pythons() {
        // zarr.core.indexing.morton_order_coords((3, 4)) in zarr-python 3.4.2
        let expected = [
            [0, 0],
            [1, 0],
            [0, 1],
            [1, 1],
            [2, 0],
            [2, 1],
            [0, 2],
            [1, 2],
            [0, 3],
            [1, 3],
            [2, 2],
            [2, 3],
        ];
        assert_eq!(coords(InnerChunkOrder::Morton, &[3, 4]), expected);
        // (2, 1, 3): the middle axis has no bits
        let expected = [
            [0, 0, 0],
            [1, 0, 0],
            [0, 0, 1],
            [1, 0, 1],
            [0, 0, 2],
            [1, 0, 2],
        ];
        assert_eq!(coords(InnerChunkOrder::Morton, &[2, 1, 3]), expected);
    }

    #[test]
    fn every_order_is_a_permutation() {
        for cps in [
            &[1u64][..],
            &[7],
            &[3, 5],
            &[4, 4, 4],
            &[2, 3, 1, 5],
            &[1, 1],
        ] {
            let n = num_elements(cps) as usize;
            for order in InnerChunkOrder::ALL {
                let mut seen = coords(order, cps);
                assert_eq!(seen.len(), n);
                seen.sort();
                seen.dedup();
                assert_eq!(seen.len(), n, "{order} over {cps:?}");
            }
        }
        assert_eq!(
            coords(InnerChunkOrder::Colexicographic, &[2, 3]),
            [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]
        );
    }

    #[test]
    fn ranks_that_are_no_permutation_are_refused() {
        assert!(sequence_of(Some(&[0, 5, 1])).is_err());
        assert!(sequence_of(Some(&[1, 1, 0])).is_err());
        assert_eq!(sequence_of(Some(&[2, 0, 1])).unwrap(), Some(vec![1, 2, 0]));
        assert_eq!(sequence_of(None).unwrap(), None);
    }

    #[test]
    fn names_round_trip() {
        for order in InnerChunkOrder::ALL {
            assert_eq!(order.name().parse::<InnerChunkOrder>().unwrap(), order);
        }
        assert_eq!("F".parse(), Ok(InnerChunkOrder::Colexicographic));
        assert!("z".parse::<InnerChunkOrder>().is_err());
    }
}
