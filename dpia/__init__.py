"""DPIA: the strategy-preserving translation from low-level functional programs to the
imperative language, and the library's entry points:

    prog = dpia.translate(expr)                 # imperative program: print it, walk it
    src = codegen_opencl.emit(prog)             # OpenCL C ("c" for plain C)
    kernel = dpia.compile(expr)                 # run it: kernel(*arrays), kernel.source, kernel.time(*arrays)

`dpia.compile` of a low-level program compiles it as written.  A high-level program (map or
reduce left and nothing lowered yet, `dpia.variants.is_high_level`) gives a VariantKernel
(`dpia.variants`): at each call the sizes come from the inputs' shapes, and per sizes it
runs the tuning database's best variant for this device (replayed from its derivation),
else a preset measured on this kind of device that fits the sizes (`dpia.presets`), else
`functional.schedules.default_schedule`; `kernel.variant` says which ("tuned", "preset" or
"default"), `kernel.source` is the last variant's OpenCL.
"""

from __future__ import annotations

from functional.expr import Expr
from functional.infer import infer

from .translate import TranslationError, Translator, translate_program  # noqa: F401


def translate(expr: Expr, name: str = "program", passes=None):
    """Type, translate and run the imperative passes (all of `imperative.passes.PIPELINE`
    unless `passes` says otherwise)."""
    from imperative.passes import PIPELINE, run_passes

    typed = expr if expr.t is not None else infer(expr)
    return run_passes(translate_program(typed, name), PIPELINE if passes is None else passes)


def compile(expr: Expr, device=None, db=None, name: str = "program", **launch):  # noqa: A001 -- the facade's name
    """A runnable kernel (the driver: imports codegen_opencl).  A low-level program is
    compiled as written (`db` unused); a high-level one gives a VariantKernel choosing, per
    input sizes, the tuning database `db`'s best variant (a TuningDB or path; None:
    $DPIA_TUNING_DB or the per-user cache; False: none) or the default lowering."""
    from .variants import VariantKernel, is_high_level

    if is_high_level(expr):
        return VariantKernel(expr, device=device, db=db, name=name, **launch)
    from codegen_opencl.runtime import compile_program

    return compile_program(translate(expr, name), device=device, **launch)
