//! A gate bounding how many decodes run at once on tokio's blocking pool.
//!
//! Work is handed to a blocking thread as soon as its bytes arrive; the thread waits at the
//! gate, and a finishing decode wakes the next waiting thread directly. An async semaphore
//! in front of `spawn_blocking` would instead need a runtime worker to run between two
//! decodes (to release the permit and spawn the next one), and with every core busy
//! decoding that worker waits for a time slice: the cores idled between decodes.

use std::sync::{Condvar, Mutex, PoisonError};

/// At most `limit` holders at once; closing it turns every waiting and later entry away.
#[derive(Debug)]
pub(crate) struct DecodeGate {
    state: Mutex<GateState>,
    freed: Condvar,
    limit: usize,
}

#[derive(Debug)]
struct GateState {
    inside: usize,
    closed: bool,
}

/// A place inside the gate; leaving frees it for the next waiting thread.
#[derive(Debug)]
pub(crate) struct GatePass<'a>(&'a DecodeGate);

impl DecodeGate {
    /// A gate letting `limit` (at least 1) threads in at once.
    pub(crate) fn new(limit: usize) -> Self {
        DecodeGate {
            state: Mutex::new(GateState {
                inside: 0,
                closed: false,
            }),
            freed: Condvar::new(),
            limit: limit.max(1),
        }
    }

    /// Blocks until a place is free; `None` once the gate is closed.
    pub(crate) fn enter(&self) -> Option<GatePass<'_>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if state.closed {
                return None;
            }
            if state.inside < self.limit {
                state.inside += 1;
                return Some(GatePass(self));
            }
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// How many may be inside at once.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Whether the gate was closed (the read was cancelled or failed).
    pub(crate) fn is_closed(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closed
    }

    /// Turns every waiting and later entry away (the read was cancelled or failed).
    pub(crate) fn close(&self) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closed = true;
        self.freed.notify_all();
    }
}

impl Drop for GatePass<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.inside = state.inside.saturating_sub(1);
        drop(state);
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn at_most_limit_inside_and_closing_turns_waiters_away() {
        let gate = Arc::new(DecodeGate::new(2));
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (gate, inside, most) = (gate.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let _pass = gate.enter().expect("open gate");
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // never more than the limit inside (whether the threads ever overlapped is up to
        // the scheduler; that two fit at once is shown next)
        let most = most.load(Ordering::SeqCst);
        assert!((1..=2).contains(&most), "{most} inside at once");
        // two passes held: a third thread waits, and closing sends it away
        let a = gate.enter().unwrap();
        let b = gate.enter().unwrap();
        let waiter = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.enter().is_none())
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        gate.close();
        assert!(waiter.join().unwrap());
        drop((a, b));
        assert!(gate.enter().is_none());
    }
}
