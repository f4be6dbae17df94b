"""Exploration plots (dpia/plots.py): PNG files for ordinary, all-failed and single-candidate runs."""

from __future__ import annotations

import sys

import pytest

from dpia.explore.plots import PlotError, write_plots
from dpia.explore.tuning import Candidate

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def candidate(k: int, status: str = "ok", time_s: float | None = None) -> Candidate:
    return Candidate(program="p", sizes={"N": 1 << 20}, device="d", derivation=f"program: p\nstep: {k}\n",
                     status=status, time_s=time_s, stage=None if status == "ok" else "build",
                     created=1000.0 + k)


@pytest.fixture
def matplotlib():
    return pytest.importorskip("matplotlib", reason="drawing needs matplotlib (pip install \"dpia[plot]\")")


def assert_pngs(paths) -> None:
    for path in paths:
        assert path.exists() and path.read_bytes()[:8] == PNG_MAGIC


def test_writes_both_pictures(tmp_path, matplotlib):
    runs = [candidate(k, time_s=1e-3 * (1 + k % 7)) for k in range(30)]
    runs += [candidate(30, "failed"), candidate(31, "timeout"), candidate(32, "wrong", 1e-3)]
    space, progress = write_plots(runs, tmp_path / "plots" / "scale", unit="GB/s", work=0.008)
    assert (space.name, progress.name) == ("scale_space.png", "scale_progress.png")
    assert_pngs([space, progress])


def test_all_failed_run(tmp_path, matplotlib):
    runs = [candidate(k, "failed") for k in range(3)]
    assert_pngs(write_plots(runs, tmp_path / "failed", unit="GFLOP/s", work=2.0))


def test_single_candidate_run(tmp_path, matplotlib):
    assert_pngs(write_plots([candidate(0, time_s=0.5)], tmp_path / "one", unit="GFLOP/s", work=2.0))


def test_empty_run(tmp_path, matplotlib):
    assert_pngs(write_plots([], tmp_path / "empty", unit="GB/s", work=1.0))


@pytest.mark.parametrize("unit, work", [("", 1.0), ("GB/s", 0), ("GB/s", float("nan"))])
def test_bad_unit_or_work_is_refused(tmp_path, unit, work):
    with pytest.raises(PlotError):
        write_plots([candidate(0, time_s=1.0)], tmp_path / "bad", unit=unit, work=work)


def test_missing_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib...` fail
    with pytest.raises(PlotError, match=r'pip install "dpia\[plot\]"'):
        write_plots([candidate(0, time_s=1.0)], tmp_path / "none", unit="GB/s", work=1.0)


def test_the_title_counts_failures_as_the_exploration_does():
    from dpia.explore.plots import _not_ok_counts
    from dpia.explore.search import FAILED

    run = [candidate(0, time_s=1.0), candidate(1, "failed"), candidate(2, "wrong"), candidate(3, "timeout"),
           candidate(4, "slow", time_s=9.0)]
    assert _not_ok_counts(run) == "failed 3 (failed 1, timeout 1, wrong 1), slow 1"
    assert sum(c.status in FAILED for c in run) == 3
    assert _not_ok_counts([candidate(0, time_s=1.0)]) == "failed 0"


def test_check_available_refuses_without_matplotlib(monkeypatch):
    from dpia.explore.plots import check_available

    check_available()  # installed for the tests
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(PlotError, match="matplotlib"):
        check_available()
