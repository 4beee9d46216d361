//! Faulting a mapped output file's pages in on a thread of its own while a read fills them.
//!
//! A large `get -o FILE` reads straight into a mapping of the output file
//! ([`crate::outfile::OutFile::map`]). Each page of it is a page-cache page the first write
//! faults in: 65,536 faults for a 256 MiB result, taken by the decode threads one trap at a
//! time. A thread asking the kernel to fault the mapping in writable ahead of them
//! (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14 and later, 512 KiB at a time, so that each
//! call holds the process's memory-map lock briefly) does that work in one loop in the
//! kernel, beside the decoding. Measured on ext4 (`zarrflow get` of the 256 MiB benchmark
//! array, 25 runs of each alternated with runs without, medians): system time 83 ms against
//! 127 ms without, user time 121 against 126 ms, wall time 124 against 137 ms (best 113
//! against 119 ms); in an earlier series (steps of 2 MiB) the system time went from 103 to
//! 85 ms and the wall time did not move beyond its noise. The cost: one more thread, and
//! pages dirtied (as zeros) ahead of the data written into them, which writeback may then
//! write twice. The advice changes no contents, and where the kernel refuses it the pages
//! are faulted by the writes as before. A 16 MiB result is not mapped (see `get.rs`'
//! `MAP_MIN_BYTES`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Faults a mapping in ahead of the writes into it, until done, refused or dropped (which
/// stops it between two steps and waits for it).
pub struct Prefault {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

impl Prefault {
    /// Starts faulting `map` in; does nothing off Linux or where no thread can be started.
    ///
    /// # Safety
    ///
    /// The returned guard must be dropped before `map` is unmapped (and never forgotten):
    /// its thread advises `map`'s address range until then, and advising a range that by
    /// then belongs to another mapping would fault that mapping's pages in.
    pub unsafe fn start(map: &memmap2::MmapMut) -> Prefault {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = spawn(map.as_ptr() as usize, map.len(), stop.clone());
        Prefault { stop, thread }
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: advises `[addr, addr + len)` step by step until done, refused or stopped;
/// returns how many bytes it advised.
#[cfg(target_os = "linux")]
fn spawn(addr: usize, len: usize, stop: Arc<AtomicBool>) -> Option<std::thread::JoinHandle<usize>> {
    const STEP: usize = 512 << 10;
    std::thread::Builder::new()
        .name("zarrflow-prefault".into())
        .spawn(move || {
            let mut at = 0;
            while at < len && !stop.load(Ordering::Relaxed) {
                let n = STEP.min(len - at);
                // SAFETY: [addr + at, addr + at + n) lies inside the mapping, which outlives
                // this thread (`Prefault::start`'s contract); MADV_POPULATE_WRITE only
                // faults pages in, never changes their contents, and its failure (an old
                // kernel, memory pressure, a fatal signal) only ends the advice.
                let code = unsafe {
                    libc::madvise(
                        (addr + at) as *mut libc::c_void,
                        n,
                        libc::MADV_POPULATE_WRITE,
                    )
                };
                if code != 0 {
                    break;
                }
                at += n;
            }
            at
        })
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn spawn(_: usize, _: usize, _: Arc<AtomicBool>) -> Option<std::thread::JoinHandle<usize>> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;

    use super::*;

    /// A reserved temporary file of `len` bytes, as `get` maps, and its mapping.
    fn mapped(len: usize) -> (std::fs::File, memmap2::MmapMut) {
        let file = tempfile::tempfile().unwrap();
        // SAFETY: a plain system call on a descriptor this test owns.
        let code = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
        if code != 0 {
            file.set_len(len as u64).unwrap();
        }
        // SAFETY: a private temporary file nothing else opens.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&file) }.unwrap();
        (file, map)
    }

    #[test]
    fn prefaulting_advises_the_whole_mapping_and_changes_no_contents() {
        let len = (5 << 20) + 123;
        let (mut file, mut map) = mapped(len);
        // SAFETY: `prefault` is dropped (joined) below, before `map`.
        let mut prefault = unsafe { Prefault::start(&map) };
        for (i, b) in map.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let advised = prefault.thread.take().map(|t| t.join().unwrap());
        drop(prefault);
        // SAFETY: a one-page probe inside the mapping: does this kernel take the advice?
        let supported =
            unsafe { libc::madvise(map.as_mut_ptr().cast(), 4096, libc::MADV_POPULATE_WRITE) } == 0;
        if supported {
            assert_eq!(advised, Some(len), "the whole mapping is advised");
        }
        assert!(map.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        map.flush().unwrap();
        drop(map);
        let mut back = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut back).unwrap();
        assert_eq!(back.len(), len);
        assert!(back.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    }

    #[test]
    fn a_stopped_prefault_advises_nothing_more() {
        let (_file, map) = mapped(8 << 20);
        let stop = Arc::new(AtomicBool::new(true));
        let thread = spawn(map.as_ptr() as usize, map.len(), stop).unwrap();
        assert_eq!(thread.join().unwrap(), 0);
        // dropped at once: joined, whatever step it was at
        // SAFETY: the guard is dropped here, before `map`.
        drop(unsafe { Prefault::start(&map) });
    }
}
