"""Resolution of views: every read or write through layout views becomes a `Load` or
`Store` of one memory leaf at a flat index, computed along the path of indices.

    read(split n e,   [i, j, ...]) = read(e, [i*n + j, ...])
    read(join e,      [k, ...])    = read(e, [k // n, k % n, ...])      (n the inner length)
    read(transpose e, [i, j, ...]) = read(e, [j, i, ...])
    read(gather f e,  [i, ...])    = read(e, [f(i, n), ...])
    read(slide s t e, [i, j, ...]) = read(e, [i*t + j, ...])
    read(zip a b,     [i, .k, ...])= read(a or b, [i, ...])
    read(x,           path)        = x_leaf[row-major(indices)]         (x in memory)

and dually for acceptors.  Index arithmetic is built with the size normal form, so loop
variables with known ranges simplify as it goes (`(i*n + j) // n` is `i`).
"""

from __future__ import annotations

import attrs

from functional.errors import FunctionalError
from functional.expr import IndexFun
from functional.nat import Nat, as_nat, divides, floordiv, mod, nmax, nmin
from functional.primitives import stride_index
from functional.types import AddressSpace, ArrayType, ScalarType, TupleType, VectorType, boolean, i32

from .ir import (
    Acc, Assign, Exp, Idx, IdxAcc, Lit, Load, Mem, MemAcc, NatExp, Op, Proj, ProjAcc, Seq, Store, View, ViewAcc, leaf_name,
    leaves,
)


class ViewError(FunctionalError):
    """A read or write that no view resolution covers (a bug in the translation)."""


@attrs.frozen
class P:
    """A tuple projection in a path."""

    k: int


@attrs.frozen
class Lane:
    """A vector lane in a path."""

    k: Nat


def _mem_access(mem: Mem, path: tuple, want_type):
    projs = tuple(p.k for p in path if isinstance(p, P))
    idxs = [p for p in path if isinstance(p, Nat)]
    lanes = [p for p in path if isinstance(p, Lane)]
    found = [(dims, elem) for proj, dims, elem in leaves(mem.type) if proj == projs]
    if not found:
        raise ViewError(f"no component {projs} in {mem.name}: {mem.type}")
    dims, elem = found[0]
    if len(idxs) != len(dims):
        raise ViewError(f"{mem.name}: {len(idxs)} indices for {len(dims)} dimensions")
    flat = Nat.const(0)
    for i, n in zip(idxs, dims):
        flat = flat * n + i
    name = leaf_name(mem.name, projs)
    if lanes:
        return name, flat * elem.width + lanes[0].k, elem.elem
    return name, flat, elem


def read(e: Exp, path: tuple = ()) -> Exp:
    if isinstance(e, Mem):
        if not isinstance(e.type, (ArrayType, TupleType)) and not path and e.space is AddressSpace.PRIVATE:
            return e  # a scalar kernel argument or private variable
        if isinstance(e.type, VectorType) and e.space is AddressSpace.PRIVATE and len(path) == 1 \
                and isinstance(path[0], Lane):
            return Op("lane", (path[0].k,), (e,), e.type.elem)  # a lane of a private vector
        name, index, t = _mem_access(e, path, None)
        return Load(name, index, t, e.space)
    if isinstance(e, Idx):
        return read(e.array, (e.index,) + path)
    if isinstance(e, Proj):
        return read(e.tuple_, (P(e.k),) + path)
    if isinstance(e, (Lit, NatExp)):
        if path:
            raise ViewError(f"indexing a scalar {e}")
        return e
    if isinstance(e, Op):
        if path and e.name == "select" and not isinstance(path[0], Lane):  # of tuples or arrays: element-wise
            cond, a, b = e.args
            x, y = read(a, path), read(b, path)
            return Op("select", (), (read(cond), x, y), x.type)
        if path and isinstance(path[0], Lane):  # a lane of an element-wise vector operation
            t = e.type.elem if isinstance(e.type, VectorType) else e.type
            return Op(e.name, e.params, tuple(read(a, path) if isinstance(a.type, VectorType) else read(a)
                                              for a in e.args), t)
        if path:
            raise ViewError(f"indexing the result of {e.name}")
        return Op(e.name, e.params, tuple(read(a) for a in e.args), e.type)
    if isinstance(e, View):
        return _read_view(e, path)
    raise ViewError(f"cannot read {e!r}")


def _length(t) -> Nat:
    return t.size


def _read_view(v: View, path: tuple) -> Exp:
    kind, ps, args = v.kind, v.params, v.args
    head, rest = (path[0], path[1:]) if path else (None, ())
    src = args[0] if args else None
    if kind == "split":
        (n,) = ps
        return read(src, (head * n + rest[0],) + rest[1:])
    if kind == "join":
        n = src.type.elem.size
        return read(src, (floordiv(head, n), mod(head, n)) + rest)
    if kind == "transpose":
        return read(src, (rest[0], head) + rest[1:])
    if kind in ("gather", "reorder_stride"):
        fun = ps[0] if kind == "gather" else stride_index(ps[0])
        return read(src, (_apply_index(fun, head, _length(src.type)),) + rest)
    if kind == "slide":
        _, step = ps
        return read(src, (head * step + rest[0],) + rest[1:])
    if kind == "take":
        return read(src, path)
    if kind == "drop":
        return read(src, (head + ps[0],) + rest)
    if kind in ("pad_clamp", "pad_wrap", "pad_mirror"):
        left, _ = ps
        n = _length(src.type)
        j = head - left
        if kind == "pad_clamp":
            idx = nmin(nmax(j, 0), n - 1)
        elif kind == "pad_wrap":
            idx = mod(j + n, n)
        else:
            m = nmax(j, -1 - j)
            idx = nmin(m, 2 * n - 1 - m)
        return read(src, (idx,) + rest)
    if kind == "pad_const":
        left, _ = ps
        value, arr = args
        n = _length(arr.type)
        inside = _in_range(head, left, left + n)
        return Op("select", (), (inside, read(arr, (head - left,) + rest), read(value, rest)), _scalar_type(arr, rest))
    if kind == "concat":
        a, b = args
        n = _length(a.type)
        first = Op("lt", (), (NatExp(head, i32), NatExp(n, i32)), boolean)
        return Op("select", (), (first, read(a, path), read(b, (head - n,) + rest)), _scalar_type(a, rest))
    if kind == "zip":
        k = rest[0].k
        return read(args[k], (head,) + rest[1:])
    if kind == "unzip":
        return read(src, (rest[0], head) + rest[1:])
    if kind == "pair":
        return read(args[head.k], rest)
    if kind == "generate":
        _, var = ps
        return read(substitute_index(src, var, head), rest)
    if kind == "as_vector":
        (w,) = ps
        if rest and isinstance(rest[0], Lane):
            return read(src, (head * w + rest[0].k,) + rest[1:])
        return _vector_from_lanes(src, head, w)
    if kind == "as_scalar":
        w = v.args[0].type.elem.width
        return read(src, (floordiv(head, w), Lane(mod(head, w))) + rest)
    raise ViewError(f"no read rule for view {kind}")


def substitute_index(e, var, value: Nat):
    """`e` with the size variable `var` replaced by `value` in every index inside it."""
    from functional.nat import substitute

    def nat(n):
        return substitute(n, {var: value}) if isinstance(n, Nat) else n

    if isinstance(e, NatExp):
        return NatExp(nat(e.nat), e.type)
    if isinstance(e, Idx):
        return Idx(substitute_index(e.array, var, value), nat(e.index), e.type)
    if isinstance(e, Proj):
        return Proj(substitute_index(e.tuple_, var, value), e.k, e.type)
    if isinstance(e, (View, Op)):
        return attrs.evolve(e, params=tuple(nat(p) for p in e.params),
                            args=tuple(substitute_index(a, var, value) for a in e.args))
    return e


def _scalar_type(arr: Exp, rest: tuple):
    t = arr.type.elem
    for p in rest:
        t = t.elems[p.k] if isinstance(p, P) else t.elem
    return t


def _in_range(i: Nat, lo: Nat, hi: Nat) -> Exp:
    ie = NatExp(i, i32)
    return Op("and", (), (Op("ge", (), (ie, NatExp(as_nat(lo), i32)), boolean),
                          Op("lt", (), (ie, NatExp(as_nat(hi), i32)), boolean)), boolean)


def _apply_index(fun: IndexFun, i: Nat, n: Nat) -> Nat:
    return fun(i, n)


def _aligned_run(lanes: list, kind: type, w: Nat) -> bool:
    """The lanes' accesses (Loads or Stores) are w consecutive elements of one leaf, the
    first at a multiple of w: one vector access can replace them."""
    first = lanes[0]
    return (all(isinstance(x, kind) and x.leaf == first.leaf and x.index == first.index + k for k, x in enumerate(lanes))
            and divides(w, first.index))


def _vector_from_lanes(src: Exp, i: Nat, w: Nat) -> Exp:
    lanes = [read(src, (i * w + k,)) for k in range(w.as_int())]
    first = lanes[0]
    if _aligned_run(lanes, Load, w):
        return Load(first.leaf, first.index / w, VectorType(first.type, w), first.space)
    return Op("vec", (w,), tuple(lanes), VectorType(first.type, w))


# ------------------------------------------------------------------------------ writes


def write(a: Acc, path: tuple = ()) -> Acc:
    if isinstance(a, MemAcc):
        if not isinstance(a.mem.type, (ArrayType, TupleType)) and not path and a.mem.space is AddressSpace.PRIVATE:
            return a
        name, index, t = _mem_access(a.mem, path, None)
        return Store(name, index, t, a.mem.space)
    if isinstance(a, IdxAcc):
        return write(a.array, (a.index,) + path)
    if isinstance(a, ProjAcc):
        return write(a.tuple_, (P(a.k),) + path)
    if isinstance(a, ViewAcc):
        return _write_view(a, path)
    raise ViewError(f"cannot write through {a!r}")


def _write_view(v: ViewAcc, path: tuple) -> Acc:
    kind, ps, target = v.kind, v.params, v.target
    head, rest = (path[0], path[1:]) if path else (None, ())
    if kind == "join_acc":  # the value is m.n.t, the target (m*n).t
        (n,) = ps
        return write(target, (head * n + rest[0],) + rest[1:])
    if kind == "split_acc":  # the value is (m*n).t, the target m.n.t
        (n,) = ps
        return write(target, (floordiv(head, n), mod(head, n)) + rest)
    if kind == "transpose_acc":
        return write(target, (rest[0], head) + rest[1:])
    if kind == "scatter_acc":
        fun, n = ps
        return write(target, (_apply_index(fun, head, n),) + rest)
    if kind == "offset_acc":  # a part of concat's result: its element i is the target's i + offset
        (offset,) = ps
        return write(target, (head + offset,) + rest)
    if kind == "zip_acc":  # writing component k of an array of pairs
        (k,) = ps
        return write(target, (head, P(k)) + rest)
    if kind == "as_scalar_acc":  # the value is m.vec[w], the target (m*w) scalars
        (w,) = ps
        if rest:
            return write(target, (head * w + rest[0].k,))
        return _vector_store(target, head, w)
    if kind == "as_vector_acc":  # the value is (m*w) scalars, the target m.vec[w]
        (w,) = ps
        return write(target, (floordiv(head, w), Lane(mod(head, w))) + rest)
    if kind == "map_acc":  # element `head` goes through the write views `chain` into target[head]
        (chain,) = ps
        elem: Acc = IdxAcc(target, head, v.type.elem)
        for link_kind, link_params in chain:
            elem = ViewAcc(link_kind, link_params, elem, v.type.elem)
        return write(elem, rest)
    raise ViewError(f"no write rule for view {kind}")


@attrs.frozen
class LaneStores:
    """A vector written lane by lane: its w scalar targets are not one aligned run of memory
    (a float4 read along k written into a tile stored k-major, say)."""

    stores: tuple


def _vector_store(target: Acc, i: Nat, w: Nat):
    """The vector element i of as_scalar's target: one vector Store when its lanes are
    consecutive and aligned, else LaneStores."""
    lanes = [write(target, (i * w + k,)) for k in range(w.as_int())]
    first = lanes[0]
    if _aligned_run(lanes, Store, w):
        return Store(first.leaf, first.index / w, VectorType(first.type, w), first.space)
    return LaneStores(tuple(lanes))


def _assign(acc, value: Exp):
    """Assign(acc, value) resolved; a LaneStores target gets one assignment per lane."""
    if isinstance(acc, LaneStores):
        if not isinstance(value.type, VectorType):  # a scalar stored to a vector: every lane (as OpenCL broadcasts)
            return Seq(tuple(Assign(a, value) for a in acc.stores))
        return Seq(tuple(Assign(a, Op("lane", (Nat.const(k),), (value,), value.type.elem))
                         for k, a in enumerate(acc.stores)))
    return Assign(acc, value)


def resolve(cmd):
    """Replace every Assign's acceptor and expression by resolved Stores and Loads."""
    from .ir import For, If, New, ParFor

    if isinstance(cmd, Assign):
        return _assign(write(cmd.acc), read(cmd.value))
    if isinstance(cmd, Seq):
        return Seq(tuple(resolve(c) for c in cmd.cmds))
    if isinstance(cmd, New):
        return attrs.evolve(cmd, body=resolve(cmd.body))
    if isinstance(cmd, (For, ParFor)):
        return attrs.evolve(cmd, body=resolve(cmd.body))
    if isinstance(cmd, If):
        return If(read(cmd.cond), resolve(cmd.then), resolve(cmd.orelse))
    return cmd


__all__ = ["read", "write", "resolve", "ViewError", "ScalarType"]
