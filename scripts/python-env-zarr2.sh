#!/usr/bin/env bash
# Create (or refresh) the pinned zarr-python 2.18 environment: the generator of the
# test-data/fixtures/zarr-python-2.18 fixtures and the reader of zarrflow's v2 writes.
#
#   scripts/python-env-zarr2.sh    # creates .venv-zarr2/ at the repo root, installs test-data/requirements-zarr2.txt
#
# Python 3.11 is required (the pinned wheels: numpy 2.4.6 and numcodecs 0.15.2 for cp311).
# Looked for, in order:
#   1. $ZARRFLOW_PYTHON_ZARR2 (if set; it is an error if that interpreter is unsuitable; used
#      only when .venv-zarr2/ has to be created: delete it to switch interpreters)
#   2. python3.11 on PATH, then python3 on PATH if it is 3.11
#   3. $HOME/.pyenv/versions/3.11*/bin/python3 (newest first)
# A stamp file (.venv-zarr2/.zarrflow-requirements.sha256) records the hash of the requirements
# and the interpreter; when both are unchanged a second run does nothing. The steps are shared
# with python-env.sh (scripts/lib/pinned-venv.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME="python-env-zarr2.sh"
VENV="$ROOT/.venv-zarr2"
REQ="$ROOT/test-data/requirements-zarr2.txt"
STAMP="$VENV/.zarrflow-requirements.sha256"
WANT="Python 3.11"
VERSION_TEST="sys.version_info[:2] == (3, 11)"
PY_VAR="ZARRFLOW_PYTHON_ZARR2"
PATH_CANDIDATES="python3.11 python3"
PYENV_GLOB="3.11*"
CHECK='import zarr, numcodecs, numpy; print("python-env-zarr2.sh: zarr", zarr.__version__, "numcodecs", numcodecs.__version__, "numpy", numpy.__version__)'

# shellcheck source=lib/pinned-venv.sh
. "$ROOT/scripts/lib/pinned-venv.sh"
pinned_venv
