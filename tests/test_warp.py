"""Warp shuffles, a device intrinsic: the rule that ends a work-group's tree in a warp's
registers (warp_tree), its translation to shuffles of the first warp, and the checks that keep
it to devices that offer them (the runtime, dpia.explore.resources, stage 2's skeletons).

The kernels cannot run here: PoCL and Oclgrind offer no shuffles.  The rule is checked against
the interpreter (tests/functional/test_rules.py runs every rule's instances; the meaning of
reduce_warp in tests/functional/test_interp.py), the printed kernels structurally here, and the
kernels themselves on the H200 (benchmarks/RESULTS.md, session 23)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import codegen_opencl.opencl as cg
import dpia
import functional as fl
from codegen_opencl.runtime import RuntimeError_, choose_device, device_intrinsics
from dpia.explore.algorithmic import Heuristics
from dpia.explore.resources import kernel_resources, resource_problem
from dpia.explore.space import DeviceLimits
from dpia.explore.stages import generate_skeletons
from dpia.translate import TranslationError
from functional.expr import NatLambda
from functional.nat import Var
from functional.rules import RULES
from functional.strategies import top_down

N = fl.nat("N", multiple_of=256)
GPU = DeviceLimits(1024, 49152, 132, "GPU")
GPU_SHUFFLES = DeviceLimits(1024, 49152, 132, "GPU", intrinsics={"warp_shuffle"})


def _stage():
    var = Var("l", 1)
    return NatLambda(var, fl.lam(lambda ys: fl.to_local(fl.map_local(
        fl.reduce_seq(fl.add, 0.0), fl.split(2, fl.reorder_stride(fl.Nat.atom(var), ys))))))


def _tree_sum(t=fl.f32, block: int = 256, local: int = 64):
    """The seed's tree: per work-group `local` items sum a block, then log2(local) stages."""
    steps = local.bit_length() - 1
    return fl.fun([fl.array(N, t)], lambda xs: fl.join(fl.map_workgroup(
        lambda c: fl.map_seq(lambda x: x, fl.iterate(steps, _stage(), fl.to_local(fl.map_local(
            fl.reduce_seq(fl.add, fl.cast(t, 0.0) if t != fl.f32 else 0.0),
            fl.split(block // local, fl.reorder_stride(local, c)))))),
        fl.split(block, xs))))


def _warped(program):
    result = top_down(RULES["warp_tree"].strategy())(fl.infer(program))
    assert result.ok, result.reason
    return result.expr


def test_warp_tree_leaves_the_steps_above_a_warp_in_local_memory():
    low = _warped(_tree_sum(local=64))
    text = str(low)
    assert "reduce_warp (+) 0.0 (iterate 1 " in text  # 64 -> 32 in local memory, 32 -> 1 in the warp
    xs = np.random.default_rng(0).standard_normal(1024).astype(np.float32)
    np.testing.assert_array_equal(fl.interpret(low, xs), fl.interpret(fl.infer(_tree_sum(local=64)), xs))


def test_a_warp_reduction_prints_the_first_warps_shuffles():
    src = cg.emit(dpia.translate(_warped(_tree_sum(local=64)), name="warp_sum"))
    assert src.count("shfl.sync.down.b32") == 1  # one helper
    assert re.findall(r"dpia_shuffle_down_f32\(\w+, (\d+)\)", src) == ["16", "8", "4", "2", "1"]
    lanes = re.search(r"for \(int (lane\d+) = get_local_id\(0\); \1 < 32;", src)
    assert lanes is not None
    # the stage before the warp writes local memory its lanes read: a barrier between them
    assert src.index("barrier(CLK_LOCAL_MEM_FENCE)") < lanes.start()
    assert re.search(rf"if \(\(\({lanes.group(1)}\) == 0\)\) {{\n\s+tmp\d+\[0\] = w\d+;", src)


@pytest.mark.parametrize("build, message", [
    (lambda: _tree_sum(t=fl.f64), "32-bit scalars"),
    (lambda: fl.fun([fl.array(N, fl.f32)], lambda xs: fl.join(fl.map_workgroup(lambda c: fl.map_local(
        lambda r: fl.map_seq(lambda x: x, fl.to_private(fl.reduce_warp(fl.add, 0.0, r))), fl.split(32, c)),
        fl.split(256, xs)))), "outside map_local"),
    (lambda: fl.fun([fl.array(N, fl.f32)], lambda xs: fl.join(fl.map_workgroup(lambda c: fl.map_seq(
        lambda x: x, fl.reduce_warp(fl.add, 0.0, c)), fl.split(32, xs)))), "does not say where it is stored"),
    (lambda: fl.fun([fl.array(N, fl.f32)], lambda xs: fl.join(fl.map_workgroup(lambda c: fl.map_seq(
        lambda x: x, fl.to_local(fl.reduce_warp(fl.add, 0.0, c))), fl.split(64, xs)))), "power of two from 2 to 32"),
])
def test_a_warp_reduction_where_it_cannot_run_is_refused(build, message):
    program = build()
    if "32-bit" in message:  # the rule refuses it; the primitive written directly, the translation does
        assert not top_down(RULES["warp_tree"].strategy())(fl.infer(program)).ok
        program = fl.fun([fl.array(N, fl.f64)], lambda xs: fl.join(fl.map_workgroup(lambda c: fl.map_seq(
            lambda x: x, fl.to_local(fl.reduce_warp(fl.add, fl.cast(fl.f64, 0.0), c))), fl.split(32, xs))))
    with pytest.raises(TranslationError, match=message):
        dpia.translate(program)


def test_devices_here_offer_no_shuffles_and_refuse_a_warp_kernel_before_building():
    device = choose_device()
    assert device_intrinsics(device) == frozenset()
    with pytest.raises(RuntimeError_, match="warp_shuffle.*does not offer"):
        dpia.compile(_warped(_tree_sum()))


def test_resources_offer_a_warp_kernel_only_to_a_device_with_shuffles():
    program = dpia.translate(_warped(_tree_sum(local=64)))
    resources = kernel_resources(program, {"N": 256 * 4096})
    assert resources[0].intrinsics == {"warp_shuffle"}
    assert resources[0].local_size == (64,)
    assert resource_problem(resources, GPU).startswith("intrinsics:")
    assert resource_problem(resources, GPU_SHUFFLES) is None


def test_only_a_device_with_shuffles_gets_skeletons_with_warp_trees():
    total = fl.infer(fl.fun([fl.array(fl.nat("N"), fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)))
    sizes, heuristics = {"N": 1 << 20}, Heuristics(length=1)
    plain = generate_skeletons(total, sizes, heuristics)
    with_shuffles = generate_skeletons(total, sizes, heuristics, intrinsics=GPU_SHUFFLES.intrinsics)
    warps = [s for s in with_shuffles if "warp_tree" in s.name]
    assert not any("warp_tree" in s.name for s in plain)
    assert warps and len(with_shuffles) == len(plain) + len(warps)
    # each is the twin of a skeleton of the plain space with the tree's last steps in a warp
    names = {s.name for s in plain}
    assert all(re.sub(r"; warp_tree\(\)@[\d.]+", "", s.name) in names for s in warps)
