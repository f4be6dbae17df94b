"""Arrays whose elements each work-item owns: when code shared by the items of a local
dimension (the storage analysis's ITEMS context) may keep a value its items write in parallel.

In `map_local 1 (fun(w) => ...)` whose function also runs `map_local 0` loops, every item of
dimension 0 runs the function's code; each gets its own private copy of the values it
computes.  A value written there by a parallel loop, `map_local 0 (fun(lane) => ...) xs` (or
a collective such as `mma_sync`, whose lanes are the items of dimension 0), has in each copy
only the item's own elements: the item l writes element l of the level the loop runs over.
Reading such a value is correct exactly where each item reads only elements it wrote:

    lane-owned v  <=>  every parallel write of v is at one level k of its type, by map_local d
                       (or a collective: d = 0, its result's outer level), under sequential
                       loops only, and every read of v reaches level k through sequential loops,
                       zips and projections and is consumed there by map_local d (element l by
                       item l) or as a collective's accumulator operand (lane l reads c[l])

Anything else (a sequential loop over level k, a layout view of v, v passed whole to a
function) might read another item's element, never written in this item's copy: the storage
analysis then stores v in global memory, shared (functional.storage).  The test is syntactic
and conservative: it accepts the tensor-core accumulators the rules build (fragments kept by
their lanes across a reduction's steps) and refuses what it cannot follow."""

from __future__ import annotations

import attrs

from .expr import App, Expr, Identifier, Lambda, Literal, NatLambda, Prim, spine
from .primitives import COLLECTIVES, LOOP_MAPS, LOW_REDUCTIONS, PARALLEL_MAPS, PRIMITIVES
from .types import ArrayType

SEQUENTIAL_MAPS = frozenset(n for n in LOOP_MAPS if PRIMITIVES[n].loop == "seq")


@attrs.frozen
class Lanes:
    """An array whose level `depth` (0: the outermost) is owned element by element by the items
    of local dimension `dim`."""

    depth: int
    dim: int


@attrs.frozen
class Pair:
    """A tuple whose components are tracked (None: not owned, free to read)."""

    fst: object
    snd: object


@attrs.frozen
class Zipped:
    """zip of two arrays, either tracked."""

    fst: object
    snd: object


class _Unsafe(Exception):
    """A read that may cross items."""


def written_lanes(e: Expr) -> Lanes | None:
    """The level and dimension at which the array `e` computes is written by parallel loops, when
    every such write is one map_local d (or a collective) under sequential loops only."""
    head, args = spine(e)
    if not isinstance(head, Prim):
        return None
    if head.name in COLLECTIVES:
        return Lanes(0, 0)
    if head.name == "map_local" and len(args) == 2:
        if _writes_in_parallel_inside(args[0]):
            return None
        return Lanes(0, head.params[0])
    if head.name in SEQUENTIAL_MAPS and len(args) == 2 and isinstance(args[0], Lambda):
        inner = written_lanes(args[0].body)
        return Lanes(inner.depth + 1, inner.dim) if inner else None
    return None


def _writes_in_parallel_inside(f: Expr) -> bool:
    from .expr import walk

    return any(isinstance(x, Prim) and (x.name in PARALLEL_MAPS or x.name in COLLECTIVES) for x in walk(f))


def reduction_lanes(e: Expr) -> Lanes | None:
    """`reduce_seq f z xs` whose accumulator is lane-owned: z and f's result written at one level
    by one dimension's items, f reading its accumulator only at its own lanes."""
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name in LOW_REDUCTIONS and len(args) == 3):
        return None
    f, z, xs = args
    lanes = written_lanes(z)
    if lanes is None or not (isinstance(f, Lambda) and isinstance(f.body, Lambda)):
        return None
    if written_lanes(f.body.body) != lanes:
        return None
    # f's other parameter, the element of xs, is read freely: xs is not tracked here
    return lanes if reads_own_lanes(f.body.body, {f.param.name: lanes}) else None


def lanes_of(e: Expr) -> Lanes | None:
    """The lanes of a value an ITEMS context computes in parallel: a lane-owned reduction's
    accumulator or a collective's result."""
    head, _ = spine(e)
    if isinstance(head, Prim) and head.name in COLLECTIVES:
        return Lanes(0, 0)
    return reduction_lanes(e)


def owned_size(t, lanes: Lanes) -> int | None:
    """How many items own the elements of level `lanes.depth` of an array of type `t`."""
    for _ in range(lanes.depth):
        if not isinstance(t, ArrayType):
            return None
        t = t.elem
    return t.size.as_int() if isinstance(t, ArrayType) else None


def reads_own_lanes(e: Expr, tracked: dict) -> bool:
    """Every read in `e` of the identifiers in `tracked` (name -> Lanes / Pair / Zipped) is its
    own item's (the module's equation)."""
    try:
        _check(e, dict(tracked))
        return True
    except _Unsafe:
        return False


def _element(d, parallel_dim: int | None):
    """The descriptor of an element of the array described by `d`, taken by a sequential loop
    (`parallel_dim` None) or by map_local `parallel_dim` (each item its own element)."""
    if d is None:
        return None
    if isinstance(d, Lanes):
        if parallel_dim is None:
            if d.depth == 0:
                raise _Unsafe("a sequential loop over the owned level")
            return Lanes(d.depth - 1, d.dim)
        if d.depth != 0 or d.dim != parallel_dim:
            raise _Unsafe("a parallel loop over another level or dimension")
        return None  # the item's own element: free to read
    if isinstance(d, Zipped):
        a, b = _element(d.fst, parallel_dim), _element(d.snd, parallel_dim)
        return None if a is None and b is None else Pair(a, b)
    raise _Unsafe("not an array")


def _view(x: Expr, env: dict):
    """The descriptor of `x` when it only names, projects or zips tracked values (else checks
    `x` as ordinary code and returns None)."""
    if isinstance(x, Identifier):
        return env.get(x.name)
    head, args = spine(x)
    if isinstance(head, Prim) and head.name in ("fst", "snd") and len(args) == 1:
        d = _view(args[0], env)
        if d is None:
            return None
        if not isinstance(d, Pair):
            raise _Unsafe("a projection of a tracked array")
        return d.fst if head.name == "fst" else d.snd
    if isinstance(head, Prim) and head.name == "zip" and len(args) == 2:
        a, b = _view(args[0], env), _view(args[1], env)
        return None if a is None and b is None else Zipped(a, b)
    _check(x, env)
    return None


def _bind(f: Expr, descriptors: list, env: dict) -> tuple[Expr, dict] | None:
    """f's body with its parameters bound to `descriptors` (None: f is not a lambda of them)."""
    env = dict(env)
    for d in descriptors:
        if not isinstance(f, Lambda):
            return None
        env.pop(f.param.name, None)
        if d is not None:
            env[f.param.name] = d
        f = f.body
    return f, env


def _check(e: Expr, env: dict) -> None:
    if isinstance(e, (Literal, Prim)):
        return
    if isinstance(e, Identifier):
        if env.get(e.name) is not None:
            raise _Unsafe(f"{e.name} read whole")
        return
    if isinstance(e, Lambda):
        inner = {k: v for k, v in env.items() if k != e.param.name}
        _check(e.body, inner)
        return
    if isinstance(e, NatLambda):
        _check(e.body, env)
        return
    head, args = spine(e)
    if isinstance(head, Lambda) and args:  # a beta redex: its arguments bound
        bound = _bind(head, [_view(a, env) for a in args], env)
        if bound is None:
            raise _Unsafe("an applied function")
        _check(*bound)
        return
    if isinstance(head, Prim):
        name = head.name
        if name in ("fst", "snd", "zip") and len(args) == PRIMITIVES[name].arity:
            if _view(e, env) is not None:
                raise _Unsafe(f"a tracked value's {name} used whole")
            return
        if (name in SEQUENTIAL_MAPS or name == "map_local") and len(args) == 2:
            d = _view(args[1], env)
            if d is None:
                _check(args[0], env)
                return
            element = _element(d, head.params[0] if name == "map_local" else None)
            bound = _bind(args[0], [element], env)
            if bound is None:
                raise _Unsafe(f"{name}'s function is not a lambda")
            _check(*bound)
            return
        if name in COLLECTIVES and len(args) == 3:
            c = _view(args[0], env)
            if c is not None and c != Lanes(0, 0):
                raise _Unsafe("a collective's accumulator not at its lanes")
            for operand in args[1:]:
                if _view(operand, env) is not None:
                    raise _Unsafe("a tracked value as a collective's operand")
            return
        if name in LOW_REDUCTIONS and len(args) == 3:
            f, z, xs = args
            if _view(z, env) is not None:
                raise _Unsafe("a tracked initial value")
            d = _view(xs, env)
            bound = _bind(f, [None, _element(d, None)], env)
            if bound is None:
                _check(f, env)
            else:
                _check(*bound)
            return
        if name == "let" and len(args) == 2:
            bound = _bind(args[1], [_view(args[0], env)], env)
            if bound is None:
                raise _Unsafe("let of a function value")
            _check(*bound)
            return
    if not isinstance(e, App):  # a size applied (NatApp), or another node: its parts
        for c in e.children():
            _check(c, env)
        return
    _check(head, env)
    for a in args:
        _check(a, env)


__all__ = ["Lanes", "Pair", "Zipped", "lanes_of", "owned_size", "reads_own_lanes", "reduction_lanes",
           "written_lanes"]
