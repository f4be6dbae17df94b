"""Points of exploration spaces the space fuzzer (`python -m dpia.fuzz --points K`) found
wrong, refused by the device compiler or crashing, each as a small program and the point:
the space offers it, and derived, compiled and run it computes what the interpreter does."""

from __future__ import annotations

import pytest

import functional as fl
from dpia import fuzz
from dpia.explore.algorithmic import Heuristics
from dpia.explore.space import DeviceLimits, Point, Space
from dpia.programs import random_inputs

# the fuzzer's limits on a CPU device: any occupancy, the hard limits of PoCL
LIMITS = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=1, private_values=256)


def _computes_the_program(text: str, sizes: dict, family: str, params: dict) -> None:
    program = fl.infer(fl.parse(text))
    space = Space.build(program, sizes, LIMITS, heuristics=Heuristics(length=fuzz.SPACE_MOVES))
    point = Point(family, params)
    assert point in space.feasible_points, f"the space no longer offers {point}"
    inputs = random_inputs(program, sizes, 0)
    got = fuzz.compile_point(space, point, 0)(*inputs)
    assert fuzz.compare(got, fl.interpret(program, *inputs), 0.0) <= 1.0, str(point)


def test_a_cast_of_a_vector_converts_its_lanes():
    """Seed 0: vectorize a map of casts, `(double)(int2)(...)` did not build (OpenCL casts
    no vector to another type: `convert_double2`)."""
    _computes_the_program("fun(xs: 8.i32) => map (fun(x) => cast f64 x) xs", {}, "vectorize(w=s0)@root; "
                          "lower_map_global(d=0)@1", {"s0": 2, "launch": 0})


VECTORISED = "vectorize(w=s0)@root; lower_map_global(d=0)@1"


@pytest.mark.parametrize("text", [
    # seed 287: a cast inside the function printed `(float)int8` (the result alone was a vector)
    "fun(xs: 8.i32) => map (fun(x) => cast f32 x + f32(0.25)) xs",
    # seed 114: a constant function's result, a literal at a vector type, crashed the printer
    "fun(xs: 8.f32) => map (fun(x) => i32(3)) xs",
    # seeds 111 and 62: a let in the function (the default lowering's fusion binds an element
    # read twice) kept its value in a scalar temporary
    "fun(xs: 8.f32) => map (fun(x) => let (select (x > f32(1.0)) x f32(3.0)) (fun(v) => v - v * v)) xs",
    # an int's abs is unsigned in OpenCL: `(int8)abs(x)` does not build, convert_int8 does
    "fun(xs: 8.i32) => map (fun(x) => abs x - i32(4)) xs",
])
def test_a_vectorised_function_computes_every_lane(text):
    _computes_the_program(text, {}, VECTORISED, {"s0": 4, "launch": 0})


def _vectorised_at_root(text: str) -> list[str]:
    space = Space.build(fl.infer(fl.parse(text)), {}, LIMITS, heuristics=Heuristics(length=1))
    return [f.name for f in space.families if f.name.startswith("vectorize(w=s0)@root")]


def test_a_function_with_a_loop_is_not_vectorised():
    """Seeds 137 and 140: a reduction in the vectorised function folded vectors into a
    scalar accumulator (did not build); OpenCL applies scalar code lane-wise, not loops."""
    assert not _vectorised_at_root(
        "fun(xs: 8.f32, ys: 4.f32) => map (fun(x) => reduce (+) f32(0.0) (map (fun(y) => x * y) ys)) xs")


def test_a_select_comparing_values_of_another_size_is_not_vectorised():
    """Seed 164: `select (f64(-1.0) >= cast f64 x) x x` on float4 lanes had a long4
    condition, which OpenCL's vector select refuses (its lanes have the values' size)."""
    assert not _vectorised_at_root("fun(xs: 8.f32) => map (fun(x) => select (f64(-1.0) >= cast f64 x) x "
                                   "(x * f32(2.0))) xs")
    assert _vectorised_at_root("fun(xs: 8.f32) => map (fun(x) => select (f32(-1.0) >= x) x (x * f32(2.0))) xs")


def test_a_split_of_a_length_over_a_size_variable_declares_the_fact_it_needs():
    """Seed 198 (32 of 2,400 points): splitting N / 8 by 4 needs N a multiple of 32, but the
    point re-declared N a multiple of gcd(N, 4) only, so no point splitting it derived."""
    text = "fun(N: nat{multiple_of=8}, xs: (N / 8).f32) => map (fun(x) => x * f32(2.0)) xs"
    family, params = "split_join(n=s0)@root; lower_map_global(d=0)@1", {"s0": 4, "launch": 0}
    space = Space.build(fl.infer(fl.parse(text)), {"N": 64}, LIMITS, heuristics=Heuristics(length=1))
    assert space.facts(Point(family, params)) == {"N": 32}
    _computes_the_program(text, {"N": 64}, family, params)
