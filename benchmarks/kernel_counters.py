"""Hardware counters of the kernels behind issue 13's misses: our OpenCL kernel's own PTX run through
CUDA under Nsight Compute, beside cuBLAS's kernel for the matrix products, in one device call.

    python benchmarks/kernel_counters.py --from-json OUT/issue13.json --out DIR      # every row that missed
    python benchmarks/kernel_counters.py --only mm:m=4096,n=4096,k=4096 --out DIR     # the row's fastest kernel

Issue 13 is done where each miss shows what limits it (profile counters, static instruction counts).
Nsight Compute profiles CUDA launches, not OpenCL ones; but on NVIDIA's OpenCL the binary of a built
program is PTX, which the CUDA driver loads as it is.  So each kernel of our host plan is *transplanted*:
its PTX loaded with CuPy, launched with the same global and local sizes on copies of the same buffers,
and its outputs compared byte for byte with the OpenCL run's (a transplant that differs is reported, its
counters not trusted).  The PTX reads the number of groups and the launch offsets from environment
registers, which CUDA leaves 0 (a loop stepping by get_num_groups would never end): `cuda_ptx` rewrites
them.  CUDA runs only in processes of its own (the transplant's check, the one under ncu), each given the
saved PTX and arguments and killed with its children past --timeout, so a kernel that does not end
costs its row, never the device call.  The counters are then read from that launch (`ncu --clock-control none`, the
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
import signal
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
           ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "DRAM %"),
           ("sm__issue_active.avg.pct_of_peak_sustained_elapsed", "issue slots busy %"),
           ("sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", "FMA pipe %"),
           ("sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", "ALU pipe %"),
           ("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "XU pipe %"),
           ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "LSU pipe %"),
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


# NVIDIA's OpenCL passes what CUDA has no notion of through environment registers, read from its PTX
# (session 35, the kernels of issue 13's table): %envreg0-2 the group offset, %envreg3-5 the global
# offset (both 0 here: no launch has an offset) and %envreg6-8 the number of groups, CUDA's %nctaid.
# Under CUDA they read 0, so a loop stepping by get_num_groups never ends: the transplant rewrites them.
_ENVREG = re.compile(r"%envreg(\d+)")
_ENVREG_IN_CUDA = {0: "0", 1: "0", 2: "0", 3: "0", 4: "0", 5: "0",
                   6: "%nctaid.x", 7: "%nctaid.y", 8: "%nctaid.z"}


def cuda_ptx(ptx: str) -> str:
    """`ptx` with every environment register replaced by what it holds in a CUDA launch without offsets
    (an immediate 0 or %nctaid); one the table does not know is an error, never a guess."""
    unknown = sorted({int(n) for n in _ENVREG.findall(ptx)} - set(_ENVREG_IN_CUDA))
    if unknown:
        raise CountersError(f"the PTX reads environment registers {unknown}, whose CUDA meaning is not known")
    # `mov.b32 %r, %envregN` becomes `mov.u32 %r, %nctaid.x` or `mov.b32 %r, 0`
    def one(m: re.Match) -> str:
        value = _ENVREG_IN_CUDA[int(m.group(3))]
        op = "mov.u32" if value.startswith("%") else m.group(1)
        return f"{op}{m.group(2)}{value}"
    return re.sub(r"(mov\.[bu]32)(\s+%\w+,\s*)%envreg(\d+)", one, ptx)


def save_launch(bound, folder: Path) -> None:
    """The plan's launches and a host copy of every argument, in `folder`/launch.npz: all the profiled
    process needs, so that under ncu nothing but CUDA runs (no OpenCL build, no second driver client)."""
    kernel = bound._kernel
    shapes = [cuda_shape(g, lc) for g, lc in bound._launches]
    arrays = {f"arg{i}": np.asarray(h) for i, h in enumerate(host_copies(bound))}
    meta = {"names": [ph.name for ph in kernel.phases], "shapes": shapes, "args": len(arrays)}
    np.savez(folder / "launch.npz", meta=np.asarray(json.dumps(meta)), **arrays)


class Transplant:
    """A saved plan's kernels (`folder`'s kernel.ptx and launch.npz) as CUDA functions on device copies
    of its arguments."""

    def __init__(self, folder: Path):
        import cupy as cp

        ptx = cuda_ptx((folder / "kernel.ptx").read_text())
        if _ENVREG.search(ptx):
            raise CountersError("an environment register is read other than by a mov.b32/u32")
        (folder / "kernel.cuda.ptx").write_text(ptx)
        with np.load(folder / "launch.npz") as saved:
            meta = json.loads(str(saved["meta"]))
            self.host = [saved[f"arg{i}"] for i in range(meta["args"])]
        declared = entry_params(ptx)
        for name in meta["names"]:
            if declared.get(name) != len(self.host):
                raise CountersError(f"kernel {name}: its PTX declares {declared.get(name)} parameters, the "
                                    f"plan passes {len(self.host)}")
        self.module = cp.RawModule(path=str(folder / "kernel.cuda.ptx"))
        self.functions = [self.module.get_function(name) for name in meta["names"]]
        self.shapes = [(tuple(g), tuple(b)) for g, b in meta["shapes"]]
        # a buffer is a 1-D byte array; a scalar a 0-d array, passed as its NumPy scalar
        self.args = [cp.asarray(h) if h.ndim == 1 and h.dtype == np.uint8 else h[()] for h in self.host]

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


def save_opencl_outputs(bound, folder: Path) -> None:
    """Run the plan once through OpenCL; every output's bytes in `folder`/opencl_outputs.npz."""
    import pyopencl as cl

    kernel = bound._kernel
    for ev in kernel._run(bound._args, bound._launches):
        ev.wait()
    outputs = {}
    for i in output_indices(bound):
        host = np.empty(bound._args[i].size, dtype=np.uint8)
        cl.enqueue_copy(kernel.queue, host, bound._args[i])
        outputs[f"arg{i}"] = host
    kernel.queue.finish()
    np.savez(folder / "opencl_outputs.npz", **outputs)


def transplant_check(folder: Path) -> dict:
    """In a CUDA-only process: run the saved transplant, compare its outputs with OpenCL's bytes, time it."""
    transplant = Transplant(folder)
    print("transplant: loaded", flush=True)
    transplant.run()
    print("transplant: ran", flush=True)
    same, differing = True, []
    with np.load(folder / "opencl_outputs.npz") as opencl:
        for key in opencl.files:
            theirs = transplant.args[int(key[3:])].get()
            if not np.array_equal(opencl[key], theirs):
                same = False
                differing.append(int(np.count_nonzero(opencl[key] != theirs)))
    return {"launches": [list(map(list, s)) for s in transplant.shapes], "same bytes": same,
            "differing bytes": differing, "cuda ms": transplant.time_ms()}


def isolated(command: list[str], timeout: float, log: Path) -> tuple[int, str]:
    """(exit code, what it printed) of `command` in a session of its own, killed with all its children
    past `timeout` (a pipe held open by a grandchild would otherwise keep subprocess.run waiting)."""
    with open(log, "w+") as sink:
        child = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            sink.seek(0)
            raise CountersError(f"{Path(command[0]).name} ran past {timeout:.0f} s and was killed; it printed: "
                                f"{sink.read()[-800:]}") from None
        sink.seek(0)
        return code, sink.read()


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
    code, printed = isolated(command, timeout, log.with_suffix(".out"))
    text = log.read_text(errors="replace") if log.exists() else ""
    rows = parse_raw(text) or parse_raw(printed)
    if not rows:
        tail = (printed + text)[-1500:]
        raise CountersError(f"ncu profiled no kernel (exit {code}): {tail}")
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
    """Build our kernel, save its launches, transplant it, compare, time both ways, then profile the
    transplant (each step says so as it ends: a device call that runs out of time still shows where)."""
    from kernel_anatomy import opcode_counts, summary as mix

    row, prob, tried = build(spec, label, seed)
    bound, kernel = tried.bound, tried.bound._kernel
    folder = out / re.sub(r"[^\w.-]+", "_", spec)
    folder.mkdir(parents=True, exist_ok=True)
    ptx = ptx_of(kernel)
    (folder / "kernel.ptx").write_text(ptx)
    (folder / "kernel.cl").write_text(kernel.source)
    save_launch(bound, folder)
    result = {"label": tried.label, "static mix": mix(opcode_counts(ptx))}
    print(f"   built {tried.label}; static PTX: {result['static mix']}", flush=True)
    save_opencl_outputs(bound, folder)
    result["opencl ms"] = bound.time(repeat=20) * 1e3
    # CUDA runs only in processes of its own: this one holds NVIDIA's OpenCL
    code, printed = isolated([sys.executable, str(Path(__file__).resolve()), "--transplant", str(folder)],
                             timeout, folder / "transplant.out")
    if code != 0 or not (folder / "transplant.json").exists():
        raise CountersError(f"the transplant failed (exit {code}): {printed[-1500:]}")
    result.update(json.loads((folder / "transplant.json").read_text()))
    print(f"   transplant: same bytes {result['same bytes']}; OpenCL {result['opencl ms']:.4f} ms, "
          f"CUDA {result['cuda ms']:.4f} ms; launches {result['launches']}", flush=True)
    names = "|".join(ph.name for ph in kernel.phases)
    inner = ["--inner", str(folder)]
    result["counters"] = [summary(r) for r in profiled(inner, names, folder / "ncu.csv", timeout)]
    return result


def reference_side(spec: str, out: Path, timeout: float) -> list[dict]:
    """cuBLAS's kernel(s) of the row's product, profiled the same way (the longest launch first)."""
    folder = out / re.sub(r"[^\w.-]+", "_", spec)
    folder.mkdir(parents=True, exist_ok=True)
    rows = profiled(["--inner-reference", spec], None, folder / "ncu_reference.csv", timeout)
    return sorted((summary(r) for r in rows), key=lambda s: -(s.get("time") or 0))[:2]


def inner(folder: str) -> int:
    """Under ncu: launch the saved transplant once; only CUDA runs in this process."""
    import cupy as cp

    Transplant(Path(folder)).run()
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
    ap.add_argument("--label", default=None, help="with --only: profile the candidate of this name instead "
                                                   "(a point of benchmarks/issue13_points.json, or dpia.compile)")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/counters"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds for each ncu run")
    ap.add_argument("--deadline", type=float, default=540.0, help="rows not begun by then are skipped")
    ap.add_argument("--inner", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--inner-reference", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--transplant", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.inner:
        return inner(args.inner)
    if args.transplant:
        print("transplant: loading", flush=True)
        checked = transplant_check(Path(args.transplant))
        (Path(args.transplant) / "transplant.json").write_text(json.dumps(checked))
        return 0
    if args.inner_reference:
        return inner_reference(args.inner_reference)

    jobs = missed_rows(Path(args.from_json)) if args.from_json else []
    jobs += [(spec, args.label) for spec in args.only]
    if args.from_json and args.only:
        # the rows --only names, in its order (the cheap ones first: a call may run out of time)
        first = {s: min((i for i, o in enumerate(args.only) if o in s), default=None) for s, _ in jobs}
        jobs = sorted(((s, k) for s, k in jobs if k is not None and first[s] is not None), key=lambda j: first[j[0]])
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
            for s in entry["counters"]:
                print(f"   ours:      {summary_text(s)}", flush=True)
            if row_of(spec).kind in ("mm", "tf32"):
                entry["reference"] = reference_side(spec, out, args.timeout)
                for s in entry["reference"]:
                    print(f"   cuBLAS:    {summary_text(s)}", flush=True)
        except Exception as exc:  # one row's failure must not lose the others'
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:1500]}"
            print(f"   {entry['error']}", flush=True)
        everything[spec] = entry
        (out / "counters.json").write_text(json.dumps(everything, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
