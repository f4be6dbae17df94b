"""A matrix product on TF32 tensor cores, written as a low-level program: every decision in it.

    python examples/tf32_gemm.py            # checks it against the interpreter on the default device

C = A B (float32 in and out, TF32 products: `tf32` rounds each operand, as torch's allow_tf32
does).  One warp per work-group computes a wm x wn block of C as (wm/16) x (wn/8) m16n8k8 tiles
whose accumulators stay in its lanes' registers (fragments: functional.primitives, mma_sync):

    join (map_workgroup 1 (fun(rowsA) => map join (transpose (map_workgroup 0 (fun(colsB) =>
        unfragment_tiles (copy (reduce_seq (fun(acc, (a, b)) =>
            let al = to_local (rows of a, padded by 4)       -- wm x kc, the lanes along the rows
            let bl = to_local (rows of B's kc x wn block, padded by 8)
            copy (reduce_seq (fun(acc2, (a8, b8)) =>           -- kc/8 steps of 8
                map_seq_unroll (fun(tm) => map_seq_unroll (fun(tn) =>
                    mma_sync acc2[tm][tn] (fragment a (16 rows of a8)) (fragment b (8 columns of b8)))))
              (copy acc) (k-steps of al and bl)))
          zeros (kc-chunks of rowsA and colsB))))
      (split wn (transpose B))))) (split wm A))

`copy` is the lanes' own copy (map_seq_unroll over tiles, map_local 0 over lanes): imperative.passes
.privatise turns each lane's part of the accumulators into registers.  Where the device has no tensor
cores (PoCL, Oclgrind) the translation gives each lane its own sums (dpia.translate), so the same
program is checked everywhere; benchmarks/tf32_gemm_gpu.py times it against cuBLAS.
"""

from __future__ import annotations

import functional as fl
from functional.primitives import MMA_K, MMA_M, MMA_N

A_PAD, B_PAD = 4, 8  # local rows this much longer: the lanes of a fragment read meet no bank conflict


def _lanes_copy(depth: int):
    """The copy of a [..][..][32][r] array of fragments by their lanes (`depth` tile levels)."""
    if depth == 0:
        return fl.lam(lambda tiles: fl.map_local(fl.lam(lambda lane: fl.map_seq_unroll(fl.lam(lambda x: x), lane)), tiles))
    inner = _lanes_copy(depth - 1)
    return fl.lam(lambda tiles: fl.map_seq_unroll(inner, tiles))


def mm_tf32(wm: int = 64, wn: int = 64, kc: int = 32):
    """The program for sizes M, N, K multiples of wm, wn, kc (wm a multiple of 16, wn of 8, kc of 8)."""
    if wm % MMA_M or wn % MMA_N or kc % MMA_K:
        raise ValueError(f"wm {wm}, wn {wn}, kc {kc}: multiples of {MMA_M}, {MMA_N} and {MMA_K}")
    mt, nt = wm // MMA_M, wn // MMA_N
    M, N, K = fl.nat("M", multiple_of=wm), fl.nat("N", multiple_of=wn), fl.nat("K", multiple_of=kc)
    copy_tiles = _lanes_copy(2)
    zero = fl.lam(lambda _: 0.0)
    zeros = fl.generate(mt, fl.lam(lambda _: fl.generate(nt, fl.lam(lambda _: fl.generate(
        32, fl.lam(lambda _: fl.generate(4, zero)))))))

    def staged(rows, width: int, pad: int):
        """Rows (of global memory) copied into local memory by the lanes in one loop over all their
        elements, each row `pad` values longer (unused), read back without them."""
        flat = fl.join(fl.map(fl.lam(lambda r: fl.pad_const(0, pad, 0.0, r)), rows))
        copied = fl.split(width + pad, fl.map_local(fl.lam(lambda x: x), flat))
        return fl.map(fl.lam(lambda r: fl.take(width, r)), fl.to_local(copied))

    def step8(acc2, ks):
        a8, b8 = fl.fst(ks), fl.snd(ks)  # [wm][8], [wn][8]
        return fl.map_seq_unroll(fl.lam(lambda row: fl.map_seq_unroll(fl.lam(lambda t: fl.mma_sync(
            fl.fst(t), fl.fragment("a", fl.snd(row)), fl.fragment("b", fl.snd(t)))),
            fl.zip(fl.fst(row), fl.split(MMA_N, b8)))), fl.zip(acc2, fl.split(MMA_M, a8)))

    def chunk(acc, ab):
        def with_local(al, bl):
            k_steps = fl.zip(fl.transpose(fl.map(fl.split(MMA_K), al)),
                             fl.transpose(fl.map(fl.split(MMA_K), fl.transpose(bl))))
            return copy_tiles(fl.reduce_seq(fl.lam(step8), copy_tiles(acc), k_steps))

        return fl.let(staged(fl.fst(ab), kc, A_PAD), fl.lam(lambda al: fl.let(
            staged(fl.transpose(fl.snd(ab)), wn, B_PAD), fl.lam(lambda bl: with_local(al, bl)))))

    def block(rows_a, cols_b):
        chunks = fl.zip(fl.transpose(fl.map(fl.split(kc), rows_a)), fl.transpose(fl.map(fl.split(kc), cols_b)))
        acc = fl.reduce_seq(fl.lam(chunk), copy_tiles(zeros), chunks)
        tiles = fl.map(fl.map(fl.unfragment("c")), copy_tiles(acc))  # [mt][nt][16][8]
        return fl.join(fl.map(fl.lam(lambda row: fl.map(fl.join, fl.transpose(row))), tiles))

    return fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))], lambda a, b: fl.join(
        fl.map_workgroup(fl.lam(lambda rows_a: fl.map(fl.join, fl.transpose(fl.map_workgroup(
            fl.lam(lambda cols_b: block(rows_a, cols_b)), fl.split(wn, fl.transpose(b)))))), fl.split(wm, a), dim=1)))


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
