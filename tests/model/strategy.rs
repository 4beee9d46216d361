//! proptest strategies of the model test: array layouts, selections of every mode for a
//! shape (mostly valid, sometimes refused by NumPy), and values for a selection (the right
//! shape, a broadcastable one, a scalar, or a shape that does not broadcast).

use std::fmt;

use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

use super::dtype::{DTYPES, Dtype};
use super::numpy::{Item, Mode, Sel, index};

/// The codecs of the (inner) chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// The default: `bytes` + `zstd` (decoded by zarrflow itself).
    Default,
    /// `bytes` only (decoded by zarrflow itself).
    Raw,
    /// `bytes` + `gzip` (decoded through zarrs).
    Gzip,
    /// `bytes` + `crc32c` (decoded through zarrs, checksum verified).
    Crc32c,
}

/// How an array is created.
#[derive(Clone, PartialEq)]
pub struct Layout {
    /// Shape (0 allowed).
    pub shape: Vec<usize>,
    /// Data type.
    pub dtype: Dtype,
    /// Fill value.
    pub fill: f64,
    /// The chunk shape (unsharded) or the shard shape (sharded).
    pub chunks: Vec<u64>,
    /// The inner chunk shape when sharded (divides `chunks`).
    pub inner: Option<Vec<u64>>,
    /// Shard index at the start.
    pub index_at_start: bool,
    /// Chunk codecs.
    pub codec: Codec,
    /// `ArrayOptions::with_store_empty_chunks`.
    pub store_empty_chunks: bool,
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} {} fill={}",
            self.shape,
            self.dtype.name(),
            self.fill
        )?;
        match &self.inner {
            Some(inner) => write!(f, " shards={:?} inner={:?}", self.chunks, inner)?,
            None => write!(f, " chunks={:?}", self.chunks)?,
        }
        if self.inner.is_some() && self.index_at_start {
            f.write_str(" index_at_start")?;
        }
        if self.codec != Codec::Default {
            write!(f, " {:?}", self.codec)?;
        }
        if self.store_empty_chunks {
            f.write_str(" store_empty_chunks")?;
        }
        Ok(())
    }
}

/// Random layouts: rank 1–3, small extents (sometimes 0), chunks that may not divide the
/// shape or exceed it, sharded or not.
pub fn layout() -> impl Strategy<Value = Layout> {
    let extent = prop_oneof![1 => Just(0usize), 12 => 1usize..=7];
    (1usize..=3, prop::sample::select(&DTYPES[..]))
        .prop_flat_map(move |(rank, dtype)| {
            (
                prop::collection::vec(extent.clone(), rank),
                Just(dtype),
                dtype.values(),
                prop::collection::vec(1u64..=5, rank),
                prop::option::weighted(0.6, prop::collection::vec(1u64..=3, rank)),
                any::<bool>(),
                prop::sample::select(&[Codec::Default, Codec::Raw, Codec::Gzip, Codec::Crc32c][..]),
                prop::bool::weighted(0.2),
            )
        })
        .prop_map(
            |(shape, dtype, fill, chunks, per_shard, index_at_start, codec, store_empty_chunks)| {
                // sharded: `chunks` is the inner chunk and the shard holds `per_shard` of them
                let (chunks, inner) = match per_shard {
                    Some(k) => (
                        chunks.iter().zip(&k).map(|(c, k)| c * k).collect(),
                        Some(chunks),
                    ),
                    None => (chunks, None),
                };
                Layout {
                    shape,
                    dtype,
                    fill,
                    chunks,
                    inner,
                    index_at_start,
                    codec,
                    store_empty_chunks,
                }
            },
        )
}

/// One item for a dimension of extent `n` in `mode`; `points` is the length of vectorized
/// index arrays (all equal, so they broadcast).
fn item(n: usize, mode: Mode, points: usize) -> BoxedStrategy<Item> {
    let n = n as i64;
    // valid integers; rarely one just outside [-n, n)
    let index = prop_oneof![
        29 => (-n..n.max(1)).prop_map(Item::Index),
        1 => prop::sample::select(vec![n, -n - 1, n + 3]).prop_map(Item::Index),
    ];
    let bound = prop::option::weighted(0.7, -n - 2..=n + 2);
    let step = prop::option::weighted(
        0.6,
        prop_oneof![40 => prop::sample::select(vec![1i64, 2, 3, -1, -2, -3]), 1 => Just(0i64)],
    );
    let slice = (bound.clone(), bound, step).prop_map(|(a, b, c)| Item::Slice(a, b, c));
    let coord = prop_oneof![59 => -n..n.max(1), 1 => Just(n)];
    match mode {
        Mode::Basic => prop_oneof![1 => index, 3 => slice].boxed(),
        Mode::Outer => {
            let array = prop::collection::vec(coord, 0..=4).prop_map(Item::Array);
            let mask = prop::collection::vec(any::<bool>(), n as usize).prop_map(Item::Mask);
            prop_oneof![1 => index, 2 => slice, 2 => array, 1 => mask].boxed()
        }
        Mode::Vectorized => {
            let array = prop::collection::vec(coord, points).prop_map(Item::Array);
            prop_oneof![1 => index, 1 => slice, 3 => array].boxed()
        }
    }
}

/// A selection for `shape`: one item per dimension, then sometimes fewer items (implicit
/// trailing `:`), a `...` standing for some of them, or a `None`.
pub fn selection(shape: Vec<usize>) -> BoxedStrategy<Sel> {
    let rank = shape.len();
    (
        prop::sample::select(vec![Mode::Basic, Mode::Outer, Mode::Vectorized]),
        0usize..=4,
    )
        .prop_flat_map(move |(mode, points)| {
            let items: Vec<BoxedStrategy<Item>> =
                shape.iter().map(|&n| item(n, mode, points)).collect();
            (
                Just(mode),
                items,
                prop_oneof![6 => Just(0u8), 1 => Just(1), 1 => Just(2), 1 => Just(3)],
                0..=rank,
                0..=rank,
            )
        })
        .prop_map(move |(mode, mut items, shape_change, a, b)| {
            match shape_change {
                1 => items.truncate(a),
                2 => {
                    let (lo, hi) = (a.min(b), a.max(b));
                    items.splice(lo..hi, [Item::Ellipsis]);
                }
                3 => items.insert(a, Item::NewAxis),
                _ => {}
            }
            Sel { mode, items }
        })
        .boxed()
}

/// Values of a write.
#[derive(Clone, PartialEq)]
pub enum Values {
    /// `write_scalar` / `stage_scalar`.
    Scalar(f64),
    /// `write` / `stage` of an array (which may broadcast).
    Array(ArrayD<f64>),
}

impl Values {
    /// As an array (a scalar is 0-d).
    pub fn to_array(&self) -> ArrayD<f64> {
        match self {
            Values::Scalar(v) => ArrayD::from_elem(IxDyn(&[]), *v),
            Values::Array(a) => a.clone(),
        }
    }
}

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Values::Scalar(v) => write!(f, "scalar {v}"),
            Values::Array(a) => write!(f, "{:?} {:?}", a.shape(), a.iter().collect::<Vec<_>>()),
        }
    }
}

/// Values for `sel` on `shape`: mostly the selection's own shape, sometimes a shape that
/// broadcasts to it (size-1 axes, fewer or extra leading axes), a scalar, or rarely one
/// that does not broadcast.
pub fn values(dtype: Dtype, shape: &[usize], sel: &Sel) -> BoxedStrategy<Values> {
    let target = index(shape, sel)
        .map(|ix| ix.shape)
        .unwrap_or_else(|_| vec![2]);
    let scalar = dtype.values().prop_map(Values::Scalar);
    let t = target.clone();
    let broadcastable = (
        prop::collection::vec(any::<bool>(), target.len()),
        0..=target.len(),
        any::<bool>(),
    )
        .prop_map(move |(ones, drop, extra)| {
            let mut s: Vec<usize> = t
                .iter()
                .zip(ones)
                .map(|(&n, one)| if one { 1 } else { n })
                .collect();
            s.drain(..drop);
            if extra {
                s.insert(0, 1);
            }
            s
        });
    let t = target.clone();
    let wrong = Just(()).prop_map(move |_| {
        let mut s = t.clone();
        match s.iter_mut().find(|n| **n != 1) {
            Some(n) => *n += 1,
            None => s.push(2),
        }
        s
    });
    let shape = prop_oneof![
        6 => Just(target),
        2 => broadcastable,
        1 => wrong,
    ];
    let arrays = shape
        .prop_flat_map(move |s| {
            let n: usize = s.iter().product();
            (Just(s), prop::collection::vec(dtype.values(), n))
        })
        .prop_map(|(s, v)| Values::Array(ArrayD::from_shape_vec(IxDyn(&s), v).unwrap()));
    prop_oneof![4 => arrays, 1 => scalar].boxed()
}
