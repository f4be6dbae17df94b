"""The reference interpreter: NumPy meaning of every program, high- or low-level.

`interpret(program, *inputs)` infers types, binds the program's size variables from the
input shapes (checking dtypes, ranks and declared size facts), evaluates with batched
values (see `values.py`) and returns NumPy results whose dtypes follow the types.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from .errors import FunctionalError, InterpretError, excerpt
from .expr import App, Expr, Identifier, Lambda, Literal, NatApp, NatLambda, Prim
from .infer import arity, infer
from .nat import Nat, Var, as_nat, evaluate
from .primitives import PRIMITIVES
from .types import ArrayType, DataType, FunType, NatFunType, ScalarType, TupleType, Type, VectorType, scalar_of
from .values import lift, materialise, tmap


@attrs.frozen
class Env:
    vals: dict  # name -> (value, batch depth at which it was bound)
    nats: dict  # size variable name -> int


@attrs.frozen
class Closure:
    lam: Lambda
    env: Env

    def apply(self, batch: tuple, x) -> Any:
        vals = {**self.env.vals, self.lam.param.name: (x, len(batch))}
        return _eval(self.lam.body, Env(vals, self.env.nats), batch)


@attrs.frozen
class NatClosure:
    lam: NatLambda
    env: Env

    def apply_nat(self, batch: tuple, n: int) -> Any:
        return _eval(self.lam.body, Env(self.env.vals, {**self.env.nats, self.lam.var.name: n}), batch)


_BINOPS = {"add": np.add, "mul": np.multiply, "min": np.fmin, "max": np.fmax}  # as their meanings


@attrs.frozen
class PrimValue:
    """A primitive with some of its arguments (each kept with its batch depth)."""

    node: Prim
    nats: dict
    args: tuple = ()

    def apply(self, batch: tuple, x) -> Any:
        args = self.args + ((x, len(batch)),)
        if len(args) < arity(PRIMITIVES[self.node.name], self.node.params):
            return PrimValue(self.node, self.nats, args)
        lifted = [a if _is_function(a) else lift(a, depth, batch) for a, depth in args]
        return PRIMITIVES[self.node.name].meaning(Call(self.node, self.nats, tuple(lifted), batch))


def _is_function(v) -> bool:
    return isinstance(v, (Closure, NatClosure, PrimValue))


@attrs.frozen
class Call:
    """What a primitive's meaning sees: static parameters, batched arguments, types."""

    node: Prim
    nats: dict
    args: tuple
    batch: tuple

    @property
    def params(self) -> tuple:
        return self.node.params

    @property
    def ax(self) -> int:
        return len(self.batch)

    @property
    def arg_types(self) -> list[Type]:
        t, out = self.node.t, []
        for _ in self.args:
            out.append(t.param)
            t = t.result
        return out

    @property
    def result_type(self) -> Type:
        t = self.node.t
        for _ in self.args:
            t = t.result
        return t

    def size(self, n) -> int:
        return int(evaluate(as_nat(n), self.nats))

    def apply(self, f, x):
        return f.apply(self.batch, x)

    def map_apply(self, f, xs, n: int):
        return f.apply(self.batch + (n,), xs)

    def apply_nat(self, f, n: int):
        return f.apply_nat(self.batch, n)

    def known_binop(self, f):
        if isinstance(f, PrimValue) and not f.args:
            return _BINOPS.get(f.node.name)
        return None

    def cast_result(self, v):
        s = scalar_of(self.result_type)
        return tmap(lambda a: np.asarray(a).astype(s.dtype, copy=False), v) if s is not None else v


def _eval(e: Expr, env: Env, batch: tuple) -> Any:
    if isinstance(e, Identifier):
        value, depth = env.vals[e.name]
        return value if _is_function(value) else lift(value, depth, batch)
    if isinstance(e, App):
        f = _eval(e.fun, env, batch)
        x = _eval(e.arg, env, batch)
        try:
            return f.apply(batch, x)
        except FunctionalError as exc:
            if exc.where is None:
                raise type(exc)(exc.message, where=excerpt(str(e)), origin=e.origin) from None
            raise
        except (ValueError, IndexError, ArithmeticError) as exc:
            raise InterpretError(f"{type(exc).__name__}: {exc}", where=excerpt(str(e)), origin=e.origin) from exc
    if isinstance(e, Lambda):
        return Closure(e, env)
    if isinstance(e, NatLambda):
        return NatClosure(e, env)
    if isinstance(e, NatApp):
        return _eval(e.fun, env, batch).apply_nat(batch, int(evaluate(e.nat, env.nats)))
    if isinstance(e, Literal):
        return np.broadcast_to(np.asarray(e.value, dtype=e.t.dtype), batch)
    if isinstance(e, Prim):
        if arity(PRIMITIVES[e.name], e.params) == 0:
            return PRIMITIVES[e.name].meaning(Call(e, env.nats, (), batch))
        return PrimValue(e, env.nats)
    raise TypeError(f"not an expression: {e!r}")


# ----------------------------------------------------------------------------- inputs


@attrs.frozen
class Leaf:
    """One array of the struct-of-arrays layout of a data type: its sizes and scalar."""

    dims: tuple  # tuple[Nat, ...]
    scalar: ScalarType


def layout(t: DataType):
    """The struct-of-arrays layout of a data type: a Leaf or a tuple of layouts."""
    if isinstance(t, ScalarType):
        return Leaf((), t)
    if isinstance(t, VectorType):
        return Leaf((t.width,), t.elem)
    if isinstance(t, TupleType):
        return tuple(layout(e) for e in t.elems)
    if isinstance(t, ArrayType):
        return tmap(lambda leaf: Leaf((t.size,) + leaf.dims, leaf.scalar), layout(t.elem))
    raise InterpretError(f"a value of type {t} cannot be an input or output")


def _collect(name: str, lay, value, pairs: list) -> Any:
    """Check one input against its layout; gather (size, extent) pairs; return arrays."""
    if isinstance(lay, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(lay):
            raise InterpretError(f"input {name}: expected a tuple of {len(lay)} arrays (arrays of tuples are "
                                 f"passed as tuples of arrays)")
        return tuple(_collect(f"{name}[{k}]", sub, v, pairs) for k, (sub, v) in enumerate(zip(lay, value)))
    if lay.dims == () and isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        value = _python_scalar(name, lay.scalar, value)
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise InterpretError(f"input {name}: not an array ({exc})") from None
    if arr.dtype != lay.scalar.dtype:
        raise InterpretError(f"input {name}: expected {lay.scalar} ({lay.scalar.dtype}) elements, found {arr.dtype}")
    if arr.ndim != len(lay.dims):
        raise InterpretError(f"input {name}: expected {len(lay.dims)} dimension(s), found shape {arr.shape}")
    for size, extent in zip(lay.dims, arr.shape):
        pairs.append((name, size, extent))
    return arr


def _python_scalar(name: str, scalar: ScalarType, value) -> np.ndarray:
    """A Python bool, int or float given for a scalar input: only where it fits exactly."""
    fits = {bool: scalar.name == "bool", int: scalar.name != "bool", float: scalar.is_float}[type(value)]
    if fits and isinstance(value, int) and scalar.is_int:
        info = np.iinfo(scalar.dtype)
        fits = info.min <= value <= info.max
    if not fits:
        raise InterpretError(f"input {name}: expected {scalar} ({scalar.dtype}), found the Python "
                             f"{type(value).__name__} {value!r}")
    return np.asarray(value, dtype=scalar.dtype)


def bind_sizes(pairs: list, nat_vars: list[Var]) -> dict[str, int]:
    """Solve the program's size variables from (size, extent) pairs, then check facts."""
    env: dict[str, int] = {}
    source: dict[str, str] = {}  # size variable name -> the input it was read from
    pending = list(pairs)
    progress = True
    while pending and progress:
        progress = False
        for item in list(pending):
            name, size, extent = item
            unbound = [v for v in size.vars if v.name not in env]
            if not unbound:
                expected = evaluate(size, env)
                if expected != extent:
                    origins = sorted({source[v.name] for v in size.vars if v.name in source} - {name})
                    known = f"size {size} = {expected}" + (f" (from input {', '.join(origins)})" if origins else "")
                    if not size.vars:
                        known = f"size {size}"
                    raise InterpretError(f"input {name}: {known} but the array has extent {extent}")
                pending.remove(item)
                progress = True
            elif len(unbound) == 1:
                value = _solve_linear(name, size, unbound[0], env, extent)
                if value is not None:
                    env[unbound[0].name] = value
                    source[unbound[0].name] = name
                    pending.remove(item)
                    progress = True
    if pending:
        name, size, extent = pending[0]
        raise InterpretError(f"input {name}: cannot determine the sizes in {size} from extent {extent}")
    for v in nat_vars:
        if v.name not in env:
            raise InterpretError(f"size {v.name} does not appear in any input's type")
    for v in sorted({v for _, size, _ in pairs for v in size.vars} | set(nat_vars), key=lambda v: v.name):
        _check_facts(source.get(v.name), v, env)
    return env


def _solve_linear(name: str, size: Nat, v: Var, env: dict, extent: int) -> int | None:
    from .nat import substitute

    known = substitute(size, {k: Nat.const(env[k.name]) for k in size.vars if k.name in env})
    coeff, rest = Nat.const(0), Nat.const(0)
    for mono, c in known.terms:
        powers = dict(mono)
        if v in powers:
            if powers[v] != 1 or len(powers) != 1:
                return None
            coeff = coeff + Nat.const(c)
        else:
            if mono:
                return None
            rest = rest + Nat.const(c)
    if coeff == 0:
        return None
    value = (extent - rest.value) / coeff.value
    if value.denominator != 1:
        raise InterpretError(f"input {name}: extent {extent} does not fit size {size} for an integer {v.name}")
    return int(value)


def _check_facts(name: str | None, v: Var, env: dict) -> None:
    value = env[v.name]
    where = f"input {name}: " if name else ""
    if value < max(v.lo, 1):
        raise InterpretError(f"{where}size {v.name} = {value}: sizes must be at least {max(v.lo, 1)}")
    if v.hi is not None and value >= evaluate(v.hi, env):
        raise InterpretError(f"{where}size {v.name} = {value} must be below {v.hi}")
    if value % v.multiple_of:
        raise InterpretError(f"{where}size {v.name} = {value} must be a multiple of {v.multiple_of}")


# ---------------------------------------------------------------------------- driver


def interpret(program: Expr, *inputs) -> Any:
    """Run `program` on NumPy inputs.  Results: NumPy arrays (scalars as NumPy scalars;
    arrays of tuples as tuples of arrays).  A program that `infer` (or a strategy) already
    typed is not inferred again."""
    prog = program if program.t is not None else infer(program)
    body, nat_vars = prog, []
    while isinstance(body, NatLambda):
        nat_vars.append(body.var)
        body = body.body
    params = []
    while isinstance(body, Lambda) and len(params) < len(inputs):
        params.append((body.param.name, body.param.t))
        body = body.body
    # A program in point-free form (`map f`) takes its remaining inputs as a function value.
    rest_types, result_t = [], body.t
    while len(params) + len(rest_types) < len(inputs) and isinstance(result_t, FunType):
        rest_types.append(result_t.param)
        result_t = result_t.result
    names = [n for n, _ in params] + [f"#{k + 1}" for k in range(len(params), len(params) + len(rest_types))]
    if len(names) < len(inputs):
        raise InterpretError(f"the program takes {len(names)} input(s) ({', '.join(names) or 'none'}), "
                             f"given {len(inputs)}")
    if isinstance(result_t, (FunType, NatFunType)):
        missing, rest = [], body
        while isinstance(rest, Lambda):
            missing.append(rest.param.name)
            rest = rest.body
        t = rest.t
        while isinstance(t, FunType):  # point-free: inputs without names
            missing.append(f"#{len(names) + len(missing) + 1}")
            t = t.result
        which = f": input {', '.join(missing)} missing" if missing else ""
        raise InterpretError(f"the program takes more inputs than the {len(inputs)} given{which} (its result is "
                             f"a function of type {result_t})")
    types = [t for _, t in params] + rest_types
    pairs: list = []
    arrays = [_collect(n, layout(t), x, pairs) for n, t, x in zip(names, types, inputs)]
    nats = bind_sizes(pairs, nat_vars)
    env = Env({n: (a, 0) for (n, _), a in zip(params, arrays)}, nats)
    with np.errstate(all="ignore"):
        result = _eval(body, env, ())
        for a in arrays[len(params):]:
            result = result.apply((), a)
    out = _cast_layout(materialise(result), layout(result_t))
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out


def _cast_layout(value, lay):
    if isinstance(lay, tuple):
        return tuple(_cast_layout(v, sub) for v, sub in zip(value, lay))
    out = value.astype(lay.scalar.dtype, copy=False)
    return out[()] if out.ndim == 0 else out  # scalars (also inside tuples) as NumPy scalars
