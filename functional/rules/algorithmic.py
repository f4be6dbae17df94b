"""Algorithmic rules: split-join, fusion and fission, reductions, interchange,
cancellation and vectorisation.  Each states its equation; the builders are that equation.
"""

from __future__ import annotations

import numpy as np

from .. import dsl as fl
from ..expr import (App, Expr, Identifier, Lambda, Literal, Prim, applied, free_identifiers, fresh_name, spine,
                    substitute, walk)
from ..nat import Nat, as_nat, divides, is_nonneg, nat, power
from ..types import ArrayType, FunType, ScalarType, TupleType, VectorType, array, f32
from . import instances as inst
from .core import L, OneOf, P, V, beta, bind, length, rule

# ------------------------------------------------------------------------ split-join


def _divides_length(param: str, of: str):
    def side(m):
        n, xs = getattr(m, param), getattr(m, of)
        return None if divides(n, length(xs)) else f"{n} does not divide the length {length(xs)}"

    return side


def _ex_split_join(rng):
    n = int(rng.choice([1, 2, 4]))
    total = inst.size(rng, n)
    f = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(inst.length(rng, total, n), lambda xs: fl.map(f, xs))
    return prog, (inst.data(rng, total),), {"n": n}


rule("split_join", "split-join", "map f xs -> join (map (map f) (split n xs))",
     lhs=P("map", V("f"), V("xs")), params=("n",), side=_divides_length("n", "xs"),
     build=lambda m: fl.join(fl.map(fl.map(m.f), fl.split(m.n, m.xs))),
     example=_ex_split_join,
     doc="Proof (seed): join (map (map f) (split n xs)) = join [map f chunk | chunk] = map f xs.")



def cut_within(whole, cut) -> str | None:
    """Why `cut` does not cut the length `whole` in two, or None: 0 < k < n for constants; a
    symbolic cut provably between 0 and n and not all of it (the cut c * (n // c) of the
    default lowering and the explorer: a part is empty at the sizes c divides or exceeds)."""
    whole, cut = as_nat(whole), as_nat(cut)
    n, k = whole.as_int(), cut.as_int()
    if n is not None and k is not None:
        return None if 0 < k < n else f"{k} does not split the length {n} into two non-empty parts"
    if cut == whole:
        return f"{cut} is the whole length: nothing to split"
    if not (is_nonneg(cut) and is_nonneg(whole - cut)):
        return f"{cut} is not provably between 0 and the length {whole}"
    return None


def _ex_split_at(rng):
    total = inst.size(rng, 1, 2, 9)
    f = inst.pick(rng, inst.UNARY)
    kind = rng.random()
    if kind < 0.4:
        n, k = total, int(rng.integers(1, total))
    elif kind < 0.7:  # symbolic: a cut the declared range keeps inside (N >= 2, k = 1 or N - 1)
        n = nat("N", lo=2)
        total = max(total, 2)
        k = 1 if rng.random() < 0.5 else n - 1
    else:  # symbolic: the explorer's cut c * (N // c), at an N that c neither divides nor exceeds
        c = int(rng.choice([2, 4, 8]))
        n = nat("N")
        total = c * int(rng.integers(1, 4)) + int(rng.integers(1, c))
        k = c * (n // c)
    prog = inst.vector_program(n, lambda xs: fl.map(f, xs))
    return prog, (inst.data(rng, total),), {"k": k}


rule("map_split_at", "split-join", "map f xs -> concat (map f (take k xs)) (map f (drop k xs))   (0 < k < length xs; a symbolic k provably within 0 .. length xs)",
     lhs=P("map", V("f"), V("xs")), params=("k",), side=lambda m: cut_within(length(m.xs), m.k),
     build=lambda m: fl.concat(fl.map(m.f, fl.take(m.k, m.xs)), fl.map(m.f, fl.drop(m.k, m.xs))),
     example=_ex_split_at,
     doc="Proof: concat [f x1, ..., f xk] [f x(k+1), ..., f xn] = map f xs.  A length no tile divides is cut at "
         "its largest multiple of the tile: the multiple is tiled, the remainder (the guarded part) mapped "
         "as it is.")

def _concat_body_side(m):
    if not isinstance(m.lam, Lambda) or applied(m.lam.body, "concat", 2) is None:
        return "the function's body is not a concat of two arrays"
    return None


def _ex_concat_columns(rng):
    rows, k, rest = inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4), inst.size(rng, 1, 1, 4)
    f, g = inst.pick(rng, inst.UNARY), inst.pick(rng, inst.UNARY)
    prog = fl.fun([array(rows, array(k + rest, f32))], lambda xss: fl.map(
        lambda r: fl.concat(fl.map(f, fl.take(k, r)), fl.map(g, fl.drop(k, r))), xss))
    return prog, (inst.data(rng, rows * (k + rest)).reshape(rows, k + rest),), {}


rule("map_concat_transpose", "split-join",
     "map (fun(x) => concat (a x) (b x)) xs -> transpose (concat (transpose (map (fun(x) => a x) xs)) "
     "(transpose (map (fun(x) => b x) xs)))",
     lhs=P("map", V("lam"), V("xs")), side=_concat_body_side,
     build=lambda m: fl.transpose(fl.concat(
         fl.transpose(fl.map(Lambda(m.lam.param, applied(m.lam.body, "concat", 2)[0]), m.xs)),
         fl.transpose(fl.map(Lambda(m.lam.param, applied(m.lam.body, "concat", 2)[1]), m.xs)))),
     example=_ex_concat_columns,
     doc="Proof: row i of either side is concat (a xs_i) (b xs_i): transposed, the concat of the two "
         "maps' columns.  Every row's left and right parts become two nests of their own (a 2D map's "
         "columns cut at a multiple: the left block tiled, the right strip mapped), each written in place "
         "through the transposes' and concat's write views.")


# -------------------------------------------------------------------- fusion / fission


def _ex_two_maps(rng):
    n = inst.size(rng)
    f, g = inst.pick(rng, inst.UNARY), inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.map(f, fl.map(g, xs)))
    return prog, (inst.data(rng, n),), {}


rule("map_fusion", "fusion", "map f (map g xs) -> map (fun(x) => f (g x)) xs",
     lhs=P("map", V("f"), P("map", V("g"), V("xs"))),
     build=lambda m: fl.map(lambda x: beta(m.f, beta(m.g, x)), m.xs),
     example=_ex_two_maps)

rule("map_fusion_shared", "fusion", "map f (map g xs) -> map (fun(x) => let (g x) f) xs   (g x substituted into f "
     "where that computes it once: see core.bind)",
     lhs=P("map", V("f"), P("map", V("g"), V("xs"))),
     build=lambda m: fl.map(lambda x: bind(m.f, beta(m.g, x)), m.xs),
     example=_ex_two_maps,
     doc="The default lowering's fusion: an element the consumer reads several times is computed once.")


def _fission_side(m):
    body = m.lam.body
    if not isinstance(body, App) or m.lam.param.name in free_identifiers(body.fun):
        return "the body is not f (g x) with f independent of x"
    if isinstance(body.arg, Identifier) and body.arg.name == m.lam.param.name:
        return "nothing to split off"
    return None


def _ex_fission(rng):
    n = inst.size(rng)
    f, g = inst.pick(rng, inst.UNARY), inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.map(lambda x: fl.apply(fl.lam(f), g(x)), xs))
    return prog, (inst.data(rng, n),), {}


rule("map_fission", "fusion", "map (fun(x) => f (g x)) xs -> map f (map (fun(x) => g x) xs)",
     lhs=P("map", V("lam"), V("xs")),
     side=lambda m: "not a lambda" if not isinstance(m.lam, Lambda) else _fission_side(m),
     build=lambda m: fl.map(m.lam.body.fun, fl.map(Lambda(m.lam.param, m.lam.body.arg), m.xs)),
     example=_ex_fission)


def _ex_reduce_seq_map(rng):
    n = inst.size(rng)
    op, z = inst.pick(rng, inst.MONOIDS)
    g = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.reduce_seq(op, z, fl.map_seq(g, xs)))
    return prog, (inst.data(rng, n, monoid=(op, z)),), {}


rule("reduce_seq_map_fusion", "fusion",
     "reduce_seq f z (map_seq g xs) -> reduce_seq (fun(a, x) => f a (g x)) z xs",
     lhs=P("reduce_seq", V("f"), V("z"), P({"map", "map_seq"}, V("g"), V("xs"))),
     build=lambda m: fl.reduce_seq(lambda a, x: beta(beta(m.f, a), beta(m.g, x)), m.z, m.xs),
     example=_ex_reduce_seq_map)

rule("reduce_seq_map_fusion_shared", "fusion",
     "reduce_seq f z (map_seq g xs) -> reduce_seq (fun(a, x) => let (g x) (f a)) z xs   (g x substituted where "
     "that computes it once: see core.bind)",
     lhs=P("reduce_seq", V("f"), V("z"), P({"map", "map_seq"}, V("g"), V("xs"))),
     build=lambda m: fl.reduce_seq(lambda a, x: _bind2(m.f, a, beta(m.g, x)), m.z, m.xs),
     example=_ex_reduce_seq_map)

def _bind2(f, a, x):
    """`f a x` for a two-parameter function, x computed once (see core.bind); `a` is an
    identifier, so substituting it duplicates nothing."""
    return bind(beta(f, a), x)


MAX_FUSED_REDUCTIONS = 32  # generate_reduce_fusion's n: each element's n values are held per item


def _reduced_map(e: Expr):
    """(f, z, g, xs) of `reduce f z (map g xs)`, g None for `reduce f z xs`; else None."""
    args = applied(e, "reduce", 3)
    if args is None:
        return None
    f, z, data = args
    inner = applied(data, "map", 2)
    return (f, z, None, data) if inner is None else (f, z, inner[0], inner[1])


def _reason(shape):
    """A side condition from a shape test that returns the parts, or why not (a str)."""
    return lambda m: found if isinstance(found := shape(m.root), str) else None


def generated_reduction(e: Expr):
    """(k, f, z, g, xs) of `generate n (fun(k) => reduce f z (map g xs))` where f, z and xs do
    not depend on k and n is a constant of at most MAX_FUSED_REDUCTIONS, or why not (a str)."""
    args = applied(e, "generate", 1)
    if args is None:
        return "not a generate"
    n = as_nat(spine(e)[0].params[0]).as_int()
    if n is None or not 1 <= n <= MAX_FUSED_REDUCTIONS:
        return f"the generate's length is not a constant of at most {MAX_FUSED_REDUCTIONS}"
    lam = args[0]
    if not isinstance(lam, Lambda):
        return "the generate's function is not a lambda"
    reduced = _reduced_map(lam.body)
    if reduced is None or reduced[2] is None:
        return "the generate's body is not a reduction over a map"
    f, z, g, xs = reduced
    if any(lam.param.name in free_identifiers(x) for x in (f, z, xs)):
        return "the operator, the initial value or the reduced array depends on the generate's index"
    return lam.param, f, z, g, xs


def _generate_reduce_build(m):
    k, f, z, g, xs = generated_reduction(m.root)
    n = m.n
    return fl.reduce(lambda a, b: fl.generate(n, lambda i: beta(beta(f, a[i]), b[i])),
                     fl.generate(n, lambda i: z),
                     fl.map(lambda x: fl.generate(n, lambda i: beta(beta(Lambda(k, g), i), x)), xs))


def _ex_generate_reduce(rng):
    n, m = int(rng.choice([1, 2, 3, 4])), inst.size(rng)
    op, z = inst.pick(rng, inst.MONOIDS)
    u = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(m, lambda xs: fl.generate(n, lambda k: fl.reduce(
        op, z, fl.map(lambda x: u(x) + fl.cast(f32, k), xs))))
    return prog, (inst.data(rng, m, monoid=(op, z)),), {}


rule("generate_reduce_fusion", "fusion",
     "generate n (fun(k) => reduce f z (map (g k) xs)) -> reduce (fun(a, b) => generate n (fun(k) => f (at a k) "
     "(at b k))) (generate n (fun(k) => z)) (map (fun(x) => generate n (fun(k) => g k x)) xs)   (f, z, xs "
     "independent of k; n a constant: the n reductions in one pass over xs)",
     lhs=P("generate", V("f"), params=("n",)), side=_reason(generated_reduction), build=_generate_reduce_build,
     example=_ex_generate_reduce, exact=False,
     doc="The banana-split law: n folds over the same list are one fold of n-tuples, combined component by "
         "component (associative, with the neutral element z in each, when f is).  One pass reads xs once and "
         "computes what g k x shares across k once (N-Body's distance, MD's).  Not exact in the interpreter: a "
         "known operator's reduction is NumPy's pairwise sum, the fused one a fold in order.")


def paired_reductions(e: Expr):
    """((f, z, g, xs), (h, w, k, xs)) of `pair (reduce f z (map g xs)) (reduce h w (map k xs))`
    (either map may be absent: g or k None) over the same xs, or why not (a str)."""
    args = applied(e, "pair", 2)
    if args is None:
        return "not a pair"
    left, right = _reduced_map(args[0]), _reduced_map(args[1])
    if left is None or right is None:
        return "the pair is not of two reductions"
    if left[3] != right[3]:
        return "the two reductions are over different arrays"
    return left, right


def _pair_reduce_build(m):
    (f, z, g, xs), (h, w, k, _) = paired_reductions(m.root)
    return fl.reduce(lambda a, b: fl.pair(beta(beta(f, fl.fst(a)), fl.fst(b)), beta(beta(h, fl.snd(a)), fl.snd(b))),
                     fl.pair(z, w),
                     fl.map(lambda x: fl.pair(x if g is None else beta(g, x), x if k is None else beta(k, x)), xs))


def _ex_pair_reduce(rng):
    m = inst.size(rng)
    (op1, z1), (op2, z2) = inst.pick(rng, inst.MONOIDS), inst.pick(rng, inst.MONOIDS)
    u = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(m, lambda xs: fl.pair(fl.reduce(op1, z1, fl.map(u, xs)), fl.reduce(op2, z2, xs)))
    return prog, (inst.data(rng, m),), {}


rule("pair_reduce_fusion", "fusion",
     "pair (reduce f z (map g xs)) (reduce h w (map k xs)) -> reduce (fun(a, b) => pair (f (fst a) (fst b)) "
     "(h (snd a) (snd b))) (pair z w) (map (fun(x) => pair (g x) (k x)) xs)   (the same xs; either map may be "
     "absent: the two reductions in one pass)",
     lhs=P("pair", V("a"), V("b")), side=_reason(paired_reductions), build=_pair_reduce_build,
     example=_ex_pair_reduce, exact=False,
     doc="The banana-split law for two folds: a fold of pairs, component by component (functional.algebra "
         "proves it associative when f and h are monoid operators, so it keeps parallel stages).  Not exact in "
         "the interpreter: a known operator's reduction is NumPy's pairwise sum, the fused one a fold in order.")


# ------------------------------------------------------------------------- reductions


def _ex_reduce(multiple, vectors: bool = False):
    """Reductions of n-multiple lengths; with `vectors`, a quarter of them of w-wide vectors
    from the splat of the neutral element (inst.vector_reduction)."""
    def ex(rng):
        n = multiple(rng)
        op, z = inst.pick(rng, inst.MONOIDS)
        if vectors and rng.random() < 0.25:
            w = int(rng.choice([2, 4]))
            total = w * n * inst.size(rng)
            prog = inst.vector_program(total, inst.vector_reduction(op, z, w))
            return prog, (inst.data(rng, total, monoid=(op, z)),), {"n": n}
        total = inst.size(rng, n)
        prog = inst.vector_program(inst.length(rng, total, n), lambda xs: fl.reduce(op, z, xs))
        return prog, (inst.data(rng, total, monoid=(op, z)),), {"n": n}

    return ex


def monoid_side(*needs: str, length_of: str | None = None, param: str | None = None):
    """A side condition: the reduction's operator `f` (and initial value `z`) have the
    properties `needs` names ("associative", "neutral", "commutative"; functional.algebra
    proves them from the operator's form), and `param` divides the length of `length_of`."""
    from .. import algebra

    def side(m):
        if "associative" in needs and not algebra.associative(m.f):
            return f"{_short(m.f)} is not known to be associative"
        if "commutative" in needs and not algebra.commutative(m.f):
            return f"{_short(m.f)} is not known to be commutative"
        if "neutral" in needs and not algebra.neutral(m.f, m.z):
            return f"{_short(m.z)} is not known to be a neutral element of {_short(m.f)}"
        return _divides_length(param, length_of)(m) if param else None

    return side


def _short(e) -> str:
    s = str(e)
    return s if len(s) <= 40 else s[:37] + "..."


rule("reduce_split", "reduce",
     "reduce f z xs -> reduce f z (map (reduce f z) (split n xs))   (partial reductions of n elements first; "
     "f associative, z neutral)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), params=("n",),
     side=monoid_side("associative", "neutral", param="n", length_of="xs"), exact=False,
     build=lambda m: fl.reduce(m.f, m.z, fl.map(fl.reduce(m.f, m.z), fl.split(m.n, m.xs))),
     example=_ex_reduce(lambda r: int(r.choice([1, 2, 4])), vectors=True))


def _ex_reduce_reorder(rng):
    s = int(rng.choice([1, 2, 4]))
    total = s * inst.size(rng, 1, 1, 4)
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = inst.vector_program(inst.length(rng, total, s), lambda xs: fl.reduce(op, z, xs))
    return prog, (inst.data(rng, total, monoid=(op, z)),), {"s": s}


rule("reduce_reorder", "reduce",
     "reduce f z xs -> reduce f z (reorder_stride s xs)   (f associative and commutative: any order of the elements)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), params=("s",),
     side=monoid_side("associative", "commutative", param="s", length_of="xs"), exact=False,
     build=lambda m: fl.reduce(m.f, m.z, fl.reorder_stride(m.s, m.xs)),
     example=_ex_reduce_reorder,
     doc="Lift's `reducePart -> reducePart . reorder`: inside reduce_split's chunks it yields the seed's "
         "coalesced partial reductions.")


def _iterate_side(m):
    reason = monoid_side("associative", "neutral")(m)
    if reason:
        return reason
    k = m.k.as_int() if isinstance(m.k, Nat) else m.k
    if k is None or k < 1:
        return "k must be a positive constant"
    if m.n != power(Nat.const(2), Nat.const(k)):
        return f"the chunk size {m.n} is not 2^{k}"
    return None


def _ex_partial_iterate(rng):
    k = int(rng.integers(1, 4))
    n = 2**k
    total = n * inst.size(rng, 1, 1, 3)
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = inst.vector_program(inst.length(rng, total, n), lambda xs: fl.map(fl.reduce(op, z), fl.split(n, xs)))
    return prog, (inst.data(rng, total, monoid=(op, z)),), {"k": k}


rule("partial_reduce_iterate", "reduce",
     "map (reduce f z) (split (2^k) xs) -> iterate k (fun(ys) => map (reduce f z) (split 2 ys)) xs   "
     "(f associative, z neutral)",
     lhs=P("map", P("reduce", V("f"), V("z")), P("split", V("xs"), params=("n",))), params=("k",),
     side=_iterate_side, exact=False,
     build=lambda m: fl.iterate(m.k, lambda ys: fl.map(fl.reduce(m.f, m.z), fl.split(2, ys)), m.xs),
     example=_ex_partial_iterate)


def _ex_reduce_to_partial(rng):
    n = int(rng.choice([2, 4]))
    total = n * inst.size(rng, 1, 1, 4)
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = inst.vector_program(inst.length(rng, total, n), lambda xs: fl.reduce(op, z, xs))
    return prog, (inst.data(rng, total, monoid=(op, z)),), {"n": n}


rule("partial_reduce_split_join", "reduce",
     "map (reduce f z) (split n xs) -> join (map (map (reduce f z)) (split m (split n xs)))   "
     "(partial reductions grouped m at a time)",
     lhs=P("map", P("reduce", V("f"), V("z")), V("chunks")), params=("m",),
     side=_divides_length("m", "chunks"),
     build=lambda m: fl.join(fl.map(fl.map(fl.reduce(m.f, m.z)), fl.split(m.m, m.chunks))),
     example=lambda rng: _ex_partial_split(rng))


def _ex_partial_split(rng):
    n = int(rng.choice([2, 4]))
    mm = int(rng.choice([1, 2]))
    total = n * mm * inst.size(rng, 1, 1, 3)
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = inst.vector_program(inst.length(rng, total, n * mm), lambda xs: fl.map(fl.reduce(op, z), fl.split(n, xs)))
    return prog, (inst.data(rng, total, monoid=(op, z)),), {"m": mm}


# ---------------------------------------------------------------------- interchange


def _ex_map_map(rng):
    m, n = inst.size(rng), inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    prog = inst.matrix_program(m, n, lambda xss: fl.map(fl.map(f), xss))
    return prog, (inst.data(rng, m, n),), {}


rule("map_map_interchange", "interchange",
     "map (map f) xss -> transpose (map (map f) (transpose xss))",
     lhs=P("map", P("map", V("f")), V("xss")),
     build=lambda m: fl.transpose(fl.map(fl.map(m.f), fl.transpose(m.xss))),
     example=_ex_map_map)


def _ex_map_reduce(rng):
    m, n = inst.size(rng), inst.size(rng)
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = inst.matrix_program(m, n, lambda xss: fl.map(fl.reduce(op, z), xss))
    return prog, (inst.data(rng, m, n, monoid=(op, z)),), {}


def _map_reduce_build(m):
    rows = length(m.xss)
    return fl.reduce(
        lambda acc, col: fl.map(lambda p: beta(beta(m.f, fl.fst(p)), fl.snd(p)), fl.zip(acc, col)),
        fl.generate(rows, lambda i: m.z),
        fl.transpose(m.xss),
    )


rule("map_reduce_interchange", "interchange",
     "map (reduce f z) xss -> reduce (fun(acc, col) => map (fun(p) => f (fst p) (snd p)) (zip acc col)) "
     "(generate m (fun(i) => z)) (transpose xss)",
     lhs=P("map", P("reduce", V("f"), V("z")), V("xss")),
     side=lambda m: None if not free_identifiers(m.z) else "the neutral element mentions variables",
     build=_map_reduce_build, exact=False, example=_ex_map_reduce)

def _element_wise_step(f: Expr) -> tuple[Expr, Expr] | None:
    """(q, h) of an element-wise step `fun(acc, x) => map (fun(q) => h) (zip acc x)` whose h
    reads acc and x only through q; None for any other function."""
    if not (isinstance(f, Lambda) and isinstance(f.body, Lambda)):
        return None
    acc, x = f.param.name, f.body.param.name
    args = applied(f.body.body, "map", 2)
    if args is None or not isinstance(args[0], Lambda):
        return None
    pair = applied(args[1], "zip", 2)
    if pair is None or not all(isinstance(a, Identifier) for a in pair) or [a.name for a in pair] != [acc, x]:
        return None
    if {acc, x} & free_identifiers(args[0]):
        return None
    return args[0].param, args[0].body


def _reduce_columns_side(m):
    if _element_wise_step(m.f) is None:
        return "the step is not element-wise: fun(acc, x) => map (fun(q) => h) (zip acc x)"
    init = applied(m.z, "generate", 1)
    if init is None or not isinstance(init[0], Lambda) or init[0].param.name in free_identifiers(init[0].body):
        return "the initial value is not a constant row: generate n (fun(i) => z)"
    t = m.xss.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)):
        return "not a reduction of rows"
    return None


def _reduce_columns_build(m):
    q, h = _element_wise_step(m.f)
    z = applied(m.z, "generate", 1)[0].body
    step = fl.lam(lambda a, b: substitute(h, q.name, fl.pair(a, b)))
    return fl.map(lambda col: fl.reduce(step, z, col), fl.transpose(m.xss))


def _ex_reduce_columns(rng):
    m, n = inst.size(rng), inst.size(rng)
    if rng.random() < 0.5:  # column sums
        step = lambda acc, row: fl.map(lambda q: fl.fst(q) + fl.snd(q), fl.zip(acc, row))
        z = 0.0
    else:  # neither associative nor commutative: the order of each column's fold is kept
        step = lambda acc, row: fl.map(lambda q: fl.fst(q) * 0.5 - fl.snd(q), fl.zip(acc, row))
        z = 1.5
    prog = inst.matrix_program(m, n, lambda xss: fl.reduce(step, fl.generate(n, lambda i: z), xss))
    return prog, (inst.data(rng, m, n),), {}


rule("reduce_columns", "interchange",
     "reduce (fun(acc, x) => map (fun(q) => h q) (zip acc x)) (generate n (fun(i) => z)) xss -> "
     "map (fun(col) => reduce (fun(a, b) => h (a, b)) z col) (transpose xss)   (map_reduce_interchange's inverse)",
     lhs=P("reduce", V("f"), V("z"), V("xss")), side=_reduce_columns_side, build=_reduce_columns_build,
     example=_ex_reduce_columns,
     doc="Proof: column j of the accumulator starts at z and takes h (acc_j, x_j) for each row x in order, "
         "which is the fold of fun(a, b) => h (a, b) over column j from z: the same operations in the same "
         "order, so no algebra is needed.  A sum of scaled rows (a matrix product written row by row) "
         "becomes dot products over columns, the form the matrix product's lowerings know.")


def _transpose_rows_side(m):
    rows = applied(m.row, "snd", 1)
    if rows is None or not isinstance(rows[0], Identifier) or rows[0].name != m.p.name:
        return "the inner map is not over the pair's row (snd p)"
    if not isinstance(m.h, Lambda):
        return "the element function is not a lambda"
    if any(isinstance(x, Identifier) and x.name == m.p.name for x in _outside_fst(m.h.body, m.p.name)):
        return "the element function reads the pair other than by fst p"
    return None


def _outside_fst(e: Expr, name: str):
    """The nodes of `e` not under a `fst name` (where a bare `name` shows a use other than fst)."""
    args = applied(e, "fst", 1)
    if args is not None and isinstance(args[0], Identifier) and args[0].name == name:
        return
    yield e
    for c in e.children():
        yield from _outside_fst(c, name)


def _transpose_rows_build(m):
    h = m.h
    return fl.map(lambda c: fl.map(lambda q: substitute(substitute(h.body, h.param.name, fl.snd(q)), m.p.name, q),
                                   fl.zip(m.xs, c)), fl.transpose(m.yss))


def _ex_transpose_rows(rng):
    m, n = inst.size(rng), inst.size(rng)
    prog = fl.fun([array(m, f32), array(m, array(n, f32))], lambda xs, yss: fl.transpose(fl.map(
        lambda p: fl.map(lambda e: fl.fst(p) * e - e, fl.snd(p)), fl.zip(xs, yss))))
    return prog, (inst.data(rng, m), inst.data(rng, m, n)), {}


rule("transpose_rows", "interchange",
     "transpose (map (fun(p) => map (fun(e) => h (fst p) e) (snd p)) (zip xs yss)) -> "
     "map (fun(c) => map (fun(q) => h (fst q) (snd q)) (zip xs c)) (transpose yss)",
     lhs=P("transpose", P("map", L("p", P("map", V("h"), V("row"))), P("zip", V("xs"), V("yss")))),
     side=_transpose_rows_side, build=_transpose_rows_build, example=_ex_transpose_rows,
     doc="Proof: both are the matrix whose element (j, k) is h xs[k] yss[k][j].  Each row of the result "
         "reads a column of yss with xs: a row-by-row scaling read as the columns a product reduces.")


# ---------------------------------------------------------------------- cancellation


def _ex_cancel(build):
    def ex(rng):
        m, n = inst.size(rng), inst.size(rng)
        prog, inputs = build(rng, m, n)
        return prog, inputs, {}

    return ex


rule("transpose_transpose", "cancellation", "transpose (transpose xss) -> xss",
     lhs=P("transpose", P("transpose", V("xss"))), build=lambda m: m.xss,
     example=_ex_cancel(lambda r, m, n: (inst.matrix_program(m, n, lambda x: fl.transpose(fl.transpose(x))),
                                         (inst.data(r, m, n),))))

rule("join_split", "cancellation", "join (split n xs) -> xs",
     lhs=P("join", P("split", V("xs"), params=("n",))), build=lambda m: m.xs,
     example=_ex_cancel(lambda r, m, n: (inst.vector_program(m * n, lambda x: fl.join(fl.split(n, x))),
                                         (inst.data(r, m * n),))))


def _inner_length_is(param: str, of: str):
    def side(m):
        t = getattr(m, of).t
        if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)) or t.elem.size != getattr(m, param):
            return f"the inner length is not {getattr(m, param)}"
        return None

    return side


rule("split_join_cancel", "cancellation", "split n (join xss) -> xss   (inner length n)",
     lhs=P("split", P("join", V("xss")), params=("n",)), side=_inner_length_is("n", "xss"),
     build=lambda m: m.xss,
     example=_ex_cancel(lambda r, m, n: (inst.matrix_program(m, n, lambda x: fl.split(n, fl.join(x))),
                                         (inst.data(r, m, n),))))

rule("as_scalar_as_vector", "cancellation", "as_scalar (as_vector w xs) -> xs",
     lhs=P("as_scalar", P("as_vector", V("xs"), params=("w",))), build=lambda m: m.xs,
     example=_ex_cancel(lambda r, m, n: (inst.vector_program(4 * m, lambda x: fl.as_scalar(fl.as_vector(4, x))),
                                         (inst.data(r, 4 * m),))))


def _vector_width_is(m):
    t = m.xs.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, VectorType)) or t.elem.width != m.w:
        return f"the vectors are not {m.w} wide"
    return None


rule("as_vector_as_scalar", "cancellation", "as_vector w (as_scalar xs) -> xs   (vectors of width w)",
     lhs=P("as_vector", P("as_scalar", V("xs")), params=("w",)), side=_vector_width_is, build=lambda m: m.xs,
     example=_ex_cancel(lambda r, m, n: (inst.vector_program(
         4 * m, lambda x: fl.as_vector(4, fl.as_scalar(fl.as_vector(4, x)))), (inst.data(r, 4 * m),))))


def _same_permutation_side(m):
    """gather idx (scatter idx' xs)[j] = xs[idx'^-1(idx(j))]: the identity iff idx = idx'.
    Checked symbolically, else on sample lengths and positions."""
    a, b = m.outer, m.inner
    if a.alpha_key == b.alpha_key:
        return None
    from ..nat import evaluate

    for n in (1, 2, 3, 5, 8, 12):
        for k in range(n):
            try:
                if evaluate(a.body, {a.i.name: k, a.n.name: n}) != evaluate(b.body, {b.i.name: k, b.n.name: n}):
                    return "the index functions differ"
            except Exception:  # noqa: BLE001 -- indices the samples cannot evaluate
                return "cannot show the index functions are the same"
    return None


def _ex_gather_scatter(rng):
    n = inst.size(rng, 1, 2, 8)
    shift = int(rng.integers(0, 3))
    perm = inst.pick(rng, [lambda i, n_: n_ - 1 - i, lambda i, n_: (i + shift) % n_])
    prog = inst.vector_program(n, lambda x: fl.gather(perm, fl.scatter(perm, x)))
    return prog, (inst.data(rng, n),), {}


rule("gather_scatter", "cancellation", "gather idx (scatter idx xs) -> xs   (the same permutation idx)",
     lhs=P("gather", P("scatter", V("xs"), params=("inner",)), params=("outer",)),
     side=_same_permutation_side, build=lambda m: m.xs, example=_ex_gather_scatter,
     doc="scatter puts x_i at idx(i); gathering at idx(j) reads it back.  Sameness is decided on the "
         "normal form, else on sample lengths.")

# --------------------------------------------------------------------- vectorisation


def _vectorize_side(m):
    t = m.xs.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ScalarType)):
        return "only arrays of scalars are vectorised"
    ft = m.f.t
    if not isinstance(getattr(ft, "result", None), ScalarType):
        return "the function does not return a scalar"
    if any(isinstance(node.t, ArrayType) for node in walk(m.f)):
        # OpenCL applies scalar operations to vectors lane-wise, not a loop's accumulator
        # or its array (a reduction in the function would fold lanes into one scalar)
        return "the function computes with arrays (a loop): only scalar code is vectorised"
    if "bool" in (t.elem.name, ft.result.name):
        return "OpenCL has no vectors of bool"
    if len(_selection_sizes(m.f)) > 1:
        return ("a select's condition compares values of another size than it selects (a vector select's "
                "condition has lanes of the size of its values)")
    return None if divides(m.w, t.size) else f"{m.w} does not divide {t.size}"


_COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})


def _selection_sizes(f) -> set:
    """The byte sizes of the values `f` compares and selects (None for a tuple)."""
    sizes = set()
    for node in walk(f):
        head, args = spine(node)
        if not isinstance(head, Prim):
            continue
        if head.name in _COMPARISONS and len(args) == 2:
            sizes.add(_scalar_bytes(args[0].t))
        elif head.name == "select" and len(args) == 3:
            sizes.add(_scalar_bytes(node.t))
    return sizes


def _scalar_bytes(t) -> int | None:
    return t.dtype.itemsize if isinstance(t, ScalarType) else None


def _ex_vectorize(rng):
    w = int(rng.choice([2, 4, 8]))
    total = inst.size(rng, w)
    f = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(inst.length(rng, total, w), lambda xs: fl.map(f, xs))
    return prog, (inst.data(rng, total),), {"w": w}


rule("vectorize", "vectorisation", "map f xs -> as_scalar (map (map_vec f) (as_vector w xs))",
     lhs=P("map", V("f"), V("xs")), params=("w",), side=_vectorize_side,
     build=lambda m: fl.as_scalar(fl.map(fl.map_vec(m.f), fl.as_vector(m.w, m.xs))),
     example=_ex_vectorize)


def _ex_vectorize_parallel(rng):
    w = int(rng.choice([2, 4, 8]))
    rows, cols = inst.size(rng), inst.size(rng, w)
    prog = inst.matrix_program(rows, cols, lambda xss: fl.join(fl.map_workgroup(lambda row: fl.map_local(
        lambda x: x * 2.0, row), xss)))
    return prog, (inst.data(rng, rows, cols),), {"w": w}


rule("vectorize_parallel", "vectorisation",
     "map_p d f xs -> as_scalar (map_p d (map_vec f) (as_vector w xs))   (map_p: map_global or map_local; "
     "e.g. a tile copy that moves w values per work-item and instruction)",
     lhs=P(("map_global", "map_local"), V("f"), V("xs"), params=("d",), bind="kind"), params=("w",),
     side=_vectorize_side,
     build=lambda m: fl.as_scalar(fl._prim(m.kind, (m.d,), (fl.map_vec(m.f), fl.as_vector(m.w, m.xs)))),
     example=_ex_vectorize_parallel)



def _lane_inputs(g, xs):
    """(g as a lambda, the arrays `map g xs` reads, their scalar type) or a reason it is not a
    map over (zips of) arrays of scalars whose function is a lambda or a scalar primitive."""
    g = _function_as_lambda(g)
    if g is None:
        return "the map's function is neither a lambda nor a scalar primitive"
    arrays = zip_leaves(xs)
    if arrays is None:
        return "the map reads neither an array of scalars nor zips of them"
    return g, arrays, arrays[0].t.elem


def _lane_map_parts(m):
    """_lane_inputs of `map g xs` where g computes a scalar of the arrays' one scalar type."""
    parts = _lane_inputs(m.f, m.xs)
    if isinstance(parts, str):
        return parts
    g, arrays, t = parts
    if t.name == "bool" or any(a.t.elem != t for a in arrays) or g.body.t != t:
        return "the map does not compute a scalar of its inputs' one scalar type"
    return parts


def _vectorize_lanes_side(m):
    parts = _lane_map_parts(m)
    if isinstance(parts, str):
        return parts
    g, _, t = parts
    if _lanes_of(g.body, g.param.name, VectorType(t, m.w)) is None:
        return "the map's function is not lane-wise (arithmetic, the math built-ins) in its element"
    return None if divides(m.w, length(m.xs)) else f"{m.w} does not divide the length {length(m.xs)}"


def _vectorize_lanes_build(m):
    g, _, t = _lane_map_parts(m)
    lanes = Lambda(g.param, _lanes_of(g.body, g.param.name, VectorType(t, m.w)))
    return fl.as_scalar(fl.map(lanes, _rezip(m.xs, lambda a: fl.as_vector(m.w, a))))


def _ex_vectorize_lanes(rng):
    w = int(rng.choice([2, 4, 8, 16]))
    n = inst.size(rng, w)
    kind = rng.integers(3)
    if kind == 0:  # saxpy: two arrays zipped, a scalar broadcast
        prog = fl.fun([f32, array(n, f32), array(n, f32)], lambda a, xs, ys: fl.map(
            lambda p: a * fl.fst(p) + fl.snd(p), fl.zip(xs, ys)))
        return prog, (np.float32(1.5), inst.data(rng, n), inst.data(rng, n)), {"w": w}
    if kind == 1:  # three arrays in nested zips, math built-ins
        prog = fl.fun([array(n, f32)] * 3, lambda xs, ys, zs: fl.map(
            lambda p: fl.sqrt(fl.abs(fl.fst(p))) * fl.erfc(fl.fst(fl.snd(p))) - fl.rsqrt(fl.snd(fl.snd(p)) * fl.snd(
                fl.snd(p)) + 1.0), fl.zip(xs, fl.zip(ys, zs))))
        return prog, tuple(inst.data(rng, n) for _ in range(3)), {"w": w}
    prog = fl.fun([array(n, f32)], lambda xs: fl.map(fl.abs, xs))  # a bare primitive
    return prog, (inst.data(rng, n),), {"w": w}


rule("vectorize_lanes", "vectorisation",
     "map g (zip xs ys) -> as_scalar (map g' (zip (as_vector w xs) (as_vector w ys)))   (also map g xs and zips "
     "of zips; g' = g lane-wise: its terms without the element cast to vectors, arithmetic and math built-ins on "
     "vectors; g computes a scalar of the arrays' one scalar type; w divides the length)",
     lhs=P("map", V("f"), V("xs")), params=("w",), side=_vectorize_lanes_side, build=_vectorize_lanes_build,
     example=_ex_vectorize_lanes,
     doc="vectorize for maps over zips: w elements of each input read at once and g applied to them "
         "lane-wise.  Proof: element j of the result is lane j mod w of vector j div w, which g' computes "
         "from lane j mod w of each input's vector j div w, element j of that input: g of element j.")


def _ex_zip_map_snd(rng):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    prog = fl.fun([inst.array(n, inst.f32), inst.array(n, inst.f32)],
                  lambda xs, ys: fl.map(lambda p: fl.fst(p) - fl.snd(p), fl.zip(xs, fl.map(f, ys))))
    return prog, (inst.data(rng, n), inst.data(rng, n)), {}


rule("zip_map_snd", "fusion", "zip xs (map g ys) -> map (fun(p) => pair (fst p) (g (snd p))) (zip xs ys)",
     lhs=P("zip", V("xs"), P("map", V("g"), V("ys"))),
     build=lambda m: fl.map(lambda p: fl.pair(fl.fst(p), beta(m.g, fl.snd(p))), fl.zip(m.xs, m.ys)),
     example=_ex_zip_map_snd,
     doc="With map fusion, a map over a zip with a computed array becomes one loop.")


def _ex_zip_map_fst(rng):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    prog = fl.fun([inst.array(n, inst.f32), inst.array(n, inst.f32)],
                  lambda xs, ys: fl.map(lambda p: fl.fst(p) - fl.snd(p), fl.zip(fl.map(f, xs), ys)))
    return prog, (inst.data(rng, n), inst.data(rng, n)), {}


rule("zip_map_fst", "fusion", "zip (map f xs) ys -> map (fun(p) => pair (f (fst p)) (snd p)) (zip xs ys)",
     lhs=P("zip", P("map", V("f"), V("xs")), V("ys")),
     build=lambda m: fl.map(lambda p: fl.pair(beta(m.f, fl.fst(p)), fl.snd(p)), fl.zip(m.xs, m.ys)),
     example=_ex_zip_map_fst,
     doc="zip_map_snd's mirror: a computed array zipped with one that is not (K-Means' distances with their "
         "indices, `zip (map dist cs) (generate k id)`) fuses into the consumer's loop instead of being stored.")


# ------------------------------------------------------------ vectorised reductions

# Operators with a lane-wise vector form (the same primitive at type vec[s, w]):
# associative and commutative, with their neutral elements (for f32; ints below).
_VECTOR_MONOIDS = {"add": 0.0, "mul": 1.0, "max": float("-inf"), "min": float("inf")}


def _operator(f):
    """The primitive name of `f` when it is `op` or `fun(a, b) => op a b` (either order:
    the operators are commutative); else None."""
    if isinstance(f, Prim) and not f.params:
        return f.name
    if not (isinstance(f, Lambda) and isinstance(f.body, Lambda)):
        return None
    head, args = spine(f.body.body)
    names = {f.param.name, f.body.param.name}
    if (isinstance(head, Prim) and len(args) == 2 and len(names) == 2
            and all(isinstance(a, Identifier) for a in args) and {a.name for a in args} == names):
        return head.name
    return None


def _neutral(op: str, t: ScalarType):
    if t.name in ("i32", "u32") and op in ("max", "min"):
        info = np.iinfo(t.dtype)
        return info.min if op == "max" else info.max
    return _VECTOR_MONOIDS[op]


def _reduce_vectorize_side(m):
    op = _operator(m.f)
    if op not in _VECTOR_MONOIDS:
        return "the operator has no lane-wise vector form (add, mul, max, min)"
    t = m.xs.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ScalarType) and t.elem.name != "bool"):
        return "only reductions of numeric scalars are vectorised"
    # z occurs once per lane and once more: the equation needs it to be f's neutral element
    if not (isinstance(m.z, Literal) and float(m.z.value) == float(_neutral(op, t.elem))):
        return f"the initial value {m.z} is not the neutral element of {op}"
    return None if divides(m.w, t.size) else f"{m.w} does not divide the length {t.size}"


def _reduce_vectorize_build(m):
    vector_op = Prim(_operator(m.f))  # the same primitive, inferred at the vector type
    splat = fl.cast(VectorType(m.xs.t.elem, m.w), m.z)
    lanes = fl.reduce(vector_op, splat, fl.as_vector(m.w, m.xs))
    return fl.let(lanes, lambda v: fl.reduce(m.f, m.z, fl.as_scalar(fl.generate(1, lambda i: v))))


_OPERATOR_FORMS = {  # the monoid's operator as a primitive or as a lambda (both match)
    "prim": lambda op: op,
    "lambda": lambda op: fl.lam(lambda a, b: op(a, b)),
}


def _ex_reduce_vectorize(rng):
    w = int(rng.choice([2, 4, 8]))
    op, z = inst.pick(rng, inst.MONOIDS)
    f = _OPERATOR_FORMS[str(rng.choice(list(_OPERATOR_FORMS)))](op)
    if rng.random() < 0.5:  # the whole array
        total = inst.size(rng, w)
        prog = inst.vector_program(inst.length(rng, total, w), lambda xs: fl.reduce(f, z, xs))
        return prog, (inst.data(rng, total, monoid=(op, z)),), {"w": w}
    rows, n = inst.size(rng), inst.size(rng, w)  # inside a map: reduce_split's partial reductions
    prog = inst.vector_program(rows * n, lambda xs: fl.map(lambda c: fl.reduce(f, z, c), fl.split(n, xs)))
    return prog, (inst.data(rng, rows * n, monoid=(op, z)),), {"w": w}


rule("reduce_vectorize", "vectorisation",
     "reduce f z xs -> let (reduce f (cast vec[s, w] z) (as_vector w xs)) "
     "(fun(v) => reduce f z (as_scalar (generate 1 (fun(i) => v))))   "
     "(f in add, mul, max, min; z its neutral element; w divides the length)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), params=("w",), side=_reduce_vectorize_side,
     build=_reduce_vectorize_build, exact=False, example=_ex_reduce_vectorize,
     doc="Proof: lane k of the vector reduction is z f x_k f x_(k+w) f ... (f lane-wise, splat z neutral in "
         "every lane); reducing the w lanes from z gives z f (every x_i once), which equals reduce f z xs "
         "because f is associative and commutative.  The let computes the vector once (a private "
         "accumulator); `as_scalar (generate 1 (fun(i) => v))` is v's lanes as an array.")


_LANE_WISE = ("add", "sub", "mul", "max", "min")
# OpenCL built-ins defined lane-wise on float vectors (the interpreter's ufuncs act element-wise too)
_LANE_WISE_FLOAT = {"neg": 1, "abs": 1, "sqrt": 1, "rsqrt": 1, "exp": 1, "exp2": 1, "log": 1, "log2": 1, "sin": 1,
                    "cos": 1, "tanh": 1, "erf": 1, "erfc": 1, "floor": 1, "ceil": 1, "div": 2, "fma": 3}


def _lanes_of(e, p: str, vt):
    """E, a function of the element p, at every lane at once: `p` and its projections
    (`fst p`, `snd (snd p)`, ...: the element of a zip of zips) are a lane's values (read from
    vectors), every scalar subterm not mentioning p is the same for all lanes (cast to a
    vector: a broadcast), arithmetic (and, on floats, division, fma and the math built-ins
    sqrt, exp, log, sin, cos, abs, neg) applies lane-wise, a pair of such is a pair of
    vectors; None when E is not of that form."""
    from ..algebra import _projection

    if p not in free_identifiers(e):
        return fl.cast(vt, e) if e.t == vt.elem else None
    if _projection(e, p) is not None:
        return e if isinstance(e.t, ScalarType) else None
    head, args = spine(e)
    if not (isinstance(head, Prim) and not head.params):
        return None
    arity = 2 if head.name in _LANE_WISE or head.name == "pair" else (
        _LANE_WISE_FLOAT.get(head.name) if vt.elem.is_float else None)
    if arity is None or len(args) != arity:
        return None
    parts = [_lanes_of(a, p, vt) for a in args]
    if None in parts:
        return None
    out = head
    for part in parts:
        out = App(out, part)
    return out


def zip_leaves(xs, scalars: bool = True):
    """The arrays that `xs` reads element by element: (xs,) for one, the leaves of `zip a b`
    (zips nested to any depth: `zip a (zip b c)`) in order; with `scalars`, None unless every
    leaf is an array of numeric scalars."""
    def fits(t):
        return not scalars or (isinstance(t, ArrayType) and isinstance(t.elem, ScalarType) and t.elem.name != "bool")

    head, args = spine(xs)
    if isinstance(head, Prim) and head.name == "zip" and len(args) == 2:
        parts = [zip_leaves(a, scalars) for a in args]
        return None if None in parts else parts[0] + parts[1]
    return (xs,) if fits(xs.t) else None


def _rezip(xs, leaf):
    """`xs` (an array or zips of arrays) with each leaf array a replaced by leaf(a)."""
    head, args = spine(xs)
    if isinstance(head, Prim) and head.name == "zip" and len(args) == 2:
        return fl.zip(_rezip(args[0], leaf), _rezip(args[1], leaf))
    return leaf(xs)


def _scalar_leaves(t):
    """The scalar types of `t`'s components (t a scalar or nested tuples of scalars), else None."""
    if isinstance(t, ScalarType):
        return (t,)
    if isinstance(t, TupleType):
        parts = [_scalar_leaves(x) for x in t.elems]
        return None if None in parts else tuple(x for part in parts for x in part)
    return None


def _monoid_leaves(form):
    """The primitives of a scalar or tuple form; an n-array form (algebra.Elementwise) has no
    lane-wise vector form here: None."""
    if isinstance(form, str):
        return (form,)
    if isinstance(form, tuple):
        return tuple(x for part in form for x in _monoid_leaves(part))
    return (None,)


def _function_as_lambda(g):
    """The map's function g as a typed lambda: a lambda as it is, a bare scalar primitive
    (`map abs xs`) eta-expanded to `fun(x) => abs x`; None for another function."""
    if isinstance(g, Lambda):
        return g
    if not (isinstance(g, Prim) and isinstance(g.t, FunType) and isinstance(g.t.param, ScalarType)
            and isinstance(g.t.result, ScalarType)):
        return None
    x = Identifier(fresh_name("x", g.free_names), t=g.t.param)
    return Lambda(x, App(g, x, t=g.t.result), t=g.t)


def _reduce_map_side(m):
    from .. import algebra

    form = algebra.operator_form(m.f)
    if form is None or not all(op in _VECTOR_MONOIDS for op in _monoid_leaves(form)):
        return "the operator has no lane-wise vector form (add, mul, max, min, or a tuple of them component-wise)"
    parts = _lane_inputs(m.g, m.xs)
    if isinstance(parts, str):
        return parts
    g, arrays, t = parts
    leaves = _scalar_leaves(g.body.t)
    if not (leaves and all(x == t and x.name != "bool" for x in leaves) and all(a.t.elem == t for a in arrays)):
        return "the map does not compute scalars (or tuples of them) of its inputs' type"
    if not algebra.neutral(m.f, m.z):
        return f"the initial value {m.z} is not the neutral element of the operator"
    if _lanes_of(g.body, g.param.name, VectorType(t, m.w)) is None:
        return ("the map's function is not lane-wise (arithmetic, the math built-ins, pairs) in its element")
    return None if divides(m.w, length(m.xs)) else f"{m.w} does not divide the length {length(m.xs)}"


def _vector_operator(form):
    """The operator of monoid form `form` (algebra.operator_form), inferred at vector types:
    a primitive, or a lambda combining tuples component-wise."""
    if isinstance(form, str):
        return Prim(form)

    def combine(f, a, b):
        if isinstance(f, str):
            return App(App(Prim(f), a), b)
        return fl.pair(*(combine(part, getter(a), getter(b)) for part, getter in zip(f, (fl.fst, fl.snd))))

    return fl.lam(lambda a, b: combine(form, a, b))


def _splat(z, vt_of):
    """The initial value `z` (a literal or pairs of them) in every lane."""
    head, args = spine(z)
    if isinstance(head, Prim) and head.name == "pair" and len(args) == 2:
        return fl.pair(_splat(args[0], vt_of), _splat(args[1], vt_of))
    return fl.cast(vt_of, z)


def _fold_lanes(form, z, v):
    """The lanes of the vector accumulator v (pairs of vectors for a tuple operator) folded
    from z, component by component."""
    head, args = spine(z)
    if isinstance(form, tuple):
        return fl.pair(*(_fold_lanes(part, zpart, getter(v))
                         for part, zpart, getter in zip(form, args, (fl.fst, fl.snd))))
    return fl.reduce(Prim(form), z, fl.as_scalar(fl.generate(1, lambda i: v)))


def _reduce_map_build(m):
    from .. import algebra

    form = algebra.operator_form(m.f)
    vt = VectorType(zip_leaves(m.xs)[0].t.elem, m.w)
    vectors = _rezip(m.xs, lambda a: fl.as_vector(m.w, a))
    scalar_g = _function_as_lambda(m.g)
    g = Lambda(scalar_g.param, _lanes_of(scalar_g.body, scalar_g.param.name, vt))
    lanes = fl.reduce(_vector_operator(form), _splat(m.z, vt), fl.map(g, vectors))
    if isinstance(form, str):
        return fl.let(lanes, lambda v: fl.reduce(m.f, m.z, fl.as_scalar(fl.generate(1, lambda i: v))))
    return fl.let(lanes, lambda v: _fold_lanes(form, m.z, v))


def _ex_reduce_map(rng):
    w = int(rng.choice([2, 4, 8, 16]))
    op, z = inst.pick(rng, inst.MONOIDS)
    f = _OPERATOR_FORMS[str(rng.choice(list(_OPERATOR_FORMS)))](op)
    n = inst.size(rng, w)
    kind = rng.integers(5)
    if kind == 4:  # a bare primitive as the map's function (no lambda)
        prog = fl.fun([array(n, f32)], lambda xs: fl.reduce(f, z, fl.map(fl.abs, xs)))
        return prog, (inst.data(rng, n, monoid=(op, z)),), {"w": w}
    if kind == 0:  # a dot-product form: two arrays zipped, a constant broadcast
        prog = fl.fun([array(n, f32), array(n, f32)], lambda xs, ys: fl.reduce(
            f, z, fl.map(lambda p: fl.fst(p) * fl.snd(p) - 0.5, fl.zip(xs, ys))))
        return prog, (inst.data(rng, n, monoid=(op, z)), inst.data(rng, n, monoid=(op, z))), {"w": w}
    if kind == 1:  # three arrays in nested zips, a math built-in, a pair of sums (MRI-Q's form)
        def pairwise(a, b):
            return fl.pair(fl.fst(a) + fl.fst(b), fl.snd(a) + fl.snd(b))

        prog = fl.fun([array(n, f32)] * 3, lambda xs, ys, zs: fl.reduce(
            pairwise, fl.pair(0.0, 0.0), fl.map(lambda p: fl.pair(
                fl.fst(fl.snd(p)) * fl.cos(fl.fst(p) * 2.0), fl.snd(fl.snd(p)) * fl.sin(fl.fst(p)) / 3.0),
                fl.zip(xs, fl.zip(ys, zs)))))
        return prog, tuple(inst.data(rng, n) for _ in range(3)), {"w": w}
    if kind == 2:  # a math built-in of one array
        prog = fl.fun([array(n, f32)], lambda xs: fl.reduce(f, z, fl.map(lambda x: fl.sqrt(fl.abs(x)) + x, xs)))
        return prog, (inst.data(rng, n),), {"w": w}
    rows = inst.size(rng)  # inside a map, one array
    prog = fl.fun([array(rows, array(n, f32))], lambda xss: fl.map(
        lambda xs: fl.reduce(f, z, fl.map(lambda x: x * x + x, xs)), xss))
    return prog, (inst.data(rng, rows, n, monoid=(op, z)),), {"w": w}


rule("reduce_vectorize_map", "vectorisation",
     "reduce f z (map g (zip xs ys)) -> let (reduce f (cast vec[s, w] z) (map g' (zip (as_vector w xs) "
     "(as_vector w ys)))) (fun(v) => reduce f z (as_scalar (generate 1 (fun(i) => v))))   (also map g xs and "
     "zips of zips; g' = g lane-wise: its terms without the element cast to vectors, arithmetic and math "
     "built-ins on vectors; f in add, mul, max, min, or a tuple of them component-wise, z its neutral element, "
     "splat and folded per component; w divides the length)",
     lhs=P("reduce", V("f"), V("z"), P("map", V("g"), V("xs"))), params=("w",), side=_reduce_map_side,
     build=_reduce_map_build, exact=False, example=_ex_reduce_map,
     doc="reduce_vectorize with the map computed on vectors: w elements of each input read at once "
         "and g applied to them lane-wise, so no array of g's results is stored (reduce_vectorize on "
         "`map g xs` vectorises the stored results).  Proof: map g xs as vectors of w lanes is "
         "map g' (as_vector w xs) when g is lane-wise arithmetic (each lane computes g of its element, a "
         "broadcast term is the same in every lane); then reduce_vectorize's proof.")


def item_reduction(f):
    """(path in f's body, reduction) of the first reduction of `fun(p) => E` reachable without
    entering a function, or None."""
    stack = [(f.body, ())]
    while stack:
        x, path = stack.pop()
        head, args = spine(x)
        if isinstance(head, Prim) and head.name == "reduce" and len(args) == 3:
            return path, x
        if not isinstance(x, Lambda):
            stack.extend((c, path + (k,)) for k, c in reversed(list(enumerate(x.children()))))
    return None


def _stages_side(m):
    from .. import algebra

    if not isinstance(m.f, Lambda):
        return "the map's function is not a lambda"
    found = item_reduction(m.f)
    if found is None:
        return "the map's function has no reduction outside functions"
    op, z, data = spine(found[1])[1]
    if not (algebra.associative(op) and algebra.neutral(op, z)):
        return "the reduction's operator is not provably associative with z its neutral element"
    n = length(data)
    if not divides(m.r, n):  # one chunk (r = n) is allowed: the macro split_k offers every divisor
        return f"{m.r} does not divide the reduction's length {n}"
    return None


def _stages_build(m):
    from ..expr import substitute
    from ..strategies import replace_at

    path, red = item_reduction(m.f)
    op, z, data = spine(red)[1]
    p = m.f.param
    chunks = length(data) * (1 / as_nat(m.r))
    dh, dargs = spine(data)
    mapped = isinstance(dh, Prim) and dh.name == "map" and len(dargs) == 2

    def chunk(k):  # chunk k of the data, a view (a map's function applied to the chunk of its input)
        if mapped:
            return fl.map(dargs[0], fl.at(fl.split(m.r, dargs[1]), k))
        return fl.at(fl.split(m.r, data), k)

    def partials(k):
        return fl.map(lambda q: substitute(fl.reduce(op, z, chunk(k)), p.name, q), m.xs)

    stage = fl.map(partials, fl.generate(chunks, lambda i: i))

    def finish(P):
        def one(q):
            body = replace_at(m.f.body, path, fl.reduce(op, z, fl.fst(q)))
            return substitute(body, p.name, fl.snd(q))

        return fl.map(one, fl.zip(fl.transpose(P), m.xs))

    return fl.let(stage, finish)


def _ex_stages(rng):
    w = int(rng.choice([1, 4]))
    chunk = int(rng.choice([2, 4, 8]))
    rows, cols = chunk * int(rng.integers(2, 5)), w * int(rng.integers(1, 4))
    if rng.random() < 0.5:  # any monoid, the columns reduced as they are
        op, z = inst.pick(rng, inst.MONOIDS)
        prog = fl.fun([array(rows, array(cols, f32))], lambda a: fl.map(lambda c: fl.reduce(op, z, c), fl.transpose(a)))
        return prog, (inst.data(rng, rows, cols, monoid=(op, z)),), {"r": chunk}
    prog = fl.fun([array(rows, array(cols, f32)), array(rows, f32), array(cols, f32)], lambda a, x, y: fl.map(
        lambda p: 2.0 * fl.reduce(fl.add, 0.0, fl.map(lambda q: fl.fst(q) * fl.snd(q), fl.zip(fl.fst(p), x)))
        - fl.snd(p), fl.zip(fl.transpose(a), y)))
    return prog, (inst.data(rng, rows, cols), inst.data(rng, rows), inst.data(rng, cols)), {"r": chunk}


rule("map_reduce_stages", "reduce",
     "map (fun(p) => E[reduce f z D]) xs -> let (map (fun(k) => map (fun(p) => reduce f z (at (split r D) k)) xs) "
     "(generate (n/r) (fun(i) => i))) (fun(P) => map (fun(q) => E[reduce f z (fst q)][p := snd q]) "
     "(zip (transpose P) xs))   (f associative, z neutral, r divides D's length n; D = map g D0 is cut as "
     "map g (at (split r D0) k))",
     lhs=P("map", V("f"), V("xs")), params=("r",), side=_stages_side, build=_stages_build, exact=False,
     example=_ex_stages,
     doc="Each element's reduction in n/r chunks of r, the chunks' partial results of every element computed "
         "first (a stage over chunks x elements: chunk k of every element's data read together), then "
         "each element's partials reduced.  Proof: reduce f z D = reduce f z (map (reduce f z) (split r D)) "
         "for f associative and z neutral (reduce_split); the partials of element p are column p of P.")


def _nest_parts(m):
    """(inner map's function, its ys, the reduction's path and node, D's map function or None,
    D's zip operands) of `map (fun(p) => map (fun(q) => E[reduce f z D]) ys) xs`, or why not."""
    if not isinstance(m.f, Lambda):
        return "the map's function is not a lambda"
    head, args = spine(m.f.body)
    if not (isinstance(head, Prim) and head.name == "map" and len(args) == 2 and isinstance(args[0], Lambda)):
        return "the map's function is not a map over a lambda (a 2D nest)"
    inner, ys = args
    if m.f.param.name in free_identifiers(ys):
        return "the inner map's data depends on the outer element: not a rectangular nest"
    found = item_reduction(inner)
    if found is None:
        return "the inner function has no reduction outside functions"
    dh, dargs = spine(spine(found[1])[1][2])
    g = None
    if isinstance(dh, Prim) and dh.name == "map" and len(dargs) == 2:
        g, (dh, dargs) = dargs[0], spine(dargs[1])
    names = {m.f.param.name, inner.param.name}
    if not (isinstance(dh, Prim) and dh.name == "zip" and len(dargs) == 2
            and all(isinstance(a, Identifier) for a in dargs) and {a.name for a in dargs} == names):
        return "the reduction's data is not [map g] (zip p q) of the two elements"
    if g is not None and free_identifiers(g) & names:
        return "the reduction's map function mentions the nest's elements"
    return inner, ys, found, g, dargs


def _nest_stages_side(m):
    from .. import algebra

    parts = _nest_parts(m)
    if isinstance(parts, str):
        return parts
    op, z, data = spine(parts[2][1])[1]
    if not (algebra.associative(op) and algebra.neutral(op, z)):
        return "the reduction's operator is not provably associative with z its neutral element"
    n = length(data)
    if not divides(m.r, n):
        return f"{m.r} does not divide the reduction's length {n}"
    return None


def _nest_stages_build(m):
    from ..expr import substitute
    from ..strategies import replace_at

    inner, ys, (path, red), g, operands = _nest_parts(m)
    op, z, data = spine(red)[1]
    p, q = m.f.param, inner.param
    chunks = length(data) * (1 / as_nat(m.r))

    def chunked(rows, k):  # each element's chunk k, a view
        return fl.map(lambda x: fl.at(fl.split(m.r, x), k), rows)

    def dot(a, b):  # D with the chunks for p and q
        chunk_of = {p.name: a, q.name: b}
        zipped = fl.zip(*(chunk_of[o.name] for o in operands))
        return fl.reduce(op, z, fl.map(g, zipped) if g is not None else zipped)

    stage = fl.map(lambda k: fl.map(lambda a: fl.map(lambda b: dot(a, b), chunked(ys, k)), chunked(m.xs, k)),
                   fl.generate(chunks, lambda i: i))

    def finish(P):
        def row(a):
            def one(b):
                body = replace_at(inner.body, path, fl.reduce(op, z, fl.fst(b)))
                return substitute(substitute(body, q.name, fl.snd(b)), p.name, fl.snd(a))

            return fl.map(one, fl.zip(fl.transpose(fl.fst(a)), ys))

        return fl.map(row, fl.zip(fl.transpose(P), m.xs))

    return fl.let(stage, finish)


def _ex_nest_stages(rng):
    chunk = int(rng.choice([2, 4, 8]))
    rows, cols, k = int(rng.integers(1, 5)), int(rng.integers(1, 5)), chunk * int(rng.integers(1, 4))
    a_t, b_t = array(rows, array(k, f32)), array(k, array(cols, f32))
    if rng.random() < 0.5:  # a matrix product
        prog = fl.fun([a_t, b_t], lambda a, b: fl.map(lambda x: fl.map(lambda y: fl.reduce(
            fl.add, 0.0, fl.map(lambda t: fl.fst(t) * fl.snd(t), fl.zip(x, y))), fl.transpose(b)), a))
        return prog, (inst.data(rng, rows, k), inst.data(rng, k, cols)), {"r": chunk}
    # any monoid over the pairs (the zip's operands the other way round), inside arithmetic of both elements
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = fl.fun([a_t, b_t], lambda a, b: fl.map(lambda x: fl.map(lambda y: 0.5 * fl.reduce(
        op, z, fl.map(lambda t: fl.snd(t), fl.zip(y, x))) + fl.at(y, 0), fl.transpose(b)), a))
    return prog, (inst.data(rng, rows, k, monoid=(op, z)), inst.data(rng, k, cols, monoid=(op, z))), {"r": chunk}


rule("nest_reduce_stages", "reduce",
     "map (fun(p) => map (fun(q) => E[reduce f z (map g (zip p q))]) ys) xs -> let (map (fun(k) => "
     "map (fun(a) => map (fun(b) => reduce f z (map g (zip a b))) (map (fun(y) => at (split r y) k) ys)) "
     "(map (fun(x) => at (split r x) k) xs)) (generate (n/r) (fun(i) => i))) (fun(P) => map (fun(u) => "
     "map (fun(v) => E[reduce f z (fst v)][p := snd u, q := snd v]) (zip (transpose (fst u)) ys)) "
     "(zip (transpose P) xs))   (f associative, z neutral, r divides n; ys free of p; the zip's operands "
     "in either order, g free of p and q, or no map g)",
     lhs=P("map", V("f"), V("xs")), params=("r",), side=_nest_stages_side, build=_nest_stages_build, exact=False,
     example=_ex_nest_stages,
     doc="Split-k of a 2D nest of reductions (mm's): every element's reduction in n/r chunks of r, chunk k "
         "of every element computed by the same nest over chunk k of the rows of xs and of ys (a 3D map: "
         "chunks x xs x ys, as many independent products as chunks), then each element's n/r partials "
         "reduced.  Proof: reduce f z (map g (zip p q)) = reduce f z (map (fun(k) => reduce f z (map g "
         "(zip (at (split r p) k) (at (split r q) k)))) (generate (n/r) id)) for f associative and z "
         "neutral (reduce_split; split distributes over zip and map); the partials of (p, q) are P[.][p][q].")


class _NotLaneWise(Exception):
    pass


def column_parts(xs):
    """The components of a map's data whose elements vectorise across w neighbouring
    elements: `transpose a` (a column of a: its rows read w at once) and arrays of scalars,
    alone or zipped (one zip of two); each as (kind, array) with kind "col" or "lane"."""
    def part(x):
        head, args = spine(x)
        t = x.t
        if (isinstance(head, Prim) and head.name == "transpose" and len(args) == 1 and isinstance(t, ArrayType)
                and isinstance(t.elem, ArrayType) and isinstance(t.elem.elem, ScalarType) and t.elem.elem.name != "bool"):
            return ("col", args[0])
        if isinstance(t, ArrayType) and isinstance(t.elem, ScalarType) and t.elem.name != "bool":
            return ("lane", x)
        return None

    head, args = spine(xs)
    parts = [part(a) for a in args] if isinstance(head, Prim) and head.name == "zip" and len(args) == 2 else [part(xs)]
    return None if None in parts or all(k == "lane" for k, _ in parts) else tuple(parts)


def _lift(e, env: dict, vt):
    """(e at w lanes, kind): `env` gives the identifiers whose values differ per lane, by
    kind ("vec" a scalar per lane, "col" an array of such, ("pair", k1, k2)); kind "uniform"
    for what no lane changes (kept, and cast to a vector where it meets lanes).  Raises
    _NotLaneWise for a form with no lane-wise meaning here."""
    if not (free_identifiers(e) & set(env)):
        return e, "uniform"
    if isinstance(e, Identifier):
        return e, env[e.name]
    head, args = spine(e)
    if not isinstance(head, Prim):
        raise _NotLaneWise(f"{e}")
    name = head.name
    if name in ("fst", "snd") and len(args) == 1:
        inner, kind = _lift(args[0], env, vt)
        if not (isinstance(kind, tuple) and kind[0] == "pair"):
            raise _NotLaneWise(f"{e}")
        return App(head, inner), kind[1] if name == "fst" else kind[2]
    if name in _LANE_WISE and len(args) == 2:
        parts = [_lift(a, env, vt) for a in args]
        if any(k not in ("vec", "uniform") for _, k in parts) or any(
                k == "uniform" and not isinstance(a.t, ScalarType) for a, (_, k) in zip(args, parts)):
            raise _NotLaneWise(f"{e}")
        lifted = [x if k == "vec" else fl.cast(vt, x) for x, k in parts]
        return App(App(head, lifted[0]), lifted[1]), "vec"
    if name == "zip" and len(args) == 2:
        parts = [_lift(a, env, vt) for a in args]
        if any(k not in ("col", "uniform") for _, k in parts):
            raise _NotLaneWise(f"{e}")
        return fl.zip(parts[0][0], parts[1][0]), ("zip", parts[0][1], parts[1][1])
    if name == "map" and len(args) == 2 and isinstance(args[0], Lambda):
        data, kind = _lift(args[1], env, vt)
        element = {"col": "vec", "uniform": "uniform"}
        if kind == "col":
            param_kind = "vec"
        elif isinstance(kind, tuple) and kind[0] == "zip":
            param_kind = ("pair", element[kind[1]], element[kind[2]])
        else:
            raise _NotLaneWise(f"{e}")
        f = args[0]
        body, body_kind = _lift(f.body, {**env, f.param.name: param_kind}, vt)
        if body_kind != "vec":
            raise _NotLaneWise(f"{e}")
        return fl.map(Lambda(f.param, body), data), "col"
    if name == "reduce" and len(args) == 3:
        lanes = set(env)
        if (_operator(args[0]) not in _VECTOR_MONOIDS or free_identifiers(args[0]) & lanes
                or free_identifiers(args[1]) & lanes or not isinstance(args[1].t, ScalarType)):
            raise _NotLaneWise(f"{e}")
        op = _operator(args[0])
        data, kind = _lift(args[2], env, vt)
        if kind != "col":
            raise _NotLaneWise(f"{e}")
        return fl.reduce(Prim(op), fl.cast(vt, args[1]), data), "vec"
    raise _NotLaneWise(f"{e}")


def _columns_lifted(m):
    parts = column_parts(m.xs)
    f = m.f
    vt = VectorType(f.body.t, m.w)
    kinds = [{"col": "col", "lane": "vec"}[k] for k, _ in parts]  # the element's: a column, a scalar
    param = kinds[0] if len(kinds) == 1 else ("pair", *kinds)
    body, kind = _lift(f.body, {f.param.name: param}, vt)
    if kind != "vec":
        raise _NotLaneWise(f"{f.body}")
    vectors = [fl.transpose(fl.map(lambda r: fl.as_vector(m.w, r), a)) if k == "col" else fl.as_vector(m.w, a)
               for k, a in parts]
    data = vectors[0] if len(vectors) == 1 else fl.zip(*vectors)
    return Lambda(f.param, body), data


def _columns_side(m):
    if not isinstance(m.f, Lambda):
        return "the map's function is not a lambda"
    if column_parts(m.xs) is None:
        return "the map reads no columns of a transpose (alone or zipped with an array of scalars)"
    t = m.f.body.t
    if not (isinstance(t, ScalarType) and t.name != "bool"):
        return "the map does not compute numeric scalars"
    if not divides(m.w, length(m.xs)):
        return f"{m.w} does not divide the length {length(m.xs)}"
    try:
        _columns_lifted(m)
    except _NotLaneWise as why:
        return f"the map's function is not lane-wise in its element: {why}"
    return None


def _columns_build(m):
    f, data = _columns_lifted(m)
    return fl.as_scalar(fl.map(f, data))


def _ex_columns(rng):
    w = int(rng.choice([2, 4, 8]))
    rows, cols = inst.size(rng), inst.size(rng, w)
    if rng.random() < 0.5:  # A^T x + y
        prog = fl.fun([array(rows, array(cols, f32)), array(rows, f32), array(cols, f32)], lambda a, x, y: fl.map(
            lambda p: 2.0 * fl.reduce(fl.add, 0.0, fl.map(lambda q: fl.fst(q) * fl.snd(q), fl.zip(fl.fst(p), x)))
            - fl.snd(p), fl.zip(fl.transpose(a), y)))
        return prog, (inst.data(rng, rows, cols), inst.data(rng, rows), inst.data(rng, cols)), {"w": w}
    prog = fl.fun([array(rows, array(cols, f32))], lambda a: fl.map(
        lambda c: fl.reduce(fl.max, float("-inf"), fl.map(lambda v: v * v, c)), fl.transpose(a)))
    return prog, (inst.data(rng, rows, cols),), {"w": w}


rule("vectorize_columns", "vectorisation",
     "map (fun(p) => E) (zip (transpose a) y) -> as_scalar (map (fun(p) => E') (zip (transpose (map (fun(r) => "
     "as_vector w r) a)) (as_vector w y)))   (also transpose a alone; E' = E at w columns at once: a column's "
     "elements and y's are vectors, arithmetic lane-wise, reductions over vectors, what no column changes cast)",
     lhs=P("map", V("f"), V("xs")), params=("w",), side=_columns_side, build=_columns_build, example=_ex_columns,
     doc="w neighbouring columns of a are computed at once, lane k of every vector being column k of "
         "the group: a row's w elements of the group are read as one vector, as are w elements of y.  "
         "Exact: each lane runs its column's computation in the same order (a reduction's lanes are "
         "independent folds of the same operator, lane-wise).")


def _take_drop_side(m):
    """Constant sizes: both parts non-empty (an empty one gains nothing).  Symbolic ones:
    a part may be empty at some sizes (m = c * (n // c) is 0 for n < c), which the proof
    allows: the fold of no elements is its start."""
    return cut_within(length(m.xs), m.m)


def _ex_take_drop(rng):
    op, z = inst.pick(rng, inst.MONOIDS)
    f = inst.pick(rng, [op, lambda a, b: a - b * 0.5])  # any operator: a left fold regroups at any point
    if rng.random() < 0.5:
        total = inst.size(rng, 1, 2, 9)
        n, k = total, int(rng.integers(1, total))
    else:  # symbolic: the default lowering's cut c * (N // c), empty when N < c and all of N when c divides it
        multiple = int(rng.choice([1, 1, 2]))
        total = inst.size(rng, multiple, 1, 9)
        n = nat("N", multiple_of=multiple)
        c = int(rng.choice([2, 3, 4, 32]))
        k = c * (n // c)
        if k == n:
            k = n - 1
    prog = inst.vector_program(n, lambda xs: fl.reduce(f, z, xs))
    return prog, (inst.data(rng, total, monoid=(op, z)),), {"m": k}


rule("reduce_take_drop", "reduce",
     "reduce f z xs -> reduce f (reduce f z (take m xs)) (drop m xs)   (the fold of the first m elements starts "
     "the fold of the rest; any f; inexact only because the interpreter sums floats pairwise)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), params=("m",), side=_take_drop_side, exact=False,
     build=lambda m: fl.reduce(m.f, fl.reduce(m.f, m.z, fl.take(m.m, m.xs)), fl.drop(m.m, m.xs)),
     example=_ex_take_drop,
     doc="Proof: z f x1 f ... f xn = (z f x1 f ... f xm) f x(m+1) f ... f xn, the left fold read in two parts.  "
         "It leaves a length with a divisor for the parallel stages and folds the remainder after them.")


def _neutral_init_side(m):
    from .. import algebra

    if not algebra.associative(m.f):
        return f"{_short(m.f)} is not known to be associative"
    if algebra.neutral(m.f, m.z):
        return "the initial value is already neutral"
    if algebra.neutral_element(m.f, m.z.t) is None:
        return f"no neutral element of {_short(m.f)} is known at {m.z.t}"
    return None


def _neutral_init_build(m):
    from .. import algebra

    rest = fl.reduce(m.f, algebra.neutral_element(m.f, m.z.t), m.xs)
    return App(App(m.f, m.z), rest)


def _ex_neutral_init(rng):
    total = inst.size(rng, 1, 1, 8)
    op, _ = inst.pick(rng, inst.MONOIDS[:1] + inst.MONOIDS[3:])  # add, mul: a finite non-neutral start
    prog = inst.vector_program(total, lambda xs: fl.reduce(op, 1.5, xs))
    return prog, (inst.data(rng, total, monoid=(op, 1.5)),), {}


rule("reduce_neutral_init", "reduce",
     "reduce f z xs -> f z (reduce f e xs)   (f associative, e its neutral element)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), side=_neutral_init_side, build=_neutral_init_build, exact=False,
     example=_ex_neutral_init,
     doc="Proof: z f x1 f ... f xn = z f (e f x1 f ... f xn) by associativity and e neutral.  The reduction "
         "then starts from a neutral element, which splitting it into partial reductions needs.")

def _fold_parts(body: Expr, a: str, path: tuple):
    """A fold step's body F as `op (a's component at path) G` per component, G free of a
    (or `op G (a's component)` for a commutative op): (form, G's term), with pairs for
    tuples, as functional.algebra.operator_form reads an operator; None for another form."""
    from .. import algebra

    head, args = spine(body)
    if isinstance(head, Prim) and head.name == "pair" and len(args) == 2:
        parts = [_fold_parts(x, a, path + (k,)) for k, x in enumerate(args)]
        return None if None in parts else ((parts[0][0], parts[1][0]), fl.pair(parts[0][1], parts[1][1]))
    if isinstance(head, Prim) and head.name in algebra._OPS and len(args) == 2:
        for mine, other in ((args[0], args[1]), (args[1], args[0]) if algebra._OPS[head.name] else (None, None)):
            if mine is not None and algebra._projection(mine, a) == path and a not in free_identifiers(other):
                return head.name, other
    return None


def _fold_fission_match(m):
    """(form, element term, element parameter) of the fold's step `fun(a, x) => F`."""
    from .. import algebra

    f = m.f
    if not (isinstance(f, Lambda) and isinstance(f.body, Lambda)) or algebra.operator_form(f) is not None:
        return None
    a, x = f.param.name, f.body.param
    if a == x.name:
        return None
    parts = _fold_parts(f.body.body, a, ())
    return None if parts is None else (parts[0], parts[1], x)


def _fold_fission_side(m):
    if _fold_fission_match(m) is None:
        return ("the step is not `fun(a, x) => op a (g x)` (a not free in g x), a commutative op's mirror "
                "image, or a pair of such component-wise (or it is an operator already)")
    return None


def _fold_fission_build(m):
    form, element, x = _fold_fission_match(m)
    return fl.reduce(_vector_operator(form), m.z, fl.map(Lambda(Identifier(x.name, x.decl), element), m.xs))


def _ex_fold_fission(rng):
    n = inst.size(rng, 1, 1, 9)
    kind = rng.integers(3)
    if kind == 0:  # asum as a fold
        prog = inst.vector_program(n, lambda xs: fl.reduce(lambda acc, x: acc + fl.abs(x), 0.5, xs))
    elif kind == 1:  # the accumulator second, a commutative op
        prog = inst.vector_program(n, lambda xs: fl.reduce(lambda acc, x: fl.max(x * x - 1.0, acc), -2.0, xs))
    else:  # a sum and a sum of squares of pairs in one fold, the second mirrored
        prog = fl.fun([array(n, f32), array(n, f32)], lambda xs, ys: fl.reduce(
            lambda acc, p: fl.pair(fl.fst(acc) + fl.fst(p), fl.snd(p) * fl.snd(p) + fl.snd(acc)),
            fl.pair(0.0, 1.0), fl.zip(xs, ys)))
        return prog, (inst.data(rng, n), inst.data(rng, n)), {}
    return prog, (inst.data(rng, n),), {}


rule("fold_fission", "reduce",
     "reduce (fun(a, x) => op a (g x)) z xs -> reduce op z (map (fun(x) => g x) xs)   (a not free in g x; also "
     "op (g x) a for a commutative op, and pairs of such component-wise)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), side=_fold_fission_side, build=_fold_fission_build, exact=False,
     example=_ex_fold_fission,
     doc="Proof: the left fold z f x1 f ... f xn with a f x = a op g(x) is z op g(x1) op ... op g(xn), the "
         "fold of op over map g xs, in the same order (a commutative op's mirror image op(g(x), a) is "
         "op(a, g(x))).  The step itself is not associative, the operator it applies is: the reduction can "
         "then run in parallel stages (a fold of |x| as asum).  Inexact only as every reduction of a monoid "
         "is: the interpreter and the stages may group the sum otherwise than the fold as written.")


def _reduce_concat_side(m):
    from .. import algebra

    if not algebra.associative(m.f):
        return f"{_short(m.f)} is not known to be associative"
    if algebra.neutral_element(m.f, m.z.t) is None:
        return f"no neutral element of {_short(m.f)} is known at {m.z.t}"
    return None


def _reduce_concat_build(m):
    from .. import algebra

    rest = fl.reduce(m.f, algebra.neutral_element(m.f, m.z.t), m.ys)
    return App(App(m.f, fl.reduce(m.f, m.z, m.xs)), rest)


def _ex_reduce_concat(rng):
    n, m = inst.size(rng, 1, 1, 7), inst.size(rng, 1, 1, 7)
    op, z = inst.pick(rng, inst.MONOIDS)
    start = 0.5 if op is fl.add else z  # a non-neutral start too
    prog = fl.fun([array(n, f32), array(m, f32)], lambda xs, ys: fl.reduce(op, start, fl.concat(xs, ys)))
    return prog, (inst.data(rng, n, monoid=(op, z)), inst.data(rng, m, monoid=(op, z))), {}


rule("reduce_concat", "reduce",
     "reduce f z (concat xs ys) -> f (reduce f z xs) (reduce f e ys)   (f associative, e its neutral element)",
     lhs=P("reduce", V("f"), V("z"), P("concat", V("xs"), V("ys"))), side=_reduce_concat_side,
     build=_reduce_concat_build, exact=False, example=_ex_reduce_concat,
     doc="Proof: z f x1 ... f xn f y1 ... f ym = (z f x1 ... f xn) f (e f y1 ... f ym) by associativity and "
         "e neutral.  Each part is then a reduction of one contiguous array, split into parallel stages "
         "whose chunks are read as vectors (a chunk across the two arrays could not be).")

rule("reduce_take_drop_shared", "reduce",
     "reduce f z xs -> let xs (fun(ys) => reduce f (reduce f z (take m ys)) (drop m ys))   (reduce_take_drop with xs "
     "computed once)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), params=("m",), side=_take_drop_side, exact=False,
     build=lambda m: fl.let(m.xs, lambda ys: fl.reduce(m.f, fl.reduce(m.f, m.z, fl.take(m.m, ys)), fl.drop(m.m, ys))),
     example=_ex_take_drop)


# ------------------------------------------------------------------------- hoisting


def _computes(e) -> bool:
    """`e` loops: a map that is not a view, a reduction or an iterate somewhere inside it."""
    from ..expr import walk
    from ..primitives import MAPS, REDUCTIONS, is_view_fn

    for x in walk(e):
        if isinstance(x, App) and isinstance(x.fun, Prim):
            name = x.fun.name
            if name in REDUCTIONS or name == "iterate" or (name in MAPS and not is_view_fn(x.arg)):
                return True
    return False


def invariant_site(f, bound: frozenset = frozenset(), path: tuple = ()):
    """The path (from `f`'s body) of the first outermost subterm of the body of function `f`
    that loops (see _computes), is data, and mentions none of the variables bound inside
    `f` (its parameters included): the same value for every element.  None if there is none."""
    body, binders = f, set(bound)
    while isinstance(body, Lambda):
        binders.add(body.param.name)
        body = body.body
        path = path + (0,)
    return _find_invariant(body, frozenset(binders), path)


def _find_invariant(e, binders: frozenset, path: tuple):
    from ..types import DataType

    if isinstance(e.t, DataType) and _computes(e) and not (free_identifiers(e) & binders):
        return path
    if isinstance(e, Lambda):
        return _find_invariant(e.body, binders | {e.param.name}, path + (0,))
    for k, c in enumerate(e.children()):
        found = _find_invariant(c, binders, path + (k,))
        if found is not None:
            return found
    return None


def _hoist_side(m):
    return None if invariant_site(m.f) is not None else "no loop in the function is the same for every element"


def _hoist_build(m):
    from ..strategies import at_path, replace_at

    path = invariant_site(m.f)
    value = at_path(m.f, path)
    taken = free_identifiers(m.root) | {x.name for x in _walk_all(m.f) if isinstance(x, Identifier)}
    name = next(n for n in (f"inv{k}" for k in range(1, 10_000)) if n not in taken)
    f = replace_at(m.f, path, Identifier(name, t=value.t))
    rest = [m.get(k) for k in ("z", "xs") if m.get(k) is not None]
    rebuilt = Prim(m.head)
    for a in [f] + rest:
        rebuilt = App(rebuilt, a)
    return fl.let(value, Lambda(Identifier(name, t=value.t), rebuilt))


def _walk_all(e):
    from ..expr import walk

    return walk(e)


def _ex_hoist(rng):
    m, n = inst.size(rng, 1, 2, 5), inst.size(rng, 1, 2, 5)
    prog = fl.fun([array(m, array(n, f32)), array(n, f32)], lambda a, x: fl.map(
        lambda row: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(
            row, fl.map(lambda y: y * 2.0, x)))), a))
    return prog, (inst.data(rng, m, n), inst.data(rng, n)), {}


rule("hoist_invariant", "hoisting",
     "map (fun(x) => B[E]) xs -> let E (fun(t) => map (fun(x) => B[t]) xs)   (E loops and mentions nothing "
     "bound in the function: computed once, not once per element; also reduce's function)",
     lhs=OneOf(P("map", V("f"), V("xs"), bind="head"), P("reduce", V("f"), V("z"), V("xs"), bind="head")),
     side=_hoist_side, build=_hoist_build, example=_ex_hoist,
     doc="Lift's and every compiler's loop-invariant code motion, as a rule: ATAX's A x inside the map over "
         "the columns of A is computed once.")


def _split_first_side(m):
    reason = monoid_side("associative", param="n", length_of="xs")(m)
    if reason:
        return reason
    n = m.n.as_int() if isinstance(m.n, Nat) else m.n
    return None if n is not None and n >= 2 else "chunks of at least 2 elements"


def _ex_split_first(rng):
    n = int(rng.choice([2, 4]))
    total = n * inst.size(rng, 1, 1, 4)
    if rng.random() < 0.3:  # an operator the program declares associative, from a non-neutral start
        prog = fl.fun([array(total, f32)], lambda xs: fl.reduce(fl.associative(lambda a, b: a + b * 1.0), 1.5, xs))
        return prog, (inst.data(rng, total),), {"n": n}
    prog = fl.fun([array(total, f32)], lambda xs: fl.reduce(
        lambda a, b: fl.select(fl.fst(a) <= fl.fst(b), a, b), fl.pair(fl.literal(float("inf"), f32), fl.literal(-1.0, f32)),
        fl.zip(xs, fl.generate(total, lambda i: fl.cast(f32, i)))))
    return prog, (inst.data(rng, total),), {"n": n}


rule("reduce_split_first", "reduce",
     "reduce f z xs -> reduce f z (map (fun(c) => reduce f (at c 0) (drop 1 c)) (split n xs))   (f associative; "
     "each chunk folds from its first element, so z need not be neutral)",
     lhs=P("reduce", V("f"), V("z"), V("xs")), params=("n",), side=_split_first_side, exact=False,
     build=lambda m: fl.reduce(m.f, m.z, fl.map(lambda c: fl.reduce(m.f, fl.at(c, 0), fl.drop(1, c)),
                                                fl.split(m.n, m.xs))),
     example=_ex_split_first,
     doc="Proof: z f x1 f ... f xn = z f (x1 f ... f xk) f (x(k+1) f ... f x2k) f ... by associativity alone.  "
         "For operators without a neutral element (argmin, argmax over (value, index) pairs).")


# ------------------------------------------------------------------------ declarations


def _ex_erase_associative(rng):
    total = inst.size(rng, 1, 1, 8)
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = inst.vector_program(inst.length(rng, total), lambda xs: fl.reduce(
        fl.associative(lambda a, b: fl.apply(op, a, b)), z, xs))
    return prog, (inst.data(rng, total, monoid=(op, z)),), {}


rule("erase_associative", "declaration",
     "associative f -> f   (the declaration has been read: the reductions are split already)",
     lhs=P("associative", V("f")), build=lambda m: m.f, example=_ex_erase_associative,
     doc="Proof: associative f a b = f a b.  The default lowering erases the declarations after its "
         "reductions phase, so the low-level program is the user's operator itself.")
