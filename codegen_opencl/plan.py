"""The host plan: the kernels a program needs, in order.

The top-level commands of a (hoisted) program run one after another.  Each command that
contains parallel loops is a kernel of its own; consecutive sequential commands form one
kernel run by a single work-item.  Kernels communicate through the global temporaries
that `imperative.passes.hoist_globals` turned into buffers, so a full reduction of a large
array is a parallel kernel of partial results followed by the kernel that combines them.
"""

from __future__ import annotations

import attrs

from functional.errors import FunctionalError
from imperative.ir import Cmd, New, ParFor, Program, Seq, seq, walk


def global_items_cap(dim: int) -> int:
    """The most work-items a launch gives a dimension of a kernel without work-groups
    (`runtime.launch_plan`): a map_global of at most this constant count gets one item per
    element, so the printer writes it without a loop (opencl._Printer)."""
    return 1 << 20 if dim == 0 else 1 << 15


# The most work-groups a launch of kernels printed with loops over groups (opencl.emit's group_loops)
# gives dimension 1 or 2 on a CPU (runtime.launch_plan; a GPU's cap is a CUDA grid's 65535); the loop
# strides over the rest.  Dimension 0, and every dimension of kernels printed without those loops, gets
# a group per element.
MAX_GROUPS = 4096


def one_group_each(count, dim: int, loop_vars: frozenset = frozenset()) -> bool:
    """Whether a map_workgroup of `count` (a Nat) on dimension `dim` surely gets a work-group
    per element from `runtime.launch_plan` where kernels have no loops over groups, so the
    printer writes it without one: where the count is known at launch (no variable of the
    kernel's loops, `loop_vars` their names), on any dimension.  PoCL 3.0 lost values in loops
    over groups that held loops with barriers (fuzz seeds 37323, 37981); one group's
    iteration, guarded, computes the same on every device."""
    return not {v.name for v in count.vars} & loop_vars


class PlanError(FunctionalError):
    """A program whose parallel and sequential parts cannot be split into kernels."""


@attrs.frozen
class Phase:
    name: str
    body: Cmd
    parallel: bool


def _has_parallel(cmd: Cmd) -> bool:
    return any(isinstance(c, ParFor) for c in walk(cmd))


def phases(p: Program) -> list[Phase]:
    cmds = p.body.cmds if isinstance(p.body, Seq) else (p.body,)
    out: list[Phase] = []
    pending: list[Cmd] = []

    def flush():
        if pending:
            out.append(Phase("", seq(*pending), False))
            pending.clear()

    for c in cmds:
        if not _has_parallel(c):
            pending.append(c)
            continue
        if not isinstance(c, ParFor) and _mixes(c):
            raise PlanError(f"{p.name}: sequential code around a parallel loop shares private state with it; "
                            f"store the parallel map's result with to_global so it becomes a kernel of its own")
        flush()
        out.append(Phase("", c, True))
    flush()
    if len(out) == 1:
        return [attrs.evolve(out[0], name=p.name)]
    return [attrs.evolve(ph, name=f"{p.name}_{k}") for k, ph in enumerate(out)]


def _mixes(c: Cmd) -> bool:
    """A command with parallel loops that is not purely a wrapper of them (a New whose
    body also has sequential work outside the loops)."""
    while isinstance(c, New):
        c = c.body
    if isinstance(c, ParFor):
        return False
    if isinstance(c, Seq):
        return any(not _has_parallel(x) for x in c.cmds) or any(_mixes(x) for x in c.cmds)
    return True
