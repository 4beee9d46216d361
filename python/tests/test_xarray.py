"""xarray: datasets xarray writes open through ``engine="zarrflow"`` exactly as through
xarray's own zarr backend, lazily (indexing reads through zarrflow's three modes), with Dask;
groups zarrflow writes open in ``xr.open_zarr``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import zarrflow
from zarrflow.xarray import ZarrflowBackendArray


def reference_dataset() -> xr.Dataset:
    """Coordinates (a time axis encoded by xarray's CF rules), a masked and scaled variable,
    an integer variable, attributes at both levels."""
    rng = np.random.default_rng(7)
    temp = rng.normal(280, 5, size=(6, 9, 11)).astype("float32")
    temp[0, 0, :3] = np.nan
    return xr.Dataset(
        {
            "temperature": (("time", "y", "x"), temp, {"units": "K", "long_name": "air temperature"}),
            "count": (("y", "x"), rng.integers(0, 1000, size=(9, 11)).astype("int32")),
        },
        coords={
            "time": pd.date_range("2026-01-01", periods=6, freq="6h"),
            "y": np.linspace(-4.0, 4.0, 9),
            "x": np.arange(11, dtype="int64") * 10,
        },
        attrs={"title": "zarrflow xarray test", "version": 3},
    )


@pytest.fixture
def written(tmp_path):
    """The reference dataset written by xarray (zarr-python 3.4.2, Zarr format 3), sharded
    variables' chunks small enough that selections cross chunk edges."""
    ds = reference_dataset()
    path = str(tmp_path / "ds.zarr")
    encoding = {
        "temperature": {"chunks": (2, 4, 5), "dtype": "int16", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32768},
        "count": {"chunks": (4, 4)},
    }
    ds.to_zarr(path, zarr_format=3, consolidated=False, encoding=encoding)
    return path, ds


def test_the_backend_is_registered():
    assert "zarrflow" in xr.backends.list_engines()


def test_a_dataset_written_by_xarray_reads_as_xarray_reads_it(written):
    path, _ = written
    ours = xr.open_dataset(path, engine="zarrflow")
    theirs = xr.open_zarr(path, consolidated=False)
    xr.testing.assert_identical(ours.load(), theirs.load())
    assert ours["temperature"].dtype.kind == "f"  # unpacked by scale_factor / add_offset
    assert np.isnan(ours["temperature"].values[0, 0, :3]).all()  # _FillValue masked
    assert ours["time"].dtype == np.dtype("datetime64[ns]")
    assert ours.attrs == {"title": "zarrflow xarray test", "version": 3}


@pytest.fixture
def reads(monkeypatch):
    """Every read the backend makes: (array path's last part, mode, key)."""
    calls = []
    for mode in ("_basic", "_outer", "_vectorized"):
        original = getattr(ZarrflowBackendArray, mode)

        def record(self, key, original=original, mode=mode):
            calls.append((self.array.url.rstrip("/").rsplit("/", 1)[-1], mode[1:], key))
            return original(self, key)

        monkeypatch.setattr(ZarrflowBackendArray, mode, record)
    return calls


def test_variables_are_lazy_and_index_in_every_mode(written, reads):
    path, _ = written
    ours = xr.open_dataset(path, engine="zarrflow")
    theirs = xr.open_zarr(path, consolidated=False).load()
    # opening reads the dimension coordinates (xarray indexes them), no data variable
    assert {name for name, _, _ in reads} == {"time", "y", "x"}
    reads.clear()
    ours.isel(time=[0, 4], x=[1, 2]).temperature.load()
    assert [(n, m) for n, m, _ in reads] == [("temperature", "outer")]
    reads.clear()
    ours.isel(y=xr.DataArray([0, 4], dims="p"), x=xr.DataArray([3, 1], dims="p")).temperature.load()
    assert [(n, m) for n, m, _ in reads] == [("temperature", "vectorized")]
    cases = [
        {"time": 2, "x": slice(3, 9, 2)},  # basic
        {"time": [0, 4, 5], "y": [8, 1, 1], "x": slice(None, None, -3)},  # outer
        {  # vectorized: points
            "y": xr.DataArray([0, 4, 8, 2], dims="p"),
            "x": xr.DataArray([10, 0, 5, 5], dims="p"),
        },
        {  # vectorized with a slice between
            "time": xr.DataArray([[1, 2], [3, 0]], dims=("a", "b")),
            "y": slice(2, 7),
            "x": xr.DataArray([[0, 1], [2, 3]], dims=("a", "b")),
        },
    ]
    for sel in cases:
        xr.testing.assert_identical(ours.isel(sel).load(), theirs.isel(sel))
    xr.testing.assert_identical(
        ours.sel(time="2026-01-01T12:00", x=[20, 70]).load(),
        theirs.sel(time="2026-01-01T12:00", x=[20, 70]),
    )


def test_with_chunks_the_variables_are_dask_arrays(written):
    path, _ = written
    ours = xr.open_dataset(path, engine="zarrflow", chunks={})
    temp = ours["temperature"]
    assert temp.chunks is not None
    assert temp.data.chunksize == (2, 4, 5)  # the stored chunks (preferred_chunks)
    theirs = xr.open_zarr(path, consolidated=False).load()
    xr.testing.assert_identical(ours.compute(), theirs)
    mean = float(ours["temperature"].mean().compute())
    assert mean == pytest.approx(float(theirs["temperature"].mean()), rel=1e-6)


def test_drop_variables_and_decode_flags(written):
    path, _ = written
    ours = xr.open_dataset(path, engine="zarrflow", drop_variables=["count"], mask_and_scale=False)
    assert "count" not in ours
    assert ours["temperature"].dtype == np.int16  # packed values, as stored
    assert ours["temperature"].attrs["scale_factor"] == 0.01


def test_groups_zarrflow_writes_open_in_xarray(tmp_path):
    url = str(tmp_path / "zf.zarr")
    zarrflow.open(url, mode="w").attrs["source"] = "zarrflow"
    values = np.arange(4 * 6, dtype="float64").reshape(4, 6)
    a = zarrflow.create(
        f"{url}/v",
        shape=(4, 6),
        dtype="float64",
        shards=(4, 6),
        chunks=(2, 3),
        dimension_names=("row", "col"),
        attributes={"units": "m"},
    )
    a[...] = values
    c = zarrflow.create(f"{url}/col", shape=(6,), dtype="int64", dimension_names=("col",))
    c[...] = np.arange(6) * 100
    ds = xr.open_zarr(url, consolidated=False)
    assert ds.attrs == {"source": "zarrflow"}
    assert ds["v"].dims == ("row", "col")
    assert ds["v"].attrs == {"units": "m"}
    np.testing.assert_array_equal(ds["v"].values, values)
    np.testing.assert_array_equal(ds["col"].values, np.arange(6) * 100)
    xr.testing.assert_identical(xr.open_dataset(url, engine="zarrflow").load(), ds.load())


def test_arrays_without_dimension_names(tmp_path):
    url = str(tmp_path / "nodims.zarr")
    zarrflow.open(url, mode="w")
    zarrflow.create(f"{url}/a", shape=(3, 2), dtype="uint8")[...] = 5
    ds = xr.open_dataset(url, engine="zarrflow")
    assert ds["a"].dims == ("dim_0", "dim_1")
    assert int(ds["a"].sum()) == 30
    with pytest.raises(ValueError, match="no dimension names"):
        xr.open_dataset(url, engine="zarrflow", strict_dims=True)


def test_an_array_url_is_not_a_dataset(tmp_path):
    url = str(tmp_path / "arr.zarr")
    zarrflow.create(url, shape=(3,), dtype="uint8")
    with pytest.raises(zarrflow.NodeTypeError):
        xr.open_dataset(url, engine="zarrflow")
    with pytest.raises(zarrflow.NodeNotFoundError):
        xr.open_dataset(str(tmp_path / "missing.zarr"), engine="zarrflow")


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_string_coordinates_and_consolidated_metadata_open(tmp_path, zarr_format):
    """A consolidated dataset with string coordinates (fixed-width and variable-length) opens
    through the backend as through xarray's own."""
    ds = xr.Dataset(
        {"t": (("x",), np.arange(4.0))},
        coords={
            "x": ["a", "bb", "c\u00e9", ""],
            "label": ("x", np.array(["p", "qq", "r", "s"], dtype="<U2")),
            "name": ("x", np.array(["one", "two", "three", "\U0001F600"], dtype=object)),
        },
    )
    path = str(tmp_path / "s.zarr")
    ds.to_zarr(path, consolidated=True, zarr_format=zarr_format)
    ours = xr.open_dataset(path, engine="zarrflow")
    theirs = xr.open_zarr(path, consolidated=True)
    for name in ("x", "label", "name", "t"):
        assert ours[name].values.tolist() == theirs[name].values.tolist(), name
