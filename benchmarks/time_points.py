"""Time chosen points of a program's generated space by name, at the real sizes, against the
references explore_suite.py measures in the same run (the device copy and torch.compile on a
GPU, float32 NumPy on a CPU): what a mechanism reaches, apart from whether a search finds it.

    python benchmarks/time_points.py gemv_t:m=16384,n=16384 \
        --point "split_k(n=s0)@root; lower_map_global(d=0)@1.1; lower_map_global(d=1)@1.1.0.1.0" s0=128,256,512

A point is a skeleton's name (as `dpia explore` stores it in the tuning database) and, per slot,
a comma-separated list of values (every combination is timed).  Each is derived, compiled at
the sizes, checked against the entry's float64 reference and timed from profiling events.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_suite import _median_s, gpu_references, target  # noqa: E402 -- the same targets and references


def main(argv=None) -> int:
    import dpia
    from codegen_opencl.runtime import choose_device, device_identity
    from dpia.explore import program_bytes
    from dpia.explore.space import DeviceLimits, Point, Skeleton, Space, parse_steps
    from dpia.programs import at_sizes, relative_error
    from functional.derivation import derive
    from functional.errors import FunctionalError

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", help="NAME:size=value,... as in explore_suite.py")
    ap.add_argument("--point", nargs="+", action="append", default=[], metavar=("SKELETON", "SLOT=V1,V2"))
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    name, _, size_text = args.target.partition(":")
    size = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
    program, inputs, reference, numpy_f32 = target(name, size, np.random.default_rng(0))
    sizes = dpia.compile(program).sizes_of(inputs)
    device = choose_device()
    want = reference(*inputs)
    nbytes = program_bytes(program, sizes)
    rows = []
    for skeleton, *slots in args.point:
        space = Space.build(program, sizes, DeviceLimits.of(device), skeletons=[Skeleton(parse_steps(skeleton))])
        names = [s.split("=")[0] for s in slots]
        for values in itertools.product(*([int(v) for v in s.split("=")[1].split(",")] for s in slots)):
            point = Point(skeleton, dict(zip(names, values)))
            label = f"{skeleton} {dict(zip(names, values))}"
            try:
                try:
                    low, _ = derive(space.program_for(point), space.strategy(point))
                except FunctionalError:  # nested splits of one length: the product of the slots, as the explorer retries
                    low, _ = derive(space.program_for(point, product=True), space.strategy(point))
                kernel = dpia.compile(at_sizes(low, sizes))
                error = relative_error(kernel(*inputs), want)
                rows.append((label, kernel.time(*inputs, repeat=args.repeat), error))
            except Exception as exc:  # a point that does not derive or run is a row saying why
                rows.append((label, None, f"{type(exc).__name__}: {str(exc)[:200]}"))
    on_gpu = "GPU" in str(device_identity(device).get("device_type", ""))
    refs = gpu_references(name, inputs, nbytes, args.repeat) if on_gpu else [
        ("numpy f32", _median_s(lambda: numpy_f32(*inputs), 5))]
    print(f"\n{args.target}: {nbytes / 1e6:.1f} MB moved at least")
    for label, t, error in rows + [(label, t, "") for label, t in refs]:
        if t is None:
            print(f"  {label}: {error}")
        else:
            note = f"  (relative error {error:.1e})" if isinstance(error, float) else ""
            print(f"  {t * 1e3:9.4f} ms {nbytes / t / 1e9:8.1f} GB/s  {label}{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
