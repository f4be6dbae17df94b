"""The exploration space the rules generate (dpia.explore.stages), for any program: every
program of the examples and of the suite gets one (the default lowering first), the points
of its skeletons either fail cleanly at derive or compile and agree with the interpreter on
PoCL, and the presets apply where their strategies derive."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import functional as fl
from dpia.explore.algorithmic import Heuristics
from dpia.explore.evaluate import checkable_sizes
from dpia.explore.presets import PRESETS, preset_for
from dpia.explore.moves import ALGORITHMIC_MOVES
from dpia.explore.space import DEFAULT_NAME, DeviceLimits, Point, Skeleton, Space, parse_steps
from dpia.explore.stages import generate_skeletons
from dpia.programs import random_inputs, relative_error, size_vars
from functional.derivation import derive
from functional.errors import FunctionalError
from functional.random_programs import random_program

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed  # noqa: E402
import suite  # noqa: E402

# a 16-lane AVX-512 CPU, like PoCL on the test machines: 256 private values per item
CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2, private_values=256)
GPU = DeviceLimits(max_work_group_size=1024, local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU")
N, M, K = fl.nat("N"), fl.nat("M"), fl.nat("K")
TOTAL = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
MM = fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
            lambda a, b: fl.map(lambda r: fl.map(lambda c: seed.dot_body(r, c), fl.transpose(b)), a))


def _assert_well_formed(space: Space) -> None:
    names = [f.name for f in space.families]
    assert names[0] == DEFAULT_NAME and space.families[0].steps == ()
    assert len(set(names)) == len(names), "skeleton names are unique"
    assert set(space.by_family()) == set(names) and all(p.family in set(names) for p in space.points)


def _sizes(program, value: int) -> dict[str, int]:
    return {v.name: max(value, v.multiple_of) // v.multiple_of * v.multiple_of for v in size_vars(fl.infer(program))}


# Sequences of up to two moves: the spaces' form is the same with three (test_presets builds
# full spaces, of sum and mm at their measured sizes), at a third of the time.
SHORTER = Heuristics(length=2)


@pytest.mark.parametrize("example", seed.EXAMPLES, ids=lambda e: e.name)
def test_every_seed_program_has_a_space_with_the_default_first(example):
    _assert_well_formed(Space.build(example.program, _sizes(example.program, 64), CPU, heuristics=SHORTER))


# The suite's programs at their small sizes: one move per variant (the full heuristics take
# minutes over the whole suite; stage 2 and 3 are the same).
@pytest.mark.parametrize("entry", suite.SUITE + suite.ALTERNATIVES, ids=lambda e: e.name)
def test_every_suite_program_has_a_space_with_the_default_first(entry):
    sizes = {name.upper(): value for name, value in entry.small.items()}
    _assert_well_formed(Space.build(entry.program, sizes, CPU, heuristics=Heuristics(length=1)))


@pytest.mark.parametrize("case", range(6))
def test_random_programs_have_a_space(case):
    """No program is refused: the fuzzer's programs get at least the default lowering."""
    p = random_program(case)
    sizes = {v.name: p.sizes[v.name] for v in size_vars(p.program)}  # the generator's sizes cover more names
    space = Space.build(p.program, sizes, CPU, heuristics=Heuristics(length=2))
    _assert_well_formed(space)


# ------------------------------------------------------------------ points on the device

GEMV = fl.fun([fl.array(M, fl.array(N, fl.f32)), fl.array(N, fl.f32), fl.array(M, fl.f32), fl.f32, fl.f32],
              seed.gemv_body)
SAMPLED = {  # program, sizes, skeletons sampled (one point each)
    "sum": (TOTAL, {"N": 256}, 6),
    "scal": (fl.fun([fl.f32, fl.array(N, fl.f32)], seed.scal_body), {"N": 256}, 5),
    "gemv": (GEMV, {"M": 64, "N": 128}, 6),
    "mm": (MM, {"M": 64, "N": 128, "K": 64}, 7),
}


def _derive(space: Space, point):
    """As the evaluator derives a point: with the lcm of its values as facts, then the product."""
    try:
        return derive(space.program_for(point), space.strategy(point))
    except FunctionalError:
        return derive(space.program_for(point, product=True), space.strategy(point))


@pytest.mark.parametrize("name", list(SAMPLED))
def test_sampled_points_fail_cleanly_or_compute_the_program(name):
    import dpia

    program, sizes, count = SAMPLED[name]
    space = Space.build(program, sizes, CPU, heuristics=SHORTER)
    rng = random.Random(name)
    skeletons = [space.families[0]] + rng.sample(space.families[1:], min(count, len(space.families) - 1))
    compiled = 0
    for skeleton in skeletons:
        point = rng.choice(space.by_family()[skeleton.name])
        try:
            low, derivation = _derive(space, point)
        except FunctionalError as exc:
            assert str(exc), point  # a typed error that says why
            continue
        check = checkable_sizes(derivation.program, sizes, 64)
        inputs = random_inputs(space.program, check, 0)
        try:
            kernel = dpia.compile(low)
        except FunctionalError as exc:  # e.g. a work-group scheme whose local buffer has a symbolic length
            assert str(exc), point  # (emit: "local array ...: size N must be a constant"), a typed error
            continue
        got = kernel(*inputs)
        assert relative_error(got, fl.interpret(space.program, *inputs)) < 1e-4, (str(point), check)
        compiled += 1
    assert compiled >= len(skeletons) // 2, f"only {compiled} of {len(skeletons)} sampled skeletons compiled"


# ------------------------------------------------------------------------------- presets


def test_presets_are_named_strategies_that_derive_and_fit():
    mm = fl.infer(MM)
    big = {"M": 4096, "N": 4096, "K": 4096}
    assert preset_for(mm, big, GPU)[0].strategy_name == "mm_register_blocked"
    assert preset_for(mm, big, CPU)[0].strategy_name == "mm_rows_vectorized"
    found = preset_for(TOTAL, {"N": 1 << 26}, CPU)
    assert found is not None and found[0].strategy_name == "chunked_sum"
    preset, low, derivation = found
    # chunks of 8192 vectors of 8: the program re-declared with the product of the numbers as its fact
    assert "N: nat{multiple_of=65536}" in str(derivation.program) and derivation.replay() == low
    assert "map_global" in str(low) and "as_vector 8" in str(low)
    # a program none of them derives on: the default lowering runs
    scal = fl.infer(fl.fun([fl.f32, fl.array(N, fl.f32)], seed.scal_body))
    assert preset_for(scal, {"N": 1 << 20}, CPU) is None and preset_for(scal, {"N": 1 << 20}, GPU) is None
    assert {p.strategy_name for kind in PRESETS.values() for p in kind} >= {"chunked_sum", "mm_register_blocked"}


def test_a_work_group_scheme_over_a_map_of_symbolic_length_compiles():
    import dpia

    sizes = {"M": 64, "N": 128}
    space = Space.build(GEMV, sizes, CPU)
    name = "lower_map_workgroup(d=0)@root; lower_map_local(d=0)@0.1.0.0.1.1.1"  # a row per group, its products per item
    point = space.by_family()[name][0]
    low, derivation = _derive(space, point)
    # OpenCL cannot allocate local memory of length N: the group's products go to global memory
    assert "to_global (map_local" in str(low) and "to_local" not in str(low)
    inputs = random_inputs(space.program, checkable_sizes(derivation.program, sizes, 64), 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(space.program, *inputs)) < 1e-4


@pytest.mark.parametrize("order", ["d=1)@0.1; lower_map_global(d=0", "d=0)@0.1; lower_map_global(d=1"])
def test_split_k_of_a_transposed_matrix_vector_product_runs_its_chunks_on_a_2d_grid(order):
    """A^T x + y: split_k takes the reduction out of the arithmetic around it; the columns'
    chunks run as a 2D grid in either order of dimensions (the search tries both), each chunk
    computing its own products (none stored), a second kernel adding a column's partials."""
    import dpia

    sizes = {"M": 64, "N": 32}
    entry = next(e for e in suite.SUITE if e.name == "gemv_t")
    name = f"split_k(n=s0)@root; lower_map_global({order})@0.1.0.1.0"
    space = Space.build(entry.program, sizes, GPU, skeletons=[Skeleton(parse_steps(name))])
    low, derivation = derive(space.program_for(Point(name, {"s0": 16})), space.strategy(Point(name, {"s0": 16})))
    text = str(low)
    assert text.count("map_global") == 3 and "split 16" in text and "to_global (map_global" in text, text
    inputs = random_inputs(space.program, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(space.program, *inputs)) < 1e-4


# ------------------------------------------------------------- lengths products of slots

REGISTER_BLOCKED_TILES = tuple(m for m in ALGORITHMIC_MOVES if m.name in ("tile_2d", "tile_reduction",
                                                                          "register_blocking_2d"))


def test_a_length_that_is_a_product_of_slots_constrains_the_points():
    """vectorized_copy's n splits a local tile copy of k x m values, both slots (tile_reduction's
    k, tile_2d's m): each point's n divides the product of their values there, so no point is
    refused at derivation ("reshape_parallel: 128 does not divide 64"), and every point whose n
    divides it is kept (the points dropped are exactly those the rule refuses)."""
    sizes = {"M": 16, "N": 16, "K": 64}
    mm = fl.infer(seed.mm)
    space = Space.build(mm, sizes, GPU, skeletons=generate_skeletons(mm, sizes, Heuristics(loops=True),
                                                                     REGISTER_BLOCKED_TILES))
    copying = [f for f in space.families if any(s.move == "vectorized_copy" for s in f.steps)]
    assert copying, "the register-blocked tiles' layouts include vectorised copies"
    family = copying[0]
    slot_of = {(s.move, p): v for s in family.steps for p, v in s.slots}
    n = slot_of[("vectorized_copy", "n")]
    k, tile_m, tile_n = slot_of[("tile_reduction", "k")], slot_of[("tile_2d", "m")], slot_of[("tile_2d", "n")]
    length = family.slot_lengths[n]
    assert dict(length.powers) in ({k: 1, tile_m: 1}, {k: 1, tile_n: 1}) and length.scale == 1, str(length)
    unconstrained = Skeleton(family.steps, family.choices, family.divides, family.slot_sizes, family.within,
                             family.within_slot)
    every = unconstrained.all_params(cap=1 << 20)
    kept = [p for p in every if family.admits(p)]
    assert kept and all(family.admits(p) == (length.at(p) % p[n] == 0) for p in every)
    # each value of n at the smallest other values admitting it: the points most likely refused
    smallest = {}
    for p in sorted(kept, key=lambda p: sorted((name, v) for name, v in p.items() if name != n)):
        smallest.setdefault(p[n], p)
    for params in smallest.values():
        _derive(space, Point(family.name, params))  # raises where the rule refuses the point
    # a few of the points the constraint drops: each one the rule refuses
    dropped = [p for p in every if not family.admits(p)]
    for params in random.Random(0).sample(dropped, min(3, len(dropped))):
        with pytest.raises(FunctionalError, match="does not divide"):
            _derive(space, Point(family.name, params))


# ------------------------------------------------------------------------------- cuts


def test_check_sizes_keep_the_real_remainder_of_a_cut():
    from dpia.explore.space import check_size

    assert check_size(1, 4099, 64, 256) == 515  # 4099 = 16 * 256 + 3: two multiples of 256 and the 3 left over
    assert check_size(2, 4098, 64, 32) == 66  # 4098 = 128 * 32 + 2, and even
    assert check_size(1, 100, 64, 32) == 68
    assert check_size(1, 40, 64, 32) == 40  # never above the real size
    assert check_size(4, 4096, 64) == 64  # no cut: as before


CUT_CASES = {  # program, sizes (no tile divides them), the moves one sampled skeleton must make
    "scal": (fl.fun([fl.f32, fl.array(N, fl.f32)], seed.scal_body), {"N": 4099}, ("map_cut", "split_join")),
    "sum": (TOTAL, {"N": 4099}, ("reduce_cut", "reduce_split")),
    "rows": (fl.fun([fl.array(M, fl.array(N, fl.f32))], lambda xss: fl.map(lambda r: fl.map(lambda x: x * 3.0, r), xss)),
             {"M": 67, "N": 96}, ("map_cut", "split_join")),
    "grid": (suite.jacobi2d_5, {"H": 67, "W": 69}, ("map_cut", "map_cut_columns", "tile_nest_2d")),
    "mm": (MM, {"M": 67, "N": 69, "K": 16}, ("map_cut_columns", "register_blocking_2d")),
}


@pytest.mark.parametrize("name", list(CUT_CASES))
def test_a_length_without_divisors_is_cut_at_a_multiple_that_the_later_moves_split(name):
    """Where the sizes offer no split, stage 1 cuts a length at a multiple of a power of two
    (map_cut, reduce_cut; a 2D map's rows alike, map_cut_columns) and splits or tiles the
    multiple.  Those points derive, are checked at sizes with the real remainders, and
    compute the program there on PoCL."""
    import dpia

    program, sizes, moves = CUT_CASES[name]
    space = Space.build(program, sizes, CPU, heuristics=Heuristics(length=len(moves), per_depth=(64, 256, 256)))
    cut = [f for f in space.families if f.steps and f.steps[0].move in ("map_cut", "map_cut_columns", "reduce_cut")]
    wanted = [f for f in cut if all(any(st.move == m for st in f.steps) for m in moves)]
    assert wanted, [f.name for f in cut][:5]
    rng = random.Random(name)
    for skeleton in [wanted[0]] + rng.sample(cut, min(2, len(cut))):
        point = rng.choice(space.by_family()[skeleton.name])
        check = space.check_sizes(point)
        for size, modulus in skeleton.residues.items():
            assert check[size] % modulus == sizes[size] % modulus, (skeleton.name, check)
            assert check[size] >= 2 * modulus or check[size] == sizes[size], (skeleton.name, check)
        low, derivation = _derive(space, point)
        inputs = random_inputs(space.program, check, 0)
        got = dpia.compile(low)(*inputs)
        assert relative_error(got, fl.interpret(space.program, *inputs)) < 1e-4, (str(point), check)


def test_a_slot_after_a_cut_divides_only_what_is_provable():
    """After a cut at 256 the multiple's chunks number 32 * (N // 256): at N = 131075 that is
    16384, a power of two by coincidence (131075 // 256 = 512).  Only 32 divides it at every
    point, so no later split is offered a value that the derivation then refuses."""
    from dpia.explore.algorithmic import provable_content

    assert provable_content(32 * (N // 256), {"N": 131075}, 16384) == 32
    assert provable_content(N / 64, {"N": 1 << 28}, 1 << 22) == 1 << 22  # a length of sizes: all of it
    space = Space.build(TOTAL, {"N": 131075}, CPU, heuristics=SHORTER)
    refused = []
    for skeleton in [f for f in space.families if f.steps and f.steps[0].move == "reduce_cut"][:40]:
        point = space.by_family()[skeleton.name][0]
        try:
            _derive(space, point)
        except FunctionalError as exc:
            refused.append((str(point), str(exc)[-200:]))
    assert not refused, refused[:3]
