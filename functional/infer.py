"""Type inference: Hindley-Milner unification of data types plus solving of size equations.

Size equations are solved for one unknown at a time (`m*n = N` gives `m = N/n`); an
equation with several unknowns waits until enough of them are known.  A solution that
divides must be provably integral: `split 3` of an `N`-array is rejected unless `N` is
declared a multiple of 3 (`nat("N", multiple_of=3)`).  Unknowns never leak: every node of
the returned program carries its fully solved type in `.t`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from typing import Iterable

import attrs

from .errors import TypeInferenceError, excerpt
from .expr import App, Expr, Identifier, Lambda, Literal, NatApp, NatLambda, Prim, spine
from .nat import ARITHMETIC, Nat, Unknown, Var, as_nat, is_integral, is_nonneg, substitute
from .primitives import PRIMITIVES, PrimDecl
from .types import (
    ArrayType,
    FunType,
    NatFunType,
    ScalarType,
    TupleType,
    Type,
    TypeClass,
    TypeVar,
    VectorType,
    boolean,
    f32,
    i32,
    map_nats,
)

_SCALARS = ("f32", "f64", "i32", "u32", "bool")
_NUM = ("f32", "f64", "i32", "u32")
_CLASS_KINDS = {
    TypeClass.ANY: frozenset(_SCALARS) | {f"v:{s}" for s in _SCALARS} | {"data"},
    TypeClass.SCALAR: frozenset(_SCALARS),
    TypeClass.NUMERIC_SCALAR: frozenset(_NUM),
    TypeClass.NUMERIC: frozenset(_NUM) | {f"v:{s}" for s in _NUM},
    TypeClass.FLOAT: frozenset({"f32", "f64", "v:f32", "v:f64"}),
    TypeClass.INT: frozenset({"i32", "u32"}),
}
_ANYTHING = _CLASS_KINDS[TypeClass.ANY] | {"fun"}  # unannotated lambda parameters
_DESCRIBE = {
    _CLASS_KINDS[TypeClass.ANY]: "a data type",
    _CLASS_KINDS[TypeClass.NUMERIC]: "a numeric type",
    _CLASS_KINDS[TypeClass.NUMERIC_SCALAR]: "a numeric scalar",
    _CLASS_KINDS[TypeClass.FLOAT]: "a floating-point type",
    frozenset({"f32", "f64"}): "a floating-point scalar",
    _CLASS_KINDS[TypeClass.INT]: "an integer type",
    _CLASS_KINDS[TypeClass.SCALAR]: "a scalar type",
}


def _kind(t: Type) -> str:
    if isinstance(t, ScalarType):
        return t.name
    if isinstance(t, VectorType):
        return f"v:{t.elem.name}" if isinstance(t.elem, ScalarType) else "v:?"
    if isinstance(t, (FunType, NatFunType)):
        return "fun"
    return "data"


class _Mismatch(Exception):
    """Raised inside unification; turned into a TypeInferenceError at the node being typed."""

    def __init__(self, message: str, divisibility: bool = False, infinite: bool = False):
        super().__init__(message)
        self.message = message
        self.divisibility = divisibility
        self.infinite = infinite  # an occurs-check failure: reported as is, not explained away


@attrs.define
class _Deferred:
    lhs: Nat
    rhs: Nat
    node: Expr


class Inference:
    """One inference run: unknowns, their solutions and the equations still waiting."""

    def __init__(self, reuse: bool = False, depth: int = 0) -> None:
        self.counter = 0
        self.reuse = reuse  # type data subterms standing alone where that decides them (_standalone)
        self.depth = depth  # how many standalone typings this one is nested in
        self.named_vars = False  # whether a scheme named a size variable after the counter (iterate)
        self.finished: set[int] = set()  # ids of the parts typed standing alone: final already
        self.types: dict[int, Type] = {}
        self.allowed: dict[int, frozenset] = {}
        self.nats: dict[Unknown, Nat] = {}
        self._resolved: dict[Nat, Nat] = {}  # nat_of's answers while no new solution arrives
        self.deferred: list[_Deferred] = []
        self.current: Expr | None = None

    # -- fresh unknowns (the `fresh` protocol used by primitive schemes) ------------------
    def nat(self) -> Nat:
        self.counter += 1
        return Nat.atom(Unknown(self.counter))

    def dt(self, cls: TypeClass = TypeClass.ANY) -> TypeVar:
        self.counter += 1
        self.allowed[self.counter] = _CLASS_KINDS[cls]
        return TypeVar(self.counter, cls)

    def anything(self) -> TypeVar:
        tv = self.dt()
        self.allowed[tv.id] = _ANYTHING
        return tv

    def var(self, base: str) -> Var:
        self.counter += 1
        self.named_vars = True
        return Var(f"{base}{self.counter}")

    # -- resolution -----------------------------------------------------------------------
    def nat_of(self, n: Nat) -> Nat:
        """`n` with solved unknowns replaced (solutions are stored unsubstituted and
        resolved here, lazily: eager substitution made inference quadratic; answers are
        memoised until the next solution, as the final pass resolves the same sizes again and again)."""
        if not n.unknowns:
            return n
        done = self._resolved.get(n)
        if done is not None:
            return done
        start = n
        for _ in range(len(self.nats) + 1):
            if not any(u in self.nats for u in n.unknowns):
                break
            n = substitute(n, lambda a: self.nats.get(a) if isinstance(a, Unknown) else None)
        self._resolved[start] = n
        return n

    def resolve(self, t: Type) -> Type:
        """`t` with solved unknowns replaced: `t` itself where none of its parts changes
        (types are values; keeping the object saves rebuilding every type of a term)."""
        while isinstance(t, TypeVar) and t.id in self.types:
            t = self.types[t.id]
        if isinstance(t, ArrayType):
            size, elem = self.nat_of(t.size), self.resolve(t.elem)
            return t if size is t.size and elem is t.elem else ArrayType(size, elem)
        if isinstance(t, VectorType):
            elem, width = self.resolve(t.elem), self.nat_of(t.width)
            return t if elem is t.elem and width is t.width else VectorType(elem, width)
        if isinstance(t, TupleType):
            elems = tuple(self.resolve(e) for e in t.elems)
            return t if all(a is b for a, b in zip(elems, t.elems)) else TupleType(elems)
        if isinstance(t, FunType):
            param, result = self.resolve(t.param), self.resolve(t.result)
            return t if param is t.param and result is t.result else FunType(param, result)
        if isinstance(t, NatFunType):
            body = self.resolve(t.body)
            return t if body is t.body else NatFunType(t.var, body)
        return t

    def shallow(self, t: Type) -> Type:
        while isinstance(t, TypeVar) and t.id in self.types:
            t = self.types[t.id]
        return t

    # -- unification ----------------------------------------------------------------------
    def unify(self, a: Type, b: Type) -> None:
        a, b = self.shallow(a), self.shallow(b)
        if isinstance(a, TypeVar) or isinstance(b, TypeVar):
            self._bind(a, b)
        elif isinstance(a, ScalarType) and isinstance(b, ScalarType):
            if a != b:
                raise _Mismatch(f"{a} and {b} differ")
        elif isinstance(a, VectorType) and isinstance(b, VectorType):
            try:
                self.unify(a.elem, b.elem)  # an element may still be an unknown (as_vector, map_vec)
            except _Mismatch:
                raise _Mismatch(f"vectors of {self.resolve(a.elem)} and {self.resolve(b.elem)}") from None
            self.unify_nat(a.width, b.width)
        elif isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
            for x, y in zip(a.elems, b.elems):
                self.unify(x, y)
        elif isinstance(a, ArrayType) and isinstance(b, ArrayType):
            self.unify_nat(a.size, b.size)
            self.unify(a.elem, b.elem)
        elif isinstance(a, FunType) and isinstance(b, FunType):
            self.unify(a.param, b.param)
            self.unify(a.result, b.result)
        elif isinstance(a, NatFunType) and isinstance(b, NatFunType):
            # Rename the expected side's binder to the found side's, whose body mentions it.
            renamed = map_nats(a.body, lambda n: substitute(n, {a.var: Nat.atom(b.var)}))
            self.unify(renamed, b.body)
        else:
            raise _Mismatch(f"{self.resolve(a)} and {self.resolve(b)} differ")

    def _bind(self, a: Type, b: Type) -> None:
        if isinstance(b, TypeVar) and not isinstance(a, TypeVar):
            a, b = b, a
        assert isinstance(a, TypeVar)
        if isinstance(b, TypeVar):
            if a.id == b.id:
                return
            both = self.allowed[a.id] & self.allowed[b.id]
            if not both:
                raise _Mismatch(f"no type is both {self._describe(a)} and {self._describe(b)}")
            self.allowed[b.id] = both
            self.types[a.id] = b
            return
        elem = self.shallow(b.elem) if isinstance(b, VectorType) else None
        if isinstance(elem, TypeVar):
            # A vector of a still unknown scalar: narrow that scalar to the vectors `a` allows.
            elems = {k[2:] for k in self.allowed[a.id] if k.startswith("v:")} & self.allowed[elem.id]
            if not elems:
                raise _Mismatch(f"{self.resolve(b)} is not {self._describe(a)}")
            self.allowed[elem.id] = frozenset(elems)
        elif _kind(self.resolve(b) if elem is not None else b) not in self.allowed[a.id]:
            raise _Mismatch(f"{self.resolve(b)} is not {self._describe(a)}")
        if self._occurs(a.id, b):
            raise _Mismatch(f"infinite type: {a} occurs in {self.resolve(b)}", infinite=True)
        self.types[a.id] = b

    def _describe(self, tv: TypeVar) -> str:
        return _DESCRIBE.get(self.allowed[tv.id], "any type")

    def show(self, t: Type) -> str:
        """A type for a message: `type N.f32` when known, otherwise in words (`a numeric type`,
        `an array of length N`), so that no inference unknown (`?t3`) reaches the user."""
        t = self.resolve(t)
        if not _has_unknowns(t):
            return f"type {t}"
        return self._words(t)

    def _words(self, t: Type) -> str:
        t = self.resolve(t)
        if isinstance(t, TypeVar):
            return self._describe(t)
        if isinstance(t, ArrayType):
            out = "an array" if t.size.unknowns else f"an array of length {t.size}"
            elem = self.resolve(t.elem)
            if not _has_unknowns(elem):
                return f"{out} of {elem}"
            if isinstance(elem, ArrayType):
                return f"{out} of arrays"
            if isinstance(elem, TypeVar) and self.allowed[elem.id] not in (_ANYTHING, _CLASS_KINDS[TypeClass.ANY]):
                return f"{out} (elements: {self._describe(elem)})"
            return out
        if isinstance(t, VectorType):
            return "a vector"
        if isinstance(t, TupleType):
            return "a pair" if len(t.elems) == 2 else f"a tuple of {len(t.elems)}"
        if isinstance(t, (FunType, NatFunType)):
            return f"a function of type {self._sketch(t)}"
        return f"type {t}"

    def _sketch(self, t: Type) -> Type:
        """`t` with every unknown shown as `_` (for messages only)."""
        hole = Nat.atom(Var("_"))

        def go(x: Type) -> Type:
            x = self.resolve(x)
            if isinstance(x, TypeVar):
                return ScalarType("_")
            if isinstance(x, ArrayType):
                return ArrayType(substitute(x.size, lambda a: hole if isinstance(a, Unknown) else None), go(x.elem))
            if isinstance(x, VectorType):
                return VectorType(go(x.elem), substitute(x.width, lambda a: hole if isinstance(a, Unknown) else None))
            if isinstance(x, TupleType):
                return TupleType(tuple(go(e) for e in x.elems))
            if isinstance(x, FunType):
                return FunType(go(x.param), go(x.result))
            if isinstance(x, NatFunType):
                return NatFunType(x.var, go(x.body))
            return x

        return go(t)

    def _occurs(self, tid: int, t: Type) -> bool:
        t = self.shallow(t)
        if isinstance(t, TypeVar):
            return t.id == tid
        if isinstance(t, (ArrayType,)):
            return self._occurs(tid, t.elem)
        if isinstance(t, TupleType):
            return any(self._occurs(tid, e) for e in t.elems)
        if isinstance(t, FunType):
            return self._occurs(tid, t.param) or self._occurs(tid, t.result)
        if isinstance(t, NatFunType):
            return self._occurs(tid, t.body)
        return False

    # -- size equations -------------------------------------------------------------------
    def unify_nat(self, a: Nat, b: Nat) -> None:
        if not self._solve(a, b):
            self.deferred.append(_Deferred(a, b, self.current))

    def _solve(self, a: Nat, b: Nat) -> bool:
        """Solve `a = b` if it has at most one usable unknown; False means: wait."""
        a, b = self.nat_of(as_nat(a)), self.nat_of(as_nat(b))
        diff = a - b
        if not diff.terms:
            return True
        unknowns = diff.unknowns
        if not unknowns:
            raise _Mismatch(f"sizes {a} and {b} differ")
        choice = self._pick(diff, unknowns)
        if choice is None:
            return False
        u, coeff, rest = choice
        if coeff.terms[-1][1] < 0:
            coeff, rest = -coeff, -rest
        solution = (-rest) / coeff
        if not solution.unknowns and not is_integral(solution):
            raise _Mismatch(f"{-rest} is not known to be a multiple of {coeff}", divisibility=True)
        k = solution.as_int()
        if k is not None and k < 0:  # zero is fine for a part never materialised (take n of n)
            raise _Mismatch(f"sizes {a} and {b} force a size of {k}")
        self.nats[u] = solution
        self._resolved.clear()
        self._retry()
        return True

    def _pick(self, diff: Nat, unknowns: Iterable[Unknown]):
        best = None
        for u in sorted(unknowns, key=lambda x: x.id):
            coeff_terms, rest_terms, linear = [], [], True
            for mono, c in diff.terms:
                powers = dict(mono)
                if u in powers:
                    if powers[u] != 1:
                        linear = False
                        break
                    coeff_terms.append((tuple((x, p) for x, p in mono if x != u), c))
                else:
                    rest_terms.append((mono, c))
                if any(u in atom.children()[i].unknowns for atom, _ in mono for i in range(len(atom.children()))):
                    linear = False
                    break
            if not linear:
                continue
            coeff = Nat.from_terms(coeff_terms)
            if coeff.unknowns:
                continue
            rest = Nat.from_terms(rest_terms)
            unit = coeff == 1 or coeff == -1
            if not unit and (rest.unknowns or len(unknowns) > 1):
                continue  # dividing by a non-unit needs every other size known
            rank = 0 if unit else 1
            if best is None or rank < best[0]:
                best = (rank, u, coeff, rest)
        return None if best is None else best[1:]

    def _retry(self) -> None:
        pending, self.deferred = self.deferred, []
        for d in pending:
            saved = self.current
            self.current = d.node
            try:
                if not self._solve(d.lhs, d.rhs):
                    self.deferred.append(d)
            finally:
                self.current = saved


# ---------------------------------------------------------------------------- the pass


def infer(e: Expr, env: dict | None = None, expected: Type | None = None, reuse: bool = False) -> Expr:
    """Return `e` with every node's `.t` set to its solved type; raise TypeInferenceError
    naming the offending subexpression otherwise.  `env` gives the types of free
    identifiers and `expected` the type `e` must have (rules re-type a rewritten subterm
    where it stands this way).

    `reuse`: a subterm that carries a data type (one a rule kept from the program it
    rewrites) is typed standing alone, with the types its free identifiers have there,
    once per term and types (_standalone): where that decides every type in it (no
    unknown left, no literal defaulted), every typing of the whole agrees with it there, so
    it is the subterm's typing in place.  The answer is the same as without; an error is
    reported by inferring again without (the same message, from the same node)."""
    if reuse and "iterate" not in e.primitive_names:  # iterate's size variables are named by the run's counter
        try:
            return _infer_whole(Inference(reuse=True), e, env, expected)
        except TypeInferenceError:
            pass
    return _infer_whole(Inference(), e, env, expected)


def _infer_whole(inf: Inference, e: Expr, env: dict | None, expected: Type | None) -> Expr:
    typed = _infer(inf, e, dict(env or {}), expected)
    if expected is not None:
        _guard(inf, typed, lambda: inf.unify(expected, typed.t),
               lambda: f"has type {inf.resolve(typed.t)} where {expected} is expected")
    for d in list(inf.deferred):
        inf.current = d.node
        _guard(inf, d.node, lambda d=d: inf._solve(d.lhs, d.rhs))
    if inf.deferred:
        d = inf.deferred[0]
        _fail(d.node, f"cannot determine the size in {inf.nat_of(d.lhs)} = {inf.nat_of(d.rhs)}")
    typed = _finish(inf, typed)
    _check_ranges(typed)
    return typed


# ------------------------------------------------------------------ index range checks
# Static parameters and literal indices that would make an element index leave its array
# are type errors: `take n` and `drop n` need n <= the length, `pad_mirror l r` and
# `pad_wrap l r` need l <= n and r <= n (each pad repeats elements of the array once, as
# NumPy's 'symmetric' and 'wrap' modes with pads no longer than the array), `at xs k` with
# a literal k (or a size used as the index) needs 0 <= k < n.  Refused here: a bound that is
# provably violated (always so for constant sizes).  With symbolic sizes a bound that the
# sizes' declared ranges cannot decide (`take 3` of an `N`; `fl.nat("N", lo=3)` decides it)
# is checked when the sizes are known: the interpreter refuses them at run time.

def _check_ranges(typed: Expr) -> None:
    from .expr import walk

    for node in walk(typed):
        if not isinstance(node, App):
            continue
        head, args = spine(node)
        if not isinstance(head, Prim) or head.name not in _RANGE_CHECKS or len(args) != _RANGE_CHECKS[head.name][0]:
            continue
        _, which, check = _RANGE_CHECKS[head.name]
        array = args[which].t
        if not isinstance(array, ArrayType):
            continue
        problem = check(head, args, array.size)
        if problem:
            _fail(node, f"{head.name}: {problem}")


def _at_most(what: str, k: Nat, n: Nat) -> str | None:
    if is_nonneg(k - n - 1):
        return f"{what} {k} is larger than the array's length {n}"
    return None


def _check_cut(head: Prim, args: list, n: Nat) -> str | None:
    return _at_most("the count", head.params[0], n)


def _check_pad(head: Prim, args: list, n: Nat) -> str | None:
    left, right = head.params
    return _at_most("the left pad", left, n) or _at_most("the right pad", right, n)


def _check_at(head: Prim, args: list, n: Nat) -> str | None:
    k = constant_index(args[1])
    if k is None:
        return None  # a computed index: checked when it is computed (interpreter) or clamped (kernels)
    if is_nonneg(-k - 1) or is_nonneg(k - n):
        return f"index {k} is out of range for an array of length {n}"
    return None


def constant_index(index: Expr) -> Nat | None:
    """The index of `at xs index` as a size expression when it is known before the program
    runs: an integer literal or a size used as a value (`nat_value N`)."""
    if isinstance(index, Literal) and isinstance(index.value, int) and not isinstance(index.value, bool):
        return Nat.const(index.value)
    if isinstance(index, Prim) and index.name == "nat_value":
        return as_nat(index.params[0])
    return None


def index_as_nat(index: Expr, indices: dict[str, Nat]) -> Nat | None:
    """The index of `at xs index` as a size expression over the enclosing loops' and generates'
    indices (`indices`: an identifier's name -> its size variable, with its range): literals,
    sizes as values, such indices, and +, -, * , min, max of them (`nat_value N - 1 - i`, a
    reversal); None for any other index (it is computed when the program runs).  Integer
    arithmetic on such indices does not overflow: they are sizes."""
    known = constant_index(index)
    if known is not None:
        return known
    if isinstance(index, Identifier):
        return indices.get(index.name)
    head, args = spine(index)
    if isinstance(head, Prim) and head.name in ARITHMETIC and not head.params and len(args) == 2 \
            and index.t is not None and getattr(index.t, "name", None) in ("i32", "u32"):
        parts = [index_as_nat(a, indices) for a in args]
        return None if None in parts else ARITHMETIC[head.name](*parts)
    return None


# name -> (number of arguments, position of the array argument, check)
_RANGE_CHECKS = {"take": (1, 0, _check_cut), "drop": (1, 0, _check_cut), "pad_mirror": (1, 0, _check_pad),
                 "pad_wrap": (1, 0, _check_pad), "at": (2, 0, _check_at)}


def _fail(node: Expr | None, message: str, divisibility: bool = False):
    raise TypeInferenceError(message, where=excerpt(str(node)) if node is not None else None,
                             origin=getattr(node, "origin", None))


def _guard(inf: Inference, node: Expr, thunk, explain=None):
    saved = inf.current
    inf.current = node
    try:
        return thunk()
    except _Mismatch as m:
        message = None if m.infinite or not explain else explain()
        _fail(node, message or m.message)
    finally:
        inf.current = saved


def _infer(inf: Inference, e: Expr, env: dict, expected: Type | None) -> Expr:
    try:
        return _infer_node(inf, e, env, expected)
    except TypeInferenceError as exc:
        if exc.origin is None and e.origin is not None:
            # A node built without provenance (e.g. an Identifier made by hand): name the
            # nearest enclosing node that has one.
            raise TypeInferenceError(exc.message, where=exc.where, origin=e.origin) from None
        raise


def _infer_node(inf: Inference, e: Expr, env: dict, expected: Type | None) -> Expr:
    if inf.reuse and isinstance(e.t, _DATA) and isinstance(e, App):
        known = _typed_in_place(inf, e, env)
        if known is not None:
            inf.finished.add(id(known))  # `known` lives in the tree being built: its id stays its own
            return known
    return _infer_here(inf, e, env, expected)


def _infer_here(inf: Inference, e: Expr, env: dict, expected: Type | None) -> Expr:
    if isinstance(e, Identifier):
        if e.name not in env:
            _fail(e, f"unbound identifier {e.name}")
        t = env[e.name]
        if e.decl is not None:
            _guard(inf, e, lambda: inf.unify(e.decl, t))
        return attrs.evolve(e, t=t)
    if isinstance(e, Lambda):
        pt = e.param.decl
        if pt is None:
            exp = inf.shallow(expected) if expected is not None else None
            pt = exp.param if isinstance(exp, FunType) else inf.anything()
        elif isinstance(inf.shallow(expected), FunType) if expected is not None else False:
            _guard(inf, e, lambda: inf.unify(inf.shallow(expected).param, pt),
                   lambda: f"parameter {e.param.name}: declared {pt}, expected {inf.resolve(inf.shallow(expected).param)}")
        body = _infer(inf, e.body, {**env, e.param.name: pt}, None)
        param = attrs.evolve(e.param, t=pt)
        return attrs.evolve(e, param=param, body=body, t=FunType(pt, body.t))
    if isinstance(e, NatLambda):
        exp = inf.shallow(expected) if expected is not None else None
        inner = None
        if isinstance(exp, NatFunType):
            inner = map_nats(exp.body, lambda n: substitute(n, {exp.var: Nat.atom(e.var)}))
        body = _infer(inf, e.body, env, inner)
        return attrs.evolve(e, body=body, t=NatFunType(e.var, body.t))
    if isinstance(e, NatApp):
        fun = _infer(inf, e.fun, env, None)
        ft = inf.shallow(fun.t)
        if not isinstance(ft, NatFunType):
            _fail(e, f"a size is applied to something of type {inf.resolve(ft)}, not a function of a size")
        body = map_nats(ft.body, lambda n: substitute(n, {ft.var: e.nat}))
        return attrs.evolve(e, fun=fun, t=body)
    if isinstance(e, Literal):
        return attrs.evolve(e, t=_literal_type(inf, e))
    if isinstance(e, Prim):
        return _infer_prim_app(inf, e, [], env)
    if isinstance(e, App):
        head, args = spine(e)
        if isinstance(head, Prim):
            return _infer_prim_app(inf, head, _app_nodes(e), env)
        fun = _infer(inf, e.fun, env, None)
        result = inf.anything()
        ft = inf.shallow(fun.t)
        arg = _infer(inf, e.arg, env, ft.param if isinstance(ft, FunType) else None)
        _guard(inf, e, lambda: inf.unify(fun.t, FunType(arg.t, result)), lambda: _explain_app(inf, fun, arg))
        return attrs.evolve(e, fun=fun, arg=arg, t=result)
    raise TypeError(f"not an expression: {e!r}")


_DATA = (ArrayType, TupleType, VectorType, ScalarType)


def _typed_in_place(inf: Inference, e: Expr, env: dict) -> Expr | None:
    """`e` typed standing alone (_standalone) with its free identifiers' types here, when
    those are known and that decides it; else None (inferred in place)."""
    types = []
    for name in sorted(e.free_names):
        t = inf.resolve(env[name]) if name in env else None
        if t is None or _has_unknowns(t):
            return None
        types.append((name, t))
    return _standalone(_Standing(e.exact_key, tuple(types), e, inf.depth + 1))


@attrs.frozen(eq=False)
class _Standing:
    """_standalone's memo key: the term as written (Expr.exact_key) and the types of its
    free identifiers; the term rides along, outside equality."""

    key: tuple
    env: tuple
    term: Expr
    depth: int = 1  # nesting (bounded: the stack); no part of the answer

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Standing) and (self.key, self.env) == (other.key, other.env)

    def __hash__(self) -> int:
        return hash((self.term.exact_hash, self.env))


# ------------------------------------------------------------------------ typing memo

_MEMO: contextvars.ContextVar[dict | None] = contextvars.ContextVar("typing_memo", default=None)


@contextlib.contextmanager
def typing_memo():
    """Within the block, typings computed by `memoised` functions (retype, the standalone
    typings of infer(reuse=True)) are remembered: one build of an exploration space rewrites
    the same subterms in the same places again and again.  The memo lives as long as the
    block (nested blocks share the outer one), so nothing outlives a build: a process-wide
    cache had kept some 600,000 objects alive and slowed every later garbage collection.
    Yields the memo (for tests)."""
    memo = _MEMO.get()
    token = _MEMO.set({} if memo is None else memo)
    try:
        yield _MEMO.get()
    finally:
        _MEMO.reset(token)


def memoised(fn):
    """`fn(key)`, a pure function of a hashable key, remembered within `typing_memo()` (and
    computed each time outside one).  An exception is never remembered: raised again."""

    @functools.wraps(fn)
    def remembered(key):
        memo = _MEMO.get()
        if memo is None:
            return fn(key)
        slot = (fn, key)
        if slot not in memo:
            memo[slot] = fn(key)
        return memo[slot]

    return remembered


@memoised
def _standalone(s: _Standing) -> Expr | None:
    """The term typed alone with its free identifiers' types, where that decides every
    type in it without defaulting a literal, naming a size variable or leaving an unknown;
    else None.  (Decided alone, no context can change it: any typing of a program holding
    the term with these identifier types is this one on the term.)"""
    inf = Inference(reuse=s.depth < MAX_STANDING_DEPTH, depth=s.depth)  # its parts may stand alone in turn
    try:
        typed = _infer_here(inf, s.term, dict(s.env), None)
        for d in list(inf.deferred):
            inf.current = d.node
            _guard(inf, d.node, lambda d=d: inf._solve(d.lhs, d.rhs))
    except TypeInferenceError:
        return None
    if inf.deferred or inf.named_vars or not _decided(inf, typed):
        return None
    return _finish(inf, typed)


MAX_STANDING_DEPTH = 32  # standalone typings nested in one another (each a few stack frames)


def _decided(inf: Inference, typed: Expr) -> bool:
    """Whether every type in `typed` is known (the parts typed alone are)."""
    stack = [typed]
    while stack:
        x = stack.pop()
        if id(x) in inf.finished:
            continue
        if _has_unknowns(inf.resolve(x.t)):
            return False
        stack.extend(x.children())
    return True


def _explain_app(inf: Inference, fun: Expr, arg: Expr) -> str:
    ft = inf.resolve(fun.t)
    if isinstance(ft, FunType):
        return f"cannot apply a function of {inf.show(ft)} to an argument of {inf.show(arg.t)}"
    if isinstance(ft, TypeVar) and "fun" in inf.allowed[ft.id]:
        return f"cannot apply {excerpt(str(fun), 40)} to an argument of {inf.show(arg.t)}"
    return f"{excerpt(str(fun), 40)} is not a function (it has {inf.show(ft)}) and cannot be applied"


def _literal_type(inf: Inference, e: Literal) -> Type:
    if e.decl is not None:
        kind = _kind(e.decl)
        ok = {bool: {"bool"}, int: set(_NUM), float: {"f32", "f64"}}[type(e.value)]
        if kind not in ok:
            _fail(e, f"literal {e.value!r} cannot have type {e.decl}")
        return e.decl
    if isinstance(e.value, bool):
        return boolean
    if isinstance(e.value, int):
        return inf.dt(TypeClass.NUMERIC_SCALAR)
    tv = inf.dt()
    inf.allowed[tv.id] = frozenset({"f32", "f64"})
    return tv


def _app_nodes(e: Expr) -> list[App]:
    nodes = []
    while isinstance(e, App):
        nodes.append(e)
        e = e.fun
    return nodes[::-1]


def arity(d: PrimDecl, params: tuple) -> int:
    return d.arity if d.arity >= 0 else len(params[0].params)


def _infer_prim_app(inf: Inference, prim: Prim, apps: list[App], env: dict) -> Expr:
    d = PRIMITIVES.get(prim.name)
    if d is None:
        _fail(prim, f"unknown primitive {prim.name}")
    if d.check is not None:
        problem = d.check(prim.params)
        if problem:
            _fail(apps[-1] if apps else prim, f"{prim.name}: {problem}")
    n_args = arity(d, prim.params)
    if len(apps) > n_args:
        extra = apps[n_args]
        _fail(extra, f"{prim.name} takes {n_args} argument(s), applied to {len(apps)}")
    arg_types, result = d.scheme(inf, prim.params)
    full = result
    for t in reversed(arg_types):
        full = FunType(t, full)
    node: Expr = attrs.evolve(prim, t=full)
    remaining = full
    typed_args: list[Type] = []
    early: dict[int, Expr] = {}
    if inf.reuse and any(isinstance(app.arg, Lambda) for app in apps):
        # the data first: the functions' parameters then have their types when their bodies
        # are inferred, so the parts of those bodies can stand alone (the same solution)
        for k, app in enumerate(apps):
            if not isinstance(app.arg, Lambda):
                early[k] = arg = _infer(inf, app.arg, env, arg_types[k])
                _guard(inf, app, lambda expected=arg_types[k], arg=arg: inf.unify(expected, arg.t))
    for k, app in enumerate(apps):
        expected = arg_types[k]
        arg = early[k] if k in early else _infer(inf, app.arg, env, expected)
        typed_args.append(arg.t)

        def explain(k=k, arg=arg, expected=expected):
            resolved = [inf.resolve(t) for t in typed_args]
            special = d.explain(prim.params, resolved) if d.explain else None
            if special:
                return special
            want, found = inf.show(expected), inf.show(arg.t)
            want = f"have {want}" if want.startswith("type ") else f"be {want}"
            found = found.removeprefix("type ")
            return f"argument {k + 1} of {prim.name} should {want}, found {found}"

        partial = attrs.evolve(app, fun=node, arg=arg, t=remaining.result)
        _guard(inf, partial, lambda expected=expected, arg=arg: inf.unify(expected, arg.t), explain)
        node = partial
        remaining = remaining.result
    if apps and len(apps) == n_args:
        empty = [k for k in (n.as_int() for n in _sizes(inf.resolve(result))) if k is not None and k <= 0]
        if empty:  # zero is fine inside an input's size (take n of n), never for a result
            special = d.explain(prim.params, [inf.resolve(a.arg.t) for a in _app_nodes(node)]) if d.explain else None
            _fail(node, special or f"{prim.name} would produce an array of size {empty[0]}")
    return node


def _finish(inf: Inference, e: Expr) -> Expr:
    """Resolve every node's type; default unconstrained literals (f32, i32)."""

    finished: dict[int, tuple[Type, Type]] = {}  # id(type) -> (type, its final form): nodes share types

    def final(t: Type, node: Expr) -> Type:
        done = finished.get(id(t))
        if done is not None and done[0] is t:
            return done[1]
        start = t
        t = inf.resolve(t)
        t = _default(inf, t)
        bad = _unsolved(t)
        if bad:
            _fail(node, f"cannot infer {bad} in type {t}")
        for size in _sizes(t):
            k = size.as_int()
            if k is not None and k <= 0:
                _fail(node, f"array of size {k}: sizes must be positive")
        finished[id(start)] = (start, t)
        return t

    def go(x: Expr) -> Expr:
        if id(x) in inf.finished:
            return x
        if isinstance(x, Identifier):
            return attrs.evolve(x, t=final(x.t, x))
        if isinstance(x, Lambda):
            return attrs.evolve(x, param=go(x.param), body=go(x.body), t=final(x.t, x))
        if isinstance(x, App):
            return attrs.evolve(x, fun=go(x.fun), arg=go(x.arg), t=final(x.t, x))
        if isinstance(x, NatLambda):
            return attrs.evolve(x, body=go(x.body), t=final(x.t, x))
        if isinstance(x, NatApp):
            return attrs.evolve(x, fun=go(x.fun), t=final(x.t, x))
        return attrs.evolve(x, t=final(x.t, x))

    return go(e)


def _default(inf: Inference, t: Type) -> Type:
    if isinstance(t, TypeVar):
        allowed = inf.allowed[t.id]
        if "data" in allowed:
            return t  # genuinely unconstrained: reported by the caller
        pick = i32 if "i32" in allowed else f32 if "f32" in allowed else None
        if pick is not None:
            inf.types[t.id] = pick
            return pick
        return t
    # `t` itself where no part changes (as Inference.resolve)
    if isinstance(t, ArrayType):
        elem = _default(inf, t.elem)
        return t if elem is t.elem else ArrayType(t.size, elem)
    if isinstance(t, VectorType):
        elem = _default(inf, t.elem)
        return t if elem is t.elem else VectorType(elem, t.width)
    if isinstance(t, TupleType):
        elems = tuple(_default(inf, x) for x in t.elems)
        return t if all(a is b for a, b in zip(elems, t.elems)) else TupleType(elems)
    if isinstance(t, FunType):
        param, result = _default(inf, t.param), _default(inf, t.result)
        return t if param is t.param and result is t.result else FunType(param, result)
    if isinstance(t, NatFunType):
        body = _default(inf, t.body)
        return t if body is t.body else NatFunType(t.var, body)
    return t


def _unsolved(t: Type) -> str | None:
    if isinstance(t, TypeVar):
        return f"the type {t}"
    if isinstance(t, (ArrayType, VectorType)):
        n = t.size if isinstance(t, ArrayType) else t.width
        if n.unknowns:
            return f"the size {n}"
        return _unsolved(t.elem)
    if isinstance(t, TupleType):
        return next((u for u in map(_unsolved, t.elems) if u), None)
    if isinstance(t, FunType):
        return _unsolved(t.param) or _unsolved(t.result)
    if isinstance(t, NatFunType):
        return _unsolved(t.body)
    return None


def _has_unknowns(t: Type) -> bool:
    if isinstance(t, TypeVar):
        return True
    return _unsolved(t) is not None


def _sizes(t: Type) -> list[Nat]:
    """The sizes inside `t`, in map_nats' order (without rebuilding the type)."""
    out: list[Nat] = []
    _collect_sizes(t, out)
    return out


def _collect_sizes(t: Type, out: list) -> None:
    while True:
        if isinstance(t, ArrayType):
            out.append(t.size)
            t = t.elem
        elif isinstance(t, VectorType):
            out.append(t.width)
            return
        elif isinstance(t, TupleType):
            for e in t.elems:
                _collect_sizes(e, out)
            return
        elif isinstance(t, FunType):
            _collect_sizes(t.param, out)
            t = t.result
        elif isinstance(t, NatFunType):
            t = t.body
        else:
            return
