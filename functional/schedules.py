"""The seed's derivations as named strategies, and ELEVATE-style scheduling vocabulary.

Each schedule is a `Strategy` from a high-level seed program (examples/seed.py) to a
low-level one; `derive(program, schedule)` records every primitive rule application, so
the derivation prints, stores as text and replays.

    vec_sum(block, local)        sum = reduce (+) 0  ->  the seed's vecSum: split block, map_workgroup,
                                 reorder_stride, to_local (map_local (reduce_seq)), iterate, per-group results
                                 to_global, and a final reduce_seq of them
    parallel_reduce(...)         the same for reduce f z (map g ...) (asum, dot): the map is fused into the
                                 first stage
    global_reduce(chunk)         reduce f z (map g xs) -> reduce_seq of map_global partial reductions
    mm_tiled(n, m, k)            naive mm -> n x m tiles of the result per work-group, a reduction over pairs of
                                 k-wide tiles copied to local memory, map_local inside
    mm_register_blocked(...)     mm_tiled, and l1 x l2 results per work-item accumulated from private copies
    mm_register_blocked_1d(...)  mm_tiled with the seed's 1D register blocking macro rule
    scal_global / scal_vectorized(w) / scal_workgroup(chunk), gemv_global / gemv_workgroup(local)
    default_schedule(program)    any high-level program -> map_global outside, map_seq / reduce_seq inside,
                                 large top-level reductions two-stage (what dpia.compile uses untuned)

Vocabulary (ELEVATE, ICFP 2020): `tile(x, y)`, `vectorize(w)`, `parallel(levels)`,
`lower_reductions()`, `store_in_memory(space, where)`, `program_body(s)`, `split_among(p)`.

"Fully lowered" means no computing `map` or `reduce` is left (`high_level_left`).  Maps
whose function only moves data (`map join`, `map (fun(a) => split k a)`) are views, not
computations (Lift keeps them as `Map(Join())`); `high_level_left` does not count them.
The mm schedules go further and rewrite the tiling's layout maps into whole-array views
(macros.untile_views, macros.tile_views), because the DPIA translation takes only low-level
maps.
"""

from __future__ import annotations

import attrs

from .expr import App, Expr, Lambda, NatLambda, Prim, applied, spine, walk
from .primitives import ELEMENT_FUNCTIONS, LAYOUT, PARALLEL_MAPS, computing_map, has_computation, is_view_fn  # noqa: F401 -- part of this module's vocabulary
from .rules import macros  # noqa: F401 -- registers the macro rules
from .rules.macros import (guard, let_value, named, outermost, pair_parts, parallel_reduction, push_views, r,
                           reduce_fn, register_blocking_1d, register_blocking_2d, tile_2d, tile_reduction,
                           tile_views, untile_views)
from .storage import arg_path
from .strategies import (Failure, Strategy, Success, argument, at_path, body, fmap, function, lchoice, normalize, replace_at,
                         seq, some, top_down, try_)

# ----------------------------------------------------------------------------- views

def _compute_map(e: Expr) -> bool:
    return computing_map(e, saturated=False)


def high_level_left(e: Expr) -> list[str]:
    """The computing high-level primitives left in a program: every `reduce`, and every
    `map` whose function is not a view.  Empty for a fully lowered program."""
    out = []
    for node in walk(e):
        if (isinstance(node, App) and isinstance(node.fun, Prim) and node.fun.name in ("map", "reduce")
                and (node.fun.name == "reduce" or not is_view_fn(node.arg))):  # node.arg: the function
            out.append(f"{node.fun.name} {_short(node.arg)}")
    return out


def _short(e: Expr, width: int = 60) -> str:
    s = str(e)
    return s if len(s) <= width else s[: width - 3] + "..."


# ------------------------------------------------------------------------- locations


def program_body(s: Strategy) -> Strategy:
    """`s` on a program's body, below its size and value parameters."""

    def run(e: Expr):
        if isinstance(e, (NatLambda, Lambda)):
            return body(self)(e)
        return s(e)

    self = Strategy(f"program_body({s})", run)
    return self


def map_data(s: Strategy) -> Strategy:
    """`s` on the array of a saturated map (`map f xs`: on xs); nothing for `map f`."""

    def run(e: Expr):
        _, args = spine(e)
        return argument(s)(e) if len(args) == 2 else Success(e)

    return Strategy(f"map_data({s})", run)


def in_tiles(s: Strategy) -> Strategy:
    """`s` on each tile of a `tile_2d` result:
    join (map (fun(rows) => map join (transpose (map (fun(cols) => TILE) ...))) ...)."""
    return argument(fmap(argument(argument(fmap(s)))))


def _lazy(make) -> Strategy:
    """A strategy built when first run (for recursive definitions)."""
    cache: list[Strategy] = []

    def run(e: Expr):
        if not cache:
            cache.append(make())
        return cache[0](e)

    return Strategy("lazy", run)


# -------------------------------------------------------------------- vocabulary


def lower_map(level: str, dim: int = 0) -> Strategy:
    """`map f -> level d f` for level in map_global, map_workgroup, map_local, map_seq."""
    if level in ("map_seq", "map_seq_unroll"):
        return r(f"lower_{level}")
    return r(f"lower_{level}", d=dim)


def parallel(levels) -> Strategy:
    """ELEVATE's `parallel`: the outermost computing maps become `levels[0]`, the computing
    maps directly inside their functions `levels[1]`, and so on; deeper maps `map_seq`.
    A level is a strategy (e.g. `lower_map("map_workgroup", 1)`) or a pair (name, dim)."""
    levels = [lv if isinstance(lv, Strategy) else lower_map(*lv) for lv in levels]

    def make(depth: int) -> Strategy:
        here = levels[depth] if depth < len(levels) else lower_map("map_seq")
        place = seq(guard("a computing map", _compute_map), here,
                    try_(fmap(_lazy(lambda: make(depth + 1)))),
                    map_data(_lazy(lambda: make(depth))))
        return try_(_outermost_beside_parallel_loops(place, top=depth == 0))

    return named(f"parallel({', '.join(map(str, levels))})", make(0))


def _outermost_beside_parallel_loops(s: Strategy, top: bool) -> Strategy:
    """`outermost s`, but never inside the function of a map already on a parallel level
    (map_global/map_workgroup/map_local f xs: only into xs): a map there is one item's or one
    group's code, which a work-group or global level may not enter (a further reduction
    stage over an earlier stage's map_global would otherwise put map_workgroup inside it).
    Never inside generate's function either (it runs where each element is read), and at the
    `top` level (the program's own code) not inside the function of a reduction or another
    map: one item runs that (a step of a sequential loop), not the whole device.  Below the
    top level, a group-level reduction's operator is group code (a tile's map_local copies)."""

    def run(e: Expr):
        head, args = spine(e)
        if not (isinstance(head, Prim) and head.name in ELEMENT_FUNCTIONS):
            return lchoice(s, some(self))(e)
        if head.name in PARALLEL_MAPS and len(args) == 2:
            return data(e, args)
        here = s(e)
        if here.ok:
            return here
        return data(e, args) if top or head.name == "generate" else some(self)(e)

    def data(e: Expr, args: tuple):
        """`self` in the arguments after the function (where it applies: `some`)."""
        steps, hit = (), False
        for k in range(1, len(args)):
            path = arg_path(len(args), k)
            r = self(at_path(e, path))
            if r.ok:
                hit = True
                e = replace_at(e, path, r.expr)
                steps += tuple(attrs.evolve(st, path=path + st.path) for st in r.steps)
        return Success(e, steps) if hit else Failure(f"{self.name}: no data argument where it applies")

    self = Strategy(f"outermost({s}), beside parallel loops", run)
    return self


def lower_reductions() -> Strategy:
    """Every `reduce` becomes `reduce_seq`; then `reduce_seq f z (map_seq g xs)` fuses."""
    return named("lower_reductions", seq(try_(normalize(r("lower_reduce_seq"))),
                                         try_(normalize(r("reduce_seq_map_fusion")))))


def store_in_memory(space: str, where) -> Strategy:
    """ELEVATE's `store_in_memory`: wrap each outermost low-level map for which
    `where(node)` holds in `to_<space>` (global, local or private)."""
    return named(f"store_in_memory({space})", outermost(seq(guard(f"store site for {space}", where),
                                                            r(f"store_{space}"))))


def tile(x, y) -> Strategy:
    """ELEVATE's `tile(x, y)` at a nested map: the 2D tiling macro (see macros.tile_2d)."""
    return tile_2d(x, y)


def vectorize(w: int) -> Strategy:
    """ELEVATE's `vectorize(w)`: the first map of scalars becomes a map of `map_vec` on
    `as_vector w`."""
    return named(f"vectorize({w})", top_down(r("vectorize", w=w)))


def _applies(name: str, nargs: int = 2):
    """The test "`e` is the primitive `name` applied to `nargs` arguments" (a guard's test)."""
    return lambda e: applied(e, name, nargs) is not None


# ------------------------------------------------------------------ reductions


def parallel_reduce(block: int = 256, local: int = 64) -> Strategy:
    """`reduce f z E` -> the seed's vecSum shape, lowered: work-groups over blocks, each a
    first stage of `local` work-items reading with stride `local` into local memory, then a
    tree (`iterate`) of map_local stages in local memory; the per-group results go to global
    memory and a final reduce_seq sums them."""
    return named(f"parallel_reduce({block}, {local})", program_body(seq(
        parallel_reduction(block, local),
        parallel([("map_workgroup", 0), ("map_local", 0)]),
        lower_reductions(),
        store_in_memory("global", _applies("map_workgroup")),
        store_in_memory("local", _applies("map_local")),
    )))


def parallel_reduce_two_stage(block: int = 16384, local: int = 256, block2: int = 256, local2: int = 64) -> Strategy:
    """parallel_reduce twice: the per-group results of the first stage (blocks of `block`,
    `local` items) are stored in global memory and reduced by a second parallel stage (blocks
    of `block2` partial results, `local2` items); one work-item adds the second stage's
    results.  Three kernels, none of them sequential over more than N/(block*block2) values."""
    stage = [("map_workgroup", 0), ("map_local", 0)]
    return named(f"parallel_reduce_two_stage({block}, {local}, {block2}, {local2})", program_body(seq(
        parallel_reduction(block, local),
        parallel(stage),
        store_in_memory("global", _applies("map_workgroup")),
        parallel_reduction(block2, local2),
        parallel(stage),
        lower_reductions(),
        store_in_memory("global", _applies("map_workgroup")),
        store_in_memory("local", _applies("map_local")),
    )))


def vec_sum(block_size: int = 256, local_size: int = 64) -> Strategy:
    """sum = reduce (+) 0 -> the seed's vecSum (see parallel_reduce)."""
    return named(f"vec_sum({block_size}, {local_size})", parallel_reduce(block_size, local_size))


def global_reduce(chunk: int = 64) -> Strategy:
    """`reduce f z E` -> `reduce_seq f z (map_global 0 (fun(c) => reduce_seq f' z c) (split chunk ...))`:
    each work-item reduces `chunk` consecutive elements (E's map fused in); the partial
    results are reduced sequentially."""
    return named(f"global_reduce({chunk})", program_body(seq(
        r("reduce_split", n=chunk),
        try_(argument(push_views())),
        parallel([("map_global", 0)]),
        lower_reductions(),
        store_in_memory("global", _applies("map_global")),
    )))


def asum(block: int = 256, local: int = 64) -> Strategy:
    """asum = reduce (+) 0 (map abs xs): the parallel reduction with abs fused into the
    first stage."""
    return named(f"asum({block}, {local})", parallel_reduce(block, local))


def dot(chunk: int = 64) -> Strategy:
    """dot = reduce (+) 0 (map (*) (zip xs ys)) -> map_global partial dot products of
    `chunk` elements (one fused reduce_seq each) and a final reduce_seq."""
    return named(f"dot({chunk})", global_reduce(chunk))


# ---------------------------------------------------------------------- maps


def scal_global() -> Strategy:
    """scal = map (fun(x) => x * a) xs -> map_global 0 (...) xs."""
    return named("scal_global", program_body(parallel([("map_global", 0)])))


def scal_vectorized(w: int = 4) -> Strategy:
    """scal -> as_scalar (map_global 0 (map_vec (fun(x) => x * a)) (as_vector w xs))."""
    return named(f"scal_vectorized({w})", program_body(seq(vectorize(w), parallel([("map_global", 0)]))))


def scal_workgroup(chunk: int = 64) -> Strategy:
    """scal -> join (map_workgroup 0 (map_local 0 (fun(x) => x * a)) (split chunk xs))."""
    return named(f"scal_workgroup({chunk})", program_body(seq(
        r("split_join", n=chunk),
        parallel([("map_workgroup", 0), ("map_local", 0)]),
    )))


def _gemv_fuse() -> Strategy:
    """gemv's `map (+) (zip (map row_fn mat) (map scal_fn ys))` -> one map over zip mat ys."""
    return seq(argument(r("zip_map")), r("map_fusion"), try_(normalize(r("beta") | r("fst_pair") | r("snd_pair"))))


def gemv_global() -> Strategy:
    """gemv -> map_global 0 (fun(p) => alpha * reduce_seq (fun(acc, q) => acc + fst q * snd q) 0.0
    (zip (fst p) xs) + snd p * beta) (zip mat ys): one work-item per row."""
    return named("gemv_global", program_body(seq(_gemv_fuse(), parallel([("map_global", 0)]), lower_reductions())))


def split_among(count: int) -> Strategy:
    """At `reduce f z xs`: `reduce_split` into `count` chunks (chunk size length/count, a size
    in terms of the program's size variables)."""

    def run(e: Expr):
        _, args = spine(e)
        if len(args) != 3 or args[2].t is None:
            return Failure(f"split_among({count}): not a typed reduction")
        return r("reduce_split", n=args[2].t.size / count)(e)

    return Strategy(f"split_among({count})", run)


def gemv_workgroup(local: int = 16) -> Strategy:
    """gemv -> one work-group per row; `local` work-items each reduce every local-th element
    of the row's dot product (reorder_stride: coalesced reads) into local memory, then one
    sum per row: map_workgroup 0 (fun(p) => alpha * reduce_seq (+) 0.0 (to_local (map_local 0
    (...) (zip (split (N/local) (reorder_stride local (fst p))) ...))) + snd p * beta) (zip mat ys)."""
    split_dot = seq(guard("reduce f z xs", _applies("reduce", 3)),
                    r("reduce_reorder", s=local), try_(argument(push_views())),
                    split_among(local), try_(argument(push_views())))
    return named(f"gemv_workgroup({local})", program_body(seq(
        _gemv_fuse(),
        fmap(top_down(split_dot)),
        parallel([("map_workgroup", 0), ("map_local", 0)]),
        lower_reductions(),
        store_in_memory("local", _applies("map_local")),
    )))


# ------------------------------------------------------------ matrix multiplication


def _tile_copies(space: str) -> Strategy:
    """Place the copies of `copy_element` (the let's value: a pair of copies) in `space`."""
    return let_value(pair_parts(r(f"store_{space}")))


def in_view_tiles(s: Strategy) -> Strategy:
    """`s` on each tile of a tiling after `untile_views`:
    join (map (fun(rows) => transpose (join (map (fun(cols) => transpose TILE) ...))) ...)."""
    return argument(fmap(argument(argument(fmap(argument(s))))))


def _tile_product(s: Strategy) -> Strategy:
    """`s` on the tile product inside a tile of mm_tiled_high:
    reduce_seq (fun(acc, q) => let c (fun(t) => map F (zip acc PRODUCT))) z xs."""
    return reduce_fn(body(body(argument(body(argument(argument(s)))))))


def _sequential_tiles() -> Strategy:
    """At a tile_reduction result: the reduction over pairs of tiles as reduce_seq fused with
    the tile product, each pair of tiles copied once (copy_element)."""
    return seq(r("lower_reduce_seq"), r("reduce_seq_map_fusion"), r("copy_element"))


def mm_tiled_high(n: int, m: int, k: int, blocking=None) -> Strategy:
    """At mm's body: the seed's "Tiling as a Sequence of Rewrites", high level but with the
    reduction over tiles already sequential and the tiles copied:

        untile (map (fun(rowOfTilesA) => map (fun(colOfTilesB) =>
            reduce_seq (fun(tileAcc, tiles) => let (copy tiles) (fun(t) =>
                map (map (+)) (zip tileAcc (map (fun(as) => map (fun(bs) => dot as bs) (snd t)) (fst t)))))
              0 (zip (k-wide tiles of rowOfTilesA) (k-wide tiles of colOfTilesB))) ...) ...)

    with the layout maps of the tiling rewritten to whole-array views (tile_views,
    untile_views).  `blocking`: a strategy for the tile product (register blocking)."""
    in_tile = seq(tile_reduction(k), tile_views(), _sequential_tiles())
    if blocking is not None:
        in_tile = seq(in_tile, _tile_product(blocking))
    return named(f"mm_tiled_high({n}, {m}, {k})", seq(tile_2d(n, m), in_tiles(in_tile), untile_views()))


_MM_LEVELS = [("map_workgroup", 1), ("map_workgroup", 0), ("map_local", 1), ("map_local", 0)]


def mm_tiled(n: int = 4, m: int = 4, k: int = 4) -> Strategy:
    """Naive mm -> n x m tiles of the result per work-group (map_workgroup 1 and 0), k-wide
    tiles of A and B copied to local memory (to_local (map_local 1 (map_local 0 id))), the
    tile product and accumulation with map_local 1 and 0, dot products as fused reduce_seq."""
    return named(f"mm_tiled({n}, {m}, {k})", program_body(seq(
        mm_tiled_high(n, m, k),
        fuse_tile_update(),
        parallel(_MM_LEVELS),
        lower_reductions(),
        in_view_tiles(reduce_fn(body(body(_tile_copies("local"))))),
        in_view_tiles(reduce_fn(body(body(_coalesced_a_copy())))),
    )) >> _materialise_accumulators())


def _coalesced_a_copy() -> Strategy:
    """The copy of A's tile (the first of the let's pair) walks A's rows with local id 0,
    so consecutive items read consecutive addresses."""
    return let_value(function(argument(argument(r("swap_local_dims")))))


def fuse_tile_update() -> Strategy:
    """`map (map (+)) (zip acc (tile product))` -> one map over `zip acc` computing each
    product element where it is added (no tile product array in between)."""
    step = lchoice(lchoice(_rule("zip_map_snd"), _rule("map_fusion")), lchoice(_rule("fst_pair"), _rule("snd_pair")))
    return named("fuse_tile_update", normalize(step))


def _materialise_accumulators() -> Strategy:
    """The tile accumulator's initial value is written by loops the program states, and the
    finished tile leaves it through the work-group's items (map_local 1 / 0)."""
    return named("materialise_accumulators", seq(
        normalize(_rule("materialise_reduce_init_local")), top_down(_rule("write_reduction_with_local_maps"))))


def _rule(name: str) -> Strategy:
    from .rules import RULES

    return RULES[name].strategy()



def mm_register_blocked(n: int = 8, m: int = 8, k: int = 4, l1: int = 2, l2: int = 2, coalesce_a: bool = False,
                        pad: int = 0, vector_a: int = 0, vector_b: int = 0, interleave_b: int = 0,
                        unroll_k: bool = False, double_buffer: bool = False) -> Strategy:
    """mm_tiled, and inside each tile l1 x l2 results per work-item in registers (the seed's
    "Register Blocking"): the tile product becomes blocks of outer products (a column of l1
    values of tileA times a row of l2 values of tileB, copied to private memory); the tile
    accumulator is blocked the same way (`block_accumulator`), each block's reduction starts
    from the accumulator's block (`reduce_init_fusion`, then `neutral_init` drops the `+ 0`); map_local 1 / 0 over the blocks,
    unrolled loops inside a block.  `coalesce_a`: A's tile is copied with local id 0 along
    k (coalesced global reads; `swap_local_dims`); `pad`: its rows in local memory get `pad`
    unused values (`pad_local_rows`: no bank conflicts when local id 0 walks a column);
    `vector_b`: B's tile rows are copied `vector_b` values per item and instruction
    (`vectorize_parallel`: float4 reads of global memory, float4 writes of local memory);
    `vector_a` (with coalesce_a): A's tile is read `vector_a` values along k at a time
    (`interchange_parallel`, then `vectorize_parallel`), each vector's lanes written into
    the k-major local tile one by one; `interleave_b`: B's local rows stored in runs of
    `interleave_b` values of each item's block side by side (`interleave_local_rows`: an
    item reads its l2 values as float4 runs without bank conflicts); `unroll_k`: an item's loop
    over the k-steps of a tile replicated (`unroll_reduce_seq`, the first reduction of a constant
    length: the tile loop's length is K / k); `double_buffer`: the tile loop double-buffered
    (`double_buffer`: the next k-tiles copied into a second pair of local buffers, plain copies,
    while these are used)."""
    if vector_a and (not coalesce_a or pad):
        raise ValueError("vector_a reads A along k: it needs coalesce_a=True and no pad")
    blocking = seq(register_blocking_2d(l1, l2), in_tiles(_sequential_tiles()), untile_views())
    layout = [top_down(_coalesced_a_copy())] if coalesce_a else []
    if pad:
        layout.append(top_down(let_value(function(argument(r("pad_local_rows", p=pad))))))
    items0 = m // l2  # a work-group's items along local dimension 0
    if vector_a:
        layout.append(top_down(let_value(function(argument(argument(seq(
            _rule("interchange_parallel"), argument(_vector_copy(vector_a, items0)))))))))
    if vector_b:
        layout.append(top_down(let_value(argument(argument(_vector_copy(vector_b, items0))))))
    if interleave_b:
        layout.append(top_down(let_value(argument(r("interleave_local_rows", b=l2, g=interleave_b)))))
    options = ((", coalesce_a=True" if coalesce_a else "") + (f", pad={pad}" if pad else "")
               + (f", vector_a={vector_a}" if vector_a else "") + (f", vector_b={vector_b}" if vector_b else "")
               + (f", interleave_b={interleave_b}" if interleave_b else "") + (", unroll_k=True" if unroll_k else "")
               + (", double_buffer=True" if double_buffer else ""))
    k_steps = ([top_down(_rule("unroll_reduce_seq"))] if unroll_k else []) + (
        [top_down(_rule("double_buffer"))] if double_buffer else [])
    return named(f"mm_register_blocked({n}, {m}, {k}, {l1}, {l2}{options})", program_body(seq(
        mm_tiled_high(n, m, k, blocking),
        in_view_tiles(seq(_rule("block_accumulator"), top_down(_rule("reduce_init_fusion")),
                          try_(top_down(_rule("neutral_init"))), fuse_tile_update())),
        parallel(_MM_LEVELS + [("map_seq_unroll",), ("map_seq_unroll",)]),
        lower_reductions(),
        top_down(let_value(pair_parts(r("store_local")))),
        top_down(let_value(pair_parts(r("store_private")))),
        top_down(seq(guard("map_local 0 over block reductions", _maps_reductions), fmap(seq(
            try_(_rule("materialise_reduce_init_unrolled")), _rule("write_reduction_unrolled"))))),
        *layout,
    )) >> seq(_materialise_accumulators(), *k_steps))


def _vector_copy(w: int, items0: int) -> Strategy:
    """A tile copy `map_local 1 (fun(r) => map_local 0 id r) tile` spread over the work-group
    in rows of `items0` vectors (`reshape_parallel`), each item copying vectors of w values
    (`vectorize_parallel`)."""
    return seq(r("reshape_parallel", n=items0 * w), argument(argument(fmap(r("vectorize_parallel", w=w)))))


def _maps_reductions(e: Expr) -> bool:
    """`map_local d (fun(x) => reduce_seq ...) xs`."""
    head, args = spine(e)
    return (isinstance(head, Prim) and head.name == "map_local" and len(args) == 2 and isinstance(args[0], Lambda)
            and _applies("reduce_seq", 3)(args[0].body))


def mm_register_blocked_1d(n: int = 8, m: int = 8, k: int = 4, l: int = 2) -> Strategy:
    """mm_tiled with the seed's 1D register blocking (the macro rule's list, literally) on
    the tile product: l rows of tileA per work-item, the column of tileA in registers."""
    return named(f"mm_register_blocked_1d({n}, {m}, {k}, {l})", program_body(seq(
        mm_tiled_high(n, m, k, register_blocking_1d(l)),
        parallel(_MM_LEVELS),
        lower_reductions(),
        in_view_tiles(reduce_fn(body(body(_tile_copies("local"))))),
    )))


__all__ = ["LAYOUT", "is_view_fn", "high_level_left", "program_body", "map_data", "in_tiles", "lower_map",
           "parallel", "lower_reductions", "store_in_memory", "in_view_tiles", "tile", "vectorize", "parallel_reduction",
           "parallel_reduce", "parallel_reduce_two_stage", "vec_sum", "global_reduce", "asum", "dot", "scal_global", "scal_vectorized",
           "scal_workgroup", "gemv_global", "gemv_workgroup", "split_among", "mm_tiled_high", "mm_tiled", "mm_register_blocked",
           "mm_register_blocked_1d", "unroll_lane_reductions", "chunked_sum", "mm_rows_vectorized", "mm_tensor_cores", "tensor_core_nest"]


def mm_tensor_cores(bm: int = 64, bn: int = 64, wm: int = 32, wn: int = 32) -> Strategy:
    """A matrix product whose dot products multiply TF32 values (`tf32 (fst p) * tf32 (snd p)`) on
    a warp's tensor cores: bm x bn blocks per work-group (map_workgroup 1 / 0), wm x wn parts of a
    block per warp (map_local 2 / 1: the warps; their lanes are local dimension 0), each part as
    m16n8k8 products accumulated in fragments (rule warp_tile_mma), the fragment accumulators
    written and read back by their own lanes:

        untile (map_workgroup 1 (fun(rows) => map_workgroup 0 (fun(cols) =>
            untile (map_local 2 (fun(wr) => map_local 1 (fun(wc) =>
                untile (map (map (unfragment c)) (lanes' copy (reduce_seq (fun(acc, k-step) =>
                    map_seq_unroll (map_seq_unroll (mma_sync acc_t (fragment a A_t) (fragment b B_t))))
                  (lanes' copy of zeros) (k-steps of 8)))) ...) ...)) ...)) ...)

    The operands are read from global memory through their fragments' layouts (no local memory yet),
    rounded to TF32 by mma_sync."""
    return named(f"mm_tensor_cores({bm}, {bn}, {wm}, {wn})", program_body(tensor_core_nest(bm, bn, wm, wn)))


def tensor_core_nest(bm: int, bn: int, wm: int, wn: int) -> Strategy:
    """mm_tensor_cores at a nest of TF32 dot products `map (fun(a) => map (fun(b) => dot) cs) rs`
    (the default lowering's tensor_core_tiles phase takes it where the device has tensor cores)."""
    return named(f"tensor_core_nest({bm}, {bn}, {wm}, {wn})", seq(
        tile_2d(bm, bn),
        in_tiles(tile_2d(wm, wn)),
        in_tiles(in_tiles(r("warp_tile_mma"))),
        parallel([("map_workgroup", 1), ("map_workgroup", 0), ("map_local", 2), ("map_local", 1),
                  ("map_seq_unroll",), ("map_seq_unroll",)]),
        top_down(r("materialise_fragments_by_lanes")),
        top_down(r("write_fragments_by_lanes")),
    ))


def _store() -> Strategy:
    """The default lowering's last phases: what the steps left high level (the packed copy's maps)
    placed, then stored."""
    from .default_lowering import parallelise, store_where_needed

    return seq(parallelise(), store_where_needed())


def mm_rows_vectorized(rows: int = 4, cols: int = 16, width: int = 8) -> Strategy:
    """The CPU shape of mm: each work-item (map_global 1 over blocks of `rows` rows of A,
    map_global 0 over blocks of `cols` columns of B) accumulates its rows x cols results in
    vectors of `width` lanes (SIMD registers), reading B's rows as vectors straight from
    global memory and broadcasting A's values; no local memory, no barriers:

        join (map_global 1 (fun(rs) => map join (transpose (map_global 0 (fun(cs) =>
            map as_scalar (reduce_seq (fun(acc, (a, b)) => map (fun(q) => map (fun(p) =>
                fst p + cast (snd q) * snd p) (zip (fst q) (as_vector width b))) (zip acc a))
              zeros (zip (transpose rs) (transpose cs))))
          (split cols (transpose B))))) (split rows A))

    Steps: register_blocking_2d(rows, cols) at the top level (tile_2d, lift_reduce: blocks of
    outer products), lower_reductions (the outer product fused into the step), the update
    fused (fuse_tile_update), `vectorize_accumulator(width)`, map_global 1 / 0 outside and
    unrolled loops inside, the initial value and the result copied by unrolled loops; B's panels
    stored transposed first (rule transposed_panels: `let (to_global (map transpose (split cols
    (transpose B)))) ...`, as BLAS packs them), so each item's k loop reads them contiguously
    (PoCL 1024^3: 23 -> 17 ms at the driver's launch, 11 ms at local size 64)."""
    from .rules.macros import register_blocking_2d

    return named(f"mm_rows_vectorized({rows}, {cols}, {width})", program_body(seq(
        register_blocking_2d(rows, cols),
        lower_reductions(),
        fuse_tile_update(),
        top_down(r("vectorize_accumulator", w=width)),
        parallel([("map_global", 1), ("map_global", 0), ("map_seq_unroll",), ("map_seq_unroll",)]),
        top_down(_rule("materialise_reduce_init_unrolled")),
        top_down(_rule("write_reduction_unrolled")),
        top_down(_rule("transposed_panels")),
        _store(),  # the packed copy's loops
    )))


# ------------------------------------------------------- vectorised reductions (CPU devices)


def _is_lane_reduction(e: Expr) -> bool:
    """`reduce f z (as_scalar (generate 1 (fun(i) => v)))`: the lanes of one vector, reduced
    (what reduce_vectorize leaves after its vector reduction)."""
    head, args = spine(e)
    if not (isinstance(head, Prim) and head.name == "reduce" and len(args) == 3):
        return False
    lanes, inner = spine(args[2])
    return (isinstance(lanes, Prim) and lanes.name == "as_scalar" and len(inner) == 1
            and _applies("generate", 1)(inner[0]))


def unroll_lane_reductions() -> Strategy:
    """Reductions over a vector's lanes become reduce_seq_unroll: each lane is then read
    with a constant index (`v.s0 .. v.s7`), no dynamic lane access."""
    return named("unroll_lane_reductions", try_(normalize(seq(
        guard("a reduction of a vector's lanes", _is_lane_reduction), r("lower_reduce_seq_unroll")))))


def chunked_sum(chunk: int = 8192, width: int = 8) -> Strategy:
    """`reduce f z xs` (f add, mul, max or min; z its neutral element) -> the CPU-shaped sum:
    each work-item reduces `chunk` consecutive vectors of `width` lanes into one private vector
    accumulator and then its lanes; the per-item results are reduced sequentially:

        reduce_seq f z (to_global (map_global 0 (fun(c) =>
            let (reduce_seq f (cast vec[s, width] z) (as_vector width c))
                (fun(v) => reduce_seq_unroll f z (as_scalar (generate 1 (fun(i) => v)))))
          (split (chunk*width) xs)))

    Steps: reduce_split (chunk*width); eta_expand_map; reduce_vectorize (width) in each chunk;
    map_global; the lanes' reduction unrolled; the rest reduce_seq; partial results to_global."""
    return named(f"chunked_sum({chunk}, {width})", program_body(seq(
        r("reduce_split", n=chunk * width),
        argument(r("eta_expand_map")),
        argument(fmap(r("reduce_vectorize", w=width))),
        parallel([("map_global", 0)]),
        unroll_lane_reductions(),
        lower_reductions(),
        store_in_memory("global", _applies("map_global")),
    )))


# --------------------------------------------------------------- the default lowering


SMALL_REDUCTION = 1024  # a reduction of a constant length below this runs sequentially (one item)
MAX_CHUNK = 64  # per-item chunk of a top-level reduction over a symbolic length (from its divisibility facts)


def _function_body(f: Expr) -> Expr:
    return f.body if isinstance(f, Lambda) else f


def _perfectly_nested(e: Expr) -> bool:
    """`map (fun(a) => map g E) xs` (or `map (map g) xs`) with E only a view: both maps run
    over independent elements (mm's rows and columns), so one 2D launch covers them."""
    if not _compute_map(e) or len(spine(e)[1]) != 2:
        return False
    inner = _function_body(spine(e)[1][0])
    head, args = spine(inner)
    if not (isinstance(head, Prim) and head.name == "map" and args and not is_view_fn(args[0])):
        return False
    return len(args) == 1 or not has_computation(args[1])


def fuse_maps() -> Strategy:
    """Producer maps into their consumers, so no intermediate array is left between them:
    `map f (map g xs)`, `zip (map f xs) (map g ys)`, `zip xs (map g ys)` and `zip (map f xs) ys` fuse; the pairs
    this builds are taken apart again (inline_once, let_pair, fst_pair, snd_pair).  Fusion binds
    an element read several times with `let` (core.bind), so no computation is duplicated and
    the program grows linearly."""
    fusion = r("map_fusion_shared") | r("zip_map") | r("zip_map_snd") | r("zip_map_fst")
    cleanup = r("inline_once") | r("let_pair") | r("fst_pair") | r("snd_pair")
    return named("fuse_maps", seq(try_(normalize(fusion)), try_(normalize(cleanup))))


def _reduction_chunk(length) -> int | None:
    """Elements per work-item of a two-stage reduction over `length`, or None (sequential):
    a constant length gets its largest divisor up to sqrt(length) (both stages balanced);
    a symbolic one the largest power of two up to MAX_CHUNK that its facts say divides it."""
    from .nat import divides

    n = length.as_int()
    if n is not None:
        if n < SMALL_REDUCTION:
            return None
        best = max(d for d in range(1, int(n ** 0.5) + 1) if n % d == 0)
        return best if best > 1 else None
    chunk = MAX_CHUNK
    while chunk > 1 and not divides(chunk, length):
        chunk //= 2
    return chunk if chunk > 1 else None


def _scalar_reduction(e: Expr) -> bool:
    from .types import ScalarType

    return _applies("reduce", 3)(e) and isinstance(e.t, ScalarType)


def two_stage_reduction() -> Strategy:
    """At a scalar `reduce f z E` over a large array: `reduce_split` into per-item chunks
    (see _reduction_chunk) with E's maps pushed into the chunks, so a later map_global
    reduces the chunks in parallel and a reduce_seq combines the partial results."""

    def run(e: Expr):
        if not _scalar_reduction(e):
            return Failure("two_stage_reduction: not a scalar reduce f z xs")
        chunk = _reduction_chunk(spine(e)[1][2].t.size)
        if chunk is None:
            return Failure("two_stage_reduction: too short, or no provable chunk divides its length")
        return seq(r("reduce_split", n=chunk), try_(argument(push_views())))(e)

    return Strategy("two_stage_reduction", run)


def outside_functions(s: Strategy) -> Strategy:
    """`s` at every outermost place where it applies, looking only outside functions
    (lambdas): the program-level computations, not those done per element.  Never fails."""
    from .strategies import all_

    def run(e: Expr):
        if isinstance(e, (Lambda, NatLambda)):
            return Success(e)
        here = s(e)
        return here if here.ok else all_(self)(e)

    self = Strategy(f"outside_functions({s})", run)
    return self


def _parallel_map() -> Strategy:
    """At an outermost computing map: a perfectly nested pair of maps -> map_global 1 and
    map_global 0 (a 2D launch, dimension 0 along the inner, contiguous index); any other
    map -> map_global 0.  Maps inside become map_seq; maps producing its data are placed the
    same way."""
    two_d = seq(guard("a perfectly nested map of maps", _perfectly_nested),
                parallel([("map_global", 1), ("map_global", 0)]))
    return lchoice(two_d, parallel([("map_global", 0)]))


def _is_to(e: Expr) -> bool:
    head, args = spine(e)
    return isinstance(head, Prim) and head.name in ("to_global", "to_local", "to_private") and len(args) == 1


def _store_parallel_results() -> Strategy:
    """Every program-level map_global's result (outside functions) goes to global memory
    (`to_global`), unless the program already says where it lives: the translation needs a
    place for each array a parallel loop writes and something else reads.  A map_global
    inside a function (mm's columns) writes straight into its caller's output."""
    from .strategies import all_

    wrap = r("store_global")

    def run(e: Expr):
        if isinstance(e, (Lambda, NatLambda)):
            return Success(e)
        if _is_to(e):
            return argument(all_(self))(e)  # stored already: look inside the stored computation
        if _applies("map_global", 2)(e):
            return seq(all_(self), wrap)(e)
        return all_(self)(e)

    self = Strategy("store_parallel_results", run)
    return self


def _first_not_lowered(e: Expr, path: tuple = ()) -> tuple[tuple, Expr] | None:
    """The path and node of the first computing high-level map or reduce (pre-order)."""
    head, args = spine(e)
    if isinstance(head, Prim) and args and (head.name == "reduce" or (head.name == "map" and not is_view_fn(args[0]))):
        return path, e
    for k, c in enumerate(e.children()):
        found = _first_not_lowered(c, path + (k,))
        if found is not None:
            return found
    return None


def fully_lowered() -> Strategy:
    """Succeeds (no step) on a program without computing high-level maps or reductions;
    else fails naming the first one and its path."""

    def run(e: Expr):
        found = _first_not_lowered(e)
        if found is None:
            return Success(e)
        path, node = found
        where = ".".join(map(str, path)) or "root"
        return Failure(f"default_schedule cannot lower `{spine(node)[0]}` at {where}: {_short(node, 90)}")

    return Strategy("fully_lowered", run)


def default_schedule(program: Expr | None = None, target=None) -> Strategy:
    """The default lowering of any high-level program, for a device like `target`
    (functional.default_lowering.Target; None: the default Target): see functional.default_lowering."""
    from .default_lowering import default_schedule as lowering

    return lowering(program, target)


__all__ += ["default_schedule", "fully_lowered", "fuse_maps", "outside_functions", "two_stage_reduction"]
