#!/usr/bin/env bash
# The project's test command (the README names it): every test of the crate.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --all-targets "$@"
cargo test --locked --doc
