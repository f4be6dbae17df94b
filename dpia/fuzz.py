"""The compiler fuzzer: random well-typed high-level programs (functional.random_programs)
through `dpia.compile` (the default lowering, no tuning database) on PoCL, against the
interpreter.

    python -m dpia.fuzz --count 10000 --seed 0 --jobs 2 --report fuzz.json
    python -m dpia.fuzz --only 1234                     # one seed: program, sizes, outcome, source
    python -m dpia.fuzz --count 500 --oclgrind-sample 20   # then 20 passing seeds under Oclgrind
    python -m dpia.fuzz --count 300 --points 4          # 4 points of each program's exploration space
    python -m dpia.fuzz --only 1234 --points 4          # one seed's points: skeleton, values, outcome
    python -m dpia.fuzz --count 1000 --lockstep         # the default lowering for a GPU, run on PoCL
    python -m dpia.fuzz --count 1000 --size-generic     # sizes left symbolic: staged reductions, remainders

Each seed is one program.  With `--points K`, each seed is K points of the program's
exploration space (dpia.explore.space: stage 1's macro moves, stage 2's mappings, stage 3's
values and launch shapes, at the generator's sizes on the fuzzing device), drawn from the
seed over distinct skeletons first; each point is derived as the explorer derives it,
checked against the device's limits, compiled, run on the generator's inputs and compared
with the interpreter as a program is.  A point's outcome is one of a program's; `refused`
includes the resources stage's refusal (DeviceFitError) and a strategy that does not
derive at the point's values.  Outcomes: `ok`; `refused` (a FunctionalError: the compiler said
no); `build_failure` (the generated OpenCL did not build); `wrong` (a result outside the
tolerance of functional.random_programs: integers equal, floats within
max(TOLERANCE * max(1, max|want|), 4 * the program's rounding-error bound)); `crash` (any
other exception); `hang` (no answer within --timeout seconds: the worker is killed and
replaced); `no_program` (the generator found no acceptable program for the seed).  Failures
are grouped into classes by outcome, exception type and a normalised prefix of the message
(sizes, names and quoted program text elided), each with its shortest program.

Programs run in worker processes (`--jobs`), so a hang or a crash of the OpenCL runtime
stalls nothing; `--jobs 0` runs in this process (no hang detection).
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import time
import traceback
from collections import Counter, defaultdict
from multiprocessing.connection import wait

import attrs
import numpy as np

from functional.default_lowering import Target
from functional.errors import FunctionalError
from functional.primitives import PRIMITIVES
from functional.random_programs import GenerationError, random_program

from .programs import TOLERANCE

OK, REFUSED, BUILD, WRONG, CRASH, HANG, NO_PROGRAM = "ok", "refused", "build_failure", "wrong", "crash", "hang", "no_program"
FAILURES = (REFUSED, BUILD, WRONG, CRASH, HANG)
ERROR_BOUND_FACTOR = 4.0
OCLGRIND_PROBLEMS = ("data race", "divergence", "invalid read", "invalid write", "out-of-bounds", "uninitialized")


@attrs.frozen
class Outcome:
    """What one seed's program did.  `klass` groups failures (empty for ok)."""

    seed: int
    status: str
    klass: str = ""
    message: str = ""
    text: str = ""
    nodes: int = 0
    sizes: dict = attrs.field(factory=dict)
    worst: float = 0.0  # largest difference over the allowed one (ok when <= 1)
    variant: str = ""
    seconds: float = 0.0
    point: str = ""  # with --points: the space's point (skeleton name and slot values), else empty

    def to_json(self) -> dict:
        return attrs.asdict(self)


# ------------------------------------------------------------------------- comparing


def _leaves(value) -> list:
    if isinstance(value, tuple):
        return [x for v in value for x in _leaves(v)]
    return [value]


def compare(got, want, error_bound: float) -> float:
    """The largest leaf difference divided by the allowed one (<= 1: within tolerance; inf
    for a shape, dtype kind or NaN mismatch).  Integers and booleans must be equal."""
    gots, wants = _leaves(got), _leaves(want)
    if len(gots) != len(wants):
        return float("inf")
    worst = 0.0
    for g, w in zip(gots, wants):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return float("inf")
        if not np.issubdtype(w.dtype, np.floating):
            if not np.array_equal(g, w):
                return float("inf")
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        if not np.array_equal(np.isnan(g64), np.isnan(w64)) or not np.array_equal(np.isinf(g64), np.isinf(w64)):
            return float("inf")
        finite = np.isfinite(w64)
        if not finite.any():
            continue
        if not np.array_equal(g64[~finite], w64[~finite]):
            return float("inf")
        diff = float(np.abs(g64[finite] - w64[finite]).max())
        allowed = max(TOLERANCE * max(1.0, float(np.abs(w64[finite]).max())), ERROR_BOUND_FACTOR * error_bound)
        worst = max(worst, diff / allowed)
    return worst


# ------------------------------------------------------------------------- classifying


def normalise(message: str, limit: int = 80) -> str:
    """A message's class prefix: quoted program text, places, numbers and names elided."""
    text = " ".join(message.split())
    text = re.sub(r"^[\w./<>-]+:\d+(:\d+)?: ", "", text)  # origin file:line
    text = re.sub(r"^in `[^`]*`: ", "", text)
    text = re.sub(r"`[^`]*`", "`…`", text)
    text = re.sub(r"\b[A-Za-z_]*\d+\b", "#", text)  # numbers and generated names (x12, in3)
    text = text.replace("e.g.", "eg")
    part = r"(?:\((?:[^()]|\([^()]*\))*\)|[\w#]+)"  # a name, or a tuple type nested once
    text = re.sub(rf"{part}(?:\.{part})+", "T", text)  # data types such as 4.N.f32, 2.(N + 1).(f32, i32)
    text = text.split("--- source ---")[0]
    return text[:limit].rstrip()


def classify(exc: BaseException) -> tuple[str, str, str]:
    """(status, class, message) of an exception raised by compiling or running a program."""
    name = type(exc).__name__
    if isinstance(exc, FunctionalError):
        message = exc.message
        status = BUILD if "did not build" in message else REFUSED
        if status == BUILD:  # the build log's first error names the class
            first = re.search(r"error: (?:\S+:\d+:\d+(?: <[^>]*>)?: )?([^\n]*)", message)
            return status, f"{status}: {normalise(first.group(1) if first else message)}", str(exc)[:4000]
        head = re.match(r"\W*(\w+)", exc.where or "")
        at = ""
        if head:  # the primitive at the place the compiler names (a variable is not a class of its own)
            at = f" [at {head.group(1) if head.group(1) in PRIMITIVES else 'a variable'}]"
        return status, f"{status}: {name}: {normalise(message)}{at}", str(exc)[:2000]
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" at {os.path.basename(where.filename)}:{where.name}" if where else ""
    return CRASH, f"{CRASH}: {name}{place}: {normalise(str(exc))}", "".join(
        traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:]


# --------------------------------------------------------------------------- one seed


@attrs.frozen
class Lowering:
    """How the fuzzer lowers a program.  Default: as `dpia.compile` does on the fuzzing device
    (its sizes fixed, the device's own Target).  `target`: the default lowering for a device
    like it (functional.default_lowering.Target), run on the fuzzing device all the same (a
    GPU's interleaved reductions checked on PoCL).  `size_generic`: the program's sizes left
    symbolic, the kernel bound to them at the call: every reduction over a symbolic length is
    split into stages with guarded remainders, at sizes (up to 32) where a stage's whole part
    can be empty, a path the fixed sizes, too short to split, never take."""

    target: Target | None = None
    size_generic: bool = False

    @property
    def default(self) -> bool:
        return self.target is None and not self.size_generic


def run_one(seed: int, device=None, source: bool = False, lowering: Lowering = Lowering()) -> Outcome:
    """Generate seed's program, compile it with the default lowering (`lowering`), run and compare."""
    start = time.perf_counter()
    try:
        generated = random_program(seed)
    except GenerationError as exc:
        return Outcome(seed, NO_PROGRAM, NO_PROGRAM, str(exc), seconds=time.perf_counter() - start)
    from . import compile as dpia_compile

    base = {"text": generated.text, "nodes": generated.nodes, "sizes": dict(generated.sizes)}
    kernel = None
    try:
        if lowering.default:
            kernel = dpia_compile(generated.program, device=device, db=False, name="fuzz")
        else:
            from .variants import default_variant

            sizes = None if lowering.size_generic else dict(generated.sizes)
            low, _ = default_variant(generated.program, sizes, target=lowering.target)
            kernel = dpia_compile(low, device=device, name="fuzz")
        with np.errstate(all="ignore"):
            got = kernel(*generated.inputs)
    except Exception as exc:  # noqa: BLE001 -- every failure is an outcome to report
        status, klass, message = classify(exc)
        return Outcome(seed, status, klass, message, seconds=time.perf_counter() - start, **base)
    variant = getattr(getattr(kernel, "variant", None), "kind", "as written" if lowering.default else "default")
    worst = compare(got, generated.expected, generated.error_bound)
    if worst <= 1.0:
        return Outcome(seed, OK, worst=worst, variant=variant, seconds=time.perf_counter() - start, **base)
    return _wrong({"seed": seed, "variant": variant, "seconds": time.perf_counter() - start, **base}, worst,
                  generated.expected, (kernel.source or "") if source else None)


def _wrong(outcome_args: dict, worst: float, expected, source: str | None) -> Outcome:
    """The outcome of a result outside the tolerance (`source`: the kernel's, to show)."""
    shape = _shape_text(expected)
    message = f"worst difference {worst:.3g} times the allowed one (result {shape})"
    if source is not None:
        message += "\n" + source
    return Outcome(status=WRONG, klass=f"{WRONG}: {shape}", message=message, worst=worst, **outcome_args)


def _shape_text(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_shape_text(v) for v in value) + ")"
    a = np.asarray(value)
    return f"{a.dtype}{list(a.shape)}"


# ---------------------------------------------------------------- points of the space


# Sequences of up to two macro moves (the explorer's default is three): most programs' spaces
# are the same, and the few large ones build in seconds rather than tens of seconds.
SPACE_MOVES = 2
FUZZ_CUTS = (2, 4, 8)  # the multiples cuts offer in the points' spaces (the explorer's: 32, 256, 2048)


@functools.lru_cache(maxsize=1)  # a worker runs a seed's points one after the other
def _space_of(seed: int, device=None):
    """(seed's generated program, its exploration space on `device` at the generator's sizes)."""
    from codegen_opencl.runtime import choose_device

    from .explore.algorithmic import Heuristics
    from .explore.space import DeviceLimits, Space
    from .programs import size_vars

    generated = random_program(seed)
    sizes = {v.name: generated.sizes[v.name] for v in size_vars(generated.program)}  # the generator names more
    # The occupancy filter (a work-group per compute unit) is the explorer's judgement of speed,
    # and at the generator's small sizes it would refuse most points: one compute unit is
    # asked for, the device's hard limits (work-group size, local and private memory) stay.
    limits = attrs.evolve(DeviceLimits.of(choose_device(device)), compute_units=1)
    # cuts at the small multiples the generator's lengths (mostly below 64) leave room for
    heuristics = Heuristics(length=SPACE_MOVES, cuts=FUZZ_CUTS)
    return generated, Space.build(generated.program, sizes, limits, heuristics=heuristics)


def draw_points(space, seed: int, count: int) -> list:
    """`count` distinct points of `space`, drawn from `seed`: one of each skeleton (in an
    order shuffled by the seed) before a second of any.  A prefix of a longer draw, so a
    worker needs only the point's index."""
    rng = random.Random(f"points:{seed}")
    names = [f.name for f in space.families]
    rng.shuffle(names)
    left = space.by_family()
    drawn: list = []
    while len(drawn) < count and any(left[name] for name in names):
        for name in names:
            if left[name] and len(drawn) < count:
                drawn.append(left[name].pop(rng.randrange(len(left[name]))))
    return drawn


def run_point(seed: int, index: int, device=None, source: bool = False) -> Outcome:
    """Derive the `index`-th point drawn from seed's program's space as the explorer does
    (dpia.explore.evaluate.Evaluator: the program with the point's facts, else the stronger
    ones), compile it against the device's limits, run it on the generator's inputs and
    compare with the interpreter."""
    start = time.perf_counter()
    try:
        generated, space = _space_of(seed, device)
    except GenerationError as exc:
        return Outcome(seed, NO_PROGRAM, NO_PROGRAM, str(exc), point=f"#{index}", seconds=time.perf_counter() - start)
    base = {"seed": seed, "text": generated.text, "nodes": generated.nodes, "sizes": dict(generated.sizes)}
    drawn = draw_points(space, seed, index + 1)
    if index >= len(drawn):
        return Outcome(status=NO_PROGRAM, klass=NO_PROGRAM, message=f"the space has {len(drawn)} points",
                       point=f"#{index}", **base)
    point = drawn[index]
    base["point"] = str(point)
    try:
        kernel = compile_point(space, point, seed, device)
        with np.errstate(all="ignore"):
            got = kernel(*generated.inputs)
    except Exception as exc:  # noqa: BLE001 -- every failure is an outcome to report
        status, klass, message = classify(exc)
        return Outcome(status=status, klass=klass, message=message, seconds=time.perf_counter() - start, **base)
    worst = compare(got, generated.expected, generated.error_bound)
    base["seconds"] = time.perf_counter() - start
    if worst <= 1.0:
        return Outcome(status=OK, worst=worst, **base)
    return _wrong(base, worst, generated.expected, (kernel.source or "") if source else None)


def compile_point(space, point, seed: int, device=None):
    """The runtime Kernel of `point`, derived and compiled by the explorer's Evaluator at the
    space's sizes (so the resources stage refuses what the device cannot run)."""
    from .explore.evaluate import Evaluator, Spec
    from .explore.launch import launch_options

    params = point.as_dict()
    sizes = dict(space.sizes)
    spec = Spec(0, space.program_for(point), space.family(point.family), params, sizes, sizes, seed,
                reference=space.program, fallback=space.program_for(point, product=True),
                launch=launch_options(params))
    evaluator = Evaluator(limits=space.limits)
    low, _ = evaluator.derive(spec)
    return evaluator.pipeline.run({"low": low, "session": None}, evaluator.options(spec, device=device),
                                  "translate", "build")["kernel"]


def run_task(task, device=None, source: bool = False, lowering: Lowering = Lowering()) -> Outcome:
    """A task's outcome: a seed (its program, default lowering) or (seed, index) (a point)."""
    if isinstance(task, tuple):
        return run_point(*task, device=device, source=source)
    return run_one(task, device, source, lowering)


# ---------------------------------------------------------------------- worker processes


def _worker(conn, device, lowering) -> None:
    """Run tasks (run_task) received on `conn` until None arrives; answer each with its outcome."""
    while True:
        task = conn.recv()
        if task is None:
            return
        conn.send(run_task(task, device, lowering=lowering).to_json())


class _Slot:
    def __init__(self, ctx, device, lowering):
        self.parent, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker, args=(child, device, lowering), daemon=True)
        self.process.start()
        child.close()
        self.task = None  # a seed, or (seed, point index)
        self.deadline = 0.0

    def give(self, task, timeout: float) -> None:
        self.task, self.deadline = task, time.monotonic() + timeout
        self.parent.send(task)

    def stop(self) -> None:
        try:
            self.parent.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def run_seeds(seeds, jobs: int = 1, timeout: float = 120.0, device=None, progress=None,
              startup: float = 60.0, lowering: Lowering = Lowering()) -> list[Outcome]:
    """Outcomes of the tasks (run_task: seeds, or (seed, point index) pairs), in their order;
    seeds lowered as `lowering` says (run_one).
    jobs >= 1: worker processes, a task without an answer after `timeout` seconds is a hang
    (its worker killed and replaced; a fresh worker's first task gets `startup` seconds
    more, to import the compiler and open the device); a worker that dies is a crash.
    jobs 0: in this process."""
    tasks = list(seeds)
    if jobs <= 0:
        outcomes = []
        for task in tasks:
            outcomes.append(run_task(task, device, lowering=lowering))
            if progress:
                progress(outcomes[-1])
        return outcomes
    ctx = multiprocessing.get_context("spawn")
    pending = list(reversed(tasks))
    slots = [_Slot(ctx, device, lowering) for _ in range(min(jobs, len(tasks)))]
    results: dict = {}

    def record(outcome: Outcome, task) -> None:
        results[task] = outcome
        if progress:
            progress(outcome)

    for slot in slots:
        if pending:
            # A fresh worker imports the compiler and opens the device first: allow for it.
            slot.give(pending.pop(), timeout + startup)
    try:
        while any(s.task is not None for s in slots):
            busy = [s for s in slots if s.task is not None]
            left = max(0.0, min(s.deadline for s in busy) - time.monotonic())
            ready = wait([s.parent for s in busy] + [s.process.sentinel for s in busy], timeout=left)
            for k, slot in enumerate(slots):
                if slot.task is None:
                    continue
                replace = False
                lost = _lost_outcome(slot.task)
                if slot.parent in ready:
                    try:
                        record(Outcome(**slot.parent.recv()), slot.task)
                    except (EOFError, OSError):
                        record(attrs.evolve(lost, status=CRASH, klass=f"{CRASH}: worker died",
                                            message="the worker process died"), slot.task)
                        replace = True
                elif slot.process.sentinel in ready:
                    code = slot.process.exitcode
                    record(attrs.evolve(lost, status=CRASH, klass=f"{CRASH}: worker died (exit code {code})",
                                        message=f"the worker process died with exit code {code}"), slot.task)
                    replace = True
                elif time.monotonic() >= slot.deadline:
                    record(attrs.evolve(lost, status=HANG, klass=HANG, message=f"no answer within {timeout:.0f} s"),
                           slot.task)
                    slot.process.kill()
                    replace = True
                else:
                    continue
                if replace:
                    slot.process.join()
                    slot = slots[k] = _Slot(ctx, device, lowering)
                    fresh = True
                else:
                    fresh = False
                slot.task = None
                if pending:
                    slot.give(pending.pop(), timeout + (startup if fresh else 0.0))
    finally:
        for slot in slots:
            slot.stop()
    for task in tasks:  # a hang's text: the program, regenerated here (cheap, deterministic)
        o = results[task]
        if o.status in (HANG, CRASH) and not o.text:
            try:
                g = random_program(o.seed)
                results[task] = attrs.evolve(o, text=g.text, nodes=g.nodes, sizes=dict(g.sizes))
            except GenerationError:
                pass
    return [results[t] for t in tasks]


def _lost_outcome(task) -> Outcome:
    """The outcome of a task whose worker gave no answer, before its status is known: the
    seed, and a point by its index (`--only SEED --points K` shows which it is)."""
    if isinstance(task, tuple):
        return Outcome(task[0], CRASH, point=f"#{task[1]}")
    return Outcome(task, CRASH)


# ----------------------------------------------------------------------------- summary


def summarise(outcomes: list[Outcome]) -> dict:
    """Counts by status, and by failure class with the shortest example of each."""
    by_status = Counter(o.status for o in outcomes)
    classes: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if o.status in FAILURES:
            classes[o.klass].append(o)
    table = []
    for klass, members in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shortest = min(members, key=lambda o: (o.nodes or 10**9, len(o.text), o.seed))
        table.append({"class": klass, "count": len(members), "seeds": [o.seed for o in members][:50],
                      "shortest": {"seed": shortest.seed, "text": shortest.text, "sizes": shortest.sizes,
                                   "point": shortest.point, "message": shortest.message[:1500]}})
    return {"total": len(outcomes), "unit": "points" if any(o.point for o in outcomes) else "programs",
            "by_status": dict(by_status),
            "failures": sum(by_status[s] for s in FAILURES), "classes": table}


def format_summary(summary: dict) -> str:
    unit = summary.get("unit", "programs")
    lines = [f"{summary['total']} {unit}: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["by_status"].items())),
             f"failures: {summary['failures']}"]
    for c in summary["classes"]:
        s = c["shortest"]
        lines.append(f"\n[{c['count']}] {c['class']}\n    seed {s['seed']} sizes {s['sizes']}: {s['text']}")
        if s.get("point"):
            lines.append(f"    point {s['point']}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- Oclgrind


def oclgrind_check(seed: int, timeout: float = 600.0) -> dict:
    """Run one seed under Oclgrind (a subprocess, DPIA_DEVICE=oclgrind, data-race checks on):
    its outcome there and the problems Oclgrind reported."""
    env = {**os.environ, "DPIA_DEVICE": "oclgrind", "OCLGRIND_DATA_RACES": "1"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    try:
        run = subprocess.run([sys.executable, "-m", "dpia.fuzz", "--only", str(seed), "--json"], env=env, cwd=root,
                             capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"seed": seed, "status": HANG, "problems": [], "stderr": ""}
    try:
        status = json.loads(run.stdout.strip().splitlines()[-1])["status"]
    except (ValueError, IndexError, KeyError):
        status = CRASH
    report = run.stderr.lower()
    problems = [p for p in OCLGRIND_PROBLEMS if p in report]
    return {"seed": seed, "status": status, "problems": problems, "stderr": run.stderr[-2000:] if problems else ""}


# ----------------------------------------------------------------------------- command


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpia.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200, help="programs to run (seeds SEED .. SEED+COUNT-1)")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--only", type=int, help="run this one seed in-process and show it")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (0: in this process)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per program before it is a hang")
    parser.add_argument("--points", type=int, default=0, metavar="K",
                        help="run K points of each program's exploration space instead of the default lowering")
    parser.add_argument("--lockstep", action="store_true",
                        help="the default lowering for a GPU (work-items in lockstep: interleaved reductions), "
                             "run on this device all the same")
    parser.add_argument("--size-generic", action="store_true",
                        help="lower each program with its sizes left symbolic (reductions split into stages "
                             "with guarded remainders), bound at the call")
    parser.add_argument("--oclgrind-sample", type=int, default=0, metavar="K",
                        help="afterwards, run K passing seeds under Oclgrind")
    parser.add_argument("--report", help="write the JSON report here")
    parser.add_argument("--json", action="store_true", help="with --only: print the outcome as JSON")
    args = parser.parse_args(argv)

    lowering = Lowering(Target(lockstep_items=True) if args.lockstep else None, args.size_generic)
    if args.only is not None:
        return _show_only(args.only, args.points, args.json, lowering)

    start = time.monotonic()
    done = Counter()
    expected = args.count * max(1, args.points)

    def progress(o: Outcome) -> None:
        done[o.status] += 1
        total = sum(done.values())
        if total % 50 == 0 or total == expected:
            print(f"  {total}/{expected} {dict(done)} {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)

    seeds = range(args.seed, args.seed + args.count)
    tasks = [(s, k) for s in seeds for k in range(args.points)] if args.points else seeds
    outcomes = run_seeds(tasks, jobs=args.jobs, timeout=args.timeout, progress=progress, lowering=lowering)
    summary = summarise(outcomes)
    summary["command"] = "python -m dpia.fuzz " + " ".join(argv if argv is not None else sys.argv[1:])
    summary["seconds"] = round(time.monotonic() - start, 1)
    if args.oclgrind_sample:  # of the programs: a point is not a seed `--only SEED` alone reproduces
        passing = [o.seed for o in outcomes if o.status == OK and not o.point][: args.oclgrind_sample]
        checks = [oclgrind_check(s) for s in passing]
        summary["oclgrind"] = {"checked": len(checks), "clean": sum(1 for c in checks if c["status"] == OK
                                                                     and not c["problems"]), "runs": checks}
    print(format_summary(summary))
    if "oclgrind" in summary:
        og = summary["oclgrind"]
        print(f"\nOclgrind: {og['clean']}/{og['checked']} clean")
        for c in og["runs"]:
            if c["status"] != OK or c["problems"]:
                print(f"  seed {c['seed']}: {c['status']} {c['problems']}")
    if args.report:
        summary["outcomes"] = [o.to_json() for o in outcomes]
        with open(args.report, "w") as f:
            json.dump(summary, f, indent=1)
    return 0 if summary["failures"] == 0 else 1


def _show_only(seed: int, points: int, as_json: bool, lowering: Lowering = Lowering()) -> int:
    """Run one seed in this process (its program, or its first `points` points) and show it."""
    outcomes = [run_task((seed, k) if points else seed, source=True, lowering=lowering) for k in range(max(1, points))]
    for outcome in outcomes:
        if as_json:
            print(json.dumps(outcome.to_json()))
            continue
        at = f"\npoint {outcome.point}" if outcome.point else ""
        print(f"seed {outcome.seed}: {outcome.status}  sizes {outcome.sizes}{at}\n{outcome.text}\n{outcome.message}")
    return 0 if all(o.status in (OK, NO_PROGRAM) for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
