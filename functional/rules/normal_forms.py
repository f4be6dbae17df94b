"""Rules that move between equivalent forms, and the normal forms built from them.

    beta        (fun(x) => b) a        -> b[a / x]
    nat_beta    (fun(n: nat) => b) [k] -> b[k / n]
    eta         fun(x) => f x          -> f             (x not free in f)
    eta_expand  map f xs               -> map (fun(x) => f x) xs      (f not a lambda; also reduce)

Normal forms make rules composable (ELEVATE): `beta_eta_normal_form`, `data_flow_form`
(the function arguments of maps and reductions are lambdas), `maps_fissioned`,
`maps_fused`.
"""

from __future__ import annotations

from .. import dsl as fl
from ..expr import App, Identifier, Lambda, NatApp, NatLambda, free_identifiers, substitute, substitute_nat
from ..strategies import MAP_LIKE, Strategy, lchoice, normalize, repeat, top_down
from . import instances as inst
from .core import NotApplicable, OneOf, P, V, rule


def _beta_build(m):
    e = m.root
    if not (isinstance(e, App) and isinstance(e.fun, Lambda)):
        raise NotApplicable("not a redex")
    return substitute(e.fun.body, e.fun.param.name, e.arg)


def _root_pattern():
    return V("_node")


def _ex_beta(rng):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY)
    prog = inst.vector_program(n, lambda xs: fl.map(lambda x: fl.apply(fl.lam(f), x + 1.0), xs))
    return prog, (inst.data(rng, n),), {}


rule("beta", "normal-form", "(fun(x) => b) a -> b[a / x]", lhs=_root_pattern(),
     side=lambda m: None if isinstance(m.root, App) and isinstance(m.root.fun, Lambda) else "not a beta-redex",
     build=_beta_build, example=_ex_beta)


def _nat_beta_side(m):
    e = m.root
    return None if isinstance(e, NatApp) and isinstance(e.fun, NatLambda) else "not a size redex"


def _ex_nat_beta(rng):
    n = 2 * inst.size(rng)
    body = fl.nat_fun(lambda k: fl.lam(lambda ys: fl.map(fl.reduce(fl.add, 0.0), fl.split(2, ys))), name="k")
    prog = inst.vector_program(n, lambda xs: fl.apply(fl.nat_apply(body, n // 2), xs))
    return prog, (inst.data(rng, n),), {}


rule("nat_beta", "normal-form", "(fun(n: nat) => b) [k] -> b[k / n]", lhs=_root_pattern(), side=_nat_beta_side,
     build=lambda m: substitute_nat(m.root.fun.body, m.root.fun.var, m.root.nat), example=_ex_nat_beta)


def _eta_side(m):
    e = m.root
    if not (isinstance(e, Lambda) and isinstance(e.body, App)):
        return "not fun(x) => f x"
    arg = e.body.arg
    if not (isinstance(arg, Identifier) and arg.name == e.param.name):
        return "the body does not apply a function to the parameter"
    if e.param.name in free_identifiers(e.body.fun):
        return "the function mentions the parameter"
    return None


def _ex_eta(rng):
    n = inst.size(rng)
    prog = inst.vector_program(n, lambda xs: fl.map(lambda x: fl.neg(x), xs))
    return prog, (inst.data(rng, n),), {}


rule("eta", "normal-form", "fun(x) => f x -> f   (x not free in f)", lhs=_root_pattern(), side=_eta_side,
     build=lambda m: m.root.body.fun, example=_ex_eta)


def _with_function(m, expanded):
    """The matched application with its function argument `m.f` replaced."""
    from ..expr import spine

    prim, args = spine(m.root)
    e = prim
    for a in args:
        e = App(e, expanded if a is m.f else a)
    return e


def _eta_expand_build(m):
    f = m.f
    return _with_function(m, fl.lam(lambda x: App(f, x)))


def _ex_eta_expand(rng):
    n = inst.size(rng)
    prog = inst.vector_program(n, lambda xs: fl.map(fl.neg, xs))
    return prog, (inst.data(rng, n),), {}


rule("eta_expand_map", "normal-form", "map f xs -> map (fun(x) => f x) xs   (f not a lambda)",
     lhs=OneOf(P(MAP_LIKE, V("f"), V("xs")), P(MAP_LIKE, V("f"))),
     side=lambda m: "already a lambda" if isinstance(m.f, Lambda) else None,
     build=_eta_expand_build, example=_ex_eta_expand)


def _eta_expand_reduce_build(m):
    f = m.f
    return _with_function(m, fl.lam(lambda a, x: App(App(f, a), x)))


def _ex_eta_expand_reduce(rng):
    n = inst.size(rng)
    op, z = inst.pick(rng, inst.MONOIDS)
    prog = inst.vector_program(n, lambda xs: fl.reduce(op, z, xs))
    return prog, (inst.data(rng, n, monoid=(op, z)),), {}


_REDUCES = {"reduce", "reduce_seq", "reduce_seq_unroll"}
rule("eta_expand_reduce", "normal-form", "reduce f z xs -> reduce (fun(a, x) => f a x) z xs   (f not a lambda)",
     lhs=OneOf(P(_REDUCES, V("f"), V("z"), V("xs")), P(_REDUCES, V("f"), V("z"))),
     side=lambda m: "already a lambda" if isinstance(m.f, Lambda) else None,
     build=_eta_expand_reduce_build, example=_ex_eta_expand_reduce)


# ---------------------------------------------------------------------- normal forms


def _r(name: str) -> Strategy:
    from .core import RULES

    return RULES[name].strategy()


def beta_eta_normal_form(fuel: int = 10000) -> Strategy:
    return Strategy("beta_eta_normal_form", normalize(lchoice(lchoice(_r("beta"), _r("nat_beta")), _r("eta")), fuel))


def beta_normal_form(fuel: int = 10000) -> Strategy:
    return Strategy("beta_normal_form", normalize(lchoice(_r("beta"), _r("nat_beta")), fuel))


def data_flow_form(fuel: int = 10000) -> Strategy:
    """Beta-normal, with every map's and reduction's function a lambda."""
    expand = lchoice(_r("eta_expand_map"), _r("eta_expand_reduce"))
    return Strategy("data_flow_form", beta_normal_form(fuel) >> normalize(expand, fuel))


def maps_fissioned(fuel: int = 10000) -> Strategy:
    return Strategy("maps_fissioned", normalize(_r("map_fission"), fuel))


def maps_fused(fuel: int = 10000) -> Strategy:
    return Strategy("maps_fused", normalize(_r("map_fusion"), fuel) >> beta_normal_form(fuel))


__all__ = ["beta_eta_normal_form", "beta_normal_form", "data_flow_form", "maps_fissioned", "maps_fused",
           "repeat", "top_down"]


# ------------------------------------------------------------- linear cleanups (fusion)


def _redex(e):
    """(function, argument) of `(fun(x) => b) a` or `let a (fun(x) => b)`, else None."""
    from ..expr import Prim, spine

    if isinstance(e, App) and isinstance(e.fun, Lambda):
        return e.fun, e.arg
    head, args = spine(e)
    if isinstance(head, Prim) and head.name == "let" and len(args) == 2 and isinstance(args[1], Lambda):
        return args[1], args[0]
    return None


def _inline_side(m):
    from .core import inlinable

    found = _redex(m.root)
    if found is None:
        return "not a redex or let"
    return None if inlinable(*found) else "the bound value is used more than once or inside a function"


def _ex_inline(rng):
    n = inst.size(rng)
    f = inst.pick(rng, inst.UNARY[:3])  # functions that read their argument once
    prog = inst.vector_program(n, lambda xs: fl.map(lambda x: fl.let(x * 2.0, lambda y: f(y)), xs))
    return prog, (inst.data(rng, n),), {}


rule("inline_once", "normal-form",
     "(fun(x) => b) a -> b[a / x];  let a (fun(x) => b) -> b[a / x]   (x occurs once, not inside a function, or a "
     "is an identifier, a literal or projections of one: nothing is computed twice)",
     lhs=_root_pattern(), side=_inline_side,
     build=lambda m: substitute(_redex(m.root)[0].body, _redex(m.root)[0].param.name, _redex(m.root)[1]),
     example=_ex_inline)


def _projections_only(body, name):
    """Every occurrence of `name` in `body` is `fst name` or `snd name`."""
    from ..expr import Prim, spine

    def ok(e):
        if isinstance(e, Identifier):
            return e.name != name
        if isinstance(e, Lambda):
            return e.param.name == name or ok(e.body)
        head, args = spine(e)
        if (isinstance(head, Prim) and head.name in ("fst", "snd") and len(args) == 1
                and isinstance(args[0], Identifier) and args[0].name == name):
            return True
        return all(ok(c) for c in e.children())

    return ok(body)


def _let_pair_side(m):
    from ..expr import Prim, spine

    found = _redex(m.root)
    if found is None:
        return "not a redex or let"
    f, value = found
    head, args = spine(value)
    if not (isinstance(head, Prim) and head.name == "pair" and len(args) == 2):
        return "the bound value is not a pair"
    return None if _projections_only(f.body, f.param.name) else "the pair is used whole"


def _let_pair_build(m):
    from ..expr import Prim, spine, walk

    f, value = _redex(m.root)
    a, b = spine(value)[1]
    p = f.param.name
    taken = {x.name for x in walk(f.body) if isinstance(x, Identifier)} | {p}
    names = [n for n in (f"{p}_0", f"{p}_1") if n not in taken]
    if len(names) < 2:
        raise NotApplicable("no fresh names for the components")
    first = Identifier(names[0], t=a.t)
    second = Identifier(names[1], t=b.t)

    def replace(e):
        from ..expr import spine as sp

        if isinstance(e, Lambda):
            return e if e.param.name == p else Lambda(e.param, replace(e.body))
        head, args = sp(e)
        if (isinstance(head, Prim) and head.name in ("fst", "snd") and len(args) == 1
                and isinstance(args[0], Identifier) and args[0].name == p):
            return first if head.name == "fst" else second
        if isinstance(e, App):
            return App(replace(e.fun), replace(e.arg))
        return e

    body = replace(f.body)
    inner = App(App(Prim("let"), b), Lambda(second, body))
    return App(App(Prim("let"), a), Lambda(first, inner))


def _ex_let_pair(rng):
    n = inst.size(rng)
    prog = inst.vector_program(n, lambda xs: fl.map(lambda x: fl.let(fl.pair(x * 2.0, x + 1.0),
                                                                     lambda p: fl.fst(p) * fl.snd(p) + fl.fst(p)), xs))
    return prog, (inst.data(rng, n),), {}


rule("let_pair", "normal-form",
     "let (pair a b) (fun(p) => e) -> let a (fun(x) => let b (fun(y) => e[fst p := x, snd p := y]))   "
     "(p used only through fst and snd; also the redex form)",
     lhs=_root_pattern(), side=_let_pair_side, build=_let_pair_build, example=_ex_let_pair)
