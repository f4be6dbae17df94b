"""The algorithmic vocabulary of the exploration (stage 1), as data: one `Macro` per move.

A macro is a strategy applied AT ONE NODE of a program (a path from the root, as in
`functional.strategies`), never searched for (`top_down`): the explorer chooses the node.
Each entry declares

    name, equation        the rewrite it performs, as text
    params                its numeric parameters
    strategy(**params)    a Strategy for the node it is given; a clean Failure elsewhere, and
                          wherever a precondition (divisibility, associativity and neutral
                          element from functional.algebra, ...) does not hold
    lengths(node)         None where the node does not have the macro's shape, else
                          {param: what the parameter must divide}: a Nat (a length at the node)
                          or the name of another parameter (drawn first), so that the explorer
                          draws values from divisors; or Cut(length): the parameter is a power
                          of two that does NOT divide the length, whose largest multiple below
                          it is cut off (the remainder mapped or folded on its own)
    power_of_two, values  further restrictions on a parameter's values (e.g. vector widths)
    example(rng)          a random instance: (program, path of the node, params)

The moves, in the order of issue 12's list:

    split_join            map f xs -> join (map (map f) (split n xs))                 (1D tiling too)
    reduce_split          reduce f z xs -> reduce f z (map (reduce f z) (split n xs))
    reduce_two_stage      reduce_split with the reduced map fused into the chunks' reductions
    reduce_tree           the seed's vecSum: blocks, coalesced per-item reductions, a tree in a block
    reduce_vectorize      lanes of w-wide vectors reduced, then the lanes
    reduce_vectorize_two_stage   chunks of n, each reduced with w-wide vectors
    tile_2d               map (fun a => map (fun b => e) ys) xs in n x m tiles (ys independent of a)
    tile_nest_2d          map (fun r => map f r) xss in n x m tiles
    tile_nest_3d          a 3-deep map nest in n x m x k tiles
    stencil_tiling_1d     map f (slide n s xs): overlapped tiles of j windows
    stencil_tiling_2d     map (map f) (2D neighbourhoods): overlapped tiles of j1 x j2 windows
    stencil_tiling_3d     map3 f (3D neighbourhoods): overlapped tiles of j1 x j2 x j3 windows
    tile_reduction        a tile of dot products: k-wide tiles accumulated
    register_blocking_1d  l rows of the result per work-item
    register_blocking_2d  l1 x l2 blocks of the result per work-item
    vectorize             map f xs -> as_scalar (map (map_vec f) (as_vector w xs))
    interchange           map (map f) xss -> transpose (map (map f) (transpose xss))
    interchange_swap      map (fun a => map g ys) xs -> transpose (map (fun b => map (fun a => g b) xs) ys)
    fusion, fission       map f (map g xs) <-> map (f . g) xs
    generate_reduce_fusion  generate n (fun k => reduce f z (map (g k) xs)): the n reductions as one
                          over n-arrays, component by component (one pass over xs; N-Body, MD)
    pair_reduce_fusion    pair (reduce f z (map g xs)) (reduce h w (map k xs)): one reduction of pairs
    hoist_invariant       a loop-invariant value of a map's function computed once, before it
    map_cut_columns       a 2D map's rows cut alike: the left block and the right strip as two
                          nests (transpose (concat (transpose L) (transpose R))), the block's
                          rows a multiple of a long
    map_cut               map f xs -> concat (map f (take (a * (n // a)) xs)) (map f (drop ...)):
                          the largest multiple of a power of two a that does not divide n, so
                          that a length with few divisors gets the splits of a multiple of a
    reduce_cut            reduce f z xs -> reduce f (reduce f z (take (a * (n // a)) xs)) (drop ...)
    split_k               map (fun p => E[reduce f z D]) xs: every element's reduction in
                          n-chunks, the chunks' partial results first (a map over the chunks of
                          maps over the elements, a 2D grid), then each element's partials
    split_k_nest          split_k of a 2D nest's reductions of [map g] (zip p q) (mm's): a map
                          over the chunks of the same nest over the rows' chunks, then each
                          element's partials

`MACROS` maps names to entries; `sites(macro, program)` lists the nodes of a typed program
where a macro's shape matches, `apply_at(macro, program, path, params)` runs it there.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

from .. import dsl as fl
from ..expr import Expr, Lambda, NatLambda, applied, free_identifiers, spine, substitute_nat
from ..infer import infer
from ..nat import Nat, Var, evaluate
from ..strategies import (
    Failure,
    Result,
    Strategy,
    Success,
    argument,
    at_path,
    children,
    fmap,
    function,
    lchoice,
    replace_at,
    seq,
    try_,
)
from ..types import ArrayType, array, f32, map_nats
from . import instances as inst
from . import macros as mac
from .algorithmic import generated_reduction, item_reduction, paired_reductions
from .core import RULES, NotApplicable
from .movement import map_fn, prim_fn_params

LengthSpec = dict  # param -> Nat (a length at the node), str (another parameter's name) or Cut


@attrs.frozen
class Cut:
    """A parameter that cuts `length` at its largest multiple: a power of two below the length
    that does not divide it (one that divides it is a split's, not a cut's)."""

    length: Nat


def cut_values(n: int) -> list[int]:
    """The powers of two a with 2 <= a < n that do not divide n: the cuts of a length n."""
    return [1 << k for k in range(1, max(n, 2).bit_length()) if (1 << k) < n and n % (1 << k)]

VECTOR_WIDTHS = (2, 4, 8, 16)  # OpenCL's vector widths (3 left out: it pads to 4)
LOCAL_SIZES = tuple(2**k for k in range(1, 11))  # a tree in a work-group: 2 to 1024 items


@attrs.frozen
class Macro:
    name: str
    equation: str
    params: tuple[str, ...]
    make: Callable[..., Strategy]  # keyword params -> the strategy at the node
    lengths: Callable[[Expr], LengthSpec | None]
    example: Callable  # rng -> (program, path, params)
    preconditions: str = ""
    power_of_two: frozenset = frozenset()
    values: tuple = ()  # ((param, allowed values), ...)
    exact: bool = True  # False: re-associates floating-point operations
    cuts: frozenset = frozenset()  # parameters that cut a length (Cut in `lengths`) rather than divide one

    def strategy(self, **params) -> Strategy:
        """The macro with these parameters, for the node it is given.  A wrong parameter
        name is a TypeError (a bug in the caller); a value that is not a positive integer,
        not a power of two where one is needed, or outside `values` is a Failure."""
        unknown, missing = set(params) - set(self.params), set(self.params) - set(params)
        if unknown or missing:
            raise TypeError(f"macro {self.name} takes {self.params}; got {sorted(params)}")
        label = self.name + (f"({', '.join(f'{k}={params[k]}' for k in self.params)})" if self.params else "")
        reason = self._bad_value(params)
        if reason:
            return Strategy(label, lambda e: Failure(f"{self.name}: {reason}"))
        try:
            inner = self.make(**{k: int(v.as_int() if isinstance(v, Nat) else v) for k, v in params.items()})
        except (NotApplicable, ValueError) as exc:
            return Strategy(label, lambda e, why=str(exc): Failure(f"{self.name}: {why}"))

        def run(e: Expr) -> Result:
            if self.lengths(e) is None:
                return Failure(f"{self.name}: the node is not {self.equation.split(' -> ')[0]}")
            try:
                out = inner(e)
            except NotApplicable as exc:  # a builder that finds late that the shape is wrong
                return Failure(f"{self.name}: {exc}")
            return out if out.ok else Failure(f"{self.name}: {out.reason}")

        return Strategy(label, run)

    def _bad_value(self, params: dict) -> str | None:
        allowed = dict(self.values)
        for k, v in params.items():
            if isinstance(v, Nat):
                v = v.as_int()
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                return f"{k} = {v} is not a positive integer"
            if k in self.power_of_two and v & (v - 1):
                return f"{k} = {v} is not a power of two"
            if k in allowed and v not in allowed[k]:
                return f"{k} = {v} is not one of {allowed[k]}"
        return None


MACROS: dict[str, Macro] = {}


def _register(m: Macro) -> Macro:
    if m.name in MACROS:
        raise ValueError(f"macro {m.name} declared twice")
    MACROS[m.name] = m
    return m


# ------------------------------------------------------------------ placing a macro


def apply_at(macro: Macro, program: Expr, path: tuple[int, ...], params: dict) -> Result:
    """`macro(**params)` at the node `path` of the typed `program`, the result put back; the
    steps' paths are prefixed with `path` (a derivation that replays)."""
    try:
        node = at_path(program, path)
    except IndexError:
        return Failure(f"{macro.name}: the program has no node at {path}")
    r = macro.strategy(**params)(node)
    if not r.ok:
        return r
    return Success(replace_at(program, path, r.expr), tuple(attrs.evolve(s, path=path + s.path) for s in r.steps))


def sites(macro: Macro, program: Expr) -> list[tuple[int, ...]]:
    """Paths (pre-order) of the nodes of a typed program where the macro's shape matches."""
    out: list[tuple[int, ...]] = []
    stack: list[tuple[Expr, tuple[int, ...]]] = [(program, ())]
    while stack:
        e, path = stack.pop()
        if macro.lengths(e) is not None:
            out.append(path)
        stack.extend((c, path + (k,)) for k, c in reversed(list(enumerate(children(e)))))
    return out


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def choices(macro: Macro, node: Expr, sizes: dict | None = None, drawn: dict | None = None) -> dict[str, list[int]]:
    """The values each parameter may take at `node` (lengths evaluated with `sizes`), for the
    parameters whose length is known: a Nat, or a parameter already in `drawn`."""
    spec = macro.lengths(node) or {}
    allowed = dict(macro.values)
    drawn = drawn or {}
    out = {}
    for p in macro.params:
        target = spec.get(p)
        if isinstance(target, str):
            if target not in drawn:
                continue
            n = int(drawn[target])
        elif isinstance(target, Cut):
            out[p] = cut_values(int(evaluate(target.length, sizes or {})))
            continue
        else:
            n = int(evaluate(target, sizes or {}))
        vs = divisors(n)
        if p in macro.power_of_two:
            vs = [v for v in vs if not v & (v - 1)]
        if p in allowed:
            vs = [v for v in vs if v in allowed[p]]
        out[p] = vs
    return out


def draw(macro: Macro, node: Expr, rng: np.random.Generator, sizes: dict | None = None,
         exclude: dict | None = None) -> dict | None:
    """Random parameters from the divisors (None when a parameter has no admissible value);
    `exclude` maps parameters to values not to draw (e.g. 1, which makes a move trivial)."""
    for _ in range(32):  # a value another parameter must divide may leave that one no value: draw again
        params = _draw_once(macro, node, rng, sizes, exclude or {})
        if params is not None:
            return params
    return None


def _draw_once(macro: Macro, node: Expr, rng, sizes, exclude: dict) -> dict | None:
    params: dict[str, int] = {}
    for _ in macro.params:  # parameters that refer to others are drawn after them
        for p, vs in choices(macro, node, sizes, params).items():
            if p in params:
                continue
            vs = [v for v in vs if v not in exclude.get(p, ())]
            if not vs:
                return None
            params[p] = int(rng.choice(vs))
    return params if len(params) == len(macro.params) else None


# ----------------------------------------------------------------- shapes at a node


def _len(e: Expr) -> Nat | None:
    return e.t.size if isinstance(e.t, ArrayType) else None


def _map_args(e: Expr):
    """(f, xs) of `map f xs`, else None."""
    args = applied(e, "map", 2)
    return None if args is None else tuple(args)


def _reduce_args(e: Expr):
    """(f, z, xs) of `reduce f z xs`, else None."""
    args = applied(e, "reduce", 3)
    return None if args is None else tuple(args)


def _typed(e: Expr) -> bool:
    return e.t is not None


def _cross_nest(e: Expr):
    """(xs, ys) of `map (fun(a) => map (fun(b) => e) ys) xs` with ys independent of a."""
    m = _map_args(e)
    if m is None or not isinstance(m[0], Lambda):
        return None
    inner = _map_args(m[0].body)
    if inner is None or m[0].param.name in free_identifiers(inner[1]):
        return None
    return m[1], inner[1]


def _nest_reduction_length(e: Expr) -> Nat | None:
    """The length of the first reduction outside functions in the inner function of
    `map (fun(a) => map (fun(b) => E[reduce f z D]) ys) xs` (ys independent of a)."""
    if _cross_nest(e) is None or not isinstance(inner := _map_args(_map_args(e)[0].body)[0], Lambda):
        return None
    found = item_reduction(inner)
    return None if found is None else _len(spine(found[1])[1][2])


def _row_nest(e: Expr):
    """(f, xss) of `map (map f) xss` or `map (fun(r) => map f r) xss` (f independent of r)."""
    m = _map_args(e)
    if m is None:
        return None
    f = map_fn(m[0])
    return None if f is None else (f, m[1])


def _row_nest_3d(e: Expr):
    """(g, xsss) of a 3-deep nest `map G xsss`, G a map over each plane's rows (`_row_nest`
    once G is applied): `map (fun(p) => map (fun(r) => map f r) p) xsss` or `map (map (map f)) xsss`."""
    m = _map_args(e)
    if m is None:
        return None
    g = map_fn(m[0])
    return None if g is None or map_fn(g) is None else (g, m[1])


def _dot_inside(e: Expr) -> bool:
    """Some `reduce f z (map g (zip a b))` occurs in e."""
    from ..expr import walk

    for x in walk(e):
        r = _reduce_args(x)
        if r is not None and (m := _map_args(r[2])) is not None and applied(m[1], "zip", 2) is not None:
            return True
    return False


def _map_of_reduce(e: Expr):
    """(p, D) of `map (fun(p) => E[reduce f z D]) xs`, the first reduction outside functions
    (rules.algorithmic.item_reduction)."""
    m = _map_args(e)
    if m is None or not isinstance(m[0], Lambda):
        return None
    found = item_reduction(m[0])
    return None if found is None else (m[0].param, spine(found[1])[1][2])


def _slide_args(e: Expr):
    """(n, s, xs) of `slide n s xs`."""
    head, args = spine(e)
    if applied(e, "slide", 1) is None:
        return None
    return head.params[0], head.params[1], args[0]


def _stencil_1d(e: Expr):
    """(n, s) of `map f (slide n s xs)`."""
    m = _map_args(e)
    if m is None:
        return None
    sl = _slide_args(m[1])
    return None if sl is None else sl[:2]


def _stencil_2d(e: Expr) -> bool:
    """`map (map f) (map transpose (slide n s (map (slide n' s') xss)))`."""
    m = _map_args(e)
    if m is None or map_fn(m[0]) is None:
        return False
    t = _map_args(m[1])
    if t is None or prim_fn_params(t[0], "transpose") is None:
        return False
    sl = _slide_args(t[1])
    if sl is None:
        return False
    rows = _map_args(sl[2])
    return rows is not None and prim_fn_params(rows[0], "slide") is not None


def _stencil_3d(e: Expr) -> bool:
    """The 3D stencil slide_3d_tiling rewrites (its pattern and the shape of its functions)."""
    from .core import Match, match
    from .stencil import _slide_3d_parts

    bindings: dict = {}
    if not match(RULES["slide_3d_tiling"].lhs, e, bindings):
        return False
    return not isinstance(_slide_3d_parts(Match(bindings, e)), str)


# ---------------------------------------------------------------------- new macros


r = mac.r


def _tile_rows(m: int) -> Strategy:
    """At `map B blk` (B = `map f` or `fun(r) => map f r`, blk a block of rows): m-wide column
    tiles outermost, `map join (transpose (map (map (map f)) (transpose (map (fun(r) => split m r) blk))))`.
    Steps: eta_expand_map where B is `map f`; split_join m in the row; map_fission twice (the
    join, then the split out of the row function); map_map_interchange."""
    return seq(
        try_(r("eta_expand_map")),
        fmap(r("split_join", n=m)),
        r("map_fission"),
        argument(r("map_fission")),
        argument(r("map_map_interchange")),
    )


def tile_nest_2d(n: int, m: int) -> Strategy:
    """At `map (fun(r) => map f r) xss` (or `map (map f) xss`): n x m tiles,

        join (map (fun(blk) => map join (transpose (map (map (map f)) (transpose (map (fun(r) => split m r) blk)))))
                  (split n xss))

    (for each block of n rows: a map over the m-wide column tiles of a map over the tile's
    rows).  Steps: split_join n; eta_expand_map; `_tile_rows m` in each block."""
    return mac.named(f"tile_nest_2d({n}, {m})", seq(
        r("split_join", n=n),
        argument(r("eta_expand_map")),
        argument(fmap(_tile_rows(m))),
    ))


def tile_nest_3d(n: int, m: int, k: int) -> Strategy:
    """At a 3-deep map nest `map (fun(p) => map (fun(r) => map f r) p) xsss`: n x m x k tiles,
    the maps over plane blocks, row tiles and column tiles outside the maps over a tile's n
    planes, m rows and k columns.  Steps: tile_nest_2d n m with rows as the elements; then in
    each n x m tile of rows: eta_expand_map, `_tile_rows k` in every plane of the tile, and
    the column tiles brought out of the map over the tile's planes (map_fission three times,
    map_map_interchange):

        per tile: map (map join) (map transpose (transpose (map (map (map (map f)))
                      (transpose (map (fun(p) => transpose (map (split k) p)) tile)))))"""
    per_tile = seq(
        try_(r("eta_expand_map")),
        fmap(_tile_rows(k)),
        r("map_fission"),
        argument(r("map_fission")),
        argument(argument(r("map_fission"))),
        argument(argument(r("map_map_interchange"))),
    )
    return mac.named(f"tile_nest_3d({n}, {m}, {k})", seq(
        tile_nest_2d(n, m),
        argument(fmap(argument(argument(seq(r("eta_expand_map"), fmap(per_tile)))))),
    ))


def split_k(n: int) -> Strategy:
    """At `map (fun(p) => E[reduce f z D]) xs`: every element's reduction in chunks of n, the
    chunks' partial results of every element computed first, as a map over the chunks of maps
    over the elements (a 2D grid: chunk k of every element read together), then each
    element's partials reduced where its reduction stood (rules.algorithmic map_reduce_stages,
    which also lets the default lowering split A^T x's columns):

        let (map (fun(k) => map (fun(p) => reduce f z (at (split n D) k)) xs) (generate (len D / n) id))
            (fun(P) => map (fun(q) => E[reduce f z (fst q)][p := snd q]) (zip (transpose P) xs))

    D = map g D0 is cut as map g (at (split n D0) k): no element of D is stored."""
    return mac.named(f"split_k({n})", r("map_reduce_stages", r=n))


def split_k_nest(n: int) -> Strategy:
    """At `map (fun(p) => map (fun(q) => E[reduce f z (map g (zip p q))]) ys) xs` (mm's nest):
    split-k, every element's reduction in chunks of n, as a map over the chunks of the same
    nest over the chunks of the rows of xs and ys (rules.algorithmic nest_reduce_stages; the
    chunks of one product run side by side, as independent products), then each element's
    partials reduced where its reduction stood:

        let (map (fun(k) => map (fun(a) => map (fun(b) => reduce f z (map g (zip a b)))
                (map (fun(y) => at (split n y) k) ys)) (map (fun(x) => at (split n x) k) xs))
             (generate (len / n) id))
            (fun(P) => map (fun(u) => map (fun(v) => E[reduce f z (fst v)][p, q := snd u, snd v])
                (zip (transpose (fst u)) ys)) (zip (transpose P) xs))"""
    return mac.named(f"split_k_nest({n})", r("nest_reduce_stages", r=n))


def reduce_two_stage(n: int) -> Strategy:
    """At `reduce f z E`: partial reductions of n-chunks, then one reduction of the partial
    results; where E is `map g xs` or `map g (zip xs ys)` the map is fused into the chunks'
    reductions (each chunk reads and computes its own elements)."""
    plain = r("reduce_split", n=n)
    return mac.named(f"reduce_two_stage({n})", lchoice(mac.split_reduction(n), lchoice(_split_fusing_map(n), plain)))


def _split_fusing_map(n) -> Strategy:
    """At `reduce f z (map g xs)`: reduce_split into n-chunks, the map moved into each chunk
    (`map (fun(c) => reduce f z (map g c)) (split n xs)`): no element of the map is stored."""
    return seq(r("reduce_split", n=n), argument(argument(r("split_map"))), argument(r("map_fusion")))


def reduce_vectorize(w: int) -> Strategy:
    """At `reduce f z xs`: w-wide vector accumulators, their lanes reduced after; where xs is
    `map g ys` (or over zips) with g lane-wise, g computed on vectors of the inputs
    (reduce_vectorize_map: a dot product reads both arrays as vectors and stores no
    products), else the array itself read as vectors (reduce_vectorize)."""
    return lchoice(r("reduce_vectorize_map", w=w), r("reduce_vectorize", w=w))


def reduce_vectorize_two_stage(n: int, w: int) -> Strategy:
    """At `reduce f z xs`: chunks of n (reduce_split), each reduced with w-wide vectors
    (reduce_vectorize), then the chunks' results reduced.  Where xs is `map g ys` the map is
    computed on vectors (as reduce_two_stage fuses a map into its chunks) when it
    vectorises through g (reduce_vectorize_map, then chunks of n / w vectors, their vector
    partial results reduced before the lanes): the preset chunked_sum on a dot product
    stored every product in a global array first (76 ms against 15 on PoCL at 2^24)."""
    strategy = seq(r("reduce_split", n=n), argument(r("eta_expand_map")), argument(fmap(r("reduce_vectorize", w=w))))
    if isinstance(n, int) and isinstance(w, int) and n % w == 0:
        # vectors first, then chunks of n / w vectors with the map fused into each: the
        # let's value (`function(argument(...))` of `let V F`) is the vector reduction
        fused = seq(r("reduce_vectorize_map", w=w), function(argument(_split_fusing_map(n // w))))
        strategy = lchoice(fused, strategy)
    return mac.named(f"reduce_vectorize_two_stage({n}, {w})", strategy)


def stencil_tiling_1d(j: int) -> Strategy:
    """At `map f (slide n s xs)`: overlapped tiles of u = n + (j-1)*s elements, advancing
    v = j*s, each holding j windows: `join (map (fun(t) => map f (slide n s t)) (slide u v xs))`.
    Steps: slide_tiling u v; map_join; map_fusion."""

    def run(e: Expr) -> Result:
        n, s = _stencil_1d(e)
        u, v = n + (j - 1) * s, s * j
        return seq(argument(r("slide_tiling", u=u, v=v)), r("map_join"), argument(r("map_fusion")))(e)

    return Strategy(f"stencil_tiling_1d({j})", run)


def _monoid_of_inner_reduction(s: Strategy) -> Strategy:
    """`s` where the first reduction inside the node (pre-order) has an associative operator
    with a neutral initial value (functional.algebra); else a Failure saying which is missing."""
    from .. import algebra
    from ..expr import walk

    def run(e: Expr) -> Result:
        red = next((a for x in walk(e) if (a := _reduce_args(x)) is not None), None)
        if red is None:
            return Failure("no reduction inside")
        f, z, _ = red
        if not algebra.associative(f):
            return Failure(f"{str(f)[:40]} is not known to be associative")
        if not algebra.neutral(f, z):
            return Failure(f"{str(z)[:40]} is not known to be a neutral element of {str(f)[:40]}")
        return s(e)

    return Strategy(str(s), run)


def _guarded(label: str, test, s: Strategy) -> Strategy:
    return mac.named(label, seq(mac.guard(label, test), s))


# --------------------------------------------------------------------- random instances


def _monoid(rng):
    op, z = inst.pick(rng, inst.MONOIDS)
    return op, z


def _size_vars(program: Expr) -> list[Var]:
    """The size variables of the program's inputs' types (with their facts)."""
    found: dict[str, Var] = {}

    def collect(n: Nat) -> Nat:
        for v in n.vars:
            found.setdefault(v.name, v)
        return n

    body = program
    while isinstance(body, Lambda):
        if body.param.decl is not None:
            map_nats(body.param.decl, collect)
        body = body.body
    return [found[k] for k in sorted(found)]


def specialise(program: Expr, sizes: dict[str, int]) -> Expr:
    """The program at these sizes: size binders (`fun(N: nat) => ...`) and size variables of
    its inputs' types replaced by the values `sizes` gives by name (untyped: infer it)."""
    while isinstance(program, NatLambda):
        program = substitute_nat(program.body, program.var, Nat.const(sizes[program.var.name]))
    for v in _size_vars(program):
        program = substitute_nat(program, v, Nat.const(sizes[v.name]))
    return program


def concrete(program: Expr, rng) -> Expr:
    """The program at small sizes, each a multiple of what its variable is declared a
    multiple of (the rules' random programs are symbolic half of the time)."""
    binders, body = [], program
    while isinstance(body, NatLambda):
        binders.append(body.var)
        body = body.body
    return specialise(program, {v.name: v.multiple_of * int(rng.integers(1, 3))
                                for v in binders + _size_vars(body)})


def _found(macro_name: str, program: Expr, rng, exclude_one: bool = True, fixed: dict | None = None):
    """(program, path, params): a random site of the typed program where the macro applies
    with parameters drawn from the divisors of its lengths (1 left out where possible)."""
    macro = MACROS[macro_name]
    program = concrete(program, rng)
    typed = infer(program)
    paths = sites(macro, typed)
    order = rng.permutation(len(paths))
    for k in order:
        path = paths[int(k)]
        node = at_path(typed, path)
        for _ in range(4):
            params = fixed if fixed is not None else draw(
                macro, node, rng, exclude={p: (1,) for p in macro.params} if exclude_one else None)
            if params is None and exclude_one:
                params = draw(macro, node, rng)
            if params is not None and macro.strategy(**params)(node).ok:
                return program, path, params
    raise AssertionError(f"example of {macro_name}: applies nowhere in {program}")


def _from_rule(rule_name: str, macro_name: str):
    """Instances of a one-rule macro: the rule's own random programs, at a random site."""

    def ex(rng):
        program, _, _ = RULES[rule_name].example(rng)
        return _found(macro_name, program, rng)

    return ex


def _vector(rng, multiple: int = 1):
    return inst.size(rng, multiple, 1, 4)


def _ex_reduction(rng, multiple_of=(2, 4), vectors: bool = False):
    """reduce op z E over E = xs, map g xs or map g (zip xs ys), or the same per row; with
    `vectors`, a quarter of them a reduction of vectors from the splat of z
    (inst.vector_reduction: what reduce_vectorize leaves)."""
    n = int(rng.choice(multiple_of)) * inst.size(rng, 1, 1, 3)
    op, z = _monoid(rng)
    if vectors and rng.random() < 0.25:
        w = int(rng.choice([2, 4]))
        return fl.fun([array(w * n, f32)], inst.vector_reduction(op, z, w))
    g = inst.pick(rng, inst.UNARY) if op is not fl.mul else (lambda x: x * 0.5 + 0.75)
    kind = int(rng.integers(3))
    body = [lambda xs, ys: fl.reduce(op, z, xs),
            lambda xs, ys: fl.reduce(op, z, fl.map(g, xs)),
            lambda xs, ys: fl.reduce(op, z, fl.map(lambda p: g(fl.fst(p)) + fl.snd(p) * 0.25, fl.zip(xs, ys)))][kind]
    if rng.random() < 0.5:
        return fl.fun([array(n, f32), array(n, f32)], body)
    rows = inst.size(rng, 1, 1, 3)
    return fl.fun([array(rows, array(n, f32)), array(rows, array(n, f32))],
                  lambda a, b: fl.map(lambda p: body(fl.fst(p), fl.snd(p)), fl.zip(a, b)))


def _ex_cross(rng, k_multiple: int = 1, *, dot: bool = True):
    """The tile product `map (fun(a) => map (fun(b) => dot a b) ys) xs` (or a scalar body)."""
    m, n = inst.size(rng, 2, 1, 2), inst.size(rng, 2, 1, 2)
    k = inst.size(rng, k_multiple, 1, 3)
    if dot:
        return fl.fun([array(m, array(k, f32)), array(n, array(k, f32))], lambda xs, ys: fl.map(
            lambda a: fl.map(lambda b: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(a, b))),
                             ys), xs))
    f = inst.pick(rng, inst.UNARY)
    return fl.fun([array(m, f32), array(n, f32)], lambda xs, ys: fl.map(lambda a: fl.map(lambda b: f(a) * b, ys), xs))


def _ex_nest_2d(rng):
    m, n = inst.size(rng, 2, 1, 3), inst.size(rng, 2, 1, 3)
    f = inst.pick(rng, inst.UNARY)
    if rng.random() < 0.5:
        return fl.fun([array(m, array(n, f32))], lambda xss: fl.map(fl.map(f), xss))
    return fl.fun([array(m, array(n, f32))], lambda xss: fl.map(lambda r_: fl.map(lambda x: f(x) + 1.0, r_), xss))


def _ex_nest_3d(rng):
    d, h, w = inst.size(rng, 2, 1, 2), inst.size(rng, 2, 1, 2), inst.size(rng, 2, 1, 2)
    f = inst.pick(rng, inst.UNARY)
    t = array(d, array(h, array(w, f32)))
    if rng.random() < 0.5:
        return fl.fun([t], lambda x: fl.map(fl.map(fl.map(f)), x))
    return fl.fun([t], lambda x: fl.map(lambda p: fl.map(lambda r_: fl.map(f, r_), p), x))


def _ex_split_k_nest(rng):
    rows, cols, k = inst.size(rng, 1, 1, 3), inst.size(rng, 1, 1, 3), inst.size(rng, 2, 1, 3)
    return fl.fun([array(rows, array(k, f32)), array(k, array(cols, f32))], lambda a, b: fl.map(
        lambda x: fl.map(lambda y: fl.reduce(fl.add, 0.0, fl.map(lambda t: fl.fst(t) * fl.snd(t), fl.zip(x, y))),
                         fl.transpose(b)), a))


def _ex_split_k(rng):
    rows, k = inst.size(rng, 1, 1, 3), inst.size(rng, 2, 1, 3)
    op, z = _monoid(rng)
    kind = int(rng.integers(4))
    if kind == 0:  # a matrix-vector product's rows
        return fl.fun([array(rows, array(k, f32)), array(k, f32)], lambda a, x: fl.map(
            lambda row: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(row, x))), a))
    if kind == 3:  # A^T x + y: the reduction inside arithmetic, over a transpose's columns
        return fl.fun([array(k, array(rows, f32)), array(k, f32), array(rows, f32)], lambda a, x, y: fl.map(
            lambda p: 2.0 * fl.reduce(fl.add, 0.0, fl.map(lambda q: fl.fst(q) * fl.snd(q), fl.zip(fl.fst(p), x)))
            - fl.snd(p), fl.zip(fl.transpose(a), y)))
    if kind == 1:  # row reductions
        return fl.fun([array(rows, array(k, f32))], lambda a: fl.map(lambda row: fl.reduce(op, z, row), a))
    g = inst.pick(rng, inst.UNARY) if op is not fl.mul else (lambda x: x * 0.5 + 0.75)
    return fl.fun([array(rows, array(k, f32))], lambda a: fl.map(lambda row: fl.reduce(op, z, fl.map(g, row)), a))


def _ex_stencil_1d(rng):
    n, s = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    windows = 2 * inst.size(rng, 1, 1, 3)
    total = s * (windows - 1) + n
    kind = int(rng.integers(2))
    f = fl.reduce(fl.add, 0.0) if kind == 0 else fl.lam(lambda w: w[0] * 2.0 - w[n - 1])
    return fl.fun([array(total, f32)], lambda xs: fl.map(f, fl.slide(n, s, xs)))


def _ex_stencil_2d(rng):
    program, _, _ = RULES["slide_2d_tiling"].example(rng)
    return program


def _ex_hoist(rng):
    program, _, _ = RULES["hoist_invariant"].example(rng)
    return program


# ------------------------------------------------------------------------- the table


def _spec(**kw):
    return lambda e: kw


_MONOID = "f associative with z its neutral element (functional.algebra)"

_register(Macro(
    "split_join", "map f xs -> join (map (map f) (split n xs))", ("n",),
    lambda n: r("split_join", n=n),
    lambda e: None if (m := _map_args(e)) is None or not _typed(e) else {"n": _len(m[1])},
    lambda rng: _found("split_join", RULES["split_join"].example(rng)[0], rng),
    "n divides the length of xs"))

_register(Macro(
    "reduce_split", "reduce f z xs -> reduce f z (map (reduce f z) (split n xs))", ("n",),
    lambda n: r("reduce_split", n=n),
    lambda e: None if (m := _reduce_args(e)) is None or not _typed(e) else {"n": _len(m[2])},
    lambda rng: _found("reduce_split", _ex_reduction(rng), rng),
    f"{_MONOID}; n divides the length of xs", exact=False))

_register(Macro(
    "reduce_two_stage",
    "reduce f z (map g xs) -> reduce f z (map (fun(c) => reduce f z (map g c)) (split n xs))   "
    "(also map g (zip xs ys), and plain xs)", ("n",),
    reduce_two_stage,
    lambda e: None if (m := _reduce_args(e)) is None or not _typed(e) else {"n": _len(m[2])},
    lambda rng: _found("reduce_two_stage", _ex_reduction(rng), rng),
    f"{_MONOID}; n divides the length", exact=False))

_register(Macro(
    "reduce_tree",
    "reduce f z xs -> reduce f z (map (fun(chunk) => reduce f z (iterate log2(local) (tree stage) "
    "(map (reduce f z) (split (block/local) (reorder_stride local chunk))))) (split block xs))", ("block", "local"),
    mac.parallel_reduction,
    lambda e: None if (m := _reduce_args(e)) is None or not _typed(e) else {"block": _len(m[2]), "local": "block"},
    lambda rng: _found("reduce_tree", _ex_reduction(rng, (4, 8), vectors=True), rng),
    f"{_MONOID}, and commutative; block divides the length; local a power of two (at least 2) dividing block",
    power_of_two=frozenset({"local"}), values=(("local", LOCAL_SIZES),), exact=False))

_register(Macro(
    "reduce_vectorize",
    "reduce f z xs -> let (reduce f (cast vec[s, w] z) (as_vector w xs)) (fun(v) => reduce f z (lanes of v))", ("w",),
    reduce_vectorize,
    lambda e: None if (m := _reduce_args(e)) is None or not _typed(e) else {"w": _len(m[2])},
    lambda rng: _found("reduce_vectorize", _ex_reduction(rng, (2, 4, 8))
                       if rng.random() < 0.5 else RULES["reduce_vectorize"].example(rng)[0], rng),
    "f one of add, mul, max, min (a lane-wise vector form) and z its neutral element; xs scalars; "
    "w in 2, 4, 8, 16 dividing the length", values=(("w", VECTOR_WIDTHS),), exact=False))

_register(Macro(
    "reduce_vectorize_two_stage",
    "reduce f z xs -> reduce f z (map (fun(c) => reduce_vectorize w (reduce f z c)) (split n xs));  "
    "reduce f z (map g xs) (g lane-wise, w | n) -> let (reduce f' z' (map (fun(c) => reduce f' z' (map g' c)) "
    "(split (n/w) (as_vector w xs)))) (fun(v) => reduce f z (lanes of v))", ("n", "w"),
    reduce_vectorize_two_stage,
    lambda e: None if (m := _reduce_args(e)) is None or not _typed(e) else {"n": _len(m[2]), "w": "n"},
    lambda rng: _found("reduce_vectorize_two_stage", _ex_reduction(rng, (4, 8)), rng),
    f"{_MONOID}, f one of add, mul, max, min; n divides the length; w in 2, 4, 8, 16 dividing n",
    values=(("w", VECTOR_WIDTHS),), exact=False))

_register(Macro(
    "tile_2d", "map (fun(a) => map (fun(b) => e) ys) xs -> join (map (fun(rows) => map join (transpose "
    "(map (fun(cols) => map (fun(a) => map (fun(b) => e) cols) rows) (split m ys)))) (split n xs))", ("n", "m"),
    mac.tile_2d,
    lambda e: None if (c := _cross_nest(e)) is None or not _typed(e) else {"n": _len(c[0]), "m": _len(c[1])},
    lambda rng: _found("tile_2d", _ex_cross(rng, dot=bool(rng.random() < 0.5)), rng),
    "ys independent of a; n divides the length of xs, m that of ys"))

_register(Macro(
    "tile_nest_2d", "map (fun(r) => map f r) xss -> join (map (fun(blk) => map join (transpose (map (map (map f)) "
    "(transpose (map (split m) blk))))) (split n xss))", ("n", "m"),
    tile_nest_2d,
    lambda e: None if (c := _row_nest(e)) is None or not _typed(e) else {"n": _len(c[1]), "m": c[1].t.elem.size},
    lambda rng: _found("tile_nest_2d", _ex_nest_2d(rng), rng),
    "f independent of the row; n divides the number of rows, m the row length"))

_register(Macro(
    "tile_nest_3d", "map (fun(p) => map (fun(r) => map f r) p) x -> n x m x k tiles: maps over plane blocks, row "
    "tiles, column tiles, then a tile's planes, rows and columns",
    ("n", "m", "k"),
    tile_nest_3d,
    lambda e: None if (c := _row_nest_3d(e)) is None or not _typed(e) else {
        "n": _len(c[1]), "m": c[1].t.elem.size, "k": c[1].t.elem.elem.size},
    lambda rng: _found("tile_nest_3d", _ex_nest_3d(rng), rng),
    "f independent of the plane and row; n, m, k divide the three lengths"))

_register(Macro(
    "stencil_tiling_1d", "map f (slide n s xs) -> join (map (fun(t) => map f (slide n s t)) (slide u v xs))   "
    "(u = n + (j-1)*s, v = j*s)", ("j",),
    lambda j: _guarded("map f (slide n s xs)", lambda e: _stencil_1d(e) is not None, stencil_tiling_1d(j)),
    lambda e: None if _stencil_1d(e) is None or not _typed(e) else {"j": _len(e)},
    lambda rng: _found("stencil_tiling_1d", _ex_stencil_1d(rng), rng),
    "j (windows per tile) divides the number of windows"))

_register(Macro(
    "stencil_tiling_2d", RULES["slide_2d_tiling"].equation.split("   (")[0], ("j1", "j2"),
    lambda j1, j2: r("slide_2d_tiling", j1=j1, j2=j2),
    lambda e: None if not _stencil_2d(e) or not _typed(e) else {"j1": _len(e), "j2": e.t.elem.size},
    lambda rng: _found("stencil_tiling_2d", _ex_stencil_2d(rng), rng),
    "the element function maps each row of windows alike (`map f`); j1, j2 (windows per tile) divide the "
    "window counts"))

_register(Macro(
    "stencil_tiling_3d", RULES["slide_3d_tiling"].equation.split("   (")[0], ("j1", "j2", "j3"),
    lambda j1, j2, j3: r("slide_3d_tiling", j1=j1, j2=j2, j3=j3),
    lambda e: None if not _typed(e) or not _stencil_3d(e) else {
        "j1": _len(e), "j2": e.t.elem.size, "j3": e.t.elem.elem.size},
    lambda rng: _found("stencil_tiling_3d", RULES["slide_3d_tiling"].example(rng)[0], rng),
    "the 3D neighbourhoods written as examples/suite.py's slide3d (slide of planes' 2D neighbourhoods, then "
    "map transpose . transpose); f maps every window alike; j1, j2, j3 (windows per tile) divide the window counts"))

_register(Macro(
    "tile_reduction", "map (fun(a) => map (fun(b) => reduce f z (map g (zip a b))) cols) rows -> "
    "reduce over pairs of k-wide tiles with a tile accumulator", ("k",),
    lambda k: _monoid_of_inner_reduction(mac.tile_reduction(k)),
    lambda e: None if (c := _cross_nest(e)) is None or not _typed(e) or not _dot_inside(e)
    or not isinstance(c[0].t.elem, ArrayType) else {"k": c[0].t.elem.size},
    lambda rng: _found("tile_reduction", _ex_cross(rng, 2), rng),
    f"{_MONOID}; k divides the length of the rows", exact=False))

_register(Macro(
    "register_blocking_1d", "map (fun(a) => map (fun(b) => reduce f z (map g (zip a b))) ys) xs -> "
    "join (map (fun(aBlock) => transpose (map (fun(b) => <reduction with an l-wide accumulator>) ys)) (split l xs))",
    ("l",),
    mac.register_blocking_1d,
    lambda e: None if (c := _cross_nest(e)) is None or not _typed(e) or not _dot_inside(e) else {"l": _len(c[0])},
    lambda rng: _found("register_blocking_1d", _ex_cross(rng), rng),
    "the body a dot product of a and b with z a constant; l divides the length of xs", exact=False))

_register(Macro(
    "register_blocking_2d", "map (fun(a) => map (fun(b) => reduce f z (map g (zip a b))) ys) xs -> "
    "tile_2d l1 l2, each l1 x l2 block an accumulation of outer products", ("l1", "l2"),
    mac.register_blocking_2d,
    lambda e: None if (c := _cross_nest(e)) is None or not _typed(e) or not _dot_inside(e)
    else {"l1": _len(c[0]), "l2": _len(c[1])},
    lambda rng: _found("register_blocking_2d", _ex_cross(rng), rng),
    "the body a dot product of a and b with z a constant; l1 divides the length of xs, l2 that of ys", exact=False))

_register(Macro(
    "vectorize", "map f xs -> as_scalar (map (map_vec f) (as_vector w xs))", ("w",),
    lambda w: r("vectorize", w=w),
    lambda e: None if (m := _map_args(e)) is None or not _typed(e) else {"w": _len(m[1])},
    lambda rng: _found("vectorize", RULES["vectorize"].example(rng)[0], rng),
    "xs an array of scalars, f scalar to scalar; w in 2, 4, 8, 16 dividing the length", values=(("w", VECTOR_WIDTHS),)))

_register(Macro(
    "interchange", RULES["map_map_interchange"].equation + "   (also map (fun(r) => map f r) xss)", (),
    lambda: lchoice(r("map_map_interchange"), seq(function(argument(r("eta"))), r("map_map_interchange"))),
    lambda e: None if _row_nest(e) is None else {},
    _from_rule("map_map_interchange", "interchange")))

_register(Macro(
    "interchange_swap", RULES["map_map_swap"].equation.split("   (")[0], (),
    lambda: r("map_map_swap"),
    lambda e: None if _cross_nest(e) is None else {},
    _from_rule("map_map_swap", "interchange_swap"),
    "the inner array independent of the outer element"))

_register(Macro(
    "fusion", RULES["map_fusion"].equation, (),
    lambda: r("map_fusion"),
    lambda e: None if (m := _map_args(e)) is None or _map_args(m[1]) is None else {},
    _from_rule("map_fusion", "fusion")))

_register(Macro(
    "generate_reduce_fusion", RULES["generate_reduce_fusion"].equation.split("   (")[0], (),
    lambda: r("generate_reduce_fusion"),
    lambda e: None if isinstance(generated_reduction(e), str) or not _typed(e) else {},
    _from_rule("generate_reduce_fusion", "generate_reduce_fusion"),
    "f, z and xs independent of k; n a constant (the n values of each element are held per item)",
    exact=False))

_register(Macro(
    "pair_reduce_fusion", RULES["pair_reduce_fusion"].equation.split("   (")[0], (),
    lambda: r("pair_reduce_fusion"),
    lambda e: None if isinstance(paired_reductions(e), str) or not _typed(e) else {},
    _from_rule("pair_reduce_fusion", "pair_reduce_fusion"),
    "the two reductions over the same array", exact=False))

_register(Macro(
    "fission", RULES["map_fission"].equation, (),
    lambda: r("map_fission"),
    lambda e: None if (m := _map_args(e)) is None or not isinstance(m[0], Lambda) else {},
    _from_rule("map_fission", "fission"),
    "the function's body is f (g x) with f independent of x"))

_register(Macro(
    "hoist_invariant", RULES["hoist_invariant"].equation.split("   (")[0], (),
    lambda: r("hoist_invariant"),
    lambda e: None if _map_args(e) is None and _reduce_args(e) is None else {},
    lambda rng: _found("hoist_invariant", _ex_hoist(rng), rng),
    "some loop in the function mentions nothing bound in it",
    exact=False))  # the interpreter sums a reduction computed once in another order than one per element

_register(Macro(
    "split_k_nest", "map (fun(p) => map (fun(q) => E[reduce f z (map g (zip p q))]) ys) xs -> let (map (fun(k) => "
    "map (fun(a) => map (fun(b) => reduce f z (map g (zip a b))) (map (fun(y) => at (split n y) k) ys)) "
    "(map (fun(x) => at (split n x) k) xs)) (generate (len / n) id)) (fun(P) => map (fun(u) => map (fun(v) => "
    "E[reduce f z (fst v)][p, q := snd u, snd v]) (zip (transpose (fst u)) ys)) (zip (transpose P) xs))", ("n",),
    split_k_nest,
    lambda e: None if not _typed(e) or (n := _nest_reduction_length(e)) is None else {"n": n},
    lambda rng: _found("split_k_nest", _ex_split_k_nest(rng), rng),
    f"{_MONOID}; a rectangular 2D nest whose inner function's first reduction outside functions reduces "
    "[map g] (zip p q) of the two elements; n divides its length",
    exact=False))

_register(Macro(
    "split_k", "map (fun(p) => E[reduce f z D]) xs -> let (map (fun(k) => map (fun(p) => reduce f z "
    "(at (split n D) k)) xs) (generate (len D / n) id)) (fun(P) => map (fun(q) => E[reduce f z (fst q)][p := snd q]) "
    "(zip (transpose P) xs))   (D's map cut with its input: no element of D stored)", ("n",),
    split_k,
    lambda e: None if (m := _map_of_reduce(e)) is None or not _typed(e) else {"n": _len(m[1])},
    lambda rng: _found("split_k", _ex_split_k(rng), rng),
    f"{_MONOID}; the first reduction outside functions in the map's function; n divides its length",
    exact=False))


# ------------------------------------------------------------------ cuts at a multiple


def _cut_at_multiple(name: str, rule_name: str, param: str, data: Callable[[Expr], Expr | None]) -> Callable[..., Strategy]:
    """The rule `rule_name` with its cut `param` at a * (n // a), n the length of the node's
    data: symbolic where n is (the explorer's programs keep their size variables)."""

    def make(a: int) -> Strategy:
        def run(e: Expr) -> Result:
            xs = data(e)
            n = _len(xs) if xs is not None else None
            if n is None:
                return Failure(f"{name}: the node is not a map or reduction of an array")
            return r(rule_name, **{param: a * (n // a)})(e)

        return Strategy(f"{name}({a})", run)

    return make


def _ex_cut(rng, reduction: bool):
    """A map or a reduction over a length with a power of two below it that does not divide it."""
    n = int(rng.choice([k for k in range(3, 41) if k & (k - 1)]))
    if reduction:
        op, z = _monoid(rng)
        return fl.fun([array(n, f32)], lambda xs: fl.reduce(op, z, fl.map(lambda x: x * 0.5 + 0.75, xs)))
    g = inst.pick(rng, inst.UNARY)
    if rng.random() < 0.5:
        return fl.fun([array(n, f32)], lambda xs: fl.map(g, xs))
    return fl.fun([array(n, array(3, f32))], lambda xss: fl.map(lambda row: fl.map(g, row), xss))


_register(Macro(
    "map_cut", "map f xs -> concat (map f (take (a * (n // a)) xs)) (map f (drop (a * (n // a)) xs))   "
    "(map_split_at at the largest multiple of a in n)", ("a",),
    _cut_at_multiple("map_cut", "map_split_at", "k", lambda e: (m := _map_args(e)) and m[1]),
    lambda e: None if (m := _map_args(e)) is None or not _typed(e) else {"a": Cut(_len(m[1]))},
    lambda rng: _found("map_cut", _ex_cut(rng, False), rng),
    "a a power of two below n that does not divide it (the remainder is not empty)",
    power_of_two=frozenset({"a"}), cuts=frozenset({"a"})))

def _column_length(e: Expr):
    """The row length of a 2D map `map (fun(x) => map f D) xs` (or `map (map f) xs`), else None."""
    m = _map_args(e)
    if m is None or not isinstance(e.t, ArrayType) or not isinstance(e.t.elem, ArrayType):
        return None
    f = m[0]
    inner = f.body if isinstance(f, Lambda) else f
    head, args = spine(inner)
    if not (getattr(head, "name", None) == "map" and len(args) == (2 if isinstance(f, Lambda) else 1)):
        return None
    return e.t.elem.size


def map_cut_columns(a: int) -> Strategy:
    """At a 2D map: each row's map cut at the largest multiple k of a in the row length L
    (map_split_at), the two parts made nests of their own (map_concat_transpose), and each
    part's rows as data where its function is a map of a view of the row (map_fission):

        map (fun(x) => map f (R x)) xs -> transpose (concat (transpose (map (map f) (map (fun(x) =>
            take k (R x)) xs))) (transpose (map (map f) (map (fun(x) => drop k (R x)) xs))))"""

    def run(e: Expr) -> Result:
        length = _column_length(e)
        if length is None:
            return Failure("map_cut_columns: the node is not a 2D map")
        split = seq(try_(r("eta_expand_map")), fmap(r("map_split_at", k=a * (length // a))), r("map_concat_transpose"))
        part = try_(r("map_fission"))  # the rows' views as data where f is independent of the row
        return seq(split, argument(seq(function(argument(argument(part))), argument(argument(part)))))(e)

    return Strategy(f"map_cut_columns({a})", run)


def _ex_cut_columns(rng):
    """A 2D map (rows of a matrix, or a product's rows and columns) whose rows' length has a cut."""
    rows = int(rng.integers(1, 4))
    n = int(rng.choice([k for k in range(3, 21) if k & (k - 1)]))
    g = inst.pick(rng, inst.UNARY)
    if rng.random() < 0.5:
        return fl.fun([array(rows, array(n, f32))], lambda xss: fl.map(lambda row: fl.map(g, row), xss))
    k = int(rng.integers(1, 4))
    return fl.fun([array(rows, array(k, f32)), array(k, array(n, f32))], lambda a, b: fl.map(
        lambda row: fl.map(lambda col: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(row, col))),
                           fl.transpose(b)), a))


_register(Macro(
    "map_cut_columns", "map (fun(x) => map f (R x)) xs -> transpose (concat (transpose (map (fun(x) => map f (take k "
    "(R x))) xs)) (transpose (map (fun(x) => map f (drop k (R x))) xs)))   (k = a * (L // a), L the rows' length)",
    ("a",), map_cut_columns,
    lambda e: None if (n := _column_length(e)) is None or not _typed(e) else {"a": Cut(n)},
    lambda rng: _found("map_cut_columns", _ex_cut_columns(rng), rng),
    "a a power of two below the rows' length that does not divide it",
    power_of_two=frozenset({"a"}), cuts=frozenset({"a"})))

_register(Macro(
    "reduce_cut", "reduce f z xs -> reduce f (reduce f z (take (a * (n // a)) xs)) (drop (a * (n // a)) xs)   "
    "(reduce_take_drop at the largest multiple of a in n)", ("a",),
    _cut_at_multiple("reduce_cut", "reduce_take_drop", "m", lambda e: (m := _reduce_args(e)) and m[2]),
    lambda e: None if (m := _reduce_args(e)) is None or not _typed(e) else {"a": Cut(_len(m[2]))},
    lambda rng: _found("reduce_cut", _ex_cut(rng, True), rng),
    "a a power of two below n that does not divide it; any f (a left fold read in two parts)",
    power_of_two=frozenset({"a"}), exact=False, cuts=frozenset({"a"})))


__all__ = [
    "MACROS",
    "Cut",
    "VECTOR_WIDTHS",
    "Macro",
    "apply_at",
    "choices",
    "concrete",
    "cut_values",
    "divisors",
    "draw",
    "reduce_two_stage",
    "reduce_vectorize_two_stage",
    "sites",
    "specialise",
    "split_k",
    "split_k_nest",
    "stencil_tiling_1d",
    "tile_nest_2d",
    "tile_nest_3d",
]
