"""Build a few exploration spaces, time each build and write a canonical dump of what it
generated (skeletons in order with their slots' values and constraints, then the points in
order), so that a change meant only to make Space.build faster can be checked to change no
result:  python benchmarks/space_build_check.py OUT.txt  (before and after), then diff.

    python benchmarks/space_build_check.py OUT.txt [--only NAME] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import sys
import time
from pathlib import Path

import functional as fl
from dpia.explore.algorithmic import Heuristics
from dpia.explore.space import DeviceLimits, Space

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import seed  # noqa: E402
import suite  # noqa: E402

CPU = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=2, private_values=256)
GPU = DeviceLimits(max_work_group_size=1024, local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU")


def _entry(name):
    return next(e for e in suite.SUITE + suite.ALTERNATIVES if e.name == name)


def _suite(name, which="small"):
    e = _entry(name)
    return e.program, {k.upper(): v for k, v in getattr(e, which).items()}


CASES = {
    "mm_4096_gpu_loops": lambda: (seed.mm, {"M": 4096, "N": 4096, "K": 4096}, GPU, Heuristics(loops=True)),
    "sum_2^26_cpu_loops": lambda: (seed.total, {"N": 1 << 26}, CPU, Heuristics(loops=True)),
    "mm_1024_cpu": lambda: (seed.mm, {"M": 1024, "N": 1024, "K": 1024}, CPU, None),
    "gemv_small_cpu": lambda: (*_suite("gemv"), CPU, None),
    "srad_small_cpu": lambda: (*_suite("srad"), CPU, None),
    "srad_512_cpu": lambda: (*_suite("srad", "moderate"), CPU, None),
    "mean_variance_bench_cpu": lambda: (*_suite("mean_variance", "bench"), CPU, None),
}


def dump(space: Space) -> list[str]:
    out = []
    for s in space.families:
        out.append(repr((s.name, sorted(s.choices.items()), sorted(s.divides.items()),
                         sorted((s.slot_sizes or {}).items()), sorted(s.within.items()),
                         sorted(s.within_slot.items()), sorted((k, repr(v)) for k, v in s.slot_lengths.items()))))
    out += [repr((p.family, sorted(p.as_dict().items()))) for p in space.points]
    out.append(repr(sorted(space.infeasible.items())))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", action="append")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--sort", default="cumulative")
    args = ap.parse_args()
    lines = []
    for name, make in CASES.items():
        if args.only and name not in args.only:
            continue
        program, sizes, limits, heuristics = make()
        prof = cProfile.Profile() if args.profile else None
        start, cpu = time.perf_counter(), time.process_time()
        if prof:
            prof.enable()
        space = Space.build(program, sizes, limits, heuristics=heuristics)
        if prof:
            prof.disable()
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        text = dump(space)
        digest = hashlib.sha256("\n".join(text).encode()).hexdigest()[:16]
        print(f"{name}: {took:.1f} s wall, {cpu:.1f} s cpu, {len(space.families)} skeletons, {len(space.points)} points, {digest}", flush=True)
        lines += [f"## {name}"] + text
        if prof:
            prof.dump_stats(f"{args.out}.{name}.prof")
            pstats.Stats(prof).sort_stats(args.sort).print_stats(45)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
