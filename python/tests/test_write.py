"""Arrays created and written by zarrflow, read back by zarr-python and TensorStore; every
numeric data type; fill values, attributes, dimension names, codecs; batches; dtype
checks on values."""

from __future__ import annotations

import numpy as np
import pytest
import tensorstore as ts
import zarr

import zarrflow

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]


def values_of(dtype: str, shape) -> np.ndarray:
    rng = np.random.default_rng(11)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


def tensorstore_read(path: str) -> np.ndarray:
    store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
    return store.read().result()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sharded", [True, False], ids=["sharded", "unsharded"])
def test_every_dtype_written_reads_back_in_zarr_python_and_tensorstore(tmp_url, dtype, sharded):
    url = tmp_url(dtype)
    shape = (13, 11)
    layout = dict(shards=(8, 6), chunks=(4, 3)) if sharded else dict(chunks=(5, 4))
    a = zarrflow.create(url, shape=shape, dtype=dtype, **layout)
    ref = values_of(dtype, shape)
    a[...] = ref
    a[2:9:3, ::-4] = ref[:3, :3]
    ref[2:9:3, ::-4] = ref[:3, :3]
    assert a.dtype == np.dtype(dtype)
    assert np.array_equal(a[...], ref)
    assert np.array_equal(zarr.open_array(url, mode="r")[...], ref)
    assert np.array_equal(tensorstore_read(url), ref)


def test_metadata_round_trips_through_zarr_python(tmp_url):
    url = tmp_url()
    a = zarrflow.create(
        url, shape=(40, 30), dtype="float32", shards=(20, 30), chunks=(10, 10), codec="blosc:lz4:5",
        fill_value=np.nan, dimension_names=("y", "x"), attributes={"units": "K", "n": [1, 2]},
    )
    assert (a.shape, a.shards, a.chunks, a.ndim, a.size, a.nbytes) == ((40, 30), (20, 30), (10, 10), 2, 1200, 4800)
    assert np.isnan(a.fill_value) and a.dimension_names == ("y", "x")
    z = zarr.open_array(url, mode="r")
    assert z.shards == (20, 30) and z.chunks == (10, 10)
    assert np.isnan(z.fill_value) and tuple(z.metadata.dimension_names) == ("y", "x")
    assert dict(z.attrs) == {"units": "K", "n": [1, 2]}
    assert np.isnan(a[...]).all()
    a.attrs["title"] = "t"
    a.attrs.update(more=1)
    del a.attrs["n"]
    assert dict(zarr.open_array(url, mode="r").attrs) == {"units": "K", "title": "t", "more": 1}
    assert zarrflow.open(url).attrs.asdict() == {"units": "K", "title": "t", "more": 1}


@pytest.mark.parametrize(
    "codec",
    ["zstd", "zstd:3", "gzip:1", "zlib:4", "bz2", "lz4", "lz4:9", "lzma", "lzma:1", "blosc", "blosc:zlib:9", "none"],
)
def test_codecs_are_readable_by_zarr_python(tmp_url, codec):
    url = tmp_url()
    a = zarrflow.create(url, shape=(50,), dtype="uint16", shards=(25,), chunks=(5,), codec=codec)
    a[:] = np.arange(50, dtype=np.uint16)
    assert np.array_equal(zarr.open_array(url, mode="r")[:], np.arange(50))
    name = codec.split(":")[0]
    if name in ("zlib", "bz2", "lz4", "lzma"):
        # numcodecs' codecs under the names zarr-python 3 writes, inside the shard's codecs
        inner = a.codecs[0]["configuration"]["codecs"]
        assert inner[-1]["name"] == f"numcodecs.{name}", inner


def _filter_cases():
    import numcodecs
    import zarr.codecs as zc

    ramp = (np.arange(80, dtype="int32") * 7 - 300).reshape(4, 20)
    return [
        ("delta", [numcodecs.Delta(dtype="<i4")], ramp),
        ("delta_astype", [zc.numcodecs.Delta(dtype="<i4", astype="<i2")], ramp),
        ("scale_offset", [zc.ScaleOffset(offset=1, scale=2)], ramp.astype("int16")),
        ("quantize", [{"id": "quantize", "digits": 2, "dtype": "<f8"}], np.linspace(-3, 3, 80).reshape(4, 20)),
        ("astype", [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], np.linspace(-3, 3, 80).reshape(4, 20)),
        ("cast_value", [zc.CastValue(data_type="uint8", out_of_range="clamp")],
         np.linspace(-20, 300, 80, dtype="float32").reshape(4, 20)),
        ("packbits", [{"name": "numcodecs.packbits"}], (np.arange(80) % 3 == 0).reshape(4, 20)),
    ]


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("case", [c[0] for c in _filter_cases()])
def test_filters_are_written_as_zarr_python_writes_them(tmp_url, case, sharded):
    _, filters, data = next(c for c in _filter_cases() if c[0] == case)
    import pathlib

    url = tmp_url()
    layout = {"shards": (4, 10), "chunks": (2, 5)} if sharded else {"chunks": (3, 7)}
    # shards laid out as zarr-python lays them out (its default subchunk_write_order)
    a = zarrflow.create(url, shape=data.shape, dtype=data.dtype, filters=filters, codec="none",
                        inner_chunk_order="morton", **layout)
    a[...] = data
    z = zarr.open_array(url, mode="r")
    # zarr-python reads what zarrflow reads (lossy filters included)
    assert np.array_equal(z[...], a[...], equal_nan=data.dtype.kind == "f")
    if case in ("delta", "delta_astype", "scale_offset", "packbits"):
        assert np.array_equal(a[...], data)
    # zarr-python, given the same filters (as the codec objects zarrflow wrote), layout and
    # values, stores the same chunk (and shard) bytes
    url2 = tmp_url()
    z2 = zarr.create_array(url2, shape=data.shape, dtype=data.dtype, filters=z.filters, compressors=None, **layout)
    z2[...] = data
    ours = sorted(p.relative_to(url) for p in pathlib.Path(url, "c").rglob("*") if p.is_file())
    theirs = sorted(p.relative_to(url2) for p in pathlib.Path(url2, "c").rglob("*") if p.is_file())
    assert ours == theirs and ours
    for rel in ours:
        assert pathlib.Path(url, rel).read_bytes() == pathlib.Path(url2, rel).read_bytes(), rel


@pytest.mark.parametrize("order", ["morton", "lexicographic", None])
def test_inner_chunk_order_gives_zarr_pythons_or_tensorstores_shard_bytes(tmp_url, order):
    import pathlib

    data = values_of("uint16", (12, 10, 6))
    data[:4, :5] = 0  # whole inner chunks of the fill value: not stored
    layout = {"shards": (12, 10, 6), "chunks": (4, 5, 2)}  # 3 x 2 x 3 inner chunks
    options = {} if order is None else {"inner_chunk_order": order}
    url = tmp_url()
    a = zarrflow.create(url, shape=data.shape, dtype="uint16", codec="zstd:0", **layout, **options)
    a[...] = data
    a[1:7, 3:9, 1:4] = data[1:7, 3:9, 1:4] + 1  # a partial rewrite of the shard
    ours = pathlib.Path(url, "c/0/0/0").read_bytes()
    url2 = tmp_url()
    if order == "morton":
        z = zarr.create_array(url2, shape=data.shape, dtype="uint16", fill_value=0,
                              compressors=zarr.codecs.ZstdCodec(level=0), **layout)
        z[...] = data
        z[1:7, 3:9, 1:4] = data[1:7, 3:9, 1:4] + 1
    else:
        pathlib.Path(url2).mkdir(parents=True, exist_ok=True)
        pathlib.Path(url2, "zarr.json").write_bytes(pathlib.Path(url, "zarr.json").read_bytes())
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": url2}}).result()
        t[...] = data
        t[1:7, 3:9, 1:4] = data[1:7, 3:9, 1:4] + 1
    assert ours == pathlib.Path(url2, "c/0/0/0").read_bytes()
    expected = data.copy()
    expected[1:7, 3:9, 1:4] += 1
    assert np.array_equal(zarrflow.open(url)[...], expected)


def test_an_unknown_inner_chunk_order_is_a_value_error(tmp_url):
    with pytest.raises(ValueError, match="morton"):
        zarrflow.create(tmp_url(), shape=(4,), dtype="int8", chunks=(2,), shards=(4,),
                        inner_chunk_order="hilbert")


def _bad_filters():
    import numcodecs
    import zarr.codecs as zc

    return [
        [object()],
        [{"configuration": {}}],
        [{"name": "numcodecs.nope"}],
        [{"name": "numcodecs.delta", "configuration": {"dtype": "<i8"}}],
        "delta",
        # compressors and serializers are no filters (zarr-python refuses them too)
        [numcodecs.Zlib(level=1)],
        [zc.GzipCodec()],
        [numcodecs.Shuffle(elementsize=4)],
        [zc.BytesCodec()],
    ]


@pytest.mark.parametrize("index", range(9))
def test_bad_filters_are_value_errors(tmp_url, index):
    with pytest.raises(ValueError):
        zarrflow.create(tmp_url(), shape=(5,), dtype="int32", filters=_bad_filters()[index])


def test_one_filter_nan_and_numpy_scalars_are_taken_as_zarr_python_writes_them(tmp_url):
    import numcodecs
    import zarr.codecs as zc

    url = tmp_url()
    data = np.array([np.nan, 1.5, 300.0, -2.0], dtype="float32")
    a = zarrflow.create(url, shape=(4,), dtype="float32", chunks=(2,), codec="none",
                        filters=zc.CastValue(data_type="uint8", out_of_range="clamp",
                                             scalar_map={"encode": [[np.nan, 0]], "decode": [[0, np.nan]]}))
    a[...] = data
    want = np.array([np.nan, 2.0, 255.0, np.nan], dtype="float32")
    assert np.array_equal(a[...], want, equal_nan=True)
    assert np.array_equal(zarr.open_array(url, mode="r")[...], want, equal_nan=True)
    b = zarrflow.create(tmp_url(), shape=(4,), dtype="float64", chunks=(2,),
                        filters=[numcodecs.FixedScaleOffset(offset=np.float64(1.5), scale=np.int64(10), dtype="<f8",
                                                            astype="<i4")])
    b[...] = [1.5, 2.0, 2.5, 3.0]
    assert np.array_equal(b[...], [1.5, 2.0, 2.5, 3.0])


@pytest.mark.parametrize("codec", ["lz4:0", "lz4:1:2", "zlib:10", "bz2:0", "lzma:10", "brotli"])
def test_unknown_codecs_and_levels_are_value_errors(tmp_url, codec):
    with pytest.raises(ValueError, match="codec"):
        zarrflow.create(tmp_url(), shape=(5,), dtype="uint8", codec=codec)


def test_zarr_python_writes_are_read_by_zarrflow_and_the_other_way(tmp_url):
    url = tmp_url()
    z = zarr.create_array(url, shape=(20, 20), dtype="int64", chunks=(5, 5), shards=(10, 10))
    z[...] = np.arange(400).reshape(20, 20)
    a = zarrflow.open(url, mode="r+")
    assert np.array_equal(a[...], np.arange(400).reshape(20, 20))
    a[3:17, 4] = -1
    ref = np.arange(400).reshape(20, 20)
    ref[3:17, 4] = -1
    assert np.array_equal(zarr.open_array(url, mode="r")[...], ref)


def test_batch_commits_on_exit_and_writes_nothing_on_an_exception(tmp_url):
    url = tmp_url()
    a = zarrflow.create(url, shape=(64,), dtype="uint8", shards=(32,), chunks=(8,))
    with a.batch() as b:
        for i in range(64):
            b[i] = i
        b.oindex[[0, 1]] = 200
        b.vindex[[2]] = 201
        assert len(b) == 66
        assert not a[...].any()  # nothing written before the commit
    ref = np.arange(64, dtype=np.uint8)
    ref[[0, 1]] = 200
    ref[2] = 201
    assert np.array_equal(zarr.open_array(url, mode="r")[:], ref)
    with pytest.raises(RuntimeError):
        with a.batch() as b:
            b[:] = 0
            raise RuntimeError("abandon")
    assert np.array_equal(a[:], ref)
    b = a.batch()
    b.commit()
    with pytest.raises(ValueError):
        b.commit()


def test_open_modes(tmp_url):
    url = tmp_url()
    with pytest.raises(FileNotFoundError):
        zarrflow.open(url, mode="r+")
    g = zarrflow.open(url, mode="a")  # creates an empty group
    assert isinstance(g, zarrflow.Group) and g.keys() == []
    a = zarrflow.open(url + "/arr", mode="w", shape=(4,), dtype="int8")
    a[:] = 3
    assert zarrflow.open(url).keys() == ["arr"]
    assert isinstance(zarrflow.open(url)["arr"], zarrflow.Array)
    assert zarrflow.open(url + "/arr", mode="a", shape=(4,), dtype="int8")[0] == 3  # exists: opened
    g = zarrflow.open(url, mode="w")  # replaces the hierarchy by an empty group
    assert g.keys() == []


@pytest.mark.parametrize(
    "dtype,value",
    [
        ("uint8", 300),
        ("uint8", -1),
        ("int8", np.array([1, 200])),
        ("int32", 1.5),
        ("int32", np.array([1.0, np.nan])),
        ("int8", 128.0),
        ("float32", 1e300),
        ("float64", 1j),
        ("bool", 1),
        ("uint16", "x"),
    ],
)
def test_values_that_cannot_be_written_exactly_are_value_errors(tmp_url, dtype, value):
    a = zarrflow.create(tmp_url(), shape=(2,), dtype=dtype)
    with pytest.raises(ValueError):
        a[:] = value
    assert not np.asarray(a[:]).any()


def test_values_that_fit_are_cast(tmp_url):
    a = zarrflow.create(tmp_url(), shape=(3,), dtype="uint8")
    a[:] = np.array([1, 2, 255], dtype=np.int64)
    a[1] = 2.0  # a whole float is the integer it is
    b = zarrflow.create(tmp_url(), shape=(2,), dtype="float32")
    b[:] = [0.5, 2]
    c = zarrflow.create(tmp_url(), shape=(2,), dtype="complex64", fill_value=1 + 2j)
    assert c.fill_value == np.complex64(1 + 2j)
    assert list(a[:]) == [1, 2, 255] and list(b[:]) == [0.5, 2.0] and list(c[:]) == [1 + 2j] * 2


@pytest.mark.parametrize("n", [1, 2, 8])
def test_local_write_concurrency_is_an_option_and_writes_every_shard(tmp_url, n):
    url = tmp_url()
    zarrflow.create(url, shape=(64, 8), dtype="int32", shards=(8, 8), chunks=(4, 4))
    a = zarrflow.open(url, mode="r+", local_write_concurrency=n)
    values = np.arange(64 * 8, dtype=np.int32).reshape(64, 8)
    a[...] = values
    assert np.array_equal(zarr.open_array(url, mode="r")[:], values)
    assert np.array_equal(tensorstore_read(url), values)


@pytest.mark.parametrize("sharded", [True, False], ids=["sharded", "unsharded"])
def test_blosc_after_filters_takes_the_type_the_filters_make_as_zarr_python(tmp_url, sharded):
    import pathlib

    import zarr.codecs as zc

    data = (np.arange(240, dtype="float32").reshape(12, 20) % 97) * 1.25
    filters = [zc.CastValue(data_type="uint8", rounding="nearest-even", out_of_range="clamp")]
    layout = {"shards": (12, 20), "chunks": (6, 10)} if sharded else {"chunks": (6, 10)}
    url = tmp_url()
    a = zarrflow.create(url, shape=data.shape, dtype="float32", filters=filters, codec="blosc",
                        inner_chunk_order="morton", **layout)
    a[...] = data
    z = zarr.open_array(url, mode="r")
    blosc = next(c for c in z.compressors)
    # typesize 1 and bit shuffle: the uint8 elements blosc sees, as zarr-python sets them
    assert (blosc.typesize, str(getattr(blosc.shuffle, "value", blosc.shuffle))) == (1, "bitshuffle")
    url2 = tmp_url()
    z2 = zarr.create_array(url2, shape=data.shape, dtype="float32", filters=filters,
                           compressors=zc.BloscCodec(cname="zstd", clevel=5), **layout)
    z2[...] = data
    assert (z2.compressors[0].typesize, z2.compressors[0].shuffle) == (1, blosc.shuffle)
    ours = sorted(p.relative_to(url) for p in pathlib.Path(url, "c").rglob("*") if p.is_file())
    theirs = sorted(p.relative_to(url2) for p in pathlib.Path(url2, "c").rglob("*") if p.is_file())
    assert ours == theirs and ours
    for rel in ours:
        assert pathlib.Path(url, rel).read_bytes() == pathlib.Path(url2, rel).read_bytes(), rel
    assert np.array_equal(z2[...], a[...])


_ZARR_PYTHON_COMPRESSORS = {
    "zstd:3": lambda: zarr.codecs.ZstdCodec(level=3),
    "gzip:5": lambda: zarr.codecs.GzipCodec(level=5),
    "zlib:4": lambda: zarr.codecs.numcodecs.Zlib(level=4),
    "bz2:6": lambda: zarr.codecs.numcodecs.BZ2(level=6),
    "lzma:6": lambda: zarr.codecs.numcodecs.LZMA(preset=6),
    "lz4:1": lambda: zarr.codecs.numcodecs.LZ4(acceleration=1),
    "lz4:9": lambda: zarr.codecs.numcodecs.LZ4(acceleration=9),
    "blosc:lz4:5": lambda: zarr.codecs.BloscCodec(cname="lz4", clevel=5),
    "blosc:zstd:3": lambda: zarr.codecs.BloscCodec(cname="zstd", clevel=3),
}


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("codec", sorted(_ZARR_PYTHON_COMPRESSORS))
def test_compressed_chunks_are_the_bytes_zarr_python_stores(tmp_url, codec, sharded):
    """zarrflow's compressors give zarr-python's chunk bytes (deflate through stock zlib, as
    this CPython's zlib, which is stock zlib, not zlib-ng; lz4 blocks by liblz4 at the acceleration given, as numcodecs). gzip: the
    same but for the header's time stamp, which zarr-python sets to the time of the write and
    zarrflow to 0."""
    import pathlib

    data = (np.random.default_rng(1).standard_normal((40, 50)) * 100).astype("<i4")
    data[:20, :25] = 0  # a chunk of the fill value: not stored
    layout = {"shards": (40, 50), "chunks": (20, 25)} if sharded else {"chunks": (20, 25)}
    url, url2 = tmp_url(), tmp_url()
    a = zarrflow.create(url, shape=data.shape, dtype="int32", codec=codec,
                        inner_chunk_order="morton", **layout)
    a[...] = data
    z = zarr.create_array(url2, shape=data.shape, dtype="int32", fill_value=0,
                          compressors=_ZARR_PYTHON_COMPRESSORS[codec](), **layout)
    z[...] = data
    ours = sorted(p.relative_to(url) for p in pathlib.Path(url, "c").rglob("*") if p.is_file())
    theirs = sorted(p.relative_to(url2) for p in pathlib.Path(url2, "c").rglob("*") if p.is_file())
    assert ours == theirs and ours
    def without_gzip_times(chunk: bytes) -> bytes:
        assert chunk[:2] == b"\x1f\x8b"
        return chunk[:4] + chunk[8:]

    for rel in ours:
        mine, zp = pathlib.Path(url, rel).read_bytes(), pathlib.Path(url2, rel).read_bytes()
        if codec.startswith("gzip"):
            if sharded:
                # the same layout, each inner chunk a gzip stream of its own: compare them
                # through the index (16 bytes an inner chunk and a crc32c, at the end)
                n = 4
                index = np.frombuffer(mine[-(16 * n + 4):-4], dtype="<u8").reshape(n, 2)
                assert np.array_equal(index, np.frombuffer(zp[-(16 * n + 4):-4], dtype="<u8").reshape(n, 2))
                stored = [(int(o), int(k)) for o, k in index if o != 2**64 - 1]
                assert len(stored) == 3
                for o, k in stored:
                    assert mine[o + 4:o + 8] == b"\0\0\0\0"
                    assert without_gzip_times(mine[o:o + k]) == without_gzip_times(zp[o:o + k])
                continue
            assert mine[4:8] == b"\0\0\0\0"
            mine, zp = without_gzip_times(mine), without_gzip_times(zp)
        assert mine == zp, rel


@pytest.mark.parametrize("case", ["plain", "sharded", "named", "group"])
def test_zarr_json_is_the_text_zarr_python_writes(tmp_url, case):
    """zarr.json's fields in zarr-python's order and layout: the same bytes for the same node."""
    import pathlib

    url, url2 = tmp_url(), tmp_url()
    if case == "group":
        zarrflow.open(url, mode="w")
        zarr.open_group(url2, mode="w")
    else:
        kw = {"shape": (10, 20), "dtype": "int16", "chunks": (5, 10)}
        if case == "sharded":
            kw.update(shards=(10, 20), fill_value=3)
        if case == "named":
            kw.update(dimension_names=("y", "x"), attributes={"units": "m", "n": [1, 2]})
        zarrflow.create(url, **kw)
        zarr.create_array(url2, **kw)
    assert pathlib.Path(url, "zarr.json").read_bytes() == pathlib.Path(url2, "zarr.json").read_bytes()


def test_colexicographic_order_gives_zarr_pythons_colexicographic_shards(tmp_url):
    """zarr-python writes F-order shards when its sharding codec is given
    subchunk_write_order="colexicographic"; zarrflow's inner_chunk_order="colexicographic"
    stores the same bytes, after a whole write and a partial rewrite."""
    import pathlib

    from zarr.codecs import BytesCodec, ShardingCodec, ZstdCodec

    data = values_of("int32", (12, 10, 6))
    data[:4, :5] = 0
    url, url2 = tmp_url(), tmp_url()
    a = zarrflow.create(url, shape=data.shape, dtype="int32", codec="zstd:0", shards=(12, 10, 6),
                        chunks=(4, 5, 2), inner_chunk_order="colexicographic")
    sharding = ShardingCodec(chunk_shape=(4, 5, 2), codecs=[BytesCodec(), ZstdCodec(level=0)],
                             subchunk_write_order="colexicographic")
    z = zarr.create_array(url2, shape=data.shape, dtype="int32", chunks=(12, 10, 6),
                          serializer=sharding, compressors=None, fill_value=0)
    for target in (a, z):
        target[...] = data
        target[1:7, 3:9, 1:4] = data[1:7, 3:9, 1:4] // 2
    ours = pathlib.Path(url, "c/0/0/0").read_bytes()
    assert ours == pathlib.Path(url2, "c/0/0/0").read_bytes()
    # and it is not the Morton or C layout of the same values
    url3 = tmp_url()
    m = zarrflow.create(url3, shape=data.shape, dtype="int32", codec="zstd:0", shards=(12, 10, 6),
                        chunks=(4, 5, 2), inner_chunk_order="morton")
    m[...] = a[...]
    assert pathlib.Path(url3, "c/0/0/0").read_bytes() != ours
