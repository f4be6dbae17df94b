"""What each kernel of a translated program asks of a device, and whether a device has it.

One generic analysis replaces the per-family formulas of the exploration space: it reads
the imperative program itself (`dpia.translate(low)`: memory spaces are explicit in its
allocations) and the launch the OpenCL backend makes for it (`codegen_opencl.plan.phases`
splits it into kernels, `codegen_opencl.runtime.launch_plan` sizes each launch), so it
holds for any program, element type and mapping.

    resources = kernel_resources(dpia.translate(low), {"M": 1024, "N": 1024, "K": 1024})
    resource_problem(resources, DeviceLimits.of(device))   # None, or "local memory: ..."

Per kernel (`KernelResources`):

- the launch: global and local sizes as the runtime computes them, except that the local
  size is the one the program asks for (one item per iteration of its widest local map in
  each dimension, or the local size `passes.privatise` made the program rely on), not
  shrunk to a device's maximum: the runtime would shrink a larger request (its loops then
  stride) or refuse it (a privatised program), and either way the point is not what its
  strategy meant, so the request is what the device is checked against;
- local memory: every local allocation of the kernel (the printer declares them all at the
  kernel's scope, so they add up even when their scopes do not overlap), laid out as the
  printer declares them: tuples as one array per component, vectors as their scalars, bools
  in arrays as bytes, bool scalars as ints, each array started at its declared alignment
  (16 bytes, or its widest vector access);
- private memory: the most private values one work-item holds at once, at its worst
  assignment: the private arrays whose scope encloses it, and the private scalars and
  vectors live there (by a liveness analysis: a value is held from its write to its last
  read, so a block of accumulators copied into a loop's own and back counts once), in
  32-bit registers (an f64 component needs two) and in bytes.  Loop indices and the
  temporaries of expressions are the compiler's, not the program's, and are not counted;
- work: the assignments the kernel executes at these sizes (loop counts multiplied), which
  tells the kernel doing the program's work from the small ones around it.

Occupancy is judged on the kernel doing the most work only: a reduction's last kernel, one
work-item adding up the partial results, or a second stage over a few hundred partials, is
short by design; the program fills the device when its main kernel does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from codegen_opencl.opencl import LOCAL_ALIGN
from codegen_opencl.plan import phases
from codegen_opencl.runtime import launch_plan
from functional.errors import FunctionalError
from functional.nat import Nat, as_nat, evaluate
from functional.primitives import WARP_LANES
from functional.types import AddressSpace, ScalarType, VectorType
from imperative.ir import (
    Assign,
    Cmd,
    Exp,
    For,
    If,
    Level,
    Lit,
    Load,
    Mem,
    MemAcc,
    NatExp,
    New,
    Op,
    ParFor,
    Program,
    Seq,
    Store,
    intrinsics_used,
    leaf_name,
    leaves,
    sub_commands,
    walk,
)

from .errors import ExploreError

if TYPE_CHECKING:  # the space imports this module; only the attributes of its DeviceLimits are read
    from .space import DeviceLimits


class ResourceError(ExploreError):
    """Sizes that do not bind every size variable of the program or break its facts (a
    multiple of what its splits need), or under which an array's size does not evaluate."""


# A launch request is never capped here (see the module docstring); the runtime's own cap
# on the number of work-groups and work-items per dimension still applies.
_UNCAPPED = 1 << 62
REGISTER_BYTES = 4  # private values are counted in 32-bit registers


@attrs.frozen
class KernelResources:
    """What one kernel of the host plan needs at given sizes.

    `local_size`, `work_group_size` and `work_groups` are None for a kernel without
    work-groups launched without a shape (the runtime then lets OpenCL choose the local
    size; with a launch shape they are the shape's, as runtime.launch_plan folds it); a sequential kernel
    (`parallel` False) runs as one work-item.  Group and item counts are the launch's: the
    runtime launches at most 4096 work-groups, or 2^20 work-items, per dimension (its loops
    stride over the rest)."""

    name: str
    parallel: bool
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    work_group_size: int | None  # the product of local_size
    work_groups: int | None  # the product of global_size / local_size
    work_items: int  # the product of global_size
    local_bytes: int
    private_values: int  # 32-bit registers per work-item
    private_bytes: int  # bytes per work-item
    work: int  # assignments executed by the whole kernel
    intrinsics: frozenset = frozenset()  # the device intrinsics it uses (imperative.ir.INTRINSIC_OPS)


def kernel_resources(program: Program, sizes: Mapping[str, int],
                     shape: tuple[int, ...] | None = None) -> tuple[KernelResources, ...]:
    """Each kernel's resources, in the order the host plan runs them, for `program` (a
    translated program after `imperative.passes.PIPELINE`) at `sizes` ({size variable: value});
    `shape`: the launch shape of the kernels without work-groups (None: the driver's)."""
    missing = [v.name for v in program.sizes if v.name not in sizes]
    if missing:
        raise ResourceError(f"no size given for {', '.join(missing)} (sizes: {dict(sizes)})", where=program.name)
    env = {name: int(value) for name, value in sizes.items()}
    for v in program.sizes:  # the launch would silently skip counts that do not divide
        if env[v.name] < max(1, v.lo) or env[v.name] % v.multiple_of:
            raise ResourceError(f"size {v.name}={env[v.name]} breaks the program's facts (at least {max(1, v.lo)}, "
                                f"a multiple of {v.multiple_of})", where=program.name)
    contract = dict(program.local_size)
    out = []
    for phase in phases(program):
        if phase.parallel:
            global_size, local_size = launch_plan(phase.body, env, max_local=_UNCAPPED, required=contract,
                                                  shape=shape)
        else:
            global_size, local_size = (1,), None
        work_items = math.prod(global_size)
        group_size = math.prod(local_size) if local_size is not None else None
        groups = math.prod(g // lc for g, lc in zip(global_size, local_size)) if local_size is not None else None
        allocated, vectors = _scan(phase.body)
        values, nbytes = _private_peak(phase.body, allocated, env, program.name)
        out.append(KernelResources(
            name=phase.name, parallel=phase.parallel, global_size=tuple(global_size),
            local_size=tuple(local_size) if local_size is not None else None, work_group_size=group_size,
            work_groups=groups, work_items=work_items, local_bytes=_local_bytes(allocated, vectors, env, program.name),
            private_values=values, private_bytes=nbytes, work=_work(phase.body, env),
            intrinsics=intrinsics_used(phase.body)))
    return tuple(out)


def main_kernel(resources: Sequence[KernelResources]) -> KernelResources:
    """The kernel doing the most work (the first of equals): the one occupancy is judged on."""
    if not resources:
        raise ResourceError("a program without kernels has no main kernel")
    return max(resources, key=lambda r: r.work)  # max keeps the first of equal keys


def resource_problem(resources: Sequence[KernelResources], limits: DeviceLimits, occupancy: bool = True) -> str | None:
    """The first reason a device with `limits` cannot run these kernels well, or None
    (`occupancy` False: only what it cannot run at all).

    Each kernel in plan order is checked for its work-group size (in all and per
    dimension), local memory and private
    values; then the main kernel (`main_kernel`) for occupancy: work-groups at least as wide
    as the device's SIMD width (a GPU's warp), at least one work-group per compute unit, or
    one work-item per compute unit for a kernel without work-groups.  A
    message starts with its kind ("work-group size", "local memory", "private memory", "too
    few work-groups", "too few work-items") and a colon: the explorer counts by kind."""
    for r in resources:
        if r.intrinsics - limits.intrinsics:
            return (f"intrinsics: kernel {r.name} uses {', '.join(sorted(r.intrinsics - limits.intrinsics))}, "
                    f"which the device does not offer")
        if "warp_shuffle" in r.intrinsics and (r.local_size is None or r.local_size[0] < WARP_LANES
                                               or r.work_group_size != r.local_size[0]):
            return (f"work-group size: kernel {r.name} reduces in a warp's registers, which needs one-dimensional "
                    f"work-groups of at least {WARP_LANES} items, not {r.local_size}")
        if r.work_group_size is not None and r.work_group_size > limits.max_work_group_size:
            return (f"work-group size: kernel {r.name} asks for {r.work_group_size} items per work-group "
                    f"> {limits.max_work_group_size}")
        for d, (size, most) in enumerate(zip(r.local_size or (), limits.max_item_sizes)):
            if size > most:
                return f"work-group size: kernel {r.name} asks for {size} items in dimension {d} > {most}"
        if r.local_bytes > limits.local_mem_bytes:
            return f"local memory: kernel {r.name} needs {r.local_bytes} bytes > {limits.local_mem_bytes}"
        if r.private_values > limits.private_values:
            return (f"private memory: kernel {r.name} holds {r.private_values} 32-bit values per work-item "
                    f"> {limits.private_values}")
    if not resources or not occupancy:
        return None
    main = main_kernel(resources)
    if main.work_group_size is not None and main.work_group_size < limits.simd_width:
        return (f"work-group size: kernel {main.name} has {main.work_group_size} items per work-group < the "
                f"{limits.simd_width} lanes a SIMD unit runs at once")
    if main.work_groups is not None:
        if main.work_groups < limits.compute_units:
            return (f"too few work-groups: kernel {main.name} has {main.work_groups} < "
                    f"{limits.compute_units} compute units")
    elif main.work_items < limits.compute_units:
        return f"too few work-items: kernel {main.name} has {main.work_items} < {limits.compute_units} compute units"
    return None


# ------------------------------------------------------------------------- sizes of values


def _value(n: Nat, env: Mapping[str, int], where: str) -> int:
    try:
        return int(evaluate(n, env))
    except FunctionalError as exc:
        raise ResourceError(f"the size {n} does not evaluate at {dict(env)}: {exc}", where=where) from None


def _component_bytes(t: ScalarType, in_array: bool) -> int:
    """Bytes of one scalar as the printer declares it: a bool is an int on its own (OpenCL
    C's bool has no defined size) and a byte in an array (as in buffers)."""
    if t.name == "bool":
        return 1 if in_array else 4
    return int(t.dtype.itemsize)


def _registers(component_bytes: int) -> int:
    return max(1, -(-component_bytes // REGISTER_BYTES))


def _vector_width(t: VectorType, where: str) -> int:
    width = t.width.as_int()
    if width is None:
        raise ResourceError(f"a vector of non-constant width {t.width}", where=where)
    return width


@attrs.frozen
class _Footprint:
    """One leaf of a memory object as declared: its bytes, its alignment, its registers."""

    nbytes: int
    align: int
    registers: int


def _footprints(mem, env: Mapping[str, int], where: str, vector_access: Mapping[str, int]) -> list[_Footprint]:
    t = mem.type
    local = mem.space is AddressSpace.LOCAL
    if isinstance(t, ScalarType):  # `float x;`
        size = _component_bytes(t, in_array=False)
        return [_Footprint(size, size, _registers(size))]
    if isinstance(t, VectorType):  # `float4 x;` (a float3 occupies a float4)
        width, size = _vector_width(t, where), _component_bytes(t.elem, in_array=False)
        nbytes = (4 if width == 3 else width) * size
        return [_Footprint(nbytes, nbytes, width * _registers(size))]
    out = []
    for path, dims, elem in leaves(t):  # one array per leaf; vectors as their scalars
        count = math.prod(_value(d, env, where) for d in dims)
        align = LOCAL_ALIGN if local else 1
        align = max(align, vector_access.get(leaf_name(mem.name, path), 0))
        if isinstance(elem, VectorType):
            width = _vector_width(elem, where)
            align = max(align, (4 if width == 3 else width) * _component_bytes(elem.elem, in_array=True))
            count, elem = count * width, elem.elem
        size = _component_bytes(elem, in_array=True)
        out.append(_Footprint(count * size, align, count * _registers(size)))
    return out


def _round_up(n: int, align: int) -> int:
    return -(-n // align) * align


# ---------------------------------------------------------------------------- local memory


def _scan(body: Cmd) -> tuple[list[Mem], dict[str, int]]:
    """In one walk of a kernel: the memory its `new`s allocate, and {local leaf: bytes of the
    widest vector read or written through it} (the printer aligns a scalar array that is
    read as vectors like a vector array)."""
    allocated: list[Mem] = []
    vectors: dict[str, int] = {}

    def note(access) -> None:
        if isinstance(access, (Load, Store)) and access.space is AddressSpace.LOCAL \
                and isinstance(access.type, VectorType):
            width = access.type.width.as_int() or 1
            nbytes = (4 if width == 3 else width) * int(access.type.elem.dtype.itemsize)
            vectors[access.leaf] = max(vectors.get(access.leaf, 0), nbytes)

    for c in walk(body):
        if isinstance(c, New):
            allocated.append(c.mem)
        elif isinstance(c, Assign):
            note(c.acc)
            for e in _subexpressions(c.value):
                note(e)
        elif isinstance(c, If):
            for e in _subexpressions(c.cond):
                note(e)
    return allocated, vectors


def _local_bytes(allocated: Sequence[Mem], vectors: Mapping[str, int], env: Mapping[str, int], where: str) -> int:
    """Every local array of the kernel, each from an aligned start (an upper bound by less
    than one alignment per array: the compiler may pack the last one's tail)."""
    return sum(_round_up(f.nbytes, f.align) for m in allocated if m.space is AddressSpace.LOCAL
               for f in _footprints(m, env, where, vectors))


# -------------------------------------------------------------------------- private memory


def _private_peak(body: Cmd, allocated: Sequence[Mem], env: Mapping[str, int], where: str) -> tuple[int, int]:
    """(registers, bytes) of the private values one work-item holds at once, at the worst
    assignment: the private arrays (and tuples) whose scope encloses it, and the private
    scalars and vectors live there (read later before being overwritten).  Liveness, not
    scope: a block's accumulators copied into a loop's own and back are held once."""
    values = _Values()
    for m in allocated:
        if m.space is AddressSpace.PRIVATE and _whole_value(m):
            (f,) = _footprints(m, env, where, {})
            values.add(m.name, (f.registers, f.nbytes))
    flows: dict[int, _Flow] = {}
    _flow(body, values, flows)
    return _peak(body, 0, (0, 0), values, flows, env, where)


def _whole_value(mem: Mem) -> bool:
    """A private value read and written whole (`x`, `x := e`), not through indexed leaves."""
    return isinstance(mem.type, (ScalarType, VectorType))


class _Values:
    """The private scalars and vectors of a kernel, each a bit of a live set (an int: unrolled
    kernels hold a hundred values, and their live sets are taken apart at every assignment),
    and what a set of them holds."""

    def __init__(self):
        self.bits: dict[str, int] = {}
        self._by_size: dict[tuple[int, int], int] = {}  # (registers, bytes) -> the values of that size

    def add(self, name: str, size: tuple[int, int]) -> None:
        bit = self.bits.setdefault(name, 1 << len(self.bits))
        self._by_size[size] = self._by_size.get(size, 0) | bit

    def bit(self, name: str) -> int:
        return self.bits.get(name, 0)

    def held(self, live: int) -> tuple[int, int]:
        registers = nbytes = 0
        for (r, b), members in self._by_size.items():
            k = (live & members).bit_count()
            registers, nbytes = registers + k * r, nbytes + k * b
        return registers, nbytes


@attrs.frozen
class _Flow:
    """A command's effect on liveness: live before = reads | (live after & ~writes)."""

    reads: int  # private values it may read before writing them
    writes: int  # private values every run of it overwrites


def _reads(e, values: _Values) -> int:
    if isinstance(e, Mem):
        return values.bit(e.name)
    out = 0
    for a in getattr(e, "args", ()):
        out |= _reads(a, values)
    return out


def _written(cmd: Assign, values: _Values) -> int:
    return values.bit(cmd.acc.mem.name) if isinstance(cmd.acc, MemAcc) else 0


def _flow(cmd: Cmd, values: _Values, flows: dict) -> _Flow:
    """`cmd`'s flow, with every sub-command's recorded in `flows` (by identity)."""
    if isinstance(cmd, Assign):
        flow = _Flow(_reads(cmd.value, values), _written(cmd, values))
    elif isinstance(cmd, Seq):
        reads = writes = 0
        for c in reversed(cmd.cmds):
            f = _flow(c, values, flows)
            reads, writes = f.reads | (reads & ~f.writes), writes | f.writes
        flow = _Flow(reads, writes)
    elif isinstance(cmd, If):
        then, orelse = _flow(cmd.then, values, flows), _flow(cmd.orelse, values, flows)
        flow = _Flow(_reads(cmd.cond, values) | then.reads | orelse.reads, then.writes & orelse.writes)
    elif isinstance(cmd, (For, ParFor)):
        # a work-item may run a loop's body no time at all (a par_for with fewer iterations
        # than items): its writes do not overwrite for sure
        flow = _Flow(_flow(cmd.body, values, flows).reads, 0)
    elif isinstance(cmd, New):
        inner, own = _flow(cmd.body, values, flows), values.bit(cmd.mem.name)
        flow = _Flow(inner.reads & ~own, inner.writes & ~own)
    else:  # skip, barrier
        flow = _Flow(0, 0)
    flows[id(cmd)] = flow
    return flow


def _peak(cmd: Cmd, live_after: int, arrays: tuple[int, int], values: _Values, flows: Mapping,
          env: Mapping[str, int], where: str) -> tuple[int, int]:
    """(registers, bytes) at the worst point of `cmd`, given what is live after it and what
    the private arrays in scope hold."""
    if isinstance(cmd, Assign):
        # before it: what it reads and what stays live; after it: its result and what is
        # live (an operand read for the last time frees its register for the result)
        f = flows[id(cmd)]
        before, after = values.held(f.reads | (live_after & ~f.writes)), values.held(live_after | f.writes)
        return (arrays[0] + max(before[0], after[0]), arrays[1] + max(before[1], after[1]))
    if isinstance(cmd, Seq):
        peak, live = (0, 0), live_after
        for c in reversed(cmd.cmds):
            p = _peak(c, live, arrays, values, flows, env, where)
            peak = (max(peak[0], p[0]), max(peak[1], p[1]))
            f = flows[id(c)]
            live = f.reads | (live & ~f.writes)
        return peak
    if isinstance(cmd, If):
        cond = values.held(flows[id(cmd)].reads | live_after)
        then = _peak(cmd.then, live_after, arrays, values, flows, env, where)
        orelse = _peak(cmd.orelse, live_after, arrays, values, flows, env, where)
        return (max(arrays[0] + cond[0], then[0], orelse[0]), max(arrays[1] + cond[1], then[1], orelse[1]))
    if isinstance(cmd, (For, ParFor)):
        # live at the end of the body: what is live after the loop, and what the next
        # iteration reads before writing (the loop's fixpoint, reached in one step)
        return _peak(cmd.body, live_after | flows[id(cmd.body)].reads, arrays, values, flows, env, where)
    if isinstance(cmd, New):
        if cmd.mem.space is AddressSpace.PRIVATE and not _whole_value(cmd.mem):
            own = _footprints(cmd.mem, env, where, {})
            arrays = (arrays[0] + sum(f.registers for f in own), arrays[1] + sum(f.nbytes for f in own))
        return _peak(cmd.body, live_after, arrays, values, flows, env, where)
    return arrays  # skip, barrier


# ------------------------------------------------------------------------------ coalescing


LANES_SAMPLED = 8  # neighbouring work-items whose addresses are compared (a warp's first quarter)


def strided_share(program: Program, sizes: Mapping[str, int]) -> float:
    """The share of the main kernel's global memory traffic (bytes read and written, each
    access weighted by how often it runs) made by accesses whose neighbouring work-items
    read or write more than one element apart: on a GPU, a warp's access is one
    transaction when its lanes' addresses are contiguous (or equal) and one per lane when
    they are strided, the factor of twenty between GEMV^T's two orders of dimensions.

    Neighbouring work-items are those of the lowest OpenCL dimension whose item loop
    (a global or local `par_for`) encloses the access: the lanes of a warp.  The distance
    is the mean over the first LANES_SAMPLED of them of how far the index moves when that
    loop's variable grows by one, every other loop variable at 0, the sizes at `sizes`,
    private integers (a clamped chunk index) at the values their assignments give.
    0.0 for a kernel without work-items or global accesses (nothing to spread)."""
    env = {name: int(value) for name, value in sizes.items()}
    kernels = [(ph, _work(ph.body, env)) for ph in phases(program)]
    if not kernels:
        return 0.0
    main, _ = max(kernels, key=lambda pw: pw[1])
    strided = total = 0.0
    integers: dict[str, Exp] = {}
    for access, lane, runs in _global_accesses(main.body, None, 1, env, integers):
        nbytes = runs * _access_bytes(access.type)
        total += nbytes
        if lane is not None and _lane_distance(access.index, lane, env, integers) > 1:
            strided += nbytes
    return strided / total if total else 0.0


def _access_bytes(t) -> int:
    if isinstance(t, VectorType):
        return (t.width.as_int() or 1) * int(t.elem.dtype.itemsize)
    return int(t.dtype.itemsize) if isinstance(t, ScalarType) else 4


def _lane_distance(index: Nat, lane, env: Mapping[str, int], integers: Mapping[str, Exp]) -> float:
    """Mean |index(v + 1) - index(v)| over v < LANES_SAMPLED, the lane variable `lane` at v,
    a private integer at its assigned value, every other unbound variable (an outer loop's)
    at 0; 0 where it does not evaluate."""
    try:
        at = [int(evaluate(index, _bindings(as_nat(index), {**env, lane.name: v}, integers)))
              for v in range(LANES_SAMPLED + 1)]
    except (FunctionalError, _NotAnInteger):
        return 0.0
    return sum(abs(b - a) for a, b in zip(at, at[1:])) / LANES_SAMPLED


class _NotAnInteger(Exception):
    """A private value whose assignment is not integer arithmetic the analysis follows."""


def _bindings(n: Nat, env: Mapping[str, int], integers: Mapping[str, Exp]) -> dict[str, int]:
    out = dict(env)
    for v in n.vars:
        if v.name not in out:
            out[v.name] = _integer(integers[v.name], env, integers) if v.name in integers else 0
    return out


_INTEGER_OPS = {"max": max, "min": min, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
                "mul": lambda a, b: a * b}


def _integer(e: Exp, env: Mapping[str, int], integers: Mapping[str, Exp]) -> int:
    if isinstance(e, NatExp):
        return int(evaluate(e.nat, _bindings(e.nat, env, integers)))
    if isinstance(e, Lit):
        return int(e.value)
    if isinstance(e, Mem) and e.name in integers:
        return _integer(integers[e.name], env, integers)
    if isinstance(e, Op) and e.name in _INTEGER_OPS and len(e.args) == 2:
        return _INTEGER_OPS[e.name](*(_integer(a, env, integers) for a in e.args))
    raise _NotAnInteger(str(e))


def _global_accesses(cmd: Cmd, lane, runs: int, env: Mapping[str, int], integers: dict[str, Exp]):
    """(Load or Store in global memory, the lane loop variable enclosing it or None, how
    often it runs), for every global access of `cmd` in program order; `lane`: the item
    loop of the lowest dimension enclosing `cmd` (a (dim, variable) pair).  Records each
    private integer's assignment in `integers` on the way (indices read them)."""
    if isinstance(cmd, Assign):
        for access in [cmd.acc, *_subexpressions(cmd.value)]:
            if isinstance(access, (Load, Store)) and access.space is AddressSpace.GLOBAL:
                yield access, lane[1] if lane else None, runs
        mem = cmd.acc.mem if isinstance(cmd.acc, MemAcc) else None
        if mem is not None and isinstance(mem.type, ScalarType) and mem.type.dtype.kind in "iu":
            integers[mem.name] = cmd.value
        return
    if isinstance(cmd, If):
        for access in _subexpressions(cmd.cond):
            if isinstance(access, Load) and access.space is AddressSpace.GLOBAL:
                yield access, lane[1] if lane else None, runs
    if isinstance(cmd, (For, ParFor)):
        runs *= max(1, _count(cmd, env))
        if isinstance(cmd, ParFor) and cmd.level is not Level.WORKGROUP and (lane is None or cmd.dim < lane[0]):
            lane = (cmd.dim, cmd.var)
    for sub in sub_commands(cmd):
        yield from _global_accesses(sub, lane, runs, env, integers)


def _subexpressions(e):
    """`e` and every expression inside it (operands, indexed arrays, projected tuples)."""
    yield e
    for a in getattr(e, "args", ()):
        yield from _subexpressions(a)
    for field in ("array", "tuple_"):
        inner = getattr(e, field, None)
        if isinstance(inner, Exp):
            yield from _subexpressions(inner)


# ------------------------------------------------------------------------------------ work


def _count(loop, env: Mapping[str, int]) -> int:
    """A loop's iteration count at `env`; 1 where it does not evaluate (an inexact division)."""
    try:
        return int(evaluate(loop.count, env))
    except FunctionalError:
        return 1


def _work(cmd: Cmd, env: Mapping[str, int]) -> int:
    """Assignments executed: loop counts multiplied, the larger branch of an `if`.  A count
    over an enclosing loop's index is taken at that index's largest value (an upper bound);
    one that does not evaluate (an inexact division) counts once."""
    if isinstance(cmd, Assign):
        return 1
    if isinstance(cmd, New):
        return _work(cmd.body, env)
    if isinstance(cmd, Seq):
        return sum(_work(c, env) for c in cmd.cmds)
    if isinstance(cmd, If):
        return max(_work(cmd.then, env), _work(cmd.orelse, env))
    if isinstance(cmd, (For, ParFor)):
        count = max(0, _count(cmd, env))
        return count * _work(cmd.body, {**env, cmd.var.name: max(0, count - 1)})
    return 0  # skip, barrier


__all__ = [
    "REGISTER_BYTES",
    "KernelResources",
    "ResourceError",
    "kernel_resources",
    "main_kernel",
    "resource_problem",
    "strided_share",
]
