"""The exploration's stages in order, as data, and the skeletons they generate.

    STAGES = (prepare, algorithmic, mapping, parameters, completion)

`prepare` is the default lowering's normal form (eta, hoisting, fusion: Lift's
SimplifyAndFuse); stage 1 (dpia.explore.algorithmic) and stage 2 (dpia.explore.mapping)
generate the skeletons' moves (stage 2: the maps' schemes, then the loops' schemes: an
accumulator in registers, unrolling, program-level reductions as one item's loop or a
further tree stage; a register-blocked tile reduction's tiles in the memory hierarchy and
the layouts of its local copies: mapping.tile_schemes); stage 3 (`parameters`) is each
slot's candidate values, drawn in stages 1 and 2 (a further tree stage's and a vectorised
accumulator's slots), and the launch shape of a skeleton that may launch kernels without
work-groups (dpia.explore.launch: their local size, up to the dimensions its maps nest);
`completion` is the rest of the default lowering (reductions' stages, remaining loops,
storage, the check that nothing is left high level).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from functional.default_lowering import phases
from functional.expr import Expr, Lambda, NatLambda
from functional.infer import infer
from functional.strategies import Strategy, seq

from .algorithmic import Heuristics, algorithmic_variants, apply_steps, replay
from .launch import LAUNCH, launch_values, offered
from .mapping import intrinsic_steps, loop_schemes, mapped_replay, mappings, nest_depth, relabelled, tile_schemes
from .moves import ALGORITHMIC_MOVES, Move
from .space import BuildCancelled, Skeleton, never, with_size_facts

PREPARE = ("generate_fusion", "indices", "eta", "folds", "hoist", "fuse", "banana_split")


def prepare() -> Strategy:
    steps = dict(phases())
    return seq(*(steps[name] for name in PREPARE))


def normal_form() -> Strategy:
    """Between the stages: the functions of maps the macros leave partial (`map (map f)`)
    become lambdas, so every map's function is a lambda stage 2 can place."""
    return dict(phases())["eta"]


def completion(target=None) -> Strategy:
    """The default lowering's phases after the preparation, for a device like `target`
    (functional.default_lowering.Target; None: the default): what a point's moves leave
    high level is lowered as the default lowering would."""
    return seq(*(s for name, s in phases(target) if name not in PREPARE))


def _body(e: Expr) -> Expr:
    while isinstance(e, (NatLambda, Lambda)):
        e = e.body
    return e


def prepared_body(program: Expr, sizes: Mapping[str, int]) -> Expr:
    """The program's body in the normal form the moves start from, its sizes declared
    multiples of their real values (so every divisor of a real size is provably one)."""
    trial = infer(with_size_facts(program, dict(sizes)))
    result = prepare()(_body(trial))
    return result.expr if result.ok else _body(trial)


def _normal(e: Expr) -> Expr:
    result = normal_form()(e)
    return result.expr if result.ok else e


def _replay(body: Expr, steps) -> Callable[[Mapping[str, int]], Expr | None]:
    """Stage 1's steps on the prepared body at other slot values, in the normal form between
    the stages (None where a step does not apply there), each values once."""
    derived = replay(body, steps)
    memo: dict = {}

    def at_values(values: Mapping[str, int]) -> Expr | None:
        key = tuple(sorted(values.items()))
        if key not in memo:
            e = derived(values)
            memo[key] = _normal(e) if e is not None else None
        return memo[key]

    return at_values


def generate_skeletons(program: Expr, sizes: Mapping[str, int], heuristics: Heuristics | None = None,
                       moves: tuple[Move, ...] = ALGORITHMIC_MOVES,
                       cancelled: Callable[[], bool] = never, intrinsics: frozenset = frozenset()) -> tuple[Skeleton, ...]:
    """Stage 1's variants (of `moves`: the whole vocabulary unless narrowed) times stage 2's
    mappings, with stage 3's slot values (and the launch shape slot,
    dpia.explore.launch.offered); the default lowering (no move) first; where the device offers
    `intrinsics`, each mapping's twin using them (mapping.intrinsic_steps).  BuildCancelled
    once `cancelled()` (asked between variants and between a variant's mappings) is True."""
    body = prepared_body(program, sizes)
    heuristics = heuristics or Heuristics()
    out: list[Skeleton] = []
    seen: set[str] = set()

    def add(variant, steps, new_slots, dims: int) -> None:
        slots = {**variant.slots, **new_slots}
        choices = {name: slot.values for name, slot in slots.items()}
        divides = {name: slot.divides for name, slot in slots.items() if slot.divides}
        slot_sizes = {name: slot.sizes for name, slot in slots.items()}
        if heuristics.launch and offered(variant.steps + steps):  # the launch shape of kernels without work-groups
            # up to the dimensions its maps can take, or its mapping gives them (mm's blocks: global 1 over
            # the rows' map, global 0 over the map under its layout views, a nest no longer perfect)
            dims = max([dims] + [dict(st.fixed)["d"] + 1 for st in steps if st.move == "lower_map_global"])
            choices[LAUNCH], slot_sizes[LAUNCH] = launch_values(dims), ()  # it splits no length
        within = {name: slot.within for name, slot in slots.items() if slot.within}
        within_slot = {name: slot.within_slot for name, slot in slots.items() if slot.within_slot}
        slot_lengths = {name: slot.length for name, slot in slots.items() if slot.length}
        scales = {name: slot.scale for name, slot in slots.items() if slot.scale != 1}
        skeleton = Skeleton(variant.steps + steps, choices, divides, slot_sizes, within, within_slot, slot_lengths,
                            scales, variant.residues)
        if skeleton.name not in seen:
            seen.add(skeleton.name)
            out.append(skeleton)

    for variant in algorithmic_variants(body, sizes, heuristics, moves, cancelled):
        if cancelled():
            raise BuildCancelled("stage 2")
        expr = _normal(variant.expr)
        dims = nest_depth(expr)  # the launch shapes offered: up to the dimensions its maps can take
        # the variant at other slot values (once per values, whatever the mapping): the lengths
        # of its loop schemes and layouts that its slots determine are probed on it
        replay = _replay(body, variant.steps)
        trial = {name: slot.trial for name, slot in variant.slots.items()}
        for mapping in mappings(expr):
            if cancelled():  # a variant's mappings and loop schemes take seconds (a sum's: 700 skeletons)
                raise BuildCancelled("stage 2")
            mapped = relabelled(expr, mapping)
            loops = loop_schemes(mapped, sizes, variant.slots,
                                 mapped_replay(replay, expr, mapping)) if heuristics.loops else [((), {})]
            for steps, new_slots in loops:
                add(variant, mapping + steps, new_slots, dims)
                if intrinsics and (done := apply_steps(mapped, steps, trial | {
                        n: s.trial for n, s in new_slots.items()})) is not None:
                    if extra := intrinsic_steps(done, intrinsics):
                        add(variant, mapping + steps + extra, new_slots, dims)
        # register-blocked tiles, where it has them
        for steps, new_slots in tile_schemes(expr, sizes, variant.slots, replay, intrinsics):
            add(variant, steps, new_slots, dims)
    return tuple(out)


STAGES = (
    ("prepare", "the default lowering's normal form: eta, hoisting, fusion (of maps; of a work-item's "
                "reductions over one array)"),
    ("algorithmic", "macro moves at every position, bounded sequences, heuristics (dpia.explore.algorithmic)"),
    ("mapping", ("maps onto global ids, work-groups and local ids, or loops; program-level reductions as one "
                 "item's loop or further tree stages; accumulators in registers; short loops unrolled; "
                 "register-blocked tiles in local and private memory, the local copies' layouts "
                 "(dpia.explore.mapping)")),
    ("parameters", "each slot's values: divisors of the length it splits (dpia.explore.algorithmic.trial_slots); "
                   "the local size of kernels without work-groups (dpia.explore.launch)"),
    ("completion", "the rest of the default lowering: reductions, loops, storage, check"),
)

__all__ = ["PREPARE", "STAGES", "completion", "generate_skeletons", "normal_form", "prepare", "prepared_body"]
