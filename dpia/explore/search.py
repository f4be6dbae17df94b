"""Search strategies over an exploration `Space`: which points to try next.

A search is a pure function `propose(space, history, rng, count) -> [Point]`: given every
trial so far (in proposal order, with the outcome of those finished) it returns up to
`count` new feasible points; an empty list means the space is exhausted.  With the same
seed (the explorer's `random.Random(seed)`) and the same history it proposes the same points.

    random_search   families uniformly, then points uniformly, without repetition
    evolutionary    a population of the fastest correct points; children by crossover within
                    a family and by mutation (one choice one step up or down its range), a
                    few random immigrants; random until enough points succeeded
    bayesian        Thompson sampling from a Bayesian linear model of log time over each
                    choice's value and each pair of choices' values (per family): every
                    measured point, slow and failed ones too, teaches it which values and
                    combinations are fast; each proposal takes one draw of the model's
                    weights: the family with the fastest measured point (give or take a
                    measurement's noise), then its untried point fastest under the draw
                    (draws differ: a batch explores); part of each batch goes to skeleton
                    classes (moves made, levels mapped onto) not tried yet, until none is left,
                    part to the incumbent's kernel with other launch shapes, part to each
                    class's fastest point with its maps' dimensions permuted (points whose
                    accesses are strided across work-items first); it starts
                    with the program as written under each of stage 2's mappings

Every search skips the points equivalent to one already tried (`Tried`): of the same
skeleton, differing only in slots the history showed do not change the low-level program
(`inert_slots`: a duplicate that differs from the point it duplicates in one slot, or in
that one and slots already known inert).  Completion can undo a move whose effect another
decision subsumes, so that slot's values all give one kernel: measuring each would be waste.

`SEARCHES` names them for `explore(search=...)`; a synchronous search (evolutionary) gets
its next batch only after the previous one finished, so its choices depend on complete,
ordered results and stay deterministic with several worker processes.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import types
from collections.abc import Callable, Sequence

import attrs
import numpy as np

from .launch import LAUNCH
from .space import Point, Space

PENDING = "pending"  # a trial proposed but not finished
FAILED = ("failed", "wrong", "timeout")  # the outcomes that are failures (not "slow", not "duplicate")


@attrs.frozen
class Trial:
    """One proposed point and, once finished, its outcome: time_s is the median for a
    correct, fully timed candidate ("ok"), the time it was abandoned at for a "slow" one
    (a lower bound), None otherwise."""

    point: Point
    status: str = PENDING
    time_s: float | None = None
    same_as: Point | None = None  # the point whose low-level program this one had (a duplicate), if a point
    strided: float | None = None  # the share of its main kernel's global traffic strided across work-items


    @property
    def succeeded(self) -> bool:
        return self.status == "ok" and self.time_s is not None


Propose = Callable[[Space, Sequence[Trial], random.Random, int], list[Point]]


def inert_slots(history: Sequence[Trial]) -> dict[str, frozenset[str]]:
    """skeleton -> the slots shown not to change its low-level program: a duplicate and the
    point it duplicates differ in that slot alone, or in it and slots already shown inert
    (repeated until nothing changes).  Learnt from two values of a slot, so it assumes a slot
    that does not matter at one point matters at none of its skeleton's (the completion
    undoes the move whatever the other values)."""
    diffs = []
    for t in history:
        if t.same_as is not None and t.same_as.family == t.point.family:
            a, b = t.point.as_dict(), t.same_as.as_dict()
            diffs.append((t.point.family, frozenset(k for k in a if a[k] != b.get(k))))
    inert: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for family, differ in diffs:
            left = differ - inert.get(family, set())
            if len(left) == 1:
                inert.setdefault(family, set()).update(left)
                changed = True
    return {family: frozenset(slots) for family, slots in inert.items()}


class Tried:
    """The points tried so far, as a container: a point is `in` it when it is equivalent to
    one of them (same skeleton, the same values in every slot not known inert)."""

    def __init__(self, history: Sequence[Trial] = (), inert: dict[str, frozenset[str]] | None = None):
        self.inert = inert_slots(history) if inert is None else inert
        self._keys = {self.key(t.point) for t in history}

    def key(self, p: Point) -> tuple:
        inert = self.inert.get(p.family, frozenset())
        return p.family, tuple(kv for kv in p.params if kv[0] not in inert)

    def __contains__(self, p: object) -> bool:
        return isinstance(p, Point) and self.key(p) in self._keys

    def has_key(self, key: tuple) -> bool:
        """Whether a point of this `key` (Tried.key) was tried: `in` without computing it again."""
        return key in self._keys

    def add(self, p: Point) -> None:
        self._keys.add(self.key(p))

    def __or__(self, points) -> Tried:
        out = Tried((), self.inert)
        out._keys = set(self._keys) | {self.key(p) for p in points}
        return out

    def __len__(self) -> int:
        return len(self._keys)


def _tried(history: Sequence[Trial]) -> Tried:
    return Tried(history)


def random_search(space: Space, history: Sequence[Trial], rng: random.Random, count: int) -> list[Point]:
    """Up to `count` untried feasible points: a family uniformly, then one of its points."""
    return _random_points(space, _tried(history), rng, count)


def _random_points(space: Space, seen: Tried, rng: random.Random, count: int) -> list[Point]:
    out: list[Point] = []
    for _ in range(count):
        p = space.sample(rng, exclude=seen)
        if p is None:
            break
        seen.add(p)
        out.append(p)
    return out


def as_written(space: Space, history: Sequence[Trial], rng: random.Random, count: int) -> list[Point]:
    """Up to `count` points of the program as written under stage 2's mappings: one random
    point of each skeleton that makes no algorithmic move and has no point tried yet, those
    mapping more maps onto parallel levels first (the default schedule, measured first, maps
    one).  A random start draws a skeleton uniformly, and the program's own mappings are a
    few of hundreds of skeletons (Jacobi 3D: 8 of 412), so a search could spend its budget on
    macro variants without once timing the grid on three global dimensions."""
    touched = {t.point.family for t in history}
    plain = [f for f in space.families
             if f.name not in touched and getattr(f, "steps", ()) and skeleton_class(f)[0] == ()]
    plain.sort(key=lambda f: (-_parallel_maps(f), f.name))
    by_family = space.by_family()
    out = []
    for f in plain[:max(0, count)]:
        if by_family.get(f.name):
            out.append(rng.choice(by_family[f.name]))
    return out


def _parallel_maps(skeleton) -> int:
    """How many of a skeleton's steps map a map onto a parallel OpenCL level."""
    from functional.primitives import PARALLEL_MAPS

    return sum(st.move.removeprefix("lower_") in PARALLEL_MAPS for st in skeleton.steps)


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


def _child(space: Space, parents: list[Point], seen: Tried, rng: random.Random,
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
class Model:
    """Settings of the Bayesian search.  Log time is modelled as a sum of weights shared
    across skeletons (`_Features`): one per skeleton class (`skeleton_class`), per skeleton,
    per move, per (move, parameter, value) and per (move, two parameters, their values),

        log t(p) = w[class f] + w[f] + sum_m w[m] + sum_c w[m_c, p_c] + sum_{c<d} w[m, c, d, p_c, p_d]
                   + w[launch p_l] + w[class f, launch p_l] + noise

    for a point p of skeleton f, m its moves, p_c its value for slot c, p_l its launch shape (a
    value like the others: its weights vary as much, a failure is blamed on it too); in the prior a
    class's weight has spread `prior_sd` (log units), the skeleton's own a tenth of its
    variance (skeletons of one class differ in the loops one item runs: alike), moves and
    values a quarter, pairs of values a tenth (`_Features.prior_variances`); measurements
    have noise `noise_sd`.  A failed candidate counts as `failure_penalty` (log units) slower
    than the slowest measured one (its values are not tried again soon); a slow one as the
    time it was abandoned at (a lower bound).  Random points until `warmup` are measured
    and, after that, with probability `immigrants`."""

    prior_sd: float = 1.0
    noise_sd: float = 0.25
    failure_penalty: float = 1.0
    warmup: int = 8
    immigrants: float = 0.1
    # the share of each batch given to skeleton classes not tried yet (`skeleton_class`),
    # those of fewer moves first (each move's own evidence before its combinations), until
    # every class has been: the shared features can condemn a move for what it did in
    # other skeletons (a tree reduction mapped onto global ids), so that the one skeleton
    # where it is fast (the tree in a work-group) would wait behind hundreds of others
    diversity: float = 0.5
    class_failures: int = 3  # failed trials after which a class counts as tried (`_visited_classes`)
    # the share of each batch (after the diverse share) given to the incumbent's launch shapes:
    # the fastest measured point's kernel with another launch shape (stage 3 of the kernel the
    # search found best so far), the shape fastest under the draw.  The model shares launch
    # weights across skeletons, so shapes that failed or were slow elsewhere (too few
    # work-groups for another skeleton) would keep the incumbent from ever being timed with
    # them; a tile or block slot changes the program and stays the model's to choose.
    exploit: float = 0.25
    incumbents: int = 3  # when the fastest point's launch shapes are all tried, the next fastest's
    # the share of each batch (after the exploiting share) given to other orders of dimensions:
    # for each class's fastest measured point, the skeletons that map the same maps onto the
    # same levels with the dimensions permuted (`dimension_siblings`), at its own values.
    # Which map walks dimension 0 decides whether neighbouring work-items read neighbouring
    # addresses, a factor of ten on a GPU (GEMV^T's split-k: the chunks on dimension 0 ran
    # 5.4 ms, the columns there about 0.3), and the model cannot tell the orders apart
    # before it has measured both: they share every move and value weight.  The workers'
    # static analysis of each measured kernel (Trial.strided) says which orders promise most.
    orders: float = 0.125


def skeleton_class(family) -> tuple:
    """A skeleton's class: the algorithmic moves it makes and the parallel OpenCL levels it
    maps maps onto (and map_seq where a mapping chose a loop above parallel maps: a work-group's
    loop over a row's chunks), regardless of places, order and dimensions, and of the loops
    one item runs (unrolled, accumulators in registers: refinements of a class, learnt
    through the moves' shared features rather than tried once each); a hand-made skeleton
    without steps is its own class."""
    from functional.primitives import PARALLEL_MAPS

    from .moves import ALGORITHMIC, MOVES

    steps = getattr(family, "steps", ())
    if not steps:
        return ("skeleton", family.name) if getattr(family, "choices", None) else ((), ())
    known = [st for st in steps if st.move in MOVES]
    algorithmic = sorted({st.move for st in known if MOVES[st.move].stage == ALGORITHMIC})
    levels = sorted({st.move.removeprefix("lower_") for st in known if MOVES[st.move].stage != ALGORITHMIC
                     and st.move.removeprefix("lower_") in PARALLEL_MAPS | {"map_seq"}})
    return tuple(algorithmic), tuple(levels)


def _moves_in(cls: tuple) -> int:
    """How many algorithmic moves a class makes (a hand-made skeleton's: none known)."""
    return len(cls[0]) if isinstance(cls[0], tuple) else 0


def bayesian(space: Space, history: Sequence[Trial], rng: random.Random, count: int,
             settings: Model = Model()) -> list[Point]:
    """Untried points chosen by Thompson sampling in two steps, one posterior draw of the
    weights per point: the family with the fastest measured point, give or take one
    measurement's noise (a draw of it per family), then that family's untried point
    fastest under the draw.  (One argmin over every point, or over the model's predictions
    per family, would favour the family with the most points: the best of thousands of
    noisy predictions is far below the best of a few dozen.)
    Until `settings.warmup` trials have taught the model something: the program as written
    under each mapping (`as_written`), then random points."""
    points, ys, failed = _observations(history, settings)
    if len(points) < settings.warmup:
        first = as_written(space, history, rng, count)
        seen = _tried(history) | first
        return first + [p for p in _random_points(space, seen, rng, count - len(first))]
    seen = _tried(history)
    representatives: dict[tuple, Point] = {}  # one per equivalent set (the last, as a dict keeps it)
    for p in space.points:
        key = seen.key(p)
        if not seen.has_key(key):
            representatives[key] = p
    untried = list(representatives.values())
    if not untried:
        return []
    features = _Features(space)
    gen = np.random.default_rng(rng.getrandbits(64))
    draws = _posterior(features, points, ys, settings, gen, count, failed)
    scores = features.predict(features.columns(untried), draws)  # (untried points, draws): log time less `centre`
    centre = float(ys.mean())  # the model's predictions are centred on the measurements' mean
    # A skeleton not measured yet is scored by the draw's prediction of its typical (median)
    # untried point (what its class, moves and values taught elsewhere), less one
    # measurement's noise: optimism, so that skeletons are tried before the search settles,
    # but not the best of a hundred noisy predictions per skeleton, which in a space of more
    # skeletons than trials beat every measured one and left the fast ones unexploited.
    # A skeleton's measured best is of its timed points only: a failed point (values the
    # device cannot run, a derivation that does not apply) says nothing of the skeleton's
    # other values, and would bury it behind every measured one; the model still learns the
    # failure through the point's values.
    best: dict[str, float] = {}
    for p, y, fail in zip(points, ys, failed):
        if not fail:
            best[p.family] = min(best.get(p.family, math.inf), float(y))
    row = {key: i for i, key in enumerate(representatives)}
    grouped: dict[str, list[int]] = {}
    for i, p in enumerate(untried):
        grouped.setdefault(p.family, []).append(i)
    members = {name: np.array(grouped[name]) for name in sorted(grouped)}
    out: list[Point] = []
    taken = np.zeros(len(untried), dtype=bool)
    classes = {f.name: skeleton_class(f) for f in space.families}
    visited = _visited_classes(history, classes, settings.class_failures)
    diverse = math.ceil(settings.diversity * count)
    exploiting = range(diverse, diverse + math.ceil(settings.exploit * count))
    incumbents = _incumbents(points, ys, failed, settings.incumbents)
    ordering = range(exploiting.stop, exploiting.stop + math.ceil(settings.orders * count))
    strided = {t.point: t.strided for t in history if t.strided is not None}
    reordered = iter(_other_orders(space, points, ys, failed, classes, best, strided))
    typical: dict[str, np.ndarray] = {}  # skeleton -> median score of its points not taken, under each draw

    def take(i: int) -> None:
        taken[i] = True
        typical.pop(untried[i].family, None)

    for j in range(count):
        if rng.random() < settings.immigrants:
            p = space.sample(rng, exclude=seen | set(out))
            if p is not None:
                p = untried[row[seen.key(p)]]  # the representative of its equivalent points
                take(row[seen.key(p)])
                visited.add(classes.get(p.family))
                out.append(p)
                continue
        family_scores = {}
        for name, rows in members.items():
            if not taken[rows].all():
                if name in best:
                    family_scores[name] = best[name] + settings.noise_sd * gen.standard_normal()
                else:
                    if name not in typical:  # every draw's at once: recomputed only when a point is taken
                        typical[name] = np.median(scores[rows[~taken[rows]]], axis=0)
                    family_scores[name] = float(typical[name][j]) + centre - settings.noise_sd
        if not family_scores:
            break
        if j in exploiting:
            near = _other_launches(incumbents, members, untried, taken, seen)
            if near.size:
                pick = int(near[np.argmin(scores[near, j])])
                take(pick)
                out.append(untried[pick])
                continue
        if j in ordering:
            twin = next((p for p in reordered if p not in seen and p not in out), None)
            if twin is not None:
                if seen.key(twin) in row:
                    take(row[seen.key(twin)])
                out.append(twin)
                continue
        fresh = {name: v for name, v in family_scores.items() if classes.get(name) not in visited}
        if fresh and j < diverse:  # a class not tried yet: of the fewest moves, its best-scored skeleton
            chosen = min(fresh, key=lambda name: (_moves_in(classes[name]), fresh[name]))
        else:
            chosen = min(family_scores, key=family_scores.get)
        left = members[chosen]
        left = left[~taken[left]]
        pick = int(left[np.argmin(scores[left, j])])
        take(pick)
        visited.add(classes.get(untried[pick].family))
        out.append(untried[pick])
    return out


def _incumbents(points: Sequence[Point], ys: np.ndarray, failed: np.ndarray, count: int) -> list[Point]:
    """The `count` fastest measured points, fastest first (a slow candidate's lower bound
    counts as its time: it is never ahead of a measured faster one)."""
    timed = sorted((float(y), i) for i, (y, fail) in enumerate(zip(ys, failed)) if not fail)
    return [points[i] for _, i in timed[:count]]


def _other_launches(incumbents: Sequence[Point], members: dict, untried: Sequence[Point], taken: np.ndarray,
                    seen: Tried) -> np.ndarray:
    """Rows of `untried` not taken yet that are the first incumbent that has any with another
    launch shape (its kernel, the same program, launched otherwise)."""
    for inc in incumbents:
        rows = members.get(inc.family)
        if rows is None or LAUNCH not in inc.as_dict():
            continue
        mine = [kv for kv in seen.key(inc)[1] if kv[0] != LAUNCH]
        near = [r for r in rows if not taken[r] and [kv for kv in seen.key(untried[r])[1] if kv[0] != LAUNCH] == mine]
        if near:
            return np.array(near)
    return np.array([], dtype=np.int64)


def dimension_siblings(space: Space) -> dict[str, tuple[str, ...]]:
    """For each skeleton, the others that differ from it only in the OpenCL dimensions their
    maps are mapped onto (the same maps on the same levels, the dimensions permuted)."""
    groups: dict[str, list[str]] = {}
    for f in space.families:
        groups.setdefault(re.sub(r"\(d=\d\)", "(d=*)", f.name), []).append(f.name)
    return {name: tuple(n for n in names if n != name) for names in groups.values() if len(names) > 1
            for name in names}


# Sectors a warp's strided access touches for each one its contiguous access does: 32 lanes
# of 4-byte elements fill four 32-byte sectors contiguous, 32 sectors strided.
STRIDED_COST = 8.0


def _other_orders(space: Space, points: Sequence[Point], ys: np.ndarray, failed: np.ndarray, classes: dict,
                  measured: dict, strided: dict | None = None) -> list[Point]:
    """For each class's fastest measured point, its values on each dimension sibling of its
    skeleton not measured yet (siblings have the same slots: only the dimensions differ;
    stage 3 samples each skeleton's points, so the sibling's own sample may not hold these
    values), the most promising first: by the point's log time less what it would gain if
    its strided share of global traffic (`strided`: point -> resources.strided_share, as the
    worker measured it) were contiguous, STRIDED_COST times cheaper.  GEMV^T's split-k with
    its chunks on dimension 0 (5.4 ms, every access strided) comes before faster classes
    whose accesses are contiguous already: its other order ran in 0.26 ms."""
    siblings = dimension_siblings(space)
    strided = strided or {}
    fastest: dict = {}
    for p, y, fail in zip(points, ys, failed):
        cls = classes.get(p.family)
        if not fail and siblings.get(p.family) and (cls not in fastest or y < fastest[cls][0]):
            fastest[cls] = (float(y), p)

    def promise(yp):
        y, p = yp
        share = min(1.0, max(0.0, strided.get(p) or 0.0))
        return y + math.log(1.0 - share + share / STRIDED_COST), p.family

    return [Point(name, p.params) for _, p in sorted(fastest.values(), key=promise)
            for name in siblings[p.family] if name not in measured]


def _visited_classes(history: Sequence[Trial], classes: dict, failures: int) -> set:
    """The classes tried: those with a trial that did not fail (measured, slow, a duplicate,
    pending), or with `failures` failed ones (a class whose first points the device cannot
    run is tried again with others, a bounded number of times)."""
    failed: dict = {}
    visited = set()
    for t in history:
        cls = classes.get(t.point.family)
        if t.status in FAILED:
            failed[cls] = failed.get(cls, 0) + 1
            if failed[cls] >= failures:
                visited.add(cls)
        else:
            visited.add(cls)
    return visited


def _observations(history: Sequence[Trial], settings: Model) -> tuple[list[Point], np.ndarray, np.ndarray]:
    """(points, log time, which are failures) the model learns from: measured times ("ok"),
    slow candidates' lower bounds, failures a penalty slower than the slowest measurement."""
    timed = [(t.point, math.log(t.time_s)) for t in history if t.time_s is not None and t.time_s > 0]
    worst = max((y for _, y in timed), default=0.0) + settings.failure_penalty
    failed = [t.point for t in history if t.status in FAILED]  # a duplicate teaches nothing
    return ([p for p, _ in timed] + failed, np.asarray([y for _, y in timed] + [worst] * len(failed)),
            np.asarray([False] * len(timed) + [True] * len(failed)))


def _posterior(features: _Features, points: Sequence[Point], ys: np.ndarray, settings: Model,
               gen: np.random.Generator, count: int, failed: np.ndarray | None = None) -> np.ndarray:
    """`count` draws (columns) of the weights from their Gaussian posterior given log times
    `ys` at `points`.  With prior w ~ N(0, D), Phi = X / noise_sd and the centred times
    scaled alike, y = (ys - centre) / noise_sd, a draw is (Bhattacharya, Chakraborty and
    Mallick 2016: exact, in O(n^2 p) for n observations of p weights, where the precision
    matrix's Cholesky factor costs O(p^3) and p, with the pairs of values, is thousands):

        u ~ N(0, D),  d ~ N(0, I_n),  a = (Phi D Phi^T + I_n)^-1 (y - Phi u - d),  w = u + D Phi^T a"""
    phi = features.design(points) / settings.noise_sd
    if failed is not None and failed.any():
        # a failure is blamed on the point's values (and pairs of values), never on its skeleton,
        # class or moves: the same skeleton at other values may run, and fast
        phi[failed] *= features.value_columns
    prior = features.prior_variances(settings.prior_sd)
    y = (ys - float(ys.mean())) / settings.noise_sd
    u = np.sqrt(prior)[:, None] * gen.standard_normal((features.size, count))
    d = gen.standard_normal((len(points), count))
    gram = (phi * prior) @ phi.T + np.eye(len(points))
    a = np.linalg.solve(gram, y[:, None] - phi @ u - d)
    return u + prior[:, None] * (phi.T @ a)


class _Features:
    """Columns of the model's weights, shared across skeletons so that what one skeleton's
    measurements teach carries to the others: per skeleton class; per skeleton; per move a skeleton uses (a
    mapping scheme's lowering and dimension included); per (move, parameter, value); per
    (move, two parameters of one step, their values); per launch shape (dpia.explore.launch),
    over all skeletons and per skeleton class (a shape matters for the classes that map onto
    global ids only).  A point uses one column of each kind
    that applies to it.  `columns(points)` gives them as an array (vectorised: the search
    scores every untried point of a space of thousands at each batch)."""

    def __init__(self, space: Space):
        index: dict[tuple, int] = {}
        kinds: list[str] = []

        def column(key: tuple, kind: str) -> int:
            if key not in index:
                index[key] = len(kinds)
                kinds.append(kind)
            return index[key]

        self._plans: dict[str, tuple] = {}  # skeleton -> (fixed columns, [(slot, {value: column})], [pairs])
        for f in space.families:
            fixed = [column(("class", skeleton_class(f)), "class"), column(("skeleton", f.name), "skeleton")]
            singles, pairs = [], []
            for step in getattr(f, "steps", ()):
                fixed.append(column(("move", step.move, step.fixed), "move"))
                slots = list(step.slots)
                for param, slot in slots:
                    singles.append((slot, {v: column(("value", step.move, param, v), "value") for v in f.choices[slot]}))
                for (pa, sa), (pb, sb) in itertools.combinations(slots, 2):
                    pairs.append((sa, sb, {(va, vb): column(("pair", step.move, pa, pb, va, vb), "pair")
                                           for va in f.choices[sa] for vb in f.choices[sb]}))
            if LAUNCH in f.choices:  # no move's: shared by every skeleton, and by those of its class
                cls = skeleton_class(f)
                singles.append((LAUNCH, {v: column(("value", LAUNCH, v), "value") for v in f.choices[LAUNCH]}))
                singles.append((LAUNCH, {v: column(("value", LAUNCH, cls, v), "value") for v in f.choices[LAUNCH]}))
            covered = {slot for slot, _ in singles}
            for slot in sorted(set(f.choices) - covered):  # slots of a hand-made skeleton without steps
                singles.append((slot, {v: column(("value", f.name, slot, v), "value") for v in f.choices[slot]}))
            self._plans[f.name] = (fixed, singles, pairs)
        self._kinds = kinds
        self.size = len(kinds)
        self.per_point = max((len(a) + len(b) + len(c) for a, b, c in self._plans.values()), default=1)

    def prior_variances(self, prior_sd: float) -> np.ndarray:
        """A class's weight varies by `prior_sd`; a skeleton's own, moves, values and pairs of
        values each add up to a share of that variance over a point (classes differ most;
        single values matter more than each of the many pairs)."""
        share = {"class": 1.0, "skeleton": 0.1, "move": 0.25, "value": 0.25, "pair": 0.1}
        return np.array([prior_sd ** 2 * share[k] for k in self._kinds])

    def columns(self, points: Sequence[Point]) -> np.ndarray:
        """(points, per_point) column indices; unused places hold `size` (a zero weight)."""
        out = np.full((len(points), self.per_point), self.size, dtype=np.int64)
        for row, p in enumerate(points):
            fixed, singles, pairs = self._plans[p.family]
            params = dict(p.params)
            cols = list(fixed) + [codes[params[slot]] for slot, codes in singles]
            cols += [codes[(params[a], params[b])] for a, b, codes in pairs]
            out[row, : len(cols)] = cols
        return out

    @property
    def value_columns(self) -> np.ndarray:
        """1 for the columns of values and pairs of values, 0 for the others."""
        return np.array([k in ("value", "pair") for k in self._kinds], dtype=float)

    def design(self, points: Sequence[Point]) -> np.ndarray:
        x = np.zeros((len(points), self.size + 1))
        np.put_along_axis(x, self.columns(points), 1.0, axis=1)
        return x[:, : self.size]

    def predict(self, columns: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Predicted (centred) log time of the points with these `columns` under each column
        of `weights`: (points, weight draws)."""
        extended = np.vstack([weights, np.zeros((1, weights.shape[1]))])
        return extended[columns].sum(axis=1)


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
    "bayesian": Search("bayesian", bayesian, synchronous=True),
})


__all__ = ["FAILED", "PENDING", "SEARCHES", "Evolution", "Model", "Search", "Trial", "Tried", "bayesian", "evolutionary",
           "as_written", "dimension_siblings", "inert_slots", "random_search", "skeleton_class"]
