#!/usr/bin/env bash
# The project's test command (the README names it): every test of the crate.
set -euo pipefail
cd "$(dirname "$0")/.."
# The interop tests read zarrflow output with zarr-python and TensorStore from .venv.
scripts/python-env.sh
cargo test --locked --all-targets "$@"
cargo test --locked --doc
# The example application on the Rust API runs to its end (it asserts what it does).
cargo run --locked --quiet --example app
