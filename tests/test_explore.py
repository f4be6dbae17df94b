"""Exploration (issue 5): the generated space, the searches, and explorations on PoCL.

The explorations spawn worker processes; the skeletons and the evaluators injected here are
module-level so they pickle by reference into those processes.  A skeleton is moves of
dpia.explore.moves at paths of the prepared program, with slots for their numbers; a
hand-made one may name a move that does not apply where it stands (it fails at derive)."""

from __future__ import annotations

import itertools
import math
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import functional as fl
from dpia.explore import (
    BudgetError,
    Evaluator,
    ExploreError,
    InputsTooLargeError,
    memory_problem,
    explore,
    failing_rule,
    program_bytes,
    throughput_work,
    write_exploration_plots,
)
from dpia.programs import random_inputs
from dpia.explore.algorithmic import Heuristics, Slot, probed_length
from dpia.explore.launch import DRIVER, LAUNCH
from dpia.explore.search import SEARCHES, Model, Trial, as_written, bayesian, evolutionary, random_search
from dpia.explore.driver import CHECK_WORK_CAP, default_facts
from dpia.explore.space import (
    CHECK_FLOOR,
    BuildCancelled,
    DeviceLimits,
    Point,
    Skeleton,
    SlotLength,
    Space,
    SpaceError,
    Step,
    check_size,
    with_size_facts,
)
from dpia.explore.stages import generate_skeletons
from dpia.explore.tuning import TuningDB
from functional import schedules
from functional.derivation import Derivation, derive
from functional.errors import FunctionalError, StrategyError
from functional.infer import infer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed

N, M, K = fl.nat("N"), fl.nat("M"), fl.nat("K")
TOTAL = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
SCAL = fl.fun([fl.f32, fl.array(N, fl.f32)], seed.scal_body)
GEMV = fl.fun([fl.array(M, fl.array(N, fl.f32)), fl.array(N, fl.f32), fl.array(M, fl.f32), fl.f32, fl.f32],
              seed.gemv_body)
MM = fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
            lambda a, b: fl.map(lambda r: fl.map(lambda c: seed.dot_body(r, c), fl.transpose(b)), a))
GPU = DeviceLimits(max_work_group_size=1024, local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU")
CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2)
SUM_SIZES = {"N": 1 << 20}  # 4 MB: large enough that a good kernel beats the default clearly on PoCL


# ------------------------------------------------------------------------ injected skeletons


def _split(n: str = "s0") -> Step:
    """reduce f z xs -> reduce f z (map (reduce f z) (split n xs)), at the program's root."""
    return Step("reduce_split", (), (), (("n", n),))


def _lower(level: str, path: tuple = (1,)) -> Step:  # the map of partial sums reduce_split makes is at 1
    return Step(f"lower_map_{level}", path, (("d", 0),))


UNTRANSLATABLE = Skeleton((_split(), _lower("local")), {"s0": (256,)})  # local ids outside a work-group
UNDERIVABLE = Skeleton((Step("vectorize", (), (), (("w", "s0"),)),), {"s0": (4,)})  # a reduce, no map to vectorise
SLEEPY = Skeleton((_split(),), {"s0": (512,)})
CRASHY = Skeleton((_split(), _lower("workgroup")), {"s0": (1024,)})
TWIN = Skeleton((_split(), _lower("global")), {"s0": (256,), "s1": (1, 2)})  # s1 is in no step: two points, one program
# What the rules generate for a sum, the CPU's kind of kernel (each item sums vectors of a
# chunk): every one of its points beats the default clearly on PoCL, so the margin checked
# below measures the exploration, not which skeleton the search drew.
VECTOR_SUM = Skeleton((Step("reduce_vectorize_two_stage", (), (), (("n", "s0"), ("w", "s1"))), _lower("global", (1,))),
                      {"s0": (1024, 2048, 4096), "s1": (4, 8, 16)}, {"s1": "s0"})
SUM_SKELETONS = [VECTOR_SUM]


class HangingAndCrashingBuild(Evaluator):
    """The build of SLEEPY's candidates hangs; CRASHY's kills the compiling process."""

    def build(self, program, session, spec):
        if spec.family_name == SLEEPY.name:
            time.sleep(600)
        if spec.family_name == CRASHY.name:
            os._exit(3)
        return super().build(program, session, spec)


# --------------------------------------------------------------------------------- the space


@pytest.fixture(scope="module")
def mm_space():
    """The generated space of mm: its first 12 variants of stage 1 (without split-k's led
    sequences), mapped, with stage 2's loop schemes (135 skeletons in 30 classes)."""
    return Space.build(MM, {"M": 1024, "N": 1024, "K": 1024}, GPU, heuristics=Heuristics(max_variants=12, leading={}))


def test_skeletons_are_generated_from_the_moves_that_apply():
    spaces = {p: Space.build(prog, sizes, CPU) for p, (prog, sizes) in {
        "sum": (TOTAL, {"N": 1 << 12}), "scal": (SCAL, {"N": 1 << 12}), "gemv": (GEMV, {"M": 64, "N": 64})}.items()}
    names = {p: [f.name for f in space.families] for p, space in spaces.items()}
    for p, space in spaces.items():
        assert names[p][0] == "default" and space.family("default").steps == () and len(set(names[p])) == len(names[p])
        assert Point("default", {LAUNCH: DRIVER}) in space.points  # the driver's launch (dpia.explore.launch)
    moves = {p: {st.move for f in space.families for st in f.steps} for p, space in spaces.items()}
    assert {"reduce_split", "reduce_tree", "reduce_vectorize", "lower_map_global"} <= moves["sum"]
    assert "vectorize" not in moves["sum"] and "tile_2d" not in moves["sum"]  # no map of scalars, no nest of maps
    assert {"split_join", "vectorize", "lower_map_workgroup", "lower_map_local"} <= moves["scal"]
    assert {"reduce_two_stage", "lower_map_global"} <= moves["gemv"] and "reduce_tree" not in moves["scal"]
    assert VECTOR_SUM.name in names["sum"]  # the skeleton the explorations below use is one the rules generate
    generated = spaces["sum"].family(VECTOR_SUM.name)
    assert generated.divides == {"s1": "s0"} and set(generated.choices["s1"]) == {2, 4, 8, 16}
    assert {1024, 2048, 4096} <= set(generated.choices["s0"])


def test_the_space_is_the_same_every_time_it_is_built():
    a, b = Space.build(SCAL, {"N": 1 << 10}, CPU), Space.build(SCAL, {"N": 1 << 10}, CPU)
    assert [f.name for f in a.families] == [f.name for f in b.families] and a.points == b.points


def test_slot_values_divide_the_lengths_they_split():
    space = Space.build(MM, {"M": 64, "N": 32, "K": 24}, CPU, heuristics=Heuristics(length=2))
    for f in space.families:
        points = space.by_family()[f.name]
        assert points and all(f.valid(p.as_dict()) for p in points)
        for step in f.steps:
            values = {param: f.choices[slot] for param, slot in step.slots}
            if step.move == "tile_2d" and step.path == ():
                assert all(64 % v == 0 for v in values["n"]) and all(32 % v == 0 for v in values["m"])
            if step.move == "reduce_two_stage" and len(f.steps) == 1:  # the dot products' length K = 24
                assert values["n"] == (2, 3, 4, 6, 8, 12, 24)
    assert any(f.steps and f.steps[0].move == "reduce_two_stage" for f in space.families)
    impossible = Skeleton((_split("s1"), _lower("global")), {"s0": (4,), "s1": (8,)}, {"s1": "s0"})  # 8 cannot divide 4
    built = Space.build(TOTAL, {"N": 1 << 10}, CPU, [impossible, TWIN])
    assert built.infeasible == {"no slot values divide their lengths": 1}
    assert {p.family for p in built.points} == {TWIN.name}


def test_coupled_slots_are_neighbours():
    """local divides block: from block = local = 64 the search still reaches block = 32 in one move."""
    values = (16, 32, 64, 128)
    tree = Skeleton((Step("reduce_tree", (), (), (("block", "s0"), ("local", "s1"))),),
                    {"s0": values, "s1": values}, {"s1": "s0"})
    space = Space.build(TOTAL, {"N": 1 << 12}, CPU, [tree])
    assert len(space.points) == 10  # the pairs with s1 | s0
    point = Point(tree.name, {"s0": 64, "s1": 64})
    near = space.neighbours(point)
    assert Point(tree.name, {"s0": 32, "s1": 32}) in near  # both slots at once
    assert Point(tree.name, {"s0": 32, "s1": 64}) not in near  # not a point alone
    assert {Point(tree.name, {"s0": 128, "s1": 64}), Point(tree.name, {"s0": 64, "s1": 32})} <= set(near)
    assert all(q in set(space.points) for q in near) and point not in near
    assert space.neighbours(point, random.Random(1)) != near or len(near) < 3  # shuffled by the rng
    assert sorted(space.neighbours(point, random.Random(1))) == sorted(near)
    child = space.crossover(point, Point(tree.name, {"s0": 128, "s1": 16}), random.Random(0))
    assert child is None or child in set(space.points)
    assert space.crossover(point, Point("default", {}), random.Random(0)) is None


def test_a_length_other_slots_determine_is_probed_and_constrains_the_points():
    """A constant length at the trial values is read as the product of powers of the slots'
    values that explains how it changes when each slot moves alone (checked with them all
    moved): 3 * s0 * s1, s0 / s1; a sum of slots or a constant of the program is none."""
    powers = (2, 4, 8, 16, 32)
    slots = {"s0": Slot(powers, 8), "s1": Slot(powers, 4, divides="s0"), "s2": Slot(powers, 16)}
    trials = {"s0": 8, "s1": 4, "s2": 16}

    def probed(f):
        return probed_length(lambda v: f(v) if v["s1"] <= v["s0"] else None, f(trials), slots)

    assert probed(lambda v: 3 * v["s0"] * v["s1"]) == SlotLength(3, (("s0", 1), ("s1", 1)))
    assert probed(lambda v: v["s0"] // v["s1"]) == SlotLength(1, (("s0", 1), ("s1", -1)))
    assert probed(lambda v: v["s0"] * v["s0"] * v["s2"]) == SlotLength(1, (("s0", 2), ("s2", 1)))
    assert probed(lambda v: v["s0"] + v["s1"]) is None  # no product of powers
    assert probed(lambda v: 12) is None  # no slot changes it: a constant of the program
    assert probed_length(lambda v: None, 32, slots) is None  # a probe that does not derive: no reading
    # a skeleton's point is valid only where the slot divides its length at the point's values
    copy = Skeleton((Step("vectorized_copy", (), (), (("n", "s2"),)),), {n: powers for n in trials}, {"s1": "s0"},
                    slot_lengths={"s2": SlotLength(1, (("s0", 1), ("s1", 1)))})
    assert copy.valid({"s0": 8, "s1": 4, "s2": 32}) and not copy.valid({"s0": 8, "s1": 2, "s2": 32})
    assert sum(map(copy.valid, copy.all_params())) == len(copy.all_params()) == sum(
        p["s1"] <= p["s0"] and p["s0"] % p["s1"] == 0 and (p["s0"] * p["s1"]) % p["s2"] == 0
        for p in (dict(zip(sorted(trials), v)) for v in itertools.product(powers, repeat=3)))


def test_sizes_are_facts_not_constants():
    tile = Skeleton((Step("tile_2d", (), (), (("n", "s0"), ("m", "s1"))),), {"s0": (8,), "s1": (16,)})
    space = Space.build(MM, {"M": 512, "N": 256, "K": 128}, CPU, [tile])
    point = Point(tile.name, {"s0": 8, "s1": 16})
    assert space.points == (point,)
    assert space.facts(point) == {"M": 16, "N": 16, "K": 16}  # the lcm of the values, where the size allows
    assert space.facts(point, product=True) == {"M": 128, "N": 128, "K": 128}
    assert space.check_sizes(point) == {"M": 64, "N": 64, "K": 64}
    text = str(space.program_for(point))
    assert "M: nat{multiple_of=16}" in text and "N: nat{multiple_of=16}" in text and "512" not in text
    # a generated skeleton knows which sizes each slot splits: only those get its facts
    generated = Space.build(MM, {"M": 512, "N": 256, "K": 128}, CPU, [
        s for s in generate_skeletons(infer(MM), {"M": 512, "N": 256, "K": 128}, Heuristics(length=1))
        if s.name == tile.name])
    assert generated.family(tile.name).slot_sizes == {"s0": ("M",), "s1": ("N",), LAUNCH: ()}
    assert generated.facts(point) == {"M": 8, "N": 16, "K": 1}
    assert generated.check_sizes(point) == {"M": 64, "N": 64, "K": 64}
    n12 = fl.nat("N", multiple_of=12)
    own = with_size_facts(fl.fun([fl.array(n12, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)), {"N": 8})
    assert "multiple_of=24" in str(own)  # the lcm with the program's own fact
    assert check_size(1024, 1 << 18) == 2048 and check_size(4, 1 << 18) == 64 and check_size(8, 40) == 40


def test_bad_sizes_are_refused_and_every_program_has_a_space():
    with pytest.raises(SpaceError, match="no size given for N"):
        Space.build(TOTAL, {}, CPU)
    with pytest.raises(SpaceError, match="not size variables"):
        Space.build(TOTAL, {"N": 64, "Q": 3}, CPU)
    with pytest.raises(SpaceError, match="not a multiple of 4"):
        Space.build(fl.fun([fl.array(fl.nat("N", multiple_of=4), fl.f32)], lambda xs: xs), {"N": 6}, CPU)
    views = Space.build(fl.fun([fl.array(N, fl.f32)], lambda xs: fl.slide(3, 1, xs)), {"N": 64}, CPU)
    assert views.families[0].name == "default" and Point("default", {LAUNCH: DRIVER}) in views.points  # nothing refused
    with pytest.raises(SpaceError, match="no skeleton 'tiles'"):
        views.family("tiles")


# ------------------------------------------------------------------------------ the searches


def test_random_search_is_deterministic_and_does_not_repeat(mm_space):
    space = mm_space
    first = random_search(space, [], random.Random(7), 30)
    assert first == random_search(space, [], random.Random(7), 30)
    assert first != random_search(space, [], random.Random(8), 30)
    assert len(set(first)) == 30 and all(p in space.points for p in first)
    history = [Trial(p, "ok", 1.0) for p in first]
    assert not set(random_search(space, history, random.Random(7), 30)) & set(first)
    small = Space.build(SCAL, {"N": 256}, CPU)
    everything = random_search(small, [], random.Random(0), 10_000)
    assert sorted(everything) == sorted(small.points)  # exhausts the space, then stops


TILES = "tile_2d(n=s0, m=s1)@root; lower_map_workgroup(d=0)@1; lower_map_local(d=0)@1.0.1.0.1.1"


def test_evolutionary_search_breeds_from_the_fastest(mm_space):
    space = mm_space
    seeds = [Point(TILES, {"s0": n, "s1": m}) for n, m in ((16, 16), (8, 16), (16, 8), (32, 32))] + [Point("default", {LAUNCH: DRIVER})]
    assert all(p in space.feasible_points for p in seeds)
    history = [Trial(p, "ok", t) for p, t in zip(seeds, (1e-3, 2e-3, 2e-3, 3e-3, 9e-3))]
    children = evolutionary(space, history, random.Random(3), 12)
    assert children == evolutionary(space, history, random.Random(3), 12)
    assert not set(children) & set(seeds) and len(set(children)) == 12
    assert sum(c.family == TILES for c in children) >= 8  # mostly near the fast tiles
    assert evolutionary(space, [], random.Random(3), 5) == random_search(space, [], random.Random(3), 5)
    assert set(SEARCHES) >= {"random", "evolutionary"}


def _synthetic_time(space: Space, point: Point) -> float:
    """A made-up landscape with interactions: tiles of a work-group are fast, big tiles
    faster, a split of the dot products inside them only pays at k = 8; everything else is
    slow (one best point)."""
    steps = space.family(point.family).steps
    moves = [s.move for s in steps]
    if moves[:1] != ["tile_2d"] or "lower_map_workgroup" not in moves:
        return 1e-2
    d = point.as_dict()
    slots = {(s.move, param): d[slot] for s in steps for param, slot in s.slots}
    t = 1e-3 * (1 + abs(math.log2(slots["tile_2d", "n"] * slots["tile_2d", "m"]) - 10))
    k = slots.get(("reduce_two_stage", "n"))
    t *= 0.6 if k == 8 else 1.0 if k is None else 1.2
    return t


def _best_after(search, space, trials: int, seed: int) -> float:
    rng, history = random.Random(seed), []
    while len(history) < trials:
        batch = search(space, history, rng, 8)
        assert batch and len(set(batch)) == len(batch) and not set(batch) & {t.point for t in history}
        history += [Trial(p, "ok", _synthetic_time(space, p)) for p in batch]
    return min(t.time_s for t in history)


def test_bayesian_search_learns_which_moves_and_values_are_fast(mm_space):
    """Thompson sampling over a model of moves, values and pairs: on a landscape with
    interactions it gets closer to the optimum than random search in as many trials."""
    space = mm_space
    optimum = min(_synthetic_time(space, p) for p in space.points)
    bayes = [_best_after(bayesian, space, 128, seed) / optimum for seed in range(5)]
    rand = [_best_after(random_search, space, 128, seed) / optimum for seed in range(5)]
    # most seeds reach the optimum (a skeleton found late may leave one short), and on
    # average far closer than random search
    assert sorted(bayes)[2] < 1.01 and sum(bayes) < 0.6 * sum(rand) and sum(rand) / len(rand) > 1.5, (bayes, rand)


def test_bayesian_search_leaves_a_big_slow_skeleton_for_a_small_fast_one(mm_space):
    """Hundreds of points of slow skeletons, a few dozen of a fast one: the skeleton is
    chosen first, so the many noisy predictions of the big ones do not win."""
    sizes = {name: len(ps) for name, ps in mm_space.by_family().items()}
    fast = mm_space.family(TILES)
    small_skeleton = Skeleton(fast.steps, {slot: values[:6] for slot, values in fast.choices.items()})  # 36 points
    small = small_skeleton.name
    big = sorted(n for n in sizes if sizes[n] >= 100 and n != TILES)[:8]  # each skeleton is tried once first
    middling = next(n for n in sorted(sizes) if sizes[n] == 10)
    space = Space.build(MM, {"M": 1024, "N": 1024, "K": 1024}, GPU,
                        [small_skeleton, mm_space.family(middling), *(mm_space.family(n) for n in big)])
    assert len(space.by_family()[small]) == 36 and sum(len(space.by_family()[n]) for n in big) >= 400

    def time_of(p):
        if p.family in big:
            return 5e-3 * (1 + 0.1 * (len(str(p)) % 3))
        return 1e-3 if p.family == small else 3e-3

    rng, history = random.Random(0), []
    while len(history) < 48:
        history += [Trial(p, "ok", time_of(p)) for p in bayesian(space, history, rng, 8)]
    later = [t.point.family for t in history[24:]]
    assert sum(f in big for f in later) <= 6 and later.count(small) >= 12, later


def test_the_posterior_draws_have_the_closed_form_mean_and_covariance(mm_space):
    """The weights are drawn without the precision matrix's Cholesky factor (thousands of
    columns): the draws' mean and covariance are the Gaussian posterior's,
    mean = (X^T X / s^2 + D^-1)^-1 X^T y / s^2, covariance its inverse precision."""
    from dpia.explore.search import _Features, _posterior

    features, settings = _Features(mm_space), Model()
    rng = random.Random(3)
    points = [mm_space.sample(rng) for _ in range(12)]
    ys = np.asarray([math.log(_synthetic_time(mm_space, p)) + 0.1 * rng.random() for p in points])
    draws = _posterior(features, points, ys, settings, np.random.default_rng(0), 40000)
    x, prior = features.design(points), features.prior_variances(settings.prior_sd)
    used = np.flatnonzero(x.any(axis=0))[:6]  # weights the points inform (the others keep their prior)
    precision = x.T @ x / settings.noise_sd ** 2 + np.diag(1.0 / prior)
    covariance = np.linalg.inv(precision)
    mean = covariance @ x.T @ (ys - ys.mean()) / settings.noise_sd ** 2
    sd = np.sqrt(np.diag(covariance)[used])
    assert np.all(np.abs(draws[used].mean(axis=1) - mean[used]) < 0.05 * sd + 1e-3)
    assert np.allclose(np.cov(draws[used]), covariance[np.ix_(used, used)], atol=0.05 * sd.max() ** 2)


def test_bayesian_search_is_deterministic_and_learns_from_failures_too(mm_space):
    space = mm_space
    first = random_search(space, [], random.Random(1), Model().warmup)
    history = [Trial(p, "ok", _synthetic_time(space, p)) for p in first[:-2]]
    history += [Trial(first[-2], "failed"), Trial(first[-1], "slow", 5e-2)]
    batch = bayesian(space, history, random.Random(4), 10)
    assert batch == bayesian(space, history, random.Random(4), 10)
    assert len(set(batch)) == 10 and not set(batch) & set(first)
    warm = bayesian(space, history[:3], random.Random(4), 5)  # warming up: the program as written first
    plain = as_written(space, history[:3], random.Random(4), 5)
    assert plain and warm[:len(plain)] == plain and len(set(warm)) == 5
    pending = history + [Trial(p) for p in batch]  # proposed, not finished: not proposed again
    assert not set(bayesian(space, pending, random.Random(5), 10)) & set(batch)
    assert "bayesian" in SEARCHES and SEARCHES["bayesian"].synchronous


def test_inputs_are_made_once_for_every_candidate_of_a_program():
    """Candidates re-declare the program with their own facts; their inputs (seconds to make
    at real sizes) and the interpreter's results are the same and are made once."""
    from dpia.explore.evaluate import _Inputs

    cache, sizes = _Inputs(), {"M": 16, "N": 8, "K": 8}
    tiled = with_size_facts(MM, {"M": 16, "N": 8, "K": 4})
    first = cache.inputs(MM, sizes, 0)
    assert cache.inputs(tiled, sizes, 0) is first and cache.inputs(MM, sizes, 1) is not first
    assert cache.expected(MM, sizes, 0) is cache.expected(MM, sizes, 0)
    early = cache.inputs(MM, {"M": 32, "N": 8, "K": 8}, 2)
    for m in range(3, _Inputs.KEEP + 3):  # more entries than kept: the least recently used go
        cache.inputs(MM, {"M": 16 * m, "N": 8, "K": 8}, 2)
        assert cache.inputs(MM, sizes, 0) is first  # used every time: kept
    assert cache.inputs(MM, {"M": 32, "N": 8, "K": 8}, 2) is not early
    real = cache.inputs(MM, {"M": 64, "N": 64, "K": 64}, 0, pin=True)  # the real sizes: never evicted
    for m in range(1, _Inputs.KEEP + 2):
        cache.inputs(MM, {"M": 8 * m, "N": 16, "K": 8}, 3)
    assert cache.inputs(MM, {"M": 64, "N": 64, "K": 64}, 0, pin=True) is real


def test_failing_rule_is_named():
    with pytest.raises(StrategyError) as info:
        from functional.derivation import derive

        derive(fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)), schedules.global_reduce(7))
    assert failing_rule(str(info.value)) == "reduce_split"
    assert failing_rule("seq(a, b): reduce_tree(128, 32): reduce f z xs: does not hold") == \
        "reduce_tree"


def test_inputs_and_work():
    xs, ys = random_inputs(fl.infer(fl.fun([fl.array(N, fl.f32), fl.array(N, fl.i32)], lambda a, b: a)),
                           {"N": 1000}, 0)
    assert xs.dtype == np.float32 and ys.dtype == np.int32 and np.all(xs != 0) and np.all(ys != 0)
    again, _ = random_inputs(fl.infer(fl.fun([fl.array(N, fl.f32), fl.array(N, fl.i32)], lambda a, b: a)),
                             {"N": 1000}, 0)
    assert np.array_equal(xs, again)
    assert program_bytes(TOTAL, {"N": 1024}) == 4 * 1024 + 4
    assert throughput_work(MM, {"M": 1000, "N": 1000, "K": 1000}) == (2.0, "GFLOP/s")


@pytest.mark.parametrize("budget", [0, -1.5, "10"])
def test_bad_budgets_are_typed_errors(budget):
    with pytest.raises(BudgetError):
        explore(TOTAL, SUM_SIZES, budget_s=budget)
    with pytest.raises(BudgetError):
        explore(TOTAL, SUM_SIZES, max_candidates=budget if budget != -1.5 else -1)
    assert issubclass(BudgetError, ExploreError) and issubclass(ExploreError, FunctionalError)


# ------------------------------------------------------------------------ explorations (PoCL)


@pytest.fixture(scope="module")
def sum_exploration(tmp_path_factory):
    path = tmp_path_factory.mktemp("explore") / "tuning.sqlite"
    seen = []
    with TuningDB(path) as db:
        result = explore(TOTAL, SUM_SIZES, db=db, max_candidates=8, seed=0, workers=2, progress=seen.append,
                         skeletons=SUM_SKELETONS)
    return result, path, seen


def test_exploration_measures_what_dpia_run_uses_first_and_never_reports_slower(sum_exploration):
    result, _, _ = sum_exploration
    assert result.baseline == "preset" and result.candidates[0].derivation == result.default.derivation, \
        result.report()
    assert result.candidates[1].params["family"] == "default_schedule"  # measured beside the preset
    assert result.default.status == "ok" and result.default.params["variant"] == "preset"
    assert result.default.params["family"] == "preset_variant"  # the CPU sum preset (chunked_sum), replayed
    from codegen_opencl.runtime import choose_device
    from dpia.explore.presets import preset_for

    preset, _, derivation = preset_for(TOTAL, SUM_SIZES, DeviceLimits.of(choose_device()))
    assert preset.strategy_name == "chunked_sum" and result.default.derivation == derivation.to_text()
    assert result.best is not None and result.best.time_s <= result.default.time_s and result.speedup >= 1
    assert "speed-up over the preset variant" in result.report()


def test_the_default_baseline_is_timed_as_dpia_run_compiles_it(tmp_path):
    """Without a preset, the baseline is the default schedule: checked size-generic at small
    sizes, but timed (and stored) as `dpia run` compiles it, default_schedule with the sizes
    fixed (dpia.variants.default_variant), which need not be the size-generic derivation at
    these sizes (K-Means: its reductions split by the sizes' divisors).  So the stored best
    replays to the kernel `dpia run` would use without the database."""
    import dpia
    import suite
    from dpia.programs import at_sizes

    entry = next(e for e in suite.SUITE if e.name == "kmeans")
    inputs = entry.make_inputs(np.random.default_rng(0), **entry.small)
    without = dpia.compile(entry.program, db=False)
    without(*inputs)
    sizes = without.sizes_of(inputs)
    facts = {name: math.gcd(size, 256) for name, size in sizes.items()}
    generic = infer(with_size_facts(infer(entry.program), facts))
    generic_low = derive(generic, schedules.default_schedule(generic))[0]
    try:
        generic_kernel = dpia.compile(at_sizes(generic_low, sizes))
    except FunctionalError:  # a cut these sizes make empty (`take 0`): that kernel stays size-generic
        generic_kernel = dpia.compile(generic_low)
    assert generic_kernel.source != without.source  # what would have been timed
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(entry.program, sizes, db=db, max_candidates=1, workers=1)
        assert result.default.status == "ok" and result.default.params.get("at_sizes"), result.report()
        assert result.default.derivation == without.variant.derivation
        stored = dpia.compile(entry.program, db=db)
        np.testing.assert_array_equal(stored(*inputs), without(*inputs))
    assert stored.variant.kind == "tuned" and stored.source == without.source


def test_the_default_candidate_is_checked_where_the_interpreter_is_quick():
    """The default schedule's size facts shrink until the sizes it is checked at multiply to
    at most CHECK_WORK_CAP: a 512^3 grid whose sizes are multiples of 256 was checked at
    512^3, a minute in the interpreter (Jacobi 3D on the H200 timed nothing in 80 s of a 20 s
    budget).  Each fact still divides its size, and the check still spans two multiples."""
    grid = {"D": 512, "H": 512, "W": 512}
    facts = default_facts(grid, CHECK_FLOOR)
    checked = {name: check_size(facts[name], grid[name], CHECK_FLOOR) for name in grid}
    assert math.prod(checked.values()) <= CHECK_WORK_CAP
    assert all(grid[n] % facts[n] == 0 and checked[n] % facts[n] == 0 and checked[n] >= 2 * facts[n] for n in grid)
    # where the check is small already, the facts are each size's power of two up to 256
    assert default_facts({"H": 8192, "W": 8192}, CHECK_FLOOR) == {"H": 256, "W": 256}
    assert default_facts({"N": 1000, "M": 24}, CHECK_FLOOR) == {"N": 8, "M": 8}


def test_the_explorations_best_is_not_slower_than_the_default_schedule(sum_exploration):
    result, _, _ = sum_exploration
    # The best derivation, replayed from its text, and the default schedule, compiled here
    # and timed in alternation (a machine busy with something else slows both alike): the
    # best sums the real input correctly and is not slower than the default, which the
    # search measured first (the default's vectorised chunks are near this machine's memory
    # rate: the margin a scalar default left, 1.25x, is gone).
    from dpia.variants import default_variant

    best, default = _kernel(result.best.derivation), _kernel(default_variant(TOTAL)[1].derivation)
    x = random_inputs(fl.infer(TOTAL), SUM_SIZES, 1)[0]
    assert abs(float(best(x)) - float(x.sum(dtype=np.float64))) < 1e-3 * float(x.sum())
    rounds = [(best.time(x, repeat=200), default.time(x, repeat=200)) for _ in range(5)]
    best_s, default_s = np.median([r[0] for r in rounds]), np.median([r[1] for r in rounds])
    assert best_s <= default_s * 1.1, (rounds, result.report())
    assert result.best.time_s <= result.default.time_s


def _kernel(derivation: str):
    import dpia

    return dpia.compile(Derivation.from_text(derivation).replay())


def test_every_candidate_reaches_the_database(sum_exploration):
    result, path, seen = sum_exploration
    assert 1 <= result.tried <= 8
    with TuningDB(path) as db:
        stored = db.candidates(run_id=result.run_id)
    searched = [c for c in stored if "confirms" not in c.params]
    assert len(searched) == result.tried == len(result.candidates) == len(seen)
    assert {c.params["index"] for c in searched} == {c.params["index"] for c in result.candidates}
    assert all(c.device == result.device and dict(c.sizes) == SUM_SIZES for c in stored)
    assert result.default.params["baseline"] and result.candidates[0].params["index"] == result.default.params["index"]
    # the best and the baseline measured again, alternating, and stored too (TuningDB.best: medians)
    confirmed = [c for c in stored if "confirms" in c.params]
    assert len(confirmed) == len(result.confirmations) == (0 if result.best is result.default else 4)


def test_exploration_plots(sum_exploration, tmp_path):
    pytest.importorskip("matplotlib")
    result, _, _ = sum_exploration
    paths = write_exploration_plots(result, TOTAL, tmp_path / "sum")
    assert all(Path(p).stat().st_size > 0 for p in paths)


def test_a_second_run_reuses_the_database_in_the_same_order(sum_exploration):
    first, path, _ = sum_exploration
    with TuningDB(path) as db:
        again = explore(TOTAL, SUM_SIZES, db=db, max_candidates=1, seed=0, workers=2, skeletons=SUM_SKELETONS)
        stored = db.candidates(run_id=again.run_id)
    # The same seed proposes the same points: every one measured before is found, none
    # re-measured.  The baseline is now the stored best (reused); if the search proposes that
    # point again, it is a duplicate of the baseline.
    assert again.baseline == "tuned" and again.tried == len(stored) == 1
    points = sum(c.params["family"] not in ("preset_variant", "default_schedule") for c in first.candidates)
    assert points <= again.reused + again.duplicates <= points + 2
    assert again.reused >= points
    assert stored[0].derivation not in {c.derivation for c in first.candidates}
    assert again.best is not None and again.best.time_s <= first.best.time_s


def test_failures_timeouts_crashes_and_duplicates_are_counted(tmp_path):
    skeletons = [UNTRANSLATABLE, UNDERIVABLE, SLEEPY, CRASHY, TWIN]
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, {"N": 1 << 16}, db=db, seed=1, workers=2, skeletons=skeletons,
                         evaluator=HangingAndCrashingBuild(repeat=3, slow_factor=math.inf), timeout_s=5,
                         baseline="default")  # no candidate is abandoned as slow: a loaded machine's timing is not under test
        stored = db.candidates(run_id=result.run_id)
    status = {c.params["family"]: (c.status, c.stage) for c in stored}
    assert status[UNTRANSLATABLE.name] == ("failed", "translate")
    assert status[UNDERIVABLE.name] == ("failed", "derive")
    assert status[SLEEPY.name] == ("timeout", "build")
    assert status[CRASHY.name][0] == "failed" and "died" in {c.params["family"]: c.error for c in stored}[CRASHY.name]
    assert status[TWIN.name] == ("ok", None) and status["default_schedule"] == ("ok", None)
    assert result.duplicates == 1 and result.tried == 6 == len(stored)  # twin's second point is the first's
    assert result.by_stage == {"translate": 1, "derive": 1, "build": 2}
    assert result.by_rule == {"vectorize": 1}
    assert result.failed == 4 and result.by_family[SLEEPY.name] == {"timeout": 1}
    assert "failures by stage" in result.report()


def test_time_budget_is_respected():
    """The whole generated space of a sum: generating it (beside the baseline), searching it."""
    started = time.monotonic()
    result = explore(TOTAL, SUM_SIZES, budget_s=4, seed=2, workers=2)
    assert time.monotonic() - started < 4 + 8  # plus starting and stopping the workers
    assert result.elapsed_s < 4 + 3
    assert result.tried + result.abandoned >= 1


def test_the_space_is_built_while_the_baseline_is_measured():
    """mm's space takes seconds to build (tens on a small CPU), the baseline (the preset
    dpia run uses) one: it is measured meanwhile, and a budget that ends before the space is
    built cancels the build and reports the baseline."""
    seen = []
    started = time.monotonic()
    result = explore(MM, {"M": 512, "N": 512, "K": 512}, budget_s=2, workers=1, timeout_s=60, status=seen.append)
    assert any(s.phase == "measuring the baseline while the search space is built" for s in seen)
    assert result.space_s is None and result.default.status == "ok"
    assert {c.params["family"] for c in result.candidates} <= {"preset_variant", "default_schedule"}
    assert result.baseline == "preset" and result.best.time_s <= result.default.time_s
    assert "the budget ended before the search space was built" in result.report()
    assert time.monotonic() - started < 2 + 60 / 2 + 5  # the baseline's overtime at most, the build stopped at once
    with pytest.raises(BuildCancelled):
        Space.build(MM, {"M": 64, "N": 64, "K": 64}, CPU, cancelled=lambda: True)


# ------------------------------------------------------------------------------ probe sizes


def test_probe_sizes_shrink_the_largest_size_within_its_facts():
    from dpia.explore import PROBE_LEVELS, PROBE_WORK, probe_levels, probe_sizes

    mm = fl.fun([fl.array(fl.nat("M", multiple_of=128), fl.array(fl.nat("K", multiple_of=16), fl.f32)),
                 fl.array(fl.nat("K", multiple_of=16), fl.array(fl.nat("N", multiple_of=128), fl.f32))],
                lambda a, b: fl.map(lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
                    lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))), fl.transpose(b)), a))
    sizes = {"M": 4096, "N": 4096, "K": 4096}
    probe = probe_sizes(infer(mm), sizes)
    assert math.prod(probe.values()) <= PROBE_WORK * math.prod(sizes.values())
    assert probe["M"] % 128 == 0 and probe["N"] % 128 == 0 and probe["K"] % 16 == 0
    assert probe_sizes(infer(mm), {"M": 128, "N": 128, "K": 16}) is None  # nothing may shrink
    levels = probe_levels(infer(mm), sizes)  # least work first, each within its fraction
    assert [math.prod(p.values()) for p in levels] == sorted(math.prod(p.values()) for p in levels)
    assert len(levels) == len(PROBE_LEVELS) and levels[-1] == probe
    assert all(math.prod(p.values()) <= w * math.prod(sizes.values()) for p, w in zip(levels, PROBE_LEVELS))
    assert probe_levels(infer(mm), {"M": 128, "N": 128, "K": 16}) == ()


class SlowOnProbes(Evaluator):
    """Every probe of the twin skeleton extrapolates to an hour; a real-size timing would fail."""

    def probe(self, kernel, inputs, sizes, spec):
        assert sizes == spec.probes[0], "the probe with the least work comes first"
        return 3600.0 if spec.family_name == TWIN.name else super().probe(kernel, inputs, sizes, spec)

    def time(self, kernel, inputs, best_s, spec):
        assert spec.family_name != TWIN.name, "a candidate abandoned on its probe was timed at the real sizes"
        return super().time(kernel, inputs, best_s, spec)


def test_a_candidate_slow_on_its_probe_is_abandoned_before_the_real_sizes(tmp_path):
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, SUM_SIZES, db=db, seed=1, workers=2, skeletons=[TWIN], evaluator=SlowOnProbes(repeat=3),
                         baseline="default")
        stored = {c.params["family"]: c for c in db.candidates(run_id=result.run_id)}
    assert stored["default_schedule"].status == "ok"  # the baseline: no best yet, no probe
    assert stored[TWIN.name].status == "slow" and "probe sizes" in stored[TWIN.name].error
    assert result.failed == 0


def test_every_candidate_records_where_its_time_went(tmp_path):
    """Seconds per stage (derive ... time, and "queue": waiting for the device) are stored with
    each candidate, so a slow exploration can be diagnosed from its database."""
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, SUM_SIZES, db=db, seed=1, workers=2, skeletons=[TWIN], evaluator=Evaluator(repeat=3))
        stored = db.candidates(run_id=result.run_id)
    ok = [c for c in stored if c.status == "ok"]
    assert ok
    for c in ok:
        stages = c.params["stage_s"]
        assert {"derive", "translate", "build", "run", "check", "time"} <= set(stages)
        assert all(seconds >= 0 for seconds in stages.values())
        assert 0.0 <= c.params["strided"] <= 1.0  # the search's hint for orders of dimensions (search._other_orders)
    mean = result.stage_seconds()
    assert set(mean) >= {"derive", "build", "time"} and "seconds per candidate: build" in result.report()


# ------------------------------------------------------------------ budgets, progress, memory


class SlowAfterTheBaseline(Evaluator):
    """Every candidate but the baseline takes minutes to time."""

    def time(self, kernel, inputs, best_s, spec):
        if not spec.baseline:
            time.sleep(600)
        return super().time(kernel, inputs, best_s, spec)


class QuickOnlyOnce(Evaluator):
    """Search points time 1 ns when the search measures them and 10 s when measured again:
    a best that was a quiet moment of the machine."""

    def time(self, kernel, inputs, best_s, spec):
        if spec.family is None:
            return super().time(kernel, inputs, best_s, spec)
        return "ok", (10.0 if spec.confirms else 1e-9)


def test_a_best_the_confirmation_does_not_repeat_is_not_kept(tmp_path):
    """The fastest kernel and the baseline are measured twice more, alternating; a kernel
    whose median is then not the fastest is not kept, and the next fastest is confirmed in
    turn (both points here, then perhaps the default schedule): the exploration's best is
    the database's, which dpia run uses."""
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(TOTAL, SUM_SIZES, db=db, max_candidates=4, seed=0, workers=2, skeletons=SUM_SKELETONS,
                         evaluator=QuickOnlyOnce(repeat=3))
        stored_best = db.best(result.program, result.sizes, result.device)
    points = [c for c in result.candidates if c.params["family"] not in ("preset_variant", "default_schedule")]
    assert len(points) == 2 and len(result.confirmations) in (8, 12), result.report()
    roles = [c.params["confirms"] for c in result.confirmations]
    assert all(sorted(roles[i:i + 4]) == ["baseline", "baseline", "best", "best"] for i in range(0, len(roles), 4))
    assert {c.params["confirms_index"] for c in result.confirmations} >= {p.params["index"] for p in points
                                                                           if p.status == "ok"}
    assert result.best.params["family"] in ("preset_variant", "default_schedule")
    assert result.unconfirmed and "not below" in result.unconfirmed and "was not kept" in result.report()
    assert len(result.default.params["measurements"]) == 1 + len(result.confirmations) // 2
    assert stored_best.derivation == result.best.derivation and stored_best.time_s == result.best.time_s


class SlowBaseline(Evaluator):
    """The baseline takes `seconds` to build."""

    seconds: float = 4.0

    def build(self, program, session, spec):
        if spec.baseline:
            time.sleep(self.seconds)
        return super().build(program, session, spec)


class HangingBaseline(SlowBaseline):
    seconds: float = 600.0


def test_the_budget_holds_with_candidates_that_hang():
    seen = []
    started = time.monotonic()
    result = explore(TOTAL, SUM_SIZES, budget_s=8, workers=2, skeletons=SUM_SKELETONS, timeout_s=60,
                     evaluator=SlowAfterTheBaseline(repeat=3), status=seen.append)
    wall = time.monotonic() - started
    assert wall < 8 * 1.1 + 3, wall  # the budget's 10 %, plus stopping the workers
    assert result.default is not None and result.default.status == "ok" and result.best == result.default
    assert result.abandoned >= 1
    # progress from the start, before any candidate is derived, and counts that only grow
    assert seen[0].phase == "building the search space" and seen[0].elapsed_s < 1.0
    assert seen[-1].phase == "stopping"
    assert any(s.phase == "exploring" and s.measuring for s in seen)
    assert [s.done for s in seen] == sorted(s.done for s in seen)
    assert max(b - a for a, b in zip([0.0] + [s.elapsed_s for s in seen], [s.elapsed_s for s in seen])) < 2.5


class OneHangs(Evaluator):
    """The first search point (after the baseline and the default schedule) takes minutes
    to build; the others are quick."""

    def build(self, program, session, spec):
        if spec.index == 2:
            time.sleep(600)
        return super().build(program, session, spec)


def test_a_synchronous_search_proposes_beside_a_straggler(monkeypatch):
    """One hung candidate of a Bayesian batch kept every other worker idle until it timed out
    (an H200 Hotspot exploration: 110 s of 130).  Once only candidates running several median
    candidate times are left, the next batch is proposed beside them."""
    from dpia.explore import driver, workers

    monkeypatch.setattr(driver, "STRAGGLER_MIN_S", 1.0)
    monkeypatch.setattr(driver, "STRAGGLER_FACTOR", 2.0)
    monkeypatch.setattr(workers, "EXCLUSIVE_WAIT_S", 2.0)  # on PoCL built candidates wait for compiles this long
    batch = SEARCHES["bayesian"].batch(2)
    result = explore(TOTAL, SUM_SIZES, budget_s=14, workers=2, skeletons=SUM_SKELETONS, timeout_s=60,
                     evaluator=OneHangs(repeat=3, min_timed_s=0.0, max_timed_s=0.2))
    finished = [c for c in result.candidates if c.status == "ok"]
    # the baseline and the straggler's batch less the straggler, then later batches
    assert len(finished) > batch, (len(finished), result.report())
    assert result.abandoned >= 1  # the straggler, still hung at the deadline


def test_a_baseline_still_running_at_the_deadline_is_measured():
    started = time.monotonic()
    result = explore(TOTAL, SUM_SIZES, budget_s=2, workers=2, skeletons=SUM_SKELETONS, timeout_s=30,
                     evaluator=SlowBaseline(repeat=3))
    assert time.monotonic() - started < 2 + 30 / 2 + 3
    assert result.default is not None and result.default.status == "ok"
    # nothing started after the deadline: only the default schedule, dispatched beside the baseline
    assert {c.params["family"] for c in result.candidates} <= {"preset_variant", "default_schedule"}
    assert result.tried + result.abandoned <= 2


def test_a_baseline_gets_at_most_half_a_timeout_beyond_the_budget():
    started = time.monotonic()
    result = explore(TOTAL, SUM_SIZES, budget_s=2, workers=2, skeletons=SUM_SKELETONS, timeout_s=8,
                     evaluator=HangingBaseline(repeat=3))
    assert time.monotonic() - started < 2 + 8 / 2 + 3
    assert result.default is None and result.abandoned in (1, 2) and result.speedup is None  # and the default


def test_a_problem_too_small_to_fill_the_device_still_has_its_baseline_as_best():
    """Occupancy (work-groups or items per compute unit) prunes the search; it never refuses
    the baseline, what dpia run uses: a dot product of 7 elements leaves every candidate
    under-occupied, and the exploration reports the baseline (found by a bug hunt: `best:
    none`, every candidate refused)."""
    dot = fl.infer(seed.dot)
    result = explore(dot, {"N": 7}, max_candidates=6, workers=1, seed=0)
    assert result.default is not None and result.best is not None
    assert result.best.time_s <= result.default.time_s
    assert any("too few" in kind for kind in result.infeasible)  # the other candidates were pruned


def test_the_default_schedule_can_be_the_baseline():
    result = explore(TOTAL, {"N": 1 << 14}, max_candidates=1, workers=1, skeletons=SUM_SKELETONS,
                     baseline="default", evaluator=Evaluator(repeat=3))
    assert result.baseline == "default" and result.default.params["family"] == "default_schedule"
    with pytest.raises(ExploreError, match="unknown baseline"):
        explore(TOTAL, {"N": 64}, max_candidates=1, baseline="fastest")


def test_a_stored_best_is_the_baseline_of_the_next_exploration(sum_exploration):
    first, path, _ = sum_exploration
    with TuningDB(path) as db:
        again = explore(TOTAL, SUM_SIZES, db=db, max_candidates=1, seed=5, workers=1, skeletons=SUM_SKELETONS)
    assert again.baseline == "tuned" and again.default.derivation == first.best.derivation
    assert again.best.time_s <= first.best.time_s


def test_long_kernels_are_timed_fewer_times():
    e = Evaluator()
    assert e.runs(1e-6) == e.max_repeat and e.runs(0.01) == e.repeat
    assert e.runs(1.0) == 3 and e.runs(4.0) == 1


def test_sizes_whose_inputs_cannot_fit_are_refused():
    total = infer(TOTAL)
    assert memory_problem(total, {"N": 1 << 20}, 1 << 30, 1 << 34) is None
    assert "the device has 1.07 GB" in memory_problem(total, {"N": 1 << 30}, 1 << 30, 1 << 40)
    assert "the host has" in memory_problem(total, {"N": 1 << 30}, 1 << 40, 1 << 32)
    started = time.monotonic()
    with pytest.raises(InputsTooLargeError, match=r"take 4\.4e\+03 GB"):
        explore(TOTAL, {"N": 1 << 40}, budget_s=5)
    assert time.monotonic() - started < 5  # refused before any worker starts


class _Sink:
    """A worker's connection to the explorer, for evaluate._measure driven in this process."""

    def __init__(self):
        self.sent = []

    def send(self, message):
        self.sent.append(message)


def test_a_candidate_is_timed_compiled_at_its_real_sizes_once_it_computes_there_what_the_generic_kernel_does():
    """Checked at small sizes and probed with its size-generic kernel, a candidate is timed
    compiled at its real sizes (what `dpia run` compiles from its derivation), after both
    ran at the real sizes on the device and agreed; where they disagree the size-generic
    kernel is timed and the outcome says why (a device compiler may get one of two
    equivalent kernels wrong: PoCL 3.0 did)."""
    from dpia.explore.evaluate import Evaluator, Spec, _Inputs, _measure, _Uploaded, at_real_sizes
    from dpia.pipeline import PIPELINE
    from codegen_opencl.runtime import choose_device, session_for

    program = with_size_facts(infer(seed.stencil), {"N": 256})
    sizes = {"N": 1 << 12}
    spec = Spec(0, program, None, {}, {"N": 256}, sizes, 0)
    evaluator = Evaluator(repeat=2, min_timed_s=0.0, max_timed_s=0.2)
    session, cache = session_for(choose_device()), _Inputs()
    low, _ = evaluator.derive(spec)
    generic = PIPELINE.compile(low, evaluator.options(spec), session=session)
    real, refused = at_real_sizes(low, spec, evaluator, session,
                                  lambda stage, taken: stage.fn(*taken, evaluator.options(spec)))
    assert refused is None and "const int N" in generic.source and "const int N" not in real["source"].text
    cache.expected(spec.oracle, spec.check_sizes, spec.seed)
    timed = []

    class Recorded(_Uploaded):  # which kernel the time stage runs
        def bind(self, *arrays):
            timed.append(self.source)
            return super().bind(*arrays)

    outcome = _measure(_Sink(), spec, evaluator, _Uploaded(generic, cache.uploads), cache, None,
                       Recorded(real["kernel"], cache.uploads))
    assert outcome.status == "ok" and outcome.at_sizes and outcome.at_sizes_refused is None
    assert timed and set(timed) == {real["kernel"].source}
    doubled = infer(fl.fun([fl.array(sizes["N"], fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs)))
    other = PIPELINE.compile(derive(doubled, schedules.default_schedule(doubled))[0], evaluator.options(spec),
                             session=session)
    timed.clear()
    outcome = _measure(_Sink(), spec, evaluator, Recorded(generic, cache.uploads), cache, None,
                       _Uploaded(other, cache.uploads))
    assert outcome.status == "ok" and not outcome.at_sizes and set(timed) == {generic.source}
    assert "compiled at the real sizes it computes there not what the size-generic kernel does" in \
        outcome.at_sizes_refused


def test_the_real_size_comparison_sees_the_values_a_kernel_leaves_unwritten():
    """The two kernels run with poisoned buffers: one that writes only half its output
    disagrees even where the memory it is given last held the other kernel's results."""
    import numpy as np

    from dpia.explore.evaluate import Evaluator, Spec, _Inputs, _measure, _Uploaded
    from dpia.pipeline import PIPELINE
    from codegen_opencl.runtime import choose_device, session_for

    n = 1 << 12
    program = infer(fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs)))
    spec = Spec(0, program, None, {}, {}, {}, 0)
    evaluator = Evaluator(repeat=2, min_timed_s=0.0, max_timed_s=0.2)
    session, cache = session_for(choose_device()), _Inputs()
    low, _ = evaluator.derive(spec)
    whole = PIPELINE.compile(low, evaluator.options(spec), session=session)
    halves = infer(fl.fun([fl.array(n, fl.f32)], lambda xs: fl.join(fl.map(
        lambda half: fl.map(lambda x: x * 2.0, half), fl.split(n // 2, xs)))))
    half = PIPELINE.compile(derive(halves, schedules.default_schedule(halves))[0], evaluator.options(spec),
                            session=session)
    x = np.arange(n, dtype=np.float32)
    assert np.array_equal(half(x), whole(x))  # both right: the poisoning itself is what is tested

    class Unwritten:  # the same kernel leaving its second half unwritten (as PoCL's wrong one did)
        def __init__(self, k):
            self._k = k

        def __call__(self, *arrays, poison=False):
            got = self._k(*arrays)
            if poison:
                got[n // 2:] = np.frombuffer(b"\xff" * 4, np.float32)[0]
            return got

        def __getattr__(self, name):
            return getattr(self._k, name)

    cache.expected(spec.oracle, spec.check_sizes, spec.seed)
    outcome = _measure(_Sink(), spec, evaluator, _Uploaded(whole, cache.uploads), cache, None, Unwritten(half))
    assert outcome.status == "ok" and not outcome.at_sizes and "relative error" in outcome.at_sizes_refused
    # the runtime's poisoning: before the launch every output buffer holds POISON bytes
    import pyopencl as cl

    from codegen_opencl.runtime import POISON

    _, outputs, _ = whole._prepare((x,), poison=True)
    (_, host, buffer), = outputs
    cl.enqueue_copy(whole.queue, host, buffer)
    whole.queue.finish()
    assert host.tobytes() == bytes([POISON]) * host.nbytes
    assert np.array_equal(whole(x, poison=True), x * 2.0)  # what the kernel writes replaces the poison


def test_a_candidate_uploads_its_real_size_inputs_once_per_worker(monkeypatch):
    """The agreement runs and the timings at the real sizes all read the worker's held device
    copies (runtime.Uploads): uploading GEMV^T's 1 GiB matrix for each poisoned run held the
    device for 0.9 s of the 2.3 s each candidate took on the H200."""
    import codegen_opencl.runtime as runtime
    from dpia.explore.evaluate import Evaluator, Spec, _Inputs, _measure, _Uploaded, at_real_sizes
    from dpia.pipeline import PIPELINE

    program = with_size_facts(infer(seed.stencil), {"N": 256})
    sizes = {"N": 1 << 12}
    spec = Spec(0, program, None, {}, {"N": 256}, sizes, 0)
    evaluator = Evaluator(repeat=2, min_timed_s=0.0, max_timed_s=0.2)
    session, cache = runtime.session_for(runtime.choose_device()), _Inputs()
    low, _ = evaluator.derive(spec)
    generic = PIPELINE.compile(low, evaluator.options(spec), session=session)
    real, _ = at_real_sizes(low, spec, evaluator, session, lambda stage, taken: stage.fn(*taken, evaluator.options(spec)))
    cache.expected(spec.oracle, spec.check_sizes, spec.seed)
    uploaded = []
    upload = runtime._upload
    monkeypatch.setattr(runtime, "_upload", lambda context, data: uploaded.append(data.size) or upload(context, data))
    for _ in range(2):  # two candidates of one worker
        outcome = _measure(_Sink(), spec, evaluator, _Uploaded(generic, cache.uploads), cache, None,
                           _Uploaded(real["kernel"], cache.uploads))
        assert outcome.status == "ok" and outcome.at_sizes
    assert uploaded.count(sizes["N"]) == 1, uploaded


def test_a_candidates_timeout_is_a_share_of_the_budget():
    """A synchronous search waits for its whole batch: one hanging candidate stalled a 130 s
    H200 exploration for 110 s under the fixed 120 s timeout.  A quarter of the budget,
    within [60, 120] s; 120 s without a budget."""
    from dpia.explore.driver import candidate_timeout

    assert candidate_timeout(300) == pytest.approx(75.0)
    assert candidate_timeout(10) == 60.0 and candidate_timeout(600) == 120.0 and candidate_timeout(None) == 120.0


def test_an_exploration_at_a_prime_size_checks_and_times_cut_points(tmp_path):
    """At a prime size the space's splits come from cuts (map_cut, reduce_cut); their points
    are checked at sizes with the real remainder (Skeleton.residues), compiled at the real
    size and timed, and the best is correct there."""
    program = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, fl.map(lambda x: x * x, xs)))
    sizes = {"N": 4099}
    found = generate_skeletons(program, sizes, Heuristics(length=2))
    cut = [s for s in found if s.steps and s.steps[0].move == "reduce_cut"
           and any(st.move in ("reduce_split", "reduce_tree") for st in s.steps)][:4]
    assert cut and all(s.residues == {"N": dict(s.steps[0].fixed)["a"]} for s in cut)
    with TuningDB(tmp_path / "t.sqlite") as db:
        result = explore(program, sizes, db=db, seed=0, workers=1, skeletons=[found[0]] + cut, baseline="default",
                         max_candidates=6)
        stored = db.candidates(run_id=result.run_id)
    measured = [c for c in stored if "_cut(" in c.params["family"] and c.status in ("ok", "slow")]  # checked, timed
    assert measured, [(c.params["family"], c.status, c.error) for c in stored]
    import dpia

    xs = np.random.default_rng(0).standard_normal(4099).astype(np.float32)
    got = dpia.compile(program, db=tmp_path / "t.sqlite")(xs)
    assert abs(float(got) - float(np.sum(xs.astype(np.float64) ** 2))) < 1e-3 * float(np.sum(xs.astype(np.float64) ** 2))
