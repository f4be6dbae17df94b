"""The exploration's vocabulary: moves, each a macro rule or a lowering rule applied at one
node of a program, as data.

A `Move` names what it rewrites (its equation), the strategy it runs at the node, and its
numeric parameters: each divides a length at the node (`lengths`: the Nat the parameter
must divide, or the name of another parameter of the same move it must divide), so stage 3
draws its values from divisors.  `fixed` parameters are structural (a map's OpenCL
dimension): they are part of a skeleton, not tuned.

    ALGORITHMIC   stage 1: macro rules on the high-level program (functional.rules.macros)
    MAPPING       stage 2: a map onto global ids, work-groups, local ids or a loop

Every strategy here is a composition of registered rules, so a move's derivation replays
step by step and every step is a rule checked against the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from functional.expr import Expr, Lambda, Prim, applied, spine
from functional.nat import Nat
from functional.primitives import is_view_fn
from functional.rules import macros as M
from functional.rules.core import RULES
from functional.strategies import Strategy
from functional.types import ArrayType, ScalarType

ALGORITHMIC, MAPPING = "algorithmic", "mapping"
VECTOR_WIDTHS = (2, 4, 8, 16)  # OpenCL's vector types (3 is left out: it is padded to 4)


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


def _reduce(e: Expr) -> bool:
    return applied(e, "reduce", 3) is not None


def _map_of_scalars(e: Expr) -> bool:
    return computing_map(e) and isinstance(e.t, ArrayType) and isinstance(e.t.elem, ScalarType)


def _scalar_reduce(e: Expr) -> bool:
    return _reduce(e) and isinstance(e.t, ScalarType)


def _length(e: Expr) -> Nat:
    return e.t.size


def _map_length(e: Expr) -> dict:
    return {"n": _length(applied(e, "map", 2)[1])}


def _nested_lengths(first: str, second: str) -> Callable[[Expr], dict]:
    def lengths(e: Expr) -> dict:
        f, xs = applied(e, "map", 2)
        inner = applied(f.body, "map", 2) if isinstance(f, Lambda) else None
        out = {first: _length(xs)}
        if inner is not None:
            out[second] = _length(inner[1])
        return out

    return lengths


def _reduce_length(name: str) -> Callable[[Expr], dict]:
    return lambda e: {name: _length(applied(e, "reduce", 3)[2])}


def _tile_reduction_lengths(e: Expr) -> dict:
    """k divides the length of the dot products inside the tile (the rows' own length)."""
    xs = applied(e, "map", 2)[1]
    return {"k": xs.t.elem.size} if isinstance(xs.t.elem, ArrayType) else {}


def _nested(e: Expr) -> bool:
    return M._is_nested_map(e)


# ------------------------------------------------------------------------- the moves


def _rule(name: str) -> Callable[..., Strategy]:
    return lambda **params: RULES[name].strategy(**params)


ALGORITHMIC_MOVES: tuple[Move, ...] = (
    Move("split_join", ALGORITHMIC, "map f xs -> join (map (map f) (split n xs))", _rule("split_join"), ("n",),
         _map_length, computing_map),
    Move("tile_2d", ALGORITHMIC, "map (a => map (b => e) ys) xs -> untile (map (map (tile e)) (tiles n m))",
         M.tile_2d, ("n", "m"), _nested_lengths("n", "m"), _nested),
    Move("register_blocking_2d", ALGORITHMIC,
         "a nest of dot products -> l1 x l2 blocks of outer products per work-item", M.register_blocking_2d,
         ("l1", "l2"), _nested_lengths("l1", "l2"), _nested),
    Move("register_blocking_1d", ALGORITHMIC, "a nest of dot products -> l rows of A per work-item",
         M.register_blocking_1d, ("l",), lambda e: {"l": _length(applied(e, "map", 2)[1])}, _nested),
    Move("tile_reduction", ALGORITHMIC,
         "a tile of dot products -> reduce over pairs of k-wide tiles (the tiles a work-group shares)",
         M.tile_reduction, ("k",), _tile_reduction_lengths, _nested),
    Move("split_reduction", ALGORITHMIC,
         "reduce f z (map g (zip a b)) -> reduce f z (map (chunk => reduce f z (map g chunk)) (split k ...))",
         M.split_reduction, ("k",), _reduce_length("k"), _reduce),
    Move("reduce_split", ALGORITHMIC, "reduce f z xs -> reduce f z (map (reduce f z) (split n xs))  (f associative)",
         _rule("reduce_split"), ("n",), _reduce_length("n"), _reduce),
    Move("parallel_reduction", ALGORITHMIC,
         "reduce f z xs -> blocks of `block` values, each a tree of `local` items (the seed's vecSum)",
         M.parallel_reduction, ("block", "local"),
         lambda e: {"block": _length(applied(e, "reduce", 3)[2]), "local": "block"}, _scalar_reduce, ("local",)),
    Move("vectorize", ALGORITHMIC, "map f xs -> as_scalar (map (map_vec f) (as_vector w xs))", _rule("vectorize"),
         ("w",), lambda e: {"w": _length(applied(e, "map", 2)[1])}, _map_of_scalars, allowed={"w": VECTOR_WIDTHS}),
    Move("reduce_vectorize", ALGORITHMIC, "reduce f z xs -> the lanes' reduction of a reduction of w-vectors",
         _rule("reduce_vectorize"), ("w",), _reduce_length("w"), _scalar_reduce, allowed={"w": VECTOR_WIDTHS}),
    Move("map_map_interchange", ALGORITHMIC, "map (map f) -> transpose . map (map f) . transpose",
         _rule("map_map_interchange"), site=computing_map),
)


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

__all__ = ["ALGORITHMIC", "ALGORITHMIC_MOVES", "MAPPING", "MAPPING_MOVES", "MOVES", "Move", "computing_map"]
