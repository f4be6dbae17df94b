"""Checking a lowered program against the interpreter in bounded memory.

The interpreter (functional.interp) evaluates a map with batch axes, so mm at M=N=K=4096
materialises M*N*K products: 256 GiB.  `verify` interprets the program at the real sizes
only while the work (the product of the sizes) is at most INTERPRET_WORK_LIMIT or about the
size of the data itself (a sum, a map); otherwise it checks

  1. the same lowered program at reduced sizes (each size shrunk to CHECK_FLOOR, within the
     facts its derivation assumes: dpia.explore.space.check_size) against the interpreter; a program
     lowered for fixed sizes (the default variant fixes them) is lowered again for the
     reduced sizes by `lowered_at` (the same strategy, not the same derivation), and
  2. at the real sizes, the kernel's output in a few blocks of rows (first, last and a
     random one) against the interpreter run on those rows alone, when the program is a
     map over the rows of one input whose row count appears nowhere else (mm, gemv,
     scal: a row of the result depends on that row only) and one block's work fits the
     limit.

`Verification.method` says which was done: "full", "reduced+sampled" or "reduced".
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping

import attrs
import numpy as np

from functional.errors import FunctionalError
from functional.expr import Expr, Identifier, applied, free_identifiers
from functional.infer import infer
from functional.interp import interpret
from functional.nat import var_of
from functional.types import ArrayType, nat_vars

from . import programs
from .programs import TOLERANCE, random_inputs, size_vars
from .explore.space import CHECK_FLOOR, Shape, check_size

INTERPRET_DATA_LIMIT = 1 << 31  # bytes of inputs and output up to which the interpreter may run the real sizes
INTERPRET_WORK_LIMIT = 1 << 26  # sizes' product up to which the interpreter runs at once (about 1 GiB of temporaries)
SAMPLE_BLOCKS = 3  # blocks of rows checked at the real sizes


class VerifyError(FunctionalError):
    """A check that cannot be made: a lowering for fixed sizes and no way to lower for others."""


@attrs.frozen
class Verification:
    """What was checked: `method`, the largest relative error over every comparison, the
    reduced sizes (empty for "full") and the rows checked at the real sizes ({size: [first
    row of each block]}, block `block` rows)."""

    method: str
    max_rel_error: float
    tolerance: float
    check_sizes: Mapping[str, int] = attrs.field(factory=dict)
    sampled: Mapping[str, tuple[int, ...]] = attrs.field(factory=dict)
    block: int = 0

    @property
    def correct(self) -> bool:
        return self.max_rel_error <= self.tolerance

    def describe(self) -> str:
        if self.method == "full":
            return "at the real sizes"
        reduced = " ".join(f"{k}={v}" for k, v in self.check_sizes.items())
        text = f"at reduced sizes {reduced}"
        for name, rows in self.sampled.items():
            text += f", and {len(rows)} block(s) of {self.block} row(s) of {name} at the real sizes"
        return text

    def as_dict(self) -> dict:
        return {"method": self.method, "max_rel_error": self.max_rel_error, "check_sizes": dict(self.check_sizes),
                "sampled_rows": {k: list(v) for k, v in self.sampled.items()}, "block": self.block}


def interpretable(program: Expr, sizes: Mapping[str, int], work_limit: int = INTERPRET_WORK_LIMIT) -> bool:
    """Whether interpreting at `sizes` stays in bounded memory: the work is within
    `work_limit`, or within twice the elements of the inputs and output while those stay
    within INTERPRET_DATA_LIMIT bytes (the interpreter's temporaries are a few times the data:
    a map over 2^31 floats peaked at 110 GiB)."""
    from .explore import program_bytes

    work, data = math.prod(sizes.values()), program_bytes(program, sizes)
    return work <= work_limit or (work <= 2 * data // 4 and data <= INTERPRET_DATA_LIMIT)


def row_map(program: Expr) -> tuple[int, str] | None:
    """(input position, size name) when the program is `map f x` over the rows of input x,
    its row count a size variable that no other dimension of any input uses, and f not
    reading x: then the rows r of the result are the program applied to the rows r of x."""
    shape = Shape.of(program)
    args = applied(shape.body, "map", 2)
    if args is None or not isinstance(args[1], Identifier):
        return None
    f, x = args
    names = [p.name for p in shape.inputs]
    if x.name not in names or x.name in free_identifiers(f) or not isinstance(x.t, ArrayType):
        return None
    rows = var_of(x.t.size)
    if rows is None:
        return None
    others = [nat_vars(p.t) for p in shape.inputs if p.name != x.name] + [nat_vars(x.t.elem)]
    if any(rows in vs for vs in others):
        return None
    return names.index(x.name), rows.name


def reduced_sizes(low: Expr, sizes: Mapping[str, int], floor: int = CHECK_FLOOR) -> dict[str, int] | None:
    """Check sizes for a lowered program over size variables (their facts kept), or None
    when one of `sizes` is fixed in it."""
    facts = {v.name: v for v in size_vars(low)}
    if any(name not in facts for name in sizes):
        return None
    return {name: check_size(facts[name].multiple_of, real, floor) for name, real in sizes.items()}


def verify(program: Expr, low: Expr, sizes: Mapping[str, int], *, seed: int = 0, device=None,
           lowered_at: Callable[[dict], Expr] | None = None, tolerance: float = TOLERANCE,
           work_limit: int = INTERPRET_WORK_LIMIT, blocks: int = SAMPLE_BLOCKS, floor: int = CHECK_FLOOR,
           inputs: tuple | None = None) -> Verification:
    """Check `low` (a lowering of `program`) at `sizes` against the interpreter (see the
    module docstring).  `lowered_at(check_sizes)`: the lowering for other sizes, needed when
    `low` fixes its sizes.  `inputs`: the real sizes' inputs, when already made."""
    import dpia

    typed = program if program.t is not None else infer(program)
    kernel = dpia.compile(low, device=device)
    real = inputs if inputs is not None else random_inputs(typed, sizes, seed)
    if interpretable(typed, sizes, work_limit):
        return Verification("full", programs.relative_error(kernel(*real), interpret(typed, *real)), tolerance)
    check = reduced_sizes(low, sizes, floor)
    if check is None:
        if lowered_at is None:
            raise VerifyError("the lowered program fixes its sizes: verify needs lowered_at to check "
                                       "at reduced sizes")
        facts = {v.name: v.multiple_of for v in size_vars(typed)}
        check = {name: check_size(facts.get(name, 1), value, floor) for name, value in sizes.items()}
        small_kernel = dpia.compile(lowered_at(check), device=device)
    else:
        small_kernel = kernel
    small = random_inputs(typed, check, seed)
    worst = programs.relative_error(small_kernel(*small), interpret(typed, *small))
    sampled, block = sampled_rows(typed, sizes, kernel, real, seed, work_limit, blocks)
    for error in sampled.values():
        worst = max(worst, error)
    rows = {name: tuple(sorted(starts)) for name, starts in _starts(sampled).items()}
    return Verification("reduced+sampled" if sampled else "reduced", worst, tolerance, check, rows, block)


def _starts(sampled: Mapping[tuple[str, int], float]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for name, start in sampled:
        out.setdefault(name, []).append(start)
    return out


def sampled_rows(program: Expr, sizes: Mapping[str, int], kernel, real: tuple, seed: int = 0,
                 work_limit: int = INTERPRET_WORK_LIMIT, blocks: int = SAMPLE_BLOCKS
                 ) -> tuple[dict[tuple[str, int], float], int]:
    """{(size name, first row): relative error} of blocks of rows of `kernel(*real)` (the
    first, the last and a random one), and the rows in a block; nothing when the program is
    no row map (`row_map`) or a block is more work than `work_limit`."""
    found = row_map(program)
    if found is None:
        return {}, 0
    position, name = found
    var = next(v for v in size_vars(program) if v.name == name)
    total = sizes[name]
    block = max(var.multiple_of, -(-var.lo // var.multiple_of) * var.multiple_of, 1)
    if block > total or math.prod(sizes.values()) // total * block > work_limit:
        return {}, 0
    got = kernel(*real)
    if not isinstance(got, np.ndarray):
        return {}, 0
    rng = random.Random(seed)
    starts = sorted({0, (total // block - 1) * block, rng.randrange(total // block) * block})[:blocks]
    out = {}
    for start in starts:
        part = list(real)
        part[position] = real[position][start:start + block]
        want = interpret(program, *part)
        out[(name, start)] = programs.relative_error(got[start:start + block], want)
    return out, block


__all__ = ["INTERPRET_WORK_LIMIT", "SAMPLE_BLOCKS", "Verification", "VerifyError", "interpretable", "reduced_sizes",
           "row_map", "sampled_rows", "verify"]
