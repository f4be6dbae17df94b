"""The strategy-preserving translation (Atkey, Steuwer, Lindley, Dubach): a low-level
functional program becomes an imperative program, by two mutually recursive translations:

    acc(E, out)   commands that write the value of E into the acceptor `out`
    con(E, k)     commands that compute E and pass it, as a readable expression, to `k`

Computational primitives loop or allocate exactly where the program says:

    acc(map_global d f xs, out) = con(xs, v => par_for[global d] i < n { acc(f v[i], out[i]) })
    acc(map_seq f xs, out)      = con(xs, v => for i < n { acc(f v[i], out[i]) })
    con(reduce_seq f z xs, k)   = new a in private { acc(z, a); con(xs, v => for i < n { acc(f a v[i], a) }); k(a) }
    con(to_local E, k)          = new t in local { acc(E, t); k(t) }
    acc(reduce_warp f z xs, out) = con(xs, v => par_for[local 0] lane < 32 { new w in private {
                                       w := lane < n ? v[lane] : z;  for h = n/2, ..., 1:
                                       (o := shuffle_down h w;  if lane < h { w := f (f z w) o });
                                       if lane == 0 { out[0] := w } } })
    acc(mma_sync c a b, out)    = con(c, a, b => par_for[local 0] lane < 32 { new d: vec[f32, 4] in private {
                                       d := mma_tf32 c[lane] a[lane] b[lane];  out[lane][r] := d.r } })
                                  (the tensor cores' instruction, where the target offers it; elsewhere each
                                  lane sums its own four elements, reading the other lanes' operands)

Layout primitives never copy: `con(split n E, k) = con(E, v => k(split n v))` and
`acc(join E, out) = acc(E, join_acc n out)`.  High-level `map`/`reduce` left in a program
are reported with their place: choosing their implementation is the strategy's job.
"""

from __future__ import annotations

from typing import Callable

import attrs

from functional.errors import excerpt
from functional.expr import (App, Expr, Identifier, Lambda, Literal, NatApp, NatLambda, Prim, free_identifiers, spine,
                             substitute_nat, walk)
from functional.infer import constant_index, infer
from functional.nat import ARITHMETIC, Nat, divides, floordiv, in_range
from functional.storage import first_need
from functional.strategies import at_path
from functional.nat import Var as NatVar
from functional.nat import substitute as nat_substitute
from functional.primitives import (COLLECTIVES, DOUBLE_BUFFERED_FOLDS, LOOP_MAPS, LOW_REDUCTIONS, MMA_K, PRIMITIVES,
                                  READ_VIEWS, SCALAR, STORES, WARP_LANES, WARP_REDUCTIONS, WARP_TYPES, WRITE_VIEWS,
                                  fragment_holder, fragment_position)
from functional.types import (
    AddressSpace,
    ArrayType,
    FunType,
    NatFunType,
    ScalarType,
    TupleType,
    VectorType,
    boolean,
    i32,
    map_nats,
)
from imperative.ir import (
    Acc,
    Assign,
    Cmd,
    Exp,
    For,
    Idx,
    IdxAcc,
    If,
    Level,
    Lit,
    Mem,
    MemAcc,
    NatExp,
    New,
    Op,
    ParFor,
    Program,
    Proj,
    ProjAcc,
    Seq,
    Skip,
    View,
    ViewAcc,
    mem_written,
    seq,
)
from imperative.ir import walk as walk_cmds

from .phrases import AccessError, TranslationError, check_access  # noqa: F401 -- AccessError: re-raised with its fix

# From the primitives' declarations (functional.primitives): how each map runs, where each store puts its value
_LEVELS = {n: Level(PRIMITIVES[n].loop) for n in LOOP_MAPS if PRIMITIVES[n].loop != "seq"}
_SPACES = {n: AddressSpace(space) for n, space in STORES.items()}
_VIEWS = READ_VIEWS
_WRITE_VIEWS = WRITE_VIEWS

_NAMES = {Level.GLOBAL: "map_global", Level.WORKGROUP: "map_workgroup", Level.LOCAL: "map_local"}
K = Callable[[Exp], "Cmd"]  # noqa: F821 -- a continuation


def _index_nat(j: Exp) -> Nat | None:
    """An index value as a size expression: loops' and generates' indices and sizes (NatExp),
    an element of a generate of such,
    integer literals, and +, -, *, min, max of them (functional.infer.index_as_nat, the store
    phase's view of the same index); None for an index computed from data."""
    if isinstance(j, NatExp):
        return j.nat
    if isinstance(j, Idx) and isinstance(j.array, View) and j.array.kind == "generate":
        # element j.index of `generate n (fun(i) => E)`: E at that index (split-k's chunk k)
        from imperative.views import substitute_index

        _, var = j.array.params
        return _index_nat(substitute_index(j.array.args[0], var, j.index))
    if isinstance(j, Lit) and isinstance(j.value, int) and not isinstance(j.value, bool):
        return Nat.const(j.value)
    if isinstance(j, Op) and j.name in ARITHMETIC and not j.params and len(j.args) == 2 \
            and getattr(j.type, "name", None) in ("i32", "u32"):
        parts = [_index_nat(a) for a in j.args]
        return None if None in parts else ARITHMETIC[j.name](*parts)
    return None


@attrs.define
class Translator:
    """One translation run; the counter names temporaries and loop variables."""

    counter: int = 0
    levels: list = attrs.Factory(list)  # enclosing parallel loops: (Level, dim)
    private_temporaries: set = attrs.Factory(set)  # the private temporaries `to_private E` made
    local_dims: frozenset = frozenset()  # the dimensions the program's map_local loops run over
    intrinsics: frozenset = frozenset()  # the device intrinsics the target offers (imperative.ir.INTRINSIC_OPS)

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}{self.counter}"

    def loop_var(self, base: str, n: Nat) -> NatVar:
        return NatVar(self.fresh(base), 0, n)

    # -- errors -------------------------------------------------------------------------
    def fail(self, node: Expr, message: str):
        raise TranslationError(message, where=excerpt(str(node)), origin=node.origin)

    # -- acceptor translation -------------------------------------------------------------
    def acc(self, e: Expr, env: dict, out: Acc):
        head, args = spine(e)
        if isinstance(head, Lambda) and args:
            return self.con(args[0], env, lambda v: self.acc(_rest(head.body, args[1:]), {**env, head.param.name: v}, out))
        if isinstance(head, Prim) and len(args) == _arity(head):
            name = head.name
            if name in LOOP_MAPS:
                return self._map(e, head, args, env, out)
            if name in WARP_REDUCTIONS:
                return self._warp(e, args, env, out)
            if name in COLLECTIVES:
                return self._mma(e, args, env, out)
            if name == "map":  # a map of layout views is a write view; any other needs a chosen loop
                chain = _write_chain(args[0])
                if chain is None:
                    self.fail(e, "map is not lowered: choose its implementation with a rule "
                                 "(e.g. map_global/map_workgroup/map_local/map_seq)")
                return self.acc(args[1], env, ViewAcc("map_acc", (chain,), out, args[1].t))
            if name in _SPACES:
                return self._store_into(e, head, args, env, out)
            if name in _WRITE_VIEWS:
                view = ViewAcc(_WRITE_VIEWS[name], _write_params(head, args), out, args[0].t)
                return self.acc(args[0], env, view)
            if name == "zip":
                return seq(self.acc(args[0], env, ViewAcc("zip_acc", (0,), out, args[0].t)),
                           self.acc(args[1], env, ViewAcc("zip_acc", (1,), out, args[1].t)))
            if name == "concat":  # each part written in place: the second one its first's length further
                return seq(self.acc(args[0], env, ViewAcc("offset_acc", (Nat.const(0),), out, args[0].t)),
                           self.acc(args[1], env, ViewAcc("offset_acc", (args[0].t.size,), out, args[1].t)))
            if name == "pair":
                return seq(self.acc(args[0], env, ProjAcc(out, 0, args[0].t)),
                           self.acc(args[1], env, ProjAcc(out, 1, args[1].t)))
            if name == "let":
                return self.con(args[0], env, lambda v: self._once(v, lambda v2: self.apply(
                    args[1], [v2], env, lambda call, env2: self.acc(call, env2, out))))
        return self.con(e, env, lambda v: self.copy(v, out, e))

    def _once(self, v: Exp, k: K):
        """A let's value, computed once: a scalar computation is stored in a private
        variable that every use reads (a view or a stored value is passed on as it is)."""
        v = _lanes(v)[0]
        if isinstance(v, Op) and isinstance(v.type, (ScalarType, VectorType)):
            tmp = Mem(self.fresh("v"), v.type, AddressSpace.PRIVATE)
            return New(tmp, seq(Assign(MemAcc(tmp), v), k(tmp)))
        return k(v)

    def copy(self, v: Exp, out: Acc, node: Expr):
        t = v.type
        if isinstance(t, (ScalarType, VectorType)):
            return self.assign(out, v)
        if isinstance(t, TupleType):
            return seq(*(self.copy(Proj(v, k, et), ProjAcc(out, k, et), node) for k, et in enumerate(t.elems)))
        self.fail(node, f"writing this {t} needs a copy loop the program does not choose: "
                        f"compute it with map_seq/map_local/map_global (e.g. map_seq (fun(x) => x))")

    def assign(self, out: Acc, v: Exp):
        """`out := v`.  Code directly inside a work-group loop runs on every item of the
        group; code inside map_local loops on every item of the local dimensions they leave
        free (a map_local 1 beside map_local 0 loops, or with some in its function); their
        writes to shared memory are made by one item (local id 0 in each such dimension), so
        they are not a race (an update `acc[i] := acc[i] + x` made by every item of a free
        dimension in turn would add x several times)."""
        if not self.levels or _space_of(out) is AddressSpace.PRIVATE:
            return Assign(out, v)
        group_code = self.levels[-1][0] is Level.WORKGROUP
        covered = {dim for level, dim in self.levels if level is Level.LOCAL}
        groups = [dim for level, dim in self.levels if level is Level.WORKGROUP]
        first = None
        for dim in sorted(set(groups) | (self.local_dims if groups else set())):
            # a free dimension of items: every one in a work-group's own code, else one the program has items in
            if dim not in covered and (group_code or dim in self.local_dims):
                is_first = Op("eq", (), (Op("local_id", (dim,), (), i32), Lit(0, i32)), boolean)
                first = is_first if first is None else Op("and", (), (first, is_first), boolean)
        return Assign(out, v) if first is None else If(first, Assign(out, v))

    def _map(self, e: Expr, head: Prim, args: list, env: dict, out: Acc):
        f, xs = args
        n = xs.t.size
        def body(v: Exp, i: NatVar):
            elem = Idx(v, Nat.atom(i), xs.t.elem)
            return self.apply(f, [elem], env, lambda call, env2: self.acc(call, env2, IdxAcc(out, Nat.atom(i), e.t.elem)))
        if head.name in _LEVELS:
            level, dim = _LEVELS[head.name], head.params[0]
            self._check_nesting(e, level, dim)
            private = mem_written(out)
            if private is not None and private.name in self.private_temporaries:
                outer = [d for lv, d in self.levels if lv is Level.GLOBAL and d != dim]
                if level is Level.GLOBAL and outer:  # global items span work-groups: no barrier waits for them all
                    self.fail(e, f"{head.name} {dim} writes an array inside map_global {outer[-1]}'s function that "
                                 f"its item then reads: it needs every item of dimension {dim}, across work-groups, "
                                 f"and no barrier in one kernel waits for them; compute it at program level (a "
                                 f"kernel of its own) or with map_seq inside the item")
                self.fail(e, f"{head.name} {dim} writes a private temporary (to_private): each item has its own "
                             f"private memory, so the elements other items write are missing from it; store the "
                             f"array in memory the items share (to_global, or to_local in a work-group's code)")

            def loop(v):
                i = self.loop_var({"map_global": "gid", "map_workgroup": "wg", "map_local": "lid"}[head.name], n)
                self.levels.append((level, dim))
                try:
                    return ParFor(level, dim, i, n, body(v, i))
                finally:
                    self.levels.pop()
        else:
            def loop(v):
                i = self.loop_var("i", n)
                return For(i, n, body(v, i), unroll=PRIMITIVES[head.name].unroll)
        return self.con(xs, env, loop)

    def _warp(self, e: Expr, args: list, env: dict, out: Acc):
        """A tree's last steps in the first warp's registers (see the module's docstring): its
        32 lanes are items 0-31 of dimension 0 of a one-dimensional work-group of at least 32
        items (the runtime checks the launch, dpia.explore.resources the device)."""
        f, z, xs = args
        n, t = xs.t.size.as_int(), xs.t.elem
        if n is None or n < 2 or n > WARP_LANES or n & (n - 1):
            self.fail(e, f"reduce_warp of {xs.t.size} elements: a constant power of two from 2 to {WARP_LANES}")
        if not (isinstance(t, ScalarType) and t.name in WARP_TYPES):
            self.fail(e, f"reduce_warp of {t}: warp shuffles move 32-bit scalars")
        self._in_warp(e, "reduce_warp")
        if _space_of(out) not in (AddressSpace.LOCAL, AddressSpace.GLOBAL):
            self.fail(e, "reduce_warp's result is written by one lane: store it where the items share it (to_local)")
        lane = self.loop_var("lane", Nat.const(WARP_LANES))
        at = NatExp(Nat.atom(lane), i32)

        def below(bound: int) -> Exp:
            return Op("lt", (), (at, Lit(bound, i32)), boolean)

        def combine(w: Mem, other: Exp) -> Cmd:  # noqa: F821 -- w := f (f z w) other, as the tree's stage does
            step = Mem(self.fresh("step"), t, AddressSpace.PRIVATE)
            first = self.apply(f, [step, w], env, lambda call, env2: self.acc(call, env2, MemAcc(step)))
            second = self.apply(f, [step, other], env, lambda call, env2: self.acc(call, env2, MemAcc(step)))
            return New(step, seq(self.acc(z, env, MemAcc(step)), first, second, Assign(MemAcc(w), step)))

        def lanes(v: Exp) -> Cmd:  # noqa: F821
            w = Mem(self.fresh("w"), t, AddressSpace.PRIVATE)
            first = Assign(MemAcc(w), Idx(v, Nat.atom(lane), t))
            body = [first if n == WARP_LANES else If(below(n), first, self.acc(z, env, MemAcc(w)))]
            h = n // 2
            while h >= 1:
                other = Mem(self.fresh("o"), t, AddressSpace.PRIVATE)
                body.append(New(other, seq(Assign(MemAcc(other), Op("shuffle_down", (h,), (w,), t)),
                                           If(below(h), combine(w, other)))))
                h //= 2
            body.append(If(Op("eq", (), (at, Lit(0, i32)), boolean),
                           self.assign(IdxAcc(out, Nat.const(0), t), w)))
            return New(w, seq(*body))

        def loop(v: Exp) -> Cmd:  # noqa: F821
            self.levels.append((Level.LOCAL, 0))
            try:
                return ParFor(Level.LOCAL, 0, lane, Nat.const(WARP_LANES), lanes(v))
            finally:
                self.levels.pop()

        return self.con(xs, env, loop)

    def _in_warp(self, e: Expr, what: str, warps: bool = False) -> None:
        """Refuse a warp's collective where the items of dimension 0 are not its lanes.  With
        `warps`, work-groups may have items in dimensions 1 and 2 (the collective inside their
        map_local loops: each row of 32 items of dimension 0 a warp of its own)."""
        if not any(lv is Level.WORKGROUP for lv, _ in self.levels) or (Level.LOCAL, 0) in self.levels or (
                not warps and ((Level.WORKGROUP, 0) not in self.levels or any(lv is Level.LOCAL for lv, _ in self.levels))):
            where = "outside map_local 0" if warps else "inside map_workgroup 0, outside map_local"
            self.fail(e, f"{what} runs on a work-group's items: {where}")
        if not warps and self.local_dims - {0}:
            self.fail(e, f"{what} needs one-dimensional work-groups (its lanes are the first 32 items of "
                         f"dimension 0); this program has map_local loops over other dimensions")

    def _mma(self, e: Expr, args: list, env: dict, out: Acc):
        """One m16n8k8 product of fragments (functional.primitives, mma_sync) by a warp's lanes,
        items 0-31 of dimension 0 (in a group of several warps, those of one row of dimensions 1
        and 2: the collective inside their map_local loops): the tensor cores' instruction where the target offers
        it ("tensor_cores_tf32"), else each lane's own four sums of eight TF32 products, read
        through the fragments' layouts from the lanes that hold them (so the operands must be
        readable by every lane: views of local or global memory, not one lane's registers)."""
        self._in_warp(e, "mma_sync", warps=True)
        lane = self.loop_var("lane", Nat.const(WARP_LANES))
        at, f32_ = Nat.atom(lane), e.t.elem.elem

        def element(v: Exp, holder) -> Exp:
            holder_lane, r = holder
            return Idx(Idx(v, holder_lane, v.type.elem), r, f32_)

        def place(r: int) -> Acc:
            return IdxAcc(IdxAcc(out, at, e.t.elem), Nat.const(r), f32_)

        def instruction(vc: Exp, va: Exp, vb: Exp) -> Cmd:  # noqa: F821
            def fragment(v: Exp, count: int) -> Exp:
                return Op("vec", (Nat.const(count),), tuple(element(v, (at, Nat.const(r))) for r in range(count)),
                          VectorType(f32_, Nat.const(count)))

            d = Mem(self.fresh("mma"), VectorType(f32_, Nat.const(4)), AddressSpace.PRIVATE)
            product = Op("mma_tf32", (), (fragment(vc, 4), fragment(va, 4), fragment(vb, 2)), d.type)
            return New(d, seq(Assign(MemAcc(d), product), *(
                self.assign(place(r), Op("lane", (Nat.const(r),), (d,), f32_)) for r in range(4))))

        def sums(vc: Exp, va: Exp, vb: Exp) -> Cmd:  # noqa: F821
            parts = [Mem(self.fresh("mma"), f32_, AddressSpace.PRIVATE) for _ in range(4)]
            body = []
            for r, part in enumerate(parts):
                row, col = fragment_position("c", at, Nat.const(r))
                body.append(Assign(MemAcc(part), element(vc, (at, Nat.const(r)))))
                for k in range(MMA_K):  # rounded to TF32, their float32 products are exact
                    a = Op("tf32", (), (element(va, fragment_holder("a", row, Nat.const(k))),), f32_)
                    b = Op("tf32", (), (element(vb, fragment_holder("b", col, Nat.const(k))),), f32_)
                    body.append(Assign(MemAcc(part), Op("add", (), (part, Op("mul", (), (a, b), f32_)), f32_)))
            body.extend(self.assign(place(r), part) for r, part in enumerate(parts))
            cmd = seq(*body)
            for part in reversed(parts):
                cmd = New(part, cmd)
            return cmd

        lanes = instruction if "tensor_cores_tf32" in self.intrinsics else sums

        def loop(vs: list) -> Cmd:  # noqa: F821
            self.levels.append((Level.LOCAL, 0))
            try:
                return ParFor(Level.LOCAL, 0, lane, Nat.const(WARP_LANES), lanes(*vs))
            finally:
                self.levels.pop()

        return self._con_all(args, env, loop)

    def _check_nesting(self, e: Expr, level: Level, dim: int) -> None:
        if (level, dim) in self.levels:
            self.fail(e, f"nested maps on dimension {dim}: {_NAMES[level]} {dim} inside another {_NAMES[level]} {dim}")
        if level is Level.LOCAL and not any(lv is Level.WORKGROUP for lv, _ in self.levels):
            # any work-group: its items may span a dimension its groups do not (a warp's lanes on dimension
            # 0 and the group's warps on 1 and 2, for groups over two dimensions of blocks)
            self.fail(e, f"map_local {dim} outside map_workgroup: local ids only exist within a work-group")
        if level is Level.GLOBAL and any(lv is not Level.GLOBAL for lv, _ in self.levels):
            self.fail(e, "map_global inside a work-group map: global ids span the whole launch")
        if level is Level.WORKGROUP and any(lv is not Level.WORKGROUP for lv, _ in self.levels):
            self.fail(e, "map_workgroup inside a per-item map: work-groups are the outermost parallelism")

    def _store_into(self, e: Expr, head: Prim, args: list, env: dict, out: Acc):
        space = _SPACES[head.name]
        if _space_of(out) is space:
            return self.acc(args[0], env, out)
        return self.con(e, env, lambda v: self.copy(v, out, e))

    # -- continuation translation ---------------------------------------------------------
    def con(self, e: Expr, env: dict, k: K):
        if isinstance(e, Identifier):
            if e.name not in env:
                self.fail(e, f"unbound identifier {e.name}")
            return k(env[e.name])
        if isinstance(e, Literal):
            return k(Lit(e.value, e.t))
        head, args = spine(e)
        if isinstance(head, Lambda) and args:
            return self.con(args[0], env, lambda v: self.con(_rest(head.body, args[1:]), {**env, head.param.name: v}, k))
        if not isinstance(head, Prim):
            self.fail(e, "only primitives and lambdas can be applied here")
        d = PRIMITIVES[head.name]
        if len(args) != _arity(head):
            self.fail(e, f"{head.name} is partially applied where a value is needed")
        name = head.name
        if name in ("at", "nat_value"):
            return self._con_element(e, head, args, env, k)
        if name == "associative":  # a declaration for the rules: associative f a b = f a b
            return self.con(App(App(args[0], args[1], t=_fun_result(args[0].t)), args[2], t=e.t), env, k)
        if name == "select" and isinstance(e.t, TupleType):
            return self._con_all(args, env, lambda vs: k(_select_components(*vs, e.t)))
        if d.level == SCALAR:
            return self._con_all(args, env, lambda vs: k(Op(name, head.params, tuple(vs), e.t)))
        if name in ("fst", "snd"):
            return self.con(args[0], env, lambda v: k(Proj(v, 0 if name == "fst" else 1, e.t)))
        if name in _VIEWS:
            return self._con_all(args, env, lambda vs: k(View(name, tuple(head.params), tuple(vs), e.t)))
        if name in LOW_REDUCTIONS:
            return self._reduce(e, head, args, env, AddressSpace.PRIVATE, k)
        if name in _SPACES:
            inner_head, inner_args = spine(args[0])
            if isinstance(inner_head, Prim) and inner_head.name in LOW_REDUCTIONS:
                return self._reduce(args[0], inner_head, inner_args, env, _SPACES[name], k)
            if _SPACES[name] is AddressSpace.LOCAL and not any(lv is Level.WORKGROUP for lv, _ in self.levels):
                self.fail(e, "to_local outside map_workgroup: local memory belongs to a work-group")
            tmp = Mem(self.fresh("tmp"), e.t, _SPACES[name])
            if tmp.space is AddressSpace.PRIVATE:
                self.private_temporaries.add(tmp.name)
            return New(tmp, seq(self.acc(args[0], env, MemAcc(tmp)), k(tmp)))
        if name == "let":
            return self.con(args[0], env, lambda v: self._once(v, lambda v2: self.apply(
                args[1], [v2], env, lambda call, env2: self.con(call, env2, k))))
        if name == "iterate":
            return self._iterate(e, head, args, env, k)
        if name == "generate":
            return self._generate(e, head, args, env, k)
        if name == "map_vec":  # OpenCL's scalar operations work lane-wise on vectors
            return self.con(args[1], env, lambda v: self.apply(args[0], [v], env, lambda call, env2: self.con(
                call, env2, lambda r: k(_as_type(_lanes(r)[0], e.t)))))
        if name in LOOP_MAPS or name in WARP_REDUCTIONS or name in COLLECTIVES:
            self.fail(e, f"the array computed by {name} is read here but the program does not say where it is "
                         f"stored: wrap it in to_private, to_local or to_global")
        if name == "map":
            return self.con(args[1], env, lambda v: k(self._map_view(e, args, env, v)))
        if d.level == "high":
            self.fail(e, f"{name} is not lowered: choose its implementation with a rule "
                         f"(e.g. {'map_global/map_workgroup/map_local/map_seq' if name == 'map' else 'reduce_seq'})")
        self.fail(e, f"{name} cannot be translated yet")

    def _con_element(self, e: Expr, head: Prim, args: list, env: dict, k: K):
        """Sizes as values and element access:

            con(nat_value n, k)   = k(n)                                      (cast if not i32)
            con(at xs c, k)       = con(xs, v => k(v[c]))        c a literal or a size, in range (infer)
            con(at xs i, k)       = con(xs, v => con(i, j => new ix: i32 in private {
                                        ix := max(min(j, n - 1), 0); k(v[ix]) }))
                                    = con(xs, v => con(i, j => k(v[j])))   j a size provably in [0, n-1]
                                                    (loops' and generates' indices, sizes, +, -, *, min, max of them)

        A computed index (or a constant one not provably in range) is clamped to [0, n-1], so a kernel never reads outside the array (the
        interpreter refuses such an index).  `ix` is also a size variable with range [0, n), so
        the views resolve `v[ix]` as any index; the printer names both the same C variable.
        The `new` makes a computed index count as allocating: a lazily read map or generate
        whose function reads at a computed index is refused (store it with map_seq instead)."""
        if head.name == "nat_value":
            value = NatExp(head.params[0], i32)
            return k(value if e.t == i32 else Op("cast", (e.t,), (value,), e.t))
        xs, index = args
        n = xs.t.size
        known = constant_index(index)
        if known is not None and in_range(known, n):
            return self.con(xs, env, lambda v: k(Idx(v, known, e.t)))

        def at_index(v: Exp, j: Exp):
            known_j = _index_nat(j)
            if known_j is not None and in_range(known_j, n):
                return k(Idx(v, known_j, e.t))  # sizes and loop indices, provably in range: read as it is
            ix = self.loop_var("ix", n)
            mem = Mem(ix.name, i32, AddressSpace.PRIVATE)
            clamped = Op("max", (), (Op("min", (), (j, NatExp(n - 1, i32)), i32), Lit(0, i32)), i32)
            return New(mem, seq(Assign(MemAcc(mem), clamped), k(Idx(v, Nat.atom(ix), e.t))))

        return self.con(xs, env, lambda v: self.con(index, env, lambda j: at_index(v, j)))

    def _con_all(self, args: list, env: dict, k: Callable[[list], "Cmd"]):  # noqa: F821
        def go(i: int, acc: list):
            if i == len(args):
                return k(acc)
            if isinstance(args[i].t, (FunType, NatFunType)):
                return go(i + 1, acc + [None])
            return self.con(args[i], env, lambda v: go(i + 1, acc + [v]))

        return go(0, [])

    def _reduce(self, e: Expr, head: Prim, args: list, env: dict, space: AddressSpace, k: K):
        f, z, xs = args
        acc_mem = Mem(self.fresh("acc"), e.t, space)
        n = xs.t.size

        def loop(v: Exp):
            if head.name in DOUBLE_BUFFERED_FOLDS:
                return self._double_buffered(e, f, acc_mem, v, xs.t, env,
                                             asynchronous=head.name == "reduce_seq_double_buffered_async")
            i = self.loop_var("i", n)
            elem = Idx(v, Nat.atom(i), xs.t.elem)
            return For(i, n, self._step(e, f, acc_mem, elem, env), unroll=PRIMITIVES[head.name].unroll)

        # The input first: a global temporary it needs then precedes the accumulator, so the
        # host plan can run it as an earlier kernel.
        return self.con(xs, env, lambda v: New(acc_mem, seq(self.acc(z, env, MemAcc(acc_mem)), loop(v), k(acc_mem))))

    def _step(self, e: Expr, f: Expr, acc_mem: Mem, elem: Exp, env: dict):
        """One step of a reduction, `acc := f acc x`."""
        return self._update(e, acc_mem, lambda out: self.apply(f, [acc_mem, elem], env, lambda call, env2: self.acc(
            call, env2, out)))

    def _update(self, e: Expr, acc_mem: Mem, into: Callable[[Acc], "Cmd"]):  # noqa: F821
        """`acc := (what `into` writes)`.  An accumulator of several scalars (a tuple) is written
        component by component, so a later component would read an earlier one already updated:
        its next value is computed into a temporary first."""
        if not (isinstance(e.t, TupleType) and _all_scalars(e.t)):
            return into(MemAcc(acc_mem))
        nxt = Mem(self.fresh("next"), e.t, AddressSpace.PRIVATE)
        return New(nxt, seq(into(MemAcc(nxt)), self.copy(nxt, MemAcc(acc_mem), e)))

    def _double_buffered(self, e: Expr, f: Expr, acc_mem: Mem, v: Exp, xs_t: ArrayType, env: dict,
                         asynchronous: bool):
        """reduce_seq_double_buffered (fun(acc, x) => let V (fun(y) => B)) z xs, V its staging:

            new A (V's buffers), B (a second copy) {
              stage(x0, A);
              for i < n / 2 {
                stage(x(2i+1), B);  acc := B[acc, x(2i), y := A's value];
                if 2i+2 < n { stage(x(2i+2), A) };  acc := B[acc, x(2i+1), y := B's value] }
              for t < n % 2 { acc := B[acc, x(n-1), y := A's value] } }

        where stage(x, A) is V's translation writing its stores (to_local ...) into A.  Element
        i + 1 is staged before the step on element i reads the other buffer: with the barriers
        the barrier pass then places (one per element), a work-group's copy of the next tile runs
        beside the products of this one.  `asynchronous` (reduce_seq_double_buffered_async), on a
        target with asynchronous copies (cp.async): its plain global -> local copies are issued as
        such (`async_copy`: imperative.ir); elsewhere they stay plain, as mma_sync's products are
        sums where the target has no tensor cores.  No step
        is inside a conditional (a step may need barriers of its own: a barrier in a conditional
        is not placed); the last odd element is a loop of n % 2 iterations."""
        staged_step = _staged_step(f)
        if staged_step is None:
            self.fail(e, "reduce_seq_double_buffered's function must be fun(acc, x) => let V (fun(y) => B): "
                         "the staging V, then the step B")
        acc_param, x_param, value, y_param, body = staged_step
        if acc_param.name in free_identifiers(value):
            self.fail(e, "the staging of reduce_seq_double_buffered reads the accumulator: it cannot run a step ahead")
        n = xs_t.size

        def element(j: Nat) -> Exp:
            return Idx(v, j, xs_t.elem)

        def staged(j: Nat):
            cmd = self.con(value, {**env, x_param.name: element(j)}, lambda r: _Staged(r))
            peeled = _peel_staging(cmd)
            if peeled is None:
                self.fail(value, "the staged value is not V's stores seen through views: stage it with to_local")
            mems, produce, r = peeled
            if asynchronous and "async_copy" in self.intrinsics:
                produce = _asynchronous(produce, frozenset(m.name for m in mems))
            return mems, produce, r

        def step(r: Exp, j: Nat):
            bound = {**env, acc_param.name: acc_mem, x_param.name: element(j), y_param.name: r}
            return self._update(e, acc_mem, lambda out: self.acc(body, bound, out))

        i = self.loop_var("i", floordiv(n, Nat.const(2)))
        even, odd, next_even = Nat.atom(i) * 2, Nat.atom(i) * 2 + 1, Nat.atom(i) * 2 + 2
        first_mems, first, r_a = staged(Nat.const(0))
        if _mentions(r_a, v):
            self.fail(value, "the staged value reads the elements beyond what it stores: it cannot be double-buffered")
        b_mems, produce_b, r_b = staged(odd)
        again_mems, produce_a, _ = staged(next_even)  # into the first buffers again (the same allocations)
        produce_a = _renamed(produce_a, {m.name: f for m, f in zip(again_mems, first_mems)})
        more = Op("lt", (), (NatExp(next_even, i32), NatExp(n, i32)), boolean)
        pairs = For(i, i.hi, seq(produce_b, step(r_a, even), If(more, produce_a), step(r_b, odd)))
        last = Skip()
        if not divides(2, n):
            t = self.loop_var("t", n % 2)
            last = For(t, t.hi, step(r_a, n - 1))
        cmd = seq(first, pairs, last)
        for m in reversed(first_mems + b_mems):
            cmd = New(m, cmd)
        return cmd

    def _iterate(self, e: Expr, head: Prim, args: list, env: dict, k: K):
        """Unrolled: step j applies `f` at the length it then has; each step stores its
        result where `f` says (typically `to_local`), so steps never overwrite their input."""
        count = head.params[0].as_int()
        if count is None:
            self.fail(e, f"iterate {head.params[0]}: the number of steps must be a constant to translate")
        f, xs = args
        ftype = f.t
        factor = ftype.body.param.size / Nat.atom(ftype.var)

        def step(j: int, view: Exp, length: Nat):
            if j == count:
                return k(view)
            smaller = length / factor
            inst = self._instantiate(f, ftype, smaller)
            return self.apply(inst, [view], env, lambda call, env2: self.con(
                call, env2, lambda v: step(j + 1, v, smaller)))

        return self.con(xs, env, lambda v: step(0, v, xs.t.size))

    def _capture(self, f: Expr, value: Exp, env: dict) -> Exp | None:
        """`f value` as a readable expression when computing it neither loops nor
        allocates (then it can be recomputed wherever it is read), else None."""
        captured: list = []
        cmd = self.apply(f, [value], env, lambda call, env2: self.con(
            call, env2, lambda r: captured.append(r) or Skip()))
        return captured[0] if isinstance(cmd, Skip) and len(captured) == 1 else None

    def _map_view(self, e: Expr, args: list, env: dict, v: Exp) -> Exp:
        """A high-level map read lazily: `map f xs` is `generate n (i => f xs[i])` when `f`
        neither loops nor allocates (layout functions, scalar arithmetic)."""
        f, xs = args
        n = xs.t.size
        i = self.loop_var("m", n)
        body = self._capture(f, Idx(v, Nat.atom(i), xs.t.elem), env)
        if body is None:
            self.fail(e, "map is not lowered: its function loops or allocates, so choose "
                         "map_global/map_workgroup/map_local/map_seq")
        return View("generate", (n, i), (body,), e.t)

    def _generate(self, e: Expr, head: Prim, args: list, env: dict, k: K):
        """A view: element i is f's body at i, recomputed where it is read (f must be a
        pure expression: anything that loops or allocates needs a map instead)."""
        (n,) = head.params
        i = self.loop_var("g", n)
        body = self._capture(args[0], NatExp(Nat.atom(i), i32), env)
        if body is None:
            self.fail(e, "generate's function loops or allocates: build the array with a map instead")
        return k(View("generate", (n, i), (body,), e.t))

    def _instantiate(self, f: Expr, ftype: NatFunType, n: Nat) -> Expr:
        """`f [n]` for a size function, typed again at that size."""
        from functional.rules.core import free_identifier_types

        expected = map_nats(ftype.body, lambda m: nat_substitute(m, {ftype.var: n}))
        if isinstance(f, NatLambda):
            body = substitute_nat(f.body, f.var, n)
        else:
            body = NatApp(f, n)
        return infer(body, free_identifier_types(f), expected=expected)

    # -- function application -------------------------------------------------------------
    def apply(self, f: Expr, values: list, env: dict, then: Callable[[Expr, dict], "Cmd"]):  # noqa: F821
        """Apply a function expression to already-translated values: lambdas bind them;
        other functions (partial primitives) get fresh identifiers."""
        env = dict(env)
        call = f
        for v in values:
            if isinstance(call, Lambda):
                env[call.param.name] = v
                call = call.body
            else:
                name = self.fresh("_v")
                env[name] = v
                call = App(call, Identifier(name, t=_fun_param(call.t)), t=_fun_result(call.t))
        return then(call, env)


@attrs.frozen(repr=False)
class _Staged(Cmd):  # noqa: F821 -- where a staging's translation hands its value on (never printed)
    value: Exp


def _staged_step(f: Expr):
    """(acc, x, V, y, B) of `fun(acc, x) => let V (fun(y) => B)`, else None."""
    if not (isinstance(f, Lambda) and isinstance(f.body, Lambda)):
        return None
    head, args = spine(f.body.body)
    if not (isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda)):
        return None
    return f.param, f.body.param, args[0], args[1].param, args[1].body


def _peel_staging(cmd):
    """(the allocations, the commands that fill them, the value) of a staging's translation
    `new a { ... new b { ...; <the value> } }`, else None (the value computed inside a loop)."""
    mems, produce = [], []
    while True:
        if isinstance(cmd, _Staged):
            return mems, seq(*produce), cmd.value
        if isinstance(cmd, New):
            mems.append(cmd.mem)
            cmd = cmd.body
        elif isinstance(cmd, Seq) and not any(isinstance(c, _Staged) for x in cmd.cmds[:-1] for c in walk_cmds(x)):
            produce.extend(cmd.cmds[:-1])
            cmd = cmd.cmds[-1]
        else:
            return None


def _mentions(x, target) -> bool:
    """`target` occurs in the expression `x`."""
    if x == target:
        return True
    if isinstance(x, tuple):
        return any(_mentions(y, target) for y in x)
    if isinstance(x, Exp) and attrs.has(type(x)):
        return any(_mentions(getattr(x, a.name), target) for a in attrs.fields(type(x)))
    return False


def _renamed(x, names: dict):
    """`x` (a command, acceptor or expression) with the memories named in `names` replaced."""
    if isinstance(x, Mem):
        return names.get(x.name, x)
    if isinstance(x, tuple):
        return tuple(_renamed(y, names) for y in x)
    if isinstance(x, (Cmd, Exp, Acc)) and attrs.has(type(x)):
        changes = {a.name: _renamed(getattr(x, a.name), names) for a in attrs.fields(type(x)) if a.init}
        return attrs.evolve(x, **changes)
    return x


def _asynchronous(cmd, staged: frozenset):
    """The staging's plain copies into its buffers (`buf[i] := x`, x read as it is) marked as
    asynchronous copies (Op async_copy): the printer issues those that turn out to be a global
    read of 4, 8 or 16 bytes into local memory as cp.async, and the others as assignments."""
    if isinstance(cmd, Assign):
        target = mem_written(cmd.acc)
        if target is not None and target.name in staged and not isinstance(cmd.value, (Op, Lit)):
            return Assign(cmd.acc, Op("async_copy", (), (cmd.value,), cmd.value.type))
        return cmd
    if isinstance(cmd, Seq):
        return seq(*(_asynchronous(c, staged) for c in cmd.cmds))
    if isinstance(cmd, (New, For, ParFor)):
        return attrs.evolve(cmd, body=_asynchronous(cmd.body, staged))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_asynchronous(cmd.then, staged), orelse=_asynchronous(cmd.orelse, staged))
    return cmd


def _all_scalars(t) -> bool:
    if isinstance(t, TupleType):
        return all(_all_scalars(x) for x in t.elems)
    return isinstance(t, (ScalarType, VectorType))


def _select_components(cond: Exp, a: Exp, b: Exp, t) -> Exp:
    """`select c a b` of tuples, as the pair of its components' selects (the printer's `?:`
    works on scalars and vectors): select c (a0, a1) (b0, b1) = (select c a0 b0, select c a1 b1)."""
    if not isinstance(t, TupleType):
        return Op("select", (), (cond, a, b), t)
    parts = tuple(_select_components(cond, Proj(a, k, et), Proj(b, k, et), et) for k, et in enumerate(t.elems))
    return View("pair", (), parts, t)


def _as_type(v: Exp, t) -> Exp:
    """The same value seen at type `t` (a vectorised function's result is a vector)."""
    return attrs.evolve(v, type=t) if isinstance(v, (Op, Lit)) and v.type != t else v


def _lanes(v: Exp) -> tuple[Exp, Nat | None]:
    """`v` with each scalar operation that reads a lane-varying value seen at the vector type
    of its scalar type (a vectorised function, map_vec, applies its scalar operations to
    vectors; the printer converts a vector with convert_, not a C cast, and a let's
    temporary is a vector), and the width of the lanes `v` varies by (None: it does not).
    A comparison keeps its type bool: OpenCL's vector comparisons give -1 for true, which
    only select's condition reads (the vectorize rule's side condition)."""
    if not isinstance(v, Op):
        return v, v.type.width if isinstance(v.type, VectorType) else None
    parts = [_lanes(a) for a in v.args]
    width = next((w for _, w in parts if w is not None), None)
    t = v.type
    if width is not None and isinstance(t, ScalarType) and t.name != "bool":
        t = VectorType(t, width)
    return attrs.evolve(v, args=tuple(a for a, _ in parts), type=t), width


def _fun_param(t):
    return t.param if isinstance(t, FunType) else None


def _fun_result(t):
    return t.result if isinstance(t, FunType) else None


def _rest(body: Expr, args: list) -> Expr:
    for a in args:
        body = App(body, a)
    return body


def _arity(head: Prim) -> int:
    d = PRIMITIVES[head.name]
    return d.arity if d.arity >= 0 else len(head.params[0].params)


def _write_params(head: Prim, args: list) -> tuple:
    return _view_params(head, args[0].t)


def _view_params(head: Prim, t) -> tuple:
    """The parameters of a write view applied to an array of type `t`."""
    if head.name == "join":
        return (t.elem.size,)
    if head.name == "as_scalar":
        return (t.elem.width,)
    if head.name == "scatter":  # element i goes to position fun(i, n)
        return (head.params[0], t.size)
    return tuple(head.params)


def _write_chain(f: Expr) -> tuple | None:
    """The write views of a layout function, outermost first: `join` -> (("join_acc", (n,)),),
    `fun(x) => join (transpose x)` -> (join_acc, transpose_acc), `map join` -> (("map_acc",
    (chain,)),); None when `f` is not made of write views only."""
    if isinstance(f, Lambda):
        chain, body = [], f.body
        while not (isinstance(body, Identifier) and body.name == f.param.name):
            head, args = spine(body)
            link = _write_link(head, args[:-1]) if isinstance(head, Prim) and args else None
            if link is None:
                return None
            chain.append(link)
            body = args[-1]
        return tuple(chain) if chain else None
    head, args = spine(f)
    link = _write_link(head, args) if isinstance(head, Prim) else None
    return None if link is None else (link,)


def _write_link(head: Prim, fargs: list):
    """One write view: a layout primitive given all but its array argument."""
    if head.name == "map" and len(fargs) == 1:
        inner = _write_chain(fargs[0])
        return None if inner is None else ("map_acc", (inner,))
    if head.name not in _WRITE_VIEWS or fargs:
        return None
    if head.t is None:
        return None
    return (_WRITE_VIEWS[head.name], _view_params(head, head.t.param))  # param: the array it is applied to


def _space_of(a: Acc) -> AddressSpace | None:
    mem = mem_written(a)
    return None if mem is None else mem.space


def translate_program(typed: Expr, name: str = "program", intrinsics: frozenset = frozenset()) -> Program:
    """Translate a typed low-level program `fun(N: nat, ..., x: T, ...) => body` (its access
    is inferred first: dpia.phrases); `intrinsics`: the device intrinsics the kernels may use
    (codegen_opencl.runtime.device_intrinsics), which decide how mma_sync is translated."""
    try:
        check_access(typed)
    except AccessError as exc:
        raise _with_fix(typed, exc) from None
    body, sizes = typed, []
    while isinstance(body, NatLambda):
        if any(v.name == body.var.name for v in sizes):  # each is a kernel parameter named after it
            raise TranslationError(f"two of the program's sizes are named {body.var.name}: give them distinct names")
        sizes.append(body.var)
        body = body.body
    inputs = []
    while isinstance(body, Lambda):
        space = AddressSpace.GLOBAL if isinstance(body.param.t, (ArrayType, TupleType)) else AddressSpace.PRIVATE
        inputs.append(Mem(body.param.name, body.param.t, space))
        body = body.body
    if isinstance(body.t, (FunType, NatFunType)):
        raise TranslationError(f"the program's result is a function ({body.t}); translate a program that takes "
                               f"all of its inputs as parameters")
    out = Mem("output", body.t, AddressSpace.GLOBAL)
    local_dims = frozenset(x.params[0] if x.name == "map_local" else 0 for x in walk(body)
                           if isinstance(x, Prim) and (x.name == "map_local" or x.name in WARP_REDUCTIONS
                                                       or x.name in COLLECTIVES))
    tr = Translator(local_dims=local_dims, intrinsics=frozenset(intrinsics))
    env = {m.name: m for m in inputs}
    try:
        cmd = tr.acc(body, env, MemAcc(out))
    except TranslationError as exc:
        raise _with_fix(typed, exc) from None
    return Program(name, tuple(inputs), out, tuple(sizes), cmd)


def _with_fix(typed: Expr, exc: TranslationError) -> TranslationError:
    """The error with the place and fix that the storage analysis (functional.storage) finds
    first, when it finds one: the user's own subexpression and the rewrite that makes it
    translate."""
    need = first_need(typed, required_only=True)
    if need is None:
        return exc
    node = at_path(typed, need.path)
    return type(exc)(f"{need.why}: {need.proposal(node)} (the translation said: {exc.message})",
                     where=excerpt(str(node)), origin=node.origin or exc.origin)
