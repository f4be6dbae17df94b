"""torch.compile of the suite's programs on CUDA tensors: what a GPU user writes today, the
reference issue 13 measures us against.

Each float32 NumPy function of examples/suite.py (`Entry.numpy`) has its line-by-line torch
transcription here (`TORCH`, keyed by the NumPy function, so an alternative formulation that
shares a NumPy function shares its torch one): the same slices, pads and reductions, in torch
calls.  Inductor compiles it in its default mode.  Not `torch.compiler.wrap_numpy` on the NumPy
code itself: measured on the H200, its `np.pad` and fancy indexing fall back to slow paths
(Jacobi 2D 8192^2 298 ms against 0.2 ms for the transcription).

    python benchmarks/torch_compiled.py --suite moderate      # check and time every entry
    python benchmarks/torch_compiled.py nbody:n=16384 jacobi2d_5:h=8192,w=8192

Each entry is checked against its NumPy function on the same inputs before it is timed.
Runs on CUDA where torch has it, else on the CPU (Inductor's C++ backend: a check only).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))


def _pad(torch, x, r, mode="constant"):
    """np.pad(x, r, mode) for mode constant (zeros), edge, wrap; symmetric at r=1 is edge."""
    import torch.nn.functional as F

    if mode == "symmetric" and r == 1:
        mode = "edge"
    widths = sum(((r, r) if isinstance(r, int) else tuple(r[i]) for i in reversed(range(x.ndim))), ())
    if mode == "constant":
        return F.pad(x, widths)
    torch_mode = {"edge": "replicate", "wrap": "circular"}[mode]
    batched = x[None, None]  # replicate and circular want a batch and a channel dimension
    return F.pad(batched, widths, mode=torch_mode)[0, 0]


def _torch_functions(torch) -> dict:
    """{NumPy function of examples/suite.py: its torch transcription}."""
    import suite as s

    def asum(x):
        return x.abs().sum()

    def dot(x, y):
        return torch.dot(x, y)

    def scal(a, x):
        return a * x

    def mean_variance(x):
        return x.mean(), x.var(correction=0)

    def gemv(a, x, y, alpha, beta):
        return alpha * (a @ x) + beta * y

    def gemv_t(a, x, y, alpha, beta):
        return alpha * (x @ a) + beta * y

    def atax(a, x):
        return (a @ x) @ a

    def gesummv(a, b, x, alpha, beta):
        return alpha * (a @ x) + beta * (b @ x)

    def transpose(a):
        return a.t().contiguous()

    def nbody(pos):
        d = pos[None, :, :3] - pos[:, None, :3]
        inv = 1.0 / torch.sqrt((d * d).sum(-1) + s.SOFTENING)
        return ((pos[None, :, 3] * inv * inv * inv)[..., None] * d).sum(1)

    def md(pos, nbrs):
        p = pos[:, :3]
        d = p[:, None, :] - p[nbrs.long()]
        r2 = (d * d).sum(-1)
        r2inv = 1.0 / r2
        r6inv = r2inv * r2inv * r2inv
        force = torch.where(r2 < s.CUTOFF_SQ, r2inv * r6inv * (s.LJ1 * r6inv - s.LJ2), 0.0)
        return (force[..., None] * d).sum(1)

    def black_scholes(sp, k, t):
        def cnd(x):
            return 0.5 * torch.erfc(x * (-1.0 / math.sqrt(2.0)))

        sqrt_t = torch.sqrt(t)
        d1 = (torch.log(sp / k) + (s.RATE + 0.5 * s.VOLATILITY ** 2) * t) / (s.VOLATILITY * sqrt_t)
        d2 = d1 - s.VOLATILITY * sqrt_t
        disc = k * torch.exp(-s.RATE * t)
        return sp * cnd(d1) - disc * cnd(d2), disc * cnd(-d2) - sp * cnd(-d1)

    def mriq(kx, ky, kz, phi, x, y, z):
        arg = (2.0 * math.pi) * (torch.stack([x, y, z], 1) @ torch.stack([kx, ky, kz]))
        return torch.cos(arg) @ phi, torch.sin(arg) @ phi

    def kmeans(points, centroids):
        d = points[:, None, :] - centroids[None]
        return (d * d).sum(-1).argmin(1).int()

    def nn(records, lat, lng):
        return torch.sqrt((records[:, 0] - lat) ** 2 + (records[:, 1] - lng) ** 2)

    def nn_argmin(records, lat, lng):
        return ((records[:, 0] - lat) ** 2 + (records[:, 1] - lng) ** 2).argmin().int()

    def conv2d(img, weights):
        h, w = img.shape
        p = _pad(torch, img, 2, "edge")
        out = torch.zeros_like(img)
        for dy in range(5):
            for dx in range(5):
                out = out + weights[dy, dx] * p[dy:dy + h, dx:dx + w]
        return out

    def separable(img, row_k, col_k):
        h, w = img.shape
        p = _pad(torch, img, ((0, 0), (2, 2)), "edge")
        tmp = torch.zeros_like(img)
        for dx in range(5):
            tmp = tmp + row_k[dx] * p[:, dx:dx + w]
        q = _pad(torch, tmp, ((2, 2), (0, 0)), "edge")
        out = torch.zeros_like(img)
        for dy in range(5):
            out = out + col_k[dy] * q[dy:dy + h]
        return out

    def jacobi2d_5(g, mode="constant"):
        p = _pad(torch, g, 1, mode)
        return 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])

    def jacobi2d_9(g):
        h, w = g.shape
        p = _pad(torch, g, 1, "wrap")
        out = torch.zeros_like(g)
        for dy in range(3):
            for dx in range(3):
                out = out + p[dy:dy + h, dx:dx + w]
        return out / 9.0

    def jacobi3d_7(g):
        p = _pad(torch, g, 1, "edge")
        c = p[1:-1, 1:-1, 1:-1]
        return 0.5 * c + (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1]
                          + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:]) * (1.0 / 12.0)

    def jacobi3d_27(g):
        d, h, w = g.shape
        p = _pad(torch, g, 1, "edge")
        out = torch.zeros_like(g)
        for dz in range(3):
            for dy in range(3):
                for dx in range(3):
                    out = out + p[dz:dz + d, dy:dy + h, dx:dx + w]
        return out / 27.0

    def stencil2d(g):
        p = _pad(torch, g, 1, "symmetric")
        a, b, c = s.SHOC_WEIGHTS
        return (a * p[1:-1, 1:-1] + b * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
                + c * (p[:-2, :-2] + p[:-2, 2:] + p[2:, :-2] + p[2:, 2:]))

    def hotspot2d(temp, power):
        p = _pad(torch, temp, 1, "edge")
        c = p[1:-1, 1:-1]
        return c + s.HS_STEP * (power + (p[2:, 1:-1] + p[:-2, 1:-1] - 2.0 * c) * s.HS_RY
                                + (p[1:-1, 2:] + p[1:-1, :-2] - 2.0 * c) * s.HS_RX + (s.HS_AMB - c) * s.HS_RZ)

    def hotspot3d(temp, power):
        p = _pad(torch, temp, 1, "edge")
        return (s.HS3_CC * p[1:-1, 1:-1, 1:-1]
                + s.HS3_CN * (p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1] + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:])
                + s.HS3_CT * (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1]) + s.HS3_DT * power + s.HS3_CT * s.HS_AMB)

    def srad(img):
        mean = img.mean()
        q0sqr = ((img * img).mean() - mean * mean) / (mean * mean)
        p = _pad(torch, img, 1, "edge")
        c = p[1:-1, 1:-1]
        dn, ds, dw, de = p[:-2, 1:-1] - c, p[2:, 1:-1] - c, p[1:-1, :-2] - c, p[1:-1, 2:] - c
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (c * c)
        lap = (dn + ds + dw + de) / c
        num = 0.5 * g2 - (1.0 / 16.0) * lap * lap
        den = 1.0 + 0.25 * lap
        qsqr = num / (den * den)
        coeff = torch.clip(1.0 / (1.0 + (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr))), 0.0, 1.0)
        cp = _pad(torch, coeff, 1, "edge")
        cc = cp[1:-1, 1:-1]
        return c + (0.25 * s.SRAD_LAMBDA) * (cc * dn + cp[2:, 1:-1] * ds + cc * dw + cp[1:-1, 2:] * de)

    return {s.numpy_asum: asum, s.numpy_dot: dot, s.numpy_scal: scal, s.numpy_mean_variance: mean_variance,
            s.numpy_gemv: gemv, s.numpy_gemv_t: gemv_t, s.numpy_atax: atax, s.numpy_gesummv: gesummv,
            s.numpy_transpose: transpose, s.numpy_nbody: nbody, s.numpy_md: md,
            s.numpy_black_scholes: black_scholes, s.numpy_mriq: mriq, s.numpy_kmeans: kmeans, s.numpy_nn: nn,
            s.numpy_nn_argmin: nn_argmin, s.numpy_conv2d: conv2d, s.numpy_separable: separable,
            s.numpy_jacobi2d_5: jacobi2d_5, s.numpy_jacobi2d_5_clamp: lambda g: jacobi2d_5(g, "edge"),
            s.numpy_jacobi2d_9: jacobi2d_9, s.numpy_jacobi3d_7: jacobi3d_7, s.numpy_jacobi3d_27: jacobi3d_27,
            s.numpy_stencil2d: stencil2d, s.numpy_hotspot2d: hotspot2d, s.numpy_hotspot3d: hotspot3d,
            s.numpy_srad: srad}


def numpy_function(name: str):
    """Suite entry `name`'s float32 NumPy function (examples/suite.py)."""
    import suite

    return suite.BY_NAME[name].numpy


def torch_function(name: str, torch):
    """The torch transcription of suite entry `name`'s NumPy function."""
    fn = numpy_function(name)
    table = _torch_functions(torch)
    if fn not in table:
        raise KeyError(f"{name}: its NumPy function {fn.__name__} has no torch transcription in {__file__}")
    return table[fn]


def _device(torch) -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def on_device(inputs: tuple, torch) -> tuple:
    """The inputs as tensors on the device; NumPy scalars as Python numbers."""
    return tuple(torch.from_numpy(np.ascontiguousarray(v)).to(_device(torch)) if isinstance(v, np.ndarray) and v.ndim
                 else v.item() if isinstance(v, (np.generic, np.ndarray)) else v for v in inputs)


def _host(value) -> list[np.ndarray]:
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v) for v in values]


def _difference(got: np.ndarray, expected: np.ndarray) -> float:
    """Largest difference relative to the largest magnitude; for integer results (an argmin) the
    fraction that differ, since float32 rounding in another order may turn a near tie."""
    if np.issubdtype(expected.dtype, np.integer):
        return float(np.mean(got != expected)) if expected.size else 0.0
    got, expected = got.astype(np.float64), expected.astype(np.float64)
    return float(np.max(np.abs(got - expected), initial=0.0)) / max(1.0, float(np.max(np.abs(expected), initial=0.0)))


def check_and_time(name: str, inputs: tuple, repeat: int, torch) -> tuple[float, float, float]:
    """(seconds per call after warm-up, difference from the NumPy function (`_difference`),
    seconds torch.compile took) for suite entry `name` on `inputs`."""
    expected = _host(numpy_function(name)(*inputs))
    args = on_device(inputs, torch)
    kernel = torch.compile(torch_function(name, torch))  # the default mode: what a user writes
    started = time.perf_counter()
    got = _host(kernel(*args))
    compile_s = time.perf_counter() - started
    if len(got) != len(expected):
        raise ValueError(f"{name}: torch.compile gave {len(got)} outputs, NumPy {len(expected)}")
    error = max(_difference(g, e) for g, e in zip(got, expected))
    return cuda_time(torch, lambda: kernel(*args), repeat), error, compile_s


def cuda_time(torch, fn, repeat: int) -> float:
    """Median seconds of `fn` by CUDA events (on the CPU: wall clock), after three warm-up calls."""
    if not torch.cuda.is_available():
        times = []
        for _ in range(repeat + 3):
            started = time.perf_counter()
            fn()
            times.append(time.perf_counter() - started)
        return float(np.median(times[3:]))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat + 3):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return float(np.median(times[3:]))


def main(argv=None) -> int:
    import suite
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", help="NAME:size=value,... (suite entries)")
    ap.add_argument("--suite", choices=("small", "moderate", "bench"), default=None)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    entries = suite.BY_NAME
    targets = list(args.targets) + ([f"{e.name}:" + ",".join(f"{k}={v}" for k, v in getattr(e, args.suite).items())
                                     for e in suite.SUITE + suite.ALTERNATIVES] if args.suite else [])
    failed = 0
    print(f"{'target':40s} {'ms':>10s} {'error':>9s} {'compile s':>9s}")
    for spec in targets:
        name, _, size_text = spec.partition(":")
        size = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
        inputs = tuple(entries[name].make_inputs(np.random.default_rng(0), **size))
        try:
            t, error, compile_s = check_and_time(name, inputs, args.repeat, torch)
        except Exception as exc:  # one entry's failure must not hide the others
            failed += 1
            print(f"{spec:40s} FAILED {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
            continue
        bad = error > max(entries[name].tolerance, 1e-4)
        failed += bad
        print(f"{spec:40s} {t * 1e3:10.4f} {error:9.1e} {compile_s:9.1f}{'  WRONG' if bad else ''}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
