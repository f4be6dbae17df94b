"""The `dpia` command line, run in-process through `main(argv)` (and once as `python -m dpia`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpia.cli import COMMANDS, main
from functional import dsl as fl
from functional.rules import RULES
from functional.rules.core import P, Rule, V
from functional.types import array, f32

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_rules_json_lists_every_rule(capsys):
    code, out, err = run(capsys, "rules", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert sorted(r["name"] for r in rows) == sorted(RULES)
    for r in rows:
        rule = RULES[r["name"]]
        assert r["family"] == rule.family and r["equation"] == rule.equation
        assert r["params"] == list(rule.params) and r["exact"] == rule.exact
        assert r["checked"] is True, f"rule {r['name']} has no example generator"
        assert "passed" not in r and "instances" not in r


def test_rules_table_lists_every_rule(capsys):
    code, out, err = run(capsys, "rules")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["FAMILY", "RULE", "PARAMS", "CHECK"]
    assert lines[-1] == f"{len(RULES)} rules"
    listed = {ln.split()[1] for ln in lines[1:-1]}
    assert listed == set(RULES)
    row = next(ln for ln in lines if ln.split()[1] == "split_join")
    assert row.split()[:4] == ["split-join", "split_join", "n", "example"]
    assert RULES["split_join"].equation in row


def test_family_filter(capsys):
    code, out, _ = run(capsys, "rules", "--json", "--family", "fusion", "--family", "lowering")
    assert code == 0
    names = {r["name"] for r in json.loads(out)}
    assert names == {n for n, r in RULES.items() if r.family in ("fusion", "lowering")}
    assert "map_fusion" in names and "lower_map_seq" in names


def test_check_passes_for_every_rule(capsys):
    code, out, err = run(capsys, "rules", "--check", "--instances", "3", "--json")
    assert code == 0, out + err
    rows = json.loads(out)
    assert sorted(r["name"] for r in rows) == sorted(RULES)
    failures = [f"{r['name']}: {r['failure']}" for r in rows if not r["passed"]]
    assert not failures, "\n".join(failures)
    assert all(r["instances"] == 3 for r in rows)


def test_check_table(capsys):
    code, out, _ = run(capsys, "rules", "--check", "--instances", "2", "--family", "fusion")
    assert code == 0
    fusion = [n for n, r in RULES.items() if r.family == "fusion"]
    assert out.count("pass (2)") == len(fusion)
    assert out.splitlines()[-1] == f"{len(fusion)} rules: {len(fusion)} passed, 0 failed"


def _wrong_rule(name: str, family: str) -> Rule:
    """`map f xs -> xs` keeps the type of `map (f: f32 -> f32) xs` but not its meaning."""

    def example(rng):
        return fl.fun([array(4, f32)], lambda xs: fl.map(lambda x: x * 2.0, xs)), (rng.standard_normal(4)
                                                                                   .astype("float32"),), {}

    return Rule(name, family, "map f xs -> xs   (wrong)", lhs=P("map", V("f"), V("xs")), build=lambda m: m.xs,
                example=example)


def test_check_failure_exits_nonzero(capsys, monkeypatch):
    monkeypatch.setitem(RULES, "zz_wrong", _wrong_rule("zz_wrong", "zz-test"))
    code, out, _ = run(capsys, "rules", "--check", "--instances", "2", "--family", "zz-test")
    assert code == 1
    assert "zz_wrong" in out and "FAIL" in out and "the meaning changed" in out
    assert out.splitlines()[-1] == "1 rules: 0 passed, 1 failed"
    code, out, _ = run(capsys, "rules", "--check", "--json", "--family", "zz-test")
    assert code == 1
    [row] = json.loads(out)
    assert row["passed"] is False and row["instances"] == 1 and "meaning changed" in row["failure"]


def test_check_reports_rule_without_example(capsys, monkeypatch):
    rule = _wrong_rule("zz_unchecked", "zz-test")
    monkeypatch.setitem(RULES, "zz_unchecked", Rule(rule.name, rule.family, rule.equation, lhs=rule.lhs,
                                                    build=rule.build))
    code, out, _ = run(capsys, "rules", "--family", "zz-test")
    assert code == 0 and "unchecked" in out
    code, out, _ = run(capsys, "rules", "--check", "--family", "zz-test")
    assert code == 1 and "no example" in out


@pytest.mark.parametrize("argv, needle", [
    (["rules", "--family", "nope"], "unknown family 'nope'"),
    (["rules", "--check", "--instances", "0"], "--instances: expected a positive integer, got 0"),
    (["rules", "--check", "--instances", "many"], "expected a positive integer, got 'many'"),
    (["rules", "--bogus"], "unrecognized arguments: --bogus"),
    ([], "required: COMMAND"),
    (["nosuchcommand"], "invalid choice: 'nosuchcommand'"),
])
def test_bad_input_exits_2_with_a_message(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert out == ""


def test_unknown_family_lists_the_families(capsys):
    _, _, err = run(capsys, "rules", "--family", "fusion", "--family", "nope")
    assert err.startswith("dpia rules: error:")
    assert all(r.family in err for r in RULES.values())


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert all(c.name in out for c in COMMANDS)
    code, out, _ = run(capsys, "rules", "--help")
    assert code == 0 and "--instances" in out


def test_python_dash_m_dpia():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    proc = subprocess.run([sys.executable, "-m", "dpia", "rules", "--json"], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert sorted(r["name"] for r in rows) == sorted(RULES)
    assert all(r["checked"] for r in rows)


# ---------------------------------------------------------------------------- devices

_IDENTITY_FIELDS = {"platform", "platform_version", "device", "driver_version", "device_type", "max_work_group_size",
                    "max_work_item_sizes", "local_mem_bytes", "compute_units", "global_mem_bytes",
                    "native_float_vector_width"}


def test_devices_table_lists_pocl_and_marks_the_default(capsys, monkeypatch):
    monkeypatch.delenv("DPIA_DEVICE", raising=False)
    code, out, err = run(capsys, "devices")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["PLATFORM", "DEVICE", "TYPE"]
    marked = [ln for ln in lines[1:-1] if ln.startswith("*")]
    assert len(marked) == 1 and "Portable Computing Language" in marked[0]
    assert lines[-1].startswith(f"{len(lines) - 2} device(s)")


def test_devices_json_parses_with_every_identity_field(capsys, monkeypatch):
    monkeypatch.delenv("DPIA_DEVICE", raising=False)
    code, out, err = run(capsys, "devices", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert rows and all(_IDENTITY_FIELDS | {"key", "default"} <= set(r) for r in rows)
    [default] = [r for r in rows if r["default"]]
    assert default["platform"] == "Portable Computing Language" and default["device_type"] == "CPU"
    assert default["key"] == f"{default['platform']} | {default['device']} | {default['driver_version']}"


def test_devices_follows_dpia_device(capsys, monkeypatch):
    monkeypatch.setenv("DPIA_DEVICE", "oclgrind")
    code, out, _ = run(capsys, "devices", "--json")
    rows = json.loads(out)
    if not any(r["platform"] == "Oclgrind" for r in rows):
        pytest.skip("Oclgrind is not installed")
    assert code == 0 and [r["platform"] for r in rows if r["default"]] == ["Oclgrind"]


def test_no_device_exits_1_with_a_message(capsys, monkeypatch):
    import codegen_opencl.runtime as rt

    monkeypatch.setattr(rt, "devices", list)  # no device at all
    code, out, err = run(capsys, "devices")
    assert code == 1 and out == ""
    assert "no OpenCL device found" in err


def test_python_dash_m_dpia_devices():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("DPIA_DEVICE", None)
    proc = subprocess.run([sys.executable, "-m", "dpia", "devices", "--json"], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert any(r["platform"] == "Portable Computing Language" and r["default"] for r in rows)


# ------------------------------------------------------------------ run / show / explore

SEED = ROOT / "examples" / "seed.py"
FACTS_PROGRAM = """
import functional as fl
N = fl.nat("N", multiple_of=64)
total = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
"""


@pytest.fixture(autouse=True)
def private_tuning_db(tmp_path, monkeypatch):
    """No test reads or writes the user's tuning database."""
    path = tmp_path / "tuning.sqlite"
    monkeypatch.setenv("DPIA_TUNING_DB", str(path))
    monkeypatch.delenv("DPIA_DEVICE", raising=False)
    return path


@pytest.fixture
def facts_file(tmp_path) -> Path:
    path = tmp_path / "facts.py"
    path.write_text(FACTS_PROGRAM)
    return path


def test_run_json_on_a_small_sum(capsys, private_tuning_db):
    code, out, err = run(capsys, "run", f"{SEED}:total", "--size", "N=4096", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["program"] == "total" and r["sizes"] == {"N": 4096} and r["file"] == str(SEED)
    assert r["device"].startswith("Portable Computing Language | ")
    assert r["correct"] is True and r["max_rel_error"] <= r["tolerance"]
    assert r["time_s"] > 0 and r["gbps"] == pytest.approx((4096 * 4 + 4) / r["time_s"] / 1e9)
    assert "gflops" not in r and r["variant"] == "default"
    assert r["derivation"].startswith("program: fun(xs: 4096.f32) => reduce (+) 0.0 xs\nstep: reduce_split")
    assert r["candidates"] == {"tried": 0, "failed": 0}
    assert private_tuning_db.exists()  # the database of the test, not the user's


def test_run_text_reports_gflops_for_mm(capsys):
    code, out, err = run(capsys, "run", f"{SEED}:mm", "--size", "M=16", "--size", "K=8", "--size", "N=32",
                         "--repeat", "2")
    assert code == 0, err
    assert "correct   yes" in out and "GFLOP/s (8192 floating-point operations)" in out
    assert "median of 2" in out and "variant   preset" in out  # mm_rows_vectorized fits 16 x 32 on a CPU


def test_run_uses_the_tuned_variant_of_the_database(capsys, tmp_path):
    from codegen_opencl.runtime import choose_device, device_key
    from dpia.programs import canonical, fix_sizes, load
    from dpia.explore.tuning import Candidate, TuningDB
    from functional import schedules
    from functional.derivation import derive
    from functional.infer import infer

    _, total = load(f"{SEED}:total")
    _, derivation = derive(infer(fix_sizes(total, {"N": 4096})), schedules.global_reduce(256))
    db_path = tmp_path / "explicit.sqlite"
    with TuningDB(db_path) as db:
        db.add(Candidate(canonical(total), {"N": 4096}, device_key(choose_device()), derivation.to_text(), "ok",
                         time_s=1e-6))
        db.add(Candidate(canonical(total), {"N": 4096}, device_key(choose_device()), "program: x\n", "failed",
                         stage="derive", error="no"))
    code, out, err = run(capsys, "run", f"{SEED}:total", "--size", "N=4096", "--db", str(db_path), "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["variant"] == "tuned" and r["derivation"] == derivation.to_text() and r["correct"] is True
    assert r["candidates"] == {"tried": 2, "failed": 1}


def test_run_exits_1_when_the_result_is_wrong(capsys, monkeypatch):
    import dpia.programs

    monkeypatch.setattr(dpia.programs, "relative_error", lambda got, want: 0.5)
    code, out, _ = run(capsys, "run", f"{SEED}:scal", "--size", "N=64")
    assert code == 1 and "correct   NO (largest relative error 5.0e-01" in out


def test_run_with_an_unusable_database_warns_and_runs(capsys, tmp_path):
    code, out, err = run(capsys, "run", f"{SEED}:scal", "--size", "N=64", "--db", str(tmp_path))
    assert code == 0 and "correct   yes" in out
    assert "dpia run: warning: tuning database not used" in err and "is a directory" in err


def test_show_the_default_without_sizes(capsys):
    code, out, err = run(capsys, "show", f"{SEED}:dot")
    assert code == 0, err
    assert "== variant: default (functional.schedules.default_schedule)" in out
    assert "no tuned variant was looked up" in out
    for section in ("== derivation", "== imperative program", "== OpenCL", "kernel void", "lower_reduce_seq"):
        assert section in out


def test_show_with_sizes_json(capsys):
    code, out, err = run(capsys, "show", f"{SEED}:total", "--size", "N=4096", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["variant"].startswith("default") and "step: reduce_split" in r["derivation"]
    assert "kernel void" in r["opencl"] and "par_for" in r["imperative"]
    assert r["device"].startswith("Portable Computing Language")


def test_show_a_low_level_program_as_written(capsys, tmp_path):
    path = tmp_path / "low.dpia"
    path.write_text("fun(N: nat, xs: N.f32) => map_global 0 (fun(x) => x * 2.0) xs\n")
    code, out, err = run(capsys, "show", str(path))
    assert code == 0, err
    assert "== variant: as written (already low level)" in out and "== derivation" not in out


def test_explore_with_a_tiny_budget(capsys, private_tuning_db, tmp_path):
    pytest.importorskip("matplotlib", reason="--plots draws with matplotlib (pip install \"dpia[plot]\")")
    prefix = tmp_path / "plots" / "sum"
    code, out, err = run(capsys, "explore", f"{SEED}:total", "--size", "N=8192", "--candidates", "2",
                         "--workers", "1", "--budget", "5m", "--json", "--plots", str(prefix))
    assert code == 0, err + out
    r = json.loads(out)
    assert r["program"] == "total" and r["sizes"] == {"N": 8192} and r["correct"] is True
    assert r["candidates"]["tried"] >= 1 and r["candidates"]["failed"] >= 0 and r["time_s"] > 0
    assert r["derivation"].startswith("program: ") and r["run_id"]
    assert r["plots"] == [str(prefix) + "_space.png", str(prefix) + "_progress.png"]
    assert all(Path(p).exists() for p in r["plots"])
    assert "candidates, " in err and "failed, best" in err  # the progress bar
    from dpia.explore.tuning import TuningDB

    with TuningDB(private_tuning_db) as db:
        searched = [c for c in db.candidates(run_id=r["run_id"]) if "confirms" not in c.params]  # not re-measured
        assert len(searched) == r["candidates"]["tried"]


def test_an_interrupted_exploration_keeps_what_it_measured(tmp_path):
    """Ctrl-C: a clean message (no traceback from the workers either), exit 130, the candidates
    measured so far in the database."""
    import signal
    import subprocess
    import time

    db_path = tmp_path / "t.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "dpia", "explore", f"{SEED}:total", "--size", "N=65536",
                             "--budget", "5m", "--workers", "1", "--db", str(db_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    from dpia.explore.tuning import TuningDB

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until a few candidates are stored
        time.sleep(1)
        if db_path.exists():
            with TuningDB(db_path) as db:
                if len(db.candidates()) >= 3:
                    break
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted; the candidates measured so far are in" in err and "Traceback" not in err
    with TuningDB(db_path) as db:
        assert len(db.candidates()) >= 3


@pytest.mark.parametrize("argv, needle", [
    (["run", "nothing.py", "--size", "N=8"], "no such file: nothing.py"),
    (["run", f"{SEED}:gemm", "--size", "N=8"], "no program 'gemm'; the programs: asum, dot, gemv"),
    (["run", str(SEED), "--size", "N=8"], "defines 7 programs; choose one"),
    (["run", f"{SEED}:total", "--size", "N"], "expected NAME=VALUE"),
    (["run", f"{SEED}:total", "--size", "M=8"], "the program has no size M; its sizes: N"),
    (["run", f"{SEED}:total"], "missing size N"),
    (["run", f"{SEED}:total", "--size", "N=0"], "must be at least 1"),
    (["run", f"{SEED}:total", "--size", "N=8", "--device", "no-such-device"], "no OpenCL device matches"),
    (["show", f"{SEED}:total", "--device", "no-such-device"], "no OpenCL device matches"),
    (["show", f"{SEED}:gemm"], "no program 'gemm'"),
    (["explore", f"{SEED}:total", "--size", "N=8", "--budget", "0"], "the budget must be positive"),
    (["explore", f"{SEED}:total", "--size", "N=8", "--budget", "0s"], "the budget must be positive"),
    (["explore", f"{SEED}:total", "--size", "N=8", "--budget", "soon"], "expected a duration like 90s"),
    (["explore", f"{SEED}:total", "--size", "N=8", "--candidates", "0"], "expected a positive integer"),
    (["explore", f"{SEED}:total", "--size", "N=8", "--strategy", "greedy"], "invalid choice: 'greedy'"),
    (["explore", f"{SEED}:total"], "missing size N"),
])
def test_bad_program_inputs_exit_2_with_a_message(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2, err
    assert needle in err and out == ""


def test_sizes_contradicting_the_program_exit_2(capsys, facts_file):
    code, out, err = run(capsys, "run", str(facts_file), "--size", "N=100")
    assert code == 2 and out == ""
    assert "dpia run: error: size N = 100: the program says it is a multiple of 64" in err


def test_explore_with_an_unusable_database_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "explore", f"{SEED}:total", "--size", "N=64", "--budget", "1s", "--db", str(tmp_path))
    assert code == 2 and "cannot use the tuning database" in err


def test_no_device_exits_1(capsys, monkeypatch):
    import codegen_opencl.runtime as rt

    monkeypatch.setattr(rt, "devices", list)
    code, _, err = run(capsys, "run", f"{SEED}:total", "--size", "N=8")
    assert code == 1 and "no OpenCL device found" in err


def test_parse_budget():
    from dpia.cli import parse_budget

    assert [parse_budget(t) for t in ("90s", "10m", "1h", "1h30m", "2.5", " 3 m ")] == [90, 600, 3600, 5400, 2.5, 180]


# ------------------------------------------------------------------------------ polish


def test_version(capsys):
    from dpia.explore.tuning import VERSION

    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"dpia {VERSION}"


def test_a_closed_pipe_ends_quietly():
    """`dpia rules | head -1`: the reader leaves after one line; no BrokenPipeError traceback."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    command = f"{sys.executable} -m dpia rules | head -1"
    for _ in range(3):  # the rule table is larger than a pipe's buffer only with several writes: repeat
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", command], check=False, cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.stdout.startswith("FAMILY") and proc.stdout.count("\n") == 1
        assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 141)


def test_a_closed_pipe_exits_141(monkeypatch, capsys):
    import dpia.cli

    def closed(_args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(dpia.cli, "_rules", closed)
    monkeypatch.setattr(dpia.cli, "COMMANDS", [c._replace(run=closed) if c.name == "rules" else c
                                                for c in dpia.cli.COMMANDS])
    assert main(["rules"]) == dpia.cli.EXIT_BROKEN_PIPE


@pytest.mark.parametrize("size, needle", [
    ("N=2^37", "need 1.02e+03 GiB for the inputs and the result"),
    ("N=2^99999999", "too large (sizes are below 2^63)"),
])
def test_sizes_that_cannot_fit_are_refused_in_one_line(capsys, monkeypatch, size, needle):
    import dpia.programs

    monkeypatch.setattr(dpia.programs, "physical_memory_bytes", lambda: 64 * 2**30)
    for command in ("run", "explore"):
        code, out, err = run(capsys, command, f"{SEED}:dot", "--size", size)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and needle in err and "Traceback" not in err, err


def test_a_memory_error_is_one_line(capsys, monkeypatch):
    import dpia.cli

    def exhausted(_args):
        raise MemoryError

    monkeypatch.setattr(dpia.cli, "COMMANDS", [c._replace(run=exhausted) if c.name == "run" else c
                                                for c in dpia.cli.COMMANDS])
    code, _, err = run(capsys, "run", f"{SEED}:dot", "--size", "N=64")
    assert code == 1 and err == "dpia run: error: out of memory; try smaller sizes\n"


def test_plots_without_matplotlib_are_refused_before_exploring(capsys, monkeypatch):
    import dpia.explore

    def must_not_run(*args, **kwargs):
        raise AssertionError("explored although the plots cannot be drawn")

    monkeypatch.setattr(dpia.explore, "explore", must_not_run)
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = run(capsys, "explore", f"{SEED}:total", "--size", "N=1024", "--candidates", "1", "--plots")
    assert code == 2 and "--plots: plots need matplotlib" in err


def test_run_counts_failures_as_the_exploration_does(capsys, tmp_path):
    """A "slow" candidate (abandoned as far slower than the best) is not a failure."""
    from codegen_opencl.runtime import choose_device, device_key
    from dpia.programs import canonical, load
    from dpia.explore.tuning import Candidate, TuningDB

    _, total = load(f"{SEED}:total")
    db_path, key = tmp_path / "counts.sqlite", device_key(choose_device())
    with TuningDB(db_path) as db:
        for status, stage, time_s in (("failed", "derive", None), ("wrong", "check", None), ("slow", "time", 1.0)):
            db.add(Candidate(canonical(total), {"N": 256}, key, f"program: x\nstep: {status}\n", status,
                             stage=stage, time_s=time_s))
    code, out, err = run(capsys, "run", f"{SEED}:total", "--size", "N=256", "--db", str(db_path), "--json")
    assert code == 0, err
    assert json.loads(out)["candidates"] == {"tried": 3, "failed": 2}


def test_a_best_that_is_the_baseline_is_labelled_default():
    from dpia.cli import _is_the_default
    from dpia.explore.tuning import Candidate

    def made(derivation, baseline):
        return Candidate("p", {"N": 1}, "d", derivation, "ok", time_s=1.0, params={"baseline": baseline})

    assert _is_the_default(made("a", True), None)
    assert _is_the_default(made("a", False), made("a", True))  # the baseline derived what a point measured
    assert not _is_the_default(made("a", False), made("b", True))


def test_show_names_a_preset_a_preset(capsys):
    """`show` shows what `run` executes: on PoCL mm at these sizes gets the CPU preset."""
    code, out, err = run(capsys, "show", f"{SEED}:mm", "--size", "M=16", "--size", "K=8", "--size", "N=32")
    assert code == 0, err
    assert "== variant: preset (dpia.explore.presets)" in out
