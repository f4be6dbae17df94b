"""The Lift application suite as natural high-level programs, each with its NumPy reference
(the oracle), its float32 NumPy equivalent (what the benchmarks time), input generator and
sizes.  Tests (tests/test_suite.py) and the benchmark (benchmarks/suite_pocl.py) iterate
over `SUITE` (the applications) and `ALTERNATIVES` (other natural formulations of some of
them); benchmarks/SUITE.md has the measurements and the reproducers of what the compiler
does not yet do well.

Every program is written as a user would write it — no schedule, no lowering hints: the
default lowering (functional/default_lowering.py) has to cope.  The sizes are size variables,
so one program runs at every size; an entry's `small` / `moderate` / `bench` give the values.

    python examples/suite.py                  # interpreter against NumPy at the small sizes
    python examples/suite.py --device [NAME]  # compiled, on $DPIA_DEVICE, at the small sizes
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functional as fl  # noqa: E402

f32, i32 = fl.f32, fl.i32
N, M, K, F = fl.nat("N"), fl.nat("M"), fl.nat("K"), fl.nat("F")
H, W, D = fl.nat("H"), fl.nat("W"), fl.nat("D")


def arr(*dims, t=f32):
    for n in reversed(dims):
        t = fl.array(n, t)
    return t


# ------------------------------------------------------------------ helpers a user writes


def dot_body(xs, ys):
    return fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys)))


def total(xs):
    return fl.reduce(fl.add, 0.0, xs)


def map2d(f, xs):
    return fl.map(lambda row: fl.map(f, row), xs)


def map3d(f, xs):
    return fl.map(lambda plane: map2d(f, plane), xs)


def zip2d(a, b):
    return fl.map(lambda p: fl.zip(fl.fst(p), fl.snd(p)), fl.zip(a, b))


def zip3d(a, b):
    return fl.map(lambda p: zip2d(fl.fst(p), fl.snd(p)), fl.zip(a, b))


def pad2d(pad, r, xs):
    """Pad both dimensions by r with `pad` (fl.pad_clamp, fl.pad_wrap, ...)."""
    return pad(r, r, fl.map(pad(r, r), xs))


def pad2d_zero(r, width, xs):
    """Pad both dimensions of a grid `width` wide by r zeros (the new rows: width + 2r zeros)."""
    return fl.pad_const(r, r, fl.generate(width + 2 * r, lambda i: 0.0),
                        fl.map(lambda row: fl.pad_const(r, r, 0.0, row), xs))


def slide2d(n, xs):
    """H.W -> (H-n+1).(W-n+1).n.n: every n x n neighbourhood."""
    return fl.map(fl.transpose, fl.slide(n, 1, fl.map(fl.slide(n, 1), xs)))


def pad3d_clamp(r, xs):
    return fl.pad_clamp(r, r, fl.map(lambda plane: pad2d(fl.pad_clamp, r, plane), xs))


def slide3d(n, xs):
    """D.H.W -> D'.H'.W'.n.n.n (z, y, x inside the window)."""
    rows = fl.map(lambda plane: slide2d(n, plane), xs)                 # D.H'.W'.n.n
    return fl.map(lambda blk: fl.map(fl.transpose, fl.transpose(blk)), fl.slide(n, 1, rows))


def window_sum(w):
    return total(fl.join(w))


# ----------------------------------------------------------------------------- BLAS-like

scal = fl.fun([f32, arr(N)], lambda a, xs: fl.map(lambda x: a * x, xs))
asum = fl.fun([arr(N)], lambda xs: fl.reduce(fl.add, 0.0, fl.map(fl.abs, xs)))
dot = fl.fun([arr(N), arr(N)], dot_body)
mean_variance = fl.fun([arr(N)], lambda xs: fl.let(
    total(xs) / N, lambda mean: fl.pair(mean, total(fl.map(lambda x: (x - mean) * (x - mean), xs)) / N)))

gemv = fl.fun([arr(M, N), arr(N), arr(M), f32, f32], lambda a, x, y, alpha, beta: fl.map(
    lambda p: alpha * dot_body(fl.fst(p), x) + beta * fl.snd(p), fl.zip(a, y)))
gemv_t = fl.fun([arr(M, N), arr(M), arr(N), f32, f32], lambda a, x, y, alpha, beta: fl.map(
    lambda p: alpha * dot_body(fl.fst(p), x) + beta * fl.snd(p), fl.zip(fl.transpose(a), y)))
atax = fl.fun([arr(M, N), arr(N)], lambda a, x: fl.let(
    fl.map(lambda row: dot_body(row, x), a),
    lambda tmp: fl.map(lambda col: dot_body(col, tmp), fl.transpose(a))))
gesummv = fl.fun([arr(N, N), arr(N, N), arr(N), f32, f32], lambda a, b, x, alpha, beta: fl.map(
    lambda rows: alpha * dot_body(fl.fst(rows), x) + beta * dot_body(fl.snd(rows), x), fl.zip(a, b)))
transpose = fl.fun([arr(M, N)], lambda a: fl.transpose(a))


# ------------------------------------------------------------------------ physics, finance

SOFTENING = 1e-2


def _nbody_acc(pos):
    """Acceleration of each body (x, y, z, mass rows) from all bodies, softened."""
    def one(pi):
        def pull(pj, k):
            dx, dy, dz = pj[0] - pi[0], pj[1] - pi[1], pj[2] - pi[2]
            inv = fl.rsqrt(dx * dx + dy * dy + dz * dz + SOFTENING)
            return pj[3] * inv * inv * inv * (pj[k] - pi[k])
        return fl.generate(3, lambda k: fl.reduce(fl.add, 0.0, fl.map(lambda pj: pull(pj, k), pos)))
    return fl.map(one, pos)


nbody = fl.fun([arr(N, 4)], _nbody_acc)

LJ1, LJ2, CUTOFF_SQ = 1.5, 2.0, 16.0


def _md_force(pos, neighbours):
    """SHOC MD: Lennard-Jones force on each atom from its neighbour list (i32 indices)."""
    def one(p):
        pi, nbrs = fl.fst(p), fl.snd(p)

        def push(j, k):
            pj = pos[j]
            dx, dy, dz = pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]
            r2 = dx * dx + dy * dy + dz * dz
            r2inv = 1.0 / r2
            r6inv = r2inv * r2inv * r2inv
            force = r2inv * r6inv * (LJ1 * r6inv - LJ2)
            return fl.select(r2 < CUTOFF_SQ, force * (pi[k] - pj[k]), 0.0)
        return fl.generate(3, lambda k: fl.reduce(fl.add, 0.0, fl.map(lambda j: push(j, k), nbrs)))
    return fl.map(one, fl.zip(pos, neighbours))


md = fl.fun([arr(N, 4), arr(N, M, t=i32)], _md_force)

RATE, VOLATILITY = 0.02, 0.30


def _cnd(x):
    return 0.5 * fl.erfc(-x * (1.0 / math.sqrt(2.0)))


def _black_scholes(s, k, t):
    sqrt_t = fl.sqrt(t)
    d1 = (fl.log(s / k) + (RATE + 0.5 * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * sqrt_t)
    d2 = d1 - VOLATILITY * sqrt_t
    discounted = k * fl.exp(-RATE * t)
    return fl.pair(s * _cnd(d1) - discounted * _cnd(d2), discounted * _cnd(-d2) - s * _cnd(-d1))


black_scholes = fl.fun([arr(N), arr(N), arr(N)], lambda s, k, t: fl.map(
    lambda p: _black_scholes(fl.fst(p), fl.fst(fl.snd(p)), fl.snd(fl.snd(p))), fl.zip(s, fl.zip(k, t))))


def _mriq(kx, ky, kz, phi, x, y, z):
    ks = fl.zip(kx, fl.zip(ky, fl.zip(kz, phi)))

    def at_point(p):
        px, py, pz = fl.fst(p), fl.fst(fl.snd(p)), fl.snd(fl.snd(p))

        def term(k):
            arg = 2.0 * math.pi * (fl.fst(k) * px + fl.fst(fl.snd(k)) * py + fl.fst(fl.snd(fl.snd(k))) * pz)
            mag = fl.snd(fl.snd(fl.snd(k)))
            return fl.pair(mag * fl.cos(arg), mag * fl.sin(arg))
        return fl.reduce(lambda a, b: fl.pair(fl.fst(a) + fl.fst(b), fl.snd(a) + fl.snd(b)),
                         fl.pair(0.0, 0.0), fl.map(term, ks))
    return fl.map(at_point, fl.zip(x, fl.zip(y, z)))


mri_q = fl.fun([arr(K), arr(K), arr(K), arr(K), arr(N), arr(N), arr(N)], _mriq)


def _mriq_two_reductions(kx, ky, kz, phi, x, y, z):
    """MRI-Q with Qr and Qi as two reductions over the k-space samples (the explorer and the
    default lowering make them one pass: rules.algorithmic pair_reduce_fusion)."""
    ks = fl.zip(kx, fl.zip(ky, fl.zip(kz, phi)))

    def at_point(p):
        px, py, pz = fl.fst(p), fl.fst(fl.snd(p)), fl.snd(fl.snd(p))

        def arg(k):
            return 2.0 * math.pi * (fl.fst(k) * px + fl.fst(fl.snd(k)) * py + fl.fst(fl.snd(fl.snd(k))) * pz)

        def mag(k):
            return fl.snd(fl.snd(fl.snd(k)))
        return fl.pair(fl.reduce(fl.add, 0.0, fl.map(lambda k: mag(k) * fl.cos(arg(k)), ks)),
                       fl.reduce(fl.add, 0.0, fl.map(lambda k: mag(k) * fl.sin(arg(k)), ks)))
    return fl.map(at_point, fl.zip(x, fl.zip(y, z)))


mri_q_two_reductions = fl.fun([arr(K), arr(K), arr(K), arr(K), arr(N), arr(N), arr(N)], _mriq_two_reductions)


# ------------------------------------------------------------------- data mining, Rodinia

def _nearest_centroid(points, centroids):
    def one(p):
        dists = fl.map(lambda c: total(fl.map(lambda q: (fl.fst(q) - fl.snd(q)) * (fl.fst(q) - fl.snd(q)),
                                              fl.zip(p, c))), centroids)
        best = fl.reduce(lambda a, b: fl.select(fl.fst(a) <= fl.fst(b), a, b),
                         fl.pair(fl.literal(float("inf"), f32), fl.literal(0, i32)),
                         fl.zip(dists, fl.generate(K, lambda i: i)))
        return fl.snd(best)
    return fl.map(one, points)


kmeans = fl.fun([arr(N, F), arr(K, F)], _nearest_centroid)

nearest_neighbour = fl.fun([arr(N, 2), f32, f32], lambda records, lat, lng: fl.map(
    lambda r: fl.sqrt((r[0] - lat) * (r[0] - lat) + (r[1] - lng) * (r[1] - lng)), records))


# --------------------------------------------------------------------------------- stencils

conv2d = fl.fun([arr(H, W), arr(5, 5)], lambda img, weights: map2d(
    lambda w: dot_body(fl.join(w), fl.join(weights)), slide2d(5, pad2d(fl.pad_clamp, 2, img))))


def _separable(img, row_k, col_k):
    horizontal = fl.map(lambda row: fl.map(lambda w: dot_body(w, row_k), fl.slide(5, 1, fl.pad_clamp(2, 2, row))), img)
    return fl.let(horizontal, lambda tmp: fl.map(
        lambda rows: fl.map(lambda col: dot_body(col, col_k), fl.transpose(rows)),
        fl.slide(5, 1, fl.pad_clamp(2, 2, tmp))))


separable_conv = fl.fun([arr(H, W), arr(5), arr(5)], _separable)

jacobi2d_5 = fl.fun([arr(H, W)], lambda grid: map2d(
    lambda w: 0.2 * (w[1][1] + w[0][1] + w[2][1] + w[1][0] + w[1][2]), slide2d(3, pad2d_zero(1, W, grid))))
jacobi2d_9 = fl.fun([arr(H, W)], lambda grid: map2d(
    lambda w: window_sum(w) / 9.0, slide2d(3, pad2d(fl.pad_wrap, 1, grid))))
jacobi3d_7 = fl.fun([arr(D, H, W)], lambda grid: map3d(
    lambda w: 0.5 * w[1][1][1] + (1.0 / 12.0) * (w[0][1][1] + w[2][1][1] + w[1][0][1] + w[1][2][1]
                                                  + w[1][1][0] + w[1][1][2]),
    slide3d(3, pad3d_clamp(1, grid))))
jacobi3d_27 = fl.fun([arr(D, H, W)], lambda grid: map3d(
    lambda w: total(fl.join(fl.join(w))) / 27.0, slide3d(3, pad3d_clamp(1, grid))))

SHOC_WEIGHTS = (0.25, 0.15, 0.05)
stencil2d = fl.fun([arr(H, W)], lambda grid: map2d(
    lambda w: SHOC_WEIGHTS[0] * w[1][1] + SHOC_WEIGHTS[1] * (w[0][1] + w[2][1] + w[1][0] + w[1][2])
    + SHOC_WEIGHTS[2] * (w[0][0] + w[0][2] + w[2][0] + w[2][2]),
    slide2d(3, pad2d(fl.pad_mirror, 1, grid))))

# Rodinia hotspot's constants, folded: step/Cap, 1/Rx, 1/Ry, 1/Rz, ambient temperature.
HS_STEP, HS_RX, HS_RY, HS_RZ, HS_AMB = 0.5, 0.1, 0.1, 0.05, 80.0


def _hotspot(temp, power):
    def cell(q):
        w, p = fl.fst(q), fl.snd(q)
        c = w[1][1]
        return c + HS_STEP * (p + (w[2][1] + w[0][1] - 2.0 * c) * HS_RY + (w[1][2] + w[1][0] - 2.0 * c) * HS_RX
                              + (HS_AMB - c) * HS_RZ)
    return map2d(cell, zip2d(slide2d(3, pad2d(fl.pad_clamp, 1, temp)), power))


hotspot2d = fl.fun([arr(H, W), arr(H, W)], _hotspot)

HS3_CC, HS3_CN, HS3_CT, HS3_DT = 0.4, 0.1, 0.1, 0.05  # centre, north/south/east/west, top/bottom, step/Cap


def _hotspot3d(temp, power):
    def cell(q):
        w, p = fl.fst(q), fl.snd(q)
        return (HS3_CC * w[1][1][1] + HS3_CN * (w[1][0][1] + w[1][2][1] + w[1][1][0] + w[1][1][2])
                + HS3_CT * (w[0][1][1] + w[2][1][1]) + HS3_DT * p + HS3_CT * HS_AMB)
    return map3d(cell, zip3d(slide3d(3, pad3d_clamp(1, temp)), power))


hotspot3d = fl.fun([arr(D, H, W), arr(D, H, W)], _hotspot3d)

SRAD_LAMBDA = 0.5


def _srad(img):
    """One SRAD iteration (Rodinia srad_v1): q0^2 from the image's statistics, the diffusion
    coefficient per pixel from its 4 neighbours, then the update from the coefficients."""
    n_pixels = H * W
    pixels = fl.join(img)
    mean = total(pixels) / n_pixels
    var = total(fl.map(lambda x: x * x, pixels)) / n_pixels - mean * mean

    def coefficient(w, q0sqr):
        c = w[1][1]
        dn, ds, dw, de = w[0][1] - c, w[2][1] - c, w[1][0] - c, w[1][2] - c
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (c * c)
        lap = (dn + ds + dw + de) / c
        num = 0.5 * g2 - (1.0 / 16.0) * lap * lap
        den = 1.0 + 0.25 * lap
        qsqr = num / (den * den)
        return fl.clamp(1.0 / (1.0 + (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr))), 0.0, 1.0)

    def update(q):
        w, cw = fl.fst(q), fl.snd(q)
        c = w[1][1]
        div = (cw[1][1] * (w[0][1] - c) + cw[2][1] * (w[2][1] - c) + cw[1][1] * (w[1][0] - c)
               + cw[1][2] * (w[1][2] - c))
        return c + 0.25 * SRAD_LAMBDA * div

    return fl.let(var / (mean * mean), lambda q0sqr: fl.let(
        map2d(lambda w: coefficient(w, q0sqr), slide2d(3, pad2d(fl.pad_clamp, 1, img))),
        lambda coeff: map2d(update, zip2d(slide2d(3, pad2d(fl.pad_clamp, 1, img)),
                                          slide2d(3, pad2d(fl.pad_clamp, 1, coeff))))))


srad = fl.fun([arr(H, W)], _srad)


# ============================================================================ references


def _pad(x, r, mode, **kw):
    return np.pad(x, r, mode=mode, **kw)


def _windows2d(p, h, w):
    """p padded by 1: the 9 shifted views [dy][dx] of an h x w grid."""
    return [[p[dy:dy + h, dx:dx + w] for dx in range(3)] for dy in range(3)]


def _windows3d(p, d, h, w):
    return [[[p[dz:dz + d, dy:dy + h, dx:dx + w] for dx in range(3)] for dy in range(3)] for dz in range(3)]


def ref_nbody(pos):
    d = pos[None, :, :3].astype(np.float64) - pos[:, None, :3]
    inv = 1.0 / np.sqrt((d * d).sum(-1) + SOFTENING)
    weight = pos[None, :, 3] * inv ** 3  # m_j / r_ij^3
    return (weight[..., None] * d).sum(1)


def ref_md(pos, nbrs):
    p = pos[:, :3].astype(np.float64)
    d = p[:, None, :] - p[nbrs]
    r2 = (d * d).sum(-1)
    r2inv = 1.0 / r2
    r6inv = r2inv ** 3
    force = np.where(r2 < CUTOFF_SQ, r2inv * r6inv * (LJ1 * r6inv - LJ2), 0.0)
    return (force[..., None] * d).sum(1)


def ref_black_scholes(s, k, t):
    try:
        from scipy.special import erfc  # fast where installed (the benchmark times this reference)
    except ImportError:
        erfc = np.vectorize(math.erfc)

    s, k, t = (a.astype(np.float64) for a in (s, k, t))

    def cnd(x):
        return 0.5 * erfc(-x / math.sqrt(2.0))

    d1 = (np.log(s / k) + (RATE + 0.5 * VOLATILITY ** 2) * t) / (VOLATILITY * np.sqrt(t))
    d2 = d1 - VOLATILITY * np.sqrt(t)
    disc = k * np.exp(-RATE * t)
    return s * cnd(d1) - disc * cnd(d2), disc * cnd(-d2) - s * cnd(-d1)


def ref_mriq(kx, ky, kz, phi, x, y, z):
    arg = 2.0 * np.pi * (np.outer(x, kx).astype(np.float64) + np.outer(y, ky) + np.outer(z, kz))
    return (np.cos(arg) * phi).sum(1), (np.sin(arg) * phi).sum(1)


def ref_kmeans(points, centroids):
    d = ((points[:, None, :].astype(np.float64) - centroids[None]) ** 2).sum(-1)
    return d.argmin(1).astype(np.int32)


def ref_nn(records, lat, lng):
    return np.sqrt((records[:, 0] - lat) ** 2 + (records[:, 1] - lng) ** 2)


def ref_conv2d(img, weights):
    h, w = img.shape
    p = _pad(img.astype(np.float64), 2, "edge")
    return sum(weights[dy, dx] * p[dy:dy + h, dx:dx + w] for dy in range(5) for dx in range(5))


def ref_separable(img, row_k, col_k):
    h, w = img.shape
    p = _pad(img.astype(np.float64), ((0, 0), (2, 2)), "edge")
    tmp = sum(row_k[dx] * p[:, dx:dx + w] for dx in range(5))
    q = _pad(tmp, ((2, 2), (0, 0)), "edge")
    return sum(col_k[dy] * q[dy:dy + h] for dy in range(5))


def ref_jacobi2d_5(g):
    w = _windows2d(_pad(g.astype(np.float64), 1, "constant"), *g.shape)
    return 0.2 * (w[1][1] + w[0][1] + w[2][1] + w[1][0] + w[1][2])


def ref_jacobi2d_9(g):
    w = _windows2d(_pad(g.astype(np.float64), 1, "wrap"), *g.shape)
    return sum(v for row in w for v in row) / 9.0


def ref_jacobi3d_7(g):
    w = _windows3d(_pad(g.astype(np.float64), 1, "edge"), *g.shape)
    return 0.5 * w[1][1][1] + (w[0][1][1] + w[2][1][1] + w[1][0][1] + w[1][2][1] + w[1][1][0] + w[1][1][2]) / 12.0


def ref_jacobi3d_27(g):
    w = _windows3d(_pad(g.astype(np.float64), 1, "edge"), *g.shape)
    return sum(v for plane in w for row in plane for v in row) / 27.0


def ref_stencil2d(g):
    w = _windows2d(_pad(g.astype(np.float64), 1, "symmetric"), *g.shape)
    a, b, c = SHOC_WEIGHTS
    return a * w[1][1] + b * (w[0][1] + w[2][1] + w[1][0] + w[1][2]) + c * (w[0][0] + w[0][2] + w[2][0] + w[2][2])


def ref_hotspot2d(temp, power):
    w = _windows2d(_pad(temp.astype(np.float64), 1, "edge"), *temp.shape)
    c = w[1][1]
    return c + HS_STEP * (power + (w[2][1] + w[0][1] - 2 * c) * HS_RY + (w[1][2] + w[1][0] - 2 * c) * HS_RX
                          + (HS_AMB - c) * HS_RZ)


def ref_hotspot3d(temp, power):
    w = _windows3d(_pad(temp.astype(np.float64), 1, "edge"), *temp.shape)
    return (HS3_CC * w[1][1][1] + HS3_CN * (w[1][0][1] + w[1][2][1] + w[1][1][0] + w[1][1][2])
            + HS3_CT * (w[0][1][1] + w[2][1][1]) + HS3_DT * power + HS3_CT * HS_AMB)


def ref_srad(img):
    j = img.astype(np.float64)
    mean = j.mean()
    q0sqr = (np.mean(j * j) - mean * mean) / (mean * mean)
    w = _windows2d(_pad(j, 1, "edge"), *j.shape)
    c = w[1][1]
    dn, ds, dw, de = w[0][1] - c, w[2][1] - c, w[1][0] - c, w[1][2] - c
    g2 = (dn * dn + ds * ds + dw * dw + de * de) / (c * c)
    lap = (dn + ds + dw + de) / c
    num = 0.5 * g2 - lap * lap / 16.0
    den = 1.0 + 0.25 * lap
    qsqr = num / (den * den)
    coeff = np.clip(1.0 / (1.0 + (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr))), 0.0, 1.0)
    cw = _windows2d(_pad(coeff, 1, "edge"), *j.shape)
    div = cw[1][1] * dn + cw[2][1] * ds + cw[1][1] * dw + cw[1][2] * de
    return c + 0.25 * SRAD_LAMBDA * div


# ================================================================ float32 NumPy equivalents
# What a NumPy user writes for the same computation: vectorised, float32 in and out (Python
# float constants stay float32 under NEP 50), BLAS where natural.  The benchmarks time these
# against our kernels; the float64 references above stay the oracles.


def numpy_asum(x):
    return np.abs(x).sum()


def numpy_dot(x, y):
    return np.dot(x, y)


def numpy_scal(a, x):
    return a * x


def numpy_mean_variance(x):
    return x.mean(), x.var()


def numpy_gemv(a, x, y, alpha, beta):
    return alpha * (a @ x) + beta * y


def numpy_gemv_t(a, x, y, alpha, beta):
    return alpha * (x @ a) + beta * y  # x^T A: BLAS reads A transposed, no copy


def numpy_atax(a, x):
    return (a @ x) @ a


def numpy_gesummv(a, b, x, alpha, beta):
    return alpha * (a @ x) + beta * (b @ x)


def numpy_transpose(a):
    return np.ascontiguousarray(a.T)


def numpy_nbody(pos):
    d = pos[None, :, :3] - pos[:, None, :3]
    inv = 1.0 / np.sqrt(np.einsum("ijk,ijk->ij", d, d) + SOFTENING)
    return np.einsum("ij,ijk->ik", pos[None, :, 3] * inv * inv * inv, d)


def numpy_md(pos, nbrs):
    p = pos[:, :3]
    d = p[:, None, :] - p[nbrs]
    r2 = np.einsum("ijk,ijk->ij", d, d)
    r2inv = 1.0 / r2
    r6inv = r2inv * r2inv * r2inv
    force = np.where(r2 < CUTOFF_SQ, r2inv * r6inv * (LJ1 * r6inv - LJ2), np.float32(0.0))
    return np.einsum("ij,ijk->ik", force, d)


def normal_cdf_polynomial(x):
    """The standard normal CDF by Abramowitz and Stegun 26.2.17 (error below 7.5e-8), in
    float32: what Black-Scholes codes use where no erfc is at hand."""
    a = np.abs(x)
    k = 1.0 / (1.0 + 0.2316419 * a)
    poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    upper = (1.0 / math.sqrt(2.0 * math.pi)) * np.exp(-0.5 * a * a) * poly  # P(Z > |x|)
    return np.where(x < 0, upper, 1.0 - upper)


def _normal_cdf():
    try:
        from scipy.special import erfc  # has a float32 loop
    except ImportError:
        return normal_cdf_polynomial
    return lambda x: 0.5 * erfc(x * (-1.0 / math.sqrt(2.0)))


def black_scholes_f32(s, k, t, cnd):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / k) + (RATE + 0.5 * VOLATILITY ** 2) * t) / (VOLATILITY * sqrt_t)
    d2 = d1 - VOLATILITY * sqrt_t
    disc = k * np.exp(-RATE * t)
    return s * cnd(d1) - disc * cnd(d2), disc * cnd(-d2) - s * cnd(-d1)


def numpy_black_scholes(s, k, t):
    return black_scholes_f32(s, k, t, _normal_cdf())


def numpy_mriq(kx, ky, kz, phi, x, y, z):
    arg = (2.0 * np.pi) * (np.stack([x, y, z], 1) @ np.stack([kx, ky, kz]))  # N x K
    return np.cos(arg) @ phi, np.sin(arg) @ phi


def numpy_kmeans(points, centroids):
    d = points[:, None, :] - centroids[None]
    return np.einsum("nkf,nkf->nk", d, d).argmin(1).astype(np.int32)


def numpy_nn(records, lat, lng):
    return np.sqrt((records[:, 0] - lat) ** 2 + (records[:, 1] - lng) ** 2)


def numpy_conv2d(img, weights):
    h, w = img.shape
    p = np.pad(img, 2, mode="edge")
    out = np.zeros_like(img)
    for dy in range(5):
        for dx in range(5):
            out += weights[dy, dx] * p[dy:dy + h, dx:dx + w]
    return out


def numpy_separable(img, row_k, col_k):
    h, w = img.shape
    p = np.pad(img, ((0, 0), (2, 2)), mode="edge")
    tmp = np.zeros_like(img)
    for dx in range(5):
        tmp += row_k[dx] * p[:, dx:dx + w]
    q = np.pad(tmp, ((2, 2), (0, 0)), mode="edge")
    out = np.zeros_like(img)
    for dy in range(5):
        out += col_k[dy] * q[dy:dy + h]
    return out


def numpy_jacobi2d_5(g):
    p = np.pad(g, 1)
    return 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


def numpy_jacobi2d_5_clamp(g):
    p = np.pad(g, 1, mode="edge")
    return 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


def numpy_jacobi2d_9(g):
    h, w = g.shape
    p = np.pad(g, 1, mode="wrap")
    out = np.zeros_like(g)
    for dy in range(3):
        for dx in range(3):
            out += p[dy:dy + h, dx:dx + w]
    return out / 9.0


def numpy_jacobi3d_7(g):
    p = np.pad(g, 1, mode="edge")
    c = p[1:-1, 1:-1, 1:-1]
    return 0.5 * c + (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1]
                      + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:]) * (1.0 / 12.0)


def numpy_jacobi3d_27(g):
    d, h, w = g.shape
    p = np.pad(g, 1, mode="edge")
    out = np.zeros_like(g)
    for dz in range(3):
        for dy in range(3):
            for dx in range(3):
                out += p[dz:dz + d, dy:dy + h, dx:dx + w]
    return out / 27.0


def numpy_stencil2d(g):
    p = np.pad(g, 1, mode="symmetric")
    a, b, c = SHOC_WEIGHTS
    return (a * p[1:-1, 1:-1] + b * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
            + c * (p[:-2, :-2] + p[:-2, 2:] + p[2:, :-2] + p[2:, 2:]))


def numpy_hotspot2d(temp, power):
    p = np.pad(temp, 1, mode="edge")
    c = p[1:-1, 1:-1]
    return c + HS_STEP * (power + (p[2:, 1:-1] + p[:-2, 1:-1] - 2.0 * c) * HS_RY
                          + (p[1:-1, 2:] + p[1:-1, :-2] - 2.0 * c) * HS_RX + (HS_AMB - c) * HS_RZ)


def numpy_hotspot3d(temp, power):
    p = np.pad(temp, 1, mode="edge")
    return (HS3_CC * p[1:-1, 1:-1, 1:-1]
            + HS3_CN * (p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1] + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:])
            + HS3_CT * (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1]) + HS3_DT * power + HS3_CT * HS_AMB)


def numpy_srad(img):
    mean = img.mean()
    q0sqr = (np.mean(img * img) - mean * mean) / (mean * mean)
    p = np.pad(img, 1, mode="edge")
    c = p[1:-1, 1:-1]
    dn, ds, dw, de = p[:-2, 1:-1] - c, p[2:, 1:-1] - c, p[1:-1, :-2] - c, p[1:-1, 2:] - c
    g2 = (dn * dn + ds * ds + dw * dw + de * de) / (c * c)
    lap = (dn + ds + dw + de) / c
    num = 0.5 * g2 - (1.0 / 16.0) * lap * lap
    den = 1.0 + 0.25 * lap
    qsqr = num / (den * den)
    coeff = np.clip(1.0 / (1.0 + (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr))), 0.0, 1.0)
    cp = np.pad(coeff, 1, mode="edge")
    cc = cp[1:-1, 1:-1]
    return c + (0.25 * SRAD_LAMBDA) * (cc * dn + cp[2:, 1:-1] * ds + cc * dw + cp[1:-1, 2:] * de)


def numpy_nn_argmin(records, lat, lng):
    return np.int32(np.argmin((records[:, 0] - lat) ** 2 + (records[:, 1] - lng) ** 2))


# ================================================================================ inputs


def _f32(rng, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def inputs_nbody(rng, n):
    pos = _f32(rng, n, 4)
    pos[:, 3] = rng.uniform(0.5, 1.0, n)
    return (pos,)


def inputs_md(rng, n, m):
    # atoms on a jittered lattice (no two closer than ~0.5), neighbours: m random other atoms
    side = int(math.ceil(n ** (1 / 3)))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
    pos = np.zeros((n, 4), np.float32)
    pos[:, :3] = grid * 1.2 + rng.uniform(-0.1, 0.1, (n, 3))
    offsets = rng.integers(1, n, (n, m))
    nbrs = ((np.arange(n)[:, None] + offsets) % n).astype(np.int32)
    return pos, nbrs


def inputs_black_scholes(rng, n):
    return (_f32(rng, n, low=5.0, high=30.0), _f32(rng, n, low=1.0, high=100.0), _f32(rng, n, low=0.25, high=10.0))


def inputs_mriq(rng, k, n):
    return tuple(_f32(rng, k, low=-0.5, high=0.5) for _ in range(3)) + (_f32(rng, k, low=0.0, high=1.0),) \
        + tuple(_f32(rng, n, low=-0.5, high=0.5) for _ in range(3))


def inputs_kmeans(rng, n, k, f):
    return _f32(rng, n, f), _f32(rng, k, f)


def inputs_nn(rng, n):
    records = np.stack([rng.uniform(-90, 90, n), rng.uniform(-180, 180, n)], 1).astype(np.float32)
    return records, np.float32(30.0), np.float32(90.0)


def inputs_vec(rng, n):
    return (_f32(rng, n),)


def inputs_grid(rng, **size):
    shape = tuple(size.values())
    return (_f32(rng, *shape, low=0.5, high=1.5),)


def inputs_hotspot(rng, **size):
    shape = tuple(size.values())
    return _f32(rng, *shape, low=320.0, high=340.0), _f32(rng, *shape, low=0.0, high=1.0)


# ============================================================================== registry


class Entry(NamedTuple):
    """One application: `make_inputs(rng, **size)` builds its inputs; `reference(*inputs)`
    is NumPy's answer, the oracle (in float64 where that matters); `numpy(*inputs)` is the
    same computation as a NumPy user writes it in float32, what the benchmarks time;
    `tolerance` bounds dpia.programs.relative_error (largest difference over max(1, largest
    magnitude)); `small` for tests and the interpreter, `moderate` for tests on PoCL, `bench`
    for the benchmark only."""

    name: str
    program: fl.Expr
    reference: Callable
    numpy: Callable
    make_inputs: Callable
    small: dict
    moderate: dict
    bench: dict
    tolerance: float = 1e-4
    note: str = ""


# Tolerances: 1e-4 for short sums and pointwise maps in f32; sums of many terms whose
# magnitude is ~sqrt(n) (dot, asum over 2^20, MRI-Q over K terms) get 1e-3; N-Body and MD,
# whose terms go like 1/r^3 and 1/r^14, are compared relative to their largest value.
# mean/variance: 1e-5, what summing in a tree gives in f32 (~1e-7 at 2^20); a sequential f32
# sum of 2^20 terms is off by ~1e-4.
SUITE: list[Entry] = [
    Entry("nbody", nbody, ref_nbody, numpy_nbody, inputs_nbody, dict(n=64), dict(n=2048), dict(n=2048), 1e-3),
    Entry("kmeans", kmeans, ref_kmeans, numpy_kmeans, inputs_kmeans, dict(n=256, k=8, f=4),
          dict(n=1 << 16, k=16, f=8), dict(n=1 << 17, k=16, f=8), 0.0),
    Entry("nn", nearest_neighbour, ref_nn, numpy_nn, inputs_nn, dict(n=1000), dict(n=1 << 20), dict(n=1 << 22)),
    Entry("mri_q", mri_q, ref_mriq, numpy_mriq, inputs_mriq, dict(k=64, n=128), dict(k=1024, n=8192),
          dict(k=1024, n=16384), 1e-3),
    Entry("md", md, ref_md, numpy_md, inputs_md, dict(n=64, m=8), dict(n=1 << 14, m=32), dict(n=1 << 15, m=64),
          1e-3),
    Entry("black_scholes", black_scholes, ref_black_scholes, numpy_black_scholes, inputs_black_scholes,
          dict(n=1000), dict(n=1 << 18), dict(n=1 << 21)),
    Entry("atax", atax, lambda a, x: a.T @ (a @ x), numpy_atax,
          lambda r, m, n: (_f32(r, m, n), _f32(r, n)), dict(m=24, n=32), dict(m=1024, n=1024), dict(m=2048, n=2048),
          1e-3),
    Entry("gesummv", gesummv, lambda a, b, x, al, be: al * (a @ x) + be * (b @ x), numpy_gesummv,
          lambda r, n: (_f32(r, n, n), _f32(r, n, n), _f32(r, n), np.float32(1.5), np.float32(1.2)),
          dict(n=32), dict(n=1024), dict(n=2048), 1e-3),
    Entry("gemv", gemv, lambda a, x, y, al, be: al * (a @ x) + be * y, numpy_gemv,
          lambda r, m, n: (_f32(r, m, n), _f32(r, n), _f32(r, m), np.float32(0.5), np.float32(2.0)),
          dict(m=24, n=32), dict(m=1024, n=1024), dict(m=4096, n=4096), 1e-3),
    Entry("gemv_t", gemv_t, lambda a, x, y, al, be: al * (a.T @ x) + be * y, numpy_gemv_t,
          lambda r, m, n: (_f32(r, m, n), _f32(r, m), _f32(r, n), np.float32(0.5), np.float32(2.0)),
          dict(m=24, n=32), dict(m=1024, n=1024), dict(m=4096, n=4096), 1e-3),
    Entry("transpose", transpose, lambda a: np.ascontiguousarray(a.T), numpy_transpose,
          lambda r, m, n: (_f32(r, m, n),), dict(m=24, n=40), dict(m=1024, n=512), dict(m=4096, n=4096), 0.0),
    Entry("conv2d_5x5", conv2d, ref_conv2d, numpy_conv2d,
          lambda r, h, w: (_f32(r, h, w), _f32(r, 5, 5, low=0.0, high=0.08)),
          dict(h=20, w=24), dict(h=512, w=512), dict(h=2048, w=2048)),
    Entry("separable_conv", separable_conv, ref_separable, numpy_separable,
          lambda r, h, w: (_f32(r, h, w), _f32(r, 5, low=0.0, high=0.4), _f32(r, 5, low=0.0, high=0.4)),
          dict(h=20, w=24), dict(h=512, w=512), dict(h=2048, w=2048)),
    Entry("hotspot2d", hotspot2d, ref_hotspot2d, numpy_hotspot2d, inputs_hotspot, dict(h=16, w=20),
          dict(h=512, w=512), dict(h=2048, w=2048)),
    Entry("hotspot3d", hotspot3d, ref_hotspot3d, numpy_hotspot3d, inputs_hotspot, dict(d=6, h=8, w=10),
          dict(d=8, h=256, w=256), dict(d=16, h=512, w=512)),
    Entry("jacobi2d_5", jacobi2d_5, ref_jacobi2d_5, numpy_jacobi2d_5, inputs_grid, dict(h=16, w=20),
          dict(h=512, w=512), dict(h=2048, w=2048)),
    Entry("jacobi2d_9", jacobi2d_9, ref_jacobi2d_9, numpy_jacobi2d_9, inputs_grid, dict(h=16, w=20),
          dict(h=512, w=512), dict(h=2048, w=2048)),
    Entry("jacobi3d_7", jacobi3d_7, ref_jacobi3d_7, numpy_jacobi3d_7, inputs_grid, dict(d=6, h=8, w=10),
          dict(d=64, h=64, w=64), dict(d=128, h=128, w=128)),
    Entry("jacobi3d_27", jacobi3d_27, ref_jacobi3d_27, numpy_jacobi3d_27, inputs_grid, dict(d=6, h=8, w=10),
          dict(d=64, h=64, w=64), dict(d=128, h=128, w=128)),
    Entry("srad", srad, ref_srad, numpy_srad, inputs_grid, dict(h=16, w=20), dict(h=512, w=512),
          dict(h=2048, w=2048)),
    Entry("stencil2d", stencil2d, ref_stencil2d, numpy_stencil2d, inputs_grid, dict(h=16, w=20),
          dict(h=512, w=512), dict(h=2048, w=2048)),
    Entry("asum", asum, lambda x: np.abs(x.astype(np.float64)).sum(), numpy_asum, inputs_vec, dict(n=1000),
          dict(n=1 << 20), dict(n=1 << 24), 1e-3),
    Entry("dot", dot, lambda x, y: np.dot(x.astype(np.float64), y), numpy_dot, lambda r, n: (_f32(r, n), _f32(r, n)),
          dict(n=1000), dict(n=1 << 20), dict(n=1 << 24), 1e-3),
    Entry("scal", scal, lambda a, x: a * x, numpy_scal, lambda r, n: (np.float32(1.5), _f32(r, n)), dict(n=1000),
          dict(n=1 << 20), dict(n=1 << 24)),
    Entry("mean_variance", mean_variance, lambda x: (x.astype(np.float64).mean(), x.astype(np.float64).var()),
          numpy_mean_variance, inputs_vec, dict(n=1000), dict(n=1 << 20), dict(n=1 << 24), 1e-5),
]


# Other natural formulations of the same applications (same references): the compiler must
# cope with these as well as with the ones above.
asum_fold = fl.fun([arr(N)], lambda xs: fl.reduce(lambda acc, x: acc + fl.abs(x), 0.0, xs))
mean_variance_one_pass = fl.fun([arr(N)], lambda xs: fl.let(
    fl.reduce(lambda a, b: fl.pair(fl.fst(a) + fl.fst(b), fl.snd(a) + fl.snd(b)), fl.pair(0.0, 0.0),
              fl.map(lambda x: fl.pair(x, x * x), xs)),
    lambda sums: fl.pair(fl.fst(sums) / N, fl.snd(sums) / N - (fl.fst(sums) / N) * (fl.fst(sums) / N))))
atax_inline = fl.fun([arr(M, N), arr(N)], lambda a, x: fl.map(
    lambda col: dot_body(col, fl.map(lambda row: dot_body(row, x), a)), fl.transpose(a)))
gemv_t_columns = fl.fun([arr(M, N), arr(M), arr(N), f32, f32], lambda a, x, y, alpha, beta: fl.map(
    lambda p: alpha * fl.reduce(fl.add, 0.0, fl.map(lambda q: fl.fst(q) * fl.snd(q), fl.zip(fl.fst(p), x)))
    + beta * fl.snd(p), fl.zip(fl.transpose(a), y)))
nn_argmin = fl.fun([arr(N, 2), f32, f32], lambda records, lat, lng: fl.snd(fl.reduce(
    lambda a, b: fl.select(fl.fst(a) <= fl.fst(b), a, b), fl.pair(fl.literal(float("inf"), f32), fl.literal(0, i32)),
    fl.zip(fl.map(lambda r: (r[0] - lat) * (r[0] - lat) + (r[1] - lng) * (r[1] - lng), records),
           fl.generate(N, lambda i: i)))))
jacobi2d_5_clamp_sum = fl.fun([arr(H, W)], lambda grid: map2d(
    lambda w: 0.2 * (window_sum(w) - w[0][0] - w[0][2] - w[2][0] - w[2][2]), slide2d(3, pad2d(fl.pad_clamp, 1, grid))))

# Written with indices, as from loops: rules.indexing reads them as the data flow above.
gemv_indexed = fl.fun([arr(M, N), arr(N), arr(M), f32, f32], lambda a, x, y, alpha, beta: fl.generate(
    M, lambda i: alpha * fl.reduce(fl.add, 0.0, fl.generate(N, lambda j: a[i][j] * x[j])) + beta * y[i]))


def _hotspot_indexed(temp, power):
    def before(i):
        return fl.max(i - 1, 0)

    def after(i, n):
        return fl.min(i + 1, fl.nat_value(n) - 1)

    def cell(i, j):
        c = temp[i][j]
        return c + HS_STEP * (power[i][j] + (temp[after(i, H)][j] + temp[before(i)][j] - 2.0 * c) * HS_RY
                              + (temp[i][after(j, W)] + temp[i][before(j)] - 2.0 * c) * HS_RX + (HS_AMB - c) * HS_RZ)
    return fl.generate(H, lambda i: fl.generate(W, lambda j: cell(i, j)))


hotspot2d_indexed = fl.fun([arr(H, W), arr(H, W)], _hotspot_indexed)


def ref_jacobi2d_5_clamp(g):
    w = _windows2d(_pad(g.astype(np.float64), 1, "edge"), *g.shape)
    return 0.2 * (w[1][1] + w[0][1] + w[2][1] + w[1][0] + w[1][2])


def ref_nn_argmin(records, lat, lng):
    return np.int32(np.argmin((records[:, 0] - lat) ** 2 + (records[:, 1] - lng) ** 2))


def inputs_nn_distinct(rng, n):
    records, lat, lng = inputs_nn(rng, n)
    return records, np.float32(records[n // 3, 0] + 1e-3), np.float32(records[n // 3, 1])  # one clear nearest


_by = {e.name: e for e in SUITE}
ALTERNATIVES: list[Entry] = [
    _by["asum"]._replace(name="asum_fold", program=asum_fold, note="fold with a lambda, no map"),
    _by["mean_variance"]._replace(name="mean_variance_one_pass", program=mean_variance_one_pass,
                                  tolerance=1e-4, note="sum and sum of squares in one pass (pair reduction)"),
    _by["atax"]._replace(name="atax_inline", program=atax_inline, moderate=dict(m=128, n=128),
                         bench=dict(m=128, n=128), note="A^T (A x) without the let: A x per column"),
    _by["gemv_t"]._replace(name="gemv_t_columns", program=gemv_t_columns, note="dot product spelt out"),
    _by["mri_q"]._replace(name="mri_q_two_reductions", program=mri_q_two_reductions,
                          note="Qr and Qi as two reductions over the samples"),
    Entry("nn_argmin", nn_argmin, ref_nn_argmin, numpy_nn_argmin, inputs_nn_distinct, dict(n=1000),
          dict(n=1 << 20), dict(n=1 << 22), 0.0, note="the nearest record's index: argmin over all records"),
    _by["gemv"]._replace(name="gemv_indexed", program=gemv_indexed, note="written with indices: a[i][j] * x[j]"),
    _by["hotspot2d"]._replace(name="hotspot2d_indexed", program=hotspot2d_indexed,
                              note="written with indices, neighbours clamped by max and min"),
    _by["jacobi2d_5"]._replace(name="jacobi2d_5_clamp_sum", program=jacobi2d_5_clamp_sum,
                               reference=ref_jacobi2d_5_clamp,
                               numpy=numpy_jacobi2d_5_clamp, note="window sum minus the corners, clamped"),
]

BY_NAME = {e.name: e for e in SUITE + ALTERNATIVES}


def inputs(entry: Entry, size: dict, seed: int = 0) -> tuple:
    return entry.make_inputs(np.random.default_rng(seed), **size)


def check_on_device(names: list[str]) -> int:
    """Compile and run the named entries (all if none) at their small sizes on the default
    device ($DPIA_DEVICE: the Oclgrind check runs this in a subprocess), print one JSON line
    per entry: name, status (ok, wrong, error), relative error, message."""
    import json

    import dpia
    from dpia.programs import relative_error

    wrong = 0
    for e in [BY_NAME[n] for n in names] if names else SUITE + ALTERNATIVES:
        row = {"name": e.name}
        try:
            kernel = dpia.compile(e.program, name=dpia.kernel_name_for(e.name), db=False)
            args = inputs(e, e.small)
            err = relative_error(kernel(*args), e.reference(*args))
            row.update(status="ok" if err <= e.tolerance else "wrong", error=err, device=kernel.kernel.device.name)
        except Exception as exc:  # noqa: BLE001 -- reported per entry, the others still run
            row.update(status="error", message=f"{type(exc).__name__}: {exc}")
        wrong += row["status"] != "ok"
        print(json.dumps(row), flush=True)
    return 1 if wrong else 0


def check_in_interpreter(entries, make_inputs, width: int = 16) -> int:
    """Each entry's program interpreted at its small sizes against its reference (`make_inputs(entry,
    sizes)` gives the arguments), a line each; 1 if any disagrees (examples/formulations.py too)."""
    from dpia.programs import relative_error

    bad = 0
    for e in entries:
        args = make_inputs(e, e.small)
        err = relative_error(fl.interpret(e.program, *args), e.reference(*args))
        bad += not err <= max(e.tolerance, 1e-4)
        print(f"{e.name:{width}s} rel.err {err:.1e}  {fl.infer(e.program).type}")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--device"]:
        return check_on_device(argv[1:])
    return check_in_interpreter(SUITE + ALTERNATIVES, inputs)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
