"""xarray backend: ``xr.open_dataset(url, engine="zarrflow")`` reads a Zarr group through
zarrflow's engine.

Every array of the group becomes a lazily indexed variable: xarray's basic, outer and
vectorized indexers go to zarrflow's ``a[...]``, ``a.oindex[...]`` and ``a.vindex[...]``
unchanged (planned per shard, read straight into the result), so ``ds.isel(...)`` and
``.sel(...)`` read only the chunks they touch. Dimension names come from the arrays'
``dimension_names`` (Zarr v3), or from the ``_ARRAY_DIMENSIONS`` attribute that xarray
writes; arrays with neither get ``dim_0``, ``dim_1``, ... as xarray does elsewhere (or an
error with ``strict_dims=True``). Attributes, ``_FillValue``, ``scale_factor``, units and
time encodings are decoded by xarray's own CF decoding (``decode_cf`` and friends take
their usual keywords). With ``chunks=...`` the variables are Dask arrays whose tasks read
through zarrflow.

    >>> import xarray as xr                                  # doctest: +SKIP
    >>> ds = xr.open_dataset("s3://bucket/data.zarr", engine="zarrflow")  # doctest: +SKIP

The entry point is registered under ``xarray.backends`` in ``pyproject.toml``; importing
this module needs xarray installed (zarrflow itself does not).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from . import Array, Group, NodeTypeError
from . import open as _open

__all__ = ["ZarrflowBackendArray", "ZarrflowBackendEntrypoint", "open_dataset"]

_DIMENSIONS_ATTRIBUTE = "_ARRAY_DIMENSIONS"


class ZarrflowBackendArray(BackendArray):
    """One zarrflow array as xarray's lazily indexed backend array."""

    def __init__(self, array: Array) -> None:
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        if isinstance(key, indexing.BasicIndexer):
            method = self._basic
        elif isinstance(key, indexing.OuterIndexer):
            method = self._outer
        elif isinstance(key, indexing.VectorizedIndexer):
            method = self._vectorized
        else:  # pragma: no cover - xarray has no other indexer kinds
            raise TypeError(f"unexpected indexer {type(key).__name__}")
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.VECTORIZED, method
        )

    def _basic(self, key: tuple) -> np.ndarray:
        return np.asarray(self.array[key])

    def _outer(self, key: tuple) -> np.ndarray:
        return np.asarray(self.array.oindex[key])

    def _vectorized(self, key: tuple) -> np.ndarray:
        return np.asarray(self.array.vindex[key])


def _dimensions(name: str, array: Array, attrs: dict, strict: bool) -> tuple[str, ...]:
    """The dimension names of one array: its ``dimension_names``, else ``_ARRAY_DIMENSIONS``."""
    names = array.dimension_names
    if names is not None and all(n is not None for n in names):
        return tuple(names)
    listed = attrs.get(_DIMENSIONS_ATTRIBUTE)
    if isinstance(listed, list) and len(listed) == array.ndim and all(isinstance(n, str) for n in listed):
        return tuple(listed)
    if strict:
        raise ValueError(
            f"array {name!r} has no dimension names (neither dimension_names nor "
            f"{_DIMENSIONS_ATTRIBUTE}); open it with strict_dims=False to name them dim_0, ..."
        )
    return tuple(f"dim_{i}" for i in range(array.ndim))


def _variables(group: Group, drop: set[str], strict: bool) -> dict[str, xr.Variable]:
    variables = {}
    for name, array in group.arrays():
        if name in drop:
            continue
        attrs = array.attrs.asdict()
        dims = _dimensions(name, array, attrs, strict)
        attrs.pop(_DIMENSIONS_ATTRIBUTE, None)
        data = indexing.LazilyIndexedArray(ZarrflowBackendArray(array))
        encoding = {
            "chunks": array.chunks,
            "shards": array.shards,
            "preferred_chunks": dict(zip(dims, array.write_chunks or array.shape, strict=True)),
            "dtype": array.dtype,
        }
        variables[name] = xr.Variable(dims, data, attrs, encoding)
    return variables


class ZarrflowBackendEntrypoint(BackendEntrypoint):
    """``engine="zarrflow"``: Zarr groups (any URL zarrflow opens) as xarray datasets."""

    description = "Open Zarr groups through zarrflow's engine (sharded or not, any object store)"
    open_dataset_parameters = (
        "filename_or_obj",
        "drop_variables",
        "mask_and_scale",
        "decode_times",
        "concat_characters",
        "decode_coords",
        "use_cftime",
        "decode_timedelta",
        "strict_dims",
        "store_options",
    )

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        drop_variables: str | Iterable[str] | None = None,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool | str = True,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        strict_dims: bool = False,
        store_options: dict | None = None,
    ) -> xr.Dataset:
        url = os.fspath(filename_or_obj) if isinstance(filename_or_obj, os.PathLike) else filename_or_obj
        if isinstance(url, Group):
            group = url
        else:
            node = _open(str(url), mode="r", **(store_options or {}))
            if not isinstance(node, Group):
                raise NodeTypeError(f"{url} is an array; xarray datasets are groups", str(url))
            group = node
        drop = {drop_variables} if isinstance(drop_variables, str) else set(drop_variables or ())
        variables = _variables(group, drop, strict_dims)
        attrs = group.attrs.asdict()
        vars_, attrs, coord_names = xr.conventions.decode_cf_variables(
            variables,
            attrs,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
        )
        ds = xr.Dataset(vars_, attrs=attrs)
        ds = ds.set_coords(coord_names.intersection(vars_))
        return ds

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """zarrflow claims nothing by extension: ask for it with ``engine="zarrflow"``."""
        return False


def open_dataset(url: str, **kwargs: Any) -> xr.Dataset:
    """``xr.open_dataset(url, engine="zarrflow", **kwargs)``."""
    return xr.open_dataset(url, engine="zarrflow", **kwargs)
