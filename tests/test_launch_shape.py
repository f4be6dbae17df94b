"""The launch shape of kernels without work-groups (dpia.explore.launch): stage 3's slot
`launch`, the local size runtime.Kernel(local_shape=...) gives every kernel of a plan whose
parallel loops are all map_global.  Kernels are compared with the interpreter on PoCL and,
through the conftest's replay, under Oclgrind, at counts that are not multiples of the
local size (the guarded one-iteration form and grid-stride loops alike)."""

from __future__ import annotations

import numpy as np
import pytest

import dpia
import functional as fl
from codegen_opencl.runtime import Kernel, RuntimeError_, fold_shape, launch_plan
from dpia.explore import explore
from dpia.explore.driver import _Run
from tests.runs import run_over
from dpia.explore.evaluate import Evaluator, Outcome
from dpia.explore.launch import DRIVER, LAUNCH, applied_shape, code, launch_options, launch_values, offered, shape_of
from dpia.explore.presets import PRESETS
from dpia.explore.resources import kernel_resources, resource_problem
from dpia.explore.search import SEARCHES, _Features, inert_slots
from dpia.explore.space import DeviceLimits, Point, Skeleton, Space
from dpia.explore.tuning import Candidate, TuningDB
from dpia.pipeline import PIPELINE, Options
from dpia.programs import random_inputs
from dpia.variants import VariantKernel, choose_variant
from examples.suite import jacobi2d_5
from functional.interp import interpret
from functional.syntax import parse
from tests.oclgrind import check_launch

CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2)
GPU = DeviceLimits(max_work_group_size=1024, local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU",
                   max_item_sizes=(1024, 1024, 64))
# constant counts (the printer's guarded one-iteration-per-item form) and symbolic ones (grid-stride)
CONSTANT_2D = "fun(xs: 300.20.f32) => map_global 1 (fun(r) => map_global 0 (fun(x) => x * 2.0 + 1.0) r) xs"
SYMBOLIC_2D = ("fun(M: nat, N: nat, xs: M.N.f32) => "
               "map_global 1 (fun(r) => map_global 0 (fun(x) => x * 2.0 + 1.0) r) xs")
GROUPED = "fun(xs: 256.f32) => join (map_workgroup 0 (fun(r) => map_local 0 (fun(x) => x * 2.0) r) (split 64 xs))"
N = fl.nat("N")
DOT = fl.fun([fl.array(N, fl.f32), fl.array(N, fl.f32)],
             lambda xs, ys: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys))))


# ------------------------------------------------------------------------------ the runtime


def test_a_shape_folds_to_each_kernels_dimensions():
    assert fold_shape((32, 8, 1), 1) == (256,) and fold_shape((32, 4, 2), 2) == (32, 8)
    assert fold_shape((64,), 2) == (64, 1) and fold_shape((8, 8, 4), 3) == (8, 8, 4)
    assert shape_of(code((32, 8))) == (32, 8, 1) and shape_of(DRIVER) is None and code((32, 8)) == 32008001


def test_the_launch_rounds_the_global_size_up_and_covers_every_count():
    body = dpia.translate(parse(CONSTANT_2D)).body
    assert launch_plan(body, {}) == ((20, 300), None)  # the driver's choice: today's launch
    assert launch_plan(body, {}, shape=(32, 8)) == ((32, 304), (32, 8))  # 20 -> 32, 300 -> 304
    # a dimension is not given more rows than its count's power of two: (256, 1) -> (32, 1)
    assert launch_plan(body, {}, shape=(256,)) == ((32, 300), (32, 1))
    symbolic = dpia.translate(parse(SYMBOLIC_2D)).body
    assert launch_plan(symbolic, {"M": 37, "N": 45}, shape=(16, 16)) == ((48, 48), (16, 16))


def test_a_gpu_drivers_launch_has_a_dimension_0_its_local_sizes_divide(monkeypatch):
    """NVIDIA's OpenCL chooses a local size that divides the global one: a prime count got
    groups of one item.  On a GPU the driver's launch rounds dimension 0 up to a multiple of
    DRIVER_MULTIPLE (the loops' guards keep the extra items idle); CPUs keep the count."""
    from codegen_opencl import runtime

    symbolic = dpia.translate(parse(SYMBOLIC_2D)).body
    assert launch_plan(symbolic, {"M": 37, "N": 8191}, driver_multiple=256) == ((8192, 37), None)
    assert launch_plan(symbolic, {"M": 37, "N": 200}, driver_multiple=256) == ((200, 37), None)  # within one group
    assert launch_plan(symbolic, {"M": 37, "N": 8191}) == ((8191, 37), None)
    assert launch_plan(symbolic, {"M": 37, "N": 8191}, shape=(32, 8), driver_multiple=256) == ((8192, 40), (32, 8))
    # the rounded launch computes the same (run on PoCL as if it were a GPU)
    monkeypatch.setattr(runtime, "driver_multiple_for", lambda device: 256)
    program = fl.infer(parse(SYMBOLIC_2D))
    xs = np.random.default_rng(1).standard_normal((3, 1001)).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(program)(xs), interpret(program, xs), rtol=1e-6)


def test_a_kernel_with_work_groups_ignores_the_shape():
    body = dpia.translate(parse(GROUPED)).body
    assert launch_plan(body, {}, shape=(32, 8)) == launch_plan(body, {})
    program = parse(GROUPED)
    x = np.arange(256, dtype=np.float32)
    kernel = Kernel(dpia.translate(program), local_shape=(32, 8))
    np.testing.assert_allclose(kernel(x), interpret(program, x))


@pytest.mark.parametrize("text, sizes", [(CONSTANT_2D, {}), (SYMBOLIC_2D, {"M": 37, "N": 45})])
@pytest.mark.parametrize("shape", [(32, 8), (16, 16), (64,), (8, 8, 4), (512,)])
def test_kernels_launched_with_a_shape_agree_with_the_interpreter(text, sizes, shape):
    program = parse(text)
    x = random_inputs(program, sizes or {}, 0)[0] if sizes else np.random.default_rng(0).random((300, 20), np.float32)
    np.testing.assert_allclose(Kernel(dpia.translate(program), local_shape=shape)(x), interpret(program, x),
                               rtol=1e-6)


def test_a_shaped_launch_is_clean_under_oclgrind():
    for text, shape in ((CONSTANT_2D, (32, 8)), (SYMBOLIC_2D, (16, 16))):
        program = dpia.translate(parse(text))
        x = np.random.default_rng(1).random((30, 21) if "nat" in text else (300, 20), np.float32)
        finding = check_launch(program, (x,), local_shape=shape)
        assert finding.clean, finding


def test_a_shape_is_checked_against_the_device_and_the_other_launch_option():
    program = dpia.translate(parse(CONSTANT_2D))
    with pytest.raises(RuntimeError_, match="both set the local size"):
        Kernel(program, local_size=64, local_shape=(32, 8))
    with pytest.raises(RuntimeError_, match="1 to 3 positive ints"):
        Kernel(program, local_shape=(32, 0))
    x = np.zeros((300, 20), np.float32)
    wide = Kernel(dpia.translate(parse(SYMBOLIC_2D)), local_shape=(1 << 14,))
    with pytest.raises(RuntimeError_, match="work-group of 16384 items exceeds"):
        wide(np.zeros((2, 1 << 14), np.float32))
    assert Kernel(program, local_shape=(32, 8))(x).shape == (300, 20)


# ------------------------------------------------------------------------------- resources


def test_the_resource_analysis_sees_the_shape():
    program = dpia.translate(parse(SYMBOLIC_2D))
    sizes = {"M": 4096, "N": 4096}
    (driver,) = kernel_resources(program, sizes)
    assert driver.local_size is None and driver.work_groups is None
    (shaped,) = kernel_resources(program, sizes, (32, 8))
    assert shaped.local_size == (32, 8) and shaped.work_group_size == 256 and shaped.work_groups == 128 * 512
    assert resource_problem((shaped,), GPU) is None
    narrow = DeviceLimits(1024, 48 * 1024, 132, "GPU", max_item_sizes=(16, 1024, 64))
    assert resource_problem((shaped,), narrow).startswith("work-group size: kernel program asks for 32 items in "
                                                          "dimension 0 > 16")
    (big,) = kernel_resources(program, sizes, (512, 4))
    assert resource_problem((big,), GPU).startswith("work-group size:")  # 2048 > 1024


# ---------------------------------------------------------------------------------- the space


def test_a_2d_stencils_space_offers_shapes_and_a_shaped_point_compiles_and_checks():
    sizes = {"H": 64, "W": 64}
    space = Space.build(jacobi2d_5, sizes, CPU)
    default = space.family("default")
    assert default.choices[LAUNCH] == launch_values(2) and default.choices[LAUNCH][0] == DRIVER
    assert {shape_of(v) for v in default.choices[LAUNCH][1:]} >= {(32, 8, 1), (16, 16, 1), (256, 1, 1)}
    assert not any(s[2] > 1 for v in default.choices[LAUNCH][1:] if (s := shape_of(v)))  # a 2D nest: no 3D shapes
    point = Point("default", {LAUNCH: code((32, 8))})
    assert point in space.points and Point("default", {LAUNCH: DRIVER}) in space.points
    low, _ = PIPELINE["derive"].fn(space.program_for(point), space.strategy(point), Options())
    assert applied_shape(low, launch_options(point.as_dict())) == (32, 8)
    check = space.check_sizes(point)
    options = Options(launch=launch_options(point.as_dict()), sizes=check, limits=CPU)
    kernel = PIPELINE.run({"low": low, "session": None}, options, "translate", "build")["kernel"]
    assert kernel.local_shape == (32, 8, 1)
    grid = random_inputs(jacobi2d_5, check, 0)
    np.testing.assert_allclose(kernel(*grid), interpret(jacobi2d_5, *grid), rtol=1e-5)


def test_a_1d_program_gets_1d_shapes_and_presets_keep_their_launch():
    space = Space.build(DOT, {"N": 1 << 12}, CPU)
    assert space.family("default").choices[LAUNCH] == launch_values(1)  # one map: 1D shapes only
    # a split makes a nest of two maps, which a global launch may map onto two dimensions
    assert launch_values(2) in {f.choices.get(LAUNCH) for f in space.families}
    # a preset keeps the launch it was measured with (the driver's unless it names a shape); a skeleton
    # mapping its maps onto work-groups has no slot
    presets = [preset for kind in PRESETS.values() for preset in kind]
    points = [preset.point.as_dict() for preset in presets]
    assert all(p.get(LAUNCH, DRIVER) == (code(preset.shape) if preset.shape else DRIVER)
               for preset, p in zip(presets, points))
    assert any(p.get(LAUNCH, DRIVER) == DRIVER for p in points) and any(preset.shape for preset in presets)
    assert all(preset.launch() == ({"local_shape": preset.shape} if preset.shape else {}) for preset in presets)
    assert any(LAUNCH in p for p in points) and any(LAUNCH not in p for p in points)
    assert launch_options({LAUNCH: DRIVER}) == {} and launch_options({}) == {}


def test_skeletons_that_map_onto_work_groups_have_no_launch_slot():
    space = Space.build(DOT, {"N": 1 << 12}, CPU)
    grouped = [f for f in space.families if offered(f.steps) is False]
    assert grouped and all(LAUNCH not in f.choices for f in grouped)
    assert all(any(s.move == "lower_map_workgroup" for s in f.steps) for f in grouped)


def test_the_bayesian_model_shares_a_launch_value_across_skeletons():
    space = Space.build(jacobi2d_5, {"H": 64, "W": 64}, CPU)
    features = _Features(space)
    a, b = (Point(f.name, {**{s: v[0] for s, v in f.choices.items()}, LAUNCH: code((32, 8))})
            for f in space.families[:2])
    shared = set(features.columns([a])[0]) & set(features.columns([b])[0])
    c = Point(space.families[1].name, {**b.as_dict(), LAUNCH: DRIVER})
    assert shared - set(features.columns([c])[0])  # the shape's own column, in both skeletons


# ------------------------------------------------------------------------ duplicates, database


def _run(space: Space) -> _Run:
    run = run_over(space, "jacobi", "test device", None, "r", SEARCHES["random"], 0, None, None, Evaluator())
    run.baseline_done = True
    return run


def test_points_that_launch_alike_are_duplicates_and_others_are_not():
    space = Space.build(jacobi2d_5, {"H": 64, "W": 64}, CPU)
    run = _run(space)
    one, two, three, four = (run._spec(Point("default", {LAUNCH: v}))
                             for v in (code((256,)), code((32, 8)), code((64, 4)), DRIVER))
    assert two.launch == {"local_shape": (32, 8, 1)} and four.launch == {}
    assert run.on_derived(one, "k", "d", (256,)) and run.on_derived(two, "k", "d", (32, 8))
    assert run.on_derived(four, "k", "d", None)  # the driver's launch: a kernel of its own
    # a shape folded like another for these kernels: a duplicate, but the slot is not inert
    assert not run.on_derived(three, "k", "d", (32, 8))
    assert run.trials[three.index].same_as is None and inert_slots(list(run.trials.values())) == {}
    run.on_done(two, Outcome("ok", time_s=0.5), "d")
    assert run.trials[three.index].time_s == 0.5
    assert run.recorded[two.index].params["launch"] == {"local_shape": [32, 8, 1]}


def test_without_map_global_the_launch_slot_is_learnt_inert():
    space = Space.build(jacobi2d_5, {"H": 64, "W": 64}, CPU)
    run = _run(space)
    first, second = (run._spec(Point("default", {LAUNCH: v})) for v in (DRIVER, code((32, 8))))
    assert run.on_derived(first, "k", "d", None) and not run.on_derived(second, "k", "d", None)
    assert inert_slots(list(run.trials.values())) == {"default": frozenset({LAUNCH})}


def test_the_database_keeps_and_replays_the_launch(tmp_path):
    from dpia.programs import canonical
    from codegen_opencl.runtime import choose_device, device_key

    device = choose_device()
    program = jacobi2d_5
    sizes = {"H": 40, "W": 36}
    low, variant = choose_variant(program, sizes)
    shaped = {"local_shape": [16, 16, 1]}
    with TuningDB(tmp_path / "t.sqlite") as db:
        key = device_key(device)
        db.add(Candidate(canonical(program), sizes, key, variant.derivation, "ok", time_s=2.0))
        db.add(Candidate(canonical(program), sizes, key, variant.derivation, "ok", time_s=1.0,
                         params={"launch": shaped}))
        assert db.seen(canonical(program), sizes, key, variant.derivation).time_s == 2.0
        assert db.seen(canonical(program), sizes, key, variant.derivation, launch={"local_shape": (16, 16, 1)}
                       ).time_s == 1.0
        assert db.seen(canonical(program), sizes, key, variant.derivation, launch={"local_shape": (8, 8, 1)}) is None
        _, stored = choose_variant(program, sizes, key, db)
        assert stored.kind == "tuned" and stored.launch == shaped
        kernel = VariantKernel(program, device=device, db=db)
        grid = random_inputs(program, sizes, 0)
        np.testing.assert_allclose(kernel(*grid), interpret(program, *grid), rtol=1e-5)
        assert kernel.variant.launch == shaped and kernel.kernel.local_shape == (16, 16, 1)
        own = VariantKernel(program, device=device, db=db, local_size=16)  # the caller's launch wins
        own(*grid)
        assert own.kernel.local_shape is None and own.kernel.local_size == 16


@pytest.mark.slow
def test_an_exploration_measures_launch_shapes_and_stores_them(tmp_path):
    shapes = (DRIVER, code((32, 8)), code((16, 16)))
    skeleton = Skeleton((), {LAUNCH: shapes})
    path = tmp_path / "t.sqlite"
    result = explore(jacobi2d_5, {"H": 128, "W": 128}, db=path, skeletons=[skeleton], search="random",
                     workers=1, baseline="default", max_candidates=4)
    measured = {c.params["choices"][LAUNCH]: c for c in result.candidates if not c.params["baseline"]}
    assert set(measured) == set(shapes), result.report()  # one program: three launches, none a duplicate
    assert all(c.status == "ok" for c in result.candidates), result.report()
    assert measured[code((32, 8))].params["launch"] == {"local_shape": [32, 8, 1]}
    assert "launch" not in result.default.params
    with TuningDB(path) as db:
        rows = db.candidates()
        assert {tuple(r.params.get("launch", {}).get("local_shape", ())) for r in rows} == {(), (32, 8, 1), (16, 16, 1)}


def test_dpia_run_and_show_of_a_stored_best_use_its_launch(capsys, tmp_path):
    import json
    from pathlib import Path

    from codegen_opencl.runtime import choose_device, device_key
    from dpia.cli import main
    from dpia.programs import canonical

    sizes = {"H": 40, "W": 36}
    _, variant = choose_variant(jacobi2d_5, sizes)
    db_path = tmp_path / "t.sqlite"
    with TuningDB(db_path) as db:
        db.add(Candidate(canonical(jacobi2d_5), sizes, device_key(choose_device()), variant.derivation, "ok",
                         time_s=1e-6, params={"launch": {"local_shape": [32, 4, 1]}}))
    suite = f"{Path(__file__).resolve().parents[1] / 'examples' / 'suite.py'}:jacobi2d_5"
    size_args = ["--size", "H=40", "--size", "W=36", "--db", str(db_path)]
    assert main(["run", suite, *size_args, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["variant"] == "tuned" and r["launch"] == {"local_shape": [32, 4, 1]} and r["correct"] is True
    assert main(["run", suite, *size_args]) == 0
    assert "launch    local size 32x4x1 for the kernels without work-groups" in capsys.readouterr().out
    assert main(["show", suite, *size_args]) == 0
    assert "== launch: local size 32x4x1 for the kernels without work-groups" in capsys.readouterr().out
