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
# and the interpreter; when both are unchanged a second run does nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv-zarr2"
REQ="$ROOT/test-data/requirements-zarr2.txt"
STAMP="$VENV/.zarrflow-requirements.sha256"

err() { echo "python-env-zarr2.sh: error: $*" >&2; }
log() { echo "python-env-zarr2.sh: $*" >&2; }

# True if $1 is a Python 3.11 interpreter that can create venvs.
is_suitable() {
  "$1" -c 'import sys, venv; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' >/dev/null 2>&1
}

find_python() {
  if [ -n "${ZARRFLOW_PYTHON_ZARR2:-}" ]; then
    if is_suitable "$ZARRFLOW_PYTHON_ZARR2"; then
      echo "$ZARRFLOW_PYTHON_ZARR2"; return 0
    fi
    return 1
  fi
  local cand
  for cand in python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 && is_suitable "$(command -v "$cand")"; then
      command -v "$cand"; return 0
    fi
  done
  local found
  found="$(ls -d "$HOME"/.pyenv/versions/3.11*/bin/python3 2>/dev/null | sort -Vr || true)"
  for cand in $found; do
    if is_suitable "$cand"; then
      echo "$cand"; return 0
    fi
  done
  return 1
}

if [ -n "${ZARRFLOW_PYTHON_ZARR2:-}" ] && ! is_suitable "$ZARRFLOW_PYTHON_ZARR2"; then
  err "ZARRFLOW_PYTHON_ZARR2=$ZARRFLOW_PYTHON_ZARR2 is not a working Python 3.11 with the venv module"
  exit 1
fi
if [ ! -f "$REQ" ]; then
  err "missing $REQ"
  exit 1
fi

req_hash() {
  { cat "$REQ"; "$VENV/bin/python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && is_suitable "$VENV/bin/python"; then
  if [ "$(cat "$STAMP")" = "$(req_hash)" ]; then
    log "up to date ($VENV, $("$VENV/bin/python" --version 2>&1))"
    exit 0
  fi
fi

if [ -x "$VENV/bin/python" ] && is_suitable "$VENV/bin/python"; then
  log "requirements changed or no stamp; updating existing $VENV"
else
  if ! PY="$(find_python)"; then
    err "no Python 3.11 found."
    err "  tried: \$ZARRFLOW_PYTHON_ZARR2, python3.11 and python3 on PATH, $HOME/.pyenv/versions/3.11*/bin/python3"
    err "  install one (e.g. 'pyenv install 3.11' or apt-get install python3.11 python3.11-venv)"
    err "  or point ZARRFLOW_PYTHON_ZARR2 at it."
    exit 1
  fi
  log "using $PY ($("$PY" --version 2>&1))"
  if [ -e "$VENV" ]; then
    log "removing unusable $VENV"
    rm -rf "$VENV"
  fi
  if ! "$PY" -m venv "$VENV"; then
    err "'$PY -m venv $VENV' failed (on Debian/Ubuntu install the python3.11-venv package)"
    exit 1
  fi
fi

rm -f "$STAMP"
log "installing pinned packages from test-data/requirements-zarr2.txt"
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
  --only-binary=:all: -r "$REQ"
"$VENV/bin/python" -c 'import zarr, numcodecs, numpy; print("python-env-zarr2.sh: zarr", zarr.__version__, "numcodecs", numcodecs.__version__, "numpy", numpy.__version__)' >&2
req_hash >"$STAMP"
log "ready: $VENV/bin/python"
