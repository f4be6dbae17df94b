"""The default lowering's kernels without work-groups at several local shapes: the driver's
choice (a NULL local size, what `dpia run` launches) against fixed shapes per dimension, each
checked against the float64 reference and timed from profiling events, beside the device copy
of the same bytes and torch.compile of the same NumPy function (explore_suite.gpu_references),
in the same run.  What it answers: does the launch shape, not the kernel, keep a memory-bound
default below the copy?

    python benchmarks/default_shapes_gpu.py [NAME:size=value,... ...] [--repeat 20]

Targets as in explore_suite.py (default: the suite's memory-bound stencils and maps at the Lift
papers' sizes).  Runs on any device; on a CPU the shapes are timed against float32 NumPy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_suite import _median_s, gpu_references  # noqa: E402 -- the same references
from lockstep_gpu import each_target, show, target_arguments  # noqa: E402

TARGETS = ("jacobi2d_5:h=8192,w=8192", "hotspot2d:h=8192,w=8192", "jacobi3d_7:d=512,h=512,w=512",
           "black_scholes:n=16777216", "kmeans:n=819200,k=5,f=34", "nn:n=33554432")
SHAPES = {1: [(64,), (128,), (256,), (512,), (1024,)],
          2: [(32, 4), (32, 8), (64, 4), (128, 2), (256, 1), (32, 16), (64, 8), (128, 4)],
          3: [(32, 4, 2), (32, 8, 1), (64, 4, 1), (128, 2, 1), (256, 1, 1), (32, 2, 4), (64, 2, 2)]}


def main(argv=None) -> int:
    import dpia
    from codegen_opencl.runtime import choose_device, device_identity
    from dpia.explore import program_bytes
    from dpia.explore.space import DeviceLimits
    from dpia.programs import fix_sizes, relative_error
    from functional.derivation import derive
    from functional.infer import infer
    from functional.schedules import default_schedule

    args = target_arguments(__doc__, TARGETS, argv)
    device = choose_device()
    on_gpu = "GPU" in str(device_identity(device).get("device_type", ""))
    lowering_target = DeviceLimits.of(device).lowering_target()
    for text, name, program, inputs, sizes, want, numpy_f32 in each_target(args.targets):
        fixed = infer(fix_sizes(program, sizes))
        low, _ = derive(fixed, default_schedule(fixed, lowering_target))
        dims = launch_dims(dpia.compile(low))
        rows = []
        for shape in [None] + SHAPES.get(dims, []):
            try:
                kernel = dpia.compile(low, local_shape=shape)
                error = relative_error(kernel(*inputs), want)
                rows.append((f"default lowering, local shape {shape or 'NULL (the driver)'}",
                             kernel.time(*inputs, repeat=args.repeat), error))
            except Exception as exc:  # noqa: BLE001 -- a shape the device refuses is a row, not the end
                print(f"  {shape}: {type(exc).__name__}: {str(exc)[:160]}", flush=True)
        nbytes = program_bytes(program, sizes)
        if on_gpu:
            rows += [(label, t, None) for label, t in gpu_references(name, inputs, nbytes, args.repeat)]
        else:
            rows.append(("numpy f32", _median_s(lambda: numpy_f32(*inputs), 5), None))
        show(f"{text} ({dims}D launch)", nbytes, rows)
    return 0


def launch_dims(kernel) -> int:
    """The dimensions of the widest launch of the kernel's plan (0: no parallel loop)."""
    from codegen_opencl.runtime import _parallel_loops

    loops = [lp for phase in kernel.phases if phase.parallel for lp in _parallel_loops(phase.body)]
    return max((lp.dim for lp in loops), default=-1) + 1


if __name__ == "__main__":
    raise SystemExit(main())
