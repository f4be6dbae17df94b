"""Lowering rules: each high-level primitive becomes an explicit implementation choice.

    map f        -> map_global d f | map_workgroup d f | map_local d f | map_seq f | map_seq_unroll f
    reduce f z   -> reduce_seq f z | reduce_seq_unroll f z
    e            -> to_global e | to_local e | to_private e      (where a computed array lives)

They apply to saturated (`map f xs`) and partial (`map f`) uses alike.
"""

from __future__ import annotations

from .. import dsl as fl
from ..expr import App, Prim
from ..strategies import MAP_LIKE
from . import instances as inst
from .core import OneOf, P, V, rule


def _rebuild(name: str, params: tuple, m, arg_names: tuple[str, ...]):
    e = Prim(name, params)
    for a in arg_names:
        value = m.get(a)
        if value is None:
            break
        e = App(e, value)
    return e


def _ex_map(rng, params):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    if rng.random() < 0.5:
        prog = inst.vector_program(n, lambda xs: fl.map(f, xs))
        return prog, (inst.data(rng, n),), params
    m = inst.size(rng)  # the partial form, as the function of an outer map
    prog = inst.matrix_program(m, n, lambda xss: fl.map_seq(fl.map(f), xss))
    return prog, (inst.data(rng, m, n),), params


_MAP = OneOf(P("map", V("f"), V("xs")), P("map", V("f")))

for _target in ("map_global", "map_workgroup", "map_local"):
    rule(f"lower_{_target}", "lowering", f"map f -> {_target} d f",
         lhs=_MAP, params=("d",), defaults=(0,),
         side=lambda m: None if int(m.d.as_int() if hasattr(m.d, "as_int") else m.d) in (0, 1, 2) else "d is 0, 1 or 2",
         build=lambda m, t=_target: _rebuild(t, (int(m.d.as_int()),), m, ("f", "xs")),
         example=lambda rng: _ex_map(rng, {"d": int(rng.integers(0, 3))}))

for _target in ("map_seq", "map_seq_unroll"):
    rule(f"lower_{_target}", "lowering", f"map f -> {_target} f", lhs=_MAP,
         build=lambda m, t=_target: _rebuild(t, (), m, ("f", "xs")),
         example=lambda rng: _ex_map(rng, {}))


def _ex_reduce(rng):
    n = inst.size(rng)
    op, z = inst.pick(rng, inst.MONOIDS)
    if rng.random() < 0.5:
        prog = inst.vector_program(n, lambda xs: fl.reduce(op, z, xs))
        return prog, (inst.data(rng, n, monoid=(op, z)),), {}
    m = inst.size(rng)
    prog = inst.matrix_program(m, n, lambda xss: fl.map(fl.reduce(op, z), xss))
    return prog, (inst.data(rng, m, n, monoid=(op, z)),), {}


_REDUCE = OneOf(P("reduce", V("f"), V("z"), V("xs")), P("reduce", V("f"), V("z")))
for _target in ("reduce_seq", "reduce_seq_unroll"):
    rule(f"lower_{_target}", "lowering", f"reduce f z -> {_target} f z", lhs=_REDUCE,
         build=lambda m, t=_target: _rebuild(t, (), m, ("f", "z", "xs")),
         example=_ex_reduce, doc="The sequential fold keeps the order; reduce's f is associative.")


_LOW_MAPS = MAP_LIKE - {"map", "map_vec"}


def _ex_store(rng):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.map_seq(f, xs))
    return prog, (inst.data(rng, n),), {}


for _space in ("global", "local", "private"):
    rule(f"store_{_space}", "lowering", f"map_X f xs -> to_{_space} (map_X f xs)   (the result lives in {_space} memory)",
         lhs=P(_LOW_MAPS, V("f"), V("xs"), bind="map"),
         build=lambda m, s=_space: App(Prim(f"to_{s}"), m.root),
         example=_ex_store)
