"""The default lowering's vector phases and their rules.  vector_reductions
(reduce_vectorize_map): a reduction a work-item runs over a contiguous row (gemv's dot
products) accumulates w lanes at once, reading its inputs as vectors, with the map's
arithmetic lane-wise; a strided one, a short one and a program-level one stay as they were.
vector_columns (vectorize_columns): a program-level map over the columns of a transpose
(A^T x) computes w neighbouring columns at once from vector reads of the rows."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import codegen_opencl.opencl as cg
import dpia
import functional as fl
from dpia.programs import TOLERANCE, fix_sizes, random_inputs, relative_error
from functional import default_lowering as D
from functional import schedules as S
from functional.derivation import Derivation, derive
from functional.expr import Lambda, NatLambda
from functional.rules.core import RULES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import suite  # noqa: E402

BY_NAME = {e.name: e for e in suite.SUITE + suite.ALTERNATIVES}
M, N = fl.nat("M"), fl.nat("N")


def _body(program):
    """The program's body, inside its size and value parameters (where the phases run)."""
    e = program
    while isinstance(e, (Lambda, NatLambda)):
        e = e.body
    return e


def _fixed(program, sizes):
    return fl.infer(fix_sizes(program, sizes))


def _lowered(program):
    low, derivation = derive(program, S.default_schedule(program))
    assert S.high_level_left(low) == []
    assert Derivation.from_text(derivation.to_text()).replay() == low
    return low, derivation


def _agrees(program, low, sizes):
    inputs = random_inputs(program, sizes, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(program, *inputs)) <= TOLERANCE


def test_a_row_dot_product_of_gemv_is_read_as_float8_vectors_and_agrees():
    sizes = {"M": 24, "N": 128}
    program = _fixed(BY_NAME["gemv"].program, sizes)
    low, derivation = _lowered(program)
    assert "reduce_vectorize_map" in derivation.to_text()
    text = str(low)
    assert "(zip (as_vector 8 (fst p1)) (as_vector 8 x))" in text and "cast vec[f32, 8] 0.0" in text
    kernel = cg.emit(dpia.translate(low))
    assert "(global const float8*)a" in kernel and "(global const float8*)x" in kernel
    assert "tmp" not in kernel  # the products are not stored first (reduce_vectorize on `map g xs` does)
    _agrees(program, low, sizes)


def test_both_dot_products_of_gesummv_are_vectorised_and_agree():
    sizes = {"N": 64}
    program = _fixed(BY_NAME["gesummv"].program, sizes)
    low, derivation = _lowered(program)
    assert derivation.to_text().count("reduce_vectorize_map") == 2
    _agrees(program, low, sizes)


@pytest.mark.parametrize("name", ["gemv_t", "gemv_t_columns"])
def test_columns_of_a_transpose_are_computed_eight_at_once_from_vector_reads_of_rows(name):
    sizes = {"M": 24, "N": 128}
    program = _fixed(BY_NAME[name].program, sizes)
    assert list(D.vector_reduction_sites(_body(program))) == []  # a column is strided: no row vectors
    low, derivation = _lowered(program)
    text = derivation.to_text()
    assert "vectorize_columns" in text and "reduce_vectorize_map" not in text
    assert "(transpose (map (fun(r) => as_vector 8 r) a)) (as_vector 8 y)" in str(low)
    kernel = cg.emit(dpia.translate(low))
    assert "(global const float8*)a" in kernel and "(float8)(a[" not in kernel  # vector reads, no gather
    _agrees(program, low, sizes)


@pytest.mark.parametrize("name", ["atax", "atax_inline"])
def test_atax_vectorises_its_row_products_and_its_column_map(name):
    sizes = {"M": 64, "N": 128}
    program = _fixed(BY_NAME[name].program, sizes)
    low, derivation = _lowered(program)
    text = derivation.to_text()
    assert text.count("reduce_vectorize_map") == 1 and text.count("vectorize_columns") == 1
    assert "as_vector 8 row" in str(low)
    _agrees(program, low, sizes)


def test_a_column_map_that_is_not_lane_wise_or_reads_strided_rows_stays_scalar():
    a = fl.array(M, fl.array(N, fl.f32))
    sine = fl.fun([a], lambda m: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(lambda v: fl.sin(v), c)),
                                        fl.transpose(m)))
    twice = fl.fun([a], lambda m: fl.map(lambda c: fl.reduce(fl.add, 0.0, c),
                                         fl.transpose(fl.transpose(fl.transpose(m)))))
    for prog, sizes in ((sine, {"M": 16, "N": 64}), (twice, {"M": 64, "N": 64})):
        program = _fixed(prog, sizes)
        low, derivation = _lowered(program)
        assert "vectorize_columns" not in derivation.to_text()
        _agrees(program, low, sizes)


def test_the_column_rule_refuses_reductions_of_lanes_it_cannot_lift():
    rule = RULES["vectorize_columns"]
    a = fl.array(fl.nat("M"), fl.array(fl.nat("N", multiple_of=8), fl.f32))
    plain = fl.infer(fl.fun([a], lambda m: fl.map(lambda c: fl.reduce(fl.add, 0.0, c), fl.transpose(m))))
    assert rule.strategy(w=8)(_body(plain)).ok  # a plain sum of each column lifts
    assert not rule.strategy(w=16)(_body(plain)).ok  # 16 does not divide a multiple of 8
    minus = fl.infer(fl.fun([a], lambda m: fl.map(lambda c: fl.reduce(lambda x, y: x - y, 0.0, c), fl.transpose(m))))
    assert "lane-wise" in rule.strategy(w=8)(_body(minus)).reason  # no vector form of the operator known
    rows = fl.infer(fl.fun([a], lambda m: fl.map(lambda r: fl.reduce(fl.add, 0.0, r), m)))
    assert "no columns" in rule.strategy(w=8)(_body(rows)).reason


def test_mm_reads_columns_of_b_so_its_dot_products_stay_scalar():
    import seed

    program = _fixed(seed.mm, {"M": 64, "K": 128, "N": 64})
    low, derivation = _lowered(program)
    assert "reduce_vectorize_map" not in derivation.to_text() and "vectorize_columns" not in derivation.to_text()


@pytest.mark.parametrize("n, width", [(128, 8), (100, 4), (66, 2), (129, None), (48, None)])
def test_the_width_is_the_widest_dividing_the_length_and_short_or_odd_rows_stay_scalar(n, width):
    assert D.MIN_VECTOR_REDUCTION == 64 and D.VECTOR_WIDTHS == (8, 4, 2)
    sizes = {"M": 8, "N": n}
    program = _fixed(BY_NAME["gemv"].program, sizes)
    low, derivation = _lowered(program)
    if width is None:
        assert "as_vector" not in str(low)
    else:
        assert f"as_vector {width} x" in str(low) and f"vec[f32, {width}]" in str(low)
        _agrees(program, low, sizes)


def test_symbolic_lengths_without_facts_stay_scalar():
    low, derivation = _lowered(fl.infer(BY_NAME["gemv"].program))
    assert "as_vector" not in str(low)


def test_a_symbolic_length_with_a_fact_is_vectorised_by_the_widest_width_it_gives():
    """As the explorer derives its size-generic kernels: the sizes as variables with facts."""
    rows, cols = fl.nat("M"), fl.nat("N", multiple_of=4)
    gemv = fl.fun([fl.array(rows, fl.array(cols, fl.f32)), fl.array(cols, fl.f32)],
                  lambda a, x: fl.map(lambda r: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p),
                                                                                  fl.zip(r, x))), a))
    program = fl.infer(gemv)
    low, _ = _lowered(program)
    assert "as_vector 4 x" in str(low)
    _agrees(program, low, {"M": 5, "N": 12})


def test_a_program_level_reduction_is_left_to_the_reductions_phase():
    xs, ys = fl.array(fl.nat("N"), fl.f32), fl.array(fl.nat("N"), fl.f32)
    dot = fl.fun([xs, ys], lambda a, b: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(a, b))))
    program = _fixed(dot, {"N": 4096})
    assert list(D.vector_reduction_sites(_body(program))) == []
    low, derivation = _lowered(program)
    assert "reduce_vectorize_map" not in derivation.to_text()


def test_rows_of_a_let_bound_computed_array_are_contiguous():
    """A value a `let` computes is stored in order: its rows are read as vectors."""
    a = fl.array(M, fl.array(N, fl.f32))
    prog = fl.fun([a], lambda m: fl.let(fl.map(lambda r: fl.map(lambda v: v * 2.0, r), m),
                                         lambda t: fl.map(lambda r: fl.reduce(fl.add, 0.0, fl.map(lambda v: v + 1.0, r)), t)))
    sizes = {"M": 4, "N": 64}
    program = _fixed(prog, sizes)
    assert len(list(D.vector_reduction_sites(_body(program)))) == 1
    low, _ = _lowered(program)
    assert "as_vector 8" in str(low)
    _agrees(program, low, sizes)


def test_the_rule_refuses_what_is_not_lane_wise_or_not_a_monoid():
    rule = RULES["reduce_vectorize_map"]
    a = fl.array(fl.nat("N", multiple_of=8), fl.f32)
    ok = fl.infer(fl.fun([a, a], lambda x, y: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p) + 1.0,
                                                                             fl.zip(x, y)))))
    sine = fl.infer(fl.fun([a], lambda x: fl.reduce(fl.add, 0.0, fl.map(lambda v: fl.sin(v), x))))
    start = fl.infer(fl.fun([a], lambda x: fl.reduce(fl.add, 1.0, fl.map(lambda v: v * v, x))))
    body = _body
    assert rule.strategy(w=8)(body(ok)).ok
    assert not rule.strategy(w=16)(body(ok)).ok  # 16 does not divide a multiple of 8
    assert "lane-wise" in rule.strategy(w=8)(body(sine)).reason
    assert "neutral" in rule.strategy(w=8)(body(start)).reason
