"""What rules may assume about a reduction's operator: associativity, commutativity and
neutral elements, proven from the operator's form (never assumed).

`reduce f z xs` means the left fold `z f x1 f ... f xn` (the interpreter computes exactly
that).  Rules that regroup the fold need `f` associative; rules that start several partial
folds from `z` need `z` neutral for `f` too; rules that reorder the elements need `f`
commutative.  A property holds here when the operator has one of these forms:

    a binary primitive            add, mul, min, max, and, or (bit operations where declared)
    fun(a, b) => op a b           or op b a for a commutative op
    fun(a, b) => pair (F0) (F1)   component k of the result is op (proj_k a) (proj_k b): tuples
                                  reduced component by component (sum and sum of squares, ...)
    fun(a, b) => generate n (fun(k) => F)   element k of the result is F's form at (at a k) and
                                  (at b k): n-arrays reduced element by element (the fused
                                  reductions of rules.algorithmic generate_reduce_fusion);
                                  neutral: `generate n (fun(k) => e)`, e neutral for F;
                                  also written `map (fun(p) => F) (zip a b)` (fst p = at a k,
                                  snd p = at b k: what rules.indexing makes of the generate)
    fun(a, b) => select (K a < K b) a b   the element of least key (argmin, argmax: see
                                  select_by_key): associative only
    associative g                 declared so by the program (`fl.associative(g)`): associative
                                  only, on the user's word (Chan's merge of mean/variance
                                  summaries is associative in real arithmetic, not by its form)

Floating-point add and mul are associative up to rounding: rules that rely on it are marked
inexact (their checks compare within a tolerance).  Neutral elements: 0 for add, 1 for mul,
+inf (the largest integer) for min, -inf (the smallest) for max, true for and, false for or.

Vectors: the operators act lane-wise at type vec[s, w] (reduce_vectorize's lanes), so a
vector whose every lane is the scalar neutral element is neutral, and the splat of a
neutral literal is such a vector:

    cast vec[s, w] e  f  v  =  v  =  v  f  cast vec[s, w] e     (e neutral for f at type s)

(checked on random instances: the vector reductions of functional.rules.instances, split
and reduced in trees from that splat by reduce_split and reduce_tree).
"""

from __future__ import annotations

import math

import attrs

from .expr import App, Expr, Identifier, Lambda, Literal, Prim, free_identifiers, fresh_name, spine
from .types import ArrayType, ScalarType, TupleType, VectorType

# op -> commutative (every op listed is associative)
_OPS = {"add": True, "mul": True, "min": True, "max": True, "and": True, "or": True,
        "bit_and": True, "bit_or": True, "bit_xor": True}


def _neutral_value(op: str, t: ScalarType):
    if op == "add" or op in ("bit_or", "bit_xor"):
        return 0
    if op == "mul":
        return 1
    if op == "bit_and":
        return -1
    if op in ("min", "max"):
        big = math.inf if t.is_float else (2**31 - 1 if t.name == "i32" else 2**32 - 1)
        small = -math.inf if t.is_float else (-(2**31) if t.name == "i32" else 0)
        return big if op == "min" else small
    if op == "and":
        return True
    if op == "or":
        return False
    return None


@attrs.frozen
class Elementwise:
    """The form of `fun(a, b) => generate n (fun(k) => F)`: `elem` (F's form) at each of n elements."""

    length: object  # the generate's Nat
    elem: object


def _projection(e: Expr, param: str) -> tuple | None:
    """The access path of `e` from the identifier `param` (fst = 0, snd = 1, `at _ k` = ("at", k)
    for an index identifier k), or None."""
    path: list = []
    while not (isinstance(e, Identifier) and e.name == param):
        head, args = spine(e)
        if isinstance(head, Prim) and head.name in ("fst", "snd") and len(args) == 1:
            path.append(0 if head.name == "fst" else 1)
        elif isinstance(head, Prim) and head.name == "at" and len(args) == 2 and isinstance(args[1], Identifier):
            path.append(("at", args[1].name))
        else:
            return None
        e = args[0]
    return tuple(reversed(path))


def operator_form(f: Expr):
    """The component-wise operator `f` is: an op name, or a tuple of forms for a tuple
    operator; None when `f` has none of the recognised forms."""
    head, args = spine(f)
    if isinstance(head, Prim) and head.name in _OPS and not args:
        return head.name
    if isinstance(f, Lambda) and isinstance(f.body, Lambda):
        return _form(f.body.body, f.param.name, f.body.param.name, ())
    return None


def _form(body: Expr, a: str, b: str, path: tuple):
    head, args = spine(body)
    if isinstance(head, Prim) and head.name == "pair" and len(args) == 2:
        parts = (_form(args[0], a, b, path + (0,)), _form(args[1], a, b, path + (1,)))
        return None if None in parts else parts
    if isinstance(head, Prim) and head.name == "generate" and len(args) == 1 and isinstance(args[0], Lambda):
        k = args[0].param.name
        if k in (a, b) or any(isinstance(step, tuple) and step[1] == k for step in path):
            return None  # the index shadows an operand or an outer index: the paths would not say which
        elem = _form(args[0].body, a, b, path + (("at", k),))
        return None if elem is None else Elementwise(head.params[0], elem)
    if isinstance(head, Prim) and head.name == "map" and len(args) == 2:
        generated = _zip_map_as_generate(args[0], args[1], (a, b) + tuple(s[1] for s in path if isinstance(s, tuple)))
        return None if generated is None else _form(generated, a, b, path)
    if isinstance(head, Prim) and head.name in _OPS and len(args) == 2:
        left, right = _projection(args[0], a), _projection(args[1], b)
        if left == path and right == path:
            return head.name
        if _OPS[head.name] and _projection(args[0], b) == path and _projection(args[1], a) == path:
            return head.name
    return None


def _zip_map_as_generate(f: Expr, data: Expr, taken: tuple) -> Expr | None:
    """`map (fun(p) => F) (zip X Y)` as `generate n (fun(k) => F[at X k / fst p, at Y k / snd p])`
    (None when F uses p otherwise, or the zip's length is unknown)."""
    zipped = spine(data)
    if not (isinstance(f, Lambda) and isinstance(zipped[0], Prim) and zipped[0].name == "zip"
            and len(zipped[1]) == 2 and isinstance(data.t, ArrayType)):
        return None
    x, y = zipped[1]
    p = f.param.name
    k = Identifier(fresh_name("k", set(taken) | free_identifiers(f.body) | free_identifiers(data)))

    def replace(e: Expr) -> Expr | None:
        head, args = spine(e)
        if isinstance(head, Prim) and head.name in ("fst", "snd") and len(args) == 1 \
                and isinstance(args[0], Identifier) and args[0].name == p:
            return App(App(Prim("at"), x if head.name == "fst" else y), k)
        if isinstance(e, Identifier):
            return None if e.name == p else e
        if isinstance(e, Lambda):
            if e.param.name == p:
                return e
            body = replace(e.body)
            return None if body is None else attrs.evolve(e, body=body, t=None)
        if isinstance(e, App):
            fun, arg = replace(e.fun), replace(e.arg)
            return None if fun is None or arg is None else attrs.evolve(e, fun=fun, arg=arg, t=None)
        return e

    body = replace(f.body)
    if body is None:
        return None
    return App(Prim("generate", (data.t.size,)), Lambda(k, body))


_ORDERS = ("lt", "le", "gt", "ge")


def select_by_key(f: Expr) -> bool:
    """`fun(a, b) => select (K a < K b) a b` (or <=, >, >=; K a projection path, the same on
    both sides): the element with the least (greatest) key, ties to one side.  Associative
    for keys in a total order (NaN keys excepted), neither commutative (ties) nor with a
    neutral element (an infinite key still loses its ties): argmin and argmax."""
    if not (isinstance(f, Lambda) and isinstance(f.body, Lambda)):
        return False
    a, b, body = f.param.name, f.body.param.name, f.body.body
    head, args = spine(body)
    if not (isinstance(head, Prim) and head.name == "select" and len(args) == 3):
        return False
    cond, x, y = args
    chead, cargs = spine(cond)
    if not (isinstance(chead, Prim) and chead.name in _ORDERS and len(cargs) == 2):
        return False
    ka, kb = _projection(cargs[0], a), _projection(cargs[1], b)
    picks = (_projection(x, a), _projection(y, b))
    return ka is not None and ka == kb and picks == ((), ())


def declared_associative(f: Expr) -> bool:
    """`associative g`: the program declares g associative (the user's word, not a proof)."""
    head, args = spine(f)
    return isinstance(head, Prim) and head.name == "associative" and len(args) == 1


def associative(f: Expr) -> bool:
    return operator_form(f) is not None or select_by_key(f) or declared_associative(f)


def commutative(f: Expr) -> bool:
    form = operator_form(f)
    return form is not None and _all_leaves(form, lambda op: _OPS[op])


def _all_leaves(form, test) -> bool:
    if isinstance(form, tuple):
        return all(_all_leaves(x, test) for x in form)
    if isinstance(form, Elementwise):
        return _all_leaves(form.elem, test)
    return test(form)


def neutral(f: Expr, z: Expr) -> bool:
    """`z` is a neutral element of `f` (literals, pairs of literals, casts of literals: a
    cast to a vector type is the splat of the literal, neutral lane-wise)."""
    form = operator_form(f)
    return form is not None and _neutral(form, z)


def _neutral(form, z: Expr) -> bool:
    head, args = spine(z)
    if isinstance(form, Elementwise):  # every element the same neutral value, whatever its index
        return (isinstance(head, Prim) and head.name == "generate" and len(args) == 1
                and isinstance(args[0], Lambda) and head.params[0] == form.length
                and args[0].param.name not in free_identifiers(args[0].body) and _neutral(form.elem, args[0].body))
    if isinstance(form, tuple):
        return (isinstance(head, Prim) and head.name == "pair" and len(args) == 2
                and all(_neutral(x, a) for x, a in zip(form, args)))
    value = _literal_value(z)
    scalar = z.t.elem if isinstance(z.t, VectorType) else z.t  # a splat: every lane the literal
    if value is None or not isinstance(scalar, ScalarType):
        return False
    want = _neutral_value(form, scalar)
    return want is not None and value == want and not (isinstance(value, float) and math.isnan(value))


def _literal_value(z: Expr):
    if isinstance(z, Literal):
        return z.value
    head, args = spine(z)
    if isinstance(head, Prim) and head.name == "cast" and len(args) == 1 and isinstance(args[0], Literal):
        return args[0].value
    return None


def neutral_element(f: Expr, t) -> Expr | None:
    """A neutral element of `f` at type `t`, as an expression (None if `f` has no known form)."""
    from . import dsl as fl

    form = operator_form(f)
    if form is None:
        return None
    return _element(form, t, fl)


def _element(form, t, fl):
    if isinstance(form, Elementwise):
        if not (isinstance(t, ArrayType) and t.size == form.length):
            return None
        elem = _element(form.elem, t.elem, fl)
        return None if elem is None else fl.generate(form.length, lambda k: elem)
    if isinstance(form, tuple):
        if not isinstance(t, TupleType):
            return None
        parts = [_element(x, et, fl) for x, et in zip(form, t.elems)]
        return None if None in parts else fl.pair(*parts)
    if not isinstance(t, ScalarType):
        return None
    value = _neutral_value(form, t)
    if value is None:
        return None
    if t.name == "bool":
        value = bool(value)
    elif t.is_float:
        value = float(value)
    return fl.literal(value, t)


__all__ = ["Elementwise", "associative", "commutative", "declared_associative", "neutral", "neutral_element", "operator_form", "select_by_key"]
