"""The Python DSL: build programs with Python functions, close to the seed's notation.

    dot = fun([array(N, f32), array(N, f32)],
              lambda xs, ys: reduce(add, 0.0, map(lambda p: fst(p) * snd(p), zip(xs, ys))))

* Primitives without static parameters are expression constants (`map`, `zip`, `add`):
  call them with any number of their arguments (`map(f)` is a function, `map(f, xs)` an
  array).  Primitives with static parameters are Python functions taking those first
  (`split(64)`, `split(64, xs)`, `map_global(f, xs, dim=1)`).
* Python functions become lambdas; Python numbers become literals; `(a, b)` a pair.
* Operators inside lambdas: `+ - * / %`, unary `-`, `abs()`, `< <= > >=`, `& | ~` on
  bools; bit operations on integers are functions (`bit_and`, `shl`, ...).  `x == 0.0`
  and `x != 0.0` with a number compare values (`eq`, `ne`); `x == y` between two
  expressions is program equality (up to renaming), a Python bool, so use `eq(x, y)`: a
  Python bool in a program is refused (write `true`/`false` or `lit(True)` for literals).
* `xs[i]` reads element i (`at xs i`): i an int, an i32 expression or a size.  A size in
  arithmetic is its value (`sum / N`: `nat_value N`, of whatever numeric type is needed).
* Pipelines: `xs >> f` is `f(xs)`: `xs >> map(abs) >> reduce(add, 0.0)`.
"""

from __future__ import annotations

import builtins as _py
import functools
import inspect
import os
import sys
import uuid
from typing import Any, Callable, Sequence

import numpy as np

from .errors import DSLError
from .expr import App, Expr, Identifier, IndexFun, Lambda, Literal, NatApp, NatLambda, Prim, UserFun, bound_names
from .expr import fresh_name, free_identifiers, nat_var_names, substitute, substitute_nat
from .nat import Nat, NatLike, Var, as_nat, facts_text
from .nat import substitute as nat_substitute
from .primitives import PRIMITIVES
from .types import SCALARS, ScalarType, Type, map_nats

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=None)
def _in_package(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


def origin() -> str | None:
    """`file.py:line` of the user's code that is building the current node."""
    frame = sys._getframe(1)
    while frame is not None and _in_package(frame.f_code.co_filename):  # memoised: rewrites build many nodes
        frame = frame.f_back
    if frame is None:
        return None
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


class PythonBoolError(DSLError, TypeError):
    """A Python bool where a program expression is expected: most often `x == y` between two
    expressions, which compares the programs, not their values."""


def to_expr(x: Any) -> Expr:
    """Turn a Python value into an expression (functions, numbers, sizes, pairs)."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, (bool, np.bool_)):
        raise PythonBoolError(f"a Python bool ({x}) cannot be part of a program: `x == y` between two expressions "
                              f"compares the programs themselves; compare values with eq(x, y) / ne(x, y), and write "
                              f"boolean literals as true, false or lit(True)", origin=origin())
    if isinstance(x, Nat):
        return Prim("nat_value", (x,), origin=origin())
    if isinstance(x, (int, float)):
        return Literal(x, origin=origin())
    if isinstance(x, np.generic):
        name = {np.dtype(v.dtype).name: k for k, v in SCALARS.items()}.get(x.dtype.name)
        if name is None:
            raise DSLError(f"NumPy scalar of dtype {x.dtype} has no matching type", origin=origin())
        return Literal(x.item(), SCALARS[name], origin=origin())
    if isinstance(x, tuple) and len(x) == 2:
        return App(App(Prim("pair"), to_expr(x[0]), origin=origin()), to_expr(x[1]), origin=origin())
    if callable(x):
        return lam(x)
    raise DSLError(f"cannot use {x!r} ({type(x).__name__}) in a program", origin=origin())


def lam(fn: Callable, types: Sequence[Type | None] | None = None) -> Expr:
    """A lambda from a Python function of k parameters (curried: k nested lambdas)."""
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        raise DSLError(f"cannot read the parameters of {fn!r}", origin=origin()) from None
    if not names:
        raise DSLError("a function in a program needs at least one parameter", origin=origin())
    types = list(types) if types is not None else [None] * len(names)
    where = origin()
    tag = uuid.uuid4().hex[:10]
    temps = [Identifier(f"{n}%{tag}", t) for n, t in _py.zip(names, types)]
    body = to_expr(fn(*temps))
    # Give each parameter a readable name that nothing in the body can capture.
    taken = set(free_identifiers(body) | bound_names(body))
    params = []
    for temp, name, t in _py.zip(temps, names, types):
        nice = fresh_name(name, taken)
        taken.add(nice)
        body = substitute(body, temp.name, Identifier(nice, origin=where))
        params.append(Identifier(nice, t, origin=where))
    for p in reversed(params):
        body = Lambda(p, body, origin=where)
    return body


def fun(param_types: Sequence[Type], fn: Callable) -> Expr:
    """A whole program: parameters with declared types, polymorphic in the size variables
    those types mention (they become the program's leading size binders)."""
    if not isinstance(param_types, (list, tuple)) or not all(isinstance(t, Type) for t in param_types):
        raise DSLError("fun expects a list of parameter types, e.g. [array(N, f32)]", origin=origin())
    body = lam(fn, param_types)
    seen: list[Var] = []  # in order of first appearance, outer sizes first

    def visit(n: Nat) -> Nat:
        seen.extend(v for v in sorted(n.vars, key=lambda v: v.name) if v not in seen)
        return n

    for t in param_types:
        map_nats(t, visit)
    names: dict[str, Var] = {}
    for v in seen:
        if names.setdefault(v.name, v) != v:  # one name, two variables (other facts): a kernel has one parameter
            raise DSLError(f"two size variables are named {v.name} (facts {facts_text(names[v.name]) or '{}'} and "
                           f"{facts_text(v) or '{}'}): give them different names, or use one variable for both",
                           origin=origin())
    for v in reversed(seen):
        body = NatLambda(v, body, origin=body.origin)
    return body


def nat_fun(fn: Callable[[Nat], Any], name: str = "n") -> Expr:
    """A function of a size: `nat_fun(lambda n: ...)`.  The binder gets a name that no size
    in the body uses, so an outer size of the same name is never captured."""
    temp = Var(f"{name}%{uuid.uuid4().hex[:10]}", 1)
    body = to_expr(fn(Nat.atom(temp)))
    var = Var(fresh_name(name, nat_var_names(body)), 1)
    return NatLambda(var, substitute_nat(body, temp, Nat.atom(var)), origin=origin())


def nat_apply(f: Any, n: NatLike) -> Expr:
    return NatApp(to_expr(f), as_nat(n), origin=origin())


def apply(f: Any, *args: Any) -> Expr:
    e = to_expr(f)
    for a in args:
        e = App(e, to_expr(a), origin=origin())
    return e


def _prim(name: str, params: tuple, args: Sequence[Any]) -> Expr:
    e: Expr = Prim(name, params, origin=origin())
    for a in args:
        if a is None:
            break
        e = App(e, to_expr(a), origin=origin())
    return e


# --------------------------------------------------------- primitives without parameters
# Expression constants; calling one applies it (see Expr.__call__).

_CONSTANTS = [n for n, d in PRIMITIVES.items() if not d.params]
globals().update({(n + "_" if n in ("and", "or", "not") else n): Prim(n) for n in _CONSTANTS})
abs = Prim("abs")  # noqa: A001 -- the DSL's abs primitive
min = Prim("min")  # noqa: A001
max = Prim("max")  # noqa: A001
map = Prim("map")  # noqa: A001
zip = Prim("zip")  # noqa: A001


# ------------------------------------------------------------ primitives with parameters


def split(n: NatLike, xs: Any = None) -> Expr:
    return _prim("split", (as_nat(n),), (xs,))


def reorder_stride(s: NatLike, xs: Any = None) -> Expr:
    return _prim("reorder_stride", (as_nat(s),), (xs,))


def slide(size: NatLike, step: NatLike, xs: Any = None) -> Expr:
    return _prim("slide", (as_nat(size), as_nat(step)), (xs,))


def pad_const(left: NatLike, right: NatLike, value: Any = None, xs: Any = None) -> Expr:
    return _prim("pad_const", (as_nat(left), as_nat(right)), (value, xs))


def pad_clamp(left: NatLike, right: NatLike, xs: Any = None) -> Expr:
    return _prim("pad_clamp", (as_nat(left), as_nat(right)), (xs,))


def pad_wrap(left: NatLike, right: NatLike, xs: Any = None) -> Expr:
    return _prim("pad_wrap", (as_nat(left), as_nat(right)), (xs,))


def pad_mirror(left: NatLike, right: NatLike, xs: Any = None) -> Expr:
    return _prim("pad_mirror", (as_nat(left), as_nat(right)), (xs,))


def iterate(k: NatLike, f: Any = None, xs: Any = None) -> Expr:
    """`iterate(k, f, xs)`: apply `f` k times.  `f` shrinks its input by a constant factor
    and is made polymorphic in the length it receives."""
    if f is not None and not isinstance(f, NatLambda):
        f = NatLambda(Var("l", 1), to_expr(f), origin=origin())
    return _prim("iterate", (as_nat(k),), (f, xs))


def _index_fun(idx: Callable | IndexFun) -> IndexFun:
    if isinstance(idx, IndexFun):
        return idx
    tag = uuid.uuid4().hex[:10]
    n_tmp = Var(f"n%{tag}", 1)
    i_tmp = Var(f"i%{tag}", 0, Nat.atom(n_tmp))
    body = as_nat(idx(Nat.atom(i_tmp), Nat.atom(n_tmp)))
    taken = {v.name for v in body.vars}  # outer sizes the body mentions keep their names
    n = Var(fresh_name("n", taken), 1)
    i = Var(fresh_name("i", taken | {n.name}), 0, Nat.atom(n))
    return IndexFun(i, n, nat_substitute(body, {n_tmp: Nat.atom(n), i_tmp: Nat.atom(i)}))


def gather(idx: Callable | IndexFun, xs: Any = None) -> Expr:
    """`gather(lambda i, n: ..., xs)`: element i of the result is xs[idx(i, n)]."""
    return _prim("gather", (_index_fun(idx),), (xs,))


def scatter(idx: Callable | IndexFun, xs: Any = None) -> Expr:
    """`scatter(lambda i, n: ..., xs)`: element i of xs goes to position idx(i, n)."""
    return _prim("scatter", (_index_fun(idx),), (xs,))


def fragment(kind: str, tile: Any = None) -> Expr:
    """The `kind` ("a", "b", "c") fragment of a tile (16 x 8 for a and c, 8 x 8 for b: B's
    columns), the lane-major [32][r] array `mma_sync` takes: a gather of the joined tile
    (functional.primitives.fragment_position says which element each lane holds)."""
    from .primitives import MMA_FRAGMENTS, fragment_index

    if kind not in MMA_FRAGMENTS:
        raise DSLError(f"no fragment {kind!r}: a, b or c", origin=origin())
    per_lane = MMA_FRAGMENTS[kind][2]
    if tile is None:
        return lam(lambda x: fragment(kind, x))
    return split(per_lane, gather(fragment_index(kind), _prim("join", (), (tile,))))


def unfragment(kind: str, frags: Any = None) -> Expr:
    """The tile of a `kind` fragment array (the inverse of `fragment`): a scatter, so it is a
    write view (a fragment array computed lane by lane is written into the tile's places)."""
    from .primitives import MMA_FRAGMENTS, fragment_index

    if kind not in MMA_FRAGMENTS:
        raise DSLError(f"no fragment {kind!r}: a, b or c", origin=origin())
    cols = MMA_FRAGMENTS[kind][1]
    if frags is None:
        return lam(lambda x: unfragment(kind, x))
    return split(cols, scatter(fragment_index(kind), _prim("join", (), (frags,))))


def generate(n: NatLike, f: Any = None) -> Expr:
    return _prim("generate", (as_nat(n),), (f,))


def take(n: NatLike, xs: Any = None) -> Expr:
    return _prim("take", (as_nat(n),), (xs,))


def drop(n: NatLike, xs: Any = None) -> Expr:
    return _prim("drop", (as_nat(n),), (xs,))


def as_vector(width: int, xs: Any = None) -> Expr:
    return _prim("as_vector", (as_nat(width),), (xs,))


def cast(t: ScalarType, x: Any = None) -> Expr:
    return _prim("cast", (t,), (x,))


def let(value: Any, body: Callable | Expr) -> Expr:
    """`let(value, lambda x: ...)`: compute `value` once and name it."""
    return _prim("let", (), (value, body))


def user_fun(name: str, params: Sequence[tuple[str, ScalarType]], result: ScalarType, c_body: str,
             numpy: Callable | None = None) -> Expr:
    """The escape hatch: a scalar function written in C (`c_body` uses the parameter names
    and returns the result), with its NumPy meaning for the interpreter."""
    if not name.isidentifier():
        raise DSLError(f"user function name {name!r} is not an identifier", origin=origin())
    uf = UserFun(name, tuple((n, t) for n, t in params), result, c_body, numpy)
    return Prim("user_fun", (uf,), origin=origin())


def map_global(f: Any = None, xs: Any = None, dim: int = 0) -> Expr:
    return _prim("map_global", (dim,), (f, xs))


def map_workgroup(f: Any = None, xs: Any = None, dim: int = 0) -> Expr:
    return _prim("map_workgroup", (dim,), (f, xs))


def map_local(f: Any = None, xs: Any = None, dim: int = 0) -> Expr:
    return _prim("map_local", (dim,), (f, xs))


def literal(value: bool | int | float, t: ScalarType) -> Expr:
    """A literal of a fixed type, e.g. `literal(0.0, f64)`."""
    return Literal(value, t, origin=origin())


def lit(value: bool | int | float, t: ScalarType | None = None) -> Expr:
    """A literal, its type given or inferred: `lit(True)`, `lit(1.0, f64)`, `lit(3, u32)`."""
    if not isinstance(value, (bool, int, float)):
        raise DSLError(f"lit takes a Python bool, int or float, not {value!r}", origin=origin())
    return Literal(value, t, origin=origin())


true = Literal(True)
false = Literal(False)


def nat_value(n: NatLike) -> Expr:
    """A size as a value: `nat_value(N)` (any numeric type the program needs, i32 by default)."""
    return Prim("nat_value", (as_nat(n),), origin=origin())


__all__ = ["fun", "lam", "nat_fun", "nat_apply", "apply", "literal", "lit", "true", "false", "nat_value", "to_expr",
           "PythonBoolError"]
