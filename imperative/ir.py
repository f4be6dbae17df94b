"""The imperative language of DPIA: commands with explicit memory spaces and barriers,
expressions and acceptors that may be *views* of memory.

    cmd ::= skip | cmd; cmd | new x: T in SPACE { cmd } | acc := exp
          | for i < n { cmd } | par_for[LEVEL d] i < n { cmd } | if exp { cmd } else { cmd } | barrier
    exp ::= x | literal | exp[i] | exp.k | view(exp) | op(exp, ...) | size expression
    acc ::= x | acc[i] | acc.k | view(acc)

Views (`split`, `join`, `transpose`, `gather`, `slide`, `pad`, `zip`, `as_vector`, ...)
never copy: reading or writing through one is index arithmetic, resolved along a path of
indices by `imperative.views` and simplified by the size normal form.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from functional.nat import Nat, Var as NatVar
from functional.types import AddressSpace, ArrayType, DataType, ScalarType, TupleType, VectorType


class Level(enum.Enum):
    GLOBAL = "global"
    WORKGROUP = "workgroup"
    LOCAL = "local"


# ----------------------------------------------------------------------------- expressions


class Exp:
    type: DataType


@attrs.frozen
class Mem(Exp):
    """A memory object: a kernel input/output or a `new` temporary."""

    name: str
    type: DataType
    space: AddressSpace

    def __str__(self) -> str:
        return self.name


@attrs.frozen
class Lit(Exp):
    value: Any
    type: ScalarType

    def __str__(self) -> str:
        return repr(self.value)


@attrs.frozen
class NatExp(Exp):
    """A size or index used as a value (e.g. the index of `generate`)."""

    nat: Nat
    type: ScalarType

    def __str__(self) -> str:
        return f"({self.nat})"


@attrs.frozen
class Idx(Exp):
    array: Exp
    index: Nat
    type: DataType

    def __str__(self) -> str:
        return f"{_atom(self.array)}[{self.index}]"


@attrs.frozen
class Proj(Exp):
    tuple_: Exp
    k: int
    type: DataType

    def __str__(self) -> str:
        return f"{_atom(self.tuple_)}.{self.k}"


@attrs.frozen
class View(Exp):
    """A layout view: `kind` names it (split, join, transpose, gather, slide, pad_clamp,
    pad_wrap, pad_mirror, pad_const, take, drop, zip, unzip, pair, as_vector, as_scalar,
    concat); `params` are its static parameters, `args` the viewed expressions."""

    kind: str
    params: tuple
    args: tuple
    type: DataType

    def __str__(self) -> str:
        ps = "".join(f" {p}" for p in self.params)
        return f"{self.kind}{ps}({', '.join(map(str, self.args))})"


@attrs.frozen
class Op(Exp):
    """A scalar (or element-wise vector) operation: a primitive name of the functional
    language (add, mul, select, cast, sqrt, user_fun, ...) with its static parameters."""

    name: str
    params: tuple
    args: tuple
    type: DataType

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


@attrs.frozen
class Load(Exp):
    """A resolved read: `leaf` names one array of a memory object's struct-of-arrays
    layout; `index` counts its elements (vectors count as one element)."""

    leaf: str
    index: Nat
    type: DataType
    space: AddressSpace

    def __str__(self) -> str:
        return f"{self.leaf}[{self.index}]"


def _atom(e: Exp) -> str:
    s = str(e)
    return s if isinstance(e, (Mem, Idx, Proj, Load)) else f"({s})"


# ------------------------------------------------------------------------------ acceptors


class Acc:
    type: DataType


@attrs.frozen
class MemAcc(Acc):
    mem: Mem

    @property
    def type(self) -> DataType:
        return self.mem.type

    def __str__(self) -> str:
        return self.mem.name


@attrs.frozen
class IdxAcc(Acc):
    array: Acc
    index: Nat
    type: DataType

    def __str__(self) -> str:
        return f"{self.array}[{self.index}]"


@attrs.frozen
class ProjAcc(Acc):
    tuple_: Acc
    k: int
    type: DataType

    def __str__(self) -> str:
        return f"{self.tuple_}.{self.k}"


@attrs.frozen
class ViewAcc(Acc):
    """Writing a value of `type` into `target` through the inverse of a layout: `join_acc n`
    (write an m.n array into an (m*n) target), `split_acc n`, `transpose_acc`,
    `scatter_acc`, `as_scalar_acc w` (write m.vec[w] into (m*w) scalars), `as_vector_acc w`."""

    kind: str
    params: tuple
    target: Acc
    type: DataType

    def __str__(self) -> str:
        ps = "".join(f" {p}" for p in self.params)
        return f"{self.kind}{ps}({self.target})"


@attrs.frozen
class Store(Acc):
    """A resolved write target (see Load)."""

    leaf: str
    index: Nat
    type: DataType
    space: AddressSpace

    def __str__(self) -> str:
        return f"{self.leaf}[{self.index}]"


# ------------------------------------------------------------------------------- commands


class Cmd:
    def __str__(self) -> str:
        from .printer import pseudo_code

        return pseudo_code(self)


@attrs.frozen(repr=False)
class Skip(Cmd):
    pass


@attrs.frozen(repr=False)
class Seq(Cmd):
    cmds: tuple


@attrs.frozen(repr=False)
class New(Cmd):
    mem: Mem
    body: Cmd


@attrs.frozen(repr=False)
class Assign(Cmd):
    acc: Acc
    value: Exp


@attrs.frozen(repr=False)
class For(Cmd):
    var: NatVar
    count: Nat
    body: Cmd
    unroll: bool = False


@attrs.frozen(repr=False)
class ParFor(Cmd):
    level: Level
    dim: int
    var: NatVar
    count: Nat
    body: Cmd
    # every item of the group runs the same number of iterations (ceil(count / local size)),
    # those past `count` only reaching the body's barriers (its other commands are guarded):
    # a map_local loop with barriers inside (imperative.passes.insert_barriers)
    uniform: bool = False


@attrs.frozen(repr=False)
class If(Cmd):
    cond: Exp
    then: Cmd
    orelse: Cmd = Skip()


@attrs.frozen(repr=False)
class Barrier(Cmd):
    local: bool = True
    global_: bool = False


# Operations that are device intrinsics, by the capability a device must offer for them
# (codegen_opencl.runtime.device_intrinsics says which a device has):
#   shuffle_down h w   lane i of a warp receives lane i + h's w (its own w past the warp's end)
#   mma_tf32 c a b     lane i's part of the warp's m16n8k8 product c + tf32(a) tf32(b) on fragments
#                      (functional.primitives, mma_sync): float4 c, float4 a, float2 b -> float4
#   async_copy x      x, copied into local memory asynchronously where the printer can (PTX cp.async;
#                      dpia.translate's double buffering), else as it is
INTRINSIC_OPS = {"shuffle_down": "warp_shuffle", "mma_tf32": "tensor_cores_tf32", "async_copy": "async_copy"}


def intrinsics_used(cmd: Cmd) -> frozenset[str]:
    """The capabilities (INTRINSIC_OPS' values) a command's operations need."""
    found: set[str] = set()

    def exp(e) -> None:
        if isinstance(e, Op):
            if e.name in INTRINSIC_OPS:
                found.add(INTRINSIC_OPS[e.name])
            for a in e.args:
                exp(a)

    for c in walk(cmd):
        if isinstance(c, Assign):
            exp(c.value)
        elif isinstance(c, If):
            exp(c.cond)
    return frozenset(found)


def sub_commands(cmd: Cmd) -> tuple:
    if isinstance(cmd, Seq):
        return cmd.cmds
    if isinstance(cmd, (New, For, ParFor)):
        return (cmd.body,)
    if isinstance(cmd, If):
        return (cmd.then, cmd.orelse)
    return ()


def mem_written(a: Acc) -> Mem | None:
    """The memory an acceptor writes into, through indices, projections and views (before
    view resolution); None for one that names no memory."""
    while not isinstance(a, MemAcc):
        a = getattr(a, "array", None) or getattr(a, "tuple_", None) or getattr(a, "target", None)
        if a is None:
            return None
    return a.mem


def walk(cmd: Cmd):
    """Every command, parents before children."""
    stack = [cmd]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(reversed(sub_commands(c)))


def seq(*cmds: Cmd) -> Cmd:
    flat: list[Cmd] = []
    for c in cmds:
        if isinstance(c, Seq):
            flat.extend(c.cmds)
        elif not isinstance(c, Skip):
            flat.append(c)
    if not flat:
        return Skip()
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


@attrs.frozen
class Program:
    """A translated program: its inputs, its output, the size variables it is polymorphic
    in, and the command that writes the output."""

    name: str
    inputs: tuple  # tuple[Mem, ...]
    output: Mem
    sizes: tuple  # tuple[NatVar, ...]
    body: Cmd
    temporaries: tuple = ()  # global temporaries, allocated by the host (see passes.hoist_globals)
    local_size: tuple = ()  # ((dim, size), ...) the launch must use: passes.privatise relies on it

    def __str__(self) -> str:
        from .printer import pseudo_code

        params = ", ".join(f"{m.name}: {m.type}" for m in self.inputs + self.temporaries)
        sizes = ", ".join(v.name for v in self.sizes)
        head = f"program {self.name}({sizes}{'; ' if sizes else ''}{params}) -> {self.output.name}: {self.output.type}"
        return head + " {\n" + pseudo_code(self.body, 1) + "\n}"


def leaves(t: DataType, prefix: tuple = ()) -> list[tuple[tuple, tuple, DataType]]:
    """Struct-of-arrays layout: (projection path, array sizes, element type) per leaf."""
    if isinstance(t, TupleType):
        out = []
        for k, e in enumerate(t.elems):
            out.extend(leaves(e, prefix + (k,)))
        return out
    if isinstance(t, ArrayType):
        return [(p, (t.size,) + dims, elem) for p, dims, elem in leaves(t.elem, prefix)]
    if isinstance(t, (ScalarType, VectorType)):
        return [(prefix, (), t)]
    raise TypeError(f"no memory layout for {t}")


def leaf_name(base: str, path: tuple) -> str:
    return base + "".join(f"_{k}" for k in path)
