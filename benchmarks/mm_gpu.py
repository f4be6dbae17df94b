"""Matrix multiplication on a GPU through OpenCL: generated kernels versus cuBLAS (torch,
TF32 off), measured in the same run, reported as a fraction of cuBLAS.

    bash benchmarks/h200.sh mm

Variants: naive (one work-item per output element, 2D global launch), naive in 16x16
work-groups, and the seed's tiling derived by rules (local-memory tiles; the tile
accumulator is still a private array indexed by local ids, see RESULTS.md).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dpia  # noqa: E402
import functional as fl  # noqa: E402
from codegen_opencl.runtime import choose_device, describe  # noqa: E402


def _dot(r, c):
    return fl.reduce_seq(lambda a, p: a + fl.fst(p) * fl.snd(p), 0.0, fl.zip(r, c))


def mm_naive(m, k, n):
    return fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))],
                  lambda a, b: fl.map_global(lambda r: fl.map_global(lambda c: _dot(r, c), fl.transpose(b)), a, dim=1))


def mm_groups(m, k, n, t=16):
    return fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))],
                  lambda a, b: fl.join(fl.map_workgroup(lambda rows: fl.transpose(fl.join(fl.map_workgroup(
                      lambda cols: fl.map_local(lambda c: fl.map_local(lambda r: _dot(r, c), rows, dim=1), cols),
                      fl.split(t, fl.transpose(b))))), fl.split(t, a), dim=1)))


def mm_tiled(tn, tm, tk, m, k, n):
    """The seed's tiling by rules (functional.schedules.mm_tiled) from the naive program."""
    from functional import schedules
    from functional.derivation import derive

    naive = fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))],
                   lambda a, b: fl.map(lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
                       lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))), fl.transpose(b)), a))
    return derive(naive, schedules.mm_tiled(tn, tm, tk))[0]


def mm_register_blocked(cfg, m, k, n):
    """The register-blocked low-level program of examples/mm_register_blocked.py (tile n x m,
    k-tile kt, l1 x l2 results per work-item)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from mm_register_blocked import mm_register_blocked as build

    return build(*cfg, M=m, K=k, N=n)


def cublas_time(a, b, repeat):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat + 3):
        start.record()
        c = ta @ tb
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return float(np.median(times[3:])), c.cpu().numpy()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096x4096x4096,1024x1024x64,8192x64x8192", help="MxNxK list")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--only", default="", help="run only variants whose name contains one of these (comma list)")
    ap.add_argument("--rb", default="64x64x8x4x4,64x64x8x8x8,128x128x8x8x8,128x64x16x8x4",
                    help="register-blocked configurations n x m x kt x l1 x l2 (comma list)")
    args = ap.parse_args(argv)
    print(f"device: {describe(choose_device())}", flush=True)
    print(f"{'size MxNxK':18s} {'variant':32s} {'ms':>9s} {'TFLOP/s':>8s} {'x cuBLAS':>9s} rel.err")
    rng = np.random.default_rng(0)
    for spec in args.sizes.split(","):
        m, n, k = (int(v) for v in spec.split("x"))
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        flops = 2.0 * m * n * k
        t_ref, ref = cublas_time(a, b, args.repeat)
        print(f"{spec:18s} {'cuBLAS (torch, TF32 off)':32s} {t_ref * 1e3:9.3f} {flops / t_ref / 1e12:8.2f} {1.0:9.2f}",
              flush=True)
        variants = [("naive 2D global", mm_naive), ("naive 16x16 groups", mm_groups),
                    ("tiled 8x8, k 8 (local tiles)", lambda *s: mm_tiled(8, 8, 8, *s)),
                    ("tiled 16x16, k 16 (local tiles)", lambda *s: mm_tiled(16, 16, 16, *s))]
        for spec_rb in filter(None, args.rb.split(",")):
            cfg = tuple(int(v) for v in spec_rb.split("x"))
            variants.append((f"reg.blocked {spec_rb}", lambda *s, cfg=cfg: mm_register_blocked(cfg, *s)))
        wanted = [w for w in args.only.split(",") if w]
        for name, build in variants:
            if wanted and not any(w in name for w in wanted):
                continue
            try:
                prog = build(fl.nat("M", multiple_of=math.gcd(m, 128)), fl.nat("K", multiple_of=math.gcd(k, 64)),
                             fl.nat("N", multiple_of=math.gcd(n, 128)))
                kernel = dpia.compile(prog)
                got = kernel(a, b)
                err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
                t = kernel.time(a, b, repeat=args.repeat)
                print(f"{spec:18s} {name:32s} {t * 1e3:9.3f} {flops / t / 1e12:8.2f} {t_ref / t:9.3f} {err:.1e}",
                      flush=True)
            except Exception as exc:  # noqa: BLE001 -- a failing variant is reported, the run goes on
                print(f"{spec:18s} {name:32s} FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
