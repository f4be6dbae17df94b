"""Other formulations (examples/formulations.py) against their float32 NumPy equivalents on the
default device: the kernel `dpia run` uses without a tuning database (the preset or the default
lowering), and with --explore SECONDS also the best an exploration of that budget finds.
Interleaved in one process: each round times our kernel (median of 7 profiled runs after 3)
and then NumPy (median of 5 wall-clock runs after one), the table gives the medians over
--rounds rounds.  Each kernel is checked against the formulation's reference (the oracle).

    python benchmarks/formulations.py [--only amax asum_fold ...] [--rounds 3] [--explore 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import dpia  # noqa: E402
import formulations  # noqa: E402
from dpia.programs import relative_error  # noqa: E402


def numpy_time(fn, args) -> float:
    fn(*args)
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        fn(*args)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def measure(f, kernels: dict, args: tuple, rounds: int) -> dict:
    times = {label: [] for label in kernels}
    numpy = []
    for _ in range(rounds):
        for label, kernel in kernels.items():
            times[label].append(kernel.time(*args, repeat=7, warmup=3))
        time.sleep(0.05)
        numpy.append(numpy_time(f.numpy, args))
    return {label: statistics.median(t) for label, t in times.items()} | {"numpy": statistics.median(numpy)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=[f.name for f in formulations.FORMULATIONS])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--explore", type=float, default=0.0, metavar="SECONDS",
                        help="also explore each program for this long and time the best")
    args = parser.parse_args(argv)
    print(f"load before: {os.getloadavg()}")
    explored = args.explore > 0
    print("| program | sizes | baseline ms | " + ("explored ms | " if explored else "") + "numpy f32 ms | "
          "numpy/baseline | " + ("numpy/explored | " if explored else "") + "variant | rel. error |")
    print("|---|---|---:|" + ("---:|" if explored else "") + "---:|---:|" + ("---:|" if explored else "") + "---|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            f = formulations.BY_NAME[name]
            inputs = formulations.inputs(f, f.bench)
            baseline = dpia.compile(f.program, db=False, name=dpia.kernel_name_for(name))
            error = relative_error(baseline(*inputs), f.reference(*inputs))
            kernels = {"baseline": baseline}
            if explored:
                from dpia.explore import explore
                from dpia.explore.tuning import TuningDB

                db = TuningDB(Path(tmp) / "tuning.sqlite")
                explore(f.program, baseline.sizes_of(inputs), db=db, budget_s=args.explore)
                best = dpia.compile(f.program, db=db, name=dpia.kernel_name_for(name))
                error = max(error, relative_error(best(*inputs), f.reference(*inputs)))
                kernels["explored"] = best
            t = measure(f, kernels, inputs, args.rounds)
            sizes = " ".join(f"{k}={v}" for k, v in f.bench.items())
            row = f"| {name} | {sizes} | {t['baseline'] * 1e3:.3f} | "
            if explored:
                row += f"{t['explored'] * 1e3:.3f} | "
            row += f"{t['numpy'] * 1e3:.3f} | {t['numpy'] / t['baseline']:.2f} | "
            if explored:
                row += f"{t['numpy'] / t['explored']:.2f} | "
            print(row + f"{baseline.variant.kind} | {error:.1e} |", flush=True)
    print(f"load after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
