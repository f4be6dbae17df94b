"""Split-k of the matrix product's nest (rule nest_reduce_stages, move split_k_nest) with the space's
register-blocked tiles inside each chunk's product, against the same tiles without split-k (one
chunk), the GPU preset and cuBLAS (TF32 off) through torch, in the same run.

    source benchmarks/h200_env.sh && python3 benchmarks/split_k_gpu.py [--sizes 8192x64x8192,...]

The kernels are points of the skeleton SPLIT_TILES (the tile scheme dpia.explore.mapping.tile_schemes
makes of `split_k_nest; tile_2d; tile_reduction; register_blocking_2d`: the chunks over work-group
dimension 2, the tiles over dimensions 1 / 0, each item's block in registers) and of its
double-buffered twin; each is checked against the float64 product on sampled rows.  Values per
line: chunk (s0), tile rows x columns x k (s1, s2, s3), block (s4 x s5).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# the chunks' products as register-blocked tiles in the hierarchy, the space's first layout (plain copies)
SPLIT_TILES = (
    "split_k_nest(n=s0)@root; tile_2d(n=s1, m=s2)@0.1.0.1.0; tile_reduction(k=s3)@0.1.0.1.0.1.0.1.0.1.1.0.1.0; "
    "register_blocking_2d(l1=s4, l2=s5)@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.0.1.0; tile_views()@0.1.0.1.0.1.0.1.0.1.1.0.1.0; "
    "copied_sequential_reduction()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.0.1.0.1.0.1.0.1.1.0.1.0; "
    "copied_sequential_reduction()@0.1.0.1.0.1.0.1.0.1.1.0.1.0; "
    "untile_views()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.0.0.1.0.0.1.0.1.1; untile_views()@0.1.0.1.0; "
    "blocked_accumulator()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1; lower_map_workgroup(d=2)@0.1; "
    "lower_map_workgroup(d=1)@0.1.0.1.0.1; lower_map_workgroup(d=0)@0.1.0.1.0.1.0.1.0.1.1; "
    "lower_map_local(d=1)@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.0.1; "
    "lower_map_local(d=0)@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.0.1.0.1.0; "
    "lower_map_local(d=1)@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.1; "
    "lower_map_local(d=0)@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.1.0.1.0; "
    "lower_map_local(d=1)@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0; "
    "lower_map_local(d=0)@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0; "
    "lower_map_seq_unroll()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.0.1.0.1; "
    "lower_map_seq_unroll()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.0.1.1; "
    "lower_map_seq_unroll()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.1.0; "
    "lower_map_seq_unroll()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.1.0.0.1.0; "
    "store_copies_local()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0; "
    "store_copies_private()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0; "
    "accumulator_registers()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0; "
    "accumulator_among_items()@0.1.0.1.0.1.0.1.0.1.1.0.1.0.1.1.1")
DOUBLE_BUFFERED = SPLIT_TILES + "; double_buffer()@root"

TILES = ((128, 64, 16, 8, 4), (64, 64, 16, 4, 4), (64, 64, 8, 8, 8), (128, 64, 8, 8, 8))  # s1, s2, s3, s4, s5
CHUNKS = (None, 2048, 1024, 512, 256)  # s0; None: one chunk (K)


def points(m: int, n: int, k: int):
    """(label, skeleton, values) for each tile shape, chunk and buffering that fits the sizes."""
    for rows, cols, kt, l1, l2 in TILES:
        if m % rows or n % cols:
            continue
        for chunk in dict.fromkeys(c or k for c in CHUNKS):  # distinct, in order
            if k % chunk or chunk % kt:
                continue
            values = {"s0": chunk, "s1": rows, "s2": cols, "s3": kt, "s4": l1, "s5": l2}
            for name, skeleton in (("", SPLIT_TILES), (", double_buffer", DOUBLE_BUFFERED)):
                yield f"chunk {chunk:5d} ({k // chunk:2d}) {rows}x{cols}x{kt} {l1}x{l2}{name}", skeleton, values


def main() -> None:
    from codegen_opencl.runtime import choose_device, describe
    from double_buffer_gpu import PRESET, mm_program
    from tf32_gemm_gpu import compiled_time, cublas_times, cuda_torch, error, operands

    import functional as fl
    from dpia.explore.space import DeviceLimits, Point, Skeleton, Space, parse_steps
    from examples import seed
    from functional import schedules as sch
    from functional.derivation import derive

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="8192x64x8192")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    dev = choose_device()
    limits = DeviceLimits.of(dev)
    print("device:", describe(dev), flush=True)
    rng = np.random.default_rng(0)
    torch = cuda_torch()
    for spec in args.sizes.split(","):
        m, n, k, a, b, rows, flops = operands(spec, rng)
        ref = cublas_times(torch, a, b, rows, args.repeat, spec).get(False) if torch else None
        program = fl.infer(seed.mm)  # its sizes variables, as the space has them
        candidates = []
        if m % PRESET["n"] == 0 and n % PRESET["m"] == 0 and k % PRESET["k"] == 0:
            candidates.append(("GPU preset (no split-k)",
                               lambda: derive(mm_program(m, n, k, False), sch.mm_register_blocked(**PRESET))[0]))
        spaces = {}
        for label, skeleton, values in points(m, n, k):
            def low(skeleton=skeleton, values=values):
                if skeleton not in spaces:
                    spaces[skeleton] = Space.build(program, {"M": m, "N": n, "K": k}, limits,
                                                   skeletons=[Skeleton(parse_steps(skeleton))])
                space = spaces[skeleton]
                point = Point(skeleton, values)
                return derive(space.program_for(point), space.strategy(point))[0]
            candidates.append((label, low))
        for label, make in candidates:
            try:
                t, c, build, _ = compiled_time(make(), a, b, dev, args.repeat)
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                print(f"{spec} {label}: {type(exc).__name__}: {' '.join(str(exc).split())[:400]}", flush=True)
                continue
            vs = f"  {ref / t:.3f}x cuBLAS fp32" if ref else ""
            print(f"{spec} {label:44s} {t * 1e3:8.3f} ms {flops / t / 1e12:7.2f} TFLOP/s  "
                  f"err {error(c, a, b, rows):.2e}{vs}  (build {build:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
