//! Streaming (non-temporal) stores for copies into large results.
//!
//! A read of a large result writes every line of it once, into memory no cache holds. An
//! ordinary store first reads the line it lands in (read for ownership), so filling a
//! 256 MiB result moves 512 MiB; a non-temporal store of a whole 64-byte line skips that
//! read and goes to memory through a write-combining buffer. Measured on this project's
//! 2-core machine (copying 4,096 decoded 32³ `u16` chunks into a 512³ result, rows of 64
//! bytes, pages already present): 50 ms with ordinary stores against 17 ms streamed on two
//! threads, 88 against 30 ms on one. A store of part of a line gains nothing and is slow
//! through the write-combining buffer, so only whole, aligned lines are streamed; the bytes
//! before the first line boundary and after the last are stored as usual.
//!
//! Streamed stores are weakly ordered: [`fence`] must run on the storing thread before
//! another thread may read what it stored (the copy jobs hold a [`FenceOnDrop`] while they
//! copy, so it runs however they end, before their results are handed back).

/// The cache line streamed stores fill whole.
pub(crate) const LINE: usize = 64;

/// Copies `src` into `dst` (equal lengths), the whole 64-byte lines of `dst` with streaming
/// stores (off x86-64, an ordinary copy). Call [`fence`] before another thread reads `dst`.
#[inline]
pub fn copy_streaming(dst: &mut [u8], src: &[u8]) {
    let kept = copy_streaming_keeping_tail(dst, src);
    let tail = dst.len() - kept;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// Copies `src` into `dst` (equal lengths) as [`copy_streaming`] does, except for `dst`'s
/// last bytes from its last line boundary on: those are left unstored and their count
/// (less than [`LINE`]) returned, for the caller to store later as the start of a line,
/// together with what follows them in the result (see
/// [`super::scatter::Kernel::gather_rows_streaming`]). Where `dst` ends at or before its
/// first line boundary, everything is stored and 0 returned.
#[inline]
pub(crate) fn copy_streaming_keeping_tail(dst: &mut [u8], src: &[u8]) -> usize {
    assert_eq!(dst.len(), src.len(), "a streamed copy of unequal lengths");
    let addr = dst.as_ptr() as usize;
    let head = addr.next_multiple_of(LINE) - addr;
    if head >= dst.len() {
        dst.copy_from_slice(src);
        return 0;
    }
    let lines = (dst.len() - head) / LINE;
    let body_end = head + lines * LINE;
    dst[..head].copy_from_slice(&src[..head]);
    for (d, s) in dst[head..body_end]
        .chunks_exact_mut(LINE)
        .zip(src[head..body_end].chunks_exact(LINE))
    {
        store_line(d, s);
    }
    dst.len() - body_end
}

/// Stores the 64 bytes of `src` into the 64-byte-aligned line `dst`.
#[inline(always)]
#[allow(unsafe_code)]
fn store_line(dst: &mut [u8], src: &[u8]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let (dst, src): (&mut [u8; LINE], &[u8; LINE]) = match (dst.try_into(), src.try_into()) {
            (Ok(d), Ok(s)) => (d, s),
            _ => unreachable!("store_line is given whole lines"),
        };
        debug_assert_eq!(dst.as_ptr() as usize % LINE, 0);
        let s = src.as_ptr().cast::<__m128i>();
        let d = dst.as_mut_ptr().cast::<__m128i>();
        // SAFETY: SSE2 is part of x86-64; `s` and `d` point to 64 readable / writable bytes
        // (the arrays above), read unaligned and stored at `d`, 64-byte aligned (checked by
        // the caller's split at the first line boundary), so each 16-byte store is aligned
        // as `_mm_stream_si128` requires.
        unsafe {
            let (a, b, c, e) = (
                _mm_loadu_si128(s),
                _mm_loadu_si128(s.add(1)),
                _mm_loadu_si128(s.add(2)),
                _mm_loadu_si128(s.add(3)),
            );
            _mm_stream_si128(d, a);
            _mm_stream_si128(d.add(1), b);
            _mm_stream_si128(d.add(2), c);
            _mm_stream_si128(d.add(3), e);
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    dst.copy_from_slice(src);
}

/// Calls [`fence`] when dropped: held by whatever streams, so that no way out of it (an
/// error, a panic caught further up) leaves this thread's streamed stores unfenced.
#[derive(Debug)]
pub(crate) struct FenceOnDrop;

impl Drop for FenceOnDrop {
    fn drop(&mut self) {
        fence();
    }
}

/// Orders this thread's streamed stores before its later stores (and so before whatever
/// hands its results to another thread).
#[inline]
#[allow(unsafe_code)]
pub fn fence() {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    // SAFETY: SSE is part of x86-64; a fence has no other effect.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_keeping_its_tail_stores_all_but_the_bytes_from_the_last_line_boundary_on() {
        let src: Vec<u8> = (0..700u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut buf = vec![0xEEu8; 1024];
        let base = buf.as_ptr() as usize;
        for offset in 0..LINE + 3 {
            for len in [
                0, 1, 15, 16, 47, 48, 49, 63, 64, 65, 127, 128, 129, 300, 640,
            ] {
                buf.fill(0xEE);
                let kept = copy_streaming_keeping_tail(&mut buf[offset..offset + len], &src[..len]);
                fence();
                let end = base + offset + len;
                let first_boundary = (base + offset).next_multiple_of(LINE);
                // the bytes from the last line boundary on, when there is one inside
                let expect = if first_boundary >= end { 0 } else { end % LINE };
                assert_eq!(kept, expect, "{offset} {len}");
                let stored = len - kept;
                assert_eq!(
                    &buf[offset..offset + stored],
                    &src[..stored],
                    "{offset} {len}"
                );
                assert!(
                    buf[offset + stored..].iter().all(|&b| b == 0xEE),
                    "{offset} {len}: the kept tail and beyond untouched"
                );
                assert!(buf[..offset].iter().all(|&b| b == 0xEE), "{offset} {len}");
                if kept > 0 {
                    assert_eq!(
                        (base + offset + stored) % LINE,
                        0,
                        "a kept tail starts a line"
                    );
                }
            }
        }
    }

    #[test]
    fn every_alignment_and_length_copies_exactly() {
        let src: Vec<u8> = (0..700u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut buf = vec![0xEEu8; 1024];
        for offset in 0..LINE + 3 {
            for len in [0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 300, 640] {
                buf.fill(0xEE);
                copy_streaming(&mut buf[offset..offset + len], &src[..len]);
                fence();
                assert_eq!(&buf[offset..offset + len], &src[..len], "{offset} {len}");
                assert!(buf[..offset].iter().all(|&b| b == 0xEE), "{offset} {len}");
                assert!(
                    buf[offset + len..].iter().all(|&b| b == 0xEE),
                    "{offset} {len}"
                );
            }
        }
    }
}
