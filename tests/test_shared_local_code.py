"""Code inside `map_local d (fun(x) => ...)` that runs map_local loops of another dimension is
run by all the items of that dimension (functional.storage's ITEMS context): values its nested
parallel loops write and it reads later (a tree's stages) live in global memory, one slot per
enclosing parallel loop's index, written by one item where the code itself writes shared memory,
with barriers between the stages (imperative.passes.insert_barriers), which make the loop run
once per item (a constant length) or the same iterations on every item (a symbolic one).
Every kernel launched here is checked under Oclgrind too (tests/conftest.py)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import dpia
import functional as fl
from functional.errors import FunctionalError
from functional.expr import walk
from functional.interp import interpret
from functional.schedules import default_schedule
from functional.storage import GROUP, ITEM, ITEMS, first_need, function_context
from functional.strategies import at_path
from functional.syntax import parse
from imperative.ir import Barrier, Level, ParFor
from imperative.ir import walk as commands
from imperative.passes import BarrierPlacementError

# mm, work-groups 1 / 0 over a's rows and b's columns, each dot product a tree: map_local 1 over
# its chunks, the chunk's stages (products summed in pairs, then the pairs) on map_local 0.
# Found on the H200 (relative error 0.58): the first stage was kept in one item's private memory.
MM_TREE = (
    "fun(a: 8.128.f32, b: 128.8.f32) => map_workgroup 1 (fun(row_a) => map_workgroup 0 (fun(col_b) => "
    "reduce (+) 0.0 (map_local 1 (reduce (+) 0.0) (map_local 1 (fun(x) => iterate 1 (fun(l: nat, ys) => "
    "map_local 0 (reduce (+) 0.0) (split 2 (reorder_stride l ys))) (map_local 0 (fun(x) => reduce (+) 0.0 "
    "(map (fun(p) => fst p * snd p) (zip (fst x) (snd x)))) (zip (split 4 (reorder_stride 2 (fst x))) "
    "(split 4 (reorder_stride 2 (snd x)))))) (zip (split 8 row_a) (split 8 col_b))))) (transpose b)) a")

# Each row of a group summed from a map_local 0 stage; `ROWS` rows per group on map_local 1.
ROW_SUMS = ("fun(xs: 2.3.{rows}.4.f32) => map_workgroup 1 (fun(g) => map_workgroup 0 (fun(rows) => map_local 1 "
            "(fun(p) => reduce (+) 0.0 (map_local 0 (fun(x) => x * 2.0) p)) rows) g) xs")
ROW_SUMS_SYMBOLIC = ("fun(N: nat, xs: 2.3.N.4.f32) => map_workgroup 1 (fun(g) => map_workgroup 0 (fun(rows) => "
                     "map_local 1 (fun(p) => reduce (+) 0.0 (map_local 0 (fun(x) => x * 2.0) p)) rows) g) xs")


def _lowered(text: str):
    result = default_schedule()(fl.infer(parse(text)))
    assert result.ok, result.reason
    return result.expr


def _stores(e) -> list[str]:
    return [x.name for x in walk(e) if isinstance(x, fl.expr.Prim) and x.name.startswith("to_")]


def test_a_map_local_running_another_dimensions_map_local_is_shared_code():
    e = fl.infer(parse(ROW_SUMS.format(rows=5)))
    loop = next(x for x in walk(e) if fl.expr.spine(x)[0].__class__.__name__ == "Prim"
                and fl.expr.spine(x)[0].name == "map_local" and fl.expr.spine(x)[0].params[0] == 1
                and len(fl.expr.spine(x)[1]) == 2)
    assert function_context(GROUP, "map_local", loop) == ITEMS
    inner = fl.expr.spine(fl.expr.spine(loop)[1][0].body)[1][2]  # the map_local 0 the reduction reads
    assert function_context(ITEMS, "map_local", inner) == ITEM
    assert function_context(GROUP, "map_local") == ITEM  # without the loop: as before


def test_a_value_items_write_in_shared_code_is_stored_where_they_all_read_it():
    e = fl.infer(parse(ROW_SUMS.format(rows=5)))
    need = first_need(e)
    assert need.rule == "materialise_global" and "several items" in need.why
    assert fl.expr.spine(at_path(e, need.path))[0].name == "map_local"
    # a sequential loop's value in the same code: each item computes it, an item's storage
    seq_only = fl.infer(parse("fun(xs: 2.3.5.4.f32) => map_workgroup 1 (fun(g) => map_workgroup 0 (fun(rows) => "
                              "map_local 1 (fun(p) => map_local 0 (fun(x) => x + reduce_seq (+) 0.0 (map_seq "
                              "(fun(y) => y * 2.0) p)) p) rows) g) xs"))
    need = first_need(seq_only)
    assert need.rule == "materialise_private"


def test_the_tree_over_a_rows_chunks_agrees_with_the_interpreter():
    low = _lowered(MM_TREE)
    assert "to_private" not in _stores(low)  # the stages' values are shared: global slots
    program = dpia.translate(low)
    shared = [c for c in commands(program.body) if isinstance(c, ParFor) and c.dim == 1 and c.level is Level.LOCAL
              and any(isinstance(d, ParFor) and d.dim == 0 for d in commands(c.body))]
    assert shared and any(isinstance(c, Barrier) for c in commands(shared[0].body))
    assert dict(program.local_size).get(1) == 16  # the loop with barriers runs once per item
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 128)).astype(np.float32)
    b = rng.standard_normal((128, 8)).astype(np.float32)
    source = fl.infer(parse(MM_TREE))
    np.testing.assert_allclose(dpia.compile(low)(a, b), interpret(source, a, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows", [5, 16])
def test_row_sums_of_a_stage_agree_with_the_interpreter(rows):
    text = ROW_SUMS.format(rows=rows)
    low = _lowered(text)
    xs = np.random.default_rng(rows).standard_normal((2, 3, rows, 4)).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(low)(xs), interpret(fl.infer(parse(text)), xs), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [3, 40])
def test_a_loop_of_symbolic_length_with_barriers_runs_the_same_iterations_on_every_item(n):
    """Its length is not the launch's: every item runs ceil(N / local size) iterations, the
    body's commands guarded by lid < N and its barriers reached by all (ParFor.uniform)."""
    low = _lowered(ROW_SUMS_SYMBOLIC)
    program = dpia.translate(low)
    uniform = [c for c in commands(program.body) if isinstance(c, ParFor) and c.uniform]
    assert len(uniform) == 1 and uniform[0].dim == 1 and any(isinstance(c, Barrier) for c in commands(uniform[0].body))
    assert dict(program.local_size).get(1) is None  # no contract: any local size
    xs = np.random.default_rng(n).standard_normal((2, 3, n, 4)).astype(np.float32)
    want = interpret(fl.infer(parse(ROW_SUMS_SYMBOLIC)), xs)
    np.testing.assert_allclose(dpia.compile(low)(xs), want, rtol=1e-4, atol=1e-4)


def test_a_barrier_a_conditional_would_hide_from_some_items_is_refused():
    """Stages passing values inside a conditional phase: no barrier can be placed, so the
    program is refused (never a kernel with a race)."""
    from functional.nat import Nat
    from functional.nat import Var as NatVar
    from functional.types import AddressSpace, ArrayType, boolean, f32, i32
    from imperative.ir import Assign, Idx, IdxAcc, If, Lit, Mem, MemAcc, NatExp, New, Op, Program, seq
    from imperative.passes import insert_barriers, resolve_views

    def arr(k, t):
        return ArrayType(Nat.const(k), t)

    out = Mem("output", arr(4, arr(2, f32)), AddressSpace.GLOBAL)
    tmp = Mem("tmp", arr(2, f32), AddressSpace.GLOBAL)
    wg1, wg0 = NatVar("wg1", 0, Nat.const(1)), NatVar("wg0", 0, Nat.const(1))
    row, w, r = NatVar("row", 0, Nat.const(4)), NatVar("w", 0, Nat.const(2)), NatVar("r", 0, Nat.const(2))
    write = ParFor(Level.LOCAL, 0, w, Nat.const(2), Assign(IdxAcc(MemAcc(tmp), Nat.atom(w), f32), Lit(1.0, f32)))
    read = ParFor(Level.LOCAL, 0, r, Nat.const(2), Assign(
        IdxAcc(IdxAcc(MemAcc(out), Nat.atom(row), arr(2, f32)), Nat.atom(r), f32),
        Idx(tmp, Nat.const(1) - Nat.atom(r), f32)))
    rows = ParFor(Level.LOCAL, 1, row, Nat.const(4), New(tmp, seq(write, read)))
    cond = Op("lt", (), (NatExp(Nat.atom(wg0), i32), Lit(1, i32)), boolean)
    body = ParFor(Level.WORKGROUP, 1, wg1, Nat.const(1), ParFor(Level.WORKGROUP, 0, wg0, Nat.const(1), If(cond, rows)))
    program = resolve_views(Program("p", (), out, (), body))
    with pytest.raises(BarrierPlacementError, match=r"map_local 1 over 4 elements .*inside a conditional"):
        insert_barriers(program)
    # the same stages outside the conditional: a barrier between them
    placed = insert_barriers(resolve_views(Program("p", (), out, (), attrs.evolve(body, body=attrs.evolve(
        body.body, body=rows)))))
    assert any(isinstance(c, Barrier) for c in commands(placed.body))


def test_a_parallel_loop_writing_a_private_temporary_is_refused():
    text = ("fun(xs: 2.3.5.4.f32) => map_workgroup 1 (fun(g) => map_workgroup 0 (fun(rows) => map_local 1 "
            "(fun(p) => reduce_seq (+) 0.0 (to_private (map_local 0 (fun(x) => x * 2.0) p))) rows) g) xs")
    with pytest.raises(dpia.phrases.TranslationError, match=r"map_local 0 writes a private temporary.*to_global"):
        dpia.translate(fl.infer(parse(text)))


# A row-wise sum a 2D work-group updates in place: map_local 1 over the accumulator runs on every
# item of local dimension 0 too (the group has items there for the other loops).  Each of them
# added the row again (found by sampling mm's space: register_blocking_1d then a 2D work-group,
# errors of 1 to 15 times the result); one item per free dimension writes.
UPDATED_BY_ITEMS = (
    "fun(xs: 2.3.4.8.f32) => map_workgroup 1 (fun(g) => map_workgroup 0 (fun(m) => map_local 0 (fun(x) => x) "
    "(to_global (reduce_seq (fun(acc, row) => map_local 1 (fun(p) => fst p + snd p) (zip acc row)) "
    "(map_local 1 (fun(x) => x) (generate 8 (fun(i) => 0.0))) "
    "(to_global (map_local 1 (fun(r) => map_local 0 (fun(x) => x * 2.0) r) m))))) g) xs")


def test_an_accumulator_that_items_of_a_free_dimension_update_is_updated_once():
    low = _lowered(UPDATED_BY_ITEMS)
    xs = np.random.default_rng(1).standard_normal((2, 3, 4, 8)).astype(np.float32)
    want = interpret(fl.infer(parse(UPDATED_BY_ITEMS)), xs)
    np.testing.assert_allclose(dpia.compile(low)(xs), want, rtol=1e-4, atol=1e-4)
    # the programs with one local dimension only are printed as before: no guard on a dimension without items
    from codegen_opencl import opencl as cg

    one_dim = ROW_SUMS.format(rows=5).replace("map_local 0 (fun(x) => x * 2.0) p", "map_seq (fun(x) => x * 2.0) p")
    assert "get_local_id(0)" not in cg.emit(dpia.translate(_lowered(one_dim)))
    assert "(get_local_id(0) == 0)" in cg.emit(dpia.translate(low))


def test_a_value_global_items_compute_whole_in_shared_code_is_kept_per_item():
    """Stored in map_global 1's function, outside the map_global 0 its function runs: every item of
    dimension 0 computes the whole value (map_seq), so each keeps its own copy in private memory
    (one global slot per row would be written by all of them at once, with no barrier across
    work-groups).  A random program of the fuzzer's reached it through the default lowering."""
    import numpy as np

    import dpia
    from imperative.ir import AddressSpace, New
    from imperative.ir import walk as commands

    text = ("fun(xss: 4.8.f32) => map_global 1 (fun(x) => let (to_global (map_seq (fun(v) => v * 2.0) x)) "
            "(fun(t) => map_global 0 (fun(y) => y + at t 0) x)) xss")
    program = fl.infer(fl.parse(text))
    news = [c for c in commands(dpia.translate(program).body) if isinstance(c, New)]
    assert [c.mem.space for c in news] == [AddressSpace.PRIVATE]
    xss = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(dpia.compile(program)(xss), interpret(program, xss), rtol=1e-6)


def test_a_value_global_items_write_in_parallel_in_shared_code_is_refused():
    """Written by map_global 0 inside map_global 1's function and read by every item of dimension
    0: each would need the others' writes, and no barrier spans work-groups.  Refused, naming the
    dimensions, rather than run with a race."""
    import dpia
    from imperative.passes import PlacementError

    program = fl.infer(fl.parse("fun(xss: 4.8.f32) => map_global 1 (fun(x) => let (to_global (map_global 0 "
                                "(fun(v) => v * 2.0) x)) (fun(t) => map_global 0 (fun(y) => y + at t 0) x)) xss"))
    with pytest.raises(PlacementError, match=r"global dimension 0 share \(inside map_global 1's function"):
        dpia.translate(program)
