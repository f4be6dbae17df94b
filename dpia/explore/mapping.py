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
    chunks      map_workgroup 0 over the outer map, map_seq over the maps its function runs
                whose own functions run maps, map_local 0 over those (a group's loop over
                a row's chunks, all its items in each: a row per group)
    group 2D    map_workgroup 1 / 0 over a perfect nest of two maps, map_local 1 over the maps
                their function runs and map_local 0 over the maps inside those: where an item of
                local dimension 1 runs one map over views only; then, where that differs, with
                map_local 0 over every map inside them (a tree's stages: the items of local
                dimension 0 pass values to each other, which the storage analysis stores in
                memory they share, functional.storage's ITEMS code)

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
    packing     where an item's function reads panels of the same array transposed (mm's columns
                of B in blocks, after register blocking: rows 4 KB apart per k step), each
                scheme with its accumulator in registers (a k loop of vector FMAs, bound by those
                reads) also with the panels stored transposed first (transposed_panels, as BLAS
                packs them: PoCL mm 1024^3 23 -> 9 ms, 8 x 8 groups)
    intrinsics  where the device offers them (DeviceLimits.intrinsics), each scheme's twin
                with the moves that use them (`intrinsic_steps`): work-group trees whose last
                steps exchange values by warp shuffles (warp_tree)

Besides, for a variant with a register-blocked tile reduction (`tile_schemes`, its own
skeletons, without loop schemes): the tiles in the memory hierarchy, as ELEVATE's mm
schedules place them (functional.schedules.mm_register_blocked):

    tiles       the views (tile_views, untile_views), each reduction over tiles one loop
                copying its elements (copied_sequential_reduction), the accumulator blocked
                like the register blocks (blocked_accumulator), the levels HIERARCHY_LEVELS
                (work-groups 1 / 0, items 1 / 0, a block's loops unrolled; split-k's chunks
                over work-groups 2, their partials left to the default lowering), a group's copies
                in local memory and an item's in private memory, the item's accumulator in
                registers, the group's spread over its items (accumulator_among_items)
    layouts     each local copy as it is or one of COPY_LAYOUTS (local id 0 along its rows,
                vectors, padded or interleaved rows: slots for the vector width, the rows
                of the reshaped copy, the padding, the interleaving), the copies' layouts
                combined (at most MAX_LAYOUTS)
    buffering   each of those also with the group's tile loop double-buffered (double_buffer:
                the next tiles staged into a second buffer while these are used; cp.async
                copies where the device has them), and with each item's k-step loops unrolled
                (unroll_reduce_seq)

Everything no step lowers the default lowering completes: reductions as loops, inner maps as
loops, storage.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping

import attrs

from functional import algebra
from functional.default_lowering import _more_stages, _scalar_values, lowering_sites
from functional.errors import FunctionalError
from functional.expr import App, Expr, Lambda, NatApp, NatLambda, Prim, applied, spine, walk
from functional.primitives import (
    LOOP_MAPS,
    LOW_REDUCTIONS,
    MAPS,
    PARALLEL_MAPS,
    REDUCTIONS,
    has_computation,
)
from functional.schedules import _perfectly_nested
from functional.storage import GROUP, HOST, ITEM, arg_path, function_context, through_views
from functional.strategies import at_path, replace_at
from functional.types import ArrayType

from .algorithmic import Probe, apply_steps, positions, trial_slots
from .moves import (
    MAPPING,
    MOVES,
    computing_map,
    lane_reduction,
    panels_read_transposed,
    parallel_copy,
    reduction_over_tiles,
    saturated_reduce,
    short_constant_loop,
    stored_locally,
    untiled,
)
from .space import Step

MAX_MAPPINGS = 12  # mappings per variant
MAX_LOOP_SCHEMES = 12  # loop schemes per mapping
_LOOPS = MAPS | REDUCTIONS | LOOP_MAPS | LOW_REDUCTIONS | {"iterate", "generate"}


def _function_body_path(e: Expr, path: tuple) -> tuple[tuple, Expr]:
    """The path and node of a map's function body (or of the function when it is not a lambda)."""
    f = spine(e)[1][0]
    f_path = path + arg_path(2, 0)
    return (f_path + (0,), f.body) if isinstance(f, Lambda) else (f_path, f)


def program_level(e: Expr, path: tuple = ()) -> Iterator[tuple[tuple, Expr]]:
    """(path, node) of every primitive application program-level code runs (not inside a
    loop's function), pre-order: through lets, applied lambdas and the data of primitives."""
    if isinstance(e, (Lambda, NatLambda)):
        return
    if isinstance(e, NatApp):
        yield from program_level(e.fun, path + (0,))
        return
    head, args = spine(e)
    n = len(args)
    if isinstance(head, Lambda):  # an applied lambda: its body runs here
        yield from program_level(head.body, path + (0,) * n + (0,))
        for k, a in enumerate(args):
            yield from program_level(a, path + arg_path(n, k))
        return
    if not isinstance(head, Prim):
        return
    yield path, e
    for k, a in enumerate(args):
        if head.name == "let" and k == 1 and isinstance(a, Lambda):
            yield from program_level(a.body, path + arg_path(n, k) + (0,))
        elif not isinstance(a, Lambda) and not (k == 0 and head.name in _LOOPS):
            yield from program_level(a, path + arg_path(n, k))


def host_maps(e: Expr, path: tuple = ()) -> Iterator[tuple]:
    """Paths of the computing maps that program-level code runs (not inside another loop's
    function): through lets, applied lambdas, and the data of maps and other primitives."""
    return (p for p, node in program_level(e, path) if computing_map(node))


def nest_depth(e: Expr) -> int:
    """How many dimensions a global launch of `e`'s program-level maps may have: the longest
    perfect nest of them (1 to 3; 1 without maps), as the global schemes map them."""
    return max((len(_chain(e, p)) for p in host_maps(e)), default=1)


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


def _locals(e: Expr, path: tuple, dims: tuple[int, ...], stages: bool = False) -> list[Step]:
    """map_local dims[0] over the first maps inside the node at `path`, dims[1] inside those:
    where an item of dims[0] runs one map over views only (the items of dims[1] then split that
    map and pass nothing to each other), or, with `stages`, over every map it runs (a tree's
    levels, a map reading another map's results: the items of dims[1] pass values to each other
    within one item of dims[0], which functional.storage stores in global memory they share,
    imperative.passes.insert_barriers ordering the stages)."""
    out: list[Step] = []
    for p in group_maps(at_path(e, path), path):
        out.append(Step("lower_map_local", p, (("d", dims[0]),)))
        if len(dims) > 1:
            inner_path, _ = _function_body_path(at_path(e, p), p)
            inner = list(group_maps(at_path(e, inner_path), inner_path))
            if stages or (len(inner) == 1 and not has_computation(spine(at_path(e, inner[0]))[1][1])):
                out += _locals(e, inner_path, dims[1:], stages)
    return out


def _chunks_then_locals(e: Expr, path: tuple, dim: int) -> list[Step]:
    """A work-group's loop over its chunks with the group's items inside each: map_seq over
    the first maps inside the node at `path` whose functions run maps themselves, map_local
    `dim` over those (`_locals`); the first maps without maps inside stay map_local.  The
    chunks of a row a work-group reduces (reduce_tree's blocks: one row per group when a
    block is the whole row) then each get all the group's items, not one item each.  Empty
    when no first map has maps inside (the plain group scheme covers it)."""
    out: list[Step] = []
    deeper = False
    for p in group_maps(at_path(e, path), path):
        body_path, _ = _function_body_path(at_path(e, p), p)
        inner = _locals(e, body_path, (dim,))
        if inner:
            out += [Step("lower_map_seq", p), *inner]
            deeper = True
        else:
            out.append(Step("lower_map_local", p, (("d", dim),)))
    return out if deeper else []


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
    through = through_views(e, inner_path) if len(chain) == 1 else None
    if through is not None:  # one map inside the function, under views only (mm's blocks): a 2D launch all the same
        out.append(_global(chain[:1], (1,)) + (Step("lower_map_global", through, (("d", 0),)),))
    group = (Step("lower_map_workgroup", path, (("d", 0),)),) + tuple(_locals(e, inner_path, (0,)))
    if len(group) > 1:
        out.append(group)
    chunked = _chunks_then_locals(e, inner_path, 0)
    if chunked:
        out.append(group[:1] + tuple(chunked))
    if len(chain) >= 2:
        body_path, _ = _function_body_path(at_path(e, chain[1]), chain[1])
        group2 = (Step("lower_map_workgroup", chain[0], (("d", 1),)), Step("lower_map_workgroup", chain[1], (("d", 0),)))
        for stages in (False, True):
            scheme = group2 + tuple(_locals(e, body_path, (1, 0), stages))
            if len(scheme) > 2 and scheme not in out:
                out.append(scheme)
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
    return (p for p, node in program_level(e, path) if saturated_reduce(node))


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


def mapped_replay(replay: Callable[[Mapping[str, int]], Expr | None], variant: Expr,
                  mapping: tuple[Step, ...]) -> Callable[[Mapping[str, int]], Expr | None]:
    """`replay` (a stage 1 variant at other slot values) with the mapping's maps relabelled
    as they are in the variant (`relabelled`), each values once: the moves loop_schemes
    probes after a first one (a further tree stage over a second program-level reduction)
    test sites that read parallel maps, which the unmapped replay does not have.  None
    where a step's node is not the variant's primitive there (other values, another shape)."""
    heads = {step.path: spine(at_path(variant, step.path))[0] for step in mapping}
    memo: dict = {}

    def at_values(values: Mapping[str, int]) -> Expr | None:
        key = tuple(sorted(values.items()))
        if key not in memo:
            e = replay(values)
            try:
                same = e is not None and all(spine(at_path(e, path))[0] == head for path, head in heads.items())
            except (IndexError, AttributeError):
                same = False
            memo[key] = relabelled(e, mapping) if same else None
        return memo[key]

    return at_values


def _default_splits(node: Expr) -> bool:
    """Whether the default lowering's reductions phase would run this program-level
    reduction in parallel stages (split_reduction's and two_stage_reduction's own tests,
    without running them): scalars, an associative operator, a length worth splitting."""
    args = applied(node, "reduce", 3)
    return (args is not None and _scalar_values(node.t) and algebra.associative(args[0])
            and isinstance(args[2].t, ArrayType) and _more_stages(args[2].t.size, 0))


def _reduction_options(e: Expr, path: tuple, sizes: Mapping[str, int], slots: Mapping,
                       probe: Probe | None = None) -> list[tuple]:
    """(steps, new slots) for the program-level reduction at `path`, the default first; a
    further tree stage's lengths probed on `probe` (the reduction at other slot values)."""
    node = at_path(e, path)
    out: list[tuple] = [((), {})]
    if _default_splits(node):
        out.append(((Step("lower_reduce_seq", path),), {}))
    tree = MOVES["reduce_tree_stage"]
    if tree.site(node):
        drawn = trial_slots(tree, node, sizes, slots, len(slots), probe)
        if drawn is not None:
            step = Step(tree.name, path, (), tuple((p, name) for p, (name, _) in drawn.items()))
            out.append(((step,), {name: slot for name, slot in drawn.values()}))
    return out


def _item_loops(e: Expr) -> list[tuple[tuple, str]]:
    """(path, rule) of the high-level maps and reductions one work-item runs: what the
    default lowering would make map_seq or reduce_seq (program-level reductions left out)."""
    host = set(host_reductions(e))
    return [(path, rule) for path, rule, _ in lowering_sites(e)
            if rule in ("lower_map_seq", "lower_reduce_seq") and path not in host]


def _unroll_options(e: Expr, loops: list[tuple[tuple, str]] | None = None) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """(reductions, maps): the reductions of a vector's lanes and the short constant maps one
    work-item runs, as unrolling steps (short at the slots' trial values: the move keeps a
    loop the point's values make long a plain loop).  `loops`: _item_loops(e), when known."""
    maps, reductions = [], []
    for path, rule in (_item_loops(e) if loops is None else loops):
        node = at_path(e, path)
        if rule == "lower_map_seq" and short_constant_loop(node):
            maps.append(Step("lower_map_seq_unroll", path))
        elif rule == "lower_reduce_seq" and lane_reduction(node):
            reductions.append(Step("lower_reduce_seq_unroll", path))
    return tuple(reductions), tuple(maps)


def _accumulator_options(e: Expr, sizes: Mapping[str, int], slots: Mapping,
                         loops: list[tuple[tuple, str]] | None = None, replay=None) -> list[tuple]:
    """(steps before unrolling, steps after, new slots) for the outermost reduction one
    work-item runs into a constant-shaped 2D accumulator: as the default lowering leaves it;
    vectorised (vectorize_accumulator, w a slot) and in registers; in registers.  `loops`:
    _item_loops(e), when known; `replay`: as loop_schemes'."""
    out: list[tuple] = [((), (), {})]
    found = next((p for p, rule in (_item_loops(e) if loops is None else loops) if rule == "lower_reduce_seq"
                  and MOVES["accumulator_registers"].site(at_path(e, p))), None)
    if found is None:
        return out
    vector = MOVES["vectorize_accumulator"]
    drawn = trial_slots(vector, at_path(e, found), sizes, slots, len(slots), _probe(replay, (), found))
    if drawn is not None:
        step = Step(vector.name, found, (), tuple((p, name) for p, (name, _) in drawn.items()))
        out.append(((step,), (Step("accumulator_registers", found),), {n: s for n, s in drawn.values()}))
    out.append(((), (Step("accumulator_registers", found),), {}))
    return out


def _host_options(e: Expr, sizes: Mapping[str, int], slots: Mapping,
                  replay=None) -> list[tuple[tuple[Step, ...], dict]]:
    """Every combination of the options of the program-level reductions (innermost first,
    so the paths of the others stay valid; at most MAX_LOOP_SCHEMES), the default first;
    `replay`: as loop_schemes'."""
    values = {name: slot.trial for name, slot in slots.items()}
    paths = list(reversed(list(host_reductions(e))))
    partial: list[tuple[Expr | None, tuple[Step, ...], dict]] = [(e, (), {})]
    for k, path in enumerate(paths):
        grown = []
        for expr, steps, new in partial:
            for option, drawn in _reduction_options(expr, path, sizes, {**slots, **new}, _probe(replay, steps, path)):
                # the last reduction's result is not read again: not rewritten (each option's
                # site test holds its rules' preconditions: reads_parallel_stage)
                done = apply_steps(expr, option, values | {n: s.trial for n, s in drawn.items()}) \
                    if k + 1 < len(paths) else expr
                if done is not None:
                    grown.append((done, steps + option, {**new, **drawn}))
        partial = grown[:MAX_LOOP_SCHEMES]
    return [(steps, new) for _, steps, new in partial]


def loop_schemes(e: Expr, sizes: Mapping[str, int], slots: Mapping,
                 replay: Callable[[Mapping[str, int]], Expr | None] | None = None) -> list[tuple[tuple[Step, ...], dict]]:
    """(steps, new slots) of the loop schemes of a mapped variant (the module's docstring),
    the default first, at most MAX_LOOP_SCHEMES: the accumulator's options (one in registers
    with the maps over it unrolled: registers need constant indices), else no unrolling,
    the short reductions or the short maps unrolled; each with every combination of the
    program-level reductions' options (their paths are outside the code one item runs, so
    what the item's loops become does not move them).  `replay`, where given, derives the
    variant `e` at other slot values (mapped_replay: its mapping moves no node): the lengths
    of a further tree stage or a vectorised accumulator that earlier slots determine (the
    partial results of a tree whose block is s0) are probed on it (trial_slots)."""
    host = _host_options(e, sizes, slots, replay)
    loops = _item_loops(e)  # once for `e` (the options without a first step unroll `e` itself)
    out: list[tuple[tuple[Step, ...], dict]] = []
    for before, after, acc_slots in _accumulator_options(e, sizes, slots, loops, replay):
        vectorised = apply_steps(e, before, {name: slot.trial for name, slot in {**slots, **acc_slots}.items()})
        if vectorised is None:
            continue
        reductions, maps = _unroll_options(vectorised, loops if vectorised is e else None)
        unrolls = [maps] if after else list(dict.fromkeys(o for k, o in enumerate(((), reductions, maps)) if k == 0 or o))
        if after and not maps:
            continue
        for unroll in unrolls:
            out += [(before + unroll + after + steps, {**acc_slots, **new}) for steps, new in host]
    out = out[:MAX_LOOP_SCHEMES]
    packing = _packing_step(e)
    if packing is not None:  # a scheme with its accumulator in registers, then its twin with the panels packed
        out = [scheme for steps, new in out for scheme in ((steps, new),) + (
            ((steps + (packing,), new),) if any(s.move == "accumulator_registers" for s in steps) else ())]
    return out


def _packing_step(e: Expr) -> Step | None:
    """transposed_panels at the outermost program-level map whose function reads panels
    transposed (moves.panels_read_transposed), or None."""
    found = next((path for path, node in program_level(e) if panels_read_transposed(node)), None)
    return Step("transposed_panels", found) if found is not None else None


def intrinsic_steps(e: Expr, intrinsics: frozenset) -> tuple[Step, ...]:
    """The moves that use device intrinsics (a Move's `needs`) the device offers, at every
    place of `e` (a mapped variant after its loop schemes, at its slots' trial values) where
    they apply: a work-group tree's last steps in a warp's registers (warp_tree).  Empty where
    none applies or the device offers none: such a skeleton is the scheme's twin with them."""
    if "warp_shuffle" not in intrinsics or any(
            isinstance(x, Prim) and x.name == "map_local" and x.params[0] != 0 for x in walk(e)):
        return ()  # a warp's lanes are the first items of a one-dimensional work-group
    where = contexts(e)
    steps: list[Step] = []
    for move in MOVES.values():
        if move.stage == MAPPING and move.needs and move.needs <= intrinsics:
            # a tree a work-group's items run together (not one inside an item's own code)
            e, _ = _everywhere(e, move.name, steps, where=lambda path: where.get(path) == GROUP)
    return tuple(steps)


__all__ = ["MAX_LOOP_SCHEMES", "MAX_MAPPINGS", "apply_steps", "group_maps", "host_maps", "host_reductions",
           "item_steps_unrolled", "intrinsic_steps", "loop_schemes", "mapped_replay", "mappings", "program_level",
           "schemes"]


# ---------------------------------------------------------- tiles in the memory hierarchy

# The levels of a register-blocked tiling, outermost first: the tiles' rows and columns over
# work-groups, a tile's blocks over the group's items, a block's rows and columns unrolled
# (its values in registers).  A level of None: the move takes no OpenCL dimension.
HIERARCHY_LEVELS: tuple[tuple[str, int | None], ...] = (
    ("lower_map_workgroup", 1), ("lower_map_workgroup", 0), ("lower_map_local", 1), ("lower_map_local", 0),
    ("lower_map_seq_unroll", None), ("lower_map_seq_unroll", None))


def _everywhere(e: Expr, move: str, steps: list[Step], where=None) -> tuple[Expr, int]:
    """The move at every node where its site test holds and its rules apply (`where(path)`
    too, when given), innermost and last first so that the other places' paths stay valid;
    each application appended to `steps`.  The rewritten program and how many applied."""
    test = MOVES[move].site
    places = [p for p, node in positions(e) if node.t is not None and test(node) and (where is None or where(p))]
    applied_here = 0
    for path in reversed(places):
        step = Step(move, path)
        done = apply_steps(e, (step,), {})
        if done is not None:
            e, applied_here = done, applied_here + 1
            steps.append(step)
    return e, applied_here


def hierarchy_steps(e: Expr, levels=HIERARCHY_LEVELS, path: tuple = (), depth: int = 0) -> list[Step]:
    """The computing maps as ELEVATE's `parallel(levels)` places them (schedules.parallel):
    each outermost computing map at `levels[depth]`, the maps its function computes one
    level deeper, the maps producing its data at the same level; beyond the levels map_seq."""
    if computing_map(e, saturated=False):
        _, args = spine(e)
        move, dim = levels[depth] if depth < len(levels) else ("lower_map_seq", None)
        out = [Step(move, path, (("d", dim),) if dim is not None else ())]
        f_path = path + arg_path(len(args), 0)
        f = args[0]
        out += hierarchy_steps(f.body, levels, f_path + (0,), depth + 1) if isinstance(f, Lambda) else \
            hierarchy_steps(f, levels, f_path, depth + 1)
        if len(args) == 2:
            out += hierarchy_steps(args[1], levels, path + arg_path(2, 1), depth)
        return out
    return [s for k, c in enumerate(e.children()) for s in hierarchy_steps(c, levels, path + (k,), depth)]


def blocked_hierarchy_steps(e: Expr) -> list[Step]:
    """hierarchy_steps for each outermost computing map holding a register-blocked tile
    reduction (as a loop, after copied_sequential_reduction), its perfect nest of maps over work-groups (HIERARCHY_LEVELS; a nest of three,
    the chunks of a split-k over the tiles, with work-group dimension 2 outermost); the other
    maps are left to the default lowering (a split-k's partials, reduced per element)."""
    out: list[Step] = []
    for path in host_maps(e):
        node = at_path(e, path)
        if not any(isinstance(x, Prim) and x.name == "reduce_seq" for x in walk(node)):
            continue  # no tile loop (copied_sequential_reduction's) in it
        groups = group_chain(node)
        if groups == 3:
            out += hierarchy_steps(node, (("lower_map_workgroup", 2),) + HIERARCHY_LEVELS, path)
        elif groups == 2:
            out += hierarchy_steps(node, HIERARCHY_LEVELS, path)
    return out


def group_chain(e: Expr) -> int:
    """How many computing maps nest perfectly from `e`: each map's function body, under
    layout views only (storage.through_views), the next."""
    count = 0
    while computing_map(e):
        count += 1
        f = spine(e)[1][0]
        inner = through_views(f.body, ()) if isinstance(f, Lambda) else None
        if inner is None:
            break
        e = at_path(f.body, inner)
    return count


def contexts(e: Expr) -> dict[tuple, str]:
    """Where each node runs (functional.storage's contexts), by path: HOST at the top, GROUP
    inside a map_workgroup's function, ITEM inside a map_local's or map_global's."""
    out: dict[tuple, str] = {}
    functions: dict[tuple, str] = {}  # a parallel map's function -> the context it runs in
    stack: list[tuple[Expr, tuple, str]] = [(e, (), HOST)]
    while stack:
        node, path, ctx = stack.pop()
        ctx = functions.get(path, ctx)
        out[path] = ctx
        head, args = spine(node)
        if isinstance(head, Prim) and head.name in PARALLEL_MAPS and len(args) == 2:
            functions[path + arg_path(2, 0)] = function_context(ctx, head.name)
        stack += [(c, path + (k,), ctx) for k, c in enumerate(node.children())]
    return out


def tile_schemes(e: Expr, sizes: Mapping[str, int], slots: Mapping,
                 replay: Callable[[Mapping[str, int]], Expr | None] | None = None,
                 intrinsics: frozenset = frozenset()) -> list[tuple[tuple[Step, ...], dict]]:
    """(steps, new slots) placing register-blocked tiles in the memory hierarchy, where a
    variant has them (the rules' own preconditions decide; nothing else is matched):

        views       tile reductions' k-wide tiles and 2D tilings' layout maps as whole-array views
                    (tile_views, untile_views)
        loops       each reduction over tiles one loop, its elements copied once per step
                    (copied_sequential_reduction)
        blocks      an accumulator updated by register blocks blocked the same way
                    (blocked_accumulator; without one, no scheme: the hierarchy gives each item a block)
        mapping     the levels of HIERARCHY_LEVELS (work-groups 1 / 0, items 1 / 0, unrolled loops)
        storage     copies a group makes in local memory, an item's in private memory
                    (store_copies_local / _private); an item's constant accumulator in registers
                    (accumulator_registers); a group's 2D accumulator spread over its items
                    (accumulator_among_items)
        buffering   each scheme also with the group's tile loop double-buffered (double_buffer),
                    where the device has asynchronous copies (`intrinsics`) also with its stagings
                    issued as such (async_staging)
        unrolling   each scheme also with its items' k-step loops replicated (unroll_reduce_seq),
                    and with both (unrolled, then double-buffered)

    Empty where a variant has no register-blocked tile reduction.  `replay`, where given,
    derives the variant (`e`) at other values of its slots: the layouts' lengths are probed
    on it (trial_slots)."""
    if not blocked_tile_reduction(e):
        return []  # no rule application needed to know: blocked_accumulator could apply nowhere
    steps: list[Step] = []
    e, _ = _everywhere(e, "tile_views", steps)
    e, copied = _everywhere(e, "copied_sequential_reduction", steps)
    if not copied:
        return []
    e, _ = _everywhere(e, "untile_views", steps)
    e, blocked = _everywhere(e, "blocked_accumulator", steps)
    if not blocked:
        return []
    levels = tuple(blocked_hierarchy_steps(e))
    e = apply_steps(e, levels, {}) if levels else None
    if e is None:
        return []
    steps += levels
    where = contexts(e)
    e, _ = _everywhere(e, "store_copies_local", steps, lambda p: where.get(p) == GROUP)
    e, _ = _everywhere(e, "store_copies_private", steps, lambda p: where.get(p) == ITEM)
    where = contexts(e)
    e, _ = _everywhere(e, "accumulator_registers", steps,
                       lambda p: where.get(p) == ITEM and sequential_at(e, p))
    # the group's accumulator contains the copies: its place is the same whatever their layouts
    where = contexts(e)
    spread: list[Step] = []
    spread_e, _ = _everywhere(e, "accumulator_among_items", spread, lambda p: where.get(p) == GROUP)
    # each scheme's twins: the group's tile loop double-buffered (the next tiles copied while these are used),
    # an item's k-steps unrolled (its loop over a tile's k replicated: straight-line code the OpenCL
    # compiler schedules across steps), and both; each double-buffered one also by asynchronous copies where
    # the device has them; the copies' layouts leave those loops where they are
    twins: list[tuple[Step, ...]] = [()]
    unrolled = item_steps_unrolled(spread_e)
    for twin in ((DOUBLE_BUFFER,), unrolled, unrolled + (DOUBLE_BUFFER,) if unrolled else ()):
        if twin and (done := apply_steps(spread_e, twin, {})) is not None:
            twins.append(twin)
            if DOUBLE_BUFFER in twin and (asynchronous := async_stagings(done, intrinsics)):
                twins.append(twin + asynchronous)
    placed = _memoised(lambda values: _replayed(replay, tuple(steps), values)) if replay is not None else None
    return [(tuple(steps) + layout + tuple(spread) + twin, new_slots)
            for layout, new_slots in layouts(e, sizes, slots, placed) for twin in twins]


DOUBLE_BUFFER = Step("double_buffer", ())


def async_stagings(e: Expr, intrinsics: frozenset) -> tuple[Step, ...]:
    """async_staging at each double-buffered fold of `e` where the device has asynchronous copies
    (a Move's `needs`), innermost first (as _everywhere); else none."""
    move = MOVES["async_staging"]
    if not move.needs <= intrinsics:
        return ()
    return tuple(Step(move.name, p) for p, node in reversed(list(positions(e))) if move.site(node))


def item_steps_unrolled(e: Expr) -> tuple[Step, ...]:
    """unroll_reduce_seq at each sequential reduction a work-item runs over a constant number of at
    most UNROLL_LIMIT elements (a register-blocked tile's k-steps), innermost first (as _everywhere)."""
    where = contexts(e)
    site = MOVES["unroll_reduce_seq"].site
    return tuple(Step("unroll_reduce_seq", p) for p, node in reversed(list(positions(e)))
                 if node.t is not None and where.get(p) == ITEM and site(node))


def _memoised(f: Callable[[Mapping[str, int]], Expr | None]) -> Callable[[Mapping[str, int]], Expr | None]:
    """`f` of slot values, computed once per values (a probe replays many steps)."""
    memo: dict = {}

    def remembered(values: Mapping[str, int]) -> Expr | None:
        key = tuple(sorted(values.items()))
        if key not in memo:
            memo[key] = f(values)
        return memo[key]

    return remembered


def _replayed(replay, steps: tuple[Step, ...], values: Mapping[str, int]) -> Expr | None:
    """`steps` on the variant `replay` derives at these values; None where one does not apply."""
    try:
        e = replay(values)
        return apply_steps(e, steps, values) if e is not None else None
    except (FunctionalError, ValueError):  # a rule refusing the values (as stage 1's _apply)
        return None


# A local copy's layouts, as moves at the copy (`to_local C`, C the parallel copy at +1):
# which local id walks its rows (swap_local_dims), vectors (vectorized_copy; along the other
# dimension after interchange_parallel), padded rows, interleaved rows.  Each a list of
# (move, where: "store" the to_local, "copy" C, "inner" C's map after interchange_parallel).
COPY_LAYOUTS: tuple[tuple[tuple[str, str], ...], ...] = (
    (),
    (("swap_local_dims", "copy"),),
    (("vectorized_copy", "copy"),),
    (("swap_local_dims", "copy"), ("pad_local_rows", "store")),
    (("swap_local_dims", "copy"), ("interchange_parallel", "copy"), ("vectorized_copy", "inner")),
    (("interleave_local_rows", "store"),),
    (("vectorized_copy", "copy"), ("interleave_local_rows", "store")),
)
MAX_LAYOUTS = 64  # layout combinations per register-blocked variant


def local_copies(e: Expr) -> list[tuple]:
    """Paths of the copies a work-group stores in local memory (`to_local` of a parallel copy)."""
    return [p for p, node in positions(e) if node.t is not None and stored_locally(node)
            and parallel_copy(applied(node, "to_local", 1)[0])]


def layouts(e: Expr, sizes: Mapping[str, int], slots: Mapping,
            replay: Callable[[Mapping[str, int]], Expr | None] | None = None) -> list[tuple[tuple[Step, ...], dict]]:
    """(steps, new slots) of the layouts of the local copies (COPY_LAYOUTS each, combined; the
    default first, at most MAX_LAYOUTS): each layout's moves where their rules apply, their
    parameters slots drawn like stage 1's (divisors of the lengths they split; probed on
    `replay`, `e` derived at other slot values, where given)."""
    per_copy = []
    for path in local_copies(e):
        options: list[tuple[tuple[Step, ...], dict]] = []
        for layout in COPY_LAYOUTS:
            option = _copy_layout(e, path, layout, sizes, {**slots}, len(slots), replay)
            if option is not None:
                options.append(option)
        per_copy.append(options)
    out: list[tuple[tuple[Step, ...], dict]] = []
    for combo in itertools.product(*per_copy):  # the copies are disjoint: their layouts combine
        steps: tuple[Step, ...] = ()
        new: dict = {}
        for option_steps, option_slots in combo:
            renamed = _renamed_slots(option_steps, option_slots, len(slots) + len(new))
            steps += renamed[0]
            new.update(renamed[1])
        out.append((steps, new))
        if len(out) >= MAX_LAYOUTS:
            break
    return out or [((), {})]


def _renamed_slots(steps: tuple[Step, ...], new: dict, first: int) -> tuple[tuple[Step, ...], dict]:
    """The option's slots renumbered from s{first} (each copy's options drew theirs from the same start)."""
    names = {old: f"s{first + k}" for k, old in enumerate(sorted(new, key=lambda n: int(n[1:])))}
    return (tuple(attrs.evolve(s, slots=tuple((p, names.get(v, v)) for p, v in s.slots)) for s in steps),
            {names[n]: attrs.evolve(slot, divides=names.get(slot.divides, slot.divides) if slot.divides else None,
                                    length=slot.length.renamed(names) if slot.length else None)
             for n, slot in new.items()})


def _copy_layout(e: Expr, path: tuple, layout, sizes, slots: dict, first: int,
                 replay: Callable[[Mapping[str, int]], Expr | None] | None = None):
    """The layout's steps at the copy at `path` with their new slots, or None where a move
    does not apply (at the trial values); each move's lengths probed on `replay` (`e` at
    other slot values) with the layout's earlier steps, where given."""
    steps: list[Step] = []
    new: dict = {}
    places = {"store": path, "copy": path + (1,), "inner": path + (1, 1)}
    for move, where in layout:
        node_path = places[where]
        try:
            node = at_path(e, node_path)
        except (IndexError, AttributeError):
            return None
        spec = MOVES[move]
        if node.t is None or not spec.site(node):
            return None
        drawn = trial_slots(spec, node, sizes, {**slots, **new}, first + len(new),
                            _probe(replay, tuple(steps), node_path)) if spec.tuned else {}
        if drawn is None:
            return None
        step = Step(move, node_path, (), tuple((p, name) for p, (name, _) in drawn.items()))
        new.update({name: slot for name, slot in drawn.values()})
        done = apply_steps(e, (step,), {n: s.trial for n, s in {**slots, **new}.items()})
        if done is None:
            return None
        e = done
        steps.append(step)
    return tuple(steps), new


def _probe(replay, steps: tuple[Step, ...], path: tuple) -> Probe | None:
    """The node at `path` after `steps`, on `replay` at other slot values."""
    if replay is None:
        return None
    steps = bearing_on(steps, path)

    def node_at(values: Mapping[str, int]) -> Expr | None:
        e = _replayed(replay, steps, values)
        try:
            return at_path(e, path) if e is not None else None
        except (IndexError, AttributeError):
            return None

    return node_at


def bearing_on(steps: tuple[Step, ...], path: tuple) -> tuple[Step, ...]:
    """The steps that can change the node at `path`: those at a place containing it or inside
    it, and those a later such step rewrites again.  A step elsewhere (another program-level
    reduction's tree stage) leaves the node as it is, so a probe need not replay it."""
    kept: list[Step] = []
    places = [path]
    for step in reversed(steps):
        if any(_overlap(step.path, place) for place in places):
            kept.append(step)
            places.append(step.path)
    return tuple(reversed(kept))


def _overlap(a: tuple, b: tuple) -> bool:
    return a[:len(b)] == b or b[:len(a)] == a


def blocked_tile_reduction(e: Expr) -> bool:
    """Whether a reduction over tiles computes its elements with a 2D tiling (`join (map
    ...)` in the function of the map producing them): blocked_accumulator's precondition,
    the step adds untiled blocks, can hold only there.  A structural test (no rule runs), so
    the variants without one cost nothing."""


    for node in walk(e):
        if reduction_over_tiles(node):
            g = spine(applied(node, "reduce", 3)[2])[1][0]
            if any(untiled(inner) for inner in walk(g)):
                return True
    return False


def sequential_at(e: Expr, path: tuple) -> bool:
    node = at_path(e, path)
    return applied(node, "reduce_seq", 3) is not None


__all__ += ["COPY_LAYOUTS", "HIERARCHY_LEVELS", "MAX_LAYOUTS", "contexts", "hierarchy_steps", "layouts", "local_copies", "tile_schemes"]
