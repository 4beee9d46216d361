"""zarr-indexing 0.3.0 as the peer of zarrflow's planning benchmark (benches/planning.rs).

The Rust benchmark writes its index arrays to .npy files and a JSON list of cases, runs this
script with the pinned environment's interpreter (`.venv/bin/python`, made by
scripts/python-env.sh) in the same run, and reads one JSON object from its standard output.

    python zarr_indexing_peer.py CASES.json
        CASES.json: [{"name": str, "shape": [int], "chunks": [int] (regular), or
                      "chunks_rle": [[[size, count], ...] per axis] (explicit per-axis chunk
                      sizes as run lengths, a VaryingDimension per axis), "kind": "oindex" | "vindex" | "strided" | "box",
                      "arrays": [path.npy] (oindex / vindex), "steps": [int] (strided),
                      "reps": int}, ...]
        -> {name: {"wall": s, "cpu": s, "rows": [rows per table], "points": int}, ...}

What is timed, per run (min over `reps` runs, wall clock and thread CPU time): a fresh
`plan_chunks(transform, grids)` and its `partition()` (the factored tables: chunk ids, CSR
pointers, index values and positions grouped by chunk, chunk starts and extents), then the
`local` column of every IndexedSet and JointSet (chunk-local coordinates: zarr-indexing
computes them lazily on first access; zarrflow's partition always builds them, so they are
forced here to time the same work). Building the transform (`oindex[...]`, `vindex[...]`,
`[::7, ::3]`, which copies and bounds-checks the index arrays) and the grids is outside the
timing, as it is on the zarrflow side. `rows` and `points` let the benchmark check that both
planners produced the same partition shape.
"""

import json
import sys
import time

import numpy as np
from zarr_indexing import IndexedSet, IndexTransform, JointSet, plan_chunks
from zarr_indexing.grid import dimension_grids_from_chunks


def transform_of(case):
    base = IndexTransform.from_shape(tuple(case["shape"]))
    kind = case["kind"]
    if kind == "oindex":
        return base.oindex[tuple(np.load(p) for p in case["arrays"])]
    if kind == "vindex":
        return base.vindex[tuple(np.load(p) for p in case["arrays"])]
    if kind == "strided":
        return base[tuple(slice(None, None, s) for s in case["steps"])]
    if kind == "box":
        return base
    raise ValueError(f"unknown case kind {kind!r}")


def plan_once(transform, grids):
    partition = plan_chunks(transform, grids).partition()
    points = 0
    for table in (*partition.sets, *partition.joint_sets):
        if isinstance(table, (IndexedSet, JointSet)):
            points += int(table.local.shape[0])
    return partition, points


def run_case(case):
    transform = transform_of(case)
    if "chunks_rle" in case:
        chunks = [[s for s, n in axis for _ in range(n)] for axis in case["chunks_rle"]]
    else:
        chunks = case["chunks"]
    grids = dimension_grids_from_chunks(chunks, shape=tuple(case["shape"]))
    best_wall, best_cpu = float("inf"), float("inf")
    partition, points = None, 0
    for _ in range(int(case["reps"])):
        w, c = time.perf_counter(), time.thread_time()
        partition, points = plan_once(transform, grids)
        c = time.thread_time() - c
        w = time.perf_counter() - w
        best_wall, best_cpu = min(best_wall, w), min(best_cpu, c)
    return {
        "wall": best_wall,
        "cpu": best_cpu,
        "rows": [int(r) for r in partition.row_shape],
        "points": points,
    }


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    out = {case["name"]: run_case(case) for case in cases}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
