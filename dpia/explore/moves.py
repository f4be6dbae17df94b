"""The exploration's vocabulary: moves, each a macro rule or a lowering rule applied at one
node of a program, as data.

A `Move` names what it rewrites (its equation), the strategy it runs at the node, and its
numeric parameters: each divides a length at the node (`lengths`: the Nat the parameter
must divide, or the name of another parameter of the same move it must divide), so stage 3
draws its values from divisors.  `fixed` parameters are structural (a map's OpenCL
dimension): they are part of a skeleton, not tuned.

    ALGORITHMIC   stage 1: the macros of functional.rules.vocabulary (declared there, with
                  their equations, preconditions and random instances)
    MAPPING       stage 2: a map onto global ids, work-groups, local ids or a loop; a
                  program-level reduction as one work-item's loop, or a further stage of
                  work-group trees over the stored partial results; short constant loops
                  unrolled; register-blocked tiles placed in the memory hierarchy (views,
                  copied sequential tile reductions, blocked accumulators, where copies and
                  accumulators live) and the layouts of the local copies (which local id
                  walks their rows, vectors, padded and interleaved rows); where the device
                  offers warp shuffles, the last steps of work-groups' trees in registers;
                  panels every item reads transposed stored transposed first (packing)

Every strategy here is a composition of registered rules, so a move's derivation replays
step by step and every step is a rule checked against the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from functional.expr import Expr, Lambda, Prim, applied, spine
from functional.nat import Nat
from functional.primitives import MAPS, computing_map
from functional.rules.core import RULES
from functional.rules.vocabulary import LOCAL_SIZES, MACROS, Macro
from functional.strategies import Strategy, argument, seq, top_down, try_
from functional.types import ArrayType, holds_array

ALGORITHMIC, MAPPING = "algorithmic", "mapping"


@attrs.frozen
class Move:
    """One entry of the vocabulary (see the module's docstring)."""

    name: str
    stage: str
    equation: str
    make: Callable[..., Strategy]  # (**fixed, **tuned) -> the strategy run at the node
    tuned: tuple[str, ...] = ()
    lengths: Callable[[Expr], Mapping[str, Nat | str]] | None = None  # tuned parameter -> what it divides
    site: Callable[[Expr], bool] = lambda e: True  # a cheap test before the strategy is tried
    powers_of_two: tuple[str, ...] = ()  # tuned parameters that must be powers of two
    allowed: Mapping[str, tuple[int, ...]] = attrs.field(factory=dict)  # tuned parameters limited to these values
    needs: frozenset = frozenset()  # device intrinsics its result uses: offered only where the device has them
    # its result stores a value every item reads (packed panels): only in program-level code, whose stored values
    # are kernels of their own; inside a parallel map's function each item would store it
    program_level: bool = False
    # structural parameters that cut a length (vocabulary.Cut in `lengths`): stage 1 tries each of Heuristics.cuts
    # that cuts the length at the real sizes as a fixed value (a skeleton each), so the multiple it leaves is one
    # the later slots split by powers of two up to it
    cuts: tuple[str, ...] = ()


# ------------------------------------------------------------------------- node tests


VECTOR_WIDTHS = dict(MACROS["vectorize"].values)["w"]  # the vocabulary's: OpenCL's vector types
MAX_UNROLL = 16  # a loop of at most this many constant iterations may be unrolled


def loop_length(e: Expr) -> Nat | None:
    """The length a saturated `map f xs` or `reduce f z xs` iterates over, else None."""
    for name, n in (("map", 2), ("reduce", 3)):
        args = applied(e, name, n)
        if args is not None:
            data = args[-1]
            return data.t.size if isinstance(data.t, ArrayType) else None
    return None


def short_constant_loop(e: Expr) -> bool:
    """A saturated map or reduction over a constant number of elements, at most MAX_UNROLL."""
    n = loop_length(e)
    k = n.as_int() if n is not None else None
    return k is not None and 1 < k <= MAX_UNROLL


def lane_reduction(e: Expr) -> bool:
    """A reduction of one vector's lanes (what reduce_vectorize leaves after its vector
    reduction): each lane read with a constant index once unrolled."""
    from functional.schedules import _is_lane_reduction

    return _is_lane_reduction(e) and short_constant_loop(e)


def saturated_reduce(e: Expr) -> bool:
    return applied(e, "reduce", 3) is not None


PARALLEL_MAPS = ("map_global", "map_workgroup")


def reads_parallel_stage(e: Expr) -> bool:
    """`reduce f z P` where P (through views and stores) is a parallel loop's result: the
    partial results of an earlier stage, which a further stage may reduce in parallel; f a
    commutative monoid with z (reduce_tree's precondition, tested here so that a scheme is
    never offered over, say, a tile reduction's accumulator)."""
    from functional import algebra

    args = applied(e, "reduce", 3)
    if args is None or not (algebra.associative(args[0]) and algebra.commutative(args[0])
                            and algebra.neutral(args[0], args[1])) or holds_array(e.t):
        return False  # a tree in local memory holds scalars, vectors, tuples: not a fused reduction's arrays
    data = args[2]
    while True:
        head, inner = spine(data)
        if not isinstance(head, Prim) or not inner:
            return False
        if head.name in PARALLEL_MAPS:
            return True
        if head.name in ("to_global", "split", "join", "reorder_stride", "as_vector", "as_scalar"):
            data = inner[-1]
            continue
        return False


def reduce_tree_stage(block: int, local: int) -> Strategy:
    """At `reduce f z P`, P an earlier parallel stage's results: P stored in global memory
    (store_global; where it is not stored already), a tree per work-group over blocks of
    `block` of them with `local` items (the reduce_tree macro, then map_workgroup 0 over the
    blocks and map_local 0 inside), and the per-group results reduced by one work-item
    (lower_reduce_seq): Lift's "two stages" of a reduction, composed of registered rules."""
    from functional.rules.macros import guard
    from functional.schedules import parallel

    def stored(x: Expr) -> bool:
        return applied(x, "to_global", 1) is not None

    def parallel_loop(x: Expr) -> bool:
        head, inner = spine(x)
        return isinstance(head, Prim) and head.name in PARALLEL_MAPS and len(inner) == 2

    store = try_(argument(seq(guard("an unstored parallel stage", parallel_loop), RULES["store_global"].strategy())))
    return seq(guard("a reduction of a parallel stage's results", reads_parallel_stage), store,
               MACROS["reduce_tree"].strategy(block=block, local=local),
               argument(parallel([("map_workgroup", 0), ("map_local", 0)])),
               RULES["lower_reduce_seq"].strategy())


def _unrolled(loop: str) -> Callable[..., Strategy]:
    """The loop unrolled where it is short at the point's values, else the plain loop: a
    length a slot decides is unrolled only at the values that keep it short."""
    from functional.rules.macros import guard

    return lambda: seq(guard("a short constant loop", short_constant_loop), RULES[f"lower_{loop}_unroll"].strategy()) \
        | RULES[f"lower_{loop}"].strategy()


def accumulator_shape(e: Expr) -> tuple[Nat, Nat] | None:
    """(rows, row length) of the constant-shaped 2D array a reduction (high level or
    sequential) accumulates, else None."""
    for name in ("reduce", "reduce_seq"):
        args = applied(e, name, 3)
        if args is not None:
            t = args[1].t
            if (isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) and not isinstance(t.elem.elem, ArrayType)
                    and t.size.as_int() is not None and t.elem.size.as_int() is not None):
                return t.size, t.elem.size
    return None


def vectorized_accumulator(w: int) -> Strategy:
    """At a reduction of a 2D accumulator: one work-item's loop (lower_reduce_seq), the
    element-wise update fused into it (reduce_seq_map_fusion; schedules.fuse_tile_update's
    rules), then its rows accumulated in vectors of w lanes (the vectorize_accumulator rule)."""
    from functional.schedules import fuse_tile_update

    return seq(try_(RULES["lower_reduce_seq"].strategy()), try_(RULES["reduce_seq_map_fusion"].strategy()),
               try_(fuse_tile_update()), RULES["vectorize_accumulator"].strategy(w=w))


def accumulator_registers() -> Strategy:
    """At a reduction of a constant-shaped accumulator (under `map as_scalar` once
    vectorised): its initial value copied in and its result copied out by unrolled loops
    (materialise_reduce_init_unrolled, write_reduction_unrolled), so the accumulator lives in
    one work-item's registers."""
    from functional.rules.macros import guard

    at_reduction = seq(try_(RULES["lower_reduce_seq"].strategy()),
                       try_(RULES["materialise_reduce_init_unrolled"].strategy()),
                       RULES["write_reduction_unrolled"].strategy())

    def as_scalars(e: Expr) -> bool:
        args = applied(e, "map", 2)
        return args is not None and accumulator_shape(args[1]) is not None

    return seq(guard("a reduction of an accumulator", lambda e: accumulator_shape(e) is not None), at_reduction) | \
        seq(guard("a vectorised accumulator", as_scalars), argument(at_reduction))



# ------------------------------------------------------------ tiles in the memory hierarchy


def _element_type(t):
    return t.elem if isinstance(t, ArrayType) else None


def reduction_over_tiles(e: Expr) -> bool:
    """`reduce f z (map g xs)` whose elements hold arrays (tiles, a block's column and row):
    each element is read many times by the step, so copying it once pays."""
    args = applied(e, "reduce", 3)
    return (args is not None and applied(args[2], "map", 2) is not None and isinstance(args[2].t, ArrayType)
            and holds_array(args[2].t.elem))


def copied_sequential_reduction() -> Strategy:
    """At a reduction over tiles: one loop (lower_reduce_seq) with the map producing its
    elements fused into the step (reduce_seq_map_fusion) and each element copied once where
    the step starts (copy_element): where the copies live is decided later (store_copies)."""
    return seq(RULES["lower_reduce_seq"].strategy(), RULES["reduce_seq_map_fusion"].strategy(),
               RULES["copy_element"].strategy())


def _tile_views() -> Strategy:
    from functional.rules.macros import tile_views

    return tile_views()


def _untile_views() -> Strategy:
    from functional.rules.macros import untile_views

    return untile_views()


def untiled(e: Expr) -> bool:
    """`join (map (fun(rows) => ...) R)`: what a 2D tiling (tile_2d) leaves at the top."""
    args = applied(e, "join", 1)
    return args is not None and applied(args[0], "map", 2) is not None


def blocked_accumulator() -> Strategy:
    """At a sequential reduction whose step adds the untiled blocks of a register blocking to
    a 2D accumulator: the accumulator blocked the same way (block_accumulator), each block's
    reduction starting from the accumulator's block (reduce_init_fusion, then neutral_init
    drops the `+ 0` where it starts from zeros), the update fused into the products
    (schedules.fuse_tile_update's rules): a work-item computing a block owns its block."""
    from functional.schedules import fuse_tile_update

    return seq(RULES["block_accumulator"].strategy(), top_down(RULES["reduce_init_fusion"].strategy()),
               try_(top_down(RULES["neutral_init"].strategy())), fuse_tile_update())


def sequential_reduction(e: Expr) -> bool:
    return applied(e, "reduce_seq", 3) is not None or applied(e, "reduce_seq_unroll", 3) is not None


def copied_pair(e: Expr) -> bool:
    """`let (pair a b) f`: the copies copy_element binds for the step of a reduction over pairs."""
    args = applied(e, "let", 2)
    return args is not None and applied(args[0], "pair", 2) is not None


def store_copies(space: str) -> Callable[[], Strategy]:
    """At `let (pair copy_a copy_b) f`: both copies stored in `space` (store_{space})."""
    from functional.rules.macros import let_value, pair_parts

    return lambda: let_value(pair_parts(RULES[f"store_{space}"].strategy()))


def accumulator_among_items() -> Strategy:
    """At a sequential reduction a work-group runs into a 2D accumulator: its initial value
    written by the group's items (materialise_reduce_init_local), its result leaving through
    them (write_reduction_with_local_maps), and the accumulator itself private
    (materialise_private): each item touches only its own part (block_accumulator), which
    imperative.passes.privatise keeps in registers."""
    return seq(try_(RULES["materialise_reduce_init_local"].strategy()),
               RULES["write_reduction_with_local_maps"].strategy(),
               argument(RULES["materialise_private"].strategy()))


def two_dimensional_accumulator(e: Expr) -> bool:
    args = applied(e, "reduce_seq", 3)
    return (args is not None and isinstance(args[1].t, ArrayType) and isinstance(args[1].t.elem, ArrayType))


# ---------------------------------------------------------------- layouts of local copies


def parallel_copy(e: Expr) -> bool:
    """`map_p a (fun(r) => map_q b f r) xss`, both maps parallel (a tile copy over a work-group's items)."""
    args = applied(e, "map_local", 2)
    if args is None or not isinstance(args[0], Lambda):
        return False
    return applied(args[0].body, "map_local", 2) is not None


def stored_locally(e: Expr) -> bool:
    """`to_local e`, e a 2D array: a copy in local memory whose storage order may change."""
    args = applied(e, "to_local", 1)
    return args is not None and isinstance(e.t, ArrayType) and isinstance(e.t.elem, ArrayType)


def vectorized_copy(n: int, w: int) -> Strategy:
    """At a parallel 2D copy: its elements in rows of n (reshape_parallel: the copy spread over
    more of the group's items), each item moving w of them per instruction
    (vectorize_parallel on the inner map)."""
    from functional.strategies import fmap

    return seq(RULES["reshape_parallel"].strategy(n=n),
               argument(argument(fmap(RULES["vectorize_parallel"].strategy(w=w)))))


def _copy_elements(e: Expr) -> dict:
    """The element count of the copied 2D array, for the row length n of vectorized_copy."""
    t = applied(e, "map_local", 2)[1].t
    return {"n": t.size * t.elem.size, "w": "n"}


def _local_row(e: Expr) -> dict:
    t = applied(e, "to_local", 1)[0].t
    return {"b": t.elem.size, "g": "b"}


PADDINGS = (1, 2, 4)  # unused values at the end of a local row (the slot: those dividing the row length)

def panels_read_transposed(e: Expr) -> bool:
    """A map whose function reads, transposed, an array of 2D arrays the same for every element
    (rules.macros transposed_panel_site: mm's panels of B after register blocking)."""
    from functional.rules.macros import transposed_panel_site

    head, args = spine(e)
    return isinstance(head, Prim) and head.name in MAPS and len(args) == 2 and \
        transposed_panel_site(args[0]) is not None


# ------------------------------------------------------------------------- the moves


def _applies(macro: Macro) -> Callable[[Expr], bool]:
    return lambda e: macro.lengths(e) is not None


def _from_macro(macro: Macro) -> Move:
    """Stage 1's move for a macro of the vocabulary (functional.rules.vocabulary): declared
    there once, with its equation, preconditions, parameters and the lengths they divide
    (or cut: those are the move's structural `cuts`, not tuned)."""
    cuts = tuple(p for p in macro.params if p in macro.cuts)
    return Move(macro.name, ALGORITHMIC, macro.equation, macro.strategy,
                tuple(p for p in macro.params if p not in cuts),
                lambda e: macro.lengths(e) or {}, _applies(macro), tuple(sorted(macro.power_of_two)),
                dict(macro.values), cuts=cuts)


ALGORITHMIC_MOVES: tuple[Move, ...] = tuple(_from_macro(m) for m in MACROS.values())


def _lower(level: str) -> Callable[..., Strategy]:
    return lambda **params: RULES[f"lower_{level}"].strategy(**params)


MAPPING_MOVES: tuple[Move, ...] = (
    Move("lower_map_global", MAPPING, "map f xs -> map_global d f xs", _lower("map_global"), site=computing_map),
    Move("lower_map_workgroup", MAPPING, "map f xs -> map_workgroup d f xs", _lower("map_workgroup"),
         site=computing_map),
    Move("lower_map_local", MAPPING, "map f xs -> map_local d f xs", _lower("map_local"), site=computing_map),
    Move("lower_map_seq", MAPPING, "map f xs -> map_seq f xs", _lower("map_seq"), site=computing_map),
    Move("lower_reduce_seq", MAPPING, "reduce f z xs -> reduce_seq f z xs   (a program-level reduction: one "
         "work-item's loop)", _lower("reduce_seq"), site=saturated_reduce),
    Move("reduce_tree_stage", MAPPING, "reduce f z P -> reduce_seq f z (to_global (map_workgroup 0 (tree of "
         "map_local 0 stages) (split block (to_global P))))   (P an earlier parallel stage's results)",
         reduce_tree_stage, ("block", "local"), lambda e: MACROS["reduce_tree"].lengths(e) or {}, reads_parallel_stage,
         ("local",), {"local": LOCAL_SIZES}),
    Move("lower_map_seq_unroll", MAPPING, "map f xs -> map_seq_unroll f xs   (a short constant loop; a loop "
         "the point's values make long: map_seq f xs)", _unrolled("map_seq"),
         site=lambda e: computing_map(e) and short_constant_loop(e)),
    Move("lower_reduce_seq_unroll", MAPPING, "reduce f z xs -> reduce_seq_unroll f z xs   (a vector's lanes; "
         "a loop the point's values make long: reduce_seq f z xs)", _unrolled("reduce_seq"), site=lane_reduction),
    Move("unroll_reduce_seq", MAPPING, RULES["unroll_reduce_seq"].equation,
         lambda: RULES["unroll_reduce_seq"].strategy(), site=lambda e: applied(e, "reduce_seq", 3) is not None),
    Move("vectorize_accumulator", MAPPING, "reduce f z xs -> map as_scalar (reduce_seq f' (map (as_vector w) z) xs)   "
         "(an update of a 2D accumulator's rows fused into one map of vector lanes)", vectorized_accumulator, ("w",),
         lambda e: {"w": accumulator_shape(e)[1]}, lambda e: accumulator_shape(e) is not None, (),
         {"w": VECTOR_WIDTHS}),
    Move("accumulator_registers", MAPPING, "reduce_seq f z xs -> map_seq_unroll copy (reduce_seq f (map_seq_unroll "
         "copy z) xs)   (an accumulator of constant shape copied in and out by unrolled loops: private registers)",
         accumulator_registers, site=lambda e: accumulator_shape(e) is not None),
    Move("tile_views", MAPPING, "reduce F Z (map T (zip (transpose (map (split k) rows)) (transpose (map (split k) "
         "cols)))) -> reduce F Z (map (fun(p) => T (transpose (fst p), transpose (snd p))) (zip (split k (transpose "
         "rows)) (split k (transpose cols))))   (a tile reduction's k-wide tiles as whole-array views)",
         _tile_views, site=reduction_over_tiles),
    Move("copied_sequential_reduction", MAPPING, "reduce f z (map g xs) -> reduce_seq (fun(a, x) => let (copy x) "
         "(fun(x) => f a (g x))) z xs   (a reduction over tiles: one loop, each element copied once)",
         copied_sequential_reduction, site=reduction_over_tiles),
    Move("untile_views", MAPPING, "join (map (fun(rows) => map join (transpose (map (fun(cols) => T) C))) R) -> "
         "join (map (fun(rows) => transpose (join (map (fun(cols) => transpose T) C))) R)   (a 2D tiling's layout "
         "maps as whole-array views)", _untile_views, site=untiled),
    Move("blocked_accumulator", MAPPING, "reduce_seq (fun(a, x) => map2² f a (untile B)) z xs -> untile (reduce_seq "
         "(fun(a, x) => per block: B's block reduced from a's block) (tile z) xs)   (block_accumulator, "
         "reduce_init_fusion, neutral_init, the update fused)", blocked_accumulator, site=sequential_reduction),
    Move("store_copies_local", MAPPING, "let (copy a, copy b) f -> let (to_local (copy a), to_local (copy b)) f   "
         "(a work-group's copies of its tiles in local memory)", store_copies("local"), site=copied_pair),
    Move("store_copies_private", MAPPING, "let (copy a, copy b) f -> let (to_private (copy a), to_private "
         "(copy b)) f   (a work-item's copies in private memory)", store_copies("private"), site=copied_pair),
    Move("double_buffer", MAPPING, RULES["double_buffer"].equation + "   (the first such fold: a group's tile loop)",
         lambda: top_down(RULES["double_buffer"].strategy())),
    Move("async_staging", MAPPING, RULES["async_staging"].equation, lambda: RULES["async_staging"].strategy(),
         site=lambda e: applied(e, "reduce_seq_double_buffered", 3) is not None, needs=frozenset({"async_copy"})),
    Move("accumulator_among_items", MAPPING, "reduce_seq f z xs -> map_local 1 (map_local 0 id) (to_private "
         "(reduce_seq f (map_local 1 (map_local 0 id) z) xs))   (a work-group's 2D accumulator, each item's "
         "part in its registers)", accumulator_among_items, site=two_dimensional_accumulator),
    Move("swap_local_dims", MAPPING, "map_local 1 (fun(r) => map_local 0 f r) xss -> map_local 0 (fun(r) => "
         "map_local 1 f r) xss   (local id 0 along the rows: a copy reading contiguous memory)",
         lambda: RULES["swap_local_dims"].strategy(), site=parallel_copy),
    Move("interchange_parallel", MAPPING, "map_p a (fun(r) => map_q b f r) xss -> transpose (map_q b (fun(c) => "
         "map_p a f c) (transpose xss))   (a copy's inner map along the other dimension, e.g. to read it as "
         "vectors)", lambda: RULES["interchange_parallel"].strategy(), site=parallel_copy),
    Move("vectorized_copy", MAPPING, "map_p a (fun(r) => map_q b f r) xss -> split c (join (map_p a (fun(r) => "
         "as_scalar (map_q b (map_vec f) (as_vector w r))) (split n (join xss))))   (a copy in rows of n, w values "
         "per item and instruction)", vectorized_copy, ("n", "w"), _copy_elements, parallel_copy, ("n", "w"),
         {"w": VECTOR_WIDTHS}),
    Move("pad_local_rows", MAPPING, "to_local (map_local (fun(r) => map_local g r) xs) -> map (take n) (to_local "
         "(map_local (fun(r) => map_local g (pad_const 0 p 0 r)) xs))   (p unused values per local row: no bank "
         "conflicts along a column)", lambda p: RULES["pad_local_rows"].strategy(p=p), ("p",),
         lambda e: {"p": applied(e, "to_local", 1)[0].t.elem.size}, stored_locally, (), {"p": PADDINGS}),
    Move("interleave_local_rows", MAPPING, "to_local e -> map (deinterleave b g) (to_local (map (interleave b g) "
         "e))   (runs of g values of consecutive b-blocks side by side in local memory)",
         lambda b, g: RULES["interleave_local_rows"].strategy(b=b, g=g), ("b", "g"), _local_row, stored_locally,
         ("b", "g"), {"g": VECTOR_WIDTHS}),
    Move("warp_tree", MAPPING, RULES["warp_tree"].equation, lambda: RULES["warp_tree"].strategy(),
         site=lambda e: applied(e, "iterate", 2) is not None, needs=frozenset({"warp_shuffle"})),
    Move("transposed_panels", MAPPING, RULES["transposed_panels"].equation,
         lambda: RULES["transposed_panels"].strategy(), site=lambda e: panels_read_transposed(e), program_level=True),
)

MOVES: Mapping[str, Move] = {m.name: m for m in ALGORITHMIC_MOVES + MAPPING_MOVES}

__all__ = [
    "ALGORITHMIC",
    "ALGORITHMIC_MOVES",
    "MAPPING",
    "MAPPING_MOVES",
    "MAX_UNROLL",
    "MOVES",
    "VECTOR_WIDTHS",
    "Move",
    "accumulator_among_items",
    "accumulator_registers",
    "accumulator_shape",
    "blocked_accumulator",
    "computing_map",
    "copied_pair",
    "copied_sequential_reduction",
    "lane_reduction",
    "loop_length",
    "panels_read_transposed",
    "parallel_copy",
    "reads_parallel_stage",
    "reduce_tree_stage",
    "reduction_over_tiles",
    "saturated_reduce",
    "short_constant_loop",
    "store_copies",
    "stored_locally",
    "untiled",
    "vectorized_accumulator",
    "vectorized_copy",
]
