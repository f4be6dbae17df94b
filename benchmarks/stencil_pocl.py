"""The stencils' default lowering (no tuning database), timed against a hand-written OpenCL
Jacobi 2D kernel measured in the same run on the same device.

    python benchmarks/stencil_pocl.py                        # PoCL, 2048^2 grids, 128^3 volumes, 2^22 vector
    python benchmarks/stencil_pocl.py --device nvidia --grid 8192 --volume 512 --vector 67108864

The device is chosen as everywhere (codegen_opencl.runtime.choose_device): --device, a
substring of "platform: device", else $DPIA_DEVICE, else PoCL.  Each program is checked
against its NumPy reference before it is timed (median of --repeat runs, profiling events);
GB/s counts the inputs read and the output written once.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

HAND_JACOBI = """
kernel void jacobi2d_hand(global const float* restrict g, global float* restrict out, const int h, const int w) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const float up = y > 0 ? g[i - w] : 0.0f, down = y + 1 < h ? g[i + w] : 0.0f;
  const float left = x > 0 ? g[i - 1] : 0.0f, right = x + 1 < w ? g[i + 1] : 0.0f;
  out[i] = 0.2f * (g[i] + up + down + left + right);
}
"""


def _targets(grid: int, volume: int, vector: int):
    """(name, program, inputs, reference) of each stencil at the given sizes."""
    import seed
    import suite

    rng = np.random.default_rng(0)
    by_name = suite.BY_NAME
    out = []
    for name in ("jacobi2d_5", "jacobi2d_5_clamp_sum", "jacobi2d_9", "stencil2d", "hotspot2d"):
        e = by_name[name]
        out.append((name, e.program, tuple(e.make_inputs(rng, h=grid, w=grid)), e.reference))
    for name in ("jacobi3d_7", "hotspot3d"):
        e = by_name[name]
        out.append((name, e.program, tuple(e.make_inputs(rng, d=volume, h=volume, w=volume)), e.reference))
    xs = rng.standard_normal(vector, dtype=np.float32)
    padded = np.pad(xs.astype(np.float64), 1, mode="edge")
    out.append(("stencil1d (seed)", seed.stencil, (xs,), lambda v: padded[:-2] + padded[1:-1] + padded[2:]))
    return out


def _hand_jacobi(device, grid: np.ndarray, repeat: int) -> tuple[float, np.ndarray]:
    import pyopencl as cl

    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    prog = cl.Program(ctx, HAND_JACOBI).build()
    h, w = grid.shape
    mf = cl.mem_flags
    src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=grid)
    dst = cl.Buffer(ctx, mf.WRITE_ONLY, grid.nbytes)
    local = (min(w, 64), 1) if device.type & cl.device_type.GPU else None
    size = (w, h) if local is None else (-(-w // local[0]) * local[0], h)
    kernel = cl.Kernel(prog, "jacobi2d_hand")
    kernel.set_args(src, dst, np.int32(h), np.int32(w))
    times = []
    for k in range(repeat + 2):
        ev = cl.enqueue_nd_range_kernel(queue, kernel, size, local)
        ev.wait()
        if k >= 2:
            times.append((ev.profile.end - ev.profile.start) * 1e-9)
    out = np.empty_like(grid)
    cl.enqueue_copy(queue, out, dst).wait()
    return float(np.median(times)), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="a substring of 'platform: device' (else $DPIA_DEVICE, else PoCL)")
    ap.add_argument("--grid", type=int, default=2048, help="side of the 2D grids")
    ap.add_argument("--volume", type=int, default=128, help="side of the 3D volumes")
    ap.add_argument("--vector", type=int, default=1 << 22, help="length of the 1D stencil's vector")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--only", nargs="*", help="names of the programs to time (default: all)")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)

    import dpia
    from codegen_opencl.runtime import choose_device, describe
    from dpia.programs import relative_error

    device = choose_device(args.device)
    print(f"device: {describe(device)}")
    rows = []
    for name, program, inputs, reference in _targets(args.grid, args.volume, args.vector):
        if args.only and name not in args.only:
            continue
        kernel = dpia.compile(program, device=device, db=False)
        got = kernel(*inputs)
        error = relative_error(got, reference(*inputs))
        seconds = kernel.time(*inputs, repeat=args.repeat)
        nbytes = sum(np.asarray(x).nbytes for x in inputs) + np.asarray(got).nbytes
        rows.append({"program": name, "variant": kernel.variant.kind, "ms": seconds * 1e3,
                     "GB/s": nbytes / seconds / 1e9, "relative_error": error,
                     "shape": [list(np.shape(x)) for x in inputs]})
        print(f"{name:22s} {kernel.variant.kind:8s} {seconds * 1e3:9.3f} ms {nbytes / seconds / 1e9:8.2f} GB/s"
              f"  error {error:.1e}", flush=True)
    if not args.only or "jacobi2d_hand" in args.only:
        import suite

        grid = suite.BY_NAME["jacobi2d_5"].make_inputs(np.random.default_rng(0), h=args.grid, w=args.grid)[0]
        seconds, out = _hand_jacobi(device, grid, args.repeat)

        error = relative_error(out, suite.ref_jacobi2d_5(grid))
        nbytes = 2 * grid.nbytes
        rows.append({"program": "jacobi2d_hand", "variant": "hand", "ms": seconds * 1e3,
                     "GB/s": nbytes / seconds / 1e9, "relative_error": error, "shape": [list(grid.shape)]})
        print(f"{'jacobi2d_5 hand-written':22s} {'hand':8s} {seconds * 1e3:9.3f} ms {nbytes / seconds / 1e9:8.2f} GB/s"
              f"  error {error:.1e}")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": describe(device), "grid": args.grid, "volume": args.volume,
                                               "vector": args.vector, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
