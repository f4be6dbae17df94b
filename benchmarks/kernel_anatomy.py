"""What a kernel's time is made of on an NVIDIA device: the PTX that NVIDIA's OpenCL compiler makes of
a program's kernels (static instruction counts by opcode, registers and spills from ptxas), the same
counts for torch.compile's Triton kernels of the same program, and the time of each, in one run.

    python benchmarks/kernel_anatomy.py black_scholes:n=16777216 nbody:n=16384 --out DIR
    python benchmarks/kernel_anatomy.py md:n=81920,m=128 --db DIR/tuning.sqlite   # the tuned variant too

Issue 13 asks, for each program that misses its target, what limits it: this prints the
instruction mix of both sides (a transcendental library call is a `call` or a long run of `fma`s;
PTX `div.rn` against `div.full`, `ex2.approx`, `lg2.approx` show which precision each side asked
for) and times our kernel under build options that trade precision for speed (`-cl-mad-enable`,
`-cl-fast-relaxed-math`), each with its error against the float64 oracle, so a table row can say
whether a miss is the instruction mix or the memory traffic.  The PTX files are written under --out.
Targets as in explore_suite.py.  Needs an NVIDIA OpenCL device (the binary of a built program is
its PTX there) and, for the Triton side, torch with CUDA.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

OPTION_SETS = ((), ("-cl-mad-enable",), ("-cl-fast-relaxed-math",))
_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)\s*[^:]*;\s*$")


def opcode_counts(ptx: str) -> collections.Counter:
    """{opcode with its first qualifier (`ld.global`, `fma.rn`, `div.rn`): how many} over the
    instructions of `ptx` (directives, labels and braces are not instructions)."""
    counts: collections.Counter = collections.Counter()
    for line in ptx.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", ".", "{", "}")) or stripped.endswith(":"):
            continue
        match = _INSTRUCTION.match(stripped)
        if match:
            parts = match.group(1).split(".")
            counts[".".join(parts[:2]) if len(parts) > 1 and not parts[1][:1].isdigit() else parts[0]] += 1
    return counts


def summary(counts: collections.Counter, top: int = 14) -> str:
    return f"{sum(counts.values())} instructions: " + ", ".join(f"{op} {n}" for op, n in counts.most_common(top))


def ptxas_lines(log: str) -> list[str]:
    """The build log's register, spill and shared-memory lines (-cl-nv-verbose)."""
    return [line.strip() for line in log.splitlines() if "registers" in line or "spill" in line or "smem" in line]


def ours(program, inputs, reference, db, out: Path, repeat: int) -> list[dict]:
    """Each variant (the default, and the tuned one where `db` holds it) under each OPTION_SETS:
    its time, error, PTX counts and ptxas lines."""
    import pyopencl as cl

    import dpia
    from dpia.programs import relative_error

    rows = []
    variants = [("default", False)] + ([("tuned", db)] if db else [])
    for label, variant_db in variants:
        for options in OPTION_SETS:
            kernel = dpia.compile(program, db=variant_db, options=list(options))
            got = kernel(*inputs)
            runtime = kernel.kernel
            seconds = kernel.bind(*inputs).time(repeat=repeat, warmup=5)
            nvidia = "NVIDIA" in runtime.session.device.platform.name
            built = cl.Program(runtime.session.context, runtime.source).build(
                options=list(options) + (["-cl-nv-verbose"] if nvidia else []))
            ptx = built.get_info(cl.program_info.BINARIES)[0].decode(errors="replace")
            log = built.get_build_info(runtime.session.device, cl.program_build_info.LOG)
            name = f"ours_{label}{''.join(o.replace('-cl-', '_') for o in options)}"
            (out / f"{name}.ptx").write_text(ptx)
            (out / f"{name}.cl").write_text(runtime.source)
            counts = opcode_counts(ptx)
            rows.append({"side": f"ours, {label} ({kernel.variant.kind})", "options": " ".join(options) or "(none)",
                         "ms": seconds * 1e3, "error": relative_error(got, reference(*inputs)),
                         "instructions": sum(counts.values()), "mix": summary(counts), "ptxas": ptxas_lines(log)})
    return rows


def triton(name: str, inputs, repeat: int, out: Path) -> list[dict]:
    """torch.compile of the program (benchmarks/torch_compiled.py) with Triton's cache in a fresh
    folder, so the PTX of exactly its kernels can be read back."""
    cache = out / "triton_cache"
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    from torch_compiled import check_and_time

    torch._dynamo.reset()
    seconds, error, _ = check_and_time(name, inputs, repeat, torch)
    rows = []
    for path in sorted(cache.rglob("*.ptx")):
        counts = opcode_counts(path.read_text(errors="replace"))
        rows.append({"side": f"torch.compile kernel {path.stem}", "options": "", "ms": seconds * 1e3,
                     "error": error, "instructions": sum(counts.values()), "mix": summary(counts), "ptxas": []})
    return rows or [{"side": "torch.compile", "options": "", "ms": seconds * 1e3, "error": error,
                     "instructions": None, "mix": "(no PTX found in the Triton cache)", "ptxas": []}]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="+", help="NAME:size=value,... (as in explore_suite.py)")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/anatomy"))
    ap.add_argument("--db", default=None, help="a tuning database whose best variant is shown too")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import numpy as np
    from explore_suite import target

    everything = {}
    for spec in args.targets:
        name, _, size_text = spec.partition(":")
        size = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
        program, inputs, reference, _ = target(name, size, np.random.default_rng(args.seed))
        out = Path(args.out) / "anatomy" / f"{name}_{size_text.replace(',', '_').replace('=', '')}"
        out.mkdir(parents=True, exist_ok=True)
        rows = ours(program, inputs, reference, args.db, out, args.repeat) + triton(name, inputs, args.repeat, out)
        print(f"\n== {spec}")
        for row in rows:
            print(f"{row['side']:48s} {row['options']:24s} {row['ms']:9.4f} ms  error {row['error']:.1e}")
            print(f"    {row['mix']}")
            for line in row["ptxas"]:
                print(f"    {line}")
        everything[spec] = rows
    Path(args.out, "anatomy", "anatomy.json").write_text(json.dumps(everything, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
