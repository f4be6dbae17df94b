"""DPIA phrase types and access inference (dpia.phrases): what can be read and what must be
written somewhere first, decided before any code is generated."""

from __future__ import annotations

import pytest

import functional as fl
from dpia.phrases import Access, AccessError, ExpPhrase, TranslationError, infer_access, phrase_type

N = fl.nat("N", multiple_of=64)
VEC = fl.array(N, fl.f32)


def typed(build, *types):
    return fl.infer(fl.fun(list(types) or [VEC], build))


def body_phrase(program):
    p = phrase_type(program)
    while hasattr(p, "result"):
        p = p.result
    return p


def test_a_reduction_is_read_and_a_parallel_map_must_be_written():
    total = typed(lambda xs: fl.reduce_seq(fl.add, 0.0, xs))
    assert str(phrase_type(total)) == "(N: nat) -> exp[N.f32, read] -> exp[f32, read]"
    scal = typed(lambda a, xs: fl.map_global(lambda x: x * a, xs), fl.f32, VEC)
    assert str(phrase_type(scal)) == "(N: nat) -> exp[f32, read] -> exp[N.f32, read] -> exp[N.f32, write]"


@pytest.mark.parametrize("build, access", [
    (lambda xs: fl.join(fl.map_workgroup(lambda c: fl.map_local(lambda x: x, c), fl.split(64, xs))), Access.WRITE),
    (lambda xs: fl.to_global(fl.map_global(lambda x: x, xs)), Access.READ),
    (lambda xs: fl.split(8, xs), Access.READ),                                # a view of an input
    (lambda xs: fl.map(lambda x: x * 2.0, xs), Access.READ),                  # read lazily, element by element
    (lambda xs: fl.map(fl.join, fl.map_global(lambda c: fl.map_seq(lambda r: r, c), fl.split(8, fl.split(8, xs)))),
     Access.WRITE),                                                           # a write view of computed rows
])
def test_views_keep_the_access_of_what_they_view(build, access):
    p = body_phrase(typed(build))
    assert isinstance(p, ExpPhrase) and p.access is access


@pytest.mark.parametrize("build, needle", [
    (lambda xs: fl.map_seq(lambda x: x + 1.0, fl.map_seq(lambda x: x * 2.0, xs)), "(the data of map_seq)"),
    (lambda xs: fl.reduce_seq(fl.add, 0.0, fl.map_global(lambda x: x * 2.0, xs)), "(the data of reduce_seq)"),
    (lambda xs: fl.let(fl.map_seq(lambda x: x, xs), lambda y: fl.reduce_seq(fl.add, 0.0, y)), "(the value of let)"),
    (lambda xs: fl.map_global(lambda p: fl.fst(p) + fl.snd(p), fl.zip(xs, fl.map_seq(lambda x: x, xs))),
     "(the data of map_global)"),
])
def test_reading_what_was_not_stored_is_an_access_error_naming_the_place(build, needle):
    program = typed(build)
    with pytest.raises(AccessError, match="is read here") as info:
        infer_access(program)
    assert needle in str(info.value) and "test_phrases.py" in str(info.value)
    import dpia

    with pytest.raises(TranslationError, match="wrap it in to_private, to_local or to_global"):
        dpia.translate(program)  # the translation checks access first


def test_storing_the_computed_array_makes_it_readable():
    program = typed(lambda xs: fl.reduce_seq(fl.add, 0.0, fl.to_global(fl.map_global(lambda x: x * 2.0, xs))))
    assert str(body_phrase(program)) == "exp[f32, read]"
