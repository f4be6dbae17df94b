"""Sum of 2^28 floats on a GPU through OpenCL: generated two-stage vecSum programs (scalar
and float4 loads, several block/local sizes) versus a hand-written float4 OpenCL kernel
and torch.sum (CUDA events), all in this run.  Bandwidth counts the bytes read once.

    bash benchmarks/h200.sh          # on the lent H200 (sets up OpenCL first)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dpia  # noqa: E402
from codegen_opencl.runtime import choose_device, describe  # noqa: E402
from sum_programs import two_stage_sum  # noqa: E402

HAND = """
kernel void partial(global const float4* x, global float* part, const int n4) {
  local float tmp[LOCAL];
  float4 acc = (float4)(0.0f);
  for (int i = get_global_id(0); i < n4; i += get_global_size(0)) acc += x[i];
  tmp[get_local_id(0)] = acc.x + acc.y + acc.z + acc.w;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = LOCAL / 2; s > 0; s >>= 1) {
    if (get_local_id(0) < s) tmp[get_local_id(0)] += tmp[get_local_id(0) + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (get_local_id(0) == 0) part[get_group_id(0)] = tmp[0];
}
"""
HAND_SHAPES = [(groups_per_unit, local) for groups_per_unit in (2, 4, 8, 16, 32) for local in (256, 512, 1024)]


def hand_time(x, repeat, groups_per_unit: int = 8, local: int = 256):
    """Median seconds (profiling events) of the hand-written float4 grid-stride first stage with
    `groups_per_unit` work-groups of `local` items per compute unit, and its partial sums' total
    (the second stage, a few thousand floats, is left out: this is a bound on a whole sum)."""
    import pyopencl as cl

    device = choose_device()
    ctx = cl.Context([device])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    k = cl.Kernel(cl.Program(ctx, HAND).build(options=[f"-DLOCAL={local}"]), "partial")
    xb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    groups = device.max_compute_units * groups_per_unit
    part = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, groups * 4)
    k.set_args(xb, part, np.int32(x.size // 4))
    times = []
    for _ in range(repeat + 3):
        e = cl.enqueue_nd_range_kernel(q, k, (groups * local,), (local,))
        e.wait()
        times.append((e.profile.end - e.profile.start) * 1e-9)
    host = np.empty(groups, np.float32)
    cl.enqueue_copy(q, host, part)
    return float(np.median(times[3:])), float(host.astype(np.float64).sum())


def best_hand_time(x, repeat) -> tuple[float, str]:
    """The fastest hand-written first stage over HAND_SHAPES: (seconds, its shape)."""
    timed = [(hand_time(x, repeat, g, local)[0], f"{g} groups/unit x {local}") for g, local in HAND_SHAPES]
    return min(timed)


def torch_time(x, repeat):
    try:
        import torch
    except ImportError:
        return None, None
    t = torch.from_numpy(x).cuda()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat + 3):
        start.record()
        s = t.sum()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return float(np.median(times[3:])), float(s.item())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    n = 1 << args.log2n
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    want = float(x.astype(np.float64).sum())
    tb = n * 4 / 1e12
    print(f"device: {describe(choose_device())}; n = 2^{args.log2n}", flush=True)
    rows = []
    t_hand, r_hand = hand_time(x, args.repeat)
    rows.append(("hand float4 OpenCL (grid-stride + tree)", t_hand, r_hand))
    t_torch, r_torch = torch_time(x, args.repeat)
    if t_torch:
        rows.append(("torch.sum", t_torch, r_torch))
    for block, local, width in [(1 << 14, 256, 4), (1 << 15, 256, 4), (1 << 16, 512, 4), (1 << 15, 1024, 4),
                                (1 << 13, 256, 1), (1 << 14, 512, 1)]:
        name = f"generated vecSum x2 block {block} local {local} w{width}"
        try:
            kernel = dpia.compile(two_stage_sum(n, block, local, width, 1024))
            got = float(kernel(x))
            rows.append((name, kernel.time(x, repeat=args.repeat), got))
        except Exception as exc:  # noqa: BLE001 -- a variant that fails is reported, not fatal
            print(f"{name}: FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    print(f"{'variant':48s} {'ms':>8s} {'TB/s':>6s} {'x hand':>7s} rel.err")
    for name, t, got in rows:
        print(f"{name:48s} {t * 1e3:8.3f} {tb / t:6.2f} {t_hand / t:7.2f} {abs(got - want) / want:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
