"""Run-time values of the reference interpreter.

A data value is a NumPy array, or a Python tuple of data values (tuples and arrays of
tuples are stored as tuples of arrays: struct of arrays).  Every leaf carries *batch axes*
in front: inside `k` nested maps over lengths `b1..bk`, a value of type `T` is stored with
shape `(b1, ..., bk) + shape(T)`.  A map therefore evaluates its function once on the whole
array rather than once per element, which keeps the oracle fast enough for real tests.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def tmap(f: Callable, *vals):
    """Apply `f` leaf-wise to parallel data values."""
    first = vals[0]
    if isinstance(first, tuple):
        return tuple(tmap(f, *parts) for parts in zip(*vals))
    return f(*vals)


def leaves(v) -> list[np.ndarray]:
    if isinstance(v, tuple):
        return [x for part in v for x in leaves(part)]
    return [v]


def axis_length(v, axis: int) -> int:
    return leaves(v)[0].shape[axis]


def lift(v, depth: int, batch: tuple[int, ...]):
    """View a value built under batch `batch[:depth]` as one under the whole `batch`."""
    if depth == len(batch):
        return v

    def one(a):
        extra = batch[depth:]
        shaped = a.reshape(a.shape[:depth] + (1,) * len(extra) + a.shape[depth:])
        return np.broadcast_to(shaped, batch + a.shape[depth:])

    return tmap(one, v)


def take_index(v, axis: int, k: int):
    index = (slice(None),) * axis + (k,)
    return tmap(lambda a: a[index], v)


def materialise(v):
    """Plain, writable, contiguous arrays for the user."""
    return tmap(lambda a: np.array(a, copy=True, order="C"), v)
