"""Issue 13's targets in one run, each against its reference measured in the same run, written as
a table into benchmarks/RESULTS.md (between `<!-- issue13:begin -->` and `<!-- issue13:end -->`).

    bash benchmarks/issue13.sh                                 # an NVIDIA GPU, one device call (~9 minutes at most)
    python benchmarks/issue13.py --small --no-write            # PoCL: every row at small sizes, NumPy references
    python benchmarks/issue13.py --from-json OUT/issue13.json  # a device run's rows into RESULTS.md, not measured again

Rows (`rows()`): SGEMM with TF32 off at 4096^3, 8192^3, 8192x64x8192 and 1024x1024x64 against cuBLAS (torch);
GEMV and GEMV^T 16384^2 against cuBLAS; the suite at the Lift papers' sizes (the targets of
benchmarks/h200_suite.sh) against torch.compile and the device copy (explore_suite.gpu_references); the TF32
GEMM 8192^3 against cuBLAS with TF32 on, speed and error; the sum of 2^28 floats whose trees end in warp
shuffles against the same trees in local memory.

Our kernel, per row: the fastest correct one of `dpia.compile` of the high-level program (the default
lowering with the presets; with --budget S, the best of an explore_suite.run_target exploration of S seconds
first; not in the warp row, which compares its points with their local-memory twins) and of the points
benchmarks/issue13_points.json lists for the row's target, each replayed as
time_points.py replays one (derived, compiled at the real sizes with its launch shape, checked against the
float64 oracle, timed by profiling events).  A point whose role is "reference" is timed as a reference
instead (the sum's local-memory trees).  A kernel that disagrees with the oracle is named in its row as
WRONG and never timed; a row whose measurement raises shows the exception; either way the other rows go on.
Why one script: the issue's numbers are only comparable when measured in one call on one card.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_suite import _median_s, _torch, gpu_references, target  # noqa: E402

BEGIN, END = "<!-- issue13:begin -->", "<!-- issue13:end -->"
SECTION = "## Issue 13's table (written by benchmarks/issue13.py)"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
POINTS = ROOT / "benchmarks" / "issue13_points.json"
LIMITS = ROOT / "benchmarks" / "issue13_limits.json"  # target -> what limits it where it misses (measured, recorded)
COUNTERS = ROOT / "benchmarks" / "issue13_counters.json"  # kernel_counters.py's counters of the misses' kernels
SUITE_SCRIPT = ROOT / "benchmarks" / "h200_suite.sh"
MEMORY_BOUND = 0.5  # the device copy takes at least this fraction of our time: the program is memory-bound
TOLERANCE = 1e-3  # dpia.explore.evaluate's: what the explorer accepts (mm and the sum, which have no suite entry)
TF32_TOLERANCE = 1e-2  # products of TF32 values (10-bit mantissas): cuBLAS TF32 is off by ~3e-4 at 8192^3
SAMPLED_ROWS = 32  # rows of a matrix product checked against float64 (the whole product costs minutes on a host)
RULE = (f"memory-bound: the device copy of the program's bytes takes at least {MEMORY_BOUND:g} of our time "
        "(copy ms / ours ms >= 0.5; explore_suite has no notion of its own); only then does the copy goal apply")

# Sizes under --small (a second or so a row on PoCL's 2-core CPU), per target name; every size keeps the
# divisors the programs and the seeded points need where it can.
SMALL = {
    "jacobi2d_5": "h=512,w=512", "hotspot2d": "h=512,w=512", "gemv": "m=1024,n=1024", "gemv_t": "m=1024,n=1024",
    "black_scholes": "n=262144", "nn": "n=262144", "kmeans": "n=8192,k=5,f=34", "md": "n=4096,m=32",
    "jacobi3d_7": "d=64,h=64,w=64", "conv2d_5x5": "h=512,w=512", "mri_q": "k=256,n=4096", "nbody": "n=1024",
    "total": "n=16777216",
}


class Issue13Error(Exception):
    """A table or a points file this script cannot use (markers out of order, a malformed point)."""


class NothingToTime(Issue13Error):
    """Every candidate kernel of a row disagreed with the oracle or failed to derive, build or run."""


# ------------------------------------------------------------------------------------ rows and goals


@dataclass(frozen=True)
class Goal:
    """`reference`'s time (or, metric "error", its error) over ours at least `at_least`; with
    `memory_bound_only`, only where the program is memory-bound (RULE)."""

    reference: str
    at_least: float
    memory_bound_only: bool = False
    metric: str = "time"

    def text(self) -> str:
        if self.metric == "error":
            return f"error <= {self.reference.removesuffix(' error')}'s"
        if self.reference == "copy":
            return f">= {self.at_least:g} of the copy" + (" if memory-bound" if self.memory_bound_only else "")
        return f">= {self.at_least:g}x {self.reference}"


@dataclass(frozen=True)
class Row:
    """One target of the issue: `target` as explore_suite names it (NAME:size=value,...; the key of
    issue13_points.json), its sizes under --small, what measures its references (`kind`: mm, suite,
    tf32, warp) and the issue's goals."""

    title: str
    target: str
    small: str
    kind: str
    goals: tuple[Goal, ...]

    @property
    def name(self) -> str:
        return self.target.partition(":")[0]

    def spec(self, small: bool) -> str:
        return f"{self.name}:{self.small}" if small else self.target


CUBLAS = Goal("cuBLAS", 0.9)
TORCH_COMPILE = Goal("torch.compile", 1.0)
COPY = Goal("copy", 0.85, memory_bound_only=True)


def suite_targets(script: Path = SUITE_SCRIPT) -> list[str]:
    """The suite's targets at the Lift papers' sizes, read from h200_suite.sh's `targets=(...)`
    (one list for both scripts)."""
    found = re.search(r"^targets=\((.*?)\)", script.read_text(), re.S | re.M)
    if found is None:
        raise Issue13Error(f"{script}: no targets=(...) list")
    return found.group(1).split()


def rows(script: Path = SUITE_SCRIPT) -> list[Row]:
    """Every row of the table, in order: SGEMM, GEMV, the rest of the suite, TF32, the warp sum."""
    out = [Row("SGEMM (TF32 off)", "mm:m=4096,n=4096,k=4096", "m=256,n=256,k=256", "mm", (CUBLAS,)),
           Row("SGEMM (TF32 off)", "mm:m=8192,n=8192,k=8192", "m=512,n=512,k=512", "mm", (CUBLAS,)),
           Row("SGEMM (TF32 off)", "mm:m=8192,n=64,k=8192", "m=1024,n=64,k=1024", "mm", (Goal("cuBLAS", 1.2),)),
           Row("SGEMM (TF32 off)", "mm:m=1024,n=1024,k=64", "m=256,n=256,k=64", "mm", (Goal("cuBLAS", 1.5),))]
    suite = suite_targets(script)
    gemvs = [t for t in suite if t.partition(":")[0] in ("gemv", "gemv_t")]
    for spec in gemvs + [t for t in suite if t not in gemvs]:
        name = spec.partition(":")[0]
        blas = (Goal("cuBLAS addmv", 0.95),) if name in ("gemv", "gemv_t") else ()
        title = {"gemv": "GEMV", "gemv_t": "GEMV^T"}.get(name, name)
        out.append(Row(title, spec, SMALL.get(name, spec.partition(":")[2]), "suite", blas + (TORCH_COMPILE, COPY)))
    out.append(Row("TF32 GEMM (default lowering)", "tf32_mm:m=8192,n=8192,k=8192", "m=256,n=256,k=256", "tf32",
                   (Goal("cuBLAS TF32", 0.8), Goal("cuBLAS TF32 error", 1.0, metric="error"))))
    out.append(Row("sum, trees ending in warp shuffles", "total:n=268435456", SMALL["total"], "warp",
                   (Goal("local-memory tree", 1.0),)))
    return out


# ------------------------------------------------------------------------------------ problems


@dataclass
class Problem:
    """A row's program, inputs and oracle: `check(got)` is the error the row's tolerance bounds."""

    program: object
    inputs: tuple
    check: Callable
    tolerance: float
    numpy_f32: Callable
    facts: dict = field(default_factory=dict)  # what the row reports besides times (an error to compare)


def parse_spec(spec: str) -> tuple[str, dict[str, int]]:
    name, _, text = spec.partition(":")
    return name, {k: int(v) for k, v in (kv.split("=") for kv in text.split(",") if kv)}


def sampled_error(got: np.ndarray, a: np.ndarray, b: np.ndarray, rows: np.ndarray) -> float:
    """max |C - AB| over `rows`, relative to max(1, max |AB|) there (dpia.programs.relative_error's
    scale), AB in float64: a product's oracle without the whole float64 product."""
    want = a[rows].astype(np.float64) @ b.astype(np.float64)
    return float(np.abs(np.asarray(got)[rows] - want).max() / max(1.0, float(np.abs(want).max())))


def tf32_error(got: np.ndarray, a: np.ndarray, b: np.ndarray, rows: np.ndarray) -> float:
    """max |C - AB| / max |AB| over `rows` (benchmarks/tf32_gemm_gpu.error: the issue's comparison with cuBLAS)."""
    want = a[rows].astype(np.float64) @ b.astype(np.float64)
    return float(np.abs(np.asarray(got)[rows] - want).max() / np.abs(want).max())


def problem(row: Row, spec: str, rng) -> Problem:
    """The program, inputs and oracle of `row` at `spec`'s sizes."""
    name, size = parse_spec(spec)
    if row.kind == "tf32":
        from tf32_gemm_gpu import tf32_mm

        a = rng.standard_normal((size["m"], size["k"]), dtype=np.float32)
        b = rng.standard_normal((size["k"], size["n"]), dtype=np.float32)
        rows_ = rng.choice(size["m"], min(SAMPLED_ROWS, size["m"]), replace=False)
        return Problem(tf32_mm(), (a, b), lambda got: tf32_error(got, a, b, rows_), TF32_TOLERANCE, np.matmul,
                       {"rows": rows_})
    program, inputs, reference, numpy_f32 = target(name, size, rng)
    if name == "mm":
        a, b = inputs
        rows_ = rng.choice(a.shape[0], min(SAMPLED_ROWS, a.shape[0]), replace=False)
        return Problem(program, inputs, lambda got: sampled_error(got, a, b, rows_), TOLERANCE, numpy_f32)
    from dpia.programs import relative_error

    if name == "total":
        want = np.sum(inputs[0], dtype=np.float64)
        return Problem(program, inputs, lambda got: relative_error(got, want), TOLERANCE, numpy_f32)
    import suite

    want = reference(*inputs)
    tolerance = max(suite.BY_NAME[name].tolerance, 1e-4)  # examples/suite.py's own check
    return Problem(program, inputs, lambda got: relative_error(got, want), tolerance, numpy_f32)


# ------------------------------------------------------------------------------------ candidates


@dataclass(frozen=True)
class PointSpec:
    """A point of issue13_points.json: a skeleton's name, its slot values (the launch shape among
    them), a short name for the table, where it was found, and its role (candidate or reference)."""

    name: str
    skeleton: str
    slots: Mapping[str, int]
    source: str = ""
    role: str = "candidate"


def load_points(path: Path) -> dict[str, list[PointSpec]]:
    """{target: its points}; keys starting with "_" are comments."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    out: dict[str, list[PointSpec]] = {}
    for spec, points in data.items():
        if spec.startswith("_"):
            continue
        try:
            out[spec] = [PointSpec(p["name"], p["skeleton"], {k: int(v) for k, v in p.get("slots", {}).items()},
                                   p.get("source", ""), p.get("role", "candidate")) for p in points]
        except (KeyError, TypeError, ValueError) as exc:
            raise Issue13Error(f"{path}: a point of {spec!r} is malformed ({type(exc).__name__}: {exc})") from exc
        bad = [p.role for p in out[spec] if p.role not in ("candidate", "reference")]
        if bad:
            raise Issue13Error(f"{path}: {spec!r}: role {bad[0]!r} is neither candidate nor reference")
    return out


def compile_point(program, sizes: Mapping[str, int], point: PointSpec, device):
    """The point's kernel at `sizes` (time_points.py's replay: the derivation of the skeleton with
    these slot values, compiled at the sizes), launched with the point's launch shape."""
    import dpia
    from dpia.explore.launch import launch_options
    from dpia.explore.space import DeviceLimits, Point, Skeleton, Space, parse_steps
    from dpia.programs import at_sizes
    from functional.derivation import derive
    from functional.errors import FunctionalError

    space = Space.build(program, sizes, DeviceLimits.of(device), skeletons=[Skeleton(parse_steps(point.skeleton))])
    chosen = Point(point.skeleton, dict(point.slots))
    try:
        low, _ = derive(space.program_for(chosen), space.strategy(chosen))
    except FunctionalError:  # nested splits of one length: the product of the slots, as the explorer retries
        low, _ = derive(space.program_for(chosen, product=True), space.strategy(chosen))
    return dpia.compile(at_sizes(low, sizes), device=device, **launch_options(point.slots))


@dataclass
class Tried:
    """One kernel of a row: its label, role, outcome (ok, wrong, failed), error and bound kernel."""

    label: str
    role: str
    status: str
    error: float | None = None
    why: str = ""
    bound: object = None
    time_s: float | None = None
    slots: dict = field(default_factory=dict)  # a point's slot values (a reference is paired by them)


def try_kernel(label: str, role: str, make: Callable, prob: Problem) -> Tried:
    """Build, run once and check a kernel; bound for timing only when it agrees with the oracle."""
    try:
        kernel = make()
        error = float(prob.check(kernel(*prob.inputs)))
        if not error <= prob.tolerance:  # NaN is wrong too
            return Tried(label, role, "wrong", error, f"relative error {error:.1e} > {prob.tolerance:.0e}")
        return Tried(label, role, "ok", error, bound=kernel.bind(*prob.inputs))
    except Exception as exc:  # a kernel that does not derive, build or run is a line of the row, not the end
        return Tried(label, role, "failed", why=reason(exc))


def reason(exc: BaseException, width: int = 200) -> str:
    """An exception in one line of at most about `width` characters: its type and the end of its
    first line (a strategy's failure nests its callers first and says what failed last)."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text if len(text) <= width else '...' + text[-width:]}"


def default_label(kernel) -> str:
    variant = getattr(kernel, "variant", None)
    return f"dpia.compile ({variant.kind})" if variant is not None else "dpia.compile"


def candidates(row: Row, prob: Problem, points: Sequence[PointSpec], device, db) -> list[Tried]:
    """The row's default (dpia.compile of the high-level program) and its points, each tried."""
    import dpia

    sizes = dpia.compile(prob.program, db=False).sizes_of(prob.inputs)
    made: list = []

    def default():
        kernel = dpia.compile(prob.program, device=device, db=db)
        made.append(kernel)
        return kernel

    out = []
    if row.kind != "warp":  # the warp row compares shuffles with trees: the preset's tree is no candidate
        out.append(try_kernel("dpia.compile", "candidate", default, prob))
        if made and made[0].variant is not None:
            out[0].label = default_label(made[0])
        print(f"    {out[0].label}: {out[0].status} {out[0].why}", flush=True)
    for p in points:
        out.append(try_kernel(p.name, p.role, lambda p=p: compile_point(prob.program, sizes, p, device), prob))
        out[-1].slots = dict(p.slots)
        print(f"    {p.role} {p.name}: {out[-1].status} {out[-1].why}", flush=True)
    return out


# ------------------------------------------------------------------------------------ references


def short(label: str) -> str:
    """A reference's name in the table: gpu_references' label without its parenthesis."""
    if label.startswith("device copy"):
        return "copy"
    if label.startswith("cuBLAS gemv"):
        return "cuBLAS addmv"
    return label.split(" (")[0]


def references(row: Row, prob: Problem, nbytes: int, repeat: int, torch) -> dict[str, float]:
    """{reference: seconds} measured now: on a CUDA device explore_suite.gpu_references (the copy,
    torch.compile, cuBLAS with TF32 off, torch.sum) and, for TF32, cuBLAS with TF32 on (its error
    in prob.facts); without one, float32 NumPy on the host."""
    if torch is None:
        return {"numpy f32": _median_s(lambda: prob.numpy_f32(*prob.inputs), 3)}
    if row.kind == "tf32":
        return tf32_references(prob, repeat, torch)
    name = row.name
    return {short(label): t for label, t in gpu_references(name, prob.inputs, nbytes, repeat)}


def tf32_references(prob: Problem, repeat: int, torch) -> dict[str, float]:
    """cuBLAS with TF32 on (tf32_gemm_gpu.py's reference), its error on the row's sampled rows in
    prob.facts; TF32 off again afterwards."""
    from torch_compiled import cuda_time

    a, b = prob.inputs
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        t = cuda_time(torch, lambda: ta @ tb, repeat)
        prob.facts["cuBLAS TF32 error"] = tf32_error((ta @ tb).cpu().numpy(), a, b, prob.facts["rows"])
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False  # what the other rows' cuBLAS is measured with
    return {"cuBLAS TF32": t}


# ------------------------------------------------------------------------------------ one row


def measure_row(row: Row, args, points: Sequence[PointSpec], device, torch) -> dict:
    """Everything the table says of `row`, measured now; an exception becomes the row's error."""
    started = time.monotonic()
    spec = row.spec(args.small)
    result = {"title": row.title, "target": spec, "size": size_text(spec), "goals": [g.text() for g in row.goals]}
    try:
        _measure(row, spec, args, points, device, torch, result)
    except Exception as exc:  # one row's failure must not lose the others'
        result["error"] = reason(exc, 400)
    result["seconds"] = round(time.monotonic() - started, 1)
    gc.collect()
    if torch is not None:
        torch.cuda.empty_cache()
    return result


def _measure(row: Row, spec: str, args, points: Sequence[PointSpec], device, torch, result: dict) -> None:
    """Fill `result` as the measurement goes (what was tried stays there when a later step raises)."""
    from dpia.explore import program_bytes

    import dpia

    prob = problem(row, spec, np.random.default_rng(args.seed))
    db = explored_db(row, spec, args) if args.budget > 0 else False
    tried = candidates(row, prob, points, device, db)
    ok = time_and_release(tried, args.repeat)
    wrong = [f"{t.label} WRONG ({t.why})" for t in tried if t.status == "wrong"]
    failed = [f"{t.label}: {t.why}" for t in tried if t.status == "failed"]
    result.update(tried=[{k: v for k, v in vars(t).items() if k != "bound"} for t in tried], wrong=wrong,
                  failed=failed)
    ours = [t for t in ok if t.role == "candidate"]
    if not ours:
        problems = wrong + failed
        raise NothingToTime(f"no candidate to time ({len(problems)} wrong or failed); the first: "
                            f"{problems[0] if problems else 'none listed'}")
    best = min(ours, key=lambda t: t.time_s)

    nbytes = program_bytes(prob.program, dpia.compile(prob.program, db=False).sizes_of(prob.inputs))
    refs = references(row, prob, nbytes, args.repeat, torch)
    trees = [t for t in ok if t.role == "reference"]
    if trees:
        refs["local-memory tree"] = min(t.time_s for t in trees)
    facts = {"ours error": best.error, **{k: v for k, v in prob.facts.items() if k != "rows"},
             **({"same values": same_values(ok)} if trees else {})}
    result.update(kernel=best.label, ours_s=best.time_s, references=refs, facts=facts, on_gpu=torch is not None,
                  verdicts=verdicts(row.goals, best.time_s, refs, facts) if torch is not None else None)


def time_and_release(tried: Sequence[Tried], repeat: int) -> list[Tried]:
    """Time the kernels that agreed with the oracle (interleaved), then let every kernel's device
    buffers go; the timed ones."""
    ok = [t for t in tried if t.status == "ok"]
    for t, seconds in zip(ok, interleaved_times([t.bound for t in ok], repeat)):
        t.time_s = seconds
    for t in tried:
        t.bound = None
    return ok


def same_values(ok: Sequence[Tried]) -> list[list]:
    """[candidate, reference, reference's time / candidate's] for each candidate point and reference
    point with the same slot values (the sum's warp trees against the same trees in local memory)."""
    refs = [t for t in ok if t.role == "reference"]
    return [[c.label, r.label, r.time_s / c.time_s] for c in ok if c.role == "candidate" and c.slots
            for r in refs if r.slots == c.slots]


def interleaved_times(bound: Sequence, repeat: int, rounds: int = 2) -> list[float]:
    """Each bound kernel's best median over `rounds` rounds alternating between them
    (explore_suite._interleaved_times on kernels already bound): a burst of load on the machine
    does not favour one of them."""
    best = [math.inf] * len(bound)
    for _ in range(rounds):
        for i, b in enumerate(bound):
            best[i] = min(best[i], b.time(repeat=repeat))
    return best


def explored_db(row: Row, spec: str, args):
    """The tuning database of a short exploration of the row (explore_suite.run_target), whose best
    dpia.compile then replays; not for the TF32 row (its default runs the tensor cores) nor the warp
    row (its kernels are its points)."""
    from explore_suite import run_target

    if row.kind in ("tf32", "warp"):
        return False
    ns = argparse.Namespace(seed=args.seed, out=args.out, budget=args.budget, search="bayesian", workers=None,
                            repeat=args.repeat, one_json=True)
    run_target(spec, ns)
    return str(Path(args.out) / "tuning.sqlite")


def verdicts(goals: Sequence[Goal], ours_s: float, refs: Mapping[str, float], facts: Mapping[str, float]) -> list:
    """Per goal: its text, reference, metric, ratio (the reference's over ours; None without the
    reference) and "met", "miss" or why it does not apply."""
    out = []
    copy = refs.get("copy")
    for g in goals:
        if g.metric == "error":
            ref, mine = facts.get(g.reference), facts.get("ours error")
            ratio = None if ref is None else ref / mine if mine else math.inf
        else:
            ref = refs.get(g.reference)
            ratio = None if ref is None else ref / ours_s
        if ratio is None:
            verdict = "no reference"
        elif g.memory_bound_only and (copy is None or copy / ours_s < MEMORY_BOUND):
            verdict = "n/a (not memory-bound)"
        else:
            verdict = "met" if ratio >= g.at_least else "miss"
        out.append({"goal": g.text(), "reference": g.reference, "metric": g.metric, "ratio": ratio, "verdict": verdict})
    return out


def shown_ratio(v: Mapping) -> str:
    """A verdict's ratio as the table prints it: x a reference, a fraction of the copy, or of errors."""
    if v["ratio"] is None:
        return "-"
    if v["metric"] == "error":
        return f"{v['ratio']:.3f}x (its error / ours)"
    return f"{v['ratio']:.3f} of the copy" if v["reference"] == "copy" else f"{v['ratio']:.3f}x {v['reference']}"


# ------------------------------------------------------------------------------------ the table


def size_text(spec: str) -> str:
    return spec.partition(":")[2] or "-"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.4f}" if seconds < 1e-3 else f"{seconds * 1e3:.3f}"


def _cells(values: Sequence[str]) -> str:
    """A markdown table line; a "|" inside a cell (an exception's text) escaped."""
    return "| " + " | ".join(str(v).replace("|", "\\|") for v in values) + " |"


def _kernel_cell(r: dict) -> str:
    """What ran, with the default's time when a point beat it, and the kernels that were wrong or failed."""
    notes = r.get("wrong", []) + ([f"{len(r['failed'])} failed (log)"] if r.get("failed") else [])
    default = next((t for t in r.get("tried", []) if t["label"].startswith("dpia.compile") and t.get("time_s")), None)
    if default is not None and default["label"] != r["kernel"]:
        notes.insert(0, f"{default['label']}: {_ms(default['time_s'])} ms")
    return r["kernel"] + (f" ({'; '.join(notes)})" if notes else "")


def _references_cell(r: dict) -> str:
    """The references' times (the copy only where a goal compares with it; all of them are in the JSON)."""
    named_copy = any("copy" in g for g in r["goals"])
    text = "; ".join(f"{k} {_ms(v)}" for k, v in r["references"].items() if k != "copy" or named_copy)
    facts = r.get("facts") or {}
    if "cuBLAS TF32 error" in facts:
        text += f"; errors: ours {facts['ours error']:.2e}, cuBLAS TF32 {facts['cuBLAS TF32 error']:.2e}"
    if facts.get("same values"):
        pairs = ", ".join(f"{ratio:.3f}" for *_, ratio in facts["same values"])
        text += f"; at the same slot values, tree / warp: {pairs}"
    return text


def table_row(r: dict) -> str:
    """One markdown line of the table from a measured row (measure_row's dict)."""
    name = r["target"].partition(":")[0]
    cells = [r["title"] if r["title"] == name else f"{r['title']}: `{name}`", r["size"]]
    goals = "; ".join(r["goals"])
    if r.get("error"):
        return _cells(cells + [f"**error**: {r['error']}", "-", "-", "-", goals, "error"])
    if r.get("verdicts") is None:  # no GPU: our time against the host's NumPy, no goal applies
        ref = next(iter(r["references"].values()))
        return _cells(cells + [_kernel_cell(r), _ms(r["ours_s"]), _references_cell(r),
                               f"{ref / r['ours_s']:.2f}x numpy", "n/a (no GPU)", "n/a"])
    ratios = "; ".join(shown_ratio(v) for v in r["verdicts"])
    met = "; ".join(v["verdict"] for v in r["verdicts"]) + ("; a kernel was WRONG" if r.get("wrong") else "")
    return _cells(cells + [_kernel_cell(r), _ms(r["ours_s"]), _references_cell(r), ratios, goals, met])


HEADER = ("| target | size | our kernel | ours ms | reference(s) ms | ratio (reference / ours) | goal | met/miss |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")


def table(results: Sequence[dict], meta: Mapping[str, str]) -> str:
    """The block between the markers: what ran where, the rule for memory-bound, the table."""
    lines = [f"Measured {meta.get('date', '')} on {meta.get('device', '?')} (torch {meta.get('torch', 'absent')}), "
             f"code at {meta.get('commit', '?')}: `{meta.get('command', '')}`, {meta.get('wall_s', '?')} s in all.",
             "",
             f"Our kernel: the fastest correct one of `dpia.compile` (the default lowering with presets; with "
             f"--budget, the exploration's best) and the "
             f"points `benchmarks/issue13_points.json` lists, each checked against the float64 oracle (products: "
             f"{SAMPLED_ROWS} sampled rows); references in the same run.  Ratios are the reference's time over ours "
             f"(for the copy: the fraction of its bandwidth we reach; for the TF32 error: cuBLAS's error over ours).  "
             f"{RULE}.", "", HEADER]
    for later in meta.get("later", ()):
        lines[1:1] = ["", f"Re-measured {later.get('date', '')} on {later.get('device', '?')}, code at "
                          f"{later.get('commit', '?')}: {', '.join(f'`{t}`' for t in later['targets'])} "
                          f"(`{later.get('command', '')}`)."]
    lines += [table_row(r) for r in results]
    lines += limits_of_misses(results)
    return "\n".join(lines) + "\n"


def merged_runs(runs: Sequence[Mapping]) -> tuple[list[dict], dict]:
    """(rows, meta) of the first run with the rows of each later run in place of the same targets'
    (a row re-measured after a change); meta["later"] says which rows came from where."""
    rows, meta = [dict(r) for r in runs[0]["rows"]], dict(runs[0]["meta"])
    meta["later"] = []
    for run in runs[1:]:
        by_target = {r["target"]: r for r in run["rows"]}
        unknown = sorted(set(by_target) - {r["target"] for r in rows})
        if unknown:
            raise Issue13Error(f"rows {unknown} of a later run are not rows of the first")
        rows = [by_target.get(r["target"], r) for r in rows]
        meta["later"].append({**run["meta"], "targets": sorted(by_target)})
    return rows, meta


def limits_of_misses(results: Sequence[dict], path: Path = LIMITS, counters: Path = COUNTERS) -> list[str]:
    """Under the table: for each row that misses a goal, what limits it and what was tried
    (benchmarks/issue13_limits.json, from the measurements recorded in RESULTS.md), and the hardware
    counters of its kernel and of cuBLAS's where benchmarks/kernel_counters.py measured them."""
    limits = json.loads(path.read_text()) if path.exists() else {}
    measured = json.loads(counters.read_text()) if counters.exists() else {}
    missed = [r for r in results if any(v.get("verdict") == "miss" for v in r.get("verdicts") or ())]
    notes = []
    for r in missed:
        if r["target"] in limits:
            notes.append(f"- `{r['target']}`: {limits[r['target']]}")
        notes += [f"  - {line}" for line in counter_lines(measured.get(r["target"], {}))]
    unexplained = [r["target"] for r in missed if r["target"] not in limits]
    if unexplained:
        notes.append(f"- not yet analysed: {', '.join(f'`{t}`' for t in unexplained)}")
    source = f"{path.name}; counters: {counters.name}, benchmarks/kernel_counters.py" if measured else path.name
    return ["", f"What limits the misses (benchmarks/{source}):", ""] + notes if notes else []


_COUNTER_KEYS = (("SM %", "SM"), ("memory %", "memory"), ("DRAM %", "DRAM"),
                 ("issue slots busy %", "issue slots busy"), ("FMA pipe %", "FMA pipe"), ("ALU pipe %", "ALU pipe"),
                 ("XU pipe %", "XU pipe"), ("LSU pipe %", "LSU pipe"), ("achieved occupancy %", "occupancy"), ("theoretical occupancy %", "of at most"),
                 ("registers", "registers"), ("shared load bank conflicts", "shared-load bank conflicts"))


def counter_lines(entry: Mapping) -> list[str]:
    """A missed row's counters, a line per profiled kernel (ours, then cuBLAS's): its time, throughputs
    as percentages of the device's peaks, occupancy, registers and largest stall reasons."""
    if not entry or "counters" not in entry:
        return [f"counters: {entry['error'][:300]}"] if entry.get("error") else []
    lines = [f"static PTX of ours ({entry['label']}): {entry.get('static mix', '?')}"]
    if not entry.get("same bytes", False):
        lines.append("the transplant's outputs differ from OpenCL's: its counters are not ours")
    for side, kernels in (("ours", entry["counters"]), ("cuBLAS", entry.get("reference", []))):
        for k in kernels:
            parts = [f"{side} `{k.get('kernel', '?')[:48]}`"]
            if k.get("time") is not None:
                parts.append(f"{k['time'] / 1e6:.4g} ms")
            parts += [f"{label} {k[key]:.3g}{'' if key in ('registers', 'shared load bank conflicts') else '%'}"
                      for key, label in _COUNTER_KEYS if k.get(key) is not None]
            if k.get("top stalls"):
                parts.append("stalls per issue: " + ", ".join(f"{n} {v:.2f}" for n, v in k["top stalls"]))
            lines.append("; ".join(parts))
    return lines


def replace_between_markers(text: str, block: str) -> str:
    """`text` with what lies between the markers replaced by `block`; without markers, a new section
    holding them before the first "## " heading (or at the end)."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 and end < 0:
        at = text.find("\n## ")
        at = len(text) if at < 0 else at + 1
        section = f"{SECTION}\n\n{BEGIN}\n{block}{END}\n\n"
        return text[:at] + section + text[at:]
    if begin < 0 or end < begin or text.count(BEGIN) != 1 or text.count(END) != 1:
        raise Issue13Error(f"the markers {BEGIN} and {END} must each appear once, in that order")
    return text[:begin + len(BEGIN)] + "\n" + block + text[end:]


def write_table(path: Path, block: str) -> None:
    path.write_text(replace_between_markers(path.read_text(), block))


# ------------------------------------------------------------------------------------ the run


def _git(*words: str) -> str:
    """A git command's output in this checkout; empty where git or the history is missing."""
    try:
        return subprocess.run(["git", "-C", str(ROOT), *words], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def meta_of(device, torch, command: str) -> dict:
    """Where and when the rows were measured, for the table's first line."""
    from codegen_opencl.runtime import describe

    commit = _git("log", "-1", "--format=%h") or "?"
    if _git("status", "--porcelain"):
        commit += " with uncommitted changes"
    cuda = f" / CUDA {torch.cuda.get_device_name()}" if torch is not None else ""
    return {"date": datetime.date.today().isoformat(), "device": describe(device) + cuda,
            "torch": torch.__version__ if torch is not None else "absent", "commit": commit, "command": command}


def selected(all_rows: Sequence[Row], only: Sequence[str]) -> list[Row]:
    """The rows whose target contains one of `only` (all without)."""
    return [r for r in all_rows if not only or any(o in r.target for o in only)]


def run(args) -> tuple[list[dict], dict]:
    """Measure every selected row in turn, printing each as it is done; rows not begun before the
    deadline are reported as skipped."""
    from codegen_opencl.runtime import choose_device

    started = time.monotonic()
    device = choose_device()
    torch = _torch()
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
    points = load_points(Path(args.points))
    meta = meta_of(device, torch, "python benchmarks/issue13.py " + " ".join(args.argv))
    print(f"device: {meta['device']}; torch: {meta['torch']}\n{HEADER}", flush=True)
    results = []
    for row in selected(rows(), args.only):
        spent = time.monotonic() - started
        if spent > args.deadline:
            results.append({"title": row.title, "target": row.spec(args.small), "size": size_text(row.spec(args.small)),
                            "goals": [g.text() for g in row.goals], "error": f"skipped: {spent:.0f} s spent, "
                            f"past the --deadline of {args.deadline:.0f} s"})
        else:
            print(f"  {row.title} {row.spec(args.small)} ...", flush=True)
            results.append(measure_row(row, args, points.get(row.target, []), device, torch))
        print(table_row(results[-1]), flush=True)
        if args.json:
            save_json(Path(args.json), results, meta | {"wall_s": round(time.monotonic() - started)})
    meta["wall_s"] = round(time.monotonic() - started)
    return results, meta


def save_json(path: Path, results: list[dict], meta: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "rows": results}, indent=1, default=str))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="small sizes (a second or so a row on PoCL)")
    ap.add_argument("--only", nargs="*", default=[], help="only the rows whose target contains one of these")
    ap.add_argument("--budget", type=float, default=0.0, help="seconds of exploration per row first (default none)")
    ap.add_argument("--repeat", type=int, default=10, help="timed runs per kernel and round (two rounds)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--points", default=str(POINTS), help="the points to replay (default: issue13_points.json here)")
    ap.add_argument("--write", default=str(RESULTS), help="the markdown file whose markers get the table")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    ap.add_argument("--json", default=None, help="every row's measurements here too (rewritten after each row)")
    ap.add_argument("--from-json", nargs="+", default=None,
                    help="write the table of earlier runs' --json, measuring nothing; a later file's rows replace "
                         "the same targets' rows of the first")
    ap.add_argument("--deadline", type=float, default=470.0,
                    help="seconds after which rows not begun are reported as skipped (one device call: 600 s)")
    ap.add_argument("--out", default="/tmp/issue13_explore", help="--budget's explorations' folder (tuning database)")
    args = ap.parse_args(argv)
    args.argv = list(argv)
    return args


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.from_json:
        results, meta = merged_runs([json.loads(Path(f).read_text()) for f in args.from_json])
    else:
        results, meta = run(args)
    block = table(results, meta)
    print("\n" + block + f"total wall time {meta.get('wall_s', '?')} s", flush=True)
    if not args.no_write:
        write_table(Path(args.write), block)
        print(f"table written into {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
