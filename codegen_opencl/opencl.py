"""OpenCL C and plain C printers for resolved imperative programs.

Parallel loops print as loops over ids with a stride of the launch size, so a kernel is
correct for any launch configuration and the host plan only tunes speed:

    par_for[global 0] i < n   ->  for (int i = get_global_id(0); i < n; i += get_global_size(0))
    par_for[workgroup 0] ...  ->  ... get_group_id(0) ... get_num_groups(0)
    par_for[local 0] ...      ->  ... get_local_id(0) ... get_local_size(0)

Local arrays are hoisted to the kernel's scope (OpenCL requires it).

Vectors live in memory as their scalars.  A vector element i of a global or local leaf is
read and written through a vector pointer, `((global const float4*)a)[i]`, not `vload4(i, a)`:
both address `a + 4 i`, but only the pointer tells the OpenCL compiler the address is 16-byte
aligned, so it issues one wide load (NVIDIA's compiler splits `vload4` into four).  Private
arrays, which live in registers, use vloadN/vstoreN (float3 everywhere: its pointer steps by
16 bytes); a private tuple's component that is one vector (a pair of vector accumulators) is
a vector variable.  Buffers are aligned
by the OpenCL runtime (CL_DEVICE_MEM_BASE_ADDR_ALIGN); local and private arrays are declared
aligned to their vector size, local ones to at least 16 bytes so that neighbouring scalar
reads may be merged into vector reads too.

Vectors wider than 256 bits (float16, double8, int16) are passed to no function: a built-in
call, a conversion or a private vloadN/vstoreN on such a vector is printed as calls on its
256-bit pieces, `((float16)(sin(v.s01234567), sin(v.s89abcdef)))`, pieces found structurally
(a read of part of the vector, an operation on pieces), not by repeating the argument.  PoCL's
LLVM passes a 512-bit vector argument in registers a CPU without AVX-512 lacks: it crashes,
aborts or hangs on such a call (PoCL 3.0 on AMD znver3).  The pieces are what a device
without 512-bit registers computes anyway.
"""

from __future__ import annotations

import itertools
import math
import re

import attrs

from functional.errors import FunctionalError
from functional.nat import FloorDiv, Mod, Nat, evaluate, upper_bound
from functional.primitives import WARP_TYPES
from functional.types import AddressSpace, ArrayType, ScalarType, TupleType, VectorType
from imperative.ir import (
    Assign, Barrier, Cmd, Exp, For, If, Level, Lit, Load, Mem, MemAcc, NatExp, New, Op, ParFor, Program, Seq, Skip,
    Store, leaf_name, leaves, walk,
)

from .plan import global_items_cap, one_group_each


class EmitError(FunctionalError):
    """A program the printer cannot express (a non-constant private/local array size, ...)."""


LOCAL_ALIGN = 16  # bytes: local arrays start at float4 boundaries (wide reads of neighbouring scalars)
_C_SCALAR = {"f32": "float", "f64": "double", "i32": "int", "u32": "uint", "bool": "bool"}
_C_BUFFER = {**_C_SCALAR, "bool": "uchar"}  # OpenCL allows no bool in buffers; NumPy bools are bytes
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
          "eq": "==", "ne": "!=", "and": "&&", "or": "||"}
# Scalar primitives printed as the OpenCL (and C99 math.h) function of the same name.
_CALLS = frozenset({"sqrt", "exp", "log", "sin", "cos", "fma", "erf", "erfc", "tan", "asin", "acos", "atan", "sinh",
                    "cosh", "tanh", "exp2", "expm1", "log2", "log10", "log1p", "cbrt", "rsqrt", "floor", "ceil",
                    "trunc", "round", "pow", "fmod", "atan2", "hypot", "copysign"})
_BITWISE = {"bit_and": "&", "bit_or": "|", "bit_xor": "^"}
_IDS = {Level.GLOBAL: ("get_global_id", "get_global_size"), Level.WORKGROUP: ("get_group_id", "get_num_groups"),
        Level.LOCAL: ("get_local_id", "get_local_size")}


def c_type(t, opencl: bool = True) -> str:
    if isinstance(t, ScalarType):
        return "int" if t.name == "bool" and opencl else _C_SCALAR[t.name]
    if isinstance(t, VectorType):
        return f"{_C_SCALAR[t.elem.name]}{t.width}"
    raise EmitError(f"no C type for {t}")


def _three(t: VectorType) -> bool:
    """float3 pointers step by 16 bytes, three packed floats by 12: these keep vload3/vstore3."""
    return t.width.as_int() == 3


def _vector_bytes(t: VectorType) -> int:
    return (4 if _three(t) else t.width.as_int()) * t.elem.dtype.itemsize


WIDEST_CALL_BITS = 256  # the widest vector passed to a function (see the module's docstring)
# Operations printed as a function call (cast between vectors: convert_T; abs: fabs or abs;
# min, max, clamp: fmin/fmax or min/max); all act lane by lane.
_CALLED = _CALLS | {"abs", "min", "max", "clamp"}
# Operations that act lane by lane: a piece of the result is the operation on pieces.
_LANEWISE = _CALLED | set(_INFIX) | set(_BITWISE) | {"neg", "not", "select", "cast", "bit_not", "shl", "shr"}


def _bits(t) -> int:
    if not isinstance(t, VectorType):
        return 0
    elem = 4 if t.elem.name == "bool" else t.elem.dtype.itemsize  # OpenCL's vector booleans are ints
    return t.width.as_int() * elem * 8


def _too_wide(t) -> bool:
    return _bits(t) > WIDEST_CALL_BITS


@attrs.frozen
class _Piece(Exp):
    """Lanes [k * p, (k + 1) * p) of a vector expression, p the lanes of `type`: printed as a
    swizzle of the expression (`.s4567`) where Printer.piece finds no structural piece."""

    of: Exp
    k: int
    type: VectorType

    def swizzle(self) -> str:
        p = self.type.width.as_int()
        return ".s" + "".join(f"{lane:x}" for lane in range(self.k * p, (self.k + 1) * p))


def _piece_lanes(*types) -> int:
    """The lanes of the pieces that keep every vector of `types` (of one width) within
    WIDEST_CALL_BITS."""
    return min(WIDEST_CALL_BITS // (_bits(t) // t.width.as_int()) for t in types if isinstance(t, VectorType))


def _piece_type(t: VectorType, lanes: int) -> VectorType:
    return attrs.evolve(t, width=Nat.const(lanes))


def _is_float(t) -> bool:
    return (t.elem if isinstance(t, VectorType) else t).is_float


def _lit(v: Lit) -> str:
    if isinstance(v.type, VectorType):  # a constant vectorised function: every lane the value
        return f"(({c_type(v.type)})({_lit(attrs.evolve(v, type=v.type.elem))}))"
    x = v.value
    if isinstance(x, bool):
        return "1" if x else "0"
    if v.type.is_float:
        if math.isinf(x):
            return "INFINITY" if x > 0 else "(-INFINITY)"
        if math.isnan(x):
            return "NAN"
        text = repr(float(x)) + ("f" if v.type.name == "f32" else "")
        return f"({text})" if text.startswith("-") else text  # `-(-0.75f)`, never `--0.75f`
    k = int(x)
    if v.type.name == "u32":
        return f"{k}u"
    if k == -2**31:  # `-2147483648` is the negation of a long constant in C
        return "(-2147483647 - 1)"
    return f"({k})" if k < 0 else f"{k}"


class _Printer:
    def __init__(self, opencl: bool, local_size: dict | None = None, index: str = "int"):
        self.opencl = opencl
        self.index = index  # the C type of loop variables (see index_type)
        self.local_size = local_size or {}  # the program's launch contract: {dim: items}
        self.user_funs: dict[str, str] = {}
        self.vector_bytes: dict[str, int] = {}  # leaf -> the widest vector read or written through it
        self.vector_leaves: set[str] = set()  # private leaves that are one vector: declared as vector variables
        self.one_item_each = False  # the kernel being printed has no work-groups (see emit)
        self.exact_groups: dict = {}  # dimension -> the launch's work-groups (a Nat), where exact (see emit)
        self.loop_vars: frozenset = frozenset()  # the names of the kernel's loop variables (see emit)
        self.group_loops = False  # every map_workgroup a loop over groups (see emit)
        self.async_copies = False  # the kernel being printed issues cp.async copies: its barriers wait for them first

    def exp(self, e: Exp) -> str:
        if isinstance(e, Lit):
            return _lit(e)
        if isinstance(e, NatExp):
            return f"({e.nat.to_c()})"
        if isinstance(e, Mem):
            return e.name
        if isinstance(e, Load):
            if e.leaf in self.vector_leaves:
                return self._vector_leaf(e)
            if isinstance(e.type, VectorType) and self._private(e) and _too_wide(e.type):
                return self._joined(e)
            if isinstance(e.type, VectorType) and (_three(e.type) or self._private(e)):
                return f"vload{e.type.width.as_int()}({e.index.to_c()}, {e.leaf})"
            if isinstance(e.type, VectorType):
                return f"{self.vector_pointer(e, const=True)}[{e.index.to_c()}]"
            return f"{e.leaf}[{e.index.to_c()}]"
        if isinstance(e, Op):
            return self.op(e)
        if isinstance(e, _Piece):
            return self._atom(e.of) + e.swizzle()
        raise EmitError(f"cannot print {e!r}: resolve views first")

    def _atom(self, e: Exp) -> str:
        text = self.exp(e)
        simple = isinstance(e, (Mem, _Piece)) or (isinstance(e, Load) and e.leaf in self.vector_leaves)
        return text if simple else f"({text})"

    def _joined(self, e: Exp) -> str:
        """`e`, a vector too wide to pass to a function, as the vector of its pieces."""
        lanes = _piece_lanes(e.type, *(a.type for a in getattr(e, "args", ())))
        pieces = ", ".join(self.exp(self.piece(e, k, lanes)) for k in range(e.type.width.as_int() // lanes))
        return f"(({c_type(e.type, self.opencl)})({pieces}))"

    def piece(self, e: Exp, k: int, lanes: int) -> Exp:
        """Piece `k` (lanes `lanes` k to `lanes` (k + 1) - 1) of `e`; a scalar is its own piece
        (an operand broadcast to every lane)."""
        if not isinstance(e.type, VectorType):
            return e
        t, count = _piece_type(e.type, lanes), e.type.width.as_int() // lanes
        if isinstance(e, Lit):  # every lane the value
            return attrs.evolve(e, type=t)
        if isinstance(e, Load) and e.leaf not in self.vector_leaves:
            return attrs.evolve(e, type=t, index=e.index * count + k)  # vector i: pieces count i + k
        if isinstance(e, Op) and e.name in _LANEWISE:
            params = (t, *e.params[1:]) if e.name == "cast" else e.params  # a cast names its result type
            args = tuple(self.piece(a, k, lanes) for a in e.args)
            if e.name != "cast" and not any(isinstance(a.type, VectorType) for a in args):
                # every operand broadcast (a constant function vectorised): a call on them gives one scalar,
                # which the piece broadcasts (in a vector literal a scalar would be one lane)
                return Op("cast", (t,), (attrs.evolve(e, args=args, type=e.type.elem),), t)
            return attrs.evolve(e, args=args, type=t, params=params)
        if isinstance(e, Op) and e.name == "vec" and not any(isinstance(a.type, VectorType) for a in e.args):
            return attrs.evolve(e, args=e.args[k * lanes:(k + 1) * lanes], type=t)
        return _Piece(e, k, t)

    def op(self, e: Op) -> str:
        called = e.name in _CALLED or (e.name == "cast" and isinstance(e.args[0].type, VectorType))
        if called and self.opencl and any(_too_wide(x.type) for x in (e, *e.args)):
            return self._joined(e)
        a = [self.exp(x) for x in e.args]
        name = e.name
        if name in _INFIX:
            return f"({a[0]} {_INFIX[name]} {a[1]})"
        if name == "neg":  # operands never print with a leading minus (negative literals are parenthesised)
            return f"(-{a[0]})"
        if name == "not":
            return f"(!{a[0]})"
        if name == "select":
            return f"({a[0]} ? {a[1]} : {a[2]})"
        if name == "cast":  # a vector converts lane-wise (a C cast between vector types does not build)
            if isinstance(e.type, VectorType) and isinstance(e.args[0].type, VectorType):
                return f"convert_{c_type(e.type, self.opencl)}({a[0]})"
            return f"(({c_type(e.params[0], self.opencl)}){a[0]})"  # a scalar cast to a vector: every lane
        if name == "abs":  # OpenCL's integer abs returns the unsigned type
            if _is_float(e.type):
                return f"fabs({a[0]})"
            if isinstance(e.type, VectorType):
                return f"convert_{c_type(e.type, self.opencl)}(abs({a[0]}))"
            return f"(({c_type(e.type, self.opencl)})abs({a[0]}))"
        if name in ("min", "max"):  # floats: fmin/fmax, IEEE minNum/maxNum (a NaN operand gives the other)
            return f"{'f' + name if _is_float(e.type) else name}({a[0]}, {a[1]})"
        if name == "clamp":  # not OpenCL's clamp: that one is undefined when lo > hi
            lo, hi = ("fmax", "fmin") if _is_float(e.type) else ("max", "min")
            return f"{hi}({lo}({a[0]}, {a[1]}), {a[2]})"
        if name == "rsqrt" and not self.opencl:
            return f"(1 / sqrt({a[0]}))"
        if name == "erfc" and self.opencl and _float32s(e.type):
            helper, definition = _branch_free_erfc(e.type)
            self.user_funs[helper] = definition
            return f"{helper}({a[0]})"
        if name in _CALLS:
            return f"{name}({', '.join(a)})"
        if name in _BITWISE:
            return f"({a[0]} {_BITWISE[name]} {a[1]})"
        if name == "bit_not":
            return f"(~{a[0]})"
        if name in ("shl", "shr"):  # the count taken modulo 32, as OpenCL does and as C leaves undefined
            count = f"({a[1]} & 31)"
            if name == "shr":
                return f"({a[0]} >> {count})"
            if e.type.name == "i32":  # shifted as unsigned: bits shifted out of an int are lost, never undefined
                unsigned = "uint" if self.opencl else "unsigned int"
                return f"((int)(({unsigned}){a[0]} << {count}))"
            return f"({a[0]} << {count})"
        if name == "lane":
            k = e.params[0].as_int()
            if k is not None:
                return f"{a[0]}.s{k:x}"
            return f"((private {c_type(e.type, self.opencl)}*)&{a[0]})[{e.params[0].to_c()}]"
        if name == "local_id":
            return f"get_local_id({e.params[0]})"
        if name == "shuffle_down":
            helper, definition = _shuffle_down(e.type)
            self.user_funs[helper] = definition
            return f"{helper}({a[0]}, {e.params[0]})"
        if name == "tf32":
            helper, definition = _tf32(e.type, self.opencl)
            self.user_funs[helper] = definition
            return f"{helper}({a[0]})"
        if name == "mma_tf32":
            if not self.opencl:
                raise EmitError("mma_tf32 (a warp's tensor cores) has no C form: translate for a target without them")
            self.user_funs["dpia_mma_tf32"] = _MMA_TF32
            return f"dpia_mma_tf32({', '.join(a)})"
        if name == "vec":
            return f"(({c_type(e.type, self.opencl)})({', '.join(a)}))"
        if name == "async_copy":  # where not issued as cp.async (see _async_copy): the value as it is
            return a[0]
        if name == "user_fun":
            uf = e.params[0]
            params = ", ".join(f"{c_type(t, self.opencl)} {n}" for n, t in uf.params)
            self.user_funs[uf.name] = f"{c_type(uf.result, self.opencl)} {uf.name}({params}) {{\n  {uf.c_body}\n}}"
            return f"{uf.name}({', '.join(a)})"
        raise EmitError(f"no C form for the operation {name}")

    def _private(self, access) -> bool:
        """A private array read or written as vectors: through vloadN/vstoreN, whose alignment
        a register array does not need (the compiler keeps it in registers either way), and
        which Oclgrind's uninitialised-value check follows (a vector pointer cast of a private
        array crashes it)."""
        return self.opencl and access.space == AddressSpace.PRIVATE

    def _vector_leaf(self, access) -> str:
        """An access to a private leaf declared as one vector variable (see declare): the
        vector itself, or one of its lanes."""
        if isinstance(access.type, VectorType):
            if access.index.to_c() != "0":
                raise EmitError(f"vector {access.leaf} accessed at vector {access.index.to_c()}")
            return access.leaf
        return f"((private {c_type(access.type, self.opencl)}*)&{access.leaf})[{access.index.to_c()}]"

    def _async_copy(self, c: Assign) -> str:
        """`dst := src` as a cp.async (see _async_copy), zero-filling where a guarded copy's guard fails."""
        size, src = _async_copy(c), _async_source(c.value)
        guard = _async_guard(c.value)
        if guard is None:
            self.user_funs[f"dpia_cp_async{size}"] = _cp_async(size)
            return f"dpia_cp_async{size}({self.address(c.acc)}, {self.address(src)});"
        self.user_funs[f"dpia_cp_async{size}_or_zero"] = _cp_async_zero_fill(size)
        return f"dpia_cp_async{size}_or_zero({self.address(c.acc)}, {self.address(src)}, {src.leaf}, {self.exp(guard)});"

    def address(self, access) -> str:
        """The address of a Load or Store of local or global memory (an asynchronous copy's operands)."""
        if isinstance(access.type, VectorType):
            return f"({self.vector_pointer(access, const=isinstance(access, Load))} + {access.index.to_c()})"
        return f"({access.leaf} + {access.index.to_c()})"

    def vector_pointer(self, access, const: bool) -> str:
        """`((global const float4*)leaf)`: the leaf seen as an array of vectors."""
        space = f"{access.space.value} " if self.opencl else ""
        return f"(({space}{'const ' if const else ''}{c_type(access.type, self.opencl)}*){access.leaf})"

    def store(self, s, value: str) -> str:
        if isinstance(s, MemAcc):
            return f"{s.mem.name} = {value};"
        if isinstance(s, Store):
            if s.leaf in self.vector_leaves:
                return f"{self._vector_leaf(s)} = {value};"
            if isinstance(s.type, VectorType) and (_three(s.type) or self._private(s)):
                return f"vstore{s.type.width.as_int()}({value}, {s.index.to_c()}, {s.leaf});"
            if isinstance(s.type, VectorType):
                return f"{self.vector_pointer(s, const=False)}[{s.index.to_c()}] = {value};"
            return f"{s.leaf}[{s.index.to_c()}] = {value};"
        raise EmitError(f"cannot print the target {s!r}: resolve views first")

    def _split_store(self, c: Assign, depth: int, hoisted: list) -> list[str]:
        """A private store of a vector too wide for vstoreN: the value held in a variable
        (a piece of the value may read what the store of another overwrites), stored as pieces."""
        pad = "  " * depth
        value = self.exp(c.value)
        seen = set(re.findall(r"[A-Za-z_]\w*", f"{value} {c.acc.leaf} {c.acc.index.to_c()}"))
        name = next(f"wide{k}" for k in itertools.count() if f"wide{k}" not in seen)
        lanes = _piece_lanes(c.acc.type)
        held, t, count = Mem(name, c.acc.type, AddressSpace.PRIVATE), _piece_type(c.acc.type, lanes), \
            c.acc.type.width.as_int() // lanes
        stores = [Assign(attrs.evolve(c.acc, type=t, index=c.acc.index * count + k), _Piece(held, k, t))
                  for k in range(count)]
        head = f"{c_type(c.acc.type, self.opencl)} {name} = {value};"
        return [pad + "{", pad + "  " + head] + [ln for st in stores for ln in self.cmd(st, depth + 1, hoisted)] + \
            [pad + "}"]

    def cmd(self, c: Cmd, depth: int, hoisted: list) -> list[str]:
        pad = "  " * depth
        if isinstance(c, Skip):
            return []
        if isinstance(c, Seq):
            return [line for x in c.cmds for line in self.cmd(x, depth, hoisted)]
        if isinstance(c, Assign):
            if self.opencl and _async_copy(c):
                return [pad + self._async_copy(c)]
            if isinstance(c.acc, Store) and self._private(c.acc) and _too_wide(c.acc.type) \
                    and c.acc.leaf not in self.vector_leaves:
                return self._split_store(c, depth, hoisted)
            return [pad + self.store(c.acc, self.exp(c.value))]
        if isinstance(c, New):
            decl = self.declare(c.mem)
            if c.mem.space is AddressSpace.LOCAL:
                if decl not in hoisted:  # copies of one allocation (an unrolled loop's bodies) share it
                    hoisted.append(decl)
                return self.cmd(c.body, depth, hoisted)
            if c.mem.space is AddressSpace.GLOBAL:
                raise EmitError(f"global temporary {c.mem.name}: not supported by this printer yet")
            decls, body = [decl], c.body
            while isinstance(body, New) and body.mem.space is AddressSpace.PRIVATE:  # one block for a run of them
                decls.append(self.declare(body.mem))
                body = body.body
            return [pad + "{"] + [pad + "  " + d for d in decls] + self.cmd(body, depth + 1, hoisted) + [pad + "}"]
        if isinstance(c, For):
            v, n = c.var.name, c.count.to_c()
            head = f"for ({self.index} {v} = 0; {v} < {n}; {v} += 1) {{"
            pragma = [pad + "#pragma unroll"] if c.unroll else []
            return pragma + [pad + head] + self.cmd(c.body, depth + 1, hoisted) + [pad + "}"]
        if isinstance(c, ParFor):
            if not self.opencl:
                raise EmitError("parallel loops need the OpenCL printer")
            get_id, get_size = _IDS[c.level]
            v, n = c.var.name, c.count.to_c()
            count = c.count.as_int()
            if c.level is Level.LOCAL and count is not None and self.local_size.get(c.dim) == count:
                # the launch has exactly `count` items in this dimension: one iteration each (a
                # symbolic count is never assumed: the launch's size is not known to match it)
                return [pad + "{", pad + f"  const {self.index} {v} = {get_id}({c.dim});"] + \
                    self.cmd(c.body, depth + 1, hoisted) + [pad + "}"]
            if c.level is Level.WORKGROUP and not self.group_loops and one_group_each(c.count, c.dim, self.loop_vars):
                # a group per element (the launch's groups are exactly this count where every
                # map_workgroup of the dimension has it: no guard)
                head = [pad + "{", pad + f"  const {self.index} {v} = {get_id}({c.dim});"]
                if self.exact_groups.get(c.dim) == c.count:
                    return head + self.cmd(c.body, depth + 1, hoisted) + [pad + "}"]
                return head + [pad + f"  if ({v} < {n}) {{"] + self.cmd(c.body, depth + 2, hoisted) + \
                    [pad + "  }", pad + "}"]
            if c.level is Level.GLOBAL and self.one_item_each and count is not None \
                    and count <= global_items_cap(c.dim):
                # the launch gives at least `count` items (runtime.launch_plan): no loop, which
                # lets a CPU device vectorise across items (PoCL: 4-6x on a 2D stencil)
                return [pad + "{", pad + f"  const {self.index} {v} = {get_id}({c.dim});",
                        pad + f"  if ({v} < {n}) {{"] + self.cmd(c.body, depth + 2, hoisted) + [pad + "  }", pad + "}"]
            # the stride: the launch contract's local size where it fixes this dimension, so the
            # compiler knows the trip count (it unrolls the loop and issues its loads together:
            # a staged tile's copy, RESULTS.md session 29), else the launch's, read at run time
            stride = str(self.local_size[c.dim]) if c.level is Level.LOCAL and c.dim in self.local_size \
                else f"{get_size}({c.dim})"
            if c.uniform:  # every item the same iterations, so all reach the body's barriers (it guards the rest)
                base = f"{v}_base"
                head = f"for ({self.index} {base} = 0; {base} < {n}; {base} += {stride}) {{"
                return [pad + head, pad + f"  const {self.index} {v} = {base} + {get_id}({c.dim});"] + \
                    self.cmd(c.body, depth + 1, hoisted) + [pad + "}"]
            head = f"for ({self.index} {v} = {get_id}({c.dim}); {v} < {n}; {v} += {stride}) {{"
            return [pad + head] + self.cmd(c.body, depth + 1, hoisted) + [pad + "}"]
        if isinstance(c, If):
            out = [pad + f"if ({self.exp(c.cond)}) {{"] + self.cmd(c.then, depth + 1, hoisted)
            if not isinstance(c.orelse, Skip):
                out += [pad + "} else {"] + self.cmd(c.orelse, depth + 1, hoisted)
            return out + [pad + "}"]
        if isinstance(c, Barrier):
            flags = " | ".join(f for f, on in (("CLK_LOCAL_MEM_FENCE", c.local), ("CLK_GLOBAL_MEM_FENCE", c.global_)) if on)
            wait = [pad + 'asm volatile("cp.async.wait_all;" ::: "memory");'] if self.async_copies else []
            return wait + [pad + f"barrier({flags});"]
        raise EmitError(f"cannot print {c!r}")

    def declare(self, m: Mem) -> str:
        prefix = "local " if m.space is AddressSpace.LOCAL else ""
        if isinstance(m.type, (ScalarType, VectorType)):
            return f"{prefix}{c_type(m.type, self.opencl)} {m.name};"
        parts = []
        for proj, dims, elem in leaves(m.type):
            if (self.opencl and m.space is AddressSpace.PRIVATE and not dims and isinstance(elem, VectorType)
                    and not _three(elem)):
                # a tuple's vector component (a tuple of vector accumulators): a vector variable, which
                # PoCL keeps in registers; as an array of its scalars read by vloadN it ran 3x slower
                self.vector_leaves.add(leaf_name(m.name, proj))
                parts.append(f"{c_type(elem, self.opencl)} {leaf_name(m.name, proj)};")
                continue
            count = Nat.const(1)
            for d in dims:
                count = count * d
            align = LOCAL_ALIGN if m.space is AddressSpace.LOCAL else 0
            align = max(align, self.vector_bytes.get(leaf_name(m.name, proj), 0))
            if isinstance(elem, VectorType):  # vectors live as scalars, read through vector pointers
                align = max(align, _vector_bytes(elem))
                count, elem = count * elem.width, elem.elem
            k = count.as_int()
            if k is None:
                raise EmitError(f"{m.space.value} array {m.name}: size {count} must be a constant")
            ctype = _C_BUFFER[elem.name] if self.opencl else c_type(elem, self.opencl)
            aligned = f" __attribute__((aligned({align})))" if align and self.opencl else ""
            parts.append(f"{prefix}{ctype} {leaf_name(m.name, proj)}[{k}]{aligned};")
        return " ".join(parts)


# ------------------------------------------------------------------------ index width
#
# Loop variables, size parameters and so every index expression (C promotes `int * long` to
# long) are `int` unless some index can exceed INDEX_LIMIT, then `long` throughout the
# program: a 65536x65536 matrix has element offsets up to 2^32 - 1.  The decision is made
# from the sizes' bounds: constant sizes (dpia.compile fixes the sizes of a high-level
# program) and size variables with an upper bound (`fl.nat("N", hi=...)`) decide it at
# emission; a program over unbounded size variables is emitted with `int`, and the runtime
# re-emits it with `long` at launch when the actual sizes need it (runtime.Kernel).

INDEX_LIMIT = 2**31 - 1  # the largest value of a 32-bit OpenCL int
INDEX_TYPES = ("int", "long")


# Asynchronous copies (`async_copy`, from dpia.translate's double buffering where the device offers
# them): a global read of 4, 8 or 16 bytes stored as it is into local memory is issued as PTX
# cp.async (sm_80 and later), which copies without passing through the item's registers, so the item
# goes on to the products while the copy is in flight; each barrier of such a kernel first waits for
# the item's copies (cp.async.wait_all), so what the barrier publishes has arrived.  A local address
# is passed as the 32-bit shared-window offset `(uint)(size_t)p` (../shared/reference/gpu.md).
_ASYNC_BYTES = (4, 8, 16)


def _async_source(v: Exp) -> Load | None:
    """The global read an asynchronous copy's value is, as a Load of its own type: `async_copy
    x[i]`, or lane k of `async_copy x[i]` (a vector read whose lanes are stored apart, e.g. a
    tile transposed as it is staged: x's scalar element w i + k), or the read of `async_copy
    (c ? x[i] : 0)` (a padded or guarded copy: see _async_guard), else None."""
    lane = None
    if isinstance(v, Op) and v.name == "lane" and v.params[0].as_int() is not None:
        lane, v = v.params[0].as_int(), v.args[0]
    if not (isinstance(v, Op) and v.name == "async_copy"):
        return None
    src = v.args[0]
    if lane is None and _async_guard(v) is not None:
        return src.args[1]
    if not isinstance(src, Load):
        return None
    if lane is None:
        return src
    if not isinstance(src.type, VectorType) or _three(src.type):
        return None
    return Load(src.leaf, src.index * src.type.width + lane, src.type.elem, src.space)


def _async_guard(v: Exp) -> Exp | None:
    """c of `async_copy (c ? x[i] : 0)` with x[i] a scalar read: copied as cp.async with a source
    size of 0 where c is false, which fills the destination with zeros (PTX's src-size), else None."""
    if not (isinstance(v, Op) and v.name == "async_copy"):
        return None
    sel = v.args[0]
    if not (isinstance(sel, Op) and sel.name == "select" and isinstance(sel.args[1], Load)
            and isinstance(sel.args[2], Lit) and sel.args[2].value == 0 and not isinstance(sel.type, VectorType)):
        return None
    return sel.args[0]


def _async_copy(c: Assign) -> int:
    """The bytes of an assignment the printer issues as cp.async, else 0."""
    src, dst = _async_source(c.value), c.acc
    if src is None or not isinstance(dst, Store):
        return 0
    if src.space is not AddressSpace.GLOBAL or dst.space is not AddressSpace.LOCAL or src.type != dst.type:
        return 0
    t = dst.type
    lanes = t.width.as_int() if isinstance(t, VectorType) else 1
    scalar = t.elem if isinstance(t, VectorType) else t
    size = lanes * _SCALAR_BYTES.get(getattr(scalar, "name", ""), 0) if lanes is not None else 0
    return size if size in _ASYNC_BYTES and not (isinstance(t, VectorType) and _three(t)) else 0


_SCALAR_BYTES = {"f32": 4, "i32": 4, "u32": 4, "f64": 8, "i64": 8, "u64": 8, "f16": 2, "i16": 2, "u16": 2, "i8": 1,
                 "u8": 1}


def _cp_async(size: int) -> str:
    """The helper issuing one cp.async of `size` bytes (.cg, past L1, where it may: 16 bytes)."""
    cache = "cg" if size == 16 else "ca"
    return "\n".join([
        f"inline void dpia_cp_async{size}(local void* dst, global const void* src) {{",
        f'  asm volatile("cp.async.{cache}.shared.global [%0], [%1], {size};" :: "r"((uint)(size_t)dst), "l"(src) '
        ': "memory");',
        "}"])


def _cp_async_zero_fill(size: int) -> str:
    """The helper issuing one cp.async of `size` bytes that copies where `keep` holds and writes
    zeros elsewhere (a source size of 0: nothing is read; the base address `safe` is given then)."""
    cache = "cg" if size == 16 else "ca"
    return "\n".join([
        f"inline void dpia_cp_async{size}_or_zero(local void* dst, global const void* src, global const void* safe, "
        "int keep) {",
        f'  asm volatile("cp.async.{cache}.shared.global [%0], [%1], {size}, %2;" :: "r"((uint)(size_t)dst), '
        f'"l"(keep ? src : safe), "r"(keep ? {size} : 0) : "memory");',
        "}"])


# Device intrinsics, as inline PTX (NVIDIA's OpenCL compiler accepts `asm volatile`; the runtime
# builds a program that uses them only for a device that offers them, runtime.check_intrinsics).
# shfl.sync.down: lane i receives lane i + delta's value (its own past lane 31); every lane of the
# warp takes part (member mask 0xffffffff), which also synchronises them.
_PTX_INTRINSICS = {"shuffle_down": "shfl.sync.down.b32"}
# functional.primitives.WARP_TYPES: (C type, to the shuffled bits, back)
_SHUFFLE_TYPES = {"f32": ("float", "as_uint", "as_float"), "i32": ("int", "as_uint", "as_int"),
                  "u32": ("uint", "", "")}
assert set(_SHUFFLE_TYPES) == set(WARP_TYPES), "a shuffled type without its C form"


def _shuffle_down(t) -> tuple[str, str]:
    """(helper name, its definition) of a warp shuffle down of a 32-bit scalar."""
    if not isinstance(t, ScalarType) or t.name not in _SHUFFLE_TYPES:
        raise EmitError(f"a warp shuffle moves 32-bit scalars, not {t}")
    ctype, to_bits, from_bits = _SHUFFLE_TYPES[t.name]
    name = f"dpia_shuffle_down_{t.name}"
    asm = _PTX_INTRINSICS["shuffle_down"] + " %0, %1, %2, 0x1f, 0xffffffff;"
    return name, (f"{ctype} {name}({ctype} v, int delta) {{\n  uint r;\n"
                  f"  asm volatile(\"{asm}\" : \"=r\"(r) : \"r\"({to_bits}(v)), \"r\"(delta));\n"
                  f"  return {from_bits}(r);\n}}")


def _tf32(t, opencl: bool) -> tuple[str, str]:
    """(helper name, its definition) of float32 values (a scalar or a vector) rounded to TF32: the
    bits plus half of the dropped 13 bits' range, the 13 bits cleared (to nearest, ties away from
    zero, as PTX cvt.rna.tf32.f32; a carry into the exponent gives the next binade or infinity),
    NaN and infinities unchanged (functional.primitives.tf32_round)."""
    ctype = c_type(t, opencl)
    name = f"dpia_tf32_{ctype.replace(' ', '_')}"
    if not opencl:
        return name, (f"static float {name}(float x) {{\n  union {{ float f; unsigned int u; }} v;\n"
                      f"  if (!isfinite(x)) return x;\n  v.f = x;\n  v.u = (v.u + 0x1000u) & 0xffffe000u;\n"
                      f"  return v.f;\n}}")
    bits = ctype.replace("float", "uint")
    return name, (f"{ctype} {name}({ctype} x) {{\n"
                  f"  return select(x, as_{ctype}((as_{bits}(x) + 0x1000u) & 0xffffe000u), isfinite(x));\n}}")


# A warp's m16n8k8 TF32 product on its lanes' fragments (functional.primitives, mma_sync): each lane
# passes its own four elements of C, four of A and two of B, rounded to TF32, and gets its four
# elements of D.  The tensor cores read an operand's top 19 bits (they truncate: the float32 bits as
# they are give twice cvt.rna's error, benchmarks/RESULTS.md session 32), so half a TF32 ulp (0x1000)
# added to the bits first makes that truncation round to nearest, ties away from zero: cvt.rna's
# result, by one integer add instead of a conversion (the conversions cost 15 % of a hand-written
# kernel's time; infinities and NaNs keep their top bits).  All 32 lanes of the warp run it together
# (.sync.aligned), as the translation's lane loop arranges.  Not `asm volatile`: nothing here touches
# memory, and a volatile asm keeps NVIDIA's compiler from sharing the fragment reads of a k-step's
# tiles across its products (H100, 4 warps of 4 x 8 tiles: 192 local loads a step, 32 without
# volatile; benchmarks/RESULTS.md).
_MMA_TF32 = "\n".join([
    "float4 dpia_mma_tf32(float4 c, float4 a, float2 b) {",
    "  float d0 = c.s0, d1 = c.s1, d2 = c.s2, d3 = c.s3;",
    "  const uint half_ulp = 0x1000u;",
    "  uint a0 = as_uint(a.s0) + half_ulp, a1 = as_uint(a.s1) + half_ulp, a2 = as_uint(a.s2) + half_ulp,",
    "       a3 = as_uint(a.s3) + half_ulp, b0 = as_uint(b.s0) + half_ulp, b1 = as_uint(b.s1) + half_ulp;",
    '  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "',
    '      "{%0, %1, %2, %3};" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)',
    '      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));',
    "  return (float4)(d0, d1, d2, d3);",
    "}"])


# erfc of float32 values, branch-free: NVIDIA's OpenCL erfc branches on |x| (0.55, 10), so a warp
# whose lanes fall on both sides runs both paths (Black-Scholes 2^24 on the H200: 15 branches per
# element; benchmarks/RESULTS.md, session 18), and PoCL's is a scalar library call a vector
# loop cannot hold.  With a = |x| and q = (a - 2) / (a + 2) in [-1, 0.668] for a in [0, 10.0546]:
#     erfc(a) = P(q) exp(-a^2) / (1 + 2a),   erfc(-a) = 2 - erfc(a),   erfc(a) = 0 past 10.0546
# (below the smallest subnormal), P of degree 9 fitted to (1 + 2a) exp(a^2) erfc(a) in relative
# error (benchmarks/erfc_fit.py derives the coefficients and measures the error: at most 3.8 ulp
# over [-10, 10.06] with a correctly rounded exp; OpenCL allows erfc 16 ulp and exp 3 ulp).
# exp(-a^2) is exp(-s) (1 - e) with s = a * a rounded and e = fma(a, a, -s) its rounding error.
ERFC_LIMIT = 10.0546
ERFC_COEFFICIENTS = ("-0x1.a49672p-12", "-0x1.42a72ap-10", "0x1.585bf0p-10", "0x1.1addf4p-7", "-0x1.081a20p-7",
                     "-0x1.bc0b0ep-5", "0x1.4ffc3cp-3", "-0x1.540846p-3", "-0x1.7bf616p-4", "0x1.46e80ep+0")


def _float32s(t) -> bool:
    return (isinstance(t, ScalarType) and t.name == "f32") or (isinstance(t, VectorType) and t.elem.name == "f32")


def _branch_free_erfc(t) -> tuple[str, str]:
    """(helper name, its definition) of erfc on float32 values `t` (a scalar or a vector)."""
    ctype = c_type(t)

    def k(value: str) -> str:  # a constant of the argument's type (OpenCL broadcasts no scalar into fma)
        return f"(({ctype})({value}f))"

    horner = "\n".join(f"  p = fma(p, q, {k(c)});" for c in ERFC_COEFFICIENTS[1:])
    name = f"dpia_erfc_{ctype}"
    return name, (f"{ctype} {name}({ctype} x) {{\n"
                  f"  {ctype} a = fabs(x);\n"
                  f"  {ctype} r = {k('1.0')} / (a + {k('2.0')});\n"
                  f"  {ctype} q = (a - {k('2.0')}) * r;\n"
                  f"  q = fma(r, fma(q, -a, fma(q + {k('1.0')}, {k('-2.0')}, a)), q);  /* (a - 2) / (a + 2), refined */\n"
                  f"  {ctype} p = {k(ERFC_COEFFICIENTS[0])};\n{horner}\n"
                  f"  {ctype} d = fma({k('2.0')}, a, {k('1.0')});\n"
                  f"  {ctype} inv = {k('1.0')} / d;\n"
                  f"  {ctype} y = p * inv;\n"
                  f"  y = fma(fma(-y, d, p), inv, y);  /* p / (1 + 2a), refined */\n"
                  f"  {ctype} s = a * a;\n"
                  f"  {ctype} e = exp(-s);\n"
                  f"  y = y * fma(e, -fma(a, a, -s), e);  /* exp(-a^2) = exp(-s) (1 - (a^2 - s)) */\n"
                  f"  y = select(y, {k('0.0')}, a > {k(str(ERFC_LIMIT))});  /* NaN stays NaN */\n"
                  f"  return select(y, {k('2.0')} - y, x < {k('0.0')});\n}}")


def _exact_groups(body: Cmd, loop_vars: frozenset) -> dict:
    """{dimension: count} where the launch gives exactly `count` work-groups: every
    map_workgroup of the dimension gets a group per element (plan.one_group_each) and has
    this one count (runtime.launch_plan launches the largest), a positive constant (a
    launch has a group even where a symbolic count is 0)."""
    counts: dict[int, set] = {}
    for c in walk(body):
        if isinstance(c, ParFor) and c.level is Level.WORKGROUP:
            counts.setdefault(c.dim, set()).add(c.count)
    single = {d: next(iter(ns)) for d, ns in counts.items() if len(ns) == 1}
    return {d: n for d, n in single.items() if (n.as_int() or 0) >= 1 and one_group_each(n, d, loop_vars)}


def _expressions(body: Cmd):
    """Every expression a command evaluates (assigned values and conditions), with all their parts."""
    def parts(e):
        yield e
        for a in getattr(e, "args", ()):
            if a is not None:
                yield from parts(a)

    for c in walk(body):
        if isinstance(c, Assign):
            yield from parts(c.value)
        elif isinstance(c, If):
            yield from parts(c.cond)


def _accesses(body: Cmd):
    """Every Load and Store of a command."""
    for c in walk(body):
        if isinstance(c, Assign) and isinstance(c.acc, Store):
            yield c.acc
    yield from (e for e in _expressions(body) if isinstance(e, Load))


def index_extents(p: Program) -> list[tuple[str, Nat]]:
    """(what, extent) for every quantity an index of `p` reaches up to (exclusive): each
    buffer's and local or private array's element count, each loop's count, each access's
    index + 1."""
    out: list[tuple[str, Nat]] = []
    mems = [*p.inputs, p.output, *p.temporaries] + [c.mem for c in walk(p.body) if isinstance(c, New)]
    for m in mems:
        for proj, dims, elem in leaves(m.type):
            count = Nat.const(1)
            for d in dims:
                count = count * d
            if isinstance(elem, VectorType):
                count = count * elem.width
            out.append((f"the array {leaf_name(m.name, proj)}", count))
    for c in walk(p.body):
        if isinstance(c, (For, ParFor)):
            out.append((f"the loop over {c.var.name}", c.count))
    for a in _accesses(p.body):
        out.append((f"an index of {a.leaf}", a.index + 1))
        out += [(f"a dividend in an index of {a.leaf}", d + 1) for d in _dividends(a.index)]
    for n in (e.nat for e in _expressions(p.body) if isinstance(e, NatExp)):  # a condition's, a generate's index
        out.append(("a size or index used as a value", n + 1))
        out += [("a dividend in a size or index used as a value", d + 1) for d in _dividends(n)]
    return out


def _dividends(n: Nat) -> list[Nat]:
    """The left operands of `n`'s floor divisions and remainders: the printed index computes them
    whole (the normal form writes (N - i) % N as ((N - 1) * i) % N, whose product outgrows the
    result: fuzz seed 36952 overflowed 32 bits at N = 1000003)."""
    return [a.a for a in n.atoms if isinstance(a, (FloorDiv, Mod))]


def index_bounds(p: Program) -> list[tuple[str, Nat]]:
    """(what, inclusive upper bound) of `p`'s index extents whose bound is known: a
    constant, or a polynomial in the unbounded size variables."""
    bounds: dict[Nat, Nat | None] = {}  # one bound per distinct extent (accesses repeat their forms)
    out = []
    for what, extent in index_extents(p):
        if extent not in bounds:
            bounds[extent] = upper_bound(extent)
        if bounds[extent] is not None:
            out.append((what, bounds[extent]))
    return out


def index_overflow(p: Program, sizes=None, bounds=None) -> tuple[str, int] | None:
    """The first (what, bound) of `p`'s index extents above INDEX_LIMIT: for the bounds of its
    sizes, or with `sizes` ({name: value}) bound; None when 32-bit indices suffice.
    `bounds`: index_bounds(p), when already computed."""
    for what, bound in index_bounds(p) if bounds is None else bounds:
        if sizes is None:
            value = bound.as_int()
        else:
            try:
                value = evaluate(bound, sizes)
            except FunctionalError:  # over a variable the sizes do not bind
                value = None
        if value is not None and value > INDEX_LIMIT:
            return what, int(value)
    return None


def index_type(p: Program) -> str:
    """"long" when the bounds of `p`'s sizes let an index exceed INDEX_LIMIT, else "int"."""
    return "long" if index_overflow(p) is not None else "int"


def kernel_params(p: Program, index: str = "int") -> list[tuple[str, str, object]]:
    """(C declaration, name, what) for each kernel argument, in order: input leaves,
    output leaves, then size variables (of the C type `index`)."""
    out = []
    for m in p.inputs:
        if isinstance(m.type, (ArrayType, TupleType)):
            for proj, _, elem in leaves(m.type):
                ctype = _C_BUFFER[(elem.elem if isinstance(elem, VectorType) else elem).name]
                name = leaf_name(m.name, proj)
                out.append((f"global const {ctype}* restrict {name}", name, ("input", m, proj)))
        else:
            out.append((f"const {c_type(m.type)} {m.name}", m.name, ("scalar", m, ())))
    for kind, mem in [("output", p.output)] + [("temporary", t) for t in p.temporaries]:
        for proj, _, elem in leaves(mem.type):
            ctype = _C_BUFFER[(elem.elem if isinstance(elem, VectorType) else elem).name]
            name = leaf_name(mem.name, proj)
            out.append((f"global {ctype}* restrict {name}", name, (kind, mem, proj)))
    for v in p.sizes:
        out.append((f"const {index} {v.name}", v.name, ("size", v, ())))
    return out


def _required_size(body: Cmd, contract: dict) -> str:
    """`reqd_work_group_size` when the launch contract fixes every local dimension the kernel
    uses: the compiler may then rely on the group's shape."""
    dims = {c.dim for c in walk(body) if isinstance(c, ParFor) and c.level is Level.LOCAL}
    if not dims or not dims <= set(contract):
        return ""
    sizes = [contract.get(d, 1) for d in range(3)]
    return f"__attribute__((reqd_work_group_size({sizes[0]}, {sizes[1]}, {sizes[2]})))\n"


def _vector_accesses(body: Cmd) -> dict[str, int]:
    """{leaf: bytes of the widest vector read or written through it}: a scalar array that
    views read as vectors must be declared aligned like a vector array."""
    out: dict[str, int] = {}

    def note(access) -> None:
        if isinstance(access, (Load, Store)) and isinstance(access.type, VectorType):
            out[access.leaf] = max(out.get(access.leaf, 0), _vector_bytes(access.type))

    def exp(e) -> None:
        note(e)
        for a in getattr(e, "args", ()):
            exp(a)

    for c in walk(body):
        if isinstance(c, Assign):
            note(c.acc)
            exp(c.value)
        elif isinstance(c, If):
            exp(c.cond)
    return out


def emit(p: Program, target: str = "opencl", index: str | None = None, plan=None, group_loops: bool = False) -> str:
    """Source text of a resolved program (`imperative.passes.run_passes`): one kernel per
    phase of the host plan (`plan`, else `codegen_opencl.plan.phases(p)`).  `index`: the C
    type of loop variables and sizes, "int" or "long" (None: `index_type(p)`).  `group_loops`:
    every map_workgroup a loop over the launch's groups, also where each gets a group per
    element (plan.one_group_each), as a GPU's compiler schedules SGEMM better
    (runtime.group_loops_for)."""
    from .plan import phases

    if target not in ("opencl", "c"):
        raise EmitError(f"unknown target {target!r}: 'opencl' or 'c'")
    if index is not None and index not in INDEX_TYPES:
        raise EmitError(f"unknown index type {index!r}: 'int' or 'long'")
    opencl = target == "opencl"
    index = index or index_type(p)
    pr = _Printer(opencl, dict(p.local_size), index)
    pr.group_loops = group_loops
    params = kernel_params(p, index)
    kernels = []
    for ph in phases(p) if plan is None else plan:
        hoisted: list[str] = []
        pr.vector_bytes = _vector_accesses(ph.body)
        # a kernel without work-groups is launched with an item per element of its maps
        pr.one_item_each = not any(isinstance(c, ParFor) and c.level is Level.WORKGROUP for c in walk(ph.body))
        pr.loop_vars = frozenset(c.var.name for c in walk(ph.body) if isinstance(c, (For, ParFor)))
        pr.exact_groups = _exact_groups(ph.body, pr.loop_vars)
        pr.async_copies = opencl and any(isinstance(c, Assign) and _async_copy(c) for c in walk(ph.body))
        body = pr.cmd(ph.body, 1, hoisted)
        if opencl:
            sig = ",\n    ".join(decl for decl, _, _ in params)
            head = f"{_required_size(ph.body, dict(p.local_size))}kernel void {ph.name}(\n    {sig}) {{"
        else:
            sig = ", ".join(decl.replace("global ", "").replace("restrict", "") for decl, _, _ in params)
            head = f"void {ph.name}({sig}) {{"
        kernels.append("\n".join([head] + ["  " + h for h in hoisted] + body + ["}"]))
    text = "\n\n".join(kernels)
    pre = []
    if opencl and "double" in text + "".join(pr.user_funs.values()):
        pre.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if not opencl:
        pre.append("#include <math.h>\n#include <stdbool.h>\n"
                   "#define min(a, b) ((a) < (b) ? (a) : (b))\n#define max(a, b) ((a) > (b) ? (a) : (b))")
    return "\n".join(pre + list(pr.user_funs.values()) + [text]) + "\n"
