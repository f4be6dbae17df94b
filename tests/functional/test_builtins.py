"""The math built-ins, bit operations, element access and sizes as values in the functional
layer: their NumPy meanings (dtypes kept: f32 computed in f32), fused fma, IEEE min/max, the
range checks of the type checker, Python comparisons and bools in the DSL, and text."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import functional as fl
from functional.primitives import FLOAT_BINARY, FLOAT_UNARY, INT_BINARY, fused_multiply_add

N = fl.nat("N")

# Primitives whose interpreter meaning this file checks against NumPy or Python's math
# (tests/functional/test_interp.py counts them as covered).
COVERED_HERE = set(FLOAT_UNARY) | set(FLOAT_BINARY) | set(INT_BINARY) | {"bit_not", "clamp", "at", "nat_value"}

EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-30, -3e30, 0.49999997]

# Independent references: Python's math module per element (in f64, then rounded to the dtype).
_REFERENCE = {
    "erf": math.erf, "erfc": math.erfc, "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh, "exp2": lambda x: 2.0 ** x, "expm1": math.expm1,
    "log2": math.log2, "log10": math.log10, "log1p": math.log1p, "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "rsqrt": lambda x: 1 / math.sqrt(x), "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc,
    "round": lambda x: math.copysign(math.floor(abs(x) + 0.5), x),
    "pow": math.pow, "fmod": math.fmod, "atan2": math.atan2, "hypot": math.hypot, "copysign": math.copysign,
}


def _reference(name, *args):
    """Python's value per element; NaN where Python raises (a pole or a domain error: the
    IEEE values there, -inf for log 0 and the like, are checked separately)."""
    def one(*xs):
        try:
            return float(_REFERENCE[name](*xs))
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.nan

    return np.array([one(*xs) for xs in zip(*(a.astype(np.float64).tolist() for a in args))])


def test_poles_and_domain_errors_give_the_ieee_values():
    x = np.array([0.0, -0.0, -1.0, np.inf, -np.inf], np.float32)
    run = {n: fl.interpret(_map(getattr(fl, n), fl.f32, 1), x) for n in ("log2", "log10", "log1p", "rsqrt", "acos")}
    assert list(run["log2"][:2]) == [-np.inf, -np.inf] and np.isnan(run["log2"][2]) and run["log2"][3] == np.inf
    assert run["log1p"][2] == -np.inf and list(run["rsqrt"][:2]) == [np.inf, -np.inf] and run["rsqrt"][3] == 0.0
    assert np.isnan(run["acos"][3]) and np.isnan(run["log10"][4])


def _map(fn, scalar, arity):
    types = [fl.array(N, scalar)] * arity
    if arity == 1:
        return fl.fun(types, lambda xs: fl.map(fn, xs))
    return fl.fun(types, lambda xs, ys: fl.map(lambda p: fn(fl.fst(p), fl.snd(p)), fl.zip(xs, ys)))


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@pytest.mark.parametrize("scalar", [fl.f32, fl.f64])
def test_unary_float_built_ins_keep_their_dtype_and_match_math(name, scalar):
    x = np.array([e for e in EDGES if abs(e) < 1e20 and not (np.isfinite(e) and name in ("sinh", "cosh") and abs(e) > 80)]
                 + [0.3, -0.7, 4.2], dtype=scalar.dtype)
    got = fl.interpret(_map(getattr(fl, name), scalar, 1), x)
    assert got.dtype == scalar.dtype
    want = _reference(name, x)
    defined = np.isfinite(x) & ~np.isnan(want)
    tol = 1e-6 if scalar is fl.f32 else 1e-14
    assert np.allclose(got[defined], want[defined].astype(scalar.dtype), rtol=tol, atol=tol * 1e-6), (x, got, want)
    assert np.array_equal(np.isnan(got), np.isnan(fl.interpret(_map(getattr(fl, name), scalar, 1), x)))


def test_round_is_halfway_away_from_zero_and_exact_near_a_half():
    x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 8388609.0], np.float32)
    got = fl.interpret(_map(fl.round, fl.f32, 1), x)
    assert list(got) == [1.0, -1.0, 2.0, 3.0, -3.0, 0.0, -0.0, 8388609.0]


@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
@pytest.mark.parametrize("scalar", [fl.f32, fl.f64])
def test_binary_float_built_ins_keep_their_dtype_and_match_math(name, scalar):
    edges = np.array([e for e in EDGES if np.isfinite(e)] + [3.0, -4.0], scalar.dtype)
    x, y = (a.ravel() for a in np.meshgrid(edges, edges))
    got = fl.interpret(_map(getattr(fl, name), scalar, 2), x, y)
    assert got.dtype == scalar.dtype
    with np.errstate(over="ignore"):  # f64 references beyond the f32 range become inf
        want = _reference(name, x, y).astype(scalar.dtype)
    defined = ~np.isnan(want)
    got, want, x, y = got[defined], want[defined], x[defined], y[defined]
    tol = 1e-6 if scalar is fl.f32 else 1e-14
    assert np.allclose(got, want, rtol=tol, atol=0), [(a, b, g, w) for a, b, g, w in
                                                                      zip(x, y, got, want) if not np.isclose(g, w)]


def test_pow_follows_c_at_its_special_values():
    x = np.array([np.nan, 1.0, -8.0, 0.0, -2.0], np.float32)
    y = np.array([0.0, np.nan, 1 / 3, -1.0, 3.0], np.float32)
    got = fl.interpret(_map(fl.pow, fl.f32, 2), x, y)
    assert got[0] == 1.0 and got[1] == 1.0 and np.isnan(got[2]) and got[3] == np.inf and got[4] == -8.0


def test_clamp_is_min_of_max_also_for_nan_and_crossed_bounds():
    prog = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map(lambda x: (fl.clamp(x, -1.0, 1.0), fl.clamp(x, 2.0, 1.0)), xs))
    inside, crossed = fl.interpret(prog, np.array([np.nan, -5.0, 0.25, 7.0], np.float32))
    assert list(inside) == [-1.0, -1.0, 0.25, 1.0] and list(crossed) == [1.0, 1.0, 1.0, 1.0]
    ints = fl.fun([fl.array(N, fl.i32)], lambda xs: fl.map(lambda x: fl.clamp(x, -3, 3), xs))
    assert list(fl.interpret(ints, np.array([-9, 0, 9], np.int32))) == [-3, 0, 3]


def test_min_max_ignore_a_nan_operand_also_in_reductions():
    x = np.array([3.0, np.nan, -1.0, np.nan], np.float32)
    for reduce in (fl.reduce, fl.reduce_seq):
        assert fl.interpret(fl.fun([fl.array(N, fl.f32)], lambda xs: reduce(fl.min, np.float32(np.inf), xs)), x) == -1.0
        assert fl.interpret(fl.fun([fl.array(N, fl.f32)], lambda xs: reduce(
            lambda a, b: fl.max(a, b), np.float32(-np.inf), xs)), x) == 3.0
    both = fl.interpret(_map(fl.min, fl.f32, 2), np.array([np.nan], np.float32), np.array([np.nan], np.float32))
    assert np.isnan(both[0])


def test_integer_bit_operations_and_shifts_have_c_meaning_with_counts_modulo_32():
    x = np.array([1, -8, 7, 2**31 - 1, -2**31, 5], np.int32)
    k = np.array([33, 1, -31, 1, 31, 32], np.int32)
    shl = fl.interpret(_map(fl.shl, fl.i32, 2), x, k)
    shr = fl.interpret(_map(fl.shr, fl.i32, 2), x, k)
    assert list(shl) == [2, -16, 14, -2, 0, 5] and shl.dtype == np.int32
    assert list(shr) == [0, -4, 3, 2**30 - 1, -1, 5]
    assert list(fl.interpret(_map(fl.bit_and, fl.i32, 2), x, k)) == list(x & k)
    assert list(fl.interpret(_map(fl.bit_or, fl.i32, 2), x, k)) == list(x | k)
    assert list(fl.interpret(_map(fl.bit_xor, fl.i32, 2), x, k)) == list(x ^ k)
    assert list(fl.interpret(_map(fl.bit_not, fl.i32, 1), x)) == list(~x)
    u = np.array([2**32 - 1, 1], np.uint32)
    assert list(fl.interpret(_map(fl.shr, fl.u32, 2), u, np.array([31, 32], np.uint32))) == [1, 1]
    with pytest.raises(fl.TypeInferenceError):
        fl.infer(_map(fl.shl, fl.f32, 2))


def test_integer_division_and_remainder_truncate_towards_zero():
    a = np.array([7, -7, 7, -7, -2**31], np.int32)
    b = np.array([2, 2, -2, -2, 3], np.int32)
    assert list(fl.interpret(_map(fl.div, fl.i32, 2), a, b)) == [3, -3, -3, 3, -715827882]
    assert list(fl.interpret(_map(fl.rem, fl.i32, 2), a, b)) == [1, -1, 1, -1, -2]


# --------------------------------------------------------------------------- fma


def _round_f32(exact: Fraction) -> np.float32:
    """The f32 nearest to an exact rational (ties to even), by comparing neighbours."""
    guess = np.float32(float(exact))
    around = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    return min(around, key=lambda y: (abs(Fraction(float(y)) - exact), int(np.float32(y).view(np.int32)) & 1))


def test_fma_f32_is_the_correctly_rounded_exact_value():
    rng = np.random.default_rng(11)
    a = rng.standard_normal(300).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    c = np.where(np.arange(300) % 3 == 0, -(a * b), rng.standard_normal(300).astype(np.float32) * 1e-7)
    c = c.astype(np.float32)
    got = fused_multiply_add(a, b, c)
    assert got.dtype == np.float32
    for x, y, z, g in zip(a, b, c, got):
        assert g == _round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))), (x, y, z)
    assert np.count_nonzero(got != a * b + c) > 50  # the unfused value differs


def test_fma_f64_is_the_correctly_rounded_exact_value_in_cancellations_too():
    rng = np.random.default_rng(12)
    a = rng.standard_normal(400) * np.exp2(rng.integers(-30, 30, 400))
    b = rng.standard_normal(400) * np.exp2(rng.integers(-30, 30, 400))
    near = -(a * b) * (1 + rng.integers(-4, 5, 400) * 2.0**-52)
    c = np.where(np.arange(400) % 2 == 0, near, rng.standard_normal(400) * np.exp2(rng.integers(-60, 60, 400)))
    got = fused_multiply_add(a, b, c)
    for x, y, z, g in zip(a, b, c, got):
        assert g == float(Fraction(x) * Fraction(y) + Fraction(z)), (x, y, z)
    special = fused_multiply_add(np.array([np.inf, np.nan, 1e308, 0.0]), np.array([1.0, 1.0, 10.0, np.inf]),
                                 np.array([1.0, 0.0, 1.0, 1.0]))
    assert special[0] == np.inf and np.isnan(special[1]) and special[2] == np.inf and np.isnan(special[3])


def test_fma_in_a_program_keeps_the_products_rounding_error():
    prog = fl.fun([fl.f32, fl.f32], lambda a, b: fl.fma(a, b, -(a * b)))
    a = np.float32(1.0 + 2**-12)  # a*a = 1 + 2^-11 + 2^-24: a tie, rounded to 1 + 2^-11
    assert a * a == np.float32(1.0 + 2**-11)
    assert fl.interpret(prog, a, a) == np.float32(2.0**-24)


# ------------------------------------------------------------------- element access


def test_at_reads_an_element_at_a_computed_index_under_maps():
    prog = fl.fun([fl.array(N, fl.f32), fl.array(fl.nat("M"), fl.i32)],
                  lambda xs, idx: fl.map(lambda i: xs[i] * 2.0, idx))
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    assert list(fl.interpret(prog, xs, np.array([2, 0, 2, 1], np.int32))) == [6.0, 2.0, 6.0, 4.0]
    rows = fl.fun([fl.array(fl.nat("M"), fl.array(N, fl.f32)), fl.array(fl.nat("M"), fl.i32)],
                  lambda m, idx: fl.map(lambda p: fl.fst(p)[fl.snd(p)], fl.zip(m, idx)))
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert list(fl.interpret(rows, m, np.array([2, 1], np.int32))) == [2.0, 4.0]
    grid = fl.fun([fl.array(2, fl.array(3, fl.f32))], lambda m: m[1, 2] + m[0][1])
    assert fl.interpret(grid, m) == 6.0
    pairs = fl.fun([fl.array(N, fl.f32), fl.array(N, fl.i32)], lambda xs, ys: fl.zip(xs, ys)[1])
    assert fl.interpret(pairs, xs, np.array([4, 5, 6], np.int32)) == (2.0, 5)


def test_an_index_out_of_range_is_a_run_time_error_naming_it_or_a_type_error_when_constant():
    prog = fl.fun([fl.array(N, fl.f32), fl.i32], lambda xs, i: xs[i])
    with pytest.raises(fl.InterpretError, match="index 3 is out of range for an array of length 3"):
        fl.interpret(prog, np.zeros(3, np.float32), np.int32(3))
    for index in (3, -1):
        with pytest.raises(fl.TypeInferenceError, match=f"index {index} is out of range for an array of length 3"):
            fl.infer(fl.fun([fl.array(3, fl.f32)], lambda xs: xs[index]))
    with pytest.raises(fl.TypeInferenceError, match="index N is out of range"):
        fl.infer(fl.fun([fl.array(N, fl.f32)], lambda xs: xs[N]))
    fl.infer(fl.fun([fl.array(N, fl.f32)], lambda xs: xs[N - 1] + xs[0]))  # provably in range
    with pytest.raises(fl.TypeInferenceError, match="should have type i32"):
        fl.infer(fl.fun([fl.array(N, fl.f32), fl.f32], lambda xs, i: xs[i]))
    with pytest.raises(TypeError, match="not iterable"):
        list(fl.Identifier("xs"))


def test_sizes_are_values_of_the_type_their_use_needs():
    mean = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs) / N)
    assert fl.infer(mean).type.body.result == fl.f32
    x = np.array([1.0, 2.0, 6.0], np.float32)
    got = fl.interpret(mean, x)
    assert got == np.float32(3.0) and got.dtype == np.float32
    count = fl.fun([fl.array(N, fl.f64)], lambda xs: fl.nat_value(N * 2 - 1))
    got = fl.interpret(count, np.zeros(4))
    assert got == 7 and got.dtype == np.int32
    doubles = fl.fun([fl.array(N, fl.f64)], lambda xs: fl.map(lambda v: v * N, xs))
    assert fl.interpret(doubles, np.array([0.5, 1.0])).dtype == np.float64


# ---------------------------------------------------------------- static range checks


@pytest.mark.parametrize("build, message", [
    (lambda xs: fl.take(5, xs), "take: the count 5 is larger than the array's length 4"),
    (lambda xs: fl.drop(6, xs), "drop: the count 6 is larger"),
    (lambda xs: fl.pad_mirror(5, 1, xs), "pad_mirror: the left pad 5 is larger"),
    (lambda xs: fl.pad_mirror(1, 5, xs), "pad_mirror: the right pad 5 is larger"),
    (lambda xs: fl.pad_wrap(0, 7, xs), "pad_wrap: the right pad 7 is larger"),
])
def test_sizes_that_put_an_index_out_of_range_are_type_errors(build, message):
    with pytest.raises(fl.TypeInferenceError, match=message):
        fl.infer(fl.fun([fl.array(4, fl.f32)], build))


def test_pads_as_long_as_the_array_are_fine_and_undecided_ones_are_checked_at_run_time():
    prog = fl.fun([fl.array(4, fl.f32)], lambda xs: fl.pad_mirror(4, 4, xs))
    x = np.arange(4, dtype=np.float32)
    assert np.array_equal(fl.interpret(prog, x), np.pad(x, 4, mode="symmetric"))
    fl.infer(fl.fun([fl.array(fl.nat("N", lo=3), fl.f32)], lambda xs: fl.take(3, fl.pad_wrap(3, 3, xs))))
    undecided = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.pad_mirror(3, 0, xs))
    fl.infer(undecided)
    with pytest.raises(fl.InterpretError, match="a pad may not be longer than the array"):
        fl.interpret(undecided, np.zeros(2, np.float32))
    with pytest.raises(fl.InterpretError, match="take 3 of an array of length 2"):
        fl.interpret(fl.fun([fl.array(N, fl.f32)], lambda xs: fl.take(3, xs)), np.zeros(2, np.float32))


# ---------------------------------------------------------------- the DSL's operators


def test_comparing_an_expression_with_a_number_builds_the_comparison():
    x = fl.Identifier("x")
    assert str(x == 0.0) == "x == 0.0" and str(x != 1) == "x != 1" and str(x == np.float32(2.5)) == "x == f32(2.5)"
    prog = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map(lambda v: fl.select(v == 0.0, 1.0, 2.0), xs))
    assert list(fl.interpret(prog, np.array([0.0, 3.0, -0.0], np.float32))) == [1.0, 2.0, 1.0]
    assert (x == fl.Identifier("x")) is True and (x != fl.Identifier("y")) is True  # program equality stays
    assert {x: 1}[fl.Identifier("x")] == 1


def test_a_python_bool_in_a_program_is_refused_with_the_way_out():
    with pytest.raises(TypeError, match=r"compare values with eq\(x, y\)"):
        fl.fun([fl.array(N, fl.f32), fl.array(N, fl.f32)], lambda xs, ys: fl.map(
            lambda p: fl.select(fl.fst(p) == fl.snd(p), 1.0, 0.0), fl.zip(xs, ys)))
    with pytest.raises(fl.PythonBoolError):
        fl.to_expr(np.True_)
    with pytest.raises(TypeError, match="no truth value"):
        if fl.Identifier("x") == 0.0:
            pass
    prog = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map(lambda v: fl.select(fl.true, v, fl.lit(0.0)), xs))
    assert list(fl.interpret(prog, np.array([4.0], np.float32))) == [4.0]
    assert fl.infer(fl.lit(True)).type == fl.boolean and fl.infer(fl.lit(1, fl.u32)).type == fl.u32
    assert fl.interpret(fl.fun([fl.f32], lambda v: fl.select(fl.false, v, -v)), np.float32(2.0)) == -2.0


def test_the_new_primitives_print_and_read_back():
    prog = fl.fun([fl.array(N, fl.f32), fl.array(N, fl.i32)], lambda xs, ks: fl.map(
        lambda k: fl.clamp(fl.erf(xs[k]) + fl.pow(xs[0], 2.0) / N, -1.0, 1.0) + fl.cast(fl.f32, fl.shl(k, 3)), ks))
    text = str(prog)
    assert "at xs k" in text and "nat_value N" in text and "shl k 3" in text and "clamp" in text
    assert fl.parse(text) == prog
    x = np.array([0.1, 0.2], np.float32)
    k = np.array([1, 0], np.int32)
    assert np.array_equal(fl.interpret(fl.parse(text), x, k), fl.interpret(prog, x, k))
