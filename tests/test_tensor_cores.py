"""TF32 tensor cores, a device intrinsic: `tf32` (rounding), the fragment layouts of PTX's
m16n8k8 product, `mma_sync` (the interpreter's meaning, its two translations), and the matrix
product written with them (examples/tf32_gemm.py).

The instruction cannot run here (PoCL and Oclgrind have no tensor cores): the programs run here
through the translation for targets without them (each lane's own sums, read through the
fragments' layouts) and are compared with the interpreter, every launch replayed under Oclgrind
(tests/oclgrind.py); the tensor-core translation is checked structurally, and on the GPU by
benchmarks/tf32_gemm_gpu.py (benchmarks/RESULTS.md)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import codegen_opencl.opencl as cg
import dpia
import functional as fl
from codegen_opencl.runtime import RuntimeError_, choose_device, device_intrinsics
from dpia.pipeline import PIPELINE, Options
from dpia.translate import TranslationError
from examples.tf32_gemm import mm_tf32
from functional.nat import evaluate
from functional.primitives import MMA_FRAGMENTS, fragment_holder, fragment_index, fragment_position, tf32_round
from imperative.passes import _owned_parts

TENSOR_CORES = Options(intrinsics=frozenset({"tensor_cores_tf32"}))


def _tile(rows, cols):
    return fl.array(rows, fl.array(cols, fl.f32))


def _reference(a, b, c=None):
    d = tf32_round(a).astype(np.float64) @ tf32_round(b).astype(np.float64)
    return d if c is None else c + d


def _operands(seed: int, count: int):
    """C, A and B of `count` products, float32."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s).astype(np.float32) for s in [(count, 16, 8), (count, 16, 8), (count, 8, 8)])


# ------------------------------------------------------------------------------- tf32


def test_tf32_rounds_to_nearest_ties_away_keeping_nan_and_infinities():
    ulp = 2.0 ** -10
    x = np.array([1.0, 1 + ulp / 2, -(1 + ulp / 2), 1 + ulp / 4, 1 + 3 * ulp / 4, 2 - ulp / 2, np.inf, -np.inf,
                  np.nan, 0.0, -0.0, np.finfo(np.float32).max, 1e-40], np.float32)
    got = tf32_round(x)
    want = np.array([1.0, 1 + ulp, -(1 + ulp), 1.0, 1 + ulp, 2.0, np.inf, -np.inf, np.nan, 0.0, -0.0, np.inf,
                     np.float32(1e-40)], np.float32)
    np.testing.assert_array_equal(got[:12], want[:12])
    assert np.signbit(got[10])
    # a subnormal keeps its top 10 mantissa bits, rounded
    assert got[12] == (np.float32(1e-40).view(np.uint32) + 0x1000 & 0xFFFFE000).view(np.float32)
    assert np.all((tf32_round(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
                   .view(np.uint32) & 0x1FFF) == 0)


def test_a_kernel_rounds_to_tf32_bit_for_bit_as_the_interpreter():
    n = fl.nat("N")
    program = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map_global(fl.lam(lambda x: fl.tf32(x)), xs))
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(500) * 10.0 ** rng.integers(-30, 30, 500),
                        [np.inf, -np.inf, np.nan, 0.0, np.finfo(np.float32).max, 1 + 2.0 ** -11]]).astype(np.float32)
    out = dpia.compile(program)(x)
    want = fl.interpret(fl.infer(program), x)
    np.testing.assert_array_equal(out.view(np.uint32)[~np.isnan(x)], want.view(np.uint32)[~np.isnan(x)])
    assert np.isnan(out[np.isnan(x)]).all()


# ---------------------------------------------------------------------------- fragments


@pytest.mark.parametrize("kind", sorted(MMA_FRAGMENTS))
def test_each_element_of_a_tile_is_held_by_exactly_one_lane_and_place(kind):
    rows, cols, per_lane = MMA_FRAGMENTS[kind]
    held = {fragment_position(kind, lane, r) for lane in range(32) for r in range(per_lane)}
    assert held == {(i, j) for i in range(rows) for j in range(cols)}
    for lane in range(32):
        for r in range(per_lane):
            row, col = fragment_position(kind, lane, r)
            assert fragment_holder(kind, row, col) == (lane, r)
    gather = fragment_index(kind)
    for i in range(32 * per_lane):
        row, col = fragment_position(kind, i // per_lane, i % per_lane)
        assert evaluate(gather(i, 32 * per_lane), {}) == row * cols + col
    tile = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    frags = fl.interpret(fl.infer(fl.fun([_tile(rows, cols)], lambda t: fl.fragment(kind, t))), tile)
    assert frags.shape == (32, per_lane)
    for lane in range(32):
        for r in range(per_lane):
            assert frags[lane, r] == tile[fragment_position(kind, lane, r)]
    back = fl.interpret(fl.infer(fl.fun([_tile(32, per_lane)], lambda f: fl.unfragment(kind, f))), frags)
    np.testing.assert_array_equal(back, tile)


def test_the_ptx_layout_of_a_fragment_as_documented():
    # PTX ISA, mma.m16n8k8 .tf32: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (k=t, n=g), b1 (k=t+4, n=g);
    # c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1)
    lane = 13  # g = 3, t = 1
    assert [fragment_position("a", lane, r) for r in range(4)] == [(3, 1), (11, 1), (3, 5), (11, 5)]
    assert [fragment_position("b", lane, r) for r in range(2)] == [(3, 1), (3, 5)]  # (n, k): B's columns
    assert [fragment_position("c", lane, r) for r in range(4)] == [(3, 2), (3, 3), (11, 2), (11, 3)]


# ----------------------------------------------------------------------------- mma_sync


def _one_product_per_group():
    n = fl.nat("N")
    return fl.fun([fl.array(n, _tile(16, 8)), fl.array(n, _tile(16, 8)), fl.array(n, _tile(8, 8))],
                  lambda cs, as_, bs: fl.map_workgroup(fl.lam(lambda t: fl.unfragment("c", fl.mma_sync(
                      fl.fragment("c", fl.fst(fl.fst(t))), fl.fragment("a", fl.snd(fl.fst(t))),
                      fl.fragment("b", fl.snd(t))))), fl.zip(fl.zip(cs, as_), bs)))


def test_mma_sync_means_c_plus_the_product_of_its_operands_rounded_to_tf32():
    c, a, b = _operands(2, 3)
    out = fl.interpret(fl.infer(_one_product_per_group()), c, a, b)
    want = np.stack([_reference(a[i], b[i].T, c[i]) for i in range(3)])
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-5)
    # TF32, not float32: the products differ from float32's by far more than float32's rounding
    assert np.abs(out - np.stack([c[i] + a[i] @ b[i].T for i in range(3)])).max() > 1e-4


def test_without_tensor_cores_each_lane_sums_its_own_elements_and_agrees():
    c, a, b = _operands(3, 5)
    program = _one_product_per_group()
    out = dpia.compile(program)(c, a, b)
    np.testing.assert_allclose(out, fl.interpret(fl.infer(program), c, a, b), rtol=0, atol=1e-5)
    text = str(dpia.translate(program))
    assert "mma_tf32" not in text and text.count("mul(") == 4 * 8  # a lane's four sums of eight products
    assert text.count("tf32(") >= 8 + 8  # their operands rounded: a row of A and a column of B at least


def test_with_tensor_cores_each_lane_passes_its_fragments_to_the_instruction():
    src = cg.emit(PIPELINE.translate(_one_product_per_group(), TENSOR_CORES))
    assert cg.emit(dpia.translate(_one_product_per_group(), intrinsics={"tensor_cores_tf32"})) == src
    assert src.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") == 1
    # the helper rounds its six operand registers: half a TF32 ulp added, the instruction truncates
    assert "cvt.rna" not in src and src.count("+ half_ulp") == 6
    assert "asm volatile" not in src  # a pure instruction: the compiler may share the fragments' reads
    call = re.search(r"(mma\d+) = dpia_mma_tf32\(\(\(float4\)\((.*?)\)\), \(\(float4\)\((.*?)\)\), "
                     r"\(\(float2\)\((.*?)\)\)\);", src)
    assert call is not None
    lane = re.search(r"for \(int (lane\d+) = get_local_id\(0\); \1 < 32;", src).group(1)
    # lane l's c0 is C[g][2t] = element 2l of the 16 x 8 tile, its a0 A[g][t]
    assert f"cs[128 * wg1 + 2 * {lane}]" in call.group(2)
    assert call.group(3).startswith(f"as_[({lane} % 4) + 8 * ({lane} / 4) + 128 * wg1]")
    for r in range(4):
        assert f"{call.group(1)}.s{r};" in src


def test_a_device_without_tensor_cores_refuses_their_kernel_before_building():
    device = choose_device()
    assert "tensor_cores_tf32" not in device_intrinsics(device)
    program = PIPELINE.translate(_one_product_per_group(), TENSOR_CORES)
    from codegen_opencl.runtime import Kernel

    with pytest.raises(RuntimeError_, match="tensor_cores_tf32.*mma_sync: TF32 tensor cores.*does not offer"):
        Kernel(program, device=device)


@pytest.mark.parametrize("build, message", [
    (lambda t: fl.map_global(fl.lam(lambda x: fl.unfragment("c", fl.mma_sync(
        fl.fragment("c", fl.fst(fl.fst(x))), fl.fragment("a", fl.snd(fl.fst(x))), fl.fragment("b", fl.snd(x))))), t),
     "runs on a work-group's items: outside map_local 0"),
    (lambda t: fl.map_workgroup(fl.lam(lambda x: fl.to_local(fl.map_local(fl.lam(lambda _: fl.map_seq(
        fl.lam(lambda v: v), fl.join(fl.to_private(fl.mma_sync(
            fl.fragment("c", fl.fst(fl.fst(x))), fl.fragment("a", fl.snd(fl.fst(x))),
            fl.fragment("b", fl.snd(x))))))), fl.generate(2, fl.lam(lambda _: 0.0))))), t),
     "runs on a work-group's items: outside map_local 0"),
])
def test_mma_sync_where_a_warp_cannot_run_it_is_refused(build, message):
    n = fl.nat("N")
    program = fl.fun([fl.array(n, _tile(16, 8)), fl.array(n, _tile(16, 8)), fl.array(n, _tile(8, 8))],
                     lambda cs, as_, bs: build(fl.zip(fl.zip(cs, as_), bs)))
    with pytest.raises(TranslationError, match=message):
        dpia.translate(program)


# ------------------------------------------------------------- the matrix product (examples)


@pytest.mark.parametrize("shape, sizes, staging", [
    ((16, 8, 16, 8, 8), (32, 16, 16), "flat"), ((32, 32, 16, 16, 8), (64, 64, 16), "flat"),
    ((32, 16, 16, 8, 16), (32, 32, 32), "flat"), ((16, 16, 16, 16, 8), (16, 32, 24), "flat"),
    ((32, 32, 16, 16, 8), (64, 32, 16), "rows"), ((32, 16, 16, 8, 16), (32, 32, 32), "rows")])
def test_the_tf32_matrix_product_agrees_with_the_interpreter(shape, sizes, staging):
    m, n, k = sizes
    rng = np.random.default_rng(4)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    program = mm_tf32(*shape, staging=staging)
    want = fl.interpret(fl.infer(program), a, b)
    np.testing.assert_allclose(want, _reference(a, b), rtol=0, atol=1e-4)
    np.testing.assert_allclose(dpia.compile(program)(a, b), want, rtol=0, atol=1e-4)


def test_the_tensor_core_product_runs_four_warps_with_their_accumulators_in_registers():
    program = PIPELINE.translate(mm_tf32(128, 128, 64, 64, 32), TENSOR_CORES)
    src = cg.emit(program)
    assert dict(program.local_size) == {0: 32, 1: 2, 2: 2}  # a warp's lanes, then 2 x 2 warps
    assert src.count("dpia_mma_tf32(") == 1 + 4 * 8  # the helper, then a warp's 4 x 8 tiles per step of 8
    assert not re.search(r"float acc\w*\[", src)  # no private arrays: every accumulator a scalar
    assert len(re.findall(r"float acc\d+_\d+;", src)) == 2 * 4 * 8 * 4  # a lane's, for the block and the chunk
    # after the copies, before the next chunk's, and one closing each of the group's blocks (its chunk loop
    # holds barriers, the stores follow: imperative.passes._loop_barriers_closed)
    assert src.count("barrier(CLK_LOCAL_MEM_FENCE)") == 3
    assert "[4608]" in src and "[4352]" in src  # 128 rows of 32 + 4 values of A, 32 of 128 + 8 of B


@pytest.mark.parametrize("shape, message", [((48, 8, 24, 8, 8), "multiples of 16 x 8"),
                                            ((64, 64, 64, 64, 12), "multiples of 8"),
                                            ((16, 24, 16, 8, 8), "not rows of 96 items")])
def test_mm_tf32_refuses_shapes_that_are_not_whole_tiles(shape, message):
    with pytest.raises(ValueError, match=message):
        mm_tf32(*shape)
    with pytest.raises(ValueError, match="staging 'columns': flat or rows"):
        mm_tf32(staging="columns")


def test_interleaved_parts_of_items_are_owned_when_no_two_meet():
    # a warp's fragments: lane l holds 128 t + 4 l + r for tiles t < 2, r < 4
    assert _owned_parts({0: 4}, {0: 32}, {128 * t + r for t in range(2) for r in range(4)})
    assert not _owned_parts({0: 4}, {0: 32}, {0, 1, 2, 3, 4})  # lane l's 4 l + 4 is lane l+1's
    assert _owned_parts({0: 4}, {0: 32}, {0, 1, 2, 3})  # the mixed radix, as before


# ----------------------------------------------- derived from mm's high-level form by rules


def _tf32_mm(multiple: int = 32):
    m, n, k = fl.nat("M", multiple_of=multiple), fl.nat("N", multiple_of=multiple), fl.nat("K", multiple_of=8)
    return fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))], lambda a, b: fl.map(
        lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
            lambda p: fl.tf32(fl.fst(p)) * fl.tf32(fl.snd(p)), fl.zip(r, c))), fl.transpose(b)), a))


@pytest.mark.parametrize("shape, sizes", [((32, 32, 16, 16), (64, 32, 24)), ((32, 16, 32, 8), (32, 64, 16)),
                                          ((16, 16, 16, 16), (16, 16, 8))])
def test_mm_with_tf32_products_derives_to_tensor_core_tiles_and_agrees(shape, sizes):
    from functional import schedules as sch
    from functional.derivation import derive

    low, derivation = derive(fl.infer(_tf32_mm(max(shape[:2]))), sch.mm_tensor_cores(*shape))
    rules = [step.rule for step in derivation.steps]
    assert "warp_tile_mma" in rules and "materialise_fragments_by_lanes" in rules
    m, n, k = sizes
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    want = fl.interpret(low, a, b)
    np.testing.assert_allclose(want, _reference(a, b), rtol=0, atol=1e-4)
    np.testing.assert_allclose(dpia.compile(low)(a, b), want, rtol=0, atol=1e-4)
    src = cg.emit(PIPELINE.translate(low, TENSOR_CORES))
    bm, bn, wm, wn = shape
    assert src.count("dpia_mma_tf32(") == 1 + (wm // 16) * (wn // 8)  # the helper, then a warp's tiles
    assert not re.search(r"float acc\w*\[", src)  # the fragment accumulators are registers


def test_mm_tensor_cores_needs_products_the_program_rounds_to_tf32():
    from functional import schedules as sch
    from functional.derivation import derive
    from functional.errors import StrategyError

    m, n, k = fl.nat("M", multiple_of=32), fl.nat("N", multiple_of=32), fl.nat("K", multiple_of=8)
    plain = fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))], lambda a, b: fl.map(
        lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))),
                         fl.transpose(b)), a))
    with pytest.raises(StrategyError, match="warp_tile_mma"):
        derive(fl.infer(plain), sch.mm_tensor_cores(32, 32, 16, 16))


# ------------------------------------------- lane-owned accumulators, the default lowering's phase


def _derived(shape=(32, 32, 16, 16), multiple: int = 32):
    from functional import schedules as sch
    from functional.derivation import derive

    return derive(fl.infer(_tf32_mm(multiple)), sch.mm_tensor_cores(*shape))[0]


def test_fragment_accumulators_each_lane_reads_only_its_own_need_no_store():
    from functional.storage import first_need

    low = _derived()
    assert first_need(low, required_only=True) is None
    assert first_need(low) is None  # the fragments stay the lanes' registers (no global accumulator proposed)


@pytest.mark.parametrize("edit, why", [
    # the accumulator's lanes read by one loop of every item: each item's copy holds only its own lane's values
    (lambda text: text.replace("map_local 0 (fun(lane)", "map_seq (fun(lane)", 1), "read by all of them"),
    # mma_sync reading its accumulator at other lanes (rotated)
    (lambda text: text.replace("mma_sync (fst t)", "mma_sync (gather (fun(i, n) => (i + 1) % 32) (fst t))", 1),
     "read by all of them"),
])
def test_an_accumulator_read_across_lanes_is_stored_for_all_items(edit, why):
    from functional.storage import first_need

    text = str(_derived())
    changed = edit(text)
    assert changed != text
    need = first_need(fl.infer(fl.parse(changed)), required_only=True)
    assert need is not None and need.rule == "materialise_global" and why in need.why


def test_written_lanes_follow_sequential_loops_to_the_parallel_level():
    from functional.lane_ownership import Lanes, reads_own_lanes, written_lanes

    text = "fun(xs: 2.32.4.f32) => map_seq (fun(x) => map_local 0 (fun(l) => map_seq (fun(v) => v) l) x) xs"
    body = fl.infer(fl.parse(text)).body
    assert written_lanes(body) == Lanes(1, 0)
    assert written_lanes(fl.infer(fl.parse(text.replace("map_local 0", "map_global 0"))).body) is None
    own = fl.infer(fl.parse("fun(v: 2.32.4.f32) => map_seq (fun(x) => map_local 0 (fun(l) => l) x) v"))
    assert reads_own_lanes(own.body, {"v": Lanes(1, 0)})
    assert not reads_own_lanes(own.body, {"v": Lanes(0, 0)})  # a sequential loop over the owned level
    assert not reads_own_lanes(own.body, {"v": Lanes(1, 1)})  # items of another dimension


def _tensor_core_target():
    from functional.default_lowering import Target

    return Target(lockstep_items=True, tensor_cores=True)


@pytest.mark.parametrize("sizes, tile", [((64, 64, 16), (64, 64)), ((48, 80, 24), (16, 16))])
def test_the_default_lowering_puts_tf32_dot_products_on_tensor_cores_where_the_device_has_them(sizes, tile):
    from dpia.programs import fix_sizes
    from functional.default_lowering import default_schedule
    from functional.derivation import derive

    m, n, k = sizes
    program = fix_sizes(fl.infer(_tf32_mm(16)), {"M": m, "N": n, "K": k})
    low, derivation = derive(program, default_schedule(target=_tensor_core_target()))
    assert "warp_tile_mma" in [step.rule for step in derivation.steps]
    assert f"split {tile[0]}" in str(low) and f"split {tile[1]}" in str(low)  # the first tile that divides
    src = cg.emit(PIPELINE.translate(low, TENSOR_CORES))
    assert "dpia_mma_tf32(" in src and not re.search(r"global float\* restrict acc", src)  # no global accumulator
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(low)(a, b), _reference(a, b), rtol=0, atol=1e-4)


def test_the_default_lowering_on_tensor_cores_is_the_named_schedule():
    from dpia.programs import fix_sizes
    from functional import schedules as sch
    from functional.default_lowering import default_schedule
    from functional.derivation import derive

    program = fix_sizes(fl.infer(_tf32_mm(16)), {"M": 256, "N": 256, "K": 32})
    by_default = derive(program, default_schedule(target=_tensor_core_target()))[0]
    named = derive(program, sch.mm_tensor_cores(128, 128, 64, 64))[0]
    assert cg.emit(PIPELINE.translate(by_default, TENSOR_CORES)) == cg.emit(PIPELINE.translate(named, TENSOR_CORES))


@pytest.mark.parametrize("why, program, sizes, target", [
    ("no tensor cores", "tf32", (64, 64, 16), dict(lockstep_items=True)),
    ("float32 products", "f32", (64, 64, 16), dict(lockstep_items=True, tensor_cores=True)),
    ("no tile divides", "tf32", (40, 24, 16), dict(lockstep_items=True, tensor_cores=True)),
    ("k not a multiple of 8", "tf32", (64, 64, 12), dict(lockstep_items=True, tensor_cores=True)),
])
def test_the_default_lowering_keeps_other_products_off_tensor_cores(why, program, sizes, target):
    from dpia.programs import fix_sizes
    from functional.default_lowering import Target, default_schedule
    from functional.derivation import derive

    m, n, k = sizes
    mk, nk, kk = fl.nat("M"), fl.nat("N"), fl.nat("K")
    product = (lambda p: fl.tf32(fl.fst(p)) * fl.tf32(fl.snd(p))) if program == "tf32" else (
        lambda p: fl.fst(p) * fl.snd(p))
    mm = fl.fun([fl.array(mk, fl.array(kk, fl.f32)), fl.array(kk, fl.array(nk, fl.f32))], lambda a, b: fl.map(
        lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(product, fl.zip(r, c))), fl.transpose(b)), a))
    fixed = fix_sizes(fl.infer(mm), {"M": m, "N": n, "K": k})
    low, derivation = derive(fixed, default_schedule(target=Target(**target)))
    assert "warp_tile_mma" not in [step.rule for step in derivation.steps], why
    if why != "no tile divides":  # the other lowerings are the default's, run by every other test
        return
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(low)(a, b), fl.interpret(fixed, a, b), rtol=1e-5, atol=1e-4)


def test_a_device_with_tensor_cores_tells_the_default_lowering():
    from dpia.explore.space import DeviceLimits

    limits = DeviceLimits(1024, 49152, 132, "GPU", 64, intrinsics=("warp_shuffle", "tensor_cores_tf32"))
    assert limits.lowering_target().tensor_cores
    assert not DeviceLimits(1024, 49152, 132, "GPU", 64, intrinsics=("warp_shuffle",)).lowering_target().tensor_cores


# ------------------------------------------------------------------- allow_tf32 (the user's opt-in)


def test_allow_tf32_rounds_the_products_of_dot_products_only():
    sys_path = str(Path(__file__).resolve().parent.parent / "examples")
    if sys_path not in sys.path:
        sys.path.insert(0, sys_path)
    import seed

    relaxed = fl.allow_tf32(seed.mm)
    assert "tf32 (fst p) * tf32 (snd p)" in str(relaxed) and "tf32" not in str(fl.infer(seed.mm))
    assert fl.allow_tf32(seed.total) == fl.infer(seed.total)  # no products: unchanged
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal((24, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_allclose(fl.interpret(relaxed, a, b), _reference(a, b), rtol=0, atol=1e-4)
    exact = fl.interpret(fl.infer(seed.mm), a, b)
    assert np.abs(fl.interpret(relaxed, a, b) - exact).max() > 1e-5  # the relaxation is visible
    # a fold written by hand (not `reduce (+) z (map (*) (zip ..))`) is left as written
    fold = fl.fun([fl.array(fl.nat("N"), fl.f32), fl.array(fl.nat("N"), fl.f32)], lambda x, y: fl.reduce_seq(
        lambda acc, p: acc + fl.fst(p) * fl.snd(p), 0.0, fl.zip(x, y)))
    assert "tf32" not in str(fl.allow_tf32(fold))


def test_an_allowed_tf32_matrix_product_runs_on_tensor_cores_by_default():
    from dpia.programs import fix_sizes
    from functional.default_lowering import default_schedule
    from functional.derivation import derive

    sys_path = str(Path(__file__).resolve().parent.parent / "examples")
    if sys_path not in sys.path:
        sys.path.insert(0, sys_path)
    import seed

    program = fix_sizes(fl.allow_tf32(seed.mm), {"M": 32, "N": 32, "K": 16})
    low, derivation = derive(program, default_schedule(target=_tensor_core_target()))
    assert "warp_tile_mma" in [step.rule for step in derivation.steps]
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((32, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(low)(a, b), _reference(a, b), rtol=0, atol=1e-4)


def test_no_preset_replaces_a_default_lowering_on_tensor_cores():
    """The presets are float32 kernels of the CUDA cores: where the device's default lowering
    runs the products on tensor cores, dpia run and the explorer's baseline use it (H100, TF32
    mm 4096^3: the register-blocked preset, which derives on TF32 products and rounds its
    operands, 26.2 TFLOP/s; the default 72.7).  Devices without tensor cores, and float32
    products, keep the preset."""
    from dpia.explore.presets import preset_for
    from dpia.explore.space import DeviceLimits

    with_tensor_cores = DeviceLimits(1024, 49152, 132, "GPU", 128, intrinsics=("warp_shuffle", "tensor_cores_tf32"))
    without = DeviceLimits(1024, 49152, 132, "GPU", 128, intrinsics=("warp_shuffle",))
    sizes = {"M": 4096, "N": 4096, "K": 4096}  # the preset's sizes (it needs many work-groups)
    tf32 = fl.infer(_tf32_mm(16))
    assert preset_for(tf32, sizes, with_tensor_cores) is None
    assert preset_for(tf32, sizes, without)[0].strategy_name == "mm_register_blocked"
    f32 = fl.infer(fl.parse("fun(M: nat, N: nat, K: nat, a: M.K.f32, b: K.N.f32) => map (fun(r) => map (fun(c) => "
                            "reduce (+) 0.0 (map (fun(p) => fst p * snd p) (zip r c))) (transpose b)) a"))
    assert preset_for(f32, sizes, with_tensor_cores)[0].strategy_name == "mm_register_blocked"
