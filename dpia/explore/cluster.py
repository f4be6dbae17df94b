"""Exploration on a Ray cluster: candidates prepared on CPU workers, measured by one actor
per OpenCL device, the search and the tuning database in the driver.

    with Cluster.connect("local", num_cpus=3) as cluster:     # or "auto", or a cluster's address
        result = explore(program, {"N": 1 << 20}, executor=cluster, workers=2, budget_s=60)

The split is the local explorer's (dpia.explore.workers), across processes and hosts:

- a preparation worker (`_Preparer`, a Ray actor taking one CPU) derives a candidate, lets
  the driver decide whether to go on (a duplicate or a known derivation is not built), then
  translates and emits it, and builds it where its node has the device (that checks the
  source compiles; the program's binary goes to the measuring actor with the source);
- a measuring actor (`_Measurer`, no CPU reserved) owns one OpenCL device, found on each node
  by the device key the driver chose (`Cluster.identity`: the key and limits a node reports,
  so the driver's host needs no device): it builds (loading the worker's device binary where
  the worker built for a device of the same key, else compiling the source), runs at the
  check sizes, checks against the interpreter, probes and times
  (dpia.explore.evaluate._measure), one candidate at a time, so timings stay clean; on a CPU
  device no preparation runs while one measures (as the local pool does);
- `RayPool` is the pool the driver's loop talks to (workers.PoolState, as the local pool):
  results stream back to the driver, which writes each to the database at once.

Faults: a preparation worker or measuring actor that dies (killed) loses its in-flight
candidate only: it is reported to the driver as lost (`on_lost`: not stored, so a later run
tries it again; the exploration says what it lost) and the worker is replaced (a measuring
actor on its node).  One that cannot start (its process dies or its constructor raises while
starting, its device cannot be opened, it is not ready within STARTUP_TIMEOUT_S) is dropped
with a ClusterWarning and listed in the exploration's `dropped`; the run goes on with the
others, and stops with a ClusterError naming each device, node and cause once no
preparation worker or no measuring actor is left.  When its node is gone, every actor of that
node goes with it: each loses the candidate it held, the node's measuring actors are dropped,
its preparation workers start again on other nodes (a ClusterWarning).  One that hangs past
`timeout_s` is killed and replaced, its candidate a "timeout" as in the local pool.  Ctrl-C
stops the run: everything measured is already in the database, and the actors are killed.

Actors are kept across the explorations of one `Cluster` (starting one costs seconds: a
process importing the compiler and opening its device): a run that ends normally hands its
idle actors back to the cluster, the next run takes those made for it (the same device key,
evaluator and settings), asks each whether it is ready as a new one is asked, and kills the
rest (they would hold CPUs the run may need).  One that died while kept is started again.  A
run that ends with an exception (Ctrl-C, a ClusterError) kills its actors and the kept ones;
`Cluster.close` kills the kept ones.

Ray is optional (`pip install dpia[ray]`); this module imports it when a cluster is opened.
"""

from __future__ import annotations

import collections
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping

import attrs

from .errors import ExploreError
from .evaluate import (Evaluator, Outcome, Spec, _error_text, _Inputs, _measure, _method, _stage, _StageFailure,
                       _Uploaded, at_real_sizes, checkable_sizes, derived_message, failing_rule, probe_levels)
from .space import DeviceLimits
from .workers import EXCLUSIVE_WAIT_S, STARTUP_TIMEOUT_S, PoolState, _find_device

# Environment variables the driver hands to its actors: the kernel recording the test suite
# replays under Oclgrind (tests/oclgrind.py) and the default device.
FORWARDED_ENV = ("DPIA_RECORD_KERNELS", "DPIA_RECORD_KERNELS_LIMIT", "DPIA_DEVICE")
BUILT_FROM_BINARY = " (from the worker's binary)"  # in a candidate's `where`: its measuring actor did not compile it
STAGE_QUERY_S = 2.0  # how long the driver asks a hung actor which stage it is in before killing it


class ClusterError(ExploreError):
    """Ray is not installed, the cluster cannot be reached, or no node has the device."""


class ClusterWarning(UserWarning):
    """A device of the cluster dropped from an exploration (its actor could not start)."""


def _ray():
    try:
        import ray
    except ImportError:
        raise ClusterError("exploring on a cluster needs Ray: pip install 'dpia[ray]'") from None
    return ray


# ------------------------------------------------------------------------------ the actors


class _Clock:
    """Stands in for the local workers' pipe (evaluate._stage reports each stage to it):
    remembers the stage under way, for a timeout's report, and the seconds spent in each."""

    def __init__(self):
        self.stage: str | None = None
        self._marks: list[tuple[str, float]] = []

    def send(self, message) -> None:
        if message[0] == "stage":
            self.stage = message[1]
            self._marks.append((message[1], time.monotonic()))

    def seconds(self) -> dict[str, float]:
        out: dict[str, float] = {}
        ends = [t for _, t in self._marks[1:]] + [time.monotonic()]
        for (stage, start), end in zip(self._marks, ends):
            out[stage] = round(out.get(stage, 0.0) + end - start, 4)
        return out


@attrs.frozen
class Prepared:
    """A candidate a preparation worker made ready to measure: its spec (check and probe
    sizes from the derived program's facts), its OpenCL source, seconds per stage so far,
    and the program's device binary where the worker built it (`binary_key`: the device key
    it was built for; a measuring actor of that key loads it instead of compiling)."""

    spec: Spec
    source: object  # dpia.pipeline.Emitted
    stage_s: Mapping[str, float]
    binary: bytes | None = None
    binary_key: str | None = None
    # the program compiled at the real sizes, the one timed (evaluate.at_real_sizes; None:
    # the size-generic one is), and its binary where the worker built it
    real_source: object | None = None
    real_binary: bytes | None = None
    real_refused: str | None = None  # why there is no real_source


def _build_options(evaluator: Evaluator, spec: Spec):
    """The OpenCL build options the build stage uses for `spec` (the key of a built program)."""
    return evaluator.options(spec).launch.get("options")


def _set_env(env: Mapping[str, str]) -> None:
    """This process's FORWARDED_ENV as the driver's now (a kept actor records the kernels of
    each run where that run's driver says)."""
    for name in FORWARDED_ENV:
        if name in env:
            os.environ[name] = env[name]
        else:
            os.environ.pop(name, None)


def _identity() -> dict:
    """Where an actor runs: its process, its host, its Ray node (the driver drops every
    actor of a node that is gone)."""
    import socket

    import ray

    return {"pid": os.getpid(), "where": f"{socket.gethostname()} pid {os.getpid()}",
            "node": ray.get_runtime_context().get_node_id()}


class _Preparer:
    """A preparation worker: derive, then (told to go on) translate .. emit and build."""

    def __init__(self, key: str, evaluator: Evaluator, env: Mapping[str, str], ship_binaries: bool = True):
        _set_env(env)
        self._evaluator, self._key, self._ship_binaries = evaluator, key, ship_binaries
        self._clock = _Clock()
        self._held = None  # (spec, low, derivation) between derive and build
        try:  # the device, where this node has it: the build is checked here
            from codegen_opencl.runtime import session_for

            self._session = session_for(_find_device(key))
        except Exception:  # noqa: BLE001 -- no such device on this node: the measuring actor builds
            self._session = None

    def ready(self, env: Mapping[str, str]) -> dict:
        """Where it runs; asked at the start of each run, with the run's environment (a kept
        worker drops the programs an earlier run built: it builds each as a new one would)."""
        _set_env(env)
        if self._session is not None:
            self._session.clear()
        return {**_identity(), "builds": self._session is not None}

    def stage(self) -> str | None:
        return self._clock.stage

    def derive(self, spec: Spec) -> tuple:
        """evaluate.derived_message (low-level text, derivation text, applied launch shape) or
        ("done", Outcome)."""

        self._clock, self._held = _Clock(), None
        try:
            low, derivation = _stage(self._clock, "derive", self._evaluator.derive, spec)
        except _StageFailure as f:
            return ("done", Outcome("failed", "derive", _error_text(f.cause), rule=failing_rule(str(f.cause)),
                                    stage_s=self._clock.seconds()))
        self._held = (spec, low, derivation)
        return derived_message(low, derivation, spec)

    def prepare(self) -> tuple:
        """("built", Prepared) or ("done", Outcome) for the candidate derived last."""
        spec, low, derivation = self._held
        self._held = None
        evaluator = self._evaluator
        if spec.family is not None:  # checked at sizes the derived program's facts allow
            spec = attrs.evolve(spec, check_sizes=checkable_sizes(derivation.program, spec.sizes,
                                                                  evaluator.check_floor),
                                probes=probe_levels(derivation.program, spec.sizes))
        last = "build" if self._session is not None else "emit"

        def call(stage, taken):
            return _stage(self._clock, stage.name, _method(evaluator, stage.name), *taken, spec)

        try:
            values = evaluator.pipeline.run({"low": low, "session": self._session}, evaluator.options(spec),
                                            "translate", last, call)
        except _StageFailure as f:
            return ("done", Outcome("failed", f.stage, _error_text(f.cause), stage_s=self._clock.seconds()))
        real, refused = at_real_sizes(low, spec, evaluator, self._session, call, last)
        binary = real_binary = None
        if self._session is not None and self._ship_binaries:
            binary = self._session.binary(values["source"].text, _build_options(evaluator, spec))
            if real is not None:
                real_binary = self._session.binary(real["source"].text, _build_options(evaluator, spec))
        return ("built", Prepared(spec, values["source"], self._clock.seconds(), binary,
                                  self._key if binary is not None else None,
                                  None if real is None else real["source"], real_binary, refused))


class _Measurer:
    """A measuring actor: owns the `ordinal`-th device with `key` on its node and measures
    one prepared candidate at a time."""

    def __init__(self, key: str, ordinal: int, evaluator: Evaluator, env: Mapping[str, str]):
        _set_env(env)
        self._evaluator, self._clock, self._key = evaluator, _Clock(), key
        self._problem = None
        try:
            from codegen_opencl.runtime import device_key, devices, session_for

            mine = [d for d in devices() if device_key(d) == key]
            if ordinal >= len(mine):
                raise ExploreError(f"this node has {len(mine)} device(s) {key!r}, not a device #{ordinal}")
            self._session = session_for(mine[ordinal])
        except Exception as exc:  # noqa: BLE001 -- reported by ready()
            self._problem = _error_text(exc)
        self._cache = _Inputs()

    def ready(self, env: Mapping[str, str]) -> dict:
        """Where it runs, and its device's limits (the driver checks them against the
        explored device's) or why it could not open the device.  Asked at the start of each
        run, with the run's environment: a kept actor drops the programs and inputs an
        earlier run made, so that it builds (or loads from a worker's binary) each of this
        run's, and holds its memory, as a new actor would."""
        _set_env(env)
        limits = None
        if self._problem is None:
            self._session.clear()
            self._cache = _Inputs()
            from codegen_opencl.runtime import device_identity

            limits = DeviceLimits.of_identity(device_identity(self._session.device))
        return {**_identity(), "problem": self._problem, "limits": limits}

    def stage(self) -> str | None:
        return self._clock.stage

    def measure(self, prepared: Prepared, best_s: float | None) -> tuple[Outcome, str]:
        """The candidate's outcome, and what its program was built from: "binary" (the
        preparation worker's, loaded without compiling) or "source"."""
        self._clock = clock = _Clock()
        spec, evaluator = prepared.spec, self._evaluator
        build = _method(evaluator, "build")
        builds, built_from = self._session.builds, "source"
        adopted = all(binary is not None and prepared.binary_key == self._key
                      and self._session.adopt(source.text, binary, _build_options(evaluator, spec))
                      for source, binary in ((prepared.source, prepared.binary),
                                             (prepared.real_source, prepared.real_binary)) if source is not None)
        refused = prepared.real_refused
        try:
            kernel = _stage(clock, "build", build, prepared.source, self._session, spec)
            real = None
            if prepared.real_source is not None:
                try:
                    real = _Uploaded(_stage(clock, "build", build, prepared.real_source, self._session, spec),
                                     self._cache.uploads)
                except _StageFailure as f:  # timed size-generic, as a local worker does
                    refused = f"compiled at the real sizes, the build stage failed: {_error_text(f.cause)}"
            built_from = "binary" if adopted and self._session.builds == builds else "source"
            self._cache.expected(spec.oracle, spec.check_sizes, spec.seed)
        except _StageFailure as f:
            return Outcome("failed", f.stage, _error_text(f.cause), stage_s=clock.seconds()), "source"
        except Exception as exc:  # noqa: BLE001 -- the interpreter's answer: reported as the check's failure
            return Outcome("failed", "check", _error_text(exc), stage_s=clock.seconds()), built_from
        outcome = _measure(clock, spec, evaluator, _Uploaded(kernel, self._cache.uploads), self._cache, best_s, real)
        return attrs.evolve(outcome, stage_s=clock.seconds(), at_sizes_refused=outcome.at_sizes_refused or refused), \
            built_from


def _identity_here(wanted: str | None) -> dict | str:
    """The device_identity of the device `wanted` chooses on this node
    (codegen_opencl.runtime.choose_device), or why there is none."""
    from codegen_opencl.runtime import choose_device, device_identity

    try:
        return device_identity(choose_device(wanted))
    except Exception as exc:  # noqa: BLE001 -- no such device here: another node may have it
        return _error_text(exc)


def _devices_here() -> list[tuple[str, str]]:
    """(device key, description) of every OpenCL device of the node this runs on."""
    from codegen_opencl.runtime import describe, device_key, devices

    return [(device_key(d), describe(d)) for d in devices()]


def _with_device(key: str, function: Callable, args: tuple):
    """`function(device, *args)` with this node's first device of `key` (Cluster.run_on_device)."""
    return function(_find_device(key), *args)


def _ask_every_node(ray, function: Callable, *args, first: str | None = None) -> list[tuple[str, object]]:
    """(node, answer) of `function(*args)` run once on every live node (node `first`
    first); a node that cannot answer (it went meanwhile, its task's process died) answers
    with the text of why: the others are still asked."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(num_cpus=0, max_retries=0)(function)  # a node that cannot answer is not asked again
    nodes = sorted((n["NodeID"] for n in ray.nodes() if n.get("Alive")), key=lambda n: n != first)
    refs = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(*args)
            for n in nodes]
    answers = []
    for node, ref in zip(nodes, refs):
        try:
            answers.append((node, ray.get(ref)))
        except ray.exceptions.RayError as exc:
            answers.append((node, f"node {_short(node)} did not answer: {_first_line(exc)}"))
    return answers


# ------------------------------------------------------------------------------ the cluster


@attrs.frozen
class DeviceSlot:
    """One device of the cluster: the node that has it, its key, its ordinal among the
    node's devices with that key, and how it reads."""

    node: str
    key: str
    ordinal: int
    description: str


class Cluster:
    """A connection to a Ray cluster the explorer uses as its executor (explore's
    `executor`).  `Cluster.connect("local")` starts a private one-machine cluster (shut down
    by `close`), "auto" joins the running cluster, any other text is its address.  A driver
    already connected to Ray (ray.init earlier) keeps that connection.

    `actors_per_device`: measuring actors per device (1: one owns each device; more shares
    one device among several actors, which disturbs timings: for tests on one machine).
    `ship_binaries`: a preparation worker that built a candidate hands its device binary to
    the measuring actor, which loads it instead of compiling the source again (False: every
    actor compiles)."""

    def __init__(self, ray, owned: bool, actors_per_device: int = 1, worker_cpus: float = 1.0,
                 ship_binaries: bool = True):
        self._ray, self._owned = ray, owned
        self.actors_per_device, self.worker_cpus, self.ship_binaries = actors_per_device, worker_cpus, ship_binaries
        self._kept = _KeptActors(ray)  # the idle actors of its finished explorations, for the next

    @classmethod
    def connect(cls, address: str = "auto", *, num_cpus: int | None = None, actors_per_device: int = 1,
                worker_cpus: float = 1.0, ship_binaries: bool = True) -> Cluster:
        if actors_per_device < 1:
            raise ClusterError(f"actors_per_device must be at least 1, got {actors_per_device}")
        ray = _ray()
        if ray.is_initialized():
            return cls(ray, False, actors_per_device, worker_cpus, ship_binaries)
        settings = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        try:
            if address == "local":  # a new cluster even where one already runs on this machine
                ray.init(address="local", num_cpus=num_cpus or 2, **settings)
            else:
                ray.init(address=address, **settings)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterError(f"cannot reach the Ray cluster at {address!r}: {exc}") from None
        return cls(ray, True, actors_per_device, worker_cpus, ship_binaries)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Kill the actors kept for later explorations; shut down a cluster this object started
        or joined (a connection it was handed is kept)."""
        if self._ray.is_initialized():
            self._kept.kill_all()
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
        self._owned = False

    def devices(self) -> list[DeviceSlot]:
        """Every OpenCL device of every live node (asked on each node; one that does not
        answer has none)."""
        slots = []
        for node, listed in _ask_every_node(self._ray, _devices_here):
            if isinstance(listed, str):
                continue
            seen: collections.Counter = collections.Counter()
            for key, description in listed:
                slots.append(DeviceSlot(node, key, seen[key], description))
                seen[key] += 1
        return slots

    def identity(self, device=None) -> dict:
        """The device_identity of the device explored for `device` (a substring of
        "platform: device", None for $DPIA_DEVICE or the default), as the first node that
        has one reports it (the driver's own node first): the driver's host needs no
        OpenCL device.  A pyopencl Device is this host's."""
        if device is not None and not isinstance(device, str):
            from codegen_opencl.runtime import device_identity

            return device_identity(device)
        wanted = device if device is not None else os.environ.get("DPIA_DEVICE")
        found = [answer for _, answer in _ask_every_node(self._ray, _identity_here, wanted, first=self._here())]
        for answer in found:
            if isinstance(answer, dict):
                return answer
        raise ClusterError(f"no node of the cluster has the device {wanted or 'default'}: "
                           + "; ".join(sorted(set(found))), where=wanted or "")

    def _here(self) -> str:
        return self._ray.get_runtime_context().get_node_id()

    def kept_pids(self) -> dict[str, list[int]]:
        """The process ids of the actors kept for the next exploration, by kind (for tests)."""
        kept = self._kept.take()
        self._kept.keep(kept)
        return {kind: sorted(a.pid for a in kept if a.kind == kind and a.pid is not None)
                for kind in ("preparation worker", "measuring actor")}

    def run_on_device(self, key: str, function: Callable, *args):
        """`function(device, *args)` on a node that has a device of `key` (the driver's own
        first), in a task of its own, with that node's first such device: what the driver
        runs on the explored device without one of its own (the CLI checks the best variant
        so).  An exception `function` raises is raised here."""
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = sorted({s.node for s in self.devices() if s.key == key}, key=lambda n: n != self._here())
        if not nodes:
            raise ClusterError(f"no node of the cluster has the device {key!r}", where=key)
        env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
        task = ray.remote(num_cpus=0, max_retries=0, **({"runtime_env": {"env_vars": env}} if env else {}))(_with_device)
        ref = task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(nodes[0], soft=False)).remote(
            key, function, args)
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the function raised: its exception, as if run here
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise ClusterError(f"{getattr(function, '__name__', function)} failed on node {_short(nodes[0])}: "
                               f"{_first_line(exc)}", where=key) from None
        except ray.exceptions.RayError as exc:  # its process or node died
            raise ClusterError(f"{getattr(function, '__name__', function)} did not finish on node "
                               f"{_short(nodes[0])}: {_why_it_died(exc)}", where=key) from None

    def open(self, size: int, key: str, evaluator: Evaluator, timeout_s: float, exclusive: bool,
             on_derived: Callable, on_done: Callable, on_lost: Callable,
             limits: DeviceLimits | None = None) -> RayPool:
        """The pool of one exploration (dpia.explore.driver calls this); `limits`: the
        explored device's (from `identity`): a measuring actor whose device has other limits
        under the same key (a partitioned GPU) is not used."""
        slots = [s for s in self.devices() if s.key == key]
        if not slots:
            raise ClusterError(f"no node of the cluster has the device {key!r}", where=key)
        slots = [s for s in slots for _ in range(self.actors_per_device)]
        return RayPool(self._ray, size, slots, key, evaluator, timeout_s, exclusive, on_derived, on_done, on_lost,
                       self.worker_cpus, self.ship_binaries, limits, kept=self._kept)


class _KeptActors:
    """The idle actors a cluster keeps between its explorations (a resource of the Cluster,
    killed with it); a sweep's lanes open and close pools at once, hence the lock.
    `stops`: how many times a run ended with an exception (the kept actors were killed): a
    run open meanwhile (another lane of an interrupted sweep) keeps none either."""

    def __init__(self, ray):
        self._ray, self._actors, self._lock = ray, [], threading.Lock()
        self.stops = 0

    def take(self) -> list[_Actor]:
        """Every kept actor (the taker keeps or kills those it does not use)."""
        with self._lock:
            taken, self._actors = self._actors, []
        return taken

    def keep(self, actors: list[_Actor], since: int | None = None) -> None:
        """Keep `actors`, unless a run ended with an exception since `stops` was `since`."""
        with self._lock:
            if since is None or since == self.stops:
                self._actors.extend(actors)
                return
        for actor in actors:
            _kill(self._ray, actor)

    def kill_all(self, stop: bool = False) -> None:
        """Kill the kept actors; `stop`: a run ended with an exception."""
        with self._lock:
            taken, self._actors = self._actors, []
            self.stops += stop
        for actor in taken:
            _kill(self._ray, actor)


def _kill(ray, actor: _Actor) -> None:
    try:
        ray.kill(actor.handle, no_restart=True)
    except Exception:  # noqa: BLE001, S110 -- already gone
        pass


# ------------------------------------------------------------------------------ the pool


class _Job:
    """One candidate in flight: its spec, its derivation once derived, where its time went."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.derivation: str | None = None
        self.prepared: Prepared | None = None
        self.stage_s: dict[str, float] = {}
        self.queued_at: float | None = None
        self.where: list[str] = []


class _Actor:
    """A preparation worker or measuring actor and what it is doing: starting, idle,
    compiling (preparers) or measuring (measurers)."""

    def __init__(self, handle, kind: str, made_with: tuple, env: Mapping[str, str], slot: DeviceSlot | None = None,
                 reused: _Actor | None = None):
        self.handle, self.kind, self.slot = handle, kind, slot
        self.made_with = made_with  # its constructor's arguments: a later run with the same ones may reuse it
        self.reused = reused is not None  # kept from an earlier run: started again if it died meanwhile
        self.state, self.job, self.ref = "starting", None, handle.ready.remote(env)
        self.step: str | None = "ready"  # the method under way: ready, derive, prepare, measure
        self.deadline = time.monotonic() + STARTUP_TIMEOUT_S
        self.where = ""
        self.pid: int | None = None
        self.node: str | None = slot.node if slot is not None else None  # a preparer's once it has started
        if reused is not None:
            self.node = reused.node
        self.last_used = -1.0  # when it was last given a candidate (measuring actors take turns)

    def describe(self) -> str:
        """Which actor this is, for reports: its kind, its device and node, its process once started."""
        text = f"a {self.kind}"
        if self.slot is not None:
            text += f" of {self.slot.description} #{self.slot.ordinal}"
        if self.node is not None:
            text += f" on node {_short(self.node)}"
        return text + (f" ({self.where})" if self.where else "")


class RayPool(PoolState):
    """The driver's pool on a Ray cluster (the protocol of dpia.explore.workers._Pool):
    `size` preparation workers and one measuring actor per device slot.  `dropped`: the
    workers and actors the run goes on without (they could not start, or their node went),
    each with why."""

    def __init__(self, ray, size: int, slots: list[DeviceSlot], key: str, evaluator: Evaluator, timeout_s: float,
                 exclusive: bool, on_derived: Callable, on_done: Callable, on_lost: Callable, worker_cpus: float,
                 ship_binaries: bool = True, limits: DeviceLimits | None = None, kept: _KeptActors | None = None):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._ray, self._key, self._evaluator, self._timeout = ray, key, evaluator, timeout_s
        self._exclusive, self._ship_binaries, self._limits = exclusive, ship_binaries, limits
        self._on_derived, self._on_done, self._on_lost = on_derived, on_done, on_lost
        self._env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
        # No runtime_env: an actor sets the environment itself (constructor, then each run's
        # `ready`), so Ray can start it in a worker process it has already (seconds sooner)
        self._preparer_class = ray.remote(num_cpus=worker_cpus, max_concurrency=2)(_Preparer)
        self._measurer_class = ray.remote(num_cpus=0, max_concurrency=2)(_Measurer)
        self._affinity = NodeAffinitySchedulingStrategy
        self._worker_cpus, self._kept = worker_cpus, kept
        self._stops_at_open = kept.stops if kept is not None else 0
        reusable = kept.take() if kept is not None else []
        if reusable:  # those of a node gone meanwhile went with it
            live = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
            reusable = [a for a in reusable if a.node is None or a.node in live]
        preparers = [self._reuse(self._preparer_made_with(), self._env, reusable) for _ in range(size)]
        measurers = [(slot, self._reuse(self._measurer_made_with(slot), self._env, reusable)) for slot in slots]
        self._make_room(reusable, worker_cpus * preparers.count(None))
        self._preparers = [actor or self._start_preparer() for actor in preparers]
        self._measurers = [actor or self._start_measurer(slot) for slot, actor in measurers]
        self._waiting: collections.deque[_Job] = collections.deque()  # prepared, waiting for a device
        self.dropped: list[str] = []
        self._ever_started: set[str] = set()  # the kinds of which one actor has started

    # What an actor is made with, but the environment (each run's `ready` sets it).
    def _preparer_made_with(self) -> tuple:
        return ("preparation worker", self._key, self._evaluator, self._ship_binaries, self._worker_cpus)

    def _measurer_made_with(self, slot: DeviceSlot) -> tuple:
        return ("measuring actor", self._key, slot, self._evaluator)

    @staticmethod
    def _reuse(made_with: tuple, env: Mapping[str, str], reusable: list[_Actor]) -> _Actor | None:
        """A kept actor made with `made_with`, taken out of `reusable` (asked again whether it
        is ready, as a new one is), or None."""
        for index, old in enumerate(reusable):
            if old.made_with == made_with:
                reusable.pop(index)
                return _Actor(old.handle, old.kind, made_with, env, old.slot, reused=old)
        return None

    def _make_room(self, others: list[_Actor], cpus: float) -> None:
        """Of the kept actors this run does not use, those of this device key (made with
        another evaluator or settings, or more than it needs) are killed; those of other
        keys (a sweep's other lanes) stay kept unless the run's new workers need their CPUs."""
        ray = self._ray
        mine = [a for a in others if a.made_with[1] == self._key]
        rest = [a for a in others if a.made_with[1] != self._key]
        if rest and cpus and ray.available_resources().get("CPU", 0) < cpus:
            mine, rest = mine + rest, []
        for actor in mine:
            _kill(ray, actor)
        if rest:
            self._kept.keep(rest)

    def _start_preparer(self) -> _Actor:
        return _Actor(self._preparer_class.remote(self._key, self._evaluator, self._env, self._ship_binaries),
                      "preparation worker", self._preparer_made_with(), self._env)

    def _start_measurer(self, slot: DeviceSlot) -> _Actor:
        strategy = self._affinity(slot.node, soft=False)
        handle = self._measurer_class.options(scheduling_strategy=strategy).remote(
            self._key, slot.ordinal, self._evaluator, self._env)
        return _Actor(handle, "measuring actor", self._measurer_made_with(slot), self._env, slot)

    # -- state (workers.PoolState) ------------------------------------------------------

    def _takers(self) -> list[_Actor]:
        return self._preparers

    def _in_flight(self) -> list[Spec]:
        return [j.spec for j in self._jobs()]

    def _states(self) -> collections.Counter:
        counts = collections.Counter(a.state for a in self._preparers)
        counts["built"] = len(self._waiting)
        counts["measuring"] = sum(a.state == "measuring" for a in self._measurers)
        return counts

    def _device_busy(self) -> bool:
        return bool(self._waiting) or any(a.state == "measuring" for a in self._measurers)

    def can_dispatch(self) -> bool:
        if len(self._waiting) > len(self._measurers):  # enough prepared: preparing more only queues
            return False
        return super().can_dispatch()

    def dispatch(self, spec: Spec) -> None:
        actor = next(a for a in self._preparers if a.state == "idle")
        job = _Job(spec)
        job.where.append(f"prepared on {actor.where}")
        self._call(actor, job, "derive", actor.handle.derive.remote(spec), "compiling")

    def _call(self, actor: _Actor, job: _Job, step: str, ref, state: str) -> None:
        actor.job, actor.step, actor.ref, actor.state = job, step, ref, state
        actor.deadline = time.monotonic() + self._timeout if step != "prepare" else actor.deadline

    def _jobs(self) -> list[_Job]:
        return [a.job for a in self._preparers + self._measurers if a.job is not None] + list(self._waiting)

    # -- events -------------------------------------------------------------------------

    def wait(self, timeout: float) -> None:
        """Handle what the actors report within `timeout` seconds, then expired deadlines,
        then give a free device the next prepared candidate."""
        ray = self._ray
        watched = {a.ref: a for a in self._preparers + self._measurers if a.ref is not None}
        if watched:
            ready, _ = ray.wait(list(watched), num_returns=1, timeout=max(0.0, timeout))
            if ready:
                ready, _ = ray.wait(list(watched), num_returns=len(watched), timeout=0)
            for ref in ready:
                if watched[ref].ref is ref:  # not an actor an earlier event of this batch replaced or dropped
                    self._handle(watched[ref], ref)
        else:
            time.sleep(max(0.0, timeout))
        self._expire()
        self._grant()

    def _handle(self, actor: _Actor, ref) -> None:
        ray = self._ray
        actor.ref = None
        try:
            result = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the actor's method raised: the candidate failed there
            self._fail(actor, Outcome("failed", actor.step, _error_text(getattr(exc, "cause", None) or exc)))
            return
        except ray.exceptions.RayError as exc:  # the actor or its process died, could not be placed or set up
            self._died(actor, exc)
            return
        if actor.step == "ready":
            self._started(actor, result)
        elif actor.step == "derive":
            self._derived(actor, result)
        elif actor.step == "prepare":
            self._prepared(actor, result)
        else:
            self._measured(actor, result)

    def _started(self, actor: _Actor, info: dict) -> None:
        actor.where, actor.node = info["where"], info["node"]
        if info.get("problem"):
            self._not_started(actor, f"cannot open the device: {info['problem']}")
            return
        if actor.kind == "measuring actor" and self._limits is not None and info["limits"] != self._limits:
            self._not_started(actor, f"has a device of this key with other limits ({info['limits']}) than the "
                                     f"explored one ({self._limits})")
            return
        actor.state, actor.step, actor.pid = "idle", None, info["pid"]
        self._ever_started.add(actor.kind)

    def _not_started(self, actor: _Actor, why: str) -> None:
        """An actor that cannot start is dropped with a warning (it is not started again:
        its cause would likely recur), the run going on with the others of its kind; when
        none is left, a ClusterError that lists why each of them was dropped."""
        self._ray.kill(actor.handle, no_restart=True)
        what = f"{actor.describe()} {why}"
        self.dropped.append(what)
        team = self._preparers if actor.kind == "preparation worker" else self._measurers
        team.remove(actor)
        if not team:
            reasons = "; ".join(d for d in self.dropped if d.startswith(f"a {actor.kind}"))
            lead = "every" if actor.kind in self._ever_started else "no"
            ending = "is gone" if lead == "every" else "could start"
            raise ClusterError(f"{lead} {actor.kind} for the device {self._key!r} {ending}: {reasons}",
                               where=self._key)
        warnings.warn(f"{what}; going on with {len(team)} other(s)", ClusterWarning, stacklevel=2)

    def _derived(self, actor: _Actor, result: tuple) -> None:
        job = actor.job
        if result[0] == "done":
            self._finish(actor, result[1])
            return
        _, low_text, derivation, shape = result
        job.derivation = derivation
        if self._on_derived(job.spec, low_text, derivation, shape):
            self._call(actor, job, "prepare", actor.handle.prepare.remote(), "compiling")
        else:
            actor.state, actor.job, actor.step = "idle", None, None

    def _prepared(self, actor: _Actor, result: tuple) -> None:
        job = actor.job
        if result[0] == "done":
            self._finish(actor, result[1])
            return
        job.prepared, job.queued_at = result[1], time.monotonic()
        job.stage_s.update(result[1].stage_s)
        actor.state, actor.job, actor.step = "idle", None, None
        self._waiting.append(job)

    def _measured(self, actor: _Actor, result: tuple[Outcome, str]) -> None:
        outcome, built_from = result
        job = actor.job
        job.where.append(f"measured on {actor.where}" + (BUILT_FROM_BINARY if built_from == "binary" else ""))
        self._finish(actor, outcome)

    def _finish(self, actor: _Actor, outcome: Outcome) -> None:
        job = actor.job
        actor.state, actor.job, actor.step = "idle", None, None
        self._report(job, outcome)

    def _report(self, job: _Job, outcome: Outcome) -> None:
        stage_s = dict(job.stage_s)
        for stage, seconds in (outcome.stage_s or {}).items():
            stage_s[stage] = round(stage_s.get(stage, 0.0) + seconds, 4)
        self._on_done(job.spec, attrs.evolve(outcome, stage_s=stage_s, where="; ".join(job.where) or None),
                      job.derivation)

    def _fail(self, actor: _Actor, outcome: Outcome) -> None:
        if actor.job is None:  # its `ready` raised
            self._not_started(actor, f"failed while starting: {outcome.error}")
            return
        self._finish(actor, outcome)

    def _grant(self) -> None:
        """Give the next prepared candidate to a free device; on a CPU device only when no
        preparation runs (up to EXCLUSIVE_WAIT_S: a hung one is not waited for)."""
        while self._waiting:
            idle = [a for a in self._measurers if a.state == "idle"]
            if not idle:
                return
            free = min(idle, key=lambda a: a.last_used)  # in turn: every device gets work
            if self._exclusive:
                if any(a.state == "measuring" for a in self._measurers):
                    return
                compiling = any(a.state in ("starting", "compiling") for a in self._preparers)
                if compiling and time.monotonic() < self._waiting[0].queued_at + EXCLUSIVE_WAIT_S:
                    return
            job = self._waiting.popleft()
            job.stage_s["queue"] = round(job.stage_s.get("queue", 0.0) + time.monotonic() - job.queued_at, 4)
            free.last_used = time.monotonic()
            self._call(free, job, "measure", free.handle.measure.remote(job.prepared, None if job.spec.confirms else self.best_s), "measuring")

    def _expire(self) -> None:
        now = time.monotonic()
        for actor in self._preparers + self._measurers:
            if actor.ref is None or now <= actor.deadline:
                continue
            if actor.state == "starting":
                self._not_started(actor, f"did not start within {STARTUP_TIMEOUT_S:.0f} s (is a CPU free for it?)")
                continue
            stage = self._stage_of(actor)
            job = actor.job
            self._replace(actor)
            self._report(job, Outcome("timeout", stage, f"no result within {self._timeout:g} s at {stage}"))

    def _stage_of(self, actor: _Actor) -> str | None:
        """The stage a hung actor is in (it answers from its second thread), else its step's first."""
        fallback = {"derive": "derive", "prepare": "translate", "measure": "build"}.get(actor.step)
        try:
            return self._ray.get(actor.handle.stage.remote(), timeout=STAGE_QUERY_S) or fallback
        except Exception:  # noqa: BLE001 -- a hung or dead actor: its step says enough
            return fallback

    def _died(self, actor: _Actor, exc: BaseException) -> None:
        """An actor that died loses its candidate only: the driver is told (not stored), the
        actor replaced.  When its node is gone, so is every actor there: each loses the
        candidate it held, measuring actors are dropped, preparation workers started again
        elsewhere."""
        if actor.node is not None and not self._node_alive(actor.node):
            self._node_lost(actor.node, actor)
        elif actor.state == "starting" and actor.reused:  # it died while kept: started again, as a new one
            self._replace(actor)
        elif actor.state == "starting":
            self._not_started(actor, f"died while starting: {_why_it_died(exc)}")
            return
        else:
            job, where, step = actor.job, actor.where or actor.kind, actor.step
            if not self._replace(actor):
                self.dropped.append(f"{actor.describe()}: its node is gone")
            if job is not None:
                self._on_lost(job.spec, f"the {actor.kind} ({where}) died during {step}")
        if not self._measurers:
            raise ClusterError(f"every measuring actor for the device {self._key!r} is gone, nothing left to "
                               f"measure on: {'; '.join(self.dropped)}", where=self._key)

    def _node_lost(self, node: str, first: _Actor) -> None:
        """Every actor on the gone `node`: its candidate lost, itself dropped or replaced."""
        gone = [first] + [a for a in self._preparers + self._measurers if a is not first and a.node == node]
        for actor in gone:
            job, where, step = actor.job, actor.where or actor.kind, actor.step
            if not self._replace(actor):
                self.dropped.append(f"{actor.describe()}: its node is gone")
            if job is not None:
                self._on_lost(job.spec, f"the {actor.kind} ({where}) died during {step}; its node is gone")
        warnings.warn(f"a node of the cluster is gone ({len(gone)} actor(s) with it); going on with "
                      f"{len(self._measurers)} measuring actor(s)", ClusterWarning, stacklevel=2)

    def _replace(self, actor: _Actor) -> bool:
        """Kill `actor` and start another in its place; False when its node is gone (a
        measuring actor is then dropped)."""
        self._ray.kill(actor.handle, no_restart=True)
        actor.job, actor.ref = None, None
        if actor.kind == "preparation worker":
            self._preparers[self._preparers.index(actor)] = self._start_preparer()
            return True
        if actor.slot is not None and self._node_alive(actor.slot.node):
            self._measurers[self._measurers.index(actor)] = self._start_measurer(actor.slot)
            return True
        self._measurers.remove(actor)
        return False

    def _node_alive(self, node: str) -> bool:
        return any(n["NodeID"] == node and n.get("Alive") for n in self._ray.nodes())

    def abandon(self, keep: Callable[[Spec], bool] | None = None) -> int:
        """Drop the unfinished candidates (the budget ran out), except those `keep` selects:
        their actors are killed and replaced; how many."""
        def kept(job: _Job) -> bool:
            return keep is not None and keep(job.spec)

        dropped = [j for j in self._waiting if not kept(j)]
        self._waiting = collections.deque(j for j in self._waiting if kept(j))
        for actor in self._preparers + self._measurers:
            if actor.job is not None and not kept(actor.job):
                dropped.append(actor.job)
                self._replace(actor)
        return len(dropped)

    def __exit__(self, kind, *exc) -> None:
        self.close(keep=kind is None)

    def close(self, keep: bool = False) -> None:
        """Kill the actors; `keep`: the run ended normally, its idle actors are handed back to
        the cluster for its next run (one that ended with an exception, Ctrl-C or a
        ClusterError, leaves none running: the cluster's kept ones are killed too)."""
        actors = self._preparers + self._measurers
        kept = [a for a in actors if keep and self._kept is not None and a.job is None
                and a.state in ("idle", "starting")]
        for actor in actors:
            if actor not in kept:
                _kill(self._ray, actor)
        if self._kept is not None:
            if keep:
                self._kept.keep(kept, since=self._stops_at_open)
            else:
                self._kept.kill_all(stop=True)
        self._preparers, self._measurers, self._waiting = [], [], collections.deque()

    # -- for tests and reports ----------------------------------------------------------

    def pids(self, kind: str = "preparation worker") -> list[int]:
        """The process ids of the started actors of a kind."""
        return [a.pid for a in self._preparers + self._measurers if a.kind == kind and a.pid is not None]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _short(node: str) -> str:
    """A Ray node id as reports show it (its first hex digits, as `ray status` does)."""
    return node[:8]


def _why_it_died(exc: BaseException) -> str:
    """Why Ray says an actor died: its constructor's exception (the last line of the
    traceback Ray quotes), else the first line of Ray's account and the process it names."""
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if getattr(exc, "actor_init_failed", False) and lines:
        return f"its constructor raised {lines[-1]}"
    process = re.search(r"\bpid: (\d+)\s+.*?\bip: (\S+)", text, re.DOTALL)
    where = f" (pid {process.group(1)} on {process.group(2)})" if process else ""
    return (lines[0] if lines else type(exc).__name__) + where


__all__ = ["Cluster", "ClusterError", "ClusterWarning", "DeviceSlot", "Prepared", "RayPool"]
