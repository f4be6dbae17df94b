"""Probe: formulations the suite does not spell (Black-Scholes with erf, softmax recomputing its
exponentials), their default lowering on this device, references in the same run."""
import math, sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, "examples")
import numpy as np
import functional as fl
import dpia
import lockstep_gpu
import suite
from explore_suite import gpu_references, target
from dpia.explore import program_bytes
from rows_gpu import _torch_reference
from explore_targets import _torch
from torch_compiled import cuda_time

N, M = fl.nat("N"), fl.nat("M")
arr = lambda *d: fl.array(d[0], fl.f32) if len(d) == 1 else fl.array(d[0], fl.array(d[1], fl.f32))


from erfc_gpu import _black_scholes_erf  # the same formulation (this probe had its own copy)

black_scholes_erf = _black_scholes_erf()

softmax_recomputed = fl.fun([arr(M, N)], lambda a: fl.map(lambda row: fl.let(
    fl.reduce(fl.max, fl.literal(-math.inf, fl.f32), row), lambda mx: fl.let(
        fl.reduce(fl.add, 0.0, fl.map(lambda x: fl.exp(x - mx), row)), lambda s: fl.map(lambda x: fl.exp(x - mx) / s, row))), a))


def main():
    torch = _torch()
    program, inputs, reference, _ = target("black_scholes", {"n": 1 << 24}, np.random.default_rng(0))
    want = reference(*inputs)
    sizes = dpia.compile(program).sizes_of(inputs)
    nbytes = program_bytes(program, sizes)
    rows = []
    for label, prog in (("erfc (suite)", program), ("erf", black_scholes_erf)):
        rows += [(f"{lab}, {label}", t, err) for lab, t, err in lockstep_gpu.both_lowerings(prog, sizes, inputs, want, 20)]
    rows += [(l, t, None) for l, t in gpu_references("black_scholes", inputs, nbytes, 20)]
    lockstep_gpu.show("black_scholes 2^24, two formulations", nbytes, rows)
    import formulations
    entry = {f.name: f for f in formulations.FORMULATIONS}["softmax_rows"]
    for m, n in ((16384, 1024), (4096, 2048)):
        sizes = {"M": m, "N": n}
        inputs = entry.inputs(np.random.default_rng(0), sizes)
        want = entry.reference(*inputs)
        rows = []
        for label, prog in (("exponentials stored", entry.program), ("exponentials recomputed", softmax_recomputed)):
            rows += [(f"{lab}, {label}", t, err) for lab, t, err in lockstep_gpu.both_lowerings(prog, sizes, inputs, want, 20)[1:]]
        if torch is not None:
            compiled, x = _torch_reference("softmax_rows", inputs[0], torch)
            rows.append(("torch.compile", cuda_time(torch, lambda: compiled(x), 20), None))
        lockstep_gpu.show(f"softmax {m} x {n}", 2 * inputs[0].nbytes, rows)


main()
