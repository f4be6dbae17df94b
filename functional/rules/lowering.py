"""Lowering rules: each high-level primitive becomes an explicit implementation choice.

    map f        -> map_global d f | map_workgroup d f | map_local d f | map_seq f | map_seq_unroll f
    reduce f z   -> reduce_seq f z | reduce_seq_unroll f z
    e            -> to_global e | to_local e | to_private e      (where a computed array lives)

They apply to saturated (`map f xs`) and partial (`map f`) uses alike.
"""

from __future__ import annotations

from .. import dsl as fl
from ..expr import App, Identifier, Lambda, Literal, NatLambda, Prim, applied, free_identifiers, spine
from ..nat import Nat, Var, divides
from ..primitives import LOOP_MAPS, MMA_K, MMA_M, MMA_N, UNROLL_LIMIT, WARP_LANES, WARP_TYPES
from ..strategies import MAP_LIKE
from ..types import ArrayType, ScalarType, f32, holds_array
from . import instances as inst
from .core import L, OneOf, P, V, rule


def _rebuild(name: str, params: tuple, m, arg_names: tuple[str, ...]):
    e = Prim(name, params)
    for a in arg_names:
        value = m.get(a)
        if value is None:
            break
        e = App(e, value)
    return e


def _ex_map(rng, params):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    if rng.random() < 0.5:
        prog = inst.vector_program(n, lambda xs: fl.map(f, xs))
        return prog, (inst.data(rng, n),), params
    m = inst.size(rng)  # the partial form, as the function of an outer map
    prog = inst.matrix_program(m, n, lambda xss: fl.map_seq(fl.map(f), xss))
    return prog, (inst.data(rng, m, n),), params


_MAP = OneOf(P("map", V("f"), V("xs")), P("map", V("f")))

for _target in ("map_global", "map_workgroup", "map_local"):
    rule(f"lower_{_target}", "lowering", f"map f -> {_target} d f",
         lhs=_MAP, params=("d",), defaults=(0,),
         side=lambda m: None if int(m.d.as_int() if hasattr(m.d, "as_int") else m.d) in (0, 1, 2) else "d is 0, 1 or 2",
         build=lambda m, t=_target: _rebuild(t, (int(m.d.as_int()),), m, ("f", "xs")),
         example=lambda rng: _ex_map(rng, {"d": int(rng.integers(0, 3))}))

for _target in ("map_seq", "map_seq_unroll"):
    rule(f"lower_{_target}", "lowering", f"map f -> {_target} f", lhs=_MAP,
         build=lambda m, t=_target: _rebuild(t, (), m, ("f", "xs")),
         example=lambda rng: _ex_map(rng, {}))


def _ex_reduce(rng):
    n = inst.size(rng)
    op, z = inst.pick(rng, inst.MONOIDS)
    if rng.random() < 0.5:
        prog = inst.vector_program(n, lambda xs: fl.reduce(op, z, xs))
        return prog, (inst.data(rng, n, monoid=(op, z)),), {}
    m = inst.size(rng)
    prog = inst.matrix_program(m, n, lambda xss: fl.map(fl.reduce(op, z), xss))
    return prog, (inst.data(rng, m, n, monoid=(op, z)),), {}


_REDUCE = OneOf(P("reduce", V("f"), V("z"), V("xs")), P("reduce", V("f"), V("z")))
for _target in ("reduce_seq", "reduce_seq_unroll"):
    rule(f"lower_{_target}", "lowering", f"reduce f z -> {_target} f z", lhs=_REDUCE,
         build=lambda m, t=_target: _rebuild(t, (), m, ("f", "z", "xs")),
         example=_ex_reduce, doc="The sequential fold keeps the order; reduce's f is associative.")


def _short_constant_side(m):
    t = m.xs.t
    n = t.size.as_int() if isinstance(t, ArrayType) else None
    if n is None:
        return "the loop's length is not a constant"
    if n > UNROLL_LIMIT:
        return f"{n} iterations: loops of more than {UNROLL_LIMIT} are not replicated"
    return None


def _ex_unroll(rng):
    n = inst.size(rng)
    op, z = inst.pick(rng, inst.MONOIDS)
    g = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.reduce_seq(lambda a, x: op(a, g(x)), z, xs))
    return prog, (inst.data(rng, n, monoid=(op, z)),), {}


rule("unroll_reduce_seq", "lowering",
     f"reduce_seq f z xs -> reduce_seq_unroll f z xs   (xs of a constant length of at most {UNROLL_LIMIT})",
     lhs=P("reduce_seq", V("f"), V("z"), V("xs")), side=_short_constant_side,
     build=lambda m: _rebuild("reduce_seq_unroll", (), m, ("f", "z", "xs")), example=_ex_unroll,
     doc="The same fold with its loop replicated (imperative.passes.unroll): a register-blocked tile's k-steps "
         "become straight-line code the OpenCL compiler schedules across steps (it kept an 8-step loop).")


_LOW_MAPS = LOOP_MAPS


def _ex_store(rng):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.map_seq(f, xs))
    return prog, (inst.data(rng, n),), {}


for _space in ("global", "local", "private"):
    rule(f"store_{_space}", "lowering", f"map_X f xs -> to_{_space} (map_X f xs)   (the result lives in {_space} memory)",
         lhs=P(_LOW_MAPS, V("f"), V("xs"), bind="map"),
         build=lambda m, s=_space: App(Prim(f"to_{s}"), m.root),
         example=_ex_store)


def _copy_seq(t, e):
    """`e` written element by element with nested map_seq (the identity, as loops)."""
    from ..types import ArrayType

    if not isinstance(t, ArrayType):
        return e
    return fl.map_seq(lambda x: _copy_seq(t.elem, x), e)


def _materialise_side(m):
    from ..expr import spine
    from ..types import ArrayType

    if not isinstance(m.z.t, ArrayType):
        return "the initial value is not an array"
    head, _ = spine(m.z)
    if isinstance(head, Prim) and head.name in MAP_LIKE - {"map"}:
        return "the initial value is already computed by a low-level map"
    return None


def _ex_materialise(rng):
    m, n = inst.size(rng), inst.size(rng)
    prog = inst.matrix_program(m, n, lambda xss: fl.reduce_seq(
        lambda acc, row: fl.map_seq(lambda p: fl.fst(p) + fl.snd(p), fl.zip(acc, row)),
        fl.generate(n, lambda i: 0.0), xss))
    return prog, (inst.data(rng, m, n),), {}


def _materialise_rule(name: str, equation: str, copy, example) -> None:
    """`reduce_seq f z xs -> reduce_seq f (copy z) xs`: the loops that write an array initial
    value are stated by the program (`copy` builds them)."""
    rule(name, "lowering", equation,
         lhs=P({"reduce_seq", "reduce_seq_unroll"}, V("f"), V("z"), V("xs"), bind="r"), side=_materialise_side,
         build=lambda m: App(App(App(Prim(m.r), m.f), copy(m.z.t, m.z)), m.xs),
         example=example)


_materialise_rule("materialise_reduce_init",
                  "reduce_seq f z xs -> reduce_seq f (map_seq (fun(x) => x) z) xs   (an array z is written by loops "
                  "the program now states, nested for nested arrays)", _copy_seq, _ex_materialise)


def _copy_local_side(m):
    from ..types import ArrayType

    t = m.root.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)):
        return "the reduction's result is not a 2D array"
    return None


def _ex_copy_local(rng):
    m, n = inst.size(rng), inst.size(rng)
    prog = inst.matrix_program(m, n, lambda xss: fl.reduce_seq(
        lambda acc, row: fl.map(lambda p: fl.map(lambda q: fl.fst(q) + fl.snd(q), fl.zip(fl.fst(p), row)),
                                fl.zip(acc, fl.generate(m, lambda i: row))),
        fl.generate(m, lambda i: fl.generate(n, lambda j: 0.0)), xss))
    return prog, (inst.data(rng, m, n),), {}


rule("write_reduction_with_local_maps", "lowering",
     "reduce_seq f z xs -> map_local 1 (fun(r) => map_local 0 (fun(x) => x) r) (reduce_seq f z xs)   "
     "(a 2D result leaves its accumulator through the work-group's items; deeper levels, e.g. each item's "
     "register block, by unrolled loops)",
     lhs=P({"reduce_seq", "reduce_seq_unroll"}, V("f"), V("z"), V("xs")), side=_copy_local_side,
     build=lambda m: _copy_local(m.root.t, m.root), example=_ex_copy_local)


def _copy_local(t, e, dims=(1, 0)):
    """`e` written by the work-group's items: map_local over its (at most two) dimensions."""
    from ..types import ArrayType

    if not isinstance(t, ArrayType) or not dims:
        return _copy_inner(t, e)
    return fl.map_local(lambda x: _copy_local(t.elem, x, dims[1:]), e, dim=dims[0] if len(_array_dims(t)) > 1 else 0)


def _copy_inner(t, e):
    """What one item copies: unrolled loops when every dimension is a constant (the item's
    block stays in registers), else map_seq loops."""
    from .blocking import unrolled_copy

    if all(d.as_int() is not None for d in _array_dims(t)):
        return unrolled_copy(t, e)
    return _copy_seq(t, e)


def _array_dims(t) -> list:
    from ..types import ArrayType

    out = []
    while isinstance(t, ArrayType):
        out.append(t.size)
        t = t.elem
    return out


def _ex_materialise_local(rng):
    m, n = inst.size(rng), inst.size(rng)
    prog = inst.matrix_program(m, n, lambda xss: fl.map_workgroup(lambda tile: fl.reduce_seq(
        lambda acc, row: fl.map_local(lambda p: fl.map_local(lambda q: fl.fst(q) + fl.snd(q), fl.zip(fl.fst(p), row)),
                                      fl.zip(acc, fl.generate(m, lambda i: row)), dim=1),
        fl.generate(m, lambda i: fl.generate(n, lambda j: 0.0)), tile), fl.split(m, fl.join(fl.map(
            lambda r: fl.generate(1, lambda i: r), xss)))))
    return prog, (inst.data(rng, m, n),), {}


_materialise_rule("materialise_reduce_init_local",
                  "reduce_seq f z xs -> reduce_seq f (map_local 1 (fun(r) => map_local 0 (fun(x) => x) r) z) xs   "
                  "(a 2D z written by the work-group's items, each its own element)", _copy_local,
                  _ex_materialise_local)


def _ex_swap_local(rng):
    m, n = inst.size(rng), inst.size(rng)
    prog = inst.matrix_program(m, n, lambda xss: fl.map_local(lambda r: fl.map_local(lambda x: x * 2.0, r), xss, dim=1))
    return prog, (inst.data(rng, m, n),), {}


rule("swap_local_dims", "lowering",
     "map_local 1 (fun(r) => map_local 0 f r) xss -> map_local 0 (fun(r) => map_local 1 f r) xss   "
     "(which local id walks which dimension: e.g. consecutive ids along contiguous memory)",
     lhs=P("map_local", L("r", P("map_local", V("f"), V("r_use"), params=("inner",))), V("xss"), params=("outer",)),
     side=lambda m: None if (m.outer == 1 and m.inner == 0 and isinstance(m.r_use, Identifier)
                             and m.r_use.name == m.r.name)
     else "not map_local 1 over map_local 0 of the row",
     build=lambda m: fl.map_local(lambda r: fl.map_local(m.f, r, dim=1), m.xss, dim=0),
     example=_ex_swap_local)


def _ex_interchange(rng):
    m, n = inst.size(rng), inst.size(rng)
    outer, inner = (0, 1) if rng.random() < 0.5 else (1, 0)
    prog = inst.matrix_program(m, n, lambda xss: fl.map_local(lambda r: fl.map_local(lambda x: x * 2.0, r, dim=inner),
                                                             xss, dim=outer))
    return prog, (inst.data(rng, m, n),), {}


_PARALLEL_MAPS = ("map_local", "map_global")

rule("interchange_parallel", "lowering",
     "map_p a (fun(r) => map_q b f r) xss -> transpose (map_q b (fun(c) => map_p a f c) (transpose xss))   "
     "(map_p, map_q parallel: every element keeps its work-item; the inner map now walks the "
     "columns of xss, e.g. contiguous memory that the inner map can read as vectors)",
     lhs=P(_PARALLEL_MAPS, L("r", P(_PARALLEL_MAPS, V("f"), V("r_use"), params=("inner",), bind="inner_kind")), V("xss"),
           params=("outer",), bind="outer_kind"),
     side=lambda m: None if isinstance(m.r_use, Identifier) and m.r_use.name == m.r.name else "not a map of the row",
     build=lambda m: fl.transpose(fl._prim(m.inner_kind, (m.inner,), (
         lambda c: fl._prim(m.outer_kind, (m.outer,), (m.f, c)), fl.transpose(m.xss)))),
     example=_ex_interchange)


def _reshape_side(m):
    if not (isinstance(m.r_use, Identifier) and m.r_use.name == m.r.name):
        return "not a map of the row"
    t = m.xss.t
    if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)):
        return "not a map over a 2D array"
    return None if divides(m.n, t.size * t.elem.size) else f"{m.n} does not divide {t.size * t.elem.size}"


def _ex_reshape(rng):
    n = int(rng.choice([2, 4, 8]))
    m, k = inst.size(rng), inst.size(rng, n)
    prog = inst.matrix_program(m, k, lambda xss: fl.map_local(lambda r: fl.map_local(lambda x: x * 2.0, r), xss, dim=1))
    return prog, (inst.data(rng, m, k),), {"n": n}


rule("reshape_parallel", "lowering",
     "map_p a (fun(r) => map_q b f r) xss -> split c (join (map_p a (fun(r) => map_q b f r) (split n (join xss))))   "
     "(c the row length of xss; the same elements in rows of n, e.g. a tile copy spread over all "
     "of a work-group's items: n = the items along b, times the vector width)",
     lhs=P(_PARALLEL_MAPS, L("r", P(_PARALLEL_MAPS, V("f"), V("r_use"), params=("inner",), bind="inner_kind")), V("xss"),
           params=("outer",), bind="outer_kind"), params=("n",), side=_reshape_side,
     build=lambda m: fl.split(m.xss.t.elem.size, fl.join(fl._prim(m.outer_kind, (m.outer,), (
         lambda r: fl._prim(m.inner_kind, (m.inner,), (m.f, r)), fl.split(m.n, fl.join(m.xss)))))),
     example=_ex_reshape)


# ------------------------------------------------------------- storage and copies


def _is_data(e) -> bool:
    from ..types import DataType

    return isinstance(e.t, DataType)


def _ex_materialise(rng):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.map_seq(f, fl.take(max(1, n // 2), fl.map_seq(f, xs))))
    return prog, (inst.data(rng, n),), {}


for _space in ("global", "local", "private"):
    rule(f"materialise_{_space}", "lowering", f"e -> to_{_space} e   (e's value is stored in {_space} memory)",
         lhs=V("e"), side=lambda m: None if _is_data(m.e) else "not a data value",
         build=lambda m, s=_space: App(Prim(f"to_{s}"), m.e),
         example=_ex_materialise,
         doc="Where the translation reads a value that loops write (a low-level map's array), the value must "
             "be stored first; the default lowering chooses the space from where the value is computed.")


def copy_with(t, e, levels: tuple):
    """`e` rewritten as loops that write it element by element (the identity): the outer
    array dimensions by `levels` ((primitive, dim), outermost first), deeper ones by
    map_seq; a tuple holding arrays component by component."""
    from ..types import ArrayType, TupleType

    if isinstance(t, ArrayType):
        name, dim = levels[0] if levels else ("map_seq", None)
        inner = levels[1:]
        f = lambda x: copy_with(t.elem, x, inner)  # noqa: E731
        return fl.map_seq(f, e) if dim is None else fl._prim(name, (dim,), (f, e))
    if isinstance(t, TupleType) and holds_array(t):
        parts = [copy_with(et, (fl.fst if k == 0 else fl.snd)(e), levels) for k, et in enumerate(t.elems)]
        return fl.pair(*parts)
    return e


def _copy_levels(kind: str, t, groups: int = 0b11) -> tuple:
    """The parallel levels of a copy of `t`: global and local copies spread the two outer
    dimensions (dimension 0 along the contiguous inner index), sequential copies none.  A
    local copy uses only the dimensions the enclosing work-groups have items in (`groups`, a
    bit per dimension): in a group of dimension 0 alone a 2D copy is
    `map_seq (fun(r) => map_local 0 (fun(x) => x) r)`, and with none it is sequential."""
    from ..types import ArrayType

    if kind == "seq":
        return ()
    depth = 2 if isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) else 1
    name = f"map_{kind}"
    dims = (1, 0) if kind == "global" else tuple(d for d in (1, 0) if groups >> d & 1)
    dims = dims[-depth:]  # the innermost array dimensions get the lowest ids
    return (("map_seq", None),) * (depth - len(dims)) + tuple((name, d) for d in dims)


def _ex_copy_rule(rng):
    m, n = inst.size(rng), inst.size(rng)
    prog = inst.matrix_program(m, n, lambda xss: fl.transpose(xss))
    return prog, (inst.data(rng, m, n),), {}


def _copy_side(m):
    return None if _is_data(m.e) and holds_array(m.e.t) else "not a value holding arrays"


_COPY_DOC = ("Writing a view of data that is already readable (an input, a stored array) needs loops; the "
             "default lowering chooses them where the program's value is a view rather than a computation.")
for _kind in ("global", "seq"):
    _levels = {"global": "map_global 1 / map_global 0", "seq": "map_seq"}[_kind]
    rule(f"copy_{_kind}", "lowering",
         f"e -> map (fun(x) => x) e   (as loops that write e element by element: {_levels} over the outer "
         f"dimensions, map_seq deeper; tuples of arrays component by component)",
         lhs=V("e"), side=_copy_side, build=lambda m, k=_kind: copy_with(m.e.t, m.e, _copy_levels(k, m.e.t)),
         example=_ex_copy_rule, doc=_COPY_DOC)

rule("copy_local", "lowering",
     "e -> map (fun(x) => x) e   (as loops that write e element by element: map_local 1 / map_local 0 over the "
     "outer dimensions where the enclosing work-groups have those dimensions (`groups`: a bit per dimension; "
     "map_seq over an outer dimension they lack), map_seq deeper; tuples of arrays component by component)",
     lhs=V("e"), side=_copy_side, params=("groups",), defaults=(0b11,),
     build=lambda m: copy_with(m.e.t, m.e, _copy_levels("local", m.e.t, m.groups.as_int())),
     example=_ex_copy_rule, doc=_COPY_DOC)


def _ex_generate(rng):
    n, m = inst.size(rng), inst.size(rng)
    prog = inst.vector_program(m, lambda xs: fl.generate(n, lambda i: fl.reduce_seq(
        lambda a, x: a + x * fl.cast(f32, i), 0.0, xs)))
    return prog, (inst.data(rng, m),), {}


rule("generate_as_map_global", "lowering",
     "generate n f -> map_global d f (generate n (fun(i) => i))   (f loops or allocates: the array is written by "
     "a loop instead of recomputed where it is read; d: a dimension no map_global inside f has, default 0)",
     lhs=P("generate", V("f"), params=("n",)), params=("d",), defaults=(0,),
     side=lambda m: None if int(m.d.as_int() if hasattr(m.d, "as_int") else m.d) in (0, 1, 2) else "d is 0, 1 or 2",
     build=lambda m: fl._prim("map_global", (int(m.d.as_int() if hasattr(m.d, "as_int") else m.d),),
                              (m.f, fl.generate(m.n, lambda i: i))),
     example=_ex_generate)
rule("generate_as_map_seq", "lowering",
     "generate n f -> map_seq f (generate n (fun(i) => i))   (f loops or allocates: the array is written by "
     "a loop instead of recomputed where it is read)",
     lhs=P("generate", V("f"), params=("n",)),
     build=lambda m: fl._prim("map_seq", (), (m.f, fl.generate(m.n, lambda i: i))),
     example=_ex_generate)


# ------------------------------------------------------------------------ device intrinsics


def _tree_stage(stage) -> tuple | None:
    """(f, z, stored) of a tree's stage `fun(l: nat, ys) => map_local 0 R (split 2 (reorder_stride l ys))`,
    R = reduce f z (reduce_seq, reduce_seq_unroll, or eta-expanded), the map under `to_local`
    where `stored`; None for any other function."""
    if not (isinstance(stage, NatLambda) and isinstance(stage.body, Lambda)):
        return None
    body, stored = stage.body.body, False
    head, args = spine(body)
    if isinstance(head, Prim) and head.name == "to_local" and len(args) == 1:
        body, stored = args[0], True
    loop = applied(body, "map_local", 2)
    if loop is None or spine(body)[0].params[0] != 0:
        return None
    reducer, data = loop
    if isinstance(reducer, Lambda) and (inner := _reduce_parts(reducer.body)) is not None \
            and isinstance(inner[2], Identifier) and inner[2].name == reducer.param.name:
        f, z = inner[:2]
    elif (partial := _reduce_parts(reducer, saturated=False)) is not None:
        f, z = partial
    else:
        return None
    halves = applied(data, "split", 1)
    strided = applied(halves[0], "reorder_stride", 1) if halves is not None else None
    if halves is None or spine(data)[0].params[0] != Nat.const(2) or strided is None:
        return None
    step = spine(halves[0])[0].params[0]
    ys = strided[0]
    if step != Nat.atom(stage.var) or not (isinstance(ys, Identifier) and ys.name == stage.body.param.name):
        return None
    if any(stage.body.param.name in free_identifiers(x) for x in (f, z)):
        return None
    return f, z, stored


def _reduce_parts(e, saturated: bool = True):
    for name in ("reduce", "reduce_seq", "reduce_seq_unroll"):
        args = applied(e, name, 3 if saturated else 2)
        if args is not None:
            return tuple(args)
    return None


def _warp_side(m) -> str | None:
    k = m.k.as_int()
    if k is None or k < 1:
        return "the tree's number of steps must be a positive constant"
    if _tree_stage(m.stage) is None:
        return "not a tree of map_local 0 stages (map_local 0 (reduce f z) (split 2 (reorder_stride l ys)))"
    t = m.xs.t
    if not isinstance(t, ArrayType) or t.size != Nat.const(2 ** k):
        return f"the tree does not reduce its whole input: length {getattr(t, 'size', t)} is not 2^{k}"
    if not (isinstance(t.elem, ScalarType) and t.elem.name in WARP_TYPES):
        return f"warp shuffles move 32-bit scalars, not {t.elem}"
    return None


def _warp_build(m):
    f, z, stored = _tree_stage(m.stage)
    k = m.k.as_int()
    lanes = min(k, WARP_LANES.bit_length() - 1)
    data = m.xs if lanes == k else fl.iterate(k - lanes, m.stage, m.xs)
    warp = fl.reduce_warp(f, z, data)
    return fl.to_local(warp) if stored else warp


def _ex_warp(rng):
    k = int(rng.integers(1, 8))
    n = 2 ** k
    op, z = inst.pick(rng, inst.MONOIDS)
    groups = inst.size(rng, 1, 1, 3)
    var = Var("l", 1)
    stage = NatLambda(var, fl.lam(lambda ys: fl.map_local(fl.reduce_seq(op, z),
                                                          fl.split(2, fl.reorder_stride(Nat.atom(var), ys)))))
    prog = inst.vector_program(n * groups, lambda xs: fl.map_workgroup(
        lambda c: fl.iterate(k, stage, c), fl.split(n, xs)))
    return prog, (inst.data(rng, n * groups, monoid=(op, z)),), {}


rule("warp_tree", "lowering",
     "iterate k (fun(l: nat, ys) => map_local 0 (reduce f z) (split 2 (reorder_stride l ys))) xs -> "
     "reduce_warp f z (iterate (k - j) (the same stage) xs)   (length xs = 2^k; j = min(k, 5): the last j steps, "
     "32 elements and fewer, in the first warp's registers; xs of 32-bit scalars)",
     lhs=P("iterate", V("stage"), V("xs"), params=("k",)), side=_warp_side, build=_warp_build, example=_ex_warp,
     doc="The talk's warp-synchronous tree (versions 5 and 6), made safe: the last steps exchange values by "
         "warp shuffles, which synchronise the warp themselves, instead of through local memory and barriers. "
         "An identity (reduce_warp's meaning is the tree's steps); a device intrinsic, so dpia.explore offers "
         "it only where the device says it has warp shuffles (DeviceLimits.intrinsics).")


# ------------------------------------------------------------------ dot_tile_mma


def _tf32_product(fn) -> bool:
    """`fun(p) => tf32 (fst p) * tf32 (snd p)`."""
    if not isinstance(fn, Lambda):
        return False
    factors = applied(fn.body, "mul", 2)
    if factors is None:
        return False
    for factor, part in zip(factors, ("fst", "snd")):
        rounded = applied(factor, "tf32", 1)
        taken = applied(rounded[0], part, 1) if rounded is not None else None
        if not (taken is not None and isinstance(taken[0], Identifier) and taken[0].name == fn.param.name):
            return False
    return True


# A nest of dot products of TF32 products (dot_tile_mma, warp_tile_mma):
#   map (fun(r) => map (fun(c) => reduce (+) 0 (map (fun(p) => tf32 (fst p) * tf32 (snd p)) (zip r c))) cs) rs
_TF32_DOTS = P("map", L("r", P("map", L("c", P("reduce", V("plus"), V("zero"), P("map", V("product"), P(
    "zip", V("r"), V("c"))))), V("cs"))), V("rs"))


def _tf32_dots_side(m) -> str | None:
    if not (isinstance(m.plus, Prim) and m.plus.name == "add"):
        return "the dot products do not sum (+)"
    if not (isinstance(m.zero, Literal) and m.zero.value == 0):
        return "the dot products do not start from 0"
    if not _tf32_product(m.product):
        return "the products are not tf32 (fst p) * tf32 (snd p): TF32 products are the program's to ask for"
    if m.r.name in free_identifiers(m.cs):
        return "the columns depend on the row"
    return None


def _tf32_dots_program(rows: int, cols: int, k: int):
    """fun(rs, cs) => the nest of TF32 dot products of rs's rows and cs's columns (an example)."""
    def dots(rs, cs):
        return fl.map(fl.lam(lambda r: fl.map(fl.lam(lambda c: fl.reduce(fl.add, 0.0, fl.map(
            fl.lam(lambda p: fl.tf32(fl.fst(p)) * fl.tf32(fl.snd(p))), fl.zip(r, c)))), cs)), rs)

    return fl.fun([ArrayType(Nat.const(rows), ArrayType(Nat.const(k), f32)),
                   ArrayType(Nat.const(cols), ArrayType(Nat.const(k), f32))], dots)


def _mma_tile_side(m) -> str | None:
    problem = _tf32_dots_side(m)
    if problem:
        return problem
    shapes = [(getattr(x.t, "size", None), getattr(getattr(x.t, "elem", None), "size", None)) for x in (m.rs, m.cs)]
    want = [(Nat.const(MMA_M), Nat.const(MMA_K)), (Nat.const(MMA_N), Nat.const(MMA_K))]
    if shapes != want or m.rs.t.elem.elem != f32 or m.cs.t.elem.elem != f32:
        return f"not {MMA_M} rows and {MMA_N} columns of {MMA_K} float32 values (an m16n8k8 tile): {shapes}"
    return None


def _mma_tile_build(m):
    zeros = fl.generate(MMA_M, fl.lam(lambda _: fl.generate(MMA_N, fl.lam(lambda _: 0.0))))
    return fl.unfragment("c", fl.mma_sync(fl.fragment("c", zeros), fl.fragment("a", m.rs), fl.fragment("b", m.cs)))


def _ex_mma_tile(rng):
    prog = _tf32_dots_program(MMA_M, MMA_N, MMA_K)
    return prog, (inst.data(rng, MMA_M, MMA_K), inst.data(rng, MMA_N, MMA_K)), {}


rule("dot_tile_mma", "lowering",
     "map (fun(r) => map (fun(c) => reduce (+) 0 (map (fun(p) => tf32 (fst p) * tf32 (snd p)) (zip r c))) cs) rs -> "
     "unfragment c (mma_sync (fragment c zeros) (fragment a rs) (fragment b cs))   (rs: 16 rows, cs: 8 columns, "
     "each of 8 float32 values)",
     lhs=_TF32_DOTS, side=_mma_tile_side, build=_mma_tile_build, example=_ex_mma_tile, exact=False,
     doc="A 16 x 8 tile of dot products of length 8 whose products the program rounds to TF32 is one product "
         "of a warp's tensor cores (mma_sync) on the tiles' fragments.  Its meaning is the tile's (sums in "
         "another order); a device intrinsic, so only targets whose device has TF32 tensor cores print the "
         "instruction (the translation gives the others each lane's own sums).")


# ------------------------------------------------------------------ warp_tile_mma


def _assemble(tiles):
    """[r][c][h][w] tiles as one [r h][c w] array (a view)."""
    return fl.join(fl.map(fl.lam(lambda row: fl.map(fl.join, fl.transpose(row))), tiles))


def _warp_tile_side(m) -> str | None:
    problem = _tf32_dots_side(m)
    if problem:
        return problem
    for x, tile in ((m.rs, MMA_M), (m.cs, MMA_N)):
        t = x.t
        if not (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) and t.elem.elem == f32):
            return "not rows and columns of float32 values"
        rows = t.size.as_int()
        if rows is None or rows % tile:
            return f"{t.size} rows or columns: not a constant multiple of {tile}"
        if not divides(Nat.const(MMA_K), t.elem.size):
            return f"dot products of length {t.elem.size}: not known to be a multiple of {MMA_K}"
    return None


def _warp_tile_build(m):
    mt, nt = m.rs.t.size.as_int() // MMA_M, m.cs.t.size.as_int() // MMA_N

    def zeros(*shape):
        if not shape:
            return fl.lit(0.0)
        inner = zeros(*shape[1:])
        return fl.generate(shape[0], fl.lam(lambda _: inner))

    def step(acc, ks):
        return fl.map(fl.lam(lambda q: fl.map(fl.lam(lambda t: fl.mma_sync(
            fl.fst(t), fl.fragment("a", fl.snd(q)), fl.fragment("b", fl.snd(t)))),
            fl.zip(fl.fst(q), fl.split(MMA_N, fl.snd(ks))))), fl.zip(acc, fl.split(MMA_M, fl.fst(ks))))

    k_steps = fl.zip(fl.transpose(fl.map(fl.split(MMA_K), m.rs)), fl.transpose(fl.map(fl.split(MMA_K), m.cs)))
    fragments = fl.reduce_seq(fl.lam(step), zeros(mt, nt, WARP_LANES, 4), k_steps)
    return _assemble(fl.map(fl.map(fl.unfragment("c")), fragments))


def _ex_warp_tile(rng):
    mt, nt, kk = (int(x) for x in rng.integers(1, 3, 3))
    k = MMA_K * kk
    prog = _tf32_dots_program(MMA_M * mt, MMA_N * nt, k)
    return prog, (inst.data(rng, MMA_M * mt, k), inst.data(rng, MMA_N * nt, k)), {}


rule("warp_tile_mma", "lowering",
     "map (fun(r) => map (fun(c) => reduce (+) 0 (map (fun(p) => tf32 (fst p) * tf32 (snd p)) (zip r c))) cs) rs -> "
     "untile (map (map (unfragment c)) (reduce_seq (fun(acc, (a8, b8)) => map (fun(accs, a16) => map (fun(acc, b) => "
     "mma_sync acc (fragment a a16) (fragment b b)) (zip accs (split 8 b8))) (zip acc (split 16 a8))) "
     "zeros (zip (k-steps of 8 of rs) (k-steps of 8 of cs))))   (rs: 16 mt rows, cs: 8 nt columns, of length 8 k)",
     lhs=_TF32_DOTS, side=_warp_tile_side, build=_warp_tile_build, example=_ex_warp_tile, exact=False,
     doc="A warp's tile of TF32 dot products as (16 x 8) m16n8k8 products of its tensor cores: the reduction "
         "over the dot products' length in steps of 8, outermost, each step one mma_sync per 16 x 8 tile on "
         "fragment accumulators that stay with the warp's lanes (a macro: dot_tile_mma on each tile of each "
         "step, the tiles' sums accumulated in fragments: mma_sync c a b = c + a b).")


# ------------------------------------------------------------------ fragments copied by their lanes


def _is_fragments(t) -> bool:
    """[..][32][4] (or [32][2]) float32 with constant outer dimensions: a warp's fragment arrays."""
    dims = []
    while isinstance(t, ArrayType):
        dims.append(t.size.as_int())
        t = t.elem
    return t == f32 and len(dims) >= 2 and None not in dims and dims[-2] == WARP_LANES and dims[-1] in (2, 4)


def lanes_copy(t, e):
    """`e`, fragment arrays of type `t`, copied by their lanes: map_local 0 over the lanes, unrolled
    loops over the tiles and each lane's elements (each lane copies its own: registers after
    imperative.passes.privatise)."""
    if isinstance(t, ArrayType) and t.size.as_int() == WARP_LANES and not isinstance(t.elem.elem, ArrayType):
        return fl.map_local(fl.lam(lambda lane: fl.map_seq_unroll(fl.lam(lambda x: x), lane)), e)
    return fl.map_seq_unroll(fl.lam(lambda x: lanes_copy(t.elem, x)), e)


def _fragments_result_side(m):
    return None if _is_fragments(m.root.t) else "the reduction's result is not a warp's fragment arrays ([..][32][r])"


def _fragments_init_side(m):
    return None if _is_fragments(m.z.t) else "the initial value is not a warp's fragment arrays ([..][32][r])"


def _fragment_fold(lanes_first: bool):
    """A fold over fragment accumulators [2][32][4] (an mma-like update of each lane's own elements)."""
    def example(rng):
        prog = fl.fun([ArrayType(Nat.const(3), ArrayType(Nat.const(2), ArrayType(Nat.const(WARP_LANES), ArrayType(
            Nat.const(4), f32))))], lambda xs: fl.reduce_seq(fl.lam(lambda acc, x: fl.map_seq(fl.lam(
                lambda p: fl.map_seq(fl.lam(lambda q: fl.map_seq(fl.lam(lambda v: fl.fst(v) + fl.snd(v)), fl.zip(
                    fl.fst(q), fl.snd(q)))), fl.zip(fl.fst(p), fl.snd(p)))), fl.zip(acc, x))), fl.generate(2, fl.lam(
                        lambda _: fl.generate(WARP_LANES, fl.lam(lambda _: fl.generate(4, fl.lam(lambda _: 0.5)))))), xs))
        return prog, (inst.data(rng, 3, 2, WARP_LANES, 4),), {}

    return example


rule("write_fragments_by_lanes", "lowering",
     "reduce_seq g z xs -> map_seq_unroll (... map_local 0 (fun(lane) => map_seq_unroll (fun(x) => x) lane)) "
     "(reduce_seq g z xs)   (a warp's fragment arrays [..][32][r] leave the accumulator, each lane copying its own)",
     lhs=P({"reduce_seq", "reduce_seq_unroll"}, V("g"), V("z"), V("xs")), side=_fragments_result_side,
     build=lambda m: lanes_copy(m.root.t, m.root), example=_fragment_fold(False))

rule("materialise_fragments_by_lanes", "lowering",
     "reduce_seq g z xs -> reduce_seq g (map_seq_unroll (... map_local 0 (fun(lane) => map_seq_unroll (fun(x) => x) "
     "lane)) z) xs   (a warp's fragment accumulators [..][32][r] start from values each lane writes itself)",
     lhs=P({"reduce_seq", "reduce_seq_unroll"}, V("f"), V("z"), V("xs"), bind="r"), side=_fragments_init_side,
     build=lambda m: App(App(App(Prim(m.r), m.f), lanes_copy(m.z.t, m.z)), m.xs), example=_fragment_fold(True))


# ------------------------------------------------------------------ double buffering


_STAGE_PASSING = frozenset({"pair", "fst", "snd", "let"})


def _stages_only(v) -> bool:
    """`v` computes nothing but stores into local memory (to_local ...), seen through read views
    (maps of views among them), pairs and lets: all of it lands in buffers the translation can
    allocate twice."""
    from ..primitives import READ_VIEWS, is_view_fn

    if isinstance(v, (Identifier, Literal)):
        return True
    if isinstance(v, Lambda):
        return _stages_only(v.body)
    head, args = spine(v)
    if not isinstance(head, Prim):
        return False
    if head.name == "to_local":
        return True
    if head.name == "map" and args and is_view_fn(args[0]):  # a view of each element
        return all(_stages_only(a) for a in args[1:])
    return (head.name in READ_VIEWS or head.name in _STAGE_PASSING) and all(_stages_only(a) for a in args)


def _double_buffer_side(m) -> str | None:
    f = m.f
    if not (isinstance(f, Lambda) and isinstance(f.body, Lambda)):
        return "the function is not fun(acc, x) => ..."
    head, args = spine(f.body.body)
    if not (isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda)):
        return "the step does not start by staging a value (let V (fun(y) => ...))"
    value = args[0]
    if f.param.name in free_identifiers(value):
        return "the staging reads the accumulator: it cannot run a step ahead"
    if not any(isinstance(x, Prim) and x.name == "to_local" for x in _walk(value)):
        return "the staging stores nothing in local memory"
    if not _stages_only(value):
        return "the staging computes outside its stores (to_local ...)"
    return None


def _walk(e):
    from ..expr import walk

    return walk(e)


def _staging_lets(body, acc: str):
    """The stagings a step's body starts with: [(V1, y1), (V2, y2), ...] and the rest B of
    `let V1 (fun(y1) => let V2 (fun(y2) => ... B))`, each V a staging reading neither the
    accumulator nor an earlier one's value (a group's copies of A's and of B's tile)."""
    lets, bound = [], {acc}
    while True:
        head, args = spine(body)
        if not (isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda)):
            return lets, body
        value = args[0]
        if lets and (bound & free_identifiers(value) or not _stages_only(value)
                     or not any(isinstance(x, Prim) and x.name == "to_local" for x in _walk(value))):
            return lets, body
        lets.append((value, args[1].param))
        bound.add(args[1].param.name)
        body = args[1].body


def _double_buffer_build(m):
    """The step's stagings as one: `let (pair V1 (pair V2 ...)) (fun(p) => B[y1 := fst p, y2 := fst (snd p), ...])`,
    so both tiles are staged a step ahead."""
    f = m.f
    lets, rest = _staging_lets(f.body.body, f.param.name)
    if len(lets) > 1:
        from ..expr import fresh_name, substitute

        taken = free_identifiers(rest) | {y.name for _, y in lets} | {f.param.name, f.body.param.name}
        p = Identifier(fresh_name("staged", taken))
        value, part = lets[-1][0], p
        for v, _ in reversed(lets[:-1]):
            value = App(App(Prim("pair"), v), value)
        for k, (_, y) in enumerate(lets):
            last = k == len(lets) - 1
            rest = substitute(rest, y.name, part if last else App(Prim("fst"), part))
            part = App(Prim("snd"), part)
        body = App(App(Prim("let"), value), Lambda(p, rest))
        f = Lambda(f.param, Lambda(f.body.param, body))
    return App(App(App(Prim("reduce_seq_double_buffered"), f), m.z), m.xs)


def _ex_double_buffer(rng):
    n, m = int(rng.integers(1, 6)), inst.size(rng)
    scale = float(rng.integers(1, 4))

    two = rng.random() < 0.5

    def step(acc, x):
        staged = fl.to_local(fl.map_seq(fl.lam(lambda v: v * scale), x))
        if two:  # a second staging after the first: both staged a step ahead, as a pair
            return fl.let(staged, fl.lam(lambda y: fl.let(fl.to_local(fl.map_seq(fl.lam(lambda v: v + 1.0), x)),
                                                          fl.lam(lambda u: acc + fl.reduce_seq(fl.add, 0.0, y)
                                                                 * fl.reduce_seq(fl.add, 0.0, u)))))
        return fl.let(staged, fl.lam(lambda y: acc + fl.reduce_seq(fl.add, 0.0, y)))

    prog = inst.matrix_program(n, m, lambda xss: fl.reduce_seq(fl.lam(step), 0.0, xss))
    return prog, (inst.data(rng, n, m),), {}


rule("double_buffer", "lowering",
     "reduce_seq (fun(acc, x) => let V (fun(y) => B)) z xs -> reduce_seq_double_buffered (fun(acc, x) => "
     "let V (fun(y) => B)) z xs   (V: stores into local memory seen through views, not reading acc; stagings "
     "one after another, let V1 (fun(y1) => let V2 (fun(y2) => B)), staged together: let (pair V1 V2) (fun(p) => "
     "B[y1 := fst p, y2 := snd p]))",
     lhs=P("reduce_seq", V("f"), V("z"), V("xs")), side=_double_buffer_side,
     build=_double_buffer_build, example=_ex_double_buffer,
     doc="Double buffering: the staging of element i + 1 (a work-group's copy of the next tile into local "
         "memory) runs, into a second buffer, before the step on element i, so the copy overlaps the "
         "products (the translation's schedule, dpia.translate; its copies plain: async_staging makes them "
         "asynchronous).  The same fold: the staging reads neither the accumulator nor anything a step writes.")


def _ex_async_staging(rng):
    n, m = int(rng.integers(1, 6)), inst.size(rng)
    scale = float(rng.integers(1, 4))

    def step(acc, x):
        return fl.let(fl.to_local(fl.map_seq(fl.lam(lambda v: v * scale), x)),
                      fl.lam(lambda y: acc + fl.reduce_seq(fl.add, 0.0, y)))

    prog = inst.matrix_program(n, m, lambda xss: fl.reduce_seq_double_buffered(fl.lam(step), 0.0, xss))
    return prog, (inst.data(rng, n, m),), {}


rule("async_staging", "lowering",
     "reduce_seq_double_buffered f z xs -> reduce_seq_double_buffered_async f z xs   (the stagings' copies "
     "asynchronous where the device has them)",
     lhs=P("reduce_seq_double_buffered", V("f"), V("z"), V("xs")),
     build=lambda m: App(App(App(Prim("reduce_seq_double_buffered_async"), m.f), m.z), m.xs),
     example=_ex_async_staging,
     doc="The double-buffered fold's stagings issued as asynchronous copies (cp.async: a copy from global to "
         "local memory that needs no register and no wait until the barrier before the step reading it) where "
         "the target offers them, plain copies elsewhere.  Which is faster depends on the tiles, so it is a "
         "choice of its own; the same fold.")
