"""The reference interpreter against independent NumPy expressions.

Every primitive in `functional.PRIMITIVES` is exercised here (see COVERED and
`test_every_primitive_is_covered`).  An autouse fixture wraps every primitive's meaning so
that each intermediate value is checked against its node's type: dtype and shape
(batch axes + the type's shape), so batching and "dtypes follow the types" are checked at
every step, not only on the final result (which `interpret` casts anyway).
"""

from __future__ import annotations

import builtins as py

import attrs
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import functional as fl
from functional import (
    abs,
    add,
    and_,
    array,
    as_scalar,
    as_vector,
    boolean,
    cast,
    concat,
    cos,
    div,
    drop,
    eq,
    exp,
    f32,
    f64,
    fma,
    fst,
    fun,
    gather,
    ge,
    generate,
    gt,
    i32,
    interpret,
    iterate,
    join,
    le,
    let,
    literal,
    log,
    lt,
    map,
    map_global,
    map_local,
    map_seq,
    map_seq_unroll,
    map_vec,
    map_workgroup,
    max,
    min,
    mul,
    nat,
    ne,
    neg,
    not_,
    or_,
    pad_clamp,
    pad_const,
    pad_mirror,
    pad_wrap,
    pair,
    reduce,
    reduce_seq,
    reduce_seq_double_buffered,
    reduce_seq_double_buffered_async,
    reduce_seq_unroll,
    rem,
    reorder_stride,
    scatter,
    select,
    sin,
    slide,
    snd,
    split,
    sqrt,
    sub,
    take,
    to_global,
    to_local,
    to_private,
    transpose,
    tuple_of,
    u32,
    unzip,
    user_fun,
    vec,
    zip,
)
from functional.interp import layout
from functional.nat import evaluate
from functional.primitives import PRIMITIVES

from .test_builtins import COVERED_HERE
from functional.types import FunType, NatFunType

N, M, P = nat("N"), nat("M"), nat("P")

# Every primitive has at least one test below that runs it through the interpreter and
# compares with NumPy.  A new primitive must be added here (and tested) or
# test_every_primitive_is_covered fails.
COVERED = {
    # high level
    "map", "reduce", "zip", "unzip", "pair", "fst", "snd", "split", "join", "transpose", "gather", "scatter",
    "reorder_stride", "slide", "pad_const", "pad_clamp", "pad_wrap", "pad_mirror", "iterate", "generate", "take",
    "drop", "concat", "as_vector", "as_scalar", "let", "associative",
    # scalar
    "add", "sub", "mul", "div", "rem", "min", "max", "neg", "abs", "sqrt", "exp", "log", "sin", "cos", "fma",
    "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not", "select", "cast", "user_fun",
    # low level
    "map_global", "map_workgroup", "map_local", "map_seq", "map_seq_unroll", "reduce_seq", "reduce_seq_unroll",
    "reduce_seq_double_buffered", "reduce_seq_double_buffered_async",
    "to_global", "to_local", "to_private", "map_vec", "reduce_warp",
    # TF32 tensor cores: their meanings against NumPy in tests/test_tensor_cores.py
    "tf32", "mma_sync",
}
COVERED |= COVERED_HERE  # the math built-ins, bit operations, at and nat_value: tests/functional/test_builtins.py


def test_every_primitive_is_covered():
    missing = set(PRIMITIVES) - COVERED
    assert not missing, f"primitives without an interpreter test: {sorted(missing)}"
    assert not COVERED - set(PRIMITIVES), f"COVERED names unknown primitives: {sorted(COVERED - set(PRIMITIVES))}"


# ------------------------------------------------------------------ checked meanings


_LAYOUTS: dict = {}


def _check_value(value, t, batch, nats, name):
    """`value` (a struct-of-arrays value under `batch`) has the layout of data type `t`."""
    lay = _LAYOUTS.get(t)
    if lay is None:
        lay = _LAYOUTS[t] = layout(t)

    def go(v, lay_):
        if isinstance(lay_, tuple):
            assert isinstance(v, tuple) and len(v) == len(lay_), f"{name}: expected a tuple for {t}, got {type(v)}"
            for part, sub in py.zip(v, lay_):
                go(part, sub)
            return
        assert isinstance(v, np.ndarray), f"{name}: expected an array for {t}, got {type(v).__name__}"
        shape = tuple(batch) + tuple(int(evaluate(d, nats)) for d in lay_.dims)
        assert v.dtype == lay_.scalar.dtype, f"{name}: dtype {v.dtype} for {t} (expected {lay_.scalar.dtype})"
        assert v.shape == shape, f"{name}: shape {v.shape} for {t} under batch {batch} (expected {shape})"

    go(value, lay)


_EXECUTED: set[str] = set()  # primitives whose meaning ran in this module


def _checked(name, meaning):
    def run(c):
        _EXECUTED.add(name)
        out = meaning(c)
        t = c.result_type
        if not isinstance(t, (FunType, NatFunType)):
            _check_value(out, t, c.batch, c.nats, name)
        return out

    return run


@pytest.fixture(autouse=True, scope="module")
def checked_meanings():
    with pytest.MonkeyPatch.context() as mp:
        for name, decl in list(PRIMITIVES.items()):
            mp.setitem(PRIMITIVES, name, attrs.evolve(decl, meaning=_checked(name, decl.meaning)))
        yield


# ----------------------------------------------------------------------------- helpers

_TYPED: dict[int, tuple] = {}


def run(prog, *inputs):
    """Interpret (inferring once per program object) and check the result's dtypes/shapes
    against the program's result type."""
    key = id(prog)
    if key not in _TYPED:
        _TYPED[key] = (prog, fl.infer(prog))  # keep prog alive so its id stays unique
    typed = _TYPED[key][1]
    out = interpret(typed, *inputs)  # typed: not inferred again
    t = typed.t
    while isinstance(t, NatFunType):
        t = t.body
    for _ in inputs:
        t = t.result
    _check_result(out, t)
    return out


def _check_result(out, t):
    lay = layout(t)

    def go(v, lay_):
        if isinstance(lay_, tuple):
            assert isinstance(v, tuple) and len(v) == len(lay_)
            for part, sub in py.zip(v, lay_):
                go(part, sub)
            return
        if not lay_.dims:
            assert isinstance(v, np.generic), f"scalar results are NumPy scalars, got {type(v).__name__}"
        assert v.dtype == lay_.scalar.dtype

    go(out, lay)


# A third of the profile's examples per test: each example runs several programs, and the
# whole file must stay fast in CI (HYPOTHESIS_PROFILE=thorough still scales it up).
FAST = settings(max_examples=py.max(10, settings().max_examples // 3))

# Hypothesis chooses sizes, parameters and a seed; the data comes from NumPy's generator
# (drawing arrays element by element through Hypothesis costs several times the interpreter).
RNGS = st.integers(0, 2**32 - 1).map(np.random.default_rng)


def F(rng, shape, lo=-10.0, hi=10.0):
    """float32 data in [lo, hi); a few values are repeated, so that ties and equal operands occur."""
    out = rng.uniform(lo, hi, shape).astype(np.float32)
    flat = out.reshape(-1)
    if flat.size > 1:
        flat[rng.integers(0, flat.size)] = flat[0]
    return out


def I(rng, shape, lo=-1000, hi=1000, dtype=np.int32):
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


small = st.integers(1, 6)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- map family

SCALE = fun([array(N, f32)], lambda xs: map(lambda x: x * 2.0 + 1.0, xs))
MAPS_LOW = {
    name: fun([array(N, f32)], lambda xs, m=m: m(lambda x: x * 2.0 + 1.0, xs))
    for name, m in [
        ("map_global", lambda f, xs: map_global(f, xs)),
        ("map_global1", lambda f, xs: map_global(f, xs, dim=1)),
        ("map_workgroup", lambda f, xs: map_workgroup(f, xs, dim=2)),
        ("map_local", lambda f, xs: map_local(f, xs)),
        ("map_seq", lambda f, xs: map_seq(f, xs)),
        ("map_seq_unroll", lambda f, xs: map_seq_unroll(f, xs)),
    ]
}


@FAST
@given(n=st.integers(1, 8), rng=RNGS)
def test_map_and_its_low_level_forms(n, rng):
    xs = F(rng, n)
    expected = xs * np.float32(2) + np.float32(1)
    out = run(SCALE, xs)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)
    for name, prog in MAPS_LOW.items():
        np.testing.assert_array_equal(run(prog, xs), out, err_msg=name)


SHIFT = fun([f32, array(N, f32)], lambda s, xs: map(lambda x: x - s, xs))


@FAST
@given(s=st.floats(-5, 5, width=32), n=st.integers(1, 6), rng=RNGS)
def test_map_captures_a_scalar_input(s, n, rng):
    xs = F(rng, n)
    np.testing.assert_array_equal(run(SHIFT, np.float32(s), xs), xs - np.float32(s))


def _dot(row, col):
    return reduce(add, 0.0, map(lambda p: fst(p) * snd(p), zip(row, col)))


MATMUL = fun([array(M, array(N, f32)), array(N, array(P, f32))],
             lambda a, b: map(lambda row: map(lambda col: _dot(row, col), transpose(b)), a))
# The same with low-level primitives: work-groups over rows, local threads over columns, a
# sequential reduction with the accumulator of the high-level counterpart's type.
MATMUL_LOW = fun([array(M, array(N, f32)), array(N, array(P, f32))],
                 lambda a, b: map_workgroup(
                     lambda row: to_global(map_local(
                         lambda col: reduce_seq(lambda acc, p: acc + fst(p) * snd(p), 0.0, zip(row, col)),
                         transpose(b))), a))
MATMUL_GLOBAL = fun([array(M, array(N, f32)), array(N, array(P, f32))],
                    lambda a, b: map_global(
                        lambda row: map_global(lambda col: reduce_seq_unroll(add, 0.0,
                                                                             map_seq(lambda p: fst(p) * snd(p),
                                                                                     zip(row, col))),
                                               transpose(b), dim=0), a, dim=1))


@FAST
@given(m=small, n=small, p=small, rng=RNGS)
def test_matrix_multiplication_nested_maps_capture_outer_rows(m, n, p, rng):
    a = F(rng, (m, n))
    b = F(rng, (n, p))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    out = run(MATMUL, a, b)
    assert out.shape == (m, p) and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(run(MATMUL_LOW, a, b), out, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(run(MATMUL_GLOBAL, a, b), out, rtol=1e-5, atol=1e-4)


THREE_DEEP = fun([array(M, f32), array(N, f32), array(P, f32)],
                 lambda xs, ys, zs: map(lambda x: map(lambda y: map(lambda z: x + y * z, zs), ys), xs))


@FAST
@given(m=small, n=small, p=small, rng=RNGS)
def test_values_captured_at_every_depth_are_broadcast(m, n, p, rng):
    xs, ys, zs = F(rng, m), F(rng, n), F(rng, p)
    out = run(THREE_DEEP, xs, ys, zs)
    expected = xs[:, None, None] + ys[None, :, None] * zs[None, None, :]
    np.testing.assert_array_equal(out, expected)


# ------------------------------------------------------------------------- reductions

SUM = fun([array(N, f32)], lambda xs: reduce(add, 0.0, xs))
SUM_LAMBDA = fun([array(N, f32)], lambda xs: reduce(lambda a, b: a + b, 0.0, xs))  # not a known ufunc
SUM_SEQ = fun([array(N, f32)], lambda xs: reduce_seq(add, 0.0, xs))
SUM_UNROLL = fun([array(N, f32)], lambda xs: reduce_seq_unroll(lambda a, x: a + x, 0.0, xs))
SUM_DOUBLE_BUFFERED = fun([array(N, f32)], lambda xs: reduce_seq_double_buffered(lambda a, x: a + x, 0.0, xs))
SUM_DOUBLE_BUFFERED_ASYNC = fun([array(N, f32)], lambda xs: reduce_seq_double_buffered_async(lambda a, x: a + x, 0.0, xs))
MAXIMUM = fun([array(N, f32)], lambda xs: reduce(max, -1000.0, xs))
MINIMUM = fun([array(N, i32)], lambda xs: reduce(lambda a, b: min(a, b), 5000, xs))
PRODUCT = fun([array(N, i32)], lambda xs: reduce(mul, 1, xs))
# sequential folds: non-associative function, and an accumulator of another type
SEQ_SUB = fun([array(N, f32)], lambda xs: reduce_seq(sub, 100.0, xs))
COUNT_POS = fun([array(N, f32)], lambda xs: reduce_seq(lambda acc, x: acc + select(x > 0.0, 1, 0), 0, xs))
ROW_SUMS = fun([array(M, array(N, f32))], lambda g: map(lambda row: reduce(add, 0.0, row), g))
ROW_SUMS_SEQ = fun([array(M, array(N, f32))], lambda g: map_global(lambda row: reduce_seq_unroll(add, 0.0, row), g))
COL_MAX = fun([array(M, array(N, f32))], lambda g: reduce(lambda a, b: map(lambda p: max(fst(p), snd(p)), zip(a, b)),
                                                          generate(N, lambda i: -1000.0), g))


@FAST
@given(n=st.integers(1, 9), rng=RNGS)
def test_reduce_forms_agree_with_numpy(n, rng):
    xs = F(rng, n)
    total = np.sum(xs, dtype=np.float64)
    for prog in (SUM, SUM_LAMBDA, SUM_SEQ, SUM_UNROLL, SUM_DOUBLE_BUFFERED, SUM_DOUBLE_BUFFERED_ASYNC):
        out = run(prog, xs)
        assert isinstance(out, np.float32)
        np.testing.assert_allclose(out, total, rtol=1e-5, atol=1e-4)
    assert run(MAXIMUM, xs) == xs.max()
    close(run(SEQ_SUB, xs), 100.0 - total)
    out = run(COUNT_POS, xs)
    assert out.dtype == np.int32 and out == np.count_nonzero(xs > 0)


def test_associative_means_its_operator():
    """`associative f a b = f a b` (a declaration for the rules), also batched inside a map."""
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = fl.interpret(fl.parse("fun(xs: 3.4.f32) => map (fun(r) => reduce (associative (fun(a, b) => a + b * b)) "
                                 "f32(1.0) r) xs"), xs)
    np.testing.assert_allclose(rows, 1.0 + (xs.astype(np.float64) ** 2).sum(axis=1))
    pair = fl.interpret(fl.parse("fun(x: f32, y: f32) => associative (fun(a, b) => a - b) x y"),
                        np.float32(5.0), np.float32(2.0))
    assert pair == np.float32(3.0)


def test_a_reduction_of_no_elements_is_its_initial_value():
    """A symbolic length can be 0 at some sizes (the default lowering's `take (32 * (N // 32))`
    for N < 32): the fold of no elements is z, also for min and max, which have no identity
    NumPy could reduce an empty array with."""
    cut = "take (4 * (N // 4))"
    for text, want in ((f"fun(N: nat, xs: N.f32) => reduce min inf ({cut} xs)", np.float32(np.inf)),
                       (f"fun(N: nat, xs: N.f32) => reduce max f32(-2.0) ({cut} xs)", np.float32(-2.0)),
                       (f"fun(N: nat, xs: N.i32) => reduce (+) i32(3) ({cut} xs)", np.int32(3)),
                       (f"fun(N: nat, xs: N.f32) => reduce_seq (fun(a, b) => a - b) f32(1.0) ({cut} xs)", np.float32(1.0))):
        xs = np.ones(3, np.int32 if "i32" in text else np.float32)
        got = fl.interpret(fl.parse(text), xs)
        assert got == want and got.dtype == want.dtype, text
    rows = fl.interpret(fl.parse(f"fun(N: nat, xs: 2.N.f32) => map (fun(r) => reduce min f32(2.0) ({cut} r)) xs"),
                        np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(rows, np.float32([2.0, 2.0]))


@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_integer_reductions(n, rng):
    xs = I(rng, n, -9, 9)
    assert run(MINIMUM, xs) == py.min(5000, int(xs.min()))
    out = run(PRODUCT, xs)
    assert out.dtype == np.int32 and int(out) == int(np.prod(xs.astype(np.int64)))


@FAST
@given(m=small, n=small, rng=RNGS)
def test_reductions_inside_maps(m, n, rng):
    g = F(rng, (m, n))
    close(run(ROW_SUMS, g), g.sum(axis=1))
    close(run(ROW_SUMS_SEQ, g), g.sum(axis=1))
    np.testing.assert_array_equal(run(COL_MAX, g), np.maximum(g.max(axis=0), -1000))


# ------------------------------------------------------------------ tuples and arrays of tuples

ZIP_OF_ZIPS = fun([array(N, f32), array(N, i32), array(N, f32)], lambda a, b, c: zip(zip(a, b), c))
UNZIP = fun([array(N, f32), array(N, i32)], lambda a, b: unzip(zip(a, b)))
USE_TRIPLES = fun([array(N, f32), array(N, i32), array(N, f32)],
                  lambda a, b, c: map(lambda t: fst(fst(t)) * cast(f32, snd(fst(t))) - snd(t), zip(zip(a, b), c)))
SWAP = fun([array(N, tuple_of(f32, i32))], lambda ps: map(lambda p: pair(snd(p), fst(p)), ps))
FST_OF_UNZIP = fun([array(N, tuple_of(f32, i32))], lambda ps: fst(unzip(ps)))
PAIR_SCALARS = fun([f32, i32], lambda x, k: pair(x + 1.0, k * 2))
TRANSPOSE_ZIPPED = fun([array(M, array(N, f32)), array(M, array(N, i32))],
                       lambda a, b: transpose(map(lambda r: zip(fst(r), snd(r)), zip(a, b))))


@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_zip_of_zips_and_unzip(n, rng):
    a, b, c = F(rng, n), I(rng, n), F(rng, n)
    out = run(ZIP_OF_ZIPS, a, b, c)
    assert isinstance(out, tuple) and isinstance(out[0], tuple)
    np.testing.assert_array_equal(out[0][0], a)
    np.testing.assert_array_equal(out[0][1], b)
    np.testing.assert_array_equal(out[1], c)
    assert out[0][1].dtype == np.int32
    ua, ub = run(UNZIP, a, b)
    np.testing.assert_array_equal(ua, a)
    np.testing.assert_array_equal(ub, b)
    close(run(USE_TRIPLES, a, b, c), a * b.astype(np.float32) - c)
    sb, sa = run(SWAP, (a, b))
    np.testing.assert_array_equal(sb, b)
    np.testing.assert_array_equal(sa, a)
    np.testing.assert_array_equal(run(FST_OF_UNZIP, (a, b)), a)


def test_pair_of_scalars_gives_numpy_scalars():
    x, k = run(PAIR_SCALARS, np.float32(1.5), np.int32(-4))
    assert isinstance(x, np.float32) and x == 2.5
    assert isinstance(k, np.int32) and k == -8


@FAST
@given(m=small, n=small, rng=RNGS)
def test_transpose_of_an_array_of_tuples(m, n, rng):
    a, b = F(rng, (m, n)), I(rng, (m, n))
    ta, tb = run(TRANSPOSE_ZIPPED, a, b)
    np.testing.assert_array_equal(ta, a.T)
    np.testing.assert_array_equal(tb, b.T)


# ------------------------------------------------------------------- split, join, transpose

_SPLIT_JOIN: dict[int, tuple] = {}


def split_join_programs(k):
    if k not in _SPLIT_JOIN:
        nk = nat("N", multiple_of=k)
        _SPLIT_JOIN[k] = (
            fun([array(nk, f32)], lambda xs: split(k, xs)),
            fun([array(M, array(N, f32))], lambda g: join(g)),
            fun([array(nk, f32)], lambda xs: join(map(map(neg), split(k, xs)))),
            fun([array(M, array(nk, f32))], lambda g: map(split(k), g)),
        )
    return _SPLIT_JOIN[k]


@FAST
@given(k=st.sampled_from([1, 2, 3, 4]), m=small, rng=RNGS)
def test_split_and_join_are_reshapes(k, m, rng):
    split_p, join_p, sj_p, map_split_p = split_join_programs(k)
    xs = F(rng, m * k)
    np.testing.assert_array_equal(run(split_p, xs), xs.reshape(m, k))
    np.testing.assert_array_equal(run(join_p, xs.reshape(m, k)), xs)
    np.testing.assert_array_equal(run(sj_p, xs), -xs)
    g = F(rng, (m, 2 * k))
    np.testing.assert_array_equal(run(map_split_p, g), g.reshape(m, 2, k))


TRANSPOSE = fun([array(M, array(N, f32))], lambda g: transpose(g))
TRANSPOSE_INNER = fun([array(P, array(M, array(N, i32)))], lambda g: map(transpose, g))
TRANSPOSE_TWICE = fun([array(M, array(N, f32))], lambda g: transpose(transpose(g)))


@FAST
@given(m=small, n=small, p=small, rng=RNGS)
def test_transpose(m, n, p, rng):
    g = F(rng, (m, n))
    np.testing.assert_array_equal(run(TRANSPOSE, g), g.T)
    np.testing.assert_array_equal(run(TRANSPOSE_TWICE, g), g)
    h = I(rng, (p, m, n))
    np.testing.assert_array_equal(run(TRANSPOSE_INNER, h), np.transpose(h, (0, 2, 1)))


# -------------------------------------------------------------- gather, scatter, reorder

REVERSE = fun([array(N, f32)], lambda xs: gather(lambda i, n: n - 1 - i, xs))
ROTATE_GATHER = fun([array(N, f32)], lambda xs: gather(lambda i, n: (i + 2) % n, xs))
ROTATE_SCATTER = fun([array(N, f32)], lambda xs: scatter(lambda i, n: (i + 2) % n, xs))
SCATTER_GATHER = fun([array(N, i32)], lambda xs: scatter(lambda i, n: (i + 3) % n, gather(lambda i, n: (i + 3) % n, xs)))
REVERSE_ROWS = fun([array(M, array(N, f32))], lambda g: map(gather(lambda i, n: n - 1 - i), g))
SCATTER_REV_ROWS = fun([array(M, array(N, f32))], lambda g: map(lambda r: scatter(lambda i, n: n - 1 - i, r), g))
_STRIDED: dict[int, tuple] = {}


def stride_programs(s):
    if s not in _STRIDED:
        ns = nat("N", multiple_of=s)
        _STRIDED[s] = (
            fun([array(ns, f32)], lambda xs: reorder_stride(s, xs)),
            # the same permutation written as a gather with floor division and modulo
            fun([array(ns, f32)], lambda xs: gather(lambda i, n: i // (n / s) + s * (i % (n / s)), xs)),
            # and a scatter with the inverse permutation j -> (j % s) * (n/s) + j / s
            fun([array(ns, f32)], lambda xs: scatter(lambda i, n: (i % s) * (n / s) + i // s, xs)),
            fun([array(M, array(ns, f32))], lambda g: map(reorder_stride(s), g)),
        )
    return _STRIDED[s]


@FAST
@given(n=st.integers(1, 9), rng=RNGS)
def test_gather_and_scatter_with_index_functions(n, rng):
    xs = F(rng, n)
    np.testing.assert_array_equal(run(REVERSE, xs), xs[::-1])
    np.testing.assert_array_equal(run(ROTATE_GATHER, xs), xs[(np.arange(n) + 2) % n])
    expected = np.empty_like(xs)
    expected[(np.arange(n) + 2) % n] = xs
    np.testing.assert_array_equal(run(ROTATE_SCATTER, xs), expected)
    ints_ = np.arange(n, dtype=np.int32) * 7
    np.testing.assert_array_equal(run(SCATTER_GATHER, ints_), ints_)


@FAST
@given(m=small, n=small, rng=RNGS)
def test_gather_and_scatter_inside_map(m, n, rng):
    g = F(rng, (m, n))
    np.testing.assert_array_equal(run(REVERSE_ROWS, g), g[:, ::-1])
    np.testing.assert_array_equal(run(SCATTER_REV_ROWS, g), g[:, ::-1])


@FAST
@given(s=st.sampled_from([1, 2, 3, 4]), chunk=small, m=small, rng=RNGS)
def test_reorder_stride(s, chunk, m, rng):
    strided, as_gather, as_scatter, in_map = stride_programs(s)
    xs = F(rng, s * chunk)
    # element i reads xs[i / chunk + s * (i % chunk)]: consecutive outputs are s apart
    expected = xs.reshape(chunk, s).T.reshape(-1)
    np.testing.assert_array_equal(run(strided, xs), expected)
    np.testing.assert_array_equal(run(as_gather, xs), expected)
    np.testing.assert_array_equal(run(as_scatter, xs), expected)
    g = F(rng, (m, s * chunk))
    np.testing.assert_array_equal(run(in_map, g), g.reshape(m, chunk, s).transpose(0, 2, 1).reshape(m, -1))


# --------------------------------------------------------------------------- slide, pad

_SLIDES: dict[tuple, object] = {}


def slide_program(size, step):
    if (size, step) not in _SLIDES:
        # length step*M + size: exactly M + 1 windows
        _SLIDES[size, step] = fun([array(M * step + size, f32)], lambda xs: slide(size, step, xs))
    return _SLIDES[size, step]


@FAST
@given(size=st.integers(1, 4), step=st.integers(1, 3), m=st.integers(0, 4), rng=RNGS)
def test_slide(size, step, m, rng):
    xs = F(rng, m * step + size)
    assume(m >= 1)
    windows = np.stack([xs[k * step: k * step + size] for k in range(m + 1)])
    np.testing.assert_array_equal(run(slide_program(size, step), xs), windows)


SLIDE_2D = fun([array(M, array(N, f32))], lambda g: map(transpose, slide(3, 1, map(slide(3, 1), g))))
STENCIL_2D = fun([array(M, array(N, f32))],
                 lambda g: map(map(lambda w: reduce(add, 0.0, join(w))),
                               map(transpose, slide(3, 1, map(slide(3, 1), pad_clamp(1, 1, map(pad_clamp(1, 1), g)))))))
PAD_2D_CONST = fun([array(M, array(N, f32))],
                   lambda g: transpose(map(pad_const(2, 1, 0.0), transpose(map(pad_const(1, 2, 0.0), g)))))
PAD_2D_WRAP = fun([array(M, array(N, f32))], lambda g: pad_wrap(1, 1, map(pad_wrap(1, 1), g)))


@FAST
@given(m=st.integers(3, 6), n=st.integers(3, 6), rng=RNGS)
def test_two_dimensional_slide_and_pad(m, n, rng):
    g = F(rng, (m, n))
    out = run(SLIDE_2D, g)
    assert out.shape == (m - 2, n - 2, 3, 3)
    np.testing.assert_array_equal(out, np.lib.stride_tricks.sliding_window_view(g, (3, 3)))
    padded = np.pad(g, 1, mode="edge")
    box = sum(padded[i:i + m, j:j + n] for i in range(3) for j in range(3))
    np.testing.assert_allclose(run(STENCIL_2D, g), box, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(run(PAD_2D_CONST, g), np.pad(g, ((2, 1), (1, 2))))
    np.testing.assert_array_equal(run(PAD_2D_WRAP, g), np.pad(g, 1, mode="wrap"))


_PADS: dict[tuple, tuple] = {}


def pad_programs(left, right):
    if (left, right) not in _PADS:
        _PADS[left, right] = (
            fun([f32, array(N, f32)], lambda v, xs: pad_const(left, right, v, xs)),
            fun([array(N, f32)], lambda xs: pad_clamp(left, right, xs)),
            fun([array(N, f32)], lambda xs: pad_wrap(left, right, xs)),
            fun([array(N, f32)], lambda xs: pad_mirror(left, right, xs)),
            # the padding value computed per row: a captured, batched value
            fun([array(M, array(N, f32))], lambda g: map(lambda r: pad_const(left, right, reduce(max, -99.0, r), r), g)),
        )
    return _PADS[left, right]


@FAST
@given(left=st.integers(0, 3), right=st.integers(0, 3), n=st.integers(3, 6), rng=RNGS)
def test_pad_modes_by_index(left, right, n, rng):
    const, clamp, wrap, mirror, per_row = pad_programs(left, right)
    xs = F(rng, n)
    j = np.arange(-left, n + right)  # source positions, before the boundary rule
    np.testing.assert_array_equal(run(const, np.float32(7.5), xs),
                                  np.where((j >= 0) & (j < n), xs[np.clip(j, 0, n - 1)], np.float32(7.5)))
    np.testing.assert_array_equal(run(clamp, xs), xs[np.clip(j, 0, n - 1)])
    np.testing.assert_array_equal(run(wrap, xs), xs[j % n])
    np.testing.assert_array_equal(run(mirror, xs), xs[np.where(j < 0, -j - 1, np.where(j >= n, 2 * n - 1 - j, j))])
    g = F(rng, (2, n))
    expected = np.stack([np.pad(r, (left, right), constant_values=py.max(r.max(), -99)) for r in g])
    np.testing.assert_array_equal(run(per_row, g), expected)


# ----------------------------------------------------------------------------- iterate

_ITERATES: dict[int, tuple] = {}


def iterate_programs(k):
    if k not in _ITERATES:
        nk = nat("N", multiple_of=2**k)
        halve = lambda ys: map(reduce(add, 0.0), split(2, ys))
        _ITERATES[k] = (
            fun([array(nk, f32)], lambda xs: iterate(k, halve, xs)),
            fun([array(M, array(nk, f32))], lambda g: map(lambda r: iterate(k, halve, r), g)),
            # a function that keeps the length: scale k times
            fun([array(N, f32)], lambda xs: iterate(k, lambda ys: map(lambda y: y * 3.0, ys), xs)),
        )
    return _ITERATES[k]


@FAST
@given(k=st.integers(0, 3), m=st.integers(1, 3), rng=RNGS)
def test_iterate_with_split(k, m, rng):
    tree, in_map, scale = iterate_programs(k)
    xs = F(rng, m * 2**k, -4, 4)
    close(run(tree, xs), xs.reshape(m, 2**k).sum(axis=1))
    g = F(rng, (2, m * 2**k), -4, 4)
    close(run(in_map, g), g.reshape(2, m, 2**k).sum(axis=2))
    close(run(scale, xs), xs * np.float32(3**k))


# --------------------------------------------------------------- generate, take, drop, concat

SQUARES = fun([array(N, f32)], lambda xs: map(lambda p: fst(p) + snd(p), zip(xs, generate(N, lambda i: cast(f32, i * i)))))
GEN_CONST = generate(5, lambda i: i % 3 - 1)
GEN_IN_MAP = fun([array(N, f32)], lambda xs: map(lambda x: generate(4, lambda i: x * cast(f32, i)), xs))
GEN_2D = fun([array(M, f32)], lambda xs: generate(3, lambda i: map(lambda x: x + cast(f32, i), xs)))


@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_generate_uses_the_index(n, rng):
    xs = F(rng, n)
    np.testing.assert_array_equal(run(SQUARES, xs), xs + (np.arange(n) ** 2).astype(np.float32))
    np.testing.assert_array_equal(run(GEN_IN_MAP, xs), xs[:, None] * np.arange(4, dtype=np.float32)[None, :])
    np.testing.assert_array_equal(run(GEN_2D, xs), xs[None, :] + np.arange(3, dtype=np.float32)[:, None])


def test_generate_without_inputs():
    out = run(GEN_CONST)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.arange(5) % 3 - 1)


_SLICES: dict[int, tuple] = {}


def slice_programs(k):
    if k not in _SLICES:
        _SLICES[k] = (
            fun([array(N + k, f32)], lambda xs: take(k, xs)),
            fun([array(N + k, f32)], lambda xs: drop(k, xs)),
            fun([array(N + k, f32)], lambda xs: concat(take(k, xs), drop(k, xs))),
            fun([array(M, array(N + k, f32))], lambda g: map(drop(k), g)),
        )
    return _SLICES[k]


CONCAT = fun([array(M, f32), array(N, f32)], lambda xs, ys: concat(xs, ys))
CONCAT_ROWS = fun([array(P, array(M, f32)), array(P, array(N, f32))],
                  lambda a, b: map(lambda r: concat(fst(r), snd(r)), zip(a, b)))


@FAST
@given(k=st.integers(1, 3), n=st.integers(1, 4), rng=RNGS)
def test_take_drop_concat(k, n, rng):
    tk, dr, both, drop_rows = slice_programs(k)
    xs = F(rng, n + k)
    np.testing.assert_array_equal(run(tk, xs), xs[:k])
    np.testing.assert_array_equal(run(dr, xs), xs[k:])
    np.testing.assert_array_equal(run(both, xs), xs)
    g = F(rng, (2, n + k))
    np.testing.assert_array_equal(run(drop_rows, g), g[:, k:])
    ys = F(rng, n)
    np.testing.assert_array_equal(run(CONCAT, xs, ys), np.concatenate([xs, ys]))
    a, b = F(rng, (3, k)), F(rng, (3, n))
    np.testing.assert_array_equal(run(CONCAT_ROWS, a, b), np.concatenate([a, b], axis=1))


# ------------------------------------------------------------------------------ vectors

_VECTOR: dict[int, tuple] = {}
AFFINE = fun([array(N, f32)], lambda xs: map(lambda x: x * 2.0 - 1.0, xs))


def vector_programs(w):
    if w not in _VECTOR:
        nw = nat("N", multiple_of=w)
        _VECTOR[w] = (
            fun([array(nw, f32)], lambda xs: as_vector(w, xs)),
            fun([array(N, vec(f32, w))], lambda vs: as_scalar(vs)),
            fun([array(nw, f32)], lambda xs: as_scalar(map(map_vec(lambda x: x * 2.0 - 1.0), as_vector(w, xs)))),
            # vector arithmetic: the scalar operators apply lane-wise
            fun([array(nw, f32)], lambda xs: as_scalar(map(lambda v: fma(v, v, v), as_vector(w, xs)))),
            fun([array(M, array(nw, f32))], lambda g: map(lambda r: as_scalar(map(map_vec(abs), as_vector(w, r))), g)),
            fun([array(N, vec(i32, w))], lambda vs: map(map_vec(lambda x: cast(f32, x) > 0.0), vs)),
        )
    return _VECTOR[w]


@FAST
@given(w=st.sampled_from([2, 4, 8]), m=st.integers(1, 3), rng=RNGS)
def test_as_vector_map_vec_as_scalar(w, m, rng):
    to_vec, to_scalar, mapped, lanes, in_map, compare = vector_programs(w)
    xs = F(rng, m * w)
    vs = run(to_vec, xs)
    assert vs.shape == (m, w) and vs.dtype == np.float32
    np.testing.assert_array_equal(vs, xs.reshape(m, w))
    np.testing.assert_array_equal(run(to_scalar, vs), xs)
    out = run(mapped, xs)
    np.testing.assert_array_equal(out, xs * np.float32(2) - np.float32(1))
    np.testing.assert_array_equal(out, run(AFFINE, xs))  # map_vec means what map means
    close(run(lanes, xs), xs * xs + xs)
    g = F(rng, (2, m * w))
    np.testing.assert_array_equal(run(in_map, g), np.abs(g))
    iv = I(rng, (m, w), -5, 5)
    out = run(compare, iv)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, iv > 0)


# --------------------------------------------------------------------- identities, let

STORES = fun([array(M, array(N, f32))],
             lambda g: to_global(map(lambda r: to_local(map(lambda x: to_private(x * 2.0), r)), g)))
LET_NORMALISE = fun([array(N, f32)], lambda xs: let(reduce(add, 0.0, xs), lambda s: map(lambda x: x - s, xs)))
LET_IN_MAP = fun([array(M, array(N, f32))],
                 lambda g: map(lambda r: let(reduce(max, -99.0, r), lambda hi: map(lambda x: hi - x, r)), g))


@FAST
@given(m=small, n=small, rng=RNGS)
def test_to_star_are_identities_and_let_names_a_value(m, n, rng):
    g = F(rng, (m, n))
    np.testing.assert_array_equal(run(STORES, g), g * np.float32(2))
    close(run(LET_NORMALISE, g[0]), g[0] - g[0].sum())
    np.testing.assert_array_equal(run(LET_IN_MAP, g), np.maximum(g.max(axis=1), -99)[:, None] - g)


# ------------------------------------------------------------------ scalar operations

UNARY_FLOAT = {
    "neg": (neg, np.negative, (-10, 10)),
    "abs": (abs, np.abs, (-10, 10)),
    "sqrt": (sqrt, np.sqrt, (0, 10)),
    "exp": (exp, np.exp, (-10, 10)),
    "log": (log, np.log, (0.125, 10)),
    "sin": (sin, np.sin, (-10, 10)),
    "cos": (cos, np.cos, (-10, 10)),
}
UNARY_PROGS = {name: fun([array(N, f32)], lambda xs, f=f: map(f, xs)) for name, (f, _, _) in UNARY_FLOAT.items()}
BINARY = {
    "add": (add, np.add), "sub": (sub, np.subtract), "mul": (mul, np.multiply), "min": (min, np.minimum),
    "max": (max, np.maximum), "lt": (lt, np.less), "le": (le, np.less_equal), "gt": (gt, np.greater),
    "ge": (ge, np.greater_equal), "eq": (eq, np.equal), "ne": (ne, np.not_equal),
}


def _binary_prog(op, t):
    return fun([array(N, t), array(N, t)], lambda a, b: map(lambda p: op(fst(p), snd(p)), zip(a, b)))


BINARY_PROGS = {(name, t.name): _binary_prog(op, t) for name, (op, _) in BINARY.items() for t in (f32, i32, u32)}
FLOAT_DIV = _binary_prog(div, f32)
FMA = fun([array(N, f32), array(N, f32), array(N, f32)],
          lambda a, b, c: map(lambda p: fma(fst(fst(p)), snd(fst(p)), snd(p)), zip(zip(a, b), c)))


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_unary_float_operations(name, n, rng):
    _, ref, (lo, hi) = UNARY_FLOAT[name]
    xs = F(rng, n, lo, hi)
    out = run(UNARY_PROGS[name], xs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref(xs), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(BINARY))
@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_binary_operations(name, n, rng):
    _, ref = BINARY[name]
    a, b = F(rng, n), F(rng, n)
    b[: n // 2] = a[: n // 2]  # equal operands, so that eq/le/ge see both outcomes
    out = run(BINARY_PROGS[name, "f32"], a, b)
    assert out.dtype == ref(a, b).dtype
    np.testing.assert_array_equal(out, ref(a, b))
    ia, ib = I(rng, n, -50, 50), I(rng, n, -50, 50)
    out = run(BINARY_PROGS[name, "i32"], ia, ib)
    assert out.dtype == ref(ia, ib).dtype
    np.testing.assert_array_equal(out, ref(ia, ib))
    ua, ub = I(rng, n, 0, 50, np.uint32), I(rng, n, 0, 50, np.uint32)
    out = run(BINARY_PROGS[name, "u32"], ua, ub)
    assert out.dtype == ref(ua, ub).dtype  # u32 arithmetic stays u32 (wrapping)
    np.testing.assert_array_equal(out, ref(ua, ub))


@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_float_division_and_fma(n, rng):
    a, b, c = F(rng, n), F(rng, n, 0.5, 10), F(rng, n)
    out = run(FLOAT_DIV, a, b)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, a / b)
    close(run(FMA, a, b, c), a * b + c)


INT_DIV_REM = fun([array(N, i32), array(N, i32)],
                  lambda a, b: map(lambda p: pair(fst(p) / snd(p), fst(p) % snd(p)), zip(a, b)))
UINT_DIV_REM = fun([array(N, u32), array(N, u32)],
                   lambda a, b: map(lambda p: pair(div(fst(p), snd(p)), rem(fst(p), snd(p))), zip(a, b)))


def _c_div(a, b):
    q = int(a / b)  # exact here: |a|, |b| < 2**20; int() truncates towards zero as C does
    return q, a - b * q


@FAST
@given(pairs=st.lists(st.tuples(st.integers(-10**5, 10**5), st.integers(-300, 300).filter(bool)), min_size=1,
                      max_size=8))
def test_integer_division_and_remainder_truncate_like_c(pairs):
    a = np.array([x for x, _ in pairs], np.int32)
    b = np.array([y for _, y in pairs], np.int32)
    q, r = run(INT_DIV_REM, a, b)
    assert q.dtype == np.int32 and r.dtype == np.int32
    expected = [_c_div(int(x), int(y)) for x, y in py.zip(a, b)]
    assert q.tolist() == [e[0] for e in expected]
    assert r.tolist() == [e[1] for e in expected]


def test_integer_division_with_negative_numbers_examples():
    a = np.array([7, -7, 7, -7, 0, -1, 1], np.int32)
    b = np.array([2, 2, -2, -2, 3, 5, -5], np.int32)
    q, r = run(INT_DIV_REM, a, b)
    assert q.tolist() == [3, -3, -3, 3, 0, 0, 0]
    assert r.tolist() == [1, -1, 1, -1, 0, -1, 1]
    uq, ur = run(UINT_DIV_REM, np.array([7, 9], np.uint32), np.array([2, 10], np.uint32))
    assert uq.dtype == np.uint32 and uq.tolist() == [3, 0] and ur.tolist() == [1, 9]


BOOLS = fun([array(N, boolean), array(N, boolean)],
            lambda a, b: map(lambda p: pair(fst(p) & snd(p), pair(fst(p) | snd(p), ~fst(p))), zip(a, b)))
BOOLS_NAMED = fun([array(N, boolean), array(N, boolean)],
                  lambda a, b: map(lambda p: or_(and_(fst(p), not_(snd(p))), and_(not_(fst(p)), snd(p))), zip(a, b)))


@FAST
@given(data=st.data())
def test_boolean_operations(data):
    n = data.draw(st.integers(1, 8))
    a = data.draw(hnp.arrays(np.bool_, n))
    b = data.draw(hnp.arrays(np.bool_, n))
    conj, (disj, neg_a) = run(BOOLS, a, b)
    np.testing.assert_array_equal(conj, a & b)
    np.testing.assert_array_equal(disj, a | b)
    np.testing.assert_array_equal(neg_a, ~a)
    out = run(BOOLS_NAMED, a, b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, a ^ b)


RELU = fun([array(N, f32)], lambda xs: map(lambda x: select(x > 0.0, x, 0.0), xs))
SELECT_PAIRS = fun([array(N, f32), array(N, i32)],
                   lambda a, b: map(lambda p: select(snd(p) > 0, p, pair(0.0, 0)), zip(a, b)))
SELECT_ROWS = fun([array(M, f32), array(N, f32)], lambda c, r: map(lambda x: select(x < 0.0, map(neg, r), r), c))


@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_select(n, rng):
    xs, ks = F(rng, n), I(rng, n, -3, 3)
    np.testing.assert_array_equal(run(RELU, xs), np.where(xs > 0, xs, np.float32(0)))
    sa, sb = run(SELECT_PAIRS, xs, ks)
    np.testing.assert_array_equal(sa, np.where(ks > 0, xs, np.float32(0)))
    np.testing.assert_array_equal(sb, np.where(ks > 0, ks, 0))
    r = F(rng, 3)
    out = run(SELECT_ROWS, xs, r)
    np.testing.assert_array_equal(out, np.where(xs[:, None] < 0, -r[None, :], r[None, :]))


CASTS = {
    ("f32", "i32"): fun([array(N, f32)], lambda xs: map(cast(i32), xs)),
    ("f32", "f64"): fun([array(N, f32)], lambda xs: map(cast(f64), xs)),
    ("i32", "f32"): fun([array(N, i32)], lambda xs: map(cast(f32), xs)),
    ("i32", "u32"): fun([array(N, i32)], lambda xs: map(cast(u32), xs)),
    ("bool", "i32"): fun([array(N, f32)], lambda xs: map(lambda x: cast(i32, x < 0.0), xs)),
    ("f32", "bool"): fun([array(N, f32)], lambda xs: map(cast(boolean), xs)),
}


@FAST
@given(n=st.integers(1, 6), rng=RNGS)
def test_cast_follows_c(n, rng):
    xs, ks = F(rng, n, -100, 100), I(rng, n, -100, 100)
    out = run(CASTS["f32", "i32"], xs)
    assert out.dtype == np.int32
    assert out.tolist() == [int(x) for x in xs.tolist()]  # truncation towards zero
    out = run(CASTS["f32", "f64"], xs)
    assert out.dtype == np.float64 and out.tolist() == xs.tolist()
    out = run(CASTS["i32", "f32"], ks)
    assert out.dtype == np.float32 and out.tolist() == ks.tolist()
    out = run(CASTS["i32", "u32"], ks)
    assert out.dtype == np.uint32 and out.tolist() == [k % 2**32 for k in ks.tolist()]
    out = run(CASTS["bool", "i32"], xs)
    assert out.dtype == np.int32 and out.tolist() == [int(x < 0) for x in xs.tolist()]
    out = run(CASTS["f32", "bool"], xs)
    assert out.dtype == np.bool_ and out.tolist() == [x != 0 for x in xs.tolist()]


HYPOT = user_fun("hypot", [("x", f32), ("y", f32)], f32, "return sqrt(x * x + y * y);",
                 numpy=lambda x, y: np.hypot(x, y))
CLAMP01 = user_fun("clamp01", [("x", f32)], f32, "return fmin(fmax(x, 0.0f), 1.0f);",
                   numpy=lambda x: np.clip(x, 0, 1))
ONE = user_fun("one", [("x", f32)], f32, "return 1.0f;", numpy=lambda x: 1.0)  # ignores its argument
USER_HYPOT = fun([array(N, f32), array(N, f32)], lambda a, b: map(lambda p: HYPOT(fst(p), snd(p)), zip(a, b)))
USER_NESTED = fun([array(M, array(N, f32))], lambda g: map(map(lambda x: CLAMP01(x) + ONE(x)), g))


@FAST
@given(m=small, n=small, rng=RNGS)
def test_user_fun_uses_its_numpy_meaning(m, n, rng):
    a, b = F(rng, n), F(rng, n)
    out = run(USER_HYPOT, a, b)
    assert out.dtype == np.float32
    close(out, np.hypot(a, b))
    g = F(rng, (m, n))
    np.testing.assert_array_equal(run(USER_NESTED, g), np.clip(g, 0, 1) + np.float32(1))


# ------------------------------------------------------------------ dtypes follow types

F32_PRECISION = fun([array(N, f32)], lambda xs: map(lambda x: (x + 100000000.0) - 100000000.0, xs))
F64_PRECISION = fun([array(N, f64)], lambda xs: map(lambda x: (x + 100000000.0) - 100000000.0, xs))
F64_LITERAL = fun([array(N, f64)], lambda xs: map(lambda x: x * 0.1, xs))
F64_TYPED_LITERAL = generate(3, lambda i: literal(0.1, f64))
I32_WRAP = fun([array(N, i32)], lambda xs: map(lambda x: (x * 2) / 4, xs))
U32_WRAP = fun([array(N, u32)], lambda xs: map(lambda x: (x - 1) / 2, xs))
INT_LITERAL_IN_F64 = fun([f64], lambda x: x / 3)


def test_f32_stays_f32_inside_the_computation():
    out = run(F32_PRECISION, np.ones(2, np.float32))
    assert out.dtype == np.float32
    assert out.tolist() == [0.0, 0.0]  # 1e8 + 1 rounds to 1e8 in float32
    out = run(F64_PRECISION, np.ones(2, np.float64))
    assert out.dtype == np.float64 and out.tolist() == [1.0, 1.0]


def test_float_literals_take_the_type_of_their_context():
    xs = np.array([1.0, 3.0], np.float64)
    out = run(F64_LITERAL, xs)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, xs * 0.1)  # not xs * float32(0.1)
    assert not np.array_equal(out, xs * np.float64(np.float32(0.1)))
    out = run(F64_TYPED_LITERAL)
    assert out.dtype == np.float64 and out.tolist() == [0.1] * 3
    out = run(INT_LITERAL_IN_F64, np.float64(1.0))
    assert isinstance(out, np.float64) and out == 1.0 / 3.0


def test_integers_wrap_at_their_width():
    out = run(I32_WRAP, np.array([2**30, 3], np.int32))
    assert out.dtype == np.int32
    assert out.tolist() == [-(2**29), 1]  # 2**30 * 2 wraps to -2**31 in i32
    out = run(U32_WRAP, np.array([0, 5], np.uint32))
    assert out.dtype == np.uint32 and out.tolist() == [(2**32 - 1) // 2, 2]


def test_untyped_interpret_infers_first():
    xs = np.arange(4, dtype=np.float32)
    out = interpret(SUM, xs)
    assert isinstance(out, np.float32) and out == 6.0


# ---------------------------------------------------------- bad input: InterpretError

ADD2 = fun([array(N, f32), array(N, f32)], lambda a, b: map(lambda p: fst(p) + snd(p), zip(a, b)))
GRID_ROW = fun([array(M, array(N, f32)), array(N, f32)], lambda g, r: map(lambda row: concat(row, r), g))
N8 = nat("N", multiple_of=8)
SPLIT8 = fun([array(N8, f32)], lambda xs: split(8, xs))
N_SMALL = nat("N", hi=10)
BOUNDED = fun([array(N_SMALL, f32)], lambda xs: map(neg, xs))
SCALAR_I32 = fun([i32], lambda k: k + 1)
SCALAR_U32 = fun([u32], lambda k: k + 1)
TUPLES = fun([array(N, tuple_of(f32, i32))], lambda ps: map(fst, ps))
VECTORS = fun([array(N, vec(f32, 4))], lambda vs: vs)
DOUBLE = fun([array(N * 2, f32)], lambda xs: xs)


def _interp_error(prog, *inputs):
    with pytest.raises(fl.InterpretError) as info:
        interpret(prog, *inputs)
    return str(info.value)


def test_wrong_dtype_names_the_input():
    x = np.ones(4, np.float32)
    msg = _interp_error(ADD2, x, x.astype(np.float64))
    assert "input b" in msg and "f32" in msg and "float64" in msg
    msg = _interp_error(TUPLES, (x, x))
    assert "input ps[1]" in msg and "i32" in msg
    assert "input vs" in _interp_error(VECTORS, np.ones((2, 4), np.float64))


def test_wrong_rank_names_the_input():
    x = np.ones(4, np.float32)
    msg = _interp_error(ADD2, np.ones((2, 2), np.float32), x)
    assert "input a" in msg and "1 dimension" in msg and "(2, 2)" in msg
    assert "input g" in _interp_error(GRID_ROW, x, x)
    assert "input k" in _interp_error(SCALAR_I32, np.ones(3, np.int32))


def test_inconsistent_sizes_name_both_inputs():
    msg = _interp_error(ADD2, np.ones(4, np.float32), np.ones(5, np.float32))
    assert "input b" in msg and "N = 4" in msg and "input a" in msg and "5" in msg
    msg = _interp_error(GRID_ROW, np.ones((2, 3), np.float32), np.ones(4, np.float32))
    assert "input r" in msg and "N = 3" in msg
    msg = _interp_error(TUPLES, (np.ones(3, np.float32), np.ones(4, np.int32)))
    assert "input ps[1]" in msg and "from input ps[0]" in msg
    msg = _interp_error(VECTORS, np.ones((2, 3), np.float32))
    assert "input vs" in msg and "size 4" in msg and "extent 3" in msg


def test_violated_size_facts_name_the_input():
    msg = _interp_error(SPLIT8, np.ones(12, np.float32))
    assert "input xs" in msg and "N = 12" in msg and "multiple of 8" in msg
    msg = _interp_error(BOUNDED, np.ones(12, np.float32))
    assert "input xs" in msg and "N = 12" in msg and "below 10" in msg
    msg = _interp_error(ADD2, np.ones(0, np.float32), np.ones(0, np.float32))
    assert "input a" in msg and "at least 1" in msg
    msg = _interp_error(DOUBLE, np.ones(3, np.float32))
    assert "input xs" in msg and "2 * N" in msg


def test_wrong_number_of_inputs():
    x = np.ones(4, np.float32)
    msg = _interp_error(ADD2, x, x, x)
    assert "takes 2 input(s) (a, b), given 3" in msg
    msg = _interp_error(ADD2, x)
    assert "input b missing" in msg
    msg = _interp_error(ADD2)
    assert "input a, b missing" in msg
    assert "takes 0 input(s)" in _interp_error(GEN_CONST, x)


def test_python_scalars_must_fit_the_type():
    assert run(SCALAR_I32, 41) == 42  # an int that fits is fine
    for bad in (2.5, True, 2**40):
        msg = _interp_error(SCALAR_I32, bad)
        assert "input k" in msg and "i32" in msg
    assert "input k" in _interp_error(SCALAR_U32, -1)


def test_malformed_tuple_inputs():
    x = np.ones(3, np.float32)
    assert "input ps: expected a tuple of 2 arrays" in _interp_error(TUPLES, x)
    assert "input ps: expected a tuple of 2 arrays" in _interp_error(TUPLES, (x, x, x))


def test_runtime_violations_name_the_subexpression():
    # only the interpreter can see these: the index function leaves the array
    prog = fun([array(N, f32)], lambda xs: gather(lambda i, n: i + 1, xs))
    with pytest.raises(fl.InterpretError) as info:
        interpret(prog, np.ones(3, np.float32))
    assert info.value.where == "gather (fun(i, n) => i + 1) xs"
    assert info.value.origin.startswith("test_interp.py:")
    prog = fun([array(N, f32)], lambda xs: scatter(lambda i, n: i // 2, xs))
    assert "not a permutation" in _interp_error(prog, np.ones(4, np.float32))
    broken = user_fun("broken", [("x", f32)], f32, "return x;", numpy=lambda x: undefined_name)  # noqa: F821
    msg = _interp_error(fun([array(N, f32)], lambda xs: map(broken, xs)), np.ones(2, np.float32))
    assert "user function broken raised NameError" in msg


_GARBAGE = st.one_of(
    st.none(), st.text(max_size=3), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
    st.lists(st.floats(-1, 1), max_size=3), st.lists(st.lists(st.integers(0, 3), max_size=3), max_size=3),
    hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32, np.uint32, np.bool_]),
               hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)),
    st.tuples(st.just(np.ones(3, np.float32)), st.just(np.ones(3, np.int32))),
)


@FAST
@given(inputs=st.lists(_GARBAGE, max_size=3))
def test_arbitrary_inputs_never_raise_raw_python_exceptions(inputs):
    for prog in (ADD2, GRID_ROW, TUPLES, SPLIT8, SCALAR_I32):
        try:
            interpret(prog, *inputs)
        except fl.InterpretError:
            pass


# ------------------------------------------------------------------ a warp's reduction


def _tree(k, f, z):
    """The tree's stages reduce_warp stands for: element i and i + l combined by a fold."""
    from functional.expr import NatLambda
    from functional.nat import Var

    var = Var("l", 1)
    stage = lambda ys: fl.map_local(fl.reduce_seq(f, z), fl.split(2, fl.reorder_stride(fl.Nat.atom(var), ys)))
    return lambda xs: fl.iterate(k, NatLambda(var, fl.lam(stage)), xs)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("op", ["add", "max", "skewed"])
def test_reduce_warp_is_the_trees_steps(k, op):
    """Its meaning is the tree's, step for step: equal bits even for an operator that is neither
    associative nor commutative, and inside a map (a batch axis)."""
    f, z = {"add": (add, 0.0), "max": (max, -1000.0), "skewed": (lambda a, b: a * 0.5 + b * 2.0, 0.25)}[op]
    n = 2 ** k
    xs = np.random.default_rng(k).standard_normal((3, n)).astype(np.float32)
    warp = fun([array(3, array(n, f32))], lambda g: map(lambda r: fl.reduce_warp(f, z, r), g))
    tree = fun([array(3, array(n, f32))], lambda g: map(_tree(k, f, z), g))
    got, want = run(warp, xs), run(tree, xs)
    assert got.shape == (3, 1)
    np.testing.assert_array_equal(got, want)


def test_reduce_warp_takes_a_power_of_two_up_to_a_warp():
    for n in (3, 64):
        prog = fun([array(n, f32)], lambda xs: fl.reduce_warp(add, 0.0, xs))
        with pytest.raises(fl.InterpretError, match="power of two"):
            run(prog, np.ones(n, np.float32))


def test_tf32_rounds_to_ten_mantissa_bits_ties_away_from_zero():
    x = np.array([1 + 2.0 ** -11, -(1 + 2.0 ** -11), 1 + 2.0 ** -12, np.inf], np.float32)
    got = run(fun([array(4, f32)], lambda xs: fl.map(fl.tf32, xs)), x)
    np.testing.assert_array_equal(got, np.array([1 + 2.0 ** -10, -(1 + 2.0 ** -10), 1.0, np.inf], np.float32))


def test_mma_sync_is_c_plus_the_tf32_product_on_fragments():
    rng = np.random.default_rng(7)
    from functional.primitives import tf32_round

    c, a, b = (rng.standard_normal(s).astype(np.float32) for s in [(16, 8), (16, 8), (8, 8)])
    tile = lambda r, k: array(r, array(k, f32))  # noqa: E731
    prog = fun([tile(16, 8), tile(16, 8), tile(8, 8)], lambda c_, a_, b_: fl.unfragment("c", fl.mma_sync(
        fl.fragment("c", c_), fl.fragment("a", a_), fl.fragment("b", b_))))
    want = c + tf32_round(a).astype(np.float64) @ tf32_round(b).astype(np.float64).T
    np.testing.assert_allclose(run(prog, c, a, b), want, rtol=0, atol=1e-5)


def test_zz_every_covered_primitive_actually_ran(request):
    """Runs last: when the whole module ran, every primitive's meaning was executed."""
    mine = [item for item in request.session.items if item.module is request.module]
    if mine[-1] is not request.node or len({item.originalname for item in mine}) < len(
            [n for n in dir(request.module) if n.startswith("test_")]):
        pytest.skip("only meaningful when the whole module runs, in order")
    missing = COVERED - COVERED_HERE - _EXECUTED  # COVERED_HERE run in test_builtins.py
    assert not missing, f"never executed: {sorted(missing)}"
