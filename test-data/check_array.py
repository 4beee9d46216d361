#!/usr/bin/env python3
"""Open a Zarr v3 or v2 array on the local filesystem with zarr-python and/or TensorStore and compare
its full contents with an expected .npy file, bit-exactly.

    .venv/bin/python test-data/check_array.py ARRAY_PATH EXPECTED.npy [--reader zarr|tensorstore|both]
    .venv/bin/python test-data/check_array.py ARRAY_PATH --metadata-only [--reader ...]
    .venv/bin/python test-data/check_array.py --batch LIST.txt [--reader ...]

With --batch, LIST.txt holds one "ARRAY_PATH EXPECTED.npy" pair per line (tab-separated), all
checked in one process.

Prints one line per reader ("OK", "MISMATCH ..." or "ERROR ...") and exits non-zero if any
reader failed. Floats and complex numbers are compared by their raw bytes, so NaN payloads,
the sign of NaN and -0.0 must match exactly. ARRAY_PATH is the directory holding the array's
zarr.json, or its .zarray for a Zarr v2 array (opened with zarr-python's zarr_format=2 and
TensorStore's "zarr" driver); the array is opened as the root of a local store.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from typing import Callable

import warnings

import numpy as np

# zarr-python's sharding code warns (overflow in scalar add, partial reads disabled, ...): one
# line per reader is the contract, so keep warnings off the output.
warnings.filterwarnings("ignore", category=RuntimeWarning)
warnings.filterwarnings("ignore", category=UserWarning)

READERS = ("zarr", "tensorstore")


def reader_label(reader: str) -> str:
    if reader == "zarr":
        return f"zarr-python {importlib.metadata.version('zarr')}"
    return f"tensorstore {importlib.metadata.version('tensorstore')}"


# ---------------------------------------------------------------------------------------------
# readers


def zarr_format_of(path: str) -> int:
    """2 when the directory holds a .zarray (a Zarr v2 array), else 3."""
    return 2 if os.path.exists(os.path.join(path, ".zarray")) else 3


def open_zarr(path: str):
    import zarr
    from zarr.storage import LocalStore

    store = LocalStore(os.path.abspath(path), read_only=True)
    arr = zarr.open_array(store=store, mode="r", zarr_format=zarr_format_of(path))
    return arr


def read_zarr(path: str) -> np.ndarray:
    arr = open_zarr(path)
    return np.asarray(arr[...])


def open_tensorstore(path: str):
    import tensorstore as ts

    spec = {
        "driver": "zarr3" if zarr_format_of(path) == 3 else "zarr",
        "kvstore": {"driver": "file", "path": os.path.abspath(path) + "/"},
        "open": True,
        "recheck_cached_data": False,
    }
    return ts.open(spec, read=True).result()


def read_tensorstore(path: str) -> np.ndarray:
    import tensorstore as ts

    t = open_tensorstore(path)
    if t.dtype == ts.byte:
        # r<N> raw-bits arrays open as dtype "byte" with an extra trailing axis of N/8; the
        # Python binding turns "byte" data into a zero-itemsize NumPy array (|V0), so the
        # contents cannot be inspected from Python.
        raise TypeError(
            f"tensorstore opened a raw-bits array as dtype byte, shape {list(t.shape)}; "
            "its Python binding cannot return byte data as NumPy (|V0)"
        )
    return np.asarray(t.read().result())


OPENERS: dict[str, Callable] = {"zarr": open_zarr, "tensorstore": open_tensorstore}
READ_FUNCS: dict[str, Callable[[str], np.ndarray]] = {
    "zarr": read_zarr,
    "tensorstore": read_tensorstore,
}


# ---------------------------------------------------------------------------------------------
# bit-exact comparison


def _raw(a: np.ndarray) -> np.ndarray:
    """The array's elements as little-endian raw bytes, one row of itemsize bytes per element."""
    a = np.array(a, order="C", copy=True)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.reshape(-1).view(np.uint8).reshape(a.size, a.dtype.itemsize)


def compare(actual: np.ndarray, expected: np.ndarray) -> str | None:
    """None if equal bit for bit (same shape, same kind/size of dtype), else a description."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != expected {expected.shape}"
    ad, ed = actual.dtype, expected.dtype
    if (ad.kind, ad.itemsize) != (ed.kind, ed.itemsize):
        return f"dtype {ad} != expected {ed}"
    if actual.size == 0:
        return None
    ra, re_ = _raw(actual), _raw(expected)
    bad = np.nonzero(np.any(ra != re_, axis=1))[0]
    if bad.size == 0:
        return None
    first = np.unravel_index(int(bad[0]), expected.shape) if expected.ndim else ()
    return (
        f"{bad.size} of {expected.size} elements differ; first at index {tuple(int(i) for i in first)}: "
        f"got bytes {ra[bad[0]].tobytes().hex()} ({actual[first]!r}), "
        f"expected {re_[bad[0]].tobytes().hex()} ({expected[first]!r})"
    )


def check(path: str, expected: np.ndarray | None, reader: str) -> tuple[bool, str]:
    """Returns (ok, message). With expected None only opens the array (metadata only)."""
    try:
        if expected is None:
            arr = OPENERS[reader](path)
            dtype = getattr(arr.dtype, "numpy_dtype", None) or arr.dtype  # tensorstore dtype -> numpy
            return True, f"opened: shape {list(arr.shape)} dtype {dtype}"
        actual = READ_FUNCS[reader](path)
    except Exception as e:  # noqa: BLE001 - any failure to open/read is a failed check
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]  # zarr-python wraps errors from its task groups
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return False, f"ERROR {type(e).__name__}: {msg}"
    problem = compare(actual, expected)
    if problem is None:
        return True, f"OK shape {list(expected.shape)} dtype {expected.dtype}"
    return False, f"MISMATCH {problem}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("array_path", nargs="?", help="directory containing the array's zarr.json")
    p.add_argument("expected", nargs="?", help="expected contents (.npy); not used with --metadata-only")
    p.add_argument("--reader", choices=["zarr", "tensorstore", "both"], default="both")
    p.add_argument("--metadata-only", action="store_true", help="only open the array")
    p.add_argument("--batch", help="file of tab-separated ARRAY_PATH and EXPECTED.npy lines")
    args = p.parse_args(argv)
    readers = READERS if args.reader == "both" else (args.reader,)

    if args.batch:
        failed = 0
        with open(args.batch, encoding="utf-8") as f:
            pairs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        for path, npy in pairs:
            expected = np.load(npy, allow_pickle=False)
            for r in readers:
                ok, msg = check(path, expected, r)
                failed += not ok
                print(f"{reader_label(r)}: {msg} ({path})")
        print(f"{len(pairs) * len(readers) - failed} passed, {failed} failed")
        return 1 if failed else 0
    if args.array_path is None:
        p.error("ARRAY_PATH is required unless --batch is given")

    if args.metadata_only:
        expected = None
    else:
        if args.expected is None:
            p.error("EXPECTED.npy is required unless --metadata-only is given")
        expected = np.load(args.expected, allow_pickle=False)

    failed = False
    for r in readers:
        ok, msg = check(args.array_path, expected, r)
        failed |= not ok
        print(f"{reader_label(r)}: {msg} ({args.array_path})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
