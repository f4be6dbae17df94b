"""benchmarks/issue13.py, issue 13's one-call table: its rows cover the issue's targets, its points
file names only rows it has, it writes between its markers and nowhere else, and a row measured on
PoCL prints (a wrong kernel as an error, never timed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import issue13  # noqa: E402

TIMING = ("the script times each kernel dozens of times; its kernels are the suite's, checked under Oclgrind by "
          "tests/test_suite.py")


def test_rows_hold_every_target_of_the_issue_and_the_suite_script():
    targets = [r.target for r in issue13.rows()]
    assert len(targets) == len(set(targets))
    for want in ("mm:m=4096,n=4096,k=4096", "mm:m=8192,n=8192,k=8192", "mm:m=8192,n=64,k=8192",
                 "mm:m=1024,n=1024,k=64", "gemv:m=16384,n=16384", "gemv_t:m=16384,n=16384",
                 "tf32_mm:m=8192,n=8192,k=8192", "total:n=268435456"):
        assert want in targets
    assert set(issue13.suite_targets()) <= set(targets)
    assert all(r.name in issue13.SMALL or r.kind in ("mm", "tf32") for r in issue13.rows())


def test_points_file_names_only_rows_and_parses():
    points = issue13.load_points(issue13.POINTS)
    assert set(points) <= {r.target for r in issue13.rows()}
    assert any(p.role == "reference" for p in points["total:n=268435456"])  # the local-memory trees


def test_points_file_errors_are_typed(tmp_path):
    bad = tmp_path / "points.json"
    bad.write_text('{"nn:n=8": [{"skeleton": "default"}]}')
    with pytest.raises(issue13.Issue13Error):
        issue13.load_points(bad)


def test_markers_replace_only_what_lies_between_them():
    text = f"# R\n\nintro\n\n## A\n\n{issue13.BEGIN}\nold\n{issue13.END}\n\n## B\nrest\n"
    out = issue13.replace_between_markers(text, "new\n")
    assert out == text.replace("old\n", "new\n")
    assert issue13.replace_between_markers(out, "newer\n") == text.replace("old\n", "newer\n")


def test_missing_markers_get_a_section_before_the_first_heading_and_misordered_ones_are_refused():
    out = issue13.replace_between_markers("# R\n\nintro\n\n## Session 9\nx\n", "t\n")
    assert out.index(issue13.SECTION) < out.index("## Session 9") and f"{issue13.BEGIN}\nt\n{issue13.END}" in out
    with pytest.raises(issue13.Issue13Error):
        issue13.replace_between_markers(f"{issue13.END}\n{issue13.BEGIN}\n", "t\n")


@pytest.mark.device
@pytest.mark.slow
@pytest.mark.oclgrind_off(TIMING)
def test_a_row_on_pocl_prints_and_lands_between_the_markers(tmp_path, capsys):
    results = tmp_path / "RESULTS.md"
    before = f"# R\n\nintro\n\n{issue13.SECTION}\n\n{issue13.BEGIN}\nold\n{issue13.END}\n\n## Session 31\nkept\n"
    results.write_text(before)
    saved = tmp_path / "rows.json"
    args = ["--small", "--only", "nn:", "--repeat", "2", "--write", str(results), "--json", str(saved)]
    assert issue13.main(args) == 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("| nn |"))
    assert "n=262144" in line and "numpy f32" in line and "n/a (no GPU)" in line
    text = results.read_text()
    assert text.startswith(before.split(issue13.BEGIN)[0]) and text.endswith(f"{issue13.END}\n\n## Session 31\nkept\n")
    assert line in text and "old" not in text and "total wall time" in printed
    results.write_text(before)  # the saved rows give the same table, measuring nothing
    assert issue13.main(["--from-json", str(saved), "--write", str(results)]) == 0
    assert results.read_text() == text


@pytest.mark.device
@pytest.mark.slow
@pytest.mark.oclgrind_off(TIMING)
def test_a_wrong_kernel_is_reported_as_an_error_never_timed(monkeypatch, capsys):
    real = issue13.problem

    def wrong_oracle(row, spec, rng):
        prob = real(row, spec, rng)
        prob.check = lambda got: 1.0  # every kernel disagrees with this oracle
        return prob

    monkeypatch.setattr(issue13, "problem", wrong_oracle)
    assert issue13.main(["--small", "--only", "nn:", "--repeat", "2", "--no-write", "--points",
                         str(ROOT / "no_such_points.json")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| nn |"))
    assert "**error**" in line and "WRONG" in line and line.endswith("| error |")


def test_verdicts_apply_the_copy_goal_only_to_memory_bound_programs():
    goals = (issue13.Goal("torch.compile", 1.0), issue13.COPY)
    bound = issue13.verdicts(goals, 1.0, {"torch.compile": 1.2, "copy": 0.9}, {})
    assert [v["verdict"] for v in bound] == ["met", "met"]
    compute = issue13.verdicts(goals, 1.0, {"torch.compile": 0.8, "copy": 0.3}, {})
    assert [v["verdict"] for v in compute] == ["miss", "n/a (not memory-bound)"]
    error = issue13.verdicts((issue13.Goal("cuBLAS TF32 error", 1.0, metric="error"),), 1.0, {},
                             {"ours error": 3e-4, "cuBLAS TF32 error": 2e-4})
    assert error[0]["verdict"] == "miss" and np.isclose(error[0]["ratio"], 2 / 3)


def test_each_miss_is_followed_by_what_limits_it(tmp_path):
    limits = tmp_path / "limits.json"
    limits.write_text(json.dumps({"mm:m=8,n=8,k=8": "too few work-groups"}))
    rows = [{"target": "mm:m=8,n=8,k=8", "verdicts": [{"verdict": "miss"}]},
            {"target": "nn:n=8", "verdicts": [{"verdict": "met"}]},
            {"target": "kmeans:n=8", "verdicts": [{"verdict": "met"}, {"verdict": "miss"}]}]
    notes = issue13.limits_of_misses(rows, limits)
    assert "- `mm:m=8,n=8,k=8`: too few work-groups" in notes
    assert not any("nn:n=8" in n for n in notes)  # met: nothing to explain
    assert "- not yet analysed: `kmeans:n=8`" in notes
    assert issue13.limits_of_misses(rows[1:2], limits) == []


def test_the_limits_file_names_only_rows_of_the_table():
    names = {row.target for row in issue13.rows()}
    limits = json.loads((issue13.LIMITS).read_text())
    assert set(limits) - {"_doc"} <= names


def test_a_later_run_replaces_its_rows_and_the_table_says_where_they_came_from():
    first = {"meta": {"date": "d1", "device": "gpu", "commit": "c1", "command": "all"},
             "rows": [{"target": "a:n=1", "x": 1}, {"target": "b:n=2", "x": 2}]}
    later = {"meta": {"date": "d2", "device": "gpu", "commit": "c2", "command": "only b"},
             "rows": [{"target": "b:n=2", "x": 3}]}
    rows, meta = issue13.merged_runs([first, later])
    assert [r["x"] for r in rows] == [1, 3] and first["rows"][1]["x"] == 2  # the first run is not changed
    assert meta["commit"] == "c1" and meta["later"][0]["targets"] == ["b:n=2"]
    block = issue13.table([], meta)
    assert "Re-measured d2 on gpu, code at c2: `b:n=2` (`only b`)." in block
    with pytest.raises(issue13.Issue13Error, match="c:n=3"):
        issue13.merged_runs([first, {"meta": {}, "rows": [{"target": "c:n=3"}]}])


# Rows whose points were added without a GPU to try them, and a small size their tiles divide
_SMALL_OF = {"mm:m=4096,n=4096,k=4096": "mm:m=256,n=256,k=16", "mm:m=8192,n=8192,k=8192": "mm:m=256,n=256,k=16",
             "conv2d_5x5:h=8192,w=8192": "conv2d_5x5:h=64,w=64", "mm:m=1024,n=1024,k=64": "mm:m=128,n=128,k=32"}
_UNTIMED = sorted({(p.name, p.skeleton, tuple(sorted(p.slots.items()))): target  # a point of two rows once
                   for target in reversed(_SMALL_OF) for p in issue13.load_points(issue13.POINTS).get(target, [])
                   if "not yet timed" in p.source}.items())
_UNTIMED = [(target, *point) for point, target in _UNTIMED]


@pytest.mark.device
@pytest.mark.parametrize("target,name,skeleton,slots", _UNTIMED, ids=[f"{t[0][:6]} {t[1][:34]}" for t in _UNTIMED])
def test_points_not_yet_timed_derive_and_compute_at_a_small_size(target, name, skeleton, slots):
    """Points added from the counters before a GPU timed them (SGEMM's doubled register blocks,
    conv2d's larger tiles), on PoCL at a small size their tiles divide, against the float64 oracle and
    under Oclgrind: a point the GPU run replays is a correct kernel."""
    import dpia
    from codegen_opencl.runtime import choose_device

    row = next(r for r in issue13.rows() if r.target == target)
    prob = issue13.problem(row, _SMALL_OF[target], np.random.default_rng(0))
    sizes = dpia.compile(prob.program, db=False).sizes_of(prob.inputs)
    point = issue13.PointSpec(name, skeleton, dict(slots), "")
    tried = issue13.try_kernel(name, "candidate", lambda: issue13.compile_point(
        prob.program, sizes, point, choose_device()), prob)
    assert tried.status == "ok", tried.why
