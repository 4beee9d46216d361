"""Reading into a caller's array (``out=``) and zarr-python's selection methods:
``read(out=)``, ``get_basic_selection`` / ``get_orthogonal_selection`` /
``get_coordinate_selection`` (with and without ``out``) and the ``set_*`` methods, against
NumPy and the indexing forms they name; ``out`` is checked before anything is read."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import zarrflow

SHAPE = (23, 17, 9)


@pytest.fixture(scope="module")
def pair():
    ref = np.arange(np.prod(SHAPE), dtype=np.int32).reshape(SHAPE) * 7 - 1000
    a = zarrflow.create(
        "memory://py-read-into/a", shape=SHAPE, dtype="int32", shards=(8, 6, 9), chunks=(4, 3, 3)
    )
    a[...] = ref
    return a, ref


BASIC = [
    np.s_[...],
    np.s_[5],
    np.s_[3, -2, 4],
    np.s_[::2],
    np.s_[-3:2:-4, ::5],
    np.s_[1:20:7, ..., ::-2],
    np.s_[np.int64(4), np.uint8(2)],
    np.s_[5:3],
]


@pytest.mark.parametrize("key", BASIC, ids=repr)
def test_basic_selection_reads_into_out_what_numpy_selects(pair, key):
    a, ref = pair
    want = ref[key]
    np.testing.assert_array_equal(a.get_basic_selection(key), want)
    out = np.full(np.shape(want), 12345, dtype=np.int32)
    got = a.get_basic_selection(key, out=out)
    if out.ndim == 0:
        assert got == want and not isinstance(got, np.ndarray), "a value, as without out"
    else:
        assert got is out
    np.testing.assert_array_equal(out, want)


def test_read_into_reuses_one_array_across_calls_and_writes():
    ref = np.arange(np.prod(SHAPE), dtype=np.uint16).reshape(SHAPE)
    a = zarrflow.create(
        "memory://py-read-into/reuse", shape=SHAPE, dtype="uint16", shards=(8, 6, 9), chunks=(4, 3, 3)
    )
    out = np.empty(SHAPE, dtype=np.uint16)
    for step in range(3):
        a[...] = ref + step
        assert a.read(out=out) is out
        np.testing.assert_array_equal(out, ref + step)
    # chunks never written read as the fill value, also into an array holding other values
    b = zarrflow.create(
        "memory://py-read-into/fill", shape=(10,), dtype="float64", chunks=(4,), fill_value=2.5
    )
    b[0:4] = np.arange(4.0)
    out = np.full(10, np.nan)
    b.read(out=out)
    np.testing.assert_array_equal(out, [0, 1, 2, 3] + [2.5] * 6)


def test_orthogonal_and_coordinate_selections_match_oindex_and_vindex(pair):
    a, ref = pair
    okey = ([0, 22, 5], slice(None, None, 4), [8, 0])
    want = ref[np.ix_([0, 22, 5], range(0, 17, 4), [8, 0])]
    np.testing.assert_array_equal(a.get_orthogonal_selection(okey), want)
    np.testing.assert_array_equal(a.oindex[okey], want)
    out = np.zeros(want.shape, dtype=np.int32)
    assert a.get_orthogonal_selection(okey, out=out) is out
    np.testing.assert_array_equal(out, want)

    vkey = (np.array([[1, 2], [22, 0]]), np.array([[3, 16], [0, 5]]), np.array([[8, 0], [4, 4]]))
    want = ref[vkey]
    np.testing.assert_array_equal(a.get_coordinate_selection(vkey), want)
    out = np.zeros((2, 2), dtype=np.int32)
    assert a.get_coordinate_selection(vkey, out=out) is out
    np.testing.assert_array_equal(out, want)
    # zarr-python's form: a flat out of as many values, returned reshaped (a view of it)
    flat = np.zeros(4, dtype=np.int32)
    got = a.get_coordinate_selection(vkey, out=flat)
    np.testing.assert_array_equal(got, want)
    assert got.shape == (2, 2) and np.shares_memory(got, flat)
    np.testing.assert_array_equal(flat, want.reshape(-1))
    with pytest.raises(zarrflow.InvalidValueError, match="shape"):
        a.get_coordinate_selection(vkey, out=np.zeros(5, dtype=np.int32))
    # one point (integers alone): an array of one value, as zarr-python returns it
    got = a.get_coordinate_selection((3, -2, 4))
    assert isinstance(got, np.ndarray) and got.shape == (1,) and got[0] == ref[3, -2, 4]
    one = np.zeros(1, dtype=np.int32)
    got = a.get_coordinate_selection((3, -2, 4), out=one)
    assert got.shape == (1,) and np.shares_memory(got, one) and one[0] == ref[3, -2, 4]
    assert np.ndim(a.vindex[3, -2, 4]) == 0, "vindex keeps NumPy's scalar"


def test_set_selection_methods_write_as_their_indexing_forms():
    ref = np.zeros((12, 10), dtype=np.int64)
    a = zarrflow.create("memory://py-read-into/set", shape=ref.shape, dtype="int64", chunks=(5, 4))
    a.set_basic_selection(np.s_[1:7:2, ::3], 5)
    ref[1:7:2, ::3] = 5
    a.set_orthogonal_selection(([0, 11], [2, 9]), np.array([[1, 2], [3, 4]]))
    ref[np.ix_([0, 11], [2, 9])] = [[1, 2], [3, 4]]
    a.set_coordinate_selection(([4, 10, 3], [1, 1, 8]), [7, 8, 9])
    ref[[4, 10, 3], [1, 1, 8]] = [7, 8, 9]
    np.testing.assert_array_equal(a[...], ref)


@pytest.mark.parametrize(
    "key",
    [np.s_[[0, 1]], np.s_[0, [1, 2]], np.s_[np.array([1, 2])], np.s_[None], np.s_[True], np.s_[0.5]],
    ids=repr,
)
def test_basic_selection_refuses_what_is_not_basic(pair, key):
    a, ref = pair
    with pytest.raises(IndexError, match="basic indexing"):
        a.get_basic_selection(key)
    with pytest.raises(IndexError, match="basic indexing"):
        a.get_basic_selection(key, out=np.empty(SHAPE, dtype=np.int32))
    with pytest.raises(IndexError, match="basic indexing"):
        a.set_basic_selection(key, 0)
    np.testing.assert_array_equal(a[...], ref)


def test_a_bad_out_is_refused_before_anything_is_read(pair):
    a, _ = pair
    sentinel = 424242
    cases = [
        (np.full((23, 17, 8), sentinel, dtype=np.int32), "shape"),
        (np.full((9, 17, 23), sentinel, dtype=np.int32), "shape"),
        (np.full(23 * 17 * 9, sentinel, dtype=np.int32), "shape"),  # flat: vindex only
        (np.full(SHAPE, sentinel, dtype=np.int64), "dtype"),
        (np.full(SHAPE, sentinel, dtype=">i4"), "dtype"),
        (np.full((9, 17, 23), sentinel, dtype=np.int32).T, "C-contiguous"),
        (np.full((23, 17, 18), sentinel, dtype=np.int32)[:, :, ::2], "C-contiguous"),
    ]
    frozen = np.full(SHAPE, sentinel, dtype=np.int32)
    frozen.flags.writeable = False
    cases.append((frozen, "read-only"))
    for out, words in cases:
        with pytest.raises(zarrflow.InvalidValueError, match=words):
            a.read(out=out)
        assert (np.asarray(out) == sentinel).all(), "nothing read into a refused out"
    for out in ([[0] * 9] * 17, memoryview(bytearray(4 * 23 * 17 * 9))):
        with pytest.raises(zarrflow.InvalidValueError, match="numpy.ndarray"):
            a.read(out=out)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_subclasses_of_ndarray_are_read_into_in_place(pair, tmp_path):
    a, ref = pair
    mm = np.memmap(tmp_path / "out.bin", dtype=np.int32, mode="w+", shape=SHAPE)
    assert a.read(out=mm) is mm
    mm.flush()
    np.testing.assert_array_equal(np.fromfile(tmp_path / "out.bin", dtype=np.int32), ref.ravel())
    # np.matrix reshapes to two dimensions; it is read into as the ndarray it is
    m = np.asmatrix(np.zeros((23, 17 * 9), dtype=np.int32))
    got = zarrflow_2d(a).get_basic_selection(np.s_[...], out=m)
    assert got is m
    np.testing.assert_array_equal(np.asarray(m), ref.reshape(23, -1))


def zarrflow_2d(a):
    b = zarrflow.create(
        "memory://py-read-into/two-d", shape=(23, 17 * 9), dtype="int32", chunks=(5, 20)
    )
    b[...] = a[...].reshape(23, -1)
    return b


def test_an_out_being_read_into_cannot_be_used_by_another_call_at_once():
    # While a thread reads into `out` (and into `bools`), the main thread passes the same
    # memory as values to write, as another out, and as a boolean mask: each such call
    # that overlaps a read is an InvalidValueError, never a panic (InternalError).
    rng = np.random.default_rng(0)
    a = zarrflow.create("memory://py-read-into/busy", shape=(4096, 1024), dtype="uint8",
                        chunks=(64, 1024), codec="zstd")
    a[...] = rng.integers(0, 255, (4096, 1024), dtype=np.uint8)
    b = zarrflow.create("memory://py-read-into/busy-bool", shape=(4096, 4096), dtype="bool",
                        chunks=(64, 4096), codec="zstd")
    b[...] = rng.integers(0, 2, (4096, 4096)).astype(bool)
    out = np.zeros((4096, 1024), dtype=np.uint8)
    bools = np.zeros((4096, 4096), dtype=bool)
    errors, done = [], threading.Event()

    def reader():
        try:
            for _ in range(30):
                for array, into in ((a, out), (b, bools)):
                    try:
                        array.read(out=into)
                    except zarrflow.InvalidValueError as e:  # the main thread's turn
                        assert "in use by another zarrflow call" in str(e), e
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)
        finally:
            done.set()

    t = threading.Thread(target=reader)
    t.start()
    conflicts = set()
    uses = {
        "values": lambda: a.__setitem__(np.s_[0:1], out[0:1]),
        "out": lambda: a.read(out=out),
        "mask": lambda: a[bools[0], 0],
    }
    deadline = time.monotonic() + 60
    while not done.is_set() and time.monotonic() < deadline:
        for name, use in uses.items():
            try:
                use()
            except zarrflow.InvalidValueError as e:
                assert "in use by another zarrflow call" in str(e), e
                conflicts.add(name)
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)
    t.join()
    assert errors == [], errors[:3]
    assert conflicts, "no call overlapped the reads: the test proved nothing"


def test_a_zarr_ndbuffer_is_read_into_as_the_array_it_wraps(pair):
    buffer = pytest.importorskip("zarr.core.buffer.cpu")
    a, ref = pair
    nd = buffer.NDBuffer.from_numpy_array(np.zeros((4, 17, 9), dtype=np.int32))
    got = a.get_basic_selection(np.s_[2:6], out=nd)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, ref[2:6])
    np.testing.assert_array_equal(nd.as_numpy_array(), ref[2:6])


def test_out_of_a_variable_length_array_is_refused():
    a = zarrflow.create("memory://py-read-into/str", shape=(3,), dtype="str", chunks=(2,))
    a[...] = np.array(["a", "bc", "def"])
    with pytest.raises(zarrflow.InvalidValueError, match="fixed-size"):
        a.read(out=np.empty(3, dtype=object))
    assert list(a.get_basic_selection(np.s_[1:])) == ["bc", "def"]


def test_bool_and_zero_dimensional_outs():
    b = zarrflow.create("memory://py-read-into/bool", shape=(5, 3), dtype="bool", chunks=(2, 2))
    ref = np.arange(15).reshape(5, 3) % 3 == 0
    b[...] = ref
    out = np.ones((5, 3), dtype=bool)
    np.testing.assert_array_equal(b.read(out=out), ref)
    out0 = np.zeros((), dtype=bool)
    got = b.get_basic_selection((3, 0), out=out0)
    assert got == ref[3, 0] and bool(out0) == ref[3, 0]
    assert b.get_basic_selection((..., 3, 0), out=out0) is out0, "with ..., the array"


def test_threads_read_disjoint_parts_of_one_out_at_once(pair):
    a, ref = pair
    out = np.zeros(SHAPE, dtype=np.int32)
    errors = []

    def read(lo, hi):
        try:
            for _ in range(20):
                a.get_basic_selection(np.s_[lo:hi], out=out[lo:hi])
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=read, args=(lo, lo + 6)) for lo in range(0, 23, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    np.testing.assert_array_equal(out, ref)
