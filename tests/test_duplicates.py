"""Duplicates in an exploration: points whose low-level program an earlier point had.

A duplicate is given its original's outcome (the same kernel: the same measurement), also
when the original is still being measured, and the searches learn from it which slots of a
skeleton do not change the program (dpia.explore.search.inert_slots), so that they stop
proposing points that differ only there.  The driver's bookkeeping is driven here without
worker processes (its on_derived / on_done events, as the pool calls them), then once on
PoCL."""

from __future__ import annotations

import attrs
import pytest

import functional as fl
from dpia.explore import explore
from dpia.explore.driver import _Run
from tests.runs import run_over
from dpia.explore.evaluate import Evaluator, Outcome
from dpia.explore.search import SEARCHES, Search, Tried, Trial, inert_slots
from dpia.explore.space import DeviceLimits, Point, Skeleton, Space, Step

N = fl.nat("N")
TOTAL = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2)
SIZES = {"N": 1 << 12}

SPLIT = Step("reduce_split", (), (), (("n", "s0"),))
GLOBAL = Step("lower_map_global", (1,), (("d", 0),))
# s1 is in no step: its eight values give one program per value of s0
IDLE_SLOT = Skeleton((SPLIT, GLOBAL), {"s0": (64, 128, 256, 512), "s1": (1, 2, 3, 4, 5, 6, 7, 8)})
SPLIT_ONLY = Skeleton((SPLIT,), {"s0": (2, 4, 8, 16, 32, 64, 128, 256)})  # every value its own program


def test_a_slot_is_inert_once_a_duplicate_differs_from_its_original_there_alone():
    f, g = IDLE_SLOT.name, SPLIT_ONLY.name
    a, b = Point(f, {"s0": 64, "s1": 1}), Point(f, {"s0": 64, "s1": 2})
    history = [Trial(a, "ok", 1.0), Trial(b, "ok", 1.0, same_as=a)]
    assert inert_slots(history) == {f: frozenset({"s1"})}
    # differing in two slots teaches nothing alone; with one of them known inert, the other
    c, d = Point(f, {"s0": 128, "s1": 3}), Point(f, {"s0": 256, "s1": 4})
    assert inert_slots([Trial(c), Trial(d, "duplicate", same_as=c)]) == {}
    assert inert_slots(history + [Trial(c), Trial(d, "duplicate", same_as=c)]) == {f: frozenset({"s0", "s1"})}
    # a duplicate of another skeleton's point, or of the baseline (no point), teaches nothing
    assert inert_slots([Trial(Point(g, {"s0": 2})), Trial(a, "duplicate", same_as=Point(g, {"s0": 2}))]) == {}
    assert inert_slots([Trial(a, "ok", 1.0, same_as=None)]) == {}
    tried = Tried(history)
    assert Point(f, {"s0": 64, "s1": 7}) in tried and Point(f, {"s0": 128, "s1": 1}) not in tried
    assert Point(g, {"s0": 64}) not in tried and len(tried | [Point(f, {"s0": 128, "s1": 5})]) == 2


def _kernel(spec) -> str:
    """The low-level program a point derives to in this synthetic space: s1 changes nothing."""
    return f"{spec.family_name}/{spec.params.get('s0')}"


def _seconds(kernel: str) -> float:
    return 1e-3 * (1 + sum(map(ord, kernel)) % 17)


def _blind(search: Search) -> Search:
    """The search as it was: told of duplicates, not of the points they duplicate."""
    return Search(search.name, lambda space, history, rng, count: search.propose(
        space, [attrs.evolve(t, same_as=None) for t in history], rng, count), search.synchronous)


def _explore_synthetic(search: Search) -> _Run:
    """Every batch derived first (so duplicates meet originals still being measured), then
    measured: the driver's events in the order a pool of workers gives them."""
    space = Space.build(TOTAL, SIZES, CPU, [IDLE_SLOT, SPLIT_ONLY])
    run = run_over(space, "total", "test device", None, "r", search, 0, None, None, Evaluator())
    run.baseline_done = True
    for _ in range(200):
        specs = run.propose(4)
        if not specs:
            return run
        measured = [spec for spec in specs if run.on_derived(spec, _kernel(spec), "derivation")]
        for spec in measured:
            run.on_done(spec, Outcome("ok", time_s=_seconds(_kernel(spec))), "derivation")
    raise AssertionError("the search did not exhaust a space of 40 points")


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_searches_stop_proposing_points_that_differ_in_an_inert_slot(name):
    kernels = {f"{IDLE_SLOT.name}/{v}" for v in IDLE_SLOT.choices["s0"]} | {
        f"{SPLIT_ONLY.name}/{v}" for v in SPLIT_ONLY.choices["s0"]}
    blind, learning = _explore_synthetic(_blind(SEARCHES[name])), _explore_synthetic(SEARCHES[name])
    assert blind.duplicates == 40 - len(kernels)  # every point proposed: 28 duplicates
    assert learning.duplicates <= 8  # the first batches' duplicates, then none
    for run in (blind, learning):
        # nothing measured is lost: every kernel measured once; every trial has its kernel's time
        measured = list(run.recorded.values())
        assert sorted(f"{c.params['family']}/{c.params['choices'].get('s0')}" for c in measured) == sorted(kernels)
        for trial in run.trials.values():
            kernel = f"{trial.point.family}/{trial.point.as_dict()['s0']}"
            assert trial.status == "ok" and trial.time_s == _seconds(kernel), trial
            if trial.same_as is not None:
                assert trial.same_as.family == trial.point.family and trial.same_as.as_dict()["s0"] == trial.point.as_dict()["s0"]
    assert inert_slots(list(learning.trials.values())) == {IDLE_SLOT.name: frozenset({"s1"})}


def test_a_duplicate_of_a_candidate_still_measured_gets_its_time_when_it_comes():
    space = Space.build(TOTAL, SIZES, CPU, [IDLE_SLOT])
    run = run_over(space, "total", "test device", None, "r", SEARCHES["random"], 0, None, None, Evaluator())
    first, second = (run._spec(Point(IDLE_SLOT.name, {"s0": 64, "s1": v})) for v in (1, 2))
    assert run.on_derived(first, "k", "d") and not run.on_derived(second, "k", "d")
    assert run.trials[second.index] == Trial(Point(IDLE_SLOT.name, second.params), "duplicate", None,
                                             Point(IDLE_SLOT.name, first.params))
    run.on_done(first, Outcome("ok", time_s=0.25), "d")
    assert run.trials[second.index].status == "ok" and run.trials[second.index].time_s == 0.25
    assert run.duplicates == 1 and run.tried == 1 and not run.waiting


def test_an_exploration_on_pocl_measures_each_kernel_once_and_few_duplicates():
    result = explore(TOTAL, SIZES, seed=3, workers=1, skeletons=[IDLE_SLOT], search="random", timeout_s=60,
                     baseline="default")
    families = [c for c in result.candidates if c.params["family"] == IDLE_SLOT.name]
    assert sorted(c.params["choices"]["s0"] for c in families) == [64, 128, 256, 512]  # each kernel, once
    assert all(c.status in ("ok", "slow") for c in families), [(c.status, c.error) for c in families]
    assert result.duplicates <= 3  # of 28 points that repeat a kernel
