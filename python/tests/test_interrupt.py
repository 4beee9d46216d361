"""Ctrl-C: a long read (the GIL released, the engine waiting on a slow store) ends with
``KeyboardInterrupt`` within about a second of SIGINT, in a process of its own and in this
one (where the module keeps working after it).

The slow store is an HTTP server on 127.0.0.1 that the test starts, answering each request
after a delay: a read of the whole array needs minutes there."""

from __future__ import annotations

import functools
import http.server
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import zarrflow

DELAY = 0.05  # seconds per request
CHUNKS = 4000  # 4000 chunk requests at 2 at a time: 100 s


class SlowHandler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        time.sleep(DELAY)
        super().do_GET()

    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # an interrupted reader's connections close under the handler: expected


@pytest.fixture(scope="module")
def slow_array(tmp_path_factory):
    """The URL of a 4000-chunk array served by a slow HTTP server, and its values."""
    root = tmp_path_factory.mktemp("slow")
    values = np.arange(CHUNKS * 4, dtype=np.int32)
    a = zarrflow.create(str(root / "a.zarr"), shape=values.shape, dtype="int32", chunks=(4,))
    a[...] = values
    handler = functools.partial(SlowHandler, directory=str(root))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/a.zarr", values
    finally:
        server.shutdown()
        server.server_close()


# Python installs its SIGINT handler (KeyboardInterrupt) only when SIGINT is not ignored at
# startup, and a process started in the background by a shell without job control (`cmd &`
# in a script, as some CI launchers do) inherits SIGINT ignored: each test installs
# Python's own handler first, so it tests zarrflow's answer to it, not the launcher.
RESTORE_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"

CHILD = RESTORE_SIGINT + """
import sys, time, zarrflow
a = zarrflow.open(sys.argv[1], request_concurrency=2)
assert list(a[:8]) == list(range(8))
print("reading", flush=True)
a[...]
print("finished", flush=True)
"""


def test_sigint_during_a_long_read_is_keyboard_interrupt_within_a_second(slow_array):
    url, _ = slow_array
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline() == "reading\n"
        time.sleep(1.0)  # well inside the read (it needs ~100 s)
        assert child.poll() is None
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "finished" not in out
    assert "KeyboardInterrupt" in err, err
    # Python exits by SIGINT after an uncaught KeyboardInterrupt
    assert child.returncode == -signal.SIGINT, (child.returncode, err)
    assert elapsed < 1.5, f"KeyboardInterrupt came {elapsed:.2f} s after SIGINT"


def test_an_interrupted_read_raises_and_the_module_keeps_working(slow_array):
    url, values = slow_array
    a = zarrflow.open(url, request_concurrency=2)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            a[...]
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 2.0
    assert np.array_equal(a[100:120], values[100:120])
    assert np.array_equal(zarrflow.open(url)[8:12], values[8:12])


WRITER = RESTORE_SIGINT + """
import sys, numpy as np, zarrflow
a = zarrflow.open(sys.argv[1], mode="r+")
values = [np.full(a.shape, k, dtype=a.dtype) for k in (1, 2)]
print("writing", flush=True)
n = 0
while True:  # rewrites the whole array, alternately all 1s and all 2s, until interrupted
    a[...] = values[n % 2]
    n += 1
"""


def test_sigint_during_writes_is_keyboard_interrupt_and_each_shard_is_whole(tmp_url):
    # 32 MiB of int64 in 16 shards of 64 inner chunks: each write encodes 16 shards on the
    # calling thread; the writer spends nearly all its time inside them
    url = tmp_url()
    zarrflow.create(url, shape=(2048, 2048), dtype="int64", shards=(512, 512), chunks=(64, 64))
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline() == "writing\n"
        time.sleep(1.5)
        assert child.poll() is None
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "KeyboardInterrupt" in err, err
    assert child.returncode == -signal.SIGINT, (child.returncode, err)
    assert elapsed < 1.5, f"KeyboardInterrupt came {elapsed:.2f} s after SIGINT"
    # every shard holds one write's values (all 1s or all 2s; all 0s, the fill value, if
    # no write reached it yet): none was torn
    stored = zarrflow.open(url)[...]
    shards = stored.reshape(4, 512, 4, 512).transpose(0, 2, 1, 3).reshape(16, -1)
    for i, shard in enumerate(shards):
        assert shard.min() == shard.max() and shard[0] in (0, 1, 2), (i, np.unique(shard))
