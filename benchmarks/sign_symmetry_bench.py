"""What imperative.sign_symmetry buys: a program's default lowering timed with the imperative passes as
they are and without share_sign_symmetric_calls, on the default device, in one run.

    python benchmarks/sign_symmetry_bench.py                 # Black-Scholes, 2^22 options
    python benchmarks/sign_symmetry_bench.py --n 16777216    # issue 13's size (on a GPU)

Both kernels are checked against the float64 reference (the suite's) before they are timed; the
library calls each kernel makes are counted in its source.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

import suite  # noqa: E402
from dpia.pipeline import PIPELINE, Options  # noqa: E402
from functional.derivation import derive  # noqa: E402
from functional.schedules import default_schedule  # noqa: E402
from imperative import passes  # noqa: E402


def kernels(program, device):
    """{label: built kernel} with and without the pass."""
    low, _ = derive(program, default_schedule(program))
    without = tuple(p for p in passes.PIPELINE if p is not passes.share_sign_symmetric_calls)
    return {label: PIPELINE.compile(low, Options(device=device, passes=chosen))
            for label, chosen in (("with sign_symmetry", None), ("without", without))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", default="black_scholes", help="a program of examples/suite.py")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    from codegen_opencl.runtime import choose_device

    device = choose_device()
    entry = suite.BY_NAME[args.program]
    inputs = entry.make_inputs(np.random.default_rng(0), n=args.n)
    want = entry.reference(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    print(f"{args.program}, n={args.n}, on {device.name.strip()}")
    times = {}
    for label, kernel in kernels(entry.program, device).items():
        got = kernel(*inputs)
        got = got if isinstance(got, tuple) else (got,)
        error = max(float(np.max(np.abs(g - w)) / max(1.0, float(np.max(np.abs(w))))) for g, w in zip(got, want))
        body = kernel.source[kernel.source.index("kernel void"):]
        calls = {f: len(re.findall(rf"\b\w*{f}\w*\(", body)) for f in ("erfc", "exp", "log", "sqrt")}
        times[label] = kernel.time(*inputs, repeat=args.repeat)
        print(f"  {label:20s} {times[label] * 1e3:9.4f} ms   error {error:.2e}   calls {calls}")
        if error > 1e-4:
            print(f"  {label}: WRONG (error {error:.2e})")
            return 1
    print(f"  without / with: {times['without'] / times['with sign_symmetry']:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
