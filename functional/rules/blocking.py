"""Register blocking of a tile accumulator: the rules that give each work-item its own block
of a reduction's array accumulator, so that the block can live in registers.

    block_accumulator        reduce_seq (fun(a, x) => map2² f a (untile B)) z xs
                             -> untile (reduce_seq (fun(a, x) => map2² f (blocks of a) B) (tile z) xs)
    reduce_init_fusion       map2ᵈ f A (reduce_seq (fun(c, q) => map2ᵈ f c (H q)) Z ys)
                             -> reduce_seq (fun(c, q) => map2ᵈ f c (H q)) (map2ᵈ f A Z) ys   (f associative)
    write_reduction_unrolled reduce_seq g z xs -> (unrolled copy loops) (reduce_seq g z xs)

with `map2ᵈ f` the element-wise application of a binary f to d-dimensional arrays
(`map (fun(p) => f (fst p) (snd p)) (zip a b)` for d = 1, one `map` more per dimension),
`untile C = join (map (fun(r) => transpose (join (map transpose r))) C)` the layout that
puts an (n/l1).(m/l2).l1.l2 array of blocks back into n.m, and `tile` its inverse,
`tile Z = map (fun(r) => map transpose (split l2 (transpose r))) (split l1 Z)`.

Why `block_accumulator` holds: tile and untile are inverse permutations and map2² f works
element by element, so `map2² f a (untile B) = untile (map2² f (tile a) B)` (per block);
the accumulator of the new reduction is then `tile` of the old one after every step.
`reduce_init_fusion` folds A into the initial value: f(A, f(f(Z, h1), h2)) =
f(f(f(A, Z), h1), h2) by associativity (floating point: re-associated, so inexact).
"""

from __future__ import annotations

import attrs

from .. import dsl as fl
from ..expr import App, Expr, Identifier, Lambda, Prim, applied, free_identifiers, spine, substitute
from ..nat import divides
from ..types import ArrayType, VectorType, array, f32
from . import instances as inst
from .core import NotApplicable, P, V, rule

ASSOCIATIVE = {"add", "mul", "max", "min"}


# ------------------------------------------------------------------ shapes of terms


def _prim_app(e: Expr, name: str, nargs: int):
    """(head, arguments) when `e` is `name` applied to `nargs` arguments (see expr.applied)."""
    args = applied(e, name, nargs)
    return None if args is None else (spine(e)[0], args)


def _projection(e: Expr, which: str, of: str) -> bool:
    """`e` is `fst of` / `snd of`."""
    app = _prim_app(e, which, 1)
    return app is not None and isinstance(app[1][0], Identifier) and app[1][0].name == of


def elementwise_op(f: Expr) -> tuple[str | None, int] | None:
    """(binary operator, depth) when `f` is `map2ᵈ op` as a function of a pair: depth 0
    `fun(p) => op (fst p) (snd p)`, depth d `fun(p) => map F (zip (fst p) (snd p))` with F
    of depth d - 1.  The operator is None when the depth-0 body is any other function of
    the pair's components (still element-wise)."""
    if not isinstance(f, Lambda):
        return None
    p = f.param.name
    mapped = _prim_app(f.body, "map", 2)
    if mapped is not None:
        inner, data = mapped[1]
        zipped = _prim_app(data, "zip", 2)
        if zipped is None or not (_projection(zipped[1][0], "fst", p) and _projection(zipped[1][1], "snd", p)):
            return None
        below = elementwise_op(inner)
        return None if below is None else (below[0], below[1] + 1)
    head, args = spine(f.body)
    if isinstance(head, Prim) and len(args) == 2 and _projection(args[0], "fst", p) and _projection(args[1], "snd", p):
        return head.name, 0
    if not isinstance(f.body, Lambda) and not _has_array_use(f.body, p):
        return None, 0
    return None


def _has_array_use(e: Expr, p: str) -> bool:
    """`p` is used other than through `fst p` / `snd p` (then the function is not element-wise)."""
    if isinstance(e, Identifier):
        return e.name == p
    if _projection(e, "fst", p) or _projection(e, "snd", p):
        return False
    if isinstance(e, Lambda) and e.param.name == p:
        return False
    return any(_has_array_use(c, p) for c in e.children())


@attrs.frozen
class Lets:
    """The `let v (fun(y) => ...)` bindings around a reduction step's result."""

    binds: tuple  # ((value, Lambda), ...), outermost first
    result: Expr

    @staticmethod
    def peel(e: Expr) -> "Lets":
        binds = []
        while (app := _prim_app(e, "let", 2)) is not None and isinstance(app[1][1], Lambda):
            binds.append((app[1][0], app[1][1]))
            e = app[1][1].body
        return Lets(tuple(binds), e)

    def wrap(self, result: Expr) -> Expr:
        for value, f in reversed(self.binds):
            result = App(App(Prim("let"), value), attrs.evolve(f, body=result))
        return result

    def mentions(self, name: str) -> bool:
        return any(name in free_identifiers(v) for v, _ in self.binds)


def _side_of(parts):
    """A side condition from a function that takes a match apart (NotApplicable: why not)."""
    def side(m):
        try:
            parts(m)
        except NotApplicable as exc:
            return str(exc)
        return None

    return side


def _step(f: Expr):
    """(accumulator name, element lambda, Lets) of a reduction's `fun(a, x) => ...`."""
    if not (isinstance(f, Lambda) and isinstance(f.body, Lambda)):
        raise NotApplicable("the reduction's function is not fun(a, x) => ...")
    return f.param.name, f.body, Lets.peel(f.body.body)


# ------------------------------------------------------------------ block_accumulator


def _untiled_blocks(e: Expr):
    """(u, XS, v, YS, BLOCK) of `join (map (fun(u) => transpose (join (map (fun(v) =>
    transpose BLOCK) YS))) XS)`."""
    outer = _prim_app(e, "join", 1)
    rows = outer and _prim_app(outer[1][0], "map", 2)
    if not rows or not isinstance(rows[1][0], Lambda):
        return None
    row_fn, xs = rows[1]
    t1 = _prim_app(row_fn.body, "transpose", 1)
    inner = t1 and _prim_app(t1[1][0], "join", 1)
    cols = inner and _prim_app(inner[1][0], "map", 2)
    if not cols or not isinstance(cols[1][0], Lambda):
        return None
    col_fn, ys = cols[1]
    t2 = _prim_app(col_fn.body, "transpose", 1)
    if not t2:
        return None
    return row_fn.param.name, xs, col_fn.param.name, ys, t2[1][0]


def _block_parts(m):
    a, x_fn, lets = _step(m.f)
    mapped = _prim_app(lets.result, "map", 2)
    if mapped is None:
        raise NotApplicable("the step's result is not map F (zip a ...)")
    f2, data = mapped[1]
    op = elementwise_op(f2)
    if op is None or op[1] != 1:
        raise NotApplicable("the update is not element-wise on a 2D accumulator")
    zipped = _prim_app(data, "zip", 2)
    if zipped is None or not (isinstance(zipped[1][0], Identifier) and zipped[1][0].name == a):
        raise NotApplicable("the update does not zip the accumulator with the new values")
    parts = _untiled_blocks(zipped[1][1])
    if parts is None:
        raise NotApplicable("the new values are not untiled blocks")
    if lets.mentions(a) or a in free_identifiers(zipped[1][1]) or a in free_identifiers(f2):
        raise NotApplicable("the accumulator is used elsewhere in the step")
    return x_fn, lets, f2, parts


def untile(c):
    """(n/l1).(m/l2).l1.l2 blocks -> n.m."""
    return fl.join(fl.map(lambda r: fl.transpose(fl.join(fl.map(fl.transpose, r))), c))


def tile(z, l1, l2):
    """n.m -> (n/l1).(m/l2).l1.l2 blocks (the inverse of `untile`)."""
    return fl.map(lambda r: fl.map(fl.transpose, fl.split(l2, fl.transpose(r))), fl.split(l1, z))


def _block_build(m):
    x_fn, lets, f2, (u, xs, v, ys, block) = _block_parts(m)
    if not isinstance(block.t, ArrayType) or not isinstance(block.t.elem, ArrayType):
        raise NotApplicable("the blocks are not 2D")
    l1, l2 = block.t.size, block.t.elem.size

    def per_block(q, r):
        return fl.map(f2, fl.zip(fl.fst(r), substitute(substitute(block, u, fl.snd(q)), v, fl.snd(r))))

    def step(acc):
        result = fl.map(lambda q: fl.map(lambda r: per_block(q, r), fl.zip(fl.fst(q), substitute(ys, u, fl.snd(q)))),
                        fl.zip(acc, xs))
        return attrs.evolve(x_fn, body=lets.wrap(fl.to_expr(result)))

    return untile(App(App(App(Prim(m.r), fl.lam(step)), tile(m.z, l1, l2)), m.xs))


def _ex_block(rng):
    t1, t0, l1, l2, k = (int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 4)),
                         int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    f = inst.pick(rng, inst.UNARY)
    op = inst.pick(rng, [fl.add, fl.mul, fl.max])
    blocks_t = array(k, array(t1, array(t0, array(l1, array(l2, f32)))))
    z_t = array(t1 * l1, array(t0 * l2, f32))

    def step(acc, x):
        new = fl.join(fl.map(lambda u: fl.transpose(fl.join(fl.map(
            lambda v: fl.transpose(fl.map(fl.map(f), v)), u))), x))
        return fl.map(lambda p1: fl.map(lambda p: op(fl.fst(p), fl.snd(p)), fl.zip(fl.fst(p1), fl.snd(p1))),
                      fl.zip(acc, new))

    prog = fl.fun([z_t, blocks_t], lambda z, xs: fl.reduce_seq(step, z, xs))
    monoid = (op, 1.0) if op is fl.mul else None
    return prog, (inst.data(rng, t1 * l1, t0 * l2, monoid=monoid),
                  inst.data(rng, k, t1, t0, l1, l2, monoid=monoid)), {}


rule("block_accumulator", "blocking",
     "reduce_seq (fun(a, x) => map2² f a (untile B)) z xs -> untile (reduce_seq (fun(a, x) => map (fun(q) => "
     "map (fun(r) => map2² f (fst r) B) (zip (fst q) YS)) (zip a XS)) (tile z) xs)   (B the blocks of "
     "join (map (fun(u) => transpose (join (map (fun(v) => transpose B) YS))) XS); lets around the update kept)",
     lhs=P({"reduce_seq", "reduce_seq_unroll"}, V("f"), V("z"), V("xs"), bind="r"),
     side=_side_of(_block_parts), build=_block_build, example=_ex_block,
     doc="Each block of the accumulator is updated by the block of new values it meets, so a work-item "
         "that computes a block owns the same block of the accumulator (registers, see imperative.passes."
         "privatise).")


# ------------------------------------------------------------------ reduce_init_fusion


def _fusion_parts(m):
    op = elementwise_op(m.F)
    if op is None or op[0] not in ASSOCIATIVE:
        raise NotApplicable("the combination is not an element-wise associative operator")
    c, q_fn, lets = _step(m.g)
    mapped = _prim_app(lets.result, "map", 2)
    if mapped is None or elementwise_op(mapped[1][0]) != op:
        raise NotApplicable("the reduction's step is not the same element-wise operator")
    zipped = _prim_app(mapped[1][1], "zip", 2)
    if zipped is None or not (isinstance(zipped[1][0], Identifier) and zipped[1][0].name == c):
        raise NotApplicable("the step does not combine the accumulator first")
    if lets.mentions(c) or c in free_identifiers(zipped[1][1]):
        raise NotApplicable("the accumulator is used elsewhere in the step")
    return op


def _fusion_build(m):
    _fusion_parts(m)
    return App(App(App(Prim(m.r), m.g), fl.map(m.F, fl.zip(m.A, m.z))), m.ys)


def _map2(op, depth: int):
    if depth == 0:
        return lambda p: op(fl.fst(p), fl.snd(p))
    inner = _map2(op, depth - 1)
    return lambda p: fl.map(inner, fl.zip(fl.fst(p), fl.snd(p)))


def _ex_fusion(rng):
    op, _ = inst.pick(rng, inst.MONOIDS)
    f = inst.pick(rng, inst.UNARY)
    n, m, k = inst.size(rng, hi=4), inst.size(rng, hi=4), inst.size(rng, hi=4)
    mat = array(n, array(m, f32))
    prog = fl.fun([mat, mat, array(k, mat)], lambda acc, z, ys: fl.map(_map2(op, 1), fl.zip(acc, fl.reduce_seq(
        lambda c, q: fl.let(fl.map(fl.map(f), q), lambda y: fl.map(_map2(op, 1), fl.zip(c, y))), z, ys))))
    monoid = (op, 1.0) if op is fl.mul else None
    return prog, (inst.data(rng, n, m, monoid=monoid), inst.data(rng, n, m, monoid=monoid),
                  inst.data(rng, k, n, m, monoid=monoid)), {}


rule("reduce_init_fusion", "blocking",
     "map2ᵈ f A (reduce_seq (fun(c, q) => map2ᵈ f c (H q)) Z ys) -> reduce_seq (fun(c, q) => map2ᵈ f c (H q)) "
     "(map2ᵈ f A Z) ys   (f associative: add, mul, max, min; lets around the step's update kept)",
     lhs=P("map", V("F"), P("zip", V("A"), P({"reduce_seq", "reduce_seq_unroll"}, V("g"), V("z"), V("ys"), bind="r"))),
     side=_side_of(_fusion_parts), build=_fusion_build, exact=False, example=_ex_fusion,
     doc="What is added to a reduction's result becomes its initial value: a register block starts from the "
         "accumulator's block instead of zeros and needs no addition afterwards.")


# ------------------------------------------------------------------ neutral_init

NEUTRAL = {"add": 0.0, "mul": 1.0}


def _constant_array(e: Expr) -> float | None:
    """The value of `generate n (fun(i) => ... generate m (fun(j) => c))`, or None."""
    from ..expr import Literal

    while True:
        gen = _prim_app(e, "generate", 1)
        if gen is None or not isinstance(gen[1][0], Lambda):
            break
        e = gen[1][0].body
    return e.value if isinstance(e, Literal) and isinstance(e.value, float) else None


def _neutral_side(m):
    op = elementwise_op(m.F)
    if op is None or op[0] not in NEUTRAL:
        return "not an element-wise add or mul"
    value = _constant_array(m.Z)
    return None if value == NEUTRAL[op[0]] else "the second array is not all the operator's neutral element"


def _ex_neutral(rng):
    n, m = inst.size(rng, hi=4), inst.size(rng, hi=4)
    op = fl.add if rng.random() < 0.5 else fl.mul
    z = 0.0 if op is fl.add else 1.0
    prog = fl.fun([array(n, array(m, f32))], lambda a: fl.map(_map2(op, 1), fl.zip(
        a, fl.generate(n, lambda i: fl.generate(m, lambda j: z)))))
    return prog, (inst.data(rng, n, m),), {}


rule("neutral_init", "blocking",
     "map2ᵈ f A (generate .. (fun(i) => e)) -> A   (every e f's neutral element: 0.0 for add, 1.0 for mul)",
     lhs=P("map", V("F"), P("zip", V("A"), V("Z"))), side=_neutral_side, build=lambda m: m.A, exact=False,
     example=_ex_neutral,
     doc="After reduce_init_fusion, a block's reduction starting from `acc + 0` starts from acc: no additions of "
         "zero per k-tile (inexact only in the sign of a zero: -0.0 + 0.0 is 0.0).")


# ------------------------------------------------------------------ write_reduction_unrolled


def unrolled_copy(t, e):
    """`e` written by fully unrolled loops (map_seq_unroll per array level)."""
    if not isinstance(t, ArrayType):
        return e
    return fl.map_seq_unroll(lambda x: unrolled_copy(t.elem, x), e)


def _symbolic_dimension(t):
    """The first dimension of the (nested) array type t that is not a constant, or None."""
    while isinstance(t, ArrayType):
        if t.size.as_int() is None:
            return t.size
        t = t.elem
    return None


def _unrolled_side(m):
    t = m.root.t
    if not isinstance(t, ArrayType):
        return "the reduction's result is not an array"
    size = _symbolic_dimension(t)
    return None if size is None else f"a dimension of the result ({size}) is not a constant: cannot unroll"


def _ex_unrolled(rng):
    m, n = inst.size(rng, hi=4), inst.size(rng, hi=4)
    prog = inst.matrix_program(m, n, lambda xss: fl.reduce_seq(
        lambda acc, row: fl.map_seq(lambda p: fl.fst(p) + fl.snd(p), fl.zip(acc, row)),
        fl.map_seq(lambda x: x, fl.generate(n, lambda i: 0.0)), xss))
    return prog, (inst.data(rng, m, n),), {}


rule("write_reduction_unrolled", "blocking",
     "reduce_seq g z xs -> map_seq_unroll (... (fun(x) => x)) (reduce_seq g z xs)   (an array result of constant "
     "shape leaves its accumulator through unrolled copy loops)",
     lhs=P({"reduce_seq", "reduce_seq_unroll"}, V("g"), V("z"), V("xs")), side=_unrolled_side,
     build=lambda m: unrolled_copy(m.root.t, m.root), example=_ex_unrolled)


def _init_unrolled_side(m):
    from .lowering import _materialise_side

    problem = _materialise_side(m)
    if problem:
        return problem
    size = _symbolic_dimension(m.z.t)
    return None if size is None else f"a dimension of the initial value ({size}) is not a constant: cannot unroll"


def _ex_init_unrolled(rng):
    m, n = inst.size(rng, hi=4), inst.size(rng, hi=4)
    prog = fl.fun([array(m, array(n, f32)), array(3, array(m, array(n, f32)))], lambda z, xs: fl.reduce_seq(
        lambda acc, t: fl.map_seq(lambda p: fl.map_seq(lambda q: fl.fst(q) + fl.snd(q), fl.zip(fl.fst(p), fl.snd(p))),
                                  fl.zip(acc, t)), z, xs))
    return prog, (inst.data(rng, m, n), inst.data(rng, 3, m, n)), {}


rule("materialise_reduce_init_unrolled", "blocking",
     "reduce_seq g z xs -> reduce_seq g (map_seq_unroll (... (fun(x) => x)) z) xs   (an array initial value of "
     "constant shape, e.g. a register block starting from the accumulator's block, copied by unrolled loops)",
     lhs=P({"reduce_seq", "reduce_seq_unroll"}, V("f"), V("z"), V("xs"), bind="r"), side=_init_unrolled_side,
     build=lambda m: App(App(App(Prim(m.r), m.f), unrolled_copy(m.z.t, m.z)), m.xs), example=_ex_init_unrolled)


# ------------------------------------------------------------------ vectorize_accumulator


def _lane_wise(e: Expr, p: str, vt) -> Expr:
    """E with `snd p` a vector lane's value: every subterm not mentioning p is the same for
    all lanes (cast to a vector: a broadcast); arithmetic applies lane-wise."""
    if p not in free_identifiers(e):
        return fl.cast(vt, e)
    if _projection(e, "snd", p):
        return e
    head, args = spine(e)
    if isinstance(head, Prim) and head.name in ("add", "sub", "mul", "max", "min") and len(args) == 2:
        return App(App(head, _lane_wise(args[0], p, vt)), _lane_wise(args[1], p, vt))
    raise NotApplicable(f"{e} is not lane-wise arithmetic on snd {p}")


def _accumulator_parts(m):
    """(acc lambda, x lambda, row lambda, lane lambda, rows C, row R, E) of
    `reduce_seq (fun(acc, x) => map (fun(q) => map (fun(p) => fst p + E) (zip (fst q) R)) (zip acc C)) z xs`."""
    if not (isinstance(m.f, Lambda) and isinstance(m.f.body, Lambda)):
        raise NotApplicable("the reduction's function is not fun(acc, x) => ...")
    acc, step = m.f, m.f.body
    rows = _prim_app(step.body, "map", 2)
    if rows is None or not isinstance(rows[1][0], Lambda):
        raise NotApplicable("the step is not a map over the accumulator's rows")
    row_fn, zipped = rows[1]
    outer_zip = _prim_app(zipped, "zip", 2)
    if outer_zip is None or not (isinstance(outer_zip[1][0], Identifier) and outer_zip[1][0].name == acc.param.name):
        raise NotApplicable("the rows are not zipped with the accumulator first")
    lanes = _prim_app(row_fn.body, "map", 2)
    if lanes is None or not isinstance(lanes[1][0], Lambda):
        raise NotApplicable("a row's update is not a map")
    lane_fn, inner = lanes[1]
    inner_zip = _prim_app(inner, "zip", 2)
    q = row_fn.param.name
    if inner_zip is None or not _projection(inner_zip[1][0], "fst", q):
        raise NotApplicable("a row's update does not zip the accumulator's row first")
    add = _prim_app(lane_fn.body, "add", 2)
    p = lane_fn.param.name
    if add is None or not _projection(add[1][0], "fst", p):
        raise NotApplicable("a lane's update is not `fst p + E`")
    if acc.param.name in free_identifiers(outer_zip[1][1]) or acc.param.name in free_identifiers(row_fn.body):
        raise NotApplicable("the accumulator is read elsewhere in the step")
    return acc, step, row_fn, lane_fn, outer_zip[1][1], inner_zip[1][1], add[1][1]


def _accumulator_side(m):
    t = m.z.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) and t.elem.elem == f32):
        return "the accumulator is not a 2D array of f32"
    if not divides(m.w, t.elem.size):
        return f"{m.w} does not divide the accumulator's rows of {t.elem.size}"
    try:
        parts = _accumulator_parts(m)
        _lane_wise(parts[6], parts[3].param.name, VectorType(f32, m.w))
    except NotApplicable as why:
        return str(why)
    return None


def _accumulator_build(m):
    acc, step, row_fn, lane_fn, c, row, e = _accumulator_parts(m)
    vt = VectorType(f32, m.w)
    p = lane_fn.param
    lane_fn2 = attrs.evolve(lane_fn, body=App(App(Prim("add"), fl.fst(p)), _lane_wise(e, p.name, vt)))
    row_fn2 = attrs.evolve(row_fn, body=fl.map(lane_fn2, fl.zip(fl.fst(row_fn.param), fl.as_vector(m.w, row))))
    f2 = attrs.evolve(acc, body=attrs.evolve(step, body=fl.map(row_fn2, fl.zip(acc.param, c))))
    z2 = fl.map(lambda r: fl.as_vector(m.w, r), m.z)
    return fl.map(lambda r: fl.as_scalar(r), App(App(App(Prim(m.r), f2), z2), m.xs))


def _ex_accumulator(rng):
    w = int(rng.choice([2, 4, 8]))
    n, m, k = inst.size(rng, hi=3), inst.size(rng, w, hi=2), inst.size(rng, hi=4)
    prog = fl.fun([array(k, array(n, f32)), array(k, array(m, f32))], lambda cols, rows: fl.reduce_seq(
        lambda acc, x: fl.map(lambda q: fl.map(lambda p: fl.fst(p) + (fl.snd(q) * fl.snd(p) + 1.0),
                                               fl.zip(fl.fst(q), fl.snd(x))), fl.zip(acc, fl.fst(x))),
        fl.generate(n, lambda i: fl.generate(m, lambda j: 0.0)), fl.zip(cols, rows)))
    return prog, (inst.data(rng, k, n), inst.data(rng, k, m)), {"w": w}


rule("vectorize_accumulator", "vectorisation",
     "reduce_seq (fun(acc, x) => map (fun(q) => map (fun(p) => fst p + E) (zip (fst q) R)) (zip acc C)) z xs -> "
     "map as_scalar (reduce_seq (fun(acc, x) => map (fun(q) => map (fun(p) => fst p + E') (zip (fst q) "
     "(as_vector w R))) (zip acc C)) (map (as_vector w) z) xs)   (E' = E lane-wise: its terms without p cast "
     "to vectors)",
     lhs=P("reduce_seq", V("f"), V("z"), V("xs"), bind="r"), params=("w",), side=_accumulator_side,
     build=_accumulator_build, example=_ex_accumulator,
     doc="A register block's rows accumulate in vectors of w lanes (CPU SIMD registers): each step adds "
         "w products with one vector instruction; the row's scalar factor is broadcast.")


# ------------------------------------------------------------------ interleave_local_rows


def _interleave(row, b: int, g: int):
    """[n/b][b/g][g] -> [b/g][n/b][g]: runs of g values of consecutive b-blocks side by side."""
    return fl.join(fl.join(fl.transpose(fl.map(lambda blk: fl.split(g, blk), fl.split(b, row)))))


def _deinterleave(row, n, b: int, g: int):
    """The inverse of _interleave on a row of length n."""
    return fl.join(fl.map(lambda part: fl.join(part), fl.transpose(fl.map(
        lambda run: fl.split(g, run), fl.split(n // b * g, row)))))


def _interleave_side(m):
    t = m.e.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)):
        return "not a 2D array"
    n, b, g = t.elem.size.as_int(), _int(m.b), _int(m.g)
    if n is None or b is None or g is None or b < 1 or g < 1 or b % g or n % b:
        return f"rows of {t.elem.size} values do not split into blocks of {m.b} in runs of {m.g}"
    return None


def _int(x) -> int | None:
    return x.as_int() if hasattr(x, "as_int") else int(x)


def _interleave_build(m):
    n, b, g = m.e.t.elem.size.as_int(), _int(m.b), _int(m.g)
    return fl.map(lambda row: _deinterleave(row, n, b, g), fl.to_local(fl.map(lambda row: _interleave(row, b, g), m.e)))


def _ex_interleave(rng):
    g = int(rng.choice([1, 2, 4]))
    b = g * int(rng.integers(1, 3))
    rows, n = inst.size(rng, hi=3), b * int(rng.integers(1, 4))
    prog = inst.matrix_program(rows, n, lambda xss: fl.map_workgroup(lambda r: r, fl.to_local(
        fl.map_local(lambda row: fl.map_local(lambda x: x, row), xss, dim=1))))
    return prog, (inst.data(rng, rows, n),), {"b": b, "g": g}


rule("interleave_local_rows", "blocking",
     "to_local e -> map (deinterleave b g) (to_local (map (interleave b g) e))   (interleave b g: a row seen as "
     "[n/b][b/g][g] stored as [b/g][n/b][g])",
     lhs=P("to_local", V("e")), params=("b", "g"), side=_interleave_side, build=_interleave_build,
     example=_ex_interleave,
     doc="A work-item that reads b consecutive values of a local row (its register block) reads runs of g "
         "values that neighbouring items' runs follow directly: g-wide reads (float4 for g = 4) without bank "
         "conflicts.  Storage order only: readers see the same array.")


# ------------------------------------------------------------------ pad_local_rows


def _padded_parts(m):
    app = _prim_app(m.copy, "map_local", 2)
    if app is None or not isinstance(app[1][0], Lambda):
        raise NotApplicable("not to_local (map_local (fun(r) => map_local g r) xs)")
    row_fn = app[1][0]
    inner = _prim_app(row_fn.body, "map_local", 2)
    if inner is None or not (isinstance(inner[1][1], Identifier) and inner[1][1].name == row_fn.param.name):
        raise NotApplicable("the rows are not copied by an inner map_local")
    if row_fn.param.name in free_identifiers(inner[1][0]):
        raise NotApplicable("the element function uses the row")
    t = row_fn.body.t
    if not (isinstance(t, ArrayType) and hasattr(t.elem, "dtype")):
        raise NotApplicable("the rows are not arrays of scalars")
    return app[0], row_fn, inner


def _padded_side(m):
    reason = _side_of(_padded_parts)(m)
    return reason or (None if m.p.as_int() and m.p.as_int() > 0 else "the padding must be a positive constant")


def _padded_build(m):
    outer, row_fn, (inner_head, (g, _row)) = _padded_parts(m)
    n = row_fn.body.t.size
    elem = row_fn.body.t.elem
    zero = fl.literal(0.0 if elem.dtype.kind == "f" else 0, elem)
    padded_row = attrs.evolve(row_fn, body=App(App(inner_head, g), fl.pad_const(0, m.p, zero, row_fn.param)))
    copy = App(App(outer, padded_row), spine(m.copy)[1][1])
    return fl.map(lambda r: fl.take(n, r), fl.to_local(copy))


def _ex_padded(rng):
    rows, n, p = inst.size(rng, hi=4), inst.size(rng, hi=5), int(rng.integers(1, 4))
    f = inst.pick(rng, inst.UNARY)
    prog = inst.matrix_program(rows, n, lambda xss: fl.map_workgroup(
        lambda one: fl.map_local(lambda r: fl.map_local(lambda x: x * 2.0, r), fl.to_local(fl.map_local(
            lambda r: fl.map_local(f, r), one, dim=1)), dim=1), fl.split(rows, xss)))
    return prog, (inst.data(rng, rows, n),), {"p": p}


rule("pad_local_rows", "blocking",
     "to_local (map_local d1 (fun(r) => map_local d0 g r) xs) -> map (take n) (to_local (map_local d1 "
     "(fun(r) => map_local d0 g (pad_const 0 p 0 r)) xs))   (each row of the local copy gets p unused values)",
     lhs=P("to_local", V("copy")), params=("p",), side=_padded_side, build=_padded_build, example=_ex_padded,
     doc="A local array whose rows are p values longer: items that write one column of it (neighbouring "
         "rows) hit different memory banks.")


__all__ = ["elementwise_op", "tile", "untile", "unrolled_copy", "ASSOCIATIVE"]
