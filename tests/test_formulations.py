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


@pytest.mark.device
def test_products_written_other_ways_get_the_products_lowering():
    """A matrix product written as sums of scaled rows, a batched product and a batch of
    products with one right-hand matrix compile, on this CPU, to the matrix product's preset
    (rules reduce_columns and transpose_rows in the default lowering's folds phase; the preset
    inside a batch map); a fold over stored rows (column sums) keeps its row accumulator."""
    from dpia.explore.stages import prepared_body

    for name, sizes in (("mm_rows", dict(M=64, N=64, K=64)), ("batched_mm", dict(B=2, M=32, N=64, K=32)),
                        ("batched_mm_shared_b", dict(B=2, M=32, N=64, K=32))):
        f = formulations.BY_NAME[name]
        args = formulations.inputs(f, sizes)
        kernel = dpia.compile(f.program, db=False)
        assert relative_error(kernel(*args), f.reference(*args)) <= 1e-4
        assert kernel.variant.kind == "preset", (name, kernel.variant)
    columns = formulations.BY_NAME["column_sums_fold"]
    assert "transpose" not in str(prepared_body(columns.program, dict(M=64, N=64)))
