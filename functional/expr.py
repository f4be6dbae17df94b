"""Expressions of the functional language: an immutable, hashable tree.

    e ::= x | fun(x[: T]) => e | e e | fun(N: nat) => e | e [n] | literal | primitive

Primitives carry their static parameters (`split 64`, `map_global 0`, an index function);
their value arguments are ordinary applications, so `map f xs` is `App(App(map, f), xs)`
and rules match one shape for curried and saturated uses alike.

Equality and hashing are up to renaming of bound variables (lambda parameters and nat
binders).  Inferred types (`.t`) and provenance (`.origin`) ride on nodes without
taking part in equality.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Iterator

import attrs

from .nat import Nat, Var, substitute as nat_substitute
from .types import ScalarType, Type, map_nats

# Programs of a few thousand nodes recurse that deep in every pass; raise the limit once,
# deliberately, rather than rewriting every traversal as an explicit stack.
if sys.getrecursionlimit() < 20000:
    sys.setrecursionlimit(20000)


def _meta():
    return attrs.field(default=None, kw_only=True, repr=False)


class Expr:
    """Base of all expression nodes.  Python operators build programs (see `dsl.py`)."""

    t: Type | None
    origin: str | None

    @functools.cached_property
    def alpha_key(self) -> tuple:
        return _alpha_key(self, {}, {})

    @functools.cached_property
    def exact_hash(self) -> int:
        """hash(exact_key), once per node (memo lookups at every node of a term)."""
        return hash(self.exact_key)

    @functools.cached_property
    def free_names(self) -> frozenset[str]:
        """The identifiers free in the node (free_identifiers, cached on the node)."""
        if isinstance(self, Identifier):
            return frozenset({self.name})
        if isinstance(self, Lambda):
            return self.body.free_names - {self.param.name}
        return frozenset().union(*(c.free_names for c in self.children()))

    @functools.cached_property
    def primitive_names(self) -> frozenset[str]:
        """The names of the primitives the node uses."""
        if isinstance(self, Prim):
            return frozenset({self.name})
        return frozenset().union(*(c.primitive_names for c in self.children()))

    @functools.cached_property
    def exact_key(self) -> tuple:
        """The node as written: names, declarations and provenance included (equal keys,
        identical programs; `==` is up to renaming).  Memo keys of passes whose results
        carry the names and provenance of their input (functional.rules.core.retype)."""
        return _exact_key(self)

    def __eq__(self, other: object):
        """Between two expressions: program equality (up to renaming), a Python bool.  With a
        number (`x == 0.0`): the comparison inside the program, `eq x 0.0`."""
        if _is_number(other):
            return _op("eq", self, other)
        if self is other:
            return True
        return isinstance(other, Expr) and self.alpha_key == other.alpha_key

    def __hash__(self) -> int:
        return hash(self.alpha_key)

    def __ne__(self, other: object):
        if _is_number(other):
            return _op("ne", self, other)
        return not self == other

    def __getitem__(self, index: Any) -> "Expr":
        """`xs[i]` is `at xs i`; `xs[i, j]` is `at (at xs i) j`.  An index is an int, an i32
        expression or a size (`xs[N - 1]`)."""
        from .dsl import at

        if isinstance(index, tuple):
            out = self
            for i in index:
                out = out[i]
            return out
        return at(self, index)

    def __iter__(self):  # without it, __getitem__ would make every expression an endless sequence
        raise TypeError("a program is not iterable: read elements with xs[i] (at xs i)")

    @property
    def type(self) -> Type:
        if self.t is None:
            raise AttributeError("expression has no inferred type: call functional.infer first")
        return self.t

    def children(self) -> tuple["Expr", ...]:
        return ()

    # -- building programs with Python syntax (see dsl.py) --------------------------------
    def __call__(self, *args: Any) -> "Expr":
        from .dsl import apply

        return apply(self, *args)

    def __rshift__(self, f: Any) -> "Expr":
        """Pipeline: `xs >> f` is `f(xs)`."""
        from .dsl import apply

        return f(self) if callable(f) and not isinstance(f, Expr) else apply(f, self)

    def __add__(self, o):
        return _op("add", self, o)

    def __radd__(self, o):
        return _op("add", o, self)

    def __sub__(self, o):
        return _op("sub", self, o)

    def __rsub__(self, o):
        return _op("sub", o, self)

    def __mul__(self, o):
        return _op("mul", self, o)

    def __rmul__(self, o):
        return _op("mul", o, self)

    def __truediv__(self, o):
        return _op("div", self, o)

    def __rtruediv__(self, o):
        return _op("div", o, self)

    def __mod__(self, o):
        return _op("rem", self, o)

    def __rmod__(self, o):
        return _op("rem", o, self)

    def __neg__(self):
        return _op("neg", self)

    def __abs__(self):
        return _op("abs", self)

    def __lt__(self, o):
        return _op("lt", self, o)

    def __le__(self, o):
        return _op("le", self, o)

    def __gt__(self, o):
        return _op("gt", self, o)

    def __ge__(self, o):
        return _op("ge", self, o)

    def __and__(self, o):
        return _op("and", self, o)

    def __or__(self, o):
        return _op("or", self, o)

    def __invert__(self):
        return _op("not", self)

    def __bool__(self) -> bool:
        raise TypeError("a program has no truth value: use select(c, x, y) for conditionals, "
                        "and == only to compare programs")

    def __str__(self) -> str:
        from .syntax import to_text

        return to_text(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


@attrs.frozen(eq=False)
class Identifier(Expr):
    name: str
    decl: Type | None = None  # declared type (lambda parameters); part of the program
    t: Type | None = _meta()
    origin: str | None = _meta()


@attrs.frozen(eq=False)
class Lambda(Expr):
    param: Identifier
    body: Expr
    t: Type | None = _meta()
    origin: str | None = _meta()

    def children(self):
        return (self.body,)


@attrs.frozen(eq=False)
class App(Expr):
    fun: Expr
    arg: Expr
    t: Type | None = _meta()
    origin: str | None = _meta()

    def children(self):
        return (self.fun, self.arg)


@attrs.frozen(eq=False)
class NatLambda(Expr):
    var: Var
    body: Expr
    t: Type | None = _meta()
    origin: str | None = _meta()

    def children(self):
        return (self.body,)


@attrs.frozen(eq=False)
class NatApp(Expr):
    fun: Expr
    nat: Nat
    t: Type | None = _meta()
    origin: str | None = _meta()

    def children(self):
        return (self.fun,)


@attrs.frozen(eq=False)
class Literal(Expr):
    """A scalar constant; `type=None` means its type is inferred (an int literal may be any
    numeric type, a float literal any float type; bools are bool)."""

    value: bool | int | float
    decl: ScalarType | None = None
    t: Type | None = _meta()
    origin: str | None = _meta()


@attrs.frozen(eq=False)
class Prim(Expr):
    """A primitive, by name, with its static parameters (see `primitives.py`)."""

    name: str
    params: tuple = ()
    t: Type | None = _meta()
    origin: str | None = _meta()


# -------------------------------------------------------------------- static parameters


@attrs.frozen
class IndexFun:
    """An index function `fun(i, n) => body` for gather/scatter: position `i` of an array of
    length `n` reads (gather) or writes (scatter) position `body`."""

    i: Var
    n: Var
    body: Nat

    @functools.cached_property
    def alpha_key(self) -> tuple:
        canon = {self.i: Nat.atom(Var("#i")), self.n: Nat.atom(Var("#n"))}
        return nat_substitute(self.body, canon).key

    def __call__(self, i, n) -> Nat:
        return nat_substitute(self.body, {self.i: i if isinstance(i, Nat) else Nat.const(i),
                                          self.n: n if isinstance(n, Nat) else Nat.const(n)})


@attrs.frozen
class UserFun:
    """The escape hatch: a scalar function given as a C body and a NumPy meaning.  Only the
    name, types and C body are part of the program (and of its text); the NumPy callable is
    supplied again when a program is parsed (`parse(text, user_funs={name: fn})`)."""

    name: str
    params: tuple  # tuple[tuple[str, ScalarType], ...]
    result: ScalarType
    c_body: str
    numpy: Any = attrs.field(default=None, eq=False, hash=False, repr=False)


# ------------------------------------------------------------------ alpha-equivalence key


def _param_key(p: Any, nat_env: dict) -> Any:
    if isinstance(p, Nat):
        return ("nat", _nat_key(p, nat_env))
    if isinstance(p, IndexFun):
        return ("idx", _nat_key(p(Nat.atom(Var("#i")), Nat.atom(Var("#n"))), nat_env))  # outer sizes renamed too
    if isinstance(p, Type):
        return ("type", _type_key(p, nat_env))
    return (type(p).__name__, p)


def _nat_key(n: Nat, nat_env: dict) -> tuple:
    if not nat_env:
        return n.key
    return nat_substitute(n, lambda a: nat_env.get(a)).key


def _type_key(t: Type | None, nat_env: dict) -> Any:
    if t is None or not nat_env:
        return t
    return map_nats(t, lambda n: nat_substitute(n, lambda a: nat_env.get(a)))


def _alpha_key(e: Expr, env: dict, nat_env: dict) -> tuple:
    if isinstance(e, Identifier):
        if e.name in env:
            return ("bound", env[e.name])
        return ("free", e.name, _type_key(e.decl, nat_env))
    if isinstance(e, Lambda):
        depth = env.get(None, 0)  # binders around e (key None: names are strings), not len(env): shadowing
        inner = {**env, e.param.name: depth, None: depth + 1}
        return ("lam", _type_key(e.param.decl, nat_env), _alpha_key(e.body, inner, nat_env))
    if isinstance(e, App):
        return ("app", _alpha_key(e.fun, env, nat_env), _alpha_key(e.arg, env, nat_env))
    if isinstance(e, NatLambda):
        depth = env.get(None, 0)
        placeholder = Nat.atom(Var(f"#{depth}", e.var.lo, e.var.hi, e.var.multiple_of))
        inner = {**nat_env, e.var: placeholder}
        return ("nlam", (e.var.lo, e.var.hi, e.var.multiple_of), _alpha_key(e.body, {**env, None: depth + 1}, inner))
    if isinstance(e, NatApp):
        return ("napp", _alpha_key(e.fun, env, nat_env), _nat_key(e.nat, nat_env))
    if isinstance(e, Literal):
        return ("lit", type(e.value).__name__, repr(e.value), e.decl)  # repr: nan == nan, 0.0 != -0.0
    if isinstance(e, Prim):
        return ("prim", e.name, tuple(_param_key(p, nat_env) for p in e.params))
    raise TypeError(f"not an expression: {e!r}")


def _exact_param(p: Any) -> tuple:
    # the type keeps 1, 1.0 and True apart; a user function's NumPy meaning is no part of
    # its equality: the object itself is
    return (type(p), p, id(p)) if isinstance(p, UserFun) else (type(p), p)


def _exact_key(e: Expr) -> tuple:
    if isinstance(e, Identifier):
        return ("id", e.name, e.decl, e.origin)
    if isinstance(e, Lambda):
        return ("lam", e.param.exact_key, e.body.exact_key, e.origin)
    if isinstance(e, App):
        return ("app", e.fun.exact_key, e.arg.exact_key, e.origin)
    if isinstance(e, NatLambda):
        return ("nlam", e.var, e.body.exact_key, e.origin)
    if isinstance(e, NatApp):
        return ("napp", e.fun.exact_key, e.nat, e.origin)
    if isinstance(e, Literal):
        return ("lit", type(e.value), repr(e.value), e.decl, e.origin)
    if isinstance(e, Prim):
        return ("prim", e.name, tuple(_exact_param(p) for p in e.params), e.origin)
    raise TypeError(f"not an expression: {e!r}")


# ----------------------------------------------------------------------- tree utilities


def free_identifiers(e: Expr) -> frozenset[str]:
    if isinstance(e, Identifier):
        return frozenset({e.name})
    if isinstance(e, Lambda):
        return free_identifiers(e.body) - {e.param.name}
    out: frozenset[str] = frozenset()
    for c in e.children():
        out |= free_identifiers(c)
    return out


def bound_names(e: Expr) -> frozenset[str]:
    out = {e.param.name} if isinstance(e, Lambda) else set()
    for c in e.children():
        out |= bound_names(c)
    return frozenset(out)


def fresh_name(base: str, avoid: frozenset[str] | set[str]) -> str:
    base = base.rstrip("0123456789") or "x"
    if base not in avoid:
        return base
    k = 1
    while f"{base}{k}" in avoid:
        k += 1
    return f"{base}{k}"


def substitute(e: Expr, name: str, value: Expr) -> Expr:
    """Capture-avoiding `e[value / name]`."""
    return _subst(e, name, value, free_identifiers(value))


def _subst(e: Expr, name: str, value: Expr, value_free: frozenset[str]) -> Expr:
    if isinstance(e, Identifier):
        return value if e.name == name else e
    if isinstance(e, Lambda):
        if e.param.name == name or name not in free_identifiers(e.body):
            return e
        if e.param.name in value_free:
            new = fresh_name(e.param.name, value_free | free_identifiers(e.body) | {name})
            renamed = attrs.evolve(e.param, name=new)
            body = _subst(e.body, e.param.name, renamed, frozenset({new}))
            return attrs.evolve(e, param=renamed, body=_subst(body, name, value, value_free), t=None)
        return attrs.evolve(e, body=_subst(e.body, name, value, value_free), t=None)
    if isinstance(e, App):
        return attrs.evolve(e, fun=_subst(e.fun, name, value, value_free),
                            arg=_subst(e.arg, name, value, value_free), t=None)
    if isinstance(e, NatLambda):
        return attrs.evolve(e, body=_subst(e.body, name, value, value_free), t=None)
    if isinstance(e, NatApp):
        return attrs.evolve(e, fun=_subst(e.fun, name, value, value_free), t=None)
    return e


def substitute_nat(e: Expr, var: Var, value: Nat) -> Expr:
    """Replace a size variable everywhere in `e` (types, static parameters, nat arguments)."""
    mapping = {var: value}

    def on_nat(n: Nat) -> Nat:
        return nat_substitute(n, mapping)

    def on_type(t):
        return map_nats(t, on_nat) if t is not None else None

    def go(x: Expr) -> Expr:
        if isinstance(x, Identifier):
            return attrs.evolve(x, decl=on_type(x.decl), t=None)
        if isinstance(x, Lambda):
            return attrs.evolve(x, param=go(x.param), body=go(x.body), t=None)
        if isinstance(x, App):
            return attrs.evolve(x, fun=go(x.fun), arg=go(x.arg), t=None)
        if isinstance(x, NatLambda):
            return x if x.var == var else attrs.evolve(x, body=go(x.body), t=None)
        if isinstance(x, NatApp):
            return attrs.evolve(x, fun=go(x.fun), nat=on_nat(x.nat), t=None)
        if isinstance(x, Prim):
            return attrs.evolve(x, params=tuple(_subst_param(p, on_nat, on_type) for p in x.params), t=None)
        return x

    return go(e)


def _subst_param(p, on_nat, on_type):
    if isinstance(p, Nat):
        return on_nat(p)
    if isinstance(p, IndexFun):
        return IndexFun(p.i, p.n, on_nat(p.body))
    if isinstance(p, Type):
        return on_type(p)
    return p


def nat_var_names(e: Expr) -> set[str]:
    """Names of every size variable mentioned anywhere in `e` (types, parameters, binders)."""
    names: set[str] = set()

    def nat(n: Nat) -> Nat:
        names.update(v.name for v in n.vars)
        return n

    for x in walk(e):
        if isinstance(x, Identifier) and x.decl is not None:
            map_nats(x.decl, nat)
        elif isinstance(x, NatLambda):
            names.add(x.var.name)
        elif isinstance(x, NatApp):
            nat(x.nat)
        elif isinstance(x, Prim):
            for p in x.params:
                if isinstance(p, Nat):
                    nat(p)
                elif isinstance(p, IndexFun):
                    nat(p.body)
                elif isinstance(p, Type):
                    map_nats(p, nat)
    return names


def spine(e: Expr) -> tuple[Expr, list[Expr]]:
    """`f a b c` as (f, [a, b, c])."""
    args = []
    while isinstance(e, App):
        args.append(e.arg)
        e = e.fun
    return e, args[::-1]


def trivial(e: Expr) -> bool:
    """Copying `e` copies no computation: an identifier, a literal, or projections of one."""
    while True:
        if isinstance(e, (Identifier, Literal)):
            return True
        head, args = spine(e)
        if not (isinstance(head, Prim) and head.name in ("fst", "snd") and len(args) == 1):
            return False
        e = args[0]


def applied(e: Expr, names, nargs: int | None = None) -> list[Expr] | None:
    """The arguments when `e` is a primitive named in `names` (one name or a collection)
    applied to `nargs` arguments (any number when None); else None."""
    head, args = spine(e)
    if not isinstance(head, Prim) or (head.name != names if isinstance(names, str) else head.name not in names):
        return None
    return args if nargs is None or len(args) == nargs else None


def walk(e: Expr) -> Iterator[Expr]:
    """Every node, parents before children."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(x.children()))


def size(e: Expr) -> int:
    return sum(1 for _ in walk(e))


def _is_number(x: Any) -> bool:
    import numpy as np

    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _op(name: str, *operands: Any) -> Expr:
    from .dsl import apply

    return apply(Prim(name), *operands)
