"""Programs written with indices against the same programs written as data flow, on the
default device (PoCL unless $DPIA_DEVICE), in one run: each index-written program compiled by
the default lowering as it is now (its first phase, `indices`, rewrites it with
generate_as_map), by the default lowering without that phase (what it compiled before), and
the data-flow program; all checked against the interpreter's result on the same inputs, with
NumPy's float32 time as the reference; the interpreter's result of the data-flow program
(equal in meaning, tests/test_indexing.py) is the oracle.

    python benchmarks/index_forms.py [--only NAME ...] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dpia  # noqa: E402
import functional as fl  # noqa: E402
from dpia.programs import fix_sizes, random_inputs, relative_error, size_vars  # noqa: E402
from functional.default_lowering import phases  # noqa: E402
from functional.derivation import derive  # noqa: E402
from functional.schedules import program_body  # noqa: E402
from functional.strategies import seq  # noqa: E402

f32 = fl.f32
M, N, K = fl.nat("M"), fl.nat("N"), fl.nat("K")


def arr(*dims):
    t = f32
    for d in reversed(dims):
        t = fl.array(d, t)
    return t


def _dot(xs, ys):
    return fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys)))


def _before(i):
    return fl.max(i - 1, 0)


def _after(i, n):
    return fl.min(i + 1, fl.nat_value(n) - 1)


# name -> (written with indices, written as data flow, sizes, NumPy float32)
PROGRAMS = {
    "mm": (fl.fun([arr(M, K), arr(K, N)], lambda a, b: fl.generate(M, lambda i: fl.generate(N, lambda j: fl.reduce(
               fl.add, 0.0, fl.generate(K, lambda k: a[i][k] * b[k][j]))))),
           fl.fun([arr(M, K), arr(K, N)], lambda a, b: fl.map(
               lambda row: fl.map(lambda col: _dot(row, col), fl.transpose(b)), a)),
           dict(M=256, N=256, K=256), lambda a, b: a @ b),
    "gemv": (fl.fun([arr(M, N), arr(N)], lambda a, x: fl.generate(M, lambda i: fl.reduce(
                 fl.add, 0.0, fl.generate(N, lambda j: a[i][j] * x[j])))),
             fl.fun([arr(M, N), arr(N)], lambda a, x: fl.map(lambda row: _dot(row, x), a)),
             dict(M=2048, N=2048), lambda a, x: a @ x),
    "gemv_t": (fl.fun([arr(M, N), arr(M)], lambda a, x: fl.generate(N, lambda j: fl.reduce(
                   fl.add, 0.0, fl.generate(M, lambda i: a[i][j] * x[i])))),
               fl.fun([arr(M, N), arr(M)], lambda a, x: fl.map(lambda col: _dot(col, x), fl.transpose(a))),
               dict(M=2048, N=2048), lambda a, x: a.T @ x),
    "dot": (fl.fun([arr(N), arr(N)], lambda x, y: fl.reduce(fl.add, 0.0, fl.generate(N, lambda i: x[i] * y[i]))),
            fl.fun([arr(N), arr(N)], lambda x, y: _dot(x, y)),
            dict(N=1 << 22), lambda x, y: np.dot(x, y)),
    "jacobi1d": (fl.fun([arr(N)], lambda x: fl.generate(N, lambda i: (x[_before(i)] + x[i] + x[_after(i, N)]) * 0.25)),
                 fl.fun([arr(N)], lambda x: fl.map(lambda w: (w[0] + w[1] + w[2]) * 0.25,
                                                   fl.slide(3, 1, fl.pad_clamp(1, 1, x)))),
                 dict(N=1 << 22), lambda x: (np.concatenate([x[:1], x[:-1]]) + x + np.concatenate([x[1:], x[-1:]]))
                 * np.float32(0.25)),
    "jacobi2d": (fl.fun([arr(M, N)], lambda g: fl.generate(M, lambda i: fl.generate(N, lambda j: 0.2 * (
                     g[i][j] + g[_before(i)][j] + g[_after(i, M)][j] + g[i][_before(j)] + g[i][_after(j, N)])))),
                 fl.fun([arr(M, N)], lambda g: fl.map(lambda w: fl.map(
                     lambda v: 0.2 * (v[1][1] + v[0][1] + v[2][1] + v[1][0] + v[1][2]), w), fl.map(
                     fl.transpose, fl.slide(3, 1, fl.map(fl.slide(3, 1), fl.pad_clamp(1, 1, fl.map(
                         fl.pad_clamp(1, 1), g))))))),
                 dict(M=1024, N=1024), lambda g: np.float32(0.2) * sum(
                     np.pad(g, 1, mode="edge")[1 + di:1 + di + g.shape[0], 1 + dj:1 + dj + g.shape[1]]
                     for di, dj in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)))),
    "transpose": (fl.fun([arr(M, N)], lambda a: fl.generate(N, lambda j: fl.generate(M, lambda i: a[i][j]))),
                  fl.fun([arr(M, N)], lambda a: fl.transpose(a)),
                  dict(M=2048, N=2048), lambda a: np.ascontiguousarray(a.T)),
}


def without_indices_phase(program, sizes):
    """The default lowering as it was before its `indices` phase, compiled at the sizes."""
    at = fix_sizes(program, sizes)
    steps = [s for name, s in phases() if name not in ("indices", "check")]
    low, _ = derive(at, program_body(seq(*steps)))
    return dpia.compile(low, db=False)


def measure(name: str, repeat: int) -> dict:
    indexed, data_flow, sizes, numpy_f32 = PROGRAMS[name]
    sizes = {v.name: sizes[v.name] for v in size_vars(fl.infer(indexed))}
    args = random_inputs(fl.infer(indexed), sizes, seed=0)
    want = fl.interpret(data_flow, *args)  # the same meaning; the interpreter batches index reads at n^2 memory
    row = {"name": name, "sizes": " ".join(f"{k}={v}" for k, v in sizes.items())}
    for label, build in (("indexed", lambda: dpia.compile(indexed, db=False)),
                         ("indexed_before", lambda: without_indices_phase(indexed, sizes)),
                         ("data_flow", lambda: dpia.compile(data_flow, db=False))):
        kernel = build()
        err = relative_error(kernel(*args), want)
        row[label] = kernel.time(*args, repeat=repeat)
        row[label + "_ok"] = err <= 1e-4
    numpy_f32(*args)
    row["numpy"] = min(timeit.repeat(lambda: numpy_f32(*args), number=1, repeat=3))
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(PROGRAMS))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print("| program | sizes | indexed ms | before the phase ms | speed-up | data flow ms | numpy f32 ms | all agree |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name in args.only or PROGRAMS:
        r = measure(name, args.repeat)
        ok = r["indexed_ok"] and r["indexed_before_ok"] and r["data_flow_ok"]
        print(f"| {name} | {r['sizes']} | {r['indexed'] * 1e3:.3f} | {r['indexed_before'] * 1e3:.3f} | "
              f"{r['indexed_before'] / r['indexed']:.1f}x | {r['data_flow'] * 1e3:.3f} | {r['numpy'] * 1e3:.3f} | "
              f"{'yes' if ok else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
