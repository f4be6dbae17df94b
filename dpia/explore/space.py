"""The exploration space of issue 5: which lowerings of a high-level program to try.

A `Family` is one way to lower programs of one shape (a reduction, a map, gemv, mm): the
macro rules and the mapping to OpenCL are fixed by a named strategy of
`functional.schedules`; what varies are its `choices` (split and tile sizes, work-group
sizes, vector widths).  A `Point` is a family and one value per choice.  A family knows
which program shapes it applies to (and which size variable plays which role: `N` of a
reduction, `M`, `N`, `K` of mm), the divisibility each size needs, and which points the
device cannot run well (work-group size, local memory, private memory, too few
work-groups to fill the compute units).

    space = Space.build(program, {"N": 1 << 20}, DeviceLimits.of(device))
    space.points          # every feasible point; space.infeasible: {reason: count}
    space.needs(point)    # {"N": 2048}: what the point's derivation assumes about N

Sizes are never hard-coded into a program: `with_size_facts` re-declares each size
variable with the facts a point needs (`multiple_of`), so one derived program runs both at
the small check sizes (`check_sizes`) and at the real ones.

Every function stored in a Family is a module-level function or a functools.partial of
one, so families pickle by reference into the explorer's worker processes.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence

import attrs

from functional import schedules
from functional.errors import FunctionalError
from functional.expr import Expr, Identifier, Lambda, NatLambda, Prim, applied, substitute_nat, walk
from functional.infer import infer
from functional.nat import Nat, Var, var_of
from functional.strategies import Strategy
from functional.types import ArrayType, ScalarType


class SpaceError(FunctionalError):
    """A program or sizes the exploration space cannot be built for (no family applies, a
    size missing or not satisfying the program's own facts, an unknown choice)."""


# Registers per work-item are not an OpenCL query; a budget of 32-bit values per item that
# keeps register-blocked accumulators out of spilled memory on GPUs (and harmless on CPUs).
PRIVATE_VALUES_PER_ITEM = 128
CHECK_FLOOR = 64  # check sizes are at least this (or the real size when it is smaller)


# ------------------------------------------------------------------------------ the device


@attrs.frozen
class DeviceLimits:
    """What decides which launches a device can run (from runtime.device_identity)."""

    max_work_group_size: int
    local_mem_bytes: int
    compute_units: int
    device_type: str = "CPU"
    private_values: int = PRIVATE_VALUES_PER_ITEM

    @staticmethod
    def of_identity(identity: Mapping) -> DeviceLimits:
        return DeviceLimits(int(identity["max_work_group_size"]), int(identity["local_mem_bytes"]),
                            int(identity["compute_units"]), str(identity.get("device_type", "CPU")))

    @staticmethod
    def of(device) -> DeviceLimits:
        from codegen_opencl.runtime import device_identity

        return DeviceLimits.of_identity(device_identity(device))


# ---------------------------------------------------------------------------- program shape


@attrs.frozen
class Shape:
    """A typed program taken apart: its size variables, its inputs, its body."""

    sizes: tuple[Var, ...]
    inputs: tuple[Identifier, ...]
    body: Expr

    @staticmethod
    def of(program: Expr) -> Shape:
        e = program if program.t is not None else infer(program)
        sizes, inputs = [], []
        while isinstance(e, NatLambda):
            sizes.append(e.var)
            e = e.body
        while isinstance(e, Lambda):
            inputs.append(e.param)
            e = e.body
        return Shape(tuple(sizes), tuple(inputs), e)


def _vector_size(t) -> str | None:
    """The size variable's name when `t` is a one-dimensional array of scalars N.s."""
    if isinstance(t, ArrayType) and isinstance(t.elem, ScalarType):
        v = var_of(t.size)
        return v.name if v is not None else None
    return None


def _matrix_sizes(t) -> tuple[str, str] | None:
    """(rows, columns) size variable names of a matrix M.N.s."""
    if isinstance(t, ArrayType):
        rows, cols = var_of(t.size), _vector_size(t.elem)
        if rows is not None and cols is not None:
            return rows.name, cols
    return None


def _contains(e: Expr, name: str) -> bool:
    return any(isinstance(x, Prim) and x.name == name for x in walk(e))


def reduction_roles(program: Expr) -> dict[str, str] | None:
    """`reduce f z E` over a vector (E an input, or a map of inputs and zips): {"N": length}."""
    args = applied(Shape.of(program).body, "reduce", 3)
    if args is None or not isinstance(args[1].t, ScalarType):
        return None
    n = _vector_size(args[2].t)
    return {"N": n} if n else None


def plain_reduction_roles(program: Expr) -> dict[str, str] | None:
    """`reduce f z xs` of an input vector xs (what chunked_sum's vectorisation takes)."""
    args = applied(Shape.of(program).body, "reduce", 3)
    if args is None or not isinstance(args[2], Identifier):
        return None
    return reduction_roles(program)


def map_roles(program: Expr) -> dict[str, str] | None:
    """`map f xs` producing a vector of scalars from a vector of scalars: {"N": length}."""
    body = Shape.of(program).body
    args = applied(body, "map", 2)
    if args is None or _vector_size(body.t) is None or _contains(args[0], "reduce"):
        return None
    n = _vector_size(args[1].t)
    return {"N": n} if n else None


def gemv_roles(program: Expr) -> dict[str, str] | None:
    """gemv's shape `map f (zip (map (row => ... reduce ...) mat) (map g ys))`, mat: M.N."""
    shape = Shape.of(program)
    args = applied(shape.body, "map", 2)
    pair = applied(args[1], "zip", 2) if args else None
    rows = applied(pair[0], "map", 2) if pair else None
    if rows is None or not _contains(rows[0], "reduce") or applied(pair[1], "map", 2) is None:
        return None
    dims = _matrix_sizes(rows[1].t)
    return {"M": dims[0], "N": dims[1]} if dims else None


def mm_roles(program: Expr) -> dict[str, str] | None:
    """mm's shape `map (fun(r) => map (fun(c) => ... reduce ...) (transpose b)) a`, a: M.K, b: K.N."""
    shape = Shape.of(program)
    outer = applied(shape.body, "map", 2)
    if outer is None or not isinstance(outer[0], Lambda):
        return None
    inner = applied(outer[0].body, "map", 2)
    if inner is None or not _contains(inner[0], "reduce") or applied(inner[1], "transpose", 1) is None:
        return None
    a, b = _matrix_sizes(outer[1].t), _matrix_sizes(inner[1].t)
    if a is None or b is None or a[1] != b[1]:  # transpose b: N.K
        return None
    return {"M": a[0], "N": b[0], "K": a[1]}


# ---------------------------------------------------------------------------- feasibility


def work_group_problem(items: int, limits: DeviceLimits) -> str | None:
    if items > limits.max_work_group_size:
        return f"work-group size: {items} items > {limits.max_work_group_size}"
    return None


def local_memory_problem(nbytes: int, limits: DeviceLimits) -> str | None:
    if nbytes > limits.local_mem_bytes:
        return f"local memory: {nbytes} bytes > {limits.local_mem_bytes}"
    return None


def private_memory_problem(values: int, limits: DeviceLimits) -> str | None:
    if values > limits.private_values:
        return f"private memory: {values} values per item > {limits.private_values}"
    return None


def occupancy_problem(groups: int, limits: DeviceLimits, what: str = "work-groups") -> str | None:
    """Enough work-groups (or work-items) that every compute unit gets one."""
    if groups < limits.compute_units:
        return f"too few {what}: {groups} < {limits.compute_units} compute units"
    return None


def first_problem(*problems: str | None) -> str | None:
    return next((p for p in problems if p), None)


# ------------------------------------------------------------------------------ families


Params = Mapping[str, int]


@attrs.frozen
class Family:
    """One way to lower one shape of program, with numeric choices.

    `roles(program)`: {role: size variable name}, None where the family does not apply.
    `make(**params)`: the strategy.  `divisors(params)`: {role: what the size must be a
    multiple of}.  `limits(params, sizes_by_role, DeviceLimits)`: why the device cannot run
    the point well, or None.  `baseline`: the obvious point of this family, measured first
    when no default schedule exists."""

    name: str
    roles: Callable[[Expr], dict[str, str] | None]
    make: Callable[..., Strategy]
    choices: Mapping[str, tuple] = attrs.field(factory=dict, converter=lambda c: dict(c))
    divisors: Callable[[Params], dict[str, int]] | None = None
    limits: Callable[[Params, Mapping[str, int], DeviceLimits], str | None] | None = None
    baseline: Mapping[str, int] | None = None

    def applies(self, program: Expr) -> bool:
        return self.roles(program) is not None

    def strategy(self, params: Params) -> Strategy:
        return self.make(**dict(params))

    def needs(self, params: Params) -> dict[str, int]:
        return dict(self.divisors(params)) if self.divisors else {}

    def feasible(self, params: Params, sizes: Mapping[str, int], limits: DeviceLimits) -> str | None:
        """None when the point can run at these sizes (by role) on this device, else why not."""
        for role, d in self.needs(params).items():
            if sizes[role] % d:
                return f"divisibility: {role}={sizes[role]} is not a multiple of {d}"
        return self.limits(params, sizes, limits) if self.limits else None

    def all_params(self) -> Iterator[dict[str, int]]:
        names = sorted(self.choices)
        for values in itertools.product(*(self.choices[n] for n in names)):
            yield dict(zip(names, values))


@attrs.frozen(order=True)
class Point:
    """A family and one value per choice; hashable, ordered, printable."""

    family: str
    params: tuple[tuple[str, int], ...] = attrs.field(converter=lambda p: tuple(sorted(dict(p).items())))

    def as_dict(self) -> dict[str, int]:
        return dict(self.params)

    def __str__(self) -> str:
        return f"{self.family}({', '.join(f'{k}={v}' for k, v in self.params)})"


# --- the standard families: small module-level functions (picklable) ----------------------


def _tree_reduce_needs(p: Params) -> dict[str, int]:
    return {"N": p["block"]}


def _tree_reduce_limits(p: Params, n: Mapping[str, int], lim: DeviceLimits) -> str | None:
    shape = None if p["local"] <= p["block"] else f"shape: local {p['local']} > block {p['block']}"
    return first_problem(shape, work_group_problem(p["local"], lim), local_memory_problem(4 * p["local"], lim),
                         occupancy_problem(n["N"] // p["block"], lim))


def _two_stage_needs(p: Params) -> dict[str, int]:
    return {"N": p["block"] * p["block2"]}


def _two_stage_limits(p: Params, n: Mapping[str, int], lim: DeviceLimits) -> str | None:
    shape = None if p["local"] <= p["block"] and p["local2"] <= p["block2"] else "shape: more items than values"
    return first_problem(shape, work_group_problem(max(p["local"], p["local2"]), lim),
                         local_memory_problem(4 * max(p["local"], p["local2"]), lim),
                         occupancy_problem(n["N"] // p["block"], lim))


def _chunk_needs(p: Params) -> dict[str, int]:
    return {"N": p["chunk"] * p.get("width", 1)}


def _chunk_limits(p: Params, n: Mapping[str, int], lim: DeviceLimits) -> str | None:
    return occupancy_problem(n["N"] // (p["chunk"] * p.get("width", 1)), lim, "work-items")


def _vector_needs(p: Params) -> dict[str, int]:
    return {"N": p["w"]}


def _scal_workgroup_limits(p: Params, n: Mapping[str, int], lim: DeviceLimits) -> str | None:
    return first_problem(work_group_problem(p["chunk"], lim), occupancy_problem(n["N"] // p["chunk"], lim))


def _gemv_workgroup_needs(p: Params) -> dict[str, int]:
    return {"N": p["local"]}


def _gemv_workgroup_limits(p: Params, n: Mapping[str, int], lim: DeviceLimits) -> str | None:
    return first_problem(work_group_problem(p["local"], lim), local_memory_problem(4 * p["local"], lim),
                         occupancy_problem(n["M"], lim))


def _gemv_rows_limits(p: Params, n: Mapping[str, int], lim: DeviceLimits) -> str | None:
    return occupancy_problem(n["M"], lim, "work-items")


def _mm_tile_needs(p: Params) -> dict[str, int]:
    return {"M": p["n"], "N": p["m"], "K": p["k"]}


def _mm_tiled_limits(p: Params, s: Mapping[str, int], lim: DeviceLimits) -> str | None:
    return first_problem(work_group_problem(p["n"] * p["m"], lim),
                         local_memory_problem(4 * p["k"] * (p["n"] + p["m"]), lim),
                         occupancy_problem((s["M"] // p["n"]) * (s["N"] // p["m"]), lim))


def _mm_blocked_shape(p: Params) -> str | None:
    """Why the strategy's rules cannot apply to these parameters, or None."""
    if p["n"] % p["l1"] or p["m"] % p["l2"]:
        return f"shape: blocks {p['l1']}x{p['l2']} do not divide the tile {p['n']}x{p['m']}"
    items0 = p["m"] // p["l2"]  # items along local dimension 0: a vector copy moves rows of items0 vectors
    va, vb, ib = p.get("vector_a", 0), p.get("vector_b", 0), p.get("interleave_b", 0)
    if va and (not p.get("coalesce_a") or p.get("pad", 0)):
        return "shape: vector_a needs coalesce_a and no pad"
    if va and ((p["n"] * p["k"]) % (items0 * va) or p["k"] % va):
        return f"shape: A's tile does not copy in rows of {items0} vectors of {va}"
    if vb and ((p["k"] * p["m"]) % (items0 * vb) or p["m"] % vb):
        return f"shape: B's tile does not copy in rows of {items0} vectors of {vb}"
    if ib and (p["l2"] % ib or p["l2"] == ib):
        return f"shape: interleave_b={ib} needs blocks of a multiple of {ib} columns, more than {ib}"
    return None


def _mm_blocked_limits(p: Params, s: Mapping[str, int], lim: DeviceLimits) -> str | None:
    shape = _mm_blocked_shape(p)
    if shape:
        return shape
    return first_problem(work_group_problem((p["n"] // p["l1"]) * (p["m"] // p["l2"]), lim),
                         local_memory_problem(4 * p["k"] * (p["n"] + p.get("pad", 0) + p["m"]), lim),
                         private_memory_problem(p["l1"] * p["l2"] + p["l1"] + p["l2"], lim),
                         occupancy_problem((s["M"] // p["n"]) * (s["N"] // p["m"]), lim))


def _mm_rows_vectorized_needs(p: Params) -> dict[str, int]:
    return {"M": p["rows"], "N": p["cols"]}


def _mm_rows_vectorized_limits(p: Params, s: Mapping[str, int], lim: DeviceLimits) -> str | None:
    if p["cols"] % p["width"]:
        return f"shape: vectors of {p['width']} do not divide blocks of {p['cols']} columns"
    return first_problem(private_memory_problem(p["rows"] * p["cols"] + p["cols"], lim),
                         occupancy_problem((s["M"] // p["rows"]) * (s["N"] // p["cols"]), lim, "work-items"))


def _mm_rows_limits(p: Params, s: Mapping[str, int], lim: DeviceLimits) -> str | None:
    return occupancy_problem(s["M"] * s["N"], lim, "work-items")


def mm_naive_2d() -> Strategy:
    """Naive mm: one work-item per result element (map_global 1 over rows, map_global 0
    over columns), dot products as fused reduce_seq."""
    return schedules.named("mm_naive_2d", schedules.program_body(schedules.seq(
        schedules.parallel([("map_global", 1), ("map_global", 0)]), schedules.lower_reductions())))


def _pow2(lo: int, hi: int) -> tuple[int, ...]:
    return tuple(1 << k for k in range(lo, hi + 1))


def standard_families() -> tuple[Family, ...]:
    """The families built from the named strategies of functional.schedules."""
    out = [
        Family("parallel_reduce", reduction_roles, schedules.parallel_reduce,
               {"block": _pow2(6, 16), "local": _pow2(4, 10)}, _tree_reduce_needs, _tree_reduce_limits,
               baseline={"block": 256, "local": 64}),
        Family("parallel_reduce_two_stage", reduction_roles, schedules.parallel_reduce_two_stage,
               {"block": _pow2(10, 16), "local": _pow2(6, 10), "block2": _pow2(4, 10), "local2": _pow2(4, 8)},
               _two_stage_needs, _two_stage_limits),
        Family("global_reduce", reduction_roles, schedules.global_reduce,
               {"chunk": _pow2(4, 14)}, _chunk_needs, _chunk_limits),
    ]
    if hasattr(schedules, "chunked_sum"):
        out.append(Family("chunked_sum", plain_reduction_roles, schedules.chunked_sum,
                          {"chunk": _pow2(3, 13), "width": (2, 4, 8, 16)}, _chunk_needs, _chunk_limits))
    out += [
        Family("scal_global", map_roles, schedules.scal_global, baseline={}),
        Family("scal_vectorized", map_roles, schedules.scal_vectorized, {"w": (2, 4, 8, 16)}, _vector_needs),
        Family("scal_workgroup", map_roles, schedules.scal_workgroup, {"chunk": _pow2(4, 10)},
               _chunk_needs, _scal_workgroup_limits),
        Family("gemv_global", gemv_roles, schedules.gemv_global, limits=_gemv_rows_limits, baseline={}),
        Family("gemv_workgroup", gemv_roles, schedules.gemv_workgroup, {"local": _pow2(3, 8)},
               _gemv_workgroup_needs, _gemv_workgroup_limits),
        Family("mm_naive_2d", mm_roles, mm_naive_2d, limits=_mm_rows_limits, baseline={}),
        Family("mm_tiled", mm_roles, schedules.mm_tiled, {"n": _pow2(2, 5), "m": _pow2(2, 5), "k": _pow2(2, 5)},
               _mm_tile_needs, _mm_tiled_limits),
        Family("mm_register_blocked", mm_roles, schedules.mm_register_blocked,
               {"n": _pow2(4, 7), "m": _pow2(4, 7), "k": _pow2(3, 5), "l1": _pow2(1, 3), "l2": _pow2(1, 3),
                "coalesce_a": (False, True), "pad": (0, 1, 4), "vector_a": (0, 4), "vector_b": (0, 4),
                "interleave_b": (0, 4)},
               _mm_tile_needs, _mm_blocked_limits),
        Family("mm_rows_vectorized", mm_roles, schedules.mm_rows_vectorized,
               {"rows": (1, 2, 4, 8), "cols": _pow2(3, 6), "width": (4, 8, 16)},
               _mm_rows_vectorized_needs, _mm_rows_vectorized_limits),
    ]
    return tuple(out)


# --------------------------------------------------------------------- sizes in programs


def with_size_facts(program: Expr, multiples: Mapping[str, int]) -> Expr:
    """`program` with each named size variable re-declared `multiple_of` the lcm of its own
    fact and `multiples[name]` (the program is untyped afterwards; derive infers it)."""

    def go(e: Expr) -> Expr:
        if not isinstance(e, NatLambda):
            return e
        want = multiples.get(e.var.name, 1)
        if want == 1 or e.var.multiple_of % want == 0:
            return attrs.evolve(e, body=go(e.body), t=None)
        var = attrs.evolve(e.var, multiple_of=math.lcm(e.var.multiple_of, want))
        body = substitute_nat(e.body, e.var, Nat.atom(var))
        return attrs.evolve(e, var=var, body=go(body), t=None)

    return go(program)


def check_size(multiple: int, real: int, floor: int = CHECK_FLOOR) -> int:
    """The size a candidate is checked at: the smallest multiple of `multiple` at or above
    `floor`, and at least two multiples (two chunks, tiles or groups: indexing across them
    is checked) where the real size allows; never above the real size."""
    size = multiple * max(1, -(-floor // multiple))
    if size == multiple and 2 * multiple <= real:
        size = 2 * multiple
    return min(size, real)


# ------------------------------------------------------------------------------- the space


def _algorithmic(program: Expr, sizes: Mapping[str, int]) -> tuple:
    """The seed's automatic first phase (dpia.algorithmic): the program's macro-rule variants
    under the heuristics, each with both mappings, as one more family (none when no macro
    applies).  The macros see each size as a multiple of the power of two that divides its
    value (up to 1024), so that tiling can be proven to fit."""
    from .algorithmic import macro_family

    powers = {name: math.gcd(value, 1024) for name, value in sizes.items()}
    family = macro_family(infer(with_size_facts(program, powers)))
    return () if family is None else (family,)


@attrs.frozen
class Space:
    """The families that apply to a program, and their points feasible at `sizes` on a
    device with `limits`.  `infeasible` counts the others by the kind of reason."""

    program: Expr
    sizes: Mapping[str, int]
    limits: DeviceLimits
    families: tuple[Family, ...]
    roles: Mapping[str, Mapping[str, str]]  # family name -> {role: size variable name}
    points: tuple[Point, ...]
    infeasible: Mapping[str, int]
    # Derived once (searches ask for them at every proposal, over thousands of points).
    feasible_points: frozenset = attrs.field(init=False, eq=False, repr=False)
    _by_family: Mapping[str, tuple[Point, ...]] = attrs.field(init=False, eq=False, repr=False)

    @feasible_points.default
    def _feasible_points(self) -> frozenset:
        return frozenset(self.points)

    @_by_family.default
    def _group_by_family(self) -> Mapping[str, tuple[Point, ...]]:
        out: dict[str, list[Point]] = {f.name: [] for f in self.families}
        for p in self.points:
            out[p.family].append(p)
        return {name: tuple(ps) for name, ps in out.items()}  # read only: by_family() copies

    @staticmethod
    def build(program: Expr, sizes: Mapping[str, int], limits: DeviceLimits,
              families: Sequence[Family] | None = None) -> Space:
        typed = program if program.t is not None else infer(program)
        check_program_sizes(typed, sizes)
        families = standard_families() + _algorithmic(typed, sizes) if families is None else tuple(families)
        roles = {f.name: r for f in families if (r := f.roles(typed)) is not None}
        applicable = tuple(f for f in families if f.name in roles)
        if not applicable:
            raise SpaceError(f"no exploration family applies to this program (known: "
                             f"{', '.join(f.name for f in families)})", where=str(program))
        points, infeasible = [], Counter()
        for f in applicable:
            by_role = {role: sizes[name] for role, name in roles[f.name].items()}
            for params in f.all_params():
                why = f.feasible(params, by_role, limits)
                if why is None:
                    points.append(Point(f.name, params))
                else:
                    infeasible[f"{f.name}: {why.split(':')[0]}"] += 1
        return Space(typed, dict(sizes), limits, applicable, roles, tuple(points), dict(infeasible))

    def family(self, name: str) -> Family:
        for f in self.families:
            if f.name == name:
                return f
        raise SpaceError(f"no family {name!r} in this space ({', '.join(f.name for f in self.families)})")

    def needs(self, point: Point) -> dict[str, int]:
        """{size variable name: multiple} the point's derivation assumes (with the program's own facts)."""
        family = self.family(point.family)
        by_role = family.needs(point.as_dict())
        out = {v.name: v.multiple_of for v in Shape.of(self.program).sizes}
        for role, d in by_role.items():
            name = self.roles[family.name][role]
            out[name] = math.lcm(out.get(name, 1), d)
        return out

    def check_sizes(self, point: Point | None, floor: int = CHECK_FLOOR) -> dict[str, int]:
        needs = self.needs(point) if point is not None else {v.name: v.multiple_of for v in Shape.of(self.program).sizes}
        return {name: check_size(needs.get(name, 1), real, floor) for name, real in self.sizes.items()}

    def program_for(self, point: Point) -> Expr:
        """The high-level program re-declared with the facts `point` needs."""
        return with_size_facts(self.program, self.needs(point))

    # -- for search strategies ------------------------------------------------------------

    def by_family(self) -> dict[str, list[Point]]:
        return {name: list(ps) for name, ps in self._by_family.items()}

    def sample(self, rng: random.Random, exclude=frozenset()) -> Point | None:
        """A feasible point not in `exclude`: a family uniformly (so a family with few
        points is not drowned by one with many), then one of its points uniformly."""
        names = [name for name, ps in self._by_family.items() if any(p not in exclude for p in ps)]
        if not names:
            return None
        family = rng.choice(names)
        return rng.choice([p for p in self._by_family[family] if p not in exclude])

    def neighbours(self, point: Point, rng: random.Random | None = None) -> list[Point]:
        """Feasible points of the same family one step away in one choice (the next value
        up or down its tuple); where such a step alone is infeasible, the feasible points
        that take it together with one step in another choice (coupled choices, e.g.
        vector_a needs pad 0: pad 1 -> 0 with vector_a 0 -> 4, stay reachable).  Shuffled by
        `rng` when given."""
        feasible = self.feasible_points
        out: list[Point] = []
        for q in self._steps(point):
            if q in feasible:
                out.append(q)
                continue
            out += [q2 for q2 in self._steps(q) if q2 in feasible and q2 != point and q2 not in out]
        out = list(dict.fromkeys(out))
        if rng is not None:
            rng.shuffle(out)
        return out

    def _steps(self, point: Point) -> list[Point]:
        """Every point one step away in one choice, feasible or not."""
        family = self.family(point.family)
        params = point.as_dict()
        out = []
        for name, values in sorted(family.choices.items()):
            k = values.index(params[name])
            out += [Point(point.family, {**params, name: values[j]}) for j in (k - 1, k + 1) if 0 <= j < len(values)]
        return out

    def crossover(self, a: Point, b: Point, rng: random.Random) -> Point | None:
        """Each choice from either parent (same family); None when the child is infeasible."""
        if a.family != b.family:
            return None
        pa, pb = a.as_dict(), b.as_dict()
        child = Point(a.family, {k: rng.choice((pa[k], pb[k])) for k in sorted(pa)})
        return child if child in self.feasible_points else None


def check_program_sizes(program: Expr, sizes: Mapping[str, int]) -> None:
    """Every size variable of `program` has a positive integer size satisfying its facts."""
    declared = Shape.of(program).sizes
    names = {v.name for v in declared}
    unknown = sorted(set(sizes) - names)
    if unknown:
        raise SpaceError(f"sizes {', '.join(unknown)} are not size variables of the program "
                         f"({', '.join(sorted(names)) or 'none'})", where=str(program))
    for v in declared:
        value = sizes.get(v.name)
        if value is None:
            raise SpaceError(f"no size given for {v.name}", where=str(program))
        if isinstance(value, bool) or not isinstance(value, int) or value < max(1, v.lo):
            raise SpaceError(f"size {v.name} must be an integer >= {max(1, v.lo)}, got {value!r}", where=str(program))
        if value % v.multiple_of:
            raise SpaceError(f"size {v.name}={value} is not a multiple of {v.multiple_of}, as the program requires",
                             where=str(program))


__all__ = [
    "CHECK_FLOOR",
    "DeviceLimits",
    "Family",
    "Point",
    "Shape",
    "Space",
    "SpaceError",
    "check_program_sizes",
    "check_size",
    "gemv_roles",
    "map_roles",
    "mm_naive_2d",
    "mm_roles",
    "plain_reduction_roles",
    "reduction_roles",
    "standard_families",
    "with_size_facts",
]
