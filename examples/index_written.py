"""Programs written with indices (generate, at) beside the same programs written as data flow
(map, zip, transpose, slide).  The default lowering's first phase, `indices`
(functional.rules.indexing.generate_as_map), reads the first as the second.

`PAIRS`: the index-written program becomes the data-flow one exactly (tests/test_indexing.py
checks that both prepare to one program and lower to one low-level program).
`SAME_MEANING`: both compute the same, but the rule gives another data flow (a 2D stencil
becomes per-row windows of rows, not the 2D windows of slide2d).  benchmarks/index_forms.py
times both kinds.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import functional as fl  # noqa: E402
from suite import M, N, K, arr, dot_body  # noqa: E402


def _before(i):
    return fl.max(i - 1, 0)


def _after(i, n):
    return fl.min(i + 1, fl.nat_value(n) - 1)


# name -> (written with indices, written as data flow)
PAIRS = {
    "matrix_product": (
        fl.fun([arr(M, K), arr(K, N)], lambda a, b: fl.generate(M, lambda i: fl.generate(N, lambda j: fl.reduce(
            fl.add, 0.0, fl.generate(K, lambda k: a[i][k] * b[k][j]))))),
        fl.fun([arr(M, K), arr(K, N)], lambda a, b: fl.map(
            lambda row: fl.map(lambda col: dot_body(row, col), fl.transpose(b)), a))),
    "matrix_vector_product": (
        fl.fun([arr(M, N), arr(N)], lambda a, x: fl.generate(M, lambda i: fl.reduce(
            fl.add, 0.0, fl.generate(N, lambda j: a[i][j] * x[j])))),
        fl.fun([arr(M, N), arr(N)], lambda a, x: fl.map(lambda row: dot_body(row, x), a))),
    "transposed_matrix_vector_product": (
        fl.fun([arr(M, N), arr(M)], lambda a, x: fl.generate(N, lambda j: fl.reduce(
            fl.add, 0.0, fl.generate(M, lambda i: a[i][j] * x[i])))),
        fl.fun([arr(M, N), arr(M)], lambda a, x: fl.map(lambda col: dot_body(col, x), fl.transpose(a)))),
    "transpose": (
        fl.fun([arr(M, N)], lambda a: fl.generate(N, lambda j: fl.generate(M, lambda i: a[i][j]))),
        fl.fun([arr(M, N)], lambda a: fl.transpose(a))),
    "dot": (
        fl.fun([arr(N), arr(N)], lambda x, y: fl.reduce(fl.add, 0.0, fl.generate(N, lambda i: x[i] * y[i]))),
        fl.fun([arr(N), arr(N)], lambda x, y: dot_body(x, y))),
    "clamped_3_point_stencil": (
        fl.fun([arr(N)], lambda x: fl.generate(N, lambda i: (x[_before(i)] + x[i] + x[_after(i, N)]) * 0.25)),
        fl.fun([arr(N)], lambda x: fl.map(lambda w: (w[0] + w[1] + w[2]) * 0.25, fl.slide(3, 1, fl.pad_clamp(1, 1, x))))),
    "valid_3_point_stencil": (
        fl.fun([arr(N)], lambda x: fl.generate(N - 2, lambda i: x[i] - x[i + 2] * 2.0 + x[i + 1])),
        fl.fun([arr(N)], lambda x: fl.map(lambda w: w[0] - w[2] * 2.0 + w[1], fl.slide(3, 1, x)))),
}

SAME_MEANING = {
    "clamped_5_point_stencil_2d": (
        fl.fun([arr(M, N)], lambda g: fl.generate(M, lambda i: fl.generate(N, lambda j: 0.2 * (
            g[i][j] + g[_before(i)][j] + g[_after(i, M)][j] + g[i][_before(j)] + g[i][_after(j, N)])))),
        fl.fun([arr(M, N)], lambda g: fl.map(lambda w: fl.map(
            lambda v: 0.2 * (v[1][1] + v[0][1] + v[2][1] + v[1][0] + v[1][2]), w), fl.map(
            fl.transpose, fl.slide(3, 1, fl.map(fl.slide(3, 1), fl.pad_clamp(1, 1, fl.map(
                fl.pad_clamp(1, 1), g)))))))),
}
