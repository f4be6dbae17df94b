"""Macro rules: Lift's tiling, register blocking and parallel reduction, as compositions.

A macro rule is a *named strategy* built from registered rules, so a derivation records
the primitive steps and replays them one by one.  The seed lists register blocking as

    map f -> join . map (map f) . split k                          (split_join)
    map (fun a => map (fun b => f a b)) -> transpose . map (fun b => map (fun a => f a b))
                                                                   (map_map_swap, new here)
    map (f . g) -> map f . map g                                   (map_fission)
    map (reduce f z) -> transpose . reduce (fun acc x => map f (zip acc x))
                                                                   (map_reduce_interchange)
    map (map f) -> transpose . map (map f) . transpose             (map_map_interchange)
    transpose . transpose -> id                                    (transpose_transpose)
    reduce_seq f z . map_seq g -> reduce_seq (fun acc x => f acc (g x))
                                                                   (reduce_seq_map_fusion)
    map f . map g -> map (f . g)                                   (map_fusion)

and the strategies below use exactly these, plus two pieces of glue that the slide leaves
implicit: `transpose_map_zip` (a transposed array of zips is a zip with a transposed
side) and the tuple projections `fst (pair a b) -> a`, `snd (pair a b) -> b`.

Single-step rules added here (each with a random-instance `example`):

    map_map_swap                   map (fun a => map g ys) xs -> transpose (map (fun b => map (fun a => g b) xs) ys)
    transpose_map_zip              transpose (map (fun v => zip X Y) ys) -> zip with the v-side transposed
    split_zip                      split n (zip xs ys) -> map (fun p => zip (fst p) (snd p)) (zip (split n xs) (split n ys))
    reorder_stride_zip             reorder_stride s (zip xs ys) -> zip (reorder_stride s xs) (reorder_stride s ys)
    map_join_transpose             map join (transpose xsss) -> transpose (join (map transpose xsss))
    partial_reduce_iterate_stride  map (reduce f z) (split n xs) -> iterate k (... split 2 (reorder_stride l ys))
    copy_element                   map (fun(x) => e) xs -> map (fun(x) => let (copy x) (fun(x) => e)) xs

Macro strategies (apply at the node named in each docstring):

    tile_2d(n, m)                  2D tiling of map (fun a => map (fun b => e) ys) xs (untile = join . map (map join . transpose))
    split_reduction(k)             reduce f z (map g (zip a b)) -> a reduction of reductions of k-chunks
    lift_reduce()                  map (fun v => reduce f z (map P (zip X Y))) ys -> reduce with an array accumulator
    tile_reduction(k)              the seed's tiling of a reduction: reduce over pairs of k-wide tiles
    register_blocking_1d(l)        the seed's macro-rule slide, literally
    register_blocking_2d(l1, l2)   tile_2d(l1, l2) then both reductions lifted: an outer-product update
    untile_views(), tile_views()   the layout maps of a tiling (map join, map (split k)) as whole-array views
    parallel_reduction(block, local)   the seed's vecSum derivation on reduce f z xs
    tree_reduction(length, local)      one block of it: a whole reduction by `local` items and a tree
"""

from __future__ import annotations

from .. import dsl as fl
from ..expr import (App, Expr, Identifier, Lambda, NatLambda, Prim, applied, bound_names, free_identifiers, spine,
                    substitute)
from ..nat import Nat, Var, power
from ..primitives import MAPS, REDUCTIONS
from ..strategies import (Failure, Strategy, Success, argument, fmap, function, lchoice, normalize, seq, some,
                          top_down, try_)
from ..types import ArrayType, TupleType, array, f32, holds_array
from . import instances as inst
from . import movement  # noqa: F401 -- registers split_map, fst_pair, snd_pair used below
from .core import RULES, NotApplicable, P, V, beta, length, rule

# ----------------------------------------------------------------------------- helpers


def _lambda_body_spine(f: Expr, head_name: str, nargs: int):
    """For `fun(v) => head a1 .. an` return (v, [a1..an]); else None."""
    if not isinstance(f, Lambda):
        return None
    head, args = spine(f.body)
    if isinstance(head, Prim) and head.name == head_name and len(args) == nargs:
        return f.param, args
    return None


def _copy(e: Expr, t) -> Expr:
    """An expression that copies a value of data type t element by element."""
    if isinstance(t, ArrayType):
        return fl.map(lambda r: _copy(r, t.elem), e)
    if isinstance(t, TupleType) and len(t.elems) == 2:
        return fl.pair(_copy(fl.fst(e), t.elems[0]), _copy(fl.snd(e), t.elems[1]))
    return e


# ------------------------------------------------------------------------ interchange


def _swap_side(m):
    parts = _lambda_body_spine(m.f, "map", 2)
    if parts is None:
        return "the function is not fun(a) => map g ys"
    a, (_, ys) = parts
    if a.name in free_identifiers(ys):
        return "the inner array depends on the outer element"
    return None


def _swap_build(m):
    a, (g, ys) = _lambda_body_spine(m.f, "map", 2)
    return fl.transpose(fl.map(lambda y: fl.map(lambda x: beta(substitute(g, a.name, x), y), m.xs), ys))


def _ex_swap(rng):
    n, k = inst.size(rng), inst.size(rng)
    if rng.random() < 0.5:
        f = inst.pick(rng, inst.UNARY)
        prog = fl.fun([array(inst.length(rng, n), f32), array(k, f32)],
                      lambda xs, ys: fl.map(lambda a: fl.map(lambda b: f(a) * b + a, ys), xs))
        return prog, (inst.data(rng, n), inst.data(rng, k)), {}
    w = inst.size(rng, 1, 1, 3)  # rows against rows: the shape of matrix multiplication
    prog = fl.fun([array(inst.length(rng, n), array(w, f32)), array(k, array(w, f32))],
                  lambda xs, ys: fl.map(lambda a: fl.map(lambda b: fl.reduce(
                      fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(a, b))), ys), xs))
    return prog, (inst.data(rng, n, w), inst.data(rng, k, w)), {}


rule("map_map_swap", "interchange",
     "map (fun(a) => map g ys) xs -> transpose (map (fun(b) => map (fun(a) => g b) xs) ys)   (ys independent of a)",
     lhs=P("map", V("f"), V("xs")), side=_swap_side, build=_swap_build, example=_ex_swap,
     doc="The seed's `map (λa. map (λb. f a b)) -> transpose . map (λb. map (λa. f a b))`: element [i][j] is "
         "g ys[j] with a = xs[i] on both sides.")


def _zip_side(m):
    parts = _lambda_body_spine(m.f, "zip", 2)
    if parts is None:
        return "the function is not fun(v) => zip X Y"
    v, (x, y) = parts
    in_x, in_y = v.name in free_identifiers(x), v.name in free_identifiers(y)
    if in_x == in_y:
        return "exactly one side of the zip must depend on the element"
    return None


def _zip_build(m):
    v, (x, y) = _lambda_body_spine(m.f, "zip", 2)
    varying_x = v.name in free_identifiers(x)
    side = x if varying_x else y
    if isinstance(side, Identifier) and side.name == v.name:
        cols = fl.transpose(m.ys)  # map (fun(v) => v) ys is ys
    else:
        cols = fl.transpose(fl.map(Lambda(v, side), m.ys))
    if varying_x:
        return fl.map(lambda q: fl.map(lambda e: fl.pair(e, fl.snd(q)), fl.fst(q)), fl.zip(cols, y))
    return fl.map(lambda q: fl.map(lambda e: fl.pair(fl.fst(q), e), fl.snd(q)), fl.zip(x, cols))


def _ex_transpose_zip(rng):
    n, k = inst.size(rng), inst.size(rng)
    use = lambda p: fl.fst(p) * 2.0 + fl.snd(p)
    if rng.random() < 0.5:  # the varying side first
        prog = fl.fun([array(inst.length(rng, n), array(k, f32)), array(k, f32)],
                      lambda xs, c: fl.map(fl.map(use), fl.transpose(fl.map(lambda v: fl.zip(v, c), xs))))
        return prog, (inst.data(rng, n, k), inst.data(rng, k)), {}
    w = int(rng.choice([1, 2]))  # the varying side second, and a view of the element
    prog = fl.fun([array(inst.length(rng, n), array(k * w, f32)), array(k, f32)],
                  lambda xs, c: fl.map(fl.map(lambda p: fl.fst(p) * fl.reduce(fl.add, 0.0, fl.snd(p))),
                                       fl.transpose(fl.map(lambda v: fl.zip(c, fl.split(w, v)), xs))))
    return prog, (inst.data(rng, n, k * w), inst.data(rng, k)), {}


rule("transpose_map_zip", "interchange",
     "transpose (map (fun(v) => zip X Y[v]) ys) -> map (fun(q) => map (fun(y) => pair (fst q) y) (snd q)) "
     "(zip X (transpose (map (fun(v) => Y[v]) ys)))   (and symmetrically for X[v])",
     lhs=P("transpose", P("map", V("f"), V("ys"))), side=_zip_side, build=_zip_build, example=_ex_transpose_zip,
     doc="Element [l][j] is (X[l], Y[ys[j]][l]) on both sides.  The glue between map_map_interchange and "
         "map_fusion when register blocking or tiling a dot product.")

# --------------------------------------------------------------------------- movement


def _ex_split_zip(rng):
    n = int(rng.choice([1, 2, 3, 4]))
    total = inst.size(rng, n)
    nn = inst.length(rng, total, n)
    prog = fl.fun([array(nn, f32), array(nn, f32)],
                  lambda xs, ys: fl.map(fl.map(lambda p: fl.fst(p) - fl.snd(p) * 3.0), fl.split(n, fl.zip(xs, ys))))
    return prog, (inst.data(rng, total), inst.data(rng, total)), {}


rule("split_zip", "movement",
     "split n (zip xs ys) -> map (fun(p) => zip (fst p) (snd p)) (zip (split n xs) (split n ys))",
     lhs=P("split", P("zip", V("xs"), V("ys")), params=("n",)),
     build=lambda m: fl.map(lambda p: fl.zip(fl.fst(p), fl.snd(p)), fl.zip(fl.split(m.n, m.xs), fl.split(m.n, m.ys))),
     example=_ex_split_zip,
     doc="Chunk i of the zip pairs chunk i of both arrays.")

def _ex_reorder_zip(rng):
    s = int(rng.choice([1, 2, 3, 4]))
    total = inst.size(rng, s)
    nn = inst.length(rng, total, s)
    prog = fl.fun([array(nn, f32), array(nn, f32)],
                  lambda xs, ys: fl.map(lambda p: fl.fst(p) * 2.0 - fl.snd(p), fl.reorder_stride(s, fl.zip(xs, ys))))
    return prog, (inst.data(rng, total), inst.data(rng, total)), {}


rule("reorder_stride_zip", "movement",
     "reorder_stride s (zip xs ys) -> zip (reorder_stride s xs) (reorder_stride s ys)",
     lhs=P("reorder_stride", P("zip", V("xs"), V("ys")), params=("s",)),
     build=lambda m: fl.zip(fl.reorder_stride(m.s, m.xs), fl.reorder_stride(m.s, m.ys)),
     example=_ex_reorder_zip,
     doc="A permutation of the positions moves both components alike.")

def _is_join_fn(g: Expr) -> bool:
    if isinstance(g, Prim):
        return g.name == "join"
    return (isinstance(g, Lambda) and isinstance(g.body, App) and isinstance(g.body.fun, Prim)
            and g.body.fun.name == "join" and isinstance(g.body.arg, Identifier) and g.body.arg.name == g.param.name)


def _ex_map_join_transpose(rng):
    a, b, c = inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4)
    g = fl.join if rng.random() < 0.5 else fl.lam(lambda r: fl.join(r))
    prog = fl.fun([array(inst.length(rng, a), array(b, array(c, f32)))], lambda x: fl.map(g, fl.transpose(x)))
    return prog, (inst.data(rng, a, b, c),), {}


rule("map_join_transpose", "movement", "map join (transpose xsss) -> transpose (join (map transpose xsss))",
     lhs=P("map", V("g"), P("transpose", V("xsss"))),
     side=lambda m: None if _is_join_fn(m.g) else "the function is not join",
     build=lambda m: fl.transpose(fl.join(fl.map(fl.transpose, m.xsss))),
     example=_ex_map_join_transpose,
     doc="Both are [b][a*c' + k] -> xsss[a][b][k].  With map fusion it turns the untile of a tiling into "
         "whole-array views (join, transpose) around the tiles' map.")

# ------------------------------------------------------------------------- reductions


def _tree_side(m):
    from .algorithmic import monoid_side

    reason = monoid_side("associative", "commutative", "neutral")(m)
    if reason:
        return reason
    if holds_array(m.xs.t.elem):
        return "the tree's stages hold scalars, vectors or tuples of them, not arrays (fused reductions)"
    k = m.k.as_int() if isinstance(m.k, Nat) else m.k
    if k is None or k < 1:
        return "k must be a positive constant"
    if m.n != power(Nat.const(2), Nat.const(k)):
        return f"the chunk size {m.n} is not 2^{k}"
    if m.n != length(m.xs):
        return f"the chunk size {m.n} is not the whole length {length(m.xs)} (reordering needs one full reduction)"
    return None


def _tree_build(m):
    var = Var("l", 1)
    stage = fl.lam(lambda ys: fl.map(fl.reduce(m.f, m.z), fl.split(2, fl.reorder_stride(Nat.atom(var), ys))))
    return fl.iterate(m.k, NatLambda(var, stage), m.xs)


def _ex_tree(rng):
    k = int(rng.integers(1, 4))
    n = 2**k
    op, z = inst.pick(rng, inst.MONOIDS)
    if rng.random() < 0.5:
        prog = inst.vector_program(n, lambda xs: fl.map(fl.reduce(op, z), fl.split(n, xs)))
        return prog, (inst.data(rng, n, monoid=(op, z)),), {"k": k}
    total = n * inst.size(rng, 1, 1, 3)  # one tree per chunk of an outer split
    prog = inst.vector_program(inst.length(rng, total, n),
                               lambda xs: fl.map(lambda c: fl.map(fl.reduce(op, z), fl.split(n, c)), fl.split(n, xs)))
    return prog, (inst.data(rng, total, monoid=(op, z)),), {"k": k}


rule("partial_reduce_iterate_stride", "reduce",
     "map (reduce f z) (split n xs) -> iterate k (fun(l: nat, ys) => map (reduce f z) (split 2 (reorder_stride l ys))) xs"
     "   (n = 2^k = length xs: one full reduction; f associative and commutative, z neutral)",
     lhs=P("map", P("reduce", V("f"), V("z")), P("split", V("xs"), params=("n",))), params=("k",),
     side=_tree_side, build=_tree_build, exact=False, example=_ex_tree,
     doc="The seed's tree: each stage adds element j and element j + l (l = half the length), which "
         "`reorder_stride l` followed by `split 2` pairs up.  Valid because f is associative and commutative "
         "and the single chunk is the whole array (its result is the full reduction).")

# ---------------------------------------------------------------------------- memory


_ELEMENT_FUNS = (MAPS - {"map_vec"}) | REDUCTIONS


def _element_lambda(e: Expr):
    """The function of `map f xs` / `reduce f z xs` and its element function: `f` for maps,
    the inner `fun(x) => ...` of `f = fun(acc) => fun(x) => ...` for reductions."""
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name in _ELEMENT_FUNS and args):
        return None
    f = args[0]
    if head.name.startswith("reduce"):
        f = f.body if isinstance(f, Lambda) else None
    return f if isinstance(f, Lambda) and f.t is not None else None


def _copy_side(m):
    lam = _element_lambda(m.root)
    if lam is None:
        return "not a map or reduction whose function is a lambda"
    if not holds_array(lam.t.param):
        return "the element holds no array"
    return None


def _copy_build(m):
    lam = _element_lambda(m.root)
    if lam is None:
        raise NotApplicable("not a map or reduction of a lambda")
    x = Identifier(lam.param.name)
    new_lam = Lambda(lam.param, fl.let(_copy(x, lam.t.param), lambda y: substitute(lam.body, lam.param.name, y)))
    head, args = spine(m.root)
    f = args[0]
    f = Lambda(f.param, new_lam) if head.name.startswith("reduce") else new_lam
    out = head
    for k, a in enumerate(args):
        out = App(out, f if k == 0 else a)
    return out


def _ex_copy(rng):
    m, n = inst.size(rng), inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    kind = int(rng.integers(3))
    if kind == 0:
        prog = inst.matrix_program(inst.length(rng, m), n, lambda xss: fl.map(lambda r: fl.map(f, r), xss))
        return prog, (inst.data(rng, m, n),), {}
    nn = inst.length(rng, m)
    ins = (inst.data(rng, m, n), inst.data(rng, m, n))
    if kind == 1:  # elements that are pairs of arrays
        prog = fl.fun([array(nn, array(n, f32)), array(nn, array(n, f32))], lambda xss, yss: fl.map(
            lambda q: fl.map(lambda e: fl.fst(e) * f(fl.snd(e)), fl.zip(fl.fst(q), fl.snd(q))), fl.zip(xss, yss)))
        return prog, ins, {}
    # a sequential reduction over pairs of rows with an array accumulator (the tiles of mm)
    prog = fl.fun([array(nn, array(n, f32)), array(nn, array(n, f32))], lambda xss, yss: fl.reduce_seq(
        lambda acc, q: fl.map(lambda t: fl.fst(t) + fl.snd(t),
                              fl.zip(acc, fl.map(lambda e: fl.fst(e) * f(fl.snd(e)), fl.zip(fl.fst(q), fl.snd(q))))),
        fl.generate(n, lambda i: 0.0), fl.zip(xss, yss)))
    return prog, ins, {}


rule("copy_element", "memory",
     "map (fun(x) => e) xs -> map (fun(x) => let (copy x) (fun(x) => e)) xs   (also the element of a reduction's "
     "function; copy: map (fun(v) => v) per array level)",
     lhs=V("_node"), side=_copy_side, build=_copy_build, example=_ex_copy,
     doc="ELEVATE's store_in_memory for what a map or reduction consumes: each element is copied once (the "
         "copy's maps are then lowered, e.g. to map_local, and placed with to_local / to_private) and the body "
         "reads the copy.  The seed's `toLocal (copy2D tileA)`.")


# ------------------------------------------------------------------ panels stored transposed


def transposed_panel_site(f: Expr, path: tuple = ()) -> tuple | None:
    """The path (from `f`) of the first array of 2D arrays P in the body of the function `f` that
    mentions nothing bound in `f` (the same for every element: a program's input or a view of
    one) and is the data of a map whose function reads its element transposed: `map (fun(y) =>
    ... transpose y ...) P`.  mm's panels of B after register blocking: `split 32 (transpose b)`,
    each item reading its panel's rows K times 4 KB apart."""
    binders: set = set()
    body = f
    while isinstance(body, Lambda):
        binders.add(body.param.name)
        body, path = body.body, path + (0,)
    return _panel_in(body, frozenset(binders), path)


def _panel_in(e: Expr, binders: frozenset, path: tuple) -> tuple | None:
    head, args = spine(e)
    if isinstance(head, Prim) and head.name in MAPS and len(args) == 2 and _reads_transposed(args[0]):
        data = args[1]
        t = data.t
        if (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) and isinstance(t.elem.elem, ArrayType)
                and not (free_identifiers(data) & binders)):
            return path + (1,)
    if isinstance(e, Lambda):
        return _panel_in(e.body, binders | {e.param.name}, path + (0,))
    for k, c in enumerate(e.children()):
        found = _panel_in(c, binders, path + (k,))
        if found is not None:
            return found
    return None


def _reads_transposed(g: Expr) -> bool:
    """`fun(y) => B` with `transpose y` in B."""
    if not isinstance(g, Lambda):
        return False
    from ..expr import walk

    return any((arg := applied(x, "transpose", 1)) is not None and isinstance(arg[0], Identifier)
               and arg[0].name == g.param.name for x in walk(g.body))


def _panels_side(m):
    head, args = spine(m.root)
    if not (isinstance(head, Prim) and head.name in MAPS and len(args) == 2):
        return "not a map"
    return None if transposed_panel_site(args[0]) is not None else \
        "no array of 2D arrays the same for every element is read transposed in the function"


def _panels_build(m):
    from ..strategies import at_path, replace_at

    head, (f, xs) = spine(m.root)
    path = transposed_panel_site(f)
    if path is None:
        raise NotApplicable("no panel read transposed")
    panels = at_path(f, path)
    taken = free_identifiers(m.root) | bound_names(f)
    name = next(n for n in (f"panels{k}" for k in range(1, 10_000)) if n not in taken)
    t = panels.t  # [n][r][c]: stored as [n][c][r], copied by maps the lowering then places (a kernel of its own)
    transposed = ArrayType(t.size, ArrayType(t.elem.elem.size, ArrayType(t.elem.size, t.elem.elem.elem)))
    stored = fl.to_global(_copy(fl.map(fl.transpose, panels), transposed))
    ident = Identifier(name)
    return fl.let(stored, Lambda(ident, App(App(head, replace_at(f, path, fl.map(fl.transpose, ident))), xs)))


def _ex_panels(rng):
    m, k, c, q = inst.size(rng, 1, 1, 4), inst.size(rng, 1, 2, 5), int(rng.choice([1, 2, 4])), inst.size(rng, 1, 1, 3)
    prog = fl.fun([array(m, f32), array(k, array(c * q, f32))], lambda xs, b: fl.map(
        lambda x: fl.map(lambda y: fl.reduce(fl.add, x, fl.map(lambda v: v * x, fl.join(fl.transpose(y)))),
                         fl.split(c, fl.transpose(b))), xs))
    return prog, (inst.data(rng, m), inst.data(rng, k, c * q)), {}


rule("transposed_panels", "memory",
     "map f xs -> let (to_global (copy (map transpose P))) (fun(Q) => map f[P := map transpose Q] xs)   (P in f an array "
     "of 2D arrays mentioning nothing bound in f, read transposed: `map (fun(y) => ... transpose y ...) P`)",
     lhs=V("_node"), side=_panels_side, build=_panels_build, example=_ex_panels,
     doc="Packing, as BLAS libraries pack a matrix product's panels: the panels every element reads (mm's columns "
         "of B, split into blocks, read row by row by each work-item's k loop) are stored once, each transposed, "
         "so the reads are contiguous (on PoCL at 1024^3, 4 KB apart per k step before: 23 -> 11 ms).  Exact: "
         "transpose (transpose y) = y; to_global is the identity.")


# ============================================================================ strategies


def r(name: str, **params) -> Strategy:
    """The registered rule `name` as a strategy."""
    return RULES[name].strategy(**params)


def guard(label: str, test) -> Strategy:
    """Succeeds without a step where `test(e)` holds (records nothing in a derivation)."""
    return Strategy(label, lambda e: Success(e) if test(e) else Failure(f"{label}: does not hold"))


def named(name: str, s: Strategy) -> Strategy:
    return Strategy(name, s)


def outermost(s: Strategy) -> Strategy:
    """`s` at every outermost place where it applies (not below a place where it did);
    fails where it applies nowhere.  `outermost s = s | some(outermost s)`."""

    def run(e: Expr):
        return lchoice(s, some(self))(e)

    self = Strategy(f"outermost({s})", run)
    return self


def reduce_fn(s: Strategy) -> Strategy:
    """`s` on the function of `reduce f z xs` (any reduction)."""
    return function(function(argument(s)))


def let_value(s: Strategy) -> Strategy:
    """`s` on the value of `let v f`."""
    return function(argument(s))


def pair_parts(s: Strategy) -> Strategy:
    """`s` on both components of `pair a b`."""
    return function(argument(s)) >> argument(s)


def beta_proj_normal_form() -> Strategy:
    """Beta-reduce and cancel projections of explicit pairs everywhere below."""
    return named("beta_proj_normal_form",
                 normalize(r("beta") | r("fst_pair") | r("snd_pair")))


# --------------------------------------------------------------------- 2D tiling


def _is_nested_map(e: Expr) -> bool:
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "map" and len(args) == 2):
        return False
    parts = _lambda_body_spine(args[0], "map", 2)
    return parts is not None and parts[0].name not in free_identifiers(parts[1][1])


def tile_2d(n, m) -> Strategy:
    """At `map (fun(a) => map (fun(b) => e) ys) xs` (ys independent of a):

        join (map (fun(rows) => map join (transpose (map (fun(cols) => map (fun(a) => map (fun(b) => e) cols) rows)
                                                          (split m ys))))
                  (split n xs))

    i.e. `untile . map (fun rowOfTiles => map (fun colOfTiles => tile) ...) . split n`, with
    untile = join . map (map join . transpose).  Steps: split_join n; eta_expand_map;
    split_join m inside; map_fission (the join out of the row function); map_map_swap."""
    return named(f"tile_2d({n}, {m})", seq(
        guard("map (fun(a) => map (fun(b) => e) ys) xs", _is_nested_map),
        r("split_join", n=n),
        argument(r("eta_expand_map")),
        argument(fmap(fmap(r("split_join", n=m)))),
        argument(fmap(r("map_fission"))),
        argument(fmap(argument(r("map_map_swap")))),
    ))


# ---------------------------------------------------------------- reductions


def _is_reduce_of_zip_map(e: Expr) -> bool:
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "reduce" and len(args) == 3):
        return False
    return (applied(args[2], "map", 2) is not None) and (applied(spine(args[2])[1][1], "zip", 2) is not None)


def split_reduction(k) -> Strategy:
    """At `reduce f z (map g (zip xs ys))`:
    `reduce f z (map (fun(p) => reduce f z (map g (zip (fst p) (snd p)))) (zip (split k xs) (split k ys)))`.
    Steps: reduce_split k; split_map; split_zip; map_fusion twice."""
    return named(f"split_reduction({k})", seq(
        guard("reduce f z (map g (zip xs ys))", _is_reduce_of_zip_map),
        r("reduce_split", n=k),
        argument(argument(r("split_map"))),
        argument(argument(argument(r("split_zip")))),
        argument(r("map_fusion")),
        argument(r("map_fusion")),
    ))


def _is_map_of_reduce_of_zip(e: Expr) -> bool:
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "map" and len(args) == 2 and isinstance(args[0], Lambda)):
        return False
    return _is_reduce_of_zip_map(args[0].body)


def lift_reduce() -> Strategy:
    """At `map (fun(v) => reduce f z (map P (zip X Y))) ys` with one side of the zip
    depending on v: the reduction moves out of the map and gets an array accumulator,

        reduce (fun(acc, col) => map (fun(p) => f (fst p) (snd p)) (zip acc col)) (generate n (fun(i) => z))
               (map (fun(q) => map (fun(x) => P (pair x (snd q))) (fst q)) (zip (transpose (map (fun(v) => X) ys)) Y))

    Steps (the seed's register-blocking list): map_fission twice; map_reduce_interchange;
    map_map_interchange; transpose_transpose; transpose_map_zip; map_fusion twice; then
    beta and the pair projections."""
    return named("lift_reduce", seq(
        guard("map (fun(v) => reduce f z (map P (zip X Y))) ys", _is_map_of_reduce_of_zip),
        r("map_fission"),
        argument(r("map_fission")),
        r("map_reduce_interchange"),
        argument(argument(r("map_map_interchange"))),
        argument(r("transpose_transpose")),
        argument(argument(r("transpose_map_zip"))),
        argument(r("map_fusion")),
        argument(fmap(r("map_fusion"))),
        try_(argument(beta_proj_normal_form())),
    ))


def tile_reduction(k) -> Strategy:
    """At a tile `map (fun(a) => map (fun(b) => reduce f z (map g (zip a b))) cols) rows`: the
    seed's `reduce (fun(tileAcc, (tileA, tileB)) => map (map (+)) (zip tileAcc (tileA x tileB))) 0
    (zip tilesA tilesB)` with k-wide tiles.  split_reduction k on the dot product, then the
    reduction lifted out of both maps."""
    return named(f"tile_reduction({k})", seq(
        guard("map (fun(a) => map (fun(b) => ...) cols) rows", _is_nested_map),
        top_down(split_reduction(k)),
        fmap(lift_reduce()),
        lift_reduce(),
    ))


def untile_views() -> Strategy:
    """At a `tile_2d` result `join (map (fun(rows) => map join (transpose (map (fun(cols) => T) C))) R)`:
    `join (map (fun(rows) => transpose (join (map (fun(cols) => transpose T) C))) R)`, so that
    only whole-array views (join, transpose) surround the tiles' maps.  Steps:
    map_join_transpose; map_fusion."""
    return named("untile_views", argument(fmap(seq(r("map_join_transpose"), argument(argument(r("map_fusion")))))))


def _is_tiled_reduction(e: Expr) -> bool:
    head, args = spine(e)
    return (isinstance(head, Prim) and head.name == "reduce" and len(args) == 3
            and (applied(args[2], "map", 2) is not None) and (applied(spine(args[2])[1][1], "zip", 2) is not None))


def tile_views() -> Strategy:
    """At a `tile_reduction` result `reduce F Z (map T (zip (transpose (map (split k) rows))
    (transpose (map (split k) cols))))`: the k-wide tiles as whole-array views,
    `reduce F Z (map (fun(p) => T (pair (transpose (fst p)) (transpose (snd p))))
    (zip (split k (transpose rows)) (split k (transpose cols))))`.  Steps: transpose_map_split
    on both sides; zip_map; map_fusion; beta and the pair projections."""
    return named("tile_views", seq(
        guard("reduce F Z (map T (zip A B))", _is_tiled_reduction),
        argument(argument(function(argument(r("transpose_map_split"))))),
        argument(argument(argument(r("transpose_map_split")))),
        argument(argument(r("zip_map"))),
        argument(r("map_fusion")),
        try_(argument(beta_proj_normal_form())),
    ))


def register_blocking_1d(l) -> Strategy:
    """At a tile product `map (fun(a) => map (fun(b) => reduce f z (map g (zip a b))) ys) xs`:
    l rows of A per work-item (the seed's "Register Blocking as a Macro Rule"):

        join (map (fun(aBlock) => transpose (map (fun(b) => reduce (fun(acc, c) => map (+) (zip acc c)) 0s
                   (map (fun(q) => map (fun(x) => x * snd q) (fst q)) (zip (transpose aBlock) b))) ys)) (split l xs))

    Steps: split_join l; eta_expand_map; map_map_swap; then lift_reduce (map_fission,
    map_reduce_interchange, map_map_interchange, transpose_transpose, map_fusion).  Lowering
    then fuses with reduce_seq_map_fusion."""
    return named(f"register_blocking_1d({l})", seq(
        guard("map (fun(a) => map (fun(b) => ...) ys) xs", _is_nested_map),
        r("split_join", n=l),
        argument(r("eta_expand_map")),
        argument(fmap(r("map_map_swap"))),
        argument(fmap(argument(fmap(lift_reduce())))),
    ))


def register_blocking_2d(l1, l2) -> Strategy:
    """At a tile product as for register_blocking_1d: l1 x l2 blocks of the result per
    work-item, each an accumulation of outer products (columns of A times rows of B):
    tile_2d(l1, l2), then lift_reduce on the block's inner and outer maps."""
    return named(f"register_blocking_2d({l1}, {l2})", seq(
        guard("map (fun(a) => map (fun(b) => ...) ys) xs", _is_nested_map),
        tile_2d(l1, l2),
        argument(fmap(argument(argument(fmap(fmap(lift_reduce())))))),
        argument(fmap(argument(argument(fmap(lift_reduce()))))),
    ))


# ------------------------------------------------------------ parallel reduction


def _is_reduce(e: Expr) -> bool:
    return (applied(e, "reduce", 3) is not None)


def push_views() -> Strategy:
    """Move split and reorder_stride through maps and zips, then fuse the maps."""
    views = normalize(r("split_map") | r("split_zip") | r("reorder_stride_map") | r("reorder_stride_zip"))
    return named("push_views", seq(try_(views), try_(normalize(r("map_fusion")))))


def _log2(n: int) -> int:
    k = n.bit_length() - 1
    if n < 1 or 2**k != n:
        raise ValueError(f"{n} is not a power of two")
    return k


def parallel_reduction(block: int, local: int) -> Strategy:
    """At `reduce f z E` (E = xs, map g xs or map g (zip xs ys)): the seed's vecSum, still
    high level (lowering places it on work-groups and work-items):

        reduce f z (map (fun(chunk) =>
            reduce f z (iterate log2(local) (fun(l: nat, ys) => map (reduce f z) (split 2 (reorder_stride l ys)))
                (map (reduce f z) (split (block/local) (reorder_stride local chunk)))))
          (split block xs))

    Steps: reduce -> reduce . reducePart (reduce_split block); inside the block
    reducePart -> reducePart . reorder (reduce_reorder local), reducePart -> join . map
    reducePart . split (reduce_split block/local), reducePart -> iterate (reduce_split local,
    partial_reduce_iterate_stride).  E's split and reorder_stride are pushed through its map
    and zip (split_map, split_zip, reorder_stride_map, reorder_stride_zip) and its map fused
    into the partial reductions (map_fusion).  ValueError where local does not divide block."""
    return named(f"parallel_reduction({block}, {local})", seq(
        guard("reduce f z xs", _is_reduce),
        r("reduce_split", n=block),
        try_(argument(push_views())),
        try_(argument(r("eta_expand_map"))),
        argument(fmap(tree_reduction(block, local))),
    ))


def tree_reduction(length: int, local: int) -> Strategy:
    """At `reduce f z xs`, xs of `length` elements (f a commutative monoid, z its neutral
    element): `local` items each fold every local-th element (neighbouring items read
    neighbouring elements), then a tree of log2(local) stages halves the partial results:

        reduce f z (iterate log2(local) (fun(l: nat, ys) => map (reduce f z) (split 2 (reorder_stride l ys)))
                      (map (reduce f z) (split (length/local) (reorder_stride local xs))))

    Steps: reduce_reorder local, reduce_split length/local, reduce_split local,
    partial_reduce_iterate_stride, with xs's views pushed through its map and zip and the map
    fused into the partial reductions (push_views).  One block of parallel_reduction; a row's
    reduction by one work-group in the default lowering (default_lowering.row_reductions)."""
    if length % local:
        raise ValueError(f"the local size {local} does not divide the length {length}")
    return named(f"tree_reduction({length}, {local})", seq(
        guard("reduce f z xs", _is_reduce),
        r("reduce_reorder", s=local),
        try_(argument(push_views())),
        r("reduce_split", n=length // local),
        try_(argument(push_views())),
        r("reduce_split", n=local),
        argument(r("partial_reduce_iterate_stride", k=_log2(local))),
    ))


__all__ = ["beta_proj_normal_form", "guard", "let_value", "lift_reduce", "named", "outermost", "pair_parts",
           "parallel_reduction", "push_views", "r", "reduce_fn", "register_blocking_1d", "register_blocking_2d",
           "split_reduction", "tree_reduction", "tile_2d", "tile_reduction", "tile_views", "untile_views"]
