"""Every rule in the catalogue, checked against the reference interpreter.

For each rule (the registry is walked, so rules added later are covered without touching
this file) random instances from `rule.example(rng)` are rewritten with
`top_down(rule.strategy(**params))`; the rule must apply, keep the program's type, and
leave its meaning unchanged: bit-for-bit for `exact` rules, within rtol = atol = 1e-4 for
rules that re-associate floating-point operations.

RULE_INSTANCES sets the number of instances per rule (default 25, which keeps the suite
fast).  The thorough run:

    RULE_INSTANCES=200 pytest tests/functional/test_rules.py

RULE_SEED shifts the random seeds (each rule's seed is otherwise fixed by its name, so a
failure reproduces).
"""

from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

import functional as fl
from functional import rules
from functional.rules import RULES
from functional.rules.check import same_result
from functional.rules.core import match
from functional.strategies import Failure, top_down
from functional.types import array, f32

INSTANCES = int(os.environ.get("RULE_INSTANCES", "25"))
SEED = int(os.environ.get("RULE_SEED", "0"))
NAMES = sorted(RULES)


def _rng(name: str, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(name.encode()), SEED, salt])


@pytest.mark.parametrize("name", NAMES)
def test_rule_preserves_meaning(name):
    r = RULES[name]
    assert r.example is not None, f"rule {name} has no example generator: every rule must be checkable"
    rng = _rng(name)
    for k in range(INSTANCES):
        program, inputs, params = r.example(rng)
        typed = fl.infer(program)
        result = top_down(r.strategy(**params))(typed)
        where = f"rule {name}, instance {k}: {program} with {params}"
        assert result.ok, f"{where}: does not apply: {result.reason}"
        assert result.expr.t == typed.t, f"{where}: the type changed to {result.expr.t}"
        # inferred afresh (point-free results need the expected type to fix their sizes)
        assert fl.infer(result.expr, expected=typed.t).t == typed.t, f"{where}: {result.expr} re-infers differently"
        assert result.steps and result.steps[0].rule == name, f"{where}: the derivation does not record the rule"
        before = fl.interpret(typed, *inputs)
        after = fl.interpret(result.expr, *inputs)
        assert same_result(before, after, r.exact), (
            f"{where}: the meaning changed\n  after:  {result.expr}\n  before: {before!r}\n  now:    {after!r}")


# ------------------------------------------------------------------- where rules fail


def _probe_programs(name: str) -> list:
    """Typed programs whose every subterm is a place to try a rule: a few fixed ones, the
    rule's own example and the examples of a few other rules."""
    progs = [
        fl.fun([array(4, f32)], lambda xs: xs),
        fl.fun([f32], lambda x: x * 2.0 + 1.0),
        fl.fun([array(8, f32)], lambda xs: fl.reduce(fl.add, 0.0, fl.map(lambda x: fl.abs(x), xs) >> fl.split(4)
                                                    >> fl.map(fl.reduce(fl.max, -1e30)))),
        fl.fun([array(4, array(6, f32)), array(4, f32)],
               lambda xss, ys: fl.zip(fl.map(fl.reduce(fl.add, 0.0), fl.transpose(fl.slide(2, 2, fl.transpose(xss))
                                                                                   >> fl.join)), ys)),
    ]
    rng = _rng(name, 1)
    others = [NAMES[int(k)] for k in rng.integers(0, len(NAMES), 3)]
    progs += [RULES[n].example(rng)[0] for n in [name] + others if RULES[n].example is not None]
    return [fl.infer(p) for p in progs]


def _subterms(e):
    yield e
    for c in e.children():
        yield from _subterms(c)


@pytest.mark.parametrize("name", NAMES)
def test_rule_fails_cleanly_where_it_does_not_match(name):
    """Wherever a rule's pattern does not match (or its side condition fails) applying it
    gives a Failure whose reason names the rule: never an exception."""
    r = RULES[name]
    assert r.example is not None, f"rule {name} has no example generator"
    _, _, params = r.example(_rng(name, 2))
    strategy = r.strategy(**params)
    for prog in _probe_programs(name):
        nowhere = True
        for node in _subterms(prog):
            result = strategy(node)  # an exception here fails the test
            if not result.ok:
                assert name in result.reason, f"rule {name} at {node}: the reason {result.reason!r} does not name it"
            matches = match(r.lhs, node, {})
            nowhere = nowhere and not matches
            if not matches:
                assert not result.ok, f"rule {name} applied where its pattern does not match: {node}"
        if nowhere:  # a whole program where it applies nowhere: top_down says so, naming the rule
            result = top_down(strategy)(prog)
            assert isinstance(result, Failure) and name in result.reason


@pytest.mark.parametrize("name, program, params", [
    ("split_join", lambda: fl.fun([array(6, f32)], lambda xs: fl.map(fl.neg, xs)), {"n": 4}),
    ("slide_tiling", lambda: fl.fun([array(10, f32)], lambda xs: fl.slide(3, 1, xs)), {"u": 6, "v": 3}),
    ("slide_tiling", lambda: fl.fun([array(11, f32)], lambda xs: fl.slide(3, 1, xs)), {"u": 6, "v": 4}),
    ("slide_tiling", lambda: fl.fun([array(9, f32)], lambda xs: fl.slide(3, 2, xs)), {"u": 4, "v": 3}),
    ("slide_untiling", lambda: fl.fun([array(9, f32)], lambda xs: fl.join(fl.map(fl.slide(3, 1), fl.slide(6, 3, xs)))),
     {}),
    ("slide_split", lambda: fl.fun([array(10, f32)], lambda xs: fl.slide(3, 1, xs)), {}),
    ("map_transpose", lambda: fl.fun([array(3, array(4, f32))],
                                     lambda xss: fl.map(fl.reduce(fl.add, 0.0), fl.transpose(xss))), {}),
    ("map_zip_fst", lambda: fl.fun([array(3, f32), array(3, f32)],
                                   lambda xs, ys: fl.map(lambda p: fl.fst(p) + fl.snd(p), fl.zip(xs, ys))), {}),
    ("drop_slide", lambda: fl.fun([array(2 * fl.nat("N"), f32)], lambda xs: fl.drop(1, fl.slide(2, 2, xs))), {}),
    ("take_concat", lambda: fl.fun([array(3, f32), array(4, f32)], lambda xs, ys: fl.take(2, fl.concat(xs, ys))), {}),
    # overlapped 2D / 3D tiling: windows per tile that do not divide the window count (4 per dimension)
    ("slide_2d_tiling", lambda: fl.fun([array(6, array(6, f32))], lambda xss: fl.map(fl.map(lambda w: w[0][0] + w[2][2]),
                                       fl.map(fl.transpose, fl.slide(3, 1, fl.map(fl.slide(3, 1), xss))))),
     {"j1": 3, "j2": 2}),
    ("slide_3d_tiling", lambda: fl.fun([array(6, array(6, array(6, f32)))], lambda x: fl.map(
        fl.map(fl.map(lambda w: w[0][0][0])), fl.map(lambda b: fl.map(fl.transpose, fl.transpose(b)), fl.slide(3, 1, fl.map(
            lambda p: fl.map(fl.transpose, fl.slide(3, 1, fl.map(fl.slide(3, 1), p))), x))))), {"j1": 2, "j2": 2, "j3": 3}),
    # reduce_vectorize: z not neutral, an operator without a vector form, a length w does not divide
    ("reduce_vectorize", lambda: fl.fun([array(8, f32)], lambda xs: fl.reduce(fl.add, 1.0, xs)), {"w": 4}),
    ("reduce_vectorize", lambda: fl.fun([array(8, f32)], lambda xs: fl.reduce(fl.sub, 0.0, xs)), {"w": 4}),
    ("reduce_vectorize", lambda: fl.fun([array(fl.nat("N", multiple_of=4), f32)],
                                        lambda xs: fl.reduce(fl.add, 0.0, xs)), {"w": 8}),
])
def test_side_condition_failure_names_the_rule(name, program, params):
    result = top_down(RULES[name].strategy(**params))(fl.infer(program()))
    assert isinstance(result, Failure), f"{name} applied: {getattr(result, 'expr', None)}"
    assert name in result.reason


def test_tiling_side_condition_is_exact():
    """slide_tiling applies for exactly the (u, v) with v = u - n + s (and the tiles fitting),
    and then always preserves the meaning: an exhaustive sweep over small sizes."""
    r = RULES["slide_tiling"]
    rng = np.random.default_rng(7)
    for n in range(1, 4):
        for s in range(1, 4):
            for windows in range(1, 6):
                length = s * (windows - 1) + n
                prog = fl.infer(_slide_program(length, n, s))
                xs = rng.standard_normal(length).astype(np.float32)
                for u in range(1, length + 1):
                    for v in range(1, length + 1):
                        result = r.strategy(u=u, v=v)(prog.body)
                        fits = v == u - n + s and u >= n and (u - n) % s == 0 and (length - u) % v == 0
                        assert result.ok == fits, (n, s, length, u, v, getattr(result, "reason", None))
                        if fits:
                            rewritten = attrs_evolve_body(prog, result.expr)
                            assert np.array_equal(fl.interpret(prog, xs), fl.interpret(rewritten, xs))


def _slide_program(length, n, s):
    return fl.fun([array(length, f32)], lambda xs: fl.slide(n, s, xs))


def attrs_evolve_body(prog, body):
    import attrs

    return attrs.evolve(prog, body=body)


# --------------------------------------------------------------------- the catalogue


def test_catalogue_lists_every_rule_checked():
    cat = rules.catalogue()
    assert sorted(c["name"] for c in cat) == NAMES
    unchecked = [c["name"] for c in cat if not c["checked"]]
    assert not unchecked, f"rules without an example generator: {unchecked}"
    for c in cat:
        assert c["equation"] and "->" in c["equation"], c
        assert c["family"], c


# --------------------------------------------------------------------- parameter errors


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_is_a_type_error(name):
    with pytest.raises(TypeError, match=name):
        RULES[name].strategy(no_such_parameter=1)


@pytest.mark.parametrize("name", [n for n in NAMES if len(RULES[n].params) > len(RULES[n].defaults)])
def test_missing_parameter_is_a_type_error(name):
    with pytest.raises(TypeError, match=name):
        RULES[name].strategy()


def test_parameters_positionally_and_by_name():
    r = RULES["split_join"]
    with pytest.raises(TypeError):
        r.strategy(m=2)
    with pytest.raises(TypeError):
        r(2, n=2, w=3)
    prog = fl.infer(fl.fun([array(8, f32)], lambda xs: fl.map(fl.neg, xs)))
    assert top_down(r(4))(prog).ok


@pytest.mark.no_typing_memo
def test_retyping_is_memoised_on_the_term_as_written():
    """retype's memo (functional.rules.core) keys on Expr.exact_key: a term equal up to
    renaming, or with other provenance, is inferred on its own and keeps its own names and
    origins; the same term in the same place is inferred once."""
    import attrs

    from functional.errors import TypeInferenceError
    from functional.expr import walk
    from functional.infer import typing_memo
    from functional.rules.core import retype

    old = fl.infer(fl.parse("fun(xs: 16.f32) => map (fun(a) => a * 2.0) xs")).body
    renamed = fl.parse("fun(xs: 16.f32) => map (fun(b) => b * 2.0) xs").body
    elsewhere = attrs.evolve(renamed, origin="another place")
    first, second = retype(renamed, old), retype(elsewhere, old)
    assert renamed == old and renamed.exact_key != old.exact_key and elsewhere.exact_key != renamed.exact_key
    assert str(retype(old, old)) == str(old) and str(first) == str(second) == "map (fun(b) => b * 2.0) xs"
    assert first.origin == renamed.origin != "another place" and second.origin == "another place"
    assert all(n.t is not None for n in walk(first)) and first.t == old.t
    again = fl.parse("fun(xs: 16.f32) => map (fun(b) => b * 2.0) xs").body  # a new object, as written
    assert retype(again, old) is not first  # outside a typing_memo block nothing is remembered
    with typing_memo() as memo:
        first = retype(renamed, old)
        remembered = len(memo)
        assert retype(again, old) is first and len(memo) == remembered
    assert retype(again, old) is not first  # the memo went with the block
    scalar = fl.infer(fl.parse("fun(xs: 16.f32) => reduce (+) 0.0 xs")).body  # an array where a scalar stood
    with typing_memo():
        for _ in range(2):  # failures are not remembered: raised each time
            with pytest.raises(TypeInferenceError):
                retype(renamed, scalar)
