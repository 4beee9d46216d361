"""String and bytes arrays: zarr-python's fixtures read as zarr-python 3 reads them (a
``StringDType`` array of ``str``, an object array of ``bytes``), through every recorded
selection; writes of ``str`` / ``bytes`` values read back by zarr-python."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr

import zarrflow
from conftest import TEST_DATA, manifest, selection_key

VLEN = manifest()["vlen_arrays"]


def values_of(entry_values, kind):
    return [v if kind == "string" else bytes(v) for v in entry_values]


@pytest.mark.parametrize("entry", VLEN, ids=[a["path"] for a in VLEN])
def test_vlen_fixture_reads_as_zarr_python(entry):
    path = str(TEST_DATA / entry["path"])
    a = zarrflow.open(path)
    whole = a[...]
    if entry["writer"].startswith("zarr-python 3"):
        # the pinned zarr-python 3.4.2 (zarr-python 2.18's fixtures were compared with
        # zarr-python 2.18 by their generator; zarr-python 3.4.2 cannot open a `|O` bytes
        # array whose fill value is 0, which zarr-python 2.18 writes: see test-data/README.md)
        z = zarr.open_array(path, mode="r")
        assert whole.dtype == z[...].dtype
        assert whole.tolist() == z[...].tolist()
    expected = json.loads((TEST_DATA / entry["expected"]).read_text())
    assert whole.reshape(-1).tolist() == values_of(expected["values"], entry["kind"])
    for s in expected["selections"]:
        key = selection_key(s["selection"])
        indexer = {"basic": a, "oindex": a.oindex, "vindex": a.vindex}[s["mode"]]
        got = np.asarray(indexer[key], dtype=object)
        assert list(got.shape) == s["shape"], s
        assert got.reshape(-1).tolist() == values_of(s["values"], entry["kind"]), s


def test_string_and_bytes_writes_read_back_in_zarr_python(tmp_url):
    s = zarrflow.create(tmp_url("s"), shape=(5, 3), dtype=str, shards=(4, 2), chunks=(2, 1))
    assert s.dtype == np.dtypes.StringDType() and s.fill_value == ""
    s[1:4, 1] = ["a", "h\u00e9", "\U0001F600"]
    s.oindex[[0, 4], :] = "row"
    s.vindex[[2, 3], [0, 2]] = np.array(["p", "q"])
    want = np.full((5, 3), "", dtype=object)
    want[1:4, 1] = ["a", "h\u00e9", "\U0001F600"]
    want[[0, 4], :] = "row"
    want[2, 0], want[3, 2] = "p", "q"
    assert s[...].tolist() == want.tolist()
    assert zarr.open_array(s.url, mode="r")[...].tolist() == want.tolist()
    b = zarrflow.create(tmp_url("b"), shape=(4,), dtype=bytes, fill_value=b"\x00\xff")
    b[1:3] = [b"", b"a\x00"]
    got = zarr.open_array(b.url, mode="r")[...]
    assert got.dtype == np.dtype(object)
    assert got.tolist() == [b"\x00\xff", b"", b"a\x00", b"\x00\xff"]
    assert b[...].tolist() == got.tolist()


def test_a_batch_of_string_and_bytes_writes_reads_back_in_zarr_python(tmp_url):
    s = zarrflow.create(tmp_url("s"), shape=(5, 3), dtype=str, shards=(4, 2), chunks=(2, 1))
    with s.batch() as b:
        b[1:4, 1] = ["a", "h\u00e9", "\U0001F600"]
        b.oindex[[0, 4], :] = "row"
        b.vindex[[2, 3], [0, 2]] = np.array(["p", "q"])
        b[4, 2] = ""  # the fill value, after "row"
        assert len(b) == 4
        assert s[...].tolist() == [[""] * 3] * 5  # nothing written before the commit
    want = np.full((5, 3), "", dtype=object)
    want[1:4, 1] = ["a", "h\u00e9", "\U0001F600"]
    want[[0, 4], :] = "row"
    want[2, 0], want[3, 2], want[4, 2] = "p", "q", ""
    assert s[...].tolist() == want.tolist()
    assert zarr.open_array(s.url, mode="r")[...].tolist() == want.tolist()
    s[0, 0] = "after"  # a plain write after the batch
    assert s[0, 0] == "after"
    b = zarrflow.create(tmp_url("b"), shape=(4,), dtype=bytes, fill_value=b"\x00\xff")
    with b.batch() as batch:
        batch[1:3] = [b"", b"a\x00"]
        batch[3] = b"z"
    assert zarr.open_array(b.url, mode="r")[...].tolist() == [b"\x00\xff", b"", b"a\x00", b"z"]
    with pytest.raises(zarrflow.InvalidValueError):
        with s.batch() as batch:
            batch[0] = 5
    assert s[0, 0] == "after"


def test_values_of_the_wrong_kind_are_refused(tmp_url):
    s = zarrflow.create(tmp_url("s"), shape=(2,), dtype="string")
    b = zarrflow.create(tmp_url("b"), shape=(2,), dtype="bytes")
    for arr, bad in [(s, 5), (s, [b"x", b"y"]), (b, ["x", "y"]), (b, np.zeros(2))]:
        with pytest.raises(zarrflow.InvalidValueError):
            arr[:] = bad
    assert s[...].tolist() == ["", ""] and b[...].tolist() == [b"", b""]


def test_fixed_width_text_is_numpy_text_both_ways(tmp_url):
    """``<U n`` / ``|S n`` arrays (zarr-python's ``fixed_length_utf32`` /
    ``null_terminated_bytes`` in v3) hold NumPy's own text dtypes, read into the result's
    memory and read back by zarr-python."""
    u = zarrflow.create(tmp_url("u"), shape=(5, 3), dtype="<U3", chunks=(2, 1), shards=(4, 2),
                        fill_value="zz")
    assert u.dtype == np.dtype("<U3") and u.fill_value == "zz"
    u[1:4, 1] = ["a", "h\u00e9", "\U0001F600\u03b1"]
    u.vindex[[0, 4], [0, 2]] = np.array(["p", "qrs"])
    want = np.full((5, 3), "zz", dtype="<U3")
    want[1:4, 1] = ["a", "h\u00e9", "\U0001F600\u03b1"]
    want[0, 0], want[4, 2] = "p", "qrs"
    got = u[...]
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
    z = zarr.open_array(u.url, mode="r")[...]
    assert z.dtype == want.dtype and z.tolist() == want.tolist()
    s = zarrflow.create(tmp_url("s"), shape=(4,), dtype="|S2")
    assert s.dtype == np.dtype("|S2")
    s[1:3] = [b"\x00\xff", b"a"]
    z = zarr.open_array(s.url, mode="r")[...]
    assert z.dtype == np.dtype("|S2") and z.tolist() == [b"", b"\x00\xff", b"a", b""]
    assert s[...].tolist() == z.tolist()
    for bad in (["abc"], [b"abc"], [1.5]):  # too long, the other kind, not text
        with pytest.raises(zarrflow.InvalidValueError):
            s[:1] = bad
    assert s[...].tolist() == z.tolist()
