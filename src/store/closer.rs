//! Replaced files closed off the writer's path: [`close_later`].
//!
//! A file replaced by a rename (or deleted) gives its blocks back to the filesystem when its
//! last reference goes, and on a filesystem mounted with `discard` (common on cloud VMs, and
//! this project's test machine) that waits for the device to trim them: measured here, most
//! of a one-inner-chunk update's time went into the `rename` over a 1.5 MB shard, waiting in
//! `blkdev_issue_discard`. So a local PUT or DELETE holds the old file (a path-only handle,
//! see `local_cas::hold`) across its rename or unlink and hands it here after unlocking,
//! and one thread of the process closes it, where the wait costs the writer nothing. What is
//! stored and what readers see do not change: the handle reads nothing, and the object's
//! name already leads to the new file (or to nothing) when it is handed over. The space of a
//! replaced or deleted object comes back a moment later than before.
//!
//! The queue is bounded ([`MAX_QUEUED`] handles): when it is full the caller closes the
//! handle itself, as before, so writes faster than the device's trims slow down instead of
//! piling up descriptors. A child made by `fork` starts its own closer ([`PerProcess`]);
//! handles queued in the parent at the fork stay open in the child until it exits.

use std::fs::File;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

use crate::per_process::PerProcess;

/// Handles waiting to be closed at most (each an open descriptor).
const MAX_QUEUED: usize = 64;

/// The queue to this process's closer thread.
static CLOSER: PerProcess<SyncSender<File>> = PerProcess::new();

/// Closes `file` (if any) on the closer's thread, or here when its queue is full or the
/// thread cannot be started.
pub(crate) fn close_later(file: Option<File>) {
    let Some(file) = file else { return };
    match CLOSER.get(start) {
        Some(queue) => hand_over(&queue, file),
        None => drop(file),
    }
}

/// Queues `file` for the closer, or closes it here when `queue` is full (or nobody takes
/// from it any more).
fn hand_over(queue: &SyncSender<File>, file: File) {
    match queue.try_send(file) {
        Ok(()) => {}
        Err(TrySendError::Full(file) | TrySendError::Disconnected(file)) => drop(file),
    }
}

/// Starts a closer thread and returns its queue (`None`, and a DEBUG event, when the thread
/// cannot be started).
fn start() -> Option<SyncSender<File>> {
    let (queue, files) = sync_channel::<File>(MAX_QUEUED);
    let started = std::thread::Builder::new()
        .name("zarrflow-closer".into())
        .spawn(move || files.into_iter().for_each(drop));
    match started {
        Ok(_) => Some(queue),
        Err(e) => {
            tracing::debug!(error = %e, "cannot start the closer thread: files close where replaced");
            None
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::path::Path;
    use std::time::{Duration, Instant};

    /// An open file of a unique name (unlinked), and whether it is still open.
    fn open_file(dir: &Path, name: &str) -> (File, impl Fn() -> bool + use<>) {
        let path = dir.join(name);
        std::fs::write(&path, b"old bytes").unwrap();
        let file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let fd = format!("/proc/self/fd/{}", file.as_raw_fd());
        let name = name.to_string();
        // (another test's file may take the number once it is closed: then it is not ours)
        let open =
            move || std::fs::read_link(&fd).is_ok_and(|p| p.to_string_lossy().contains(&name));
        (file, open)
    }

    #[test]
    fn a_closer_closes_what_it_is_handed() {
        let dir = tempfile::tempdir().unwrap();
        let queue = start().expect("a closer thread");
        let (file, open) = open_file(dir.path(), "handed-to-a-closer");
        assert!(open());
        hand_over(&queue, file);
        let deadline = Instant::now() + Duration::from_secs(10);
        while open() {
            assert!(
                Instant::now() < deadline,
                "the closer never closed the file"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_full_queue_closes_the_file_at_once() {
        let dir = tempfile::tempdir().unwrap();
        // a queue nobody takes from, filled
        let (queue, untaken) = sync_channel::<File>(MAX_QUEUED);
        let mut queued = Vec::new();
        for i in 0..MAX_QUEUED {
            let (file, open) = open_file(dir.path(), &format!("queued-{i}"));
            hand_over(&queue, file);
            queued.push(open);
        }
        assert!(queued.iter().all(|open| open()), "queued files stay open");
        let (file, open) = open_file(dir.path(), "one-too-many");
        hand_over(&queue, file);
        assert!(
            !open(),
            "a file the full queue cannot take is closed at once"
        );
        // and one nobody will ever take (the closer gone) too
        drop(untaken);
        let (file, open) = open_file(dir.path(), "closer-gone");
        hand_over(&queue, file);
        assert!(!open());
    }
}
