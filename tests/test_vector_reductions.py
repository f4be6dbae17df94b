"""The default lowering's vector phases and their rules.  vector_reductions
(reduce_vectorize_map, reduce_vectorize): every reduction a work-item runs over a contiguous
row (gemv's dot products, both of gesummv's, a row sum) accumulates 16 lanes at once,
reading its inputs as vectors, with the map's arithmetic lane-wise; a length 16 does not
divide (a constant, a symbolic one) keeps a remainder folded after; a strided one, a short
one and a program-level one stay as they were.
vector_columns (vectorize_columns): a program-level map over the columns of a transpose
(A^T x) computes w neighbouring columns at once from vector reads of the rows."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import codegen_opencl.opencl as cg
import dpia
import functional as fl
from dpia.programs import TOLERANCE, fix_sizes, random_inputs, relative_error
from functional import default_lowering as D
from functional import schedules as S
from functional.derivation import Derivation, derive
from functional.expr import Lambda, NatLambda
from functional.nat import as_nat
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


def test_a_row_dot_product_of_gemv_is_read_as_float16_vectors_and_agrees():
    sizes = {"M": 24, "N": 128}
    program = _fixed(BY_NAME["gemv"].program, sizes)
    low, derivation = _lowered(program)
    assert "reduce_vectorize_map" in derivation.to_text() and "reduce_take_drop" not in derivation.to_text()
    text = str(low)
    assert "(zip (as_vector 16 (fst p1)) (as_vector 16 x))" in text and "cast vec[f32, 16] 0.0" in text
    kernel = cg.emit(dpia.translate(low))
    assert "(global const float16*)a" in kernel and "(global const float16*)x" in kernel
    assert "tmp" not in kernel  # the products are not stored first (reduce_vectorize on `map g xs` does)
    _agrees(program, low, sizes)


def test_both_dot_products_of_gesummv_are_vectorised_and_agree():
    sizes = {"N": 64}
    program = _fixed(BY_NAME["gesummv"].program, sizes)
    low, derivation = _lowered(program)
    assert derivation.to_text().count("reduce_vectorize_map") == 2
    _agrees(program, low, sizes)


@pytest.mark.parametrize("name", ["gemv_t", "gemv_t_columns"])
def test_columns_of_a_transpose_are_computed_sixteen_at_once_from_vector_reads_of_rows(name):
    sizes = {"M": 24, "N": 128}
    program = _fixed(BY_NAME[name].program, sizes)
    assert list(D.vector_reduction_sites(_body(program))) == []  # a column is strided: no row vectors
    low, derivation = _lowered(program)
    text = derivation.to_text()
    assert "vectorize_columns" in text and "reduce_vectorize_map" not in text
    assert "(transpose (map (fun(r) => as_vector 16 r) a)) (as_vector 16 y)" in str(low)
    kernel = cg.emit(dpia.translate(low))
    assert "(global const float16*)a" in kernel and "(float16)(a[" not in kernel  # vector reads, no gather
    _agrees(program, low, sizes)


@pytest.mark.parametrize("name", ["atax", "atax_inline"])
def test_atax_vectorises_its_row_products_and_its_column_map(name):
    sizes = {"M": 64, "N": 128}
    program = _fixed(BY_NAME[name].program, sizes)
    low, derivation = _lowered(program)
    text = derivation.to_text()
    assert text.count("reduce_vectorize_map") == 1 and text.count("vectorize_columns") == 1
    assert "as_vector 16 row" in str(low)
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


@pytest.mark.parametrize("n, remainder", [(128, 0), (100, 4), (66, 2), (129, 1), (1001, 9)])
def test_rows_are_read_sixteen_at_once_with_the_remainder_folded_after(n, remainder):
    assert D.MIN_VECTOR_REDUCTION == 64 and D.REDUCTION_WIDTH == 16
    sizes = {"M": 8, "N": n}
    program = _fixed(BY_NAME["gemv"].program, sizes)
    low, derivation = _lowered(program)
    text = str(derivation)
    assert "reduce_vectorize_map(w=16)" in text and "as_vector 16" in str(low)
    assert ("reduce_take_drop" in text) == (remainder > 0)
    if remainder:
        assert f"drop {n - remainder} x" in str(low)
    _agrees(program, low, sizes)


def test_short_rows_stay_scalar():
    program = _fixed(BY_NAME["gemv"].program, {"M": 8, "N": 48})
    low, _ = _lowered(program)
    assert "as_vector" not in str(low)


@pytest.mark.parametrize("name", ["gemv", "gesummv"])
def test_symbolic_lengths_without_facts_are_vectorised_with_a_symbolic_remainder(name):
    program = fl.infer(BY_NAME[name].program)
    low, derivation = _lowered(program)
    text = str(derivation)
    assert text.count("reduce_vectorize_map(w=16)") == text.count("reduce_take_drop") == {"gemv": 1, "gesummv": 2}[name]
    assert "take (16 * (N // 16))" in str(low) and "drop (16 * (N // 16))" in str(low)
    sizes = {"M": 5, "N": 75} if name == "gemv" else {"N": 75}
    _agrees(program, low, sizes)
    _agrees(program, low, {**sizes, "N": 7})  # no whole vector: everything in the remainder


def test_a_symbolic_length_with_a_fact_is_vectorised_without_a_remainder_where_the_fact_gives_it():
    """As the explorer derives its size-generic kernels: the sizes as variables with facts."""
    for multiple, remainder in ((16, False), (32, False), (4, True)):
        rows, cols = fl.nat("M"), fl.nat("N", multiple_of=multiple)
        gemv = fl.fun([fl.array(rows, fl.array(cols, fl.f32)), fl.array(cols, fl.f32)],
                      lambda a, x: fl.map(lambda r: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p),
                                                                                      fl.zip(r, x))), a))
        program = fl.infer(gemv)
        low, derivation = _lowered(program)
        assert "as_vector 16 " in str(low) and ("reduce_take_drop" in str(derivation)) == remainder
        _agrees(program, low, {"M": 5, "N": 3 * multiple})


def test_every_reduction_of_a_work_items_body_is_vectorised_whatever_surrounds_it():
    """Three reductions per item, in arithmetic, in a select's branch, in a let's value, a bare
    row sum (reduce_vectorize) among them; f64 and i32 elements, a max; symbolic sizes."""
    rows, cols = fl.nat("M"), fl.nat("N")
    for t, zero in ((fl.f64, 0.0), (fl.i32, 0)):
        arr = fl.array(rows, fl.array(cols, t))
        prog = fl.fun([arr, arr, fl.array(cols, t)], lambda a, b, x: fl.map(
            lambda p: fl.let(fl.reduce(fl.add, zero, fl.fst(p)), lambda s: fl.select(
                s > fl.reduce(fl.max, -2147483648 if t is fl.i32 else float("-inf"),
                              fl.map(lambda q: fl.fst(q) - fl.snd(q), fl.zip(fl.snd(p), x))),
                s * fl.reduce(fl.add, zero, fl.map(lambda q: fl.fst(q) * fl.snd(q), fl.zip(fl.fst(p), x))),
                s)), fl.zip(a, b)))
        program = fl.infer(prog)
        low, derivation = _lowered(program)
        text = str(derivation)
        assert text.count("reduce_vectorize(w=16)") == 1 and text.count("reduce_vectorize_map(w=16)") == 2
        for sizes in ({"M": 3, "N": 70}, {"M": 4, "N": 64}, {"M": 2, "N": 5}):
            _agrees(program, low, sizes)
        fixed = _fixed(prog, {"M": 3, "N": 96})
        low, derivation = _lowered(fixed)
        assert str(derivation).count("(w=16)") == 3 and "reduce_take_drop" not in str(derivation)
        _agrees(fixed, low, {"M": 3, "N": 96})


def test_a_program_level_reduction_is_left_to_the_reductions_phase_which_reads_its_chunks_as_vectors():
    xs, ys = fl.array(fl.nat("N"), fl.f32), fl.array(fl.nat("N"), fl.f32)
    dot = fl.fun([xs, ys], lambda a, b: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(a, b))))
    program = _fixed(dot, {"N": 4096})
    assert list(D.vector_reduction_sites(_body(program))) == []
    low, derivation = _lowered(program)
    # the first stage's chunks (one per work-item), not the whole reduction, accumulate in vectors
    assert derivation.to_text().count("reduce_vectorize_map") == 1
    assert "(to_global (map_global 0 (fun(x) => let (reduce_seq (fun(a, x) =>" in str(low) and "vec[f32, 16]" in str(low)
    assert f"split {D.first_chunk(as_nat(4096))} " in str(low)
    _agrees(program, low, {})


def test_rows_of_a_let_bound_computed_array_are_contiguous():
    """A value a `let` computes is stored in order: its rows are read as vectors."""
    a = fl.array(M, fl.array(N, fl.f32))
    prog = fl.fun([a], lambda m: fl.let(fl.map(lambda r: fl.map(lambda v: v * 2.0, r), m),
                                         lambda t: fl.map(lambda r: fl.reduce(fl.add, 0.0, fl.map(lambda v: v + 1.0, r)), t)))
    sizes = {"M": 4, "N": 64}
    program = _fixed(prog, sizes)
    assert len(list(D.vector_reduction_sites(_body(program)))) == 1
    low, _ = _lowered(program)
    assert "as_vector 16" in str(low)
    _agrees(program, low, sizes)


def test_the_rule_refuses_what_is_not_lane_wise_or_not_a_monoid():
    rule = RULES["reduce_vectorize_map"]
    a = fl.array(fl.nat("N", multiple_of=8), fl.f32)
    ok = fl.infer(fl.fun([a, a], lambda x, y: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p) + 1.0,
                                                                             fl.zip(x, y)))))
    sine = fl.infer(fl.fun([a], lambda x: fl.reduce(fl.add, 0.0, fl.map(lambda v: fl.select(v > 0.0, v, 0.0), x))))
    start = fl.infer(fl.fun([a], lambda x: fl.reduce(fl.add, 1.0, fl.map(lambda v: v * v, x))))
    body = _body
    assert rule.strategy(w=8)(body(ok)).ok
    assert not rule.strategy(w=16)(body(ok)).ok  # 16 does not divide a multiple of 8
    assert "lane-wise" in rule.strategy(w=8)(body(sine)).reason
    assert "neutral" in rule.strategy(w=8)(body(start)).reason
    minus = fl.infer(fl.fun([a], lambda x: fl.reduce(lambda p, q: fl.pair(fl.fst(p) + fl.fst(q), fl.snd(p) - fl.snd(q)),
                                                     fl.pair(0.0, 0.0), fl.map(lambda v: fl.pair(v, v), x))))
    assert "no lane-wise vector form" in rule.strategy(w=8)(body(minus)).reason  # a component is not a monoid
    mixed = fl.infer(fl.fun([a, fl.array(fl.nat("N", multiple_of=8), fl.f64)], lambda x, y: fl.reduce(
        fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.cast(fl.f32, fl.snd(p)), fl.zip(x, y)))))
    assert "type" in rule.strategy(w=8)(body(mixed)).reason  # lanes of one element type only


def test_mri_q_accumulates_its_pair_of_sums_in_vectors_with_vector_sin_and_cos():
    """A tuple operator (component-wise sums), four arrays in nested zips, the math built-ins
    lane-wise: PoCL's vector sin and cos instead of one call per element."""
    sizes = {"K": 64, "N": 40}
    program = _fixed(BY_NAME["mri_q"].program, sizes)
    low, derivation = _lowered(program)
    assert str(derivation).count("reduce_vectorize_map(w=16)") == 1
    kernel = cg.emit(dpia.translate(low))
    # cos and sin of one float16 argument, computed once (imperative.common_values), called on
    # its float8 halves (no call passes more than 256 bits: codegen_opencl.opencl's docstring)
    angle = re.search(r"\bcos\((common\d+)\.s01234567\), cos\(\1\.s89abcdef\)", kernel)
    assert angle and f"float16 {angle.group(1)};" in kernel
    assert f"sin({angle.group(1)}.s01234567), sin({angle.group(1)}.s89abcdef)" in kernel
    assert "(global const float16*)phi" in kernel
    # the pair of vector accumulators: two float16 variables, not arrays of floats read by vload16
    assert re.search(r"float16 (acc\d+)_0; float16 \1_1;", kernel) and "vload16(0, acc" not in kernel
    _agrees(program, low, sizes)
    symbolic = fl.infer(BY_NAME["mri_q"].program)  # K without a fact: 16 lanes and a remainder
    low, derivation = _lowered(symbolic)
    assert "reduce_vectorize_map(w=16)" in str(derivation) and "reduce_take_drop" in str(derivation)
    for sizes in ({"K": 70, "N": 9}, {"K": 5, "N": 3}):
        _agrees(symbolic, low, sizes)


def test_math_built_ins_and_three_zipped_arrays_are_lane_wise_in_f64_and_f32():
    n = fl.nat("N")
    for t in (fl.f32, fl.f64):
        arr = fl.array(fl.nat("M"), fl.array(n, t))
        prog = fl.fun([arr, fl.array(n, t), fl.array(n, t)], lambda a, x, y: fl.map(lambda r: fl.reduce(
            fl.max, float("-inf"), fl.map(lambda q: fl.sqrt(fl.abs(fl.fst(q))) * fl.exp(-fl.fst(fl.snd(q)))
                                          + fl.snd(fl.snd(q)) / 2.0, fl.zip(r, fl.zip(x, y)))), a))
        program = fl.infer(prog)
        low, derivation = _lowered(program)
        assert "reduce_vectorize_map(w=16)" in str(derivation)
        for sizes in ({"M": 3, "N": 67}, {"M": 2, "N": 64}):
            _agrees(program, low, sizes)


@pytest.mark.parametrize("name, sizes", [("gemv_t", {"M": 1024, "N": 32}), ("gemv_t_columns", {"M": 1024, "N": 48}),
                                         ("atax", {"M": 1024, "N": 32})])
def test_long_strided_column_reductions_are_computed_in_chunks_of_rows_first(name, sizes):
    """column_stages (map_reduce_stages): chunk k of every column group's reduction in one
    launch over column groups x chunks, then each group's partial results."""
    program = _fixed(BY_NAME[name].program, sizes)
    low, derivation = _lowered(program)
    text = str(derivation)
    assert text.count(f"map_reduce_stages(r={D.STAGE_ROWS})") == 1 and "vectorize_columns(w=16)" in text
    kernel = cg.emit(dpia.translate(low))
    assert "get_global_id(1)" in kernel  # chunks x column groups
    _agrees(program, low, sizes)


def test_rows_short_columns_and_symbolic_lengths_are_not_staged():
    for name, sizes in (("gemv", {"M": 64, "N": 2048}), ("gemv_t", {"M": 512, "N": 32})):
        low, derivation = _lowered(_fixed(BY_NAME[name].program, sizes))
        assert "map_reduce_stages" not in str(derivation)
    low, derivation = _lowered(fl.infer(BY_NAME["gemv_t"].program))
    assert "map_reduce_stages" not in str(derivation)


def test_scalar_columns_that_do_not_vectorise_are_staged_too():
    """A column map vector_columns leaves alone (sin is not lane-wise in _lift; 12 columns: no
    width of 16) still reads chunk k of every column together; f64, max."""
    a = fl.array(fl.nat("M"), fl.array(fl.nat("N"), fl.f64))
    prog = fl.fun([a], lambda m: fl.map(lambda c: fl.reduce(fl.max, float("-inf"), fl.map(lambda v: fl.sin(v), c)),
                                        fl.transpose(m)))
    sizes = {"M": 1280, "N": 12}
    program = _fixed(prog, sizes)
    low, derivation = _lowered(program)
    assert "map_reduce_stages(r=256)" in str(derivation) and "vectorize_columns" not in str(derivation)
    _agrees(program, low, sizes)
