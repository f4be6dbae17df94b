"""Random well-typed high-level programs, for fuzzing the compiler against the interpreter.

    prog = random_program(seed=7)          # a RandomProgram: the same one for the same seed
    prog.program                           # typed: fun(N: nat, x1: N.f32, ...) => ...
    prog.sizes, prog.inputs, prog.expected # concrete sizes, random inputs, the interpreter's result
    prog.error_bound                       # bound on the output's rounding error (see below)

Generation is type-directed: `_Builder.term(t, ctx)` builds an expression of the requested
data type `t` from the variables in scope (lambda parameters, the program's inputs), within a
depth and node budget; inputs are created on demand as leaves.  Sizes are constants (1,
primes, powers of two, occasionally large ones such as 1000003 and long inner rows of 128 to
1024) or symbolic (`N`, `M`,
`N` with a `multiple_of` fact, and `N + c`, `2N`, `N/k` built from them); each size variable
has a concrete value, fixed up front, that respects its facts, so every size in the program
has a value and the preconditions that types do not carry (pad_wrap/pad_mirror no wider than
their input, products of many factors kept short, the total work bounded) are checked on it.

Numerical stability.  Every scalar subterm carries `bound`, the largest magnitude it can take
on the inputs this module makes (floats in +-[0.5, 1.5), integers in +-[1, 9]), and `err`, a
bound on its absolute rounding error (f32: 2^-24 per operation, relative to the operation's
bound; f64: 2^-53; i32: exact).  Operations that would leave the safe range are not chosen:
products whose bound exceeds 1e6 (i32: 2^24), exp of arguments beyond +-4 (clamped first),
division only by `abs(y) + 1` or by a positive integer literal, sqrt only of an absolute
value, functions with a sign symmetry (sin, cos, tanh, atan, erf, erfc: slope at most
2/sqrt(pi), values below 2, OpenCL's 16 ulp bound assumed) of an argument and of its
negation, floats cast to i32 only when they are variables (a computed value could round across
an integer).  A program whose output error bound exceeds 1e-3 of max(1, bound) is discarded
as unstable.  Comparisons of computed floats can still flip when the two sides are
mathematically equal but rounded differently; argmin/argmax take their values only from
exactly computed arrays (err 0) so their indices are deterministic.

A tolerance rule for comparing a compiled result with `expected` (dpia.fuzz uses it): an
integer or boolean leaf must be equal; a float leaf must satisfy
max|got - want| <= max(1e-4 * max(1, max|want|), 4 * error_bound).

This module imports only `functional` (the harness lives in dpia.fuzz).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable

import attrs
import numpy as np

from .dsl import _index_fun as index_fun
from .dsl import iterate as dsl_iterate
from .errors import FunctionalError
from .expr import App, Expr, Identifier, Lambda, Literal, NatLambda, Prim, free_identifiers, walk
from .infer import infer
from .interp import interpret, layout
from .nat import Nat, divides, evaluate, in_range, is_nonneg
from .nat import nat as size_var
from .primitives import stride_index
from .types import ArrayType, DataType, ScalarType, TupleType, VectorType, f32, f64, i32

EPS = {"f32": 2.0**-24, "f64": 2.0**-53, "i32": 0.0}
FLOAT_LIMIT = 1e6  # largest magnitude a float subterm may reach
INT_LIMIT = 2**24  # largest magnitude an i32 subterm may reach (far from overflow)
WORK_LIMIT = 2**21  # scalars computed: an array's elements times the lengths of the maps around it
MAX_DIMS = 3
# Now and then an inner array is a long row (a GPU's work-group reduces such rows: the default
# lowering's row_reductions), drawn from a stream of its own so that the other seeds' programs stay
# as they were.
LONG_ROWS = (128, 256, 384, 1024)
LONG_ROW_CHANCE = 0.02  # of any constant size
LONG_ROW_ELEMENT_CHANCE = 0.3  # of a map's element that is an array (its function reduces it, mostly)
MAX_INPUTS = 3
# Now and then a neg/abs is instead a call of a function with a sign symmetry (functional.primitives.
# SIGN_SYMMETRY), drawn from a stream of its own like the long rows.
SYMMETRIC_FUNCTIONS = ("sin", "cos", "tanh", "atan", "erf", "erfc")
SYMMETRIC_CHANCE = 0.3
UNSTABLE = 1e-3  # error bound over max(1, bound) above which a program is discarded
INPUT_FLOAT_BOUND, INPUT_INT_BOUND = 1.5, 9
I32_MAX = 2**31 - 1

# Primitives the generator uses (tests check that a sample covers each).
COVERED = ("map", "reduce", "zip", "unzip", "fst", "snd", "pair", "split", "join", "transpose", "slide",
           "pad_const", "pad_clamp", "pad_wrap", "pad_mirror", "take", "drop", "concat", "gather", "scatter",
           "reorder_stride", "generate", "iterate", "let", "as_vector", "as_scalar", "add", "sub", "mul", "div",
           "min", "max", "abs", "neg", "sqrt", "exp", "select", "lt", "le", "gt", "ge", "eq", "cast", "rem", "at",
           "sin", "cos", "tanh", "atan", "erf", "erfc")


class GenerationError(FunctionalError):
    """No acceptable program was found for a seed within the attempts allowed."""


@attrs.frozen
class Term:
    """A generated expression with its data type, the largest magnitude of its scalars and
    a bound on their absolute rounding error."""

    expr: Expr
    type: DataType
    bound: float
    err: float = 0.0


@attrs.frozen(eq=False)
class RandomProgram:
    """A generated program (typed), its concrete sizes, inputs and the interpreter's result.
    `discarded` counts, by reason, the attempts this seed rejected before this one."""

    seed: int
    program: Expr
    sizes: dict
    inputs: tuple
    expected: object
    bound: float
    error_bound: float
    discarded: Counter

    @property
    def text(self) -> str:
        return str(self.program)

    @property
    def primitives(self) -> frozenset[str]:
        return primitives_of(self.program)

    @property
    def nodes(self) -> int:
        return sum(1 for _ in walk(self.program))


def primitives_of(program: Expr) -> frozenset[str]:
    return frozenset(x.name for x in walk(program) if isinstance(x, Prim))


@attrs.frozen
class _Ctx:
    """Where a term is generated: variables in scope, depth left, and how many times the
    term is evaluated (the product of the lengths of the maps around it)."""

    env: tuple  # of Term (expr an Identifier)
    depth: int
    outer: int = 1

    def deeper(self, *new_vars: Term, times: int = 1) -> _Ctx:
        return _Ctx(self.env + new_vars, self.depth - 1, self.outer * times)

    def down(self) -> _Ctx:
        return _Ctx(self.env, self.depth - 1, self.outer)


class _Reject(Exception):
    """An attempt that cannot be completed; the builder starts a new one."""


def _app(name: str, *args: Expr, params: tuple = ()) -> Expr:
    e: Expr = Prim(name, params)
    for a in args:
        e = App(e, a)
    return e


def _dims(t: DataType) -> int:
    return 1 + _dims(t.elem) if isinstance(t, ArrayType) else 0


def _eps(t: DataType) -> float:
    if isinstance(t, ScalarType):
        return EPS.get(t.name, 0.0)
    if isinstance(t, ArrayType):
        return _eps(t.elem)
    if isinstance(t, VectorType):
        return _eps(t.elem)
    return max(_eps(e) for e in t.elems)


def _is_float(t: DataType) -> bool:
    return isinstance(t, ScalarType) and t.name in ("f32", "f64")


def _limit(t: ScalarType) -> float:
    return INT_LIMIT if t == i32 else FLOAT_LIMIT


class _Builder:
    """One attempt at a program for one random stream (all state is per attempt)."""

    def __init__(self, rng: random.Random, max_depth: int, max_nodes: int, long_rows: random.Random,
                 functions: random.Random):
        self.rng = rng
        self.long_rows = long_rows
        self.functions = functions
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.nodes = 0
        self.names = 0
        self.inputs: list[Term] = []
        self.sizes: dict[str, int] = {}
        self.vars: list[Nat] = []
        self.index_lengths: dict[str, Nat] = {}  # a generate's index variable -> the generate's length
        self._choose_sizes()

    # ------------------------------------------------------------------------- sizes

    def _choose_sizes(self) -> None:
        """Constant sizes only, or one or two size variables with concrete values."""
        rng = self.rng
        if rng.random() < 0.45:
            return
        for name in ("N", "M")[: 1 if rng.random() < 0.7 else 2]:
            k = rng.choice((1, 1, 1, 2, 4, 8))
            var = size_var(name, multiple_of=k) if k > 1 else size_var(name)
            value = k * rng.choice((1, 2, 3, 4, 5, 8, 16)) if k > 1 else rng.choice((1, 2, 3, 5, 7, 8, 13, 16, 32))
            self.vars.append(var)
            self.sizes[name] = value

    def value(self, n: Nat) -> int:
        return int(evaluate(n, self.sizes))

    def count(self, t: DataType) -> int:
        if isinstance(t, ArrayType):
            return self.value(t.size) * self.count(t.elem)
        if isinstance(t, TupleType):
            return sum(self.count(e) for e in t.elems)
        return 1

    def fresh_size(self, top: bool = False) -> Nat:
        rng = self.rng
        if top and rng.random() < 0.06:
            return Nat.const(rng.choice((1000003, 65536, 4099, 1024, 100003)))
        if self.vars and rng.random() < 0.55:
            v = rng.choice(self.vars)
            k = self._multiple_of(v)
            forms = [v, v, v, v + 1, v + 2, v * 2]
            if k > 1:
                forms += [v / k, v / 2 if k % 2 == 0 else v]
            return rng.choice(forms)
        size = rng.choice((1, 2, 2, 3, 4, 4, 5, 7, 8, 8, 13, 16, 16, 32, 64))
        if self.long_rows.random() < LONG_ROW_CHANCE:
            return Nat.const(self.long_rows.choice(LONG_ROWS))
        return Nat.const(size)

    @staticmethod
    def _multiple_of(v: Nat) -> int:
        (atom,) = v.vars
        return atom.multiple_of

    def fits(self, t: DataType, ctx: _Ctx) -> bool:
        """Within the dimension and work limits, every size at least 1."""
        if _dims(t) > MAX_DIMS:
            return False
        try:
            sizes_ok = self._sizes_positive(t)
        except FunctionalError:
            return False
        return sizes_ok and self.count(t) * ctx.outer <= WORK_LIMIT

    def _sizes_positive(self, t: DataType) -> bool:
        if isinstance(t, ArrayType):
            return self.value(t.size) >= 1 and self._sizes_positive(t.elem)
        if isinstance(t, TupleType):
            return all(self._sizes_positive(e) for e in t.elems)
        return True

    @staticmethod
    def const_part(n: Nat) -> int:
        for mono, c in n.terms:
            if not mono:
                return int(c) if c == int(c) else 0
        return 0

    # ------------------------------------------------------------------------ helpers

    def name(self, base: str = "x") -> Identifier:
        self.names += 1
        return Identifier(f"{base}{self.names}")

    def tick(self) -> None:
        self.nodes += 1

    def exhausted(self, ctx: _Ctx) -> bool:
        return ctx.depth <= 0 or self.nodes >= self.max_nodes

    def pick(self, options: list[tuple[float, Callable[[], Term | None]]]) -> Term | None:
        """Try the options in a random order weighted by their weights; the first that
        builds a term wins."""
        options = [o for o in options if o[0] > 0]
        while options:
            total = sum(w for w, _ in options)
            r = self.rng.random() * total
            for k, (w, build) in enumerate(options):
                r -= w
                if r <= 0:
                    break
            result = options[k][1]()
            if result is not None:
                return result
            del options[k]
        return None

    def lam(self, param_type: DataType, bound: float, err: float, ctx: _Ctx, times: int,
            body: Callable[[Term, _Ctx], Term | None], base: str = "x") -> tuple[Expr, Term] | None:
        """A lambda whose body uses its parameter and (mostly) is more than the parameter."""
        p = self.name(base)
        var = Term(p, param_type, bound, err)
        result = None
        for _ in range(3):
            result = body(var, ctx.deeper(var, times=times))
            if result is None:
                return None
            uses = p.name in free_identifiers(result.expr)
            if uses and (result.expr != p or self.rng.random() < 0.05):
                break
        return Lambda(p, result.expr), result

    # ------------------------------------------------------------------ the entry point

    def program(self) -> tuple[Expr, Term]:
        rng = self.rng
        r = rng.random()
        scalar = self.scalar_type()
        if r < 0.36:
            want: DataType = ArrayType(self.fresh_size(top=True), scalar)
        elif r < 0.56:
            want = ArrayType(self.fresh_size(), ArrayType(self.fresh_size(), scalar))
        elif r < 0.63:
            want = ArrayType(self.fresh_size(), ArrayType(self.fresh_size(), ArrayType(self.fresh_size(), scalar)))
        elif r < 0.85:
            want = scalar
        elif r < 0.93:
            want = TupleType((f32, i32)) if rng.random() < 0.5 else TupleType((scalar, scalar))
        else:
            want = ArrayType(self.fresh_size(), TupleType((scalar, self.scalar_type())))
        ctx = _Ctx((), self.max_depth)
        if not self.fits(want, ctx):
            raise _Reject("too_large")
        body = self.term(want, ctx)
        if body is None:
            raise _Reject("no_term")
        used_inputs = free_identifiers(body.expr)
        # Inputs made by branches that were abandoned are not part of the program.
        self.inputs = [inp for inp in self.inputs if inp.expr.name in used_inputs]
        if not self.inputs:
            raise _Reject("no_inputs")
        if not {"map", "reduce"} & primitives_of(body.expr) or self.nodes < 6:
            raise _Reject("trivial")  # nothing for the compiler to lower
        expr = body.expr
        for inp in reversed(self.inputs):
            expr = Lambda(attrs.evolve(inp.expr, decl=inp.type), expr)
        declared: list = []
        for inp in self.inputs:
            for v in sorted(_type_vars(inp.type), key=lambda v: v.name):
                if v not in declared:
                    declared.append(v)
        used = {v.name for e in walk(expr) for v in _expr_vars(e)}
        if used - {v.name for v in declared}:
            raise _Reject("size_not_in_inputs")
        for v in reversed(declared):
            expr = NatLambda(v, expr)
        return expr, body

    def scalar_type(self) -> ScalarType:
        r = self.rng.random()
        return f32 if r < 0.72 else (i32 if r < 0.88 else f64)

    # --------------------------------------------------------------- by requested type

    def term(self, t: DataType, ctx: _Ctx) -> Term | None:
        self.tick()
        if isinstance(t, ScalarType):
            return self.scalar(t, ctx)
        if isinstance(t, TupleType):
            return self.tuple_term(t, ctx)
        if isinstance(t, ArrayType):
            if not self.fits(t, ctx):
                return None
            return self.array(t, ctx)
        return None

    def variables(self, t: DataType, ctx: _Ctx) -> list[Term]:
        """Variables in scope of type t, and projections of tuple variables that have it."""
        found = []
        for v in ctx.env:
            found.extend(self._projections(v, t))
        return found

    def _projections(self, v: Term, t: DataType) -> list[Term]:
        if v.type == t:
            return [v]
        if isinstance(v.type, TupleType):
            out = []
            for k, name in enumerate(("fst", "snd")):
                sub = Term(_app(name, v.expr), v.type.elems[k], v.bound, v.err)
                out.extend(self._projections(sub, t))
            return out
        return []

    # ------------------------------------------------------------------------ scalars

    def literal(self, t: ScalarType) -> Term:
        if t == i32:
            value = self.rng.choice((1, 2, 3, 5, -2, 0))
        else:
            value = self.rng.choice((0.5, 1.0, 2.0, 0.25, 1.5, -1.0, 3.0, 0.125, -0.75))
        return Term(Literal(value, t), t, abs(value))

    def scalar_leaf(self, t: ScalarType, ctx: _Ctx) -> Term:
        found = self.variables(t, ctx)
        # Lambda parameters are the latest variables: prefer them, so functions use their argument.
        if found and self.rng.random() < 0.85:
            return found[-1] if self.rng.random() < 0.6 else self.rng.choice(found)
        others = [v for s in (f32, i32, f64) if s != t for v in self.variables(s, ctx)]
        if others and t != i32 and self.rng.random() < 0.7:  # e.g. an index of generate, as a float
            v = others[-1] if self.rng.random() < 0.6 else self.rng.choice(others)
            return Term(_app("cast", v.expr, params=(t,)), t, v.bound, v.err + _eps(t) * v.bound)
        if not ctx.env and ctx.outer == 1 and len(self.inputs) < MAX_INPUTS and self.rng.random() < 0.3:
            return self.new_input(t)
        return self.literal(t)

    def scalar(self, t: ScalarType, ctx: _Ctx, leaf_weight: float = 3.0) -> Term:
        if self.exhausted(ctx):
            return self.scalar_leaf(t, ctx)
        d = ctx.down()
        fl = _is_float(t)
        options = [
            (leaf_weight, lambda: self.scalar_leaf(t, ctx)),
            (4.0, lambda: self.binary(t, d)),
            (1.0, lambda: self.divide(t, d)),
            (1.5, lambda: self.unary(t, d)),
            (1.0 if fl else 0.0, lambda: self.sqrt_exp(t, d)),
            (1.0, lambda: self.select(t, d)),
            (0.8, lambda: self.cast(t, d)),
            (2.0, lambda: self.reduction(t, d)),
            (0.5, lambda: self.project(t, d)),
            (0.4, lambda: self.let(t, d)),
            (1.0 if t == i32 else 0.0, lambda: self.remainder(t, d)),
            (0.8, lambda: self.element(t, d)),
        ]
        return self.pick(options) or self.scalar_leaf(t, ctx)

    def element(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        """`at xs i`, at an index the interpreter accepts at every size the program may run at
        (the explorer checks it at other sizes): a literal below the array's length, an
        enclosing generate's index over no more elements than the array has, or a computed i32
        taken modulo a constant length."""
        arrays = [v for v in ctx.env if isinstance(v.type, ArrayType) and v.type.elem == t]
        xs = self.rng.choice(arrays) if arrays and self.rng.random() < 0.7 else \
            self.term(ArrayType(self.fresh_size(), t), ctx)
        if xs is None:
            return None
        n = xs.type.size
        indices = [v for v in ctx.env if isinstance(v.expr, Identifier) and v.expr.name in self.index_lengths
                   and is_nonneg(n - self.index_lengths[v.expr.name])]
        constant = n.as_int()
        r = self.rng.random()
        if indices and r < 0.5:
            index = self.rng.choice(indices).expr
        elif constant is not None and r < 0.8:
            index = _app("rem", _app("abs", self.scalar(i32, ctx).expr), Literal(constant, i32))
        else:
            below = [c for c in range(min(constant or 1, 4)) if in_range(c, n)]
            index = Literal(self.rng.choice(below or [0]), i32)
        return Term(_app("at", xs.expr, index), t, xs.bound, xs.err)

    def binary(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        a, b = self.scalar(t, ctx), self.scalar(t, ctx)
        op = self.rng.choice(("add", "add", "sub", "mul", "mul", "min", "max"))
        eps = _eps(t)
        if op in ("add", "sub"):
            bound = a.bound + b.bound
            err = a.err + b.err + eps * bound
        elif op == "mul":
            bound = a.bound * b.bound
            err = a.err * b.bound + b.err * a.bound + a.err * b.err + eps * bound
        else:
            bound, err = max(a.bound, b.bound), max(a.err, b.err)
        if bound > _limit(t):
            return None
        return Term(_app(op, a.expr, b.expr), t, bound, err)

    def divide(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        a = self.scalar(t, ctx)
        if t == i32:
            k = self.rng.choice((2, 3, 5))
            return Term(_app("div", a.expr, Literal(k, t)), t, a.bound, 0.0)
        b = self.scalar(t, ctx)
        eps = _eps(t)
        denominator = _app("add", _app("abs", b.expr), Literal(1.0, t))  # >= 1: never near zero
        err = a.err + a.bound * (b.err + eps * (b.bound + 1)) + eps * a.bound
        return Term(_app("div", a.expr, denominator), t, a.bound, err)

    def remainder(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        a = self.scalar(t, ctx)
        k = self.rng.choice((2, 3, 7))
        return Term(_app("rem", a.expr, Literal(k, t)), t, min(a.bound, k - 1), 0.0)

    def unary(self, t: ScalarType, ctx: _Ctx) -> Term:
        a = self.scalar(t, ctx)
        op = self.rng.choice(("neg", "abs"))
        if _is_float(t) and self.functions.random() < SYMMETRIC_CHANCE:
            return self.symmetric_call(a)
        return Term(_app(op, a.expr), t, a.bound, a.err)

    def symmetric_call(self, a: Term) -> Term:
        """A library function with a sign symmetry (imperative.sign_symmetry shares its calls) of `a`,
        of its negation, or of both: f(-a) + f(a), f(a * -c) * f(a * c).  Each such f has a derivative
        of at most 2/sqrt(pi) and OpenCL bounds its error by 16 ulp of its value, which is below 2."""
        rng, t, eps = self.functions, a.type, _eps(a.type)
        f = rng.choice(SYMMETRIC_FUNCTIONS)
        err = 1.2 * a.err + 16 * eps * 2.0
        form = rng.choice(("plain", "negated", "sum", "scaled product"))
        if form == "plain":
            return Term(_app(f, a.expr), t, 2.0, err)
        if form == "negated":
            return Term(_app(f, _app("neg", a.expr)), t, 2.0, err)
        if form == "sum":
            return Term(_app("add", _app(f, _app("neg", a.expr)), _app(f, a.expr)), t, 4.0, 2 * err + 4 * eps)
        c = Literal(rng.choice((0.5, 0.75, 2.0)), t)  # exact: c * a's rounding is a's, scaled
        scaled = 1.2 * c.value
        one, other = _app("mul", a.expr, _app("neg", c)), _app("mul", a.expr, c)
        err = scaled * a.err + eps * c.value * a.bound * 1.2 + 16 * eps * 2.0
        return Term(_app("mul", _app(f, one), _app(f, other)), t, 4.0, 4 * err + 4 * eps)

    def sqrt_exp(self, t: ScalarType, ctx: _Ctx) -> Term:
        a = self.scalar(t, ctx)
        eps = _eps(t)
        if self.rng.random() < 0.5:
            bound = math.sqrt(a.bound)
            return Term(_app("sqrt", _app("abs", a.expr)), t, bound, math.sqrt(a.err) + eps * bound)
        arg = a
        if a.bound > 4:  # exp of a bounded argument only
            clamped = _app("min", _app("max", a.expr, Literal(-4.0, t)), Literal(4.0, t))
            arg = Term(clamped, t, 4.0, a.err)
        bound = math.exp(arg.bound)
        return Term(_app("exp", arg.expr), t, bound, bound * (arg.err + 2 * eps))

    def comparison(self, ctx: _Ctx) -> Expr:
        t = self.scalar_type()
        a = self.scalar(t, ctx.down()) if self.rng.random() < 0.4 else self.scalar_leaf(t, ctx)
        b = self.scalar_leaf(t, ctx)
        ops = ("lt", "le", "gt", "ge") + (("eq",) if t == i32 else ())
        return _app(self.rng.choice(ops), a.expr, b.expr)

    def select(self, t: ScalarType, ctx: _Ctx) -> Term:
        cond = self.comparison(ctx)
        a, b = self.scalar(t, ctx), self.scalar(t, ctx)
        return Term(_app("select", cond, a.expr, b.expr), t, max(a.bound, b.bound), max(a.err, b.err))

    def cast(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        source = self.rng.choice([s for s in (f32, i32, f64) if s != t])
        if t == i32:  # from a float variable only (a computed float could round across an integer)
            found = self.variables(source, ctx)
            if not found:
                return None
            a = self.rng.choice(found)
            return Term(_app("cast", a.expr, params=(t,)), t, math.floor(a.bound), 0.0)
        a = self.scalar(source, ctx)
        err = a.err + _eps(t) * a.bound
        return Term(_app("cast", a.expr, params=(t,)), t, a.bound, err)

    def project(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        other = self.scalar_type()
        k = self.rng.randrange(2)
        pair_t = TupleType((t, other) if k == 0 else (other, t))
        whole = self.tuple_term(pair_t, ctx)
        if whole is None:
            return None
        return Term(_app(("fst", "snd")[k], whole.expr), t, whole.bound, whole.err)

    def let(self, t: DataType, ctx: _Ctx) -> Term | None:
        value_t = self.scalar_type() if self.rng.random() < 0.6 else ArrayType(self.fresh_size(), self.scalar_type())
        if not self.fits(value_t, ctx):
            return None
        value = self.term(value_t, ctx)
        if value is None:
            return None
        made = self.lam(value.type, value.bound, value.err, ctx, 1, lambda v, c: self.term(t, c), base="v")
        if made is None:
            return None
        fn, body = made
        return Term(_app("let", value.expr, fn), t, body.bound, body.err)

    # -------------------------------------------------------------------- reductions

    def scope_size(self, elem: DataType, ctx: _Ctx) -> Nat:
        """Mostly the length of an array in scope with this element type (so that a
        function reduces its argument), else a fresh size."""
        lengths = [v.type.size for v in ctx.env if isinstance(v.type, ArrayType) and v.type.elem == elem]
        if lengths and self.rng.random() < 0.8:
            return lengths[-1]
        return self.fresh_size()

    def reduction(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        n = self.scope_size(t, ctx)
        xs_t = ArrayType(n, t)
        if not self.fits(xs_t, ctx):
            return None
        xs = self.array(xs_t, ctx)
        if xs is None:
            return None
        return self.reduce_over(xs, t)

    def reduce_over(self, xs: Term, t: ScalarType) -> Term | None:
        """A reduction of the array `xs` of `t` with a monoid the algebra knows (None where its
        value could overflow)."""
        length = self.value(xs.type.size)
        eps = _eps(t)
        kinds = ["add", "add", "add1", "min", "max"]
        if length <= 8 and xs.bound <= 2 and xs.bound ** length <= _limit(t):
            kinds.append("mul")
        kind = self.rng.choice(kinds)
        inf = I32_MAX if t == i32 else math.inf
        init_value = {"add": 0, "add1": 1, "mul": 1, "min": inf, "max": -inf}[kind]
        init = Literal(int(init_value) if t == i32 else float(init_value), t)
        op = {"add1": "add"}.get(kind, kind)
        if kind in ("add", "add1"):
            bound = abs(init_value) + length * xs.bound
            err = length * xs.err + eps * (math.sqrt(length) + 1) * bound
        elif kind == "mul":
            bound = max(1.0, xs.bound) ** length
            err = length * bound * (xs.err + eps)
        else:
            bound, err = xs.bound, xs.err
        if bound > _limit(t):
            return None
        return Term(_app("reduce", self.operator(op, t), init, xs.expr), t, bound, err)

    def operator(self, op: str, t: ScalarType) -> Expr:
        """The reduction's operator: the primitive, or a lambda computing it."""
        if self.rng.random() < 0.6:
            return Prim(op)
        a, b = self.name("a"), self.name("b")
        if op in ("min", "max") and self.rng.random() < 0.5:
            body = _app("select", _app("lt" if op == "min" else "gt", a, b), a, b)
        else:
            body = _app(op, a, b)
        return Lambda(a, Lambda(b, body))

    def tuple_term(self, t: TupleType, ctx: _Ctx) -> Term | None:
        found = self.variables(t, ctx)
        if found and self.rng.random() < 0.5:
            return self.rng.choice(found)
        a, b = t.elems
        options = [(2.0, lambda: self.pair(t, ctx))]
        if not self.exhausted(ctx):
            d = ctx.down()
            if a == f32 and b == i32:
                options.append((3.0, lambda: self.arg_extreme(d)))
            if a == b and _is_float(a):
                options.append((3.0, lambda: self.sum_and_squares(a, d)))
            if a == b and isinstance(a, ScalarType):
                options.append((1.5, lambda: self.reductions_over_one_array(t, d)))
        return self.pick(options)

    def mapped(self, xs: Term, ctx: _Ctx) -> Term | None:
        """`map g xs` with g computing a scalar of xs's element type (ctx's variables in scope)."""
        t = xs.type
        made = self.lam(t.elem, xs.bound, xs.err, ctx, self.value(t.size), self.function_body(t.elem))
        if made is None:
            return None
        fn, body = made
        return Term(_app("map", fn, xs.expr), t, body.bound, body.err)

    def reductions_over_one_array(self, t: TupleType, ctx: _Ctx) -> Term | None:
        """`pair (reduce f z xs) (reduce h w (map g xs))`: two reductions over one array (the
        banana split fuses them: rules.algorithmic pair_reduce_fusion)."""
        s = t.elems[0]
        n = self.scope_size(s, ctx)
        if not self.fits(ArrayType(n, s), ctx):
            return None
        xs = self.array(ArrayType(n, s), ctx)
        mapped = None if xs is None else self.mapped(xs, ctx)
        if mapped is None:
            return None
        first, second = (xs, mapped) if self.rng.random() < 0.5 else (mapped, xs)
        parts = [self.reduce_over(first, s), self.reduce_over(second, s)]
        if None in parts:
            return None
        a, b = parts
        return Term(_app("pair", a.expr, b.expr), t, max(a.bound, b.bound), max(a.err, b.err))

    def generated_reductions(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        """`generate m (fun(i) => reduce f z (map (g i) xs))`: m reductions over one array, its
        map reading the generate's index (rules.algorithmic generate_reduce_fusion)."""
        s = t.elem
        n = self.scope_size(s, ctx)
        if not self.fits(ArrayType(n, s), ctx):
            return None
        xs = self.array(ArrayType(n, s), ctx)
        if xs is None:
            return None
        length = self.value(t.size)
        i = self.name("i")
        self.index_lengths[i.name] = t.size
        inner = _Ctx(ctx.env + (Term(i, i32, max(length - 1, 0), 0.0),), max(ctx.depth - 1, 1), ctx.outer * length)
        mapped = self.mapped(xs, inner)
        body = None if mapped is None else self.reduce_over(mapped, s)
        if body is None:
            return None
        return Term(_app("generate", Lambda(i, body.expr), params=(t.size,)), t, body.bound, body.err)

    def pair(self, t: TupleType, ctx: _Ctx) -> Term | None:
        parts = [self.term(e, ctx.down() if not self.exhausted(ctx) else ctx) for e in t.elems]
        if None in parts:
            return None
        a, b = parts
        return Term(_app("pair", a.expr, b.expr), t, max(a.bound, b.bound), max(a.err, b.err))

    def arg_extreme(self, ctx: _Ctx) -> Term | None:
        """argmin/argmax as a reduction over (value, index) pairs; ties go to the lower
        index, so the operator is associative and the result deterministic."""
        n = self.fresh_size()
        if not self.fits(ArrayType(n, TupleType((f32, i32))), ctx):
            return None
        xs = self.array(ArrayType(n, f32), ctx)
        if xs is None or xs.err > 0:  # values rounded differently could pick another index
            xs = self.new_input(ArrayType(n, f32)) if len(self.inputs) < MAX_INPUTS and ctx.outer == 1 else None
        if xs is None:
            return None
        smallest = self.rng.random() < 0.5
        i = self.name("i")
        indices = _app("generate", Lambda(i, i), params=(n,))
        a, b = self.name("a"), self.name("b")
        better = _app("lt" if smallest else "gt", _app("fst", b), _app("fst", a))
        tie = _app("and", _app("eq", _app("fst", b), _app("fst", a)), _app("lt", _app("snd", b), _app("snd", a)))
        op = Lambda(a, Lambda(b, _app("select", _app("or", better, tie), b, a)))
        init = _app("pair", Literal(math.inf if smallest else -math.inf, f32), Literal(I32_MAX, i32))
        zipped = _app("zip", xs.expr, indices)
        return Term(_app("reduce", op, init, zipped), TupleType((f32, i32)), max(xs.bound, self.value(n)), 0.0)

    def sum_and_squares(self, t: ScalarType, ctx: _Ctx) -> Term | None:
        n = self.fresh_size()
        if not self.fits(ArrayType(n, TupleType((t, t))), ctx):
            return None
        xs = self.array(ArrayType(n, t), ctx)
        if xs is None:
            return None
        length = self.value(n)
        x = self.name("x")
        squares = Lambda(x, _app("pair", x, _app("mul", x, x)))
        a, b = self.name("a"), self.name("b")
        op = Lambda(a, Lambda(b, _app("pair", _app("add", _app("fst", a), _app("fst", b)),
                                      _app("add", _app("snd", a), _app("snd", b)))))
        init = _app("pair", Literal(0.0, t), Literal(0.0, t))
        bound = length * max(xs.bound, xs.bound**2)
        if bound > FLOAT_LIMIT:
            return None
        err = length * (2 * xs.bound * xs.err + xs.err) + _eps(t) * (math.sqrt(length) + 2) * bound
        return Term(_app("reduce", op, init, _app("map", squares, xs.expr)), TupleType((t, t)), bound, err)

    # ------------------------------------------------------------------------- arrays

    def new_input(self, t: DataType) -> Term:
        p = self.name("in")
        bound = INPUT_INT_BOUND if _leaf_scalar(t) == i32 else INPUT_FLOAT_BOUND
        term = Term(p, t, bound, 0.0)
        self.inputs.append(term)
        return term

    def array_leaf(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        found = self.variables(t, ctx)
        if found and self.rng.random() < 0.8:
            return self.rng.choice(found)
        inputable = isinstance(_leaf_scalar(t), ScalarType) and len(self.inputs) < MAX_INPUTS
        if inputable and self.rng.random() < 0.8:
            return self.new_input(t)
        if isinstance(t.elem, TupleType):
            return self.zip(t, ctx)
        return self.generate(t, ctx, leaf=True)

    def array(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        if self.exhausted(ctx):
            return self.array_leaf(t, ctx)
        d = ctx.down()
        elem = t.elem
        nested = isinstance(elem, ArrayType)
        scalar_elem = isinstance(elem, ScalarType)
        options = [
            (2.0, lambda: self.array_leaf(t, ctx)),
            (5.0, lambda: self.map(t, d)),
            (3.0 if isinstance(elem, TupleType) else 0.0, lambda: self.zip(t, d)),
            (0.7, lambda: self.unzip(t, d)),
            (1.5 if nested else 0.0, lambda: self.split(t, d)),
            (1.5, lambda: self.join(t, d)),
            (1.5 if nested else 0.0, lambda: self.transpose(t, d)),
            (1.5 if nested else 0.0, lambda: self.slide(t, d)),
            (1.2, lambda: self.pad(t, d)),
            (0.8, lambda: self.take(t, d)),
            (0.8, lambda: self.drop(t, d)),
            (1.0, lambda: self.concat(t, d)),
            (1.2, lambda: self.permute(t, d)),
            (0.6, lambda: self.reorder(t, d)),
            (1.0, lambda: self.generate(t, d)),
            (1.2, lambda: self.indexed(t, d)),
            (0.6 if scalar_elem else 0.0, lambda: self.generated_reductions(t, d)),
            (0.4 if scalar_elem and _is_float(elem) else 0.0, lambda: self.iterate(t, d)),
            (0.4, lambda: self.let(t, d)),
            (0.4 if scalar_elem else 0.0, lambda: self.vectorised(t, d)),
        ]
        return self.pick(options) or self.array_leaf(t, ctx)

    def source_elem(self, elem: DataType) -> DataType:
        """The element type of a map's input, for a map producing `elem`."""
        r = self.rng.random()
        if isinstance(elem, ArrayType):
            if r < 0.6:
                return elem
            if r < 0.8:
                return ArrayType(self.fresh_size(), _leaf_scalar(elem))
            return self.scalar_type()
        if r < 0.55:
            return elem if isinstance(elem, ScalarType) else self.scalar_type()
        if r < 0.7:
            return self.scalar_type()
        if r < 0.85:
            return TupleType((self.scalar_type(), self.scalar_type()))
        n = self.fresh_size()
        if self.long_rows.random() < LONG_ROW_ELEMENT_CHANCE:  # rows a GPU's work-group would reduce
            n = Nat.const(self.long_rows.choice(LONG_ROWS))
        return ArrayType(n, self.scalar_type())  # a reduction (or more) per element

    def source(self, t: ArrayType, ctx: _Ctx) -> tuple[DataType, Term] | None:
        """The element type and the array a map to `t` (or its index-written form) reads."""
        s = self.source_elem(t.elem)
        xs_t = ArrayType(t.size, s)
        if not self.fits(xs_t, ctx):
            return None
        xs = self.term(xs_t, ctx)
        return None if xs is None else (s, xs)

    def map(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        found = self.source(t, ctx)
        if found is None:
            return None
        s, xs = found
        made = self.lam(s, xs.bound, xs.err, ctx, self.value(t.size), self.function_body(t.elem))
        if made is None:
            return None
        fn, body = made
        return Term(_app("map", fn, xs.expr), t, body.bound, body.err)

    def function_body(self, t: DataType) -> Callable[[Term, _Ctx], Term | None]:
        """The body of a mapped function: some computation (depth at least 1 left)."""

        def body(param: Term, ctx: _Ctx) -> Term | None:
            ctx = attrs.evolve(ctx, depth=max(ctx.depth, 1))
            if isinstance(t, ScalarType):
                self.tick()
                return self.scalar(t, ctx, leaf_weight=0.5)
            return self.term(t, ctx)

        return body

    def zip(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        if not isinstance(t.elem, TupleType):
            return None
        a, b = (self.term(ArrayType(t.size, e), ctx) for e in t.elem.elems)
        if a is None or b is None:
            return None
        return Term(_app("zip", a.expr, b.expr), t, max(a.bound, b.bound), max(a.err, b.err))

    def unzip(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        other = self.scalar_type()
        k = self.rng.randrange(2)
        elems = (t.elem, other) if k == 0 else (other, t.elem)
        zs = self.term(ArrayType(t.size, TupleType(elems)), ctx)
        if zs is None:
            return None
        return Term(_app(("fst", "snd")[k], _app("unzip", zs.expr)), t, zs.bound, zs.err)

    def split(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        k = t.elem.size
        if k.as_int() is None and t.size.as_int() is None:
            return None  # a product of two size variables could not be read from an input
        xs = self.term(ArrayType(t.size * k, t.elem.elem), ctx)
        if xs is None:
            return None
        return Term(_app("split", xs.expr, params=(k,)), t, xs.bound, xs.err)

    def factorisations(self, n: Nat) -> list[tuple[Nat, Nat]]:
        """Pairs (a, b) with a * b == n, the program able to prove it."""
        c = n.as_int()
        if c is not None:
            return [(Nat.const(c // b), Nat.const(b)) for b in range(1, min(c, 64) + 1) if c % b == 0]
        found = [(n, Nat.const(1))]
        for k in (2, 3, 4, 8):
            if divides(k, n):
                found += [(n / k, Nat.const(k)), (Nat.const(k), n / k)]
        return found

    def join(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        options = self.factorisations(t.size)
        proper = [(a, b) for a, b in options if a.as_int() != 1 and b.as_int() != 1]
        a, b = self.rng.choice(proper if proper and self.rng.random() < 0.85 else options)
        xs = self.term(ArrayType(a, ArrayType(b, t.elem)), ctx)
        if xs is None:
            return None
        return Term(_app("join", xs.expr), t, xs.bound, xs.err)

    def transpose(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        inner = t.elem
        xs = self.term(ArrayType(inner.size, ArrayType(t.size, inner.elem)), ctx)
        if xs is None:
            return None
        return Term(_app("transpose", xs.expr), t, xs.bound, xs.err)

    def slide(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        """slide size step xs, the stencil shape slide size 1 (pad l r xs) half of the time."""
        size = t.elem.size.as_int()
        if size is None or size > 16:
            return None
        u = t.elem.elem
        if size >= 2 and self.rng.random() < 0.5:
            left = self.rng.randrange(size)
            right = size - 1 - left
            padded = self.pad_of(ArrayType(t.size, u), left, right, ctx)
            if padded is None:
                return None
            return Term(_app("slide", padded.expr, params=(Nat.const(size), Nat.const(1))), t, padded.bound, padded.err)
        step = self.rng.choice(sorted({1, 2, size, size + 1}))
        xs = self.term(ArrayType(t.size * step + (size - step), u), ctx)
        if xs is None:
            return None
        return Term(_app("slide", xs.expr, params=(Nat.const(size), Nat.const(step))), t, xs.bound, xs.err)

    def pad(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        room = self.const_part(t.size) if t.size.as_int() is None else t.size.as_int() - 1
        if room < 1:
            return None
        total = self.rng.randint(1, min(room, 4))
        left = self.rng.randint(0, total)
        inner = ArrayType(t.size - total, t.elem)
        return self.pad_of(inner, left, total - left, ctx)

    def pad_of(self, inner: ArrayType, left: int, right: int, ctx: _Ctx) -> Term | None:
        """pad_const/clamp/wrap/mirror left right xs with xs of type `inner`."""
        length = self.value(inner.size)
        kinds = ["pad_const", "pad_clamp"]
        if max(left, right) <= length:  # wrap and mirror reach at most the whole input
            kinds += ["pad_wrap", "pad_mirror"]
        kind = self.rng.choice(kinds)
        xs = self.term(inner, ctx)
        if xs is None:
            return None
        out_t = ArrayType(inner.size + left + right, inner.elem)
        params = (Nat.const(left), Nat.const(right))
        if kind == "pad_const":
            value = self.term(inner.elem, ctx.down()) if self.rng.random() < 0.3 else None
            if value is None:
                value = self._constant(inner.elem)
            if value is None:
                return None
            expr = _app(kind, value.expr, xs.expr, params=params)
            return Term(expr, out_t, max(xs.bound, value.bound), max(xs.err, value.err))
        return Term(_app(kind, xs.expr, params=params), out_t, xs.bound, xs.err)

    def _constant(self, t: DataType) -> Term | None:
        if isinstance(t, ScalarType):
            return self.literal(t)
        if isinstance(t, TupleType):
            a, b = (self._constant(e) for e in t.elems)
            return None if a is None or b is None else Term(_app("pair", a.expr, b.expr), t, max(a.bound, b.bound))
        return None

    def take(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        if t.size.as_int() is None and self.rng.random() < 0.5:
            return None
        extra = self.rng.choice((1, 2, 3)) if not self.vars or self.rng.random() < 0.6 else self.rng.choice(self.vars)
        xs = self.term(ArrayType(t.size + extra, t.elem), ctx)
        if xs is None:
            return None
        return Term(_app("take", xs.expr, params=(t.size,)), t, xs.bound, xs.err)

    def drop(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        k = self.rng.choice((0, 1, 1, 2, 3))
        xs = self.term(ArrayType(t.size + k, t.elem), ctx)
        if xs is None:
            return None
        return Term(_app("drop", xs.expr, params=(Nat.const(k),)), t, xs.bound, xs.err)

    def concat(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        n = t.size
        c = n.as_int()
        if c is not None:
            if c < 2:
                return None
            a = self.rng.randint(1, c - 1)
            parts = (Nat.const(a), Nat.const(c - a))
        elif self.const_part(n) >= 1:
            k = self.const_part(n)
            parts = (n - k, Nat.const(k))
        elif divides(2, n):
            parts = (n / 2, n / 2)
        else:
            return None
        if self.rng.random() < 0.5:
            parts = parts[::-1]
        xs, ys = (self.term(ArrayType(p, t.elem), ctx) for p in parts)
        if xs is None or ys is None:
            return None
        return Term(_app("concat", xs.expr, ys.expr), t, max(xs.bound, ys.bound), max(xs.err, ys.err))

    def permutation(self, n: Nat):
        """An index function that is a permutation of [0, n) at this program's sizes."""
        length = self.value(n)
        choices = ["reverse", "rotate", "identity"]
        strides = [s for s in (2, 3, 4) if length % s == 0 and length > s]
        if strides:
            choices += ["stride", "stride"]
        if length % 2 == 0:
            choices.append("swap")
        kind = self.rng.choice(choices)
        if kind == "stride":
            return stride_index(Nat.const(self.rng.choice(strides)))
        shift = self.rng.randint(1, 5)
        builders = {
            "reverse": lambda i, m: m - 1 - i,
            "rotate": lambda i, m: (i + shift) % m,
            "identity": lambda i, m: i,
            "swap": lambda i, m: i + 1 - 2 * (i % 2),
        }
        return index_fun(builders[kind])

    def permute(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        xs = self.term(t, ctx)
        if xs is None:
            return None
        kind = "gather" if self.rng.random() < 0.65 else "scatter"
        return Term(_app(kind, xs.expr, params=(self.permutation(t.size),)), t, xs.bound, xs.err)

    def reorder(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        strides = [s for s in (2, 3, 4, 8) if divides(s, t.size) and self.value(t.size) >= s]
        if not strides:
            return None
        xs = self.term(t, ctx)
        if xs is None:
            return None
        return Term(_app("reorder_stride", xs.expr, params=(Nat.const(self.rng.choice(strides)),)), t, xs.bound, xs.err)

    def generate(self, t: ArrayType, ctx: _Ctx, leaf: bool = False) -> Term | None:
        length = self.value(t.size)
        i = self.name("i")
        index = Term(i, i32, max(length - 1, 0), 0.0)
        self.index_lengths[i.name] = t.size
        inner = _Ctx(ctx.env + (index,), 0 if leaf else ctx.depth - 1, ctx.outer * length)
        body = self.term(t.elem, inner)
        if body is None:
            return None
        return Term(_app("generate", Lambda(i, body.expr), params=(t.size,)), t, body.bound, body.err)

    def indexed(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        """A map written with indices, `generate n (fun(i) => F[xs[i]])`: each read of the
        element is at the index or, clamped to the array (max, min, clamp; the upper bound
        spelt three ways), at a neighbour i + c: stencils as a user writes them with loops."""
        found = self.source(t, ctx)
        if found is None:
            return None
        s, xs = found
        i = self.name("i")
        self.index_lengths[i.name] = t.size
        index = Term(i, i32, max(self.value(t.size) - 1, 0), 0.0)
        scope = _Ctx(ctx.env + (index,), ctx.depth, ctx.outer)
        made = self.lam(s, xs.bound, xs.err, scope, self.value(t.size), self.function_body(t.elem))
        if made is None:
            return None
        fn, body = made
        neighbours = self.rng.random() < 0.6
        # A computed array is bound outside: read inside the generate it would be computed per index.
        source = xs.expr if isinstance(xs.expr, Identifier) else self.name("v")
        reads = _Reads(fn.param.name, lambda: self.read_at(source, i, t.size, neighbours))
        written = _app("generate", Lambda(i, reads.rewrite(fn.body)), params=(t.size,))
        if source is not xs.expr:
            written = _app("let", xs.expr, Lambda(source, written))
        return Term(written, t, body.bound, body.err)

    def read_at(self, xs: Expr, i: Identifier, n: Nat, neighbours: bool) -> Expr:
        """`at xs i`, or `at xs (clamped i + c)` for a small c."""
        rng = self.rng
        if not neighbours or rng.random() < 0.3:
            return _app("at", xs, i)
        c = rng.choice((-2, -1, 1, 2))
        shifted = _app("add" if c > 0 else "sub", i, Literal(abs(c), i32))
        upper = rng.choice((
            lambda: _app("sub", Prim("nat_value", (n,)), Literal(1, i32)),
            lambda: _app("sub", _app("cast", Prim("nat_value", (n,)), params=(i32,)), Literal(1, i32)),
            lambda: Literal(n.as_int() - 1, i32) if n.as_int() is not None else _app(
                "sub", Prim("nat_value", (n,)), Literal(1, i32))))
        form = rng.randrange(3)
        if form == 0:
            index = _app("min", _app("max", shifted, Literal(0, i32)), upper())
        elif form == 1:
            index = _app("max", _app("min", shifted, upper()), Literal(0, i32))
        else:
            index = _app("clamp", shifted, Literal(0, i32), upper())
        return _app("at", xs, index)

    def iterate(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        """iterate k (fun ys => map (reduce (+) 0) (split d ys)) xs: k rounds of partial sums."""
        d, k = self.rng.choice((2, 3)), self.rng.choice((1, 2))
        elem = t.elem
        xs_t = ArrayType(t.size * d**k, elem)
        if not self.fits(xs_t, ctx):
            return None
        xs = self.term(xs_t, ctx)
        if xs is None:
            return None
        ys, chunk = self.name("ys"), self.name("c")
        step = Lambda(ys, _app("map", Lambda(chunk, _app("reduce", Prim("add"), Literal(0.0, elem), chunk)),
                               _app("split", ys, params=(Nat.const(d),))))
        expr = dsl_iterate(k, step, xs.expr)
        bound = xs.bound * d**k
        if bound > FLOAT_LIMIT:
            return None
        return Term(expr, t, bound, d**k * xs.err + _eps(elem) * 2 * k * bound)

    def vectorised(self, t: ArrayType, ctx: _Ctx) -> Term | None:
        """as_scalar (map (fun v => v op v) (as_vector w xs))."""
        widths = [w for w in (2, 4, 8) if divides(w, t.size)]
        if not widths:
            return None
        w = self.rng.choice(widths)
        xs = self.term(t, ctx)
        if xs is None:
            return None
        v = self.name("v")
        op = self.rng.choice(("add", "mul", "sub", "id"))
        if op == "mul" and xs.bound**2 > _limit(t.elem):
            op = "add"
        body = v if op == "id" else _app(op, v, v)
        bound = {"add": 2 * xs.bound, "mul": xs.bound**2, "sub": 0.0, "id": xs.bound}[op]
        err = xs.err * (2 * xs.bound + 2 if op == "mul" else 2) + _eps(t.elem) * bound
        vectors = _app("map", Lambda(v, body), _app("as_vector", xs.expr, params=(Nat.const(w),)))
        return Term(_app("as_scalar", vectors), t, bound, err)


class _Reads:
    """Replaces each occurrence of a parameter by a fresh read (`read()`, called per occurrence)."""

    def __init__(self, name: str, read: Callable[[], Expr]):
        self.name, self.read = name, read

    def rewrite(self, e: Expr) -> Expr:
        if isinstance(e, Identifier):
            return self.read() if e.name == self.name else e
        if isinstance(e, Lambda):
            return e if e.param.name == self.name else attrs.evolve(e, body=self.rewrite(e.body))
        if isinstance(e, App):
            return attrs.evolve(e, fun=self.rewrite(e.fun), arg=self.rewrite(e.arg))
        return e


def _leaf_scalar(t: DataType):
    while isinstance(t, ArrayType):
        t = t.elem
    return t


def _type_vars(t: DataType) -> set:
    if isinstance(t, ArrayType):
        return set(t.size.vars) | _type_vars(t.elem)
    if isinstance(t, TupleType):
        return set().union(*(_type_vars(e) for e in t.elems))
    return set()


def _expr_vars(e: Expr) -> set:
    """Size variables a node's static parameters mention (IndexFun binders excluded)."""
    found = set()
    if isinstance(e, Prim):
        for p in e.params:
            if isinstance(p, Nat):
                found |= set(p.vars)
    return found


# ------------------------------------------------------------------------------ inputs


def random_inputs(program: Expr, sizes: dict, seed: int = 0) -> tuple:
    """Inputs for a typed program at `sizes`: floats of magnitude 0.5 to 1.5, integers of
    magnitude 1 to 9, a quarter of each negative (the bounds the generator assumes)."""
    rng = np.random.default_rng(seed)
    body = program
    while isinstance(body, NatLambda):
        body = body.body
    values = []
    while isinstance(body, Lambda):
        values.append(_value(layout(body.param.t), sizes, rng))
        body = body.body
    return tuple(values)


def _value(lay, sizes: dict, rng: np.random.Generator):
    if isinstance(lay, tuple):
        return tuple(_value(sub, sizes, rng) for sub in lay)
    shape = tuple(int(evaluate(d, sizes)) for d in lay.dims)
    if lay.scalar.is_float:
        values = (rng.random(shape) + 0.5) * np.where(rng.random(shape) < 0.25, -1.0, 1.0)
    else:  # a quarter negative too: signedness errors show (0 - abs x < 0, division, remainder)
        values = rng.integers(1, 10, shape) * np.where(rng.random(shape) < 0.25, -1, 1)
    values = np.asarray(values).astype(lay.scalar.dtype)
    return values[()] if not shape else values


# -------------------------------------------------------------------------- the entry point


def random_program(seed: int, max_depth: int = 5, max_nodes: int = 40, attempts: int = 200) -> RandomProgram:
    """The random program of `seed` (deterministic): the first attempt of the seed's random
    stream that builds, types, interprets on random inputs and is numerically stable."""
    rng, long_rows = random.Random(seed), random.Random(f"long rows {seed}")
    functions = random.Random(f"functions {seed}")
    discarded: Counter = Counter()
    for _ in range(attempts):
        builder = _Builder(rng, max_depth=rng.randint(2, max_depth), max_nodes=max_nodes, long_rows=long_rows,
                           functions=functions)
        try:
            expr, body = builder.program()
        except _Reject as why:
            discarded[str(why)] += 1
            continue
        if body.err > UNSTABLE * max(1.0, body.bound):
            discarded["unstable"] += 1
            continue
        try:
            typed = infer(expr)
        except FunctionalError:
            discarded["ill_typed"] += 1
            continue
        inputs = random_inputs(typed, builder.sizes, seed)
        try:
            with np.errstate(all="ignore"):
                expected = interpret(typed, *inputs)
        except FunctionalError:
            discarded["not_interpretable"] += 1
            continue
        if not _all_finite(expected):
            discarded["not_finite"] += 1
            continue
        return RandomProgram(seed, typed, dict(builder.sizes), inputs, expected, body.bound, body.err, discarded)
    raise GenerationError(f"no acceptable program for seed {seed} in {attempts} attempts: {dict(discarded)}")


def _all_finite(value) -> bool:
    if isinstance(value, tuple):
        return all(_all_finite(v) for v in value)
    a = np.asarray(value)
    return not np.issubdtype(a.dtype, np.floating) or bool(np.isfinite(a).all())


__all__ = ["COVERED", "GenerationError", "RandomProgram", "Term", "primitives_of", "random_inputs", "random_program"]
