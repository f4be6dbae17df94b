"""Where a low-level program's values must be stored, and where a copy loop must write them:
the analysis behind the default lowering's store phase and behind the translation's errors.

The translation (dpia/translate.py) has two modes: the acceptor translation `acc` writes a
value into a place, the continuation translation `con` reads it.  `first_need(program)` walks
a program as they would and returns the first place where one of them would have to refuse,
with the rule that fixes it (a `Need`):

    a value that loops write is read         -> materialise_{global,local,private} (a to_X)
    a view of readable data is written       -> copy_{global,local,seq} (a copy loop)
    a generate or lazy map whose function
    loops or allocates is read               -> generate_as_map_{global,seq} / lower_map_{global,seq}

Where code runs decides the space and the loop.  The contexts:

    HOST      program-level code: the host plan's kernels (parallel loops start here)
    HOST_SEQ  program-level code inside a sequential loop (a reduction's step): one work-item
    GROUP     inside map_workgroup, outside map_local: every item of a group runs it
    ITEMS     inside a map_local whose function runs a map_local of another dimension, outside
              that: every item of those other dimensions runs it (a row's code in
              `map_local 1 (fun(row) => ... map_local 0 ...)`, the stages of a tree over it)
    ITEM      inside map_global / map_local: one work-item's own code

Stores go to global memory on the host, local memory in a group's shared code, private memory
for a work-item's small values (at most PRIVATE_LIMIT scalars) and global memory otherwise (one
slot per work-item: imperative.passes.slot_parallel_globals).  In ITEMS code, a value that a
parallel loop writes (element by element, by different items) goes to global memory, one slot
per enclosing parallel loop's index, which all the items sharing it read (the translation has
one item write what such code writes to shared memory, imperative.passes.insert_barriers
orders them); a value that a sequential loop computes is computed by each of them, and stored
like an item's.  Copies are map_global loops on the host, map_local in a group (over the local
dimensions its work-groups have, `enclosing_group_dims`), map_seq inside a work-item.
"""

from __future__ import annotations

import attrs

from .expr import Expr, Identifier, Lambda, Literal, NatLambda, Prim, spine, trivial, walk
from .lane_ownership import Lanes, lanes_of, owned_size, reads_own_lanes
from .primitives import (COLLECTIVES, LAYOUT, LOOP_MAPS, LOW_REDUCTIONS, PARALLEL_MAPS, PRIMITIVES, READ_VIEWS, SCALAR,
                         STORES, WARP_REDUCTIONS, WRITE_VIEWS, computing_map, has_computation, is_view_fn)
from .infer import index_as_nat
from .nat import as_nat, in_range, nat
from .types import ArrayType, DataType, ScalarType, TupleType, VectorType, holds_array, nat_vars

HOST, HOST_SEQ, GROUP, ITEMS, ITEM = "host", "host_seq", "group", "items", "item"

PRIVATE_LIMIT = 64  # scalars: a per-item array up to this size lives in private memory, larger ones in global

# The context a parallel map's function runs in (from the primitives' declared loops)
_PARALLEL = {n: GROUP if PRIMITIVES[n].loop == "workgroup" else ITEM for n in PARALLEL_MAPS}


# ------------------------------------------------------------------------------- paths


def arg_path(nargs: int, k: int) -> tuple[int, ...]:
    """The path from `f a0 ... a(n-1)` to argument k."""
    return (0,) * (nargs - 1 - k) + (1,)


def through_views(e: Expr, path: tuple) -> tuple | None:
    """The path of the computing map the node at `path` is, under layout views only
    (`map join (transpose (map g ys))`: every element of its result is one of the map's),
    each a view the map's items can write through (`join`, not `reorder_stride`), with
    data that only views (ys computes nothing), else None: an item computing more than the
    map, or reading its result through a view (a copy), would read other items' results
    from a temporary of its own (seed 771: `to_private` of a parallel map's result), and
    what the data computes would be computed by every item of the inner dimension into one
    temporary per outer item (a race)."""
    from .strategies import at_path

    node = at_path(e, path)
    while True:
        if computing_map(node):
            return None if has_computation(spine(node)[1][1]) else path
        head, args = spine(node)
        if not (isinstance(head, Prim) and args) or not (
                head.name in WRITE_VIEWS or (head.name == "map" and len(args) == 2 and _written_through(args[0]))):
            return None
        path, node = path + arg_path(len(args), len(args) - 1), args[-1]


def _written_through(f: Expr) -> bool:
    """`f` moves data through views that can all be written through (`join`, `map transpose`)."""
    return is_view_fn(f) and all(x.name in WRITE_VIEWS for x in walk(f) if isinstance(x, Prim) and x.name in LAYOUT)


def function_context(ctx: str, name: str, loop: Expr | None = None) -> str:
    """The context of the function a loop primitive applies; `loop`, the primitive (a `Prim`)
    or its application, decides for a map_local: one whose function runs a map_local of
    another dimension is shared by those dimensions' items (ITEMS)."""
    if name in _PARALLEL:
        if name == "map_local" and loop is not None and runs_local_of_other_dimension(loop):
            return ITEMS
        return _PARALLEL[name]
    return HOST_SEQ if ctx == HOST else ctx


def runs_local_of_other_dimension(loop: Expr) -> bool:
    """`loop`, `map_local d f` (applied or not), runs a map_local of another dimension in `f`, or a
    collective (mma_sync: its lanes are the items of dimension 0)."""
    head, args = spine(loop)
    if not (isinstance(head, Prim) and head.name == "map_local" and args):
        return False
    dim = head.params[0]
    return any(isinstance(x, Prim) and ((x.name == "map_local" and x.params[0] != dim)
                                        or (x.name in COLLECTIVES and dim != 0)) for x in walk(args[0]))


def writes_in_parallel(e: Expr) -> bool:
    """The array `e` computes is written by a parallel loop: `e` is a parallel map or a collective,
    or a loop or reduction whose function or initial value runs one (its elements are then
    written by different items)."""
    head, args = spine(e)
    if not isinstance(head, Prim):
        return False
    if head.name in PARALLEL_MAPS or head.name in COLLECTIVES:
        return True
    written = args[:1] if head.name in LOOP_MAPS else args[:2] if head.name in LOW_REDUCTIONS else []
    return any(isinstance(x, Prim) and (x.name in PARALLEL_MAPS or x.name in COLLECTIVES)
               for a in written for x in walk(a))


# ---------------------------------------------------------------------------- storage


@attrs.frozen
class Need:
    """A place where the translation would refuse, and the rule that fixes it."""

    path: tuple
    rule: str
    why: str
    required: bool = True  # False: a choice of the default lowering (where a large accumulator lives)

    def proposal(self, node: Expr) -> str:
        """The fix, written as the program text that replaces `node`."""
        text = _short(str(node))
        if self.rule.startswith("materialise_"):
            return f"store it first: to_{self.rule[len('materialise_'):]} ({text})"
        if self.rule.startswith("copy_"):
            loop = {"global": "map_global 0", "local": "map_local 0", "seq": "map_seq"}[self.rule[len("copy_"):]]
            return f"write it with a loop: {loop} (fun(x) => x) ({text}) (nested for nested arrays)"
        if self.rule.startswith("generate_as_"):
            return f"build the array with a loop: {self.rule[len('generate_as_'):]} f (generate n (fun(i) => i))"
        return f"lower the map: {self.rule[len('lower_'):]} ... ({text})"


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


def store_rule(ctx: str, t, step_sizes: frozenset = frozenset(), owners: int = 1,
               private_limit: int = PRIVATE_LIMIT) -> str:
    """Where a value computed in `ctx` is stored: global memory on the host, local memory in a
    work-group's shared code, private memory for a work-item's small values, else global
    memory (the translation gives each work-item, or each work-group, its own slot).  ITEMS
    code's values are stored like an item's (each item sharing the code computes them) unless
    a parallel loop writes them: the analysis stores those in global memory itself.

    OpenCL allocates local memory at compile time: a group's value goes there only when its
    size is a constant or depends on `step_sizes` alone (an iterate's size variables, constant
    in each of its unrolled steps); one whose size depends on the program's sizes goes to
    global memory.  `owners`: items that each hold only their own part of the value (a
    lane-owned value, functional.lane_ownership), so each stores 1 / owners of it."""
    if ctx == GROUP:
        return "materialise_local" if nat_vars(t) <= step_sizes else "materialise_global"
    if ctx in (ITEM, ITEMS):
        count = _scalars(t)
        if count is not None and count <= private_limit * owners:
            return "materialise_private"
    return "materialise_global"


def copy_rule(ctx: str) -> str:
    return {HOST: "copy_global", GROUP: "copy_local"}.get(ctx, "copy_seq")


def _is_data(t) -> bool:
    return isinstance(t, DataType)


class _Walk:
    """The translation's two modes over the functional program, finding the first Need
    (only needs the translation would refuse without, when `required_only`)."""

    def __init__(self, required_only: bool = False, step_sizes: frozenset = frozenset(), indices: dict | None = None,
                 scope: tuple | None = None, private_limit: int = PRIVATE_LIMIT):
        self.required_only = required_only
        self.private_limit = private_limit  # scalars: an item's array up to this size is private (store_rule)
        self.step_sizes = step_sizes  # the size variables of the enclosing iterates' steps
        self.indices = indices or {}  # an enclosing lazily read generate's index variable -> its length
        self.scope = scope  # (body, path) of the outermost enclosing ITEMS function: where its values are read

    def acc(self, e: Expr, path: tuple, ctx: str, space: str) -> Need | None:
        """`e` is written into a place in `space`."""
        head, args = spine(e)
        n = len(args)
        if isinstance(head, Lambda) and n:
            return self._applied(head, args, path, ctx, lambda b, p: self.acc(b, p, ctx, space))
        if isinstance(head, Prim) and n == _arity(head):
            name = head.name
            if name in LOOP_MAPS:
                return (self.con(args[1], path + arg_path(n, 1), ctx)
                        or self._over(args[0], args[1])._body(args[0], path + arg_path(n, 0),
                                                              function_context(ctx, name, e), space, 1))
            if name in WARP_REDUCTIONS:  # its lanes read the data; its operator combines scalars
                return self.con(args[2], path + arg_path(n, 2), ctx)
            if name in COLLECTIVES:  # its lanes read the operands and write their own elements
                return self._all([(k, a) for k, a in enumerate(args) if _is_data(a.t)], n, path, ctx)
            if name == "map" and _write_chain(args[0]):
                return self.acc(args[1], path + arg_path(n, 1), ctx, space)
            if name in STORES and STORES[name] == space:
                return self.acc(args[0], path + arg_path(n, 0), ctx, space)
            if name in WRITE_VIEWS:
                return self.acc(args[0], path + arg_path(n, 0), ctx, space)
            if name in ("zip", "pair", "concat"):
                return self.acc(args[0], path + arg_path(n, 0), ctx, space) or \
                    self.acc(args[1], path + arg_path(n, 1), ctx, space)
            if name == "let":
                return self.con(args[0], path + arg_path(n, 0), ctx) or \
                    self._let_body(args[1], path + arg_path(n, 1), lambda b, p: self.acc(b, p, ctx, space))
        if isinstance(head, Prim) and head.name in LOW_REDUCTIONS and holds_array(e.t):
            # written from its accumulator: a copy loop first, then the accumulator's place (con)
            return Need(path, copy_rule(ctx), "a reduction's array is written")
        read = self.con(e, path, ctx)  # the translation reads it first, then copies what it read
        if read is None and holds_array(e.t):  # copying an array needs loops
            return Need(path, copy_rule(ctx), "a view of readable data is written")
        return read

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
        if decl.level == SCALAR or name in READ_VIEWS or name in ("fst", "snd"):
            return self._all(data, n, path, ctx)
        if name in WARP_REDUCTIONS:
            return Need(path, store_rule(ctx, e.t, self.step_sizes, private_limit=self.private_limit), "the value a warp's lanes reduce to is read")
        if name in COLLECTIVES:
            lanes = self._owned(e, path) if ctx == ITEMS else None
            if ctx == ITEMS and lanes is None:
                return Need(path, "materialise_global", f"the array {name} computes is written by several items "
                                                        f"and read by all of them")
            return Need(path, store_rule(ctx, e.t, self.step_sizes, _owners(e.t, lanes), self.private_limit),
                        f"the array {name} computes is read")
        if name in LOOP_MAPS:
            if ctx == ITEMS and writes_in_parallel(e):
                return Need(path, "materialise_global", f"the array {name} computes is written by several items "
                                                        f"and read by all of them")
            return Need(path, store_rule(ctx, e.t, self.step_sizes, private_limit=self.private_limit), f"the array {name} computes is read")
        if name in LOW_REDUCTIONS:
            space = "private"
            count = _scalars(e.t)
            if ctx == ITEMS and holds_array(e.t) and writes_in_parallel(e):
                lanes = self._owned(e, path)
                if lanes is None:
                    return Need(path, "materialise_global", "a reduction's accumulator is written by several items "
                                                            "and read by all of them")
                count = None if count is None else count // _owners(e.t, lanes)  # each item's own part
                if any(isinstance(x, Prim) and x.name in COLLECTIVES for x in walk(args[0])):
                    count = 0  # a collective's accumulator: its instruction's registers (PTX fragments), whatever its size
            if self.required_only:
                pass
            elif ctx not in (ITEM, ITEMS) and holds_array(e.t):
                return Need(path, "materialise_global", "an array accumulator on the host", required=False)
            elif ctx in (ITEM, ITEMS) and holds_array(e.t) and (count is None or count > self.private_limit):
                return Need(path, "materialise_global", "a large array accumulator", required=False)
            return self._reduction(args, path, ctx, space)
        if name in STORES:
            inner_head, inner_args = spine(args[0])
            if isinstance(inner_head, Prim) and inner_head.name in LOW_REDUCTIONS and len(inner_args) == 3:
                return self._reduction(inner_args, path + arg_path(n, 0), ctx, STORES[name])
            return self.acc(args[0], path + arg_path(n, 0), ctx, STORES[name])
        if name == "let":
            return self.con(args[0], path + arg_path(n, 0), ctx) or \
                self._let_body(args[1], path + arg_path(n, 1), lambda b, p: self.con(b, p, ctx))
        if name == "iterate":
            f = args[0]
            f_path = path + arg_path(n, 0)
            need = self.con(args[1], path + arg_path(n, 1), ctx)
            if need or not isinstance(f, NatLambda) or not isinstance(f.body, Lambda):
                return need
            # a step's size variable is a constant in each unrolled step only where the data's
            # length is: over N elements, the first step's l is N / 2 (seed 357's local buffer)
            constant = nat_vars(args[1].t) <= self.step_sizes
            step = _Walk(self.required_only, self.step_sizes | {f.var} if constant else self.step_sizes, self.indices,
                         self.scope, self.private_limit)
            return step.con(f.body.body, f_path + (0, 0), ctx)
        if name == "map_vec":
            return self.con(args[1], path + arg_path(n, 1), ctx) or \
                self._body(args[0], path + arg_path(n, 0), ctx, None, 1, read=True)
        if name in ("generate", "map", "scatter"):
            if name == "scatter":
                return Need(path, store_rule(ctx, e.t, self.step_sizes, private_limit=self.private_limit), "a scatter is read")
            f_path = path + arg_path(n, 0)
            if name == "map":
                need = self.con(args[1], path + arg_path(n, 1), ctx)
                if need:
                    return need
            f = args[0]
            if name == "map" and not isinstance(f, Lambda) and is_view_fn(f) and _write_only(f):
                # `map (scatter idx) xs` has no read translation (scatter is a write view): stored,
                # its data written through the scatters
                return Need(path, store_rule(ctx, e.t, self.step_sizes, private_limit=self.private_limit), "a map of scatters is read")
            body = f.body if isinstance(f, Lambda) else None
            if body is None:
                return None
            indices = {**self.indices, f.param.name: as_nat(head.params[0])} if name == "generate" else \
                self._over(f, args[1]).indices
            if not _pure(body, indices):
                return Need(path, _lowering_of(name, ctx), f"{name}'s function loops or allocates")
            walker = _Walk(self.required_only, self.step_sizes, indices, self.scope, self.private_limit)
            return walker.con(body, f_path + (0,), ctx)
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

    def _over(self, f, data: Expr) -> _Walk:
        """The walk into the body of a map of `f` over `data`: f's parameter bound again is no
        index, but over `generate n (fun(i) => i)` (split-k's chunks) it is one, below n."""
        if not isinstance(f, Lambda):
            return self
        indices = {k: v for k, v in self.indices.items() if k != f.param.name}
        head, args = spine(data)
        if isinstance(head, Prim) and head.name == "generate" and len(args) == 1 and isinstance(args[0], Lambda) \
                and isinstance(args[0].body, Identifier) and args[0].body.name == args[0].param.name:
            indices[f.param.name] = as_nat(head.params[0])
        return _Walk(self.required_only, self.step_sizes, indices, self.scope, self.private_limit)

    def _body(self, f, path, ctx, space, params: int, read: bool = False):
        """The body of a loop's function (`params` parameters), written into `space`."""
        body, body_path = f, path
        for _ in range(params):
            if not isinstance(body, Lambda):
                head, args = spine(body)
                if params == 1 and isinstance(head, Prim) and head.name in LOOP_MAPS and len(args) == 1:
                    # `map_p g` as the function (`map_global 1 (map_global 0 g)`): g runs per element
                    return self._body(args[0], body_path + arg_path(1, 0), function_context(ctx, head.name, body), space,
                                      1, read)
                return None  # a primitive function: nothing of the program's to store
            body, body_path = body.body, body_path + (0,)
        walker = self
        if ctx == ITEMS and self.scope is None:  # the items' shared code: every read of its values is in it
            walker = _Walk(self.required_only, self.step_sizes, self.indices, (body, body_path), self.private_limit)
        return walker.con(body, body_path, ctx) if read else walker.acc(body, body_path, ctx, space)

    def _owned(self, e: Expr, path: tuple) -> Lanes | None:
        """The lanes of `e`, a value ITEMS code writes in parallel, when every item reads only its
        own elements of it (functional.lane_ownership) in the enclosing ITEMS code."""
        lanes = lanes_of(e)
        if lanes is None or self.scope is None:
            return None
        body, body_path = self.scope
        if path[:len(body_path)] != body_path:
            return None
        from .strategies import replace_at

        marked = replace_at(body, path[len(body_path):], Identifier("owned#", t=e.t))
        return lanes if reads_own_lanes(marked, {"owned#": lanes}) else None

    def _reduction(self, args, path, ctx, space):
        f, z, xs = args
        step = function_context(ctx, "reduce_seq")
        return (self.con(xs, path + arg_path(3, 2), ctx)
                or self.acc(z, path + arg_path(3, 1), ctx, space)
                or self._body(f, path + arg_path(3, 0), step, space, 2))


def _owners(t, lanes: Lanes | None) -> int:
    """How many items share a lane-owned value of type `t` (1: not lane-owned)."""
    return (owned_size(t, lanes) or 1) if lanes is not None else 1


def _write_only(f: Expr) -> bool:
    """`f` is a layout function (`scatter idx`, `map (scatter idx)`) with a primitive the
    translation can write through but not read (no read view)."""
    return any(isinstance(x, Prim) and x.name in WRITE_VIEWS and x.name not in READ_VIEWS for x in walk(f))


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
            elif head.name not in WRITE_VIEWS or len(args) != 1:
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
    return head.name in WRITE_VIEWS and not args


def _pure(body: Expr, indices: dict | None = None) -> bool:
    """`body` neither loops nor allocates: the translation can recompute it where it is read.
    `indices`: the identifiers bound to an enclosing generate's index in `body`, with that
    generate's length."""
    indices = indices or {}
    if isinstance(body, Lambda) and body.param.name in indices:  # the name bound again: not an index
        indices = {k: v for k, v in indices.items() if k != body.param.name}
    head, args = spine(body)
    if isinstance(head, Prim):
        if head.name in LOOP_MAPS or head.name in LOW_REDUCTIONS or head.name in STORES or \
                head.name in ("reduce", "iterate"):
            return False
        if head.name == "let" and args and not trivial(args[0]):
            return False  # a computed value is stored once (a private variable)
        if head.name == "map" and args and not is_view_fn(args[0]):
            return False
        if head.name == "at" and len(args) == 2 and not _index_in_range(args[0], args[1], indices):
            return False  # the translation clamps the index into a private variable (translate._con_element)
        if head.name == "generate" and len(args) == 1 and isinstance(args[0], Lambda):
            return _pure(args[0].body, {**indices, args[0].param.name: as_nat(head.params[0])})
    return all(_pure(c, indices) for c in body.children())


def _index_in_range(xs: Expr, index: Expr, indices: dict) -> bool:
    """Whether `at xs index` reads at a size the translation proves within xs: a constant (or a
    size) in range, a generate's index over no more elements than xs has, or arithmetic of
    such (functional.infer.index_as_nat: `nat_value N - 1 - i` reads a reversal)."""
    if not isinstance(xs.t, ArrayType):
        return False
    ranges = {name: nat(f"index_{name}", lo=0, hi=n) for name, n in indices.items()}
    known = index_as_nat(index, ranges)
    return known is not None and in_range(known, xs.t.size)


def _lowering_of(name: str, ctx: str) -> str:
    if name == "generate":
        return "generate_as_map_global" if ctx == HOST else "generate_as_map_seq"
    return "lower_map_global" if ctx == HOST else "lower_map_seq"


def _short(s: str, width: int = 70) -> str:
    return s if len(s) <= width else s[: width - 3] + "..."


def enclosing_group_dims(program: Expr, path: tuple) -> frozenset[int]:
    """The dimensions of the map_workgroup loops whose functions hold the node at `path` (the
    dimensions a copy there can spread over local ids)."""
    dims: set[int] = set()
    e, rest = program, tuple(path)
    while rest:
        head, args = spine(e)
        if isinstance(head, Prim) and head.name == "map_workgroup" and args:
            into_f = arg_path(len(args), 0)
            if rest[:len(into_f)] == into_f:
                dims.add(head.params[0])
        e, rest = e.children()[rest[0]], rest[1:]
    return frozenset(dims)


def first_need(program: Expr, required_only: bool = False, private_limit: int = PRIVATE_LIMIT) -> Need | None:
    """The first place where the lowered `program` needs a store or a copy (a value loops
    write is read, a view of readable data is written; with `required_only`, only those the
    translation would refuse without), with its fix; an item's arrays of at most
    `private_limit` scalars are stored in private memory."""
    e, path = program, ()
    while isinstance(e, (NatLambda, Lambda)):
        e, path = e.body, path + (0,)
    return _Walk(required_only, private_limit=private_limit).acc(e, path, HOST, "global")


__all__ = ["HOST", "HOST_SEQ", "GROUP", "ITEMS", "ITEM", "PRIVATE_LIMIT", "Need", "arg_path", "copy_rule",
           "enclosing_group_dims", "first_need",
           "function_context",
           "runs_local_of_other_dimension", "store_rule", "writes_in_parallel"]
