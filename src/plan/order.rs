//! [`ChunkOrderRows`]: a plan's rows in ascending order of their chunk coordinates, produced
//! lazily (the order several plans are merged in, one chunk at a time).

use super::{GridPartition, RowIter, Table};

/// The rows of a partition in lexicographic order of their chunk coordinates (first
/// storage dimension most significant), each with its coordinates; lazy, O(rank) state
/// beyond one permutation of each diagonal table's rows.
///
/// Every row of a plan has distinct chunk coordinates (each table's rows bind distinct
/// chunk tuples over disjoint storage dimensions), so the order is strict. When the
/// tables' storage dimensions, in table order, are `0, 1, 2, ...` (every plan without
/// diagonal and interleaved joint tables) this is the row-major order of
/// [`GridPartition::rows`]; otherwise the iterator walks each storage dimension in turn,
/// narrowing each table's rows to the run sharing the coordinates chosen so far.
#[derive(Debug, Clone)]
pub struct ChunkOrderRows<'a> {
    p: &'a GridPartition,
    /// Per table: positions in chunk order → row (`None`: the rows are in chunk order).
    order: Vec<Option<Vec<usize>>>,
    /// Per storage dimension (level): its table and its member index in that table.
    level: Vec<(usize, usize)>,
    /// Per level: the nearest shallower level of the same table.
    parent: Vec<Option<usize>>,
    /// Per level: the current run of equal coordinates `[lo, hi)` (sorted positions) and
    /// the range it was taken from.
    run: Vec<(usize, usize)>,
    within: Vec<(usize, usize)>,
    started: bool,
    done: bool,
    /// Row-major order when it is chunk order.
    row_major: Option<RowIter>,
}

impl<'a> ChunkOrderRows<'a> {
    pub(crate) fn new(p: &'a GridPartition) -> Self {
        let rank = p.dim_table.len();
        let empty = p.empty || p.row_shape.contains(&0);
        let row_major = row_major_is_chunk_order(p).then(|| p.rows());
        let mut level = Vec::with_capacity(rank);
        for d in 0..rank {
            let t = p.dim_table[d];
            let m = p.tables.get(t).map_or(0, |table| {
                table.dims().iter().position(|&x| x == d).unwrap_or(0)
            });
            level.push((t, m));
        }
        let parent = (0..rank)
            .map(|d| (0..d).rev().find(|&e| level[e].0 == level[d].0))
            .collect();
        let order = p
            .tables
            .iter()
            .map(|table| match table {
                Table::Diagonal(s) if row_major.is_none() => {
                    let mut perm: Vec<usize> = (0..s.len()).collect();
                    perm.sort_by(|&a, &b| {
                        let (ca, cb) = (s.cells(a), s.cells(b));
                        ca.iter().map(|c| c.chunk).cmp(cb.iter().map(|c| c.chunk))
                    });
                    Some(perm)
                }
                _ => None,
            })
            .collect();
        ChunkOrderRows {
            p,
            order,
            level,
            parent,
            run: vec![(0, 0); rank],
            within: vec![(0, 0); rank],
            started: false,
            done: empty,
            row_major,
        }
    }

    /// Chunk coordinate of member `m` of table `t` at sorted position `pos`.
    fn coord(&self, t: usize, pos: usize, m: usize) -> i64 {
        let r = self.order[t].as_ref().map_or(pos, |perm| perm[pos]);
        match &self.p.tables[t] {
            Table::Strided(s) => s.row(r).chunk,
            Table::Indexed(s) => s.chunks()[r],
            Table::Diagonal(s) => s.cells(r)[m].chunk,
            Table::Joint(s) => s.chunk_row(r)[m],
        }
    }

    /// Starts level `d` at the first run of the range its parent level leaves.
    fn enter(&mut self, d: usize) {
        let (t, _) = self.level[d];
        let within = match self.parent[d] {
            Some(e) => self.run[e],
            None => (0, self.p.tables[t].len()),
        };
        self.within[d] = within;
        self.run[d] = (within.0, self.run_end(d, within.0));
    }

    /// End of the run of equal coordinates at level `d` starting at sorted position `lo`.
    fn run_end(&self, d: usize, lo: usize) -> usize {
        let (t, m) = self.level[d];
        let hi = self.within[d].1;
        let c = self.coord(t, lo, m);
        let mut end = lo + 1;
        while end < hi && self.coord(t, end, m) == c {
            end += 1;
        }
        end
    }

    fn current(&self) -> (Vec<usize>, Vec<i64>) {
        let p = self.p;
        let mut row = vec![0usize; p.tables.len()];
        let mut coords = vec![0i64; self.level.len()];
        for (d, &(t, m)) in self.level.iter().enumerate() {
            let pos = self.run[d].0;
            row[t] = self.order[t].as_ref().map_or(pos, |perm| perm[pos]);
            coords[d] = self.coord(t, pos, m);
        }
        (row, coords)
    }
}

impl Iterator for ChunkOrderRows<'_> {
    /// The row (one index per table) and its chunk coordinates.
    type Item = (Vec<usize>, Vec<i64>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(rows) = &mut self.row_major {
            let row = rows.next()?;
            let coords = self.p.chunk_coords_at(&row).ok()?;
            return Some((row, coords));
        }
        if self.done {
            return None;
        }
        let rank = self.level.len();
        if !self.started {
            self.started = true;
            for d in 0..rank {
                self.enter(d);
            }
            if rank == 0 {
                self.done = true;
            }
            return Some(self.current());
        }
        // Advance the deepest level that has another run, then restart the levels below.
        let mut d = rank;
        loop {
            if d == 0 {
                self.done = true;
                return None;
            }
            d -= 1;
            let (_, hi) = self.run[d];
            if hi < self.within[d].1 {
                self.run[d] = (hi, self.run_end(d, hi));
                break;
            }
        }
        for e in d + 1..rank {
            self.enter(e);
        }
        Some(self.current())
    }
}

/// True when row-major order over the tables is chunk order: the tables' storage
/// dimensions, in table order, are `0, 1, 2, ...` and no table needs sorting.
pub(crate) fn row_major_is_chunk_order(p: &GridPartition) -> bool {
    let mut next = 0usize;
    for table in &p.tables {
        if matches!(table, Table::Diagonal(s) if s.len() > 1) {
            return false;
        }
        for d in table.dims() {
            if d != next {
                return false;
            }
            next += 1;
        }
    }
    true
}
