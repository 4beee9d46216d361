//! # zarrflow
//!
//! A Zarr engine (v3, and v2) for sharded and unsharded arrays on local disks and object
//! stores (S3, GCS, Azure, HTTP, memory). A selection is an [`index::IndexTransform`]; a planner turns it
//! into chunk operations; a storage layer executes them with coalesced requests, and values
//! land straight in the caller's buffer.
//!
//! This page is a tour; `docs/architecture.md` maps every module and says where each kind of
//! change belongs.
//!
//! ## Dependencies
//!
//! ```toml
//! [dependencies]
//! zarrflow = { path = "...", default-features = false }   # without the CLI's dependencies
//! ndarray = "0.17"                                         # or use zarrflow::ndarray
//! tokio = { version = "1", features = ["rt-multi-thread", "macros"] }  # for the async API
//! ```
//!
//! The types that appear in zarrflow's signatures are re-exported, so version mismatches
//! cannot arise through them: [`ndarray`], [`serde_json`], [`half`] (`f16`) and
//! [`num_complex`] (`Complex<f32>`, `Complex<f64>`).
//!
//! ## Create, write, read
//!
//! An [`ArraySpec`] says what to create; [`Array::create`] refuses to replace an existing node
//! ([`Array::create_overwrite`] deletes it first). [`Array::view`] gives an [`ArrayView`]:
//! indexing it ([`ArrayView::get`], [`ArrayView::oindex`], [`ArrayView::vindex`]) composes
//! index transforms and does no I/O; [`ArrayView::read`] and [`ArrayView::write`] do.
//!
//! ```
//! use zarrflow::{Array, ArrayOptions, ArraySpec, Store, StoreKey, sel};
//! use zarrflow::ndarray::{Array2, array};
//!
//! # zarrflow::block_on(async {
//! // `memory://NAME` is one store for the whole process.
//! let store = Store::open("memory://tour", Default::default())?;
//! let spec = ArraySpec::of::<f32>([100, 200]).shard_shape([50, 100]).inner_chunk_shape([10, 20]);
//! let array = Array::create(&store, &StoreKey::new("t")?, &spec, ArrayOptions::default()).await?;
//! assert!(Array::create(&store, &StoreKey::new("t")?, &spec, ArrayOptions::default()).await.unwrap_err().is_already_exists());
//!
//! array.view().get(&sel![10..20, ..])?.write_scalar(1.5f32).await?;
//! array.view().get(&sel![0..2, 0..2])?.write(&array![[1.0f32, 2.0], [3.0, 4.0]]).await?;
//!
//! // selections take any integer type: usize, u64, i32, ...
//! let n: usize = 2;
//! let corner: Array2<f32> = array.view().get(&sel![0..n, 0..n])?.read_as().await?;
//! assert_eq!(corner, array![[1.0, 2.0], [3.0, 4.0]]);
//! let strided = array.view().get(&sel![..;-7, 5])?.read::<f32>().await?;   // NumPy a[::-7, 5]
//! let outer = array.view().oindex(&sel![[12u64, 0], [1, 3]])?.read::<f32>().await?; // np.ix_
//! let points = array.view().vindex(&sel![[12, 99], [3, 7]])?.read::<f32>().await?; // points
//! assert_eq!((strided.len(), outer.shape(), points.as_slice()), (15, &[2, 2][..], Some(&[1.5f32, 0.0][..])));
//!
//! let again = Array::open("memory://tour/t").await?;
//! assert_eq!(again.inner_chunk_shape(), Some(&[10, 20][..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap().unwrap();
//! ```
//!
//! ## Element types
//!
//! `read::<T>()` and `write` take any [`AnyElement`]: the fixed-size [`Element`]s (`bool`,
//! the integers, `f16`/`f32`/`f64`, complex numbers; `i64` for the time types), read
//! straight into the caller's memory, and `String` / `Vec<u8>` for `string` and `bytes`
//! arrays. Raw `r*` types, and any fixed-size type as bytes, go through
//! [`ArrayView::read_bytes`] / [`ArrayView::write_bytes`]. A type that does not match the array's data type is refused
//! before any request.
//!
//! ```
//! # use zarrflow::{Array, ArraySpec, DataType, sel};
//! # zarrflow::block_on(async {
//! let names = Array::create_at("memory://", &ArraySpec::with_data_type([3], DataType::String)).await?;
//! names.view().get(&sel![1])?.write_scalar("h\u{e9}".to_string()).await?;
//! assert_eq!(names.view().read::<String>().await?.as_slice().unwrap(), ["", "h\u{e9}", ""]);
//! assert!(names.view().read::<f32>().await.unwrap_err().is_data_type_mismatch());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap().unwrap();
//! ```
//!
//! ## Batches
//!
//! A [`WriteBatch`] stages many writes and touches each shard once on
//! [`commit`](WriteBatch::commit); dropping it without committing writes nothing (the
//! compiler warns).
//!
//! ```
//! # use zarrflow::{Array, ArraySpec, sel};
//! # zarrflow::block_on(async {
//! # let array = Array::create_at("memory://", &ArraySpec::of::<u8>([64]).shard_shape([64]).inner_chunk_shape([8])).await?;
//! let mut batch = array.batch();
//! for i in 0..64u8 {
//!     batch.stage_scalar(&array.view().get(&sel![i])?, i)?;
//! }
//! batch.commit().await?;   // one shard written once
//! let last = array.view().get(&sel![63])?.read_as::<u8, zarrflow::ndarray::Ix0>().await?;
//! assert_eq!(last.into_scalar(), 63);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap().unwrap();
//! ```
//!
//! ## Blocking use
//!
//! Every async operation has a `_blocking` twin that runs on a private runtime (refused,
//! not deadlocked, inside one):
//!
//! ```
//! use zarrflow::{Array, ArraySpec, sel};
//! let array = Array::create_at_blocking("memory://blocking-tour", &ArraySpec::of::<i32>([4, 4]))?;
//! array.view().get(&sel![1, ..])?.write_scalar_blocking(7)?;
//! let row: zarrflow::ndarray::Array1<i32> = array.view().get(&sel![1, ..])?.read_as_blocking()?;
//! assert_eq!(row.to_vec(), vec![7; 4]);
//! # Ok::<(), zarrflow::ArrayError>(())
//! ```
//!
//! ## Stores by URL
//!
//! [`Store::open`] takes a path, `file://`, `memory://name`, `s3://bucket/prefix`, `gs://`,
//! `az://` or `http(s)://` (read-only); credentials and endpoints come from the usual
//! `AWS_*` / `GOOGLE_*` / `AZURE_*` variables or [`StoreOptions::with_backend_option`].
//!
//! ## Copies and layout changes
//!
//! [`copy::copy`] copies an array or a hierarchy, re-chunking, re-sharding or re-encoding
//! (the engine of `zarrflow copy`).
//!
//! ## Modules, in the order data flows
//!
//! | module | layer | what it owns |
//! | --- | --- | --- |
//! | [`index`] | pure | index domains, transforms, selections (`sel!`, strings, JSON) |
//! | [`grid`], [`plan`] | pure | chunk grids and the two-level chunk planner |
//! | [`metadata`], [`codec`] | format | `zarr.json`, data types, codec chains, sharding |
//! | [`npy`] | format | NumPy .npy files |
//! | [`store`] | I/O | `object_store` wrapper: URLs, coalesced ranged reads, conditional writes |
//! | [`array`](mod@array) | I/O | executes plans: reads, writes, batches, the blocking facade |
//! | [`hierarchy`] | I/O | opens and creates groups and arrays |
//! | [`copy`] | I/O | copies of arrays and hierarchies with new layouts |
//!
//! ## Feature flags
//!
//! `cli` (default): the `zarrflow` command line and its dependencies (`clap`, `indicatif`,
//! `tracing-subscriber`). The library itself needs none of them.
// Three audited exceptions: `array::result_buffer` advises result buffers onto huge pages,
// `codec::direct::FreeTail` lets zstd write a frame into a slab's spare capacity, and
// `array::stream_store` stores whole cache lines of large results with streaming stores.
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod array;
pub mod codec;
pub mod copy;
pub mod grid;
pub mod hierarchy;
pub mod index;
pub mod metadata;
pub mod npy;
mod per_process;
pub mod plan;
pub mod store;

pub use array::{
    AnyElement, Array, ArrayError, ArrayOptions, ArrayView, Element, InnerChunkOrder,
    ShapeMismatch, VlenElement, WriteBatch, block_on,
};
pub use index::{Selection, SelectionItem};
pub use metadata::{ArrayInfo, ArraySpec, CodecSpec, DataType, ZarrFormat};
pub use store::{Store, StoreKey, StoreOptions};

pub use half;
pub use ndarray;
pub use num_complex;
pub use serde_json;

/// The README's code blocks, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
