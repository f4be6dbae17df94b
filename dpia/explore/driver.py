"""The exploration loop: from a high-level program and its input sizes to the fastest
correct kernel the rewrite rules can derive for a device.

    result = explore(program, {"N": 1 << 24}, db=TuningDB(), budget_s=600, search="bayesian")
    result.best, result.default            # Candidates (dpia.tuning): derivation text, time
    print(result.report())                 # tried / failed per stage and per rule / speed-up

The pipeline: (1) the rules generate the space (dpia.explore.stages: macro moves at every
position, mappings of the maps onto OpenCL, each slot's values from divisors), (2) the
search (dpia.explore.search) picks points, (3) each candidate is derived, translated
(whether it fits the device is decided from the imperative program: dpia.explore.resources),
emitted, built, run at small check sizes and compared with the interpreter, then timed
at the real sizes, compiled at them (dpia.programs.at_sizes: constant bounds, what `dpia
run` compiles from the derivation) where that kernel computes there what the size-generic
one does, both run on the device with poisoned buffers (else the size-generic one is timed:
params["at_sizes_refused"] says why) (median of event-timed runs; one run first, and a candidate slower than 5x the best so far is abandoned as
"slow").  Once a best exists, a candidate first runs on probe sizes (about 1/1024, then
1/32 of the work: the size variables halved while their facts allow): a probe that extrapolates to
more than PROBE_SLACK x 5x the best is abandoned then (probes under PROBE_MIN_S are not
extrapolated: launch overhead), so a kernel that would take seconds at the real sizes
(naive mm at 4096^3 on the H200: 39 s a run) costs a fraction of one run.

Confirmation (`_confirm`): a best measured once may be a quiet moment of the machine, so
the fastest kernel and the baseline are measured CONFIRM_ROUNDS more times, alternating;
kernels rank by the median of their measurements (as TuningDB.best ranks them), and where
the fastest is then another, that one is confirmed in turn (CONFIRM_ATTEMPTS at most),
within CONFIRM_SHARE of the budget past it (what is measured by then counts).
The default schedule is measured right after a preset or tuned baseline (it is not always
a point of the space, and on PoCL a sum's default beat its preset by 1.3x).

The baseline, measured first and quoted against (`speedup`), is the variant `dpia run`
would use (dpia.variants.choose_variant's order: the database's best for these sizes and
device, replayed; else the first preset that fits; else the default schedule), so an
exploration never reports something slower than what already runs (`baseline="default"`:
the default schedule).  A timing lasts about `Evaluator.max_timed_s` at most (a 4 s kernel
runs once after its first run), so a slow baseline does not eat a small budget.  The
space is built in a thread (`_SpaceBuild`) while the workers start and the baseline is
measured, which needs none of it; the search starts once both are done.  A budget that
ends first cancels the build (`Exploration.space_s` None: only the baseline was measured).

Time: the search stops at `budget_s`; only a baseline not yet measured goes on, for half
of `timeout_s` at most.  `status` receives a Status (phase, candidates compiling and
measuring, done, failed, best) from the first moment, before the space is built, and
about once a second.  Sizes whose inputs and output cannot be held on the device, or twice
on the host, are refused (InputsTooLargeError); fewer workers start when the host cannot
hold a copy for each.  The workers check at small sizes; checking a result at large sizes
in bounded memory is dpia.verify's.

Candidates are deduplicated by their printed low-level program (after deriving, before
building: no device time): a duplicate point is given its original's outcome (once the
original finishes, when it is still measured), and the search learns from it which slots
do not change the program (dpia.explore.search.inert_slots) and stops proposing points that
differ only there.  One the database has already measured (`TuningDB.seen`) is not
measured again.  Every measured candidate is
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
import os
import random
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Mapping

import attrs

from functional.derivation import Derivation
from functional.errors import FunctionalError
from functional.expr import Expr
from functional.infer import infer
from functional.interp import layout
from functional.nat import evaluate

from ..programs import canonical, known_flops, layout_leaves
from .errors import BudgetError, ExploreError, InputsTooLargeError
from .evaluate import Evaluator, Outcome, Spec, probe_levels
from .launch import LAUNCH, launch_options
from .launch import describe as describe_launch
from .search import FAILED, PENDING, SEARCHES, Search, Trial
from .space import BuildCancelled, DeviceLimits, Point, Shape, Space, check_program_sizes, check_size, with_size_facts
from .tuning import Candidate, TuningDB, kernel_key, summarised
from .workers import LOCAL_PROCESSES, _Pool, default_workers

DEFAULT_FACT_CAP = 256  # the default schedule may assume each size a multiple of up to this power of two
CHECK_WORK_CAP = 1 << 18  # the default's check sizes multiply to at most this where they can (the interpreter runs there)

def default_facts(sizes: Mapping[str, int], floor: int) -> dict[str, int]:
    """The size facts the default schedule's candidate may assume: each size's largest
    power-of-two divisor up to DEFAULT_FACT_CAP, halved (the size checked at the most first)
    while the sizes it is checked at (space.check_size) multiply to more than CHECK_WORK_CAP.
    Each fact forces a check size of at least two multiples, so a 512^3 grid with facts of
    256 was checked at 512^3: a minute in the interpreter before the first measurement (at
    64^3, 2^18 cells, Jacobi 3D takes 0.9 s there, at 128^3 7 s)."""
    facts = {name: math.gcd(size, DEFAULT_FACT_CAP) for name, size in sizes.items()}

    def checked(name: str) -> int:
        return check_size(facts[name], sizes[name], floor)

    while math.prod(checked(name) for name in sizes) > CHECK_WORK_CAP:
        shrinkable = [name for name in sizes if facts[name] > 1]
        if not shrinkable:
            break
        name = max(shrinkable, key=lambda n: (checked(n), facts[n]))
        facts[name] //= 2
    return facts


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


@attrs.frozen
class Exploration:
    """What one exploration found and how its candidates fared.

    `tried`: candidates evaluated in this run (baseline included); `failed`: those failed,
    wrong or timed out; `by_stage` / `by_rule`: where they failed; `by_family`: each skeleton's
    candidates by outcome ("duplicate": its kernel another candidate's);
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
    lost: tuple[str, ...] = ()  # candidates a dead worker took with it (not stored: a later run tries them)
    dropped: tuple[str, ...] = ()  # workers and devices the run went on without (could not start, node gone), why
    space_s: float | None = None  # seconds the space took to build (beside the baseline); None: the budget ended first
    confirmations: tuple[Candidate, ...] = ()  # the best and the baseline measured again (_confirm)
    unconfirmed: str | None = None  # why the search's best was not kept (then `best` is the fastest kernel by its median)

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
            launch = f" [{describe_launch(c.params['launch'])}]" if c.params.get("launch") else ""
            return f"{family}({choices}){launch}: {result}"

        summary = (f"exploration {self.run_id} ({self.search}, seed {self.seed}) on {self.device}: "
                   f"{self.tried} tried, {self.failed} failed, {self.duplicates} duplicates, {self.reused} reused, "
                   f"{self.abandoned} abandoned in {self.elapsed_s:.1f} s")
        lines = [summary, f"  best:    {timed(self.best)}",
                 f"  baseline ({self.baseline} variant): {timed(self.default)}"]
        if self.speedup is not None:
            lines.append(f"  speed-up over the {self.baseline} variant: {self.speedup:.2f}x")
        if self.confirmations:
            lines.append(f"  measured again: {len(self.confirmations)} time(s), best and baseline alternating; "
                         + (f"the search's best was not kept: {self.unconfirmed}" if self.unconfirmed else
                            "times are medians of every measurement"))
        if self.space_s is None:
            lines.append(f"  the budget ended before the search space was built: only the baseline was measured "
                         f"(a larger budget explores)")
        for title, counts in (("failures by stage", self.by_stage), ("failures by rule", self.by_rule),
                              ("infeasible points", self.infeasible)):
            if counts:
                lines.append(f"  {title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if self.lost:
            lines.append(f"  lost {len(self.lost)} in-flight candidate(s) to dead workers: " + "; ".join(self.lost))
        if self.dropped:
            lines.append(f"  went on without {len(self.dropped)} worker(s): " + "; ".join(self.dropped))
        for family, statuses in sorted(self.by_family.items()):
            lines.append(f"  {family}: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
        if stages := self.stage_seconds():
            lines.append("  seconds per candidate: " + ", ".join(f"{k} {v:.3f}" for k, v in stages.items()))
        return "\n".join(lines)


# ------------------------------------------------------------------------------ one run


class _Run:
    """The bookkeeping of one exploration (a local object: no state outlives `explore`)."""

    def __init__(self, program: Expr, sizes: Mapping[str, int], program_text: str, device: str, db: TuningDB | None,
                 run_id: str, search: Search, seed: int, max_candidates: int | None, progress, evaluator: Evaluator):
        self.program, self.sizes = program, dict(sizes)  # typed; the baseline needs no more
        self.space: Space | None = None  # built beside the baseline (space_built)
        self.space_s: float | None = None
        self.program_text, self.device, self.db = program_text, device, db
        self.infeasible: dict[str, int] = {}  # stage 3's (once built) and the devices' (resources)
        self._preset_point: tuple[int, Point] | None = None  # the baseline's point, once the space has it
        self.run_id, self.search, self.seed = run_id, search, seed
        self.max_candidates, self.progress, self.evaluator = max_candidates, progress, evaluator
        self.rng = random.Random(seed)
        self.trials: dict[int, Trial] = {}
        self.recorded: dict[int, Candidate] = {}
        self.low_texts: dict[tuple, int] = {}  # (printed low-level program, applied shape) -> its first candidate
        self.waiting: dict[int, list[int]] = collections.defaultdict(list)  # first candidate -> its duplicates' trials
        self.by_stage, self.by_rule = collections.Counter(), collections.Counter()
        self.by_family: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.duplicates = self.reused = self.abandoned = 0
        self.lost: list[str] = []
        self.dropped: tuple[str, ...] = ()  # the pool's, once it is done
        self.best: Candidate | None = None
        self.default: Candidate | None = None
        self.baseline_done = False
        self.baseline_kind = "default"
        self._next_index = 0
        self.dispatched_at: dict[int, float] = {}  # unfinished candidates' dispatch times, by index
        self.durations: list[float] = []  # dispatch to result, of each candidate finished so far
        self.measured: dict[tuple, list[Candidate]] = {}  # kernel (TuningDB.kernel_key) -> its measurements
        self.spec_of: dict[tuple, Spec] = {}  # kernel -> the spec that prepared it (a confirmation re-measures it)
        self.confirming: dict[int, tuple] = {}  # a confirmation's index -> the kernel it re-measures
        self.confirmations: list[Candidate] = []  # the re-measurements of the best and the baseline (_confirm)
        self.unconfirmed: str | None = None  # why the search's best was not kept, where it was not

    def space_built(self, space: Space, seconds: float) -> None:
        """The search may start: the space, built while the baseline was measured."""
        self.space, self.space_s = space, seconds
        for kind, count in space.infeasible.items():
            self.infeasible[kind] = self.infeasible.get(kind, 0) + count
        self._preset_trial()

    def _preset_trial(self) -> None:
        """The search sees the preset baseline's measurement as its point's: an incumbent
        whose launch shapes it tries (search.Model.exploit), a point it does not measure
        again (once both the space and the preset are known, in either order)."""
        if self._preset_point is None or self.space is None:
            return
        index, point = self._preset_point
        if point in self.space.feasible_points:
            self.trials[index] = Trial(point)
            if index in self.recorded:
                self._finish_trial(index, self.recorded[index])

    # -- specs ----------------------------------------------------------------------------

    def _spec(self, point: Point | None, baseline: bool = False) -> Spec:
        index, self._next_index = self._next_index, self._next_index + 1
        space = self.space
        if point is None:  # the default schedule: the facts the real sizes satisfy, capped
            facts = default_facts(self.sizes, self.evaluator.check_floor)
            program = with_size_facts(self.program, facts)
            check = {name: check_size(facts[name], real, self.evaluator.check_floor) for name, real in self.sizes.items()}
            family, params = None, {}
        else:
            program, family, params = space.program_for(point), space.family(point.family), point.as_dict()
            check = space.check_sizes(point, self.evaluator.check_floor)
            self.trials[index] = Trial(point)
            stronger = space.program_for(point, product=True)
            fallback = stronger if space.facts(point, True) != space.facts(point) else None
            return Spec(index, program, family, params, check, dict(space.sizes), self.seed, baseline,
                        probe_levels(program, space.sizes), space.program, fallback=fallback,
                        launch=launch_options(params))
        return Spec(index, program, family, params, check, dict(self.sizes), self.seed, baseline,
                    probe_levels(program, self.sizes), self.program, real_derivation=self._default_at_sizes())

    def _default_at_sizes(self) -> str | None:
        """The derivation of the default variant `dpia run` compiles at these sizes
        (dpia.variants.default_variant: default_schedule with the sizes fixed, which may split
        reductions by their divisors), timed for the default schedule's candidate; None
        where it does not derive (the size-generic default at the sizes is timed then)."""
        from ..variants import default_variant
        from .space import lowering_target

        try:
            target = lowering_target(self.evaluator.limits)
            return default_variant(self.program, dict(self.sizes), target=target)[1].derivation
        except FunctionalError:
            return None

    def baseline_spec(self, baseline: str, limits: DeviceLimits) -> Spec:
        """The candidate measured first, the one speed-ups are quoted against.  "run": the
        variant `dpia run` would use (dpia.variants.choose_variant: the database's best for
        these sizes and device, else the first preset that fits, else the default
        schedule), so an exploration never reports something slower than what runs
        already; "default": the default schedule."""
        if baseline == "run":
            stored = self._stored_best()
            if stored is not None:  # with the launch it was measured with
                return self._replay(stored.derivation, "tuned", stored.params.get("launch", {}))
            preset = self._preset(limits)
            if preset is not None:
                return preset
        return attrs.evolve(self._spec(None, baseline=True), variant="default")

    def default_schedule_spec(self) -> Spec | None:
        """The default schedule as the first candidate after a preset or tuned baseline (the
        variant dpia run falls back on, not always a point of the space): on PoCL a sum's
        default schedule ran 0.092 ms against its preset's 0.117 ms and the space's best
        0.136 ms, so without it the exploration kept a kernel slower than the default."""
        if self.max_candidates is not None and self.max_candidates < 2:
            return None
        return self._spec(None)

    def _stored_best(self) -> Candidate | None:
        from .tuning import TuningError

        if self.db is None:
            return None
        try:
            return self.db.best(self.program_text, self.sizes, self.device)
        except TuningError:  # dpia run would use the default then too
            return None

    def _preset(self, limits: DeviceLimits) -> Spec | None:
        """The preset `dpia run` would use, replayed by the worker (derived here)."""
        from .presets import preset_for

        found = preset_for(self.program, self.sizes, limits)
        if found is None:
            return None
        spec = self._replay(found[2].to_text(), "preset", found[0].launch())  # as dpia run launches it
        if found[0].point is not None:
            self._preset_point = (spec.index, found[0].point)
            self._preset_trial()
        return spec

    def _replay(self, text: str, kind: str, launch: Mapping = {}) -> Spec:  # noqa: B006 -- read only
        """A baseline that replays a derivation, checked at sizes its program's facts allow."""
        from ..programs import size_vars

        index, self._next_index = self._next_index, self._next_index + 1
        program = Derivation.from_text(text).program
        facts = {v.name: v.multiple_of for v in size_vars(program)}
        floor = self.evaluator.check_floor
        check = {name: check_size(facts[name], real, floor) if name in facts else real
                 for name, real in self.sizes.items()}
        return Spec(index, program, None, {}, check, dict(self.sizes), self.seed, True,
                    probe_levels(program, self.sizes), self.program, text, kind, launch=launch)

    def propose(self, count: int) -> list[Spec]:
        history = [self.trials[k] for k in sorted(self.trials)]
        return [self._spec(p) for p in self.search.propose(self.space, history, self.rng, count)]

    # -- budgets --------------------------------------------------------------------------

    @property
    def tried(self) -> int:
        return len(self.recorded)

    def may_dispatch(self, in_flight: int) -> bool:
        return self.max_candidates is None or self.tried + in_flight < self.max_candidates

    def on_dispatched(self, spec: Spec) -> None:
        if not spec.confirms:
            self.dispatched_at[spec.index] = time.monotonic()

    def _finished(self, spec: Spec) -> None:
        started = self.dispatched_at.pop(spec.index, None)
        if started is not None:
            self.durations.append(time.monotonic() - started)

    def only_stragglers_left(self) -> bool:
        """Whether every unfinished candidate has run STRAGGLER_FACTOR times as long as the
        median finished one, and at least STRAGGLER_MIN_S: a synchronous search proposes its
        next batch beside them rather than idling every other worker until they end or time
        out (a hung Hotspot candidate held a 130 s H200 exploration for 110 s)."""
        if len(self.durations) < STRAGGLER_SAMPLES or not self.dispatched_at:
            return False
        bound = max(STRAGGLER_MIN_S, STRAGGLER_FACTOR * statistics.median(self.durations))
        now = time.monotonic()
        return all(now - started > bound for started in self.dispatched_at.values())

    # -- events from the pool -------------------------------------------------------------

    def on_derived(self, spec: Spec, low_text: str, derivation: str, shape: tuple | None = None) -> bool:
        """Measure this candidate? Not when another has the same low-level program and
        launches its kernels alike (`shape`: the local size its launch gives the kernels
        without work-groups, dpia.explore.launch.applied_shape), nor when the database
        measured its derivation with its launch already."""
        if spec.confirms:  # measured again on purpose
            return True
        key = (low_text, None if shape is None else tuple(shape))
        if key in self.low_texts:
            original = self.low_texts[key]
            first = self.recorded.get(original)  # None while it is still measured
            same_as = self.trials[original].point if original in self.trials else None
            if shape is not None and same_as is not None and \
                    same_as.as_dict().get(LAUNCH) != spec.params.get(LAUNCH):
                # two shapes folded alike for these kernels: the slot is not inert (others
                # differ here), so the search learns nothing of it from this duplicate
                same_as = None
            self.duplicates += 1
            self.by_family[spec.family_name]["duplicate"] += 1
            self._finish_trial(spec.index, first or "duplicate", same_as)
            if first is None:  # given the original's outcome when it comes
                self.waiting[original].append(spec.index)
            if spec.baseline:  # the default schedule derived what a point already measured
                self.default, self.baseline_done = first, True
            return False
        self.low_texts[key] = spec.index
        known = self.db.seen(self.program_text, spec.sizes, self.device, derivation,
                             launch=spec.launch) if self.db else None
        if known is not None and known.stage != "derive":
            self.reused += 1
            self._finish_trial(spec.index, known)
            self._consider(known, spec)
            if spec.baseline:
                self.default, self.baseline_done = known, True
            self._report(known)
            return False
        return True

    def on_done(self, spec: Spec, outcome: Outcome, derivation: str | None) -> None:
        if spec.confirms:
            self._confirmed(spec, outcome, derivation)
            return
        self._finished(spec)
        candidate = self._candidate(spec, outcome, derivation)
        if self.db is not None:
            self.db.add(candidate)
        self.recorded[spec.index] = candidate
        self.by_family[spec.family_name][candidate.status] += 1
        if candidate.status in FAILED:
            self.by_stage[candidate.stage or "?"] += 1
            if outcome.stage == "derive":
                self.by_rule[outcome.rule or spec.family_name] += 1
            if outcome.stage == "resources":  # what the device cannot run, by kind ("local memory", ...)
                kind = (outcome.error or "?").removeprefix("DeviceFitError: ").split(":")[0]
                self.infeasible[kind] = self.infeasible.get(kind, 0) + 1
        self._finish_trial(spec.index, candidate)
        for index in self.waiting.pop(spec.index, ()):  # the same kernel: the same measurement
            self._finish_trial(index, candidate, self.trials[index].same_as)
        self._consider(candidate, spec)
        if spec.baseline:
            self.default, self.baseline_done = candidate, True
        self._report(candidate)

    def on_lost(self, spec: Spec, reason: str) -> None:
        """A candidate whose worker died (an executor on several hosts): not stored, so a
        later run measures it; the search sees it finished ("lost": it teaches nothing).
        A lost confirmation leaves its candidate measured fewer times."""
        if spec.confirms:
            return
        self.lost.append(f"{spec.family_name}({', '.join(f'{k}={v}' for k, v in sorted(spec.params.items()))}): "
                         f"{reason}")
        self._finish_trial(spec.index, "lost")
        for index in self.waiting.pop(spec.index, ()):  # duplicates waiting for it: lost with it
            self._finish_trial(index, "lost", self.trials[index].same_as)
        if spec.baseline:  # nothing to quote against: the search goes on without it
            self.baseline_done = True

    def abandon(self, count: int) -> None:
        self.abandoned += count
        self.baseline_done = True

    # -- confirming the best ---------------------------------------------------------------

    def ranking(self) -> list[Candidate]:
        """This run's kernels (TuningDB.kernel_key) fastest first, each timed as the median of
        its measurements (the search's and the confirmation's; params["measurements"] where
        several), as TuningDB.best ranks them; a kernel that once failed when measured again
        is not ranked (it checked once and not again: not trusted)."""
        ranked = [summarised(group[0], group) for group in self.measured.values()
                  if all(c.status == "ok" for c in group)]
        return sorted(ranked, key=lambda c: c.time_s)

    def confirmation_specs(self) -> list[Spec]:
        """The fastest kernel and the baseline measured again, CONFIRM_ROUNDS times each, in
        the order baseline, best, best, baseline, ... (a drift in the machine's speed, as
        another process starts or stops, weighs on both alike); none where the fastest is the
        baseline's kernel, was measured so already, or was not prepared in this run."""
        ranked = self.ranking()
        if not ranked or self.default is None or self.default.status != "ok":
            return []
        top, base = kernel_key(ranked[0]), kernel_key(self.default)
        if top == base or len(self.measured[top]) > CONFIRM_ROUNDS or top not in self.spec_of or base not in self.spec_of:
            return []
        out = []
        for role in [r for i in range(CONFIRM_ROUNDS) for r in (("baseline", "best"), ("best", "baseline"))[i % 2]]:
            index, self._next_index = self._next_index, self._next_index + 1
            key = top if role == "best" else base
            out.append(attrs.evolve(self.spec_of[key], index=index, confirms=role))
            self.confirming[index] = key
        return out

    def _confirmed(self, spec: Spec, outcome: Outcome, derivation: str | None) -> None:
        key = self.confirming.pop(spec.index)
        candidate = self._candidate(spec, outcome, derivation)
        candidate = attrs.evolve(candidate, params=dict(candidate.params, confirms=spec.confirms,
                                                        confirms_index=self.measured[key][0].params.get("index")))
        if self.db is not None:  # the database ranks a kernel by its median (TuningDB.best)
            self.db.add(candidate)
        self.confirmations.append(candidate)
        self.measured[key].append(candidate)

    def settle(self) -> None:
        """After the confirmation: the best is the fastest kernel by its median, the baseline
        timed by its median too; `unconfirmed` says why the search's best was not kept."""
        if not self.confirmations:
            return
        searched, ranked = self.best, self.ranking()
        if self.default is not None and kernel_key(self.default) in self.measured:
            group = self.measured[kernel_key(self.default)]
            self.default = summarised(self.default, [c for c in group if c.status == "ok"])
        self.best = ranked[0] if ranked else None
        if searched is not None and (self.best is None or kernel_key(self.best) != kernel_key(searched)):
            group = self.measured[kernel_key(searched)]
            broken = [c for c in group if c.status != "ok"]
            self.unconfirmed = (f"measured again, it gave {broken[0].status} at {broken[0].stage}: {broken[0].error}"
                                if broken else
                                f"measured again, its median {summarised(searched, group).time_s * 1e3:.4g} ms is "
                                f"not below {'none' if self.best is None else f'{self.best.time_s * 1e3:.4g} ms'}")

    # -- helpers --------------------------------------------------------------------------

    def _candidate(self, spec: Spec, outcome: Outcome, derivation: str | None) -> Candidate:
        params = {"family": spec.family_name, "choices": dict(spec.params), "index": spec.index,
                  "baseline": spec.baseline, "check_sizes": dict(spec.check_sizes), "search": self.search.name,
                  "seed": self.seed}
        if spec.variant:
            params["variant"] = spec.variant
        if spec.launch:  # replayed with the derivation (dpia.variants, dpia run and show)
            params["launch"] = _json_launch(spec.launch)
        if outcome.rule:
            params["rule"] = outcome.rule
        if outcome.stage_s:
            params["stage_s"] = dict(outcome.stage_s)
        if outcome.where:
            params["where"] = outcome.where
        if outcome.at_sizes:  # dpia run compiles it at the sizes too (dpia.variants)
            params["at_sizes"] = True
        if outcome.at_sizes_refused:
            params["at_sizes_refused"] = outcome.at_sizes_refused
        if outcome.strided is not None:
            params["strided"] = round(outcome.strided, 4)
        if outcome.at_sizes and spec.real_derivation is not None:  # the one timed: what dpia run compiles
            derivation = spec.real_derivation
        text = derivation or Derivation(spec.program, ()).to_text()  # failed before a derivation existed
        return Candidate(self.program_text, dict(spec.sizes), self.device, text, outcome.status,
                         time_s=outcome.time_s, stage=outcome.stage, error=outcome.error, params=params,
                         run_id=self.run_id)

    def _finish_trial(self, index: int, result: Candidate | str, same_as: Point | None = None) -> None:
        """The search's view of a finished point: its candidate's status and time, or a
        status alone (a duplicate of a candidate still being measured); `same_as`: the point
        whose low-level program it had."""
        self.dispatched_at.pop(index, None)  # no longer in flight (a measured one's duration is taken before)
        if index in self.trials:
            status, seconds = (result, None) if isinstance(result, str) else (result.status, result.time_s)
            strided = None if isinstance(result, str) else (result.params or {}).get("strided")
            self.trials[index] = Trial(self.trials[index].point, status, seconds if status in ("ok", "slow") else None,
                                       same_as, strided)

    def _consider(self, c: Candidate, spec: Spec) -> None:
        if c.status == "ok":
            key = kernel_key(c)
            self.measured.setdefault(key, []).append(c)
            self.spec_of.setdefault(key, spec)
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
            self.program_text, dict(self.sizes), self.device, self.run_id, self.search.name, self.seed,
            self.best, self.default, self.tried, failed, dict(self.by_stage), dict(self.by_rule),
            {k: dict(v) for k, v in self.by_family.items()}, dict(self.infeasible), self.duplicates,
            self.reused, self.abandoned, elapsed_s, tuple(self.recorded[k] for k in sorted(self.recorded)),
            self.baseline_kind, tuple(self.lost), self.dropped, self.space_s, tuple(self.confirmations),
            self.unconfirmed)

    def failed_count(self) -> int:
        return sum(c.status in FAILED for c in self.recorded.values())


# ------------------------------------------------------------------------------ explore


def _json_launch(launch: Mapping) -> dict:
    """Launch options as the tuning database stores them (tuples as lists, as JSON reads them back)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in launch.items()}


def _check_budgets(budget_s, max_candidates) -> None:
    if budget_s is not None and not (isinstance(budget_s, (int, float)) and budget_s > 0):
        raise BudgetError(f"the time budget must be a positive number of seconds, got {budget_s!r}")
    if max_candidates is not None and (isinstance(max_candidates, bool) or not isinstance(max_candidates, int)
                                       or max_candidates <= 0):
        raise BudgetError(f"the candidate budget must be a positive integer, got {max_candidates!r}")


def _open_db(db):
    if db is None or isinstance(db, TuningDB):
        return db, False
    return TuningDB(db), True


STRAGGLER_FACTOR = 5.0  # a candidate running this many median candidate times is a straggler ...
STRAGGLER_MIN_S = 15.0  # ... once it has run this long (short candidates' noise is not stragglers)
STRAGGLER_SAMPLES = 4  # finished candidates needed for a median
MAX_CANDIDATE_S = 120.0  # a candidate's compile, or its measurement, is abandoned after this at most
MIN_CANDIDATE_S = 60.0
CONFIRM_ROUNDS = 2  # times the best and the baseline are measured again, alternating, before the best is kept
CONFIRM_ATTEMPTS = 3  # kernels confirmed at most, each the fastest by its median once the previous was not
CONFIRM_SHARE = 0.25  # past the budget, the confirmation takes this share of it at most (and half a timeout)


def candidate_timeout(budget_s: float | None) -> float:
    """Seconds a candidate may compile, and then measure, before it is abandoned: a quarter
    of the budget, between MIN_CANDIDATE_S (a baseline, which goes on for half of it past a short
    budget, must still finish under load) and MAX_CANDIDATE_S.  A synchronous search waits
    for the whole batch, so one candidate that hangs stalls every worker until it is killed:
    on the H200 a Hotspot candidate did for the last 110 s of a 130 s budget (64 tried,
    against 666 for Jacobi 2D in the same call)."""
    if budget_s is None:
        return MAX_CANDIDATE_S
    return min(MAX_CANDIDATE_S, max(MIN_CANDIDATE_S, budget_s / 4))


def explore(program: Expr, sizes: Mapping[str, int], *, device=None, db=None, budget_s: float | None = None,
            max_candidates: int | None = None, search: str = "bayesian", seed: int = 0, workers: int | None = None,
            progress: Callable[[Candidate], None] | None = None, run_id: str | None = None,
            skeletons=None, evaluator: Evaluator | None = None, timeout_s: float | None = None,
            baseline: str = "run", status: Callable[[Status], None] | None = None, executor=None) -> Exploration:
    """Explore lowerings of `program` at `sizes` on `device` (see the module docstring).

    `db`: a TuningDB, a path, or None (nothing stored).  `budget_s` / `max_candidates`: stop
    after this many seconds / evaluated candidates (None: until the space is exhausted).
    `search`: a name in dpia.search.SEARCHES.  `skeletons`: the skeletons to draw from
    (default: the space the rules generate, dpia.explore.stages.generate_skeletons).  `timeout_s`: per candidate, for compiling
    and for measuring each (default `candidate_timeout(budget_s)`).  `baseline`: the candidate measured first and quoted against,
    "run" (what `dpia run` would use) or "default" (the default schedule).  `progress` is
    called with each finished candidate, `status` with a Status from the start and about
    once a second.  `executor`: where candidates are prepared and measured, None for this
    host's worker processes (dpia.explore.workers), a dpia.explore.cluster.Cluster for Ray;
    its `identity(device)` gives the device's key and limits (a cluster's: as a node that
    has the device reports them, so this host needs none).

    Time: the search stops at `budget_s`; a baseline still unmeasured then goes on for at
    most half of `timeout_s` more (without it nothing could be quoted), and the best's
    confirmation at most a quarter of the budget more, within the same bound: explore returns
    within budget_s + timeout_s / 2 plus stopping the workers.  Sizes whose inputs and
    output cannot be held are refused (InputsTooLargeError) before anything starts; fewer
    workers start when the host cannot hold a copy of them for each."""
    _check_budgets(budget_s, max_candidates)
    timeout_s = candidate_timeout(budget_s) if timeout_s is None else timeout_s
    if search not in SEARCHES:
        raise ExploreError(f"unknown search {search!r}; known: {', '.join(SEARCHES)}")
    if baseline not in BASELINES:
        raise ExploreError(f"unknown baseline {baseline!r}; known: {', '.join(BASELINES)}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ExploreError(f"workers must be a positive integer, got {workers!r}")
    started = time.monotonic()
    tell = _Teller(status, started)
    tell("building the search space")
    from codegen_opencl.runtime import identity_key

    executor = executor or LOCAL_PROCESSES
    identity = executor.identity(device)  # reported where the device is: this host, or a node of the cluster
    key, limits = identity_key(identity), DeviceLimits.of_identity(identity)
    typed = program if program.t is not None else infer(program)
    host = host_memory_bytes()
    problem = memory_problem(typed, sizes, identity.get("global_mem_bytes"), host)
    if problem is not None:
        raise InputsTooLargeError(problem)
    workers = default_workers("CPU" in limits.device_type) if workers is None else workers
    if host is not None:  # each worker holds the real sizes' inputs and output
        workers = max(1, min(workers, host // max(1, program_bytes(typed, sizes)) - 1))
    check_program_sizes(typed, sizes)  # refused before anything starts
    building = _SpaceBuild(lambda cancelled: Space.build(typed, sizes, limits, skeletons, cancelled=cancelled))
    evaluator = evaluator or Evaluator()
    if evaluator.limits is None:  # candidates the device cannot run well are not built
        evaluator = attrs.evolve(evaluator, limits=limits)
    tuning_db, owned = None, False
    try:
        tuning_db, owned = _open_db(db)
        run = _Run(typed, sizes, canonical(typed), key, tuning_db, run_id or uuid.uuid4().hex[:12], SEARCHES[search],
                   seed, max_candidates, progress, evaluator)
        tell(f"starting {workers} worker process(es)")
        with executor.open(workers, key, evaluator, timeout_s, "CPU" in limits.device_type,
                           run.on_derived, run.on_done, run.on_lost, limits=limits) as pool:
            tell("choosing the baseline", run, pool)
            first = run.baseline_spec(baseline, limits)
            run.baseline_kind = first.variant or "default"
            deadline = None if budget_s is None else started + budget_s
            second = run.default_schedule_spec() if run.baseline_kind != "default" else None
            _loop(run, pool, [first] + ([second] if second else []), deadline, timeout_s / 2, tell, building)
            _confirm(run, pool, None if deadline is None else deadline + min(timeout_s / 2, CONFIRM_SHARE * budget_s),
                     tell)
            run.dropped = tuple(pool.dropped)
            tell("stopping", run, pool)
    finally:
        building.cancel()
        if owned:
            tuning_db.close()
    return run.result(time.monotonic() - started)


class _SpaceBuild:
    """The space built in a thread of this process while the workers start and the baseline
    is derived, compiled and measured, none of which needs it (mm's space takes tens of
    seconds on a small CPU: built first, it left a short budget no time for the baseline).
    The pool is served meanwhile: the build yields the interpreter to it."""

    def __init__(self, build: Callable[[Callable[[], bool]], Space]):
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._space: Space | None = None
        self._error: BaseException | None = None
        self.seconds: float | None = None
        self._thread = threading.Thread(target=self._run, args=(build,), name="space build", daemon=True)
        self._thread.start()

    def _run(self, build) -> None:
        try:
            self._space = build(self._stop.is_set)
            self.seconds = time.monotonic() - self._started
        except BuildCancelled:
            pass
        except BaseException as exc:  # noqa: BLE001 -- raised again where the space is asked for
            self._error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self) -> Space:
        """The space (the build's error raised here, in the exploring thread)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        if self._space is None:
            raise ExploreError("the search space's build was cancelled")
        return self._space

    def cancel(self) -> None:
        """Stop a build still running (its next check between variants) and wait for it:
        nothing of an exploration outlives it."""
        self._stop.set()
        self._thread.join()


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


def _loop(run: _Run, pool: _Pool, first: list[Spec], deadline: float | None, overtime_s: float, tell,
          building: _SpaceBuild) -> None:
    """Dispatch `first` (the baseline, and the default schedule where that is not the
    baseline), then, once `building` has built the space, the search's points, until a
    budget or the space ends.  At the deadline every candidate but an unfinished baseline is
    abandoned; the baseline has `overtime_s` more."""
    pending = collections.deque(first)
    exhausted = False
    while True:
        if run.space is None and building.done():
            run.space_built(building.result(), building.seconds)
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
            spec = pending.popleft()
            pool.dispatch(spec)
            run.on_dispatched(spec)
        overtime = deadline is not None and now >= deadline
        searching = run.baseline_done and run.space is not None
        if not overtime and not pending and not exhausted and searching and _wants_more(run, pool):
            batch = run.propose(run.search.batch(pool.size))
            exhausted = not batch
            pending.extend(batch)
            if batch:
                continue
        tell("finishing the baseline" if overtime else "exploring" if searching else
             "building the search space" if run.baseline_done else
             "measuring the baseline" + ("" if run.space is not None else " while the search space is built"), run, pool)
        nothing_left = not run.may_dispatch(0) or (exhausted and not pending)
        if nothing_left and pool.busy() == 0:
            return
        limit = deadline + (overtime_s if overtime else 0.0) if deadline is not None else None
        pool.wait(0.2 if limit is None else max(0.0, min(0.2, limit - now)))


def _confirm(run: _Run, pool: _Pool, limit: float | None, tell) -> None:
    """Measure the fastest kernel and the baseline again, alternating
    (_Run.confirmation_specs), until the fastest by its median is one measured so (at most
    CONFIRM_ATTEMPTS kernels) or `limit` (the baseline's overtime: what it left); then the
    best is the fastest by its median (_Run.settle).  A best measured once can be a quiet
    moment of the machine: under load a sum exploration's best re-timed 27 % slower than
    the default."""
    for _ in range(CONFIRM_ATTEMPTS):
        pending = collections.deque(run.confirmation_specs())
        if not pending:
            break
        while pending or pool.busy():
            now = time.monotonic()
            if limit is not None and now >= limit:
                pool.abandon()
                run.settle()
                return
            while pending and pool.can_dispatch():
                spec = pending.popleft()
                pool.dispatch(spec)
                run.on_dispatched(spec)
            tell("confirming the best", run, pool)
            pool.wait(0.2 if limit is None else max(0.0, min(0.2, limit - now)))
    run.settle()


def _wants_more(run: _Run, pool: _Pool) -> bool:
    """Ask the search for points when they can be dispatched; a synchronous search only
    once its previous batch has finished, but for stragglers (`_Run.only_stragglers_left`):
    a default schedule still measuring (naive mm at 4096^3: 39 s a run on the H200) does
    not hold it."""
    if not run.may_dispatch(pool.busy()):
        return False
    if run.search.synchronous:  # the baseline and the default schedule are not the search's batch
        batch_done = not run.pending_trials() and not pool.busy_with(lambda s: s.family is not None)
        return pool.can_dispatch() and (batch_done or run.only_stragglers_left())
    return pool.can_dispatch()


__all__ = ["BASELINES", "Exploration", "Status", "candidate_timeout", "explore", "host_memory_bytes", "memory_problem", "program_bytes",
           "throughput_work", "write_exploration_plots"]
