"""Tests of the symbolic size module `functional.nat`.

The property tests build random size expressions as small trees, turn each tree into a
`Nat` with the module's operators and, independently, evaluate the same tree with plain
Python integers (floor semantics).  Under random bindings that respect the variables'
facts (ranges, `multiple_of`) both must agree: every simplification the normal form does
has to preserve the value.  The same trees drive the checks of the range reasoning
(`is_nonneg`, `proves_lt`, `divides`, bounds: whatever is proven must hold on the samples)
and of the printers (`str` and `to_c`, evaluated back as Python or compiled with gcc).
"""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
import tempfile
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from functional.errors import FunctionalError, NatError
from functional.nat import (
    ExactDiv,
    FloorDiv,
    Mod,
    Nat,
    Pow,
    Unknown,
    Var,
    as_nat,
    divides,
    evaluate,
    floordiv,
    is_integral,
    is_nonneg,
    is_positive,
    lower_bound,
    mod,
    nat,
    nmax,
    nmin,
    power,
    proves_lt,
    substitute,
    upper_bound,
    var_of,
)

# Every property test is derandomized so the suite is deterministic run to run.
det = settings(derandomize=True)

# ------------------------------------------------------------------------------ variables

N = nat("N")  # sizes: lo=1, unbounded
M = nat("M")
K = nat("K", multiple_of=64)
Z = nat("Z", lo=0)  # a size that may be zero (never used as a divisor)
I = nat("i", lo=0, hi=N)  # index variables: lo <= v < hi
J = nat("j", lo=0, hi=M)
L = nat("l", lo=0, hi=64)
S = nat("s", lo=0, hi=6)  # small, used as a symbolic exponent
R = nat("r", lo=0, hi=N * M)  # bounded by a product
D = nat("d", lo=-4, hi=5)  # may be negative

VARS = {"N": N, "M": M, "K": K, "Z": Z, "i": I, "j": J, "l": L, "s": S, "r": R, "d": D}
NONNEG_VARS = ["N", "M", "K", "Z", "i", "j", "l", "s", "r"]
FREE_VARS = ["N", "M", "K", "Z"]  # the ones bounds may still mention


def make_envs(seed: int, count: int = 6) -> list[dict]:
    """`count` bindings that respect every variable's facts.  Drawn from a seeded PRNG
    (cheap, unlike drawing ten integers per binding from Hypothesis); values are biased
    towards both ends of each range, where off-by-one bugs live."""
    rnd = random.Random(seed)

    def pick(lo, hi):
        k = rnd.random()
        return lo if k < 0.25 else hi if k < 0.5 else rnd.randint(lo, hi)

    out = []
    for _ in range(count):
        n, m = pick(1, 40), pick(1, 40)
        out.append(
            {
                "N": n,
                "M": m,
                "K": 64 * rnd.randint(1, 4),
                "Z": pick(0, 10),
                "i": pick(0, n - 1),
                "j": pick(0, m - 1),
                "l": pick(0, 63),
                "s": pick(0, 5),
                "r": pick(0, n * m - 1),
                "d": pick(-4, 4),
            }
        )
    return out


env_lists = st.integers(0, 2**32 - 1).map(make_envs)

# ------------------------------------------------------------------------ expression trees
#
# A tree is a tuple:  ("c", k) | ("v", name) | (op, child, ...)
#   + - * min max       binary, any operands
#   // %  exact         second operand a provably positive tree; ("exact", a, d) is (a*d)/d
#   kdiv                ("kdiv", a, c) is (a*K)/c with c | 64 (K is a multiple of 64)
#   **                  ("**", a, k) with a small constant k
#   pow2                ("pow2", e) is 2 ** e for a small non-negative exponent tree


def _leaf(consts, names):
    return st.one_of(
        st.sampled_from(consts).map(lambda k: ("c", k)),
        st.sampled_from(names).map(lambda v: ("v", v)),
    )


_exponents = st.sampled_from(
    [("v", "s"), ("+", ("v", "s"), ("c", 1)), ("+", ("v", "s"), ("c", 2)), ("*", ("c", 2), ("v", "s"))]
).map(lambda e: ("pow2", e))

_pos_leaf = st.one_of(
    st.sampled_from([1, 2, 3, 4, 5, 7, 8, 64]).map(lambda k: ("c", k)),
    st.sampled_from(["N", "M", "K"]).map(lambda v: ("v", v)),
    _exponents,
)
_nonneg_leaf = _leaf([0, 1, 2], NONNEG_VARS)

positive = st.recursive(
    _pos_leaf,
    lambda sub: st.one_of(
        st.tuples(st.sampled_from(["+", "*"]), sub, sub),
        st.tuples(st.just("+"), sub, _nonneg_leaf),
        st.tuples(st.just("+"), _nonneg_leaf, sub),
    ),
    max_leaves=3,
)


def _trees(consts, names, ops, max_leaves):
    leaf = st.one_of(_leaf(consts, names), _exponents)

    def extend(sub):
        return st.one_of(
            st.tuples(st.sampled_from(ops), sub, sub),
            st.tuples(st.sampled_from(["//", "%", "exact"]), sub, positive),
            st.tuples(st.just("**"), sub, st.integers(0, 3)),
            st.tuples(st.just("kdiv"), sub, st.sampled_from([1, 2, 4, 8, 16, 32, 64])),
        )

    return st.recursive(leaf, extend, max_leaves=max_leaves)


trees = _trees([-3, -1, 0, 1, 2, 3, 5, 9, 64], list(VARS), ["+", "-", "*", "min", "max"], 8)
# Trees whose every subexpression is non-negative (for the C printer: C's `/` and `%`
# truncate, which only agrees with floor semantics on non-negative operands).
nonneg_trees = _trees([0, 1, 2, 3, 5, 9, 64], NONNEG_VARS, ["+", "*", "min", "max"], 7)


def ref(t, env) -> int:
    """Reference evaluation with Python integers."""
    op = t[0]
    if op == "c":
        return t[1]
    if op == "v":
        return env[t[1]]
    if op == "pow2":
        return 2 ** ref(t[1], env)
    if op == "**":
        return ref(t[1], env) ** t[2]
    if op == "kdiv":
        num = ref(t[1], env) * env["K"]
        assert num % t[2] == 0
        return num // t[2]
    a = ref(t[1], env)
    b = ref(t[2], env)
    if op in ("//", "%", "exact"):
        assert b > 0, f"divisor tree {t[2]} is not positive under {env}"
    return {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "min": lambda: min(a, b),
        "max": lambda: max(a, b),
        "//": lambda: a // b,
        "%": lambda: a % b,
        "exact": lambda: a,
    }[op]()


def build(t):
    """The tree as a Nat (constant leaves stay Python ints so the reflected operators of
    Nat are exercised too; an int op int is turned into a Nat first)."""
    op = t[0]
    if op == "c":
        return t[1]
    if op == "v":
        return VARS[t[1]]
    if op == "pow2":
        e = build(t[1])
        return 2 ** as_nat(e) if isinstance(e, int) else 2**e
    if op == "**":
        return as_nat(build(t[1])) ** t[2]
    if op == "kdiv":
        return (build(t[1]) * K) / t[2]
    a, b = build(t[1]), build(t[2])
    if isinstance(a, int) and isinstance(b, int):
        a = Nat.const(a)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "min":
        return nmin(a, b)
    if op == "max":
        return nmax(a, b)
    if op == "//":
        return a // b
    if op == "%":
        return a % b
    if op == "exact":
        return (a * b) / b
    raise AssertionError(op)


def build_nat(t) -> Nat:
    return as_nat(build(t))


def values(n, envs_):
    return [evaluate(n, e) for e in envs_]


# ===================================================================== 1. value agreement


@det
@given(trees, env_lists)
def test_simplified_nat_evaluates_like_the_tree(t, envs_):
    n = build_nat(t)
    for env in envs_:
        assert evaluate(n, env) == ref(t, env), (t, str(n), env)


@det
@given(trees, env_lists)
def test_evaluate_returns_python_int(t, envs_):
    n = build_nat(t)
    for env in envs_:
        v = evaluate(n, env)
        assert isinstance(v, int) and not isinstance(v, bool)


@det
@given(trees, trees, env_lists)
def test_substitute_agrees_with_evaluation(t, u, envs_):
    """Replacing N by another (positive) expression and re-normalising keeps the value."""
    n = build_nat(t)
    repl = build_nat(u) * build_nat(u) + 1  # positive, so N's fact lo=1 still holds
    sub = substitute(n, {var_of(N): repl})
    for env in envs_:
        env2 = dict(env)
        env2["N"] = evaluate(repl, env)
        # bindings must still respect the facts of the variables bounded by N
        env2["i"] = min(env["i"], env2["N"] - 1)
        env2["r"] = min(env["r"], env2["N"] * env["M"] - 1)
        assert evaluate(sub, dict(env, i=env2["i"], r=env2["r"])) == evaluate(n, env2)


@settings(derandomize=True, max_examples=30)
@given(_trees([-1, 0, 1, 2, 3, 5], list(VARS), ["+", "-", "*", "min", "max"], 5))
def test_evaluate_on_numpy_arrays(t):
    """`evaluate` is vectorised: an index variable bound to an array gives elementwise values."""
    n = build_nat(t)
    env = {"N": 5, "M": 3, "K": 64, "Z": 2, "j": 2, "l": 63, "s": 3, "r": 7, "d": -2}
    idx = np.arange(5, dtype=np.int64)
    got = evaluate(n, dict(env, i=idx))
    want = [ref(t, dict(env, i=int(x))) for x in idx]
    assert np.asarray(np.broadcast_to(got, idx.shape)).tolist() == want


# ---------------------------------------------------------------------- canonical form


def _same(a, b):
    a, b = as_nat(a), as_nat(b)
    assert a == b, (str(a), str(b))
    assert hash(a) == hash(b)
    assert str(a) == str(b)


@det
@given(trees, trees, trees)
def test_ring_laws_hold_syntactically(t, u, w):
    a, b, c = build_nat(t), build_nat(u), build_nat(w)
    _same(a + b, b + a)
    _same(a * b, b * a)
    _same((a + b) + c, a + (b + c))
    _same((a * b) * c, a * (b * c))
    _same((a + b) * c, a * c + b * c)
    _same(a - a, 0)
    _same((a + b) - b, a)
    _same(a * 1, a)
    _same(a * 0, 0)
    _same(a + 0, a)
    _same(-(a * -1), a)
    _same(0 - (0 - a), a)
    _same(a**2, a * a)
    _same(a**3, a * a * a)
    _same(a**0, 1)
    _same(nmin(a, b), nmin(b, a))
    _same(nmax(a, b), nmax(b, a))


@det
@given(trees, positive)
def test_exact_division_cancels(t, u):
    a, d = build_nat(t), build_nat(u)
    _same((a * d) / d, a)
    if len(d.terms) == 1:
        # dividing by a monomial multiplies by its inverse; a sum that does not divide
        # becomes an opaque exact-division atom, which multiplication does not cancel
        _same((a / d) * d, a)
    _same((a * 64) / 64, a)
    _same((a / 64) * 64, a)
    _same(a / 1, a)


def test_exact_division_by_sums_cancels():
    """Exact division by a sum is polynomial division: it must find the quotient."""
    _same((N * M + N) / (M + 1), N)
    _same((N * M + M) / (N + 1), M)
    _same((N * N - 1) / (N - 1), N + 1)
    _same((N**5 - 1) / (N - 1), N**4 + N**3 + N**2 + N + 1)
    _same(((N + M) * (N + 2 * M + 1)) / (N + M), N + 2 * M + 1)
    x = N / (M + 1)  # does not divide: stays an exact-division atom
    assert any(isinstance(a, ExactDiv) for a in x.atoms)
    _same((x * (M + 1)) / (M + 1), x)
    _same(((N + 1) * (N + 2) * (N + 3)) / ((N + 1) * (N + 3)), N + 2)


def test_canonical_examples():
    _same((N / 64) * 64, N)
    _same(K / 64 * 64, K)
    _same((N + M) * 3, 3 * M + 3 * N)
    _same(N * M * 2 / 2, M * N)
    _same(N / 2 + N / 2, N)
    _same(N / 3 + N / 6, N / 2)
    _same(2 * (N / 4), N / 2)
    _same(N / M * M, N)
    _same(N / (M * N), 1 / M)
    _same((N / M) / (N / M), 1)
    _same(1 + N, N + 1)
    _same(N - N, Nat.const(0))
    _same(nat("N"), N)
    assert N == nat("N") and hash(N) == hash(nat("N"))
    assert N != M and N != nat("N", multiple_of=2) and N != nat("N", lo=0)
    assert (N + 1) == (1 + N) != N
    assert Nat.const(5) == 5 and 5 == Nat.const(5) and Nat.const(0) == 0
    assert N != "N" and N != 1.0 and N is not None and N != True
    assert len({N + M, M + N, N * 1 + M}) == 1


def test_power_constant_and_symbolic_exponents():
    _same(N**0, 1)
    _same(N**1, N)
    _same((N + 1) ** 2, N * N + 2 * N + 1)
    _same(N**-1, 1 / N)
    _same(N**-2 * N**2, 1)
    _same(Nat.const(2) ** 10, 1024)
    _same(2 ** (S + 1), 2 * 2**S)
    _same(2 ** (S + 3) / 8, 2**S)
    _same(2 ** (S - 1) * 2, 2**S)
    _same(1**S, 1)
    _same(2**S * 2**S, 2**S * 2**S)
    p = 2**S
    assert len(p.terms) == 1 and isinstance(p.terms[0][0][0][0], Pow)
    assert power(2, S) == 2**S == Nat.const(2) ** S


# ========================================================== 2. floor division and modulo


def test_issue_simplifications():
    n = nat("n")
    i = nat("i", lo=0, hi=n)
    j = nat("j", lo=0, hi=n)
    _same((i * n + j) // n, i)
    _same((i * n + j) % n, j)
    _same((j + n * i) // n, i)
    _same((j + n * i) % n, j)
    _same(j % n, j)
    _same(j // n, 0)
    x = nat("x")
    a, b = nat("a"), nat("b")
    _same((x // a) // b, x // (a * b))
    _same((x // 4) // 16, x // 64)
    _same((x // a) // 8, x // (8 * a))
    wg = nat("wg")
    lid = nat("l", lo=0, hi=64)
    _same((wg * 64 + lid) // 64, wg)
    _same((wg * 64 + lid) % 64, lid)
    _same((lid + 64 * wg) // 64, wg)
    # the same with an index-like work group id
    g = nat("g", lo=0, hi=n)
    _same((g * 64 + lid) // 64, g)
    _same((g * 64 + lid) % 64, lid)


def test_floor_division_and_modulo_rules():
    x = nat("x")
    l = nat("l", lo=0, hi=64)
    _same(N // 1, N)
    _same(N % 1, 0)
    _same(N // N, 1)
    _same(N % N, 0)
    _same((N * M) // M, N)
    _same((N * M) % N, 0)
    _same(K // 64, K / 64)
    _same(K % 64, 0)
    _same(K % 32, 0)
    _same((2 * N) // 2, N)
    _same((4 * N + 3) // 2, 2 * N + 1)  # 4N+3 = 2*(2N+1) + 1, and 1 // 2 == 0
    _same((4 * N + 3) % 2, 1)
    _same((128 * x + l) // 64, 2 * x + l // 64)
    _same((128 * x + l) % 64, l)
    _same((x + 64) // 64, x // 64 + 1)
    _same((x + 64) % 64, x % 64)
    _same((x % 128) % 64, x % 64)  # (x % (k*b)) % b == x % b
    _same((x % (2 * N)) % N, x % N)
    _same(l % 64, l)
    _same(l // 64, 0)
    _same(l % 65, l)
    _same(I % N, I)
    _same(I // N, 0)
    _same((I * M + J) // M, I)
    _same((I * M + J) % M, J)
    _same(R % (N * M), R)
    # constant folding uses floor semantics
    _same(Nat.const(7) // 2, 3)
    _same(Nat.const(-7) // 2, -4)
    _same(Nat.const(7) % 2, 1)
    _same(Nat.const(-7) % 2, 1)
    _same(Nat.const(7) // -2, -4)
    _same(100 // Nat.const(7), 14)
    _same(100 % Nat.const(7), 2)
    # not simplifiable: stays an atom
    assert isinstance((x // 64).terms[0][0][0][0], FloorDiv)
    assert isinstance((x % 64).terms[0][0][0][0], Mod)
    assert isinstance((l % 63).terms[0][0][0][0], Mod)  # 63 is a possible value of l
    assert isinstance((l // 63).terms[0][0][0][0], FloorDiv)
    assert isinstance(N // M, Nat) and N // M != N / M


def test_floor_and_mod_are_not_confused_with_exact_division():
    """`N // (M+1)` must stay a floor division: nothing proves that M+1 divides N."""
    assert evaluate(N // (M + 1), {"N": 5, "M": 1}) == 2
    assert evaluate(N % (M + 1), {"N": 5, "M": 1}) == 1
    assert evaluate((N * M) // (M + 2), {"N": 5, "M": 1}) == 1
    assert evaluate((N * M) % (M + 2), {"N": 5, "M": 1}) == 2
    assert evaluate(N // M, {"N": 5, "M": 2}) == 2
    assert evaluate(N % M, {"N": 5, "M": 2}) == 1
    x = nat("x")
    assert evaluate((x % N) % (M + 1), {"x": 7, "N": 6, "M": 3}) == 1


def test_floor_mod_identity_examples():
    """x == (x // b) * b + x % b survives simplification for assorted x, b."""
    x = nat("x")
    cases = [(x, 64), (x, N), (I * M + J, M), (128 * x + L, 64), (x + 3, 4), (N * M + 5, N + 1)]
    for a, b in cases:
        ident = (a // b) * b + a % b
        for env in (
            {"x": 0, "N": 3, "M": 2, "i": 1, "j": 1, "l": 5},
            {"x": 1000, "N": 7, "M": 5, "i": 6, "j": 4, "l": 63},
        ):
            assert evaluate(ident, env) == evaluate(a, env)


@det
@given(trees, positive, env_lists)
def test_floor_mod_identity(t, u, envs_):
    a, b = build_nat(t), build_nat(u)
    q, r = a // b, a % b
    for env in envs_:
        av, bv = evaluate(a, env), evaluate(b, env)
        assert evaluate(q, env) == av // bv
        assert evaluate(r, env) == av % bv
        assert evaluate(q * b + r, env) == av


# ============================================================== 3. range reasoning


def test_range_reasoning_examples():
    assert is_nonneg(N) and is_positive(N)
    assert is_nonneg(Z) and not is_positive(Z)
    assert is_nonneg(I) and not is_positive(I)
    assert is_positive(I + 1)
    assert is_nonneg(N - 1) and not is_positive(N - 1)
    assert is_positive(N - I) and is_nonneg(N - I - 1) and not is_positive(N - I - 1)
    assert not is_nonneg(I - 1)
    assert not is_nonneg(N - M) and not is_nonneg(M - N)
    assert is_positive(N * M) and is_positive(N + M) and is_positive(2**S)
    assert is_nonneg(Nat.const(0)) and not is_positive(Nat.const(0))
    assert is_positive(Nat.const(1)) and not is_nonneg(Nat.const(-1))
    assert is_positive(Nat.const(Fraction(1, 2)))
    assert is_positive(K) and is_nonneg(K - 64) and not is_positive(K - 64)  # K >= 64
    assert not is_nonneg(D) and not is_nonneg(D + 3) and is_nonneg(D + 4)  # -4 <= d < 5
    assert is_nonneg(4 - D) and not is_nonneg(3 - D) and proves_lt(D, 5) and not proves_lt(D, 4)
    assert is_nonneg(L) and is_nonneg(63 - L) and not is_nonneg(62 - L)
    assert is_nonneg(R) and is_nonneg(N * M - 1 - R)
    assert is_nonneg(N % 64) and is_nonneg(N % M) and is_nonneg(63 - N % 64)
    assert is_nonneg(M - 1 - N % M)
    assert not is_nonneg(Nat.atom(Unknown(1))) and not is_positive(Nat.atom(Unknown(1)))
    # floors and minima of non-negative values are non-negative
    assert is_nonneg(N // 64) and is_nonneg(I // 2) and is_nonneg((N + M) // M)
    assert is_nonneg(nmin(N, M)) and is_positive(nmin(N, M)) and is_positive(nmax(N, M))
    assert is_nonneg(nmax(D, 0)) and not is_nonneg(nmin(D, 0))


def test_nested_floors_of_one_value_are_bounded_together():
    """(x // d) - k * (x // (k d)) is (x // d) % k: in [0, k - 1] (the remainder of a staged
    reduction's partial results), though bounding its two floors apart cannot show it."""
    P = N // 32
    rest = P - 32 * (P // 32)
    assert P // 32 == N // 1024  # normalised: the two floors share their numerator
    assert is_nonneg(rest) and upper_bound(rest) == 31 and proves_lt(rest, 32)
    assert is_nonneg(P // 32 - 32 * (P // 1024)) and is_nonneg(32 * (P // 32))  # a third stage
    product = (N * M) // 32
    assert is_nonneg(product - 32 * (product // 32))
    assert not is_nonneg(P - 33 * (P // 32))  # false at N = 1024: 32 - 33
    assert not is_nonneg(N // 32 - 32 * (M // 1024))  # different numerators: no relation
    for n in (1, 31, 32, 1023, 1024, 1025, 40000, 2**20 + 7):
        value = evaluate(rest, {"N": n})
        assert value == (n // 32) % 32 and 0 <= value <= 31


def test_proves_lt_examples():
    assert proves_lt(I, N) and not proves_lt(N, I) and not proves_lt(I, N - 1)
    assert proves_lt(L, 64) and not proves_lt(L, 63)
    assert proves_lt(J, M) and proves_lt(I * M + J, N * M)
    assert not proves_lt(I * M + J, N * M - 1)
    assert proves_lt(R, N * M)
    assert proves_lt(N, N + 1) and not proves_lt(N, N)
    assert not proves_lt(N, M)
    assert proves_lt(0, N) and not proves_lt(0, Z)
    assert proves_lt(N % 64, 64) and proves_lt(I % 8, 8)


def test_bounds_examples():
    assert upper_bound(I) == N - 1 and lower_bound(I) == 0
    assert upper_bound(L) == 63 and lower_bound(L) == 0
    assert upper_bound(I * M + J) == N * M - 1 and lower_bound(I * M + J) == 0
    assert upper_bound(N - I) == N and lower_bound(N - I) == 1
    assert upper_bound(N) == N and lower_bound(N) == N
    assert upper_bound(R) == N * M - 1
    assert upper_bound(D) == 4 and lower_bound(D) == -4
    assert upper_bound(Nat.atom(Unknown(3)) * I) is None


def test_divides_and_is_integral():
    assert not divides(3, N)
    assert divides(3, nat("N", multiple_of=3))
    assert divides(3, nat("N", multiple_of=6)) and divides(2, nat("N", multiple_of=6))
    assert divides(64, nat("N", multiple_of=128))
    assert not divides(128, nat("N", multiple_of=64))
    assert divides(64, K) and divides(32, K) and not divides(128, K)
    assert divides(64, K * N) and divides(128, K * 2) and divides(4096, K * K)
    assert divides(6, nat("A", multiple_of=2) * nat("B", multiple_of=3))
    assert divides(1, N) and divides(N, N) and divides(N, N * M) and divides(N, 3 * N)
    assert divides(N, 0) and not divides(0, N) and not divides(0, 0)
    assert not divides(N, M) and not divides(N * M, N) and not divides(2 * N, N)
    assert divides(N + 1, N * N + 2 * N + 1) and divides(M + 1, N * M + N)
    # a sum that does not divide symbolically is not provably a divisor
    assert not divides(M + 1, N) and not divides(N + M, N * M)
    assert not divides(M + 1, 1) and not divides(N + 2, N)
    assert is_integral(N * M + 3) and is_integral(Nat.const(0))
    assert not is_integral(N / 2) and not is_integral(Nat.const(Fraction(1, 2)))
    assert is_integral(K / 64) and not is_integral(K / 128)
    assert is_integral(nat("N", multiple_of=6) / 3) and is_integral(nat("N", multiple_of=4) ** 2 / 16)
    assert not is_integral(N / M) and not is_integral(1 / N)
    assert is_integral(N // 2) and is_integral(N % M) and is_integral(nmin(N, M))


def rational_value(n: Nat, env) -> Fraction:
    """Value of a bound.  Bounds are rational functions of the free variables (e.g. the
    lower bound of x // N is (lo(x) - N + 1) / N), which `evaluate` would reject as not
    integral; the only atoms they may contain are free ones."""
    total = Fraction(0)
    for mono, c in n.terms:
        term = Fraction(c)
        for a, p in mono:
            if isinstance(a, Var):
                assert a.hi is None, f"bounded variable {a} left in a bound"
                v = Fraction(env[a.name])
            elif isinstance(a, ExactDiv):
                v = rational_value(a.a, env) / rational_value(a.b, env)
            elif isinstance(a, Pow):
                e = rational_value(a.b, env)
                assert e.denominator == 1
                v = rational_value(a.a, env) ** int(e)
            else:
                pytest.fail(f"atom {a} in a bound")
            term *= v**p
        total += term
    return total


@det
@given(trees, env_lists)
def test_range_facts_hold_on_samples(t, envs_):
    n = build_nat(t)
    vals = values(n, envs_)
    if is_nonneg(n):
        assert all(v >= 0 for v in vals), (str(n), vals)
    if is_positive(n):
        assert all(v > 0 for v in vals), (str(n), vals)
    ub, lb = upper_bound(n), lower_bound(n)
    for env, v in zip(envs_, vals):
        if ub is not None:
            assert {x.name for x in ub.vars} <= set(FREE_VARS)
            assert rational_value(ub, env) >= v, (str(n), str(ub), env)
        if lb is not None:
            assert {x.name for x in lb.vars} <= set(FREE_VARS)
            assert rational_value(lb, env) <= v, (str(n), str(lb), env)


@det
@given(trees, trees, env_lists)
def test_proves_lt_holds_on_samples(t, u, envs_):
    a, b = build_nat(t), build_nat(u)
    if proves_lt(a, b):
        assert all(x < y for x, y in zip(values(a, envs_), values(b, envs_)))
    mn, mx = nmin(a, b), nmax(a, b)
    for env in envs_:
        x, y = evaluate(a, env), evaluate(b, env)
        assert evaluate(mn, env) == min(x, y) and evaluate(mx, env) == max(x, y)


@det
@given(trees, positive, env_lists)
def test_divides_holds_on_samples(t, u, envs_):
    a, d = build_nat(t), build_nat(u)
    for prod in (a, a * d, a * d + d):
        if divides(d, prod):
            for env in envs_:
                assert evaluate(prod, env) % evaluate(d, env) == 0, (str(d), str(prod), env)
            assert is_integral(prod / d)
    assert divides(d, a * d) or not is_integral(a)


@det
@given(trees)
def test_is_integral_of_built_trees(t):
    """Without exact division in the tree, the normal form must be provably integral (a
    floor division may only turn into an exact one when that is integral)."""
    n = build_nat(t)
    if all(x not in repr(t) for x in ("kdiv", "exact")):
        assert is_integral(n), str(n)


# =================================================================== 4. printing


def _python_of_c(text: str) -> str:
    """C integer text as Python: every parenthesised `c ? a : b` (how min and max print) as
    `(a if c else b)`; `&&`, `||` do not occur in sizes."""
    def convert(s: str) -> str:
        out, depth, start, top = [], 0, 0, []
        for k, ch in enumerate(s):
            if ch == "(":
                if depth == 0:
                    out.append(s[start:k])
                    start = k + 1
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    out.append("(" + convert(s[start:k]) + ")")
                    start = k + 1
            elif depth == 0 and ch in "?:":
                top.append(len("".join(out)) + (k - start))
        out.append(s[start:])
        flat = "".join(out)
        if len(top) == 2:  # a conditional at this level: cond ? a : b
            (q, colon) = top
            return f"{flat[q + 1:colon].strip()} if {flat[:q].strip()} else {flat[colon + 1:].strip()}"
        return flat
    return convert(text)


def _py(text: str, env):
    return eval(_python_of_c(text), {"__builtins__": {}, "min": min, "max": max}, dict(env))


def test_str_examples():
    assert str(N + 1) == "N + 1"
    assert str(N - 1) == "N - 1"
    assert str(1 - N) == "-N + 1"
    assert str(2 * N) == "2 * N"
    assert str(N * N * M) == "M * N * N"
    assert str(N / 64) == "N / 64"
    assert str(3 * N / 64) == "3 * N / 64"
    assert str((N + 1) / 2) == "(N + 1) / 2"
    assert str(-N / 2) == "(-N) / 2"
    assert str(N // 64) == "(N // 64)"
    assert str(N % 64) == "(N % 64)"
    assert str((N + 1) // (M + 1)) == "((N + 1) // (M + 1))"
    assert str(2**S) == "2^s"
    assert str(nmin(N, M)) == "min(M, N)" and str(nmax(N, M)) == "max(M, N)"
    assert str(Nat.const(0)) == "0" and str(Nat.const(-3)) == "-3"
    assert str(Nat.atom(Unknown(7))) == "?7"
    assert repr(N + 1) == "Nat(N + 1)"


def test_to_c_examples():
    assert (N // 64).to_c() == "(N / 64)"
    assert (N % 64).to_c() == "(N % 64)"
    assert (2**S).to_c() == "(1 << s)"
    assert (2 ** (S + M)).to_c() == "(1 << (s + M))"
    assert (4 * 2**S).to_c() == "4 * (1 << s)"
    assert ((N + 1) / 2).to_c() == "(N + 1) / 2"
    assert (N * M + 3).to_c() == "M * N + 3"
    with pytest.raises(NatError):
        (3**S).to_c()
    with pytest.raises(NatError):
        (N**M).to_c()
    assert str(3**S) == "3^s"


def test_c_divides_exactly_before_it_multiplies():
    """`(4096 * g + N * i) / 4096` with N a multiple of 4096: printed with the common
    denominator, C would compute N * i first and overflow a 32-bit int for N = 2^24 and
    i = 4096 (a kernel reading out of bounds); the exact quotient N / 4096 comes first."""
    n, i, g = nat("N", multiple_of=4096), nat("i", lo=0, hi=4096), nat("g", lo=0)
    e = (4096 * g + n * i) / 4096
    assert e.to_c() == "g + (N / 4096) * i"
    assert ((3 * n * i) / 4096 - g).to_c() == "-g + 3 * (N / 4096) * i"
    assert ((n * i) / 8192).to_c() == "N * i / 8192"  # not known to divide: the plain quotient
    env = {"N": 1 << 24, "i": 4095, "g": 7}
    assert _py(e.to_c().replace("/", "//"), env) == evaluate(e, env) == 7 + 4096 * 4095


def test_c_printing_of_symbolic_powers_of_two():
    k = nat("k", lo=0, hi=20)
    for e in (2**k, 2 ** (k + 1), 2**k * N, 2 ** (k + N), (N * 2**k) // 8, (N * 2**k) % 2 ** (k + 1)):
        c = e.to_c()
        assert "<<" in c
        for env in ({"k": 0, "N": 1}, {"k": 3, "N": 5}, {"k": 19, "N": 2}):
            assert _py(c.replace("/", "//"), env) == evaluate(e, env)


@det
@given(trees, env_lists)
def test_str_evaluates_like_the_nat(t, envs_):
    n = build_nat(t)
    text = str(n).replace("^", "**").replace(" / ", " // ")  # exact division: floor is exact
    for env in envs_:
        assert _py(text, env) == evaluate(n, env), (str(n), env)


@det
@given(nonneg_trees, env_lists)
def test_c_text_evaluates_like_the_nat(t, envs_):
    n = build_nat(t)
    text = n.to_c()
    assert "//" not in text and "^" not in text
    text = text.replace("/", "//")  # all operands are non-negative: truncation == floor
    for env in envs_:
        assert _py(text, env) == evaluate(n, env) == ref(t, env), (text, env)


_GCC = shutil.which("gcc") or shutil.which("cc")


def magnitude(n: Nat, env) -> int:
    """A generous bound on the absolute value of anything C computes for `n.to_c()`: the
    printed numerator (all terms times the common denominator), and every atom inside."""
    n = as_nat(n)
    den, shift = 1, {}
    for mono, c in n.terms:
        den = den * c.denominator // math.gcd(den, c.denominator)
        for a, p in mono:
            shift[a] = max(shift.get(a, 0), -p)
    inner, total = [den], 0
    for mono, c in n.terms:
        term = abs(c.numerator) * den
        for a, p in mono:
            v = abs(evaluate(Nat.atom(a), env))
            term *= max(v, 1) ** (p + shift[a])
            inner += [magnitude(ch, env) for ch in a.children()]
        total += term
    return max([2 * total + 2] + inner)  # x2: the sign-correcting forms of `/` and `%`


def run_c(ns: list[Nat], envs_: list[dict]) -> list[int]:
    """Compile one C program printing every `n.to_c()` for each binding; its output."""
    names = list(VARS)
    lines = [
        "#include <stdio.h>",
        "#define min(a, b) ((a) < (b) ? (a) : (b))",
        "#define max(a, b) ((a) > (b) ? (a) : (b))",
        "int main(void) {",
        "  long long " + ", ".join(names) + ";",
        f'  while (scanf("{" ".join(["%lld"] * len(names))}", {", ".join("&" + v for v in names)}) == {len(names)}) {{',
    ]
    lines += [f'    printf("%lld\\n", (long long)({n.to_c()}));' for n in ns]
    lines += ["  }", "  return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "t.c"), os.path.join(tmp, "t")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        subprocess.run([_GCC, "-w", "-O0", "-o", exe, src], check=True, capture_output=True)
        stdin = "\n".join(" ".join(str(env[v]) for v in names) for env in envs_) + "\n"
        out = subprocess.run([exe], input=stdin, capture_output=True, text=True, check=True).stdout
    return [int(x) for x in out.split()]


@pytest.mark.skipif(_GCC is None, reason="no C compiler")
@settings(derandomize=True, max_examples=12)
@given(st.lists(trees, min_size=8, max_size=8), st.lists(nonneg_trees, min_size=8, max_size=8), env_lists)
def test_c_text_compiles_and_agrees_with_gcc(ts, nonneg_ts, envs_):
    """The C text really means the same in C (precedence, `/` and `%` also on negative
    operands, `1 << k`), compiled with gcc and run on every binding."""
    ns = [build_nat(t) for t in ts + nonneg_ts]
    ns = [n for n in ns if all(magnitude(n, env) < 2**62 for env in envs_)]  # no overflow
    want = [evaluate(n, env) for env in envs_ for n in ns]
    assert run_c(ns, envs_) == want, [n.to_c() for n in ns]


@pytest.mark.skipif(_GCC is None, reason="no C compiler")
def test_c_floor_and_mod_of_possibly_negative_values():
    """C's `/` truncates and `%` keeps the dividend's sign; the printed C must floor."""
    ns = [(N - M) // 4, (N - M) % 4, (D * 3) // (M + 1), D % 3, (I - J) // M, (D - 4) % (N + 2), (D - 4) // (N + 2)]
    envs_ = [*make_envs(1, 12), dict(make_envs(2, 1)[0], N=1, M=9, d=-4), dict(make_envs(3, 1)[0], N=9, M=1, d=4)]
    want = [evaluate(n, env) for env in envs_ for n in ns]
    assert any(v < 0 for v in want)
    assert run_c(ns, envs_) == want, [n.to_c() for n in ns]


# ===================================================================== 5. errors


def test_division_by_zero_raises_nat_error():
    for make in (
        lambda: N / 0,
        lambda: N // 0,
        lambda: N % 0,
        lambda: Nat.const(5) // 0,
        lambda: Nat.const(5) % 0,
        lambda: Nat.const(5) / 0,
        lambda: floordiv(N, Nat.const(0)),
        lambda: mod(N, Nat.const(0)),
        lambda: N / (M - M),
        lambda: 3 / (N - N),
        lambda: 1 // (N - N),
        lambda: 1 % (N - N),
        lambda: Nat.const(0) ** -1,
    ):
        with pytest.raises(NatError):
            make()


def test_division_by_zero_at_evaluation_raises_nat_error():
    env = {"N": 4, "M": 0, "Z": 0}
    for n in (N // M, N % M, N / M, N / (M + Z), nmin(N, N // M), 2 ** (N // M)):
        with pytest.raises(NatError):
            evaluate(n, env)


def test_unbound_and_unknown_raise_nat_error():
    with pytest.raises(NatError, match="N"):
        evaluate(N, {})
    with pytest.raises(NatError):
        evaluate(N + M, {"N": 1})
    with pytest.raises(NatError):
        evaluate(N // M, {"N": 1})  # unbound inside an atom
    with pytest.raises(NatError):
        evaluate(nmin(N, M), {"M": 1})
    with pytest.raises(NatError):
        evaluate(Nat.atom(Unknown(1)) + 1, {})
    assert evaluate(7, {}) == 7 and evaluate(Nat.const(0), {}) == 0


def test_inexact_division_at_evaluation_raises_nat_error():
    with pytest.raises(NatError):
        evaluate(N / 2, {"N": 3})
    assert evaluate(N / 2, {"N": 4}) == 2
    with pytest.raises(NatError):
        evaluate(N / M, {"N": 5, "M": 2})
    assert evaluate(N / M, {"N": 6, "M": 2}) == 3
    x = N / (M + 1)
    with pytest.raises(NatError):
        evaluate(x, {"N": 5, "M": 1})
    assert evaluate(x, {"N": 6, "M": 1}) == 3
    with pytest.raises(NatError):
        evaluate(N / 2, {"N": np.array([2, 3, 4])})
    assert evaluate(N / 2, {"N": np.array([2, 4])}).tolist() == [1, 2]
    with pytest.raises(NatError):  # a rational constant is not a size either
        evaluate(Nat.const(Fraction(1, 2)), {})


def test_bad_construction_raises_nat_error():
    for name in ("1x", "", "a b", "n-1", "x.y", "?1"):
        with pytest.raises(NatError):
            nat(name)
    with pytest.raises(NatError):
        nat("N", multiple_of=0)
    with pytest.raises(NatError):
        nat("N", multiple_of=-2)
    for bad in ("N", 1.5, True, None, [1]):
        with pytest.raises(NatError):
            as_nat(bad)
    with pytest.raises(NatError):
        _ = N + 1.5
    with pytest.raises(NatError):
        _ = N.value
    assert issubclass(NatError, FunctionalError)
    assert (N - N).value == 0 and Nat.const(3).value == 3
    assert Nat.const(3).as_int() == 3 and Nat.const(Fraction(1, 2)).as_int() is None and N.as_int() is None


def test_bool_raises_type_error():
    with pytest.raises(TypeError):
        bool(N)
    with pytest.raises(TypeError):
        if N:
            pass
    with pytest.raises(TypeError):
        bool(Nat.const(0))
    with pytest.raises(TypeError):
        _ = not N


# ============================================================== misc: small helpers


def test_vars_atoms_and_var_of():
    n = (I * M + J) // 4 + nmin(N, 3) + Nat.atom(Unknown(2))
    assert {v.name for v in n.vars} == {"i", "j", "M", "N"}
    assert {u.id for u in n.unknowns} == {2}
    assert var_of(N) == Var("N", 1) and var_of(I) == Var("i", 0, N)
    assert var_of(2 * N) is None and var_of(N + 1) is None and var_of(N * N) is None
    assert var_of(N * M) is None and var_of(Nat.const(1)) is None


def test_var_hi_accepts_ints():
    v = Nat.atom(Var("t", 0, 16))
    assert is_nonneg(15 - v) and proves_lt(v, 16) and v % 16 == v
    assert v == Nat.atom(Var("t", 0, Nat.const(16)))


def test_substitute_renormalises():
    wg, lid = nat("wg"), nat("l", lo=0, hi=64)
    x = nat("x")
    xa = var_of(x)
    _same(substitute(x // 64, {xa: wg * 64 + lid}), wg)
    _same(substitute(x % 64, {xa: wg * 64 + lid}), lid)
    _same(substitute(x / 64, {xa: 64 * N}), N)
    _same(substitute(nmin(x, N), {xa: N + 1}), N)
    _same(substitute(2**x, {xa: Nat.const(5)}), 32)
    _same(substitute(N * M, lambda a: Nat.const(2) if a == Var("M", 1) else None), 2 * N)
    _same(substitute(N + M, {}), N + M)


def test_lanes_of_an_aligned_vector_divide_and_reduce_exactly():
    """(g s + c) // (g d) = s // d and (g s + c) % (g d) = g (s % d) + c for 0 <= c < g: the
    lanes 4i + j of a float4 stay one aligned run after a view's division and modulo."""
    i, j = nat("i", lo=0, hi=16), nat("j", lo=0, hi=4)
    _same((4 * i + 1) % 16, 4 * (i % 4) + 1)
    _same((4 * i + 3) // 16, i // 4)
    _same((4 * i + j) % 16, 4 * (i % 4) + j)
    _same((4 * i) // 16, i // 4)


def test_aligned_division_agrees_with_integers_on_random_values():
    i, j, q = nat("i", lo=0, hi=16), nat("j", lo=0, hi=4), nat("q", lo=0)
    k = nat("K", multiple_of=64)
    rng = random.Random(0)
    for e in (4 * i + 1, 4 * i + j, 8 * i + j + 16 * q, 4 * i + k * q, 12 * i + 2, 6 * i + j + 1, 2 * i + 1):
        for d in (2, 3, 4, 6, 8, 12, 16, 64):
            quotient, remainder = e // d, e % d
            for _ in range(50):
                env = {"i": rng.randrange(16), "j": rng.randrange(4), "q": rng.randrange(50), "K": 64 * rng.randrange(1, 5)}
                value = evaluate(e, env)
                assert evaluate(quotient, env) == value // d, (e, d, quotient)
                assert evaluate(remainder, env) == value % d, (e, d, remainder)


def test_aligned_division_leaves_terms_that_are_not_whole_numbers_alone():
    """2 N / M can be an integer while N / M is not (N = 3, M = 2): such a term is not
    divided by g, so (2 N / M + 1) // 4 keeps its floor-division atom."""
    n, m = nat("N"), nat("M", multiple_of=2)
    a = n / (m / 2) + 1
    for env in ({"N": 3, "M": 2}, {"N": 6, "M": 4}, {"N": 10, "M": 2}):
        value = evaluate(a, env)
        assert evaluate(a // 4, env) == value // 4
        assert evaluate(a % 4, env) == value % 4


def test_a_floor_of_a_sum_is_at_least_the_floor_of_its_least_value():
    """Fuzz seed 36916: map_cut at 8 * ((2 N + 7) // 8) - 8 of a length 2 N - 1 needed the cut to be
    provably non-negative; bounding the floor by (x - 7) / 8 gave 2 N - 8.  Its least value, the
    floor of x's least value over 8 (here 1), proves it; nothing that does not hold is proven."""
    N = nat("N")
    assert is_nonneg(8 * ((2 * N + 7) // 8) - 8)
    assert is_nonneg((N + 3) // 4 - 1)
    assert not is_nonneg(8 * ((2 * N + 7) // 8) - 16)  # N = 1: 8 - 16
    assert not is_nonneg(N // 4 - 1)  # N = 1: 0 - 1
    assert not is_nonneg(3 - (N + 3) // 4)  # the least value bounds from below only
