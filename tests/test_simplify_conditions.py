"""Index comparisons that the enclosing loops' ranges decide are folded
(imperative.simplify.simplify_conditions), and a map that only pads with a constant is read
as a view: a padded stencil reads its input in one kernel, testing only the true border."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import dpia
import functional as fl
from codegen_opencl import opencl as cg
from functional.interp import interpret
from functional.nat import Nat, Var, floordiv
from functional.primitives import is_view_fn
from functional.syntax import parse
from functional.types import AddressSpace, ArrayType, boolean, f32, i32
from imperative.ir import Assign, For, If, Lit, Load, NatExp, Op, ParFor, Level, Program, Store, Mem, seq
from imperative.simplify import simplify_conditions

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import suite  # noqa: E402

I, J, N = Var("i"), Var("j"), Var("N")
i, j, n = Nat.atom(I), Nat.atom(J), Nat.atom(N)
OUT = Mem("out", ArrayType(n, f32), AddressSpace.GLOBAL)


def _cmp(name, a, b):
    return Op(name, (), (NatExp(a, i32), NatExp(b, i32)), boolean)


def _pick(cond):
    """out[i] := select(cond, x[i], 0.0)"""
    return Assign(Store("out", i, f32, AddressSpace.GLOBAL),
                  Op("select", (), (cond, Load("x", i, f32, AddressSpace.GLOBAL), Lit(0.0, f32)), f32))


def _simplified(body):
    p = Program("p", (), OUT, (N,), body)
    return simplify_conditions(p).body


def _value(cmd):
    return cmd.body.value if isinstance(cmd, (For, ParFor)) else cmd.value


def test_comparisons_the_loop_range_decides_are_folded():
    loop = For(I, Nat.const(8), _pick(Op("and", (), (_cmp("ge", i + 1, Nat.const(1)), _cmp("lt", i + 1, Nat.const(9))),
                                             boolean)))
    assert _value(_simplified(loop)) == Load("x", i, f32, AddressSpace.GLOBAL)
    outside = For(I, Nat.const(8), _pick(_cmp("lt", i + 4, Nat.const(8))))  # true for i < 4 only: kept
    assert _simplified(outside) == outside
    never = For(I, Nat.const(8), _pick(_cmp("ge", i, Nat.const(8))))
    assert _value(_simplified(never)) == Lit(0.0, f32)


def test_symbolic_ranges_and_outer_loops_bound_the_index():
    # par_for i < N: i + 1 < N + 1 always, i >= 1 not always
    loop = ParFor(Level.GLOBAL, 0, I, n, _pick(Op("and", (), (_cmp("lt", i + 1, n + 1), _cmp("ge", i, Nat.const(1))),
                                                 boolean)))
    kept = Op("select", (), (_cmp("ge", i, Nat.const(1)), Load("x", i, f32, AddressSpace.GLOBAL), Lit(0.0, f32)), f32)
    assert _value(_simplified(loop)) == kept
    # for i < N { for j < i { j < N } }: the inner count names the outer variable
    nested = For(I, n, For(J, i, _pick(_cmp("gt", n, j))))
    assert _value(_simplified(nested).body) == Load("x", i, f32, AddressSpace.GLOBAL)


def test_what_the_ranges_do_not_bound_is_kept():
    divided = For(I, Nat.const(8), _pick(_cmp("lt", floordiv(i, 2), Nat.const(2))))
    assert _simplified(divided) == divided
    squared = For(I, Nat.const(8), _pick(_cmp("lt", i * i, Nat.const(100))))
    assert _simplified(squared) == squared
    free = _pick(_cmp("lt", i, Nat.const(8)))  # i is not a loop variable here: nothing known
    assert _simplified(free) == free


def test_a_decided_if_keeps_one_branch():
    then, orelse = _pick(Lit(True, boolean)), _pick(Lit(False, boolean))
    cmd = For(I, n, If(_cmp("le", i, n), then, orelse))
    assert _simplified(cmd).body == _simplified(then)
    assert _simplified(For(I, n, If(_cmp("le", n, i), then, orelse))).body == _simplified(orelse)


def test_a_map_that_pads_with_a_constant_is_a_view():
    row = fl.parse("fun(r) => pad_const 1 1 0.0 r")
    assert is_view_fn(row)
    assert not is_view_fn(fl.parse("fun(r) => map (fun(x) => x + 1.0) r"))
    assert not is_view_fn(fl.parse("fun(r) => r"))  # the identity is a copy


STENCIL = "fun(N: nat, xs: N.f32) => map_global 0 (fun(w) => at w 0 + at w 1 + at w 2) (slide 3 1 (pad_const 1 1 0.0 xs))"


@pytest.mark.parametrize("size", [1, 2, 5, 100])
def test_a_padded_stencil_tests_only_its_border_and_agrees(size):
    program = parse(STENCIL)
    source = cg.emit(dpia.translate(program))
    tests = re.findall(r"\(\((gid\d+[^()]*)\) (>=|<) \(([^()]+)\)\)", source)
    assert sorted(op for _, op, _ in tests) == ["<", ">="], source  # the left and the right border only
    x = np.random.default_rng(size).random(size, dtype=np.float32)
    np.testing.assert_allclose(dpia.compile(program)(x), interpret(program, x), rtol=1e-6)


def test_jacobi_2d_reads_its_padded_grid_in_one_kernel():
    kernel = dpia.compile(suite.jacobi2d_5)
    grid = np.random.default_rng(0).random((9, 13), dtype=np.float32)
    np.testing.assert_allclose(kernel(grid), suite.ref_jacobi2d_5(grid), rtol=1e-5)
    assert kernel.variant.kind == "default", kernel.variant
    source = kernel.source
    assert source.count("kernel void") == 1 and "tmp" not in source, source
    assert source.count("?") == 4, source  # one border test per neighbour, none for the centre


def test_a_window_read_through_join_is_unrolled_and_its_indices_fold():
    """jacobi2d_9 sums its 3x3 window as `reduce (+) 0 (join w)`: the 9 iterations read
    w[i / 3][i % 3]; unrolled (passes.unroll), each index is a constant offset."""
    kernel = dpia.compile(suite.jacobi2d_9)
    grid = np.random.default_rng(1).random((7, 11), dtype=np.float32)
    np.testing.assert_allclose(kernel(grid), suite.ref_jacobi2d_9(grid), rtol=1e-5)
    source = kernel.source
    assert "for (int i" not in source and "/ 3" not in source and "% 3" not in source, source
    assert source.count("acc") >= 9  # one addition per element of the window


def test_a_long_loop_is_not_unrolled():
    long_window = parse("fun(xs: 64.f32) => map_global 0 (fun(w) => reduce_seq (+) 0.0 w) (slide 36 1 (pad_clamp 18 17 xs))")
    assert "for (int i" in cg.emit(dpia.translate(long_window))  # 36 clamped reads: kept as a loop
    short_window = parse("fun(xs: 64.f32) => map_global 0 (fun(w) => reduce_seq (+) 0.0 w) (slide 3 1 (pad_clamp 1 1 xs))")
    assert "for (int i" not in cg.emit(dpia.translate(short_window))
