"""The default lowering on a GPU, told (Target.lockstep_items) or not that its work-items run in
lockstep: program-level reductions with interleaved stages against contiguous chunks, each
checked against the float64 reference and timed from profiling events, beside the device copy
of the same bytes, torch.compile of the same NumPy function and cuBLAS where it applies, in the
same run (explore_suite.gpu_references).

    python benchmarks/lockstep_gpu.py [NAME:size=value,... ...] [--repeat 20]

Targets as in explore_suite.py (default: asum, dot, mean_variance, mean_variance_one_pass at 2^26
elements, the sum of 2^28, scal 2^26, gemv_t 16384^2: maps' vector widths follow the same flag;
gemv, gesummv and atax 16384^2: rows reduced by work-groups).  On a CPU it times the same two lowerings against float32 NumPy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_suite import _median_s, gpu_references, target  # noqa: E402 -- the same targets and references

TARGETS = ("asum:n=67108864", "dot:n=67108864", "mean_variance:n=67108864", "mean_variance_one_pass:n=67108864",
           "total:n=268435456", "scal:n=67108864", "gemv_t:m=16384,n=16384", "gemv:m=16384,n=16384",
           "gesummv:n=16384", "atax:m=16384,n=16384")


def main(argv=None) -> int:
    from codegen_opencl.runtime import choose_device, device_identity
    from dpia.explore import program_bytes

    args = target_arguments(__doc__, TARGETS, argv)
    on_gpu = "GPU" in str(device_identity(choose_device()).get("device_type", ""))
    for text, name, program, inputs, sizes, want, numpy_f32 in each_target(args.targets):
        nbytes = program_bytes(program, sizes)
        rows = both_lowerings(program, sizes, inputs, want, args.repeat)
        if on_gpu:
            rows += [(label, t, None) for label, t in gpu_references(name, inputs, nbytes, args.repeat)]
        else:
            rows.append(("numpy f32", _median_s(lambda: numpy_f32(*inputs), 5), None))
        show(text, nbytes, rows)
    return 0


def target_arguments(doc: str, defaults, argv=None):
    """The command line of a script timing NAME:size=value,... targets: `targets`, `--repeat`."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("targets", nargs="*", default=list(defaults))
    ap.add_argument("--repeat", type=int, default=20)
    return ap.parse_args(argv)


def each_target(texts):
    """(text, name, program, inputs, sizes, float64 answer, float32 NumPy function) of each
    NAME:size=value,... target (explore_suite.target, inputs from seed 0; `sizes` the program's
    size variables)."""
    import dpia

    for text in texts:
        name, _, size_text = text.partition(":")
        size = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
        program, inputs, reference, numpy_f32 = target(name, size, np.random.default_rng(0))
        yield text, name, program, inputs, dpia.compile(program).sizes_of(inputs), reference(*inputs), numpy_f32


def lowering_targets() -> list[tuple[str, object]]:
    """(label, Target) of the default lowerings compared: for a CPU, for a GPU (lockstep items),
    and where the device here offers warp shuffles, for a GPU with them (what `dpia run` uses
    there: DeviceLimits.lowering_target)."""
    from codegen_opencl.runtime import choose_device
    from dpia.explore.space import DeviceLimits
    from functional.default_lowering import Target

    targets = [("default lowering, CPU target", Target()),
               ("default lowering, GPU target (lockstep)", Target(lockstep_items=True))]
    here = DeviceLimits.of(choose_device()).lowering_target()
    if here.warp_shuffles:
        targets.append(("default lowering, GPU target with warp shuffles", here))
    return targets


def both_lowerings(program, sizes: dict, inputs: tuple, want, repeat: int) -> list[tuple[str, float, float]]:
    """(label, seconds, relative error) of the default lowering for each of lowering_targets(),
    at `sizes` (the program's size variables)."""
    import dpia
    from dpia.programs import fix_sizes, relative_error
    from functional.derivation import derive
    from functional.infer import infer
    from functional.schedules import default_schedule

    rows = []
    for label, lowering_target in lowering_targets():
        fixed = infer(fix_sizes(program, sizes))
        low, _ = derive(fixed, default_schedule(fixed, lowering_target))
        kernel = dpia.compile(low)
        rows.append((label, kernel.time(*inputs, repeat=repeat), relative_error(kernel(*inputs), want)))
    return rows


def show(text: str, nbytes: int, rows) -> None:
    """The target's rows: milliseconds, bandwidth over `nbytes`, label, relative error where known."""
    print(f"\n{text}: {nbytes / 1e6:.1f} MB moved at least", flush=True)
    for label, t, error in rows:
        note = f"  (relative error {error:.1e})" if error is not None else ""
        print(f"  {t * 1e3:9.4f} ms {nbytes / t / 1e9:8.1f} GB/s  {label}{note}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
