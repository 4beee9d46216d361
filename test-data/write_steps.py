"""Replays a sequence of writes with zarr-python or TensorStore, for tests that compare the
objects those libraries store with zarrflow's (`tests/shard_layout.rs`).

Usage: python write_steps.py PLAN.json

PLAN.json is a list of {"dir": ..., "writer": "zarr-python" | "tensorstore", "steps":
[{"slices": [[start, stop, step], ...], "npy": VALUES.npy}, ...]}. Each "dir" already holds
the array's zarr.json (written by zarrflow) and nothing else; the steps are written to it in
order, each as `array[slices] = values`, by zarr-python 3 (its default
`subchunk_write_order`, Morton) or TensorStore (C order). Prints one line per array.
"""

import json
import sys

import numpy as np


def selection(slices):
    return tuple(slice(a, b, c) for a, b, c in slices)


def replay_zarr_python(path, steps):
    import zarr

    array = zarr.open_array(path, mode="r+")
    for step in steps:
        array[selection(step["slices"])] = np.load(step["npy"])


def replay_tensorstore(path, steps):
    import tensorstore as ts

    array = ts.open(
        {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}},
        open=True,
    ).result()
    for step in steps:
        array[selection(step["slices"])] = np.load(step["npy"])


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    for entry in plan:
        replay = {
            "zarr-python": replay_zarr_python,
            "tensorstore": replay_tensorstore,
        }[entry["writer"]]
        replay(entry["dir"], entry["steps"])
        print(f"{entry['writer']}: {entry['dir']}: {len(entry['steps'])} writes")


if __name__ == "__main__":
    main()
