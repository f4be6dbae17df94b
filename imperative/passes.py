"""Passes over imperative programs.  Each is a pure function Program -> Program; the
pipeline is data (`PIPELINE`) so experiments can switch passes off.

    resolve_views     every read/write through views becomes a Load/Store at a flat index
    insert_barriers   a local barrier after a work-group phase that writes local memory
                      read by a later phase (never inside code that not all items reach)
    hoist_globals     global temporaries become host-allocated buffers (kernel arguments)
"""

from __future__ import annotations

import attrs

from functional.types import AddressSpace

from .ir import Assign, Barrier, Cmd, For, If, Level, New, ParFor, Program, Seq, Store, seq
from .views import resolve


def resolve_views(p: Program) -> Program:
    return attrs.evolve(p, body=resolve(p.body))


def _writes_local(cmd: Cmd) -> bool:
    if isinstance(cmd, Assign):
        return isinstance(cmd.acc, Store) and cmd.acc.space is AddressSpace.LOCAL
    return any(_writes_local(c) for c in _children(cmd))


def _children(cmd: Cmd) -> tuple:
    if isinstance(cmd, Seq):
        return cmd.cmds
    if isinstance(cmd, (New, For, ParFor)):
        return (cmd.body,)
    if isinstance(cmd, If):
        return (cmd.then, cmd.orelse)
    return ()


def _barriers(cmd: Cmd, in_group: bool) -> Cmd:
    """`in_group`: inside a work-group loop but outside any per-item (local) loop, where
    every item of the group executes the same commands, so a barrier is allowed."""
    if isinstance(cmd, ParFor):
        inner_group = cmd.level is Level.WORKGROUP
        body = _barriers(cmd.body, inner_group)
        if inner_group and _writes_local(body):
            body = seq(body, Barrier(local=True))  # the next group iteration overwrites local memory
        return attrs.evolve(cmd, body=body)
    if isinstance(cmd, Seq):
        parts = [_barriers(c, in_group) for c in cmd.cmds]
        if not in_group:
            return Seq(tuple(parts))
        out: list[Cmd] = []
        for k, c in enumerate(parts):
            out.append(c)
            if k < len(parts) - 1 and _writes_local(c) and not isinstance(parts[k + 1], Barrier):
                out.append(Barrier(local=True))
        return seq(*out)
    if isinstance(cmd, New):
        return attrs.evolve(cmd, body=_barriers(cmd.body, in_group))
    if isinstance(cmd, For):
        body = _barriers(cmd.body, in_group)
        if in_group and _writes_local(body):
            body = seq(body, Barrier(local=True))
        return attrs.evolve(cmd, body=body)
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_barriers(cmd.then, False), orelse=_barriers(cmd.orelse, False))
    return cmd


def insert_barriers(p: Program) -> Program:
    return attrs.evolve(p, body=_barriers(p.body, False))


class PlacementError(Exception):
    """A temporary that cannot live where the program puts it."""


def _hoist(cmd: Cmd, found: list, parallel: bool) -> Cmd:
    if isinstance(cmd, New) and cmd.mem.space is AddressSpace.GLOBAL:
        if parallel:
            raise PlacementError(f"global temporary {cmd.mem.name} is allocated inside a parallel loop; store it "
                                 f"with to_global outside the parallel map")
        found.append(cmd.mem)
        return _hoist(cmd.body, found, parallel)
    if isinstance(cmd, Seq):
        return seq(*(_hoist(c, found, parallel) for c in cmd.cmds))
    if isinstance(cmd, ParFor):
        return attrs.evolve(cmd, body=_hoist(cmd.body, found, True))
    if isinstance(cmd, (New, For)):
        return attrs.evolve(cmd, body=_hoist(cmd.body, found, parallel))
    if isinstance(cmd, If):
        return attrs.evolve(cmd, then=_hoist(cmd.then, found, parallel), orelse=_hoist(cmd.orelse, found, parallel))
    return cmd


def hoist_globals(p: Program) -> Program:
    found: list = []
    body = _hoist(p.body, found, False)
    return attrs.evolve(p, body=body, temporaries=p.temporaries + tuple(found))


PIPELINE = (resolve_views, insert_barriers, hoist_globals)


def run_passes(p: Program, passes=PIPELINE) -> Program:
    for f in passes:
        p = f(p)
    return p


__all__ = ["PIPELINE", "run_passes", "resolve_views", "insert_barriers", "hoist_globals", "PlacementError"]
