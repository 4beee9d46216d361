//! A per-thread buffer for chunks whose every cell a write overwrites.
//!
//! A fully covered inner chunk needs no starting contents: filling a fresh buffer with
//! the fill value only to overwrite it copied every byte of a whole-array write once more
//! (a 64 KiB clone per inner chunk, as much memory traffic as the gather itself). Such a
//! chunk is gathered into this thread's buffer instead, reused from one chunk to the next.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

thread_local! {
    /// The buffer, between two chunks on this thread.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// This thread's buffer of `len` bytes, whose contents are left from an earlier chunk (or
/// zero): the caller overwrites every byte before reading any. Returned to the thread on
/// drop.
pub(super) struct Scratch(Vec<u8>);

impl Scratch {
    /// Takes this thread's buffer, sized to `len` bytes (a caller checks `len` against its
    /// bounds first: it is a chunk's size in memory).
    pub(super) fn take(len: usize) -> Scratch {
        let mut buf = BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()));
        if buf.len() != len {
            buf.clear();
            buf.resize(len, 0);
        }
        Scratch(buf)
    }
}

impl Deref for Scratch {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        // `try_with`: a drop during the thread's teardown keeps nothing
        let _ = BUFFER.try_with(|b| *b.borrow_mut() = buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_is_reused_and_resized() {
        let first = {
            let mut s = Scratch::take(16);
            s[..].fill(7);
            s.as_ptr()
        };
        let again = Scratch::take(16);
        assert_eq!(
            again.as_ptr(),
            first,
            "the same allocation, back on the thread"
        );
        assert_eq!(&again[..], &[7u8; 16][..], "left as the last chunk left it");
        drop(again);
        let other = Scratch::take(8);
        assert_eq!(other.len(), 8);
        assert_eq!(&other[..], &[0u8; 8][..], "a new size starts zeroed");
    }
}
