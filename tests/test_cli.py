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
                    "local_mem_bytes", "compute_units", "global_mem_bytes"}


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
