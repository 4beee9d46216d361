//! N-dimensional C-order block copies on byte buffers (pure helpers).

/// Number of elements of a shape (1 for rank 0), saturating at `u64::MAX` (shapes of
/// validated metadata never get there).
pub fn num_elements(shape: &[u64]) -> u64 {
    shape.iter().fold(1u64, |acc, &n| acc.saturating_mul(n))
}

/// Call `f(src_row_start_elem, dst_row_start_elem, row_len_elems)` for every contiguous row of
/// a `block_shape` block placed at `start` inside an array of `outer_shape` (C order).
fn for_each_row(
    outer_shape: &[u64],
    start: &[u64],
    block_shape: &[u64],
    mut f: impl FnMut(u64, u64, u64),
) {
    let rank = outer_shape.len();
    if rank == 0 {
        f(0, 0, 1);
        return;
    }
    if block_shape.contains(&0) {
        return;
    }
    let row = block_shape[rank - 1];
    let mut idx = vec![0u64; rank - 1];
    let mut dst = 0u64;
    loop {
        let mut off = 0u64;
        for d in 0..rank {
            let i = if d < rank - 1 { idx[d] } else { 0 };
            off = off * outer_shape[d] + start[d] + i;
        }
        f(off, dst, row);
        dst += row;
        // increment idx (odometer over the first rank-1 dims)
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < block_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Copy the block at `start` with `block_shape` out of `src` (shape `src_shape`).
pub fn extract_block(
    src: &[u8],
    src_shape: &[u64],
    start: &[u64],
    block_shape: &[u64],
    elem: usize,
) -> Vec<u8> {
    let mut out = vec![0u8; num_elements(block_shape) as usize * elem];
    for_each_row(src_shape, start, block_shape, |s, d, n| {
        let (s, d, n) = (s as usize * elem, d as usize * elem, n as usize * elem);
        out[d..d + n].copy_from_slice(&src[s..s + n]);
    });
    out
}

/// Copy `block` (shape `block_shape`) into `dst` (shape `dst_shape`) at `start`.
pub fn insert_block(
    dst: &mut [u8],
    dst_shape: &[u64],
    start: &[u64],
    block: &[u8],
    block_shape: &[u64],
    elem: usize,
) {
    for_each_row(dst_shape, start, block_shape, |s, d, n| {
        let (s, d, n) = (s as usize * elem, d as usize * elem, n as usize * elem);
        dst[s..s + n].copy_from_slice(&block[d..d + n]);
    });
}

/// Unravel a C-order linear index over `shape`.
pub fn unravel(mut linear: u64, shape: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; shape.len()];
    for d in (0..shape.len()).rev() {
        let s = shape[d].max(1);
        out[d] = linear % s;
        linear /= s;
    }
    out
}

/// Ravel C-order coordinates over `shape`.
pub fn ravel(coords: &[u64], shape: &[u64]) -> u64 {
    coords
        .iter()
        .zip(shape)
        .fold(0u64, |acc, (&c, &s)| acc * s + c)
}
