"""The Lift application suite (examples/suite.py): every entry, written as a natural
high-level program, compiles with `dpia.compile` (the default lowering), agrees with its
NumPy reference on PoCL at small and moderate sizes, its interpreter run agrees at the small
sizes, and its small run is clean under Oclgrind (bounds, races, uninitialised reads).  The
same holds for the other formulations of the applications (`suite.ALTERNATIVES`).

Tolerances are per entry (`Entry.tolerance`, documented in the suite): the bound on
dpia.programs.relative_error, the largest difference over max(1, the reference's largest
magnitude)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpia
import functional as fl
from dpia.programs import relative_error

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import suite  # noqa: E402

# Known failures of natural formulations: {(name, sizes): reason}; each such test is
# xfail(strict=True), so it fails (and must leave this list) once the compiler copes.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}  # (name, size) -> reason, as strict xfails; none left


ALL = suite.SUITE + suite.ALTERNATIVES  # the applications, then other formulations of them


def _entries(kind: str):
    return [pytest.param(e, id=e.name, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[e.name, kind])]
                         if (e.name, kind) in KNOWN_FAILURES else []) for e in ALL]


def test_the_suite_holds_every_application_of_the_issue():
    assert {e.name for e in suite.SUITE} == {
        "nbody", "kmeans", "nn", "mri_q", "md", "black_scholes", "atax", "gesummv", "gemv", "gemv_t", "transpose",
        "conv2d_5x5", "separable_conv", "hotspot2d", "hotspot3d", "jacobi2d_5", "jacobi2d_9", "jacobi3d_7",
        "jacobi3d_27", "srad", "stencil2d", "asum", "dot", "scal", "mean_variance"}


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in ALL])
def test_interpreter_agrees_with_numpy_at_small_sizes(entry):
    args = suite.inputs(entry, entry.small)
    assert relative_error(fl.interpret(entry.program, *args), entry.reference(*args)) <= max(entry.tolerance, 1e-4)


def _leaves(value) -> list:
    return [x for v in value for x in _leaves(v)] if isinstance(value, tuple) else [value]


def _structure(value):
    """The nesting of tuples, with each array's shape at the leaves."""
    return tuple(_structure(v) for v in value) if isinstance(value, tuple) else np.shape(value)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in ALL])
def test_the_float32_numpy_equivalent_agrees_with_the_reference_at_small_sizes(entry):
    """`Entry.numpy` (what the benchmarks time) computes what the oracle does, in float32:
    the same outputs within the entry's tolerance, float32 (or the oracle's integer type),
    and it leaves its inputs as they were (the benchmarks call it repeatedly)."""
    import copy
    import inspect

    assert callable(entry.numpy)
    args = suite.inputs(entry, entry.small)
    assert all(np.asarray(a).dtype in (np.float32, np.int32) for a in args)
    kept = copy.deepcopy(args)
    want, got = entry.reference(*args), entry.numpy(*args)
    assert all(np.array_equal(a, b) for a, b in zip(args, kept)), f"{entry.name}: numpy changed its inputs"
    assert _structure(got) == _structure(want)
    err = relative_error(got, want)
    assert err <= entry.tolerance, f"{entry.name}: relative error {err:.2e} over {entry.tolerance:.0e}"
    for g, w in zip(_leaves(got), _leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype != np.float64
        assert g.dtype == (w.dtype if np.issubdtype(w.dtype, np.integer) else np.float32), (g.dtype, w.dtype)
    assert "float64" not in inspect.getsource(entry.numpy), f"{entry.name}: numpy upcasts"


def test_black_scholes_without_scipy_agrees_with_the_reference():
    """Where scipy's erfc is not installed, the float32 Black-Scholes uses the polynomial
    normal CDF: it too agrees with the oracle, in float32."""
    entry = suite.BY_NAME["black_scholes"]
    args = suite.inputs(entry, entry.moderate)
    got = suite.black_scholes_f32(*args, suite.normal_cdf_polynomial)
    assert relative_error(got, entry.reference(*args)) <= entry.tolerance
    assert [g.dtype for g in got] == [np.float32, np.float32]


def _run_compiled(entry, size):
    """What `dpia run` uses (a preset that derives and fits, else the default lowering) and,
    when that is a preset, the default lowering too: both agree with NumPy."""
    from functional.default_lowering import default_schedule
    from functional.derivation import derive

    kernel = dpia.compile(entry.program, name=dpia.kernel_name_for(entry.name), db=False)
    args = suite.inputs(entry, size, seed=1)
    err = relative_error(kernel(*args), entry.reference(*args))
    assert kernel.variant.kind in ("default", "preset")
    assert err <= entry.tolerance, f"{entry.name} at {size}: relative error {err:.2e}\n{kernel.source}"
    if kernel.variant.kind == "preset":
        typed = fl.infer(entry.program)
        default = dpia.compile(derive(typed, default_schedule(typed))[0], name=dpia.kernel_name_for(entry.name))
        err = relative_error(default(*args), entry.reference(*args))
        assert err <= entry.tolerance, f"{entry.name} (default lowering) at {size}: relative error {err:.2e}"


@pytest.mark.parametrize("entry", _entries("small"))
def test_compiled_agrees_with_numpy_on_pocl_at_small_sizes(entry):
    _run_compiled(entry, entry.small)


@pytest.mark.parametrize("entry", _entries("moderate"))
def test_compiled_agrees_with_numpy_on_pocl_at_moderate_sizes(entry):
    _run_compiled(entry, entry.moderate)


def _oclgrind_installed() -> bool:
    import pyopencl as cl

    try:
        return any(p.name == "Oclgrind" for p in cl.get_platforms())
    except cl.Error:
        return False


OCLGRIND_PROBLEMS = ("data race", "divergence", "invalid read", "invalid write", "out-of-bounds", "uninitialized",
                     "uninitialised")


@pytest.mark.skipif(not _oclgrind_installed(), reason="Oclgrind is not installed")
def test_every_entry_is_clean_under_oclgrind_at_small_sizes():
    env = {**os.environ, "DPIA_DEVICE": "oclgrind", "OCLGRIND_DATA_RACES": "1",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run([sys.executable, str(ROOT / "examples" / "suite.py"), "--device"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    rows = {r["name"]: r for r in map(json.loads, run.stdout.strip().splitlines())}
    assert set(rows) == {e.name for e in ALL}, run.stdout + run.stderr[-3000:]
    bad = {n: r for n, r in rows.items() if r["status"] != "ok" and (n, "small") not in KNOWN_FAILURES}
    assert not bad, bad
    assert {r["device"] for r in rows.values() if "device" in r} == {"Oclgrind Simulator"}
    report = run.stderr.lower()
    assert not [p for p in OCLGRIND_PROBLEMS if p in report], run.stderr[-3000:]



def test_a_three_dimensional_stencil_reads_its_input_through_the_views():
    """jacobi3d_7 (slide3d of pad3d_clamp): one kernel reading the grid through pad and slide,
    as the 2-D stencils are, rather than copying the padded grid and every plane's windows."""
    entry = suite.BY_NAME["jacobi3d_7"]
    kernel = dpia.compile(entry.program, db=False)
    kernel(*suite.inputs(entry, entry.small))
    assert len(kernel.kernel.phases) == 1, kernel.source


def test_the_benchmark_writes_a_table_and_keeps_the_findings(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import suite_pocl

    out = tmp_path / "SUITE.md"
    out.write_text("old table\n\n## Findings\n\nwritten by hand\n")
    code = suite_pocl.main(["--sizes", "small", "--only", "scal", "mean_variance", "--repeat", "2", "--out", str(out)])
    text = out.read_text()
    assert code == 0 and "old table" not in text and text.endswith("## Findings\n\nwritten by hand\n")
    rows = [line for line in text.splitlines() if line.startswith("| scal |") or line.startswith("| mean_variance |")]
    assert len(rows) == 2 and all("| default |" in r and "WRONG" not in r for r in rows), text
