"""DPIA: the strategy-preserving translation from low-level functional programs to the
imperative language, and the library's entry points:

    prog = dpia.translate(expr)                 # imperative program: print it, walk it
    src = codegen_opencl.emit(prog)             # OpenCL C ("c" for plain C)
    kernel = dpia.compile(expr)                 # run it: kernel(*arrays), kernel.source
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


def compile(expr: Expr, device=None, name: str = "program", **launch):  # noqa: A001 -- the facade's name
    """A runnable kernel for a low-level program (the driver: imports codegen_opencl)."""
    from codegen_opencl.runtime import compile_program

    return compile_program(translate(expr, name), device=device, **launch)
