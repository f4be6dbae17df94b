"""The default lowering: any well-typed high-level program becomes a low-level program that
the DPIA translation accepts.  It is a strategy like any other, so its result is a
derivation of rule steps that prints, stores and replays.

Its phases, in order (`PHASES`):

    eta          functions of maps as lambdas (the data-flow normal form the later phases read)
    fuse         producer maps into their consumers (no intermediate arrays between maps)
    reductions   large program-level reductions in two stages (schedules.two_stage_reduction)
    parallelise  maps the host runs -> map_global (map_global 1 / 0 for a perfectly nested map of
                 maps); maps one work-item runs -> map_seq; reduce -> reduce_seq
    store        where the translation reads a value that loops write, the value is stored:
                 to_global on the host, to_private per work-item when it is small, else
                 to_global (one slot per work-item); where it writes a view of readable data
                 (an input, a stored array), a copy loop: map_global on the host, map_seq inside
    check        nothing computing is left high level

Where code runs decides both parallelism and storage.  The contexts:

    HOST      program-level code: the host plan's kernels (parallel loops start here)
    HOST_SEQ  program-level code inside a sequential loop (a reduction's step): one work-item
    GROUP     inside map_workgroup, outside map_local: every item of a group runs it
    ITEM      inside map_global / map_local: one work-item's own code

The store phase mirrors the translation (dpia/translate.py): the acceptor translation `acc`
writes a value into a place, the continuation translation `con` reads it.  `first_need` walks
the program as they would and names the first place where one of them would have to refuse,
with the fix; the phase applies fixes until none is needed.
"""

from __future__ import annotations

from typing import Iterator

import attrs

from .expr import App, Expr, Identifier, Lambda, Literal, NatApp, NatLambda, Prim, spine
from .primitives import PRIMITIVES, SCALAR
from .rules.core import RULES
from .strategies import Failure, Step, Strategy, Success, at_path, replace_at
from .types import ArrayType, DataType, ScalarType, TupleType, VectorType

HOST, HOST_SEQ, GROUP, ITEM = "host", "host_seq", "group", "item"

PRIVATE_LIMIT = 64  # scalars: a per-item array up to this size lives in private memory, larger ones in global

_PARALLEL = {"map_global": ITEM, "map_local": ITEM, "map_workgroup": GROUP}
_LOW_MAPS = frozenset({"map_global", "map_workgroup", "map_local", "map_seq", "map_seq_unroll"})
_REDUCTIONS = frozenset({"reduce_seq", "reduce_seq_unroll"})
_STORES = {"to_global": "global", "to_local": "local", "to_private": "private"}
# Read as views by the translation's `con` (dpia.translate._VIEWS), and written through by its `acc`
_READ_VIEWS = frozenset({"split", "join", "transpose", "reorder_stride", "gather", "as_vector", "as_scalar", "take",
                         "drop", "slide", "pad_clamp", "pad_wrap", "pad_mirror", "pad_const", "zip", "unzip", "pair",
                         "concat"})
_WRITE_VIEWS = frozenset({"join", "split", "transpose", "as_scalar", "as_vector", "scatter"})


# ------------------------------------------------------------------------------- paths


def arg_path(nargs: int, k: int) -> tuple[int, ...]:
    """The path from `f a0 ... a(n-1)` to argument k."""
    return (0,) * (nargs - 1 - k) + (1,)


def _inner(ctx: str, name: str) -> str:
    """The context of the function a loop primitive applies."""
    if name in _PARALLEL:
        return _PARALLEL[name]
    return HOST_SEQ if ctx == HOST else ctx


# ---------------------------------------------------------------------- parallelise


def _is_view_fn(f: Expr) -> bool:
    from .schedules import is_view_fn

    return is_view_fn(f)


def _computing_map(e: Expr) -> bool:
    head, args = spine(e)
    return isinstance(head, Prim) and head.name == "map" and 1 <= len(args) <= 2 and not _is_view_fn(args[0])


def _perfectly_nested(e: Expr) -> bool:
    from .schedules import _perfectly_nested as nested

    return nested(e)


def lowering_sites(e: Expr, path: tuple = (), ctx: str = HOST) -> Iterator[tuple[tuple, str, dict]]:
    """(path, rule, params) for every high-level map and reduce, by where it runs: a host
    map runs in parallel over global ids, a map or reduction one item runs is a loop."""
    if isinstance(e, (Lambda, NatLambda)):
        yield from lowering_sites(e.body, path + (0,), ctx)
        return
    if isinstance(e, NatApp):
        yield from lowering_sites(e.fun, path + (0,), ctx)
        return
    head, args = spine(e)
    n = len(args)
    if isinstance(head, Lambda):
        yield from lowering_sites(head, path + (0,) * n, ctx)
        for k, a in enumerate(args):
            yield from lowering_sites(a, path + arg_path(n, k), ctx)
        return
    if not isinstance(head, Prim):
        return
    name = head.name
    if name == "map" and _computing_map(e):
        f_path = path + arg_path(n, 0)
        if ctx == HOST and n == 2 and _perfectly_nested(e):
            yield path, "lower_map_global", {"d": 1}
            f = args[0]
            inner, inner_path = (f.body, f_path + (0,)) if isinstance(f, Lambda) else (f, f_path)
            _, iargs = spine(inner)
            yield inner_path, "lower_map_global", {"d": 0}
            in_n = len(iargs)
            yield from lowering_sites(iargs[0], inner_path + arg_path(in_n, 0), ITEM)
            if in_n == 2:
                yield from lowering_sites(iargs[1], inner_path + arg_path(in_n, 1), ITEM)
        elif ctx == HOST:
            yield path, "lower_map_global", {"d": 0}
            yield from lowering_sites(args[0], f_path, ITEM)
        else:
            yield path, "lower_map_seq", {}
            yield from lowering_sites(args[0], f_path, ctx)
        if n == 2:
            yield from lowering_sites(args[1], path + arg_path(n, 1), ctx)
        return
    if name == "reduce":
        yield path, "lower_reduce_seq", {}
        yield from lowering_sites(args[0], path + arg_path(n, 0), _inner(ctx, "reduce_seq"))
        for k in range(1, n):
            # an element-wise map feeding the fold is fused into it; a stage of partial reductions runs in parallel
            fused = k == 2 and _computing_map(args[k]) and not _reduces(spine(args[k])[1][0])
            yield from lowering_sites(args[k], path + arg_path(n, k), _inner(ctx, "reduce_seq") if fused else ctx)
        return
    inner = _inner(ctx, name) if name in _LOW_MAPS | _REDUCTIONS else ctx
    for k, a in enumerate(args):
        yield from lowering_sites(a, path + arg_path(n, k), inner if k == 0 and name in _LOW_MAPS | _REDUCTIONS else ctx)


def _reduces(f: Expr) -> bool:
    from .expr import walk

    return any(isinstance(x, Prim) and x.name in ("reduce", "reduce_seq", "reduce_seq_unroll") for x in walk(f))


def parallelise() -> Strategy:
    """Every high-level map and reduce lowered by where it runs (see lowering_sites)."""

    def run(e: Expr):
        steps: list[Step] = []
        for path, name, params in list(lowering_sites(e)):
            node = at_path(e, path)
            result = RULES[name].strategy(**params)(node)
            if not result.ok:
                return Failure(f"parallelise: {result.reason}")
            e = replace_at(e, path, result.expr)
            steps.extend(attrs.evolve(s, path=path + s.path) for s in result.steps)
        return Success(e, tuple(steps))

    return Strategy("parallelise", run)


# ---------------------------------------------------------------------------- storage


@attrs.frozen
class Need:
    """A place where the translation would refuse, and the rule that fixes it."""

    path: tuple
    rule: str
    why: str


def _scalars(t) -> int | None:
    """How many scalars a value of type `t` holds (None: a symbolic size)."""
    if isinstance(t, (ScalarType, VectorType)):
        return 1
    if isinstance(t, TupleType):
        counts = [_scalars(x) for x in t.elems]
        return None if None in counts else sum(counts)
    if isinstance(t, ArrayType):
        n, inner = t.size.as_int(), _scalars(t.elem)
        return None if n is None or inner is None else n * inner
    return None


def store_rule(ctx: str, t) -> str:
    """Where a value computed in `ctx` is stored: global memory on the host, local memory in a
    work-group's shared code, private memory for a work-item's small values, else global
    memory (the translation gives each work-item its own slot)."""
    if ctx == GROUP:
        return "materialise_local"
    if ctx == ITEM:
        count = _scalars(t)
        if count is not None and count <= PRIVATE_LIMIT:
            return "materialise_private"
    return "materialise_global"


def copy_rule(ctx: str) -> str:
    return {HOST: "copy_global", GROUP: "copy_local"}.get(ctx, "copy_seq")


def _has_array(t) -> bool:
    return isinstance(t, ArrayType) or (isinstance(t, TupleType) and any(_has_array(x) for x in t.elems))


def _is_data(t) -> bool:
    return isinstance(t, DataType)


class _Walk:
    """The translation's two modes over the functional program, finding the first Need."""

    def acc(self, e: Expr, path: tuple, ctx: str, space: str) -> Need | None:
        """`e` is written into a place in `space`."""
        head, args = spine(e)
        n = len(args)
        if isinstance(head, Lambda) and n:
            return self._applied(head, args, path, ctx, lambda b, p: self.acc(b, p, ctx, space))
        if isinstance(head, Prim) and n == _arity(head):
            name = head.name
            if name in _LOW_MAPS:
                return (self.con(args[1], path + arg_path(n, 1), ctx)
                        or self._body(args[0], path + arg_path(n, 0), _inner(ctx, name), space, 1))
            if name == "map" and _write_chain(args[0]):
                return self.acc(args[1], path + arg_path(n, 1), ctx, space)
            if name in _STORES and _STORES[name] == space:
                return self.acc(args[0], path + arg_path(n, 0), ctx, space)
            if name in _WRITE_VIEWS:
                return self.acc(args[0], path + arg_path(n, 0), ctx, space)
            if name in ("zip", "pair"):
                return self.acc(args[0], path + arg_path(n, 0), ctx, space) or \
                    self.acc(args[1], path + arg_path(n, 1), ctx, space)
            if name == "let":
                return self.con(args[0], path + arg_path(n, 0), ctx) or \
                    self._let_body(args[1], path + arg_path(n, 1), lambda b, p: self.acc(b, p, ctx, space))
        if _has_array(e.t):  # the translation reads it and must copy an array: loops are needed
            return Need(path, copy_rule(ctx), "a view of readable data is written")
        return self.con(e, path, ctx)

    def con(self, e: Expr, path: tuple, ctx: str) -> Need | None:
        """`e` is read."""
        if isinstance(e, (Identifier, Literal)):
            return None
        if isinstance(e, (Lambda, NatLambda)):
            return None  # a function value: its body is checked where it is applied
        head, args = spine(e)
        n = len(args)
        if isinstance(head, Lambda) and n:
            return self._applied(head, args, path, ctx, lambda b, p: self.con(b, p, ctx))
        if not isinstance(head, Prim) or n != _arity(head):
            return None
        name = head.name
        decl = PRIMITIVES[name]
        data = [(k, a) for k, a in enumerate(args) if _is_data(a.t)]
        if decl.level == SCALAR or name in _READ_VIEWS or name in ("fst", "snd"):
            return self._all(data, n, path, ctx)
        if name in _LOW_MAPS:
            return Need(path, store_rule(ctx, e.t), f"the array {name} computes is read")
        if name in _REDUCTIONS:
            space = "private"
            if ctx != ITEM and _has_array(e.t):
                return Need(path, "materialise_global", "an array accumulator on the host")
            count = _scalars(e.t)
            if ctx == ITEM and _has_array(e.t) and (count is None or count > PRIVATE_LIMIT):
                return Need(path, "materialise_global", "a large array accumulator")
            return self._reduction(args, path, ctx, space)
        if name in _STORES:
            inner_head, inner_args = spine(args[0])
            if isinstance(inner_head, Prim) and inner_head.name in _REDUCTIONS and len(inner_args) == 3:
                return self._reduction(inner_args, path + arg_path(n, 0), ctx, _STORES[name])
            return self.acc(args[0], path + arg_path(n, 0), ctx, _STORES[name])
        if name == "let":
            return self.con(args[0], path + arg_path(n, 0), ctx) or \
                self._let_body(args[1], path + arg_path(n, 1), lambda b, p: self.con(b, p, ctx))
        if name == "iterate":
            f = args[0]
            f_path = path + arg_path(n, 0)
            need = self.con(args[1], path + arg_path(n, 1), ctx)
            if need or not isinstance(f, NatLambda) or not isinstance(f.body, Lambda):
                return need
            return self.con(f.body.body, f_path + (0, 0), ctx)
        if name == "map_vec":
            return self.con(args[1], path + arg_path(n, 1), ctx) or \
                self._body(args[0], path + arg_path(n, 0), ctx, None, 1, read=True)
        if name in ("generate", "map", "scatter"):
            if name == "scatter":
                return Need(path, store_rule(ctx, e.t), "a scatter is read")
            f_path = path + arg_path(n, 0)
            if name == "map":
                need = self.con(args[1], path + arg_path(n, 1), ctx)
                if need:
                    return need
            f = args[0]
            body = f.body if isinstance(f, Lambda) else None
            if body is not None and not _pure(body):
                return Need(path, _lowering_of(name, ctx), f"{name}'s function loops or allocates")
            return self.con(body, f_path + (0,), ctx) if body is not None else None
        return self._all(data, n, path, ctx)

    # -- helpers --------------------------------------------------------------------------

    def _all(self, data, n, path, ctx):
        for k, a in data:
            need = self.con(a, path + arg_path(n, k), ctx)
            if need:
                return need
        return None

    def _applied(self, head: Lambda, args, path, ctx, then):
        n = len(args)
        for k, a in enumerate(args):
            need = self.con(a, path + arg_path(n, k), ctx)
            if need:
                return need
        body, body_path = head, path + (0,) * n
        for _ in range(n):
            if not isinstance(body, Lambda):
                return None
            body, body_path = body.body, body_path + (0,)
        return then(body, body_path)

    def _let_body(self, f, path, then):
        return then(f.body, path + (0,)) if isinstance(f, Lambda) else None

    def _body(self, f, path, ctx, space, params: int, read: bool = False):
        """The body of a loop's function (`params` parameters), written into `space`."""
        body, body_path = f, path
        for _ in range(params):
            if not isinstance(body, Lambda):
                return None  # a primitive function: nothing of the program's to store
            body, body_path = body.body, body_path + (0,)
        return self.con(body, body_path, ctx) if read else self.acc(body, body_path, ctx, space)

    def _reduction(self, args, path, ctx, space):
        f, z, xs = args
        step = _inner(ctx, "reduce_seq")
        return (self.con(xs, path + arg_path(3, 2), ctx)
                or self.acc(z, path + arg_path(3, 1), ctx, space)
                or self._body(f, path + arg_path(3, 0), step, space, 2))


def _arity(head: Prim) -> int:
    d = PRIMITIVES[head.name]
    return d.arity if d.arity >= 0 else len(head.params[0].params)


def _write_chain(f: Expr) -> bool:
    """`f` only moves data through write views (`join`, `fun(x) => split 4 (transpose x)`, a map
    of such): the translation writes through it."""
    def chain(body: Expr, param: str) -> bool:
        while not (isinstance(body, Identifier) and body.name == param):
            head, args = spine(body)
            if not isinstance(head, Prim) or not args:
                return False
            if head.name == "map" and len(args) == 2:
                if not _write_chain(args[0]):
                    return False
            elif head.name not in _WRITE_VIEWS or len(args) != 1:
                return False
            body = args[-1]
        return True

    if isinstance(f, Lambda):
        return not isinstance(f.body, Identifier) and chain(f.body, f.param.name)
    head, args = spine(f)
    if not isinstance(head, Prim):
        return False
    if head.name == "map" and len(args) == 1:
        return _write_chain(args[0])
    return head.name in _WRITE_VIEWS and not args


def _pure(body: Expr) -> bool:
    """`body` neither loops nor allocates: the translation can recompute it where it is read."""
    from .expr import walk

    from .rules.core import trivial

    for x in walk(body):
        head, args = spine(x)
        if isinstance(head, Prim) and (head.name in _LOW_MAPS or head.name in _REDUCTIONS or head.name in _STORES
                                       or head.name in ("reduce", "iterate")):
            return False
        if isinstance(head, Prim) and head.name == "let" and args and not trivial(args[0]):
            return False  # a computed value is stored once (a private variable)
        if isinstance(head, Prim) and head.name == "map" and not _is_view_fn(spine(x)[1][0] if spine(x)[1] else x):
            return False
    return True


def _lowering_of(name: str, ctx: str) -> str:
    if name == "generate":
        return "generate_as_map_global" if ctx == HOST else "generate_as_map_seq"
    return "lower_map_global" if ctx == HOST else "lower_map_seq"


def first_need(program: Expr) -> Need | None:
    """The first place where the translation would refuse the lowered `program` (a value
    loops write is read, or a view of readable data is written), with its fix."""
    e, path = program, ()
    while isinstance(e, (NatLambda, Lambda)):
        e, path = e.body, path + (0,)
    return _Walk().acc(e, path, HOST, "global")


def store_where_needed(fuel: int = 10_000) -> Strategy:
    """Apply `first_need`'s fixes until the translation needs none."""

    def run(e: Expr):
        steps: list[Step] = []
        for _ in range(fuel):
            need = first_need(e)
            if need is None:
                return Success(e, tuple(steps))
            node = at_path(e, need.path)
            params = {"d": 0} if need.rule == "lower_map_global" else {}
            result = RULES[need.rule].strategy(**params)(node)
            if not result.ok:
                return Failure(f"store: {need.why} at {'.'.join(map(str, need.path)) or 'root'}, and "
                               f"{need.rule} does not apply: {result.reason}")
            e = replace_at(e, need.path, result.expr)
            steps.extend(attrs.evolve(s, path=need.path + s.path) for s in result.steps)
        return Failure(f"store: no fixed point after {fuel} fixes (a bug in the default lowering)")

    return Strategy("store_where_needed", run)


# -------------------------------------------------------------------------- reductions

SMALL_REDUCTION = 1024  # a reduction of fewer elements runs on one work-item
CHUNK = 32  # elements each work-item folds per stage: few enough that f32 sums stay accurate (tree order)


def _scalar_values(t) -> bool:
    if isinstance(t, TupleType):
        return all(_scalar_values(x) for x in t.elems)
    return isinstance(t, ScalarType)


def _apply_at(e: Expr, path: tuple, rule: str, params: dict, steps: list) -> Expr | None:
    result = RULES[rule].strategy(**params)(at_path(e, path))
    if not result.ok:
        return None
    steps.extend(attrs.evolve(s, path=path + s.path) for s in result.steps)
    return replace_at(e, path, result.expr)


def split_reduction() -> Strategy:
    """At a reduction `reduce f z xs` of scalars (or tuples of scalars) over a long array, with
    `f` associative: stages of partial reductions of CHUNK elements each, every stage a parallel
    map over chunks, until fewer than SMALL_REDUCTION partial results are left for one item.

        reduce f z xs -> f z (reduce f e xs)                         z not neutral, e neutral
                      -> reduce f (reduce f e (take m xs)) (drop m xs)   m = CHUNK * (n / CHUNK)
                                                     (later stages: let-bound, computed once)
                      -> reduce f e (map (reduce f e) (split CHUNK xs))  (and again on the partials)

    The first stage reads the data through push_views (so a map producing xs fuses into the
    chunks); later stages read the previous stage's stored results.  Lengths without a known
    value or divisor stay sequential, and so do reductions whose operator is not known to be
    associative (functional.algebra): their order is the program's."""
    from . import algebra
    from .rules.macros import push_views, r
    from .strategies import argument, normalize, try_

    cuts = r("take_map") | r("drop_map") | r("take_zip") | r("drop_zip")

    def reducible(e: Expr) -> bool:
        head, args = spine(e)
        return (isinstance(head, Prim) and head.name == "reduce" and len(args) == 3 and _scalar_values(e.t)
                and algebra.associative(args[0]))

    def run(e: Expr):
        if not reducible(e):
            return Failure("split_reduction: not a reduction of scalars with an associative operator")
        n = spine(e)[1][2].t.size.as_int()
        if n is None or n < SMALL_REDUCTION:
            return Failure("split_reduction: too short, or of unknown length")
        steps: list[Step] = []
        path: tuple = ()
        f, z, _ = spine(e)[1]
        if not algebra.neutral(f, z):
            e = _apply_at(e, path, "reduce_neutral_init", {}, steps)
            if e is None:
                return Failure("split_reduction: no neutral element to start the partial reductions from")
            path = (1,)  # f z R: R
        first = True
        while True:
            node = at_path(e, path)
            n = spine(node)[1][2].t.size.as_int()
            if n <= CHUNK:
                break
            whole = CHUNK * (n // CHUNK)
            if whole != n and first:  # both parts read the data through its maps: fuse them into each part
                e = _apply_at(e, path, "reduce_take_drop", {"m": whole}, steps)
                pushed = try_(normalize(cuts))(at_path(e, path))
                steps.extend(attrs.evolve(s, path=path + s.path) for s in pushed.steps)
                e = replace_at(e, path, pushed.expr)
                path = path + arg_path(3, 1)  # reduce f (THIS) (drop m xs)
            elif whole != n:  # the partial results of the previous stage, computed once
                e = _apply_at(e, path, "reduce_take_drop_shared", {"m": whole}, steps)
                path = path + (1, 0) + arg_path(3, 1)  # let P (fun(ys) => reduce f (THIS) (drop m ys))
            e = _apply_at(e, path, "reduce_split", {"n": CHUNK}, steps)
            if first:
                pushed = try_(argument(push_views()))(at_path(e, path))
                steps.extend(attrs.evolve(s, path=path + s.path) for s in pushed.steps)
                e = replace_at(e, path, pushed.expr)
                first = False
        return Success(e, tuple(steps))

    return Strategy("split_reduction", run)


def _phase(name: str, s: Strategy) -> Strategy:
    return Strategy(name, s)


def _map_of_partial(e: Expr) -> bool:
    """`map (g a ...) xs`: the function is a partial application (`map (map abs)`), which the
    eta phase turns into a lambda; bare primitives (`map abs`) stay as they are."""
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "map" and args):
        return False
    f = args[0]
    return isinstance(f, App) or isinstance(f, NatApp)


def phases() -> tuple[tuple[str, Strategy], ...]:
    """The default lowering's phases, in order (see the module's docstring)."""
    from .rules.macros import guard, r
    from .schedules import fuse_maps, fully_lowered, outside_functions, two_stage_reduction
    from .strategies import normalize, seq, try_

    return (
        ("eta", try_(normalize(seq(guard("a map of a partial application", _map_of_partial), r("eta_expand_map"))))),
        ("fuse", fuse_maps()),
        ("reductions", outside_functions(split_reduction() | two_stage_reduction())),
        ("parallelise", parallelise()),
        ("fuse_reductions", try_(normalize(r("reduce_seq_map_fusion_shared")))),
        ("store", store_where_needed()),
        ("check", fully_lowered()),
    )


def default_schedule(program: Expr | None = None) -> Strategy:
    """The default lowering of any high-level program (`phases()`, on the program's body);
    what `dpia.compile` runs when no tuned variant is known.  Fixing the sizes first
    (`dpia.programs.fix_sizes`) lets the reductions phase split lengths without divisibility
    facts and the store phase keep small per-item arrays private."""
    del program  # the phases decide from the nodes' types
    from .schedules import program_body
    from .strategies import seq

    steps = phases()
    lowered = program_body(seq(*(s for name, s in steps if name != "check")))
    check = dict(steps)["check"]

    def run(e: Expr):
        result = lowered(e)
        if not result.ok:
            return Failure(f"default_schedule: {result.reason}")
        complete = check(result.expr)
        return result if complete.ok else complete

    return Strategy("default_schedule", run)


__all__ = ["default_schedule", "phases", "HOST", "HOST_SEQ", "GROUP", "ITEM", "PRIVATE_LIMIT", "Need", "arg_path", "first_need", "lowering_sites",
           "parallelise", "store_where_needed", "store_rule", "copy_rule"]
