"""Black-Scholes' default lowering with the device library's erfc and with the printer's
branch-free one (codegen_opencl.opencl._branch_free_erfc), and written with erf instead
(`cnd x = (1 + erf (x / sqrt 2)) / 2`: the device's erf), each for the CPU and GPU targets of
lockstep_gpu.py, checked against float64 NumPy and timed from profiling events, beside the device
copy and torch.compile (explore_suite.gpu_references, where torch and a GPU are there) in the same run:

    python benchmarks/erfc_gpu.py [--n 16777216]

The library's erfc is printed by switching the helper off for one derivation (`_library_erfc`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import numpy as np  # noqa: E402
import codegen_opencl.opencl as cg  # noqa: E402
import dpia  # noqa: E402
import lockstep_gpu  # noqa: E402
from dpia.explore import program_bytes  # noqa: E402
from explore_suite import gpu_references, target  # noqa: E402


def _black_scholes_erf():
    """The suite's Black-Scholes with its cumulative normal written with erf."""
    import math

    import functional as fl
    import suite

    def cnd(x):
        return 0.5 * (1.0 + fl.erf(x * (1.0 / math.sqrt(2.0))))

    def price(s, k, t):
        sqrt_t = fl.sqrt(t)
        d1 = (fl.log(s / k) + (suite.RATE + 0.5 * suite.VOLATILITY * suite.VOLATILITY) * t) / (suite.VOLATILITY * sqrt_t)
        d2 = d1 - suite.VOLATILITY * sqrt_t
        discounted = k * fl.exp(-suite.RATE * t)
        return fl.pair(s * cnd(d1) - discounted * cnd(d2), discounted * cnd(-d2) - s * cnd(-d1))

    n = fl.nat("N")
    return fl.fun([fl.array(n, fl.f32)] * 3, lambda s, k, t: fl.map(
        lambda p: price(fl.fst(p), fl.fst(fl.snd(p)), fl.snd(fl.snd(p))), fl.zip(s, fl.zip(k, t))))


@contextlib.contextmanager
def _library_erfc(on: bool):
    original = cg._float32s
    if on:
        cg._float32s = lambda t: False
    try:
        yield
    finally:
        cg._float32s = original


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=16777216)
    n = ap.parse_args(argv).n
    program, inputs, reference, _ = target("black_scholes", {"n": n}, np.random.default_rng(0))
    sizes = dpia.compile(program).sizes_of(inputs)
    want = reference(*inputs)
    nbytes = program_bytes(program, sizes)
    rows = []
    for label, library in (("library erfc", True), ("branch-free erfc", False)):
        with _library_erfc(library):
            rows += [(f"{lab}, {label}", t, err) for lab, t, err in lockstep_gpu.both_lowerings(
                program, sizes, inputs, want, 20)]
    rows += [(f"{lab}, written with erf", t, err) for lab, t, err in lockstep_gpu.both_lowerings(
        _black_scholes_erf(), sizes, inputs, want, 20)]
    rows += [(label, t, None) for label, t in gpu_references("black_scholes", inputs, nbytes, 20)]
    lockstep_gpu.show(f"black_scholes:n={n}", nbytes, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
