"""The OpenCL printer's branch-free float32 erfc (codegen_opencl.opencl._branch_free_erfc):
kernels that print it agree with Python's double erfc within a few ulp over [-10, 10.06], keep
the special values, build for scalars and for every vector width (a float16 as two float8
pieces), and leave double erfc and the C target to the library's erfc.  Its coefficients come
from benchmarks/erfc_fit.py (which measures the same formula emulated in float32)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpia
import functional as fl
from dpia.programs import fix_sizes
from functional.derivation import derive
from functional.schedules import default_schedule

N = fl.nat("N")
ULPS = 6  # measured on PoCL: 3.6 (the formula with a correctly rounded exp: 3.7; OpenCL allows erfc 16 ulp)
SPECIAL = np.array([0.0, -0.0, 1e-30, -1e-30, 10.06, 10.5, 27.0, -27.0, np.inf, -np.inf, np.nan], np.float32)


def _ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    want = np.array([math.erfc(float(v)) for v in x])
    spacing = np.spacing(np.abs(want.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


def _erfc_kernel(t=fl.f32, name: str = "erfc_all"):
    program = fl.fun([fl.array(N, t)], lambda xs: fl.map(lambda x: fl.erfc(x), xs))
    return dpia.compile(program, name=name)


def test_erfc_of_floats_is_within_a_few_ulp_and_prints_no_library_call():
    x = np.linspace(-10, 10.06, 100003, dtype=np.float32)
    kernel = _erfc_kernel()
    got = kernel(x)
    normal = np.array([math.erfc(float(v)) for v in x]) > 1e-37
    assert _ulps(got, x)[normal].max() <= ULPS
    assert "dpia_erfc_float" in kernel.source and " erfc(" not in kernel.source


def test_erfc_keeps_its_special_values():
    got = _erfc_kernel(name="erfc_special")(SPECIAL)
    want = np.array([math.erfc(float(v)) if not math.isnan(v) else np.nan for v in SPECIAL], np.float32)
    np.testing.assert_array_equal(got, want)  # 1, 1, 1, 1, 0, 0, 0, 2, 0, 2, NaN


@pytest.mark.parametrize("n", [7, 64, 1 << 12])
def test_erfc_builds_for_scalars_and_vectors(n):
    """A length no width divides stays scalar; longer maps compute 4 to 16 lanes at once."""
    program = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map(lambda x: 2.0 * fl.erfc(x - 1.0), xs))
    fixed = fl.infer(fix_sizes(program, {"N": n}))
    low, _ = derive(fixed, default_schedule(fixed))
    kernel = dpia.compile(low, name=f"erfc_{n}")
    x = np.random.default_rng(n).uniform(-6, 6, n).astype(np.float32)
    assert (_ulps(kernel(x) / 2, x - np.float32(1)) <= 2 * ULPS).all()


def test_double_erfc_is_the_librarys():
    x = np.linspace(-5, 5, 101)
    kernel = _erfc_kernel(fl.f64, "erfc_double")
    np.testing.assert_allclose(kernel(x), [math.erfc(v) for v in x], rtol=1e-13, atol=1e-300)
    assert "dpia_erfc" not in kernel.source and "erfc(" in kernel.source


def test_the_c_target_calls_the_librarys_erfc():
    import codegen_opencl

    program = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map_seq(lambda x: fl.erfc(x), xs))
    source = codegen_opencl.emit(dpia.translate(program), target="c")
    assert "erfc(" in source and "dpia_erfc" not in source
