"""The portability matrix (issue 13): each device's best kernel run on every other device, against
that device's own best, measured in the same run.

    python benchmarks/portability.py jacobi2d_5:h=2048,w=2048 gemv:m=4096,n=4096 \\
        --devices NVIDIA --devices Portable --budget 60 --out portability_out
    python benchmarks/portability.py total:n=1048576 --devices Portable --sources-from-db   # the stored devices

Per target (explore_suite.py's `NAME:size=value,...`): an exploration on each device of
--devices (one tuning database, rows keyed by device; `--budget 0` explores nothing and uses what
the database under --out holds), then for every (source, destination) pair the source's best
variant compiled and run on the destination (`dpia.compile(..., device=destination,
tuned_for=source's key)`), checked against the oracle and timed interleaved with the
destination's own best.  A cell is its time over the destination's own best: 1.0 on the
diagonal, 3.0 a kernel three times slower than the one the destination would run.  A source
variant that does not compile or run on the destination is a cell saying why (the launch shape
the source measured can exceed the destination's work-group limit, say); `dpia.compile` falling
back to the default is reported as such, never timed as the source's kernel.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_suite import _interleaved_times, target  # noqa: E402 -- the suite's targets, the same timing


def parse_target(spec: str) -> tuple[str, dict]:
    name, _, size_text = spec.partition(":")
    return name, {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}


def cross_run(program, inputs: tuple, reference, destinations: list[str], sources: list[str], db,
              repeat: int) -> list[dict]:
    """One row per (source key, destination device): the source's best variant on the
    destination against the destination's own best (`dpia.compile` with this `db`)."""
    import dpia
    from codegen_opencl.runtime import choose_device, device_key
    from dpia.programs import relative_error
    from dpia.variants import TuningWarning
    from functional.errors import FunctionalError

    want = reference(*inputs)
    rows = []
    for destination in destinations:
        here = device_key(choose_device(destination))
        own = dpia.compile(program, device=destination, db=db)
        own(*inputs)
        for source in sources:
            row = {"source": source, "destination": here}
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", TuningWarning)
                kernel = dpia.compile(program, device=destination, db=db, tuned_for=source)
                try:
                    got = kernel(*inputs)
                except (FunctionalError, RuntimeError) as exc:  # built, but the destination refuses to run it
                    rows.append(row | {"status": "fails", "why": f"{type(exc).__name__}: {exc}"[:400]})
                    continue
            variant = kernel.variant
            if variant.kind != "tuned":
                why = variant.note or "; ".join(str(w.message) for w in caught) or f"a {variant.kind} variant"
                rows.append(row | {"status": "not tuned", "kind": variant.kind, "why": why[:400]})
                continue
            t_source, t_own = _interleaved_times((kernel, own), inputs, repeat)
            rows.append(row | {"status": "ok", "kind": variant.kind, "time_s": t_source, "own_best_s": t_own,
                               "own_kind": own.variant.kind, "over_own": t_source / t_own,
                               "relative_error": relative_error(got, want)})
    return rows


def markdown(target_rows: list[tuple[str, list[dict]]]) -> str:
    lines = ["| target | best of | run on | ms | its own best, ms | over its own best | error |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    def cell(key: str) -> str:  # a device key names platform | device | version: not a column break
        return key.replace(" | ", ", ")

    for spec, rows in target_rows:
        for r in rows:
            r = r | {"source": cell(r["source"]), "destination": cell(r["destination"])}
            if r["status"] == "ok":
                lines.append(f"| {spec} | {r['source']} | {r['destination']} | {r['time_s'] * 1e3:.3f} | "
                             f"{r['own_best_s'] * 1e3:.3f} ({r['own_kind']}) | **{r['over_own']:.2f}** | "
                             f"{r['relative_error']:.1e} |")
            else:
                lines.append(f"| {spec} | {r['source']} | {r['destination']} | {r['status']}: "
                             f"{r['why'].replace('|', '/')} | | | |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="+", help="NAME:size=value,... (suite entries, total, mm)")
    ap.add_argument("--devices", action="append", required=True, metavar="D",
                    help="a device by a substring of 'platform: device' (repeat for each device)")
    ap.add_argument("--sources-from-db", action="store_true",
                    help="also run the best of every other device the database holds rows for")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of exploration per target and device")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--out", default="portability_out")
    args = ap.parse_args(argv)
    from codegen_opencl.runtime import choose_device, device_key
    from dpia.explore import explore
    from dpia.explore.tuning import TuningDB
    from dpia.programs import canonical

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db = TuningDB(out / "tuning.sqlite")
    keys = [device_key(choose_device(d)) for d in args.devices]
    results = []
    for spec in args.targets:
        name, size = parse_target(spec)
        program, inputs, reference, _ = target(name, size, np.random.default_rng(args.seed))
        import dpia

        sizes = dpia.compile(program, db=False).sizes_of(inputs)
        if args.budget > 0:
            for d in args.devices:
                result = explore(program, sizes, device=d, db=db, budget_s=args.budget, seed=args.seed,
                                 workers=args.workers)
                print(result.report(), flush=True)
        sources = list(keys)
        if args.sources_from_db:
            stored = {c.device for c in db.candidates(canonical(program), sizes) if c.status == "ok"}
            sources += sorted(stored - set(keys))
        rows = cross_run(program, inputs, reference, args.devices, sources, db, args.repeat)
        results.append((spec, rows))
        (out / "portability.json").write_text(json.dumps(
            [{"target": s, "rows": r} for s, r in results], indent=1, default=str))
        (out / "portability.md").write_text(markdown(results))
        print(markdown([(spec, rows)]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
