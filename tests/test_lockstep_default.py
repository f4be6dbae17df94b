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

import sys
from pathlib import Path

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
    fixed = fl.infer(fix_sizes(program, sizes))
    return derive(fixed, default_schedule(fixed, target))


def test_gpus_are_told_their_items_run_in_lockstep_and_cpus_not():
    gpu = DeviceLimits(1024, 48 * 1024, 132, "GPU")
    cpu = DeviceLimits(4096, 512 * 1024, 2, "CPU")
    assert gpu.lowering_target() == LOCKSTEP and cpu.lowering_target() == Target()


def test_an_interleaved_first_stage_keeps_about_a_million_work_items():
    assert interleaved_chunk(Nat.const(1 << 20)) == INTERLEAVED_CHUNK
    assert interleaved_chunk(Nat.const(1 << 26)) == 64  # 2^20 work-items
    assert interleaved_chunk(Nat.const(1 << 28)) == 256
    assert interleaved_chunk(Nat.const(1 << 34)) == 1024  # at most
    assert interleaved_chunk(Nat.atom(fl.nat("N"))) == INTERLEAVED_CHUNK


@pytest.mark.parametrize("name", sorted(REDUCING))
def test_the_lockstep_default_agrees_with_numpy_on_pocl(name):
    """Stages interleaved (reorder_stride in the derivation, a remainder folded after), the
    result NumPy's at a size Oclgrind checks and at the suite's moderate size."""
    entry = suite.BY_NAME[name]
    for sizes in (REDUCING[name], entry.moderate):
        low, derivation = _lowered(entry.program, sizes, LOCKSTEP)
        assert "reduce_reorder" in derivation.to_text()
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
