"""Points of exploration spaces the space fuzzer (`python -m dpia.fuzz --points K`) found
wrong, refused by the device compiler or crashing, each as a small program and the point:
the space offers it, and derived, compiled and run it computes what the interpreter does."""

from __future__ import annotations

import pytest

import functional as fl
from dpia import fuzz
from dpia.explore.algorithmic import Heuristics, Slot, probed_length, program_constant
from dpia.explore.space import DeviceLimits, Point, SlotLength, Space
from dpia.programs import random_inputs
from functional.derivation import derive
from functional.errors import FunctionalError

# the fuzzer's limits on a CPU device: any occupancy, the hard limits of PoCL
LIMITS = DeviceLimits(max_work_group_size=4096, local_mem_bytes=512 * 1024, compute_units=1, private_values=256)


def _computes_the_program(text: str, sizes: dict, family: str, params: dict, cuts: tuple = ()) -> str:
    program = fl.infer(fl.parse(text))
    space = Space.build(program, sizes, LIMITS, heuristics=Heuristics(length=fuzz.SPACE_MOVES, cuts=cuts))
    point = Point(family, params)
    assert point in space.feasible_points, f"the space no longer offers {point}"
    inputs = random_inputs(program, sizes, 0)
    kernel = fuzz.compile_point(space, point, 0)
    for _ in range(3):
        got = kernel(*inputs)
        assert fuzz.compare(got, fl.interpret(program, *inputs), 0.0) <= 1.0, str(point)
    return kernel.source


def test_a_cast_of_a_vector_converts_its_lanes():
    """Seed 0: vectorize a map of casts, `(double)(int2)(...)` did not build (OpenCL casts
    no vector to another type: `convert_double2`)."""
    _computes_the_program("fun(xs: 8.i32) => map (fun(x) => cast f64 x) xs", {}, "vectorize(w=s0)@root; "
                          "lower_map_global(d=0)@1", {"s0": 2, "launch": 0})


VECTORISED = "vectorize(w=s0)@root; lower_map_global(d=0)@1"


@pytest.mark.parametrize("text", [
    # seed 287: a cast inside the function printed `(float)int8` (the result alone was a vector)
    "fun(xs: 8.i32) => map (fun(x) => cast f32 x + f32(0.25)) xs",
    # seed 114: a constant function's result, a literal at a vector type, crashed the printer
    "fun(xs: 8.f32) => map (fun(x) => i32(3)) xs",
    # seeds 111 and 62: a let in the function (the default lowering's fusion binds an element
    # read twice) kept its value in a scalar temporary
    "fun(xs: 8.f32) => map (fun(x) => let (select (x > f32(1.0)) x f32(3.0)) (fun(v) => v - v * v)) xs",
    # an int's abs is unsigned in OpenCL: `(int8)abs(x)` does not build, convert_int8 does
    "fun(xs: 8.i32) => map (fun(x) => abs x - i32(4)) xs",
])
def test_a_vectorised_function_computes_every_lane(text):
    _computes_the_program(text, {}, VECTORISED, {"s0": 4, "launch": 0})


def test_a_call_on_constants_in_a_sixteen_lane_vector_is_broadcast_in_each_piece():
    """Seed 36027 (session 35): a vectorised constant function `abs f32(3.0)` in 16 lanes, printed in two
    8-lane pieces (PoCL's calls on 16 lanes), gave `(float16)(fabs(3.0f), fabs(3.0f))`: each piece a
    scalar, two lanes of sixteen (the build failed).  Each piece is now the scalar broadcast."""
    _computes_the_program("fun(xs: 32.f32) => map (fun(x) => abs f32(3.0)) xs", {}, VECTORISED,
                          {"s0": 16, "launch": 0})


@pytest.mark.parametrize("launch", [0, 32016001])
def test_a_global_temporary_between_two_map_globals_is_computed_by_each_inner_iteration(launch):
    """Seed 35776 (session 35): map_global 1 over rows whose function stores a value of symbolic size
    (a map of scatters) that a map_global 0 reads.  Every item of dimension 0 ran the code that stores
    it, all into one slot (PlacementError).  Each iteration of the map_global 0 loop now computes it,
    in a slot of its own (imperative.passes._sunk_into_loop)."""
    _computes_the_program(
        "fun(M: nat, xs: M.16.f32) => map (fun(r) => map (fun(c) => reduce (fun(a, b) => a + b) f32(0.0) c) "
        "(transpose (map (fun(y) => scatter (fun(i, n) => 4 * (i % (n / 4)) + (i // (n / 4))) y) "
        "(generate M (fun(i) => r))))) xs", {"M": 32},
        "lower_map_global(d=1)@root; lower_map_global(d=0)@0.1.0", {"launch": launch})


def test_a_group_loop_running_a_loop_with_barriers_and_then_stores_ends_in_a_barrier():
    """Seed 35715 point 3 (session 35): split_k's reduction over a tile in a loop whose steps hold barriers,
    then a loop of stores, in the loop over the group's rows.  PoCL 3.0 ran the stores past that loop's last
    row: it wrote past the end of a buffer, and the process crashed or hung later (Oclgrind: clean).  The
    group loop's body now ends in a barrier (imperative.passes._loop_barriers_closed)."""
    text = ("fun(M: nat{multiple_of=4}, in1: 6.M.2.f32, in7: M.f32) => take 3 (map (fun(x6) => fst (unzip (zip x6 "
            "in7))) (map (fun(x2) => map (fun(x3) => generate 2 (fun(i4) => reduce min f32(inf) (map (fun(x5) => x5 / "
            "(abs x5 + f32(1.0))) x3))) x2) in1))")
    family = ("split_join(n=s0)@1.0.1.0.1.1.0.1.0.0.1.1; split_k(n=s1)@1.0.1.0.1.1; lower_map_workgroup(d=0)@1; "
              "lower_map_seq()@1.0.1.0.1.1.0.1; lower_map_local(d=0)@1.0.1.0.1.1.0.1.0.1.0; "
              "lower_map_seq()@1.0.1.0.1.1.1.0; lower_map_local(d=0)@1.0.1.0.1.1.1.0.0.1.0.0.1.0.0.1.0.0; "
              "lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.0.0.1.0.0.0.1.0.0; "
              "lower_map_seq_unroll()@1.0.1.0.1.1.0.1.0.1.0.0.1.0.1.0.1.1.1.0.1.0")
    source = _computes_the_program(text, {"M": 16}, family, {"s0": 2, "s1": 2}, cuts=fuzz.FUZZ_CUTS)
    group_loop = source[source.index("get_group_id(0)"):source.index("kernel void candidate_1")]  # one group's rows
    assert group_loop.rstrip().removesuffix("}\n}").rstrip().endswith("}\n    barrier(CLK_LOCAL_MEM_FENCE);"), source


def test_a_scalar_stored_to_a_vector_of_lanes_goes_to_every_lane():
    """Seed 34875 (session 34): a vectorised map whose function ignores its element (each lane the same
    sum) wrote into lanes that are not one aligned run (a cut's part of a row); the scalar value was
    taken apart lane by lane as if it were a vector (AttributeError).  OpenCL broadcasts it."""
    _computes_the_program(
        "fun(in1: 96.f64, in4: 7.f64) => split 8 (map (fun(x2) => map (fun(x5) => reduce (+) f64(0.0) x2) in4) "
        "(split 4 in1))", {},
        "map_cut(a=2)@1.0.1.0.1.0; vectorize(w=s0)@1.0.1.0.1.0.0.1; lower_map_workgroup(d=0)@1; "
        "lower_map_local(d=0)@1.0.1.0.1.0.0.1.1; lower_map_local(d=0)@1.0.1.0.1.0.1", {"s0": 2}, cuts=fuzz.FUZZ_CUTS)


def _vectorised_at_root(text: str) -> list[str]:
    space = Space.build(fl.infer(fl.parse(text)), {}, LIMITS, heuristics=Heuristics(length=1))
    return [f.name for f in space.families if f.name.startswith("vectorize(w=s0)@root")]


def test_a_function_with_a_loop_is_not_vectorised():
    """Seeds 137 and 140: a reduction in the vectorised function folded vectors into a
    scalar accumulator (did not build); OpenCL applies scalar code lane-wise, not loops."""
    assert not _vectorised_at_root(
        "fun(xs: 8.f32, ys: 4.f32) => map (fun(x) => reduce (+) f32(0.0) (map (fun(y) => x * y) ys)) xs")


def test_a_select_comparing_values_of_another_size_is_not_vectorised():
    """Seed 164: `select (f64(-1.0) >= cast f64 x) x x` on float4 lanes had a long4
    condition, which OpenCL's vector select refuses (its lanes have the values' size)."""
    assert not _vectorised_at_root("fun(xs: 8.f32) => map (fun(x) => select (f64(-1.0) >= cast f64 x) x "
                                   "(x * f32(2.0))) xs")
    assert _vectorised_at_root("fun(xs: 8.f32) => map (fun(x) => select (f32(-1.0) >= x) x (x * f32(2.0))) xs")


def test_a_split_of_a_length_over_a_size_variable_declares_the_fact_it_needs():
    """Seed 198 (32 of 2,400 points): splitting N / 8 by 4 needs N a multiple of 32, but the
    point re-declared N a multiple of gcd(N, 4) only, so no point splitting it derived."""
    text = "fun(N: nat{multiple_of=8}, xs: (N / 8).f32) => map (fun(x) => x * f32(2.0)) xs"
    family, params = "split_join(n=s0)@root; lower_map_global(d=0)@1", {"s0": 4, "launch": 0}
    space = Space.build(fl.infer(fl.parse(text)), {"N": 64}, LIMITS, heuristics=Heuristics(length=1))
    assert space.facts(Point(family, params)) == {"N": 32}
    _computes_the_program(text, {"N": 64}, family, params)


# ------------------------------------------- stage 3 offers only values whose splits divide


def _derives(space: Space, point: Point) -> bool:
    """Whether the point derives as the explorer derives it (its facts, else the stronger ones)."""
    for product in (False, True):
        try:
            derive(space.program_for(point, product), space.strategy(point))
            return True
        except FunctionalError:
            pass
    return False


def _offered(text: str, sizes: dict, family: str, moves: int = fuzz.SPACE_MOVES) -> tuple[Space, list[dict]]:
    """The space of the program (the fuzzer's sequences, or `moves` long) and the slot values
    it offers for `family`, each once whatever its launch shape; every one of them derives."""
    space = Space.build(fl.infer(fl.parse(text)), sizes, LIMITS, heuristics=Heuristics(length=moves))
    points = {tuple((k, v) for k, v in p.params if k != "launch"): p for p in space.by_family().get(family, ())}
    assert points, f"the space offers no point of {family}"
    for point in points.values():
        assert _derives(space, point), str(point)
    return space, [dict(key) for key in points]


def test_a_split_of_the_chunks_an_earlier_slot_makes_divides_them_at_every_offered_point():
    """Seeds 627 and 15043: reduce_split(n=s0) then split_join(n=s1) of the 64 / s0 chunks;
    s1 was drawn from the divisors of the chunks at s0's trial value (4) with no relation
    to s0, so s0 = 32, s1 = 4 was offered and failed ("4 does not divide the length 2").
    Stage 1 now probes the length at other values of s0: 64 / s0 (probed_length)."""
    text = "fun(xs: 64.i32) => reduce (+) i32(0) xs"
    family = "reduce_split(n=s0)@root; split_join(n=s1)@1; lower_map_global(d=0)@1.1"
    space, offered = _offered(text, {}, family)
    assert all(64 % (p["s0"] * p["s1"]) == 0 for p in offered)
    assert {"s0": 2, "s1": 8} in offered  # values the trial's 4 chunks did not have
    _computes_the_program(text, {}, family, {"s0": 8, "s1": 4, "launch": 0})


@pytest.mark.parametrize("family, bad", [
    # seeds 266 and 136: a further tree stage over the 8 / s0 partial results of a tree,
    # not offered at all before (no value divides the 1 partial result at s0's trial 8)
    ("reduce_tree(block=s0, local=s1)@root; lower_map_global(d=0)@1; reduce_tree_stage(block=s2, local=s3)@root",
     {"s0": 8, "s1": 2, "s2": 2, "s3": 2}),
    # seeds 191 and 777: the tree's 8 / s0 partial results were read as its block over its
    # local size and split (s0 / (s1 * s2) at the trial values, by coincidence), so s0 = 8,
    # s3 = 2 was offered ("2 does not divide the length 1")
    ("reduce_tree(block=s0, local=s1)@root; split_join(n=s2)@1.0.1.0.1.1; lower_map_global(d=0)@1; "
     "reduce_tree_stage(block=s3, local=s4)@root", {"s0": 8, "s1": 2, "s2": 2, "s3": 2, "s4": 2}),
])
def test_a_further_tree_stage_splits_the_partial_results_the_first_tree_leaves(family, bad):
    space, offered = _offered("fun(xs: 8.f32) => reduce (+) f32(0.0) xs", {}, family)
    tree = "s2" if "s4" not in bad else "s3"
    assert all((8 // p["s0"]) % p[tree] == 0 for p in offered)
    assert bad not in offered


def test_a_constant_of_the_program_equal_to_a_ratio_of_trial_values_is_no_slots_value():
    """Seed 17123: split_join(n=s2) of a map over 2 rows after reduce_vectorize_two_stage(n=s0,
    w=s1) inside it; 2 = 16 / 8, the trial values of s0 and s1, so s2 was read as nested in
    s0 over s1 and offered 16 (at s0 = 32, s1 = 2).  The probe finds no slot changes the
    length (program_constant): s2 splits the 2 rows only."""
    text = "fun(xs: 32.f32) => map (fun(r) => reduce min f32(inf) r) (generate 2 (fun(i) => xs))"
    family = "reduce_vectorize_two_stage(n=s0, w=s1)@0.1.0; split_join(n=s2)@root; lower_map_global(d=0)@1"
    space, offered = _offered(text, {}, family)
    assert {p["s2"] for p in offered} == {2}


def test_a_split_of_a_size_over_an_earlier_slot_divides_it_at_the_real_size():
    """Seed 733: after reduce_vectorize_two_stage(n=s0) over 2M, split_join(n=s2) of the
    2M / s0 chunks was related to w (M / 8 = 16 / s1 at the trial values) and offered at
    M = 16, s0 = 32, where 2M / s0 = 1 ("2 does not divide the length M / 16")."""
    text = "fun(M: nat{multiple_of=8}, xs: (2 * M).f32) => reduce (+) f32(0.0) xs"
    family = "reduce_vectorize_two_stage(n=s0, w=s1)@root; split_join(n=s2)@1; lower_map_global(d=0)@1.1"
    space, offered = _offered(text, {"M": 16}, family)
    assert all(32 % (p["s0"] * p["s2"]) == 0 for p in offered)
    assert not any(p["s0"] == 32 for p in offered)


def test_a_split_of_an_affine_length_needs_a_value_the_facts_can_make_divide_it():
    """Seed 1053: 34 N + 17 is 153 at N = 4, whose divisor 9 divides it at no N a point may
    declare (a multiple of 4): the space offered split_join by 9 (and 51, 153)."""
    text = "fun(N: nat{multiple_of=4}, xs: (34 * N + 17).f32) => map (fun(x) => x * f32(2.0)) xs"
    space, offered = _offered(text, {"N": 4}, "split_join(n=s0)@root; lower_map_global(d=0)@1")
    assert offered == [{"s0": 17}]


def test_a_split_of_a_length_over_a_size_plus_a_constant_declares_the_fact_it_needs():
    """Seed 61041 (3 of 320 points): (N + 4) / 2 split by 2 holds for N a multiple of 4, but the
    point declared N a multiple of gcd(8, 2) only (the scale of N / 2 was read only where the
    length has no constant term), so the point did not derive."""
    text = "fun(N: nat{multiple_of=2}, xs: ((N + 4) / 2).f32) => map (fun(x) => x * f32(2.0)) xs"
    family, params = "split_join(n=s0)@root; lower_map_global(d=0)@1", {"s0": 2, "launch": 0}
    space, offered = _offered(text, {"N": 8}, family, moves=1)
    assert {"s0": 2} in offered and space.facts(Point(family, params)) == {"N": 4}
    _computes_the_program(text, {"N": 8}, family, params)


def test_a_slot_that_cannot_move_alone_is_probed_with_the_slot_it_divides():
    """A tree's local size at its block's trial value (2, 2) moves to 4 only with the block:
    probed_length gave up on it, and the coincidental reading of the 4 / block partial
    results as the block's value (2 = 2) stayed.  Now it is moved with the block, whose
    power is known, and its own share of the change read (none)."""
    slots = {"s0": Slot((2, 4), 2), "s1": Slot((2, 4), 2, divides="s0")}
    asked = []

    def partial_results(values):
        asked.append(dict(values))
        return 4 // values["s0"] if values["s1"] <= values["s0"] else None

    assert probed_length(partial_results, 2, slots) == SlotLength(4, (("s0", -1),))
    assert {"s0": 4, "s1": 4} in asked  # the local size moved with its block
    # equal slots (s1 divides s0, s0 divides s1) move only with each other: not read, so not
    # offered (trial_slots), rather than read from the trial values
    equal = {"s0": Slot((2, 4), 2, within_slot=(("s1", ()),)), "s1": Slot((2, 4), 2, divides="s0")}
    assert probed_length(lambda v: 8 // v["s0"], 4, equal) is None
    assert not program_constant(lambda v: 8 // v["s0"], 4, equal)
    # slots no valid point moves (s0 * s1 must divide 4) are constant factors
    fixed = {"s0": Slot((2, 4), 2), "s1": Slot((2, 4), 2, divides="s0", within=(4, ("s0",)))}
    assert program_constant(lambda v: 8 // v["s0"], 4, fixed)


PARTIAL = "fun(xs: 4.f32) => reduce max f32(-inf) (map (fun(x) => exp x) xs)"


@pytest.mark.parametrize("family", [
    # seeds 17105 and 17051: split_join's trial 2 leaves the tree block 4 and local size 4
    "split_join(n=s0)@1; reduce_tree(block=s1, local=s2)@root; lower_map_global(d=0)@1; "
    "reduce_tree_stage(block=s3, local=s4)@root",
    # the same with the vector width at the chunk's trial value
    "split_join(n=s0)@1; reduce_vectorize_two_stage(n=s1, w=s2)@root; lower_map_global(d=0)@1; "
    "reduce_tree_stage(block=s3, local=s4)@root",
])
def test_a_tree_stage_splits_the_partial_results_of_a_tree_whose_local_size_is_its_block(family):
    """Seeds 17105, 17051 ("4 does not divide the length 1"): the further tree stage's block
    was read as dividing s1 (4 / s1 = 2 = s1 at the trial values) and offered at s1 = 4."""
    space, offered = _offered(PARTIAL, {}, family)
    assert space.family(family).slot_lengths["s3"] == SlotLength(4, (("s1", -1),))
    assert all((4 // p["s1"]) % p["s3"] == 0 for p in offered)
    assert not any(p["s1"] == 4 for p in offered)  # one partial result: no tree stage over it


def test_a_tree_stage_over_a_second_program_level_reduction_is_probed_on_the_mapped_variant():
    """Seed 17004: the tree stage of the second reduction was probed on the variant without
    its mapping, where the first reduction's tree stage (its site: a reduction reading a
    parallel map) does not apply, so no probe derived and the 8 / s0 partial results kept
    their trial reading; offered at s0 = 8 ("2 does not divide the length 1")."""
    text = "fun(xs: 8.f32, ys: 8.f32) => max (reduce min f32(inf) xs) (reduce min f32(inf) (map (fun(y) => y * y) ys))"
    family = ("reduce_tree(block=s0, local=s1)@0.1; lower_map_global(d=0)@0.1.1; lower_map_global(d=0)@1.1; "
              "reduce_tree_stage(block=s2, local=s3)@1; reduce_tree_stage(block=s4, local=s5)@0.1")
    space = Space.build(fl.infer(fl.parse(text)), {}, LIMITS, heuristics=Heuristics(length=1))
    assert space.family(family).slot_lengths["s4"] == SlotLength(8, (("s0", -1),))
    points = space.by_family()[family]
    assert points and all((8 // p.as_dict()["s0"]) % p.as_dict()["s4"] == 0 for p in points)
    assert not any(p.as_dict()["s0"] == 8 for p in points)  # one partial result: no tree stage over it
    deepest = max(points, key=lambda p: (p.as_dict()["s0"] * p.as_dict()["s4"], p))
    assert _derives(space, deepest), str(deepest)  # s0 * s4 = 8: the stage takes every partial result


def test_an_iterate_over_a_symbolic_length_in_a_work_group_stores_its_steps_in_global_memory():
    """Seed 357 ("local array: size N / 4 must be a constant"): the storage analysis took an
    iterate's step size `l` for a constant (each step unrolled), but over a row of 2N
    elements the first step's l is N: its values went to a local array of N elements, which
    OpenCL cannot allocate.  Now only an iterate over a constant length keeps them local."""
    text = ("fun(N: nat{multiple_of=2}, xs: 4.(2 * N).f32) => map (fun(r) => iterate 1 (fun(l: nat, ys) => "
            "map (fun(c) => reduce (+) f32(0.0) c) (split 2 ys)) r) xs")
    _computes_the_program(text, {"N": 4}, "lower_map_workgroup(d=0)@root; lower_map_local(d=0)@0.1.0.0.1.0.0", {})


def test_a_map_of_scatters_read_by_a_copy_is_stored_through_its_scatters():
    """Seeds 236, 499 and 931: fission (and split_join) leave `map (scatter idx) xs`, a map
    of write views, as data a copy reads (inside a concat); the storage walk looked no
    further than a map's function that is not a lambda, so the translation met a scatter
    it cannot read ("scatter is not lowered").  The store phase now stores such a map,
    writing its data through the scatters."""
    text = ("fun(xs: 4.8.f32, ys: 2.8.f32) => concat ys (map (fun(x) => scatter (fun(i, n) => n - i - 1) "
            "(map (fun(y) => y + f32(1.0)) x)) xs)")
    _computes_the_program(text, {}, "fission()@1; lower_map_global(d=0)@1.1", {"launch": 0})
    _computes_the_program(text, {}, "split_join(n=s0)@1.0.1.0.1; fission()@1; lower_map_global(d=0)@1.1",
                          {"s0": 2, "launch": 0})


def test_a_map_of_readable_views_read_by_a_copy_is_not_stored():
    """Seed 17083: `map fst` read by a copy has a read translation (fst is no write view):
    storing it, as a map of scatters is, left the same need after every store (the store
    phase looped)."""
    from dpia.explore.space import Shape
    from functional.storage import first_need

    def need(text: str):
        found = first_need(Shape.of(fl.infer(fl.parse(text))).body)
        return found and found.why

    assert need("fun(xs: 8.f32, ys: 8.f32, zs: 8.f32) => map_global 0 (fun(x) => x) "
                "(concat zs (map fst (zip xs ys)))") is None
    assert need("fun(xs: 4.8.f32, ys: 2.8.f32) => map_global 1 (fun(r) => map_global 0 (fun(x) => x) r) "
                "(concat ys (map (scatter (fun(i, n) => n - i - 1)) xs))") == "a map of scatters is read"
    _computes_the_program("fun(xs: 4099.i32, ys: 1.f32) => join (map (fun(x) => fst (unzip (zip x ys))) "
                          "(split 1 (gather (fun(i, n) => ((i + 5) % n)) xs)))", {},
                          "fission()@1; split_join(n=s0)@1", {"s0": 4099, "launch": 0})


def test_a_2d_launch_through_views_needs_views_its_inner_items_write_through():
    """Seed 771: global 1 over a map whose function is `reorder_stride 4 (join (map g ...))`
    and global 0 over the inner map; reorder_stride can be read but not written through, so
    the completion copied the row and stored the inner map's result per item (`to_private`),
    where each item holds only the elements it wrote ("map_global writes a private
    temporary").  The scheme now needs write views (join, transpose, split, ...)."""
    from dpia.explore.mapping import schemes
    from dpia.explore.space import Shape

    inner = "map (fun(c) => map (fun(x) => x * f32(2.0)) c) (split 8 r)"
    two_d = "lower_map_global(d=1)@root; lower_map_global(d=0)@0.1.0.1"

    def global_1(text: str) -> list[str]:
        body = Shape.of(fl.infer(fl.parse(text))).body
        return ["; ".join(map(str, s)) for s in schemes(body, ()) if any(st.fixed == (("d", 1),) for st in s)]

    assert global_1(f"fun(xs: 4.16.f32) => map (fun(r) => reorder_stride 4 (join ({inner}))) xs") == []
    written = f"fun(xs: 4.16.f32) => map (fun(r) => join ({inner})) xs"
    assert global_1(written) == [two_d]
    _computes_the_program(written, {}, two_d, {"launch": 0})


def test_points_of_a_program_level_generate_of_reductions_fused_compute_it():
    """Session 18's fuzz seed 20: once the algebra proved an element-wise operator of n-arrays
    associative, the space offered trees of fused n-array reductions (reduce_tree_stage after
    generate_reduce_fusion), which local memory does not hold: 150 of 400 points were refused
    by the translation.  Trees hold scalars (or tuples): every fused point offered computes."""
    text = "fun(xs: 8.f32) => generate 3 (fun(i) => reduce max f32(-inf) (map (fun(x) => x * cast f32 i) xs))"
    program = fl.infer(fl.parse(text))
    space = Space.build(program, {}, LIMITS, heuristics=Heuristics(length=fuzz.SPACE_MOVES))
    fused = {}
    for point in space.feasible_points:
        if "generate_reduce_fusion" in point.family:
            fused.setdefault(point.family, point)
    assert fused
    inputs = random_inputs(program, {}, 0)
    want = fl.interpret(program, *inputs)
    for point in fused.values():
        got = fuzz.compile_point(space, point, 0)(*inputs)
        assert fuzz.compare(got, want, 0.0) <= 1.0, str(point)


SEED_37323 = ("fun(in1: 1.1.128.f32) => reduce (fun(a, b) => min a b) f32(inf) (generate 64 (fun(i5) => reduce max "
              "f32(-inf) (map (fun(x6) => x6 / (abs x6 + f32(1.0))) (map (fun(x3) => f32(1.0) / (abs f32(1.0) + "
              "f32(1.0))) (map (fun(x2) => reorder_stride 4 x2) (join in1))))))")


@pytest.mark.parametrize("family, params", [
    # the completion of the tree stage put map_workgroup inside generate's function (a TranslationError)
    ("reduce_split(n=s0)@root; split_join(n=s1)@1; lower_map_global(d=0)@1.1; reduce_tree_stage(block=s2, "
     "local=s3)@root", {"launch": 128001001, "s0": 2, "s1": 8, "s2": 32, "s3": 8}),
    # then: its first stage one item's loop, a barrier before each of its writes; PoCL 3.0 computed 0
    ("reduce_tree(block=s0, local=s1)@root; fission()@1; lower_map_global(d=0)@1; lower_map_seq_unroll()"
     "@1.1.0.1.0.1; reduce_tree_stage(block=s2, local=s3)@root", {"launch": 64001001, "s0": 32, "s1": 8, "s2": 2,
                                                                   "s3": 2}),
])
def test_a_further_tree_stage_over_a_generate_of_reductions_computes_it(family, params):
    """Fuzz seed 37323 (session 36's most frequent failure of the space fuzzer)."""
    _computes_the_program(SEED_37323, {}, family, params, cuts=fuzz.FUZZ_CUTS)
