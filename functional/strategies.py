"""The strategy language (ELEVATE, ICFP 2020), in Python.

A strategy maps a typed program to `Success(program, steps)` or `Failure(reason)`.  The
core is a handful of combinators; the power is the vocabulary of rules (`rules/`):

    id, fail                 always succeed / always fail
    seq(s, t)   s >> t       s, then t on its result
    lchoice(s, t)  s | t     s, or t where s fails
    try_(s)                  s | id
    repeat(s, fuel)          s until it fails (at most `fuel` times, else a Failure)
    all_(s), one(s), some(s) s on every / the first / every possible child
    top_down(s), bottom_up(s)   s at ONE place, searched pre-order / post-order
    normalize(s, fuel)       top_down(s) until it applies nowhere
    position(n, s)           s at the n-th place where it applies (pre-order)
    body(s), function(s), argument(s), fmap(s)   program locations

Every successful rule application is a `Step(rule, params, path)`; paths are child indices
from the root (App: 0 function, 1 argument; Lambda / NatLambda: 0 body; NatApp: 0
function), so a derivation can be printed, stored as text and replayed.
"""

from __future__ import annotations

from typing import Callable

import attrs

from .expr import App, Expr, Lambda, NatApp, NatLambda, Prim, spine
from .primitives import MAPS


@attrs.frozen
class Step:
    rule: str
    params: tuple  # tuple[tuple[str, Any], ...]
    path: tuple[int, ...]

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params)
        where = ".".join(map(str, self.path)) or "root"
        return f"{self.rule}({args}) at {where}"


@attrs.frozen
class Success:
    expr: Expr
    steps: tuple[Step, ...] = ()

    ok = True


@attrs.frozen
class Failure:
    reason: str

    ok = False


Result = Success | Failure


class Strategy:
    """A named function from programs to results; `>>` sequences, `|` chooses."""

    def __init__(self, name: str, run: Callable[[Expr], Result]):
        self.name = name
        self._run = run

    def __call__(self, e: Expr) -> Result:
        return self._run(e)

    def __rshift__(self, other: "Strategy") -> "Strategy":
        return seq(self, other)

    def __or__(self, other: "Strategy") -> "Strategy":
        return lchoice(self, other)

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


# ----------------------------------------------------------------------------- children


def children(e: Expr) -> tuple[Expr, ...]:
    return e.children()


def with_child(e: Expr, k: int, new: Expr) -> Expr:
    """`e` with child k replaced.  Rules preserve types, so `e` keeps its type."""
    if isinstance(e, App):
        return attrs.evolve(e, fun=new) if k == 0 else attrs.evolve(e, arg=new)
    if isinstance(e, (Lambda, NatLambda)):
        return attrs.evolve(e, body=new)
    if isinstance(e, NatApp):
        return attrs.evolve(e, fun=new)
    raise IndexError(f"{type(e).__name__} has no child {k}")


def _under(k: int, r: Success) -> tuple[Step, ...]:
    return tuple(attrs.evolve(s, path=(k,) + s.path) for s in r.steps)


def at_path(e: Expr, path: tuple[int, ...]) -> Expr:
    for k in path:
        e = children(e)[k]
    return e


def replace_at(e: Expr, path: tuple[int, ...], new: Expr) -> Expr:
    parents = []  # iterative and linear in the path's length (deep programs)
    for k in path:
        parents.append(e)
        e = children(e)[k]
    for parent, k in zip(reversed(parents), reversed(path)):
        new = with_child(parent, k, new)
    return new


# ---------------------------------------------------------------------------- basics

LABEL_CHARS = 60  # a strategy named in a failure's chain of places: long ones are cut


def _label(s: Strategy) -> str:
    """`s` as a failure names it: whole when short; a named strategy's text can run to
    thousands of characters and would be repeated at every level of the chain."""
    text = str(s)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 3] + "..."


identity = Strategy("id", lambda e: Success(e))
fail = Strategy("fail", lambda e: Failure("fail"))


def seq(*ss: Strategy) -> Strategy:
    def run(e: Expr) -> Result:
        steps: tuple[Step, ...] = ()
        for s in ss:
            r = s(e)
            if not r.ok:
                return Failure(f"{_label(s)}: {r.reason}")
            e, steps = r.expr, steps + r.steps
        return Success(e, steps)

    return Strategy(" >> ".join(map(str, ss)), run)


def lchoice(a: Strategy, b: Strategy) -> Strategy:
    def run(e: Expr) -> Result:
        r = a(e)
        if r.ok:
            return r
        r2 = b(e)
        return r2 if r2.ok else Failure(f"{r.reason}; and {r2.reason}")

    return Strategy(f"({a} | {b})", run)


def try_(s: Strategy) -> Strategy:
    return Strategy(f"try({s})", lambda e: r if (r := s(e)).ok else Success(e))


def repeat(s: Strategy, fuel: int = 1000) -> Strategy:
    """Apply `s` until it fails.  Running out of fuel is a Failure: a strategy that loops
    is a bug in the strategy, reported rather than hidden."""

    def run(e: Expr) -> Result:
        steps: tuple[Step, ...] = ()
        for _ in range(fuel + 1):  # `fuel` applications, then one more try that must fail
            r = s(e)
            if not r.ok:
                return Success(e, steps)
            e, steps = r.expr, steps + r.steps
        return Failure(f"repeat({_label(s)}) ran out of fuel after {fuel} applications (does it loop?)")

    return Strategy(f"repeat({s})", run)


# ------------------------------------------------------------------------- traversals


def all_(s: Strategy) -> Strategy:
    def run(e: Expr) -> Result:
        steps: tuple[Step, ...] = ()
        for k, c in enumerate(children(e)):
            r = s(c)
            if not r.ok:
                return Failure(f"all({_label(s)}): child {k}: {r.reason}")
            e = with_child(e, k, r.expr)
            steps += _under(k, r)
        return Success(e, steps)

    return Strategy(f"all({s})", run)


def one(s: Strategy) -> Strategy:
    def run(e: Expr) -> Result:
        for k, c in enumerate(children(e)):
            r = s(c)
            if r.ok:
                return Success(with_child(e, k, r.expr), _under(k, r))
        return Failure(f"one({_label(s)}): no child where it applies")

    return Strategy(f"one({s})", run)


def some(s: Strategy) -> Strategy:
    def run(e: Expr) -> Result:
        steps: tuple[Step, ...] = ()
        hit = False
        for k, c in enumerate(children(e)):
            r = s(c)
            if r.ok:
                hit = True
                e = with_child(e, k, r.expr)
                steps += _under(k, r)
        return Success(e, steps) if hit else Failure(f"some({_label(s)}): no child where it applies")

    return Strategy(f"some({s})", run)


def _first_place(s: Strategy, e: Expr, children_first: bool) -> Result | None:
    """`s` at the first node (pre-order, or post-order when `children_first`) where it
    succeeds.  The path is kept in one list while searching and prefixed to the steps once,
    and the program is rebuilt along that path once: linear in the depth."""
    path: list[int] = []

    def search(x: Expr) -> Result | None:
        if not children_first and (r := s(x)).ok:
            return r
        for k, c in enumerate(children(x)):
            path.append(k)
            if (r := search(c)) is not None:
                return r
            path.pop()
        if children_first and (r := s(x)).ok:
            return r
        return None

    r = search(e)
    return None if r is None else _placed(e, tuple(path), r)


def _placed(e: Expr, path: tuple[int, ...], r: Success) -> Success:
    """The result `r` of a strategy run on the node at `path`, put back into `e`."""
    return Success(replace_at(e, path, r.expr), tuple(attrs.evolve(st, path=path + st.path) for st in r.steps))


def top_down(s: Strategy) -> Strategy:
    """`s` at the first place it applies, searching parents before children."""
    return Strategy(f"top_down({s})",
                    lambda e: _first_place(s, e, False) or Failure(f"top_down({_label(s)}): applies nowhere"))


def bottom_up(s: Strategy) -> Strategy:
    """`s` at the first place it applies, searching children before parents."""
    return Strategy(f"bottom_up({s})",
                    lambda e: _first_place(s, e, True) or Failure(f"bottom_up({_label(s)}): applies nowhere"))


def normalize(s: Strategy, fuel: int = 10000) -> Strategy:
    return Strategy(f"normalize({s})", repeat(top_down(s), fuel))


def position(n: int, s: Strategy) -> Strategy:
    """`s` at the n-th place (0-based, pre-order) where it applies."""

    def run(e: Expr) -> Result:
        seen = 0
        stack: list[tuple[Expr, tuple | None]] = [(e, None)]  # paths as linked (index, parent) pairs
        while stack:
            node, link = stack.pop()
            r = s(node)
            if r.ok:
                if seen == n:
                    rev: list[int] = []
                    while link is not None:
                        rev.append(link[0])
                        link = link[1]
                    return _placed(e, tuple(reversed(rev)), r)
                seen += 1
            stack.extend((c, (k, link)) for k, c in reversed(list(enumerate(children(node)))))
        return Failure(f"position({n}, {_label(s)}): applies at only {seen} place(s)")

    return Strategy(f"position({n}, {s})", run)


# -------------------------------------------------------------------------- locations


def body(s: Strategy) -> Strategy:
    def run(e: Expr) -> Result:
        if not isinstance(e, (Lambda, NatLambda)):
            return Failure(f"body({_label(s)}): not a function")
        r = s(e.body)
        return Success(with_child(e, 0, r.expr), _under(0, r)) if r.ok else Failure(f"body({_label(s)}): {r.reason}")

    return Strategy(f"body({s})", run)


def _child_at(k: int, label: str, s: Strategy) -> Strategy:
    def run(e: Expr) -> Result:
        if not isinstance(e, App):
            return Failure(f"{label}({_label(s)}): not an application")
        r = s(children(e)[k])
        return Success(with_child(e, k, r.expr), _under(k, r)) if r.ok else Failure(f"{label}({_label(s)}): {r.reason}")

    return Strategy(f"{label}({s})", run)


def function(s: Strategy) -> Strategy:
    return _child_at(0, "function", s)


def argument(s: Strategy) -> Strategy:
    return _child_at(1, "argument", s)


MAP_LIKE = MAPS  # every map-like primitive (functional.primitives declares which)


def fmap(s: Strategy) -> Strategy:
    """`s` inside the function of a map (`map f xs` or `map f`): in the body of `f` when it
    is a lambda, else on `f` itself."""

    def run(e: Expr) -> Result:
        head, args = spine(e)
        if not (isinstance(head, Prim) and head.name in MAP_LIKE and args):
            return Failure(f"fmap({_label(s)}): not a map")
        path = (0,) * (len(args) - 1) + (1,)  # the first argument, f
        f = at_path(e, path)
        inner = body(s) if isinstance(f, Lambda) else s
        r = inner(f)
        if not r.ok:
            return Failure(f"fmap({_label(s)}): {r.reason}")
        return _placed(e, path, r)

    return Strategy(f"fmap({s})", run)


def apply_strategy(s: Strategy, program: Expr) -> Success:
    """Run `s` on a program (typed first); raise StrategyError on failure."""
    from .errors import StrategyError
    from .infer import infer

    typed = program if program.t is not None else infer(program)
    r = s(typed)
    if not r.ok:
        raise StrategyError(r.reason, where=None)
    return r


__all__ = [
    "Step", "Success", "Failure", "Strategy", "identity", "fail", "seq", "lchoice", "try_", "repeat", "all_", "one",
    "some", "top_down", "bottom_up", "normalize", "position", "body", "function", "argument", "fmap", "apply_strategy",
    "at_path", "replace_at", "MAP_LIKE",
]


