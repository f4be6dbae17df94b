"""float32 NumPy equivalents of some suite entries whose oracle (examples/suite.py) computes in
float64, timed on the host: what the PoCL suite table's ratios should also be read against.

    python benchmarks/numpy_f32_refs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explore_targets import _median_s  # noqa: E402 -- the same timing helper as the other benchmarks


def main() -> int:
    rng = np.random.default_rng(0)
    n = 1 << 24
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    g = rng.standard_normal((2048, 2048), dtype=np.float32)
    rows = {
        "asum:n=16777216 (np.abs(x).sum())": lambda: np.abs(x).sum(),
        "dot:n=16777216 (np.dot(x, y))": lambda: np.dot(x, y),
        "mean_variance:n=16777216 (x.mean(), x.var())": lambda: (x.mean(), x.var()),
        "scal:n=16777216 (1.5 * x)": lambda: np.float32(1.5) * x,
        "jacobi2d_5:h=2048,w=2048 (slices of a zero-padded copy)": lambda: _jacobi(g),
    }
    print("| suite entry (float32 NumPy) | ms |\n| --- | --- |")
    for name, fn in rows.items():
        print(f"| {name} | {_median_s(fn, 7) * 1e3:.3f} |")
    return 0


def _jacobi(g):
    p = np.pad(g, 1)
    return np.float32(0.2) * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


if __name__ == "__main__":
    raise SystemExit(main())
