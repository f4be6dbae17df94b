"""Programs written with indices (generate, at) are the data-flow programs they compute:
rules.indexing's generate_as_map gives the default lowering and the exploration the maps,
zips and transposes every other rule reads, so a matrix product written `a[i][k] * b[k][j]`
lowers and explores as the one written with maps over rows and columns."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import dpia
import functional as fl
from dpia.explore.stages import prepared_body
from dpia.programs import TOLERANCE, random_inputs, relative_error
from functional.derivation import derive
from functional.schedules import default_schedule

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from index_written import PAIRS, SAME_MEANING  # noqa: E402
from suite import M, N, arr  # noqa: E402

f32 = fl.f32
SIZES = {"matrix_product": dict(M=8, N=16, K=12), "matrix_vector_product": dict(M=24, N=40),
         "transposed_matrix_vector_product": dict(M=24, N=40), "transpose": dict(M=6, N=10), "dot": dict(N=3000),
         "clamped_3_point_stencil": dict(N=1000), "valid_3_point_stencil": dict(N=1000),
         "clamped_5_point_stencil_2d": dict(M=19, N=23)}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_exploration_starts_from_the_same_program_for_both_writings(name):
    (indexed, data_flow), sizes = PAIRS[name], SIZES[name]
    assert prepared_body(indexed, sizes) == prepared_body(data_flow, sizes)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_default_lowering_of_both_writings_is_one_low_level_program(name):
    (indexed, data_flow), sizes = PAIRS[name], SIZES[name]
    at_sizes = [dpia.programs.fix_sizes(p, sizes) for p in (indexed, data_flow)]
    low_indexed, derivation = derive(at_sizes[0], default_schedule(at_sizes[0]))
    low_data_flow, _ = derive(at_sizes[1], default_schedule(at_sizes[1]))
    assert derivation.steps[0].rule == "generate_as_map"
    assert low_indexed == low_data_flow


@pytest.mark.parametrize("name", sorted(PAIRS) + sorted(SAME_MEANING))
def test_both_writings_compile_to_kernels_that_compute_the_same(name):
    indexed, data_flow = {**PAIRS, **SAME_MEANING}[name]
    inputs = random_inputs(fl.infer(indexed), SIZES[name], seed=3)
    want = fl.interpret(data_flow, *inputs)
    for program in (indexed, data_flow):
        assert relative_error(dpia.compile(program, db=False)(*inputs), want) <= TOLERANCE


# Index uses the rule keeps: the index as a value, reads of a longer array, a computed index,
# the same array at the index and at a literal, a read three levels deep at invariant indices.
KEPT = {
    "index_as_a_value": fl.fun([arr(9)], lambda x: fl.generate(9, lambda i: x[i] * fl.cast(f32, i))),
    "a_longer_array": fl.fun([arr(12), arr(9)], lambda x, y: fl.generate(9, lambda i: x[i] - y[i])),
    "clamped_neighbours": fl.fun([arr(N)], lambda x: fl.generate(N, lambda i: (
        x[fl.max(i - 1, 0)] + x[i] + x[fl.min(i + 1, fl.cast(fl.i32, fl.nat_value(N)) - 1)]) * 0.25)),
    "clamped_2d_stencil": fl.fun([arr(M, N)], lambda g: fl.generate(M, lambda i: fl.generate(N, lambda j: 0.2 * (
        g[i][j] + g[fl.max(i - 1, 0)][j] + g[fl.min(i + 1, fl.cast(fl.i32, fl.nat_value(M)) - 1)][j]
        + g[i][fl.max(j - 1, 0)] + g[i][fl.clamp(j + 1, 0, fl.nat_value(N) - 1)])))),
    "stencil_down_columns": fl.fun([arr(M, N)], lambda g: fl.generate(N, lambda j: fl.generate(
        M, lambda i: g[fl.max(i - 2, 0)][j] - g[i][j]))),
    "an_offset_out_of_range_is_left_as_written": fl.fun([arr(N)], lambda x: fl.generate(N, lambda i: x[
        fl.min(i + 1, fl.nat_value(N) - 2)] + x[i])),
    "at_the_index_and_at_zero": fl.fun([arr(7)], lambda x: fl.generate(7, lambda i: x[i] * x[0])),
    "deep_invariant_indices": fl.fun([arr(5, 3, 4)], lambda c: fl.generate(3, lambda e1: fl.generate(
        4, lambda e2: fl.reduce(fl.max, -1e30, fl.generate(5, lambda i: c[i][e1][e2]))))),
    "reduction_of_index_written_arrays": fl.fun([arr(3000, 3)], lambda xss: fl.reduce(
        lambda a, b: fl.generate(3, lambda k: a[k] + b[k]), fl.generate(3, lambda k: 0.0), xss)),
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_index_written_programs_compile_and_agree_with_the_interpreter(name):
    program = fl.infer(KEPT[name])
    sizes = {v.name: 37 for v in dpia.programs.size_vars(program)}
    inputs = random_inputs(program, sizes, seed=5)
    kernel = dpia.compile(program, db=False)
    got = kernel(*inputs)
    assert "generate_as_map" in kernel.variant.derivation
    assert relative_error(got, fl.interpret(program, *inputs)) <= TOLERANCE, kernel.source


def test_an_index_written_reduction_of_arrays_keeps_its_parallel_stages():
    """Its operator becomes a map over a zip, which functional.algebra proves associative as it
    does the generate: the reduction is split, not left sequential."""
    program = fl.infer(KEPT["reduction_of_index_written_arrays"])
    _, derivation = derive(program, default_schedule(program))
    assert any(step.rule == "reduce_split" or step.rule.startswith("reduce_split") for step in derivation.steps), \
        [s.rule for s in derivation.steps]


@pytest.mark.parametrize("n", [7, 64])
def test_an_index_computed_from_the_index_and_sizes_is_read_directly_where_provably_in_range(n):
    """`y[N - 1 - i]` (a reversal) and `y[min(i + 2, N - 1)]` are sizes of the generate's index
    (functional.infer.index_as_nat): read in the consumer's loop, no stored copy and no clamp;
    `y[(3 * i) % N]` is computed (% is not a size operation here) and is clamped."""
    nv = fl.nat_value(N)
    programs = {
        "reversed": fl.fun([arr(N), arr(N)], lambda x, y: fl.map(
            lambda p: fl.fst(p) + fl.snd(p), fl.zip(x, fl.generate(N, lambda i: y[nv - 1 - i])))),
        "clamped by min": fl.fun([arr(N)], lambda y: fl.generate(N, lambda i: y[fl.min(i + 2, nv - 1)] * 2.0)),
        "computed": fl.fun([arr(N)], lambda y: fl.generate(N, lambda i: y[fl.rem(i * 3, nv)] * 2.0)),
    }
    for name, program in programs.items():
        program = fl.infer(program)
        inputs = random_inputs(program, {"N": n}, seed=3)
        kernel = dpia.compile(program, db=False)
        got = kernel(*inputs)
        assert relative_error(got, fl.interpret(program, *inputs)) <= TOLERANCE, (name, kernel.source)
        assert (name == "computed") == ("max(min(" in kernel.source), (name, kernel.source)
        if name == "reversed":  # read where the sum reads it: one kernel, no stored copy
            assert kernel.source.count("kernel void") == 1, kernel.source
