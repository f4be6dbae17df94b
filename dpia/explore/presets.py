"""Presets: exploration points measured fast on a kind of device, the variant `dpia.compile`
runs for a high-level program when the tuning database holds nothing for its sizes and
device (before the device-independent `functional.schedules.default_schedule`).

Each preset is a family point of `dpia.space` with where it was measured
(benchmarks/RESULTS.md).  The first preset whose family applies to the program and that is
feasible at the sizes on the device (divisibility, work-group size, local and private
memory, occupancy: `Family.feasible`) is derived; none, or one that does not derive, leaves
the default.  Exploration still measures against the default schedule: presets are a
better starting point for users, not a result of the search.
"""

from __future__ import annotations

from collections.abc import Mapping

from functional.derivation import derive
from functional.expr import Expr
from functional.infer import infer

from .space import DeviceLimits, Family, Point, standard_families, with_size_facts

PRESETS: Mapping[str, tuple[Point, ...]] = {
    "GPU": (
        # sum of 2^28 floats on the H200: 4.27 TB/s, 1.07x torch.sum (explored, session 2)
        Point("parallel_reduce_two_stage", {"block": 65536, "local": 1024, "block2": 256, "local2": 32}),
        # SGEMM 4096^3 on the H200: 0.762x cuBLAS (derived by rules, session 3)
        Point("mm_register_blocked", {"n": 128, "m": 128, "k": 8, "l1": 8, "l2": 8, "coalesce_a": True, "pad": 0,
                                      "vector_a": 4, "vector_b": 4, "interleave_b": 4}),
    ),
    "CPU": (
        # sum of 2^26 floats on PoCL: 1.13x a hand float8 kernel, 2.4x numpy.sum (session 3)
        Point("chunked_sum", {"chunk": 8192, "width": 8}),
        # mm 1024^3 on PoCL: 0.41x numpy/OpenBLAS (explored, session 3)
        Point("mm_rows_vectorized", {"rows": 4, "cols": 16, "width": 8}),
    ),
}


def _family(name: str) -> Family:
    return next(f for f in standard_families() if f.name == name)


def _kind(limits: DeviceLimits) -> str:
    return "GPU" if "GPU" in limits.device_type else "CPU"


def preset_point(program: Expr, sizes: Mapping[str, int], limits: DeviceLimits) -> Point | None:
    """The first preset for this kind of device that applies and is feasible, or None."""
    typed = program if program.t is not None else infer(program)
    for point in PRESETS.get(_kind(limits), ()):
        family = _family(point.family)
        roles = family.roles(typed)
        if roles is None or any(name not in sizes for name in roles.values()):
            continue
        by_role = {role: sizes[name] for role, name in roles.items()}
        if family.feasible(point.as_dict(), by_role, limits) is None:
            return point
    return None


def preset_program(program: Expr, point: Point):
    """(lowered program, Derivation) of `point` on `program` (raises FunctionalError): the
    program re-declared with the facts the point needs (by role, mapped to the program's own
    size variable names), then the family's strategy."""
    family = _family(point.family)
    params = point.as_dict()
    typed = program if program.t is not None else infer(program)
    roles = family.roles(typed)
    needs = {roles[role]: multiple for role, multiple in family.needs(params).items()}
    return derive(infer(with_size_facts(typed, needs)), family.strategy(params))


__all__ = ["PRESETS", "preset_point", "preset_program"]
