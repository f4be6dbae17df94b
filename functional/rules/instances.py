"""Random instances for checking rules against the interpreter: sizes that satisfy side
conditions, input data, and pools of scalar functions.

An example function takes a `numpy.random.Generator` and returns `(program, inputs,
params)`: a program in which the rule applies somewhere (found by `top_down`), NumPy
inputs for it, and the rule's parameters.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dsl as fl
from ..nat import Nat, nat
from ..types import array, f32  # noqa: F401 -- rule examples build types with these

# Unary f32 -> f32 functions, as Python functions for the DSL.
UNARY = [
    lambda x: x * 2.0 + 1.0,
    lambda x: -x,
    lambda x: fl.abs(x),
    lambda x: x * x,
    lambda x: fl.max(x, 0.25),
    lambda x: fl.select(x < 0.0, x * 0.5, x + 1.0),
]

# Associative, commutative operators with their neutral elements (reduce needs both).
MONOIDS = [
    (fl.add, 0.0),
    (fl.max, -math.inf),
    (fl.min, math.inf),
    (fl.mul, 1.0),
]


def vector_reduction(op, z, w: int):
    """`fun(xs) => reduce op (cast vec[f32, w] z) (as_vector w xs)`: a reduction of w-wide
    vectors from the splat of op's neutral element (what reduce_vectorize leaves), the
    instance of functional.algebra's fact that the splat is neutral for the lane-wise op."""
    from ..types import VectorType

    return lambda xs: fl.reduce(op, fl.cast(VectorType(f32, w), z), fl.as_vector(w, xs))


def pick(rng: np.random.Generator, pool: list):
    return pool[int(rng.integers(len(pool)))]


def size(rng: np.random.Generator, multiple: int = 1, lo: int = 1, hi: int = 6) -> int:
    """A random length that is a multiple of `multiple`."""
    return multiple * int(rng.integers(lo, hi + 1))


def length(rng: np.random.Generator, value: int, multiple: int = 1) -> Nat | int:
    """Either the constant `value` or a size variable known to be a multiple of `multiple`
    (instances check symbolic side conditions too; inputs bind the variable to `value`)."""
    if rng.random() < 0.5:
        return value
    return nat("N", multiple_of=multiple)


def data(rng: np.random.Generator, *shape: int, monoid=None) -> np.ndarray:
    """f32 data; products stay tame (values near 1) when the monoid multiplies."""
    if monoid is not None and monoid[0] is fl.mul:
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def vector_program(n, body):
    """`fun(xs: n.f32) => body(xs)`."""
    return fl.fun([array(n, f32)], body)


def matrix_program(m, n, body):
    return fl.fun([array(m, array(n, f32))], body)
