//! The buffers reads allocate for their results: zeroed, allocated fallibly, and on Linux
//! backed by transparent huge pages where the kernel offers them on request.
//!
//! A large result is written once, by the copy and decode stages, into pages never touched
//! before. With 4 KiB pages a 256 MiB result takes 65,536 page faults, each zeroing its
//! page: measured here, 0.2–0.5 s of system time for the first touch, more than the decode.
//! Asking for huge pages (`madvise(MADV_HUGEPAGE)`, which `transparent_hugepage=madvise`,
//! the common default, requires) turns that into 128 faults of 2 MiB. The advice changes
//! no contents and is only a hint: where the kernel declines, the buffer is as before.

use super::error::{ArrayError, Result};

/// Results at least this large ask for huge pages (smaller ones would gain little).
const HUGE_PAGE_ADVICE_MIN: usize = 4 << 20;

/// A buffer of `n` zero values, allocated zeroed (the pages are touched once, by the copy
/// into them), refusing (instead of aborting on) failed allocations. Large buffers are
/// advised onto huge pages before anything touches them.
pub(crate) fn zeroed<T: bytemuck::Zeroable>(n: usize) -> Result<Vec<T>> {
    let mut values = bytemuck::allocation::try_zeroed_vec(n).map_err(|()| {
        ArrayError::TooLarge(format!("cannot allocate {n} elements for the result"))
    })?;
    advise_huge_pages(&mut values);
    Ok(values)
}

/// Asks the kernel to back the whole 2 MiB-aligned pages inside `buf` with huge pages (a
/// no-op for buffers under `HUGE_PAGE_ADVICE_MIN`, 4 MiB, and off Linux).
#[allow(unsafe_code)]
pub fn advise_huge_pages<T>(buf: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let len = std::mem::size_of_val(buf);
        if len < HUGE_PAGE_ADVICE_MIN {
            return;
        }
        let start = buf.as_mut_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + len) / HUGE * HUGE;
        if end > first {
            // SAFETY: [first, end) lies inside `buf`, memory this function borrows mutably;
            // MADV_HUGEPAGE only changes how its pages are backed, never their contents,
            // and its failure (an old kernel, THP disabled) is harmless and ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_are_zeroed_and_keep_their_length() {
        for n in [0usize, 1, 4095, (4 << 20) + 3, 9 << 20] {
            let v: Vec<u8> = zeroed(n).unwrap();
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&b| b == 0));
        }
        let mut v: Vec<u16> = zeroed(3 << 20).unwrap();
        v[0] = 7;
        *v.last_mut().unwrap() = 9;
        advise_huge_pages(&mut v);
        assert_eq!(
            (v[0], v[v.len() - 1]),
            (7, 9),
            "advice never changes contents"
        );
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        assert!(matches!(
            zeroed::<u64>(usize::MAX / 4),
            Err(ArrayError::TooLarge(_))
        ));
    }
}
