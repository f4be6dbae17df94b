"""The default lowering on a GPU, told (Target.lockstep_items) or not that its work-items run in
lockstep: program-level reductions with interleaved stages against contiguous chunks, each
checked against the float64 reference and timed from profiling events, beside the device copy
of the same bytes and torch's eager equivalent in the same run.

    python benchmarks/lockstep_gpu.py [NAME:size=value,... ...] [--repeat 20]

Targets as in explore_suite.py (default: asum, dot, mean_variance, mean_variance_one_pass at 2^26
elements and the sum of 2^28).  On a CPU it times the same two lowerings against float32 NumPy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_suite import _cuda_time, _median_s, _torch, target  # noqa: E402 -- the same targets

TARGETS = ("asum:n=67108864", "dot:n=67108864", "mean_variance:n=67108864", "mean_variance_one_pass:n=67108864",
           "total:n=268435456")


def _torch_eager(name: str, inputs: tuple, torch):
    """torch's own one-liner for the target (eager mode), or None."""
    xs = [torch.from_numpy(np.ascontiguousarray(v)).cuda() for v in inputs if isinstance(v, np.ndarray)]
    return {"asum": lambda: xs[0].abs().sum(), "dot": lambda: torch.dot(xs[0], xs[1]),
            "mean_variance": lambda: torch.var_mean(xs[0], correction=0),
            "mean_variance_one_pass": lambda: torch.var_mean(xs[0], correction=0),
            "total": lambda: xs[0].sum()}.get(name)


def main(argv=None) -> int:
    import dpia
    from codegen_opencl.runtime import choose_device, device_identity
    from dpia.explore import program_bytes
    from dpia.programs import fix_sizes, relative_error
    from functional.default_lowering import Target
    from functional.derivation import derive
    from functional.infer import infer
    from functional.schedules import default_schedule

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", default=list(TARGETS))
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    device = choose_device()
    on_gpu = "GPU" in str(device_identity(device).get("device_type", ""))
    torch = _torch() if on_gpu else None
    for text in args.targets:
        name, _, size_text = text.partition(":")
        size = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
        program, inputs, reference, numpy_f32 = target(name, size, np.random.default_rng(0))
        sizes = dpia.compile(program).sizes_of(inputs)
        want = reference(*inputs)
        nbytes = program_bytes(program, sizes)
        rows = []
        for label, lowering_target in (("default, contiguous chunks", Target()),
                                       ("default, interleaved (lockstep)", Target(lockstep_items=True))):
            fixed = infer(fix_sizes(program, sizes))
            low, _ = derive(fixed, default_schedule(fixed, lowering_target))
            kernel = dpia.compile(low)
            error = relative_error(kernel(*inputs), want)
            rows.append((label, kernel.time(*inputs, repeat=args.repeat), error))
        if torch is not None:
            buf = torch.empty(max(2, nbytes // 4), dtype=torch.float32, device="cuda")
            half, dst = buf[: max(1, nbytes // 8)], torch.empty_like(buf)
            rows.append(("device copy of the same bytes", _cuda_time(torch, lambda: dst[: half.numel()].copy_(half),
                                                                   args.repeat), None))
            eager = _torch_eager(name, inputs, torch)
            if eager is not None:
                rows.append(("torch eager", _cuda_time(torch, eager, args.repeat), None))
        else:
            rows.append(("numpy f32", _median_s(lambda: numpy_f32(*inputs), 5), None))
        print(f"\n{text}: {nbytes / 1e6:.1f} MB moved at least", flush=True)
        for label, t, error in rows:
            note = f"  (relative error {error:.1e})" if error is not None else ""
            print(f"  {t * 1e3:9.4f} ms {nbytes / t / 1e9:8.1f} GB/s  {label}{note}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
