"""DPIA's phrase types and access inference: which values of a low-level program can be read
element by element and which must first be written somewhere.

    exp[dt, read]     readable: an input, a literal, a view of something readable, a stored
                      array (to_global/to_local/to_private), a reduction's accumulator
    exp[dt, write]    computed by loops the program chose (map_global/map_workgroup/
                      map_local/map_seq): it can only be written into an acceptor
    acc[dt]           where a dt is written (the translation's `out`)
    comm              a command
    P1 -> P2, (n: nat) -> P   functions and size functions

Access of each primitive (the translation relies on it):

    layout views (split, join, zip, ...)   read -> read, write -> write (a write view)
    map_X f xs, map_seq f xs               xs read -> write
    reduce_seq f z xs                      xs read -> read (the accumulator is stored)
    to_global / to_local / to_private e    any -> read
    map f xs (f a layout function)         like a view; other f: xs read -> read (lazy)
    let v f, iterate k f xs, map_vec       v, xs read
    scalar operations, generate, literals  read

Reading a `write` expression (the data of a map or reduction, a let's value, ...) is an
error found here, before any code is generated: the program must say where the array is
stored.  `phrase_type(program)` shows the inferred type of a whole program.
"""

from __future__ import annotations

import enum

import attrs

from functional.errors import FunctionalError, excerpt
from functional.expr import Expr, Identifier, Lambda, Literal, NatLambda, Prim, spine
from functional.primitives import COLLECTIVES, LAYOUT, LOOP_MAPS, LOW_REDUCTIONS, PRIMITIVES, SCALAR, STORES, is_view_fn
from functional.types import DataType, Type


class TranslationError(FunctionalError):
    """A program the translation cannot turn into imperative code (not lowered, a value
    that needs storage the program did not choose, ...)."""


class AccessError(TranslationError):
    """A value that must be written somewhere is read directly."""


class Access(enum.Enum):
    READ = "read"
    WRITE = "write"


@attrs.frozen
class ExpPhrase:
    data: DataType
    access: Access

    def __str__(self) -> str:
        return f"exp[{self.data}, {self.access.value}]"


@attrs.frozen
class AccPhrase:
    data: DataType

    def __str__(self) -> str:
        return f"acc[{self.data}]"


@attrs.frozen
class CommPhrase:
    def __str__(self) -> str:
        return "comm"


@attrs.frozen
class FunPhrase:
    param: object
    result: object

    def __str__(self) -> str:
        return f"{self.param} -> {self.result}"


@attrs.frozen
class NatFunPhrase:
    var: str
    result: object

    def __str__(self) -> str:
        return f"({self.var}: nat) -> {self.result}"




def _exp(e: Expr, access: Access) -> ExpPhrase:
    return ExpPhrase(e.t, access)


def _read(e: Expr, env: dict, why: str):
    """The phrase of `e`, which is read here: it must not need storing first."""
    p = infer_access(e, env)
    if isinstance(p, ExpPhrase) and p.access is Access.WRITE:
        head, _ = spine(e)
        name = head.name if isinstance(head, Prim) else "this expression"
        raise AccessError(f"the array computed by {name} is read here ({why}) but the program does not say where "
                          f"it is stored: wrap it in to_private, to_local or to_global",
                          where=excerpt(str(e)), origin=e.origin)
    return p


def infer_access(e: Expr, env: dict | None = None):
    """The phrase type of a typed low-level expression; AccessError where a write-only value
    is read.  `env`: the phrase types of free identifiers (default: readable)."""
    env = env or {}
    if isinstance(e, Identifier):
        return env.get(e.name, _exp(e, Access.READ) if not isinstance(e.t, Type) or _is_data(e.t) else e.t)
    if isinstance(e, Literal):
        return _exp(e, Access.READ)
    if isinstance(e, NatLambda):
        return NatFunPhrase(e.var.name, infer_access(e.body, env))
    if isinstance(e, Lambda):
        param = ExpPhrase(e.param.t, Access.READ) if _is_data(e.param.t) else e.param.t
        return FunPhrase(param, infer_access(e.body, {**env, e.param.name: param}))
    head, args = spine(e)
    if isinstance(head, Lambda) and args:  # an applied lambda: its parameter is the argument
        arg = infer_access(args[0], env)
        inner = infer_access(head.body, {**env, head.param.name: arg})
        return inner if len(args) == 1 else _result(inner, len(args) - 1)
    if not isinstance(head, Prim):
        return _exp(e, Access.READ) if _is_data(e.t) else e.t
    return _primitive(e, head, args, env)


def _primitive(e: Expr, head: Prim, args: list, env: dict):
    name, decl = head.name, PRIMITIVES.get(head.name)
    data_args = [a for a in args if _is_data(a.t)]
    if not _is_data(e.t):  # a partially applied primitive: a function
        return e.t
    if decl is not None and decl.level == SCALAR:
        for a in data_args:
            _read(a, env, f"an operand of {name}")
        return _exp(e, Access.READ)
    if name in LOOP_MAPS:
        _read(args[1], env, f"the data of {name}")
        _function_body(args[0], env)
        return _exp(e, Access.WRITE)
    if name in COLLECTIVES:  # a computation of its operands, written where its result goes
        for a in data_args:
            _read(a, env, f"an operand of {name}")
        return _exp(e, Access.WRITE)
    if name in LOW_REDUCTIONS:
        infer_access(args[1], env)  # the initial value is written into the accumulator
        _read(args[2], env, f"the data of {name}")
        _function_body(args[0], env)
        return _exp(e, Access.READ)
    if name in STORES:
        infer_access(args[0], env)
        return _exp(e, Access.READ)
    if name == "let":
        value = _read(args[0], env, "the value of let")
        body = args[1]
        if isinstance(body, Lambda):
            return infer_access(body.body, {**env, body.param.name: value})
        return _exp(e, Access.READ)
    if name in ("iterate", "map_vec"):
        _read(args[-1], env, f"the data of {name}")
        _function_body(args[0], env)
        return _exp(e, Access.READ)
    if name == "map" and len(args) == 2 and not is_view_fn(args[0]):
        _read(args[1], env, "the data of a map read lazily")
        return _exp(e, Access.READ)
    if name in LAYOUT or name == "map":
        accesses = [infer_access(a, env) for a in data_args]
        written = any(isinstance(p, ExpPhrase) and p.access is Access.WRITE for p in accesses)
        return _exp(e, Access.WRITE if written else Access.READ)
    for a in data_args:
        infer_access(a, env)
    return _exp(e, Access.READ)


def _function_body(f: Expr, env: dict) -> None:
    """Check the function a map or reduction applies (its parameters are readable)."""
    if isinstance(f, (Lambda, NatLambda)):
        infer_access(f, env)


def _result(p, count: int):
    for _ in range(count):
        if not isinstance(p, FunPhrase):
            return p
        p = p.result
    return p


def _is_data(t) -> bool:
    return isinstance(t, DataType)


def phrase_type(program: Expr):
    """The phrase type of a typed low-level program, e.g. `(N: nat) -> exp[N.f32, read] ->
    exp[f32, read]` for a sum; AccessError where it reads what it did not store."""
    return infer_access(program)


def check_access(program: Expr) -> None:
    """AccessError (naming the place) where the program reads a value it must store first."""
    infer_access(program)


__all__ = ["Access", "AccessError", "AccPhrase", "CommPhrase", "ExpPhrase", "FunPhrase", "NatFunPhrase",
           "TranslationError", "check_access", "infer_access", "phrase_type"]
