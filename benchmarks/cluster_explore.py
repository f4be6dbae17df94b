"""Candidates per second and time-to-best of an exploration: the single-process explorer
(worker processes on this host) against Ray (a local cluster: preparation workers, one
measuring actor for the device), at equal budgets, the same program, sizes, search and seed.

    python benchmarks/cluster_explore.py --backend ray --workers 2 --budget 90 --out results.jsonl

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

import functional as fl  # noqa: E402
from dpia.explore import explore  # noqa: E402

N = fl.nat("N")
PROGRAMS = {"sum": fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))}


def _rate(times: list[float]) -> float | None:
    """Events per second between the first and the last of `times`."""
    return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("local", "ray"), required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--budget", type=float, default=90.0)
    parser.add_argument("--log2n", type=int, default=22)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--search", default="bayesian")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    cluster = None
    if args.backend == "ray":
        from dpia.explore.cluster import Cluster

        cluster = Cluster.connect("local", num_cpus=max(2, args.workers))
    finished: list[tuple[float, object]] = []
    started = time.monotonic()
    try:
        result = explore(PROGRAMS["sum"], {"N": 1 << args.log2n}, budget_s=args.budget, seed=args.seed,
                         search=args.search, workers=args.workers, baseline="default", executor=cluster,
                         progress=lambda c: finished.append((time.monotonic() - started, c)))
    finally:
        if cluster is not None:
            cluster.close()
    times = [t for t, _ in finished]
    rate = _rate(times)
    best_at = next((t for t, c in finished if result.best is not None and c.derivation == result.best.derivation
                    and c.status == "ok"), None)
    row = {"backend": args.backend, "workers": args.workers, "budget_s": args.budget, "N": 1 << args.log2n,
           "search": args.search, "seed": args.seed, "finished": len(times), "tried": result.tried,
           "failed": result.failed, "duplicates": result.duplicates, "abandoned": result.abandoned,
           "lost": len(result.lost), "candidates_per_s": rate, "best_ms": result.best.time_s * 1e3 if result.best else None,
           "best_found_at_s": best_at, "first_finished_at_s": times[0] if times else None,
           "measured_per_s": _rate([t for t, c in finished if c.status not in ("failed", "wrong", "timeout")]),
           "stage_s": result.stage_seconds(), "load_average": os.getloadavg()[0]}
    with open(args.out, "a") as out:
        out.write(json.dumps(row) + "\n")
    print(json.dumps(row))


if __name__ == "__main__":
    main()
