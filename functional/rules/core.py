"""Rules as data: a pattern (the left-hand side), a side condition and a small builder.

    split_join = rule(
        "split_join", "split-join", "map f xs -> join (map (map f) (split n xs))",
        lhs=P("map", V("f"), V("xs")), params=("n",),
        side=lambda m: None if divides(m.n, length(m.xs)) else f"{m.n} does not divide {length(m.xs)}",
        build=lambda m: fl.join(fl.map(fl.map(m.f), fl.split(m.n, m.xs))))

Applying a rule matches the pattern at the current node, checks the side condition,
builds the right-hand side and re-infers its type locally (free identifiers keep their
types); a rule that would change the type raises RuleError, a bug in the rule.  Every rule
declares `example(rng) -> (program, inputs, params)`: random instances on which the test
suite compares the interpreter before and after the rewrite.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from ..errors import FunctionalError, TypeInferenceError
from ..expr import App, Expr, Identifier, Lambda, Literal, NatLambda, Prim, spine, substitute, trivial
from ..infer import infer, memoised
from ..nat import Nat
from ..strategies import Failure, Step, Strategy, Success
from ..types import ArrayType, Type


class RuleError(FunctionalError):
    """A rule whose result does not have the type of what it replaced: a bug in the rule."""


class NotApplicable(Exception):
    """Raised by a builder that discovers late that the rule does not apply."""


# ------------------------------------------------------------------------------ patterns


@attrs.frozen
class V:
    """Matches any expression and binds it."""

    name: str


@attrs.frozen
class P:
    """Matches a primitive applied to exactly `len(args)` arguments.  `params` names the
    static parameters to bind (None: ignore one); `bind` names the primitive's name."""

    names: Any  # str or frozenset[str]
    args: tuple = ()
    params: tuple | None = None
    bind: str | None = None

    def __init__(self, names, *args, params=None, bind=None):
        object.__setattr__(self, "names", frozenset({names}) if isinstance(names, str) else frozenset(names))
        object.__setattr__(self, "args", tuple(args))
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "bind", bind)


@attrs.frozen
class L:
    """Matches a lambda; binds its parameter (an Identifier) and matches its body."""

    param: str
    body: Any


@attrs.frozen
class Lit:
    value: Any


@attrs.frozen
class OneOf:
    """Matches the first alternative that matches (e.g. `map f xs` or the partial `map f`)."""

    alternatives: tuple

    def __init__(self, *alternatives):
        object.__setattr__(self, "alternatives", alternatives)


def _bind(m: dict, name: str, value: Any) -> bool:
    if name in m:
        return m[name] == value
    m[name] = value
    return True


def match(p: Any, e: Expr, m: dict) -> bool:
    if isinstance(p, V):
        return _bind(m, p.name, e)
    if isinstance(p, P):
        head, args = spine(e)
        if not isinstance(head, Prim) or head.name not in p.names or len(args) != len(p.args):
            return False
        if p.bind and not _bind(m, p.bind, head.name):
            return False
        if p.params:
            for pname, value in zip(p.params, head.params):
                if pname is not None and not _bind(m, pname, value):
                    return False
        m.setdefault("_prims", []).append(head)
        return all(match(pa, a, m) for pa, a in zip(p.args, args))
    if isinstance(p, L):
        if not isinstance(e, Lambda):
            return False
        return _bind(m, p.param, e.param) and match(p.body, e.body, m)
    if isinstance(p, Lit):
        return isinstance(e, Literal) and e.value == p.value
    if isinstance(p, OneOf):
        for alt in p.alternatives:
            trial = dict(m)
            if match(alt, e, trial):
                m.clear()
                m.update(trial)
                return True
        return False
    raise TypeError(f"not a pattern: {p!r}")


class Match:
    """What a builder sees: bound subexpressions and parameters as attributes."""

    def __init__(self, bindings: dict, root: Expr):
        self._b = bindings
        self.root = root

    def __getattr__(self, name: str) -> Any:
        try:
            return self._b[name]
        except KeyError:
            raise AttributeError(f"pattern binds no {name!r}") from None

    def get(self, name: str, default: Any = None) -> Any:
        return self._b.get(name, default)


# ------------------------------------------------------------------------------- rules


@attrs.frozen
class Rule:
    name: str
    family: str
    equation: str
    lhs: Any
    build: Callable[[Match], Expr]
    side: Callable[[Match], str | None] | None = None
    params: tuple[str, ...] = ()
    defaults: tuple = ()  # default values for params (same order; may be shorter)
    exact: bool = True  # False: re-associates floating-point operations
    example: Callable | None = None  # rng -> (program, inputs, params dict)
    doc: str = ""

    def __call__(self, *args: Any, **params: Any):
        if len(args) == 1 and isinstance(args[0], Expr) and not params:
            return self.strategy()(args[0])
        for pname, value in zip(self.params, args):
            params[pname] = value
        return self.strategy(**params)

    def strategy(self, **params: Any) -> Strategy:
        unknown = set(params) - set(self.params)
        if unknown:
            raise TypeError(f"rule {self.name} has no parameter(s) {sorted(unknown)}; it takes {self.params}")
        values = dict(zip(self.params, self.defaults))
        values.update(params)
        missing = [p for p in self.params if p not in values]
        if missing:
            raise TypeError(f"rule {self.name} needs parameter(s) {missing}")
        values = {k: _normalise_param(v) for k, v in values.items()}
        label = self.name + (f"({', '.join(f'{k}={v}' for k, v in values.items())})" if values else "")
        return Strategy(label, lambda e: self.apply(e, values))

    def apply(self, e: Expr, params: dict) -> Success | Failure:
        bindings: dict = {}
        if not match(self.lhs, e, bindings):
            return Failure(f"{self.name}: does not match")
        clash = set(bindings) & set(params)
        if clash:
            raise RuleError(f"rule {self.name}: pattern and parameters share names {sorted(clash)}")
        bindings.update(params)
        m = Match(bindings, e)
        if self.side is not None:
            reason = self.side(m)
            if reason:
                return Failure(f"{self.name}: {reason}")
        try:
            new = self.build(m)
        except NotApplicable as exc:
            return Failure(f"{self.name}: {exc}")
        try:
            typed = retype(new, e)
        except TypeInferenceError as exc:
            return Failure(f"{self.name}: the result does not type-check: {exc}")
        if e.t is not None and typed.t != e.t:
            raise RuleError(f"rule {self.name} changed the type from {e.t} to {typed.t}", where=str(e)[:90])
        return Success(typed, (Step(self.name, tuple(sorted(params.items())), ()),))


def _normalise_param(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return Nat.const(v)
    return v


def free_identifier_types(e: Expr) -> dict[str, Type]:
    out: dict[str, Type] = {}
    stack: list[tuple[Expr, frozenset]] = [(e, frozenset())]
    while stack:
        x, bound = stack.pop()
        if isinstance(x, Identifier):
            if x.name not in bound and x.name not in out and x.t is not None:
                out[x.name] = x.t
        elif isinstance(x, Lambda):
            stack.append((x.body, bound | {x.param.name}))
        else:
            stack.extend((c, bound) for c in x.children())
    return out


def retype(new: Expr, old: Expr) -> Expr:
    """Infer `new` where `old` stood: free identifiers keep the types they had there.
    Memoised: an exploration rewrites the same subterm in the same place again and again
    (the same move in the programs of other variants)."""
    env = free_identifier_types(old)
    return _inferred(_Retyping(new.exact_key, tuple(sorted(env.items())), old.t, new))


@attrs.frozen(eq=False)
class _Retyping:
    """retype's memo key: the rewritten term as written (exact_key), the types of its
    context.  `new` rides along to be inferred, outside equality."""

    key: tuple
    env: tuple
    expected: Type | None
    new: Expr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Retyping) and (self.key, self.env, self.expected) == (
            other.key, other.env, other.expected)

    def __hash__(self) -> int:
        return hash((self.new.exact_hash, self.env, self.expected))


@memoised  # within functional.infer.typing_memo() (a space's build)
def _inferred(r: _Retyping) -> Expr:
    """infer is a pure function of its arguments (failures are not cached: raised again)."""
    return infer(r.new, dict(r.env), expected=r.expected, reuse=True)


# ------------------------------------------------------------------ builder helpers


def length(e: Expr) -> Nat:
    """Length of an array-typed (typed) expression."""
    t = e.t
    if not isinstance(t, ArrayType):
        raise NotApplicable(f"expected an array, found {t}")
    return t.size


def beta(f: Expr, x: Expr) -> Expr:
    """`f x`, reduced when `f` is a lambda (keeps rule results free of redexes)."""
    if isinstance(f, Lambda):
        return substitute(f.body, f.param.name, x)
    return App(f, x)


def occurrences(e: Expr, name: str) -> tuple[int, bool]:
    """How often the identifier `name` occurs free in `e`, and whether any occurrence is
    under a lambda (code that may run many times per evaluation of `e`)."""
    count, under = 0, False
    stack: list[tuple[Expr, bool]] = [(e, False)]
    while stack:
        x, inside = stack.pop()
        if isinstance(x, Identifier):
            if x.name == name:
                count, under = count + 1, under or inside
        elif isinstance(x, Lambda):
            if x.param.name != name:
                stack.append((x.body, True))
        else:
            stack.extend((c, inside) for c in x.children())
    return count, under


def inlinable(f: Lambda, x: Expr) -> bool:
    """Substituting `x` for f's parameter neither duplicates nor repeats x's computation."""
    if trivial(x):
        return True
    count, under = occurrences(f.body, f.param.name)
    return count <= 1 and not under


def bind(f: Expr, x: Expr) -> Expr:
    """`f x` that computes x once: substituted where that duplicates nothing (see
    `inlinable`), else `let x f`.  Fusion builds its bodies with it, so fusing maps whose
    functions read their element several times stays linear in the program's size."""
    if isinstance(f, Lambda):
        if inlinable(f, x):
            return substitute(f.body, f.param.name, x)
        return App(App(Prim("let"), x), f)
    return App(f, x)


def is_function_of(e: Expr, name: str) -> bool:
    from ..expr import free_identifiers

    return name in free_identifiers(e)


RULES: dict[str, Rule] = {}


def register(r: Rule) -> Rule:
    if r.name in RULES:
        raise ValueError(f"rule {r.name} registered twice")
    RULES[r.name] = r
    return r


def rule(name: str, family: str, equation: str, **kw) -> Rule:
    return register(Rule(name, family, equation, **kw))


__all__ = ["V", "P", "L", "Lit", "OneOf", "Rule", "RuleError", "NotApplicable", "Match", "RULES", "rule", "length", "beta",
           "bind", "inlinable", "occurrences", "trivial",
           "retype", "match", "NatLambda"]
