"""The stages of compiling a program are declared once (dpia.pipeline.STAGES), and that list
is what dpia.compile, the exploration, `dpia show --stage`, the tuning database and the
README use: a stage replaced in a custom pipeline is the one that runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import dpia
import functional as fl
from codegen_opencl.runtime import Kernel, RuntimeError_
from dpia.cli import main
from dpia.explore import Evaluator, explore
from dpia.explore.evaluate import _Uploaded
from dpia.explore.tuning import STAGES as DB_STAGES
from dpia.explore.tuning import TuningDB
from dpia.pipeline import PIPELINE, STAGES, Emitted, HostPlan, Options, PipelineError
from dpia.variants import default_variant
from functional.errors import FunctionalError
from functional.infer import infer

from .dpia.cases import CASES
from .dpia.test_translate import SNAPSHOTS

ROOT = Path(__file__).resolve().parents[1]
SEED = str(ROOT / "examples" / "seed.py")
N = fl.nat("N")
DOUBLE = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map_global(lambda x: x * 2.0, xs))  # low level
TOTAL = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))  # high level
MARK = "// emitted by the custom stage"


def marked_emit(host_plan, options):
    """The pipeline's emit stage, with a comment appended (module level: workers unpickle it)."""
    emitted = PIPELINE["emit"].fn(host_plan, options)
    return Emitted(emitted.plan, emitted.text + MARK + "\n", emitted.index)


def refusing_plan(program, options):
    raise FunctionalError("this pipeline plans nothing")


def test_the_stages_in_order_and_the_database_knows_them():
    assert PIPELINE.names == ("derive", "translate", "passes", "plan", "resources", "emit", "build", "run", "check", "time")
    assert PIPELINE.stages == STAGES and DB_STAGES == PIPELINE.names
    given = {"program", "strategy", "session", "inputs", "expected"}  # what a run starts from
    for stage in STAGES:  # every value a stage takes was given before it
        assert set(stage.takes) <= given, stage.name
        given |= set(stage.gives)
        assert stage.doc and "\n" not in stage.doc


def test_unknown_stages_and_missing_values_are_errors():
    with pytest.raises(PipelineError, match="no stage 'link'; the stages are derive, translate"):
        PIPELINE.replace("link", marked_emit)
    with pytest.raises(PipelineError, match="stage passes takes translated"):
        PIPELINE.run({"low": DOUBLE}, Options(), "passes", "emit")
    with pytest.raises(RuntimeError_, match="index type"):
        Kernel(dpia.translate(DOUBLE), source="kernel void program() {}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_emit_stage_gives_the_reviewed_kernels(name):
    """translate .. emit through the pipeline: the snapshots of tests/dpia, unchanged."""
    prog, _ = CASES[name]
    values = PIPELINE.run({"low": prog}, Options(name=name), "translate", "emit")
    assert values["imperative"] == dpia.translate(prog, name=name)
    assert isinstance(values["plan"], HostPlan) and values["source"].text == (SNAPSHOTS / f"{name}.cl").read_text()


def test_compile_runs_the_stages_of_the_pipeline_it_is_given():
    x = np.arange(64, dtype=np.float32)
    custom = PIPELINE.replace("emit", marked_emit)
    kernel = dpia.compile(DOUBLE, pipeline=custom)
    assert kernel.source.endswith(MARK + "\n") and np.array_equal(kernel(x), 2 * x)
    assert MARK not in dpia.compile(DOUBLE).source
    high = dpia.compile(TOTAL, db=False, pipeline=custom)  # a VariantKernel: each variant built by it
    assert high(x) == pytest.approx(x.sum()) and high.source.endswith(MARK + "\n")
    translated = []
    recording = PIPELINE.replace("translate", lambda low, o: translated.append(o.name) or PIPELINE["translate"].fn(low, o))
    assert dpia.translate(DOUBLE, name="twice", pipeline=recording) == dpia.translate(DOUBLE, name="twice")
    assert translated == ["twice"]


def test_a_variants_default_lowering_is_the_derive_stage():
    program = infer(TOTAL)
    low, variant = default_variant(program)
    from functional.schedules import default_schedule

    replayed, _ = PIPELINE["derive"].fn(program, variant.derivation, Options())
    derived, _ = PIPELINE["derive"].fn(program, default_schedule(program), Options())
    assert low == replayed == derived


class _Bindings:
    """A kernel that counts its bindings; each bound copy takes 1 ms."""

    def __init__(self):
        self.binds = 0

    def bind(self, *arrays, uploads=None):
        self.binds += 1
        return type("Bound", (), {"time": lambda self, repeat, warmup: 1e-3})()


def test_a_timing_runs_the_time_stage_on_one_binding():
    counted = _Bindings()
    kernel, inputs = _Uploaded(counted, None), (np.zeros(4, np.float32),)
    assert Evaluator().time(kernel, inputs, None, spec=None) == ("ok", 1e-3)
    assert counted.binds == 1  # the first run and the median: the same device arguments
    assert Evaluator().time(kernel, (np.zeros(4, np.float32),), 1e-5, spec=None) == ("slow", 1e-3)
    assert counted.binds == 2  # other arrays: bound again


def test_the_exploration_reports_the_pipelines_stages(tmp_path):
    """Every candidate's seconds per stage are keyed by the pipeline's stage names (and the
    wait for the device, "queue")."""
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, {"N": 1 << 12}, db=db, max_candidates=1, seed=1, workers=1,
                         evaluator=Evaluator(repeat=3))
        stored = db.candidates(run_id=result.run_id)
    ok = [c for c in stored if c.status == "ok"]
    assert ok and all(set(c.params["stage_s"]) == set(PIPELINE.names) | {"queue"} for c in ok)


def test_the_exploration_runs_a_replaced_stage(tmp_path):
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, {"N": 1 << 12}, db=db, max_candidates=1, seed=1, workers=1,
                         evaluator=Evaluator(repeat=3, pipeline=PIPELINE.replace("plan", refusing_plan)))
        stored = db.candidates(run_id=result.run_id)
    assert stored and all(c.status == "failed" and c.stage == "plan" and "plans nothing" in c.error for c in stored)
    assert all(set(c.params["stage_s"]) == {"derive", "translate", "passes", "plan"} for c in stored)


SHOWN = PIPELINE.between("derive", "build")


@pytest.mark.parametrize("stage", [s.name for s in SHOWN])
def test_show_prints_what_each_stage_gives(capsys, tmp_path, monkeypatch, stage):
    monkeypatch.setenv("DPIA_TUNING_DB", str(tmp_path / "t.sqlite"))
    assert main(["show", f"{SEED}:dot", "--stage", stage, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["stage"] == stage and set(PIPELINE[stage].gives) <= set(shown)
    low, _ = default_variant(infer(_seed_dot()))
    values = PIPELINE.run({"low": low}, Options(name="dot_kernel"), "translate", "emit")
    expected = {"low": str(low), "translated": str(values["translated"]), "imperative": str(values["imperative"]),
                "plan": str(values["plan"]), "source": values["source"].text}
    for name in PIPELINE[stage].gives:
        if name in expected:
            assert shown[name] == expected[name], name
    if stage == "derive":
        assert shown["derivation"].startswith("program: ")
    if stage == "build":
        assert "kernel(s) built for Portable Computing Language" in shown["kernel"]
    assert main(["show", f"{SEED}:dot", "--stage", stage]) == 0
    assert f"== stage {stage}: {PIPELINE[stage].doc}" in capsys.readouterr().out


def test_show_lists_the_pipelines_stages_in_its_help(capsys):
    assert main(["show", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    listed = re.search(r"--stage STAGE .*", text).group(0)
    for stage in SHOWN:
        assert f"{stage.name}: {stage.doc}" in listed
    assert main(["show", f"{SEED}:dot", "--stage", "time"]) == 2  # run, check, time: `dpia run`


def test_the_readme_walks_the_same_stages():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Architecture", 1)[1].split("\n1. ", 1)[0]
    assert re.findall(r"\*\*(\w+)\*\*", section) == list(PIPELINE.names)


def _seed_dot():
    from dpia.programs import load

    return load(f"{SEED}:dot")[1]


def test_the_resources_stage_refuses_what_the_device_cannot_run():
    """With the device's limits and the real sizes in the options, a plan asking more local
    memory than the device has stops at `resources`, naming why; without them it passes."""
    from dpia.explore.space import DeviceLimits
    from dpia.pipeline import DeviceFitError, Options
    from functional import schedules
    from functional.derivation import derive
    from functional.infer import infer

    from dpia.explore.space import with_size_facts
    from examples.seed import mm

    program = infer(with_size_facts(mm, {"M": 16, "N": 16, "K": 16}))
    low, _ = derive(program, schedules.mm_tiled(16, 16, 16))
    sizes = {"M": 64, "N": 64, "K": 64}
    tiny = DeviceLimits(max_work_group_size=1024, local_mem_bytes=1024, compute_units=1)
    values = {"low": low}
    plan = PIPELINE.run(values, Options(), "translate", "resources")["fitting"]  # no limits: unchecked
    assert plan.phases
    with pytest.raises(DeviceFitError, match="local memory"):
        PIPELINE.run(values, Options(sizes=sizes, limits=tiny), "translate", "resources")
