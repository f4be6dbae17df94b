"""Checking a rule against the interpreter on random instances: the rule applies
(top_down), keeps the program's type, records itself in the derivation, and leaves the
interpreter's result unchanged (bit for bit for exact rules, within 1e-4 otherwise).
Used by the test suite and by `dpia rules --check`."""

from __future__ import annotations

import zlib
from typing import NamedTuple

import numpy as np

from ..infer import infer
from ..interp import interpret
from ..strategies import top_down


class CheckResult(NamedTuple):
    passed: bool
    instances: int  # instances run (up to and including the first failing one)
    failure: str | None = None


def same_result(a, b, exact: bool) -> bool:
    """Interpreter results agree: bit for bit when `exact`, else within 1e-4."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(same_result(x, y, exact) for x, y in zip(a, b)))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if exact:
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True))


def check_rule(rule, instances: int, seed: int = 0) -> CheckResult:
    """On random instances from `rule.example` the rule applies (top_down), keeps the type and
    leaves the interpreter's result unchanged."""
    if rule.example is None:
        return CheckResult(False, 0, "no example generator: the rule cannot be checked")
    rng = np.random.default_rng([zlib.crc32(rule.name.encode()), seed, 0])
    for k in range(instances):
        program = None
        try:
            program, inputs, params = rule.example(rng)
            typed = infer(program)
            result = top_down(rule.strategy(**params))(typed)
            if not result.ok:
                problem = f"does not apply: {result.reason}"
            elif result.expr.t != typed.t:
                problem = f"the type changed to {result.expr.t}"
            elif not result.steps or result.steps[0].rule != rule.name:
                problem = "the derivation does not record the rule"
            elif infer(result.expr, expected=typed.t).t != typed.t:
                problem = f"the result re-infers differently: {result.expr}"
            elif not same_result(interpret(typed, *inputs), interpret(result.expr, *inputs), rule.exact):
                problem = f"the meaning changed: {result.expr}"
            else:
                continue
        except Exception as exc:  # noqa: BLE001 -- a crashing rule is a failed check, not a crashed command
            problem = f"{type(exc).__name__}: {exc}"
        return CheckResult(False, k + 1, f"instance {k}{f' ({program})' if program is not None else ''}: {problem}")
    return CheckResult(True, instances)
