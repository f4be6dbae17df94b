"""Matrix multiplication on a GPU through OpenCL: generated kernels versus cuBLAS (torch,
TF32 off), measured in the same run, reported as a fraction of cuBLAS.

    bash benchmarks/h200.sh mm

Variants: naive (one work-item per output element, 2D global launch), naive in 16x16
work-groups, the seed's tiling derived by rules (local-memory tiles) and its register
blocking derived by rules (l1 x l2 results per work-item in registers), the same register
blocking written as a low-level program, and a hand-written OpenCL kernel.
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
from sgemm_hand import ptx_counts  # noqa: E402 -- static load widths of a built kernel's PTX


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


def _naive_high(m, k, n):
    return fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))],
                  lambda a, b: fl.map(lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
                      lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))), fl.transpose(b)), a))


def mm_tiled(tn, tm, tk, m, k, n):
    """The seed's tiling by rules (functional.schedules.mm_tiled) from the naive program."""
    from functional import schedules
    from functional.derivation import derive

    return derive(_naive_high(m, k, n), schedules.mm_tiled(tn, tm, tk))[0]


def mm_register_blocked(cfg, m, k, n, **layout):
    """The seed's register blocking derived by rules (functional.schedules.mm_register_blocked:
    tile n x m, k-tile kt, l1 x l2 results per work-item; layout options coalesce_a, pad)."""
    from functional import schedules
    from functional.derivation import derive

    return derive(_naive_high(m, k, n), schedules.mm_register_blocked(*cfg, **layout))[0]


def mm_written(cfg, m, k, n, **layout):
    """The same structure written directly as a low-level program (examples/mm_register_blocked.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from mm_register_blocked import mm_register_blocked as build

    return build(*cfg, M=m, K=k, N=n, **layout)


HAND = """
#define TSM 128
#define TSN 128
#define TSK 16
#define WPT 8
#define RTS 16
__attribute__((reqd_work_group_size(RTS, RTS, 1)))
kernel void mm_hand(const int M, const int N, const int K, global const float* restrict A,
                    global const float* restrict B, global float* restrict C) {
  /* 128 x 128 tile per group, 8 x 8 results per item, interleaved (item (r, c) owns rows
     r + 16 i and columns c + 16 j); A's tile stored k-major with one float of padding. */
  const int c = get_local_id(0), r = get_local_id(1), tid = r * RTS + c;
  const int row0 = TSM * get_group_id(1), col0 = TSN * get_group_id(0);
  local float As[TSK][TSM + 1];
  local float Bs[TSK][TSN];
  float acc[WPT][WPT];
  for (int i = 0; i < WPT; i++)
    for (int j = 0; j < WPT; j++) acc[i][j] = 0.0f;
  for (int t = 0; t < K / TSK; t++) {
    for (int l = 0; l < (TSK * TSM) / (RTS * RTS); l++) {
      const int id = l * RTS * RTS + tid;
      As[id % TSK][id / TSK] = A[(row0 + id / TSK) * K + t * TSK + id % TSK];
      Bs[id / TSN][id % TSN] = B[(t * TSK + id / TSN) * N + col0 + id % TSN];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TSK; k++) {
      float bv[WPT];
      for (int j = 0; j < WPT; j++) bv[j] = Bs[k][c + RTS * j];
      for (int i = 0; i < WPT; i++) {
        const float av = As[k][r + RTS * i];
        for (int j = 0; j < WPT; j++) acc[i][j] += av * bv[j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = 0; i < WPT; i++)
    for (int j = 0; j < WPT; j++) C[(row0 + r + RTS * i) * N + col0 + c + RTS * j] = acc[i][j];
}
"""


def hand_time(a, b, repeat):
    """The hand-written OpenCL kernel above (needs M, N multiples of 128, K of 16)."""
    import pyopencl as cl

    from codegen_opencl.runtime import session_for

    m, k = a.shape
    n = b.shape[1]
    if m % 128 or n % 128 or k % 16:
        return None, None
    sess = session_for(choose_device())
    kern = cl.Kernel(sess.build(HAND), "mm_hand")
    mf = cl.mem_flags
    ab = cl.Buffer(sess.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    bb = cl.Buffer(sess.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    cb = cl.Buffer(sess.context, mf.READ_WRITE, m * n * 4)
    kern.set_args(np.int32(m), np.int32(n), np.int32(k), ab, bb, cb)
    times = []
    for _ in range(repeat + 2):
        ev = cl.enqueue_nd_range_kernel(sess.queue, kern, (n // 8, m // 8), (16, 16))
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    c = np.empty((m, n), np.float32)
    cl.enqueue_copy(sess.queue, c, cb)
    return float(np.median(times[2:])), c


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
        t_hand, c_hand = hand_time(a, b, args.repeat)
        if t_hand is not None:
            err = float(np.linalg.norm(c_hand - ref) / np.linalg.norm(ref))
            print(f"{spec:18s} {'hand-written OpenCL 128x128, 8x8':32s} {t_hand * 1e3:9.3f} "
                  f"{flops / t_hand / 1e12:8.2f} {t_ref / t_hand:9.3f} {err:.1e}", flush=True)
        variants = [("naive 2D global", mm_naive), ("naive 16x16 groups", mm_groups),
                    ("tiled 8x8, k 8 (local tiles)", lambda *s: mm_tiled(8, 8, 8, *s)),
                    ("tiled 16x16, k 16 (local tiles)", lambda *s: mm_tiled(16, 16, 16, *s))]
        for spec_rb in filter(None, args.rb.split(",")):
            cfg = tuple(int(v) for v in spec_rb.split("x"))
            for tag, layout in (("", {}), (" ca", {"coalesce_a": True}), (" ca,pad1", {"coalesce_a": True, "pad": 1}),
                                (" ca,pad4", {"coalesce_a": True, "pad": 4}),
                                (" ca,vb4", {"coalesce_a": True, "vector_b": 4}),
                                (" ca,pad1,vb4", {"coalesce_a": True, "pad": 1, "vector_b": 4}),
                                (" ca,pad4,vb4", {"coalesce_a": True, "pad": 4, "vector_b": 4}),
                                (" ca,va4,vb4", {"coalesce_a": True, "vector_a": 4, "vector_b": 4}),
                                (" ca,va4,vb4,ib4", {"coalesce_a": True, "vector_a": 4, "vector_b": 4,
                                                     "interleave_b": 4})):
                variants.append((f"reg.blocked {spec_rb}{tag}",
                                 lambda *s, cfg=cfg, layout=layout: mm_register_blocked(cfg, *s, **layout)))
            variants.append((f"written reg.blocked {spec_rb} pad1",
                             lambda *s, cfg=cfg: mm_written(cfg, *s, pad=1)))
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
                print(f"{spec:18s} {name:32s} {t * 1e3:9.3f} {flops / t / 1e12:8.2f} {t_ref / t:9.3f} {err:.1e} "
                      f"{ptx_counts(kernel._cl_program)}", flush=True)
            except Exception as exc:  # noqa: BLE001 -- a failing variant is reported, the run goes on
                print(f"{spec:18s} {name:32s} FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
