"""Session 38, call A: SGEMM variants of issue 13's points, each checked against the sampled float64 oracle,
timed alternately in one process beside cuBLAS, with each one's ptxas lines (registers, spills) and static PTX mix:
the unrolled 8 x 8 preset and the 16 x 8 blocks, double-buffered with asynchronous copies (cp.async; rule
async_staging since, which this script appends; call A ran before it, when the translation used cp.async wherever the
device had it, and withheld the intrinsic for the plain copies) and with plain copies, at k-tiles of 8 and 16; split-k at
8192 x 64 x 8192 with the items' k-steps unrolled.  Then the counters of --profile (a label printed below).
Call B (--set B): the new GPU preset (double-buffered by plain copies) beside other tiles of 8 x 8 blocks.

    python3 benchmarks/explore_generated_h200/session38/sgemm_variants.py [--small] [--set B] [--profile LABEL]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/

import numpy as np

import issue13
from codegen_opencl import runtime

ROOT = Path(__file__).resolve().parents[3]
UNROLL = "unroll_reduce_seq()@1.0.1.0.1.1.0.1.0.1.1.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.1"
SPLIT = "0.1.0.1.0."  # where split_k_nest puts the nest the tile steps address from the root
DOUBLE = "double_buffer()@root"


def points(spec: str) -> dict[str, issue13.PointSpec]:
    return {p.name: p for p in issue13.load_points(issue13.POINTS)[spec]}


def variant(base: issue13.PointSpec, name: str, *extra: str) -> issue13.PointSpec:
    return issue13.PointSpec(name, "; ".join([base.skeleton, *extra]), dict(base.slots))


def sgemm_variants() -> list[tuple[issue13.PointSpec, bool]]:
    """(point, asynchronous copies) at 4096^3."""
    p = points("mm:m=4096,n=4096,k=4096")
    p8 = p["register-blocked 128x128 k8 8x8, k-steps unrolled (the preset's skeleton)"]
    p8k16 = p["register-blocked 128x128 k16 8x8, k-steps unrolled (the preset's skeleton)"]
    w16 = p["register-blocked 256x128 k8 16x8, k-steps unrolled, double-buffered"]
    w16k16 = variant(p["register-blocked 256x128 k16 16x8 (the preset's skeleton, cuBLAS's outputs per thread)"],
                     "256x128 k16 16x8 unrolled, double-buffered", UNROLL, DOUBLE)
    out = [(p8, True)]
    for base, name in ((p8, "128x128 k8 8x8 unrolled, double-buffered"),
                       (p8k16, "128x128 k16 8x8 unrolled, double-buffered")):
        v = variant(base, name, DOUBLE)
        out += [(v, True), (v, False)]
    for v in (w16, w16k16):
        out += [(v, True), (v, False)]
    return out


def split_variants() -> list[tuple[issue13.PointSpec, bool]]:
    """(point, asynchronous copies) at 8192 x 64 x 8192: the table's split-k point with its items' k-steps
    unrolled, at k-tiles of 8 with 8 x 8 blocks too, double-buffered or not."""
    p = points("mm:m=8192,n=64,k=8192")
    base = p["split-k 8 chunks, register-blocked 128x64 k16 8x4"]
    unroll = SPLIT + UNROLL.partition("@")[2]
    out = [(base, True)]
    for slots, name in (({}, "split-k 8 chunks 128x64 k16 8x4"), ({"s3": 8, "s4": 8, "s5": 8}, "split-k 8 chunks 128x64 k8 8x8")):
        s = {**base.slots, **slots}
        u = issue13.PointSpec(name + " unrolled", f"{base.skeleton}; unroll_reduce_seq()@{unroll}", s)
        d = issue13.PointSpec(name + " unrolled, double-buffered", f"{u.skeleton}; {DOUBLE}", s)
        out += [(u, True), (d, True), (d, False)]
    return out


def tile_variants(spec: str) -> list[tuple[issue13.PointSpec | None, bool]]:
    """Call B: the GPU preset (None: dpia.compile, now the 8 x 8 blocks unrolled and double-buffered by plain
    copies), the single-buffered unrolled point, and other tiles of 8 x 8 blocks (128 x 64: 128 items a group,
    more groups per compute unit; 64 x 128), double-buffered both ways."""
    p = points(spec)
    p8 = p["register-blocked 128x128 k8 8x8, k-steps unrolled (the preset's skeleton)"]
    out: list = [(None, False), (p8, True)]
    for tiles, name in ((dict(s0=128, s1=64, s5=32, s7=32), "128x64 k8 8x8 unrolled, double-buffered (copies in rows of 32, 32)"),
                        (dict(s0=128, s1=64, s5=64, s7=32), "128x64 k8 8x8 unrolled, double-buffered (copies in rows of 64, 32)"),
                        (dict(s0=64, s1=128, s5=64, s7=64), "64x128 k8 8x8 unrolled, double-buffered")):
        v = issue13.PointSpec(name, f"{p8.skeleton}; {DOUBLE}", {**p8.slots, **tiles})
        out += [(v, False), (v, True)]
    return out


def label(point: issue13.PointSpec, asynchronous: bool) -> str:
    if DOUBLE not in point.skeleton:
        return point.name
    return point.name + (" [cp.async]" if asynchronous else " [plain copies]")


def build(spec: str, prob, point: issue13.PointSpec | None, asynchronous: bool, device):
    """issue13.try_kernel of the point (None: dpia.compile's default), its translation told the device has no
    cp.async where not `asynchronous`."""
    if point is None:
        import dpia

        return issue13.try_kernel("dpia.compile (the device's preset)", "candidate",
                                  lambda: dpia.compile(prob.program, device=device, db=False), prob)
    import dpia

    sizes = dpia.compile(prob.program, db=False).sizes_of(prob.inputs)
    staged = point
    if asynchronous and DOUBLE in point.skeleton and "async_staging" not in point.skeleton:
        staged = issue13.PointSpec(point.name, f"{point.skeleton}; {async_staging(prob.program, sizes, point)}",
                                   point.slots)
    return issue13.try_kernel(label(point, asynchronous), "candidate",
                              lambda: issue13.compile_point(prob.program, sizes, staged, device), prob)


def async_staging(program, sizes, point: issue13.PointSpec) -> str:
    """The step making the point's double-buffered fold's stagings asynchronous (rule async_staging; before
    it existed, call A's translation made them so wherever the device has cp.async)."""
    from dpia.explore.algorithmic import apply_steps
    from dpia.explore.mapping import async_stagings
    from dpia.explore.space import parse_steps
    from dpia.explore.stages import prepared_body

    done = apply_steps(prepared_body(program, sizes), parse_steps(point.skeleton), point.slots)
    (step,) = async_stagings(done, frozenset({"async_copy"}))
    return str(step)


def anatomy(tried, out: Path) -> str:
    """ptxas's register and spill lines and the static PTX mix of the kernel (NVIDIA only)."""
    import pyopencl as cl
    from kernel_anatomy import opcode_counts, ptxas_lines, summary

    kernel = tried.bound._kernel
    session = kernel.session
    if "NVIDIA" not in session.device.platform.name:
        return "(not NVIDIA: no PTX)"
    built = cl.Program(session.context, kernel.source).build(options=list(kernel._options or []) + ["-cl-nv-verbose"])
    ptx = built.get_info(cl.program_info.BINARIES)[0].decode(errors="replace")
    log = built.get_build_info(session.device, cl.program_build_info.LOG)
    name = "".join(c if c.isalnum() else "_" for c in tried.label)[:80]
    (out / f"{name}.cl").write_text(kernel.source)
    return "; ".join(ptxas_lines(log)) + " | " + summary(opcode_counts(ptx), 10)


def row(spec: str, small: bool, chosen, out: Path, device, torch) -> list:
    r = next(r for r in issue13.rows() if r.target == spec)
    spec = r.spec(small)
    prob = issue13.problem(r, spec, np.random.default_rng(0))
    print(f"\n== {spec}", flush=True)
    tried = []
    for point, asynchronous in chosen:
        t = build(spec, prob, point, asynchronous, device)
        print(f"   {t.label}: {t.status} {t.why}", flush=True)
        if t.status == "ok":
            print(f"      {anatomy(t, out)}", flush=True)
            tried.append(t)
    refs = issue13.references(r, prob, sum(a.nbytes for a in prob.inputs), 20, torch) if torch else {}
    times = issue13.interleaved_times([t.bound for t in tried], 20, rounds=3)
    best_ref = min((v for k, v in refs.items() if "cuBLAS" in k), default=None)
    for t, s in sorted(zip(tried, times), key=lambda x: x[1]):
        ratio = f"{best_ref / s:.3f}x cuBLAS" if best_ref else ""
        print(f"   {s * 1e3:8.4f} ms  {ratio}  {t.label}", flush=True)
    for k, v in refs.items():
        print(f"   reference {k}: {v * 1e3:.4f} ms", flush=True)
    return tried


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--set", choices=("A", "B"), default="A", help="A: call A's variants; B: call B's tiles")
    ap.add_argument("--profile", default=None, help="a variant's label: its counters (benchmarks/kernel_counters.py)")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = runtime.choose_device()
    torch = issue13._torch() if not args.small else None
    if args.set == "A":
        kept = row("mm:m=4096,n=4096,k=4096", args.small, sgemm_variants(), out, device, torch)
        kept += row("mm:m=8192,n=64,k=8192", args.small, split_variants(), out, device, torch)
    else:
        kept = row("mm:m=4096,n=4096,k=4096", args.small, tile_variants("mm:m=4096,n=4096,k=4096"), out, device, torch)
        kept += row("mm:m=8192,n=8192,k=8192", args.small, tile_variants("mm:m=8192,n=8192,k=8192")[:2], out,
                    device, torch)
    if args.profile:
        import kernel_counters

        chosen = [t for t in kept if t.label == args.profile][:1]
        if not chosen:
            print(f"no variant called {args.profile!r} built", flush=True)
            return 1
        kernel_counters.build = lambda spec, label, seed: (None, None, chosen[0])
        entry = kernel_counters.our_side("mm:m=4096,n=4096,k=4096", args.profile, 0, out / "counters", 120)
        for s in entry["counters"]:
            print(f"   counters: {kernel_counters.summary_text(s)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
