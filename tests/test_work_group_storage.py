"""A work-group's shared values of symbolic length: stored in global memory (OpenCL allocates
local memory at compile time), one slot per group, and the map_local loops over them keep
their bounds when the launch's local size is not fixed to their length."""

from __future__ import annotations

import re

import numpy as np

import dpia
from codegen_opencl import opencl as cg
from functional.interp import interpret
from functional.nat import Nat, Var
from functional.storage import GROUP, ITEM, store_rule
from functional.syntax import parse
from functional.types import ArrayType, f32

# A gemv candidate of the generated space: a row per work-group, its products per item into
# global memory, pairs summed per item into global memory, then the row's sum.  The second
# map_local runs over N / 2 items: printed as one iteration per item (as if the launch had
# N / 2 items) it read and wrote past its slots, and PoCL aborted ("double free or corruption").
GEMV_PAIRS = (
    "fun(M: nat, N: nat{multiple_of=2}, mat: M.N.f32, xs: N.f32, ys: M.f32, alpha: f32, beta: f32) => "
    "map_workgroup 0 (fun(x) => alpha * reduce_seq (+) 0.0 (to_global (map_local 0 (fun(c) => reduce_seq (+) 0.0 c) "
    "(split 2 (to_global (map_local 0 (fun(p) => fst p * snd p) (zip (fst x) xs)))))) + snd x * beta) (zip mat ys)")


def test_a_groups_value_of_symbolic_length_is_stored_in_global_memory():
    n_var, step_var = Var("N"), Var("l")
    n, step = Nat.atom(n_var), Nat.atom(step_var)
    assert store_rule(GROUP, ArrayType(n, f32)) == "materialise_global"
    assert store_rule(GROUP, ArrayType(Nat.const(64), ArrayType(Nat.const(2), f32))) == "materialise_local"
    # an iterate's step size is a constant in each unrolled step: local memory is fine
    assert store_rule(GROUP, ArrayType(step, f32), frozenset({step_var})) == "materialise_local"
    assert store_rule(GROUP, ArrayType(step * n, f32), frozenset({step_var})) == "materialise_global"
    assert store_rule(ITEM, ArrayType(n, f32)) == "materialise_global"


def test_local_loops_of_symbolic_length_keep_their_bounds():
    source = cg.emit(dpia.translate(parse(GEMV_PAIRS)))
    loops = re.findall(r"for \(int (lid\d+) = get_local_id\(0\); \1 < ([^;]+); \1 \+= get_local_size\(0\)\)", source)
    assert [bound for _, bound in loops] == ["N", "N / 2"], source
    assert not re.search(r"const int lid\d+ = get_local_id", source)  # no loop printed as one iteration per item


def test_the_gemv_candidate_over_global_slots_agrees_with_the_interpreter():
    program = parse(GEMV_PAIRS)
    kernel = dpia.compile(program)
    rng = np.random.default_rng(3)
    for m, n in ((3, 8), (5, 34), (4, 130)):  # N / 2 below, near and above a group's items
        a = rng.standard_normal((m, n)).astype(np.float32)
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(m).astype(np.float32)
        args = (a, x, y, np.float32(0.5), np.float32(2.0))
        np.testing.assert_allclose(kernel(*args), interpret(program, *args), rtol=1e-4, atol=1e-5)
