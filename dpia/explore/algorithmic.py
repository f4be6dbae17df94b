"""Stage 1, algorithmic: the macro moves of dpia.explore.moves (ALGORITHMIC_MOVES) applied to
the prepared high-level program at every position where they apply, in sequences of up to
`Heuristics.length` moves, before any OpenCL decision.

    variants = algorithmic_variants(body, sizes)   # [Variant(steps, slots, expr), ...], the empty one first

Each move is tried at every node with trial values for its parameters (`trial_slots`): a
value from the divisors of the length the parameter splits, evaluated at the real sizes
(stage 3 later draws the others).  A parameter whose length is another slot's trial value
(a register block inside a tile) is recorded as dividing that slot.  Lift's heuristics prune
the result: the nesting depth of maps (`max_map_depth`), how often one move is used
(`per_move`), the distance between a reduction and the multiplication it adds
(`max_add_mul_distance`); variants are deduplicated by their printed program and bounded in
number (`max_variants`, breadth first: shorter sequences first).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs

from functional.errors import FunctionalError
from functional.expr import Expr, Prim, spine
from functional.nat import NatError, evaluate
from functional.primitives import MAPS, REDUCTIONS
from functional.strategies import children, replace_at

from .moves import ALGORITHMIC_MOVES, Move
from .space import Step

TRIAL = 16  # trial values are the divisors nearest this (in log scale), distinct across slots where possible
MAX_VALUES = 16  # candidate values per slot
MAX_VALUE = 1 << 16  # the largest split considered


@attrs.frozen
class Heuristics:
    length: int = 2  # moves per sequence (3 gives mm 865 variants: 40 s)
    per_move: int = 1  # uses of one move in a sequence
    max_map_depth: int = 8
    max_add_mul_distance: int = 4
    max_variants: int = 160  # mm has 129 at length 2
    loops: bool = True  # stage 2's loop schemes (dpia.explore.mapping.loop_schemes); False: maps only


@attrs.frozen
class Slot:
    """A tuned parameter of a variant: its candidate values, the value stage 1 tried, and
    the slot its value must divide (None: a length of the program)."""

    values: tuple[int, ...]
    trial: int
    divides: str | None = None
    sizes: tuple[str, ...] = ()  # the size variables of the length it splits (their facts must admit it)


@attrs.frozen
class Variant:
    steps: tuple[Step, ...]
    slots: Mapping[str, Slot]
    expr: Expr

    @property
    def text(self) -> str:
        return "; ".join(map(str, self.steps))


# ------------------------------------------------------------------------- heuristics


LOOPS = MAPS | REDUCTIONS


def map_depth(e: Expr) -> int:
    """The most maps nested along one path of `e`."""
    head, args = spine(e)
    if isinstance(head, Prim):
        below = max((map_depth(a) for a in args), default=0)
        return below + (1 if head.name in MAPS and args else 0)
    return max((map_depth(c) for c in e.children()), default=0)


def add_mul_distance(e: Expr) -> int:
    """The largest distance, over reductions, from the reduction to the nearest `*` in its
    function or data, counted in maps and reductions passed (0 when none multiplies)."""
    worst = 0
    for node in _nodes(e):
        head, args = spine(node)
        if isinstance(head, Prim) and head.name in LOOPS - MAPS and len(args) == 3:
            found = [d for a in (args[0], args[2]) if (d := _nearest_mul(a, 0)) is not None]
            if found:
                worst = max(worst, min(found))
    return worst


def _nodes(e: Expr):
    yield e
    for c in e.children():
        yield from _nodes(c)


def _nearest_mul(e: Expr, depth: int) -> int | None:
    head, args = spine(e)
    if isinstance(head, Prim):
        if head.name == "mul":
            return depth
        inner = depth + (1 if head.name in LOOPS and args else 0)
        found = [d for a in args if (d := _nearest_mul(a, inner)) is not None]
    else:
        found = [d for c in e.children() if (d := _nearest_mul(c, depth)) is not None]
    return min(found, default=None)


def acceptable(e: Expr, h: Heuristics) -> bool:
    return map_depth(e) <= h.max_map_depth and add_mul_distance(e) <= h.max_add_mul_distance


# ------------------------------------------------------------------------- slot values


def divisor_values(length: int, powers_of_two: bool = False) -> tuple[int, ...]:
    """Candidate values for a parameter splitting `length`: its divisors from 2 up, powers of
    two first; other divisors only where fewer than four powers of two divide it."""
    if length < 2:
        return ()
    small = [d for d in range(2, min(length, MAX_VALUE) + 1) if length % d == 0] if length <= 1 << 20 else \
        [1 << k for k in range(1, 17) if length % (1 << k) == 0]
    pows = [d for d in small if d & (d - 1) == 0]
    if powers_of_two or len(pows) >= 4:
        return tuple(pows[:MAX_VALUES])
    others = sorted((d for d in small if d & (d - 1)), key=lambda d: (abs(d.bit_length() - TRIAL.bit_length()), d))
    return tuple(sorted(pows + others[: MAX_VALUES - len(pows)]))


def _only(values: tuple[int, ...], allowed: tuple[int, ...] | None) -> tuple[int, ...]:
    return values if allowed is None else tuple(v for v in values if v in allowed)


def _trial(values: tuple[int, ...], used: set[int], below: int | None = None) -> int:
    pool = [v for v in values if below is None or (v < below and below % v == 0)] or list(values)
    fresh = [v for v in pool if v not in used] or pool
    return min(fresh, key=lambda v: (abs(v.bit_length() - TRIAL.bit_length()), v))


def trial_slots(move: Move, node: Expr, sizes: Mapping[str, int], slots: Mapping[str, Slot],
                first: int) -> dict[str, tuple[str, Slot]] | None:
    """{parameter: (slot name, Slot)} for the move at `node`, or None when a parameter has no
    candidate value (its length has no divisor, or is not known at these sizes)."""
    try:
        lengths = move.lengths(node) if move.lengths else {}
    except (AttributeError, IndexError, TypeError):
        return None
    used = {s.trial for s in slots.values()}
    out: dict[str, tuple[str, Slot]] = {}
    for k, param in enumerate(move.tuned):
        name = f"s{first + k}"
        target = lengths.get(param)
        pow2 = param in move.powers_of_two
        allowed = move.allowed.get(param)
        if isinstance(target, str):  # divides another parameter of this move
            other_name, other = out[target]
            values = _only(divisor_values(max(other.values), pow2), allowed)
            slot = Slot(values, _trial(values, used, other.trial), other_name, other.sizes) if values else None
        elif target is None:
            return None
        else:
            try:
                length = int(evaluate(target, sizes))
            except (NatError, TypeError, ValueError):
                return None
            names = tuple(sorted(v.name for v in target.vars)) if hasattr(target, "vars") else ()
            parent = next((n for n, s in slots.items() if s.trial == length), None)
            if parent is not None:  # a length that is an earlier slot's value: that slot's divisors
                values = _only(divisor_values(max(slots[parent].values), pow2), allowed)
                inherited = tuple(sorted(set(names) | set(slots[parent].sizes)))
                slot = Slot(values, _trial(values, used, length + 1), parent, inherited) if values else None
            else:
                values = _only(divisor_values(length, pow2), allowed)
                slot = Slot(values, _trial(values, used), None, names) if values else None
        if slot is None:
            return None
        used.add(slot.trial)
        out[param] = (name, slot)
    return out


# ------------------------------------------------------------------------- enumeration


def positions(e: Expr, path: tuple = ()) -> Iterator[tuple[tuple, Expr]]:
    """Every node with its path, parents first."""
    yield path, e
    for k, c in enumerate(children(e)):
        yield from positions(c, path + (k,))


def algorithmic_variants(body: Expr, sizes: Mapping[str, int], heuristics: Heuristics = Heuristics(),
                         moves: tuple[Move, ...] = ALGORITHMIC_MOVES) -> list[Variant]:
    """The empty variant, then every sequence of moves (breadth first) that applies and
    passes the heuristics, one per distinct program."""
    start = Variant((), {}, body)
    seen, out, frontier = {str(body)}, [start], [start]
    for _ in range(heuristics.length):
        grown: list[Variant] = []
        for variant in frontier:
            for move in moves:
                if sum(s.move == move.name for s in variant.steps) >= heuristics.per_move:
                    continue
                for path, node in positions(variant.expr):
                    if len(out) + len(grown) >= heuristics.max_variants:
                        return out + grown
                    grown += _extend(variant, move, path, node, sizes, heuristics, seen)
        out += grown
        frontier = grown
    return out


def _extend(variant: Variant, move: Move, path: tuple, node: Expr, sizes, heuristics, seen: set) -> list[Variant]:
    if node.t is None or not move.site(node):
        return []
    slots = trial_slots(move, node, sizes, variant.slots, len(variant.slots))
    if slots is None:
        return []
    try:
        result = move.make(**{p: s.trial for p, (_, s) in slots.items()})(node)
    except (FunctionalError, ValueError):
        return []
    if not result.ok:
        return []
    expr = replace_at(variant.expr, path, result.expr)
    key = str(expr)
    if key in seen or not acceptable(expr, heuristics):
        return []
    seen.add(key)
    step = Step(move.name, path, (), tuple((p, name) for p, (name, _) in slots.items()))
    return [Variant(variant.steps + (step,), {**variant.slots, **{n: s for n, s in slots.values()}}, expr)]


__all__ = ["Heuristics", "Slot", "Variant", "acceptable", "add_mul_distance", "algorithmic_variants", "divisor_values",
           "map_depth", "positions", "trial_slots"]
