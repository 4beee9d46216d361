//! The touched inner chunks of one shard being written, produced lazily in ascending C
//! order: [`InnerTargets`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::plan::{ChunkOp, ChunkOrderRows, ShardWork};

use super::error::Result;
use super::inner_chunk_index;

/// Inner chunks a shard write lowers and encodes at once: its memory holds this many inner
/// chunks' operations and encodings, never one per inner chunk of the shard (the read path
/// hands its parts over as many at a time).
pub(super) const INNER_BATCH: usize = 1024;

/// One touched inner chunk: its linear index (C order in the shard) and the operations of
/// every write touching it, in write order, composed into that write's values.
pub(super) type InnerTarget = (usize, Vec<(usize, ChunkOp)>);

/// The next row of one write's inner walk: the inner chunk's linear index, the write's
/// position in the target, the row.
type Head = (usize, usize, Vec<usize>);

/// The inner chunks that the writes touching one shard touch, in ascending linear index,
/// each with the inner operations of every such write in write order. Each write's inner
/// plan is walked in chunk order ([`ChunkOrderRows`]) and the walks merged, so an inner
/// chunk's operations are lowered only when it is reached: the state is one row per write.
pub(super) struct InnerTargets<'t> {
    works: &'t [(usize, ShardWork)],
    chunks_per_shard: &'t [u64],
    walks: Vec<ChunkOrderRows<'t>>,
    /// The next row of each walk, smallest inner chunk first.
    heads: BinaryHeap<Reverse<Head>>,
    failed: bool,
}

impl<'t> InnerTargets<'t> {
    /// The touched inner chunks of `works` (the shard work of each write touching the
    /// shard, in write order) in a shard of `chunks_per_shard` inner chunks.
    pub(super) fn new(
        works: &'t [(usize, ShardWork)],
        chunks_per_shard: &'t [u64],
    ) -> Result<Self> {
        let mut targets = InnerTargets {
            works,
            chunks_per_shard,
            walks: Vec::with_capacity(works.len()),
            heads: BinaryHeap::with_capacity(works.len()),
            failed: false,
        };
        for (i, (_, work)) in works.iter().enumerate() {
            let mut walk = work.inner.partition()?.rows_in_chunk_order();
            if let Some((row, coords)) = walk.next() {
                let linear = inner_chunk_index(&coords, chunks_per_shard)?;
                targets.heads.push(Reverse((linear, i, row)));
            }
            targets.walks.push(walk);
        }
        Ok(targets)
    }

    /// Moves walk `i` on to its next row.
    fn advance(&mut self, i: usize) -> Result<()> {
        if let Some((row, coords)) = self.walks[i].next() {
            let linear = inner_chunk_index(&coords, self.chunks_per_shard)?;
            self.heads.push(Reverse((linear, i, row)));
        }
        Ok(())
    }

    fn next_target(&mut self) -> Option<Result<InnerTarget>> {
        let Reverse((linear, i, row)) = self.heads.pop()?;
        let mut rows = vec![(i, row)];
        while let Some(Reverse((next, ..))) = self.heads.peek()
            && *next == linear
        {
            if let Some(Reverse((_, j, row))) = self.heads.pop() {
                rows.push((j, row));
            }
        }
        // Works are in write order: operations apply in that order.
        rows.sort_unstable_by_key(|(i, _)| *i);
        let lowered = (|| {
            let mut ops = Vec::with_capacity(rows.len());
            for (i, row) in &rows {
                self.advance(*i)?;
                let (w, work) = &self.works[*i];
                ops.push((*w, work.compose(work.inner.op_at(row)?)?));
            }
            Ok((linear, ops))
        })();
        Some(lowered)
    }
}

impl Iterator for InnerTargets<'_> {
    type Item = Result<InnerTarget>;

    fn next(&mut self) -> Option<Result<InnerTarget>> {
        if self.failed {
            return None;
        }
        let target = self.next_target()?;
        self.failed = target.is_err();
        Some(target)
    }
}
