"""S3: zarrflow.open("s3://...") against a moto S3 server on 127.0.0.1 that the tests start
(conftest.py's ``moto`` fixture). Fixtures uploaded there read as zarr-python reads the same
fixture from disk (zarr-python has no S3 client in the pinned environment: neither s3fs nor
obstore is installed); zarrflow's writes to S3 are downloaded object by object (boto3) and
read by zarr-python; Dask's from_zarr / to_zarr run on S3 in a LocalCluster of 2 worker
processes, including blocks that share shards (merged by conditional writes on moto)."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import zarr
from distributed import Client, LocalCluster

import zarrflow
import zarrflow.dask
from conftest import TEST_DATA, manifest, selection_key
from test_fixtures import same

# zarr-python's v3 fixtures (sharded and not, every data type it writes) and its v2 ones
S3_ARRAYS = [
    a
    for a in manifest()["arrays"]
    if a["path"].split("/")[1] in ("zarr-python", "zarr-python-v2") and a["data_type"] != "r16"
]
# zarr-python 3.4.2's string and bytes fixtures (the uploaded tree; test_strings.py reads all)
VLEN = [v for v in manifest()["vlen_arrays"] if v["path"].split("/")[1] == "zarr-python-vlen"]


def some_selections(entry: dict) -> list[dict]:
    """The array's first two basic selections and first oindex and vindex ones
    (test_fixtures.py runs all of them on the local copies; moto serves one request at a
    time)."""
    selections = entry.get("selections", [])
    of = lambda mode: [s for s in selections if s["mode"] == mode]  # noqa: E731
    return of("basic")[:2] + of("oindex")[:1] + of("vindex")[:1]


@pytest.fixture(scope="module")
def fixtures_on_s3(moto):
    """test-data/fixtures uploaded to s3://fixtures/ (zarr-python's trees and the vlen ones)."""
    for tree in ("zarr-python", "zarr-python-v2", "zarr-python-vlen"):
        moto.upload(TEST_DATA / "fixtures" / tree, "fixtures", tree)
    return "s3://fixtures"


def s3_url(entry_path: str) -> str:
    # manifest paths are "fixtures/<tree>/<name>"
    return "s3://fixtures/" + entry_path.split("/", 1)[1]


def test_fixtures_on_s3_read_as_zarr_python_reads_them(moto, fixtures_on_s3):
    assert len(S3_ARRAYS) > 100
    checked = 0
    for entry in S3_ARRAYS:
        a = zarrflow.open(s3_url(entry["path"]), **moto.options)
        assert isinstance(a, zarrflow.Array)
        z = zarr.open_array(str(TEST_DATA / entry["path"]), mode="r")
        got = a[...]
        by_zarr = z[...]
        by_zarr = by_zarr.astype(by_zarr.dtype.newbyteorder("="), copy=False)
        assert same(got, by_zarr), entry["path"]
        assert a.shape == z.shape and a.dtype == by_zarr.dtype, entry["path"]
        for sel in some_selections(entry):
            key = selection_key(sel["selection"])
            indexer = {"basic": a, "oindex": a.oindex, "vindex": a.vindex}[sel["mode"]]
            expected = np.load(TEST_DATA / sel["expected"])
            assert same(np.asarray(indexer[key]).reshape(sel["shape"]), expected), (entry["path"], sel)
            checked += 1
    assert checked > 300


def test_string_fixtures_on_s3_read_as_zarr_python_reads_them(moto, fixtures_on_s3):
    for entry in VLEN:
        a = zarrflow.open(s3_url(entry["path"]), **moto.options)
        z = zarr.open_array(str(TEST_DATA / entry["path"]), mode="r")
        assert a[...].tolist() == z[...].tolist(), entry["path"]
        assert a[...].dtype == z[...].dtype


def test_a_group_on_s3_lists_its_children(moto, fixtures_on_s3):
    groups = [g for g in manifest()["groups"] if g["path"].split("/")[1] == "zarr-python"]
    assert groups
    for entry in groups:
        g = zarrflow.open(s3_url(entry["path"]), **moto.options)
        z = zarr.open_group(str(TEST_DATA / entry["path"]), mode="r")
        assert isinstance(g, zarrflow.Group)
        assert sorted(g.keys()) == sorted(z.keys())
        assert g.attrs.asdict() == dict(z.attrs)


def test_writes_to_s3_read_back_by_zarrflow_and_zarr_python(moto, tmp_path):
    bucket = moto.bucket("writes")
    url = f"s3://{bucket}/w.zarr"
    a = zarrflow.create(
        url, shape=(60, 50), dtype="int32", shards=(20, 25), chunks=(5, 5),
        dimension_names=("y", "x"), attributes={"units": "m"}, **moto.options,
    )
    want = np.zeros((60, 50), dtype=np.int32)
    a[3:41, 7:33] = 5                         # partial shard writes (read-modify-write)
    want[3:41, 7:33] = 5
    a[::7, 1] = np.arange(9)
    want[::7, 1] = np.arange(9)
    a.oindex[[0, 59], 20:30] = [[1], [2]]
    want[[0, 59], 20:30] = [[1], [2]]
    a.vindex[[10, 11, 12], [40, 41, 42]] = -1
    want[[10, 11, 12], [40, 41, 42]] = -1
    with a.batch() as b:
        for i in range(40, 60):
            b[i, i - 10] = 100 + i
            want[i, i - 10] = 100 + i
    assert np.array_equal(zarrflow.open(url, **moto.options)[...], want)
    local = moto.download(bucket, "w.zarr", tmp_path / "w.zarr")
    z = zarr.open_array(str(local), mode="r")
    assert np.array_equal(z[...], want)
    assert z.shards == (20, 25) and z.chunks == (5, 5) and dict(z.attrs) == {"units": "m"}
    # strings on S3 too
    s = zarrflow.create(f"s3://{bucket}/s.zarr", shape=(6,), dtype=str, chunks=(4,), **moto.options)
    s[1:5] = ["a", "h\u00e9", "", "\U0001F600"]
    local = moto.download(bucket, "s.zarr", tmp_path / "s.zarr")
    assert zarr.open_array(str(local), mode="r")[...].tolist() == ["", "a", "h\u00e9", "", "\U0001F600", ""]


def test_missing_and_read_only_nodes_on_s3_are_named_errors(moto):
    bucket = moto.bucket("errors")
    with pytest.raises(FileNotFoundError) as missing:
        zarrflow.open(f"s3://{bucket}/nothing.zarr", **moto.options)
    assert "nothing.zarr" in str(missing.value)
    zarrflow.create(f"s3://{bucket}/ro.zarr", shape=(4,), dtype="uint8", **moto.options)
    ro = zarrflow.open(f"s3://{bucket}/ro.zarr", mode="r", **moto.options)
    with pytest.raises(PermissionError):
        ro[0] = 1


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


def test_dask_from_zarr_on_s3_in_two_worker_processes(moto, fixtures_on_s3, client):
    entry = next(a for a in S3_ARRAYS if a["path"].endswith("sharded_dtype_float32"))
    darr = zarrflow.dask.from_zarr(s3_url(entry["path"]), **moto.options)
    got = client.compute(darr).result()
    z = zarr.open_array(str(TEST_DATA / entry["path"]), mode="r")
    assert np.array_equal(got, z[...], equal_nan=True)
    assert client.compute(darr[1:, ::2].sum()).result() == z[1:, ::2].sum()


def test_dask_to_zarr_on_s3_aligned_and_sharing_shards(moto, client, tmp_path):
    bucket = moto.bucket("dask")
    shape = (512, 384)
    values = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    src = da.from_array(values, chunks=(128, 384))
    # aligned: one task per destination shard
    zarrflow.dask.to_zarr(
        src, f"s3://{bucket}/aligned.zarr", shards=(256, 192), chunks=(64, 64), **moto.options
    )
    # misaligned: 8 x 3 blocks of 64 x 128 into shards of 256 x 192, so blocks of different
    # tasks (on both workers) share every shard: conditional writes on moto merge them
    blocks = da.from_array(values, chunks=(64, 128))
    stored = zarrflow.dask.to_zarr(
        blocks, f"s3://{bucket}/shared.zarr", shards=(256, 192), chunks=(64, 64),
        align=False, compute=False, **moto.options,
    )
    client.compute(stored).result()
    for name in ("aligned.zarr", "shared.zarr"):
        assert np.array_equal(zarrflow.open(f"s3://{bucket}/{name}", **moto.options)[...], values), name
        local = moto.download(bucket, name, tmp_path / name)
        z = zarr.open_array(str(local), mode="r")
        assert z.shards == (256, 192) and np.array_equal(z[...], values), name
