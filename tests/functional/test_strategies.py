"""The strategy core (ELEVATE): combinators, traversals, locations, fuel, paths, depth.

* `id`, `fail`, `seq`/`>>`, `lchoice`/`|`, `try_`, `repeat` (with fuel), `all_`/`one`/`some`.
* `top_down` rewrites the first place in pre-order, `bottom_up` the first in post-order,
  `position(n)` the n-th in pre-order; `normalize` rewrites until nothing applies.
* `body`, `function`, `argument`, `fmap` reach into lambdas, applications and maps.
* Failure reasons name the strategy that failed.
* Every step's path is checked by replaying the steps (`Derivation.replay`) from the
  original program: the replay must reproduce the strategy's result.
* Programs of thousands of nodes (a 3000-deep scalar chain, 2000 nested maps) go through
  infer / str / parse / interpret / top_down / bottom_up / normalize / position without
  hitting Python's recursion limit.
"""

from __future__ import annotations

import numpy as np
import pytest

import functional as fl
from functional.derivation import Derivation
from functional.errors import StrategyError
from functional.expr import App, Identifier, Lambda, Literal, Prim, size, spine
from functional.rules import RULES
from functional.strategies import (
    Failure, Step, Strategy, Success, all_, apply_strategy, argument, at_path, body, bottom_up, fail, fmap, function,
    identity, lchoice, normalize, one, position, repeat, seq, some, top_down, try_,
)
from functional.types import array, f32

fusion = RULES["map_fusion"].strategy()
to_seq = RULES["lower_map_seq"].strategy()
beta = RULES["beta"].strategy()


def three_maps():
    """fun(xs: 8.f32) => map neg (map abs (map (fun(x) => x * 2.0) xs))

    paths: (0,) the outer map, (0, 0) `map neg`, (0, 1) the middle map, (0, 1, 1) the inner."""
    return fl.infer(fl.fun([array(8, f32)], lambda xs: fl.map(fl.neg, fl.map(fl.abs, fl.map(lambda x: x * 2.0, xs)))))


def maps(k: int, n: int = 8):
    def step(j: int):
        return lambda x: x * 2.0 + float(j)

    def chain(xs):
        for j in range(k):
            xs = fl.map(step(j), xs)
        return xs

    return fl.infer(fl.fun([array(n, f32)], chain))


def replays(program, result: Success):
    """The steps, replayed from the program (through the text form), give the same result."""
    assert result.ok, result.reason
    d = Derivation(program, result.steps)
    assert d.replay() == result.expr
    assert Derivation.from_text(d.to_text()).replay() == result.expr
    return result


def paths(result) -> list[tuple[int, ...]]:
    return [s.path for s in result.steps]


def same_meaning(a, b, *inputs):
    np.testing.assert_array_equal(fl.interpret(a, *inputs), fl.interpret(b, *inputs))


def marker(pred, name: str) -> Strategy:
    """Succeeds (changing nothing) where `pred` holds, recording a step named `name`."""
    return Strategy(name, lambda e: Success(e, (Step(name, (), ()),)) if pred(e) else Failure(f"{name}: no"))


def preorder(e, s) -> list[tuple[int, ...]]:
    """The paths where `s` applies, parents before children (an independent recursive walk)."""
    return _places(e, s, post=False)


def postorder(e, s) -> list[tuple[int, ...]]:
    return _places(e, s, post=True)


def _places(e, s, post: bool) -> list[tuple[int, ...]]:
    out, path = [], []

    def go(x):
        if not post and s(x).ok:
            out.append(tuple(path))
        for k, c in enumerate(x.children()):
            path.append(k)
            go(c)
            path.pop()
        if post and s(x).ok:
            out.append(tuple(path))

    go(e)
    return out


# ------------------------------------------------------------------------------ basics


def test_id_and_fail():
    p = three_maps()
    r = identity(p)
    assert r.ok and r.expr is p and r.steps == ()
    r = fail(p)
    assert isinstance(r, Failure) and not r.ok and r.reason == "fail"
    assert str(identity) == "id" and str(fail) == "fail"


def test_seq_and_rshift():
    p = three_maps()
    r = replays(p, (top_down(fusion) >> top_down(fusion))(p))
    assert paths(r) == [(0,), (0,)] and [s.rule for s in r.steps] == ["map_fusion"] * 2
    assert seq(top_down(fusion), top_down(fusion))(p) == r
    assert (identity >> identity)(p).expr is p
    r = (top_down(fusion) >> top_down(fusion) >> top_down(fusion))(p)
    assert not r.ok
    assert r.reason.startswith("top_down(map_fusion): ") and "applies nowhere" in r.reason
    r = (identity >> fail >> top_down(fusion))(p)
    assert not r.ok and r.reason.endswith("fail: fail")
    assert str(top_down(fusion) >> fail) == "top_down(map_fusion) >> fail"


def test_lchoice_and_or():
    p = three_maps()
    assert (fail | identity)(p).expr is p
    r = (top_down(fusion) | top_down(to_seq))(p)
    assert [s.rule for s in r.steps] == ["map_fusion"]
    r = lchoice(top_down(RULES["transpose_transpose"].strategy()), top_down(to_seq))(p)
    assert [s.rule for s in r.steps] == ["lower_map_seq"]
    r = (body(fail) | function(identity))(p)
    assert not r.ok
    assert "body(fail)" in r.reason and "function(id): not an application" in r.reason
    assert str(fail | identity) == "(fail | id)"


def test_try():
    p = three_maps()
    r = try_(fail)(p)
    assert r.ok and r.expr is p and r.steps == ()
    r = try_(top_down(fusion))(p)
    assert paths(r) == [(0,)]
    assert str(try_(fail)) == "try(fail)"


def test_apply_strategy():
    untyped = fl.fun([array(8, f32)], lambda xs: fl.map(fl.neg, fl.map(fl.abs, xs)))
    r = apply_strategy(top_down(fusion), untyped)
    assert r.expr.t is not None and paths(r) == [(0,)]
    with pytest.raises(StrategyError, match="top_down\\(lower_reduce_seq\\): applies nowhere"):
        apply_strategy(top_down(RULES["lower_reduce_seq"].strategy()), untyped)


# ------------------------------------------------------------------------------ repeat


def test_repeat_until_failure():
    p = three_maps()
    r = replays(p, repeat(top_down(fusion))(p))
    assert len(r.steps) == 2
    assert not top_down(fusion)(r.expr).ok
    same_meaning(p, r.expr, np.linspace(-2, 2, 8, dtype=np.float32))
    r = repeat(fail)(p)  # zero applications is fine
    assert r.ok and r.expr is p and r.steps == ()


def test_repeat_fuel_counts_applications():
    p = three_maps()  # map_fusion applies exactly twice
    assert len(repeat(top_down(fusion), fuel=2)(p).steps) == 2
    r = repeat(top_down(fusion), fuel=1)(p)
    assert not r.ok and "ran out of fuel after 1" in r.reason


def test_a_looping_strategy_runs_out_of_fuel():
    r = repeat(identity, fuel=7)(three_maps())
    assert isinstance(r, Failure)
    assert r.reason == "repeat(id) ran out of fuel after 7 applications (does it loop?)"
    # a real rewrite that always applies again (each split-join makes new maps)
    grow = top_down(RULES["split_join"].strategy(n=1))
    r = repeat(grow, fuel=4)(maps(1, 4))
    assert not r.ok and "ran out of fuel after 4" in r.reason and "split_join" in r.reason
    r = normalize(RULES["split_join"].strategy(n=1), fuel=3)(maps(1, 4))
    assert not r.ok and "ran out of fuel after 3" in r.reason


# ---------------------------------------------------------------------- one-level traversals


def test_all():
    p = three_maps()
    body_ = at_path(p, (0,))
    # both children of the outer application: `map neg` and the middle map
    r = all_(top_down(to_seq))(body_)
    assert paths(r) == [(0,), (1,)]
    r = replays(p, body(all_(top_down(to_seq)))(p))
    assert paths(r) == [(0, 0), (0, 1)]
    head, args = spine(r.expr.body)
    assert head.name == "map_seq" and spine(args[1])[0].name == "map_seq"
    r = all_(fusion)(body_)
    assert not r.ok and r.reason.startswith("all(map_fusion): child 0: map_fusion")
    # a leaf has no children: all succeeds vacuously
    assert all_(fail)(Identifier("x")).ok and all_(fail)(Prim("map")).ok


def test_one():
    p = three_maps()
    r = replays(p, body(one(top_down(to_seq)))(p))
    assert paths(r) == [(0, 0)]  # the first child only
    r = replays(p, body(one(fusion))(p))
    assert paths(r) == [(0, 1)]  # child 0 (`map neg`) does not fuse; child 1 does
    r = one(identity)(Identifier("x"))
    assert not r.ok and r.reason == "one(id): no child where it applies"


def test_some():
    p = three_maps()
    r = replays(p, body(some(top_down(to_seq)))(p))
    assert paths(r) == [(0, 0), (0, 1)]
    r = replays(p, body(some(fusion))(p))
    assert paths(r) == [(0, 1)]
    r = body(some(RULES["lower_reduce_seq"].strategy()))(p)
    assert not r.ok and "some(lower_reduce_seq): no child where it applies" in r.reason


# ------------------------------------------------------------------------ full traversals


def test_top_down_rewrites_the_outer_place_bottom_up_the_inner():
    p = three_maps()
    td = replays(p, top_down(fusion)(p))
    bu = replays(p, bottom_up(fusion)(p))
    assert paths(td) == [(0,)] and paths(bu) == [(0, 1)]
    assert td.expr != bu.expr
    # outer: map (neg . abs) (map (*2) xs);  inner: map neg (map (abs . *2) xs)
    assert spine(at_path(td.expr, (0, 1)))[0].name == "map" and isinstance(at_path(td.expr, (0, 0, 1)), Lambda)
    assert at_path(bu.expr, (0, 0, 1)) == fl.neg and isinstance(at_path(bu.expr, (0, 1, 0, 1)), Lambda)
    x = np.linspace(-3, 3, 8, dtype=np.float32)
    same_meaning(p, td.expr, x)
    same_meaning(p, bu.expr, x)


def test_traversal_order_on_structure():
    """top_down / bottom_up / position agree with independent pre- and post-order walks."""
    p = fl.infer(fl.fun([f32, f32], lambda x, y: ((x + 1.0) * (y + 2.0)) + ((x + 3.0) + (y * 4.0))))
    for name, pred in [
        ("add", lambda e: isinstance(e, App) and spine(e)[0] == fl.add and len(spine(e)[1]) == 2),
        ("lit", lambda e: isinstance(e, Literal)),
        ("app", lambda e: isinstance(e, App)),
        ("lam", lambda e: isinstance(e, Lambda)),
    ]:
        s = marker(pred, name)
        pre, post = preorder(p, s), postorder(p, s)
        assert paths(top_down(s)(p)) == [pre[0]]
        assert paths(bottom_up(s)(p)) == [post[0]]
        for k, path in enumerate(pre):
            assert paths(position(k, s)(p)) == [path]
        r = position(len(pre), s)(p)
        assert not r.ok and r.reason == f"position({len(pre)}, {name}): applies at only {len(pre)} place(s)"
    s = marker(lambda e: isinstance(e, App) and spine(e)[0] == fl.add and len(spine(e)[1]) == 2, "add")
    assert paths(top_down(s)(p)) == [(0, 0)]  # the outer sum
    assert paths(bottom_up(s)(p)) == [(0, 0, 0, 1, 0, 1)]  # x + 1.0, the innermost first sum


def test_traversals_fail_with_the_strategy_name():
    p = three_maps()
    nowhere = RULES["lower_reduce_seq"].strategy()
    assert top_down(nowhere)(p).reason == "top_down(lower_reduce_seq): applies nowhere"
    assert bottom_up(nowhere)(p).reason == "bottom_up(lower_reduce_seq): applies nowhere"
    assert "position(0, lower_reduce_seq)" in position(0, nowhere)(p).reason


def test_position():
    p = three_maps()
    assert position(0, fusion)(p) == top_down(fusion)(p)
    r = replays(p, position(1, fusion)(p))
    assert paths(r) == [(0, 1)]
    # lower_map_seq matches both `map f xs` and its partial `map f`: 6 places in pre-order
    expected = [(0,), (0, 0), (0, 1), (0, 1, 0), (0, 1, 1), (0, 1, 1, 0)]
    assert preorder(p, to_seq) == expected
    for k, path in enumerate(expected):
        assert paths(replays(p, position(k, to_seq)(p))) == [path]
    assert not position(6, to_seq)(p).ok


def test_normalize():
    p = maps(5)
    r = replays(p, normalize(fusion)(p))
    assert len(r.steps) == 4 and all(s.path == (0,) for s in r.steps)
    assert not top_down(fusion)(r.expr).ok
    head, args = spine(r.expr.body)
    assert head.name == "map" and isinstance(args[1], Identifier)
    same_meaning(p, r.expr, np.linspace(-1, 1, 8, dtype=np.float32))
    # nothing to do: success, no steps
    r = normalize(RULES["lower_reduce_seq"].strategy())(p)
    assert r.ok and r.expr is p and r.steps == ()
    # every map lowered, saturated and partial alike, then nothing is left
    r = replays(p, normalize(to_seq)(p))
    assert "map " not in str(r.expr) and str(r.expr).count("map_seq") == 5


# ------------------------------------------------------------------------------ locations


def test_body():
    p = three_maps()
    r = replays(p, body(fusion)(p))
    assert paths(r) == [(0,)]
    r = body(fusion)(p.body)
    assert not r.ok and r.reason == "body(map_fusion): not a function"
    r = body(fail)(p)
    assert not r.ok and r.reason == "body(fail): fail"
    # size binders are functions too
    N = fl.nat("N")
    q = fl.infer(fl.fun([array(N, f32)], lambda xs: fl.map(fl.neg, fl.map(fl.abs, xs))))
    r = replays(q, body(body(fusion))(q))
    assert paths(r) == [(0, 0)]


def test_function_and_argument():
    p = three_maps()
    r = replays(p, body(argument(fusion))(p))
    assert paths(r) == [(0, 1)]
    r = replays(p, body(function(to_seq))(p))
    assert paths(r) == [(0, 0)] and spine(r.expr.body)[0].name == "map_seq"
    r = replays(p, body(argument(argument(to_seq)))(p))
    assert paths(r) == [(0, 1, 1)]
    assert function(identity)(p).reason == "function(id): not an application"
    assert argument(identity)(p).reason == "argument(id): not an application"
    r = body(argument(function(fusion)))(p)
    assert not r.ok and r.reason.startswith("body(argument(function(map_fusion))): argument(function(map_fusion)): ")


def test_fmap():
    # inside a lambda: fmap reaches its body
    p = fl.infer(fl.fun([array(4, array(8, f32))],
                        lambda xss: fl.map(lambda xs: fl.map(fl.neg, fl.map(fl.abs, xs)), xss)))
    r = replays(p, body(fmap(fusion))(p))
    assert paths(r) == [(0, 0, 1, 0)]
    same_meaning(p, r.expr, np.arange(32, dtype=np.float32).reshape(4, 8) - 16)
    # a function that is not a lambda: fmap works on it directly
    q = fl.infer(fl.fun([array(4, array(8, f32))], lambda xss: fl.map(fl.map(fl.neg), xss)))
    r = replays(q, body(fmap(to_seq))(q))
    assert paths(r) == [(0, 0, 1)]
    assert str(r.expr).endswith("map (map_seq neg) xss")
    # the partial `map f`, and lowered maps
    r = replays(q, body(function(fmap(to_seq)))(q))
    assert paths(r) == [(0, 0, 1)]
    lowered = apply_strategy(body(to_seq), q).expr
    r = replays(lowered, body(fmap(to_seq))(lowered))
    assert str(r.expr).endswith("map_seq (map_seq neg) xss")
    # not a map
    assert body(fmap(identity))(fl.infer(fl.fun([f32], lambda x: x + 1.0))).reason == "body(fmap(id)): fmap(id): not a map"
    assert fmap(identity)(Prim("map")).reason == "fmap(id): not a map"
    r = body(fmap(fusion))(q)
    assert not r.ok and "fmap(map_fusion): map_fusion: does not match" in r.reason
    # a variable that happens to be called `map` is not the primitive
    fake = App(App(Identifier("map"), Lambda(Identifier("x"), Identifier("x"))), Identifier("ys"))
    assert not fmap(identity)(fake).ok


def test_nested_locations_compose_paths():
    """A strategy deep inside locations and traversals: the recorded paths replay."""
    p = fl.infer(fl.fun([array(4, array(8, f32))],
                        lambda xss: fl.map(lambda xs: fl.map(fl.neg, fl.map(fl.abs, fl.map(fl.neg, xs))),
                                           fl.map(fl.map(fl.abs), fl.map(fl.map(fl.neg), xss)))))
    s = body(fmap(normalize(fusion)) >> argument(top_down(fusion)) >> top_down(to_seq) >> try_(bottom_up(to_seq)))
    r = replays(p, s(p))
    assert [st.rule for st in r.steps] == ["map_fusion"] * 3 + ["lower_map_seq"] * 2
    same_meaning(p, r.expr, np.arange(32, dtype=np.float32).reshape(4, 8) - 10)


# ------------------------------------------------------------------------- big programs


def scalar_chain(depth: int):
    def chain(x):
        for _ in range(depth):
            x = x + 1.0
        return x

    return fl.fun([f32], chain)


def test_deep_scalar_chain():
    """depth 3000 (about 15000 nodes): every pass is iterative or within the raised limit."""
    p = scalar_chain(3000)
    typed = fl.infer(p)
    assert str(typed.t) == "f32 -> f32"
    text = str(typed)
    assert fl.parse(text) == p
    assert fl.interpret(typed, np.float32(0.5)) == np.float32(3000.5)
    x = marker(lambda e: isinstance(e, Identifier) and e.name == "x", "x")
    deepest = preorder(typed, x)
    assert len(deepest) == 1 and deepest[0] == (0,) + (0, 1) * 3000
    assert paths(top_down(x)(typed)) == deepest
    assert paths(bottom_up(x)(typed)) == deepest
    assert paths(position(0, x)(typed)) == deepest
    assert not position(1, x)(typed).ok
    r = normalize(renamer("x", "y"))(typed)
    assert r.ok and len(r.steps) == 1 and r.steps[0].path == deepest[0]
    assert str(r.expr).startswith("fun(x: f32) => y + 1.0 + 1.0")


def renamer(old: str, new: str) -> Strategy:
    def run(e):
        if isinstance(e, Identifier) and e.name == old:
            return Success(Identifier(new), (Step("rename", (), ()),))
        return Failure("rename: no")

    return Strategy("rename", run)


def test_deep_beta_chain_rewrites_and_replays():
    """600 nested redexes (fun(y) => y * 2.0) (...), about 4000 nodes: bottom_up reduces the
    innermost one, whose path is 600 steps long; the step replays."""

    def chain(x):
        for _ in range(600):
            x = fl.apply(fl.lam(lambda y: y * 2.0), x)
        return x

    p = fl.fun([f32], chain)
    typed = fl.infer(p)
    r = replays(p, bottom_up(beta)(typed))
    assert paths(r) == [(0,) + (1,) * 599]
    r2 = top_down(beta)(typed)
    assert paths(r2) == [(0,)]
    assert fl.interpret(r.expr, np.float32(1.0)) == fl.interpret(typed, np.float32(1.0))


def test_two_thousand_nested_maps():
    """18000 nodes, nesting depth over 2000: text round trip and traversals."""
    p = fl.fun([array(8, f32)], lambda xs: _nest(xs, 2000))
    assert size(p) > 18000
    assert fl.parse(str(p)) == p
    xs = marker(lambda e: isinstance(e, Identifier) and e.name == "xs", "xs")
    [deepest] = preorder(p, xs)
    assert len(deepest) == 2001
    assert paths(top_down(xs)(p)) == [deepest]
    assert paths(bottom_up(xs)(p)) == [deepest]
    lit = marker(lambda e: isinstance(e, Literal), "lit")
    assert paths(position(1999, lit)(p)) == [(0,) + (1,) * 1999 + (0, 1, 0, 1)]
    r = normalize(renamer("xs", "ys"))(p.body)
    assert r.ok and paths(r) == [deepest[1:]]


def _nest(xs, k: int):
    for _ in range(k):
        xs = fl.map(lambda x: x + 1.0, xs)
    return xs


def test_a_chain_of_maps_fuses_and_lowers():
    """A chain of 12 maps: fused into one map, then lowered, replayed."""
    p = maps(12)
    r = replays(p, (normalize(fusion) >> normalize(to_seq))(p))
    assert len(r.steps) == 11 + 1
    assert str(r.expr).count("map_seq") == 1
    same_meaning(p, r.expr, np.linspace(-1, 1, 8, dtype=np.float32))


def test_typed_chain_of_maps():
    """150 nested maps, typed and interpreted; bottom_up fuses the innermost pair.  (Kept
    moderate: inference of n nested maps currently takes time quadratic in n.)"""
    p = fl.infer(fl.fun([array(8, f32)], lambda xs: _nest(xs, 150)))
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(fl.interpret(p, x), x + 150)
    r = bottom_up(fusion)(p)
    assert paths(r) == [(0,) + (1,) * 148]
    np.testing.assert_array_equal(fl.interpret(r.expr, x), x + 150)
