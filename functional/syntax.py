"""The textual form of programs: `to_text` prints, `parse` reads back, never evaluating Python.

    fun(N: nat, xs: N.f32, ys: N.f32) =>
      reduce (+) 0.0 (map (fun(p) => fst p * snd p) (zip xs ys))

Grammar (lowest precedence first):

    expr    ::= 'fun' '(' binder, ... ')' '=>' expr | infix
    binder  ::= x [':' type] | N ':' 'nat' ['{' fact, ... '}']      fact ::= lo=k | hi=nat | multiple_of=k
    infix   ::= app (op app)*       ops: || && == != < <= > >= + - * / %  (C precedence, left assoc.)
    app     ::= atom atom* | app '[' nat ']'                         (juxtaposition; size application)
    atom    ::= x | prim static* | literal | '(' expr ')' | '(' expr ',' expr ')' | '(' op ')'
    literal ::= 1 | -2 | 0.5 | true | inf | nan | f64(1.5) | u32(3)
    static  ::= nat atom (split 64, split (N / 4)) | dim | '(' 'fun' '(' i ',' n ')' '=>' nat ')'
              | scalar type (cast f64) | '{' name '(' x ':' scalar, ... ')' ':' scalar '=' "C body" '}'
    type    ::= data ['->' type] | '(' N ':' 'nat' ')' '->' type
    data    ::= size '.' data | f32 | f64 | i32 | u32 | bool | vec '[' scalar ',' nat ']' | '(' type, ... ')'

Sizes use `/` for exact division, `//` floor division, `%`, `^`, `min(a, b)`, `max(a, b)`.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable, Mapping

import attrs

from .errors import FunctionalError, ParseError
from .expr import App, Expr, Identifier, IndexFun, Lambda, Literal, NatApp, NatLambda, Prim, UserFun, spine, walk
from .nat import Nat, Var, facts_text, as_nat, floordiv, mod, nmax, nmin, power
from .nat import substitute as nat_substitute
from .primitives import DIM, INDEX, NAT, PRIMITIVES, TYPE, USERFUN
from .types import SCALARS, ArrayType, FunType, NatFunType, ScalarType, TupleType, Type, VectorType

KEYWORDS = {"fun", "nat", "true", "false", "inf", "nan", "vec", "min", "max"} | set(SCALARS)
_INFIX = {d.infix: d.name for d in PRIMITIVES.values() if d.infix}
_INFIX_NAME = {v: k for k, v in _INFIX.items()}
_PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5}
_APP_PREC, _ATOM_PREC = 10, 11

# ================================================================================ printer


def to_text(e: Expr) -> str:
    return _Printer(e).expr(e, {}, 0)


def type_text(t: Type) -> str:
    return str(t)


def _nat_atom_text(n: Nat) -> str:
    s = str(n)
    return s if (_NAME.match(s) and s not in ("min", "max")) or s.isdigit() else f"({s})"


def _literal_text(lit: Literal) -> str:
    v = lit.value
    if isinstance(v, bool):
        body = "true" if v else "false"
    elif isinstance(v, float):
        v = float(v)  # a NumPy float's repr is `np.float64(1.5)`
        body = "inf" if v == math.inf else "-inf" if v == -math.inf else "nan" if math.isnan(v) else repr(v)
    else:
        body = str(int(v))
    if lit.decl is not None:  # `bool(true)` too: the declared type is part of the program
        return f"{lit.decl.name}({body})"
    return f"({body})" if body.startswith("-") else body


_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")


def _names_in(e: Expr) -> set:
    """Every identifier name in `e`, bound or free (fresh names must avoid them all)."""
    out = set()
    for x in walk(e):
        if isinstance(x, Identifier):
            out.add(x.name)
        elif isinstance(x, Lambda):
            out.add(x.param.name)
    return out


class _Printer:
    def __init__(self, program: Expr):
        self.taken: set | None = None  # computed on the first binder that needs renaming
        self.program = program

    def expr(self, e: Expr, names: dict, prec: int) -> str:
        if isinstance(e, (Lambda, NatLambda)):
            binders, body, names = self._binders(e, names)
            text = f"fun({', '.join(binders)}) => {self.expr(body, names, 0)}"
            return f"({text})" if prec > 0 else text
        if isinstance(e, Identifier):
            return names.get(e.name, e.name)
        if isinstance(e, Literal):
            return _literal_text(e)
        if isinstance(e, Prim):
            text = self._prim(e)
            # `map (split 4) xs` rather than `map split 4 xs` (same tree, easier to read)
            return f"({text})" if e.params and prec > _APP_PREC else text
        if isinstance(e, NatApp):
            text = f"{self.expr(e.fun, names, _APP_PREC)} [{e.nat}]"
            return f"({text})" if prec > _APP_PREC else text
        if isinstance(e, App):
            return self._app(e, names, prec)
        raise TypeError(f"not an expression: {e!r}")

    def _binders(self, e: Expr, names: dict):
        binders = []
        while isinstance(e, (Lambda, NatLambda)):
            if isinstance(e, NatLambda):
                binders.append(f"{e.var.name}: nat{_facts(e.var)}")
                e = e.body
                continue
            shown = e.param.name
            if shown in KEYWORDS or shown in PRIMITIVES or not _NAME.match(shown):
                if self.taken is None:
                    self.taken = _names_in(self.program)
                shown = _fresh(shown, set(names.values()) | self.taken | KEYWORDS | set(PRIMITIVES))
                self.taken.add(shown)
            names = {**names, e.param.name: shown}
            binders.append(shown + (f": {e.param.decl}" if e.param.decl is not None else ""))
            e = e.body
        return binders, e, names

    def _prim(self, p: Prim) -> str:
        d = PRIMITIVES.get(p.name)
        if d is not None and d.infix and not p.params:
            return f"({d.infix})"
        parts = [p.name] + [_static_text(kind, v) for kind, v in zip(d.params if d else (), p.params)]
        return " ".join(parts)

    def _app(self, e: App, names: dict, prec: int) -> str:
        head, args = spine(e)
        if isinstance(head, Prim) and head.name in _INFIX_NAME and len(args) == 2:
            op = _INFIX_NAME[head.name]
            level = _PREC[op]
            left = self.expr(args[0], names, level)
            right = self.expr(args[1], names, level + 1)
            text = f"{left} {op} {right}"
            return f"({text})" if prec > level else text
        if isinstance(head, Prim) and head.name == "pair" and len(args) == 2:
            return f"({self.expr(args[0], names, 0)}, {self.expr(args[1], names, 0)})"
        text = " ".join([self.expr(head, names, _APP_PREC)] + [self.expr(a, names, _ATOM_PREC) for a in args])
        return f"({text})" if prec > _APP_PREC else text


def _facts(v: Var) -> str:
    return facts_text(v)


def _index_text(f: IndexFun) -> str:
    """`(fun(i, n) => body)`, renaming the binders if the body also mentions another size
    variable of the same name (an outer `n`)."""
    others = {v.name for v in f.body.vars if v not in (f.i, f.n)}
    i, n, body = f.i, f.n, f.body
    if i.name in others or n.name in others or i.name == n.name or not (_NAME.match(i.name) and _NAME.match(n.name)):
        avoid = others | KEYWORDS
        i = attrs.evolve(i, name=_fresh(i.name, avoid))
        n = attrs.evolve(n, name=_fresh(n.name, avoid | {i.name}))
        body = nat_substitute(body, {f.i: Nat.atom(i), f.n: Nat.atom(n)})
    return f"(fun({i.name}, {n.name}) => {body})"


def _fresh(base: str, avoid: set) -> str:
    base = re.sub(r"[^A-Za-z_0-9]", "_", base)
    if not _NAME.match(base):
        base = "x" + base
    k = 1
    while f"{base}{k}" in avoid:
        k += 1
    return f"{base}{k}"


def _static_text(kind: str, v) -> str:
    if kind == NAT:
        return _nat_atom_text(as_nat(v))
    if kind == DIM:
        return str(v)
    if kind == INDEX:
        return _index_text(v)
    if kind == TYPE:
        return str(v)
    if kind == USERFUN:
        params = ", ".join(f"{n}: {t}" for n, t in v.params)
        return f"{{{v.name}({params}): {v.result} = {json.dumps(v.c_body)}}}"
    raise TypeError(kind)


# ================================================================================= parser

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<float>\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)
    | (?P<int>\d+)
    | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
    | (?P<op>=>|->|\|\||&&|==|!=|<=|>=|//|[-+*/%<>^()\[\]{},:.=])
    )""",
    re.VERBOSE,
)
_INT_ONLY = re.compile(r"\s*(?P<int>\d+)")
_SPACE = re.compile(r"\s*")
MAX_INTEGER_DIGITS = 1000  # longer integers are refused: no size or value needs them, and int() of
# a long digit string is slow (and over sys.get_int_max_str_digits() a ValueError)


class _Parser:
    def __init__(self, text: str, user_funs: Mapping[str, Callable] | None):
        self.text = text
        self.pos = 0
        self.user_funs = dict(user_funs or {})
        # where each line starts, for `location` in O(log n): every node records its origin
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._last_scan: tuple = (None, None)  # ((pos, ints_only), token) of the latest scan
        self._sizes_read: dict = {}  # (pos, id(scope)) -> (scope, Nat or ParseError, end): see `nat`

    # -- scanning -------------------------------------------------------------------------
    def _scan(self, pos: int, ints_only: bool = False):
        # peek, at and next look at one token several times: each token is matched once
        if self._last_scan[0] == (pos, ints_only):
            return self._last_scan[1]
        token = self._scan_uncached(pos, ints_only)
        self._last_scan = ((pos, ints_only), token)
        return token

    def _scan_uncached(self, pos: int, ints_only: bool):
        if ints_only:
            m = _INT_ONLY.match(self.text, pos)
            if m:
                return "int", m.group("int"), m.end()
        m = _TOKEN.match(self.text, pos)
        if m is None:
            start = _SPACE.match(self.text, pos).end()  # no copy of the rest of the text
            if start == len(self.text):
                return "eof", "", len(self.text)
            return "bad", self.text[start], pos
        kind = m.lastgroup
        return kind, m.group(kind), m.end()

    def peek(self, ints_only: bool = False):
        kind, value, _ = self._scan(self.pos, ints_only)
        return kind, value

    def next(self, ints_only: bool = False):
        kind, value, end = self._scan(self.pos, ints_only)
        if kind == "bad":
            self.fail(f"unexpected character {value!r}")
        self.pos = end
        return kind, value

    def at(self, value: str) -> bool:
        kind, v = self.peek()
        return v == value and kind in ("op", "name")

    def accept(self, value: str) -> bool:
        if self.at(value):
            self.next()
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            self.fail(f"expected {value!r}, found {self.peek()[1] or 'end of text'!r}")

    def name(self) -> str:
        start = self.pos
        kind, v = self.next()
        if kind != "name":
            self.pos = start
            self.fail(f"expected a name, found {v or 'end of text'!r}")
        return v

    def location(self, pos: int | None = None) -> str:
        pos = _SPACE.match(self.text, self.pos if pos is None else pos).end()
        line = bisect.bisect_right(self._line_starts, pos)
        return f"{line}:{pos - self._line_starts[line - 1] + 1}"

    def int_value(self, digits: str, start: int) -> int:
        """The integer `digits` (scanned at `start`), refused when absurdly long."""
        if len(digits) > MAX_INTEGER_DIGITS:
            self.pos = start
            self.fail(f"an integer of {len(digits)} digits is too long (at most {MAX_INTEGER_DIGITS})")
        try:
            return int(digits)
        except ValueError as exc:  # over a lower sys.set_int_max_str_digits limit
            self.pos = start
            self.fail(f"the integer cannot be read: {exc}")

    def at_end(self, what: str) -> None:
        kind, v = self.peek()
        if kind == "bad":
            self.fail(f"unexpected character {v!r}")
        if kind != "eof":
            self.fail(f"unexpected {v!r} after the end of the {what}")

    def guarded(self, thunk):
        try:
            return thunk()
        except RecursionError:
            self.fail("the text is nested too deeply")

    def fail(self, message: str):
        snippet = self.text[self.pos:self.pos + 30].strip().splitlines()
        where = snippet[0] if snippet else "end of text"
        raise ParseError(message, where=where, origin=self.location())

    # -- expressions ----------------------------------------------------------------------
    def expr(self, scope: dict) -> Expr:
        if self.at("fun"):
            return self.lam(scope)
        return self.infix(scope, 1)

    def lam(self, scope: dict) -> Expr:
        origin = self.location()
        self.expect("fun")
        self.expect("(")
        binders = []
        scope = dict(scope)  # this lambda's own scope, extended in place: n binders cost n, not n^2
        while True:
            name = self.name()
            if self.accept(":"):
                if self.at("nat") and not self.followed_by_dot():
                    self.next()
                    var = self.nat_binder(name, scope)
                    scope[("nat", name)] = var
                    binders.append(var)
                else:
                    t = self.type(scope)
                    binders.append(Identifier(name, t))
                    scope[name] = True
            else:
                binders.append(Identifier(name))
                scope[name] = True
            if not self.accept(","):
                break
        self.expect(")")
        self.expect("=>")
        body = self.expr(scope)
        for b in reversed(binders):
            body = NatLambda(b, body, origin=origin) if isinstance(b, Var) else Lambda(b, body, origin=origin)
        return body

    def nat_binder(self, name: str, scope: dict) -> Var:
        lo, hi, mult = 1, None, 1
        if self.accept("{"):
            while True:
                start = self.pos
                key = self.name()
                if key not in ("lo", "hi", "multiple_of"):
                    self.pos = start
                    self.fail(f"unknown size fact {key!r} (lo, hi, multiple_of)")
                self.expect("=")
                if key == "lo":
                    lo = self.integer()
                elif key == "hi":
                    hi = self.nat(scope)
                else:
                    start = self.pos
                    mult = self.integer()
                    if mult < 1:
                        self.pos = start
                        self.fail(f"multiple_of must be at least 1, got {mult}")
                if not self.accept(","):
                    break
            self.expect("}")
        return Var(name, lo, hi, mult)

    def integer(self) -> int:
        negative = self.accept("-")
        start = self.pos
        kind, v = self.next(ints_only=True)
        if kind != "int":
            self.fail(f"expected an integer, found {v!r}")
        value = self.int_value(v, start)
        return -value if negative else value

    def infix(self, scope: dict, level: int) -> Expr:
        return self.infix_rest(self.app(scope), scope, level)

    def _operator_level(self) -> int | None:
        kind, v = self.peek()
        return _PREC.get(v) if kind == "op" else None

    def infix_rest(self, left: Expr, scope: dict, level: int = 1) -> Expr:
        """Operators of precedence `level` or tighter after `left`, left associative
        (precedence climbing: one loop per level in use, not one call per level per operand)."""
        while True:
            op_level = self._operator_level()
            if op_level is None or op_level < level:
                return left
            origin = self.location()
            op = self.next()[1]
            right = self.app(scope)
            tighter = self._operator_level()
            while tighter is not None and tighter > op_level:
                right = self.infix_rest(right, scope, op_level + 1)
                tighter = self._operator_level()
            left = App(App(Prim(_INFIX[op], origin=origin), left, origin=origin), right, origin=origin)

    def starts_atom(self) -> bool:
        kind, v = self.peek()
        if kind in ("int", "float", "name"):
            return v != "fun"
        return kind == "op" and v == "("

    def app(self, scope: dict) -> Expr:
        if self.at("-"):  # a negative literal in operand position
            start = self.pos
            self.next()
            kind, _ = self.peek()
            if kind not in ("int", "float") and not self.at("inf"):
                self.pos = start
                self.fail("unary minus applies to numeric literals only; write neg x")
            lit = self.literal(scope)
            return Literal(-lit.value, lit.decl, origin=lit.origin)
        origin = self.location()
        e = self.atom(scope)
        while True:
            if self.at("["):
                self.next()
                n = self.nat(scope)
                self.expect("]")
                e = NatApp(e, n, origin=origin)
            elif self.starts_atom():
                e = App(e, self.atom(scope), origin=origin)
            else:
                return e

    def atom(self, scope: dict) -> Expr:
        origin = self.location()
        kind, v = self.peek()
        if kind in ("int", "float") or v in ("true", "false", "inf", "nan") or v in SCALARS and kind == "name":
            return self.literal(scope)
        if kind == "name":
            self.next()
            if v in PRIMITIVES:
                return self.prim(v, scope, origin)
            if v in scope:
                return Identifier(v, origin=origin)
            if ("nat", v) in scope:
                self.fail(f"{v} is a size, not a value")
            return Identifier(v, origin=origin)
        if v == "(":
            self.next()
            if self.peek()[0] == "op" and self.peek()[1] in _INFIX:
                start = self.pos
                op = self.next()[1]
                if self.accept(")"):
                    return Prim(_INFIX[op], origin=origin)
                self.pos = start
            if self.at("-"):
                inner = self.app(scope)
                inner = self.infix_rest(inner, scope)
            else:
                inner = self.expr(scope)
            if self.accept(","):
                second = self.expr(scope)
                self.expect(")")
                return App(App(Prim("pair", origin=origin), inner, origin=origin), second, origin=origin)
            self.expect(")")
            return inner
        self.fail(f"expected an expression, found {v or 'end of text'!r}")

    def literal(self, scope: dict) -> Literal:
        origin = self.location()
        kind, v = self.peek()
        if v in SCALARS and kind == "name":  # a typed literal: f64(1.5), u32(-3), bool(true)
            self.next()
            self.expect("(")
            value = self.plain_literal(allow_minus=True)
            self.expect(")")
            return Literal(value, SCALARS[v], origin=origin)
        return Literal(self.plain_literal(allow_minus=False), origin=origin)

    def plain_literal(self, allow_minus: bool):
        start = self.pos
        negative = allow_minus and self.accept("-")
        kind, v = self.next()
        if kind == "int":
            value = self.int_value(v, start)
        elif kind == "float":
            if len(v) > MAX_INTEGER_DIGITS:
                self.pos = start
                self.fail(f"a number of {len(v)} characters is too long (at most {MAX_INTEGER_DIGITS})")
            value = float(v)
        elif kind == "name" and v in ("inf", "nan"):
            value = math.inf if v == "inf" else math.nan
        elif kind == "name" and v in ("true", "false") and not negative:
            return v == "true"
        else:
            self.pos = start
            self.fail(f"expected a literal, found {v or 'end of text'!r}")
        return -value if negative else value

    def prim(self, name: str, scope: dict, origin: str) -> Prim:
        d = PRIMITIVES[name]
        params = tuple(self.static(kind, scope) for kind in d.params)
        return Prim(name, params, origin=origin)

    def static(self, kind: str, scope: dict):
        if kind == NAT:
            return self.nat_atom(scope)
        if kind == DIM:
            return self.integer()
        if kind == TYPE:
            k, v = self.peek()
            if k == "name" and v not in SCALARS and v != "vec" and not self.followed_by_dot():
                self.fail(f"expected a type, found {v!r}")
            return self.data(scope)
        if kind == INDEX:
            self.expect("(")
            self.expect("fun")
            self.expect("(")
            i_name = self.name()
            self.expect(",")
            n_name = self.name()
            self.expect(")")
            self.expect("=>")
            n = Var(n_name, 1)
            i = Var(i_name, 0, Nat.atom(n))
            body = self.nat({**scope, ("nat", i_name): i, ("nat", n_name): n})
            self.expect(")")
            return IndexFun(i, n, body)
        if kind == USERFUN:
            self.expect("{")
            fname = self.name()
            self.expect("(")
            params = []
            while not self.at(")"):
                pname = self.name()
                self.expect(":")
                params.append((pname, self.scalar()))
                if not self.accept(","):
                    break
            self.expect(")")
            self.expect(":")
            result = self.scalar()
            self.expect("=")
            start = self.pos
            kind_, body = self.next()
            if kind_ != "string":
                self.pos = start
                self.fail("expected the C body as a string")
            try:
                c_body = json.loads(body)
            except ValueError as exc:
                self.pos = start
                self.fail(f"bad string: {exc}")
            self.expect("}")
            return UserFun(fname, tuple(params), result, c_body, self.user_funs.get(fname))
        raise AssertionError(kind)

    def scalar(self) -> ScalarType:
        start = self.pos
        v = self.name()
        if v not in SCALARS:
            self.pos = start
            self.fail(f"expected a scalar type, found {v!r}")
        return SCALARS[v]

    # -- sizes ----------------------------------------------------------------------------
    def nat_atom(self, scope: dict) -> Nat:
        kind, v = self.peek(ints_only=True)
        if kind == "int":
            start = self.pos
            self.next(ints_only=True)
            return Nat.const(self.int_value(v, start))
        if kind == "name" and not self.at_call():
            self.next()
            return self.nat_var(v, scope)
        if v == "(":
            self.next()
            n = self.nat(scope)
            self.expect(")")
            return n
        if v in ("min", "max"):
            return self.nat_primary(scope)
        self.fail(f"expected a size, found {v or 'end of text'!r}")

    def at_call(self) -> bool:
        """At `min(` or `max(` (a size variable may be called min)."""
        kind, v, end = self._scan(self.pos)
        return kind == "name" and v in ("min", "max") and self._scan(end)[1] == "("

    def followed_by_dot(self) -> bool:
        """At a size followed by `.`: `f32.f32` is an array of f32 whose length is named f32."""
        kind, _, end = self._scan(self.pos, ints_only=True)
        return kind in ("int", "name") and self._scan(end)[1] == "."

    def nat_var(self, name: str, scope: dict) -> Nat:
        var = scope.get(("nat", name))
        return Nat.atom(var if var is not None else Var(name, 1))

    def nat(self, scope: dict) -> Nat:
        """A size at the current position, remembered with where it ended (or failed): a type
        `((((f32))))` tries each parenthesis as a size first, and would otherwise read the
        sizes inside it again at every level (quadratic in the depth)."""
        key = (self.pos, id(scope))
        known = self._sizes_read.get(key)
        if known is not None:
            _scope, outcome, end = known
            self.pos = end
            if isinstance(outcome, ParseError):
                raise outcome
            return outcome
        try:
            outcome = self._nat_sum(scope)
        except ParseError as exc:
            self._sizes_read[key] = (scope, exc, self.pos)  # the scope is kept: its id stays unique
            raise
        self._sizes_read[key] = (scope, outcome, self.pos)
        return outcome

    def _nat_sum(self, scope: dict) -> Nat:
        terms = [self.nat_term(scope)]
        while self.at("+") or self.at("-"):
            op = self.next()[1]
            right = self.nat_term(scope)
            terms.append(right if op == "+" else -right)
        return _balanced(terms, lambda a, b: a + b)

    def nat_term(self, scope: dict) -> Nat:
        factors = [self.nat_factor(scope)]  # a run of `*`, multiplied at once
        while self.at("*") or self.at("/") or self.at("//") or self.at("%"):
            where = self.pos
            op = self.next()[1]
            right = self.nat_factor(scope)
            if op == "*":
                factors.append(right)
                continue
            left = self.size_op(where, _product, factors)
            fn = {"/": lambda a, b: a / b, "//": floordiv, "%": mod}[op]
            factors = [self.size_op(where, fn, left, right)]
        return self.size_op(self.pos, _product, factors)

    def nat_factor(self, scope: dict) -> Nat:
        if self.accept("-"):
            return -self.nat_factor(scope)
        base = self.nat_primary(scope)
        where = self.pos
        if self.accept("^"):
            exponent = self.nat_factor(scope)
            return self.size_op(where, power, base, exponent)  # nat.power refuses absurd exponents
        return base

    def nat_primary(self, scope: dict) -> Nat:
        if self.at_call():
            where = self.pos
            fn = nmin if self.next()[1] == "min" else nmax
            self.expect("(")
            a = self.nat(scope)
            self.expect(",")
            b = self.nat(scope)
            self.expect(")")
            return self.size_op(where, fn, a, b)
        return self.nat_atom(scope)

    def size_op(self, where: int, fn, *operands) -> Nat:
        try:
            return fn(*operands)
        except FunctionalError as exc:  # e.g. a division by zero in a size
            self.pos = where
            self.fail(exc.message)

    # -- types ----------------------------------------------------------------------------
    def type(self, scope: dict) -> Type:
        if self.at("("):
            start = self.pos
            self.next()
            if self.peek()[0] == "name":
                name_pos = self.pos
                name = self.name()
                if self.accept(":") and self.accept("nat"):
                    var = self.nat_binder(name, scope)
                    self.expect(")")
                    self.expect("->")
                    return NatFunType(var, self.type({**scope, ("nat", name): var}))
                self.pos = name_pos
            self.pos = start
        left = self.data(scope)
        if self.accept("->"):
            return FunType(left, self.type(scope))
        return left

    def data(self, scope: dict) -> Type:
        kind, v = self.peek(ints_only=True)
        if self.followed_by_dot() or (kind == "name" and v not in SCALARS and v != "vec"):
            size = self.nat_atom(scope)
            self.expect(".")
            return ArrayType(size, self.data(scope))
        if kind == "name" and v in SCALARS:
            self.next()
            return SCALARS[v]
        if v == "vec":
            self.next()
            self.expect("[")
            elem = self.scalar()
            self.expect(",")
            width = self.nat(scope)
            self.expect("]")
            return VectorType(elem, width)
        if v == "(":
            start = self.pos
            self.next()
            as_size: tuple[ParseError, int] | None = None
            try:  # a parenthesised size: (N / 64).f32
                size = self.nat(scope)
                if self.accept(")") and self.accept("."):
                    return ArrayType(size, self.data(scope))
            except ParseError as exc:
                as_size = exc, self.pos
            self.pos = start
            self.next()
            try:
                elems = [self.type(scope)]
                while self.accept(","):
                    elems.append(self.type(scope))
                self.expect(")")
            except ParseError:
                if as_size is not None and as_size[1] > self.pos:
                    raise as_size[0] from None  # read further as a size: `((2^4096)^4096).f32`
                raise
            return elems[0] if len(elems) == 1 else TupleType(tuple(elems))
        self.fail(f"expected a type, found {v or 'end of text'!r}")


def _balanced(items: list, combine):
    """items[0] op items[1] op ... for an associative op, combined pairwise: a sum of n distinct
    sizes then costs n log n, not n^2 (each sum is as long as its terms)."""
    while len(items) > 1:
        items = [combine(items[k], items[k + 1]) if k + 1 < len(items) else items[k] for k in range(0, len(items), 2)]
    return items[0]


def _product(factors: list) -> Nat:
    return _balanced(factors, lambda a, b: a * b)


def parse(text: str, user_funs: Mapping[str, Callable] | None = None) -> Expr:
    """Read a program printed by `str(program)`.  `user_funs` supplies the NumPy meanings of
    user functions by name (text carries only their C bodies)."""
    if not isinstance(text, str):
        raise ParseError(f"parse expects program text, got {type(text).__name__}")
    p = _Parser(text, user_funs)
    e = p.guarded(lambda: p.expr({}))
    p.at_end("program")
    return e


def parse_type(text: str) -> Type:
    """Read a type printed by `str(type)`, e.g. `(N: nat) -> N.f32 -> f32`."""
    if not isinstance(text, str):
        raise ParseError(f"parse_type expects type text, got {type(text).__name__}")
    p = _Parser(text, None)
    t = p.guarded(lambda: p.type({}))
    p.at_end("type")
    return t
