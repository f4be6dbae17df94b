"""The seed's first exploration phase, automatic: macro rules applied to the high-level
program in every order the heuristics allow, before any OpenCL decision.

    variants = algorithmic_variants(mm)     # [("tile_2d(16, 16)", expr), ("tile_2d(16, 16); register_blocking_2d(2, 2)", expr), ...]

Each macro (`MACROS`: tiling, register blocking, splitting a dot product, vectorising a
map of scalars) is applied at the outermost place where it applies, with its parameters from a small
set; sequences grow one macro at a time up to `Heuristics.length`.  The seed's heuristics
prune the result: the nesting depth of maps (`max_map_depth`), how often a macro is used
(`per_macro`), and the distance between the reduction's addition and the multiplication it
adds (`max_add_mul_distance`: a rewrite that moves the product far from its reduction only
costs).  Variants are deduplicated by their printed form.

The second phase maps a variant to OpenCL (`MAPPINGS`): "global" (the default schedule's
placement: outermost maps on global ids) or "workgroups" (the two outermost computing map
levels on work-groups, the next two on local ids).  `macro_family(program)` makes the pair
an exploration family (dpia.space.Family) whose points are textual: they pickle, print in
the database and replay.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence

import attrs

from functional.errors import FunctionalError
from functional.expr import Expr, Prim, spine
from functional.infer import infer
from functional.primitives import MAPS, REDUCTIONS
from functional.rules import macros as M
from functional.schedules import program_body
from functional.strategies import Strategy, seq, top_down

from ..programs import size_vars

MAP_LIKE = MAPS


class MacroError(FunctionalError):
    """A macro sequence that does not parse (text from a database or a user)."""


@attrs.frozen
class Macro:
    name: str
    make: Callable[..., Strategy]  # the macro's parameters -> its strategy
    params: tuple  # parameter tuples tried


def _vectorize(w: int) -> Strategy:
    """A map of scalars -> a map of `map_vec` over `as_vector w` (rule `vectorize`)."""
    return M.r("vectorize", w=w)


MACROS = (
    Macro("tile_2d", M.tile_2d, ((8, 8), (16, 16), (32, 32))),
    Macro("register_blocking_2d", M.register_blocking_2d, ((2, 2), (4, 4))),
    Macro("split_reduction", M.split_reduction, ((4,), (8,), (16,))),
    Macro("vectorize", _vectorize, ((4,), (8,))),
)
_BY_NAME = {m.name: m for m in MACROS}


@attrs.frozen
class Heuristics:
    length: int = 2  # macros per sequence
    per_macro: int = 1  # uses of one macro in a sequence
    max_map_depth: int = 8
    max_add_mul_distance: int = 4


LOOPS = MAPS | REDUCTIONS


def map_depth(e: Expr) -> int:
    """The most maps nested along one path of `e`."""
    head, args = spine(e)
    if isinstance(head, Prim):
        below = max((map_depth(a) for a in args), default=0)
        return below + (1 if head.name in MAP_LIKE and args else 0)
    return max((map_depth(c) for c in e.children()), default=0)


def add_mul_distance(e: Expr) -> int:
    """The largest distance, over reductions, from the reduction to the nearest `*` in its
    function or data, counted in maps and reductions passed (0 when none multiplies)."""
    worst = 0
    for node in _nodes(e):
        head, args = spine(node)
        if isinstance(head, Prim) and head.name in LOOPS - MAP_LIKE and len(args) == 3:
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


def macro_strategy(text: str) -> Strategy:
    """`"tile_2d(16, 16); register_blocking_2d(2, 2)"` -> the macros in order, each at the
    outermost place where it applies (MacroError for text that is not such a sequence)."""
    steps = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        m = re.fullmatch(r"(\w+)\(([\d, ]*)\)", part)
        if m is None or m.group(1) not in _BY_NAME:
            raise MacroError(f"not a macro: {part!r} (known: {', '.join(_BY_NAME)})")
        values = tuple(int(v) for v in m.group(2).replace(" ", "").split(",") if v)
        steps.append(top_down(_BY_NAME[m.group(1)].make(*values)))
    if not steps:
        raise MacroError("an empty macro sequence")
    return program_body(seq(*steps))


def _text(name: str, params: tuple) -> str:
    return f"{name}({', '.join(map(str, params))})"


def algorithmic_variants(program: Expr, heuristics: Heuristics = Heuristics(),
                         macros: Sequence[Macro] = MACROS) -> list[tuple[str, Expr]]:
    """Every macro sequence (up to heuristics.length) that applies to `program` and passes
    the heuristics, with its result; one per distinct result."""
    typed = program if program.t is not None else infer(program)
    return list(_memo_variants(_ByText(typed), heuristics, tuple(macros)))


class _ByText:
    """A program compared by its printed form (so the enumeration can be memoised)."""

    def __init__(self, program: Expr):
        self.program, self.text = program, str(program)

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ByText) and self.text == other.text


@functools.lru_cache(maxsize=16)  # pure memoisation: the same program and settings give the same variants
def _memo_variants(keyed: _ByText, heuristics: Heuristics, macros: tuple) -> tuple:
    return tuple(_enumerate(keyed.program, heuristics, macros))


def _enumerate(typed: Expr, heuristics: Heuristics, macros: tuple) -> list[tuple[str, Expr]]:
    seen = {str(typed)}
    frontier = [("", typed)]
    out: list[tuple[str, Expr]] = []
    for _ in range(heuristics.length):
        grown = []
        for text, expr in frontier:
            for macro in macros:
                if text.count(macro.name + "(") >= heuristics.per_macro:
                    continue
                for params in macro.params:
                    step = _text(macro.name, params)
                    result = program_body(top_down(macro.make(*params)))(expr)
                    if not result.ok:
                        continue
                    key = str(result.expr)
                    if key in seen or not _acceptable(result.expr, heuristics):
                        continue
                    seen.add(key)
                    sequence = f"{text}; {step}" if text else step
                    grown.append((sequence, result.expr))
        out += grown
        frontier = grown
    return out


def _acceptable(e: Expr, h: Heuristics) -> bool:
    return map_depth(e) <= h.max_map_depth and add_mul_distance(e) <= h.max_add_mul_distance


# --------------------------------------------------------------------------- phase two

MAPPINGS = ("global", "workgroups")


def mapped_strategy(macros: str, mapping: str) -> Strategy:
    """The macro sequence, then the mapping to OpenCL (module level: a family's `make`)."""
    from functional import schedules as S

    if mapping == "global":
        tail = S.default_schedule()
    elif mapping == "workgroups":
        tail = S.program_body(seq(S.parallel([("map_workgroup", 1), ("map_workgroup", 0), ("map_local", 1),
                                              ("map_local", 0)]), S.lower_reductions()))
    else:
        raise MacroError(f"unknown mapping {mapping!r} (known: {', '.join(MAPPINGS)})")
    return S.named(f"{macros} | {mapping}", seq(macro_strategy(macros), tail))


def macro_family(program: Expr, heuristics: Heuristics = Heuristics()):
    """An exploration family of the program's algorithmic variants times MAPPINGS, or None
    when no macro applies.  Every size must be a multiple of the sequence's numbers."""
    from .space import Family

    typed = program if program.t is not None else infer(program)
    variants = algorithmic_variants(typed, heuristics)
    if not variants:
        return None
    sizes = [v.name for v in size_vars(typed)]
    return Family("macro_rewrites", _AllSizes(tuple(sizes)), mapped_strategy,
                  {"macros": tuple(text for text, _ in variants), "mapping": MAPPINGS}, _EverySize(tuple(sizes)))


@attrs.frozen
class _AllSizes:
    """Roles: every size variable is its own role (picklable, unlike a closure)."""

    names: tuple

    def __call__(self, program: Expr) -> dict[str, str]:
        return {n: n for n in self.names}


@attrs.frozen
class _EverySize:
    """Needs: every size a multiple of every number in the macro sequence (a conservative
    bound: which size a macro splits depends on where it applied)."""

    names: tuple

    def __call__(self, params) -> dict[str, int]:
        numbers = [int(v) for v in re.findall(r"\d+", dict(params)["macros"])]
        d = math.lcm(*numbers) if numbers else 1
        return {n: d for n in self.names}


__all__ = ["MACROS", "MAPPINGS", "Heuristics", "Macro", "MacroError", "add_mul_distance", "algorithmic_variants",
           "macro_family", "macro_strategy", "map_depth", "mapped_strategy"]
