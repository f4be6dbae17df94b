"""A map_global of constant count in a kernel without work-groups is printed as one guarded
iteration per item (the launch plan gives it an item per element: plan.global_items_cap),
which a CPU device vectorises across items; other parallel loops stride by the launch."""

from __future__ import annotations

import numpy as np

import dpia
from codegen_opencl import opencl as cg
from codegen_opencl.plan import MAX_GROUPS, global_items_cap, phases
from codegen_opencl.runtime import launch_plan
from functional.interp import interpret
from functional.syntax import parse


def _source(text: str) -> str:
    return cg.emit(dpia.translate(parse(text)))


def test_a_constant_map_global_is_one_guarded_item_each_and_agrees():
    text = "fun(xs: 1000.f32) => map_global 0 (fun(x) => x * 2.0) xs"
    source = _source(text)
    assert "const int gid1 = get_global_id(0);" in source and "if (gid1 < 1000)" in source, source
    assert "get_global_size" not in source
    program = parse(text)
    x = np.arange(1000, dtype=np.float32)
    np.testing.assert_allclose(dpia.compile(program)(x), interpret(program, x))


def test_the_launch_covers_every_constant_count_the_printer_relies_on():
    program = dpia.translate(parse("fun(xs: 300.20.f32) => map_global 1 (fun(r) => map_global 0 (fun(x) => x) r) xs"))
    glob, local = launch_plan(program.body, {})
    assert glob == (20, 300) and local is None
    glob, local = launch_plan(program.body, {}, local_size=16)
    assert glob[0] >= 20 and glob[0] % 16 == 0  # rounded up: still an item per element


def test_symbolic_and_oversized_loops_keep_striding():
    assert "+= get_global_size(0)" in _source("fun(N: nat, xs: N.f32) => map_global 0 (fun(x) => x * 2.0) xs")
    big = global_items_cap(0) + 1
    assert "+= get_global_size(0)" in _source(f"fun(xs: {big}.f32) => map_global 0 (fun(x) => x * 2.0) xs")


def test_work_group_loops_are_one_group_per_element_in_every_dimension_without_loops_over_groups():
    """plan.one_group_each: a launch has a work-group per element in every dimension (guarded where
    the count is symbolic: a launch has a group where it is 0) where kernels are printed without
    loops over groups (a CPU's); with them (a GPU's), dimensions 1 and 2 get at most max_groups."""
    rows = "join (map_workgroup 0 (fun(r) => map_local 0 (fun(x) => x * 2.0) r) (split 64 xs))"
    exact = _source(f"fun(xs: 256.f32) => {rows}")
    assert "get_num_groups" not in exact and "const int wg1 = get_group_id(0);" in exact and "if (wg1" not in exact
    guarded = _source(f"fun(N: nat{{multiple_of=64}}, xs: N.f32) => {rows}")
    assert "get_num_groups" not in guarded and "if (wg1 < N / 64) {" in guarded, guarded
    planes = ("fun(xs: {n}.64.f32) => map_workgroup 1 (fun(p) => map_workgroup 0 (fun(r) => map_local 0 (fun(x) => "
              "x * 2.0) r) (split 32 p)) xs")
    assert "get_num_groups" not in _source(planes.format(n=MAX_GROUPS))
    many = dpia.translate(parse(planes.format(n=MAX_GROUPS + 1)))
    assert "get_num_groups" not in cg.emit(many)
    (phase,) = [ph for ph in phases(many) if ph.parallel]
    assert launch_plan(phase.body, {}, group_loops=False)[0] == (2 * 32, MAX_GROUPS + 1)
    assert "wg1 += get_num_groups(1)" in cg.emit(many, group_loops=True)
    assert launch_plan(phase.body, {}, max_groups=MAX_GROUPS, group_loops=True)[0] == (2 * 32, MAX_GROUPS)
    # a GPU's kernels loop over groups all the same (runtime.group_loops_for: its compiler schedules SGEMM
    # better so), and may then be launched with other counts of groups
    program = dpia.translate(parse(f"fun(xs: 256.f32) => {rows}"))
    assert "wg1 += get_num_groups(0)" in cg.emit(program, group_loops=True)
    (phase,) = [ph for ph in phases(program) if ph.parallel]
    assert launch_plan(phase.body, {}, groups=2, group_loops=True)[0] == (2 * 64,)
