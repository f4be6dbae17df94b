"""64-bit indexing (codegen_opencl.opencl.index_type): loops, sizes and index arithmetic are
`long` exactly when the sizes' bounds let an index pass 2^31 - 1.  Decided on the index
arithmetic alone: nothing here allocates a large array."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dpia
import functional as fl
from codegen_opencl.opencl import INDEX_LIMIT, EmitError, emit, index_overflow, index_type
from codegen_opencl.runtime import Kernel
from dpia.programs import fix_sizes
from functional.derivation import derive
from functional.infer import infer
from functional.interp import interpret
from functional.schedules import default_schedule

_LONG_LOOP = re.compile(r"for \(long \w+ = ")
_INT_LOOP = re.compile(r"for \(int \w+ = ")


def _mm(m=None, k=None, n=None):
    """mm over size variables M, K, N (or fixed ones), lowered by the default schedule."""
    M, K, N = fl.nat("M", hi=m), fl.nat("K", hi=k), fl.nat("N", hi=n)
    return fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
                  lambda a, b: fl.map(lambda row: fl.map(
                      lambda col: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(row, col))),
                      fl.transpose(b)), a))


def _translated(program, sizes=None):
    typed = infer(fix_sizes(program, sizes) if sizes else program)
    low, _ = derive(typed, default_schedule(typed))
    return dpia.translate(low)


def _scal():
    N = fl.nat("N")
    return fl.fun([fl.f32, fl.array(N, fl.f32)], lambda a, xs: fl.map(lambda x: x * a, xs))


def test_a_65536_square_output_is_indexed_with_long():
    prog = _translated(_mm(), {"M": 65536, "K": 8, "N": 65536})
    src = emit(prog)
    assert index_type(prog) == "long"
    assert index_overflow(prog) == ("the array output", 65536 * 65536)
    assert _LONG_LOOP.search(src) and not _INT_LOOP.search(src)


def test_a_map_over_2_to_the_31_elements_has_a_long_loop():
    prog = _translated(_scal(), {"N": 2**31})
    assert _LONG_LOOP.search(emit(prog)) and not _INT_LOOP.search(emit(prog))


def test_the_largest_int_extent_keeps_int():
    prog = _translated(_scal(), {"N": INDEX_LIMIT})
    assert index_type(prog) == "int"
    assert _INT_LOOP.search(emit(prog)) and "long" not in emit(prog)


def test_small_fixed_sizes_use_int():
    src = emit(_translated(_mm(), {"M": 64, "K": 64, "N": 64}))
    assert _INT_LOOP.search(src) and "long" not in src


def test_upper_bounds_of_size_variables_decide():
    wide = _translated(_mm(m=65537, k=65537, n=65537))  # hi is exclusive: up to 65536 each
    narrow = _translated(_mm(m=1025, k=1025, n=1025))
    assert index_type(wide) == "long" and "const long M" in emit(wide) and _LONG_LOOP.search(emit(wide))
    assert index_type(narrow) == "int" and "const int M" in emit(narrow)


def test_unbounded_sizes_are_int_until_the_actual_sizes_need_long():
    prog = _translated(_mm())
    assert index_type(prog) == "int" and "const int M" in emit(prog)
    assert index_overflow(prog, {"M": 1024, "K": 1024, "N": 1024}) is None
    what, bound = index_overflow(prog, {"M": 65536, "K": 4, "N": 65536})
    assert what == "the array output" and bound == 65536 * 65536
    assert "const long M" in emit(prog, index="long")


def test_an_unknown_index_type_is_refused():
    with pytest.raises(EmitError, match="index type"):
        emit(_translated(_scal(), {"N": 64}), index="short")


def test_the_runtime_widens_a_kernel_when_the_sizes_need_it():
    kernel = Kernel(_translated(_mm()))
    assert kernel.index_type == "int"
    kernel._widen_for({"M": 1024, "K": 1024, "N": 1024})
    assert kernel.index_type == "int"
    kernel._widen_for({"M": 65536, "K": 4, "N": 65536})  # only the decision: nothing is allocated
    assert kernel.index_type == "long" and "const long M" in kernel.source


def test_a_long_kernel_computes_what_the_interpreter_does():
    """Sizes passed as 64-bit arguments (a bound that asks for long, small actual sizes)."""
    program = _mm(m=1 << 20, k=1 << 20, n=1 << 20)
    kernel = Kernel(_translated(program))
    assert kernel.index_type == "long"
    rng = np.random.default_rng(0)
    a = rng.standard_normal((19, 7)).astype(np.float32)
    b = rng.standard_normal((7, 5)).astype(np.float32)
    np.testing.assert_allclose(kernel(a, b), interpret(infer(program), a, b), rtol=1e-5, atol=1e-5)


def test_a_remainder_whose_dividend_passes_2_to_the_31_is_computed_with_long():
    """Fuzz seed 36952: a reversal of a rotation reads (N - i) % N, which the normal form writes
    ((N - 1) * i) % N: at N = 1000003 the product passes 2^31 while every index stays below N.
    The dividends of an index's remainders and floor divisions are index extents too."""
    n = 1000003
    program = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.gather(lambda i, m: m - i - 1,
                                                                 fl.gather(lambda i, m: (i + 1) % m, xs)))
    translated = _translated(program)
    what, bound = index_overflow(translated)
    assert what.startswith("a dividend") and bound > INDEX_LIMIT
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    np.testing.assert_array_equal(dpia.compile(program)(x), interpret(program, x))
