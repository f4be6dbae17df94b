"""Session 30: which variant `dpia.compile` of mm with TF32 products runs on the device (call B measured the
default at 5.24 ms with no mma.sync in its PTX, where the tensor-core derivation runs 1.89 ms).

    source benchmarks/h200_env.sh && python3 benchmarks/explore_generated_h200/session30/probe_tf32_default.py
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
from tf32_gemm_gpu import tf32_mm  # noqa: E402

import dpia  # noqa: E402
import functional as fl  # noqa: E402
from codegen_opencl.runtime import choose_device, device_identity  # noqa: E402
from dpia.explore.space import DeviceLimits  # noqa: E402
from dpia.variants import choose_variant  # noqa: E402

dev = choose_device()
print("identity:", device_identity(dev))
limits = DeviceLimits.of(dev)
print("limits:", limits, "target:", limits.lowering_target())
sizes = {"M": 4096, "N": 4096, "K": 4096}
low, variant = choose_variant(fl.infer(tf32_mm()), sizes, None, False, limits)
print("choose_variant:", variant.kind, variant.note, "mma_sync in program:", "mma_sync" in str(low))
rng = np.random.default_rng(0)
a = rng.standard_normal((4096, 4096)).astype(np.float32)
b = rng.standard_normal((4096, 4096)).astype(np.float32)
kernel = dpia.compile(tf32_mm(), device=dev)
t0 = time.perf_counter()
bound = kernel.bind(a, b)
print(f"bound in {time.perf_counter() - t0:.1f} s; variant {kernel.variant.kind!r} note {kernel.variant.note!r}")
print("source has mma.sync:", "mma.sync" in (kernel.source or ""), "dpia_mma_tf32:", "dpia_mma_tf32" in (kernel.source or ""))
print(f"time {bound.time(repeat=5) * 1e3:.3f} ms")
kernel2 = dpia.compile(tf32_mm(), device=dev, db=False)
bound2 = kernel2.bind(a, b)
print(f"db=False: variant {kernel2.variant.kind!r}, mma.sync {'mma.sync' in kernel2.source}, "
      f"time {bound2.time(repeat=5) * 1e3:.3f} ms")
