//! [`WriteBatch`]: stage many writes, touch each shard once.

use ndarray::{ArrayBase, Data, Dimension};

use crate::codec::vlen::number_values;

use super::error::{ArrayError, Result};
use super::fixed_text::{fixed_text_of, stored_text};
use super::vlen::Emptied;
use super::write::StagedWrite;
use super::{Array, ArrayView, Element, VlenElement};

/// What a staged value of a `string` or `bytes` array costs beyond its bytes: its `Vec`
/// header and the allocator's least block.
const STORED_VALUE_OVERHEAD: usize = std::mem::size_of::<Vec<u8>>() + 32;

/// Default [`WriteBatch::with_max_bytes`]: 256 MiB of staged values.
pub const DEFAULT_BATCH_MAX_BYTES: usize = 256 << 20;

/// Stages writes to one array and applies them together: each touched shard is read (if
/// needed) once and written once, with the staged writes applied in order.
///
/// Dropping a batch without [`commit`](Self::commit) writes nothing. Staged values are kept
/// in memory (scalars as one element); staging more than the byte budget
/// ([`with_max_bytes`](Self::with_max_bytes), 256 MiB by default) is refused, so commit
/// before staging more. Values of a `string` or `bytes` array are staged with
/// [`stage_vlen`](Self::stage_vlen).
#[derive(Debug)]
#[must_use = "a batch writes nothing until it is committed"]
pub struct WriteBatch {
    array: Array,
    staged: Vec<StagedWrite<'static>>,
    /// The values of a `string` or `bytes` array's staged writes (never the fill value):
    /// the staged handles are their positions + 1 (0 is the fill value), as the array's
    /// pool numbers them once they are loaded into it at commit.
    vlen: Vec<Vec<u8>>,
    bytes: usize,
    max_bytes: usize,
}

impl WriteBatch {
    pub(crate) fn new(array: Array) -> WriteBatch {
        WriteBatch {
            array,
            staged: Vec::new(),
            vlen: Vec::new(),
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
        self.check_view(view)?;
        let staged = view.stage(values, shape)?.into_owned();
        let size = staged.values.len();
        self.check_budget(size)?;
        self.bytes += size;
        self.staged.push(staged);
        Ok(())
    }

    /// Stages values of a `string` (`T = String`) or `bytes` (`T = Vec<u8>`) array (or of a
    /// fixed-width text array, read and written as those types) for `view`, broadcast to
    /// the view's shape, as [`ArrayView::write_vlen`] writes them. The budget counts 8 bytes
    /// per element and, per value other than the fill value, its bytes and 56 bytes of
    /// allocation (a fixed-width text array: its stored bytes, checked before they are
    /// built).
    ///
    /// ```
    /// # use zarrflow::{Array, ArraySpec, DataType, sel};
    /// # zarrflow::block_on(async {
    /// let spec = ArraySpec::with_data_type([4], DataType::String).shard_shape([4]);
    /// let a = Array::create_at("memory://", &spec).await.unwrap();
    /// let mut batch = a.batch();
    /// let words = ndarray::arr1(&["a".to_string(), "b".to_string()]);
    /// batch.stage_vlen(&a.view().get(&sel![0..2]).unwrap(), &words).unwrap();
    /// batch.stage_vlen(&a.view().get(&sel![3]).unwrap(), &ndarray::arr0("d".to_string())).unwrap();
    /// batch.commit().await.unwrap();
    /// let got = a.view().read_vlen::<String>().await.unwrap();
    /// assert_eq!(got.as_slice().unwrap(), ["a", "b", "", "d"]);
    /// # }).unwrap();
    /// ```
    pub fn stage_vlen<T, S, D>(&mut self, view: &ArrayView, values: &ArrayBase<S, D>) -> Result<()>
    where
        T: VlenElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        self.check_view(view)?;
        let shape: Vec<u64> = values.shape().iter().map(|&n| n as u64).collect();
        if let Some(text) = fixed_text_of::<T>(view.array().data_type()) {
            // refused from its size before the padded values are built
            self.check_budget(values.len().saturating_mul(text.size()))?;
            return self.stage_bytes(view, &stored_text(text, values)?, &shape);
        }
        let pool = view.vlen_pool::<T>()?;
        // 8 bytes per handle; each stored value its bytes and its own allocation
        let size = values
            .iter()
            .map(|v| match v.element_bytes() {
                b if b == pool.fill() => 0,
                b => b.len().saturating_add(STORED_VALUE_OVERHEAD),
            })
            .fold(values.len().saturating_mul(8), usize::saturating_add);
        self.check_budget(size)?;
        let first = self.vlen.len();
        let elements = values.iter().map(VlenElement::element_bytes);
        let handles = number_values(pool.fill(), elements, &mut self.vlen);
        match view.stage_unchecked(bytemuck::cast_slice(&handles), &shape) {
            Ok(staged) => {
                self.bytes += size;
                self.staged.push(staged.into_owned());
                Ok(())
            }
            Err(e) => {
                self.vlen.truncate(first);
                Err(e)
            }
        }
    }

    /// Stages one value of a `string` or `bytes` array for every cell of `view`.
    pub fn stage_vlen_scalar<T: VlenElement>(&mut self, view: &ArrayView, value: T) -> Result<()> {
        self.stage_vlen(view, &ndarray::arr0(value))
    }

    /// Fails unless `view` is a view of this batch's array.
    fn check_view(&self, view: &ArrayView) -> Result<()> {
        if !std::sync::Arc::ptr_eq(&view.array().shared, &self.array.shared) {
            return Err(ArrayError::Unsupported(
                "a batch stages writes of views of its own array only".into(),
            ));
        }
        Ok(())
    }

    /// Fails when staging `size` more bytes would pass the budget.
    fn check_budget(&self, size: usize) -> Result<()> {
        if self.bytes.saturating_add(size) > self.max_bytes {
            return Err(ArrayError::TooLarge(format!(
                "staging {size} more bytes exceeds the batch budget of {} bytes; commit first",
                self.max_bytes
            )));
        }
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
        let shared = &self.array.shared;
        let Some(vlen) = self.array.metadata().vlen() else {
            return super::write::write(shared, &self.staged).await;
        };
        // A `string` or `bytes` array: its pool holds the staged values for the write's
        // encoders, numbered as they were staged, for the write's duration only.
        let pool = vlen.pool().clone();
        let _session = pool.session().lock().await;
        let _emptied = Emptied(&pool);
        pool.load(self.vlen);
        super::write::write(shared, &self.staged).await
    }
}
