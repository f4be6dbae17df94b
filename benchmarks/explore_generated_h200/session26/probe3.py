"""Probe 3: rows with chunked element-wise maps: elements per item and the group count."""
import sys
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
from dpia.explore import program_bytes
from codegen_opencl.runtime import choose_device
import formulations
from explore_suite import target, gpu_references
from rows_gpu import _torch_reference
from explore_targets import _torch
from torch_compiled import cuda_time

TARGET = DeviceLimits.of(choose_device()).lowering_target()
torch = _torch()
by = {f.name: f for f in formulations.FORMULATIONS}
cases = [("softmax_rows", {"M": 16384, "N": 1024}), ("layernorm_rows", {"M": 16384, "N": 1024}),
         ("softmax_rows", {"M": 4096, "N": 2048}), ("layernorm_rows", {"M": 4096, "N": 2048}),
         ("gemv", {"m": 16384, "n": 16384}), ("gemv", {"m": 4096, "n": 4096}), ("gesummv", {"n": 16384})]
for name, sz in cases:
    if name in by:
        entry = by[name]
        program, inputs = entry.program, entry.inputs(np.random.default_rng(0), sz)
        want, nbytes, sizes = entry.reference(*inputs), 2 * inputs[0].nbytes, sz
    else:
        program, inputs, reference, _ = target(name, sz, np.random.default_rng(0))
        sizes = dpia.compile(program).sizes_of(inputs)
        want, nbytes = reference(*inputs), program_bytes(program, sizes)
    out = []
    for per_item in (16, 8, 4):
        old = dl.ROW_PER_ITEM
        dl.ROW_PER_ITEM = per_item
        try:
            fixed = fl.infer(fix_sizes(program, sizes))
            low, _ = derive(fixed, default_schedule(fixed, TARGET))
        finally:
            dl.ROW_PER_ITEM = old
        for groups in (None, 16384, 65536):
            k = dpia.compile(low, groups=groups)
            out.append((f"{per_item:2d} per item, groups {groups or 'plan'}", k.time(*inputs, repeat=20), relative_error(k(*inputs), want)))
    if torch is not None and name in by:
        compiled, x = _torch_reference(name, inputs[0], torch)
        out.append(("torch.compile", cuda_time(torch, lambda: compiled(x), 20), None))
    elif torch is not None:
        out += [(l, t, None) for l, t in gpu_references(name, inputs, nbytes, 20)]
    lockstep_gpu.show(f"{name} {sz}", nbytes, out)
