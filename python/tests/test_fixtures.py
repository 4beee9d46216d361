"""Every fixture array of test-data/ read through zarrflow.open, compared with zarr-python
and with the generator's expected .npy, whole and through every recorded selection."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import zarrflow
from conftest import TEST_DATA, manifest, selection_key

ARRAYS = manifest()["arrays"]
GROUPS = manifest()["groups"]


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-exact equality (NaN payloads, -0.0), shapes and dtype sizes equal."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
        return False
    return np.ascontiguousarray(a).view(np.uint8).tobytes() == np.ascontiguousarray(b).view(np.uint8).tobytes()


@pytest.mark.parametrize("entry", ARRAYS, ids=[a["path"] for a in ARRAYS])
def test_fixture_array_reads_as_zarr_python_and_the_expected_values(entry):
    path = TEST_DATA / entry["path"]
    a = zarrflow.open(str(path))
    assert isinstance(a, zarrflow.Array)
    assert list(a.shape) == entry["shape"]
    expected = np.load(TEST_DATA / entry["expected"])
    got = a[...]
    assert same(got, expected), entry["path"]
    readers = entry.get("verified_readers", {})
    zarr_reads_it = any(k.startswith("zarr-python") and v == "ok" for k, v in readers.items())
    if zarr_reads_it and entry["data_type"] != "r16":  # raw types: zarr-python's own void kind
        by_zarr = zarr.open_array(str(path), mode="r")[...]
        # zarrflow returns values in native byte order (as TensorStore does); zarr-python
        # returns a v2 big-endian array in its stored order: compare the values
        by_zarr = by_zarr.astype(by_zarr.dtype.newbyteorder("="), copy=False)
        assert same(got, by_zarr), entry["path"]
        assert a.dtype == by_zarr.dtype
    for sel in entry.get("selections", []):
        key = selection_key(sel["selection"])
        if sel["mode"] == "basic":
            out = a[key]
        elif sel["mode"] == "oindex":
            out = a.oindex[key]
        else:
            out = a.vindex[key]
        want = np.load(TEST_DATA / sel["expected"])
        out = np.asarray(out)
        if out.ndim == 0 and want.dtype.kind in "US":
            out = out.astype(want.dtype)  # a text scalar is NumPy's, at its own width (<U1)
        assert same(out.reshape(sel["shape"]), want), (
            entry["path"],
            sel["selection"],
            sel["mode"],
        )


@pytest.mark.parametrize("entry", GROUPS, ids=[g["path"] for g in GROUPS])
def test_fixture_groups_list_children_and_attributes_as_zarr_python(entry):
    path = TEST_DATA / entry["path"]
    g = zarrflow.open(str(path))
    assert isinstance(g, zarrflow.Group)
    z = zarr.open_group(str(path), mode="r")
    assert sorted(g.keys()) == sorted(z.keys())
    assert g.attrs.asdict() == dict(z.attrs)
    for name, kind in [(c["name"], c["node_type"]) for c in entry.get("children", [])]:
        child = g[name]
        assert isinstance(child, zarrflow.Array if kind == "array" else zarrflow.Group)
    assert g.tree().startswith("/")
    with pytest.raises(KeyError):
        g["no-such-member"]
