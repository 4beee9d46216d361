"""Dask glue: zarrflow arrays as ``dask.array`` arrays, and Dask arrays written by zarrflow.

Works on ``dask.distributed`` clusters of processes: the tasks hold pickled
:class:`zarrflow.Array` handles, which re-open from their URL and options in the worker.

>>> import dask.array as da, zarrflow.dask
>>> x = da.arange(1000, dtype="int32", chunks=250)
>>> zarrflow.dask.to_zarr(x, "memory://doc/dask", shards=(500,), chunks=(50,))
>>> y = zarrflow.dask.from_zarr("memory://doc/dask")
>>> y.chunks, int(y.sum().compute())
(((500, 500),), 499500)
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

import zarrflow

__all__ = ["from_zarr", "to_zarr"]


def _default_chunks(array: zarrflow.Array) -> tuple[int, ...]:
    """The write grid (shards, or chunks when unsharded); the whole array when rectilinear."""
    grid = array.write_chunks or array.chunks or array.shape
    return tuple(max(1, c) for c in grid)


def from_zarr(url: str, chunks: Any = None, **store_options: Any) -> da.Array:
    """The array at ``url`` as a Dask array (read-only), one task per block.

    ``chunks`` defaults to the shard grid (the chunk grid when unsharded), so each task
    reads whole shards with coalesced requests; any Dask chunk specification works
    (multiples of the shard shape keep reads aligned). Store options as in
    :func:`zarrflow.open`.
    """
    array = zarrflow.open(url, mode="r", **store_options)
    if not isinstance(array, zarrflow.Array):
        raise zarrflow.NodeTypeError(f"{url} is a group, not an array", url)
    if chunks is None:
        chunks = _default_chunks(array)
    return da.from_array(
        array,
        chunks=chunks,
        lock=False,
        asarray=False,
        fancy=False,
        meta=np.empty((0,) * array.ndim, dtype=array.dtype),
        name=f"zarrflow-from-zarr-{da.core.tokenize(array, chunks)}",
    )


def to_zarr(
    darr: da.Array,
    url: str,
    shards: Any = None,
    chunks: Any = None,
    codec: str = "zstd",
    fill_value: Any = None,
    dimension_names: Any = None,
    attributes: dict | None = None,
    overwrite: bool = False,
    align: bool = True,
    compute: bool = True,
    **store_options: Any,
) -> Any:
    """Creates an array at ``url`` for ``darr`` and writes it, one task per block.

    ``shards`` / ``chunks`` as in :func:`zarrflow.create`; without either, the array is
    unsharded with ``darr``'s chunk size as its chunks. With ``align`` (the default) the Dask
    array is first re-chunked to the destination's write grid (shards, or chunks), so each
    task writes whole shards and no two tasks touch the same one. With ``align=False`` the
    blocks are written as they are: blocks that share a shard are merged by zarrflow's
    conditional writes (read-modify-write retried on conflict), never losing an update.

    Returns ``None`` when ``compute`` is true, else the ``dask.delayed`` writing task.
    """
    if chunks is None and shards is None:
        chunks = tuple(int(c) for c in darr.chunksize)
    array = zarrflow.create(
        url,
        shape=darr.shape,
        dtype=darr.dtype,
        chunks=chunks,
        shards=shards,
        codec=codec,
        fill_value=fill_value,
        dimension_names=dimension_names,
        attributes=attributes,
        overwrite=overwrite,
        **store_options,
    )
    if align:
        darr = darr.rechunk(_default_chunks(array))
    return da.store(darr, array, lock=False, compute=compute)
