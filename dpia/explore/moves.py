"""The exploration's vocabulary: moves, each a macro rule or a lowering rule applied at one
node of a program, as data.

A `Move` names what it rewrites (its equation), the strategy it runs at the node, and its
numeric parameters: each divides a length at the node (`lengths`: the Nat the parameter
must divide, or the name of another parameter of the same move it must divide), so stage 3
draws its values from divisors.  `fixed` parameters are structural (a map's OpenCL
dimension): they are part of a skeleton, not tuned.

    ALGORITHMIC   stage 1: the macros of functional.rules.vocabulary (declared there, with
                  their equations, preconditions and random instances)
    MAPPING       stage 2: a map onto global ids, work-groups, local ids or a loop

Every strategy here is a composition of registered rules, so a move's derivation replays
step by step and every step is a rule checked against the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from functional.expr import Expr, Prim, spine
from functional.nat import Nat
from functional.primitives import is_view_fn
from functional.rules.core import RULES
from functional.rules.vocabulary import MACROS, Macro
from functional.strategies import Strategy

ALGORITHMIC, MAPPING = "algorithmic", "mapping"


@attrs.frozen
class Move:
    """One entry of the vocabulary (see the module's docstring)."""

    name: str
    stage: str
    equation: str
    make: Callable[..., Strategy]  # (**fixed, **tuned) -> the strategy run at the node
    tuned: tuple[str, ...] = ()
    lengths: Callable[[Expr], Mapping[str, Nat | str]] | None = None  # tuned parameter -> what it divides
    site: Callable[[Expr], bool] = lambda e: True  # a cheap test before the strategy is tried
    powers_of_two: tuple[str, ...] = ()  # tuned parameters that must be powers of two
    allowed: Mapping[str, tuple[int, ...]] = attrs.field(factory=dict)  # tuned parameters limited to these values


# ------------------------------------------------------------------------- node tests


def computing_map(e: Expr) -> bool:
    """`map f xs` whose function computes (not a layout view like `map join`)."""
    head, args = spine(e)
    return isinstance(head, Prim) and head.name == "map" and len(args) == 2 and not is_view_fn(args[0])


# ------------------------------------------------------------------------- the moves


def _applies(macro: Macro) -> Callable[[Expr], bool]:
    return lambda e: macro.lengths(e) is not None


def _from_macro(macro: Macro) -> Move:
    """Stage 1's move for a macro of the vocabulary (functional.rules.vocabulary): declared
    there once, with its equation, preconditions, parameters and the lengths they divide."""
    return Move(macro.name, ALGORITHMIC, macro.equation, macro.strategy, macro.params,
                lambda e: macro.lengths(e) or {}, _applies(macro), tuple(sorted(macro.power_of_two)),
                dict(macro.values))


ALGORITHMIC_MOVES: tuple[Move, ...] = tuple(_from_macro(m) for m in MACROS.values())
VECTOR_WIDTHS = dict(MACROS["vectorize"].values)["w"]  # the vocabulary's: OpenCL's vector types


def _lower(level: str) -> Callable[..., Strategy]:
    return lambda **params: RULES[f"lower_{level}"].strategy(**params)


MAPPING_MOVES: tuple[Move, ...] = (
    Move("lower_map_global", MAPPING, "map f xs -> map_global d f xs", _lower("map_global"), site=computing_map),
    Move("lower_map_workgroup", MAPPING, "map f xs -> map_workgroup d f xs", _lower("map_workgroup"),
         site=computing_map),
    Move("lower_map_local", MAPPING, "map f xs -> map_local d f xs", _lower("map_local"), site=computing_map),
    Move("lower_map_seq", MAPPING, "map f xs -> map_seq f xs", _lower("map_seq"), site=computing_map),
)

MOVES: Mapping[str, Move] = {m.name: m for m in ALGORITHMIC_MOVES + MAPPING_MOVES}

__all__ = ["ALGORITHMIC", "ALGORITHMIC_MOVES", "MAPPING", "MAPPING_MOVES", "MOVES", "Move", "VECTOR_WIDTHS", "computing_map"]
