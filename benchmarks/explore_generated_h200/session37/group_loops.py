"""Session 37, call B: SGEMM points with and without the loop over work-groups (codegen_opencl.plan.
one_group_each), in one process on one GPU, timed alternately.  Call A's table had the preset at 3.70 ms
(4096^3), session 36's at 3.33 ms on another H100: is it the printer change?  With them, the 16 x 8 point
double-buffered (its counters: one group per SM waiting on its tile copies).

    python3 benchmarks/explore_generated_h200/session37/group_loops.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/

import codegen_opencl.opencl as printer
import kernel_counters
from codegen_opencl.plan import one_group_each

UNROLLED = "register-blocked 128x128 k8 8x8, k-steps unrolled (the preset's skeleton)"
WIDE = "register-blocked 256x128 k8 16x8, k-steps unrolled (the preset's skeleton)"
SPLIT_K = "split-k 8 chunks, register-blocked 128x64 k16 8x4"
WIDE_DOUBLE = "register-blocked 256x128 k8 16x8, k-steps unrolled, double-buffered"
ROWS = (("mm:m=4096,n=4096,k=4096", UNROLLED), ("mm:m=4096,n=4096,k=4096", WIDE_DOUBLE), ("mm:m=4096,n=4096,k=4096", WIDE),
        ("mm:m=8192,n=8192,k=8192", UNROLLED), ("mm:m=8192,n=64,k=8192", SPLIT_K))


def built(spec: str, label: str, loops: bool):
    printer.one_group_each = (lambda count, dim, loop_vars=frozenset(): False) if loops else one_group_each
    try:
        _, prob, tried = kernel_counters.build(spec, label, 0)
    finally:
        printer.one_group_each = one_group_each
    return tried.bound


def main() -> None:
    for spec, label in ROWS:
        try:
            kernels = {"one group each": built(spec, label, False), "loop over groups": built(spec, label, True)}
        except Exception as exc:  # noqa: BLE001 -- a row that does not build is a line of the output
            print(f"{spec} {label}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            continue
        times: dict[str, list[float]] = {name: [] for name in kernels}
        for _ in range(3):
            for name, bound in kernels.items():
                times[name].append(bound.time(repeat=20) * 1e3)
        text = "; ".join(f"{name} {min(ts):.3f} ms (runs {', '.join(f'{t:.3f}' for t in ts)})"
                         for name, ts in times.items())
        print(f"{spec} {label}: {text}", flush=True)


if __name__ == "__main__":
    main()
