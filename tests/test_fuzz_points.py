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
