"""Common values computed once: `share_common_values`.

A program that uses a value twice without `let` (Black-Scholes' d1 in four cumulative normals,
a Python variable reused: its expression is written again) computes it twice, and the
translation prints it twice.  An OpenCL compiler is expected to see through
that, and NVIDIA's does not where the expression sits between library calls that branch
(`erfc`, `log`): Black-Scholes' kernel computed `log(s / k)` and the division by
`0.3 * sqrt(t)` four times (benchmarks/kernel_anatomy.py on the H200).  So the imperative
program says it, as a straight-line run of assignments with a private variable:

    x := E[e]; ...; y := F[e]   =   new t in private { t := e; x := E[t]; ...; y := F[t] }

where `e` is an operation worth a variable (not a constant, which the compiler folds; more
than one instruction on leaves), reads nothing that a statement of the run writes between its
first and its last use, and is evaluated unconditionally at least twice: occurrences under a `select`'s branches
or the right operand of `and`/`or` do not count, since computing `e` once beforehand there
would evaluate what the program might never evaluate (a read past a guarded bound).  Those
occurrences are replaced too when the value is computed anyway.  Values are found by value
numbering (each distinct operation tree one number), largest first, so a repeated `d1`
becomes one variable and its parts are shared only where they are used apart from it.
"""

from __future__ import annotations

import attrs

from functional.types import AddressSpace, ScalarType, VectorType

from .ir import INTRINSIC_OPS, Acc, Assign, Cmd, Exp, For, If, IdxAcc, Lit, Load, Mem, MemAcc, New, Op, ParFor, \
    Program, ProjAcc, Seq, Store, ViewAcc, seq, walk

# reads of a place, not computations (an intrinsic such as a shuffle reads another lane's
# register: every lane of the warp runs it where the translation put it)
_ACCESSORS = frozenset({"lane", "local_id"}) | frozenset(INTRINSIC_OPS)
# one instruction on its operands: a tree of one of these over leaves is left to the OpenCL compiler
_SINGLE_INSTRUCTION = frozenset({"add", "sub", "mul", "neg", "not", "cast", "select", "lt", "le", "gt", "ge", "eq",
                                 "ne", "and", "or", "min", "max", "abs", "bit_and", "bit_or", "bit_xor", "bit_not",
                                 "shl", "shr", "vec", "fma"})


def share_common_values(p: Program) -> Program:
    taken = {m.name for m in (*p.inputs, p.output, *p.temporaries)} | {
        c.mem.name for c in walk(p.body) if isinstance(c, New)}
    names = _Names(taken)
    return attrs.evolve(p, body=_share(p.body, names))


@attrs.define
class _Names:
    """Fresh private variable names, unlike every name of the program."""

    taken: set
    counter: int = 0

    def fresh(self) -> str:
        while True:
            self.counter += 1
            name = f"common{self.counter}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def _share(cmd: Cmd, names: _Names) -> Cmd:
    if isinstance(cmd, Assign):
        return _share_run([cmd], names)
    if isinstance(cmd, Seq):
        out, run = [], []
        for c in cmd.cmds:
            if isinstance(c, Assign):
                run.append(c)
                continue
            if run:
                out.append(_share_run(run, names))
                run = []
            out.append(_share(c, names))
        if run:
            out.append(_share_run(run, names))
        return seq(*out)
    if isinstance(cmd, (New, For, ParFor)):
        return attrs.evolve(cmd, body=_share(cmd.body, names))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_share(cmd.then, names), orelse=_share(cmd.orelse, names))
    return cmd


# ------------------------------------------------------------------------- value numbering


@attrs.define
class _Values:
    """The operation trees of a run, numbered: equal trees share a number."""

    table: dict = attrs.Factory(dict)  # key -> number
    nodes: list = attrs.Factory(list)  # number -> an expression with it
    children: list = attrs.Factory(list)  # number -> the numbers of its operands (operations only)
    sizes: list = attrs.Factory(list)  # number -> nodes in its tree
    operations: list = attrs.Factory(list)  # number -> operations in its tree
    reads: list = attrs.Factory(list)  # number -> the names of the memory it reads
    varies: list = attrs.Factory(list)  # number -> whether a leaf is not a literal (else a constant)
    by_id: dict = attrs.Factory(dict)  # id(expression) -> number, for this run's trees

    def number(self, e: Exp) -> int:
        known = self.by_id.get(id(e))
        if known is not None:
            return known
        if isinstance(e, Op):
            args = tuple(self.number(a) for a in e.args)
            key = ("op", e.name, e.params, args, e.type)
            reads = frozenset().union(*(self.reads[a] for a in args))
            size = 1 + sum(self.sizes[a] for a in args)
            operations = 1 + sum(self.operations[a] for a in args)
            varies = any(self.varies[a] for a in args)
        else:
            args, reads, size, operations, varies = (), _names_read(e), 1, 0, not isinstance(e, Lit)
            key = ("lit", e.type, repr(e.value)) if isinstance(e, Lit) else ("leaf", e)  # 0.0 is not -0.0
        n = self.table.get(key)
        if n is None:
            n = self.table[key] = len(self.nodes)
            self.nodes.append(e)
            self.children.append(args)
            self.sizes.append(size)
            self.operations.append(operations)
            self.varies.append(varies)
            self.reads.append(reads)
        self.by_id[id(e)] = n
        return n

    def shareable(self, n: int) -> bool:
        """An operation worth a variable: not a constant (the compiler folds it), and more than one
        instruction on leaves (a library call, a division, or a tree of operations)."""
        e = self.nodes[n]
        if not isinstance(e, Op) or e.name in _ACCESSORS or not _register_type(e.type) or not self.varies[n]:
            return False
        return self.operations[n] >= 2 or e.name not in _SINGLE_INSTRUCTION


def _register_type(t) -> bool:
    if isinstance(t, ScalarType):
        return True
    return isinstance(t, VectorType) and t.width.as_int() not in (None, 3)  # a 3-vector is stored as 3 scalars


def _names_read(e) -> frozenset:
    if isinstance(e, Load):
        return frozenset({e.leaf})
    if isinstance(e, Mem):
        return frozenset({e.name})
    out = frozenset()
    if attrs.has(type(e)):
        for value in attrs.astuple(e, recurse=False):
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, Exp):
                    out |= _names_read(item)
    return out


def _written(acc: Acc) -> str | None:
    if isinstance(acc, Store):
        return acc.leaf
    if isinstance(acc, MemAcc):
        return acc.mem.name
    if isinstance(acc, (IdxAcc, ProjAcc)):
        return _written(acc.array if isinstance(acc, IdxAcc) else acc.tuple_)
    if isinstance(acc, ViewAcc):
        return _written(acc.target)
    return None  # unknown: treated as writing everything (see _conflicts)


def _conflicts(written: str | None, reads: frozenset) -> bool:
    """Whether writing `written` (a leaf or a variable; None: unknown) may change what `reads` names
    (a struct's leaves are its name and `_k` suffixes)."""
    if written is None:
        return bool(reads)
    return any(r == written or r.startswith(written + "_") or written.startswith(r + "_") for r in reads)


def _operands(e: Op) -> tuple[tuple[Exp, bool], ...]:
    """(operand, evaluated only conditionally) for each operand of `e` (C's `?:`, `&&`, `||`)."""
    if e.name == "select":
        return ((e.args[0], False), (e.args[1], True), (e.args[2], True))
    if e.name in ("and", "or"):
        return ((e.args[0], False), (e.args[1], True))
    return tuple((a, False) for a in e.args)


# ---------------------------------------------------------------------------- one run


def _share_run(run: list, names: _Names) -> Cmd:
    values = _Values()
    uses: dict = {}  # number -> unconditional occurrences, sub-trees of repeated trees counted each time
    statements: dict = {}  # number -> the statements evaluating it unconditionally

    guarded: dict = {}  # number -> the statements evaluating it only under a guard

    def count(e: Exp, k: int, conditional: bool) -> None:
        n = values.number(e)
        if conditional:
            guarded.setdefault(n, set()).add(k)
            if isinstance(e, Op):
                for a, _ in _operands(e):
                    count(a, k, True)
            return
        uses[n] = uses.get(n, 0) + 1
        statements.setdefault(n, set()).add(k)
        if isinstance(e, Op):
            for a, lazy in _operands(e):
                count(a, k, lazy)

    for k, stmt in enumerate(run):
        count(stmt.value, k, False)
    windows = {}  # number -> (first, last) statement of the shared value
    for n in sorted(uses, key=lambda m: -values.sizes[m]):  # a tree before its parts
        if uses[n] < 2 or not values.shareable(n):
            continue
        first, last = min(statements[n]), max(statements[n])
        if _written_between(run, first, last, values.reads[n]):
            continue
        later = max(guarded.get(n, ()), default=last)  # a guarded use after the last one: the variable too
        windows[n] = (first, later if later > last and not _written_between(run, last, later, values.reads[n])
                      else last)
        _discount(values, uses, n, uses[n] - 1)  # its parts are now computed once, in its definition
    if not windows:
        return seq(*run)
    in_order = sorted(windows, key=lambda m: (windows[m][0], values.sizes[m]))  # as they are defined
    temps = {n: Mem(names.fresh(), values.nodes[n].type, AddressSpace.PRIVATE) for n in in_order}
    out: list = []
    for k, stmt in enumerate(run):
        defined_here = sorted((n for n, (first, _) in windows.items() if first == k), key=lambda m: values.sizes[m])
        for n in defined_here:
            out.append(Assign(MemAcc(temps[n]), _rebuild(values.nodes[n], k, values, windows, temps, keep=n)))
        out.append(Assign(stmt.acc, _rebuild(stmt.value, k, values, windows, temps)))
    body = seq(*out)
    for n in reversed(in_order):
        body = New(temps[n], body)
    return body


def _written_between(run: list, first: int, last: int, reads: frozenset) -> bool:
    """Whether a statement from `first` to before `last` writes what `reads` names."""
    return any(_conflicts(_written(run[k].acc), reads) for k in range(first, last))


def _discount(values: _Values, uses: dict, n: int, extra: int) -> None:
    """`extra` fewer evaluations of `n`'s tree: each of its parts loses as many."""
    if extra <= 0:
        return
    for a, lazy in _operands(values.nodes[n]) if isinstance(values.nodes[n], Op) else ():
        if lazy:
            continue
        m = values.number(a)
        uses[m] -= extra
        _discount(values, uses, m, extra)


def _rebuild(e: Exp, k: int, values: _Values, windows: dict, temps: dict, keep: int | None = None) -> Exp:
    """`e` in statement `k` with every shared value whose window holds `k` read from its variable
    (`keep`: the value being defined, rebuilt from its parts)."""
    n = values.number(e)
    if n != keep and n in windows and windows[n][0] <= k <= windows[n][1]:
        return temps[n]
    if not isinstance(e, Op):
        return e
    args = tuple(_rebuild(a, k, values, windows, temps) for a in e.args)
    return e if args == e.args else attrs.evolve(e, args=args)


__all__ = ["share_common_values"]
