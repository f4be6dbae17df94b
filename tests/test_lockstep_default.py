"""The default lowering for a device whose work-items run in lockstep (functional.default_lowering
Target.lockstep_items, what dpia.variants tells it of a GPU): a reduction with a commutative
operator reads its data interleaved at every stage, neighbouring work-items reading neighbouring
elements, where a CPU's default gives each work-item a contiguous chunk (read as vectors).  On
a GPU the contiguous chunks cost one memory transaction per lane: mean and variance of 2^26
floats ran 0.13x torch.compile on an H100 (session 23).

The interleaved kernels are checked here on PoCL against NumPy (at sizes the Oclgrind harness
checks too) and by the static analysis the exploration uses for the same question
(dpia.explore.resources.strided_share)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest

import dpia
import functional as fl
from dpia.explore.resources import strided_share
from dpia.explore.space import DeviceLimits
from dpia.programs import fix_sizes, relative_error
from functional.default_lowering import INTERLEAVED_CHUNK, Target, interleaved_chunk
from functional.derivation import derive
from functional.nat import Nat
from functional.schedules import default_schedule

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import suite  # noqa: E402

LOCKSTEP = Target(lockstep_items=True)

# the suite's programs with a program-level reduction of a commutative operator, at sizes where
# it is split into stages and a remainder (5003 = 78 * 64 + 11), small enough for Oclgrind
REDUCING = {"asum": dict(n=5003), "dot": dict(n=5003), "mean_variance": dict(n=5003), "asum_fold": dict(n=5003),
            "mean_variance_one_pass": dict(n=5003), "srad": dict(h=37, w=41)}


def _lowered(program, sizes: dict, target: Target):
    """The default lowering at the suite entry's sizes (`sizes`: its make_inputs parameters)."""
    args = suite.inputs(_entry_of(program), sizes, seed=0)
    fixed = fl.infer(fix_sizes(program, dpia.compile(program).sizes_of(args)))
    return derive(fixed, default_schedule(fixed, target))


def _entry_of(program):
    return next(e for e in suite.BY_NAME.values() if e.program is program)


def test_gpus_are_told_their_items_run_in_lockstep_and_cpus_not():
    gpu = DeviceLimits(1024, 48 * 1024, 132, "GPU")
    cpu = DeviceLimits(4096, 512 * 1024, 2, "CPU")
    from dpia.explore.space import GPU_PRIVATE_ARRAY

    # a GPU's registers also keep larger arrays of an item private (Target.private_limit)
    assert gpu.lowering_target() == attrs.evolve(LOCKSTEP, private_limit=GPU_PRIVATE_ARRAY)
    assert cpu.lowering_target() == Target()


def test_an_interleaved_first_stage_keeps_about_a_million_work_items():
    assert interleaved_chunk(Nat.const(1 << 20)) == INTERLEAVED_CHUNK
    assert interleaved_chunk(Nat.const(1 << 26)) == 64  # 2^20 work-items
    assert interleaved_chunk(Nat.const(1 << 28)) == 256
    assert interleaved_chunk(Nat.const(1 << 34)) == 1024  # at most
    assert interleaved_chunk(Nat.atom(fl.nat("N"))) == INTERLEAVED_CHUNK


@pytest.mark.parametrize("name", sorted(REDUCING))
def test_the_lockstep_default_agrees_with_numpy_on_pocl(name):
    """Stages interleaved (reorder_stride in the derivation, a remainder folded after), the
    result NumPy's at sizes (fixed, as `dpia run` lowers) where two stages and their remainders
    run, small enough for Oclgrind."""
    entry = suite.BY_NAME[name]
    sizes = REDUCING[name]
    low, derivation = _lowered(entry.program, sizes, LOCKSTEP)
    assert derivation.to_text().count("reduce_reorder") >= 2, derivation.to_text()
    args = suite.inputs(entry, sizes, seed=2)
    kernel = dpia.compile(low, name=dpia.kernel_name_for(name))
    err = relative_error(kernel(*args), entry.reference(*args))
    assert err <= entry.tolerance, f"{name} at {sizes}: relative error {err:.2e}\n{kernel.source}"


@pytest.mark.parametrize("name", ["asum", "mean_variance"])
def test_neighbouring_work_items_read_neighbouring_elements_only_when_told(name):
    """The main kernel's strided share of traffic: all of it for a CPU's contiguous chunks,
    none once interleaved."""
    entry = suite.BY_NAME[name]
    sizes = dict(n=1 << 22)
    shares = {}
    for target in (Target(), LOCKSTEP):
        low, _ = _lowered(entry.program, sizes, target)
        shares[target.lockstep_items] = strided_share(dpia.translate(low), {})
    assert shares[False] > 0.9 and shares[True] == 0.0, shares


def test_operators_without_commutativity_keep_their_contiguous_chunks():
    """argmin by (value, index) is associative, not known commutative, and has no neutral
    element: its chunks stay contiguous on any target (an interleaved chunk would combine its
    elements out of order)."""
    entry = suite.BY_NAME["nn"]
    first = _lowered(entry.program, entry.moderate, Target())[1].to_text()
    assert first == _lowered(entry.program, entry.moderate, LOCKSTEP)[1].to_text()
    assert "reduce_reorder" not in first


def test_a_symbolic_length_is_interleaved_with_a_guarded_remainder():
    """A length without a known value: chunks of INTERLEAVED_CHUNK over its whole part, the
    rest folded after; the kernel is compiled at the input's size and agrees with NumPy."""
    entry = suite.BY_NAME["asum"]
    typed = fl.infer(entry.program)
    low, derivation = derive(typed, default_schedule(typed, LOCKSTEP))
    assert "reduce_reorder" in derivation.to_text()
    (x,) = suite.inputs(entry, dict(n=3001), seed=3)
    got = dpia.compile(low, name="asum_symbolic")(x)
    assert relative_error(got, entry.reference(x)) <= entry.tolerance


def test_an_explored_point_is_completed_as_its_devices_default_lowering():
    """What a point's moves leave high level is lowered by the default lowering's completion
    for the space's device: on a GPU, a reduction no move placed is interleaved too (a kernel
    `dpia explore` measures on a GPU is never completed for a CPU)."""
    from dpia.explore.space import Point, Skeleton, Space

    entry = suite.BY_NAME["mean_variance"]
    program = fl.infer(entry.program)
    derivations = {}
    for device_type in ("CPU", "GPU"):
        limits = DeviceLimits(1024, 48 * 1024, 16, device_type)
        space = Space.build(program, dict(N=1 << 20), limits, skeletons=[Skeleton(())])
        point = Point(space.families[0].name, {})
        derivations[device_type] = derive(space.program_for(point), space.strategy(point))[1].to_text()
    assert "reduce_reorder" in derivations["GPU"] and "reduce_reorder" not in derivations["CPU"]


@pytest.mark.parametrize("name, sizes, widths", [("scal", dict(n=4096), (16, 4)),
                                                 ("gemv_t", dict(m=64, n=128), (16, 4))])
def test_a_maps_vectors_are_at_most_16_bytes_per_item_in_lockstep(name, sizes, widths):
    """A map's lanes (vector_maps, vector_columns): the widest width on a CPU, at most
    LOCKSTEP_VECTOR_BYTES per work-item when items run in lockstep (a warp's 128-bit load stays
    one transaction: scal 2^26 0.84x -> 1.14x torch.compile on an H100); the GPU kernel agrees
    with NumPy."""
    entry = suite.BY_NAME[name]
    args = suite.inputs(entry, sizes, seed=4)
    for target, w in zip((Target(), LOCKSTEP), widths):
        low, derivation = _lowered(entry.program, sizes, target)
        assert f'"w": "{w}"' in derivation.to_text(), derivation.to_text()
    got = dpia.compile(low, name=dpia.kernel_name_for(name))(*args)
    assert relative_error(got, entry.reference(*args)) <= entry.tolerance


def test_vector_widths_count_bytes_not_lanes():
    assert Target().vector_widths(fl.f64) == (16, 8, 4, 2)
    assert LOCKSTEP.vector_widths(fl.f32) == (4, 2) and LOCKSTEP.vector_widths(fl.f64) == (2,)


# ---------------------------------------------------------------- rows reduced by work-groups

from functional.default_lowering import MIN_ROW_ITEMS, MIN_WARP_ROW_PER_ITEM, ROW_ITEMS, row_items  # noqa: E402

M, N = fl.nat("M"), fl.nat("N")
ROWS = fl.array(M, fl.array(N, fl.f32))


def _row_program(fn):
    return fl.fun([ROWS], lambda a: fl.map(fn, a))


ROW_FORMS = {  # name -> (program, NumPy reference)
    "row_sums": (_row_program(lambda row: fl.reduce(fl.add, 0.0, row)), lambda a: a.astype(np.float64).sum(1)),
    "row_max": (_row_program(lambda row: fl.reduce(fl.max, fl.literal(-math.inf, fl.f32), row)), lambda a: a.max(1)),
    "softmax_denominators": (  # two trees, the second reading the first's result
        _row_program(lambda row: fl.let(fl.reduce(fl.max, fl.literal(-math.inf, fl.f32), row),
                                        lambda mx: fl.reduce(fl.add, 0.0, fl.map(lambda x: fl.exp(x - mx), row)))),
        lambda a: np.exp(a.astype(np.float64) - a.max(1, keepdims=True)).sum(1)),
    "softmax": (_row_program(lambda row: fl.let(
        fl.reduce(fl.max, fl.literal(-math.inf, fl.f32), row), lambda mx: fl.let(
            fl.map(lambda x: fl.exp(x - mx), row), lambda e: fl.map(lambda v: v / fl.reduce(fl.add, 0.0, e), e)))),
        lambda a: (lambda e: e / e.sum(1, keepdims=True))(np.exp(a.astype(np.float64) - a.max(1, keepdims=True)))),
    "row_sum_of_squares_scaled": (
        _row_program(lambda row: 0.5 * fl.reduce(fl.add, 0.0, fl.map(lambda x: x * x, row)) + 1.0),
        lambda a: 0.5 * (a.astype(np.float64) ** 2).sum(1) + 1.0),
}


def test_a_row_gets_a_warp_to_a_group_of_items_each_folding_eight_or_a_warp_at_least_four():
    assert row_items(1 << 14) == ROW_ITEMS and row_items(2048) == ROW_ITEMS and row_items(1024) == 128
    assert row_items(512) == 64 and row_items(256) == row_items(128) == MIN_ROW_ITEMS == 32 and row_items(1056) == 32
    assert row_items(96) is None and row_items(1000) is None and row_items(64) is None
    # where the warp's tree is shuffles, a warp takes rows of 64 and 96 too (2 and 3 per item)
    assert row_items(64, MIN_WARP_ROW_PER_ITEM) == row_items(96, MIN_WARP_ROW_PER_ITEM) == 32
    assert row_items(32, MIN_WARP_ROW_PER_ITEM) is None


@pytest.mark.parametrize("name, sizes", [("gemv", dict(m=8, n=128)), ("gesummv", dict(n=128)),
                                         ("atax", dict(m=8, n=256)), ("gemv_indexed", dict(m=6, n=512))])
def test_each_rows_reduction_runs_on_a_work_group_with_a_tree_on_a_lockstep_target(name, sizes):
    """One work-group per element of the map, its items folding interleaved elements of the row,
    a tree in local memory for each of the function's reductions; the CPU target keeps an item
    per row.  The kernel agrees with NumPy (and Oclgrind: barriers, local memory)."""
    entry = suite.BY_NAME[name]
    trees = {"gesummv": 2}.get(name, 1)
    gpu = _lowered(entry.program, sizes, LOCKSTEP)[1].to_text()
    assert gpu.count("partial_reduce_iterate_stride") == trees and "lower_map_workgroup" in gpu
    assert "partial_reduce_iterate_stride" not in _lowered(entry.program, sizes, Target())[1].to_text()
    args = suite.inputs(entry, sizes, seed=5)
    low = _lowered(entry.program, sizes, LOCKSTEP)[0]
    got = dpia.compile(low, name=dpia.kernel_name_for(name))(*args)
    assert relative_error(got, entry.reference(*args)) <= entry.tolerance


@pytest.mark.parametrize("name", sorted(ROW_FORMS))
def test_rows_reduced_by_other_operators_and_with_code_around_agree(name):
    program, reference = ROW_FORMS[name]
    a = np.random.default_rng(6).standard_normal((5, 384)).astype(np.float32)
    fixed = fl.infer(fix_sizes(program, {"M": 5, "N": 384}))
    low, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
    trees = 2 if name in ("softmax", "softmax_denominators") else 1
    assert derivation.to_text().count("partial_reduce_iterate_stride") == trees
    got = dpia.compile(low, name=name)(a)
    assert relative_error(got, reference(a)) <= 1e-5


def test_a_row_reduced_from_another_start_is_a_tree_from_the_neutral_element_then_the_start():
    """`reduce (+) 1.0 row` -> `1.0 + reduce (+) 0.0 row` (reduce_neutral_init), then the tree;
    max from 0 likewise (from -inf, then max with 0)."""
    for name, program, reference in (
            ("sum_from_one", _row_program(lambda row: fl.reduce(fl.add, 1.0, row)), lambda a: 1.0 + a.sum(1)),
            ("max_from_zero", _row_program(lambda row: fl.reduce(fl.max, 0.0, row)),
             lambda a: np.maximum(a.max(1), 0.0))):
        fixed = fl.infer(fix_sizes(program, {"M": 5, "N": 256}))
        low, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
        text = derivation.to_text()
        assert "reduce_neutral_init" in text and "partial_reduce_iterate_stride" in text
        a = np.random.default_rng(12).standard_normal((5, 256)).astype(np.float32)
        assert relative_error(dpia.compile(low, name=name)(a), reference(a)) <= 1e-5


def _times(c: float):
    return lambda x: x * float(c)


@pytest.mark.parametrize("why, program, sizes", [
    ("a short row", ROW_FORMS["row_sums"][0], {"M": 8, "N": 64}),
    ("a length no warp divides", ROW_FORMS["row_sums"][0], {"M": 8, "N": 1000}),
    ("a symbolic length", ROW_FORMS["row_sums"][0], {}),
    ("an array every element reads whole", fl.fun([ROWS, fl.array(N, fl.f32)], lambda a, x: fl.map(
        lambda row: fl.reduce(fl.add, 0.0, fl.map(lambda v: v * fl.reduce(fl.add, 0.0, row), x)), a)),
     {"M": 8, "N": 256}),
    ("a map whose function loops", _row_program(lambda row: fl.map(
        lambda x: fl.reduce(fl.add, 0.0, fl.map(lambda y: x * y, row)), row)), {"M": 8, "N": 256}),
    ("a map whose stored array exceeds local memory, read back by other items", _row_program(lambda row: fl.let(
        fl.map(fl.abs, row), lambda e: fl.map(lambda v: v / fl.reduce(fl.add, 0.0, e),
                                               fl.gather(lambda i, n: n - i - 1, e)))), {"M": 2, "N": 8192}),
    ("a map each item reads back alone, but more elements an item than registers", _row_program(lambda row: fl.let(
        fl.map(fl.abs, row), lambda e: fl.map(lambda v: v / fl.reduce(fl.add, 0.0, e), e))), {"M": 2, "N": 32768}),
    ("more local memory than every device has", _row_program(lambda row: sum(
        (fl.reduce(fl.add, 0.0, fl.map(_times(c), row)) for c in range(9)), fl.lit(0.0))),  # 9 trees x 2 KB
     {"M": 8, "N": 4096}),
])
def test_rows_stay_one_items_loop_where_a_group_would_not_fit(why, program, sizes):
    fixed = fl.infer(fix_sizes(program, sizes))
    derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))[1].to_text()
    assert "partial_reduce_iterate_stride" not in derivation, why


_MONOIDS = [(fl.add, lambda: fl.lit(0.0)), (fl.max, lambda: fl.literal(-math.inf, fl.f32)),
            (fl.min, lambda: fl.literal(math.inf, fl.f32)), (fl.add, lambda: fl.lit(1.0))]  # the last from 1
_ELEMENTWISE = [lambda x: x, lambda x: x * x, fl.abs, lambda x: 2.0 * x - 1.0]


def _random_row_program(rng):
    """A program-level map whose function combines 1-3 reductions of its row (or of the row
    zipped with a shared vector), each with a random monoid and element-wise function, by
    scalar code, and maybe maps the row by the result: the forms row_reductions takes."""
    def reduction(row, x):
        op, zero = _MONOIDS[rng.integers(len(_MONOIDS))]
        g = _ELEMENTWISE[rng.integers(len(_ELEMENTWISE))]
        if rng.random() < 0.5:
            return fl.reduce(op, zero(), fl.map(lambda p: g(fl.fst(p)) * fl.snd(p), fl.zip(row, x)))
        return fl.reduce(op, zero(), fl.map(g, row))

    count = int(rng.integers(1, 4))
    scale = float(rng.integers(1, 4))

    normalised = rng.random() < 0.4  # the row scaled by its reductions (softmax's and layernorm's form)

    def body(row, x):
        total = reduction(row, x)
        for _ in range(count - 1):
            total = total + scale * reduction(row, x)
        return fl.let(total, lambda t: fl.map(lambda v: v * 0.5 - t, row)) if normalised else total

    return fl.fun([ROWS, fl.array(N, fl.f32)], lambda a, x: fl.map(lambda row: body(row, x), a))


@pytest.mark.parametrize("seed", range(12))
def test_random_row_programs_agree_with_the_interpreter(seed):
    """Random instances of the form (and row lengths a group takes or not, 96 to 512): the
    lowering for a lockstep target agrees with functional.interp on PoCL, under Oclgrind."""
    from dpia.programs import random_inputs

    rng = np.random.default_rng(seed)
    program = _random_row_program(rng)
    sizes = {"M": int(rng.integers(1, 6)), "N": int(rng.choice([96, 128, 256, 384, 512]))}
    fixed = fl.infer(fix_sizes(program, sizes))
    low, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
    assert ("partial_reduce_iterate_stride" in derivation.to_text()) == (row_items(sizes["N"]) is not None)
    inputs = random_inputs(program, sizes, seed)
    got = dpia.compile(low, name=f"rows{seed}")(*inputs)
    assert relative_error(got, fl.interpret(program, *inputs)) <= 1e-4, derivation.to_text()



@pytest.mark.parametrize("name, sizes", [("nbody", dict(n=64)), ("md", dict(n=64, m=16))])
def test_the_force_components_are_one_reduction_with_a_private_accumulator(name, sizes):
    """N-Body's and MD's `generate 3 (fun(k) => reduce (+) 0 (map (g k) bodies))`: one pass over
    the bodies (generate_reduce_fusion) in the default lowering for either target and in the
    exploration's prepared program, though the indices phase turns a generate reading at its
    index into a map (it ran first and hid the pattern: N-Body 16384 5.4x slower on an H100);
    and the fused 3-array accumulator stays a fold (reduce_columns would store every body's
    row: an n x n x 3 temporary)."""
    from dpia.explore.stages import PREPARE
    from functional.default_lowering import phases
    from functional.strategies import seq

    entry = suite.BY_NAME[name]
    for target in (Target(), LOCKSTEP):
        low, derivation = _lowered(entry.program, sizes, target)
        assert "generate_reduce_fusion" in derivation.to_text() and "reduce_columns" not in derivation.to_text()
    steps = dict(phases())
    prepared = derive(fl.infer(entry.program), seq(*(steps[p] for p in PREPARE)))[1].to_text()
    assert "generate_reduce_fusion" in prepared
    args = suite.inputs(entry, sizes, seed=7)
    kernel = dpia.compile(low, name=name)
    assert "restrict tmp" not in kernel.source  # no global temporary: the accumulator is private
    assert relative_error(kernel(*args), entry.reference(*args)) <= entry.tolerance


# ---------------------------------------------------------------- rows' trees ending in a warp

WARP = Target(lockstep_items=True, warp_shuffles=True)


def test_a_device_is_told_of_warp_shuffles_only_where_it_offers_them():
    from dpia.explore.space import GPU_PRIVATE_ARRAY

    with_shuffles = DeviceLimits(1024, 48 * 1024, 132, "GPU", intrinsics={"warp_shuffle"})
    assert with_shuffles.lowering_target() == attrs.evolve(WARP, private_limit=GPU_PRIVATE_ARRAY)
    assert DeviceLimits(1024, 48 * 1024, 132, "GPU").lowering_target() == attrs.evolve(LOCKSTEP,
                                                                                      private_limit=GPU_PRIVATE_ARRAY)


@pytest.mark.parametrize("seed", range(6))
def test_rows_trees_end_in_a_warps_shuffles_where_the_target_has_them(seed):
    """Each row's tree keeps its steps above 32 partial results in local memory and ends in the
    first warp's registers (warp_tree); the lowered program means what the program does (the
    interpreter runs reduce_warp as the tree's steps), and its kernel shuffles.  PoCL and
    Oclgrind offer no shuffles: the kernels ran on an H100 (benchmarks/RESULTS.md, session 26)."""
    import codegen_opencl
    from dpia.programs import random_inputs

    rng = np.random.default_rng(100 + seed)
    program = _random_row_program(rng)
    sizes = {"M": int(rng.integers(1, 4)), "N": int(rng.choice([64, 96, 128, 256, 1024, 4096]))}
    fixed = fl.infer(fix_sizes(program, sizes))
    low, derivation = derive(fixed, default_schedule(fixed, WARP))
    trees = derivation.to_text().count("partial_reduce_iterate_stride")
    assert trees >= 1 and derivation.to_text().count("warp_tree") == trees
    assert str(low).count("reduce_warp") == trees
    inputs = random_inputs(program, sizes, seed)
    assert relative_error(fl.interpret(low, *inputs), fl.interpret(program, *inputs)) <= 1e-4
    assert "shfl.sync.down" in codegen_opencl.emit(dpia.translate(low))


def test_a_row_of_doubles_keeps_its_tree_in_local_memory():
    """Shuffles move 32-bit values (warp_tree's precondition): a double row's tree stays whole."""
    program = fl.fun([fl.array(M, fl.array(N, fl.f64))], lambda a: fl.map(lambda row: fl.reduce(
        fl.add, fl.cast(fl.f64, 0.0), row), a))
    fixed = fl.infer(fix_sizes(program, {"M": 4, "N": 1024}))
    low, derivation = derive(fixed, default_schedule(fixed, WARP))
    assert "partial_reduce_iterate_stride" in derivation.to_text() and "reduce_warp" not in str(low)
    a = np.random.default_rng(1).standard_normal((4, 1024))
    assert relative_error(dpia.compile(low, name="double_rows")(a), a.sum(1)) <= 1e-12


def test_a_rows_element_wise_maps_run_on_the_trees_items_so_the_group_is_as_wide_as_its_trees():
    """softmax's exp and division over a row of 1024 (row_items: 128), and the copy of the row it
    reads twice (copy_element: _row_in_registers), are `items` maps over interleaved elements
    (split_join, map_map_interchange): every map_local of the group counts
    at most 128, so the launch gives groups of 128 items, not 1024 with 896 idle in the trees
    (0.129 -> 0.058 ms on an H100).  The kernel agrees with NumPy (and Oclgrind)."""
    from codegen_opencl.plan import phases
    from codegen_opencl.runtime import launch_plan

    program, reference = ROW_FORMS["softmax"]
    fixed = fl.infer(fix_sizes(program, {"M": 3, "N": 1024}))
    low, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
    text = derivation.to_text()
    assert text.count("step: copy_element") == 1
    assert text.count("split_join") == 3 and text.count("map_map_interchange") == 3
    kernel = dpia.compile(low, name="softmax_rows")
    (phase,) = [ph for ph in phases(kernel.program) if ph.parallel]
    assert launch_plan(phase.body, {}, max_local=1024)[1] == (128,)
    a = np.random.default_rng(8).standard_normal((3, 1024)).astype(np.float32)
    assert relative_error(kernel(a), reference(a)) <= 1e-5


def test_every_device_gets_a_work_group_per_row():
    """On dimension 0 a work-group per element, on GPUs and CPUs (the printer writes no loop
    over groups: plan.one_group_each); dimensions 1 and 2 are capped (MAX_GROUPS on a CPU)."""
    from codegen_opencl.plan import phases
    from codegen_opencl.runtime import GPU_MAX_GROUPS, launch_plan

    program, _ = ROW_FORMS["row_sums"]
    fixed = fl.infer(fix_sizes(program, {"M": 20000, "N": 256}))
    low, _ = derive(fixed, default_schedule(fixed, LOCKSTEP))
    (phase,) = [ph for ph in phases(dpia.translate(low)) if ph.parallel]
    assert launch_plan(phase.body, {})[0] == (20000 * 32,)
    assert launch_plan(phase.body, {}, max_groups=GPU_MAX_GROUPS)[0] == (20000 * 32,)


def test_a_long_rows_stored_map_each_item_reads_back_alone_takes_no_local_memory():
    """softmax over rows of 8192: the exponentials (32 KB a row) are each item's own elements
    (_own_elements_only), so they count as registers, not against the group's local memory, and
    the rows take work-groups; 32 exponentials per item in registers, only the trees in local
    memory.  NumPy and Oclgrind agree."""
    import re

    program, reference = ROW_FORMS["softmax"]
    fixed = fl.infer(fix_sizes(program, {"M": 2, "N": 8192}))
    low, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
    assert derivation.to_text().count("partial_reduce_iterate_stride") == 2
    kernel = dpia.compile(low, name="softmax_wide")
    assert sum(int(n) for n in re.findall(r"local float tmp\d+\[(\d+)\]", kernel.source)) < 1024
    assert dict(kernel.program.local_size) == {0: 256}
    a = np.random.default_rng(13).standard_normal((2, 8192)).astype(np.float32)
    assert relative_error(kernel(a), reference(a)) <= 1e-5


def test_a_rows_stored_map_each_item_reads_back_alone_is_registers():
    """softmax's exponentials: each item writes and reads only its own interleaved elements, so
    imperative.passes.private_blocks keeps them in registers (no local array of the row, no
    barrier between the exponentials and their sum), the group of 128 items recorded in the
    launch contract; the trees' arrays, read across items, stay in local memory.  NumPy and
    Oclgrind agree."""
    import re

    program, reference = ROW_FORMS["softmax"]
    fixed = fl.infer(fix_sizes(program, {"M": 3, "N": 1024}))
    low, _ = derive(fixed, default_schedule(fixed, LOCKSTEP))
    kernel = dpia.compile(low, name="softmax_registers")
    assert dict(kernel.program.local_size) == {0: 128}
    sizes = {int(n) for n in re.findall(r"local float tmp\d+\[(\d+)\]", kernel.source)}
    assert 1024 not in sizes and 128 in sizes  # the first stage's partial results are shared
    assert re.search(r"float tmp\d+_7;", kernel.source)  # eight exponentials per item, as scalars
    a = np.random.default_rng(9).standard_normal((3, 1024)).astype(np.float32)
    assert relative_error(kernel(a), reference(a)) <= 1e-5



def _layer_norm(a):
    a = a.astype(np.float64)
    mu = a.mean(1, keepdims=True)
    return (a - mu) / np.sqrt(((a - mu) ** 2).mean(1, keepdims=True) + 1e-5)


LAYER_NORM = _row_program(lambda row: fl.let(fl.reduce(fl.add, 0.0, row) / N, lambda mu: fl.let(
    fl.reduce(fl.add, 0.0, fl.map(lambda x: (x - mu) * (x - mu), row)) / N,
    lambda var: fl.map(lambda x: (x - mu) * fl.rsqrt(var + 1e-5), row))))


def test_a_row_read_three_times_is_copied_into_registers_once():
    """Layer normalisation reads its row for the mean, the variance and the output: the row is
    copied first (copy_element), each item's 64 elements of a row of 16384 into registers
    (private_blocks), so global memory is read once (an H100: 0.098 -> 0.052 ms at 1024 x 16384,
    the copy's time; benchmarks/RESULTS.md, session 27).  NumPy and Oclgrind agree."""
    import re

    fixed = fl.infer(fix_sizes(LAYER_NORM, {"M": 2, "N": 16384}))
    low, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
    assert derivation.to_text().count("step: copy_element") == 1
    kernel = dpia.compile(low, name="layernorm_registers")
    assert sum(int(n) for n in re.findall(r"local float tmp\d+\[(\d+)\]", kernel.source)) < 1024
    assert re.search(r"float tmp\d+_63;", kernel.source)  # 64 elements per item, as scalars
    a = np.random.default_rng(5).standard_normal((2, 16384)).astype(np.float32)
    assert relative_error(kernel(a), _layer_norm(a)) <= 1e-4


def test_a_row_is_not_copied_where_registers_would_not_hold_it_or_it_is_read_once():
    """softmax over 16384 columns keeps its 64 exponentials an item in registers: a copy of the
    row would make 128; a row sum reads its row once."""
    for program, n in ((ROW_FORMS["softmax"][0], 16384), (ROW_FORMS["row_sums"][0], 4096)):
        fixed = fl.infer(fix_sizes(program, {"M": 2, "N": n}))
        _, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
        assert "copy_element" not in derivation.to_text()
        assert "partial_reduce_iterate_stride" in derivation.to_text()  # still a work-group per row


def _random_stored_row_program(rng):
    """A row's element-wise map stored by a let and read back by reductions, maps, zips with the
    row, or reversed (another item's elements): the forms _own_elements_only judges."""
    op, zero = _MONOIDS[rng.integers(len(_MONOIDS))]
    g = _ELEMENTWISE[rng.integers(len(_ELEMENTWISE))]
    reversed_read = rng.random() < 0.3

    def body(row):
        def rest(e):
            total = fl.reduce(op, zero(), e if rng.random() < 0.5 else fl.map(lambda p: fl.fst(p) * fl.snd(p),
                                                                             fl.zip(e, row)))
            read = fl.gather(lambda i, n: n - i - 1, e) if reversed_read else e
            return fl.map(lambda v: v - total, read)
        return fl.let(fl.map(g, row), rest)

    return fl.fun([ROWS], lambda a: fl.map(body, a))


@pytest.mark.parametrize("seed", range(10))  # seed 9: a reversed read of 8192 (an item per row)
def test_a_groups_local_memory_stays_within_its_budget_when_stored_maps_count_as_registers(seed):
    """Wherever a row takes a work-group, the kernel's local memory is within ROW_LOCAL_BYTES:
    a stored map counted as registers (each item reading back its own elements) did become
    registers (imperative.passes.private_blocks); one read by other items was counted.  The
    kernel agrees with the interpreter (Oclgrind too)."""
    import re

    from dpia.programs import random_inputs
    from functional.default_lowering import ROW_LOCAL_BYTES

    rng = np.random.default_rng(300 + seed)
    program = _random_stored_row_program(rng)
    sizes = {"M": 2, "N": int(rng.choice([2048, 8192]))}
    fixed = fl.infer(fix_sizes(program, sizes))
    low, derivation = derive(fixed, default_schedule(fixed, LOCKSTEP))
    kernel = dpia.compile(low, name=f"stored_rows{seed}")
    if "partial_reduce_iterate_stride" in derivation.to_text():
        assert 4 * sum(int(n) for n in re.findall(r"local float tmp\d+\[(\d+)\]", kernel.source)) <= ROW_LOCAL_BYTES
    inputs = random_inputs(program, sizes, seed)
    assert relative_error(kernel(*inputs), fl.interpret(program, *inputs)) <= 1e-4
