#!/usr/bin/env bash
# Create (or refresh) the pinned Python environment used for interop fixtures and checks.
#
#   scripts/python-env.sh          # creates .venv/ at the repo root, installs test-data/requirements.txt
#
# Python >= 3.12 is required (zarr-python 3.4 needs it). Looked for, in order:
#   1. $ZARRFLOW_PYTHON (if set; it is an error if that interpreter is unsuitable; it is used
#      only when .venv/ has to be created: delete .venv/ to switch interpreters)
#   2. python3.13, python3.12 on PATH
#   3. $HOME/.pyenv/versions/3.1[2-9]*/bin/python3 (newest first)
# A stamp file (.venv/.zarrflow-requirements.sha256) records the hash of the requirements and
# the interpreter; when both are unchanged a second run does nothing. The steps are shared
# with python-env-zarr2.sh (scripts/lib/pinned-venv.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME="python-env.sh"
VENV="$ROOT/.venv"
REQ="$ROOT/test-data/requirements.txt"
STAMP="$VENV/.zarrflow-requirements.sha256"
WANT="Python >= 3.12"
VERSION_TEST="sys.version_info >= (3, 12)"
PY_VAR="ZARRFLOW_PYTHON"
PATH_CANDIDATES="python3.13 python3.12"
PYENV_GLOB="3.1[2-9]*"
CHECK='import zarr, tensorstore, numpy; print("python-env.sh: zarr", zarr.__version__, "numpy", numpy.__version__, "tensorstore ok")'

# shellcheck source=lib/pinned-venv.sh
. "$ROOT/scripts/lib/pinned-venv.sh"
pinned_venv
