"""Session 27 probe: the default lowering's neighbourhood tiles for 3D nests (tile_nest_3d n x m x k,
planes x rows x columns of outputs per work-item; functional.default_lowering.NEIGHBOURHOOD_TILES
replaced by one tile at a time, none = the untiled 3D launch) against the device copy and
torch.compile, in the same run.

    python3 benchmarks/explore_generated_h200/session27/probe_tiles_3d.py jacobi3d_7:d=512,h=512,w=512 ...
"""

import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

import dpia  # noqa: E402
from functional import default_lowering  # noqa: E402

TILES = [None, (4, 2, 1), (2, 2, 1), (4, 1, 1), (8, 1, 1), (2, 1, 1), (1, 2, 1), (1, 4, 1), (2, 4, 1), (4, 4, 1),
         (8, 2, 1), (2, 2, 2)]


def main():
    from explore_suite import gpu_references
    from lockstep_gpu import each_target, show
    from codegen_opencl.runtime import choose_device
    from dpia.explore import program_bytes
    from dpia.explore.space import DeviceLimits
    from dpia.programs import fix_sizes, relative_error
    from functional.derivation import derive
    from functional.infer import infer
    from functional.schedules import default_schedule

    lowering_target = DeviceLimits.of(choose_device()).lowering_target()
    for text, name, program, inputs, sizes, want, _ in each_target(sys.argv[1:]):
        p = infer(fix_sizes(program, sizes))
        rows = []
        for tile in TILES:
            default_lowering.NEIGHBOURHOOD_TILES = {3: (tile,)} if tile else {}
            try:
                low, _ = derive(p, default_schedule(p, lowering_target))
                k = dpia.compile(low)
                rows.append((f"tile {tile or 'none'}", k.time(*inputs, repeat=20), relative_error(k(*inputs), want)))
            except Exception as exc:  # noqa: BLE001 -- a tile that does not apply is a line, not the end
                print(f"  {tile}: {type(exc).__name__}: {str(exc)[:160]}", flush=True)
        nbytes = program_bytes(program, sizes)
        rows += [(label, t, None) for label, t in gpu_references(name, inputs, nbytes, 20)]
        show(text, nbytes, rows)


if __name__ == "__main__":
    main()
