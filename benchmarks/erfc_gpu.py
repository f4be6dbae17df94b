"""Black-Scholes' default lowering with the device library's erfc and with the printer's
branch-free one (codegen_opencl.opencl._branch_free_erfc), each for the CPU and GPU targets of
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

import numpy as np  # noqa: E402
import codegen_opencl.opencl as cg  # noqa: E402
import dpia  # noqa: E402
import lockstep_gpu  # noqa: E402
from dpia.explore import program_bytes  # noqa: E402
from explore_suite import gpu_references, target  # noqa: E402


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
    rows += [(label, t, None) for label, t in gpu_references("black_scholes", inputs, nbytes, 20)]
    lockstep_gpu.show(f"black_scholes:n={n}", nbytes, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
