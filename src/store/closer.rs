//! Replaced files closed off the writer's path: [`close_later`].
//!
//! A file replaced by a rename (or deleted) gives its blocks back to the filesystem when its
//! last handle closes, and on a filesystem mounted with `discard` (common on cloud VMs, and
//! this project's test machine) that waits for the device to trim them: measured here, most
//! of a one-inner-chunk update's time went into the `rename` over a 1.5 MB shard, waiting in
//! `blkdev_issue_discard`. So a local PUT or DELETE keeps the old file open across its rename
//! or unlink and hands it here, and one thread of the process closes it, where the wait
//! costs the writer nothing. What is stored and what readers see do not change: the old
//! file is already unreachable by name when it is handed over.
//!
//! The queue is bounded ([`QUEUED`] files): when it is full the file is closed by the
//! caller, as it was before. A child made by `fork` has none of its parent's threads, so
//! it starts its own closer on first use (as the CPU pool does).

use std::fs::File;
use std::sync::Mutex;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

/// Files waiting to be closed at most (each an open descriptor).
const QUEUED: usize = 64;

/// The closer's queue and the process that started its thread.
struct ProcessCloser {
    pid: u32,
    queue: SyncSender<File>,
}

static CLOSER: Mutex<Option<ProcessCloser>> = Mutex::new(None);

/// Closes `file` on the closer's thread, or here when its queue is full or the thread
/// cannot be started.
pub(crate) fn close_later(file: File) {
    let Some(queue) = queue() else {
        return drop(file);
    };
    match queue.try_send(file) {
        Ok(()) => {}
        Err(TrySendError::Full(file) | TrySendError::Disconnected(file)) => drop(file),
    }
}

/// This process's queue to the closer's thread, started on first use.
fn queue() -> Option<SyncSender<File>> {
    let pid = std::process::id();
    let mut slot = CLOSER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(closer) = slot.as_ref()
        && closer.pid == pid
    {
        return Some(closer.queue.clone());
    }
    let (queue, files) = sync_channel::<File>(QUEUED);
    let started = std::thread::Builder::new()
        .name("zarrflow-closer".into())
        .spawn(move || files.into_iter().for_each(drop));
    match started {
        Ok(_) => {
            *slot = Some(ProcessCloser {
                pid,
                queue: queue.clone(),
            });
            Some(queue)
        }
        Err(e) => {
            tracing::debug!(error = %e, "cannot start the closer thread: files close where replaced");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Waits until `done` holds (at most 10 s).
    fn eventually(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_handed_file_is_closed_by_the_closer() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("replaced-file-of-the-closer-test");
        std::fs::write(&path, b"old bytes").unwrap();
        let file = File::open(&path).unwrap();
        let fd = format!("/proc/self/fd/{}", file.as_raw_fd());
        std::fs::remove_file(&path).unwrap();
        let ours = || {
            std::fs::read_link(&fd)
                .is_ok_and(|p| p.to_string_lossy().contains("replaced-file-of-the-closer-test"))
        };
        assert!(ours());
        close_later(file);
        // (another test's file may take the descriptor number afterwards: not ours)
        eventually("the closer never closed the file", || !ours());
    }

    #[test]
    fn a_full_queue_closes_files_where_they_are_handed() {
        let dir = tempfile::tempdir().unwrap();
        // More files than the queue holds: the ones that do not fit close at once.
        for i in 0..4 * QUEUED {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, b"x").unwrap();
            close_later(File::open(&p).unwrap());
        }
        // and the closer drains its queue: a later hand-over is taken again
        let p = dir.path().join("probe");
        std::fs::write(&p, b"x").unwrap();
        eventually("the closer never drained its queue", || {
            queue()
                .expect("the closer runs")
                .try_send(File::open(&p).unwrap())
                .is_ok()
        });
    }
}
