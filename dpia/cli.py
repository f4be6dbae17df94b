"""The `dpia` command line: one table of subcommands, each a parser setup and a runner.

    dpia rules [--family F] [--json]                    the rule catalogue
    dpia rules --check [--instances K] [--seed S]       ... each rule checked on K random instances

Exit codes: 0 success, 1 a check failed, 2 bad usage (message on stderr).  To add a
subcommand, write `_NAME_args(parser)` and `_NAME(args) -> int` and list them in COMMANDS.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable
from typing import NamedTuple


class UsageError(Exception):
    """Bad input on the command line: reported on stderr, exit code 2."""


class Command(NamedTuple):
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


# ------------------------------------------------------------------------------ rules


class CheckResult(NamedTuple):
    passed: bool
    instances: int  # instances run (up to and including the first failing one)
    failure: str | None = None


def _same(a, b, exact: bool) -> bool:
    """Interpreter results agree: bit for bit when `exact`, else within 1e-4."""
    import numpy as np

    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same(x, y, exact) for x, y in zip(a, b)))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if exact:
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True))


def check_rule(rule, instances: int, seed: int = 0) -> CheckResult:
    """What tests/functional/test_rules.py does for one rule (same seeds, same tolerance):
    on random instances from `rule.example` the rule applies (top_down), keeps the type and
    leaves the interpreter's result unchanged."""
    import numpy as np

    import functional as fl
    from functional.strategies import top_down

    if rule.example is None:
        return CheckResult(False, 0, "no example generator: the rule cannot be checked")
    rng = np.random.default_rng([zlib.crc32(rule.name.encode()), seed, 0])
    for k in range(instances):
        program = None
        try:
            program, inputs, params = rule.example(rng)
            typed = fl.infer(program)
            result = top_down(rule.strategy(**params))(typed)
            if not result.ok:
                problem = f"does not apply: {result.reason}"
            elif result.expr.t != typed.t:
                problem = f"the type changed to {result.expr.t}"
            elif not result.steps or result.steps[0].rule != rule.name:
                problem = "the derivation does not record the rule"
            elif fl.infer(result.expr, expected=typed.t).t != typed.t:
                problem = f"the result re-infers differently: {result.expr}"
            elif not _same(fl.interpret(typed, *inputs), fl.interpret(result.expr, *inputs), rule.exact):
                problem = f"the meaning changed: {result.expr}"
            else:
                continue
        except Exception as exc:  # noqa: BLE001 -- a crashing rule is a failed check, not a crashed command
            problem = f"{type(exc).__name__}: {exc}"
        return CheckResult(False, k + 1, f"instance {k}{f' ({program})' if program is not None else ''}: {problem}")
    return CheckResult(True, instances)


def _rules_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--family", action="append", metavar="F", help="only this family (repeatable)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.add_argument("--check", action="store_true", help="check every rule against the interpreter")
    p.add_argument("--instances", type=_positive_int, default=20, metavar="K",
                   help="random instances per rule for --check (default 20)")
    p.add_argument("--seed", type=int, default=0, help="shifts the random instances of --check (default 0)")


def _rules(args: argparse.Namespace) -> int:
    from functional.rules import RULES, catalogue

    rows = catalogue()
    if args.family:
        known = sorted({r["family"] for r in rows})
        unknown = [f for f in args.family if f not in known]
        if unknown:
            raise UsageError(f"unknown family {', '.join(map(repr, unknown))}; the families are: {', '.join(known)}")
        rows = [r for r in rows if r["family"] in args.family]
    failed = 0
    for r in rows:
        r["params"] = list(r["params"])
        if args.check:
            res = check_rule(RULES[r["name"]], args.instances, args.seed)
            r.update(passed=res.passed, instances=res.instances, failure=res.failure)
            failed += not res.passed
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        _print_table(rows, args.check)
    return 1 if failed else 0


def _print_table(rows: list[dict], checked: bool) -> None:
    def status(r: dict) -> str:
        if checked:
            return f"pass ({r['instances']})" if r["passed"] else "FAIL"
        return "example" if r["checked"] else "unchecked"

    table = [("FAMILY", "RULE", "PARAMS", "CHECK", "EQUATION")]
    table += [(r["family"], r["name"], ", ".join(r["params"]) or "-", status(r), r["equation"]) for r in rows]
    widths = [max(len(row[k]) for row in table) for k in range(4)]
    for row, r in zip(table, [None] + rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
        if r is not None and checked and not r["passed"]:
            print(f"    ! {r['failure']}")
    summary = f"{len(rows)} rules"
    if checked:
        failed = sum(not r["passed"] for r in rows)
        summary += f": {len(rows) - failed} passed, {failed} failed"
    print(summary)


# ------------------------------------------------------------------------ the table

COMMANDS: list[Command] = [
    Command("rules", "list the rewrite rules; --check runs each against the interpreter", _rules_args, _rules),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpia", description="Code generation via rewrite rules and DPIA.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help, description=c.help)
        c.configure(p)
        p.set_defaults(run=c.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage error (2) or the help (0)
        return exc.code if isinstance(exc.code, int) else 0
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"dpia {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
