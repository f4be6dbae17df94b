"""The compiler fuzzer: random well-typed high-level programs (functional.random_programs)
through `dpia.compile` (the default lowering, no tuning database) on PoCL, against the
interpreter.

    python -m dpia.fuzz --count 10000 --seed 0 --jobs 2 --report fuzz.json
    python -m dpia.fuzz --only 1234                     # one seed: program, sizes, outcome, source
    python -m dpia.fuzz --count 500 --oclgrind-sample 20   # then 20 passing seeds under Oclgrind

Each seed is one program.  Outcomes: `ok`; `refused` (a FunctionalError: the compiler said
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
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
import traceback
from collections import Counter, defaultdict
from multiprocessing.connection import wait

import attrs
import numpy as np

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


def run_one(seed: int, device=None, source: bool = False) -> Outcome:
    """Generate seed's program, compile it with the default lowering, run and compare."""
    start = time.perf_counter()
    try:
        generated = random_program(seed)
    except GenerationError as exc:
        return Outcome(seed, NO_PROGRAM, NO_PROGRAM, str(exc), seconds=time.perf_counter() - start)
    from . import compile as dpia_compile

    base = {"text": generated.text, "nodes": generated.nodes, "sizes": dict(generated.sizes)}
    kernel = None
    try:
        kernel = dpia_compile(generated.program, device=device, db=False, name="fuzz")
        with np.errstate(all="ignore"):
            got = kernel(*generated.inputs)
    except Exception as exc:  # noqa: BLE001 -- every failure is an outcome to report
        status, klass, message = classify(exc)
        return Outcome(seed, status, klass, message, seconds=time.perf_counter() - start, **base)
    variant = getattr(getattr(kernel, "variant", None), "kind", "as written")
    worst = compare(got, generated.expected, generated.error_bound)
    if worst <= 1.0:
        return Outcome(seed, OK, worst=worst, variant=variant, seconds=time.perf_counter() - start, **base)
    shape = _shape_text(generated.expected)
    message = f"worst difference {worst:.3g} times the allowed one (result {shape})"
    if source:
        message += "\n" + (kernel.source or "")
    return Outcome(seed, WRONG, f"{WRONG}: {shape}", message, worst=worst, variant=variant,
                   seconds=time.perf_counter() - start, **base)


def _shape_text(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_shape_text(v) for v in value) + ")"
    a = np.asarray(value)
    return f"{a.dtype}{list(a.shape)}"


# ---------------------------------------------------------------------- worker processes


def _worker(conn, device) -> None:
    """Run seeds received on `conn` until None arrives; answer each with its outcome."""
    while True:
        seed = conn.recv()
        if seed is None:
            return
        conn.send(run_one(seed, device).to_json())


class _Slot:
    def __init__(self, ctx, device):
        self.parent, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker, args=(child, device), daemon=True)
        self.process.start()
        child.close()
        self.seed: int | None = None
        self.deadline = 0.0

    def give(self, seed: int, timeout: float) -> None:
        self.seed, self.deadline = seed, time.monotonic() + timeout
        self.parent.send(seed)

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
              startup: float = 60.0) -> list[Outcome]:
    """Outcomes of the seeds, in seed order.  jobs >= 1: worker processes, a seed without an
    answer after `timeout` seconds is a hang (its worker killed and replaced; a fresh
    worker's first seed gets `startup` seconds more, to import the compiler and open the
    device); a worker that dies is a crash.  jobs 0: in this process."""
    seeds = list(seeds)
    if jobs <= 0:
        outcomes = []
        for seed in seeds:
            outcomes.append(run_one(seed, device))
            if progress:
                progress(outcomes[-1])
        return outcomes
    ctx = multiprocessing.get_context("spawn")
    pending = list(reversed(seeds))
    slots = [_Slot(ctx, device) for _ in range(min(jobs, len(seeds)))]
    results: dict[int, Outcome] = {}

    def record(outcome: Outcome) -> None:
        results[outcome.seed] = outcome
        if progress:
            progress(outcome)

    for slot in slots:
        if pending:
            # A fresh worker imports the compiler and opens the device first: allow for it.
            slot.give(pending.pop(), timeout + startup)
    try:
        while any(s.seed is not None for s in slots):
            busy = [s for s in slots if s.seed is not None]
            left = max(0.0, min(s.deadline for s in busy) - time.monotonic())
            ready = wait([s.parent for s in busy] + [s.process.sentinel for s in busy], timeout=left)
            for k, slot in enumerate(slots):
                if slot.seed is None:
                    continue
                replace = False
                if slot.parent in ready:
                    try:
                        record(Outcome(**slot.parent.recv()))
                    except (EOFError, OSError):
                        record(Outcome(slot.seed, CRASH, f"{CRASH}: worker died", "the worker process died"))
                        replace = True
                elif slot.process.sentinel in ready:
                    code = slot.process.exitcode
                    record(Outcome(slot.seed, CRASH, f"{CRASH}: worker died (exit code {code})",
                                   f"the worker process died with exit code {code}"))
                    replace = True
                elif time.monotonic() >= slot.deadline:
                    record(Outcome(slot.seed, HANG, HANG, f"no answer within {timeout:.0f} s"))
                    slot.process.kill()
                    replace = True
                else:
                    continue
                if replace:
                    slot.process.join()
                    slot = slots[k] = _Slot(ctx, device)
                    fresh = True
                else:
                    fresh = False
                slot.seed = None
                if pending:
                    slot.give(pending.pop(), timeout + (startup if fresh else 0.0))
    finally:
        for slot in slots:
            slot.stop()
    for seed in seeds:  # a hang's text: the program, regenerated here (cheap, deterministic)
        o = results[seed]
        if o.status in (HANG, CRASH) and not o.text:
            try:
                g = random_program(seed)
                results[seed] = attrs.evolve(o, text=g.text, nodes=g.nodes, sizes=dict(g.sizes))
            except GenerationError:
                pass
    return [results[s] for s in seeds]


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
                                   "message": shortest.message[:1500]}})
    return {"total": len(outcomes), "by_status": dict(by_status),
            "failures": sum(by_status[s] for s in FAILURES), "classes": table}


def format_summary(summary: dict) -> str:
    lines = [f"{summary['total']} programs: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["by_status"].items())),
             f"failures: {summary['failures']}"]
    for c in summary["classes"]:
        s = c["shortest"]
        lines.append(f"\n[{c['count']}] {c['class']}\n    seed {s['seed']} sizes {s['sizes']}: {s['text']}")
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
    parser.add_argument("--oclgrind-sample", type=int, default=0, metavar="K",
                        help="afterwards, run K passing seeds under Oclgrind")
    parser.add_argument("--report", help="write the JSON report here")
    parser.add_argument("--json", action="store_true", help="with --only: print the outcome as JSON")
    args = parser.parse_args(argv)

    if args.only is not None:
        outcome = run_one(args.only, source=True)
        if args.json:
            print(json.dumps(outcome.to_json()))
        else:
            print(f"seed {outcome.seed}: {outcome.status}  sizes {outcome.sizes}\n{outcome.text}\n{outcome.message}")
        return 0 if outcome.status in (OK, NO_PROGRAM) else 1

    start = time.monotonic()
    done = Counter()

    def progress(o: Outcome) -> None:
        done[o.status] += 1
        total = sum(done.values())
        if total % 50 == 0 or total == args.count:
            print(f"  {total}/{args.count} {dict(done)} {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)

    seeds = range(args.seed, args.seed + args.count)
    outcomes = run_seeds(seeds, jobs=args.jobs, timeout=args.timeout, progress=progress)
    summary = summarise(outcomes)
    summary["command"] = "python -m dpia.fuzz " + " ".join(argv if argv is not None else sys.argv[1:])
    summary["seconds"] = round(time.monotonic() - start, 1)
    if args.oclgrind_sample:
        passing = [o.seed for o in outcomes if o.status == OK][: args.oclgrind_sample]
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


if __name__ == "__main__":
    sys.exit(main())
