"""Barriers between the stages of a work-group that communicate through memory: local memory,
and global temporaries too (a stage of map_local writes them, the next reads another item's
values)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dpia
from functional.interp import interpret
from functional.syntax import parse

# A tree reduction per work-group whose later stages were stored in global memory: before the
# fix, only local memory was ordered, and the sum of 1024 values came out wrong (136 for 527).
TREE_THROUGH_GLOBAL = (
    "fun(N: nat{multiple_of=512}, xs: N.f32) => reduce_seq (+) 0.0 (to_global (map_workgroup 0 (fun(x) => "
    "reduce_seq (+) 0.0 (iterate 3 (fun(l: nat, ys) => to_global (map_local 0 (fun(x) => reduce_seq (+) 0.0 x) "
    "(split 2 (reorder_stride l ys)))) (to_local (map_local 0 (fun(x) => reduce_seq (+) 0.0 x) "
    "(split 64 (reorder_stride 8 x)))))) (split 512 xs)))")


def test_global_temporaries_shared_by_a_group_are_ordered_by_barriers():
    program = parse(TREE_THROUGH_GLOBAL)
    kernel = dpia.compile(program)
    for n in (512, 1024, 4096):
        x = np.random.default_rng(n).random(n, dtype=np.float32)
        np.testing.assert_allclose(kernel(x), interpret(program, x), rtol=1e-5)
    source = kernel.source
    # one barrier with a global fence between each pair of the tree's stages in global memory
    assert source.count("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)") >= 3


# A row per group: the products and the pairs' sums in global memory, then each item sums the
# pairs in a sequential loop.  The loop reads what the stage before it wrote: one barrier before
# the loop orders it (a barrier in every iteration did too, N / 2 times).
SUM_OF_PAIRS = (
    "fun(M: nat, N: nat{multiple_of=2}, mat: M.N.f32, xs: N.f32) => map_workgroup 0 (fun(row) => "
    "reduce_seq (+) 0.0 (to_global (map_local 0 (fun(c) => reduce_seq (+) 0.0 c) (split 2 (to_global "
    "(map_local 0 (fun(p) => fst p * snd p) (zip row xs))))))) mat")


def test_a_loop_over_what_the_stage_before_wrote_waits_once_before_it():
    program = parse(SUM_OF_PAIRS)
    kernel = dpia.compile(program)
    rng = np.random.default_rng(5)
    for m, n in ((3, 8), (4, 66)):
        a, x = rng.random((m, n), dtype=np.float32), rng.random(n, dtype=np.float32)
        np.testing.assert_allclose(kernel(a, x), interpret(program, a, x), rtol=1e-5)
    source = kernel.source
    loop = re.search(r"for \(int (i\d+) = 0; \1 < N / 2; \1 \+= 1\) \{", source)
    assert source[:loop.start()].rstrip().endswith("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"), source
    assert "barrier" not in source[loop.end():].split("}", 1)[0], source


# The same at constant sizes, its products and pair sums in global temporaries.  The iterations
# of the work-group loop are a parallel map's: each has its own slots of the temporaries, so no
# barrier ends an iteration.  The barrier that did (for the global temporaries) was not needed,
# and with it PoCL 3.0 computed NaN and 1e27 (Oclgrind computed the right sums).
SUM_OF_PAIRS_AT_SIZES = (
    "fun(mat: 64.64.f32, xs: 64.f32) => map_workgroup 0 (fun(row) => reduce_seq (+) 0.0 ({pairs} (map_local 0 "
    "(fun(c) => reduce_seq (+) 0.0 c) (split 16 ({products} (map_local 0 (fun(p) => fst p * snd p) (zip row xs))))))) "
    "mat")


def test_a_work_group_loop_ends_an_iteration_with_a_barrier_only_where_the_next_reuses_local_memory():
    rng = np.random.default_rng(7)
    a, x = rng.random((64, 64), dtype=np.float32), rng.random(64, dtype=np.float32)
    for pairs, products, ends_with_barrier in (("to_global", "to_global", False), ("to_local", "to_global", True),
                                               ("to_global", "to_local", False), ("to_local", "to_local", True)):
        program = parse(SUM_OF_PAIRS_AT_SIZES.format(pairs=pairs, products=products))
        kernel = dpia.compile(program)
        for _ in range(3):  # PoCL's wrong sums varied from run to run
            np.testing.assert_allclose(kernel(a, x), interpret(program, a, x), rtol=1e-5)
        loop_end = kernel.source.rstrip().rsplit("}", 2)[0].rstrip()  # the loop body's last statement
        assert loop_end.endswith("}") or loop_end.endswith(";"), kernel.source
        assert loop_end.endswith("barrier(CLK_LOCAL_MEM_FENCE);") == ends_with_barrier, kernel.source


# Fuzz seed 37323: a tree per group whose first stage is one sequential loop the whole group
# runs (map_seq_unroll), its results written to local memory by one item (local id 0).  A
# barrier went before each of those writes (two writes of one local array), and PoCL 3.0 then
# computed 0 for 1/3: a value a loop computed, kept across a barrier, in a loop over groups,
# was lost (Oclgrind computed 1/3).  One item's writes are in its own order: no barrier.
ONE_ITEM_STAGE = (
    "fun(xs: 64.f32) => map_workgroup 0 (fun(x) => map_local 0 (fun(x) => x) (iterate 3 (fun(l: nat, ys) => "
    "to_local (map_local 0 (fun(x) => reduce_seq min f32(inf) x) (split 2 (reorder_stride l ys)))) (to_local "
    "({seq} (fun(x) => reduce_seq min f32(inf) x) (split 4 (reorder_stride 8 x)))))) (split 32 xs)")


def test_one_items_writes_of_local_memory_are_not_separated_by_barriers():
    from imperative.passes import ITEMS, ONE_ITEM, _conflict
    from functional.types import AddressSpace

    for loop in ("map_seq_unroll", "map_seq"):
        program = parse(ONE_ITEM_STAGE.format(seq=loop))
        kernel = dpia.compile(program)
        x = np.full(64, 1 / 3, np.float32)
        x[[5, 40]] = 0.25
        for _ in range(3):
            np.testing.assert_array_equal(kernel(x), interpret(program, x))
        # the first stage, up to the tree's first map_local stage: one barrier, after its last write
        first_stage = kernel.source.split("get_group_id(0);", 1)[1].split("for (int lid")[0].rstrip()
        assert first_stage.count("barrier") == 1 and first_stage.endswith("barrier(CLK_LOCAL_MEM_FENCE);"), kernel.source
    # two writes of one local array: in order if one item makes both, a race if items make either
    local, tmp = AddressSpace.LOCAL, "tmp1"
    for first, second, conflict in ((ONE_ITEM, ONE_ITEM, False), (ONE_ITEM, ITEMS, True), (ITEMS, ITEMS, True)):
        pending = (frozenset(), frozenset({(local, tmp, first)}))
        assert bool(_conflict((frozenset(), frozenset({(local, tmp, second)})), pending)) == conflict
    # a read of what one item wrote waits for it all the same
    assert _conflict((frozenset({(local, tmp)}), frozenset()), (frozenset(), frozenset({(local, tmp, ONE_ITEM)})))


# Fuzz seed 37981: a group's sum of its rows made in a sequential loop whose steps hold barriers (a
# group-level reduce_seq of map_local steps) after a tree's stage.  Printed in a loop over groups
# (`for (wg = get_group_id(0); wg < 32; wg += get_num_groups(0))`), PoCL 3.0 computed zeros
# (Oclgrind the sums; the same kernel with one group per iteration and no loop computed them on
# PoCL too).  A map_workgroup on dimension 0 gets a group per element (plan.one_group_each),
# and is printed without the loop: guarded where the launch may have more groups.
ROWS_SUMMED_IN_STEPS = (
    "fun(xs: 32.f32, ys: 8.f32) => map_workgroup 0 (fun(x) => map_local 0 (fun(v) => v * v) (to_global (reduce_seq "
    "(fun(a, b) => map_local 0 (fun(p) => fst p + snd p) (zip a b)) (map_local 0 (fun(i) => 0.0) (generate 3 (fun(i) => "
    "0.0))) (to_local (map_local 0 (fun(c) => reduce_seq (fun(a, b) => map_seq_unroll (fun(p) => fst p + snd p) (zip a "
    "b)) (map_seq (fun(i) => 0.0) (generate 3 (fun(i) => 0.0))) c) (split 2 (to_local (map_local 0 (fun(y) => map_seq "
    "(fun(i) => abs x + y) (generate 3 (fun(i) => 0.0))) ys)))))))) xs")


def test_a_work_group_loop_on_dimension_0_is_one_group_per_element():
    from codegen_opencl.runtime import Kernel, RuntimeError_

    program = parse(ROWS_SUMMED_IN_STEPS)
    kernel = dpia.compile(program)
    rng = np.random.default_rng(1)
    x, y = rng.random(32, dtype=np.float32), rng.random(8, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_allclose(kernel(x, y), interpret(program, x, y), rtol=1e-6)
    assert "get_num_groups" not in kernel.source and "const int wg1 = get_group_id(0);" in kernel.source, kernel.source
    assert "if (wg1 < 32)" not in kernel.source  # the launch has exactly 32 groups
    # other counts of groups would leave elements undone or run past the last: refused
    for groups in (16, 40):
        with pytest.raises(RuntimeError_, match=f"one work-group per element: 32 groups; {groups} were asked for"):
            Kernel(kernel.kernel.program, groups=groups)(x, y)
    np.testing.assert_allclose(Kernel(kernel.kernel.program, groups=32)(x, y), interpret(program, x, y), rtol=1e-6)
    # a symbolic count: a group per element all the same, guarded (a launch has a group where the count is 0)
    inner = "reduce_seq (fun(a, b) => map_seq_unroll (fun(p) => fst p + snd p) (zip a b)) (map_seq (fun(i) => 0.0) (generate 3 (fun(i) => 0.0))) c"
    symbolic = parse(ROWS_SUMMED_IN_STEPS.replace("xs: 32.f32", "N: nat, xs: N.f32")
                     .replace(inner, f"map_seq (fun(v) => v) ({inner})"))
    symbolic_kernel = Kernel(dpia.translate(symbolic))  # the sizes left symbolic (dpia.compile fixes them per call)
    np.testing.assert_allclose(symbolic_kernel(x, y), interpret(program, x, y), rtol=1e-6)
    assert "get_num_groups" not in symbolic_kernel.source and "if (wg1 < N) {" in symbolic_kernel.source, symbolic_kernel.source


def test_a_work_group_loop_on_dimension_1_of_a_symbolic_count_is_one_group_per_element_on_a_cpu():
    """Seed 37981's rows in a map_workgroup on dimension 1 over N of them (a count known only at launch):
    printed without a loop over groups where the device's kernels have none (a CPU's: PoCL 3.0 lost
    values in such loops), guarded, the launch giving a group per element whatever N."""
    from codegen_opencl.runtime import Kernel, group_loops_for, launch_plan

    rows = ROWS_SUMMED_IN_STEPS.replace("fun(xs: 32.f32, ys: 8.f32) => map_workgroup 0",
                                        "fun(N: nat, xss: N.4.f32, ys: 8.f32) => map_workgroup 1 (fun(xs) => "
                                        "map_workgroup 0")[:-len(" xs")] + " xs) xss"
    inner = ("reduce_seq (fun(a, b) => map_seq_unroll (fun(p) => fst p + snd p) (zip a b)) (map_seq (fun(i) => 0.0) "
             "(generate 3 (fun(i) => 0.0))) c")
    program = parse(rows.replace(inner, f"map_seq (fun(v) => v) ({inner})"))  # translated as it is: no lowering
    kernel = Kernel(dpia.translate(program))
    assert not group_loops_for(kernel.session.device)
    assert "get_num_groups" not in kernel.source and "if (wg1 < N) {" in kernel.source, kernel.source
    rng = np.random.default_rng(2)
    for n in (3, 5000):  # more rows than plan.MAX_GROUPS: every one still a group of its own
        x, y = rng.random((n, 4), dtype=np.float32), rng.random(8, dtype=np.float32)
        np.testing.assert_allclose(kernel(x, y), interpret(program, x, y), rtol=1e-6)
    body = kernel.phases[0].body
    assert launch_plan(body, {"N": 5000}, group_loops=False)[0][1] == 5000
    # with loops over groups (a GPU's kernels), a launch gives dimension 1 at most max_groups
    assert launch_plan(body, {"N": 5000}, max_groups=4096, group_loops=True)[0][1] == 4096
