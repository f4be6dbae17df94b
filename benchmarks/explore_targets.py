"""Issue 5's targets: explore a high-level program on a device, then measure the best
variant (compiled through `dpia.compile`, which replays it from the tuning database) against
references measured in the same run.

    python benchmarks/explore_targets.py sum --log2n 26 --budget 600           # PoCL: numpy.sum, hand float8
    python benchmarks/explore_targets.py mm --sizes 1024x1024x1024 --budget 600  # PoCL: numpy (OpenBLAS)
    bash benchmarks/h200.sh explore sum --log2n 28 --budget 300                 # H200: torch.sum
    bash benchmarks/h200.sh explore mm --sizes 4096x4096x4096 --budget 300      # H200: cuBLAS, TF32 off

Programs: `total` (reduce (+) 0) and `mm` (the naive map of maps of dot products) of
examples/seed.py, exactly as a user writes them.  Prints one table row per measured
variant and writes the database and the exploration plots under --out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))


def _median_s(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _torch():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except ImportError:
        return None


def sum_references(x: np.ndarray, repeat: int) -> list[tuple[str, float]]:
    torch = _torch()
    if torch is not None:
        tx = torch.from_numpy(x).cuda()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(repeat + 3):
            start.record()
            tx.sum()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        return [("torch.sum", float(np.median(times[3:])))]
    from sum_pocl import hand_kernel_time

    t_hand, _ = hand_kernel_time(x, 1024, repeat)
    return [("numpy.sum", _median_s(lambda: np.sum(x), repeat)), ("hand float8 OpenCL kernel", t_hand)]


def mm_references(a: np.ndarray, b: np.ndarray, repeat: int) -> list[tuple[str, float]]:
    torch = _torch()
    if torch is not None:
        from mm_gpu import cublas_time

        return [("cuBLAS (torch, TF32 off)", cublas_time(a, b, repeat)[0])]
    return [("numpy (OpenBLAS)", _median_s(lambda: a @ b, repeat))]


def run(kind: str, sizes: dict, inputs: tuple, references, work: float, unit: str, args) -> dict:
    import dpia
    from dpia.explore import explore, write_exploration_plots
    from functional.errors import FunctionalError
    from dpia.explore.tuning import TuningDB

    import seed

    program = seed.total if kind == "sum" else seed.mm
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db = TuningDB(out / "tuning.sqlite")
    label = "x".join(str(sizes[k]) for k in ("M", "N", "K") if k in sizes) if kind == "mm" else str(sizes["N"])

    def progress(c):
        t = f"{c.time_s * 1e3:.3f} ms" if c.time_s else c.status
        print(f"  [{c.params.get('family', '')}] {t}", flush=True)

    result = explore(program, sizes, db=db, budget_s=args.budget, search=args.search, seed=args.seed,
                     workers=args.workers, progress=progress if args.verbose else None)
    print(result.report(), flush=True)
    try:
        plots = write_exploration_plots(result, program, out / f"{kind}_{label}")
    except FunctionalError as exc:  # e.g. no matplotlib on this machine: the numbers still count
        print(f"no plots: {exc}")
        plots = ()
    kernel = dpia.compile(program, db=db)
    got = kernel(*inputs)
    t_best = kernel.time(*inputs, repeat=args.repeat)
    refs = references()
    print(f"\n{kind} {label} on {result.device}: best variant ({kernel.variant.kind}) "
          f"{t_best * 1e3:.3f} ms, {work / t_best:.1f} {unit}", flush=True)
    rows = [{"variant": f"explored best ({kernel.variant.kind})", "time_s": t_best, "rate": work / t_best}]
    if result.default is not None and result.default.time_s:
        rows.append({"variant": f"baseline: {result.baseline} variant (exploration)", "time_s": result.default.time_s,
                     "rate": work / result.default.time_s})
    for name, t in refs:
        rows.append({"variant": name, "time_s": t, "rate": work / t, "best_vs_ref": t / t_best})
    print(f"{'variant':42s} {'ms':>10s} {unit:>10s} {'best x ref':>10s}")
    for r in rows:
        ratio = f"{r['best_vs_ref']:.3f}" if "best_vs_ref" in r else ""
        print(f"{r['variant']:42s} {r['time_s'] * 1e3:10.3f} {r['rate']:10.1f} {ratio:>10s}")
    summary = {"program": kind, "sizes": sizes, "device": result.device, "tried": result.tried,
               "failed": result.failed, "by_stage": dict(result.by_stage), "elapsed_s": result.elapsed_s,
               "best_derivation": kernel.variant.derivation, "rows": rows, "plots": [str(p) for p in plots],
               "check_max_abs_error": float(np.max(np.abs(np.asarray(got) - args.expected(*inputs))))}
    (out / f"{kind}_{label}.json").write_text(json.dumps(summary, indent=1, default=str))
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", choices=("sum", "mm"))
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--sizes", default="1024x1024x1024", help="mm: MxNxK list")
    ap.add_argument("--budget", type=float, default=600.0, help="seconds of exploration per size")
    ap.add_argument("--search", default="bayesian")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--out", default="explore_out")
    ap.add_argument("--workers", type=int, default=None, help="compiling processes (default: dpia.explore's)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    if args.target == "sum":
        n = 1 << args.log2n
        x = rng.standard_normal(n, dtype=np.float32)
        args.expected = lambda v: np.sum(v, dtype=np.float64)
        run("sum", {"N": n}, (x,), lambda: sum_references(x, args.repeat), n * 4 / 1e9, "GB/s", args)
        return 0
    for spec in args.sizes.split(","):
        m, n, k = (int(v) for v in spec.split("x"))
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        args.expected = lambda p, q: p.astype(np.float64) @ q.astype(np.float64)
        run("mm", {"M": m, "N": n, "K": k}, (a, b), lambda a=a, b=b: mm_references(a, b, args.repeat),
            2.0 * m * n * k / 1e9, "GFLOP/s", args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
