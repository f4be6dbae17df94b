"""Every primitive, declared once: static parameters, type scheme, NumPy meaning, equation.

A declaration is data.  Type inference instantiates `scheme`; the reference interpreter
calls `meaning` with a `call` object (see `interp.Call`) that holds the evaluated
arguments as batched values (`values.py`).  Low-level primitives name the high-level
primitive they implement (`implements`) and share its meaning, so the interpreter is the
oracle for lowered programs too.
"""

from __future__ import annotations

import math
from typing import Callable

import attrs
import numpy as np

from .errors import InterpretError
from .expr import App, Expr, Identifier, IndexFun, Lambda, Literal, Prim, free_identifiers, spine, walk
from .nat import Nat, Var, evaluate, floordiv, mod
from .types import (
    ArrayType,
    FunType,
    NatFunType,
    ScalarType,
    TupleType,
    TypeClass,
    VectorType,
    boolean,
    i32,
)
from .values import axis_length, lift, take_index, tmap

HIGH, LOW, SCALAR = "high", "low", "scalar"

# Roles of primitives: what passes need to know about them, declared on each declaration.
#   layout   rearranges data (split, join, zip, slide, pad, ...): views, never copies
#   map      applies a function to every element (map, map_global, map_seq, map_vec, ...)
#   reduce   folds an array (reduce, reduce_seq, reduce_seq_unroll)
#   store    says where a value lives (to_global, to_local, to_private)
#   access   at: one element of an array, at a computed index
#   bind     let;  iterate;  generate;  scalar: a scalar operation
#   collective  a warp's lanes compute it together, each holding part of its operands (mma_sync)
ROLES = ("layout", "map", "reduce", "store", "access", "bind", "iterate", "generate", "scalar", "collective")

# Kinds of static parameters, as they appear in text after the primitive's name.
NAT, DIM, INDEX, TYPE, USERFUN = "nat", "dim", "index", "type", "userfun"


@attrs.frozen
class PrimDecl:
    name: str
    level: str
    params: tuple[str, ...]
    arity: int
    scheme: Callable  # (fresh, params) -> (tuple of argument types, result type)
    meaning: Callable  # (call) -> value
    equation: str
    infix: str | None = None
    implements: str | None = None  # for low-level primitives: the high-level counterpart
    explain: Callable | None = None  # (params, argument types) -> message on a mismatch
    check: Callable | None = None  # (params) -> error message for bad static parameters
    # What the primitive does, read by every pass from here (see ROLES):
    role: str = "scalar"
    loop: str | None = None  # maps and reductions: how they run (global, workgroup, local, seq, lanes)
    unroll: bool = False  # a loop the imperative passes unroll
    read_view: bool = False  # layout: read as a view of its arguments (index arithmetic, no copy)
    write_view: str | None = None  # layout: the acceptor that writes through it (join -> join_acc)
    space: str | None = None  # stores: the address space (global, local, private)


PRIMITIVES: dict[str, PrimDecl] = {}


def declare(name, level, params, arity, scheme, meaning, equation, **kw) -> PrimDecl:
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name} declared twice")
    decl = PrimDecl(name, level, tuple(params), arity, scheme, meaning, equation, **kw)
    PRIMITIVES[name] = decl
    return decl


def _positive(*which):
    def check(params):
        for k in which:
            p = params[k]
            v = p.as_int() if isinstance(p, Nat) else p
            if v is not None and v <= 0:
                return f"parameter {p} must be positive"
        return None

    return check


def _nonneg(*which):
    def check(params):
        for k in which:
            v = params[k].as_int()
            if v is not None and v < 0:
                return f"parameter {params[k]} must not be negative"
        return None

    return check


def _check_dim(params):
    return None if params[0] in (0, 1, 2) else f"dimension must be 0, 1 or 2, got {params[0]}"


# ============================================================================ high level

# map f [x1..xn] = [f x1 .. f xn]
def _map_scheme(fr, params):
    n, s, t = fr.nat(), fr.dt(), fr.dt()
    return (FunType(s, t), ArrayType(n, s)), ArrayType(n, t)


def _map_meaning(c):
    f, xs = c.args
    return c.map_apply(f, xs, axis_length(xs, c.ax))


declare("map", HIGH, (), 2, _map_scheme, _map_meaning, "map f [x1, ..., xn] = [f x1, ..., f xn]", role="map")


# reduce f z [x1..xn] = z `f` x1 `f` ... `f` xn   (f associative, z neutral)
def _reduce_scheme(fr, params):
    n, t = fr.nat(), fr.dt()
    return (FunType(t, FunType(t, t)), t, ArrayType(n, t)), t


def _fold_scheme(fr, params):
    n, s, t = fr.nat(), fr.dt(), fr.dt()
    return (FunType(t, FunType(s, t)), t, ArrayType(n, s)), t


def _fold_meaning(c):
    f, z, xs = c.args
    ufunc = c.known_binop(f)
    if ufunc is not None and axis_length(xs, c.ax) == 0:  # no elements: z (fmin/fmax have no identity to reduce)
        return c.cast_result(z)
    if ufunc is not None:  # same value, one NumPy call instead of n interpreted steps
        return c.cast_result(tmap(lambda zz, a: ufunc(zz, ufunc.reduce(a, axis=c.ax, dtype=a.dtype)), z, xs))
    acc = z
    for k in range(axis_length(xs, c.ax)):
        acc = c.apply(c.apply(f, acc), take_index(xs, c.ax, k))
    return acc


declare("reduce", HIGH, (), 3, _reduce_scheme, _fold_meaning,
        "reduce f z [x1, ..., xn] = z `f` x1 `f` ... `f` xn   (f associative, z its neutral element)", role="reduce")


# associative f a b = f a b: the user's declaration that f is associative
def _associative_scheme(fr, params):
    t = fr.dt()
    return (FunType(t, FunType(t, t)), t, t), t


declare("associative", HIGH, (), 3, _associative_scheme, lambda c: c.apply(c.apply(c.args[0], c.args[1]), c.args[2]),
        "associative f a b = f a b   (a declaration, no computation: the user states that f is associative, "
        "so a reduce of `associative f` may be regrouped into parallel stages; functional.algebra honours it)")


# zip [x..] [y..] = [(x1, y1) ..]
def _zip_scheme(fr, params):
    n, s, t = fr.nat(), fr.dt(), fr.dt()
    return (ArrayType(n, s), ArrayType(n, t)), ArrayType(n, TupleType((s, t)))


def _zip_meaning(c):
    xs, ys = c.args
    a, b = axis_length(xs, c.ax), axis_length(ys, c.ax)
    if a != b:
        raise InterpretError(f"zip of arrays of lengths {a} and {b}")
    return (xs, ys)


declare("zip", HIGH, (), 2, _zip_scheme, _zip_meaning, "zip [x1, ..., xn] [y1, ..., yn] = [(x1, y1), ..., (xn, yn)]",
        explain=lambda params, ts: f"zip of arrays of lengths {_len(ts[0])} and {_len(ts[1])}"
        if all(isinstance(t, ArrayType) for t in ts) else None,
        role="layout", read_view=True)  # written component by component


def _len(t):
    return t.size if isinstance(t, ArrayType) else "?"


def _unzip_scheme(fr, params):
    n, s, t = fr.nat(), fr.dt(), fr.dt()
    return (ArrayType(n, TupleType((s, t))),), TupleType((ArrayType(n, s), ArrayType(n, t)))


declare("unzip", HIGH, (), 1, _unzip_scheme, lambda c: c.args[0],
        "unzip [(x1, y1), ..., (xn, yn)] = ([x1, ..., xn], [y1, ..., yn])", role="layout", read_view=True)


def _pair_scheme(fr, params):
    s, t = fr.dt(), fr.dt()
    return (s, t), TupleType((s, t))


declare("pair", HIGH, (), 2, _pair_scheme, lambda c: (c.args[0], c.args[1]), "pair x y = (x, y)",
        role="layout", read_view=True)


def _proj_scheme(k):
    def scheme(fr, params):
        s, t = fr.dt(), fr.dt()
        return (TupleType((s, t)),), (s, t)[k]

    return scheme


declare("fst", HIGH, (), 1, _proj_scheme(0), lambda c: c.args[0][0], "fst (x, y) = x", role="layout")
declare("snd", HIGH, (), 1, _proj_scheme(1), lambda c: c.args[0][1], "snd (x, y) = y", role="layout")


# split n : (m*n).t -> m.n.t
def _split_scheme(fr, params):
    (n,) = params
    m, t = fr.nat(), fr.dt()
    return (ArrayType(m * n, t),), ArrayType(m, ArrayType(n, t))


def _split_meaning(c):
    n = c.size(c.params[0])
    (xs,) = c.args
    length = axis_length(xs, c.ax)
    if length % n:
        raise InterpretError(f"split {n} of an array of length {length}")
    ax = c.ax
    return tmap(lambda a: a.reshape(a.shape[:ax] + (length // n, n) + a.shape[ax + 1:]), xs)


def _explain_split(params, ts):
    if isinstance(ts[0], ArrayType):
        length = ts[0].size
        return f"split {params[0]} of an array of length {length}: {length} is not known to be a multiple of {params[0]}"
    return None


declare("split", HIGH, (NAT,), 1, _split_scheme, _split_meaning,
        "split n [x1, ..., x(m*n)] = [[x1, ..., xn], ..., [x(m*n-n+1), ..., x(m*n)]]",
        explain=_explain_split, check=_positive(0), role="layout", read_view=True, write_view="split_acc")


def _join_scheme(fr, params):
    m, n, t = fr.nat(), fr.nat(), fr.dt()
    return (ArrayType(m, ArrayType(n, t)),), ArrayType(m * n, t)


def _join_meaning(c):
    ax = c.ax
    return tmap(lambda a: a.reshape(a.shape[:ax] + (a.shape[ax] * a.shape[ax + 1],) + a.shape[ax + 2:]), c.args[0])


declare("join", HIGH, (), 1, _join_scheme, _join_meaning, "join [[x11, ..., x1n], ..., [xm1, ..., xmn]] = [x11, ..., xmn]",
        role="layout", read_view=True, write_view="join_acc")


def _transpose_scheme(fr, params):
    m, n, t = fr.nat(), fr.nat(), fr.dt()
    return (ArrayType(m, ArrayType(n, t)),), ArrayType(n, ArrayType(m, t))


declare("transpose", HIGH, (), 1, _transpose_scheme, lambda c: tmap(lambda a: np.swapaxes(a, c.ax, c.ax + 1), c.args[0]),
        "transpose xs = ys where ys[j][i] = xs[i][j]", role="layout", read_view=True, write_view="transpose_acc")


# gather / scatter with index functions
def _same_len_scheme(fr, params):
    n, t = fr.nat(), fr.dt()
    return (ArrayType(n, t),), ArrayType(n, t)


def index_values(c, fun: IndexFun, n: int) -> np.ndarray:
    i = np.arange(n, dtype=np.int64)
    try:
        idx = evaluate(fun.body, {**c.nats, fun.i.name: i, fun.n.name: n})
    except Exception as exc:  # noqa: BLE001 -- reported with the index function
        raise InterpretError(f"index function {fun.body} failed for n={n}: {exc}") from None
    idx = np.broadcast_to(np.asarray(idx, dtype=np.int64), (n,))
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise InterpretError(f"index function {fun.body} leaves [0, {n}) for n={n}")
    return idx


def _gather_with(c, fun):
    (xs,) = c.args
    n = axis_length(xs, c.ax)
    idx = index_values(c, fun, n)
    return tmap(lambda a: np.take(a, idx, axis=c.ax), xs)


def _scatter_meaning(c):
    (fun,) = c.params
    (xs,) = c.args
    n = axis_length(xs, c.ax)
    idx = index_values(c, fun, n)
    if not np.array_equal(np.sort(idx), np.arange(n)):
        raise InterpretError(f"scatter index function {fun.body} is not a permutation of [0, {n})")
    ax = c.ax

    def one(a):
        out = np.empty_like(a)
        out[(slice(None),) * ax + (idx,)] = a
        return out

    return tmap(one, xs)


declare("gather", HIGH, (INDEX,), 1, _same_len_scheme, lambda c: _gather_with(c, c.params[0]),
        "gather idx xs = [xs[idx(0, n)], ..., xs[idx(n-1, n)]]", role="layout", read_view=True)
declare("scatter", HIGH, (INDEX,), 1, _same_len_scheme, _scatter_meaning,
        "scatter idx xs = ys where ys[idx(i, n)] = xs[i]   (idx a permutation)",
        role="layout", write_view="scatter_acc")


def stride_index(s: Nat) -> IndexFun:
    """The seed's `reorder (stride s)`: element i of the result is xs[i / (n/s) + s * (i % (n/s))],
    so that consecutive work-items read consecutive elements."""
    n = Var("n", 1)
    i = Var("i", 0, Nat.atom(n))
    chunk = Nat.atom(n) / s
    return IndexFun(i, n, floordiv(Nat.atom(i), chunk) + s * mod(Nat.atom(i), chunk))


def _reorder_scheme(fr, params):
    (s,) = params
    m, t = fr.nat(), fr.dt()
    return (ArrayType(m * s, t),), ArrayType(m * s, t)


def _explain_multiple(what):
    """Explain a failed `(m * n).t` argument: the length is not a multiple of parameter 0."""

    def explain(params, ts):
        if isinstance(ts[0], ArrayType) and not ts[0].size.unknowns:
            length = ts[0].size
            return (f"{what} {params[0]} of an array of length {length}: {length} is not known to be a "
                    f"multiple of {params[0]}")
        return None

    return explain


declare("reorder_stride", HIGH, (NAT,), 1, _reorder_scheme, lambda c: _gather_with(c, stride_index(c.params[0])),
        "reorder_stride s xs = gather (fun(i, n) => i / (n/s) + s * (i % (n/s))) xs",
        explain=_explain_multiple("reorder_stride"), check=_positive(0), role="layout", read_view=True)


# slide size step : (step*(m-1) + size).t -> m.size.t
def _slide_scheme(fr, params):
    size, step = params
    m, t = fr.nat(), fr.dt()
    return (ArrayType(step * m + size - step, t),), ArrayType(m, ArrayType(size, t))


def _slide_meaning(c):
    size, step = (c.size(p) for p in c.params)
    (xs,) = c.args
    length, ax = axis_length(xs, c.ax), c.ax
    if length < size or (length - size) % step:
        raise InterpretError(f"slide {size} {step} of an array of length {length}")

    def one(a):
        w = np.lib.stride_tricks.sliding_window_view(a, size, axis=ax)
        w = w[(slice(None),) * ax + (slice(None, None, step),)]
        return np.moveaxis(w, -1, ax + 1)

    return tmap(one, xs)


def _explain_slide(params, ts):
    if not isinstance(ts[0], ArrayType) or ts[0].size.unknowns:
        return None
    size, step = params
    length = ts[0].size
    head = f"slide {size} {step} of an array of length {length}"
    short = (length - size).as_int()
    if short is not None and short < 0:
        return f"{head}: the array is shorter than the window ({size})"
    return f"{head}: {length - size} is not known to be a multiple of {step}"


declare("slide", HIGH, (NAT, NAT), 1, _slide_scheme, _slide_meaning,
        "slide size step xs = [xs[0 : size], xs[step : step+size], ...]", explain=_explain_slide,
        check=_positive(0, 1), role="layout", read_view=True)


# pad
def _pad_scheme(with_value):
    def scheme(fr, params):
        left, right = params
        n, t = fr.nat(), fr.dt()
        args = (ArrayType(n, t),)
        return ((t,) + args if with_value else args), ArrayType(left + n + right, t)

    return scheme


def _pad_mode(mode):
    def meaning(c):
        left, right = (c.size(p) for p in c.params)
        (xs,) = c.args
        ax = c.ax
        n = axis_length(xs, ax)
        if mode in ("wrap", "symmetric") and max(left, right) > n:  # each pad repeats xs at most once
            raise InterpretError(f"pad {left} {right} of an array of length {n}: a pad may not be longer than "
                                 f"the array")
        return tmap(lambda a: np.pad(a, [(0, 0)] * ax + [(left, right)] + [(0, 0)] * (a.ndim - ax - 1), mode=mode), xs)

    return meaning


def _pad_const_meaning(c):
    left, right = (c.size(p) for p in c.params)
    value, xs = c.args
    ax = c.ax

    def one(v, a):
        v = np.expand_dims(v, ax)
        pieces = [np.broadcast_to(v, a.shape[:ax] + (k,) + a.shape[ax + 1:]) for k in (left, right)]
        return np.concatenate([pieces[0], a, pieces[1]], axis=ax)

    return tmap(one, value, xs)


declare("pad_const", HIGH, (NAT, NAT), 2, _pad_scheme(True), _pad_const_meaning,
        "pad_const l r v xs = [v]*l ++ xs ++ [v]*r", check=_nonneg(0, 1), role="layout", read_view=True)
declare("pad_clamp", HIGH, (NAT, NAT), 1, _pad_scheme(False), _pad_mode("edge"),
        "pad_clamp l r xs = [x1]*l ++ xs ++ [xn]*r", check=_nonneg(0, 1), role="layout", read_view=True)
declare("pad_wrap", HIGH, (NAT, NAT), 1, _pad_scheme(False), _pad_mode("wrap"),
        "pad_wrap l r xs = xs[n-l:] ++ xs ++ xs[:r]   (l, r <= n)", check=_nonneg(0, 1), role="layout",
        read_view=True)
declare("pad_mirror", HIGH, (NAT, NAT), 1, _pad_scheme(False), _pad_mode("symmetric"),
        "pad_mirror l r xs = reverse(xs[:l]) ++ xs ++ reverse(xs[n-r:])   (l, r <= n)", check=_nonneg(0, 1),
        role="layout", read_view=True)


# iterate k f : (m * n^k).t -> m.t   where f : (l: nat) -> (l*n).t -> l.t
def _iterate_scheme(fr, params):
    (k,) = params
    n, m, t = fr.nat(), fr.nat(), fr.dt()
    var = fr.var("l")
    lv = Nat.atom(var)
    f = NatFunType(var, FunType(ArrayType(lv * n, t), ArrayType(lv, t)))
    return (f, ArrayType(m * n**k, t)), ArrayType(m, t)


def _iterate_meaning(c):
    k = c.size(c.params[0])
    f, xs = c.args
    ftype = c.arg_types[0]
    factor = c.size(ftype.body.param.size / Nat.atom(ftype.var))
    for _ in range(k):
        length = axis_length(xs, c.ax)
        if length % factor:
            raise InterpretError(f"iterate: length {length} is not a multiple of {factor}")
        xs = c.apply(c.apply_nat(f, length // factor), xs)
    return xs


def _explain_iterate(params, ts):
    if len(ts) == 1:
        return (f"iterate {params[0]}: the function must map an array of length l * n to one of length l, for a "
                f"constant n and every length l")
    if not isinstance(ts[1], ArrayType) or not isinstance(ts[0], NatFunType):
        return None
    body = ts[0].body
    if not isinstance(body, FunType) or not isinstance(body.param, ArrayType):
        return None
    a, b = body.param.elem, ts[1].elem
    if isinstance(a, ScalarType) and isinstance(b, ScalarType) and a != b:
        return None  # an element mismatch, not a size one
    factor = body.param.size / Nat.atom(ts[0].var)
    if factor.unknowns or factor.vars:
        return None
    total, length = factor ** params[0], ts[1].size
    if length.unknowns:
        return None
    return (f"iterate {params[0]} of a function that divides the length by {factor}, on an array of length "
            f"{length}: {length} is not known to be a multiple of {total}")


declare("iterate", HIGH, (NAT,), 2, _iterate_scheme, _iterate_meaning,
        "iterate 0 f xs = xs;  iterate k f xs = iterate (k-1) f (f xs)", explain=_explain_iterate,
        check=_nonneg(0), role="iterate")


# generate n f = [f 0, ..., f (n-1)]
def _generate_scheme(fr, params):
    (n,) = params
    t = fr.dt()
    return (FunType(i32, t),), ArrayType(n, t)


def _generate_meaning(c):
    n = c.size(c.params[0])
    idx = np.broadcast_to(np.arange(n, dtype=np.int32), c.batch + (n,))
    return c.map_apply(c.args[0], idx, n)


declare("generate", HIGH, (NAT,), 1, _generate_scheme, _generate_meaning, "generate n f = [f 0, ..., f (n-1)]",
        check=_positive(0), role="generate")


def _take_scheme(fr, params):
    (n,) = params
    m, t = fr.nat(), fr.dt()
    return (ArrayType(n + m, t),), ArrayType(n, t)


def _drop_scheme(fr, params):
    (n,) = params
    m, t = fr.nat(), fr.dt()
    return (ArrayType(n + m, t),), ArrayType(m, t)


def _slice_meaning(take: bool):
    def meaning(c):
        n = c.size(c.params[0])
        (xs,) = c.args
        length = axis_length(xs, c.ax)
        if n > length:
            raise InterpretError(f"{'take' if take else 'drop'} {n} of an array of length {length}")
        sl = slice(0, n) if take else slice(n, None)
        return tmap(lambda a: a[(slice(None),) * c.ax + (sl,)], xs)

    return meaning


def _explain_cut(what):
    def explain(params, ts):
        if isinstance(ts[0], ArrayType) and (ts[0].size - params[0]).as_int() is not None:
            if (ts[0].size - params[0]).as_int() < 0:
                return f"{what}: the count {params[0]} is larger than the array's length {ts[0].size}"
        return None

    return explain


declare("take", HIGH, (NAT,), 1, _take_scheme, _slice_meaning(True), "take n xs = [x1, ..., xn]   (n <= length)",
        check=_positive(0), explain=_explain_cut("take"), role="layout", read_view=True)
declare("drop", HIGH, (NAT,), 1, _drop_scheme, _slice_meaning(False), "drop n xs = [x(n+1), ..., x(n+m)]   (n <= length)",
        check=_nonneg(0), explain=_explain_cut("drop"), role="layout", read_view=True)


def _concat_scheme(fr, params):
    n, m, t = fr.nat(), fr.nat(), fr.dt()
    return (ArrayType(n, t), ArrayType(m, t)), ArrayType(n + m, t)


declare("concat", HIGH, (), 2, _concat_scheme,
        lambda c: tmap(lambda a, b: np.concatenate([a, b], axis=c.ax), *c.args),
        "concat [x1, ..., xn] [y1, ..., ym] = [x1, ..., xn, y1, ..., ym]", role="layout", read_view=True)


# as_vector w : (m*w).s -> m.vec[s, w];  as_scalar : m.vec[s, w] -> (m*w).s
def _as_vector_scheme(fr, params):
    (w,) = params
    m, s = fr.nat(), fr.dt(TypeClass.SCALAR)
    return (ArrayType(m * w, s),), ArrayType(m, VectorType(s, w))


def _as_vector_meaning(c):
    w = c.size(c.params[0])
    ax = c.ax
    return tmap(lambda a: a.reshape(a.shape[:ax] + (a.shape[ax] // w, w)), c.args[0])


def _as_scalar_scheme(fr, params):
    m, w, s = fr.nat(), fr.nat(), fr.dt(TypeClass.SCALAR)
    return (ArrayType(m, VectorType(s, w)),), ArrayType(m * w, s)


def _check_width(params):
    w = params[0].as_int()
    return None if w in (2, 3, 4, 8, 16) else f"vector width must be 2, 3, 4, 8 or 16, got {params[0]}"


def _explain_as_vector(params, ts):
    if isinstance(ts[0], ArrayType) and isinstance(ts[0].elem, ScalarType):
        return _explain_multiple("as_vector")(params, ts)
    return None


declare("as_vector", HIGH, (NAT,), 1, _as_vector_scheme, _as_vector_meaning,
        "as_vector w [x1, ..., x(m*w)] = [<x1, ..., xw>, ..., <..., x(m*w)>]", explain=_explain_as_vector,
        check=_check_width, role="layout", read_view=True, write_view="as_vector_acc")
declare("as_scalar", HIGH, (), 1, _as_scalar_scheme,
        lambda c: tmap(lambda a: a.reshape(a.shape[:c.ax] + (a.shape[c.ax] * a.shape[c.ax + 1],)), c.args[0]),
        "as_scalar [<x1, ..., xw>, ...] = [x1, ..., xw, ...]",
        role="layout", read_view=True, write_view="as_scalar_acc")


def _let_scheme(fr, params):
    s, t = fr.dt(), fr.dt()
    return (s, FunType(s, t)), t


declare("let", HIGH, (), 2, _let_scheme, lambda c: c.apply(c.args[1], c.args[0]), "let x f = f x   (x computed once)",
        role="bind")


# ============================================================================ scalar

def _unary(cls=TypeClass.NUMERIC):
    def scheme(fr, params):
        s = fr.dt(cls)
        return (s,), s

    return scheme


def _binary(cls=TypeClass.NUMERIC, result=None):
    def scheme(fr, params):
        s = fr.dt(cls)
        return (s, s), (result if result is not None else s)

    return scheme


def _ufunc(fn):
    return lambda c: c.cast_result(tmap(fn, *c.args))


def _c_divide(a, b):
    if np.issubdtype(a.dtype, np.integer):  # C semantics: truncate towards zero
        with np.errstate(divide="ignore", invalid="ignore"):
            # widen before abs: abs of INT32_MIN does not fit in 32 bits
            q = np.abs(a.astype(np.int64)) // np.maximum(np.abs(b.astype(np.int64)), 1)
        return np.where((a < 0) ^ (b < 0), -q, q)
    return a / b


def _c_remainder(a, b):
    return np.fmod(a, np.where(b == 0, 1, b))


_ARITH = [
    ("add", "+", np.add, "add x y = x + y"),
    ("sub", "-", np.subtract, "sub x y = x - y"),
    ("mul", "*", np.multiply, "mul x y = x * y"),
    ("div", "/", _c_divide, "div x y = x / y   (integers: truncated towards zero, as in C)"),
]
for _name, _op, _fn, _eq in _ARITH:
    declare(_name, SCALAR, (), 2, _binary(), _ufunc(_fn), _eq, infix=_op)

declare("rem", SCALAR, (), 2, _binary(TypeClass.INT), _ufunc(_c_remainder), "rem x y = x % y   (C semantics)",
        infix="%")
# IEEE 754 minNum/maxNum, as OpenCL's fmin/fmax: a NaN operand gives the other operand (NaN only
# when both are); the interpreter and the kernels agree on NaN inputs.
declare("min", SCALAR, (), 2, _binary(), _ufunc(np.fmin),
        "min x y = the smaller of x and y   (floats: IEEE minNum, fmin: min NaN y = y)")
declare("max", SCALAR, (), 2, _binary(), _ufunc(np.fmax),
        "max x y = the larger of x and y   (floats: IEEE maxNum, fmax: max NaN y = y)")
declare("neg", SCALAR, (), 1, _unary(), _ufunc(np.negative), "neg x = -x")
declare("abs", SCALAR, (), 1, _unary(), _ufunc(np.abs), "abs x = |x|")
for _name, _fn in [("sqrt", np.sqrt), ("exp", np.exp), ("log", np.log), ("sin", np.sin), ("cos", np.cos)]:
    declare(_name, SCALAR, (), 1, _unary(TypeClass.FLOAT), _ufunc(_fn), f"{_name} x")


def _fma_scheme(fr, params):
    s = fr.dt(TypeClass.FLOAT)
    return (s, s, s), s


declare("fma", SCALAR, (), 3, _fma_scheme, _ufunc(lambda a, b, z: fused_multiply_add(a, b, z)),
        "fma a b c = a * b + c   (rounded once: the exact a * b + c, correctly rounded)")

for _name, _op, _fn in [("lt", "<", np.less), ("le", "<=", np.less_equal), ("gt", ">", np.greater),
                        ("ge", ">=", np.greater_equal), ("eq", "==", np.equal), ("ne", "!=", np.not_equal)]:
    declare(_name, SCALAR, (), 2, _binary(TypeClass.NUMERIC_SCALAR, boolean), _ufunc(_fn), f"{_name} x y = x {_op} y",
            infix=_op)


def _bool_binary(fr, params):
    return (boolean, boolean), boolean


declare("and", SCALAR, (), 2, _bool_binary, _ufunc(np.logical_and), "and x y = x && y", infix="&&")
declare("or", SCALAR, (), 2, _bool_binary, _ufunc(np.logical_or), "or x y = x || y", infix="||")
declare("not", SCALAR, (), 1, lambda fr, p: ((boolean,), boolean), _ufunc(np.logical_not), "not x = !x")


# ---------------------------------------------------------------- fused multiply-add
# The kernels call OpenCL's fma, rounded once; the interpreter computes the same value with
# error-free transformations, not `a * b + c` (rounded twice, which differs where the sum
# cancels the product: fma(a, b, -(a*b)) is the product's rounding error, not 0).

def _two_sum(a, b):
    """(s, e) with s = a + b rounded and s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


_DEKKER = 134217729.0  # 2**27 + 1: splits an f64 into two halves of 26 bits


def _two_product(a, b):
    """(p, e) with p = a * b rounded and p + e = a * b exactly (Dekker), away from overflow."""
    p = a * b
    t = _DEKKER * a
    ah = t - (t - a)
    t = _DEKKER * b
    bh = t - (t - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _odd_sum(a, b):
    """a + b in f64 rounded to odd: an inexact sum becomes the neighbour with an odd last bit.
    Rounding that to a format of at most 51 bits is then the same as rounding the exact sum."""
    s, e = _two_sum(a, b)
    s = np.asarray(s, dtype=np.float64)
    even = (s.view(np.int64) & 1) == 0
    toward = np.where(e > 0, np.inf, -np.inf)
    return np.where((e != 0) & even & np.isfinite(s), np.nextafter(s, toward), s)


def fused_multiply_add(a, b, c):
    """a * b + c rounded once (IEEE fusedMultiplyAdd), for f32 and f64 arrays.

    f32: the product of two f32 is exact in f64; the sum rounded to odd in f64, then to
    f32, is the correctly rounded result.  f64: Boldo and Melquiond's emulation, exact
    product and sum parts with the small parts added rounded to odd; correctly rounded
    away from overflow and underflow (there the plain a * b + c is returned)."""
    with np.errstate(all="ignore"):  # overflows and NaNs take the plain value's path
        return _fma(*(np.asarray(x) for x in (a, b, c)))


def _fma(a, b, c):
    if a.dtype == np.float32:
        wide = [x.astype(np.float64) for x in (a, b, c)]
        return _odd_sum(wide[0] * wide[1], wide[2]).astype(np.float32)
    uh, ul = _two_product(a, b)
    th, tl = _two_sum(c, uh)
    fused = th + _odd_sum(tl, ul)
    plain = a * b + c
    # Below 2**-968 the product's error part underflows; an overflow makes the parts NaN.
    return np.where(np.isfinite(fused) & np.isfinite(ul) & (np.abs(uh) >= 2.0 ** -968), fused, plain)


# --------------------------------------------------------------- OpenCL math built-ins
# Float functions of one argument: name -> NumPy function on the float's own dtype.  The
# kernels call the OpenCL built-in of the same name (within its documented ulp bound).

def _round_half_away(x):
    """OpenCL/C round: halfway cases away from zero (NumPy's round goes to even)."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(np.ones_like(x), x), t)


def _via_double(fn):
    """A function NumPy lacks, computed in f64 by Python's math module, rounded to the dtype."""
    ufunc = np.frompyfunc(fn, 1, 1)

    def apply(x):
        # np.asarray around the result: on a 0-d argument the ufunc gives a bare Python float
        out = np.asarray(ufunc(np.asarray(x, dtype=np.float64)), dtype=np.float64).astype(np.asarray(x).dtype)
        return out[()] if out.ndim == 0 else out
    return apply


FLOAT_UNARY = {
    "erf": _via_double(math.erf), "erfc": _via_double(math.erfc),
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "exp2": np.exp2, "expm1": np.expm1, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "cbrt": np.cbrt, "rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": _round_half_away,
}
_FLOAT_UNARY_EQ = {
    "erf": "erf x = 2/sqrt(pi) * integral of exp(-t^2) from 0 to x",
    "erfc": "erfc x = 1 - erf x", "rsqrt": "rsqrt x = 1 / sqrt x",
    "exp2": "exp2 x = 2^x", "expm1": "expm1 x = exp x - 1", "log1p": "log1p x = log (1 + x)",
    "cbrt": "cbrt x = the real cube root of x",
    "floor": "floor x = the largest integer <= x", "ceil": "ceil x = the smallest integer >= x",
    "trunc": "trunc x = x rounded towards zero", "round": "round x = x rounded to nearest, halfway cases away from zero",
}
for _name, _fn in FLOAT_UNARY.items():
    declare(_name, SCALAR, (), 1, _unary(TypeClass.FLOAT), _ufunc(_fn),
            _FLOAT_UNARY_EQ.get(_name, f"{_name} x   (C's {_name})") + "   (NaN in, NaN out)")

# How a float function of one argument treats a negated argument (imperative.sign_symmetry computes
# f(x) and f(-x) from one call): odd f(-x) = -f(x); even f(-x) = f(x); complement (erfc only)
# f(x) = 2 - f(-x), used as erfc x = (x < 0 ? 2 - erfc |x| : erfc |x|) so that 2 - f is only ever
# taken of f <= 1 (2 - erfc(-d) for a large d would cancel to 0).  Each is an identity of the
# function, and an implementation within its ulp bound stays within it (tests/test_sign_symmetry.py
# checks each against NumPy on random values).
SIGN_SYMMETRY = {"abs": "even", "cos": "even", "cosh": "even",
                 "sin": "odd", "tan": "odd", "asin": "odd", "atan": "odd", "sinh": "odd", "tanh": "odd",
                 "erf": "odd", "cbrt": "odd", "trunc": "odd", "round": "odd",
                 "erfc": "complement"}

FLOAT_BINARY = {"pow": np.power, "fmod": np.fmod, "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign}
_FLOAT_BINARY_EQ = {
    "pow": "pow x y = x^y   (C's pow: pow x 0 = 1 and pow 1 y = 1 even for NaN; a negative x with a "
           "non-integer y gives NaN)",
    "fmod": "fmod x y = x - trunc(x / y) * y, exactly   (the sign of x; fmod x 0 = NaN)",
    "atan2": "atan2 y x = the angle of the point (x, y), in [-pi, pi]",
    "hypot": "hypot x y = sqrt(x^2 + y^2) without overflow",
    "copysign": "copysign x y = |x| with the sign of y",
}
for _name, _fn in FLOAT_BINARY.items():
    declare(_name, SCALAR, (), 2, _binary(TypeClass.FLOAT), _ufunc(_fn), _FLOAT_BINARY_EQ[_name])


def _clamp_scheme(fr, params):
    s = fr.dt(TypeClass.NUMERIC)
    return (s, s, s), s


# Printed as min(max(x, lo), hi) (fmin/fmax for floats), not OpenCL's clamp, whose result is
# undefined for lo > hi: this meaning holds for every input.
declare("clamp", SCALAR, (), 3, _clamp_scheme, _ufunc(lambda x, lo, hi: np.fmin(np.fmax(x, lo), hi)),
        "clamp x lo hi = min (max x lo) hi   (lo > hi gives hi; a NaN x gives lo)")


# ------------------------------------------------------------- integer bit operations
# On i32 and u32 with C's two's-complement meaning.  Shifts take the count modulo 32, as
# OpenCL does (x << 33 = x << 1); bits shifted out are lost; >> is arithmetic on i32 (the
# sign is copied in) and logical on u32.

def _shift(fn):
    def shifted(x, count):
        return fn(x, np.bitwise_and(count, np.asarray(31, dtype=count.dtype)))

    return shifted


INT_BINARY = {
    "bit_and": (np.bitwise_and, "bit_and x y = x & y"),
    "bit_or": (np.bitwise_or, "bit_or x y = x | y"),
    "bit_xor": (np.bitwise_xor, "bit_xor x y = x ^ y"),
    "shl": (_shift(np.left_shift), "shl x k = x << (k & 31)   (two's complement, bits shifted out are lost)"),
    "shr": (_shift(np.right_shift), "shr x k = x >> (k & 31)   (arithmetic on i32, logical on u32)"),
}
for _name, (_fn, _eq) in INT_BINARY.items():
    declare(_name, SCALAR, (), 2, _binary(TypeClass.INT), _ufunc(_fn), _eq)
declare("bit_not", SCALAR, (), 1, _unary(TypeClass.INT), _ufunc(np.invert), "bit_not x = ~x")


# ----------------------------------------------------------------- element access, sizes

def _at_scheme(fr, params):
    n, t = fr.nat(), fr.dt()
    return (ArrayType(n, t), i32), t


def _at_meaning(c):
    xs, index = c.args
    n = axis_length(xs, c.ax)
    index = np.broadcast_to(np.asarray(index, dtype=np.int64), c.batch)
    bad = index[(index < 0) | (index >= n)]
    if bad.size:
        raise InterpretError(f"at: index {int(bad.flat[0])} is out of range for an array of length {n}")
    ax = c.ax

    def one(a):
        picked = np.take_along_axis(a, index.reshape(index.shape + (1,) * (a.ndim - ax)), axis=ax)
        return np.squeeze(picked, axis=ax)

    return tmap(one, xs)


# The index is a run-time i32.  The interpreter refuses one out of range; a kernel clamps it
# to [0, n-1] so it never reads outside the array.  A literal index out of range is a type
# error (functional.infer).
declare("at", HIGH, (), 2, _at_scheme, _at_meaning,
        "at xs i = xs[i]   (0 <= i < n; kernels clamp i to [0, n-1])", role="access")


def _nat_value_meaning(c):
    value = c.size(c.params[0])
    dtype = c.result_type.dtype
    if np.issubdtype(dtype, np.integer) and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        raise InterpretError(f"nat_value {c.params[0]} = {value} does not fit in {c.result_type}")
    return np.broadcast_to(np.asarray(value).astype(dtype), c.batch)


# Like an integer literal, a size used as a value has any numeric type the program needs
# (i32 unless something else is required): `sum / nat_value N` divides an f32 by N.
declare("nat_value", SCALAR, (NAT,), 0, lambda fr, params: ((), fr.dt(TypeClass.NUMERIC_SCALAR)),
        _nat_value_meaning, "nat_value n = the size n as a number (i32 unless the program needs another type)")


def _select_scheme(fr, params):
    t = fr.dt()
    return (boolean, t, t), t


def _select_meaning(c):
    cond, a, b = c.args
    return tmap(lambda x, y: np.where(cond.reshape(cond.shape + (1,) * (x.ndim - cond.ndim)), x, y), a, b)


declare("select", SCALAR, (), 3, _select_scheme, _select_meaning, "select c x y = c ? x : y")


def _cast_scheme(fr, params):
    (target,) = params
    return (fr.dt(TypeClass.SCALAR),), target


def _cast_meaning(c):
    (target,) = c.params
    x = c.args[0]
    if isinstance(target, VectorType):  # a splat: every lane is x
        w = c.size(target.width)
        return np.broadcast_to(x[..., None], x.shape + (w,)).astype(target.elem.dtype)
    return x.astype(target.dtype)


def _check_cast(params):
    t = params[0]
    if isinstance(t, VectorType) and t.width.as_int() in (2, 3, 4, 8, 16):
        return None
    return None if getattr(t, "dtype", None) is not None else "cast takes a scalar type or a vector type (a splat)"


declare("cast", SCALAR, (TYPE,), 1, _cast_scheme, _cast_meaning,
        "cast T x = (T) x;  cast vec[s, w] x = <x, ..., x>", check=_check_cast)


def _user_scheme(fr, params):
    (uf,) = params
    return tuple(t for _, t in uf.params), uf.result


def _user_meaning(c):
    (uf,) = c.params
    if uf.numpy is None:
        raise InterpretError(f"user function {uf.name} has no NumPy meaning (pass user_funs={{'{uf.name}': fn}} to parse)")
    try:
        out = uf.numpy(*c.args)
    except Exception as exc:  # the user's own code: reported with the program's place
        raise InterpretError(f"user function {uf.name} raised {type(exc).__name__}: {exc}") from exc
    out = np.asarray(out).astype(uf.result.dtype)
    try:  # a function that ignores its arguments (or has none) still gives one value per batch element
        return np.broadcast_to(out, c.batch)
    except ValueError:
        raise InterpretError(f"user function {uf.name} returned shape {out.shape} for arguments of shape "
                             f"{c.batch}") from None


declare("user_fun", SCALAR, (USERFUN,), -1, _user_scheme, _user_meaning,
        "user_fun f x1 ... xk = f(x1, ..., xk)   (C body and NumPy meaning given by the user)")


# ============================================================================ low level

for _level in ("map_global", "map_workgroup", "map_local"):
    declare(_level, LOW, (DIM,), 2, _map_scheme, _map_meaning, f"{_level} d f xs = map f xs   (parallel, dimension d)",
            implements="map", check=_check_dim, role="map", loop=_level[len("map_"):])
declare("map_seq", LOW, (), 2, _map_scheme, _map_meaning, "map_seq f xs = map f xs   (a sequential loop)",
        implements="map", role="map", loop="seq")
declare("map_seq_unroll", LOW, (), 2, _map_scheme, _map_meaning, "map_seq_unroll f xs = map f xs   (unrolled)",
        implements="map", role="map", loop="seq", unroll=True)
declare("reduce_seq", LOW, (), 3, _fold_scheme, _fold_meaning,
        "reduce_seq f z [x1, ..., xn] = f (... (f z x1) ...) xn   (a sequential fold)", implements="reduce",
        role="reduce", loop="seq")
# The longest loop of map_seq_unroll / reduce_seq_unroll that is replicated (imperative.passes.unroll); a longer
# one stays a loop, and the rules that unroll a constant-length loop (rules.lowering.unroll_reduce_seq) stop there.
UNROLL_LIMIT = 64
declare("reduce_seq_unroll", LOW, (), 3, _fold_scheme, _fold_meaning,
        "reduce_seq_unroll f z xs = reduce_seq f z xs   (unrolled)", implements="reduce",
        role="reduce", loop="seq", unroll=True)
# Double buffering (a tile staged while the previous one is used): f = fun(acc, x) => let V (fun(y) => B),
# V the staging (local memory, not reading acc).  The translation (dpia.translate) keeps two copies of
# V's buffers and stages element i + 1 into one before step i reads the other, so a work-group's copy of
# the next tile overlaps the products of this one.  The _async form issues the staging's copies as
# asynchronous copies (cp.async, a device intrinsic) where the target offers them, plain copies elsewhere
# (its meaning is the same): which is faster depends on the tiles (an H100: 128 x 128 tiles of 8 x 8
# blocks 3.12 ms plain against 3.73 async, 256 x 128 of 16 x 8 4.96 against 3.87), so it is a rule's choice.
declare("reduce_seq_double_buffered", LOW, (), 3, _fold_scheme, _fold_meaning,
        "reduce_seq_double_buffered f z xs = reduce_seq f z xs   (f's staging of element i + 1, in a second "
        "buffer, before its step on element i)", implements="reduce", role="reduce", loop="seq")
declare("reduce_seq_double_buffered_async", LOW, (), 3, _fold_scheme, _fold_meaning,
        "reduce_seq_double_buffered_async f z xs = reduce_seq_double_buffered f z xs   (the staging's copies "
        "asynchronous where the device has them)", implements="reduce", role="reduce", loop="seq")
DOUBLE_BUFFERED_FOLDS = ("reduce_seq_double_buffered", "reduce_seq_double_buffered_async")


# A work-group's tree of partial results ended in registers: the lanes of the first warp pass
# values to each other (warp shuffles, a device intrinsic: dpia.translate prints the data flow,
# codegen_opencl the instruction, only for devices that offer it).  Its meaning is the tree's own
# (each step combines element i and element i + h as `reduce f z [x_i, x_(i+h)]` does), so the
# rule that introduces it (rules.lowering's warp_tree) is an identity.
WARP_LANES = 32  # the lanes one shuffle reaches: a warp of NVIDIA's GPUs (PTX shfl.sync)
WARP_TYPES = ("f32", "i32", "u32")  # the scalars one 32-bit shuffle moves


def _warp_scheme(fr, params):
    n, t = fr.nat(), fr.dt(TypeClass.SCALAR)
    return (FunType(t, FunType(t, t)), t, ArrayType(n, t)), ArrayType(Nat.const(1), t)


def _warp_meaning(c):
    f, z, xs = c.args
    n = axis_length(xs, c.ax)
    if n < 2 or n > WARP_LANES or n & (n - 1):
        raise InterpretError(f"reduce_warp of {n} elements: a power of two from 2 to {WARP_LANES}")
    while n > 1:
        h, batch = n // 2, c.batch + (n // 2,)
        lo = tmap(lambda a: a[(slice(None),) * c.ax + (slice(0, h),)], xs)
        hi = tmap(lambda a: a[(slice(None),) * c.ax + (slice(h, n),)], xs)
        first = f.apply(batch, lift(z, c.ax, batch)).apply(batch, lo)
        xs, n = f.apply(batch, first).apply(batch, hi), h
    return xs


declare("reduce_warp", LOW, (), 3, _warp_scheme, _warp_meaning,
        "reduce_warp f z xs = iterate k (fun(l, ys) => map (reduce f z) (split 2 (reorder_stride l ys))) xs   "
        f"(length 2^k, 1 <= k <= {WARP_LANES.bit_length() - 1}: the tree's steps in the first warp's registers, "
        "by shuffles)", implements="reduce", role="reduce", loop="warp")


# ---------------------------------------------------------------- TF32 tensor cores (PTX mma.sync)
#
# `tf32 x` rounds a float32 to TF32 (an 8-bit exponent and a 10-bit mantissa: PTX cvt.rna.tf32.f32,
# to nearest, ties away from zero), so a program says where it accepts TF32 products.
# `mma_sync c a b` is one m16n8k8 product of a warp's tensor cores, D = C + tf32(A) tf32(B), on
# *fragments* (its operands rounded as it reads them, as the printed instruction's helper does): each of the warp's 32 lanes holds part of each operand, lane-major arrays
# [32][r] whose layout PTX fixes (g = lane / 4, t = lane % 4):
#     A (16 x 8, m x k)   a[lane][r] = A[g + 8 (r % 2)][t + 4 (r / 2)]        r < 4
#     B (8 x 8, n x k)    b[lane][r] = B[g][t + 4 r]   (B's columns, k along a row) r < 2
#     C (16 x 8, m x n)   c[lane][r] = C[g + 8 (r / 2)][2 t + r % 2]         r < 4
# The layouts are gathers of the joined tile (`fragment_index`), views like any other; a fragment
# array a warp's lanes each keep their own part of is registers after imperative.passes.privatise.
# Its meaning is the product's, so a rule that introduces it is checked like every rule; the
# translation prints the instruction where the target offers it and each lane's own four sums
# otherwise (dpia.translate).
MMA_M, MMA_N, MMA_K = 16, 8, 8
MMA_FRAGMENTS = {"a": (MMA_M, MMA_K, 4), "b": (MMA_N, MMA_K, 2), "c": (MMA_M, MMA_N, 4)}  # rows, cols, per lane


def _div(x, d):
    return floordiv(x, d) if isinstance(x, Nat) else x // d


def _rem(x, d):
    return mod(x, d) if isinstance(x, Nat) else x % d


def fragment_position(kind: str, lane, r):
    """(row, column) of the tile element that lane `lane` holds as its element `r` of a `kind`
    fragment ("a", "b", "c"); ints, NumPy arrays or Nats."""
    g, t = _div(lane, 4), _rem(lane, 4)
    if kind == "a":
        return g + 8 * _rem(r, 2), t + 4 * _div(r, 2)
    if kind == "b":
        return g, t + 4 * r
    if kind == "c":
        return g + 8 * _div(r, 2), 2 * t + _rem(r, 2)
    raise ValueError(f"no fragment {kind!r}: a, b or c")


def fragment_holder(kind: str, row, col):
    """(lane, r) of the lane holding tile element (row, col) of a `kind` fragment and its place
    there (the inverse of fragment_position); ints, NumPy arrays or Nats."""
    if kind == "a":
        return 4 * _rem(row, 8) + _rem(col, 4), _div(row, 8) + 2 * _div(col, 4)
    if kind == "b":
        return 4 * row + _rem(col, 4), _div(col, 4)
    if kind == "c":
        return 4 * _rem(row, 8) + _div(col, 2), 2 * _div(row, 8) + _rem(col, 2)
    raise ValueError(f"no fragment {kind!r}: a, b or c")


def fragment_index(kind: str) -> IndexFun:
    """The gather of a `kind` fragment: element i = per_lane * lane + r of the joined fragment
    array is element row * cols + col of the joined tile."""
    _rows, cols, per_lane = MMA_FRAGMENTS[kind]
    n = Var("n", 1)
    i = Var("i", 0, Nat.atom(n))
    row, col = fragment_position(kind, floordiv(Nat.atom(i), per_lane), mod(Nat.atom(i), per_lane))
    return IndexFun(i, n, row * cols + col)


def tf32_round(x):
    """float32 values rounded to TF32: to nearest, ties away from zero (cvt.rna.tf32.f32); NaN and
    infinities unchanged, values past TF32's largest rounded to infinity."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), rounded, x).astype(np.float32)


def _tf32_scheme(fr, params):
    from .types import f32

    return (f32,), f32


declare("tf32", SCALAR, (), 1, _tf32_scheme, lambda c: tmap(tf32_round, *c.args),
        "tf32 x = x rounded to the nearest TF32 value (10 mantissa bits; ties away from zero)")


def _mma_scheme(fr, params):
    from .types import f32

    def frag(per_lane):
        return ArrayType(Nat.const(32), ArrayType(Nat.const(per_lane), f32))

    return (frag(4), frag(4), frag(2)), frag(4)


def _unfragment(kind: str, frag: np.ndarray, ax: int) -> np.ndarray:
    """The tile (axes ax, ax+1) of a fragment array (axes ax: lane, ax+1: r), batch axes kept."""
    rows, cols, per_lane = MMA_FRAGMENTS[kind]
    lanes, rs = np.meshgrid(np.arange(32), np.arange(per_lane), indexing="ij")
    row, col = fragment_position(kind, lanes, rs)
    tile = np.empty(frag.shape[:ax] + (rows, cols), frag.dtype)
    tile[..., row, col] = frag
    return tile


def _mma_meaning(c):
    cf, af, bf = (np.asarray(x, dtype=np.float32) for x in c.args)
    ax = c.ax
    ct, at, bt = _unfragment("c", cf, ax), _unfragment("a", af, ax), _unfragment("b", bf, ax)
    # products of TF32 values are exact in float64; the sums rounded once: within the tensor
    # cores' own rounding of their sums (their order is the hardware's)
    d = ct.astype(np.float64) + np.einsum("...ik,...jk->...ij", tf32_round(at).astype(np.float64),
                                          tf32_round(bt).astype(np.float64))
    lanes, rs = np.meshgrid(np.arange(32), np.arange(4), indexing="ij")
    row, col = fragment_position("c", lanes, rs)
    return d[..., row, col].astype(np.float32)


declare("mma_sync", LOW, (), 3, _mma_scheme, _mma_meaning,
        "mma_sync c a b = frag_c (unfrag_c c + tf32 (unfrag_a a) . transpose (tf32 (unfrag_b b)))   "
        "(one m16n8k8 product by a warp's tensor cores, on fragments: see fragment_position)",
        role="collective", loop="warp")


def _identity_scheme(fr, params):
    t = fr.dt()
    return (t,), t


for _space in ("global", "local", "private"):
    declare(f"to_{_space}", LOW, (), 1, _identity_scheme, lambda c: c.args[0],
            f"to_{_space} x = x   (x is stored in {_space} memory)", role="store", space=_space)


def _map_vec_scheme(fr, params):
    s, t, w = fr.dt(TypeClass.SCALAR), fr.dt(TypeClass.SCALAR), fr.nat()
    return (FunType(s, t), VectorType(s, w)), VectorType(t, w)


def _map_vec_meaning(c):
    f, v = c.args
    return c.map_apply(f, v, axis_length(v, c.ax))


declare("map_vec", LOW, (), 2, _map_vec_scheme, _map_vec_meaning,
        "map_vec f <x1, ..., xw> = <f x1, ..., f xw>   (a vectorised scalar function)", implements="map",
        role="map", loop="lanes")


def decl(name: str) -> PrimDecl:
    return PRIMITIVES[name]


def with_role(role: str, level: str | None = None) -> frozenset[str]:
    """The primitives of a role (and level): e.g. with_role("map") is every map-like primitive."""
    return frozenset(n for n, d in PRIMITIVES.items() if d.role == role and (level is None or d.level == level))


# Derived sets, for passes that test membership (each computed from the declarations above).
LAYOUT = with_role("layout")
MAPS = with_role("map")  # map, map_global, map_workgroup, map_local, map_seq, map_seq_unroll, map_vec
def has_low_level(e: Expr) -> bool:
    """Whether any low-level primitive (a loop map, reduce_seq, to_local, ...) occurs in `e`:
    something in it was lowered already, by hand or by an explored point."""
    return any(isinstance(x, Prim) and x.name in PRIMITIVES and PRIMITIVES[x.name].level == LOW for x in walk(e))


LOOP_MAPS = frozenset(n for n in MAPS if PRIMITIVES[n].loop in ("global", "workgroup", "local", "seq"))
PARALLEL_MAPS = frozenset(n for n in MAPS if PRIMITIVES[n].loop in ("global", "workgroup", "local"))
REDUCTIONS = with_role("reduce")
LOW_REDUCTIONS = frozenset(n for n in with_role("reduce", LOW) if PRIMITIVES[n].loop == "seq")  # one item's loop
WARP_REDUCTIONS = frozenset(n for n in with_role("reduce", LOW) if PRIMITIVES[n].loop == "warp")
COLLECTIVES = with_role("collective")  # a warp's lanes compute it together (mma_sync)
# the first argument is a function applied to each element (a map's, a reduction's operator, generate's):
# code one item runs per element, never a place for a parallel level
ELEMENT_FUNCTIONS = MAPS | REDUCTIONS | with_role("generate")
STORES = {n: PRIMITIVES[n].space for n in with_role("store")}  # to_global -> global, ...
READ_VIEWS = frozenset(n for n in LAYOUT if PRIMITIVES[n].read_view)
WRITE_VIEWS = {n: PRIMITIVES[n].write_view for n in LAYOUT if PRIMITIVES[n].write_view}


def _is_view_expr(e: Expr, bound: str) -> bool:
    """`e` only rearranges the array named `bound` (layout primitives and maps of views)."""
    if isinstance(e, Identifier):
        return e.name == bound
    head, args = spine(e)
    if not isinstance(head, Prim):
        return False
    if head.name in LAYOUT:
        # a constant argument (pad_const's pad value) is read where it is needed, as an index is
        data = [a for a in args if not isinstance(a, Literal)]
        return bool(data) and all(_is_view_expr(a, bound) for a in data)
    if head.name == "map" and len(args) == 2:
        return is_view_fn(args[0]) and _is_view_expr(args[1], bound)
    if head.name == "at" and len(args) == 2 and _rows_of_arrays(e, args[0]):
        # a row of a view (split-k's chunk k of each row: at (split r x) k), at an index free of it
        return _is_view_expr(args[0], bound) and bound not in free_identifiers(args[1])
    return False


def _rows_of_arrays(e: Expr, xs: Expr) -> bool:
    """`at xs i` (= e) is an array: by its type, or untyped (a rule's result not yet
    inferred) where xs is a split or a slide, whose elements are arrays."""
    if e.t is not None:
        return isinstance(e.t, ArrayType)
    head, _ = spine(xs)
    return isinstance(head, Prim) and head.name in ("split", "slide")


def has_computation(e: Expr) -> bool:
    """`e` computes somewhere (a map of any level, a reduction, iterate), rather than only
    rearranging data: what code between two parallel levels must not do (each item of the
    inner level would compute it again, into the same memory)."""
    computing = MAPS | REDUCTIONS | {"iterate"}
    return any(isinstance(x, App) and isinstance(x.fun, Prim) and x.fun.name in computing
               and not (x.fun.name == "map" and is_view_fn(x.arg)) for x in walk(e))


def computing_map(e: Expr, saturated: bool = True) -> bool:
    """`map f xs` whose function computes (not a layout view like `map join`); with
    `saturated=False` also the function `map f` (a map applied later, by a strategy's walk)."""
    head, args = spine(e)
    arity_ok = len(args) == 2 if saturated else 1 <= len(args) <= 2
    return isinstance(head, Prim) and head.name == "map" and arity_ok and not is_view_fn(args[0])


def is_view_fn(f: Expr) -> bool:
    """A function that only moves data: a layout primitive (`join`, `split 4`, `transpose`,
    `map join`) or `fun(x) => <layout primitives applied to x>`.  The identity is not a
    view: `map (fun(v) => v)` is a copy."""
    head, args = spine(f)
    if isinstance(head, Prim):
        if head.name in LAYOUT:
            return not args
        if head.name == "map" and len(args) == 1:
            return is_view_fn(args[0])
        return False
    if isinstance(f, Lambda):
        return not isinstance(f.body, Identifier) and _is_view_expr(f.body, f.param.name)
    return False
