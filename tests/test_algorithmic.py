"""Stage 1 of the generated space (dpia.explore.algorithmic): the macro moves of
dpia.explore.moves at every position, in bounded sequences pruned by heuristics; then mapped
by stage 2 (dpia.explore.mapping) and completed by the default lowering, checked against the
interpreter on PoCL."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import attrs

import numpy as np
import pytest

import functional as fl
from dpia.explore.algorithmic import (
    ANYWHERE,
    EXCLUSIONS,
    INSIDE,
    OVERLAPPING,
    REGISTER_BLOCKINGS,
    TILINGS,
    Heuristics,
    Variant,
    acceptable,
    add_mul_distance,
    algorithmic_variants,
    divisor_values,
    excluded_by,
    map_depth,
    out_of_order,
    positions,
    resplits,
    split_kind,
    trial_slots,
)
from dpia.explore.launch import DRIVER, LAUNCH
from dpia.explore.moves import MOVES, VECTOR_WIDTHS
from dpia.explore.space import DeviceLimits, Point, Skeleton, SlotLength, Space, SpaceError, Step
from dpia.explore.stages import generate_skeletons, prepared_body
from functional.derivation import derive
from functional.errors import FunctionalError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed  # noqa: E402

M, N, K = (fl.nat(n) for n in ("M", "N", "K"))
MM = fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
            lambda a, b: fl.map(lambda r: fl.map(lambda c: seed.dot_body(r, c), fl.transpose(b)), a))
SCAL = fl.fun([fl.f32, fl.array(N, fl.f32)], seed.scal_body)
TOTAL = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
GEMV = fl.fun([fl.array(M, fl.array(N, fl.f32)), fl.array(N, fl.f32), fl.array(M, fl.f32), fl.f32, fl.f32],
              seed.gemv_body)
MM_SIZES = {"M": 128, "N": 128, "K": 128}
CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2)


@pytest.fixture(scope="module")
def mm_body():
    return prepared_body(MM, MM_SIZES)


@pytest.fixture(scope="module")
def mm_variants(mm_body):
    return algorithmic_variants(mm_body, MM_SIZES)


def _moves(variant) -> list[str]:
    return [s.move for s in variant.steps]


def test_macros_tile_block_and_split_the_matrix_product(mm_variants):
    assert mm_variants[0].steps == () and mm_variants[0].slots == {}  # the program itself first
    firsts = {_moves(v)[0] for v in mm_variants[1:]}
    assert {"tile_2d", "register_blocking_2d", "register_blocking_1d", "reduce_two_stage", "split_join"} <= firsts
    assert any(_moves(v)[:2] == ["tile_2d", "reduce_two_stage"] for v in mm_variants)  # sequences of two
    assert len({str(v.expr) for v in mm_variants}) == len(mm_variants)  # distinct programs only
    assert all(len(set(_moves(v))) == len(v.steps) for v in mm_variants)  # each move once per sequence
    # breadth first, then split-k's led sequences (each after its prefixes)
    plain = [v for v in mm_variants if not v.steps or v.steps[0].move not in Heuristics().leading]
    assert [len(v.steps) for v in plain] == sorted(len(v.steps) for v in plain)
    assert mm_variants[:len(plain)] == plain and len(mm_variants) <= Heuristics().max_variants
    for v in mm_variants:  # every slot of a step is the variant's, with values to draw from
        assert {slot for s in v.steps for _, slot in s.slots} == set(v.slots)
        assert all(s.values and s.trial in s.values for s in v.slots.values())


def test_a_slot_inside_another_slots_split_divides_it(mm_variants):
    """A register block or split inside a split of length s0 draws from s0's divisors (a
    proper one for its trial where one is a candidate: a block smaller than its tile)."""
    nested = [(v, name, slot) for v in mm_variants for name, slot in v.slots.items() if slot.divides]
    assert nested
    for v, name, slot in nested:
        parent = v.slots[slot.divides]
        assert slot.trial <= parent.trial and parent.trial % slot.trial == 0, v.text
        assert slot.trial < parent.trial or not any(d < parent.trial and parent.trial % d == 0 for d in slot.values)
        assert all(max(parent.values) % value == 0 for value in slot.values)


def _led(variant, h: Heuristics) -> bool:
    """Whether a leading move (split-k) begins the sequence."""
    return bool(variant.steps) and variant.steps[0].move in h.leading


def test_heuristics_prune_deep_nesting_and_distant_products(mm_body, mm_variants):
    h = Heuristics()
    assert all(acceptable(v.expr, h, tuple(_moves(v))) for v in mm_variants)
    plain = [v for v in mm_variants if not set(_moves(v)) & set(h.allowances)]  # no allowance: the bounds themselves
    assert plain and all(map_depth(v.expr) <= h.max_map_depth and add_mul_distance(v.expr) <= h.max_add_mul_distance
                         for v in plain)
    assert any(map_depth(v.expr) > h.max_map_depth for v in mm_variants)  # a blocked tile is allowed deeper
    shallow = algorithmic_variants(mm_body, MM_SIZES, Heuristics(length=1, max_map_depth=5, allowances={}))
    # one move, and a leading one (split-k) before it, which is not counted
    assert len(shallow) > 1 and all(map_depth(v.expr) <= 5 and len(v.steps) <= 1 + _led(v, h) for v in shallow)
    assert "tile_2d" not in {m for v in shallow for m in _moves(v)}  # a tile nests 6 maps deep
    assert len(shallow) < len(mm_variants)
    near = algorithmic_variants(mm_body, MM_SIZES, Heuristics(length=1, max_add_mul_distance=1, allowances={}))
    assert all(add_mul_distance(v.expr) <= 1 for v in near)
    assert not {"register_blocking_2d", "reduce_two_stage"} & {m for v in near for m in _moves(v)}  # distance 3
    assert map_depth(mm_body) == 3 and add_mul_distance(mm_body) == 1  # map, map, map of products
    few = algorithmic_variants(mm_body, MM_SIZES, Heuristics(max_variants=5, leading={}))
    assert [v.text for v in few] == [v.text for v in mm_variants[:5]]  # the enumeration's first five


def test_a_program_without_a_place_for_the_moves_has_only_itself():
    program = fl.fun([fl.array(M, fl.array(N, fl.f32))], lambda a: fl.transpose(a))
    variants = algorithmic_variants(prepared_body(program, {"M": 64, "N": 64}), {"M": 64, "N": 64})
    assert [v.steps for v in variants] == [()]
    assert [s.name for s in generate_skeletons(fl.infer(program), {"M": 64, "N": 64})] == ["default"]


def test_slot_values_are_divisors_of_the_length_they_split():
    assert divisor_values(1 << 20) == tuple(1 << k for k in range(1, 17))  # powers of two, at most 2^16
    assert divisor_values(24) == (2, 3, 4, 6, 8, 12, 24)  # few powers of two: the other divisors too
    assert divisor_values(48) == (2, 4, 8, 16) and divisor_values(48, powers_of_two=True) == (2, 4, 8, 16)
    assert divisor_values(7) == (7,) and divisor_values(1) == ()
    body = prepared_body(SCAL, {"N": 96})
    slots = trial_slots(MOVES["vectorize"], body, {"N": 96}, {}, 0)
    assert slots["w"][0] == "s0" and slots["w"][1].values == (2, 4, 8, 16)  # OpenCL's widths dividing 96
    assert trial_slots(MOVES["vectorize"], body, {"N": 7}, {}, 0) is None  # no width divides 7
    assert set(VECTOR_WIDTHS) == {2, 4, 8, 16}


def test_a_map_of_scalars_is_vectorised():
    import dpia

    sizes = {"N": 256}
    variants = algorithmic_variants(prepared_body(SCAL, sizes), sizes)
    vectorised = [v for v in variants if _moves(v) == ["vectorize"]]
    assert len(vectorised) == 1 and vectorised[0].slots["s0"].values == (2, 4, 8, 16)
    skeletons = {s.name: s for s in generate_skeletons(fl.infer(SCAL), sizes)}
    skeleton = skeletons["vectorize(w=s0)@root; lower_map_global(d=0)@1"]
    space = Space.build(SCAL, sizes, CPU, [skeleton])
    point = next(p for p in space.points if p.as_dict() == {"s0": 8, LAUNCH: DRIVER})
    low, _ = derive(space.program_for(point), space.strategy(point))
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    kernel = dpia.compile(low)
    np.testing.assert_allclose(kernel(np.float32(2.0), x), 2.0 * x, rtol=1e-6)
    assert "(global const float8*)" in kernel.source  # one aligned wide read, not vload8


@pytest.fixture(scope="module")
def mm_skeletons():
    """Sequences of up to two moves: enough for the variants these tests look up (a third move
    would triple the time to generate them, which test_generated_space and test_presets pay)."""
    return {s.name: s for s in generate_skeletons(fl.infer(MM), MM_SIZES, Heuristics(length=2))}


@pytest.mark.parametrize("moves, mapping", [(("tile_2d", "reduce_two_stage"), "lower_map_workgroup"),
                                            (("reduce_two_stage",), "lower_map_global")])
def test_a_mapped_variant_computes_the_product(mm_skeletons, moves, mapping):
    import dpia

    skeleton = next(s for s in mm_skeletons.values()
                    if tuple(st.move for st in s.steps if MOVES[st.move].stage == "algorithmic") == moves
                    and any(st.move == mapping for st in s.steps))
    space = Space.build(MM, MM_SIZES, CPU, [skeleton])
    point = next(p for p in space.points
                 if {v for k, v in p.as_dict().items() if k != LAUNCH} <= {8, 16})  # moderate values
    low, derivation = derive(space.program_for(point), space.strategy(point))
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((64, 128), dtype=np.float32), rng.standard_normal((128, 64), dtype=np.float32)
    np.testing.assert_allclose(dpia.compile(low)(a, b), a @ b, rtol=1e-4, atol=1e-4)
    assert derivation.steps and mapping.removeprefix("lower_") in str(low)


def test_a_step_where_its_move_does_not_apply_fails_at_derive_naming_it():
    wrong_place = Skeleton((Step("reduce_two_stage", (0,), (), (("n", "s0"),)),), {"s0": (8,)})
    missing = Skeleton((Step("tile_2d", (9, 9, 9), (), (("n", "s0"), ("m", "s1"))),), {"s0": (8,), "s1": (8,)})
    space = Space.build(MM, MM_SIZES, CPU, [wrong_place, missing])
    for point in space.points:
        with pytest.raises(FunctionalError) as info:
            derive(space.program_for(point), space.strategy(point))
        assert point.family.split("(")[0] in str(info.value)
    assert "no node at 9.9.9" in _failure(space, space.points[1])
    with pytest.raises(SpaceError, match="no skeleton 'tile'"):
        space.family("tile")


def _failure(space, point) -> str:
    try:
        derive(space.program_for(point), space.strategy(point))
    except FunctionalError as exc:
        return str(exc)
    raise AssertionError(f"{point} derived")


def test_the_space_of_a_matrix_product_maps_its_variants_onto_opencl(mm_skeletons):
    names = list(mm_skeletons)
    assert names[0] == "default" and len(set(names)) == len(names)
    mapped = [s for s in mm_skeletons.values() if s.steps and MOVES[s.steps[-1].move].stage == "mapping"]
    moves = {st.move for s in mapped for st in s.steps}
    assert {"lower_map_global", "lower_map_workgroup", "lower_map_local"} <= moves
    # every variant of stage 1 appears unmapped too (the default lowering maps it)
    unmapped = {s.name for s in mm_skeletons.values() if all(MOVES[st.move].stage == "algorithmic" for st in s.steps)}
    assert "tile_2d(n=s0, m=s1)@root" in unmapped and "default" in unmapped
    # a 2D nest gets both orders of global dimensions
    assert {"lower_map_global(d=1)@root; lower_map_global(d=0)@0.1.0",
            "lower_map_global(d=0)@root; lower_map_global(d=1)@0.1.0"} <= set(names)


# ------------------------------------------------------------------ bounds on longer sequences


SGEMM = ["tile_2d", "tile_reduction", "register_blocking_2d"]  # the register-blocked SGEMM's algorithmic part


def test_the_register_blocked_matrix_product_is_among_the_length_three_sequences(mm_variants):
    assert Heuristics().length == 3
    found = [v for v in mm_variants if _moves(v) == SGEMM]
    assert len(found) == 1
    (v,) = found
    tile, k_tile, block = v.steps
    assert [p for p, _ in tile.slots] == ["n", "m"] and [p for p, _ in block.slots] == ["l1", "l2"]
    # the register block divides the work-group tile; the k-tiles split K
    assert [v.slots[name].divides for _, name in block.slots] == [name for _, name in tile.slots]
    assert v.slots[k_tile.slots[0][1]].sizes == ("K",)


def test_the_register_blocked_matrix_product_computes_it(mm_variants):
    import dpia

    variant = next(v for v in mm_variants if _moves(v) == SGEMM)  # its default mapping: what the completion does
    space = Space.build(MM, MM_SIZES, CPU, [Skeleton(variant.steps)])
    point = Point(space.families[-1].name, {"s0": 16, "s1": 16, "s2": 8, "s3": 4, "s4": 2})  # 16x16 tiles, k 8, 4x2 blocks
    low, _ = derive(space.program_for(point), space.strategy(point))
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((64, 128), dtype=np.float32), rng.standard_normal((128, 64), dtype=np.float32)
    np.testing.assert_allclose(dpia.compile(low)(a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_each_sequence_length_has_its_budget_filled_round_robin(mm_body, mm_variants):
    h = Heuristics()
    counts = Counter(len(v.steps) for v in mm_variants if not v.steps or v.steps[0].move not in h.leading)
    assert all(counts[d] <= h.budget(d) for d in (1, 2, 3)) and counts[3] == h.budget(3)  # mm has more than 128
    led = [v for v in mm_variants if v.steps and v.steps[0].move in h.leading]  # split-k's, within their own budget
    assert 1 < len(led) <= min(h.leading_budget, h.max_variants // 4)
    small = algorithmic_variants(mm_body, MM_SIZES, Heuristics(per_depth=(3, 5, 4), leading={}))
    assert [len(v.steps) for v in small] == [0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3]  # shorter ones kept whole
    assert [v.text for v in small[1:4]] == [v.text for v in mm_variants[1:4]]
    # round robin: the five of length 2 extend all three of length 1
    assert {v.steps[0] for v in small if len(v.steps) == 2} == {v.steps[0] for v in small[1:4]}


def test_exclusions_are_declared_with_reasons_over_moves_of_the_vocabulary():
    for ex in EXCLUSIONS:
        assert ex.earlier and ex.later and (ex.earlier | ex.later) <= set(MOVES) and len(ex.reason) > 20
        assert ex.place in (INSIDE, OVERLAPPING, ANYWHERE)
    assert {split_kind("reduce_vectorize_two_stage", "n"), split_kind("reduce_vectorize_two_stage", "w")} == {
        "reduction chunk", "vector lanes"}
    assert split_kind("fusion", "") is None


NEST = fl.fun([fl.array(M, fl.array(N, fl.f32))], lambda xss: fl.map(lambda r: fl.map(lambda x: x * 2.0, r), xss))


def test_an_interchange_is_not_undone_by_another_inside_it():
    sizes = {"M": 32, "N": 64}
    body = prepared_body(NEST, sizes)
    twice = Heuristics(length=2, per_move=2)
    allowed = algorithmic_variants(body, sizes, attrs.evolve(twice, exclusions=()))
    assert any(_moves(v) == ["interchange", "interchange"] for v in allowed)  # the exclusion is what stops it
    assert not any(_moves(v)[:2] == ["interchange", "interchange"] for v in algorithmic_variants(body, sizes, twice))


def test_no_move_of_a_sequence_breaks_an_exclusion(mm_variants):
    h = Heuristics()
    for v in mm_variants:
        for k in range(1, len(v.steps)):
            earlier = Variant(v.steps[:k], v.slots, v.expr, v.places[:k])
            assert excluded_by(earlier, v.steps[k].move, v.steps[k].path, h) is None or v.places[k - 1] is None, v.text
        moves = _moves(v)
        for k, m in enumerate(moves):
            if m in REGISTER_BLOCKINGS:
                assert not set(moves[k + 1:]) & (TILINGS | REGISTER_BLOCKINGS | {"interchange", "interchange_swap"})


def test_a_length_is_not_split_again_by_the_same_kind_of_move(mm_variants):
    for v in mm_variants:
        kinds = {name: split_kind(st.move, p) for st in v.steps for p, name in st.slots}
        for st in v.steps:
            for p, name in st.slots:
                parent = v.slots[name].divides
                if parent and parent not in {n for _, n in st.slots}:  # a slot of an earlier move
                    assert kinds[parent] != split_kind(st.move, p), v.text
    sizes = {"N": 1024}
    body = prepared_body(TOTAL, sizes)
    two_stage = next(v for v in algorithmic_variants(body, sizes, Heuristics(length=1)) if _moves(v) == ["reduce_split"])
    chunk = [(path, node) for path, node in positions(two_stage.expr) if MOVES["reduce_split"].site(node)][-1]
    for move, again in (("reduce_two_stage", True), ("reduce_tree", True), ("reduce_vectorize", False)):
        slots = trial_slots(MOVES[move], chunk[1], sizes, two_stage.slots, 1)
        assert slots and resplits(two_stage, move, chunk[0], slots) is again, move


TWO_SUMS = fl.fun([fl.array(N, fl.f32), fl.array(M, fl.f32)],
                 lambda xs, ys: fl.reduce(fl.add, 0.0, xs) * fl.reduce(fl.add, 0.0, ys))


def _disjoint(a: tuple, b: tuple) -> bool:
    return a[: len(b)] != b and b[: len(a)] != a


def test_moves_at_disjoint_places_are_tried_in_one_order_with_the_same_programs():
    sizes = {"N": 256, "M": 128}
    body = prepared_body(TWO_SUMS, sizes)
    every = Heuristics(length=2, per_move=2, per_depth=(10_000,), max_variants=10_000)
    once = algorithmic_variants(body, sizes, every)
    both = algorithmic_variants(body, sizes, attrs.evolve(every, commuting_once=False))
    # the same programs up to the trial values of their slots (which depend on the order)
    assert {re.sub(r"\d+", "#", str(v.expr)) for v in once} == {re.sub(r"\d+", "#", str(v.expr)) for v in both}
    pairs = [v.steps for v in once if len(v.steps) == 2 and _disjoint(v.steps[0].path, v.steps[1].path)]
    assert pairs and all(a.path < b.path for a, b in pairs)  # one reduction split on each side, in one order
    swapped = [v.steps for v in both if len(v.steps) == 2 and _disjoint(v.steps[0].path, v.steps[1].path)]
    assert any(a.path > b.path for a, b in swapped) and len(swapped) > len(pairs)


def test_a_split_of_a_splits_result_is_valid_only_where_both_divide_the_size():
    """reduce_tree(block) then split_join(n) of the block results: n splits N / block, so a
    point is valid only where block * n divides N (probed: the slot's length 1024 / s0; a
    Skeleton's `within` records the same relation read from the sizes)."""
    sizes = {"N": 1024}
    skeletons = generate_skeletons(TOTAL, sizes, Heuristics())
    name = "reduce_tree(block=s0, local=s1)@root; fission()@1; split_join(n=s2)@1"
    nested = next(s for s in skeletons if s.name == name)
    assert nested.slot_lengths["s2"] == SlotLength(1024, (("s0", -1),))
    offered = nested.all_params(cap=4096)
    assert offered and all(1024 % (p["s0"] * p["s2"]) == 0 for p in offered)
    assert any(p["s0"] * p["s2"] == 1024 for p in offered)  # up to the whole size
    skeleton = Skeleton(nested.steps, {"s0": (512, 8), "s1": (8, 4)}, within={"s1": (1024, ("s0",))})
    assert skeleton.valid({"s0": 8, "s1": 4}) and not skeleton.valid({"s0": 512, "s1": 4})
