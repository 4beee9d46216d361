"""Shared helpers of the zarrflow Python tests (run in the pinned .venv: scripts/test.sh)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TEST_DATA = REPO / "test-data"


def manifest() -> dict:
    return json.loads((TEST_DATA / "manifest.json").read_text())


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
