"""What limits TF32 tensor-core GEMM written in OpenCL on an NVIDIA GPU: the ceilings (mma.sync's
peak from registers, the local memory a work-group may have, whether wgmma builds) and hand-written
kernels that stage their tiles with asynchronous copies (PTX cp.async) in a pipeline of `stages`
buffers, against cuBLAS through torch (TF32 on and off) in the same run.

    source benchmarks/h200_env.sh && python3 benchmarks/tf32_async.py [--sizes 4096x4096x4096,...]
        [--variants NAME,...] [--no-probes]

Kernels (`async_kernel`): a work-group computes a bm x bn block of C = A B with (bm/wm) x (bn/wn)
warps, each warp's wm x wn part as m16n8k8 tiles accumulated in registers.  k-chunks of bk are
copied global -> local by cp.async (16 bytes per copy, no registers on the way), `stages` chunks in
flight, one barrier per chunk.  Layouts of the local tiles:
- `scalar`: rows padded so the fragment reads (one float each) meet no bank conflict.
- `vec`: within each 16 of k the summation order is permuted (lane t takes k = 4t .. 4t+3 for its
  two k-steps: a dot product's order is free when A and B share it), so a lane's A fragments for two
  k-steps are one float4 read; B's 16-byte chunks are XOR-swizzled by row so its scalar reads meet
  no conflict either.
Rounding to TF32 (`rnd`): `none` gives mma the float32 bits (the tensor cores read the top 19),
`iadd` adds half a TF32 ulp to the bits first (so the truncation rounds to nearest, ties away: the
bits of cvt.rna), `cvt` runs cvt.rna.tf32.f32.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

MMA = ('asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, '
       '{%0,%1,%2,%3};" : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), '
       '"r"(b0), "r"(b1));')

HELPERS = r"""
inline uint rna(float x) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
inline void mma(float* c, uint a0, uint a1, uint a2, uint a3, uint b0, uint b1) {
  %MMA%
}
inline void cp16(local float* dst, global const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((uint)(size_t)dst), "l"(src) : "memory");
}
inline void commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
""".replace("%MMA%", MMA)

ROUND = {"none": "as_uint({})", "iadd": "(as_uint({}) + 0x1000u)", "cvt": "rna({})"}


def peak_kernel(chains: int = 8) -> str:
    """mma.sync from registers only: `chains` independent accumulators per warp, no memory in the loop."""
    mmas = "\n".join(f"      mma(c[{u}], a0, a1, a2, a3, b0, b1);" for u in range(chains))
    return HELPERS + f"""
kernel void peak(global float* out, const int iters) {{
  const uint l = get_local_id(0);
  uint a0 = 0x3f800000u + l, a1 = a0 + 1u, a2 = a0 + 2u, a3 = a0 + 3u, b0 = 0x3c000000u + l, b1 = b0 + 5u;
  float c[{chains}][4];
  #pragma unroll
  for (int u = 0; u < {chains}; u++) {{ c[u][0] = 0.0f; c[u][1] = 0.0f; c[u][2] = 0.0f; c[u][3] = 0.0f; }}
  for (int it = 0; it < iters; it++) {{
{mmas}
  }}
  float s = 0.0f;
  #pragma unroll
  for (int u = 0; u < {chains}; u++) s += c[u][0] + c[u][1] + c[u][2] + c[u][3];
  out[get_global_id(0)] = s;
}}
"""


def rounding_probe() -> str:
    """One m16n8k8 product per warp, its operands rounded by cvt.rna (C1) and by half an ulp added to
    the bits (C2): equal bit for bit where the tensor cores truncate the bits they are given."""
    return HELPERS + r"""
kernel void rounding(global const float* A, global const float* B, global float* C1, global float* C2) {
  const int l = get_local_id(0), g = l / 4, t = l % 4, w = get_group_id(0);
  global const float* a = A + w * 128;
  global const float* b = B + w * 64;
  const float x0 = a[g * 8 + t], x1 = a[(g + 8) * 8 + t], x2 = a[g * 8 + t + 4], x3 = a[(g + 8) * 8 + t + 4];
  const float y0 = b[t * 8 + g], y1 = b[(t + 4) * 8 + g];
  float c[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  mma(c, rna(x0), rna(x1), rna(x2), rna(x3), rna(y0), rna(y1));
  mma(d, as_uint(x0) + 0x1000u, as_uint(x1) + 0x1000u, as_uint(x2) + 0x1000u, as_uint(x3) + 0x1000u,
      as_uint(y0) + 0x1000u, as_uint(y1) + 0x1000u);
  for (int r = 0; r < 4; r++) { C1[w * 128 + l * 4 + r] = c[r]; C2[w * 128 + l * 4 + r] = d[r]; }
}
"""


def wgmma_probe() -> str:
    return """
kernel void probe(global float* out) {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  out[get_global_id(0)] = 1.0f;
}
"""


def async_kernel(bm=128, bn=128, bk=16, wm=64, wn=64, stages=2, layout="scalar", rnd="iadd") -> str:
    warps_m, warps_n = bm // wm, bn // wn
    items = 32 * warps_m * warps_n
    mt, nt = wm // 16, wn // 8
    vec = layout == "vec"
    assert bk % 16 == 0 or not vec
    sa, sb = row_strides(bk, bn, layout)
    a_chunks, b_chunks = bm * bk // 4, bk * bn // 4
    assert a_chunks % items == 0 and b_chunks % items == 0, (a_chunks, b_chunks, items)
    rd = ROUND[rnd]

    def b_col(row: str, col: str) -> str:
        """Where B's element (row, col) of a chunk lives in its local tile."""
        if not vec:
            return f"({row}) * {sb} + ({col})"
        return f"({row}) * {sb} + ((((({col}) >> 2) ^ ((({row}) >> 1) & 6))) << 2) + (({col}) & 3)"

    copies = []
    for i in range(a_chunks // items):
        q = f"(tid + {i * items})"
        copies.append(f"    cp16(as + ({q} / {bk // 4}) * {sa} + ({q} % {bk // 4}) * 4, "
                      f"A + (size_t)(row0 + {q} / {bk // 4}) * K + k0 + ({q} % {bk // 4}) * 4);")
    for i in range(b_chunks // items):
        q = f"(tid + {i * items})"
        r, c4 = f"({q} / {bn // 4})", f"({q} % {bn // 4})"
        dst = b_col(r, f"{c4} * 4")
        copies.append(f"    cp16(bs + {dst}, B + (size_t)(k0 + {r}) * N + col0 + {c4} * 4);")
    load = "\n".join(copies)

    if vec:
        compute = f"""
    #pragma unroll
    for (int h = 0; h < {bk // 16}; h++) {{
      float4 xa[{mt}], ya[{mt}];
      #pragma unroll
      for (int i = 0; i < {mt}; i++) {{
        const int r = wr * {wm} + i * 16 + g;
        xa[i] = *(local const float4*)(ac + r * {sa} + 16 * h + 4 * t);
        ya[i] = *(local const float4*)(ac + (r + 8) * {sa} + 16 * h + 4 * t);
      }}
      float bv[{nt}][4];
      #pragma unroll
      for (int j = 0; j < {nt}; j++) {{
        const int n = wc * {wn} + j * 8 + g;
        #pragma unroll
        for (int u = 0; u < 4; u++) bv[j][u] = bc[{b_col("16 * h + 4 * t + u", "n")}];
      }}
      #pragma unroll
      for (int i = 0; i < {mt}; i++)
        #pragma unroll
        for (int j = 0; j < {nt}; j++) {{
          mma(acc[i][j], {rd.format("xa[i].s0")}, {rd.format("ya[i].s0")}, {rd.format("xa[i].s1")}, {rd.format("ya[i].s1")},
              {rd.format("bv[j][0]")}, {rd.format("bv[j][1]")});
          mma(acc[i][j], {rd.format("xa[i].s2")}, {rd.format("ya[i].s2")}, {rd.format("xa[i].s3")}, {rd.format("ya[i].s3")},
              {rd.format("bv[j][2]")}, {rd.format("bv[j][3]")});
        }}
    }}"""
    else:
        compute = f"""
    #pragma unroll
    for (int kk = 0; kk < {bk}; kk += 8) {{
      uint af[{mt}][4], bf[{nt}][2];
      #pragma unroll
      for (int i = 0; i < {mt}; i++) {{
        const int r = wr * {wm} + i * 16 + g;
        af[i][0] = {rd.format(f"ac[r * {sa} + kk + t]")}; af[i][1] = {rd.format(f"ac[(r + 8) * {sa} + kk + t]")};
        af[i][2] = {rd.format(f"ac[r * {sa} + kk + t + 4]")}; af[i][3] = {rd.format(f"ac[(r + 8) * {sa} + kk + t + 4]")};
      }}
      #pragma unroll
      for (int j = 0; j < {nt}; j++) {{
        const int n = wc * {wn} + j * 8 + g;
        bf[j][0] = {rd.format(f"bc[(kk + t) * {sb} + n]")}; bf[j][1] = {rd.format(f"bc[(kk + t + 4) * {sb} + n]")};
      }}
      #pragma unroll
      for (int i = 0; i < {mt}; i++)
        #pragma unroll
        for (int j = 0; j < {nt}; j++) mma(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
    }}"""
    a_size, b_size = bm * sa, bk * sb
    return HELPERS + f"""
__attribute__((reqd_work_group_size({items}, 1, 1)))
kernel void gemm(const int M, const int N, const int K, global const float* restrict A,
                 global const float* restrict B, global float* restrict C) {{
  local float As[{stages * a_size}] __attribute__((aligned(16)));
  local float Bs[{stages * b_size}] __attribute__((aligned(16)));
  const int tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
  const int wr = warp / {warps_n}, wc = warp % {warps_n}, g = lane / 4, t = lane % 4;
  const int row0 = {bm} * get_group_id(1), col0 = {bn} * get_group_id(0);
  const int KT = K / {bk};
  float acc[{mt}][{nt}][4];
  #pragma unroll
  for (int i = 0; i < {mt}; i++)
    #pragma unroll
    for (int j = 0; j < {nt}; j++) {{ acc[i][j][0] = 0.0f; acc[i][j][1] = 0.0f; acc[i][j][2] = 0.0f; acc[i][j][3] = 0.0f; }}
  #pragma unroll
  for (int s = 0; s < {stages - 1}; s++) {{
    if (s < KT) {{
      local float* as = As + s * {a_size};
      local float* bs = Bs + s * {b_size};
      const int k0 = s * {bk};
{load}
    }}
    commit();
  }}
  for (int kt = 0; kt < KT; kt++) {{
    asm volatile("cp.async.wait_group {stages - 2};" ::: "memory");
    barrier(CLK_LOCAL_MEM_FENCE);
    {{
      const int nk = kt + {stages - 1};
      if (nk < KT) {{
        local float* as = As + (nk % {stages}) * {a_size};
        local float* bs = Bs + (nk % {stages}) * {b_size};
        const int k0 = nk * {bk};
{load}
      }}
      commit();
    }}
    local const float* ac = As + (kt % {stages}) * {a_size};
    local const float* bc = Bs + (kt % {stages}) * {b_size};
{compute}
  }}
  #pragma unroll
  for (int i = 0; i < {mt}; i++)
    #pragma unroll
    for (int j = 0; j < {nt}; j++) {{
      const int r = row0 + wr * {wm} + i * 16 + g, c = col0 + wc * {wn} + j * 8 + 2 * t;
      vstore2((float2)(acc[i][j][0], acc[i][j][1]), 0, C + (size_t)r * N + c);
      vstore2((float2)(acc[i][j][2], acc[i][j][3]), 0, C + (size_t)(r + 8) * N + c);
    }}
}}
"""


def row_strides(bk: int, bn: int, layout: str) -> tuple[int, int]:
    """The local rows' lengths (floats) of A's and B's tiles: `vec` float4 reads of rows g, g+1 half a
    bank row apart, B swizzled (no padding); `scalar` padded so fragment reads hit banks 4g + t and 8t + g."""
    if layout == "vec":
        return (bk if bk % 32 == 16 else bk + 16), bn
    return (bk + 4 if (bk + 4) % 8 == 4 else bk + 12), bn + 8


def local_bytes(bm=128, bn=128, bk=16, wm=64, wn=64, stages=2, layout="scalar", rnd="iadd") -> int:
    sa, sb = row_strides(bk, bn, layout)
    return 4 * stages * (bm * sa + bk * sb)


VARIANTS = {
    "s128x128k16w4s2": dict(bm=128, bn=128, bk=16, wm=64, wn=64, stages=2),
    "s128x128k16w8s2": dict(bm=128, bn=128, bk=16, wm=64, wn=32, stages=2),
    "s128x128k8w4s4": dict(bm=128, bn=128, bk=8, wm=64, wn=64, stages=4),
    "s128x256k8w8s3": dict(bm=128, bn=256, bk=8, wm=64, wn=64, stages=3),
    "s256x128k8w8s3": dict(bm=256, bn=128, bk=8, wm=64, wn=64, stages=3),
    "v128x128k16w4s3": dict(bm=128, bn=128, bk=16, wm=64, wn=64, stages=3, layout="vec"),
    "v128x128k16w8s3": dict(bm=128, bn=128, bk=16, wm=64, wn=32, stages=3, layout="vec"),
    "v128x256k16w8s2": dict(bm=128, bn=256, bk=16, wm=64, wn=64, stages=2, layout="vec"),
    "v128x128k16w4s2": dict(bm=128, bn=128, bk=16, wm=64, wn=64, stages=2, layout="vec"),
    "v128x128k16w4s3none": dict(bm=128, bn=128, bk=16, wm=64, wn=64, stages=3, layout="vec", rnd="none"),
    "v128x128k16w4s3cvt": dict(bm=128, bn=128, bk=16, wm=64, wn=64, stages=3, layout="vec", rnd="cvt"),
    "v64x128k16w4s3": dict(bm=64, bn=128, bk=16, wm=32, wn=64, stages=3, layout="vec"),
}


def main() -> None:
    import pyopencl as cl

    from codegen_opencl.runtime import choose_device, describe, session_for
    from tf32_gemm_gpu import cublas_times, error, event_seconds, operands, ptx_counts

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--no-probes", action="store_true")
    args = ap.parse_args()
    dev = choose_device()
    sess = session_for(dev)
    ctx, q = sess.context, sess.queue
    mf = cl.mem_flags
    print("device:", describe(dev), "| local memory per work-group:", dev.local_mem_size, "bytes")

    if not args.no_probes:
        try:
            cl.Program(ctx, wgmma_probe()).build()
            print("wgmma: builds")
        except Exception as exc:  # noqa: BLE001 - a probe: report
            print("wgmma: does not build:", " ".join(str(exc).split())[:300])
        tiles = 4096
        rng0 = np.random.default_rng(1)
        ops = [rng0.standard_normal(tiles * size).astype(np.float32) for size in (128, 64)]
        for x in ops:  # a quarter of the operands exactly halfway between two TF32 values (ties)
            bits = x.view(np.uint32)
            bits[::4] = (bits[::4] & np.uint32(0xFFFFE000)) | np.uint32(0x1000)
        bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x) for x in ops]
        outs = [cl.Buffer(ctx, mf.WRITE_ONLY, 4 * tiles * 128) for _ in range(2)]
        cl.Program(ctx, rounding_probe()).build().rounding(q, (32 * tiles,), (32,), *bufs, *outs).wait()
        got = [np.empty(tiles * 128, np.float32) for _ in range(2)]
        for h, buf in zip(got, outs):
            cl.enqueue_copy(q, h, buf)
        print(f"rounding: {tiles} products, cvt.rna and half an ulp added agree bit for bit: "
              f"{bool(np.array_equal(got[0].view(np.uint32), got[1].view(np.uint32)))}")
        out = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * 132 * 64 * 128)
        for chains in (4, 8):
            peak = cl.Program(ctx, peak_kernel(chains)).build()
            kern = peak.peak
            groups, iters = dev.max_compute_units * 16, 2048
            call = lambda: kern(q, (groups * 128,), (128,), out, np.int32(iters))  # noqa: E731
            call().wait()
            ts = []
            for _ in range(5):
                ev = call()
                ev.wait()
                ts.append((ev.profile.end - ev.profile.start) * 1e-9)
            flops = groups * 4 * iters * chains * 2 * 16 * 8 * 8
            print(f"mma.sync m16n8k8 tf32 peak from registers ({chains} chains/warp, 16 warps/SM): "
                  f"{flops / min(ts) / 1e12:.1f} TFLOP/s  [{ptx_counts(peak)}]")

    import torch

    rng = np.random.default_rng(0)
    for spec in args.sizes.split(","):
        m, n, k, a, b, rows, flops = operands(spec, rng)
        cublas_times(torch, a, b, rows, args.repeat, spec)
        da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        dc = cl.Buffer(ctx, mf.WRITE_ONLY, m * n * 4)
        for name in args.variants.split(","):
            p = VARIANTS[name]
            full = dict(dict(bm=128, bn=128, bk=16, wm=64, wn=64, stages=2, layout="scalar", rnd="iadd"), **p)
            if m % full["bm"] or n % full["bn"] or k % full["bk"]:
                continue
            if local_bytes(**full) > dev.local_mem_size:
                print(f"{spec} {name:22s} needs {local_bytes(**full)} bytes of local memory")
                continue
            try:
                prg = cl.Program(ctx, async_kernel(**full)).build(options=["-cl-nv-verbose"])
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                print(f"{spec} {name}: build failed: {' '.join(str(exc).split())[:600]}")
                continue
            kern = prg.gemm
            items = 32 * (full["bm"] // full["wm"]) * (full["bn"] // full["wn"])
            gsz, lsz = (n // full["bn"] * items, m // full["bm"]), (items, 1)
            sizes = (np.int32(m), np.int32(n), np.int32(k))
            t = event_seconds(lambda: kern(q, gsz, lsz, *sizes, da, db, dc), args.repeat)
            c = np.empty((m, n), np.float32)
            cl.enqueue_copy(q, c, dc)
            log = " ".join(prg.get_build_info(dev, cl.program_build_info.LOG).split())
            regs = re.search(r"Used (\d+) registers", log)
            spill = re.search(r"(\d+) bytes spill stores", log)
            print(f"{spec} {name:22s} {t * 1e3:8.3f} ms {flops / t / 1e12:7.1f} TFLOP/s err {error(c, a, b, rows):.2e}"
                  f" regs={regs.group(1) if regs else '?'} spill={spill.group(1) if spill else '?'}"
                  f" local={local_bytes(**full)} [{ptx_counts(prg)}]")


if __name__ == "__main__":
    main()
