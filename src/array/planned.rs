//! Plans executed as a stream: the rows of a plan are lowered a batch at a time, as the
//! executor asks for them, so the memory a plan takes is that of the batch and the work in
//! flight, never one operation per touched chunk of the request.

use rayon::prelude::*;

use crate::plan::RowIter;

use super::error::Result;
use super::pool::run_parallel;

/// Rows lowered at once. A request touching at most this many shards (or chunks) is
/// planned whole before its first request, as before streaming; larger ones are planned a
/// batch at a time while earlier shards are being read or written.
pub(super) const PLAN_BATCH: usize = 256;

/// Fewer rows than this are planned on the calling thread, more on rayon's pool.
const PARALLEL_PLAN_ROWS: usize = 8;

/// The lowering of one plan row (a touched shard or chunk).
type PlanRow<T> = Box<dyn Fn(&[usize]) -> Result<T> + Send + Sync>;

/// The planned work of one plan, in plan order, lowered [`PLAN_BATCH`] rows at a time (the
/// first batch when it is made, so that its planning errors surface before any request).
pub(super) struct Planned<T> {
    rows: RowIter,
    plan_row: PlanRow<T>,
    ready: std::vec::IntoIter<Result<T>>,
    len: u128,
}

impl<T: Send> Planned<T> {
    /// The rows `rows` (there are `len`) lowered with `plan_row`; plans the first batch now
    /// and fails with its first error.
    pub(super) fn new(
        rows: RowIter,
        len: u128,
        plan_row: impl Fn(&[usize]) -> Result<T> + Send + Sync + 'static,
    ) -> Result<Self> {
        let mut planned = Planned {
            rows,
            plan_row: Box::new(plan_row),
            ready: Vec::new().into_iter(),
            len,
        };
        let first: Vec<Result<T>> = planned.lower_batch();
        let first = first.into_iter().collect::<Result<Vec<T>>>()?;
        planned.ready = first.into_iter().map(Ok).collect::<Vec<_>>().into_iter();
        Ok(planned)
    }

    /// Number of rows (touched shards or chunks) in all.
    pub(super) fn len(&self) -> u128 {
        self.len
    }

    /// Lowers the next batch of rows, in parallel when there are many.
    fn lower_batch(&mut self) -> Vec<Result<T>> {
        let rows: Vec<Vec<usize>> = self.rows.by_ref().take(PLAN_BATCH).collect();
        let plan_row = &self.plan_row;
        if rows.len() < PARALLEL_PLAN_ROWS {
            return rows.iter().map(|r| plan_row(r)).collect();
        }
        run_parallel(|| rows.par_iter().map(|r| plan_row(r)).collect())
    }
}

impl<T: Send> Iterator for Planned<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        if let Some(item) = self.ready.next() {
            return Some(item);
        }
        self.ready = self.lower_batch().into_iter();
        self.ready.next()
    }
}
