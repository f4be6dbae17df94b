"""How a work-group should reduce rows (default_lowering.row_reductions) on this device: the
elements each item folds before the tree (ROW_PER_ITEM, which sets the items per row), trees in
local memory or ending in warp shuffles (Target.warp_shuffles, where the device offers them),
and the launch's groups (the plan's, at most runtime.max_groups_for the device, or one per
row).  Each kernel checked against the float64 reference and timed from profiling events,
beside torch.compile (the row programs of examples/formulations.py), cuBLAS and the device copy
(gemv, gesummv: explore_suite.gpu_references) in the same run:

    python benchmarks/rows_launch_gpu.py [--repeat 20]

ROW_PER_ITEM is set for one derivation at a time (`_per_item`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))

from lockstep_gpu import show  # noqa: E402

TARGETS = (("softmax_rows", {"M": 16384, "N": 1024}), ("layernorm_rows", {"M": 16384, "N": 1024}),
           ("softmax_rows", {"M": 4096, "N": 2048}), ("layernorm_rows", {"M": 4096, "N": 2048}),
           ("gemv", {"m": 16384, "n": 16384}), ("gemv", {"m": 4096, "n": 4096}), ("gesummv", {"n": 16384}))
PER_ITEM = (16, 8, 4)


@contextlib.contextmanager
def _per_item(count: int):
    import functional.default_lowering as dl

    before = dl.ROW_PER_ITEM
    dl.ROW_PER_ITEM = count
    try:
        yield
    finally:
        dl.ROW_PER_ITEM = before


def _program(name: str, sizes: dict):
    """(program, inputs, float64 result, bytes moved, its sizes, from formulations)."""
    import dpia
    import formulations
    from dpia.explore import program_bytes
    from explore_suite import target

    by_name = {f.name: f for f in formulations.FORMULATIONS}
    if name in by_name:
        entry = by_name[name]
        inputs = entry.inputs(np.random.default_rng(0), sizes)
        return entry.program, inputs, entry.reference(*inputs), 2 * inputs[0].nbytes, sizes, True
    program, inputs, reference, _ = target(name, sizes, np.random.default_rng(0))
    sizes = dpia.compile(program).sizes_of(inputs)
    return program, inputs, reference(*inputs), program_bytes(program, sizes), sizes, False


def main(argv=None) -> int:
    import dpia
    import functional as fl
    from codegen_opencl.runtime import choose_device
    from dpia.explore.space import DeviceLimits
    from dpia.programs import fix_sizes, relative_error
    from explore_suite import gpu_references
    from explore_targets import _torch
    from functional.default_lowering import Target
    from functional.derivation import derive
    from functional.schedules import default_schedule
    from rows_gpu import _torch_reference
    from torch_compiled import cuda_time

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    here = DeviceLimits.of(choose_device()).lowering_target()
    torch = _torch()
    for name, sizes in TARGETS:
        program, inputs, want, nbytes, sizes, formulation = _program(name, sizes)
        rows_count = next(iter(sizes.values()))  # M or m: the rows, one group each
        rows = []
        for warp in sorted({False, here.warp_shuffles}):
            for count in PER_ITEM:
                with _per_item(count):
                    fixed = fl.infer(fix_sizes(program, sizes))
                    low, _ = derive(fixed, default_schedule(fixed, Target(lockstep_items=True, warp_shuffles=warp)))
                for groups in (None, rows_count):
                    kernel = dpia.compile(low, groups=groups)
                    label = (f"{count:2d} per item, {'warp shuffles' if warp else 'local trees'}, "
                             f"groups {'one per row' if groups else 'the plan'}")
                    rows.append((label, kernel.time(*inputs, repeat=args.repeat), relative_error(kernel(*inputs), want)))
        if torch is not None and formulation:
            compiled, x = _torch_reference(name, inputs[0], torch)
            rows.append(("torch.compile", cuda_time(torch, lambda: compiled(x), args.repeat), None))
        elif torch is not None:
            rows += [(label, t, None) for label, t in gpu_references(name, inputs, nbytes, args.repeat)]
        show(f"{name} {sizes}", nbytes, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
