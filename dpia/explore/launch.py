"""Stage 3's launch shape: the local size of the kernels that have no work-groups.

A kernel whose parallel loops are all map_global has no work-groups in its program, so
nothing in the derivation says how its items are grouped; the runtime launches it with a
NULL local size (the driver's choice) unless told a shape (`runtime.Kernel(local_shape=...)`,
`runtime.launch_plan`'s `shape`: the global size rounded up to a multiple of it, the
printer's loops guarded against the extra items).  Every generated skeleton that may launch
such kernels has the slot LAUNCH (dpia.explore.stages, `offered`), whose values are

    DRIVER (0)      the NULL local size: today's launch, the first value (presets, the default)
    code(shape)     a shape (x, y, z), packed as x * 10^6 + y * 10^3 + z (32008001 = 32x8x1)

One shape serves every kernel of a plan without work-groups, folded to its dimensions
(`runtime.fold_shape`: dimensions a kernel lacks join its last one, so the group keeps the
shape's items); the kernels of a plan are not known before the point is derived.

Why these shapes and no others: groups of 64 to 512 items (PRODUCTS: below 64 a GPU's
scheduler holds too few warps per group, above 512 a group may not fit a register-heavy
kernel), powers of two (every count is guarded, so no divisor of a size is needed), and per
number of dimensions a few aspects: one row (P x 1: rows of contiguous items, what a
driver tends to pick), rows of a warp's width (32 x P/32: a warp reads 32 contiguous
elements, the rows of a group share a stencil's neighbours) and the squarest shapes (8x8,
16x8, 16x16: the fewest neighbours read from outside the group); in 3D, two.  Shapes with
x >= y only: the mapping stage (dpia.explore.mapping) already tries each order of a 2D or
3D nest's dimensions.  That is 5 values for a 1D program, 12 for 2D, 14 for 3D.
"""

from __future__ import annotations

from collections.abc import Mapping

from functional.expr import Expr, Prim, walk

LAUNCH = "launch"  # the slot's name (the moves' slots are s0, s1, ...)
DRIVER = 0  # the NULL local size
PRODUCTS = (64, 128, 256, 512)
_SQUAREST = ((8, 8, 1), (16, 8, 1), (16, 16, 1))
_CUBOIDS = ((32, 4, 2), (8, 8, 4))
_BASE = 1000  # a code's digits per dimension


def shapes(dims: int) -> tuple[tuple[int, int, int], ...]:
    """The shapes offered to a program whose parallel maps nest `dims` deep (1 to 3)."""
    out = [(p, 1, 1) for p in PRODUCTS]
    if dims >= 2:
        out += [(32, p // 32, 1) for p in PRODUCTS] + list(_SQUAREST)
    if dims >= 3:
        out += list(_CUBOIDS)
    return tuple(out)


def code(shape) -> int:
    """The slot value of a shape of 1 to 3 dimensions (missing ones are 1)."""
    x, y, z = (tuple(shape) + (1, 1))[:3]
    if not (x >= 1 and 1 <= y < _BASE and 1 <= z < _BASE):
        raise ValueError(f"not a launch shape: {tuple(shape)!r}")
    return (x * _BASE + y) * _BASE + z


def shape_of(value: int) -> tuple[int, int, int] | None:
    """The shape a slot value stands for; None for DRIVER."""
    if value == DRIVER:
        return None
    return value // (_BASE * _BASE), value // _BASE % _BASE, value % _BASE


def launch_values(dims: int) -> tuple[int, ...]:
    """The slot's values for a program whose parallel maps nest `dims` deep: DRIVER first."""
    return (DRIVER,) + tuple(code(s) for s in shapes(max(1, min(3, dims))))


def offered(steps) -> bool:
    """Whether a skeleton (its steps) gets the slot: when it maps a map onto global ids, or
    maps none onto work-groups (the default lowering then maps its maps onto global ids).
    A skeleton whose maps its mapping puts in work-groups launches kernels with work-groups,
    which the shape does not change: the slot would multiply its points by identical
    kernels (the register-blocked tiles alone are thousands of points)."""
    moves = {step.move for step in steps}
    return "lower_map_global" in moves or "lower_map_workgroup" not in moves


def launch_options(params: Mapping[str, int]) -> dict:
    """The runtime.Kernel launch options of a point's slot values (dpia.pipeline.Options.launch):
    none for DRIVER or a point without the slot."""
    shape = shape_of(params.get(LAUNCH, DRIVER))
    return {} if shape is None else {"local_shape": shape}


def applied_shape(low: Expr, launch: Mapping) -> tuple[int, ...] | None:
    """The local size a launch gives the kernels without work-groups of the low-level
    program `low`: its shape folded to the dimensions of the program's map_globals, None
    when it has none (only work-group kernels or one work-item: the shape changes nothing)
    or the launch sets no shape.  Two points whose programs and applied shapes are equal
    launch the same kernels alike (folding a shape twice is folding it once)."""
    from codegen_opencl.runtime import fold_shape

    shape = launch.get("local_shape")
    dims = [x.params[0] for x in walk(low) if isinstance(x, Prim) and x.name == "map_global"]
    if shape is None or not dims:
        return None
    return fold_shape(tuple(shape), int(max(dims)) + 1)


def describe(launch: Mapping) -> str:
    """A launch's options as text for reports: "32x8x1 items per group" or "the driver's"."""
    shape = launch.get("local_shape")
    return "the driver's local size" if shape is None else "local size " + "x".join(map(str, shape))


__all__ = ["DRIVER", "LAUNCH", "PRODUCTS", "applied_shape", "code", "describe", "launch_options", "launch_values",
           "offered", "shape_of", "shapes"]
