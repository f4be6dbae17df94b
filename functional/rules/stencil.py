"""Stencil rules: slide and pad, their interplay with split, take, drop, transpose and
maps, and overlapped tiling.

`slide n s xs` (window size n, step s) of an array of length L has M = (L - n)/s + 1
windows; window k is xs[k*s : k*s + n].

Overlapped tiling (Hagedorn et al., CGO 2018) cuts xs into tiles of u elements, each
advancing v, and slides inside every tile:

    slide n s xs = join (map (slide n s) (slide u v xs))

Tile t holds xs[t*v : t*v + u]; inside it the windows start at t*v + j*s for
j < J = (u - n)/s + 1.  In join order the window number is t*J + j, and the original
window with that number starts at (t*J + j)*s, so the two agree for every t, j exactly
when v = J*s, i.e.

    v = u - n + s        (consecutive tiles overlap by u - v = n - s elements)

together with what makes both sides well typed: u >= n, s divides u - n (J is whole) and
v divides L - u (the tiles cover xs).  The counts then agree: T*J = ((L - u)/v + 1)*J =
(L - u)/s + J = (L - n)/s + 1 = M.
"""

from __future__ import annotations

import numpy as np

from .. import dsl as fl
from ..nat import Nat, divides, is_nonneg, is_positive, proves_lt
from ..types import array, f32
from . import instances as inst
from .core import OneOf, P, V, beta, length, rule
from .movement import element_fn, map_fn, nested, one_input, prim_fn_params, row_map

_COPY_PADS = frozenset({"pad_clamp", "pad_wrap", "pad_mirror"})  # pads that copy elements of xs
_ANY_PAD = OneOf(P("pad_const", V("v"), V("xs"), params=("l", "r"), bind="pad"),
                 P(_COPY_PADS, V("xs"), params=("l", "r"), bind="pad"))


def _pad(kind: str, l, r, xs, v=None):
    """`pad_const l r v xs` or `pad_kind l r xs`."""
    if kind == "pad_const":
        return fl.pad_const(l, r, v, xs)
    return getattr(fl, kind)(l, r, xs)


def _slide_input(rng, n: int, s: int, windows: int, extra_windows: int = 0):
    """The length of an array with `windows` windows of size n and step s: s*(M-1) + n,
    symbolic (s*(N + extra) + n - s with N = windows - extra) half of the time."""
    base = windows - extra_windows
    var = inst.length(rng, base)
    return s * (var + extra_windows) + n - s, s * (windows - 1) + n


def _window(rng):
    n = int(rng.integers(1, 5))
    s = int(rng.integers(1, 4))
    return n, s


# --------------------------------------------------------------------- slide / split


def _ex_slide_split(rng):
    _, shape, monoid = element_fn(rng)
    n = int(rng.integers(1, 5))
    total = inst.size(rng, n)
    prog, inputs = one_input(rng, (inst.length(rng, total, n),), (total,), lambda xs: fl.slide(n, n, xs),
                             shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("slide_split", "stencil", "slide n s xs -> split n xs   (s = n: windows that neither overlap nor skip)",
     lhs=P("slide", V("xs"), params=("n", "s")),
     side=lambda m: None if m.n == m.s else f"the step {m.s} is not the window size {m.n}",
     build=lambda m: fl.split(m.n, m.xs), example=_ex_slide_split)


def _ex_split_slide(rng):
    _, shape, monoid = element_fn(rng)
    n = int(rng.integers(1, 5))
    total = inst.size(rng, n)
    prog, inputs = one_input(rng, (inst.length(rng, total, n),), (total,), lambda xs: fl.split(n, xs),
                             shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("split_slide", "stencil", "split n xs -> slide n n xs",
     lhs=P("split", V("xs"), params=("n",)),
     build=lambda m: fl.slide(m.n, m.n, m.xs), example=_ex_split_slide)

# ------------------------------------------------------------------ slide and maps


def _ex_slide(build):
    """A program `build(rng, f, n, s, xs)` over an array with a whole number of windows."""

    def ex(rng):
        f, shape, monoid = element_fn(rng)
        n, s = _window(rng)
        windows = inst.size(rng, 1, 1, 5)
        sym, total = _slide_input(rng, n, s, windows)
        prog, inputs = one_input(rng, (sym,), (total,), lambda xs: build(rng, f, n, s, xs), shape=shape, monoid=monoid)
        return prog, inputs, {}

    return ex


rule("map_slide", "stencil", "map (map f) (slide n s xs) -> slide n s (map f xs)",
     lhs=P("map", V("g"), P("slide", V("xs"), params=("n", "s"))),
     side=lambda m: None if map_fn(m.g) is not None else "the function is not `map f`",
     build=lambda m: fl.slide(m.n, m.s, fl.map(map_fn(m.g), m.xs)),
     example=_ex_slide(lambda rng, f, n, s, xs: fl.map(row_map(rng, f), fl.slide(n, s, xs))),
     doc="Computes f once per element instead of once per window it appears in (n/s times).")

rule("slide_map", "stencil", "slide n s (map f xs) -> map (map f) (slide n s xs)",
     lhs=P("slide", P("map", V("f"), V("xs")), params=("n", "s")),
     build=lambda m: fl.map(fl.map(m.f), fl.slide(m.n, m.s, m.xs)),
     example=_ex_slide(lambda rng, f, n, s, xs: fl.slide(n, s, fl.map(f, xs))),
     doc="Recomputes f in every window (no intermediate array): the stencil choice between "
         "recomputation and storage.")

# ----------------------------------------------------------------- overlapped tiling


def _tiling_side(m):
    n, s, u, v = m.n, m.s, m.u, m.v
    if v != u - n + s:
        return (f"the tile step {v} is not u - n + s = {u - n + s} (tiles of {u} must overlap by "
                f"n - s = {n - s})")
    if not is_nonneg(u - n):
        return f"the tile size {u} is smaller than the window {n}"
    if not divides(s, u - n):
        return f"the step {s} does not divide u - n = {u - n}"
    total = length(m.xs)
    if not is_nonneg(total - u):
        return f"the array (length {total}) is not known to hold a whole tile of {u}"
    if not divides(v, total - u):
        return f"the tile step {v} does not divide {total - u} (the tiles do not cover the array)"
    return None


def _ex_tiling(rng):
    f, shape, monoid = element_fn(rng)
    n, s = _window(rng)
    per_tile = int(rng.integers(1, 4))  # J windows per tile
    u, v = n + (per_tile - 1) * s, per_tile * s
    tiles = inst.size(rng, 1, 1, 4)
    total = v * (tiles - 1) + u
    sym = v * inst.length(rng, tiles) + u - v
    # a stencil: sum over every window (scalars), or f on every element of every window
    stencil = fl.reduce(fl.add, 0.0) if not shape else fl.map(f)
    prog, inputs = one_input(rng, (sym,), (total,), lambda xs: fl.map(stencil, fl.slide(n, s, xs)),
                             shape=shape, monoid=monoid)
    return prog, inputs, {"u": u, "v": v}


rule("slide_tiling", "stencil",
     "slide n s xs -> join (map (slide n s) (slide u v xs))   (v = u - n + s, u >= n, s | u - n, v | L - u)",
     lhs=P("slide", V("xs"), params=("n", "s")), params=("u", "v"), side=_tiling_side,
     build=lambda m: fl.join(fl.map(fl.slide(m.n, m.s), fl.slide(m.u, m.v, m.xs))),
     example=_ex_tiling,
     doc="Overlapped tiling (see the module docstring for the derivation of the condition); "
         "each tile of u elements can live in local memory.")


def _untiling_side(m):
    params = prim_fn_params(m.g, "slide")
    if params is None:
        return "the function is not slide n s"
    n, s = params
    if m.v != m.u - n + s:
        return f"the tile step {m.v} is not u - n + s = {m.u - n + s}: the tiles' windows overlap or leave gaps"
    return None


def _ex_untiling(rng):
    n, s = _window(rng)
    per_tile = int(rng.integers(1, 4))
    u, v = n + (per_tile - 1) * s, per_tile * s
    tiles = inst.size(rng, 1, 1, 4)
    total = v * (tiles - 1) + u
    sym = v * inst.length(rng, tiles) + u - v
    g = fl.slide(n, s) if rng.random() < 0.5 else fl.lam(lambda t: fl.slide(n, s, t))
    prog, inputs = one_input(rng, (sym,), (total,), lambda xs: fl.join(fl.map(g, fl.slide(u, v, xs))))
    return prog, inputs, {}


rule("slide_untiling", "stencil", "join (map (slide n s) (slide u v xs)) -> slide n s xs   (v = u - n + s)",
     lhs=P("join", P("map", V("g"), P("slide", V("xs"), params=("u", "v")))), side=_untiling_side,
     build=lambda m: fl.slide(*prim_fn_params(m.g, "slide"), m.xs), example=_ex_untiling)


# ------------------------------------------------------------ slide and take / drop


def _ex_take_slide(rng):
    _, shape, monoid = element_fn(rng)
    n, s = _window(rng)
    windows = inst.size(rng, 1, 2, 6)
    k = int(rng.integers(1, windows))  # take keeps fewer than all (sizes are positive)
    sym, total = _slide_input(rng, n, s, windows)
    prog, inputs = one_input(rng, (sym,), (total,), lambda xs: fl.take(k, fl.slide(n, s, xs)), shape=shape,
                             monoid=monoid)
    return prog, inputs, {}


rule("take_slide", "stencil", "take k (slide n s xs) -> slide n s (take (s*(k-1) + n) xs)",
     lhs=P("take", P("slide", V("xs"), params=("n", "s")), params=("k",)),
     build=lambda m: fl.slide(m.n, m.s, fl.take(m.s * (m.k - 1) + m.n, m.xs)),
     example=_ex_take_slide,
     doc="The first k windows read only xs[0 : s*(k-1) + n].")


def _ex_drop_slide(rng):
    _, shape, monoid = element_fn(rng)
    n, s = _window(rng)
    windows = inst.size(rng, 1, 2, 6)
    k = int(rng.integers(0, windows))
    sym, total = _slide_input(rng, n, s, windows, extra_windows=k)  # N + k windows: k < N + k is provable
    prog, inputs = one_input(rng, (sym,), (total,), lambda xs: fl.drop(k, fl.slide(n, s, xs)), shape=shape,
                             monoid=monoid)
    return prog, inputs, {}


rule("drop_slide", "stencil", "drop k (slide n s xs) -> slide n s (drop (s*k) xs)   (k < number of windows)",
     lhs=P("drop", P("slide", V("xs"), params=("n", "s")), params=("k",)),
     side=lambda m: None if is_positive(length(m.root)) else "not known to leave a window (k may drop them all)",
     build=lambda m: fl.slide(m.n, m.s, fl.drop(m.s * m.k, m.xs)),
     example=_ex_drop_slide,
     doc="Window k + j of xs starts at s*k + s*j, which is window j of drop (s*k) xs.")


def _ex_map_cut_slide(cut):
    def ex(rng):
        n, s = _window(rng)
        n += 1  # at least 2, so that dropping leaves a window
        windows = inst.size(rng, 1, 1, 5)
        k = int(rng.integers(1, n)) if cut is fl.take else int(rng.integers(0, n))
        sym, total = _slide_input(rng, n, s, windows)
        g = cut(k) if rng.random() < 0.5 else fl.lam(lambda w: cut(k, w))
        prog, inputs = one_input(rng, (sym,), (total,), lambda xs: fl.map(g, fl.slide(n, s, xs)))
        return prog, inputs, {}

    return ex


def _cut_side(name: str):
    def side(m):
        params = prim_fn_params(m.g, name)
        if params is None:
            return f"the function is not {name} k"
        k = params[0]
        if name == "take" and not is_nonneg(m.n - k):
            return f"take {k} of windows of {m.n}"
        if name == "drop" and not proves_lt(k, m.n):
            return f"drop {k} of windows of {m.n} leaves no element"
        return None

    return side


rule("map_take_slide", "stencil", "map (take k) (slide n s xs) -> slide k s (take (L - n + k) xs)   (L = length xs)",
     lhs=P("map", V("g"), P("slide", V("xs"), params=("n", "s"))), side=_cut_side("take"),
     build=lambda m: fl.slide(prim_fn_params(m.g, "take")[0], m.s,
                              fl.take(length(m.xs) - m.n + prim_fn_params(m.g, "take")[0], m.xs)),
     example=_ex_map_cut_slide(fl.take),
     doc="Narrower windows at the same starts; the last one starts at L - n, so L - n + k elements suffice.")

rule("map_drop_slide", "stencil", "map (drop k) (slide n s xs) -> slide (n - k) s (drop k xs)   (k < n)",
     lhs=P("map", V("g"), P("slide", V("xs"), params=("n", "s"))), side=_cut_side("drop"),
     build=lambda m: fl.slide(m.n - prim_fn_params(m.g, "drop")[0], m.s,
                              fl.drop(prim_fn_params(m.g, "drop")[0], m.xs)),
     example=_ex_map_cut_slide(fl.drop),
     doc="Window j without its first k elements is xs[s*j + k : s*j + n], window j of drop k xs of size n - k.")

# ----------------------------------------------------------------- 2D: transpose


def _ex_slide_2d(build):
    def ex(rng):
        n, s = _window(rng)
        windows = inst.size(rng, 1, 1, 4)
        width = inst.size(rng, 1, 1, 4)
        sym, total = _slide_input(rng, n, s, windows)
        prog, inputs = one_input(rng, (sym, width), (total, width), lambda xss: build(rng, n, s, xss))
        return prog, inputs, {}

    return ex


def _ex_slide_2d_cols(build):
    def ex(rng):
        n, s = _window(rng)
        windows = inst.size(rng, 1, 1, 4)
        rows = inst.size(rng, 1, 1, 4)
        sym, total = _slide_input(rng, n, s, windows)
        prog, inputs = one_input(rng, (rows, sym), (rows, total), lambda xss: build(rng, n, s, xss))
        return prog, inputs, {}

    return ex


rule("map_transpose_slide", "stencil",
     "map transpose (slide n s xss) -> transpose (map (slide n s) (transpose xss))",
     lhs=P("map", V("g"), P("slide", V("xss"), params=("n", "s"))),
     side=lambda m: None if prim_fn_params(m.g, "transpose") is not None else "the function is not transpose",
     build=lambda m: fl.transpose(fl.map(fl.slide(m.n, m.s), fl.transpose(m.xss))),
     example=_ex_slide_2d(lambda rng, n, s, xss: fl.map(fl.transpose if rng.random() < 0.5
                                                          else fl.lam(lambda w: fl.transpose(w)),
                                                          fl.slide(n, s, xss))),
     doc="Both are [k][c][i] -> xss[k*s + i][c]: windows of rows become windows down the columns.")


def _slide_fn_side(m):
    return None if prim_fn_params(m.g, "slide") is not None else "the function is not slide n s"


rule("transpose_map_slide", "stencil",
     "transpose (map (slide n s) xss) -> map transpose (slide n s (transpose xss))",
     lhs=P("transpose", P("map", V("g"), V("xss"))), side=_slide_fn_side,
     build=lambda m: fl.map(fl.transpose, fl.slide(*prim_fn_params(m.g, "slide"), fl.transpose(m.xss))),
     example=_ex_slide_2d_cols(lambda rng, n, s, xss: fl.transpose(fl.map(fl.slide(n, s), xss))),
     doc="Both are [k][r][i] -> xss[r][k*s + i].")

# ------------------------------------------------------------------------------ pad


def _ex_pad(build, kinds, with_value_input=True):
    def ex(rng):
        f, shape, monoid = element_fn(rng)
        kind = inst.pick(rng, sorted(kinds))
        total = inst.size(rng, 1, 1, 6)
        left, right = int(rng.integers(0, 4)), int(rng.integers(0, 4))
        if kind in ("pad_wrap", "pad_mirror"):  # these repeat xs at most once: pads no longer than xs
            left, right = min(left, total), min(right, total)
        n = inst.length(rng, total)
        data = inst.data(rng, total, *shape, monoid=monoid)
        value = inst.data(rng, 1, *shape, monoid=monoid)[0]
        if kind == "pad_const":  # the padding value is an input (a row when the elements are rows)
            prog = fl.fun([nested((n,) + shape), nested(shape)],
                          lambda xs, v: build(rng, f, kind, left, right, xs, v))
            inputs = (data, value if shape else np.float32(value))
        else:
            prog = fl.fun([nested((n,) + shape)], lambda xs: build(rng, f, kind, left, right, xs, None))
            inputs = (data,)
        return prog, inputs, {}

    return ex


rule("map_pad_const", "stencil", "map f (pad_const l r v xs) -> pad_const l r (f v) (map f xs)",
     lhs=P("map", V("f"), P("pad_const", V("v"), V("xs"), params=("l", "r"))),
     build=lambda m: fl.pad_const(m.l, m.r, beta(m.f, m.v), fl.map(m.f, m.xs)),
     example=_ex_pad(lambda rng, f, kind, l, r, xs, v: fl.map(f, _pad(kind, l, r, xs, v)), {"pad_const"}),
     doc="f of the padding is computed once.")

rule("map_pad", "stencil", "map f (pad_X l r xs) -> pad_X l r (map f xs)   (X = clamp, wrap, mirror)",
     lhs=P("map", V("f"), P(_COPY_PADS, V("xs"), params=("l", "r"), bind="pad")),
     build=lambda m: _pad(m.pad, m.l, m.r, fl.map(m.f, m.xs)),
     example=_ex_pad(lambda rng, f, kind, l, r, xs, v: fl.map(f, _pad(kind, l, r, xs, v)), _COPY_PADS),
     doc="These pads only copy elements of xs, so f of a copy is a copy of f.")

rule("pad_map", "stencil", "pad_X l r (map f xs) -> map f (pad_X l r xs)   (X = clamp, wrap, mirror)",
     lhs=P(_COPY_PADS, P("map", V("f"), V("xs")), params=("l", "r"), bind="pad"),
     build=lambda m: fl.map(m.f, _pad(m.pad, m.l, m.r, m.xs)),
     example=_ex_pad(lambda rng, f, kind, l, r, xs, v: _pad(kind, l, r, fl.map(f, xs), v), _COPY_PADS))


def _ex_pad_pad(kind):
    def ex(rng):
        total = inst.size(rng, 1, 1, 6)
        a, b, c, d = (int(x) for x in rng.integers(0, 3, 4))
        n = inst.length(rng, total)
        if kind == "pad_const":
            prog = fl.fun([array(n, f32), f32],
                          lambda xs, v: fl.pad_const(a, b, v, fl.pad_const(c, d, v, xs)))
            return prog, (inst.data(rng, total), np.float32(rng.standard_normal())), {}
        prog = fl.fun([array(n, f32)], lambda xs: fl.pad_clamp(a, b, fl.pad_clamp(c, d, xs)))
        return prog, (inst.data(rng, total),), {}

    return ex


rule("pad_const_merge", "stencil", "pad_const l r v (pad_const l' r' v xs) -> pad_const (l + l') (r + r') v xs",
     lhs=P("pad_const", V("v"), P("pad_const", V("v"), V("xs"), params=("l2", "r2")), params=("l", "r")),
     build=lambda m: fl.pad_const(m.l + m.l2, m.r + m.r2, m.v, m.xs), example=_ex_pad_pad("pad_const"),
     doc="Only for the same padding value (the pattern requires it).")

rule("pad_clamp_merge", "stencil", "pad_clamp l r (pad_clamp l' r' xs) -> pad_clamp (l + l') (r + r') xs",
     lhs=P("pad_clamp", P("pad_clamp", V("xs"), params=("l2", "r2")), params=("l", "r")),
     build=lambda m: fl.pad_clamp(m.l + m.l2, m.r + m.r2, m.xs), example=_ex_pad_pad("pad_clamp"),
     doc="The inner pad keeps xs's first and last elements at the ends.  (Not true of wrap or mirror.)")


def _ex_pad_zero(rng):
    kind = inst.pick(rng, sorted(_COPY_PADS | {"pad_const"}))
    total = inst.size(rng)
    n = inst.length(rng, total)
    prog = fl.fun([array(n, f32)], lambda xs: fl.map(lambda x: x + 1.0, _pad(kind, 0, 0, xs, 0.0)))
    return prog, (inst.data(rng, total),), {}


rule("pad_zero", "stencil", "pad_X 0 0 xs -> xs   (any pad)",
     lhs=_ANY_PAD,
     side=lambda m: None if m.l == Nat.const(0) and m.r == Nat.const(0) else f"pads {m.l} and {m.r} elements",
     build=lambda m: m.xs, example=_ex_pad_zero)


def _ex_crop_pad(rng):
    kind = inst.pick(rng, sorted(_COPY_PADS | {"pad_const"}))
    total = inst.size(rng)
    left, right = int(rng.integers(0, 4)), int(rng.integers(1, 4))  # take n of n elements would not type
    if kind in ("pad_wrap", "pad_mirror"):  # these repeat xs at most once: pads no longer than xs
        left, right = min(left, total), min(right, total)
    n = inst.length(rng, total)
    prog = fl.fun([array(n, f32)], lambda xs: fl.take(n, fl.drop(left, _pad(kind, left, right, xs, 0.5))))
    return prog, (inst.data(rng, total),), {}


rule("crop_pad", "stencil", "take n (drop l (pad_X l r xs)) -> xs   (n = length xs; any pad)",
     lhs=P("take", P("drop", _ANY_PAD, params=("l",)), params=("k",)),
     side=lambda m: None if m.k == length(m.xs) else f"takes {m.k} elements, not the {length(m.xs)} of the input",
     build=lambda m: m.xs, example=_ex_crop_pad,
     doc="The pattern requires the dropped count to be the left padding.")



# ------------------------------------------------------------ 2D overlapped tiling


def _slide_2d_parts(m):
    """(f, n1, s1, n2, s2) of `map (map f) (map transpose (slide n1 s1 (map (slide n2 s2) xss)))`."""
    f = map_fn(m.g)
    if f is None:
        return "the function of the windows' rows is not `map f`"
    if prim_fn_params(m.tr, "transpose") is None:
        return "the windows are not `map transpose (slide n s (map (slide n s) xss))`"
    inner = prim_fn_params(m.sl, "slide")
    if inner is None:
        return "the rows are not slid (`map (slide n s) xss`)"
    return f, m.n1, m.s1, inner[0], inner[1]


def _tile_of(n, s, j):
    """The tile size u and tile step v that hold j windows of size n and step s."""
    return n + (j - 1) * s, j * s


def _slide_2d_tiling_side(m):
    parts = _slide_2d_parts(m)
    if isinstance(parts, str):
        return parts
    for name, j, windows in (("j1", m.j1, length(m.root)), ("j2", m.j2, m.root.t.elem.size)):
        k = j.as_int() if isinstance(j, Nat) else j
        if k is None or k < 1:
            return f"{name} must be a positive constant"
        if not divides(j, windows):
            return f"{name} = {j} does not divide the {windows} windows"
    return None


def _slide_2d_tiling_build(m):
    f, n1, s1, n2, s2 = _slide_2d_parts(m)
    u1, v1 = _tile_of(n1, s1, m.j1)
    u2, v2 = _tile_of(n2, s2, m.j2)

    def windows(tile):
        return fl.map(fl.map(f), fl.map(fl.transpose, fl.slide(n1, s1, fl.map(fl.slide(n2, s2), tile))))

    return fl.join(fl.map(
        lambda strip: fl.map(fl.join, fl.transpose(fl.map(windows, fl.transpose(fl.map(fl.slide(u2, v2), strip))))),
        fl.slide(u1, v1, m.xss)))


def _ex_slide_2d_tiling(rng):
    (n1, s1), (n2, s2) = _window(rng), _window(rng)
    j1, j2 = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    t1, t2 = inst.size(rng, 1, 1, 3), inst.size(rng, 1, 1, 3)  # tiles per dimension
    rows, cols = s1 * (j1 * t1 - 1) + n1, s2 * (j2 * t2 - 1) + n2  # j*t windows per dimension
    kind = int(rng.integers(3))
    if kind == 0:
        f = fl.lam(lambda w: fl.reduce(fl.add, 0.0, fl.join(w)))
    elif kind == 1:
        f = fl.lam(lambda w: w[0][0] * 2.0 - w[n1 - 1][n2 - 1])
    else:
        f = fl.map(fl.map(inst.pick(rng, inst.UNARY)))  # the windows themselves, transformed
    g = fl.map(f) if rng.random() < 0.5 else fl.lam(lambda r: fl.map(f, r))
    tr = fl.transpose if rng.random() < 0.5 else fl.lam(lambda w: fl.transpose(w))
    prog, inputs = one_input(rng, (rows, cols), (rows, cols), lambda xss: fl.map(
        g, fl.map(tr, fl.slide(n1, s1, fl.map(fl.slide(n2, s2), xss)))))
    return prog, inputs, {"j1": j1, "j2": j2}


rule("slide_2d_tiling", "stencil",
     "map (map f) (map transpose (slide n1 s1 (map (slide n2 s2) xss))) -> "
     "join (map (fun(strip) => map join (transpose (map (fun(tile) => map (map f) (map transpose (slide n1 s1 "
     "(map (slide n2 s2) tile)))) (transpose (map (slide u2 v2) strip))))) (slide u1 v1 xss))   "
     "(u = n + (j-1)*s, v = j*s per dimension; j1, j2 divide the window counts)",
     lhs=P("map", V("g"), P("map", V("tr"), P("slide", P("map", V("sl"), V("xss")), params=("n1", "s1")))),
     params=("j1", "j2"), side=_slide_2d_tiling_side, build=_slide_2d_tiling_build, example=_ex_slide_2d_tiling,
     doc="Overlapped 2D tiling: tile (a, b) is xss[a*v1 : a*v1 + u1][b*v2 : b*v2 + u2], which holds the "
         "j1 x j2 neighbourhoods (a*j1 + i, b*j2 + k) (the 1D condition v = u - n + s of slide_tiling in each "
         "dimension); f is applied per tile and the [T1][T2][j1][j2] results are put back in order by "
         "join . map (map join . transpose).  Each tile can live in local memory.")


# ------------------------------------------------------------ 3D overlapped tiling


def _neighbourhoods_2d(g):
    """(n1, s1, n2, s2) when the function g is `fun(p) => map transpose (slide n1 s1 (map (slide n2 s2) p))`."""
    from ..expr import Identifier, Lambda

    if not isinstance(g, Lambda):
        return None
    outer = _app_args(g.body, "map", 2)
    if outer is None or prim_fn_params(outer[0], "transpose") is None:
        return None
    sl = _app_args(outer[1], "slide", 1)
    if sl is None:
        return None
    rows = _app_args(sl[1][0], "map", 2)
    if rows is None or not (isinstance(rows[1], Identifier) and rows[1].name == g.param.name):
        return None
    inner = prim_fn_params(rows[0], "slide")
    return None if inner is None else (*sl[0], *inner)


def _app_args(e, name: str, nargs: int):
    """The arguments of `name` applied to `nargs` arguments; for slide (params, args)."""
    from ..expr import Prim, spine

    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == name and len(args) == nargs):
        return None
    return (head.params, args) if name == "slide" else args


def _is_block_turn(g) -> bool:
    """g is `fun(b) => map transpose (transpose b)`: the 3D neighbourhoods' last reordering."""
    from ..expr import Identifier, Lambda

    if not isinstance(g, Lambda):
        return False
    outer = _app_args(g.body, "map", 2)
    if outer is None or prim_fn_params(outer[0], "transpose") is None:
        return False
    t = _app_args(outer[1], "transpose", 1)
    return t is not None and isinstance(t[0], Identifier) and t[0].name == g.param.name


def _slide_3d_parts(m):
    """(f, (n1, s1), (n2, s2), (n3, s3)) of the 3D stencil
    `map3 f (map (fun(b) => map transpose (transpose b)) (slide n1 s1 (map P xsss)))`,
    P the 2D neighbourhoods of a plane (see _neighbourhoods_2d); else why not."""
    rows = map_fn(m.g)
    f = map_fn(rows) if rows is not None else None
    if f is None:
        return "the function is not a map over every window (map (map (map f)))"
    if not _is_block_turn(m.turn):
        return "the windows are not reordered by fun(b) => map transpose (transpose b)"
    planes = _neighbourhoods_2d(m.plane)
    if planes is None:
        return "the planes are not 2D neighbourhoods (map transpose (slide n s (map (slide n s) p)))"
    return f, (m.n1, m.s1), planes[:2], planes[2:]


def _slide_3d_tiling_side(m):
    parts = _slide_3d_parts(m)
    if isinstance(parts, str):
        return parts
    t = m.root.t
    for name, j, windows in (("j1", m.j1, t.size), ("j2", m.j2, t.elem.size), ("j3", m.j3, t.elem.elem.size)):
        k = j.as_int() if isinstance(j, Nat) else j
        if k is None or k < 1:
            return f"{name} must be a positive constant"
        if not divides(j, windows):
            return f"{name} = {j} does not divide the {windows} windows"
    return None


def _slide_3d_tiling_build(m):
    f, (n1, s1), (n2, s2), (n3, s3) = _slide_3d_parts(m)
    (u1, v1), (u2, v2), (u3, v3) = _tile_of(n1, s1, m.j1), _tile_of(n2, s2, m.j2), _tile_of(n3, s3, m.j3)
    turn, plane = m.turn, m.plane

    def tiles_of_plane(p):  # [T2][T3][u2][u3]
        return fl.map(lambda strip: fl.transpose(fl.map(fl.slide(u3, v3), strip)), fl.slide(u2, v2, p))

    def tiles_of_slab(slab):  # [u1][H][W] -> [T2][T3][u1][u2][u3]
        return fl.map(fl.transpose, fl.transpose(fl.map(tiles_of_plane, slab)))

    def stencil(tile):  # the original computation on one tile: [J1][J2][J3]
        return fl.map(fl.map(fl.map(f)), fl.map(turn, fl.slide(n1, s1, fl.map(plane, tile))))

    results = fl.map(lambda slab: fl.map(fl.map(stencil), tiles_of_slab(slab)), fl.slide(u1, v1, m.xsss))
    return fl.join(fl.map(lambda ra: fl.map(fl.join, fl.transpose(fl.map(
        lambda rab: fl.map(fl.map(fl.join), fl.map(fl.transpose, fl.transpose(rab))), ra))), results))


def _neighbourhoods_3d(n, s, xsss):
    """The 3D neighbourhoods as the application suite writes them (examples/suite.py slide3d)."""
    (n1, s1), (n2, s2), (n3, s3) = zip(n, s)
    planes = fl.map(lambda p: fl.map(fl.transpose, fl.slide(n2, s2, fl.map(fl.slide(n3, s3), p))), xsss)
    return fl.map(lambda b: fl.map(fl.transpose, fl.transpose(b)), fl.slide(n1, s1, planes))


def _ex_slide_3d_tiling(rng):
    windows = [_window(rng) for _ in range(3)]
    n, s = tuple(w[0] for w in windows), tuple(w[1] for w in windows)
    js = tuple(int(rng.integers(1, 3)) for _ in range(3))
    ts = tuple(int(rng.integers(1, 3)) for _ in range(3))
    dims = tuple(s_k * (j * t - 1) + n_k for n_k, s_k, j, t in zip(n, s, js, ts))
    if rng.random() < 0.5:
        f = fl.lam(lambda w: fl.reduce(fl.add, 0.0, fl.join(fl.join(w))))
    else:
        f = fl.lam(lambda w: w[0][0][0] * 2.0 - w[n[0] - 1][n[1] - 1][n[2] - 1])
    g = fl.map(fl.map(f)) if rng.random() < 0.5 else fl.lam(
        lambda p: fl.map(lambda r: fl.map(f, r), p))
    prog, inputs = one_input(rng, dims, dims, lambda x: fl.map(g, _neighbourhoods_3d(n, s, x)))
    return prog, inputs, {"j1": js[0], "j2": js[1], "j3": js[2]}


rule("slide_3d_tiling", "stencil",
     "map3 f (map (fun(b) => map transpose (transpose b)) (slide n1 s1 (map P xsss))) -> untile3 (map (map (map "
     "(fun(tile) => map3 f (<the same neighbourhoods of tile>)))) (tiles3 u v xsss))   (P the 2D neighbourhoods of a "
     "plane, map transpose (slide n2 s2 (map (slide n3 s3) p)); u = n + (j-1)*s, v = j*s per dimension; j1, j2, j3 "
     "divide the window counts)",
     lhs=P("map", V("g"), P("map", V("turn"), P("slide", P("map", V("plane"), V("xsss")), params=("n1", "s1")))),
     params=("j1", "j2", "j3"), side=_slide_3d_tiling_side, build=_slide_3d_tiling_build,
     example=_ex_slide_3d_tiling,
     doc="Overlapped 3D tiling: tile (a, b, c) of u1 x u2 x u3 elements advancing v per dimension holds the "
         "j1 x j2 x j3 neighbourhoods (a*j1 + i, b*j2 + k, c*j3 + l) (slide_tiling's condition v = u - n + s in "
         "each dimension); the neighbourhoods of a tile are built as the program built them, f is applied per "
         "tile, and the [T1][T2][T3][j1][j2][j3] results are put back in order (untile3: per (a, b) transpose, "
         "map transpose, map (map join); per a transpose, map join; join).")
