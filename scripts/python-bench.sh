#!/usr/bin/env bash
# The Python read benchmark (python/benches/read_bench.py): zarrflow's Python module against
# zarr-python, zarr-python + zarrs-python and TensorStore, and against zarrflow's Rust path,
# on the same data in the same run. Not part of the test command (it takes minutes).
#
#   scripts/python-bench.sh [--data DIR] [--reps N]
#
# Installs the module built in release mode into .venv (scripts/test.sh puts a debug build
# back), and builds the Rust read benchmark, whose --profile mode gives the Rust times.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/python-env.sh
(cd python && VIRTUAL_ENV="$PWD/../.venv" ../.venv/bin/maturin develop --release --locked --quiet)
cargo bench --locked --bench read --no-run --quiet
exec .venv/bin/python python/benches/read_bench.py "$@"
