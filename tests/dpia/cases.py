"""Low-level programs with inputs: each is translated, compiled, run on PoCL and compared
with the reference interpreter (then checked under Oclgrind, as every kernel the tests
launch), and its OpenCL is kept as a snapshot (tests/dpia/snapshots)."""

from __future__ import annotations

import numpy as np

import functional as fl

N = fl.nat("N")
N64 = fl.nat("N", multiple_of=64)
M, K = fl.nat("M"), fl.nat("K")
vec = fl.array(N, fl.f32)


def _rng():
    return np.random.default_rng(7)


def _f32(*shape):
    return _rng().standard_normal(shape).astype(np.float32)


def _dot(row, xs):
    return fl.reduce_seq(lambda a, p: a + fl.fst(p) * fl.snd(p), 0.0, fl.zip(row, xs))


_CLAMP = fl.user_fun("clamp01", [("x", fl.f32)], fl.f32, "return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);",
                     numpy=lambda x: np.clip(x, 0.0, 1.0))


def _scalar_operations(p):
    """Every scalar primitive the other cases do not use, in one element function."""
    x, y = fl.fst(p), fl.snd(p)
    cond = fl.or_(fl.and_(x >= y, fl.ne(x, y)), fl.not_(x <= y))
    value = fl.fma(fl.cos(x), fl.sin(y), fl.exp(fl.min(x, y))) + fl.log(fl.abs(x) + 1.0)
    return fl.select(cond, value, fl.apply(_CLAMP, y))


def _math_builtins(p):
    """Every OpenCL math built-in, on inputs inside their domains (x, y in (-1, 1))."""
    x, y = fl.fst(p), fl.snd(p)
    ax, pos = fl.abs(x) + 0.5, fl.abs(y) + 0.25
    unary = (fl.erf(x) + fl.erfc(y) + fl.tan(x) + fl.asin(x) + fl.acos(y) + fl.atan(x) + fl.sinh(x) + fl.cosh(y)
             + fl.tanh(x) + fl.exp2(x) + fl.expm1(y) + fl.log2(ax) + fl.log10(pos) + fl.log1p(ax) + fl.cbrt(x)
             + fl.rsqrt(pos) + fl.floor(x * 4.0) + fl.ceil(y * 4.0) + fl.trunc(x * 4.0) + fl.round(y * 4.0))
    binary = (fl.pow(ax, y) + fl.fmod(x * 5.0, pos) + fl.atan2(y, x) + fl.hypot(x, y) + fl.copysign(x, y)
              + fl.clamp(x, -0.5, 0.5))
    return unary + binary


def _bits(p):
    """Integer bit operations and shifts (counts beyond the width: modulo 32, as OpenCL)."""
    a, b = fl.fst(p), fl.snd(p)
    mixed = fl.bit_xor(fl.bit_and(a, b), fl.bit_or(fl.bit_not(a), fl.shl(b, a)))
    return mixed + fl.shr(a, b) + fl.clamp(a, -100, 100)


def _wide_lanes(x):
    """Every operation printed as a call, on vectors wider than 256 bits (see opencl.py:
    such calls are printed on halves)."""
    y = fl.fma(fl.sin(x), fl.cos(x), fl.sqrt(fl.abs(x)))
    z = fl.clamp(fl.max(fl.min(y, 0.75), -0.75), -0.5, 0.5) + fl.cast(fl.f32, fl.cast(fl.i32, x * 10.0))
    return fl.select(x < 0.0, fl.rsqrt(fl.abs(x) + 1.0), z)


def _workgroup_sum(block):
    return lambda xs: fl.join(fl.map_workgroup(
        lambda chunk: fl.map_local(lambda c: fl.reduce_seq(fl.add, 0.0, c),
                                   fl.split(2, fl.to_local(fl.map_local(lambda x: x * 2.0, chunk)))),
        fl.split(block, xs)))


def _vec_sum_groups(xs):
    """The seed's vecSum per work-group: a tree of halving steps in local memory."""
    return fl.join(fl.map_workgroup(
        lambda chunk: fl.map_local(lambda x: x, fl.iterate(
            6, lambda ys: fl.to_local(fl.map_local(fl.reduce_seq(fl.add, 0.0), fl.split(2, ys))),
            fl.to_local(fl.map_local(lambda x: x, chunk)))),
        fl.split(64, xs)))


def sys_path_examples() -> None:
    import sys
    from pathlib import Path

    path = str(Path(__file__).resolve().parents[2] / "examples")
    if path not in sys.path:
        sys.path.insert(0, path)


def _register_blocked(*config):
    """examples/mm_register_blocked.py: l1 x l2 results per work-item in registers."""
    sys_path_examples()
    from mm_register_blocked import mm_register_blocked

    return mm_register_blocked(*config)


def _derived(program, strategy):
    from functional.derivation import derive

    return derive(program, strategy)[0]


def _schedule_cases() -> dict:
    """Programs lowered by the seed's named strategies (functional.schedules)."""
    from functional import schedules as sch

    n128 = fl.nat("N", multiple_of=128)
    total = fl.fun([fl.array(n128, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs))
    dot = fl.fun([fl.array(n128, fl.f32), fl.array(n128, fl.f32)], lambda xs, ys: fl.reduce(
        fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys))))
    m8, k8, n8 = fl.nat("M", multiple_of=8), fl.nat("K", multiple_of=8), fl.nat("N", multiple_of=8)
    mm = fl.fun([fl.array(m8, fl.array(k8, fl.f32)), fl.array(k8, fl.array(n8, fl.f32))],
                lambda a, b: fl.map(lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
                    lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))), fl.transpose(b)), a))
    n16 = fl.nat("N", multiple_of=16)
    mm16 = fl.fun([fl.array(m8, fl.array(k8, fl.f32)), fl.array(k8, fl.array(n16, fl.f32))],
                  lambda a, b: fl.map(lambda r: fl.map(lambda c: fl.reduce(fl.add, 0.0, fl.map(
                      lambda p: fl.fst(p) * fl.snd(p), fl.zip(r, c))), fl.transpose(b)), a))
    sys_path_examples()
    import seed

    scal = fl.fun([fl.f32, fl.array(n128, fl.f32)], seed.scal_body)
    asum = fl.fun([fl.array(n128, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, fl.map(fl.abs, xs)))
    m16 = fl.nat("M", multiple_of=16)
    gemv = fl.fun([fl.array(m16, fl.array(n128, fl.f32)), fl.array(n128, fl.f32), fl.array(m16, fl.f32), fl.f32, fl.f32],
                  seed.gemv_body)
    return {
        "schedule_scal": (_derived(scal, sch.scal_global()), (np.float32(2.5), _f32(256))),
        "schedule_scal_vectorized": (_derived(scal, sch.scal_vectorized(4)), (np.float32(2.5), _f32(256))),
        "schedule_asum": (_derived(asum, sch.asum(128, 32)), (_f32(512),)),
        "schedule_gemv": (_derived(gemv, sch.gemv_global()), (_f32(16, 128), _f32(128), _f32(16), np.float32(0.5),
                                                             np.float32(2.0))),
        "schedule_mm_tiled_local_memory": (_derived(mm, sch.mm_tiled(4, 4, 4)), (_f32(16, 8), _f32(8, 8))),
        "schedule_mm_register_blocked": (_derived(mm, sch.mm_register_blocked(8, 8, 4, 2, 2)),
                                         (_f32(16, 8), _f32(8, 24))),
        "schedule_mm_register_blocked_padded": (_derived(mm, sch.mm_register_blocked(8, 8, 8, 4, 2, coalesce_a=True,
                                                                                       pad=1)), (_f32(16, 16), _f32(16, 8))),
        # float4 tile copies spread over all items (A's lanes written one by one into its k-major
        # tile), B's rows interleaved in runs of 4 (views.LaneStores, reshape/interchange rules)
        "schedule_mm_register_blocked_vector_copies": (
            _derived(mm16, sch.mm_register_blocked(8, 16, 8, 2, 8, coalesce_a=True, vector_a=4, vector_b=4,
                                                 interleave_b=4)), (_f32(16, 8), _f32(8, 32))),
        # a private array of scalars read back as float4s: not split into scalars (privatise
        # keeps arrays accessed at another type), declared aligned for the vector pointer
        "private_scalars_read_as_vectors": (fl.fun([fl.array(fl.nat("N", multiple_of=16), fl.f32)], lambda xs: fl.join(
            fl.map_global(lambda chunk: fl.as_scalar(fl.map_seq_unroll(fl.map_vec(lambda x: x + 1.0), fl.as_vector(
                4, fl.to_private(fl.map_seq_unroll(lambda x: x * 2.0, chunk))))), fl.split(16, xs)))), (_f32(32),)),
        # the CPU shape: rows of the register block accumulated in vectors (vectorize_accumulator)
        "schedule_mm_rows_vectorized": (_derived(mm16, sch.mm_rows_vectorized(2, 16, 8)), (_f32(8, 8), _f32(8, 32))),
        "mm_register_blocked_2x2": (_register_blocked(8, 8, 4, 2, 2), (_f32(16, 12), _f32(12, 24))),
        "mm_register_blocked_4x2_rectangular": (_register_blocked(16, 8, 4, 4, 2), (_f32(32, 8), _f32(8, 16))),
        "schedule_parallel_reduce_two_stage": (_derived(fl.fun([fl.array(fl.nat("N", multiple_of=1024), fl.f32)],
                                                                lambda xs: fl.reduce(fl.add, 0.0, xs)),
                                                         sch.parallel_reduce_two_stage(256, 32, 4, 4)), (_f32(2048),)),
        "schedule_vec_sum_two_kernels": (_derived(total, sch.vec_sum(128, 32)), (_f32(128 * 6),)),
        "schedule_dot": (_derived(dot, sch.dot(16)), (_f32(256), _f32(256) + 1)),
        "schedule_chunked_sum_float8": (_derived(total, sch.chunked_sum(16, 8)), (_f32(128 * 6),)),
        "schedule_chunked_max_float4": (_derived(fl.fun([fl.array(n128, fl.f32)], lambda xs: fl.reduce(
            fl.max, -np.inf, xs)), sch.chunked_sum(8, 4)), (_f32(128 * 3),)),
    }


CASES = {
    "vec_sum_iterate": (fl.fun([fl.array(N64, fl.f32)], _vec_sum_groups), (_f32(64 * 5),)),
    "zip_map_global": (fl.fun([vec, vec], lambda xs, ys: fl.map_global(lambda p: fl.fst(p) * fl.snd(p) + 1.0,
                                                                       fl.zip(xs, ys))), (_f32(37), _f32(37))),
    "scal_scalar_input": (fl.fun([fl.f32, vec], lambda a, xs: fl.map_global(lambda x: x * a, xs)),
                          (np.float32(1.5), _f32(50))),
    "matrix_map_seq": (fl.fun([fl.array(M, fl.array(N, fl.f32))],
                              lambda m: fl.map_global(fl.map_seq(lambda x: fl.abs(x) - 0.5), m)), (_f32(5, 7),)),
    "gemv_rows": (fl.fun([fl.array(M, fl.array(N, fl.f32)), vec], lambda m, xs: fl.map_global(lambda r: _dot(r, xs), m)),
                  (_f32(6, 9), _f32(9))),
    "column_sums_transpose": (fl.fun([fl.array(M, fl.array(N, fl.f32))],
                                     lambda m: fl.map_global(lambda c: fl.reduce_seq(fl.add, 0.0, c), fl.transpose(m))),
                              (_f32(4, 11),)),
    "split_join_views": (fl.fun([fl.array(N64, fl.f32)], lambda xs: fl.join(fl.map_global(
        fl.map_seq(lambda x: x * x), fl.split(8, xs)))), (_f32(128),)),
    "workgroup_local_barrier": (fl.fun([fl.array(N64, fl.f32)], _workgroup_sum(64)), (_f32(256),)),
    # each group's chunks staged in local memory, the next one while this one is summed (3 chunks: an odd last one)
    "workgroup_double_buffered_chunks": (fl.fun([fl.array(4, fl.array(3, fl.array(32, fl.f32)))], lambda g: fl.to_global(
        fl.map_workgroup(lambda chunks: fl.reduce_seq_double_buffered(lambda acc, chunk: fl.let(
            fl.to_local(fl.map_local(lambda x: x * 2.0, chunk)),
            lambda t: acc + fl.reduce_seq(fl.add, 0.0, t)), 0.0, chunks), g))), (_f32(4, 3, 32),)),
    # the same with its stagings asynchronous where the device has cp.async: plain copies here (no intrinsics)
    "workgroup_double_buffered_chunks_async": (fl.fun([fl.array(4, fl.array(3, fl.array(32, fl.f32)))], lambda g: fl.to_global(
        fl.map_workgroup(lambda chunks: fl.reduce_seq_double_buffered_async(lambda acc, chunk: fl.let(
            fl.to_local(fl.map_local(lambda x: x * 2.0, chunk)),
            lambda t: acc + fl.reduce_seq(fl.add, 0.0, t)), 0.0, chunks), g))), (_f32(4, 3, 32),)),
    "stencil_pad_clamp": (fl.fun([vec], lambda xs: fl.map_global(lambda w: fl.reduce_seq(fl.add, 0.0, w),
                                                                 fl.slide(3, 1, fl.pad_clamp(1, 1, xs)))), (_f32(20),)),
    "stencil_pad_const": (fl.fun([vec], lambda xs: fl.map_global(lambda w: fl.reduce_seq(fl.max, -1.0, w),
                                                                 fl.slide(3, 1, fl.pad_const(1, 1, 9.0, xs)))),
                          (_f32(20),)),
    "pad_wrap_mirror": (fl.fun([vec], lambda xs: fl.map_global(lambda p: fl.fst(p) - fl.snd(p), fl.zip(
        fl.pad_wrap(2, 1, xs), fl.pad_mirror(2, 1, xs)))), (_f32(9),)),
    "scalar_operations": (fl.fun([vec, vec], lambda xs, ys: fl.map_global(_scalar_operations, fl.zip(xs, ys))),
                          (_f32(37), _f32(37) + 0.5)),
    "scatter_reverse_and_unzip": (fl.fun([vec, vec], lambda xs, ys: fl.scatter(
        lambda i, n: n - 1 - i, fl.map_global(lambda p: fl.fst(p) - fl.snd(p) * 2.0,
                                              fl.zip(fl.fst(fl.unzip(fl.zip(xs, ys))), fl.snd(fl.unzip(fl.zip(xs, ys))))))),
        (_f32(37), _f32(37))),
    "gather_reverse": (fl.fun([vec], lambda xs: fl.map_global(lambda x: x + 0.0, fl.gather(lambda i, n: n - 1 - i, xs))),
                       (_f32(13),)),
    "reorder_stride_reduce": (fl.fun([fl.array(N64, fl.f32)], lambda xs: fl.join(fl.map_workgroup(
        lambda chunk: fl.map_local(lambda c: fl.reduce_seq(fl.add, 0.0, c), fl.split(4, fl.reorder_stride(16, chunk))),
        fl.split(64, xs)))), (_f32(192),)),
    "vectorised": (fl.fun([fl.array(N64, fl.f32)], lambda xs: fl.as_scalar(fl.map_global(
        fl.map_vec(lambda x: x * 2.0 + 1.0), fl.as_vector(4, xs)))), (_f32(64),)),
    "pairs_out": (fl.fun([vec], lambda xs: fl.map_global(lambda x: (x, x * 2.0), xs)), (_f32(10),)),
    "ints_div_rem": (fl.fun([fl.array(N, fl.i32), fl.array(N, fl.i32)], lambda a, b: fl.map_global(
        lambda p: fl.fst(p) / fl.snd(p) + fl.fst(p) % fl.snd(p), fl.zip(a, b))),
                     (np.array([7, -7, 9, 100, -3], np.int32), np.array([2, 2, -4, 7, 5], np.int32))),
    "select_cast": (fl.fun([vec], lambda xs: fl.map_global(
        lambda x: fl.select(x < 0.0, fl.cast(fl.f32, fl.cast(fl.i32, x * 10.0)), fl.sqrt(x)), xs)), (_f32(16),)),
    "take_drop_concat": (fl.fun([fl.array(N64, fl.f32)], lambda xs: fl.map_global(lambda x: x * 3.0, fl.concat(
        fl.drop(60, xs), fl.take(4, xs)))), (_f32(64),)),
    # concat of computed arrays written in place (each part through its offset): two kernels at program
    # level, two loops inside a work-item's function; no temporary
    "concat_written_in_place": (fl.fun([fl.array(64, fl.f32), fl.array(M, fl.array(N, fl.f32))], lambda xs, m: fl.pair(
        fl.concat(fl.map_global(lambda x: x * 2.0, fl.take(60, xs)), fl.map_global(lambda x: x + 1.0, fl.drop(60, xs))),
        fl.map_global(lambda r: fl.concat(fl.map_seq(lambda x: x * x, fl.take(2, r)),
                                          fl.map_seq(lambda x: 0.0 - x, fl.drop(2, r))), m))),
        (_f32(64), _f32(5, 6))),
    "mm_naive": (fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
                        lambda a, b: fl.map_global(lambda r: fl.map_seq(lambda c: _dot(r, c), fl.transpose(b)), a)),
                 (_f32(5, 6), _f32(6, 3))),
    "mm_naive_2d": (fl.fun([fl.array(M, fl.array(K, fl.f32)), fl.array(K, fl.array(N, fl.f32))],
                           lambda a, b: fl.map_global(lambda r: fl.map_global(lambda c: _dot(r, c), fl.transpose(b)),
                                                      a, dim=1)),
                    (_f32(7, 6), _f32(6, 5))),
    "mm_workgroup_2d": (fl.fun([fl.array(fl.nat("M", multiple_of=4), fl.array(K, fl.f32)),
                                fl.array(K, fl.array(fl.nat("N", multiple_of=4), fl.f32))],
                               lambda a, b: fl.join(fl.map_workgroup(lambda rows: fl.transpose(fl.join(fl.map_workgroup(
                                   lambda cols: fl.map_local(lambda c: fl.map_local(lambda r: _dot(r, c), rows, dim=1),
                                                             cols),
                                   fl.split(4, fl.transpose(b))))), fl.split(4, a), dim=1))),
                        (_f32(8, 6), _f32(6, 12))),
    "bool_buffers": (fl.fun([fl.array(N, fl.boolean), vec], lambda bs, xs: fl.map_global(
        lambda q: (fl.select(fl.fst(q), fl.snd(q), 0.0), fl.snd(q) > 0.0), fl.zip(bs, xs))),
                     (np.array([True, False, True, True]), _f32(4))),
    "map_views_fused": (fl.fun([fl.array(fl.nat("N", multiple_of=4), fl.array(8, fl.f32))], lambda xss: fl.map_global(
        lambda r: fl.reduce_seq(fl.add, 0.0, r), fl.map(fl.join, fl.map(fl.split(2), fl.map(fl.map(fl.neg), xss))))),
                        (_f32(4, 8),)),
    "unrolled_and_single_trip_loops": (fl.fun([fl.array(fl.nat("N", multiple_of=4), fl.f32)], lambda xs: fl.join(
        fl.map_global(lambda c: fl.map_seq_unroll(lambda x: fl.reduce_seq(fl.add, 0.0, x), fl.split(1, c)),
                      fl.split(4, xs)))), (_f32(16),)),
    "private_vector_lanes": (fl.fun([fl.array(fl.nat("N", multiple_of=8), fl.f32)], lambda xs: fl.map_global(
        lambda v: fl.let(fl.to_private(fl.map_vec(lambda e: e + 1.0, v)), lambda w: fl.reduce_seq_unroll(
            fl.add, 0.0, fl.as_scalar(fl.generate(1, lambda i: w)))), fl.as_vector(4, xs))), (_f32(16),)),
    # float16 operands of built-ins, conversions and private vload16/vstore16: printed on halves
    "wide_vector_calls": (fl.fun([fl.array(fl.nat("N", multiple_of=32), fl.f32)], lambda xs: fl.join(fl.map_global(
        lambda chunk: fl.as_scalar(fl.map_seq(fl.map_vec(lambda e: e * 2.0), fl.to_private(fl.map_seq(
            fl.map_vec(_wide_lanes), fl.as_vector(16, chunk))))), fl.split(32, xs)))), (_f32(96),)),
    "wide_double_vectors": (fl.fun([fl.array(fl.nat("N", multiple_of=8), fl.f32)], lambda xs: fl.as_scalar(
        fl.map_global(fl.map_vec(lambda x: fl.cast(fl.f32, fl.exp(fl.cast(fl.f64, x)) * 0.5)),
                      fl.as_vector(8, xs)))), (_f32(24),)),
    "math_builtins": (fl.fun([vec, vec], lambda xs, ys: fl.map_global(_math_builtins, fl.zip(xs, ys))),
                      (np.tanh(_f32(16)), np.tanh(_f32(16) * 0.7 + 0.3).astype(np.float32))),
    "integer_bits": (fl.fun([fl.array(N, fl.i32), fl.array(N, fl.i32)], lambda a, b: fl.map_global(_bits, fl.zip(a, b))),
                     (np.array([0, -1, 7, -123456, 2**31 - 1, -2**31, 40, 3], np.int32),
                      np.array([1, 33, -2, 5, 31, 7, -1, 64], np.int32))),
    "element_access_sizes": (fl.fun([vec, fl.array(N, fl.i32)], lambda xs, idx: fl.map_global(
        lambda i: xs[i] * 2.0 + xs[0] + xs[N - 1] / N, idx)), (_f32(7), np.array([0, 6, 3, 2, 1, 5, 4], np.int32))),
    "let_private": (fl.fun([fl.array(M, fl.array(N, fl.f32))], lambda m: fl.map_global(
        lambda r: fl.let(fl.reduce_seq(fl.add, 0.0, r), lambda s: fl.map_seq(lambda x: x / s, r)), m)),
                    (np.abs(_f32(3, 4)) + 1.0,)),
}


CASES.update(_schedule_cases())


def _reduction_cases() -> dict:
    """The seed's seven reduction versions (examples/reductions.py), local size 64."""
    sys_path_examples()
    import reductions

    out = {}
    for v in reductions.VERSIONS:
        prog, block = reductions.program(v, 64)
        out[f"seed_reduction_v{v}"] = (prog, (_f32(block * 3),))
    return out


CASES.update(_reduction_cases())


def _tensor_core_cases() -> dict:
    """A warp's TF32 product on fragments (mma_sync; translated here into each lane's own sums,
    the tensor cores being absent) and the matrix product written with it (examples/tf32_gemm.py)."""
    sys_path_examples()
    from tf32_gemm import mm_tf32

    tile = lambda r, c: fl.array(r, fl.array(c, fl.f32))  # noqa: E731
    n = fl.nat("N")
    one = fl.fun([fl.array(n, tile(16, 8)), fl.array(n, tile(16, 8)), fl.array(n, tile(8, 8))],
                 lambda cs, as_, bs: fl.map_workgroup(lambda t: fl.unfragment("c", fl.mma_sync(
                     fl.fragment("c", fl.fst(fl.fst(t))), fl.fragment("a", fl.snd(fl.fst(t))),
                     fl.fragment("b", fl.snd(t)))), fl.zip(fl.zip(cs, as_), bs)))
    rounded = fl.fun([fl.array(n, fl.f32)], lambda xs: fl.map_global(lambda x: fl.tf32(x) * 3.0, xs))
    return {"tf32_round": (rounded, (_f32(77),)),
            "mma_sync_fragments": (one, (_f32(3, 16, 8), _f32(3, 16, 8), _f32(3, 8, 8))),
            "mm_tf32_four_warps": (mm_tf32(32, 16, 16, 8, 8), (_f32(32, 16), _f32(16, 32)))}


CASES.update(_tensor_core_cases())


def _close(a, b) -> bool:
    if isinstance(b, tuple):
        return all(_close(x, y) for x, y in zip(a, b))
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=1e-5, atol=1e-5)
