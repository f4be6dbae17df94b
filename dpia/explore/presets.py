"""Presets: lowerings measured fast on a kind of device, the variant `dpia.compile` runs for a
high-level program when the tuning database holds nothing for its sizes and device (before
the device-independent default lowering).

A preset is a named strategy of `functional.schedules` with its parameters and where it was
measured (benchmarks/RESULTS.md).  Nothing matches program shapes: a preset applies to a
program when its strategy derives on it (its rules' own preconditions decide), on the
program re-declared with the divisibility facts the real sizes give its parameters
(`dpia.explore.space.point_facts`), and when the translated program fits the device
(`dpia.explore.resources`: work-group size, local and private memory, occupancy).  The first
preset of the device's kind that applies is used; none leaves the default.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from functional import schedules
from functional.derivation import Derivation, derive
from functional.errors import FunctionalError
from functional.expr import Expr
from functional.infer import infer

from .space import DeviceLimits, point_facts, with_size_facts


@attrs.frozen
class Preset:
    strategy_name: str  # a strategy of functional.schedules
    params: Mapping[str, int | bool] = attrs.field(converter=lambda p: dict(p))
    measured: str = ""

    def strategy(self):
        return getattr(schedules, self.strategy_name)(**self.params)

    def numbers(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.params.items() if not isinstance(v, bool) and int(v) > 1}

    def __str__(self) -> str:
        return f"{self.strategy_name}({', '.join(f'{k}={v}' for k, v in self.params.items())})"


PRESETS: Mapping[str, tuple[Preset, ...]] = {
    "GPU": (
        Preset("parallel_reduce_two_stage", {"block": 65536, "local": 1024, "block2": 256, "local2": 32},
               "sum of 2^28 floats on the H200: 4.27 TB/s, 1.07x torch.sum (session 2)"),
        Preset("mm_register_blocked", {"n": 128, "m": 128, "k": 8, "l1": 8, "l2": 8, "coalesce_a": True, "pad": 0,
                                       "vector_a": 4, "vector_b": 4, "interleave_b": 4},
               "SGEMM 4096^3 on the H200: 0.762x cuBLAS (session 3)"),
    ),
    "CPU": (
        Preset("chunked_sum", {"chunk": 8192, "width": 8},
               "sum of 2^26 floats on PoCL: 1.13x a hand float8 kernel, 2.4x numpy.sum (session 3)"),
        Preset("mm_rows_vectorized", {"rows": 4, "cols": 16, "width": 8},
               "mm 1024^3 on PoCL: 0.41x numpy/OpenBLAS (session 3)"),
    ),
}


def _kind(limits: DeviceLimits) -> str:
    return "GPU" if "GPU" in limits.device_type else "CPU"


def derive_preset(program: Expr, sizes: Mapping[str, int], preset: Preset) -> tuple[Expr, Derivation]:
    """The preset's strategy on the program re-declared with the facts its numbers need at
    these sizes (the lcm, then the product: nested splits of one length); FunctionalError
    when it does not derive."""
    typed = program if program.t is not None else infer(program)
    failure: FunctionalError | None = None
    tried = []
    for product in (False, True):
        facts = point_facts(typed, sizes, preset.numbers(), product)
        if facts in tried:
            continue
        tried.append(facts)
        try:
            return derive(infer(with_size_facts(typed, facts)), preset.strategy())
        except FunctionalError as exc:
            failure = exc
    raise failure


def fits(low: Expr, sizes: Mapping[str, int], limits: DeviceLimits) -> str | None:
    """Why the device cannot run the lowered program well (dpia.explore.resources), or None."""
    from .. import translate
    from .resources import kernel_resources, resource_problem

    return resource_problem(kernel_resources(translate(low), sizes), limits)


def preset_for(program: Expr, sizes: Mapping[str, int], limits: DeviceLimits) -> tuple[Preset, Expr, Derivation] | None:
    """The first preset of this kind of device that derives on the program and fits the
    device at these sizes, derived; None when none does."""
    for preset in PRESETS.get(_kind(limits), ()):
        try:
            low, derivation = derive_preset(program, sizes, preset)
            if fits(low, sizes, limits) is None:
                return preset, low, derivation
        except FunctionalError:
            continue
    return None


__all__ = ["PRESETS", "Preset", "derive_preset", "fits", "preset_for"]
