"""Type inference: printed types of good programs, literal defaulting, and the messages of
bad programs.  Every error names the offending subexpression (`in `...``) and the place in
this file where the DSL built it (`test_infer.py:LINE`)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functional as fl
from functional import (
    Identifier,
    Literal,
    abs,
    add,
    apply,
    array,
    as_scalar,
    as_vector,
    boolean,
    cast,
    concat,
    drop,
    f32,
    f64,
    fma,
    fst,
    fun,
    gather,
    generate,
    i32,
    infer,
    iterate,
    join,
    lam,
    let,
    literal,
    map,
    map_global,
    map_local,
    map_seq,
    map_seq_unroll,
    map_vec,
    map_workgroup,
    nat,
    nat_apply,
    nat_fun,
    neg,
    not_,
    pad_clamp,
    pad_const,
    pad_mirror,
    pad_wrap,
    reduce,
    reduce_seq,
    reorder_stride,
    select,
    slide,
    snd,
    split,
    sqrt,
    take,
    to_expr,
    to_local,
    to_private,
    transpose,
    tuple_of,
    u32,
    unzip,
    user_fun,
    vec,
    zip,
)
from functional.expr import walk
from functional.nat import Unknown
from functional.types import ArrayType, FunType, NatFunType, TupleType, TypeVar, VectorType

N, M, P = nat("N"), nat("M"), nat("P")
N4, N8, N64 = nat("N", multiple_of=4), nat("N", multiple_of=8), nat("N", multiple_of=64)
THIS_FILE = "test_infer.py"


def _here() -> int:
    """The caller's current line: put it on the line of the DSL call it stands for."""
    return sys._getframe(1).f_lineno


def halve(ys):
    return map(reduce(add, 0.0), split(2, ys))


def dot(xs, ys):
    return reduce(add, 0.0, map(lambda p: fst(p) * snd(p), zip(xs, ys)))


SQ = user_fun("sq", [("x", f32)], f32, "return x * x;", numpy=lambda x: x * x)
HYP = user_fun("hyp", [("x", f32), ("y", f32)], f32, "return sqrt(x * x + y * y);")

# ------------------------------------------------------------------------- good programs

GOOD = {
    "dot": (fun([array(N, f32), array(N, f32)], dot), "(N: nat) -> N.f32 -> N.f32 -> f32"),
    "split": (fun([array(N64, f32)], lambda xs: split(64, xs)), "(N: nat{multiple_of=64}) -> N.f32 -> (N / 64).64.f32"),
    "split_map_join": (fun([array(N64, f32)], lambda xs: join(map(map(neg), split(64, xs)))),
                       "(N: nat{multiple_of=64}) -> N.f32 -> N.f32"),
    "join": (fun([array(M, array(N, f32))], lambda g: join(g)), "(M: nat) -> (N: nat) -> M.N.f32 -> (M * N).f32"),
    "slide": (fun([array(N, f32)], lambda xs: slide(3, 1, xs)), "(N: nat) -> N.f32 -> (N - 2).3.f32"),
    "slide_step": (fun([array(2 * M + 1, f32)], lambda xs: slide(3, 2, xs)), "(M: nat) -> (2 * M + 1).f32 -> M.3.f32"),
    "slide_2d": (fun([array(M, array(N, f32))], lambda g: map(transpose, slide(3, 1, map(slide(3, 1), g)))),
                 "(M: nat) -> (N: nat) -> M.N.f32 -> (M - 2).(N - 2).3.3.f32"),
    "pad": (fun([array(N, f32)], lambda xs: pad_clamp(1, 1, xs)), "(N: nat) -> N.f32 -> (N + 2).f32"),
    "pad_const": (fun([array(N, f32)], lambda xs: pad_const(2, 3, 0.0, xs)), "(N: nat) -> N.f32 -> (N + 5).f32"),
    "pad_2d": (fun([array(M, array(N, f32))], lambda g: pad_wrap(1, 1, map(pad_mirror(2, 0), g))),
               "(M: nat) -> (N: nat) -> M.N.f32 -> (M + 2).(N + 2).f32"),
    "iterate": (fun([array(N4, f32)], lambda xs: iterate(2, halve, xs)), "(N: nat{multiple_of=4}) -> N.f32 -> (N / 4).f32"),
    "iterate3": (fun([array(N8, f32)], lambda xs: iterate(3, halve, xs)), "(N: nat{multiple_of=8}) -> N.f32 -> (N / 8).f32"),
    "iterate0": (fun([array(N, f32)], lambda xs: iterate(0, halve, xs)), "(N: nat) -> N.f32 -> N.f32"),
    "iterate_same_length": (fun([array(N, f32)], lambda xs: iterate(5, lambda ys: map(neg, ys), xs)),
                            "(N: nat) -> N.f32 -> N.f32"),
    "transpose": (fun([array(M, array(N, f32))], lambda g: transpose(g)), "(M: nat) -> (N: nat) -> M.N.f32 -> N.M.f32"),
    "matmul": (fun([array(M, array(N, f32)), array(N, array(P, f32))],
                   lambda a, b: map(lambda r: map(lambda c: dot(r, c), transpose(b)), a)),
               "(M: nat) -> (N: nat) -> (P: nat) -> M.N.f32 -> N.P.f32 -> M.P.f32"),
    "zip": (fun([array(N, f32), array(N, i32)], lambda a, b: zip(a, b)), "(N: nat) -> N.f32 -> N.i32 -> N.(f32, i32)"),
    "zip_of_zips": (fun([array(N, f32), array(N, i32), array(N, boolean)], lambda a, b, c: zip(zip(a, b), c)),
                    "(N: nat) -> N.f32 -> N.i32 -> N.bool -> N.((f32, i32), bool)"),
    "unzip": (fun([array(N, tuple_of(f32, i32))], lambda a: unzip(a)), "(N: nat) -> N.(f32, i32) -> (N.f32, N.i32)"),
    "take": (fun([array(N, f32)], lambda xs: take(2, xs)), "(N: nat) -> N.f32 -> 2.f32"),
    "drop": (fun([array(N, f32)], lambda xs: drop(2, xs)), "(N: nat) -> N.f32 -> (N - 2).f32"),
    "concat": (fun([array(M, f32), array(N, f32)], lambda xs, ys: concat(xs, ys)),
               "(M: nat) -> (N: nat) -> M.f32 -> N.f32 -> (N + M).f32"),
    "as_vector": (fun([array(N4, f32)], lambda xs: as_vector(4, xs)), "(N: nat{multiple_of=4}) -> N.f32 -> (N / 4).vec[f32, 4]"),
    "map_vec": (fun([array(N4, f32)], lambda xs: as_scalar(map(map_vec(sqrt), as_vector(4, xs)))),
                "(N: nat{multiple_of=4}) -> N.f32 -> N.f32"),
    "vector_ops": (fun([vec(f32, 4), vec(f32, 4)], lambda a, b: fma(a, b, a)),
                   "vec[f32, 4] -> vec[f32, 4] -> vec[f32, 4]"),
    "generate": (generate(5, lambda i: cast(f32, i)), "5.f32"),
    "reorder_stride": (fun([array(N4, f32)], lambda xs: reorder_stride(4, xs)), "(N: nat{multiple_of=4}) -> N.f32 -> N.f32"),
    "gather": (fun([array(N, f32)], lambda xs: gather(lambda i, n: n - 1 - i, xs)), "(N: nat) -> N.f32 -> N.f32"),
    "low_level": (fun([array(M, array(N, f32))],
                      lambda g: map_workgroup(lambda r: to_local(map_local(lambda x: to_private(x * 2.0), r)), g)),
                  "(M: nat) -> (N: nat) -> M.N.f32 -> M.N.f32"),
    "fold": (fun([array(N, f32)], lambda xs: reduce_seq(lambda acc, x: acc + select(x > 0.0, 1, 0), 0, xs)),
             "(N: nat) -> N.f32 -> i32"),
    "user_fun": (fun([array(N, f32)], lambda xs: map(SQ, xs)), "(N: nat) -> N.f32 -> N.f32"),
    "let": (fun([array(N, f32)], lambda xs: let(reduce(add, 0.0, xs), lambda s: map(lambda x: x / s, xs))),
            "(N: nat) -> N.f32 -> N.f32"),
    "bools": (fun([array(N, f32)], lambda xs: map(lambda x: not_((x < 0.0) | (x > 1.0)), xs)),
              "(N: nat) -> N.f32 -> N.bool"),
    "nat_fun": (nat_fun(lambda n: generate(n, lambda i: i)), "(n: nat) -> n.i32"),
    "nat_apply": (nat_apply(nat_fun(lambda n: generate(n + 1, lambda i: i)), 3), "4.i32"),
    "declared_lambda": (lam(lambda x, y: x * y, [f64, f64]), "f64 -> f64 -> f64"),
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_programs_have_the_expected_type(name):
    prog, expected = GOOD[name]
    typed = infer(prog)
    assert str(typed.type) == expected
    _assert_fully_typed(typed)


def _has_unknowns(t) -> bool:
    if isinstance(t, TypeVar):
        return True
    if isinstance(t, ArrayType):
        return bool(t.size.unknowns) or _has_unknowns(t.elem)
    if isinstance(t, VectorType):
        return bool(t.width.unknowns) or _has_unknowns(t.elem)
    if isinstance(t, TupleType):
        return any(_has_unknowns(e) for e in t.elems)
    if isinstance(t, FunType):
        return _has_unknowns(t.param) or _has_unknowns(t.result)
    if isinstance(t, NatFunType):
        return _has_unknowns(t.body)
    return False


def _assert_fully_typed(typed):
    for node in walk(typed):
        assert node.t is not None, f"node {node} has no type"
        assert not _has_unknowns(node.t), f"node {node} has an unsolved type {node.t}"


def test_inference_is_stable_on_typed_programs():
    for prog, expected in GOOD.values():
        assert str(infer(infer(prog)).type) == expected


def test_low_level_primitives_have_the_types_of_their_counterparts():
    high = infer(fun([array(M, array(N, f32))], lambda g: map(map(neg), g))).type
    lowered = [
        fun([array(M, array(N, f32))], lambda g: map_global(lambda r: map_global(neg, r), g, dim=1)),
        fun([array(M, array(N, f32))], lambda g: map_workgroup(lambda r: map_local(neg, r), g)),
        fun([array(M, array(N, f32))], lambda g: map_seq(lambda r: map_seq_unroll(neg, r), g)),
    ]
    for prog in lowered:
        assert infer(prog).type == high


@given(k=st.integers(1, 16), mult=st.integers(1, 4))
@settings(max_examples=30)
def test_split_sizes_follow_the_declared_multiple(k, mult):
    nk = nat("N", multiple_of=k * mult)
    typed = infer(fun([array(nk, f32)], lambda xs: split(k, xs)))
    inner = "" if k == 1 else f" / {k}"
    facts = "" if k * mult == 1 else f"{{multiple_of={k * mult}}}"
    assert str(typed.type) == f"(N: nat{facts}) -> N.f32 -> (N{inner}).{k}.f32".replace("(N).", "N.")
    if k > 1 and mult == 1:
        # a multiple of k*j is not a multiple of k*j+1 (k > 1): rejected
        with pytest.raises(fl.TypeInferenceError, match="not known to be a multiple"):
            infer(fun([array(nk, f32)], lambda xs: split(k + 1, xs)))


# ---------------------------------------------------------------------- literals


def _literal_types(typed):
    return [node.t for node in walk(typed) if isinstance(node, Literal)]


def test_literals_default_to_f32_i32_bool():
    assert infer(to_expr(0.0)).type == f32
    assert infer(to_expr(2)).type == i32
    assert infer(fl.true).type == boolean  # a Python bool is refused by to_expr (tests/functional/test_builtins.py)
    assert str(infer(generate(3, lambda i: 0.5)).type) == "3.f32"
    assert str(infer(generate(3, lambda i: 2)).type) == "3.i32"
    assert str(infer(generate(3, lambda i: i * 2)).type) == "3.i32"


def test_literals_adapt_to_their_context():
    typed = infer(fun([f64], lambda x: x + 1.0))
    assert str(typed.type) == "f64 -> f64"
    assert _literal_types(typed) == [f64]
    typed = infer(fun([array(N, f64)], lambda xs: reduce(add, 0, xs)))  # an int literal in an f64 sum
    assert str(typed.type) == "(N: nat) -> N.f64 -> f64" and _literal_types(typed) == [f64]
    typed = infer(fun([u32], lambda x: x * 2))
    assert str(typed.type) == "u32 -> u32" and _literal_types(typed) == [u32]
    typed = infer(fun([array(N, f64)], lambda xs: pad_const(1, 1, 0.0, xs)))
    assert _literal_types(typed) == [f64]


def test_typed_literals_keep_their_type():
    assert infer(literal(1.0, f64)).type == f64
    assert infer(literal(2, u32)).type == u32
    assert str(infer(generate(2, lambda i: literal(0.5, f64))).type) == "2.f64"


# ------------------------------------------------------------------------ bad programs
# (name, build, line of the DSL call, `where`, message).  `build` and `_here()` share a line.

BAD = [
    ("zip_lengths", lambda: fun([array(N, f32), array(M, f32)], lambda xs, ys: zip(xs, ys)), _here(),
     "zip xs ys", "zip of arrays of lengths N and M"),
    ("zip_nested_lengths", lambda: fun([array(M, array(N, f32)), array(N, array(M, f32))], lambda a, b: zip(a, b)),
     _here() - 1, "zip a b", "zip of arrays of lengths M and N"),
    ("split_3", lambda: fun([array(N, f32)], lambda xs: split(3, xs)), _here(),
     "split 3 xs", "split 3 of an array of length N: N is not known to be a multiple of 3"),
    ("split_of_multiple_of_2", lambda: fun([array(nat("N", multiple_of=2), f32)], lambda xs: split(4, xs)), _here(),
     "split 4 xs", "split 4 of an array of length N: N is not known to be a multiple of 4"),
    ("slide_step", lambda: fun([array(N, f32)], lambda xs: slide(3, 2, xs)), _here(),
     "slide 3 2 xs", "slide 3 2 of an array of length N: N - 3 is not known to be a multiple of 2"),
    ("slide_too_short", lambda: fun([array(N, f32)], lambda xs: slide(3, 1, take(2, xs))), _here(),
     "slide 3 1 (take 2 xs)", "slide 3 1 of an array of length 2: the array is shorter than the window (3)"),
    ("reorder_stride", lambda: fun([array(N, f32)], lambda xs: reorder_stride(3, xs)), _here(),
     "reorder_stride 3 xs", "reorder_stride 3 of an array of length N: N is not known to be a multiple of 3"),
    ("as_vector_length", lambda: fun([array(N, f32)], lambda xs: as_vector(4, xs)), _here(),
     "as_vector 4 xs", "as_vector 4 of an array of length N: N is not known to be a multiple of 4"),
    ("iterate_length", lambda: fun([array(N, f32)], lambda xs: iterate(2, halve, xs)), _here(),
     "iterate 2 (fun(l: nat, ys) => map (reduce (+) 0.0) (split 2 ys)) xs",
     ("iterate 2 of a function that divides the length by 2, on an array of length N: N is not known to be a "
      "multiple of 4")),
    ("iterate_growing", lambda: fun([array(N, f32)], lambda xs: iterate(1, lambda ys: concat(ys, ys), xs)), _here(),
     "iterate 1 (fun(l: nat, ys) => concat ys ys)",
     "iterate 1: the function must map an array of length l * n to one of length l, for a constant n"),
    ("apply_an_array", lambda: fun([array(N, f32)], lambda xs: apply(xs, 1.0)), _here(),
     "xs 1.0", "xs is not a function (it has type N.f32) and cannot be applied"),
    ("apply_a_literal", lambda: fun([f32], lambda x: apply(2.0, x)), _here(),
     "2.0 x", "2.0 is not a function (it has a floating-point scalar) and cannot be applied"),
    ("apply_wrong_argument", lambda: fun([f32], lambda x: apply(lam(lambda y: y + 1, [i32]), x)), _here(),
     "(fun(y: i32) => y + 1) x", "cannot apply a function of type i32 -> i32 to an argument of type f32"),
    ("unbound", lambda: fun([f32], lambda x: x + Identifier("y")), _here(), "y", "unbound identifier y"),
    ("bool_as_number", lambda: fun([f32], lambda x: (x < 1.0) + 1.0), _here(),
     "(+) (x < 1.0)", "argument 1 of add should be a numeric type, found bool"),
    ("bool_input_as_number", lambda: fun([array(N, boolean)], lambda bs: map(lambda b: b * 2, bs)), _here(),
     "map (fun(b) => b * 2) bs",
     "argument 2 of map should be an array of length N (elements: a numeric scalar), found N.bool"),
    ("sqrt_of_int", lambda: fun([i32], lambda x: sqrt(x)), _here(),
     "sqrt x", "argument 1 of sqrt should be a floating-point type, found i32"),
    ("fma_of_int", lambda: fun([i32], lambda x: fma(x, x, x)), _here(),
     "fma x", "argument 1 of fma should be a floating-point type, found i32"),
    ("number_as_bool", lambda: fun([f32], lambda x: select(x, x, x)), _here(),
     "select x", "argument 1 of select should have type bool, found f32"),
    ("select_branches", lambda: fun([f32, i32], lambda x, k: select(x < 1.0, x, k)), _here(),
     "select (x < 1.0) x k", "argument 3 of select should have type f32, found i32"),
    ("f32_plus_f64", lambda: fun([f32, f64], lambda x, y: x + y), _here(),
     "x + y", "argument 2 of add should have type f32, found f64"),
    ("float_literal_in_int_context", lambda: fun([i32], lambda x: x * 2.5), _here(),
     "x * 2.5", "argument 2 of mul should have type i32, found a floating-point scalar"),
    ("bad_typed_literal", lambda: fun([i32], lambda x: x + literal(1.5, i32)), _here(),
     "i32(1.5)", "literal 1.5 cannot have type i32"),
    ("map_over_scalar", lambda: fun([f32], lambda x: map(neg, x)), _here(),
     "map neg x", "argument 2 of map should be an array (elements: a numeric type), found f32"),
    ("transpose_1d", lambda: fun([array(N, f32)], lambda xs: transpose(xs)), _here(),
     "transpose xs", "argument 1 of transpose should be an array of length N of arrays, found N.f32"),
    ("reduce_of_bools", lambda: fun([array(N, f32)], lambda xs: reduce(add, 0, map(lambda x: x < 0.0, xs))), _here(),
     "reduce (+) 0 (map (fun(x) => x < 0.0) xs)",
     "argument 3 of reduce should be an array of length N (elements: a numeric scalar), found N.bool"),
    ("fst_of_scalar", lambda: fun([f32], lambda x: fst(x)), _here(), "fst x", "argument 1 of fst should be a pair, found f32"),
    ("map_vec_of_scalar", lambda: fun([f32], lambda x: map_vec(neg, x)), _here(),
     "map_vec neg x", "argument 2 of map_vec should be a vector, found f32"),
    ("vector_widths", lambda: fun([vec(f32, 4), vec(f32, 2)], lambda a, b: a + b), _here(),
     "a + b", "argument 2 of add should have type vec[f32, 4], found vec[f32, 2]"),
    ("as_vector_of_pairs", lambda: fun([array(N4, tuple_of(f32, f32))], lambda xs: as_vector(4, xs)), _here(),
     "as_vector 4 xs",
     "argument 1 of as_vector should be an array of length N (elements: a scalar type), found N.(f32, f32)"),
    ("declared_parameter", lambda: fun([array(N, f32)], lambda xs: map(lam(lambda x: x, [i32]), xs)), _here(),
     "map (fun(x: i32) => x) xs", "argument 2 of map should have type N.i32, found N.f32"),
    ("too_many_args_neg", lambda: fun([f32], lambda x: neg(x, x)), _here(),
     "neg x x", "neg takes 1 argument(s), applied to 2"),
    ("too_many_args_zip", lambda: fun([array(N, f32)], lambda xs: zip(xs, xs, xs)), _here(),
     "zip xs xs xs", "zip takes 2 argument(s), applied to 3"),
    ("too_many_args_user_fun", lambda: fun([f32], lambda x: SQ(x, x)), _here(),
     'user_fun {sq(x: f32): f32 = "return x * x;"} x x', "user_fun takes 1 argument(s), applied to 2"),
    ("map_global_dim_3", lambda: fun([array(N, f32)], lambda xs: map_global(neg, xs, dim=3)), _here(),
     "map_global 3 neg xs", "map_global: dimension must be 0, 1 or 2, got 3"),
    ("as_vector_width_5", lambda: fun([array(N, f32)], lambda xs: as_vector(5, xs)), _here(),
     "as_vector 5 xs", "as_vector: vector width must be 2, 3, 4, 8 or 16, got 5"),
    ("split_0", lambda: fun([array(N, f32)], lambda xs: split(0, xs)), _here(),
     "split 0 xs", "split: parameter 0 must be positive"),
    ("slide_step_0", lambda: fun([array(N, f32)], lambda xs: slide(2, 0, xs)), _here(),
     "slide 2 0 xs", "slide: parameter 0 must be positive"),
    ("pad_negative", lambda: fun([array(N, f32)], lambda xs: pad_clamp(-1, 0, xs)), _here(),
     "pad_clamp (-1) 0 xs", "pad_clamp: parameter -1 must not be negative"),
    ("generate_0", lambda: generate(0, lambda i: i), _here(),
     "generate 0 (fun(i) => i)", "generate: parameter 0 must be positive"),
    ("cast_to_array", lambda: fun([f32], lambda x: cast(array(N, f32), x)), _here(),
     "cast N.f32 x", "cast: cast takes a scalar type"),
    ("nat_apply_to_scalar", lambda: fun([f32], lambda x: nat_apply(x, 3)), _here(),
     "x [3]", "a size is applied to something of type f32, not a function of a size"),
    ("unsolvable_type", lambda: lam(lambda x: x), _here(), "x", "cannot infer the type ?t1 in type ?t1"),
    ("unsolvable_size", lambda: fun([array(N, f32)], lambda xs: lam(lambda ys: zip(xs, join(ys)))), _here(),
     "zip xs (join ys)", "cannot determine the size in N = "),
    ("infinite_type", lambda: fun([f32], lambda y: lam(lambda x: apply(x, x))), _here(),
     "x x", "infinite type: "),
    ("self_application_of_data", lambda: fun([array(N, f32)], lambda xs: map(lambda x: apply(x, x), xs)), _here(),
     "x x", "x is not a function (it has a data type) and cannot be applied"),
]
# messages that necessarily mention inference unknowns
_MAY_SHOW_UNKNOWNS = {"unsolvable_type", "unsolvable_size", "infinite_type"}


@pytest.mark.parametrize("name, build, line, where, message", BAD, ids=[case[0] for case in BAD])
def test_bad_programs_are_reported_with_place_and_reason(name, build, line, where, message):
    with pytest.raises(fl.TypeInferenceError) as info:
        infer(build())
    err = info.value
    assert err.message.startswith(message)
    assert err.where == where
    assert err.origin == f"{THIS_FILE}:{line}"
    assert str(err) == f"{THIS_FILE}:{line}: in `{where}`: {err.message}"
    if name not in _MAY_SHOW_UNKNOWNS:
        assert "?" not in err.message, "inference unknowns leaked into the message"


def test_every_error_is_a_type_inference_error_not_a_python_one():
    # a few more shapes of nonsense: none may escape as a raw Python exception
    builders = [
        lambda: fun([f32], lambda x: map(x, x)),
        lambda: fun([array(N, f32)], lambda xs: reduce(xs, xs, xs)),
        lambda: fun([array(N, f32)], lambda xs: as_scalar(xs)),
        lambda: fun([vec(f32, 4)], lambda v: as_vector(2, v)),
        lambda: fun([array(N, f32)], lambda xs: unzip(xs)),
        lambda: fun([array(N, f32)], lambda xs: let(xs, xs)),
        lambda: fun([f32], lambda x: abs(map)),
        lambda: fun([array(N, f32)], lambda xs: map_vec(sqrt, as_vector(4, xs))),
        lambda: fun([array(N, f32)], lambda xs: HYP(xs)),
        lambda: nat_apply(generate(3, lambda i: i), 2),
    ]
    for build in builders:
        with pytest.raises(fl.TypeInferenceError) as info:
            infer(build())
        assert info.value.origin is not None and info.value.origin.startswith(THIS_FILE)


def test_unknown_sizes_of_a_polymorphic_iterate_body_do_not_escape():
    typed = infer(fun([array(N4, f32)], lambda xs: iterate(2, halve, xs)))
    for node in walk(typed):
        sizes = []
        if isinstance(node.t, ArrayType):
            sizes.append(node.t.size)
        assert not any(isinstance(a, Unknown) for s in sizes for a in s.atoms)


# ------------------------------------------------- subterms typed standing alone (reuse)

def _typing(e) -> list[tuple[str, str]]:
    return [(str(n), repr(n.t)) for n in walk(e)]


def test_a_subterm_typed_alone_only_where_that_decides_it():
    """infer(..., reuse=True) (rules re-typing their results) types a data subterm standing
    alone where that decides every type in it; a literal its context decides is typed in
    place: here `map (fun(i) => 1.0) xs` alone would default 1.0 to f32, its use makes it f64."""
    program = fl.parse("fun(xs: 4.f64) => map (fun(p) => fst p + snd p) (zip xs (map (fun(i) => 1.0) xs))")
    typed = fl.infer(program)
    again = fl.infer(typed, reuse=True)  # every node carries its type: each data subterm is tried alone
    assert _typing(again) == _typing(typed)
    ones = next(n for n in walk(again) if str(n) == "map (fun(i) => 1.0) xs")
    assert str(ones.t) == "4.f64"
    from functional.infer import _standalone, _Standing

    env = (("xs", typed.t.param),)
    assert _standalone(_Standing(ones.exact_key, env, ones)) is None  # alone, 1.0 would be an f32
    assert _typing(_standalone(_Standing(typed.body.exact_key, env, typed.body))) == _typing(typed.body)


@pytest.mark.parametrize("case", range(40))
def test_typing_with_reuse_is_the_typing_without(case):
    """On the fuzzer's programs, re-inferred with their own types on every node (each data
    subterm tried alone) and with those types erased: the same typing, node by node."""
    from functional.random_programs import random_program

    typed = fl.infer(random_program(case).program)
    assert _typing(fl.infer(typed, reuse=True)) == _typing(typed) == _typing(fl.infer(typed))
