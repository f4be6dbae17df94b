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
from .expr import Expr, NatLambda, walk
from .infer import infer
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
        if not isinstance(text, str):
            raise ParseError(f"a derivation is text, got {type(text).__name__}")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines or not lines[0].startswith("program: "):
            raise ParseError("a derivation starts with 'program: '", where=_excerpt(lines[0]) if lines else "empty text")
        program = parse(lines[0][len("program: "):], user_funs)
        sizes = {("nat", x.var.name): x.var for x in reversed(list(walk(program))) if isinstance(x, NatLambda)}
        steps = []
        for k, ln in enumerate(lines[1:], start=2):
            if not ln.startswith("step: "):
                raise ParseError("expected 'step: RULE {params} PATH'", where=_excerpt(ln), origin=f"line {k}")
            try:
                name, rest = ln[len("step: "):].split(" ", 1)
                params_text, path_text = rest.rsplit(" ", 1)
                params = json.loads(params_text)
                if not isinstance(params, dict):
                    raise ValueError(f"parameters are a JSON object, got {params_text}")
                params = {key: _param_value(v, sizes) for key, v in params.items()}
                if path_text != "root" and not all(x.isdigit() for x in path_text.split(".")):
                    raise ValueError(f"a path is 'root' or child indices like 0.1.0, got {path_text!r}")
                path = () if path_text == "root" else tuple(int(x) for x in path_text.split("."))
            except (ValueError, ParseError) as exc:  # json.JSONDecodeError is a ValueError
                raise ParseError(f"malformed step: {exc}", where=_excerpt(ln), origin=f"line {k}") from None
            except RecursionError:  # JSON nested thousands deep (parameters are a flat object)
                raise ParseError("malformed step: its parameters are nested too deeply", where=_excerpt(ln),
                                 origin=f"line {k}") from None
            steps.append(Step(name, tuple(sorted(params.items())), path))
        return Derivation(program, tuple(steps))

    def replay(self) -> Expr:
        """Apply the steps again; the first one that does not apply is reported."""
        from .rules import RULES

        e = infer(self.program)
        t = e.t
        for k, s in enumerate(self.steps, start=1):
            r = RULES.get(s.rule)
            if r is None:
                raise StrategyError(f"step {k}: unknown rule {s.rule!r}")
            try:
                node = at_path(e, s.path)
            except (IndexError, AttributeError):
                raise StrategyError(f"step {k} ({s}): the path does not exist in the program") from None
            try:
                strategy = r.strategy(**dict(s.params))
            except TypeError as exc:  # parameters the rule does not take, or missing ones
                raise StrategyError(f"step {k} ({s}): {exc}") from None
            result = strategy(node)
            if not result.ok:
                raise StrategyError(f"step {k} ({s}) does not apply: {result.reason}")
            # rules keep the type of what they replace (else RuleError), so the enclosing nodes
            # stay typed, as during `derive`; one inference at the end
            e = replace_at(e, s.path, result.expr)
        return infer(e, expected=t)  # the expected type fixes the sizes of a point-free result


def _excerpt(line: str, limit: int = 80) -> str:
    """The start of a line for an error message (a malformed line may be megabytes long)."""
    return line if len(line) <= limit else line[:limit] + "..."


def _param_text(v) -> str:
    return str(v)


def _param_value(text: str, sizes: dict):
    """A size, read in the scope of the program's size binders (so `N / 4` keeps N's facts)."""
    if not isinstance(text, str):
        raise ValueError(f"parameter values are text, got {text!r}")
    p = _Parser(text, None)
    n = p.nat(sizes)
    if p.peek()[0] != "eof":
        raise ValueError(f"parameter {text!r} is not a size")
    return n


def derive(program: Expr, strategy: Strategy) -> tuple[Expr, Derivation]:
    """Run `strategy` on `program`; return the result and its derivation."""
    typed = program if program.t is not None else infer(program)
    r = strategy(typed)
    if not r.ok:
        raise StrategyError(r.reason)
    return infer(r.expr, expected=typed.t), Derivation(program, r.steps)
