"""How many work-items should reduce one row (default_lowering.row_items), with and without
warp shuffles ending the trees (Target.warp_shuffles): each row program of
examples/formulations.py and gemv/gesummv of the suite lowered with the items per row capped at
32, 64, 128 and 256, each kernel checked against the float64 reference and timed from
profiling events, beside torch.compile (the row programs) in the same run.

    python benchmarks/rows_items_gpu.py [--repeat 20]

The cap is default_lowering.ROW_ITEMS, set for one derivation at a time (`_capped`).  Without
a device that offers shuffles only the local-memory trees run.
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

ROWS = ("softmax_rows:M=16384,N=1024", "layernorm_rows:M=16384,N=1024", "softmax_rows:M=4096,N=2048",
        "layernorm_rows:M=4096,N=2048")
SUITE = ("gemv:m=16384,n=16384", "gemv:m=4096,n=4096", "gesummv:n=16384")
CAPS = (32, 64, 128, 256)


@contextlib.contextmanager
def _capped(items: int):
    import functional.default_lowering as dl

    before = dl.ROW_ITEMS
    dl.ROW_ITEMS = items
    try:
        yield
    finally:
        dl.ROW_ITEMS = before


def _variants(program, sizes, inputs, want, repeat, shuffles: bool):
    import dpia
    from dpia.programs import fix_sizes, relative_error
    from functional.default_lowering import Target
    from functional.derivation import derive
    from functional.infer import infer
    from functional.schedules import default_schedule

    rows = []
    for warp in (False, True) if shuffles else (False,):
        for cap in CAPS:
            with _capped(cap):
                fixed = infer(fix_sizes(program, sizes))
                low, _ = derive(fixed, default_schedule(fixed, Target(lockstep_items=True, warp_shuffles=warp)))
            kernel = dpia.compile(low)
            label = f"items <= {cap:3d}, {'warp shuffles' if warp else 'local-memory tree'}"
            rows.append((label, kernel.time(*inputs, repeat=repeat), relative_error(kernel(*inputs), want)))
    return rows


def main(argv=None) -> int:
    import dpia
    import formulations
    from codegen_opencl.runtime import choose_device, device_identity
    from dpia.explore import program_bytes
    from dpia.explore.space import DeviceLimits
    from explore_suite import gpu_references, target
    from rows_gpu import _torch_reference
    from explore_targets import _torch
    from torch_compiled import cuda_time

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    device = choose_device()
    on_gpu = "GPU" in str(device_identity(device).get("device_type", ""))
    shuffles = DeviceLimits.of(device).lowering_target().warp_shuffles
    torch = _torch() if on_gpu else None
    by_name = {f.name: f for f in formulations.FORMULATIONS}
    for text in ROWS + SUITE:
        name, _, size_text = text.partition(":")
        sizes = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
        if name in by_name:
            entry = by_name[name]
            program, inputs = entry.program, entry.inputs(np.random.default_rng(0), sizes)
            want, nbytes = entry.reference(*inputs), 2 * inputs[0].nbytes
        else:
            program, inputs, reference, _ = target(name, sizes, np.random.default_rng(0))
            sizes = dpia.compile(program).sizes_of(inputs)
            want, nbytes = reference(*inputs), program_bytes(program, sizes)
        rows = _variants(program, sizes, inputs, want, args.repeat, shuffles)
        if torch is not None and name in by_name:
            compiled, x = _torch_reference(name, inputs[0], torch)
            rows.append(("torch.compile", cuda_time(torch, lambda: compiled(x), args.repeat), None))
        elif torch is not None:
            rows += [(label, t, None) for label, t in gpu_references(name, inputs, nbytes, args.repeat)]
        show(text, nbytes, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
