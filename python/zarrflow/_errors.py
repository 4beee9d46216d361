"""zarrflow's exceptions. Each is also the built-in exception a NumPy or zarr-python user
expects (``OutOfBoundsError`` is an ``IndexError``, ``NodeNotFoundError`` a
``FileNotFoundError``, ...), and those about a store carry its ``url``."""

from __future__ import annotations


class ZarrflowError(Exception):
    """The base of every zarrflow exception; ``url`` names the node or object concerned
    (``None`` when the error is about no stored object)."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.url = url

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # exceptions cross process boundaries (Dask workers)
        return (type(self), (self.message, self.url))


class SelectionError(ZarrflowError, ValueError):
    """A key that is not a valid selection (a bad index type, two ellipses, too many
    indices, a zero step, index arrays that do not broadcast)."""


class OutOfBoundsError(ZarrflowError, IndexError):
    """A selection reaching outside the array (an integer or index past its end)."""


class InvalidValueError(ZarrflowError, ValueError):
    """A bad value or argument: values that do not broadcast to the selection, a data type
    that cannot be cast, a bad option, fill value, codec or node name."""


class InvalidUrlError(ZarrflowError, ValueError):
    """A URL or store key that cannot be parsed."""


class SelectionTooLargeError(ZarrflowError, MemoryError):
    """A selection whose result would not fit in memory."""


class MetadataError(ZarrflowError, ValueError):
    """Invalid or unsupported metadata (``zarr.json``)."""


class NodeTypeError(ZarrflowError, TypeError):
    """A group where an array was expected, or the other way round."""


class NodeNotFoundError(ZarrflowError, FileNotFoundError):
    """No node (no ``zarr.json``) at the URL."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message, url)
        self.filename = url


class NodeExistsError(ZarrflowError, FileExistsError):
    """A node (or stray objects) where one is being created without ``overwrite``."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message, url)
        self.filename = url


class StoreError(ZarrflowError, OSError):
    """The store failed (network, permissions, a truncated body, ...)."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message, url)
        self.filename = url


class ReadOnlyError(StoreError, PermissionError):
    """A write to a store opened read-only (``mode="r"``, or ``http(s)://``)."""


class ConflictError(StoreError):
    """A conditional write that kept losing to concurrent writers until its attempts ran
    out (``conflict_attempts``, 32 by default; the shard or chunk named by ``url`` kept its
    other writer's version, shards already written keep the new values), or a metadata
    update that found the metadata changed: re-open and try again."""


class CorruptDataError(ZarrflowError, OSError):
    """Stored data that does not decode (a corrupt chunk, shard index or checksum)."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message, url)
        self.filename = url


class InternalError(ZarrflowError, RuntimeError):
    """A bug in zarrflow (a Rust panic, caught before it reached Python): please report it."""


__all__ = [
    "ConflictError",
    "CorruptDataError",
    "InternalError",
    "InvalidUrlError",
    "InvalidValueError",
    "MetadataError",
    "NodeExistsError",
    "NodeNotFoundError",
    "NodeTypeError",
    "OutOfBoundsError",
    "ReadOnlyError",
    "SelectionError",
    "SelectionTooLargeError",
    "StoreError",
    "ZarrflowError",
]
