"""The generic resource analysis (dpia.explore.resources) on programs derived by the named
strategies: it gives what the exploration families' formulas said where those were right,
follows the element type, and reports each kind of problem."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest

import dpia
import functional as fl
from codegen_opencl.opencl import emit
from dpia.explore.resources import KernelResources, ResourceError, kernel_resources, main_kernel, resource_problem
from dpia.explore.space import DeviceLimits, with_size_facts
from functional import schedules
from functional.derivation import derive
from functional.nat import Nat, Var
from functional.types import AddressSpace, ArrayType, ScalarType, TupleType, VectorType, f32
from imperative.ir import Assign, For, If, Level, Lit, Mem, MemAcc, New, Op, ParFor, Program, Seq, Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed

N, M, K = fl.nat("N"), fl.nat("M"), fl.nat("K")
TOTAL = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
SCAL = fl.fun([fl.f32, fl.array(N, fl.f32)], seed.scal_body)
GEMV = fl.fun([fl.array(M, fl.array(N, fl.f32)), fl.array(N, fl.f32), fl.array(M, fl.f32), fl.f32, fl.f32],
              seed.gemv_body)


def _mm(t):
    zero = fl.lit(0.0, t)
    return fl.fun([fl.array(M, fl.array(K, t)), fl.array(K, fl.array(N, t))],
                  lambda a, b: fl.map(lambda r: fl.map(
                      lambda c: fl.reduce(fl.add, zero, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))),
                      fl.transpose(b)), a))


MM, MM64 = _mm(fl.f32), _mm(fl.f64)
ROOMY = DeviceLimits(max_work_group_size=1024, local_mem_bytes=64 * 1024, compute_units=4)


@functools.cache
def translated(program, strategy: str, facts: tuple, **params):
    """The program re-declared with `facts`, derived by schedules.<strategy>(**params), translated."""
    low, _ = derive(with_size_facts(program, dict(facts)), getattr(schedules, strategy)(**params))
    return dpia.translate(low)


def resources(program, strategy, facts, sizes, **params) -> tuple[KernelResources, ...]:
    return kernel_resources(translated(program, strategy, tuple(sorted(facts.items())), **params), sizes)


# ------------------------------------------------------------- agreement with the formulas


@pytest.mark.parametrize("n, m, k", [(4, 4, 4), (8, 16, 4), (16, 8, 8)])
def test_mm_tiled_matches_the_family_formula(n, m, k):
    sizes = {"M": 64, "N": 128, "K": 32}
    (r,) = resources(MM, "mm_tiled", {"M": n, "N": m, "K": k}, sizes, n=n, m=m, k=k)
    assert r.local_bytes == 4 * k * (n + m)
    assert r.work_group_size == n * m
    assert r.work_groups == (64 // n) * (128 // m)
    assert r.work_items == 64 * 128  # one item per element of the result
    assert r.work > 64 * 128 * 32  # at least the multiply-adds


def test_f64_mm_tiled_uses_eight_byte_elements():
    sizes = {"M": 64, "N": 64, "K": 64}
    (r32,) = resources(MM, "mm_tiled", {"M": 8, "N": 8, "K": 8}, sizes, n=8, m=8, k=8)
    (r64,) = resources(MM64, "mm_tiled", {"M": 8, "N": 8, "K": 8}, sizes, n=8, m=8, k=8)
    assert r64.local_bytes == 8 * 8 * (8 + 8) == 2 * r32.local_bytes
    assert r64.work_group_size == r32.work_group_size == 64
    assert r64.private_bytes == 2 * r32.private_bytes
    assert r64.private_values == 2 * r32.private_values  # an f64 takes two 32-bit registers


@pytest.mark.parametrize("params", [
    {"n": 32, "m": 32, "k": 8, "l1": 4, "l2": 2},
    {"n": 16, "m": 32, "k": 4, "l1": 2, "l2": 4, "pad": 1},
    # the H200 preset (dpia/explore/presets.py): 8x8 blocks with vector copies of both tiles
    {"n": 128, "m": 128, "k": 8, "l1": 8, "l2": 8, "coalesce_a": True, "vector_a": 4, "vector_b": 4},
])
def test_mm_register_blocked_matches_the_family_formula(params):
    n, m, k, l1, l2, pad = params["n"], params["m"], params["k"], params["l1"], params["l2"], params.get("pad", 0)
    sizes = {"M": 256, "N": 256, "K": 64}
    (r,) = resources(MM, "mm_register_blocked", {"M": n, "N": m, "K": k}, sizes, **params)
    assert r.local_bytes == 4 * k * (n + pad + m)
    assert r.work_group_size == (n // l1) * (m // l2)
    assert r.work_groups == (256 // n) * (256 // m)
    # l1 x l2 accumulators, a column of A and a row of B: the block's accumulators are copied
    # into the k-loop's own and back, but the two copies are never live together
    assert r.private_values == l1 * l2 + l1 + l2
    assert r.private_bytes == 4 * r.private_values
    assert resource_problem((r,), DeviceLimits(1024, 48 * 1024, 1)) is None  # within the default budget of 128


def tree_bytes(local: int) -> int:
    """A tree of f32 local arrays of local, local/2, ..., 1 elements, each 16-byte aligned."""
    return sum(-(-4 * (local >> j) // 16) * 16 for j in range(local.bit_length()))


@pytest.mark.parametrize("block, local", [(256, 64), (1024, 128)])
def test_tree_reduction_counts_every_level_of_the_tree(block, local):
    sizes = {"N": 1 << 16}
    main, final = resources(TOTAL, "parallel_reduce", {"N": block}, sizes, block=block, local=local)
    assert main.work_group_size == local
    assert main.work_groups == (1 << 16) // block
    # The formula said 4 * local; the kernel declares one local array per level of the tree
    # (local, local/2, ..., 1 floats), each from a 16-byte boundary.
    assert main.local_bytes == tree_bytes(local) > 4 * local
    assert (final.parallel, final.work_items, final.local_size) == (False, 1, None)
    assert main_kernel((main, final)) is main


def test_two_stage_reduction_has_two_parallel_kernels_and_a_final_one():
    sizes = {"N": 1 << 20}
    first, second, final = resources(TOTAL, "parallel_reduce_two_stage", {"N": 1024 * 64}, sizes,
                                     block=1024, local=128, block2=64, local2=16)
    assert (first.work_group_size, first.work_groups) == (128, (1 << 20) // 1024)
    assert (second.work_group_size, second.work_groups) == (16, (1 << 20) // (1024 * 64))
    assert (first.local_bytes, second.local_bytes) == (tree_bytes(128), tree_bytes(16))
    assert not final.parallel
    # 16 work-groups in the second stage and one work-item at the end do not make the
    # program short of work-groups on 512 compute units: the first kernel has 1024
    assert resource_problem((first, second, final), DeviceLimits(1024, 64 * 1024, 512)) is None
    assert resource_problem((first, second, final), DeviceLimits(1024, 64 * 1024, 2048)).startswith(
        "too few work-groups: kernel program_0 has 1024 < 2048")


@pytest.mark.parametrize("chunk, width", [(64, 8), (256, 4)])
def test_chunked_sum_is_work_items_with_vector_accumulators(chunk, width):
    sizes = {"N": 1 << 16}
    main, final = resources(TOTAL, "chunked_sum", {"N": chunk * width}, sizes, chunk=chunk, width=width)
    assert main.work_items == (1 << 16) // (chunk * width)
    assert (main.local_size, main.work_group_size, main.work_groups, main.local_bytes) == (None, None, None, 0)
    assert main.private_values == width + 1  # the vector accumulator and the sum of its lanes
    assert main.private_bytes == 4 * (width + 1)
    assert not final.parallel


@pytest.mark.parametrize("local", [8, 32])
def test_gemv_workgroup_matches_the_family_formula(local):
    (r,) = resources(GEMV, "gemv_workgroup", {"N": local}, {"M": 48, "N": 256}, local=local)
    assert (r.work_group_size, r.work_groups, r.local_bytes) == (local, 48, 4 * local)


@pytest.mark.parametrize("chunk", [16, 128])
def test_scal_workgroup_matches_the_family_formula(chunk):
    (r,) = resources(SCAL, "scal_workgroup", {"N": chunk}, {"N": 4096}, chunk=chunk)
    assert (r.work_group_size, r.work_groups, r.local_bytes, r.private_values) == (chunk, 4096 // chunk, 0, 0)


def test_sizes_come_from_the_call_not_the_program():
    small = resources(SCAL, "scal_workgroup", {"N": 64}, {"N": 128}, chunk=64)[0]
    large = resources(SCAL, "scal_workgroup", {"N": 64}, {"N": 1 << 16}, chunk=64)[0]
    assert (small.work_groups, large.work_groups) == (2, 1024)
    assert large.work == 512 * small.work


def test_sizes_must_bind_the_program_and_keep_its_facts():
    with pytest.raises(ResourceError, match="no size given for N"):
        resources(SCAL, "scal_workgroup", {"N": 64}, {}, chunk=64)
    with pytest.raises(ResourceError, match="size N=96 breaks the program's facts .* a multiple of 64"):
        resources(SCAL, "scal_workgroup", {"N": 64}, {"N": 96}, chunk=64)


# ------------------------------------------------------------------------ problem kinds


def test_each_problem_kind_is_reported():
    mm = resources(MM, "mm_tiled", {"M": 16, "N": 16, "K": 8}, {"M": 64, "N": 64, "K": 64}, n=16, m=16, k=8)
    assert resource_problem(mm, ROOMY) is None
    assert resource_problem(mm, DeviceLimits(128, 64 * 1024, 4)) == \
        "work-group size: kernel program asks for 256 items per work-group > 128"
    assert resource_problem(mm, DeviceLimits(1024, 1024, 4)) is None  # exactly full
    assert resource_problem(mm, DeviceLimits(1024, 1000, 4)) == "local memory: kernel program needs 1024 bytes > 1000"
    assert resource_problem(mm, DeviceLimits(1024, 64 * 1024, 16)) is None  # 16 work-groups
    assert resource_problem(mm, DeviceLimits(1024, 64 * 1024, 17)) == \
        "too few work-groups: kernel program has 16 < 17 compute units"
    blocked = resources(MM, "mm_register_blocked", {"M": 32, "N": 32, "K": 8}, {"M": 64, "N": 64, "K": 64},
                        n=32, m=32, k=8, l1=4, l2=2)
    assert blocked[0].private_values == 8 + 4 + 2
    assert resource_problem(blocked, DeviceLimits(1024, 64 * 1024, 4, private_values=14)) is None
    assert resource_problem(blocked, DeviceLimits(1024, 64 * 1024, 4, private_values=13)) == \
        "private memory: kernel program holds 14 32-bit values per work-item > 13"
    # a GPU runs 32 items of a work-group at once: narrower groups leave lanes idle (a CPU: any width)
    narrow = resources(MM, "mm_tiled", {"M": 16, "N": 16, "K": 8}, {"M": 64, "N": 64, "K": 64}, n=4, m=4, k=8)
    assert resource_problem(narrow, DeviceLimits(1024, 64 * 1024, 4)) is None
    assert resource_problem(narrow, DeviceLimits(1024, 64 * 1024, 4, "GPU")) == \
        "work-group size: kernel program has 16 items per work-group < the 32 lanes a SIMD unit runs at once"
    assert resource_problem(mm, DeviceLimits(1024, 64 * 1024, 4, "GPU")) is None  # 256 items
    chunked = resources(TOTAL, "chunked_sum", {"N": 512}, {"N": 1 << 12}, chunk=64, width=8)
    assert resource_problem(chunked, DeviceLimits(1024, 64 * 1024, 8)) is None
    assert resource_problem(chunked, DeviceLimits(1024, 64 * 1024, 9)) == \
        "too few work-items: kernel program_0 has 8 < 9 compute units"


def test_local_memory_over_a_small_device_is_reported():
    tiled = resources(MM, "mm_tiled", {"M": 32, "N": 32, "K": 32}, {"M": 64, "N": 64, "K": 64}, n=32, m=32, k=32)
    assert tiled[0].local_bytes == 4 * 32 * (32 + 32)
    small = DeviceLimits(max_work_group_size=1024, local_mem_bytes=4096, compute_units=1)
    assert resource_problem(tiled, small) == f"local memory: kernel program needs {4 * 32 * 64} bytes > 4096"


def test_each_kernel_is_checked_for_its_limits():
    # the second stage's tree fits where the first stage's does not: the first is reported
    kernels = resources(TOTAL, "parallel_reduce_two_stage", {"N": 1024 * 64}, {"N": 1 << 20},
                        block=1024, local=128, block2=64, local2=16)
    assert resource_problem(kernels, DeviceLimits(64, 64 * 1024, 1)).startswith("work-group size: kernel program_0 ")
    swapped = (kernels[1], kernels[0], kernels[2])
    assert resource_problem(swapped, DeviceLimits(64, 64 * 1024, 1)).startswith("work-group size: kernel program_0 ")
    assert resource_problem(kernels, DeviceLimits(1024, 200, 1)).startswith("local memory: kernel program_0 ")


# -------------------------------------------------- layouts, checked against the printer

_C_BYTES = {"float": 4, "double": 8, "int": 4, "uint": 4, "uchar": 1}
_LOCAL_DECL = re.compile(r"local (\w+) \w+\[(\d+)\](?: __attribute__\(\(aligned\((\d+)\)\)\))?;")


def printed_local_bytes(source: str) -> dict[str, int]:
    """{kernel name: bytes of its local arrays as the OpenCL source declares them}."""
    out = {}
    for text in source.split("kernel void ")[1:]:
        name = text.split("(", 1)[0]
        out[name] = sum(-(-int(count) * _C_BYTES[ctype] // int(align or 1)) * int(align or 1)
                        for ctype, count, align in _LOCAL_DECL.findall(text))
    return out


def _layouts_program() -> Program:
    """A hand-built kernel with local arrays of bools, float3 vectors and (f64, i32) pairs,
    and a private bool and f64 array, which no strategy of the seed produces."""
    n = Var("N")
    wg, lid = Var("wg"), Var("lid")
    f64, i32, boolean = ScalarType("f64"), ScalarType("i32"), ScalarType("bool")
    write = Assign(Store("output", Nat.atom(lid), f32, AddressSpace.GLOBAL), Lit(0.0, f32))
    flag = Mem("p", boolean, AddressSpace.PRIVATE)
    body = Seq((Assign(MemAcc(flag), Lit(True, boolean)), If(flag, write)))
    body = New(flag, New(Mem("q", ArrayType(3, f64), AddressSpace.PRIVATE), body))
    body = ParFor(Level.LOCAL, 0, lid, Nat.const(8), body)
    for name, t in [("t3", ArrayType(4, TupleType((f64, i32)))), ("t2", ArrayType(5, VectorType(f32, 3))),
                    ("t1", ArrayType(8, boolean))]:
        body = New(Mem(name, t, AddressSpace.LOCAL), body)
    body = ParFor(Level.WORKGROUP, 0, wg, Nat.const(4), body)
    return Program("layouts", (), Mem("output", ArrayType(Nat.atom(n), f32), AddressSpace.GLOBAL), (n,), body)


def test_element_types_are_laid_out_as_the_printer_declares_them():
    p = _layouts_program()
    (r,) = kernel_resources(p, {"N": 8})
    # bools in arrays are bytes; float3s are three packed floats; a pair is two arrays;
    # every local array starts on a 16-byte boundary
    assert r.local_bytes == 16 + 64 + 32 + 16
    assert r.local_bytes == printed_local_bytes(emit(p))["layouts"]
    assert (r.private_values, r.private_bytes) == (1 + 3 * 2, 4 + 3 * 8)  # a bool scalar is an int
    assert (r.work_group_size, r.work_groups, r.work) == (8, 4, 4 * 8 * 2)  # two assignments per item


@pytest.mark.parametrize("case", [
    (MM, "mm_tiled", {"M": 8, "N": 16, "K": 4}, {"n": 8, "m": 16, "k": 4}),
    (MM, "mm_register_blocked", {"M": 16, "N": 32, "K": 4}, {"n": 16, "m": 32, "k": 4, "l1": 2, "l2": 4, "pad": 1}),
    (MM, "mm_register_blocked", {"M": 128, "N": 128, "K": 8},
     {"n": 128, "m": 128, "k": 8, "l1": 8, "l2": 8, "coalesce_a": True, "vector_a": 4, "vector_b": 4}),
    (MM64, "mm_tiled", {"M": 4, "N": 4, "K": 4}, {"n": 4, "m": 4, "k": 4}),
    (TOTAL, "parallel_reduce_two_stage", {"N": 1024 * 64}, {"block": 1024, "local": 128, "block2": 64, "local2": 16}),
])
def test_local_bytes_agree_with_the_printed_kernels(case):
    program, strategy, facts, params = case
    p = translated(program, strategy, tuple(sorted(facts.items())), **params)
    sizes = {v.name: 4 * facts.get(v.name, 1) for v in p.sizes}
    assert {r.name: r.local_bytes for r in kernel_resources(p, sizes)} == printed_local_bytes(emit(p))


# ------------------------------------------------------------------ private values, live


def _private_program(*cmds, arrays=()) -> Program:
    """One work-group of 8 items, each running `cmds` in the scope of private f32 scalars a,
    b and c (and of private f32 arrays: `arrays` of (name, length))."""
    n = Var("N")
    body = Seq(tuple(cmds))
    for name, length in arrays:
        body = New(Mem(name, ArrayType(length, f32), AddressSpace.PRIVATE), body)
    for name in "cba":
        body = New(Mem(name, f32, AddressSpace.PRIVATE), body)
    body = ParFor(Level.LOCAL, 0, Var("lid"), Nat.const(8), body)
    body = ParFor(Level.WORKGROUP, 0, Var("wg"), Nat.const(1), body)
    return Program("private", (), Mem("output", ArrayType(Nat.atom(n), f32), AddressSpace.GLOBAL), (n,), body)


def _get(name: str) -> Mem:
    return Mem(name, f32, AddressSpace.PRIVATE)


def _set(name: str, value) -> Assign:
    return Assign(MemAcc(_get(name)), value)


def _out(value) -> Assign:
    return Assign(Store("output", Nat.const(0), f32, AddressSpace.GLOBAL), value)


ONE = Lit(1.0, f32)


def test_a_value_read_for_the_last_time_frees_its_register():
    (r,) = kernel_resources(_private_program(_set("a", ONE), _out(_get("a")), _set("b", ONE), _out(_get("b"))),
                            {"N": 1})
    assert (r.private_values, r.private_bytes) == (1, 4)


def test_values_read_later_are_held_together():
    (r,) = kernel_resources(_private_program(_set("a", ONE), _set("b", ONE), _out(_get("b")), _out(_get("a"))),
                            {"N": 1})
    assert (r.private_values, r.private_bytes) == (2, 8)


def test_a_loop_carried_value_is_live_across_the_loop_body():
    step = Seq((_set("b", ONE), _set("c", _get("b")), _set("a", Op("add", (), (_get("a"), _get("c")), f32))))
    (r,) = kernel_resources(_private_program(_set("a", ONE), For(Var("i"), Nat.const(4), step), _out(_get("a"))),
                            {"N": 1})
    assert r.private_values == 2  # a with b, then a with c: never all three
    # b read at the top of the next iteration (before its write there) is carried too
    carried = Seq((_set("c", _get("b")), _set("b", ONE), _set("a", Op("add", (), (_get("a"), _get("c")), f32))))
    (r,) = kernel_resources(_private_program(_set("a", ONE), _set("b", ONE), For(Var("i"), Nat.const(4), carried),
                                             _out(_get("a"))), {"N": 1})
    assert r.private_values == 3


def test_a_private_array_is_held_throughout_its_scope():
    (r,) = kernel_resources(_private_program(_set("a", ONE), _out(_get("a")), arrays=[("t", 6)]), {"N": 1})
    assert (r.private_values, r.private_bytes) == (7, 28)


def test_a_cpus_private_budget_is_its_vector_registers_and_a_gpus_is_fixed():
    """16 vector registers of the native float width on a CPU (never below the fixed budget);
    an identity without the width (an older database's) keeps the fixed budget; a GPU has
    GPU_PRIVATE_VALUES, and its default lowering keeps an item's arrays up to GPU_PRIVATE_ARRAY
    scalars private (a CPU's up to storage.PRIVATE_LIMIT)."""
    from dpia.explore.space import GPU_PRIVATE_ARRAY, GPU_PRIVATE_VALUES, PRIVATE_VALUES_PER_ITEM, private_values_for
    from functional.storage import PRIVATE_LIMIT

    identity = {"max_work_group_size": 4096, "local_mem_bytes": 1 << 20, "compute_units": 16, "device_type": "CPU"}
    assert DeviceLimits.of_identity({**identity, "native_float_vector_width": 16}).private_values == 256
    assert DeviceLimits.of_identity({**identity, "native_float_vector_width": 8}).private_values == 128
    assert DeviceLimits.of_identity({**identity, "native_float_vector_width": 4}).private_values == 128
    assert DeviceLimits.of_identity(identity).private_values == PRIVATE_VALUES_PER_ITEM
    gpu = {**identity, "device_type": "GPU", "native_float_vector_width": 16}
    assert DeviceLimits.of_identity(gpu).private_values == private_values_for("GPU", 1) == GPU_PRIVATE_VALUES
    assert DeviceLimits.of_identity(gpu).lowering_target().private_limit == GPU_PRIVATE_ARRAY
    assert DeviceLimits.of_identity(identity).lowering_target().private_limit == PRIVATE_LIMIT


def _split_k_gemv_t(chunks_dim: int):
    """A^T x + y split into chunks of 16 rows, the chunks on OpenCL dimension `chunks_dim`
    and the columns on the other, as the explorer derives it at M = N = 64."""
    from dpia.explore.space import Point, Skeleton, Space, parse_steps
    from dpia.pipeline import PIPELINE, Options

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    import suite

    name = (f"split_k(n=s0)@root; lower_map_global(d={chunks_dim})@0.1; "
            f"lower_map_global(d={1 - chunks_dim})@0.1.0.1.0")
    sizes = {"M": 64, "N": 64}
    limits = DeviceLimits(max_work_group_size=1024, local_mem_bytes=49152, compute_units=4, device_type="GPU")
    space = Space.build(suite.gemv_t, sizes, limits, skeletons=[Skeleton(parse_steps(name))])
    point = Point(name, {"s0": 16})
    low, _ = derive(space.program_for(point), space.strategy(point))
    return PIPELINE.run({"low": low}, Options(), "translate", "plan")["plan"].program, sizes


def test_the_strided_share_tells_the_orders_of_a_split_k_apart():
    """GEMV^T's split-k with its columns on dimension 0 reads the matrix row by row across
    neighbouring work-items (contiguous: 0.26 ms on the H200); with its chunks there,
    neighbouring items read 16 rows apart, and their partial sums N apart (5.4 ms)."""
    from dpia.explore.resources import strided_share

    assert strided_share(*_split_k_gemv_t(chunks_dim=1)) == 0.0
    assert strided_share(*_split_k_gemv_t(chunks_dim=0)) == 1.0


def test_the_strided_share_weighs_accesses_by_their_bytes_and_runs():
    """Of a kernel reading a[i * 4] (strided) in a loop of 3 and writing out[i] (contiguous)
    once per item: three strided reads to one contiguous write."""
    from dpia.explore.resources import strided_share
    from imperative.ir import Load

    n, i, j = Var("n"), Var("i"), Var("j")
    a = Load("a", Nat.atom(i) * 4, f32, AddressSpace.GLOBAL)
    acc = Mem("acc", f32, AddressSpace.PRIVATE)
    body = ParFor(Level.GLOBAL, 0, i, Nat.atom(n), New(acc, Seq((
        Assign(MemAcc(acc), Lit(0.0, f32)),
        For(j, Nat.const(3), Assign(MemAcc(acc), Op("add", (), (acc, a), f32))),
        Assign(Store("out", Nat.atom(i), f32, AddressSpace.GLOBAL), acc)))))
    program = Program("k", (), Mem("out", ArrayType(Nat.atom(n), f32), AddressSpace.GLOBAL), (n,), body)
    assert strided_share(program, {"n": 64}) == pytest.approx(0.75)
