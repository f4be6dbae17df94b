"""The marker lists of tests/conftest.py name tests that exist (a renamed slow test would
otherwise quietly join the fast subset), and the markers are registered."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from . import conftest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # imports every test module
def test_every_slow_entry_names_a_test():
    missing = []
    for entry in sorted(conftest.SLOW):
        path, _, name = entry.partition("::")
        if not (ROOT / path).exists():
            missing.append(entry)
            continue
        if not name:  # a whole module
            continue
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        if not callable(getattr(module, re.sub(r"\[.*$", "", name), None)):
            missing.append(entry)
    assert missing == []


def test_every_test_not_replayed_exists():
    assert all(callable(getattr(importlib.import_module(entry.partition("::")[0].removesuffix(".py").replace("/", ".")),
                                entry.partition("::")[2].partition("[")[0], None))  # a parametrised test's function
               for entry in conftest.NOT_REPLAYED)


def test_every_device_module_exists():
    assert sorted(m for m in conftest.DEVICE_MODULES if not (ROOT / m).exists()) == []


def test_markers_are_registered():
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert sorted(m.split(":")[0] for m in markers) == ["device", "no_typing_memo", "oclgrind_off(reason)", "slow"]
