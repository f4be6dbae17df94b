"""The default lowering: any well-typed high-level program becomes a low-level program that
the DPIA translation accepts.  It is a strategy like any other, so its result is a
derivation of rule steps that prints, stores and replays.

Its phases, in order (`PHASES`):

    tensor_cores
                 on a target with TF32 tensor cores only: a program-level nest of dot products
                 whose products the program rounds to TF32 (`tf32 a * tf32 b`) becomes m16n8k8
                 mma_sync tiles of a work-group's warps (tensor_core_tiles; rules warp_tile_mma
                 and the fragments' copies by their lanes), the first of TENSOR_CORE_TILES that
                 divides; the accumulators stay in the lanes' registers (storage, lane_ownership)
    generate_fusion
                 inside functions, `generate n (fun(k) => reduce f z (map (g k) xs))` becomes one
                 reduction of n-arrays (the banana split below, rule generate_reduce_fusion) before
                 indices turns a generate that reads at its index into a map the rule does not
                 match: N-Body's and MD's three force components in one pass over the bodies (5.4x
                 and 5.2x faster on an H100: 1.76x and 2.20x torch.compile)
    indices      a generate whose index picks elements becomes a map over the arrays it reads
                 (rules.indexing generate_as_map: `generate n (fun(i) => a[i] * b[k][i])` reads
                 as `map (*) (zip a (at b k))`, a[i][k] as column k), so the phases below, and
                 every move of the exploration, see programs written with indices as data flow
    eta          functions of maps as lambdas (the data-flow normal form the later phases read)
    folds        a fold whose step applies an associative operator to the accumulator and a term of
                 the element, `reduce (fun(a, x) => a + abs x) z xs`, is that operator's reduction of
                 a map, `reduce (+) z (map abs xs)` (rules.algorithmic fold_fission), so the
                 reductions phase can run it in parallel stages; a reduction of a concatenation is
                 one of each part, the second from the first's result (reduce_concat), each part's
                 chunks contiguous; a fold over rows a map computes, longer than
                 MAX_FUSED_REDUCTIONS, is interchanged into reductions of columns (reduce_columns:
                 a product written row by row); a short row is a work-item's accumulator (a
                 banana split's n-array) and stays a fold
    hoist        loops inside a map's or reduction's function that are the same for every element
                 are computed once, before it (rules.algorithmic.hoist_invariant)
    neighbourhood_tiles
                 on a lockstep target only (before fuse, which folds the rows' views into the
                 maps): a program-level nest of two maps over neighbourhoods
                 (its data reads through `slide`: neighbouring outputs share inputs: stencils,
                 convolutions) computes n x m outputs per work-item (tile_nest_2d, the first of
                 NEIGHBOURHOOD_TILES that divides the sizes): blocks of n rows on global
                 dimension 1, the m-wide column tiles on dimension 0 (through the tiles' layout
                 views), the tile's maps unrolled, so the device compiler loads each input the
                 tile shares once.  A nest of three maps the same way (tile_nest_3d: 4 planes x
                 2 rows per item, on global 2 / 1 / 0).  On an H100 (benchmarks/
                 explore_generated_h200/session27/probe_tiles*.txt), 8192^2: Jacobi 2D 5-point
                 0.262 -> 0.188 ms (the copy's time), 9-point 0.286 -> 0.183, Hotspot 0.313 ->
                 0.270, 5x5 convolution 0.559 -> 0.218; 512^3: Jacobi 3D 0.534 -> 0.388 (0.96
                 of the copy), Hotspot 3D 0.632 -> 0.539; 27-point 256^3 0.136 -> 0.066 ms
    fuse         producer maps into their consumers (no intermediate arrays between maps)
    banana_split inside functions (code a work-item runs, where a reduction is a loop anyway), a
                 generate of n reductions over one array becomes one reduction of n-arrays, and a
                 pair of reductions over one array one reduction of pairs: one pass that computes
                 what they share once (rules.algorithmic generate_reduce_fusion, pair_reduce_fusion:
                 N-Body's and MD's three force components, MRI-Q's Qr and Qi written apart)
    host_banana_split
                 the same in program-level code, only where functional.algebra proves the fused
                 operator associative (monoid operators, element by element: fused_in_stages), so
                 the reductions phase keeps its parallel stages (any other fused operator would
                 make them sequential).  Not part of the exploration's preparation (its moves
                 offer the fusion there; its tree stages hold scalars): it completes points
    row_reductions
                 on a lockstep target (GPUs) only: a program-level map whose function reduces
                 long contiguous rows of its element, and loops elsewhere only in element-wise
                 maps (softmax, layer normalisation), runs a work-group per element, its items
                 folding interleaved elements of each row, then a tree in local memory
                 (rules.macros tree_reduction; map_workgroup, map_local for the maps too), its
                 last five steps by warp shuffles where the device offers them (warp_tree);
                 the element-wise maps interleaved over the same items (split_join,
                 map_map_interchange) so that the group is as wide as its trees (softmax over
                 16384 rows of 1024 on an H100: 0.178 -> 0.050 ms, the copy's time, with
                 imperative.passes.private_blocks keeping each item's elements in registers); a
                 row the function reads more than once is copied into those registers first
                 where they hold it (_row_in_registers: layer normalisation over rows of 16384
                 0.098 -> 0.052 ms, read from global memory once)
    vector_reductions
                 every reduction a work-item runs (inside a map's function, anywhere in it) over a
                 contiguous row of at least MIN_VECTOR_REDUCTION elements, `reduce f z (map g xs)`,
                 of zips, or `reduce f z xs`, accumulates REDUCTION_WIDTH lanes at once (f add,
                 mul, max or min, or a tuple of them component-wise; g lane-wise: arithmetic, the
                 math built-ins, pairs), the remainder a length leaves folded
                 after: vector reads, no stored products (rules.algorithmic reduce_vectorize_map,
                 reduce_vectorize, reduce_take_drop).  A column of a transpose, a window or a
                 gather is strided and stays scalar
    vector_columns
                 a program-level map over the columns of a transpose (alone or zipped with an
                 array of scalars) computes w neighbouring columns at once, reading w elements
                 of each row as a vector (rules.algorithmic vectorize_columns; exact; w as in
                 vector_maps)
    column_stages
                 a program-level map whose elements each reduce a long strided array (A^T x's
                 columns) computes every element's reductions in chunks of STAGE_ROWS rows first,
                 a 2D launch over chunks x elements, then each element's partial results
                 (rules.algorithmic map_reduce_stages)
    reductions   large program-level reductions in parallel stages of chunks with a guarded
                 remainder, over constant and symbolic lengths, the first stage's chunks read as
                 vectors where the data is contiguous and the operator and map lane-wise; for a
                 target whose work-items run in lockstep (GPUs: Target.lockstep_items) every
                 stage of a commutative operator interleaved instead, neighbouring work-items
                 reading neighbouring elements (split_reduction; else
                 schedules.two_stage_reduction).  Only a reduction whose operator
                 functional.algebra proves associative is split; any other (Chan's merge of
                 mean/variance summaries, a Welford step) keeps the program's order, sequential,
                 unless the program declares it: `reduce (associative f) z xs` (fl.associative)
    vector_maps  a program-level map of scalars over contiguous arrays (or zips of them) whose
                 function is lane-wise computes w elements at once: vector reads, arithmetic and
                 writes (rules.algorithmic vectorize_lanes; w the widest of VECTOR_WIDTHS dividing
                 its length; on a lockstep target at most LOCKSTEP_VECTOR_BYTES per item, so a
                 warp's load stays one transaction: Target.vector_widths)
    eta_stages   a stage of partial reductions of arrays, `map (reduce f z) chunks`, gets a lambda
                 (eta_expand_map) so the store phase stores its operator's arrays
    declarations `associative f` -> f, once the reductions have read it (erase_associative)
    parallelise  maps the host runs -> map_global (map_global 1 / 0 for a perfectly nested map of
                 maps); maps one work-item runs -> map_seq; reduce -> reduce_seq
    store        where the translation reads a value that loops write, the value is stored:
                 to_global on the host, to_private per work-item when it is small, else
                 to_global (one slot per work-item); where it writes a view of readable data
                 (an input, a stored array), a copy loop: map_global on the host, map_seq inside
    check        nothing computing is left high level

Where code runs decides both parallelism and storage.  The contexts:

    HOST      program-level code: the host plan's kernels (parallel loops start here)
    HOST_SEQ  program-level code inside a sequential loop (a reduction's step): one work-item
    GROUP     inside map_workgroup, outside map_local: every item of a group runs it
    ITEM      inside map_global / map_local: one work-item's own code

The store phase mirrors the translation (dpia/translate.py): the acceptor translation `acc`
writes a value into a place, the continuation translation `con` reads it.  `first_need` walks
the program as they would and names the first place where one of them would have to refuse,
with the fix; the phase applies fixes until none is needed.
"""

from __future__ import annotations

import math
from typing import Iterator

import attrs

from .expr import App, Expr, Identifier, Lambda, NatApp, NatLambda, Prim, applied, spine
from .nat import as_nat
from .primitives import is_view_fn
from .rules.core import RULES
from .primitives import LOOP_MAPS, LOW_REDUCTIONS, has_computation, has_low_level
from .storage import HOST, HOST_SEQ, ITEM, PRIVATE_LIMIT, arg_path, enclosing_group_dims, first_need, function_context
from .strategies import Failure, Step, Strategy, Success, at_path, replace_at
from .types import ArrayType, ScalarType, TupleType, VectorType, holds_array



# ---------------------------------------------------------------------- parallelise




def _computing_map(e: Expr) -> bool:
    head, args = spine(e)
    return isinstance(head, Prim) and head.name == "map" and 1 <= len(args) <= 2 and not is_view_fn(args[0])


def _map_nest(e: Expr, path: tuple, dims: int) -> list[tuple[tuple, Expr]]:
    """(path, map) of the perfectly nested maps from the host map `e` inwards, at most `dims`:
    `map (fun(a) => map (fun(b) => map g B) A) xs` with A and B only views (a 3D stencil's
    planes, rows and points) runs as one launch of that many dimensions, the innermost of them
    on dimension 0.  One map when `e` is not nested."""
    nest = [(path, e)]
    while len(nest) < dims:
        outer_path, outer = nest[-1]
        _, args = spine(outer)
        if not _computing_map(outer):
            break
        f, f_path = args[0], outer_path + arg_path(len(args), 0)
        inner, inner_path = (f.body, f_path + (0,)) if isinstance(f, Lambda) else (f, f_path)
        _, iargs = spine(inner)
        if not _computing_map(inner) or (len(iargs) == 2 and has_computation(iargs[1])):
            break
        nest.append((inner_path, inner))
    return nest


def lowering_sites(e: Expr, path: tuple = (), ctx: str = HOST,
                   global_dims: int = 2) -> Iterator[tuple[tuple, str, dict]]:
    """(path, rule, params) for every high-level map and reduce, by where it runs: a host
    map runs in parallel over global ids (a perfect nest of maps over up to `global_dims`
    of them, Target.global_dims), a map or reduction one item runs is a loop."""
    out: list[tuple[tuple, str, dict]] = []
    _sites(e, path, ctx, out, global_dims)
    return iter(out)


def _around_hand_parallel(f: Expr) -> tuple[str, dict] | None:
    """The lowering of a host map whose function holds parallel code written by hand (a
    program lowered in part), None where it holds none: map_global of the lowest dimension
    its map_globals leave free, or map_workgroup of one its map_workgroups leave free where
    the code needs a work-group (map_local, to_local, a warp's reductions or collectives);
    map_seq where neither fits (map_global 0 inside map_global 0 is refused)."""
    from .expr import walk
    from .primitives import COLLECTIVES, WARP_REDUCTIONS

    global_dims, group_dims, group_code = set(), set(), False
    for x in walk(f):
        if not isinstance(x, Prim):
            continue
        if x.name == "map_global":
            global_dims.add(int(as_nat(x.params[0]).as_int()))
        elif x.name == "map_workgroup":
            group_dims.add(int(as_nat(x.params[0]).as_int()))
        elif x.name in ("map_local", "to_local") or x.name in WARP_REDUCTIONS or x.name in COLLECTIVES:
            group_code = True
    if not (global_dims or group_dims or group_code):
        return None
    if global_dims and (group_dims or group_code):
        return "lower_map_seq", {}
    taken, rule = (group_dims, "lower_map_workgroup") if group_dims or group_code else (global_dims, "lower_map_global")
    free = [d for d in range(3) if d not in taken]
    return (rule, {"d": free[0]}) if free else ("lower_map_seq", {})


def _free_global_dim(node: Expr) -> int:
    """The dimension of a map_global made of a host map or generate `node`: one its function's
    hand-written map_globals leave free (0 where it has none)."""
    around = _around_hand_parallel(spine(node)[1][0]) if spine(node)[1] else None
    return around[1]["d"] if around is not None and around[0] == "lower_map_global" else 0


def _sites(e: Expr, path: tuple, ctx: str, out: list, dims: int = 2) -> None:
    """lowering_sites' walk, appending to `out` in its order (one list, not a generator per
    node: the space's build asks for the sites of thousands of programs)."""
    if isinstance(e, (Lambda, NatLambda)):
        _sites(e.body, path + (0,), ctx, out, dims)
        return
    if isinstance(e, NatApp):
        _sites(e.fun, path + (0,), ctx, out, dims)
        return
    head, args = spine(e)
    n = len(args)
    if isinstance(head, Lambda):
        _sites(head, path + (0,) * n, ctx, out, dims)
        for k, a in enumerate(args):
            _sites(a, path + arg_path(n, k), ctx, out, dims)
        return
    if not isinstance(head, Prim):
        return
    name = head.name
    if name == "map" and _computing_map(e):
        f_path = path + arg_path(n, 0)
        around = _around_hand_parallel(args[0]) if ctx == HOST else None
        if around is not None:  # parallel maps written by hand inside: a dimension they leave free
            rule, params = around
            out.append((path, rule, params))
            inner = function_context(ctx, rule[len("lower_"):]) if rule != "lower_map_seq" else HOST_SEQ
            _sites(args[0], f_path, inner, out, dims)
            if n == 2:
                _sites(args[1], path + arg_path(n, 1), ctx, out, dims)
            return
        nest = _map_nest(e, path, dims) if ctx == HOST and n == 2 else []
        if len(nest) > 1:
            for d, (map_path, _) in zip(range(len(nest) - 1, -1, -1), nest):
                out.append((map_path, "lower_map_global", {"d": d}))
            inner_path, inner = nest[-1]
            in_n = len(spine(inner)[1])
            _sites(spine(inner)[1][0], inner_path + arg_path(in_n, 0), ITEM, out, dims)
            for map_path, m in reversed(nest[1:]):  # the inner maps' arguments: views, read per item
                _, margs = spine(m)
                if len(margs) == 2:
                    _sites(margs[1], map_path + arg_path(2, 1), ITEM, out, dims)
        elif ctx == HOST:
            out.append((path, "lower_map_global", {"d": 0}))
            _sites(args[0], f_path, ITEM, out, dims)
        else:
            out.append((path, "lower_map_seq", {}))
            _sites(args[0], f_path, ctx, out, dims)
        if n == 2:
            _sites(args[1], path + arg_path(n, 1), ctx, out, dims)
        return
    if name == "reduce":
        out.append((path, "lower_reduce_seq", {}))
        _sites(args[0], path + arg_path(n, 0), function_context(ctx, "reduce_seq"), out, dims)
        for k in range(1, n):
            # an element-wise map feeding the fold is fused into it; a stage of partial reductions runs in parallel
            fused = k == 2 and _computing_map(args[k]) and not _reduces(spine(args[k])[1][0])
            _sites(args[k], path + arg_path(n, k), function_context(ctx, "reduce_seq") if fused else ctx, out, dims)
        return
    if name == "generate":  # its function runs per element, where the array is read or by its own loop
        inner = HOST_SEQ if ctx == HOST else ctx
    else:
        inner = function_context(ctx, name) if name in LOOP_MAPS | LOW_REDUCTIONS else ctx
    for k, a in enumerate(args):
        runs_in = inner if k == 0 and (name in LOOP_MAPS | LOW_REDUCTIONS or name == "generate") else ctx
        _sites(a, path + arg_path(n, k), runs_in, out, dims)


NEIGHBOURHOOD_TILES = {  # outputs per work-item along each map of the nest, outermost first, best first
    2: ((4, 2), (2, 2), (4, 1), (2, 1), (1, 2)),
    3: ((4, 2, 1), (2, 2, 1), (4, 1, 1), (2, 1, 1), (1, 2, 1)),
}


# none on a CPU: 4 x 1 tiles on PoCL (2 cores) are size-dependent, 1.3-3.5x faster at 2048^2 (Jacobi, SHOC
# stencil, Hotspot, convolution) but 1.1-1.4x slower at 4096^2 (Jacobi 2D, Hotspot): the exploration decides there
CPU_NEIGHBOURHOOD_TILES: dict = {}


def neighbourhood_tiles(target: Target | None = None, tiles: dict | None = None) -> Strategy:
    """At a program-level nest of two or three maps whose data reads through `slide`:
    tile_nest_2d n m (tile_nest_3d n m k), the first of `tiles` (NEIGHBOURHOOD_TILES on a
    lockstep target, CPU_NEIGHBOURHOOD_TILES elsewhere) whose sizes divide the nest's, the
    tiles' maps on global dimensions (the outermost on the highest), each inside the layout
    views of the one outside it (storage.through_views), the tile's maps unrolled; in 2D

        join (map_global 1 (fun(blk) => map join (transpose (map_global 0 (map_seq_unroll
            (map_seq_unroll f)) (transpose (map (split m) blk))))) (split n xss))

    A Failure elsewhere (at_host then looks further in)."""
    from .rules.vocabulary import MACROS

    if tiles is None:
        tiles = NEIGHBOURHOOD_TILES if (target or Target()).lockstep_items else CPU_NEIGHBOURHOOD_TILES
    macros = {3: MACROS["tile_nest_3d"], 2: MACROS["tile_nest_2d"]}

    def run(e: Expr):
        if not tiles or not _over_neighbourhoods(e):
            return Failure("neighbourhood_tiles: not a nest of maps over neighbourhoods")
        fission: list[Step] = []
        e = _rows_as_data(e, fission)
        dims = next((d for d, macro in macros.items() if macro.lengths(e) is not None), None)
        if dims is None or (dims == 2 and _map_nest(e, (), 3)[2:]):  # a third map tile_nest_3d does not take
            return Failure("neighbourhood_tiles: not a nest of two or three maps the tiles take")
        macro = macros[dims]
        for sizes in tiles.get(dims, ()):
            done = _tiled(macro, sizes, e, dims)
            if done is not None:
                return Success(done[0], tuple(fission) + done[1])
        for sizes in tiles.get(dims, ()):  # the outermost length cut at the tile's largest multiple
            done = _tiled_with_remainder(macro, sizes, e, dims)
            if done is not None:
                return Success(done[0], tuple(fission) + done[1])
        return Failure("neighbourhood_tiles: no tile divides the nest")

    return Strategy("neighbourhood_tiles", run)


def _tiled(macro, sizes: tuple, e: Expr, dims: int) -> tuple[Expr, tuple[Step, ...]] | None:
    tiled = macro.strategy(**dict(zip(macro.params, sizes)))(e)
    if not tiled.ok:
        return None
    mapped = _tiles_mapped(tiled.expr, dims)
    return None if mapped is None else (mapped[0], tiled.steps + mapped[1])


def _tiled_with_remainder(macro, sizes: tuple, e: Expr, dims: int) -> tuple[Expr, tuple[Step, ...]] | None:
    """A nest whose outermost constant length n the tile's first size t does not divide:
    map_split_at (t * (n // t)), the first part tiled as above, the remainder (fewer than t
    rows or planes) left a map for the later phases (a kernel of its own), both written in
    place through concat's acceptor."""
    n = spine(e)[1][1].t.size.as_int() if isinstance(spine(e)[1][1].t, ArrayType) else None
    t = sizes[0]
    if n is None or n <= t or n % t == 0:
        return None
    steps: list[Step] = []
    cut = _apply_at(e, (), "map_split_at", {"k": t * (n // t)}, steps)
    if cut is None:
        return None
    first = arg_path(2, 0)  # concat's first part
    done = _tiled(macro, sizes, at_path(cut, first), dims)
    if done is None:
        return None
    steps.extend(attrs.evolve(s, path=first + s.path) for s in done[1])
    return replace_at(cut, first, done[0]), tuple(steps)


TENSOR_CORE_TILES = ((128, 128, 64, 64), (64, 128, 64, 64), (64, 64, 32, 32), (32, 32, 16, 16), (16, 16, 16, 8))
"""Work-group tile x warp tile (rows, columns) of a matrix product on tensor cores, best first: at
4096^3 on an H100 (benchmarks/tf32_gemm_gpu.py --derived, RESULTS.md session 28) 128 x 128 with 64 x 64
warp tiles 73.4 TFLOP/s and 64 x 128 next; the smaller ones take the sizes the large ones do not divide."""


def tensor_core_tiles(target: Target | None = None, tiles: tuple = TENSOR_CORE_TILES) -> Strategy:
    """Where the target has TF32 tensor cores: at a nest of dot products whose products the
    program rounds to TF32, `map (fun(r) => map (fun(c) => reduce (+) 0 (map (fun(p) =>
    tf32 (fst p) * tf32 (snd p)) (zip r c))) cs) rs`, schedules.tensor_core_nest with the first
    of `tiles` whose sizes divide the nest's: blocks over work-groups, warp tiles over local
    dimensions 2 / 1, m16n8k8 mma_sync products accumulated in fragments the lanes keep
    (functional.lane_ownership).  A Failure elsewhere (at_host then looks further in)."""
    from .schedules import tensor_core_nest

    def run(e: Expr):
        if not (target or Target()).tensor_cores:
            return Failure("tensor_core_tiles: the device has no TF32 tensor cores")
        reasons = []
        for shape in tiles:
            done = tensor_core_nest(*shape)(e)
            if done.ok:
                return done
            reasons.append(done.reason)
        return Failure(f"tensor_core_tiles: no tile applies ({reasons[-1] if reasons else 'none given'})")

    return Strategy("tensor_core_tiles", run)


def _rows_as_data(e: Expr, steps: list) -> Expr:
    """`map (fun(r) => map f (V r)) xss`, `fun(r) => V r` a layout function (is_view_fn: the
    rows' neighbourhoods as a separable convolution writes them), as
    `map (map f) (map (fun(r) => V r) xss)` (map_fission), the nest the tiles take; else `e`."""
    head, args = spine(e)
    if not (isinstance(args[0], Lambda) and _computing_map(args[0].body)):
        return e
    inner = spine(args[0].body)[1]
    # V must stay a view once it is a map of its own (a layout function: `at r 1` is not one, and
    # its map would be stored, a copy kernel of every row: hotspot2d_indexed on an H100 0.31 -> 17 ms)
    if len(inner) != 2 or isinstance(inner[1], Identifier) or not is_view_fn(Lambda(args[0].param, inner[1])):
        return e
    trial: list[Step] = []
    split = _apply_at(e, (), "map_fission", {}, trial)
    if split is None:
        return e
    steps.extend(trial)
    return split


def _over_neighbourhoods(e: Expr) -> bool:
    """`e` is a map whose data reads through `slide` (its elements share inputs)."""
    from .expr import walk

    return _computing_map(e) and len(spine(e)[1]) == 2 and any(
        isinstance(x, Prim) and x.name == "slide" for x in walk(spine(e)[1][1]))


def _tiles_mapped(e: Expr, dims: int) -> tuple[Expr, tuple[Step, ...]] | None:
    """(program, steps) of a tiled nest `join (map B (split n xs))`: B's map on global
    dims - 1, the tiles' map B writes through layout views on the next dimension, and so on to
    dimension 0, the tile's `dims` maps unrolled; None where the nest does not have that shape."""
    from .storage import through_views

    levels = [arg_path(1, 0)]
    while len(levels) < dims:
        if not isinstance(spine(at_path(e, levels[-1]))[1][0], Lambda):
            return None
        inner = through_views(e, levels[-1] + arg_path(2, 0) + (0,))
        if inner is None:
            return None
        levels.append(inner)
    tile = [levels[-1] + arg_path(2, 0)]  # `map (map f)`: the tile's rows, each its columns (3D: planes first)
    while len(tile) < dims:
        tile.append(tile[-1] + arg_path(1, 0))
    moves = [(path, "lower_map_seq_unroll", {}) for path in reversed(tile)]
    moves += [(path, "lower_map_global", {"d": d}) for d, path in enumerate(reversed(levels))]
    steps: list[Step] = []
    for path, rule, params in moves:  # innermost first: each rewrite keeps the paths outside it
        e = _apply_at(e, path, rule, params, steps)
        if e is None:
            return None
    return e, tuple(steps)


def _reduces(f: Expr) -> bool:
    from .expr import walk

    return any(isinstance(x, Prim) and x.name in ("reduce", "reduce_seq", "reduce_seq_unroll") for x in walk(f))


def parallelise(target: Target | None = None) -> Strategy:
    """Every high-level map and reduce lowered by where it runs (see lowering_sites), host
    map nests over up to target.global_dims global dimensions."""
    dims = (target or Target()).global_dims

    def run(e: Expr):
        steps: list[Step] = []
        for path, name, params in list(lowering_sites(e, global_dims=dims)):
            node = at_path(e, path)
            result = RULES[name].strategy(**params)(node)
            if not result.ok:
                return Failure(f"parallelise: {result.reason}")
            e = replace_at(e, path, result.expr)
            steps.extend(attrs.evolve(s, path=path + s.path) for s in result.steps)
        return Success(e, tuple(steps))

    return Strategy("parallelise", run)


def store_where_needed(fuel: int = 10_000, private_limit: int = PRIVATE_LIMIT) -> Strategy:
    """Apply `first_need`'s fixes until the translation needs none (an item's arrays of at
    most `private_limit` scalars stored in private memory)."""

    def run(e: Expr):
        steps: list[Step] = []
        for _ in range(fuel):
            need = first_need(e, private_limit=private_limit)
            if need is None:
                return Success(e, tuple(steps))
            node = at_path(e, need.path)
            if need.rule.startswith("materialise_") and applied(node, f"to_{need.rule[len('materialise_'):]}", 1):
                return Failure(f"store: {need.why} at {'.'.join(map(str, need.path))}, which is stored already "
                               f"(a bug in the storage analysis)")
            params = {"d": _free_global_dim(node)} if need.rule in ("lower_map_global", "generate_as_map_global") else {}
            if need.rule == "copy_local":  # spread over the local dimensions the enclosing groups have
                params = {"groups": sum(1 << d for d in enclosing_group_dims(e, need.path))}
            result = RULES[need.rule].strategy(**params)(node)
            if not result.ok:
                return Failure(f"store: {need.why} at {'.'.join(map(str, need.path)) or 'root'}, and "
                               f"{need.rule} does not apply: {result.reason}")
            e = replace_at(e, need.path, result.expr)
            steps.extend(attrs.evolve(s, path=need.path + s.path) for s in result.steps)
        return Failure(f"store: no fixed point after {fuel} fixes (a bug in the default lowering)")

    return Strategy("store_where_needed", run)


# -------------------------------------------------------------------------- the device

@attrs.frozen
class Target:
    """What the default lowering knows of the device it lowers for (the driver tells it:
    dpia.explore.space.DeviceLimits.lowering_target).

    `lockstep_items`: the work-items of a group issue each load together (a GPU's warps), so a
    reduction's stages read their data interleaved wherever the operator is commutative:
    neighbouring work-items read neighbouring elements, one memory transaction per warp-wide
    load.  Without it (a CPU, where each work-item runs alone on a core for its whole chunk)
    every work-item folds a contiguous chunk, read as vectors where it can (cache lines,
    prefetchers): interleaved chunks there would stride by the number of work-items.  The same
    fact bounds a map's vectors: a warp-wide load is one transaction when each item reads at
    most LOCKSTEP_VECTOR_BYTES; wider vectors split into several loads whose items lie
    that many bytes apart (scal over 2^26 floats with 16 lanes per item: 0.84x torch.compile on
    the H200, 4 lanes 1.19x, benchmarks/RESULTS.md).

    `warp_shuffles`: the device exchanges values between a warp's lanes (DeviceLimits.intrinsics
    says so; never assumed), so a work-group's tree of a row ends in the first warp's registers
    (rules.lowering warp_tree): the last five steps without local memory or barriers.

    `tensor_cores`: the device multiplies TF32 tiles in its warps' tensor cores (queried:
    DeviceLimits.intrinsics "tensor_cores_tf32"), so a nest of dot products whose products the
    program rounds to TF32 runs as mma_sync tiles (the tensor_cores phase).

    `private_limit`: the most scalars of one work-item's array the store phase keeps in private
    memory (larger ones get a slot in global memory): storage.PRIVATE_LIMIT by default, whose
    stack PoCL overflows at 1024 floats; a GPU's registers hold more (DeviceLimits.lowering_target:
    a 16 x 8 register block's accumulators were a global temporary, read and written every
    k-step, at 64)."""

    lockstep_items: bool = False
    warp_shuffles: bool = False
    tensor_cores: bool = False
    private_limit: int = PRIVATE_LIMIT

    @property
    def global_dims(self) -> int:
        """Global dimensions a host nest of maps takes.  Lockstep items: 3, the innermost map
        (the contiguous one) on dimension 0, so a warp reads neighbouring elements (Jacobi 3D
        512^3 on the H200: 6.5 ms with the innermost map a loop per item, 0.50 ms).  A CPU: 2,
        the innermost of three maps a loop, each item walking a contiguous row (Jacobi 3D 128^3
        on PoCL: 0.54 ms, 1.0 ms as a 3D launch; benchmarks/default_shapes_gpu.py)."""
        return 3 if self.lockstep_items else 2

    def vector_widths(self, elem) -> tuple[int, ...]:
        """The lanes a map of `elem` scalars may compute per work-item, widest first."""
        if not self.lockstep_items:
            return VECTOR_WIDTHS
        return tuple(w for w in VECTOR_WIDTHS if w * elem.dtype.itemsize <= LOCKSTEP_VECTOR_BYTES)


# -------------------------------------------------------------------------- reductions

SMALL_REDUCTION = 1024  # a reduction of fewer elements runs on one work-item
CHUNK = 32  # elements each work-item folds per stage: few enough that f32 sums stay accurate (tree order)
SYMBOLIC_STAGES = 3  # stages for a length without a known bound: at 2^24 elements 512 partial results are left


MAX_STAGED_ARRAY = 32  # elements of an n-array a reduction's stages hold per partial result


def _scalar_values(t) -> bool:
    """Scalars and tuples of them: the values the exploration's reduction trees hold (its tree
    stages in local memory do not hold arrays)."""
    if isinstance(t, TupleType):
        return all(_scalar_values(x) for x in t.elems)
    return isinstance(t, ScalarType)


def _stageable_values(t) -> bool:
    """Values a reduction's parallel stages hold per partial result: scalars, tuples of them,
    and arrays of a constant length up to MAX_STAGED_ARRAY of them (n reductions fused into one,
    rules.algorithmic generate_reduce_fusion)."""
    if isinstance(t, TupleType):
        return all(_stageable_values(x) for x in t.elems)
    if isinstance(t, ArrayType):
        n = t.size.as_int()
        return n is not None and 1 <= n <= MAX_STAGED_ARRAY and _stageable_values(t.elem)
    return isinstance(t, ScalarType)


def _short(e: Expr) -> str:
    text = str(e)
    return text if len(text) <= 60 else text[:57] + "..."


def _apply_at(e: Expr, path: tuple, rule: str, params: dict, steps: list) -> Expr | None:
    """`rule` applied at `path` (its steps appended to `steps`), or None where it does not apply."""
    result = RULES[rule].strategy(**params)(at_path(e, path))
    if not result.ok:
        return None
    steps.extend(attrs.evolve(s, path=path + s.path) for s in result.steps)
    return replace_at(e, path, result.expr)


def _more_stages(n, stage: int) -> bool:
    """Whether a reduction over `n` elements (a Nat) at stage `stage` (0: the data) is split
    into chunks: a constant length while it has more than CHUNK elements (the first stage from
    SMALL_REDUCTION up); a symbolic one for SYMBOLIC_STAGES stages (every stage costs a
    kernel even where the length turns out small), unless its upper bound, when it has one,
    decides as a constant would."""
    from .nat import upper_bound

    k = n.as_int()
    if k is None:
        bound = upper_bound(n)
        hi = math.floor(bound.value) if bound is not None and bound.is_const else None
        if hi is not None:  # a bounded size is split as its largest value would be
            return hi > CHUNK and (stage > 0 or hi >= SMALL_REDUCTION)
        return stage < SYMBOLIC_STAGES
    return k > CHUNK and (stage > 0 or k >= SMALL_REDUCTION)


FIRST_CHUNK = 128  # elements each work-item folds in the first stage where it reads them as vectors
FIRST_STAGE_ITEMS = 4096  # work-items a first stage keeps at least, its chunks larger where the length allows
MAX_FIRST_CHUNK = 512


def first_chunk(n) -> int:
    """Elements per work-item of a vectorised first stage over n elements (a Nat): FIRST_CHUNK,
    doubled up to MAX_FIRST_CHUNK while at least FIRST_STAGE_ITEMS chunks remain; a symbolic
    length that a fact makes a multiple of FIRST_CHUNK / 2 but not of FIRST_CHUNK is cut in
    chunks of that half (no remainder to fold)."""
    from .nat import divides

    k = n.as_int()
    if k is None:
        half = FIRST_CHUNK // 2
        return half if divides(half, n) and not divides(FIRST_CHUNK, n) else FIRST_CHUNK
    c = FIRST_CHUNK
    while c < MAX_FIRST_CHUNK and k // (2 * c) >= FIRST_STAGE_ITEMS:
        c *= 2
    return c


def _take_drop(e: Expr, path: tuple, m, steps: list) -> tuple[Expr, tuple] | None:
    """The reduction at `path` in two parts, `reduce f (reduce f z (take m xs)) (drop m xs)`,
    take and drop pushed through the data's maps and zips so each part reads the inputs (not
    a stored copy); data the program stores (to_local, ...) is computed once instead, `let xs
    (fun(ys) => ...)` (reduce_take_drop_shared: each part would store it again).  (program,
    path of the inner reduction over `take m`) or None where a rule does not apply."""
    from .expr import walk
    from .primitives import STORES
    from .rules.macros import r
    from .strategies import normalize, try_

    data = spine(at_path(e, path))[1][2]
    if any(isinstance(x, Prim) and x.name in STORES for x in walk(data)):
        e = _apply_at(e, path, "reduce_take_drop_shared", {"m": m}, steps)
        return None if e is None else (e, path + (1, 0) + arg_path(3, 1))
    e = _apply_at(e, path, "reduce_take_drop", {"m": m}, steps)
    if e is None:
        return None
    cuts = r("take_map") | r("drop_map") | r("take_zip") | r("drop_zip")
    pushed = try_(normalize(cuts))(at_path(e, path))
    steps.extend(attrs.evolve(s, path=path + s.path) for s in pushed.steps)
    return replace_at(e, path, pushed.expr), path + arg_path(3, 1)


def _stage(e: Expr, path: tuple, split: str, chunk: int, stage: int, steps: list,
           interleaved: bool = False) -> tuple | None:
    """One stage of split_reduction at the reduction at `path`: its data in chunks of `chunk`
    elements, each folded by one work-item (a length `chunk` does not divide: the whole
    chunks first, the rest folded after).  Interleaved (a commutative operator): chunk c holds
    the elements c, c + s, c + 2s, ... of the whole part (s chunks; rules.algorithmic
    reduce_reorder), so neighbouring work-items read neighbouring elements at each step.
    (program, path of the reduction over the partial results) or None where a rule does not
    apply."""
    from .rules.macros import push_views
    from .strategies import argument, try_

    n = spine(at_path(e, path))[1][2].t.size
    whole = chunk * (n // chunk)
    if whole != n and stage == 0:  # both parts read the data through its maps: fuse them into each part
        cut = _take_drop(e, path, whole, steps)
        if cut is None:
            return None
        e, path = cut  # reduce f (THIS) (drop m xs)
    elif whole != n:  # the partial results of the previous stage, computed once
        e = _apply_at(e, path, "reduce_take_drop_shared", {"m": whole}, steps)
        if e is None:
            return None
        path = path + (1, 0) + arg_path(3, 1)  # let P (fun(ys) => reduce f (THIS) (drop m ys))
    if interleaved:
        e = _apply_at(e, path, "reduce_reorder", {"s": n // chunk}, steps)
        if e is None:
            return None
    e = _apply_at(e, path, split, {"n": chunk}, steps)
    if e is None:
        return None
    if stage == 0:
        pushed = try_(argument(push_views()))(at_path(e, path))
        steps.extend(attrs.evolve(s, path=path + s.path) for s in pushed.steps)
        e = replace_at(e, path, pushed.expr)
    return e, path


INTERLEAVED_CHUNK = 64  # elements per work-item of an interleaved first stage, at least
INTERLEAVED_ITEMS = 1 << 20  # work-items an interleaved first stage keeps at most, its chunks larger where needed
MAX_INTERLEAVED_CHUNK = 1024


def interleaved_chunk(n) -> int:
    """Elements per work-item of an interleaved first stage over n elements (a Nat):
    INTERLEAVED_CHUNK, doubled up to MAX_INTERLEAVED_CHUNK while more than INTERLEAVED_ITEMS
    chunks would remain (each work-item's partial result costs a write and a read; a million
    work-items keep a GPU's memory busy); a symbolic length: INTERLEAVED_CHUNK."""
    k = n.as_int()
    c = INTERLEAVED_CHUNK
    while k is not None and c < MAX_INTERLEAVED_CHUNK and k // c > INTERLEAVED_ITEMS:
        c *= 2
    return c


def _vector_first_stage(e: Expr, path: tuple, split: str, n, steps: list) -> tuple | None:
    """The first stage in chunks of first_chunk(n) contiguous elements that each work-item
    reads REDUCTION_WIDTH at a time (the vector reductions phase's rules on the chunk's
    reduction), where the data is contiguous and the operator and the map's function are
    lane-wise; None elsewhere (the stage is then one of CHUNK elements read one by one).
    On PoCL the sum of |x| over 2^22 floats runs 5x faster (benchmarks/RESULTS.md)."""
    if split != "reduce_split" or _vector_reduction_data(at_path(e, path)) is None:
        return None
    trial: list[Step] = []
    staged = _stage(e, path, split, first_chunk(n), 0, trial)
    if staged is None:
        return None
    e, path = staged
    stage_map = path + arg_path(3, 2)  # reduce f e (map F chunks): the map
    if _map_of_partial(at_path(e, stage_map)):
        e = _apply_at(e, stage_map, "eta_expand_map", {}, trial)
        if e is None:
            return None
    # the layouts of the whole program's bindings decide which data is contiguous
    sites = [p for p in vector_reduction_sites(e) if p[:len(stage_map)] == stage_map]
    if len(sites) != 1:
        return None
    vectorised = _vectorise_reduction(e, sites[0], trial)
    if vectorised is None:
        return None
    steps.extend(trial)
    return vectorised, path


def split_reduction(target: Target = Target()) -> Strategy:
    """At a reduction `reduce f z xs` of scalars (tuples of them, short n-arrays of them:
    `_stageable_values`) over a long array, with
    `f` associative: stages of partial reductions of CHUNK elements each, every stage a parallel
    map over chunks, until at most CHUNK partial results are left for one item (a constant
    length; from SMALL_REDUCTION elements up).

        reduce f z xs -> f z (reduce f e xs)                         z not neutral, e neutral
                      -> reduce f (reduce f e (take m xs)) (drop m xs)   m = CHUNK * (n // CHUNK)
                                                     (later stages: let-bound, computed once)
                      -> reduce f e (map (reduce f e) (split CHUNK xs))  (and again on the partials)

    The first stage's chunks are first_chunk(n) contiguous elements (128 to 512, at least
    FIRST_STAGE_ITEMS of them) where each work-item can read its chunk REDUCTION_WIDTH elements at
    a time (_vector_first_stage: a lane-wise operator and map over contiguous data), else CHUNK.
    For a target whose work-items run in lockstep (`Target.lockstep_items`: GPUs) with a
    commutative operator, every stage is interleaved instead, the first of interleaved_chunk(n)
    elements per work-item:

        reduce f e xs -> reduce f e (map (reduce f e) (split c (reorder_stride (n / c) xs)))

    An associative operator without a neutral element (argmin over (value, index) pairs)
    folds each chunk from its first element instead (reduce_split_first).

    Lengths of any form are split: constants, size variables with or without divisibility
    facts, products of them.  For a symbolic n the cut m = CHUNK * (n // CHUNK) is a Nat
    (dropped where a fact makes it n itself); at sizes where the whole part is empty (n <
    CHUNK) the parallel stage has no chunks and the guarded remainder `drop m xs`, fewer than
    CHUNK elements, holds everything.  A symbolic length gets SYMBOLIC_STAGES stages (see
    _more_stages).

    The first stage reads the data through push_views (so a map producing xs fuses into the
    chunks); later stages read the previous stage's stored results.

    The rule on operators: a reduction runs in parallel only when functional.algebra proves
    its operator associative (a monoid primitive, a tuple of them component-wise, a select
    of one comparison, ...).  Any other operator, for instance Chan's merge of (count, mean,
    M2) summaries or a Welford step, whose associativity holds in real arithmetic but is not
    something the algebra derives, keeps the program's left-to-right order on one work-item:
    correct, not parallel.  A program that wraps its operator in `associative` (the user's
    declaration) is split like argmin: each chunk folds from its first element, z once."""
    from . import algebra

    def reducible(e: Expr) -> bool:
        head, args = spine(e)
        return (isinstance(head, Prim) and head.name == "reduce" and len(args) == 3 and _stageable_values(e.t)
                and algebra.associative(args[0]))

    def _refused(node: Expr) -> Failure:
        return Failure(f"split_reduction: a rule of its plan does not apply at {_short(node)} "
                       f"(a bug in the default lowering)")

    def run(e: Expr):
        if not reducible(e):
            return Failure("split_reduction: not a reduction of scalars with an associative operator")
        if not _more_stages(spine(e)[1][2].t.size, 0):
            return Failure("split_reduction: too short")
        steps: list[Step] = []
        path: tuple = ()
        f, z, _ = spine(e)[1]
        split = "reduce_split"
        if algebra.neutral(f, z):
            pass
        elif algebra.neutral_element(f, z.t) is not None:
            reduction = e
            e = _apply_at(e, path, "reduce_neutral_init", {}, steps)
            if e is None:
                return _refused(reduction)
            path = (1,)  # f z R: R
        else:  # no neutral element (argmin): every chunk folds from its own first element
            split = "reduce_split_first"
        interleaved = target.lockstep_items and split == "reduce_split" and algebra.commutative(f)
        stage = 0
        while True:
            n = spine(at_path(e, path))[1][2].t.size
            if not _more_stages(n, stage):
                break
            staged = None
            if interleaved:  # else (a rule of it does not apply) in contiguous chunks
                trial: list[Step] = []
                staged = _stage(e, path, split, interleaved_chunk(n) if stage == 0 else CHUNK, stage, trial, True)
                steps.extend(trial if staged is not None else ())
            elif stage == 0:
                staged = _vector_first_stage(e, path, split, n, steps)
            if staged is None:
                staged = _stage(e, path, split, CHUNK, stage, steps)
            if staged is None:
                return _refused(at_path(e, path))
            e, path = staged
            stage += 1
        return Success(e, tuple(steps))

    return Strategy("split_reduction", run)


VECTOR_WIDTHS = (16, 8, 4, 2)  # lanes tried for a map over a transpose's columns, widest first
LOCKSTEP_VECTOR_BYTES = 16  # the widest load of one work-item that a warp still issues as one (128-bit)
REDUCTION_WIDTH = 16  # lanes of a work-item's reduction (a remainder the width leaves is folded after)
MIN_VECTOR_REDUCTION = 64  # elements: a shorter reduction keeps its scalar loop (little to gain)


def _element_layout(info):
    """The layout of an element of an array of layout `info` (see _layout): a row of a
    contiguous array is contiguous; a zip's element is the pair of its arrays' elements."""
    if isinstance(info, tuple) and info[0] == "zip":
        return ("pair", _element_layout(info[1]), _element_layout(info[2]))
    return info


def _layout(e: Expr, env: dict):
    """How `e`'s innermost dimension lies in memory, as far as the program's form shows:
    True when contiguous (an input, a row of one, a split, join, take or drop of one, an
    array a map computes: left after the fuse phase, the store phase stores it in order; a
    value stored already),
    ("zip", a, b) for a zip, ("pair", a, b) for a tuple of such values, None when unknown
    or strided (a transpose, a window, a gather)."""
    if isinstance(e, Identifier):
        # a program input when nothing binds it (the phases run on the program's body)
        return env[e.name] if e.name in env else (True if isinstance(e.t, ArrayType) else None)
    head, args = spine(e)
    if not isinstance(head, Prim):
        return None
    if head.name in ("fst", "snd") and len(args) == 1:
        inner = _layout(args[0], env)
        if isinstance(inner, tuple) and inner[0] == "pair":
            return inner[1] if head.name == "fst" else inner[2]
        return None
    if head.name == "zip" and len(args) == 2:
        return ("zip", _layout(args[0], env), _layout(args[1], env))
    if head.name in ("split", "join", "take", "drop", "as_vector", "as_scalar") and args:
        return True if _layout(args[-1], env) is True else None
    if head.name in ("to_global", "to_local", "to_private") and len(args) == 1:
        return True  # stored in order
    if _computing_map(e) and isinstance(e.t, ArrayType):
        return True
    return None


def _vector_reduction_data(e: Expr):
    """The arrays of scalars a reduction `reduce f z (map g xs)` (xs an array of scalars or
    zips of them) or `reduce f z xs` (xs read as it is, not computed by a map) reads element
    by element, and its rule: (arrays, rule name), or None for another form."""
    from .rules.algorithmic import zip_leaves

    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "reduce" and len(args) == 3 and args[2].t is not None):
        return None
    data = args[2]
    dh, dargs = spine(data)
    if isinstance(dh, Prim) and dh.name == "map" and len(dargs) == 2:
        arrays = zip_leaves(dargs[1]) if dargs[1].t is not None else None
        return None if arrays is None else (arrays, "reduce_vectorize_map")
    if _computing_map(data) or (isinstance(dh, Prim) and dh.name == "zip"):
        return None
    arrays = zip_leaves(data)
    return None if arrays is None else (arrays, "reduce_vectorize")


def _item_nodes(e: Expr, path: tuple = (), env: dict | None = None, inside: bool = False, role: str = ""):
    """(path, node, env, role) for every node a work-item runs (inside a map's function), with
    `env` the layouts (`_layout`) of the identifiers bound around it and `role` "data" where
    the node is the array a reduction folds, "let" where it is the value a `let` binds."""
    env = {} if env is None else env
    if isinstance(e, Lambda):
        yield from _item_nodes(e.body, path + (0,), {**env, e.param.name: None}, inside)
        return
    if isinstance(e, (NatLambda, NatApp)):
        yield from _item_nodes(e.body if isinstance(e, NatLambda) else e.fun, path + (0,), env, inside)
        return
    head, args = spine(e)
    if not isinstance(head, Prim) or not args:
        if isinstance(e, App):
            yield from _item_nodes(e.fun, path + (0,), env, inside)
            yield from _item_nodes(e.arg, path + (1,), env, inside)
        return
    n = len(args)
    bound: dict[int, dict] = {}  # argument -> its lambda's parameter's layout
    if head.name == "map" and n == 2 and isinstance(args[0], Lambda):
        bound[0] = {args[0].param.name: _element_layout(_layout(args[1], env))}
    if head.name == "let" and n == 2 and isinstance(args[1], Lambda):
        bound[1] = {args[1].param.name: _layout(args[0], env)}
    if inside:
        yield path, e, env, role
    for k, a in enumerate(args):
        sub = path + arg_path(n, k)
        if k in bound:
            yield from _item_nodes(a.body, sub + (0,), {**env, **bound[k]}, inside or (head.name == "map" and k == 0))
        else:
            data = head.name in ("reduce", "reduce_seq") and n == 3 and k == 2
            bound_value = head.name == "let" and n == 2 and k == 0
            yield from _item_nodes(a, sub, env, inside, "data" if data else "let" if bound_value else "")


def vector_reduction_sites(e: Expr):
    """Paths of the reductions `reduce f z (map g xs)` (or of `zip xs ys`) and `reduce f z xs`
    that a work-item runs (inside a map's function, where the reductions phase does not split
    them: any number of them, anywhere in the function's body) over at least
    MIN_VECTOR_REDUCTION elements or a symbolic length, whose inputs (xs, or both arrays of
    `zip xs ys`) are read contiguously (`_layout`): where reduce_vectorize_map (or
    reduce_vectorize) reads w elements at once."""
    for path, node, env, _ in _item_nodes(e):
        form = _vector_reduction_data(node)
        if form is not None:
            arrays = form[0]
            length = arrays[0].t.size.as_int() if isinstance(arrays[0].t, ArrayType) else None
            # a symbolic length is taken as long: vectorised with its remainder folded after
            if (length is None or length >= MIN_VECTOR_REDUCTION) and all(_layout(a, env) is True for a in arrays):
                yield path


def _vectorise_reduction(e: Expr, site: tuple, steps: list) -> Expr | None:
    """The reduction at `site` accumulating REDUCTION_WIDTH lanes at once (the rule
    `_vector_reduction_data` names); where that width does not provably divide its length n
    (a constant that is no multiple, a symbolic length without a fact), the first
    m = w * (n // w) elements are vectorised and the rest folded after, one at a time:

        reduce f z xs -> reduce f (reduce f z (take m xs)) (drop m xs)       (reduce_take_drop)
                      -> reduce f (let (vector reduction of take m xs) ...) (drop m xs)

    with take and drop pushed through the map and the zip, so both parts read the inputs
    (not a stored copy).  None where a rule does not apply (the site is left as it is)."""
    from . import algebra
    from .rules.core import length

    node = at_path(e, site)
    _, rule = _vector_reduction_data(node)
    f, z, _ = spine(node)[1]
    if not algebra.neutral(f, z) and algebra.neutral_element(f, z.t) is not None:
        # the lanes start from the neutral element, z is combined once after: f z (reduce f e xs)
        trial: list[Step] = []
        started = _apply_at(e, site, "reduce_neutral_init", {}, trial)
        done = None if started is None else _vectorise_reduction(started, site + (1,), trial)
        if done is not None:
            steps.extend(trial)
        return done
    w = REDUCTION_WIDTH
    n = length(spine(node)[1][2])
    vectorised = _apply_at(e, site, rule, {"w": w}, steps)
    if vectorised is not None:
        return vectorised
    trial: list[Step] = []
    cut = _take_drop(e, site, w * (n // w), trial)
    if cut is None:
        return None
    done = _apply_at(cut[0], cut[1], rule, {"w": w}, trial)
    if done is None:
        return None
    steps.extend(trial)
    return done


ROW_ITEMS = 256  # work-items of the group that reduces one row (row_reductions), at most
MIN_ROW_ITEMS = 32  # ... at least: a warp
ROW_PER_ITEM = 8  # elements each item folds before the tree where the row gives a warp or more that many
MIN_ROW_PER_ITEM = 4  # ... at a warp, at least (a shorter row stays one item's loop)
# ... where the warp's tree is shuffles (no local memory, no barrier): rows of 64 as a warp each,
# softmax over 262144 of them on an H100 0.107 -> 0.065 ms (an item per row; torch.compile 0.081)
MIN_WARP_ROW_PER_ITEM = 2
ROW_LOCAL_BYTES = 16 * 1024  # local memory the trees of one group may hold: half of OpenCL's guaranteed 32 KB


def _value_bytes(t) -> int:
    """Bytes of a value of a reduction's scalar, vector or tuple type."""
    if isinstance(t, TupleType):
        return sum(_value_bytes(c) for c in t.elems)
    if isinstance(t, VectorType):
        return t.elem.dtype.itemsize * (t.width.as_int() or 16)
    return t.dtype.itemsize


def row_items(n: int, least: int = MIN_ROW_PER_ITEM) -> int | None:
    """Work-items for a work-group reducing a row of n elements (row_reductions): the largest
    power of two from MIN_ROW_ITEMS up to ROW_ITEMS that divides n and leaves each item
    ROW_PER_ITEM elements or more (softmax over 16384 rows of 1024 on an H100, trees ending in
    warp shuffles, groups as wide as the trees: 16 per item 0.070 ms, 8 per item 0.058 ms, 4
    per item 0.057 ms; benchmarks/RESULTS.md, session 26); a warp where that leaves each at
    least `least` (MIN_ROW_PER_ITEM; MIN_WARP_ROW_PER_ITEM where the warp's tree is shuffles);
    None otherwise (a short or odd row stays one item's loop)."""
    items = ROW_ITEMS
    while items > MIN_ROW_ITEMS and (n % items or n // items < ROW_PER_ITEM):
        items //= 2
    return items if n % items == 0 and n // items >= least else None


def _row_reductions(e: Expr, least: int = MIN_ROW_PER_ITEM) -> tuple[list[tuple[tuple, int, int]], list[tuple]] | None:
    """([(path in `e`, length, items)] of the reductions, [paths of the element-wise maps])
    a program-level `map F xs` reduces rows of its element with, where a work-group can take
    each element: F's body computes reductions (vector_reduction_sites: over contiguous data,
    lane-wise), each of a constant length row_items accepts, a commutative monoid from its
    neutral element (the tree's precondition; _neutral_starts gives one another start) over
    scalars or tuples of them, reading data of the element (a row of a
    matrix, or a value a let computes from one; not an array every element reads whole:
    N-Body's bodies); beside them only element-wise maps (softmax's exp and division, layer
    normalisation's), which the group's items share; the trees' and the stored maps' local
    memory within ROW_LOCAL_BYTES.  None where F is not of that form."""
    from . import algebra
    from .expr import free_identifiers

    head, args = spine(e)
    if not (_computing_map(e) and len(args) == 2 and isinstance(args[0], Lambda)):
        return None
    dependent = _dependent_names(args[0])
    found = []
    for site in vector_reduction_sites(e):
        node = at_path(e, site)
        f, z, data = spine(node)[1]
        n = data.t.size.as_int() if isinstance(data.t, ArrayType) else None
        items = row_items(n, least) if n is not None else None
        arrays, _ = _vector_reduction_data(node)  # what it reads, not the function it maps (MRI-Q's samples)
        per_element = any(free_identifiers(a) & dependent for a in arrays)
        if items is None or holds_array(node.t) or not per_element:
            return None
        if not (algebra.associative(f) and algebra.commutative(f) and algebra.neutral(f, z)):
            return None
        found.append((site, n, items))
    f_path = arg_path(2, 0) + (0,)
    loops = [p for p, _, _ in lowering_sites(args[0].body, f_path, ITEM)]
    outside = [p for p in loops if all(p[:len(site)] != site for site, _, _ in found)]
    # element-wise maps beside the reductions (softmax's exp and division) become the group's map_local
    maps = [p for p in outside if _computing_map(at_path(e, p)) and isinstance(at_path(e, p).t, ArrayType)
            and isinstance(at_path(e, p).t.elem, ScalarType) and not any(q != p and q[:len(p)] == p for q in loops)]
    if not found or len(maps) != len(outside):
        return None  # F loops elsewhere too (a nest, a short reduction): its items' work is not rows'
    # each tree's stages hold items + items/2 + ... + 1 < 2 * items values in local memory, and each
    # map's array the group reads again (all but the function's result, written out) is stored there,
    # unless each item reads back only its own elements (private registers: _own_elements_only)
    result = f_path + _let_tail(args[0].body)
    group = max(items for _, _, items in found)
    as_wide = [site for site, _, items in found if items == group]  # first stages on every item of the group
    stored = sum((at_path(e, p).t.size.as_int() or ROW_LOCAL_BYTES) * _value_bytes(at_path(e, p).t.elem)
                 for p in maps if p != result and not _own_elements_only(e, p, as_wide, maps, group))
    if sum(2 * items * _value_bytes(at_path(e, site).t) for site, _, items in found) + stored > ROW_LOCAL_BYTES:
        return None
    return found, maps


MAX_ROW_REGISTERS = 64  # elements of a stored map each item may keep in registers (imperative.passes UNROLL_LIMIT)
ROW_IN_REGISTERS = True  # _row_in_registers on (a switch for benchmarks that time the rows without it)


def _row_in_registers(e: Expr, least: int, steps: list) -> Expr:
    """A row `map (fun(row) => E) xs` whose E reads `row` more than once (layer normalisation:
    the mean, the variance, the output) as `map (fun(row) => let (copy row) (fun(row) => E)) xs`
    (rule copy_element), where the group then keeps the copy in registers, each item its own
    elements (_own_elements_only, imperative.passes.private_blocks): the row read from global
    memory once.  Only where the stored maps' registers, the copy's included, stay within
    MAX_ROW_REGISTERS an item (softmax over 16384 columns keeps its exponentials instead: two
    such arrays would be 128 an item); else `e` as it is."""
    head, args = spine(e)
    if not (ROW_IN_REGISTERS and _computing_map(e) and len(args) == 2 and isinstance(args[0], Lambda)):
        return e
    elem = args[1].t.elem if isinstance(args[1].t, ArrayType) else None
    if not (isinstance(elem, ArrayType) and isinstance(elem.elem, ScalarType)):
        return e
    if len(list(_uses(args[0].body, args[0].param.name, ()))) < 2 or _row_reductions(e, least) is None:
        return e
    trial: list[Step] = []
    copied = _apply_at(e, (), "copy_element", {}, trial)
    found = _row_reductions(copied, least) if copied is not None else None
    if found is None:
        return e
    sites, maps = found
    group = max(items for _, _, items in sites)
    result = arg_path(2, 0) + (0,) + _let_tail(spine(copied)[1][0].body)
    registers = sum(at_path(copied, p).t.size.as_int() // group for p in maps if p != result)
    if registers > MAX_ROW_REGISTERS:
        return e
    steps.extend(trial)
    return copied


def _own_elements_only(e: Expr, value: tuple, sites: list, maps: list, items: int) -> bool:
    """Whether the element-wise map at `value`, a let's value, is read only where each of the
    group's `items` work-items reads back the elements it computed: as the data of one of the
    row's reductions (`sites`, those with `items` items: their first stage reads element j on
    item j mod items) or as the
    array of one of the element-wise maps (`maps`, interleaved alike: _interleaved_map), through
    maps and zips only; at most MAX_ROW_REGISTERS elements an item.  Then
    imperative.passes.private_blocks keeps it in registers, not local memory."""
    n = at_path(e, value).t.size.as_int()
    tail = arg_path(2, 0)
    if n is None or n % items or n // items > MAX_ROW_REGISTERS or value[-len(tail):] != tail:
        return False
    let_path = value[:-len(tail)]
    head, args = spine(at_path(e, let_path))
    if not (isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda)):
        return False
    name, body_path = args[1].param.name, let_path + arg_path(2, 1) + (0,)
    outer = [site + arg_path(3, 2) for site in sites] + [m + arg_path(2, 1) for m in maps]
    uses = list(_uses(at_path(e, body_path), name, body_path))
    return bool(uses) and all(any(_element_by_element(e, start, use) for start in outer) for use in uses)


def _uses(e: Expr, name: str, path: tuple):
    """Paths of the free occurrences of identifier `name` in `e` (at `path`)."""
    from .expr import Identifier
    from .strategies import children

    if isinstance(e, Identifier):
        if e.name == name:
            yield path
        return
    if isinstance(e, Lambda) and e.param.name == name:
        return  # shadowed
    for k, child in enumerate(children(e)):
        yield from _uses(child, name, path + (k,))


def _element_by_element(e: Expr, start: tuple, use: tuple) -> bool:
    """Whether element j of the array at `start` reads element j of the array at `use`: the
    path between goes only through the arrays of maps and the arguments of zips."""
    if use[:len(start)] != start:
        return False
    path = start
    while path != use:
        head, args = spine(at_path(e, path))
        if not (isinstance(head, Prim) and len(args) == 2 and head.name in ("map", "zip")):
            return False
        ways = (arg_path(2, 1),) if head.name == "map" else (arg_path(2, 0), arg_path(2, 1))
        rest = use[len(path):]
        step = next((w for w in ways if rest[:len(w)] == w), None)
        if step is None:
            return False
        path += step
    return True


def _neutral_starts(e: Expr, steps: list) -> Expr:
    """Each reduction `row_reductions` would take but for its initial value, `reduce f z row`
    with f's neutral element known, as `f z (reduce f e row)` (reduce_neutral_init): the tree
    starts from the neutral element, z is combined once after it."""
    from . import algebra

    for site in reversed(list(vector_reduction_sites(e))):  # disjoint subterms: the others' paths hold
        f, z, _ = spine(at_path(e, site))[1]
        if algebra.associative(f) and algebra.commutative(f) and not algebra.neutral(f, z):
            started = _apply_at(e, site, "reduce_neutral_init", {}, steps)
            e = e if started is None else started
    return e


def _interleaved_map(e: Expr, path: tuple, items: int, steps: list) -> Expr:
    """The element-wise map at `path`, of a length `items` divides, as `items` maps over
    interleaved elements (split_join, map_map_interchange):

        map f xs -> join (transpose (map (map f) (transpose (split items xs))))

    so that `parallel` gives the group `items` work-items (map_local), each computing every
    items-th element (map_seq), neighbouring items neighbouring elements: the group's widest
    loop is its trees' first stage, and the launch gives it that many items.  A map over all
    n elements would ask for n items a group (softmax over rows of 1024 on an H100: groups of
    1024 items, 64 of them reducing, 0.129 ms; groups of 64, 0.076 ms).  `e` as it was where a
    rule does not apply (a length `items` does not divide)."""
    trial: list[Step] = []
    chunked = _apply_at(e, path, "split_join", {"n": items}, trial)
    inner = path + arg_path(1, 0)
    done = None if chunked is None else _apply_at(chunked, inner, "map_map_interchange", {}, trial)
    if done is None:
        return e
    steps.extend(trial)
    return done


def _dependent_names(f: Lambda) -> set[str]:
    """The names in f's body whose values depend on its parameter: the parameter and what
    lets bind to values that read one of them (softmax's `e = map exp row`)."""
    from .expr import free_identifiers, walk

    names = {f.param.name}
    for node in walk(f.body):  # parents first: an outer let's name is known before an inner value reads it
        head, args = spine(node)
        if isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda):
            if free_identifiers(args[0]) & names:
                names.add(args[1].param.name)
    return names


def _let_tail(e: Expr) -> tuple:
    """The path from `e` to what it computes past its lets (`let v (fun(x) => B)`: B's)."""
    head, args = spine(e)
    if isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda):
        return arg_path(2, 1) + (0,) + _let_tail(args[1].body)
    return ()


def row_reductions(target: Target = Target()) -> Strategy:
    """On a target whose work-items run in lockstep, a program-level map whose function reduces
    long contiguous rows of its element (`_row_reductions`: gemv's `alpha * dot row x + beta *
    y`, gesummv's two) runs a work-group per element: `items` work-items fold every items-th element of the
    row, neighbouring items reading neighbouring elements (one memory transaction per warp),
    then a tree in local memory (rules.macros tree_reduction; one per reduction), its last
    steps by warp shuffles where the target has them (warp_tree: 32-bit scalars), the scalar
    code around them once per group, element-wise maps of the row on the same items:

        map (fun(p) => E[reduce f z row]) xs
          -> map_workgroup 0 (fun(p) => E[reduce f z (iterate log2(items) stage
                                             (map_local 0 (reduce f z) (split (n/items) (reorder_stride items row))))]) xs

    Elsewhere (a CPU: each item's row read as vectors by vector_reductions) nothing changes.
    GEMV 16384^2 on an H100 with 256 items: 1.06x cuBLAS (benchmarks/RESULTS.md), where an
    item per row reads 64 KB apart from its neighbours."""
    from .rules.macros import tree_reduction
    from .schedules import parallel

    def here(e: Expr):
        steps: list[Step] = []
        e = _neutral_starts(e, steps)
        least = MIN_WARP_ROW_PER_ITEM if target.warp_shuffles else MIN_ROW_PER_ITEM
        e = _row_in_registers(e, least, steps)
        found = _row_reductions(e, least)
        if found is None:
            return Failure("row_reductions: not a map reducing rows of its elements")
        found, maps = found
        for site, n, items in found:  # disjoint subterms: each tree leaves the others' paths as they are
            tree = tree_reduction(n, items)(at_path(e, site))
            if not tree.ok:
                return tree
            steps += [attrs.evolve(st, path=site + st.path) for st in tree.steps]
            e = replace_at(e, site, tree.expr)
        group = max(items for _, _, items in found)
        for path in maps:  # outside the trees: their paths hold
            e = _interleaved_map(e, path, group, steps)
        mapped = parallel([("map_workgroup", 0), ("map_local", 0)])(e)
        if not mapped.ok:
            return mapped
        e, steps = mapped.expr, steps + list(mapped.steps)
        if target.warp_shuffles:  # each tree's last steps in the first warp's registers, where its values allow
            for site, _, _ in found:
                warped = _apply_at(e, site + arg_path(3, 2), "warp_tree", {}, steps)
                e = e if warped is None else warped
        return Success(e, tuple(steps))

    if not target.lockstep_items:
        return Strategy("row_reductions", lambda e: Success(e, ()))
    return at_host(Strategy("row_reductions", here))


def vector_reductions(fuel: int = 1000) -> Strategy:
    """Each work-item reduction `vector_reduction_sites` finds computes REDUCTION_WIDTH of
    its elements at once (reduce_vectorize_map, or reduce_vectorize for a reduction of an
    array as it is): a vector accumulator, vector reads of the inputs, the map's arithmetic
    lane-wise, the lanes folded after; a length the width does not divide keeps a remainder
    folded one element at a time (`_vectorise_reduction`).  Sixteen lanes rather than eight:
    on PoCL a float8 accumulator is one chain of dependent additions, and gemv 4096^2 read
    in float16 (or two float8 accumulators) runs 2x faster, at NumPy's rate
    (benchmarks/RESULTS.md, 2026-12-03).  The form the space's reduce_vectorize gives on
    `map g xs` stores the map's results first.  A site where no rule applies is left as
    it is."""

    def run(e: Expr):
        steps: list[Step] = []
        done: set = set()
        for _ in range(fuel):
            site = next((p for p in vector_reduction_sites(e) if p not in done), None)
            if site is None:
                return Success(e, tuple(steps))
            done.add(site)
            rewritten = _vectorise_reduction(e, site, steps)
            if rewritten is not None:
                e = rewritten
        return Success(e, tuple(steps))

    return Strategy("vector_reductions", run)


def vector_columns(target: Target = Target()) -> Strategy:
    """A program-level map over the columns of a transpose (`map g (transpose a)`, or zipped
    with an array of scalars, as A^T x + y) computes w neighbouring columns at once
    (vectorize_columns, w the widest of target.vector_widths dividing their number), where a's rows
    are contiguous (`_layout`): one work-item reads w neighbouring elements of each row as
    a vector instead of one column's element at a stride of a row.  Exact: each lane runs its
    column's computation in the program's order.  Sixteen columns rather than eight: each
    item's accumulator is one chain of dependent additions, and on PoCL gemv_t 4096^2 and
    atax 2048^2 run 1.7-2x faster in float16 (benchmarks/RESULTS.md, 2026-12-03)."""
    from .rules.algorithmic import column_parts

    def run(e: Expr):
        parts = column_parts(spine(e)[1][1]) if _computing_map(e) and len(spine(e)[1]) == 2 else None
        if parts is None or not all(_layout(a, {}) is True for _, a in parts):
            return Failure("vector_columns: not a map over contiguous rows' columns")
        widths = target.vector_widths(e.t.elem) if isinstance(e.t.elem, ScalarType) else VECTOR_WIDTHS
        for w in widths:
            result = RULES["vectorize_columns"].strategy(w=w)(e)
            if result.ok:
                return result
        return Failure("vector_columns: no width applies")

    return at_host(Strategy("vector_columns", run))


MIN_VECTOR_MAP = 64  # elements: a shorter map keeps its scalar loop


def _vector_map(e: Expr, env: dict, target: Target):
    """vectorize_lanes at the widest of target.vector_widths dividing the length of `e`, a map
    of scalars over contiguous arrays (`env`: the layouts of the identifiers bound around it)
    of at least MIN_VECTOR_MAP elements; a Failure otherwise."""
    from .rules.algorithmic import zip_leaves

    head, args = spine(e)
    if not (_computing_map(e) and len(args) == 2 and isinstance(e.t, ArrayType) and isinstance(e.t.elem, ScalarType)):
        return Failure("vector_maps: not a map computing scalars")
    arrays = zip_leaves(args[1])
    n = e.t.size.as_int()
    if arrays is None or n is None or n < MIN_VECTOR_MAP or not all(_layout(a, env) is True for a in arrays):
        return Failure("vector_maps: not a long map over contiguous arrays")
    for w in target.vector_widths(e.t.elem):
        if n % w == 0:
            result = RULES["vectorize_lanes"].strategy(w=w)(e)
            if result.ok:
                return result
    return Failure("vector_maps: no width applies")


def _large_for_private(t) -> bool:
    """An array of more than PRIVATE_LIMIT scalars: stored by a work-item in global memory, but
    as w-wide vectors it would count w times fewer values and stay in private memory, a stack
    PoCL overflows (1024 floats per item crashed it)."""
    n = t.size.as_int() if isinstance(t, ArrayType) else None
    return n is None or n > PRIVATE_LIMIT


def vector_maps(target: Target = Target(), fuel: int = 1000) -> Strategy:
    """A map of scalars over contiguous arrays (or zips of them) whose function is lane-wise,
    `map (fun(p) => a * fst p + snd p) (zip xs ys)`, computes w elements at once
    (vectorize_lanes, w the widest of target.vector_widths dividing its length, at least
    MIN_VECTOR_MAP): vector reads and writes, the arithmetic on vectors.  In program-level code
    and in a work-item's (softmax's row divided by its sum); the data of a reduction is left to
    the reductions' phases (their chunks and rows are read as vectors there), and a work-item's
    large `let` value (`_large_for_private`: softmax's exponentials of a row) is stored in global
    memory as it was before (materialise_global), where as vectors the store phase would count
    it small enough for private memory.  On PoCL scal over 2^24 floats runs 8x faster
    (benchmarks/RESULTS.md)."""

    def at_program_level(e: Expr):
        head, _ = spine(e)
        if isinstance(head, Prim) and head.name in ("reduce", "reduce_seq"):
            return Success(e, ())  # its data is the reductions phase's
        return _vector_map(e, {}, target)

    host = at_host(Strategy("vector_maps", at_program_level))

    def run(e: Expr):
        done = host(e)
        e, steps = done.expr, list(done.steps)
        tried: set = set()
        for _ in range(fuel):
            site = next(((p, env, role == "let" and _large_for_private(node.t)) for p, node, env, role
                         in _item_nodes(e) if p not in tried and _computing_map(node) and role != "data"), None)
            if site is None:
                break
            path, env, large = site
            tried.add(path)
            result = _vector_map(at_path(e, path), env, target)
            if result.ok:
                trial = [attrs.evolve(st, path=path + st.path) for st in result.steps]
                vectorised = replace_at(e, path, result.expr)
                if large:  # stored in global memory now: as vectors it would count few enough for private
                    vectorised = _apply_at(vectorised, path, "materialise_global", {}, trial)
                if vectorised is not None:
                    steps.extend(trial)
                    e = vectorised
        return Success(e, tuple(steps))

    return Strategy("vector_maps", run)


STAGE_ROWS = 256  # elements of a strided reduction each work-item folds per chunk (column_stages)
MIN_STAGED = 1024  # a strided reduction shorter than this stays one loop per element


def _strided(data: Expr, env: dict) -> bool:
    """Whether a reduction's data reads some array not contiguously (a column of a
    transpose, before or after vector_columns), as far as `_layout` sees it (`env`: the
    layouts of the identifiers bound around it)."""
    from .rules.algorithmic import zip_leaves

    # the arrays a zip (of zips) reads, of any element type (vectors after vector_columns)
    leaves = zip_leaves(spine(data)[1][1] if _computing_map(data) else data, scalars=False)
    return any(_layout(x, env) is not True for x in leaves)


def column_stages() -> Strategy:
    """A program-level map whose elements each reduce a long strided array (a column of a
    transpose: gemv_t's and atax's A^T x, after vector_columns) computes the reductions in
    chunks of STAGE_ROWS first, for every element (map_reduce_stages: chunk k of all elements
    read together, so the work-items at one time read STAGE_ROWS rows, not every row of the
    matrix), then each element's partial results.  On PoCL gemv_t 4096^2 ran 2.5x faster by
    hand in that form (benchmarks/RESULTS.md, 2026-12-03)."""
    from .rules.algorithmic import item_reduction

    def run(e: Expr):
        head, args = spine(e)
        if not (_computing_map(e) and len(args) == 2 and isinstance(args[0], Lambda)):
            return Failure("column_stages: not a map with a function")
        found = item_reduction(args[0])
        if found is None:
            return Failure("column_stages: no reduction per element")
        data = spine(found[1])[1][2]
        n = data.t.size.as_int() if isinstance(data.t, ArrayType) else None
        element = {args[0].param.name: _element_layout(_layout(args[1], {}))}
        if n is None or n < MIN_STAGED or not _strided(data, element):
            return Failure("column_stages: not a long strided reduction")
        return RULES["map_reduce_stages"].strategy(r=STAGE_ROWS)(e)

    return at_host(Strategy("column_stages", run))


def at_host(s: Strategy) -> Strategy:
    """`s` at every outermost place where it applies in program-level code: outside functions,
    except the bodies of `let` and of applied lambdas, which run where the let does.  Never
    fails."""
    return _program_level(f"at_host({s})", s, Success)


def in_functions(s: Strategy) -> Strategy:
    """`s` everywhere it applies inside the functions of program-level code (what work-items
    run), never at program level itself (at_host's complement).  Never fails."""
    from .strategies import normalize, try_

    return _program_level(f"in_functions({s})", None, try_(normalize(s)))


def _program_level(name: str, here: Strategy | None, in_function) -> Strategy:
    """A walk of program-level code: `here` tried at each node (its success ends the walk
    there), `in_function` run on each function met; a let's and an applied lambda's bodies
    are program-level code too (they run where the let does)."""
    from .strategies import all_, argument, body, function, seq

    def run(e: Expr):
        if isinstance(e, (Lambda, NatLambda)):
            return in_function(e)
        if here is not None:
            done = here(e)
            if done.ok:
                return done
        head, args = spine(e)
        if isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda):
            return seq(function(argument(self)), argument(body(self)))(e)
        if isinstance(e, App) and isinstance(e.fun, Lambda):
            return seq(function(body(self)), argument(self))(e)
        return all_(self)(e)

    self = Strategy(name, run)
    return self


def _map_of_partial(e: Expr) -> bool:
    """`map (g a ...) xs`: the function is a partial application (`map (map abs)`), which the
    eta phase turns into a lambda; bare primitives (`map abs`) stay as they are."""
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "map" and args):
        return False
    f = args[0]
    return isinstance(f, App) or isinstance(f, NatApp)


def _fold_of_computed_rows(e: Expr) -> bool:
    """`reduce f z (map g xs)`: a fold over rows a map computes (a sum of scaled rows, a
    matrix product written row by row).  Interchanged into reductions over columns (rule
    reduce_columns) its rows are never built: each column's reduction reads what it needs of
    the map (the dot products a product's lowerings know).  A fold over stored rows keeps its
    form: it already reads them contiguously into a row accumulator (column sums: 0.86x NumPy
    as a fold, 0.80x interchanged, on PoCL)."""
    from .rules.algorithmic import MAX_FUSED_REDUCTIONS

    args = applied(e, "reduce", 3)
    if args is None or not _computing_map(args[2]) or not isinstance(e.t, ArrayType):
        return False
    n = e.t.size.as_int()
    return n is None or n > MAX_FUSED_REDUCTIONS  # a short row is a work-item's accumulator (a banana split's)


def _stage_of_arrays(e: Expr) -> bool:
    """`map (reduce f z) chunks`: a stage split_reduction made, of partial results that hold
    arrays (fused reductions), whose operator and initial value the store phase must see
    inside a lambda to store them; a stage of scalars stays a partial application."""
    return _map_of_partial(e) and isinstance(e.t, ArrayType) and holds_array(e.t.elem)


def fused_in_stages() -> Strategy:
    """n reductions over one array in program-level code fused into one (generate_reduce_fusion,
    pair_reduce_fusion) where the fused operator is one functional.algebra proves associative
    (n-arrays or pairs of monoid operators, element by element) and its values fit a stage
    (`_stageable_values`): the reductions phase then splits the one reduction into parallel stages
    as it would have split each, and the data is read once instead of n times.  Only reductions
    as the program wrote them: where an explored point lowered them already, its choices stay."""
    from . import algebra
    from .rules.macros import r

    fusion = r("generate_reduce_fusion") | r("pair_reduce_fusion")

    def run(e: Expr):
        if not _stageable_values(e.t):
            return Failure("fused_in_stages: the fused values do not fit a reduction's stage")
        if isinstance(e.t, ArrayType) and e.t.size.as_int() == 1:
            return Failure("fused_in_stages: one reduction: nothing to fuse")
        if has_low_level(e):
            return Failure("fused_in_stages: an explored point lowered these reductions already")
        done = fusion(e)
        if done.ok and not algebra.associative(spine(done.expr)[1][0]):
            return Failure("fused_in_stages: the fused operator is not one the algebra proves associative")
        return done

    return Strategy("fused_in_stages", run)


def phases(target: Target | None = None) -> tuple[tuple[str, Strategy], ...]:
    """The default lowering's phases for a device like `target` (None: the default Target), in
    order (see the module's docstring)."""
    from .rules.macros import guard, r
    from .schedules import fuse_maps, fully_lowered, two_stage_reduction
    from .strategies import normalize, seq, try_

    target = target if target is not None else Target()

    return (
        # first: the nest of TF32 dot products as the program wrote it (no phase below rewrites it then)
        ("tensor_cores", at_host(tensor_core_tiles(target))),
        # before indices: generate_as_map would turn N-Body's and MD's `generate 3 (fun(k) => reduce ...)`
        # into a map the banana split no longer matches (three passes over the bodies)
        ("generate_fusion", in_functions(r("generate_reduce_fusion"))),
        ("indices", try_(normalize(r("generate_as_map")))),
        ("eta", try_(normalize(seq(guard("a map of a partial application", _map_of_partial), r("eta_expand_map"))))),
        ("folds", try_(normalize(r("fold_fission") | r("reduce_concat") | r("transpose_rows")
                                 | seq(guard("a fold over computed rows", _fold_of_computed_rows),
                                       r("reduce_columns"))))),
        ("hoist", try_(normalize(r("hoist_invariant")))),
        # before fuse: tile_nest_2d matches `map (fun(r) => map f r) xss`, not the rows' views fused in
        ("neighbourhood_tiles", at_host(neighbourhood_tiles(target))),
        ("fuse", fuse_maps()),
        ("banana_split", in_functions(r("generate_reduce_fusion") | r("pair_reduce_fusion"))),
        ("host_banana_split", at_host(fused_in_stages())),
        ("row_reductions", row_reductions(target)),
        ("vector_reductions", vector_reductions()),
        ("vector_columns", vector_columns(target)),
        ("column_stages", column_stages()),
        ("reductions", at_host(split_reduction(target) | two_stage_reduction())),
        ("vector_maps", vector_maps(target)),
        ("eta_stages", try_(normalize(seq(guard("a stage of array reductions", _stage_of_arrays),
                                          r("eta_expand_map"))))),
        ("declarations", try_(normalize(r("erase_associative")))),
        ("parallelise", parallelise(target)),
        ("fuse_reductions", try_(normalize(r("reduce_seq_map_fusion_shared")))),
        ("store", store_where_needed(private_limit=target.private_limit)),
        ("check", fully_lowered()),
    )


def default_schedule(program: Expr | None = None, target: Target | None = None) -> Strategy:
    """The default lowering of any high-level program for a device like `target`
    (`phases(target)`, on the program's body); what `dpia.compile` runs when no tuned variant
    is known.  Fixing the sizes first
    (`dpia.programs.fix_sizes`) lets the reductions phase split lengths without divisibility
    facts and the store phase keep small per-item arrays private."""
    del program  # the phases decide from the nodes' types
    from .schedules import program_body
    from .strategies import seq

    steps = phases(target)
    lowered = program_body(seq(*(s for name, s in steps if name != "check")))
    check = dict(steps)["check"]

    def run(e: Expr):
        result = lowered(e)
        if not result.ok:
            return Failure(f"default_schedule: {result.reason}")
        complete = check(result.expr)
        return result if complete.ok else complete

    return Strategy("default_schedule", run)


__all__ = ["CHUNK", "INTERLEAVED_CHUNK", "LOCKSTEP_VECTOR_BYTES", "MIN_ROW_ITEMS", "MIN_ROW_PER_ITEM",
           "MIN_WARP_ROW_PER_ITEM", "ROW_ITEMS", "ROW_PER_ITEM", "Target", "row_items", "row_reductions", "interleaved_chunk", "MIN_STAGED", "MIN_VECTOR_MAP", "MIN_VECTOR_REDUCTION", "REDUCTION_WIDTH", "SMALL_REDUCTION", "STAGE_ROWS",
           "SYMBOLIC_STAGES", "VECTOR_WIDTHS", "at_host", "column_stages", "default_schedule",
           "in_functions", "lowering_sites", "parallelise", "phases", "split_reduction", "store_where_needed",
           "vector_columns", "vector_maps", "vector_reduction_sites", "vector_reductions"]
