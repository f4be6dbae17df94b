"""Calls of a sign-symmetric function on one magnitude: `share_sign_symmetric_calls`.

Black-Scholes takes the cumulative normal of d1 and of -d1, and of d2 and -d2: four erfc calls
per option, written erfc(-d1 / sqrt 2) and erfc(-(-d1) / sqrt 2).  Each call is a polynomial, an
exponential and two divisions, and on the H100 that kernel was issue-bound (88% of the issue
slots busy, DRAM 54%: benchmarks/issue13_counters.json).  A function's symmetry under negation
(functional.primitives.SIGN_SYMMETRY) gives f(x) and f(-x) from one call on their common
magnitude, and share_common_values, the pass after this one, computes that call once.

An argument's sign comes out exactly (IEEE rounding is symmetric under negation):

    neg x          sign -sign(x),        magnitude magnitude(x)
    a * b, a / b   sign sign(a) sign(b), magnitude magnitude(a) * magnitude(b)  (resp. /)
    a literal c<0  sign -1,              magnitude -c
    anything else  sign +1,              magnitude itself

so e = sign(e) * magnitude(e) exactly.  With m the magnitude of a float argument e:

    odd         f(e) = f(m), or -f(m) where the sign is -1           (where e is not m already)
    even        f(e) = f(m)
    complement  erfc(e) = (e < 0 ? 2 - erfc(|m|) : erfc(|m|)),  e < 0 tested as m < 0 (m > 0 where
                the sign is -1).  Only where another erfc call of the program has the same
                magnitude (alone it saves nothing), and only on scalars (a vector's test would
                be a vector).  It is what the float32 helper computes (codegen_opencl's
                branch-free erfc), bit for bit, written without a select around the call (see
                _complement); 2 - erfc is only taken of an erfc <= 1, so nothing is lost where
                erfc(e) is tiny.
"""

from __future__ import annotations

from collections import Counter

import attrs

from functional.primitives import SIGN_SYMMETRY
from functional.types import ScalarType, VectorType, boolean

from .ir import Assign, Cmd, Exp, For, If, Lit, New, Op, ParFor, Program, Seq


def _is_float(e: Exp) -> bool:
    t = e.type.elem if isinstance(e.type, VectorType) else e.type
    return isinstance(t, ScalarType) and t.is_float


def sign_split(e: Exp) -> tuple[int, Exp]:
    """(s, m) with e = s * m exactly, s = +1 or -1 (see the module): negations pulled out of
    products and quotients of a float expression."""
    if not _is_float(e):
        return 1, e
    if isinstance(e, Lit) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool) and e.value < 0:
        return -1, attrs.evolve(e, value=-e.value)
    if isinstance(e, Op) and e.name == "neg":
        s, m = sign_split(e.args[0])
        return -s, m
    if isinstance(e, Op) and e.name in ("mul", "div"):
        (sa, ma), (sb, mb) = sign_split(e.args[0]), sign_split(e.args[1])
        if ma is e.args[0] and mb is e.args[1]:
            return sa * sb, e
        return sa * sb, attrs.evolve(e, args=(ma, mb))
    return 1, e


def _complement(e: Exp, s: int, m: Exp) -> Exp:
    """erfc(e) from erfc(|m|) by the sign of e (the module's equation), written so that erfc(|m|) is
    evaluated unconditionally (a select's branches are not: share_common_values would not share it):

        (e < 0 ? 2 : 0) + (e < 0 ? -1 : 1) * erfc(|m|)

    exact: -1 * E and 1 * E are exact, 2 + (-E) is 2 - E rounded once, 0 + E is E (E >= 0)."""
    t = e.type
    shared = Op("erfc", (), (Op("abs", (), (m,), t),), t)
    zero = Lit(0.0, t)
    negative = Op("lt", (), (m, zero), boolean) if s > 0 else Op("gt", (), (m, zero), boolean)
    offset = Op("select", (), (negative, Lit(2.0, t), zero), t)
    sign = Op("select", (), (negative, Lit(-1.0, t), Lit(1.0, t)), t)
    return Op("add", (), (offset, Op("mul", (), (sign, shared), t)), t)


def _rewrite(e: Exp, paired: frozenset, seen: set | None) -> Exp:
    """`e` with its symmetric calls rewritten, bottom-up; `seen` collects (magnitude, argument) of
    each erfc call (the first walk), `paired` holds the magnitudes of two or more arguments."""
    if not isinstance(e, Op):
        return e
    args = tuple(_rewrite(a, paired, seen) for a in e.args)
    e = e if all(a is b for a, b in zip(args, e.args)) else attrs.evolve(e, args=args)
    kind = SIGN_SYMMETRY.get(e.name)
    if kind is None or len(args) != 1 or not _is_float(args[0]):
        return e
    s, m = sign_split(args[0])
    if kind == "complement":
        if seen is not None:
            seen.add((m, args[0]))
        if m in paired and isinstance(e.type, ScalarType):
            return _complement(e, s, m)
        return e
    if m is args[0]:
        return e
    call = attrs.evolve(e, args=(m,))
    return Op("neg", (), (call,), e.type) if kind == "odd" and s < 0 else call


def _cmd(c: Cmd, f) -> Cmd:
    if isinstance(c, Assign):
        return attrs.evolve(c, value=f(c.value))
    if isinstance(c, If):
        return attrs.evolve(c, cond=f(c.cond), then=_cmd(c.then, f), orelse=_cmd(c.orelse, f))
    if isinstance(c, Seq):
        return attrs.evolve(c, cmds=tuple(_cmd(x, f) for x in c.cmds))
    if isinstance(c, (For, ParFor, New)):
        return attrs.evolve(c, body=_cmd(c.body, f))
    return c


def share_sign_symmetric_calls(p: Program) -> Program:
    """`p` with each sign-symmetric call on its argument's magnitude (see the module)."""
    seen: set = set()
    _cmd(p.body, lambda e: _rewrite(e, frozenset(), seen))
    arguments = Counter(m for m, _ in seen)  # distinct arguments per magnitude
    paired = frozenset(m for m, n in arguments.items() if n >= 2)
    return attrs.evolve(p, body=_cmd(p.body, lambda e: _rewrite(e, paired, None)))


__all__ = ["share_sign_symmetric_calls", "sign_split"]
