//! The CPU time this process has used (user and system, every thread, `getrusage`), for the
//! benchmarks' CPU columns. Included by the read and write benchmarks with `#[path]`.

use std::time::{Duration, Instant};

/// User and system CPU time used so far by this process, every thread.
pub fn user_and_system() -> (Duration, Duration) {
    // SAFETY: getrusage only fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (t(u.ru_utime), t(u.ru_stime))
}

/// User + system CPU time used so far by this process, every thread.
pub fn total() -> Duration {
    let (user, system) = user_and_system();
    user + system
}

/// Calls `f`: its result, its wall time and the process's CPU time during it.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let c = total();
    let t = Instant::now();
    let v = f();
    let wall = t.elapsed();
    (v, wall, total().saturating_sub(c))
}
