"""Hand-written OpenCL TF32 tensor-core GEMM kernels (inline PTX mma.sync.m16n8k8) on an NVIDIA
GPU versus cuBLAS through torch with TF32 on and off, in the same run: the reference that says
which kernel shape the generated tensor-core kernels must reach, and the check of the fragment
layouts the interpreter models (functional.primitives' frag_a / frag_b / frag_c).

    source benchmarks/h200_env.sh && python3 benchmarks/tf32_hand.py [--sizes 4096x4096x4096,...]

C = A B (row-major float32).  A work-group of (BM/WM) x (BN/WN) warps computes a BM x BN block of C;
each warp a WM x WN part of it as (WM/16) x (WN/8) mma tiles whose accumulators stay in registers;
k-chunks of KC columns of A and rows of B are staged in local memory (rows padded so the fragment
reads meet no bank conflict), rounded to TF32 once (cvt.rna) as they are stored.  `db`: the next
chunk's global reads are issued into registers before this chunk's products (one barrier per chunk).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MMA = ('asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, '
       '{%8,%9}, {%0,%1,%2,%3};" : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), '
       '"r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));')

HELPERS = r"""
inline float tf32(float x) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return as_float(r);
}
inline void mma(float* c, const uint* a, const uint* b) {
  %MMA%
}
""".replace("%MMA%", MMA)


def tile_kernel() -> str:
    """One 16 x 8 x 8 product, to check the fragment layouts: lane l holds
    a: (g, t) (g+8, t) (g, t+4) (g+8, t+4);  b: (k=t, n=g) (k=t+4, n=g);  c: (g, 2t) (g, 2t+1) (g+8, 2t) (g+8, 2t+1)
    with g = l / 4, t = l % 4."""
    return HELPERS + r"""
kernel void tile(global const float* A, global const float* B, global float* C) {
  const int l = get_local_id(0), g = l / 4, t = l % 4;
  uint a[4] = {as_uint(tf32(A[g * 8 + t])), as_uint(tf32(A[(g + 8) * 8 + t])), as_uint(tf32(A[g * 8 + t + 4])),
               as_uint(tf32(A[(g + 8) * 8 + t + 4]))};
  uint b[2] = {as_uint(tf32(B[t * 8 + g])), as_uint(tf32(B[(t + 4) * 8 + g]))};
  float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  mma(c, a, b);
  C[g * 8 + 2 * t] = c[0]; C[g * 8 + 2 * t + 1] = c[1]; C[(g + 8) * 8 + 2 * t] = c[2]; C[(g + 8) * 8 + 2 * t + 1] = c[3];
}
"""


def gemm_kernel(bm=128, bn=128, wm=64, wn=64, kc=32, pad=4, db=False) -> str:
    warps_m, warps_n = bm // wm, bn // wn
    items = 32 * warps_m * warps_n
    mt, nt = wm // 16, wn // 8
    a_loads, b_loads = bm * kc // items, kc * bn // items
    assert a_loads * items == bm * kc and b_loads * items == kc * bn
    load_a = "\n".join(f"    ra[{i}] = A[(row0 + (tid + {i * items}) / {kc}) * K + k0 + (tid + {i * items}) % {kc}];"
                       for i in range(a_loads))
    load_b = "\n".join(f"    rb[{i}] = B[(k0 + (tid + {i * items}) / {bn}) * N + col0 + (tid + {i * items}) % {bn}];"
                       for i in range(b_loads))
    store_a = "\n".join(f"    As[buf][(tid + {i * items}) / {kc}][(tid + {i * items}) % {kc}] = tf32(ra[{i}]);"
                        for i in range(a_loads))
    store_b = "\n".join(f"    Bs[buf][(tid + {i * items}) / {bn}][(tid + {i * items}) % {bn}] = tf32(rb[{i}]);"
                        for i in range(b_loads))
    nbuf = 2 if db else 1
    compute = f"""
    for (int kk = 0; kk < {kc}; kk += 8) {{
      uint a[{mt}][4], b[{nt}][2];
      for (int i = 0; i < {mt}; i++) {{
        const int r = wr * {wm} + i * 16 + g;
        a[i][0] = as_uint(As[cur][r][kk + t]); a[i][1] = as_uint(As[cur][r + 8][kk + t]);
        a[i][2] = as_uint(As[cur][r][kk + t + 4]); a[i][3] = as_uint(As[cur][r + 8][kk + t + 4]);
      }}
      for (int j = 0; j < {nt}; j++) {{
        const int cc = wc * {wn} + j * 8 + g;
        b[j][0] = as_uint(Bs[cur][kk + t][cc]); b[j][1] = as_uint(Bs[cur][kk + t + 4][cc]);
      }}
      for (int i = 0; i < {mt}; i++)
        for (int j = 0; j < {nt}; j++) mma(acc[i][j], a[i], b[j]);
    }}"""
    if db:
        loop = f"""
  int buf = 0;
  {{ const int k0 = 0;
{load_a}
{load_b}
  }}
{store_a}
{store_b}
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k0 = {kc}; k0 <= K; k0 += {kc}) {{
    const int cur = buf;
    if (k0 < K) {{
{load_a}
{load_b}
    }}
{compute}
    buf ^= 1;
    if (k0 < K) {{
{store_a}
{store_b}
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}"""
    else:
        loop = f"""
  const int buf = 0, cur = 0;
  for (int k0 = 0; k0 < K; k0 += {kc}) {{
{load_a}
{load_b}
{store_a}
{store_b}
    barrier(CLK_LOCAL_MEM_FENCE);
{compute}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}"""
    return HELPERS + f"""
__attribute__((reqd_work_group_size({items}, 1, 1)))
kernel void gemm(const int M, const int N, const int K, global const float* restrict A,
                 global const float* restrict B, global float* restrict C) {{
  const int tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
  const int wr = warp / {warps_n}, wc = warp % {warps_n}, g = lane / 4, t = lane % 4;
  const int row0 = {bm} * get_group_id(1), col0 = {bn} * get_group_id(0);
  local float As[{nbuf}][{bm}][{kc + pad}];
  local float Bs[{nbuf}][{kc}][{bn + 2 * pad}];
  float ra[{a_loads}], rb[{b_loads}];
  float acc[{mt}][{nt}][4];
  for (int i = 0; i < {mt}; i++)
    for (int j = 0; j < {nt}; j++)
      for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0f;
{loop}
  for (int i = 0; i < {mt}; i++)
    for (int j = 0; j < {nt}; j++) {{
      const int r = row0 + wr * {wm} + i * 16 + g, c = col0 + wc * {wn} + j * 8 + 2 * t;
      C[r * N + c] = acc[i][j][0]; C[r * N + c + 1] = acc[i][j][1];
      C[(r + 8) * N + c] = acc[i][j][2]; C[(r + 8) * N + c + 1] = acc[i][j][3];
    }}
}}
"""


VARIANTS = {
    "w1_64x64": dict(bm=64, bn=64, wm=64, wn=64),
    "w4_128x128": dict(bm=128, bn=128, wm=64, wn=64),
    "w4_128x128_db": dict(bm=128, bn=128, wm=64, wn=64, db=True),
    "w8_128x256_db": dict(bm=128, bn=256, wm=64, wn=64, db=True),
    "w4_128x128_k16_db": dict(bm=128, bn=128, wm=64, wn=64, kc=16, db=True),
    "w8_256x128_db": dict(bm=256, bn=128, wm=64, wn=64, db=True),
    "w4_128x64_wm32": dict(bm=128, bn=64, wm=32, wn=64, db=True),
}


def tf32_round(x: np.ndarray) -> np.ndarray:
    """Round to nearest, ties away from zero, to 10 mantissa bits (cvt.rna.tf32.f32)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    out = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), out, x)


def main() -> None:
    import pyopencl as cl

    from codegen_opencl.runtime import choose_device, describe, session_for

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192,1024x1024x1024")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    dev = choose_device()
    sess = session_for(dev)
    ctx, q = sess.context, sess.queue
    print("device:", describe(dev))
    rng = np.random.default_rng(0)

    # the fragment layouts
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 8)).astype(np.float32)
    prg = cl.Program(ctx, tile_kernel()).build()
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db_ = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    dc = cl.Buffer(ctx, mf.WRITE_ONLY, 16 * 8 * 4)
    prg.tile(q, (32,), (32,), da, db_, dc)
    c = np.empty((16, 8), np.float32)
    cl.enqueue_copy(q, c, dc)
    want = tf32_round(a).astype(np.float64) @ tf32_round(b).astype(np.float64)
    print(f"tile 16x8x8: max |err| vs tf32-rounded fp64 product {np.abs(c - want).max():.3g}; "
          f"vs unrounded {np.abs(c - a.astype(np.float64) @ b).max():.3g}")

    import torch

    for spec in args.sizes.split(","):
        m, n, k = (int(x) for x in spec.split("x"))
        A = rng.standard_normal((m, k)).astype(np.float32)
        B = rng.standard_normal((k, n)).astype(np.float32)
        exact = A.astype(np.float64) @ B.astype(np.float64) if m * n * k <= 4096 ** 3 else None
        flops = 2.0 * m * n * k
        ta, tb = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
        for tf32_on in (True, False):
            torch.backends.cuda.matmul.allow_tf32 = tf32_on
            for _ in range(3):
                out = ta @ tb
            torch.cuda.synchronize()
            ts = []
            for _ in range(args.repeat):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(); ta @ tb; e1.record(); torch.cuda.synchronize()
                ts.append(e0.elapsed_time(e1) * 1e-3)
            t = min(ts)
            err = "" if exact is None else f" max rel err {np.abs(out.cpu().numpy() - exact).max() / np.abs(exact).max():.2e}"
            print(f"{spec} cuBLAS TF32 {'on ' if tf32_on else 'off'} {t * 1e3:8.3f} ms {flops / t / 1e12:7.1f} TFLOP/s{err}")
        del ta, tb
        dA = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=A)
        dB = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=B)
        dC = cl.Buffer(ctx, mf.WRITE_ONLY, m * n * 4)
        for name in args.variants.split(","):
            p = VARIANTS[name]
            p = dict(dict(bm=128, bn=128, wm=64, wn=64, kc=32, pad=4, db=False), **p)
            if m % p["bm"] or n % p["bn"] or k % p["kc"]:
                continue
            try:
                kern = cl.Program(ctx, gemm_kernel(**p)).build().gemm
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                print(f"{spec} {name}: build failed: {str(exc)[:400]}")
                continue
            items = 32 * (p["bm"] // p["wm"]) * (p["bn"] // p["wn"])
            gsz, lsz = (n // p["bn"] * items, m // p["bm"]), (items, 1)
            call = lambda: kern(q, gsz, lsz, np.int32(m), np.int32(n), np.int32(k), dA, dB, dC)  # noqa: E731
            call(); q.finish()
            ts = []
            for _ in range(args.repeat):
                t0 = time.perf_counter(); ev = call(); ev.wait()
                ts.append((ev.profile.end - ev.profile.start) * 1e-9)
            t = min(ts)
            C = np.empty((m, n), np.float32)
            cl.enqueue_copy(q, C, dC)
            if exact is not None:
                err = f" max rel err {np.abs(C - exact).max() / np.abs(exact).max():.2e}"
            else:
                rows = rng.choice(m, 16, replace=False)
                sub = A[rows].astype(np.float64) @ B.astype(np.float64)
                err = f" max rel err (16 rows) {np.abs(C[rows] - sub).max() / np.abs(sub).max():.2e}"
            print(f"{spec} {name:22s} {t * 1e3:8.3f} ms {flops / t / 1e12:7.1f} TFLOP/s{err}")


if __name__ == "__main__":
    main()
