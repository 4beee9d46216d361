#!/usr/bin/env bash
# Install the pinned Azurite (Microsoft's Azure Storage emulator) for the Azure tests
# (tests/azure_azurite.rs starts its blob service on 127.0.0.1).
#
#   scripts/azurite-env.sh    # npm ci into .azurite/ at the repo root
#
# Azurite 3.37.0 and its whole dependency tree are pinned by scripts/azurite/package.json and
# package-lock.json (`npm ci` installs exactly the lock file). Needs node and npm (Azurite 3.37
# needs Node >= 18). A stamp (.azurite/.zarrflow-lock.sha256, the lock file's hash) makes a
# second run return at once. .azurite/ is gitignored.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/.azurite"
SRC="$ROOT/scripts/azurite"
BIN="$DIR/node_modules/.bin/azurite-blob"
STAMP="$DIR/.zarrflow-lock.sha256"

err() { echo "azurite-env.sh: error: $*" >&2; }
log() { echo "azurite-env.sh: $*" >&2; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  err "node and npm are needed (e.g. apt-get install nodejs npm)"
  exit 1
fi
if ! node -e 'process.exit(parseInt(process.versions.node) >= 18 ? 0 : 1)'; then
  err "Azurite 3.37.0 needs Node >= 18, found $(node --version)"
  exit 1
fi
lock_hash() { cat "$SRC/package.json" "$SRC/package-lock.json" | sha256sum | cut -d' ' -f1; }
if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(lock_hash)" ]; then
  log "up to date ($DIR, azurite $("$BIN" --version))"
  exit 0
fi
log "installing scripts/azurite/package-lock.json (azurite 3.37.0) into $DIR"
mkdir -p "$DIR"
rm -f "$STAMP"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR/"
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
"$BIN" --version >/dev/null
lock_hash >"$STAMP"
log "ready: $BIN ($("$BIN" --version))"
