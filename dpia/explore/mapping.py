"""Stage 2, mapping: for a variant of stage 1, the assignments of its maps to OpenCL.

For every map that program-level code runs (`host_maps`), the schemes (Lift's mapCombinations):

    (none)      the default lowering decides (map_global over the outermost maps)
    global      map_global 0; for a perfect nest of 2 or 3 maps every order of the dimensions
                (global 1 / 0 and 0 / 1; 2 / 1 / 0 and 0 / 1 / 2)
    group       map_workgroup 0 over the outer map, map_local 0 over every map its function runs
                (the items of a group share what the group stores: local memory, chosen by the
                default lowering's storage analysis)
    group 2D    map_workgroup 1 / 0 over a perfect nest of two maps, map_local 1 over the maps
                their function runs and map_local 0 over the maps inside those

Several host maps combine (each scheme with each, at most MAX_MAPPINGS).  Everything no step
lowers the default lowering completes: reductions as loops, inner maps as loops, storage.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from functional.expr import App, Expr, Lambda, NatApp, NatLambda, Prim, spine
from functional.schedules import _perfectly_nested
from functional.storage import arg_path
from functional.strategies import at_path

from .moves import computing_map
from .space import Step

MAX_MAPPINGS = 12  # mappings per variant


def _function_body_path(e: Expr, path: tuple) -> tuple[tuple, Expr]:
    """The path and node of a map's function body (or of the function when it is not a lambda)."""
    f = spine(e)[1][0]
    f_path = path + arg_path(2, 0)
    return (f_path + (0,), f.body) if isinstance(f, Lambda) else (f_path, f)


def host_maps(e: Expr, path: tuple = ()) -> Iterator[tuple]:
    """Paths of the computing maps that program-level code runs (not inside another loop's
    function): through lets, applied lambdas, and the data of maps and other primitives."""
    if isinstance(e, (Lambda, NatLambda)):
        return
    if isinstance(e, NatApp):
        yield from host_maps(e.fun, path + (0,))
        return
    head, args = spine(e)
    n = len(args)
    if isinstance(head, Lambda):  # an applied lambda: its body runs here
        yield from host_maps(head.body, path + (0,) * n + (0,))
        for k, a in enumerate(args):
            yield from host_maps(a, path + arg_path(n, k))
        return
    if not isinstance(head, Prim):
        return
    if computing_map(e):
        yield path
        yield from host_maps(args[1], path + arg_path(2, 1))
        return
    for k, a in enumerate(args):
        if head.name == "let" and k == 1 and isinstance(a, Lambda):
            yield from host_maps(a.body, path + arg_path(n, k) + (0,))
        elif not isinstance(a, Lambda):
            yield from host_maps(a, path + arg_path(n, k))


def _chain(e: Expr, path: tuple) -> list[tuple]:
    """The paths of a perfect nest of maps starting at `path` (at least the map itself)."""
    out = [path]
    node = at_path(e, path)
    while _perfectly_nested(node) and len(out) < 3:
        inner_path, inner = _function_body_path(node, out[-1])
        if not computing_map(inner):
            break
        out.append(inner_path)
        node = inner
    return out


def group_maps(e: Expr, path: tuple = ()) -> Iterator[tuple]:
    """The first computing maps inside code every item of a group runs (`e` at `path`):
    through lambdas, lets, reductions' functions and data, not into a map's function."""
    if isinstance(e, (Lambda, NatLambda)):
        yield from group_maps(e.body, path + (0,))
        return
    if isinstance(e, NatApp):
        yield from group_maps(e.fun, path + (0,))
        return
    if isinstance(e, App) and not isinstance(spine(e)[0], Prim):
        head, args = spine(e)
        yield from group_maps(head, path + (0,) * len(args))
        for k, a in enumerate(args):
            yield from group_maps(a, path + arg_path(len(args), k))
        return
    head, args = spine(e)
    if not isinstance(head, Prim):
        return
    if computing_map(e):
        yield path
        yield from group_maps(args[1], path + arg_path(2, 1))
        return
    if head.name in ("map_seq", "map_seq_unroll", "map_global", "map_workgroup", "map_local"):
        return
    for k, a in enumerate(args):
        yield from group_maps(a, path + arg_path(len(args), k))


def _locals(e: Expr, path: tuple, dims: tuple[int, ...]) -> list[Step]:
    """map_local dims[0] over the first maps inside the node at `path`, dims[1] inside those."""
    out: list[Step] = []
    for p in group_maps(at_path(e, path), path):
        out.append(Step("lower_map_local", p, (("d", dims[0]),)))
        if len(dims) > 1:
            inner_path, _ = _function_body_path(at_path(e, p), p)
            out += _locals(e, inner_path, dims[1:])
    return out


def _global(paths: list[tuple], dims: tuple[int, ...]) -> tuple[Step, ...]:
    return tuple(Step("lower_map_global", p, (("d", d),)) for p, d in zip(paths, dims))


def schemes(e: Expr, path: tuple) -> list[tuple[Step, ...]]:
    """The mapping schemes of the host map at `path` (the module's docstring), the default first."""
    chain = _chain(e, path)
    out: list[tuple[Step, ...]] = [(), _global(chain[:1], (0,))]
    if len(chain) >= 2:
        out += [_global(chain[:2], (1, 0)), _global(chain[:2], (0, 1))]
    if len(chain) >= 3:
        out += [_global(chain[:3], (2, 1, 0)), _global(chain[:3], (0, 1, 2))]
    inner_path, _ = _function_body_path(at_path(e, path), path)
    group = (Step("lower_map_workgroup", path, (("d", 0),)),) + tuple(_locals(e, inner_path, (0,)))
    if len(group) > 1:
        out.append(group)
    if len(chain) >= 2:
        body_path, _ = _function_body_path(at_path(e, chain[1]), chain[1])
        group2 = (Step("lower_map_workgroup", chain[0], (("d", 1),)), Step("lower_map_workgroup", chain[1], (("d", 0),)))
        group2 += tuple(_locals(e, body_path, (1, 0)))
        if len(group2) > 2:
            out.append(group2)
    return out


def mappings(e: Expr) -> list[tuple[Step, ...]]:
    """Every combination of the host maps' schemes (at most MAX_MAPPINGS; the default first).
    A host map inside another host map's data is mapped independently: its own kernel."""
    per_map = [schemes(e, p) for p in host_maps(e)]
    out: list[tuple[Step, ...]] = []
    for combo in itertools.product(*per_map):
        steps = tuple(s for scheme in combo for s in scheme)
        if steps not in out:
            out.append(steps)
        if len(out) >= MAX_MAPPINGS:
            break
    return out or [()]


__all__ = ["MAX_MAPPINGS", "group_maps", "host_maps", "mappings", "schemes"]
