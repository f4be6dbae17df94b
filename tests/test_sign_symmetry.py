"""imperative.sign_symmetry: f(x) and f(-x) of a sign-symmetric function from one call.  Each
declared symmetry is checked against NumPy's functions on random values; the pass against the
interpreter on compiled kernels (and under Oclgrind, like every kernel of the tests)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dpia
import functional as fl
from functional.interp import interpret
from functional.primitives import FLOAT_UNARY, SIGN_SYMMETRY
from functional.types import f32
from imperative.ir import Lit, Op
from imperative.sign_symmetry import sign_split

N = fl.nat("N")
_NUMPY = {**FLOAT_UNARY, "abs": np.abs, "sin": np.sin, "cos": np.cos}


@pytest.mark.parametrize("name", sorted(SIGN_SYMMETRY))
def test_each_declared_symmetry_holds_on_random_values(name):
    rng = np.random.default_rng(len(name))
    x = np.concatenate([rng.standard_normal(2000) * 3, rng.uniform(-0.99, 0.99, 500), [0.0, 0.5, 2.5, 7.0]])
    f = _NUMPY[name]
    x = x if name != "asin" else np.clip(x, -1, 1)
    kind = SIGN_SYMMETRY[name]
    fx, f_neg = f(x), f(-x)
    if kind == "odd":
        np.testing.assert_array_max_ulp(f_neg, -fx, maxulp=1)
    elif kind == "even":
        np.testing.assert_array_max_ulp(f_neg, fx, maxulp=1)
    else:  # complement: f(x) = 2 - f(-x), as the pass uses it (2 - f of f <= 1 only)
        assert kind == "complement"
        via_magnitude = np.where(x < 0, 2 - f(np.abs(x)), f(np.abs(x)))
        np.testing.assert_array_max_ulp(via_magnitude, fx, maxulp=2)


def test_signs_come_out_of_products_quotients_and_literals():
    x = Op("sqrt", (), (Lit(2.0, f32),), f32)  # any float value that is not a product
    neg = Op("neg", (), (x,), f32)
    assert sign_split(neg) == (-1, x)
    assert sign_split(Op("neg", (), (neg,), f32)) == (1, x)
    product = Op("mul", (), (neg, Lit(-0.5, f32)), f32)
    assert sign_split(product) == (1, Op("mul", (), (x, Lit(0.5, f32)), f32))
    quotient = Op("div", (), (Lit(3.0, f32), neg), f32)
    assert sign_split(quotient) == (-1, Op("div", (), (Lit(3.0, f32), x), f32))
    total = Op("add", (), (neg, x), f32)  # a sum keeps its sign inside
    assert sign_split(total) == (1, total)
    assert sign_split(Lit(-0.0, f32)) == (1, Lit(-0.0, f32))


def _kernel_and_check(program, *inputs):
    kernel = dpia.compile(program, db=False)
    got = kernel(*inputs)
    want = interpret(program, *inputs)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=2e-6)
    return kernel.source[kernel.source.index("kernel void"):]


def _inputs(n=300):
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32) * 4
    x[:4] = [0.0, -0.0, 12.0, -12.0]  # the sign's edge and erfc's tails (erfc(12) underflows, 2 - it is 2)
    return x


def test_erfc_of_a_value_and_of_its_negation_is_one_call():
    prog = fl.fun([fl.array(N, f32)], lambda xs: fl.map(
        lambda x: fl.pair(fl.erfc(-x * 0.5), fl.erfc(x * 0.5) * 3.0), xs))
    source = _kernel_and_check(prog, _inputs())
    assert len(re.findall(r"erfc\w*\(", source)) == 1


def test_tiny_erfc_values_keep_their_precision():
    """erfc(-x) for a large x is 2 - tiny; erfc(x) is tiny and must not come out as 2 - (2 - tiny)."""
    x = np.linspace(3.0, 9.0, 64, dtype=np.float32)
    prog = fl.fun([fl.array(N, f32)], lambda xs: fl.map(lambda v: fl.pair(fl.erfc(v), fl.erfc(-v)), xs))
    kernel = dpia.compile(prog, db=False)
    small, large = kernel(x)
    want_small, want_large = interpret(prog, x)
    np.testing.assert_allclose(small, want_small, rtol=1e-5)  # relative: erfc(9) is 4e-37
    np.testing.assert_allclose(large, want_large, rtol=1e-6)
    assert len(re.findall(r"erfc\w*\(", kernel.source[kernel.source.index("kernel void"):])) == 1


def test_odd_and_even_functions_share_their_call():
    prog = fl.fun([fl.array(N, f32)], lambda xs: fl.map(
        lambda x: fl.pair(fl.sin(-x) + fl.sin(x * 2.0) * fl.sin(x * -2.0),
                          fl.cos(-x) * fl.cos(x) + fl.tanh(fl.neg(x)) - fl.abs(-x * 3.0) * fl.abs(x * 3.0)), xs))
    source = _kernel_and_check(prog, _inputs())
    assert source.count("sin(") == 2 and source.count("cos(") == 1 and source.count("tanh(") == 1
    assert source.count("fabs(") == 1


def test_a_lone_erfc_call_is_left_as_written():
    prog = fl.fun([fl.array(N, f32)], lambda xs: fl.map(lambda x: fl.erfc(-x * 0.5), xs))
    source = _kernel_and_check(prog, _inputs())
    assert len(re.findall(r"erfc\w*\(", source)) == 1 and "fabs" not in source


def test_the_interpreter_takes_erfc_of_a_single_value():
    """erf and erfc go through float64 Python functions; on a 0-d value that once gave a bare float."""
    prog = fl.fun([fl.array(N, f32)], lambda xs: fl.erfc(fl.reduce(lambda a, b: a + b, 0.0, xs)))
    got = interpret(prog, np.array([0.25, 0.25], dtype=np.float32))
    assert np.asarray(got).dtype == np.float32 and abs(float(got) - 0.4795001) < 1e-6
