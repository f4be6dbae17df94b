"""Explore programs of examples/suite.py (and examples/seed.py) from their high-level form in
the space the rules generate, then time the best variant (replayed from the tuning database
by `dpia.compile`) against references measured in the same run.

    python benchmarks/explore_suite.py jacobi2d_5:h=2048,w=2048 gemv:m=4096,n=4096 --budget 120
    python benchmarks/explore_suite.py --suite bench --budget 30 --table suite.md   # every suite entry
    bash benchmarks/h200.sh suite jacobi2d_5:h=8192,w=8192 --budget 180      # the H200

A target is `NAME:size=value,...` with the suite entry's size names (see Entry.bench in
examples/suite.py; `total:n=...` and `mm:m=..,n=..,k=..` name examples/seed.py's sum and mm).
References: float32 NumPy on the host (the entry's `numpy`, the row "numpy f32"; the
kernel's answer is checked against the entry's `reference`, the float64 oracle); on a CUDA
device (torch present) the device-to-device copy of the program's inputs and output (the
memory roofline), torch.compile of the entry's NumPy function (benchmarks/torch_compiled.py),
torch.sum and the best of several hand-written float4 OpenCL grid-stride first stages
(benchmarks/sum_gpu.py, timed by profiling events as the explored kernel is) for `total`,
cuBLAS (TF32 off) for `mm`, `gemv` and `gemv_t`.  One JSON
per target under --out (or all in --out/all.json with --one-json), a table on stdout.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_targets import _median_s, _torch  # noqa: E402 -- the same timing helpers as issue 5's targets
from torch_compiled import cuda_time as _cuda_time  # noqa: E402


def target(name: str, size: dict, rng):
    """(program, inputs, NumPy reference (the oracle), float32 NumPy function (the one timed)) of a target."""
    import seed
    import suite

    if name == "total":
        x = rng.standard_normal(size["n"], dtype=np.float32)
        return seed.total, (x,), np.sum, np.sum
    if name == "mm":
        a = rng.standard_normal((size["m"], size["k"]), dtype=np.float32)
        b = rng.standard_normal((size["k"], size["n"]), dtype=np.float32)
        return seed.mm, (a, b), np.matmul, np.matmul
    entries = {e.name: e for e in suite.SUITE + list(getattr(suite, "ALTERNATIVES", []))}
    if name not in entries:
        raise SystemExit(f"unknown target {name!r}; known: total, mm, {', '.join(sorted(entries))}")
    entry = entries[name]
    return entry.program, tuple(entry.make_inputs(rng, **size)), entry.reference, entry.numpy


def gpu_references(name: str, inputs: tuple, nbytes: int, repeat: int) -> list[tuple[str, float]]:
    torch = _torch()
    if torch is None:
        return []
    out = []
    buf = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(buf)
    # a copy reads and writes: the program's bytes moved once each way is nbytes in total
    half = buf[: max(1, nbytes // 8)]
    out.append(("device copy of the same bytes", _cuda_time(torch, lambda: dst[: half.numel()].copy_(half), repeat)))
    torch.backends.cuda.matmul.allow_tf32 = False
    if name not in ("total", "mm"):
        out += torch_compile_reference(name, inputs, repeat, torch)
    if name == "total":
        tx = torch.from_numpy(inputs[0]).cuda()
        out.append(("torch.sum", _cuda_time(torch, lambda: tx.sum(), repeat)))
        from sum_gpu import best_hand_time  # the OpenCL read roofline, timed like the explored kernel

        t, shape = best_hand_time(inputs[0], repeat)
        out.append((f"hand float4 OpenCL first stage ({shape})", t))
    if name == "mm":
        ta, tb = (torch.from_numpy(v).cuda() for v in inputs)
        out.append(("cuBLAS (torch, TF32 off)", _cuda_time(torch, lambda: ta @ tb, repeat)))
    if name in ("gemv", "gemv_t"):  # A x + y, or A^T x + y: cuBLAS on the transposed view (no copy)
        ta, tx, ty = (torch.from_numpy(np.ascontiguousarray(v)).cuda() for v in inputs[:3])
        alpha, beta = float(inputs[3]), float(inputs[4])
        ta = ta.t() if name == "gemv_t" else ta
        out.append((f"cuBLAS {name} (torch.addmv)", _cuda_time(torch, lambda: torch.addmv(
            ty, ta, tx, beta=beta, alpha=alpha), repeat)))
    return out


def torch_compile_reference(name: str, inputs: tuple, repeat: int, torch) -> list[tuple[str, float]]:
    """torch.compile of the entry's float32 NumPy function (benchmarks/torch_compiled.py), checked
    against NumPy on the same inputs; nothing where it fails to compile or disagrees (said on stdout)."""
    from torch_compiled import check_and_time

    try:
        t, error, compile_s = check_and_time(name, inputs, repeat, torch)
    except Exception as exc:  # a reference that cannot be had is reported, not fatal
        print(f"torch.compile reference of {name} failed: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        return []
    if error > 1e-3:
        print(f"torch.compile reference of {name} disagrees with NumPy (relative error {error:.1e}): not used")
        return []
    return [(f"torch.compile (Inductor; compiled in {compile_s:.0f} s)", t)]


def run_target(spec: str, args) -> dict:
    import dpia
    from dpia.explore import explore, program_bytes
    from dpia.explore.tuning import TuningDB
    from dpia.programs import relative_error

    name, _, size_text = spec.partition(":")
    size = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
    rng = np.random.default_rng(args.seed)
    program, inputs, reference, numpy_f32 = target(name, size, rng)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db = TuningDB(out / "tuning.sqlite")
    kernel = dpia.compile(program, db=db)
    sizes = kernel.sizes_of(inputs)
    started = time.monotonic()
    finished: list = []
    result = explore(program, sizes, db=db, budget_s=args.budget, search=args.search, seed=args.seed,
                     workers=args.workers,
                     progress=lambda c: finished.append((time.monotonic() - started, c.status, c.time_s)))
    print(result.report(), flush=True)
    kernel = dpia.compile(program, db=db)
    got = kernel(*inputs)
    baseline_kernel = dpia.compile(program)  # what `dpia run` uses without the database: preset or default
    baseline_kernel(*inputs)
    t_best, t_baseline = _interleaved_times((kernel, baseline_kernel), inputs, args.repeat)
    error = relative_error(got, reference(*inputs))
    nbytes = program_bytes(program, sizes)
    rows = [("explored best (" + kernel.variant.kind + ")", t_best)]
    rows.append((f"baseline: {baseline_kernel.variant.kind} variant, timed with the best", t_baseline))
    if result.default is not None and result.default.time_s:
        rows.append((f"baseline: {result.baseline} variant, as the exploration timed it", result.default.time_s))
    from codegen_opencl.runtime import choose_device, device_identity

    on_gpu = "GPU" in str(device_identity(choose_device()).get("device_type", ""))
    refs = (gpu_references(name, inputs, nbytes, args.repeat) if on_gpu else []) or [
        ("numpy f32", _median_s(lambda: numpy_f32(*inputs), 5))]  # the host's reference when exploring a CPU
    rows += refs
    print(f"\n{spec} on {result.device}: {nbytes / 1e6:.1f} MB moved at least, relative error {error:.2e}")
    print(f"{'variant':40s} {'ms':>10s} {'GB/s':>9s} {'ref/best':>9s}")
    table = []
    for label, t in rows:
        ratio = t / t_best
        print(f"{label:40s} {t * 1e3:10.4f} {nbytes / t / 1e9:9.1f} {ratio:9.3f}")
        table.append({"variant": label, "time_s": t, "GB_per_s": nbytes / t / 1e9, "ref_over_best": ratio})
    best_candidate = result.best
    summary = {"target": spec, "sizes": sizes, "device": result.device, "budget_s": args.budget,
               "elapsed_s": time.monotonic() - started, "tried": result.tried, "failed": result.failed,
               "by_stage": dict(result.by_stage), "infeasible": dict(result.infeasible),
               "skeletons": len(result.by_family), "relative_error": error, "rows": table,
               "best": best_candidate.params.get("family") if best_candidate else None,
               "best_choices": best_candidate.params.get("choices") if best_candidate else None,
               "time_to_best_s": _time_to_fraction(finished, result.best and result.best.time_s, 1.0),
               "time_to_0.9_s": _time_to_fraction(finished, result.best and result.best.time_s, 0.9)}
    if not args.one_json:
        (out / f"{name}_{size_text.replace(',', '_').replace('=', '')}.json").write_text(
            json.dumps(summary, indent=1, default=str))
    return summary


def _interleaved_times(kernels, inputs, repeat: int, rounds: int = 3) -> list[float]:
    """Each kernel's best median over `rounds` rounds that alternate between the kernels, so
    a burst of load on the machine does not favour one of them."""
    bound = [k.bind(*inputs) for k in kernels]
    best = [float("inf")] * len(bound)
    for _ in range(rounds):
        for i, b in enumerate(bound):
            best[i] = min(best[i], b.time(repeat=repeat))
    return best


def _time_to_fraction(finished: list, best_s: float | None, fraction: float) -> float | None:
    """Seconds from the exploration's start until a candidate within `fraction` of the best
    speed had finished (`finished`: (seconds since the start, status, time) per candidate)."""
    if best_s is None:
        return None
    return next((round(at, 1) for at, status, t in finished if status == "ok" and t <= best_s / fraction), None)


def suite_targets(size_name: str) -> list[str]:
    """Every entry of examples/suite.py's SUITE at its `size_name` sizes (small, moderate, bench)."""
    import suite

    return [f"{e.name}:" + ",".join(f"{k}={v}" for k, v in getattr(e, size_name).items()) for e in suite.SUITE]


def markdown_table(summaries: list[dict]) -> str:
    """One row per target: the explored best, the baseline, and every reference measured in the
    same run (float32 NumPy on the host; on a GPU the device copy, torch.compile, cuBLAS) with
    its time over the best's (above 1: the best is faster; for the copy, the fraction of the
    copy's bandwidth the best reaches)."""
    lines = ["| target | tried | best (ms) | best (GB/s) | baseline (ms) | reference: ms, its time / best's | time to 0.9 (s) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in summaries:
        best, *others = s["rows"]
        baseline = next((r for r in others if r["variant"].startswith("baseline")), None)
        refs = [r for r in others if not r["variant"].startswith("baseline")]
        baseline_ms = f"{baseline['time_s'] * 1e3:.3f}" if baseline else "-"
        ref_text = "; ".join(f"{r['variant']}: {r['time_s'] * 1e3:.3f}, **{r['ref_over_best']:.2f}x**" for r in refs)
        lines.append(f"| {s['target']} | {s['tried']} | {best['time_s'] * 1e3:.3f} | {best['GB_per_s']:.1f} | {baseline_ms} | "
                     f"{ref_text} | {s.get('time_to_0.9_s')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", help="NAME:size=value,... (suite entries, total, mm)")
    ap.add_argument("--suite", choices=("small", "moderate", "bench"), default=None,
                    help="add every entry of examples/suite.py at these sizes")
    ap.add_argument("--table", default=None, help="write a markdown table of all targets here")
    ap.add_argument("--one-json", action="store_true", help="every target's summary in --out/all.json")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds of exploration per target")
    ap.add_argument("--search", default="bayesian")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", default="explore_suite_out")
    ap.add_argument("--part", default="1/1", help="K/N: every N-th target from the K-th (a run split over calls)")
    args = ap.parse_args(argv)
    targets = list(args.targets) + (suite_targets(args.suite) if args.suite else [])
    if not targets:
        ap.error("name targets or --suite")
    k, _, n = args.part.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        ap.error(f"--part wants K/N with 1 <= K <= N, got {args.part!r}")
    targets = targets[int(k) - 1::int(n)]
    summaries = []
    for spec in targets:
        try:
            summaries.append(run_target(spec, args))
        except Exception as exc:  # one target's failure must not lose the others' results
            print(f"{spec}: FAILED {type(exc).__name__}: {exc}", flush=True)
        if args.table:
            Path(args.table).write_text(markdown_table(summaries))
        if args.one_json:
            (Path(args.out) / "all.json").write_text(json.dumps(summaries, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
