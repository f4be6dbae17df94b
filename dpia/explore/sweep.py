"""Sweeps: several programs, sizes or devices explored in one run, each stored under its own
key in the tuning database (the program's canonical text, the sizes, the device key).

    entries = sweep_entries({"sum": total, "dot": dot}, [{"N": 1 << 16}, {"N": 1 << 20}], ["PoCL", "Oclgrind"])
    results = sweep(entries, db="tuning.sqlite", executor=cluster, budget_s=60)   # one Exploration each

Entries on different devices run at once, one lane per device (each device's measuring
actor still measures one candidate at a time; the driver interleaves the searches, one
thread each); the entries of one device run one after another, each with the whole budget.
A Ray cluster's nodes are shared by every lane; its actors are started per entry, for that
entry's device.  Two CPU devices of one host (PoCL and Oclgrind) measured at once disturb
each other's timings: `concurrent=False` runs every entry in turn.  An interrupted sweep
(Ctrl-C, or an error in one lane) stops every lane and keeps every candidate measured so far.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from functional.expr import Expr

from .driver import Exploration, explore
from .errors import ExploreError
from .tuning import TuningDB


@attrs.frozen
class SweepEntry:
    """One exploration of a sweep: a named program at sizes on a device (a substring of
    "platform: device", None for the default)."""

    name: str
    program: Expr
    sizes: Mapping[str, int]
    device: str | None = None

    def describe(self) -> str:
        sizes = " ".join(f"{k}={v}" for k, v in self.sizes.items())
        return f"{self.name} at {sizes or '-'}" + (f" on {self.device}" if self.device else "")


def sweep_entries(programs: Mapping[str, Expr], sizes: Iterable[Mapping[str, int]],
                  devices: Iterable[str | None] = (None,)) -> list[SweepEntry]:
    """Every program at every sizes on every device, in that order (devices innermost)."""
    return [SweepEntry(name, program, dict(s), device)
            for (name, program), s, device in itertools.product(programs.items(), list(sizes), list(devices))]


class LaneStopped(BaseException):
    """Raised in a lane's exploration (from its status callback) when another lane of the
    sweep was interrupted or failed: the exploration stops as on Ctrl-C."""


def device_lanes(devices: Sequence[object], executor=None) -> list[list[int]]:
    """The indices of `devices` (what explore's `device` takes: None, a name, a device)
    grouped by the device they choose (asked of `executor`, as explore does: a cluster's
    nodes, or this host), in first-appearance order: the lanes of a concurrent sweep."""
    from codegen_opencl.runtime import identity_key

    from .workers import LOCAL_PROCESSES

    lanes: dict[str, list[int]] = {}
    for index, device in enumerate(devices):
        lanes.setdefault(identity_key((executor or LOCAL_PROCESSES).identity(device)), []).append(index)
    return list(lanes.values())


def run_lanes(lanes: Sequence[Sequence[int]], run: Callable[[int, Callable[[], None]], object]) -> list:
    """Call `run(index, check)` for every index, the indices of each lane in turn, the lanes
    at once (the first in this thread, so Ctrl-C reaches it; the others in threads).  `run`
    calls `check()` often (explore's status callback): it raises LaneStopped once another
    lane was interrupted or failed.  The results by index; the first error (Ctrl-C first)
    raised once every lane has stopped."""
    stop = threading.Event()
    results: dict[int, object] = {}
    errors: list[BaseException] = []

    def check() -> None:
        if stop.is_set():
            raise LaneStopped

    def lane(indices: Sequence[int]) -> None:
        try:
            for index in indices:
                check()
                results[index] = run(index, check)
        except LaneStopped:
            pass
        except BaseException as exc:  # noqa: BLE001 -- handed to the caller's thread, every lane stopped
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=lane, args=(indices,), daemon=True) for indices in lanes[1:]]
    for thread in threads:
        thread.start()
    try:
        if lanes:
            lane(lanes[0])
        for thread in threads:
            thread.join()
    except BaseException:  # Ctrl-C while waiting for the other lanes: stop them first
        stop.set()
        for thread in threads:
            thread.join()
        raise
    if errors:
        raise next((e for e in errors if isinstance(e, KeyboardInterrupt)), errors[0])
    return [results[i] for i in sorted(results)]


def sweep(entries: Iterable[SweepEntry], *, db=None, executor=None,
          started: Callable[[SweepEntry], None] | None = None, concurrent: bool = True,
          **options) -> list[Exploration]:
    """Explore every entry with `options` (explore's: budget_s, max_candidates, search, seed,
    workers, status, ...), the entries of different devices at once unless `concurrent` is
    False; `db` (a TuningDB or a path; a lane's thread opens its own connection to it per
    entry); `started` is called with
    each entry before it runs (from its lane's thread).  The Explorations in entry order."""
    entries = list(entries)
    if not entries:
        raise ExploreError("a sweep needs at least one program, sizes and device to explore")
    lanes = device_lanes([e.device for e in entries], executor) if concurrent else [list(range(len(entries)))]
    path = db.path if isinstance(db, TuningDB) else db
    shared = db if len(lanes) == 1 and isinstance(db, TuningDB) else None  # one thread: the caller's connection
    status = options.pop("status", None)

    def run(index: int, check: Callable[[], None]) -> Exploration:
        entry = entries[index]

        def watched(state) -> None:
            check()
            if status is not None:
                status(state)

        if started is not None:
            started(entry)
        tuning_db = shared or (TuningDB(path) if path is not None else None)
        try:
            return explore(entry.program, entry.sizes, device=entry.device, db=tuning_db, executor=executor,
                           status=watched, **options)
        finally:
            if tuning_db is not None and tuning_db is not shared:
                tuning_db.close()

    return run_lanes(lanes, run)


__all__ = ["LaneStopped", "SweepEntry", "device_lanes", "run_lanes", "sweep", "sweep_entries"]
