"""Running generated kernels with pyopencl.

Device choice: an explicit `device` argument (a pyopencl Device, or a substring of
"platform: device"), else the environment variable DPIA_DEVICE, else the PoCL device
from pip when present, else the first device.  Sizes are bound from the NumPy inputs'
shapes exactly as the reference interpreter binds them.

Compilation is shared: one `Session` per device holds the context, the profiling queue
and every program built so far, keyed by (source, build options), so Kernel objects with
identical sources build once (pyopencl also caches binaries on disk).
"""

from __future__ import annotations

import collections
import hashlib
import io
import os
import pickle
import tempfile
import threading

import numpy as np

from functional.errors import FunctionalError
from functional.interp import Leaf, _collect, bind_sizes, layout
from functional.nat import Nat, evaluate
from functional.primitives import WARP_LANES
from functional.types import ArrayType, TupleType, VectorType
from imperative.ir import Cmd, Level, New, ParFor, Program, intrinsics_used, leaves, walk

from .opencl import emit, index_bounds, index_overflow, kernel_params
from .plan import MAX_GROUPS, global_items_cap, phases as plan_phases


class RuntimeError_(FunctionalError):
    """No OpenCL device, a kernel that fails to build (with its log and source), bad inputs."""


# the byte a poisoned run fills its buffers with: 0xFFFFFFFF is a NaN in float32 (and -1 in int32)
POISON = 0xFF


def _import_cl():
    try:
        import pyopencl as cl
    except ImportError as exc:  # pragma: no cover -- pyopencl is a dependency
        raise RuntimeError_(f"pyopencl is not installed: {exc}") from None
    return cl


def devices() -> list:
    """Every device of every platform; none (not an error) when no OpenCL driver is installed."""
    cl = _import_cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # no ICD loader platforms: PLATFORM_NOT_FOUND_KHR
        return []
    out = []
    for p in platforms:
        try:
            out.extend(p.get_devices())
        except cl.Error:  # a platform without devices: DEVICE_NOT_FOUND
            continue
    return out


def describe(d) -> str:
    return f"{d.platform.name}: {d.name}"


def choose_device(device=None):
    cl = _import_cl()
    if device is not None and isinstance(device, cl.Device):
        return device
    wanted = device if isinstance(device, str) else os.environ.get("DPIA_DEVICE")
    found = devices()
    if not found:
        raise RuntimeError_("no OpenCL device found (install pocl-binary-distribution for a CPU device)")
    if wanted:
        for d in found:
            if wanted.lower() in describe(d).lower():
                return d
        raise RuntimeError_(f"no OpenCL device matches {wanted!r}; found: {', '.join(map(describe, found))}")
    for d in found:
        if "portable computing language" in d.platform.name.lower():
            return d
    return found[0]


def _device_type_name(device) -> str:
    """"CPU", "GPU", "ACCELERATOR", ... ("A|B" when several bits are set, "ALL" for all)."""
    cl = _import_cl()
    value = int(device.type)
    if value == int(cl.device_type.ALL):
        return "ALL"
    names = [n for n in ("CPU", "GPU", "ACCELERATOR", "CUSTOM") if value & int(getattr(cl.device_type, n))]
    return "|".join(names) or "DEFAULT"


def device_identity(device) -> dict:
    """What distinguishes a device for tuning and reports: the names and versions that
    key tuned results, and the limits that decide which launches are possible."""
    return {
        "platform": device.platform.name.strip(),
        "platform_version": device.platform.version.strip(),
        "device": device.name.strip(),
        "driver_version": device.driver_version.strip(),
        "device_type": _device_type_name(device),
        "max_work_group_size": int(device.max_work_group_size),
        "max_work_item_sizes": [int(n) for n in device.max_work_item_sizes],
        "local_mem_bytes": int(device.local_mem_size),
        "compute_units": int(device.max_compute_units),
        "global_mem_bytes": int(device.global_mem_size),
        "native_float_vector_width": int(device.native_vector_width_float),
        "intrinsics": sorted(device_intrinsics(device)),
    }


def device_intrinsics(device) -> frozenset[str]:
    """The device intrinsics kernels may use on `device`, from what its OpenCL platform is and
    reports: warp shuffles (`shfl.sync` in inline PTX, opencl._PTX_INTRINSICS) on NVIDIA's GPUs,
    whose OpenCL compiler accepts inline PTX (measured on the H200: ../shared/reference/gpu.md),
    and TF32 tensor cores (`mma.sync.m16n8k8`, opencl._MMA_TF32) on those of compute capability
    8.0 or later (cl_nv_device_attribute_query), which also have asynchronous copies to local memory
    (`cp.async`, opencl._cp_async); none on any other device (PoCL and Oclgrind
    offer no subgroups either)."""
    nvidia = "NVIDIA" in device.platform.name.upper() and bool(device.type & _import_cl().device_type.GPU)
    if not nvidia:
        return frozenset()
    try:
        major = int(device.compute_capability_major_nv)
    except Exception:  # noqa: BLE001 -- no attribute query: no tensor cores assumed
        major = 0
    return frozenset({"warp_shuffle"} | ({"tensor_cores_tf32", "async_copy"} if major >= 8 else set()))


# What each intrinsic is for, in the words of the program's primitives (for refusals).
_INTRINSIC_USES = {"warp_shuffle": "reduce_warp: warp shuffles", "tensor_cores_tf32": "mma_sync: TF32 tensor cores",
                   "async_copy": "reduce_seq_double_buffered_async: asynchronous copies (cp.async)"}


def device_key(device) -> str:
    """A short stable string naming a device and its driver: "platform | device | driver"."""
    return identity_key(device_identity(device))


def identity_key(ident) -> str:
    """The device key of a device_identity (one reported by another host's process)."""
    return f"{ident['platform']} | {ident['device']} | {ident['driver_version']}"


def _options_key(options) -> tuple[str, ...]:
    if options is None:
        return ()
    return (options,) if isinstance(options, str) else tuple(options)


class Session:
    """One device's OpenCL state, shared by every Kernel on it: a context, an in-order
    profiling queue, and the programs built so far keyed by (source, build options).
    `builds` counts real compilations (a memo hit does not count)."""

    def __init__(self, device):
        cl = _import_cl()
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.builds = 0
        self._programs: dict = {}
        self._lock = threading.Lock()  # one build per key even when kernels are compiled from threads

    def build(self, source: str, options=None):
        """The built cl.Program for `source`, compiled on first request only.  A failed
        build raises RuntimeError_ with the log and the source, and is not remembered."""
        key = (source, _options_key(options))
        with self._lock:
            if key not in self._programs:
                self._programs[key] = self._compile(source, key[1])
            return self._programs[key]

    def _compile(self, source: str, options: tuple[str, ...]):
        cl = _import_cl()
        try:
            built = cl.Program(self.context, source).build(options=list(options))
        except cl.RuntimeError as exc:
            raise RuntimeError_(f"the kernel did not build on {describe(self.device)}:\n{exc}\n--- source ---\n"
                                f"{source}") from None
        if "kernel void" in source and not built.get_info(cl.program_info.KERNEL_NAMES):
            # PoCL's LLVM reports success and makes no kernel for some code it cannot lower
            # (a float16 built-in call on a CPU without AVX-512): a build failure, said so.
            log = built.get_build_info(self.device, cl.program_build_info.LOG).strip()
            raise RuntimeError_(f"the kernel did not build on {describe(self.device)}: the device compiler "
                                f"reported success but made no kernel\n{log}\n--- source ---\n{source}")
        self.builds += 1
        return built

    def binary(self, source: str, options=None) -> bytes | None:
        """The device binary of the program built here for (`source`, `options`), None when
        none was built (for another process on a device of the same key: `adopt`)."""
        cl = _import_cl()
        with self._lock:
            program = self._programs.get((source, _options_key(options)))
        if program is None:
            return None
        binaries = program.get_info(cl.program_info.BINARIES)
        return bytes(binaries[0]) if binaries and binaries[0] else None

    def adopt(self, source: str, binary: bytes, options=None) -> bool:
        """Hold, for (`source`, `options`), the program loaded from `binary` (built for a
        device of this one's key elsewhere), so that `build` does not compile it again.
        False when the binary does not load here (then `build` compiles the source)."""
        cl = _import_cl()
        key = (source, _options_key(options))
        with self._lock:
            if key in self._programs:
                return True
            try:
                self._programs[key] = cl.Program(self.context, [self.device], [binary]).build(options=list(key[1]))
            except (cl.Error, ValueError):  # another driver's or a damaged binary: compiled from source instead
                return False
            return True

    def cached(self) -> int:
        """How many distinct (source, options) programs are held."""
        return len(self._programs)

    def clear(self) -> None:
        """Drop the built programs (kernels already made keep theirs); the context stays."""
        with self._lock:
            self._programs.clear()


# The one process-wide cache: a Session per device, keyed by the device's OpenCL handle.
# Pure memoisation -- a session is created on first use and never changed from outside.
_SESSIONS: dict[int, Session] = {}
_SESSIONS_LOCK = threading.Lock()


def session_for(device) -> Session:
    """The shared session of a pyopencl Device (created on first use)."""
    with _SESSIONS_LOCK:
        key = int(device.int_ptr)
        if key not in _SESSIONS:
            _SESSIONS[key] = Session(device)
        return _SESSIONS[key]


def _parallel_loops(cmd: Cmd) -> list:
    return [c for c in walk(cmd) if isinstance(c, ParFor)]


def _count(lp: ParFor, sizes: dict) -> int | None:
    try:
        return int(evaluate(lp.count, sizes))
    except FunctionalError:  # a count that depends on an outer loop: no launch hint from it
        return None


def fold_shape(shape: tuple[int, ...], dims: int) -> tuple[int, ...]:
    """A launch shape for a kernel of `dims` dimensions: dimensions the shape lacks are 1,
    those the kernel lacks fold into its last one (their product joins it), so the items
    per work-group stay the shape's product:  fold((32, 8), 1) = (256,),  fold((64,), 2) = (64, 1)."""
    head = list(shape[:dims]) + [1] * (dims - len(shape))
    head[dims - 1] *= _product(shape[dims:])
    return tuple(head)


def _shaped(glob: list[int], shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(global, local) of a kernel without work-groups launched with `shape`: each local
    dimension at most the power of two covering its global count (a 2D shape on a kernel
    whose dimension 1 has 3 items does not launch 8 rows, 5 of them idle), each global
    count rounded up to a multiple of its local size (OpenCL 1.2 needs it; the extra items
    find no iteration: grid-stride loops and the printer's guarded one-iteration form both
    test the index against the count)."""
    local = [min(size, 1 << max(0, (count - 1).bit_length())) for size, count in zip(fold_shape(shape, len(glob)), glob)]
    return tuple(-(-g // lc) * lc for g, lc in zip(glob, local)), tuple(local)


# Work-groups a launch of kernels with loops over groups (a GPU's: group_loops_for) gives map_workgroup
# dimension 1 or 2, at most (its loop strides over the rest); dimension 0, and every dimension of a CPU's
# kernels, gets one per element, uncapped (plan.one_group_each).  One group per element pays on a
# GPU, which schedules groups in hardware (softmax over 16384 rows of 1024 on an H100: 4096 groups
# 0.058 ms, 16384 groups 0.051 ms; benchmarks/RESULTS.md, session 26), and on PoCL too (row sums of
# 20000 x 256: 4096 looping groups 2.71 ms, 20000 groups 1.78 ms; 4096 x 1024: the same).
GPU_MAX_GROUPS = 65535  # a CUDA grid's most blocks along y and z


def max_groups_for(device) -> int:
    return GPU_MAX_GROUPS if "GPU" in _device_type_name(device) else MAX_GROUPS


def group_loops_for(device) -> bool:
    """Whether kernels for `device` print every map_workgroup as a loop over groups
    (opencl.emit's group_loops), where one group per element needs none: on a GPU, whose
    compiler scheduled the SGEMM preset better so (an H100: 3.36 ms at 4096^3 against 3.71,
    26.1 at 8192^3 against 29.1; benchmarks/explore_generated_h200/session37); not on a CPU,
    where PoCL 3.0 miscompiled such loops holding loops with barriers (fuzz seed 37981)."""
    return "GPU" in _device_type_name(device)


# Dimension 0 of a GPU launch whose local size the driver chooses is a multiple of this.  The driver's local
# size divides the global one: NVIDIA's OpenCL gave a prime count (8191 rows) groups of one item (a 0.2 ms
# stencil ran 40 ms).  Not on CPUs: PoCL's choice at 2047 is faster than at 2048 with an idle column.
DRIVER_MULTIPLE = 256


def driver_multiple_for(device) -> int:
    return DRIVER_MULTIPLE if "GPU" in _device_type_name(device) else 1


def launch_plan(body: Cmd, sizes: dict, local_size: int | None = None, groups: int | None = None,
                max_local: int = 256, required: dict | None = None, shape: tuple[int, ...] | None = None,
                max_groups: int = MAX_GROUPS, driver_multiple: int = 1, group_loops: bool = False):
    """Global and local work sizes (up to 3 dimensions) for one kernel: one item per element
    of the outermost map of each dimension, within limits.  Parallel loops stride by the
    launch size, except a map_global of constant count within `plan.global_items_cap` in a
    kernel without work-groups, which the printer writes as one guarded iteration per item:
    the launch gives at least that many items (the largest count, rounded up to a local
    size).  `local_size` and `groups` override dimension 0; else a work-group dimension gets
    one group per element (on dimensions 1 and 2 of a kernel printed with `group_loops`,
    up to `max_groups`).  `shape` is the local size of a
    kernel without work-groups (`fold_shape` to its dimensions; None: the driver's choice,
    a NULL local size, dimension 0 rounded up to a multiple of `driver_multiple`, see
    DRIVER_MULTIPLE); a kernel with work-groups ignores it (its maps decide its groups).
    `groups` must be the launch's own count on dimension 0 unless the kernel was printed with
    `group_loops` (opencl.emit): without them, each group runs one element."""
    loops = _parallel_loops(body)
    if not loops:
        return (1,), None
    dims = max(lp.dim for lp in loops) + 1

    def first_count(level: Level, d: int, cap: int) -> int:
        counts = [c for lp in loops if lp.level is level and lp.dim == d if (c := _count(lp, sizes))]
        return max(1, min(max(counts), cap)) if counts else 1

    if any(lp.level is Level.WORKGROUP for lp in loops):
        local = [first_count(Level.LOCAL, d, max_local) for d in range(dims)]
        while _product(local) > max_local:  # shrink the largest dimension to fit a group
            k = local.index(max(local))
            local[k] = max(1, local[k] // 2)
        if local_size is not None:  # an explicit choice is kept (and checked before launch)
            local[0] = local_size
        for d, size in (required or {}).items():  # the program's contract (passes.privatise)
            if local_size is not None and d == 0 and local_size != size:
                raise RuntimeError_(f"this program needs a local size of {size} in dimension 0 "
                                    f"(each map_local runs once per item); {local_size} was asked for")
            if d < dims:
                local[d] = size
        # a group per element, whatever the count (plan.one_group_each; the printer writes no loop), except on
        # dimensions 1 and 2 of kernels with loops over groups, which a GPU's grid caps (their loops stride on)
        n_groups = [first_count(Level.WORKGROUP, d, max_groups if d and group_loops else 1 << 31) for d in range(dims)]
        if groups is not None and groups != n_groups[0] and not group_loops and any(
                lp.level is Level.WORKGROUP and lp.dim == 0 for lp in loops):
            # the printer wrote those loops as one iteration per group (opencl._Printer), unguarded where
            # the launch's count is exact: another count leaves elements undone or runs past the last
            raise RuntimeError_(f"this program's map_workgroup 0 runs one work-group per element: {n_groups[0]} "
                                f"groups; {groups} were asked for")
        if groups is not None:
            n_groups[0] = groups
        return tuple(g * lc for g, lc in zip(n_groups, local)), tuple(local)
    glob = [first_count(Level.GLOBAL, d, global_items_cap(d)) for d in range(dims)]
    if shape is not None:
        return _shaped(glob, tuple(shape))
    if local_size:
        glob[0] = -(-glob[0] // local_size) * local_size
        return tuple(glob), (local_size,) + (1,) * (dims - 1)
    if glob[0] > driver_multiple:  # extra items find their loops' guards false
        glob[0] = -(-glob[0] // driver_multiple) * driver_multiple
    return tuple(glob), None


def _checked_shape(shape, local_size) -> tuple[int, ...] | None:
    """A launch shape as a tuple of 1 to 3 positive ints (None: none), never with `local_size`
    (which already sets the local size of such kernels' dimension 0)."""
    if shape is None:
        return None
    shape = tuple(shape)
    if not 1 <= len(shape) <= 3 or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in shape):
        raise RuntimeError_(f"a local shape is 1 to 3 positive ints, got {shape!r}")
    if local_size is not None:
        raise RuntimeError_(f"local_size {local_size} and local_shape {shape} both set the local size of kernels "
                            f"without work-groups: give one")
    return shape


def _product(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


class Kernel:
    """A compiled program: `kernel(*arrays)` returns NumPy results like `interpret`."""

    def __init__(self, program: Program, device=None, session: Session | None = None,
                 local_size: int | None = None, groups: int | None = None, options=None,
                 phases=None, source: str | None = None, index: str | None = None,
                 local_shape: tuple[int, ...] | None = None):
        """`phases` (the host plan) and `source` (its OpenCL, emitted with `index` as the
        index type) when already made (dpia.pipeline's plan and emit stages); else made here.
        `local_shape`: the local size, per dimension, of every kernel of the plan without
        work-groups (launch_plan's `shape`; None: the driver chooses)."""
        cl = _import_cl()
        self.program = program
        self.session = session or session_for(choose_device(device))
        self.device, self.context, self.queue = self.session.device, self.session.context, self.session.queue
        self.local_size, self.groups, self._options = local_size, groups, options
        self.local_shape = _checked_shape(local_shape, local_size)
        self.phases = list(plan_phases(program) if phases is None else phases)
        self._check_local_memory()
        self._check_intrinsics()
        self._params = kernel_params(program)
        self._index_bounds = index_bounds(program)
        if source is not None and index is None:
            raise RuntimeError_("a kernel's source comes with the index type it was emitted with")
        if source is None:
            index = "long" if index_overflow(program, bounds=self._index_bounds) else "int"
        self._load(index, source)

    def _load(self, index: str, source: str | None = None) -> None:
        """Emit (unless `source` is given) and build the program with `index` ("int" or
        "long": opencl.index_type) as the type of its loop variables and sizes."""
        cl = _import_cl()
        self.index_type = index
        self.source = emit(self.program, "opencl", index, self.phases, group_loops_for(self.device)) \
            if source is None else source
        self._cl_program = self.session.build(self.source, self._options)
        # Own cl.Kernel objects per Kernel: the program is shared, the argument bindings are not.
        self._kernels = [cl.Kernel(self._cl_program, ph.name) for ph in self.phases]
        self._source_sha1 = hashlib.sha1(self.source.encode()).hexdigest()
        _record("build", source_sha1=self._source_sha1)

    def _widen_for(self, sizes: dict) -> None:
        """A program over unbounded sizes is built with 32-bit indices; sizes whose indices
        do not fit rebuild it with 64-bit ones (kept for every later launch: they fit any)."""
        if self.index_type == "int" and sizes and index_overflow(self.program, sizes, self._index_bounds):
            self._load("long")

    def _check_local_memory(self) -> None:
        """Refuse, before anything runs, a kernel whose local arrays do not fit the device."""
        limit = int(self.device.local_mem_size)
        for ph in self.phases:
            used = sum(_bytes(m.type) for m in _local_mems(ph.body))
            if used > limit:
                raise RuntimeError_(f"kernel {ph.name} needs {used} bytes of local memory; "
                                    f"{describe(self.device)} has {limit}")

    def _check_intrinsics(self) -> None:
        """Refuse, before the driver's compiler does, a program whose warp reductions the device
        cannot run (dpia.explore offers them only where it can)."""
        missing = intrinsics_used(self.program.body) - device_intrinsics(self.device)
        if missing:
            uses = "; ".join(_INTRINSIC_USES.get(m, m) for m in sorted(missing))
            raise RuntimeError_(f"{self.program.name} uses device intrinsics {', '.join(sorted(missing))} "
                                f"({uses}), which {describe(self.device)} does not offer; translate it for this "
                                f"device (dpia.compile does) or lower its trees in local memory")

    def _check_launch(self, launches) -> None:
        """Refuse, before it is enqueued, a launch beyond the device's limits.  The kernel's own
        reported limit (CL_KERNEL_WORK_GROUP_SIZE) is not a refusal here: NVIDIA's OpenCL
        reports 256 for every kernel (25 registers, 8 KiB of local memory) and runs it with
        1,024 items; a launch the driver does refuse is a RuntimeError_ at `_run`."""
        max_group = int(self.device.max_work_group_size)
        max_items = [int(n) for n in self.device.max_work_item_sizes]
        for ph, (_, local) in zip(self.phases, launches):
            if local is None:
                continue
            if _product(local) > max_group:
                raise RuntimeError_(f"kernel {ph.name}: a work-group of {_product(local)} items exceeds the "
                                    f"device's {max_group}")
            for d, size in enumerate(local):
                if size > max_items[d]:
                    raise RuntimeError_(f"kernel {ph.name}: {size} items in dimension {d} of a work-group exceed "
                                        f"the device's {max_items[d]}")
            used = intrinsics_used(ph.body)
            if "warp_shuffle" in used and (local[0] < WARP_LANES or _product(local) != local[0]):
                raise RuntimeError_(f"kernel {ph.name} reduces in a warp's registers: its work-groups must be "
                                    f"one-dimensional with at least {WARP_LANES} items (a whole warp), not {local}")
            if "tensor_cores_tf32" in used and local[0] % WARP_LANES:
                raise RuntimeError_(f"kernel {ph.name} runs warps' tensor cores: dimension 0 of its work-groups "
                                    f"must hold whole warps ({WARP_LANES} items or a multiple), not {local}")

    def _prepare(self, arrays, uploads: Uploads | None = None, poison: bool = False):
        cl = _import_cl()
        p = self.program
        if len(arrays) != len(p.inputs):
            raise RuntimeError_(f"{p.name} takes {len(p.inputs)} input(s), given {len(arrays)}")
        pairs: list = []
        checked = [_collect(m.name, layout(m.type), x, pairs) for m, x in zip(p.inputs, arrays)]
        sizes = bind_sizes(pairs, list(p.sizes))
        self._widen_for(sizes)
        size_type = np.int64 if self.index_type == "long" else np.int32
        mf = cl.mem_flags
        args, outputs = [], []
        by_input = {m.name: v for m, v in zip(p.inputs, checked)}
        for _, _name, (kind, obj, proj) in self._params:
            if kind == "input":
                value = by_input[obj.name]
                for k in proj:
                    value = value[k]
                data = np.ascontiguousarray(value)
                args.append(uploads.buffer(self.context, data) if uploads is not None and data.size
                            else _upload(self.context, data))
            elif kind == "scalar":
                args.append(np.asarray(by_input[obj.name], dtype=obj.type.dtype if hasattr(obj.type, "dtype") else None))
            elif kind in ("output", "temporary"):
                shape, dtype = _leaf_shape(obj.type, proj, sizes)
                host = np.empty(shape, dtype=dtype)
                args.append(cl.Buffer(self.context, mf.READ_WRITE, max(host.nbytes, 4)))
                if poison:
                    cl.enqueue_fill_buffer(self.queue, args[-1], np.uint8(POISON), 0, max(host.nbytes, 4))
                if kind == "output":
                    outputs.append((proj, host, args[-1]))
            else:
                args.append(size_type(sizes[obj.name]))
        max_local = int(self.device.max_work_group_size)
        required = dict(self.program.local_size)
        launches = [launch_plan(ph.body, sizes, self.local_size, self.groups, max_local, required, self.local_shape,
                                max_groups_for(self.device), driver_multiple_for(self.device),
                                group_loops_for(self.device))
                    if ph.parallel else ((1,), None) for ph in self.phases]
        self._check_launch(launches)
        _record("launch", program=p, local_size=self.local_size, groups=self.groups, local_shape=self.local_shape,
                arrays=arrays, sizes=sizes, source_sha1=self._source_sha1)
        return args, outputs, launches

    def _run(self, args, launches) -> list:
        """Enqueue every kernel of the plan in order (an in-order queue); a launch the driver
        refuses is a RuntimeError_ naming the kernel, its launch and the kernel's reported limit."""
        cl = _import_cl()
        events = []
        for ph, k, (g, lc) in zip(self.phases, self._kernels, launches):
            try:
                events.append(k(self.queue, g, lc, *args))
            except cl.Error as exc:
                own = k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device)
                raise RuntimeError_(f"kernel {ph.name}: {describe(self.device)} refused the launch of {g} items in "
                                    f"work-groups of {lc} (the kernel reports at most {own} items a group): "
                                    f"{exc}") from exc
        return events

    def __call__(self, *arrays, poison: bool = False, uploads: Uploads | None = None):
        """The results on `arrays`.  `poison`: every output and temporary buffer is first
        filled with POISON bytes (NaN in floats), so a value the kernel leaves unwritten
        shows: a fresh buffer may hold what another kernel wrote there.  With `uploads`,
        input arrays it already holds are not uploaded again (see `bind`)."""
        cl = _import_cl()
        args, outputs, launches = self._prepare(arrays, uploads, poison=poison)
        for ev in self._run(args, launches):
            ev.wait()
        results = {}
        for proj, host, buf in outputs:
            cl.enqueue_copy(self.queue, host, buf)
            results[proj] = host
        self.queue.finish()
        return _assemble(self.program.output.type, results)

    def time(self, *arrays, repeat: int = 10, warmup: int = 2) -> float:
        """Median time in seconds of the whole plan (all kernels), from profiling events."""
        return self.bind(*arrays).time(repeat, warmup)

    def bind(self, *arrays, uploads: Uploads | None = None) -> BoundKernel:
        """The kernel with `arrays` uploaded once, to be timed several times (an exploration
        times a candidate once, then again when it is not slow: 128 MiB of SGEMM inputs).
        With `uploads`, input arrays it already holds are not uploaded again."""
        args, _, launches = self._prepare(arrays, uploads)
        return BoundKernel(self, args, launches)


def _record(kind: str, **entry) -> None:
    """The test suite's hook (tests/oclgrind.py replays every launch under Oclgrind): with
    DPIA_RECORD_KERNELS naming a folder, each kernel built and each launch (its program,
    launch options, sizes and inputs) is pickled there, from any process (exploration workers,
    CLI runs).  Inputs of more than DPIA_RECORD_KERNELS_LIMIT elements (default 65536) are
    left out, recorded as too large.  Unset (the default), nothing is written."""
    folder = os.environ.get("DPIA_RECORD_KERNELS")
    if not folder or not os.path.isdir(folder):  # unset, or the test that set it has ended
        return
    arrays = entry.pop("arrays", None)
    if arrays is not None:
        elements = sum(_elements(x) for x in arrays)
        small = elements <= int(os.environ.get("DPIA_RECORD_KERNELS_LIMIT", "65536"))
        entry.update(elements=elements, arrays=_copy(tuple(arrays)) if small else None)
    buffer = io.BytesIO()
    _RecordPickler(buffer).dump({"kind": kind, **entry})
    # Written under a temporary name, then renamed: the replayer reads every *.pkl while
    # other processes (workers the test left running) may still be writing theirs.
    try:
        fd, partial = tempfile.mkstemp(prefix=f"{kind}-", suffix=".partial", dir=folder)
        with os.fdopen(fd, "wb") as out:
            out.write(buffer.getvalue())
        os.replace(partial, partial.removesuffix(".partial") + ".pkl")
    except FileNotFoundError:  # the test that set the folder ended meanwhile: nothing to record
        return


class _RecordPickler(pickle.Pickler):
    """Pickles a launch whose program holds Python functions that pickle cannot name (a
    user function's NumPy lambda): each becomes a stand-in, which OpenCL never calls."""

    def reducer_override(self, obj):
        if callable(obj) and getattr(obj, "__name__", "") == "<lambda>":
            return _not_recorded, (getattr(obj, "__qualname__", "<lambda>"),)
        return NotImplemented


def _not_recorded(name: str):
    def stand_in(*_args, **_kwargs):
        raise RuntimeError_(f"{name} was not recorded (a lambda): only the kernel can run")

    return stand_in


def _elements(x) -> int:
    return sum(_elements(y) for y in x) if isinstance(x, tuple) else int(np.size(x))


def _copy(x):
    return tuple(_copy(y) for y in x) if isinstance(x, tuple) else np.array(x)


def _upload(context, data: np.ndarray):
    cl = _import_cl()
    mf = cl.mem_flags
    if not data.size:
        return cl.Buffer(context, mf.READ_ONLY, 4)
    return cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)


class Uploads:
    """Read-only device copies of input arrays, reused by every kernel bound with them in
    one context: an exploration times hundreds of candidates on the same inputs (a 1 GiB
    sum input took over a second to upload per candidate).  Keyed by the array object,
    which an entry keeps alive (so its id is not reused); the `keep` most recently used
    stay.  The arrays must not change while they are held; a kernel that writes outside its
    outputs could change a held copy (the exploration checks every candidate's results on
    fresh uploads of small inputs first, and only times on held copies)."""

    def __init__(self, keep: int = 8):
        self._keep = keep
        self._held: collections.OrderedDict = collections.OrderedDict()  # id -> (array, context, buffer)

    def buffer(self, context, data: np.ndarray):
        key = (id(data), id(context))
        entry = self._held.get(key)
        if entry is not None and entry[0] is data:
            self._held.move_to_end(key)
            return entry[2]
        buf = _upload(context, data)
        self._held[key] = (data, context, buf)
        while len(self._held) > self._keep:
            self._held.popitem(last=False)
        return buf


class BoundKernel:
    """A Kernel with its arguments on the device (Kernel.bind)."""

    def __init__(self, kernel: Kernel, args: list, launches: list):
        self._kernel, self._args, self._launches = kernel, args, launches

    def time(self, repeat: int = 10, warmup: int = 2) -> float:
        """Median time in seconds of the whole plan (all kernels), from profiling events."""
        run = self._kernel._run
        for _ in range(warmup):
            for ev in run(self._args, self._launches):
                ev.wait()
        times = []
        for _ in range(repeat):
            events = run(self._args, self._launches)
            for ev in events:
                ev.wait()
            times.append((events[-1].profile.end - events[0].profile.start) * 1e-9)
        return float(np.median(times))


def _local_mems(cmd: Cmd) -> list:
    return [c.mem for c in walk(cmd) if isinstance(c, New) and c.mem.space.value == "local"]


def _bytes(t) -> int:
    total = 0
    for _, dims, elem in leaves(t):
        count = _product(int(d.as_int() or 0) for d in dims)
        if isinstance(elem, VectorType):
            count, elem = count * int(elem.width.as_int()), elem.elem
        total += count * elem.dtype.itemsize
    return total


def _leaf_shape(t, proj, sizes):
    for p, dims, elem in leaves(t):
        if p == proj:
            shape = tuple(int(evaluate(d, sizes)) for d in dims)
            if isinstance(elem, VectorType):
                shape += (int(evaluate(elem.width, sizes)),)
                elem = elem.elem
            return shape, elem.dtype
    raise RuntimeError_(f"no leaf {proj} in {t}")


def _assemble(t, results: dict):
    lay = layout(t)

    def build(node, prefix):
        if isinstance(node, tuple):
            return tuple(build(sub, prefix + (k,)) for k, sub in enumerate(node))
        value = results[prefix]
        return value[()] if value.ndim == 0 else value

    return build(lay, ())


def compile_program(program: Program, device=None, session: Session | None = None, **launch) -> Kernel:
    return Kernel(program, device=device, session=session, **launch)


__all__ = [
    "ArrayType",
    "Kernel",
    "Leaf",
    "Nat",
    "POISON",
    "Session",
    "TupleType",
    "choose_device",
    "compile_program",
    "describe",
    "device_identity",
    "device_key",
    "devices",
    "fold_shape",
    "launch_plan",
    "session_for",
]
