"""Sweeps: several programs, sizes or devices explored in one run, each stored under its own
key in the tuning database (the program's canonical text, the sizes, the device key).

    entries = sweep_entries({"sum": total, "dot": dot}, [{"N": 1 << 16}, {"N": 1 << 20}], ["PoCL", "Oclgrind"])
    results = sweep(entries, db="tuning.sqlite", executor=cluster, budget_s=60)   # one Exploration each

The entries run one after another on the same executor (a Ray cluster's nodes are shared by
every entry; its actors are started per entry, for that entry's device), each with the
whole budget.  An interrupted sweep (Ctrl-C) keeps every candidate measured so far, in the
entries finished and in the one under way.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping

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


def sweep(entries: Iterable[SweepEntry], *, db=None, executor=None,
          started: Callable[[SweepEntry], None] | None = None, **options) -> list[Exploration]:
    """Explore each entry in turn with `options` (explore's: budget_s, max_candidates,
    search, seed, workers, ...); `db` (a TuningDB or a path) is opened once for all;
    `started` is called with each entry before it runs."""
    entries = list(entries)
    if not entries:
        raise ExploreError("a sweep needs at least one program, sizes and device to explore")
    owned = db is not None and not isinstance(db, TuningDB)
    tuning_db = TuningDB(db) if owned else db
    results = []
    try:
        for entry in entries:
            if started is not None:
                started(entry)
            results.append(explore(entry.program, entry.sizes, device=entry.device, db=tuning_db,
                                   executor=executor, **options))
    finally:
        if owned:
            tuning_db.close()
    return results


__all__ = ["SweepEntry", "sweep", "sweep_entries"]
