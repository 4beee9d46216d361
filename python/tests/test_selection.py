"""Selections against NumPy on a sharded array: basic indexing (steps, negatives,
ellipsis, newaxis), NumPy advanced indexing through a[...], outer (oindex) and vectorized
(vindex) indexing, boolean masks; reads and writes."""

from __future__ import annotations

import numpy as np
import pytest

import zarrflow

SHAPE = (23, 17, 9)


@pytest.fixture(scope="module")
def pair():
    ref = np.arange(np.prod(SHAPE), dtype=np.int32).reshape(SHAPE)
    a = zarrflow.create(
        "memory://py-selection/a", shape=SHAPE, dtype="int32", shards=(8, 6, 9), chunks=(4, 3, 3)
    )
    a[...] = ref
    return a, ref


BASIC = [
    np.s_[...],
    np.s_[5],
    np.s_[-1],
    np.s_[3, -2, 4],
    np.s_[::2],
    np.s_[::-1],
    np.s_[-3:2:-4, ::5],
    np.s_[1:20:7, ..., ::-2],
    np.s_[..., 3],
    np.s_[None, 2:5, None, ..., None],
    np.s_[np.newaxis],
    np.s_[100:],
    np.s_[5:3],
    np.s_[-100:100:3],
    np.s_[:, -1:-18:-3, 2:3],
    np.s_[np.int64(4), np.uint8(2)],
    np.s_[()],
]

ADVANCED = [
    np.s_[[0, 22, -1, 5]],
    np.s_[[[1, 2], [3, 4]]],
    np.s_[[0, 1], [2, 3]],
    np.s_[[0, 1], :, [2, 3]],
    np.s_[2, :, [0, 8, 4]],
    np.s_[:, [1, 2], 3],
    np.s_[..., [0, -1]],
    np.s_[np.array([[3], [7]]), np.array([1, 2, 16])],
    np.s_[1:9:3, [4, 4, 0]],
    np.s_[[], :],
]


@pytest.mark.parametrize("key", BASIC, ids=repr)
def test_basic_reads_match_numpy(pair, key):
    a, ref = pair
    got, want = a[key], ref[key]
    assert np.shape(got) == np.shape(want)
    assert np.array_equal(got, want)
    assert type(got) is type(want) or np.ndim(want) > 0


@pytest.mark.parametrize("key", ADVANCED, ids=repr)
def test_numpy_advanced_indexing_through_getitem_matches_numpy(pair, key):
    a, ref = pair
    got = a[key]
    assert got.shape == ref[key].shape
    assert np.array_equal(got, ref[key])


def test_masks_match_numpy(pair):
    a, ref = pair
    rng = np.random.default_rng(7)
    full = rng.random(SHAPE) < 0.3
    assert np.array_equal(a[full], ref[full])
    two = rng.random(SHAPE[:2]) < 0.5
    assert np.array_equal(a[two], ref[two])
    assert np.array_equal(a[two, 3], ref[two, 3])
    one = rng.random(SHAPE[1]) < 0.5
    assert np.array_equal(a[:, one], ref[:, one])
    rows = rng.random(23) < 0.5
    assert np.array_equal(a.oindex[rows, one, 1:4], ref[rows][:, one][:, :, 1:4])


def test_oindex_reads_match_np_ix(pair):
    a, ref = pair
    i, j, k = [0, 22, 5, 5], [16, 0, 3], [8, 1]
    assert np.array_equal(a.oindex[i, j, k], ref[np.ix_(i, j, k)])
    assert np.array_equal(a.oindex[i, 2:9:3, -1], ref[np.ix_(i, range(2, 9, 3), [8])][:, :, 0])
    mask = np.arange(17) % 3 == 0
    assert np.array_equal(a.oindex[::-5, mask, k], ref[::-5][:, mask][:, :, k])


def test_vindex_reads_match_numpy_points(pair):
    a, ref = pair
    rng = np.random.default_rng(3)
    pts = [rng.integers(-s, s, size=(50,)) for s in SHAPE]
    assert np.array_equal(a.vindex[tuple(pts)], ref[tuple(pts)])
    grid = (rng.integers(0, 23, size=(4, 1)), rng.integers(0, 17, size=(1, 5)))
    assert np.array_equal(a.vindex[grid], ref[grid])
    assert a.vindex[grid].shape == (4, 5, 9)


def test_writes_in_three_modes_match_numpy_assignment(tmp_url):
    ref = np.zeros((30, 20), dtype=np.float64)
    a = zarrflow.create(tmp_url(), shape=ref.shape, dtype="float64", shards=(10, 10), chunks=(5, 5))
    cases = [
        ("numpy", np.s_[3:27:4, ::-3], np.arange(6 * 7).reshape(6, 7)),
        ("numpy", np.s_[5], 2.5),
        ("numpy", np.s_[:, 4], np.arange(30)),
        ("numpy", np.s_[..., 1:3], np.array([[-1.0, -2.0]])),  # broadcast along dim 0
        ("numpy", np.s_[None, 7, :], np.arange(20)),
        ("numpy", np.s_[[1, 2], [3, 4]], [9.0, 8.0]),
        ("oindex", np.s_[[0, 29], [0, 19, 5]], np.array([[1.0], [2.0]])),
        ("vindex", np.s_[[10, 11, 12], [13, 14, 15]], 7.0),
        ("numpy", np.arange(30) % 7 == 0, 4.0),
    ]
    for mode, key, value in cases:
        if mode == "numpy":
            a[key] = value
            ref[key] = value
        elif mode == "oindex":
            a.oindex[key] = value
            ref[np.ix_(*key)] = value
        else:
            a.vindex[key] = value
            ref[key] = value
        assert np.array_equal(a[...], ref), (mode, key)
