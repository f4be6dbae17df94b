"""The Lift application suite (examples/suite.py) on PoCL against NumPy, measured in one run:
each entry's program compiled by `dpia.compile` (whatever variant it picks: tuned, preset or
the default lowering), timed with `kernel.time` (median of profiling events over the whole
plan, after warm-up; inputs uploaded once, so transfers are not counted), checked against the
entry's NumPy reference (the oracle), and its float32 NumPy equivalent (`Entry.numpy`) timed
with timeit (best of a few single runs).  Writes a markdown table.

    python benchmarks/suite_pocl.py [--sizes moderate bench] [--only NAME ...] [--out benchmarks/SUITE.md]

The oracles are written for accuracy, not speed (several compute in float64), so the time is
the float32 equivalent's: vectorised NumPy and BLAS as a NumPy user writes it.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import dpia  # noqa: E402
import suite  # noqa: E402
from dpia.programs import relative_error  # noqa: E402


FINDINGS = "## Findings"


def numpy_seconds(numpy_f32, args, runs: int = 3) -> float:
    numpy_f32(*args)  # warm-up
    return min(timeit.repeat(lambda: numpy_f32(*args), number=1, repeat=runs))


def measure(entry: suite.Entry, size_kind: str, repeat: int) -> dict:
    size = getattr(entry, size_kind)
    row = {"name": entry.name, "sizes": " ".join(f"{k}={v}" for k, v in size.items()), "kind": size_kind,
           "formulation": entry.note or "natural"}
    started = time.perf_counter()
    try:
        kernel = dpia.compile(entry.program, name=dpia.kernel_name_for(entry.name))
        args = suite.inputs(entry, size)
        err = relative_error(kernel(*args), entry.reference(*args))
        row.update(ours=kernel.time(*args, repeat=repeat), numpy=numpy_seconds(entry.numpy, args),
                   variant=kernel.variant.kind, kernels=len(kernel.kernel.phases), error=err,
                   ok=err <= entry.tolerance)
    except Exception as exc:  # noqa: BLE001 -- one entry's failure is a row of the table
        row.update(failure=f"{type(exc).__name__}: {str(exc)[:200]}")
    row["wall"] = time.perf_counter() - started
    return row


def table(rows: list[dict]) -> str:
    lines = ["| program | sizes | kernel ms | numpy f32 ms | numpy/ours | variant | kernels | rel. error "
             "| formulation |",
             "|---|---|---:|---:|---:|---|---:|---:|---|"]
    for r in rows:
        if "failure" in r:
            lines.append(f"| {r['name']} | {r['sizes']} | - | - | - | failed: {r['failure']} | | | {r['formulation']} |")
            continue
        mark = "" if r["ok"] else " (WRONG)"
        lines.append(f"| {r['name']} | {r['sizes']} | {r['ours'] * 1e3:.3f} | {r['numpy'] * 1e3:.3f} | "
                     f"{r['numpy'] / r['ours']:.2f} | {r['variant']} | {r['kernels']} | {r['error']:.1e}{mark} | "
                     f"{r['formulation']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["moderate", "bench"], choices=["small", "moderate", "bench"])
    parser.add_argument("--only", nargs="+", help="entries to run (default: all)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per kernel (median)")
    parser.add_argument("--out", help="write the markdown table here")
    args = parser.parse_args(argv)
    entries = [suite.BY_NAME[n] for n in args.only] if args.only else suite.SUITE + suite.ALTERNATIVES
    rows = []
    for kind in args.sizes:
        for entry in entries:
            if kind == "bench" and entry.bench == entry.moderate:
                continue
            rows.append(measure(entry, kind, args.repeat))
            r = rows[-1]
            print(f"{r['name']:16s} {r['sizes']:28s} " + (f"ours {r['ours'] * 1e3:9.3f} ms  numpy f32 {r['numpy'] * 1e3:9.3f} ms"
                  if "failure" not in r else r["failure"]) + f"  ({r['wall']:.1f}s)", flush=True)
    text = table(rows)
    print(text)
    if args.out:
        from codegen_opencl.runtime import choose_device, describe

        header = (f"# The Lift application suite on PoCL against NumPy\n\n"
                  f"Measured by `python benchmarks/suite_pocl.py {' '.join(argv if argv is not None else sys.argv[1:])}` "
                  f"on {describe(choose_device())}, {platform.processor() or platform.machine()}, "
                  f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  Kernel: median of {args.repeat} runs "
                  f"(profiling events, all kernels of the plan, inputs already on the device); NumPy: best of 3 runs "
                  f"of the entry's float32 equivalent (`Entry.numpy` in examples/suite.py; the error is against "
                  f"its float64 reference).  numpy/ours > 1: ours is faster.\n\n")
        out = Path(args.out)
        # what follows the table (the findings, written by hand) survives a new measurement
        kept = out.read_text().partition(FINDINGS)[2] if out.exists() else ""
        out.write_text(header + text + "\n" + (f"\n{FINDINGS}{kept}" if kept else ""))
    return 0 if all(r.get("ok") for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
