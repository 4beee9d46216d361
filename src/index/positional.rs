//! The positional (NumPy) dialect, lowered to literal coordinates of the current view.
//!
//! Positions are relative to the view's domain: negative integers and array values wrap
//! (`i + extent`), slices clamp like Python's `slice.indices`, and a reversed interval is
//! empty rather than an error. The result is a literal selection: positions plus the origin.

use ndarray::ArrayD;

use super::domain::IndexDomain;
use super::error::{Bounds, Coordinates, IndexError, Result};
use super::selection::{Selection, SelectionItem, Slice, StepRange};

/// Converts a positional selection on `domain` into the equivalent literal selection,
/// expanded to the domain's rank. The selection is read, not cloned: each index array is
/// read once into a new array of wrapped coordinates; masks are cloned unchanged.
pub(crate) fn to_literal(selection: &Selection, domain: &IndexDomain) -> Result<Selection> {
    let fill = selection.padding(domain.rank())?;
    let items = selection.items();
    let mut out = Vec::with_capacity(items.len() + fill);
    let mut dim = 0usize;
    let full_slices = |out: &mut Vec<SelectionItem>, dim: &mut usize| -> Result<()> {
        for _ in 0..fill {
            out.push(SelectionItem::Slice(positional_slice(
                &Slice::full(),
                domain,
                *dim,
            )?));
            *dim += 1;
        }
        Ok(())
    };
    let mut filled = false;
    for item in items {
        match item {
            SelectionItem::Ellipsis => {
                out.push(SelectionItem::Ellipsis);
                full_slices(&mut out, &mut dim)?;
                filled = true;
            }
            SelectionItem::NewAxis => out.push(SelectionItem::NewAxis),
            SelectionItem::Index(i) => {
                out.push(SelectionItem::Index(wrap(*i, domain, dim)?));
                dim += 1;
            }
            SelectionItem::Slice(s) => {
                out.push(SelectionItem::Slice(positional_slice(s, domain, dim)?));
                dim += 1;
            }
            SelectionItem::Range(r) => {
                out.push(SelectionItem::Slice(positional_range(r, domain, dim)?));
                dim += 1;
            }
            SelectionItem::Array(a) => {
                out.push(SelectionItem::Array(wrap_array(a, domain, dim)?));
                dim += 1;
            }
            SelectionItem::Mask(m) => {
                // A mask is positional by nature; the literal layer adds the origin.
                dim += m.ndim();
                out.push(SelectionItem::Mask(m.clone()));
            }
        }
    }
    if !filled {
        full_slices(&mut out, &mut dim)?;
    }
    Ok(Selection::new(out))
}

/// [`wrap`] of every value of `a`: one vectorised pass over a contiguous array, the
/// per-value path for any other and for the error of a value out of bounds.
fn wrap_array(a: &ArrayD<i64>, domain: &IndexDomain, dim: usize) -> Result<ArrayD<i64>> {
    let fast = a
        .as_slice()
        .and_then(|s| super::bulk::wrap_positional(s, domain.extent(dim), domain.origin()[dim]));
    let values = match fast {
        Some(values) => values,
        None => {
            let mut values = Vec::with_capacity(a.len());
            for &v in a.iter() {
                values.push(wrap(v, domain, dim)?);
            }
            values
        }
    };
    ArrayD::from_shape_vec(a.raw_dim(), values)
        .map_err(|e| IndexError::InvalidArgument(e.to_string()))
}

/// A positional integer to a literal coordinate: negative values count from the end.
fn wrap(i: i64, domain: &IndexDomain, dim: usize) -> Result<i64> {
    let n = domain.extent(dim) as i128;
    let p = if i < 0 { i as i128 + n } else { i as i128 };
    if p < 0 || p >= n {
        return Err(IndexError::out_of_bounds(
            "index",
            Some(dim),
            Coordinates::Index(i),
            Bounds::Extent(domain.extent(dim)),
        ));
    }
    Ok((domain.origin()[dim] as i128 + p) as i64)
}

/// Python's `slice.indices(n)` lowered to a literal slice; reversed intervals become empty.
fn positional_slice(s: &Slice, domain: &IndexDomain, dim: usize) -> Result<Slice> {
    let step = s.step.unwrap_or(1);
    if step == 0 {
        return Err(IndexError::InvalidSelection(format!(
            "slice step cannot be zero (dimension {dim})"
        )));
    }
    let n = domain.extent(dim) as i128;
    let clamp = |v: i64, lo: i128, hi: i128| {
        let v = v as i128;
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let (start, stop) = if step > 0 {
        (
            s.start.map_or(0, |v| clamp(v, 0, n)),
            s.stop.map_or(n, |v| clamp(v, 0, n)),
        )
    } else {
        (
            s.start.map_or(n - 1, |v| clamp(v, -1, n - 1)),
            s.stop.map_or(-1, |v| clamp(v, -1, n - 1)),
        )
    };
    let empty = if step > 0 {
        stop <= start
    } else {
        stop >= start
    };
    let origin = domain.origin()[dim] as i128;
    let lit = |v: i128| {
        i64::try_from(origin + v).map_err(|_| {
            IndexError::Overflow(format!("slice bound in dimension {dim} exceeds i64"))
        })
    };
    if empty {
        // An empty literal slice is legal anywhere: spell it stop == start.
        let at = lit(start.max(0))?;
        return Ok(Slice::new(at, at, step));
    }
    Ok(Slice::new(lit(start)?, lit(stop)?, step))
}

/// An ndarray-style range of positions (negative values count from the end, bounds clamp)
/// lowered to a literal slice; a negative step visits the set from its end.
fn positional_range(r: &StepRange, domain: &IndexDomain, dim: usize) -> Result<Slice> {
    if r.step == 0 {
        return Err(IndexError::InvalidSelection(format!(
            "range step cannot be zero (dimension {dim})"
        )));
    }
    let n = domain.extent(dim) as i128;
    let resolve = |v: i64| {
        let v = v as i128;
        (if v < 0 { v + n } else { v }).clamp(0, n)
    };
    let a = r.start.map_or(0, resolve);
    let b = r.end.map_or(n, resolve).max(a);
    let origin = domain.origin()[dim] as i128;
    let lit = |v: i128| {
        i64::try_from(origin + v).map_err(|_| {
            IndexError::Overflow(format!("range bound in dimension {dim} exceeds i64"))
        })
    };
    if a == b {
        let at = lit(a)?;
        return Ok(Slice::new(at, at, r.step));
    }
    if r.step > 0 {
        Ok(Slice::new(lit(a)?, lit(b)?, r.step))
    } else {
        Ok(Slice::new(lit(b - 1)?, lit(a - 1)?, r.step))
    }
}
