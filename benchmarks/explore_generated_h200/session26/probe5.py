"""Probe 5: wide rows (8192, 16384) whose stored exponentials each item reads back alone: work-groups with
the exponentials in registers (main: _own_elements_only) or an item per row (the stored row counted against
local memory, as before), torch.compile and the device copy in the same run."""
import contextlib, sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, "examples")
import numpy as np
import functional as fl
import functional.default_lowering as dl
import dpia
import lockstep_gpu
from dpia.programs import fix_sizes, relative_error
from functional.derivation import derive
from functional.schedules import default_schedule
from dpia.explore.space import DeviceLimits
from codegen_opencl.runtime import choose_device
import formulations
from rows_gpu import _torch_reference
from explore_targets import _torch
from torch_compiled import cuda_time

TARGET = DeviceLimits.of(choose_device()).lowering_target()
torch = _torch()
by = {f.name: f for f in formulations.FORMULATIONS}
for name, sizes in (("softmax_rows", {"M": 2048, "N": 8192}), ("softmax_rows", {"M": 1024, "N": 16384}),
                    ("layernorm_rows", {"M": 1024, "N": 16384})):
    entry = by[name]
    inputs = entry.inputs(np.random.default_rng(0), sizes)
    want = entry.reference(*inputs)
    rows = []
    for label, own in (("registers (main)", dl._own_elements_only), ("counted as local memory", lambda *a: False)):
        before = dl._own_elements_only
        dl._own_elements_only = own
        try:
            fixed = fl.infer(fix_sizes(entry.program, sizes))
            low, _ = derive(fixed, default_schedule(fixed, TARGET))
        finally:
            dl._own_elements_only = before
        k = dpia.compile(low)
        rows.append((label, k.time(*inputs, repeat=20), relative_error(k(*inputs), want)))
    if torch is not None:
        compiled, x = _torch_reference(name, inputs[0], torch)
        rows.append(("torch.compile", cuda_time(torch, lambda: compiled(x), 20), None))
        dst = torch.empty_like(x)
        rows.append(("device copy", cuda_time(torch, lambda: dst.copy_(x), 20), None))
    lockstep_gpu.show(f"{name} {sizes}", 2 * inputs[0].nbytes, rows)
