from typing import Any

import dask.array as da

def from_zarr(url: str, chunks: Any = ..., **store_options: Any) -> da.Array: ...
def to_zarr(
    darr: da.Array,
    url: str,
    shards: Any = ...,
    chunks: Any = ...,
    codec: str = ...,
    fill_value: Any = ...,
    dimension_names: Any = ...,
    attributes: dict[str, Any] | None = ...,
    overwrite: bool = ...,
    align: bool = ...,
    compute: bool = ...,
    **store_options: Any,
) -> Any: ...
