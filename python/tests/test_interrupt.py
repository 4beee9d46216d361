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


CHILD = """
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
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            a[...]
    finally:
        timer.cancel()
    assert time.monotonic() - start < 2.0
    assert np.array_equal(a[100:120], values[100:120])
    assert np.array_equal(zarrflow.open(url)[8:12], values[8:12])
