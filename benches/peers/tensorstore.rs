//! TensorStore as a benchmark peer: runs `benches/peers/tensorstore_peer.py` with the pinned
//! environment's interpreter (`.venv/bin/python`, made by `scripts/python-env.sh`) and returns
//! the JSON object it prints (best times in seconds, checksums, the CPU time of each best
//! call). Included by the read and write benchmarks with `#[path]`; benches are separate
//! crates, so this is not a module of the library.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The pinned interpreter, or why it cannot be used.
fn python() -> Result<PathBuf, String> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if venv.exists() {
        Ok(venv)
    } else {
        Err(format!(
            "{} is missing (run scripts/python-env.sh)",
            venv.display()
        ))
    }
}

/// Runs the peer script with `args`; `Err` says why TensorStore is not in this run.
pub fn run(args: &[String]) -> Result<serde_json::Value, String> {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/peers/tensorstore_peer.py");
    let out = Command::new(python()?)
        .arg(&script)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run the TensorStore peer: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the TensorStore peer failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("the TensorStore peer printed no JSON: {e}"))
}

/// A time in seconds from the peer's JSON (`value` or `value[0]`).
pub fn seconds(v: &serde_json::Value) -> Option<Duration> {
    let s = v.as_f64().or_else(|| v.get(0).and_then(|x| x.as_f64()))?;
    Some(Duration::from_secs_f64(s))
}

/// A checksum from the peer's JSON (`value` or `value[1]`).
pub fn checksum(v: &serde_json::Value) -> Option<u64> {
    v.as_u64().or_else(|| v.get(1).and_then(|x| x.as_u64()))
}

/// The CPU time of the best call from the peer's JSON (`value[2]`: user + system time of its
/// process, every thread).
pub fn cpu(v: &serde_json::Value) -> Option<Duration> {
    Some(Duration::from_secs_f64(v.get(2)?.as_f64()?))
}
