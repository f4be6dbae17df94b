"""Hardware counters of the kernels behind issue 13's misses: our OpenCL kernel's own PTX run through
CUDA under Nsight Compute, beside cuBLAS's kernel for the matrix products, in one device call.

    python benchmarks/kernel_counters.py --from-json OUT/issue13.json --out DIR      # every row that missed
    python benchmarks/kernel_counters.py --only mm:m=4096,n=4096,k=4096 --out DIR     # the row's fastest kernel

Issue 13 is done where each miss shows what limits it (profile counters, static instruction counts).
Nsight Compute profiles CUDA launches, not OpenCL ones; but on NVIDIA's OpenCL the binary of a built
program is PTX, which the CUDA driver loads as it is.  So each kernel of our host plan is *transplanted*:
its PTX loaded with CuPy, launched with the same global and local sizes on copies of the same buffers,
and its outputs compared byte for byte with the OpenCL run's (a transplant that differs is reported, its
counters not trusted).  The counters are then read from that launch (`ncu --clock-control none`, the
sections SpeedOfLight, Occupancy, LaunchStats, WarpStateStats, ComputeWorkloadAnalysis,
MemoryWorkloadAnalysis_Tables), with each kernel's static PTX instruction mix
(kernel_anatomy.opcode_counts).  For the SGEMM and TF32 rows, torch's cuBLAS kernel of the same shape is
profiled the same way.  Needs NVIDIA's OpenCL, CuPy, torch and `ncu` (all on the lent device).

The kernel profiled per row: the one the table names (`--from-json`), else the row's fastest correct one
(issue13.candidates, timed here).  Output: a block per row on stdout and DIR/counters.json, whose
summaries benchmarks/issue13.py puts under its table (`--counters`).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "ComputeWorkloadAnalysis",
            "MemoryWorkloadAnalysis_Tables")
# The summary's columns: (ncu's raw metric, what the summary calls it).
SUMMARY = (("gpu__time_duration.sum", "time"),
           ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM %"),
           ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory %"),
           ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM %"),
           ("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue slots busy %"),
           ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy %"),
           ("sm__maximum_warps_per_active_cycle_pct", "theoretical occupancy %"),
           ("launch__registers_per_thread", "registers"),
           ("launch__shared_mem_per_block_static", "static shared bytes"),
           ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared load bank conflicts"),
           ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared load wavefronts"))
_STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")


class CountersError(Exception):
    """A row whose kernel cannot be built, transplanted or profiled: said in its block, the others go on."""


# ------------------------------------------------------------------------------ the kernel of a row


def row_of(spec: str):
    import issue13

    found = [r for r in issue13.rows() if r.target == spec or r.spec(True) == spec]
    if not found:
        raise CountersError(f"{spec}: not a row of issue 13's table")
    return found[0]


def build(spec: str, label: str | None, seed: int):
    """(problem, the Tried kernel, bound) of `spec`: the candidate called `label`, else the fastest."""
    import issue13
    from codegen_opencl.runtime import choose_device

    row, device = row_of(spec), choose_device()
    prob = issue13.problem(row, spec, np.random.default_rng(seed))
    points = issue13.load_points(issue13.POINTS).get(row.target, [])
    if label is not None:
        points = [p for p in points if p.name == label]
        if not points and not label.startswith("dpia.compile"):
            raise CountersError(f"{spec}: no point called {label!r} in {issue13.POINTS.name}")
    tried = [t for t in issue13.candidates(row, prob, points, device, False) if t.status == "ok"]
    if label is not None:
        tried = [t for t in tried if t.label == label or (label.startswith("dpia.compile")
                                                           and t.label.startswith("dpia.compile"))]
    elif len(tried) > 1:
        for t in tried:
            t.time_s = t.bound.time(repeat=10)
        tried.sort(key=lambda t: t.time_s)
    if not tried:
        raise CountersError(f"{spec}: kernel {label or '(fastest)'} did not build or check")
    return row, prob, tried[0]


# ------------------------------------------------------------------------------ the transplant


def ptx_of(kernel) -> str:
    binary = kernel.session.binary(kernel.source, kernel._options)
    if binary is None or b".entry" not in binary:
        raise CountersError("the built program's binary is not PTX (not NVIDIA's OpenCL?)")
    return binary.decode(errors="replace")


def entry_params(ptx: str) -> dict[str, int]:
    """{kernel name: how many parameters its .entry declares}."""
    return {name: len([p for p in params.split(",") if p.strip()])
            for name, params in re.findall(r"\.entry\s+(\w+)\s*\(([^)]*)\)", ptx, re.S)}


def host_copies(bound) -> list:
    """Every argument of the bound plan on the host: a buffer's bytes (inputs hold their data), a
    scalar as a NumPy scalar."""
    import pyopencl as cl

    kernel = bound._kernel
    out = []
    for a in bound._args:
        if isinstance(a, cl.Buffer):
            host = np.empty(a.size, dtype=np.uint8)
            cl.enqueue_copy(kernel.queue, host, a)
            out.append(host)
        else:
            out.append(np.asarray(a)[()])
    kernel.queue.finish()
    return out


def cuda_shape(g: tuple, lc: tuple | None) -> tuple[tuple, tuple]:
    """(grid, block) of an OpenCL launch; without a local size, the largest block of at most 256
    items that divides the global size (the kernel then does not depend on it)."""
    g = tuple(g) + (1,) * (3 - len(g))
    if lc is None:
        first = max(d for d in range(1, min(g[0], 256) + 1) if g[0] % d == 0)
        lc = (first,)
    lc = tuple(lc) + (1,) * (3 - len(lc))
    if any(gi % li for gi, li in zip(g, lc)):
        raise CountersError(f"a launch of {g} items in groups of {lc}: not a whole number of groups")
    return tuple(gi // li for gi, li in zip(g, lc)), lc


class Transplant:
    """The bound plan's kernels as CUDA functions on device copies of its arguments."""

    def __init__(self, bound, ptx_path: Path):
        import cupy as cp

        kernel = bound._kernel
        ptx = ptx_path.read_text()
        declared = entry_params(ptx)
        for ph in kernel.phases:
            if declared.get(ph.name) != len(bound._args):
                raise CountersError(f"kernel {ph.name}: its PTX declares {declared.get(ph.name)} parameters, the "
                                    f"plan passes {len(bound._args)}")
        self.module = cp.RawModule(path=str(ptx_path))
        self.functions = [self.module.get_function(ph.name) for ph in kernel.phases]
        self.shapes = [cuda_shape(g, lc) for g, lc in bound._launches]
        self.host = host_copies(bound)
        self.args = [cp.asarray(h) if isinstance(h, np.ndarray) and h.ndim == 1 and h.dtype == np.uint8 else h
                     for h in self.host]

    def run(self) -> None:
        for fn, (grid, block) in zip(self.functions, self.shapes):
            fn(grid, block, tuple(self.args))

    def time_ms(self, repeat: int = 20) -> float:
        import cupy as cp

        self.run()
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(repeat):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            self.run()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        return float(np.median(times))


def output_indices(bound) -> list[int]:
    return [i for i, (_, _, (kind, _, _)) in enumerate(bound._kernel._params) if kind == "output"]


def compare(bound, transplant: Transplant) -> dict:
    """Run the plan once through OpenCL and once through CUDA; whether every output is the same bytes."""
    import pyopencl as cl

    kernel = bound._kernel
    for ev in kernel._run(bound._args, bound._launches):
        ev.wait()
    transplant.run()
    same, differing = True, []
    for i in output_indices(bound):
        ours = np.empty(bound._args[i].size, dtype=np.uint8)
        cl.enqueue_copy(kernel.queue, ours, bound._args[i])
        kernel.queue.finish()
        theirs = transplant.args[i].get()
        if not np.array_equal(ours, theirs):
            same = False
            differing.append(int(np.count_nonzero(ours != theirs)))
    return {"same bytes": same, "differing bytes": differing}


# ------------------------------------------------------------------------------ under ncu


def profiled(inner: list[str], names: str | None, log: Path, timeout: float) -> list[dict]:
    """Rows of ncu's raw CSV page for the kernels `inner` (this script's --inner mode) launches."""
    ncu = shutil.which("ncu")
    if ncu is None:
        raise CountersError("ncu is not on PATH")
    command = [ncu, "--clock-control", "none", "--csv", "--page", "raw", "--print-units", "base", "--log-file", str(log)]
    for s in SECTIONS:
        command += ["--section", s]
    if names:
        command += ["--kernel-name", f"regex:^({names})$"]
    command += [sys.executable, str(Path(__file__).resolve())] + inner
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    text = log.read_text(errors="replace") if log.exists() else ""
    rows = parse_raw(text) or parse_raw(done.stdout)
    if not rows:
        tail = (done.stdout + done.stderr + text)[-1500:]
        raise CountersError(f"ncu profiled no kernel (exit {done.returncode}): {tail}")
    return rows


def parse_raw(text: str) -> list[dict]:
    """ncu --csv --page raw: a header, a row of units, then a row per profiled launch."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    table = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(table) < 3:
        return []
    header = table[0]
    return [dict(zip(header, row)) for row in table[2:] if len(row) == len(header)]


def _number(text: str) -> float | None:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def summary(raw: dict) -> dict:
    """The summary's metrics of one profiled launch, and its three largest stall reasons (warp cycles
    stalled per issued instruction)."""
    out = {"kernel": raw.get("Kernel Name", "?"), "grid": raw.get("Grid Size", ""), "block": raw.get("Block Size", "")}
    for metric, name in SUMMARY:
        if metric in raw:
            out[name] = _number(raw[metric])
    stalls = {m.group(1): _number(v) for k, v in raw.items() if (m := _STALL.match(k)) and _number(v)}
    out["top stalls"] = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
    return out


def summary_text(s: dict) -> str:
    parts = [f"{s['kernel'][:40]} grid {s['grid']} block {s['block']}"]
    if s.get("time") is not None:
        parts.append(f"{s['time'] / 1e3:.3f} us" if s["time"] < 1e4 else f"{s['time'] / 1e6:.3f} ms")
    for _, name in SUMMARY[1:]:
        if s.get(name) is not None:
            parts.append(f"{name} {s[name]:.4g}")
    if s.get("top stalls"):
        parts.append("stalls " + ", ".join(f"{k} {v:.2f}" for k, v in s["top stalls"]))
    return "; ".join(parts)


# ------------------------------------------------------------------------------ one row


def our_side(spec: str, label: str | None, seed: int, out: Path, timeout: float) -> dict:
    """Build our kernel, transplant it, compare, time both ways, then profile the transplant."""
    from kernel_anatomy import opcode_counts, summary as mix

    row, prob, tried = build(spec, label, seed)
    bound, kernel = tried.bound, tried.bound._kernel
    ptx = ptx_of(kernel)
    folder = out / re.sub(r"[^\w.-]+", "_", spec)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.ptx").write_text(ptx)
    (folder / "kernel.cl").write_text(kernel.source)
    transplant = Transplant(bound, folder / "kernel.ptx")
    result = {"label": tried.label, "launches": [list(map(list, s)) for s in transplant.shapes],
              "static mix": mix(opcode_counts(ptx)), **compare(bound, transplant)}
    result["opencl ms"] = bound.time(repeat=20) * 1e3
    result["cuda ms"] = transplant.time_ms()
    del transplant
    names = "|".join(ph.name for ph in kernel.phases)
    inner = ["--inner", spec, "--label", tried.label, "--seed", str(seed), "--out", str(out)]
    result["counters"] = [summary(r) for r in profiled(inner, names, folder / "ncu.csv", timeout)]
    return result


def reference_side(spec: str, out: Path, timeout: float) -> list[dict]:
    """cuBLAS's kernel(s) of the row's product, profiled the same way (the longest launch first)."""
    folder = out / re.sub(r"[^\w.-]+", "_", spec)
    folder.mkdir(parents=True, exist_ok=True)
    rows = profiled(["--inner-reference", spec], None, folder / "ncu_reference.csv", timeout)
    return sorted((summary(r) for r in rows), key=lambda s: -(s.get("time") or 0))[:2]


def inner(args) -> int:
    """Under ncu: build the row's kernel and launch its transplant once (no OpenCL launch, so ncu
    sees only the CUDA one)."""
    _, _, tried = build(args.inner, args.label, args.seed)
    folder = Path(args.out) / re.sub(r"[^\w.-]+", "_", args.inner)
    transplant = Transplant(tried.bound, folder / "kernel.ptx")
    transplant.run()
    import cupy as cp

    cp.cuda.Device().synchronize()
    return 0


def inner_reference(spec: str) -> int:
    import torch

    import issue13

    row = row_of(spec)
    _, size = issue13.parse_spec(spec)
    torch.backends.cuda.matmul.allow_tf32 = row.kind == "tf32"
    rng = np.random.default_rng(0)
    a = torch.from_numpy(rng.standard_normal((size["m"], size["k"]), dtype=np.float32)).cuda()
    b = torch.from_numpy(rng.standard_normal((size["k"], size["n"]), dtype=np.float32)).cuda()
    torch.mm(a, b)
    torch.cuda.synchronize()
    return 0


def missed_rows(path: Path) -> list[tuple[str, str]]:
    """(target, the kernel the table names) of every row of an issue13.py JSON that missed a goal."""
    data = json.loads(path.read_text())
    return [(r["target"], r["kernel"]) for r in data["rows"]
            if r.get("kernel") and any(v.get("verdict") == "miss" for v in r.get("verdicts") or ())]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from-json", default=None, help="issue13.py's JSON: profile every row that missed a goal")
    ap.add_argument("--only", nargs="*", default=[], help="targets to profile (their fastest kernel)")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/counters"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds for each ncu run")
    ap.add_argument("--deadline", type=float, default=540.0, help="rows not begun by then are skipped")
    ap.add_argument("--inner", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--inner-reference", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--label", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.inner:
        return inner(args)
    if args.inner_reference:
        return inner_reference(args.inner_reference)

    jobs = missed_rows(Path(args.from_json)) if args.from_json else []
    jobs += [(spec, None) for spec in args.only]
    if args.from_json and args.only:
        jobs = [(s, k) for s, k in jobs if k is not None and any(o in s for o in args.only)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started, everything = time.monotonic(), {}
    for spec, label in jobs:
        if time.monotonic() - started > args.deadline:
            everything[spec] = {"error": "skipped: past the deadline"}
            continue
        print(f"\n== {spec}: {label or '(fastest)'}", flush=True)
        entry: dict = {}
        try:
            entry.update(our_side(spec, label, args.seed, out, args.timeout))
            print(f"   transplant: same bytes {entry['same bytes']}; OpenCL {entry['opencl ms']:.4f} ms, "
                  f"CUDA {entry['cuda ms']:.4f} ms; launches {entry['launches']}")
            print(f"   static PTX: {entry['static mix']}")
            for s in entry["counters"]:
                print(f"   ours:      {summary_text(s)}")
            if row_of(spec).kind in ("mm", "tf32"):
                entry["reference"] = reference_side(spec, out, args.timeout)
                for s in entry["reference"]:
                    print(f"   cuBLAS:    {summary_text(s)}")
        except Exception as exc:  # one row's failure must not lose the others'
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:1500]}"
            print(f"   {entry['error']}")
        everything[spec] = entry
        (out / "counters.json").write_text(json.dumps(everything, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
