"""Readable pseudo-code of imperative programs (for inspection, not compilation)."""

from __future__ import annotations

from .ir import Assign, Barrier, Cmd, For, If, New, ParFor, Seq, Skip


def pseudo_code(cmd: Cmd, depth: int = 0) -> str:
    return "\n".join(_lines(cmd, depth))


def _lines(cmd: Cmd, depth: int) -> list[str]:
    pad = "  " * depth
    if isinstance(cmd, Skip):
        return [pad + "skip"]
    if isinstance(cmd, Seq):
        return [line for c in cmd.cmds for line in _lines(c, depth)]
    if isinstance(cmd, New):
        return ([f"{pad}new {cmd.mem.name}: {cmd.mem.type} in {cmd.mem.space.value} {{"]
                + _lines(cmd.body, depth + 1) + [pad + "}"])
    if isinstance(cmd, Assign):
        return [f"{pad}{cmd.acc} := {cmd.value}"]
    if isinstance(cmd, For):
        kw = "for_unrolled" if cmd.unroll else "for"
        return [f"{pad}{kw} {cmd.var.name} < {cmd.count} {{"] + _lines(cmd.body, depth + 1) + [pad + "}"]
    if isinstance(cmd, ParFor):
        return ([f"{pad}par_for[{cmd.level.value} {cmd.dim}] {cmd.var.name} < {cmd.count} {{"]
                + _lines(cmd.body, depth + 1) + [pad + "}"])
    if isinstance(cmd, If):
        out = [f"{pad}if {cmd.cond} {{"] + _lines(cmd.then, depth + 1)
        if not isinstance(cmd.orelse, Skip):
            out += [pad + "} else {"] + _lines(cmd.orelse, depth + 1)
        return out + [pad + "}"]
    if isinstance(cmd, Barrier):
        spaces = [s for s, on in (("local", cmd.local), ("global", cmd.global_)) if on]
        return [f"{pad}barrier({', '.join(spaces)})"]
    raise TypeError(f"not a command: {cmd!r}")
