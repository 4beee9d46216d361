"""Pickling, threads and fork: handles re-open from URL, mode and options; many threads
read and write one handle at once (the GIL is released during I/O); a forked child gets
its own runtime and re-opens its handles."""

from __future__ import annotations

import multiprocessing
import pickle
import threading

import numpy as np
import pytest

import zarrflow


def test_arrays_and_groups_pickle_by_url_mode_and_options(tmp_url):
    url = tmp_url()
    a = zarrflow.create(url, shape=(20,), dtype="float64", chunks=(5,))
    a[:] = np.arange(20)
    b = pickle.loads(pickle.dumps(a))
    assert b.url == a.url and b.mode == "r+" and np.array_equal(b[:], a[:])
    b[0] = -1
    assert a[0] == -1
    ro = pickle.loads(pickle.dumps(zarrflow.open(url, mode="r", decode_threads=1, verify_checksums=False)))
    assert ro.mode == "r" and ro._options == {"decode_threads": 1, "verify_checksums": False}
    with pytest.raises(PermissionError):
        ro[0] = 1
    g = zarrflow.open(tmp_url("group"), mode="w")
    assert isinstance(pickle.loads(pickle.dumps(g)), zarrflow.Group)


def test_threads_share_one_handle(tmp_url):
    url = tmp_url()
    n, width = 16, 1000
    a = zarrflow.create(url, shape=(n, width), dtype="int64", shards=(4, 500), chunks=(1, 100))
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            for _ in range(5):
                a[i] = np.arange(width) + i  # rows of one shard written by 4 threads at once
                row = a[i]
                assert np.array_equal(row, np.arange(width) + i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert np.array_equal(a[...], np.arange(width)[None, :] + np.arange(n)[:, None])


def test_gil_is_released_during_reads(tmp_url):
    # Another thread holds the GIL-free section long enough to run Python code: a read
    # running in a worker thread lets the main thread count; with the GIL held the counter
    # could not advance until the read returned.
    url = tmp_url()
    a = zarrflow.create(url, shape=(256, 256, 64), dtype="float64", shards=(64, 64, 64), chunks=(16, 16, 16))
    a[...] = 1.0
    progressed = []
    done = threading.Event()

    def reader() -> None:
        for _ in range(20):
            a[...]
        done.set()

    t = threading.Thread(target=reader)
    t.start()
    while not done.is_set():
        progressed.append(1)
        done.wait(0.0001)
    t.join()
    assert len(progressed) > 1


def _child_reads_and_writes(url: str, queue) -> None:
    a = zarrflow.open(url, mode="r+")
    a[1] = 42
    queue.put(int(a[...].sum()))


def _child_uses_inherited_handle(handle, queue) -> None:
    handle[2] = 7  # a handle opened in the parent: re-opened in this process
    queue.put(int(handle[2]))


def test_forked_children_get_their_own_runtime(tmp_url):
    url = tmp_url()
    a = zarrflow.create(url, shape=(4,), dtype="int64")  # the parent's runtime exists now
    a[:] = 1
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    for target, args in [(_child_reads_and_writes, (url,)), (_child_uses_inherited_handle, (a,))]:
        p = ctx.Process(target=target, args=args + (queue,))
        p.start()
        p.join(120)  # a guard against a hang (a child stuck on the parent's runtime)
        assert p.exitcode == 0
    assert queue.get(timeout=10) == 1 + 42 + 1 + 1
    assert queue.get(timeout=10) == 7
    assert list(a[:]) == [1, 42, 7, 1]


def _wait_or_kill(pid: int, timeout: float) -> int | None:
    """The exit status of child `pid`, or None (after killing it) if it ran past `timeout`."""
    import os
    import signal
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def test_a_child_forked_after_its_parent_decoded_decodes(tmp_url):
    # The parent reads and writes sharded data, which runs planning and copies on the CPU
    # pool; a child forked afterwards (plain os.fork, as multiprocessing's "fork" start
    # method and many servers do) reads, writes and reads again. Before the pool was the
    # module's own, rebuilt in the child, the child's first sharded read waited forever for
    # the parent's pool threads, which a forked child does not have.
    import os

    url = tmp_url()
    shape = (256, 256)
    values = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    a = zarrflow.create(url, shape=shape, dtype="int64", shards=(64, 64), chunks=(16, 16))
    a[...] = values
    assert np.array_equal(a[...], values)
    assert np.array_equal(a.vindex[np.arange(256), np.arange(256)], np.diag(values))
    for _ in range(2):  # a child of a parent that forked before, too
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                child = zarrflow.open(url, mode="r+")
                ok = np.array_equal(child[...], values) and np.array_equal(a[3:200:7, ::9], values[3:200:7, ::9])
                child[10:20, 5:70] = -1
                ok = ok and int((child[...] == -1).sum()) == 10 * 65
                child[10:20, 5:70] = values[10:20, 5:70]
                code = 0 if ok else 1
            finally:
                os._exit(code)
        assert _wait_or_kill(pid, 120) == 0, "the forked child failed or hung"
        assert np.array_equal(a[...], values)
