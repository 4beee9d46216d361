//! Faulting a mapped output file's pages in on a thread of its own while a read fills them.
//!
//! A large `get -o FILE` reads straight into a mapping of the output file
//! ([`crate::outfile::OutFile::map`]). Each page of it is a page-cache page the first write
//! faults in: 65,536 faults for a 256 MiB result, taken by the decode threads one trap at a
//! time. A thread asking the kernel to fault the mapping in writable ahead of them
//! (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14 and later, 2 MiB at a time) does that work in
//! one loop in the kernel, beside the decoding. Measured on ext4 (`zarrflow get` of the
//! 256 MiB benchmark array, 30 runs of each alternated, medians): system time 85 ms against
//! 103 ms without, user time 122 against 126 ms; the wall time moved less than its noise
//! (best 116 ms either way; a first series of runs gave 116–121 against 122–131 ms). The
//! advice changes no contents, and where the kernel refuses it the pages are faulted by the
//! writes as before. A 16 MiB result is not mapped (see `get.rs`' `MAP_MIN_BYTES`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Faults a mapping in ahead of the writes into it, until done, refused or dropped (which
/// stops it between two steps and waits for it). Drop it before the mapping.
pub struct Prefault {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Prefault {
    /// Starts faulting `map` in; does nothing off Linux or where no thread can be started.
    pub fn start(map: &memmap2::MmapMut) -> Prefault {
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

#[cfg(target_os = "linux")]
fn spawn(addr: usize, len: usize, stop: Arc<AtomicBool>) -> Option<std::thread::JoinHandle<()>> {
    const STEP: usize = 2 << 20;
    std::thread::Builder::new()
        .name("zarrflow-prefault".into())
        .spawn(move || {
            let mut at = 0;
            while at < len && !stop.load(Ordering::Relaxed) {
                let n = STEP.min(len - at);
                // SAFETY: [addr + at, addr + at + n) lies inside the mapping, which outlives
                // this thread (`Prefault` is dropped, and joins it, before the mapping);
                // MADV_POPULATE_WRITE only faults pages in, never changes their contents,
                // and its failure (an old kernel, memory pressure) only ends the advice.
                let code = unsafe {
                    libc::madvise(
                        (addr + at) as *mut libc::c_void,
                        n,
                        libc::MADV_POPULATE_WRITE,
                    )
                };
                if code != 0 {
                    return;
                }
                at += n;
            }
        })
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn spawn(_: usize, _: usize, _: Arc<AtomicBool>) -> Option<std::thread::JoinHandle<()>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefaulting_changes_no_contents_and_stops_when_dropped() {
        let mut file = tempfile::tempfile().unwrap();
        let len = (5 << 20) + 123;
        file.set_len(len as u64).unwrap();
        // SAFETY: a private temporary file nothing else opens.
        let mut map = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&file) }.unwrap();
        let prefault = Prefault::start(&map);
        for (i, b) in map.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        drop(prefault);
        assert!(map.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        map.flush().unwrap();
        drop(map);
        use std::io::{Read, Seek};
        let mut back = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut back).unwrap();
        assert_eq!(back.len(), len);
        assert!(back.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        // dropped at once: stops between two steps
        // SAFETY: as above.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&file) }.unwrap();
        drop(Prefault::start(&map));
    }
}
