//! Memory for encoded chunks: slabs recycled from chunk to chunk and from write to write.
//!
//! An encoded chunk lives until its shard is stored: over a remote store, until the PUT
//! carrying it has been sent. Given its own allocation, each chunk lands in memory that
//! glibc has usually just returned to the system (freed chunks are coalesced and the
//! heap trimmed), so every page of the encoded output is faulted in and zeroed again:
//! measured at ~30 ms of CPU of a 256 MiB write over S3 (its 127 MiB of zstd output), a
//! tenth of the write.
//!
//! Here an encoder writes chunk after chunk into the free tail of its thread's slab, and
//! each chunk becomes a [`Bytes`] sharing the slab. A slab whose chunks have all been
//! dropped is taken back whole ([`BytesMut::try_reclaim`]) and its pages, already
//! touched, hold the next chunks.
//!
//! Only threads marked by [`use_slabs_on_this_thread`] use slabs: the CPU pool's, which
//! encode the inner chunks of a write's shards (a shard's pieces are stored and dropped
//! together; a store that keeps objects copies a payload of several parts). Elsewhere (a
//! caller's thread, tokio's blocking pool, whose threads are not bounded) and for a chunk
//! whose worst case exceeds [`LARGEST_PIECE`], a chunk gets an allocation of its own,
//! shrunk to its size. Memory held: a slab ([`SLAB_BYTES`]) per CPU-pool thread plus at
//! most [`SPARE_BYTES`] of spare slabs for the process.

use std::cell::{Cell, RefCell};
use std::sync::Mutex;

use bytes::{Bytes, BytesMut};

/// Bytes of one slab.
pub(crate) const SLAB_BYTES: usize = 1 << 20;

/// The largest worst-case size of a chunk written into a slab (a quarter of a slab, so
/// that at most a quarter of a slab is left unused when the next chunk does not fit).
pub(crate) const LARGEST_PIECE: usize = SLAB_BYTES / 4;

/// Bytes of spare slabs the process keeps for reuse, beyond each thread's current slab:
/// enough for the chunks of the 8 shard PUTs a write keeps in flight (2 MiB each at
/// zstd's ratio on the benchmark's data) and of the shards being encoded.
pub(crate) const SPARE_BYTES: usize = 32 << 20;

thread_local! {
    /// Whether this thread writes its chunks into slabs ([`use_slabs_on_this_thread`]).
    static USES_SLABS: Cell<bool> = const { Cell::new(false) };
    /// This thread's slab: its free tail (length 0) receives the next chunk.
    static CURRENT: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// Slabs handed back while chunks in them were still alive: they are taken again once
/// those chunks have been dropped.
static SPARE: Mutex<Vec<BytesMut>> = Mutex::new(Vec::new());

/// Makes this thread write the chunks it encodes into slabs (the CPU pool's threads call
/// it as they start).
pub(crate) fn use_slabs_on_this_thread() {
    USES_SLABS.with(|u| u.set(true));
}

/// Writes one encoded chunk with `write`, which gets an empty destination with room for at
/// least `bound` bytes (its worst case) and appends the chunk to it, and returns the chunk:
/// in this thread's slab when the thread uses slabs and `bound` is at most
/// [`LARGEST_PIECE`], in an allocation of its own otherwise. A failed `write` leaves
/// nothing behind.
pub(crate) fn write_chunk<E>(
    bound: usize,
    write: impl FnOnce(&mut BytesMut) -> Result<(), E>,
) -> Result<Bytes, E> {
    if bound > LARGEST_PIECE || !USES_SLABS.with(Cell::get) {
        return own_allocation(bound, write);
    }
    CURRENT.with(|cell| {
        let Ok(mut slab) = cell.try_borrow_mut() else {
            // re-entered from inside `write` (nothing does this today)
            return own_allocation(bound, write);
        };
        // a slab whose chunks have all been dropped starts again from its beginning (still
        // in cache after a small write); otherwise it goes on filling, or is replaced
        if !slab.try_reclaim(SLAB_BYTES) && slab.capacity() < bound {
            refill(&mut slab);
        }
        debug_assert!(slab.is_empty() && slab.capacity() >= bound);
        let written = write(&mut slab);
        // the chunk, or on failure whatever `write` left, leaves the slab: its tail stays
        // empty
        let chunk = slab.split();
        written.map(|()| chunk.freeze())
    })
}

/// A chunk written into an allocation of its own, shrunk to its size (it is kept until
/// stored: the rest of its worst case would be kept with it).
fn own_allocation<E>(
    bound: usize,
    write: impl FnOnce(&mut BytesMut) -> Result<(), E>,
) -> Result<Bytes, E> {
    let mut own = BytesMut::with_capacity(bound);
    write(&mut own)?;
    let mut own = Vec::from(own);
    own.shrink_to_fit();
    Ok(own.into())
}

/// Gives `slab` (empty, or holding chunks still alive) room for a chunk of up to
/// [`LARGEST_PIECE`] bytes: a spare slab whose chunks have all been dropped, else a new
/// slab. A slab with chunks still alive joins the spares while they have room.
fn refill(slab: &mut BytesMut) {
    let old = std::mem::take(slab);
    // `try_lock`: a child forked while another thread held the lock would wait forever
    let Ok(mut spare) = SPARE.try_lock() else {
        *slab = BytesMut::with_capacity(SLAB_BYTES);
        return;
    };
    if let Some(free) = spare.iter_mut().position(|s| s.try_reclaim(SLAB_BYTES)) {
        *slab = spare.swap_remove(free);
    } else {
        *slab = BytesMut::with_capacity(SLAB_BYTES);
    }
    if old.capacity() > 0 && spare.len() < SPARE_BYTES / SLAB_BYTES {
        spare.push(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(byte: u8, n: usize) -> impl FnOnce(&mut BytesMut) -> Result<(), ()> {
        use_slabs_on_this_thread();
        move |b| {
            assert!(b.is_empty());
            b.extend_from_slice(&vec![byte; n]);
            Ok(())
        }
    }

    #[test]
    fn chunks_keep_their_bytes_while_the_slab_goes_on_filling() {
        let chunks: Vec<Bytes> = (0..100u8)
            .map(|i| write_chunk(LARGEST_PIECE, fill(i, 1000 + usize::from(i))).unwrap())
            .collect();
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(c.len(), 1000 + i);
            assert!(c.iter().all(|&b| b == i as u8), "chunk {i} overwritten");
        }
    }

    #[test]
    fn a_slab_whose_chunks_were_dropped_is_used_again_from_its_beginning() {
        let first = write_chunk(1000, fill(1, 1000)).unwrap();
        let at = first.as_ptr();
        drop(first);
        let again = write_chunk(1000, fill(2, 1000)).unwrap();
        assert_eq!(
            again.as_ptr(),
            at,
            "the same memory, while it is still in cache"
        );
        // chunks kept across a refill: once all are dropped, this thread's slab is taken
        // back whole
        let kept: Vec<Bytes> = (0..8)
            .map(|_| write_chunk(LARGEST_PIECE, fill(3, 200_000)).unwrap())
            .collect();
        let last_slab_start = kept[4].as_ptr();
        drop((again, kept));
        let next = write_chunk(1000, fill(4, 1000)).unwrap();
        assert_eq!(next.as_ptr(), last_slab_start);
    }

    #[test]
    fn chunks_still_alive_keep_their_slab_out_of_reuse() {
        let kept: Vec<Bytes> = (0..(3 * SLAB_BYTES / 100_000))
            .map(|i| write_chunk(100_000, fill(i as u8, 100_000)).unwrap())
            .collect();
        // more chunks, through slab refills: none may land over a kept one
        let more: Vec<Bytes> = (0..40)
            .map(|_| write_chunk(100_000, fill(0xee, 100_000)).unwrap())
            .collect();
        for (i, c) in kept.iter().enumerate() {
            assert!(
                c.iter().all(|&b| b == i as u8),
                "kept chunk {i} overwritten"
            );
        }
        assert!(more.iter().all(|c| c.iter().all(|&b| b == 0xee)));
    }

    #[test]
    fn large_chunks_and_failed_writes() {
        let big = write_chunk(LARGEST_PIECE + 1, fill(7, LARGEST_PIECE + 1)).unwrap();
        assert_eq!(big.len(), LARGEST_PIECE + 1);
        let failed: Result<Bytes, &str> = write_chunk(500, |b| {
            b.extend_from_slice(b"partial");
            Err("no")
        });
        assert_eq!(failed.unwrap_err(), "no");
        // the failed write's bytes are not part of the next chunk
        let next = write_chunk(500, fill(9, 3)).unwrap();
        assert_eq!(&next[..], &[9, 9, 9]);
    }

    #[test]
    fn threads_not_marked_give_each_chunk_an_allocation_of_its_own_shrunk_to_it() {
        std::thread::spawn(|| {
            let chunk: Bytes = write_chunk(100_000, |b: &mut BytesMut| {
                b.extend_from_slice(&[5; 10]);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(&chunk[..], &[5; 10]);
            // the allocation holds the chunk alone: converting back to a Vec is free and
            // shows its capacity
            let v = Vec::from(chunk);
            assert!(v.capacity() < 100, "capacity {}", v.capacity());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_spare_slabs_stay_within_their_bound() {
        // chunks kept alive across many refills: spares beyond the bound are let go
        let kept: Vec<Bytes> = (0..(4 * SPARE_BYTES / LARGEST_PIECE))
            .map(|_| write_chunk(LARGEST_PIECE, fill(1, LARGEST_PIECE)).unwrap())
            .collect();
        assert!(SPARE.lock().unwrap().len() <= SPARE_BYTES / SLAB_BYTES);
        drop(kept);
    }
}
