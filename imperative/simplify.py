"""Conditions on indices decided from the ranges of the loops around them.

Views test indices: `pad_const` reads `select(l <= i && i < l + n, xs[i - l], v)`, `concat`
compares with the first array's length.  Inside a loop the index is often the loop variable
plus a constant, and the loop's range decides the test: a row of a padded grid at `gid + 1`
is inside for every `gid < H`.  `simplify_conditions` folds such comparisons, then the
`and`, `or`, `not`, `select` and `if` that become constant, so a kernel keeps only the tests
that can go either way (the grid's true border).

What is known: a loop variable `i` of `for i < n` or `par_for i < n` lies in [0, n - 1]
inside the loop's body, and every other size variable is a natural number.  A comparison of
two sizes `a` and `b` is decided when the bounds of `a - b` over those ranges have one sign;
anything else (products of loop variables, divisions, minima) stays as it is.
"""

from __future__ import annotations

import attrs

from functional.nat import Nat, Var

from .ir import Assign, Exp, For, If, IdxAcc, Lit, NatExp, New, Op, ParFor, Program, ProjAcc, Seq, Store, ViewAcc, seq

def _bound(n: Nat, ranges: dict, upper: bool, depth: int = 0) -> Nat | None:
    """A lower (upper: an upper) bound of `n` free of loop variables, or None.  A term
    c * i with i < count is bounded by c * 0 or c * (count - 1) by the sign of c; the count
    may name outer loops' variables, bounded in turn."""
    out = Nat.const(0)
    for mono, c in n.terms:
        if any(a not in ranges and Nat.atom(a).vars & ranges.keys() for a, _ in mono):
            return None  # a loop variable inside a division, a minimum, ...: not bounded here
        if not any(a in ranges for a, _ in mono):
            out = out + Nat.from_terms([(mono, c)])
            continue
        if len(mono) != 1 or mono[0][1] != 1:
            return None  # a product or power of loop variables: not bounded here
        var = mono[0][0]
        high = (c > 0) == upper  # which end of [0, count - 1] bounds c * var this way
        if high:
            out = out + (ranges[var] - 1) * Nat.const(c)
    if out.vars & ranges.keys():  # a count that names an outer loop's variable
        return _bound(out, ranges, upper, depth + 1) if depth < 4 else None
    return out


def _nonnegative(n: Nat) -> bool:
    """`n` >= 0 for all natural values of its size variables."""
    for mono, c in n.terms:
        if mono and (c < 0 or not all(isinstance(a, Var) and a.lo >= 0 for a, _ in mono)):
            return False
        if not mono and c < 0:
            return False
    return True


def _sign_of_difference(a: Nat, b: Nat, ranges: dict) -> str | None:
    """'nonneg' when a - b >= 0 everywhere in the ranges, 'neg' when a - b < 0, else None."""
    d = a - b
    lo = _bound(d, ranges, upper=False)
    if lo is not None and _nonnegative(lo):
        return "nonneg"
    hi = _bound(d, ranges, upper=True)
    if hi is not None and _nonnegative(Nat.const(-1) - hi):
        return "neg"
    return None


def _compare(name: str, a: Nat, b: Nat, ranges: dict) -> bool | None:
    """The value of the comparison `a name b` where the ranges decide it, else None."""
    flipped = {"gt": ("lt", b, a), "le": ("ge", b, a)}
    if name in flipped:
        name, a, b = flipped[name]
    sign = _sign_of_difference(a, b, ranges)
    if sign is None:
        return None
    return (sign == "nonneg") if name == "ge" else (sign == "neg")


def _truth(e: Exp) -> bool | None:
    return e.value if isinstance(e, Lit) and isinstance(e.value, bool) else None


def _exp(e: Exp, ranges: dict) -> Exp:
    if not isinstance(e, Op):
        return e
    args = tuple(_exp(a, ranges) for a in e.args)
    name = e.name
    if name in ("lt", "le", "gt", "ge") and all(isinstance(a, NatExp) for a in args):
        known = _compare(name, args[0].nat, args[1].nat, ranges)
        if known is not None:
            return Lit(known, e.type)
    if name in ("and", "or"):
        x, y = args
        unit = name == "and"  # true for and, false for or
        for this, other in ((x, y), (y, x)):
            t = _truth(this)
            if t is unit:
                return other
            if t is not None:
                return this  # false and _, true or _
    if name == "not" and _truth(args[0]) is not None:
        return Lit(not _truth(args[0]), e.type)
    if name == "select":
        t = _truth(args[0])
        if t is not None:
            return args[1] if t else args[2]
    return attrs.evolve(e, args=args)


def _acc(a, ranges: dict):
    if isinstance(a, Store):
        return a
    if isinstance(a, IdxAcc):
        return attrs.evolve(a, array=_acc(a.array, ranges))
    if isinstance(a, ProjAcc):
        return attrs.evolve(a, tuple_=_acc(a.tuple_, ranges))
    if isinstance(a, ViewAcc):
        return attrs.evolve(a, target=_acc(a.target, ranges))
    return a


def _cmd(c, ranges: dict):
    if isinstance(c, Assign):
        return Assign(_acc(c.acc, ranges), _exp(c.value, ranges))
    if isinstance(c, If):
        cond = _exp(c.cond, ranges)
        t = _truth(cond)
        if t is not None:
            return _cmd(c.then if t else c.orelse, ranges)
        return If(cond, _cmd(c.then, ranges), _cmd(c.orelse, ranges))
    if isinstance(c, Seq):
        return seq(*(_cmd(x, ranges) for x in c.cmds))
    if isinstance(c, (For, ParFor)):
        return attrs.evolve(c, body=_cmd(c.body, {**ranges, c.var: c.count}))
    if isinstance(c, New):
        return attrs.evolve(c, body=_cmd(c.body, ranges))
    return c


def simplify_conditions(p: Program) -> Program:
    """`p` with the index comparisons its loops' ranges decide folded (see the module)."""
    return attrs.evolve(p, body=_cmd(p.body, {}))


__all__ = ["simplify_conditions"]
