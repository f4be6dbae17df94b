"""What the CPU mm preset's family reaches on PoCL: `mm_rows_vectorized` (each work-item a block of
rows x cols outputs, float-vector accumulators of `width`) over a grid of block shapes and local
sizes, each checked against NumPy and timed against `a @ b` (OpenBLAS) in the same run.

    python benchmarks/mm_cpu_sweep.py [--n 1024] [--repeat 10]

It answers whether the exploration's CPU space can reach the issue's 0.5x NumPy, and which block
shapes and launch shapes matter; it is a measurement, not a search.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dpia  # noqa: E402
from dpia.explore.presets import Preset, derive_preset  # noqa: E402
from dpia.pipeline import Options, time as time_kernel  # noqa: E402
from examples.seed import mm  # noqa: E402


def numpy_time(a, b, repeat: int) -> float:
    a @ b
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    n = args.n
    sizes = {"M": n, "N": n, "K": n}
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    want = a @ b
    ref = numpy_time(a, b, args.repeat)
    print(f"numpy {ref * 1e3:.3f} ms ({2 * n ** 3 / ref / 1e9:.0f} GFLOP/s)", flush=True)
    rows_done = []
    for rows, cols, width in itertools.product((2, 4, 8), (8, 16, 32, 64), (4, 8, 16)):
        if cols % width or rows * cols // width > 32:
            continue
        preset = Preset("mm_rows_vectorized", {"rows": rows, "cols": cols, "width": width}, "sweep")
        try:
            low, _ = derive_preset(mm, sizes, preset)
        except Exception as exc:  # noqa: BLE001 -- a measurement: report and go on
            print(f"rows={rows} cols={cols} width={width}: no derivation ({exc})"[:200], flush=True)
            continue
        for local in (None, 1, 4, 16, 64):
            try:
                kernel = dpia.compile(low, name="mm", **({} if local is None else {"local_size": local}))
                got = kernel(a, b)
                err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                t = time_kernel(kernel, (a, b), Options(repeat=args.repeat))
            except Exception as exc:  # noqa: BLE001
                print(f"rows={rows} cols={cols} width={width} local={local}: {type(exc).__name__} {exc}"[:200],
                      flush=True)
                continue
            rows_done.append((t, rows, cols, width, local))
            print(f"rows={rows} cols={cols} width={width} local={local}: {t * 1e3:.3f} ms "
                  f"{ref / t:.3f}x numpy  err {err:.1e}", flush=True)
    rows_done.sort()
    print("best:", [(f"{t * 1e3:.3f} ms", f"{ref / t:.3f}x", r, c, w, lc) for t, r, c, w, lc in rows_done[:5]])


if __name__ == "__main__":
    main()
