"""Row programs of examples/formulations.py (softmax and layer normalisation over the rows of a
matrix) through the default lowering for a CPU target and a GPU target (rows reduced by
work-groups, default_lowering.row_reductions), each checked against the float64 reference and
timed from profiling events, beside torch.compile of torch's own softmax / layer_norm and the
device copy of the same bytes in the same run.

    python benchmarks/rows_gpu.py [NAME:M=...,N=... ...] [--repeat 20]

Default: softmax_rows and layernorm_rows at 16384 x 1024 and 4096 x 2048.  On a CPU it times the
two lowerings against float32 NumPy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))

from explore_targets import _median_s, _torch  # noqa: E402
from lockstep_gpu import both_lowerings, show  # noqa: E402 -- the same two lowerings, printed alike
from torch_compiled import cuda_time  # noqa: E402

TARGETS = ("softmax_rows:M=16384,N=1024", "layernorm_rows:M=16384,N=1024", "softmax_rows:M=4096,N=2048",
           "layernorm_rows:M=4096,N=2048")


def _torch_reference(name: str, a: np.ndarray, torch):
    x = torch.from_numpy(a).cuda()
    if name == "softmax_rows":
        return torch.compile(lambda t: torch.softmax(t, dim=1)), x
    return torch.compile(lambda t: torch.nn.functional.layer_norm(t, (t.shape[1],), eps=1e-5)), x


def main(argv=None) -> int:
    import formulations
    from codegen_opencl.runtime import choose_device, device_identity
    from dpia.programs import relative_error

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", default=list(TARGETS))
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    on_gpu = "GPU" in str(device_identity(choose_device()).get("device_type", ""))
    torch = _torch() if on_gpu else None
    by_name = {f.name: f for f in formulations.FORMULATIONS}
    for text in args.targets:
        name, _, size_text = text.partition(":")
        sizes = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
        entry = by_name[name]
        inputs = entry.inputs(np.random.default_rng(0), sizes)
        want = entry.reference(*inputs)
        nbytes = 2 * inputs[0].nbytes  # the matrix read once and written once
        rows = both_lowerings(entry.program, sizes, inputs, want, args.repeat)
        if torch is not None:
            compiled, x = _torch_reference(name, inputs[0], torch)
            got = compiled(x).cpu().numpy()
            rows.append((f"torch.compile of torch's {name.split('_')[0]}", cuda_time(torch, lambda: compiled(x), args.repeat),
                         relative_error(got, want)))
            dst = torch.empty_like(x)
            rows.append(("device copy of the same bytes", cuda_time(torch, lambda: dst.copy_(x), args.repeat), None))
        else:
            rows.append(("numpy f32", _median_s(lambda: entry.numpy(*inputs), 5), None))
        show(text, nbytes, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
