"""functional.schedules.default_schedule: the documented default lowering of any high-level
program.  Every seed program (examples/seed.py), with symbolic sizes and with its sizes
fixed, is fully lowered, replays from its derivation's text, and its kernel agrees with the
interpreter on PoCL; the shapes the documentation promises (two-stage reductions, a 2D
launch for mm) are checked on the lowered programs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dpia
import functional as fl
from dpia.programs import TOLERANCE, fix_sizes, random_inputs, relative_error
from functional import schedules as S
from functional.derivation import Derivation, derive
from functional.errors import StrategyError
from functional.nat import as_nat
from functional.default_lowering import Target
from functional.strategies import identity
from imperative.ir import AddressSpace, New
from imperative.ir import walk as commands

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import seed

SIZES = {"scal": {"N": 96}, "asum": {"N": 2048}, "dot": {"N": 3000}, "total": {"N": 4096},
         "gemv": {"M": 24, "N": 40}, "mm": {"M": 12, "K": 20, "N": 16}, "stencil": {"N": 50}}
PROGRAMS = {e.name: e.program for e in seed.EXAMPLES}


def _lowered(program):
    low, derivation = derive(program, S.default_schedule(program))
    assert S.high_level_left(low) == []
    assert Derivation.from_text(derivation.to_text()).replay() == low
    return low


def _agrees(program, low, sizes, seed_=0) -> None:
    inputs = random_inputs(program, sizes, seed_)
    got = dpia.compile(low)(*inputs)
    assert relative_error(got, fl.interpret(program, *inputs)) <= TOLERANCE


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_seed_program_lowers_and_agrees_with_the_interpreter(name):
    program = PROGRAMS[name]
    low = _lowered(program)
    _agrees(program, low, SIZES[name])
    _agrees(program, low, {k: v + 8 for k, v in SIZES[name].items()}, seed_=1)  # the same kernel, other sizes


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_seed_program_with_fixed_sizes_lowers_and_agrees(name):
    program, sizes = PROGRAMS[name], SIZES[name]
    _agrees(program, _lowered(fl.infer(fix_sizes(program, sizes))), sizes)


@pytest.mark.parametrize("name", ["total", "asum", "dot"])
def test_a_large_reduction_runs_in_parallel_stages_of_chunks(name):
    from functional.default_lowering import CHUNK, first_chunk

    low = _lowered(fl.infer(fix_sizes(PROGRAMS[name], SIZES[name])))
    text = str(low)
    assert text.startswith("fun(") and "(to_global (map_global 0" in text
    # the first stage's chunks are read as vectors (lane-wise operator and map, contiguous data),
    # each later stage reduces CHUNK partial results; the remainder of each is folded after it
    first = first_chunk(as_nat(SIZES[name]["N"]))
    n, stages = SIZES[name]["N"] // first, 1
    while n > CHUNK:
        n, stages = n // CHUNK, stages + 1
    assert text.count("map_global") == stages and f"split {first} " in text and "as_vector 16" in text
    assert ("take" in text) == (SIZES[name]["N"] % first != 0)


@pytest.mark.parametrize("n, chunk", [(1024, 128), (1 << 20, 256), (1 << 24, 512), (1 << 28, 512)])
def test_a_first_stage_has_larger_chunks_only_where_enough_work_items_remain(n, chunk):
    from functional.default_lowering import FIRST_STAGE_ITEMS, first_chunk

    assert first_chunk(as_nat(n)) == chunk and (chunk == 128 or n // chunk >= FIRST_STAGE_ITEMS)
    assert first_chunk(fl.nat("N")) == 128


def test_a_reduction_that_cannot_be_read_as_vectors_keeps_chunks_of_scalars():
    from functional.default_lowering import CHUNK

    # argmax: an operator with no lane-wise vector form, chunks folded from their first element
    argmax = fl.fun([fl.array(8192, fl.f32)], lambda xs: fl.snd(fl.reduce(
        lambda a, b: fl.select(fl.fst(a) >= fl.fst(b), a, b), fl.pair(fl.literal(float("-inf"), fl.f32), fl.literal(0, fl.i32)),
        fl.zip(xs, fl.generate(8192, lambda i: i)))))
    low = _lowered(argmax)
    assert f"split {CHUNK} " in str(low) and "as_vector" not in str(low)
    _agrees(argmax, low, {})


def test_a_reduction_of_prime_length_is_parallel_with_its_remainder_folded_after():
    prime = fl.infer(fix_sizes(PROGRAMS["total"], {"N": 4099}))
    low = _lowered(prime)
    assert "map_global" in str(low) and "drop" in str(low)
    _agrees(prime, low, {})


def test_a_reduction_from_a_non_neutral_value_starts_its_stages_from_the_neutral_one():
    total = fl.fun([fl.array(4096, fl.f32)], lambda xs: fl.reduce(fl.add, 1.0, xs))
    low = _lowered(total)
    assert "map_global" in str(low) and str(low).count("1.0") == 1
    _agrees(total, low, {})


def test_a_reduction_whose_operator_is_not_known_associative_stays_in_order():
    diff = fl.fun([fl.array(4096, fl.f32)], lambda xs: fl.reduce(lambda a, b: a - b, 0.0, xs))
    low = _lowered(diff)
    assert "map_global" not in str(low)
    _agrees(diff, low, {})


def test_a_symbolic_reduction_uses_its_multiple_of_fact_to_drop_the_first_remainder():
    from functional.default_lowering import CHUNK, FIRST_CHUNK, SYMBOLIC_STAGES

    n = fl.nat("N", multiple_of=FIRST_CHUNK)
    total = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
    text = str(_lowered(total))
    # no remainder of the first stage's chunks: the partial results' stages have theirs
    assert f"split {FIRST_CHUNK} xs" in text and f"(take ({CHUNK} * (N / {FIRST_CHUNK} // {CHUNK}))" in text
    assert text.count("map_global") == SYMBOLIC_STAGES
    _agrees(total, _lowered(total), {"N": 128 * 5})


def test_a_symbolic_reduction_without_facts_is_parallel_and_a_short_one_sequential():
    from functional.default_lowering import FIRST_CHUNK, SYMBOLIC_STAGES

    low = _lowered(PROGRAMS["total"])
    assert str(low).count("map_global") == SYMBOLIC_STAGES
    assert f"drop ({FIRST_CHUNK} * (N // {FIRST_CHUNK})) xs" in str(low)
    _agrees(PROGRAMS["total"], low, {"N": 4099})
    short = fl.infer(fix_sizes(PROGRAMS["total"], {"N": S.SMALL_REDUCTION - 1}))
    assert "map_global" not in str(_lowered(short))


def test_mm_gets_a_2d_launch_and_maps_inside_are_sequential():
    text = str(_lowered(PROGRAMS["mm"]))
    assert "map_global 1 (fun(row_a) => map_global 0 (fun(col_b) => reduce_seq" in text
    assert "map_seq" not in text  # the dot product's map is fused into its reduce_seq


def test_gemv_fuses_its_maps_into_one_parallel_map():
    text = str(_lowered(PROGRAMS["gemv"]))
    assert text.count("map_global") == 1 and "(zip mat ys)" in text


def test_a_map_zipped_with_an_array_fuses_into_its_reader():
    # zip (map f xs) ys (rule zip_map_fst): no array between the two maps (K-Means' distances were a
    # global temporary of 5 floats per point: 0.78 of the copy bandwidth on an H100)
    n = fl.nat("N")
    prog = fl.fun([fl.array(n, fl.f32), fl.array(n, fl.f32)],
                  lambda a, b: fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(fl.map(fl.abs, a), b)))
    low = _lowered(prog)
    assert "map_global 0 (fun(x) => abs (fst x) * snd x) (zip a b)" in str(low)
    _agrees(prog, low, {"N": 33})


def test_a_map_bound_by_let_and_read_twice_is_stored_in_global_memory():
    n = fl.nat("N")
    prog = fl.fun([fl.array(n, fl.f32)], lambda a: fl.let(fl.map(fl.abs, a), lambda t: fl.map(
        lambda p: fl.fst(p) * fl.snd(p), fl.zip(t, t))))
    low = _lowered(prog)
    assert "let (to_global (map_global 0 abs a))" in str(low)
    _agrees(prog, low, {"N": 33})


def _lowered_for(program, target):
    low, _ = derive(program, S.default_schedule(program, target))
    assert S.high_level_left(low) == []
    return low


def test_a_map_of_a_map_of_a_map_on_a_cpu_is_2d_with_a_sequential_inner_loop():
    # each item walks a contiguous row (Jacobi 3D 128^3 on PoCL: 0.54 ms, 1.0 ms as a 3D launch)
    m, n = fl.nat("M"), fl.nat("N")
    prog = fl.fun([fl.array(4, fl.array(m, fl.array(n, fl.f32)))], lambda a: fl.map(fl.map(fl.map(fl.abs)), a))
    low = _lowered(prog)
    assert "map_global 1 (fun(x) => map_global 0 (fun(x) => map_seq abs x) x) a" in str(low)
    _agrees(prog, low, {"M": 3, "N": 5})


def test_a_map_of_a_map_of_a_map_in_lockstep_is_one_3d_launch_with_the_contiguous_map_on_dimension_0():
    # a warp reads neighbouring elements (a loop per item strided them by N: Jacobi 3D 512^3 on the
    # H200, 6.5 -> 0.50 ms)
    m, n = fl.nat("M"), fl.nat("N")
    prog = fl.fun([fl.array(4, fl.array(m, fl.array(n, fl.f32)))], lambda a: fl.map(fl.map(fl.map(fl.abs)), a))
    low = _lowered_for(prog, Target(lockstep_items=True))
    assert "map_global 2 (fun(x) => map_global 1 (fun(x) => map_global 0 abs x) x) a" in str(low)
    _agrees(prog, low, {"M": 3, "N": 5})


def test_a_fourth_nested_map_runs_sequentially_inside_the_3d_launch():
    prog = fl.fun([fl.array(2, fl.array(3, fl.array(4, fl.array(5, fl.f32))))],
                  lambda a: fl.map(fl.map(fl.map(fl.map(fl.abs))), a))
    low = _lowered_for(prog, Target(lockstep_items=True))
    assert "map_global 0 (fun(x) => map_seq abs x) x" in str(low) and "map_global 2" in str(low)
    _agrees(prog, low, {})


@pytest.mark.parametrize("name", ["jacobi3d_7", "hotspot3d", "jacobi3d_27"])
def test_a_3d_stencil_in_lockstep_is_a_3d_launch_of_tiles_and_agrees(name):
    from suite import _by

    program = fl.infer(fix_sizes(_by[name].program, {"D": 8, "H": 6, "W": 7}))  # 4 x 2 x 1 tiles divide
    low = _lowered_for(program, Target(lockstep_items=True))
    text = str(low)
    assert "map_global 2" in text and "map_global 0 (map_seq_unroll (map_seq_unroll (map_seq_unroll" in text
    assert "split 4" in text
    _agrees(program, low, {})


def test_a_3d_stencil_no_tile_fits_is_the_plain_3d_launch():
    """One plane (no remainder to cut), 5 rows (no 1 x 2 x 1 tile)."""
    from suite import _by

    program = fl.infer(fix_sizes(_by["jacobi3d_7"].program, {"D": 1, "H": 5, "W": 7}))
    low = _lowered_for(program, Target(lockstep_items=True))
    assert "map_global 2" in str(low) and "map_seq" not in str(low)
    _agrees(program, low, {})

def test_what_it_cannot_lower_is_a_strategy_error_naming_primitive_and_place(monkeypatch):
    from functional import default_lowering

    monkeypatch.setattr(default_lowering, "parallelise", lambda target=None: identity)  # as if nothing were lowered
    with pytest.raises(StrategyError, match=r"cannot lower `reduce` at 0\.0: reduce \(\+\) \(let \("):
        derive(PROGRAMS["total"], S.default_schedule(PROGRAMS["total"]))


def test_fully_lowered_names_the_first_high_level_primitive():
    result = S.fully_lowered()(fl.infer(PROGRAMS["scal"]))
    assert not result.ok and "`map` at 0.0.0" in result.reason
    assert S.fully_lowered()(_lowered(PROGRAMS["scal"])).ok


def test_outside_functions_does_not_enter_lambdas():
    # the stencil's reductions are per window (inside map's function): never split
    low = _lowered(fl.infer(fix_sizes(PROGRAMS["stencil"], {"N": 1 << 16})))
    assert "split" not in str(low)


def test_default_schedule_is_exported():
    assert "default_schedule" in S.__all__


def test_a_fold_that_applies_an_associative_operator_runs_as_its_reduction_of_a_map():
    """asum written as a fold, `reduce (fun(acc, x) => acc + abs x) 0 xs`: the step is not
    associative, the operator it applies is (rules.algorithmic fold_fission): parallel stages."""
    fold = fl.fun([fl.array(8192, fl.f32)], lambda xs: fl.reduce(lambda acc, x: acc + fl.abs(x), 0.0, xs))
    low, derivation = derive(fold, S.default_schedule(fold))
    assert "fold_fission" in derivation.to_text() and "map_global" in str(low) and "as_vector 16" in str(low)
    _agrees(fold, low, {})
    mirrored = fl.fun([fl.array(4096, fl.f32), fl.array(4096, fl.f32)], lambda xs, ys: fl.reduce(
        lambda acc, p: fl.pair(fl.fst(acc) + fl.fst(p), fl.snd(p) * fl.snd(p) + fl.snd(acc)), fl.pair(0.0, 0.0),
        fl.zip(xs, ys)))
    low = _lowered(mirrored)
    assert "map_global" in str(low)
    _agrees(mirrored, low, {})
    not_a_fold_of_an_operator = fl.fun([fl.array(4096, fl.f32)], lambda xs: fl.reduce(
        lambda acc, x: acc * 0.5 + x, 0.0, xs))
    assert "map_global" not in str(_lowered(not_a_fold_of_an_operator))


def test_a_reduction_from_a_non_neutral_value_with_a_bare_primitive_map_is_read_as_vectors():
    """max |x| from 0 (`reduce max 0.0 (map abs xs)`): the lanes start from max's neutral -inf, 0
    is combined once; `map abs` (no lambda) is lane-wise as `map (fun(x) => abs x)` is."""
    amax = fl.fun([fl.array(4096, fl.f32)], lambda xs: fl.reduce(fl.max, 0.0, fl.map(fl.abs, xs)))
    low = _lowered(amax)
    assert "as_vector 16" in str(low) and "map_global" in str(low)
    _agrees(amax, low, {})
    rows = fl.fun([fl.array(4, fl.array(256, fl.f32))], lambda a: fl.map(
        lambda row: fl.reduce(fl.max, 0.0, fl.map(fl.abs, row)), a))
    low = _lowered(rows)
    assert "as_vector 16" in str(low)
    _agrees(rows, low, {})


@pytest.mark.parametrize("n, width", [(4096, 16), (1000, 8), (1001, None), (48, None)])
def test_a_program_level_lane_wise_map_computes_a_vector_of_elements_at_once(n, width):
    """saxpy over a zip: the widest of VECTOR_WIDTHS dividing the length (none: scalar; a short
    map stays scalar too); the reduction's data is left to the reductions phase."""
    saxpy = fl.fun([fl.f32, fl.array(n, fl.f32), fl.array(n, fl.f32)], lambda a, xs, ys: fl.map(
        lambda p: a * fl.fst(p) + fl.erfc(fl.snd(p)), fl.zip(xs, ys)))
    low = _lowered(saxpy)
    assert (f"as_vector {width} xs" in str(low)) if width else "as_vector" not in str(low)
    _agrees(saxpy, low, {})


def test_a_work_items_large_let_map_is_computed_as_vectors_and_stored_in_global_memory():
    """softmax's exponentials of a row of 1024, a `let` value one item computes: vectors (16 lanes,
    `vectorize_lanes`), stored in global memory (materialise_global: as 64 vectors the store
    phase would count it small enough for private memory, 4 KB a PoCL stack overflows), the
    division then read as vectors of the stored row (PoCL 4096 x 1024: 17.9 -> 2.5 ms)."""
    import math

    softmax = fl.fun([fl.array(6, fl.array(1024, fl.f32))], lambda a: fl.map(lambda row: fl.let(
        fl.reduce(fl.max, fl.literal(-math.inf, fl.f32), row), lambda mx: fl.let(
            fl.map(lambda x: fl.exp(x - mx), row), lambda e: fl.map(lambda v: v / fl.reduce(fl.add, 0.0, e), e))), a))
    low, derivation = derive(softmax, S.default_schedule(softmax))
    text = derivation.to_text()
    assert text.count("vectorize_lanes") == 2 and "materialise_global" in text
    assert "to_private" not in str(low) and "to_global (as_scalar (map_seq" in str(low)
    _agrees(softmax, low, {})


def test_a_map_read_by_a_reduction_is_left_to_the_reductions_phase():
    dot = fl.fun([fl.array(4096, fl.f32), fl.array(4096, fl.f32)], lambda xs, ys: fl.reduce(
        fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys))))
    _, derivation = derive(dot, S.default_schedule(dot))
    assert "vectorize_lanes" not in derivation.to_text() and "reduce_vectorize_map" in derivation.to_text()


def test_a_reduction_of_a_concatenation_reduces_each_part_in_parallel_stages_read_as_vectors():
    """reduce_concat: `f (reduce f z xs) (reduce f e ys)`, each part contiguous (a chunk across the
    two arrays could not be read as one vector)."""
    both = fl.fun([fl.array(8192, fl.f32), fl.array(4100, fl.f32)], lambda xs, ys: fl.reduce(
        fl.add, 1.0, fl.concat(xs, ys)))
    low, derivation = derive(both, S.default_schedule(both))
    assert "reduce_concat" in derivation.to_text() and "concat" not in str(low)
    assert "as_vector 16 xs" in str(low) or "(split 128 xs)" in str(low)
    assert str(low).count("as_vector 16") == 2
    _agrees(both, low, {})


# ------------------------------------------------------------- neighbourhood tiles (lockstep targets)


def _suite_program(name, sizes):
    from suite import _by

    return fl.infer(fix_sizes(_by[name].program, sizes))


@pytest.mark.parametrize("name", ["jacobi2d_5", "hotspot2d", "conv2d_5x5"])
def test_a_nest_over_neighbourhoods_in_lockstep_computes_a_tile_per_item_and_agrees(name):
    program = _suite_program(name, {"H": 16, "W": 20})  # 4 x 2 tiles divide 16 x 20
    low = _lowered_for(program, Target(lockstep_items=True))
    text = str(low)
    assert text.startswith("fun(") and "join (map_global 1 (fun(" in text
    assert "map_global 0 (map_seq_unroll (map_seq_unroll" in text and "split 4" in text and "split 2" in text
    _agrees(program, low, {})


def test_the_tile_is_the_first_that_divides_else_the_first_whose_rows_leave_a_remainder():
    assert "split 2 (" in str(_lowered_for(_suite_program("jacobi2d_5", {"H": 6, "W": 5}),
                                            Target(lockstep_items=True)))  # 2 x 1: 6 rows, 5 columns
    # 5 x 7: no tile divides; 4 x 1 tiles take 4 rows (map_split_at), the last row is a map of its own,
    # both written in place through concat (two kernels, no temporary)
    odd = _suite_program("jacobi2d_5", {"H": 5, "W": 7})
    low = _lowered_for(odd, Target(lockstep_items=True))
    text = str(low)
    assert text.startswith("fun(grid: 5.7.f32) => concat (join (map_global 1") and "(split 4 (take 4 (" in text
    assert "(drop 4 (" in text and "split 1 row" in text
    program = dpia.translate(low)
    assert not [c for c in commands(program.body) if isinstance(c, New) and c.mem.space is AddressSpace.GLOBAL]
    _agrees(odd, low, {})
    # a single row of an odd length: no tile, no remainder to cut
    one_row = _suite_program("jacobi2d_5", {"H": 1, "W": 7})
    assert "map_seq_unroll" not in str(_lowered_for(one_row, Target(lockstep_items=True)))


@pytest.mark.parametrize("name, sizes", [("hotspot2d", {"H": 13, "W": 9}), ("conv2d_5x5", {"H": 11, "W": 9}),
                                         ("jacobi3d_7", {"D": 7, "H": 5, "W": 3})])
def test_a_remainder_of_rows_or_planes_the_tile_leaves_agrees_in_lockstep(name, sizes):
    program = _suite_program(name, sizes)
    low = _lowered_for(program, Target(lockstep_items=True))
    assert str(low).split("=> ", 1)[1].startswith("concat (join (map_global") and "map_seq_unroll" in str(low)
    _agrees(program, low, {})


def test_neighbourhood_tiles_leave_cpus_and_nests_without_neighbourhoods_alone():
    assert "map_seq_unroll" not in str(_lowered_for(_suite_program("jacobi2d_5", {"H": 16, "W": 20}), Target()))
    outer = fl.fun([fl.array(16, fl.f32), fl.array(20, fl.f32)],
                   lambda x, y: fl.map(lambda a: fl.map(lambda b: a * b, y), x))
    assert "map_seq_unroll" not in str(_lowered_for(fl.infer(outer), Target(lockstep_items=True)))


def _random_neighbourhood_nest(rng):
    """A random 2D stencil over an h x w grid (window 1 to 3 each way, a pad keeping the shape or
    none, a random weighted sum of the window, half of the time zipped with a second grid):
    `map (fun(row) => map f row) (neighbourhoods)` as the suite writes them."""
    from suite import map2d, pad2d

    h, w = int(rng.choice([2, 3, 4, 6, 8, 12])), int(rng.choice([1, 2, 3, 5, 6, 10]))
    n = int(rng.integers(1, 4))
    pad = [fl.pad_clamp, fl.pad_wrap, fl.pad_mirror, None][int(rng.integers(0, 4))]
    taps = [(i, j, round(float(rng.uniform(-1, 1)), 2)) for i in range(n) for j in range(n) if rng.random() < 0.7]
    taps = taps or [(0, 0, 1.0)]
    zipped = rng.random() < 0.5

    def weighted(win):
        out = None
        for i, j, c in taps:
            term = c * win[i][j]
            out = term if out is None else out + term
        return out

    def build(grid, other=None):
        padded = pad2d(pad, (n - 1) // 2, grid) if pad is not None and n % 2 == 1 else grid
        nbhd = fl.map(fl.transpose, fl.slide(n, 1, fl.map(fl.slide(n, 1), padded)))
        if other is None:
            return map2d(weighted, nbhd)
        rows = fl.map(lambda p: fl.zip(fl.fst(p), fl.snd(p)), fl.zip(nbhd, other))
        return map2d(lambda q: weighted(fl.fst(q)) * fl.snd(q), rows)

    out_h, out_w = (h, w) if pad is not None and n % 2 == 1 else (h - n + 1, w - n + 1)
    if out_h < 1 or out_w < 1:
        return None
    grid_t = fl.array(h, fl.array(w, fl.f32))
    if zipped:
        return fl.fun([grid_t, fl.array(out_h, fl.array(out_w, fl.f32))], build)
    return fl.fun([grid_t], build)


def test_random_nests_over_neighbourhoods_agree_with_the_interpreter_in_lockstep():
    rng = np.random.default_rng(27)
    tiled = 0
    for _ in range(14):
        program = _random_neighbourhood_nest(rng)
        if program is None:
            continue
        program = fl.infer(program)
        low = _lowered_for(program, Target(lockstep_items=True))
        tiled += "map_seq_unroll" in str(low)
        _agrees(program, low, {})
    assert tiled >= 5, tiled  # the tile phase ran on most of them (a 1 x 1 output grid, or odd both ways, is left)


def test_random_3d_nests_over_neighbourhoods_agree_with_the_interpreter_in_lockstep():
    from suite import map3d, pad3d_clamp, slide3d, zip3d

    rng = np.random.default_rng(2027)
    tiled = 0
    for _ in range(8):
        d, h, w = (int(rng.choice([2, 4, 5, 8])) for _ in range(3))
        n = int(rng.choice([1, 3]))
        padded = rng.random() < 0.7
        taps = [(i, j, k, round(float(rng.uniform(-1, 1)), 2)) for i in range(n) for j in range(n) for k in range(n)
                if rng.random() < 0.4] or [(0, 0, 0, 1.0)]

        def weighted(win):
            out = None
            for i, j, k, c in taps:
                out = c * win[i][j][k] if out is None else out + c * win[i][j][k]
            return out

        def nbhd(grid):
            return slide3d(n, pad3d_clamp((n - 1) // 2, grid) if padded else grid)

        out = (d, h, w) if padded else (d - n + 1, h - n + 1, w - n + 1)
        if min(out) < 1:
            continue
        grid_t = fl.array(d, fl.array(h, fl.array(w, fl.f32)))
        if rng.random() < 0.5:
            program = fl.fun([grid_t], lambda g: map3d(weighted, nbhd(g)))
        else:
            other_t = fl.array(out[0], fl.array(out[1], fl.array(out[2], fl.f32)))
            program = fl.fun([grid_t, other_t], lambda g, o: map3d(lambda q: weighted(fl.fst(q)) + fl.snd(q),
                                                                     zip3d(nbhd(g), o)))
        program = fl.infer(program)
        low = _lowered_for(program, Target(lockstep_items=True))
        tiled += "map_global 2 (fun(" in str(low) and "map_seq_unroll (map_seq_unroll (map_seq_unroll" in str(low)
        _agrees(program, low, {})
    assert tiled >= 3, tiled


def test_a_row_map_over_views_of_its_row_is_split_off_first_and_never_into_a_stored_copy():
    """separable_conv's second pass maps over `transpose rows` (a view of the row): map_fission
    makes it the nest the tiles take.  hotspot2d_indexed's rows read `at r 1` (an element, not a
    layout view): split off, that map would be stored, a kernel copying every row (0.31 -> 17 ms
    on an H100), so it stays one untiled kernel."""
    from suite import BY_NAME

    program = fl.infer(fix_sizes(BY_NAME["separable_conv"].program, {"H": 16, "W": 16}))
    low, derivation = derive(program, S.default_schedule(program, Target(lockstep_items=True)))
    assert "step: map_fission" in derivation.to_text() and "map_seq_unroll (map_seq_unroll" in str(low)
    _agrees(program, low, {})
    indexed = fl.infer(fix_sizes(BY_NAME["hotspot2d_indexed"].program, {"H": 16, "W": 16}))
    low = _lowered_for(indexed, Target(lockstep_items=True))
    assert dpia.compile(low).source.count("kernel void") == 1
    _agrees(indexed, low, {})


@pytest.mark.parametrize("target", [Target(), Target(lockstep_items=True)], ids=["cpu", "gpu"])
def test_a_stored_row_a_vector_reduction_cuts_is_stored_once(target):
    """A reduction over data the program stores (to_local, written by hand), vectorised with a
    remainder (100 = 96 + 4): both parts read one stored copy (reduce_take_drop_shared), where
    pushing take and drop into the data stored it twice (found by a bug hunt)."""
    program = fl.infer(fl.parse("fun(a: 7.100.f32) => map (fun(r) => reduce (+) 0.0 (to_local (map (fun(x) => "
                                "x * x) r))) a"))
    low = _lowered_for(program, target)
    assert str(low).count("to_local") == 1 and "take 96 ys" in str(low) and "drop 96 ys" in str(low)
    _agrees(program, low, {})
