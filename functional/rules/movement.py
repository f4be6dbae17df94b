"""Movement rules: data-layout primitives (split, join, transpose, gather, scatter,
reorder_stride, take, drop, concat) commute with maps that treat every element alike, plus
the tuple simplifications (pair/fst/snd, zip/unzip) and the identities between layouts.

A layout primitive only moves elements around; it never looks inside them.  So applying
`f` to every element before or after the move gives the same array:

    map f (join xss)          = join (map (map f) xss)
    map f (gather idx xs)     = gather idx (map f xs)           (idx any index function)
    transpose (map (map f) x) = map (map f) (transpose x)

Only maps that apply one function to *each element* commute; `map f (transpose xss)`
with an arbitrary row function `f` does not.  Where the function must be `map f` for
some `f` the rules also accept its data-flow form `fun(r) => map f r` (r not free in f).
"""

from __future__ import annotations

from .. import dsl as fl
from ..expr import App, Expr, Identifier, Lambda, Prim, bound_names, free_identifiers, fresh_name, spine
from ..nat import Nat, divides
from ..types import array, f32
from . import instances as inst
from .core import P, V, beta, length, rule

# ------------------------------------------------------------------------ helpers


def map_fn(g: Expr) -> Expr | None:
    """`f` when `g` is `map f` or `fun(r) => map f r` with r not free in f; else None."""
    if isinstance(g, App) and isinstance(g.fun, Prim) and g.fun.name == "map":
        return g.arg
    if isinstance(g, Lambda):
        head, args = spine(g.body)
        if (isinstance(head, Prim) and head.name == "map" and len(args) == 2
                and isinstance(args[1], Identifier) and args[1].name == g.param.name
                and g.param.name not in free_identifiers(args[0])):
            return args[0]
    return None


def prim_fn_params(g: Expr, name: str) -> tuple | None:
    """The static parameters of `g` when `g` is the primitive `name` with no value argument
    (`split n`, `join`) or its data-flow form `fun(r) => split n r`; else None."""
    if isinstance(g, Lambda):
        head, args = spine(g.body)
        if not (len(args) == 1 and isinstance(args[0], Identifier) and args[0].name == g.param.name):
            return None
        g = head
    if isinstance(g, Prim) and g.name == name:
        return g.params
    return None


def is_prim_fn(g: Expr, name: str) -> bool:
    """`g` is the primitive `name` (unapplied) or `fun(x) => name x`."""
    return prim_fn_params(g, name) is not None


def _split_fn(g: Expr):
    """n when g is `split n` or `fun(r) => split n r`."""
    params = prim_fn_params(g, "split")
    return params[0] if params else None


def is_identity(g: Expr) -> bool:
    return isinstance(g, Lambda) and isinstance(g.body, Identifier) and g.body.name == g.param.name


def elementwise(name: str):
    """Side condition: the bound function `name` is `map f` (maps every element alike)."""

    def side(m):
        return None if map_fn(getattr(m, name)) is not None else f"the function is not `map f` ({getattr(m, name)})"

    return side


def _prim_fn_side(name: str, prim: str):
    def side(m):
        return None if is_prim_fn(getattr(m, name), prim) else f"the function is not {prim}"

    return side


def _const(n) -> int | None:
    return n.as_int() if isinstance(n, Nat) else n


# ------------------------------------------------------------ random instances


def nested(dims, elem=f32):
    """The type dims[0].dims[1]...elem (outer dimension first)."""
    t = elem
    for d in reversed(list(dims)):
        t = array(d, t)
    return t


def element_fn(rng):
    """A function on array elements and the elements' shape: `(f, shape, monoid)`.
    Scalars (from the unary pool), or rows that are reduced or mapped."""
    kind = int(rng.integers(3))
    if kind == 0:
        return inst.pick(rng, inst.UNARY), (), None
    k = inst.size(rng, 1, 1, 4)
    if kind == 1:
        op, z = inst.pick(rng, inst.MONOIDS)
        return fl.reduce(op, z), (k,), (op, z)
    return fl.map(inst.pick(rng, inst.UNARY)), (k,), None


def row_map(rng, f):
    """`map f`, or its data-flow form `fun(r) => map f r`."""
    return fl.map(f) if rng.random() < 0.5 else fl.lam(lambda r: fl.map(f, r))


def one_input(rng, dims, values, body, *, shape=(), monoid=None):
    """A program of one array input of type dims.shape.f32 with data of extents values.shape."""
    prog = fl.fun([nested(tuple(dims) + tuple(shape))], body)
    return prog, (inst.data(rng, *values, *shape, monoid=monoid),)


# ------------------------------------------------------------------- split / join


def _ex_map_join(rng):
    f, shape, monoid = element_fn(rng)
    m, n = inst.size(rng), inst.size(rng)
    prog, inputs = one_input(rng, (inst.length(rng, m), n), (m, n), lambda xss: fl.map(f, fl.join(xss)),
                             shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("map_join", "movement", "map f (join xss) -> join (map (map f) xss)",
     lhs=P("map", V("f"), P("join", V("xss"))),
     build=lambda m: fl.join(fl.map(fl.map(m.f), m.xss)),
     example=_ex_map_join,
     doc="join only concatenates the rows; f sees the same elements in the same order.")


def _ex_join_map(rng):
    f, shape, monoid = element_fn(rng)
    m, n = inst.size(rng), inst.size(rng)
    prog, inputs = one_input(rng, (inst.length(rng, m), n), (m, n),
                             lambda xss: fl.join(fl.map(row_map(rng, f), xss)), shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("join_map", "movement", "join (map (map f) xss) -> map f (join xss)",
     lhs=P("join", P("map", V("g"), V("xss"))), side=elementwise("g"),
     build=lambda m: fl.map(map_fn(m.g), fl.join(m.xss)),
     example=_ex_join_map)


def _ex_split_map(rng):
    f, shape, monoid = element_fn(rng)
    n = int(rng.choice([1, 2, 3, 4]))
    total = inst.size(rng, n)
    prog, inputs = one_input(rng, (inst.length(rng, total, n),), (total,),
                             lambda xs: fl.split(n, fl.map(f, xs)), shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("split_map", "movement", "split n (map f xs) -> map (map f) (split n xs)",
     lhs=P("split", P("map", V("f"), V("xs")), params=("n",)),
     build=lambda m: fl.map(fl.map(m.f), fl.split(m.n, m.xs)),
     example=_ex_split_map)


def _ex_map_split(rng):
    f, shape, monoid = element_fn(rng)
    n = int(rng.choice([1, 2, 3, 4]))
    total = inst.size(rng, n)
    prog, inputs = one_input(rng, (inst.length(rng, total, n),), (total,),
                             lambda xs: fl.map(row_map(rng, f), fl.split(n, xs)), shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("map_split", "movement", "map (map f) (split n xs) -> split n (map f xs)",
     lhs=P("map", V("g"), P("split", V("xs"), params=("n",))), side=elementwise("g"),
     build=lambda m: fl.split(m.n, fl.map(map_fn(m.g), m.xs)),
     example=_ex_map_split)


def _ex_join_join(rng):
    a, b, c = inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4)
    prog, inputs = one_input(rng, (inst.length(rng, a), b, c), (a, b, c), lambda x: fl.join(fl.join(x)))
    return prog, inputs, {}


rule("join_join", "movement", "join (join xsss) -> join (map join xsss)",
     lhs=P("join", P("join", V("xsss"))),
     build=lambda m: fl.join(fl.map(fl.join, m.xsss)),
     example=_ex_join_join,
     doc="Both flatten a 3D array in row-major order.")


def _ex_join_map_join(rng):
    a, b, c = inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4)
    g = fl.join if rng.random() < 0.5 else fl.lam(lambda r: fl.join(r))
    prog, inputs = one_input(rng, (inst.length(rng, a), b, c), (a, b, c), lambda x: fl.join(fl.map(g, x)))
    return prog, inputs, {}


rule("join_map_join", "movement", "join (map join xsss) -> join (join xsss)",
     lhs=P("join", P("map", V("g"), V("xsss"))), side=_prim_fn_side("g", "join"),
     build=lambda m: fl.join(fl.join(m.xsss)),
     example=_ex_join_map_join)


def _split_split_side(m):
    n = _split_fn(m.g)
    if n is None:
        return "the function is not split n"
    return None if divides(n, m.q) else f"{n} does not divide {m.q}"


def _ex_split_split(rng):
    n = int(rng.choice([1, 2, 3]))
    k = int(rng.choice([1, 2, 3]))
    q = n * k
    total = inst.size(rng, q, 1, 4)
    g = fl.split(n) if rng.random() < 0.5 else fl.lam(lambda r: fl.split(n, r))
    prog, inputs = one_input(rng, (inst.length(rng, total, q),), (total,), lambda xs: fl.map(g, fl.split(q, xs)))
    return prog, inputs, {}


rule("split_split", "movement", "map (split n) (split q xs) -> split (q/n) (split n xs)   (n divides q)",
     lhs=P("map", V("g"), P("split", V("xs"), params=("q",))), side=_split_split_side,
     build=lambda m: fl.split(m.q / _split_fn(m.g), fl.split(_split_fn(m.g), m.xs)),
     example=_ex_split_split,
     doc="Both cut xs into blocks of q elements, each cut into rows of n (row-major order).")


def _ex_split_split_inv(rng):
    n, k = int(rng.choice([1, 2, 3])), int(rng.choice([1, 2, 3]))
    total = inst.size(rng, n * k, 1, 4)
    prog, inputs = one_input(rng, (inst.length(rng, total, n * k),), (total,), lambda xs: fl.split(k, fl.split(n, xs)))
    return prog, inputs, {}


rule("split_split_inv", "movement", "split k (split n xs) -> map (split n) (split (k*n) xs)",
     lhs=P("split", P("split", V("xs"), params=("n",)), params=("k",)),
     build=lambda m: fl.map(fl.split(m.n), fl.split(m.k * m.n, m.xs)),
     example=_ex_split_split_inv)

# ---------------------------------------------------------------------- transpose


def _ex_transpose_map(rng):
    f, shape, monoid = element_fn(rng)
    m, n = inst.size(rng), inst.size(rng)
    prog, inputs = one_input(rng, (inst.length(rng, m), n), (m, n),
                             lambda xss: fl.transpose(fl.map(row_map(rng, f), xss)), shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("transpose_map", "movement", "transpose (map (map f) xss) -> map (map f) (transpose xss)",
     lhs=P("transpose", P("map", V("g"), V("xss"))), side=elementwise("g"),
     build=lambda m: fl.map(fl.map(map_fn(m.g)), fl.transpose(m.xss)),
     example=_ex_transpose_map)


def _ex_map_transpose(rng):
    f, shape, monoid = element_fn(rng)
    m, n = inst.size(rng), inst.size(rng)
    prog, inputs = one_input(rng, (inst.length(rng, m), n), (m, n),
                             lambda xss: fl.map(row_map(rng, f), fl.transpose(xss)), shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("map_transpose", "movement", "map (map f) (transpose xss) -> transpose (map (map f) xss)",
     lhs=P("map", V("g"), P("transpose", V("xss"))), side=elementwise("g"),
     build=lambda m: fl.transpose(fl.map(fl.map(map_fn(m.g)), m.xss)),
     example=_ex_map_transpose,
     doc="Only for `map f` rows: a general row function of the transposed array sees columns.")


def _ex_join_transpose_split(rng):
    _, shape, monoid = element_fn(rng)
    n = int(rng.choice([1, 2, 3, 4]))
    total = inst.size(rng, n)
    prog, inputs = one_input(rng, (inst.length(rng, total, n),), (total,),
                             lambda xs: fl.join(fl.transpose(fl.split(n, xs))), shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("join_transpose_split", "movement", "join (transpose (split n xs)) -> reorder_stride n xs",
     lhs=P("join", P("transpose", P("split", V("xs"), params=("n",)))),
     build=lambda m: fl.reorder_stride(m.n, m.xs),
     example=_ex_join_transpose_split,
     doc="With m = len/n, position j*m + k of the left side is (split n xs)[k][j] = xs[k*n + j]; "
         "reorder_stride n reads xs[i / m + n * (i % m)] = xs[j + n*k].")


def _ex_reorder_stride_split(rng):
    _, shape, monoid = element_fn(rng)
    s = int(rng.choice([1, 2, 3, 4]))
    total = inst.size(rng, s)
    prog, inputs = one_input(rng, (inst.length(rng, total, s),), (total,), lambda xs: fl.reorder_stride(s, xs),
                             shape=shape, monoid=monoid)
    return prog, inputs, {}


rule("reorder_stride_split", "movement", "reorder_stride s xs -> join (transpose (split s xs))",
     lhs=P("reorder_stride", V("xs"), params=("s",)),
     build=lambda m: fl.join(fl.transpose(fl.split(m.s, m.xs))),
     example=_ex_reorder_stride_split)


def _transpose_split_side(m):
    rows = length(m.xs) / m.n
    return None if divides(rows, length(m.xs)) else f"cannot show that {rows} divides {length(m.xs)}"


def _ex_transpose_split(rng):
    f, shape, monoid = element_fn(rng)
    n = int(rng.choice([1, 2, 3, 4]))
    total = inst.size(rng, n)
    prog, inputs = one_input(rng, (inst.length(rng, total, n),), (total,),
                             lambda xs: fl.map(row_map(rng, f), fl.transpose(fl.split(n, xs))), shape=shape,
                             monoid=monoid)
    return prog, inputs, {}


rule("transpose_split", "movement", "transpose (split n xs) -> split (L/n) (reorder_stride n xs)   (L = length xs)",
     lhs=P("transpose", P("split", V("xs"), params=("n",))), side=_transpose_split_side,
     build=lambda m: fl.split(length(m.xs) / m.n, fl.reorder_stride(m.n, m.xs)),
     example=_ex_transpose_split,
     doc="Row j of the left side is [xs[j], xs[j + n], ...] (every n-th element from j): "
         "join_transpose_split cut into rows of L/n.")


def _ex_transpose_map_split(rng):
    n, k, rows = int(rng.choice([1, 2, 3])), inst.size(rng, 1, 1, 3), inst.size(rng)
    g = fl.split(n) if rng.random() < 0.5 else fl.lam(lambda r: fl.split(n, r))
    prog, inputs = one_input(rng, (inst.length(rng, rows), n * k), (rows, n * k), lambda x: fl.transpose(fl.map(g, x)))
    return prog, inputs, {}


rule("transpose_map_split", "movement",
     "transpose (map (split n) xss) -> map transpose (split n (transpose xss))",
     lhs=P("transpose", P("map", V("g"), V("xss"))),
     side=lambda m: None if _split_fn(m.g) is not None else "the function is not split n",
     build=lambda m: fl.map(fl.transpose, fl.split(_split_fn(m.g), fl.transpose(m.xss))),
     example=_ex_transpose_map_split,
     doc="Both are [a][b][c] -> xss[b][a*n + c].")


def _ex_transpose_map_join(rng):
    a, b, c = inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4)
    g = fl.join if rng.random() < 0.5 else fl.lam(lambda r: fl.join(r))
    prog, inputs = one_input(rng, (inst.length(rng, a), b, c), (a, b, c), lambda x: fl.transpose(fl.map(g, x)))
    return prog, inputs, {}


rule("transpose_map_join", "movement",
     "transpose (map join xsss) -> join (map transpose (transpose xsss))",
     lhs=P("transpose", P("map", V("g"), V("xsss"))), side=_prim_fn_side("g", "join"),
     build=lambda m: fl.join(fl.map(fl.transpose, fl.transpose(m.xsss))),
     example=_ex_transpose_map_join,
     doc="Both are [a*n + c][b] -> xsss[b][a][c] (n the innermost length).")

# ------------------------------------------------------ gather / scatter / reorder

# Index functions (i, n) -> position, for gather (any function into [0, n)) and scatter
# (permutations only).
PERMUTATIONS = [
    lambda i, n: n - 1 - i,  # reversal
    lambda i, n: (i + 1) % n,  # rotation
    lambda i, n: (i + 2) % n,
    lambda i, n: i,
]
INDEX_FUNS = PERMUTATIONS + [
    lambda i, n: i // 2,  # duplicates: every element read twice
    lambda i, n: 0 * i,  # broadcast of the first element
]


def _ex_with_index(pool, build):
    def ex(rng):
        f, shape, monoid = element_fn(rng)
        idx = inst.pick(rng, pool)
        total = inst.size(rng, 1, 1, 8)
        prog, inputs = one_input(rng, (inst.length(rng, total),), (total,), lambda xs: build(rng, f, idx, xs),
                                 shape=shape, monoid=monoid)
        return prog, inputs, {}

    return ex


rule("map_gather", "movement", "map f (gather idx xs) -> gather idx (map f xs)",
     lhs=P("map", V("f"), P("gather", V("xs"), params=("idx",))),
     build=lambda m: fl.gather(m.idx, fl.map(m.f, m.xs)),
     example=_ex_with_index(INDEX_FUNS, lambda rng, f, idx, xs: fl.map(f, fl.gather(idx, xs))),
     doc="Element i is f xs[idx(i, n)] on both sides; idx need not be a permutation.")

rule("gather_map", "movement", "gather idx (map f xs) -> map f (gather idx xs)",
     lhs=P("gather", P("map", V("f"), V("xs")), params=("idx",)),
     build=lambda m: fl.map(m.f, fl.gather(m.idx, m.xs)),
     example=_ex_with_index(INDEX_FUNS, lambda rng, f, idx, xs: fl.gather(idx, fl.map(f, xs))))

rule("map_scatter", "movement", "map f (scatter idx xs) -> scatter idx (map f xs)",
     lhs=P("map", V("f"), P("scatter", V("xs"), params=("idx",))),
     build=lambda m: fl.scatter(m.idx, fl.map(m.f, m.xs)),
     example=_ex_with_index(PERMUTATIONS, lambda rng, f, idx, xs: fl.map(f, fl.scatter(idx, xs))))

rule("scatter_map", "movement", "scatter idx (map f xs) -> map f (scatter idx xs)",
     lhs=P("scatter", P("map", V("f"), V("xs")), params=("idx",)),
     build=lambda m: fl.map(m.f, fl.scatter(m.idx, m.xs)),
     example=_ex_with_index(PERMUTATIONS, lambda rng, f, idx, xs: fl.scatter(idx, fl.map(f, xs))))


def _ex_reorder(build):
    def ex(rng):
        f, shape, monoid = element_fn(rng)
        s = int(rng.choice([1, 2, 3, 4]))
        total = inst.size(rng, s, 1, 4)
        prog, inputs = one_input(rng, (inst.length(rng, total, s),), (total,), lambda xs: build(f, s, xs),
                                 shape=shape, monoid=monoid)
        return prog, inputs, {}

    return ex


rule("map_reorder_stride", "movement", "map f (reorder_stride s xs) -> reorder_stride s (map f xs)",
     lhs=P("map", V("f"), P("reorder_stride", V("xs"), params=("s",))),
     build=lambda m: fl.reorder_stride(m.s, fl.map(m.f, m.xs)),
     example=_ex_reorder(lambda f, s, xs: fl.map(f, fl.reorder_stride(s, xs))))

rule("reorder_stride_map", "movement", "reorder_stride s (map f xs) -> map f (reorder_stride s xs)",
     lhs=P("reorder_stride", P("map", V("f"), V("xs")), params=("s",)),
     build=lambda m: fl.map(m.f, fl.reorder_stride(m.s, m.xs)),
     example=_ex_reorder(lambda f, s, xs: fl.reorder_stride(s, fl.map(f, xs))))


def _reorder_trivial_side(m):
    if m.s == Nat.const(1) or m.s == length(m.xs):
        return None
    return f"the stride {m.s} is neither 1 nor the length {length(m.xs)}"


def _ex_reorder_trivial(rng):
    total = inst.size(rng, 1, 1, 8)
    whole = rng.random() < 0.5
    n = inst.length(rng, total) if not whole else total
    s = total if whole else 1
    prog, inputs = one_input(rng, (n,), (total,), lambda xs: fl.reorder_stride(s, xs))
    return prog, inputs, {}


rule("reorder_stride_trivial", "cancellation", "reorder_stride s xs -> xs   (s = 1 or s = length xs)",
     lhs=P("reorder_stride", V("xs"), params=("s",)), side=_reorder_trivial_side,
     build=lambda m: m.xs, example=_ex_reorder_trivial,
     doc="With n = length: s = 1 reads xs[i/n + (i % n)] = xs[i]; s = n reads xs[i/1 + n*(i % 1)] = xs[i].")

# ----------------------------------------------------------- take / drop / concat


def _ex_slice(kind: str, before: bool):
    def ex(rng):
        f, shape, monoid = element_fn(rng)
        total = inst.size(rng, 1, 2, 8)  # sizes are positive: take and drop leave an element
        n = int(rng.integers(1, total)) if kind == "take" else int(rng.integers(0, total))
        cut = fl.take if kind == "take" else fl.drop

        def body(xs):
            return fl.map(f, cut(n, xs)) if before else cut(n, fl.map(f, xs))

        prog, inputs = one_input(rng, (inst.length(rng, total),), (total,), body, shape=shape, monoid=monoid)
        return prog, inputs, {}

    return ex


for _cut in ("take", "drop"):
    rule(f"map_{_cut}", "movement", f"map f ({_cut} n xs) -> {_cut} n (map f xs)",
         lhs=P("map", V("f"), P(_cut, V("xs"), params=("n",))),
         build=lambda m, c=_cut: getattr(fl, c)(m.n, fl.map(m.f, m.xs)),
         example=_ex_slice(_cut, True))
    rule(f"{_cut}_map", "movement", f"{_cut} n (map f xs) -> map f ({_cut} n xs)   (f on fewer elements)",
         lhs=P(_cut, P("map", V("f"), V("xs")), params=("n",)),
         build=lambda m, c=_cut: fl.map(m.f, getattr(fl, c)(m.n, m.xs)),
         example=_ex_slice(_cut, False))


def _ex_two_vectors(rng, body, same=False):
    f, shape, monoid = element_fn(rng)
    a, b = inst.size(rng), inst.size(rng)
    if same:
        b = a
    na = inst.length(rng, a)
    prog = fl.fun([nested((na,) + shape), nested(((na if same else b),) + shape)], lambda xs, ys: body(f, xs, ys))
    return prog, (inst.data(rng, a, *shape, monoid=monoid), inst.data(rng, b, *shape, monoid=monoid)), {}


rule("map_concat", "movement", "map f (concat xs ys) -> concat (map f xs) (map f ys)",
     lhs=P("map", V("f"), P("concat", V("xs"), V("ys"))),
     build=lambda m: fl.concat(fl.map(m.f, m.xs), fl.map(m.f, m.ys)),
     example=lambda rng: _ex_two_vectors(rng, lambda f, xs, ys: fl.map(f, fl.concat(xs, ys))))

rule("concat_map", "movement", "concat (map f xs) (map f ys) -> map f (concat xs ys)",
     lhs=P("concat", P("map", V("f"), V("xs")), P("map", V("f"), V("ys"))),
     build=lambda m: fl.map(m.f, fl.concat(m.xs, m.ys)),
     example=lambda rng: _ex_two_vectors(rng, lambda f, xs, ys: fl.concat(fl.map(f, xs), fl.map(f, ys))))


def _ex_take_drop(rng):
    total = inst.size(rng, 1, 2, 8)
    n = int(rng.integers(1, total))
    prog, inputs = one_input(rng, (inst.length(rng, total),), (total,), lambda xs: fl.concat(fl.take(n, xs), fl.drop(n, xs)))
    return prog, inputs, {}


rule("concat_take_drop", "cancellation", "concat (take n xs) (drop n xs) -> xs",
     lhs=P("concat", P("take", V("xs"), params=("n",)), P("drop", V("xs"), params=("n",))),
     build=lambda m: m.xs, example=_ex_take_drop)


def _first_length_side(m):
    return None if m.n == length(m.xs) else f"{m.n} is not the length {length(m.xs)} of the first array"


rule("take_concat", "cancellation", "take n (concat xs ys) -> xs   (n = length xs)",
     lhs=P("take", P("concat", V("xs"), V("ys")), params=("n",)), side=_first_length_side,
     build=lambda m: m.xs,
     example=lambda rng: _ex_concat_cut(rng, fl.take))

rule("drop_concat", "cancellation", "drop n (concat xs ys) -> ys   (n = length xs)",
     lhs=P("drop", P("concat", V("xs"), V("ys")), params=("n",)), side=_first_length_side,
     build=lambda m: m.ys,
     example=lambda rng: _ex_concat_cut(rng, fl.drop))


def _ex_concat_cut(rng, cut):
    a, b = inst.size(rng), inst.size(rng)
    na = inst.length(rng, a)
    prog = fl.fun([array(na, f32), array(b, f32)], lambda xs, ys: cut(na, fl.concat(xs, ys)))
    return prog, (inst.data(rng, a), inst.data(rng, b)), {}


def _ex_cut_cut(outer, inner):
    """`outer b (inner a xs)` with a and b in range: sizes are positive, so take keeps at
    least one element and both leave at least one."""

    def ex(rng):
        total = inst.size(rng, 1, 3, 9)
        if inner is fl.take:  # take b (take a xs): 1 <= b < a < total
            a = int(rng.integers(2, total))
            b = int(rng.integers(1, a))
        elif outer is fl.drop:  # drop b (drop a xs): a + b < total
            a = int(rng.integers(0, total))
            b = int(rng.integers(0, total - a))
        else:  # take b (drop a xs): 1 <= b < total - a
            a = int(rng.integers(0, total - 1))
            b = int(rng.integers(1, total - a))
        prog, inputs = one_input(rng, (inst.length(rng, total),), (total,), lambda xs: outer(b, inner(a, xs)))
        return prog, inputs, {}

    return ex


rule("take_take", "movement", "take n (take k xs) -> take n xs",
     lhs=P("take", P("take", V("xs"), params=("k",)), params=("n",)),
     build=lambda m: fl.take(m.n, m.xs), example=_ex_cut_cut(fl.take, fl.take))

rule("drop_drop", "movement", "drop n (drop k xs) -> drop (n + k) xs",
     lhs=P("drop", P("drop", V("xs"), params=("k",)), params=("n",)),
     build=lambda m: fl.drop(m.n + m.k, m.xs), example=_ex_cut_cut(fl.drop, fl.drop))

rule("take_drop", "movement", "take n (drop k xs) -> drop k (take (n + k) xs)",
     lhs=P("take", P("drop", V("xs"), params=("k",)), params=("n",)),
     build=lambda m: fl.drop(m.k, fl.take(m.n + m.k, m.xs)), example=_ex_cut_cut(fl.take, fl.drop),
     doc="Both are xs[k : k+n].")

# ------------------------------------------------------------------------ identity


def _ex_map_id(rng):
    _, shape, _ = element_fn(rng)
    total = inst.size(rng)
    prog, inputs = one_input(rng, (inst.length(rng, total),), (total,), lambda xs: fl.map(lambda x: x, xs), shape=shape)
    return prog, inputs, {}


rule("map_id", "cancellation", "map (fun(x) => x) xs -> xs",
     lhs=P("map", V("g"), V("xs")), side=lambda m: None if is_identity(m.g) else "the function is not the identity",
     build=lambda m: m.xs, example=_ex_map_id)

# -------------------------------------------------------------------------- tuples


def _ex_pair(proj):
    def ex(rng):
        n = inst.size(rng)
        prog = fl.fun([array(inst.length(rng, n), f32)],
                      lambda xs: fl.map(lambda x: proj(fl.pair(x * 2.0, fl.neg(x))), xs))
        return prog, (inst.data(rng, n),), {}

    return ex


rule("fst_pair", "tuples", "fst (pair a b) -> a", lhs=P("fst", P("pair", V("a"), V("b"))),
     build=lambda m: m.a, example=_ex_pair(fl.fst))
rule("snd_pair", "tuples", "snd (pair a b) -> b", lhs=P("snd", P("pair", V("a"), V("b"))),
     build=lambda m: m.b, example=_ex_pair(fl.snd))


def _ex_zip_inputs(rng, body):
    """Two arrays of one length with elements of (possibly) different shapes."""
    _, s1, _ = element_fn(rng)
    f, s2, monoid = element_fn(rng)
    n = inst.size(rng)
    nn = inst.length(rng, n)
    prog = fl.fun([nested((nn,) + s1), nested((nn,) + s2)], lambda xs, ys: body(rng, f, xs, ys))
    return prog, (inst.data(rng, n, *s1), inst.data(rng, n, *s2, monoid=monoid)), {}


def _proj_fn(rng, proj):
    return proj if rng.random() < 0.5 else fl.lam(lambda p: proj(p))


rule("map_fst_zip", "tuples", "map fst (zip xs ys) -> xs",
     lhs=P("map", V("g"), P("zip", V("xs"), V("ys"))), side=_prim_fn_side("g", "fst"),
     build=lambda m: m.xs,
     example=lambda rng: _ex_zip_inputs(rng, lambda r, f, xs, ys: fl.map(_proj_fn(r, fl.fst), fl.zip(xs, ys))))

rule("map_snd_zip", "tuples", "map snd (zip xs ys) -> ys",
     lhs=P("map", V("g"), P("zip", V("xs"), V("ys"))), side=_prim_fn_side("g", "snd"),
     build=lambda m: m.ys,
     example=lambda rng: _ex_zip_inputs(rng, lambda r, f, xs, ys: fl.map(_proj_fn(r, fl.snd), fl.zip(xs, ys))))

rule("unzip_zip", "tuples", "unzip (zip xs ys) -> pair xs ys",
     lhs=P("unzip", P("zip", V("xs"), V("ys"))),
     build=lambda m: fl.pair(m.xs, m.ys),
     example=lambda rng: _ex_zip_inputs(rng, lambda r, f, xs, ys: fl.unzip(fl.zip(xs, ys))))


def _ex_pairs(body):
    """A computed array of pairs ps = map (fun(x) => pair x (f x)) xs."""

    def ex(rng):
        f = inst.pick(rng, inst.UNARY)
        n = inst.size(rng)
        prog = fl.fun([array(inst.length(rng, n), f32)], lambda xs: body(fl.map(lambda x: fl.pair(x, f(x)), xs)))
        return prog, (inst.data(rng, n),), {}

    return ex


rule("zip_unzip", "tuples", "zip (fst (unzip ps)) (snd (unzip ps)) -> ps",
     lhs=P("zip", P("fst", P("unzip", V("ps"))), P("snd", P("unzip", V("ps")))),
     build=lambda m: m.ps,
     example=_ex_pairs(lambda ps: fl.zip(fl.fst(fl.unzip(ps)), fl.snd(fl.unzip(ps)))))

rule("fst_unzip", "tuples", "fst (unzip ps) -> map fst ps",
     lhs=P("fst", P("unzip", V("ps"))), build=lambda m: fl.map(fl.fst, m.ps),
     example=_ex_pairs(lambda ps: fl.fst(fl.unzip(ps))))

rule("snd_unzip", "tuples", "snd (unzip ps) -> map snd ps",
     lhs=P("snd", P("unzip", V("ps"))), build=lambda m: fl.map(fl.snd, m.ps),
     example=_ex_pairs(lambda ps: fl.snd(fl.unzip(ps))))


def _only_projection(lam: Expr, proj: str) -> Lambda | None:
    """`fun(x) => b[proj p := x]` for `lam = fun(p) => b` when p occurs in b only as `proj p`."""
    if not isinstance(lam, Lambda):
        return None
    p = lam.param.name
    x = Identifier(fresh_name("x", free_identifiers(lam.body) | bound_names(lam.body) | {p}))

    def go(e: Expr) -> Expr:
        if (isinstance(e, App) and isinstance(e.fun, Prim) and e.fun.name == proj and isinstance(e.arg, Identifier)
                and e.arg.name == p):
            return x
        if isinstance(e, Lambda):
            return e if e.param.name == p else Lambda(e.param, go(e.body))
        if isinstance(e, App):
            return App(go(e.fun), go(e.arg))
        return e  # NatLambda / NatApp do not occur inside scalar functions

    body = go(lam.body)
    if p in free_identifiers(body):
        return None
    return Lambda(x, body)


def _ex_map_zip_only(proj):
    def ex(rng):
        def body(r, f, xs, ys):
            g = inst.pick(r, inst.UNARY)
            if proj is fl.fst:
                return fl.map(lambda p: g(fl.fst(p)) * fl.fst(p), fl.zip(ys, xs))
            return fl.map(lambda p: g(fl.snd(p)) + fl.snd(p), fl.zip(xs, ys))

        # the projected side holds scalars; the other side anything
        _, s1, _ = element_fn(rng)
        n = inst.size(rng)
        nn = inst.length(rng, n)
        prog = fl.fun([nested((nn,) + s1), array(nn, f32)], lambda xs, ys: body(rng, None, xs, ys))
        return prog, (inst.data(rng, n, *s1), inst.data(rng, n)), {}

    return ex


rule("map_zip_fst", "tuples", "map (fun(p) => b) (zip xs ys) -> map (fun(x) => b[fst p := x]) xs   (b reads only fst p)",
     lhs=P("map", V("g"), P("zip", V("xs"), V("ys"))),
     side=lambda m: None if _only_projection(m.g, "fst") is not None else "the function does not read only fst p",
     build=lambda m: fl.map(_only_projection(m.g, "fst"), m.xs),
     example=_ex_map_zip_only(fl.fst))

rule("map_zip_snd", "tuples", "map (fun(p) => b) (zip xs ys) -> map (fun(y) => b[snd p := y]) ys   (b reads only snd p)",
     lhs=P("map", V("g"), P("zip", V("xs"), V("ys"))),
     side=lambda m: None if _only_projection(m.g, "snd") is not None else "the function does not read only snd p",
     build=lambda m: fl.map(_only_projection(m.g, "snd"), m.ys),
     example=_ex_map_zip_only(fl.snd))


def _ex_zip_map(rng):
    f, s1, m1 = element_fn(rng)
    g, s2, m2 = element_fn(rng)
    n = inst.size(rng)
    nn = inst.length(rng, n)
    prog = fl.fun([nested((nn,) + s1), nested((nn,) + s2)], lambda xs, ys: fl.zip(fl.map(f, xs), fl.map(g, ys)))
    return prog, (inst.data(rng, n, *s1, monoid=m1), inst.data(rng, n, *s2, monoid=m2)), {}


rule("zip_map", "tuples", "zip (map f xs) (map g ys) -> map (fun(p) => pair (f (fst p)) (g (snd p))) (zip xs ys)",
     lhs=P("zip", P("map", V("f"), V("xs")), P("map", V("g"), V("ys"))),
     build=lambda m: fl.map(lambda p: fl.pair(beta(m.f, fl.fst(p)), beta(m.g, fl.snd(p))), fl.zip(m.xs, m.ys)),
     example=_ex_zip_map,
     doc="One loop over both arrays (map fusion across a zip).")


__all__ = [
    "INDEX_FUNS",
    "PERMUTATIONS",
    "element_fn",
    "is_identity",
    "is_prim_fn",
    "map_fn",
    "nested",
    "one_input",
    "prim_fn_params",
    "row_map",
]


def _ex_cut_zip(cut):
    def ex(rng):
        n = inst.size(rng, 1, 2, 8)
        k = int(rng.integers(1, n))
        prog = fl.fun([array(n, f32), array(n, f32)], lambda xs, ys: fl.map(
            lambda p: fl.fst(p) * fl.snd(p), cut(k, fl.zip(xs, ys))))
        return prog, (inst.data(rng, n), inst.data(rng, n)), {}

    return ex


for _cut in ("take", "drop"):
    rule(f"{_cut}_zip", "movement", f"{_cut} n (zip xs ys) -> zip ({_cut} n xs) ({_cut} n ys)",
         lhs=P(_cut, P("zip", V("xs"), V("ys")), params=("n",)),
         build=lambda m, c=_cut: fl.zip(getattr(fl, c)(m.n, m.xs), getattr(fl, c)(m.n, m.ys)),
         example=_ex_cut_zip(getattr(fl, _cut)))
