"""Probe 2: rows' launch shapes (items per row, local size, groups) and erfc's reciprocals."""
import contextlib, math, sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, "examples")
import numpy as np
import functional as fl
import functional.default_lowering as dl
import codegen_opencl.opencl as cg
import dpia
import lockstep_gpu
from dpia.programs import fix_sizes, relative_error
from functional.derivation import derive
from functional.schedules import default_schedule
from dpia.explore.space import DeviceLimits
from codegen_opencl.runtime import choose_device
import formulations
from explore_suite import target

TARGET = DeviceLimits.of(choose_device()).lowering_target()
print("target", TARGET)


def rows():
    by = {f.name: f for f in formulations.FORMULATIONS}
    for name in ("softmax_rows", "layernorm_rows"):
        entry = by[name]
        sizes = {"M": 16384, "N": 1024}
        inputs = entry.inputs(np.random.default_rng(0), sizes)
        want = entry.reference(*inputs)
        out = []
        for per_item in (16, 8, 4):
            old = dl.ROW_PER_ITEM
            dl.ROW_PER_ITEM = per_item
            try:
                fixed = fl.infer(fix_sizes(entry.program, sizes))
                low, _ = derive(fixed, default_schedule(fixed, TARGET))
            finally:
                dl.ROW_PER_ITEM = old
            items = 1024 // per_item
            for local in (None, items):
                for groups in (None, 8192, 16384):
                    try:
                        k = dpia.compile(low, local_size=local, groups=groups)
                        t = k.time(*inputs, repeat=20)
                        err = relative_error(k(*inputs), want)
                        out.append((f"items {items:3d}, local {local or 'plan'}, groups {groups or 'plan'}", t, err))
                    except Exception as ex:
                        print("  failed", items, local, groups, type(ex).__name__, str(ex)[:200])
        lockstep_gpu.show(f"{name} 16384 x 1024", 2 * inputs[0].nbytes, out)


RECIP = """{t} dpia_recip_{t}({t} x) {{
  {t} r = native_recip(x);
  r = fma(r, fma(-x, r, (({t})(1.0f))), r);
  return fma(r, fma(-x, r, (({t})(1.0f))), r);
}}"""


def erfc_variant(kind):
    original = cg._branch_free_erfc

    def made(t):
        name, text = original(t)
        ctype = cg.c_type(t)
        if kind == "recip":
            text = text.replace(f"(({ctype})(1.0f)) / (a + (({ctype})(2.0f)))", f"dpia_recip_{ctype}(a + (({ctype})(2.0f)))")
            text = text.replace(f"(({ctype})(1.0f)) / d", f"dpia_recip_{ctype}(d)")
            text = RECIP.format(t=ctype) + "\n" + text
        return name, text
    return made


@contextlib.contextmanager
def patched(kind):
    original = cg._branch_free_erfc
    cg._branch_free_erfc = erfc_variant(kind)
    try:
        yield
    finally:
        cg._branch_free_erfc = original


def erfc_accuracy_and_speed():
    program, inputs, reference, _ = target("black_scholes", {"n": 1 << 24}, np.random.default_rng(0))
    want = reference(*inputs)
    sizes = dpia.compile(program).sizes_of(inputs)
    N = fl.nat("N")
    plain = fl.fun([fl.array(N, fl.f32)], lambda xs: fl.map(lambda x: fl.erfc(x), xs))
    x = np.concatenate([np.linspace(-10, 10.06, 2000001, dtype=np.float32)])
    ref = np.array([math.erfc(float(v)) for v in x[::1]])
    normal = ref > 1e-37
    spacing = np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64)
    out = []
    for kind in ("divide", "recip"):
        with patched(kind):
            k = dpia.compile(plain, name=f"erfc_{kind}")
            got = k(x)
            ulps = (np.abs(got.astype(np.float64) - ref) / spacing)[normal].max()
            print(f"erfc with {kind}: at most {ulps:.2f} ulp on this device", flush=True)
            fixed = fl.infer(fix_sizes(program, sizes))
            low, _ = derive(fixed, default_schedule(fixed, TARGET))
            kb = dpia.compile(low, name=f"bs_{kind}")
            out.append((f"black_scholes default, erfc {kind}", kb.time(*inputs, repeat=20), relative_error(kb(*inputs), want)))
    lockstep_gpu.show("black_scholes 2^24", 1, out)


erfc_accuracy_and_speed()
rows()
