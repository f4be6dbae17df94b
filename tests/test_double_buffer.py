"""Double buffering (issue 13): rule `double_buffer` turns a fold whose step first stages a tile in
local memory into `reduce_seq_double_buffered`, whose translation stages element i + 1 into a second
set of buffers before the step on element i (dpia.translate) by plain copies; rule `async_staging`
makes it `reduce_seq_double_buffered_async`, which on devices with asynchronous copies issues the
staging's plain global -> local copies as cp.async (codegen_opencl.opencl), plain copies elsewhere.

Every kernel here runs on the CPU device and is compared with the interpreter; each launch is
replayed under Oclgrind (tests/oclgrind.py: no race, no barrier divergence, no access out of
bounds).  The cp.async form cannot run here: it is checked as text, and on the GPU by
benchmarks/double_buffer_gpu.py (benchmarks/RESULTS.md)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import codegen_opencl
import dpia
import functional as fl
from dpia.translate import TranslationError
from examples.tf32_gemm import mm_tf32
from functional import schedules as sch
from functional.derivation import derive
from functional.expr import Prim, walk
from functional.primitives import tf32_round
from functional.rules.core import RULES
from functional.rules.macros import r
from functional.strategies import seq, top_down

BLOCKED = dict(n=64, m=64, k=8, l1=4, l2=4, coalesce_a=True, vector_a=4, vector_b=4, interleave_b=4)


def _mm(m: int, n: int, k: int):
    return fl.infer(fl.fun([fl.array(m, fl.array(k, fl.f32)), fl.array(k, fl.array(n, fl.f32))], lambda a, b: fl.map(
        lambda row: fl.map(lambda col: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(row, col))),
                           fl.transpose(b)), a)))


def _blocked(m: int, n: int, k: int):
    return derive(_mm(m, n, k), sch.mm_register_blocked(**BLOCKED))[0]


def _double_buffered(low, asynchronous: bool = False):
    both = seq(top_down(r("double_buffer")), top_down(r("async_staging")))
    return derive(low, both if asynchronous else top_down(r("double_buffer")))[0]


def _operands(m: int, n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)


def _source(low, intrinsics=()) -> str:
    return codegen_opencl.emit(dpia.translate(low, intrinsics=set(intrinsics)))


@pytest.mark.parametrize("k", [64, 72, 8], ids=["8 tiles", "9 tiles", "one tile"])
def test_the_double_buffered_matrix_product_agrees_with_the_interpreter(k):
    low = _double_buffered(_blocked(128, 128, k))
    assert any(isinstance(x, Prim) and x.name == "reduce_seq_double_buffered" for x in walk(low))
    a, b = _operands(128, 128, k)
    got = dpia.compile(low)(a, b)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def _loop_barriers(text: str) -> tuple[int, int]:
    """(barriers, k-tiles loop trips) of the kernel's loop over the k-tiles (the outermost `for (int i`)."""
    loop = text[text.index("for (int i"):]
    depth, end = 0, None
    for end, ch in enumerate(loop):  # the loop's own braces (the group loop's closing barrier follows it)
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "}" and depth == 0:
            break
    trips = int(re.match(r"for \(int i\d+ = 0; i\d+ < (\d+)", loop).group(1))
    return loop[:end].count("barrier("), trips


def test_one_barrier_per_tile_where_the_plain_fold_has_two():
    plain, double = _blocked(128, 128, 64), _double_buffered(_blocked(128, 128, 64))
    barriers, trips = _loop_barriers(_source(plain))
    assert (barriers, trips) == (2, 8)  # per tile: before the copy (the last tile read) and after it
    barriers, trips = _loop_barriers(_source(double))
    assert (barriers, trips) == (2, 4)  # per pair of tiles: each buffer's copy waits for its last reader


def test_the_next_tile_is_staged_before_the_products_of_this_one():
    text = _source(_double_buffered(_blocked(128, 128, 64)))
    loop = text[text.index("for (int i"):]
    declared = re.findall(r"local float (tmp\d+)\[", text)
    assert len(declared) == 4  # two tiles (A's, B's), twice
    first_products = loop.index("acc")  # the step reads the first buffers ...
    assert any(loop.index(name) < first_products for name in declared[2:])  # ... after the second ones are written


def test_asynchronous_copies_where_the_device_has_them():
    low = _double_buffered(_blocked(128, 128, 64), asynchronous=True)
    text = _source(low, {"async_copy"})
    copies = re.findall(r"dpia_cp_async16\(\(\(\(local float4\*\)(tmp\d+)\)", text)
    assert copies and len(set(copies)) == 2  # B's tile rows (float4 as they are), in both buffers
    assert "cp.async.cg.shared.global" in text and "cp.async.ca.shared.global" in text
    # A's tile is transposed as it is staged (a float4 read, its lanes stored apart): 4-byte copies
    lanes = re.findall(r"dpia_cp_async4\(\((tmp\d+) [^;]*\(a \+ ", text)
    assert len(set(lanes)) == 2 and len(lanes) == 3 * 4  # the prologue's, the pair's two: four lanes each
    assert "= ((global const float4*)" not in text  # every staged value copied asynchronously
    barriers = text.count("barrier(")
    assert text.count('asm volatile("cp.async.wait_all;" ::: "memory");\n') == barriers  # every barrier waits first
    assert "cp_async" not in _source(low)  # the portable translation: plain copies
    assert "cp_async" not in _source(_blocked(128, 128, 64), {"async_copy"})  # only a double-buffered staging
    # ... whose fold asks for them: double_buffer alone stages by plain copies on every device
    assert "cp_async" not in _source(_double_buffered(_blocked(128, 128, 64)), {"async_copy"})


@pytest.mark.parametrize("k", [64, 72], ids=["8 tiles", "9 tiles"])
def test_the_asynchronous_fold_is_plain_copies_where_the_device_has_none(k):
    """reduce_seq_double_buffered_async on a device without cp.async (PoCL): the same kernel as the
    plain fold's, computing the product (as mma_sync is sums where there are no tensor cores)."""
    low = _double_buffered(_blocked(128, 128, k), asynchronous=True)
    assert any(isinstance(x, Prim) and x.name == "reduce_seq_double_buffered_async" for x in walk(low))
    assert _source(low) == _source(_double_buffered(_blocked(128, 128, k)))
    a, b = _operands(128, 128, k, seed=2)
    np.testing.assert_allclose(dpia.compile(low)(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_a_device_without_asynchronous_copies_refuses_their_kernel():
    from codegen_opencl.runtime import RuntimeError_, choose_device, device_intrinsics

    device = choose_device()
    if "async_copy" in device_intrinsics(device):
        pytest.skip("this device has asynchronous copies")
    from codegen_opencl.runtime import Kernel

    program = dpia.translate(_double_buffered(_blocked(128, 128, 64), asynchronous=True), intrinsics={"async_copy"})
    with pytest.raises(RuntimeError_, match="async_copy.*asynchronous copies \\(cp.async\\).*does not offer"):
        Kernel(program, device=device)


def test_the_staged_tf32_product_double_buffered_agrees_with_the_interpreter():
    low = _double_buffered(fl.infer(mm_tf32(32, 32, 16, 16, 8)))
    assert any(isinstance(x, Prim) and x.name == "reduce_seq_double_buffered" for x in walk(low))
    a, b = _operands(32, 32, 24, seed=1)  # three k-chunks (K is a size variable): the last one's step alone
    got = dpia.compile(low)(a, b)
    want = tf32_round(a).astype(np.float64) @ tf32_round(b).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _fold(step):
    return fl.infer(fl.fun([fl.array(4, fl.array(8, fl.f32))], lambda xs: fl.reduce_seq(fl.lam(step), 0.0, xs)))


@pytest.mark.parametrize("step, why", [
    (lambda acc, x: fl.let(fl.to_local(fl.map_seq(fl.lam(lambda v: v + acc), x)), fl.lam(
        lambda y: fl.reduce_seq(fl.add, acc, y))), "reads the accumulator"),
    (lambda acc, x: fl.let(fl.map_seq(fl.lam(lambda v: v * 2.0), x), fl.lam(
        lambda y: fl.reduce_seq(fl.add, acc, y))), "stores nothing in local memory"),
    (lambda acc, x: fl.let(fl.map_seq(fl.lam(lambda v: v * 2.0), fl.to_local(fl.map_seq(fl.lam(lambda v: v), x))),
                           fl.lam(lambda y: fl.reduce_seq(fl.add, acc, y))), "computes outside its stores"),
    (lambda acc, x: acc + fl.reduce_seq(fl.add, 0.0, fl.to_local(fl.map_seq(fl.lam(lambda v: v), x))),
     "does not start by staging"),
], ids=["reads acc", "no local store", "computes outside", "no let"])
def test_the_rule_states_why_a_fold_is_not_double_buffered(step, why):
    fold = next(x for x in walk(_fold(step)) if x.__class__.__name__ == "App" and x.t is not None
                and str(x).startswith("reduce_seq (fun(acc"))
    result = RULES["double_buffer"].apply(fold, {})
    assert not result.ok and why in result.reason


def test_the_translation_refuses_a_double_buffered_fold_without_its_staging():
    program = fl.infer(fl.fun([fl.array(4, fl.array(8, fl.f32))], lambda xs: fl.to_global(fl.map_seq(fl.lam(
        lambda _: fl.reduce_seq_double_buffered(fl.lam(lambda acc, x: acc + fl.reduce_seq(fl.add, 0.0, x)), 0.0, xs)),
        fl.generate(1, fl.lam(lambda i: i))))))
    with pytest.raises(TranslationError, match="must be fun\\(acc, x\\) => let V"):
        dpia.translate(program)


def test_both_staged_tiles_of_the_tf32_product_are_staged_ahead_their_padding_zero_filled():
    """mm_tf32's step stages A's chunk, then B's (two lets): the rule stages them together, a step
    ahead; their padded copies (pad_const: `inside ? x[i] : 0`) are cp.async copies whose source
    size is 0 outside (PTX zero-fill)."""
    text = _source(_double_buffered(fl.infer(mm_tf32(32, 32, 16, 16, 8)), asynchronous=True), {"async_copy"})
    buffers = re.findall(r"local float (tmp\d+)\[", text)
    assert len(buffers) == 4  # A's and B's tiles, twice
    filled = set(re.findall(r"dpia_cp_async4_or_zero\(\((tmp\d+) ", text))
    assert filled == set(buffers)
    assert "cp.async.ca.shared.global [%0], [%1], 4, %2;" in text  # the source size operand


def test_a_pair_accumulator_and_a_step_that_reads_its_element_too():
    """The step reads the staged copy and the element itself (x bound to element i in both the
    staging and the step), and updates a pair (its next value through a temporary); five chunks."""
    def step(acc, chunk):
        staged = fl.to_local(fl.map_local(lambda v: v * 2.0, chunk))
        return fl.let(staged, lambda t: fl.pair(fl.fst(acc) + fl.reduce_seq(fl.add, 0.0, t),
                                                fl.max(fl.snd(acc), fl.at(chunk, 3))))

    program = fl.infer(fl.fun([fl.array(3, fl.array(5, fl.array(16, fl.f32)))], lambda g: fl.to_global(
        fl.map_workgroup(lambda chunks: fl.reduce_seq(step, fl.pair(0.0, -1.0e30), chunks), g))))
    low = _double_buffered(program)
    assert any(isinstance(x, Prim) and x.name == "reduce_seq_double_buffered" for x in walk(low))
    x = np.random.default_rng(3).standard_normal((3, 5, 16)).astype(np.float32)
    got, want = dpia.compile(low)(x), fl.interpret(program, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)
