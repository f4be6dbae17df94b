"""The exploration's algorithmic vocabulary (functional.rules.vocabulary): every macro, at
the node its random instances name and at nodes of the application suite, leaves the
interpreter's result unchanged; its `lengths` are lengths its parameters really divide; a
precondition that fails is a clean Failure.

VOCABULARY_INSTANCES sets the random instances per macro (default 12)."""

from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

import functional as fl
from functional.nat import evaluate
from functional.random_programs import random_inputs
from functional.rules.check import same_result
from functional.rules.vocabulary import MACROS, Cut, apply_at, choices, draw, sites, specialise
from functional.strategies import Failure, at_path, replace_at

INSTANCES = int(os.environ.get("VOCABULARY_INSTANCES", "12"))
NAMES = sorted(MACROS)


def _rng(name: str, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(name.encode()), salt])


def _agrees(macro, typed, path, params, inputs):
    """The macro applies at `path`, keeps the type and the interpreter's result."""
    where = f"{macro.name}({params}) at {path} of {typed}"
    result = apply_at(macro, typed, path, params)
    assert result.ok, f"{where}: does not apply: {result.reason}"
    assert result.expr.t == typed.t, f"{where}: the type changed to {result.expr.t}"
    assert fl.infer(result.expr, expected=typed.t).t == typed.t, f"{where}: re-infers differently"
    assert result.steps and all(s.path[:len(path)] == path for s in result.steps), f"{where}: steps outside the node"
    before, after = fl.interpret(typed, *inputs), fl.interpret(result.expr, *inputs)
    assert same_result(before, after, macro.exact), f"{where}: the meaning changed: {result.expr}"
    return result


def _divides(macro, node, params, sizes=None):
    spec = macro.lengths(node)
    assert spec is not None and set(spec) == set(macro.params), f"{macro.name}: lengths {spec} name other params"
    for p, target in spec.items():
        if isinstance(target, Cut):  # a cut: below the length, not a divisor (the remainder is not empty)
            n = int(evaluate(target.length, sizes or {}))
            assert params[p] < n and n % params[p], f"{macro.name}: {p} = {params[p]} does not cut the length {n}"
            continue
        n = params[target] if isinstance(target, str) else int(evaluate(target, sizes or {}))
        assert n % params[p] == 0, f"{macro.name}: {p} = {params[p]} does not divide its length {n}"


@pytest.mark.parametrize("name", NAMES)
def test_macro_preserves_meaning_on_random_instances(name):
    macro = MACROS[name]
    rng = _rng(name)
    for k in range(INSTANCES):
        program, path, params = macro.example(rng)
        typed = fl.infer(program)
        node = at_path(typed, path)
        _divides(macro, node, params)
        _agrees(macro, typed, path, params, random_inputs(typed, {}, seed=k))


@pytest.mark.parametrize("name", NAMES)
def test_every_admissible_value_applies(name):
    """At an instance's node, every combination of admissible values (divisors of the named
    lengths, with the declared restrictions) applies and keeps the meaning: the lengths are
    the right ones, not merely some multiple of them."""
    macro = MACROS[name]
    rng = _rng(name, 1)
    program, path, _ = macro.example(rng)
    typed = fl.infer(program)
    node = at_path(typed, path)
    inputs = random_inputs(typed, {}, seed=1)
    for params in _combinations(macro, node):
        _divides(macro, node, params)
        _agrees(macro, typed, path, params, inputs)


def _combinations(macro, node, drawn=None, limit=12):
    drawn = dict(drawn or {})
    todo = [p for p in macro.params if p not in drawn]
    if not todo:
        return [drawn]
    opts = choices(macro, node, {}, drawn)
    p = next(q for q in todo if q in opts)
    out = []
    for v in opts[p]:
        out.extend(_combinations(macro, node, {**drawn, p: v}, limit))
    return out[:limit]


@pytest.mark.parametrize("name", [n for n in NAMES if MACROS[n].params])
def test_a_non_divisor_is_a_clean_failure(name):
    macro = MACROS[name]
    program, path, params = macro.example(_rng(name, 2))
    typed = fl.infer(program)
    node = at_path(typed, path)
    spec = macro.lengths(node)
    p, target = next((p, t) for p, t in spec.items() if not isinstance(t, str))
    n = int(evaluate(target.length if isinstance(target, Cut) else target, {}))
    bad = dict(params, **{p: n + 1})  # larger than the length: divides nothing, cuts nothing
    result = macro.strategy(**bad)(node)
    assert isinstance(result, Failure) and macro.name in result.reason


@pytest.mark.parametrize("name", NAMES)
def test_wrong_node_is_a_clean_failure(name):
    """At the program's root (a function) and at a scalar no macro applies: a Failure."""
    macro = MACROS[name]
    program, _, params = macro.example(_rng(name, 3))
    typed = fl.infer(program)
    for node in (typed, fl.infer(fl.fun([fl.f32], lambda x: x * 2.0)).body):
        assert macro.lengths(node) is None
        result = macro.strategy(**params)(node)
        assert isinstance(result, Failure) and macro.name in result.reason


def _non_monoid(op_kind: str):
    """Reductions whose operator is not associative, or whose initial value is not neutral."""
    if op_kind == "minus":
        return fl.fun([fl.array(8, fl.f32)], lambda xs: fl.reduce(lambda a, b: a - b, 0.0, xs))
    return fl.fun([fl.array(8, fl.f32)], lambda xs: fl.reduce(fl.add, 1.0, xs))


REORDERING = {  # macros that reorder a reduction, with parameters valid at an 8-element reduction
    "reduce_split": {"n": 2}, "reduce_two_stage": {"n": 2}, "reduce_tree": {"block": 8, "local": 2},
    "reduce_vectorize": {"w": 4}, "reduce_vectorize_two_stage": {"n": 4, "w": 2},
}


@pytest.mark.parametrize("name", sorted(REORDERING))
@pytest.mark.parametrize("op_kind", ["minus", "not_neutral"])
def test_reordering_a_reduction_needs_a_monoid(name, op_kind):
    typed = fl.infer(_non_monoid(op_kind))
    node = typed.body
    assert MACROS[name].lengths(node) is not None  # the shape matches; the algebra refuses
    result = MACROS[name].strategy(**REORDERING[name])(node)
    assert isinstance(result, Failure), result


def test_split_k_needs_a_monoid():
    program = fl.fun([fl.array(4, fl.array(6, fl.f32))], lambda a: fl.map(
        lambda row: fl.reduce(lambda x, y: x - y, 0.0, row), a))
    typed = fl.infer(program)
    assert isinstance(MACROS["split_k"].strategy(n=2)(typed.body), Failure)


def test_split_k_computes_every_elements_chunks_first():
    """The chunks' partial reductions of every row come first, as a map over the chunks of maps
    over the rows (a 2D grid, each chunk computing its own products: nothing of the map is
    stored), then each row's partials are reduced; a reduction inside arithmetic (A^T x + y)
    is split the same way, the rest of the function kept."""
    program = fl.fun([fl.array(4, fl.array(6, fl.f32)), fl.array(6, fl.f32)], lambda a, x: fl.map(
        lambda row: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(row, x))), a))
    typed = fl.infer(program)
    result = MACROS["split_k"].strategy(n=2)(typed.body.body)
    assert result.ok, result.reason
    text = str(result.expr)
    assert text.startswith("let (map (fun(k) => map (fun(") and "(at (split 2" in text and "generate 3" in text, text
    assert "reduce (+) 0.0 (fst q" in text and "transpose" in text, text
    gemv_t = fl.fun([fl.array(6, fl.array(4, fl.f32)), fl.array(6, fl.f32), fl.array(4, fl.f32)],
                    lambda a, x, y: fl.map(lambda p: 2.0 * fl.reduce(fl.add, 0.0, fl.map(
                        lambda q: fl.fst(q) * fl.snd(q), fl.zip(fl.fst(p), x))) + fl.snd(p), fl.zip(fl.transpose(a), y)))
    typed = fl.infer(gemv_t)
    node = typed.body.body.body
    assert MACROS["split_k"].lengths(node) == {"n": 6}
    result = MACROS["split_k"].strategy(n=3)(node)
    assert result.ok, result.reason
    text = str(result.expr)
    assert "2.0 * reduce (+) 0.0 (fst q" in text and "+ snd (snd q" in text and "split 3" in text, text
    rng = np.random.default_rng(1)
    inputs = (rng.standard_normal((6, 4), dtype=np.float32), rng.standard_normal(6, dtype=np.float32),
              rng.standard_normal(4, dtype=np.float32))
    rewritten = fl.infer(replace_at(typed, (0, 0, 0), result.expr))
    np.testing.assert_allclose(fl.interpret(rewritten, *inputs), fl.interpret(typed, *inputs), rtol=1e-5, atol=1e-6)


def test_parameter_restrictions_are_clean_failures():
    typed = fl.infer(fl.fun([fl.array(12, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)))
    assert isinstance(MACROS["reduce_tree"].strategy(block=12, local=3)(typed.body), Failure)  # not 2^k
    assert isinstance(MACROS["reduce_vectorize"].strategy(w=3)(typed.body), Failure)  # no vec3
    assert isinstance(MACROS["reduce_split"].strategy(n=0)(typed.body), Failure)
    with pytest.raises(TypeError):
        MACROS["reduce_split"].strategy(k=2)


def test_draw_respects_references_and_restrictions():
    typed = fl.infer(fl.fun([fl.array(48, fl.f32)], lambda xs: fl.reduce(fl.add, 0.0, xs)))
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = draw(MACROS["reduce_tree"], typed.body, rng)
        assert 48 % p["block"] == 0 and p["block"] % p["local"] == 0 and not p["local"] & (p["local"] - 1)
        w = draw(MACROS["reduce_vectorize_two_stage"], typed.body, rng)
        assert w is None or (48 % w["n"] == 0 and w["n"] % w["w"] == 0 and w["w"] in (2, 4, 8, 16))


# ------------------------------------------------------------------ the application suite


def _suite():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    import suite

    return suite


# each macro at programs of examples/suite.py where it applies (the first site found); the
# suite has no matrix product, so the macros for products are applied to examples/seed.py's mm
SUITE_CASES = {
    "split_join": ["scal", "black_scholes"],
    "reduce_split": ["asum", "dot"],
    "reduce_two_stage": ["asum", "dot"],
    "reduce_tree": ["asum", "dot"],
    "reduce_vectorize": ["asum", "mean_variance"],
    "reduce_vectorize_two_stage": ["mean_variance", "dot"],
    "tile_2d": ["seed:mm"],
    "tile_nest_2d": ["jacobi2d_5", "hotspot2d"],
    "tile_nest_3d": ["jacobi3d_7"],
    "stencil_tiling_1d": ["separable_conv", "seed:stencil"],
    "stencil_tiling_2d": ["jacobi2d_5", "conv2d_5x5", "stencil2d"],
    "stencil_tiling_3d": ["jacobi3d_7", "jacobi3d_27"],
    "tile_reduction": ["seed:mm"],
    "register_blocking_1d": ["seed:mm"],
    "register_blocking_2d": ["seed:mm"],
    "vectorize": ["scal", "mean_variance"],
    "interchange": ["jacobi2d_9", "hotspot2d"],
    "interchange_swap": ["seed:mm"],
    "fusion": ["jacobi2d_5"],
    "generate_reduce_fusion": ["nbody", "md"],
    "pair_reduce_fusion": ["mri_q_two_reductions"],
    "fission": ["nn"],
    "hoist_invariant": ["atax_inline"],
    "split_k": ["atax", "mri_q"],
    "split_k_nest": ["seed:mm"],
    "map_cut": ["jacobi2d_5", "hotspot2d"],  # W = 12: a row cut at 8
    "reduce_cut": ["conv2d_5x5", "separable_conv"],
    "map_cut_columns": ["jacobi2d_5", "hotspot2d"],  # W = 12 columns cut at 8
}

SUITE_SIZES = {"N": 16, "M": 8, "K": 8, "F": 4, "H": 8, "W": 12, "D": 4}


def test_every_macro_has_a_suite_case():
    assert set(SUITE_CASES) == set(MACROS)


def _specialised(app: str):
    """The application's program at the sizes SUITE_SIZES gives its size variables, and its inputs."""
    if app.startswith("seed:"):
        import seed  # examples/ is on the path once _suite() ran

        program = fl.infer(specialise(getattr(seed, app.split(":")[1]), SUITE_SIZES))
        return program, random_inputs(program, {}, seed=0)
    entry = _suite().BY_NAME[app]
    sizes = {k: SUITE_SIZES[k.upper()] for k in entry.small}  # in the order make_inputs takes them
    program = fl.infer(specialise(entry.program, {k.upper(): v for k, v in sizes.items()}))
    return program, entry.make_inputs(np.random.default_rng(0), **sizes)


@pytest.mark.parametrize("name, app", [(n, a) for n, apps in sorted(SUITE_CASES.items()) for a in apps])
def test_macro_on_the_suite(name, app):
    macro = MACROS[name]
    _suite()
    typed, inputs = _specialised(app)
    rng = _rng(name + app)
    for path in sites(macro, typed):
        node = at_path(typed, path)
        for _ in range(3):
            params = draw(macro, node, rng, exclude={p: (1,) for p in macro.params}) or draw(macro, node, rng)
            if params is not None and macro.strategy(**params)(node).ok:
                _divides(macro, node, params)
                _agrees(macro, typed, path, params, inputs)
                return
    pytest.fail(f"{name} applies nowhere in {app}")


@pytest.mark.parametrize("name, params", [("tile_reduction", {"k": 2}), ("register_blocking_1d", {"l": 2})])
def test_products_with_a_non_monoid(name, params):
    """A tile product whose reduction subtracts: tiling the reduction (which regroups it) is
    refused; register blocking (which keeps each element's order) is not."""
    program = fl.fun([fl.array(4, fl.array(4, fl.f32)), fl.array(4, fl.array(4, fl.f32))], lambda xs, ys: fl.map(
        lambda a: fl.map(lambda b: fl.reduce(lambda u, v: u - v, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p),
                                                                           fl.zip(a, b))), ys), xs))
    typed = fl.infer(program)
    result = MACROS[name].strategy(**params)(typed.body.body)
    if name == "tile_reduction":
        assert isinstance(result, Failure) and "associative" in result.reason, result
    else:
        assert result.ok, result.reason
        _agrees(MACROS[name], typed, (0, 0), params, random_inputs(typed, {}, seed=0))


def test_chunked_vectors_of_a_dot_product_read_both_arrays_as_vectors_and_store_no_products():
    """reduce_vectorize_two_stage on `reduce (+) 0 (map (*) (zip xs ys))`: the products are
    computed on w-wide vectors of xs and ys in chunks of n / w vectors (reduce_vectorize_map,
    then the chunks), not stored in an array first and read back as vectors (the chunked sum
    did that on a dot product: 76 ms against 15 on PoCL at 2^24).  Same results."""
    n = 256
    dot = fl.fun([fl.array(n, fl.f32), fl.array(n, fl.f32)],
                 lambda xs, ys: fl.reduce(fl.add, 0.0, fl.map(lambda p: fl.fst(p) * fl.snd(p), fl.zip(xs, ys))))
    typed = fl.infer(dot)
    result = MACROS["reduce_vectorize_two_stage"].strategy(n=64, w=8)(typed.body.body)
    assert result.ok, result.reason
    text = str(result.expr)
    assert "split 8 (zip (as_vector 8 xs) (as_vector 8 ys))" in text and "as_vector 8 (" not in text, text
    rng = np.random.default_rng(0)
    inputs = (rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32))
    rewritten = fl.infer(replace_at(typed, (0, 0), result.expr))
    np.testing.assert_allclose(fl.interpret(rewritten, *inputs), fl.interpret(typed, *inputs), rtol=1e-4, atol=1e-5)
