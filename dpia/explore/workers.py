"""The worker processes of an exploration: each opens the device once and evaluates
candidates (dpia.explore.evaluate) until told to stop; the pool dispatches them, lets one
measure at a time, and replaces a worker that hangs or dies."""

from __future__ import annotations

import collections
import multiprocessing
import multiprocessing.connection
import os
import signal
import time
from collections.abc import Callable

import attrs

from .errors import ExploreError
from .evaluate import Evaluator, Outcome, Spec, _error_text, _evaluate, _Inputs

STARTUP_TIMEOUT_S = 120.0  # a worker process that is not ready by then cannot open the device
EXCLUSIVE_WAIT_S = 10.0  # on a CPU device a built candidate waits this long at most for compiles to end


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


class PoolState:
    """The state side of the pool protocol dpia.explore.driver's loop talks to (size, busy,
    counts, can_dispatch, busy_with, a context manager that closes), shared by the local
    pool and dpia.explore.cluster.RayPool.  A pool gives `_takers()` (the workers that take
    new candidates, each with a `state`), `_in_flight()` (the specs of its unfinished
    candidates), `_device_busy()`, `_states()` (workers per state, for reports) and `close()`;
    `_exclusive`: a CPU device, on which nothing compiles while a candidate is timed."""

    best_s: float | None = None  # the fastest time so far, for the "slow" rule (the driver sets it)
    dropped: tuple[str, ...] | list[str] = ()  # workers it went on without, and why (the local pool drops none)
    _exclusive: bool = False

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def size(self) -> int:
        return len(self._takers())

    def busy(self) -> int:
        """How many candidates are unfinished."""
        return len(self._in_flight())

    def busy_with(self, which: Callable[[Spec], bool]) -> bool:
        """Whether an unfinished candidate is one `which` selects."""
        return any(which(spec) for spec in self._in_flight())

    def can_dispatch(self) -> bool:
        if self._exclusive and self._device_busy():
            return False
        return any(w.state == "idle" for w in self._takers())

    def counts(self) -> dict[str, int]:
        """Workers per state (starting, idle, compiling, built, measuring)."""
        return dict(self._states())

    def close(self) -> None:
        raise NotImplementedError

    def _takers(self) -> list:
        raise NotImplementedError

    def _in_flight(self) -> list[Spec]:
        raise NotImplementedError

    def _device_busy(self) -> bool:
        raise NotImplementedError

    def _states(self) -> collections.Counter:
        raise NotImplementedError


class _Pool(PoolState):
    """Worker processes evaluating candidates; calls `on_derived(spec, low, derivation) ->
    bool` (False: skip the candidate) and `on_done(spec, outcome, derivation)`."""

    def __init__(self, size: int, key: str, evaluator: Evaluator, timeout_s: float, exclusive: bool,
                 on_derived: Callable, on_done: Callable):
        self._context = multiprocessing.get_context("spawn")
        self._key, self._evaluator, self._timeout = key, evaluator, timeout_s
        self._exclusive = exclusive  # a CPU device: nothing compiles while a candidate is timed
        self._on_derived, self._on_done = on_derived, on_done
        self._workers = [self._start() for _ in range(size)]
        self._waiting: collections.deque[_Worker] = collections.deque()  # built, in order

    def _start(self) -> _Worker:
        return _Worker(self._context, self._key, self._evaluator)

    # -- state (PoolState) ----------------------------------------------------------------

    def _takers(self) -> list[_Worker]:
        return self._workers

    def _in_flight(self) -> list[Spec]:
        return [w.spec for w in self._workers if w.state in ("compiling", "built", "measuring")]

    def _device_busy(self) -> bool:
        return any(w.state in ("built", "measuring") for w in self._workers)

    def _states(self) -> collections.Counter:
        return collections.Counter(w.state for w in self._workers)

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
            go = self._on_derived(worker.spec, *message[1:])  # low-level text, derivation, applied launch shape
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
        now = time.monotonic()
        # timings on a CPU device are disturbed by compiles; one compiling for long (hung) is not waited for
        compiling = any(w.state == "starting" or (w.state == "compiling" and now - w.marks[0][1] < EXCLUSIVE_WAIT_S)
                        for w in self._workers)
        if self._exclusive and compiling and now < self._waiting[0].deadline:
            return
        worker = self._waiting.popleft()
        worker.send(("measure", None if worker.spec.confirms else self.best_s))
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


class LocalProcesses:
    """The default executor of an exploration (explore's `executor`): worker processes on
    this host, each compiling and measuring its candidate (dpia.explore.cluster.Cluster is
    the other, on Ray).  A worker that dies here takes the blame: its candidate is "failed"
    (a crash in the compiler is the candidate's), so `on_lost` is never called."""

    def identity(self, device) -> dict:
        """The device_identity of the device explored for `device` (codegen_opencl.runtime.
        choose_device's argument): this host's."""
        from codegen_opencl.runtime import choose_device, device_identity

        return device_identity(choose_device(device))

    def open(self, size: int, key: str, evaluator: Evaluator, timeout_s: float, exclusive: bool,
             on_derived: Callable, on_done: Callable, on_lost: Callable, limits=None) -> _Pool:
        """The pool of one exploration; `limits` (the device's, from `identity`) are this
        host's device's own: nothing to check them against."""
        return _Pool(size, key, evaluator, timeout_s, exclusive, on_derived, on_done)


LOCAL_PROCESSES = LocalProcesses()


# ------------------------------------------------------------------------------ the result


def default_workers(cpu_device: bool = True) -> int:
    """Compiling processes: two at least (one compiles while another is timed), half the
    host's cores, at most eight for a GPU (deriving a candidate takes about 1 s and timing it
    0.3 s: 8 workers kept the H200 busy, 531 candidates in 180 s against 345 with 4) and four
    for a CPU device (its compiles and its timings share the cores)."""
    return min(4 if cpu_device else 8, max(2, (os.cpu_count() or 2) // 2))


