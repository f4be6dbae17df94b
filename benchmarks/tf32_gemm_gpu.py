"""The TF32 tensor-core matrix product written in the language (examples/tf32_gemm.py) on an NVIDIA
GPU, against cuBLAS through torch (TF32 on, and off: the float32 rate) and the hand-written kernels
of benchmarks/tf32_hand.py, all in the same run; each kernel's error against the float64 product.

    source benchmarks/h200_env.sh && python3 benchmarks/tf32_gemm_gpu.py [--sizes 4096x4096x4096,...]
        [--shapes 128x128x64x64x32,...] [--hand w4_128x128_db,...] [--default]

A shape is bm x bn x wm x wn x kc (examples/tf32_gemm.mm_tf32: blocks, warps, k-chunks).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def cuda_time(torch, fn, repeat: int) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3)
    return float(np.median(times))


def error(c: np.ndarray, a: np.ndarray, b: np.ndarray, rows: np.ndarray) -> float:
    """max |C - AB| / max |AB| over `rows`, AB in float64."""
    want = a[rows].astype(np.float64) @ b.astype(np.float64)
    return float(np.abs(c[rows] - want).max() / np.abs(want).max())


def operands(spec: str, rng):
    """(m, n, k, A, B, sampled rows, flops) of a size `MxNxK`: random float32 operands."""
    m, n, k = (int(x) for x in spec.split("x"))
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    return m, n, k, a, b, rng.choice(m, 32, replace=False), 2.0 * m * n * k


def event_seconds(call, repeat: int) -> float:
    """Median seconds of `call()`'s OpenCL event (profiling), after one run to warm up."""
    call().wait()
    times = []
    for _ in range(repeat):
        ev = call()
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    return float(np.median(times))


def cublas_times(torch, a: np.ndarray, b: np.ndarray, rows: np.ndarray, repeat: int, spec: str) -> dict[bool, float]:
    """cuBLAS through torch on a @ b with TF32 on and off, each printed with its error against
    float64 on `rows`: {TF32 on: seconds}."""
    flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    refs = {}
    for tf32_on in (True, False):
        torch.backends.cuda.matmul.allow_tf32 = tf32_on
        refs[tf32_on] = t = cuda_time(torch, lambda: ta @ tb, repeat)
        err = error((ta @ tb).cpu().numpy(), a, b, rows)
        print(f"{spec} cuBLAS TF32 {'on ' if tf32_on else 'off'}        {t * 1e3:8.3f} ms {flops / t / 1e12:7.1f} "
              f"TFLOP/s  err {err:.2e}", flush=True)
    del ta, tb
    torch.cuda.empty_cache()
    return refs


def cuda_torch():
    """torch where it is installed and sees a CUDA device (the references), else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def compiled_time(low, a: np.ndarray, b: np.ndarray, device, repeat: int):
    """(seconds, result, build seconds, kernel) of the low-level program `low` compiled for `device`."""
    import dpia

    t0 = time.perf_counter()
    kernel = dpia.compile(low, device=device)
    bound = kernel.bind(a, b)
    build = time.perf_counter() - t0
    return bound.time(repeat=repeat), kernel(a, b), build, kernel


def ptx_counts(program) -> str:
    """Static counts in the PTX the NVIDIA driver returns: mma, shared loads (by width), conversions."""
    import re

    try:
        ptx = program.binaries[0].decode("latin-1")
    except Exception:  # noqa: BLE001 -- not every platform returns its binary as text
        return ""
    counts = {name: len(re.findall(pat, ptx)) for name, pat in (
        ("mma", r"mma\.sync"), ("ld.shared", r"ld\.shared\.[fbu]32"), ("ld.shared.v2", r"ld\.shared\.v2"),
        ("ld.shared.v4", r"ld\.shared\.v4"), ("cvt.rna", r"cvt\.rna"), ("bar", r"bar\.sync"),
        ("cp.async", r"cp\.async\.c[ag]"), ("ld.local", r"ld\.local"), ("st.local", r"st\.local"))}
    target = re.search(r"\.target\s+(\S+)", ptx)
    return (f"target={target.group(1)} " if target else "") + " ".join(f"{k}={v}" for k, v in counts.items())


def tf32_mm():
    """mm whose dot products multiply TF32 values: the high-level program mm_tensor_cores derives from."""
    import functional as fl

    m, n, k = fl.nat("M", multiple_of=128), fl.nat("N", multiple_of=128), fl.nat("K", multiple_of=8)
    return fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))], lambda a, b: fl.map(
        lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
            lambda p: fl.tf32(fl.fst(p)) * fl.tf32(fl.snd(p)), fl.zip(r, c))), fl.transpose(b)), a))


def main() -> None:
    import pyopencl as cl

    import dpia
    import functional as fl
    import tf32_hand
    from functional import schedules as sch
    from functional.derivation import derive
    from codegen_opencl.runtime import choose_device, describe, device_intrinsics, session_for
    from examples.tf32_gemm import mm_tf32

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192,1024x1024x1024")
    ap.add_argument("--shapes", default="128x128x64x64x32,128x256x64x64x32,64x64x64x64x32,128x128x64x32x32,"
                                         "128x128x64x64x16")
    ap.add_argument("--staging", default="flat,rows", help="how the tiles are staged (mm_tf32's staging)")
    ap.add_argument("--derived", default="64x64x32x32,128x128x64x64,128x128x64x32",
                    help="bm x bn x wm x wn of functional.schedules.mm_tensor_cores on mm with TF32 products")
    ap.add_argument("--hand", default="w1_64x64,w4_128x128_db")
    ap.add_argument("--default", action="store_true",
                    help="also the default lowering of mm with TF32 products (dpia.compile of the high-level program: "
                         "on a device with tensor cores, its tensor_cores phase)")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    dev = choose_device()
    sess = session_for(dev)
    print("device:", describe(dev), "intrinsics:", sorted(device_intrinsics(dev)))
    rng = np.random.default_rng(0)
    import torch

    for spec in args.sizes.split(","):
        m, n, k, a, b, rows, flops = operands(spec, rng)
        refs = cublas_times(torch, a, b, rows, args.repeat, spec)
        def measure(label: str, low_level) -> None:
            """Build and time the low-level program `low_level()` makes; one line of results."""
            try:
                t, c, build, kernel = compiled_time(low_level(), a, b, dev, args.repeat)
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                print(f"{spec} {label}: {type(exc).__name__}: {str(exc)[:600]}", flush=True)
                return
            print(f"{spec} {label:40s} {t * 1e3:8.3f} ms {flops / t / 1e12:7.1f} TFLOP/s  err {error(c, a, b, rows):.2e}  "
                  f"{refs[True] / t:.2f}x cuBLAS TF32  {refs[False] / t:.2f}x cuBLAS fp32  (build {build:.1f} s)  "
                  f"{ptx_counts(getattr(kernel, 'kernel', kernel)._cl_program)}", flush=True)

        for shape, staging in ((sh, st) for sh in filter(None, args.shapes.split(",")) for st in args.staging.split(",")):
            bm, bn, wm, wn, kc = (int(x) for x in shape.split("x"))
            if not (m % bm or n % bn or k % kc):
                measure(f"mm_tf32({shape} {staging})", lambda: mm_tf32(bm, bn, wm, wn, kc, staging))
        for shape in filter(None, args.derived.split(",")):
            bm, bn, wm, wn = (int(x) for x in shape.split("x"))
            if not (m % bm or n % bn or k % 8):
                measure(f"mm_tensor_cores({shape})",
                        lambda: derive(fl.infer(tf32_mm()), sch.mm_tensor_cores(bm, bn, wm, wn))[0])
        if args.default:
            measure("default lowering (dpia.compile)", tf32_mm)
        mf = cl.mem_flags
        da = cl.Buffer(sess.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        db = cl.Buffer(sess.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        dc = cl.Buffer(sess.context, mf.WRITE_ONLY, m * n * 4)
        for name in filter(None, args.hand.split(",")):
            p = dict(dict(bm=128, bn=128, wm=64, wn=64, kc=32, pad=4, db=False), **tf32_hand.VARIANTS[name])
            if m % p["bm"] or n % p["bn"] or k % p["kc"]:
                continue
            built = cl.Program(sess.context, tf32_hand.gemm_kernel(**p)).build()
            kern = built.gemm
            items = 32 * (p["bm"] // p["wm"]) * (p["bn"] // p["wn"])
            gsz, lsz = (n // p["bn"] * items, m // p["bm"]), (items, 1)

            def call():
                return kern(sess.queue, gsz, lsz, np.int32(m), np.int32(n), np.int32(k), da, db, dc)

            t = event_seconds(call, args.repeat)
            c = np.empty((m, n), np.float32)
            cl.enqueue_copy(sess.queue, c, dc)
            print(f"{spec} hand {name:22s} {t * 1e3:8.3f} ms {flops / t / 1e12:7.1f} TFLOP/s  err "
                  f"{error(c, a, b, rows):.2e}  {refs[True] / t:.2f}x cuBLAS TF32  {refs[False] / t:.2f}x cuBLAS fp32  "
                  f"{ptx_counts(built)}", flush=True)


if __name__ == "__main__":
    main()
