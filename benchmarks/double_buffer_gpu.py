"""Double buffering (rule double_buffer: reduce_seq_double_buffered, the next tile staged while this
one is used; cp.async copies where the device has them) on the GPU's matrix products, each kernel
against itself without the rule and against cuBLAS through torch, in the same run.

    source benchmarks/h200_env.sh && python3 benchmarks/double_buffer_gpu.py [--sizes 4096x4096x4096,...]

Kernels: the SGEMM preset (functional.schedules.mm_register_blocked at the GPU preset's parameters,
dpia.explore.presets) and the TF32 program staged in local memory (examples/tf32_gemm.mm_tf32), each
as derived and with `top_down(double_buffer)` after it.  Each is checked against the float64 product
on sampled rows (benchmarks/tf32_gemm_gpu.error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

PRESET = dict(n=128, m=128, k=8, l1=8, l2=8, coalesce_a=True, pad=0, vector_a=4, vector_b=4, interleave_b=4)
# the preset's tiles with other k-widths and blocks (n x m x k x l1 x l2), the layouts the preset's
TILES = {"128x128x8x8x8": PRESET, "128x128x16x8x8": dict(PRESET, k=16), "128x64x16x8x8": dict(PRESET, m=64, k=16),
         "64x64x16x4x4": dict(PRESET, n=64, m=64, k=16, l1=4, l2=4)}


def mm_program(m: int, n: int, k: int, tf32: bool):
    import functional as fl

    def product(p):
        return fl.tf32(fl.fst(p)) * fl.tf32(fl.snd(p)) if tf32 else fl.fst(p) * fl.snd(p)

    return fl.infer(fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))], lambda a, b: fl.map(
        lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(product, fl.zip(r, c))), fl.transpose(b)), a)))


def variants(m: int, n: int, k: int, which: str, tiles: str = "128x128x8x8x8"):
    """(label, low-level program) pairs: each kernel without and with double buffering."""
    from examples.tf32_gemm import mm_tf32
    from functional import schedules as sch
    from functional.derivation import derive
    from functional.rules.macros import r
    from functional.strategies import top_down

    import functional as fl

    out = []
    for name in filter(None, tiles.split(",") if "sgemm" in which else ()):
        p = TILES[name]
        if m % p["n"] or n % p["m"] or k % p["k"]:
            continue
        low = derive(mm_program(m, n, k, False), sch.mm_register_blocked(**p))[0]
        out += [(f"sgemm {name}", low), (f"sgemm {name}, double_buffer", derive(low, top_down(r("double_buffer")))[0])]
    if "tf32" in which:
        for shape in ((128, 128, 64, 64, 32), (128, 128, 64, 32, 32), (128, 128, 64, 64, 16)):
            if m % shape[0] or n % shape[1] or k % shape[4]:
                continue
            low = fl.infer(mm_tf32(*shape))
            out += [(f"mm_tf32{shape}", low),
                    (f"mm_tf32{shape}, double_buffer", derive(low, top_down(r("double_buffer")))[0])]
    return out


def main() -> None:
    from codegen_opencl.runtime import choose_device, describe, device_intrinsics
    from tf32_gemm_gpu import compiled_time, cublas_times, cuda_torch, error, operands, ptx_counts

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096x4096x4096,8192x64x8192")
    ap.add_argument("--which", default="sgemm,tf32")
    ap.add_argument("--tiles", default="128x128x8x8x8", help=f"SGEMM tiles: of {', '.join(TILES)}")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    dev = choose_device()
    print("device:", describe(dev), "intrinsics:", sorted(device_intrinsics(dev)), flush=True)
    rng = np.random.default_rng(0)
    torch = cuda_torch()
    for spec in args.sizes.split(","):
        m, n, k, a, b, rows, flops = operands(spec, rng)
        refs = cublas_times(torch, a, b, rows, args.repeat, spec) if torch else {}
        for label, low in variants(m, n, k, args.which, args.tiles):
            try:
                t, c, build, kernel = compiled_time(low, a, b, dev, args.repeat)
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                print(f"{spec} {label}: {type(exc).__name__}: {' '.join(str(exc).split())[:500]}", flush=True)
                continue
            ref = refs.get("tf32" in label)
            vs = f"  {ref / t:.3f}x cuBLAS {'TF32' if 'tf32' in label else 'fp32'}" if ref else ""
            counts = ptx_counts(getattr(kernel, "kernel", kernel)._cl_program)
            print(f"{spec} {label:42s} {t * 1e3:8.3f} ms {flops / t / 1e12:7.1f} TFLOP/s  "
                  f"err {error(c, a, b, rows):.2e}{vs}  (build {build:.1f} s)  {counts}", flush=True)


if __name__ == "__main__":
    main()
