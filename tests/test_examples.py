"""The seed's programs in examples/seed.py: the interpreter agrees with NumPy, and the
lowered versions compile and run on the default OpenCL device (PoCL) with the same result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import seed  # noqa: E402


@pytest.mark.parametrize("example", seed.EXAMPLES, ids=lambda e: e.name)
@pytest.mark.parametrize("n", [16, 64])
def test_interpreter_agrees_with_numpy(example, n):
    assert seed.check(example, n=n, seed=n) < 1e-4


def test_every_seed_program_is_an_example():
    """Each example is named as its module-level program (`dpia run examples/seed.py:NAME`)."""
    assert {e.name for e in seed.EXAMPLES} == {"scal", "asum", "dot", "total", "gemv", "mm", "stencil"}
    assert all(getattr(seed, e.name) is e.program for e in seed.EXAMPLES)


def test_lowered_seed_programs_run_on_the_device(capsys):
    assert seed.run_on_device() == 0
    out = capsys.readouterr().out
    assert "kernel void" in out  # the reduction's OpenCL is printed
