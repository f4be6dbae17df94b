"""Search strategies over an exploration `Space`: which points to try next.

A search is a pure function `propose(space, history, rng, count) -> [Point]`: given every
trial so far (in proposal order, with the outcome of those finished) it returns up to
`count` new feasible points; an empty list means the space is exhausted.  With the same
seed (the explorer's `random.Random(seed)`) and the same history it proposes the same points.

    random_search   families uniformly, then points uniformly, without repetition
    evolutionary    a population of the fastest correct points; children by crossover within
                    a family and by mutation (one choice one step up or down its range), a
                    few random immigrants; random until enough points succeeded

`SEARCHES` names them for `explore(search=...)`; a synchronous search (evolutionary) gets
its next batch only after the previous one finished, so its choices depend on complete,
ordered results and stay deterministic with several worker processes.
"""

from __future__ import annotations

import random
import types
from collections.abc import Callable, Sequence

import attrs

from .space import Point, Space

PENDING = "pending"  # a trial proposed but not finished


@attrs.frozen
class Trial:
    """One proposed point and, once finished, its outcome (time_s only for correct, fully
    timed candidates)."""

    point: Point
    status: str = PENDING
    time_s: float | None = None

    @property
    def succeeded(self) -> bool:
        return self.status == "ok" and self.time_s is not None


Propose = Callable[[Space, Sequence[Trial], random.Random, int], list[Point]]


def _tried(history: Sequence[Trial]) -> set[Point]:
    return {t.point for t in history}


def random_search(space: Space, history: Sequence[Trial], rng: random.Random, count: int) -> list[Point]:
    """Up to `count` untried feasible points: a family uniformly, then one of its points."""
    seen = _tried(history)
    out: list[Point] = []
    for _ in range(count):
        p = space.sample(rng, exclude=seen)
        if p is None:
            break
        seen.add(p)
        out.append(p)
    return out


@attrs.frozen
class Evolution:
    """Settings of the evolutionary search: `population` fastest correct points are the
    parents; a child is a crossover with probability `crossover`, else a mutation; with
    probability `immigrants` (and whenever no new child is found) a random point."""

    population: int = 6
    crossover: float = 0.3
    immigrants: float = 0.15
    tries: int = 20  # attempts at a new child before falling back to a random point


def evolutionary(space: Space, history: Sequence[Trial], rng: random.Random, count: int,
                 settings: Evolution = Evolution()) -> list[Point]:
    """Children of the fastest correct points so far (random points until two succeeded)."""
    done = sorted((t for t in history if t.succeeded), key=lambda t: (t.time_s, t.point))
    parents = [t.point for t in done[: settings.population]]
    seen = _tried(history)
    out: list[Point] = []
    for _ in range(count):
        child = None
        if len(parents) >= 2 and rng.random() >= settings.immigrants:
            child = _child(space, parents, seen, rng, settings)
        if child is None:
            child = space.sample(rng, exclude=seen)
        if child is None:
            break
        seen.add(child)
        out.append(child)
    return out


def _child(space: Space, parents: list[Point], seen: set[Point], rng: random.Random,
           settings: Evolution) -> Point | None:
    for _ in range(settings.tries):
        a = _tournament(parents, rng)
        if rng.random() < settings.crossover:
            mates = [p for p in parents if p.family == a.family and p != a]
            child = space.crossover(a, rng.choice(mates), rng) if mates else None
        else:
            fresh = [q for q in space.neighbours(a) if q not in seen]
            child = rng.choice(fresh) if fresh else None
        if child is not None and child not in seen:
            return child
    return None


def _tournament(parents: list[Point], rng: random.Random) -> Point:
    """The better (earlier: parents are sorted fastest first) of two random parents."""
    i, j = rng.randrange(len(parents)), rng.randrange(len(parents))
    return parents[min(i, j)]


@attrs.frozen
class Search:
    """A named search: `propose`, and whether its next batch waits for the previous one."""

    name: str
    propose: Propose
    synchronous: bool

    def batch(self, workers: int) -> int:
        """How many points to ask for at a time: a generation of a synchronous search keeps
        every worker busy twice over; an asynchronous one tops up free workers."""
        return max(4, 2 * workers) if self.synchronous else workers


SEARCHES = types.MappingProxyType({
    "random": Search("random", random_search, synchronous=False),
    "evolutionary": Search("evolutionary", evolutionary, synchronous=True),
})


__all__ = ["PENDING", "SEARCHES", "Evolution", "Search", "Trial", "evolutionary", "random_search"]
