"""What functional.algebra proves about reduction operators, from their form: a monoid primitive,
tuples of them component by component, n-arrays of them element by element; and what it
refuses (an operand mixed across components or elements, an index the paths cannot name)."""

from __future__ import annotations

import numpy as np
import pytest

import functional as fl
from functional import algebra
from functional.expr import Lambda, NatLambda, Prim, spine

f32 = fl.f32
N = fl.nat("N")


def _reduction(op, z, elem=fl.array(3, f32)):
    """(f, z) of `reduce op z xs` over N elements of type `elem`, typed."""
    program = fl.infer(fl.fun([fl.array(N, elem)], lambda xs: fl.reduce(op, z, xs)))
    e = program
    while isinstance(e, (Lambda, NatLambda)):
        e = e.body
    head, args = spine(e)
    assert isinstance(head, Prim) and head.name == "reduce"
    return args[0], args[1]


def _elementwise(combine):
    return fl.lam(lambda a, b: fl.generate(3, lambda k: combine(a[k], b[k])))


@pytest.mark.parametrize("combine, commutative", [(lambda x, y: x + y, True), (lambda x, y: fl.max(y, x), True),
                                                  (lambda x, y: x * y, True)])
def test_an_elementwise_monoid_is_associative_and_commutative(combine, commutative):
    f = _elementwise(combine)
    assert isinstance(algebra.operator_form(f), algebra.Elementwise)
    assert algebra.associative(f) and algebra.commutative(f) == commutative


@pytest.mark.parametrize("op", [
    fl.lam(lambda a, b: fl.generate(3, lambda k: a[k] - b[k])),  # not associative
    fl.lam(lambda a, b: fl.generate(3, lambda k: a[k] + b[0])),  # another element of b
    fl.lam(lambda a, b: fl.generate(3, lambda k: a[0] + b[0])),  # not element k
    fl.lam(lambda a, b: fl.generate(3, lambda k: fl.generate(3, lambda j: a[k][j] + b[j][k]))),  # transposed
])
def test_an_operator_that_mixes_elements_is_not_associative(op):
    assert algebra.operator_form(op) is None and not algebra.associative(op)


def test_nested_elementwise_forms_and_tuples_inside_them():
    nested = fl.lam(lambda a, b: fl.generate(2, lambda k: fl.generate(3, lambda j: a[k][j] + b[k][j])))
    tuples = fl.lam(lambda a, b: fl.generate(3, lambda k: fl.pair(fl.fst(a[k]) + fl.fst(b[k]),
                                                                   fl.max(fl.snd(a[k]), fl.snd(b[k])))))
    assert algebra.associative(nested) and algebra.associative(tuples)


def test_the_neutral_element_of_an_elementwise_operator_is_a_generate_of_the_scalar_one():
    f = _elementwise(lambda x, y: x + y)
    f_typed, z = _reduction(f, fl.generate(3, lambda k: 0.0))
    assert algebra.neutral(f_typed, z)
    assert str(algebra.neutral_element(f_typed, z.t)) == "generate 3 (fun(k) => f32(0.0))"
    for not_neutral in (fl.generate(3, lambda k: 1.0), fl.generate(3, lambda k: fl.cast(f32, k))):
        f_typed, z = _reduction(f, not_neutral)
        assert not algebra.neutral(f_typed, z)


def test_the_elementwise_claims_hold_in_the_interpreter():
    """Associativity (a split fold equals the whole fold) and the neutral element, on random
    3-arrays: what split_reduction relies on."""
    rng = np.random.default_rng(0)
    xs = rng.integers(-8, 8, (24, 3)).astype(np.float32)  # small integers: float sums are exact
    f = _elementwise(lambda x, y: x + y)
    z = fl.generate(3, lambda k: 0.0)
    whole = fl.fun([fl.array(24, fl.array(3, f32))], lambda v: fl.reduce(f, z, v))
    split = fl.fun([fl.array(24, fl.array(3, f32))], lambda v: fl.reduce(f, z, fl.map(
        lambda chunk: fl.reduce(f, z, chunk), fl.split(6, v))))
    np.testing.assert_array_equal(fl.interpret(whole, xs), fl.interpret(split, xs))
    np.testing.assert_array_equal(fl.interpret(whole, xs), xs.sum(0))


def test_an_elementwise_operator_written_as_a_map_over_a_zip_has_the_generates_form():
    """rules.indexing makes `generate 3 (fun(k) => a[k] + b[k])` a map over `zip a b`: the same
    operator, so the same claims (else index-written reductions of arrays lose their stages)."""
    as_map = fl.lam(lambda a, b: fl.map(lambda p: fl.fst(p) + fl.snd(p), fl.zip(a, b)))
    swapped = fl.lam(lambda a, b: fl.map(lambda p: fl.max(fl.snd(p), fl.fst(p)), fl.zip(a, b)))
    f, z = _reduction(as_map, fl.generate(3, lambda k: 0.0))
    assert algebra.operator_form(f) == algebra.Elementwise(fl.Nat.const(3), "add")
    assert algebra.associative(f) and algebra.commutative(f) and algebra.neutral(f, z)
    assert algebra.associative(_reduction(swapped, fl.generate(3, lambda k: -1e30))[0])
    for mixed in (fl.lam(lambda a, b: fl.map(lambda p: fl.fst(p) - fl.snd(p), fl.zip(a, b))),
                  fl.lam(lambda a, b: fl.map(lambda p: fl.fst(p) + fl.snd(p), fl.zip(a, a))),
                  fl.lam(lambda a, b: fl.map(lambda p: fl.fst(p) + fl.fst(p), fl.zip(a, b)))):
        assert not algebra.associative(_reduction(mixed, fl.generate(3, lambda k: 0.0))[0])
