"""TensorStore as a peer in zarrflow's read and write benchmarks (benches/read.rs, write.rs).

The Rust benchmark runs this script with the pinned environment's interpreter
(`.venv/bin/python`, made by scripts/python-env.sh), on the same data, in the same run, and
reads one JSON object from its standard output: the best time of each case in seconds, the
process's CPU time (user + system, all threads) of that best call and, for reads, a checksum
of each result (for writes, of the array at the end), which the benchmark compares with its
own. Import, open and data
generation are outside the timings; TensorStore's cache pool is off (its default), as
zarrflow's and zarrs' are, except in write-s3's two cached cases.

    python tensorstore_peer.py read DIR REPS SUB POINTS.npy
        DIR: a zarr v3 array (written by zarrs); SUB: "z0:z1,y0:y1,x0:x1";
        POINTS.npy: uint64 (count, 3) coordinates
        -> {"read all": [s, sum, cpu_s], "sub-box": [s, sum, cpu_s], "gather": [s, sum, cpu_s]}
    python tensorstore_peer.py read-http URL REPS SUB POINTS.npy CASE
        the same array served over HTTP at URL (the read benchmark's delaying server, through
        TensorStore's read-only `http` kvstore); only CASE ("read all", "sub-box" or "gather")
        -> {CASE: [s, sum, cpu_s]}
    python tensorstore_peer.py write DIR N SHARD INNER REPS
        writes a new array at DIR (sharded, zstd level 0 inner chunks, as zarrflow and zarrs
        do) -> {"write whole": [s, null, cpu_s], "update one inner chunk": [...],
                "100 small writes": [...], "100 small writes (transaction)": [...],
                "sum": final sum}
    python tensorstore_peer.py write-s3 ENDPOINT BUCKET PATH N SHARD INNER REPS
        the same cases into a new array at s3://BUCKET/PATH of the S3-compatible server at
        ENDPOINT (the write benchmark's delaying server, benches/peers/s3_latency.rs), with
        anonymous credentials (TensorStore still hashes every body for its requests'
        x-amz-content-sha256, as object_store does when it signs them); adds
        "update one inner chunk (cache)" and "100 small writes (cache)", through a handle
        with a 64 MiB cache pool that does not recheck cached data
"""

import json
import sys
import time

import numpy as np
import tensorstore as ts


# Repetitions of the one-inner-chunk update (a write of about a millisecond, where a
# machine's noise is as large as the time): the same number in benches/write.rs.
UPDATE_REPS = 25
# The cache pool of the write-s3 mode's cached cases: WRITE_CACHE_BYTES in benches/write.rs.
CACHE_BYTES = 64 << 20


def best(reps, f):
    """The best time of `reps` calls of `f`, the last result, and the CPU time (user +
    system of this process, every thread) of the best call."""
    t_best, out, cpu = float("inf"), None, 0.0
    for _ in range(reps):
        # the previous result is freed before the timing starts, as the Rust benchmarks
        # drop theirs after it ends: the time is of the call alone
        out = None
        c = time.process_time()
        t = time.perf_counter()
        out = f()
        e = time.perf_counter() - t
        if e < t_best:
            t_best, cpu = e, time.process_time() - c
    return t_best, out, cpu


def timed(reps, f):
    """`[best seconds, None, CPU seconds of the best call]` of `reps` calls of `f` (a write
    case)."""
    t, _, cpu = best(reps, f)
    return [t, None, cpu]


def read_cases(kvstore, reps, sub, points_file, only=None):
    arr = ts.open({"driver": "zarr3", "kvstore": kvstore}, read=True).result()
    box = tuple(slice(int(a), int(b)) for a, b in (r.split(":") for r in sub.split(",")))
    pts = np.load(points_file)
    cols = tuple(pts[:, i].astype(np.int64) for i in range(3))
    out = {}
    for name, view in (
        ("read all", arr),
        ("sub-box", arr[box]),
        ("gather", arr.vindex[cols]),
    ):
        if only is not None and name != only:
            continue
        t, v, cpu = best(reps, lambda view=view: view.read().result())
        out[name] = [t, int(v.astype(np.uint64).sum()), cpu]
    return out


def write_cases(kvstore, n, shard, inner, reps, cache=False):
    spec = {
        "driver": "zarr3",
        "kvstore": kvstore,
        "metadata": {
            "shape": [n] * 3,
            "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [shard] * 3}},
            "fill_value": 0,
            "codecs": [
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [inner] * 3,
                        "codecs": [
                            {"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
                        ],
                        "index_codecs": [
                            {"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "crc32c"},
                        ],
                    },
                }
            ],
        },
        "create": True,
        "delete_existing": True,
    }
    arr = ts.open(spec).result()
    i0, i1, i2 = np.ogrid[0:n, 0:n, 0:n]
    data = ((i0 + i1 * i1 // 32 + i2 * i2 * i2) % 65536).astype(np.uint16)
    out = {}
    out["write whole"] = timed(reps, lambda: arr.write(data).result())
    s0 = 0 if n == shard else shard
    region = (
        slice(s0 + inner, s0 + 2 * inner),
        slice(s0 + inner, s0 + 2 * inner),
        slice(s0, s0 + inner),
    )
    chunk = ((np.arange(inner**3) % 1000) + 7).astype(np.uint16).reshape((inner,) * 3)
    # a write of about a millisecond: best of UPDATE_REPS (as every library's in write.rs)
    out["update one inner chunk"] = timed(UPDATE_REPS, lambda: arr[region].write(chunk).result())
    points = [
        (s0 + (i * 37) % shard, s0 + (i * 11) % shard, s0 + (i * 5) % shard) for i in range(100)
    ]

    def small():
        for i, p in enumerate(points):
            arr[p].write(np.uint16(i)).result()

    def small_txn():
        txn = ts.Transaction()
        view = arr.with_transaction(txn)
        for i, p in enumerate(points):
            view[p].write(np.uint16(i)).result()
        txn.commit_async().result()

    out["100 small writes"] = timed(reps, small)
    out["100 small writes (transaction)"] = timed(reps, small_txn)
    if cache:
        # the update and the small writes again through a handle with a cache pool, using
        # cached shards without rechecking them (zarrflow's write cache checks them by its
        # conditional PUT)
        cached_spec = {k: v for k, v in spec.items() if k not in ("create", "delete_existing")}
        cached_spec["open"] = True
        cached_spec["recheck_cached_data"] = False
        cached_spec["context"] = {"cache_pool": {"total_bytes_limit": CACHE_BYTES}}
        cached = ts.open(cached_spec).result()
        out["update one inner chunk (cache)"] = timed(
            UPDATE_REPS, lambda: cached[region].write(chunk).result()
        )

        def small_cached():
            for i, p in enumerate(points):
                cached[p].write(np.uint16(i)).result()

        out["100 small writes (cache)"] = timed(reps, small_cached)
    out["sum"] = int(arr.read().result().astype(np.uint64).sum())
    return out


def main():
    mode = sys.argv[1]
    if mode == "read":
        path, reps, sub, points = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
        out = read_cases({"driver": "file", "path": path}, reps, sub, points)
    elif mode == "read-http":
        url, reps, sub, points, case = sys.argv[2], int(sys.argv[3]), *sys.argv[4:7]
        out = read_cases({"driver": "http", "base_url": url}, reps, sub, points, case)
    elif mode == "write":
        path, n, shard, inner, reps = sys.argv[2], *map(int, sys.argv[3:7])
        out = write_cases({"driver": "file", "path": path}, n, shard, inner, reps)
    elif mode == "write-s3":
        endpoint, bucket, path, n, shard, inner, reps = *sys.argv[2:5], *map(int, sys.argv[5:9])
        kvstore = {
            "driver": "s3",
            "bucket": bucket,
            "path": path,
            "endpoint": endpoint,
            "aws_region": "us-east-1",
            "aws_credentials": {"type": "anonymous"},
        }
        out = write_cases(kvstore, n, shard, inner, reps, cache=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
