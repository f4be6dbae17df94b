"""Exploration (issue 5): from a high-level program and its input sizes to the fastest
correct kernel the rewrite rules can derive for a device.

    result = explore(program, {"N": 1 << 24}, db=TuningDB(), budget_s=600, search="bayesian")
    result.best, result.default            # Candidates (dpia.tuning): derivation text, time
    print(result.report())                 # tried / failed per stage and per rule / speed-up

The pipeline: (1) the families of `dpia.space` that apply to the program's shape choose
the macro rules, (2) and the mapping to OpenCL (work-groups, local and private memory),
(3) the search (`dpia.search`) picks numeric parameters among those the device's limits
allow, (4) each candidate is derived, translated, emitted, built, run at small check sizes
and compared with the interpreter, then timed at the real sizes (median of event-timed
runs; one run first, and a candidate slower than 5x the best so far is abandoned as
"slow").  Once a best exists, a candidate first runs on probe sizes (about 1/1024, then
1/32 of the work: the size variables halved while their facts allow): a probe that extrapolates to
more than PROBE_SLACK x 5x the best is abandoned then (probes under PROBE_MIN_S are not
extrapolated: launch overhead), so a kernel that would take seconds at the real sizes
(naive mm at 4096^3 on the H200: 39 s a run) costs a fraction of one run.

The baseline, measured first and quoted against (`speedup`), is the variant `dpia run`
would use (dpia.variants.choose_variant's order: the database's best for these sizes and
device, replayed; else the first preset that fits; else the default schedule), so an
exploration never reports something slower than what already runs (`baseline="default"`:
the default schedule).  A timing lasts about `Evaluator.max_timed_s` at most (a 4 s kernel
runs once after its first run), so a slow baseline does not eat a small budget.

Time: the search stops at `budget_s`; only a baseline not yet measured goes on, for half
of `timeout_s` at most.  `status` receives a Status (phase, candidates compiling and
measuring, done, failed, best) from the first moment, before the space is built, and
about once a second.  Sizes whose inputs and output cannot be held on the device, or twice
on the host, are refused (InputsTooLargeError); fewer workers start when the host cannot
hold a copy for each.  The workers check at small sizes; checking a result at large sizes
in bounded memory is dpia.verify's.

Candidates are deduplicated by their printed low-level program; one the database has
already measured (`TuningDB.seen`) is not measured again.  Every measured candidate is
written to the database at once, so an interrupted run keeps what it measured; failures
are recorded too, counted per stage and per rule (or strategy) that failed.

Compilation runs in worker processes started with "spawn" (OpenCL must not be forked);
compiling a candidate (derive to build) and measuring it (run to time) are each bounded
by `timeout_s`: a worker that hangs is killed and replaced ("timeout", with the stage it
hung in), one that crashes is replaced ("failed").  Measurements run one at a
time; on a CPU device no compile starts while a candidate is timed, and timing waits (up
to EXCLUSIVE_WAIT_S) for the compiles under way to end.  Scripts that call `explore`
need the usual `if __name__ == "__main__":` guard of multiprocessing's spawn.
"""

from __future__ import annotations

import collections
import math
import multiprocessing
import multiprocessing.connection
import os
import random
import re
import signal
import time
import uuid
from collections.abc import Callable, Mapping

import attrs

from functional.derivation import Derivation, derive
from functional.errors import FunctionalError
from functional.expr import Expr
from functional.infer import infer
from functional.interp import interpret, layout
from functional.nat import evaluate
from functional.syntax import to_text

from .programs import canonical, input_shapes, known_flops, layout_leaves, random_inputs, relative_error
from .search import FAILED, PENDING, SEARCHES, Search, Trial
from .space import CHECK_FLOOR, DeviceLimits, Family, Point, Shape, Space, check_size, with_size_facts
from .tuning import Candidate, TuningDB

SLOW_FACTOR = 5.0  # abandon a candidate whose first timed run is this much slower than the best
PROBE_WORK = 1 / 32  # probe sizes: at most this fraction of the real sizes' work (product of the sizes)
PROBE_LEVELS = (1 / 1024, PROBE_WORK)  # probed in this order: a candidate 1000x slower costs milliseconds
PROBE_SLACK = 3.0  # small sizes fill a device less: a probe's extrapolation may be this pessimistic
PROBE_MIN_S = 1e-3  # a shorter probe may be mostly launch overhead: it is not extrapolated
STARTUP_TIMEOUT_S = 120.0  # a worker process that is not ready by then cannot open the device
EXCLUSIVE_WAIT_S = 10.0  # on a CPU device a built candidate waits this long at most for compiles to end
DEFAULT_FACT_CAP = 256  # the default schedule may assume each size a multiple of up to this power of two


class ExploreError(FunctionalError):
    """An exploration that cannot run: bad arguments, no worker process can open the device."""


class BudgetError(ExploreError):
    """A time or candidate budget that is not positive."""


class InputsTooLargeError(ExploreError):
    """Sizes whose inputs and output cannot fit the device's or the host's memory."""


BASELINES = ("run", "default")  # explore's `baseline`: see _Run.baseline_spec
STATUS_EVERY_S = 1.0  # the `status` callback is called this often at most (and at each new phase)


@attrs.frozen
class Status:
    """Where an exploration stands, for a progress display (explore's `status` callback):
    the phase ("building the space", "starting workers", "exploring", "finishing the
    baseline", "stopping"), seconds since the start, candidates compiling (derive to
    build), waiting for or being measured, done (measured, failed or reused) and failed,
    and the best time so far."""

    phase: str
    elapsed_s: float
    compiling: int = 0
    measuring: int = 0
    done: int = 0
    failed: int = 0
    best_s: float | None = None


# ------------------------------------------------------------------------ inputs, checks, work


def mismatch(got, want, tolerance: float) -> str | None:
    """Why `got` is not `want` (dpia.programs.relative_error above `tolerance`), or None."""
    error = relative_error(got, want)
    return None if error <= tolerance else f"relative error {error:.2e} > {tolerance:.0e}"


def host_memory_bytes() -> int | None:
    """The host's physical memory (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def memory_problem(program: Expr, sizes: Mapping[str, int], device_bytes: int | None,
                   host_bytes: int | None) -> str | None:
    """Why the inputs and output at `sizes` cannot be held (once on the device, twice on the
    host: the explorer's and a worker's copy), or None."""
    need = program_bytes(program, sizes)
    shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
    if device_bytes is not None and need > device_bytes:
        return f"the inputs and output at {shown} take {need / 1e9:.3g} GB; the device has {device_bytes / 1e9:.3g} GB"
    if host_bytes is not None and 2 * need > host_bytes:
        return (f"the inputs and output at {shown} take {need / 1e9:.3g} GB, twice that on the host; "
                f"the host has {host_bytes / 1e9:.3g} GB")
    return None


def program_bytes(program: Expr, sizes: Mapping[str, int]) -> int:
    """Bytes of every input and of the output: the least a kernel reads and writes."""
    shape = Shape.of(program)
    total = 0
    for t in [p.t for p in shape.inputs] + [shape.body.t]:
        for leaf in layout_leaves(layout(t)):
            total += math.prod(int(evaluate(d, sizes)) for d in leaf.dims) * leaf.scalar.dtype.itemsize
    return total


def throughput_work(program: Expr, sizes: Mapping[str, int]) -> tuple[float, str]:
    """(work per run, unit) for throughput plots: GFLOP for mm, else GB moved."""
    flops = known_flops(program, sizes)
    if flops is not None:
        return flops / 1e9, "GFLOP/s"
    return program_bytes(program, sizes) / 1e9, "GB/s"


def write_exploration_plots(result: Exploration, program: Expr, prefix) -> tuple:
    """`<prefix>_space.png` and `<prefix>_progress.png` of an exploration (dpia.plots), in
    GFLOP/s for mm and GB/s otherwise; their paths."""
    from .plots import write_plots

    work, unit = throughput_work(program, result.sizes)
    return write_plots(result.candidates, prefix, unit, work)


# ------------------------------------------------------------------------------ failures


_STRATEGY_NAME = re.compile(r"([A-Za-z_]\w*)(\(.*\))?")


def failing_rule(message: str) -> str | None:
    """The rule (else the innermost named strategy) a strategy failure names.  Failures
    read outside-in, "seq: ...: global_reduce(7): reduce_split(n=7): reduce_split: 7 does
    not divide the length N", so the last segment naming a registered rule wins."""
    from functional.rules import RULES

    segments = [s.strip() for s in message.split(": ")]
    names = [m.group(1) if (m := _STRATEGY_NAME.fullmatch(s)) else None for s in segments]
    for name in reversed(names):
        if name in RULES:
            return name
    return next((n for n in reversed(names[:-1]) if n), None)


def _error_text(exc: BaseException, limit: int = 2000) -> str:
    """The exception, its end kept when long (strategy failures repeat their context first)."""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else "..." + text[-(limit - 3):]


@attrs.frozen
class Outcome:
    """What a worker reports for one candidate."""

    status: str
    stage: str | None = None
    error: str | None = None
    time_s: float | None = None
    rule: str | None = None
    stage_s: Mapping[str, float] | None = None  # seconds per stage, measured by the parent ("queue": waiting for the device)


# ------------------------------------------------------------------------------ the jobs


@attrs.frozen
class Spec:
    """One candidate to evaluate: the program re-declared with the facts it needs, the
    family and parameters (no family: the default schedule), check and real sizes."""

    index: int
    program: Expr
    family: Family | None
    params: Mapping[str, int]
    check_sizes: Mapping[str, int]
    sizes: Mapping[str, int]
    seed: int
    baseline: bool = False
    probes: tuple[Mapping[str, int], ...] = ()  # probe sizes, least work first
    reference: Expr | None = None  # the program as the user wrote it: inputs and results are its
    derivation: str | None = None  # a derivation to replay (Derivation.to_text) instead of a strategy
    variant: str = ""  # the baseline's kind of variant (dpia.variants.KINDS), or "" for a search point

    @property
    def oracle(self) -> Expr:
        """The program the interpreter runs for the check (the same meaning without the
        re-declared facts, so one result serves every candidate)."""
        return self.reference if self.reference is not None else self.program

    @property
    def point(self) -> Point | None:
        return None if self.family is None else Point(self.family.name, self.params)

    @property
    def family_name(self) -> str:
        if self.family is not None:
            return self.family.name
        return f"{self.variant}_variant" if self.derivation is not None else "default_schedule"

    def strategy(self):
        if self.family is None:
            from functional.schedules import default_schedule

            return default_schedule(self.program)
        return self.family.strategy(self.params)


@attrs.frozen
class Evaluator:
    """The stages of one candidate, each a method (a subclass may replace one: tests make a
    build hang).  Runs in the worker processes, so it must pickle (module-level class).
    `build` returns a runtime Kernel (timing binds it to the worker's device copies of the
    inputs: `Kernel.bind`)."""

    repeat: int = 10  # timed runs at least; short kernels get more (see `runs`)
    min_timed_s: float = 0.05  # ... so that the timed runs last about this long together
    max_repeat: int = 500
    max_timed_s: float = 3.0  # ... and long kernels fewer, so one timing stays within about this
    slow_factor: float = SLOW_FACTOR
    tolerance: float = 1e-3
    check_floor: int = CHECK_FLOOR

    def derive(self, spec: Spec) -> tuple[Expr, Derivation]:
        if spec.derivation is not None:
            replayed = Derivation.from_text(spec.derivation)
            return replayed.replay(), replayed
        return derive(spec.program, spec.strategy())

    def translate(self, low: Expr, spec: Spec):
        import dpia

        return dpia.translate(low, name="candidate")

    def emit(self, program, spec: Spec) -> str:
        from codegen_opencl.opencl import emit

        return emit(program, "opencl")

    def build(self, program, session, spec: Spec):
        from codegen_opencl.runtime import Kernel

        return Kernel(program, session=session)

    def run(self, kernel, inputs: tuple, spec: Spec):
        return kernel(*inputs)

    def check(self, got, want, spec: Spec) -> str | None:
        return mismatch(got, want, self.tolerance)

    def time(self, kernel, inputs: tuple, best_s: float | None, spec: Spec) -> tuple[str, float]:
        """("ok", median of the timed runs), or ("slow", the first run) when that run is more
        than `slow_factor` times the best so far."""
        bound = kernel.bind(*inputs)
        first = bound.time(repeat=1, warmup=1)
        if best_s is not None and first > self.slow_factor * best_s:
            return "slow", first
        return "ok", bound.time(repeat=self.runs(first), warmup=0)

    def probe(self, kernel, inputs: tuple, sizes: Mapping[str, int], spec: Spec) -> float:
        """One run at probe `sizes` (after one warm-up: the first launch may compile),
        extrapolated to the real sizes by the ratio of work (the product of the sizes) when it
        is long enough not to be launch overhead; else the probe's own time, a lower bound."""
        t = kernel.bind(*inputs).time(repeat=1, warmup=1)
        return t * _work(spec.sizes) / _work(sizes) if t >= PROBE_MIN_S else t

    def runs(self, first_s: float) -> int:
        """How many runs to time: a median of a few runs of a 0.1 ms kernel is at the mercy
        of the scheduler, so short kernels run until about `min_timed_s` has passed; a kernel
        of seconds (the naive mm at 1024^3 on PoCL: 4 s) runs only as often as fits in
        `max_timed_s` (once at least), so that one timing does not eat a small budget."""
        first_s = max(first_s, 1e-9)
        wanted = max(self.repeat, min(self.max_repeat, math.ceil(self.min_timed_s / first_s)))
        return max(1, min(wanted, math.floor(self.max_timed_s / first_s)))


def _work(sizes: Mapping[str, int]) -> int:
    return math.prod(sizes.values())


def probe_levels(program: Expr, sizes: Mapping[str, int]) -> tuple[dict[str, int], ...]:
    """The distinct probe sizes of PROBE_LEVELS (least work first; none where the sizes
    cannot shrink)."""
    out: list[dict[str, int]] = []
    for work in PROBE_LEVELS:
        probe = probe_sizes(program, sizes, work)
        if probe is not None and probe not in out:
            out.append(probe)
    return tuple(out)


def probe_sizes(program: Expr, sizes: Mapping[str, int], work: float = PROBE_WORK) -> dict[str, int] | None:
    """Sizes with at most `work` of the real sizes' work: the largest size halved while
    it keeps its facts (a multiple of multiple_of, at least lo and multiple_of), or None when
    the sizes cannot shrink to a quarter of the work."""
    from .programs import size_vars

    facts = {v.name: v for v in size_vars(program)}

    def halvable(name: str, value: int) -> bool:
        var = facts.get(name)
        multiple, lo = (var.multiple_of, var.lo) if var is not None else (1, 1)
        return value % 2 == 0 and (value // 2) % multiple == 0 and value // 2 >= max(multiple, lo)

    probe = dict(sizes)
    while _work(probe) > work * _work(sizes):
        shrinkable = [n for n, v in probe.items() if halvable(n, v)]
        if not shrinkable:
            break
        name = max(shrinkable, key=lambda n: (probe[n], n))
        probe[name] //= 2
    return probe if _work(probe) * 4 <= _work(sizes) else None


class _Uploaded:
    """A built kernel whose `bind` reuses the worker's device copies of the inputs (the
    Evaluator's stages see a kernel as before)."""

    def __init__(self, kernel, uploads):
        self._kernel, self._uploads = kernel, uploads

    def bind(self, *arrays):
        return self._kernel.bind(*arrays, uploads=self._uploads)

    def __call__(self, *arrays):
        return self._kernel(*arrays)

    def __getattr__(self, name):
        return getattr(self._kernel, name)


class _StageFailure(Exception):
    def __init__(self, stage: str, cause: BaseException):
        super().__init__(stage)
        self.stage, self.cause = stage, cause


def _stage(conn, name: str, fn, *args):
    """Tell the parent which stage runs (it names the stage of a timeout), then run it."""
    conn.send(("stage", name))
    try:
        return fn(*args)
    except Exception as exc:
        raise _StageFailure(name, exc) from exc


class _Inputs:
    """A worker's inputs and interpreter results, kept across candidates: every candidate of
    an exploration computes the same program (its re-declared facts change no input), so
    inputs are keyed by their shapes and the results by the program's text.  Real-size
    inputs take seconds to make (two 4096x4096 matrices): made once, not per candidate."""

    KEEP = 8  # entries of each cache, least recently used dropped first

    def __init__(self):
        from codegen_opencl.runtime import Uploads

        self._inputs: collections.OrderedDict = collections.OrderedDict()
        self._expected: collections.OrderedDict = collections.OrderedDict()
        self._pinned: dict = {}  # the real sizes' inputs (one entry)
        self.uploads = Uploads(self.KEEP)  # their device copies, in the worker's one context

    @staticmethod
    def _lookup(cache: collections.OrderedDict, key, make):
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        value = cache[key] = make()
        while len(cache) > _Inputs.KEEP:
            cache.popitem(last=False)
        return value

    def inputs(self, program: Expr, sizes: Mapping[str, int], seed: int, pin: bool = False) -> tuple:
        """Random inputs at `sizes`; `pin`: the real sizes, kept however many check sizes
        pass through the cache (they are the expensive ones)."""
        key = (input_shapes(program, sizes), seed)
        if pin:
            if key not in self._pinned:
                self._pinned = {key: self._inputs.pop(key, None) or random_inputs(program, sizes, seed)}
            return self._pinned[key]
        if key in self._pinned:
            return self._pinned[key]
        return self._lookup(self._inputs, key, lambda: random_inputs(program, sizes, seed))

    def expected(self, program: Expr, sizes: Mapping[str, int], seed: int):
        key = (str(program), tuple(sorted(sizes.items())), seed)
        return self._lookup(self._expected, key, lambda: interpret(program, *self.inputs(program, sizes, seed)))


def _evaluate(conn, spec: Spec, evaluator: Evaluator, session, cache: _Inputs) -> None:
    """One candidate, talking with the parent: derived -> continue/skip -> built -> measure."""
    try:
        low, derivation = _stage(conn, "derive", evaluator.derive, spec)
    except _StageFailure as f:
        message = _error_text(f.cause)
        conn.send(("done", Outcome("failed", "derive", message, rule=failing_rule(str(f.cause)))))
        return
    conn.send(("derived", to_text(low), derivation.to_text()))
    if conn.recv()[0] != "continue":
        return
    try:
        program = _stage(conn, "translate", evaluator.translate, low, spec)
        _stage(conn, "emit", evaluator.emit, program, spec)
        kernel = _stage(conn, "build", evaluator.build, program, session, spec)
    except _StageFailure as f:
        conn.send(("done", Outcome("failed", f.stage, _error_text(f.cause))))
        return
    conn.send(("built",))
    _, best_s = conn.recv()
    conn.send(("done", _measure(conn, spec, evaluator, _Uploaded(kernel, cache.uploads), cache, best_s)))


def _measure(conn, spec: Spec, evaluator: Evaluator, kernel, cache: _Inputs, best_s) -> Outcome:
    try:
        small = cache.inputs(spec.oracle, spec.check_sizes, spec.seed)
        got = _stage(conn, "run", evaluator.run, kernel, small, spec)
        wrong = _stage(conn, "check", lambda: evaluator.check(
            got, cache.expected(spec.oracle, spec.check_sizes, spec.seed), spec))
        if wrong:
            return Outcome("wrong", "check", wrong)
        for sizes in spec.probes if best_s is not None else ():
            probe = cache.inputs(spec.oracle, sizes, spec.seed)
            estimate = _stage(conn, "time", evaluator.probe, kernel, probe, sizes, spec)
            if estimate > PROBE_SLACK * evaluator.slow_factor * best_s:
                return Outcome("slow", "time", f"abandoned on probe sizes {dict(sizes)}: "
                               f"about {estimate:.3g} s at the real sizes", float(estimate))
        real = cache.inputs(spec.oracle, spec.sizes, spec.seed, pin=True)
        status, seconds = _stage(conn, "time", evaluator.time, kernel, real, best_s, spec)
    except _StageFailure as f:
        return Outcome("failed", f.stage, _error_text(f.cause))
    return Outcome(status, None, None, float(seconds))


def _find_device(key: str):
    from codegen_opencl.runtime import device_key, devices

    for d in devices():
        if device_key(d) == key:
            return d
    raise ExploreError(f"no OpenCL device {key!r} in this process")


def _worker_main(conn, key: str, evaluator: Evaluator) -> None:
    """A worker process: open the device once, then evaluate candidates until told to stop.
    Ctrl-C is the parent's to handle (it stops and kills the workers), not the workers'."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        from codegen_opencl.runtime import session_for

        session = session_for(_find_device(key))
    except Exception as exc:  # noqa: BLE001 -- reported to the parent, which gives up
        conn.send(("broken", _error_text(exc)))
        return
    conn.send(("ready",))
    cache = _Inputs()
    while True:
        message = conn.recv()
        if message[0] == "stop":
            return
        _evaluate(conn, message[1], evaluator, session, cache)


# ------------------------------------------------------------------------------ the pool


class _Worker:
    """One worker process and where its current candidate is: starting, idle, compiling
    (derive..build), built (waiting for the device), measuring."""

    def __init__(self, context, key: str, evaluator: Evaluator):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, key, evaluator), daemon=True)
        self.process.start()
        child.close()
        self.state, self.spec, self.stage = "starting", None, None
        self.deadline = time.monotonic() + STARTUP_TIMEOUT_S
        self.derivation: str | None = None
        self.marks: list[tuple[str, float]] = []  # (stage, when it began) for the current candidate

    def mark(self, stage: str) -> None:
        self.marks.append((stage, time.monotonic()))

    def stage_seconds(self) -> dict[str, float]:
        """Seconds spent per stage of the current candidate so far (stages summed by name)."""
        out: dict[str, float] = {}
        ends = [t for _, t in self.marks[1:]] + [time.monotonic()]
        for (stage, start), end in zip(self.marks, ends):
            out[stage] = round(out.get(stage, 0.0) + end - start, 4)
        return out

    def send(self, message) -> None:
        self.conn.send(message)

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


class _Pool:
    """Worker processes evaluating candidates; calls `on_derived(spec, low, derivation) ->
    bool` (False: skip the candidate) and `on_done(spec, outcome, derivation)`."""

    def __init__(self, size: int, key: str, evaluator: Evaluator, timeout_s: float, exclusive: bool,
                 on_derived: Callable, on_done: Callable):
        self._context = multiprocessing.get_context("spawn")
        self._key, self._evaluator, self._timeout = key, evaluator, timeout_s
        self._exclusive = exclusive  # a CPU device: nothing compiles while a candidate is timed
        self._on_derived, self._on_done = on_derived, on_done
        self.best_s: float | None = None  # the fastest time so far, for the "slow" rule
        self._workers = [self._start() for _ in range(size)]
        self._waiting: collections.deque[_Worker] = collections.deque()  # built, in order

    def _start(self) -> _Worker:
        return _Worker(self._context, self._key, self._evaluator)

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- state --------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self._workers)

    def busy(self) -> int:
        return sum(w.state in ("compiling", "built", "measuring") for w in self._workers)

    def can_dispatch(self) -> bool:
        if self._exclusive and any(w.state in ("built", "measuring") for w in self._workers):
            return False
        return any(w.state == "idle" for w in self._workers)

    def dispatch(self, spec: Spec) -> None:
        worker = next(w for w in self._workers if w.state == "idle")
        worker.send(("job", spec))
        worker.state, worker.spec, worker.stage, worker.derivation = "compiling", spec, "derive", None
        worker.deadline = time.monotonic() + self._timeout
        worker.marks = []
        worker.mark("derive")

    # -- events -------------------------------------------------------------------------

    def wait(self, timeout: float) -> None:
        """Handle what the workers report within `timeout` seconds, then expired deadlines."""
        watched = {w.conn: w for w in self._workers if w.state != "idle"}
        for conn in multiprocessing.connection.wait(list(watched), timeout=max(0.0, timeout)):
            worker = watched[conn]
            try:
                message = conn.recv()
            except (EOFError, OSError):
                self._died(worker)
                continue
            self._handle(worker, message)
        self._expire()
        self._grant()

    def _handle(self, worker: _Worker, message: tuple) -> None:
        kind = message[0]
        if kind == "ready":
            worker.state = "idle"
        elif kind == "broken":
            raise ExploreError(f"a worker process cannot open the device: {message[1]}", where=self._key)
        elif kind == "stage":
            worker.stage = message[1]
            if message[1] != "derive":  # dispatch marked it
                worker.mark(message[1])
        elif kind == "derived":
            worker.derivation = message[2]
            go = self._on_derived(worker.spec, message[1], message[2])
            worker.send(("continue",) if go else ("skip",))
            if not go:
                worker.state, worker.spec = "idle", None
        elif kind == "built":
            worker.state, worker.deadline = "built", time.monotonic() + EXCLUSIVE_WAIT_S
            worker.mark("queue")
            self._waiting.append(worker)
        elif kind == "done":
            outcome = attrs.evolve(message[1], stage_s=worker.stage_seconds())
            spec, worker.state, worker.spec = worker.spec, "idle", None
            self._on_done(spec, outcome, worker.derivation)

    def _grant(self) -> None:
        """Let the next built candidate measure when the device is free."""
        if any(w.state == "measuring" for w in self._workers) or not self._waiting:
            return
        compiling = any(w.state in ("starting", "compiling") for w in self._workers)
        if self._exclusive and compiling and time.monotonic() < self._waiting[0].deadline:
            return  # timings on a CPU device are disturbed by compiles; a hung one is not waited for
        worker = self._waiting.popleft()
        worker.send(("measure", self.best_s))
        worker.state, worker.deadline = "measuring", time.monotonic() + self._timeout

    def _expire(self) -> None:
        now = time.monotonic()
        for worker in list(self._workers):
            if worker.state in ("starting", "compiling", "measuring") and now > worker.deadline:
                if worker.state == "starting":
                    raise ExploreError(f"a worker process did not start within {STARTUP_TIMEOUT_S:.0f} s",
                                       where=self._key)
                spec, stage, derivation = worker.spec, worker.stage, worker.derivation
                self._replace(worker)
                self._on_done(spec, Outcome("timeout", stage, f"no result within {self._timeout:g} s at {stage}"),
                              derivation)

    def _died(self, worker: _Worker) -> None:
        if worker.state == "starting":
            raise ExploreError(f"a worker process exited while starting (exit code {worker.process.exitcode})",
                               where=self._key)
        spec, stage, derivation = worker.spec, worker.stage, worker.derivation
        worker.process.join(5)
        code = worker.process.exitcode
        self._replace(worker)
        if spec is not None:
            self._on_done(spec, Outcome("failed", stage, f"the worker process died (exit code {code}) at {stage}"),
                          derivation)

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        if worker in self._waiting:
            self._waiting.remove(worker)
        self._workers[self._workers.index(worker)] = self._start()

    def counts(self) -> dict[str, int]:
        """Workers per state (starting, idle, compiling, built, measuring)."""
        return dict(collections.Counter(w.state for w in self._workers))

    def busy_with(self, which: Callable[[Spec], bool]) -> bool:
        """Whether a busy worker's candidate is one `which` selects."""
        return any(w.spec is not None and which(w.spec) for w in self._workers
                   if w.state in ("compiling", "built", "measuring"))

    def abandon(self, keep: Callable[[Spec], bool] | None = None) -> int:
        """Kill the workers of unfinished candidates (the budget ran out), except those whose
        candidate `keep` selects; how many."""
        busy = [w for w in self._workers if w.state in ("compiling", "built", "measuring")
                and not (keep is not None and w.spec is not None and keep(w.spec))]
        for worker in busy:
            self._replace(worker)
        return len(busy)

    def close(self) -> None:
        for worker in self._workers:
            if worker.state == "idle":
                try:
                    worker.send(("stop",))
                except OSError:
                    pass
        for worker in self._workers:
            worker.process.join(2 if worker.state == "idle" else 0)
            worker.kill()


# ------------------------------------------------------------------------------ the result


@attrs.frozen
class Exploration:
    """What one exploration found and how its candidates fared.

    `tried`: candidates evaluated in this run (baseline included); `failed`: those failed,
    wrong or timed out; `by_stage` / `by_rule` / `by_family`: where they failed;
    `infeasible`: points the device's limits or the sizes excluded ("family: reason kind");
    `duplicates`: points whose low-level program another point already had; `reused`:
    candidates the database had measured before; `abandoned`: killed by the time budget."""

    program: str
    sizes: Mapping[str, int]
    device: str
    run_id: str
    search: str
    seed: int
    best: Candidate | None
    default: Candidate | None
    tried: int
    failed: int
    by_stage: Mapping[str, int]
    by_rule: Mapping[str, int]
    by_family: Mapping[str, Mapping[str, int]]
    infeasible: Mapping[str, int]
    duplicates: int
    reused: int
    abandoned: int
    elapsed_s: float
    candidates: tuple[Candidate, ...]
    baseline: str = "default"  # the kind of variant `default` is (dpia.variants.KINDS): what dpia run used

    def stage_seconds(self) -> dict[str, float]:
        """Mean seconds per candidate in each stage (from the candidates' `stage_s`): where
        an exploration's time goes ("queue": built, waiting for the device)."""
        totals: collections.Counter = collections.Counter()
        timed = [c.params["stage_s"] for c in self.candidates if c.params.get("stage_s")]
        for stages in timed:
            totals.update(stages)
        return {stage: totals[stage] / len(timed) for stage in sorted(totals)} if timed else {}

    @property
    def speedup(self) -> float | None:
        """How much faster the best candidate is than the baseline (`default`): the variant
        `dpia run` used before this exploration (explore's baseline "run"), else the default
        schedule."""
        if self.best is None or self.default is None or self.default.status != "ok":
            return None
        return self.default.time_s / self.best.time_s

    def report(self) -> str:
        def timed(c: Candidate | None) -> str:
            if c is None:
                return "none"
            family = c.params.get("family", "default_schedule")
            choices = ", ".join(f"{k}={v}" for k, v in sorted(dict(c.params.get("choices", {})).items()))
            result = f"{c.time_s * 1e3:.4f} ms" if c.status == "ok" else f"{c.status} at {c.stage}"
            return f"{family}({choices}): {result}"

        summary = (f"exploration {self.run_id} ({self.search}, seed {self.seed}) on {self.device}: "
                   f"{self.tried} tried, {self.failed} failed, {self.duplicates} duplicates, {self.reused} reused, "
                   f"{self.abandoned} abandoned in {self.elapsed_s:.1f} s")
        lines = [summary, f"  best:    {timed(self.best)}",
                 f"  baseline ({self.baseline} variant): {timed(self.default)}"]
        if self.speedup is not None:
            lines.append(f"  speed-up over the {self.baseline} variant: {self.speedup:.2f}x")
        for title, counts in (("failures by stage", self.by_stage), ("failures by rule", self.by_rule),
                              ("infeasible points", self.infeasible)):
            if counts:
                lines.append(f"  {title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        for family, statuses in sorted(self.by_family.items()):
            lines.append(f"  {family}: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
        if stages := self.stage_seconds():
            lines.append("  seconds per candidate: " + ", ".join(f"{k} {v:.3f}" for k, v in stages.items()))
        return "\n".join(lines)


# ------------------------------------------------------------------------------ one run


class _Run:
    """The bookkeeping of one exploration (a local object: no state outlives `explore`)."""

    def __init__(self, space: Space, program_text: str, device: str, db: TuningDB | None, run_id: str,
                 search: Search, seed: int, max_candidates: int | None, progress, evaluator: Evaluator):
        self.space, self.program_text, self.device, self.db = space, program_text, device, db
        self.run_id, self.search, self.seed = run_id, search, seed
        self.max_candidates, self.progress, self.evaluator = max_candidates, progress, evaluator
        self.rng = random.Random(seed)
        self.trials: dict[int, Trial] = {}
        self.recorded: dict[int, Candidate] = {}
        self.low_texts: dict[str, int] = {}  # printed low-level program -> index of its first candidate
        self.by_stage, self.by_rule = collections.Counter(), collections.Counter()
        self.by_family: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.duplicates = self.reused = self.abandoned = 0
        self.best: Candidate | None = None
        self.default: Candidate | None = None
        self.baseline_done = False
        self.baseline_kind = "default"
        self._next_index = 0

    # -- specs ----------------------------------------------------------------------------

    def _spec(self, point: Point | None, baseline: bool = False) -> Spec:
        index, self._next_index = self._next_index, self._next_index + 1
        space = self.space
        if point is None:  # the default schedule: the facts the real sizes satisfy, capped
            facts = {name: math.gcd(size, DEFAULT_FACT_CAP) for name, size in space.sizes.items()}
            program = with_size_facts(space.program, facts)
            check = {name: check_size(facts[name], real, self.evaluator.check_floor) for name, real in space.sizes.items()}
            family, params = None, {}
        else:
            program, family, params = space.program_for(point), space.family(point.family), point.as_dict()
            check = space.check_sizes(point, self.evaluator.check_floor)
            self.trials[index] = Trial(point)
        return Spec(index, program, family, params, check, dict(space.sizes), self.seed, baseline,
                    probe_levels(program, space.sizes), space.program)

    def baseline_spec(self, baseline: str, limits: DeviceLimits) -> Spec:
        """The candidate measured first, the one speed-ups are quoted against.  "run": the
        variant `dpia run` would use (dpia.variants.choose_variant: the database's best for
        these sizes and device, else the first preset that fits, else the default
        schedule), so an exploration never reports something slower than what runs
        already; "default": the default schedule."""
        if baseline == "run":
            stored = self._stored_best()
            if stored is not None:
                return self._replay(stored.derivation, "tuned")
            preset = self._preset(limits)
            if preset is not None:
                return preset
        return attrs.evolve(self._spec(None, baseline=True), variant="default")

    def _stored_best(self) -> Candidate | None:
        from .tuning import TuningError

        if self.db is None:
            return None
        try:
            return self.db.best(self.program_text, self.space.sizes, self.device)
        except TuningError:  # dpia run would use the default then too
            return None

    def _preset(self, limits: DeviceLimits) -> Spec | None:
        from .presets import preset_point, preset_program

        point = preset_point(self.space.program, self.space.sizes, limits)
        if point is None:
            return None
        if point in self.space.feasible_points:  # a point of the search: it learns from it too
            return attrs.evolve(self._spec(point, baseline=True), variant="preset")
        try:  # a family outside this exploration's: derived here, replayed by the worker
            _, derivation = preset_program(self.space.program, point)
        except FunctionalError:  # dpia run falls back to the default too
            return None
        return self._replay(derivation.to_text(), "preset")

    def _replay(self, text: str, kind: str) -> Spec:
        """A baseline that replays a derivation, checked at sizes its program's facts allow."""
        from .programs import size_vars

        index, self._next_index = self._next_index, self._next_index + 1
        program = Derivation.from_text(text).program
        facts = {v.name: v.multiple_of for v in size_vars(program)}
        floor = self.evaluator.check_floor
        check = {name: check_size(facts[name], real, floor) if name in facts else real
                 for name, real in self.space.sizes.items()}
        return Spec(index, program, None, {}, check, dict(self.space.sizes), self.seed, True,
                    probe_levels(program, self.space.sizes), self.space.program, text, kind)

    def propose(self, count: int) -> list[Spec]:
        history = [self.trials[k] for k in sorted(self.trials)]
        return [self._spec(p) for p in self.search.propose(self.space, history, self.rng, count)]

    # -- budgets --------------------------------------------------------------------------

    @property
    def tried(self) -> int:
        return len(self.recorded)

    def may_dispatch(self, in_flight: int) -> bool:
        return self.max_candidates is None or self.tried + in_flight < self.max_candidates

    # -- events from the pool -------------------------------------------------------------

    def on_derived(self, spec: Spec, low_text: str, derivation: str) -> bool:
        """Measure this candidate? Not when another has the same low-level program, nor
        when the database measured its derivation already."""
        if low_text in self.low_texts:
            first = self.recorded.get(self.low_texts[low_text])  # None while it is still measured
            self.duplicates += 1
            self._finish_trial(spec, first or "duplicate")
            if spec.baseline:  # the default schedule derived what a point already measured
                self.default, self.baseline_done = first, True
            return False
        self.low_texts[low_text] = spec.index
        known = self.db.seen(self.program_text, spec.sizes, self.device, derivation) if self.db else None
        if known is not None and known.stage != "derive":
            self.reused += 1
            self._finish_trial(spec, known)
            self._consider(known)
            if spec.baseline:
                self.default, self.baseline_done = known, True
            self._report(known)
            return False
        return True

    def on_done(self, spec: Spec, outcome: Outcome, derivation: str | None) -> None:
        candidate = self._candidate(spec, outcome, derivation)
        if self.db is not None:
            self.db.add(candidate)
        self.recorded[spec.index] = candidate
        self.by_family[spec.family_name][candidate.status] += 1
        if candidate.status in FAILED:
            self.by_stage[candidate.stage or "?"] += 1
            if outcome.stage == "derive":
                self.by_rule[outcome.rule or spec.family_name] += 1
        self._finish_trial(spec, candidate)
        self._consider(candidate)
        if spec.baseline:
            self.default, self.baseline_done = candidate, True
        self._report(candidate)

    def abandon(self, count: int) -> None:
        self.abandoned += count
        self.baseline_done = True

    # -- helpers --------------------------------------------------------------------------

    def _candidate(self, spec: Spec, outcome: Outcome, derivation: str | None) -> Candidate:
        params = {"family": spec.family_name, "choices": dict(spec.params), "index": spec.index,
                  "baseline": spec.baseline, "check_sizes": dict(spec.check_sizes), "search": self.search.name,
                  "seed": self.seed}
        if spec.variant:
            params["variant"] = spec.variant
        if outcome.rule:
            params["rule"] = outcome.rule
        if outcome.stage_s:
            params["stage_s"] = dict(outcome.stage_s)
        text = derivation or Derivation(spec.program, ()).to_text()  # failed before a derivation existed
        return Candidate(self.program_text, dict(spec.sizes), self.device, text, outcome.status,
                         time_s=outcome.time_s, stage=outcome.stage, error=outcome.error, params=params,
                         run_id=self.run_id)

    def _finish_trial(self, spec: Spec, result: Candidate | str) -> None:
        """The search's view of a finished point: its candidate's status and time, or a
        status alone (a duplicate of a candidate still being measured)."""
        if spec.index in self.trials:
            status, seconds = (result, None) if isinstance(result, str) else (result.status, result.time_s)
            self.trials[spec.index] = Trial(self.trials[spec.index].point, status, seconds if status in ("ok", "slow") else None)

    def _consider(self, c: Candidate) -> None:
        if c.status == "ok" and (self.best is None or c.time_s < self.best.time_s):
            self.best = c

    def _report(self, c: Candidate) -> None:
        if self.progress is not None:
            self.progress(c)

    def pending_trials(self) -> bool:
        return any(t.status == PENDING for t in self.trials.values())

    def result(self, elapsed_s: float) -> Exploration:
        failed = sum(c.status in FAILED for c in self.recorded.values())
        return Exploration(
            self.program_text, dict(self.space.sizes), self.device, self.run_id, self.search.name, self.seed,
            self.best, self.default, self.tried, failed, dict(self.by_stage), dict(self.by_rule),
            {k: dict(v) for k, v in self.by_family.items()}, dict(self.space.infeasible), self.duplicates,
            self.reused, self.abandoned, elapsed_s, tuple(self.recorded[k] for k in sorted(self.recorded)),
            self.baseline_kind)

    def failed_count(self) -> int:
        return sum(c.status in FAILED for c in self.recorded.values())


# ------------------------------------------------------------------------------ explore


def _check_budgets(budget_s, max_candidates) -> None:
    if budget_s is not None and not (isinstance(budget_s, (int, float)) and budget_s > 0):
        raise BudgetError(f"the time budget must be a positive number of seconds, got {budget_s!r}")
    if max_candidates is not None and (isinstance(max_candidates, bool) or not isinstance(max_candidates, int)
                                       or max_candidates <= 0):
        raise BudgetError(f"the candidate budget must be a positive integer, got {max_candidates!r}")


def default_workers(cpu_device: bool = True) -> int:
    """Compiling processes: two at least (one compiles while another is timed), half the
    host's cores, at most eight for a GPU (deriving a candidate takes about 1 s and timing it
    0.3 s: 8 workers kept the H200 busy, 531 candidates in 180 s against 345 with 4) and four
    for a CPU device (its compiles and its timings share the cores)."""
    return min(4 if cpu_device else 8, max(2, (os.cpu_count() or 2) // 2))


def _open_db(db):
    if db is None or isinstance(db, TuningDB):
        return db, False
    return TuningDB(db), True


def explore(program: Expr, sizes: Mapping[str, int], *, device=None, db=None, budget_s: float | None = None,
            max_candidates: int | None = None, search: str = "bayesian", seed: int = 0, workers: int | None = None,
            progress: Callable[[Candidate], None] | None = None, run_id: str | None = None,
            families=None, evaluator: Evaluator | None = None, timeout_s: float = 120.0,
            baseline: str = "run", status: Callable[[Status], None] | None = None) -> Exploration:
    """Explore lowerings of `program` at `sizes` on `device` (see the module docstring).

    `db`: a TuningDB, a path, or None (nothing stored).  `budget_s` / `max_candidates`: stop
    after this many seconds / evaluated candidates (None: until the space is exhausted).
    `search`: a name in dpia.search.SEARCHES.  `families`: the families to draw from
    (default: dpia.space.standard_families()).  `timeout_s`: per candidate, for compiling
    and for measuring each.  `baseline`: the candidate measured first and quoted against,
    "run" (what `dpia run` would use) or "default" (the default schedule).  `progress` is
    called with each finished candidate, `status` with a Status from the start and about
    once a second.

    Time: the search stops at `budget_s`; a baseline still unmeasured then goes on for at
    most half of `timeout_s` more (without it nothing could be quoted), so explore returns
    within budget_s + timeout_s / 2 plus stopping the workers.  Sizes whose inputs and
    output cannot be held are refused (InputsTooLargeError) before anything starts; fewer
    workers start when the host cannot hold a copy of them for each."""
    _check_budgets(budget_s, max_candidates)
    if search not in SEARCHES:
        raise ExploreError(f"unknown search {search!r}; known: {', '.join(SEARCHES)}")
    if baseline not in BASELINES:
        raise ExploreError(f"unknown baseline {baseline!r}; known: {', '.join(BASELINES)}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ExploreError(f"workers must be a positive integer, got {workers!r}")
    started = time.monotonic()
    tell = _Teller(status, started)
    tell("building the search space")
    from codegen_opencl.runtime import choose_device, device_identity, device_key

    chosen = choose_device(device)
    key, limits = device_key(chosen), DeviceLimits.of(chosen)
    typed = program if program.t is not None else infer(program)
    host = host_memory_bytes()
    problem = memory_problem(typed, sizes, device_identity(chosen).get("global_mem_bytes"), host)
    if problem is not None:
        raise InputsTooLargeError(problem)
    workers = default_workers("CPU" in limits.device_type) if workers is None else workers
    if host is not None:  # each worker holds the real sizes' inputs and output
        workers = max(1, min(workers, host // max(1, program_bytes(typed, sizes)) - 1))
    space = Space.build(typed, sizes, limits, families)
    evaluator = evaluator or Evaluator()
    tuning_db, owned = _open_db(db)
    run = _Run(space, canonical(typed), key, tuning_db, run_id or uuid.uuid4().hex[:12], SEARCHES[search], seed,
               max_candidates, progress, evaluator)
    try:
        tell(f"starting {workers} worker process(es)")
        with _Pool(workers, key, evaluator, timeout_s, "CPU" in limits.device_type, run.on_derived,
                   run.on_done) as pool:
            tell("choosing the baseline", run, pool)
            first = run.baseline_spec(baseline, limits)
            run.baseline_kind = first.variant or "default"
            deadline = None if budget_s is None else started + budget_s
            _loop(run, pool, first, deadline, timeout_s / 2, tell)
            tell("stopping", run, pool)
    finally:
        if owned:
            tuning_db.close()
    return run.result(time.monotonic() - started)


class _Teller:
    """Calls the `status` callback: at each new phase, else at most every STATUS_EVERY_S."""

    def __init__(self, status, started: float):
        self._status, self._started = status, started
        self._phase, self._last = None, -math.inf

    def __call__(self, phase: str, run: _Run | None = None, pool: _Pool | None = None) -> None:
        now = time.monotonic()
        if self._status is None or (phase == self._phase and now - self._last < STATUS_EVERY_S):
            return
        self._phase, self._last = phase, now
        counts = pool.counts() if pool is not None else {}
        self._status(Status(
            phase, now - self._started, counts.get("compiling", 0), counts.get("built", 0) + counts.get("measuring", 0),
            (run.tried + run.reused) if run else 0, run.failed_count() if run else 0,
            run.best.time_s if run and run.best else None))


def _loop(run: _Run, pool: _Pool, first: Spec, deadline: float | None, overtime_s: float, tell) -> None:
    """Dispatch the baseline `first`, then the search's points, until a budget or the space
    ends.  At the deadline every candidate but an unfinished baseline is abandoned; the
    baseline has `overtime_s` more."""
    pending = collections.deque([first])
    exhausted = False
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            if run.baseline_done or now >= deadline + overtime_s:
                run.abandon(pool.abandon())
                return
            if any(not s.baseline for s in pending) or pool.busy_with(lambda s: not s.baseline):
                pending = collections.deque(s for s in pending if s.baseline)
                run.abandoned += pool.abandon(keep=lambda s: s.baseline)
        pool.best_s = run.best.time_s if run.best is not None else None
        while pending and pool.can_dispatch() and run.may_dispatch(pool.busy()):
            pool.dispatch(pending.popleft())
        overtime = deadline is not None and now >= deadline
        if not overtime and not pending and not exhausted and run.baseline_done and _wants_more(run, pool):
            batch = run.propose(run.search.batch(pool.size))
            exhausted = not batch
            pending.extend(batch)
            if batch:
                continue
        tell("finishing the baseline" if overtime else "exploring" if run.baseline_done else "measuring the baseline",
             run, pool)
        nothing_left = not run.may_dispatch(0) or (exhausted and not pending)
        if nothing_left and pool.busy() == 0:
            return
        limit = deadline + (overtime_s if overtime else 0.0) if deadline is not None else None
        pool.wait(0.2 if limit is None else max(0.0, min(0.2, limit - now)))


def _wants_more(run: _Run, pool: _Pool) -> bool:
    """Ask the search for points when they can be dispatched; a synchronous search only
    once its previous batch has finished."""
    if not run.may_dispatch(pool.busy()):
        return False
    if run.search.synchronous:
        return pool.busy() == 0 and not run.pending_trials()
    return pool.can_dispatch()


__all__ = [
    "BASELINES",
    "BudgetError",
    "Evaluator",
    "Exploration",
    "ExploreError",
    "InputsTooLargeError",
    "Outcome",
    "Spec",
    "Status",
    "default_workers",
    "explore",
    "failing_rule",
    "host_memory_bytes",
    "memory_problem",
    "mismatch",
    "program_bytes",
    "throughput_work",
    "write_exploration_plots",
]
