"""Points of the generated space derive (issue 12: a point that fails to derive is a wasted
candidate of the search): the causes found by benchmarks/derive_rate.py, each fixed in the
mechanism (the algebra, the slots' constraints, the loop schemes), and a sample of points
across programs that must derive at a high rate."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import functional as fl
from dpia.explore.algorithmic import Heuristics, algorithmic_variants
from dpia.explore.mapping import loop_schemes
from dpia.explore.space import DeviceLimits, SlotLength, Space
from dpia.explore.stages import prepared_body
from functional.derivation import derive
from functional.errors import FunctionalError
from functional.rules.vocabulary import MACROS
from functional.types import VectorType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed  # noqa: E402
import suite  # noqa: E402

CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2)
SUM, MM = fl.infer(seed.total), fl.infer(seed.mm)


def _variant(program, sizes, text: str, heuristics=Heuristics()):
    """Stage 1's variant written `text`, generated from the moves it names only (the same
    sequence, its slots constrained alike, without enumerating the whole vocabulary's)."""
    from dpia.explore.moves import MOVES

    moves = tuple(MOVES[name] for name in dict.fromkeys(step.split("(")[0].split("@")[0] for step in text.split("; ")))
    found = [v for v in algorithmic_variants(prepared_body(program, sizes), sizes, heuristics, moves) if v.text == text]
    assert found, f"stage 1 no longer generates {text}"
    return found[0]


def _derive(space: Space, point):
    """As the evaluator derives a point: the lcm of its values as facts, then the product."""
    try:
        return derive(space.program_for(point), space.strategy(point))
    except FunctionalError:
        return derive(space.program_for(point, product=True), space.strategy(point))


def test_a_tree_reduces_the_vectors_reduce_vectorize_leaves():
    """`reduce (+) (cast vec[f32, 4] 0.0) (as_vector 4 xs)`: the splat of 0.0 is neutral for
    the lane-wise +, so reduce_tree (and reduce_split) apply to it."""
    program = fl.infer(fl.fun([fl.array(64, fl.f32)], lambda xs: fl.reduce(
        fl.add, fl.cast(VectorType(fl.f32, 4), 0.0), fl.as_vector(4, xs))))
    result = MACROS["reduce_tree"].strategy(block=8, local=2)(program.body)
    assert result.ok, result.reason
    assert MACROS["reduce_split"].strategy(n=4)(program.body).ok
    not_neutral = fl.infer(fl.fun([fl.array(64, fl.f32)], lambda xs: fl.reduce(
        fl.add, fl.cast(VectorType(fl.f32, 4), 1.0), fl.as_vector(4, xs))))
    assert not MACROS["reduce_tree"].strategy(block=8, local=2)(not_neutral.body).ok


def test_a_split_of_a_vectors_lanes_in_blocks_is_nested_in_the_vector_width():
    """reduce_vectorize(w), a tree over the w lanes in blocks of `block`, then split_join(n)
    of the w / block blocks: n * block must divide w (at w = block the map has one element
    and split_join refuses every n), so such a point is not one of the skeleton's."""
    sizes = {"N": 1024}
    text = "reduce_vectorize(w=s0)@root; reduce_tree(block=s1, local=s2)@1.0; split_join(n=s3)@1.0.1"
    variant = _variant(SUM, sizes, text)
    assert variant.slots["s1"].divides == "s0" and ("s0", ("s1",)) in variant.slots["s3"].within_slot
    space = Space.build(SUM, sizes, CPU)
    skeleton = space.family(text)
    assert not skeleton.valid({"s0": 4, "s1": 4, "s2": 2, "s3": 2})  # w / block = 1: nothing to split
    assert skeleton.valid({"s0": 16, "s1": 4, "s2": 2, "s3": 2})
    points = space.by_family()[text]
    assert points and all(p.as_dict()["s0"] % (p.as_dict()["s1"] * p.as_dict()["s3"]) == 0 for p in points)
    for point in random.Random(0).sample(points, min(3, len(points))):
        _derive(space, point)


def test_a_length_of_sizes_equal_to_a_trial_value_is_not_that_slot():
    """mm at K = 32: reduce_vectorize over the K / block partial results of a tree; K / 8 = 4
    at the trial values equals the tree's local size's trial, but the width splits K over
    the block (probed: K's value over the block's), not the local size."""
    sizes = {"M": 32, "N": 32, "K": 32}
    text = "split_join(n=s0)@0.1.0.0.1.0.1; reduce_tree(block=s1, local=s2)@0.1.0.0.1.0; reduce_vectorize(w=s3)@0.1.0.0.1.0"
    slot = _variant(MM, sizes, text).slots["s3"]
    assert slot.divides is None and slot.length == SlotLength(32, (("s1", -1),)), slot


def test_a_tree_stage_is_no_scheme_where_the_rules_refuse_the_reduction():
    """A further tree stage needs the reduction's operator associative: over `a - b` the
    loop schemes offer none (even for the program's last reduction, whose result the
    schemes do not otherwise rewrite)."""
    def program(op):
        return fl.infer(fl.fun([fl.array(4096, fl.f32)], lambda xs: fl.reduce(
            op, 0.0, fl.map_global(lambda c: fl.reduce_seq(fl.add, 0.0, c), fl.split(64, xs)))))

    def trees(p):
        return [steps for steps, _ in loop_schemes(p.body, {"N": 4096}, {})
                if any(s.move == "reduce_tree_stage" for s in steps)]

    assert trees(program(fl.add))  # the monoid: a tree stage over the 64 partial results
    assert not trees(program(lambda a, b: a - b))


# ------------------------------------------------------------------ the rate over programs

RATE = 0.95
PROGRAMS = {  # name -> (program, small sizes, heuristics): a reduction, a matrix-vector and a matrix product
    "sum": (seed.total, {"N": 1024}, Heuristics(loops=True)),
    "gemv": (suite.BY_NAME["gemv"].program, {"M": 24, "N": 32}, Heuristics(length=2, loops=True)),
    "mm": (seed.mm, {"M": 32, "N": 32, "K": 32}, Heuristics(length=2)),
}
SKELETONS = 10  # sampled per program, one point each


def test_sampled_points_of_generated_skeletons_derive():
    """Points of skeletons with at least two stage-1 moves (where one move's slot splits a
    length another's made: the causes above) derive at RATE or more."""
    from dpia.explore.moves import ALGORITHMIC, MOVES

    failed, sampled = [], 0
    for name, (program, sizes, heuristics) in PROGRAMS.items():
        space = Space.build(program, sizes, CPU, heuristics=heuristics)
        rng = random.Random(name)
        families = [f for f in space.families if space.by_family()[f.name]
                    and sum(MOVES[s.move].stage == ALGORITHMIC for s in f.steps) >= 2]
        for family in rng.sample(families, min(SKELETONS, len(families))):
            point = rng.choice(space.by_family()[family.name])
            sampled += 1
            try:
                _derive(space, point)
            except FunctionalError as exc:
                failed.append(f"{name}: {point}: {str(exc).splitlines()[0][-160:]}")
    assert sampled >= 2 * SKELETONS
    rate = 1 - len(failed) / sampled
    assert rate >= RATE, f"{len(failed)} of {sampled} sampled points fail to derive:\n" + "\n".join(failed)
