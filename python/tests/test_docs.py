"""The docstring examples run (help(zarrflow.open) shows one) and the stubs are shipped."""

from __future__ import annotations

import doctest
import pathlib

import zarrflow
import zarrflow.dask


def test_docstring_examples_run():
    for module in (zarrflow, zarrflow.dask):
        result = doctest.testmod(module, extraglobs={"zarrflow": zarrflow})
        assert result.attempted > 0 and result.failed == 0, module


def test_help_of_open_shows_an_example_and_stubs_exist():
    assert "Example::" in zarrflow.open.__doc__ and ">>>" in zarrflow.open.__doc__
    package = pathlib.Path(zarrflow.__file__).parent
    for name in ("__init__.pyi", "dask.pyi", "py.typed"):
        assert (package / name).exists(), name
