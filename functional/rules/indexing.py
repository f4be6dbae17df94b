"""Programs written with indices, read as data flow: a `generate` whose index only picks
elements becomes a `map` over the arrays it reads, so every rule about maps (split-join,
tiling, vectorisation, fusion, reductions' stages) applies to `generate n (fun(i) =>
a[i] * b[i])` as it does to `map (*) (zip a b)`.

    generate_as_map
        generate n (fun(i) => B[X1[i], ..., Xm[i]])
          -> map (fun(p) => B[p.1, ..., p.m]) (zip X1 (zip ... Xm))

    where each Xk mentions neither i nor anything bound inside the function (it is the same
    array for every i) and has at least n elements (one with more is cut: `take n Xk`).

A read `X[i][e]` at an index e that is the same for every i is a read of column e:
X[i][e] = (transpose X)[e][i], so its array is the column `(transpose X)[e]`, and
X[i][e1][e2] = (map transpose (transpose X))[e1][e2][i] likewise for deeper reads: the
invariant indices move outward, the generate's index innermost.  This is what turns
`generate K (fun(k) => a[i][k] * b[k][j])` into a dot product of row i of a and column j of
b, and, applied again to the generates around it, the whole matrix product into the maps of
`map (fun(r) => map (fun(c) => ...) (transpose b)) a`.

A read at a constant offset, `X[i + c]`, in range for every i or clamped to the array
(`max (i + c) 0`, `min (i + c) (n - 1)`, `clamp (i + c) 0 (n - 1)`), is a read of a window:
where X is read at offsets cmin .. cmax, its component is the windows

    take n (slide w 1 (drop d (pad_clamp l r X)))      w = cmax - cmin + 1

(l, r: what the first and last windows reach outside X; d = cmin + l; the pad, drop and take
only where needed) and X[i + c] is element c - cmin of window i: pad_clamp repeats the
edge elements, which is what the clamp reads, and an index in range reads the same element
clamped or not.  So `generate n (fun(i) => x[max (i-1) 0] + x[i] + x[min (i+1) (n-1)])` is
`map (fun(w) => w[0] + w[1] + w[2]) (slide 3 1 (pad_clamp 1 1 x))`, and the stencil rules
(overlapped tiling) apply to it.

Any other use of i (arithmetic on it, a computed index, a cast) reads it from a further
component `generate n (fun(k) => k)`, so the rule applies wherever at least one element is
read at the index, and the map's function keeps every use.  Proof: the map's k-th element
is B with p = (X1[k], ..., Xm[k], k), which is B at i = k: generate's k-th element.
"""

from __future__ import annotations

import attrs
import numpy as np

from .. import dsl as fl
from ..expr import App, Expr, Identifier, Lambda, Literal, Prim, applied, fresh_name, spine, substitute, walk
from ..nat import Nat, is_nonneg
from ..types import ArrayType, array, f32, i32
from . import instances as inst
from .core import NotApplicable, P, V, rule


@attrs.frozen
class IndexedReads:
    """What generate_as_map reads in a generate's function: the arrays read at its index
    (`components`, in order), the body with each such read (and each other use of the
    index, when `index_used`) replaced by a placeholder identifier (`holes[k]` stands for
    component k; `index_hole` for the index itself)."""

    body: Expr
    components: tuple[Expr, ...]
    holes: tuple[str, ...]
    index_used: bool
    index_hole: str


def _at_chain(e: Expr) -> list[tuple[Expr, Expr]] | None:
    """`at (at (at X i0) i1) i2` as [(node, i2), (inner node, i1), (innermost node, i0)] with
    the innermost array X last as (X, None); None when e is not an `at`."""
    chain: list[tuple[Expr, Expr | None]] = []
    while True:
        head, args = spine(e)
        if not (isinstance(head, Prim) and head.name == "at" and len(args) == 2):
            break
        chain.append((e, args[1]))
        e = args[0]
    if not chain:
        return None
    chain.append((e, None))
    return chain


def _columns_first(x: Expr, depth: int) -> Expr:
    """The view V of x with V[e1]...[e_depth][i] = x[i][e1]...[e_depth]: x's outer axis moved
    `depth` places inward (transpose, then map transpose, ...)."""
    v = x
    for level in range(depth):
        step = Prim("transpose")
        for _ in range(level):
            step = App(Prim("map"), step)
        v = App(step, v)
    return v


@attrs.frozen
class Offset:
    """An index `i + c`, possibly clamped below at 0 (`lo`) and above at `upper - 1` (`hi`)."""

    c: int
    lo: bool = False
    hi: bool = False
    upper: object = None  # the Nat the upper clamp names


def _int_literal(e: Expr) -> int | None:
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def _upper(e: Expr):
    """The n of an upper clamp `n - 1`: `nat_value n - 1`, `cast i32 (nat_value n) - 1`, or a
    literal n - 1 (the Nat n, or None)."""
    k = _int_literal(e)
    if k is not None:
        return Nat.const(k + 1)
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name in ("sub", "add") and len(args) == 2):
        return None
    one = _int_literal(args[1])
    if one != (1 if head.name == "sub" else -1):
        return None
    value = args[0]
    inner = applied(value, "cast", 1)
    if inner is not None:
        value = inner[0]
    vhead, vargs = spine(value)
    if isinstance(vhead, Prim) and vhead.name == "nat_value" and not vargs:
        return vhead.params[0]
    return None


def offset(e: Expr, index: str) -> Offset | None:
    """`e` as an Offset of the identifier `index`, or None (any other function of it)."""
    if isinstance(e, Identifier):
        return Offset(0) if e.name == index else None
    head, args = spine(e)
    if not (isinstance(head, Prim) and len(args) in (2, 3)):
        return None
    name = head.name
    if name in ("add", "sub") and len(args) == 2:
        for inner, k in ((args[0], _int_literal(args[1])), (args[1], _int_literal(args[0]) if name == "add" else None)):
            o = offset(inner, index) if k is not None else None
            if o is not None and not (o.lo or o.hi):
                return Offset(o.c + (k if name == "add" else -k))
        return None
    if name == "max" and len(args) == 2:
        for inner, zero in ((args[0], args[1]), (args[1], args[0])):
            o = offset(inner, index) if _int_literal(zero) == 0 else None
            if o is not None:
                return attrs.evolve(o, lo=True)
        return None
    if name == "min" and len(args) == 2:
        for inner, bound in ((args[0], args[1]), (args[1], args[0])):
            upper = _upper(bound)
            o = offset(inner, index) if upper is not None else None
            if o is not None and not o.hi:
                return attrs.evolve(o, hi=True, upper=upper)
        return None
    if name == "clamp" and len(args) == 3 and _int_literal(args[1]) == 0:
        upper = _upper(args[2])
        o = offset(args[0], index) if upper is not None else None
        if o is not None and not o.hi:
            return attrs.evolve(o, lo=True, hi=True, upper=upper)
    return None


@attrs.frozen
class Window:
    """The windows of an array of `length` elements that a generate over n indices reads at
    offsets cmin .. cmax: window i holds its elements i + cmin .. i + cmax, clamped to the
    array (pad_clamp) where a read clamps."""

    cmin: int
    cmax: int
    length: object
    n: object

    @property
    def pads(self) -> tuple[int, int]:
        """Elements pad_clamp adds before and after: what the first and last windows reach
        outside the array."""
        beyond = self.cmax - (self.length - self.n)
        after = beyond.as_int() if isinstance(beyond, Nat) else beyond
        return max(0, -self.cmin), max(0, after if after is not None else self.cmax)

    def of(self, xs: Expr) -> Expr:
        left, right = self.pads
        padded = fl.pad_clamp(left, right, xs) if left or right else xs
        start = self.cmin + left
        if start:
            padded = fl.drop(start, padded)
        width = self.cmax - self.cmin + 1
        windows = fl.slide(width, 1, padded) if width > 1 else padded
        count = self.length + left + right - start - width + 1
        return windows if count == self.n else fl.take(self.n, windows)

    def read(self, hole: Expr, c: int) -> Expr:
        return fl.at(hole, c - self.cmin) if self.cmax > self.cmin else hole


class _Reads:
    """One walk of a generate's body: replaces reads at the index by holes.  `windows` (from
    an earlier walk's `offsets`) says which arrays are read at several offsets."""

    def __init__(self, index: str, n, avoid: set[str], windows: dict | None = None):
        self.index, self.n, self.avoid = index, n, avoid
        self.windows = windows or {}
        self.offsets: dict[Expr, list[int]] = {}  # array read -> offsets read at (this walk)
        self.lengths: dict[Expr, object] = {}  # array read -> its length
        self.components: list[Expr] = []
        self.holes: list[str] = []
        self.index_hole = self._fresh("idx")
        self.index_used = False

    def _fresh(self, base: str) -> str:
        name = fresh_name(base, self.avoid)
        self.avoid.add(name)
        return name

    def _invariant(self, e: Expr, bound: frozenset[str]) -> bool:
        return not (e.free_names & (bound | {self.index}))

    def _hole(self, component: Expr) -> Identifier:
        for k, c in enumerate(self.components):
            if c == component:
                return Identifier(self.holes[k])
        self.components.append(component)
        self.holes.append(self._fresh("elem"))
        return Identifier(self.holes[-1])

    def _in_range(self, o: Offset, length) -> bool:
        """Every index the read makes for i < n is one of the array's."""
        below = o.lo or o.c >= 0
        above = (o.upper == length) if o.hi else is_nonneg(length - self.n - o.c)
        return below and above and is_nonneg(length - self.n)

    def _read(self, e: Expr, bound: frozenset[str]) -> Expr | None:
        """The hole for `e`, an `at` chain that reads an invariant array at the index or at a
        constant offset from it (with the invariant indices around that read); None when it
        is not one."""
        chain = _at_chain(e)
        if chain is None:
            return None
        # chain[j] = (node_j, index_j), node_j = at node_{j+1} index_j; chain[-1] = (X, None)
        for j in range(len(chain) - 2, -1, -1):  # the innermost read at the index first
            node, index = chain[j]
            array_arg = chain[j + 1][0]
            o = offset(index, self.index)
            if o is None:
                continue
            if not self._invariant(array_arg, bound):
                return None
            t = array_arg.t
            if not isinstance(t, ArrayType) or not self._in_range(o, t.size):
                return None
            outer = 0
            while j - outer - 1 >= 0 and self._invariant(chain[j - outer - 1][1], bound):
                outer += 1
            base = _columns_first(array_arg, outer)
            for k in range(outer):
                base = fl.at(base, chain[j - k - 1][1])
            self.offsets.setdefault(base, []).append(o.c)
            self.lengths[base] = t.size
            window = self.windows.get(base)
            if window is not None:
                hole = window.read(self._hole(window.of(base)), o.c)
            else:
                hole = self._hole(base if t.size == self.n else fl.take(self.n, base))
            top = j - outer  # the at node the hole replaces
            return hole if top == 0 else self._rebuild(chain, top, hole, bound)
        return None

    def _rebuild(self, chain, top: int, hole: Expr, bound: frozenset[str]) -> Expr:
        """The ats around chain[top] applied to `hole`, their indices walked."""
        e = hole
        for k in range(top - 1, -1, -1):
            e = fl.at(e, self.walk(chain[k][1], bound))
        return e

    def walk(self, e: Expr, bound: frozenset[str]) -> Expr:
        read = self._read(e, bound)
        if read is not None:
            return read
        if isinstance(e, Identifier):
            if e.name == self.index and e.name not in bound:
                self.index_used = True
                return Identifier(self.index_hole)
            return e
        if isinstance(e, Lambda):
            if e.param.name == self.index:  # shadowed: the index is not visible inside
                return e
            return attrs.evolve(e, body=self.walk(e.body, bound | {e.param.name}), t=None)
        if isinstance(e, App):
            return attrs.evolve(e, fun=self.walk(e.fun, bound), arg=self.walk(e.arg, bound), t=None)
        if e.children():  # NatLambda, NatApp: no identifiers bound
            (child,) = e.children()
            field = "body" if hasattr(e, "body") else "fun"
            return attrs.evolve(e, **{field: self.walk(child, bound)}, t=None)
        return e


def indexed_reads(f: Expr, n) -> IndexedReads | None:
    """The reads of `f = fun(i) => B`, a generate's function over n indices, that
    generate_as_map turns into components; None when it reads no element at the index.
    Two walks: the first finds the offsets each array is read at, the second reads the
    arrays read at more than one offset through their windows."""
    if not isinstance(f, Lambda):
        return None

    def reads(windows=None) -> _Reads:
        avoid = {x.name for x in walk(f) if isinstance(x, Identifier)} | {
            x.param.name for x in walk(f) if isinstance(x, Lambda)}
        r = _Reads(f.param.name, n, avoid, windows)
        r.body = r.walk(f.body, frozenset())
        return r

    first = reads()
    windows = {base: Window(min(cs), max(cs), first.lengths[base], n)
               for base, cs in first.offsets.items() if set(cs) != {0}}
    final = reads(windows) if windows else first
    if not final.components:
        return None
    return IndexedReads(final.body, tuple(final.components), tuple(final.holes), final.index_used,
                        final.index_hole)


def _side(m) -> str | None:
    if not isinstance(m.f, Lambda):
        return "the function is not a lambda"
    return None if indexed_reads(m.f, m.n) is not None else "no element is read at the generate's index"


def _build(m) -> Expr:
    reads = indexed_reads(m.f, m.n)
    if reads is None:
        raise NotApplicable("no element is read at the generate's index")
    components = list(reads.components)
    holes = list(reads.holes)
    if reads.index_used:
        components.append(fl.generate(m.n, lambda k: k))
        holes.append(reads.index_hole)
    named = [x for e in [reads.body, *components] for x in walk(e)]
    avoid = {x.name for x in named if isinstance(x, Identifier)} | {
        x.param.name for x in named if isinstance(x, Lambda)} | set(holes)  # no shadowing: readable
    param = Identifier(fresh_name("p", avoid))
    if len(components) == 1 and reads.body == Identifier(holes[0]):
        return components[0]  # generate n (fun(i) => X[i]) is X
    data = components[-1]
    for c in reversed(components[:-1]):
        data = fl.zip(c, data)
    projections = _projections(param, len(components))
    body = reads.body
    for hole, value in zip(holes, projections):
        body = substitute(body, hole, value)
    return fl.map(Lambda(param, body), data)


def _projections(p: Expr, m: int) -> list[Expr]:
    """The m elements of a zip X1 (zip X2 (... Xm)) element p: fst p, fst (snd p), ..."""
    out, rest = [], p
    for _ in range(m - 1):
        out.append(fl.fst(rest))
        rest = fl.snd(rest)
    return out + [rest]


def _ex_generate_as_map(rng):
    m, n = inst.size(rng, 1, 1, 5), inst.size(rng, 1, 1, 6)
    kind = int(rng.integers(9))
    a, x = inst.data(rng, m, n), inst.data(rng, n)
    if kind == 0:  # a matrix-vector product: row i of a, all of x
        prog = fl.fun([array(m, array(n, f32)), array(n, f32)], lambda a, x: fl.generate(m, lambda i: fl.reduce(
            fl.add, 0.0, fl.generate(n, lambda j: fl.at(fl.at(a, i), j) * fl.at(x, j)))))
        return prog, (a, x), {}
    if kind == 1:  # a column read: a[k][j] for an invariant j
        prog = fl.fun([array(m, array(n, f32))], lambda a: fl.generate(n, lambda j: fl.reduce(
            fl.add, 0.0, fl.generate(m, lambda k: fl.at(fl.at(a, k), j) * 2.0))))
        return prog, (a,), {}
    if kind == 2:  # the index used as a value as well
        prog = fl.fun([array(n, f32)], lambda x: fl.generate(n, lambda i: fl.at(x, i) * fl.cast(f32, i) + 1.0))
        return prog, (x,), {}
    if kind == 3:  # an array longer than the generate: cut
        k = n + int(rng.integers(1, 4))
        prog = fl.fun([array(k, f32)], lambda x: fl.generate(n, lambda i: fl.abs(fl.at(x, i))))
        return prog, (inst.data(rng, k),), {}
    if kind == 8:
        return _ex_same_array_twice(rng, n)
    if kind == 4:  # a read two levels deep at invariant indices: x[i][e1][e2]
        d = inst.size(rng, 1, 1, 3)
        c = inst.data(rng, m, n, d)
        prog = fl.fun([array(m, array(n, array(d, f32)))], lambda c: fl.generate(n, lambda e1: fl.generate(
            d, lambda e2: fl.reduce(fl.max, -1e30, fl.generate(m, lambda i: fl.at(fl.at(fl.at(c, i), e1), e2))))))
        return prog, (c,), {}
    if kind == 5:  # a 3-point stencil, clamped at both ends (max, min or clamp, each spelling of the bound)
        upper = [lambda: fl.nat_value(n) - 1, lambda: fl.cast(i32, fl.nat_value(n)) - 1, lambda: fl.lit(n - 1, i32)][
            int(rng.integers(3))]
        clamp_hi = (lambda e: fl.min(e, upper())) if rng.random() < 0.5 else (lambda e: fl.clamp(e, 0, upper()))
        prog = fl.fun([array(n, f32)], lambda x: fl.generate(n, lambda i: (
            x[fl.max(i - 1, 0)] - x[i] * 2.0 + x[clamp_hi(i + 1)])))
        return prog, (x,), {}
    if kind == 6:  # a stencil without boundaries: n - 2 windows of 3, or reads at i + 1 only
        k = n + 2
        body = (lambda x, i: x[i + 2] * 0.5 + x[i]) if rng.random() < 0.7 else (lambda x, i: x[i + 1] * 3.0)
        prog = fl.fun([array(k, f32)], lambda x: fl.generate(n, lambda i: body(x, i)))
        return prog, (inst.data(rng, k),), {}
    if kind == 7:  # a 2D 5-point stencil clamped at the edges, the generate over rows outermost
        prog = fl.fun([array(m, array(n, f32))], lambda g: fl.generate(m, lambda i: fl.generate(n, lambda j: (
            g[i][j] + g[fl.max(i - 1, 0)][j] + g[fl.min(i + 1, fl.nat_value(m) - 1)][j] + g[i][fl.max(j - 1, 0)]
            + g[i][fl.min(j + 1, fl.nat_value(n) - 1)]))))
        return prog, (a,), {}
    return _ex_same_array_twice(rng, n)


def _ex_same_array_twice(rng, n):
    """The same array read at the index twice, and at a literal index."""
    x = inst.data(rng, n)
    prog = fl.fun([array(n, f32), array(n, i32)], lambda x, ks: fl.generate(n, lambda i: fl.select(
        fl.at(ks, i) > 3, fl.at(x, i) * fl.at(x, i), fl.at(x, 0))))
    return prog, (x, rng.integers(0, 9, n).astype(np.int32)), {}


rule("generate_as_map", "indexing",
     "generate n (fun(i) => B[X1[i], ..., Xm[i]]) -> map (fun(p) => B[p.1, ..., p.m]) (zip X1 (... Xm))   "
     "(each Xk the same for every i, at least n long; X[i][e] with e the same for every i reads (transpose X)[e]; "
     "X[i + c], in range or clamped to X, reads element c - cmin of window i of slide w 1 (pad_clamp l r X); "
     "other uses of i read a component generate n (fun(k) => k))",
     lhs=P("generate", V("f"), params=("n",)), side=_side, build=_build, example=_ex_generate_as_map,
     doc="Index-written programs (a[i][k] * b[k][j], x[max (i-1) 0] + x[i]) as the maps, zips, transposes and "
         "slides the other rules read.")
