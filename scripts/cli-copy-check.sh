#!/usr/bin/env bash
# `zarrflow copy` of a 288 MiB array on a terminal: shows the progress bar, checks the copy
# byte for byte and checks peak RSS against the stated bound (20 MB + jobs x 6 x shard bytes).
#
# Usage: scripts/cli-copy-check.sh [WORKDIR]   (needs python3, script(1) and GNU time)
set -euo pipefail
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cd "$(dirname "$0")/.."
cargo build --release --bin zarrflow -q
bin=${CARGO_TARGET_DIR:-target}/release/zarrflow
bin=$(realpath "$bin")
cd "$work"

# 9216 x 8192 float32 (288 MiB): a smooth ramp with noise in the low bits
if [ ! -f big.npy ]; then
python3 - <<'PY'
import array, math, os, struct
rows, cols = 9216, 8192
d = b"{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
pad = (64 - (10 + len(d) + 1) % 64) % 64
with open("big.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d) + pad + 1) + d + b" " * pad + b"\n")
    base = array.array("f", [math.sin(i / 97.0) * 100.0 for i in range(cols)]).tobytes()
    for _ in range(0, rows, 512):
        u = array.array("I")
        u.frombytes(base * 512)
        noise = os.urandom(len(u))
        for i in range(len(u)):
            u[i] ^= noise[i]
        f.write(u.tobytes())
PY
fi
rm -rf src.zarr dst.zarr
"$bin" create src.zarr --shape 9216,8192 --dtype float32 --chunks 512,512 >/dev/null
"$bin" set src.zarr --from big.npy >/dev/null

jobs=2
shard_bytes=$((2048 * 2048 * 4))
# a pseudo-terminal, so that the progress bar is drawn
script -qfec "/usr/bin/time -o time.txt -f '%M' $bin copy src.zarr dst.zarr -j $jobs --shards 2048,2048 --chunks 256,256" progress.log >/dev/null
rss_kib=$(tail -1 time.txt)
bound_kib=$(( (20 * 1000 * 1000 + jobs * 6 * shard_bytes) / 1024 ))
frames=$(tr '\r' '\n' < progress.log | grep -c 'shards.*ETA' || true)
echo "last progress frame: $(tr '\r' '\n' < progress.log | grep 'shards.*ETA' | tail -1 | sed 's/\x1b\[[0-9;]*[A-Za-z]//g')"
echo "progress frames: $frames; peak RSS: $rss_kib KiB; bound: $bound_kib KiB"
"$bin" get dst.zarr -o out.npy
cmp out.npy big.npy && echo "copy identical"
rm -f out.npy
[ "$frames" -gt 0 ] || { echo "no progress bar drawn"; exit 1; }
[ "$rss_kib" -le "$bound_kib" ] || { echo "peak RSS over the bound"; exit 1; }
# not a terminal: nothing printed
rm -rf dst2.zarr
out=$("$bin" copy src.zarr dst2.zarr --shards 2048,2048 2>&1)
[ -z "$out" ] || { echo "output when not on a terminal: $out"; exit 1; }
echo "ok"
