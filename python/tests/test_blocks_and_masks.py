"""zarr-python's block and mask selections: ``a.blocks[...]``, ``get_block_selection`` /
``set_block_selection`` (blocks are the shards when sharded, else the chunks) and
``get_mask_selection`` / ``set_mask_selection``, checked against zarr-python 3.4.2 on the
same stored array, with ``out=``, in a batch, on a rectilinear grid, and refused with
``IndexError`` where zarr-python refuses them (but for a dimension of zero extent, whose
block slices select nothing here, where zarr-python refuses every selection)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
import zarr.storage

import zarrflow

SHAPE = (10, 7)

BLOCK_KEYS = [
    1,
    -1,
    (1, 2),
    (slice(None), -1),
    slice(2, 1),
    slice(1, None),
    slice(-2, None),
    slice(0, 100),
    (Ellipsis, 2),
    (1, Ellipsis, 2),
    Ellipsis,
    (),
    np.int64(1),
    (np.uint8(2), slice(np.int64(1), None)),
]


@pytest.fixture(params=["sharded", "chunked"])
def pair(request, tmp_path):
    """The same values through zarr-python (which wrote them) and zarrflow."""
    path = tmp_path / "a.zarr"
    layout = {"chunks": (2, 3), "shards": (4, 3)} if request.param == "sharded" else {"chunks": (4, 3)}
    z = zarr.create_array(zarr.storage.LocalStore(path), shape=SHAPE, dtype="int32", **layout)
    z[...] = np.arange(70, dtype=np.int32).reshape(SHAPE)
    return z, zarrflow.open(str(path), mode="r+")


@pytest.mark.parametrize("key", BLOCK_KEYS, ids=repr)
def test_blocks_read_what_zarr_python_reads(pair, key):
    z, a = pair
    want = z.blocks[key]
    for got in (a.blocks[key], a.get_block_selection(key)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    out = np.full(want.shape, -7, dtype=np.int32)
    assert a.get_block_selection(key, out=out) is out
    np.testing.assert_array_equal(out, want)


REFUSED_BLOCK_KEYS = [
    slice(None, None, 2), slice(None, None, -1), 5, -4, [0, 1], np.array([0]), None, 1.0, True,
    (Ellipsis, Ellipsis), (0, 0, 0), slice(3, None), slice(3, 3), slice(-4, None),
    (0, slice(np.int64(7), None)),
]


@pytest.mark.parametrize(
    "key,error",
    [(key, IndexError) for key in REFUSED_BLOCK_KEYS]
    # a slice of non-integers: TypeError, as in zarr-python and NumPy
    + [(slice(1.0, None), TypeError), (slice(0, 2.5), TypeError)],
    ids=repr,
)
def test_blocks_refuse_what_zarr_python_refuses(pair, key, error):
    z, a = pair
    with pytest.raises(error):
        z.blocks[key]
    with pytest.raises(error):
        a.blocks[key]
    with pytest.raises(error):
        a.blocks[key] = 0


def test_block_writes_land_where_zarr_python_reads_them(pair):
    z, a = pair
    a.blocks[0] = 5
    np.testing.assert_array_equal(z.blocks[0], 5)
    a.set_block_selection((1, 1), np.full(z.blocks[1, 1].shape, 9, dtype=np.int32))
    np.testing.assert_array_equal(z.blocks[1, 1], 9)
    last = np.arange(z.blocks[-1, :].size, dtype=np.int32).reshape(z.blocks[-1, :].shape)
    a.blocks[-1, :] = last
    np.testing.assert_array_equal(z.blocks[-1, :], last)
    with a.batch() as b:
        b.blocks[1, 2] = 11
        b.blocks[:, 0] = 3
    np.testing.assert_array_equal(z.blocks[1, 2], 11)
    np.testing.assert_array_equal(z.blocks[:, 0], 3)
    expected = np.asarray(z[...])
    np.testing.assert_array_equal(a[...], expected)


def test_masks_read_and_write_what_zarr_python_does(pair):
    z, a = pair
    rng = np.random.default_rng(5)
    mask = rng.random(SHAPE) < 0.3
    want = z.get_mask_selection(mask)
    for key in (mask, (mask,), mask.tolist()):
        np.testing.assert_array_equal(a.get_mask_selection(key), want)
    out = np.empty(want.shape, dtype=np.int32)
    assert a.get_mask_selection(mask, out=out) is out
    np.testing.assert_array_equal(out, want)
    assert a.get_mask_selection(np.zeros(SHAPE, bool)).shape == (0,)

    a.set_mask_selection(mask, -1)
    np.testing.assert_array_equal(z.get_mask_selection(mask), -1)
    values = np.arange(mask.sum(), dtype=np.int32) + 100
    a.set_mask_selection(mask, values)
    np.testing.assert_array_equal(z.get_mask_selection(mask), values)
    np.testing.assert_array_equal(np.asarray(z[...])[~mask], np.arange(70).reshape(SHAPE)[~mask])
    with pytest.raises(ValueError):
        a.set_mask_selection(mask, values[:-1])  # one value per true element, or one value


@pytest.mark.parametrize(
    "bad",
    [np.zeros((5, 7), bool), np.zeros(SHAPE, int), (np.zeros(SHAPE, bool),) * 2, 3, [True, False]],
    ids=["short", "ints", "two", "int", "list"],
)
def test_masks_refuse_what_zarr_python_refuses(pair, bad):
    z, a = pair
    with pytest.raises(IndexError):
        z.get_mask_selection(bad)
    with pytest.raises(IndexError):
        a.get_mask_selection(bad)
    with pytest.raises(IndexError):
        a.set_mask_selection(bad, 0)


def test_edge_blocks_are_clipped_and_empty_dimensions_have_none():
    a = zarrflow.create("memory://py-blocks/clip", shape=(10,), dtype="int32", chunks=(3,))
    a[...] = np.arange(10, dtype=np.int32)
    np.testing.assert_array_equal(a.blocks[-1], [9])
    np.testing.assert_array_equal(a.blocks[1:3], np.arange(3, 9))
    e = zarrflow.create("memory://py-blocks/empty", shape=(0, 4), dtype="int32", chunks=(2, 2))
    assert e.blocks[:].shape == (0, 4)
    assert e.blocks[:, 1].shape == (0, 2)
    with pytest.raises(IndexError):
        e.blocks[0]
    s = zarrflow.create("memory://py-blocks/0d", shape=(), dtype="int32", fill_value=3)
    for got in (s.blocks[()], s.blocks[...], s.get_block_selection(())):
        # an array, as zarr-python returns it (a basic selection would give the value)
        assert isinstance(got, np.ndarray) and got.shape == () and got[()] == 3
    out = np.zeros((), dtype=np.int32)
    assert s.get_block_selection((), out=out) is out and out[()] == 3
    with pytest.raises(IndexError):
        s.get_mask_selection(np.array(True))
    # block coordinates far out on a huge grid: element bounds computed, nothing expanded
    big = zarrflow.create("memory://py-blocks/big", shape=(2**62,), dtype="uint8", chunks=(2**40,))
    assert big._block_key((-1, ...)) == (slice(2**62 - 2**40, 2**62), Ellipsis)
    assert big._block_key(slice(-3, None)) == (slice(2**62 - 3 * 2**40, 2**62), Ellipsis)


def test_blocks_of_a_rectilinear_grid_follow_its_edges(tmp_path):
    path = tmp_path / "r.zarr"
    path.mkdir()
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10, 6],
        "data_type": "int16",
        "chunk_grid": {
            "name": "rectilinear",
            "configuration": {"kind": "inline", "chunk_shapes": [[1, 4, 5], 2]},
        },
        "chunk_key_encoding": {"name": "default"},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }
    (path / "zarr.json").write_text(json.dumps(meta))
    a = zarrflow.open(str(path), mode="r+")
    ref = np.arange(60, dtype=np.int16).reshape(10, 6)
    a[...] = ref
    np.testing.assert_array_equal(a.blocks[0], ref[0:1])
    np.testing.assert_array_equal(a.blocks[1, 2], ref[1:5, 4:6])
    np.testing.assert_array_equal(a.blocks[-1], ref[5:10])
    np.testing.assert_array_equal(a.blocks[1:], ref[1:10])
    a.blocks[2, 0] = -1
    ref[5:10, 0:2] = -1
    np.testing.assert_array_equal(a[...], ref)
    with pytest.raises(IndexError):
        a.blocks[3]


GETTERS = [
    ("get_basic_selection", (1,)),
    ("get_orthogonal_selection", (([0, 2], slice(None)),)),
    ("get_coordinate_selection", (([0, 2], [1, 3]),)),
    ("get_block_selection", (1,)),
    ("get_mask_selection", (np.eye(*SHAPE, dtype=bool),)),
]
SETTERS = [
    ("set_basic_selection", (1, 4)),
    ("set_orthogonal_selection", (([0, 2], slice(None)), 4)),
    ("set_coordinate_selection", (([0, 2], [1, 3]), 4)),
    ("set_block_selection", (1, 4)),
    ("set_mask_selection", (np.eye(*SHAPE, dtype=bool), 4)),
]


@pytest.mark.parametrize("name,args", GETTERS + SETTERS, ids=[g[0] for g in GETTERS + SETTERS])
def test_fields_and_prototype_keywords_as_zarr_python_takes_them(pair, name, args):
    """zarr-python's ``fields=`` / ``prototype=``: no fields (``IndexError``, as zarr-python
    says of an array without them), zarr's CPU buffer prototype taken, another refused."""
    from zarr.core.buffer import default_buffer_prototype

    z, a = pair
    prototype = default_buffer_prototype()
    got = getattr(a, name)(*args, fields=None, prototype=prototype)
    want = getattr(z, name)(*args, fields=None, prototype=prototype)
    if name.startswith("get"):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(a[...], np.asarray(z[...]))
    for fields in ("f0", ["f0", "f1"], 0, np.array(["f0"])):
        with pytest.raises(IndexError):
            getattr(z, name)(*args, fields=fields)
        with pytest.raises(IndexError):
            getattr(a, name)(*args, fields=fields)

    class GpuLike:
        nd_buffer = type("NDBuffer", (), {"__module__": "zarr.core.buffer.gpu"})

    with pytest.raises(zarrflow.InvalidValueError):
        getattr(a, name)(*args, prototype=GpuLike())
