"""Shared helpers of the zarrflow Python tests (run in the pinned .venv: scripts/test.sh)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TEST_DATA = REPO / "test-data"


def manifest() -> dict:
    """manifest.json with the lists of the other generators' manifests appended (the zarr-python
    2.18 fixtures of generate_zarr2.py), as tests/common/fixtures.rs reads them."""
    m = json.loads((TEST_DATA / "manifest.json").read_text())
    for name in ("manifest-zarr2.json",):
        for kind, items in json.loads((TEST_DATA / name).read_text()).items():
            if isinstance(items, list):
                m.setdefault(kind, []).extend(items)
    return m


def selection_key(text: str):
    """A manifest selection string (NumPy syntax, JSON booleans) as a Python key."""
    python = text.replace("true", "True").replace("false", "False")
    return eval(f"np.s_[{python}]", {"np": np})  # trusted: the repository's own manifest


@pytest.fixture
def tmp_url(tmp_path):
    """A fresh local array URL under pytest's temporary directory."""
    counter = iter(range(1_000_000))

    def make(name: str = "a") -> str:
        return str(tmp_path / f"{name}-{next(counter)}.zarr")

    return make


# ---------------------------------------------------------------------------------------
# an S3 server on 127.0.0.1: moto's, as the Rust tests start it (tests/common/moto.rs)

# moto's server entry point with threaded=False: requests are handled one at a time, which
# makes moto's If-Match / If-None-Match checks atomic, as on S3 (moto_server's default
# thread per request checks them without a lock).
MOTO_LAUNCHER = """
import sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
app = DomainDispatcherApplication(create_backend_app)
run_simple(sys.argv[1], int(sys.argv[2]), app, threaded=False, request_handler=MotoRequestHandler)
"""


class Moto:
    """A moto S3 server on 127.0.0.1 (``endpoint``) and the options that reach it."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.options = {
            "aws_endpoint": endpoint,
            "aws_allow_http": True,
            "aws_access_key_id": "moto-test-key",
            "aws_secret_access_key": "moto-test-secret",
            "aws_region": "us-east-1",
        }
        self._buckets: set[str] = set()

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="moto-test-key",
            aws_secret_access_key="moto-test-secret",
            region_name="us-east-1",
        )

    def bucket(self, name: str) -> str:
        """Creates bucket ``name`` (once) and returns it."""
        if name not in self._buckets:
            self.client().create_bucket(Bucket=name)
            self._buckets.add(name)
        return name

    def upload(self, directory: pathlib.Path, bucket: str, prefix: str) -> str:
        """Uploads the Zarr objects under ``directory`` to ``s3://bucket/prefix/...`` (not
        the generator's expected values, ``*.npy`` and ``*.selections/``); returns the URL
        of the uploaded tree."""
        s3 = self.client()
        self.bucket(bucket)
        for path in sorted(directory.rglob("*")):
            expected = path.suffix == ".npy" or any(p.endswith(".selections") for p in path.parts)
            if path.is_file() and not expected:
                key = f"{prefix}/{path.relative_to(directory).as_posix()}"
                s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        return f"s3://{bucket}/{prefix}"

    def download(self, bucket: str, prefix: str, directory: pathlib.Path) -> pathlib.Path:
        """Copies every object under ``s3://bucket/prefix/`` into ``directory``."""
        s3 = self.client()
        paginator = s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix + "/"):
            for obj in page.get("Contents", []):
                target = directory / obj["Key"][len(prefix) + 1 :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read())
        return directory


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def moto():
    """A moto S3 server started for the session on a free port of 127.0.0.1, killed after."""
    import subprocess
    import sys
    import time

    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen(
            [sys.executable, "-c", MOTO_LAUNCHER, "127.0.0.1", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and not _answers(port):
            assert time.monotonic() < deadline, f"moto did not answer on port {port}"
            time.sleep(0.05)
        if proc.poll() is not None:
            continue  # the port was taken meanwhile
        try:
            yield Moto(f"http://127.0.0.1:{port}")
        finally:
            proc.kill()
            proc.wait()
        return
    pytest.fail("moto did not start on any of 5 free ports")
