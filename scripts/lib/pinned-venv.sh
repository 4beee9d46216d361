# Sourced by scripts/python-env.sh and scripts/python-env-zarr2.sh: creates (or refreshes) a
# virtual environment with pinned packages. The sourcing script sets:
#   NAME             its name, for messages
#   VENV             the venv directory
#   REQ              the requirements file (exact pins, binary wheels only)
#   WANT             the interpreter wanted, in words ("Python >= 3.12")
#   VERSION_TEST     a Python expression over sys.version_info that is true for it
#   PY_VAR           the variable that may name the interpreter (used only when $VENV has
#                    to be created: delete $VENV to switch interpreters)
#   PATH_CANDIDATES  interpreters looked for on PATH, in order
#   PYENV_GLOB       pyenv versions looked for next, newest first ("3.1[2-9]*")
#   CHECK            Python code run in the venv once installed (prints the versions)
# and calls pinned_venv. A stamp file ($VENV/.zarrflow-requirements.sha256) records the hash of
# the requirements and the interpreter; when both are unchanged a second run does nothing.

err() { echo "$NAME: error: $*" >&2; }
log() { echo "$NAME: $*" >&2; }

# True if $1 is a wanted interpreter that can create venvs.
is_suitable() {
  "$1" -c "import sys, venv; sys.exit(0 if $VERSION_TEST else 1)" >/dev/null 2>&1
}

find_python() {
  local named="${!PY_VAR:-}"
  if [ -n "$named" ]; then
    if is_suitable "$named"; then
      echo "$named"; return 0
    fi
    return 1
  fi
  local cand
  for cand in $PATH_CANDIDATES; do
    if command -v "$cand" >/dev/null 2>&1 && is_suitable "$(command -v "$cand")"; then
      command -v "$cand"; return 0
    fi
  done
  # pyenv installs, newest version first (sort -V handles 3.12.10 > 3.12.9)
  local found
  # shellcheck disable=SC2086 # the glob is meant to expand
  found="$(ls -d "$HOME"/.pyenv/versions/$PYENV_GLOB/bin/python3 2>/dev/null | sort -Vr || true)"
  for cand in $found; do
    if is_suitable "$cand"; then
      echo "$cand"; return 0
    fi
  done
  return 1
}

req_hash() {
  # hash of the requirements file plus the venv interpreter's version
  { cat "$REQ"; "$VENV/bin/python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

pinned_venv() {
  local named="${!PY_VAR:-}"
  if [ -n "$named" ] && ! is_suitable "$named"; then
    err "$PY_VAR=$named is not a working $WANT with the venv module"
    exit 1
  fi
  if [ ! -f "$REQ" ]; then
    err "missing $REQ"
    exit 1
  fi
  # Fast path: the venv exists, works, and was built from these exact requirements.
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
      err "no $WANT found."
      err "  tried: \$$PY_VAR, $PATH_CANDIDATES on PATH, $HOME/.pyenv/versions/$PYENV_GLOB/bin/python3"
      err "  install one (e.g. with pyenv or apt-get, with its venv package)"
      err "  or point $PY_VAR at it."
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
  log "installing pinned packages from ${REQ#"$ROOT"/}"
  "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    --only-binary=:all: -r "$REQ"
  "$VENV/bin/python" -c "$CHECK" >&2
  req_hash >"$STAMP"
  log "ready: $VENV/bin/python"
}
