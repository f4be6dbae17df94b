"""Candidates per second and time-to-best of an exploration: the single-process explorer
(worker processes on this host) against Ray (a local cluster: preparation workers, one
measuring actor for the device), at equal budgets, the same program, sizes, search and seed.

    python benchmarks/cluster_explore.py --backend ray --workers 2 --budget 90 --out results.jsonl
    python benchmarks/cluster_explore.py --target mm:m=4096,n=4096,k=4096 --backend ray ...

The program is the sum of 2^log2n floats (PoCL, issue 15's figures), or --target: a target of
benchmarks/explore_suite.py (a suite entry at its sizes, total or mm; issue 16's, on a GPU).

One JSON line per run: the rate of finished candidates (measured or failed, per second from
the first finished candidate to the last: the time to build the space and start workers or
actors is the same for every rate and left out), when the final best was found (seconds from
the start of explore), the best time, the rate of measured candidates alone (ok or slow:
failures are quick), the mean seconds per stage, and the machine's load average at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functional as fl
from dpia.explore import explore

N = fl.nat("N")
PROGRAMS = {"sum": fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))}


def _improvements(finished: list) -> list[tuple[float, float]]:
    """(seconds from the start, best ms so far) at each new best: the time-to-best curve."""
    out, best = [], None
    for t, c in finished:
        if c.status == "ok" and (best is None or c.time_s < best):
            best = c.time_s
            out.append((round(t, 2), round(best * 1e3, 4)))
    return out


def _rate(times: list[float]) -> float | None:
    """Events per second between the first and the last of `times`."""
    return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else None


def table(path: str) -> str:
    """A Markdown table per program of the runs in `path`: per backend and workers, each
    run's figures (runs in the order made) and their mean."""
    by_target: dict[str, list[dict]] = {}
    for line in Path(path).read_text().splitlines():
        run = json.loads(line)
        by_target.setdefault(run.get("target", "sum"), []).append(run)
    return "\n\n".join(f"{name}:\n\n{_table(runs)}" for name, runs in by_target.items())


def _table(runs_of_target: list[dict]) -> str:
    rows: dict[tuple[str, int], list[dict]] = {}
    for run in runs_of_target:
        rows.setdefault((run["backend"], run["workers"]), []).append(run)

    def figures(runs: list[dict], field: str, digits: int) -> str:
        values = [r[field] for r in runs if r.get(field) is not None]
        shown = ", ".join(f"{v:.{digits}f}" for v in values)
        return f"{sum(values) / len(values):.{digits}f} ({shown})" if values else "-"

    # time-to-best at equal budgets: when a run first had a kernel at least as fast as the
    # median of the final bests of the runs with a time-to-best curve
    finals = sorted(r["improvements"][-1][1] for runs in rows.values() for r in runs if r.get("improvements"))
    target = finals[len(finals) // 2] if finals else None

    def reached(runs: list[dict]) -> str:
        timed = [next((t for t, ms in r["improvements"] if ms <= target), None) for r in runs if r.get("improvements")]
        shown = ", ".join("never" if t is None else f"{t:.0f}" for t in timed)
        return f"{sum(t is not None for t in timed)} of {len(timed)} runs ({shown})" if timed else "-"

    title = f"reached {target} ms at s" if target is not None else "-"
    out = [f"| explorer | workers | candidates/s | measured/s | best ms | best found at s | {title} | load |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (backend, workers), runs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        name = "single-process (local workers)" if backend == "local" else "Ray (local cluster)"
        out.append(f"| {name} | {workers} | {figures(runs, 'candidates_per_s', 2)} | "
                   f"{figures(runs, 'measured_per_s', 2)} | {figures(runs, 'best_ms', 3)} | "
                   f"{figures(runs, 'best_found_at_s', 0)} | {reached(runs)} | {figures(runs, 'load_average', 1)} |")
    return "\n".join(out)


def _target(args) -> tuple:
    """(program, sizes) of --target, or the sum of 2^log2n floats."""
    if not args.target:
        return PROGRAMS["sum"], {"N": 1 << args.log2n}
    import numpy as np

    import dpia
    from explore_suite import target

    name, _, size_text = args.target.partition(":")
    size = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
    program, inputs, _, _ = target(name, size, np.random.default_rng(args.seed))
    return program, dict(dpia.compile(program, db=False).sizes_of(inputs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", metavar="JSONL", help="print the Markdown table of the runs in JSONL, and stop")
    parser.add_argument("--backend", choices=("local", "ray"))
    parser.add_argument("--workers", type=int)
    parser.add_argument("--budget", type=float, default=90.0)
    parser.add_argument("--log2n", type=int, default=22)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--search", default="bayesian")
    parser.add_argument("--target", help="NAME:size=value,... as benchmarks/explore_suite.py takes (default: the sum)")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.table:
        print(table(args.table))
        return
    if not (args.backend and args.workers and args.out):
        parser.error("--backend, --workers and --out are needed to run")

    cluster = None
    if args.backend == "ray":
        from dpia.explore.cluster import Cluster

        cluster = Cluster.connect("local", num_cpus=max(2, args.workers))
    program, sizes = _target(args)
    finished: list[tuple[float, object]] = []
    started = time.monotonic()
    try:
        result = explore(program, sizes, budget_s=args.budget, seed=args.seed,
                         search=args.search, workers=args.workers, baseline="default", executor=cluster,
                         progress=lambda c: finished.append((time.monotonic() - started, c)))
    finally:
        if cluster is not None:
            cluster.close()
    times = [t for t, _ in finished]
    rate = _rate(times)
    best_at = next((t for t, c in finished if result.best is not None and c.derivation == result.best.derivation
                    and c.status == "ok"), None)
    row = {"backend": args.backend, "workers": args.workers, "budget_s": args.budget, "target": args.target or "sum",
           "sizes": sizes,
           "search": args.search, "seed": args.seed, "finished": len(times), "tried": result.tried,
           "failed": result.failed, "duplicates": result.duplicates, "abandoned": result.abandoned,
           "lost": len(result.lost), "candidates_per_s": rate, "best_ms": result.best.time_s * 1e3 if result.best else None,
           "best_found_at_s": best_at, "first_finished_at_s": times[0] if times else None,
           "measured_per_s": _rate([t for t, c in finished if c.status not in ("failed", "wrong", "timeout")]),
           "stage_s": result.stage_seconds(), "improvements": _improvements(finished),
           "load_average": os.getloadavg()[0]}
    with open(args.out, "a") as out:
        out.write(json.dumps(row) + "\n")
    print(json.dumps(row))


if __name__ == "__main__":
    main()
