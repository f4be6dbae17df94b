"""The stages of compiling a program, declared once: `STAGES`, run by `dpia.compile`, the
exploration's workers (`dpia.explore.evaluate.Evaluator`), `dpia show --stage` and the
tuning database's per-stage timings.

    derive -> translate -> passes -> plan -> resources -> emit -> build -> run -> check -> time

Each stage names the values it takes and the values it gives; a run starts from some
values (`{"low": program}`) and each stage adds what it gives, so a stage reads any value an
earlier one gave.  A stage's function is `fn(*taken, options) -> given` (a tuple when it
gives several).  `PIPELINE.replace("emit", my_emit)` is a pipeline with one stage changed:
the one that then runs wherever the pipeline is used.  Driver code: the stages from `plan`
on import `codegen_opencl` when they run (and `translate`, to ask a given device which
intrinsics it offers), never when this module is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from functional.errors import FunctionalError


class PipelineError(FunctionalError, ValueError):
    """A stage the pipeline does not have, or a run that lacks a value a stage takes."""


@attrs.frozen
class Options:
    """What stages need besides the values they take: the kernel's name, the imperative
    passes (None: all of `imperative.passes.PIPELINE`), the device and launch options of the
    built kernel (runtime.Kernel's local_size, groups, options), the check's tolerance and
    how a timing runs."""

    name: str = "program"
    passes: tuple | None = None
    device: Any = None
    launch: Mapping[str, Any] = attrs.field(factory=dict)
    tolerance: float = 1e-4  # dpia.programs.TOLERANCE
    repeat: int = 10
    warmup: int = 2
    sizes: Mapping[str, int] | None = None  # the real sizes, for the resources stage
    limits: Any = None  # dpia.explore.space.DeviceLimits: the resources stage checks against them (None: no check)
    # whether the resources stage refuses too little occupancy too (a pruning heuristic: never for the explorer's
    # baseline, what dpia run uses, which a small problem leaves under-occupied on every device)
    occupancy: bool = True
    # the device intrinsics the translation may use (imperative.ir.INTRINSIC_OPS' capabilities, e.g.
    # "tensor_cores_tf32"); None: those `device` offers (codegen_opencl.runtime.device_intrinsics), none without one
    intrinsics: frozenset | None = None


@attrs.frozen
class HostPlan:
    """The plan stage's result: the kernels the host launches in order (codegen_opencl.plan)."""

    program: Any  # imperative.ir.Program
    phases: tuple

    def __str__(self) -> str:
        rows = [f"{ph.name}: {'parallel' if ph.parallel else 'one work-item'}" for ph in self.phases]
        return f"host plan of {self.program.name}: {len(self.phases)} kernel(s) in order\n" + "\n".join(
            f"  {k + 1}. {row}" for k, row in enumerate(rows))


@attrs.frozen
class Emitted:
    """The emit stage's result: OpenCL C for a host plan, with the C type of its indices."""

    plan: HostPlan
    text: str
    index: str  # "int" or "long" (codegen_opencl.opencl.index_type)

    def __str__(self) -> str:
        return self.text


# ------------------------------------------------------------------------------ the stages


def derive(program, strategy, options: Options):
    """(low-level program, Derivation) of `strategy` on `program`; `strategy` may instead be
    a Derivation (or its text), replayed."""
    from functional.derivation import Derivation
    from functional.derivation import derive as run_strategy

    if isinstance(strategy, str):
        from .programs import user_functions

        strategy = Derivation.from_text(strategy, user_functions(program))
    if isinstance(strategy, Derivation):
        return strategy.replay(), strategy
    return run_strategy(program, strategy)


def translate(low, options: Options):
    from functional.infer import infer

    from . import check_kernel_name
    from .translate import translate_program

    check_kernel_name(options.name)
    return translate_program(low if low.t is not None else infer(low), options.name, target_intrinsics(options))


def target_intrinsics(options: Options) -> frozenset:
    """The intrinsics a translation for `options` may use: as given, else the device's."""
    if options.intrinsics is not None:
        return frozenset(options.intrinsics)
    if options.device is None:
        return frozenset()
    from codegen_opencl.runtime import device_intrinsics

    return device_intrinsics(options.device)


def passes(program, options: Options):
    from imperative.passes import PIPELINE, run_passes

    return run_passes(program, PIPELINE if options.passes is None else options.passes)


def plan(program, options: Options) -> HostPlan:
    from codegen_opencl.plan import phases

    return HostPlan(program, tuple(phases(program)))


class DeviceFitError(FunctionalError):
    """A program the device cannot run well at its sizes (work-group size, local or private
    memory, occupancy: dpia.explore.resources)."""


def resources(host_plan: HostPlan, options: Options) -> HostPlan:
    """The plan, when the device (`options.limits`) can run it at `options.sizes`, launched
    as `options.launch` says (its local shape); else a DeviceFitError naming why.  Without
    limits or sizes, nothing is checked."""
    if options.limits is None or options.sizes is None:
        return host_plan
    from .explore.resources import kernel_resources, resource_problem

    shape = options.launch.get("local_shape")
    problem = resource_problem(kernel_resources(host_plan.program, options.sizes, shape), options.limits,
                               occupancy=options.occupancy)
    if problem is not None:
        raise DeviceFitError(problem)
    return host_plan


def emit(host_plan: HostPlan, options: Options) -> Emitted:
    from codegen_opencl.opencl import emit as emit_opencl
    from codegen_opencl.opencl import index_type
    from codegen_opencl.runtime import choose_device, group_loops_for

    index = index_type(host_plan.program)
    loops = group_loops_for(choose_device(options.device))  # the device the build stage builds for
    return Emitted(host_plan, emit_opencl(host_plan.program, "opencl", index, host_plan.phases, loops), index)


def build(emitted: Emitted, session, options: Options):
    from codegen_opencl.runtime import Kernel

    return Kernel(emitted.plan.program, device=options.device, session=session, phases=emitted.plan.phases,
                  source=emitted.text, index=emitted.index, **dict(options.launch))


def run(kernel, inputs: tuple, options: Options):
    return kernel(*inputs)


def mismatch(got, want, tolerance: float) -> str | None:
    """Why `got` is not `want` (dpia.programs.relative_error above `tolerance`), or None."""
    from .programs import relative_error

    error = relative_error(got, want)
    return None if error <= tolerance else f"relative error {error:.2e} > {tolerance:.0e}"


def check(results, expected, options: Options) -> str | None:
    return mismatch(results, expected, options.tolerance)


def time(kernel, inputs: tuple, options: Options) -> float:
    return kernel.bind(*inputs).time(repeat=options.repeat, warmup=options.warmup)


@attrs.frozen
class Stage:
    """One step of compiling: the names of the values it takes and gives, a line saying
    what it does, and its function `fn(*taken, options)`."""

    name: str
    takes: tuple[str, ...]
    gives: tuple[str, ...]
    doc: str
    fn: Callable


STAGES = (
    Stage("derive", ("program", "strategy"), ("low", "derivation"),
          "rewrite the program by a strategy (or replay a derivation): the low-level functional program", derive),
    Stage("translate", ("low",), ("translated",),
          "DPIA translation: the imperative program, as the low-level program says", translate),
    Stage("passes", ("translated",), ("imperative",),
          "the imperative passes (imperative.passes.PIPELINE, in order): views resolved, barriers, buffers", passes),
    Stage("plan", ("imperative",), ("plan",),
          "the host plan: the kernels to launch in order (codegen_opencl.plan)", plan),
    Stage("resources", ("plan",), ("fitting",),
          "what each kernel asks of the device (work-group size, local and private memory, occupancy) against its limits",
          resources),
    Stage("emit", ("fitting",), ("source",), "the OpenCL C source of every kernel of the plan", emit),
    Stage("build", ("source", "session"), ("kernel",),
          "compile the source for the device: a runnable kernel (codegen_opencl.runtime.Kernel)", build),
    Stage("run", ("kernel", "inputs"), ("results",), "run the kernel on the inputs", run),
    Stage("check", ("results", "expected"), ("mismatch",),
          "compare the results with the interpreter's: None, or why they differ", check),
    Stage("time", ("kernel", "inputs"), ("seconds",), "median seconds of repeated runs (profiling events)", time),
)


@attrs.frozen
class Pipeline:
    stages: tuple[Stage, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stages)

    def __getitem__(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise PipelineError(f"no stage {name!r}; the stages are {', '.join(self.names)}")

    def replace(self, name: str, fn: Callable) -> Pipeline:
        """This pipeline with stage `name` running `fn` (same signature) instead."""
        old = self[name]
        return Pipeline(tuple(attrs.evolve(s, fn=fn) if s is old else s for s in self.stages))

    def between(self, first: str, last: str) -> tuple[Stage, ...]:
        """The stages from `first` to `last`, both included, in order."""
        start, stop = self.names.index(self[first].name), self.names.index(self[last].name)
        return self.stages[start:stop + 1]

    def run(self, values: Mapping[str, Any], options: Options, first: str, last: str,
            call: Callable[[Stage, tuple], Any] | None = None) -> dict[str, Any]:
        """Run the stages from `first` to `last` on `values`: every value, those given and
        those the stages gave.  `call(stage, taken)` runs a stage (default: its function
        with `options`): the exploration's workers report each stage as it starts."""
        out = dict(values)
        for stage in self.between(first, last):
            missing = [k for k in stage.takes if k not in out]
            if missing:
                raise PipelineError(f"stage {stage.name} takes {', '.join(missing)}, which no earlier stage gave")
            taken = tuple(out[k] for k in stage.takes)
            result = stage.fn(*taken, options) if call is None else call(stage, taken)
            out.update(given(stage, result))
        return out

    def translate(self, low, options: Options = Options()):
        """The imperative program of a low-level one: translate, then the passes."""
        return self.run({"low": low}, options, "translate", "passes")["imperative"]

    def compile(self, low, options: Options = Options(), session=None):
        """The runtime Kernel of a low-level program: translate .. build."""
        return self.run({"low": low, "session": session}, options, "translate", "build")["kernel"]


def given(stage: Stage, result) -> dict[str, Any]:
    """The values a stage's result gives, by name."""
    if len(stage.gives) == 1:
        return {stage.gives[0]: result}
    return dict(zip(stage.gives, result, strict=True))


PIPELINE = Pipeline(STAGES)


def stage_help(stages: Iterable[Stage]) -> str:
    """One line per stage, `name: doc` (for command-line help)."""
    return "; ".join(f"{s.name}: {s.doc}" for s in stages)


__all__ = ["PIPELINE", "STAGES", "DeviceFitError", "Emitted", "HostPlan", "Options", "Pipeline", "PipelineError", "Stage", "given",
           "mismatch", "stage_help"]
