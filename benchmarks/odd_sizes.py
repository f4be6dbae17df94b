"""Odd sizes against their power-of-two neighbours: each pair explored in the space the rules
generate (benchmarks/explore_suite.py's run_target, references in the same run), and the odd
size's rate (bytes the program moves at least per second) over the neighbour's.  Where the
sizes offer no split (a prime length), the space's splits come from stage 1's cuts (map_cut,
map_cut_columns, reduce_cut): near 1.0 means the odd size loses nothing to its remainder.

    python benchmarks/odd_sizes.py black_scholes:n=1048573/n=1048576 jacobi2d_5:h=1021,w=1021/h=1024,w=1024 \\
        --budget 60 --out benchmarks/odd_sizes_pocl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from explore_suite import run_target  # noqa: E402 -- the same exploration, checks and references


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+", help="NAME:odd sizes/even sizes, e.g. total:n=1048573/n=1048576")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of exploration per target")
    ap.add_argument("--search", default="bayesian")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", default="odd_sizes_out")
    args = ap.parse_args(argv)
    args.one_json = False
    lines = ["| program | odd sizes | best (GB/s) | its reference / best | even sizes | best (GB/s) | odd rate / even |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    results = []
    for pair in args.pairs:
        name, _, sizes = pair.partition(":")
        odd, _, even = sizes.partition("/")
        got = [run_target(f"{name}:{s}", args) for s in (odd, even)]
        rates = [s["rows"][0]["GB_per_s"] for s in got]
        ref = got[0]["rows"][-1]
        lines.append(f"| {name} | {odd} | {rates[0]:.1f} | {ref['variant']}: {ref['ref_over_best']:.2f} | {even} | "
                     f"{rates[1]:.1f} | **{rates[0] / rates[1]:.2f}** |")
        results.append({"pair": pair, "odd": got[0], "even": got[1], "odd_over_even": rates[0] / rates[1]})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "odd_sizes.json").write_text(json.dumps(results, indent=1, default=str))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
