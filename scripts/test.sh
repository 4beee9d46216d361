#!/usr/bin/env bash
# The project's test command (the README names it): every test of the crate.
set -euo pipefail
cd "$(dirname "$0")/.."
# The interop tests read zarrflow output with zarr-python and TensorStore from .venv, and with
# zarr-python 2.18 from .venv-zarr2 (tests/interop_zarr2.rs).
scripts/python-env.sh
scripts/python-env-zarr2.sh
# The Azure tests (tests/azure_azurite.rs) start Azurite's blob service from .azurite.
scripts/azurite-env.sh
cargo test --locked --all-targets "$@"
cargo test --locked --doc
# The example application on the Rust API runs to its end (it asserts what it does).
cargo run --locked --quiet --example app
# The Python module (python/): a debug build (about a minute on 2 cores from a cold
# python/target; a release build takes several), installed into .venv, then its tests.
(cd python && VIRTUAL_ENV="$PWD/../.venv" ../.venv/bin/maturin develop --locked --quiet)
(cd python && ../.venv/bin/python -m pytest -q -p no:cacheprovider tests)
