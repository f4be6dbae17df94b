"""Sum of 2^26 floats on PoCL: generated kernels versus numpy.sum and a hand-written
float8 OpenCL kernel, all measured in this run (kernel times from profiling events,
median of repeats after warm-up).

    python benchmarks/sum_pocl.py [--log2n 26] [--repeat 10]

Variants: the seed's vecSum strategy (work-group tree in local memory, functional.schedules)
with a few block sizes, a CPU-shaped low-level program written here (each work-item sums a
contiguous chunk with float8 vectors; a second kernel adds the partial sums), and the same
shape derived by rules from `reduce (+) 0 xs` (schedules.chunked_sum: reduce_split,
reduce_vectorize, lowering).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dpia  # noqa: E402
import functional as fl  # noqa: E402
from codegen_opencl.runtime import choose_device, describe  # noqa: E402
from functional import schedules  # noqa: E402
from functional.derivation import derive  # noqa: E402

HAND = """
kernel void partial(global const float* x, global float* part, const int per_item) {
  const int gid = get_global_id(0);
  float8 acc = (float8)(0.0f);
  const int base = gid * per_item;
  /* a float8 pointer, not vload8: this PoCL calls vload8 as a function (3x slower) */
  for (int i = 0; i < per_item; ++i) acc += ((global const float8*)x)[base + i];
  part[gid] = acc.s0 + acc.s1 + acc.s2 + acc.s3 + acc.s4 + acc.s5 + acc.s6 + acc.s7;
}
kernel void combine(global const float* part, global float* out, const int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc += part[i];
  out[0] = acc;
}
"""


def hand_kernel_time(x: np.ndarray, items: int, repeat: int) -> tuple[float, float]:
    import pyopencl as cl

    dev = choose_device()
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    prg = cl.Program(ctx, HAND).build()
    k_partial, k_combine = cl.Kernel(prg, "partial"), cl.Kernel(prg, "combine")
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    part = cl.Buffer(ctx, mf.READ_WRITE, items * 4)
    out = cl.Buffer(ctx, mf.READ_WRITE, 4)
    per_item = x.size // 8 // items

    def run():
        k_partial.set_args(xb, part, np.int32(per_item))
        e1 = cl.enqueue_nd_range_kernel(q, k_partial, (items,), None)
        k_combine.set_args(part, out, np.int32(items))
        e2 = cl.enqueue_nd_range_kernel(q, k_combine, (1,), None)
        e2.wait()
        return (e2.profile.end - e1.profile.start) * 1e-9

    for _ in range(2):
        run()
    times = [run() for _ in range(repeat)]
    result = np.empty(1, np.float32)
    cl.enqueue_copy(q, result, out)
    return float(np.median(times)), float(result[0])


def chunked_vector_sum(n_var, chunk: int):
    """Each work-item: a float8 accumulator over `chunk` vectors; then a sequential sum."""
    return fl.fun([fl.array(n_var, fl.f32)], lambda xs: fl.reduce_seq(fl.add, 0.0, fl.as_scalar(fl.to_global(
        fl.map_global(lambda c: fl.reduce_seq(lambda a, v: a + v, fl.cast(fl.vec(fl.f32, 8), 0.0), c),
                      fl.split(chunk, fl.as_vector(8, xs)))))))


def chunked_vector_sum_lanes(n_var, chunk: int):
    """As chunked_vector_sum, but each work-item adds its vector's lanes before storing."""
    def per_item(c):
        total = fl.reduce_seq(lambda a, v: a + v, fl.cast(fl.vec(fl.f32, 8), 0.0), c)
        return fl.let(total, lambda v: fl.reduce_seq_unroll(fl.add, 0.0, fl.as_scalar(fl.generate(1, lambda i: v))))

    return fl.fun([fl.array(n_var, fl.f32)], lambda xs: fl.reduce_seq(fl.add, 0.0, fl.to_global(
        fl.map_global(per_item, fl.split(chunk, fl.as_vector(8, xs))))))


def numpy_time(x: np.ndarray, repeat: int) -> float:
    times = []
    for _ in range(repeat + 2):
        t = time.perf_counter()
        x.sum()
        times.append(time.perf_counter() - t)
    return float(np.median(times[2:]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args(argv)
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    want = float(np.sum(x, dtype=np.float64))
    gbytes = n * 4 / 1e9
    print(f"device: {describe(choose_device())}; n = 2^{args.log2n}")
    t_np = numpy_time(x, args.repeat)
    t_hand, r_hand = hand_kernel_time(x, 1024, args.repeat)
    print(f"{'numpy.sum':40s} {t_np * 1e3:8.2f} ms {gbytes / t_np:7.1f} GB/s")
    print(f"{'hand float8 kernel (1024 items)':40s} {t_hand * 1e3:8.2f} ms {gbytes / t_hand:7.1f} GB/s  "
          f"rel.err {abs(r_hand - want) / want:.1e}")
    total = fl.fun([fl.array(fl.nat("N", multiple_of=1 << 16), fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
    variants = {f"chunked float8 sum, chunk {c}": chunked_vector_sum(fl.nat("N", multiple_of=8 * c), c)
                for c in (1 << (args.log2n - 3 - 10), 1 << (args.log2n - 3 - 11))}
    for c in (1 << (args.log2n - 3 - 10), 1 << (args.log2n - 3 - 11)):
        variants[f"chunked float8, lanes summed, chunk {c}"] = chunked_vector_sum_lanes(
            fl.nat("N", multiple_of=8 * c), c)
    for chunk in (1 << (args.log2n - 3 - 10), 1 << (args.log2n - 3 - 11)):  # 1024 and 2048 work-items
        variants[f"chunked_sum strategy, chunk {chunk}"] = derive(total, schedules.chunked_sum(chunk, 8))[0]
    for block, local in ((1 << 14, 128), (1 << 16, 128)):
        variants[f"seed vecSum (block {block}, local {local})"] = derive(total, schedules.vec_sum(block, local))[0]
    derived = {name for name in variants if "strategy" in name or name.startswith("seed vecSum")}
    best, best_derived = None, 0.0
    for name, prog in variants.items():
        kernel = dpia.compile(prog)
        got = float(kernel(x))
        t = kernel.time(x, repeat=args.repeat)
        ratio = t_hand / t
        best = max(best or 0.0, ratio)
        if name in derived:  # derived by rules from reduce (+) 0 xs, not written here
            best_derived = max(best_derived, ratio)
        print(f"{name:40s} {t * 1e3:8.2f} ms {gbytes / t:7.1f} GB/s  {ratio:5.2f}x hand  "
              f"{t_np / t:5.2f}x numpy  rel.err {abs(got - want) / want:.1e}")
    print(f"best generated / hand kernel: {best:.2f}")
    print(f"best derived by a named strategy / hand kernel: {best_derived:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
