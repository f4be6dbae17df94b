"""The seed talk's high-level programs, each with the NumPy expression it must agree with.

    scal = λ a xs . map (λ x . x * a) xs
    asum = λ xs . reduce (+) 0 (map abs xs)
    dotProduct = λ xs ys . reduce (+) 0 (map (*) (zip xs ys))
    gemv = λ mat xs ys α β . map (+) (zip (map (λ row . scal α (dotProduct row xs)) mat) (scal β ys))
    mm = λ a b . map (λ rowA . map (λ colB . dotProduct rowA colB) (transpose b)) a
    total = reduce (+) 0
    stencil = map (reduce (+) 0) (slide 3 1 (pad_clamp 1 1 xs))

Run `python examples/seed.py` to build them, print their types and check the interpreter
against NumPy on random inputs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functional as fl  # noqa: E402

N, M, K = fl.nat("N"), fl.nat("M"), fl.nat("K")
vector = fl.array(N, fl.f32)
matrix = fl.array(M, fl.array(N, fl.f32))


def scal_body(a, xs):
    return fl.map(lambda x: x * a, xs)


def dot_body(xs, ys):
    return fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys)))


scal = fl.fun([fl.f32, vector], scal_body)
asum = fl.fun([vector], lambda xs: xs >> fl.map(fl.abs) >> fl.reduce(fl.add, 0.0))
dot = fl.fun([vector, vector], dot_body)
total = fl.fun([vector], lambda xs: fl.reduce(fl.add, 0.0, xs))
gemv = fl.fun(
    [matrix, vector, fl.array(M, fl.f32), fl.f32, fl.f32],
    lambda mat, xs, ys, alpha, beta: fl.map(
        lambda p: fl.fst(p) + fl.snd(p),
        fl.zip(fl.map(lambda row: alpha * dot_body(row, xs), mat), scal_body(beta, ys)),
    ),
)
mm = fl.fun(
    [fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
    lambda a, b: fl.map(lambda row_a: fl.map(lambda col_b: dot_body(row_a, col_b), fl.transpose(b)), a),
)
stencil = fl.fun([vector], lambda xs: fl.map(fl.reduce(fl.add, 0.0), fl.slide(3, 1, fl.pad_clamp(1, 1, xs))))


def _stencil_reference(x: np.ndarray) -> np.ndarray:
    padded = np.concatenate([x[:1], x, x[-1:]])
    return padded[:-2] + padded[1:-1] + padded[2:]


class Example(NamedTuple):
    name: str
    program: fl.Expr
    inputs: Callable[[np.random.Generator, int], tuple]
    reference: Callable[..., np.ndarray]


def _vec(rng, n):
    return rng.standard_normal(n).astype(np.float32)


EXAMPLES = [
    Example("scal", scal, lambda r, n: (np.float32(1.5), _vec(r, n)), lambda a, x: a * x),
    Example("asum", asum, lambda r, n: (_vec(r, n),), lambda x: np.abs(x).sum()),
    Example("dot", dot, lambda r, n: (_vec(r, n), _vec(r, n)), lambda x, y: np.dot(x, y)),
    Example("total", total, lambda r, n: (_vec(r, n),), lambda x: x.sum()),
    Example("gemv", gemv,
            lambda r, n: (r.standard_normal((n // 2, n)).astype(np.float32), _vec(r, n), _vec(r, n // 2),
                          np.float32(0.5), np.float32(2.0)),
            lambda mat, x, y, a, b: a * (mat @ x) + b * y),
    Example("mm", mm,
            lambda r, n: (r.standard_normal((n // 4, n // 2)).astype(np.float32),
                          r.standard_normal((n // 2, n // 8)).astype(np.float32)),
            lambda a, b: a @ b),
    Example("stencil", stencil, lambda r, n: (_vec(r, n),), _stencil_reference),
]


def check(example: Example, n: int = 256, seed: int = 0) -> float:
    """Largest relative difference between the interpreter and NumPy."""
    rng = np.random.default_rng(seed)
    inputs = example.inputs(rng, n)
    got = np.asarray(fl.interpret(example.program, *inputs), dtype=np.float64)
    want = np.asarray(example.reference(*inputs), dtype=np.float64)
    if got.shape != want.shape:
        raise AssertionError(f"{example.name}: shape {got.shape} != {want.shape}")
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))


def lowered_examples() -> dict:
    """The seed programs lowered by named strategies (functional.schedules), with sizes that
    let the strategies split: {name: (high-level program, strategy, inputs)}."""
    from functional import schedules as sch

    n = fl.nat("N", multiple_of=128)
    m = fl.nat("M", multiple_of=16)
    v = fl.array(n, fl.f32)
    rng = np.random.default_rng(1)
    x, y = _vec(rng, 1024), _vec(rng, 1024)
    mat = rng.standard_normal((32, 1024)).astype(np.float32)
    return {
        "scal": (fl.fun([fl.f32, v], scal_body), sch.scal_global(), (np.float32(1.5), x)),
        "asum": (fl.fun([v], lambda xs: xs >> fl.map(fl.abs) >> fl.reduce(fl.add, 0.0)), sch.asum(128, 32), (x,)),
        "dot": (fl.fun([v, v], dot_body), sch.dot(16), (x, y)),
        "total": (fl.fun([v], lambda xs: fl.reduce(fl.add, 0.0, xs)), sch.vec_sum(128, 32), (x,)),
        "gemv": (fl.fun([fl.array(m, fl.array(n, fl.f32)), v, fl.array(m, fl.f32), fl.f32, fl.f32], gemv_body),
                 sch.gemv_global(), (mat, x, _vec(rng, 32), np.float32(0.5), np.float32(2.0))),
    }


def gemv_body(mat, xs, ys, alpha, beta):
    return fl.map(lambda p: fl.fst(p) + fl.snd(p),
                  fl.zip(fl.map(lambda row: alpha * dot_body(row, xs), mat), scal_body(beta, ys)))


def run_on_device() -> int:
    """Derive, translate, compile and run the lowered programs on the default OpenCL device
    (PoCL from pip unless DPIA_DEVICE says otherwise); print the reduction's OpenCL."""
    import dpia
    from functional.derivation import derive

    failures = 0
    for name, (program, strategy, inputs) in lowered_examples().items():
        low, derivation = derive(program, strategy)
        kernel = dpia.compile(low, name=dpia.kernel_name_for(name))  # `dot` is an OpenCL built-in
        got, want = kernel(*inputs), fl.interpret(program, *inputs)
        err = float(np.max(np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64)))
                    / max(1.0, float(np.max(np.abs(np.asarray(want, np.float64))))))
        ok = err < 1e-4
        failures += not ok
        print(f"{name:8s} {'ok ' if ok else 'BAD'} on {kernel.device.name}: {len(derivation.steps)} rewrite steps, "
              f"{len(kernel.phases)} kernel(s), rel.err {err:.1e}")
        if name == "total":
            print(f"         {low}")
            print(kernel.source)
    return failures


def main() -> int:
    failures = 0
    print("== the seed's programs: types, and the interpreter against NumPy")
    for ex in EXAMPLES:
        typed = fl.infer(ex.program)
        err = check(ex)
        ok = err < 1e-4
        failures += not ok
        print(f"{ex.name:8s} {'ok ' if ok else 'BAD'} rel.err {err:.1e}  : {typed.type}")
        print(f"         {ex.program}")
    print("\n== lowered by strategies, compiled, run on the OpenCL device, checked")
    failures += run_on_device()
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
