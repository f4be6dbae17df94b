"""Evaluating one candidate: the stages from derivation to timing, in a worker process.

A `Spec` names the candidate (the program re-declared with the facts it needs, its strategy or
derivation, check and real sizes); the `Evaluator` runs its stages (derive, then those of
dpia.pipeline.PIPELINE from translate to time: each a method a test may replace);
`_evaluate` talks with the parent (dpia.explore.workers) between them.  Probe sizes abandon a hopeless candidate
early (see dpia.explore.driver).
"""

from __future__ import annotations

import collections
import math
import re
from collections.abc import Mapping

import attrs

from functional.derivation import Derivation, derive
from functional.errors import FunctionalError
from functional.expr import Expr
from functional.interp import interpret
from functional.syntax import to_text

from ..pipeline import PIPELINE, Options, Pipeline, mismatch  # noqa: F401 -- mismatch: this module's API too
from ..programs import input_shapes, random_inputs, timing_inputs
from .launch import applied_shape
from .space import CHECK_FLOOR, DeviceLimits, Point, Skeleton, check_size, lowering_target

SLOW_FACTOR = 5.0  # abandon a candidate whose first timed run is this much slower than the best
PROBE_WORK = 1 / 32  # probe sizes: at most this fraction of the real sizes' work (product of the sizes)
PROBE_LEVELS = (1 / 1024, PROBE_WORK)  # probed in this order: a candidate 1000x slower costs milliseconds
PROBE_SLACK = 3.0  # small sizes fill a device less: a probe's extrapolation may be this pessimistic
PROBE_MIN_S = 1e-3  # a shorter probe may be mostly launch overhead: it is not extrapolated



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
    where: str | None = None  # on a cluster: the hosts and processes that prepared and measured it
    at_sizes: bool = False  # timed compiled at the real sizes (what `dpia run` then compiles), not size-generic
    at_sizes_refused: str | None = None  # why the kernel compiled at the real sizes was not the one timed
    strided: float | None = None  # resources.strided_share of its main kernel at the real sizes (the search's hint)


# ------------------------------------------------------------------------------ the jobs


@attrs.frozen
class Spec:
    """One candidate to evaluate: the program re-declared with the facts it needs, the
    skeleton (`family`) and slot values (no skeleton: the default schedule), check and real
    sizes.  `fallback`: the program with the stronger facts a point may need (splits of
    splits of one length), derived when the first does not derive."""

    index: int
    program: Expr
    family: Skeleton | None
    params: Mapping[str, int]
    check_sizes: Mapping[str, int]
    sizes: Mapping[str, int]
    seed: int
    baseline: bool = False
    probes: tuple[Mapping[str, int], ...] = ()  # probe sizes, least work first
    reference: Expr | None = None  # the program as the user wrote it: inputs and results are its
    derivation: str | None = None  # a derivation to replay (Derivation.to_text) instead of a strategy
    variant: str = ""  # the baseline's kind of variant (dpia.variants.KINDS), or "" for a search point
    fallback: Expr | None = None  # the program with the product of the values as facts
    # runtime.Kernel's launch options (dpia.pipeline.Options.launch): a point's launch shape
    # (dpia.explore.launch.launch_options), or a replayed variant's stored launch
    launch: Mapping = attrs.field(factory=dict, converter=lambda v: dict(v))
    # what `dpia run` compiles at the real sizes for this candidate, where that is not the
    # derived program at them (at_real_sizes): the default variant, derived with the sizes fixed
    real_derivation: str | None = None
    # a confirmation (dpia.explore.driver._confirm) re-measures an earlier candidate: the
    # role it has ("best", "baseline"); measured in full, neither probed nor abandoned as slow
    confirms: str = ""

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

    def strategy(self, limits: DeviceLimits | None = None):
        """The point's strategy (without a skeleton: the default schedule) for a device with
        `limits` (what the lowering is told of it: DeviceLimits.lowering_target)."""
        target = lowering_target(limits)
        if self.family is None:
            from functional.schedules import default_schedule

            return default_schedule(self.program, target)
        return self.family.strategy(self.params, target)


@attrs.frozen
class Evaluator:
    """The stages of one candidate, each a method (a subclass may replace one: tests make a
    build hang).  After `derive`, a method per stage of `pipeline` (dpia.pipeline), taking
    what the stage takes and running the stage's function; `time` and `probe` decide how
    often the time stage runs.  Runs in the worker processes, so it must pickle (a
    module-level class; the pipeline's functions module-level too).  `build` returns a
    runtime Kernel (timing binds it to the worker's device copies of the inputs:
    `Kernel.bind`)."""

    repeat: int = 10  # timed runs at least; short kernels get more (see `runs`)
    min_timed_s: float = 0.05  # ... so that the timed runs last about this long together
    max_repeat: int = 500
    max_timed_s: float = 3.0  # ... and long kernels fewer, so one timing stays within about this
    slow_factor: float = SLOW_FACTOR
    tolerance: float = 1e-3
    check_floor: int = CHECK_FLOOR
    pipeline: Pipeline = PIPELINE
    limits: DeviceLimits | None = None  # the device's: a candidate it cannot run well is not built (explore sets it)

    def derive(self, spec: Spec) -> tuple[Expr, Derivation]:
        if spec.derivation is not None:
            replayed = Derivation.from_text(spec.derivation)
            return replayed.replay(), replayed
        try:
            return derive(spec.program, spec.strategy(self.limits))
        except FunctionalError:
            if spec.fallback is None:
                raise
            return derive(spec.fallback, spec.strategy(self.limits))

    def options(self, spec: Spec, **changes) -> Options:
        sizes = dict(spec.sizes) if spec is not None else None
        launch = dict(spec.launch) if spec is not None else {}
        intrinsics = None if self.limits is None else frozenset(self.limits.intrinsics)
        occupancy = spec is None or not spec.baseline  # the baseline runs whatever its occupancy (dpia run does)
        return Options(name="candidate", tolerance=self.tolerance, sizes=sizes, limits=self.limits, launch=launch,
                       intrinsics=intrinsics, occupancy=occupancy, **changes)

    def run_stage(self, name: str, spec: Spec, *taken, **options):
        """The pipeline's stage `name` on the values it takes (`options`: Options fields)."""
        return self.pipeline[name].fn(*taken, self.options(spec, **options))

    def translate(self, low: Expr, spec: Spec):
        return self.run_stage("translate", spec, low)

    def passes(self, translated, spec: Spec):
        return self.run_stage("passes", spec, translated)

    def plan(self, imperative, spec: Spec):
        return self.run_stage("plan", spec, imperative)

    def emit(self, host_plan, spec: Spec):
        return self.run_stage("emit", spec, host_plan)

    def build(self, source, session, spec: Spec):
        return self.run_stage("build", spec, source, session)

    def run(self, kernel, inputs: tuple, spec: Spec):
        return self.run_stage("run", spec, kernel, inputs)

    def check(self, got, want, spec: Spec) -> str | None:
        return self.run_stage("check", spec, got, want)

    def time(self, kernel, inputs: tuple, best_s: float | None, spec: Spec) -> tuple[str, float]:
        """("ok", median of the timed runs), or ("slow", the first run) when that run is more
        than `slow_factor` times the best so far."""
        first = self.run_stage("time", spec, kernel, inputs, repeat=1, warmup=1)
        if best_s is not None and first > self.slow_factor * best_s:
            return "slow", first
        return "ok", self.run_stage("time", spec, kernel, inputs, repeat=self.runs(first), warmup=0)

    def probe(self, kernel, inputs: tuple, sizes: Mapping[str, int], spec: Spec) -> float:
        """One run at probe `sizes` (after one warm-up: the first launch may compile),
        extrapolated to the real sizes by the ratio of work (the product of the sizes) when it
        is long enough not to be launch overhead; else the probe's own time, a lower bound."""
        t = self.run_stage("time", spec, kernel, inputs, repeat=1, warmup=1)
        return t * _work(spec.sizes) / _work(sizes) if t >= PROBE_MIN_S else t

    def runs(self, first_s: float) -> int:
        """How many runs to time: a median of a few runs of a 0.1 ms kernel is at the mercy
        of the scheduler, so short kernels run until about `min_timed_s` has passed; a kernel
        of seconds (the naive mm at 1024^3 on PoCL: 4 s) runs only as often as fits in
        `max_timed_s` (once at least), so that one timing does not eat a small budget."""
        first_s = max(first_s, 1e-9)
        wanted = max(self.repeat, min(self.max_repeat, math.ceil(self.min_timed_s / first_s)))
        return max(1, min(wanted, math.floor(self.max_timed_s / first_s)))


def derived_message(low: Expr, derivation: Derivation, spec: Spec) -> tuple:
    """What a worker tells the explorer of a derived candidate: ("derived", its low-level
    program as text, its derivation as text, the local size its launch gives the kernels
    without work-groups, dpia.explore.launch.applied_shape): the explorer's duplicate key."""
    return ("derived", to_text(low), derivation.to_text(), applied_shape(low, spec.launch))


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
    from ..programs import size_vars

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
    Evaluator's stages see a kernel as before), and the last bound kernel when bound to the
    same arrays again (a timing runs the time stage twice: once, then for the median)."""

    def __init__(self, kernel, uploads):
        self._kernel, self._uploads = kernel, uploads
        self._bound: tuple | None = None  # (arrays, BoundKernel)

    def bind(self, *arrays):
        if self._bound is None or len(self._bound[0]) != len(arrays) or \
                any(a is not b for a, b in zip(self._bound[0], arrays)):
            self._bound = (arrays, self._kernel.bind(*arrays, uploads=self._uploads))
        return self._bound[1]

    def __call__(self, *arrays, **options):
        # a run at the real sizes (the agreement check) reads the held copies too: uploading
        # GEMV^T's 1 GiB matrix twice per candidate held the device 0.9 s of its 2.3
        return self._kernel(*arrays, uploads=self._uploads, **options)

    def __getattr__(self, name):
        return getattr(self._kernel, name)


class _StageFailure(Exception):
    def __init__(self, stage: str, cause: BaseException):
        super().__init__(stage)
        self.stage, self.cause = stage, cause


def _method(evaluator: Evaluator, name: str):
    """The Evaluator's method for a stage (a subclass may replace it); a stage of its
    pipeline it has no method for runs the stage's function."""
    method = getattr(evaluator, name, None)
    if method is not None:
        return method
    return lambda *taken: evaluator.run_stage(name, taken[-1], *taken[:-1])  # taken: the values, then the spec


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

    def inputs(self, program: Expr, sizes: Mapping[str, int], seed: int, pin: bool = False,
               timing: bool = False) -> tuple:
        """Random inputs at `sizes`: for checking (dpia.programs.random_inputs), or with
        `timing` for timing (timing_inputs: indices spread like real ones); `pin`: the real
        sizes, kept however many check sizes pass through the cache (the expensive ones)."""
        key = (input_shapes(program, sizes), seed, timing)
        make = timing_inputs if timing else random_inputs
        if pin:
            if key not in self._pinned:
                self._pinned = {key: self._inputs.pop(key, None) or make(program, sizes, seed)}
            return self._pinned[key]
        if key in self._pinned:
            return self._pinned[key]
        return self._lookup(self._inputs, key, lambda: make(program, sizes, seed))

    def expected(self, program: Expr, sizes: Mapping[str, int], seed: int):
        key = (str(program), tuple(sorted(sizes.items())), seed)
        return self._lookup(self._expected, key, lambda: interpret(program, *self.inputs(program, sizes, seed)))


def checkable_sizes(program: Expr, sizes: Mapping[str, int], floor: int) -> dict[str, int]:
    """Small sizes the program's declared facts allow (dpia.explore.space.check_size)."""
    from ..programs import size_vars

    facts = {v.name: v.multiple_of for v in size_vars(program)}
    return {name: check_size(facts.get(name, 1), real, floor) for name, real in sizes.items()}


def _evaluate(conn, spec: Spec, evaluator: Evaluator, session, cache: _Inputs) -> None:
    """One candidate, talking with the parent: derived -> continue/skip -> built -> measure."""
    try:
        low, derivation = _stage(conn, "derive", evaluator.derive, spec)
    except _StageFailure as f:
        message = _error_text(f.cause)
        conn.send(("done", Outcome("failed", "derive", message, rule=failing_rule(str(f.cause)))))
        return
    conn.send(derived_message(low, derivation, spec))
    if conn.recv()[0] != "continue":
        return

    if spec.family is not None:  # checked at sizes the derived program's facts allow
        spec = attrs.evolve(spec, check_sizes=checkable_sizes(derivation.program, spec.sizes, evaluator.check_floor),
                            probes=probe_levels(derivation.program, spec.sizes))

    def call(stage, taken):  # the worker reports each stage as it starts
        return _stage(conn, stage.name, _method(evaluator, stage.name), *taken, spec)

    try:
        built = evaluator.pipeline.run({"low": low, "session": session}, evaluator.options(spec), "translate",
                                       "build", call)
    except _StageFailure as f:
        conn.send(("done", Outcome("failed", f.stage, _error_text(f.cause))))
        return
    kernel, strided = built["kernel"], _strided(built["plan"].program, spec.sizes)
    real, refused = at_real_sizes(low, spec, evaluator, session, call)
    try:  # the interpreter's answer before the device is asked for: checking must not hold it
        cache.expected(spec.oracle, spec.check_sizes, spec.seed)
    except Exception as exc:  # noqa: BLE001 -- reported as the check's failure
        conn.send(("done", Outcome("failed", "check", _error_text(exc))))
        return
    try:  # the timing inputs too (seconds for GEMV^T's 1 GiB matrix, once per worker): no device needed
        for sizes in spec.probes:
            cache.inputs(spec.oracle, sizes, spec.seed, timing=True)
        cache.inputs(spec.oracle, spec.sizes, spec.seed, pin=True, timing=True)
    except Exception as exc:  # noqa: BLE001 -- reported as the timing's failure
        conn.send(("done", Outcome("failed", "time", _error_text(exc))))
        return
    conn.send(("built",))
    _, best_s = conn.recv()
    outcome = _measure(conn, spec, evaluator, _Uploaded(kernel, cache.uploads), cache, best_s,
                       None if real is None else _Uploaded(real["kernel"], cache.uploads))
    conn.send(("done", attrs.evolve(outcome, at_sizes_refused=outcome.at_sizes_refused or refused, strided=strided)))


def _strided(program, sizes: Mapping[str, int]) -> float | None:
    """resources.strided_share, or None where the sizes do not evaluate the program's loops."""
    from .resources import strided_share

    try:
        return strided_share(program, sizes)
    except FunctionalError:
        return None


def at_real_sizes(low: Expr, spec: Spec, evaluator: Evaluator, session, call,
                  last: str = "build") -> tuple[dict | None, str | None]:
    """The candidate compiled at its real sizes (dpia.programs.at_sizes, or the replay of
    spec.real_derivation), what `dpia run` compiles from its derivation: (the pipeline's values from translate to `last` ("build":
    with the runtime Kernel), None), or (None, why not) where a length the sizes make zero is
    no type or a stage fails; then the size-generic kernel is timed, and `dpia run` compiles
    that one too."""
    from ..pipeline import derive
    from ..programs import at_sizes

    try:
        if spec.real_derivation is not None:
            specialised, _ = derive(spec.oracle, spec.real_derivation, evaluator.options(spec))
        else:
            specialised = at_sizes(low, spec.sizes)
    except FunctionalError as exc:
        return None, f"no program at the real sizes: {exc}"
    try:
        return evaluator.pipeline.run({"low": specialised, "session": session}, evaluator.options(spec),
                                      "translate", last, call), None
    except _StageFailure as f:
        return None, f"compiled at the real sizes, the {f.stage} stage failed: {_error_text(f.cause)}"


def _measure(conn, spec: Spec, evaluator: Evaluator, kernel, cache: _Inputs, best_s, real=None) -> Outcome:
    """Checked at small sizes and probed with the size-generic `kernel`; timed at the real
    sizes with `real` (the kernel compiled at them) once it computes there what `kernel`
    does (both on the device: no interpreter at the real sizes), else with `kernel`."""
    try:
        small = cache.inputs(spec.oracle, spec.check_sizes, spec.seed)
        got = _stage(conn, "run", evaluator.run, kernel, small, spec)
        wrong = _stage(conn, "check", lambda: evaluator.check(
            got, cache.expected(spec.oracle, spec.check_sizes, spec.seed), spec))
        if wrong:
            return Outcome("wrong", "check", wrong)
        for sizes in spec.probes if best_s is not None else ():
            probe = cache.inputs(spec.oracle, sizes, spec.seed, timing=True)
            estimate = _stage(conn, "time", evaluator.probe, kernel, probe, sizes, spec)
            if estimate > PROBE_SLACK * evaluator.slow_factor * best_s:
                return Outcome("slow", "time", f"abandoned on probe sizes {dict(sizes)}: "
                               f"about {estimate:.3g} s at the real sizes", float(estimate))
        inputs = cache.inputs(spec.oracle, spec.sizes, spec.seed, pin=True, timing=True)
        at_sizes, refused = _agrees_at_real_sizes(conn, spec, evaluator, kernel, real, inputs)
        status, seconds = _stage(conn, "time", evaluator.time, real if at_sizes else kernel, inputs, best_s, spec)
    except _StageFailure as f:
        return Outcome("failed", f.stage, _error_text(f.cause))
    return Outcome(status, None, None, float(seconds), at_sizes=at_sizes, at_sizes_refused=refused)


def _agrees_at_real_sizes(conn, spec: Spec, evaluator: Evaluator, kernel, real, inputs) -> tuple[bool, str | None]:
    """Whether `real` (the candidate compiled at the real sizes) computes there what the
    size-generic `kernel` does, both run on the device with poisoned buffers (a value one
    leaves unwritten shows as NaN, not as what the other wrote in the same memory): (True,
    None), or (False, why) -- then the size-generic kernel is timed and `dpia run` compiles
    that one.  A device compiler can get one of two equivalent kernels wrong (PoCL 3.0 did)."""
    if real is None:
        return False, None
    want = _stage(conn, "run", lambda: kernel(*inputs, poison=True))
    got = _stage(conn, "run", lambda: real(*inputs, poison=True))
    wrong = _stage(conn, "check", lambda: evaluator.check(got, want, spec))
    if wrong:
        return False, f"compiled at the real sizes it computes there not what the size-generic kernel does: {wrong}"
    return True, None

