"""Each error class maps to the Python exception a NumPy / zarr-python user expects, and
a Rust panic never crosses into Python."""

from __future__ import annotations

import os

import numpy as np
import pytest

import zarrflow


@pytest.fixture
def arr(tmp_url):
    a = zarrflow.create(tmp_url(), shape=(10, 8), dtype="int16", shards=(5, 4), chunks=(5, 2))
    a[...] = 1
    return a


@pytest.mark.parametrize("key", [np.s_[10], np.s_[-11], np.s_[0, 8], np.s_[[1, 10]], np.s_[:, [-9]]])
def test_out_of_bounds_is_index_error(arr, key):
    with pytest.raises(IndexError) as e:
        arr[key]
    assert isinstance(e.value, zarrflow.OutOfBoundsError)
    with pytest.raises(IndexError):
        arr[key] = 0


@pytest.mark.parametrize(
    "key",
    [np.s_[1.5], np.s_["a"], np.s_[..., ...], np.s_[1, 2, 3], np.s_[::0], np.s_[[0.5]], np.s_[1:2:1.0],
     np.s_[[1, 2], [1, 2, 3]], np.s_[np.ones((3, 3), bool)]],
    ids=repr,
)
def test_bad_selections_are_value_errors(arr, key):
    with pytest.raises(ValueError) as e:
        arr[key]
    assert isinstance(e.value, zarrflow.SelectionError)


def test_values_that_do_not_broadcast_are_value_errors(arr):
    with pytest.raises(ValueError) as e:
        arr[:2, :3] = np.ones((3, 2), dtype=np.int16)
    assert isinstance(e.value, zarrflow.InvalidValueError)
    assert "broadcast" in str(e.value)


def test_missing_node_is_file_not_found_with_the_url(tmp_path):
    url = str(tmp_path / "nothing")
    with pytest.raises(FileNotFoundError) as e:
        zarrflow.open(url)
    assert isinstance(e.value, zarrflow.NodeNotFoundError)
    assert e.value.url is not None and "nothing" in e.value.url


def test_missing_group_member_is_key_error(tmp_url):
    url = tmp_url()
    g = zarrflow.open(url, mode="w")
    with pytest.raises(KeyError):
        g["absent"]
    assert "absent" not in g


def test_existing_node_is_file_exists_error(arr):
    with pytest.raises(FileExistsError) as e:
        zarrflow.create(arr.url, shape=(2,), dtype="int8")
    assert isinstance(e.value, zarrflow.NodeExistsError)
    zarrflow.create(arr.url, shape=(2,), dtype="int8", overwrite=True)


def test_read_only_store_is_a_permission_error_carrying_the_url(arr):
    ro = zarrflow.open(arr.url, mode="r")
    with pytest.raises(PermissionError) as e:
        ro[0] = 5
    assert isinstance(e.value, zarrflow.ReadOnlyError) and isinstance(e.value, OSError)
    assert e.value.url
    assert ro[0, 0] == 1


def test_store_failure_is_os_error_with_the_url(arr):
    shard = os.path.join(arr.url, "c", "0", "0")
    assert os.path.isfile(shard)
    os.remove(shard)
    os.mkdir(shard)  # a directory where an object should be
    with pytest.raises(OSError) as e:
        arr[0, 0]
    assert isinstance(e.value, zarrflow.StoreError)
    assert e.value.url and e.value.url.endswith("c/0/0")


def test_corrupt_chunk_is_corrupt_data_error(arr):
    shard = os.path.join(arr.url, "c", "1", "1")
    data = bytearray(open(shard, "rb").read())
    data[-8] ^= 0xFF  # inside the index: its checksum no longer matches
    open(shard, "wb").write(bytes(data))
    with pytest.raises(zarrflow.CorruptDataError):
        arr[7, 5]
    assert arr[0, 0] == 1  # other shards still read


def test_concurrent_metadata_update_is_conflict_error(arr):
    first = zarrflow.open(arr.url, mode="r+")
    second = zarrflow.open(arr.url, mode="r+")
    first.attrs["who"] = "first"
    with pytest.raises(zarrflow.ConflictError) as e:
        second.attrs["who"] = "second"  # its version is stale: conditional write refused
    assert isinstance(e.value, OSError) and e.value.url
    assert zarrflow.open(arr.url).attrs["who"] == "first"


def test_bad_arguments_are_value_errors(tmp_url):
    with pytest.raises(ValueError):
        zarrflow.create(tmp_url(), shape=(4,), dtype="float33")
    with pytest.raises(ValueError):
        zarrflow.create(tmp_url(), shape=(4,), dtype="int8", codec="brotli")
    with pytest.raises(ValueError):
        zarrflow.create(tmp_url(), shape=(4,), dtype="uint8", fill_value=256)
    with pytest.raises(ValueError):
        zarrflow.open(tmp_url(), mode="x")
    with pytest.raises(ValueError):
        zarrflow.open(tmp_url(), mode="r", decode_threads="many")
    with pytest.raises(ValueError):
        zarrflow.open(tmp_url(), mode="r", local_write_concurrency=-1)
    with pytest.raises(ValueError):
        zarrflow.open("ftp://example.invalid/a")


def test_exceptions_pickle_with_their_url():
    import pickle

    e = pickle.loads(pickle.dumps(zarrflow.ConflictError("lost", "file:///x")))
    assert isinstance(e, zarrflow.ConflictError) and e.url == "file:///x" and str(e) == "lost"


def test_a_rust_panic_becomes_internal_error_not_a_crash():
    # A panic inside the library surfaces as zarrflow.InternalError (a RuntimeError); the
    # raw layer's test hook panics on purpose.
    from zarrflow import _zarrflow

    with pytest.raises(zarrflow.InternalError) as e:
        _zarrflow._panic_for_tests()
    assert isinstance(e.value, RuntimeError) and "panic" in str(e.value)
    # and the module keeps working afterwards
    a = zarrflow.create("memory://py-errors/after-panic", shape=(2,), dtype="int8")
    a[:] = 1
    with pytest.raises(zarrflow.InternalError):
        _zarrflow._panic_for_tests(in_runtime=True)
    assert list(a[:]) == [1, 1]
