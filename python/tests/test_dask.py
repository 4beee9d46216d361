"""zarrflow.dask on a dask.distributed LocalCluster of 2 worker processes: (a) a sharded
fixture read with from_zarr equals zarr-python's read; (b) a 64 MiB array re-sharded with
to_zarr in 4 tasks, checked with zarr-python; (c) two workers writing overlapping,
shard-misaligned regions of one array at once lose no update."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import zarr
from distributed import Client, LocalCluster

import zarrflow
import zarrflow.dask
from conftest import TEST_DATA


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


def test_from_zarr_reads_a_sharded_fixture_as_zarr_python(client):
    path = str(TEST_DATA / "fixtures/zarr-python/sharded_dtype_float32")
    darr = zarrflow.dask.from_zarr(path)
    a = zarrflow.open(path)
    assert darr.chunksize == tuple(min(s, n) for s, n in zip(a.shards, a.shape))
    got = client.compute(darr).result()
    assert np.array_equal(got, zarr.open_array(path, mode="r")[...], equal_nan=True)
    sub = client.compute(darr[1:, ::2].sum()).result()
    assert sub == zarr.open_array(path, mode="r")[1:, ::2].sum()


def test_to_zarr_reshards_64_mib_in_four_tasks(client, tmp_path):
    src = str(tmp_path / "src.zarr")
    shape = (2048, 4096)  # 64 MiB of float64... as int64: 64 MiB
    a = zarrflow.create(src, shape=shape, dtype="int64", shards=(512, 4096), chunks=(128, 512))
    a[...] = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    darr = zarrflow.dask.from_zarr(src)
    assert darr.numblocks == (4, 1)
    dst = str(tmp_path / "dst.zarr")
    stored = zarrflow.dask.to_zarr(darr, dst, shards=(2048, 1024), chunks=(256, 256), compute=False)
    # one write task per destination shard: 4 shards of 2048 x 1024
    assert zarrflow.open(dst).shards == (2048, 1024)
    client.compute(stored).result()
    z = zarr.open_array(dst, mode="r")
    assert z.shards == (2048, 1024) and z.chunks == (256, 256)
    assert np.array_equal(z[...], np.arange(np.prod(shape), dtype=np.int64).reshape(shape))


def _write(url: str, start: int, stop: int, value: int) -> int:
    a = zarrflow.open(url, mode="r+")
    a[start:stop:2] = value
    return stop - start


def test_two_workers_writing_overlapping_misaligned_regions_lose_no_update(client, tmp_path):
    url = str(tmp_path / "shared.zarr")
    n = 2000
    zarrflow.create(url, shape=(n,), dtype="int32", shards=(100,), chunks=(10,))
    workers = sorted(client.scheduler_info()["workers"])
    assert len(workers) == 2
    # worker 0 writes the even cells of [37k, 37k + 37), worker 1 the odd cells of
    # [37k + 5, 37k + 42): the regions overlap (in extent and in shards) and cross shard
    # boundaries, so both keep rewriting the same shards at once; no cell is written twice.
    pieces = []
    for k, base in enumerate(range(0, n, 37)):
        pieces.append((0, base + base % 2, min(base + 37, n), 1 + k))
        odd = base + 5 + (base + 5 + 1) % 2
        pieces.append((1, odd, min(base + 42, n), -(1 + k)))
    futures = [
        client.submit(_write, url, start, stop, value, workers=[workers[w]], pure=False)
        for w, start, stop, value in pieces
    ]
    client.gather(futures)
    expected = np.zeros(n, dtype=np.int32)
    for _, start, stop, value in pieces:
        assert not expected[start:stop:2].any()
        expected[start:stop:2] = value
    got = zarr.open_array(url, mode="r")[...]
    assert np.array_equal(got, expected)
    assert (got[0::2] > 0).all() and (got[7::2] < 0).all()
