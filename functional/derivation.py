"""Derivations: the record of a rewrite, printable, storable as text, replayable.

A derivation is the original program plus the steps that rewrote it (rule, parameters,
path).  Its text form uses only the program's textual form, rule names, parameter sizes
as text and paths, so loading one never evaluates Python:

    program: fun(N: nat{multiple_of=4}, xs: N.f32) => map (fun(x) => x * 2.0) xs
    step: split_join {"n": "4"} 1.0
"""

from __future__ import annotations

import json

import attrs

from .errors import ParseError, StrategyError
from .expr import Expr
from .infer import infer
from .nat import Nat
from .strategies import Step, Strategy, at_path, replace_at
from .syntax import _Parser, parse


@attrs.frozen
class Derivation:
    program: Expr
    steps: tuple[Step, ...]

    def __str__(self) -> str:
        lines = [f"program: {self.program}"] + [f"  {k + 1}. {s}" for k, s in enumerate(self.steps)]
        return "\n".join(lines)

    def to_text(self) -> str:
        lines = [f"program: {self.program}"]
        for s in self.steps:
            params = json.dumps({k: _param_text(v) for k, v in s.params}, sort_keys=True)
            lines.append(f"step: {s.rule} {params} {'.'.join(map(str, s.path)) or 'root'}")
        return "\n".join(lines) + "\n"

    @staticmethod
    def from_text(text: str, user_funs=None) -> "Derivation":
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines or not lines[0].startswith("program: "):
            raise ParseError("a derivation starts with 'program: '", where=lines[0] if lines else "empty text")
        program = parse(lines[0][len("program: "):], user_funs)
        steps = []
        for k, ln in enumerate(lines[1:], start=2):
            if not ln.startswith("step: "):
                raise ParseError("expected 'step: RULE {params} PATH'", where=ln, origin=f"line {k}")
            try:
                name, rest = ln[len("step: "):].split(" ", 1)
                params_text, path_text = rest.rsplit(" ", 1)
                params = {key: _param_value(v) for key, v in json.loads(params_text).items()}
                path = () if path_text == "root" else tuple(int(x) for x in path_text.split("."))
            except (ValueError, json.JSONDecodeError) as exc:
                raise ParseError(f"malformed step: {exc}", where=ln, origin=f"line {k}") from None
            steps.append(Step(name, tuple(sorted(params.items())), path))
        return Derivation(program, tuple(steps))

    def replay(self) -> Expr:
        """Apply the steps again; the first one that does not apply is reported."""
        from .rules import RULES

        e = infer(self.program)
        for k, s in enumerate(self.steps, start=1):
            r = RULES.get(s.rule)
            if r is None:
                raise StrategyError(f"step {k}: unknown rule {s.rule!r}")
            try:
                node = at_path(e, s.path)
            except (IndexError, AttributeError):
                raise StrategyError(f"step {k} ({s}): the path does not exist in the program") from None
            result = r.strategy(**dict(s.params))(node)
            if not result.ok:
                raise StrategyError(f"step {k} ({s}) does not apply: {result.reason}")
            e = infer(replace_at(e, s.path, result.expr))
        return e


def _param_text(v) -> str:
    return str(v)


def _param_value(text: str):
    if not isinstance(text, str):
        raise ValueError(f"parameter values are text, got {text!r}")
    p = _Parser(text, None)
    n = p.nat({})
    if p.peek()[0] != "eof":
        raise ValueError(f"parameter {text!r} is not a size")
    return n if not isinstance(n, Nat) or n.as_int() is None else n


def derive(program: Expr, strategy: Strategy) -> tuple[Expr, Derivation]:
    """Run `strategy` on `program`; return the result and its derivation."""
    typed = program if program.t is not None else infer(program)
    r = strategy(typed)
    if not r.ok:
        raise StrategyError(r.reason)
    return infer(r.expr), Derivation(program, r.steps)
