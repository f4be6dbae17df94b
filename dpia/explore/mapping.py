"""Stage 2, mapping: for a variant of stage 1, the assignments of its maps to OpenCL.

For every map that program-level code runs (`host_maps`), the schemes (Lift's mapCombinations):

    (none)      the default lowering decides (map_global over the outermost maps)
    global      map_global 0; for a perfect nest of 2 or 3 maps every order of the dimensions
                (global 1 / 0 and 0 / 1; 2 / 1 / 0 and 0 / 1 / 2); a map whose function runs
                one map under layout views only (mm's blocks: `map join (transpose (map
                ...))`): global 1 over it, global 0 over that map
    group       map_workgroup 0 over the outer map, map_local 0 over every map its function runs
                (the items of a group share what the group stores: local memory, chosen by the
                default lowering's storage analysis)
    group 2D    map_workgroup 1 / 0 over a perfect nest of two maps, map_local 1 over the maps
                their function runs and map_local 0 over the maps inside those

Several host maps combine (each scheme with each, at most MAX_MAPPINGS).

Then, for each mapping, the loops (`loop_schemes`, at most MAX_LOOP_SCHEMES):

    accumulator the outermost reduction one work-item runs into a constant-shaped 2D array:
                as the default leaves it; in registers (accumulator_registers: copied in and
                out by unrolled loops); vectorised along its rows (vectorize_accumulator, a
                vector width slot) and in registers
    reductions  each reduction program-level code runs: (none) the default lowering's parallel
                stages; `seq` one work-item's loop (lower_reduce_seq; only where the default
                would split it); `tree` where it reduces an earlier parallel stage's results:
                a further stage of work-group trees over them, stored (reduce_tree_stage)
    unrolling   the short constant loops one work-item runs (at most MAX_UNROLL iterations at
                the trial values; a loop a point's values make long stays a loop): none, the
                reductions of a vector's lanes or the maps unrolled; an accumulator in
                registers always with the maps unrolled (registers need constant indices)

Everything no step lowers the default lowering completes: reductions as loops, inner maps as
loops, storage.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

from functional.expr import App, Expr, Lambda, NatApp, NatLambda, Prim, applied, spine
from functional.primitives import LAYOUT, LOOP_MAPS, LOW_REDUCTIONS, MAPS, REDUCTIONS, is_view_fn
from functional.schedules import _perfectly_nested
from functional.storage import arg_path
from functional.strategies import at_path, replace_at
from functional.types import ArrayType

from .moves import MOVES, computing_map, lane_reduction, saturated_reduce, short_constant_loop
from .space import Step, at

MAX_MAPPINGS = 12  # mappings per variant
MAX_LOOP_SCHEMES = 12  # loop schemes per mapping
_LOOPS = MAPS | REDUCTIONS | LOOP_MAPS | LOW_REDUCTIONS | {"iterate", "generate"}


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


def _through_views(e: Expr, path: tuple) -> tuple | None:
    """The path of the computing map the node at `path` is, under layout views only
    (`map join (transpose (map g ys))`: every element of its result is one of the map's),
    else None: an item computing more than the map would read other items' results."""
    node = at_path(e, path)
    while True:
        if computing_map(node):
            return path
        head, args = spine(node)
        if not (isinstance(head, Prim) and args) or not (
                head.name in LAYOUT or (head.name == "map" and len(args) == 2 and is_view_fn(args[0]))):
            return None
        path, node = path + arg_path(len(args), len(args) - 1), args[-1]


def schemes(e: Expr, path: tuple) -> list[tuple[Step, ...]]:
    """The mapping schemes of the host map at `path` (the module's docstring), the default first."""
    chain = _chain(e, path)
    out: list[tuple[Step, ...]] = [(), _global(chain[:1], (0,))]
    if len(chain) >= 2:
        out += [_global(chain[:2], (1, 0)), _global(chain[:2], (0, 1))]
    if len(chain) >= 3:
        out += [_global(chain[:3], (2, 1, 0)), _global(chain[:3], (0, 1, 2))]
    inner_path, _ = _function_body_path(at_path(e, path), path)
    through = _through_views(e, inner_path) if len(chain) == 1 else None
    if through is not None:  # one map inside the function, under views only (mm's blocks): a 2D launch all the same
        out.append(_global(chain[:1], (1,)) + (Step("lower_map_global", through, (("d", 0),)),))
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


# ------------------------------------------------------------------------------ loops


def host_reductions(e: Expr, path: tuple = ()) -> Iterator[tuple]:
    """Paths of the saturated `reduce` nodes program-level code runs (not inside a loop's
    function), pre-order: through lets, applied lambdas and the data of primitives."""
    if isinstance(e, (Lambda, NatLambda)):
        return
    if isinstance(e, NatApp):
        yield from host_reductions(e.fun, path + (0,))
        return
    head, args = spine(e)
    n = len(args)
    if isinstance(head, Lambda):
        yield from host_reductions(head.body, path + (0,) * n + (0,))
        for k, a in enumerate(args):
            yield from host_reductions(a, path + arg_path(n, k))
        return
    if not isinstance(head, Prim):
        return
    if saturated_reduce(e):
        yield path
    for k, a in enumerate(args):
        if head.name == "let" and k == 1 and isinstance(a, Lambda):
            yield from host_reductions(a.body, path + arg_path(n, k) + (0,))
        elif not isinstance(a, Lambda) and not (k == 0 and head.name in _LOOPS):
            yield from host_reductions(a, path + arg_path(n, k))


def apply_steps(e: Expr, steps: tuple[Step, ...], values: Mapping[str, int]) -> Expr | None:
    """The steps' moves at their paths, slots at `values`; None where one does not apply."""
    for step in steps:
        params = dict(step.fixed) | {p: values[slot] for p, slot in step.slots}
        result = at(step.path, MOVES[step.move].make(**params), str(step))(e)
        if not result.ok:
            return None
        e = result.expr
    return e


_RENAMES = {"lower_map_global": "map_global", "lower_map_workgroup": "map_workgroup", "lower_map_local": "map_local",
            "lower_map_seq": "map_seq", "lower_reduce_seq": "reduce_seq"}


def relabelled(e: Expr, steps: tuple[Step, ...]) -> Expr:
    """What lowering steps (a map onto OpenCL, a reduction as a loop) make of `e`, for the
    site tests of the moves after them: each step's primitive renamed in place, types kept
    (the rules change no type).  Derivations run the rules themselves; this only saves
    re-inferring the program per mapping while the space is generated."""
    for step in steps:
        target = _RENAMES[step.move]
        node = at_path(e, step.path)
        head, args = spine(node)
        params = tuple(v for _, v in step.fixed)
        e = replace_at(e, step.path + (0,) * len(args), Prim(target, params, t=head.t, origin=head.origin))
    return e


def _default_splits(node: Expr) -> bool:
    """Whether the default lowering's reductions phase would run this program-level
    reduction in parallel stages (split_reduction's and two_stage_reduction's own tests,
    without running them): scalars, an associative operator, a length worth splitting."""
    from functional import algebra
    from functional.default_lowering import _more_stages, _scalar_values

    args = applied(node, "reduce", 3)
    return (args is not None and _scalar_values(node.t) and algebra.associative(args[0])
            and isinstance(args[2].t, ArrayType) and _more_stages(args[2].t.size, 0))


def _reduction_options(e: Expr, path: tuple, sizes: Mapping[str, int], slots: Mapping) -> list[tuple]:
    """(steps, new slots) for the program-level reduction at `path`, the default first."""
    from .algorithmic import trial_slots

    node = at_path(e, path)
    out: list[tuple] = [((), {})]
    if _default_splits(node):
        out.append(((Step("lower_reduce_seq", path),), {}))
    tree = MOVES["reduce_tree_stage"]
    if tree.site(node):
        drawn = trial_slots(tree, node, sizes, slots, len(slots))
        if drawn is not None:
            step = Step(tree.name, path, (), tuple((p, name) for p, (name, _) in drawn.items()))
            out.append(((step,), {name: slot for name, slot in drawn.values()}))
    return out


def _item_loops(e: Expr) -> list[tuple[tuple, str]]:
    """(path, rule) of the high-level maps and reductions one work-item runs: what the
    default lowering would make map_seq or reduce_seq (program-level reductions left out)."""
    from functional.default_lowering import lowering_sites

    host = set(host_reductions(e))
    return [(path, rule) for path, rule, _ in lowering_sites(e)
            if rule in ("lower_map_seq", "lower_reduce_seq") and path not in host]


def _unroll_options(e: Expr) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """(reductions, maps): the reductions of a vector's lanes and the short constant maps one
    work-item runs, as unrolling steps (short at the slots' trial values: the move keeps a
    loop the point's values make long a plain loop)."""
    maps, reductions = [], []
    for path, rule in _item_loops(e):
        node = at_path(e, path)
        if rule == "lower_map_seq" and short_constant_loop(node):
            maps.append(Step("lower_map_seq_unroll", path))
        elif rule == "lower_reduce_seq" and lane_reduction(node):
            reductions.append(Step("lower_reduce_seq_unroll", path))
    return tuple(reductions), tuple(maps)


def _accumulator_options(e: Expr, sizes: Mapping[str, int], slots: Mapping) -> list[tuple]:
    """(steps before unrolling, steps after, new slots) for the outermost reduction one
    work-item runs into a constant-shaped 2D accumulator: as the default lowering leaves it;
    vectorised (vectorize_accumulator, w a slot) and in registers; in registers."""
    from .algorithmic import trial_slots

    out: list[tuple] = [((), (), {})]
    found = next((p for p, rule in _item_loops(e) if rule == "lower_reduce_seq"
                  and MOVES["accumulator_registers"].site(at_path(e, p))), None)
    if found is None:
        return out
    vector = MOVES["vectorize_accumulator"]
    drawn = trial_slots(vector, at_path(e, found), sizes, slots, len(slots))
    if drawn is not None:
        step = Step(vector.name, found, (), tuple((p, name) for p, (name, _) in drawn.items()))
        out.append(((step,), (Step("accumulator_registers", found),), {n: s for n, s in drawn.values()}))
    out.append(((), (Step("accumulator_registers", found),), {}))
    return out


def _host_options(e: Expr, sizes: Mapping[str, int], slots: Mapping) -> list[tuple[tuple[Step, ...], dict]]:
    """Every combination of the options of the program-level reductions (innermost first,
    so the paths of the others stay valid; at most MAX_LOOP_SCHEMES), the default first."""
    values = {name: slot.trial for name, slot in slots.items()}
    paths = list(reversed(list(host_reductions(e))))
    partial: list[tuple[Expr | None, tuple[Step, ...], dict]] = [(e, (), {})]
    for k, path in enumerate(paths):
        grown = []
        for expr, steps, new in partial:
            for option, drawn in _reduction_options(expr, path, sizes, {**slots, **new}):
                # applied at the trial values even for the last reduction (whose result is not
                # read again): an option whose rules refuse the reduction (a tree stage over a
                # tile reduction's accumulator, not associative) is no scheme
                done = apply_steps(expr, option, values | {n: s.trial for n, s in drawn.items()})
                if done is not None:
                    grown.append((done, steps + option, {**new, **drawn}))
        partial = grown[:MAX_LOOP_SCHEMES]
    return [(steps, new) for _, steps, new in partial]


def loop_schemes(e: Expr, sizes: Mapping[str, int], slots: Mapping) -> list[tuple[tuple[Step, ...], dict]]:
    """(steps, new slots) of the loop schemes of a mapped variant (the module's docstring),
    the default first, at most MAX_LOOP_SCHEMES: the accumulator's options (one in registers
    with the maps over it unrolled: registers need constant indices), else no unrolling,
    the short reductions or the short maps unrolled; each with every combination of the
    program-level reductions' options (their paths are outside the code one item runs, so
    what the item's loops become does not move them)."""
    host = _host_options(e, sizes, slots)
    out: list[tuple[tuple[Step, ...], dict]] = []
    for before, after, acc_slots in _accumulator_options(e, sizes, slots):
        vectorised = apply_steps(e, before, {name: slot.trial for name, slot in {**slots, **acc_slots}.items()})
        if vectorised is None:
            continue
        reductions, maps = _unroll_options(vectorised)
        unrolls = [maps] if after else list(dict.fromkeys(o for k, o in enumerate(((), reductions, maps)) if k == 0 or o))
        if after and not maps:
            continue
        for unroll in unrolls:
            out += [(before + unroll + after + steps, {**acc_slots, **new}) for steps, new in host]
    return out[:MAX_LOOP_SCHEMES]


__all__ = ["MAX_LOOP_SCHEMES", "MAX_MAPPINGS", "apply_steps", "group_maps", "host_maps", "host_reductions",
           "loop_schemes", "mappings", "schemes"]
