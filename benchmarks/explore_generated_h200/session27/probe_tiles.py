"""Session 27 probe: 2D map nests tiled (tile_nest_2d n x m or stencil_tiling_2d), blocks of rows
on global 1, column tiles on global 0 through the layout views, a tile's maps unrolled, the rest
the default lowering (GPU target), against the default lowering, the device copy and torch.compile."""
import sys
sys.path.insert(0, "examples")
import dpia
from suite import _by
from dpia.programs import fix_sizes
from functional.infer import infer
from functional.rules.vocabulary import MACROS, apply_at, sites
from functional.rules import RULES
from functional.derivation import derive
from functional.schedules import default_schedule
from functional.default_lowering import Target
from functional.strategies import at_path, replace_at
from functional.expr import walk, Prim, spine
from dpia.explore.mapping import host_maps, _function_body_path
from functional.storage import through_views as _through_views

def tiled(program, j1, j2, macro="stencil_tiling_2d"):
    body = program
    path = sites(MACROS[macro], body)[0]
    params = dict(zip(MACROS[macro].params, (j1, j2)))
    r = apply_at(MACROS[macro], body, path, params)
    assert r.ok, r.reason
    e = infer(r.expr)
    from functional.expr import Lambda
    body, pre = e, ()
    while isinstance(body, Lambda):
        body, pre = body.body, pre + (0,)
    hp = list(host_maps(body))
    outer = pre + hp[0]
    inner_path, _ = _function_body_path(at_path(e, outer), outer)
    through = _through_views(e, inner_path)
    
    assert through is not None
    for p, d in ((outer, 1), (through, 0)):
        res = RULES["lower_map_global"].strategy(d=d)(at_path(e, p))
        assert res.ok, res.reason
        e = replace_at(e, p, res.expr)
    e = infer(e)
    # unroll: every high-level map under `through`
    changed = True
    while changed:
        changed = False
        for p, node in _paths(e):
            if p[:len(through)] == through and p != through:
                h, a = spine(node)
                from functional.primitives import is_view_fn
                if isinstance(h, Prim) and h.name == "map" and len(a) >= 1 and not is_view_fn(a[0]):
                    res = RULES["lower_map_seq_unroll"].strategy()(node)
                    if res.ok:
                        e = infer(replace_at(e, p, res.expr)); changed = True; break
    pass
    low, _ = derive(e, default_schedule(e, Target(lockstep_items=True)))
    return low

def _paths(e, path=()):
    yield path, e
    for k, c in enumerate(e.children()):
        yield from _paths(c, path + (k,))


ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))


def main():
    from explore_suite import gpu_references
    from dpia.explore import program_bytes
    from dpia.programs import relative_error
    from lockstep_gpu import each_target, show
    tiles = [(1, 2), (2, 1), (2, 2), (4, 1), (1, 4), (2, 4), (4, 2), (4, 4), (8, 1), (8, 2)]
    for text, name, program, inputs, sizes, want, _ in each_target(sys.argv[1:]):
        p = infer(fix_sizes(program, sizes))
        rows = []
        low, _ = derive(p, default_schedule(p, Target(lockstep_items=True)))
        k = dpia.compile(low)
        rows.append(("default lowering", k.time(*inputs, repeat=20), relative_error(k(*inputs), want)))
        for macro in ("tile_nest_2d", "stencil_tiling_2d"):
            for j1, j2 in tiles:
                try:
                    low = tiled(p, j1, j2, macro)
                    k = dpia.compile(low)
                    rows.append((f"{macro}({j1}, {j2})", k.time(*inputs, repeat=20), relative_error(k(*inputs), want)))
                except Exception as exc:  # noqa: BLE001
                    print(f"  {macro}({j1}, {j2}): {type(exc).__name__}: {str(exc)[:120]}", flush=True)
        nbytes = program_bytes(program, sizes)
        rows += [(label, t, None) for label, t in gpu_references(name, inputs, nbytes, 20)]
        show(text, nbytes, rows)


if __name__ == "__main__":
    main()
