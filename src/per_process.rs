//! [`PerProcess`]: a value (a thread pool, a thread's queue) built on first use in each
//! process, and again in a child made by `fork`.
//!
//! A child made by `fork` has none of its parent's threads, so a pool or queue it inherits
//! would never be served there (a job sent to the parent's rayon pool waited forever). The
//! inherited value is leaked, never dropped: dropping it could wait on those threads, or on
//! a lock one of them held at the fork.

use std::sync::Mutex;

/// A value of this process, keyed by the process id that built it.
pub(crate) struct PerProcess<T> {
    slot: Mutex<Option<(u32, T)>>,
}

impl<T: Clone> PerProcess<T> {
    /// Nothing built yet.
    pub(crate) const fn new() -> Self {
        PerProcess {
            slot: Mutex::new(None),
        }
    }

    /// This process's value, built by `build` on first use here (a value inherited from a
    /// parent is leaked first). `None` when `build` gives none; it is tried again next time.
    pub(crate) fn get(&self, build: impl FnOnce() -> Option<T>) -> Option<T> {
        let pid = std::process::id();
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((built_by, value)) = slot.as_ref()
            && *built_by == pid
        {
            return Some(value.clone());
        }
        if let Some(inherited) = slot.take() {
            std::mem::forget(inherited);
        }
        let value = build()?;
        *slot = Some((pid, value.clone()));
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_once_per_process_and_retried_after_a_failure() {
        let cell: PerProcess<u32> = PerProcess::new();
        assert_eq!(cell.get(|| None), None);
        assert_eq!(cell.get(|| Some(7)), Some(7));
        assert_eq!(cell.get(|| panic!("built twice")), Some(7));
    }
}
