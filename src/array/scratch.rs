//! Per-thread buffers reused from one chunk to the next.
//!
//! The read path's copy threads keep their encoded and decoded chunk buffers in slots of
//! their own ([`with_kept_buffer`]). A write's covered inner chunk without padding needs no
//! starting contents: filling a fresh buffer with the fill value only to overwrite it copied
//! every byte of a whole-array write once more (a 64 KiB clone per inner chunk, as much
//! memory traffic as copying the values in). Such a chunk's values are written into this
//! thread's [`Scratch`] instead.
//!
//! Memory kept: one buffer per slot and thread, as large as the largest chunk it held, none
//! larger than [`KEPT_BUFFER_BYTES`] (a larger one is freed after use).

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

use super::error::Result;
use crate::codec::CodecError;
use crate::codec::bounds::try_resize;

/// The largest buffer a thread keeps between chunks.
pub(super) const KEPT_BUFFER_BYTES: usize = 16 << 20;

/// Runs `f` with this thread's reused buffer in `slot`, given back afterwards when `f` left
/// it larger than [`KEPT_BUFFER_BYTES`].
pub(super) fn with_kept_buffer<R>(
    slot: &'static LocalKey<RefCell<Vec<u8>>>,
    f: impl FnOnce(&mut Vec<u8>) -> Result<R>,
) -> Result<R> {
    slot.with(|buf| {
        let mut buf = buf.borrow_mut();
        let out = f(&mut buf);
        if buf.capacity() > KEPT_BUFFER_BYTES {
            *buf = Vec::new();
        }
        out
    })
}

thread_local! {
    /// The buffer, between two chunks on this thread.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// This thread's write buffer of `len` bytes, whose contents are left from an earlier chunk (or
/// zero): the caller overwrites every byte before reading any. Returned to the thread on
/// drop.
pub(super) struct Scratch(Vec<u8>);

impl Scratch {
    /// Takes this thread's buffer, sized to `len` bytes; growing it is a fallible
    /// allocation (`OutOfMemory` naming `key`).
    pub(super) fn take(len: usize, key: &str) -> Result<Scratch, CodecError> {
        let mut buf = BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()));
        if buf.len() != len {
            buf.clear();
            try_resize(&mut buf, len as u64, key)?;
        }
        Ok(Scratch(buf))
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
        if buf.capacity() > KEPT_BUFFER_BYTES {
            return;
        }
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
            let mut s = Scratch::take(16, "t").unwrap();
            s[..].fill(7);
            s.as_ptr()
        };
        let again = Scratch::take(16, "t").unwrap();
        assert_eq!(
            again.as_ptr(),
            first,
            "the same allocation, back on the thread"
        );
        assert_eq!(&again[..], &[7u8; 16][..], "left as the last chunk left it");
        drop(again);
        let other = Scratch::take(8, "t").unwrap();
        assert_eq!(other.len(), 8);
        assert_eq!(&other[..], &[0u8; 8][..], "a new size starts zeroed");
    }

    #[test]
    fn a_buffer_over_the_cap_is_not_kept() {
        drop(Scratch::take(KEPT_BUFFER_BYTES + 1, "t").unwrap());
        assert_eq!(BUFFER.with(|b| b.borrow().capacity()), 0);
        drop(Scratch::take(64, "t").unwrap());
        assert!(BUFFER.with(|b| b.borrow().capacity()) >= 64);
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        assert!(matches!(
            Scratch::take(usize::MAX / 2, "t"),
            Err(CodecError::OutOfMemory { .. })
        ));
    }
}
