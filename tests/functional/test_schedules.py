"""The seed's derivations (functional/schedules.py) and the macro strategies they use
(functional/rules/macros.py).

For every schedule: the result is fully lowered where it claims to be (no computing `map`
or `reduce` left), has the program's type, agrees with NumPy on random inputs for two
bindings of its symbolic sizes, prints and parses back, and its derivation's text replays
to the same program.  Each derivation runs once per session (cached).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import pytest

import functional as fl
from functional import schedules as S
from functional.derivation import Derivation, derive
from functional.errors import StrategyError
from functional.expr import App, Prim, walk
from functional.rules import RULES
from functional.rules import macros as M
from functional.strategies import argument, body, fmap

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from examples.seed import dot_body, scal_body  # the seed's own program bodies

# Sizes the programs may split: bound at run time from the inputs' shapes.
N = fl.nat("N", multiple_of=128)
R, C, D = fl.nat("R", multiple_of=8), fl.nat("C", multiple_of=8), fl.nat("D", multiple_of=8)
vec = fl.array(N, fl.f32)

PROGRAMS = {
    "sum": fl.fun([vec], lambda xs: fl.reduce(fl.add, 0.0, xs)),
    "asum": fl.fun([vec], lambda xs: xs >> fl.map(fl.abs) >> fl.reduce(fl.add, 0.0)),
    "dot": fl.fun([vec, vec], dot_body),
    "scal": fl.fun([fl.f32, vec], scal_body),
    "gemv": fl.fun([fl.array(R, vec), vec, fl.array(R, fl.f32), fl.f32, fl.f32],
                   lambda mat, xs, ys, alpha, beta: fl.map(
                       lambda p: fl.fst(p) + fl.snd(p),
                       fl.zip(fl.map(lambda row: alpha * dot_body(row, xs), mat), scal_body(beta, ys)))),
    "mm": fl.fun([fl.array(R, fl.array(D, fl.f32)), fl.array(D, fl.array(C, fl.f32))],
                 lambda a, b: fl.map(lambda row_a: fl.map(lambda col_b: dot_body(row_a, col_b), fl.transpose(b)), a)),
}


def _vec(rng, n):
    return rng.standard_normal(n).astype(np.float32)


def _mat(rng, m, n):
    return rng.standard_normal((m, n)).astype(np.float32)


# name -> (size bindings: two tuples), inputs(rng, *sizes), NumPy reference
INPUTS = {
    "sum": ([(256,), (384,)], lambda r, n: (_vec(r, n),), lambda x: np.sum(x)),
    "asum": ([(256,), (512,)], lambda r, n: (_vec(r, n),), lambda x: np.sum(np.abs(x))),
    "dot": ([(256,), (384,)], lambda r, n: (_vec(r, n), _vec(r, n)), lambda x, y: np.dot(x, y)),
    "scal": ([(128,), (256,)], lambda r, n: (np.float32(1.5), _vec(r, n)), lambda a, x: a * x),
    "gemv": ([(8, 128), (16, 256)],
             lambda r, m, n: (_mat(r, m, n), _vec(r, n), _vec(r, m), np.float32(0.5), np.float32(2.0)),
             lambda mat, x, y, a, b: a * (mat @ x) + b * y),
    "mm": ([(16, 8, 24), (8, 16, 16)], lambda r, m, k, n: (_mat(r, m, k), _mat(r, k, n)), lambda a, b: a @ b),
}

# schedule name -> (program, strategy, primitives the result must contain)
SCHEDULES = {
    "vec_sum": ("sum", lambda: S.vec_sum(128, 32),
                {"map_workgroup", "map_local", "reorder_stride", "iterate", "to_local", "reduce_seq", "split"}),
    "asum": ("asum", lambda: S.asum(128, 32), {"map_workgroup", "map_local", "iterate", "to_local", "reduce_seq"}),
    "chunked_sum": ("sum", lambda: S.chunked_sum(16, 8), {"map_global", "as_vector", "reduce_seq_unroll", "let"}),
    "asum_global": ("asum", lambda: S.global_reduce(16), {"map_global", "reduce_seq"}),
    "dot": ("dot", lambda: S.dot(16), {"map_global", "reduce_seq"}),
    "dot_workgroup": ("dot", lambda: S.parallel_reduce(128, 32), {"map_workgroup", "map_local", "iterate"}),
    "scal_global": ("scal", S.scal_global, {"map_global"}),
    "scal_vectorized": ("scal", lambda: S.scal_vectorized(4), {"map_global", "map_vec", "as_vector", "as_scalar"}),
    "scal_workgroup": ("scal", lambda: S.scal_workgroup(64), {"map_workgroup", "map_local"}),
    "gemv_global": ("gemv", S.gemv_global, {"map_global", "reduce_seq"}),
    "gemv_workgroup": ("gemv", lambda: S.gemv_workgroup(16), {"map_workgroup", "map_local", "to_local", "reduce_seq"}),
    "mm_tiled": ("mm", lambda: S.mm_tiled(4, 8, 4), {"map_workgroup", "map_local", "to_local", "reduce_seq", "let"}),
    "mm_register_blocked": ("mm", lambda: S.mm_register_blocked(8, 8, 4, 2, 4),
                            {"map_workgroup", "map_local", "to_local", "to_private", "map_seq_unroll", "reduce_seq"}),
    "mm_register_blocked_1d": ("mm", lambda: S.mm_register_blocked_1d(8, 8, 4, 2),
                               {"map_workgroup", "map_local", "to_local", "reduce_seq"}),
}


@functools.cache
def derived(name: str):
    prog_name, make, _ = SCHEDULES[name]
    return derive(PROGRAMS[prog_name], make())


def primitives(e) -> set[str]:
    return {n.name for n in walk(e) if isinstance(n, Prim)}


def remaining_high_level(e) -> list[str]:
    """The test's own, strict list of high-level primitives left: any `reduce`, and any `map`
    except a map of a layout function (`map transpose`: a view, no loop; the register
    blocks' tile/untile need them, the translation reads and writes through them)."""
    return [str(node)[:80] for node in walk(e)
            if isinstance(node, App) and isinstance(node.fun, Prim) and node.fun.name in ("map", "reduce")
            and not (node.fun.name == "map" and S.is_view_fn(node.arg))]


def check_against_numpy(program_name: str, program) -> None:
    sizes, make_inputs, reference = INPUTS[program_name]
    rng = np.random.default_rng(0)
    for binding in sizes:
        inputs = make_inputs(rng, *binding)
        got = np.asarray(fl.interpret(program, *inputs), dtype=np.float64)
        want = np.asarray(reference(*inputs), dtype=np.float64)
        assert got.shape == want.shape, (binding, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"sizes {binding}")


# ------------------------------------------------------------------------ schedules


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_lowers_typechecks_and_computes(name):
    prog_name, _, expected = SCHEDULES[name]
    result, derivation = derived(name)
    assert derivation.steps, name
    assert remaining_high_level(result) == [], f"{name}: not fully lowered: {remaining_high_level(result)}"
    assert S.high_level_left(result) == []
    assert expected <= primitives(result), f"{name}: missing {expected - primitives(result)} in {result}"
    original = fl.infer(PROGRAMS[prog_name])
    assert fl.infer(result).t == original.t
    check_against_numpy(prog_name, result)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_derivation_text_replays(name):
    result, derivation = derived(name)
    text = derivation.to_text()
    again = Derivation.from_text(text)
    assert again.steps == derivation.steps
    assert again.replay() == result
    assert fl.parse(str(result)) == result  # the low-level program's text reads back too
    assert all(s.rule in RULES for s in derivation.steps)  # only primitive, registered rules


def test_vec_sum_has_the_seed_shape():
    """reduce (+) 0 (map_workgroup (fun chunk => reduce_seq (iterate k (map_local (reduce_seq) . split 2 .
    reorder_stride l)) (to_local (map_local (reduce_seq) (split (block/local) (reorder_stride local chunk))))))
    (split block xs))."""
    result, derivation = derived("vec_sum")
    text = str(result)
    assert "(split 128 xs)" in text
    assert "split 4 (reorder_stride 32 " in text  # block/local elements per work-item, read with stride local
    assert "iterate 5 (fun(l: nat, ys) => to_local (map_local 0 (reduce_seq (+) 0.0) (split 2 (reorder_stride l ys))))" \
        in text
    assert text.count("to_local (map_local 0") == 2
    rules = [s.rule for s in derivation.steps]
    assert rules[:5] == ["reduce_split", "eta_expand_map", "reduce_reorder", "reduce_split", "reduce_split"]
    assert "partial_reduce_iterate_stride" in rules


def test_mm_tiled_copies_tiles_to_local_memory_once_per_step():
    result, derivation = derived("mm_tiled")
    text = str(result)
    assert text.startswith("fun(R: nat{multiple_of=8}, D: nat{multiple_of=8}, C: nat{multiple_of=8}")
    # the untile as whole-array views around the work-group maps
    assert "join (map_workgroup 1" in text and "transpose (join (map_workgroup 0" in text
    # both k-wide tiles of a step copied by the work-group (map_local 1 / 0) into local memory
    # B's tile: rows by local id 1; A's tile (transposed view): local id 0 walks A's rows (coalesced)
    assert text.count("to_local (map_local 1 (fun(r1) => map_local 0 (fun(r) => r) r1)") == 1
    assert text.count("to_local (map_local 0 (fun(r1) => map_local 1 (fun(r) => r) r1)") == 1
    assert "generate 4 (fun(i1) => generate 8 (fun(i) => 0.0))" in text  # the n x m tile accumulator
    assert "(zip (split 4 (transpose x)) (split 4 (transpose " in text  # pairs of k-wide tiles
    rules = {s.rule for s in derivation.steps}
    assert {"map_map_swap", "map_reduce_interchange", "split_zip", "copy_element", "map_join_transpose",
            "transpose_map_split", "store_local"} <= rules


def test_mm_register_blocked_keeps_blocks_in_private_memory():
    result, derivation = derived("mm_register_blocked")
    text = str(result)
    assert text.count("to_private (map_seq_unroll (fun(r) => r)") == 2  # a column of A and a row of B
    # each block's reduction starts from the accumulator's block (reduce_init_fusion; no `+ 0`:
    # neutral_init), copied by unrolled loops, and adds the outer product of the two copies in
    # place (fused, no product array in between)
    assert "(map_seq_unroll (fun(x1) => map_seq_unroll (fun(x) => x) x1) (fst r1))" in text
    assert "generate 4 (fun(i) => 0.0)))) (zip" not in text
    assert "fst x1 + snd x * snd x1" in text
    # the tile accumulator is blocked: 2 x 4 blocks of the 8 x 8 tile, put back by untile views
    assert "map (fun(r) => map transpose (split 4 (transpose r))) (split 2 (generate 8" in text
    assert {"block_accumulator", "reduce_init_fusion", "neutral_init", "materialise_reduce_init_unrolled",
            "write_reduction_unrolled"} <= {s.rule for s in derivation.steps}


def test_register_blocking_uses_the_seed_macro_rules():
    """The seed's "Register Blocking as a Macro Rule" list, plus the glue it leaves implicit."""
    seed_list = {"split_join", "map_map_swap", "map_fission", "map_reduce_interchange", "map_map_interchange",
                 "transpose_transpose", "reduce_seq_map_fusion", "map_fusion"}
    glue = {"eta_expand_map", "transpose_map_zip", "fst_pair", "snd_pair", "beta"}
    tile = fl.fun([fl.array(R, fl.array(D, fl.f32)), fl.array(C, fl.array(D, fl.f32))],
                  lambda xs, ys: fl.map(lambda a: fl.map(lambda b: dot_body(a, b), ys), xs))
    result, derivation = derive(tile, S.program_body(M.register_blocking_1d(2)))
    used = {s.rule for s in derivation.steps}
    assert used <= seed_list | glue, used - seed_list - glue
    assert {"split_join", "map_map_swap", "map_fission", "map_reduce_interchange", "map_map_interchange",
            "transpose_transpose", "map_fusion"} <= used
    text = str(result)
    assert "zip (transpose x) y" in text  # the seed's zip (transpose aBlocks) bs
    rng = np.random.default_rng(3)
    a, b = _mat(rng, 8, 16), _mat(rng, 24, 16)
    np.testing.assert_allclose(fl.interpret(result, a, b), a @ b.T, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ macro strategies


def _nested(f):
    return fl.fun([fl.array(R, fl.f32), fl.array(C, fl.f32)], lambda xs, ys: fl.map(lambda a: fl.map(
        lambda b: f(a, b), ys), xs))


def test_tile_2d_on_any_nested_map():
    prog = _nested(lambda a, b: a * b - fl.abs(a))
    result, derivation = derive(prog, S.program_body(S.tile(4, 2)))
    assert [s.rule for s in derivation.steps] == ["split_join", "eta_expand_map", "split_join", "map_fission",
                                                  "map_map_swap"]
    assert str(result).endswith("(split 2 ys)))) (split 4 xs))")
    rng = np.random.default_rng(4)
    x, y = _vec(rng, 16), _vec(rng, 8)
    np.testing.assert_array_equal(fl.interpret(result, x, y), x[:, None] * y[None, :] - np.abs(x)[:, None])


def test_tile_reduction_and_register_blocking_2d_stay_high_level_and_correct():
    tile = fl.fun([fl.array(R, fl.array(D, fl.f32)), fl.array(C, fl.array(D, fl.f32))],
                  lambda xs, ys: fl.map(lambda a: fl.map(lambda b: dot_body(a, b), ys), xs))
    rng = np.random.default_rng(5)
    a, b = _mat(rng, 8, 16), _mat(rng, 16, 16)
    for strategy in (M.tile_reduction(4), M.register_blocking_2d(2, 4)):
        result, _ = derive(tile, S.program_body(strategy))
        assert "reduce (fun(acc, col) => map" in str(result)  # a reduction with an array accumulator
        np.testing.assert_allclose(fl.interpret(result, a, b), a @ b.T, rtol=1e-4, atol=1e-4)


def test_lift_reduce_moves_a_reduction_out_of_a_map():
    prog = fl.fun([fl.array(R, fl.array(D, fl.f32)), fl.array(D, fl.f32)],
                  lambda rows, v: fl.map(lambda row: dot_body(row, v), rows))
    result, _ = derive(prog, S.program_body(M.lift_reduce()))
    text = str(result)
    assert text.startswith("fun(R: nat{multiple_of=8}, D: nat{multiple_of=8}, rows: R.D.f32, v: D.f32) => reduce")
    assert "zip (transpose rows) v" in text
    rng = np.random.default_rng(6)
    m, x = _mat(rng, 8, 16), _vec(rng, 16)
    np.testing.assert_allclose(fl.interpret(result, m, x), m @ x, rtol=1e-4, atol=1e-4)


def test_outermost_and_parallel_levels():
    prog = fl.fun([fl.array(R, fl.array(C, fl.f32))], lambda xss: fl.map(lambda r: fl.map(lambda x: x + 1.0, r), xss))
    result, _ = derive(prog, S.program_body(S.parallel([("map_workgroup", 0), ("map_local", 0)])))
    assert str(result).endswith("map_workgroup 0 (fun(r) => map_local 0 (fun(x) => x + 1.0) r) xss")
    result, _ = derive(prog, S.program_body(S.parallel([("map_global", 1)])))
    assert "map_global 1 (fun(r) => map_seq (fun(x) => x + 1.0) r) xss" in str(result)
    stored, _ = derive(result, S.program_body(S.store_in_memory("global", lambda e: True)))
    assert "to_global (map_global 1" in str(stored)


def test_parallel_levels_stay_out_of_code_one_item_runs():
    """Fuzz seeds 36788 and 37323: a map in generate's function (computed where each element is
    read) and a map in a program-level reduction's operator (one item's step) are no places for
    map_workgroup; the map in the data beside them is.  Below the top level, a group-level
    reduction's operator is group code, and its maps become map_local (a tile's copies)."""
    text = ("fun(xs: 8.f32, ys: 4.8.f32) => map (fun(v) => v + 1.0) (zip (generate 8 (fun(i) => reduce max 0.0 "
            "(map (fun(x) => x * 2.0) xs))) (reduce (fun(a, r) => map (fun(p) => fst p + snd p) (zip a r)) "
            "(generate 8 (fun(i) => 0.0)) ys))")
    prog = fl.infer(fl.parse(text.replace("(fun(v) => v + 1.0)", "(fun(v) => fst v + snd v)")))
    result, _ = derive(prog, S.program_body(S.parallel([("map_workgroup", 0), ("map_local", 0)])))
    out = str(result)
    assert out.count("map_workgroup") == 1 and "map_workgroup 0 (fun(v) => fst v + snd v)" in out, out
    assert "(map (fun(x) => x * 2.0) xs)" in out and "map (fun(p) => fst p + snd p)" in out, out
    group = fl.infer(fl.parse("fun(ys: 2.4.8.f32) => map (fun(rows) => reduce (fun(a, r) => map (fun(p) => "
                              "fst p + snd p) (zip a r)) (generate 8 (fun(i) => 0.0)) rows) ys"))
    result, _ = derive(group, S.program_body(S.parallel([("map_workgroup", 0), ("map_local", 0)])))
    assert "map_local 0 (fun(p) => fst p + snd p)" in str(result), str(result)


def test_views_are_not_computations():
    view_fns = [fl.join, fl.split(4), fl.transpose, fl.lam(lambda x: fl.split(4, x)), fl.map(fl.join),
                fl.lam(lambda x: fl.transpose(fl.map(fl.split(2), x)))]
    assert all(S.is_view_fn(f) for f in view_fns)
    computations = [fl.lam(lambda x: x), fl.lam(lambda x: x + 1.0), fl.map(fl.lam(lambda v: v)),
                    fl.reduce(fl.add, 0.0), fl.lam(lambda x: fl.split(2, fl.map(fl.neg, x)))]
    assert not any(S.is_view_fn(f) for f in computations)
    low = fl.infer(PROGRAMS["scal"])
    assert S.high_level_left(low) == ["map fun(x) => x * a"]


def test_schedules_report_where_they_do_not_apply():
    with pytest.raises(StrategyError, match="does not divide"):
        derive(fl.fun([fl.array(fl.nat("N", multiple_of=64), fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)),
               S.vec_sum(128, 32))
    with pytest.raises(ValueError, match="power of two"):
        S.vec_sum(96, 24)
    with pytest.raises(StrategyError, match="map \\(fun\\(a\\) => map"):
        derive(PROGRAMS["scal"], S.program_body(S.tile(4, 4)))


def test_in_tiles_locates_the_tiles():
    result, _ = derive(PROGRAMS["mm"], S.program_body(S.tile(4, 8)))
    tiles = S.in_tiles(M.guard("a tile", M._is_nested_map))
    assert S.program_body(tiles)(fl.infer(result)).ok
    assert argument(fmap(body(M.guard("no", lambda e: False))))(fl.infer(result).body).ok is False


def test_lowered_reductions_and_maps_translate_with_dpia():
    """The low-level programs are what the DPIA translation expects (what a schedule chose is
    explicit: to_global for the per-group results, to_local for the stages)."""
    dpia = pytest.importorskip("dpia")
    for name in ("vec_sum", "asum", "dot", "dot_workgroup", "scal_global", "scal_vectorized", "scal_workgroup",
                 "gemv_global", "gemv_workgroup"):
        result, _ = derived(name)
        assert dpia.translate(result) is not None, name
