"""Precision a program's author relaxes on purpose: transformations that change its meaning,
so never rules (rules are identities, checked against the interpreter) and never applied by
the compiler on its own.

    allow_tf32 program   every float32 dot product `reduce (+) z (map (fun(p) => fst p * snd p)
                         (zip xs ys))` multiplies TF32 values: `tf32 (fst p) * tf32 (snd p)`
                         (10 bits of mantissa, rounded to nearest, ties away; the sums stay
                         float32), as torch's `allow_tf32` lets cuBLAS do.  On a device with
                         TF32 tensor cores the default lowering then runs matrix products on
                         them (functional.default_lowering, phase tensor_cores); elsewhere the
                         program still computes the rounded products, so every device gives the
                         relaxed program's result, which the interpreter computes too.
"""

from __future__ import annotations

from .expr import App, Expr, Identifier, Lambda, NatLambda, Prim, applied, spine
from .infer import infer
from .types import ScalarType


def allow_tf32(program: Expr) -> Expr:
    """The program with the products of its float32 dot products rounded to TF32 (the module's
    docstring), typed; dot products written otherwise (a fold `fun(a, p) => a + fst p * snd p`,
    products of computed values) and everything else unchanged."""
    return infer(_relaxed(infer(program)))


def _relaxed(e: Expr) -> Expr:
    if isinstance(e, Lambda):
        return Lambda(e.param, _relaxed(e.body))
    if isinstance(e, NatLambda):
        return NatLambda(e.var, _relaxed(e.body))
    head, args = spine(e)
    if not args:
        return e
    if isinstance(head, Prim) and head.name == "reduce" and len(args) == 3 and _sum(args[0]):
        mapped = applied(args[2], "map", 2)  # decided on the typed program: rebuilt nodes carry no types
        if mapped is not None and applied(mapped[1], "zip", 2) is not None and _f32_product(mapped[0]):
            args = args[:2] + [App(App(Prim("map"), _rounded(mapped[0])), mapped[1])]
    args = [_relaxed(a) for a in args]
    out = _relaxed(head) if isinstance(head, (Lambda, NatLambda)) else head
    for a in args:
        out = App(out, a)
    return out


def _sum(f: Expr) -> bool:
    return isinstance(f, Prim) and f.name == "add"


def _f32_product(fn: Expr) -> bool:
    """`fun(p) => fst p * snd p` over float32."""
    if not (isinstance(fn, Lambda) and isinstance(fn.body.t, ScalarType) and fn.body.t.name == "f32"):
        return False
    factors = applied(fn.body, "mul", 2)
    return factors is not None and all(
        (taken := applied(factor, part, 1)) is not None and isinstance(taken[0], Identifier)
        and taken[0].name == fn.param.name for factor, part in zip(factors, ("fst", "snd")))


def _rounded(fn: Lambda) -> Lambda:
    p = Identifier(fn.param.name)
    product = App(App(Prim("mul"), App(Prim("tf32"), App(Prim("fst"), p))), App(Prim("tf32"), App(Prim("snd"), p)))
    return Lambda(fn.param, product)


__all__ = ["allow_tf32"]
