"""The `dpia` command line: one table of subcommands, each a parser setup and a runner.

    dpia rules [--family F] [--json]                    the rule catalogue
    dpia rules --check [--instances K] [--seed S]       ... each rule checked on K random instances
    dpia devices [--json]                               every OpenCL device; * marks the default

Exit codes: 0 success, 1 a check failed (or no device), 2 bad usage (message on stderr).  To add a
subcommand, write `_NAME_args(parser)` and `_NAME(args) -> int` and list them in COMMANDS.
"""

from __future__ import annotations

import argparse
import json
import sys
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


def _rules_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--family", action="append", metavar="F", help="only this family (repeatable)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.add_argument("--check", action="store_true", help="check every rule against the interpreter")
    p.add_argument("--instances", type=_positive_int, default=20, metavar="K",
                   help="random instances per rule for --check (default 20)")
    p.add_argument("--seed", type=int, default=0, help="shifts the random instances of --check (default 0)")


def _rules(args: argparse.Namespace) -> int:
    from functional.rules import RULES, catalogue
    from functional.rules.check import check_rule

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


# ---------------------------------------------------------------------------- devices


_DEVICE_COLUMNS = (("platform", "PLATFORM"), ("device", "DEVICE"), ("device_type", "TYPE"),
                   ("driver_version", "DRIVER"), ("compute_units", "CUS"), ("max_work_group_size", "MAX WG"),
                   ("local_mem_bytes", "LOCAL B"), ("global_mem_bytes", "GLOBAL B"),
                   ("platform_version", "PLATFORM VERSION"))


def _devices_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print a JSON list of device identities")


def _devices(args: argparse.Namespace) -> int:
    # The driver layer: the CLI may import codegen_opencl, lazily like the dpia.compile facade.
    from codegen_opencl.runtime import RuntimeError_, choose_device, device_identity, device_key, devices

    found = devices()
    if not found:
        print("dpia devices: no OpenCL device found (install pocl-binary-distribution for a CPU device)",
              file=sys.stderr)
        return 1
    try:
        default = choose_device()
    except RuntimeError_ as exc:  # e.g. DPIA_DEVICE names no device: list them anyway, none marked
        print(f"dpia devices: warning: {exc}", file=sys.stderr)
        default = None
    # Devices compare by OpenCL handle, so two identical cards are not both marked.
    rows = [{**device_identity(d), "key": device_key(d), "default": d == default} for d in found]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        _print_device_table(rows)
    return 0


def _print_device_table(rows: list[dict]) -> None:
    table = [tuple(title for _, title in _DEVICE_COLUMNS)]
    table += [tuple(str(r[field]) for field, _ in _DEVICE_COLUMNS) for r in rows]
    widths = [max(len(row[k]) for row in table) for k in range(len(_DEVICE_COLUMNS))]
    for row, mark in zip(table, [" "] + ["*" if r["default"] else " " for r in rows]):
        print(mark + " " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"{len(rows)} device(s); * the default (set DPIA_DEVICE to choose another)")


# ------------------------------------------------------------------------ the table

COMMANDS: list[Command] = [
    Command("rules", "list the rewrite rules; --check runs each against the interpreter", _rules_args, _rules),
    Command("devices", "list the OpenCL devices and their identities; * marks the default", _devices_args,
            _devices),
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
