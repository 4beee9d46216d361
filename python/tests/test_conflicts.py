"""A conditional write that keeps losing to concurrent writers until its attempts run out
is ``zarrflow.ConflictError`` (an ``OSError``, with the shard's URL), and it stores nothing:
real writer processes (``spawn``) rewrite their own inner chunk of one shard at once, on the
local filesystem and on a moto S3 server, with ``conflict_attempts=1`` (no retry). With the
default attempts the same race loses no update and raises nothing."""

from __future__ import annotations

import multiprocessing
import queue as queue_module
import time

import numpy as np
import pytest

import zarrflow

WRITERS = 6


def _writer(url, options, cell, rounds, barrier, queue):
    """Writes rounds 1..rounds into its own cell; reports the last round that was written,
    the conflicts and what they were."""
    try:
        a = zarrflow.open(url, mode="r+", **options)
        barrier.wait(60)
        last, conflicts, details = 0, 0, None
        for r in range(1, rounds + 1):
            try:
                a[cell] = r
                last = r
            except zarrflow.ConflictError as e:
                conflicts += 1
                details = (isinstance(e, OSError), isinstance(e, zarrflow.StoreError), e.url, str(e))
        queue.put((cell, last, conflicts, details, None))
    except BaseException as e:  # noqa: BLE001 - reported to the test
        queue.put((cell, None, None, None, repr(e)))


def race(url: str, options: dict, rounds: int) -> list[tuple]:
    """WRITERS processes each writing its own cell of one shard `rounds` times at once."""
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(WRITERS), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(url, options, cell, rounds, barrier, queue))
        for cell in range(WRITERS)
    ]
    for p in procs:
        p.start()
    results = []
    deadline = time.monotonic() + 300
    while len(results) < len(procs):
        try:
            results.append(queue.get(timeout=1))
        except queue_module.Empty:
            # a writer that died without reporting (or a hang) fails the test, not waits
            assert time.monotonic() < deadline, "the writers did not finish in 300 s"
            if all(p.exitcode is not None for p in procs) and queue.empty():
                pytest.fail(f"writers exited without reporting: {[p.exitcode for p in procs]}")
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert all(r[4] is None for r in results), results
    return sorted(results)


def check(url: str, options: dict, results: list[tuple], want_conflicts: bool) -> None:
    stored = zarrflow.open(url, **options)[...]
    for cell, last, conflicts, details, _ in results:
        # a write that raised stored nothing; one that returned was not lost
        assert stored[cell] == last, (cell, last, stored)
    total = sum(r[2] for r in results)
    if not want_conflicts:
        assert total == 0, results
        return
    assert total > 0, "no write lost a race: the test did not make a conflict"
    for _, _, conflicts, details, _ in results:
        if conflicts:
            is_os_error, is_store_error, error_url, message = details
            assert is_os_error and is_store_error
            assert url.rstrip("/").split("/")[-1] in error_url and error_url.endswith("/c/0"), error_url
            assert "changed concurrently" in message and error_url in message, message


def make(url: str, options: dict) -> None:
    # one shard of WRITERS inner chunks: every write is a read-modify-write of that shard
    zarrflow.create(url, shape=(WRITERS,), dtype="int32", shards=(WRITERS,), chunks=(1,), **options)


def test_conflicts_that_exhaust_their_attempts_are_conflict_errors_on_the_local_store(tmp_url):
    url = tmp_url()
    make(url, {})
    results = race(url, {"conflict_attempts": 1}, rounds=60)
    check(url, {}, results, want_conflicts=True)


def test_the_default_attempts_lose_nothing_on_the_local_store(tmp_url):
    url = tmp_url()
    make(url, {})
    results = race(url, {}, rounds=30)
    assert [r[1] for r in results] == [30] * WRITERS
    check(url, {}, results, want_conflicts=False)


def test_conflicts_that_exhaust_their_attempts_are_conflict_errors_on_s3(moto):
    url = f"s3://{moto.bucket('conflicts')}/one.zarr"
    make(url, moto.options)
    results = race(url, {**moto.options, "conflict_attempts": 1}, rounds=25)
    check(url, moto.options, results, want_conflicts=True)


def test_the_default_attempts_lose_nothing_on_s3(moto):
    url = f"s3://{moto.bucket('conflicts')}/two.zarr"
    make(url, moto.options)
    results = race(url, moto.options, rounds=10)
    assert [r[1] for r in results] == [10] * WRITERS
    check(url, moto.options, results, want_conflicts=False)


def test_conflict_attempts_must_be_a_positive_integer(tmp_url):
    url = tmp_url()
    make(url, {})
    for bad in (0, -1, "2", 1.5):
        with pytest.raises(ValueError):
            zarrflow.open(url, mode="r+", conflict_attempts=bad)
    assert np.array_equal(zarrflow.open(url, conflict_attempts=3)[...], np.zeros(WRITERS))


def test_writers_that_remember_their_shard_lose_nothing_on_s3(moto):
    # each writer keeps the shard it last wrote (write_cache_bytes) and starts its next write
    # from it: the others have mostly changed it meanwhile, so that write's conditional PUT
    # is refused and the writer reads the shard again, losing nothing
    url = f"s3://{moto.bucket('conflicts')}/three.zarr"
    make(url, moto.options)
    results = race(url, {**moto.options, "write_cache_bytes": 1 << 20}, rounds=10)
    assert [r[1] for r in results] == [10] * WRITERS
    check(url, moto.options, results, want_conflicts=False)
    for bad in (-1, "big", 1.5):
        with pytest.raises(ValueError):
            zarrflow.open(url, mode="r+", write_cache_bytes=bad, **moto.options)
