"""Low-level sum programs in the seed's vecSum shape, written directly (the strategies in
functional.schedules derive the one-stage form; these chain two parallel stages so that
the combine step is a single work-group rather than one work-item)."""

from __future__ import annotations

import math

import functional as fl


def _tree(length: int, ys):
    """The seed's halving steps in local memory, from `length` values to 1."""
    return fl.iterate(int(math.log2(length)),
                      lambda zs: fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0), fl.split(2, zs))), ys)


def stage(block: int, local: int, width: int = 1):
    """One vecSum stage: per work-group, `local` items each reduce block/local elements read
    with stride `local` (coalesced), optionally as `width`-wide vectors; then a tree."""

    def per_group(chunk):
        if width == 1:
            firsts = fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0),
                                              fl.split(block // local, fl.reorder_stride(local, chunk))))
            return fl.map_local(lambda x: x, _tree(local, firsts))
        vecs = fl.reorder_stride(local, fl.as_vector(width, chunk))
        firsts = fl.as_scalar(fl.to_local(fl.map_local(
            lambda c: fl.reduce_seq(lambda a, v: a + v, fl.cast(fl.vec(fl.f32, width), 0.0), c),
            fl.split(block // (local * width), vecs))))
        return fl.map_local(lambda x: x, _tree(local * width, firsts))

    return lambda xs: fl.join(fl.map_workgroup(per_group, fl.split(block, xs)))


def two_stage_sum(n: int, block: int, local: int, width: int = 1, local2: int = 256):
    """sum = stage 1 over blocks, stage 2 over the per-group sums in one work-group."""
    groups = n // block
    var = fl.nat("N", multiple_of=n)  # the benchmark fixes n; both stages split it exactly
    return fl.fun([fl.array(var, fl.f32)], lambda xs: fl.reduce_seq(fl.add, 0.0, fl.to_global(
        stage(groups, min(local2, groups))(fl.to_global(stage(block, local, width)(xs))))))
