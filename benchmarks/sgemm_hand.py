"""Hand-written OpenCL SGEMM kernels on the GPU versus cuBLAS (torch, TF32 off), in the same
run: the references that tell which kernel features the generated ones need.

    bash benchmarks/h200.sh hand [--sizes 4096x4096x4096] [--repeat 10]

Every kernel computes C = A B (row-major, float32) with a TM x TN tile per work-group of
(TN/WN) x (TM/WM) items, each item owning WM x WN results in registers.  Variants:

- `interleaved`: item (r, c) owns rows r + (TM/WM) i and columns c + (TN/WN) j, scalar
  reads of local tiles (the kernel of benchmarks/mm_gpu.py);
- `blocked4`: item (r, c) owns rows 4r + (TM/(WM/4)) h + {0..3} (h < WM/4), the same for
  columns ("runs of 4"): every item reads its fragments as float4 through float4 pointers
  into 16-byte aligned local arrays, A's tile stored k-major so that rows are contiguous,
  the tiles read from global memory as float4 (one or more per item);
  `vload4`: the same with vload4 (NVIDIA splits it into scalar loads);
  `scalar-local`: fragments read as scalars (the compiler merges them into 128-bit reads);
  `scalar-global`: tiles read from global memory as scalars;
- `db`: double-buffered local tiles (the next tile's global reads issued before the
  current tile's products, one barrier per k-tile);
- `padA4`, `padB4`: local rows padded by 4 floats.

Each line also prints static counts from the driver's PTX (`ld.shared.v4` = 128-bit local
reads, `fma`, `ld.global.v4`).  Results: benchmarks/sgemm_hand_h200.log, RESULTS.md.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codegen_opencl.runtime import choose_device, describe, session_for


def interleaved(tm=128, tn=128, tk=16, wm=8, wn=8, pad=1):
    rm, rn = tm // wm, tn // wn
    return f"""
#define TM {tm}
#define TN {tn}
#define TK {tk}
__attribute__((reqd_work_group_size({rn}, {rm}, 1)))
kernel void mm(const int M, const int N, const int K, global const float* restrict A,
               global const float* restrict B, global float* restrict C) {{
  const int c = get_local_id(0), r = get_local_id(1), tid = r * {rn} + c;
  const int row0 = TM * get_group_id(1), col0 = TN * get_group_id(0);
  local float As[TK][TM + {pad}];
  local float Bs[TK][TN];
  float acc[{wm}][{wn}];
  for (int i = 0; i < {wm}; i++)
    for (int j = 0; j < {wn}; j++) acc[i][j] = 0.0f;
  for (int t = 0; t < K / TK; t++) {{
    for (int l = 0; l < (TK * TM) / {rm * rn}; l++) {{
      const int id = l * {rm * rn} + tid;
      As[id % TK][id / TK] = A[(row0 + id / TK) * K + t * TK + id % TK];
    }}
    for (int l = 0; l < (TK * TN) / {rm * rn}; l++) {{
      const int id = l * {rm * rn} + tid;
      Bs[id / TN][id % TN] = B[(t * TK + id / TN) * N + col0 + id % TN];
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TK; k++) {{
      float bv[{wn}];
      for (int j = 0; j < {wn}; j++) bv[j] = Bs[k][c + {rn} * j];
      for (int i = 0; i < {wm}; i++) {{
        const float av = As[k][r + {rm} * i];
        for (int j = 0; j < {wn}; j++) acc[i][j] += av * bv[j];
      }}
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  for (int i = 0; i < {wm}; i++)
    for (int j = 0; j < {wn}; j++) C[(row0 + r + {rm} * i) * N + col0 + c + {rn} * j] = acc[i][j];
}}
""", (rn, rm), (tn, tm)


def blocked4(tm=128, tn=128, tk=8, wm=8, wn=8, vector_reads=True, double_buffer=False, global_v4=True, pada=0,
             padb=0, cast=True):
    """Item (r, c): rows 4r + (TM/(WM/4)) h + {0..3}, columns likewise; float4 fragments."""
    rm, rn = tm // wm, tn // wn
    items = rm * rn
    hm, hn = wm // 4, wn // 4
    sm, sn = tm // hm, tn // hn  # distance between an item's float4 groups
    nbuf = 2 if double_buffer else 1

    def frag(name, arr, k, base, step, count):
        if vector_reads and cast:  # a float4 pointer: the compiler may assume 16-byte alignment
            return "\n".join(f"      const float4 {name}{h} = *(local const float4*)&{arr}[{k}][{base} + {step * h}];"
                             for h in range(count))
        if vector_reads:
            return "\n".join(f"      const float4 {name}{h} = vload4(0, &{arr}[{k}][{base} + {step * h}]);"
                             for h in range(count))
        return "\n".join(f"      const float4 {name}{h} = (float4)({arr}[{k}][{base} + {step * h}], "
                         f"{arr}[{k}][{base} + {step * h} + 1], {arr}[{k}][{base} + {step * h} + 2], "
                         f"{arr}[{k}][{base} + {step * h} + 3]);" for h in range(count))

    # Global tile reads: A's tile TM x TK (k contiguous), B's TK x TN (n contiguous).
    def vload(arr, index):
        return f"*(global const float4*)&{arr}[{index}]" if cast else f"vload4(0, &{arr}[{index}])"

    def vstore(value, place):
        return f"*(local float4*)&{place} = {value};" if cast else f"vstore4({value}, 0, &{place});"

    width = 4 if global_v4 else 1
    if (tm * tk) % (width * items) or (tk * tn) % (width * items):
        raise ValueError("a tile's reads do not spread evenly over the items")
    if global_v4:
        a_loads = (tm * tk) // (4 * items)
        b_loads = (tk * tn) // (4 * items)
        load_regs = (f"float4 ra[{a_loads}], rb[{b_loads}];")
        load = "\n".join(
            [f"    ra[{l}] = {vload('A', f'(row0 + ({l * items} + tid) / (TK / 4)) * K + t * TK + 4 * (({l * items} + tid) % (TK / 4))')};"
             for l in range(a_loads)]
            + [f"    rb[{l}] = {vload('B', f'(t * TK + ({l * items} + tid) / (TN / 4)) * N + col0 + 4 * (({l * items} + tid) % (TN / 4))')};"
               for l in range(b_loads)])
        store = "\n".join(
            [f"    {{ const int id = {l * items} + tid; const int rr = id / (TK / 4), kk = 4 * (id % (TK / 4));\n"
             f"      As[buf][kk][rr] = ra[{l}].x; As[buf][kk + 1][rr] = ra[{l}].y; "
             f"As[buf][kk + 2][rr] = ra[{l}].z; As[buf][kk + 3][rr] = ra[{l}].w; }}" for l in range(a_loads)]
            + [f"    {{ const int id = {l * items} + tid; {vstore(f'rb[{l}]', 'Bs[buf][id / (TN / 4)][4 * (id % (TN / 4))]')} }}"
               for l in range(b_loads)])
    else:
        a_loads = (tm * tk) // items
        b_loads = (tk * tn) // items
        load_regs = f"float ra[{a_loads}], rb[{b_loads}];"
        load = "\n".join(
            [f"    ra[{l}] = A[(row0 + ({l * items} + tid) / TK) * K + t * TK + ({l * items} + tid) % TK];"
             for l in range(a_loads)]
            + [f"    rb[{l}] = B[(t * TK + ({l * items} + tid) / TN) * N + col0 + ({l * items} + tid) % TN];"
               for l in range(b_loads)])
        store = "\n".join(
            [f"    As[buf][({l * items} + tid) % TK][({l * items} + tid) / TK] = ra[{l}];" for l in range(a_loads)]
            + [f"    Bs[buf][({l * items} + tid) / TN][({l * items} + tid) % TN] = rb[{l}];" for l in range(b_loads)])

    products = "\n".join(f"      acc[{4 * h + i}][{4 * g + j}] += a{h}.s{i} * b{g}.s{j};"
                         for h in range(hm) for i in range(4) for g in range(hn) for j in range(4))
    compute = f"""    for (int k = 0; k < TK; k++) {{
{frag('a', 'As[buf]', 'k', '4 * r', sm, hm)}
{frag('b', 'Bs[buf]', 'k', '4 * c', sn, hn)}
{products}
    }}"""
    if double_buffer:
        body = f"""  int buf = 0;
  {{ const int t = 0;
{load}
{store}
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = 0; t < K / TK; t++) {{
    const int more = t + 1 < K / TK;
    if (more) {{ const int t1 = t + 1; {{ const int t = t1;
{load}
    }} }}
{compute}
    if (more) {{ buf ^= 1;
{store}
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}"""
    else:
        body = f"""  const int buf = 0;
  for (int t = 0; t < K / TK; t++) {{
{load}
{store}
    barrier(CLK_LOCAL_MEM_FENCE);
{compute}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}"""
    out = "*(global float4*)&C[{}] = {};" if cast else "vstore4({1}, 0, &C[{0}]);"
    stores = "\n".join(
        "  " + out.format(f"(row0 + 4 * r + {sm * h} + {i}) * N + col0 + 4 * c + {sn * g}",
                          f"(float4)(acc[{4 * h + i}][{4 * g}], acc[{4 * h + i}][{4 * g + 1}], "
                          f"acc[{4 * h + i}][{4 * g + 2}], acc[{4 * h + i}][{4 * g + 3}])")
        for h in range(hm) for i in range(4) for g in range(hn))
    src = f"""
#define TM {tm}
#define TN {tn}
#define TK {tk}
__attribute__((reqd_work_group_size({rn}, {rm}, 1)))
kernel void mm(const int M, const int N, const int K, global const float* restrict A,
               global const float* restrict B, global float* restrict C) {{
  const int c = get_local_id(0), r = get_local_id(1), tid = r * {rn} + c;
  const int row0 = TM * get_group_id(1), col0 = TN * get_group_id(0);
  local float As[{nbuf}][TK][TM + {pada}] __attribute__((aligned(16)));
  local float Bs[{nbuf}][TK][TN + {padb}] __attribute__((aligned(16)));
  float acc[{wm}][{wn}];
  for (int i = 0; i < {wm}; i++)
    for (int j = 0; j < {wn}; j++) acc[i][j] = 0.0f;
  {load_regs}
{body}
{stores}
}}
"""
    return src, (rn, rm), (tn, tm)


VARIANTS = {
    "interleaved 128x128x16 8x8 pad1": lambda: interleaved(),
    "interleaved 128x64x16 8x4 pad1": lambda: interleaved(128, 64, 16, 8, 4),
    "blocked4 128x128x8 8x8 vload4": lambda: blocked4(cast=False),
    "blocked4 128x128x8 8x8 scalar-local": lambda: blocked4(vector_reads=False),
    "blocked4 128x128x8 8x8": lambda: blocked4(),
    "blocked4 128x128x8 8x8 scalar-global": lambda: blocked4(global_v4=False),
    "blocked4 128x128x16 8x8": lambda: blocked4(tk=16),
    "blocked4 128x128x8 8x8 db": lambda: blocked4(double_buffer=True),
    "blocked4 128x128x16 8x8 db": lambda: blocked4(tk=16, double_buffer=True),
    "blocked4 128x128x8 8x8 scalar-global db": lambda: blocked4(global_v4=False, double_buffer=True),
    "blocked4 128x128x16 8x8 scalar-global db": lambda: blocked4(tk=16, global_v4=False, double_buffer=True),
    "blocked4 128x64x16 8x4": lambda: blocked4(128, 64, 16, 8, 4),
    "blocked4 128x64x16 8x4 db": lambda: blocked4(128, 64, 16, 8, 4, double_buffer=True),
    "blocked4 64x64x16 4x4": lambda: blocked4(64, 64, 16, 4, 4),
    "blocked4 128x128x8 8x8 padA4": lambda: blocked4(pada=4),
    "blocked4 128x128x8 8x8 padA4 padB4": lambda: blocked4(pada=4, padb=4),
    "blocked4 256x128x8 16x8": lambda: blocked4(256, 128, 8, 16, 8),
    "blocked4 128x256x8 8x16": lambda: blocked4(128, 256, 8, 8, 16),
    "blocked4 64x128x16 4x8": lambda: blocked4(64, 128, 16, 4, 8),
}


def ptx_counts(program) -> str:
    """Shared-memory load widths and FMA count in the PTX the NVIDIA driver returns."""
    try:
        ptx = program.binaries[0].decode("latin-1")
    except Exception:  # noqa: BLE001 -- not every platform returns its binary as text
        return ""
    counts = {name: len(re.findall(pat, ptx)) for name, pat in (
        ("ld.shared.v4", r"ld\.shared\.v4\.\w+"), ("ld.shared.v2", r"ld\.shared\.v2\.\w+"),
        ("ld.shared", r"ld\.shared\.[fbu]32"), ("fma", r"fma\.rn\.f32"), ("ld.global.v4", r"ld\.global(\.nc)?\.v4\.\w+"))}
    return " ".join(f"{k}={v}" for k, v in counts.items())


def run_variant(sess, src, local, per_group, a, b, repeat, options=()):
    import pyopencl as cl

    m, k = a.shape
    n = b.shape[1]
    tn, tm = per_group
    if m % tm or n % tn:
        return None, None, "sizes not multiples of the tile"
    program = sess.build(src, list(options))
    kern = cl.Kernel(program, "mm")
    mf = cl.mem_flags
    ab = cl.Buffer(sess.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    bb = cl.Buffer(sess.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    cb = cl.Buffer(sess.context, mf.READ_WRITE, m * n * 4)
    kern.set_args(np.int32(m), np.int32(n), np.int32(k), ab, bb, cb)
    glob = (n // tn * local[0], m // tm * local[1])
    times = []
    for _ in range(repeat + 2):
        ev = cl.enqueue_nd_range_kernel(sess.queue, kern, glob, local)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    c = np.empty((m, n), np.float32)
    cl.enqueue_copy(sess.queue, c, cb)
    return float(np.median(times[2:])), c, ptx_counts(program)


def main(argv=None) -> int:
    from mm_gpu import cublas_time

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096x4096x4096")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--only", default="")
    ap.add_argument("--options", default="", help="OpenCL build options")
    args = ap.parse_args(argv)
    device = choose_device()
    sess = session_for(device)
    print(f"device: {describe(device)}", flush=True)
    rng = np.random.default_rng(0)
    for spec in args.sizes.split(","):
        m, n, k = (int(v) for v in spec.split("x"))
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        flops = 2.0 * m * n * k
        try:
            t_ref, ref = cublas_time(a, b, args.repeat)
        except ImportError:  # no torch (the CPU machine): numpy is the reference
            import time
            t0 = time.perf_counter()
            ref = a @ b
            t_ref = time.perf_counter() - t0
        print(f"{spec} reference {t_ref * 1e3:.3f} ms {flops / t_ref / 1e12:.2f} TFLOP/s", flush=True)
        for name, make in VARIANTS.items():
            if args.only and not any(w in name for w in args.only.split(",")):
                continue
            try:
                src, local, per_group = make()
                t, c, info = run_variant(sess, src, local, per_group, a, b, args.repeat, args.options.split())
                if t is None:
                    print(f"{spec} {name:48s} skipped: {info}")
                    continue
                err = float(np.linalg.norm(c - ref) / np.linalg.norm(ref))
                print(f"{spec} {name:48s} {t * 1e3:8.3f} ms {flops / t / 1e12:6.2f} TFLOP/s {t_ref / t:6.3f}x "
                      f"err {err:.1e} {info}", flush=True)
            except Exception as exc:  # noqa: BLE001 -- a failing variant is reported, the run goes on
                print(f"{spec} {name:48s} FAILED {type(exc).__name__}: {str(exc)[:400]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
