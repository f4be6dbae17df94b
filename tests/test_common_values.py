"""A value a run of assignments evaluates twice is computed once (imperative.common_values):

    x := E[e]; ...; y := F[e]   =   new t in private { t := e; x := E[t]; ...; y := F[t] }

only where no statement before its last use writes what `e` reads, only for occurrences that
are evaluated unconditionally (not a `select`'s branch), and not for constants or single
instructions on leaves."""

from __future__ import annotations

import re

import sys
from pathlib import Path

import numpy as np

import dpia
from functional.interp import interpret
from functional.nat import Nat, Var
from functional.types import AddressSpace, ArrayType, boolean, f32, i32
from imperative.common_values import share_common_values
from imperative.ir import Assign, Lit, Load, Mem, MemAcc, NatExp, New, Op, Program, Store, seq, walk

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import suite  # noqa: E402

N = Var("N")
i = Nat.atom(Var("i"))
G = AddressSpace.GLOBAL
OUT = Mem("out", ArrayType(Nat.atom(N), f32), G)


def _x(name="x", index=i):
    return Load(name, index, f32, G)


def _op(name, *args):
    return Op(name, (), args, args[0].type if name not in ("lt",) else boolean)


def _to(name, value):
    return Assign(Store(name, i, f32, G), value)


def _shared(*stmts):
    return share_common_values(Program("p", (), OUT, (N,), seq(*stmts))).body


def _temps(body):
    return [c.mem for c in walk(body) if isinstance(c, New)]


def test_a_value_two_assignments_evaluate_is_computed_once():
    d = _op("div", _op("log", _x()), _op("sqrt", _x("y")))
    body = _shared(_to("out0", _op("erfc", d)), _to("out1", _op("erfc", _op("neg", d))))
    (t,) = _temps(body)
    assert body == New(t, seq(Assign(MemAcc(t), d), _to("out0", _op("erfc", t)),
                              _to("out1", _op("erfc", _op("neg", t)))))
    assert t.space is AddressSpace.PRIVATE and t.type == f32


def test_the_parts_of_a_shared_value_get_a_variable_only_where_used_apart_from_it():
    log_x = _op("log", _x())
    d = _op("div", log_x, _op("sqrt", _x("y")))
    assert len(_temps(_shared(_to("out0", _op("exp", d)), _to("out1", _op("exp", _op("neg", d)))))) == 1
    body = _shared(_to("out0", _op("exp", d)), _to("out1", _op("exp", _op("neg", d))), _to("out2", log_x))
    log_t, d_t = _temps(body)  # the part first: the whole is defined from it
    assert body.body.body.cmds[:2] == (Assign(MemAcc(log_t), log_x),
                                        Assign(MemAcc(d_t), _op("div", log_t, _op("sqrt", _x("y")))))
    assert body.body.body.cmds[-1] == _to("out2", log_t)


def test_a_value_is_not_carried_past_a_write_to_what_it_reads():
    e = _op("log", _x())
    stmts = (_to("out0", _op("exp", e)), _to("x", Lit(2.0, f32)), _to("out1", _op("exp", e)))
    assert _shared(*stmts) == seq(*stmts)
    # a write to something else does not stop it
    assert len(_temps(_shared(_to("out0", _op("exp", e)), _to("z", Lit(2.0, f32)), _to("out1", _op("exp", e))))) == 1


def test_values_only_a_select_may_evaluate_stay_where_they_are():
    past = _op("sqrt", _x("x", i + 1))  # read past the bound unless the guard holds
    guard = Op("lt", (), (NatExp(i + 1, i32), NatExp(Nat.atom(N), i32)), boolean)
    stmts = (_to("out0", Op("select", (), (guard, past, Lit(0.0, f32)), f32)),
             _to("out1", Op("select", (), (guard, past, Lit(1.0, f32)), f32)))
    assert _shared(*stmts) == seq(*stmts)
    # evaluated twice anyway: shared, and the guarded occurrences after its definition read the variable
    body = _shared(_to("out2", _op("exp", past)), _to("out3", _op("log", past)), *stmts)
    (t,) = _temps(body)
    assert body.body.cmds[0] == Assign(MemAcc(t), past)
    assert all("sqrt" not in str(c.value) for c in body.body.cmds[1:])


def test_constants_and_single_instructions_on_leaves_are_left_to_the_compiler():
    scaled = _op("mul", _x(), Lit(4.0, f32))
    constant = _op("exp", Lit(1.0, f32))
    stmts = (_to("out0", _op("add", scaled, constant)), _to("out1", _op("sub", scaled, constant)))
    assert _shared(*stmts) == seq(*stmts)


def test_black_scholes_computes_each_library_call_once_per_option():
    entry = suite.BY_NAME["black_scholes"]
    inputs = entry.make_inputs(np.random.default_rng(0), n=37)
    kernel = dpia.compile(entry.program, db=False)
    got = kernel(*inputs)
    source = kernel.source[kernel.source.index("kernel void"):]  # the kernel, past the printer's helpers
    assert source.count("log(") == 1 and source.count("sqrt(") == 1 and source.count("exp(") == 1
    # four cumulative normals, of d1, d2, -d1 and -d2: two erfc calls (imperative.sign_symmetry)
    assert len(re.findall(r"erfc\w*\(", source)) == 2
    for g, want in zip(got, interpret(entry.program, *inputs)):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
