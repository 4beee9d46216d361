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
# the interpreter; when both are unchanged a second run does nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
REQ="$ROOT/test-data/requirements.txt"
STAMP="$VENV/.zarrflow-requirements.sha256"

err() { echo "python-env.sh: error: $*" >&2; }
log() { echo "python-env.sh: $*" >&2; }

# Prints "ok" if $1 is an interpreter of version >= 3.12 that can create venvs.
is_suitable() {
  "$1" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
  if [ -n "${ZARRFLOW_PYTHON:-}" ]; then
    if is_suitable "$ZARRFLOW_PYTHON"; then
      echo "$ZARRFLOW_PYTHON"; return 0
    fi
    err "ZARRFLOW_PYTHON=$ZARRFLOW_PYTHON is not a working Python >= 3.12 with the venv module"
    return 1
  fi
  local cand
  for cand in python3.13 python3.12; do
    if command -v "$cand" >/dev/null 2>&1 && is_suitable "$(command -v "$cand")"; then
      command -v "$cand"; return 0
    fi
  done
  # pyenv installs, newest version first (sort -V handles 3.12.10 > 3.12.9)
  local found
  found="$(ls -d "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -Vr || true)"
  for cand in $found; do
    if is_suitable "$cand"; then
      echo "$cand"; return 0
    fi
  done
  return 1
}

if [ -n "${ZARRFLOW_PYTHON:-}" ] && ! is_suitable "$ZARRFLOW_PYTHON"; then
  err "ZARRFLOW_PYTHON=$ZARRFLOW_PYTHON is not a working Python >= 3.12 with the venv module"
  exit 1
fi

if [ ! -f "$REQ" ]; then
  err "missing $REQ"
  exit 1
fi

req_hash() {
  # hash of the requirements file plus the venv interpreter's version
  { cat "$REQ"; "$VENV/bin/python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

# Fast path: venv exists, works, and was built from these exact requirements.
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
    err "no Python >= 3.12 found."
    err "  tried: \$ZARRFLOW_PYTHON, python3.13 and python3.12 on PATH, $HOME/.pyenv/versions/3.1[2-9]*/bin/python3"
    err "  install one (e.g. 'pyenv install 3.12' or apt-get install python3.12 python3.12-venv)"
    err "  or point ZARRFLOW_PYTHON at it."
    exit 1
  fi
  log "using $PY ($("$PY" --version 2>&1))"
  if [ -e "$VENV" ]; then
    log "removing unusable $VENV"
    rm -rf "$VENV"
  fi
  if ! "$PY" -m venv "$VENV"; then
    err "'$PY -m venv $VENV' failed (on Debian/Ubuntu install the python3.x-venv package)"
    exit 1
  fi
fi

rm -f "$STAMP"
log "installing pinned packages from test-data/requirements.txt"
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
  --only-binary=:all: -r "$REQ"
"$VENV/bin/python" -c 'import zarr, tensorstore, numpy; print("python-env.sh: zarr", zarr.__version__, "numpy", numpy.__version__, "tensorstore ok")' >&2
req_hash >"$STAMP"
log "ready: $VENV/bin/python"
