"""A batched matrix product (examples/formulations.py `batched_mm`) as `dpia run` compiles it
(the matrix product's preset inside the batch map: dpia.explore.presets.batched), against the
reference measured in the same run: torch.bmm on a CUDA device (TF32 off), numpy.matmul on a
CPU.  The kernel is checked against float64 on every batch.

    python benchmarks/batched_mm.py --sizes 8,256,256,256            # B,M,N,K
    bash-on-the-H200: python3 benchmarks/batched_mm.py --sizes 16,1024,1024,1024 32,512,512,512
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from explore_targets import _median_s, _torch  # noqa: E402 -- the timing helpers of the other benchmarks
from torch_compiled import cuda_time  # noqa: E402


def main(argv=None) -> int:
    import dpia
    import formulations
    from dpia.programs import relative_error

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["8,256,256,256"], help="B,M,N,K")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    f = formulations.BY_NAME["batched_mm"]
    torch = _torch()
    print("| B x M x N x K | variant | ms | TFLOP/s | reference | ref ms | ref / ours | rel. error |")
    print("|---|---|---:|---:|---|---:|---:|---:|")
    for text in args.sizes:
        b, m, n, k = (int(v) for v in text.split(","))
        a, bb = f.inputs(np.random.default_rng(0), dict(B=b, M=m, N=n, K=k))
        kernel = dpia.compile(f.program)
        error = relative_error(kernel(a, bb), f.reference(a, bb))
        ours = kernel.time(a, bb, repeat=args.repeat)
        if torch is not None:
            torch.backends.cuda.matmul.allow_tf32 = False
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(bb).cuda()
            label, ref = "torch.bmm (TF32 off)", cuda_time(torch, lambda: torch.bmm(ta, tb), args.repeat)
        else:
            label, ref = "numpy.matmul f32", _median_s(lambda: np.matmul(a, bb), 5)
        flops = 2.0 * b * m * n * k
        print(f"| {b} x {m} x {n} x {k} | {kernel.variant.kind} | {ours * 1e3:.3f} | {flops / ours / 1e12:.2f} | "
              f"{label} | {ref * 1e3:.3f} | **{ref / ours:.2f}x** | {error:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
