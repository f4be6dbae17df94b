"""Split-k of a 2D nest (issue 13: SGEMM 8192x64x8192 needs more work-groups than its 64 output
tiles): rule `nest_reduce_stages` computes every element's reduction in chunks as one product per
chunk (a 3D map: chunks x rows x columns), then each element's partials; the exploration tries it
only first in a sequence, replays the nest's own sequences (register-blocked tiles) inside each
chunk's product, and maps the chunks over work-group dimension 2.

Kernels run on the CPU device against the interpreter, each launch replayed under Oclgrind
(tests/oclgrind.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dpia
import functional as fl
from dpia.explore.algorithmic import Heuristics, algorithmic_variants
from dpia.explore.space import DeviceLimits, Point, Skeleton, Space, parse_steps
from dpia.explore.stages import prepared_body
from dpia.programs import random_inputs, relative_error
from examples import seed
from functional import dsl
from functional.derivation import derive
from functional.expr import Lambda, spine
from functional.primitives import is_view_fn
from functional.rules.core import RULES
from functional.schedules import default_schedule
from functional.strategies import at_path, replace_at

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from split_k_gpu import SPLIT_TILES  # noqa: E402 -- the skeleton the GPU benchmark times

MM = fl.infer(seed.mm)


def _cpu() -> DeviceLimits:
    from codegen_opencl.runtime import choose_device

    return DeviceLimits.of(choose_device())


def _body_path(program) -> tuple:
    path, e = (), program
    while isinstance(e, Lambda):
        path, e = path + (0,), e.body
    return path


def test_the_rule_computes_each_chunks_product_then_the_partials():
    program = fl.infer(fl.fun([fl.array(4, fl.array(12, fl.f32)), fl.array(12, fl.array(3, fl.f32))], lambda a, b: fl.map(
        lambda x: fl.map(lambda y: 2.0 * fl.reduce(fl.add, 0.0, fl.map(lambda t: fl.fst(t) * fl.snd(t), fl.zip(x, y)))
                         + fl.at(y, 0), fl.transpose(b)), a)))
    path = _body_path(program)
    result = RULES["nest_reduce_stages"].strategy(r=4)(at_path(program, path))
    assert result.ok, result.reason
    text = str(result.expr)
    assert text.startswith("let (map (fun(k) => map (fun(") and "generate 3" in text and "at (split 4" in text
    rewritten = fl.infer(replace_at(program, path, result.expr))
    a, b = (np.random.default_rng(0).standard_normal(s).astype(np.float32) for s in ((4, 12), (12, 3)))
    np.testing.assert_allclose(np.asarray(fl.interpret(rewritten, a, b)), np.asarray(fl.interpret(program, a, b)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("program, why", [
    (fl.fun([fl.array(4, fl.array(8, fl.f32))], lambda a: fl.map(
        lambda x: fl.map(lambda y: fl.reduce(fl.add, 0.0, fl.map(lambda t: fl.fst(t) * fl.snd(t), fl.zip(x, y))), a), a)),
     None),
    (fl.fun([fl.array(4, fl.array(8, fl.f32))], lambda a: fl.map(
        lambda x: fl.map(lambda y: fl.reduce(fl.add, 0.0, fl.map(lambda t: fl.fst(t) * fl.snd(t), fl.zip(y, y))), a), a)),
     "not [map g] (zip p q)"),
    (fl.fun([fl.array(4, fl.array(8, fl.f32))], lambda a: fl.map(
        lambda x: fl.map(lambda y: fl.reduce(fl.add, 0.0, fl.map(lambda t: fl.fst(t) * fl.snd(t), fl.zip(x, y))),
                         fl.map(lambda z: z, fl.split(8, x))), a)), "not a rectangular nest"),
    (fl.fun([fl.array(4, fl.array(8, fl.f32))], lambda a: fl.map(
        lambda x: fl.map(lambda y: fl.reduce(dsl.max, 0.0, fl.map(lambda t: fl.fst(t), fl.zip(x, y))), a), a)),
     "associative with z its neutral"),
])
def test_the_rule_states_why_it_does_not_apply(program, why):
    typed = fl.infer(program)
    result = RULES["nest_reduce_stages"].strategy(r=2)(at_path(typed, _body_path(typed)))
    if why is None:
        assert result.ok, result.reason  # a nest over the same rows twice (a Gram matrix): rectangular
    else:
        assert not result.ok and why in result.reason, result.reason


def test_a_chunk_of_each_row_is_a_view_read_where_it_is_used():
    """`fun(x) => at (split r x) k` only selects part of x: no copy of the chunks is made, and the
    chunk index of a map over `generate n (fun(i) => i)` is provably below n (no clamping)."""
    program = fl.infer(fl.fun([fl.array(8, fl.array(16, fl.f32))], lambda a: fl.map(
        lambda k: fl.map(lambda x: fl.reduce(fl.add, 0.0, fl.at(fl.split(4, x), k)), a), fl.generate(4, lambda i: i))))
    chunk = fl.infer(fl.fun([fl.array(8, fl.array(16, fl.f32))], lambda a: fl.map(lambda x: fl.at(fl.split(4, x), 1), a)))
    assert is_view_fn(spine(chunk.body)[1][0]) and not is_view_fn(
        spine(fl.infer(fl.fun([fl.array(8, fl.array(16, fl.f32))], lambda a: fl.map(lambda x: fl.at(x, 1), a))).body)[1][0])
    low, _ = derive(program, default_schedule(program))
    kernel = dpia.compile(low)
    assert "max(min(" not in kernel.source, kernel.source
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    np.testing.assert_allclose(kernel(x), fl.interpret(program, x), rtol=1e-5)


def test_split_k_leads_its_sequences_and_replays_the_nests_inside_each_chunk():
    sizes = {"M": 64, "N": 16, "K": 256}
    body = prepared_body(MM, sizes)
    heuristics = Heuristics(length=2, per_depth=(32, 64))
    variants = algorithmic_variants(body, sizes, heuristics)
    led = [v for v in variants if any(s.move == "split_k_nest" for s in v.steps)]
    assert led and len(led) <= heuristics.leading_budget
    assert all(v.steps[0].move == "split_k_nest" and v.steps[0].path == () for v in led)
    inner = heuristics.leading["split_k_nest"]
    assert all(s.path[:len(inner)] == inner for v in led for s in v.steps[1:])
    # the nest's sequences, each found again inside the chunks' product (one move longer)
    plain = {tuple(s.move for s in v.steps) for v in variants if v.steps and v.steps[0].move != "split_k_nest"}
    replayed = {tuple(s.move for s in v.steps[1:]) for v in led if len(v.steps) > 1}
    assert ("tile_2d", "register_blocking_2d") in plain & replayed
    assert any(len(v.steps) == heuristics.length + 1 for v in led)  # the leading move is not counted


@pytest.mark.parametrize("chunk", [16, 64], ids=["4 chunks", "one chunk"])
def test_the_chunks_register_blocked_tiles_compute_the_product(chunk):
    """4 x 4 groups of tiles per chunk, each chunk of k over work-group dimension 2; a second
    kernel adds each element's partials."""
    sizes = {"M": 16, "N": 16, "K": 64}
    space = Space.build(MM, sizes, _cpu(), skeletons=[Skeleton(parse_steps(SPLIT_TILES))])
    point = Point(SPLIT_TILES, {"s0": chunk, "s1": 8, "s2": 8, "s3": min(8, chunk), "s4": 4, "s5": 4})
    low, _ = derive(space.program_for(point), space.strategy(point))
    kernel = dpia.compile(low)
    source = kernel.source
    assert source.count("kernel void") == 2 and "get_group_id(2)" in source
    assert "max(min(" not in source  # the chunk's rows read in place, at unclamped offsets
    inputs = random_inputs(space.program, sizes, 0)
    assert relative_error(kernel(*inputs), fl.interpret(space.program, *inputs)) < 1e-4
