"""The seed's seven OpenCL reduction kernels, written as low-level functional programs.

Each computes one partial sum per work-group (as the seed's kernels write g_odata[group]);
the block of a group is `local` elements (versions 1-3, 5, 6) or more (4, 7).  How each
maps to the seed, and where the portable program differs:

1. interleaved addressing, divergent branching: every item runs each step; item t adds
   the value s places to its right when t % 2s == 0 (a `select`), others keep theirs.
2. interleaved addressing, no divergence: step k pairs neighbours (2t, 2t+1) and only the
   first half of the items work (`split 2` of the compacted array).
3. sequential addressing: pairs (t, t + n/2) (`reorder_stride` by half the length), so
   active items read consecutive addresses.
4. first add during load: each item adds two elements from global memory while filling
   local memory (block = 2 * local), then version 3's tree.
5. unrolled last warp: the seed lets 32 threads finish without barriers, relying on warp-
   synchronous execution (not portable OpenCL).  Portable equivalent: the tree stops at 64
   values and ONE work-item adds them sequentially, so no barrier is needed and no item
   reads what another is writing.
6. complete unrolling: every tree step is a separate, unrolled phase with a barrier (our
   `iterate` is always unrolled at translation).  The seed's warp-synchronous tail is again
   replaced by barriers.
7. multiple elements per thread: each item first reduces block/local elements read with
   stride `local` (coalesced), then version 6's tree.
"""

from __future__ import annotations

import math

import functional as fl


def _halve_neighbours(ys):
    return fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0), fl.split(2, ys)))


def _tree(steps: int, ys, halve):
    return fl.iterate(steps, halve, ys) if steps else ys


def _load(chunk):
    return fl.to_local(fl.map_local(lambda x: x, chunk))


def _emit(values):
    """The group's result (one value) written by the map_local of the seed's last line."""
    return fl.map_local(lambda x: x, values)


def v1(local: int):
    def step(s):
        def run(ys):
            shifted = fl.take(local, fl.drop(s, fl.pad_const(0, s, 0.0, ys)))
            tid = fl.generate(local, lambda i: i)
            return fl.to_local(fl.map_local(lambda p: fl.select(
                fl.eq(fl.snd(p) % (2 * s), 0), fl.fst(fl.fst(p)) + fl.snd(fl.fst(p)), fl.fst(fl.fst(p))),
                fl.zip(fl.zip(ys, shifted), tid)))
        return run

    def group(chunk):
        ys = _load(chunk)
        s = 1
        while s < local:
            ys = step(s)(ys)
            s *= 2
        return _emit(fl.take(1, ys))

    return group


def v2(local: int):
    return lambda chunk: _emit(_tree(int(math.log2(local)), _load(chunk), _halve_neighbours))


def _sequential_tree(length: int, ys):
    n = length
    while n > 1:
        ys = fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0), fl.split(2, fl.reorder_stride(n // 2, ys))))
        n //= 2
    return ys


def v3(local: int):
    return lambda chunk: _emit(_sequential_tree(local, _load(chunk)))


def _first_add(chunk, local: int, per_item: int):
    """Each of `local` items reduces `per_item` elements read with stride `local`."""
    return fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0), fl.split(per_item, fl.reorder_stride(local, chunk))))


def v4(local: int):
    return lambda chunk: _emit(_sequential_tree(local, _first_add(chunk, local, 2)))


def v5(local: int):
    tail = min(64, local)

    def group(chunk):
        ys = _first_add(chunk, local, 2)
        n = local
        while n > tail:
            ys = fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0), fl.split(2, fl.reorder_stride(n // 2, ys))))
            n //= 2
        return _emit(fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0), fl.split(tail, ys))))

    return group


def v6(local: int):
    return lambda chunk: _emit(_tree(int(math.log2(local)), _first_add(chunk, local, 2), _halve_neighbours))


def v7(local: int, per_item: int = 8):
    return lambda chunk: _emit(_tree(int(math.log2(local)), _first_add(chunk, local, per_item), _halve_neighbours))


VERSIONS = {1: (v1, 1), 2: (v2, 1), 3: (v3, 1), 4: (v4, 2), 5: (v5, 2), 6: (v6, 2), 7: (v7, 8)}


def program(version: int, local: int):
    """`fun(N, xs) => per-group partial sums` for one version; blocks of local * factor."""
    build, factor = VERSIONS[version]
    block = local * factor
    n = fl.nat("N", multiple_of=block)
    return fl.fun([fl.array(n, fl.f32)], lambda xs: fl.join(fl.map_workgroup(build(local), fl.split(block, xs)))), block
