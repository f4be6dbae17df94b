"""Programs written other ways than the suite's (examples/suite.py) and common kernels the
suite does not have, each with its NumPy reference (the oracle, in float64 where it sums), a
float32 NumPy equivalent (what benchmarks time), an input maker and sizes.  The compiler must
give every one a correct kernel, and a fast one however it is written: a fold instead of a
reduce of a map, max from 0 instead of from -inf, a product of rows instead of dot products,
a stencil of shifted copies, a reversal by indices.

    python examples/formulations.py            # the interpreter against the references
    dpia run examples/formulations.py:amax --size N=2^24       # one of them, compiled and checked
tests/test_formulations.py compiles each at small sizes; benchmarks/formulations.py times the
default lowering (and, with --explore, the explored best) against the float32 NumPy equivalents.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import functional as fl  # noqa: E402
from suite import H, K, M, N, W, arr, total  # noqa: E402  -- the suite's sizes and helpers
from suite import dot_body as dot  # noqa: E402

f32, i32 = fl.f32, fl.i32
B = fl.nat("B")


def vadd(a, b):
    return fl.map(lambda p: fl.fst(p) + fl.snd(p), fl.zip(a, b))


class Formulation(NamedTuple):
    name: str
    program: fl.Expr
    inputs: Callable[[np.random.Generator, dict], tuple]
    reference: Callable[..., object]  # the oracle (float64 where it accumulates)
    numpy: Callable[..., object]  # the float32 NumPy equivalent a user would write
    small: dict
    bench: dict
    tolerance: float = 1e-4
    note: str = ""


def _f(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def _f64(x):
    return x.astype(np.float64)


def _pad_edge(g):
    return np.pad(g, 1, mode="edge")


def _jacobi5(p):
    return 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


def _softmax(a):
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _layernorm(a):
    return (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5)


def _bins(x):
    return np.floor(np.clip(x, 0.0, 0.999) * 8.0).astype(np.int64)


nv = fl.nat_value

FORMULATIONS: list[Formulation] = [
    # ------------------------------------------------------------------ reductions
    Formulation("asum_fold", fl.fun([arr(N)], lambda xs: fl.reduce(lambda acc, x: acc + fl.abs(x), 0.0, xs)),
                lambda r, s: (_f(r, s["N"]),), lambda x: np.abs(_f64(x)).sum(), lambda x: np.abs(x).sum(),
                dict(N=1000), dict(N=1 << 24), note="a fold whose step adds |x|"),
    Formulation("amax", fl.fun([arr(N)], lambda xs: fl.reduce(fl.max, 0.0, fl.map(fl.abs, xs))),
                lambda r, s: (_f(r, s["N"]),), lambda x: np.abs(x).max(), lambda x: np.abs(x).max(),
                dict(N=1000), dict(N=1 << 24), note="max |x| from 0, a bare primitive mapped"),
    Formulation("amax_fold", fl.fun([arr(N)], lambda xs: fl.reduce(lambda acc, x: fl.max(fl.abs(x), acc), 0.0, xs)),
                lambda r, s: (_f(r, s["N"]),), lambda x: np.abs(x).max(), lambda x: np.abs(x).max(),
                dict(N=1000), dict(N=1 << 24), note="max |x| as a fold, the accumulator second"),
    Formulation("norm2", fl.fun([arr(N)], lambda x: fl.sqrt(total(fl.map(lambda v: v * v, x)))),
                lambda r, s: (_f(r, s["N"]),), lambda x: np.sqrt((_f64(x) ** 2).sum()),
                lambda x: np.sqrt(np.dot(x, x)), dict(N=1000), dict(N=1 << 24)),
    Formulation("dot_swapped", fl.fun([arr(N), arr(N)], lambda x, y: fl.reduce(
        fl.add, 0.0, fl.map(lambda p: fl.mul(fl.fst(p), fl.snd(p)), fl.zip(y, x)))),
                lambda r, s: (_f(r, s["N"]), _f(r, s["N"])), lambda x, y: np.dot(_f64(x), y), np.dot,
                dict(N=1000), dict(N=1 << 24), note="zip in the other order, mul as a primitive"),
    Formulation("sum_of_chunks", fl.fun([arr(N * 64)], lambda x: total(fl.map(total, fl.split(64, x)))),
                lambda r, s: (_f(r, s["N"] * 64),), lambda x: _f64(x).sum(), np.sum,
                dict(N=17), dict(N=1 << 18), note="the user splits the sum"),
    Formulation("tree_sum_iterate", fl.fun([arr(N * 16)], lambda x: total(fl.iterate(
        2, lambda ys: fl.map(total, fl.split(2, ys)), x))),
                lambda r, s: (_f(r, 16 * s["N"]),), lambda x: _f64(x).sum(), np.sum,
                dict(N=17), dict(N=1 << 20), note="pairwise sums by iterate, then a sum"),
    Formulation("argmax", fl.fun([arr(N)], lambda x: fl.snd(fl.reduce(
        lambda a, b: fl.select(fl.fst(a) >= fl.fst(b), a, b),
        fl.pair(fl.literal(-math.inf, f32), fl.literal(0, i32)), fl.zip(x, fl.generate(N, lambda i: i))))),
                lambda r, s: (r.permutation(s["N"]).astype(np.float32),), lambda x: np.int32(np.argmax(x)),
                np.argmax, dict(N=1000), dict(N=1 << 24), tolerance=0.0),
    Formulation("weighted_mean", fl.fun([arr(N), arr(N)], lambda x, w: fl.let(total(w), lambda sw: dot(x, w) / sw)),
                lambda r, s: (_f(r, s["N"]), np.abs(_f(r, s["N"])) + 1), lambda x, w: np.dot(_f64(x), w) / _f64(w).sum(),
                lambda x, w: np.dot(x, w) / w.sum(), dict(N=1000), dict(N=1 << 24)),
    Formulation("concat_sum", fl.fun([arr(N), arr(M)], lambda x, y: total(fl.concat(x, y))),
                lambda r, s: (_f(r, s["N"]), _f(r, s["M"])), lambda x, y: _f64(x).sum() + _f64(y).sum(),
                lambda x, y: x.sum() + y.sum(), dict(N=1000, M=37), dict(N=1 << 24, M=1 << 20)),
    Formulation("histogram_bins", fl.fun([arr(N)], lambda x: fl.generate(8, lambda b: total(fl.map(
        lambda v: fl.select(fl.eq(fl.cast(i32, fl.floor(fl.clamp(v, 0.0, 0.999) * 8.0)), b),
                            fl.literal(1.0, f32), fl.literal(0.0, f32)), x)))),
                lambda r, s: (r.random(s["N"]).astype(np.float32),),
                lambda x: np.bincount(_bins(x), minlength=8).astype(np.float64),
                lambda x: np.bincount(_bins(x), minlength=8), dict(N=1000), dict(N=1 << 22)),
    # ------------------------------------------------------------ element-wise, stencils
    Formulation("saxpy_indexed", fl.fun([f32, arr(N), arr(N)], lambda al, x, y: fl.generate(N, lambda i: al * x[i] + y[i])),
                lambda r, s: (np.float32(2.5), _f(r, s["N"]), _f(r, s["N"])), lambda a, x, y: a * _f64(x) + y,
                lambda a, x, y: a * x + y, dict(N=1000), dict(N=1 << 24)),
    Formulation("reverse_add", fl.fun([arr(N), arr(N)], lambda x, y: vadd(x, fl.generate(N, lambda i: y[nv(N) - 1 - i]))),
                lambda r, s: (_f(r, s["N"]), _f(r, s["N"])), lambda x, y: _f64(x) + y[::-1],
                lambda x, y: x + y[::-1], dict(N=1000), dict(N=1 << 24), note="a reversal by indices"),
    Formulation("stencil_shifted", fl.fun([arr(N)], lambda x: fl.map(
        lambda t: fl.fst(t) + fl.fst(fl.snd(t)) + fl.snd(fl.snd(t)),
        fl.zip(fl.take(N - 2, x), fl.zip(fl.take(N - 2, fl.drop(1, x)), fl.drop(2, x))))),
                lambda r, s: (_f(r, s["N"]),), lambda x: _f64(x[:-2]) + x[1:-1] + x[2:],
                lambda x: x[:-2] + x[1:-1] + x[2:], dict(N=1000), dict(N=1 << 24), note="shifted copies zipped"),
    Formulation("conv1d_weights", fl.fun([arr(N), arr(K)], lambda x, w: fl.map(lambda win: dot(win, w), fl.slide(K, 1, x))),
                lambda r, s: (_f(r, s["N"]), _f(r, s["K"])), lambda x, w: np.correlate(_f64(x), w, "valid"),
                lambda x, w: np.correlate(x, w, "valid"), dict(N=1000, K=5), dict(N=1 << 22, K=9)),
    Formulation("maxpool2x2", fl.fun([arr(H * 2, W * 2)], lambda img: fl.map(lambda rows: fl.map(
        lambda blk: fl.reduce(fl.max, fl.literal(-math.inf, f32), fl.join(blk)),
        fl.transpose(fl.map(fl.split(2), rows))), fl.split(2, img))),
                lambda r, s: (_f(r, 2 * s["H"], 2 * s["W"]),),
                lambda a: a.reshape(a.shape[0] // 2, 2, a.shape[1] // 2, 2).max((1, 3)),
                lambda a: a.reshape(a.shape[0] // 2, 2, a.shape[1] // 2, 2).max((1, 3)),
                dict(H=11, W=7), dict(H=2048, W=2048)),
    Formulation("jacobi2d_indexed", fl.fun([arr(H, W)], lambda g: fl.generate(H, lambda i: fl.generate(W, lambda j: 0.2 * (
        g[i][j] + g[fl.max(i - 1, 0)][j] + g[fl.min(i + 1, nv(H) - 1)][j] + g[i][fl.max(j - 1, 0)]
        + g[i][fl.min(j + 1, nv(W) - 1)])))),
                lambda r, s: (_f(r, s["H"], s["W"]),), lambda g: _jacobi5(_pad_edge(_f64(g))),
                lambda g: _jacobi5(_pad_edge(g)), dict(H=11, W=7), dict(H=4096, W=4096)),
    Formulation("row_scale", fl.fun([arr(M, N), arr(M)], lambda a, d: fl.map(
        lambda p: fl.map(lambda v: v * fl.snd(p), fl.fst(p)), fl.zip(a, d))),
                lambda r, s: (_f(r, s["M"], s["N"]), _f(r, s["M"])), lambda a, d: _f64(a) * d[:, None],
                lambda a, d: a * d[:, None], dict(M=13, N=37), dict(M=4096, N=4096)),
    Formulation("a_plus_a_transposed", fl.fun([arr(N, N)], lambda a: fl.map(
        lambda p: vadd(fl.fst(p), fl.snd(p)), fl.zip(a, fl.transpose(a)))),
                lambda r, s: (_f(r, s["N"], s["N"]),), lambda a: _f64(a) + a.T, lambda a: a + a.T,
                dict(N=37), dict(N=4096)),
    Formulation("outer", fl.fun([arr(M), arr(N)], lambda x, y: fl.map(lambda a: fl.map(lambda b: a * b, y), x)),
                lambda r, s: (_f(r, s["M"]), _f(r, s["N"])), lambda x, y: np.outer(_f64(x), y), np.outer,
                dict(M=13, N=37), dict(M=4096, N=4096)),
    # ------------------------------------------------------------------ rows, products
    Formulation("softmax_rows", fl.fun([arr(M, N)], lambda a: fl.map(lambda row: fl.let(
        fl.reduce(fl.max, fl.literal(-math.inf, f32), row), lambda mx: fl.let(
            fl.map(lambda x: fl.exp(x - mx), row), lambda e: fl.let(total(e), lambda s: fl.map(lambda v: v / s, e)))), a)),
                lambda r, s: (_f(r, s["M"], s["N"]),), lambda a: _softmax(_f64(a)), _softmax,
                dict(M=13, N=37), dict(M=4096, N=1024)),
    Formulation("layernorm_rows", fl.fun([arr(M, N)], lambda a: fl.map(lambda row: fl.let(
        total(row) / N, lambda mu: fl.let(total(fl.map(lambda x: (x - mu) * (x - mu), row)) / N,
                                          lambda var: fl.map(lambda x: (x - mu) * fl.rsqrt(var + 1e-5), row))), a)),
                lambda r, s: (_f(r, s["M"], s["N"]),), lambda a: _layernorm(_f64(a)), _layernorm,
                dict(M=13, N=37), dict(M=4096, N=1024), tolerance=1e-3),
    Formulation("column_sums_fold", fl.fun([arr(M, N)], lambda a: fl.reduce(
        lambda x, y: vadd(x, y), fl.generate(N, lambda j: 0.0), a)),
                lambda r, s: (_f(r, s["M"], s["N"]),), lambda a: _f64(a).sum(0), lambda a: a.sum(0),
                dict(M=13, N=37), dict(M=4096, N=4096), note="rows added as vectors"),
    Formulation("gemv_zip_swapped", fl.fun([arr(M, N), arr(N)], lambda a, x: fl.map(
        lambda row: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(x, row))), a)),
                lambda r, s: (_f(r, s["M"], s["N"]), _f(r, s["N"])), lambda a, x: _f64(a) @ x, lambda a, x: a @ x,
                dict(M=13, N=37), dict(M=4096, N=4096)),
    Formulation("mm_transposed_b", fl.fun([arr(M, K), arr(N, K)], lambda a, b: fl.map(
        lambda ra: fl.map(lambda rb: dot(ra, rb), b), a)),
                lambda r, s: (_f(r, s["M"], s["K"]), _f(r, s["N"], s["K"])), lambda a, b: _f64(a) @ b.T,
                lambda a, b: a @ b.T, dict(M=13, N=11, K=37), dict(M=1024, N=1024, K=1024)),
    Formulation("mm_rows", fl.fun([arr(M, K), arr(K, N)], lambda a, b: fl.map(
        lambda ra: fl.reduce(lambda x, y: vadd(x, y), fl.generate(N, lambda j: 0.0),
                             fl.map(lambda p: fl.map(lambda bkj: fl.fst(p) * bkj, fl.snd(p)), fl.zip(ra, b))), a)),
                lambda r, s: (_f(r, s["M"], s["K"]), _f(r, s["K"], s["N"])), lambda a, b: _f64(a) @ b,
                lambda a, b: a @ b, dict(M=13, N=11, K=37), dict(M=512, N=512, K=512),
                note="each row of C as a sum of B's rows scaled"),
    Formulation("batched_mm", fl.fun([arr(B, M, K), arr(B, K, N)], lambda a, b: fl.map(
        lambda p: fl.map(lambda ra: fl.map(lambda cb: dot(ra, cb), fl.transpose(fl.snd(p))), fl.fst(p)), fl.zip(a, b))),
                lambda r, s: (_f(r, s["B"], s["M"], s["K"]), _f(r, s["B"], s["K"], s["N"])),
                lambda a, b: _f64(a) @ b, np.matmul, dict(B=3, M=5, N=7, K=9), dict(B=8, M=256, N=256, K=256)),
    Formulation("batched_mm_shared_b", fl.fun([arr(B, M, K), arr(K, N)], lambda a, w: fl.map(
        lambda x: fl.map(lambda ra: fl.map(lambda cw: dot(ra, cw), fl.transpose(w)), x), a)),
                lambda r, s: (_f(r, s["B"], s["M"], s["K"]), _f(r, s["K"], s["N"])),
                lambda a, w: _f64(a) @ w, np.matmul, dict(B=3, M=5, N=7, K=9), dict(B=8, M=256, N=256, K=256),
                note="a batch of products with one right-hand matrix (a layer's weights)"),
    Formulation("distance_matrix", fl.fun([arr(M, K), arr(N, K)], lambda p, q: fl.map(lambda a: fl.map(
        lambda b: fl.sqrt(total(fl.map(lambda t: (fl.fst(t) - fl.snd(t)) * (fl.fst(t) - fl.snd(t)), fl.zip(a, b)))), q), p)),
                lambda r, s: (_f(r, s["M"], s["K"]), _f(r, s["N"], s["K"])),
                lambda p, q: np.sqrt(((_f64(p)[:, None, :] - q[None, :, :]) ** 2).sum(-1)),
                lambda p, q: np.sqrt(np.maximum((p * p).sum(1)[:, None] + (q * q).sum(1)[None, :] - 2 * p @ q.T, 0)),
                dict(M=13, N=11, K=5), dict(M=2048, N=2048, K=16)),
]

BY_NAME = {f.name: f for f in FORMULATIONS}
# each program by its name too: `dpia run examples/formulations.py:amax --size N=2^24`
globals().update({formulation.name: formulation.program for formulation in FORMULATIONS})


def inputs(f: Formulation, sizes: dict, seed: int = 0) -> tuple:
    return f.inputs(np.random.default_rng(seed), sizes)


def main() -> int:
    from suite import check_in_interpreter

    return check_in_interpreter(FORMULATIONS, inputs, width=22)


if __name__ == "__main__":
    raise SystemExit(main())
