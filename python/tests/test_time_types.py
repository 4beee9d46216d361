"""NumPy time types: datetime64 / timedelta64 arrays zarr-python 3.4.2 writes read as the same
NumPy arrays (unit and NaT kept), and arrays zarrflow writes read back in zarr-python."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import zarrflow

TIMES = [
    np.array(["2020-01-01T00:00:10", "NaT", "1969-12-31T23:59:50", "2262-01-01"], dtype="M8[10s]"),
    np.array(["1970-01-01T00:00:00.000000001", "NaT", "2000-02-29T12:34:56.789", "1677-09-22"], dtype="M8[ns]"),
    np.array(["2020-03", "NaT", "-001-12", "9999-12"], dtype="M8[M]"),
    np.array([5, -3, np.timedelta64("NaT", "ns"), 86_400_000_000_000], dtype="m8[ns]"),
    np.array([1, 2, 3, -4], dtype="m8[7D]"),
]


@pytest.mark.parametrize("ref", TIMES, ids=lambda a: str(a.dtype))
def test_zarr_python_time_arrays_read_exactly(tmp_url, ref):
    url = tmp_url()
    z = zarr.create_array(url, shape=ref.shape, chunks=(3,), dtype=ref.dtype)
    z[1:] = ref[1:]
    a = zarrflow.open(url)
    assert a.dtype == ref.dtype
    got = a[...]
    assert got.dtype == ref.dtype
    # the first element was never written: the fill value, NaT
    assert np.isnat(got[0]) and np.isnat(a.fill_value)
    assert np.array_equal(got[1:].view("i8"), ref[1:].view("i8"))
    assert np.array_equal(a[[3, 1]].view("i8"), ref[[3, 1]].view("i8"))


@pytest.mark.parametrize("ref", TIMES, ids=lambda a: str(a.dtype))
def test_time_arrays_zarrflow_writes_read_in_zarr_python(tmp_url, ref):
    url = tmp_url()
    a = zarrflow.create(url, shape=ref.shape, dtype=ref.dtype, chunks=(2,))
    a[...] = ref
    z = zarr.open_array(url, mode="r")
    assert z.dtype == ref.dtype
    assert np.array_equal(z[...].view("i8"), ref.view("i8"))
    assert np.isnat(z.fill_value)
