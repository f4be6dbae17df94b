"""Shared test settings.

- HYPOTHESIS_PROFILE=thorough runs many more random instances (the CI profile keeps the
  suite well under 15 minutes).
- Every kernel a test launches is launched again under Oclgrind after the test, which
  fails when Oclgrind reports a problem (tests/oclgrind.py); `--oclgrind=small` (the
  default) checks launches whose inputs have at most 65536 elements, `--oclgrind=all`
  every launch, `--oclgrind=off` none.  The summary line says how many kernels were
  built, launched and checked.
- Markers: `slow` (over about a second: `-m "not slow"` runs the rest in well under a
  minute) and `device` (needs an OpenCL device).  Tests in files other than tests/dpia and
  the README/example tests are marked from the lists below, measured with --durations.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from .oclgrind import DEFAULT_LIMIT, Replayer, describe

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Modules whose tests run kernels on an OpenCL device (every test in them is marked `device`).
DEVICE_MODULES = {
    "tests/test_algorithmic.py", "tests/test_cli.py", "tests/test_default_schedule.py", "tests/test_examples.py",
    "tests/test_explore.py", "tests/test_programs.py", "tests/test_runtime_cache.py", "tests/test_tuning.py",
    "tests/test_variants.py", "tests/test_readme.py", "tests/dpia/test_translate.py", "tests/test_plots.py",
}
# Tests measured over about a second on 2 cores (node ids, or a prefix ending in "[").
SLOW = {
}

_REPLAYER = pytest.StashKey[Replayer]()


def pytest_addoption(parser):
    parser.addoption("--oclgrind", choices=("small", "all", "off"), default="small",
                     help="launch again under Oclgrind the kernels each test launched: those with small inputs "
                          "(default), all, or none")


def pytest_configure(config):
    config.stash[_REPLAYER] = Replayer(enabled=config.getoption("--oclgrind") != "off")


def pytest_collection_modifyitems(config, items):
    root = Path(config.rootpath)
    for item in items:
        module = Path(item.fspath).resolve().relative_to(root).as_posix()
        if module in DEVICE_MODULES:
            item.add_marker(pytest.mark.device)
        if item.nodeid in SLOW or any(s.endswith("[") and item.nodeid.startswith(s) for s in SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _kernels_checked_under_oclgrind(request, monkeypatch):
    """Record the kernels the test launches (in any process), then check them under Oclgrind."""
    replayer = request.config.stash[_REPLAYER]
    with tempfile.TemporaryDirectory(prefix="dpia-kernels-") as folder:
        monkeypatch.setenv("DPIA_RECORD_KERNELS", folder)
        if request.config.getoption("--oclgrind") == "all":
            monkeypatch.setenv("DPIA_RECORD_KERNELS_LIMIT", str(1 << 62))
        else:
            monkeypatch.setenv("DPIA_RECORD_KERNELS_LIMIT", str(DEFAULT_LIMIT))
        yield
        monkeypatch.delenv("DPIA_RECORD_KERNELS")  # the checks below build kernels too: not recorded
        bad = replayer.check(Path(folder))
    if bad:
        pytest.fail(describe(bad), pytrace=False)


def pytest_terminal_summary(terminalreporter, config):
    terminalreporter.write_line(config.stash[_REPLAYER].summary())
