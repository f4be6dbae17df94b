"""Passes over imperative programs.  Each is a pure function Program -> Program; the
pipeline is data (`PIPELINE`) so experiments can switch passes off.

    resolve_views     every read/write through views becomes a Load/Store at a flat index
    insert_barriers   a local barrier before a work-group phase that reads local memory
                      another phase wrote, or overwrites local memory another phase used,
                      since the last barrier (loop-carried too); never inside code that not
                      all items of the group reach.  The body of a map_local loop running
                      map_local loops of another dimension is such code for those items: a
                      barrier in it makes the loop run once per item (a constant length: the
                      launch contract) or the same iterations on every item (ParFor.uniform).
                      A group-level loop that runs a loop holding barriers and then more code
                      ends in a barrier (PoCL 3.0 ran that code past the outer loop's end)
    hoist_globals     global temporaries become host-allocated buffers (kernel arguments)
    simplify_loops    a sequential loop that runs once becomes its body (index := 0), one that
                      never runs disappears
    private_blocks    a local array each work-item reads and writes only in its own block
                      (`c * local_id + r`, 0 <= r < c) in loops as wide as the group becomes a
                      private array of c elements, the loops over r unrolled (registers after
                      privatise), the local size recorded in the launch contract
    unroll            loops marked for unrolling (map_seq_unroll, reduce_seq_unroll) with a
                      constant count of at most 64 are replicated, so private arrays they
                      index stay in registers; so is a short innermost loop whose variable
                      an index divides, reduces or clamps (a window read through join)
    simplify_conditions  index comparisons (a pad's bounds test, a guard) that the ranges of
                      the enclosing loops decide are folded (imperative.simplify)
    privatise         a private array that every access indexes by local ids alone (the same
                      way each time) holds one element per item: it becomes a scalar, and the
                      program records the local size that makes each map_local run once
    share_sign_symmetric_calls  f(x) and f(-x) of an odd, even or complementary function (erfc)
                      become calls on one magnitude (imperative.sign_symmetry), which
    share_common_values  an operation a run of assignments evaluates twice is computed once
                      into a private variable (imperative.common_values)

Before them, placement passes give temporaries a place the host plan can keep:

    slot_parallel_globals   a global temporary allocated inside parallel loops gets one slot per
                            iteration of each enclosing parallel loop (an array indexed by their
                            loop variables), allocated once outside them; one stored in code
                            that every item of an inner map_global's dimension would run whole
                            moves into that loop (each iteration computes it, in its own slot)
    slot_local_temporaries  likewise a local temporary inside local loops (within its work-group)
    globalise_host_state    a private temporary of host-level code whose lifetime spans a
                            parallel loop (a reduction's result that a later kernel reads) lives
                            in global memory: kernels share nothing else
"""

from __future__ import annotations

import attrs

from functional.errors import FunctionalError
from functional.nat import Nat
from functional.nat import Var as NatVar
from functional.primitives import UNROLL_LIMIT
from functional.types import AddressSpace, ArrayType, TupleType, boolean, i32

from .ir import (
    Acc, Assign, Barrier, Cmd, Exp, For, Idx, IdxAcc, If, Level, Lit, Load, Mem, MemAcc, NatExp, New, Op, ParFor, Program,
    Proj, ProjAcc, Seq, Skip, Store, View, ViewAcc, mem_written, seq, sub_commands, walk,
)
from .common_values import share_common_values
from .sign_symmetry import share_sign_symmetric_calls
from .simplify import simplify_conditions
from .views import resolve


def resolve_views(p: Program) -> Program:
    return attrs.evolve(p, body=resolve(p.body))


# ------------------------------------------------------------------ placement of temporaries


def _replace_mem(cmd: Cmd, mem: Mem, read: Exp, write: Acc) -> Cmd:
    """`cmd` with every read of `mem` replaced by `read` and every write by `write` (before
    view resolution: memories appear as Mem expressions and MemAcc acceptors)."""

    def exp(e):
        if isinstance(e, Mem):
            return read if e == mem else e
        if isinstance(e, Idx):
            return attrs.evolve(e, array=exp(e.array))
        if isinstance(e, Proj):
            return attrs.evolve(e, tuple_=exp(e.tuple_))
        if isinstance(e, (View, Op)):
            return attrs.evolve(e, args=tuple(exp(a) if a is not None else None for a in e.args))
        return e

    def acc(a):
        if isinstance(a, MemAcc):
            return write if a.mem == mem else a
        if isinstance(a, IdxAcc):
            return attrs.evolve(a, array=acc(a.array))
        if isinstance(a, ProjAcc):
            return attrs.evolve(a, tuple_=acc(a.tuple_))
        if isinstance(a, ViewAcc):
            return attrs.evolve(a, target=acc(a.target))
        return a

    return _rewrite(cmd, lambda c: Assign(acc(c.acc), exp(c.value)), exp)


def _rewrite(cmd: Cmd, assign, cond) -> Cmd:
    """`cmd` with every assignment `a` replaced by `assign(a)` and every condition `e` of an
    if by `cond(e)`; the structure of loops and allocations kept."""
    def go(c):
        if isinstance(c, Assign):
            return assign(c)
        if isinstance(c, If):
            return If(cond(c.cond), go(c.then), go(c.orelse))
        if isinstance(c, Seq):
            return seq(*(go(x) for x in c.cmds))
        if isinstance(c, (New, For, ParFor)):
            return attrs.evolve(c, body=go(c.body))
        return c

    return go(cmd)


PRIVATE_COPY_LIMIT = 4096  # scalars: a value each item computes whole in shared global code, kept per item


def _scalar_count(t) -> int | None:
    """Scalars in a value of type `t` (None: a size not known before the program runs)."""
    if isinstance(t, ArrayType):
        n, inner = t.size.as_int(), _scalar_count(t.elem)
        return None if n is None or inner is None else n * inner
    if isinstance(t, TupleType):
        parts = [_scalar_count(e) for e in t.elems]
        return None if None in parts else sum(parts)
    return 1


def _written_in(cmd: Cmd, mem: Mem, dims: set) -> bool:
    """Whether a parallel loop over global dimension `dims` in `cmd` writes `mem`."""
    def writes(c):
        return any(isinstance(a, Assign) and mem_written(a.acc) == mem for a in walk(c))

    return any(isinstance(c, ParFor) and c.level is Level.GLOBAL and c.dim in dims and writes(c.body)
               for c in walk(cmd))


def _sunk_into_loop(cmd: Cmd, dim: int, own: frozenset = frozenset()) -> ParFor | None:
    """`new m; (A; par_for[global dim] i: B)` as `par_for[global dim] i: new m; (A; B)`, where A
    runs no loop of that dimension and writes only the memories allocated here (`m` and those
    within): code every item of the dimension ran whole runs once per iteration instead, each in
    a slot of its own.  A runs as often as the loop iterates; the result is the same, as A reads
    nothing B writes and B is its only reader after it.  None: `cmd` has no such shape."""
    if isinstance(cmd, New):
        inner = _sunk_into_loop(cmd.body, dim, own | {cmd.mem.name})
        return None if inner is None else attrs.evolve(inner, body=New(cmd.mem, inner.body))
    if not isinstance(cmd, Seq) or not cmd.cmds:
        return None
    *before, last = cmd.cmds
    if not (isinstance(last, ParFor) and last.level is Level.GLOBAL and last.dim == dim):
        return None
    written_after = {m.name for a in walk(last.body) if isinstance(a, Assign) and (m := mem_written(a.acc))}
    for c in before:
        allocated = own | {n.mem.name for n in walk(c) if isinstance(n, New)}
        if any(isinstance(n, ParFor) and n.level is Level.GLOBAL and n.dim == dim for n in walk(c)) \
                or any(isinstance(a, Assign) and getattr(mem_written(a.acc), "name", None) not in allocated
                       for a in walk(c)) \
                or _mem_names(c) & written_after:
            return None
    return attrs.evolve(last, body=seq(*before, last.body))


def _mem_names(x) -> set:
    """The names of the memories `x` (a command, expression or acceptor) mentions."""
    if isinstance(x, Mem):
        return {x.name}
    if isinstance(x, (tuple, list)):
        return set().union(*(_mem_names(e) for e in x))
    if attrs.has(type(x)):
        return set().union(*(_mem_names(getattr(x, f.name)) for f in attrs.fields(type(x))))
    return set()


def _slot(cmd: Cmd, loops: tuple, found: list) -> Cmd:
    if isinstance(cmd, New) and cmd.mem.space is AddressSpace.GLOBAL and loops:
        outer = {loop.dim for loop in loops if loop.level is Level.GLOBAL}
        sharing = sorted({c.dim for c in walk(cmd.body) if isinstance(c, ParFor) and c.level is Level.GLOBAL} - outer)
        if outer and sharing and not _written_in(cmd.body, cmd.mem, set(sharing)) \
                and (_scalar_count(cmd.mem.type) or PRIVATE_COPY_LIMIT + 1) <= PRIVATE_COPY_LIMIT:
            # the items of those dimensions each compute the whole value (no loop of theirs writes it): each keeps
            # its own copy, in private memory
            return attrs.evolve(cmd, mem=attrs.evolve(cmd.mem, space=AddressSpace.PRIVATE),
                                body=_slot(cmd.body, loops, found))
        sunk = _sunk_into_loop(cmd, sharing[0]) if outer and sharing else None
        if sunk is not None:
            # every item of that dimension would compute the whole value: each iteration of its loop computes
            # it instead, in a slot of its own
            return _slot(sunk, loops, found)
        if outer and sharing:
            # the allocation runs in code the items of those dimensions share, and a kernel has no barrier
            # across work-groups: they would all write it at once (the same slot) and read each other's writes
            raise PlacementError(f"global memory {cmd.mem.name} is stored in code that the items of global "
                                 f"dimension {sharing[0]} share (inside map_global {min(outer)}'s function, outside "
                                 f"map_global {sharing[0]}): each of them would write it at once; store it at "
                                 f"program level (a kernel of its own) or inside map_global {sharing[0]}")
        t = cmd.mem.type
        for loop in reversed(loops):
            t = ArrayType(loop.count, t)
        slots = Mem(cmd.mem.name, t, AddressSpace.GLOBAL)
        read, write = slots, MemAcc(slots)
        elem_types = []
        inner = cmd.mem.type
        for loop in reversed(loops):
            elem_types.append(inner)
            inner = ArrayType(loop.count, inner)
        for loop, et in zip(loops, reversed(elem_types)):
            read, write = Idx(read, Nat.atom(loop.var), et), IdxAcc(write, Nat.atom(loop.var), et)
        found.append(slots)
        return _slot(_replace_mem(cmd.body, cmd.mem, read, write), loops, found)
    if isinstance(cmd, ParFor):
        return attrs.evolve(cmd, body=_slot(cmd.body, loops + (cmd,), found))
    if isinstance(cmd, Seq):
        return seq(*(_slot(c, loops, found) for c in cmd.cmds))
    if isinstance(cmd, (New, For)):
        return attrs.evolve(cmd, body=_slot(cmd.body, loops, found))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_slot(cmd.then, loops, found), orelse=_slot(cmd.orelse, loops, found))
    return cmd


def slot_parallel_globals(p: Program) -> Program:
    found: list = []
    body = _slot(p.body, (), found)
    for mem in found:
        body = New(mem, body)
    return attrs.evolve(p, body=body)


def _slot_local(cmd: Cmd, loops: tuple) -> Cmd:
    """Local temporaries inside local loops (`loops`, outermost first) get a slot per iteration."""
    if isinstance(cmd, New) and cmd.mem.space is AddressSpace.LOCAL and loops:
        counts = [loop.count.as_int() for loop in loops]
        if None in counts:
            raise PlacementError(f"local memory {cmd.mem.name} inside a local loop of {loops[counts.index(None)].count} "
                                 f"iterations: each needs its own, and local memory has a constant size")
        t = cmd.mem.type
        for loop in reversed(loops):
            t = ArrayType(loop.count, t)
        slots = Mem(cmd.mem.name, t, AddressSpace.LOCAL)
        read, write, inner, elem_types = slots, MemAcc(slots), cmd.mem.type, []
        for loop in reversed(loops):
            elem_types.append(inner)
            inner = ArrayType(loop.count, inner)
        for loop, et in zip(loops, reversed(elem_types)):
            read, write = Idx(read, Nat.atom(loop.var), et), IdxAcc(write, Nat.atom(loop.var), et)
        return New(slots, _slot_local(_replace_mem(cmd.body, cmd.mem, read, write), loops))
    if isinstance(cmd, ParFor):
        inner = loops + (cmd,) if cmd.level is Level.LOCAL else ()  # a work-group loop starts afresh
        return attrs.evolve(cmd, body=_slot_local(cmd.body, inner))
    if isinstance(cmd, Seq):
        return seq(*(_slot_local(c, loops) for c in cmd.cmds))
    if isinstance(cmd, (New, For)):
        return attrs.evolve(cmd, body=_slot_local(cmd.body, loops))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_slot_local(cmd.then, loops), orelse=_slot_local(cmd.orelse, loops))
    return cmd


def slot_local_temporaries(p: Program) -> Program:
    """A local temporary allocated inside a local loop (map_local 1's function storing a row
    with to_local) gets one slot per iteration of each enclosing local loop: the loop's
    iterations are other items, running at once, and would otherwise share one array."""
    return attrs.evolve(p, body=_slot_local(p.body, ()))


def _has_parallel(cmd: Cmd) -> bool:
    return any(isinstance(c, ParFor) for c in walk(cmd))


def _globalise(cmd: Cmd) -> Cmd:
    if isinstance(cmd, ParFor):
        return cmd  # inside a kernel: private memory is the item's own
    if isinstance(cmd, New) and cmd.mem.space is AddressSpace.PRIVATE and _has_parallel(cmd.body):
        index = cmd.mem.name in _size_names(cmd.body)
        # a clamped index (dpia.translate._con_element) is also a size the views read: shared under
        # another name, each command that reads the size gets a private copy of it first
        shared = Mem(cmd.mem.name + "_shared" if index else cmd.mem.name, cmd.mem.type, AddressSpace.GLOBAL)
        body = _replace_mem(cmd.body, cmd.mem, shared, MemAcc(shared))
        if index:
            body = _copied_where_read(body, cmd.mem, shared)
        return New(shared, _globalise(body))
    if isinstance(cmd, Seq):
        return seq(*(_globalise(c) for c in cmd.cmds))
    if isinstance(cmd, (New, For)):
        return attrs.evolve(cmd, body=_globalise(cmd.body))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_globalise(cmd.then), orelse=_globalise(cmd.orelse))
    return cmd


def _copied_where_read(cmd: Cmd, mem: Mem, shared: Mem) -> Cmd:
    """`cmd` with each assignment, condition and kernel that reads the size `mem.name` given
    its own private `mem`, loaded from `shared` (each work-item loads it in a kernel)."""
    def copy(c: Cmd) -> Cmd:
        return New(mem, seq(Assign(MemAcc(mem), shared), c))

    if mem.name not in _size_names(cmd):
        return cmd
    if isinstance(cmd, ParFor):
        return attrs.evolve(cmd, body=copy(cmd.body))
    if isinstance(cmd, Seq):
        return seq(*(_copied_where_read(c, mem, shared) for c in cmd.cmds))
    if isinstance(cmd, (New, For)) and mem.name not in _nat_names(getattr(cmd, "count", None)):
        return attrs.evolve(cmd, body=_copied_where_read(cmd.body, mem, shared))
    if isinstance(cmd, If) and mem.name not in _exp_sizes(cmd.cond):
        return attrs.evolve(cmd, then=_copied_where_read(cmd.then, mem, shared),
                            orelse=_copied_where_read(cmd.orelse, mem, shared))
    return copy(cmd)


def _nat_names(x) -> set:
    """The names of the size variables in a Nat, a size variable, or a tuple of them (views' parameters)."""
    if isinstance(x, Nat):
        return {v.name for v in x.vars}
    if isinstance(x, NatVar):
        return {x.name}
    if isinstance(x, tuple):
        return set().union(*(_nat_names(p) for p in x))
    return set()


def _exp_sizes(e) -> set:
    """The size variables an expression or acceptor reads (indices, views' parameters, sizes as values)."""
    out = _nat_names(getattr(e, "index", None)) | _nat_names(getattr(e, "params", None)) | \
        _nat_names(getattr(e, "nat", None))
    for child in (getattr(e, "array", None), getattr(e, "tuple_", None), getattr(e, "target", None),
                  *(getattr(e, "args", None) or ())):
        if child is not None:
            out |= _exp_sizes(child)
    return out


def _size_names(cmd: Cmd) -> set:
    """The size variables `cmd` reads anywhere (its assignments, conditions and loop counts)."""
    out: set = set()
    for c in walk(cmd):
        if isinstance(c, Assign):
            out |= _exp_sizes(c.acc) | _exp_sizes(c.value)
        elif isinstance(c, If):
            out |= _exp_sizes(c.cond)
        elif isinstance(c, (For, ParFor)):
            out |= _nat_names(c.count)
    return out


def globalise_host_state(p: Program) -> Program:
    return attrs.evolve(p, body=_globalise(p.body))


_EMPTY = (frozenset(), frozenset())


_SHARED = (AddressSpace.LOCAL, AddressSpace.GLOBAL)  # memory the items of a group can communicate through


ONE_ITEM, ITEMS = "one item", "items"  # who makes a write to shared memory (see _local_sets)


def _local_sets(cmd: Cmd, dims: frozenset) -> tuple[frozenset, frozenset]:
    """The (space, leaf) pairs of local and global memory `cmd` reads, and the (space, leaf,
    who) triples it writes: what the items of a group may communicate through (a global
    temporary a stage of map_local writes and the next stage reads, as much as a local one).
    `who` is ONE_ITEM for a write guarded by `local_id(d) == 0` in every dimension of `dims`
    (the work-group's dimensions: one item makes it), else ITEMS."""
    reads, writes = set(), set()

    def loads(e):
        if isinstance(e, Load) and e.space in _SHARED:
            reads.add((e.space, e.leaf))
        for a in getattr(e, "args", ()):
            loads(a)

    def visit(c: Cmd, first: frozenset) -> None:
        if isinstance(c, Assign):
            if isinstance(c.acc, Store) and c.acc.space in _SHARED:
                writes.add((c.acc.space, c.acc.leaf, ONE_ITEM if dims and dims <= first else ITEMS))
            loads(c.value)
            return
        if isinstance(c, If):
            loads(c.cond)
            visit(c.then, first | _first_item_dims(c.cond))
            visit(c.orelse, first)
            return
        for sub in sub_commands(c):
            visit(sub, first)

    visit(cmd, frozenset())
    return frozenset(reads), frozenset(writes)


def _first_item_dims(cond: Exp) -> frozenset:
    """The dimensions d of the tests `local_id(d) == 0` that `cond` (a conjunction) makes."""
    if isinstance(cond, Op) and cond.name == "and":
        return frozenset().union(*(_first_item_dims(a) for a in cond.args))
    if (isinstance(cond, Op) and cond.name == "eq" and isinstance(cond.args[0], Op) and cond.args[0].name == "local_id"
            and isinstance(cond.args[1], Lit) and cond.args[1].value == 0):
        return frozenset({int(cond.args[0].params[0])})
    return frozenset()


def _conflict(sets, pending) -> frozenset:
    """The spaces in which a phase must wait: it reads what another item wrote, or
    overwrites what another item wrote or read, since the last barrier (empty: none).  Two
    writes of one local array, both by the one item (ONE_ITEM), are in that item's order."""
    (r, w), (pr, pw) = sets, pending
    written, written_before = {(s, leaf) for s, leaf, _ in w}, {(s, leaf) for s, leaf, _ in pw}
    by_items = {(s, leaf) for s, leaf, who in w | pw if who == ITEMS}
    # in global memory the items write their own places (results, per-item slots): only reads order them
    rewritten = {(s, leaf) for s, leaf in written & written_before if s is AddressSpace.LOCAL and (s, leaf) in by_items}
    return frozenset(space for space, _ in (r & written_before) | rewritten | (written & pr))


def _next_iteration_conflict(loop: For | ParFor, end, dims: frozenset) -> frozenset:
    """The spaces in which the next iteration of `loop` must wait for this one's leftovers
    (`end`).  The iterations of a work-group loop are iterations of a parallel map: each
    reads and writes its own part of global memory (its slots of the temporaries, its
    outputs), so only local memory, which the group reuses, orders them."""
    spaces = _conflict(_local_sets(loop.body, dims), end)
    if isinstance(loop, ParFor) and loop.level is Level.WORKGROUP:
        return spaces & {AddressSpace.LOCAL}
    return spaces


def _barrier(spaces: frozenset) -> Barrier:
    return Barrier(local=True, global_=AddressSpace.GLOBAL in spaces)


class BarrierPlacementError(FunctionalError):
    """A barrier a program needs where not every item of the work-group would reach it."""


def _shared_local_loop(cmd: Cmd) -> bool:
    """A map_local loop whose body runs map_local loops of another dimension: the items of
    that dimension share its body's code (the stages of a tree over one row)."""
    return isinstance(cmd, ParFor) and cmd.level is Level.LOCAL and any(
        isinstance(c, ParFor) and c.level is Level.LOCAL and c.dim != cmd.dim for c in walk(cmd.body))


def _uniform(cmd: ParFor, contract: dict) -> ParFor:
    """The map_local loop `cmd` with barriers in its body: every item of the group must reach
    each of them.  A loop of constant length runs once per item (a local size of exactly its
    length in its dimension, added to the launch contract; the printer then writes no loop);
    any other runs the same number of iterations on every item, its commands other than the
    barriers guarded by `index < length` (ParFor.uniform)."""
    count = cmd.count.as_int()
    if count is not None and contract.setdefault(cmd.dim, count) == count:
        return cmd
    inside = Op("lt", (), (NatExp(Nat.atom(cmd.var), i32), NatExp(cmd.count, i32)), boolean)
    return attrs.evolve(cmd, body=_guarded(cmd.body, inside), uniform=True)


def _guarded(cmd: Cmd, cond: Exp) -> Cmd:
    """`cmd` with every command that holds no barrier run only where `cond` holds, its
    barriers run by every item."""
    if not any(isinstance(c, Barrier) for c in walk(cmd)):
        return If(cond, cmd)
    if isinstance(cmd, Barrier):
        return cmd
    if isinstance(cmd, Seq):
        return seq(*(_guarded(c, cond) for c in cmd.cmds))
    if isinstance(cmd, (New, For, ParFor)):  # a loop every item runs (its count is not the item's)
        return attrs.evolve(cmd, body=_guarded(cmd.body, cond))
    raise BarrierPlacementError(f"a barrier inside a conditional ({cmd!r}): not every item of the group would "
                                f"reach it")


def _refuse_shared_loops_in(cmd: Cmd, contract: dict, dims: frozenset) -> None:
    """A conditional phase holding a map_local loop whose stages would need barriers: a
    barrier there would not be reached by every item of the group, so the program is refused."""
    for c in walk(cmd):
        if _shared_local_loop(c):
            placed, _ = _place(c.body, _EMPTY, dict(contract), dims)
            if any(isinstance(x, Barrier) for x in walk(placed)):
                raise BarrierPlacementError(
                    f"map_local {c.dim} over {c.count} elements (loop {c.var.name}) runs stages that pass values "
                    f"between the items of another local dimension inside a conditional: the barriers they need "
                    f"would not be reached by every item of the group; run the stages as one item's loops (map_seq)")


def _place(cmd: Cmd, pending, contract: dict, dims: frozenset):
    """Group-level code (every item of the group runs it): barriers go between phases, and
    only where local (or global) memory is communicated; `pending` is what was read and
    written since the last barrier.  Returns the command and what is pending after it.
    The body of a map_local loop running map_local loops of another dimension is such code
    too (for the items of that dimension, `_shared_local_loop`); a barrier in it makes the
    loop run once per item (`_uniform`, recorded in `contract`)."""
    if isinstance(cmd, Seq):
        out = []
        for c in cmd.cmds:
            c, pending = _place(c, pending, contract, dims)
            out.append(c)
        return seq(*out), pending
    if isinstance(cmd, New):
        body, pending = _place(cmd.body, pending, contract, dims)
        return attrs.evolve(cmd, body=body), pending
    if _shared_local_loop(cmd):
        # its iterations are other items' (no barrier between them: each writes its own slots)
        before = Skip()
        if spaces := _conflict(_local_sets(cmd.body, dims), pending):
            before, pending = _barrier(spaces), _EMPTY
        body, end = _place(cmd.body, pending, contract, dims)
        loop = attrs.evolve(cmd, body=body)
        if any(isinstance(c, Barrier) for c in walk(body)):
            loop = _uniform(loop, contract)
        return seq(before, loop), (pending[0] | end[0], pending[1] | end[1])
    if isinstance(cmd, For) or (isinstance(cmd, ParFor) and cmd.level is Level.WORKGROUP):
        # a loop that every item of the group runs (sequential, or over further groups)
        before = Skip()
        if spaces := _conflict(_local_sets(cmd.body, dims), pending):
            # what the loop uses was communicated before it: one barrier before the loop, not
            # one in every iteration (a reduction over a stage's results in global memory)
            before, pending = _barrier(spaces), _EMPTY
        body, end = _place(cmd.body, pending, contract, dims)
        if spaces := _next_iteration_conflict(cmd, end, dims):  # one iteration's leftovers meet the next iteration
            body, end = seq(body, _barrier(spaces)), _EMPTY
        elif (closed := _loop_barriers_closed(body)) is not body:
            body, end = closed, _EMPTY
        return seq(before, attrs.evolve(cmd, body=body)), (pending[0] | end[0], pending[1] | end[1])
    if isinstance(cmd, Barrier):
        return cmd, _EMPTY
    if isinstance(cmd, If):
        _refuse_shared_loops_in(cmd, contract, dims)
    sets = _local_sets(cmd, dims)  # a phase: a per-item loop, an assignment, a conditional
    if spaces := _conflict(sets, pending):
        return seq(_barrier(spaces), cmd), sets
    return cmd, (pending[0] | sets[0], pending[1] | sets[1])


def _loop_barriers_closed(body: Cmd) -> Cmd:
    """A group-level loop's `body` ending in a barrier when it runs a loop holding barriers and
    then more code.  PoCL 3.0 (LLVM 14) runs that code past the outer loop's last iteration
    otherwise (it wrote past the end of buffers: fuzz seed 35715); one barrier per iteration of
    the outer loop avoids it, on every device, so that a kernel runs wherever it is taken."""
    cmds = _flat(body)
    inner = [k for k, c in enumerate(cmds)
             if isinstance(c, (For, ParFor)) and any(isinstance(x, Barrier) for x in walk(c))]
    if not inner or not any(not isinstance(c, (Barrier, Skip)) for c in cmds[inner[-1] + 1:]):
        return body
    return seq(body, Barrier(local=True, global_=False))


def _flat(cmd: Cmd) -> list:
    """The commands `cmd` runs one after another at its top level (through sequences and allocations)."""
    if isinstance(cmd, Seq):
        return [x for c in cmd.cmds for x in _flat(c)]
    if isinstance(cmd, New):
        return _flat(cmd.body)
    return [cmd]


def _barriers(cmd: Cmd, contract: dict, dims: frozenset) -> Cmd:
    """Find the work-group loops; their bodies are group-level code (see _place)."""
    if isinstance(cmd, ParFor) and cmd.level is Level.WORKGROUP:
        body, end = _place(cmd.body, _EMPTY, contract, dims)
        if spaces := _next_iteration_conflict(cmd, end, dims):  # the group's next iteration reuses local memory
            body = seq(body, _barrier(spaces))
        return attrs.evolve(cmd, body=_loop_barriers_closed(body))
    if isinstance(cmd, Seq):
        return Seq(tuple(_barriers(c, contract, dims) for c in cmd.cmds))
    if isinstance(cmd, (New, For, ParFor)):
        return attrs.evolve(cmd, body=_barriers(cmd.body, contract, dims))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_barriers(cmd.then, contract, dims), orelse=_barriers(cmd.orelse, contract, dims))
    return cmd


def insert_barriers(p: Program) -> Program:
    contract = dict(p.local_size)
    # the dimensions of the program's work-groups: a write guarded by local_id(d) == 0 in each is one item's
    dims = frozenset(c.dim for c in walk(p.body) if isinstance(c, ParFor) and c.level in (Level.LOCAL, Level.WORKGROUP))
    body = _barriers(p.body, contract, dims)
    return attrs.evolve(p, body=body, local_size=tuple(sorted(contract.items())))


class PlacementError(Exception):
    """A temporary that cannot live where the program puts it."""


def _hoist(cmd: Cmd, found: list, parallel: bool) -> Cmd:
    if isinstance(cmd, New) and cmd.mem.space is AddressSpace.GLOBAL:
        if parallel:
            raise PlacementError(f"global temporary {cmd.mem.name} is allocated inside a parallel loop; store it "
                                 f"with to_global outside the parallel map")
        if cmd.mem not in found:  # copies of one allocation (an unrolled loop's bodies) share its buffer
            found.append(cmd.mem)
        return _hoist(cmd.body, found, parallel)
    if isinstance(cmd, Seq):
        return seq(*(_hoist(c, found, parallel) for c in cmd.cmds))
    if isinstance(cmd, ParFor):
        return attrs.evolve(cmd, body=_hoist(cmd.body, found, True))
    if isinstance(cmd, (New, For)):
        return attrs.evolve(cmd, body=_hoist(cmd.body, found, parallel))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_hoist(cmd.then, found, parallel), orelse=_hoist(cmd.orelse, found, parallel))
    return cmd


def hoist_globals(p: Program) -> Program:
    found: list = []
    body = _hoist(p.body, found, False)
    return attrs.evolve(p, body=body, temporaries=p.temporaries + tuple(found))


def _substitute_index(cmd: Cmd, var, value) -> Cmd:
    """`cmd` with the loop variable `var` replaced by the size `value` in every index."""
    from functional.nat import Nat, substitute

    def nat(n):
        return substitute(n, {var: value}) if isinstance(n, Nat) else n

    def exp(e):
        if isinstance(e, (Load, Store)):
            return attrs.evolve(e, index=nat(e.index))
        if isinstance(e, NatExp):
            return attrs.evolve(e, nat=nat(e.nat))
        if isinstance(e, Op):
            return attrs.evolve(e, params=tuple(nat(p) for p in e.params), args=tuple(exp(a) for a in e.args))
        return e

    def go(c):
        if isinstance(c, Assign):
            return Assign(exp(c.acc), exp(c.value))
        if isinstance(c, Seq):
            return seq(*(go(x) for x in c.cmds))
        if isinstance(c, (For, ParFor)):
            return attrs.evolve(c, count=nat(c.count), body=go(c.body))
        if isinstance(c, New):
            return attrs.evolve(c, body=go(c.body))
        if isinstance(c, If):
            return If(exp(c.cond), go(c.then), go(c.orelse))
        return c

    return go(cmd)


def _map_cmds(cmd: Cmd, f) -> Cmd:
    """Rebuild bottom-up, applying `f` to every command."""
    if isinstance(cmd, Seq):
        cmd = seq(*(_map_cmds(c, f) for c in cmd.cmds))
    elif isinstance(cmd, (For, ParFor, New)):
        cmd = attrs.evolve(cmd, body=_map_cmds(cmd.body, f))
    elif isinstance(cmd, If):
        cmd = attrs.evolve(cmd, then=_map_cmds(cmd.then, f), orelse=_map_cmds(cmd.orelse, f))
    return f(cmd)


def _simplify_loop(cmd: Cmd) -> Cmd:
    if isinstance(cmd, For):
        count = cmd.count.as_int()
        if count == 0:
            return Skip()
        if count == 1:
            from functional.nat import Nat

            return _substitute_index(cmd.body, cmd.var, Nat.const(0))
    return cmd


def simplify_loops(p: Program) -> Program:
    return attrs.evolve(p, body=_map_cmds(p.body, _simplify_loop))


FOLDING_UNROLL_LIMIT = 32  # iterations: a window of 3x3x3 elements read through join's div and mod


def _index_nats(cmd: Cmd):
    """The indices (and sizes used as values) of every access in `cmd`."""
    def exp(e):
        if isinstance(e, (Load, Store)):
            yield e.index
        if isinstance(e, NatExp):
            yield e.nat
        for a in getattr(e, "args", ()):
            yield from exp(a)

    for c in walk(cmd):
        if isinstance(c, Assign):
            yield from exp(c.acc)
            yield from exp(c.value)
        elif isinstance(c, If):
            yield from exp(c.cond)


def _unrolling_folds(cmd: For) -> bool:
    """A short innermost loop whose variable an index divides, reduces or clamps (a window
    read through `join`: `w[i / 3][i % 3]`): unrolled, each copy's index folds to constants."""
    from functional.nat import FloorDiv, Max, Min, Mod

    count = cmd.count.as_int()
    if count is None or count > FOLDING_UNROLL_LIMIT or any(isinstance(c, (For, ParFor)) for c in walk(cmd.body)):
        return False
    return any(isinstance(a, (FloorDiv, Mod, Min, Max)) and cmd.var in Nat.atom(a).vars
               for n in _index_nats(cmd.body) for a in n.atoms)


def _unroll_loop(cmd: Cmd) -> Cmd:
    if isinstance(cmd, For) and (cmd.unroll or _unrolling_folds(cmd)):
        count = cmd.count.as_int()
        if count is not None and count <= UNROLL_LIMIT:
            from functional.nat import Nat

            return seq(*(_substitute_index(cmd.body, cmd.var, Nat.const(k)) for k in range(count)))
    return cmd


def unroll(p: Program) -> Program:
    return attrs.evolve(p, body=_map_cmds(p.body, _unroll_loop))


# ------------------------------------------------------------------ local blocks an item owns


def _block_accesses(cmd: Cmd, leaf: str, lids: dict, loops: dict, out: list) -> None:
    """(index, enclosing local loops {var: (dim, count)}, enclosing sequential loops {var:
    count}, type) of every Load/Store of `leaf` below `cmd`."""
    def exp(e):
        if isinstance(e, (Load, Store)) and e.leaf == leaf:
            out.append((e.index, dict(lids), dict(loops), e.type))
        for a in getattr(e, "args", ()):
            exp(a)

    if isinstance(cmd, Assign):
        exp(cmd.acc)
        exp(cmd.value)
    elif isinstance(cmd, If):
        exp(cmd.cond)
    if isinstance(cmd, ParFor) and cmd.level is Level.LOCAL:
        lids = {**lids, cmd.var: (cmd.dim, cmd.count)}
    elif isinstance(cmd, For):
        loops = {**loops, cmd.var: cmd.count}
    for c in sub_commands(cmd):
        _block_accesses(c, leaf, lids, loops, out)


def _offset_range(n: Nat, loops: dict) -> tuple[int, int] | None:
    """(least, greatest) value of `n`, a polynomial in sequential loops' variables (each from 0
    to its constant count - 1) with integer coefficients; None where it holds anything else."""
    lo = hi = 0
    for mono, c in n.terms:
        if c.denominator != 1:
            return None
        top = 1  # the monomial's largest value; its least is 0 (unless constant)
        for var, power in mono:
            count = loops[var].as_int() if var in loops else None
            if count is None or count < 1:
                return None
            top *= (count - 1) ** power
        if not mono:
            lo, hi = lo + int(c), hi + int(c)
        elif c < 0:
            lo += int(c) * top
        else:
            hi += int(c) * top
    return lo, hi


CONTRACT_ITEMS = 256  # work-items per group a launch contract may ask for (every GPU and CPU device offers them)


def _owned_block(cmd: New, contract: dict, widest: dict, outer: frozenset = frozenset()):
    """(dim, block length c, local size, unrolled loop variables) when every access of `cmd`'s
    local array is `c * lid + r` inside a local loop over `dim` with 0 <= r < c (r from
    sequential loops), the loops as wide as the group's widest over `dim` (`widest`: what
    the launch gives it; a narrower one would shrink the group): each item reads and writes
    only its own block; else None.  `outer`: the local ids of local loops around the array
    (its slot for their iteration, slot_local_temporaries: the same in every access)."""
    from functional.types import ScalarType

    t = cmd.mem.type
    while isinstance(t, ArrayType):
        t = t.elem
    if not isinstance(t, ScalarType):
        return None
    found: list = []
    _block_accesses(cmd.body, cmd.mem.name, {}, {}, found)
    if not found or any(ty != t for *_, ty in found):
        return None  # read or written as vectors of its scalars: one block layout per type would not do
    other_dims = {c.dim for c in walk(cmd.body) if isinstance(c, ParFor) and c.level is Level.LOCAL}
    shape, offset_vars, slots = set(), set(), set()
    for index, lids, loops, _ in found:
        slot = Nat.from_terms([(mono, c) for mono, c in index.terms if mono and all(v in outer for v, _ in mono)])
        slots.add(slot)
        index = index - slot
        lid_terms = [(mono, c) for mono, c in index.terms if any(v in lids for v, _ in mono)]
        if len(lid_terms) != 1 or len(lid_terms[0][0]) != 1 or lid_terms[0][0][0][1] != 1:
            return None
        (var, _), = lid_terms[0][0]
        block = lid_terms[0][1]
        dim, count = lids[var]
        rest = index - Nat.atom(var) * Nat.const(int(block)) if block.denominator == 1 else None
        bounds = _offset_range(rest, loops) if rest is not None else None
        if bounds is None or bounds[0] < 0 or bounds[1] >= block or count.as_int() is None:
            return None
        shape.add((dim, int(block), count.as_int()))
        offset_vars |= set(rest.vars)
    if len(shape) != 1 or len(slots) != 1:
        return None
    (dim, block, items), = shape
    if other_dims != {dim} or contract.get(dim, items) != items or widest.get(dim) != items:
        return None  # items of another local dimension would each hold a copy of a block they share
    if items > CONTRACT_ITEMS:
        return None  # a launch contract every device can keep
    return dim, block, items, offset_vars


def _widest_local_loops(cmd: Cmd) -> dict:
    """{dim: the largest constant count of a local loop over it} in a work-group's code."""
    widest: dict = {}
    for c in walk(cmd):
        if isinstance(c, ParFor) and c.level is Level.LOCAL:
            count = c.count.as_int()
            widest[c.dim] = max(widest.get(c.dim, 0), count if count is not None else 1 << 30)
    return widest


def _owned_to_private(cmd: Cmd, contract: dict, widest: dict | None = None, outer: frozenset = frozenset()) -> Cmd:
    if isinstance(cmd, ParFor) and cmd.level is Level.WORKGROUP:
        return attrs.evolve(cmd, body=_owned_to_private(cmd.body, contract, _widest_local_loops(cmd.body)))
    if isinstance(cmd, ParFor) and cmd.level is Level.LOCAL:
        return attrs.evolve(cmd, body=_owned_to_private(cmd.body, contract, widest, outer | {cmd.var}))
    if isinstance(cmd, New) and cmd.mem.space is AddressSpace.LOCAL and isinstance(cmd.mem.type, ArrayType):
        owned = _owned_block(cmd, contract, widest or {}, outer)
        if owned is not None:
            dim, block, items, offset_vars = owned
            contract[dim] = items
            t = cmd.mem.type
            while isinstance(t, ArrayType):
                t = t.elem
            mem = Mem(cmd.mem.name, ArrayType(Nat.const(block), t), AddressSpace.PRIVATE)
            lids = {c.var for c in walk(cmd.body) if isinstance(c, ParFor) and c.level is Level.LOCAL} | outer
            body = _within_block(cmd.body, mem.name, lids, offset_vars)
            return New(mem, _owned_to_private(body, contract, widest, outer))
    if isinstance(cmd, Seq):
        return seq(*(_owned_to_private(c, contract, widest, outer) for c in cmd.cmds))
    if isinstance(cmd, (New, For, ParFor)):
        return attrs.evolve(cmd, body=_owned_to_private(cmd.body, contract, widest, outer))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_owned_to_private(cmd.then, contract, widest, outer),
                            orelse=_owned_to_private(cmd.orelse, contract, widest, outer))
    return cmd


def _within_block(cmd: Cmd, leaf: str, lids: set, offset_vars: set) -> Cmd:
    """Accesses of `leaf` at their offset within the item's block, in private memory; the
    sequential loops those offsets count marked for unrolling (constant offsets: privatise
    makes the block registers)."""
    from functional.nat import substitute

    def local(index: Nat) -> Nat:
        return substitute(index, {v: Nat.const(0) for v in lids})

    def exp(e):
        if isinstance(e, (Load, Store)) and e.leaf == leaf:
            return attrs.evolve(e, index=local(e.index), space=AddressSpace.PRIVATE)
        if isinstance(e, Op):
            return attrs.evolve(e, args=tuple(exp(a) for a in e.args))
        return e

    def go(c):
        if isinstance(c, Assign):
            return Assign(exp(c.acc), exp(c.value))
        if isinstance(c, If):
            return If(exp(c.cond), go(c.then), go(c.orelse))
        if isinstance(c, Seq):
            return seq(*(go(x) for x in c.cmds))
        if isinstance(c, For):
            return attrs.evolve(c, body=go(c.body), unroll=c.unroll or c.var in offset_vars)
        if isinstance(c, (New, ParFor)):
            return attrs.evolve(c, body=go(c.body))
        return c

    return go(cmd)


def private_blocks(p: Program) -> Program:
    """A local array each work-item reads and writes only in its own block (`c * lid + r`,
    0 <= r < c, lid the local id of one dimension: softmax's exponentials, each item's
    interleaved elements of a row) becomes a private array of c elements per item, the loops
    over r unrolled so that privatise keeps it in registers; the program records the local
    size that makes each map_local run once per item (the launch contract).  Its barriers go
    with it (insert_barriers sees no local memory communicated)."""
    contract = dict(p.local_size)
    body = _owned_to_private(p.body, contract)
    return attrs.evolve(p, body=body, local_size=tuple(sorted(contract.items())))


def _local_index_map(index, lids: dict):
    """({dim: coefficient}, constant) when `index` is a sum of enclosing local-loop variables
    with integer coefficients plus an integer constant (nothing else), else None."""
    coefs, const = {}, 0
    for mono, c in index.terms:
        if c.denominator != 1:
            return None
        if not mono:
            const = int(c)
            continue
        if len(mono) != 1 or mono[0][1] != 1 or mono[0][0] not in lids:
            return None
        dim, _ = lids[mono[0][0]]
        if dim in coefs:
            return None
        coefs[dim] = int(c)
    return coefs, const


_OWNED_PARTS_ENUMERATED = 1 << 16  # elements of the item's parts enumerated at most, where no radix shows them apart


def _owned_parts(coefs: dict, counts: dict, consts: set) -> bool:
    """Each item's part {sum c_d * lid_d + r : r in consts} is disjoint from every other
    item's: the coefficients form a mixed radix above the constants, or (a warp's fragments,
    `128 t + 4 lane + r`: the lanes' parts interleaved) no two items' elements meet when
    enumerated."""
    if min(consts) < 0:
        return False
    reach = max(consts) + 1
    for dim in sorted(coefs, key=coefs.get):
        if coefs[dim] < reach:
            break
        reach = coefs[dim] * counts[dim]
    else:
        return True
    items = 1
    for dim in coefs:
        items *= counts[dim]
    if items * len(consts) > _OWNED_PARTS_ENUMERATED or any(c <= 0 for c in coefs.values()):
        return False
    bases = {0}
    for dim, c in coefs.items():
        bases = {b + c * k for b in bases for k in range(counts[dim])}
    return len(bases) == items and len({b + r for b in bases for r in consts}) == items * len(consts)


def _accesses(cmd: Cmd, leaf: str, lids: dict, out: list) -> None:
    """(index, enclosing local loops, type) of every Load/Store of `leaf` below `cmd`."""
    found: list = []
    _block_accesses(cmd, leaf, lids, {}, found)
    out.extend((index, local, t) for index, local, _, t in found)


def _replace_leaf(cmd: Cmd, leaf: str, scalars: dict) -> Cmd:
    """Every access of `leaf` at constant offset r (beyond the item's own part) -> scalars[r]."""
    from .ir import MemAcc

    def offset(index) -> int:
        return int(dict(index.terms).get((), 0))

    def exp(e):
        if isinstance(e, Load) and e.leaf == leaf:
            return scalars[offset(e.index)]
        if isinstance(e, Op):
            return attrs.evolve(e, args=tuple(exp(a) for a in e.args))
        return e

    def assign(c):
        acc = c.acc
        if isinstance(acc, Store) and acc.leaf == leaf:
            acc = MemAcc(scalars[offset(acc.index)])
        return Assign(acc, exp(c.value))

    return _rewrite(cmd, assign, exp)


def _privatise(cmd: Cmd, contract: dict) -> Cmd:
    """A private array that each work-item touches only in its own part (indices
    `sum c_d * local_id_d + r` with constant r, parts disjoint) becomes one scalar per r:
    registers, with the local sizes it assumed added to the launch contract."""
    from functional.types import ArrayType

    if isinstance(cmd, New) and cmd.mem.space is AddressSpace.PRIVATE and isinstance(cmd.mem.type, ArrayType):
        scalars = _private_scalars(cmd, contract)
        if scalars is not None:
            body = _privatise(_replace_leaf(cmd.body, cmd.mem.name, scalars), contract)
            for r in sorted(scalars, reverse=True):
                body = New(scalars[r], body)
            return body
    if isinstance(cmd, Seq):
        return seq(*(_privatise(c, contract) for c in cmd.cmds))
    if isinstance(cmd, (New, For, ParFor)):
        return attrs.evolve(cmd, body=_privatise(cmd.body, contract))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_privatise(cmd.then, contract), orelse=_privatise(cmd.orelse, contract))
    return cmd


def _private_scalars(cmd: New, contract: dict) -> dict | None:
    """{offset: scalar Mem} when `cmd`'s array can be privatised (see _privatise), updating
    the contract; else None."""
    from functional.types import ArrayType

    from .ir import Mem

    leaf_type = cmd.mem.type
    while isinstance(leaf_type, ArrayType):
        leaf_type = leaf_type.elem
    if isinstance(leaf_type, ArrayType):
        return None
    found: list = []
    _accesses(cmd.body, cmd.mem.name, {}, found)
    if any(t != leaf_type for _, _, t in found):
        return None  # read or written as vectors of its scalars (as_vector views): one scalar per offset would not do
    maps = [(_local_index_map(i, lids), lids) for i, lids, _ in found]
    if not found or any(m is None for m, _ in maps):
        return None
    if len({tuple(sorted(m[0].items())) for m, _ in maps}) != 1:
        return None
    coefs, sizes = maps[0][0][0], {}
    for _m, lids in maps:
        for _var, (dim, count) in lids.items():
            if dim in coefs:
                c = count.as_int()
                if c is None or sizes.setdefault(dim, c) != c or contract.get(dim, c) != c:
                    return None
    consts = {m[1] for m, _ in maps}
    if set(sizes) != set(coefs) or not _owned_parts(coefs, sizes, consts):
        return None
    contract.update(sizes)
    name = cmd.mem.name
    if consts == {0}:
        return {0: Mem(name, leaf_type, AddressSpace.PRIVATE)}
    return {r: Mem(f"{name}_{r}", leaf_type, AddressSpace.PRIVATE) for r in sorted(consts)}


def privatise(p: Program) -> Program:
    contract = dict(p.local_size)
    body = _privatise(p.body, contract)
    return attrs.evolve(p, body=body, local_size=tuple(sorted(contract.items())))


PIPELINE = (slot_parallel_globals, slot_local_temporaries, globalise_host_state, resolve_views, simplify_loops, private_blocks, unroll,
            simplify_conditions,
            privatise, share_sign_symmetric_calls, share_common_values,
            insert_barriers, hoist_globals)


def run_passes(p: Program, passes=PIPELINE) -> Program:
    for f in passes:
        p = f(p)
    return p


__all__ = ["PIPELINE", "run_passes", "slot_parallel_globals", "globalise_host_state", "resolve_views", "simplify_loops", "unroll", "simplify_conditions",
           "privatise", "share_sign_symmetric_calls", "share_common_values", "insert_barriers",
           "hoist_globals", "PlacementError", "BarrierPlacementError"]
