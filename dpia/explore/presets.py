"""Presets: lowerings measured fast on a kind of device, the variant `dpia.compile` runs for a
high-level program when the tuning database holds nothing for its sizes and device (before
the device-independent default lowering).

A preset is a point of the generated space (dpia.explore.space): a skeleton, by its printed
name (its moves and their places), and one value per slot, so the search starts from it
(`Space.build` adds it to the points where sampling left it out).  Each one reproduces a named
strategy of `functional.schedules` with its parameters, measured under that name
(benchmarks/RESULTS.md): tests/test_presets.py derives both and compares them.  A preset not
reachable from the generated space would keep the strategy alone (`skeleton` None); none is.

Nothing matches program shapes: a preset applies to a program when its moves derive on it
(its rules' own preconditions decide), on the program re-declared with the divisibility
facts the real sizes give its values (`dpia.explore.space.point_facts`), and when the
translated program fits the device (`dpia.explore.resources`: work-group size, local and
private memory, occupancy), keeping no more in global temporaries than the default lowering
does (`global_temporary_bytes`: the presets were measured where they keep less, partial sums
per chunk; one that materialises an intermediate the default fuses costs a pass over memory,
as the chunked sum on a dot product did, 10x slower than the default on PoCL).  The first
preset of the device's kind that applies is used; none leaves the default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

from functional import schedules
from functional.derivation import Derivation, derive
from functional.errors import FunctionalError
from functional.expr import Expr, Lambda
from functional.infer import infer

from .launch import DRIVER, LAUNCH, code, launch_options, offered
from .space import DeviceLimits, Point, Skeleton, Step, parse_steps, point_facts, with_size_facts


@attrs.frozen
class Preset:
    strategy_name: str  # the strategy of functional.schedules it reproduces (and was measured as)
    params: Mapping[str, int | bool] = attrs.field(converter=lambda p: dict(p))
    measured: str = ""
    skeleton: str | None = None  # its skeleton's name in the generated space (None: the strategy alone)
    values: Mapping[str, int] = attrs.field(factory=dict, converter=lambda v: dict(v))  # its slots' values
    # the local shape of its kernels without work-groups it was measured with (dpia.explore.launch's
    # shapes); None: the driver's
    shape: tuple[int, ...] | None = None

    @property
    def point(self) -> Point | None:
        if self.skeleton is None:
            return None
        # the launch the strategy was measured with (dpia.explore.launch)
        launch = {LAUNCH: code(self.shape) if self.shape else DRIVER} if offered(parse_steps(self.skeleton)) else {}
        return Point(self.skeleton, {**launch, **self.values})

    def launch(self) -> dict:
        """runtime.Kernel's launch options it was measured with (empty: the driver's)."""
        point = self.point
        return launch_options(point.as_dict()) if point is not None else {}

    def schedule(self):
        """The named strategy of functional.schedules it reproduces."""
        return getattr(schedules, self.strategy_name)(**self.params)

    def strategy(self, target=None):
        """Its point's strategy (the skeleton's moves at its values, completed for a device like
        `target`: functional.default_lowering.Target), else the named strategy."""
        if self.skeleton is None:
            return self.schedule()
        return Skeleton(parse_steps(self.skeleton)).strategy(self.values, target)

    def numbers(self) -> dict[str, int]:
        if self.skeleton is not None:
            return {k: int(v) for k, v in self.values.items() if int(v) > 1}
        return {k: int(v) for k, v in self.params.items() if not isinstance(v, bool) and int(v) > 1}

    def __str__(self) -> str:
        return f"{self.strategy_name}({', '.join(f'{k}={v}' for k, v in self.params.items())})"


# The points of the presets (skeleton names as dpia.explore.stages generates them for seed.total
# and seed.mm, the programs they were measured on, at the sizes tests/test_presets.py names).
_TWO_STAGE_TREE = ("reduce_tree(block=s0, local=s1)@root; lower_map_workgroup(d=0)@1; "
                   "lower_map_local(d=0)@1.0.1.0.1.0.1.0.0; lower_map_local(d=0)@1.0.1.0.1.1; "
                   "reduce_tree_stage(block=s2, local=s3)@root")
_CHUNKED_VECTORS = ("reduce_vectorize_two_stage(n=s0, w=s1)@root; lower_map_global(d=0)@1; "
                    "lower_reduce_seq_unroll()@1.0.1.0.1.0; lower_reduce_seq()@root")
_ROWS_VECTORIZED = ("register_blocking_2d(l1=s0, l2=s1)@root; lower_map_global(d=1)@1; "
                    "lower_map_global(d=0)@1.0.1.0.1.1; vectorize_accumulator(w=s2)@1.0.1.0.1.1.0.1.0; "
                    "lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.0.0.1.0.0; "
                    "lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.0.0.1.0.0.0.1.0; "
                    "accumulator_registers()@1.0.1.0.1.1.0.1.0; transposed_panels()@1")

# tile_2d -> tile_reduction -> register_blocking_2d, then dpia.explore.mapping.tile_schemes:
# the tiles in the memory hierarchy, A's local copy along k in vectors (swap_local_dims,
# interchange_parallel, vectorized_copy), B's in vectors and interleaved rows
_REGISTER_BLOCKED_TILES = (
    'tile_2d(n=s0, m=s1)@root; tile_reduction(k=s2)@1.0.1.0.1.1.0.1.0; '
    'register_blocking_2d(l1=s3, l2=s4)@1.0.1.0.1.1.0.1.0.1.0.1.0; tile_views()@1.0.1.0.1.1.0.1.0; '
    'copied_sequential_reduction()@1.0.1.0.1.1.0.1.0.1.0.1.0.1.0.1.0.1.1.0.1.0; '
    'copied_sequential_reduction()@1.0.1.0.1.1.0.1.0; untile_views()@1.0.1.0.1.1.0.1.0.0.0.1.0.0.1.0.1.1; '
    'untile_views()@root; blocked_accumulator()@1.0.1.0.1.1.0.1.0.1; lower_map_workgroup(d=1)@1; '
    'lower_map_workgroup(d=0)@1.0.1.0.1.1; lower_map_local(d=1)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.0.1; '
    'lower_map_local(d=0)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.0.1.0.1.0; '
    'lower_map_local(d=1)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.1; '
    'lower_map_local(d=0)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.1.0.1.0; '
    'lower_map_local(d=1)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0; '
    'lower_map_local(d=0)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0; '
    'lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.0.1.0.1; '
    'lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.0.1.1; '
    'lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.1.0; '
    'lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0.1.0.0.1.0; '
    'store_copies_local()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0; '
    'store_copies_private()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.0.0.1.0.0; '
    'accumulator_registers()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0; '
    'swap_local_dims()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.0.1.1; '
    'interchange_parallel()@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.0.1.1; '
    'vectorized_copy(n=s5, w=s6)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.0.1.1.1; '
    'vectorized_copy(n=s7, w=s8)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.1.1; '
    'interleave_local_rows(b=s9, g=s10)@1.0.1.0.1.1.0.1.0.1.1.1.0.0.1.0.0.0.1.1; '
    'accumulator_among_items()@1.0.1.0.1.1.0.1.0.1.1.1')

# the same with an item's k-steps unrolled, then its tile loop double-buffered (dpia.explore.mapping's twin,
# moves unroll_reduce_seq and double_buffer: the next k-tiles copied by plain copies while these are used)
_REGISTER_BLOCKED_TILES_UNROLLED_DOUBLE_BUFFERED = (
    _REGISTER_BLOCKED_TILES + '; unroll_reduce_seq()@1.0.1.0.1.1.0.1.0.1.1.1.1.1.0.0.1.0.0.1.0.0.1.0.0.1.0.1'
    '; double_buffer()@root')


PRESETS: Mapping[str, tuple[Preset, ...]] = {
    "GPU": (
        Preset("parallel_reduce_two_stage", {"block": 65536, "local": 1024, "block2": 256, "local2": 32},
               "sum of 2^28 floats on the H200: 4.27 TB/s, 1.07x torch.sum (session 2)",
               _TWO_STAGE_TREE, {"s0": 65536, "s1": 1024, "s2": 256, "s3": 32}),
        Preset("mm_register_blocked", {"n": 128, "m": 128, "k": 8, "l1": 8, "l2": 8, "coalesce_a": True, "pad": 0,
                                       "vector_a": 4, "vector_b": 4, "interleave_b": 4, "unroll_k": True,
                                       "double_buffer": True},
               "SGEMM on an H100: 0.863x cuBLAS at 4096^3 (3.12 ms; single-buffered 3.33, double-buffered by "
               "cp.async 3.73; session 38)",
               _REGISTER_BLOCKED_TILES_UNROLLED_DOUBLE_BUFFERED, {'s0': 128, 's1': 128, 's2': 8, 's3': 8, 's4': 8, 's5': 64, 's6': 4, 's7': 64, 's8': 4, 's9': 8, 's10': 4}),
    ),
    "CPU": (
        Preset("chunked_sum", {"chunk": 8192, "width": 8},
               "sum of 2^26 floats on PoCL: 1.13x a hand float8 kernel, 2.4x numpy.sum (session 3)",
               _CHUNKED_VECTORS, {"s0": 65536, "s1": 8}),
        # benchmarks/mm_cpu_sweep.py over rows x cols x width on the H200 host's 16-core
        # AVX-512 Xeon: 8 x 32 in float16 was the best block (4 x 16 in float8: 0.21x)
        # B's panels packed (rule transposed_panels) and groups of 8 x 8 items, each sharing 8 panels and 8
        # blocks of rows in the caches: benchmarks/mm_cpu_packing.py on the 2-core AVX-512 Xeon, 1024^3
        Preset("mm_rows_vectorized", {"rows": 8, "cols": 32, "width": 16},
               "mm 1024^3 on PoCL: 0.86x numpy/OpenBLAS packed in 8 x 8 groups (0.35x unpacked; session 29)",
               _ROWS_VECTORIZED, {"s0": 8, "s1": 32, "s2": 16}, shape=(8, 8, 1)),
        # for sizes the 8 x 32 block does not divide, and CPUs of 8 lanes (a budget of 128 values)
        Preset("mm_rows_vectorized", {"rows": 4, "cols": 16, "width": 8},
               "mm 1024^3 on PoCL: 0.55x numpy/OpenBLAS packed in 8 x 8 groups (0.15x unpacked; session 29)",
               _ROWS_VECTORIZED, {"s0": 4, "s1": 16, "s2": 8}, shape=(8, 8, 1)),
    ),
}


def _kind(limits: DeviceLimits) -> str:
    return "GPU" if "GPU" in limits.device_type else "CPU"


def derive_preset(program: Expr, sizes: Mapping[str, int], preset: Preset, target=None) -> tuple[Expr, Derivation]:
    """The preset's strategy for a device like `target` (Preset.strategy) on the program
    re-declared with the facts its numbers need at these sizes (the lcm, then the product:
    nested splits of one length); FunctionalError when it does not derive."""
    typed = program if program.t is not None else infer(program)
    failure: FunctionalError | None = None
    tried = []
    for product in (False, True):
        facts = point_facts(typed, sizes, preset.numbers(), product)
        if facts in tried:
            continue
        tried.append(facts)
        try:
            return derive(infer(with_size_facts(typed, facts)), preset.strategy(target))
        except FunctionalError as exc:
            failure = exc
    raise failure


def fits(low: Expr, sizes: Mapping[str, int], limits: DeviceLimits) -> str | None:
    """Why the device cannot run the lowered program well (dpia.explore.resources), or None."""
    from .. import translate
    from .resources import kernel_resources, resource_problem

    return resource_problem(kernel_resources(translate(low), sizes), limits)


def global_temporary_bytes(low: Expr, sizes: Mapping[str, int]) -> int:
    """Bytes of the global temporaries the host allocates for the lowered program at these
    sizes (the translated program's, after the imperative passes)."""
    from functional.nat import evaluate
    from functional.types import VectorType
    from imperative.ir import leaves

    from ..pipeline import PIPELINE

    total = 0
    for mem in PIPELINE.translate(low).temporaries:
        for _, dims, elem in leaves(mem.type):
            count = math.prod(int(evaluate(d, sizes)) for d in dims)
            if isinstance(elem, VectorType):
                count, elem = count * int(evaluate(elem.width, sizes)), elem.elem
            total += count * elem.dtype.itemsize
    return total


def _default_temporary_bytes(program: Expr, sizes: Mapping[str, int]) -> int:
    from ..programs import fix_sizes

    fixed = infer(fix_sizes(program, dict(sizes)))
    return global_temporary_bytes(derive(fixed, schedules.default_schedule(fixed))[0], sizes)


def _default_on_tensor_cores(program: Expr, sizes: Mapping[str, int], limits: DeviceLimits) -> bool:
    """Whether the device's default lowering runs the program's products on tensor cores
    (mma_sync, a collective of a warp): the presets are float32 kernels of the CUDA cores,
    slower there (H100, TF32 mm 4096^3: the register-blocked preset, rounding its operands,
    26.2 TFLOP/s; the default 72.7; benchmarks/RESULTS.md session 30)."""
    from functional.expr import Prim, walk
    from functional.primitives import COLLECTIVES

    from ..programs import fix_sizes

    fixed = infer(fix_sizes(program, dict(sizes)))
    try:
        low = derive(fixed, schedules.default_schedule(fixed, limits.lowering_target()))[0]
    except FunctionalError:
        return False
    return any(isinstance(x, Prim) and x.name in COLLECTIVES for x in walk(low))


def _input_bytes(program: Expr, sizes: Mapping[str, int]) -> int:
    """Bytes of the program's inputs at these sizes."""
    from functional.expr import NatLambda
    from functional.nat import evaluate
    from functional.types import VectorType
    from imperative.ir import leaves

    e, total = program, 0
    while isinstance(e, (NatLambda, Lambda)):
        if isinstance(e, Lambda):
            for _, dims, elem in leaves(e.param.t or e.param.decl):
                count = math.prod(int(evaluate(d, sizes)) for d in dims)
                if isinstance(elem, VectorType):
                    count, elem = count * int(evaluate(elem.width, sizes)), elem.elem
                total += count * elem.dtype.itemsize
        e = e.body
    return total


# The function body of `map (fun(x) => E) xs` at the program's root: where a batch's program E stands.
_BATCH_BODY = (0, 1, 0)
_BATCH_DIM = 2  # the OpenCL dimension the batch takes: the presets' own maps use 1 and 0


def batched(preset: Preset) -> Preset | None:
    """The preset inside a batch: for a program `map (fun(x) => E) xs` whose E is the program
    the preset was measured on (a batched matrix product), its steps at E (each path under
    the batch's function) and the batch map at the preset's outermost level on dimension 2
    (a map_workgroup 2 over the batch for work-group presets, a map_global 2 for the others),
    without its program-level moves (Move.program_level); None for a preset without a skeleton
    or without such a level."""
    if preset.skeleton is None:
        return None
    steps = parse_steps(preset.skeleton)
    level = next((s.move for s in steps if s.move in ("lower_map_global", "lower_map_workgroup")), None)
    if level is None:
        return None
    from .moves import MOVES

    # a program-level move (packing) would run inside the batch map's function: left out
    moved = [attrs.evolve(s, path=_BATCH_BODY + s.path) for s in steps if not MOVES[s.move].program_level]
    first_mapping = next(k for k, s in enumerate(moved) if s.move == level)
    moved.insert(first_mapping, Step(level, (), (("d", _BATCH_DIM),)))
    return attrs.evolve(preset, skeleton=Skeleton(tuple(moved)).name,
                        measured=f"{preset.measured}; here under a batch map on dimension {_BATCH_DIM}")


def _placed(presets) -> list[Preset]:
    """Each preset at the program's root, then each inside a batch (`batched`)."""
    return list(presets) + [b for b in map(batched, presets) if b is not None]


def preset_for(program: Expr, sizes: Mapping[str, int], limits: DeviceLimits) -> tuple[Preset, Expr, Derivation] | None:
    """The first preset of this kind of device that derives on the program (at its root,
    else inside a batch map: `batched`), fits the device at these sizes and keeps no more in
    global temporaries than the default lowering or than one copy of the inputs (a packed
    operand: mm_rows_vectorized's panels of B), derived; None when none does."""
    if limits.lowering_target().tensor_cores and _default_on_tensor_cores(program, sizes, limits):
        return None
    default_bytes = None
    for preset in _placed(PRESETS.get(_kind(limits), ())):
        try:
            low, derivation = derive_preset(program, sizes, preset, limits.lowering_target())
            if fits(low, sizes, limits) is not None:
                continue
            if default_bytes is None:
                default_bytes = max(_default_temporary_bytes(program, sizes), _input_bytes(program, sizes))
            if global_temporary_bytes(low, sizes) <= default_bytes:
                return preset, low, derivation
        except FunctionalError:
            continue
    return None


__all__ = ["PRESETS", "Preset", "batched", "derive_preset", "fits", "global_temporary_bytes", "preset_for"]
