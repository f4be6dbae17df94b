"""mm on a CPU (PoCL) with and without B's panels packed (rule transposed_panels, the CPU preset's
last step), at the driver's launch and at fixed local shapes, against NumPy (OpenBLAS) in the same
run.

    python benchmarks/mm_cpu_packing.py [--size 1024] [--repeat 7]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import attrs
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))


# the driver's, those of dpia.explore.launch's space (x >= y) and the transposed (1, 8) a hand sweep found
SHAPES = (None, (64, 1), (32, 2), (32, 4), (8, 8), (16, 8), (16, 16), (1, 8))


def main() -> None:
    import dpia
    import functional as fl
    import seed
    from dpia.explore.presets import PRESETS, derive_preset
    from dpia.explore.space import Skeleton, parse_steps
    from dpia.programs import at_sizes

    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    n = args.size
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    times = []
    for _ in range(args.repeat + 3):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    numpy_s = float(np.median(times[3:]))
    print(f"mm {n}^3  numpy (OpenBLAS) {numpy_s * 1e3:8.2f} ms")
    sizes = {"M": n, "N": n, "K": n}
    program = fl.infer(seed.mm)
    for preset in (p for p in PRESETS["CPU"] if p.strategy_name == "mm_rows_vectorized"):
        steps = parse_steps(preset.skeleton)
        unpacked = attrs.evolve(preset, skeleton=Skeleton(tuple(s for s in steps if s.move != "transposed_panels")).name)
        for label, variant in (("unpacked", unpacked), ("packed", preset)):
            try:
                low = at_sizes(derive_preset(program, sizes, variant)[0], sizes)  # as dpia.compile runs a preset
            except Exception as exc:  # noqa: BLE001 -- a preset that does not fit these sizes
                print(f"  {preset} {label}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            for shape in SHAPES:
                kernel = dpia.compile(low, local_shape=shape) if shape else dpia.compile(low)
                err = float(np.abs(kernel(a, b) - a @ b).max())
                t = kernel.time(a, b, repeat=args.repeat)
                print(f"  {str(preset):48s} {label:9s} local {str(shape or 'driver'):8s} {t * 1e3:8.2f} ms  "
                      f"{numpy_s / t:5.2f}x numpy  err {err:.1e}", flush=True)


    kernel = dpia.compile(program, db=False)  # what dpia run uses without a tuning database: the preset
    err = float(np.abs(kernel(a, b) - a @ b).max())
    t = kernel.time(a, b, repeat=args.repeat)
    print(f"  dpia.compile(mm) ({kernel.variant.kind}, launch {kernel.variant.launch or 'the driver'})"
          f"{'':12s} {t * 1e3:8.2f} ms  {numpy_s / t:5.2f}x numpy  err {err:.1e}")


if __name__ == "__main__":
    main()
