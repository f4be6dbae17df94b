"""Stage 1, algorithmic: the macro moves of dpia.explore.moves (ALGORITHMIC_MOVES) applied to
the prepared high-level program at every position where they apply, in sequences of up to
`Heuristics.length` moves, before any OpenCL decision.

    variants = algorithmic_variants(body, sizes)   # [Variant(steps, slots, expr), ...], the empty one first

Each move is tried at every node with trial values for its parameters (`trial_slots`): a
value from the divisors of the length the parameter splits, evaluated at the real sizes
(stage 3 later draws the others).  The length is probed first: the variant is re-derived at
other values of the earlier slots (`replay`, once per values; stage 2 likewise for its
loop schemes and layouts, on the variant with its mapping), and how the length changes with
each slot gives it as a product of powers of their values (`probed_length`, a SlotLength: the
64 / s0 chunks of a reduce_split, the 8 / s0 partial results of a tree, the 2M / s0 chunks at
the real M).  A slot that cannot move alone (a tree's local size at its block's trial value)
moves with slots already read; where the probes cannot read the length, the parameter gets
no slot (a reading of the trial values alone can be a coincidence).  The trial values'
readings hold only where the probe agrees with them (trial values can be equal by
coincidence): a parameter whose length is another slot's trial value (a register block
inside a tile) is recorded as dividing that slot, one whose constant length is a
slot's value over others' (the blocks of a vector's lanes: w / block) as nested in it
(`Slot.within_slot`); any other probed length is the slot's `length`, its values the
divisors of that length at any of the slots' values (`probed_values`).  Unprobed, a length
that is a size over slots' values (N / block) is nested in the size (`Slot.within`), and a
length of sizes keeps only the values that divide it with every size a multiple of its real
value, the strongest fact a point declares (`at_real_multiples`: 9 never divides 34N + 17).
A point is valid only where the products divide, so stage 3 draws no point whose split the
rules refuse.

Where a length lacks the divisors the splits need (a prime size), a cut (map_cut, reduce_cut,
map_cut_columns) takes its largest multiple of a power of two a: `a` is structural, one
variant per value of `Heuristics.cuts` that does not divide the length at the real sizes
(`cut_choices`), so the multiple a * (N // a) is a length the later slots split by the
divisors of a (only the provable factor of a floor quotient counts: `provable_content`); the
variant records the residue its check sizes keep (`Variant.residues`).

Lift's heuristics bound the sequences (dpia.explore.algorithmic.Heuristics):

* the nesting depth of maps (`max_map_depth`), how often one move is used (`per_move`), the
  distance between a reduction and the multiplication it adds (`max_add_mul_distance`);
* mutual exclusions, as data (`EXCLUSIONS`, each with its reason): a move is not tried where
  an earlier move of the sequence makes it undo that move or reach a program another order
  reaches; a parameter does not split again a length a parameter of the same kind
  (`SPLIT_KINDS`) already split (`resplits`); moves at disjoint places commute, so only one
  order of them is tried (`out_of_order`);
* moves only first in a sequence, which do not count in its length (`leading`: split-k of a
  whole nest, whose products are then explored with the full length), with a budget of
  their own for the sequences one longer (`leading_budget`);
* a budget of new variants per sequence length (`per_depth`), filled round robin over the
  shorter sequences they extend, so one prefix's many extensions do not crowd out the
  others', and longer sequences never crowd out shorter ones; `max_variants` over all.

Variants are deduplicated by their printed program; a move's result at a node is computed
once per (node, its context's types, trial values) however many sequences reach that node.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction

import attrs

from functional.errors import FunctionalError
from functional.expr import Expr, Prim, spine
from functional.infer import memoised
from functional.nat import Nat, NatError, Var, divides, evaluate, substitute
from functional.primitives import MAPS, REDUCTIONS
from functional.rules.core import free_identifier_types
from functional.rules.vocabulary import cut_values
from functional.strategies import at_path, children, replace_at

from .moves import ALGORITHMIC_MOVES, MOVES, Move
from .space import MAX_POINTS_PER_SKELETON, BuildCancelled, Skeleton, SlotLength, Step, at, never

TRIAL = 16  # trial values are the divisors nearest this (in log scale), distinct across slots where possible
MAX_VALUES = 16  # candidate values per slot
MAX_VALUE = 1 << 16  # the largest split considered


# ------------------------------------------------------------------------- exclusions


INSIDE, OVERLAPPING, ANYWHERE = "inside", "overlapping", "anywhere"


@attrs.frozen
class Exclusion:
    """After any move of `earlier` in a sequence, no move of `later` where `place` says:
    INSIDE the earlier move's result, OVERLAPPING it (inside it or containing it), or
    ANYWHERE in the program."""

    earlier: frozenset[str] = attrs.field(converter=frozenset)
    later: frozenset[str] = attrs.field(converter=frozenset)
    place: str
    reason: str


TILINGS = frozenset({"split_join", "tile_2d", "tile_nest_2d", "tile_nest_3d",
                     "stencil_tiling_1d", "stencil_tiling_2d", "stencil_tiling_3d"})
REGISTER_BLOCKINGS = frozenset({"register_blocking_1d", "register_blocking_2d"})
REDUCTION_SPLITS = frozenset({"reduce_split", "reduce_two_stage", "reduce_tree", "split_k", "tile_reduction",
                              "reduce_vectorize_two_stage"})
INTERCHANGES = frozenset({"interchange", "interchange_swap"})
CUTS = frozenset({"map_cut", "map_cut_columns", "reduce_cut"})

EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(INTERCHANGES, INTERCHANGES, INSIDE,
              "interchanging the nest an interchange made transposes it back: the program before it, "
              "behind transpose (transpose xs)"),
    Exclusion({"fusion"}, {"fission"}, INSIDE, "fission of the map a fusion made splits it back: the program before"),
    Exclusion({"fission"}, {"fusion"}, INSIDE, "fusion of the maps a fission made joins them back: the program before"),
    Exclusion(REGISTER_BLOCKINGS, TILINGS, OVERLAPPING,
              "tiles of register blocks are register blocks inside tiles: the sequence that tiles first "
              "reaches the hierarchy (Lift: no tiling after register blocking)"),
    Exclusion(REGISTER_BLOCKINGS, REGISTER_BLOCKINGS, OVERLAPPING,
              "one register blocking per product: blocking a block's rows or columns again is a larger block "
              "the first blocking's parameters reach"),
    Exclusion(TILINGS | REGISTER_BLOCKINGS | REDUCTION_SPLITS, INTERCHANGES, OVERLAPPING,
              "a tiling keeps the order of the nest it tiles, so interchanging before it reaches the same loop "
              "orders; and which map of a tile gets which OpenCL dimension is stage 2's choice "
              "(Lift: no interchange after tiling or blocking)"),
    Exclusion(TILINGS | REGISTER_BLOCKINGS | REDUCTION_SPLITS | {"vectorize", "reduce_vectorize"}, CUTS, OVERLAPPING,
              "a length is cut before it is split: a split length has the divisors a cut is for, and the sequence "
              "that cuts first reaches the splits of the multiple"),
    Exclusion(CUTS, {"map_cut", "reduce_cut"}, OVERLAPPING,
              "one cut per length: cutting a part again, or the reduction of a cut map, leaves remainders of "
              "remainders where one cut of the whole gives the same multiple; a 2D map's rows are cut before "
              "its columns (map_cut, then map_cut_columns in the multiple: the other order reaches the same)"),
)

# The kind of split each parameter makes (by move, or by (move, parameter) where a move makes
# two kinds): a parameter does not split a length a parameter of the same kind already split.
TILE, BLOCK, CHUNK, LANES, CUT = "tile", "register block", "reduction chunk", "vector lanes", "cut"
SPLIT_KINDS: Mapping[str | tuple[str, str], str] = {
    **{m: TILE for m in TILINGS}, **{m: BLOCK for m in REGISTER_BLOCKINGS}, **{m: CHUNK for m in REDUCTION_SPLITS},
    **{m: CUT for m in CUTS},
    "vectorize": LANES, "reduce_vectorize": LANES, ("reduce_vectorize_two_stage", "w"): LANES,
}


def split_kind(move: str, param: str) -> str | None:
    return SPLIT_KINDS.get((move, param), SPLIT_KINDS.get(move))


# The order a variant's extensions are tried in, so that a spent budget keeps the moves that
# restructure a nest for reuse (Lift's collection lists the blockings and tilings first):
# cuts (offered only where a length lacks the divisors the others need), register blockings,
# tilings, reduction splits, vector lanes, then the rest; within one of these, the moves with
# more parameters (2D before 1D: they decide more) first.
FIRST = (CUT, BLOCK, TILE, CHUNK, LANES)


def move_rank(move: str) -> int:
    kinds = {split_kind(move, "")} - {None}
    return min((FIRST.index(k) for k in kinds), default=len(FIRST))


@attrs.frozen
class Heuristics:
    length: int = 3  # moves per sequence
    per_move: int = 1  # uses of one move in a sequence
    max_map_depth: int = 8
    max_add_mul_distance: int = 4
    per_depth: tuple[int, ...] = (64, 128, 128)  # new variants per sequence length 1, 2, 3, ... (the last repeats)
    # split_join only in programs whose maps nest at most this deep: a deeper nest has the
    # 2D tilings and register blockings, of which splitting one map is a special case (Lift:
    # splitJoin off beyond nesting depth 2, counted without the innermost map of scalars)
    split_join_depth: int = 3
    # move -> (map depth, add-multiply distance) the bounds grow by once the sequence has it:
    # a register blocking nests a work-item's block (1 or 2 maps) and accumulates outer
    # products, so its reduction lies two loops further from the products; a tile reduction
    # folds k-wide tiles, one map and two loops further (Lift: +1 / +2 depth for blockings); a
    # tree in a work-group puts its per-item chunk reductions and its stages between a block's
    # reduction and the products it sums (gemv's row per work-group: distance 5)
    allowances: Mapping[str, tuple[int, int]] = attrs.field(factory=lambda: {
        "register_blocking_1d": (1, 2), "register_blocking_2d": (2, 2), "tile_reduction": (1, 2),
        "reduce_tree": (0, 2)})
    max_variants: int = 384  # all lengths together, the led sequences' (leading_budget) included
    # moves tried only first in a sequence, which do not count in its length: each with where,
    # below its place, its result holds the node it rewrote (rewritten alike), and the
    # sequences found for that node are replayed there (`_led_variants`, at most
    # `leading_budget` variants and a quarter of max_variants, kept from the others' budget
    # where a leading move applies; register blockings inside tiles first: each costs the
    # space's build seconds, mm's 16 at 8192x64x8192 about 40 s of 100 on a 2-core host): a split-k of a whole
    # nest makes independent products of it, explored as the nest was (mm's register-blocked
    # tiles are three moves); each element's few partials are left to the default lowering
    leading: Mapping[str, tuple[int, ...]] = attrs.field(factory=lambda: {"split_k_nest": (0, 1, 0, 1, 0)})
    leading_budget: int = 8
    # the multiples a cut offers (map_cut, reduce_cut): a small remainder (a few rows of a grid), and long
    # multiples whose splits reach work-group and vector sizes; each only where it does not divide the length
    # at the real sizes and the multiple is at least half of it (the fuzzer's small programs take smaller ones)
    cuts: tuple[int, ...] = (32, 256, 2048)
    exclusions: tuple[Exclusion, ...] = EXCLUSIONS
    commuting_once: bool = True  # moves at disjoint places tried in one order only (`out_of_order`)
    # stage 2's loop schemes (dpia.explore.mapping.loop_schemes); off: the mappings only
    loops: bool = True
    # stage 3's launch shapes of kernels without work-groups (dpia.explore.launch); off: the driver's
    launch: bool = True

    def budget(self, depth: int) -> int:
        """New variants kept with `depth` moves (depth counted from 1)."""
        return self.per_depth[min(depth, len(self.per_depth)) - 1] if self.per_depth else self.max_variants


@attrs.frozen
class Slot:
    """A tuned parameter of a variant: its candidate values, the value stage 1 tried, and
    the slot its value must divide (None: a length of the program)."""

    values: tuple[int, ...]
    trial: int
    divides: str | None = None
    sizes: tuple[str, ...] = ()  # the size variables of the length it splits (their facts must admit it)
    # a length that is a size over earlier slots' values (a split of a split's result):
    # (the size's value, those slots), so a point is valid only where their product with this
    # slot's value divides the size
    within: tuple[int, tuple[str, ...]] | None = None
    # a constant length that is an earlier slot's value over other earlier slots' values (the
    # blocks of a w-wide vector's lanes, a tree's per-item chunk block/local): ((that slot,
    # those slots), ...), every reading of the trial values that explains it, so a point is
    # valid only where each product with this slot's value divides that slot's value
    within_slot: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # a constant length earlier slots' values determine some other way (a product of them,
    # found by probing): a point is valid only where this slot's value divides it there
    length: SlotLength | None = None
    # the length is one size variable over this (N / 8 splits by v only where N is a multiple
    # of 8v): the fact a value needs of that variable is the value times it
    scale: int = 1


def constraints(slots: Mapping[str, Slot]) -> Skeleton:
    """The slots' relations as a skeleton without steps (its `valid` decides a point)."""
    return Skeleton((), {name: slot.values for name, slot in slots.items()},
                    {name: slot.divides for name, slot in slots.items() if slot.divides},
                    {name: slot.sizes for name, slot in slots.items()},
                    {name: slot.within for name, slot in slots.items() if slot.within},
                    {name: slot.within_slot for name, slot in slots.items() if slot.within_slot},
                    {name: slot.length for name, slot in slots.items() if slot.length})


@attrs.frozen
class Variant:
    steps: tuple[Step, ...]
    slots: Mapping[str, Slot]
    expr: Expr
    # where each step's result stands in `expr` (its path), None once a later move rewrote a
    # node containing it (the exclusions that need its place then do not apply)
    places: tuple[tuple[int, ...] | None, ...] = ()
    # size variable -> the modulus its check sizes keep the real size's residue in: a cut at a
    # multiple of a leaves both parts non-empty only where the size is the real one modulo a
    residues: Mapping[str, int] = attrs.field(factory=dict)

    @property
    def text(self) -> str:
        return "; ".join(map(str, self.steps))


# ------------------------------------------------------------------------- heuristics


LOOPS = MAPS | REDUCTIONS


def map_depth(e: Expr) -> int:
    """The most maps nested along one path of `e`."""
    head, args = spine(e)
    if isinstance(head, Prim):
        below = max((map_depth(a) for a in args), default=0)
        return below + (1 if head.name in MAPS and args else 0)
    return max((map_depth(c) for c in e.children()), default=0)


def add_mul_distance(e: Expr) -> int:
    """The largest distance, over reductions, from the reduction to the nearest `*` in its
    function or data, counted in maps and reductions passed (0 when none multiplies)."""
    worst = 0
    for node in _nodes(e):
        head, args = spine(node)
        if isinstance(head, Prim) and head.name in LOOPS - MAPS and len(args) == 3:
            found = [d for a in (args[0], args[2]) if (d := _nearest_mul(a, 0)) is not None]
            if found:
                worst = max(worst, min(found))
    return worst


def _nodes(e: Expr):
    yield e
    for c in e.children():
        yield from _nodes(c)


def _nearest_mul(e: Expr, depth: int) -> int | None:
    head, args = spine(e)
    if isinstance(head, Prim):
        if head.name == "mul":
            return depth
        inner = depth + (1 if head.name in LOOPS and args else 0)
        found = [d for a in args if (d := _nearest_mul(a, inner)) is not None]
    else:
        found = [d for c in e.children() if (d := _nearest_mul(c, depth)) is not None]
    return min(found, default=None)


def acceptable(e: Expr, h: Heuristics, moves: tuple[str, ...] = ()) -> bool:
    """Within the bounds on map nesting and add-multiply distance, widened by the allowances
    of the moves the sequence made (`Heuristics.allowances`)."""
    depth = h.max_map_depth + sum(h.allowances.get(m, (0, 0))[0] for m in moves)
    distance = h.max_add_mul_distance + sum(h.allowances.get(m, (0, 0))[1] for m in moves)
    return map_depth(e) <= depth and add_mul_distance(e) <= distance


# ------------------------------------------------------------------------- slot values


def divisor_values(length: int, powers_of_two: bool = False) -> tuple[int, ...]:
    """Candidate values for a parameter splitting `length`: its divisors from 2 up, powers of
    two first; other divisors only where fewer than four powers of two divide it."""
    if length < 2:
        return ()
    small = _divisors(length) if length <= 1 << 20 else [1 << k for k in range(1, 17) if length % (1 << k) == 0]
    pows = [d for d in small if d & (d - 1) == 0]
    if powers_of_two or len(pows) >= 4:
        return tuple(pows[:MAX_VALUES])
    others = sorted((d for d in small if d & (d - 1)), key=lambda d: (abs(d.bit_length() - TRIAL.bit_length()), d))
    return tuple(sorted(pows + others[: MAX_VALUES - len(pows)]))


@functools.lru_cache(maxsize=4096)
def _divisors(length: int) -> list[int]:
    """The divisors of `length` from 2 up to MAX_VALUE, ascending, found in pairs up to its
    square root (probing asks for thousands of lengths: a scan to MAX_VALUE each took most of
    building a sum's space)."""
    low = [d for d in range(2, math.isqrt(length) + 1) if length % d == 0]
    both = set(low) | {length // d for d in low} | {length}
    return sorted(d for d in both if d <= MAX_VALUE)


def _only(values: tuple[int, ...], allowed: tuple[int, ...] | None) -> tuple[int, ...]:
    return values if allowed is None else tuple(v for v in values if v in allowed)


def _trial(values: tuple[int, ...], used: set[int], within: int | None = None) -> int:
    """The trial value: near TRIAL, not another slot's where possible, and for a split inside
    a length `within` (a block in a tile) a proper divisor of it where one is a candidate."""
    pool = [v for v in values if within is None or (v < within and within % v == 0)] or \
        [v for v in values if within is None or within % v == 0] or list(values)
    fresh = [v for v in pool if v not in used] or pool
    return min(fresh, key=lambda v: (abs(v.bit_length() - TRIAL.bit_length()), v))


def size_scale(length) -> int:
    """d where `length` is one size variable times c/d, plus a constant (N / 8: 8; (N + 4) / 2:
    2: a split by v of N/2 + 2, which the space offers only where v divides 2, holds for every
    N that is a multiple of 2v), else 1."""
    terms = [(mono, c) for mono, c in getattr(length, "terms", ()) if mono]  # the constant left out
    if len(terms) != 1:
        return 1
    mono, coefficient = terms[0]
    if len(mono) != 1 or mono[0][1] != 1 or not isinstance(mono[0][0], Var):
        return 1
    return Fraction(coefficient).denominator


Probe = Callable[[Mapping[str, int]], "Expr | None"]  # slot values -> the node derived at them (None: not there)


def trial_slots(move: Move, node: Expr, sizes: Mapping[str, int], slots: Mapping[str, Slot],
                first: int, probe: Probe | None = None) -> dict[str, tuple[str, Slot]] | None:
    """{parameter: (slot name, Slot)} for the move at `node`, or None when a parameter has no
    candidate value (its length has no divisor, or is not known at these sizes).  `probe`,
    where given, derives the node at other values of the earlier slots (`slots`), so that a
    length is related to the values it depends on (_length_slot)."""
    try:
        lengths = move.lengths(node) if move.lengths else {}
    except (AttributeError, IndexError, TypeError):
        return None
    used = {s.trial for s in slots.values()}
    out: dict[str, tuple[str, Slot]] = {}
    for k, param in enumerate(move.tuned):
        name = f"s{first + k}"
        target = lengths.get(param)
        pow2 = param in move.powers_of_two
        allowed = move.allowed.get(param)
        if isinstance(target, str):  # divides another parameter of this move
            other_name, other = out[target]
            values = _only(divisor_values(max(other.values), pow2), allowed)
            slot = Slot(values, _trial(values, used, other.trial), other_name, other.sizes) if values else None
        elif target is None:
            return None
        else:
            slot = _length_slot(target, sizes, slots, used, pow2, allowed,
                                _length_at(move, param, sizes, probe) if probe is not None else None)
        if slot is None:
            return None
        used.add(slot.trial)
        out[param] = (name, slot)
    return out


def _length_slot(target: Nat, sizes: Mapping[str, int], slots: Mapping[str, Slot], used: set[int], pow2: bool,
                 allowed: tuple[int, ...] | None, length_at: Callable[[Mapping[str, int]], int | None] | None) -> Slot | None:
    """The slot of a parameter splitting the length `target` (the module's docstring), None
    where no value is a candidate; `length_at`: the length at other slot values, where the
    node can be re-derived there."""
    try:
        length = int(evaluate(target, sizes))
    except (NatError, TypeError, ValueError):
        return None
    names = tuple(sorted(v.name for v in target.vars)) if hasattr(target, "vars") else ()
    # how the length changes with earlier slots' values decides which readings of the trial values hold;
    # a constant of the program equal to a trial value (2 = 16 / 8) is no slot's value
    probed, constant = _reading(length_at, length, slots) if length_at is not None and slots else (None, False)
    if length_at is not None and slots and probed is None and not constant:
        return None  # it changes with the slots in a way the probes do not read: no value is known to divide it
    parent, quotient = _readings(length, names, slots, probed) if not constant else (None, ())
    if parent is not None or quotient:
        # a length that is an earlier slot's value (that slot's divisors), or one slot's value
        # over others' (nested in it); where both explain it (a tile's 8 and a tree's 32 / 4),
        # both constraints hold, so neither reading derives a failure
        base = parent if parent is not None else quotient[0][0]
        values = _only(divisor_values(max(slots[base].values), pow2), allowed)
        inherited = tuple(sorted(set(names) | set(slots[base].sizes) |
                                 {v for whole, _ in quotient for v in slots[whole].sizes}))
        return Slot(values, _trial(values, used, length), parent, inherited, within_slot=quotient) if values else None
    if probed is not None:  # the divisors of the length at any of the slots' values
        if names:  # of a size's floor quotient (a cut's multiple N // 256 chunks) only what is provable
            content = provable_content(target, sizes, length)
            if content != length:
                probed = SlotLength(probed.scale * content / length, probed.powers)
        values = _only(probed_values(probed, slots, pow2), allowed)
        if not values:
            return None
        trial = _trial([v for v in values if length % v == 0] or values, used)  # one the variant derives at
        return Slot(values, trial, None, names, length=probed, scale=size_scale(target))
    values = _only(divisor_values(length, pow2), allowed)
    if names:  # a value no fact a point can declare makes divide the length never derives
        strongest = at_real_multiples(target, sizes)
        values = tuple(v for v in values if divides(v, strongest))
    # a size over slots' values (N / s0) read from the trial values
    within = _quotient_of(target, sizes, length, slots) if not constant else None
    return Slot(values, _trial(values, used), None, names, within, scale=size_scale(target)) if values else None


def provable_content(target: Nat, sizes: Mapping[str, int], length: int) -> int:
    """The largest divisor of `length` (`target` at the real sizes) that divides `target` at
    every point (at_real_multiples): all of it for a length of sizes, only the constant factor
    of a floor quotient (32 * (N // 256): 32, however many 256s the real N holds)."""
    strongest = at_real_multiples(target, sizes)
    if length <= 1 or divides(length, strongest):
        return length
    return max((d for d in _divisors(length) if divides(d, strongest)), default=1)  # up to MAX_VALUE: a slot's most


def at_real_multiples(length: Nat, sizes: Mapping[str, int]) -> Nat:
    """`length` with each size variable declared a multiple of its real size: the strongest
    fact a point can declare (point_facts: a divisor of the real size), so a value that
    does not provably divide it there divides it at no point (9 and 34 * N + 17)."""

    def stronger(atom):
        if not isinstance(atom, Var) or atom.name not in sizes:
            return None
        return Nat.atom(attrs.evolve(atom, multiple_of=math.lcm(atom.multiple_of, int(sizes[atom.name]))))

    return substitute(length, stronger)


def apply_steps(e: Expr, steps: tuple[Step, ...], values: Mapping[str, int]) -> Expr | None:
    """The steps' moves at their paths, slots at `values`; None where one does not apply."""
    for step in steps:
        params = tuple(sorted((dict(step.fixed) | {p: values[slot] for p, slot in step.slots}).items()))
        e = _stepped(_Stepping(e.exact_key, step, params, e))
        if e is None:
            return None
    return e


@attrs.frozen(eq=False)
class _Stepping:
    """_stepped's memo key: the program as written (exact_key), the step and its values;
    the program rides along, outside equality."""

    key: tuple
    step: Step
    params: tuple
    program: Expr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Stepping) and (self.step, self.params, self.key) == (
            other.step, other.params, other.key)

    def __hash__(self) -> int:
        return hash((self.program.exact_hash, self.step, self.params))


@memoised  # within typing_memo() (a space's build): the probes of one variant, of the variants
def _stepped(s: _Stepping) -> Expr | None:  # extending it and of its mappings replay one prefix
    result = at(s.step.path, MOVES[s.step.move].make(**dict(s.params)), str(s.step))(s.program)
    return result.expr if result.ok else None


def replay(body: Expr, steps: tuple[Step, ...]) -> Callable[[Mapping[str, int]], Expr | None]:
    """`steps` on `body` at other slot values (None where one does not apply), each values
    once: a variant's probes ask again and again for the same few values."""
    memo: dict = {}

    def at_values(values: Mapping[str, int]) -> Expr | None:
        key = tuple(sorted(values.items()))
        if key not in memo:
            try:
                memo[key] = apply_steps(body, steps, values)
            except (FunctionalError, ValueError):  # a rule refusing the values (as _apply)
                memo[key] = None
        return memo[key]

    return at_values


def node_probe(replayed: Callable[[Mapping[str, int]], Expr | None], path: tuple) -> Probe:
    """The node at `path` of what `replayed` derives at slot values (None where it is not there)."""

    def node_at(values: Mapping[str, int]) -> Expr | None:
        e = replayed(values)
        try:
            return at_path(e, path) if e is not None else None
        except (IndexError, AttributeError):
            return None

    return node_at


def _length_at(move: Move, param: str, sizes: Mapping[str, int], probe: Probe) -> Callable[[Mapping[str, int]], int | None]:
    """The constant length `param` splits at the node `probe` derives at other slot values."""

    def length_at(values: Mapping[str, int]) -> int | None:
        node = probe(values)
        if node is None:
            return None
        try:
            return int(evaluate(move.lengths(node)[param], sizes))
        except (AttributeError, IndexError, KeyError, TypeError, NatError, ValueError):
            return None

    return length_at


MAX_POWER = 3  # the largest power of one slot's value a probed length is read with
MAX_PARTNERS = 2  # slots moved with one that cannot move alone


def probed_length(length_at: Callable[[Mapping[str, int]], int | None], length: int,
                  slots: Mapping[str, Slot]) -> SlotLength | None:
    """The constant `length` (at the slots' trial values) as the slots' values determine it:
    each slot moved to another of its values (alone where the others' trial values admit
    one, else with slots already read: _slot_powers), the ratio of the lengths is a power of
    the ratio of its values; the product of those powers, checked once with all of them
    moved together.  None where the length depends on no slot (a constant of the program)
    or is not such a product, or a probe does not derive."""
    return _reading(length_at, length, slots)[0]


def program_constant(length_at: Callable[[Mapping[str, int]], int | None], length: int,
                     slots: Mapping[str, Slot]) -> bool:
    """Whether the length stays the same whichever slot moves (probed as probed_length does):
    a constant of the program, which no slot's value explains however equal the trial values."""
    return _reading(length_at, length, slots)[1]


def _reading(length_at: Callable[[Mapping[str, int]], int | None], length: int,
             slots: Mapping[str, Slot]) -> tuple[SlotLength | None, bool]:
    """(probed_length, program_constant), from one round of probes."""
    found = _slot_powers(length_at, length, slots)
    if found is None:
        return None, False
    powers, moved = found
    if not powers:
        return None, True
    trials = {name: slot.trial for name, slot in slots.items()}
    result = SlotLength(Fraction(length) / SlotLength(1, powers).at(trials), powers)
    together = {**trials, **moved}
    if len(moved) > 1 and constraints(slots).valid(together) and length_at(together) != result.at(together):
        return None, False  # not a product of powers: its slots interact
    return result, False


def _slot_powers(length_at: Callable[[Mapping[str, int]], int | None], length: int,
                 slots: Mapping[str, Slot]) -> tuple[list[tuple[str, int]], dict[str, int]] | None:
    """(slot, power) for each slot whose move changes the length by a power of the ratio of
    its values, and the value each was moved to; None where a probe does not derive, is no
    such power, or a slot cannot be moved (`_probe_move`).  A slot is moved alone where the
    others' trial values admit another of its values; one that cannot be (a tree's local
    size at its block's trial value: a larger one needs a larger block) is moved with slots
    whose powers are already known, and their share of the change divided out."""
    trials = {name: slot.trial for name, slot in slots.items()}
    relations = constraints(slots)
    pending = [name for name in sorted(slots) if len(slots[name].values) >= 2]  # one value: a constant factor
    known: dict[str, int] = {}
    moved: dict[str, int] = {}
    while pending:
        progress = False
        for name in list(pending):
            values = _probe_move(name, slots, trials, known, relations)
            if values is None:
                continue  # needs a slot whose power is not known yet: after it, or never
            there = length_at(values)
            if there is None or there < 1:
                return None
            partners = math.prod((Fraction(values[n], trials[n]) ** known[n] for n in known if values[n] != trials[n]),
                                 start=Fraction(1))
            ratio, step = Fraction(there, length) / partners, Fraction(values[name], trials[name])
            power = next((k for k in range(-MAX_POWER, MAX_POWER + 1) if step ** k == ratio), None)
            if power is None:
                return None
            known[name], moved[name] = power, values[name]
            pending.remove(name)
            progress = True
        if not progress:
            unmoved = _unmoved(pending, slots, relations)
            if not unmoved:
                return None  # slots that can move only together with one another: not probed
            for name in unmoved:  # at its trial value at every valid point: a constant factor
                known[name] = 0
                pending.remove(name)
    powers = [(name, power) for name, power in sorted(known.items()) if power]
    return powers, {name: value for name, value in moved.items() if known[name]}


def _probe_move(name: str, slots: Mapping[str, Slot], trials: Mapping[str, int], known: Mapping[str, int],
                relations: Skeleton) -> dict[str, int] | None:
    """Slot values, valid, with `name` at another of its values (the nearest its trial in
    log scale first) and every other slot at its trial value, else as few others as may be
    moved with it (at most MAX_PARTNERS), each one whose power is known; None where none is."""
    own = sorted((v for v in slots[name].values if v != trials[name]),
                 key=lambda v: (abs(v.bit_length() - trials[name].bit_length()), v))
    movable = sorted(n for n in known if len(slots[n].values) >= 2)
    for count in range(min(MAX_PARTNERS, len(movable)) + 1):
        for partners in itertools.combinations(movable, count):
            for value in own:
                for others in itertools.product(*([v for v in slots[n].values if v != trials[n]] for n in partners)):
                    values = {**trials, name: value, **dict(zip(partners, others))}
                    if relations.valid(values):
                        return values
    return None


def _unmoved(names: list[str], slots: Mapping[str, Slot], relations: Skeleton) -> list[str]:
    """The slots of `names` that no valid combination of the slots' values moves from its
    trial value; [] where the combinations are too many to enumerate."""
    if math.prod(len(slot.values) for slot in slots.values()) > MAX_POINTS_PER_SKELETON:
        return []
    combos = relations.all_params()
    return [name for name in names if all(c[name] == slots[name].trial for c in combos)]


def probed_values(length: SlotLength, slots: Mapping[str, Slot], powers_of_two: bool = False) -> tuple[int, ...]:
    """Candidate values for a parameter splitting a length the slots' values determine: the
    divisors of that length at every combination of those slots' values (a tree's 8 / s0
    partial results are 4 at s0 = 2 and 1 at its trial 8), at most MAX_VALUES of them, powers
    of two and those nearest TRIAL first.  Skeleton.valid keeps a point's value only where it
    divides the length at the point's values."""
    names = [n for n, _ in length.powers]
    found: set[int] = set()
    for combo in itertools.product(*(slots[n].values for n in names)):
        at = length.at(dict(zip(names, combo)))
        if at.denominator == 1:
            found.update(divisor_values(int(at), powers_of_two))
    rank = sorted(found, key=lambda v: (v & (v - 1) != 0, abs(v.bit_length() - TRIAL.bit_length()), v))
    return tuple(sorted(rank[:MAX_VALUES]))


def _readings(length: int, names: tuple[str, ...], slots: Mapping[str, Slot],
              probed: SlotLength | None) -> tuple[str | None, tuple[tuple[str, tuple[str, ...]], ...]]:
    """(parent, quotient): the constant `length` read as an earlier slot's trial value, and as
    one slot's value over others' (_slot_quotient).  Trial values can agree by coincidence
    (a tree's 32 / 16 = 2 partial results read as its local 16 over its block 8), so where
    probing found how the length changes with the slots (`probed`), only the readings that
    change the same way hold.  A length of size variables is no slot's value (K / 8 = 4 at
    K = 32 is not a slot of trial 4: _quotient_of relates it to the 8)."""
    if names:
        return None, ()
    parent = next((n for n, s in slots.items() if s.trial == length), None)
    quotient = _slot_quotient(length, slots)
    if probed is None:
        return parent, quotient
    if parent is not None and _as_probed(((parent, 1),), slots) != probed:
        parent = None
    return parent, tuple((whole, inner) for whole, inner in quotient
                         if _as_probed(((whole, 1), *((n, -1) for n in inner)), slots) == probed)


def _as_probed(powers: tuple[tuple[str, int], ...], slots: Mapping[str, Slot]) -> SlotLength:
    """The product of these powers of slots' values as probed_length finds it: a slot with
    one value (never moved by a probe) a constant factor."""
    fixed = tuple((n, p) for n, p in powers if len(slots[n].values) < 2)
    scale = SlotLength(1, fixed).at({n: slots[n].trial for n, _ in fixed})
    return SlotLength(scale, tuple((n, p) for n, p in powers if len(slots[n].values) >= 2))


def _nested_in(name: str, whole: str, slots: Mapping[str, Slot], seen: frozenset = frozenset()) -> bool:
    """Whether slot `name` splits `whole`'s value: through the slots it divides or is nested in."""
    slot = slots[name]
    above = {n for n in (slot.divides, *(whole for whole, _ in slot.within_slot)) if n in slots} - seen
    return whole in above or any(_nested_in(n, whole, slots, seen | {name}) for n in above)


def _slot_quotient(length: int, slots: Mapping[str, Slot]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every (earlier slot, slots nested in it) whose trial values give the constant `length`
    as that slot's value over the product of theirs (the lanes of a w-wide vector in blocks
    of `block`: w / block), so the length changes with their values; () where none does (a
    constant of the program).  Only slots that split the whole slot's value count, so an
    unrelated trial value that happens to divide it does not; where the trial values admit
    several readings (16 / 8 and 4 / 2), all are kept: each constrains the point."""
    out = []
    if length < 1:
        return ()
    for whole, slot in slots.items():
        if slot.trial <= length or slot.trial % length:
            continue
        factor = slot.trial // length
        inner = [n for n in slots if n != whole and slots[n].trial > 1 and factor % slots[n].trial == 0
                 and _nested_in(n, whole, slots)]
        found = next((subset for r in range(1, len(inner) + 1) for subset in itertools.combinations(inner, r)
                      if math.prod(slots[n].trial for n in subset) == factor), None)
        if found is not None:
            out.append((whole, found))
    return tuple(out)


def _quotient_of(target: Nat, sizes: Mapping[str, int], length: int,
                 slots: Mapping[str, Slot]) -> tuple[int, tuple[str, ...]] | None:
    """(the size, the earlier slots) when `target` is one size variable divided by the product
    of earlier slots' trial values (`N / 512` after a split by 512); None otherwise.  Linear in
    that variable is checked by evaluating it at twice the size."""
    names = sorted(v.name for v in getattr(target, "vars", ()))
    if len(names) != 1 or names[0] not in sizes:
        return None
    whole = int(sizes[names[0]])
    try:
        if whole % length or int(evaluate(target, {**sizes, names[0]: 2 * whole})) != 2 * length:
            return None
    except (NatError, TypeError, ValueError):
        return None
    factor = whole // length
    if factor == 1:
        return None
    candidates = [n for n, sl in slots.items() if names[0] in sl.sizes and sl.trial > 1 and factor % sl.trial == 0]
    for r in range(1, len(candidates) + 1):
        for subset in itertools.combinations(candidates, r):
            if math.prod(slots[n].trial for n in subset) == factor:
                return whole, subset
    return None


# ------------------------------------------------------------------------- enumeration


def positions(e: Expr, path: tuple = ()) -> Iterator[tuple[tuple, Expr]]:
    """Every node with its path, parents first."""
    yield path, e
    for k, c in enumerate(children(e)):
        yield from positions(c, path + (k,))


def _inside(path: tuple, place: tuple) -> bool:
    return path[: len(place)] == place


def _placed(path: tuple, place: tuple | None, where: str) -> bool:
    if where == ANYWHERE:
        return True
    if place is None:
        return False
    return _inside(path, place) or (where == OVERLAPPING and _inside(place, path))


def excluded_by(variant: Variant, move: str, path: tuple, h: Heuristics) -> Exclusion | None:
    """The exclusion that forbids `move` at `path` after the variant's moves, if any."""
    for step, place in zip(variant.steps, variant.places or (None,) * len(variant.steps)):
        for ex in h.exclusions:
            if step.move in ex.earlier and move in ex.later and _placed(path, place, ex.place):
                return ex
    return None


def out_of_order(variant: Variant, path: tuple) -> bool:
    """True when the last move's place and `path` are disjoint and `path` comes first: the two
    moves commute (neither node contains the other), so the sequence with them the other way
    round (by place) gives the same program and is the one tried."""
    if not variant.steps:
        return False
    last = variant.places[-1] if variant.places else variant.steps[-1].path
    if last is None or _inside(path, last) or _inside(last, path):
        return False
    return path < last


def resplits(variant: Variant, move: str, path: tuple, new: Mapping[str, tuple[str, Slot]]) -> bool:
    """True when one of the move's parameters splits a length a parameter of the same kind of
    an earlier move split already: a chunk of a chunk, a tile of a tile, or the number of
    chunks or tiles (a length of the same size variables, at a node within or containing the
    earlier move's result; or a constant length within it, which the earlier split's trial
    values made: a tree's per-item chunks).  The earlier parameter's values reach those splits."""
    earlier: dict[str, tuple[str | None, tuple | None, tuple[str, ...]]] = {}
    places = variant.places or (None,) * len(variant.steps)
    for step, place in zip(variant.steps, places):
        for param, name in step.slots:
            earlier[name] = (split_kind(step.move, param), place, variant.slots[name].sizes)
    for param, (_, slot) in new.items():
        kind = split_kind(move, param)
        if kind is None:
            continue
        if slot.divides in earlier and earlier[slot.divides][0] == kind:
            return True
        if any(k == kind and _placed(path, place, OVERLAPPING) and (set(sizes) & set(slot.sizes) or
                                                                  (not slot.sizes and _inside(path, place)))
               for k, place, sizes in earlier.values()):
            return True
    return False


def algorithmic_variants(body: Expr, sizes: Mapping[str, int], heuristics: Heuristics = Heuristics(),
                         moves: tuple[Move, ...] = ALGORITHMIC_MOVES, cancelled: Callable[[], bool] = never) -> list[Variant]:
    """The empty variant, then the sequences of moves that apply and pass the heuristics,
    one per distinct program: breadth first, each length's budget filled round robin over
    the variants one move shorter.  BuildCancelled once `cancelled()` (asked before each
    extension) is True."""
    moves = tuple(sorted(moves, key=lambda m: (move_rank(m.name), -len(m.tuned))))  # 2D before 1D within a rank
    start = Variant((), {}, body)
    seen, out, frontier = {str(body)}, [start], [start]
    memo: dict = {}  # (move, trial values, node in its typed context) -> the move's result there
    led = [(move, path, v) for move in moves if move.name in heuristics.leading
           for path, node in list(positions(body)) for v in _extend(start, move, path, node, sizes, heuristics, seen, memo)]
    reserve = min(heuristics.leading_budget, heuristics.max_variants // 4) if led else 0
    for depth in range(1, heuristics.length + 1):
        budget = min(heuristics.budget(depth), heuristics.max_variants - reserve - len(out))
        extensions = [_children(body, v, moves, sizes, heuristics, seen, memo) for v in frontier]
        grown: list[Variant] = []
        while extensions and len(grown) < budget:
            for gen in list(extensions):
                if cancelled():
                    raise BuildCancelled("stage 1")
                child = next(gen, None)
                if child is None:
                    extensions.remove(gen)
                    continue
                grown.append(child)
                if len(grown) >= budget:
                    break
        out += grown
        frontier = grown
    return out + _led_variants(body, led, out, sizes, heuristics, seen, memo, reserve, cancelled)


def _led_variants(body: Expr, led_roots: list, found: list[Variant], sizes, heuristics: Heuristics, seen: set,
                  memo: dict, budget: int, cancelled: Callable[[], bool]) -> list[Variant]:
    """After each leading move (Heuristics.leading; `led_roots`: (move, place, variant)), in
    the node it rewrote alike, the sequences `found` made at that node (their paths moved
    there, their slots drawn anew: the node's lengths differ), those with the most
    register blockings inside tiles first, then the most blockings, tilings and reduction
    splits (a sequence's prefixes are variants only as sequences of their own); at most
    `budget`."""
    out: list[Variant] = []
    replayed: dict[tuple, Variant | None] = {}  # (program, step) -> the step replayed on it: shared prefixes once
    for move, path, led in led_roots:
        if len(out) >= budget:
            return out
        out.append(led)
        inner = path + heuristics.leading[move.name]
        ranked = sorted((v for v in found if v.steps and all(_inside(s.path, path) for s in v.steps)),
                        key=lambda v: (-len({split_kind(s.move, "") for s in v.steps} & {BLOCK, TILE}),
                                       -sum(split_kind(s.move, "") in (BLOCK, TILE, CHUNK) for s in v.steps)))
        for v in ranked:
            if cancelled():
                raise BuildCancelled("stage 1")
            variant = led
            for step in v.steps:
                key = (str(variant.expr), step.move, step.path, step.fixed)
                if key not in replayed:
                    replayed[key] = _replayed_step(variant, step, path, inner, body, sizes, heuristics, memo)
                variant = replayed[key]
                if variant is None:
                    break
            if variant is not None and str(variant.expr) not in seen:
                seen.add(str(variant.expr))
                out.append(variant)
                if len(out) >= budget:
                    return out
    return out


def _replayed_step(variant: Variant, step: Step, old: tuple, new: tuple, body: Expr, sizes,
                   heuristics: Heuristics, memo: dict) -> Variant | None:
    """`step` (made in the node at `old`) at `new` on `variant`, with the same cut choices
    and its slots drawn anew; None where it does not apply there."""
    path = new + step.path[len(old):]
    try:
        node = at_path(variant.expr, path)
    except (IndexError, AttributeError, FunctionalError):
        return None
    probe = node_probe(replay(body, variant.steps), path)
    for child in _extend(variant, MOVES[step.move], path, node, sizes, heuristics, set(), memo, probe):
        if child.steps[-1].fixed == step.fixed:
            return child
    return None


def _children(body: Expr, variant: Variant, moves, sizes, heuristics: Heuristics, seen: set,
              memo: dict) -> Iterator[Variant]:
    """The variant extended by one move, lazily (so a spent budget stops the work); the
    lengths its slots determine probed on the variant re-derived from `body`."""
    nodes = list(positions(variant.expr))
    replayed = replay(body, variant.steps) if variant.steps else None
    for move in moves:
        if sum(s.move == move.name for s in variant.steps) >= heuristics.per_move:
            continue
        if move.name in heuristics.leading:  # _led_variants
            continue
        if move.name == "split_join" and map_depth(variant.expr) > heuristics.split_join_depth:
            continue
        for path, node in nodes:
            yield from _extend(variant, move, path, node, sizes, heuristics, seen, memo,
                               node_probe(replayed, path) if replayed is not None else None)


def _context_key(move: Move, node: Expr, trials: tuple) -> tuple:
    free = free_identifier_types(node)
    return move.name, trials, str(node), str(node.t), tuple(sorted((k, str(t)) for k, t in free.items()))


def _extend(variant: Variant, move: Move, path: tuple, node: Expr, sizes, heuristics: Heuristics, seen: set,
            memo: dict, probe: Probe | None = None) -> Iterator[Variant]:
    """The variant with `move` at `path`: one per choice of its cuts (none: one)."""
    if node.t is None or not move.site(node):
        return
    if (heuristics.commuting_once and out_of_order(variant, path)) or excluded_by(variant, move.name, path, heuristics):
        return
    slots = trial_slots(move, node, sizes, variant.slots, len(variant.slots), probe)
    if slots is None or resplits(variant, move.name, path, slots):
        return
    for fixed, residues in cut_choices(move, node, sizes, heuristics.cuts):
        trials = tuple(fixed.items()) + tuple((p, s.trial) for p, (_, s) in slots.items())
        key = _context_key(move, node, trials)
        if key not in memo:
            memo[key] = _apply(move, node, dict(trials))
        if memo[key] is None:
            continue
        expr = replace_at(variant.expr, path, memo[key])
        text = str(expr)
        if text in seen or not acceptable(expr, heuristics, tuple(st.move for st in variant.steps) + (move.name,)):
            continue
        seen.add(text)
        step = Step(move.name, path, tuple(fixed.items()), tuple((p, name) for p, (name, _) in slots.items()))
        places = variant.places or tuple(st.path for st in variant.steps)
        moved = tuple(None if p is None or _inside(p, path) else p for p in places)  # rewritten with the node at path
        together = dict(variant.residues)
        for name, modulus in residues.items():
            together[name] = math.lcm(together.get(name, 1), modulus)
        yield Variant(variant.steps + (step,), {**variant.slots, **{n: s for n, s in slots.values()}}, expr,
                      moved + (path,), together)


def cut_choices(move: Move, node: Expr, sizes: Mapping[str, int],
                alignments: tuple[int, ...] = Heuristics().cuts) -> list[tuple[dict[str, int], dict[str, int]]]:
    """(fixed values of the move's cuts, residues) per way to cut, a cut at each of the
    `alignments` (Heuristics.cuts) that cuts the length at the real sizes: [({}, {})] for a
    move without cuts.  A cut `a` of a length of size variables keeps each of them at the
    real size modulo a times the length's scale (N / 8 cut at a: modulo 8a) where it is checked."""
    if not move.cuts:
        return [({}, {})]
    try:
        spec = move.lengths(node)
    except (AttributeError, IndexError, TypeError):
        return []
    options = []
    for param in move.cuts:
        target = spec.get(param)
        try:
            length = int(evaluate(target.length, sizes))
        except (AttributeError, NatError, TypeError, ValueError):
            return []
        names = sorted(v.name for v in target.length.vars) if hasattr(target.length, "vars") else []
        scale = size_scale(target.length)
        options.append([(param, a, {name: a * scale for name in names})
                        for a in alignments if a in cut_values(length) and 2 * a <= length])
    out = []
    for combo in itertools.product(*options):
        residues: dict[str, int] = {}
        for _, _, rs in combo:
            for name, modulus in rs.items():
                residues[name] = math.lcm(residues.get(name, 1), modulus)
        out.append(({p: a for p, a, _ in combo}, residues))
    return out


def _apply(move: Move, node: Expr, trials: dict) -> Expr | None:
    try:
        result = move.make(**trials)(node)
    except (FunctionalError, ValueError):
        return None
    return result.expr if result.ok else None


__all__ = ["ANYWHERE", "EXCLUSIONS", "INSIDE", "OVERLAPPING", "SPLIT_KINDS", "Exclusion", "Heuristics", "Probe", "Slot",
           "Variant", "acceptable", "add_mul_distance", "algorithmic_variants", "apply_steps", "at_real_multiples",
           "constraints", "cut_choices", "divisor_values", "excluded_by", "map_depth", "node_probe", "out_of_order", "positions", "provable_content",
           "probed_length", "probed_values", "program_constant", "replay", "resplits", "split_kind", "trial_slots"]
