"""OpenCL C / C printers, the host plan and the pyopencl runtime.

    opencl.py   emit(program, target="opencl" | "c")
    plan.py     the kernels a program needs, in order (phases)
    runtime.py  device choice, compilation, launch, profiling-event timing

Imported only by driver code (dpia.compile, benchmarks, the CLI), never by the translation.
"""

from .opencl import emit  # noqa: F401
