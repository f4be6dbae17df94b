"""Session 27 probe: rows read more than once, copied into registers first
(functional.default_lowering._row_in_registers) or not (ROW_IN_REGISTERS off), the GPU target's
default lowering of examples/formulations.py's row programs, beside the device copy of the same
bytes, in the same run.

    python3 benchmarks/explore_generated_h200/session27/probe_row_copy.py layernorm_rows:M=1024,N=16384 ...
"""

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))

import dpia  # noqa: E402
from functional import default_lowering  # noqa: E402


def main():
    import formulations
    from codegen_opencl.runtime import choose_device
    from dpia.explore.space import DeviceLimits
    from dpia.programs import fix_sizes, relative_error
    from explore_suite import gpu_references
    from functional.derivation import derive
    from functional.infer import infer
    from functional.schedules import default_schedule
    from lockstep_gpu import show

    lowering_target = DeviceLimits.of(choose_device()).lowering_target()
    by_name = {f.name: f for f in formulations.FORMULATIONS}
    for text in sys.argv[1:]:
        name, _, size_text = text.partition(":")
        sizes = {k: int(v) for k, v in (kv.split("=") for kv in size_text.split(",") if kv)}
        entry = by_name[name]
        inputs = entry.inputs(np.random.default_rng(0), sizes)
        want = entry.reference(*inputs)
        p = infer(fix_sizes(entry.program, sizes))
        rows = []
        for on in (False, True):
            default_lowering.ROW_IN_REGISTERS = on
            low, d = derive(p, default_schedule(p, lowering_target))
            copied = any(s.rule == "copy_element" for s in d.steps)
            k = dpia.compile(low)
            rows.append((f"row in registers {'on' if on else 'off'}{' (copied)' if copied else ''}",
                         k.time(*inputs, repeat=20), relative_error(k(*inputs), want)))
        nbytes = 2 * inputs[0].nbytes
        rows += [(label, t, None) for label, t in gpu_references("copy_only", inputs, nbytes, 20)
                 if label.startswith("device copy")]
        show(text, nbytes, rows)


if __name__ == "__main__":
    main()
