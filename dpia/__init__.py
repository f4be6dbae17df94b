"""DPIA: the strategy-preserving translation from low-level functional programs to the
imperative language, and the library's entry points:

    prog = dpia.translate(expr)                 # imperative program: print it, walk it
    src = codegen_opencl.emit(prog)             # OpenCL C ("c" for plain C)
    kernel = dpia.compile(expr)                 # run it: kernel(*arrays), kernel.source, kernel.time(*arrays)

`dpia.compile` of a low-level program compiles it as written.  A high-level program (map or
reduce left and nothing lowered yet), or one lowered in part that the translation refuses as
it stands (`dpia.variants.needs_lowering`), gives a VariantKernel
(`dpia.variants`): at each call the sizes come from the inputs' shapes, and per sizes it
runs the tuning database's best variant for this device (replayed from its derivation),
else a preset measured on this kind of device that fits the sizes (`dpia.explore.presets`), else
`functional.schedules.default_schedule`; `kernel.variant` says which ("tuned", "preset" or
"default"), `kernel.source` is the last variant's OpenCL.
"""

from __future__ import annotations

import re

from functional.errors import FunctionalError
from functional.expr import Expr

from .translate import TranslationError, Translator, translate_program  # noqa: F401


class KernelNameError(FunctionalError, ValueError):
    """A kernel name the OpenCL C source cannot use."""


# Words a kernel may not be named: C and OpenCL C keywords, types and qualifiers, and the
# built-in functions (and macros) a kernel can call, whose name a kernel would shadow.
_RESERVED = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    bool true false half size_t ptrdiff_t intptr_t uintptr_t uchar ushort uint ulong
    kernel __kernel global __global local __local constant __constant private __private generic __generic
    read_only write_only read_write __read_only __write_only __read_write image2d_t image3d_t sampler_t event_t
    uniform pipe complex imaginary main
    get_global_id get_global_size get_local_id get_local_size get_group_id get_num_groups get_work_dim
    get_global_offset barrier mem_fence read_mem_fence write_mem_fence work_group_barrier printf
    vload2 vload3 vload4 vload8 vload16 vstore2 vstore3 vstore4 vstore8 vstore16 vload_half vstore_half
    min max clamp abs abs_diff fabs fmin fmax fma mad sqrt rsqrt cbrt exp exp2 exp10 expm1 log log2 log10 log1p
    logb pow pown powr rootn sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh sinpi cospi tanpi
    asinpi acospi atanpi atan2pi sincos erf erfc tgamma lgamma floor ceil trunc round rint nearbyint fmod
    remainder remquo modf frexp ldexp ilogb nextafter nan copysign hypot fdim degrees radians sign step smoothstep
    mix dot cross length distance normalize select bitselect any all isnan isinf isfinite isnormal signbit
    isequal isnotequal isgreater isless islessgreater isordered isunordered rotate popcount clz ctz mul24 mad24
    mul_hi mad_hi mad_sat add_sat sub_sat hadd rhadd upsample shuffle shuffle2 convert_int convert_float
    as_int as_uint as_float native_sin native_cos native_exp native_log native_sqrt native_divide
    half_sqrt half_exp atomic_add atomic_inc atomic_xchg async_work_group_copy wait_group_events
    INFINITY NAN HUGE_VAL MAXFLOAT
""".split())
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def check_kernel_name(name) -> str:
    """`name` if a kernel may be called so: a C identifier, not starting with `__` (reserved
    to the implementation), not a C or OpenCL C keyword, type or built-in function."""
    rule = ("a kernel name must be a C identifier (letters, digits, _; not starting with a digit or __) "
            "that is no C/OpenCL C keyword, type or built-in function name")
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or name.startswith("__"):
        raise KernelNameError(f"kernel name {name!r} is not usable: {rule}")
    if name in _RESERVED or name.startswith(("convert_", "as_", "get_", "atomic_", "vload", "vstore", "native_",
                                               "half_", "read_image", "write_image", "sub_group_", "work_group_")):
        raise KernelNameError(f"kernel name {name!r} is reserved in OpenCL C: {rule}")
    return name


def kernel_name_for(name: str) -> str:
    """A usable kernel name derived from a program's name (a Python variable, a file name):
    the name itself when `check_kernel_name` accepts it, else made an identifier and given a
    `_kernel` suffix (`dot` -> `dot_kernel`: OpenCL's built-in `dot` may not name a kernel).
    For drivers that name kernels after programs; a name the user gives is checked instead."""
    clean = re.sub(r"[^A-Za-z0-9_]", "_", str(name)).lstrip("_") or "program"
    if clean[0].isdigit():
        clean = "k" + clean
    try:
        return check_kernel_name(clean)
    except KernelNameError:
        return check_kernel_name(f"{clean}_kernel")


def translate(expr: Expr, name: str = "program", passes=None, pipeline=None, intrinsics=None):
    """Type, translate and run the imperative passes (all of `imperative.passes.PIPELINE`
    unless `passes` says otherwise): the translate and passes stages of `pipeline`
    (default `dpia.pipeline.PIPELINE`).  `name` names the kernels (`check_kernel_name`);
    `intrinsics` the device intrinsics the translation may use (e.g. {"tensor_cores_tf32"};
    default none: the portable translation)."""
    from .pipeline import PIPELINE, Options

    check_kernel_name(name)
    chosen = None if intrinsics is None else frozenset(intrinsics)
    return (pipeline or PIPELINE).translate(expr, Options(name=name, passes=passes, intrinsics=chosen))


def compile(expr: Expr, device=None, db=None, name: str = "program", pipeline=None,  # noqa: A001 -- the facade's name
            tuned_for: str | None = None, **launch):
    """A runnable kernel (the driver: imports codegen_opencl).  A low-level program is
    compiled as written (`db` and `tuned_for` unused) by `pipeline`'s stages translate ..
    build (default `dpia.pipeline.PIPELINE`); a high-level one, or one lowered in part that the
    translation refuses as it stands (`dpia.variants.needs_lowering`), gives a VariantKernel
    choosing, per input sizes, the tuning database `db`'s best variant (a TuningDB or path;
    None: $DPIA_TUNING_DB or the per-user cache; False: none) or the default lowering, each
    compiled by the same stages.  `tuned_for`: the device key (runtime.device_key) whose
    best variant to run on `device` instead of `device`'s own (another device's kernel
    here: portability experiments)."""
    from functional.primitives import has_low_level

    from .pipeline import PIPELINE, Options
    from .translate import TranslationError
    from .variants import VariantKernel

    check_kernel_name(name)

    def variants():
        return VariantKernel(expr, device=device, db=db, name=name, pipeline=pipeline, tuned_for=tuned_for, **launch)

    if not has_low_level(expr):
        return variants()
    if device is None:  # chosen now: the translation uses the intrinsics it offers
        from codegen_opencl.runtime import choose_device

        device = choose_device()
    pipe, options = pipeline or PIPELINE, Options(name=name, device=device, launch=launch)
    try:  # lowered in part and refused as it stands: the variants complete it (dpia.variants.needs_lowering)
        translated = pipe.run({"low": expr}, options, "translate", "translate")["translated"]
    except TranslationError:
        return variants()
    return pipe.run({"low": expr, "translated": translated, "session": None}, options, "passes", "build")["kernel"]
