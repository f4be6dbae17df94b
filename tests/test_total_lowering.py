"""The default lowering accepts every well-typed program: one case per way the translation
used to refuse a program (a computed array read where nothing said where it is stored, a view
of data written without a loop, host state shared with a kernel, a map of a view left
unlowered) and per wrong result (tuple accumulators, non-neutral or non-associative
reductions), each compiled by `dpia.compile` and compared with the interpreter on PoCL."""

from __future__ import annotations

import numpy as np
import pytest

import dpia
import functional as fl
from dpia.programs import TOLERANCE, random_inputs, relative_error
from functional.derivation import Derivation, derive
from functional.schedules import default_schedule

f32 = fl.f32


def arr(*dims, t=f32):
    for n in reversed(dims):
        t = fl.array(n, t)
    return t


def _argmin(xs, n):
    pairs = fl.zip(xs, fl.generate(n, lambda i: fl.cast(f32, i)))
    return fl.reduce(lambda a, b: fl.select(fl.fst(a) <= fl.fst(b), a, b),
                     fl.pair(fl.literal(float("inf"), f32), fl.literal(-1.0, f32)), pairs)


def _mean_var(xs, declared=False):
    """Chan's merge of (count, mean, m2) summaries, a reduction over triples whose components
    read each other (not provably associative as written: it stays in order, unless
    `declared`: then the program states it, `associative merge`)."""
    zero = fl.literal(0.0, f32)

    def merge(a, b):
        na, ma, m2a = fl.fst(a), fl.fst(fl.snd(a)), fl.snd(fl.snd(a))
        nb, mb, m2b = fl.fst(b), fl.fst(fl.snd(b)), fl.snd(fl.snd(b))
        n = na + nb
        delta = mb - ma
        return fl.pair(n, fl.pair(ma + delta * nb / fl.max(n, 1.0), m2a + m2b + delta * delta * na * nb / fl.max(n, 1.0)))

    return fl.reduce(fl.associative(merge) if declared else merge, fl.pair(zero, fl.pair(zero, zero)),
                     fl.map(lambda x: fl.pair(fl.literal(1.0, f32), fl.pair(x, zero)), xs))


def _welford(xs):
    """Welford's step as the operator of a reduction over (count, mean, m2) triples: the
    accumulator takes one element, b, as if it were a single value (b's count and m2 are not
    read).  Right as the program's left fold of singletons, wrong if regrouped: a reduction
    the default lowering must keep in order."""
    zero = fl.literal(0.0, f32)

    def step(a, b):
        n = fl.fst(a) + 1.0
        mean, m2, x = fl.fst(fl.snd(a)), fl.snd(fl.snd(a)), fl.fst(fl.snd(b))
        delta = x - mean
        moved = mean + delta / n
        return fl.pair(n, fl.pair(moved, m2 + delta * (x - moved)))

    return fl.reduce(step, fl.pair(zero, fl.pair(zero, zero)),
                     fl.map(lambda x: fl.pair(fl.literal(1.0, f32), fl.pair(x, zero)), xs))


def _dot(a, b):
    return fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(a, b)))


CASES = {
    # a computed array read by a view inside a map: stored per item
    "take_of_inner_map": fl.fun([arr(4, 4)], lambda xs: fl.map(lambda r: fl.take(2, fl.map(lambda x: x * 2.0, r)), xs)),
    # views of computed data as the result: copied by a loop
    "take_of_map": fl.fun([arr(8)], lambda xs: fl.take(2, fl.map(lambda x: x * 2.0, xs))),
    "bare_transpose": fl.fun([arr(4, 6)], lambda xs: fl.transpose(xs)),
    "input_identity": fl.fun([arr(8)], lambda xs: xs),
    "concat_input_and_map": fl.fun([arr(8)], lambda xs: fl.concat(xs, fl.map(lambda x: x * 2.0, xs))),
    "slide_of_map": fl.fun([arr(10)], lambda xs: fl.map(lambda w: fl.reduce(fl.add, 0.0, w),
                                                         fl.slide(3, 1, fl.map(lambda x: x * x, xs)))),
    # a program-level reduction read by a kernel
    "normalise_by_sum": fl.fun([arr(64)], lambda xs: fl.let(fl.reduce(fl.add, 0.0, xs),
                                                            lambda s: fl.map(lambda x: x / s, xs))),
    "normalise_by_large_sum": fl.fun([arr(5000)], lambda xs: fl.let(fl.reduce(fl.add, 0.0, xs),
                                                                    lambda s: fl.map(lambda x: x / s, xs))),
    # fusion leaves a map of a view
    "fst_of_zip_with_map": fl.fun([arr(8)], lambda xs: fl.map(lambda p: fl.fst(p),
                                                             fl.zip(xs, fl.map(lambda x: x * 2.0, xs)))),
    # a per-item array too large for private memory: one global slot per work-item
    "large_per_item_array": fl.fun([arr(6, 300)], lambda xs: fl.map(
        lambda r: fl.reduce(fl.add, 0.0, fl.drop(1, fl.map(lambda x: x * 2.0, r))), xs)),
    # wrong results before: tuple accumulators, non-neutral and non-associative reductions
    "argmin": fl.fun([arr(64)], lambda xs: _argmin(xs, 64)),
    "argmin_large": fl.fun([arr(3000)], lambda xs: _argmin(xs, 3000)),
    "running_mean_variance": fl.fun([arr(100)], lambda xs: _mean_var(xs)),
    # operators the algebra cannot prove associative, over lengths that would be split: in order
    "chan_mean_variance_large": fl.fun([arr(5000)], lambda xs: _mean_var(xs)),
    "welford_large": fl.fun([arr(5000)], lambda xs: _welford(xs)),
    # ... and Chan's merge declared associative by the program: parallel stages
    "chan_declared_associative_large": fl.fun([arr(5000)], lambda xs: _mean_var(xs, declared=True)),
    "sum_from_one": fl.fun([arr(4096)], lambda xs: fl.reduce(fl.add, 1.0, xs)),
    "fold_of_differences": fl.fun([arr(4096)], lambda xs: fl.reduce(lambda a, b: a - b * 0.5, 0.0, xs)),
    "dot_of_prime_length": fl.fun([arr(10007), arr(10007)], lambda xs, ys: fl.reduce(
        fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys)))),
    "sum_and_sum_of_squares": fl.fun([arr(5000)], lambda xs: fl.reduce(
        lambda a, b: fl.pair(fl.fst(a) + fl.fst(b), fl.snd(a) + fl.snd(b)),
        fl.pair(fl.literal(0.0, f32), fl.literal(0.0, f32)), fl.map(lambda x: fl.pair(x, x * x), xs))),
    # loop-invariant loops inside a map's function: computed once (hoist_invariant)
    "atax_inline": fl.fun([arr(24, 16), arr(16)], lambda a, x: fl.map(
        lambda col: _dot(col, fl.map(lambda r: _dot(r, x), a)), fl.transpose(a))),
    "normalise_inline": fl.fun([arr(300)], lambda xs: fl.map(lambda x: x / fl.reduce(fl.add, 0.0, xs), xs)),
    # a map of scatters (write views only) read by a copy: stored, written through the scatters
    "concat_of_a_map_of_scatters": fl.parse("fun(xs: 4.8.f32, ys: 2.8.f32) => concat ys "
                                            "(map (scatter (fun(i, n) => n - i - 1)) xs)"),
    # a generate read lazily whose function reads an array at its own index (or at an enclosing
    # generate's): within range, read directly; any other computed index is stored clamped, so
    # such a generate is written by a loop first
    "generate_reading_at_its_index": fl.fun([arr(8)], lambda xs: fl.map(
        lambda x: fl.generate(3, lambda k: xs[k] * x), xs)),
    "generate_reading_at_a_computed_index": fl.fun([arr(8)], lambda xs: fl.map(
        lambda x: fl.generate(3, lambda k: xs[k + 2] * x), xs)),
    "generate_reading_at_a_data_index": fl.fun([arr(10, t=fl.i32), arr(10)], lambda ix, xs: fl.map(
        lambda i: fl.generate(2, lambda k: xs[i] + xs[k]), ix)),
    "generate_of_generates_reading_both_indices": fl.fun([arr(8)], lambda xs: fl.generate(
        4, lambda k: fl.generate(3, lambda j: xs[k] * xs[j]))),
    # an element at a computed index outside any kernel, its clamped index then read by kernels:
    # shared in global memory, each kernel's items read their own copy (fuzz seeds 30193, 30267)
    "an_element_at_a_computed_index_then_kernels": fl.fun([arr(4), fl.i32, arr(16)], lambda xs, i, ys: fl.let(
        fl.at(fl.map(lambda x: x * 0.5, xs), fl.rem(fl.abs(i * -2), 4)), lambda v: fl.map(lambda y: y + v, ys))),
    "a_row_at_a_computed_index_mapped_by_a_kernel": fl.fun([arr(4, 16), fl.i32], lambda xss, i: fl.map(
        lambda x: x * 2.0, fl.at(xss, fl.rem(fl.abs(i), 4)))),
    # N-Body's three reductions as one over 3-vectors: the accumulator and the element arrays
    # per body, written by a generate that reads the bodies at its index
    "componentwise_reduction_of_generated_arrays": fl.fun([arr(8, 4)], lambda ps: fl.map(
        lambda p: fl.reduce(lambda a, b: fl.generate(3, lambda k: a[k] + b[k]), fl.generate(3, lambda k: 0.0),
                            fl.map(lambda q: fl.generate(3, lambda k: q[3] * (q[k] - p[k])), ps)), ps)),
    # two reductions over one row in a work-item: one pass of pairs (pair_reduce_fusion), a fold
    # that is not associative among them kept in order; at program level fused only where the
    # fused operator is provably associative (fused_in_stages: its stages stay parallel)
    "pair_of_reductions_over_one_row": fl.fun([arr(6, 40)], lambda xss: fl.map(lambda r: fl.pair(
        fl.reduce(fl.add, 0.0, fl.map(lambda x: x * x, r)), fl.reduce(lambda a, b: a - b * 0.5, 0.0, r)), xss)),
    "pair_of_reductions_over_one_array": fl.fun([arr(3000)], lambda xs: fl.pair(
        fl.reduce(fl.add, 0.0, xs), fl.reduce(fl.max, fl.literal(float("-inf"), f32), fl.map(lambda x: x * 2.0, xs)))),
    "pair_of_a_sum_and_a_non_associative_fold": fl.fun([arr(3000)], lambda xs: fl.pair(
        fl.reduce(fl.add, 0.0, xs), fl.reduce(lambda a, b: a - b * 0.5, 0.0, xs))),
    # a generate of reductions over one array in program-level code: one reduction of 3-arrays in
    # parallel stages (the algebra proves the element-wise operator associative)
    "generate_of_reductions_over_one_array": fl.fun([arr(5000)], lambda xs: fl.generate(3, lambda k: fl.reduce(
        fl.add, 0.0, fl.map(lambda x: x * fl.cast(f32, k) + x * x, xs)))),
    "row_sums_of_a_matrix_by_a_host_reduction": fl.fun([arr(50, 7)], lambda xss: fl.reduce(
        lambda acc, row: fl.map(lambda p: fl.fst(p) + fl.snd(p), fl.zip(acc, row)),
        fl.generate(7, lambda i: 0.0), xss)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_and_agrees_with_the_interpreter(name):
    program = fl.infer(CASES[name])
    inputs = random_inputs(program, {}, seed=3)
    kernel = dpia.compile(program, db=False)
    got = kernel(*inputs)
    assert relative_error(got, fl.interpret(program, *inputs)) <= TOLERANCE, kernel.source


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_default_lowering_replays_from_its_text(name):
    program = fl.infer(CASES[name])
    low, derivation = derive(program, default_schedule(program))
    assert Derivation.from_text(derivation.to_text()).replay() == low


@pytest.mark.parametrize("name, fused, n", [("pair_of_reductions_over_one_array", "pair_reduce_fusion", 3000),
                                            ("generate_of_reductions_over_one_array", "generate_reduce_fusion", 5000)])
def test_program_level_reductions_over_one_array_read_it_once_in_parallel_stages(name, fused, n):
    """n reductions over one array at program level, with monoid operators: one reduction of
    pairs (n-arrays), split into parallel stages like each of them would have been, so the
    array is read by the kernels one reduction has (its stage and its remainder), not n times."""
    program = fl.infer(CASES[name])
    low, derivation = derive(program, default_schedule(program))
    names = [step.rule for step in derivation.steps]
    assert names.count(fused) == 1 and "reduce_split" in names and "map_global" in str(low)

    def kernels_reading_xs(p):
        kernel = dpia.compile(p, db=False)
        kernel(*random_inputs(p, {}, seed=3))
        return sum("xs[" in body for body in kernel.source.split("kernel void")[1:])

    # one reduction's: its first stage and the remainder folded after (n reductions in stages
    # would read it in 2n kernels)
    assert kernels_reading_xs(program) <= 2


def test_program_level_reductions_stay_apart_where_the_fused_operator_is_not_provably_associative():
    program = fl.infer(CASES["pair_of_a_sum_and_a_non_associative_fold"])
    low, derivation = derive(program, default_schedule(program))
    assert "pair_reduce_fusion" not in [step.rule for step in derivation.steps]
    assert "map_global" in str(low)  # the sum keeps its parallel stages


def test_a_reduction_with_a_non_associative_operator_keeps_its_order():
    program = fl.infer(CASES["fold_of_differences"])
    low, _ = derive(program, default_schedule(program))
    assert "map_global" not in str(low)


@pytest.mark.parametrize("name", ["chan_mean_variance_large", "welford_large"])
def test_a_tuple_reduction_not_provably_associative_stays_in_order_and_agrees_with_numpy(name):
    """The default lowering's rule (split_reduction): only operators functional.algebra proves
    associative run in parallel stages; Chan's merge and Welford's step keep the program's
    order on one work-item, and give NumPy's mean and variance."""
    from functional import algebra
    from functional.expr import spine

    program = fl.infer(CASES[name])
    reduction = program.body
    assert not algebra.associative(spine(reduction)[1][0])
    low, _ = derive(program, default_schedule(program))
    assert "map_global" not in str(low) and str(low).count("reduce_seq") == 1
    xs = np.random.default_rng(4).uniform(-1.0, 3.0, 5000).astype(np.float32)
    count, (mean, m2) = dpia.compile(program, db=False)(xs)
    assert count == 5000
    np.testing.assert_allclose(mean, np.mean(xs.astype(np.float64)), rtol=1e-4)
    np.testing.assert_allclose(m2 / count, np.var(xs.astype(np.float64)), rtol=1e-4)


def _numpy_mean_variance(result, xs):
    count, (mean, m2) = result
    assert count == len(xs)
    np.testing.assert_allclose(mean, np.mean(xs.astype(np.float64)), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m2 / count, np.var(xs.astype(np.float64)), rtol=1e-4, atol=1e-6)


def test_a_reduction_declared_associative_runs_in_parallel_stages_and_agrees_with_numpy():
    """`reduce (associative merge) z xs`: the user's word that Chan's merge is associative;
    the default lowering splits it (chunks folded from their first element, no neutral
    element needed) and erases the declaration."""
    from functional import algebra
    from functional.expr import spine

    program = fl.infer(CASES["chan_declared_associative_large"])
    operator = spine(program.body)[1][0]
    assert algebra.declared_associative(operator) and algebra.associative(operator)
    assert not algebra.commutative(operator) and algebra.neutral_element(operator, program.body.t) is None
    low, derivation = derive(program, default_schedule(program))
    text = str(low)
    assert text.count("map_global") == 2 and "at c 0" in text and "associative" not in text
    assert "erase_associative" in derivation.to_text()
    xs = np.random.default_rng(4).uniform(-1.0, 3.0, 5000).astype(np.float32)
    _numpy_mean_variance(dpia.compile(program, db=False)(xs), xs)
    symbolic = fl.infer(fl.fun([fl.array(fl.nat("N"), f32)], lambda xs: _mean_var(xs, declared=True)))
    kernel = dpia.compile(derive(symbolic, default_schedule(symbolic))[0])  # one kernel for every N
    for n in (1, 31, 33, 1000):
        xs = np.random.default_rng(n).uniform(-1.0, 3.0, n).astype(np.float32)
        _numpy_mean_variance(kernel(xs), xs)


def test_the_declaration_is_text_and_means_the_operator_itself():
    text = "fun(xs: 6.f32) => reduce (associative (fun(a, b) => a + b)) 1.5 xs"
    program = fl.parse(text)
    assert str(program) == text and fl.infer(program).t == fl.infer(fl.parse(text.replace("associative ", ""))).t
    xs = np.arange(6, dtype=np.float32)
    assert fl.interpret(program, xs) == np.float32(16.5)
    with pytest.raises(fl.TypeInferenceError):  # an operator of two types cannot be declared associative
        fl.infer(fl.parse("fun(xs: 6.f32) => reduce_seq (associative (fun(a, x) => a + cast f32 x)) 0.0 "
                          "(generate 6 (fun(i) => i))"))


def test_a_declaration_left_in_a_hand_lowered_program_translates_as_its_operator():
    program = fl.infer(fl.parse("fun(xs: 40.f32) => reduce_seq (associative (fun(a, b) => a + b * 2.0)) 1.5 xs"))
    xs = np.random.default_rng(2).uniform(0.5, 1.5, 40).astype(np.float32)
    got = dpia.compile(program)(xs)  # low level: compiled as written
    np.testing.assert_allclose(got, 1.5 + 2.0 * xs.astype(np.float64).sum(), rtol=1e-5)


def test_an_argmin_over_pairs_is_exact():
    program = fl.infer(CASES["argmin"])
    xs = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    value, index = dpia.compile(program, db=False)(xs)
    assert value == xs.min() and index == float(np.argmin(xs))


def test_fusion_of_shared_producers_stays_polynomial():
    def nest(xs, k):
        if k == 0:
            return xs
        inner = nest(xs, k - 1)  # used twice: the program is a tree of 2^k copies
        return fl.map(lambda p: fl.fst(p) + fl.snd(p) * 2.0, fl.zip(inner, fl.map(lambda x: x * 3.0, inner)))

    program = fl.infer(fl.fun([arr(8)], lambda xs: nest(xs, 4)))
    low, derivation = derive(program, default_schedule(program))
    assert len(str(low)) < 2 * len(str(program))  # no duplicated computation
    inputs = random_inputs(program, {}, seed=0)
    assert relative_error(dpia.compile(program, db=False)(*inputs), fl.interpret(program, *inputs)) <= TOLERANCE


def test_a_large_f32_sum_is_about_as_accurate_as_numpys():
    n = 1 << 22
    program = fl.infer(fl.fun([arr(n)], lambda xs: fl.reduce(fl.add, 0.0, xs)))
    kernel = dpia.compile(program, db=False)
    rng = np.random.default_rng(5)
    ours, theirs = [], []
    for _ in range(3):
        x = rng.uniform(0.0, 1.0, n).astype(np.float32)
        exact = float(np.sum(x.astype(np.float64)))
        ours.append(abs(float(kernel(x)) - exact) / exact)
        theirs.append(abs(float(np.sum(x)) - exact) / exact)
    assert np.mean(ours) <= 10 * max(np.mean(theirs), 1e-9)


HAND_LOWERED = {
    "read_of_a_sequential_map": (fl.fun([arr(4, 4)], lambda xs: fl.map_global(
        lambda r: fl.take(2, fl.map_seq(lambda x: x * 2.0, r)), xs)), "to_private"),
    "view_of_an_input_written": (fl.fun([arr(4, 6)], lambda xs: fl.map_global(lambda r: fl.take(2, r), xs)),
                                 "map_seq (fun(x) => x)"),
    "host_view_written": (fl.fun([arr(4, 6)], lambda xs: fl.transpose(xs)), "map_global 0 (fun(x) => x)"),
}


@pytest.mark.parametrize("name", sorted(HAND_LOWERED))
def test_a_wrong_hand_lowering_names_its_subexpression_and_a_fix_that_works(name):
    from functional.rules import RULES
    from functional.storage import first_need
    from functional.strategies import at_path, replace_at

    program, proposed = HAND_LOWERED[name]
    program = fl.infer(program)
    with pytest.raises(dpia.TranslationError, match=r"in `.*`: .*" + proposed.replace("(", r"\(").replace(")", r"\)")):
        dpia.translate(program)
    for _ in range(5):  # apply the proposed fixes until the program translates
        need = first_need(program, required_only=True)
        if need is None:
            break
        program = fl.infer(replace_at(program, need.path, RULES[need.rule].strategy(**(
            {"d": 0} if need.rule == "lower_map_global" else {}))(at_path(program, need.path)).expr))
    inputs = random_inputs(program, {}, seed=1)
    assert relative_error(dpia.compile(program)(*inputs), fl.interpret(program, *inputs)) <= TOLERANCE


@pytest.mark.parametrize("name", ["atax_inline", "normalise_inline"])
def test_a_loop_invariant_inside_a_map_is_computed_once_before_it(name):
    program = fl.infer(CASES[name])
    low, _ = derive(program, default_schedule(program))
    text = str(low)
    assert text.startswith("fun(") and "=> let (" in text, text
    assert text.count("reduce_seq") == str(program).count("reduce")  # nothing duplicated


def test_an_argmin_of_many_elements_runs_in_parallel_stages():
    program = fl.infer(CASES["argmin_large"])
    low, _ = derive(program, default_schedule(program))
    assert "map_global" in str(low) and "at c 0" in str(low)  # chunks fold from their first element


# Reductions over symbolic lengths: parallel stages whatever the length's facts, the cut at
# CHUNK * (n // CHUNK) a size expression, the remainder folded after the stages.
SYMBOLIC_REDUCTIONS = {
    "sum": ("fun(N: nat, xs: N.f32) => reduce (+) 0.0 xs", "N"),
    "max_of_a_multiple_of_4": ("fun(N: nat{multiple_of=4}, xs: N.f32) => reduce max (-inf) xs", "N"),
    "dot_from_one_of_a_multiple_of_64": (
        "fun(N: nat{multiple_of=64}, xs: N.f32, ys: N.f32) => reduce (+) 1.0 (map (fun(p) => fst p * snd p) "
        "(zip xs ys))", "N"),
    "sum_of_a_product_of_sizes": ("fun(M: nat, N: nat, xs: M.N.f32) => reduce (+) 0.0 (join xs)", "M * N"),
    "argmin": ("fun(N: nat, xs: N.f32) => reduce (fun(a, b) => select (fst a <= fst b) a b) (f32(inf), f32(-1.0)) "
               "(zip xs (generate N (fun(i) => cast f32 i)))", "N"),
}
SYMBOLIC_LENGTHS = (1, 2, 31, 32, 33, 100, 1025, 5000)


def _symbolic_inputs(text, n, rng):
    multiple = 64 if "multiple_of=64" in text else 4 if "multiple_of=4" in text else 1
    n = multiple * max(1, n // multiple)
    if "M: nat" in text:
        return n, (rng.uniform(0.5, 1.5, (n, 3)).astype(np.float32),)
    # distinct values: the argmin's index is unique
    return n, tuple(rng.permutation(n).astype(np.float32) + 0.5 for _ in range(text.count(": N.f32")))


@pytest.mark.parametrize("name", sorted(SYMBOLIC_REDUCTIONS))
def test_a_reduction_over_a_symbolic_length_runs_in_parallel_stages(name):
    from functional.default_lowering import CHUNK, FIRST_CHUNK

    text, length = SYMBOLIC_REDUCTIONS[name]
    program = fl.infer(fl.parse(text))
    low, derivation = derive(program, default_schedule(program))
    lowered = str(low)
    assert lowered.count("map_global") == 3, lowered  # SYMBOLIC_STAGES stages, every one parallel
    # the first stage's chunks: FIRST_CHUNK elements read as vectors where the operator is lane-wise
    first = FIRST_CHUNK if "as_vector 16" in lowered else CHUNK
    assert f"split {first} (take ({first} * ({length} // {first}))" in lowered or "multiple_of=64" in text, lowered
    assert f"drop ({first} * (" in lowered or "multiple_of=64" in text  # the guarded remainder
    assert f"drop ({CHUNK} * (" in lowered  # the later stages' remainders
    assert Derivation.from_text(derivation.to_text()).replay() == low
    kernel = dpia.compile(low)  # low level: compiled as written, one kernel for every N
    rng = np.random.default_rng(11)
    for n in SYMBOLIC_LENGTHS:
        n, inputs = _symbolic_inputs(text, n, rng)
        got, want = kernel(*inputs), fl.interpret(program, *inputs)
        assert relative_error(got, want) <= TOLERANCE, (n, got, want)
        assert relative_error(fl.interpret(low, *inputs), want) <= TOLERANCE, n


def test_a_symbolic_reduction_keeps_a_fact_that_makes_the_cut_whole():
    program = fl.infer(fl.parse(SYMBOLIC_REDUCTIONS["dot_from_one_of_a_multiple_of_64"][0]))
    low, _ = derive(program, default_schedule(program))
    first_stage = str(low).split("(fun(ys) =>")[0]
    assert "split 64 xs" in first_stage and "take" not in first_stage  # 64 divides N: no remainder
    assert str(low).startswith("fun(N: nat{multiple_of=64}") and "1.0 + " in str(low)  # z = 1 is folded once


def test_a_bounded_symbolic_length_is_split_as_its_largest_value():
    short = fl.infer(fl.fun([fl.array(fl.nat("N", hi=500), f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)))
    assert "map_global" not in str(derive(short, default_schedule(short))[0])  # fewer than SMALL_REDUCTION
    longer = fl.infer(fl.fun([fl.array(fl.nat("N", hi=5000), f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)))
    assert str(derive(longer, default_schedule(longer))[0]).count("map_global") == 2  # 5000 -> 157 -> 5


def test_a_constant_length_keeps_its_stages():
    # the first stage's chunks are 128 to 512 elements (default_lowering.first_chunk), later ones 32
    for n, stages in ((1000, 0), (1024, 1), (5000, 2), (1 << 20, 3), ((1 << 20) + 7, 3), (1 << 24, 3)):
        program = fl.infer(fl.fun([arr(n)], lambda xs: fl.reduce(fl.add, 0.0, xs)))
        assert str(derive(program, default_schedule(program))[0]).count("map_global") == stages, n


def test_a_map_on_a_parallel_level_as_a_maps_function_gets_its_stores():
    """`map_global 1 (map_global 0 g) xss`: the storage analysis reads g as the function each
    element runs (it used to stop at the primitive function), so the array g's map_seq
    computes and its reduction reads is stored (found by a generated sum point: "the array
    computed by map_seq_unroll is read here but the program does not say where it is stored")."""
    from functional.storage import first_need

    program = fl.infer(fl.fun([arr(4, 8, 16)], lambda x: fl.map_global(fl.map_global(
        lambda r: fl.reduce_seq(fl.add, 0.0, fl.map_seq(lambda v: v * 2.0, r)), dim=0), x, dim=1)))
    need = first_need(program)
    assert need is not None and need.rule == "materialise_private"
    low, _ = derive(program, default_schedule(program))  # the store phase applies the need
    inputs = random_inputs(program, {}, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(program, *inputs)) < TOLERANCE


def test_an_items_array_is_private_up_to_the_targets_limit():
    """The store phase keeps an item's array private up to its limit (Target.private_limit: 64 by
    default, a CPU's stack; a GPU's registers 128: a 16 x 8 register block's accumulators were
    a global temporary at 64), else gives it a slot in global memory; both compute the program."""
    from functional.default_lowering import store_where_needed
    from functional.schedules import program_body
    from functional.storage import PRIVATE_LIMIT, first_need

    program = fl.infer(fl.fun([arr(4, 128, 16)], lambda x: fl.map_global(
        lambda rows: fl.reduce_seq(fl.add, 0.0, fl.map_seq(lambda r: fl.reduce_seq(fl.add, 0.0, fl.map_seq(
            lambda v: v * 2.0, r)), rows)), x, dim=0)))
    assert first_need(program).rule == "materialise_global" and PRIVATE_LIMIT < 128
    assert first_need(program, private_limit=128).rule == "materialise_private"
    inputs = random_inputs(program, {}, 0)
    for limit, space in ((PRIVATE_LIMIT, "global float* restrict tmp"), (128, "float tmp")):
        low, _ = derive(program, program_body(store_where_needed(private_limit=limit)))
        kernel = dpia.compile(low)
        assert relative_error(kernel(*inputs), fl.interpret(program, *inputs)) < TOLERANCE
        assert space in kernel.source, kernel.source


def test_parallel_levels_never_enter_a_loop_already_on_a_parallel_level():
    """schedules.parallel (ELEVATE's) places levels on the outermost computing maps, but not
    inside the function of a map already on a parallel level: there a map is one item's code
    (reduce_tree_stage over an earlier stage's map_global put map_workgroup inside it)."""
    from functional.schedules import parallel

    program = fl.infer(fl.fun([arr(4, 8)], lambda x: fl.map_global(lambda r: fl.map(lambda v: v + 1.0, r), x)))
    levels = parallel([("map_workgroup", 0), ("map_local", 0)])
    assert "map_workgroup" not in str(levels(program.body).expr)
    outer = fl.infer(fl.fun([arr(4, 8)], lambda x: fl.map(lambda r: fl.map(lambda v: v + 1.0, r), x)))
    placed = str(levels(outer.body).expr)
    assert "map_workgroup" in placed and "map_local" in placed


@pytest.mark.parametrize("text, levels, outer_group", [
    # a group of dimension 0 alone: rows in turn, each spread over local ids 0 (a register-blocked
    # mm point of the generated space wrote its 2D block with map_local 1 there and was refused)
    ("fun(xs: 4.3.8.f32) => map_workgroup 0 (fun(m) => transpose m) xs", ("map_seq", "map_local 0"), {0}),
    ("fun(xs: 4.3.8.f32) => map_workgroup 1 (fun(m) => transpose m) xs", ("map_seq", "map_local 1"), {1}),
    ("fun(xs: 2.4.3.8.f32) => map_workgroup 1 (fun(g) => map_workgroup 0 (fun(m) => transpose m) g) xs",
     ("map_local 1", "map_local 0"), {1}),
])
def test_a_groups_copy_spreads_over_the_local_dimensions_its_groups_have(text, levels, outer_group):
    from functional.storage import enclosing_group_dims
    from functional.syntax import parse

    program = fl.infer(parse(text))
    low, _ = derive(program, default_schedule(program))
    outer, inner = levels
    assert f"transpose ({outer} (fun(x1) => {inner} (fun(x) => x) x1) m)" in str(low)
    inputs = random_inputs(program, {}, 0)
    assert relative_error(dpia.compile(low)(*inputs), fl.interpret(program, *inputs)) < TOLERANCE
    body = program.body
    assert enclosing_group_dims(body, ()) == frozenset()
    assert enclosing_group_dims(body, (0, 1, 0)) == outer_group  # the outer group's function's body
