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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from index_written import PAIRS, SAME_MEANING  # noqa: E402


def _jacobi2d(g):
    return np.float32(0.2) * sum(np.pad(g, 1, mode="edge")[1 + di:1 + di + g.shape[0], 1 + dj:1 + dj + g.shape[1]]
                                 for di, dj in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)))


def _jacobi1d(x):
    return (np.concatenate([x[:1], x[:-1]]) + x + np.concatenate([x[1:], x[-1:]])) * np.float32(0.25)


# name -> (sizes, NumPy float32); the programs: examples/index_written.py
TIMED = {
    "matrix_product": (dict(M=256, N=256, K=256), lambda a, b: a @ b),
    "matrix_vector_product": (dict(M=2048, N=2048), lambda a, x: a @ x),
    "transposed_matrix_vector_product": (dict(M=2048, N=2048), lambda a, x: a.T @ x),
    "dot": (dict(N=1 << 22), lambda x, y: np.dot(x, y)),
    "clamped_3_point_stencil": (dict(N=1 << 22), _jacobi1d),
    "clamped_5_point_stencil_2d": (dict(M=1024, N=1024), _jacobi2d),
    "transpose": (dict(M=2048, N=2048), lambda a: np.ascontiguousarray(a.T)),
}
PROGRAMS = {**PAIRS, **SAME_MEANING}


def without_indices_phase(program, sizes):
    """The default lowering as it was before its `indices` phase, compiled at the sizes."""
    at = fix_sizes(program, sizes)
    steps = [s for name, s in phases() if name not in ("indices", "check")]
    low, _ = derive(at, program_body(seq(*steps)))
    return dpia.compile(low, db=False)


def measure(name: str, repeat: int) -> dict:
    (indexed, data_flow), (sizes, numpy_f32) = PROGRAMS[name], TIMED[name]
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
    parser.add_argument("--only", nargs="+", choices=sorted(TIMED))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print("| program | sizes | indexed ms | before the phase ms | speed-up | data flow ms | numpy f32 ms | all agree |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name in args.only or TIMED:
        r = measure(name, args.repeat)
        ok = r["indexed_ok"] and r["indexed_before_ok"] and r["data_flow_ok"]
        print(f"| {name} | {r['sizes']} | {r['indexed'] * 1e3:.3f} | {r['indexed_before'] * 1e3:.3f} | "
              f"{r['indexed_before'] / r['indexed']:.1f}x | {r['data_flow'] * 1e3:.3f} | {r['numpy'] * 1e3:.3f} | "
              f"{'yes' if ok else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
