"""The default lowering (`dpia.compile(program, db=False)`) of suite entries against their
float32 NumPy equivalents (`Entry.numpy`), timed interleaved in one process for a machine
shared with other work: each round times our kernel (median of 7 profiled runs after 5
unmeasured ones: the first runs after NumPy's are slower, up to 2x for gemv) and then NumPy
(median of 5 wall-clock runs after a 50 ms pause and one unmeasured run), and the table gives
the median and the best of the rounds' values.  Checked against the entry's reference (the oracle).

    python benchmarks/matvec_default_pocl.py [--only gemv gemv_t atax gesummv mri_q] [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import dpia  # noqa: E402
import suite  # noqa: E402
from dpia.programs import relative_error  # noqa: E402


def measure(entry: suite.Entry, rounds: int) -> dict:
    kernel = dpia.compile(entry.program, db=False, name=dpia.kernel_name_for(entry.name))
    args = suite.inputs(entry, entry.bench)
    error = relative_error(kernel(*args), entry.reference(*args))
    ours, numpy = [], []
    for _ in range(rounds):
        ours.append(kernel.time(*args, repeat=7, warmup=5))
        time.sleep(0.05)
        entry.numpy(*args)
        runs = []
        for _ in range(5):
            started = time.perf_counter()
            entry.numpy(*args)
            runs.append(time.perf_counter() - started)
        numpy.append(statistics.median(runs))
    return dict(name=entry.name, sizes=" ".join(f"{k}={v}" for k, v in entry.bench.items()), error=error,
                ours=statistics.median(ours), numpy=statistics.median(numpy), ours_best=min(ours),
                numpy_best=min(numpy))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=["gemv", "gemv_t", "atax", "gesummv", "mri_q"])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    print(f"load before: {os.getloadavg()}")
    print("| program | sizes | ours ms (median / best) | numpy f32 ms (median / best) | numpy/ours (median / best) "
          "| rel. error |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.only:
        r = measure(suite.BY_NAME[name], args.rounds)
        print(f"| {r['name']} | {r['sizes']} | {r['ours'] * 1e3:.2f} / {r['ours_best'] * 1e3:.2f} | "
              f"{r['numpy'] * 1e3:.2f} / {r['numpy_best'] * 1e3:.2f} | {r['numpy'] / r['ours']:.2f} / "
              f"{r['numpy_best'] / r['ours_best']:.2f} | {r['error']:.1e} |", flush=True)
    print(f"load after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
