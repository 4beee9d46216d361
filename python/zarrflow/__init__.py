"""zarrflow: Zarr v3 arrays, sharded or not, as NumPy arrays.

Reads and writes run in zarrflow's Rust engine (planned per shard, coalesced requests,
values decoded straight into the NumPy result) with the GIL released. Stores are given by
URL: a path, ``file://``, ``memory://name``, ``s3://bucket/key``, ``gs://``, ``az://``,
``http(s)://`` (read-only).

>>> import numpy as np, zarrflow
>>> a = zarrflow.create("memory://doc/t", shape=(100, 200), dtype="float32",
...                     shards=(50, 100), chunks=(10, 20))
>>> a[10:20] = 1.5
>>> a[5:30:5, ::50].shape
(5, 4)
>>> float(a.vindex[[12, 99], [3, 7]].sum())
1.5
"""

from __future__ import annotations

import json
import math
import operator
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np

from . import _errors, _zarrflow
from ._errors import (
    ConflictError,
    CorruptDataError,
    InternalError,
    InvalidUrlError,
    InvalidValueError,
    MetadataError,
    NodeExistsError,
    NodeNotFoundError,
    NodeTypeError,
    OutOfBoundsError,
    ReadOnlyError,
    SelectionError,
    SelectionTooLargeError,
    StoreError,
    ZarrflowError,
)

__all__ = [
    "Array",
    "Attributes",
    "Batch",
    "Group",
    "create",
    "open",
    *_errors.__all__,
]

__version__ = "0.1.0"

_MODES = ("r", "r+", "a", "w")
_CREATE_KEYS = (
    "shape",
    "dtype",
    "chunks",
    "shards",
    "codec",
    "fill_value",
    "dimension_names",
    "attributes",
)


# ---------------------------------------------------------------------------------------
# data types


_STRING = np.dtypes.StringDType()
_OBJECT = np.dtype(object)


def _numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a Zarr data type name (``r<bits>`` is a void type; ``string`` is
    NumPy's ``StringDType`` and ``bytes`` an object dtype of ``bytes``, as zarr-python 3
    reads them)."""
    if name == "string":
        return _STRING
    if name in ("bytes", "variable_length_bytes"):
        return _OBJECT
    if name.startswith("r") and name[1:].isdigit():
        return np.dtype(f"V{int(name[1:]) // 8}")
    return np.dtype(name)


def _zarr_data_type(dtype: Any) -> str:
    """The Zarr data type name of a NumPy dtype-like (``"float32"``, ``np.uint8``, ``"r16"``)."""
    if isinstance(dtype, str) and dtype.startswith("r") and dtype[1:].isdigit():
        return dtype
    if dtype is str or (isinstance(dtype, str) and dtype == "string"):
        return "string"
    if dtype is bytes or (isinstance(dtype, str) and dtype in ("bytes", "variable_length_bytes")):
        return "bytes"
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise InvalidValueError(f"{dtype!r} is not a data type: {e}") from None
    if dt.kind == "V" and dt.fields is None and dt.subdtype is None:
        return f"r{dt.itemsize * 8}"
    if dt.kind in "biufc" and dt.name in _NAMED:
        return dt.name
    if dt.kind in "Mm":
        return dt.name  # datetime64[10s], timedelta64[ns]: zarrflow's names for them
    if dt.kind == "U" and dt.itemsize:  # <U n: fixed_length_utf32, as zarr-python
        return f"U{dt.itemsize // 4}"
    if dt.kind == "S" and dt.itemsize:  # |S n: null_terminated_bytes, as zarr-python
        return f"S{dt.itemsize}"
    if dt.kind in "UT":  # str (<U0) and StringDType: variable-length strings, as zarr-python
        return "string"
    raise InvalidValueError(
        f"data type {dt} is not supported (bool, int8..int64, uint8..uint64, float16, "
        "float32, float64, complex64, complex128, datetime64[unit], timedelta64[unit], "
        "raw bytes r<bits>, <U n / |S n (fixed-width text), str (string) or bytes "
        "(variable-length bytes))"
    )


_NAMED = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
}


def _cast(value: Any, dtype: np.dtype) -> np.ndarray:
    """``value`` as a C-contiguous array of ``dtype``; refuses casts that would change values
    silently (fractional floats into integers, complex into reals, integers out of range,
    finite floats that overflow), as the CLI refuses such ``--value`` s."""
    if dtype == _STRING or dtype == _OBJECT:
        return _cast_variable(value, dtype)
    try:
        arr = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - any conversion failure is a bad value
        raise InvalidValueError(f"cannot use {_short(value)} as values: {e}") from None
    if arr.dtype == dtype:
        return np.ascontiguousarray(arr)
    src, dst = arr.dtype, dtype
    refuse = InvalidValueError(
        f"values of dtype {src} cannot be written to an array of dtype {dst} "
        f"without changing them (cast them first, e.g. values.astype({dst.name!r}))"
    )
    if dst.kind in "US":
        # fixed-width text takes text of its kind that fits (NumPy would cut longer values)
        if src.kind not in ("UT" if dst.kind == "U" else "S"):
            raise refuse
        cast = arr.astype(dst)
        if not (cast == arr).all():
            raise InvalidValueError(
                f"a value is longer than the array's dtype {dst} holds (NumPy would cut it)"
            )
        return np.ascontiguousarray(cast)
    if dst.kind == "V":
        if src.kind == "V" and src.itemsize == dst.itemsize:
            return np.ascontiguousarray(arr.view(dst))
        raise refuse
    if src.kind not in "biufc":
        raise refuse
    if dst.kind == "b":
        if src.kind != "b":
            raise refuse
    elif dst.kind in "iu":
        if src.kind == "f":
            # floats that are whole numbers are written as the integers they are
            if arr.size and not (np.isfinite(arr).all() and (arr == np.trunc(arr)).all()):
                raise refuse
        elif src.kind not in "biu":
            raise refuse
        if arr.size and src.kind != "b":
            info = np.iinfo(dst)
            lo, hi = arr.min(), arr.max()
            if int(lo) < info.min or int(hi) > info.max:
                raise InvalidValueError(
                    f"values from {lo} to {hi} do not fit in {dst} ({info.min}..{info.max})"
                )
    elif dst.kind == "f":
        if src.kind == "c":
            raise refuse
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ascontiguousarray(arr.astype(dst))
    if dst.kind in "fc" and src.kind in "fc" and arr.size:
        finite_before = np.isfinite(arr)
        if np.any(finite_before & ~np.isfinite(out)):
            raise InvalidValueError(f"values beyond the largest finite {dst} ({_short(value)})")
    return out


def _cast_variable(value: Any, dtype: np.dtype) -> np.ndarray:
    """``value`` as an object array of ``str`` (``dtype`` the string dtype) or ``bytes``;
    nothing else is converted to text silently (numbers are refused)."""
    want, name = (str, "str") if dtype == _STRING else (bytes, "bytes")
    try:
        arr = np.asarray(value, dtype=_OBJECT) if not isinstance(value, np.ndarray) else value
    except Exception as e:  # noqa: BLE001 - any conversion failure is a bad value
        raise InvalidValueError(f"cannot use {_short(value)} as values: {e}") from None
    if arr.dtype.kind in "UTS":
        arr = arr.astype(_OBJECT)
    elif arr.dtype != _OBJECT:
        raise InvalidValueError(
            f"values of dtype {arr.dtype} cannot be written to an array of {name} values"
        )
    out = np.ascontiguousarray(arr, dtype=_OBJECT)
    bad = next((v for v in out.reshape(-1) if not isinstance(v, want)), None)
    if bad is not None:
        raise InvalidValueError(f"{_short(bad)} is not a {name} value")
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 64 else text[:64] + "…"


def _check_basic(selection: Any) -> None:
    """zarr-python's basic selections: integers, slices and ``...`` (no lists, arrays, masks,
    ``None`` or bools)."""
    for item in selection if isinstance(selection, tuple) else (selection,):
        basic = item is Ellipsis or isinstance(item, (slice, int, np.integer))
        if not basic or isinstance(item, (bool, np.bool_)):
            raise IndexError(
                "unsupported selection item for basic indexing; expected integer or slice, "
                f"got {_short(item)}"
            )


def _check_zarr_options(fields: Any, prototype: Any) -> None:
    """zarr-python's ``fields=`` and ``prototype=`` keywords: zarrflow's arrays have no
    fields (a structured selection is zarr-python's ``IndexError``), and results are NumPy
    arrays, so only zarr's CPU buffer prototype (or none) is taken."""
    if fields is not None:
        if not isinstance(fields, (str, list, tuple)):
            raise IndexError(
                f"'fields' argument must be a string or list of strings; found {type(fields)!r}"
            )
        if fields:
            raise IndexError("invalid 'fields' argument, array does not have any fields")
    if prototype is not None:
        cpu = sys.modules.get("zarr.core.buffer.cpu")
        nd_buffer = getattr(prototype, "nd_buffer", None)
        if not (cpu and isinstance(nd_buffer, type) and issubclass(nd_buffer, cpu.NDBuffer)):
            raise InvalidValueError(
                f"prototype {_short(prototype)}: zarrflow reads into NumPy (CPU) memory only, "
                "zarr's default CPU buffer prototype"
            )


def _has_ellipsis(key: Any) -> bool:
    return key is Ellipsis or (isinstance(key, tuple) and any(k is Ellipsis for k in key))


# ---------------------------------------------------------------------------------------
# attributes


class Attributes(MutableMapping):
    """A node's user attributes (``zarr.json``'s ``attributes``), JSON values. Setting or
    deleting a key writes the metadata at once (conditionally on the version read: a
    concurrent change is :class:`ConflictError`); :meth:`update` writes once for many."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def _load(self) -> dict:
        return json.loads(self._raw.attributes_json)

    def _store(self, attributes: dict) -> None:
        try:
            text = json.dumps(attributes, allow_nan=True)
        except (TypeError, ValueError) as e:
            raise InvalidValueError(f"attributes must be JSON values: {e}") from None
        self._raw.set_attributes_json(text)

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        attributes = self._load()
        attributes[key] = value
        self._store(attributes)

    def __delitem__(self, key: str) -> None:
        attributes = self._load()
        del attributes[key]
        self._store(attributes)

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Sets many attributes with one metadata write."""
        attributes = self._load()
        attributes.update(*args, **kwargs)
        self._store(attributes)

    def asdict(self) -> dict:
        """A copy of the attributes as a plain dict."""
        return self._load()

    def __repr__(self) -> str:
        return f"Attributes({self._load()!r})"


# ---------------------------------------------------------------------------------------
# arrays


class _Indexer:
    """``a.oindex`` / ``a.vindex`` / ``a.blocks`` (and a batch's): ``[key]`` reads,
    ``[key] = v`` writes."""

    def __init__(self, target: Any, mode: str) -> None:
        self._target = target
        self._mode = mode

    def __getitem__(self, key: Any) -> Any:
        return self._target._read(key, self._mode)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._target._write(key, self._mode, value)


class Array:
    """An opened Zarr v3 array (from :func:`open` or :func:`create`).

    ``a[key]`` reads with NumPy semantics (integers, slices with any step, negative indices,
    ``...``, ``None``; integer and boolean arrays as NumPy advanced indexing) and returns a
    NumPy array (a NumPy scalar when every dimension is indexed by an integer);
    ``a.oindex[key]`` is outer indexing (each index array along its own dimension),
    ``a.vindex[key]`` vectorized (points), ``a.blocks[key]`` whole blocks (zarr-python's block
    indexing; its mask selection is :meth:`get_mask_selection`). ``a[key] = values`` writes in
    the same modes, values broadcast NumPy-style. Handles pickle (they re-open from URL, mode
    and options) and are safe to share between threads.
    """

    def __init__(self, raw: Any, mode: str, options: dict) -> None:
        self._raw = raw
        self._mode = mode
        self._options = dict(options)
        self._dtype = _numpy_dtype(raw.data_type)

    # -- metadata -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The URL the array was opened at."""
        return self._raw.url

    @property
    def mode(self) -> str:
        """The mode it was opened in."""
        return self._mode

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape."""
        return tuple(self._raw.shape)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy data type (``r<bits>`` arrays: a void type of that many bytes)."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._raw.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=object))

    @property
    def nbytes(self) -> int:
        """The size in bytes of the whole array, decoded."""
        return self.size * self._dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The read chunk shape: the inner chunks when sharded, else the chunks (``None``
        for a rectilinear grid without sharding)."""
        c = self._raw.chunk_shape
        return None if c is None else tuple(c)

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape, or ``None`` when the array is not sharded."""
        s = self._raw.shard_shape
        return None if s is None else tuple(s)

    @property
    def write_chunks(self) -> tuple[int, ...] | None:
        """The unit of writes: the shard shape when sharded, else the chunk shape."""
        s = self._raw.outer_chunk_shape
        return None if s is None else tuple(s)

    @property
    def fill_value(self) -> Any:
        """The fill value, as a NumPy scalar of the array's dtype (exact: NaN payloads kept;
        a ``str`` or ``bytes`` for string and bytes arrays)."""
        if self._dtype == _STRING:
            return self._raw.fill_value_bytes.decode("utf-8")
        if self._dtype == _OBJECT:
            return bytes(self._raw.fill_value_bytes)
        return np.frombuffer(self._raw.fill_value_bytes, dtype=self._dtype)[0]

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """One name (or ``None``) per dimension, or ``None`` when the metadata has none."""
        names = self._raw.dimension_names
        return None if names is None else tuple(names)

    @property
    def codecs(self) -> list[dict]:
        """The codec chain (canonical JSON form)."""
        return json.loads(self._raw.codecs_json)

    @property
    def attrs(self) -> Attributes:
        """The user attributes (writes go to the store at once)."""
        return Attributes(self._raw)

    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only."""
        return self._raw.read_only

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        layout = f"shards={self.shards}, chunks={self.chunks}" if self.shards else f"chunks={self.chunks}"
        return f"<zarrflow.Array {self.url!r} shape={self.shape} dtype={self._dtype} {layout}>"

    # -- reads and writes -----------------------------------------------------------------

    def _resolve(self, key: Any, mode: str) -> tuple[Any, str]:
        """A block (``"blocks"``) or mask (``"mask"``) selection as the NumPy-style key it
        stands for; other modes as they are."""
        if mode == "blocks":
            return self._block_key(key), "numpy"
        if mode == "mask":
            return self._mask_key(key), "numpy"
        return key, mode

    def _block_key(self, selection: Any) -> tuple[Any, ...]:
        """zarr-python's block selection (per dimension a block index or a slice of blocks
        with step 1; blocks are the shards when sharded, else the chunks) as element slices,
        with a trailing ``...`` (a 0-d array's selection stays an array, as in zarr-python).

        As in zarr-python, an integer or a slice's start out of range is :exc:`IndexError`
        (a negative one counts from the end once); a slice's stop is clamped as Python
        clamps it (zarr-python 3.4.2 maps a negative stop through elements, not blocks), and
        a dimension of no blocks (zero extent) takes slices, selecting nothing, where
        zarr-python refuses every selection."""
        items = list(selection) if isinstance(selection, tuple) else [selection]
        ellipses = sum(1 for item in items if item is Ellipsis)
        if ellipses > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if ellipses:
            at = next(i for i, item in enumerate(items) if item is Ellipsis)
            items[at : at + 1] = [slice(None)] * max(0, self.ndim - len(items) + 1)
        if len(items) > self.ndim:
            raise IndexError(f"too many indices for array; expected {self.ndim}, got {len(items)}")
        items += [slice(None)] * (self.ndim - len(items))
        counts = self._raw.outer_grid_shape
        key = []
        for dim, (item, count) in enumerate(zip(items, counts)):
            if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
                block = int(item) + count if int(item) < 0 else int(item)
                if not 0 <= block < count:
                    raise IndexError(
                        f"block index {int(item)} out of bounds for dimension {dim} with "
                        f"{count} block(s)"
                    )
                key.append(slice(*self._raw.outer_block_span(dim, block, block)))
            elif isinstance(item, slice):
                if item.step is not None and item.step != 1:
                    raise IndexError(
                        "unsupported selection item for block indexing; expected integer or "
                        f"slice with step=1, got {_short(item)}"
                    )
                if count == 0:
                    key.append(slice(0, 0))
                    continue
                # (a slice of non-integers is TypeError, as in zarr-python and NumPy)
                first = 0 if item.start is None else operator.index(item.start)
                _, stop, _ = item.indices(count)
                first = first + count if first < 0 else first
                if not 0 <= first < count:
                    raise IndexError(
                        f"block slice start {item.start} out of bounds for dimension {dim} "
                        f"with {count} block(s)"
                    )
                if stop <= first:
                    key.append(slice(0, 0))
                else:
                    key.append(slice(*self._raw.outer_block_span(dim, first, stop - 1)))
            else:
                raise IndexError(
                    "unsupported selection item for block indexing; expected integer or slice, "
                    f"got {_short(item)}"
                )
        return (*key, Ellipsis)

    def _mask_key(self, selection: Any) -> np.ndarray:
        """zarr-python's mask selection: one Boolean array of the array's shape (alone or
        in a 1-tuple; nested lists too)."""
        mask = selection[0] if isinstance(selection, tuple) and len(selection) == 1 else selection
        if isinstance(mask, list):
            mask = np.asarray(mask)
        if self.ndim == 0:
            raise IndexError("a 0-d array has no mask selection; read or write it with a[()]")
        if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == self.shape):
            raise IndexError(
                "invalid mask selection; expected one Boolean (mask) array with the same shape "
                f"as the target array {self.shape}, got {_short(selection)}"
            )
        return mask

    def _read(self, key: Any, mode: str) -> Any:
        key, mode = self._resolve(key, mode)
        out = self._raw.read(key, mode, self._dtype)
        if self._dtype == _STRING:
            out = out.astype(_STRING)
        if out.ndim == 0 and not _has_ellipsis(key):
            return out[()]
        return out

    def _write(self, key: Any, mode: str, value: Any) -> None:
        key, mode = self._resolve(key, mode)
        self._raw.write(key, mode, _cast(value, self._dtype))

    def __getitem__(self, key: Any) -> Any:
        return self._read(key, "numpy")

    def __setitem__(self, key: Any, value: Any) -> None:
        self._write(key, "numpy", value)

    @property
    def oindex(self) -> _Indexer:
        """Outer (orthogonal) indexing: ``a.oindex[[0, 2], 1:5]``, ``a.oindex[mask, :] = 0``."""
        return _Indexer(self, "oindex")

    @property
    def vindex(self) -> _Indexer:
        """Vectorized indexing (points): ``a.vindex[[0, 2], [5, 7]]``."""
        return _Indexer(self, "vindex")

    @property
    def blocks(self) -> _Indexer:
        """Block indexing, as zarr-python's ``a.blocks``: ``a.blocks[1, -1]`` is the block
        (the shard when sharded, else the chunk) at block coordinates ``(1, -1)``, clipped
        at the array's edge; slices of blocks (step 1) join neighbouring blocks. Every
        dimension is kept. ``a.blocks[i] = v`` writes."""
        return _Indexer(self, "blocks")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self.read()
        return out if dtype is None else out.astype(dtype)

    def read(self, *, out: Any = None) -> np.ndarray:
        """The whole array as a NumPy array (a string array's dtype is NumPy's
        ``StringDType``, a bytes array's ``object``, as zarr-python 3 returns them).

        With ``out`` (see :meth:`get_basic_selection`), the values are read into it and it
        is returned."""
        if out is not None:
            return self._read_into(Ellipsis, "numpy", out)
        out = self._raw.read(Ellipsis, "numpy", self._dtype)
        return out.astype(_STRING) if self._dtype == _STRING else out

    # -- zarr-python's selection methods ---------------------------------------------------

    def get_basic_selection(
        self,
        selection: Any = Ellipsis,
        *,
        out: Any = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """``a[selection]`` for integers, slices and ``...`` only (zarr-python's name;
        anything else is :exc:`IndexError`, as there).

        ``out``: a NumPy array (or subclass, e.g. ``numpy.memmap``) to read into instead of
        a new one: writable, C-contiguous, of the selection's shape and the array's dtype,
        each checked before anything is read (:exc:`InvalidValueError`), for fixed-size data
        types; it is returned (a selection of integers alone returns the value, as without
        ``out``). Reading into one array again and again spares the memory a new result
        takes, whose pages the kernel zeroes on first touch: 10-14 % of reading the
        benchmark's 256 MiB array here. After an error its contents are unspecified (partly
        read). A zarr-python ``NDBuffer`` (what zarr-python's methods take) is read into as
        the NumPy array it wraps. Do not use ``out`` from another thread during the call.

        ``fields`` and ``prototype`` (every ``get_*`` / ``set_*`` method takes them, as in
        zarr-python): zarrflow's arrays have no fields (any is :exc:`IndexError`, as
        zarr-python says of an array without them), and only zarr's default CPU buffer
        prototype is taken (results are NumPy arrays; another is
        :exc:`InvalidValueError`)."""
        _check_zarr_options(fields, prototype)
        _check_basic(selection)
        return self._get(selection, "numpy", out)

    def get_orthogonal_selection(
        self,
        selection: Any,
        *,
        out: Any = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """``a.oindex[selection]`` (zarr-python's name); ``out`` as in
        :meth:`get_basic_selection`."""
        _check_zarr_options(fields, prototype)
        return self._get(selection, "oindex", out)

    def get_coordinate_selection(
        self,
        selection: Any,
        *,
        out: Any = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """``a.vindex[selection]`` (zarr-python's name), except that a single point (integers
        alone) comes back as an array of one value, as zarr-python returns it, not as a
        value. ``out`` as in :meth:`get_basic_selection`, of the points' (broadcast) shape,
        or, as zarr-python takes it, flat: one dimension of as many values, returned
        reshaped to the points' shape (a view of it)."""
        _check_zarr_options(fields, prototype)
        if out is None:
            value = self._read(selection, "vindex")
            return np.atleast_1d(value) if np.ndim(value) == 0 else value
        got = self._read_into(selection, "vindex", out)
        return got.reshape(1) if got.ndim == 0 else got

    def get_block_selection(
        self,
        selection: Any,
        *,
        out: Any = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """``a.blocks[selection]`` (zarr-python's name); ``out`` as in
        :meth:`get_basic_selection`."""
        _check_zarr_options(fields, prototype)
        return self._get(selection, "blocks", out)

    def get_mask_selection(
        self,
        mask: Any,
        *,
        out: Any = None,
        fields: Any = None,
        prototype: Any = None,
    ) -> Any:
        """The values where ``mask`` (a Boolean array of the array's shape) is true, in C
        order, as one dimension (zarr-python's name; ``a[mask]``). ``out`` as in
        :meth:`get_basic_selection`, of one dimension."""
        _check_zarr_options(fields, prototype)
        return self._get(mask, "mask", out)

    def set_block_selection(
        self,
        selection: Any,
        value: Any,
        *,
        fields: Any = None,
        prototype: Any = None,
    ) -> None:
        """``a.blocks[selection] = value`` (zarr-python's name)."""
        _check_zarr_options(fields, prototype)
        self._write(selection, "blocks", value)

    def set_mask_selection(
        self,
        mask: Any,
        value: Any,
        *,
        fields: Any = None,
        prototype: Any = None,
    ) -> None:
        """Writes ``value`` (one value, or one per true element of ``mask``, in C order)
        where ``mask`` is true (zarr-python's name)."""
        _check_zarr_options(fields, prototype)
        self._write(mask, "mask", value)

    def set_basic_selection(
        self,
        selection: Any,
        value: Any,
        *,
        fields: Any = None,
        prototype: Any = None,
    ) -> None:
        """``a[selection] = value`` for integers, slices and ``...`` only (zarr-python's
        name)."""
        _check_zarr_options(fields, prototype)
        _check_basic(selection)
        self._write(selection, "numpy", value)

    def set_orthogonal_selection(
        self,
        selection: Any,
        value: Any,
        *,
        fields: Any = None,
        prototype: Any = None,
    ) -> None:
        """``a.oindex[selection] = value`` (zarr-python's name)."""
        _check_zarr_options(fields, prototype)
        self._write(selection, "oindex", value)

    def set_coordinate_selection(
        self,
        selection: Any,
        value: Any,
        *,
        fields: Any = None,
        prototype: Any = None,
    ) -> None:
        """``a.vindex[selection] = value`` (zarr-python's name)."""
        _check_zarr_options(fields, prototype)
        self._write(selection, "vindex", value)

    def _get(self, key: Any, mode: str, out: Any) -> Any:
        if out is None:
            return self._read(key, mode)
        key, mode = self._resolve(key, mode)
        out = self._read_into(key, mode, out)
        if out.ndim == 0 and not _has_ellipsis(key):
            return out[()]
        return out

    def _read_into(self, key: Any, mode: str, out: Any) -> np.ndarray:
        if hasattr(out, "as_ndarray_like") and not isinstance(out, np.ndarray):
            out = out.as_ndarray_like()
        if mode == "vindex" and isinstance(out, np.ndarray) and out.ndim == 1:
            shape = tuple(self._raw.selection_shape(key, mode))
            if out.shape != shape and out.size == math.prod(shape) and out.flags.c_contiguous:
                out = out.reshape(shape)  # a view: contiguous
        self._raw.read_into(key, mode, self._dtype, out)
        return out

    def batch(self) -> Batch:
        """A batch of writes touching each shard once, committed on leaving a ``with``:

        >>> a = zarrflow.create("memory://doc/b", shape=(64,), dtype="uint8", shards=(64,), chunks=(8,))
        >>> with a.batch() as b:
        ...     for i in range(64):
        ...         b[i] = i
        >>> int(a[63])
        63
        """
        return Batch(self)

    # -- pickling -------------------------------------------------------------------------

    def __reduce__(self) -> tuple:
        mode = "r" if self._mode == "r" else "r+"
        return (_reopen_array, (self.url, mode, self._options))

    def __dask_tokenize__(self) -> tuple:
        return ("zarrflow.Array", self.url, self.shape, str(self._dtype), self._raw.codecs_json)


def _reopen_array(url: str, mode: str, options: dict) -> Array:
    node = open(url, mode=mode, **options)
    if not isinstance(node, Array):
        raise NodeTypeError(f"{url} is no longer an array", url)
    return node


class Batch:
    """Writes staged in memory and applied together: each touched shard is read (if needed)
    once and written once. As a context manager it commits on a normal exit and writes
    nothing when the block raises. ``b[key] = v``, ``b.oindex[key] = v``,
    ``b.vindex[key] = v``, ``b.blocks[key] = v`` stage writes as the array's own assignments
    do."""

    def __init__(self, array: Array) -> None:
        self._array = array
        self._raw = array._raw.batch()

    def _write(self, key: Any, mode: str, value: Any) -> None:
        key, mode = self._array._resolve(key, mode)
        self._raw.stage(key, mode, _cast(value, self._array.dtype))

    def _read(self, key: Any, mode: str) -> Any:
        raise TypeError("a batch only stages writes; read from the array")

    def __setitem__(self, key: Any, value: Any) -> None:
        self._write(key, "numpy", value)

    @property
    def oindex(self) -> _Indexer:
        """Stages outer-indexed writes."""
        return _Indexer(self, "oindex")

    @property
    def vindex(self) -> _Indexer:
        """Stages vectorized (point) writes."""
        return _Indexer(self, "vindex")

    @property
    def blocks(self) -> _Indexer:
        """Stages block writes (see :attr:`Array.blocks`)."""
        return _Indexer(self, "blocks")

    def __len__(self) -> int:
        return len(self._raw)

    def commit(self) -> None:
        """Applies the staged writes (once; a second commit is an error)."""
        self._raw.commit()

    def discard(self) -> None:
        """Drops the staged writes."""
        self._raw.discard()

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


# ---------------------------------------------------------------------------------------
# groups


class Group:
    """An opened group: ``g[name]`` (a child array or group; ``"a/b"`` walks down),
    ``keys()``, ``attrs``, ``tree()``. A missing member is ``KeyError``."""

    def __init__(self, raw: Any, mode: str, options: dict) -> None:
        self._raw = raw
        self._mode = mode
        self._options = dict(options)

    @property
    def url(self) -> str:
        """The URL the group was opened at."""
        return self._raw.url

    @property
    def attrs(self) -> Attributes:
        """The user attributes (writes go to the store at once)."""
        return Attributes(self._raw)

    def _children(self) -> list[tuple[str, str]]:
        return self._raw.children()

    def keys(self) -> list[str]:
        """The children's names, sorted."""
        return [name for name, _ in self._children()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._children())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self[name]
        except KeyError:
            return False
        return True

    def items(self) -> list[tuple[str, Array | Group]]:
        """``(name, child)`` pairs."""
        return [(name, self[name]) for name in self.keys()]

    def arrays(self) -> list[tuple[str, Array]]:
        """The child arrays."""
        return [(n, self[n]) for n, kind in self._children() if kind == "array"]  # type: ignore[misc]

    def groups(self) -> list[tuple[str, Group]]:
        """The child groups."""
        return [(n, self[n]) for n, kind in self._children() if kind == "group"]  # type: ignore[misc]

    def __getitem__(self, name: str) -> Array | Group:
        if not isinstance(name, str):
            raise KeyError(name)
        node: Array | Group = self
        for part in name.strip("/").split("/"):
            if not isinstance(node, Group):
                raise KeyError(name)
            try:
                url = node._raw.child_url(part)
            except InvalidValueError:
                raise KeyError(name) from None
            try:
                node = open(url, mode="r" if self._mode == "r" else "r+", **self._options)
            except NodeNotFoundError:
                raise KeyError(name) from None
        return node

    def tree(self) -> str:
        """The hierarchy under this group, one node a line (as ``zarrflow tree`` prints it)."""
        lines = ["/"]

        def walk(group: Group, prefix: str) -> None:
            children = group.items()
            for i, (name, child) in enumerate(children):
                last = i == len(children) - 1
                branch = "└── " if last else "├── "
                if isinstance(child, Array):
                    layout = f"shards {child.shards} chunks {child.chunks}" if child.shards else f"chunks {child.chunks}"
                    lines.append(f"{prefix}{branch}{name} {child.shape} {child.dtype} {layout}")
                else:
                    lines.append(f"{prefix}{branch}{name}")
                    walk(child, prefix + ("    " if last else "│   "))

        walk(self, "")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<zarrflow.Group {self.url!r}>"

    def __reduce__(self) -> tuple:
        mode = "r" if self._mode == "r" else "r+"
        return (_reopen_group, (self.url, mode, self._options))


def _reopen_group(url: str, mode: str, options: dict) -> Group:
    node = open(url, mode=mode, **options)
    if not isinstance(node, Group):
        raise NodeTypeError(f"{url} is no longer a group", url)
    return node


# ---------------------------------------------------------------------------------------
# entry points


def open(url: str, mode: str = "r", **store_options: Any) -> Array | Group:  # noqa: A001
    """Opens the array or group at ``url``.

    Modes, as in zarr-python: ``"r"`` read-only; ``"r+"`` read and write, the node must
    exist; ``"a"`` read and write, an empty group is created when nothing is there; ``"w"``
    creates an empty group, replacing whatever is there. With ``shape=`` and ``dtype=``
    (and the other arguments of :func:`create`), ``"w"`` creates an array instead and
    ``"a"`` creates it when missing.

    Other keywords are store and execution options: ``request_concurrency``,
    ``local_write_concurrency`` (shards a write stores at once into a local or memory
    store without ``fsync``: default 2, at most ``request_concurrency``, 0 taken as 1),
    ``decode_threads``, ``index_cache_bytes``, ``write_cache_bytes`` (bytes of shards a
    remote array keeps after writing them partially, so that its next partial write of one
    is a single conditional PUT instead of a GET and a PUT; default 0, off),
    ``verify_checksums``, ``store_empty_chunks``, ``inner_chunk_order`` (how the shards
    this array writes lay their inner chunks out: ``"lexicographic"``, C order as TensorStore
    writes them, the default; ``"morton"``, zarr-python 3's default ``subchunk_write_order``,
    so that the shards are byte for byte those zarr-python writes; ``"colexicographic"``;
    never stored, every order reads the same), ``max_metadata_bytes``, ``concurrency``,
    ``suffix_requests``, ``fsync``, ``max_retries``, ``retry_timeout`` (seconds),
    ``coalesce_max_gap``,
    ``coalesce_max_request_bytes``, ``conflict_attempts`` (attempts of a conditional write
    that keeps losing races with other writers before :class:`ConflictError`; default 32,
    1 for none again); any other is passed to the object store
    (``aws_endpoint="http://127.0.0.1:9000"``, ``aws_allow_http=True``, ``aws_region=...``).

    Example::

        >>> import zarrflow
        >>> a = zarrflow.create("memory://doc/open", shape=(4, 4), dtype="int32")
        >>> a[1] = 7
        >>> zarrflow.open("memory://doc/open")[1, :2]
        array([7, 7], dtype=int32)

    Raises :class:`NodeNotFoundError` (a ``FileNotFoundError``) when there is no node,
    :class:`StoreError` (an ``OSError``, with ``.url``) when the store fails.
    """
    if mode not in _MODES:
        raise InvalidValueError(f"mode {mode!r} is not one of 'r', 'r+', 'a', 'w'")
    create_args = {k: store_options.pop(k) for k in _CREATE_KEYS if k in store_options}
    if create_args and mode in ("r", "r+"):
        raise InvalidValueError(f"{', '.join(create_args)} given with mode {mode!r}, which creates nothing")
    if create_args and mode == "w":
        return create(url, overwrite=True, **create_args, **store_options)
    if mode == "w":
        raw = _zarrflow.create_group(url, None, True, **store_options)
        return Group(raw, mode, store_options)
    try:
        kind, raw = _zarrflow.open_node(url, mode == "r", **store_options)
    except NodeNotFoundError:
        if mode != "a":
            raise
        if create_args:
            return create(url, **create_args, **store_options)
        raw = _zarrflow.create_group(url, None, False, **store_options)
        return Group(raw, mode, store_options)
    if kind == "array":
        return Array(raw, mode, store_options)
    return Group(raw, mode, store_options)


def create(
    url: str,
    shape: Any,
    dtype: Any,
    chunks: Any = None,
    shards: Any = None,
    codec: str = "zstd",
    fill_value: Any = None,
    dimension_names: Any = None,
    attributes: dict | None = None,
    zarr_format: int = 3,
    overwrite: bool = False,
    filters: Any = None,
    **store_options: Any,
) -> Array:
    """Creates an array at ``url`` and opens it for reading and writing.

    ``chunks`` is the inner (read) chunk shape when ``shards`` is given, else the chunk
    shape; without either the array is one chunk; ``shards`` without ``chunks`` makes one
    inner chunk per shard. ``codec``: ``"zstd[:LEVEL]"`` (default), ``"gzip[:LEVEL]"``,
    ``"zlib[:LEVEL]"``, ``"bz2[:LEVEL]"``, ``"lz4[:ACCELERATION]"``, ``"lzma[:PRESET]"``
    (numcodecs' codecs, as zarr-python 3 names them; lz4's acceleration is liblz4's
    ``LZ4_compress_fast`` one, as numcodecs'), ``"blosc[:CNAME[:LEVEL]]"`` (its type size the
    element size of what it compresses, after the filters, with bit shuffle for one byte and
    byte shuffle otherwise, as zarr-python sets them) or ``"none"``.
    ``filters``: array-to-array codecs applied before the chunk is serialized (one codec or
    a list): zarr-python's codec objects (``zarr.codecs.ScaleOffset``, ``CastValue``,
    ``zarr.codecs.numcodecs.Delta``, ...) and their JSON forms (``{"name":
    "numcodecs.delta", "configuration": {"dtype": "<i4"}}``), as zarr-python takes them,
    and also numcodecs' own codecs (``numcodecs.Delta(dtype="<i4")``, ``Quantize``,
    ``AsType``, ``PackBits``, ...) and ``{"id": ...}`` dicts, stored under the
    ``numcodecs.*`` names zarr-python 3 gives them; inside the shards when ``shards`` is
    given. A compressor or serializer among them is a ``ValueError``. ``fill_value`` must be representable in
    ``dtype`` (default: 0, ``False`` or NaN, as zarr-python). An existing node is
    :class:`NodeExistsError` unless ``overwrite=True``, which deletes it whole first.
    Store options as in :func:`open`.

    >>> import zarrflow
    >>> a = zarrflow.create("memory://doc/create", shape=(100, 200), dtype="float32",
    ...                     shards=(50, 100), chunks=(10, 20), dimension_names=("y", "x"),
    ...                     attributes={"units": "K"})
    >>> a.shards, a.chunks, a.attrs["units"]
    ((50, 100), (10, 20), 'K')
    """
    if zarr_format != 3:
        raise InvalidValueError("zarrflow writes Zarr format 3 only (zarr_format=3)")
    data_type = _zarr_data_type(dtype)
    np_dtype = _numpy_dtype(data_type)
    shape = _shape(shape, "shape")
    fill = None
    if fill_value is not None:
        fill = _cast(fill_value, np_dtype)
        if fill.size != 1:
            raise InvalidValueError(f"fill_value must be one value, not {_short(fill_value)}")
        if np_dtype == _STRING:
            fill = fill.reshape(-1)[0].encode("utf-8")
        elif np_dtype == _OBJECT:
            fill = fill.reshape(-1)[0]
        else:
            fill = fill.reshape(()).tobytes()
    names = None
    if dimension_names is not None:
        names = [None if n is None else str(n) for n in dimension_names]
    attributes_json = None
    if attributes is not None:
        try:
            attributes_json = json.dumps(dict(attributes), allow_nan=True)
        except (TypeError, ValueError) as e:
            raise InvalidValueError(f"attributes must be JSON values: {e}") from None
    filters_json = None
    if filters is not None:
        if isinstance(filters, dict) or hasattr(filters, "to_dict") or hasattr(filters, "get_config"):
            filters = [filters]
        if isinstance(filters, (str, bytes)):
            raise InvalidValueError(f"filters must be a list of codecs, not {_short(filters)}")
        try:
            filters_json = json.dumps([_json_scalars(_filter_json(f)) for f in filters], allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidValueError(f"filters must be codecs with JSON configurations: {e}") from None
    raw = _zarrflow.create_array(
        url,
        shape,
        data_type,
        None if chunks is None else _shape(chunks, "chunks"),
        None if shards is None else _shape(shards, "shards"),
        codec,
        fill,
        names,
        attributes_json,
        overwrite,
        filters_json,
        **store_options,
    )
    return Array(raw, "r+", store_options)


def _filter_json(f: Any) -> dict:
    """A filter as a Zarr v3 codec object: zarr-python codecs by ``to_dict()``, numcodecs
    codecs by ``get_config()`` (``{"id": ID, ...}`` becomes ``numcodecs.ID``, as zarr-python 3
    names them), dicts of either form as they are."""
    if isinstance(f, dict):
        d = dict(f)
    elif hasattr(f, "to_dict"):
        d = f.to_dict()
    elif hasattr(f, "get_config"):
        d = f.get_config()
    else:
        raise InvalidValueError(f"a filter must be a codec or a dict, not {_short(f)}")
    if "name" not in d and "id" in d:
        codec_id = d.pop("id")
        return {"name": f"numcodecs.{codec_id}", "configuration": d}
    if not isinstance(d.get("name"), str):
        raise InvalidValueError(f"a filter needs a codec name: {_short(f)}")
    return d


def _json_scalars(value: Any) -> Any:
    """`value` with NumPy scalars as Python numbers, tuples as lists and non-finite floats as
    Zarr's ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"``, as zarr-python writes them."""
    if isinstance(value, dict):
        return {k: _json_scalars(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_scalars(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _shape(value: Any, what: str) -> list[int]:
    if isinstance(value, (int, np.integer)):
        value = (value,)
    try:
        out = [int(v) for v in value]
    except (TypeError, ValueError):
        raise InvalidValueError(f"{what} must be a sequence of integers, not {_short(value)}") from None
    if any(v < 0 for v in out):
        raise InvalidValueError(f"{what} must not be negative: {out}")
    return out
