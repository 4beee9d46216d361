//! The pinned Python environments the interop tests check zarrflow's output with:
//! `.venv` (zarr-python 3, TensorStore; `scripts/python-env.sh`) and `.venv-zarr2`
//! (zarr-python 2.18; `scripts/python-env-zarr2.sh`). `scripts/test.sh` makes both.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The interpreter of the environment `venv` (`.venv` or `.venv-zarr2`), which must exist.
pub fn python(venv: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(venv)
        .join("bin/python");
    let script = match venv {
        ".venv-zarr2" => "scripts/python-env-zarr2.sh",
        _ => "scripts/python-env.sh",
    };
    assert!(
        p.exists(),
        "{} is missing: run {script} (scripts/test.sh does)",
        p.display()
    );
    p
}

/// Runs `python args... list` (a checker reading the list file of arrays to check) and
/// returns what it printed; fails the test, naming `checker`, when it does not succeed.
pub fn run_checker<S: AsRef<OsStr>>(
    python: &Path,
    args: &[S],
    list: &Path,
    checker: &str,
) -> String {
    let out = std::process::Command::new(python)
        .args(args)
        .arg(list)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{checker} disagrees:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
