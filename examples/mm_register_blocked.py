"""Register-blocked matrix multiplication written directly as a low-level program (the
target shape for the rules: `functional.schedules.mm_register_blocked` derives the same
structure once its accumulator is blocked; until then the benchmark measures this one).

Per work-group an n x m tile of C; per work-item an l1 x l2 block of it in registers;
k-wide tiles of A and B copied to local memory; per k: a column of l1 values of A's tile
and a row of l2 values of B's tile copied to registers, their outer product accumulated.
"""

from __future__ import annotations

import functional as fl


def _copy(x):
    return x


def _block_update(acc_block, a_cols, b_rows):
    """reduce over the tile's k: acc_block + sum_k outer(a_cols[k], b_rows[k]), in registers."""
    init = fl.map_seq_unroll(lambda r: fl.map_seq_unroll(_copy, r), acc_block)

    def step(c, q):
        regs = fl.pair(fl.to_private(fl.map_seq_unroll(_copy, fl.fst(q))), fl.to_private(fl.map_seq_unroll(_copy, fl.snd(q))))
        return fl.let(regs, lambda y: fl.map_seq_unroll(
            lambda ca: fl.map_seq_unroll(lambda cb: fl.fst(cb) + fl.snd(ca) * fl.snd(cb), fl.zip(fl.fst(ca), fl.snd(y))),
            fl.zip(c, fl.fst(y))))

    return fl.map_seq_unroll(lambda r: fl.map_seq_unroll(_copy, r), fl.reduce_seq_unroll(step, init, fl.zip(a_cols, b_rows)))


def _parts(row, l: int, items: int, interleaved: bool):
    """A row of l * items values as `items` parts of l: contiguous (item t: t*l .. t*l+l-1)
    or interleaved (item t: t, t + items, ...; neighbouring items touch neighbouring values,
    so their local-memory reads hit different banks and their global writes coalesce)."""
    return fl.transpose(fl.split(items, row)) if interleaved else fl.split(l, row)


def _unparts(parts, interleaved: bool):
    """The inverse of _parts: items.l -> one row."""
    return fl.join(fl.transpose(parts)) if interleaved else fl.join(parts)


def _padded(row, pad: int):
    """A's tile rows get `pad` unused values in local memory, so that the copy's items
    (neighbours along k) write to different banks."""
    return fl.pad_const(0, pad, 0.0, row) if pad else row


def _unpadded(row, n: int, pad: int):
    return fl.take(n, row) if pad else row


def _tile(rows_a, cols_b, n, m, kt, l1, l2, interleaved=False, a_rows_on_dim0=False, pad=0):
    t1, t0 = n // l1, m // l2  # work-items per dimension
    zeros = fl.generate(t1, lambda i: fl.generate(t0, lambda j: fl.generate(l1, lambda u: fl.generate(l2, lambda v: 0.0))))
    blocks = lambda acc: fl.map_local(lambda row: fl.map_local(  # noqa: E731
        lambda blk: fl.map_seq_unroll(lambda x: fl.map_seq_unroll(_copy, x), blk), row, dim=0), acc, dim=1)

    def k_step(acc, tiles):
        local = fl.pair(
            fl.to_local(fl.map_local(lambda r: fl.map_local(_copy, _padded(r, pad), dim=0 if a_rows_on_dim0 else 1),
                                     fl.fst(tiles), dim=1 if a_rows_on_dim0 else 0)),
            fl.to_local(fl.map_local(lambda r: fl.map_local(_copy, r, dim=0), fl.snd(tiles), dim=1)))
        a_parts = lambda y: fl.transpose(fl.map(lambda r: _parts(_unpadded(r, n, pad), l1, t1, interleaved),  # noqa: E731
                                                fl.fst(y)))
        b_parts = lambda y: fl.transpose(fl.map(lambda r: _parts(r, l2, t0, interleaved), fl.snd(y)))  # noqa: E731
        return fl.let(local, lambda y: fl.map_local(
            lambda p1: fl.map_local(lambda p: _block_update(fl.fst(p), fl.snd(p1), fl.snd(p)),
                                    fl.zip(fl.fst(p1), b_parts(y)), dim=0),
            fl.zip(acc, a_parts(y)), dim=1))

    result = fl.reduce_seq(k_step, blocks(zeros), fl.zip(fl.split(kt, fl.transpose(rows_a)),
                                                         fl.split(kt, fl.transpose(cols_b))))
    rows = fl.map_local(lambda row: fl.map(lambda r: _unparts(r, interleaved), fl.transpose(fl.map_local(
        lambda blk: fl.map_seq_unroll(lambda x: fl.map_seq_unroll(_copy, x), blk), row, dim=0))), result, dim=1)
    return _unparts(rows, interleaved)


def mm_register_blocked(n: int, m: int, kt: int, l1: int, l2: int, M=None, K=None, N=None, interleaved=False,
                        a_rows_on_dim0=False, pad=0):
    """C = A B with n x m tiles per work-group, k-tiles of kt, l1 x l2 results per item.
    `a_rows_on_dim0`: A's tile is copied with neighbouring items on neighbouring rows (local
    writes without bank conflicts) rather than on neighbouring k (coalesced global reads).
    `pad`: unused values after each row of A's tile in local memory (bank conflicts)."""
    M = fl.nat("M", multiple_of=n) if M is None else M
    K = fl.nat("K", multiple_of=kt) if K is None else K
    N = fl.nat("N", multiple_of=m) if N is None else N
    return fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
                  lambda a, b: fl.join(fl.map_workgroup(lambda rows_a: fl.transpose(fl.join(fl.map_workgroup(
                      lambda cols_b: fl.transpose(_tile(rows_a, cols_b, n, m, kt, l1, l2, interleaved, a_rows_on_dim0, pad)),
                      fl.split(m, fl.transpose(b)), dim=0))), fl.split(n, a), dim=1)))
