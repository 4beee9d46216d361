//! Stateful model test (zarr-python's `ZarrHierarchyStateMachine` in spirit): random
//! sequences of operations on a store run against zarrflow and against an in-memory
//! NumPy-like model (`tests/model/numpy.rs`, `ndarray::ArrayD<f64>` per array), compared
//! after every step. proptest-state-machine generates the sequences from the model's state
//! and shrinks a failure to a short sequence, printed one operation per line in Python-like
//! notation.
//!
//! Operations: create an array (rank 1–3, small extents including 0, four data types, fill
//! values including NaN and -0.0, chunks that do not divide the shape, sharded or not, four
//! codec chains, index at the start or end; create-only or overwrite), write (basic slices
//! with negative steps, `...`, `None`, oindex with lists and masks, vindex, integer and
//! scalar writes, broadcasting values, values of the wrong shape or type), batches (several
//! staged writes, one commit), reads (whole, selections, wrong type), opening another handle,
//! deleting an array, deleting a prefix (a group, the root), reopening the store. After
//! every step the store's listing holds exactly the model's arrays (nothing stale, nothing
//! of a sibling deleted); every write is followed by a whole read through the same handle;
//! the case ends with a whole read of every array from a reopened store.
//!
//! Stores: memory, local filesystem (temporary directory), S3 (s3s-fs on 127.0.0.1, fewer
//! cases). `PROPTEST_CASES=N` runs N cases on each store.

mod common;
mod model;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use ndarray::{ArrayD, IxDyn};
use object_store::memory::InMemory;
use proptest::prelude::*;
use proptest::strategy::Union;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};
use zarrflow::array::{Array, ArrayError, ArrayOptions, ArrayView, WriteBatch};
use zarrflow::index::Selection;
use zarrflow::metadata::{ArraySpec, CodecSpec};
use zarrflow::store::{Store, StoreKey, StoreOptions};

use model::dtype::{Cell, DTYPES, Dtype};
use model::numpy::{self, Mode, Refusal, Sel};
use model::strategy::{Codec, Layout, Values, layout, selection, values};

/// Where arrays live: two names where one is a prefix of the other, and a group of two.
const PATHS: [&str; 4] = ["a", "ab", "g/a", "g/b"];

// ---- the model -----------------------------------------------------------------------------

/// Why an operation must fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A node exists where a create-only create was asked.
    Exists,
    /// NumPy refuses the selection.
    Selection,
    /// The values do not broadcast to the selection.
    Shape,
    /// The Rust element type is not the array's.
    DataType,
}

impl From<Refusal> for Kind {
    fn from(r: Refusal) -> Kind {
        match r {
            Refusal::Selection => Kind::Selection,
            Refusal::Shape => Kind::Shape,
        }
    }
}

/// What the last operation must have returned.
#[derive(Clone, Debug, Default)]
enum Expected {
    /// Success, nothing to compare.
    #[default]
    Done,
    /// This failure.
    Refused(Kind),
    /// Per staged write: its failure, if any (the others are committed).
    Staged(Vec<Option<Kind>>),
    /// A read's values, or its failure.
    Read(Result<ArrayD<f64>, Kind>),
}

/// One array of the model.
#[derive(Clone)]
struct ModelArray {
    layout: Layout,
    data: ArrayD<f64>,
    handles: usize,
}

impl fmt::Debug for ModelArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} ({} handles)", self.layout, self.handles)
    }
}

/// The reference state: every array by path, and the expected outcome of the last step.
#[derive(Clone, Debug, Default)]
struct ModelState {
    arrays: BTreeMap<&'static str, ModelArray>,
    last: Expected,
}

/// The array a transition was generated for (so shrinking never aims it at another).
#[derive(Clone, PartialEq)]
struct Target {
    path: &'static str,
    handle: usize,
    shape: Vec<usize>,
    dtype: Dtype,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.path, self.handle)
    }
}

/// One operation.
#[derive(Clone)]
enum Transition {
    Create {
        path: &'static str,
        layout: Layout,
        overwrite: bool,
        cache: bool,
    },
    Write {
        at: Target,
        sel: Sel,
        values: Values,
        /// Written as this (wrong) element type.
        as_type: Option<Dtype>,
    },
    Batch {
        at: Target,
        writes: Vec<(Sel, Values)>,
    },
    Read {
        at: Target,
        /// `None`: the whole array through `view().read()`.
        sel: Option<Sel>,
        as_type: Option<Dtype>,
    },
    OpenHandle {
        path: &'static str,
        cache: bool,
    },
    Delete {
        path: &'static str,
    },
    DeletePrefix {
        prefix: &'static str,
    },
    Reopen {
        cache: bool,
    },
}

impl fmt::Debug for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let typed = |t: &Option<Dtype>| t.map(|t| format!(" as {}", t.name())).unwrap_or_default();
        match self {
            Transition::Create {
                path,
                layout,
                overwrite,
                cache,
            } => write!(
                f,
                "create{} {path} {layout:?}{}",
                if *overwrite { "_overwrite" } else { "" },
                if *cache {
                    ""
                } else {
                    " (no index or write cache)"
                }
            ),
            Transition::Write {
                at,
                sel,
                values,
                as_type,
            } => write!(f, "write {at:?} {sel:?} = {values:?}{}", typed(as_type)),
            Transition::Batch { at, writes } => {
                write!(f, "batch {at:?} [")?;
                for (i, (sel, v)) in writes.iter().enumerate() {
                    write!(f, "{}{sel:?} = {v:?}", if i > 0 { "; " } else { "" })?;
                }
                f.write_str("] commit")
            }
            Transition::Read { at, sel, as_type } => match sel {
                Some(sel) => write!(f, "read {at:?} {sel:?}{}", typed(as_type)),
                None => write!(f, "read {at:?} whole{}", typed(as_type)),
            },
            Transition::OpenHandle { path, cache } => write!(
                f,
                "open another handle of {path}{}",
                if *cache {
                    ""
                } else {
                    " (no index or write cache)"
                }
            ),
            Transition::Delete { path } => write!(f, "delete array {path}"),
            Transition::DeletePrefix { prefix } => write!(f, "delete prefix {prefix:?}"),
            Transition::Reopen { cache } => write!(
                f,
                "reopen the store and every array{}",
                if *cache {
                    ""
                } else {
                    " (no index or write cache)"
                }
            ),
        }
    }
}

/// The model of the whole store, with at most `HANDLES` handles of one array open at once.
struct Model<const HANDLES: usize>;

fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty() || path == prefix || path.starts_with(&format!("{prefix}/"))
}

fn other_type(dtype: Dtype) -> BoxedStrategy<Dtype> {
    let others: Vec<Dtype> = DTYPES.into_iter().filter(|&d| d != dtype).collect();
    prop::sample::select(others).boxed()
}

impl<const HANDLES: usize> ReferenceStateMachine for Model<HANDLES> {
    type State = ModelState;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<ModelState> {
        Just(ModelState::default()).boxed()
    }

    fn transitions(state: &ModelState) -> BoxedStrategy<Transition> {
        let create = (
            prop::sample::select(&PATHS[..]),
            layout(),
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.8),
        )
            .prop_map(|(path, layout, overwrite, cache)| Transition::Create {
                path,
                layout,
                overwrite,
                cache,
            });
        let reopen = any::<bool>().prop_map(|cache| Transition::Reopen { cache });
        let delete_prefix = prop::sample::select(vec!["g", ""])
            .prop_map(|prefix| Transition::DeletePrefix { prefix });
        let mut arms: Vec<(u32, BoxedStrategy<Transition>)> = vec![
            (if state.arrays.len() < 2 { 6 } else { 2 }, create.boxed()),
            (1, reopen.boxed()),
            (1, delete_prefix.boxed()),
        ];
        let targets: Vec<Target> = state
            .arrays
            .iter()
            .flat_map(|(&path, a)| {
                (0..a.handles).map(move |handle| Target {
                    path,
                    handle,
                    shape: a.layout.shape.clone(),
                    dtype: a.layout.dtype,
                })
            })
            .collect();
        if !targets.is_empty() {
            let write = prop::sample::select(targets.clone())
                .prop_flat_map(|at| {
                    let sel = selection(at.shape.clone());
                    let wrong = prop::option::weighted(0.05, other_type(at.dtype));
                    (Just(at), sel, wrong)
                })
                .prop_flat_map(|(at, sel, as_type)| {
                    let v = values(at.dtype, &at.shape, &sel);
                    (Just(at), Just(sel), v, Just(as_type))
                })
                .prop_map(|(at, sel, values, as_type)| Transition::Write {
                    at,
                    sel,
                    values,
                    as_type,
                });
            let batch = prop::sample::select(targets.clone())
                .prop_flat_map(|at| {
                    let (shape, dtype) = (at.shape.clone(), at.dtype);
                    let one = selection(shape.clone()).prop_flat_map(move |sel| {
                        let v = values(dtype, &shape, &sel);
                        (Just(sel), v)
                    });
                    (Just(at), prop::collection::vec(one, 1..=4))
                })
                .prop_map(|(at, writes)| Transition::Batch { at, writes });
            let read = prop::sample::select(targets.clone())
                .prop_flat_map(|at| {
                    let sel = prop::option::weighted(0.75, selection(at.shape.clone()));
                    let wrong = prop::option::weighted(0.05, other_type(at.dtype));
                    (Just(at), sel, wrong)
                })
                .prop_map(|(at, sel, as_type)| Transition::Read { at, sel, as_type });
            let paths: Vec<&'static str> = state.arrays.keys().copied().collect();
            let delete =
                prop::sample::select(paths.clone()).prop_map(|path| Transition::Delete { path });
            arms.extend([
                (8, write.boxed()),
                (3, batch.boxed()),
                (5, read.boxed()),
                (1, delete.boxed()),
            ]);
            if HANDLES > 1 {
                let open = (prop::sample::select(paths), any::<bool>())
                    .prop_map(|(path, cache)| Transition::OpenHandle { path, cache });
                arms.push((1, open.boxed()));
            }
        }
        Union::new_weighted(arms).boxed()
    }

    fn preconditions(state: &ModelState, t: &Transition) -> bool {
        let fits = |at: &Target| {
            state.arrays.get(at.path).is_some_and(|a| {
                a.layout.shape == at.shape && a.layout.dtype == at.dtype && at.handle < a.handles
            })
        };
        match t {
            Transition::Create { .. }
            | Transition::DeletePrefix { .. }
            | Transition::Reopen { .. } => true,
            Transition::Write { at, .. }
            | Transition::Batch { at, .. }
            | Transition::Read { at, .. } => fits(at),
            Transition::OpenHandle { path, .. } => {
                state.arrays.get(path).is_some_and(|a| a.handles < HANDLES)
            }
            Transition::Delete { path } => state.arrays.contains_key(path),
        }
    }

    fn apply(mut state: ModelState, t: &Transition) -> ModelState {
        state.last = Expected::Done;
        match t {
            Transition::Create {
                path,
                layout,
                overwrite,
                ..
            } => {
                if state.arrays.contains_key(path) && !overwrite {
                    state.last = Expected::Refused(Kind::Exists);
                } else {
                    let data = ArrayD::from_elem(IxDyn(&layout.shape), layout.fill);
                    state.arrays.insert(
                        path,
                        ModelArray {
                            layout: layout.clone(),
                            data,
                            handles: 1,
                        },
                    );
                }
            }
            Transition::Write {
                at,
                sel,
                values,
                as_type,
            } => {
                let a = state.arrays.get_mut(at.path).expect("precondition");
                state.last = match model_write(&mut a.data, sel, values, *as_type) {
                    Ok(()) => Expected::Done,
                    Err(kind) => Expected::Refused(kind),
                };
            }
            Transition::Batch { at, writes } => {
                let a = state.arrays.get_mut(at.path).expect("precondition");
                let staged = writes
                    .iter()
                    .map(|(sel, v)| model_write(&mut a.data, sel, v, None).err())
                    .collect();
                state.last = Expected::Staged(staged);
            }
            Transition::Read { at, sel, as_type } => {
                let a = &state.arrays[at.path];
                let read = match sel {
                    Some(sel) => numpy::read(&a.data, sel).map_err(Kind::from),
                    None => Ok(a.data.clone()),
                };
                let read = match (read, as_type) {
                    (Ok(_), Some(_)) => Err(Kind::DataType),
                    (r, _) => r,
                };
                state.last = Expected::Read(read);
            }
            Transition::OpenHandle { path, .. } => {
                state.arrays.get_mut(path).expect("precondition").handles += 1;
            }
            Transition::Delete { path } => {
                state.arrays.remove(path);
            }
            Transition::DeletePrefix { prefix } => state.arrays.retain(|p, _| !under(p, prefix)),
            Transition::Reopen { .. } => {
                for a in state.arrays.values_mut() {
                    a.handles = 1;
                }
            }
        }
        state
    }
}

/// A write on the model, refused in the library's order: selection, element type, shape.
fn model_write(
    data: &mut ArrayD<f64>,
    sel: &Sel,
    values: &Values,
    as_type: Option<Dtype>,
) -> Result<(), Kind> {
    numpy::index(data.shape(), sel)?;
    if as_type.is_some() {
        return Err(Kind::DataType);
    }
    Ok(numpy::write(data, sel, &values.to_array())?)
}

// ---- the system under test ---------------------------------------------------------------

/// The runtime every store and operation runs on (the S3 server's tasks too).
static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
});

/// A kind of store: how a case gets a fresh one and how it is opened again.
trait Backend: 'static {
    /// The model this store is tested against (how many handles an array may have).
    type Model: ReferenceStateMachine<State = ModelState, Transition = Transition>;
    /// What keeps the store alive during a case (a directory, a server).
    type Keep;
    /// A fresh, empty store.
    fn start() -> (Store, Self::Keep);
    /// The same store, opened again (a new client where the store has one).
    fn reopen(store: &Store, keep: &Self::Keep) -> Store;
    /// Called after every operation.
    fn tidy(_keep: &Self::Keep) {}
}

/// `object_store`'s `InMemory` (reopening keeps the same one: it is the data).
struct Memory;
impl Backend for Memory {
    type Model = Model<3>;
    type Keep = ();
    fn start() -> (Store, ()) {
        let store = Store::from_object_store(
            Arc::new(InMemory::new()),
            "",
            "memory://model",
            StoreOptions::default(),
        )
        .unwrap();
        (store, ())
    }
    fn reopen(store: &Store, _: &()) -> Store {
        store.clone()
    }
}

/// A temporary directory on the local filesystem.
struct Local;
impl Backend for Local {
    type Model = Model<3>;
    type Keep = tempfile::TempDir;
    fn start() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap();
        (store, dir)
    }
    fn reopen(_: &Store, dir: &tempfile::TempDir) -> Store {
        Store::open(dir.path().to_str().unwrap(), StoreOptions::default()).unwrap()
    }
}

/// An S3 server (s3s-fs) on 127.0.0.1, one per case. One handle per array: s3s-fs ignores
/// `If-Match` on GET, so a handle whose cached shard index another handle made stale would
/// read the new shard's bytes at the old offsets there (real S3 refuses them; the memory
/// and local stores test several handles).
struct S3;
impl Backend for S3 {
    type Model = Model<1>;
    type Keep = common::S3Server;
    fn start() -> (Store, common::S3Server) {
        let server = RUNTIME.block_on(common::S3Server::start(&["model"]));
        let store = Self::reopen_with(&server);
        (store, server)
    }
    fn reopen(_: &Store, server: &common::S3Server) -> Store {
        Self::reopen_with(server)
    }
    /// s3s-fs keeps the directories of deleted objects, and answers a GET or PUT of a key
    /// that is such a directory (a rank-2 array's chunk `c/0/0` where a rank-3 array had
    /// `c/0/0/0`) with 500 Internal Error. S3 has no directories: remove the empty ones so
    /// the server behaves like S3.
    fn tidy(server: &common::S3Server) {
        fn prune(dir: &std::path::Path) -> bool {
            let mut empty = true;
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if !(path.is_dir() && prune(&path) && std::fs::remove_dir(&path).is_ok()) {
                    empty = false;
                }
            }
            empty
        }
        prune(&server.root.path().join("model"));
    }
}
impl S3 {
    fn reopen_with(server: &common::S3Server) -> Store {
        // few, quick retries: a failing request fails the case instead of stalling it
        let options = server
            .options()
            .with_retries(1, std::time::Duration::from_secs(10));
        Store::open("s3://model/case", options).unwrap()
    }
}

/// The store and every open handle, by path.
struct Sut<B: Backend> {
    store: Store,
    keep: B::Keep,
    handles: BTreeMap<&'static str, Vec<Array>>,
}

fn key(path: &str) -> StoreKey {
    if path.is_empty() {
        StoreKey::root()
    } else {
        StoreKey::new(path).unwrap()
    }
}

fn options(cache: bool, layout: &Layout) -> ArrayOptions {
    ArrayOptions::default()
        .with_index_cache_bytes(if cache { 1 << 20 } else { 0 })
        // remembered shards (remote stores: the memory and S3 backends), which another
        // handle's writes make stale
        .with_write_cache_bytes(if cache { 1 << 20 } else { 0 })
        .with_store_empty_chunks(layout.store_empty_chunks)
}

fn spec(l: &Layout) -> ArraySpec {
    let shape: Vec<u64> = l.shape.iter().map(|&n| n as u64).collect();
    let mut spec = ArraySpec::new(shape, l.dtype.name())
        .fill_value(l.dtype.fill_json(l.fill))
        .unwrap()
        .shard_shape(l.chunks.clone());
    if let Some(inner) = &l.inner {
        spec = spec
            .inner_chunk_shape(inner.clone())
            .index_at_start(l.index_at_start);
    }
    match l.codec {
        Codec::Default => spec,
        Codec::Raw => spec.codecs([CodecSpec::bytes()]),
        Codec::Gzip => spec.codecs([CodecSpec::bytes(), CodecSpec::gzip(1)]),
        Codec::Crc32c => spec.codecs([CodecSpec::bytes(), CodecSpec::crc32c()]),
    }
}

/// Why zarrflow failed, in the model's terms (`None`: a failure the model never expects).
fn kind_of(e: &ArrayError) -> Option<Kind> {
    match e {
        ArrayError::Index(_) => Some(Kind::Selection),
        ArrayError::ShapeMismatch(_) => Some(Kind::Shape),
        ArrayError::DataTypeMismatch { .. } => Some(Kind::DataType),
        e if e.is_already_exists() => Some(Kind::Exists),
        _ => None,
    }
}

fn check_outcome<T>(what: &str, got: &Result<T, ArrayError>, want: Option<Kind>) {
    match (got, want) {
        (Ok(_), None) => {}
        (Err(e), Some(k)) if kind_of(e) == Some(k) => {}
        (Ok(_), Some(k)) => panic!("{what}: succeeded; the model refuses it ({k:?})"),
        (Err(e), want) => panic!("{what}: failed with `{e}` ({e:?}); the model expects {want:?}"),
    }
}

fn view_of(array: &Array, sel: &Sel) -> Result<ArrayView, ArrayError> {
    let text = sel.to_string();
    let parsed = Selection::parse(&text).unwrap_or_else(|e| panic!("parse `{text}`: {e}"));
    let view = array.view();
    match sel.mode {
        Mode::Basic => view.get(&parsed),
        Mode::Outer => view.oindex(&parsed),
        Mode::Vectorized => view.vindex(&parsed),
    }
}

async fn write_values(view: &ArrayView, dtype: Dtype, values: &Values) -> Result<(), ArrayError> {
    with_type!(dtype, T => match values {
        Values::Scalar(v) => view.write_scalar(T::from_f64(*v)).await,
        Values::Array(a) => view.write(&a.mapv(T::from_f64)).await,
    })
}

fn stage_values(
    batch: &mut WriteBatch,
    view: &ArrayView,
    dtype: Dtype,
    values: &Values,
) -> Result<(), ArrayError> {
    with_type!(dtype, T => match values {
        Values::Scalar(v) => batch.stage_scalar(view, T::from_f64(*v)),
        Values::Array(a) => batch.stage(view, &a.mapv(T::from_f64)),
    })
}

async fn read_values(view: &ArrayView, dtype: Dtype) -> Result<ArrayD<f64>, ArrayError> {
    with_type!(dtype, T => view.read::<T>().await.map(|a| a.mapv(Cell::to_f64)))
}

fn assert_same(what: &str, got: &ArrayD<f64>, want: &ArrayD<f64>) {
    assert!(
        numpy::same_array(got, want),
        "{what}: got {:?} {:?}, the model has {:?} {:?}",
        got.shape(),
        got.iter().collect::<Vec<_>>(),
        want.shape(),
        want.iter().collect::<Vec<_>>()
    );
}

/// Reads `array` whole and compares it with the model.
async fn check_whole(what: &str, array: &Array, model: &ModelArray) {
    let got = read_values(&array.view(), model.layout.dtype)
        .await
        .unwrap_or_else(|e| panic!("{what}: whole read failed: {e}"));
    assert_same(what, &got, &model.data);
}

impl<B: Backend> Sut<B> {
    fn handle(&self, at: &Target) -> &Array {
        &self.handles[at.path][at.handle]
    }

    async fn apply(&mut self, state: &ModelState, t: &Transition) {
        let what = format!("{t:?}");
        match t {
            Transition::Create {
                path,
                layout,
                overwrite,
                cache,
            } => {
                let (spec, opts) = (spec(layout), options(*cache, layout));
                let k = key(path);
                let got = if *overwrite {
                    Array::create_overwrite(&self.store, &k, &spec, opts).await
                } else {
                    Array::create(&self.store, &k, &spec, opts).await
                };
                // an overwrite deleted the old objects: tidy before reading the new array
                B::tidy(&self.keep);
                match &state.last {
                    Expected::Refused(kind) => check_outcome(&what, &got, Some(*kind)),
                    _ => {
                        let array = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                        check_whole(&what, &array, &state.arrays[path]).await;
                        self.handles.insert(path, vec![array]);
                    }
                }
            }
            Transition::Write {
                at,
                sel,
                values,
                as_type,
            } => {
                let array = self.handle(at);
                let got = async {
                    let view = view_of(array, sel)?;
                    write_values(&view, as_type.unwrap_or(at.dtype), values).await
                }
                .await;
                let want = match &state.last {
                    Expected::Refused(k) => Some(*k),
                    _ => None,
                };
                check_outcome(&what, &got, want);
                check_whole(&what, array, &state.arrays[at.path]).await;
            }
            Transition::Batch { at, writes } => {
                let array = self.handle(at);
                let Expected::Staged(want) = &state.last else {
                    unreachable!()
                };
                let mut batch = array.batch();
                for ((sel, values), want) in writes.iter().zip(want) {
                    let got = view_of(array, sel)
                        .and_then(|view| stage_values(&mut batch, &view, at.dtype, values));
                    check_outcome(&format!("{what}: staging {sel:?}"), &got, *want);
                }
                batch
                    .commit()
                    .await
                    .unwrap_or_else(|e| panic!("{what}: commit: {e}"));
                check_whole(&what, array, &state.arrays[at.path]).await;
            }
            Transition::Read { at, sel, as_type } => {
                let array = self.handle(at);
                let Expected::Read(want) = &state.last else {
                    unreachable!()
                };
                let got = async {
                    let view = match sel {
                        Some(sel) => view_of(array, sel)?,
                        None => array.view(),
                    };
                    read_values(&view, as_type.unwrap_or(at.dtype)).await
                }
                .await;
                check_outcome(&what, &got, want.as_ref().err().copied());
                if let (Ok(got), Ok(want)) = (&got, want) {
                    assert_same(&what, got, want);
                }
            }
            Transition::OpenHandle { path, cache } => {
                let m = &state.arrays[path];
                let array = Array::open_in(&self.store, &key(path), options(*cache, &m.layout))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                self.handles.get_mut(path).unwrap().push(array);
            }
            Transition::Delete { path } => {
                self.store
                    .delete_prefix(&key(path))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                self.handles.remove(path);
            }
            Transition::DeletePrefix { prefix } => {
                self.store
                    .delete_prefix(&key(prefix))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                self.handles.retain(|p, _| !under(p, prefix));
            }
            Transition::Reopen { cache } => {
                self.reopen(state, *cache).await;
            }
        }
    }

    /// Drops every handle, opens the store again and one handle of every model array.
    async fn reopen(&mut self, state: &ModelState, cache: bool) {
        self.handles.clear();
        self.store = B::reopen(&self.store, &self.keep);
        for (&path, m) in &state.arrays {
            let array = Array::open_in(&self.store, &key(path), options(cache, &m.layout))
                .await
                .unwrap_or_else(|e| panic!("reopen {path}: {e}"));
            self.handles.insert(path, vec![array]);
        }
    }

    /// The store holds exactly the model's arrays: each `zarr.json`, and no object outside
    /// them.
    async fn check_listing(&self, state: &ModelState) {
        let keys = self.store.list_prefix(&StoreKey::root()).await.unwrap();
        let keys: Vec<&str> = keys.iter().map(StoreKey::as_str).collect();
        for k in &keys {
            assert!(
                state.arrays.keys().any(|p| k.starts_with(&format!("{p}/"))),
                "object {k} belongs to no array of the model {:?}",
                state.arrays.keys().collect::<Vec<_>>()
            );
        }
        for p in state.arrays.keys() {
            let meta = format!("{p}/zarr.json");
            assert!(
                keys.contains(&meta.as_str()),
                "{meta} missing; the store holds {keys:?}"
            );
        }
    }
}

/// The test of one store kind.
struct ModelTest<B>(std::marker::PhantomData<B>);

impl<B: Backend> StateMachineTest for ModelTest<B> {
    type SystemUnderTest = Sut<B>;
    type Reference = B::Model;

    fn init_test(_: &ModelState) -> Sut<B> {
        let (store, keep) = B::start();
        Sut {
            store,
            keep,
            handles: BTreeMap::new(),
        }
    }

    fn apply(mut sut: Sut<B>, state: &ModelState, t: Transition) -> Sut<B> {
        RUNTIME.block_on(sut.apply(state, &t));
        B::tidy(&sut.keep);
        sut
    }

    fn check_invariants(sut: &Sut<B>, state: &ModelState) {
        RUNTIME.block_on(sut.check_listing(state));
    }

    fn teardown(mut sut: Sut<B>, state: ModelState) {
        RUNTIME.block_on(async {
            sut.reopen(&state, true).await;
            for (path, m) in &state.arrays {
                check_whole(
                    &format!("after reopening, {path}"),
                    &sut.handles[path][0],
                    m,
                )
                .await;
            }
        });
    }
}

/// Cases per store: `PROPTEST_CASES` when set, else `default`.
fn config(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        max_shrink_iters: 4096,
        // a failing case shrinks for at most this long (ms): a failure stays quick to report
        max_shrink_time: 60_000,
        ..ProptestConfig::default()
    }
}

prop_state_machine! {
    #![proptest_config(config(384))]
    #[test]
    fn memory_store_matches_the_model(sequential 1..30 => ModelTest<Memory>);
}

prop_state_machine! {
    #![proptest_config(config(96))]
    #[test]
    fn local_store_matches_the_model(sequential 1..30 => ModelTest<Local>);
}

prop_state_machine! {
    #![proptest_config(config(24))]
    #[test]
    fn s3_store_matches_the_model(sequential 1..30 => ModelTest<S3>);
}
