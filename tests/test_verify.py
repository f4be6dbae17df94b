"""dpia.verify: a lowered program checked against the interpreter in bounded memory (at
reduced sizes, plus sampled rows at the real sizes) when interpreting the real sizes would
not fit."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import functional as fl
from dpia.programs import random_inputs
from dpia.variants import default_variant
from dpia.verify import VerifyError, interpretable, reduced_sizes, row_map, sampled_rows, verify
from functional.derivation import derive
from functional.infer import infer
from functional.interp import interpret
from functional.schedules import default_schedule

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import seed  # noqa: E402


def _symbolic_default(program):
    typed = infer(program)
    return derive(typed, default_schedule(typed))[0]


def test_row_maps_are_recognised_by_shape():
    assert row_map(infer(seed.mm)) == (0, "M")
    assert row_map(infer(seed.scal)) == (1, "N")
    assert row_map(infer(seed.total)) is None  # a reduction: no row of the result is a row of an input
    assert row_map(infer(seed.stencil)) is None  # a map over windows, not over an input's rows
    # mm of a matrix with itself: its row count is also its column count
    N = fl.nat("N")
    square = fl.fun([fl.array(N, fl.array(N, fl.f32))],
                    lambda a: fl.map(lambda r: fl.map(lambda c: seed.dot_body(r, c), fl.transpose(a)), a))
    assert row_map(infer(square)) is None


def test_the_interpreter_runs_the_real_sizes_only_while_the_work_is_bounded():
    mm = infer(seed.mm)
    assert interpretable(mm, {"M": 256, "N": 256, "K": 256})
    assert not interpretable(mm, {"M": 4096, "N": 4096, "K": 4096})
    assert interpretable(infer(seed.total), {"N": 1 << 28})  # the work is the data itself


def test_small_sizes_are_checked_in_full():
    result = verify(seed.mm, _symbolic_default(seed.mm), {"M": 32, "N": 16, "K": 8})
    assert result.method == "full" and result.correct and result.describe() == "at the real sizes"


def test_large_work_is_checked_at_reduced_sizes_and_on_sampled_rows():
    sizes = {"M": 96, "N": 40, "K": 24}
    result = verify(seed.mm, _symbolic_default(seed.mm), sizes, work_limit=4096, floor=8)
    assert result.method == "reduced+sampled" and result.correct
    assert result.check_sizes == {"M": 8, "N": 8, "K": 8}
    assert result.block == 1 and result.sampled["M"][0] == 0 and result.sampled["M"][-1] == 95
    assert "reduced sizes M=8 N=8 K=8" in result.describe()


def test_a_program_lowered_for_fixed_sizes_is_lowered_again_for_the_reduced_ones():
    sizes = {"M": 96, "N": 40, "K": 24}
    fixed, _ = default_variant(seed.mm, sizes)
    assert reduced_sizes(fixed, sizes) is None
    with pytest.raises(VerifyError, match="lowered_at"):
        verify(seed.mm, fixed, sizes, work_limit=4096, floor=8)
    asked = []

    def lowered_at(check):
        asked.append(check)
        return default_variant(seed.mm, check)[0]

    result = verify(seed.mm, fixed, sizes, work_limit=4096, floor=8, lowered_at=lowered_at)
    assert asked == [{"M": 8, "N": 8, "K": 8}] and result.correct and result.method == "reduced+sampled"


def test_sampled_rows_catch_a_result_wrong_only_at_the_real_sizes():
    mm = infer(seed.mm)
    sizes = {"M": 64, "N": 16, "K": 16}
    inputs = random_inputs(mm, sizes, 0)
    right = interpret(mm, *inputs)
    wrong = right.copy()
    wrong[-1, 3] += 1.0  # the last row: always sampled

    errors, block = sampled_rows(mm, sizes, lambda *xs: right, inputs)
    assert block == 1 and len(errors) == 3 and max(errors.values()) < 1e-6
    errors, _ = sampled_rows(mm, sizes, lambda *xs: wrong, inputs)
    assert errors[("M", 63)] > 1e-2 and errors[("M", 0)] < 1e-6


def test_the_check_of_a_large_mm_uses_bounded_memory():
    """mm at 512^3: the interpreter at the real sizes would hold 512^3 products (512 MiB
    each temporary); the bounded check stays far below."""
    sizes = {"M": 512, "N": 512, "K": 512}
    low = _symbolic_default(seed.mm)
    inputs = random_inputs(infer(seed.mm), sizes, 0)
    tracemalloc.start()
    try:
        result = verify(seed.mm, low, sizes, inputs=inputs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.method == "reduced+sampled" and result.correct
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB"
    assert isinstance(inputs[0], np.ndarray)
