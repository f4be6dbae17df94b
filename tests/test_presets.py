"""The presets are points of the generated space (issue 12: "a test shows that each preset's
point is a point of the generated space, so the search can start from them"): for each one,
`Space.build` at the sizes it was measured at (the GPU matrix product's at 1024^3, not the
4096^3 it was measured at: its values divide both, and both spaces' skeletons are then one
generation, a CI minute's half) holds its point, and the point derives the same
low-level program as the named strategy of functional.schedules it reproduces (printed, or
where the steps' order leaves different fresh names, the same OpenCL up to those names).
Then the new stage-2 moves those points use (loops, accumulators, further reduction stages)
compute the program on PoCL at small sizes."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import attrs
import pytest

import dpia
import functional as fl
from dpia.explore.algorithmic import Heuristics
from dpia.explore.mapping import host_reductions, loop_schemes, relabelled
from dpia.explore.moves import MOVES
from dpia.explore.presets import _REGISTER_BLOCKED_TILES, PRESETS, Preset, derive_preset
from dpia.explore.space import DeviceLimits, Point, Skeleton, Space, SpaceError, Step, parse_steps
from dpia.explore.stages import generate_skeletons, prepared_body
from dpia.programs import random_inputs, relative_error
from functional.derivation import derive
from functional.errors import FunctionalError
from functional.infer import typing_memo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed

# a 16-lane AVX-512 CPU, like PoCL on the test machines: 256 private values per item
CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2, private_values=256)
GPU = DeviceLimits(max_work_group_size=1024, local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU")
LOOPS = Heuristics(loops=True)  # the loop schemes hold the presets' reductions and accumulators (off by default)
SUM, MM = fl.infer(seed.total), fl.infer(seed.mm)
BIG_MM = {"M": 1024, "N": 1024, "K": 1024}

# preset -> (program, the sizes it was measured at, the device, how its program is compared)
MEASURED = {
    "chunked_sum": (SUM, {"N": 1 << 26}, CPU, "printed"),
    "mm_rows_vectorized": (MM, BIG_MM, CPU, "printed"),
    # the space's normal form between the stages writes the tree's `map (reduce f z)` as
    # `map (fun(x) => reduce f z x)`: the same kernels, other fresh names
    "parallel_reduce_two_stage": (SUM, {"N": 1 << 28}, GPU, "kernels"),
    # the same kernels as the strategy; the steps' order (stage 1 blocks registers before
    # stage 2 makes the tile reduction a loop) leaves other fresh names
    "mm_register_blocked": (MM, BIG_MM, GPU, "kernels"),
}
POINTS = [p for kind in PRESETS.values() for p in kind if p.skeleton is not None]

# The GPU mm preset's strategy without its layout options (A's tile copied row-wise, no
# vectors, no interleaving): a measured variant of it, the point dpia.explore.mapping's
# tile_schemes generates for the stage-1 variant tile_2d -> tile_reduction -> register_blocking_2d.
LAYOUT_MOVES = ("swap_local_dims", "interchange_parallel", "vectorized_copy", "pad_local_rows", "interleave_local_rows")
_BLOCKED_TILES = "; ".join(step for step in _REGISTER_BLOCKED_TILES.split("; ")
                           if step.split("(")[0] not in LAYOUT_MOVES)
BLOCKED_TILES = Preset("mm_register_blocked", {"n": 128, "m": 128, "k": 8, "l1": 8, "l2": 8},
                       "the GPU preset's strategy without its layout options", _BLOCKED_TILES,
                       {"s0": 128, "s1": 128, "s2": 8, "s3": 8, "s4": 8})
BIG_GPU_MM = MEASURED["mm_register_blocked"][1]
VARIANTS = {"mm_register_blocked(no layout)": (BLOCKED_TILES, MM, BIG_GPU_MM, GPU, "kernels")}
_SPACES: dict = {}
_SKELETONS: dict = {}


def _space(program, sizes, limits) -> Space:
    """Space.build with the loop schemes, once per (program, sizes, device) in this module;
    stages 1 and 2 once per (program, sizes): they do not depend on the device's limits
    (without intrinsics, as here)."""
    assert not limits.intrinsics
    key = (str(program), tuple(sorted(sizes.items())))
    if key not in _SKELETONS:
        with typing_memo():  # as Space.build generates them
            _SKELETONS[key] = generate_skeletons(program, sizes, LOOPS)
    if key + (limits,) not in _SPACES:
        _SPACES[key + (limits,)] = Space.build(program, sizes, limits, skeletons=_SKELETONS[key])
    return _SPACES[key + (limits,)]


def _derive(space: Space, point: Point):
    try:
        return derive(space.program_for(point), space.strategy(point))
    except FunctionalError:
        return derive(space.program_for(point, product=True), space.strategy(point))


_FRESH = re.compile(r"\b(acc|tmp|i|wg|lid|gid|v|x|y|idx|r|p)(\d+)\b")


def _kernels(low) -> str:
    """The OpenCL of a low-level program, its fresh names numbered in order of appearance."""
    from dpia.pipeline import PIPELINE, Options

    text = PIPELINE.run({"low": low}, Options(), "translate", "emit")["source"].text
    names: dict[str, str] = {}
    return _FRESH.sub(lambda m: names.setdefault(m.group(0), f"{m.group(1)}_{len(names)}"), text)


def test_every_preset_is_a_point():
    assert {p.strategy_name for p in POINTS} == set(MEASURED)
    assert [p.strategy_name for kind in PRESETS.values() for p in kind if p.skeleton is None] == []


@pytest.mark.parametrize("preset", POINTS, ids=str)
def test_each_preset_is_a_point_of_the_generated_space_and_derives_its_strategy(preset: Preset):
    _check_point(preset, *MEASURED[preset.strategy_name])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_measured_variant_is_a_point_of_the_generated_space_and_derives_its_strategy(variant: str):
    _check_point(*VARIANTS[variant], sampled=False)


def _check_point(preset: Preset, program, sizes, limits, compare, sampled: bool = True) -> None:
    """The preset's skeleton is generated and admits its values (`sampled`: the point is
    among the space's points too, sampled or added as a preset's); its point derives the
    named strategy's program (printed, or its kernels) and is what dpia run uses."""
    space = _space(program, sizes, limits)
    point = preset.point
    assert point.family in space.by_family(), f"{point.family} is not a skeleton of the space"
    if sampled:
        assert point in space.feasible_points, f"{point} is not among the space's points"
    assert space.family(point.family).admits(point.as_dict())
    low, derivation = _derive(space, point)
    reference, _ = derive(derivation.program, preset.schedule())  # the named strategy, same declarations
    if compare == "printed":
        assert str(low) == str(reference)
    else:
        assert str(low) != str(reference) and _kernels(low) == _kernels(reference)
    # what dpia run uses: the preset's point, derived with the facts of its values (every size a multiple of
    # their lcm, where it is: a double-buffered tile loop of K / 8 tiles then has no odd last tile to run)
    used, used_derivation = derive_preset(program, sizes, preset)
    assert used_derivation.replay() == used
    at_facts, _ = derive(used_derivation.program, space.strategy(point))
    assert _kernels(used) == _kernels(at_facts)


def test_the_preset_point_is_added_where_sampling_leaves_it_out():
    """The tree's 4 slots have 16 * 10 * 16 * 10 combinations, sampled down; the preset's
    point is a point all the same."""
    preset = next(p for p in POINTS if p.strategy_name == "parallel_reduce_two_stage")
    space = _space(SUM, {"N": 1 << 28}, GPU)  # the space the preset's own test checks (not changed by either)
    family = space.family(preset.point.family)
    assert len(space.by_family()[family.name]) < len(family.all_params(10 ** 6))
    assert preset.point in space.by_family()[family.name]


def test_a_skeleton_name_parses_back_into_its_steps():
    space = Space.build(SUM, {"N": 1 << 12}, CPU, heuristics=Heuristics(length=1, loops=True))
    for family in space.families:
        assert Skeleton(parse_steps(family.name)).name == family.name
    with pytest.raises(SpaceError):
        parse_steps("reduce_tree(block=s0)")


# --------------------------------------------------------------- the new moves on PoCL

SMALL = {  # preset -> small sizes and values of its skeleton (two chunks, groups or blocks)
    "chunked_sum": (SUM, {"N": 256}, {"s0": 64, "s1": 8}),
    "parallel_reduce_two_stage": (SUM, {"N": 512}, {"s0": 64, "s1": 16, "s2": 4, "s3": 2}),
    "mm_rows_vectorized": (MM, {"M": 8, "N": 32, "K": 8}, {"s0": 4, "s1": 16, "s2": 8}),
    # 8 x 8 tiles of 2 x 2 blocks, 2 x 2 groups of 4 x 4 items, two k-tiles; the copies in rows
    # of 16 (4 items along dimension 0, float4), B's rows interleaved in runs of 2 of each block
    "mm_register_blocked": (MM, {"M": 16, "N": 16, "K": 8}, {"s0": 8, "s1": 8, "s2": 4, "s3": 2, "s4": 2, "s5": 16,
                                                            "s6": 4, "s7": 16, "s8": 4, "s9": 2, "s10": 2}),
    # 8 x 8 tiles of 2 x 2 blocks, 2 x 2 groups of 4 x 4 items, two k-tiles
    _BLOCKED_TILES: (MM, {"M": 16, "N": 16, "K": 8}, {"s0": 8, "s1": 8, "s2": 4, "s3": 2, "s4": 2}),
}
SMALL_POINTS = POINTS + [BLOCKED_TILES]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["plain copies", "async_staging"])
def test_the_double_buffered_twin_of_the_single_buffered_preset_computes_the_program_at_small_sizes(asynchronous):
    """The GPU preset's skeleton before unrolling with its tile loop double-buffered (the twin
    tile_schemes adds: the next k-tiles staged while these are used), and that twin's with its
    stagings asynchronous (where the device has cp.async: plain copies on PoCL), on PoCL and under
    Oclgrind; three k-tiles: the last one's step after the pairs."""
    import dpia
    from dpia.explore.algorithmic import apply_steps
    from dpia.explore.mapping import async_stagings

    program, _, values = SMALL["mm_register_blocked"]
    sizes = {"M": 16, "N": 16, "K": 12}
    skeleton = _REGISTER_BLOCKED_TILES + "; double_buffer()@root"
    if asynchronous:
        done = apply_steps(prepared_body(program, sizes), parse_steps(skeleton), values)
        (step,) = async_stagings(done, frozenset({"async_copy"}))
        skeleton += f"; {step}"
    space = Space.build(program, sizes, CPU, skeletons=[Skeleton(parse_steps(skeleton))])
    low, _ = _derive(space, Point(skeleton, values))
    assert ("reduce_seq_double_buffered_async" in str(low)) == asynchronous
    inputs = random_inputs(program, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(program, *inputs)) < 1e-4


@pytest.mark.parametrize("preset", SMALL_POINTS, ids=str)
def test_the_preset_skeletons_compute_the_program_at_small_sizes(preset: Preset):
    """On PoCL, and (tests/oclgrind.py) under Oclgrind: no race, no uninitialised value."""
    import dpia

    program, sizes, values = SMALL.get(preset.strategy_name if preset in POINTS else preset.skeleton)
    space = Space.build(program, sizes, CPU, skeletons=[Skeleton(parse_steps(preset.skeleton))])
    point = Point(preset.skeleton, values)
    low, _ = _derive(space, point)
    inputs = random_inputs(program, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(program, *inputs)) < 1e-4


NEW_MOVES = {"lower_reduce_seq", "reduce_tree_stage", "lower_map_seq_unroll", "lower_reduce_seq_unroll",
             "vectorize_accumulator", "accumulator_registers"}


@pytest.mark.parametrize("name,program,sizes,count", [
    ("sum", SUM, {"N": 1024}, 8),
    ("mm", MM, {"M": 32, "N": 32, "K": 32}, 4),  # each mm point derives and runs in seconds: fewer
])
def test_sampled_points_of_the_new_moves_fail_cleanly_or_compute_the_program(name, program, sizes, count):
    import dpia

    space = Space.build(program, sizes, CPU, heuristics=Heuristics(length=2, loops=True))  # loops of 2-move variants
    new = [f for f in space.families if any(s.move in NEW_MOVES for s in f.steps)]
    assert new, "the new moves generate skeletons"
    rng = random.Random(name)
    compiled = 0
    for skeleton in rng.sample(new, min(count, len(new))):
        point = rng.choice(space.by_family()[skeleton.name])
        try:
            low, _ = _derive(space, point)
            kernel = dpia.compile(low)
        except FunctionalError as exc:
            assert str(exc), point
            continue
        inputs = random_inputs(program, sizes, 0)
        assert relative_error(kernel(*inputs), fl.interpret(program, *inputs)) < 1e-4, str(point)
        compiled += 1
    assert compiled >= count // 2, f"only {compiled} of {count} sampled skeletons compiled"


# ------------------------------------------------------------- where the moves apply


def test_a_reduction_gets_a_further_tree_stage_only_where_it_reads_a_parallel_stage():
    body = prepared_body(SUM, {"N": 1 << 12})
    # the plain sum: no parallel stage below it; the default would split it: seq offered
    schemes = loop_schemes(body, {"N": 1 << 12}, {})
    moves = [{s.move for s in steps} for steps, _ in schemes]
    assert set() in moves and {"lower_reduce_seq"} in moves
    assert not any("reduce_tree_stage" in m for m in moves)
    # chunks reduced by map_global: the partial results may be reduced by work-group trees
    split = MOVES["reduce_split"].make(n=64)(body).expr
    mapped = relabelled(split, (Step("lower_map_global", (1,), (("d", 0),)),))
    assert list(host_reductions(mapped)) == [()]
    schemes = loop_schemes(mapped, {"N": 1 << 12}, {})
    trees = [(steps, slots) for steps, slots in schemes if any(s.move == "reduce_tree_stage" for s in steps)]
    assert len(trees) == 1 and set(trees[0][1]) == {"s0", "s1"}


def test_an_unrolled_loop_the_values_make_long_stays_a_loop():
    unroll = MOVES["lower_map_seq_unroll"].make()
    short = fl.infer(fl.fun([fl.array(4, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs))).body
    long = fl.infer(fl.fun([fl.array(64, fl.f32)], lambda xs: fl.map(lambda x: x * 2.0, xs))).body
    assert str(unroll(short).expr).startswith("map_seq_unroll")
    assert str(unroll(long).expr).startswith("map_seq ")


def test_no_2d_launch_through_views_when_the_inner_maps_data_computes():
    """`map (fun(r) => map join (transpose (map f (map g r)))) xs`: launched in 2D, every item
    of dimension 0 would compute `map g r` into one temporary per row (the race Oclgrind found
    in mm after register_blocking_2d and fission: a move may leave two maps unfused); with
    `map g` only a view, the 2D launch stays."""
    from dpia.explore.mapping import schemes

    rows = fl.array(8, fl.array(16, fl.f32))

    def body(inner):
        program = fl.fun([rows], lambda xs: fl.map(lambda r: fl.join(fl.transpose(fl.map(
            lambda v: fl.map(lambda x: x * 2.0, v), inner(r)))), xs))
        return fl.infer(program).body  # as written: the normal form would fuse the two maps

    def launches_2d(e) -> bool:
        return any({("d", 1)} <= {f for s in steps for f in s.fixed} and len(steps) == 2
                   and all(s.move == "lower_map_global" for s in steps) for steps in schemes(e, ()))

    viewed = body(lambda r: fl.split(4, r))
    computed = body(lambda r: fl.map(lambda v: fl.map(lambda x: x + 1.0, v), fl.split(4, r)))
    assert launches_2d(viewed)
    assert not launches_2d(computed)


def test_tiles_are_placed_in_the_hierarchy_only_where_a_tile_reduction_is_register_blocked():
    from dpia.explore.mapping import DOUBLE_BUFFER, apply_steps, item_steps_unrolled, tile_schemes
    from dpia.explore.stages import normal_form

    sizes = {"M": 64, "N": 64, "K": 64}
    body = prepared_body(MM, sizes)
    stage1 = parse_steps(_BLOCKED_TILES)[:3]
    trials = {"s0": 16, "s1": 16, "s2": 8, "s3": 4, "s4": 4}

    def normal(steps):
        return normal_form()(apply_steps(body, steps, trials)).expr

    assert tile_schemes(normal(()), sizes, {}) == []  # the naive product: no tiles
    assert tile_schemes(normal(stage1[:2]), sizes, {}) == []  # tiles without register blocks
    assert tile_schemes(prepared_body(SUM, {"N": 1 << 12}), {"N": 1 << 12}, {}) == []
    schemes = tile_schemes(normal(stage1), sizes, {})
    steps, slots = schemes[0]  # the copies as they are first
    assert "; ".join(map(str, stage1 + steps)) == _BLOCKED_TILES and slots == {}
    # then their layouts, combined over the two copies, each also with the tile loop double-buffered, with
    # the items' k-steps unrolled (one loop: an item's reduction over the tile's k), and with both
    unroll = item_steps_unrolled(normal(stage1 + schemes[0][0]))
    assert [s.move for s in unroll] == ["unroll_reduce_seq"]
    plain = [steps for steps, _ in schemes if DOUBLE_BUFFER not in steps and unroll[0] not in steps]
    twins = ((DOUBLE_BUFFER,), unroll, unroll + (DOUBLE_BUFFER,))
    assert [steps for steps, _ in schemes] == [s for steps in plain for s in (steps, *(steps + t for t in twins))]
    layouts = {Skeleton(steps).name.split("accumulator_registers")[1] for steps in plain}
    assert len(layouts) == len(plain) > 1
    assert all(any(s.move in LAYOUT_MOVES for s in steps) for steps in plain[1:])
    # where the device has asynchronous copies, each double-buffered twin's twin stages by them (async_staging
    # at the double-buffered fold); none elsewhere
    offered = tile_schemes(normal(stage1), sizes, {}, intrinsics=frozenset({"async_copy", "warp_shuffle"}))
    staged = [steps for steps, _ in offered if any(s.move == "async_staging" for s in steps)]
    assert [steps for steps, _ in offered if steps not in staged] == [steps for steps, _ in schemes]
    assert len(staged) == 2 * len(plain)
    assert all(steps[-2] == DOUBLE_BUFFER and steps[:-1] in [s for s, _ in schemes] for steps in staged)
    assert tile_schemes(normal(stage1), sizes, {}, intrinsics=frozenset({"warp_shuffle"})) == schemes


# ------------------------------------------------------- the local copies' layouts on PoCL

SMALL_LAYOUT_VALUES = {"n": 16, "w": 4, "b": 2, "g": 2, "p": 2}  # per parameter, at SMALL's mm sizes and tiles


def _copies(skeleton: Skeleton) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The layout moves of the first and the second local copy (the pair the step binds at
    store_copies_local's place)."""
    pair = next(s.path for s in skeleton.steps if s.move == "store_copies_local") + (0, 1)
    moves: tuple[list[str], list[str]] = ([], [])
    for step in skeleton.steps:
        if step.move in LAYOUT_MOVES:
            moves[step.path[len(pair)]].append(step.move)
    return tuple(moves[0]), tuple(moves[1])


@pytest.mark.parametrize("layout", [
    (("swap_local_dims", "pad_local_rows"), ()),  # A along k, its rows padded; B as it is
    (("vectorized_copy",), ("interleave_local_rows",)),  # A in vectors along its rows; B interleaved
    (("swap_local_dims",), ("swap_local_dims",)),
], ids=str)
def test_the_local_copies_layouts_compute_the_program_at_small_sizes(layout):
    """Generated skeletons with the layout moves (beside the preset's, in SMALL) on PoCL and
    under Oclgrind, their slots at small values."""
    import dpia

    space = _space(MM, BIG_GPU_MM, GPU)
    prefix = _BLOCKED_TILES.rsplit("; ", 1)[0]
    family = next(f for f in space.families if f.name.startswith(prefix) and _copies(f) == layout)
    values = dict(SMALL[_BLOCKED_TILES][2])
    for step in family.steps:
        if step.move in LAYOUT_MOVES:
            values |= {slot: SMALL_LAYOUT_VALUES[param] for param, slot in step.slots}
    program, sizes, _ = SMALL[_BLOCKED_TILES]
    small = Space.build(program, sizes, CPU, skeletons=[Skeleton(family.steps)])
    low, _ = _derive(small, Point(family.name, values))
    inputs = random_inputs(program, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(program, *inputs)) < 1e-4


def test_items_of_the_inner_local_dimension_are_given_stages_that_pass_values():
    """mm with a tree inside each dot product (reduce_tree then fission), mapped onto a 2D
    work-group: map_local 1 over the tree's chunks, its stages one item's loops or, a scheme of
    its own, on local dimension 0.  Those stages pass values between the items of dimension 0
    within one item of dimension 1: stored where they all read them (global memory, one slot
    per chunk), with barriers between the stages, the result agrees with the interpreter (it
    did not while the storage analysis kept them in one item's private memory: relative error
    0.58 on the H200); the kernels are checked under Oclgrind too (conftest)."""
    import numpy as np

    from dpia.explore.mapping import apply_steps, schemes
    from dpia.explore.space import with_size_facts
    from functional.default_lowering import default_schedule
    from functional.expr import Lambda, NatLambda

    sizes = {"M": 8, "N": 8, "K": 128}
    body = prepared_body(MM, sizes)
    tree = parse_steps("reduce_tree(block=s0, local=s1)@0.1.0.0.1.0; fission()@0.1.0.0.1.0.1")
    treed = apply_steps(body, tree, {"s0": 8, "s1": 2})
    assert treed is not None

    def local_dims(steps):
        return {dict(s.fixed)["d"] for s in steps if s.move == "lower_map_local"}

    by_dims = {frozenset(local_dims(steps)): steps for steps in schemes(treed, ())}
    assert frozenset({0, 1}) in by_dims and frozenset({1}) in by_dims
    mapped = apply_steps(treed, by_dims[frozenset({0, 1})], {})
    lowered = default_schedule()(mapped)
    assert lowered.ok, lowered.reason

    def with_body(e, new_body):
        return attrs.evolve(e, body=with_body(e.body, new_body)) if isinstance(e, (Lambda, NatLambda)) else new_body

    program = fl.infer(with_body(fl.infer(with_size_facts(MM, sizes)), lowered.expr))
    rng = np.random.default_rng(7)
    a = rng.standard_normal((8, 128)).astype(np.float32)
    b = rng.standard_normal((128, 8)).astype(np.float32)
    assert relative_error(dpia.compile(program)(a, b), fl.interpret(MM, a, b)) < 1e-4


def test_a_work_group_runs_each_chunk_of_its_row_with_all_its_items():
    """GEMV's row per work-group (the fast GPU kernel): a tree reduction of each row
    (reduce_tree) under map_workgroup 0, its chunks a loop (map_seq) and the tree's stages
    spread over the group's items (map_local 0), not one item per chunk (a block the whole row
    leaves one chunk: one busy item).  The point computes the program on PoCL and, replayed
    under Oclgrind, without races; its kernel's groups share the tree through local memory."""
    import dpia
    from dpia.explore.mapping import apply_steps, schemes

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    import suite

    gemv = fl.infer({e.name: e for e in suite.SUITE}["gemv"].program)
    sizes = {"M": 8, "N": 256}
    body = prepared_body(gemv, sizes)
    tree = parse_steps("reduce_tree(block=s0, local=s1)@0.1.0.0.1.1")
    treed = apply_steps(body, tree, {"s0": 256, "s1": 32})
    assert treed is not None
    chunked = [steps for steps in schemes(treed, ()) if [s.move for s in steps][:2] ==
               ["lower_map_workgroup", "lower_map_seq"]]
    assert len(chunked) == 1 and {s.move for s in chunked[0][2:]} == {"lower_map_local"}
    skeleton = Skeleton(tree + chunked[0])
    space = Space.build(gemv, sizes, CPU, skeletons=[skeleton])
    low, _ = _derive(space, Point(skeleton.name, {"s0": 256, "s1": 32}))
    inputs = random_inputs(gemv, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(gemv, *inputs)) < 1e-4
    source = _kernels(low)
    assert "get_group_id(0)" in source and "get_local_id(0)" in source and "barrier(CLK_LOCAL_MEM_FENCE)" in source


def test_the_products_items_of_one_dimension_compute_for_an_item_of_the_other_are_shared():
    """A candidate PoCL's explorer check caught (relative error 4e27): work-groups 1/0,
    map_local 1 over a dot product's chunks (reduce_two_stage), map_local 0 over each chunk's
    products, which the chunk's reduction then reads: stored where all the chunk's items read
    them (functional.storage's ITEMS context), not in one item's private memory."""
    name = ("interchange_swap()@root; reduce_two_stage(n=s0)@1.0.1.0.0.1.0; lower_map_workgroup(d=1)@1; "
            "lower_map_workgroup(d=0)@1.0.1.0; lower_map_local(d=1)@1.0.1.0.0.1.0.1; "
            "lower_map_local(d=0)@1.0.1.0.0.1.0.1.0.1.0.1")
    sizes = {"M": 8, "N": 8, "K": 128}
    space = Space.build(MM, sizes, CPU, skeletons=[Skeleton(parse_steps(name))])
    low, _ = _derive(space, Point(space.families[-1].name, {"s0": 64}))
    inputs = random_inputs(MM, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(MM, *inputs)) < 1e-4


def test_the_preset_a_baseline_replays_is_its_points_trial_in_the_search():
    """The preset `dpia run` uses is measured first (the baseline, replayed from its
    derivation); the search sees that measurement as its point's, so it is the incumbent
    whose launch shapes it tries (search.Model.exploit) and a point it does not propose."""
    from tests.runs import run_over
    from dpia.explore.evaluate import Evaluator, Outcome
    from dpia.explore.launch import LAUNCH
    from dpia.explore.search import SEARCHES

    preset = next(p for p in POINTS if p.strategy_name == "mm_rows_vectorized")
    space = _space(MM, BIG_MM, CPU)
    run = run_over(space, "mm", "test device", None, "r", SEARCHES["bayesian"], 0, None, None, Evaluator())
    spec = run.baseline_spec("run", CPU)
    assert spec.variant == "preset" and run.trials[spec.index].point == preset.point
    assert LAUNCH in preset.point.as_dict()  # a kernel without work-groups: its shape is a slot
    # replayed with the launch it was measured with, as dpia run launches it (stored so with the candidate)
    assert preset.shape and spec.launch == {"local_shape": preset.shape} == preset.launch()
    run.on_done(spec, Outcome("ok", time_s=1e-3), "derivation")
    assert run.trials[spec.index].succeeded and run.trials[spec.index].time_s == 1e-3
    proposed = [Point(s.family_name, s.params) for _ in range(4) for s in run.propose(8)]
    assert preset.point not in proposed


def test_a_preset_that_keeps_more_in_global_memory_than_the_default_is_not_used():
    """The chunked sum derives on a sum of converted integers only by materialising the
    converted values (its chunks' vectors are of the map's results, which the conversion
    keeps from being computed on vectors of the input: a pass over memory the default
    lowering fuses away, 10x slower on PoCL, as the dot product was before the chunks
    vectorised through a map); dpia run keeps the default there, and the preset where it
    keeps only partial sums."""
    from dpia.explore.presets import _default_temporary_bytes, global_temporary_bytes, preset_for

    converted = fl.infer(fl.fun([fl.array(fl.nat("N"), fl.i32)], lambda xs: fl.reduce(
        fl.add, 0.0, fl.map(lambda x: fl.cast(fl.f32, x) * 2.0, xs))))
    sizes = {"N": 1 << 20}
    chunked = next(p for p in PRESETS["CPU"] if p.strategy_name == "chunked_sum")
    low, _ = derive_preset(converted, sizes, chunked)  # it derives, and fits
    assert global_temporary_bytes(low, sizes) >= 4 * sizes["N"] > _default_temporary_bytes(converted, sizes)
    assert preset_for(converted, sizes, CPU) is None
    found = preset_for(SUM, sizes, CPU)
    assert found is not None and found[0] is chunked
    assert global_temporary_bytes(found[1], sizes) < _default_temporary_bytes(SUM, sizes)


BATCHED_MM = fl.infer(fl.fun(
    [fl.array(fl.nat("B"), fl.array(fl.nat("M"), fl.array(fl.nat("K"), fl.f32))),
     fl.array(fl.nat("B"), fl.array(fl.nat("K"), fl.array(fl.nat("N"), fl.f32)))],
    lambda a, b: fl.map(lambda p: fl.map(lambda ra: fl.map(
        lambda cb: fl.reduce(fl.add, 0.0, fl.map(lambda q: fl.fst(q) * fl.snd(q), fl.zip(ra, cb))),
        fl.transpose(fl.snd(p))), fl.fst(p)), fl.zip(a, b))))


def test_a_preset_applies_inside_a_batch_map():
    """A batched matrix product gets the matrix product's preset under its batch map on
    dimension 2 (8 x 32 float16 register blocks on a CPU: on PoCL at B=8, 256^3 the batched
    product went from 58 ms, the default at 0.02x NumPy, to 1.8 ms; the register-blocked tiles
    with the batch over work-groups on a GPU), and computes the product (on PoCL and under
    Oclgrind: the CPU preset, and the GPU preset's small-tile twin)."""
    from dpia.explore.presets import batched, preset_for

    cpu_sizes = {"B": 2, "M": 16, "N": 64, "K": 16}
    for limits, sizes, level in ((CPU, cpu_sizes, "map_global"),
                                 (GPU, {"B": 4, "M": 1024, "N": 1024, "K": 1024}, "map_workgroup")):
        found = preset_for(BATCHED_MM, sizes, limits)
        assert found is not None and "under a batch map" in found[0].measured
        assert f"{level} 2 " in str(found[1])
    inputs = random_inputs(BATCHED_MM, cpu_sizes, 0)
    low = preset_for(BATCHED_MM, cpu_sizes, CPU)[1]
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(BATCHED_MM, *inputs)) < 1e-4
    small = batched(BLOCKED_TILES)
    sizes = {"B": 2, "M": 16, "N": 16, "K": 8}
    space = Space.build(BATCHED_MM, sizes, CPU, skeletons=[Skeleton(parse_steps(small.skeleton))])
    low, _ = _derive(space, Point(small.skeleton, {"s0": 8, "s1": 8, "s2": 4, "s3": 2, "s4": 2}))
    assert "map_workgroup 2 " in str(low)
    inputs = random_inputs(BATCHED_MM, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(BATCHED_MM, *inputs)) < 1e-4
