"""A matrix product on TF32 tensor cores, written as a low-level program: every decision in it.

    python examples/tf32_gemm.py            # checks it against the interpreter on the default device

C = A B (float32 in and out, TF32 products: mma_sync rounds its operands, as torch's allow_tf32
does).  A work-group computes a bm x bn block of C with (bm/wm) x (bn/wn) warps: the lanes of a warp
are the group's items along dimension 0 (32 of them), the warps its items along dimensions 2 and 1.
Each warp computes a wm x wn part as (wm/16) x (wn/8) m16n8k8 tiles whose accumulators stay in its
lanes' registers (fragments: functional.primitives, mma_sync):

    join (map_workgroup 1 (fun(rowsA) => map join (transpose (map_workgroup 0 (fun(colsB) =>
        assemble (map_local 2 (map_local 1 (map (map unfragment c)))) (copy (reduce_seq (fun(acc, (a, b)) =>
            let al = to_local (a's rows, padded by 4)          -- bm x kc, by every item of the group
            let bl = to_local (B's kc x bn block's rows, padded by 8)
            map_local 2 (fun(acc_r, a_w) => map_local 1 (fun(acc_w, b_w) =>   -- each warp
                copy (reduce_seq (fun(acc2, (a8, b8)) =>                        -- kc/8 steps of 8
                    map_seq_unroll (fun(tm) => map_seq_unroll (fun(tn) =>
                        mma_sync acc2[tm][tn] (fragment a (16 rows of a8)) (fragment b (8 columns of b8)))))
                  (copy acc_w) (k-steps of a_w and b_w))) ...) (zip acc (wm-row tiles of al))
          zeros (kc-chunks of rowsA and colsB))))
      (split bn (transpose B))))) (split bm A))

`copy` is each lane's copy of its own accumulators (map_seq_unroll over tiles, map_local 0 over
lanes): imperative.passes.privatise makes them registers.  Where the device has no tensor cores
(PoCL, Oclgrind) the translation gives each lane its own sums (dpia.translate), so the same
program is checked everywhere; benchmarks/tf32_gemm_gpu.py times it against cuBLAS.
"""

from __future__ import annotations

import functional as fl
from functional.primitives import MMA_K, MMA_M, MMA_N

A_PAD, B_PAD = 4, 8  # local rows this much longer: the lanes of a fragment read meet no bank conflict
LANES = 32


def _identity():
    return fl.lam(lambda x: x)


def _lanes_copy():
    """Each lane's copy of its own fragments of a warp's [tm][tn][32][r] accumulators."""
    lanes = fl.lam(lambda tiles: fl.map_local(fl.lam(lambda lane: fl.map_seq_unroll(_identity(), lane)), tiles))
    return fl.lam(lambda acc: fl.map_seq_unroll(fl.lam(lambda row: fl.map_seq_unroll(lanes, row)), acc))


def _warps(f):
    """`f` on each warp's part of a [warp rows][warp columns][...] array: map_local 2, map_local 1."""
    return fl.lam(lambda acc: fl.map_local(fl.lam(lambda row: fl.map_local(f, row, dim=1)), acc, dim=2))


def _assemble(tiles):
    """[r][c][h][w] tiles as one [r h][c w] array (a view)."""
    return fl.join(fl.map(fl.lam(lambda row: fl.map(fl.join, fl.transpose(row))), tiles))


def mm_tf32(bm: int = 128, bn: int = 128, wm: int = 64, wn: int = 64, kc: int = 32, staging: str = "flat"):
    """The program for sizes M, N, K multiples of bm, bn, kc: blocks of bm x bn, warps of wm x wn
    (wm a multiple of 16, wn of 8, kc of 8; wm dividing bm, wn dividing bn).  `staging`: how the
    group copies a tile into local memory: "flat" (one loop over all its padded elements, each
    item a row of 32 of them at a time) or "rows" (the warps over its rows, the lanes along a
    row)."""
    if staging not in ("flat", "rows"):
        raise ValueError(f"staging {staging!r}: flat or rows")
    if wm % MMA_M or wn % MMA_N or kc % MMA_K or bm % wm or bn % wn:
        raise ValueError(f"warps of {wm} x {wn} in blocks of {bm} x {bn}, k-chunks of {kc}: the warps multiples of "
                         f"{MMA_M} x {MMA_N} dividing the blocks, the chunks multiples of {MMA_K}")
    warps_m, warps_n, mt, nt = bm // wm, bn // wn, wm // MMA_M, wn // MMA_N
    row = LANES * warps_n  # the items of a row of the group (dimensions 0 and 1)
    for rows, width, pad in ((bm, kc, A_PAD), (kc, bn, B_PAD)):
        if staging == "flat" and rows * (width + pad) % row:
            raise ValueError(f"a staged tile of {rows} x {width + pad} is not rows of {row} items")
        if staging == "rows" and rows % warps_n:
            raise ValueError(f"a staged tile of {rows} rows is not rows for {warps_n} warps")
    M, N, K = fl.nat("M", multiple_of=bm), fl.nat("N", multiple_of=bn), fl.nat("K", multiple_of=kc)
    copy = _lanes_copy()

    def staged(rows, width: int, pad: int):
        """Rows (of global memory) copied into local memory by every item of the group, each row
        `pad` values longer (unused), read back without them."""
        padded = fl.map(fl.lam(lambda r: fl.pad_const(0, pad, 0.0, r)), rows)
        if staging == "rows":
            copied = fl.join(fl.map_local(fl.lam(lambda group: fl.map_local(fl.lam(lambda r: fl.map_local(
                _identity(), r)), group, dim=1)), fl.split(warps_n, padded), dim=2))
            return fl.map(fl.lam(lambda r: fl.take(width, r)), fl.to_local(copied))
        items = fl.split(warps_n, fl.split(LANES, fl.join(padded)))
        copied = fl.join(fl.join(fl.map_local(fl.lam(lambda r: fl.map_local(fl.lam(lambda q: fl.map_local(
            _identity(), q)), r, dim=1)), items, dim=2)))
        return fl.map(fl.lam(lambda r: fl.take(width, r)), fl.to_local(fl.split(width + pad, copied)))

    def step8(acc2, ks):
        a8, b8 = fl.fst(ks), fl.snd(ks)  # [wm][8], [wn][8]
        return fl.map_seq_unroll(fl.lam(lambda r: fl.map_seq_unroll(fl.lam(lambda t: fl.mma_sync(
            fl.fst(t), fl.fragment("a", fl.snd(r)), fl.fragment("b", fl.snd(t)))),
            fl.zip(fl.fst(r), fl.split(MMA_N, b8)))), fl.zip(acc2, fl.split(MMA_M, a8)))

    def warp(acc_w, a_w, b_w):
        k_steps = fl.zip(fl.transpose(fl.map(fl.split(MMA_K), a_w)), fl.transpose(fl.map(fl.split(MMA_K), b_w)))
        return copy(fl.reduce_seq(fl.lam(step8), copy(acc_w), k_steps))

    def chunk(acc, ab):
        def with_local(al, bl):
            a_tiles, b_tiles = fl.split(wm, al), fl.split(wn, fl.transpose(bl))
            return fl.map_local(fl.lam(lambda ra: fl.map_local(fl.lam(lambda wb: warp(
                fl.fst(wb), fl.snd(ra), fl.snd(wb))), fl.zip(fl.fst(ra), b_tiles), dim=1)),
                fl.zip(acc, a_tiles), dim=2)

        return fl.let(staged(fl.fst(ab), kc, A_PAD), fl.lam(lambda al: fl.let(
            staged(fl.transpose(fl.snd(ab)), bn, B_PAD), fl.lam(lambda bl: with_local(al, bl)))))

    def block(rows_a, cols_b):
        chunks = fl.zip(fl.transpose(fl.map(fl.split(kc), rows_a)), fl.transpose(fl.map(fl.split(kc), cols_b)))
        zeros = _zeros(warps_m, warps_n, mt, nt, LANES, 4)
        acc = fl.reduce_seq(fl.lam(chunk), _warps(copy)(zeros), chunks)
        tiles = fl.map(fl.map(fl.map(fl.map(fl.unfragment("c")))), _warps(copy)(acc))  # [wm'][wn'][mt][nt][16][8]
        return _assemble(fl.map(fl.map(fl.lam(_assemble)), tiles))

    return fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))], lambda a, b: fl.join(
        fl.map_workgroup(fl.lam(lambda rows_a: fl.map(fl.join, fl.transpose(fl.map_workgroup(
            fl.lam(lambda cols_b: block(rows_a, cols_b)), fl.split(bn, fl.transpose(b)))))), fl.split(bm, a), dim=1)))


def _zeros(*shape):
    """An array of zeros of `shape` (a view: generate)."""
    if not shape:
        return fl.lit(0.0)
    inner = _zeros(*shape[1:])
    return fl.generate(shape[0], fl.lam(lambda _: inner))


def main() -> None:
    import numpy as np

    import dpia
    from functional.primitives import tf32_round

    rng = np.random.default_rng(0)
    m, n, k = 128, 128, 64
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    program = mm_tf32()
    out = dpia.compile(program)(a, b)
    want = tf32_round(a).astype(np.float64) @ tf32_round(b).astype(np.float64)
    print(f"{m}x{n}x{k}: max |C - tf32(A) tf32(B)| = {np.abs(out - want).max():.3g}")


if __name__ == "__main__":
    main()
