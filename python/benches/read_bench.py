"""Python read benchmark: zarrflow's Python module against zarr-python 3.4.2, zarr-python
with zarrs-python's codec pipeline and TensorStore 0.1.86, and against zarrflow's own Rust
path, on the same data in the same run.

Run it with ``scripts/python-bench.sh`` (it installs the module built in release mode into
``.venv``, then runs this file with ``.venv/bin/python``).

Data: the read benchmark's array (``benches/read.rs``): 512³ uint16 (256 MiB), shards 128³,
inner chunks 32³, zstd level 0, written by zarrs into ``DATA/n512`` (``--data``, default a
directory under the system's temporary directory, kept for the next run). The Rust path's
times come from that benchmark's ``--profile`` mode (``cargo bench --bench read -- --profile
CASE zarrflow REPS``), which also writes the data when it is missing. It runs once before
and once after the Python calls, and the best of both is taken, so that the Rust path, too,
meets the machine in more than one spell.

Cases (best of ``--reps``, each library opened once outside the timing, no caches):
read all; the sub-box [100:300]³; 100,000 random points (the Rust benchmark's xorshift
sequence, so both paths read the same points) through ``vindex``. The Python libraries take
turns, one call each per repetition, so that a slower or quieter spell of the machine (on a
shared VM the same call varies by 20-30 % from minute to minute) falls on all of them alike.
Every result's sum is checked against zarrflow's. The table prints each time and
zarrflow-Python's time over each other's (< 1: zarrflow-Python faster).

The Python path is also compared with the Rust path on its own: after the libraries have
taken turns (so the process is warm: a first block of calls in a fresh process runs 10-25 %
slower), zarrflow's module runs its repetitions alone, as the Rust benchmark does. "vs Rust
(alone)" is that time over the Rust time; the columns against the other libraries use the
times taken in turns.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
N = 512
SUB = (slice(100, 300),) * 3
POINTS = 100_000
SEED = 0x9E37_79B9_7F4A_7C15
MASK = (1 << 64) - 1


def random_points(count: int, n: int, seed: int) -> np.ndarray:
    """benches/read.rs's `random_points`: xorshift64, three draws a point, each mod n."""
    out = np.empty((count, 3), dtype=np.int64)
    for i in range(count):
        for j in range(3):
            seed ^= (seed << 13) & MASK
            seed ^= seed >> 7
            seed ^= (seed << 17) & MASK
            out[i, j] = seed % n
    return out


def rust_path(data: pathlib.Path, reps: int) -> dict[str, float]:
    """zarrflow's Rust times of the three cases (seconds), from the read benchmark's profile mode."""
    times = {}
    env = dict(os.environ, ZARRFLOW_BENCH_DATA=str(data))
    for case, name in (("all", "read all"), ("sub", "sub-box"), ("gather", "gather")):
        out = subprocess.run(
            ["cargo", "bench", "--quiet", "--bench", "read", "--", "--profile", case, "zarrflow", str(reps)],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        ms = [float(m) for m in re.findall(r": ([0-9.]+) ms", out)]
        if not ms:
            raise SystemExit(f"the Rust benchmark printed no times:\n{out}")
        times[name] = min(ms) / 1e3
    return times


def cases(points: np.ndarray):
    cols = tuple(points[:, i] for i in range(3))
    return {"read all": (Ellipsis, False), "sub-box": (SUB, False), "gather": (cols, True)}


def open_zarrflow(path: str):
    """zarrflow's reader: (the array, a context for its calls)."""
    import zarrflow

    return zarrflow.open(path), contextlib.nullcontext


def open_zarr_python(path: str, pipeline: str | None):
    """zarr-python's reader, with zarrs-python's codec pipeline when `pipeline` names it."""
    import zarr

    config = {"codec_pipeline.path": pipeline} if pipeline else {}
    with zarr.config.set(config):
        a = zarr.open_array(path, mode="r")
    return a, lambda: zarr.config.set(config)


class TensorStoreReader:
    """TensorStore's array behind the NumPy indexing the other readers take."""

    def __init__(self, path: str):
        import tensorstore as ts

        self.a = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
        self.vindex = _Vindex(self.a)

    def __getitem__(self, key):
        return self.a[key].read().result()


class _Vindex:
    def __init__(self, a):
        self.a = a

    def __getitem__(self, key):
        return self.a.vindex[key].read().result()


def open_tensorstore(path: str):
    return TensorStoreReader(path), contextlib.nullcontext


def interleaved(readers: dict, reps: int, points: np.ndarray) -> dict:
    """Best time and last result per reader and case, the readers taking turns each rep."""
    out = {name: {} for name in readers}
    for case, (key, points_key) in cases(points).items():
        best = {name: float("inf") for name in readers}
        for _ in range(reps):
            for name, (a, context) in readers.items():
                with context():
                    t = time.perf_counter()
                    value = a.vindex[key] if points_key else a[key]
                    best[name] = min(best[name], time.perf_counter() - t)
                out[name][case] = (best[name], value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "zarrflow-bench"))
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    print("zarrflow Python read benchmark: 512³ uint16 (256 MiB), shards 128³, inner 32³, zstd 0;",
          f"{os.cpu_count()} cores; best of {args.reps}", flush=True)
    before = rust_path(data, args.reps)
    path = str(data / f"n{N}")
    points = random_points(POINTS, N, SEED)
    readers = {"zarrflow (Python)": open_zarrflow(path)}
    peers = {
        "zarr-python 3.4.2": lambda: open_zarr_python(path, None),
        "zarr-python + zarrs": lambda: open_zarr_python(path, "zarrs.ZarrsCodecPipeline"),
        "TensorStore 0.1.86": lambda: open_tensorstore(path),
    }
    for name, open_reader in peers.items():
        try:
            readers[name] = open_reader()
        except ImportError as e:
            print(f"{name}: not in this run ({e})")
    libs = interleaved(readers, args.reps, points)
    alone = interleaved({"zarrflow (Python)": readers["zarrflow (Python)"]}, args.reps, points)
    after = rust_path(data, args.reps)
    rust = {case: min(before[case], after[case]) for case in before}
    ours = libs["zarrflow (Python)"]
    for name, results in libs.items():
        for case, (_, value) in results.items():
            expect = int(np.asarray(ours[case][1]).sum(dtype=np.uint64))
            got = int(np.asarray(value).sum(dtype=np.uint64))
            if got != expect:
                raise SystemExit(f"{name} {case}: sum {got}, zarrflow's is {expect}")
    print("check: every library's results have zarrflow's sums\n")
    names = list(libs)
    print("times in ms; ratios: zarrflow-Python time / the other's (< 1: zarrflow-Python faster)")
    header = [
        "case",
        "zarrflow (Rust)",
        "zarrflow (Python, alone)",
        *names,
        "vs Rust (alone)",
        *(f"vs {n}" for n in names[1:]),
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for case in ours:
        t = ours[case][0]
        t_alone = alone["zarrflow (Python)"][case][0]
        cells = [case, f"{rust[case] * 1e3:.1f}", f"{t_alone * 1e3:.1f}"]
        cells += [f"{libs[n][case][0] * 1e3:.1f}" for n in names]
        cells.append(f"{t_alone / rust[case]:.2f}x")
        cells += [f"{t / libs[n][case][0]:.2f}x" for n in names[1:]]
        print("| " + " | ".join(cells) + " |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
