"""The DPIA slice end to end: translation, passes, OpenCL emission, PoCL runs compared
with the interpreter (each then checked under Oclgrind by tests/conftest.py), the Oclgrind
check itself, errors, and snapshots."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import codegen_opencl.opencl as cg
import dpia
import functional as fl
from dpia.translate import TranslationError

from .. import oclgrind
from .cases import CASES, _close

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).parent / "snapshots"


def test_every_low_level_view_and_scalar_primitive_has_an_execution_case():
    """Each primitive a kernel can contain (low-level ones, layout views, scalar operations)
    runs in at least one case; a new primitive needs a case too."""
    from functional.expr import Prim, walk
    from functional.primitives import PRIMITIVES

    used = {n.name for prog, _ in CASES.values() for n in walk(prog) if isinstance(n, Prim)}
    from functional.primitives import LAYOUT as LAYOUT_VIEWS

    from functional.primitives import WARP_REDUCTIONS

    translatable = ({n for n, d in PRIMITIVES.items() if d.level != "high"} | LAYOUT_VIEWS
                    | {"generate", "iterate", "let", "map"})
    # device intrinsics run only where a device offers them (none here: tests/test_warp.py checks
    # their kernels' text and refusal; benchmarks/warp_h200.sh runs them against the reference)
    assert sorted(translatable - used - WARP_REDUCTIONS) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_agrees_with_interpreter_on_pocl(name):
    prog, inputs = CASES[name]
    kernel = dpia.compile(prog)
    assert _close(kernel(*inputs), fl.interpret(prog, *inputs)), kernel.source


def test_oclgrind_check_finds_the_race_of_a_kernel_without_its_barriers():
    """The check every test's kernels go through (tests/oclgrind.py) can fail: translated
    without the barrier pass, the work-group sum reads local memory other items write."""
    from imperative.passes import PIPELINE, insert_barriers

    prog, inputs = CASES["workgroup_local_barrier"]
    racy = dpia.translate(prog, passes=tuple(p for p in PIPELINE if p is not insert_barriers))
    finding = oclgrind.check_launch(racy, inputs)
    assert "data race" in finding.report.lower() and not finding.clean
    clean = oclgrind.check_launch(dpia.translate(prog), inputs)
    assert clean.clean and not clean.unoptimised, clean.report


def test_oclgrind_check_finds_an_uninitialised_read():
    """A private accumulator the kernel never initialises (the C printer's `new` without its
    first assignment) is reported by the uninitialised-memory check."""
    prog, inputs = CASES["gemv_rows"]
    good = dpia.translate(prog)
    text = cg.emit(good)
    assert re.search(r"acc\d+ = 0\.0f;", text)
    from codegen_opencl import runtime

    with pytest.MonkeyPatch.context() as patch:  # the kernels' printer drops the accumulator's initialisation
        patch.setattr(runtime, "emit", _without_initialisation(runtime.emit))
        finding = oclgrind.check_launch(good, inputs, isolated=False)  # the patch holds in this process only
    assert "uninitiali" in finding.report.lower(), finding.report


def _without_initialisation(emit):
    return lambda program, *args, **kw: re.sub(r"(acc\d+) = 0\.0f;", "", emit(program, *args, **kw))


def test_oclgrind_checks_integer_division_unoptimised():
    """Oclgrind's uninitialised check stops at LLVM's `freeze` (integer division): the kernel
    is checked again built without optimisation, and the summary counts it."""
    prog, inputs = CASES["ints_div_rem"]
    finding = oclgrind.check_launch(dpia.translate(prog), inputs)
    assert finding.clean and finding.unoptimised, finding.report


def test_oclgrind_report_ignores_only_pyopencl_property_probes():
    probe = ("\nOclgrind - OpenCL runtime error detected\n\tFunction: clGetDeviceInfo\n\tError:    CL_INVALID_VALUE\n"
             "\tFor argument 'param_name'\n\n")
    other = "Oclgrind - OpenCL runtime error detected\n\tFunction: clEnqueueNDRangeKernel\n\tError: CL_INVALID_VALUE\n"
    assert oclgrind.oclgrind_report(probe * 3) == ""
    assert oclgrind.oclgrind_report(probe + other) == other.strip()


def test_translate_prints_views_before_and_flat_indices_after_the_passes():
    n = fl.nat("N", multiple_of=8)
    prog = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.join(fl.map_global(fl.map_seq(lambda x: x + 1.0),
                                                                          fl.split(8, xs))))
    raw = str(dpia.translate(prog, passes=()))
    assert "split 8(xs)" in raw and "join_acc 8(output)" in raw
    flat = str(dpia.translate(prog))
    index = re.search(r"output\[([^\]]+)\] := add\(xs\[([^\]]+)\]", flat)
    assert index and index.group(1) == index.group(2), flat  # one flat index, simplified
    assert sorted(index.group(1).replace(" ", "").split("+")) == ["8*gid1", "i3"]


def test_unlowered_map_is_reported_with_its_place():
    prog = fl.fun([fl.array(fl.nat("N"), fl.f32)], lambda xs: fl.map(lambda x: x + 1.0, xs))
    with pytest.raises(TranslationError, match=r"map is not lowered.*map_global") as err:
        dpia.translate(prog)
    assert "test_translate.py" in str(err.value)


def test_unstored_intermediate_array_is_reported():
    prog = fl.fun([fl.array(fl.nat("N"), fl.f32)],
                  lambda xs: fl.reduce_seq(fl.add, 0.0, fl.map_seq(lambda x: x * 2.0, xs)))
    with pytest.raises(TranslationError, match="to_private, to_local or to_global"):
        dpia.translate(prog)


def test_c_target_compiles_with_gcc(tmp_path):
    prog = fl.fun([fl.array(fl.nat("N"), fl.f32)], lambda xs: fl.map_seq(lambda x: x * 2.0, xs))
    src = cg.emit(dpia.translate(prog), target="c")
    path = tmp_path / "k.c"
    path.write_text(src)
    subprocess.run(["gcc", "-fsyntax-only", str(path)], check=True)


def test_kernel_time_is_a_positive_median():
    prog, inputs = CASES["zip_map_global"]
    kernel = dpia.compile(prog)
    assert kernel.time(*inputs, repeat=3) > 0
    bound = kernel.bind(*inputs)  # uploaded once, timed again and again
    assert bound.time(repeat=1, warmup=0) > 0 and bound.time(repeat=2, warmup=1) > 0
    with pytest.raises(Exception, match="input"):
        kernel.bind(*inputs[:-1])


def test_uploads_reuse_device_copies_of_the_same_arrays():
    from codegen_opencl.runtime import Kernel, Uploads

    prog, inputs = CASES["zip_map_global"]
    assert len(inputs) == 2
    kernel, uploads = Kernel(dpia.translate(prog)), Uploads(keep=2)
    first = [uploads.buffer(kernel.context, np.ascontiguousarray(x)) for x in inputs]
    assert [uploads.buffer(kernel.context, np.ascontiguousarray(x)) for x in inputs] == first
    assert kernel.bind(*inputs, uploads=uploads).time(repeat=1, warmup=0) > 0
    assert [entry[2] for entry in uploads._held.values()] == first  # bind used the held copies
    copy = np.array(inputs[0])  # equal values, another array: another upload
    assert uploads.buffer(kernel.context, copy) is not first[0]
    assert uploads.buffer(kernel.context, np.ascontiguousarray(inputs[0])) is not first[0]  # evicted (keep=2)


def test_bad_inputs_are_rejected_before_launch():
    prog, inputs = CASES["zip_map_global"]
    kernel = dpia.compile(prog)
    with pytest.raises(fl.InterpretError):
        kernel(inputs[0], inputs[1][:-1])
    with pytest.raises(fl.InterpretError):
        kernel(inputs[0].astype(np.float64), inputs[1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_code_snapshot(name):
    """The OpenCL of every case, as reviewed.  A missing or changed snapshot fails; after a
    deliberate change, UPDATE_SNAPSHOTS=1 writes them (review the diff before committing)."""
    prog, _ = CASES[name]
    src = cg.emit(dpia.translate(prog, name=name))
    path = SNAPSHOTS / f"{name}.cl"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(src)
    assert path.exists(), f"no snapshot {path.relative_to(ROOT)}: UPDATE_SNAPSHOTS=1 writes it"
    assert src == path.read_text(), f"generated code for {name} changed; UPDATE_SNAPSHOTS=1 if intended"


def test_every_snapshot_belongs_to_a_case():
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.cl") if p.stem not in CASES) == []


_V = fl.array(fl.nat("N", multiple_of=64), fl.f32)


@pytest.mark.parametrize("build, message", [
    (lambda xs: fl.map_local(lambda x: x, xs), "map_local 0 outside map_workgroup: local ids"),
    (lambda xs: fl.join(fl.map_global(fl.map_global(lambda x: x), fl.split(8, xs))), "nested maps on dimension 0"),
    (lambda xs: fl.join(fl.map_workgroup(fl.map_global(lambda x: x, dim=1), fl.split(8, xs))), "map_global inside"),
    (lambda xs: fl.join(fl.map_workgroup(fl.map_workgroup(lambda x: x), fl.split(8, xs))), "nested maps on dimension 0"),
    (lambda xs: fl.map_seq(lambda x: x, fl.to_local(fl.map_seq(lambda x: x, xs))), "to_local outside map_workgroup"),
])
def test_parallelism_that_cannot_run_is_rejected(build, message):
    with pytest.raises(TranslationError, match=message):
        dpia.translate(fl.fun([_V], build))


def test_a_work_group_may_have_items_in_dimensions_its_groups_do_not_span():
    """Groups over one dimension of blocks, their items over others (a tensor-core product's warps):
    code the items of a dimension share writes shared memory once (local id 0 there)."""
    n = fl.nat("N")
    rows = fl.fun([fl.array(n, fl.array(16, fl.f32))], lambda xs: fl.map_workgroup(
        lambda row: fl.map_local(lambda x: x * 2.0, row, dim=1), xs))
    blocks = fl.fun([fl.array(n, fl.array(8, fl.array(4, fl.f32)))], lambda xs: fl.map_workgroup(
        lambda blk: fl.map_seq(lambda r: fl.map_seq(lambda v: v + 1.0, r), fl.to_local(fl.map_local(
            lambda r: fl.map_local(lambda v: v * 3.0, r, dim=1), blk, dim=2))), xs))
    rng = np.random.default_rng(5)
    for prog, x in ((rows, rng.standard_normal((5, 16))), (blocks, rng.standard_normal((3, 8, 4)))):
        x = x.astype(np.float32)
        kernel = dpia.compile(prog)
        np.testing.assert_allclose(kernel(x), fl.interpret(fl.infer(prog), x), rtol=1e-6)
    src = dpia.compile(blocks).source
    # the group's own loop over the local copy runs on every item: one item of dimensions 1 and 2 writes
    assert "(get_local_id(1) == 0)) && (get_local_id(2) == 0)" in src


def test_loop_that_runs_once_becomes_its_body_and_unrolled_loops_are_replicated():
    n = fl.nat("N", multiple_of=4)
    prog = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.join(fl.map_global(
        lambda c: fl.map_seq_unroll(lambda x: fl.reduce_seq(fl.add, 0.0, x), fl.split(1, c)), fl.split(4, xs))))
    from imperative.passes import PIPELINE, simplify_loops, unroll

    full = str(dpia.translate(prog))
    assert "for " not in full.replace("par_for", "")  # the unrolled loop and the 1-trip reductions are gone
    assert full.count(":= add(") == 4
    without = str(dpia.translate(prog, passes=tuple(p for p in PIPELINE if p not in (simplify_loops, unroll))))
    assert "for_unrolled" in without and "for i" in without  # the ablation keeps the loops
    kernel = dpia.compile(prog)
    x = np.arange(16, dtype=np.float32)
    assert np.array_equal(kernel(x), fl.interpret(prog, x))


@pytest.mark.parametrize("text, shape, declaration", [
    # a global temporary in each unrolled copy (fuzz seed 61054's point: "redefinition of parameter")
    ("fun(xs: 4.8.f32) => to_global (map_seq_unroll (fun(row) => reduce_seq (+) 0.0 (to_global (map_seq "
     "(fun(x) => x * 2.0) row))) xs)", (4, 8), r"global float\* restrict tmp\d+\b"),
    # a local array in each copy of a work-group's unrolled loop (read at other items' slots: an
    # array each item read only at its own would be registers, imperative.passes.private_blocks)
    ("fun(xs: 2.4.8.f32) => to_global (map_workgroup 0 (fun(blk) => to_global (map_seq_unroll (fun(row) => "
     "map_local 0 (fun(x) => x + 1.0) (reorder_stride 2 (to_local (map_local 0 (fun(x) => x * 2.0) row)))) blk)) "
     "xs)", (2, 4, 8),
     r"local float tmp\d+\["),
])
def test_the_copies_of_an_unrolled_loop_share_its_allocation(text, shape, declaration):
    """Unrolling replicates a loop's body with its `new`: one buffer, as the loop had, used by
    each copy in turn (the barriers between the copies are the loop's between iterations)."""
    prog = fl.infer(fl.parse(text))
    kernel = dpia.compile(prog)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert _close(kernel(x), fl.interpret(prog, x))
    assert len(re.findall(declaration, kernel.source)) == 1, kernel.source


def test_private_vector_lanes_print_as_components():
    n = fl.nat("N", multiple_of=8)
    prog = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map_global(
        lambda v: fl.let(fl.to_private(fl.map_vec(lambda e: e + 1.0, v)), lambda w: fl.reduce_seq_unroll(
            fl.add, 0.0, fl.as_scalar(fl.generate(1, lambda i: w)))), fl.as_vector(4, xs)))
    src = cg.emit(dpia.translate(prog))
    x = np.arange(16, dtype=np.float32)
    assert ".s3" in src and np.allclose(dpia.compile(prog)(x), fl.interpret(prog, x))


def test_device_limits_are_checked_before_launch():
    from codegen_opencl.runtime import RuntimeError_, choose_device

    device = choose_device()
    big = 1 << (int(device.local_mem_size) // 4).bit_length()  # f32s in local memory: over the device's limit
    prog = fl.fun([fl.array(fl.nat("N", multiple_of=big), fl.f32)], lambda xs: fl.join(fl.map_workgroup(
        lambda c: fl.map_local(lambda x: x, fl.to_local(fl.map_local(lambda x: x, c))), fl.split(big, xs))))
    with pytest.raises(RuntimeError_, match=f"needs {4 * big} bytes of local memory.* has {device.local_mem_size}"):
        dpia.compile(prog)
    small, inputs = CASES["workgroup_local_barrier"]
    with pytest.raises(RuntimeError_, match="exceeds the device"):
        dpia.compile(small, local_size=2 * int(device.max_work_group_size))(*inputs)


@pytest.mark.parametrize("version", range(1, 8))
def test_seed_reduction_versions_sum_each_block(version):
    sys.path.insert(0, str(ROOT / "examples"))
    import reductions

    prog, block = reductions.program(version, 64)
    x = np.random.default_rng(version).standard_normal(block * 4).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(prog)(x), x.reshape(-1, block).sum(1), rtol=1e-4, atol=1e-4)


def test_high_level_map_of_a_pure_function_is_read_as_a_view():
    n = fl.nat("N", multiple_of=4)
    prog = fl.fun([fl.array(n, fl.array(8, fl.f32))], lambda xss: fl.map_global(
        lambda r: fl.reduce_seq(fl.add, 0.0, r), fl.map(fl.join, fl.map(fl.split(2), fl.map(fl.map(fl.neg), xss)))))
    src = cg.emit(dpia.translate(prog))
    assert src.count("for (") == 2  # the parallel map and the reduction: the maps are views
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(prog)(x), fl.interpret(prog, x), rtol=1e-6)


def test_privatise_turns_the_tile_accumulator_into_a_scalar_with_a_launch_contract():
    prog, inputs = CASES["schedule_mm_tiled_local_memory"]
    translated = dpia.translate(prog)
    assert translated.local_size == ((0, 4), (1, 4))
    src = cg.emit(translated)
    assert re.search(r"float acc\d+;", src) and not re.search(r"float acc\d+\[", src)
    from codegen_opencl.runtime import RuntimeError_

    with pytest.raises(RuntimeError_, match="needs a local size of 4"):
        dpia.compile(prog, local_size=2)(*inputs)


def test_register_blocks_become_scalars_owned_by_each_item():
    """The 4x2 block accumulator of each work-item (indices 8*lid1 + 2*lid0 + r with r < 8)
    becomes eight registers; the block copies of A and B too; the output leaves through the
    write view `map join`."""
    prog, _ = CASES["mm_register_blocked_4x2_rectangular"]
    translated = dpia.translate(prog)
    assert translated.local_size == ((0, 4), (1, 4))
    src = cg.emit(translated)
    assert not re.search(r"(?<!local )float \w+\[", src), "a private array is left"
    assert len(set(re.findall(r"float (acc\d+_\d+);", src))) == 16  # the tile's block and the k loop's copy
    # the launch contract fixes the group's shape: the compiler is told, and loops over
    # exactly one group's items become one iteration per item
    assert src.startswith("__attribute__((reqd_work_group_size(4, 4, 1)))")
    # the copies of 4x16 tiles still stride, by the contract's constant (the compiler knows their trip counts)
    assert "const int lid" in src and "get_local_size" not in src
    assert re.search(r"lid\d+ < 16; lid\d+ \+= 4\)", src)


def test_private_array_shared_between_items_is_not_privatised():
    """Items 0 and 1 of `map_local` both touch element 1 (indices lid and lid + 1): not owned.
    The translation refuses to write such an array from the functional program (a parallel
    loop writing a private temporary), so the imperative program is built here."""
    from functional.nat import Nat
    from functional.nat import Var as NatVar
    from functional.types import AddressSpace, ArrayType, f32
    from imperative.ir import Assign, Idx, IdxAcc, Level, Lit, Mem, MemAcc, New, Op, ParFor, Program, seq
    from imperative.passes import privatise, resolve_views

    def arr(n, t):
        return ArrayType(Nat.const(n), t)

    xs, out = Mem("xs", arr(8, f32), AddressSpace.GLOBAL), Mem("output", arr(2, arr(4, f32)), AddressSpace.GLOBAL)
    tmp = Mem("tmp", arr(5, f32), AddressSpace.PRIVATE)
    wg, l1, l2 = NatVar("wg", 0, Nat.const(2)), NatVar("l1", 0, Nat.const(5)), NatVar("l2", 0, Nat.const(4))
    write = ParFor(Level.LOCAL, 0, l1, Nat.const(5), Assign(IdxAcc(MemAcc(tmp), Nat.atom(l1), f32), Lit(1.0, f32)))
    pair = Op("add", (), (Idx(tmp, Nat.atom(l2), f32), Idx(tmp, Nat.atom(l2) + 1, f32)), f32)
    read = ParFor(Level.LOCAL, 0, l2, Nat.const(4),
                  Assign(IdxAcc(IdxAcc(MemAcc(out), Nat.atom(wg), arr(4, f32)), Nat.atom(l2), f32), pair))
    body = ParFor(Level.WORKGROUP, 0, wg, Nat.const(2), New(tmp, seq(write, read)))
    before = resolve_views(Program("p", (xs,), out, (), body))
    assert privatise(before).body == before.body

    prog = fl.fun([fl.array(fl.nat("N", multiple_of=4), fl.f32)], lambda xs: fl.join(fl.map_workgroup(
        lambda c: fl.map_local(lambda p: fl.fst(p) + fl.snd(p), fl.zip(
            fl.take(4, fl.to_private(fl.map_local(lambda x: x, fl.pad_const(0, 1, 0.0, c)))),
            fl.drop(1, fl.to_private(fl.map_local(lambda x: x, fl.pad_const(0, 1, 0.0, c)))))), fl.split(4, xs))))
    with pytest.raises(TranslationError, match="writes a private temporary"):
        dpia.translate(prog, passes=())


@pytest.mark.parametrize("coefs, counts, offsets, owned", [
    ({0: 1}, {0: 4}, {0, 1}, False),             # item i touches i and i + 1: overlaps item i + 1
    ({0: 2}, {0: 4}, {0, 1}, True),              # blocks of two
    ({0: 2, 1: 8}, {0: 4, 1: 4}, {0, 1}, True),  # a mixed radix
    ({0: 2, 1: 6}, {0: 4, 1: 4}, {0, 1}, False), # rows overlap: item (0, 1) = item (3, 0)
    ({}, {}, {0, 3}, True),                      # constant indices: every item its own copy
])
def test_privatise_requires_disjoint_parts(coefs, counts, offsets, owned):
    from imperative.passes import _owned_parts

    assert _owned_parts(coefs, counts, offsets) is owned


def test_barriers_only_where_local_memory_is_communicated():
    prog, _ = CASES["schedule_mm_tiled_local_memory"]
    src = cg.emit(dpia.translate(prog))
    # per tile step: one barrier after both tile copies (the product reads them), one before
    # the next step overwrites the tiles; none between the two copies; and one closing each of the
    # group's output tiles (a loop holding barriers, then the stores: passes._loop_barriers_closed)
    assert src.count("barrier(") == 3
    # (each group loop is one group's guarded iteration: plan.one_group_each): after the stores, only closing braces
    closing = src.rindex("barrier(CLK_LOCAL_MEM_FENCE);")
    assert src.rindex("output[") < closing and set(src[closing + len("barrier(CLK_LOCAL_MEM_FENCE);"):]) <= set("} \n"), src
    body = src[src.index("for (int i"):]
    copy_b = body.index("= b[")
    assert "barrier(" not in body[:copy_b]


def test_a_scalar_array_read_as_vectors_is_declared_aligned():
    """A private array of scalars that a view reads as float4 is declared 16-byte aligned and
    read through vload4 (a vector pointer cast of a private array crashes Oclgrind's
    uninitialised-value check; registers need no alignment hint)."""
    n = fl.nat("N", multiple_of=8)
    prog = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.join(fl.map_global(lambda chunk: fl.let(
        fl.to_private(fl.map_seq(lambda x: x * 2.0, chunk)),
        lambda p: fl.as_scalar(fl.map_seq(lambda v: v, fl.as_vector(4, p)))), fl.split(8, xs))))
    src = cg.emit(dpia.translate(prog))
    assert "[8] __attribute__((aligned(16)));" in src and "vload4(i4, tmp2)" in src and "(private" not in src
    x = np.arange(32, dtype=np.float32)
    np.testing.assert_array_equal(dpia.compile(prog)(x), 2 * x)


def _rows_of_groups(read: str) -> str:
    stored = "to_local (map_local 0 (fun(x) => x * 2.0) row)"
    return ("fun(xs: 2.2.4.8.f32) => to_global (map_workgroup 1 (fun(b) => to_global (map_workgroup 0 (fun(blk) => "
            f"to_global (map_local 1 (fun(row) => map_local 0 (fun(x) => x + 1.0) ({read.format(stored)})) blk)) b)) xs)")


def test_a_local_temporary_inside_another_local_dimensions_loop_gets_a_slot_per_row():
    """map_local 1's rows run at once on different items: each row's to_local array is its own
    slot of one local array (imperative.passes.slot_local_temporaries; they shared one array
    before, a race), read here at other items' elements (reorder_stride), under Oclgrind."""
    program = fl.infer(fl.parse(_rows_of_groups("reorder_stride 2 ({})")))
    kernel = dpia.compile(program, name="rows_slots")
    x = np.random.default_rng(10).standard_normal((2, 2, 4, 8)).astype(np.float32)
    np.testing.assert_array_equal(kernel(x), fl.interpret(program, x))
    assert re.search(r"local float tmp\d+\[32\]", kernel.source)  # 4 rows x 8


def test_a_local_temporary_each_item_reads_back_alone_is_its_private_value():
    """The same rows read at each item's own element: private per item (private_blocks)."""
    program = fl.infer(fl.parse(_rows_of_groups("{}")))
    kernel = dpia.compile(program, name="rows_blocks")
    x = np.random.default_rng(11).standard_normal((2, 2, 4, 8)).astype(np.float32)
    np.testing.assert_array_equal(kernel(x), fl.interpret(program, x))
    assert "local float" not in kernel.source and dict(kernel.program.local_size)[0] == 8
