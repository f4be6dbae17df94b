"""Every program of examples/formulations.py (other writings of the suite's programs, and
common kernels it lacks) means what its reference computes and compiles, by the default
lowering, to kernels that agree with it (checked under Oclgrind after the test)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import dpia
import functional as fl
from dpia.programs import relative_error

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import formulations  # noqa: E402

NAMES = [f.name for f in formulations.FORMULATIONS]


@pytest.mark.device
@pytest.mark.parametrize("name", NAMES)
def test_a_formulation_compiles_to_a_kernel_that_agrees_with_its_reference(name):
    f = formulations.BY_NAME[name]
    args = formulations.inputs(f, f.small)
    want = f.reference(*args)
    assert relative_error(fl.interpret(f.program, *args), want) <= max(f.tolerance, 1e-4)
    kernel = dpia.compile(f.program, db=False, name=dpia.kernel_name_for(name))
    assert relative_error(kernel(*args), want) <= max(f.tolerance, 1e-4), kernel.source
