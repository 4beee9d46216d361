//! The reference: NumPy's indexing rules on an `ndarray::ArrayD<f64>`, written from NumPy's
//! documentation without any zarrflow code (positional integers wrap, slices follow
//! `slice.indices`, `oindex` is `np.ix_`, `vindex` is NumPy advanced indexing with its
//! placement rule, assignment broadcasts and the last of repeated points wins).

use std::fmt;

use ndarray::{ArrayD, IxDyn};

/// How index arrays are read (zarr-python's `__getitem__`, `oindex`, `vindex`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Integers, slices, `...` and `None` only.
    Basic,
    /// Orthogonal: each list selects along its own dimension.
    Outer,
    /// NumPy advanced indexing: lists (and integers) broadcast together and select points.
    Vectorized,
}

/// One item of a selection, as NumPy sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// An integer (negative counts from the end).
    Index(i64),
    /// `start:stop:step`, each part optional.
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// A 1-D list of integers.
    Array(Vec<i64>),
    /// A 1-D boolean mask.
    Mask(Vec<bool>),
    /// `...`.
    Ellipsis,
    /// `None`.
    NewAxis,
}

/// A selection: a mode and its items. `Display` gives the text `Selection::parse` reads.
#[derive(Clone, PartialEq)]
pub struct Sel {
    /// The mode.
    pub mode: Mode,
    /// The items.
    pub items: Vec<Item>,
}

impl fmt::Display for Sel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match item {
                Item::Index(v) => write!(f, "{v}")?,
                Item::Slice(a, b, c) => {
                    let part = |v: &Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
                    write!(f, "{}:{}", part(a), part(b))?;
                    if let Some(c) = c {
                        write!(f, ":{c}")?;
                    }
                }
                Item::Array(v) => {
                    let v: Vec<String> = v.iter().map(i64::to_string).collect();
                    write!(f, "[{}]", v.join(","))?;
                }
                Item::Mask(v) => {
                    let v: Vec<&str> = v
                        .iter()
                        .map(|&b| if b { "true" } else { "false" })
                        .collect();
                    write!(f, "[{}]", v.join(","))?;
                }
                Item::Ellipsis => f.write_str("...")?,
                Item::NewAxis => f.write_str("None")?,
            }
        }
        Ok(())
    }
}

/// Failures print `a[..]`, `a.oindex[..]` or `a.vindex[..]`, as one would type them in Python.
impl fmt::Debug for Sel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.mode {
            Mode::Basic => "",
            Mode::Outer => ".oindex",
            Mode::Vectorized => ".vindex",
        };
        write!(f, "a{prefix}[{self}]")
    }
}

/// What NumPy refuses (the kind of error the library must return).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `IndexError` / `ValueError` of the selection itself.
    Selection,
    /// The values do not broadcast to the selection's shape.
    Shape,
}

/// A selection applied to a shape: the result shape and, for every result cell in C order,
/// the array cell it reads or writes.
#[derive(Clone, Debug)]
pub struct Indexed {
    /// The result shape.
    pub shape: Vec<usize>,
    /// The array coordinates of each result cell, C order of the result.
    pub cells: Vec<Vec<usize>>,
}

/// Python's `slice(start, stop, step).indices(n)`, expanded.
pub fn slice_indices(start: Option<i64>, stop: Option<i64>, step: i64, n: i64) -> Vec<usize> {
    let (lower, upper) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let clamp = |v: Option<i64>, default: i64| match v {
        None => default,
        Some(v) if v < 0 => (v + n).max(lower),
        Some(v) => v.min(upper),
    };
    let (start, stop) = if step > 0 {
        (clamp(start, lower), clamp(stop, upper))
    } else {
        (clamp(start, upper), clamp(stop, lower))
    };
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i as usize);
        i += step;
    }
    out
}

fn wrap(i: i64, n: usize) -> Result<usize, Refusal> {
    let n = n as i64;
    if (-n..n).contains(&i) {
        Ok(if i < 0 { i + n } else { i } as usize)
    } else {
        Err(Refusal::Selection)
    }
}

/// One result axis before enumeration.
enum Axis {
    /// Walks these coordinates of a dimension.
    Dim(usize, Vec<usize>),
    /// `None`: extent 1, reads no dimension.
    New,
    /// The broadcast axis of vectorized indexing (its extent).
    Points(usize),
}

/// Applies `sel` to an array of `shape` with NumPy's rules.
pub fn index(shape: &[usize], sel: &Sel) -> Result<Indexed, Refusal> {
    let rank = shape.len();
    let consumed = sel
        .items
        .iter()
        .filter(|i| !matches!(i, Item::Ellipsis | Item::NewAxis))
        .count();
    let ellipses = sel.items.iter().filter(|i| **i == Item::Ellipsis).count();
    if consumed > rank || ellipses > 1 {
        return Err(Refusal::Selection);
    }
    // Expand `...` (or the implicit trailing one) into full slices; remember which item
    // each expanded entry came from (adjacency of advanced indices is judged on items).
    let mut expanded: Vec<(usize, Item)> = Vec::new();
    for (pos, item) in sel.items.iter().enumerate() {
        if *item == Item::Ellipsis {
            for _ in 0..rank - consumed {
                expanded.push((pos, Item::Slice(None, None, None)));
            }
        } else {
            expanded.push((pos, item.clone()));
        }
    }
    if ellipses == 0 {
        for _ in 0..rank - consumed {
            expanded.push((sel.items.len(), Item::Slice(None, None, None)));
        }
    }
    let has_arrays = sel
        .items
        .iter()
        .any(|i| matches!(i, Item::Array(_) | Item::Mask(_)));
    if sel.mode == Mode::Basic && has_arrays {
        return Err(Refusal::Selection);
    }
    let vectorized = sel.mode == Mode::Vectorized && has_arrays;

    let mut fixed: Vec<Option<usize>> = vec![None; rank];
    let mut axes: Vec<Axis> = Vec::new();
    // vectorized: (dimension, coordinates; one coordinate = an integer, broadcast)
    let mut advanced: Vec<(usize, Vec<usize>, bool)> = Vec::new();
    let mut advanced_items: Vec<usize> = Vec::new();
    let mut points_at: Option<usize> = None;
    let mut dim = 0;
    for (pos, item) in &expanded {
        match item {
            Item::NewAxis => axes.push(Axis::New),
            Item::Ellipsis => unreachable!("expanded"),
            Item::Index(i) => {
                let c = wrap(*i, shape[dim])?;
                if vectorized {
                    advanced.push((dim, vec![c], true));
                    advanced_items.push(*pos);
                    points_at.get_or_insert(axes.len());
                } else {
                    fixed[dim] = Some(c);
                }
                dim += 1;
            }
            Item::Slice(a, b, c) => {
                let step = c.unwrap_or(1);
                if step == 0 {
                    return Err(Refusal::Selection);
                }
                axes.push(Axis::Dim(
                    dim,
                    slice_indices(*a, *b, step, shape[dim] as i64),
                ));
                dim += 1;
            }
            Item::Array(v) => {
                let coords = v
                    .iter()
                    .map(|&i| wrap(i, shape[dim]))
                    .collect::<Result<Vec<_>, _>>()?;
                if vectorized {
                    advanced.push((dim, coords, false));
                    advanced_items.push(*pos);
                    points_at.get_or_insert(axes.len());
                } else {
                    axes.push(Axis::Dim(dim, coords));
                }
                dim += 1;
            }
            Item::Mask(m) => {
                if m.len() != shape[dim] || vectorized {
                    return Err(Refusal::Selection);
                }
                let coords = m
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b)
                    .map(|(i, _)| i)
                    .collect();
                axes.push(Axis::Dim(dim, coords));
                dim += 1;
            }
        }
    }
    if vectorized {
        let lens: Vec<usize> = advanced
            .iter()
            .filter(|a| !a.2)
            .map(|a| a.1.len())
            .collect();
        let n = lens.iter().copied().find(|&l| l != 1).unwrap_or(1);
        if lens.iter().any(|&l| l != n && l != 1) {
            return Err(Refusal::Selection);
        }
        // Adjacent advanced items keep their place; separated ones (by a slice, `...` or
        // `None`) put the broadcast axis first.
        let adjacent = advanced_items.windows(2).all(|w| w[1] == w[0] + 1);
        let at = if adjacent { points_at.unwrap_or(0) } else { 0 };
        axes.insert(at, Axis::Points(n));
    }

    let out_shape: Vec<usize> = axes
        .iter()
        .map(|a| match a {
            Axis::Dim(_, c) => c.len(),
            Axis::New => 1,
            Axis::Points(n) => *n,
        })
        .collect();
    let total: usize = out_shape.iter().product();
    let mut cells = Vec::with_capacity(total);
    for flat in 0..total {
        let mut rest = flat;
        let mut pos = vec![0usize; out_shape.len()];
        for k in (0..out_shape.len()).rev() {
            pos[k] = rest % out_shape[k];
            rest /= out_shape[k];
        }
        let mut coords: Vec<usize> = fixed.iter().map(|c| c.unwrap_or(0)).collect();
        for (k, axis) in axes.iter().enumerate() {
            match axis {
                Axis::Dim(d, c) => coords[*d] = c[pos[k]],
                Axis::New => {}
                Axis::Points(_) => {
                    for (d, c, _) in &advanced {
                        coords[*d] = if c.len() == 1 { c[0] } else { c[pos[k]] };
                    }
                }
            }
        }
        cells.push(coords);
    }
    Ok(Indexed {
        shape: out_shape,
        cells,
    })
}

/// `a[sel]`.
pub fn read(a: &ArrayD<f64>, sel: &Sel) -> Result<ArrayD<f64>, Refusal> {
    let ix = index(a.shape(), sel)?;
    let data = ix.cells.iter().map(|c| a[IxDyn(c)]).collect();
    Ok(ArrayD::from_shape_vec(IxDyn(&ix.shape), data).expect("cells match the shape"))
}

/// NumPy's assignment broadcast of `values` to `target`: leading 1s of the values may be
/// dropped, then dimensions are right-aligned and each is equal or 1.
pub fn broadcast(values: &ArrayD<f64>, target: &[usize]) -> Result<ArrayD<f64>, Refusal> {
    let mut shape = values.shape().to_vec();
    while shape.len() > target.len() && shape[0] == 1 {
        shape.remove(0);
    }
    let v = values.to_shape(IxDyn(&shape)).map_err(|_| Refusal::Shape)?;
    v.broadcast(IxDyn(target))
        .map(|b| b.to_owned())
        .ok_or(Refusal::Shape)
}

/// `a[sel] = values`: checks everything before changing a cell; repeated points keep the
/// last value in C order of the selection.
pub fn write(a: &mut ArrayD<f64>, sel: &Sel, values: &ArrayD<f64>) -> Result<(), Refusal> {
    let ix = index(a.shape(), sel)?;
    let v = broadcast(values, &ix.shape)?;
    for (cell, value) in ix.cells.iter().zip(v.iter()) {
        a[IxDyn(cell)] = *value;
    }
    Ok(())
}

/// Equal as stored values: same bits, or both NaN.
pub fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Equal shapes and [`same`] cells.
pub fn same_array(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape() && a.iter().zip(b.iter()).all(|(x, y)| same(*x, *y))
}

#[cfg(test)]
mod tests {
    // Cases checked against NumPy 2 (`np.arange(...)[...]`).
    use super::*;

    fn sel(mode: Mode, items: Vec<Item>) -> Sel {
        Sel { mode, items }
    }

    #[test]
    fn slices_follow_python() {
        assert_eq!(slice_indices(None, None, -1, 4), vec![3, 2, 1, 0]);
        assert_eq!(slice_indices(Some(-10), Some(10), 2, 5), vec![0, 2, 4]);
        assert_eq!(slice_indices(Some(10), Some(-10), -3, 5), vec![4, 1]);
        assert_eq!(slice_indices(Some(2), Some(2), 1, 5), Vec::<usize>::new());
        assert_eq!(slice_indices(Some(-1), None, -2, 0), Vec::<usize>::new());
    }

    #[test]
    fn vindex_placement() {
        // np.zeros((6,3,4,5))[:, 0, ..., [1,2], :].shape == (2, 6, 5)
        let s = sel(
            Mode::Vectorized,
            vec![
                Item::Slice(None, None, None),
                Item::Index(0),
                Item::Ellipsis,
                Item::Array(vec![1, 2]),
                Item::Slice(None, None, None),
            ],
        );
        assert_eq!(index(&[6, 3, 4, 5], &s).unwrap().shape, vec![2, 6, 5]);
        // [:, 0, [1,2], :] -> (6, 2, 5)
        let s = sel(
            Mode::Vectorized,
            vec![
                Item::Slice(None, None, None),
                Item::Index(0),
                Item::Array(vec![1, 2]),
                Item::Slice(None, None, None),
            ],
        );
        assert_eq!(index(&[6, 3, 4, 5], &s).unwrap().shape, vec![6, 2, 5]);
        // [:, 0, None, [1,2], :] -> (2, 6, 1, 5)
        let s = sel(
            Mode::Vectorized,
            vec![
                Item::Slice(None, None, None),
                Item::Index(0),
                Item::NewAxis,
                Item::Array(vec![1, 2]),
                Item::Slice(None, None, None),
            ],
        );
        assert_eq!(index(&[6, 3, 4, 5], &s).unwrap().shape, vec![2, 6, 1, 5]);
    }
}
