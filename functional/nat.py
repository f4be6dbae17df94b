"""Symbolic sizes ("nats") in one canonical normal form.

A nat is a Laurent polynomial with rational coefficients over *atoms*:

    nat  ::= sum_k  c_k * prod_j atom_j ^ p_j        (c_k rational, p_j non-zero integers)
    atom ::= var | floor(nat / nat) | nat % nat | min | max | nat ^ nat | exact(nat / sum) | ?unknown

Exact division by a monomial is multiplication by its inverse, so `(N / 64) * 64 == N`
and two sizes that are equal as polynomials always compare equal.  Floor division and
modulo stay atoms after simplifying them with the ranges of the variables they mention:

    (i*n + j) // n  ->  i + j // n  ->  i        when 0 <= j < n
    (i*n + j) %  n  ->  j % n       ->  j        when 0 <= j < n
    (x // a) // b   ->  x // (a*b)

Every nat is integer-valued under bindings that respect the exact divisions that built it;
`evaluate` checks that.  Sizes are non-negative in generated code, so floor division and
modulo print as C's `/` and `%`.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Callable, Iterable, Mapping, Union

import attrs

from .errors import NatError

NatLike = Union["Nat", int]

# ----------------------------------------------------------------------------------- atoms


class Atom:
    """Base of everything a monomial is a product of.  Subclasses are frozen attrs classes."""

    rank: int = 0

    @property
    def key(self) -> tuple:  # total order used by the normal form
        raise NotImplementedError

    def children(self) -> tuple["Nat", ...]:
        return ()

    def rebuild(self, children: tuple["Nat", ...]) -> "Nat":
        return Nat.atom(self)


def _optional_nat(x: NatLike | None) -> Nat | None:
    return None if x is None else as_nat(x)


@attrs.frozen
class Var(Atom):
    """A size variable.  `lo` inclusive, `hi` exclusive (None: unbounded); `multiple_of`
    records a known divisor, e.g. `N` with `multiple_of=64` lets `split 64` type-check."""

    name: str
    lo: int = 0
    hi: "Nat | None" = attrs.field(default=None, converter=_optional_nat)  # an int is made a Nat
    multiple_of: int = 1
    rank = 0

    @functools.cached_property
    def key(self) -> tuple:
        return (self.rank, self.name, self.lo, self.hi.key if self.hi is not None else (), self.multiple_of)

    def __str__(self) -> str:
        return self.name


@attrs.frozen
class Unknown(Atom):
    """A size unknown of type inference (`?3`); never appears in a finished program."""

    id: int
    rank = 1

    @functools.cached_property
    def key(self) -> tuple:
        return (self.rank, self.id)

    def __str__(self) -> str:
        return f"?{self.id}"


@attrs.frozen
class _Binary(Atom):
    a: "Nat"
    b: "Nat"

    @functools.cached_property
    def key(self) -> tuple:
        return (self.rank, self.a.key, self.b.key)

    def children(self):
        return (self.a, self.b)


@attrs.frozen
class FloorDiv(_Binary):
    rank = 2

    def rebuild(self, children):
        return floordiv(*children)


@attrs.frozen
class Mod(_Binary):
    rank = 3

    def rebuild(self, children):
        return mod(*children)


@attrs.frozen
class Min(_Binary):
    rank = 4

    def rebuild(self, children):
        return nmin(*children)


@attrs.frozen
class Max(_Binary):
    rank = 5

    def rebuild(self, children):
        return nmax(*children)


@attrs.frozen
class Pow(_Binary):
    """`a ^ b` with a symbolic exponent (constant exponents are expanded)."""

    rank = 6

    def rebuild(self, children):
        return power(*children)


@attrs.frozen
class ExactDiv(_Binary):
    """Exact division by a sum that does not divide symbolically, e.g. `N / (M + 1)`."""

    rank = 7

    def rebuild(self, children):
        return children[0] / children[1]


Mono = tuple  # tuple[tuple[Atom, int], ...] sorted by atom key


def _mono_key(mono: Mono) -> tuple:
    return tuple((a.key, p) for a, p in mono)


# Sizes built from a short text can be astronomically large: `((2^4096)^4096)^4096` or
# `(N^4096)^4096` (printed as 16 million factors).  Such sizes are refused with a NatError.
MAX_EXPONENT = 4096  # of a power of one atom (N^4096 prints as 4096 factors)
MAX_CONSTANT_BITS = 8192  # of a coefficient's numerator or denominator (2^8000 fits; printed below
# Python's 4300-digit limit of str(int))
MAX_POWER_TERMS = 1024  # of the expansion of a power of a sum


def _mono_mul(x: Mono, y: Mono) -> Mono:
    powers: dict[Atom, int] = dict(x)
    for a, p in y:
        powers[a] = powers.get(a, 0) + p
        if abs(powers[a]) > MAX_EXPONENT:
            raise NatError(f"a size with a power {powers[a]} of one atom is refused (at most {MAX_EXPONENT})")
    return tuple(sorted(((a, p) for a, p in powers.items() if p != 0), key=lambda ap: ap[0].key))


# ------------------------------------------------------------------------------------- Nat


@attrs.frozen
class Nat:
    """Canonical sum of monomials.  Build with `nat(...)`, `Var`, or arithmetic operators:
    `+ - *`, `/` (exact division), `//` (floor division), `%`, `**`."""

    terms: tuple  # tuple[tuple[Mono, Fraction], ...], sorted by monomial key, no zero coefficient

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def from_terms(terms: Iterable[tuple[Mono, Fraction]]) -> "Nat":
        acc: dict[Mono, Fraction] = {}
        for mono, c in terms:
            acc[mono] = acc[mono] + c if mono in acc else c if type(c) is Fraction else Fraction(c)
        items = sorted(((m, c) for m, c in acc.items() if c != 0), key=lambda mc: _mono_key(mc[0]))
        n = Nat(tuple(items))
        return _recombine_divmod(n) if any(isinstance(a, Mod) for m, _ in items for a, _ in m) else n

    @staticmethod
    def const(value: int | Fraction) -> "Nat":
        return Nat(((((), Fraction(value)),)) if value != 0 else ())

    @staticmethod
    def atom(a: Atom, power: int = 1) -> "Nat":
        return Nat(((((a, power),), Fraction(1)),))

    @functools.cached_property
    def key(self) -> tuple:
        return tuple((_mono_key(m), c) for m, c in self.terms)

    # -- inspection -----------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return all(not m for m, _ in self.terms)

    @property
    def value(self) -> Fraction:
        if not self.is_const:
            raise NatError(f"size {self} is not a constant")
        return self.terms[0][1] if self.terms else Fraction(0)

    def as_int(self) -> int | None:
        """The integer value of a constant nat, else None."""
        if self.is_const and self.value.denominator == 1:
            return int(self.value)
        return None

    @functools.cached_property
    def atoms(self) -> frozenset:
        """All atoms, transitively (including those inside floor/mod/...)."""
        out = set()
        for mono, _ in self.terms:
            for a, _ in mono:
                out.add(a)
                for ch in a.children():
                    out |= ch.atoms
        return frozenset(out)

    @functools.cached_property
    def vars(self) -> frozenset:
        return frozenset(a for a in self.atoms if isinstance(a, Var))

    @functools.cached_property
    def unknowns(self) -> frozenset:
        return frozenset(a for a in self.atoms if isinstance(a, Unknown))

    # -- arithmetic -----------------------------------------------------------------------
    def __add__(self, other: NatLike) -> "Nat":
        return Nat.from_terms(self.terms + as_nat(other).terms)

    __radd__ = __add__

    def __neg__(self) -> "Nat":
        return Nat(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: NatLike) -> "Nat":
        return self + (-as_nat(other))

    def __rsub__(self, other: NatLike) -> "Nat":
        return as_nat(other) - self

    def __mul__(self, other: NatLike) -> "Nat":
        o = as_nat(other)
        _check_bits(_coefficient_bits(self) + _coefficient_bits(o))
        return Nat.from_terms((_mono_mul(m1, m2), c1 * c2) for m1, c1 in self.terms for m2, c2 in o.terms)

    __rmul__ = __mul__

    def __truediv__(self, other: NatLike) -> "Nat":
        return exact_div(self, as_nat(other))

    def __rtruediv__(self, other: NatLike) -> "Nat":
        return exact_div(as_nat(other), self)

    def __floordiv__(self, other: NatLike) -> "Nat":
        return floordiv(self, as_nat(other))

    def __rfloordiv__(self, other: NatLike) -> "Nat":
        return floordiv(as_nat(other), self)

    def __mod__(self, other: NatLike) -> "Nat":
        return mod(self, as_nat(other))

    def __rmod__(self, other: NatLike) -> "Nat":
        return mod(as_nat(other), self)

    def __pow__(self, other: NatLike) -> "Nat":
        return power(self, as_nat(other))

    def __rpow__(self, other: NatLike) -> "Nat":
        return power(as_nat(other), self)

    # -- printing -------------------------------------------------------------------------
    def __str__(self) -> str:
        return _print(self, c_syntax=False)

    def __repr__(self) -> str:
        return f"Nat({self})"

    def to_c(self) -> str:
        """A C expression (integers, non-negative operands)."""
        return _print(self, c_syntax=True)

    def __bool__(self) -> bool:  # guard against `if n:` meaning "is non-zero" by accident
        raise TypeError("a Nat has no truth value; compare with == 0 explicitly")

    def __eq__(self, other) -> bool:
        if isinstance(other, int) and not isinstance(other, bool):
            other = Nat.const(other)
        return isinstance(other, Nat) and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:  # sizes are hashed again and again as memo keys in inference
        return hash(self.terms)


def _recombine_divmod(n: Nat) -> Nat:
    """`c * (a % b) + c * b * (a // b)` is `c * a` (floor division and modulo agree)."""
    terms = dict(n.terms)
    for mono, c in n.terms:
        if len(mono) != 1 or mono[0][1] != 1 or not isinstance(mono[0][0], Mod) or mono not in terms:
            continue
        m = mono[0][0]
        single = _split_monomial(m.b)
        if single is None:
            continue
        bc, bmono = single
        partner = _mono_mul(((FloorDiv(m.a, m.b), 1),), bmono)
        if terms.get(partner) == c * bc:
            del terms[mono], terms[partner]
            rest = Nat.from_terms(terms.items())
            return rest + m.a * Nat.const(c)
    return n


def as_nat(x: NatLike) -> Nat:
    if isinstance(x, Nat):
        return x
    if isinstance(x, Atom):
        return Nat.atom(x)
    if isinstance(x, bool) or not isinstance(x, (int, Fraction)):
        raise NatError(f"expected a size (int or nat), found {x!r}")
    return Nat.const(x)


def nat(name: str, lo: int = 1, hi: NatLike | None = None, multiple_of: int = 1) -> Nat:
    """A size variable.  Sizes are positive by default (`lo=1`); `hi` is exclusive."""
    if not name.isidentifier():
        raise NatError(f"size variable name {name!r} is not an identifier")
    if multiple_of < 1:
        raise NatError(f"size variable {name}: multiple_of must be >= 1, got {multiple_of}")
    return Nat.atom(Var(name, lo, as_nat(hi) if hi is not None else None, multiple_of))


def facts_text(v: Var) -> str:
    """The facts of a size binder as text: `{lo=0, hi=N, multiple_of=4}` (defaults omitted:
    a size is at least 1 unless it says otherwise)."""
    facts = []
    if v.lo != 1:
        facts.append(f"lo={v.lo}")
    if v.hi is not None:
        facts.append(f"hi={v.hi}")
    if v.multiple_of != 1:
        facts.append(f"multiple_of={v.multiple_of}")
    return "{" + ", ".join(facts) + "}" if facts else ""


def var_of(n: Nat) -> Var | None:
    """The variable if `n` is exactly one variable, else None."""
    if len(n.terms) == 1:
        mono, c = n.terms[0]
        if c == 1 and len(mono) == 1 and mono[0][1] == 1 and isinstance(mono[0][0], Var):
            return mono[0][0]
    return None


# ----------------------------------------------------------------------------- division


def _split_monomial(n: Nat) -> tuple[Fraction, Mono] | None:
    if len(n.terms) == 1:
        mono, c = n.terms[0]
        return c, mono
    return None


def _inverse_mono(mono: Mono) -> Mono:
    return tuple((a, -p) for a, p in mono)


def exact_div(a: Nat, b: Nat) -> Nat:
    if not b.terms:
        raise NatError(f"exact division of {a} by zero")
    single = _split_monomial(b)
    if single is not None:
        c, mono = single
        return a * Nat((((_inverse_mono(mono)), 1 / c),))
    quotient = _poly_div(a, b)
    if quotient is not None:
        return quotient
    return Nat.atom(ExactDiv(a, b))


def _poly_div(a: Nat, b: Nat) -> Nat | None:
    """Exact multivariate division by a sum via leading terms; None when it does not divide
    as polynomials.  Negative powers are first cleared (a = a'/ma, b = b'/mb, so a/b is
    (a'/b') * mb/ma), and leading terms are taken in a graded lexicographic order: the
    division algorithm needs an order compatible with multiplication (the normal form's
    sort order is not), and then it always terminates."""
    _, a_den = _common_denominator(a)
    _, b_den = _common_denominator(b)
    a = a * Nat(((a_den, Fraction(1)),))
    b = b * Nat(((b_den, Fraction(1)),))
    atoms = sorted({x for mono, _ in a.terms + b.terms for x, _ in mono}, key=lambda x: x.key)

    def order(term):
        powers = dict(term[0])
        return (sum(powers.values()), tuple(powers.get(x, 0) for x in atoms))

    lead_mono, lead_c = max(b.terms, key=order)
    quotient = Nat.const(0)
    rest = a
    while rest.terms:
        mono, c = max(rest.terms, key=order)
        q_mono = _mono_mul(mono, _inverse_mono(lead_mono))
        if any(p < 0 for _, p in q_mono):
            return None
        q = Nat(((q_mono, c / lead_c),))
        quotient = quotient + q
        rest = rest - q * b
    return quotient * Nat(((_mono_mul(b_den, _inverse_mono(a_den)), Fraction(1)),))


def _int_parts(n: Nat) -> tuple[int, Mono] | None:
    """`n` as positive integer constant times a monomial with positive powers, or None."""
    single = _split_monomial(n)
    if single is None:
        return None
    c, mono = single
    if c <= 0 or c.denominator != 1 or any(p < 0 for _, p in mono):
        return None
    return int(c), mono


def _divide_out(a: Nat, b: Nat) -> tuple[Nat, Nat]:
    """Write a = q*b + r where q collects the integer multiples of b in a's terms."""
    parts = _int_parts(b)
    if parts is None:
        return Nat.const(0), a
    d, bmono = parts
    q_terms, r_terms = [], []
    inv = _inverse_mono(bmono)
    for mono, c in a.terms:
        qm = _mono_mul(mono, inv)
        if c.denominator == 1 and all(p > 0 for _, p in qm):
            whole, rest = divmod(int(c), d)
            if whole:
                q_terms.append((qm, Fraction(whole)))
            if rest:
                r_terms.append((mono, Fraction(rest)))
        else:
            r_terms.append((mono, c))
    return Nat.from_terms(q_terms), Nat.from_terms(r_terms)


def _aligned_split(a: Nat, d: int) -> tuple[int, Nat, Nat] | None:
    """a = s + c with s's coefficients multiples of some g > 1 dividing d, and 0 <= c < g:
    then a // d = s // d and a % d = s % d + c (s = g s', d = g d': the remainder of s is
    a multiple of g, at most d - g).  The largest such g, or None."""
    if not is_nonneg(a):
        return None
    # only terms that are whole numbers on their own go into s: an integer coefficient times
    # atoms with positive powers (2 N / M may be an integer while N / M is not)
    whole = [(m, c) for m, c in a.terms if m and c.denominator == 1 and all(p > 0 for _, p in m)]
    for g in _divisors_desc(d):
        s = Nat.from_terms([(m, c) for m, c in whole if int(c) % g == 0])
        c = a - s
        if s.terms and not s.is_const and is_nonneg(s) and is_nonneg(c) and proves_lt(c, Nat.const(g)):
            return g, s, c
    return None


def _divisors_desc(d: int) -> list[int]:
    """The divisors of d above 1, largest first (O(sqrt d))."""
    small = [x for x in range(2, math.isqrt(d) + 1) if d % x == 0]
    return sorted(set(small) | {d // x for x in small} | {d}, reverse=True)


def _divmod_aligned(a: Nat, b: Nat, want_mod: bool) -> Nat | None:
    """(g s' + c) // (g d') = s' // d' and (g s' + c) % (g d') = g (s' % d') + c, for c < g
    (e.g. the 4 lanes of a float4 at 4 i + j: (4 i + j) % 16 = 4 (i % 4) + j)."""
    d = b.as_int()
    if d is None or d < 2:
        return None
    split = _aligned_split(a, d)
    if split is None:
        return None
    g, s, c = split
    inner = s / g
    if want_mod:
        return Nat.const(g) * mod(inner, Nat.const(d // g)) + c
    return floordiv(inner, Nat.const(d // g))


def floordiv(a: Nat, b: Nat) -> Nat:
    a, b = as_nat(a), as_nat(b)
    if not b.terms:
        raise NatError(f"floor division of {a} by zero")
    if a.is_const and b.is_const:
        return Nat.const(math.floor(a.value / b.value))
    if b == 1:
        return a
    if divides(b, a):
        return a / b
    q, r = _divide_out(a, b)
    if q.terms:
        return q + floordiv(r, b)
    if is_nonneg(r) and proves_lt(r, b):
        return Nat.const(0)
    single = _split_monomial(r)
    if single is not None and single[0] == 1 and len(single[1]) == 1:
        (inner, p) = single[1][0]
        if isinstance(inner, FloorDiv) and p == 1 and is_positive(inner.b) and is_positive(b):
            return floordiv(inner.a, inner.b * b)  # (x // a) // b == x // (a*b)
    aligned = _divmod_aligned(r, b, want_mod=False)
    if aligned is not None:
        return aligned
    return Nat.atom(FloorDiv(r, b))


def mod(a: Nat, b: Nat) -> Nat:
    a, b = as_nat(a), as_nat(b)
    if not b.terms:
        raise NatError(f"modulo of {a} by zero")
    if a.is_const and b.is_const:
        return Nat.const(a.value % b.value)
    if b == 1 or divides(b, a):
        return Nat.const(0)
    _, r = _divide_out(a, b)
    if is_nonneg(r) and proves_lt(r, b):
        return r
    single = _split_monomial(r)
    if single is not None and single[0] == 1 and len(single[1]) == 1:
        (inner, p) = single[1][0]
        if isinstance(inner, Mod) and p == 1 and divides(b, inner.b):
            return mod(inner.a, b)  # (x % (k*b)) % b == x % b
    aligned = _divmod_aligned(r, b, want_mod=True)
    if aligned is not None:
        return aligned
    return Nat.atom(Mod(r, b))


def _coefficient_bits(n: Nat) -> int:
    return max((max(c.numerator.bit_length(), c.denominator.bit_length()) for _, c in n.terms), default=0)


def _check_bits(bits: int) -> None:
    if bits > MAX_CONSTANT_BITS:
        raise NatError(f"a size with a constant of about {bits} bits is refused (at most {MAX_CONSTANT_BITS})")


def _check_power(a: Nat, k: int) -> None:
    """Refuse a^k before computing it when the result would be absurdly large."""
    if k > MAX_EXPONENT:
        raise NatError(f"exponent {k} is too large for a size (at most {MAX_EXPONENT})")
    degree = max((abs(p) for mono, _ in a.terms for _, p in mono), default=0)
    if degree * k > MAX_EXPONENT:  # the message leaves `a` out: N^4096 prints as 4096 factors
        raise NatError(f"a power of degree {degree * k} is refused as a size (at most {MAX_EXPONENT})")
    _check_bits((_coefficient_bits(a) + max(0, len(a.terms) - 1).bit_length()) * k)
    if len(a.terms) > 1 and math.comb(k + len(a.terms) - 1, len(a.terms) - 1) > MAX_POWER_TERMS:
        raise NatError(f"a power of a sum of {len(a.terms)} terms to the {k} is refused as a size: its expansion "
                       f"has more than {MAX_POWER_TERMS} terms")


def power(a: Nat, e: Nat) -> Nat:
    a, e = as_nat(a), as_nat(e)
    k = e.as_int()
    if k is not None:
        _check_power(a, abs(k))
        if k >= 0:
            return functools.reduce(lambda x, y: x * y, [a] * k, Nat.const(1))
        return Nat.const(1) / power(a, Nat.const(-k))
    const_part = Fraction(0)
    for mono, c in e.terms:
        if not mono:
            const_part = c
    if const_part.denominator == 1 and const_part != 0:
        return power(a, Nat.const(int(const_part))) * power(a, e - int(const_part))
    if a == 1:
        return Nat.const(1)
    return Nat.atom(Pow(a, e))


def _ordered(a: Nat, b: Nat) -> tuple[Nat, Nat]:
    return (a, b) if a.key <= b.key else (b, a)


def nmin(a: NatLike, b: NatLike) -> Nat:
    a, b = as_nat(a), as_nat(b)
    if is_nonneg(b - a):
        return a
    if is_nonneg(a - b):
        return b
    return Nat.atom(Min(*_ordered(a, b)))


def nmax(a: NatLike, b: NatLike) -> Nat:
    a, b = as_nat(a), as_nat(b)
    if is_nonneg(b - a):
        return b
    if is_nonneg(a - b):
        return a
    return Nat.atom(Max(*_ordered(a, b)))


# ------------------------------------------------------------------------ range reasoning


def _is_free(atom: Atom) -> bool:
    """Free atoms stay symbolic in bounds; bounded ones are replaced by their range."""
    if isinstance(atom, Var):
        return atom.hi is None
    if isinstance(atom, Unknown):
        return True
    return all(all(_is_free(x) for x in ch.atoms) for ch in atom.children()) and not isinstance(
        atom, (Mod, FloorDiv, Min, Max)
    )


def _free_lo(atom: Atom) -> int | None:
    """Known integer lower bound of a free atom, None if unknown."""
    if isinstance(atom, Var):
        m = atom.multiple_of
        return -(-atom.lo // m) * m if atom.lo > 0 else atom.lo
    if isinstance(atom, Pow):
        return 1 if is_positive(atom.a) and is_nonneg(atom.b) else None
    if isinstance(atom, ExactDiv):
        return 0 if is_nonneg(atom.a) and is_positive(atom.b) else None
    return None


def _atom_range(atom: Atom) -> tuple[Nat, Nat] | None:
    """Inclusive (lo, hi) of a bounded atom, in rationals."""
    if isinstance(atom, Var):
        return Nat.const(atom.lo), atom.hi - 1
    if isinstance(atom, Mod):
        return (Nat.const(0), atom.b - 1) if is_positive(atom.b) and is_nonneg(atom.a) else None
    if isinstance(atom, FloorDiv):
        lo, hi = _bound(atom.a, False), _bound(atom.a, True)
        if lo is None or hi is None or not is_positive(atom.b):
            return None
        low = (lo - atom.b + 1) / atom.b
        if not _structurally_nonneg(low) and is_nonneg(lo):
            low = Nat.const(0)  # floor of a non-negative value by a positive one
        return low, hi / atom.b
    if isinstance(atom, Pow):  # a >= 1 and e >= 0 (integers): 1 <= a^e <= hi(a)^hi(e)
        hi_a, hi_e = _bound(atom.a, True), _bound(atom.b, True)
        if hi_a is None or hi_e is None or not (is_positive(atom.a) and is_nonneg(atom.b)):
            return None
        return Nat.const(1), power(hi_a, hi_e)
    if isinstance(atom, Min):
        lo_a, lo_b = _bound(atom.a, False), _bound(atom.b, False)
        hi = _bound(atom.a, True)
        if lo_a is None or lo_b is None or hi is None:
            return None
        lo = nmin(lo_a, lo_b)
        if any(isinstance(x, Min) for x in lo.atoms):  # undecided: bound it by a constant
            low_a, low_b = _free_lower(lo_a), _free_lower(lo_b)
            if low_a is None or low_b is None:
                return None
            lo = Nat.const(min(low_a, low_b))
        return lo, hi
    if isinstance(atom, Max):
        hi_a, hi_b = _bound(atom.a, True), _bound(atom.b, True)
        lo = _bound(atom.a, False)
        if hi_a is None or hi_b is None or lo is None:
            return None
        return lo, nmax(hi_a, hi_b)
    return None


def _structurally_nonneg(n: Nat) -> bool:
    for mono, c in n.terms:
        if c < 0:
            return False
        for a, _ in mono:
            lo = _free_lo(a) if _is_free(a) else None
            if lo is None or lo < 0:
                return False
    return True


def _bound_once(n: Nat, upper: bool) -> Nat | None:
    total = Nat.const(0)
    for mono, c in n.terms:
        want_upper = upper if c > 0 else not upper
        factor = Nat.const(c)
        for a, p in mono:
            if _is_free(a):
                lo = _free_lo(a)
                if lo is None or lo < 0:
                    return None
                factor = factor * Nat.atom(a, p)
                continue
            if p < 0:
                return None
            rng = _atom_range(a)
            linear = len(mono) == 1 and p == 1  # c * a: monotone whatever a's sign
            if rng is None or not (linear or _structurally_nonneg(rng[0])):
                return None
            factor = factor * power(rng[1] if want_upper else rng[0], Nat.const(p))
        total = total + factor
    return total


def _nested_floors(n: Nat) -> Nat:
    """`n` with each `x // d` written `k * (x // (k d)) + (x // d) % k` where `x // (k d)` occurs
    too (d, k constants, the smallest such k d): the same value (floor division by d, then by
    k, is floor division by k d), but bounded as a whole: `(N // 32) - 32 * (N // 1024)` is
    `(N // 32) % 32`, in [0, 31], where bounding its two floors apart gives [-31/32, ...]."""
    for _ in range(len(n.terms) + 1):
        floors = {a for mono, _ in n.terms for a, p in mono
                  if p == 1 and isinstance(a, FloorDiv) and (a.b.as_int() or 0) > 0}
        pair = None
        for small in sorted(floors, key=lambda a: a.key):
            d = small.b.as_int()
            larger = [a.b.as_int() for a in floors if a.a == small.a and a.b.as_int() % d == 0 and a.b.as_int() > d]
            if larger:
                pair = small, min(larger) // d
                break
        if pair is None:
            return n
        small, k = pair
        rewritten = (Nat.const(k) * Nat.atom(FloorDiv(small.a, small.b * k))
                     + Nat.atom(Mod(Nat.atom(small), Nat.const(k))))
        total = Nat.const(0)
        for mono, c in n.terms:
            if (small, 1) in mono:
                rest = tuple(ap for ap in mono if ap != (small, 1))
                total = total + Nat(((rest, c),)) * rewritten
            else:
                total = total + Nat(((mono, c),))
        n = total
    return n


def _bound(n: Nat, upper: bool) -> Nat | None:
    """A bound of `n` with every bounded atom eliminated (free size variables remain)."""
    n = _nested_floors(n)
    for _ in range(16):
        if all(_is_free(a) for mono, _ in n.terms for a, _ in mono):
            return n
        n = _bound_once(n, upper)
        if n is None:
            return None
    return None


def _free_lower(n: Nat) -> Fraction | None:
    """Numeric lower bound of a nat over free atoms, using their known lower bounds."""
    total = Fraction(0)
    for mono, c in n.terms:
        if not mono:
            total += c
            continue
        if c < 0:
            return None
        lows = [_free_lo(a) for a, _ in mono]
        if any(lo is None or lo < 0 for lo in lows):
            return None
        prod = Fraction(1)
        for (_, p), lo in zip(mono, lows):
            prod *= Fraction(lo) ** p if p > 0 else 0
        total += c * prod
    return total


def _floors_as_remainders(n: Nat) -> Nat:
    """`n` with each top-level `x // d` (d a positive constant) written `(x - x % d) / d`: the
    same value, and `N - 32 * (N // 32)` becomes `N % 32`, in [0, 31], where a bounded N
    (`hi` given) and its floor bounded apart give [-4998, 4999] for N < 5000."""
    floors = [a for mono, _ in n.terms for a, p in mono if isinstance(a, FloorDiv) and (a.b.as_int() or 0) > 0]
    for floor in dict.fromkeys(floors):
        d = floor.b.as_int()
        rewritten = (floor.a - Nat.atom(Mod(floor.a, floor.b))) * Nat.const(Fraction(1, d))
        total = Nat.const(0)
        for mono, c in n.terms:
            p = dict(mono).get(floor, 0)
            rest = Nat(((tuple(ap for ap in mono if ap[0] != floor), c),))
            total = total + (rest * power(rewritten, Nat.const(p)) if p > 0 else Nat(((mono, c),)))
        n = total
    return n


def _floors_at_least(n: Nat) -> Nat:
    """`n` with each `c * (x // d)` (c > 0, d a positive constant) written `c * k`, k the floor of
    x's least value over d: a lower bound of `n`, tighter where x's own lower bound is not
    (`8 * ((2 N + 7) // 8) - 8` is at least 0 for N >= 1; `(x - d + 1) / d` gives 2 N - 8)."""
    total = Nat.const(0)
    for mono, c in n.terms:
        floor = mono[0][0] if len(mono) == 1 and mono[0][1] == 1 else None
        if c > 0 and isinstance(floor, FloorDiv) and (floor.b.as_int() or 0) > 0:
            least = _bound(floor.a, upper=False)
            low = _free_lower(least) if least is not None else None
            if low is not None:
                total = total + Nat.const(c * (low // floor.b.as_int()))
                continue
        total = total + Nat(((mono, c),))
    return total


# The integer operations of the functional language that sizes have too, by primitive name:
# an index computed from loop indices and sizes by them is a size expression.
ARITHMETIC = {"add": lambda a, b: as_nat(a) + as_nat(b), "sub": lambda a, b: as_nat(a) - as_nat(b),
              "mul": lambda a, b: as_nat(a) * as_nat(b), "min": lambda a, b: nmin(a, b),
              "max": lambda a, b: nmax(a, b)}


def is_nonneg(n: NatLike) -> bool:
    """True when `n >= 0` is provable from variable ranges (False means: not proven): the
    bounds of `n` as it is, with its floors written as remainders (`_floors_as_remainders`), or
    with its floors at their least values (`_floors_at_least`)."""
    n = as_nat(n)
    for form in (n, _floors_as_remainders(n), _floors_at_least(n)):
        lb = _bound(form, upper=False)
        low = _free_lower(lb) if lb is not None else None
        if low is not None and low >= 0:
            return True
    return False


def is_positive(n: NatLike) -> bool:
    """True when `n > 0` is provable (sizes are integers, so `n - 1 >= 0` suffices when n is
    integral; we prove the rational form `n > 0` conservatively as `n >= 1` or lower bound > 0)."""
    n = as_nat(n)
    lb = _bound(n, upper=False)
    if lb is None:
        return False
    low = _free_lower(lb)
    return low is not None and low > 0


def proves_lt(a: NatLike, b: NatLike) -> bool:
    """True when `a < b` is provable; both are integer-valued so it is `b - a - 1 >= 0`."""
    return is_nonneg(as_nat(b) - as_nat(a) - 1)


def in_range(i: NatLike, n: NatLike) -> bool:
    """True when `0 <= i < n` is provable: an index `i` within an array of length `n`."""
    return is_nonneg(i) and proves_lt(i, n)


def upper_bound(n: NatLike) -> Nat | None:
    """Inclusive upper bound over free size variables (bounded variables eliminated)."""
    return _bound(as_nat(n), True)


def lower_bound(n: NatLike) -> Nat | None:
    return _bound(as_nat(n), False)


def is_integral(n: NatLike) -> bool:
    """True when `n` is provably an integer for every admissible binding."""
    n = as_nat(n)
    for mono, c in n.terms:
        if any(p < 0 for _, p in mono):
            return False
        mult = 1
        for a, p in mono:
            if isinstance(a, Var):
                mult *= a.multiple_of**p
        if (c * mult).denominator != 1:
            return False
    return True


def divides(d: NatLike, n: NatLike) -> bool:
    """True when `d` provably divides `n`."""
    d, n = as_nat(d), as_nat(n)
    if not d.terms:
        return False
    if _split_monomial(d) is None:  # a sum: it divides only if polynomial division succeeds
        quotient = _poly_div(n, d)  # (n / d would hide a failure in an ExactDiv atom)
        return quotient is not None and is_integral(quotient)
    return is_integral(n / d)


# ------------------------------------------------------------------------ substitution


def substitute(n: Nat, mapping: Mapping[Atom, Nat] | Callable[[Atom], Nat | None]) -> Nat:
    """Replace atoms (recursively inside floor/mod/... too) and re-normalise."""
    lookup = mapping if callable(mapping) else mapping.get
    total: Nat | None = None
    for mono, c in n.terms:
        term: Nat | None = None  # the product of the factors so far (None: 1)
        for a, p in mono:
            rep = lookup(a)
            if rep is None:
                kids = a.children()
                rep = a.rebuild(tuple(substitute(k, lookup) for k in kids)) if kids else Nat.atom(a)
            factor = rep if p == 1 else power(rep, Nat.const(p))
            term = factor if term is None else term * factor
        # x * 1 and 0 + x skipped: every Nat is in normal form already
        term = Nat.const(c) if term is None else term if c == 1 else Nat.const(c) * term
        total = term if total is None else total + term
    return Nat.const(0) if total is None else total


def evaluate(n: NatLike, env: Mapping[str, object]):
    """Value of `n` with variables bound by name; works for ints and NumPy integer arrays.
    Raises NatError for unbound variables and for inexact division."""
    n = as_nat(n)
    num, den = 0, 1
    for mono, c in n.terms:
        tn, td = c.numerator, c.denominator
        for a, p in mono:
            v = _eval_atom(a, env)
            if p > 0:
                tn = tn * v**p
            else:
                td = td * v ** (-p)
        num, den = num * td + tn * den, den * td
    import numpy as np

    if np.any(np.asarray(den) == 0):
        raise NatError(f"size {n} divides by zero under {dict(_printable(env))}")
    try:
        bad = np.any(np.asarray(num) % np.asarray(den) != 0)
    except ZeroDivisionError:
        bad = True
    if bad:
        raise NatError(f"size {n} is not an integer under {dict(_printable(env))}")
    return num // den


def _printable(env):
    return {k: v for k, v in env.items() if not hasattr(v, "shape") or v.shape == ()}


def _eval_atom(a: Atom, env):
    if isinstance(a, Var):
        if a.name not in env:
            raise NatError(f"size variable {a.name} is not bound")
        return env[a.name]
    if isinstance(a, Unknown):
        raise NatError(f"unsolved size {a}")
    x, y = evaluate(a.a, env), evaluate(a.b, env)
    if isinstance(a, (FloorDiv, Mod, ExactDiv)):
        import numpy as np

        if np.any(np.asarray(y) == 0):
            raise NatError(f"size {Nat.atom(a)} divides by zero under {dict(_printable(env))}")
    if isinstance(a, FloorDiv):
        return x // y
    if isinstance(a, Mod):
        return x % y
    if isinstance(a, Pow):
        return x**y
    if isinstance(a, ExactDiv):
        if (x % y != 0) if isinstance(x % y, int) else bool((x % y != 0).any()):
            raise NatError(f"size {x} / {y} is not exact")
        return x // y
    import numpy as np

    if isinstance(a, Min):
        return np.minimum(x, y) if hasattr(x, "shape") or hasattr(y, "shape") else min(x, y)
    return np.maximum(x, y) if hasattr(x, "shape") or hasattr(y, "shape") else max(x, y)


# ------------------------------------------------------------------------------ printing

_PREC_SUM, _PREC_PROD, _PREC_ATOM = 1, 2, 3


def _print(n: Nat, c_syntax: bool) -> str:
    return _print_prec(n, c_syntax)[0]


def _common_denominator(n: Nat) -> tuple[int, Mono]:
    den = 1
    neg: dict[Atom, int] = {}
    for mono, c in n.terms:
        den = den * c.denominator // math.gcd(den, c.denominator)
        for a, p in mono:
            if p < 0:
                neg[a] = max(neg.get(a, 0), -p)
    return den, tuple(sorted(neg.items(), key=lambda ap: ap[0].key))


def _divisible_var(mono: Mono, den: int) -> Var | None:
    """A size variable of `mono` known to be a multiple of `den`."""
    for a, p in mono:
        if isinstance(a, Var) and p >= 1 and a.multiple_of % den == 0:
            return a
    return None


def _print_exact_quotients(n: Nat, c: bool) -> tuple[str, int] | None:
    """`k/d * V * rest` with V a multiple of d printed as `k * (V / d) * rest`: C evaluates
    the exact quotient first, where a common denominator `(... + k * V * rest) / d` would
    multiply first and can overflow (N * i for N = 2^24, i = 4096).  None when no term is
    such a term."""
    exact = [(mono, coef, v) for mono, coef in n.terms
             if coef.denominator != 1 and (v := _divisible_var(mono, coef.denominator)) is not None]
    if not exact:
        return None
    rest = Nat.from_terms((m, k) for m, k in n.terms if all(m is not e[0] for e in exact))
    parts = [] if not rest.terms else [_print_prec(rest, c)[0]]
    for mono, coef, v in exact:
        others = [_print_factor(a, p - (a == v), c) for a, p in mono if p - (a == v) > 0]
        k = coef * coef.denominator  # the numerator
        alone = abs(k) == 1 and not others
        quotient = f"{v} / {coef.denominator}" if alone else f"({v} / {coef.denominator})"
        body = " * ".join(([str(abs(int(k)))] if abs(k) != 1 else []) + [quotient] + others)
        parts.append(("-" if k < 0 else "") + body if not parts else (" - " if k < 0 else " + ") + body)
    text = "".join(parts)
    return text, (_PREC_SUM if len(n.terms) > 1 or exact[0][1] < 0 else _PREC_PROD)


def _print_prec(n: Nat, c: bool) -> tuple[str, int]:
    quotients = _print_exact_quotients(n, c) if c else None
    if quotients is not None:
        return quotients
    den, den_mono = _common_denominator(n)
    if den != 1 or den_mono:
        numer = n * Nat(((den_mono, Fraction(den)),))
        num_s, num_p = _print_prec(numer, c)
        den_n = Nat(((den_mono, Fraction(den)),))
        den_s, den_p = _print_prec(den_n, c)
        if num_p < _PREC_PROD:
            num_s = f"({num_s})"
        if den_p < _PREC_ATOM:
            den_s = f"({den_s})"
        return f"{num_s} / {den_s}", _PREC_PROD
    if not n.terms:
        return "0", _PREC_ATOM
    parts = []
    for i, (mono, coef) in enumerate(reversed(n.terms)):  # highest degree first
        k = int(coef)
        factors = [_print_factor(a, p, c) for a, p in mono]
        if not factors:
            body = str(abs(k))
        elif abs(k) == 1:
            body = " * ".join(factors)
        else:
            body = " * ".join([str(abs(k))] + factors)
        if i == 0:
            parts.append(("-" if k < 0 else "") + body)
        else:
            parts.append((" - " if k < 0 else " + ") + body)
    text = "".join(parts)
    if len(n.terms) > 1:
        return text, _PREC_SUM
    mono, coef = n.terms[0]
    if coef < 0:
        return text, _PREC_SUM
    if len(mono) + (abs(int(coef)) != 1) > 1 or (mono and mono[0][1] > 1):
        return text, _PREC_PROD
    return text, _PREC_ATOM


def _print_factor(a: Atom, p: int, c: bool) -> str:
    base = _print_atom(a, c)
    return " * ".join([base] * p)


def _wrap(n: Nat, c: bool, min_prec: int) -> str:
    s, p = _print_prec(n, c)
    return f"({s})" if p < min_prec else s


def _print_atom(a: Atom, c: bool) -> str:
    if isinstance(a, (Var, Unknown)):
        return str(a)
    if isinstance(a, FloorDiv):
        num, den = _wrap(a.a, c, _PREC_PROD), _wrap(a.b, c, _PREC_ATOM)
        if c and not is_nonneg(a.a):  # C's `/` truncates; a nat's floor division floors
            return f"(({num}) >= 0 ? ({num}) / {den} : -((-({num}) + {den} - 1) / {den}))"
        return f"({num} {'/' if c else '//'} {den})"
    if isinstance(a, Mod):
        num, den = _wrap(a.a, c, _PREC_PROD), _wrap(a.b, c, _PREC_ATOM)
        if c and not is_nonneg(a.a):  # C's `%` keeps the sign of the dividend
            return f"((({num}) % {den} + {den}) % {den})"
        return f"({num} % {den})"
    if isinstance(a, (Min, Max)):
        x, y = _print(a.a, c), _print(a.b, c)
        if c:  # a conditional, not OpenCL's integer min/max: PoCL vectorises it (a clamped 2D stencil: 30x)
            return f"(({x}) {'<' if isinstance(a, Min) else '>'} ({y}) ? ({x}) : ({y}))"
        return f"{'min' if isinstance(a, Min) else 'max'}({x}, {y})"
    if isinstance(a, Pow):
        if c:
            if a.a == 2:
                return f"(1 << {_wrap(a.b, c, _PREC_ATOM)})"
            raise NatError(f"cannot print {_print_atom(a, False)} as C: only powers of 2 are supported")
        return f"{_wrap(a.a, c, _PREC_ATOM)}^{_wrap(a.b, c, _PREC_ATOM)}"
    if isinstance(a, ExactDiv):
        return f"({_wrap(a.a, c, _PREC_PROD)} / {_wrap(a.b, c, _PREC_ATOM)})"
    raise NatError(f"unknown atom {a!r}")
