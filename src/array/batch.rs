//! [`WriteBatch`]: stage many writes, touch each shard once.

use super::error::{ArrayError, Result};
use super::write::StagedWrite;
use super::{Array, ArrayView, Element};

/// Default [`WriteBatch::with_max_bytes`]: 256 MiB of staged values.
pub const DEFAULT_BATCH_MAX_BYTES: usize = 256 << 20;

/// Stages writes to one array and applies them together: each touched shard is read (if
/// needed) once and written once, with the staged writes applied in order.
///
/// Dropping a batch without [`commit`](Self::commit) writes nothing. Staged values are kept
/// in memory (scalars as one element); staging more than the byte budget
/// ([`with_max_bytes`](Self::with_max_bytes), 256 MiB by default) is refused, so commit
/// before staging more.
#[derive(Debug)]
#[must_use = "a batch writes nothing until it is committed"]
pub struct WriteBatch {
    array: Array,
    staged: Vec<StagedWrite<'static>>,
    bytes: usize,
    max_bytes: usize,
}

impl WriteBatch {
    pub(crate) fn new(array: Array) -> WriteBatch {
        WriteBatch {
            array,
            staged: Vec::new(),
            bytes: 0,
            max_bytes: DEFAULT_BATCH_MAX_BYTES,
        }
    }

    /// Sets the byte budget of staged values.
    pub fn with_max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Number of staged writes.
    pub fn len(&self) -> usize {
        self.staged.len()
    }

    /// True if nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Bytes of staged values.
    pub fn staged_bytes(&self) -> usize {
        self.bytes
    }

    /// Stages values given as C-order native-endian bytes of `shape` for `view` (a view of
    /// this batch's array), broadcast to the view's shape.
    pub fn stage_bytes(&mut self, view: &ArrayView, values: &[u8], shape: &[u64]) -> Result<()> {
        if !std::sync::Arc::ptr_eq(&view.array().shared, &self.array.shared) {
            return Err(ArrayError::Unsupported(
                "a batch stages writes of views of its own array only".into(),
            ));
        }
        let staged = view.stage(values, shape)?.into_owned();
        let size = staged.values.len();
        if self.bytes + size > self.max_bytes {
            return Err(ArrayError::TooLarge(format!(
                "staging {size} more bytes exceeds the batch budget of {} bytes; commit first",
                self.max_bytes
            )));
        }
        self.bytes += size;
        self.staged.push(staged);
        Ok(())
    }

    /// Stages an array of values (any ndarray array or view of the element type) for
    /// `view`.
    pub fn stage<T, S, D>(
        &mut self,
        view: &ArrayView,
        values: &ndarray::ArrayBase<S, D>,
    ) -> Result<()>
    where
        T: Element,
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        view.check_element::<T>()?;
        let flat: Vec<T> = values.iter().copied().collect();
        let shape: Vec<u64> = values.shape().iter().map(|&n| n as u64).collect();
        self.stage_bytes(view, &T::to_ne_bytes_vec(&flat), &shape)
    }

    /// Stages one value for every cell of `view`.
    pub fn stage_scalar<T: Element>(&mut self, view: &ArrayView, value: T) -> Result<()> {
        view.check_element::<T>()?;
        self.stage_bytes(view, &T::to_ne_bytes_vec(&[value]), &[])
    }

    /// Applies every staged write, touching each shard (or chunk) once. Dropping a batch
    /// without calling this writes nothing.
    pub async fn commit(self) -> Result<()> {
        super::write::write(&self.array.shared, &self.staged).await
    }
}
